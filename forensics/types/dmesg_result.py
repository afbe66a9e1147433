"""The typed result of ``kforensic dmesg``: each input's reports and the incident of them all.

A module of its own, re-exported by :mod:`forensics.types.results`: the dmesg command imports these two
classes without the ~17 other results' dataclasses (their creation cost ~20 ms of every dmesg run's start-up,
2% of the shared corpus x1's whole run).
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from forensics.model import Incident, SourceRecord
    from forensics.types.causes import Cause
    from forensics.types.dmesg import KernelReport, ReportGroup, ReportWhy
    from forensics.types.incident import Hypothesis


@dataclass(frozen=True)
class SourceResult:
    """``kforensic dmesg``: one input's record, its groups of reports, the reports kept, its number of lines.

    Built by :func:`forensics.pipelines.dmesg.source_result` from the engine's grouper.
    """

    name: str
    record: SourceRecord
    groups: list[ReportGroup]
    # Only the occurrences the groups keep (first, an even sample, last): memory flat in log size.
    reports: list[KernelReport]
    events: list[KernelReport]
    lines: int
    # What the incident needs of every report, not only of the kept ones (ReportGrouper's).
    releases: frozenset[str]
    first_time: float | None
    last_time: float | None
    boot_times: Sequence[float]
    # What each kept report's body says (detectors/dmesg/why.py), by its first line.
    whys: Mapping[int, ReportWhy] = dataclasses.field(default_factory=dict)
    # Causes that several reports show together (a lock cycle of hung tasks), by group signature.
    group_causes: Mapping[str, Cause] = dataclasses.field(default_factory=dict)
    # The boot banners ("Linux version X (...") of the log: (line, release), in log order.  A report that does not
    # print its release is of the kernel of the banner above it: a log may hold boots of several kernels.
    banners: tuple[tuple[int, str], ...] = ()
    # A log stamped with dated wall-clock prefixes only: its reports' first and last wall-clock times (epoch
    # seconds), and where that clock went back between two reports, as (line before, line after, seconds back).
    walls: tuple[float, float] | None = None
    wall_steps: tuple[tuple[int, int, float], ...] = ()
    # Where the printk time goes back between two reports, in log order: (line before, line after, time before,
    # time after) (a new boot, a kexec, a wrapped or merged log: ReportGrouper.time_steps).
    time_steps: tuple[tuple[int, int, float, float], ...] = ()
    # Rate limiting's lines ("N callbacks suppressed"): the first few as (line, words), and how many there were.
    suppressed: tuple[tuple[int, str], ...] = ()
    suppressed_lines: int = 0
    # The boot's wall-clock time where the log gives it: (line, epoch seconds of the boot, what was read: "rtc",
    # "banner"), in log order (detectors/dmesg/scanner.py LogScanner.boot_clocks).
    boot_clocks: tuple[tuple[int, float, str], ...] = ()
    # The first line of the report of each of ``boot_times`` (the boot it dates: the log's boots began apart).
    boot_time_lines: Sequence[int] = ()
    # The command lines that say how a boot ends after an oops (``oops=panic``, ``panic_on_oops``, a capture kernel's
    # ``elfcorehdr=``), as (line, text), in log order (LogScanner.command_lines; detectors/dmesg/aftermath.py).
    command_lines: tuple[tuple[int, str], ...] = ()
    # The last line with text of each boot of the log, as (line, text), in log order (LogScanner.boot_tails): whether
    # the kernel went on after a report (detectors/dmesg/aftermath.py).
    boot_tails: tuple[tuple[int, str], ...] = ()
    # The log is a crash dump's own (its kernel log, kdump's dmesg beside it): its last boot went down, since kdump
    # writes a dump only then.
    dumped: bool = False

    def release_at(self, line: int) -> str | None:
        """The release of the last boot banner at or before ``line`` (None when no banner precedes it)."""
        at = bisect.bisect_right(self.banners, (line, "\uffff"))
        return self.banners[at - 1][1] if at else None


@dataclass(frozen=True)
class DmesgResult:
    """``kforensic dmesg``: every input's reports, the incident of them all, its ranked hypotheses."""

    sources: tuple[SourceResult, ...]
    incident: Incident
    hypotheses: tuple[Hypothesis, ...]
