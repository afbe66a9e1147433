"""The incident's records that cross layers: timeline events and their lanes, correlations, hypotheses.

Made by detectors/incident/ (timeline.py, correlate.py, hypotheses.py), carried by the results
(forensics/types/results.py) and shown by the renderers (forensics/report/).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from forensics.model import BootTime, Clock, FindingKind, Severity, Timestamp
from forensics.quoting import shown_path
from forensics.units import iso_utc

BOOT_LANE = "boot"  # wall times and times since boot, on one axis when the boot time is known
WALL_LANE = "wall"  # wall times when the boot time is unknown
UPTIME_LANE = "since boot"  # times since boot when the boot time is unknown
TRACE_LANE = "trace"  # a trace's own clock (seconds since boot of the traced kernel), one lane per trace
INPUT_LANE = "input"  # the own times of an input that is not of the told boot (another boot, host or kernel)


@dataclass(frozen=True)
class LaneKey:
    """Which lane: a clock of the told boot (BOOT_LANE, WALL_LANE, UPTIME_LANE), or the own clock of one trace
    (TRACE_LANE) or input (INPUT_LANE), named by its source.  Written as ``clock`` or ``clock source`` (JSON's
    lane keys, ``trace t.dat``); read by its fields, never back from that text."""

    clock: str
    source: str = ""

    def __str__(self) -> str:
        return f"{self.clock} {self.source}" if self.source else self.clock


@dataclass(frozen=True)
class Lane:
    """One clock of the timeline: the events that can be ordered against each other."""

    key: LaneKey
    title: str  # a heading, e.g. "Boot (wall clock)" or "Trace t.dat"
    label: str  # for people: which clock, and how its times were converted
    converted: bool  # times are on the wall clock
    contradiction: str | None = None  # why this input cannot belong to the incident's boot
    # What a lane of its own clock is the clock of, in sentences ("the trace t.dat", "the profile perf.data").
    noun: str = "trace"
    # When the boot of the lane's times since boot began, read from its own inputs: the told boot's, or an input's
    # of another boot, whose times are converted with it, never with the told boot's (None: not known).
    began: BootTime | None = None
    # Why the lane's input may be of another boot than the told one, without a dump: its boot identity against the
    # told log is unconfirmed (detectors/incident/boot_identity.py); its times are not ordered against the told boot's.
    unsure: str | None = None


@dataclass(frozen=True)
class ClockJump:
    """Where the printk time of a source goes back, in log order: from ``was`` at line ``before`` to ``now`` at line
    ``after`` (a new boot, with or without its banner, a kexec, a log wrapped or merged from several).  The times
    either side are on two clocks: neither an order nor a duration across it is a fact."""

    source: str
    before: int
    after: int
    was: float
    now: float
    # The first line of a boot between the two (its banner, or its printk time restarting at 0.000000): a jump even
    # where the time does not go back (a reboot after less uptime than the last boot's last line had), said so there;
    # where it goes back, the words of a time going back (the same for the rows below it).
    boot: int | None = None

    def text(self) -> str:
        """For a timeline's row: where, and what it means for the rows after it."""
        if self.boot is not None and self.now >= self.was:
            return (
                f"a new boot of {shown_path(self.source)} begins at line {self.boot}, between lines {self.before} "
                f"([{self.was:.6f}]) and {self.after} ([{self.now:.6f}]); the rows from here are on that boot's clock, "
                "not ordered by time against those above, nor measured with them"
            )
        return (
            f"the printk time of {shown_path(self.source)} goes back between lines {self.before} and {self.after}, "
            f"from [{self.was:.6f}] to [{self.now:.6f}]: a new boot, a kexec or a merged log; the rows from here are "
            "on that new clock, not ordered by time against those above"
        )

    def brief(self) -> str:
        """For a sentence: "after the printk time went back at line 11 of kern.log"."""
        if self.boot is not None and self.now >= self.was:
            return f"after a new boot at line {self.boot} of {shown_path(self.source)}"
        return f"after the printk time went back at line {self.after} of {shown_path(self.source)}"


