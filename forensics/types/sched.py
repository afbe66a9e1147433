"""Typed results of the scheduling analysis (detectors/sched/): per task, CPU, IRQ/softirq/work item, bucket.

All records are NamedTuples (immutable values).  Durations and timestamps are
seconds (floats, the trace's clock); a figure that the trace cannot give is a
:class:`~forensics.model.NotAvailable`, never 0.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import Final, NamedTuple

from forensics.model import NotAvailable
from forensics.types.trace import PRIO_UNKNOWN, StreamCut


class EventRef(NamedTuple):
    """One trace line cited as evidence: its 1-based line number (an LTTng event: its position in the session), time,
    CPU and verbatim text."""

    line_no: int
    ts: float
    cpu: int
    text: str

    def said(self, by_line: bool) -> str:
        """The event in prose: ``line N at T`` in a text trace; ``T`` in an LTTng session (its evidence names it:
        TraceAnalysis.by_line)."""
        return f"line {self.line_no} at {self.ts:.6f}" if by_line else f"{self.ts:.6f}"


class Span(NamedTuple):
    """An interval between two cited events (a run, a handler, a wait, a blocked sleep)."""

    duration: float
    start: float
    cpu: int
    begin: EventRef
    end: EventRef
    # The code site that opened an irqs-off/preempt-off interval, as its reader parsed it: the caller= of an
    # irq_disable/preempt_disable event, the "=> started at:" of a latency tracer.  "" when not known, and for
    # every other kind of span.
    caller: str = ""


class Blame(NamedTuple):
    """Who held the CPU while another task waited: pid, comm and seconds of the wait, and its prio then, as its
    own last event before (the one that names it) printed it: PRIO_UNKNOWN when that event printed none.  A
    verdict on who waited behind whom takes this, not the task's last prio of the whole trace."""

    pid: int
    comm: str
    seconds: float
    prio: int = PRIO_UNKNOWN
    # The CPU it ran on during the wait (-1: not told, the wait's own).  A wait queued on one CPU and switched in
    # on another names what ran on each (Wait.moved).
    cpu: int = -1


class Victim(NamedTuple):
    """A task that waited for a CPU while another task ran there: in all, in how many of its waits, and the most
    of one wait.  Each second a task waits to run on a CPU is charged to the task running there then, so a
    task's victims' seconds add up to the delay it caused (TaskStats.delay_caused)."""

    pid: int
    comm: str
    seconds: float  # waited in all while the task ran
    waits: int  # of its waits (wakeup or preemption) during which the task ran
    worst: float  # the most seconds of one such wait
    # Where one of those waits was still open (Wait.open_at: OPEN_WINDOW, OPEN_RECORDING), counted up to there; ""
    # when all ended in a switch-in.  Then ``seconds`` and ``worst`` are lower bounds (the open wait went on, and
    # may be longer than the longest that ended): rt_cut.dat's python3 "799.519 ms in 2 wait(s), at most 799.264 ms
    # in one", its 799.264 ms wait still open when the recording stopped, was said as complete until 2026-12-07.
    open_at: str = ""

    @property
    def lower_bound(self) -> bool:
        """Whether ``seconds`` and ``worst`` are lower bounds: a wait counted in them was still open."""
        return bool(self.open_at)


class Move(NamedTuple):
    """A sched_migrate_task that moved a waiting task's queue from one CPU to another, cited."""

    ts: float
    from_cpu: int  # the CPU it waited on until then
    to_cpu: int  # the CPU it waited on from then (the event's dest_cpu)
    ref: EventRef


