"""Turning the analyzer's accumulated state into the typed results of :mod:`forensics.types.sched`.

Freezing reads the analyzer and changes nothing in it: the runs still open at
the end (a task current on a CPU) are closed in copies, so ``result()`` may be
called again (after more events, or twice) without counting them twice.
"""

from __future__ import annotations

import math
from typing import Protocol

from detectors.sched import rules
from detectors.sched.buckets import BucketDigest
from detectors.sched.sanity import ClockMonitor
from detectors.sched.state import (
    Accumulator,
    MoveHist,
    TaskState,
    VictimTally,
    event_ref,
    moves_of,
    task_wait,
    wait_parts,
)
from forensics.model import NotAvailable
from forensics.types.sched import (
    OPEN_RECORDING,
    OPEN_WINDOW,
    Blame,
    Coverage,
    CpuStats,
    EventRef,
    IntervalStats,
    IrqStats,
    LossGap,
    OffStats,
    ParseSummary,
    Preemptor,
    RecorderStop,
    RunningAtEnd,
    SoftirqStats,
    Span,
    StateTime,
    TaskStats,
    Thresholds,
    TraceAnalysis,
    Victim,
    Wait,
    WorkStats,
)
from forensics.types.trace import PRIO_UNKNOWN, ParseCounts, TraceEvent


class SchedAnalyzer(Protocol):
    """What freezing reads of :class:`detectors.sched.analyzer.SchedAnalyzer` (which imports this module)."""

    thresholds: Thresholds
    w0: float
    w1: float
    digest: BucketDigest | None
    tasks: dict[int, TaskState]
    cur: dict[int, tuple[int, float, TraceEvent, float]]
    pending_wake: dict[int, TraceEvent]
    preempted: dict[int, TraceEvent]
    queues: dict[int, list[float]]
    wait_cpu: dict[int, int]
    wait_since: dict[int, float]
    wait_first: dict[int, float]
    moves: dict[int, MoveHist]
    first: dict[int, TraceEvent]
    first_in: dict[int, TraceEvent]
    last: dict[int, TraceEvent]
    past: bool
    after: dict[int, TraceEvent]
    end_ts: float
    busy: dict[int, float]
    idle: dict[int, float]
    switches: dict[int, int]
    switched: set[int]
    irq_time: dict[int, float]
    softirq_time: dict[int, float]
    irqs: dict[int, Accumulator]
    irq_names: dict[int, bytes]
    softirqs: dict[int, Accumulator]
    soft_raise: dict[int, Accumulator]
    soft_raise_wait: dict[int, Wait]
    works: dict[bytes, Accumulator]
    off: dict[int, Accumulator]
    off_worst: dict[int, list[Span]]
    wake_sources: dict[int, int]
    seen_waking: bool
    wakeup_placed: bool
    migrations: int
    kinds: set[int]
    lost_markers: int
    lost_events: int
    first_ts: float
    clock: ClockMonitor

    def queued_on(self, pid: int, since: TraceEvent) -> int: ...

    def shares(self, victim: int, cpu: int, t0: float, t1: float) -> dict[int, float]: ...

    def behind(
        self, parts: tuple[tuple[int, float, float], ...], victim: int, disjoint: bool = True
    ) -> tuple[tuple[Blame, ...], float, tuple[int, float]]: ...

    def clip(self, start: float, end: float) -> float | None: ...

    def comm(self, pid: int) -> str: ...


def _window_end(an: SchedAnalyzer, cpu: int) -> TraceEvent | None:
    """The CPU's first event after the window (--window, --around) when it shows that what ran there at the
    window's end still ran then: an event, not a lost-event marker, and later than the window's end."""
    ev = an.after.get(cpu)
    return ev if ev is not None and ev.kind != rules.LOST and ev.ts > an.w1 else None


Run = tuple[int, float, float, int]  # (cpu, start, end, pid): a run of the timeline


#: The CPUs running a task to the trace's end (_to_end): each with where its run ends (the trace's last time) and the
#: event cited there (the trace's last event, of any CPU).
ToEnd = dict[int, tuple[float, TraceEvent]]


