"""The ``--bucket-ms`` digest: per time bucket and CPU, top tasks, IRQ/softirq time and worst latency.

Memory is bounded: past :data:`~detectors.sched.rules.MAX_BUCKET_CELLS` (bucket, CPU) cells the
bucket size doubles and pairs of cells merge, so an hour-long trace gives a
coarser digest instead of an unbounded one.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from detectors.sched import rules
from forensics.types.sched import Bucket, BucketTask

#: A time within this many units in the last place of a bucket's edge is on the edge (float rounding: 100.07 is
#: 100070 * 0.001 less 1.4e-14, one unit): no cell is given the sliver between them.
EDGE_ULPS = 4


class BucketCell:
    """One bucket on one CPU while the trace is read."""

    __slots__ = ("irq", "latency", "latency_pid", "runtime", "softirq")

    def __init__(self) -> None:
        self.runtime: dict[int, float] = {}
        self.irq = 0.0
        self.softirq = 0.0
        self.latency = -1.0
        self.latency_pid = 0

    def copy(self) -> BucketCell:
        """An independent copy."""
        out = BucketCell()
        out.runtime = dict(self.runtime)
        out.irq, out.softirq, out.latency, out.latency_pid = self.irq, self.softirq, self.latency, self.latency_pid
        return out


class BucketDigest:
    """Accumulates runtime, IRQ/softirq time and worst latency per (bucket, CPU)."""

    def __init__(self, size: float) -> None:
        self.size = size
        self.cells: dict[tuple[int, int], BucketCell] = {}

    def add(self, cpu: int, start: float, end: float, pid: int, what: int) -> None:
        """Spread an interval over the buckets it covers (``what``: rules.BUCKET_RUN of ``pid``, _IRQ, _SOFTIRQ).

        An interval that starts or ends on a bucket's edge gives the bucket on the other side nothing: where the
        edge's float (``(b + 1) * size``) and the time differ by rounding only (EDGE_ULPS), the time is taken as on
        the edge.  A run from the window's start 797.707 with 1 ms buckets put "0.000 ms" in the
        bucket of 797.706 (797.707 // 0.001 is 797706, and 797707 * 0.001 is 797.707 again).
        """
        size = self.size
        noise = EDGE_ULPS * math.ulp(max(abs(start), abs(end)))
        b = int(start // size)
        if (b + 1) * size - start <= noise:  # on (or a rounding error before) the next bucket's start
            b += 1
        while start < end:
            edge = (b + 1) * size
            if end - edge <= noise:  # ends in this bucket, or on its end's edge
                edge = end
            cell = self.cells.get((b, cpu))
            if cell is None:
                cell = self.cells[(b, cpu)] = BucketCell()
            part = edge - start
            if what == rules.BUCKET_RUN:
                cell.runtime[pid] = cell.runtime.get(pid, 0.0) + part
            elif what == rules.BUCKET_IRQ:
                cell.irq += part
            else:
                cell.softirq += part
            start = edge
            b += 1

    def with_runs(self, runs: tuple[tuple[int, float, float, int], ...]) -> BucketDigest:
        """A copy with the runs ``(cpu, start, end, pid)`` added (the cells they touch copied: this one unchanged)."""
        out = BucketDigest(self.size)
        out.cells = dict(self.cells)
        for cpu, start, end, pid in runs:
            for b in range(int(start // self.size), int(end // self.size) + 2):  # (+1: add's edges, rounded)
                cell = self.cells.get((b, cpu))
                if cell is not None and out.cells[(b, cpu)] is cell:
                    out.cells[(b, cpu)] = cell.copy()
            out.add(cpu, start, end, pid, rules.BUCKET_RUN)
        return out

    def latency(self, cpu: int, ts: float, latency: float, pid: int) -> None:
        """A wait of ``pid`` that ended at ``ts`` on ``cpu``; keep the bucket's worst."""
        key = (int(ts // self.size), cpu)
        cell = self.cells.get(key)
        if cell is None:
            cell = self.cells[key] = BucketCell()
        if latency > cell.latency:
            cell.latency = latency
            cell.latency_pid = pid

    def bound(self) -> None:
        """Double the bucket size, merging pairs of cells, until the digest fits its budget."""
        while len(self.cells) > rules.MAX_BUCKET_CELLS // 2:
            self.size *= 2
            merged: dict[tuple[int, int], BucketCell] = {}
            for (b, cpu), cell in self.cells.items():
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
            self.cells = merged

    def freeze(self, comm: Callable[[int], str]) -> tuple[Bucket, ...]:
        """The digest, in time then CPU order; ``comm`` names a pid."""
        out = []
        for (b, cpu), cell in sorted(self.cells.items()):
            top = sorted(cell.runtime.items(), key=lambda kv: -kv[1])[:3]
            has_latency = cell.latency >= 0
            out.append(
                Bucket(
                    start=b * self.size,
                    cpu=cpu,
                    top=tuple(BucketTask(pid, comm(pid), rt) for pid, rt in top),
                    irq_time=cell.irq,
                    softirq_time=cell.softirq,
                    worst_latency=cell.latency if has_latency else None,
                    worst_latency_pid=cell.latency_pid if has_latency else None,
                    worst_latency_comm=comm(cell.latency_pid) if has_latency else None,
                )
            )
        return tuple(out)