class Wait(NamedTuple):
    """A wait to get on a CPU (wakeup or preemption), and who ran meanwhile (most time first)."""

    span: Span
    behind: tuple[Blame, ...]
    source: str  # the event that started the wait: sched_waking, sched_wakeup, sched_wakeup_new, preemption
    # Seconds at the wait's start whose runs are not known: no longer kept (older than the CPU's runs of its last
    # rules.RECENT_SECONDS, past rules.RECENT_RUNS of them, or past rules.RECENT_MAX), or before the CPU's first
    # sched_switch: ``behind`` names who ran in the rest only.
    unseen: float = 0.0
    # The waiter's kernel prio as the trace shows it at this wait, and the line it was read from: the switch-in
    # (next_prio) that ends it, else the event that began it (sched_waking/wakeup prio=, a preemption's
    # prev_prio).  A task's class can change (sched_setscheduler after fork, PI boosting): the promise a wait
    # is judged against is its class then, not the class the task ends the trace with.  None: not a task's wait.
    prio: int | None = None
    prio_ref: EventRef | None = None
    # The CPU the wait was queued on when it began (the wakeup's target CPU, the CPU a preempted task left), -1
    # when not told.  ``moved``: "" when it ran there; MOVED_MIGRATED when sched_migrate_task events moved it
    # (``moves``, in order) and it ran where the last one put it: ``behind`` names who ran on each CPU while it
    # waited there (Blame.cpu); MOVED_UNKNOWN when it was switched in on another CPU (span.cpu) and when it moved
    # is not in the trace (or more moves than rules.MOVES): ``behind`` then names what ran on both CPUs during the
    # whole wait, as context, not as its cause (who delayed it is not known).
    queued_cpu: int = -1
    moved: str = ""
    moves: tuple[Move, ...] = ()
    # Where it was still open: "" when a switch-in ended it; OPEN_WINDOW when the window's end (--window, --around)
    # closed it, OPEN_RECORDING when the recording's end did (its CPU ran another task to the end: Coverage.running).
    # Then ``span.duration`` is a lower bound: the task was still runnable, not yet switched in.
    open_at: str = ""
    # The tasks that ran meanwhile beyond ``behind`` (past rules.BLAMES; a task once per CPU) and their seconds: a
    # text that lists a few says the rest is not listed (ue23 #6: cc1's 509.528 ms wait listed 26 ms as if all).
    more: int = 0
    more_seconds: float = 0.0

    @property
    def lower_bound(self) -> bool:
        """Whether its length is a lower bound: it was still waiting where the window or the recording ends."""
        return bool(self.open_at)

    def culprit(self) -> Blame | None:
        """The task a title or table names as what the wait was spent behind: the one that ran the most meanwhile,
        only when it ran at least CULPRIT_SHARE of the wait (cc1's 509.528 ms wait on big.ftrace.txt.gz was titled
        "behind xz", which ran 7.869 ms of it among hundreds of tasks, ue22 #7); None when no task did."""
        top = self.behind[0] if self.behind else None
        if top is None or self.moved == MOVED_UNKNOWN or top.seconds < CULPRIT_SHARE * self.span.duration:
            return None
        return top


#: Wait.open_at of a wait still open at the window's end (--window, --around): it waited at least that long.
OPEN_WINDOW: Final = "window"
#: Wait.open_at of a wait still open when the recording stopped (queued on a CPU that ran another task to the end).
OPEN_RECORDING: Final = "recording"


def open_where(open_at: str) -> str:
    """Where a run or a wait open at ``open_at`` (Wait.open_at) still went on: "at the window's end", "when the
    recording stopped"."""
    return "at the window's end" if open_at == OPEN_WINDOW else "when the recording stopped"


def still_waiting(open_at: str) -> str:
    """Where a wait open at ``open_at`` (Wait.open_at) still was, for its text: "" for a wait a switch-in ended."""
    return f"still waiting {open_where(open_at)}" if open_at else ""


#: Wait.moved of a wait switched in on another CPU than it was queued on, at a time the trace does not show.
MOVED_UNKNOWN: Final = "unknown"
#: Wait.moved of a wait whose moves between CPUs sched_migrate_task events recorded (Wait.moves).
MOVED_MIGRATED: Final = "migrated"
#: The share of a wait a task must have run for a title to say the wait was spent behind it (Wait.culprit).
CULPRIT_SHARE: Final = 0.5

