"""One time axis for the events of every source.

Kernel logs, dumps and traces count seconds since boot (monotonic); samples
and journal lines carry wall-clock times.  With the boot time known, every
event gets a wall-clock time and the uncertainty of the conversion; without
it, events of the two clocks are kept apart and the timeline says so.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from forensics.model import BootTime, Clock, Finding, LocatorKind, NotAvailable, Timestamp


@dataclass(frozen=True)
class TimelineEvent:
    """Something that happened, at a time, cited by a finding's evidence."""

    when: Timestamp  # as the source recorded it
    wall: float | None  # on the wall clock, when it can be known
    uncertainty: float  # seconds, either way (0 for times recorded on the wall clock)
    finding_id: str
    title: str
    cite: str  # the evidence citation (source and locator)
    excerpt: str

    def when_text(self) -> str:
        """The event's time for people: UTC wall time when known, else seconds since boot."""
        if self.wall is not None:
            stamp = dt.datetime.fromtimestamp(self.wall, tz=dt.UTC).isoformat(timespec="seconds")
            return stamp + (f" (±{self.uncertainty:.1f} s)" if self.uncertainty > 0 else "")
        return f"{self.when.seconds:.6f} s on the source's clock (since boot)"


def _first_last(finding: Finding) -> list[tuple[Timestamp, int]]:
    """The earliest and the latest timestamped evidence of a finding (by index)."""
    timed = [(ev.timestamp, i) for i, ev in enumerate(finding.evidence) if ev.timestamp is not None]
    if not timed:
        return []
    # Compare within one clock only; a finding's evidence normally uses one.
    clock = timed[0][0].clock
    same = [(ts, i) for ts, i in timed if ts.clock is clock]
    first = min(same, key=lambda x: x[0].seconds)
    last = max(same, key=lambda x: x[0].seconds)
    return [first] if first[1] == last[1] or first[0].seconds == last[0].seconds else [first, last]


def build_timeline(findings: tuple[Finding, ...], boot: BootTime | NotAvailable) -> tuple[TimelineEvent, ...]:
    """Events of all findings (first and last evidence with a time), in time order.

    Events are ordered on the wall clock when the boot time is known; events of
    a clock that cannot be converted (no boot time, or a trace's own clock) come
    after, in their own order.
    """
    events = []
    for finding in findings:
        for ts, index in _first_last(finding):
            ev = finding.evidence[index]
            if ts.clock is Clock.WALL:
                wall, unc = ts.seconds, 0.0
            elif ev.locator.kind is LocatorKind.EVENT or ts.clock is Clock.TRACE:
                # A trace's clock (ftrace "local", "global", perf, ...) is not printk's clock,
                # and a trace may come from another boot: it keeps its own time.
                wall, unc = None, 0.0
            elif isinstance(boot, BootTime):
                wall, unc = boot.to_wall(ts), boot.uncertainty
            else:
                wall, unc = None, 0.0
            events.append(
                TimelineEvent(ts, wall, unc, finding.id, finding.title, ev.cite(), ev.excerpt.split("\n", 1)[0])
            )
    return tuple(
        sorted(events, key=lambda e: (e.wall is None, e.wall if e.wall is not None else 0.0, e.when.seconds, e.title))
    )


def narrative(events: tuple[TimelineEvent, ...], limit: int = 6) -> str:
    """A one-sentence story of the timeline: "A (t1), then B (t2), then C (t3)"."""
    seen: list[TimelineEvent] = []
    for event in events:
        if event.finding_id not in {e.finding_id for e in seen}:
            seen.append(event)
    if not seen:
        return "No input carries times to order the events."
    shown = seen[:limit]
    text = ", then ".join(f"{e.title} ({e.when_text()})" for e in shown)
    more = f", and {len(seen) - limit} more" if len(seen) > limit else ""
    return text[:1].upper() + text[1:] + more + "."
