"""The spans' records: marks, spans, the kernel table (sources and analysis share them) and the analysis' report."""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import numpy as np
import numpy.typing as npt

from forensics.model import NotAvailable
from forensics.types.arrays import distinct
from forensics.units import fmt_ms


@dataclass(frozen=True, slots=True)
class Ref:
    """One cited event: its time (trace seconds), CPU, where it stands (file:line or stream+byte) and its text."""

    ts: float
    cpu: int
    where: str
    text: str
    line_no: int = 0  # 1-based line (text traces) or position in the session (CTF: Session.locate), for the locator
    source: str = ""  # the file the locator points into
    # A CTF event's name, and the thread a user-space event's excerpt names (its vtid, -1 unknown; None: it names
    # none): what its excerpt with the payload it carried is rendered from (collectors.spans.UstPayloads.cite).
    event: str = ""
    tid: int | None = None
    stream: str = ""  # a CTF event's stream file (Session.stream_label): where the tracer may have lost its thread's


@dataclass(frozen=True, slots=True)
class Loss:
    """Events a user-space stream lost: the ring buffer was full (``events_discarded`` grew), or packets are missing.

    What the thread did then is not in the trace: a span across it is incomplete (detectors/spans/losses.py)."""

    start: float  # the time the events were lost in (trace seconds): from the end of the packet before
    end: float  # to the end of the packet that counts them (a lost packet: to the start of the next one)
    count: int  # events discarded; 0: packets lost, how many events unknown
    source: str  # the session (Ref.source)
    stream: str  # its stream file (Ref.stream)
    packet: int  # the packet that tells it (its index in the stream, as a cited event's "packet N")

    def text(self) -> str:
        """``ust/uid/0/64-bit/ch_0 packet 189: 5918 events discarded between 10.191392 and 10.211441``."""
        what = f"{self.count} events discarded" if self.count else "a packet lost"
        return f"{self.stream} packet {self.packet}: {what} between {self.start:.6f} and {self.end:.6f}"

    def overlaps(self, start: float, end: float) -> bool:
        """Whether events may have been lost between ``start`` and ``end``: the events that bound the window were
        recorded (the one at its end made the tracer switch packets), so only its inside counts."""
        return self.start < end and start < self.end


@dataclass(frozen=True, slots=True)
class Mark:
    """A user-space event that may open or close a span: a UST event, a trace_marker write, a CSV row's edge."""

    ts: float
    tid: int
    text: str  # the tracef message / marker text, or the provider event name
    ident: int | None  # an id field of a provider event
    ref: Ref
    kind: str = ""  # what call it marks, when its name does not say: lttng_ust_cyg_profile's ``addr=0x...``


@dataclass(frozen=True, slots=True)
class Span:
    """One request: opened and closed on one thread."""

    name: str
    tid: int
    key: str  # the id the two ends share ("" when paired by nesting)
    start: float
    end: float
    begin_ref: Ref
    end_ref: Ref
    # How many spans of the same name were open on the thread when it began (0: outermost).  A call nested in a
    # call of its own kind (lttng_ust_cyg_profile's func_entry/func_exit, a recursive request) is another
    # population: its baseline is the spans of its name at its depth (detectors.spans.findings).
    depth: int = 0
    kind: str = ""  # its start mark's kind (Mark.kind): the function of a lttng_ust_cyg_profile call
    # Events its thread's streams lost while it ran (detectors/spans/losses.py): its edges were recorded, what
    # happened between them is not all in the trace; it is left out of the baseline of the others.
    lost: tuple[Loss, ...] = ()

    @property
    def duration(self) -> float:
        """Seconds."""
        return self.end - self.start


SWITCH, WAKING, WAKEUP, WAKEUP_NEW = 1, 2, 3, 4
IRQ_ENTRY, IRQ_EXIT, SOFTIRQ_ENTRY, SOFTIRQ_EXIT = 5, 6, 8, 9
LOST = 17
SYSCALL_ENTRY, SYSCALL_EXIT = 100, 101
WAKES = (WAKING, WAKEUP, WAKEUP_NEW)