#: The fact a CPU-hog or RT-hog finding carries when the task is a kernel thread (told by its name): the run was in
#: kernel code, so the kernel is where the fault lies.  Without it the task may be a user process (a trace does not
#: tell user from kernel mode), and the incident verdict says a task kept the CPU, not that the kernel had a problem.
KERNEL_RUN_FACT: Final = "ran in"
KERNEL_RUN: Final = "the kernel (a kernel thread: it has no user space)"


class SwitchOut(NamedTuple):
    """The sched_switch that ended an interval, as it names the task it switched out and the one it switched in: a
    run's own switch-out says the task's class when the run ended (prev_prio) and whether it was still runnable
    (prev_state R: preempted, or an RT task throttled)."""

    pid: int
    prio: int  # prev_prio
    state: str  # prev_state ("R", "R+", "S", ...)
    next_pid: int
    next_prio: int


class IntervalStats(NamedTuple):
    """Count, total and worst of a family of intervals."""

    n: int
    total: float
    worst: Span | None
    # The sched_switch that ended the worst interval (None: another kind of event ended it, or there is none): for
    # a task's runs, the run's own switch-out.
    worst_out: SwitchOut | None = None
    # Where the worst interval was still open (OPEN_WINDOW, OPEN_RECORDING: a task's run still running where the
    # window or the recording ends, closed there by freeze._close_open_runs), "" when its own end closed it: then
    # ``worst.duration`` is a lower bound.
    worst_open: str = ""
    # Of the ``n`` intervals, how many were still open where they were counted to (a wait closed at the window's or
    # the recording's end, freeze._close_open_waits): then ``total`` and :attr:`mean` are lower bounds
    # (:attr:`lower_bound`; rt_cut.dat's ksoftirqd/1 "Mean wakeup latency 788.295 ms over 1", its one wait open,
    # read as complete until 2026-12-07).
    open: int = 0

    @property
    def mean(self) -> float:
        """Average duration (0.0 when there are none)."""
        return self.total / self.n if self.n else 0.0

    @property
    def lower_bound(self) -> bool:
        """Whether ``total`` and :attr:`mean` are lower bounds: an interval counted in them was still open."""
        return self.open > 0


class StateTime(NamedTuple):
    """Time spent blocked in one task state (S, D, I...)."""

    state: str
    n: int
    total: float
    worst: Span | None


class Preemptor(NamedTuple):
    """A task that preempted another, and how often."""

    pid: int
    comm: str
    times: int