@dataclass(frozen=True)
class TimelineEvent:
    """One finding on the timeline: from its first to its last timestamped evidence, on one lane's clock."""

    when: Timestamp  # the start, as the source recorded it
    wall: float | None  # the start on the wall clock, when it can be known
    uncertainty: float  # seconds, either way (0 for times recorded on the wall clock)
    finding_id: str
    title: str
    cite: str  # the citation of the first evidence (source and locator)
    excerpt: str  # its first line
    end: Timestamp | None = None  # the last evidence's time, when it differs from the start
    wall_end: float | None = None
    lane: LaneKey = LaneKey(BOOT_LANE)
    severity: Severity = Severity.INFO
    end_cite: str | None = None
    kind: FindingKind | None = None  # the finding's kind
    # How long the report itself says it had lasted when it was printed ("stuck for 8 s when reported"): a kernel
    # report's lines are printed in milliseconds whatever the stall, so their times are no duration.
    stated: str = ""
    # The clock segment of its source the event is in: 0, or how many times that source's printk time went back
    # before it (a new boot, a kexec, a merged log: detectors/incident/timeline.py clock_jumps).  A lane is ordered by
    # (segment, time): times of two segments are on two clocks.  ``jump``: the jump its segment starts at.
    segment: int = 0
    jump: ClockJump | None = None
    # Its interval is the span over which a kernel report's repeats were printed (a group's first header to its
    # last), not a time read (a dump's "last ran"): no duration of what the report is about.
    printed: bool = False
    # Its finding's figure is a lower bound (Fact.lower_bound: a run or a wait still open where the recording or the
    # window ends): its last evidence is that end, not the interval's, so the duration is a floor ("at least").
    open_end: bool = False

    @property
    def duration(self) -> float:
        """Seconds from the first to the last evidence (0 for an instant)."""
        if self.end is None:
            return 0.0
        if self.wall is not None and self.wall_end is not None:
            return self.wall_end - self.wall
        return self.end.seconds - self.when.seconds

    def when_text(self) -> str:
        """The start for people: UTC wall time when known, else seconds on the source's clock."""
        return _point_text(self.when, self.wall, self.uncertainty)

    def end_text(self) -> str:
        """The end for people ("" for an instant)."""
        if self.end is None:
            return ""
        return _point_text(self.end, self.wall_end, self.uncertainty)

    def start_in_lane(self) -> str:
        """The start for a lane's table (the lane names the clock)."""
        return _point_text(self.when, self.wall, self.uncertainty, in_lane=True)

    def end_in_lane(self) -> str:
        """The end for a lane's table ("" for an instant)."""
        return "" if self.end is None else _point_text(self.end, self.wall_end, self.uncertainty, in_lane=True)

    def duration_text(self) -> str:
        """The duration for people ("instant" when the finding has one time).  Where the report states how long it
        had lasted (a hang's "blocked for more than 143 s") and its interval is only the span its repeats were printed
        over (:attr:`printed`), the stated one is the figure, the span said after it as what it is."""
        if self.end is None:
            return self.stated or "instant"
        if self.stated and self.printed:
            return f"{self.stated}; its reports printed over {_seconds_text(self.duration)}"
        least = "at least " if self.open_end else ""
        return least + _seconds_text(self.duration) + (f" ({self.stated})" if self.stated else "")


def jump_before(events: Sequence[TimelineEvent], i: int) -> ClockJump | None:
    """The clock jump a lane's table says before its row ``i`` (``events``: the lane's rows in order): the jump of
    the row's segment, on the first row of that segment."""
    jump = events[i].jump
    return jump if jump is not None and (i == 0 or events[i - 1].jump != jump) else None


def _point_text(ts: Timestamp, wall: float | None, uncertainty: float, *, in_lane: bool = False) -> str:
    """A time: UTC on the wall clock (with the conversion's uncertainty), else seconds on the source's clock.

    ``in_lane``: for a lane's table, whose heading names the clock (shorter).
    """
    if wall is not None:
        if uncertainty <= 0:
            return iso_utc(wall)
        # Rounded, not cut to the second: a time converted with a boot time ±0.5 s that was cut showed the crash at
        # 20:18:04 beside the dump's 20:18:05 (ue24 F14).
        stamp = iso_utc(round(wall))
        return stamp + (f" ±{uncertainty:.1f} s" if in_lane else f" (±{uncertainty:.1f} s)")
    if ts.clock is Clock.WALL:  # a local time of a zone not known (dmesg -T): as printed, said so
        return str(ts)
    return f"{ts.seconds:.6f} s" + ("" if in_lane else " on the source's clock (since boot)")


def _seconds_text(seconds: float) -> str:
    if seconds < 1:
        return f"{seconds * 1000:.3f} ms"
    if seconds < 120:
        return f"{seconds:.1f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


@dataclass(frozen=True)
class Correlation:
    """Two or more findings found to be one problem (or to contradict each other)."""

    rule: str
    merged_into: str  # id of the finding that carries the merge
    finding_ids: tuple[str, ...]
    statement: str
    contradiction: bool = False


@dataclass(frozen=True)
class LogCut:
    """A kernel log that ends inside a report (a console capture cut mid-report): what of the report it holds.

    Made by ``report`` from each log's reports (forensics/pipelines/report.py); read by the correlation of the dump's
    crash with the log's report (detectors/incident/correlate.py), which says what the cut log matched and what it
    could not show, instead of a corroboration of the whole report.
    """

    source: str  # the log, as its findings' evidence names it
    start: int  # the report's first line
    end: int  # the log's last line, the last of the report it holds
    trace: bool  # whether the lines it holds reach the report's call trace
    damaged: str | None = None  # why the log's analysis found the report damaged (its corrupted_reason)


@dataclass(frozen=True)
class Hypothesis:
    """A possible root cause: what, how sure, the evidence for and against, how to confirm."""

    rank: int
    statement: str
    confidence: float
    supporting: tuple[str, ...]  # finding ids and citations
    against: tuple[str, ...]
    next_command: str
    finding_ids: tuple[str, ...] = ()  # the findings it rests on, the one it is read from first
    # What to get before ``next_command`` can run, "" when nothing: a step at the crash> or >>> prompt when the dump
    # given could not be used ("get the crash dump D open: use the vmlinux of the kernel that crashed; ...").
    first: str = ""
