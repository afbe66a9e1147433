"""The scheduling analysis compiled: :class:`FastAnalyzer` gives SchedAnalyzer's results from columnar batches.

:class:`FastAnalyzer` has the surface of
:class:`~detectors.sched.analyzer.SchedAnalyzer` but is fed
:class:`~forensics.types.trace_batch.EventBatch` columns; the per-event state
machine runs compiled (:mod:`detectors.sched.engine_kernels`), doing the same
floating-point operations in the same order, so the :class:`TraceAnalysis` is
equal to SchedAnalyzer's, not merely close.

A batch's text is gone once :meth:`FastAnalyzer.feed` returns, so at the end
of each feed the events the state still refers to (current runs, pending
wakeups, worst intervals...) are materialised and kept, as are the comm texts
(a task's last comm, and the comm a blamed task had when it was blamed).
Kept events no longer referred to are dropped now and then: memory grows with
tasks, CPUs and IRQs, not with the trace.  At the end the state is exported
into a SchedAnalyzer and frozen by the same code (:mod:`detectors.sched.freeze`).
"""

from __future__ import annotations

import math
import weakref
from collections import deque
from typing import Any

import numpy as np
import numpy.typing as npt

from detectors.sched import engine_layout as k
from detectors.sched import rules
from detectors.sched.analyzer import SchedAnalyzer
from detectors.sched.buckets import BucketDigest
from detectors.sched.sanity import ClockMonitor
from detectors.sched.state import Accumulator, TaskState, VictimTally, move_of, off_span_of, task_wait
from detectors.sched.window import kinds_of, scan_after
from forensics.gcpause import gc_paused
from forensics.types.arrays import distinct
from forensics.types.sched import Blame, Move, ParseSummary, Thresholds, TraceAnalysis, Wait
from forensics.types.trace import PRIO_UNKNOWN, ParseCounts, TraceEvent
from forensics.types.trace_batch import EventBatch

Array = npt.NDArray[Any]
Comm = bytes | str  # a blamed task's comm: its text, or what SchedAnalyzer.comm says without one
Named = tuple[Comm, int]  # a blamed task's comm and prio then, from the event that last named it
_KEEP_MIN = 4096  # kept events checked for references when their number doubles past this


def _grow(a: Array, rows: int, fill: Any, axis: int = 0) -> Array:
    """``a`` with ``rows`` entries along ``axis``, the new ones set to ``fill`` (a scalar or a default row)."""
    shape = list(a.shape)
    old = shape[axis]
    shape[axis] = rows
    out: Array = np.empty(shape, dtype=a.dtype)
    out[...] = fill
    index = tuple(slice(0, old) if d == axis else slice(None) for d in range(a.ndim))
    out[index] = a
    return out


def _table(rows: int, default: tuple[Any, ...], dtype: type) -> Array:
    out: Array = np.empty((rows, len(default)), dtype=dtype)
    out[...] = np.array(default, dtype=dtype)
    return out


