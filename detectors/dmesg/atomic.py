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

import re
from collections.abc import Sequence
from typing import Literal, NamedTuple

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


#: The frames of the check itself (kernel/sched/core.c ``__might_resched``/``___might_sleep``, mm/memory.c
#: ``__might_fault``): the call that may sleep is the first frame past them.
MIGHT_FRAMES = frozenset(("___might_sleep", "__might_sleep", "might_sleep", "__might_resched", "__might_fault",
                          "might_fault"))  # fmt: skip
#: A user-memory access: it may fault and sleep to page the memory in, whatever flags its caller has.
_USER_COPY = re.compile(r"copy_(?:to|from)_user|(?:get|put|clear)_user|strncpy_from_user|strnlen_user")
#: A sleeping lock or wait: no flag makes it atomic.
_LOCK_OR_WAIT = re.compile(r"mutex_lock|rwsem|^down(?:_\w+)?$|^console_lock$|^lock_sock|^wait_for_|^msleep|"
                           r"^synchronize_|^flush_work|^schedule")  # fmt: skip
#: The might_sleep() sites of the allocators (might_alloc() in include/linux/sched/mm.h, slab_pre_alloc_hook()).
_ALLOC_SITES = ("include/linux/sched/mm.h", "mm/slab.h", "mm/slab.c", "mm/slub.c", "mm/page_alloc.c")

SleepKind = Literal["user copy", "allocation", "lock or wait", "other"]


class SleepingCall(NamedTuple):
    """The call a "sleeping function called from invalid context" report caught, from its stack."""

    call: str  # the function whose might_sleep()/might_fault() fired
    caller: str | None  # the function that called it
    above: str | None  # the caller's caller
    kind: SleepKind


def sleeping_call(functions: Sequence[str], site: str | None) -> SleepingCall | None:
    """The call past the might_sleep() frames of ``functions`` (the reliable frames, innermost first) and what it
    is; ``site`` is the report's "at FILE:LINE".  None when the stack shows no might_sleep() frame."""
    first = next((i for i, name in enumerate(functions) if name in MIGHT_FRAMES), None)
    if first is None:
        return None
    past = first
    while past < len(functions) and functions[past] in MIGHT_FRAMES:
        past += 1
    if past >= len(functions):
        return None
    call = functions[past]
    caller = functions[past + 1] if past + 1 < len(functions) else None
    above = functions[past + 2] if past + 2 < len(functions) else None
    kind: SleepKind
    if "__might_fault" in functions[first:past] or "might_fault" in functions[first:past] or _USER_COPY.search(call):
        kind = "user copy"
    elif "alloc" in call or (site is not None and site.startswith(_ALLOC_SITES)):
        kind = "allocation"
    elif _LOCK_OR_WAIT.search(call):
        kind = "lock or wait"
    else:
        kind = "other"
    return SleepingCall(call, caller, above, kind)
