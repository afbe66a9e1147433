"""LTTng's ``sched_switch`` ``prev_state`` by the kernel that recorded it: the raw ``p->state`` before 4.14.

lttng-modules records, on kernels 4.14 and later, the kernel's TASK_REPORT encoding (include/trace/events/
sched.h ``__trace_sched_switch_state``): ``1 << (task_state_index() - 1)``, one bit per state in the order
of ``task_state_array`` (S D T t X Z P I), preemption as TASK_REPORT_MAX (0x100).  Before 4.14 it records
``p->state`` itself (``TASK_RUNNING | TASK_STATE_MAX`` when preempted), whose bits differ from one kernel to
the next: 4.14 renumbered them (8ef9925b02c2, "sched/debug: Add explicit TASK_PARKED printing": TASK_PARKED
0x200 -> 0x40, TASK_DEAD 0x40 -> 0x80) and added TASK_REPORT_IDLE (06eb61844d84, "sched/debug: Add explicit
TASK_IDLE printing"); before it, TASK_PARKED came in 3.9 (2a1d446019f9, "kthread: Implement park/unpark
facility"), EXIT_ZOMBIE and EXIT_DEAD swapped in 3.15 ("wait: swap EXIT_ZOMBIE and EXIT_DEAD to hide
EXIT_TRACE from user-space"), TASK_NOLOAD in 4.2 (80ed87c8a9ca, "sched/wait: Introduce TASK_NOLOAD and
TASK_IDLE"), TASK_NEW in 4.8, each moving TASK_STATE_MAX up.  Read with the 4.14 table, a 3.10 kernel's
TASK_DEAD (64) was "P" (parked, blocked) and its TASK_PARKED (512) "R": a parked per-CPU kthread taken for a
preempted, runnable one.

So a pre-4.14 value is translated to the value 4.14 reports for the same task (what the reader's letters are
read from): the states TASK_REPORT keeps, the highest of them as ``task_state_index`` takes it (``fls``),
TASK_IDLE as TASK_REPORT_IDLE, TASK_DEAD as EXIT_ZOMBIE (a task's last switch-out; 4.14 reports its
``exit_state``, Z or X: either is a task gone), and what TASK_REPORT masks (TASK_WAKEKILL, TASK_WAKING,
TASK_NOLOAD alone, TASK_NEW, TASK_STATE_MAX) as running.  The kernel is told by the trace's
``env.kernel_release`` (as drgn and perfetto tell the layouts apart by the kernel's version: the values are
no ABI); a release that names no version is taken as 4.14 or later, and the reader says so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from forensics.types.release import release_version

#: The raw values translated: every bit up to TASK_STATE_MAX of 4.8-4.13 (0x1000: masked off, running).
SIZE = 1 << 12

# The 4.14 TASK_REPORT bits (the value lttng-modules records for each): the letters "SDTtXZPI" in order.
_S, _D, _T, _TT, _X, _Z, _P, _I = (1 << k for k in range(8))


@dataclass(frozen=True)
class _Layout:
    """The ``p->state`` bits of a range of kernels (0: the kernel has no such state)."""

    since: tuple[int, int]  # the first release with this layout
    zombie: int
    dead: int
    parked: int
    noload: int


# Before 4.14, newest first (each holds from ``since`` to the next newer one).
_LAYOUTS = (
    _Layout((4, 2), zombie=0x20, dead=0x10, parked=0x200, noload=0x400),
    _Layout((3, 15), zombie=0x20, dead=0x10, parked=0x200, noload=0),
    _Layout((3, 9), zombie=0x10, dead=0x20, parked=0x200, noload=0),
    _Layout((0, 0), zombie=0x10, dead=0x20, parked=0, noload=0),
)
_TASK_DEAD = 0x40  # before 4.14, in every layout above
_MASKED = 0x80 | 0x100  # TASK_WAKEKILL, TASK_WAKING (before 4.14): not states TASK_REPORT keeps
_REPORT_SINCE = (4, 14)


@dataclass(frozen=True)
class StateTable:
    """How a kernel trace's ``prev_state`` values are read."""

    # Raw value & (SIZE - 1) -> the value 4.14 reports; None: the trace records 4.14's encoding already.
    to_report: npt.NDArray[np.int64] | None
    layout: str  # which kernels' layout, as said in the docs and notes
    assumed: str = ""  # why the layout was assumed ("": the trace's kernel release chose it)

    def report(self, value: int) -> int:
        """One raw value as 4.14 reports it."""
        return value if self.to_report is None else int(self.to_report[value & (SIZE - 1)])


def _translation(lay: _Layout) -> npt.NDArray[np.int64]:
    out = np.zeros(SIZE, dtype=np.int64)
    kept = ((1, _S), (2, _D), (4, _T), (8, _TT), (lay.dead, _X), (lay.zombie, _Z), (_TASK_DEAD, _Z), (lay.parked, _P))
    for raw in range(1, SIZE):
        if lay.noload and raw & ~_MASKED == _D | lay.noload:
            out[raw] = _I  # TASK_IDLE: 4.14's TASK_REPORT_IDLE
            continue
        bits = [report for bit, report in kept if bit and raw & bit]
        out[raw] = max(bits, default=0)  # fls: the highest state TASK_REPORT keeps
    return out


def state_table(release: str | None) -> StateTable:
    """The reading of ``prev_state`` for a kernel trace whose ``env.kernel_release`` is ``release``."""
    at = release_version(release or "")
    if at is None:
        why = f"the release {release!r} names no version" if release else "the metadata names no kernel release"
        return StateTable(None, "4.14 and later (TASK_REPORT)", f"{why} (env.kernel_release)")
    if at >= _REPORT_SINCE:
        return StateTable(None, "4.14 and later (TASK_REPORT)")
    lay = next(lay for lay in _LAYOUTS if at >= lay.since)
    return StateTable(_translation(lay), f"raw p->state of kernels before 4.14 ({release})")