class _Tables:
    """The arrays and typed dicts the kernel works on, and their growth."""

    def __init__(self, sc: Array, timeline: bool, digest: bool, kernels: Any) -> None:
        self.kernels = kernels
        self.sc = sc
        self.si = np.zeros(k.NSI, dtype=np.int64)
        self.si[k.S_OFFACC : k.S_OFFACC + 2] = -1
        self.si[k.S_TLON] = timeline
        self.si[k.S_DGON] = digest
        self.si[k.S_TLMAX] = rules.TIMELINE_MAX_RUNS
        self.maps = kernels.new_maps()
        free = getattr(kernels, "free", None)
        if free is not None:  # handles of typed dicts made ahead-of-time code: given back with the tables
            weakref.finalize(self, free, self.maps)
        self.ci = _table(8, k.CI_DEFAULT, np.int64)
        self.ci[:, k.C_CPU] = np.arange(8)
        self.cf = _table(8, k.CF_DEFAULT, np.float64)
        self.stk_i = np.zeros((8, 4, 2), dtype=np.int64)
        self.stk_f = np.zeros((8, 4))
        self.ring_i = np.zeros((4, k.RING, 2), dtype=np.int64)
        self.ring_f = np.zeros((4, k.RING, 2))
        self.ring_h = np.zeros((4, 2), dtype=np.int64)
        self.pos = np.full(257, -1, dtype=np.int64)  # scratch of engine_kernels.behind, per task slot + 1
        self.pid_slot = np.full(1024, -1, dtype=np.int32)
        self.ti = _table(256, k.TI_DEFAULT, np.int64)
        self.tf = _table(256, k.TF_DEFAULT, np.float64)
        self.wb_i = np.zeros((512, 5, k.NB), dtype=np.int64)
        self.wb_f = np.zeros((512, rules.BLAMES + 3))  # seconds, then Wait.unseen, more_seconds, more
        self.wb_n = np.zeros(512, dtype=np.int64)
        self.wb_q = np.zeros((512, k.NQ), dtype=np.int64)  # the CPU each worst wait was queued on, how it moved
        self.oi = _table(256, k.OI_DEFAULT, np.int64)
        self.of = _table(256, k.ACC_F_DEFAULT, np.float64)
        self.irq_i = np.zeros((64, 3), dtype=np.int64)
        self.soft_i = np.zeros((16, 3), dtype=np.int64)
        self.raised_eid = np.full((8, 16), -1, dtype=np.int64)
        self.raised_ts = np.zeros((8, 16))
        self.sw_i = np.zeros((16, 5, k.NB), dtype=np.int64)
        self.sw_f = np.zeros((16, rules.BLAMES + 3))
        self.sw_n = np.zeros(16, dtype=np.int64)
        self.ow_i = np.zeros((2, rules.OFF_KEEP + 1, 3), dtype=np.int64)
        self.ow_f = np.zeros((2, rules.OFF_KEEP + 1, 2))
        # (culprit slot, victim pid, waits), (seconds, worst, key, running): TaskState.victims (VictimTally); room
        # for the two waits a row ends
        self.vic_i = np.zeros((4 * (k.RING + 1), 3), dtype=np.int64)
        self.vic_f = np.zeros((4 * (k.RING + 1), 4))
        self.vic_dense = np.full((k.VIC_DENSE, k.VIC_DENSE), -1, dtype=np.int32)  # (culprit, victim slot) -> row
        self.pb_i = np.zeros((256, 3), dtype=np.int64)
        self.tl_i = np.zeros((1 << 14 if timeline else 1, 2), dtype=np.int64)
        self.tl_f = np.zeros((len(self.tl_i), 2))
        self.dg_i = np.zeros((1 << 14 if digest else 2, 3), dtype=np.int64)
        self.dg_f = np.zeros((len(self.dg_i), 3))

    def args(self) -> tuple[Any, ...]:
        """The state arguments of :func:`engine_kernels.run_batch` (after the batch columns)."""
        return (
            self.sc,
            self.si,
            self.ci,
            self.cf,
            self.stk_i,
            self.stk_f,
            self.ring_i,
            self.ring_f,
            self.ring_h,
            self.pos,
            *self.maps,
            self.pid_slot,
            self.ti,
            self.tf,
            self.wb_i,
            self.wb_f,
            self.wb_n,
            self.wb_q,
            self.oi,
            self.of,
            self.irq_i,
            self.soft_i,
            self.raised_eid,
            self.raised_ts,
            self.sw_i,
            self.sw_f,
            self.sw_n,
            self.ow_i,
            self.ow_f,
            self.vic_i,
            self.vic_f,
            self.vic_dense,
            self.pb_i,
            self.tl_i,
            self.tl_f,
            self.dg_i,
            self.dg_f,
        )

    def _deepen_rings(self) -> None:
        """Double the depth of every CPU's ring of runs (up to rules.RECENT_MAX), each ring's runs oldest first."""
        depth = self.ring_i.shape[1]
        new = min(2 * depth, rules.RECENT_MAX)
        head, count = self.ring_h[:, 0], self.ring_h[:, 1]
        order = (head[:, None] - count[:, None] + np.arange(depth)[None, :]) % depth  # oldest first, per ring
        rows = np.arange(len(head))[:, None]
        ring_i = np.zeros((len(head), new, 2), dtype=np.int64)
        ring_f = np.zeros((len(head), new, 2))
        ring_i[:, :depth] = self.ring_i[rows, order]
        ring_f[:, :depth] = self.ring_f[rows, order]
        self.ring_i, self.ring_f = ring_i, ring_f
        self.ring_h[:, 0] = count % new  # the next run is written after the last kept

    def refs(self) -> Array:
        """Every event id the state refers to."""
        return self.kernels.state_refs(  # type: ignore[no-any-return]
            self.si, self.ci, self.stk_i, self.ti, self.oi, self.raised_eid, self.maps[5], self.ow_i
        )

    def grow(self, need: int) -> None:
        """Enlarge what ``need`` (the kernel's ``N_*`` flags) names; logs are flushed by the caller instead."""
        si = self.si
        if need & k.N_SLOTS:
            n = 2 * len(self.ti)
            self.ti = _grow(self.ti, n, np.array(k.TI_DEFAULT))
            self.tf = _grow(self.tf, n, np.array(k.TF_DEFAULT))
            self.wb_i = _grow(self.wb_i, 2 * n, 0)
            self.wb_f = _grow(self.wb_f, 2 * n, 0.0)
            self.wb_n = _grow(self.wb_n, 2 * n, 0)
            self.wb_q = _grow(self.wb_q, 2 * n, 0)
            self.pos = _grow(self.pos, n + 1, -1)
        if need & k.N_OACC:
            self.oi = _grow(self.oi, 2 * len(self.oi), np.array(k.OI_DEFAULT))
            self.of = _grow(self.of, 2 * len(self.of), np.array(k.ACC_F_DEFAULT))
        if need & k.N_IRQ:
            self.irq_i = _grow(self.irq_i, 2 * len(self.irq_i), 0)
        if need & k.N_SOFT:
            n = 2 * len(self.soft_i)
            self.soft_i = _grow(self.soft_i, n, 0)
            self.raised_eid = _grow(self.raised_eid, n, -1, axis=1)
            self.raised_ts = _grow(self.raised_ts, n, 0.0, axis=1)
            self.sw_i = _grow(self.sw_i, n, 0)
            self.sw_f = _grow(self.sw_f, n, 0.0)
            self.sw_n = _grow(self.sw_n, n, 0)
        if need & k.N_VIC:
            self.vic_i = _grow(self.vic_i, 2 * len(self.vic_i), 0)
            self.vic_f = _grow(self.vic_f, 2 * len(self.vic_f), 0.0)
        if need & k.N_PB:
            self.pb_i = _grow(self.pb_i, 2 * len(self.pb_i), 0)
        if need & k.N_RING:
            n = 2 * len(self.ring_h)
            self.ring_i = _grow(self.ring_i, n, 0)
            self.ring_f = _grow(self.ring_f, n, 0.0)
            self.ring_h = _grow(self.ring_h, n, 0)
        if need & k.N_CPU:
            old = len(self.ci)
            n = max(2 * old, int(si[k.S_NEED_CPU]))
            self.ci = _grow(self.ci, n, np.array(k.CI_DEFAULT))
            self.ci[old:, k.C_CPU] = np.arange(old, n)
            self.cf = _grow(self.cf, n, np.array(k.CF_DEFAULT))
            self.stk_i = _grow(self.stk_i, n, 0)
            self.stk_f = _grow(self.stk_f, n, 0.0)
            self.raised_eid = _grow(self.raised_eid, n, -1)
            self.raised_ts = _grow(self.raised_ts, n, 0.0)
        if need & k.N_PID:
            n = min(k.PID_DIRECT, max(2 * len(self.pid_slot), int(si[k.S_NEED_PID])))
            self.pid_slot = _grow(self.pid_slot, n, -1)
        if need & k.N_RUNS:
            self._deepen_rings()
        if need & k.N_DEPTH:
            n = max(2 * self.stk_i.shape[1], int(si[k.S_NEED_DEPTH]))
            self.stk_i = _grow(self.stk_i, n, 0, axis=1)
            self.stk_f = _grow(self.stk_f, n, 0.0, axis=1)