class TaskStats(NamedTuple):
    """Everything measured about one task (a pid)."""

    pid: int
    comm: str
    prio: int  # kernel prio as traced: < 100 is real-time, -1 deadline
    runtime: float
    runs: IntervalStats  # worst = the longest single run
    hog_runs: int  # runs longer than the hog threshold
    wakeup: IntervalStats  # wakeup latency: waking/wakeup to switch-in
    worst_wakeup: Wait | None
    preempt_wait: IntervalStats  # preempted (left runnable) to switch-in
    worst_preempt_wait: Wait | None
    blocked: tuple[StateTime, ...]
    preempted_by: tuple[Preemptor, ...]
    delay_caused: float  # task-seconds other tasks spent waiting for its CPU while it ran
    victims: tuple[Victim, ...]  # the tasks that waited for its CPU while it ran, most time first (the first few)
    # Wakeups not counted in ``wakeup``: the task's switch-in on the CPU it was woken onto could not be seen (no
    # sched_switch of that CPU read before it was switched in elsewhere), so how long it waited is not known.
    wakeups_unknown: int = 0
    wakeup_unknown_why: NotAvailable | None = None
    # The victims beyond ``victims``: how many, and their seconds in all; where a wait of theirs was still open
    # (Victim.open_at), "" when none: their seconds are then a lower bound.
    more_victims: int = 0
    more_victims_seconds: float = 0.0
    more_victims_open: str = ""
    # Its prio on the switch-in of its longest run (``runs.worst``): whether that run was an RT task's is told
    # from it, not from the task's last prio (a task made SCHED_FIFO after a 10 ms CFS run was an "RT hog").
    run_prio: int = PRIO_UNKNOWN
    # Its runnable switch-outs for idle or a CFS task while it was an RT task: RT throttling stopped it, nobody
    # preempted it (not in ``preempted_by``; until 2026-12-07 counted there, as preemptions by those tasks).
    throttled_for: tuple[Preemptor, ...] = ()

    @property
    def is_rt(self) -> bool:
        """A real-time (FIFO/RR) or deadline task, by its last prio."""
        return self.prio != PRIO_UNKNOWN and self.prio < 100

    @property
    def _run_out(self) -> SwitchOut | None:
        """The switch-out that ended its longest run (None: another event ended it, at a window's end)."""
        out = self.runs.worst_out
        return out if out is not None and out.pid == self.pid else None

    @property
    def longest_run_prio(self) -> int:
        """Its prio during its longest run: an RT prio either switch that bounds the run printed (its switch-out's
        first: ``chrt -f 50 CMD`` makes the CFS child it forked SCHED_FIFO without a switch, so the run's switch-in
        says 120 and its switch-out 49), else its switch-in's, else its last."""
        out = self._run_out
        for prio in (out.prio if out is not None else PRIO_UNKNOWN, self.run_prio):
            if prio != PRIO_UNKNOWN and prio < 100:
                return prio
        if self.run_prio != PRIO_UNKNOWN:
            return self.run_prio
        return out.prio if out is not None and out.prio != PRIO_UNKNOWN else self.prio

    @property
    def longest_run_rt(self) -> bool:
        """Whether its longest run was a real-time (or deadline) task's (:attr:`longest_run_prio`).  Until 2026-12-07
        only the switch-in's prio was read: a ``chrt``'d hog was a "CPU hog" or an "RT hog" by timing (ue19 #4)."""
        prio = self.longest_run_prio
        return prio != PRIO_UNKNOWN and prio < 100

    @property
    def longest_run_throttled(self) -> bool:
        """Its longest run ended with it an RT task (its switch-out's prev_prio) still runnable (state R) for a task
        that is not RT (a CFS task, idle): an RT task yields the CPU to those only when RT throttling (or, from 6.12,
        the fair server) stops it; a preemption would be by a higher RT or deadline task.  A next task whose prio the
        trace does not give is not known not to be RT: :attr:`longest_run_yield_unknown` (until 2026-12-07 it was
        "throttled", and the RT hog high by that alone, ue20 #4)."""
        out = self._run_out
        return self._rt_runnable_out and out is not None and (out.next_pid == 0 or out.next_prio >= 100)

    @property
    def longest_run_yield_unknown(self) -> bool:
        """Its longest run ended with it an RT task still runnable for a task whose prio the trace does not give:
        whether it was throttled (a CFS task next) or preempted (a higher RT or deadline task) is unknown."""
        out = self._run_out
        return self._rt_runnable_out and out is not None and out.next_pid != 0 and out.next_prio == PRIO_UNKNOWN

    @property
    def _rt_runnable_out(self) -> bool:
        """Its longest run ended with it an RT task (its switch-out's prev_prio) still runnable (state R)."""
        out = self._run_out
        return out is not None and out.prio != PRIO_UNKNOWN and out.prio < 100 and out.state[:1] == "R"

    @property
    def delay_resolved(self) -> float:
        """The part of ``delay_caused`` told to its victims: the waits that ended in a switch-in (or a switch-out)
        read in the trace, each charged to the runs it waited behind.  ``delay_caused`` (the waiting tasks
        integrated over its runs) also holds waits never resolved: still open at the trace's end, or of a task
        woken onto a CPU while that CPU's events were lost, whose switch-in was not read (it waits on the CPU until
        the end of the trace), waits behind runs older than the CPU's kept ones, and waits that moved to another
        CPU at a time the trace does not show (Wait.moved: who delayed them is not known)."""
        return sum(v.seconds for v in self.victims) + self.more_victims_seconds

    @property
    def delay_open(self) -> str:
        """Where a wait counted in :attr:`delay_resolved` was still open (Victim.open_at; "" when every one ended in a
        switch-in): then that delay, and the longest of its waits, are lower bounds."""
        return next((v.open_at for v in self.victims if v.open_at), self.more_victims_open)


