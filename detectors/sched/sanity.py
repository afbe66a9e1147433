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

from detectors.sched.rules import IRQ_ENTRY, LOST, SOFTIRQ_ENTRY, SOFTIRQ_RAISE, SWITCH
from detectors.sched.state import event_ref
from forensics.types.sched import ClockCheck, ClockStep, LossGap
from forensics.types.trace import TraceEvent

if TYPE_CHECKING:
    from forensics.types.trace_batch import EventBatch

EXAMPLES = 5  # back steps kept as evidence
JUMP_S = 5.0  # seconds with no event on any CPU that count as a jump of the trace clock, not a quiet spell
# A shorter silence of every CPU is a hole in the recording (a trace stopped and restarted, two files joined, a
# buffer read and reset: review 7 D, 2 s cut from a trace that never paused 8.1 ms) when the trace's own event
# rate says it cannot be a quiet spell.  All four must hold, judged on what was read before it:
#  - it lasts HOLE_MIN_S or more (a single timestamp damaged ahead also makes every CPU look silent, up to it: the
#    clock-step check judges that, and its tests push one 0.5 s ahead);
#  - the trace's average rate so far (HOLE_MIN_EVENTS events at least, to have one) would have written
#    HOLE_EXPECTED events in it: 1000 events where none came (the review's trace: 1696/s, 3400 for its 2 s);
#  - it is HOLE_FACTOR times the longest silence before it (the review's: 8.1 ms before, 2004 ms then);
#  - a CPU was running a task (not idle) when it began.  A NOHZ idle machine writes nothing for seconds after
#    a burst of activity (every CPU switched to idle first), and that is a quiet spell, not a hole; a CPU busy
#    with a task gets its tick, and with others runnable is preempted every few ms.  A single task alone on an
#    otherwise silent machine for 1 s right after a busy stretch would be taken for a hole: the figures that
#    span it are then left out (said so), never invented.
#  - and the trace records what a running CPU's tick writes (interrupt and softirq events: the local timer's, the
#    TIMER softirq it raises) at HOLE_MIN_TICKS in a silence that long at their own rate so far: a trace of
#    sched_switch and sched_wakeup alone writes nothing while one task runs alone, however long, and that run is a
#    CPU hog to report, not a hole (the lead, reading the review's fix).
HOLE_MIN_S = 1.0
HOLE_MIN_TICKS = 50.0
#: The events a CPU's tick writes while a task runs (irq_vectors:local_timer_entry reads as an IRQ entry).
TICKED = (IRQ_ENTRY, SOFTIRQ_ENTRY, SOFTIRQ_RAISE)
HOLE_MIN_EVENTS = 1000
HOLE_EXPECTED = 1000.0
HOLE_FACTOR = 20.0
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
        self.jumps: list[tuple[TraceEvent, TraceEvent]] = []  # holes (HOLE_MIN_S) too, in trace order
        self.first_ts = math.nan  # the first event's time (the rate so far is taken from it)
        self.longest = 0.0  # the longest silence of every CPU so far that was neither a jump nor a hole
        self.running: dict[int, int] = {}  # per CPU, the pid its last sched_switch switched in (0: idle)
        self.ticks = 0  # events a tick writes (TICKED) so far (the reference analyzer counts them after saw())
        self.held = 0  # the compiled path: events of the batches before (``fed`` less the current batch's)
        # Each loss (lost-events marker) as [cpu, events, the CPU's last event before, its first after, markers], in the
        # order the markers come (a marker for no CPU: each CPU seen so far, by number); ``open``: the CPUs whose
        # loss has no event after it yet -> its entry.
        self.losses: list[list[Any]] = []
        self.open: dict[int, list[Any]] = {}

    def saw(self, ev: TraceEvent) -> bool:
        """Note ``ev`` (trace order, any CPU; ``fed`` counts it already) for the jump and hole checks (the
        reference calls this per event later than all before it, before the event changes ``running``); True when
        a hole in the recording ends at it (nothing that spans it is to be counted)."""
        top = self.top
        hole = False
        if top is None:
            self.first_ts = ev.ts
        elif ev.ts > top.ts:
            silence = ev.ts - top.ts
            if silence < HOLE_MIN_S:  # gap(), for the most of them
                if silence > self.longest:  # noqa: PLR1730 (per event: no call)
                    self.longest = silence
            elif self.gap(silence, self.fed - 1, top.ts, self.ticks):
                self.jumps.append((top, ev))
                hole = silence <= JUMP_S
        if top is None or ev.ts > top.ts:
            self.top, self.top_ts = ev, ev.ts
        return hole

    def lost(self, cpu: int, events: int, before: TraceEvent | None) -> None:
        """A lost-events marker for ``cpu`` (the analyzers call this per CPU it names), ``before``: the CPU's last
        event before it.  Markers before the CPU reports again add to the same loss."""
        held = self.open.get(cpu)
        if held is not None:
            held[1] += events
            held[4] += 1
            return
        entry = [cpu, events, before, None, 1]
        self.losses.append(entry)
        self.open[cpu] = entry

    def reported(self, ev: TraceEvent) -> None:
        """``ev`` is the first event of its CPU after a loss (the reference calls this when ``ev.cpu`` is open)."""
        self.open.pop(ev.cpu)[3] = ev

    def _losses_in(self, batch: EventBatch, kind: Any, idx: Any) -> None:
        """The losses of the first rows of ``batch`` (``kind``; ``idx``: its events' rows), as the reference notes
        them event by event: each marker opens its CPUs' losses, each CPU's next event closes its own."""
        import numpy as np

        markers = np.flatnonzero(kind == LOST)
        if not len(markers) and not self.open:
            return
        cpus = batch.cpu[idx]
        rows_of: dict[int, Any] = {}

        def rows(c: int) -> Any:  # the rows of CPU c's events in the batch
            if c not in rows_of:
                rows_of[c] = idx[cpus == c]
            return rows_of[c]

        def close(upto: int) -> None:  # each open CPU's first event before row ``upto``
            for c, entry in list(self.open.items()):
                r = rows(c)
                k = int(np.searchsorted(r, entry_row.get(c, -1), side="right"))
                if k < len(r) and r[k] < upto:
                    entry[3] = batch.event(int(r[k]))
                    del self.open[c]

        entry_row: dict[int, int] = {}  # the marker row a loss opened at in this batch (-1: before it)
        for m in markers.tolist():
            close(m)
            mc = int(batch.cpu[m])
            # a marker for no CPU: each CPU seen so far (built only then: a batch-sized mask per marker)
            for c in [mc] if mc >= 0 else sorted({*self.last, *cpus[idx < m].tolist()}):
                r = rows(c)
                k = int(np.searchsorted(r, m)) - 1
                before = batch.event(int(r[k])) if k >= 0 else self.last.get(c)
                if c not in self.open:
                    entry_row[c] = m
                self.lost(c, int(batch.pid[m]), before)
        close(len(kind))

    def gap(self, silence: float, before: int, since: float, ticks: int) -> bool:
        """Whether ``silence`` seconds with no event on any CPU, after ``before`` events (``ticks`` of them a tick's)
        up to ``since``, is a jump (over JUMP_S) or a hole in the recording (see HOLE_MIN_S); else it is the longest
        silence so far or not."""
        if silence > JUMP_S:
            return True
        elapsed = since - self.first_ts
        if (
            silence >= HOLE_MIN_S
            and before >= HOLE_MIN_EVENTS
            and silence * before >= HOLE_EXPECTED * elapsed
            and silence * ticks >= HOLE_MIN_TICKS * elapsed
            and silence >= HOLE_FACTOR * self.longest
            and any(self.running.values())
        ):
            return True
        if silence > self.longest:  # noqa: PLR1730 (as saw does it)
            self.longest = silence
        return False

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

    def feed_batch(self, batch: EventBatch, rows: int) -> list[int]:
        """The first ``rows`` rows of a column batch (those the analysis consumes), with numpy; the rows at which a
        hole in the recording ends (see :meth:`saw`), in order."""
        import numpy as np

        kind = batch.kind[:rows]
        idx = np.flatnonzero(kind != LOST)  # a lost-events marker is not an event of a CPU's clock
        self._losses_in(batch, kind, idx)  # (before ``last`` moves to this batch's events)
        if not len(idx):
            return []
        self.held = self.fed
        self.fed += len(idx)
        cpu, ts = batch.cpu[idx], batch.ts[idx]
        ticked = np.isin(kind[idx], TICKED)
        holes = self._jumps_in(batch, idx, ts, np.cumsum(ticked) - ticked)
        self.ticks += int(ticked.sum())
        self.running.update(_switched_in(batch, rows))
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
        return holes

    def _jumps_in(self, batch: EventBatch, idx: Any, ts: Any, ticks_before: Any) -> list[int]:
        """Jumps forward and holes inside a batch (rows ``idx``, times ``ts``) and from the batch before it: what
        :meth:`saw` does per event, on the silences over HOLE_MIN_S only (the longest below it, at once)."""
        import numpy as np

        if self.top is None:
            self.first_ts = float(ts[0])
        top = self.top.ts if self.top is not None else float(ts[0])
        peak = np.maximum.accumulate(np.concatenate(([top], ts)))  # the latest time before each row, and after
        silence = ts - peak[:-1]
        done = 0  # the rows whose silences are in ``longest``
        holes: list[int] = []
        for j in np.flatnonzero(silence >= HOLE_MIN_S).tolist():
            if j > done:
                self.longest = max(self.longest, float(silence[done:j].max()))
            done = j + 1
            running = self.running
            if silence[j] <= JUMP_S:  # a hole asks whether a CPU was running a task: as the switches before it left it
                self.running = {**running, **_switched_in(batch, int(idx[j]))}
            jumped = self.gap(
                float(ts[j]) - float(peak[j]), self.held + j, float(peak[j]), self.ticks + int(ticks_before[j])
            )
            self.running = running
            if not jumped:
                continue
            if silence[j] <= JUMP_S:
                holes.append(int(idx[j]))
            k = int(np.argmax(ts[:j])) if j else -1
            before = self.top if k < 0 or float(ts[k]) <= top else batch.event(int(idx[k]))
            if before is not None:
                self.jumps.append((before, batch.event(int(idx[j]))))
        if done < len(silence):
            self.longest = max(self.longest, float(silence[done:].max()))
        if self.top is None or float(peak[-1]) > self.top.ts:
            self.top = batch.event(int(idx[int(np.argmax(ts))]))
            self.top_ts = self.top.ts
        return holes

    def freeze(self, cpus: int) -> ClockCheck:
        """The result; ``cpus`` is the number of CPUs that had events (one step fewer each)."""
        disputed = tuple((cpu, lo, hi) for cpu in sorted(self.ranges) for lo, hi in merge_ranges(self.ranges[cpu]))
        examples = tuple(ClockStep(event_ref(b), event_ref(a)) for b, a in self.examples)
        jumps = tuple(ClockStep(event_ref(b), event_ref(a)) for b, a in self.jumps)
        holes = tuple(j for j in jumps if j.after.ts - j.before.ts <= JUMP_S)
        losses = tuple(
            LossGap(c, n, event_ref(b) if b is not None else None, event_ref(a) if a is not None else None, k)
            for c, n, b, a, k in self.losses
        )
        return ClockCheck(max(0, self.fed - cpus), self.back, examples, disputed, jumps, holes, losses)


def _switched_in(batch: EventBatch, rows: int) -> dict[int, int]:
    """Per CPU, the pid the last sched_switch among the first ``rows`` rows of ``batch`` switched in."""
    import numpy as np

    sw = np.flatnonzero(batch.kind[:rows] == SWITCH)
    if not len(sw):
        return {}
    cpus, at = np.unique(batch.cpu[sw][::-1], return_index=True)  # each CPU's last switch: its first, reversed
    return dict(zip(cpus.tolist(), batch.next_pid[sw[::-1][at]].tolist(), strict=True))
