"""Does each CPU's clock go forward?  A cheap check beside the scheduling state machine.

One CPU's ring buffer is written in time order, so in any trace (whatever the
interleaving of CPUs) the events of one CPU must have non-decreasing
timestamps.  When they do not (a timestamp damaged by a bad copy, files
concatenated or sorted wrongly, a file in reverse order), intervals measured
across the step are meaningless: a run "ending" at a timestamp that jumped
0.5 s ahead lasts 0.5 s.  :class:`ClockMonitor` counts such steps, keeps the
first few as evidence and the time ranges each CPU passed twice (merged), so
the findings can drop figures that overlap them (:mod:`detectors.sched.findings`).

It also notes where the whole trace jumps forward: no event on any CPU for more than :data:`JUMP_S`
between two events.  A busy kernel's tick, RCU and kworkers write sched events every few
milliseconds, so such a silence is a suspend (the trace clock kept counting), a clock set forward,
or a missing stretch of the file; a run or a wait measured across it would be presented as lasting
the whole silence ("python3 ran 3600000 ms"), so figures that span a jump are flagged and dropped too.

It is fed by both analyzers: per event by the reference
(:class:`~detectors.sched.analyzer.SchedAnalyzer`), per column batch with
numpy by the compiled one (:class:`~detectors.sched.engine.FastAnalyzer`), and
both freeze to the same :class:`~forensics.types.sched.ClockCheck` (merging
ranges gives one canonical result whatever the order of merges).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from detectors.sched.rules import LOST
from detectors.sched.state import event_ref
from forensics.types.sched import ClockCheck, ClockStep
from forensics.types.trace import TraceEvent

if TYPE_CHECKING:
    from forensics.types.trace_batch import EventBatch

EXAMPLES = 5  # back steps kept as evidence
JUMP_S = 5.0  # seconds with no event on any CPU that count as a jump of the trace clock, not a quiet spell
_MERGE_AT = 4096  # ranges per CPU before they are merged (bounds memory on a reversed file)


def merge_ranges(ranges: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The union of closed ranges as sorted, disjoint ranges (a canonical form)."""
    out: list[tuple[float, float]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1]:
            if hi > out[-1][1]:
                out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return out


class ClockMonitor:
    """Counts, per CPU, the consecutive events whose time goes back; see the module docstring."""

    def __init__(self) -> None:
        self.fed = 0  # events seen (lost-event markers excluded)
        self.back = 0
        self.examples: list[tuple[TraceEvent, TraceEvent]] = []
        self.ranges: dict[int, list[tuple[float, float]]] = {}
        self.last: dict[int, TraceEvent] = {}  # the compiled path's last event per CPU (the reference has its own)
        self.top: TraceEvent | None = None  # the latest event so far, any CPU
        self.top_ts = -math.inf
        self.jumps: list[tuple[TraceEvent, TraceEvent]] = []

    def saw(self, ev: TraceEvent) -> None:
        """Note ``ev`` (trace order, any CPU) for the jump check (the reference calls this per event)."""
        top = self.top
        if top is None or ev.ts > top.ts:
            if top is not None and ev.ts - top.ts > JUMP_S:
                self.jumps.append((top, ev))
            self.top, self.top_ts = ev, ev.ts

    def went_back(self, before: TraceEvent, after: TraceEvent) -> None:
        """``after`` follows ``before`` on the same CPU but is earlier (the reference calls this per step)."""
        self.back += 1
        if len(self.examples) < EXAMPLES:
            self.examples.append((before, after))
        self._add(after.cpu, [(after.ts, before.ts)])

    def _add(self, cpu: int, ranges: list[tuple[float, float]]) -> None:
        held = self.ranges.setdefault(cpu, [])
        held.extend(ranges)
        if len(held) > _MERGE_AT:
            held[:] = merge_ranges(held)

    def feed_batch(self, batch: EventBatch, rows: int) -> None:
        """The first ``rows`` rows of a column batch (those the analysis consumed), with numpy."""
        import numpy as np

        kind = batch.kind[:rows]
        idx = np.flatnonzero(kind != LOST)  # a lost-events marker is not an event of a CPU's clock
        if not len(idx):
            return
        self.fed += len(idx)
        cpu, ts = batch.cpu[idx], batch.ts[idx]
        self._jumps_in(batch, idx, ts)
        # By CPU, each CPU's events in trace order; CPU numbers as int16 make numpy's stable sort a radix sort.
        narrow = len(cpu) and int(cpu.min()) >= 0 and int(cpu.max()) < 1 << 15
        order = np.argsort(cpu.astype(np.int16) if narrow else cpu, kind="stable")
        c, t, row = cpu[order], ts[order], idx[order]
        same = c[1:] == c[:-1]
        inner = np.flatnonzero(same & (t[1:] < t[:-1])) + 1  # a back step inside the batch
        starts = np.flatnonzero(np.concatenate(([True], ~same)))  # each CPU's first row in the batch
        steps: list[tuple[int, Any, Any]] = []  # (row of the later event, earlier event or its row, cpu)
        for s in starts.tolist():
            prev = self.last.get(int(c[s]))
            if prev is not None and t[s] < prev.ts:
                steps.append((int(row[s]), prev, int(c[s])))
        steps.extend((int(row[j]), int(row[j - 1]), int(c[j])) for j in inner.tolist())
        if steps:
            steps.sort(key=lambda s: s[0])
            for after_row, before, cpu_no in steps:
                before_ts = before.ts if isinstance(before, TraceEvent) else float(batch.ts[before])
                self._add(cpu_no, [(float(batch.ts[after_row]), before_ts)])
                if len(self.examples) < EXAMPLES:
                    before_ev = before if isinstance(before, TraceEvent) else batch.event(before)
                    self.examples.append((before_ev, batch.event(after_row)))
            self.back += len(steps)
        ends = np.concatenate((starts[1:], [len(c)])) - 1  # each CPU's last row in the batch
        for e in ends.tolist():
            self.last[int(c[e])] = batch.event(int(row[e]))

    def _jumps_in(self, batch: EventBatch, idx: Any, ts: Any) -> None:
        """Jumps forward inside a batch (rows ``idx``, times ``ts``) and from the batch before it."""
        import numpy as np

        top = self.top.ts if self.top is not None else float(ts[0])
        peak = np.maximum.accumulate(np.concatenate(([top], ts)))  # the latest time before each row, and after
        for j in np.flatnonzero(ts - peak[:-1] > JUMP_S).tolist():
            k = int(np.argmax(ts[:j])) if j else -1
            before = self.top if k < 0 or float(ts[k]) <= top else batch.event(int(idx[k]))
            if before is not None:
                self.jumps.append((before, batch.event(int(idx[j]))))
        if self.top is None or float(peak[-1]) > self.top.ts:
            self.top = batch.event(int(idx[int(np.argmax(ts))]))
            self.top_ts = self.top.ts

    def freeze(self, cpus: int) -> ClockCheck:
        """The result; ``cpus`` is the number of CPUs that had events (one step fewer each)."""
        disputed = tuple((cpu, lo, hi) for cpu in sorted(self.ranges) for lo, hi in merge_ranges(self.ranges[cpu]))
        examples = tuple(ClockStep(event_ref(b), event_ref(a)) for b, a in self.examples)
        jumps = tuple(ClockStep(event_ref(b), event_ref(a)) for b, a in self.jumps)
        return ClockCheck(max(0, self.fed - cpus), self.back, examples, disputed, jumps)