def _close_open_runs(
    an: SchedAnalyzer, last: dict[int, TraceEvent], to_end: ToEnd
) -> tuple[dict[int, TaskState], dict[int, float], dict[int, float], tuple[Run, ...]]:
    """The tasks, busy and idle times with the open runs ended, in copies: at the window's end when the CPU
    reports after it (the run, idle ones too, is cited up to the CPU's first event after the window, and the
    delay it caused is counted as at a switch), else at the CPU's last event, of any kind (``last``: _reported;
    a run still open at the end of the trace; idle and delay not counted), or at the trace's end on a CPU that ran
    its task to the end (``to_end``: _to_end; the delay counted as at the window's end).  With them, the runs closed
    at the window's end (for the digest and the timeline, as SchedAnalyzer._run_ends gives a run to them).

    The arithmetic is the one SchedAnalyzer._switch does for a run (the same additions in the
    same order), on copies of what it changes: the analyzer itself is left as it was.
    """
    tasks = dict(an.tasks)
    busy = dict(an.busy)
    idle = dict(an.idle)
    closed: list[Run] = []
    for cpu, (pid, since, ev, area) in list(an.cur.items()):
        end_ev = _window_end(an, cpu)
        end = an.w1
        delay = 0.0
        at_window_end = end_ev is not None
        if end_ev is None and cpu in to_end:
            end, end_ev = to_end[cpu]
        if end_ev is not None:  # the delay it caused to the tasks waiting on the CPU meanwhile (_run_ends')
            q = an.queues.get(cpu)
            delay = (0.0 if q is None else (q[1] + q[0] * (end - q[2]) if end > q[2] else q[1])) - area
        else:
            end_ev = last.get(cpu)
            if pid == 0 or end_ev is None:
                continue
            end = end_ev.ts
        if end <= since:
            continue
        start = an.clip(since, end)
        if start is None:
            continue
        if at_window_end:
            closed.append((cpu, start, end, pid))
        if pid == 0:
            idle[cpu] = idle.get(cpu, 0.0) + (end - start)
            continue
        task = tasks[pid]
        if task is an.tasks[pid]:
            task = tasks[pid] = task.copy()
        task.runtime += end - start
        busy[cpu] = busy.get(cpu, 0.0) + (end - start)
        task.runs.open += 1  # still running where it is closed: its total is a lower bound (IntervalStats.open)
        if task.runs.add(start, end, cpu, ev, end_ev):
            # Still running there: a lower bound (the window's end, or the trace's or its CPU's last event)
            window = at_window_end or (an.w0 > -math.inf and cpu not in to_end)
            task.runs.worst_open = OPEN_WINDOW if window else OPEN_RECORDING
        if delay > 0:
            task.delay_caused += delay
        if rules.is_hog(end - start, an.thresholds.hog):
            task.hog_runs += 1
    return tasks, busy, idle, tuple(closed)


def _close_open_waits(an: SchedAnalyzer, tasks: dict[int, TaskState], to_end: ToEnd) -> None:
    """With a window, the waits to run still open at its end (woken or preempted, not switched in since) ended
    there as a run is, in copies of the tasks: clipped to the window and counted with the wakeup or preemption
    waits, cited up to the first event after the window of the CPU its queue is on then (a wait is not counted
    when that CPU has none: how long it lasted is not known).  That CPU is where the sched_migrate_task events read
    moved it (SchedAnalyzer.moves), else where it was queued.  Its part there is charged to who ran there as at a
    switch-in (its earlier parts were, at each move: one wait of the victim's), and its worst wait names who ran on
    each CPU while it waited there, the moves cited, as a wait that ends in the window (state.wait_parts).
    A task that waited all through a window had an all-zero row.  The same for a wait queued on a CPU that ran its
    task to the trace's end (``to_end``: _to_end), with or without a window: ended at the trace's end, a lower bound
    (ue21 #2: rt_cut.dat's python3, queued behind rthog on CPU1 from 32800.062878, was in no figure)."""
    if an.w0 == -math.inf and not to_end:
        return
    fresh: set[int] = set()  # the tasks whose victims were copied here
    waits = sorted(an.pending_wake.items()) + sorted(
        (pid, ev) for pid, ev in an.preempted.items() if pid not in an.pending_wake
    )
    running = {cur[0] for cur in an.cur.values()}  # woken while it ran: no wait
    for pid, since in waits:
        if pid in running:
            continue
        preempted = pid not in an.pending_wake
        queued = since.cpu if preempted else an.queued_on(pid, since)  # where it was queued
        queue = an.wait_cpu.get(pid, -1)  # where its queue is (-1: none known, as after lost events)
        hist = an.moves.get(pid) if queue >= 0 else None  # (reset where a wait is queued: this wait's)
        cpu = queue if hist else queued  # where it waits at the window's end
        end_ev = _window_end(an, cpu) if an.w0 > -math.inf else None
        w1 = an.w1
        open_at = OPEN_WINDOW
        if end_ev is None and cpu in to_end:
            w1, end_ev = to_end[cpu]
            open_at = OPEN_RECORDING
        task = tasks.get(pid)
        start = an.clip(since.ts, w1)
        if end_ev is None or task is None or start is None or not w1 > start or cpu not in an.switched:
            continue  # cpu not switched: whether it was switched in there could not be seen
        if task is an.tasks.get(pid):
            task = tasks[pid] = task.copy()
        if preempted:
            fig = task.preempt_wait = task.preempt_wait.copy()
        else:
            fig = task.wakeup = task.wakeup.copy()
        waited = w1 - start
        fig.count += 1
        fig.open += 1  # counted to where it was still open: the task's total and mean are lower bounds
        fig.total += waited
        # Its part on that CPU, charged as at a switch-in (SchedAnalyzer._charge), one wait with the parts its moves
        # charged (their key: the wait's start).
        t0 = max(an.wait_since.get(pid, start), start) if hist else start
        key = an.wait_first.get(pid, math.nan) if hist else math.nan
        for culprit_pid, seconds in an.shares(pid, cpu, t0, w1).items():
            culprit = tasks.get(culprit_pid)
            if culprit is None:
                continue
            if culprit_pid not in fresh:
                if culprit is an.tasks.get(culprit_pid):
                    culprit = tasks[culprit_pid] = culprit.copy()
                culprit.victims = {p: v.copy() for p, v in culprit.victims.items()}
                fresh.add(culprit_pid)
            tally = culprit.victims.get(pid)
            if tally is None:
                tally = culprit.victims[pid] = VictimTally()
            tally.add(seconds, key, open_at)
        if waited <= fig.worst:
            continue
        fig.set_worst(start, w1, cpu, since, end_ev)
        parts, disjoint, moved = wait_parts(hist, queued, cpu, cpu, start, w1)
        behind, unseen, more = an.behind(parts, pid, disjoint)
        moves = moves_of(hist) if moved != rules.MOVED_NO else ()
        source = "preemption" if preempted else rules.WAKE_SOURCES[since.kind]
        wait = task_wait(
            pid, start, w1, cpu, since, end_ev, behind, source, unseen, queued, rules.MOVED[moved], moves, more
        )
        # Still runnable there, not switched in: its length is a lower bound (until 2026-12-07 a wait open at a
        # window's end read "waited 500.000 ms ... switched in on CPU1 500.000 ms later", ue21 #1's window).
        wait = wait._replace(open_at=open_at)
        if preempted:
            task.worst_preempt_wait = wait
        else:
            task.worst_wakeup = wait