class CpuStats(NamedTuple):
    """Per CPU: coverage, busy/idle time, IRQ and softirq time."""

    cpu: int
    first_ts: float | NotAvailable  # with a window: the CPU's first event in it; none when it is quiet all through
    last_ts: float | NotAvailable
    busy: float | NotAvailable  # unknown when the CPU had no sched_switch before or in the window
    idle: float | NotAvailable
    irq_time: float
    softirq_time: float
    switches: int


class IrqStats(NamedTuple):
    """Handler durations of one IRQ line."""

    irq: int
    name: str
    durations: IntervalStats


class SoftirqStats(NamedTuple):
    """Durations and raise-to-entry latency of one softirq vector."""

    vec: int
    name: str
    durations: IntervalStats
    raise_latency: IntervalStats
    worst_raise_wait: Wait | None


class WorkStats(NamedTuple):
    """Durations of one workqueue function."""

    function: str
    durations: IntervalStats


class OffStats(NamedTuple):
    """IRQ-off or preempt-off intervals, from preemptirq events or a latency tracer."""

    what: str  # "irqs-off" or "preempt-off"
    source: str | NotAvailable  # "preemptirq events", "irqsoff tracer", or why not available
    intervals: IntervalStats | NotAvailable
    worst: tuple[Span, ...]


class RecorderStop(NamedTuple):
    """A CPU that stops reporting with the recording tool current on it: its last switch was to the recorder
    (``perf``, ``trace-cmd``: detectors.sched.rules.RECORDERS), which runs there as it ends the recording and turns
    the events off, so the CPU writes none of its own end (``perf record -a -- sleep 6``: CPU0 switched to perf
    78.381 ms before the trace's last event, which CPU1 wrote)."""

    cpu: int
    comm: str
    pid: int


class RunningAtEnd(NamedTuple):
    """A CPU silent at the trace's end with a task still on it: its last sched_switch put ``comm`` (``pid``, not
    idle, not the recorder) on it, none after, and no event was lost or overwritten.  A task that keeps the CPU
    writes no sched event (a CPU-bound loop, an RT hog spinning), so the silence is that task running to the end,
    not a buffer that filled (ue21 #2: rt_cut.dat's rthog, 572 ms on CPU1 with no event after its last waking)."""

    cpu: int
    comm: str
    pid: int
    switch: EventRef  # the sched_switch that put it on the CPU
    last: EventRef  # the CPU's last event


class Coverage(NamedTuple):
    """Which CPUs the trace covers and when, and events lost."""

    cpus_declared: int | NotAvailable
    cpus_seen: tuple[int, ...]
    common_start: float | NotAvailable
    common_end: float | NotAvailable
    lost_markers: int
    lost_events: int
    note: str  # "" when all CPUs are covered from the start; otherwise what to keep in mind
    stopped: tuple[EventRef, ...] = ()  # the last event of each CPU that stops reporting before the trace ends
    started: tuple[EventRef, ...] = ()  # the first event of each CPU that starts reporting after the trace begins
    # Why events may have been lost though no marker says so ("": a loss would show; ParseCounts.loss_unknown)
    lost_unknown: str = ""
    # Of the ``stopped`` CPUs, those whose last switch was to the recording tool (its own stop, not a buffer's)
    recorder: tuple[RecorderStop, ...] = ()
    # CPUs silent at the end with a task still running there (not in ``stopped``: covered to the end by it)
    running: tuple[RunningAtEnd, ...] = ()
    # The LTTng stream files that end inside a packet (the reader's, set by the pipeline): a ``stopped`` CPU whose
    # stream is cut went silent at the cut, not because its buffer filled (ue23 #7)
    cuts: tuple[StreamCut, ...] = ()


class ClockStep(NamedTuple):
    """Two consecutive events of one CPU where the second is earlier than the first."""

    before: EventRef
    after: EventRef


