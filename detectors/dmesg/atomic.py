"""The kernel's preempt_count, decoded: what a "scheduling while atomic" or "sleeping function called from invalid
context" report says the task was inside when it slept.

``preempt_count`` is one word of counters (include/linux/preempt.h): bits 0-7 the preemption-disable depth
(``preempt_disable()``, ``spin_lock()``), bits 8-15 the softirq count (``SOFTIRQ_OFFSET`` 0x100 while a softirq is
served, ``SOFTIRQ_DISABLE_OFFSET`` 0x200 for each ``local_bh_disable()``/``spin_lock_bh()``), bits 16-19 the hard
interrupt nesting, bits 20-23 the NMI nesting, bit 31 x86's inverted need-resched flag.  ``__schedule_bug`` prints it
with the ``preempt_disable()`` of schedule() itself counted in (``in_atomic_preempt_off()``: a count other than that
one is the bug).
"""

from __future__ import annotations

from typing import NamedTuple

PREEMPT_MASK = 0x000000FF
SOFTIRQ_OFFSET = 0x00000100
SOFTIRQ_SHIFT = 8
SOFTIRQ_MASK = 0x0000FF00
HARDIRQ_SHIFT = 16
HARDIRQ_MASK = 0x000F0000
NMI_SHIFT = 20
NMI_MASK = 0x00F00000


class PreemptCount(NamedTuple):
    """One preempt_count, in its parts."""

    value: int
    preempt: int  # preemption-disable depth
    serving_softirq: bool  # SOFTIRQ_OFFSET: a softirq handler runs
    bh_disabled: int  # local_bh_disable() depth (SOFTIRQ_DISABLE_OFFSET units)
    hardirq: int  # hard interrupt nesting
    nmi: int  # NMI nesting

    def words(self, schedules: bool = False) -> str:
        """The parts as a reader says them (``schedules``: printed by __schedule_bug, schedule()'s own
        preempt_disable() counted in)."""
        parts = []
        if self.nmi:
            parts.append(f"in an NMI (depth {self.nmi})")
        if self.hardirq:
            parts.append(f"in a hard interrupt handler (depth {self.hardirq})")
        if self.serving_softirq:
            parts.append("serving a softirq")
        if self.bh_disabled:
            parts.append(f"bottom halves disabled {_times(self.bh_disabled)} (local_bh_disable, spin_lock_bh)")
        own = 1 if schedules and self.preempt else 0
        if self.preempt - own:
            parts.append(f"preemption disabled {_times(self.preempt - own)} (preempt_disable, spin_lock)")
        if own:
            parts.append("1 preemption disable by schedule() itself")
        if not parts:
            parts.append("no count set")
        return f"0x{self.value:08x}: " + ", ".join(parts)

    @property
    def extra_preempt(self) -> int:
        """The preemption-disable depth beyond schedule()'s own (in a scheduling-while-atomic report)."""
        return max(self.preempt - 1, 0)


def decode_preempt_count(value: int) -> PreemptCount:
    """``value`` taken apart as include/linux/preempt.h lays it out."""
    softirq = (value & SOFTIRQ_MASK) >> SOFTIRQ_SHIFT
    return PreemptCount(
        value,
        value & PREEMPT_MASK,
        bool(value & SOFTIRQ_OFFSET),
        softirq >> 1,
        (value & HARDIRQ_MASK) >> HARDIRQ_SHIFT,
        (value & NMI_MASK) >> NMI_SHIFT,
    )


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"
