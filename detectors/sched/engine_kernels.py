"""The compiled (numba) part of :mod:`detectors.sched.engine`: SchedAnalyzer's per-event work over columns.

:func:`run_batch` walks the rows of one :class:`~forensics.types.trace_batch.EventBatch`
and does exactly what ``SchedAnalyzer._feed`` does per event (the same IEEE
operations in the same order), on arrays instead of dicts and objects.  It
mirrors the reference function for function: inside :func:`run_batch`, one
handler per SchedAnalyzer method (``switch`` is ``_switch`` and calls
``run_ends``, ``switch_out`` and ``switch_in`` as it does; ``wake``,
``blocked``, ``irq``, ``softirq``, ``work``, ``offtime``, ``exit_``,
``queue``/``unqueue``), and beside it the rare paths :func:`lost`,
:func:`worst_wait`, :func:`behind` and :func:`clip`; the dispatch follows
:data:`detectors.sched.rules.HANDLERS`.  The kinds, sizes and rules (CPU hog,
off-time) come from :mod:`detectors.sched.rules`, which the reference uses
too; the rule functions are compiled from that same source.

The state, on arrays:

- per CPU (a slot: the CPU number below :data:`CPU_DIRECT`, else mapped): the
  current run, the waiting-tasks integral, first/last event, times, IRQ stack,
  softirq and irq/preempt-off starts (``ci``/``cf`` columns ``C_*``/``F_*``);
  each CPU's recent runs in a ring buffer (the runs :func:`rules.drops_run` keeps; it starts :data:`RING` deep
  and doubles, up to ``rules.RECENT_MAX``, when a CPU keeps more);
- per task (a slot, in the order SchedAnalyzer creates its TaskState): the
  comm as a reference to the event that set it (``eid * 2 + 1`` for next_comm),
  pending wakeup / preempted / blocked events, the runs, wakeup and
  preemption accumulators (``ti``/``tf`` columns ``T_*``);
- other accumulators (blocked per state, IRQ, softirq, raise, work, off-time)
  in one table (``oi``/``of``) whose rows say what they are (``O_KIND``);
- worst waits' blames, victims and preempted-by counts in tables.

Why the handlers are closures inside :func:`run_batch`: numba inlines a
closure over the state without reference counting the arrays it uses.  A
handler at module level that takes the arrays as arguments costs two atomic
reference counts per array per call (numba's ``inline="always"`` keeps them
too, and tuples of arrays cost the same per item): measured 8-14x slower than
the closures on the whole loop.  The rare paths (worst waits, lost events,
growth) are module functions: their calls are rare.  :func:`run_batch` keeps
flat arguments because numba types a call from Python with tuple arguments
slowly (about 1 ms per call).

Events are referred to by event id (``eid``); the engine keeps the
materialised events that the state refers to.  When a table is full the
kernel returns :data:`GROW` with the row to resume at and what to grow in
``si[S_NEED]`` (:func:`room`); no state was changed for that row.

numba caches the compiled loop keyed on this file only: after changing
:mod:`detectors.sched.rules`, touch this file (or remove its ``__pycache__``)
so that the cache does not keep the old constants.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np
from numba import types
from numba.typed import Dict

from detectors.sched import rules
from detectors.sched.engine_layout import (
    A_BEGIN,
    A_COUNT,
    A_CPU,
    A_END,
    A_PREEMPT,
    A_START,
    A_TOTAL,
    A_WAKE,
    A_WORST,
    B_CPU,
    C_CPU,
    C_CUR_EID,
    C_CUR_PID,
    C_CUR_SEQ,
    C_CUR_SLOT,
    C_DEPTH,
    C_FIRST,
    C_LAST,
    C_OFF,
    C_ORDER,
    C_QPRES,
    C_RING,
    C_SOFT_EID,
    C_SOFT_VEC,
    C_SWITCHED,
    C_SWITCHES,
    CPU_DIRECT,
    DONE,
    F_AREA,
    F_BUSY,
    F_IDLE,
    F_IRQ,
    F_LAST_TS,
    F_LOSTBAR,
    F_OFF_TS,
    F_QAREA,
    F_QN,
    F_QSINCE,
    F_SINCE,
    F_SOFT,
    F_SOFT_TS,
    FINISHED,
    GROW,
    K_BLOCKED,
    K_IRQ,
    K_OFF,
    K_RAISE,
    K_SOFT,
    K_WORK,
    MOVES,
    N_CPU,
    N_DEPTH,
    N_DG,
    N_IRQ,
    N_OACC,
    N_PB,
    N_PID,
    N_RING,
    N_RUNS,
    N_SLOTS,
    N_SOFT,
    N_TL,
    N_VIC,
    O_K1,
    O_K2,
    O_KIND,
    PID_DIRECT,
    Q_MOVE,
    Q_N,
    S_CPUHI,
    S_CURSEQ,
    S_DG,
    S_DGON,
    S_EPOCH,
    S_LOSTE,
    S_LOSTM,
    S_MIGR,
    S_NEED,
    S_NEED_CPU,
    S_NEED_DEPTH,
    S_NEED_PID,
    S_NIRQ,
    S_NOACC,
    S_NPB,
    S_NRING,
    S_NSEEN,
    S_NSLOTS,
    S_NSOFT,
    S_NVIC,
    S_OFFACC,
    S_OWN,
    S_SEENWAKING,
    S_TL,
    S_TLMAX,
    S_TLON,
    S_TLTOTAL,
    S_WS,
    T_ACC,
    T_BLK,
    T_BLK_CPU,
    T_BLK_STATE,
    T_COMM,
    T_HOG,
    T_MV,
    T_MV_N,
    T_PEND,
    T_PEND_SLOT,
    T_PID,
    T_PRE,
    T_PRE_SLOT,
    T_PRIO,
    T_UNPLACED,
    T_UNSEEN,
    T_UNSEEN_CPU,
    T_WCPU,
    T_WEP,
    TF_ACC,
    TF_BLK_TS,
    TF_DELAY,
    TF_MV,
    TF_PEND_TS,
    TF_PRE_TS,
    TF_RUNTIME,
    TF_WAIT0,
    TF_WAIT_TS,
    X_BARRIER,
    X_FIRSTTS,
    X_HARD,
    X_HOG,
    X_OFFT,
    X_W0,
    X_W1,
)
from detectors.sched.rules import (
    BLAMES,
    BUCKET_IRQ,
    BUCKET_LATENCY,
    BUCKET_RUN,
    BUCKET_SOFTIRQ,
    IRQ_ENTRY,
    IRQ_EXIT,
    LOST,
    MIGRATE,
    MOVED_NO,
    MOVED_TRACED,
    MOVED_UNTRACED,
    OFF_CUT,
    OFF_KEEP,
    PREEMPT_ENABLE,
    PREEMPTED_LETTER,
    PROCESS_EXIT,
    SOFTIRQ_ENTRY,
    SOFTIRQ_EXIT,
    SOFTIRQ_RAISE,
    SWITCH,
    WAKEUP,
    WAKEUP_NEW,
    WAKING,
    WORK_END,
    WORK_START,
)
from forensics.jit import compiled
from forensics.jit import njit as kernel

I64: Callable[[int], int] = cast(
    Callable[[int], int], np.int64
)  # I64(constant): an argument typed int64, not a literal (one compiled helper, not one per constant)

njit = compiled
RUN_BATCH_COMPILE_S = 20.0  # compile time of run_batch() on 2 cores, announced on stderr (forensics.jit)
_Z, _X = rules.GONE_LETTERS

# The rules, compiled from their one source.
is_hog = njit(rules.is_hog)
is_throttled = njit(rules.is_throttled)
keeps_offtime = njit(rules.keeps_offtime)
drops_run = njit(rules.drops_run)
off_index = njit(rules.off_index)
off_base = njit(rules.off_base)
opens_offtime = njit(rules.opens_offtime)


_I64 = types.int64
_PAIR = types.UniTuple(types.int64, 2)  # type: ignore[no-untyped-call]
_START = types.Tuple((types.int64, types.float64, types.int64))  # type: ignore[no-untyped-call]


@njit
def new_maps() -> tuple[Any, ...]:
    """The typed dicts of the state: cpu, pid, blocked, irq, softirq, work-in-progress, work, victims, preempted-by."""
    return (
        Dict.empty(key_type=_I64, value_type=_I64),  # cpu -> slot (CPUs not below CPU_DIRECT)
        Dict.empty(key_type=_I64, value_type=_I64),  # pid -> slot (pids not below PID_DIRECT)
        Dict.empty(key_type=_PAIR, value_type=_I64),  # (slot, state letter) -> blocked accumulator
        Dict.empty(key_type=_I64, value_type=_I64),  # irq -> irq row
        Dict.empty(key_type=_I64, value_type=_I64),  # vec -> softirq row
        Dict.empty(key_type=_PAIR, value_type=_START),  # (cpu slot, work item) -> (eid, ts, function)
        Dict.empty(key_type=_I64, value_type=_I64),  # work function -> accumulator
        Dict.empty(key_type=_PAIR, value_type=_I64),  # (culprit slot, victim pid) -> victims row
        Dict.empty(key_type=_PAIR, value_type=_I64),  # (slot, next pid) -> preempted-by row
    )


# -- scalar helpers (free to call) ---------------------------------------------------------------


@njit
def clip(start: float, end: float, barrier: float, w0: float) -> tuple[bool, float]:
    """SchedAnalyzer.clip: (False, 0) when the interval is not counted, else (True, start clipped to the window)."""
    if start <= barrier or end < w0 or end < start:
        return False, 0.0
    return True, (start if start >= w0 else w0)


@njit
def q_step(present: int, n: float, area: float, since: float, ts: float, delta: float) -> tuple[float, float, float]:
    """SchedAnalyzer._queue on one CPU's (tasks waiting, task-seconds, since): the new values."""
    if not present:
        n, area, since = 0.0, 0.0, ts
    if ts > since:
        area += n * (ts - since)
    x = n + delta
    return (x if x > 0.0 else 0.0), area, ts