# The losses, clock steps (disputed ranges) and jumps a report lists one by one (the JSON and the table say how
# many there were in all)
LOSSES_SHOWN = 100


#: PacketLoss.why of events discarded (collectors.ctf.reader.LOST_DISCARDED): the window ends at the end of the packet
#: that counts them; the other markers' (a missing packet, a clock gone back) at the start of the packet after.
DISCARDED = 1


class PacketLoss(NamedTuple):
    """One lost-event marker of an LTTng stream, as its packets tell it: the events lost (0: not said) in the time
    from the end of the packet before to the end of the packet that counts them (as babeltrace2 dates a discard;
    a missing packet or a clock that went back: to the start of the packet after it)."""

    cpu: int
    events: int
    start: float
    end: float
    where: str  # the stream file and the packet that tells it: ``ust/uid/0/64-bit/ch_2 packet 189``
    at: float  # the marker's time (the packet's start: where the analysis reads it)
    why: int = DISCARDED  # collectors.ctf.reader's LOST_* code


class LossGap(NamedTuple):
    """Events one CPU's buffer lost (a lost-events marker): between its last event before the marker and its first
    after it, what any task did on that CPU is unknown; so is whether a task seen elsewhere ran there meanwhile."""

    cpu: int
    events: int  # as the marker says (0: not said); markers of the CPU before it reports again are added up
    before: EventRef | None  # None: the CPU had no event before the marker
    after: EventRef | None  # None: none after it (the CPU never reports again)
    # The markers added up in it (a CPU that reports no analysed event between markers: an LTTng stream's
    # discarded-events counts, one per packet, of a CPU whose events are not the scheduler's)
    markers: int = 1
    # A marker of a CPU none of whose events the analysis reads (an LTTng UST stream's): its own packet's window,
    # one row per gap (the table and the JSON say it; start/end stay unbounded: what the analysis reads of the
    # CPU is not known to be lost by it)
    packet: PacketLoss | None = None

    @property
    def start(self) -> float:
        """From: its last event before (its first after when it had none: the loss is at that point)."""
        return self.before.ts if self.before is not None else self.end

    @property
    def end(self) -> float:
        """To: its first event after (never: infinity)."""
        return self.after.ts if self.after is not None else math.inf

    def said(self, by_line: bool = True) -> str:
        """``CPU1 lost 5000 events between line 4204 at 45148.996829 and line 4205 at 45151.000781``."""
        n = f"{self.events} events" if self.events else "events"
        if self.packet is not None:
            k = self.packet
            return f"CPU{self.cpu} lost {n} between {k.start:.6f} and {k.end:.6f} ({k.where})"
        start = self.before.said(by_line) if self.before is not None else "its first event"
        end = self.after.said(by_line) if self.after is not None else "the end of the trace"
        return f"CPU{self.cpu} lost {n} between {start} and {end}"


