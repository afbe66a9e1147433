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

This is the reference: readable, per event, in plain Python.  ``kforensic
trace`` runs the same state machine compiled over columns
(:class:`detectors.sched.engine.FastAnalyzer`), whose results the tests
require to be *equal* to this one's.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable

from detectors.sched import rules
from detectors.sched.buckets import BucketDigest
from detectors.sched.freeze import freeze_analysis, parse_summary
from detectors.sched.rules import (
    IRQ_ENTRY,
    IRQ_EXIT,
    LOST,
    PREEMPT_ENABLE,
    PROCESS_EXIT,
    SOFTIRQ_ENTRY,
    SOFTIRQ_EXIT,
    SOFTIRQ_RAISE,
    SWITCH,
    WAKE_SOURCES,
    WAKEUP,
    WAKEUP_NEW,
    WAKING,
    WORK_END,
    WORK_START,
    is_hog,
    keeps_offtime,
    off_base,
    opens_offtime,
)
from detectors.sched.sanity import TICKED, ClockMonitor
from detectors.sched.state import (
    Accumulator,
    TaskState,
    VictimTally,
    moves_of,
    off_span_of,
    span_of,
    task_wait,
    wait_parts,
)
from detectors.sched.window import scan_after
from forensics.gcpause import gc_paused
from forensics.types.sched import (
    Blame,
    ParseSummary,
    Span,
    Thresholds,
    TraceAnalysis,
    Wait,
)
from forensics.types.trace import PRIO_UNKNOWN, ParseCounts, TraceEvent
from forensics.types.trace_batch import EventBatch


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
        self.digest = BucketDigest(bucket) if bucket else None
        self.done = False  # True once nothing more is to be read (see past)
        # Past the window's end (--window, --around) the reading goes on only until each CPU seen has an event (or
        # a lost-event marker) after it: a CPU's first event after the window (``after``) says the task current
        # there at the window's end still ran then (its run is closed at the window's end, not at the CPU's last
        # event in the window), and a CPU without one stops reporting.  ``end_ts``: the latest time read past it.
        self.past = False
        self.after: dict[int, TraceEvent] = {}
        self.end_ts = -math.inf
        self.tasks: dict[int, TaskState] = {}
        self.cur: dict[int, tuple[int, float, TraceEvent, float]] = {}  # cpu -> (pid, since, switch-in, wait area)
        # Tasks waiting to run, per CPU, integrated over time: a run's share of the integral is
        # the delay it caused to others (O(1) per event; who exactly waited is asked only for
        # each task's worst wait, see behind).
        self.queues: dict[int, list[float]] = {}  # cpu -> [tasks waiting, task-seconds so far, since when]
        self.wait_cpu: dict[int, int] = {}  # pid -> CPU it waits on
        self.wait_since: dict[int, float] = {}  # pid -> since when (its wait's seconds are charged at its end)
        # pid -> when its wait began, for a wait a sched_migrate_task moved: each CPU's part is charged at the move
        # that ends it (_migrate), all parts as one wait of the victim's (VictimTally.add's key).
        self.wait_first: dict[int, float] = {}
        # pid -> the moves of its wait (sched_migrate_task, CPU left, dest CPU), up to rules.MOVES + 1 (more: how it
        # moved is not known); reset where a wait is queued, read where it ends (_worst_wait).
        self.moves: dict[int, list[tuple[TraceEvent, int, int]]] = {}
        self.recent: dict[int, deque[tuple[int, float, float]]] = {}
        self.first: dict[int, TraceEvent] = {}
        # The first event of each CPU in the window (--window, --around): events before it are read for the state
        # they set, so ``first`` is the trace's.  Kept only when a window starts the analysis.
        self.first_in: dict[int, TraceEvent] = {}
        self.last: dict[int, TraceEvent] = {}
        self.busy: dict[int, float] = {}
        self.idle: dict[int, float] = {}
        self.switches: dict[int, int] = {}
        self.switched: set[int] = set()  # the CPUs with a sched_switch read (before, in or after a window)
        self.irq_time: dict[int, float] = {}
        self.softirq_time: dict[int, float] = {}
        self.pending_wake: dict[int, TraceEvent] = {}
        # pid -> the CPU its pending wakeup queued it on, told by the sched_wakeup after its sched_waking: the
        # waking's target_cpu is the CPU the task last ran on, and select_task_rq may queue it on another between
        # the two events (when not told: the pending event's target, see queued_on).
        self.wake_cpu: dict[int, int] = {}
        # The pids whose pending wake is a sched_waking whose sched_wakeup is still to come: a sched_wakeup places
        # the latest sched_waking of its task, so one read while a wake was pending (not a wait's start) takes it.
        self.unplaced: set[int] = set()
        self.preempted: dict[int, TraceEvent] = {}
        self.blocked: dict[int, TraceEvent] = {}
        self.irq_stack: dict[int, list[TraceEvent]] = {}
        self.irqs: dict[int, Accumulator] = {}
        self.irq_names: dict[int, bytes] = {}
        self.soft_cur: dict[int, TraceEvent] = {}
        self.raised: dict[tuple[int, int], TraceEvent] = {}
        self.softirqs: dict[int, Accumulator] = {}
        self.soft_raise: dict[int, Accumulator] = {}
        self.soft_raise_wait: dict[int, Wait] = {}
        self.work_cur: dict[tuple[int, bytes], TraceEvent] = {}
        self.works: dict[bytes, Accumulator] = {}
        self.off_start: dict[tuple[int, int], TraceEvent] = {}  # (kind, cpu) -> disable event
        self.off: dict[int, Accumulator] = {}  # IRQ_DISABLE / PREEMPT_DISABLE (rules.off_base) -> figure
        self.off_worst: dict[int, list[Span]] = {}
        self.wake_sources: dict[int, int] = {}
        self.seen_waking = False
        self.wakeup_placed = False  # a sched_wakeup read after a sched_waking (TraceAnalysis.wakeup_placed)
        self.migrations = 0  # the sched_migrate_task events read up to the window's end (TraceAnalysis.migrations)
        # The kinds (Kind values) of the events read, before, in and past the window until ``done`` (lost-event
        # markers too): whether the trace can show a kind of problem is judged on them, not on the window's.
        self.kinds: set[int] = set()
        self.barrier = -math.inf  # no wait or sleep starting before this is counted (lost events, steps, holes)
        # An interval that stays on one CPU (a run, a handler, a softirq, an irqs-off section) is cut by a loss of
        # that CPU's events only (ClockCheck.lost_in): ``hard`` is the barrier of clock steps and holes (every CPU),
        # ``lost_bar`` each CPU's own from its losses.  A run seen whole on CPU0 while CPU1 lost events is counted.
        self.hard = -math.inf
        self.lost_bar: dict[int, float] = {}
        self.lost_markers = 0
        self.lost_events = 0
        self.timeline: list[tuple[int, float, float, int]] | None = [] if timeline else None
        self.first_ts = math.inf
        self.last_ts = -math.inf
        self.clock = ClockMonitor()  # per-CPU timestamps going back (detectors.sched.sanity)

    # -- helpers -------------------------------------------------------------------------------

    def clip(self, start: float, end: float, barrier: float | None = None) -> float | None:
        """The interval's start clipped to the window, or None when it must not be counted (``barrier``: of an
        interval on one CPU, :meth:`cpu_barrier`; else the barrier of waits and sleeps)."""
        if barrier is None:
            barrier = self.barrier
        if start <= barrier or end < self.w0 or end < start:  # end < start: time went back (concatenated traces)
            return None
        return start if start >= self.w0 else self.w0

    def cpu_barrier(self, cpu: int) -> float:
        """No interval that stays on ``cpu`` and starts before this is counted: its losses, every clock step/hole."""
        lost = self.lost_bar.get(cpu, -math.inf)
        return lost if lost > self.hard else self.hard

    def _queue(self, cpu: int, ts: float, delta: int) -> None:
        """One more (+1) or one less (-1) task waiting to run on ``cpu`` from ``ts``."""
        q = self.queues.get(cpu)
        if q is None:
            q = self.queues[cpu] = [0.0, 0.0, ts]
        if ts > q[2]:
            q[1] += q[0] * (ts - q[2])
        q[2] = ts
        q[0] = max(0.0, q[0] + delta)

    def _unqueue(self, pid: int, ts: float, seen: int = -1) -> None:
        """Task ``pid`` no longer waits from ``ts``: its wait is charged to who ran on the CPU it waited on, unless it
        is ``seen`` (>= 0) running on another (it moved at a time the trace does not show: who delayed it is not
        known, and its seconds stay in ``delay_caused`` only, not resolved)."""
        cpu = self.wait_cpu.pop(pid, None)
        if cpu is not None:
            self._queue(cpu, ts, -1)
            since = self.wait_since.pop(pid)
            key = self.wait_first.pop(pid, math.nan)
            if seen < 0 or seen == cpu:
                self._charge(pid, cpu, since, ts, key)

    def _wait_ends(self, pid: int, waited_on: int, ts: float, cpu: int) -> None:
        """Task ``pid``, queued on ``waited_on``, was switched in on ``cpu`` at ``ts``: its wait is charged to who ran
        there, unless it moved to another CPU at a time the trace does not show (who delayed it is not known)."""
        since = self.wait_since.pop(pid)
        key = self.wait_first.pop(pid, math.nan)
        if waited_on == cpu:
            self._charge(pid, waited_on, since, ts, key)

    def _charge(self, victim: int, cpu: int, t0: float, t1: float, key: float = math.nan) -> None:
        """Task ``victim`` waited on ``cpu`` during ``[t0, t1]``: charge each task that ran there meanwhile
        (:meth:`shares`) with its share, one wait of the victim's (``key``: the start of a wait that moved between
        CPUs, whose parts are one wait: VictimTally.add)."""
        if t1 < self.w0:
            return
        for pid, seconds in self.shares(victim, cpu, t0, t1).items():
            culprit = self.tasks.get(pid)
            if culprit is not None:
                tally = culprit.victims.get(victim)
                if tally is None:
                    tally = culprit.victims[victim] = VictimTally()
                tally.add(seconds, key)

    def shares(self, victim: int, cpu: int, t0: float, t1: float) -> dict[int, float]:
        """What each task that ran on ``cpu`` during ``[t0, t1]`` (the run current there, then the ring of recent
        runs, newest first) is charged of task ``victim``'s wait there (pid -> seconds).

        The same seconds the waiting-task integral gives the runs (``delay_caused``): a victim's seconds are
        what it waited while each ran.  Runs the ring no longer holds, idle, runs before a lost-events barrier
        and runs that end before the window are not charged; nor is the part of a wait before the window's start
        (ue20 #2: a 500 ms window's RT hog said a victim waited 948.689 ms behind it, its wakeup finding 433.7 ms)."""
        t0 = max(t0, self.w0)
        barrier = self.barrier
        share: dict[int, float] = {}
        cur = self.cur.get(cpu)
        if cur is not None and cur[0] not in (0, victim) and barrier < cur[1] < t1:
            overlap = t1 - (cur[1] if cur[1] > t0 else t0)
            if overlap > 0:
                share[cur[0]] = overlap
        for pid, start, end in reversed(self.recent.get(cpu, ())):
            if end <= t0:
                break
            if pid in (0, victim) or start <= barrier or end < self.w0:
                continue
            overlap = (end if end < t1 else t1) - (start if start > t0 else t0)
            if overlap > 0:
                share[pid] = share.get(pid, 0.0) + overlap
        return share

    def behind(
        self, parts: tuple[tuple[int, float, float], ...], victim: int, disjoint: bool = True
    ) -> tuple[tuple[Blame, ...], float, tuple[int, float]]:
        """Who ran on each part's CPU during its interval (``parts``: (cpu, t0, t1)), most time first, each task
        once per CPU; list task ``victim`` as theirs.  With it, the seconds no run known covers at a part's start
        (:meth:`_behind_part`): summed over ``disjoint`` parts, else (parts over one interval on several CPUs) the
        most of one.  The CPUs are taken in the order they first appear, each with all its parts (as the compiled
        engine merges a task's share per CPU).

        ``victim`` < 0: the waiter is not a task (a softirq).  Last, how many ran beyond the blames kept
        (rules.BLAMES) and their seconds (Wait.more, more_seconds).
        """
        share: dict[tuple[int, int], float] = {}
        unseen = 0.0
        for cpu in dict.fromkeys(c for c, _t0, _t1 in parts):
            for c, t0, t1 in parts:
                if c == cpu:
                    u = self._behind_part(share, cpu, t0, t1, victim)
                    unseen = unseen + u if disjoint else max(unseen, u)
        blames = []
        ranked = sorted(share.items(), key=lambda kv: -kv[1])
        for (pid, cpu), seconds in ranked[: rules.BLAMES]:
            task = self.tasks.get(pid)  # its prio now: as its own last naming event printed it
            prio = task.prio if task is not None and pid else PRIO_UNKNOWN
            blames.append(Blame(pid, self.comm(pid), seconds, prio, cpu))
        rest = 0.0
        for _key, seconds in ranked[rules.BLAMES :]:  # in the compiled engine's order: the same float sum
            rest += seconds
        return tuple(blames), unseen, (len(ranked) - len(blames), rest)

    def _behind_part(self, share: dict[tuple[int, int], float], cpu: int, t0: float, t1: float, victim: int) -> float:
        """Add who ran on ``cpu`` during ``[t0, t1]`` to ``share`` ((pid, cpu) -> seconds); the seconds from ``t0``
        that no run known on the CPU covers: the ring of recent runs no longer holds them, or they are before its
        first sched_switch (0 when the runs known reach back to ``t0``)."""
        cur = self.cur.get(cpu)  # the run still current (a wait that ends without a switch, or on another CPU)
        if cur is not None and cur[1] < t1:
            overlap = t1 - (cur[1] if cur[1] > t0 else t0)
            if overlap > 0 and cur[0] != victim:
                key = (cur[0], cpu)
                share[key] = share.get(key, 0.0) + overlap
        recent = self.recent.get(cpu, ())
        oldest = cur[1] if cur is not None and cur[1] < t1 else t1  # the start of the oldest run known there
        for pid, start, end in reversed(recent):
            if end <= t0:
                break
            oldest = start
            overlap = (end if end < t1 else t1) - (start if start > t0 else t0)
            if overlap > 0 and pid != victim:
                key = (pid, cpu)
                share[key] = share.get(key, 0.0) + overlap
        else:  # no run known there reaches back to t0: the ring was full (older runs dropped from it), or the
            # wait began before the CPU's first sched_switch (what ran there before it is not known)
            if oldest > t0:
                return (oldest if oldest < t1 else t1) - t0
        return 0.0

    # -- event handlers ------------------------------------------------------------------------

    def feed(self, events: Iterable[TraceEvent]) -> None:
        """Process events in trace order; past the window, only each CPU's next event (``after``), then ``done``."""
        with gc_paused():
            self._feed(events)

    def _feed(self, events: Iterable[TraceEvent]) -> None:
        if self.digest is not None and len(self.digest.cells) > rules.MAX_BUCKET_CELLS:
            self.digest.bound()
        w0, w1 = self.w0, self.w1
        windowed = w0 > -math.inf
        last = self.last
        first_in = self.first_in
        clock = self.clock
        past = self.past
        kinds = self.kinds
        for ev in events:
            kind = ev.kind
            ts = ev.ts
            kinds.add(kind)
            if past:
                if self._after_window(ev):
                    return
                continue
            if kind == LOST:
                self._lost(ev)
                continue
            if ts > w1:  # the window's end: from here on only each CPU's next event is looked for
                past = self.past = True
                if self._after_window(ev):
                    return
                continue
            cpu = ev.cpu
            if clock.open and cpu in clock.open:  # its first event after a loss: where the loss ends
                clock.reported(ev)
            if windowed and ts >= w0 and cpu not in first_in:
                first_in[cpu] = ev
            prev = last.get(cpu)
            if prev is None:
                self.first[cpu] = ev
                self.first_ts = min(self.first_ts, ts)
            elif ts < prev.ts:  # this CPU's clock went back: said in the result, figures across it dropped
                clock.went_back(prev, ev)
                # Nothing in progress at the step, and nothing until the clock is past the last time seen,
                # is counted: an interval across the step has no true length, and counting it let totals
                # exceed their window (#32: 602 ms of runtime in a 191 ms window).
                self.barrier = max(self.barrier, *(e.ts for e in last.values()))
                self.hard = max(self.hard, self.barrier)
            clock.fed += 1
            # The whole trace jumped forward, or a hole in the recording ends here (detectors.sched.sanity)?  Nothing
            # that spans a hole is counted, as across lost events (_lost): the barrier is the last time before it.
            if ts > clock.top_ts and clock.saw(ev):
                self.barrier = max(self.barrier, *(e.ts for e in last.values()))
                self.hard = max(self.hard, self.barrier)
            clock.ticks += kind in TICKED  # (no branch: this loop's complexity is at its bound)
            last[cpu] = ev
            if kind == SWITCH:  # dispatch as rules.HANDLERS
                self._switch(ev, ts, cpu)
            elif kind <= WAKEUP_NEW:
                self._wake(ev, ts, kind)
            elif kind <= IRQ_EXIT:
                self._irq(ev, ts, cpu, kind)
            elif kind <= SOFTIRQ_EXIT:
                self._softirq(ev, ts, cpu, kind)
            elif kind <= WORK_END:
                self._work(ev, ts, cpu, kind)
            elif kind <= PREEMPT_ENABLE:
                self._offtime(ev, ts, cpu, kind)
            else:  # (one call: this loop's complexity is at its bound)
                (self._exit if kind <= PROCESS_EXIT else self._migrate)(ev, ts)
        if events:
            self.last_ts = max(self.last_ts, max((e.ts for e in last.values()), default=-math.inf))

    def _after_window(self, ev: TraceEvent) -> bool:
        """An event (or lost-event marker) read past the window's end: each CPU's first is kept in ``after``;
        True (and ``done``) once every CPU seen up to the window's end has one."""
        after, last = self.after, self.last
        if ev.kind == LOST:
            for cpu in list(last) if ev.cpu < 0 else [ev.cpu]:
                if cpu in last and cpu not in after:
                    after[cpu] = ev
        else:
            self.end_ts = max(self.end_ts, ev.ts)
            if ev.cpu in last and ev.cpu not in after:
                after[ev.cpu] = ev
        self.done = len(after) == len(last)
        return self.done

    def _lost(self, ev: TraceEvent) -> None:
        """Events were lost: forget what was in progress, count nothing that spans the gap."""
        self.lost_markers += 1
        self.lost_events += ev.pid
        self.barrier = max((e.ts for e in self.last.values()), default=-math.inf)
        for c in [ev.cpu] if ev.cpu >= 0 else sorted(self.last):  # the time it covers (detectors.sched.sanity)
            self.clock.lost(c, ev.pid, self.last.get(c))
            if c in self.last:  # (a CPU not seen yet has nothing open; the compiled engine keeps seen CPUs only)
                self.lost_bar[c] = self.barrier
        cpus = list(self.cur) if ev.cpu < 0 else [ev.cpu]
        for q in self.queues.values():  # nobody is known to wait any more (the area so far stays)
            q[0] = 0.0
        self.wait_cpu.clear()
        self.wait_since.clear()
        self.wait_first.clear()
        for cpu in cpus:
            self.cur.pop(cpu, None)
            self.irq_stack.pop(cpu, None)
            self.soft_cur.pop(cpu, None)

    def _switch(self, ev: TraceEvent, ts: float, cpu: int) -> None:
        """A sched_switch: the run that ends on ``cpu``, the task switched out, the task switched in."""
        if ts >= self.w0:  # the window's switches (--window, --around): --around counted them from the start
            switches = self.switches
            switches[cpu] = switches.get(cpu, 0) + 1
        self.switched.add(cpu)
        self.clock.running[cpu] = ev.next_pid  # was a task running when the trace went silent? (sanity.HOLE_MIN_S)
        cur = self.cur.get(cpu)
        if cur is not None and cur[0] == ev.pid:
            self._run_ends(ev, ts, cpu, cur)
        if ev.pid != 0:
            self._switch_out(ev, ts, cpu)
        self._switch_in(ev, ts, cpu)

    # The hot path (a third of all events) is _run_ends, _switch_out and _switch_in: _queue, _unqueue,
    # Accumulator.add and the wait accounting are written out in them (same arithmetic in the same order,
    # so the same floats).  The task-seconds of waiting on a CPU up to ts are q[1] + q[0] * (ts - q[2]) (q[1]
    # when ts <= q[2]), q = self.queues[cpu] (see _queue).

    def _run_ends(self, ev: TraceEvent, ts: float, cpu: int, cur: tuple[int, float, TraceEvent, float]) -> None:
        """The run of the task switched out (``cur``: who runs on ``cpu`` since when) ends at ``ts``."""
        prev = ev.pid
        since = cur[1]
        recent = self.recent.get(cpu)
        if recent is None:
            recent = self.recent[cpu] = deque()
        while recent and rules.drops_run(len(recent), recent[0][2], ts):
            recent.popleft()
        recent.append((prev, since, ts))
        barrier = self.cpu_barrier(cpu)
        if since > barrier and since >= self.w0 and ts >= since:
            start: float | None = since
        else:
            start = self.clip(since, ts, barrier)
        if start is None:
            return
        if prev == 0:
            self.idle[cpu] = self.idle.get(cpu, 0.0) + (ts - start)
        else:
            self.busy[cpu] = self.busy.get(cpu, 0.0) + (ts - start)
            tasks = self.tasks
            task = tasks.get(prev)
            if task is None:
                task = tasks[prev] = TaskState(ev.comm, ev.prio)
            run = ts - start
            task.runtime += run
            runs = task.runs
            runs.count += 1
            runs.total += run
            if run > runs.worst:
                runs.set_worst(start, ts, cpu, cur[2], ev)
            q = self.queues.get(cpu)
            area = 0.0 if q is None else (q[1] + q[0] * (ts - q[2]) if ts > q[2] else q[1])
            delay = area - cur[3]
            if delay > 0:
                task.delay_caused += delay
            if is_hog(run, self.thresholds.hog):
                task.hog_runs += 1
            if self.digest is not None:
                self.digest.add(cpu, start, ts, prev, rules.BUCKET_RUN)
        if self.timeline is not None and len(self.timeline) < rules.TIMELINE_MAX_RUNS:
            self.timeline.append((cpu, start, ts, prev))

    def _switch_out(self, ev: TraceEvent, ts: float, cpu: int) -> None:
        """The task switched out (not idle): preempted (it waits on ``cpu``), blocked, or gone."""
        prev = ev.pid
        tasks = self.tasks
        task = tasks.get(prev)
        if task is None:
            task = tasks[prev] = TaskState(ev.comm, ev.prio)
        else:
            task.comm = ev.comm
            task.prio = ev.prio
        state = ev.state[:1]
        if self.pending_wake.pop(prev, None) is not None:
            self.wake_cpu.pop(prev, None)
        # It ran until now, whatever state it leaves in: a preemption wait still open (its switch-in not recorded)
        # ended before this.  Left open, it was closed at a window's end as a wait of the whole window (ue20 #1:
        # healthy3.dat's bash, exited 10 s before 19820:19822, "waited 2000.000 ms" there).
        self.preempted.pop(prev, None)
        wait_cpu = self.wait_cpu
        if prev in wait_cpu:
            self._unqueue(prev, ts, cpu)
        if state == rules.PREEMPTED_STATE:
            self.preempted[prev] = ev
            wait_cpu[prev] = cpu
            self.moves.pop(prev, None)
            self.wait_since[prev] = ts
            queues = self.queues
            q = queues.get(cpu)
            if q is None:
                q = queues[cpu] = [0.0, 0.0, ts]
            if ts > q[2]:
                q[1] += q[0] * (ts - q[2])
            q[2] = ts
            q[0] = max(0.0, q[0] + 1)
            if ts >= self.w0:  # counted in the window only: --around showed the preemptions before it too
                nxt = ev.next_pid
                # an RT task stopped by RT throttling was not preempted by the task that got the CPU
                by = task.throttled_for if rules.is_throttled(ev.prio, nxt, ev.next_prio) else task.preempted_by
                by[nxt] = by.get(nxt, 0) + 1
        elif state not in rules.GONE_STATES:
            self.blocked[prev] = ev

    def _switch_in(self, ev: TraceEvent, ts: float, cpu: int) -> None:
        """The task switched in: it runs from ``ts``; a wakeup or preemption wait of it ends."""
        nxt = ev.next_pid
        queues = self.queues
        wait_cpu = self.wait_cpu
        waited_on = -1
        if nxt in wait_cpu:
            waited_on = wait_cpu.pop(nxt)
            wq = queues.get(waited_on)
            if wq is None:
                wq = queues[waited_on] = [0.0, 0.0, ts]
            if ts > wq[2]:
                wq[1] += wq[0] * (ts - wq[2])
            wq[2] = ts
            wq[0] = max(0.0, wq[0] - 1)
        q = queues.get(cpu)
        self.cur[cpu] = (nxt, ts, ev, 0.0 if q is None else (q[1] + q[0] * (ts - q[2]) if ts > q[2] else q[1]))
        if waited_on >= 0:  # charged once the run that ended here is in the ring and no longer current
            self._wait_ends(nxt, waited_on, ts, cpu)
        if nxt == 0:
            return
        tasks = self.tasks
        task = tasks.get(nxt)
        if task is None:
            task = tasks[nxt] = TaskState(ev.next_comm, ev.next_prio)
        else:
            task.comm = ev.next_comm
            task.prio = ev.next_prio
        since_ev = self.pending_wake.pop(nxt, None)
        if since_ev is not None:
            fig = task.wakeup
            target = self.wake_cpu.pop(nxt, -1)  # the CPU it was woken onto
            if target < 0:
                target = since_ev.next_pid if since_ev.next_pid >= 0 else since_ev.cpu
            if target != cpu and target not in self.switched:  # its switch-in there could not be seen: not counted
                if self.clip(since_ev.ts, ts) is not None:
                    task.unseen_wakes += 1
                    task.unseen_cpu = target
                since_ev = None
        else:
            since_ev = self.preempted.pop(nxt, None)
            fig = task.preempt_wait
            target = since_ev.cpu if since_ev is not None else cpu  # the CPU it was preempted on
        if since_ev is not None:  # _waited, written out
            begin = since_ev.ts
            if begin > self.barrier and begin >= self.w0 and ts >= begin:
                latency = ts - begin
                fig.count += 1
                fig.total += latency
                if latency > fig.worst:
                    self._worst_wait(task, nxt, since_ev, ev, begin, ts, cpu, fig, target, waited_on)
                if self.digest is not None:
                    self.digest.latency(cpu, ts, latency, nxt)
            else:
                clipped = self.clip(begin, ts)
                if clipped is not None:
                    latency = ts - clipped
                    fig.count += 1
                    fig.total += latency
                    if latency > fig.worst:
                        self._worst_wait(task, nxt, since_ev, ev, clipped, ts, cpu, fig, target, waited_on)
                    if self.digest is not None:
                        self.digest.latency(cpu, ts, latency, nxt)
        if self.blocked:
            sleep = self.blocked.pop(nxt, None)
            if sleep is not None:  # its wakeup was not traced: blocked until the switch-in
                self._blocked(task, sleep, ev, ts)

    def _worst_wait(
        self,
        task: TaskState,
        pid: int,
        since: TraceEvent,
        ev: TraceEvent,
        start: float,
        ts: float,
        cpu: int,
        fig: Accumulator,
        queued: int,
        waited_on: int = -1,
    ) -> None:
        """A task's new worst wait (wakeup or preemption, told by ``fig``): record it and who ran meanwhile.

        ``queued``: the CPU it was queued on when the wait began; ``waited_on``: the one its queue ended on (-1: not
        queued).  Moved there from ``queued`` by the sched_migrate_task events kept (``moves``), who ran on each CPU
        while it waited there is named (Wait.moves).  Else, switched in on another CPU than its queue was on, or
        moved and back (A -> B -> A) by a move not followed, it moved at a time the trace does not show: what ran on
        every CPU it is known to have waited on during the whole wait is named, as context, the moves read cited
        (Wait.moved; state.wait_parts)."""
        fig.set_worst(start, ts, cpu, since, ev)
        source = "preemption" if fig is task.preempt_wait else WAKE_SOURCES[since.kind]
        hist = self.moves.get(pid) if waited_on >= 0 else None  # (a wait not queued: a former wait's moves)
        parts, disjoint, moved = wait_parts(hist, queued, waited_on, cpu, start, ts)
        behind, unseen, more = self.behind(parts, pid, disjoint)
        moves = moves_of(hist) if moved != rules.MOVED_NO else ()
        wait = task_wait(
            pid, start, ts, cpu, since, ev, behind, source, unseen, queued, rules.MOVED[moved], moves, more
        )
        if source == "preemption":
            task.worst_preempt_wait = wait
        else:
            task.worst_wakeup = wait

    def _blocked(self, task: TaskState, sleep: TraceEvent, ev: TraceEvent, ts: float) -> None:
        start = self.clip(sleep.ts, ts)
        if start is None:
            return
        state = sleep.state[:1]
        fig = task.blocked.get(state)
        if fig is None:
            fig = task.blocked[state] = Accumulator()
        fig.add(start, ts, sleep.cpu, sleep, ev)

    def _wake(self, ev: TraceEvent, ts: float, kind: int) -> None:
        if kind == WAKING:
            self.seen_waking = True
        elif kind == WAKEUP and self.seen_waking:
            self.wakeup_placed = True
            self._placed(ev, ts)
            return
        pid = ev.pid
        if pid == 0:
            return
        pending = self.pending_wake
        if pid not in pending:
            pending[pid] = ev
            if kind == WAKING:
                self.unplaced.add(pid)
            else:
                self.unplaced.discard(pid)
            wake_sources = self.wake_sources
            wake_sources[kind] = wake_sources.get(kind, 0) + 1
            wait_cpu = self.wait_cpu
            if pid not in wait_cpu and not (kind == WAKING and self.wakeup_placed):  # (else queued by _placed)
                target = ev.next_pid if ev.next_pid >= 0 else ev.cpu
                wait_cpu[pid] = target
                self.moves.pop(pid, None)
                self.wait_since[pid] = ts
                q = self.queues.get(target)  # _queue(target, ts, 1), inlined
                if q is None:
                    q = self.queues[target] = [0.0, 0.0, ts]
                if ts > q[2]:
                    q[1] += q[0] * (ts - q[2])
                q[2] = ts
                q[0] = max(0.0, q[0] + 1)
        elif kind == WAKING:  # a later waking while one is pending: the next sched_wakeup is that one's
            self.unplaced.discard(pid)
        sleep = self.blocked.pop(pid, None)
        if sleep is not None:  # _blocked, inlined (a wakeup of a sleeping task is most of them)
            task = self.tasks.get(pid)
            if task is None:
                task = self.tasks[pid] = TaskState(ev.comm, ev.prio)
            begin = sleep.ts
            start = begin if begin > self.barrier and begin >= self.w0 and ts >= begin else self.clip(begin, ts)
            if start is not None:
                state = sleep.state[:1]
                fig = task.blocked.get(state)
                if fig is None:
                    fig = task.blocked[state] = Accumulator()
                slept = ts - start
                fig.count += 1
                fig.total += slept
                if slept > fig.worst:
                    fig.set_worst(start, ts, sleep.cpu, sleep, ev)
        elif pid not in self.tasks:
            self.tasks[pid] = TaskState(ev.comm, ev.prio)

    def _placed(self, ev: TraceEvent, ts: float) -> None:
        """A sched_wakeup where sched_waking starts the waits: the CPU the woken task was queued on (its target_cpu).

        The wait still starts at the sched_waking, and is queued on this CPU (not on the waking's target_cpu, the
        CPU the task last ran on).  Once a trace is known to have both events (``wakeup_placed``) a waking queues
        nothing (:meth:`_wake`): here the task is queued, from its waking on (the waiting-task integral gets the
        time since then at once).  Before, the task counted as waiting on the waking's target is moved here from
        ``ts`` (the microseconds it counted there are charged to no one).  A wakeup without a pending waking (its
        waking not read, or a later waking's) places nothing."""
        pid = ev.pid
        if pid not in self.unplaced or pid not in self.pending_wake:
            return
        self.unplaced.discard(pid)
        target = ev.next_pid if ev.next_pid >= 0 else ev.cpu
        self.wake_cpu[pid] = target
        old = self.wait_cpu.get(pid, -1)
        if old == target:
            return
        if old >= 0:  # queued on the waking's target before the trace was known to have both events: moved here
            self._queue(old, ts, -1)
            self._queue(target, ts, 1)
            self.wait_cpu[pid] = target
            self.wait_since[pid] = ts
            self.moves.pop(pid, None)  # a migration before its sched_wakeup: the wakeup choosing its CPU
            return
        since = self.pending_wake[pid].ts
        if (
            since <= self.barrier or since > ts
        ):  # its wait spans lost events: forgotten, as _lost forgets the waits in progress
            return
        self._queue(target, ts, 1)
        self.queues[target][1] += ts - since  # it waited here from its waking: the integral's share up to now
        self.wait_cpu[pid] = target
        self.wait_since[pid] = since
        self.moves.pop(pid, None)

    def queued_on(self, pid: int, since: TraceEvent) -> int:
        """The CPU task ``pid``'s pending wakeup (``since``) queued it on: its sched_wakeup's target, else the
        target_cpu ``since`` printed, else ``since``'s CPU."""
        target = self.wake_cpu.get(pid, -1)
        if target >= 0:
            return target
        return since.next_pid if since.next_pid >= 0 else since.cpu

    def _irq(self, ev: TraceEvent, ts: float, cpu: int, kind: int) -> None:
        stack = self.irq_stack.get(cpu)
        if kind == IRQ_ENTRY:
            if stack is None:
                stack = self.irq_stack[cpu] = []
            stack.append(ev)
            self.irq_names[ev.pid] = ev.state
            return
        if not stack or stack[-1].pid != ev.pid:
            return
        entry = stack.pop()
        start = self.clip(entry.ts, ts, self.cpu_barrier(cpu))
        if start is None:
            return
        fig = self.irqs.get(ev.pid)
        if fig is None:
            fig = self.irqs[ev.pid] = Accumulator()
        fig.add(start, ts, cpu, entry, ev)
        self.irq_time[cpu] = self.irq_time.get(cpu, 0.0) + (ts - start)
        if self.digest is not None:
            self.digest.add(cpu, start, ts, 0, rules.BUCKET_IRQ)

    def _softirq(self, ev: TraceEvent, ts: float, cpu: int, kind: int) -> None:
        vec = ev.pid
        if kind == SOFTIRQ_RAISE:
            self.raised.setdefault((cpu, vec), ev)
            return
        if kind == SOFTIRQ_ENTRY:
            self.soft_cur[cpu] = ev
            raised = self.raised.pop((cpu, vec), None)
            if raised is None:
                return
            start = self.clip(raised.ts, ts, self.cpu_barrier(cpu))
            if start is None:
                return
            fig = self.soft_raise.get(vec)
            if fig is None:
                fig = self.soft_raise[vec] = Accumulator()
            if fig.add(start, ts, cpu, raised, ev):
                behind, unseen, (n, rest) = self.behind(((cpu, start, ts),), -1)
                span = span_of(start, ts, cpu, raised, ev)
                self.soft_raise_wait[vec] = Wait(span, behind, "softirq_raise", unseen, more=n, more_seconds=rest)
            return
        entry = self.soft_cur.pop(cpu, None)
        if entry is None or entry.pid != vec:
            # An exit whose entry the trace does not hold (its first moments, lost events) ran the vector: the raise
            # pending before it was served, and the next entry ends a later raise, not that one.
            self.raised.pop((cpu, vec), None)
            return
        start = self.clip(entry.ts, ts, self.cpu_barrier(cpu))
        if start is None:
            return
        fig = self.softirqs.get(vec)
        if fig is None:
            fig = self.softirqs[vec] = Accumulator()
        fig.add(start, ts, cpu, entry, ev)
        self.softirq_time[cpu] = self.softirq_time.get(cpu, 0.0) + (ts - start)
        if self.digest is not None:
            self.digest.add(cpu, start, ts, 0, rules.BUCKET_SOFTIRQ)

    def _work(self, ev: TraceEvent, ts: float, cpu: int, kind: int) -> None:
        key = (cpu, ev.comm)
        if kind == WORK_START:
            self.work_cur[key] = ev
            return
        begin = self.work_cur.pop(key, None)
        if begin is None:
            return
        start = self.clip(begin.ts, ts)
        if start is None:
            return
        fig = self.works.get(begin.state)
        if fig is None:
            fig = self.works[begin.state] = Accumulator()
        fig.add(start, ts, cpu, begin, ev)

    def _offtime(self, ev: TraceEvent, ts: float, cpu: int, kind: int) -> None:
        base = off_base(kind)
        if base not in self.off:
            self.off[base] = Accumulator()
            self.off_worst[base] = []
        if opens_offtime(kind):
            self.off_start.setdefault((base, cpu), ev)
            return
        begin = self.off_start.pop((base, cpu), None)
        if begin is None:
            return
        start = self.clip(begin.ts, ts, self.cpu_barrier(cpu))
        if start is None:
            return
        self.off[base].add(start, ts, cpu, begin, ev)
        if keeps_offtime(ts - start, self.thresholds.offtime):
            worst = self.off_worst[base]
            worst.append(off_span_of(start, ts, cpu, begin, ev))
            if len(worst) > rules.OFF_KEEP:
                worst.sort(key=lambda s: -s.duration)
                del worst[rules.OFF_CUT :]

    def _exit(self, ev: TraceEvent, ts: float) -> None:
        """A task exits: it no longer waits, is woken, sleeps or is preempted."""
        pid = ev.pid
        self._unqueue(pid, ts)
        self.pending_wake.pop(pid, None)
        self.wake_cpu.pop(pid, None)
        self.blocked.pop(pid, None)
        self.preempted.pop(pid, None)

    def _migrate(self, ev: TraceEvent, ts: float) -> None:
        """A sched_migrate_task read up to the window's end: counted (TraceAnalysis.migrations).  A task waiting to
        run (woken or preempted) that it moves waits on its dest_cpu from ``ts``: the CPU it left is charged with
        the wait so far (:meth:`_charge`, one wait with the parts to come), the waiting-task integrals move with it.
        A task not waiting (asleep, running; the migration a wakeup's CPU choice makes before it queues the task,
        once sched_wakeup places the waits) changes nothing here."""
        self.migrations += 1
        pid, dest = ev.pid, ev.next_pid
        cpu = self.wait_cpu.get(pid, -1)
        if cpu < 0 or dest < 0 or dest == cpu or pid == 0:
            return
        since = self.wait_since[pid]
        self._queue(cpu, ts, -1)
        self._queue(dest, ts, 1)
        self.wait_cpu[pid] = dest
        self.wait_since[pid] = ts
        hist = self.moves.setdefault(pid, [])
        if len(hist) <= rules.MOVES:
            hist.append((ev, cpu, dest))
        self._charge(pid, cpu, since, ts, self.wait_first.setdefault(pid, since))

    # -- result --------------------------------------------------------------------------------

    def result(self, counts: ParseCounts) -> TraceAnalysis:
        """Freeze everything into a :class:`TraceAnalysis`; open runs end at their CPU's last event."""
        return freeze_analysis(self, counts)

    def summary(self, counts: ParseCounts) -> ParseSummary:
        """The reader's counts as a typed record."""
        return parse_summary(counts)

    def comm(self, pid: int) -> str:
        """The name of a pid as last seen (``<idle>`` for 0)."""
        if pid == 0:
            return "<idle>"
        task = self.tasks.get(pid)
        return task.comm.decode("utf-8", "replace") if task else f"pid {pid}"