@njit
def q_area(present: int, n: float, area: float, since: float, ts: float) -> float:
    """Task-seconds waited on a CPU up to ``ts`` (0.0 without a queue)."""
    if not present:
        return 0.0
    return area + n * (ts - since) if ts > since else area


# -- small helpers of the handlers ---------------------------------------------------------------


@njit
def get(d: Any, key: Any) -> int:
    """``d.get(key, -1)`` typed as an int (numba types the dict's get as Optional)."""
    return d.get(key, -1) + 0  # type: ignore[no-any-return]


@njit
def acc_worst(ai: Any, af: Any, r: int, ib: int, fb: int, start: float, end: float, cpu: int, b: int, e: int) -> None:
    """Accumulator.set_worst on row ``r`` of (ai, af) at columns ib/fb."""
    af[r, fb + A_WORST] = end - start
    af[r, fb + A_START] = start
    ai[r, ib + A_CPU] = cpu
    ai[r, ib + A_BEGIN] = b
    ai[r, ib + A_END] = e


@njit
def acc_add(ai: Any, af: Any, r: int, start: float, end: float, cpu: int, b: int, e: int) -> bool:
    """Accumulator.add on row ``r`` of the other accumulators; True when it is the new worst."""
    dur = end - start
    ai[r, A_COUNT] += 1
    af[r, A_TOTAL] += dur
    if dur > af[r, A_WORST]:
        acc_worst(ai, af, r, I64(0), I64(0), start, end, cpu, b, e)
        return True
    return False


@njit
def new_oacc(si: Any, oi: Any, kind: int, k1: int, k2: int) -> int:
    """A new row of the other-accumulators table."""
    a = si[S_NOACC]
    si[S_NOACC] += 1
    oi[a, O_KIND] = kind
    oi[a, O_K1] = k1
    oi[a, O_K2] = k2
    return a  # type: ignore[no-any-return]


@njit
def cpu_slot(c: int, cpu_map: Any, create: bool) -> int:
    """The slot of CPU ``c`` (-1 when unknown and not ``create``)."""
    if 0 <= c < CPU_DIRECT:
        return c
    s = get(cpu_map, c)
    if s < 0 and create:
        s = CPU_DIRECT + len(cpu_map)
        cpu_map[c] = s
    return s


@njit
def pid_far(p: int, pid_map: Any) -> int:
    """The task slot of a pid outside the pid -> slot array (-1: no TaskState)."""
    if 0 <= p < PID_DIRECT:
        return -1
    return get(pid_map, p)


@njit
def new_task(p: int, ref: int, prio: int, si: Any, pid_slot: Any, pid_map: Any, ti: Any) -> int:
    """A TaskState for pid ``p`` (comm from event reference ``ref``, ``prio``): its slot."""
    s = si[S_NSLOTS]
    si[S_NSLOTS] += 1
    if 0 <= p < PID_DIRECT:
        pid_slot[p] = s
    else:
        pid_map[p] = s
    ti[s, T_PID] = p
    ti[s, T_COMM] = ref
    ti[s, T_PRIO] = prio
    return s  # type: ignore[no-any-return]


# -- the handlers, one per SchedAnalyzer method ----------------------------------------------------


@njit
def share(pos: Any, key: int, m: int, p: int, cpu: int, overlap: float, found: Any) -> int:
    """Add ``overlap`` seconds of pid ``p`` (task slot ``key - 1``) on ``cpu`` to :func:`behind`'s ``found``
    (pids, slots, CPUs, seconds; ``m`` of them): to its entry when ``pos[key]`` has one; the new ``m``."""
    pids, slots, cpus, secs = found
    q = pos[key]
    if q >= 0:
        secs[q] += overlap
        return m
    pos[key] = m
    pids[m] = p
    slots[m] = key - 1
    cpus[m] = cpu
    secs[m] = overlap
    return m + 1