def _one_of(col: npt.NDArray[np.signedinteger], values: tuple[int, ...]) -> npt.NDArray[np.bool_]:
    """Where ``col`` is one of a few ``values``: ``np.isin`` without its row-sized integer temporaries (its
    lookup table subtracts and indexes: 6.2 MB at its peak on the 1.17 M int8 kinds of the x176 benchmark
    session's table, this 2.9 MB)."""
    out: npt.NDArray[np.bool_] = col == values[0]
    for v in values[1:]:
        out |= col == v
    return out


@dataclass(frozen=True)
class SyscallTable:
    """Per row of the kernel table, the syscall its CPU was in just before it (an LTTng session recorded with
    ``--syscall``).

    The breakdown only asks which syscall a thread was in when it blocked, and a session recorded with
    ``--syscall -a`` has five times more syscall events than scheduling ones: the reader works this out
    as it merges the events, and keeps none of them.
    """

    name: npt.NDArray[np.int32]  # per kernel row: the name id of the open syscall (``names``), -1 none
    ref: Callable[[int], Ref]  # per kernel row: its open syscall's entry event
    names: Callable[[int], str]
    events: int  # the syscall events of the trace

    def reordered(self, order: npt.NDArray[np.int64]) -> SyscallTable:
        """The same for the kernel rows taken in ``order``."""
        ref = self.ref
        return SyscallTable(self.name[order], lambda i: ref(int(order[i])), self.names, self.events)