def _reported(an: SchedAnalyzer, counts: ParseCounts) -> tuple[dict[int, TraceEvent], dict[int, TraceEvent]]:
    """Each CPU's first and last event of any kind: analysed, or skipped by the analyses (the reader notes those:
    ParseCounts.skipped_first/last).  When a CPU reported is told by all its events: by the analysed ones only, a
    CPU busy with sched_stat_runtime events to the end was said to stop reporting 24 ms before it (and every
    finding's confidence lowered for it), the window began 8 ms after the first event, and a run still open
    at the end was closed at the CPU's last analysed event (lttng-sessiond's 34.645 ms for 34.728 on
    bug446190).  With a window (--window, --around), the analysed events alone: the reading stops past it, and
    what a CPU did there is told by them (SchedAnalyzer.after)."""
    if an.w0 > -math.inf or an.w1 < math.inf:
        return an.first, an.last
    first, last = dict(an.first), dict(an.last)
    for cpu, ev in counts.skipped_first.items():
        known = first.get(cpu)
        if known is None or ev.ts < known.ts:
            first[cpu] = ev
    for cpu, ev in counts.skipped_last.items():
        known = last.get(cpu)
        if known is None or ev.ts > known.ts:
            last[cpu] = ev
    return first, last


def freeze_analysis(an: SchedAnalyzer, counts: ParseCounts) -> TraceAnalysis:
    """Freeze the analyzer's state into a :class:`TraceAnalysis`; open runs end at their CPU's last event."""
    first, last = _reported(an, counts)
    clock = an.clock.freeze(len(an.first))
    to_end = _to_end(an, counts, last, clock.reversed())
    tasks, busy, idle, closed = _close_open_runs(an, last, to_end)
    _close_open_waits(an, tasks, to_end)
    digest = an.digest.with_runs(tuple(r for r in closed if r[3])) if an.digest is not None and closed else an.digest
    return TraceAnalysis(
        window=_window(an, first, last),
        latency_source=_latency_source(an),
        tasks=tuple(
            _freeze_task(an, pid, t)
            for pid, t in sorted(tasks.items(), key=lambda kv: -kv[1].runtime)
            if an.w0 == -math.inf or _active(an, pid, t)
        ),
        cpus=_cpu_stats(an, busy, idle, first, last),
        irqs=tuple(
            IrqStats(irq, an.irq_names.get(irq, b"").decode("utf-8", "replace"), fig.freeze())
            for irq, fig in sorted(an.irqs.items())
        ),
        softirqs=_softirq_stats(an),
        works=tuple(
            WorkStats(fn.decode("utf-8", "replace"), fig.freeze())
            for fn, fig in sorted(an.works.items(), key=lambda kv: -kv[1].worst)
        ),
        offtimes=_offtimes(an, counts),
        coverage=_coverage(
            an, counts, first, last, clock.reversed(), _unattributed(an, busy, idle, first, last), clock.losses, to_end
        ),
        buckets=digest.freeze(an.comm) if digest is not None else (),
        bucket_seconds=digest.size if digest is not None else None,
        thresholds=an.thresholds,
        clock=clock,
        window_runs=closed,
        events_read=_events_read(an),
        kinds_read=tuple(sorted(an.kinds - {rules.LOST})) if an.w0 > -math.inf else (),
        by_line=counts.layout != "ctf",
        migrations=an.migrations,
        wakeup_placed=an.wakeup_placed,
    )