@njit
def behind(
    ci: Any,
    si: Any,
    rings: Any,
    ti: Any,
    parts_s: Any,
    parts_t: Any,
    disjoint: bool,
    victim: int,
    blames: Any,
    row: int,
) -> None:
    """SchedAnalyzer.behind: who ran on each part's CPU slot (``parts_s``) during its interval; blames into
    ``blames`` row ``row``.

    ``parts_t`` rows: t0, t1 and the start of the run still current on the part's CPU (a wait that ends
    without a switch there: a softirq's, or a task's on another CPU than it was switched in on), +inf for none.
    A blame is (pid, comm reference at this time (-1 idle, -2 no task), slot, CPU) and seconds.  A run in the
    ring is of pid 0 (slot -1) or of a task (its slot): ``pos[slot + 1]`` finds a pid's share on the CPU being
    read.  The CPUs are read in the order they first appear, each with all its parts (SchedAnalyzer.behind).
    Column ``BLAMES`` of the row's seconds is the wait's unseen start (``Wait.unseen``): summed over
    ``disjoint`` parts, else the most of one part; ``BLAMES + 1`` and ``+ 2`` the seconds and the number of the
    tasks beyond the ``BLAMES`` kept (``Wait.more_seconds``, ``more``).
    """
    ring_i, ring_f, ring_h, pos = rings
    cap = ring_i.shape[1]
    bi, bf, bn = blames
    bn[row] = 0
    nparts = parts_s.shape[0]
    size = 0
    for j in range(nparts):
        r = ci[parts_s[j], C_RING]
        size += (ring_h[r, 1] if r >= 0 else 0) + 1
    pids = np.empty(size, np.int64)
    slots = np.empty(size, np.int64)
    cpus = np.empty(size, np.int64)
    secs = np.empty(size, np.float64)
    found = (pids, slots, cpus, secs)
    m = 0
    unseen = 0.0
    for j in range(nparts):
        s = parts_s[j]
        seen = False
        for jj in range(j):
            if parts_s[jj] == s:
                seen = True
        if seen:
            continue
        m0 = m
        r = ci[s, C_RING]
        cnt = ring_h[r, 1] if r >= 0 else 0
        h = ring_h[r, 0] if r >= 0 else 0
        for jj in range(j, nparts):
            if parts_s[jj] != s:
                continue
            t0 = parts_t[jj, 0]
            t1 = parts_t[jj, 1]
            since = parts_t[jj, 2]
            if since < t1:  # the current run: the newest, counted first as SchedAnalyzer.behind does
                overlap = t1 - (since if since > t0 else t0)
                p = ci[s, C_CUR_PID]
                if overlap > 0 and p != victim:
                    m = share(pos, ci[s, C_CUR_SLOT] + 1, m, p, ci[s, C_CPU], overlap, found)
            reached = False  # a run ending by t0 was met: the ring covers the whole part
            oldest = since if since < t1 else t1  # the start of the oldest run known there
            for k in range(cnt):
                jr = (h - 1 - k + cap) % cap
                end = ring_f[r, jr, 1]
                if end <= t0:
                    reached = True
                    break
                start = ring_f[r, jr, 0]
                oldest = start
                overlap = (end if end < t1 else t1) - (start if start > t0 else t0)
                p = ring_i[r, jr, 0]
                if overlap > 0 and p != victim:
                    m = share(pos, ring_i[r, jr, 1] + 1, m, p, ci[s, C_CPU], overlap, found)
            u = 0.0
            if not reached and oldest > t0:  # the ring was full, or the part began before the CPU's first switch
                u = (oldest if oldest < t1 else t1) - t0
            unseen = unseen + u if disjoint else max(unseen, u)
        for q in range(m0, m):
            pos[slots[q] + 1] = -1
    bf[row, BLAMES] = unseen
    order = np.arange(m)
    for a in range(1, m):  # stable sort, most seconds first (sorted(key=-seconds))
        x = order[a]
        b = a - 1
        while b >= 0 and secs[order[b]] < secs[x]:
            order[b + 1] = order[b]
            b -= 1
        order[b + 1] = x
    take = min(m, BLAMES)
    for a in range(take):
        q = order[a]
        p = pids[q]
        cs = slots[q]
        bi[row, a, 0] = p
        bi[row, a, 1] = -1 if p == 0 else (ti[cs, T_COMM] if cs >= 0 else -2)
        bi[row, a, 2] = cs
        bi[row, a, B_CPU] = cpus[q]
        bf[row, a] = secs[q]
    rest = 0.0
    for a in range(take, m):  # in sorted order, as SchedAnalyzer.behind sums them
        rest += secs[order[a]]
    bf[row, BLAMES + 1] = rest
    bf[row, BLAMES + 2] = m - take
    bn[row] = take


@njit
def cpu_barrier(sc: Any, cf: Any, s: int) -> float:
    """SchedAnalyzer.cpu_barrier of CPU slot ``s``: its losses' barrier, or the clock steps' and holes'."""
    lost: float = cf[s, F_LOSTBAR]
    hard: float = sc[X_HARD]
    return lost if lost > hard else hard


@njit
def step_barrier(sc: Any, si: Any, ci: Any, cf: Any) -> None:
    """SchedAnalyzer._feed at a clock step: nothing starting before the last time seen on any CPU counts."""
    for k in range(si[S_NSEEN]):
        t = cf[ci[k, C_ORDER], F_LAST_TS]
        if t > sc[X_BARRIER]:  # noqa: PLR1730 (max(barrier, t) exactly)
            sc[X_BARRIER] = t
    if sc[X_BARRIER] > sc[X_HARD]:  # noqa: PLR1730
        sc[X_HARD] = sc[X_BARRIER]


@njit
def lost(c: int, n: int, sc: Any, si: Any, ci: Any, cf: Any, cpu_map: Any) -> None:
    """SchedAnalyzer._lost: forget what was in progress (a lost-events marker of CPU ``c``, -1 for all)."""
    si[S_LOSTM] += 1
    si[S_LOSTE] += n
    b = -np.inf
    for k in range(si[S_NSEEN]):
        t = cf[ci[k, C_ORDER], F_LAST_TS]
        if k == 0 or t > b:
            b = t
    sc[X_BARRIER] = b
    for s in range(si[S_CPUHI]):
        if ci[s, C_QPRES]:
            cf[s, F_QN] = 0.0
    # SchedAnalyzer._lost's lost_bar: the barrier of the CPUs the marker names (each CPU seen, for none)
    for k in range(si[S_NSEEN]):
        s = ci[k, C_ORDER]
        if c < 0 or ci[s, C_CPU] == c:
            cf[s, F_LOSTBAR] = b
    si[S_EPOCH] += 1  # wait_cpu.clear()
    if c < 0:
        for s in range(si[S_CPUHI]):
            if ci[s, C_CUR_SEQ] >= 0:
                ci[s, C_CUR_SEQ] = -1
                ci[s, C_DEPTH] = 0
                ci[s, C_SOFT_EID] = -1
    else:
        s = cpu_slot(c, cpu_map, False)
        if 0 <= s < ci.shape[0]:
            ci[s, C_CUR_SEQ] = -1
            ci[s, C_DEPTH] = 0
            ci[s, C_SOFT_EID] = -1


@njit
def worst_wait(
    si: Any, ci: Any, cf: Any, ti: Any, tf: Any, rings: Any, blames: Any, wb_q: Any, ns: int, pid: int, fig: int,
    b_eid: int, eid: int, start: float, ts: float, c: int, s: int, q: int, waited_on: int,
) -> None:  # fmt: skip
    """SchedAnalyzer._worst_wait: task slot ``ns``'s new worst wait (``fig``: A_WAKE or A_PREEMPT) and who ran.

    ``q``: the CPU slot it was queued on, ``waited_on`` the one its queue ended on: moved there by the
    sched_migrate_task events kept (T_MV), who ran on each CPU while it waited there is named; else switched in on
    another (``s``), what ran on both is named as context."""
    acc_worst(ti, tf, ns, T_ACC + 4 * fig, TF_ACC + 3 * fig, start, ts, c, b_eid, eid)
    row = 2 * ns + fig - 1
    n = ti[ns, T_MV_N] if waited_on >= 0 else 0  # (a wait not queued: a former wait's moves)
    kept = min(n, MOVES)
    for j in range(kept):  # the moves read, cited (Wait.moves) unless it ran where it was queued, none read
        wb_q[row, Q_MOVE + 3 * j] = ci[ti[ns, T_MV + 3 * j], C_CPU]
        wb_q[row, Q_MOVE + 3 * j + 1] = ci[ti[ns, T_MV + 3 * j + 1], C_CPU]
        wb_q[row, Q_MOVE + 3 * j + 2] = ti[ns, T_MV + 3 * j + 2]
    wb_q[row, Q_N] = kept
    if waited_on == s and 0 < n <= MOVES and q >= 0 and ti[ns, T_MV] == q:
        parts_s = np.empty(n + 1, np.int64)
        parts_t = np.empty((n + 1, 3))
        t0 = start
        for j in range(n):
            parts_s[j] = ti[ns, T_MV + 3 * j]
            t = min(max(tf[ns, TF_MV + j], start), ts)
            parts_t[j, 0] = t0
            parts_t[j, 1] = t
            t0 = t
        parts_s[n] = s
        parts_t[n, 0] = t0
        parts_t[n, 1] = ts
        for j in range(n + 1):
            ps = parts_s[j]
            parts_t[j, 2] = cf[ps, F_SINCE] if ci[ps, C_CUR_SEQ] >= 0 else np.inf
        wb_q[row, 0] = ci[q, C_CPU]
        wb_q[row, 1] = MOVED_TRACED
        behind(ci, si, rings, ti, parts_s, parts_t, True, pid, blames, row)
        return
    if n == 0 and (q == s or q < 0):
        parts_s = np.full(1, s, np.int64)
        parts_t = np.empty((1, 3))
        parts_t[0, 0] = start
        parts_t[0, 1] = ts
        parts_t[0, 2] = np.inf
        wb_q[row, 0] = c
        wb_q[row, 1] = MOVED_NO
        behind(ci, si, rings, ti, parts_s, parts_t, True, pid, blames, row)
        return
    # Moved at a time not followed (state.wait_parts): every CPU slot it is known to have waited on, in order, once,
    # over the whole wait; the current run of the one it was switched in on is its own.
    cand = np.empty(kept + 2, np.int64)
    cand[0] = q
    for j in range(kept):
        cand[j + 1] = ti[ns, T_MV + 3 * j + 1]
    cand[kept + 1] = s
    parts_s = np.empty(kept + 2, np.int64)
    m = 0
    for j in range(kept + 2):
        w = cand[j]
        dup = w < 0
        for jj in range(m):
            if parts_s[jj] == w:
                dup = True
        if not dup:
            parts_s[m] = w
            m += 1
    parts_s = parts_s[:m]
    parts_t = np.empty((m, 3))
    for j in range(m):
        ps = parts_s[j]
        parts_t[j, 0] = start
        parts_t[j, 1] = ts
        parts_t[j, 2] = cf[ps, F_SINCE] if ps != s and ci[ps, C_CUR_SEQ] >= 0 else np.inf
    wb_q[row, 0] = ci[q, C_CPU] if q >= 0 else c
    wb_q[row, 1] = MOVED_UNTRACED
    behind(ci, si, rings, ti, parts_s, parts_t, False, pid, blames, row)


