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
from forensics.types.syscalls import SyscallCall, SyscallLatency, SyscallStats
from forensics.types.trace import Kind

if TYPE_CHECKING:
    from collectors.ctf.reader import Session, SplitChunk

_ANY_NAME = -1  # an exit that names no syscall (LTTng 2.5's exit_syscall): it closes whatever its thread entered
# Calls that end their thread and never return: an entry of one is the thread's end, never an open call.
NO_RETURN = ("exit", "exit_group")
_PREV_TID, _NEXT_TID = ly.R_V0, ly.R_V0 + 3  # sched_switch's value columns (reader._VALUES)

# The worst call of a name, as kept while reading: duration ns, tid, entry CPU, exit CPU, entry ns, exit ns,
# entry position, exit position (Session.position).
_Worst = tuple[int, int, int, int, int, int, int, int]


class SyscallPairing:
    """Syscall entries paired with exits, fed the merged chunks in time order."""

    def __init__(self, session: Session, width: int) -> None:
        self.session = session
        self.width = width
        self.names: list[str] = []
        self._name_ids: dict[str, int] = {}
        self._key_names: dict[int, int] = {}  # stream * width + event id -> name id (_ANY_NAME)
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

    def _name_id(self, key: int) -> int:
        got = self._key_names.get(key)
        if got is None:
            name = self.session.event_name(key // self.width, key % self.width)
            if name == "exit_syscall":
                got = _ANY_NAME
            else:
                short = syscall_name(name).removeprefix("syscall_exit_")
                got = self._name_ids.setdefault(short, len(self.names))
                if got == len(self.names):
                    self.names.append(short)
            self._key_names[key] = got
        return got

    def chunk(self, chunk: SplitChunk, kinds: npt.NDArray[np.int64]) -> None:
        """Pair the syscall events of one merged chunk (``kinds``: its kind column)."""
        rows, owner = chunk.head, chunk.owner
        for r in np.flatnonzero(kinds == Kind.LOST).tolist():
            self.lost.append((int(rows[r, ly.R_CPU]), int(rows[r, ly.R_TS])))
        sw = np.flatnonzero(kinds == Kind.SWITCH)
        calls = np.flatnonzero((kinds == K_SYSCALL_ENTRY) | (kinds == K_SYSCALL_EXIT))
        if not len(sw) and not len(calls):
            return
        full = chunk.full(sw)
        prev_tid, next_tid = full[:, _PREV_TID], full[:, _NEXT_TID]
        if not len(calls):  # only the CPUs' current threads move on
            cpus = rows[sw, ly.R_CPU]
            for c, t in zip(cpus.tolist(), next_tid.tolist(), strict=True):
                self.current[c] = t
            return
        # Switches and syscall events grouped by CPU, each group in time order.
        sel = np.concatenate([sw, calls])
        sel_cpu = rows[sel, ly.R_CPU]
        order = np.lexsort((sel, sel_cpu))
        g, g_cpu = sel[order], sel_cpu[order]
        n = len(g)
        is_sw = order < len(sw)
        nxt = np.full(n, -1, dtype=np.int64)
        prv = np.full(n, -1, dtype=np.int64)
        nxt[is_sw] = next_tid[order[is_sw]]
        prv[is_sw] = prev_tid[order[is_sw]]
        at = np.arange(n)
        starts = np.r_[True, g_cpu[1:] != g_cpu[:-1]]
        ends = np.r_[g_cpu[1:] != g_cpu[:-1], True]
        group_start = np.maximum.accumulate(np.where(starts, at, 0))
        group_end = np.minimum.accumulate(np.where(ends, at, n)[::-1])[::-1]
        last_sw = np.maximum.accumulate(np.where(is_sw, at, -1))
        next_sw = np.minimum.accumulate(np.where(is_sw, at, n)[::-1])[::-1]
        uniq_cpu = g_cpu[starts]
        carried = np.array([self.current.get(c, -1) for c in uniq_cpu.tolist()], dtype=np.int64)
        tid = carried[np.cumsum(starts) - 1]
        before = last_sw >= group_start
        tid[before] = nxt[last_sw[before]]
        # Before a CPU's first switch: the thread it switched out.
        unknown = (tid < 0) & (next_sw <= group_end)
        tid[unknown] = prv[next_sw[unknown]]
        last_in_group = last_sw[ends]
        has = last_in_group >= group_start[ends]
        for c, t in zip(uniq_cpu[has].tolist(), nxt[last_in_group[has]].tolist(), strict=True):
            self.current[c] = t
        ev_sel = ~is_sw
        ev = g[ev_sel]
        ev_tid = tid[ev_sel]
        ev_cpu = g_cpu[ev_sel]
        back = np.argsort(ev, kind="stable")  # time order again
        ev, ev_tid, ev_cpu = ev[back], ev_tid[back], ev_cpu[back]
        nameless = ev_tid < 0
        self.unknown_thread += int(np.count_nonzero(nameless))
        key = np.where(nameless, -(ev_cpu + 1), ev_tid)
        self._pair(rows, owner, kinds, ev, key, ev_cpu)

    def _pair(
        self,
        rows: npt.NDArray[np.int64],
        owner: npt.NDArray[np.int64],
        kinds: npt.NDArray[np.int64],
        ev: npt.NDArray[np.intp],
        key: npt.NDArray[np.int64],
        cpu: npt.NDArray[np.int64],
    ) -> None:
        ts = rows[ev, ly.R_TS]
        pos = self.session.bases[owner[ev]] + rows[ev, ly.R_OFF]
        entry = kinds[ev] == K_SYSCALL_ENTRY
        ekey = owner[ev] * self.width + rows[ev, ly.R_EID]
        uk, inv = np.unique(ekey, return_inverse=True)
        nid = np.array([self._name_id(k) for k in uk.tolist()], dtype=np.int64)[inv.ravel()]
        ends = [self._name_ids[n] for n in NO_RETURN if n in self._name_ids]
        if ends:
            gone = entry & np.isin(nid, ends)
            if bool(gone.any()):  # the thread's end: no exit to pair
                self.thread_exits += int(np.count_nonzero(gone))
                keep = ~gone
                key, ts, pos, cpu, nid, entry = key[keep], ts[keep], pos[keep], cpu[keep], nid[keep], entry[keep]
        # The open entries of the threads met, before this chunk's events.
        threads = np.unique(key).tolist()
        carry = [(k, *self.open[k]) for k in threads if k in self.open]
        fresh = np.array([k not in self.seen and k not in self.open for k in threads], dtype=np.bool_)
        if carry:
            c = np.array(carry, dtype=np.int64)
            key = np.concatenate([c[:, 0], key])
            ts = np.concatenate([c[:, 1], ts])
            pos = np.concatenate([c[:, 2], pos])
            cpu = np.concatenate([c[:, 3], cpu])
            nid = np.concatenate([c[:, 4], nid])
            entry = np.concatenate([np.ones(len(c), dtype=np.bool_), entry])
        order = np.argsort(key, kind="stable")  # by thread, each in time order (carried entries first)
        key, ts, pos, cpu, nid, entry = key[order], ts[order], pos[order], cpu[order], nid[order], entry[order]
        same = key[1:] == key[:-1]
        first = np.r_[True, ~same]
        last = np.r_[~same, True]
        pair = np.flatnonzero(same & entry[:-1] & ~entry[1:])
        self.unpaired_entries += int(np.count_nonzero(same & entry[:-1] & entry[1:]))
        lone_exit = ~entry & ~np.r_[False, same & entry[:-1]]
        fresh_key = np.zeros(len(key), dtype=np.bool_)
        fresh_key[first] = np.isin(key[first], np.array(threads, dtype=np.int64)[fresh])
        inside = lone_exit & first & fresh_key
        self.began_inside += int(np.count_nonzero(inside))
        self.unpaired_exits += int(np.count_nonzero(lone_exit & ~inside))
        for k in key[last & ~entry].tolist():
            self.open.pop(k, None)
        for k, t, p, c, i in zip(*(a[last & entry].tolist() for a in (key, ts, pos, cpu, nid)), strict=True):
            self.open[k] = (t, p, c, i)
        self.seen.update(threads)
        if not len(pair):
            return
        a, b = pair, pair + 1
        good = (nid[b] == _ANY_NAME) | (nid[b] == nid[a])
        self.mismatched += int(np.count_nonzero(~good))
        if self.lost:
            lost = np.array(self.lost, dtype=np.int64)
            hit = np.zeros(len(a), dtype=np.bool_)
            for lc, lt in lost.tolist():  # (markers are few: one per packet that lost events)
                hit |= ((cpu[a] == lc) | (cpu[b] == lc)) & (ts[a] < lt) & (lt <= ts[b])
            self.across_loss += int(np.count_nonzero(good & hit))
            good &= ~hit
        a, b = a[good], b[good]
        if not len(a):
            return
        d = ts[b] - ts[a]
        names = nid[a]
        o = np.lexsort((d, names))
        tail = np.r_[names[o][1:] != names[o][:-1], True]
        counts = np.bincount(names)
        totals = np.bincount(names, weights=d)
        for j in o[tail].tolist():
            i = int(names[j])
            self.count[i] = self.count.get(i, 0) + int(counts[i])
            self.total[i] = self.total.get(i, 0) + int(totals[i])
            w = self.worst.get(i)
            if w is None or int(d[j]) > w[0]:
                ka = int(key[a[j]])
                self.worst[i] = (
                    int(d[j]),
                    ka if ka >= 0 else -1,
                    int(cpu[a[j]]),
                    int(cpu[b[j]]),
                    int(ts[a[j]]),
                    int(ts[b[j]]),
                    int(pos[a[j]]),
                    int(pos[b[j]]),
                )

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