def _to_end(an: SchedAnalyzer, counts: ParseCounts, last: dict[int, TraceEvent], reversed_trace: bool) -> ToEnd:
    """The CPUs that ran a task to the trace's end: silent more than STOP_GAP before the trace's last event, their
    last sched_switch put a task on them (not idle, not the recorder: rules.RECORDERS), no switch after, and no event
    was lost or overwritten (a marker, entries-written above entries-in-buffer: a buffer that filled says so).  A
    task that keeps its CPU writes no sched event (a CPU-bound loop, an RT task spinning), so that silence is it
    running, not a buffer that stopped: ue21 #2, rt_cut.dat, rthog switched in on CPU1 at 32800.289941 and spinning
    when tracing stopped, was "CPU1 stops reporting ... Its buffer may have filled" and its 572 ms and the 799 ms
    wait behind it were not reported.  With a window, only when it reaches the trace's end (no CPU reports past it).
    Each CPU with the trace's end and its last event (cited as where the run and the waits there end)."""
    if reversed_trace or counts.overwritten or an.lost_markers or not last:
        return {}
    end_ev = max((*last.values(), *an.after.values()), key=lambda e: e.ts)
    trace_end = max(end_ev.ts, an.end_ts)
    if an.w1 < trace_end or an.w0 >= trace_end:
        return {}
    out: ToEnd = {}
    for cpu, (pid, since, _ev, _area) in an.cur.items():
        ev = last.get(cpu)
        # (a CPU whose stream file is cut is silent after the cut for events not read: not known to run on)
        if pid == 0 or ev is None or cpu in an.after or cpu in counts.cut_cpus or ev.ts >= trace_end - rules.STOP_GAP:
            continue
        if _recorder_at_end(an, cpu) is None and not _seen_off(an, cpu, pid, since):
            out[cpu] = (trace_end, end_ev)
    return out


def _seen_off(an: SchedAnalyzer, cpu: int, pid: int, since: float) -> bool:
    """Whether task ``pid``, switched in on ``cpu`` at ``since``, is seen off it after: woken or preempted since
    (a running task is not woken: try_to_wake_up traces sched_waking only for a task not running), or switched in on
    another CPU later.  Then ``cpu``'s silence is not it running: kf.ftrace.txt with CPU0's second half cut out left
    qemu-system-x86 (pid 15566) current on CPU0, woken from CPU1 1.3 ms after CPU0's last event."""
    woken = an.pending_wake.get(pid)
    preempted = an.preempted.get(pid)
    if (woken is not None and woken.ts > since) or (preempted is not None and preempted.ts > since):
        return True
    return any(c != cpu and p == pid and t > since for c, (p, t, _e, _a) in an.cur.items())


def parse_summary(counts: ParseCounts) -> ParseSummary:
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
        tuple((k, v) for k, v in counts.aside.items() if v),
    )


def _window(
    an: SchedAnalyzer, first: dict[int, TraceEvent], last: dict[int, TraceEvent]
) -> tuple[float, float] | NotAvailable:
    """The window asked for (--window, --around; what the trace does not cover of it is a coverage note), else the
    first and last events, of any kind (_reported: the span the "examined" line gives to all the events it counts)."""
    if not an.last:
        return NotAvailable("the trace has no scheduling, IRQ or workqueue events")
    if an.w0 > -math.inf:
        return (an.w0, an.w1)
    start = max(min(an.first_ts, *(e.ts for e in first.values())), an.w0)
    end = min(max(e.ts for e in last.values()), an.w1)
    return (start, end)


def _events_read(an: SchedAnalyzer) -> tuple[float, float] | None:
    """The first and the latest time of the events read (past a window's end only each CPU's next one is read: a
    window before the trace's first event read only that one); None when no event was read."""
    if an.last:
        return (an.first_ts, max(*(e.ts for e in an.last.values()), an.end_ts))
    return (an.end_ts, an.end_ts) if an.end_ts > -math.inf else None


def _active(an: SchedAnalyzer, pid: int, t: TaskState) -> bool:
    """Whether a task did anything in the window (--window, --around): ran, waited to run (a wait open at its end
    is counted when its length can be told: _close_open_waits), slept there, was preempted or delayed others
    there.  The events before the window are read for the state they set: a task seen only there is not in the
    window's table, nor one whose wait at its end cannot be told (it had an all-zero row)."""
    return bool(
        t.runtime
        or t.runs.count
        or t.wakeup.count
        or t.preempt_wait.count
        or t.blocked
        or t.preempted_by
        or t.throttled_for
        or t.delay_caused
        or t.victims
    )


def _latency_source(an: SchedAnalyzer) -> str | NotAvailable:
    if not an.wake_sources:
        return NotAvailable("the trace has no sched_waking or sched_wakeup events")
    if an.seen_waking:
        return "sched_waking"
    return rules.WAKE_SOURCES[rules.WAKEUP if rules.WAKEUP in an.wake_sources else rules.WAKEUP_NEW]