class BatchAnalyzer:
    """SchedAnalyzer behind :class:`~detectors.sched.engine.FastAnalyzer`'s surface: fed batches, nothing compiled.

    The path for small inputs: no compile to wait for (numba is not even
    imported), and results equal to FastAnalyzer's, since FastAnalyzer is tested
    equal to SchedAnalyzer on the same events (tests/detectors/sched/test_engine.py,
    and tests/forensics/test_trace_paths.py on every bundled trace, end to end).
    """

    def __init__(self, reference: SchedAnalyzer) -> None:
        self.reference = reference

    @property
    def done(self) -> bool:
        """True once nothing more is to be read (SchedAnalyzer.done)."""
        return self.reference.done

    @property
    def past(self) -> bool:
        """True once an event after the window was seen (SchedAnalyzer.past)."""
        return self.reference.past

    @property
    def timeline(self) -> list[tuple[int, float, float, int]] | None:
        """The runs kept for the PNG timeline (None unless asked for)."""
        return self.reference.timeline

    def feed(self, batch: EventBatch) -> None:
        """Process a batch (trace order): its records, one by one, through SchedAnalyzer; past the window, only
        each CPU's next event, over the columns (detectors.sched.window: the records are not made)."""
        ref = self.reference
        if ref.past:
            ref.done, latest = scan_after(batch, 0, ref.last, ref.after, ref.kinds)
            ref.end_ts = max(ref.end_ts, latest)
            return
        event = batch.event
        self.reference.feed([event(i) for i in range(len(batch))])

    def result(self, counts: ParseCounts) -> TraceAnalysis:
        """SchedAnalyzer's result."""
        with gc_paused():
            return self.reference.result(counts)

    def summary(self, counts: ParseCounts) -> ParseSummary:
        """The reader's counts as a typed record."""
        return self.reference.summary(counts)
