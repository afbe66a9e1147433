"""The streaming scheduling analysis: feed parsed trace events, get a :class:`TraceAnalysis`.

The analysis is a state machine per CPU (who runs since when, which IRQ,
softirq or work item is in progress) plus per-task records; its memory grows
with the number of tasks, IRQs and buckets, never with the trace length.  It
is pure: events in, typed results out (no file I/O, no clock).

Intervals are measured between the events that open and close them on the
same CPU: a run from the ``sched_switch`` that switches a task in to the one
that switches it out; wakeup latency from ``sched_waking`` (or
``sched_wakeup`` when the trace has no waking events) to the switch-in;
preemption wait from a switch-out in state R to the next switch-in; blocked
time from a switch-out in S/D/I to the wakeup.  After a lost-events marker
no interval that spans it is counted.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable

from collectors.trace_text import Kind, ParseCounts, TraceEvent
from detectors.sched.model import (
    Blame,
    Bucket,
    BucketTask,
    Coverage,
    CpuStats,
    EventRef,
    Figure,
    IrqStats,
    OffStats,
    ParseSummary,
    Preemptor,
    SoftirqStats,
    Span,
    StateTime,
    TaskStats,
    Thresholds,
    TraceAnalysis,
    Wait,
    WorkStats,
)
from forensics.model import NotAvailable

SOFTIRQ_NAMES = ("HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU")
RECENT_RUNS = 512  # runs remembered per CPU to say who ran during a wait
MAX_BUCKET_CELLS = 50_000  # (bucket, CPU) cells kept; beyond that buckets double in size (bounded memory)
TIMELINE_MAX_RUNS = 400_000  # runs kept for the PNG timeline (longest runs win beyond that)
_WAKE_SOURCES = {
    int(Kind.WAKING): "sched_waking",
    int(Kind.WAKEUP): "sched_wakeup",
    int(Kind.WAKEUP_NEW): "sched_wakeup_new",
}


def event_ref(ev: TraceEvent) -> EventRef:
    """An event as evidence: line number, time, CPU and the line decoded as the evidence check does."""
    return EventRef(ev.line_no, ev.ts, ev.cpu, ev.line.decode("utf-8", "replace").removesuffix("\r"))


def _span(start: float, end: float, cpu: int, begin: TraceEvent, finish: TraceEvent) -> Span:
    return Span(end - start, start, cpu, event_ref(begin), event_ref(finish))


class _Fig:
    """Mutable count/total/worst accumulator."""

    __slots__ = ("count", "total", "worst", "worst_begin", "worst_cpu", "worst_end", "worst_start")

    def __init__(self) -> None:
        self.count = 0
        self.total = 0.0
        self.worst = -1.0
        self.worst_start = 0.0
        self.worst_cpu = -1
        self.worst_begin: TraceEvent | None = None
        self.worst_end: TraceEvent | None = None

    def add(self, start: float, end: float, cpu: int, begin: TraceEvent, finish: TraceEvent) -> bool:
        """Add an interval; True when it is the new worst."""
        dur = end - start
        self.count += 1
        self.total += dur
        if dur > self.worst:
            self.set_worst(start, end, cpu, begin, finish)
            return True
        return False

    def set_worst(self, start: float, end: float, cpu: int, begin: TraceEvent, finish: TraceEvent) -> None:
        """Record an interval as the worst (the caller counted it)."""
        self.worst = end - start
        self.worst_start = start
        self.worst_cpu = cpu
        self.worst_begin = begin
        self.worst_end = finish

    def freeze(self) -> Figure:
        worst = None
        if self.worst_begin is not None and self.worst_end is not None:
            worst = _span(
                self.worst_start, self.worst_start + self.worst, self.worst_cpu, self.worst_begin, self.worst_end
            )
        return Figure(self.count, self.total, worst)


class _Task:
    __slots__ = (
        "blocked",
        "comm",
        "delay_caused",
        "hog_runs",
        "preempt_wait",
        "preempted_by",
        "prio",
        "runs",
        "runtime",
        "victims",
        "wakeup",
        "worst_preempt_wait",
        "worst_wakeup",
    )

    def __init__(self, comm: bytes, prio: int) -> None:
        self.comm = comm
        self.prio = prio
        self.runtime = 0.0
        self.runs = _Fig()
        self.hog_runs = 0
        self.wakeup = _Fig()
        self.worst_wakeup: Wait | None = None
        self.preempt_wait = _Fig()
        self.worst_preempt_wait: Wait | None = None
        self.blocked: dict[bytes, _Fig] = {}
        self.preempted_by: dict[int, int] = {}
        self.delay_caused = 0.0
        self.victims: dict[int, float] = {}


class _BucketCell:
    __slots__ = ("irq", "latency", "latency_pid", "runtime", "softirq")

    def __init__(self) -> None:
        self.runtime: dict[int, float] = {}
        self.irq = 0.0
        self.softirq = 0.0
        self.latency = -1.0
        self.latency_pid = 0


class SchedAnalyzer:
    """Feed :class:`TraceEvent` batches in trace order; call :meth:`result` at the end.

    ``window`` limits what is counted to ``[t0, t1]`` (intervals are clipped to
    it); ``bucket`` (seconds) enables the per-bucket digest; ``timeline`` keeps
    the runs for the PNG timeline.
    """

    def __init__(
        self,
        thresholds: Thresholds | None = None,
        window: tuple[float, float] = (-math.inf, math.inf),
        bucket: float | None = None,
        timeline: bool = False,
    ) -> None:
        self.thresholds = thresholds or Thresholds()
        self.w0, self.w1 = window
        self.bucket = bucket
        self.done = False  # True once an event after the window was seen
        self.tasks: dict[int, _Task] = {}
        self.cur: dict[int, tuple[int, float, TraceEvent, float]] = {}  # cpu -> (pid, since, switch-in, wait area)
        # Tasks waiting to run, per CPU, integrated over time: a run's share of the integral is
        # the delay it caused to others (O(1) per event; who exactly waited is asked only for
        # each task's worst wait, see _behind).
        self.queues: dict[int, list[float]] = {}  # cpu -> [tasks waiting, task-seconds so far, since when]
        self.wait_cpu: dict[int, int] = {}  # pid -> CPU it waits on
        self.recent: dict[int, deque[tuple[int, float, float]]] = {}
        self.first: dict[int, TraceEvent] = {}
        self.last: dict[int, TraceEvent] = {}
        self.busy: dict[int, float] = {}
        self.idle: dict[int, float] = {}
        self.switches: dict[int, int] = {}
        self.irq_time: dict[int, float] = {}
        self.softirq_time: dict[int, float] = {}
        self.pending_wake: dict[int, TraceEvent] = {}
        self.preempted: dict[int, TraceEvent] = {}
        self.blocked: dict[int, TraceEvent] = {}
        self.irq_stack: dict[int, list[TraceEvent]] = {}
        self.irqs: dict[int, _Fig] = {}
        self.irq_names: dict[int, bytes] = {}
        self.soft_cur: dict[int, TraceEvent] = {}
        self.raised: dict[tuple[int, int], TraceEvent] = {}
        self.softirqs: dict[int, _Fig] = {}
        self.soft_raise: dict[int, _Fig] = {}
        self.soft_raise_wait: dict[int, Wait] = {}
        self.work_cur: dict[tuple[int, bytes], TraceEvent] = {}
        self.works: dict[bytes, _Fig] = {}
        self.off_start: dict[tuple[int, int], TraceEvent] = {}  # (kind, cpu) -> disable event
        self.off: dict[int, _Fig] = {}  # Kind.IRQ_DISABLE / Kind.PREEMPT_DISABLE -> figure
        self.off_worst: dict[int, list[Span]] = {}
        self.wake_sources: dict[int, int] = {}
        self.seen_waking = False
        self.barrier = -math.inf  # no interval starting before this is counted (lost events)
        self.lost_markers = 0
        self.lost_events = 0
        self.buckets: dict[tuple[int, int], _BucketCell] = {}
        self.timeline: list[tuple[int, float, float, int]] | None = [] if timeline else None
        self.first_ts = math.inf
        self.last_ts = -math.inf

    # -- helpers -------------------------------------------------------------------------------

    def _task(self, pid: int, comm: bytes, prio: int) -> _Task:
        task = self.tasks.get(pid)
        if task is None:
            task = self.tasks[pid] = _Task(comm, prio)
        return task

    def _clip(self, start: float, end: float) -> float | None:
        """The interval's start clipped to the window, or None when it must not be counted."""
        if start <= self.barrier or end < self.w0 or end < start:  # end < start: time went back (concatenated traces)
            return None
        return start if start >= self.w0 else self.w0

    def _queue(self, cpu: int, ts: float, delta: int) -> None:
        """One more (+1) or one less (-1) task waiting to run on ``cpu`` from ``ts``."""
        q = self.queues.get(cpu)
        if q is None:
            q = self.queues[cpu] = [0.0, 0.0, ts]
        if ts > q[2]:
            q[1] += q[0] * (ts - q[2])
        q[2] = ts
        q[0] = max(0.0, q[0] + delta)

    def _area(self, cpu: int, ts: float) -> float:
        """Task-seconds of waiting on ``cpu`` up to ``ts``."""
        q = self.queues.get(cpu)
        if q is None:
            return 0.0
        return q[1] + q[0] * (ts - q[2]) if ts > q[2] else q[1]

    def _unqueue(self, pid: int, ts: float) -> None:
        cpu = self.wait_cpu.pop(pid, None)
        if cpu is not None:
            self._queue(cpu, ts, -1)

    def _behind(self, cpu: int, t0: float, t1: float, victim: int) -> tuple[Blame, ...]:
        """Who ran on ``cpu`` during ``[t0, t1]``, most time first; list task ``victim`` as theirs.

        ``victim`` < 0: the waiter is not a task (a softirq).
        """
        share: dict[int, float] = {}
        for pid, start, end in reversed(self.recent.get(cpu, ())):
            if end <= t0:
                break
            overlap = (end if end < t1 else t1) - (start if start > t0 else t0)
            if overlap > 0 and pid != victim:
                share[pid] = share.get(pid, 0.0) + overlap
        blames = []
        for pid, seconds in sorted(share.items(), key=lambda kv: -kv[1])[:5]:
            culprit = self.tasks.get(pid)
            if culprit is not None and pid != 0 and victim >= 0:
                culprit.victims[victim] = culprit.victims.get(victim, 0.0) + seconds
            blames.append(Blame(pid, self._comm(pid), seconds))
        return tuple(blames)

    def _comm(self, pid: int) -> str:
        if pid == 0:
            return "<idle>"
        task = self.tasks.get(pid)
        return task.comm.decode("utf-8", "replace") if task else f"pid {pid}"

    def _bucket_add(self, cpu: int, start: float, end: float, pid: int, what: int) -> None:
        """Spread an interval over the buckets it covers (what: 0 runtime, 1 irq, 2 softirq)."""
        size = self.bucket
        assert size is not None
        b = int(start // size)
        while start < end:
            edge = min(end, (b + 1) * size)
            cell = self.buckets.get((b, cpu))
            if cell is None:
                cell = self.buckets[(b, cpu)] = _BucketCell()
            part = edge - start
            if what == 0:
                cell.runtime[pid] = cell.runtime.get(pid, 0.0) + part
            elif what == 1:
                cell.irq += part
            else:
                cell.softirq += part
            start = edge
            b += 1

    def _coarsen_buckets(self) -> None:
        """Double the bucket size, merging pairs of cells, until the digest fits its budget."""
        assert self.bucket is not None
        while len(self.buckets) > MAX_BUCKET_CELLS // 2:
            self.bucket *= 2
            merged: dict[tuple[int, int], _BucketCell] = {}
            for (b, cpu), cell in self.buckets.items():
                into = merged.get((b // 2, cpu))
                if into is None:
                    merged[(b // 2, cpu)] = cell
                    continue
                for pid, seconds in cell.runtime.items():
                    into.runtime[pid] = into.runtime.get(pid, 0.0) + seconds
                into.irq += cell.irq
                into.softirq += cell.softirq
                if cell.latency > into.latency:
                    into.latency, into.latency_pid = cell.latency, cell.latency_pid
            self.buckets = merged

    def _bucket_latency(self, cpu: int, ts: float, latency: float, pid: int) -> None:
        assert self.bucket is not None
        key = (int(ts // self.bucket), cpu)
        cell = self.buckets.get(key)
        if cell is None:
            cell = self.buckets[key] = _BucketCell()
        if latency > cell.latency:
            cell.latency = latency
            cell.latency_pid = pid

    # -- event handlers ------------------------------------------------------------------------

    def feed(self, events: Iterable[TraceEvent]) -> None:
        """Process events in trace order; stops (sets ``done``) at the first event after the window."""
        if self.bucket is not None and len(self.buckets) > MAX_BUCKET_CELLS:
            self._coarsen_buckets()
        w1 = self.w1
        last = self.last
        for ev in events:
            kind = ev.kind
            ts = ev.ts
            if kind == 17:  # Kind.LOST
                self._lost(ev)
                continue
            if ts > w1:
                self.done = True
                return
            cpu = ev.cpu
            if cpu not in last:
                self.first[cpu] = ev
                self.first_ts = min(self.first_ts, ts)
            last[cpu] = ev
            if kind == 1:
                self._switch(ev, ts, cpu)
            elif kind <= 4:
                self._wake(ev, ts, kind)
            elif kind <= 6:
                self._irq(ev, ts, cpu, kind)
            elif kind <= 9:
                self._softirq(ev, ts, cpu, kind)
            elif kind <= 11:
                self._work(ev, ts, cpu, kind)
            elif kind <= 15:
                self._offtime(ev, ts, cpu, kind)
            else:
                pid = ev.pid
                self._unqueue(pid, ts)
                self.pending_wake.pop(pid, None)
                self.blocked.pop(pid, None)
                self.preempted.pop(pid, None)
        if events:
            self.last_ts = max(self.last_ts, max((e.ts for e in last.values()), default=-math.inf))

    def _lost(self, ev: TraceEvent) -> None:
        """Events were lost: forget what was in progress, count nothing that spans the gap."""
        self.lost_markers += 1
        self.lost_events += ev.pid
        self.barrier = max((e.ts for e in self.last.values()), default=-math.inf)
        cpus = list(self.cur) if ev.cpu < 0 else [ev.cpu]
        for q in self.queues.values():  # nobody is known to wait any more (the area so far stays)
            q[0] = 0.0
        self.wait_cpu.clear()
        for cpu in cpus:
            self.cur.pop(cpu, None)
            self.irq_stack.pop(cpu, None)
            self.soft_cur.pop(cpu, None)

    def _switch(self, ev: TraceEvent, ts: float, cpu: int) -> None:
        # The hot path (a third of all events): helpers are inlined where it pays.
        prev = ev.pid
        tasks = self.tasks
        cur = self.cur.get(cpu)
        switches = self.switches
        switches[cpu] = switches.get(cpu, 0) + 1
        if cur is not None and cur[0] == prev:
            since = cur[1]
            recent = self.recent.get(cpu)
            if recent is None:
                recent = self.recent[cpu] = deque(maxlen=RECENT_RUNS)
            recent.append((prev, since, ts))
            if since > self.barrier and since >= self.w0 and ts >= since:
                start: float | None = since
            else:
                start = self._clip(since, ts)
            if start is not None:
                if prev == 0:
                    self.idle[cpu] = self.idle.get(cpu, 0.0) + (ts - start)
                else:
                    self.busy[cpu] = self.busy.get(cpu, 0.0) + (ts - start)
                    task = tasks.get(prev)
                    if task is None:
                        task = tasks[prev] = _Task(ev.comm, ev.prio)
                    task.runtime += ts - start
                    task.runs.add(start, ts, cpu, cur[2], ev)
                    delay = self._area(cpu, ts) - cur[3]
                    if delay > 0:
                        task.delay_caused += delay
                    if ts - start > self.thresholds.hog:
                        task.hog_runs += 1
                    if self.bucket is not None:
                        self._bucket_add(cpu, start, ts, prev, 0)
                if self.timeline is not None and len(self.timeline) < TIMELINE_MAX_RUNS:
                    self.timeline.append((cpu, start, ts, prev))
        wait_cpu = self.wait_cpu
        if prev != 0:
            task = tasks.get(prev)
            if task is None:
                task = tasks[prev] = _Task(ev.comm, ev.prio)
            else:
                task.comm = ev.comm
                task.prio = ev.prio
            state = ev.state[:1]
            self.pending_wake.pop(prev, None)
            if prev in wait_cpu:
                self._unqueue(prev, ts)
            if state == b"R":
                self.preempted[prev] = ev
                wait_cpu[prev] = cpu
                self._queue(cpu, ts, 1)
                nxt = ev.next_pid
                task.preempted_by[nxt] = task.preempted_by.get(nxt, 0) + 1
            elif state not in (b"Z", b"X"):
                self.blocked[prev] = ev
        nxt = ev.next_pid
        if nxt in wait_cpu:
            self._unqueue(nxt, ts)
        self.cur[cpu] = (nxt, ts, ev, self._area(cpu, ts))
        if nxt == 0:
            return
        task = tasks.get(nxt)
        if task is None:
            task = tasks[nxt] = _Task(ev.next_comm, ev.next_prio)
        else:
            task.comm = ev.next_comm
            task.prio = ev.next_prio
        woken = self.pending_wake.pop(nxt, None)
        if woken is not None:
            self._waited(task, nxt, woken, ev, ts, cpu, task.wakeup, _WAKE_SOURCES[woken.kind])
        else:
            out = self.preempted.pop(nxt, None)
            if out is not None:
                self._waited(task, nxt, out, ev, ts, cpu, task.preempt_wait, "preemption")
        if self.blocked:
            sleep = self.blocked.pop(nxt, None)
            if sleep is not None:  # its wakeup was not traced: blocked until the switch-in
                self._blocked(task, sleep, ev, ts)

    def _waited(
        self, task: _Task, pid: int, since: TraceEvent, ev: TraceEvent, ts: float, cpu: int, fig: _Fig, source: str
    ) -> None:
        start = since.ts
        if not (start > self.barrier and start >= self.w0 and ts >= start):
            clipped = self._clip(start, ts)
            if clipped is None:
                return
            start = clipped
        latency = ts - start
        fig.count += 1
        fig.total += latency
        if latency > fig.worst:  # a new worst: say who ran meanwhile
            fig.set_worst(start, ts, cpu, since, ev)
            wait = Wait(_span(start, ts, cpu, since, ev), self._behind(cpu, start, ts, pid), source)
            if source == "preemption":
                task.worst_preempt_wait = wait
            else:
                task.worst_wakeup = wait
        if self.bucket is not None:
            self._bucket_latency(cpu, ts, latency, pid)

    def _blocked(self, task: _Task, sleep: TraceEvent, ev: TraceEvent, ts: float) -> None:
        start = self._clip(sleep.ts, ts)
        if start is None:
            return
        state = sleep.state[:1]
        fig = task.blocked.get(state)
        if fig is None:
            fig = task.blocked[state] = _Fig()
        fig.add(start, ts, sleep.cpu, sleep, ev)

    def _wake(self, ev: TraceEvent, ts: float, kind: int) -> None:
        if kind == 2:
            self.seen_waking = True
        elif kind == 3 and self.seen_waking:
            return
        pid = ev.pid
        if pid == 0:
            return
        pending = self.pending_wake
        if pid not in pending:
            pending[pid] = ev
            self.wake_sources[kind] = self.wake_sources.get(kind, 0) + 1
            if pid not in self.wait_cpu:
                target = ev.next_pid if ev.next_pid >= 0 else ev.cpu
                self.wait_cpu[pid] = target
                self._queue(target, ts, 1)
        sleep = self.blocked.pop(pid, None)
        if sleep is not None:
            self._blocked(self._task(pid, ev.comm, ev.prio), sleep, ev, ts)
        elif pid not in self.tasks:
            self.tasks[pid] = _Task(ev.comm, ev.prio)

    def _irq(self, ev: TraceEvent, ts: float, cpu: int, kind: int) -> None:
        stack = self.irq_stack.get(cpu)
        if kind == 5:
            if stack is None:
                stack = self.irq_stack[cpu] = []
            stack.append(ev)
            self.irq_names[ev.pid] = ev.state
            return
        if not stack or stack[-1].pid != ev.pid:
            return
        entry = stack.pop()
        start = self._clip(entry.ts, ts)
        if start is None:
            return
        fig = self.irqs.get(ev.pid)
        if fig is None:
            fig = self.irqs[ev.pid] = _Fig()
        fig.add(start, ts, cpu, entry, ev)
        self.irq_time[cpu] = self.irq_time.get(cpu, 0.0) + (ts - start)
        if self.bucket is not None:
            self._bucket_add(cpu, start, ts, 0, 1)

    def _softirq(self, ev: TraceEvent, ts: float, cpu: int, kind: int) -> None:
        vec = ev.pid
        if kind == 7:
            self.raised.setdefault((cpu, vec), ev)
            return
        if kind == 8:
            self.soft_cur[cpu] = ev
            raised = self.raised.pop((cpu, vec), None)
            if raised is None:
                return
            start = self._clip(raised.ts, ts)
            if start is None:
                return
            fig = self.soft_raise.get(vec)
            if fig is None:
                fig = self.soft_raise[vec] = _Fig()
            if fig.add(start, ts, cpu, raised, ev):
                behind = self._behind(cpu, start, ts, -1)
                self.soft_raise_wait[vec] = Wait(_span(start, ts, cpu, raised, ev), behind, "softirq_raise")
            return
        entry = self.soft_cur.pop(cpu, None)
        if entry is None or entry.pid != vec:
            return
        start = self._clip(entry.ts, ts)
        if start is None:
            return
        fig = self.softirqs.get(vec)
        if fig is None:
            fig = self.softirqs[vec] = _Fig()
        fig.add(start, ts, cpu, entry, ev)
        self.softirq_time[cpu] = self.softirq_time.get(cpu, 0.0) + (ts - start)
        if self.bucket is not None:
            self._bucket_add(cpu, start, ts, 0, 2)

    def _work(self, ev: TraceEvent, ts: float, cpu: int, kind: int) -> None:
        key = (cpu, ev.comm)
        if kind == 10:
            self.work_cur[key] = ev
            return
        begin = self.work_cur.pop(key, None)
        if begin is None:
            return
        start = self._clip(begin.ts, ts)
        if start is None:
            return
        fig = self.works.get(begin.state)
        if fig is None:
            fig = self.works[begin.state] = _Fig()
        fig.add(start, ts, cpu, begin, ev)

    def _offtime(self, ev: TraceEvent, ts: float, cpu: int, kind: int) -> None:
        base = kind if kind in (12, 14) else kind - 1  # the *_DISABLE kind
        if base not in self.off:
            self.off[base] = _Fig()
            self.off_worst[base] = []
        if kind == base:
            self.off_start.setdefault((base, cpu), ev)
            return
        begin = self.off_start.pop((base, cpu), None)
        if begin is None:
            return
        start = self._clip(begin.ts, ts)
        if start is None:
            return
        self.off[base].add(start, ts, cpu, begin, ev)
        if ts - start >= self.thresholds.offtime:
            worst = self.off_worst[base]
            worst.append(_span(start, ts, cpu, begin, ev))
            if len(worst) > 64:
                worst.sort(key=lambda s: -s.duration)
                del worst[16:]

    # -- result --------------------------------------------------------------------------------

    def result(self, counts: ParseCounts) -> TraceAnalysis:
        """Freeze everything into a :class:`TraceAnalysis`; open runs end at their CPU's last event."""
        for cpu, (pid, since, ev, _area) in list(self.cur.items()):
            end_ev = self.last.get(cpu)
            if pid == 0 or end_ev is None or end_ev.ts <= since:
                continue
            start = self._clip(since, end_ev.ts)
            if start is not None:
                task = self.tasks[pid]
                task.runtime += end_ev.ts - start
                self.busy[cpu] = self.busy.get(cpu, 0.0) + (end_ev.ts - start)
                task.runs.add(start, end_ev.ts, cpu, ev, end_ev)
                if end_ev.ts - start > self.thresholds.hog:
                    task.hog_runs += 1
        return TraceAnalysis(
            window=self._window(),
            latency_source=self._latency_source(),
            tasks=tuple(
                self._freeze_task(pid, t) for pid, t in sorted(self.tasks.items(), key=lambda kv: -kv[1].runtime)
            ),
            cpus=self._cpu_stats(),
            irqs=tuple(
                IrqStats(irq, self.irq_names.get(irq, b"").decode("utf-8", "replace"), fig.freeze())
                for irq, fig in sorted(self.irqs.items())
            ),
            softirqs=self._softirq_stats(),
            works=tuple(
                WorkStats(fn.decode("utf-8", "replace"), fig.freeze())
                for fn, fig in sorted(self.works.items(), key=lambda kv: -kv[1].worst)
            ),
            offtimes=self._offtimes(counts),
            coverage=self._coverage(counts),
            buckets=self._buckets(),
            bucket_seconds=self.bucket,
            thresholds=self.thresholds,
        )

    def summary(self, counts: ParseCounts) -> ParseSummary:
        """The reader's counts as a typed record."""
        unknown = tuple(
            sorted(((k.decode("utf-8", "replace"), v) for k, v in counts.unknown.items()), key=lambda kv: -kv[1])
        )
        return ParseSummary(
            counts.lines,
            counts.events,
            counts.used,
            counts.comments,
            counts.malformed,
            unknown,
            counts.layout,
            counts.tracer,
            tuple(counts.first_malformed),
        )

    def _window(self) -> tuple[float, float] | NotAvailable:
        if not self.last:
            return NotAvailable("the trace has no scheduling, IRQ or workqueue events")
        start = max(self.first_ts, self.w0)
        end = min(max(e.ts for e in self.last.values()), self.w1)
        return (start, end)

    def _latency_source(self) -> str | NotAvailable:
        if not self.wake_sources:
            return NotAvailable("the trace has no sched_waking or sched_wakeup events")
        if self.seen_waking:
            return "sched_waking"
        return "sched_wakeup" if int(Kind.WAKEUP) in self.wake_sources else "sched_wakeup_new"

    def _freeze_task(self, pid: int, t: _Task) -> TaskStats:
        return TaskStats(
            pid=pid,
            comm=t.comm.decode("utf-8", "replace"),
            prio=t.prio,
            runtime=t.runtime,
            runs=t.runs.freeze(),
            hog_runs=t.hog_runs,
            wakeup=t.wakeup.freeze(),
            worst_wakeup=t.worst_wakeup,
            preempt_wait=t.preempt_wait.freeze(),
            worst_preempt_wait=t.worst_preempt_wait,
            blocked=tuple(
                StateTime(s.decode("utf-8", "replace"), f.count, f.total, f.freeze().worst)
                for s, f in sorted(t.blocked.items())
            ),
            preempted_by=tuple(
                Preemptor(p, self._comm(p), n) for p, n in sorted(t.preempted_by.items(), key=lambda kv: -kv[1])[:5]
            ),
            delay_caused=t.delay_caused,
            victims=tuple(Blame(p, self._comm(p), s) for p, s in sorted(t.victims.items(), key=lambda kv: -kv[1])[:5]),
        )

    def _cpu_stats(self) -> tuple[CpuStats, ...]:
        return tuple(
            CpuStats(
                cpu,
                self.first[cpu].ts,
                self.last[cpu].ts,
                self.busy.get(cpu, 0.0),
                self.idle.get(cpu, 0.0),
                self.irq_time.get(cpu, 0.0),
                self.softirq_time.get(cpu, 0.0),
                self.switches.get(cpu, 0),
            )
            for cpu in sorted(self.last)
        )

    def _softirq_stats(self) -> tuple[SoftirqStats, ...]:
        out = []
        for vec in sorted(set(self.softirqs) | set(self.soft_raise)):
            name = SOFTIRQ_NAMES[vec] if 0 <= vec < len(SOFTIRQ_NAMES) else f"vec {vec}"
            durations = self.softirqs.get(vec, _Fig()).freeze()
            latency = self.soft_raise.get(vec, _Fig()).freeze()
            out.append(SoftirqStats(vec, name, durations, latency, self.soft_raise_wait.get(vec)))
        return tuple(out)

    def _offtimes(self, counts: ParseCounts) -> tuple[OffStats, ...]:
        out = []
        for base, what, tracer in ((12, "irqs-off", "irqsoff"), (14, "preempt-off", "preemptoff")):
            acc = self.off.get(base)
            if acc is not None:
                worst = tuple(sorted(self.off_worst[base], key=lambda s: -s.duration)[:10])
                out.append(OffStats(what, "preemptirq events", acc.freeze(), worst))
            elif counts.tracer in (tracer, "preemptirqsoff") and counts.latency_headers:
                spans = tuple(_tracer_span(n, text) for n, text in counts.latency_headers)
                worst = tuple(sorted(spans, key=lambda s: -s.duration)[:10])
                fig = Figure(len(spans), sum(s.duration for s in spans), worst[0])
                out.append(OffStats(what, f"{counts.tracer} tracer (its maximum only)", fig, worst))
            else:
                why = "the trace has no preemptirq events and no irqsoff/preemptoff tracer output"
                out.append(OffStats(what, NotAvailable(why), NotAvailable(why), ()))
        return tuple(out)

    def _coverage(self, counts: ParseCounts) -> Coverage:
        declared: int | NotAvailable = (
            counts.cpus_declared if counts.cpus_declared is not None else NotAvailable("the trace does not say")
        )
        seen = tuple(sorted(self.first))
        if not seen:
            na = NotAvailable("no events")
            return Coverage(declared, seen, na, na, self.lost_markers, self.lost_events, "no events")
        starts = [self.first[c].ts for c in seen]
        ends = [self.last[c].ts for c in seen]
        common_start, common_end = max(starts), min(ends)
        notes = []
        if isinstance(declared, int) and len(seen) < declared:
            missing = sorted(set(range(declared)) - set(seen))
            notes.append(f"no events at all from CPU {', '.join(map(str, missing))} (idle or buffer empty)")
        if common_start - min(starts) > 1e-3:
            late = ", ".join(
                f"CPU{c} from {self.first[c].ts:.6f}" for c in seen if self.first[c].ts > min(starts) + 1e-3
            )
            notes.append(
                f"CPU buffers start at different times ({late}); before {common_start:.6f} only some CPUs are "
                "covered, so cross-CPU figures there are incomplete"
            )
        if counts.overwritten:
            notes.append(
                f"the ring buffer overwrote {counts.overwritten} events before it was read, so the trace starts "
                "after the recording did (per-CPU buffers may start at different times)"
            )
        if self.lost_markers:
            notes.append(
                f"{self.lost_markers} lost-event markers ({self.lost_events} events lost); "
                "no interval spanning a loss is counted"
            )
        return Coverage(declared, seen, common_start, common_end, self.lost_markers, self.lost_events, "; ".join(notes))

    def _buckets(self) -> tuple[Bucket, ...]:
        if self.bucket is None:
            return ()
        out = []
        for (b, cpu), cell in sorted(self.buckets.items()):
            top = sorted(cell.runtime.items(), key=lambda kv: -kv[1])[:3]
            has_latency = cell.latency >= 0
            out.append(
                Bucket(
                    start=b * self.bucket,
                    cpu=cpu,
                    top=tuple(BucketTask(pid, self._comm(pid), rt) for pid, rt in top),
                    irq_time=cell.irq,
                    softirq_time=cell.softirq,
                    worst_latency=cell.latency if has_latency else None,
                    worst_latency_pid=cell.latency_pid if has_latency else None,
                    worst_latency_comm=self._comm(cell.latency_pid) if has_latency else None,
                )
            )
        return tuple(out)


def _tracer_span(line_no: int, text: str) -> Span:
    """The result line of an irqsoff/preemptoff tracer: ``# latency: 259 us, #4/4, CPU#2 | ...``."""
    micros = float(text.split(":", 1)[1].split(maxsplit=1)[0])
    cpu = -1
    if "CPU#" in text:
        digits = text.split("CPU#", 1)[1]
        cpu = int(digits[: len(digits) - len(digits.lstrip("0123456789"))] or -1)
    ref = EventRef(line_no, 0.0, cpu, text)
    return Span(micros * 1e-6, 0.0, cpu, ref, ref)


def analyze(
    batches: Iterable[list[TraceEvent]],
    counts: ParseCounts,
    thresholds: Thresholds | None = None,
    window: tuple[float, float] = (-math.inf, math.inf),
    bucket: float | None = None,
) -> TraceAnalysis:
    """Analyse parsed event batches in one pass (convenience for tests and small inputs)."""
    analyzer = SchedAnalyzer(thresholds, window, bucket)
    for batch in batches:
        analyzer.feed(batch)
        if analyzer.done:
            break
    return analyzer.result(counts)