def _run_prio(pid: int, t: TaskState) -> int:
    """The task's prio on the switch-in that began its longest run (PRIO_UNKNOWN: none, or it printed none)."""
    begin = t.runs.worst_begin
    if begin is None or begin.kind != rules.SWITCH or begin.next_pid != pid:
        return PRIO_UNKNOWN
    return begin.next_prio


def _preemptors(an: SchedAnalyzer, times: dict[int, int]) -> tuple[Preemptor, ...]:
    """The tasks switched in for it, most often first (the first rules.PREEMPTORS)."""
    return tuple(
        Preemptor(p, an.comm(p), n) for p, n in sorted(times.items(), key=lambda kv: -kv[1])[: rules.PREEMPTORS]
    )


def _freeze_task(an: SchedAnalyzer, pid: int, t: TaskState) -> TaskStats:
    victims = sorted(t.victims.items(), key=lambda kv: (-kv[1].seconds, kv[0]))
    return TaskStats(
        pid=pid,
        comm=t.comm.decode("utf-8", "replace"),
        prio=t.prio,
        run_prio=_run_prio(pid, t),
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
        preempted_by=_preemptors(an, t.preempted_by),
        throttled_for=_preemptors(an, t.throttled_for),
        delay_caused=t.delay_caused,
        victims=tuple(
            Victim(p, an.comm(p), v.seconds, v.waits, v.worst, v.open_at) for p, v in victims[: rules.PREEMPTORS]
        ),
        wakeups_unknown=t.unseen_wakes,
        wakeup_unknown_why=_unseen_why(an, t.unseen_cpu) if t.unseen_wakes else None,
        more_victims=len(victims[rules.PREEMPTORS :]),
        more_victims_seconds=sum(v.seconds for _p, v in victims[rules.PREEMPTORS :]),
        more_victims_open=next((v.open_at for _p, v in victims[rules.PREEMPTORS :] if v.open_at), ""),
    )


def _unseen_why(an: SchedAnalyzer, cpu: int) -> NotAvailable:
    """Why a task's wakeups onto ``cpu`` are not counted: its switch-in there could not be seen."""
    if cpu not in an.switched and an.w0 == -math.inf:
        return NotAvailable(f"no sched_switch on CPU{cpu} in the trace")
    return NotAvailable(f"no sched_switch on CPU{cpu} before the task was switched in elsewhere")


def _cpu_stats(
    an: SchedAnalyzer,
    busy: dict[int, float],
    idle: dict[int, float],
    first: dict[int, TraceEvent],
    last: dict[int, TraceEvent],
) -> tuple[CpuStats, ...]:
    """Per CPU: its first and last event (of any kind: _reported), busy, idle, IRQ and softirq time, switches."""
    windowed = an.w0 > -math.inf
    none = NotAvailable("no event in the window")  # a CPU quiet all through it: its figures are what was running
    return tuple(
        CpuStats(
            cpu,
            # in the window (--window, --around), as the other figures
            none if windowed and cpu not in an.first_in else an.first_in.get(cpu, first[cpu]).ts,
            none if windowed and cpu not in an.first_in else last[cpu].ts,
            *_busy_idle(an, cpu, busy, idle),
            an.irq_time.get(cpu, 0.0),
            an.softirq_time.get(cpu, 0.0),
            an.switches.get(cpu, 0),
        )
        for cpu in sorted(last)
    )


def _busy_idle(
    an: SchedAnalyzer, cpu: int, busy: dict[int, float], idle: dict[int, float]
) -> tuple[float | NotAvailable, float | NotAvailable]:
    """A CPU's busy and idle time; unknown on a CPU with no sched_switch in the trace, or in a window with none
    before or in it (nothing known running there at its end, no switch in it): what ran there is not known, so
    neither is how long (an RT task spinning on a nohz_full CPU never switches: "busy 0.000 ms" would hide it)."""
    windowed = an.w0 > -math.inf
    if (windowed and cpu in an.cur) or an.switches.get(cpu, 0):
        return busy.get(cpu, 0.0), idle.get(cpu, 0.0)
    lost = " since events were lost" if an.lost_markers else ""
    unknown = NotAvailable(
        f"no sched_switch on CPU{cpu} {'before or in the window' if windowed else 'in the trace'}{lost}"
    )
    return unknown, unknown


def _softirq_stats(an: SchedAnalyzer) -> tuple[SoftirqStats, ...]:
    out = []
    for vec in sorted(set(an.softirqs) | set(an.soft_raise)):
        name = rules.SOFTIRQ_NAMES[vec] if 0 <= vec < len(rules.SOFTIRQ_NAMES) else f"vec {vec}"
        durations = an.softirqs.get(vec, Accumulator()).freeze()
        latency = an.soft_raise.get(vec, Accumulator()).freeze()
        out.append(SoftirqStats(vec, name, durations, latency, an.soft_raise_wait.get(vec)))
    return tuple(out)


