"""The typed result of ``kforensic profile`` and the sample filters it was made with.

A module of its own, re-exported by :mod:`forensics.types.results`: the profile command imports these two
classes without the ~17 other results' dataclasses (their creation cost ~9 ms of every profile run's start-up).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence

    from forensics.model import Incident
    from forensics.types.profile import ClassShare, Hotspots, Profile, ProfileStack, StackTable


@dataclass(frozen=True)
class ProfileFilters:
    """Which samples to keep: a time window, a thread, kernel or user frames only."""

    window: tuple[float, float] | None = None
    comm: str | None = None
    pid: int | None = None
    tid: int | None = None
    space: str | None = None  # "kernel", "user" or None for both
    event: str | None = None  # None: the first event, as stackcollapse-perf.pl does


@dataclass(frozen=True)
class ProfileResult:
    """One analysed profile: what was read, the kept stacks, hotspots, classes and findings."""

    profile: Profile
    stacks: Sequence[ProfileStack]  # a list, or the reader's StackColumns
    hot: Hotspots
    classes: list[ClassShare]
    incident: Incident
    table: StackTable | None = None  # the stacks numbered by chain and thread (large profiles)

    @cached_property
    def by_command(self) -> dict[tuple[str, int], list[Any]]:
        """:func:`forensics.types.profile.periods_by_command` of the kept stacks, made once.

        The folded lines and the flame graph both start from it (0.07 s each on 100k distinct stacks).
        """
        from forensics.types.profile import periods_by_command

        return periods_by_command(self.stacks, self.table)
