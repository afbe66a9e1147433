"""Findings about imported slabinfo/meminfo snapshots themselves: rows left out, times that go back, cut samples.

A snapshot row that does not parse (a column missing, a cut line) or holds a
value no kernel has is not imported; an analyst must know that the series has
holes, and where, rather than trust a quiet import.  Snapshots whose time goes
back within a file are imported in time order, and said.  Pure: typed rows in,
findings out; each cites the file and line.
"""

from __future__ import annotations

from collections.abc import Sequence

from forensics.model import (
    Baseline,
    Evidence,
    Fact,
    Finding,
    FindingKind,
    Locator,
    LocatorKind,
    Severity,
    finding_id,
)
from forensics.types.slab import OutOfOrder, PartialSample, RejectedLine, WallClockStep
from forensics.units import iso_utc

DETECTOR = "detectors.snapshot_input"
CITED = 10  # rows cited as evidence; the count covers all


def rejected_rows(rows: Sequence[tuple[str, RejectedLine]]) -> list[Finding]:
    """One finding for all rows left out of an import, citing the first few (file:line and text)."""
    if not rows:
        return []
    files = sorted({source for source, _row in rows})
    first = "; ".join(f"{source}:{row.line}: {row.reason}" for source, row in rows[:3])
    return [
        Finding(
            id=finding_id(FindingKind.SNAPSHOT_ROWS_REJECTED, *files),
            kind=FindingKind.SNAPSHOT_ROWS_REJECTED,
            title=f"{len(rows)} slabinfo/meminfo rows were not imported (they do not parse or hold impossible values)",
            severity=Severity.LOW,
            confidence=0.95,
            confidence_reason="each row is cited with why it was left out",
            summary=(
                f"{len(rows)} rows of {', '.join(files)} were left out of the import, so those caches or counters "
                f"have holes in their series (e.g. {first})."
            ),
            evidence=tuple(
                Evidence(source=source, locator=Locator(LocatorKind.LINE, row.line), excerpt=row.text)
                for source, row in rows[:CITED]
            ),
            facts=(Fact("rows left out", str(len(rows))), Fact("first", first)),
            # Each row was compared with the format the kernel prints: its columns and the values they can hold.
            baseline=Baseline(
                "every row as the kernel prints it: all its columns, numbers a kernel can hold",
                f"0 rows left out (here {len(rows)}: {rows[0][1].reason}, first)",
                "the row formats of /proc/slabinfo (mm/slab_common.c, slabinfo_show) and /proc/meminfo "
                "(fs/proc/meminfo.c)",
            ),
            next_steps=("look at the cited lines: a copy cut short or edited by hand; re-collect if you can",),
            detector=DETECTOR,
        )
    ]


def times_going_back(order: Sequence[OutOfOrder]) -> list[Finding]:
    """One finding when snapshot times go back within a file (they were imported sorted by time)."""
    if not order:
        return []
    first = order[0]
    return [
        Finding(
            id=finding_id(FindingKind.SNAPSHOT_TIME_ORDER, *sorted({o.later.source for o in order})),
            kind=FindingKind.SNAPSHOT_TIME_ORDER,
            title=f"snapshot times go back {len(order)} times within their file (imported in time order)",
            severity=Severity.LOW,
            confidence=0.9,
            confidence_reason="the time lines are cited; a clock step or files joined out of order",
            summary=(
                f"{first.later.source}:{first.later.line} is at {first.later.wall:.3f}, before "
                f"{first.earlier.source}:{first.earlier.line} at {first.earlier.wall:.3f} above it. The snapshots "
                "were imported sorted by time; if a clock was stepped, growth rates across the step are wrong."
            ),
            evidence=tuple(
                Evidence(source=snap.source, locator=Locator(LocatorKind.LINE, snap.line), excerpt=snap.head)
                for o in order[:3]
                for snap in (o.earlier, o.later)
            ),
            facts=(Fact("steps back", str(len(order))),),
            # Each snapshot's time was compared with the one above it in the same file.
            baseline=Baseline(
                "a snapshot's time at or after the one above it in its file (a collector appends in time order)",
                f"at or after {iso_utc(first.earlier.wall)} ({first.earlier.source}:{first.earlier.line}); "
                f"{first.later.source}:{first.later.line} is {first.earlier.wall - first.later.wall:,.3f} s earlier",
                "the file's own snapshot above it",
            ),
            next_steps=("check the time lines cited; fix or drop the snapshots of a stepped clock",),
            detector=DETECTOR,
        )
    ]