@njit
def off_worst(si: Any, ow_i: Any, ow_f: Any, b: int, dur: float, start: float, cpu: int, be: int, ee: int) -> None:
    """Append a span to off_worst[b]; past OFF_KEEP spans keep the OFF_CUT longest (stable, as list.sort)."""
    n = si[S_OWN + b]
    ow_f[b, n, 0] = dur
    ow_f[b, n, 1] = start
    ow_i[b, n, 0] = cpu
    ow_i[b, n, 1] = be
    ow_i[b, n, 2] = ee
    n += 1
    if n > OFF_KEEP:
        order = np.arange(n)
        for a in range(1, n):
            x = order[a]
            j = a - 1
            while j >= 0 and ow_f[b, order[j], 0] < ow_f[b, x, 0]:
                order[j + 1] = order[j]
                j -= 1
            order[j + 1] = x
        fi = np.empty((OFF_CUT, 2))
        ii = np.empty((OFF_CUT, 3), np.int64)
        for j in range(OFF_CUT):  # element by element: numba compiles array-to-slice copies slowly
            for col in range(2):
                fi[j, col] = ow_f[b, order[j], col]
            for col in range(3):
                ii[j, col] = ow_i[b, order[j], col]
        for j in range(OFF_CUT):
            for col in range(2):
                ow_f[b, j, col] = fi[j, col]
            for col in range(3):
                ow_i[b, j, col] = ii[j, col]
        n = OFF_CUT
    si[S_OWN + b] = n


# -- the event loop ------------------------------------------------------------------------------


