"""The records of the trace reader: event kinds, :class:`TraceEvent`, and the event names it knows."""

from __future__ import annotations

import enum
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, NamedTuple

# Re-exported for collectors/perf_script.py, which imports it from here (its own change, another engineer's file).


class Kind(enum.IntEnum):
    """The events the analyses use (values are small ints: they are compared per event)."""

    SWITCH = 1
    WAKING = 2
    WAKEUP = 3
    WAKEUP_NEW = 4
    IRQ_ENTRY = 5
    IRQ_EXIT = 6
    SOFTIRQ_RAISE = 7
    SOFTIRQ_ENTRY = 8
    SOFTIRQ_EXIT = 9
    WORK_START = 10
    WORK_END = 11
    IRQ_DISABLE = 12
    IRQ_ENABLE = 13
    PREEMPT_DISABLE = 14
    PREEMPT_ENABLE = 15
    PROCESS_EXIT = 16
    LOST = 17  # a lost-events marker; ``pid`` holds the count (0 when not printed)
    MIGRATE = 18  # sched_migrate_task: the task moved between CPUs; ``next_pid`` dest_cpu, ``next_prio`` orig_cpu


#: The kind of an event the analyses skip, noted only for when its CPU reported (ParseCounts.skipped_first/last).
SKIPPED = 0


class TraceEvent(NamedTuple):
    """One parsed event.  Field meaning depends on ``kind``.

    ``pid``/``prio``/``comm``: the task switched out (SWITCH), woken (WAKING,
    WAKEUP, WAKEUP_NEW), exiting (PROCESS_EXIT) or moved to another CPU
    (MIGRATE: ``next_pid`` the CPU it moved to, ``next_prio`` the one it left); the IRQ number (IRQ_*) or
    softirq vector (SOFTIRQ_*) in ``pid``.  ``next_*``: the task switched in.
    ``state``: prev_state of a SWITCH, the IRQ name, the work function or the
    caller of an irq/preempt toggle.  ``line`` is the raw line, ``line_no`` its
    1-based number in the input.
    """

    kind: int
    ts: float
    cpu: int
    line_no: int
    line: bytes
    pid: int = 0
    prio: int = 0
    comm: bytes = b""
    state: bytes = b""
    next_pid: int = 0
    next_prio: int = 0
    next_comm: bytes = b""


# tuple.__new__ bound to the class builds a record at C speed (NamedTuple's own
# constructor is Python code: about twice the cost of the whole parse of a line).
make_event: Callable[[tuple[int, float, int, int, bytes, int, int, bytes, bytes, int, int, bytes]], TraceEvent] = (
    functools.partial(tuple.__new__, TraceEvent)
)

# Event names as printed by ftrace/trace-cmd, and as perf prints them (system:event).
_EVENT_KINDS: dict[bytes, int] = {
    b"sched_switch": Kind.SWITCH,
    b"sched_waking": Kind.WAKING,
    b"sched_wakeup": Kind.WAKEUP,
    b"sched_wakeup_new": Kind.WAKEUP_NEW,
    b"irq_handler_entry": Kind.IRQ_ENTRY,
    b"irq_handler_exit": Kind.IRQ_EXIT,
    # x86 vectors without an irq_handler_* event: the IRQ number is -vector (see _irq).
    b"local_timer_entry": Kind.IRQ_ENTRY,
    b"local_timer_exit": Kind.IRQ_EXIT,
    b"softirq_raise": Kind.SOFTIRQ_RAISE,
    b"softirq_entry": Kind.SOFTIRQ_ENTRY,
    b"softirq_exit": Kind.SOFTIRQ_EXIT,
    b"workqueue_execute_start": Kind.WORK_START,
    b"workqueue_execute_end": Kind.WORK_END,
    b"irq_disable": Kind.IRQ_DISABLE,
    b"irq_enable": Kind.IRQ_ENABLE,
    b"preempt_disable": Kind.PREEMPT_DISABLE,
    b"preempt_enable": Kind.PREEMPT_ENABLE,
    b"sched_process_exit": Kind.PROCESS_EXIT,
    b"sched_migrate_task": Kind.MIGRATE,
}
_SYSTEMS = (b"sched", b"irq", b"workqueue", b"preemptirq", b"irq_vectors")
EVENT_KINDS: dict[bytes, int] = {
    **{name: int(kind) for name, kind in _EVENT_KINDS.items()},
    **{s + b":" + name: int(kind) for name, kind in _EVENT_KINDS.items() for s in _SYSTEMS},
}

# trace-cmd's sched_switch plugin decodes prev_state with an old bit table, so on
# current kernels TASK_REPORT_IDLE prints as "W" and EXIT_ZOMBIE as "X" (compare
# `trace-cmd report -N` on the same file).  Normalised to the kernel's letters.
# A prio no event printed (a sched_switch or sched_wakeup line without ``prio=``): not known, never 0, which is
# a real-time priority.  No kernel prio (-1 deadline, 0..99 RT, 100..139 CFS) nor LTTng's prio - 100 is this.
PRIO_UNKNOWN = -1000


def prio_known(prio: int | None) -> bool:
    """Whether ``prio`` is one a trace printed."""
    return prio is not None and prio != PRIO_UNKNOWN