def partial_samples(parts: Sequence[PartialSample], kept: int) -> list[Finding]:
    """One finding for the samples left out because they end in the middle of a row (``kept``: samples used)."""
    if not parts:
        return []
    first = parts[0]
    where = "; ".join(f"{p.source}:{p.line}" for p in parts[:3])
    return [
        Finding(
            id=finding_id(FindingKind.SNAPSHOT_PARTIAL, *sorted({p.source for p in parts})),
            kind=FindingKind.SNAPSHOT_PARTIAL,
            title=f"{len(parts)} sample(s) end in the middle of a row (cut short) and were left out",
            severity=Severity.LOW,
            confidence=0.95,
            confidence_reason="the cut line is cited; a sample cut mid-row lacks every row after the cut",
            summary=(
                f"{first.source}:{first.line} ends in the middle of a row ({first.text[:60]!r}): the sample that "
                f"starts at line {first.first_line} was cut short, so every cache after the cut would read as gone. "
                f"{len(parts)} such sample(s) ({where}) were left out; the figures use the {kept} complete samples."
            ),
            evidence=tuple(
                Evidence(source=p.source, locator=Locator(LocatorKind.LINE, p.line), excerpt=p.text)
                for p in parts[:CITED]
            ),
            facts=(Fact("samples left out", str(len(parts))), Fact("complete samples used", str(kept))),
            # The cut line was compared with a complete row: every column, then the next sample or the file's end.
            baseline=Baseline(
                "a sample whose last row is whole (every column, then the next sample's time line or the file's end)",
                f"{kept} complete sample(s); {first.source}:{first.line} ends after {len(first.text.split())} "
                "field(s), mid-row",
                "the row formats of /proc/slabinfo and /proc/meminfo, as the file's complete samples hold them",
            ),
            next_steps=("re-collect the cut sample if you still can; the complete samples are analysed as they are",),
            detector=DETECTOR,
        )
    ]


def wall_clock_steps(steps: Sequence[WallClockStep]) -> list[Finding]:
    """One finding for the wall-clock steps within a boot (uptime went on): flagged, measured across on uptime."""
    if not steps:
        return []
    first = steps[0]
    direction = "back" if first.seconds < 0 else "ahead"
    return [
        Finding(
            id=finding_id(FindingKind.SNAPSHOT_CLOCK_STEP, *sorted({s.source for s in steps})),
            kind=FindingKind.SNAPSHOT_CLOCK_STEP,
            title=(
                f"the wall clock stepped {direction} {abs(first.seconds):,.0f} s at {first.source}:{first.line} "
                f"while uptime went on ({len(steps)} step(s)); not a reboot"
            ),
            severity=Severity.LOW,
            confidence=0.9,
            confidence_reason="the time lines on both sides are cited; uptime kept counting across the step",
            summary=(
                f"{first.source}:{first.line} says {first.recorded:.0f} but the uptime since "
                f"{first.before_source}:{first.before_line} puts it at {first.expected:.0f} "
                f"({first.seconds:+,.0f} s): NTP or a VM resumed from a snapshot stepped the wall clock. The "
                "samples stay one boot, and growth is measured on the monotonic clock (uptime) across the step: "
                "the samples after it are stored at the earlier sample's time plus the uptime that passed."
            ),
            evidence=tuple(
                Evidence(source=s.source, locator=Locator(LocatorKind.LINE, s.line), excerpt=s.head)
                for s in steps[:CITED]
            ),
            facts=(
                Fact("steps", str(len(steps))),
                Fact("first step", f"{first.seconds:+.3f} s"),
            ),
            # The time line was compared with the wall time the uptime that passed since the sample before gives.
            baseline=Baseline(
                f"the wall time of {first.before_source}:{first.before_line} plus the uptime that passed since",
                f"{iso_utc(first.expected)} (the line says {iso_utc(first.recorded)}, {first.seconds:+,.3f} s)",
                "the samples' own /proc/uptime (CLOCK_BOOTTIME, which a wall-clock step does not move)",
            ),
            next_steps=("check the host's time sync (chronyc tracking, journal of systemd-timesyncd)",),
            detector=DETECTOR,
        )
    ]
