"""The layout of the scheduling engine's state arrays: column and slot numbers, defaults, growth flags.

What :mod:`detectors.sched.engine` (the Python side: tables, growth, export) and
:mod:`detectors.sched.engine_kernels` (the compiled state machine) share.  Kept apart from the kernels
so that the Python side imports no numba: with the kernels compiled ahead of time
(:mod:`detectors.sched.engine_aot`) a run never loads it.
"""

from __future__ import annotations

from detectors.sched import rules

RING = rules.RECENT_RUNS  # the first depth of the per-CPU rings of runs (SchedAnalyzer.recent's deques)
CPU_DIRECT = 1024  # CPUs below this are their own slot
VIC_DENSE = 512  # victims of task slots below this are found in an array, others in a dict
PID_DIRECT = 1 << 20  # pids below this map to slots through an array, others through a dict
DONE, FINISHED, GROW = 1, 0, 2

# si: integer scalars
(S_NSLOTS, S_NOACC, S_NIRQ, S_NSOFT, S_NVIC, S_NPB, S_NRING, S_TL, S_DG, S_TLTOTAL, S_TLMAX, S_TLON, S_DGON,
 S_EPOCH, S_CURSEQ, S_NSEEN, S_CPUHI, S_SEENWAKING, S_LOSTM, S_LOSTE, S_WS, S_OFFACC, S_OWN, S_NEED, S_NEED_CPU,
 S_NEED_PID, S_NEED_DEPTH) = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 25, 27, 29,
                              30, 31, 32)  # fmt: skip
S_MIGR = 33  # the sched_migrate_task events read up to the window's end (SchedAnalyzer.migrations)
NSI = 34  # S_WS: 5 counters indexed by kind; S_OFFACC, S_OWN: 2 each (irqs-off, preempt-off)
# sc: float scalars
X_BARRIER, X_FIRSTTS, X_W0, X_W1, X_HOG, X_OFFT, X_HARD = 0, 1, 2, 3, 4, 5, 6  # X_HARD: SchedAnalyzer.hard
NSC = 7
# growth flags (si[S_NEED])
N_SLOTS, N_OACC, N_IRQ, N_SOFT, N_VIC, N_PB, N_RING, N_TL, N_DG, N_CPU, N_PID, N_DEPTH = (
    1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048
)  # fmt: skip
N_RUNS = 4096  # a CPU's ring of runs is full and keeps its oldest (rules.drops_run): every ring doubles its depth

# per-CPU ints (ci) and floats (cf)
(C_CUR_PID, C_CUR_SLOT, C_CUR_EID, C_CUR_SEQ, C_QPRES, C_RING, C_FIRST, C_LAST, C_SWITCHES, C_DEPTH, C_SOFT_EID,
 C_SOFT_VEC, C_OFF, C_CPU, C_ORDER) = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15)  # fmt: skip
C_SWITCHED = 16  # 1 once a sched_switch of the CPU was read (before, in or after a window): SchedAnalyzer.switched
NCI = 17  # C_OFF: 2 columns; C_ORDER: row k holds the slot of the k-th CPU seen
CI_DEFAULT = (0, -1, -1, -1, 0, -1, -1, -1, 0, 0, -1, 0, -1, -1, 0, -1, 0)
(F_SINCE, F_AREA, F_QN, F_QAREA, F_QSINCE, F_LAST_TS, F_BUSY, F_IDLE, F_IRQ, F_SOFT, F_SOFT_TS, F_OFF_TS) = range(12)
F_LOSTBAR = 14  # SchedAnalyzer.lost_bar: the barrier of the CPU's own intervals from its losses (-inf: none)
NCF = 15  # F_OFF_TS: 2 columns
CF_DEFAULT = (0.0,) * F_LOSTBAR + (float("-inf"),)

# per-task ints (ti) and floats (tf); T_ACC/TF_ACC: runs, wakeup, preempt_wait accumulators
(T_PID, T_PRIO, T_COMM, T_HOG, T_WCPU, T_WEP, T_PEND, T_PRE, T_BLK, T_BLK_CPU, T_BLK_STATE, T_ACC) = range(12)
# after the accumulators: the CPU slot a pending wakeup woke the task onto; TaskState.unseen_wakes, unseen_cpu
T_PEND_SLOT, T_UNSEEN, T_UNSEEN_CPU = 23, 24, 25  # T_ACC + 12
T_PRE_SLOT = 26  # the CPU slot a preempted task was switched out on (where its preemption wait is queued)
T_UNPLACED = 27  # 1: its pending wake is a sched_waking whose sched_wakeup is still to come (SchedAnalyzer.unplaced)
# The moves of its wait (SchedAnalyzer.moves): how many (up to MOVES + 1), then per move the CPU slot left, the dest
# CPU slot and the sched_migrate_task's event id; their times in tf from TF_MV.
T_MV_N, T_MV = 28, 29
MOVES = rules.MOVES
NTI = T_MV + 3 * MOVES
TI_DEFAULT = (0, 0, -1, 0, -1, 0, -1, -1, -1, 0, 0) + (0, -1, -1, -1) * 3 + (-1, 0, -1, -1, 0, 0) + (-1,) * 3 * MOVES
# a task wait's blames (wb_i): pid, comm reference, task slot, CPU; its wb_q: the CPU it was queued on, rules.MOVED,
# the moves kept (Wait.moves: MOVED_TRACED), then per move the CPU left, the dest CPU, the event id
B_CPU = 3
NB = 4
Q_N, Q_MOVE = 2, 3
NQ = Q_MOVE + 3 * MOVES
TF_RUNTIME, TF_DELAY, TF_PEND_TS, TF_PRE_TS, TF_BLK_TS, TF_ACC = range(6)
TF_WAIT_TS = 14  # after the accumulators: since when it waits on T_WCPU (SchedAnalyzer.wait_since)
TF_WAIT0 = 15  # when its wait began, once a sched_migrate_task moved it (SchedAnalyzer.wait_first; NaN: not moved)
TF_MV = 16  # the time of each move (T_MV)
NTF = TF_MV + MOVES
TF_DEFAULT = (0.0, 0.0, 0.0, 0.0, 0.0) + (0.0, -1.0, 0.0) * 3 + (0.0, float("nan")) + (0.0,) * MOVES
A_RUNS, A_WAKE, A_PREEMPT = 0, 1, 2
# accumulator columns: ints count, worst_cpu, worst_begin eid, worst_end eid; floats total, worst, worst_start
A_COUNT, A_CPU, A_BEGIN, A_END = 0, 1, 2, 3
A_TOTAL, A_WORST, A_START = 0, 1, 2
ACC_F_DEFAULT = (0.0, -1.0, 0.0)
# other accumulators (oi: the 4 accumulator ints, then kind, key1, key2)
O_KIND, O_K1, O_K2 = 4, 5, 6
NOI = 7
OI_DEFAULT = (0, -1, -1, -1, -1, 0, 0)
K_BLOCKED, K_IRQ, K_SOFT, K_RAISE, K_WORK, K_OFF = 0, 1, 2, 3, 4, 5  # key1/key2: slot/letter, irq, vec, vec, fn, kind