def _offtimes(an: SchedAnalyzer, counts: ParseCounts) -> tuple[OffStats, ...]:
    out = []
    for base, what, tracer in (
        (rules.IRQ_DISABLE, "irqs-off", "irqsoff"),
        (rules.PREEMPT_DISABLE, "preempt-off", "preemptoff"),
    ):
        acc = an.off.get(base)
        if acc is not None:
            worst = tuple(sorted(an.off_worst[base], key=lambda s: -s.duration)[: rules.OFF_REPORTED])
            out.append(OffStats(what, "preemptirq events", acc.freeze(), worst))
        elif counts.tracer in (tracer, "preemptirqsoff") and counts.latency_headers:
            spans = tuple(_tracer_span(n, text, counts.latency_callers) for n, text in counts.latency_headers)
            worst = tuple(sorted(spans, key=lambda s: -s.duration)[: rules.OFF_REPORTED])
            fig = IntervalStats(len(spans), sum(s.duration for s in spans), worst[0])
            out.append(OffStats(what, f"{counts.tracer} tracer (its maximum only)", fig, worst))
        else:
            why = "the trace has no preemptirq events and no irqsoff/preemptoff tracer output"
            out.append(OffStats(what, NotAvailable(why), NotAvailable(why), ()))
    return tuple(out)