@dataclass
class KernelTable:
    """Kernel events as columns, in time order (see the module docstring); ``ref(i)`` cites row ``i``."""

    # The integer columns are as narrow as their values allow (as the reader keeps them: kinds in one byte, pids
    # in four): read them as Python ints (int(), comparisons), not in numpy arithmetic that could overflow.
    kind: npt.NDArray[np.signedinteger]
    ts: npt.NDArray[np.float64]
    cpu: npt.NDArray[np.signedinteger]
    pid: npt.NDArray[np.signedinteger]
    prio: npt.NDArray[np.signedinteger]
    next_pid: npt.NDArray[np.signedinteger]
    next_prio: npt.NDArray[np.signedinteger]
    state: npt.NDArray[np.signedinteger]  # SWITCH: prev_state letter
    ref: Callable[[int], Ref]
    comm: Callable[[int], str]  # tid -> its comm (sched events, else an LTTng statedump's name)
    syscalls: SyscallTable | None = None
    # tid -> its scheduling policy (SCHED_FIFO, ...), or why it is unknown: an LTTng statedump may say
    policy: Callable[[int], str | NotAvailable] = lambda _tid: NotAvailable("the trace does not record it")
    # a sched_switch row -> the names it gives its previous and next task (None: names not kept)
    switch_names: Callable[[int], tuple[str, str]] | None = None
    # A table of the rows in windows only (collectors/span_windows.py): per window, its first row and, per CPU,
    # the rows of the IRQ/softirq entries open at its start (innermost last). None: every row is here.
    open_irqs: tuple[tuple[int, dict[int, tuple[int, ...]]], ...] | None = None
    # The times the trace does not cover, as (from, to, what): events a CPU lost, holes in the recording
    # (detectors.sched.sanity, as the analysis found them).  What a thread did then is unknown, on any CPU.
    gaps: tuple[tuple[float, float, str], ...] = ()

    def name_at(self, tid: int, at: float) -> str:
        """The thread's name at time ``at``: as its last sched_switch at or before then names it (its first one
        before that), else :attr:`comm`.  A thread that exec'd is ``sudo`` before and ``tcpdump`` after."""
        if tid == 0 or self.switch_names is None:
            return self.comm(tid)
        rows = self._named.get(tid)
        if rows is None:
            sw = self._switches
            rows = self._named[tid] = sw[(self.pid[sw] == tid) | (self.next_pid[sw] == tid)]
        if not len(rows):
            return self.comm(tid)
        r = int(rows[max(int(np.searchsorted(self.ts[rows], at, side="right")) - 1, 0)])
        prev, nxt = self.switch_names(r)
        return (nxt if self.next_pid[r] == tid else prev) or self.comm(tid)

    @property
    def has_syscalls(self) -> bool:
        """Whether the trace has syscall events."""
        return self.syscalls is not None and self.syscalls.events > 0

    def __post_init__(self) -> None:
        sw = np.flatnonzero(self.kind == SWITCH)
        self._switches = sw
        self._named: dict[int, npt.NDArray[np.int64]] = {}  # tid -> the switch rows that name it (name_at)
        self._cpus: dict[int, tuple[npt.NDArray[np.float64], npt.NDArray[np.int64], npt.NDArray[np.int64]]] = {}
        for c in distinct(self.cpu[sw]).tolist():
            rows = sw[self.cpu[sw] == c]
            self._cpus[c] = (self.ts[rows], self.next_pid[rows], rows)
        irq = np.flatnonzero(_one_of(self.kind, (IRQ_ENTRY, IRQ_EXIT, SOFTIRQ_ENTRY, SOFTIRQ_EXIT)))
        self._irq: dict[int, npt.NDArray[np.int64]] = {
            c: irq[self.cpu[irq] == c] for c in distinct(self.cpu[irq]).tolist()
        }
        lost = np.flatnonzero(self.kind == LOST)
        self.lost_ts = self.ts[lost]

    def current(self, cpu: int, ts: float) -> int | None:
        """The task running on ``cpu`` just before ``ts`` (None when no switch was seen there yet)."""
        got = self._cpus.get(cpu)
        if got is None:
            return None
        k = int(np.searchsorted(got[0], ts, side="left")) - 1
        return int(got[1][k]) if k >= 0 else None

    def ran_between(self, cpu: int, t0: float, t1: float) -> list[tuple[int, int, float]]:
        """Tasks that ran on ``cpu`` within [t0, t1]: (tid, prio, seconds), most time first (idle left out)."""
        got = self._cpus.get(cpu)
        if got is None:
            return []
        times, pids, rows = got
        a = max(int(np.searchsorted(times, t0, side="right")) - 1, 0)
        b = int(np.searchsorted(times, t1, side="left"))
        out: dict[int, list[float]] = {}
        for k in range(a, min(b, len(times))):
            start, end = max(float(times[k]), t0), min(float(times[k + 1]) if k + 1 < len(times) else t1, t1)
            tid = int(pids[k])
            if end > start and tid != 0:
                entry = out.setdefault(tid, [float(self.next_prio[rows[k]]), 0.0])
                entry[1] += end - start
        return sorted(((tid, int(v[0]), v[1]) for tid, v in out.items()), key=lambda x: -x[2])

    def irq_at(self, cpu: int, row: int) -> int | None:
        """The IRQ/softirq entry row open on ``cpu`` at event ``row`` (None when none)."""
        rows = self._irq.get(cpu)
        if rows is None:
            return None
        floor, held = 0, cast("tuple[int, ...]", ())
        if self.open_irqs is not None:  # back to the start of the row's window, then the handlers open there
            w = bisect.bisect_right([first for first, _o in self.open_irqs], row) - 1
            if w >= 0:
                floor, held = self.open_irqs[w][0], self.open_irqs[w][1].get(cpu, ())
        switches = self._cpus.get(cpu)
        if switches is not None:  # a handler never spans a context switch of its CPU (it runs with preemption
            # off; a PREEMPT_RT softirq runs in a task, which is then the waker): the CPU's last switch before the
            # row closes what was open, so an entry whose exit was not traced (the exit event enabled after it, at
            # the trace's start) does not stay open to the end of the trace (review 11 #1)
            s = int(np.searchsorted(switches[2], row, side="left")) - 1
            if s >= 0:
                last = int(switches[2][s])
                if last >= floor:
                    floor, held = last + 1, ()
                else:
                    held = tuple(h for h in held if h > last)
        k = int(np.searchsorted(rows, row, side="left")) - 1
        depth = 0
        while k >= 0 and rows[k] >= floor:  # the innermost open handler: walk back over closed pairs
            r = int(rows[k])
            if self.kind[r] in (IRQ_EXIT, SOFTIRQ_EXIT):
                depth += 1
            elif depth:
                depth -= 1
            else:
                return r
            k -= 1
        return held[-1 - depth] if depth < len(held) else None

    def irqs_between(self, cpu: int, t0: float, t1: float) -> list[tuple[float, float, int, int]]:
        """IRQ/softirq handlers on ``cpu`` clipped to [t0, t1]: (start, end, entry row, exit row)."""
        rows = self._irq.get(cpu)
        if rows is None:
            return []
        ts = self.ts[rows]
        a, b = int(np.searchsorted(ts, t0, side="left")), int(np.searchsorted(ts, t1, side="right"))
        out = []
        open_: list[int] = []
        for r in rows[a:b].tolist():
            if self.kind[r] in (IRQ_ENTRY, SOFTIRQ_ENTRY):
                open_.append(r)
            elif open_:
                e = open_.pop()
                if not open_:  # nested handlers count once, as the outermost
                    out.append((float(self.ts[e]), float(self.ts[r]), e, r))
        return out

    def syscall_at(self, row: int) -> tuple[str, Ref] | None:
        """The syscall open on the CPU of ``row`` (its name and entry event): the last syscall event before it.

        Before means earlier in time: a syscall event at the very time of ``row`` counts as after it.
        """
        if self.syscalls is None or self.syscalls.name[row] < 0:
            return None
        return self.syscalls.names(int(self.syscalls.name[row])), self.syscalls.ref(row)

    def thread_rows(self, tid: int) -> npt.NDArray[np.int64]:
        """Rows that change ``tid``'s state: its switches in and out, its wakeups."""
        k = self.kind
        sel = ((k == SWITCH) & ((self.pid == tid) | (self.next_pid == tid))) | (_one_of(k, WAKES) & (self.pid == tid))
        return np.flatnonzero(sel)


