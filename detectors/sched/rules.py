"""The rules and constants of the scheduling state machine: one source for both engines.

The reference (:class:`~detectors.sched.analyzer.SchedAnalyzer`, plain
Python) and the compiled loop (:mod:`detectors.sched.engine_kernels`, numba)
must give *equal* results, so whatever decides a figure lives here once:

- the event kinds by name, and which handler takes which range of kinds
  (:data:`HANDLERS`, in dispatch order);
- the sizes of what is remembered (runs per CPU for blame, timeline runs,
  off-time spans, bucket cells, blames and preemptors kept);
- the default thresholds (the fields of :class:`~forensics.types.sched.Thresholds`);
- the rules themselves: when a run is a CPU hog, when an irqs-off/preempt-off
  interval is kept among the worst, which disable kind a toggle belongs to,
  and which prev_state letters mean preempted or gone.

The rule functions are plain Python on ints and floats; the compiled engine
compiles these same functions (``njit(rules.is_hog)``), so there is no second
copy to keep in step.  Numba freezes module-level ints at compile time, which
is why the kinds are plain ints here and not the enum members.
"""

from __future__ import annotations

from typing import Final

# The default thresholds (seconds) are defined with forensics.types.sched.Thresholds (the results carry them).
from forensics.types.sched import (  # noqa: F401
    DSTATE,
    HOG,
    IRQ,
    MOVED_MIGRATED,
    MOVED_UNKNOWN,
    OFFTIME,
    SOFTIRQ,
    WAKEUP_LATENCY,
)
from forensics.types.trace import PRIO_UNKNOWN, Kind

# -- event kinds (forensics.types.trace.Kind as plain ints) -------------------------------------

SWITCH: Final = int(Kind.SWITCH)
WAKING: Final = int(Kind.WAKING)
WAKEUP: Final = int(Kind.WAKEUP)
WAKEUP_NEW: Final = int(Kind.WAKEUP_NEW)
IRQ_ENTRY: Final = int(Kind.IRQ_ENTRY)
IRQ_EXIT: Final = int(Kind.IRQ_EXIT)
SOFTIRQ_RAISE: Final = int(Kind.SOFTIRQ_RAISE)
SOFTIRQ_ENTRY: Final = int(Kind.SOFTIRQ_ENTRY)
SOFTIRQ_EXIT: Final = int(Kind.SOFTIRQ_EXIT)
WORK_START: Final = int(Kind.WORK_START)
WORK_END: Final = int(Kind.WORK_END)
IRQ_DISABLE: Final = int(Kind.IRQ_DISABLE)
IRQ_ENABLE: Final = int(Kind.IRQ_ENABLE)
PREEMPT_DISABLE: Final = int(Kind.PREEMPT_DISABLE)
PREEMPT_ENABLE: Final = int(Kind.PREEMPT_ENABLE)
PROCESS_EXIT: Final = int(Kind.PROCESS_EXIT)
LOST: Final = int(Kind.LOST)
MIGRATE: Final = int(Kind.MIGRATE)

#: Which handler takes which kinds, in dispatch order: (first kind, last kind, SchedAnalyzer method).
#: Both engines dispatch on ``kind <= last`` in this order (LOST, between PROCESS_EXIT and MIGRATE, is taken
#: before the window check).
HANDLERS: Final = (
    (SWITCH, SWITCH, "_switch"),
    (WAKING, WAKEUP_NEW, "_wake"),
    (IRQ_ENTRY, IRQ_EXIT, "_irq"),
    (SOFTIRQ_RAISE, SOFTIRQ_EXIT, "_softirq"),
    (WORK_START, WORK_END, "_work"),
    (IRQ_DISABLE, PREEMPT_ENABLE, "_offtime"),
    (PROCESS_EXIT, PROCESS_EXIT, "_exit"),
    (MIGRATE, MIGRATE, "_migrate"),
)
#: The wakeup kinds as the "source" of a wait (Wait.source, TraceAnalysis.latency_source).
WAKE_SOURCES: Final = {WAKING: "sched_waking", WAKEUP: "sched_wakeup", WAKEUP_NEW: "sched_wakeup_new"}
SOFTIRQ_NAMES: Final = ("HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU")

#: Wait.moved by the code the compiled engine stores: 0 ran where it was queued, 1 moved at a time not traced,
#: 2 moved by the sched_migrate_task events kept (Wait.moves).
MOVED: Final = ("", MOVED_UNKNOWN, MOVED_MIGRATED)
MOVED_NO: Final = 0
MOVED_UNTRACED: Final = 1
MOVED_TRACED: Final = 2
#: The moves of one wait kept (sched_migrate_task events): a wait moved more often than this has its who-ran told
#: as one that moved at an unknown time (its CPUs' tasks are still charged with each part as their victims' waits).
MOVES: Final = 4