def _coverage(
    an: SchedAnalyzer,
    counts: ParseCounts,
    first: dict[int, TraceEvent],
    last: dict[int, TraceEvent],
    reversed_trace: bool = False,
    unattributed: tuple[str, ...] = (),
    losses: tuple[LossGap, ...] = (),
    to_end: ToEnd | None = None,
) -> Coverage:
    """Which CPUs are covered when, by their events of any kind (``first``, ``last``: _reported);
    ``reversed_trace``: first and last events are swapped, say nothing of stops; ``to_end``: the CPUs covered to the
    end by the task they ran (_to_end)."""
    to_end = to_end or {}
    declared: int | NotAvailable = (
        counts.cpus_declared if counts.cpus_declared is not None else NotAvailable("the trace does not say")
    )
    seen = tuple(sorted(first))
    unknown = "" if an.lost_markers else counts.loss_unknown
    if not seen:
        na = NotAvailable("no events")
        return Coverage(declared, seen, na, na, an.lost_markers, an.lost_events, "no events", lost_unknown=unknown)
    # A CPU that reports after the window (--window, --around) is covered past it: its first event there.
    reported = [max(last[c].ts, an.after[c].ts) if c in an.after else last[c].ts for c in seen]
    trace_start, trace_end = min(first[c].ts for c in seen), max(*reported, an.end_ts)
    # An LTTng CPU is covered as long as its packets are (Trace Compass draws it so), events or not: an idle
    # NOHZ CPU writes none for seconds, and bug446190's CPU0 and CPU2 were said to "stop reporting" 7.3 and 5 ms
    # before the end, all findings' confidence lowered for it, though their buffers ran to the end, none lost.
    span = counts.packet_span
    starts = [max(min(first[c].ts, span[c][0]) if c in span else first[c].ts, trace_start) for c in seen]
    ends = [min(max(e, span[c][1]) if c in span else e, trace_end) for c, e in zip(seen, reported, strict=True)]
    # A CPU whose last switch was to idle is covered to the end when no buffer lost or overwrote events: a
    # tickless idle CPU writes none until something wakes it (this machine's idle 2 s of sched events: CPU0
    # "stopped reporting" 2.07 ms before the end, every finding's confidence lowered for it).  A buffer that
    # filled would have lost events (lost-event markers, entries-written above entries-in-buffer).
    # (Not a CPU whose stream file is cut: its silence after the cut is events not read, ParseCounts.cut_cpus.)
    if not counts.overwritten and not an.lost_markers:
        ends = [
            trace_end if c not in an.after and c not in counts.cut_cpus and _idle_at_end(an, c) else e
            for c, e in zip(seen, ends, strict=True)
        ]
    # The same for a CPU running a task to the end (_to_end): its silence is that task's run, not a stopped buffer.
    ends = [trace_end if c in to_end else e for c, e in zip(seen, ends, strict=True)]
    running = tuple(
        RunningAtEnd(c, cur[2].next_comm.decode("utf-8", "replace"), cur[0], event_ref(cur[2]), event_ref(last[c]))
        for c in sorted(to_end)
        if (cur := an.cur.get(c)) is not None
    )
    # A recording whose header says nothing was overwritten (entries-in-buffer = entries-written), with as many
    # event lines as its buffer held, and that marks no loss holds every event each CPU wrote since tracing
    # began: a CPU silent at the start or the end wrote none then (a user-mode spinner writes no event between
    # ticks), it was covered.  Its first and last events are not where its buffer began or stopped (review 11
    # #11: q/hog.txt, 65086/65086, "only some CPUs are covered" for a spinner's 1.5 ms without event, and every
    # D-state finding lowered to 0.75).
    # (Without a window only: the reading stops past one, and the event lines read do not tell the file whole.)
    if counts.complete and not an.lost_markers and an.w0 == -math.inf and an.w1 == math.inf:
        starts = [trace_start] * len(seen)
        ends = [trace_end if c not in an.after else e for c, e in zip(seen, ends, strict=True)]
    common_start, common_end = max(starts), min(ends)
    notes = []
    if isinstance(declared, int) and len(seen) < declared:
        missing = sorted(set(range(declared)) - set(seen))
        notes.append(f"no events at all from CPU {', '.join(map(str, missing))} (idle or buffer empty)")
    # With a window (--window, --around): said only when the window begins before every CPU is covered.
    if common_start - trace_start > 1e-3 and common_start > an.w0:
        late = ", ".join(f"CPU{c} from {t:.6f}" for c, t in zip(seen, starts, strict=True) if t > trace_start + 1e-3)
        notes.append(
            f"CPU buffers start at different times ({late}); before {common_start:.6f} only some CPUs are "
            "covered, so cross-CPU figures there are incomplete"
        )
    stopped = (
        ()
        if reversed_trace
        else tuple(
            event_ref(last[c])
            for c, e in zip(seen, ends, strict=True)
            if c not in an.after and e < trace_end - rules.STOP_GAP
        )
    )
    started = (
        ()
        if reversed_trace
        else tuple(event_ref(first[c]) for c, t in zip(seen, starts, strict=True) if t > trace_start + rules.STOP_GAP)
    )
    recorder = tuple(RecorderStop(r.cpu, *who) for r in stopped if (who := _recorder_at_end(an, r.cpu)) is not None)
    if stopped:
        # A text trace's line; an LTTng event is named in the coverage finding's evidence (stream, number, time).
        text = counts.layout != "ctf"
        by = {s.cpu: f", its switch to the recorder {s.comm}" for s in recorder}
        which = ", ".join(
            f"CPU{r.cpu} at {r.ts:.6f}" + (f" (line {r.line_no}{by.get(r.cpu, '')})" if text else by.get(r.cpu, ""))
            for r in stopped
        )
        notes.append(
            f"CPUs stop reporting before the trace ends ({which}); after {min(r.ts for r in stopped):.6f} only "
            "some CPUs are "
            "covered, so figures that span that time may miss what those CPUs did"
        )
    if running:
        text = counts.layout != "ctf"
        which = ", ".join(
            f"CPU{r.cpu} ran {r.comm} (pid {r.pid}) from its switch-in at {r.switch.ts:.6f}"
            + (f" (line {r.switch.line_no})" if text else "")
            + f", silent after {r.last.ts:.6f}"
            for r in running
        )
        notes.append(
            f"{which}: no switch-out and no event lost, so it was still running when the recording stopped (a task "
            "that keeps its CPU writes no sched event); its run and the waits queued behind it are counted to the "
            "trace's end, lower bounds"
        )
    notes += unattributed
    notes += _window_notes(an)
    if counts.shared_buffers:
        names = ", ".join(f"'{b}'" if b else "the top one" for b in counts.shared_buffers)
        notes.append(
            f"{len(counts.shared_buffers)} trace-cmd buffers (record -B: {names}) record the same events "
            f"({', '.join(counts.shared_events)}) and are read as one stream (trace-cmd report merges them, an "
            "instance's lines prefixed with its name): an event both traced is read twice, so runs, switches, "
            "preemptions and waits are cut short or counted twice; read one buffer (trace-cmd extract -B NAME, or "
            "its prefixed lines of trace-cmd report)"
        )
    if counts.overwritten:
        notes.append(
            f"the ring buffer overwrote {counts.overwritten} events before it was read, so the trace starts "
            "after the recording did (per-CPU buffers may start at different times)"
        )
    if an.lost_markers:
        notes.append(
            f"{an.lost_markers} lost-event markers ({an.lost_events} events lost); a wait or sleep in progress when "
            "a marker is read, and a run, handler or softirq in progress on the CPU it names, are not counted (the "
            "totals leave them out), but another wait or sleep that overlaps a loss is (one that began or ended "
            "while a CPU's events were being lost): a task's wait or sleep then may "
            "hold time it ran unseen on that CPU, so the wait and sleep totals (wakeup latency, preemption wait, S "
            "and D time) of the tasks that waited or slept during a loss are not exact"
        )
        by_line = counts.layout != "ctf"
        shown = [g for g in losses if g.before is not None or g.after is not None]
        notes += [
            f"{g.said(by_line)}: a run, handler or softirq of CPU{g.cpu}, or a wait or sleep of any task, that "
            "overlaps that time is unknown (a task may have run there unseen) and not reported as a finding"
            for g in shown[:5]
        ]
        if len(shown) > 5:
            notes.append(f"{len(shown) - 5} more losses")
    if unknown:
        notes.append(f"events lost: unknown ({unknown})")
    return Coverage(
        declared,
        seen,
        common_start,
        common_end,
        an.lost_markers,
        an.lost_events,
        "; ".join(notes),
        stopped,
        started,
        unknown,
        recorder,
        running,
    )


