"""The kernel rows the breakdown of known slow spans reads, and no others: memory that does not grow with the trace.

:class:`~collectors.spans.KernelKeeper` keeps every kernel row (about 50 bytes a row with its record and
its open syscall: 60 MB for the 8.47 M events of the x176 benchmark session).  When the slow spans are
known before the kernel events go by (an LTTng session's user-space marks, read first), the breakdown of
span ``[t0, t1]`` reads (detectors/spans/breakdown.py, :class:`~forensics.types.spans.KernelTable`):

- the rows inside ``[t0, t1]``: its thread's switches and wakeups, the wakers' (followed inside the span),
  the IRQ handlers and the switches of the CPUs involved;
- from before ``t0`` only: the last row of the span's thread, the last ``sched_switch`` of each CPU (who was
  running, what ran meanwhile), the last and the first ``sched_switch`` naming each thread (its name then),
  and the IRQ/softirq handlers open on each CPU (who woke it from an interrupt).

:class:`WindowKeeper` keeps those: the rows inside the (merged) windows as columns with the record of
their batch, and the rows before each window's start it read as the window began (a few per CPU and per
thread, their records made at once).  The :class:`KernelTable` of these rows answers the breakdown's
questions as the whole table would: the same rows, the same records.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from collectors.spans import KEPT, Statedump, kernel_table, learn_comms, narrow
from forensics.types.arrays import distinct
from forensics.types.spans import (
    IRQ_ENTRY,
    IRQ_EXIT,
    SOFTIRQ_ENTRY,
    SOFTIRQ_EXIT,
    SWITCH,
    WAKES,
    KernelTable,
    SyscallTable,
)
from forensics.types.trace_batch import EventBatch

if TYPE_CHECKING:
    from forensics.types.trace import TraceEvent

# A row kept from before a window: its event id, its KEPT columns and time, and its record.
Row = tuple[int, tuple[int, ...], float, "TraceEvent"]
_IRQ_KINDS = (IRQ_ENTRY, IRQ_EXIT, SOFTIRQ_ENTRY, SOFTIRQ_EXIT)


def merged_windows(spans: list[tuple[float, float, int]]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """The ``[start, end]`` of the spans (tid last) joined where they overlap: starts and ends, ascending."""
    starts: list[float] = []
    ends: list[float] = []
    for t0, t1, _tid in sorted(spans):
        if starts and t0 <= ends[-1]:
            ends[-1] = max(ends[-1], t1)
        else:
            starts.append(t0)
            ends.append(t1)
    return np.array(starts, dtype=np.float64), np.array(ends, dtype=np.float64)


def _last_per_key(keys: npt.NDArray[np.int64], rows: npt.NDArray[np.intp]) -> dict[int, int]:
    """Per distinct key, the largest of its ``rows``."""
    if not len(keys):
        return {}
    order = np.argsort(rows, kind="stable")[::-1]
    uniq, first = np.unique(keys[order], return_index=True)
    return dict(zip(uniq.tolist(), rows[order][first].tolist(), strict=True))


def _first_per_key(keys: npt.NDArray[np.int64], rows: npt.NDArray[np.intp]) -> dict[int, int]:
    """Per distinct key, the smallest of its ``rows``."""
    if not len(keys):
        return {}
    order = np.argsort(rows, kind="stable")
    uniq, first = np.unique(keys[order], return_index=True)
    return dict(zip(uniq.tolist(), rows[order][first].tolist(), strict=True))


class WindowKeeper:
    """A batch sink in front of the engine (``inner``) that keeps what the breakdown of ``spans`` reads.

    ``spans``: ``(start, end, tid)`` of every span to be broken down (see the module docstring).
    """

    def __init__(self, inner: object, source: str, spans: list[tuple[float, float, int]]) -> None:
        self.inner = inner
        self.source = source
        self.where: Callable[[int], str] | None = None  # an LTTng session's names of its events (spans.cite)
        self.starts, self.ends = merged_windows(spans)
        self.span_tids = np.array(sorted({tid for _a, _b, tid in spans}), dtype=np.int64)
        self.comms: dict[int, str] = {0: "<idle>"}
        # The rows inside the windows: per column (KEPT, then the time and the event id) the chunks kept.
        self.cols: list[list[npt.NDArray[np.signedinteger]]] = [[] for _ in KEPT]
        self.ts: list[npt.NDArray[np.float64]] = []
        self.eids: list[npt.NDArray[np.int64]] = []
        self.records: dict[int, Callable[[int], TraceEvent]] = {}  # first event id of a batch -> its records
        # The state before the next window's start (see the module docstring), row by row.
        self.cpu_switch: dict[int, Row] = {}
        self.named_last: dict[int, Row] = {}
        self.named_first: dict[int, Row] = {}
        self.thread_last: dict[int, Row] = {}
        self.irq_stack: dict[int, list[Row]] = {}
        self.first: Row | None = None  # the first kernel row: the table is empty only when the trace is
        self.before: dict[int, Row] = {}  # the rows kept from before a window, by event id
        self.open_irqs: list[dict[int, list[int]]] = []  # per window, per CPU: the event ids of the open handlers
        self.begun = 0  # the windows whose start was passed

    @property
    def done(self) -> bool:
        """The engine has seen enough (a window ended)."""
        return bool(getattr(self.inner, "done", False))

    @property
    def past(self) -> bool:
        """The window (--window, --around) ended: the engine reads on only for each CPU's next event."""
        return bool(getattr(self.inner, "past", False))

    def inside(self, ts: npt.NDArray[np.float64]) -> npt.NDArray[np.bool_]:
        """Which rows of times ``ts`` lie in a window (the rows whose open syscall the reader notes)."""
        at = np.searchsorted(self.starts, ts, side="right") - 1
        if not len(self.ends):
            return np.zeros(len(ts), dtype=np.bool_)
        return (at >= 0) & (ts <= self.ends[np.maximum(at, 0)])

    def feed(self, batch: EventBatch) -> None:
        """Keep the batch's rows in windows and the state before the windows it starts; pass it on."""
        if self.past:  # nothing after the window is kept (the engine's reading on is not the breakdown's)
            self.inner.feed(batch)  # type: ignore[attr-defined]
            return
        learn_comms(self.comms, batch)
        n = len(batch)
        if n and self.first is None:
            self.first = self._row(batch, 0)
        inside = np.flatnonzero(self.inside(batch.ts))
        if len(inside):
            for kept, name in zip(self.cols, KEPT, strict=True):
                kept.append(narrow(getattr(batch, name)[inside]))
            self.ts.append(batch.ts[inside])
            self.eids.append(inside + batch.first_eid)
            self.records[batch.first_eid] = batch.event
        lo = 0
        while self.begun < len(self.starts) and n and self.starts[self.begun] <= batch.ts[-1]:
            at = int(np.searchsorted(batch.ts, self.starts[self.begun], side="left"))
            self._advance(batch, lo, at)
            self._begin()
            lo = at
        self._advance(batch, lo, n)
        feed = getattr(self.inner, "feed", None)
        if feed is not None:
            feed(batch)

    def _row(self, batch: EventBatch, i: int) -> Row:
        return (
            batch.first_eid + i,
            tuple(int(getattr(batch, name)[i]) for name in KEPT),
            float(batch.ts[i]),
            batch.event(i),
        )

    def _advance(self, batch: EventBatch, lo: int, hi: int) -> None:
        """The state before a window, moved past rows ``lo:hi`` of ``batch``."""
        if hi <= lo:
            return
        kind, pid, nxt, cpu = (getattr(batch, c)[lo:hi] for c in ("kind", "pid", "next_pid", "cpu"))
        sw = np.flatnonzero(kind == SWITCH)
        names, rows = np.concatenate([pid[sw], nxt[sw]]), np.concatenate([sw, sw])
        for tid, r in _first_per_key(names, rows).items():
            if tid not in self.named_first:
                self.named_first[tid] = self._row(batch, lo + r)
        if self.begun == len(self.starts):  # every window has begun: only the first names are still read
            return
        for c, r in _last_per_key(cpu[sw], sw).items():
            self.cpu_switch[c] = self._row(batch, lo + r)
        for tid, r in _last_per_key(names, rows).items():
            self.named_last[tid] = self._row(batch, lo + r)
        if len(self.span_tids):  # the rows of the spans' threads (KernelTable.thread_rows)
            wake = np.flatnonzero(np.isin(kind, WAKES) & np.isin(pid, self.span_tids))
            mine = [sw[np.isin(pid[sw], self.span_tids)], sw[np.isin(nxt[sw], self.span_tids)], wake]
            tids = np.concatenate([pid[mine[0]], nxt[mine[1]], pid[wake]])
            for tid, r in _last_per_key(tids, np.concatenate(mine)).items():
                self.thread_last[tid] = self._row(batch, lo + r)
        irq = np.flatnonzero(np.isin(kind, _IRQ_KINDS))
        for c in distinct(cpu[irq]).tolist():
            self._irqs(batch, lo, irq[cpu[irq] == c], c)

    def _irqs(self, batch: EventBatch, lo: int, rows: npt.NDArray[np.intp], cpu: int) -> None:
        """The handlers open on ``cpu`` after its IRQ rows ``rows`` (as KernelTable.irq_at pairs them: an exit
        closes the innermost open entry, an exit with none open closes nothing)."""
        kind = batch.kind[lo + rows]
        step = np.where((kind == IRQ_ENTRY) | (kind == SOFTIRQ_ENTRY), 1, -1)
        depth = np.cumsum(step)
        closed = max(0, -int(depth.min()))  # the exits that close handlers opened before these rows
        later_low = np.minimum.accumulate(depth[::-1])[::-1]  # the lowest depth from each row on
        still_open = rows[(step == 1) & (later_low == depth)]  # no later exit goes below its entry
        stack = self.irq_stack.get(cpu, [])
        stack = stack[: max(0, len(stack) - closed)]
        self.irq_stack[cpu] = stack + [self._row(batch, lo + int(r)) for r in still_open.tolist()]

    def _begin(self) -> None:
        """A window starts: keep the state before it."""
        rows = [*self.cpu_switch.values(), *self.named_last.values(), *self.thread_last.values()]
        for stack in self.irq_stack.values():
            rows += stack
        for row in rows:
            self.before.setdefault(row[0], row)
        self.open_irqs.append({c: [row[0] for row in stack] for c, stack in self.irq_stack.items() if stack})
        self.begun += 1

    def table(self, syscalls: SyscallTable | None = None, threads: Statedump | None = None) -> KernelTable:
        """The rows kept as a :class:`KernelTable` (time order): as the whole table for the spans' windows."""
        while self.begun < len(self.starts):  # windows that start after the last row
            self._begin()
        before = {**self.before}
        for row in [*self.named_first.values(), *([self.first] if self.first is not None else [])]:
            before.setdefault(row[0], row)
        in_eids = np.concatenate(self.eids) if self.eids else np.zeros(0, dtype=np.int64)
        ctx = sorted(before.values())
        eids = np.concatenate([in_eids, np.array([r[0] for r in ctx], dtype=np.int64)])
        eids, pick = np.unique(eids, return_index=True)  # time order; a row in a window kept once
        n_in = len(in_eids)
        ctx_cols = np.array([r[1] for r in ctx], dtype=np.int64).reshape(len(ctx), len(KEPT))
        cols = []
        for k, chunks in enumerate(self.cols):
            col = np.concatenate([*chunks, ctx_cols[:, k]])  # (as wide as the widest, then narrowed)
            cols.append(narrow(col[pick]))
        ts = np.concatenate([*self.ts, np.array([r[2] for r in ctx], dtype=np.float64)])[pick]
        firsts = np.array(sorted(self.records), dtype=np.int64)
        batches = [self.records[f] for f in firsts.tolist()]
        made = {r[0]: r[3] for r in ctx}

        def event(i: int) -> TraceEvent:
            eid = int(eids[i])
            if pick[i] >= n_in:  # a row from before a window
                return made[eid]
            b = int(np.searchsorted(firsts, eid, side="right")) - 1
            return batches[b](eid - int(firsts[b]))

        def switch_names(i: int) -> tuple[str, str]:
            ev = event(i)
            return ev.comm.decode("utf-8", "replace"), ev.next_comm.decode("utf-8", "replace")

        calls = None
        if syscalls is not None:  # noted for the rows in windows, in their order: the rows from before have none
            if len(syscalls.name) != n_in:
                raise AssertionError(f"open syscalls noted for {len(syscalls.name)} rows, {n_in} kept in windows")
            at = np.where(pick < n_in, np.searchsorted(in_eids, eids), -1)
            name = np.append(syscalls.name, np.int32(-1)).astype(np.int32)[at]  # (index -1: none)
            inner_ref = syscalls.ref
            calls = SyscallTable(name, lambda i: inner_ref(int(at[i])), syscalls.names, syscalls.events)
        starts = np.searchsorted(ts, self.starts, side="left").tolist()
        where = {int(e): i for i, e in enumerate(eids.tolist())}
        open_irqs = tuple(
            (s, {c: tuple(where[e] for e in stack) for c, stack in irqs.items()})
            for s, irqs in zip(starts, self.open_irqs, strict=True)
        )
        return kernel_table(cols, ts, event, self.source, self.comms, calls, threads, open_irqs, self.where)