#: What an interval adds to in a bucket of the digest (BucketDigest.add's ``what``); the compiled engine logs a
#: wait that ended in a bucket (BucketDigest.latency) as BUCKET_LATENCY.
BUCKET_RUN: Final = 0
BUCKET_IRQ: Final = 1
BUCKET_SOFTIRQ: Final = 2
BUCKET_LATENCY: Final = 3

# -- prev_state of a switch-out ------------------------------------------------------------------

PREEMPTED_STATE: Final = b"R"  # left runnable: it waits on this CPU (preemption)
GONE_STATES: Final = (b"Z", b"X")  # exiting: neither waiting nor blocked; any other letter blocks
PREEMPTED_LETTER: Final = PREEMPTED_STATE[0]  # the same as bytes for the compiled engine's state column
GONE_LETTERS: Final = (GONE_STATES[0][0], GONE_STATES[1][0])

# -- sizes of what is remembered -----------------------------------------------------------------

# Runs remembered per CPU to say who ran during a wait, bounded by time rather than by a count: a CPU keeps the
# runs that ended in the last RECENT_SECONDS (at least its last RECENT_RUNS, at most RECENT_MAX; drops_run).  Until
# 2026-12-07 it kept its last 512 runs: on a CPU switching 11,000 times a second that is 45 ms, and a 509.528 ms
# wait of cc1 (big.ftrace.txt.gz) had who ran in its first 387 ms "not known" although the trace held every switch.
RECENT_RUNS: Final = 512
RECENT_SECONDS: Final = 2.0
RECENT_MAX: Final = 1 << 15  # a power of two: the compiled engine's ring doubles up to it (32 bytes a run)
TIMELINE_MAX_RUNS = 400_000  # runs kept for the PNG timeline (a budget; tests lower it)
MAX_BUCKET_CELLS = 50_000  # (bucket, CPU) cells of the digest; beyond that buckets double (tests lower it)
OFF_KEEP: Final = 64  # off-time spans gathered per kind before the list is cut ...
OFF_CUT: Final = 16  # ... to its longest this many (a stable sort, longest first)
OFF_REPORTED: Final = 10  # off-time spans in the result
BLAMES: Final = 5  # tasks named as running during a wait, most time first
PREEMPTORS: Final = 5  # preempting tasks and victims kept per task in the result
STOP_GAP: Final = 1e-3  # a CPU whose last event is this much (s) before the trace's last "stops reporting"
#: The recording tools' task names: a CPU whose last switch was to one of them stopped reporting because the recorder
#: ran there to end the recording and turned its events off (perf record -a once its workload exits; trace-cmd
#: record's readers), not because its buffer filled (freeze._coverage, Coverage.recorder).
RECORDERS: Final = ("perf", "trace-cmd")

# -- the rules (plain functions; the compiled engine compiles these same ones) --------------------
# Each is self-contained (it calls no other function of this module): numba compiles each one alone.


def is_hog(run: float, limit: float) -> bool:
    """A single run strictly longer than the hog threshold is a CPU hog run."""
    return run > limit


def is_throttled(prio: int, next_pid: int, next_prio: int) -> bool:
    """A runnable switch-out (prev_state R) of an RT or deadline task (``prio`` 0-99, or -1; -1000 is a prio the
    trace does not give: PRIO_UNKNOWN) for idle or a CFS task (``next_prio`` 100 and up) was RT throttling (from
    6.12 also the fair server) stopping it, not a preemption: those tasks cannot preempt it.  A next task of unknown
    prio might be a higher RT one: a preemption as the switch says (TaskStats.longest_run_yield_unknown)."""
    return PRIO_UNKNOWN < prio < 100 and (next_pid == 0 or next_prio >= 100)


def drops_run(count: int, oldest_end: float, ts: float) -> bool:
    """Whether a CPU that keeps ``count`` runs, the oldest ending at ``oldest_end``, drops that oldest run before it
    keeps the one ending at ``ts`` (the rule of RECENT_RUNS, RECENT_SECONDS, RECENT_MAX; checked again until
    false, so both engines keep the same runs)."""
    return count >= RECENT_RUNS and (count >= RECENT_MAX or oldest_end < ts - RECENT_SECONDS)


def keeps_offtime(duration: float, limit: float) -> bool:
    """An irqs-off/preempt-off interval at least the off-time threshold long is kept among the worst."""
    return duration >= limit


def off_index(kind: int) -> int:
    """0 for the irqs-off toggles (IRQ_DISABLE/IRQ_ENABLE), 1 for the preempt-off ones."""
    return (kind - IRQ_DISABLE) // 2


def off_base(kind: int) -> int:
    """The *_DISABLE kind of an off-time toggle (what the interval is filed under)."""
    return IRQ_DISABLE + 2 * ((kind - IRQ_DISABLE) // 2)


def opens_offtime(kind: int) -> bool:
    """Whether an off-time toggle starts an interval (a *_DISABLE) rather than ends one."""
    return (kind - IRQ_DISABLE) % 2 == 0