def _recorder_at_end(an: SchedAnalyzer, cpu: int) -> tuple[str, int] | None:
    """The recording tool (its name and pid) when it is the task ``cpu`` last switched to (rules.RECORDERS)."""
    cur = an.cur.get(cpu)
    if cur is None:
        return None
    name = cur[2].next_comm.decode("utf-8", "replace")
    return (name, cur[0]) if name in rules.RECORDERS else None


def _idle_at_end(an: SchedAnalyzer, cpu: int) -> bool:
    """Whether ``cpu``'s last sched_switch switched it to its idle task (pid 0), none after."""
    cur = an.cur.get(cpu)
    return cur is not None and cur[0] == 0


def _unattributed(
    an: SchedAnalyzer,
    busy: dict[int, float],
    idle: dict[int, float],
    first: dict[int, TraceEvent],
    last: dict[int, TraceEvent],
) -> tuple[str, ...]:
    """Each CPU whose busy and idle time leave more than 1% of its span counted as neither.

    A run is counted from the sched_switch that starts it: what ran before a CPU's first switch is not known, and
    where the recording lacks a switch (the next one names a previous task other than the one switched in: seen in
    real recordings, 33 of 468 switches on a 2-vCPU VM's 3 s of ftrace on 2026-12-05) the time between the two is
    given to no task.  Both are left out of every figure, as they should be; said here, since the CPU table's busy
    and idle then do not add up to the CPU's span and the tasks' figures miss that time too.

    A CPU's span is from its first event to its last in a whole trace; in a window (--window, --around), from the
    window's start (or the CPU's first event, when later) to the window's end when the CPU reports after it (its
    open run closed there, _close_open_runs), else to its last event.  Until 2026-12-05 a window's gaps were not
    told: ``--window 797.6:797.78`` of kf.ftrace.txt had CPU1 busy 124.3 ms, idle 0, of 180 ms, unexplained.
    """
    windowed = an.w0 > -math.inf
    parts = []
    for cpu in sorted(last):
        if not (an.switches.get(cpu, 0) or (windowed and cpu in an.cur)):  # busy and idle unknown (_busy_idle)
            continue
        start, end = first[cpu].ts, last[cpu].ts
        if windowed:
            start = max(start, an.w0)
            end = an.w1 if _window_end(an, cpu) is not None else min(end, an.w1)
        span = end - start
        gap = span - busy.get(cpu, 0.0) - idle.get(cpu, 0.0)
        if span > 0 and gap > 0.01 * span:
            parts.append(f"CPU{cpu} {gap * 1e3:.3f} ms of its {span * 1e3:.3f} ms")
    if not parts:
        return ()
    where = "in the window " if windowed else ""
    return (
        f"time {where}counted neither busy nor idle ({', '.join(parts)}): before a CPU's first sched_switch, "
        + ("across lost events, " if an.lost_markers else "")
        + "or between two switches where the recording lacks one (a switch naming a previous task other than the one "
        "switched in); the tasks' figures miss that time too",
    )


def _window_notes(an: SchedAnalyzer) -> list[str]:
    """What the trace does not cover of the window asked for (--window, --around)."""
    if an.w0 == -math.inf:
        return []
    notes = []
    if an.past and not an.first_in:  # inside the trace (events before and after it), none in it
        notes.append(
            "no event falls in the window on any CPU: its figures are each CPU's state at the window's start (the "
            "task running there, or idle) carried through it"
        )
    if an.first_ts > an.w0:
        notes.append(
            f"the trace begins at {an.first_ts:.6f}, {(an.first_ts - an.w0) * 1e3:.3f} ms after the window's start "
            f"{an.w0:.6f}: what happened before it is not known"
        )
    end = max(e.ts for e in an.last.values())
    if not an.past and end < an.w1:
        notes.append(
            f"the trace's analysed events end at {end:.6f}, {(an.w1 - end) * 1e3:.3f} ms before the window's end "
            f"{an.w1:.6f}: what happened after it is not known"
        )
    return notes


def _tracer_span(line_no: int, text: str, callers: list[tuple[int, str]]) -> Span:
    """The result line of an irqsoff/preemptoff tracer: ``# latency: 259 us, #4/4, CPU#2 | ...``, with the
    caller of the first ``=> started at:`` line in ``callers`` after it (the tracer prints it a few lines
    below, before the next result's header)."""
    micros = float(text.split(":", 1)[1].split(maxsplit=1)[0])
    cpu = -1
    if "CPU#" in text:
        digits = text.split("CPU#", 1)[1]
        cpu = int(digits[: len(digits) - len(digits.lstrip("0123456789"))] or -1)
    ref = EventRef(line_no, 0.0, cpu, text)
    caller = next((c for n, c in callers if line_no < n < line_no + _STARTED_AT_WITHIN), "")
    return Span(micros * 1e-6, 0.0, cpu, ref, ref, caller)


#: Lines from a tracer's ``# latency:`` line to its ``=> started at:`` line: four in print_trace_header()
#: (kernel/trace/trace.c); a little room, and still less than the header of the next result.
_STARTED_AT_WITHIN = 8