# ---------------------------------------------------------------- the span analysis (detectors/spans/)


@dataclass(frozen=True)
class SpanStats:
    """Latency figures of one span name (nearest-rank percentiles: each is the duration of a real span)."""

    name: str
    count: int
    p50: float
    p90: float
    p99: float
    p999: float
    max: float
    mean: float
    unmatched_starts: int
    unmatched_ends: int


@dataclass(frozen=True)
class Part:
    """One interval of a slow span's time: what the thread was doing, and the events that show it."""

    what: str  # running | irq | preempted | runnable | blocked | unknown
    start: float
    end: float
    cpu: int
    detail: str  # who preempted it, the state and waker, the IRQ
    refs: tuple[Ref, ...]
    by_tid: int | None = None  # the preempting task, or the waker
    by_comm: str = ""
    by_prio: int | None = None
    by_policy: str | NotAvailable | None = None  # the preempting task's or the waker's scheduling policy
    state: str = ""  # the blocked state (S, D, ...)
    syscall: str | NotAvailable | None = None
    chain: tuple[str, ...] = ()  # the waker chain, outermost first

    @property
    def duration(self) -> float:
        """Seconds."""
        return self.end - self.start


@dataclass(frozen=True)
class Breakdown:
    """Where a slow span's wall time went."""

    span: Span
    totals: tuple[tuple[str, float], ...]  # what -> seconds (running, irq, preempted, runnable, blocked, unknown)
    parts: tuple[Part, ...]
    migrations: int
    cpus: tuple[int, ...]
    note: str = ""  # e.g. the kernel trace does not cover the span


@dataclass(frozen=True)
class SpanReport:
    """Everything the span analysis found."""

    stats: tuple[SpanStats, ...]
    spans: tuple[Span, ...]
    slow: tuple[Breakdown, ...]
    sources: tuple[str, ...]
    notes: tuple[str, ...]


@dataclass(frozen=True)
class GanttRow:
    """One thread of a Gantt chart: its label and what it was doing (nothing without a kernel table)."""

    tid: int
    label: str
    parts: tuple[Part, ...]


@dataclass(frozen=True)
class GanttChart:
    """The threads around one slow span, over the span and a margin either side (trace seconds)."""

    span: Span
    start: float
    end: float
    rows: tuple[GanttRow, ...]


def explain(b: Breakdown) -> str:
    """One sentence: where the time went, largest first."""
    s = b.span
    if not b.totals:
        return f"{s.name} on TID {s.tid} took {fmt_ms(s.duration)} ({b.note or 'no breakdown'})."
    parts = sorted(b.totals, key=lambda kv: -kv[1])
    head = ", ".join(f"{what} {fmt_ms(sec)}" for what, sec in parts)
    worst = sorted((p for p in b.parts if p.what not in ("running",)), key=lambda p: -p.duration)[:2]
    why = "; ".join(f"{p.what} {fmt_ms(p.duration)}: {p.detail}" for p in worst)
    return f"{s.name} on TID {s.tid} took {fmt_ms(s.duration)}: {head}" + (f" ({why})" if why else "") + "."