#: What :attr:`ParseCounts.aside` counts (keys).
ASIDE_SYSCALLS: Final = "syscalls"  # syscall_entry_*/syscall_exit_* (sys_*/exit_syscall): syscall latency not analysed
ASIDE_STATEDUMP: Final = "statedump"  # lttng_statedump_process_state: the names of the threads at the start
ASIDE_USER: Final = "user_space"  # LTTng UST events: the span analysis's

#: Why the losses of perf script text are unknown when it shows none (ParseCounts.loss_unknown).
PERF_LOSS_UNKNOWN: Final = (
    "perf script text shows the events perf lost (PERF_RECORD_LOST) only when made with --show-lost-events, and "
    "this one shows none: give kforensic trace the perf.data, or make the text with perf script --show-lost-events"
)

PLUGIN_STATE_LETTERS: dict[bytes, bytes] = {b"W": b"I", b"X": b"Z", b"K": b"D", b"x": b"Z"}


@dataclass
class ParseCounts:
    """What the parser saw: lines, events used, and everything it skipped."""

    lines: int = 0
    events: int = 0  # event lines (used or not)
    used: int = 0  # events turned into TraceEvent records
    comments: int = 0  # header lines starting with '#' and blank lines
    malformed: int = 0  # lines that look like events but could not be parsed (truncated, garbage)
    lost_markers: int = 0
    lost_events: int = 0
    # Why a text without lost-event markers may still have lost events ("": it would show them): perf script prints
    # perf's PERF_RECORD_LOST only when asked (--show-lost-events), so its text without one does not say.
    loss_unknown: str = ""
    unknown: dict[bytes, int] = field(default_factory=dict)  # event name -> count, events not analysed
    # Events read for something other than the scheduling analysis, by what they are (ASIDE_*): an LTTng
    # session's syscall entries/exits, statedump and user-space events; with ``used`` and ``unknown`` they count
    # every event.
    aside: dict[str, int] = field(default_factory=dict)
    cpus_declared: int | None = None  # from "#P:N" (tracefs) or "cpus=N" (trace-cmd)
    overwritten: int = 0  # events the tracefs ring buffer overwrote before the trace was read
    # The tracefs header's entries-in-buffer (None: no such header): with entries-written equal to it and as many
    # event lines read, the file holds every event each CPU recorded since tracing began (:attr:`complete`).
    entries: int | None = None
    tracer: str | None = None  # "# tracer: NAME" of tracefs text
    latency_headers: list[tuple[int, str]] = field(default_factory=list)  # irqsoff-style "# latency:" lines
    # The "#  => started at: SYMBOL" line after each of them (line no, SYMBOL): the interval's caller.
    latency_callers: list[tuple[int, str]] = field(default_factory=list)
    layout: str = "unknown"  # "bracket" (CPU in [..]) or "fused" (trace-cmd -l)
    first_malformed: list[tuple[int, str]] = field(default_factory=list)  # a few examples (line no, text)
    # Per CPU, the first and the last event the analyses skip (kind SKIPPED: of a kind not analysed, or a
    # sched_wakeup once sched_waking is known where the parser is asked to skip them): with the analysed ones, from
    # when to when the CPU reported.
    skipped_first: dict[int, TraceEvent] = field(default_factory=dict)
    skipped_last: dict[int, TraceEvent] = field(default_factory=dict)
    # An LTTng CPU's buffer: the begin of its first packet and the end of its last (seconds; timestamp_begin and
    # timestamp_end of the packet contexts).  It covered that time, whether the CPU had events in it or not.
    packet_span: dict[int, tuple[float, float]] = field(default_factory=dict)
    # The CPUs whose LTTng stream file ends inside a packet (StreamCut.cpu): their events after the cut were not read,
    # so a silence after it is the cut, not the CPU idle or running one task to the end (detectors.sched.freeze).
    cut_cpus: set[int] = field(default_factory=set)
    # The trace-cmd buffers (``record -B``; "" the top one) read as one stream that record the same events, and
    # those events (collectors.trace_input.shared_buffers): an event both traced is read twice.
    shared_buffers: tuple[str, ...] = ()
    shared_events: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        """The file holds every event written: its header says nothing was overwritten, and as many event lines
        were read as its buffer held (a file cut or edited since, or a read stopped early, is not complete)."""
        return self.entries is not None and not self.overwritten and self.events == self.entries

    def skipped(self, ev: TraceEvent) -> None:
        """Note an event the analyses skip (its CPU's first and last such)."""
        self.skipped_first.setdefault(ev.cpu, ev)
        self.skipped_last[ev.cpu] = ev


class StreamCut(NamedTuple):
    """An LTTng stream file that ends inside a packet (a copy cut short, a disk that filled): its events up to the
    cut were read, those after it were not (collectors.ctf.reader.Session.cuts)."""

    stream: str  # the stream file, relative to the session's root (``kernel/channel0_1``)
    at: int  # the byte the file ends at, inside a packet
    cpu: int = -1  # the cpu_id its packets name (-1: none says): a CPU silent after the cut is silent for it

    def said(self) -> str:
        """``events after byte 49980 of channel0_1 (the stream file ends inside a packet)``: what could not be
        judged (the examined block's could-not-judge line, a report's first paragraph)."""
        return f"events after byte {self.at} of {self.stream} (the stream file ends inside a packet)"
