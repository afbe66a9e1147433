"""Syscall latency of an LTTng kernel session: each syscall entry paired with its thread's next exit, chunk by chunk
as the session is merged (collectors/ctf/feed.py), per syscall name (forensics/types/syscalls.py).

The thread of a syscall event is the task its CPU runs: the ``next_tid`` of the CPU's last ``sched_switch``
(before a CPU's first one, that switch's ``prev_tid``).  LTTng 2.5 records no thread context on its ``sys_*`` /
``exit_syscall`` events and a session need not add one, so the switches name it for every version; keyed on the
thread, a call that migrates CPUs pairs.  A CPU no switch names the thread of (none in its chunk either) pairs its
events on the CPU and says how many.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from collectors.ctf import layouts as ly
from collectors.ctf.reader import K_SYSCALL_ENTRY, K_SYSCALL_EXIT, syscall_name
from forensics.types.arrays import distinct
from forensics.types.syscalls import SyscallCall, SyscallLatency, SyscallStats
from forensics.types.trace import Kind

if TYPE_CHECKING:
    from collectors.ctf.reader import Session, SplitChunk

_UNSET = -2  # a key not looked up yet
_ANY_NAME = -1  # an exit that names no syscall (LTTng 2.5's exit_syscall): it closes whatever its thread entered
# Calls that end their thread and never return: an entry of one is the thread's end, never an open call.
NO_RETURN = ("exit", "exit_group")
_PREV_TID, _NEXT_TID = ly.R_V0, ly.R_V0 + 3  # sched_switch's value columns (reader._VALUES)

# The worst call of a name, as kept while reading: duration ns, tid, entry CPU, exit CPU, entry ns, exit ns,
# entry position, exit position (Session.position).
_Worst = tuple[int, int, int, int, int, int, int, int]


def _by_thread(key: npt.NDArray[np.int64]) -> npt.NDArray[np.intp]:
    """The stable argsort of ``key``: of its offsets from the least key as 16-bit numbers when they fit (numpy
    sorts those by radix: 0.24 ms for 40 k keys against 1.8 ms, a tenth of the pairing's CPU on the x44 session's
    87 chunks), the same order."""
    if len(key) and int(key.max()) - (least := int(key.min())) < 1 << 16:
        return np.argsort((key - least).astype(np.uint16), kind="stable")
    return np.argsort(key, kind="stable")


class SyscallPairing:
    """Syscall entries paired with exits, fed the merged chunks in time order."""

    def __init__(self, session: Session, width: int) -> None:
        self.session = session
        self.width = width
        self.names: list[str] = []
        self._name_ids: dict[str, int] = {}
        self.current: dict[int, int] = {}  # cpu -> the tid its last sched_switch switched in
        # thread key (tid, or -(cpu + 1) where the thread is unknown) -> its open entry: ns, position, cpu, name id
        self.open: dict[int, tuple[int, int, int, int]] = {}
        self.seen: set[int] = set()  # thread keys that had a syscall event
        self.lost: list[tuple[int, int]] = []  # (cpu, ns) of each lost-event marker (discarded, lost packets)
        self.count: dict[int, int] = {}
        self.total: dict[int, int] = {}
        self.worst: dict[int, _Worst] = {}
        self.began_inside = self.unpaired_exits = self.unpaired_entries = 0
        self.across_loss = self.mismatched = self.unknown_thread = self.thread_exits = 0
        # Per event key (stream * width + event id): its name id (_ANY_NAME, _UNSET), and whether it never returns.
        self._lut = np.zeros(0, dtype=np.int64)
        self._ends = np.zeros(0, dtype=np.bool_)

    def _names(self, keys: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
        """The name id of each event key (stream * width + event id), and whether it is a call that never returns."""
        need = int(keys.max()) + 1 if len(keys) else 0
        if need > len(self._lut):  # (the keys are few: a table, looked up once per new key)
            grown = np.full(max(need, 2 * len(self._lut)), _UNSET, dtype=np.int64)
            grown[: len(self._lut)] = self._lut
            self._lut = grown
            self._ends = np.concatenate([self._ends, np.zeros(len(grown) - len(self._ends), dtype=np.bool_)])
        nid = self._lut[keys]
        new = nid == _UNSET
        if bool(new.any()):
            for key in distinct(keys[new]).tolist():  # (np.unique would import numpy.ma: forensics.types.arrays)
                name = self.session.event_name(key // self.width, key % self.width)
                if name == "exit_syscall":
                    got = _ANY_NAME
                else:
                    short = syscall_name(name).removeprefix("syscall_exit_")
                    got = self._name_ids.setdefault(short, len(self.names))
                    if got == len(self.names):
                        self.names.append(short)
                    self._ends[key] = short in NO_RETURN and name != f"syscall_exit_{short}"
                self._lut[key] = got
            nid = self._lut[keys]
        return nid, self._ends[keys]

    def chunk(self, chunk: SplitChunk, kinds: npt.NDArray[np.int64]) -> None:
        """Pair the syscall events of one merged chunk (``kinds``: its kind column)."""
        rows, owner = chunk.head, chunk.owner
        for r in np.flatnonzero(kinds == Kind.LOST).tolist():
            self.lost.append((int(rows[r, ly.R_CPU]), int(rows[r, ly.R_TS])))
        sw = np.flatnonzero(kinds == Kind.SWITCH)
        calls = np.flatnonzero((kinds == K_SYSCALL_ENTRY) | (kinds == K_SYSCALL_EXIT))
        if not len(sw) and not len(calls):
            return
        self._pair(rows, owner, kinds, calls, self._threads(chunk, sw, calls))

    def _threads(
        self, chunk: SplitChunk, sw: npt.NDArray[np.intp], calls: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.int64]:
        """The thread key of each syscall row ``calls`` of ``chunk`` (``sw``: its sched_switch rows); a method of
        its own so that its temporaries are gone before the pairing makes its own."""
        rows = chunk.head
        full = chunk.full(sw)
        prev_tid, next_tid = full[:, _PREV_TID], full[:, _NEXT_TID]
        sw_cpu = rows[sw, ly.R_CPU]
        call_cpu = rows[calls, ly.R_CPU]
        tid = np.full(len(calls), -1, dtype=np.int64)
        both = np.concatenate([sw_cpu, call_cpu])
        low = int(both.min())
        for c in (np.flatnonzero(np.bincount(both - low)) + low).tolist():  # the CPUs (counted: no sort)
            on = sw_cpu == c
            mine_sw = sw[on]
            carried = self.current.get(c, -1)
            if len(mine_sw):
                nxt = next_tid[on]
                self.current[c] = int(nxt[-1])
                if carried < 0:  # before the CPU's first switch: the thread it switched out
                    carried = int(prev_tid[on][0])
            at = np.flatnonzero(call_cpu == c)
            if not len(at):
                continue
            if len(mine_sw):
                k = np.searchsorted(mine_sw, calls[at]) - 1  # the CPU's last switch before each (row order)
                tid[at] = np.where(k >= 0, nxt[k], carried)
            else:
                tid[at] = carried
        nameless = tid < 0
        if bool(nameless.any()):
            self.unknown_thread += int(np.count_nonzero(nameless))
            tid = np.where(nameless, -(call_cpu + 1), tid)
        return tid

    def _pair(
        self,
        rows: npt.NDArray[np.int64],
        owner: npt.NDArray[np.int64],
        kinds: npt.NDArray[np.int64],
        ev: npt.NDArray[np.intp],
        key: npt.NDArray[np.int64],
    ) -> None:
        """Pair the syscall events ``ev`` (time order) of threads ``key``."""
        nid, ends = self._names(owner[ev] * self.width + rows[ev, ly.R_EID])
        entry = kinds[ev] == K_SYSCALL_ENTRY
        if bool(ends.any()):  # exit/exit_group: the thread's end, no exit to pair
            gone = ends & entry
            self.thread_exits += int(np.count_nonzero(gone))
            keep = ~gone
            ev, key, nid, entry = ev[keep], key[keep], nid[keep], entry[keep]
            del gone, keep
        del ends
        order = _by_thread(key)  # by thread, each in time order
        k = key[order]
        e = entry[order]
        same = k[1:] != k[:-1]
        np.logical_not(same, out=same)
        first = np.flatnonzero(np.r_[True, ~same])
        last = np.r_[first[1:] - 1, len(k) - 1]
        inner = np.flatnonzero(same & e[:-1] & ~e[1:])
        self.unpaired_entries += int(np.count_nonzero(same & e[:-1] & e[1:]))
        self.unpaired_exits += int(np.count_nonzero(same & ~e[:-1] & ~e[1:]))
        del same
        # Each thread's first event: an exit closes the entry carried from the chunks before (or has none).
        carried: list[
            tuple[int, int, int, int, int]
        ] = []  # (the exit's index in ev, and the entry's ns, pos, cpu, nid)
        for t, i, is_entry in zip(k[first].tolist(), order[first].tolist(), e[first].tolist(), strict=True):
            was = self.open.pop(t, None)
            if is_entry:
                self.unpaired_entries += was is not None
            elif was is not None:
                carried.append((i, *was))
            elif t in self.seen:
                self.unpaired_exits += 1
            else:
                self.began_inside += 1
            self.seen.add(t)
        ts = rows[:, ly.R_TS]
        off = rows[:, ly.R_OFF]
        cpus = rows[:, ly.R_CPU]
        base = self.session.bases
        for t, i in zip(k[last].tolist(), order[last].tolist(), strict=True):
            if entry[i]:
                r = int(ev[i])
                self.open[t] = (int(ts[r]), int(base[owner[r]]) + int(off[r]), int(cpus[r]), int(nid[i]))
        # The pairs: entry then exit (rows of the chunk, then the carried entries from their own columns).  Only
        # what every pair needs is gathered for all (times, names; CPUs when a marker may lie between); a pair's
        # thread, CPUs and positions are read for the calls cited (each name's longest): the chunk's temporaries
        # are what held the peak RSS (7 MB on the x44 session).
        a_at = order[inner]
        b_at = order[inner + 1]
        tid = k[inner]
        del order, k, e, entry, inner
        ra, rb = ev[a_at], ev[b_at]
        n0, n1 = nid[a_at], nid[b_at]
        del a_at, b_at
        t0, t1 = ts[ra], ts[rb]
        cw = np.array(carried, dtype=np.int64).reshape(-1, 5)
        rc = ev[cw[:, 0]]
        if len(cw):
            t0, t1 = np.r_[t0, cw[:, 1]], np.r_[t1, ts[rc]]
            n0, n1 = np.r_[n0, cw[:, 4]], np.r_[n1, nid[cw[:, 0]]]
        if not len(t0):
            return
        good = (n1 == _ANY_NAME) | (n1 == n0)
        del n1
        self.mismatched += int(len(good) - np.count_nonzero(good))
        # The markers that lie between some entry and its exit: those within the span of the chunk's pairs (the
        # markers are kept for the whole session; each tested against every pair, a chunk's test grew with them:
        # 0.10 s of the pairing's 0.3 s on the x44 session's 129 packet gaps).
        lo, hi = int(t0.min()), int(t1.max())
        near = [(lc, lt) for lc, lt in self.lost if lo < lt <= hi]
        if near:
            c0, c1 = np.r_[cpus[ra], cw[:, 3]], np.r_[cpus[rb], cpus[rc]]
            hit = np.zeros(len(t0), dtype=np.bool_)
            for lc, lt in near:  # (markers are few: one per packet that lost events)
                hit |= ((c0 == lc) | (c1 == lc)) & (t0 < lt) & (lt <= t1)
            self.across_loss += int(np.count_nonzero(good & hit))
            good &= ~hit
            del c0, c1, hit
        picked: npt.NDArray[np.intp] | None = None  # the pairs kept, when some are not
        if not bool(good.all()):
            picked = np.flatnonzero(good)
            t0, t1, n0 = t0[picked], t1[picked], n0[picked]
        del good
        if not len(t0):
            return
        d = t1 - t0
        counts = np.bincount(n0)
        totals = np.bincount(n0, weights=d)
        longest = np.full(len(counts), -1, dtype=np.int64)
        np.maximum.at(longest, n0, d)
        top = np.flatnonzero(d == longest[n0])  # each name's longest call(s): the first of each is kept
        inside = len(ra)
        for j in top.tolist():
            i = int(n0[j])
            w = self.worst.get(i)
            if w is None or int(d[j]) > w[0]:
                at = j if picked is None else int(picked[j])
                if at < inside:
                    r0, r1, t = int(ra[at]), int(rb[at]), int(tid[at])
                    c_0, p_0 = int(cpus[r0]), int(base[owner[r0]]) + int(off[r0])
                else:
                    _x, _ns, p_0, c_0, _n = cw[at - inside].tolist()
                    r1 = int(rc[at - inside])
                    t = int(key[_x])
                c_1, p_1 = int(cpus[r1]), int(base[owner[r1]]) + int(off[r1])
                self.worst[i] = (int(d[j]), t if t >= 0 else -1, c_0, c_1, int(t0[j]), int(t1[j]), p_0, p_1)
        for i in np.flatnonzero(counts).tolist():
            self.count[i] = self.count.get(i, 0) + int(counts[i])
            self.total[i] = self.total.get(i, 0) + int(totals[i])

    def result(self, comm: Callable[[int], str]) -> SyscallLatency:
        """The table, worst call first; ``comm`` names a tid."""
        stats = []
        for i, w in self.worst.items():
            _d, tid, c0, c1, t0, t1, p0, p1 = w
            call = SyscallCall(tid, comm(tid) if tid >= 0 else "", c0, c1, t0 / 1e9, t1 / 1e9, p0, p1)
            stats.append(SyscallStats(self.names[i], self.count[i], self.total[i] / 1e9, call))
        stats.sort(key=lambda s: (-s.worst.duration, s.name))
        return SyscallLatency(
            tuple(stats),
            sum(self.count.values()),
            len(self.open),
            self.began_inside,
            self.unpaired_exits,
            self.unpaired_entries,
            self.across_loss,
            self.mismatched,
            self.unknown_thread,
            self.thread_exits,
        )
