"""A CPU profile as read: frames, stacks with their counts, threads (what the profile detectors read)."""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import itemgetter
from typing import NamedTuple

from forensics.model import SourceRecord


class ProfileFrame(NamedTuple):
    """One frame of a call chain, named as stackcollapse-perf.pl names it (a tuple: made by the thousand)."""

    name: str
    dso: str
    kernel: bool
    jit: bool
    inlined: bool


_NAME = itemgetter(0)  # a ProfileFrame's name (a tuple field: read in C, no Python call per frame)


def frame_names(frames: tuple[ProfileFrame, ...]) -> tuple[str, ...]:
    """The names of a call chain's frames, root first."""
    return tuple(map(_NAME, frames))


@dataclass
class StackCount:
    """How often one thread was sampled in one call chain, and where it was first seen."""

    samples: int
    period: int
    first_line: int
    first_header: str


@dataclass(frozen=True)
class Thread:
    """Who was sampled: command name as perf printed it, pid (None when perf printed only the tid), tid."""

    comm: str
    pid: int | None
    tid: int | None


@dataclass(frozen=True)
class ProfileStack:
    """A distinct (thread, event, call chain) with its counts; frames from root to leaf."""

    thread: Thread
    event: str
    frames: tuple[ProfileFrame, ...]
    samples: int
    period: int
    first_line: int
    first_header: str


@dataclass
class Profile:
    """Everything read from one profile input."""

    source: str
    kind: str  # "perf.data", "perf script" or "folded"
    stacks: list[ProfileStack]
    events: dict[str, int]  # samples per event, in first-seen order
    first_event: str | None
    start: float | None
    end: float | None
    lines: int
    notes: list[str] = field(default_factory=list)
    flat_samples: int = 0  # samples that carried no call chain
    skipped_lines: int = 0
    first_skipped: tuple[int, str] | None = None
    record: SourceRecord | None = None


@dataclass(frozen=True)
class SymbolDelta:
    """A symbol's self share in the base and the new profile, in percent of each one's period."""

    symbol: str
    base: float
    new: float
    base_samples: int
    new_samples: int

    @property
    def delta(self) -> float:
        """Change in percentage points (positive: it got hotter)."""
        return self.new - self.base