class FastAnalyzer:
    """SchedAnalyzer fed :class:`EventBatch` columns, compiled; :meth:`result` equals SchedAnalyzer's.

    ``window`` limits what is counted to ``[t0, t1]``; ``bucket`` (seconds)
    enables the per-bucket digest; ``timeline`` keeps the runs for the PNG
    timeline (:attr:`timeline`, as SchedAnalyzer's).  ``kernels`` runs the state machine:
    :mod:`detectors.sched.engine_kernels` (numba, the default) or the same kernels compiled ahead of
    time (:func:`detectors.sched.engine_aot.kernels`: no numba loaded).
    """

    def __init__(
        self,
        thresholds: Thresholds | None = None,
        window: tuple[float, float] = (-math.inf, math.inf),
        bucket: float | None = None,
        timeline: bool = False,
        kernels: Any = None,
    ) -> None:
        self.thresholds = thresholds or Thresholds()
        self.w0, self.w1 = window
        self.digest = BucketDigest(bucket) if bucket else None
        self.done = False  # True once nothing more is to be read (SchedAnalyzer.done)
        self.past = False  # SchedAnalyzer.past, after and end_ts: past the window, each CPU's next event
        self.after: dict[int, TraceEvent] = {}
        self.end_ts = -math.inf
        self._seen: set[int] = set()  # the CPUs seen up to the window's end (SchedAnalyzer.last's)
        self.kinds: set[int] = set()  # SchedAnalyzer.kinds: the kinds of the events read
        self.timeline: list[tuple[int, float, float, int]] | None = [] if timeline else None
        sc = np.zeros(k.NSC)
        sc[k.X_BARRIER] = sc[k.X_HARD] = -math.inf
        sc[k.X_FIRSTTS] = math.inf
        sc[k.X_W0], sc[k.X_W1] = self.w0, self.w1
        sc[k.X_HOG], sc[k.X_OFFT] = self.thresholds.hog, self.thresholds.offtime
        if kernels is None:
            from detectors.sched import engine_kernels as kernels
        self._t = _Tables(sc, timeline, self.digest is not None, kernels)
        self._events: dict[int, TraceEvent] = {}  # kept events by id
        self._keep_limit = _KEEP_MIN
        self._comm: list[bytes] = []  # per task slot, its last comm
        self._irq_name: list[bytes] = []  # per IRQ row, its last name
        self._prio: list[int] = []  # per task slot, the prio of the event that last named it (its own)
        # (0, task wait row) / (1, softirq row) -> each blamed task's comm and prio
        self._blames: dict[tuple[int, int], tuple[Named, ...]] = {}
        self._moved: dict[int, tuple[TraceEvent, ...]] = {}  # a worst wait's row -> its sched_migrate_task events
        self.clock = ClockMonitor()  # per-CPU timestamps going back, from the columns (detectors.sched.sanity)
        self.first_in: dict[int, TraceEvent] = {}  # SchedAnalyzer.first_in: each CPU's first event in the window

    def feed(self, batch: EventBatch) -> None:
        """Process a batch (trace order); past the window, only each CPU's next event (``after``), then ``done``."""
        if self.past:
            self._after_window(batch, 0)
            return
        if self.digest is not None and len(self.digest.cells) > rules.MAX_BUCKET_CELLS:
            self.digest.bound()
        cols = tuple(
            np.ascontiguousarray(c)
            for c in (
                batch.kind,
                batch.ts,
                batch.cpu,
                batch.pid,
                batch.prio,
                batch.next_pid,
                batch.next_prio,
                batch.state,
                batch.work,
            )
        )
        t = self._t
        # The rows the kernel will consume (it stops at the first event past the window's end), and among them
        # the holes in the recording (detectors.sched.sanity): the kernel runs up to each, then the barrier is set
        # as SchedAnalyzer._feed sets it there (the latest time any CPU reached), and it runs on.
        late = np.flatnonzero((cols[1] > self.w1) & (cols[0] != rules.LOST))
        holes = self.clock.feed_batch(batch, int(late[0]) if len(late) else len(batch))
        row = 0
        for stop in [*holes, len(batch)]:
            part = cols if stop == len(batch) else tuple(c[:stop] for c in cols)
            while True:
                code, row = t.kernels.run_batch(row, batch.first_eid, *part, *t.args())
                self._flush()
                if code != k.GROW:
                    break
                t.grow(int(t.si[k.S_NEED]) & ~(k.N_TL | k.N_DG))
            if code == k.DONE or stop == len(batch):
                break
            order = t.ci[: int(t.si[k.S_NSEEN]), k.C_ORDER]
            t.sc[k.X_BARRIER] = max(float(t.sc[k.X_BARRIER]), float(t.cf[order, k.F_LAST_TS].max()))
            t.sc[k.X_HARD] = max(float(t.sc[k.X_HARD]), float(t.sc[k.X_BARRIER]))  # a hole: SchedAnalyzer.hard
        if self.w0 > -math.inf:
            self._first_in(batch, row if code == k.DONE else len(batch))
            self.kinds.update(kinds_of(batch.kind[: row if code == k.DONE else len(batch)]))
        self._keep(batch)
        if code == k.DONE:  # the window's end: from here on only each CPU's next event is looked for
            self.past = True
            t = self._t
            order = t.ci[: int(t.si[k.S_NSEEN]), k.C_ORDER]
            self._seen = set(t.ci[order, k.C_CPU].tolist())
            self._after_window(batch, row)

    def _after_window(self, batch: EventBatch, start: int) -> None:
        """SchedAnalyzer._after_window over the rows ``start..`` of ``batch`` (detectors.sched.window)."""
        self.done, latest = scan_after(batch, start, self._seen, self.after, self.kinds)
        self.end_ts = max(self.end_ts, latest)

    def _first_in(self, batch: EventBatch, fed: int) -> None:
        """Each CPU's first event at or after the window's start among the ``fed`` first rows of ``batch``."""
        ts, cpu = np.asarray(batch.ts[:fed]), np.asarray(batch.cpu[:fed])
        rows = np.flatnonzero((ts >= self.w0) & (np.asarray(batch.kind[:fed]) != rules.LOST))
        cpus, at = np.unique(cpu[rows], return_index=True)
        for c, row in zip(cpus.tolist(), rows[at].tolist(), strict=True):
            if c not in self.first_in:
                self.first_in[c] = batch.event(row)

    def _flush(self) -> None:
        """Hand the logged timeline runs and digest calls to their Python owners, in order."""
        t = self._t
        si = t.si
        n = int(si[k.S_TL])
        if n and self.timeline is not None:
            cpu, pid = t.tl_i[:n, 0].tolist(), t.tl_i[:n, 1].tolist()
            self.timeline.extend(zip(cpu, t.tl_f[:n, 0].tolist(), t.tl_f[:n, 1].tolist(), pid, strict=True))
        si[k.S_TL] = 0
        n = int(si[k.S_DG])
        if n and self.digest is not None:
            add, latency = self.digest.add, self.digest.latency
            ints, floats = t.dg_i[:n].tolist(), t.dg_f[:n].tolist()
            for (what, cpu, pid), (a, b, _c) in zip(ints, floats, strict=True):
                if what == rules.BUCKET_LATENCY:
                    latency(cpu, a, b, pid)
                else:
                    add(cpu, a, b, pid, what)
        si[k.S_DG] = 0

    def _keep(self, batch: EventBatch) -> None:
        """Materialise what the state refers to in ``batch`` (events, comms, IRQ names, blamed comms)."""
        t = self._t
        first = batch.first_eid
        nslots = int(t.si[k.S_NSLOTS])
        ti = t.ti[:nslots]
        # What refers to this batch: waits set in it (their blames), comms, IRQ names, events of the state.
        task_waits = np.concatenate(
            (
                np.flatnonzero(ti[:, k.T_ACC + 4 * k.A_WAKE + k.A_END] >= first) * 2,
                np.flatnonzero(ti[:, k.T_ACC + 4 * k.A_PREEMPT + k.A_END] >= first) * 2 + 1,
            )
        )
        raise_acc = t.soft_i[: int(t.si[k.S_NSOFT]), 2]
        soft_waits = np.flatnonzero((raise_acc >= 0) & (t.oi[raise_acc, k.A_END] >= first))
        comm_refs = ti[:, k.T_COMM]
        comm_slots = np.flatnonzero(comm_refs >= 2 * first)
        comm_refs = comm_refs[comm_slots]
        irq_eids = t.irq_i[: int(t.si[k.S_NIRQ]), 1]
        irq_rows = np.flatnonzero(irq_eids >= first)
        refs = t.refs()
        state = (refs[refs >= first] - first).tolist()
        blame_refs = np.concatenate((t.wb_i[task_waits, :, 1].ravel(), t.sw_i[soft_waits, :, 1].ravel()))
        blame_refs = blame_refs[blame_refs >= 2 * first]
        rows = np.concatenate(((comm_refs >> 1) - first, irq_eids[irq_rows] - first, (blame_refs >> 1) - first))
        wanted = set(rows.tolist())
        wanted.update(state)
        # The sched_migrate_task events that moved the waits set in this batch (Wait.moves): of this batch,
        # or of an earlier one, kept since (engine_kernels.state_refs names them while the wait is in progress).
        moved = task_waits[t.wb_q[task_waits, k.Q_N] > 0].tolist()
        move_eids = {
            row: t.wb_q[row, k.Q_MOVE + 2 : k.Q_MOVE + 3 * int(t.wb_q[row, k.Q_N]) : 3].tolist() for row in moved
        }
        wanted.update(e - first for eids in move_eids.values() for e in eids if e >= first)
        event = batch.event
        events = {row: event(row) for row in wanted}
        for row, eids in move_eids.items():
            self._moved[row] = tuple(events[e - first] if e >= first else self._events[e] for e in eids)
        # Blames first: a comm reference from an earlier batch is the comm text as it was before this batch.
        blames = self._blames
        for group, waits, table, sizes in ((0, task_waits, t.wb_i, t.wb_n), (1, soft_waits, t.sw_i, t.sw_n)):
            if len(waits):
                for row, found, n in zip(waits.tolist(), table[waits].tolist(), sizes[waits].tolist(), strict=True):
                    blames[(group, row)] = self._blame_comms(found[:n], first, events)
        comm, prio = self._comm, self._prio
        comm.extend([b""] * (nslots - len(comm)))
        prio.extend([PRIO_UNKNOWN] * (nslots - len(prio)))
        for slot, ref in zip(comm_slots.tolist(), comm_refs.tolist(), strict=True):
            ev = events[(ref >> 1) - first]
            comm[slot], prio[slot] = (ev.next_comm, ev.next_prio) if ref & 1 else (ev.comm, ev.prio)
        names = self._irq_name
        names.extend([b""] * (len(irq_eids) - len(names)))
        for r, eid in zip(irq_rows.tolist(), irq_eids[irq_rows].tolist(), strict=True):
            names[r] = events[eid - first].state
        kept = self._events
        for row in state:
            kept[first + row] = events[row]
        if len(kept) > self._keep_limit:
            self._events = {e: kept[e] for e in distinct(refs).tolist()}
            self._keep_limit = max(_KEEP_MIN, 2 * len(self._events))

    def _blame_comms(self, blames: list[list[int]], first: int, events: dict[int, TraceEvent]) -> tuple[Named, ...]:
        """The comm and prio of each blamed task as they were when it was blamed (SchedAnalyzer.comm then, bytes
        undecoded; its prio from the same event of its own)."""
        out: list[Named] = []
        for pid, ref, slot, _cpu in blames:
            if ref >= 2 * first:
                ev = events[(ref >> 1) - first]
                out.append((ev.next_comm, ev.next_prio) if ref & 1 else (ev.comm, ev.prio))
            elif ref >= 0:
                out.append((self._comm[slot], self._prio[slot]))
            else:
                out.append(("<idle>" if ref == -1 else f"pid {pid}", PRIO_UNKNOWN))
        return tuple(out)

    # -- result --------------------------------------------------------------------------------

    def result(self, counts: ParseCounts) -> TraceAnalysis:
        """Freeze everything into a :class:`TraceAnalysis` (SchedAnalyzer's, by the same code)."""
        from detectors.sched.freeze import freeze_analysis

        with gc_paused():  # thousands of records, none in a cycle
            return freeze_analysis(self.export(), counts)

    def summary(self, counts: ParseCounts) -> ParseSummary:
        """The reader's counts as a typed record."""
        from detectors.sched.freeze import parse_summary

        return parse_summary(counts)

    def _export_waits(self, an: SchedAnalyzer, nslots: int) -> None:
        """The tasks woken, or preempted, that have not run since (SchedAnalyzer.pending_wake, preempted)."""
        rows = self._t.ti[:nslots]
        for col, into in ((k.T_PEND, an.pending_wake), (k.T_PRE, an.preempted)):
            for pid, eid in rows[rows[:, col] >= 0][:, [k.T_PID, col]].tolist():
                into[pid] = self._events[eid]
        cpus = self._t.ci[:, k.C_CPU]
        for pid, slot in rows[rows[:, k.T_PEND] >= 0][:, [k.T_PID, k.T_PEND_SLOT]].tolist():
            an.wake_cpu[pid] = int(cpus[slot])  # where it is queued (SchedAnalyzer.queued_on)
        # Read by freeze._close_open_waits with a window, and without one for a CPU that ran its task to the end.
        self._export_queues(an, nslots)

    def _export_queues(self, an: SchedAnalyzer, nslots: int) -> None:
        """What closing the waits open at a window's or the trace's end reads (freeze._close_open_waits): the CPU each
        waiting task's queue is on, since when, and its wait's moves (SchedAnalyzer.wait_cpu, wait_since,
        wait_first, moves; a wait of an older epoch was cleared by a loss), and each CPU's ring of recent runs
        (SchedAnalyzer.recent, oldest first).  A wait moved more often than the moves kept has one more entry, a
        copy of the last: only how many there are is read of those past rules.MOVES (state.wait_parts)."""
        t = self._t
        ti, tf = t.ti[:nslots], t.tf[:nslots]
        cpus = t.ci[:, k.C_CPU].tolist()
        waiting = np.flatnonzero((ti[:, k.T_WCPU] >= 0) & (ti[:, k.T_WEP] == t.si[k.S_EPOCH]))
        for ints, floats in zip(ti[waiting].tolist(), tf[waiting].tolist(), strict=True):
            pid = ints[k.T_PID]
            an.wait_cpu[pid] = cpus[ints[k.T_WCPU]]
            an.wait_since[pid] = floats[k.TF_WAIT_TS]
            if not math.isnan(floats[k.TF_WAIT0]):
                an.wait_first[pid] = floats[k.TF_WAIT0]
            n = ints[k.T_MV_N]
            if n:
                mv = ints[k.T_MV :]
                hist = [
                    (self._events[mv[3 * j + 2]], cpus[mv[3 * j]], cpus[mv[3 * j + 1]]) for j in range(min(n, k.MOVES))
                ]
                an.moves[pid] = hist + hist[-1:] * (n > k.MOVES)
        ring_i, ring_f, ring_h = t.ring_i, t.ring_f, t.ring_h
        for cpu, r in t.ci[: int(t.si[k.S_CPUHI])][:, [k.C_CPU, k.C_RING]].tolist():
            if r < 0:  # no run ended there yet
                continue
            head, count = ring_h[r].tolist()
            depth = ring_i.shape[1]
            order = [(head - count + j) % depth for j in range(count)]
            pids = ring_i[r, order, 0].tolist()
            spans = ring_f[r, order].tolist()
            an.recent[cpu] = deque((p, a, b) for p, (a, b) in zip(pids, spans, strict=True))

    def _export_preemptors(self, tasks: list[TaskState]) -> None:
        """Who preempted each task, and whom RT throttling switched it out for (keyed ~pid by the kernel)."""
        t = self._t
        for owner, pid, times in t.pb_i[: t.si[k.S_NPB]].tolist():
            if pid < 0:  # an RT throttling switch-out (engine_kernels.switch_out)
                tasks[owner].throttled_for[~pid] = times
            else:
                tasks[owner].preempted_by[pid] = times

    def export(self) -> SchedAnalyzer:
        """A SchedAnalyzer holding this state (what :func:`freeze_analysis` reads); a new one per call."""
        t = self._t
        si, sc = t.si.tolist(), t.sc.tolist()
        ev = self._events
        an = SchedAnalyzer(self.thresholds, (self.w0, self.w1), None, False)
        an.digest = self.digest
        an.timeline = self.timeline
        an.done, an.past, an.after, an.end_ts = self.done, self.past, dict(self.after), self.end_ts
        an.clock = self.clock
        an.barrier, an.hard = sc[k.X_BARRIER], sc[k.X_HARD]
        an.first_ts = sc[k.X_FIRSTTS]
        an.first_in = dict(self.first_in)
        an.seen_waking = bool(si[k.S_SEENWAKING])
        an.wakeup_placed = si[k.S_SEENWAKING] == 2  # the kernels' code of a sched_wakeup read after a waking
        an.migrations = int(si[k.S_MIGR])
        an.kinds = set(self.kinds)
        an.lost_markers, an.lost_events = si[k.S_LOSTM], si[k.S_LOSTE]
        an.wake_sources = {kind: si[k.S_WS + kind] for kind in rules.WAKE_SOURCES if si[k.S_WS + kind]}

        def acc(ints: list[int], floats: list[float]) -> Accumulator:
            a = Accumulator()
            a.count, a.worst_cpu, begin, end = ints
            a.total, a.worst, a.worst_start = floats
            a.worst_begin = ev[begin] if begin >= 0 else None
            a.worst_end = ev[end] if end >= 0 else None
            return a

        def wait(
            a: Accumulator,
            blames: tuple[Array, Array],
            n: int,
            comms: tuple[Named, ...],
            source: str,
            waiter: int = -1,
            queued: tuple[int, int] = (-1, rules.MOVED_NO),
            moves: tuple[Move, ...] = (),
        ) -> Wait | None:
            """The worst wait of ``a``: task ``waiter``'s (``queued``: its CPU, rules.MOVED), or a softirq's (-1)."""
            if a.worst_begin is None or a.worst_end is None:
                return None
            behind = tuple(
                Blame(pid, comm.decode("utf-8", "replace") if isinstance(comm, bytes) else comm, seconds, prio, cpu)
                for (pid, _ref, _slot, cpu), seconds, (comm, prio) in zip(
                    blames[0][:n].tolist(), blames[1][:n].tolist(), comms, strict=True
                )
            )
            unseen = float(blames[1][rules.BLAMES])
            more = (int(blames[1][rules.BLAMES + 2]), float(blames[1][rules.BLAMES + 1]))
            end, (cpu, moved) = a.worst_end, queued
            return task_wait(
                waiter, a.worst_start, end.ts, a.worst_cpu, a.worst_begin, end, behind, source, unseen, cpu,
                rules.MOVED[moved], moves, more,
            )  # fmt: skip

        tasks: list[TaskState] = []
        nslots = si[k.S_NSLOTS]
        for slot, (ints, floats) in enumerate(zip(t.ti[:nslots].tolist(), t.tf[:nslots].tolist(), strict=True)):
            ts = TaskState(self._comm[slot], ints[k.T_PRIO])
            ts.runtime, ts.delay_caused = floats[k.TF_RUNTIME], floats[k.TF_DELAY]
            ts.hog_runs = ints[k.T_HOG]
            ts.unseen_wakes, ts.unseen_cpu = ints[k.T_UNSEEN], ints[k.T_UNSEEN_CPU]
            figs = [acc(ints[k.T_ACC + 4 * a : k.T_ACC + 4 * a + 4], floats[k.TF_ACC + 3 * a : k.TF_ACC + 3 * a + 3])
                    for a in range(3)]  # fmt: skip
            ts.runs, ts.wakeup, ts.preempt_wait = figs
            for which, fig in ((0, ts.wakeup), (1, ts.preempt_wait)):
                row = 2 * slot + which
                begin = fig.worst_begin.kind if fig.worst_begin else 0
                source = "preemption" if which else rules.WAKE_SOURCES.get(begin, "")
                blames = (t.wb_i[row], t.wb_f[row])
                comms = self._blames.get((0, row), ())
                q = t.wb_q[row].tolist()
                moves = tuple(
                    move_of(mev, q[k.Q_MOVE + 3 * j], q[k.Q_MOVE + 3 * j + 1])
                    for j, mev in enumerate(self._moved.get(row, ()) if q[k.Q_N] else ())
                )
                found = wait(fig, blames, int(t.wb_n[row]), comms, source, ints[k.T_PID], (q[0], q[1]), moves)
                if which:
                    ts.worst_preempt_wait = found
                else:
                    ts.worst_wakeup = found
            tasks.append(ts)
            an.tasks[ints[k.T_PID]] = ts
        self._export_waits(an, nslots)
        self._export_preemptors(tasks)
        for (owner, pid, waits), (seconds, worst, key, running) in zip(
            t.vic_i[: si[k.S_NVIC]].tolist(), t.vic_f[: si[k.S_NVIC]].tolist(), strict=True
        ):
            tally = tasks[owner].victims[pid] = VictimTally()
            tally.seconds, tally.waits, tally.worst, tally.key, tally.running = seconds, waits, worst, key, running
        soft_row = {vec: v for v, vec in enumerate(t.soft_i[: si[k.S_NSOFT], 0].tolist())}
        no = si[k.S_NOACC]
        for ints, floats in zip(t.oi[:no].tolist(), t.of[:no].tolist(), strict=True):
            a = acc(ints[:4], floats)
            kind, k1, k2 = ints[k.O_KIND :]
            if kind == k.K_BLOCKED:
                tasks[k1].blocked[bytes([k2]) if k2 else b""] = a
            elif kind == k.K_IRQ:
                an.irqs[k1] = a
            elif kind == k.K_SOFT:
                an.softirqs[k1] = a
            elif kind == k.K_RAISE:
                an.soft_raise[k1] = a
                v = soft_row[k1]
                blames = (t.sw_i[v], t.sw_f[v])
                found = wait(a, blames, int(t.sw_n[v]), self._blames.get((1, v), ()), "softirq_raise")
                if found is not None:
                    an.soft_raise_wait[k1] = found
            elif kind == k.K_WORK:
                assert a.worst_begin is not None
                an.works[a.worst_begin.state] = a
            else:
                an.off[k1] = a
                b = rules.off_index(k1)
                spans = zip(t.ow_f[b, : si[k.S_OWN + b]].tolist(), t.ow_i[b, : si[k.S_OWN + b]].tolist(), strict=True)
                an.off_worst[k1] = [
                    off_span_of(start, ev[e].ts, cpu, ev[b_], ev[e]) for (_d, start), (cpu, b_, e) in spans
                ]
        an.irq_names = {irq: self._irq_name[r] for r, irq in enumerate(t.irq_i[: si[k.S_NIRQ], 0].tolist())}
        ci, cf = t.ci.tolist(), t.cf.tolist()
        cur = sorted((c[k.C_CUR_SEQ], s) for s, c in enumerate(ci[: si[k.S_CPUHI]]) if c[k.C_CUR_SEQ] >= 0)
        for _seq, s in cur:
            c, f = ci[s], cf[s]
            an.cur[c[k.C_CPU]] = (c[k.C_CUR_PID], f[k.F_SINCE], ev[c[k.C_CUR_EID]], f[k.F_AREA])
        for c, f in zip(ci[: si[k.S_CPUHI]], cf, strict=False):  # the waiting tasks per CPU (SchedAnalyzer.queues)
            if c[k.C_QPRES]:
                an.queues[c[k.C_CPU]] = [f[k.F_QN], f[k.F_QAREA], f[k.F_QSINCE]]
        for j in range(si[k.S_NSEEN]):
            s = ci[j][k.C_ORDER]
            c, f = ci[s], cf[s]
            cpu = c[k.C_CPU]
            an.first[cpu], an.last[cpu] = ev[c[k.C_FIRST]], ev[c[k.C_LAST]]
            an.busy[cpu], an.idle[cpu] = f[k.F_BUSY], f[k.F_IDLE]
            an.irq_time[cpu], an.softirq_time[cpu] = f[k.F_IRQ], f[k.F_SOFT]
            an.switches[cpu] = c[k.C_SWITCHES]
        an.switched = {c[k.C_CPU] for c in ci[: si[k.S_CPUHI]] if c[k.C_SWITCHED]}
        return an