@kernel("the scheduling analysis", seconds=RUN_BATCH_COMPILE_S)
def run_batch(
    i0: int,
    first_eid: int,
    kind: Any,
    tscol: Any,
    cpucol: Any,
    pidcol: Any,
    priocol: Any,
    nxtcol: Any,
    nprcol: Any,
    statecol: Any,
    workcol: Any,
    sc: Any,
    si: Any,
    ci: Any,
    cf: Any,
    stk_i: Any,
    stk_f: Any,
    ring_i: Any,
    ring_f: Any,
    ring_h: Any,
    pos: Any,
    cpu_map: Any,
    pid_map: Any,
    blk_map: Any,
    irq_map: Any,
    soft_map: Any,
    work_cur: Any,
    work_map: Any,
    vic_map: Any,
    pb_map: Any,
    pid_slot: Any,
    ti: Any,
    tf: Any,
    wb_i: Any,
    wb_f: Any,
    wb_n: Any,
    wb_q: Any,
    oi: Any,
    of: Any,
    irq_i: Any,
    soft_i: Any,
    raised_eid: Any,
    raised_ts: Any,
    sw_i: Any,
    sw_f: Any,
    sw_n: Any,
    ow_i: Any,
    ow_f: Any,
    vic_i: Any,
    vic_f: Any,
    vic_dense: Any,
    pb_i: Any,
    tl_i: Any,
    tl_f: Any,
    dg_i: Any,
    dg_f: Any,
) -> tuple[int, int]:
    """SchedAnalyzer._feed over rows ``i0..`` of a batch: (FINISHED, n), (DONE, row after the window) or (GROW, row).

    The arguments are flat: numba types array arguments fast at each call from Python, tuples slowly.
    The handlers are closures over them, one per SchedAnalyzer method (see the module docstring).
    """
    rings = (ring_i, ring_f, ring_h, pos)  # the tuples of the rare paths (behind), built once
    wblames = (wb_i, wb_f, wb_n)
    sblames = (sw_i, sw_f, sw_n)
    cap = ring_i.shape[1]  # the depth of each CPU's ring of runs (grown between calls: N_RUNS)
    ch_slot = np.empty(cap + 1, np.int64)  # scratch of charge: who ran during one wait, and how long
    ch_secs = np.empty(cap + 1, np.float64)
    # Rows the tables hold before a row may need to grow them (see room): the sizes do not change in a call.
    full_slots = min(ti.shape[0], pos.shape[0] - 1) - 2
    full_oacc = oi.shape[0] - 2
    full_irq = irq_i.shape[0] - 1
    full_soft = min(soft_i.shape[0], raised_eid.shape[1]) - 1
    full_pb = pb_i.shape[0] - 1
    full_ring = ring_h.shape[0] - 1
    full_tl = tl_i.shape[0] - 1
    full_dg = dg_i.shape[0] - 2
    ncpu = ci.shape[0]
    npid = pid_slot.shape[0]
    w0, hog, offt = sc[X_W0], sc[X_HOG], sc[X_OFFT]  # options: constant in a call
    tl_on, dg_on = si[S_TLON], si[S_DGON]

    # -- the handlers (closures over the state: numba inlines them without reference counting the arrays)

    def task_slot(p: int) -> int:
        """``SchedAnalyzer.tasks.get(p)`` as a slot (-1: no TaskState)."""
        return pid_slot[p] if 0 <= p < npid else pid_far(p, pid_map)

    def log_digest(what: int, cpu: int, pid: int, a: float, b: float) -> None:
        """Log a BucketDigest call: ``what`` rules.BUCKET_RUN/_IRQ/_SOFTIRQ is add(cpu, a, b, pid, what),
        BUCKET_LATENCY is latency(cpu, a, b, pid).
        """
        d = si[S_DG]
        si[S_DG] += 1
        dg_i[d, 0] = what
        dg_i[d, 1] = cpu
        dg_i[d, 2] = pid
        dg_f[d, 0] = a
        dg_f[d, 1] = b

    def queue(w: int, ts: float, delta: float) -> None:
        """SchedAnalyzer._queue: one more (+1.0) or one less (-1.0) task waiting on CPU slot ``w`` from ``ts``."""
        qn, qa, qs = q_step(ci[w, C_QPRES], cf[w, F_QN], cf[w, F_QAREA], cf[w, F_QSINCE], ts, delta)
        cf[w, F_QN], cf[w, F_QAREA], cf[w, F_QSINCE], ci[w, C_QPRES] = qn, qa, qs, 1

    def unqueue(ps: int, ts: float, epoch: int) -> int:
        """SchedAnalyzer._unqueue: task slot ``ps`` no longer waits (a wait of an older epoch was cleared); the CPU
        slot it waited on (-1: none), for :func:`charge`."""
        if ti[ps, T_WCPU] >= 0 and ti[ps, T_WEP] == epoch:
            w = ti[ps, T_WCPU]
            ti[ps, T_WCPU] = -1
            queue(w, ts, -1.0)
            return w  # type: ignore[no-any-return]
        return -1

    vdense = vic_dense.shape[0]

    def charge(w: int, t0: float, t1: float, victim: int, vs: int) -> None:
        """SchedAnalyzer._charge: task ``victim`` (slot ``vs``) waited on CPU slot ``w`` during [t0, t1]; each task
        that ran there meanwhile (the current run, then the ring, newest first) is charged its share, one wait of
        the victim's (the parts of a wait a sched_migrate_task moved, keyed by its start ``tf[vs, TF_WAIT0]``, are
        one: VictimTally.add).  The victims row of a pair of the first slots is found in ``vic_dense`` (a typed dict
        lookup per pair and wait made the whole analysis 2.5 times slower on perf bench messaging), of others in the
        dict."""
        if t1 < w0:
            return
        t0 = max(t0, w0)  # the part of the wait before the window is not charged (SchedAnalyzer.shares)
        wait_key = tf[vs, TF_WAIT0]
        barrier = sc[X_BARRIER]
        m = 0
        if ci[w, C_CUR_SEQ] >= 0:
            p = ci[w, C_CUR_PID]
            since = cf[w, F_SINCE]
            if p != 0 and p != victim and barrier < since < t1:  # noqa: PLR1714
                overlap = t1 - (since if since > t0 else t0)
                if overlap > 0:
                    cs = ci[w, C_CUR_SLOT]
                    pos[cs + 1] = 0
                    ch_slot[0] = cs
                    ch_secs[0] = overlap
                    m = 1
        r = ci[w, C_RING]
        if r >= 0:
            h = ring_h[r, 0]
            for k in range(ring_h[r, 1]):
                j = (h - 1 - k + cap) % cap
                end = ring_f[r, j, 1]
                if end <= t0:
                    break
                start = ring_f[r, j, 0]
                p = ring_i[r, j, 0]
                if p == 0 or p == victim or start <= barrier or end < w0:  # noqa: PLR1714
                    continue
                overlap = (end if end < t1 else t1) - (start if start > t0 else t0)
                if overlap > 0:
                    key = ring_i[r, j, 1] + 1
                    q = pos[key]
                    if q >= 0:
                        ch_secs[q] += overlap
                    else:
                        pos[key] = m
                        ch_slot[m] = key - 1
                        ch_secs[m] = overlap
                        m += 1
        for q in range(m):
            cs = ch_slot[q]
            pos[cs + 1] = -1
            dense = cs < vdense and vs < vdense
            v = vic_dense[cs, vs] if dense else vic_map.get((cs, victim), -1) + 0
            if v < 0:
                v = si[S_NVIC]
                si[S_NVIC] += 1
                if dense:
                    vic_dense[cs, vs] = v
                else:
                    vic_map[(cs, victim)] = v
                vic_i[v, 0] = cs
                vic_i[v, 1] = victim
                vic_i[v, 2] = 0
                vic_f[v, 0] = 0.0
                vic_f[v, 1] = 0.0
                vic_f[v, 2] = np.nan
                vic_f[v, 3] = 0.0
            secs = ch_secs[q]
            vic_f[v, 0] += secs
            if wait_key == vic_f[v, 2]:  # another part of the wait last added (it moved): VictimTally.add
                vic_f[v, 3] += secs
                vic_f[v, 1] = max(vic_f[v, 1], vic_f[v, 3])
                continue
            vic_f[v, 2] = wait_key
            vic_f[v, 3] = secs
            vic_i[v, 2] += 1
            vic_f[v, 1] = max(vic_f[v, 1], secs)

    def blocked(ps: int, ts: float, eid: int, barrier: float, w0: float) -> None:
        """SchedAnalyzer._blocked: pop task ``ps``'s blocked event and count the sleep up to ``ts``."""
        b_eid = ti[ps, T_BLK]
        ti[ps, T_BLK] = -1
        ok, start = clip(tf[ps, TF_BLK_TS], ts, barrier, w0)
        if not ok:
            return
        letter = ti[ps, T_BLK_STATE]
        key = (ps, letter)
        a = get(blk_map, key)
        if a < 0:
            a = new_oacc(si, oi, I64(K_BLOCKED), ps, letter)
            blk_map[key] = a
        acc_add(oi, of, a, start, ts, ti[ps, T_BLK_CPU], b_eid, eid)

    def run_ends(eid: int, ts: float, c: int, s: int, prev: int, prio: int) -> None:
        """SchedAnalyzer._run_ends: the run of the task switched out (current on CPU slot ``s``) ends at ``ts``."""
        since = cf[s, F_SINCE]
        r = ci[s, C_RING]
        if r < 0:
            r = si[S_NRING]
            si[S_NRING] += 1
            ci[s, C_RING] = r
        h = ring_h[r, 0]
        n = ring_h[r, 1]
        while n and drops_run(n, ring_f[r, (h - n + cap) % cap, 1], ts):  # the oldest runs no longer kept
            n -= 1
        ring_i[r, h, 0] = prev  # room() saw to it that n < cap
        ring_i[r, h, 1] = ci[s, C_CUR_SLOT]
        ring_f[r, h, 0] = since
        ring_f[r, h, 1] = ts
        ring_h[r, 0] = h + 1 if h + 1 < cap else 0
        ring_h[r, 1] = n + 1
        ok, start = clip(since, ts, cpu_barrier(sc, cf, s), w0)
        if not ok:
            return
        if prev == 0:
            cf[s, F_IDLE] += ts - start
        else:
            cf[s, F_BUSY] += ts - start
            ps = task_slot(prev)
            if ps < 0:
                ps = new_task(prev, eid * 2, prio, si, pid_slot, pid_map, ti)
            run = ts - start
            tf[ps, TF_RUNTIME] += run
            ti[ps, T_ACC + A_COUNT] += 1
            tf[ps, TF_ACC + A_TOTAL] += run
            if run > tf[ps, TF_ACC + A_WORST]:
                acc_worst(ti, tf, ps, I64(T_ACC), I64(TF_ACC), start, ts, c, ci[s, C_CUR_EID], eid)
            area = q_area(ci[s, C_QPRES], cf[s, F_QN], cf[s, F_QAREA], cf[s, F_QSINCE], ts)
            delay = area - cf[s, F_AREA]
            if delay > 0:
                tf[ps, TF_DELAY] += delay
            if is_hog(run, hog):
                ti[ps, T_HOG] += 1
            if dg_on:
                log_digest(I64(BUCKET_RUN), c, prev, start, ts)
        if tl_on and si[S_TLTOTAL] < si[S_TLMAX]:
            j = si[S_TL]
            si[S_TL] += 1
            si[S_TLTOTAL] += 1
            tl_i[j, 0] = c
            tl_i[j, 1] = prev
            tl_f[j, 0] = start
            tl_f[j, 1] = ts

    def switch_out(eid: int, ts: float, c: int, s: int, prev: int, prio: int, st: int, nxt: int, nprio: int) -> None:
        """SchedAnalyzer._switch_out: the task switched out (not idle) is preempted (waits here), blocked, or gone."""
        ps = task_slot(prev)
        if ps < 0:
            ps = new_task(prev, eid * 2, prio, si, pid_slot, pid_map, ti)
        ti[ps, T_COMM] = eid * 2
        ti[ps, T_PRIO] = prio
        ti[ps, T_PEND] = -1
        ti[ps, T_PRE] = -1  # it ran until now: an open preemption wait ended (SchedAnalyzer._switch_out)
        epoch = si[S_EPOCH]
        w = unqueue(ps, ts, epoch)
        if w == s:  # (another CPU: it moved at a time the trace does not show, not charged: SchedAnalyzer._unqueue)
            charge(w, tf[ps, TF_WAIT_TS], ts, prev, ps)
        if st == PREEMPTED_LETTER:
            ti[ps, T_PRE] = eid
            ti[ps, T_PRE_SLOT] = s
            tf[ps, TF_PRE_TS] = ts
            ti[ps, T_WCPU] = s
            ti[ps, T_WEP] = epoch
            tf[ps, TF_WAIT_TS] = ts
            tf[ps, TF_WAIT0] = np.nan
            ti[ps, T_MV_N] = 0
            queue(s, ts, 1.0)
            if ts >= w0:  # who preempted it, counted in the window only (--window, --around)
                # RT throttling's switch-outs (TaskState.throttled_for) apart: keyed by ~pid, first seen first too
                key = (ps, ~nxt if is_throttled(prio, nxt, nprio) else nxt)
                b = pb_map.get(key, -1) + 0
                if b < 0:
                    b = si[S_NPB]
                    si[S_NPB] += 1
                    pb_map[key] = b
                    pb_i[b, 0] = ps
                    pb_i[b, 1] = key[1]
                    pb_i[b, 2] = 0
                pb_i[b, 2] += 1
        elif st != _Z and st != _X:  # noqa: PLR1714 (not gone: blocked)
            ti[ps, T_BLK] = eid
            tf[ps, TF_BLK_TS] = ts
            ti[ps, T_BLK_CPU] = c
            ti[ps, T_BLK_STATE] = st

    def switch_in(eid: int, ts: float, c: int, s: int, nxt: int, prio: int) -> None:
        """SchedAnalyzer._switch_in: the task switched in runs from ``ts``; its wakeup or preemption wait ends."""
        ns = task_slot(nxt)
        waited_on = unqueue(ns, ts, si[S_EPOCH]) if ns >= 0 else -1
        if ci[s, C_CUR_SEQ] < 0:
            ci[s, C_CUR_SEQ] = si[S_CURSEQ]
            si[S_CURSEQ] += 1
        ci[s, C_CUR_PID] = nxt
        ci[s, C_CUR_EID] = eid
        ci[s, C_CUR_SLOT] = -1
        cf[s, F_SINCE] = ts
        cf[s, F_AREA] = q_area(ci[s, C_QPRES], cf[s, F_QN], cf[s, F_QAREA], cf[s, F_QSINCE], ts)
        if waited_on == s:  # charged once the run that ended here is in the ring (moved unseen: not charged)
            charge(waited_on, tf[ns, TF_WAIT_TS], ts, nxt, ns)
        if nxt == 0:
            return
        if ns < 0:
            ns = new_task(nxt, eid * 2 + 1, prio, si, pid_slot, pid_map, ti)
        ti[ns, T_COMM] = eid * 2 + 1
        ti[ns, T_PRIO] = prio
        ci[s, C_CUR_SLOT] = ns
        fig = 0
        b_eid = -1
        b_ts = 0.0
        q = s  # the CPU slot the wait was queued on
        if ti[ns, T_PEND] >= 0:
            fig = A_WAKE
            b_eid = ti[ns, T_PEND]
            b_ts = tf[ns, TF_PEND_TS]
            ti[ns, T_PEND] = -1
            target = ti[ns, T_PEND_SLOT]
            q = target
            if target != s and not ci[target, C_SWITCHED]:  # its switch-in there could not be seen: not counted
                if clip(b_ts, ts, sc[X_BARRIER], w0)[0]:
                    ti[ns, T_UNSEEN] += 1
                    ti[ns, T_UNSEEN_CPU] = ci[target, C_CPU]
                fig = 0
        elif ti[ns, T_PRE] >= 0:
            fig = A_PREEMPT
            b_eid = ti[ns, T_PRE]
            b_ts = tf[ns, TF_PRE_TS]
            ti[ns, T_PRE] = -1
            q = ti[ns, T_PRE_SLOT]
        barrier = sc[X_BARRIER]
        if fig:  # _waited, written out
            ok, start = clip(b_ts, ts, barrier, w0)
            if ok:
                latency = ts - start
                ib = T_ACC + 4 * fig
                fb = TF_ACC + 3 * fig
                ti[ns, ib + A_COUNT] += 1
                tf[ns, fb + A_TOTAL] += latency
                if latency > tf[ns, fb + A_WORST]:
                    worst_wait(
                        si,
                        ci,
                        cf,
                        ti,
                        tf,
                        rings,
                        wblames,
                        wb_q,
                        ns,
                        nxt,
                        fig,
                        b_eid,
                        eid,
                        start,
                        ts,
                        c,
                        s,
                        q,
                        waited_on,
                    )
                if dg_on:
                    log_digest(I64(BUCKET_LATENCY), c, nxt, ts, latency)
        if ti[ns, T_BLK] >= 0:  # its wakeup was not traced: blocked until the switch-in
            blocked(ns, ts, eid, barrier, w0)

    def switch(i: int, eid: int, ts: float, c: int, s: int) -> None:
        """SchedAnalyzer._switch: the run that ends on CPU slot ``s``, the task switched out, the task in."""
        prev = pidcol[i]
        if ts >= w0:  # the window's switches (--window, --around), as its busy and idle time
            ci[s, C_SWITCHES] += 1
        ci[s, C_SWITCHED] = 1
        if ci[s, C_CUR_SEQ] >= 0 and ci[s, C_CUR_PID] == prev:
            run_ends(eid, ts, c, s, prev, priocol[i])
        if prev != 0:
            switch_out(eid, ts, c, s, prev, priocol[i], statecol[i], nxtcol[i], nprcol[i])
        switch_in(eid, ts, c, s, nxtcol[i], nprcol[i])

    def placed(ts: float, p: int, t: int) -> None:
        """SchedAnalyzer._placed: a sched_wakeup after sched_waking queued task ``p`` on CPU slot ``t``."""
        ps = task_slot(p) if p != 0 else -1
        if ps < 0 or ti[ps, T_PEND] < 0 or not ti[ps, T_UNPLACED]:
            return
        ti[ps, T_UNPLACED] = 0
        ti[ps, T_PEND_SLOT] = t
        w = ti[ps, T_WCPU] if ti[ps, T_WEP] == si[S_EPOCH] else -1
        if w == t:
            return
        if w >= 0:  # queued on the waking's target before the trace was known to have both events: moved here
            queue(w, ts, -1.0)
            queue(t, ts, 1.0)
            ti[ps, T_WCPU] = t
            tf[ps, TF_WAIT_TS] = ts
            ti[ps, T_MV_N] = 0  # a migration before its sched_wakeup: the wakeup choosing its CPU
            return
        since = tf[ps, TF_PEND_TS]
        if since <= sc[X_BARRIER] or since > ts:  # its wait spans lost events: forgotten
            return
        queue(t, ts, 1.0)
        cf[t, F_QAREA] += ts - since  # it waited here from its waking
        ti[ps, T_WCPU] = t
        ti[ps, T_WEP] = si[S_EPOCH]
        tf[ps, TF_WAIT_TS] = since
        tf[ps, TF_WAIT0] = np.nan
        ti[ps, T_MV_N] = 0

    def wake(i: int, eid: int, ts: float, k: int, t: int) -> None:
        """SchedAnalyzer._wake: a wakeup starts a wait on CPU slot ``t`` and ends a sleep."""
        if k == WAKING:
            if not si[S_SEENWAKING]:
                si[S_SEENWAKING] = 1
        elif k == WAKEUP and si[S_SEENWAKING]:
            si[S_SEENWAKING] = 2  # SchedAnalyzer.wakeup_placed
            placed(ts, pidcol[i], t)
            return
        p = pidcol[i]
        if p == 0:
            return
        ps = task_slot(p)
        if ps < 0:
            ps = new_task(p, eid * 2, priocol[i], si, pid_slot, pid_map, ti)
        epoch = si[S_EPOCH]
        if ti[ps, T_PEND] < 0:
            ti[ps, T_PEND] = eid
            ti[ps, T_UNPLACED] = 1 if k == WAKING else 0
            ti[ps, T_PEND_SLOT] = t
            tf[ps, TF_PEND_TS] = ts
            si[S_WS + k] += 1
            if not (ti[ps, T_WCPU] >= 0 and ti[ps, T_WEP] == epoch) and not (k == WAKING and si[S_SEENWAKING] == 2):
                ti[ps, T_WCPU] = t
                ti[ps, T_WEP] = epoch
                tf[ps, TF_WAIT_TS] = ts
                tf[ps, TF_WAIT0] = np.nan
                ti[ps, T_MV_N] = 0
                queue(t, ts, 1.0)
        elif k == WAKING:  # a later waking while one is pending: the next sched_wakeup is that one's
            ti[ps, T_UNPLACED] = 0
        if ti[ps, T_BLK] >= 0:  # _blocked, written out (most wakeups wake a sleeper)
            b_eid = ti[ps, T_BLK]
            ti[ps, T_BLK] = -1
            ok, start = clip(tf[ps, TF_BLK_TS], ts, sc[X_BARRIER], w0)
            if ok:
                letter = ti[ps, T_BLK_STATE]
                key = (ps, letter)
                a = blk_map.get(key, -1) + 0
                if a < 0:
                    a = new_oacc(si, oi, I64(K_BLOCKED), ps, letter)
                    blk_map[key] = a
                slept = ts - start
                oi[a, A_COUNT] += 1
                of[a, A_TOTAL] += slept
                if slept > of[a, A_WORST]:
                    acc_worst(oi, of, a, I64(0), I64(0), start, ts, ti[ps, T_BLK_CPU], b_eid, eid)

    def irq(eid: int, ts: float, c: int, s: int, k: int, num: int) -> None:
        """SchedAnalyzer._irq: push an entry on the CPU's IRQ stack, or count the handler its exit ends."""
        d = ci[s, C_DEPTH]
        if k == IRQ_ENTRY:
            stk_i[s, d, 0] = eid
            stk_i[s, d, 1] = num
            stk_f[s, d] = ts
            ci[s, C_DEPTH] = d + 1
            r = get(irq_map, num)
            if r < 0:
                r = si[S_NIRQ]
                si[S_NIRQ] += 1
                irq_map[num] = r
                irq_i[r, 0] = num
                irq_i[r, 2] = -1
            irq_i[r, 1] = eid
            return
        if d == 0 or stk_i[s, d - 1, 1] != num:
            return
        ci[s, C_DEPTH] = d - 1
        ok, start = clip(stk_f[s, d - 1], ts, cpu_barrier(sc, cf, s), w0)
        if not ok:
            return
        r = irq_map[num]
        if irq_i[r, 2] < 0:
            irq_i[r, 2] = new_oacc(si, oi, I64(K_IRQ), num, I64(0))
        acc_add(oi, of, irq_i[r, 2], start, ts, c, stk_i[s, d - 1, 0], eid)
        cf[s, F_IRQ] += ts - start
        if dg_on:
            log_digest(I64(BUCKET_IRQ), c, I64(0), start, ts)

    def softirq(eid: int, ts: float, c: int, s: int, k: int, vec: int) -> None:
        """SchedAnalyzer._softirq: a raise, an entry (ends the raise-to-entry wait) or an exit (ends a run)."""
        barrier = cpu_barrier(sc, cf, s)
        v = get(soft_map, vec)
        if v < 0:
            v = si[S_NSOFT]
            si[S_NSOFT] += 1
            soft_map[vec] = v
            soft_i[v, 0] = vec
            soft_i[v, 1] = -1
            soft_i[v, 2] = -1
        if k == SOFTIRQ_RAISE:
            if raised_eid[s, v] < 0:
                raised_eid[s, v] = eid
                raised_ts[s, v] = ts
            return
        if k == SOFTIRQ_ENTRY:
            ci[s, C_SOFT_EID] = eid
            ci[s, C_SOFT_VEC] = vec
            cf[s, F_SOFT_TS] = ts
            r_eid = raised_eid[s, v]
            if r_eid < 0:
                return
            raised_eid[s, v] = -1
            ok, start = clip(raised_ts[s, v], ts, barrier, w0)
            if not ok:
                return
            if soft_i[v, 2] < 0:
                soft_i[v, 2] = new_oacc(si, oi, I64(K_RAISE), vec, I64(0))
            if acc_add(oi, of, soft_i[v, 2], start, ts, c, r_eid, eid):
                parts_t = np.empty((1, 3))
                parts_t[0, 0] = start
                parts_t[0, 1] = ts
                parts_t[0, 2] = cf[s, F_SINCE] if ci[s, C_CUR_SEQ] >= 0 else np.inf
                behind(ci, si, rings, ti, np.full(1, s, np.int64), parts_t, True, I64(-1), sblames, v)
            return
        e_eid = ci[s, C_SOFT_EID]
        if e_eid < 0 or ci[s, C_SOFT_VEC] != vec:  # an exit whose entry was not seen served the pending raise
            raised_eid[s, v] = -1
            ci[s, C_SOFT_EID] = -1
            return
        ci[s, C_SOFT_EID] = -1
        ok, start = clip(cf[s, F_SOFT_TS], ts, barrier, w0)
        if not ok:
            return
        if soft_i[v, 1] < 0:
            soft_i[v, 1] = new_oacc(si, oi, I64(K_SOFT), vec, I64(0))
        acc_add(oi, of, soft_i[v, 1], start, ts, c, e_eid, eid)
        cf[s, F_SOFT] += ts - start
        if dg_on:
            log_digest(I64(BUCKET_SOFTIRQ), c, I64(0), start, ts)

    def work(eid: int, ts: float, c: int, s: int, k: int, item: int, fn: int) -> None:
        """SchedAnalyzer._work: a work item starts, or its end counts it under its function."""
        key = (s, item)
        if k == WORK_START:
            work_cur[key] = (eid, ts, fn)
            return
        if key not in work_cur:
            return
        b_eid, b_ts, b_fn = work_cur.pop(key)
        ok, start = clip(b_ts, ts, sc[X_BARRIER], w0)
        if not ok:
            return
        a = get(work_map, b_fn)
        if a < 0:
            a = new_oacc(si, oi, I64(K_WORK), b_fn, I64(0))
            work_map[b_fn] = a
        acc_add(oi, of, a, start, ts, c, b_eid, eid)

    def offtime(eid: int, ts: float, c: int, s: int, k: int) -> None:
        """SchedAnalyzer._offtime: an irqs/preempt disable starts an interval, the enable ends and counts it."""
        b = off_index(k)
        if si[S_OFFACC + b] < 0:
            si[S_OFFACC + b] = new_oacc(si, oi, I64(K_OFF), off_base(k), I64(0))
        if opens_offtime(k):
            if ci[s, C_OFF + b] < 0:
                ci[s, C_OFF + b] = eid
                cf[s, F_OFF_TS + b] = ts
            return
        b_eid = ci[s, C_OFF + b]
        if b_eid < 0:
            return
        ci[s, C_OFF + b] = -1
        ok, start = clip(cf[s, F_OFF_TS + b], ts, cpu_barrier(sc, cf, s), w0)
        if not ok:
            return
        acc_add(oi, of, si[S_OFFACC + b], start, ts, c, b_eid, eid)
        if keeps_offtime(ts - start, offt):
            off_worst(si, ow_i, ow_f, b, ts - start, start, c, b_eid, eid)

    def exit_(ts: float, p: int) -> None:
        """SchedAnalyzer._exit: the task no longer waits, is woken, sleeps or is preempted."""
        ps = task_slot(p)
        if ps < 0:
            return
        w = unqueue(ps, ts, si[S_EPOCH])
        if w >= 0:
            charge(w, tf[ps, TF_WAIT_TS], ts, p, ps)
        ti[ps, T_PEND] = -1
        ti[ps, T_BLK] = -1
        ti[ps, T_PRE] = -1

    def migrate(eid: int, ts: float, p: int, t: int) -> None:
        """SchedAnalyzer._migrate: counted; a waiting task (slot of ``p``) moved to CPU slot ``t`` waits there from
        ``ts``, the CPU it left charged with its wait so far (one wait with the parts to come: TF_WAIT0)."""
        si[S_MIGR] += 1
        ps = task_slot(p) if p != 0 and t >= 0 else -1
        if ps < 0 or ti[ps, T_WCPU] < 0 or ti[ps, T_WEP] != si[S_EPOCH] or ti[ps, T_WCPU] == t:
            return
        w = ti[ps, T_WCPU]
        since = tf[ps, TF_WAIT_TS]
        queue(w, ts, -1.0)
        queue(t, ts, 1.0)
        ti[ps, T_WCPU] = t
        tf[ps, TF_WAIT_TS] = ts
        if np.isnan(tf[ps, TF_WAIT0]):
            tf[ps, TF_WAIT0] = since
        n = ti[ps, T_MV_N]
        if n <= MOVES:
            if n < MOVES:
                ti[ps, T_MV + 3 * n] = w
                ti[ps, T_MV + 3 * n + 1] = t
                ti[ps, T_MV + 3 * n + 2] = eid
                tf[ps, TF_MV + n] = ts
            ti[ps, T_MV_N] = n + 1
        charge(w, since, ts, p, ps)

    def room(i: int, k: int, c: int, s: int) -> tuple[int, int]:
        """What must grow before row ``i`` may change the state (``N_*`` flags, 0: nothing), and the target CPU slot.

        Room a row may need: 2 tasks, 1 accumulator (+1 off-time), 1 IRQ, 1 vector, 2 x (tasks + 1) victims (a switch
        ends up to two waits, each charging each task that ran meanwhile once), 1 preemptor, 1 ring and 1 more run
        in its CPU's ring, 1 timeline run, 2 digest calls; its CPU slots, pid slots and IRQ depth.
        """
        need = 0
        if si[S_NSLOTS] > full_slots:
            need |= N_SLOTS
        if si[S_NOACC] > full_oacc:
            need |= N_OACC
        if si[S_NIRQ] > full_irq:
            need |= N_IRQ
        if si[S_NSOFT] > full_soft:
            need |= N_SOFT
        if si[S_NVIC] > vic_i.shape[0] - 2 * (min(cap, si[S_NSLOTS] + 2) + 1):
            need |= N_VIC
        if si[S_NPB] > full_pb:
            need |= N_PB
        if si[S_NRING] > full_ring:
            need |= N_RING
        if k == SWITCH and s < ncpu and ci[s, C_RING] >= 0:  # a full ring that keeps its oldest run deepens
            r = ci[s, C_RING]
            n = ring_h[r, 1]
            if n == cap and not drops_run(n, ring_f[r, ring_h[r, 0], 1], tscol[i]):
                need |= N_RUNS
        if si[S_TL] > full_tl:
            need |= N_TL
        if si[S_DG] > full_dg:
            need |= N_DG
        hi = s
        t = -1
        if WAKING <= k <= WAKEUP_NEW or (k == MIGRATE and nxtcol[i] >= 0):  # the target CPU, the migration's dest
            tc = nxtcol[i] if nxtcol[i] >= 0 else c
            t = tc if 0 <= tc < CPU_DIRECT else cpu_slot(tc, cpu_map, True)
            hi = max(hi, t)
        if hi >= ncpu:
            need |= N_CPU
            si[S_NEED_CPU] = hi + 1
        if k <= WAKEUP_NEW:
            top = -1
            p = pidcol[i]
            if npid <= p < PID_DIRECT:
                top = p
            p = nxtcol[i]
            if k == SWITCH and npid <= p < PID_DIRECT:
                top = max(top, p)
            if top >= 0:
                need |= N_PID
                si[S_NEED_PID] = top + 1
        if k == IRQ_ENTRY and s < ncpu and ci[s, C_DEPTH] >= stk_i.shape[1]:
            need |= N_DEPTH
            si[S_NEED_DEPTH] = ci[s, C_DEPTH] + 1
        return need, t

    # -- the loop: SchedAnalyzer._feed

    w1 = sc[X_W1]
    n = kind.shape[0]
    for i in range(i0, n):
        k = kind[i]
        ts = tscol[i]
        eid = first_eid + i
        if k == LOST:
            lost(cpucol[i], pidcol[i], sc, si, ci, cf, cpu_map)
            continue
        if ts > w1:
            return DONE, i
        c = cpucol[i]
        s = c if 0 <= c < CPU_DIRECT else cpu_slot(c, cpu_map, True)
        need, t = room(i, k, c, s)
        if need:
            si[S_NEED] = need
            return GROW, i
        si[S_CPUHI] = max(si[S_CPUHI], max(s, t) + 1)
        ci[s, C_CPU] = c
        if t >= 0:
            ci[t, C_CPU] = nxtcol[i] if nxtcol[i] >= 0 else c
        # -- first/last event of the CPU
        if ci[s, C_LAST] < 0:
            ci[s, C_FIRST] = eid
            ci[si[S_NSEEN], C_ORDER] = s
            si[S_NSEEN] += 1
            if ts < sc[X_FIRSTTS]:  # noqa: PLR1730 (min(first_ts, ts) exactly)
                sc[X_FIRSTTS] = ts
        elif ts < cf[s, F_LAST_TS]:  # the CPU's clock went back: SchedAnalyzer._feed's barrier
            step_barrier(sc, si, ci, cf)
        ci[s, C_LAST] = eid
        cf[s, F_LAST_TS] = ts
        if k == SWITCH:  # dispatch as rules.HANDLERS
            switch(i, eid, ts, c, s)
        elif k <= WAKEUP_NEW:
            wake(i, eid, ts, k, t)
        elif k <= IRQ_EXIT:
            irq(eid, ts, c, s, k, pidcol[i])
        elif k <= SOFTIRQ_EXIT:
            softirq(eid, ts, c, s, k, pidcol[i])
        elif k <= WORK_END:
            work(eid, ts, c, s, k, workcol[i], statecol[i])
        elif k <= PREEMPT_ENABLE:
            offtime(eid, ts, c, s, k)
        elif k <= PROCESS_EXIT:
            exit_(ts, pidcol[i])
        else:
            migrate(eid, ts, pidcol[i], t)
    return FINISHED, n


