"""Spans across events the tracer lost: what a full ring buffer (or a missing packet) hides from a span.

A user-space stream that lost events (``events_discarded`` grew in a packet's context, or packets are missing:
:class:`forensics.types.spans.Loss`, dated as babeltrace2 dates them) hides what its threads did then.  A span of
a thread whose stream lost events while it ran has both edges recorded but not all its inside: it is *incomplete*
(:attr:`Span.lost`), explained with that said and left out of the baseline of the others (detectors.spans.findings).
A start no end closed, with events lost on its stream before the thread's next span began, had its end possibly
discarded (as Trace Compass leaves such a request unmatched, not open for ever).
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
from collections.abc import Sequence

from forensics.types.spans import Loss, Mark, Span


class _Index:
    """The losses of each stream, in time order: those overlapping a time found by bisection (a stream's windows
    follow one another), not by a scan of every loss for every span (a session of 100 000 spans and 10 000 gaps)."""

    def __init__(self, losses: Sequence[Loss]) -> None:
        self.of: dict[tuple[str, str], tuple[list[float], list[float], list[Loss]]] = {}
        by: dict[tuple[str, str], list[Loss]] = {}
        for x in losses:
            by.setdefault((x.source, x.stream), []).append(x)
        for key, xs in by.items():
            xs.sort(key=lambda x: (x.start, x.end))
            ends = list(itertools.accumulate((x.end for x in xs), max))  # (nondecreasing, for bisection)
            self.of[key] = ([x.start for x in xs], ends, xs)

    def on(self, stream: tuple[str, str], start: float, end: float) -> list[Loss]:
        """The losses of ``stream`` that overlap ``start`` .. ``end`` (Loss.overlaps)."""
        got = self.of.get(stream)
        if got is None:
            return []
        starts, ends, xs = got
        lo, hi = bisect.bisect_right(ends, start), bisect.bisect_left(starts, end)
        return [x for x in xs[lo:hi] if x.overlaps(start, end)]


def flag_incomplete(spans: Sequence[Span], marks: Sequence[Mark], losses: Sequence[Loss]) -> list[Span]:
    """``spans`` with :attr:`Span.lost` set: the losses of the streams its thread wrote to while it ran (its edges'
    and its other events') that overlap it.  ``marks``: every mark in time order."""
    if not losses:
        return list(spans)
    index = _Index(losses)
    # Per thread and stream, the times of its marks there: whether it wrote to a stream while a span ran.
    times: dict[int, dict[tuple[str, str], list[float]]] = {}
    for m in marks:
        if m.ref.stream:
            times.setdefault(m.tid, {}).setdefault((m.ref.source, m.ref.stream), []).append(m.ts)
    out = []
    for s in spans:
        streams = {(r.source, r.stream) for r in (s.begin_ref, s.end_ref) if r.stream}
        for key, ts in times.get(s.tid, {}).items():
            if key not in streams and bisect.bisect_right(ts, s.end) > bisect.bisect_left(ts, s.start):
                streams.add(key)
        lost = tuple(x for key in sorted(streams) for x in index.on(key, s.start, s.end))
        out.append(dataclasses.replace(s, lost=tuple(sorted(lost, key=lambda x: x.start))) if lost else s)
    return out


def ends_possibly_lost(left_open: Sequence[Mark], spans: Sequence[Span], losses: Sequence[Loss]) -> int:
    """How many of the starts no end closed (``left_open``) had events lost on their stream after them, before their
    thread's next span began (or the trace ended): their end may be among them."""
    if not losses or not left_open:
        return 0
    starts: dict[int, list[float]] = {}
    for s in spans:
        starts.setdefault(s.tid, []).append(s.start)
    for m in left_open:
        starts.setdefault(m.tid, []).append(m.ts)
    for v in starts.values():
        v.sort()
    index = _Index(losses)
    n = 0
    for m in left_open:
        later = starts[m.tid]
        k = bisect.bisect_right(later, m.ts)
        until = later[k] if k < len(later) else float("inf")
        if m.ref.stream and index.on((m.ref.source, m.ref.stream), m.ts, until):
            n += 1
    return n


def loss_text(lost: Sequence[Loss]) -> str:
    """What a span's streams lost while it ran: ``events discarded: ch_0 packet 189, 5918 events between A and B``;
    of several gaps, their total, packets and first and last times."""
    total = sum(x.count for x in lost)
    packets = sum(1 for x in lost if not x.count)
    what = " and ".join(
        t for t in (f"{total} events discarded" if total else "", f"{packets} packet(s) lost" if packets else "") if t
    )
    streams = sorted({x.stream for x in lost})
    if len(lost) == 1:
        x = lost[0]
        return f"{what}: {x.stream} packet {x.packet}, between {x.start:.6f} and {x.end:.6f}"
    where = ", ".join(streams[:2]) + (f" and {len(streams) - 2} more" if len(streams) > 2 else "")
    first, last = min(lost, key=lambda x: x.start), max(lost, key=lambda x: x.end)
    return (
        f"{what} in {len(lost)} gaps: {where} packets {min(x.packet for x in lost)}-{max(x.packet for x in lost)},"
        f" between {first.start:.6f} and {last.end:.6f}"
    )