class ClockCheck(NamedTuple):
    """Whether each CPU's timestamps go forward (they must: one CPU's ring buffer is in time order)."""

    steps: int  # consecutive event pairs of the same CPU looked at
    back: int  # of which the second event is earlier
    examples: tuple[ClockStep, ...]  # the first few, in trace order
    disputed: tuple[tuple[int, float, float], ...]  # (cpu, from, to): times a CPU's clock passed twice, merged
    # (before, after): consecutive events of the trace with no event on any CPU between them for longer than
    # detectors.sched.sanity.JUMP_S: a suspend, a clock set forward or a missing stretch of the recording
    jumps: tuple[ClockStep, ...] = ()
    # Of the jumps, the holes in the recording: shorter, but far longer than the trace's own event rate allows
    # (detectors.sched.sanity.HOLE_MIN_S); unlike a longer jump, nothing that spans one is counted in the totals
    holes: tuple[ClockStep, ...] = ()
    # The losses (lost-event markers) as the time each covers on its CPU: a figure that overlaps one is unknown
    losses: tuple[LossGap, ...] = ()

    def suspect(self) -> bool:
        """Whether some figures may span a step back or a jump forward (so the totals carry a warning)."""
        return bool(self.back or self.jumps)

    def reversed(self) -> bool:
        """Most steps go back: the file is in reverse order (``tac``, a sort gone wrong)."""
        return self.back > self.steps // 2 and self.back > 1

    def disputes(self, cpu: int, start: float, end: float, on_cpu: bool = False) -> bool:
        """Whether ``[start, end]`` on ``cpu`` overlaps a time its clock passed twice, spans a jump forward, or
        overlaps a loss of events: of ``cpu`` when ``on_cpu`` (see :meth:`lost_in`), else of any CPU."""
        return (
            any(c == cpu and start <= hi and end >= lo for c, lo, hi in self.disputed)
            or any(start < j.after.ts and end > j.before.ts for j in self.jumps)
            or any(self.lost_in(start, end, (cpu,) if on_cpu else None))
        )

    def lost_in(self, start: float, end: float, cpus: Collection[int] | None = None) -> list[LossGap]:
        """The losses that overlap ``[start, end]``: of the CPUs ``cpus``, or of any CPU (None).

        Which CPUs a figure depends on is its kind's (Trace Compass marks a loss on its CPU's row only): an
        interval that stays on one CPU (a run from its switch-in to its switch-out, a handler, a softirq raised
        and run there) is seen whole when that CPU lost nothing, since a running task leaves its CPU only through
        a sched_switch there.  A wait or a sleep is a task's time on no CPU the trace shows (a wakeup may target,
        a balancer move it to, the CPU whose events were lost, and it may have run there unseen): any CPU's loss
        makes it unknown."""
        return [g for g in self.losses if start < g.end and end > g.start and (cpus is None or g.cpu in cpus)]

    def disputes_span(self, span: Span, on_cpu: bool = False) -> bool:
        """Whether an interval (on its CPU or the CPUs of its two events) overlaps a time passed twice, or a loss
        (``on_cpu``: an interval that stays on its CPU, touched only by a loss of that CPU; see :meth:`lost_in`)."""
        cpus = {span.cpu, span.begin.cpu, span.end.cpu}
        return bool(self.disputed or self.jumps or self.losses) and any(
            self.disputes(c, span.start, span.start + span.duration, on_cpu) for c in cpus
        )


NO_CLOCK_PROBLEM = ClockCheck(0, 0, (), ())


class BucketTask(NamedTuple):
    """Runtime of one task inside a bucket."""

    pid: int
    comm: str
    runtime: float


class Bucket(NamedTuple):
    """One time bucket on one CPU: top tasks by runtime, IRQ/softirq time, worst latency."""

    start: float
    cpu: int
    top: tuple[BucketTask, ...]
    irq_time: float
    softirq_time: float
    worst_latency: float | None
    worst_latency_pid: int | None
    worst_latency_comm: str | None


class ParseSummary(NamedTuple):
    """What the reader saw and skipped (see collectors.trace_text.ParseCounts)."""

    lines: int
    events: int
    used: int
    comments: int
    malformed: int
    unknown: tuple[tuple[str, int], ...]
    layout: str
    tracer: str | None
    malformed_examples: tuple[tuple[int, str], ...] = ()  # the first few skipped lines: (line number, text)
    # Events read but not analysed here, by what they are (ParseCounts.aside; forensics.types.trace.ASIDE_*).
    aside: tuple[tuple[str, int], ...] = ()


# -- the default thresholds (seconds); detectors/sched/rules.py names them with the engine's other constants

HOG: Final = 0.005
WAKEUP_LATENCY: Final = 0.002
IRQ: Final = 0.0005
SOFTIRQ: Final = 0.002
DSTATE: Final = 0.0005  # total time in D per task
OFFTIME: Final = 0.001


#: The preemption models a kernel runs (Kconfig PREEMPT_NONE/VOLUNTARY/PREEMPT/LAZY/RT, ``preempt=``), as
#: ``kforensic trace --preempt`` takes them and a kernel log names them (collectors/log_identity.py).
PREEMPTION_MODELS: Final = ("none", "voluntary", "full", "lazy", "rt")
#: The models under which kernel code is not preempted: a task it wakes waits for the running task's next
#: scheduling point ("none or voluntary": a banner without PREEMPT, which does not say which of the two).
NOT_PREEMPTIBLE: Final = ("none", "voluntary", "none or voluntary")