@njit
def state_refs(si: Any, ci: Any, stk_i: Any, ti: Any, oi: Any, raised_eid: Any, work_cur: Any, ow_i: Any) -> Any:
    """Every event id the state refers to (with repeats): the events the engine must keep."""
    hi = si[S_CPUHI]
    nt = si[S_NSLOTS]
    no = si[S_NOACC]
    size = (
        hi * (8 + stk_i.shape[1])
        + nt * (9 + MOVES)
        + no * 2
        + hi * si[S_NSOFT]
        + len(work_cur)
        + 2 * 2 * (OFF_KEEP + 1)
    )
    out = np.empty(size, np.int64)
    m = 0
    for s in range(hi):
        if ci[s, C_CUR_SEQ] >= 0:
            out[m] = ci[s, C_CUR_EID]
            m += 1
        for col in (C_FIRST, C_LAST, C_SOFT_EID, C_OFF, C_OFF + 1):
            out[m] = ci[s, col]
            m += 1
        for d in range(ci[s, C_DEPTH]):
            out[m] = stk_i[s, d, 0]
            m += 1
        for v in range(si[S_NSOFT]):
            out[m] = raised_eid[s, v]
            m += 1
    for t in range(nt):
        for col in (T_PEND, T_PRE, T_BLK, T_ACC + 2, T_ACC + 3, T_ACC + 6, T_ACC + 7, T_ACC + 10, T_ACC + 11):
            out[m] = ti[t, col]
            m += 1
        for j in range(min(ti[t, T_MV_N], MOVES)):  # the sched_migrate_task events of a wait in progress
            out[m] = ti[t, T_MV + 3 * j + 2]
            m += 1
    for a in range(no):
        out[m] = oi[a, A_BEGIN]
        out[m + 1] = oi[a, A_END]
        m += 2
    for value in work_cur.values():
        out[m] = value[0]
        m += 1
    for b in range(2):
        for j in range(si[S_OWN + b]):
            out[m] = ow_i[b, j, 1]
            out[m + 1] = ow_i[b, j, 2]
            m += 2
    out = out[:m]
    return out[out >= 0]
