"""CONFIG_DEBUG_SPINLOCK's checks: what a "BUG: spinlock <check> on CPU#N, comm/pid" report says of the lock.

kernel/locking/spinlock_debug.c checks each lock and unlock of a debug spinlock (``SPIN_BUG_ON``) and prints, by
``spin_dump()``, the failed check, the CPU and task, then the lock's words: `` lock: ADDR, .magic: %08x, .owner:
comm/pid, .owner_cpu: N`` (``<none>/-1`` and -1 while it is unlocked: SPINLOCK_OWNER_INIT).  ``rwlock_bug()``
prints the rwlock's address on the header line and no words.  Each check, the condition that fired and what it
means, is a row of :data:`SPIN_CHECKS`; the magic word's value is read by :func:`magic_meaning`.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from detectors.pointers import RWLOCK_MAGIC, SPINLOCK_MAGIC, ValueKind, ascii_text, classify_value

#: The highest CPU number a kernel has (NR_CPUS is at most 8192): an .owner_cpu past it is no CPU.
MAX_NR_CPUS = 8192

SPIN_HEADER = re.compile(
    r"BUG: (spinlock|rwlock) (lockup suspected|already unlocked|cpu recursion|recursion|bad magic|wrong owner|"
    r"wrong CPU|trylock failure on UP) on CPU#(\d+), (.+?)/(-?\d+)(?:, ([0-9a-fx]+))?\s*$"
)
SPIN_FIELDS = re.compile(r"^\s*lock: (\S+?), \.magic: ([0-9a-f]{1,8}), \.owner: (.*)/(-?\d+), \.owner_cpu: (-?\d+)")


class Check(NamedTuple):
    """One of spinlock_debug.c's checks: the condition that fired, and what it says happened."""

    condition: str
    meaning: str


#: The checks by their message (debug_spin_lock_before/_after, debug_spin_unlock, __spin_lock_debug of old kernels,
#: and the rwlock ones).
SPIN_CHECKS: dict[str, Check] = {
    "bad magic": Check("lock->magic != SPINLOCK_MAGIC", "the memory is not a live lock"),
    # An interrupt or softirq handler runs as the task it interrupted (current is unchanged), so a handler re-taking
    # the lock its interrupted holder holds fails this check, never "cpu recursion".
    "recursion": Check("lock->owner == current",
                       "the task takes a lock it already holds, on its own path or in an interrupt or softirq "
                       "handler that interrupted it while it held the lock (the holder not having disabled them: "
                       "_irqsave/_bh): a self-deadlock (without CONFIG_DEBUG_SPINLOCK it spins forever)"),
    "cpu recursion": Check("lock->owner_cpu == this CPU, lock->owner != current",
                           "another task took the lock on this CPU and has not released it: its holder slept or was "
                           "preempted holding it, or the lock's words are stale (a lock copied while held, or never "
                           "unlocked)"),
    "already unlocked": Check("!raw_spin_is_locked(lock)",
                              "an unlock of a lock that is not held: a double unlock, or an unlock on a path that "
                              "did not take it"),
    "wrong owner": Check("lock->owner != current", "a task releases a lock another task took"),
    "wrong CPU": Check("lock->owner_cpu != this CPU",
                       "the lock is released on another CPU than the one that took it: its holder migrated while "
                       "holding a spinlock (it slept or was preempted), or another CPU's lock was released"),
    "lockup suspected": Check("not acquired after spinning about a second, loops_per_jiffy * HZ tries",
                              "its holder did not release it: a missed unlock on some path, a deadlock, or a holder "
                              "stuck (an interrupt storm, a lost vCPU)"),
    "trylock failure on UP": Check("a trylock failed on a uniprocessor kernel",
                                   "the only CPU already holds it: a recursion"),
}  # fmt: skip


#: What a slab fill (:func:`detectors.pointers.classify_value`'s) in a lock's .magic says of the lock.
_FILLS = {
    ValueKind.SLAB_POISON_FREE: "slab poison 0x6b (POISON_FREE): the object holding the lock was freed (a "
    "use-after-free)",
    ValueKind.SLAB_POISON_END: "slab poison 0x6b ending in 0xa5 (POISON_FREE, POISON_END): the object holding the "
    "lock was freed (a use-after-free), the magic its last word",
    ValueKind.SLAB_POISON_INUSE: "slab poison 0x5a (POISON_INUSE): the object holding the lock was allocated and "
    "never initialised",
    ValueKind.SLAB_REDZONE_INACTIVE: "{:#010x}, a SLUB red zone: the address is past the end of its object",
    ValueKind.SLAB_REDZONE_ACTIVE: "{:#010x}, a SLUB red zone: the address is past the end of its object",
}


def magic_meaning(value: int, kind: str) -> str:
    """What a lock's ``.magic`` word says, for a ``kind`` ("spinlock" or "rwlock") lock."""
    own, other = (SPINLOCK_MAGIC, RWLOCK_MAGIC) if kind == "spinlock" else (RWLOCK_MAGIC, SPINLOCK_MAGIC)
    if value == own:
        return f"{value:#010x}, the {kind}'s magic: the lock is initialised"
    if value == other:
        taken = "an rwlock_t taken as a spinlock" if kind == "spinlock" else "a spinlock_t taken as an rwlock"
        return f"{value:#010x}, the other lock type's magic: {taken} (a wrong pointer or type)"
    if value == 0:
        return "0: the lock was never initialised (no spin_lock_init()/DEFINE_SPINLOCK on this memory) or was zeroed"
    fill = classify_value(value)  # the slab fills (a 32-bit word of one reads as 0x6b6b6b6b)
    if fill is not None and (said := _FILLS.get(fill.kind)) is not None:
        return said.format(value)
    if value >> 16 == 0xFFFF:
        return (
            f"{value:#010x}, the high half of a kernel address: a pointer lies where the magic should be (the "
            "memory was reused or overwritten, or the lock pointer is wrong)"
        )
    if (text := ascii_text(value)) is not None:
        return f"{value:#010x}, printable text {text!r}: text overwrote the lock"
    return (
        f"{value:#010x}, neither lock magic: the lock's memory was overwritten, or the pointer does not point to a lock"
    )


def owner_cpu_meaning(value: int) -> str:
    """What a lock's ``.owner_cpu`` says: a CPU, none (-1), or a value no CPU has."""
    if value == -1:
        return "-1, none recorded (as while it is unlocked)"
    if value < 0 or value >= MAX_NR_CPUS:
        return f"{value}: no CPU number (the word is overwritten too)"
    return f"CPU {value}"
