"""Mutable accumulators of the streaming analysis, and how they become typed results.

They live only while a trace is read: :mod:`detectors.sched.freeze` turns them
into the NamedTuples of :mod:`forensics.types.sched`.  ``__slots__`` keep them
small and fast (one per task, IRQ, softirq vector, work function).
"""

from __future__ import annotations

import math

from detectors.sched.rules import MOVED_NO, MOVED_TRACED, MOVED_UNTRACED, MOVES, SWITCH
from forensics.types.sched import Blame, EventRef, IntervalStats, Move, Span, SwitchOut, Wait
from forensics.types.trace import TraceEvent


def event_ref(ev: TraceEvent) -> EventRef:
    """An event as evidence: line number, time, CPU and the line decoded as the evidence check does."""
    return EventRef(ev.line_no, ev.ts, ev.cpu, ev.line.decode("utf-8", "replace").removesuffix("\r"))


def span_of(start: float, end: float, cpu: int, begin: TraceEvent, finish: TraceEvent) -> Span:
    """The interval between two events, with both cited."""
    return Span(end - start, start, cpu, event_ref(begin), event_ref(finish))


def off_span_of(start: float, end: float, cpu: int, begin: TraceEvent, finish: TraceEvent) -> Span:
    """An irqs-off/preempt-off interval: :func:`span_of` with the caller its opening toggle names (``state``)."""
    return span_of(start, end, cpu, begin, finish)._replace(caller=begin.state.decode("utf-8", "replace"))


def task_wait(
    pid: int,
    start: float,
    end: float,
    cpu: int,
    begin: TraceEvent,
    finish: TraceEvent,
    behind: tuple[Blame, ...],
    source: str,
    unseen: float,
    queued: int = -1,
    moved: str = "",
    moves: tuple[Move, ...] = (),
    more: tuple[int, float] = (0, 0.0),
) -> Wait:
    """Task ``pid``'s wait from ``begin`` to ``finish``, with its prio as the trace shows it then: from the
    switch-in that ends it (next_prio), else (a wait closed at a window's end) from the event that began it.
    ``pid`` < 0: not a task's wait (a softirq's), no prio.  ``queued``, ``moved``, ``moves``: Wait.queued_cpu, moved,
    moves; ``more``: Wait.more, more_seconds."""
    span = span_of(start, end, cpu, begin, finish)
    n, rest = more
    if pid < 0:
        return Wait(span, behind, source, unseen, more=n, more_seconds=rest)
    if finish.kind == SWITCH and finish.next_pid == pid:
        return Wait(
            span, behind, source, unseen, finish.next_prio, span.end, queued, moved, moves, more=n, more_seconds=rest
        )
    return Wait(span, behind, source, unseen, begin.prio, span.begin, queued, moved, moves, more=n, more_seconds=rest)


Part = tuple[int, float, float]  # (cpu, t0, t1): a part of a wait, on one CPU
MoveHist = list[tuple[TraceEvent, int, int]]  # a wait's sched_migrate_task events, CPU left, dest CPU (in order)


def wait_parts(
    hist: MoveHist | None, queued: int, on: int, cpu: int, start: float, end: float
) -> tuple[tuple[Part, ...], bool, int]:
    """The parts of a task's wait from ``start`` to ``end``, whether they are disjoint, and how it moved (rules.MOVED).

    ``hist``: the moves of this wait (SchedAnalyzer.moves; None or empty: none read); ``queued``: the CPU it was
    queued on, ``on`` the one its queue was on at ``end``, ``cpu`` the one it ran on (or, at a window's end, ``on``).
    Moves all kept (up to rules.MOVES) from ``queued`` to where it ran: one part per CPU stay, disjoint
    (MOVED_TRACED).  No move and run where it was queued: one part (MOVED_NO).  Else it came to run where it did at
    a time not followed (a move not recorded, or more than rules.MOVES: away and back too, A -> B -> A): every CPU
    it is known to have waited on over the whole wait, as context (MOVED_UNTRACED)."""
    if hist and len(hist) <= MOVES and hist[0][1] == queued and on == cpu:
        parts = []
        t0 = start
        for mev, left, _dest in hist:
            t = min(max(mev.ts, start), end)  # (a move before a clipped start: an empty part)
            parts.append((left, t0, t))
            t0 = t
        parts.append((cpu, t0, end))
        return tuple(parts), True, MOVED_TRACED
    if not hist and queued == cpu:
        return ((cpu, start, end),), True, MOVED_NO
    cpus = dict.fromkeys([queued, *(dest for _ev, _left, dest in (hist or [])[:MOVES]), cpu])
    return tuple((c, start, end) for c in cpus), False, MOVED_UNTRACED


def moves_of(hist: MoveHist | None) -> tuple[Move, ...]:
    """The moves of a wait kept (the first rules.MOVES), cited."""
    return tuple(move_of(ev, left, dest) for ev, left, dest in (hist or [])[:MOVES])


def move_of(ev: TraceEvent, from_cpu: int, to_cpu: int) -> Move:
    """A sched_migrate_task that moved a wait from ``from_cpu`` to ``to_cpu``, cited."""
    return Move(ev.ts, from_cpu, to_cpu, event_ref(ev))