class Thresholds(NamedTuple):
    """The limits that make a figure a finding (seconds)."""

    hog: float = HOG
    wakeup_latency: float = WAKEUP_LATENCY
    irq: float = IRQ
    softirq: float = SOFTIRQ
    dstate: float = DSTATE  # total time in D per task
    offtime: float = OFFTIME


class TraceAnalysis(NamedTuple):
    """The whole result of analysing one trace."""

    window: (
        tuple[float, float] | NotAvailable
    )  # the window asked for (--window, --around), else first and last analysed event
    latency_source: str | NotAvailable  # which event wakeup latency is measured from
    tasks: tuple[TaskStats, ...]
    cpus: tuple[CpuStats, ...]
    irqs: tuple[IrqStats, ...]
    softirqs: tuple[SoftirqStats, ...]
    works: tuple[WorkStats, ...]
    offtimes: tuple[OffStats, ...]
    coverage: Coverage
    buckets: tuple[Bucket, ...]
    bucket_seconds: float | None
    thresholds: Thresholds
    clock: ClockCheck = NO_CLOCK_PROBLEM
    span_tids: frozenset[int] = frozenset()  # threads that served request spans: latency-sensitive (harm.py)
    # The traced kernel's preemption model when known (--preempt, or the kernel log beside it in a report):
    # none, voluntary, "none or voluntary", full, lazy, rt; "" unknown (judged as preemptible).
    preemption: str = ""
    # Where ``preemption`` was read when the trace itself says it (an LTTng trace's metadata: env.kernel_version,
    # the kernel's uname -v), or why the trace's metadata does not settle it ("": declared, or not asked).
    preemption_note: str = ""
    # The traced kernel's release when the trace names it (an LTTng trace's env.kernel_release); "" unknown (a text
    # trace names none): it says whether the fair class is CFS or, from 6.6, EEVDF (detectors/sched/harm.py).
    kernel_release: str = ""
    # The runs still open at the window's end (--window, --around), closed there: (cpu, start, end, pid), idle as
    # pid 0; the --png timeline draws them after the runs the analysis logged (they end no switch).
    window_runs: tuple[tuple[int, float, float, int], ...] = ()
    # The first and the latest time of the events the analysis read (None: none): with a window the reading stops
    # once each CPU has an event past its end, so the latest is the trace's last only when it read to the end.
    # It tells a window outside the trace (a usage error) from one inside it in which no event falls.
    events_read: tuple[float, float] | None = None
    # With a window (--window, --around; empty without one), the kinds of the events read, before and after it too
    # (Kind values, lost-event markers left out): what the trace can show is judged on them, not on the window's.
    kinds_read: tuple[int, ...] = ()  # sorted
    # Its events' ``line_no`` are lines of a text trace (True), or positions in an LTTng session (False): these are
    # named by the findings' evidence (stream file, number, time: Session.cite), never said as "line N".
    by_line: bool = True
    # The sched_migrate_task events read up to the window's end (the waits do not follow them yet): a wait switched
    # in on another CPU than it was queued on moved at a time the analysis does not know (Wait.moved), with them or
    # without.
    migrations: int = 0
    # A sched_wakeup was read after a sched_waking: a wait measured from a sched_waking is queued on the CPU its
    # sched_wakeup named (the waking's target_cpu is the CPU the task last ran on), Wait.queued_cpu.
    wakeup_placed: bool = False
    # The pids ``--task`` asks about (detectors/sched/select.py): their worst wakeup wait above --latency-ms within
    # what their class promises is said at info, not dropped (a nice-10 python's 44.528 ms, then "no findings": ue24
    # F11), and their findings are not folded into another pid's of the same comm (findings.py detect).
    asked: frozenset[int] = frozenset()
