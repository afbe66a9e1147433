"""What the thread-state Gantt chart shows: around each of the slowest spans, the threads involved and their states.

In the spirit of Trace Compass's Control Flow view: around each of the slowest
spans (at most :data:`GANTT_SPANS`, one per request: spans of several sources
that overlap on one thread are one request), one row per thread involved (the
span's thread, the tasks that preempted it, its wakers, who ran on its CPU
while it waited), each broken down into running, IRQ, preempted, runnable and
blocked.  forensics/spanplots.py draws it.
"""

from __future__ import annotations

from detectors.spans.breakdown import breakdown
from forensics.types.spans import Breakdown, GanttChart, GanttRow, KernelTable, Span, SpanReport

GANTT_SPANS = 3
MAX_ROWS = 8  # threads per chart


def gantt_charts(report: SpanReport, table: KernelTable | None) -> tuple[GanttChart, ...]:
    """The charts of the slowest spans, slowest first (see the module docstring)."""
    worst: list[Breakdown] = []
    for b in sorted(report.slow, key=lambda b: -b.span.duration):  # one chart per request (sources overlap)
        if not any(w.span.tid == b.span.tid and w.span.start < b.span.end and b.span.start < w.span.end for w in worst):
            worst.append(b)
    return tuple(_chart(b, table) for b in worst[:GANTT_SPANS])


def _chart(b: Breakdown, table: KernelTable | None) -> GanttChart:
    s = b.span
    margin = max(s.duration * 0.2, 0.0005)
    w0, w1 = s.start - margin, s.end + margin
    threads = [s.tid]
    for p in b.parts:  # its preemptors and wakers, and who ran on its CPU while it waited
        others = [p.by_tid] if p.by_tid else []
        if table is not None and p.what in ("preempted", "runnable") and p.cpu >= 0:
            others += [tid for tid, _prio, _secs in table.ran_between(p.cpu, p.start, p.end)[:2]]
        for tid in others:
            if tid not in threads:
                threads.append(tid)
    rows = []
    for tid in threads[:MAX_ROWS]:
        if table is None:
            rows.append(GanttRow(tid, f"TID {tid}", ()))
            continue
        probe = Span(s.name, tid, "", w0, w1, s.begin_ref, s.end_ref)
        rows.append(GanttRow(tid, f"{table.name_at(tid, s.start)} {tid}", breakdown(table, probe).parts))
    return GanttChart(s, w0, w1, tuple(rows))