class Accumulator:
    """Mutable count/total/worst accumulator."""

    __slots__ = (
        "count",
        "open",
        "total",
        "worst",
        "worst_begin",
        "worst_cpu",
        "worst_end",
        "worst_open",
        "worst_start",
    )

    def __init__(self) -> None:
        self.count = 0
        self.open = 0  # of ``count``, the intervals still open where they were counted to (IntervalStats.open)
        self.total = 0.0
        self.worst = -1.0
        self.worst_start = 0.0
        self.worst_cpu = -1
        self.worst_begin: TraceEvent | None = None
        self.worst_end: TraceEvent | None = None
        self.worst_open = ""  # IntervalStats.worst_open

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
        self.worst_open = ""

    def copy(self) -> Accumulator:
        """An independent copy (the events are shared: they are immutable)."""
        out = Accumulator()
        out.count, out.total, out.worst, out.worst_start = self.count, self.total, self.worst, self.worst_start
        out.open = self.open
        out.worst_cpu, out.worst_begin, out.worst_end = self.worst_cpu, self.worst_begin, self.worst_end
        out.worst_open = self.worst_open
        return out

    def freeze(self) -> IntervalStats:
        """The typed result."""
        worst = None
        out = None
        end = self.worst_end
        if self.worst_begin is not None and end is not None:
            worst = span_of(self.worst_start, self.worst_start + self.worst, self.worst_cpu, self.worst_begin, end)
            # A switch on another CPU is no switch-out of this run: a run closed at the trace's end (freeze._to_end)
            # cites the trace's last event, of any CPU.
            if end.kind == SWITCH and end.cpu == self.worst_cpu:
                state = end.state.decode("utf-8", "replace")
                out = SwitchOut(end.pid, end.prio, state, end.next_pid, end.next_prio)
        return IntervalStats(
            self.count, self.total, worst, out, self.worst_open if worst is not None else "", self.open
        )


class VictimTally:
    """What one task's waits for a CPU lost to another task that ran there (forensics.types.sched.Victim)."""

    __slots__ = ("key", "open_at", "running", "seconds", "waits", "worst")

    def __init__(self) -> None:
        self.seconds = 0.0
        self.waits = 0
        self.worst = 0.0
        self.open_at = ""  # Victim.open_at: where a wait counted here was still open ("" none)
        self.key = math.nan  # the start of the last wait added, when it moved between CPUs (NaN: none)
        self.running = 0.0  # the seconds of that wait so far

    def copy(self) -> VictimTally:
        """An independent copy."""
        out = VictimTally()
        out.seconds, out.waits, out.worst = self.seconds, self.waits, self.worst
        out.key, out.running, out.open_at = self.key, self.running, self.open_at
        return out

    def add(self, seconds: float, key: float = math.nan, open_at: str = "") -> None:
        """One more wait, ``seconds`` of it while the task ran; or, with the ``key`` (the wait's start) of the last
        one, another part of that wait (it moved between CPUs and the task ran on both): one wait, its parts summed
        (NaN: a wait that did not move, never a part of another).  ``open_at``: the wait was still open there
        (Wait.open_at), counted up to it: the tally's seconds and worst become lower bounds."""
        self.seconds += seconds
        self.open_at = open_at or self.open_at
        if key == self.key:
            self.running += seconds
            self.worst = max(self.worst, self.running)
            return
        self.key, self.running = key, seconds
        self.waits += 1
        self.worst = max(self.worst, seconds)


class TaskState:
    """What is known about one task while the trace is read."""

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
        "throttled_for",
        "unseen_cpu",
        "unseen_wakes",
        "victims",
        "wakeup",
        "worst_preempt_wait",
        "worst_wakeup",
    )

    def __init__(self, comm: bytes, prio: int) -> None:
        self.comm = comm
        self.prio = prio
        self.runtime = 0.0
        self.runs = Accumulator()
        self.hog_runs = 0
        self.wakeup = Accumulator()
        self.worst_wakeup: Wait | None = None
        self.preempt_wait = Accumulator()
        self.worst_preempt_wait: Wait | None = None
        self.blocked: dict[bytes, Accumulator] = {}
        self.preempted_by: dict[int, int] = {}
        # Its runnable switch-outs that were RT throttling's, not preemptions (rules.is_throttled): pid -> times.
        self.throttled_for: dict[int, int] = {}
        self.delay_caused = 0.0
        self.victims: dict[int, VictimTally] = {}  # pid -> what its waits lost while this task ran
        # Wakeups whose switch-in on the CPU they were woken onto could not be seen (no sched_switch of that CPU
        # read before the task was switched in elsewhere): not counted; the last such CPU, for the reason.
        self.unseen_wakes = 0
        self.unseen_cpu = -1

    def copy(self) -> TaskState:
        """A copy whose run figures can change without changing this one (freeze closes open runs in it)."""
        out = TaskState(self.comm, self.prio)
        out.runtime, out.hog_runs, out.delay_caused = self.runtime, self.hog_runs, self.delay_caused
        out.runs = self.runs.copy()
        out.wakeup, out.worst_wakeup = self.wakeup, self.worst_wakeup
        out.preempt_wait, out.worst_preempt_wait = self.preempt_wait, self.worst_preempt_wait
        out.blocked, out.preempted_by, out.victims = self.blocked, self.preempted_by, self.victims
        out.throttled_for = self.throttled_for
        out.unseen_wakes, out.unseen_cpu = self.unseen_wakes, self.unseen_cpu
        return out
