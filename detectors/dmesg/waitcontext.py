"""Lockdep's wait types: what a "BUG: Invalid wait context" report says of the lock taken and where it was taken.

Each lock class has a wait type (``enum lockdep_wait_type``, include/linux/lockdep_types.h), printed after its usage
as ``-{outer:inner}``: what waiting the lock itself does (outer) and what may be taken inside it (inner).
``check_wait_context()`` (kernel/locking/lockdep.c) reports a lock whose outer type is above what the context allows:
the task's context (``task_wait_context()``, printed as ``context-{N:N}``: hard interrupt, softirq or threaded
interrupt, task) and the inner types of the locks held in that context.

The numbers depend on CONFIG_PROVE_RAW_LOCK_NESTING: with it, LD_WAIT_CONFIG (a spinlock_t, which PREEMPT_RT turns
into a sleeping lock) is 3 of its own and a sleeping lock 4; without it, LD_WAIT_CONFIG is LD_WAIT_SPIN (2), a
sleeping lock 3 and the task's "any" 4.  :func:`raw_nesting` tells which from the values a report prints.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

LD_WAIT_INV = 0  # not checked
LD_WAIT_FREE = 1  # wait-free: RCU and the like
LD_WAIT_SPIN = 2  # spinning: raw_spinlock_t

#: The words of each wait type, by CONFIG_PROVE_RAW_LOCK_NESTING (True: on, False: off, None: not told).
_WORDS: dict[bool | None, dict[int, str]] = {
    True: {0: "not checked", 1: "wait-free, as RCU", 2: "a spinning lock, a raw_spinlock_t",
           3: "a spinlock_t, a sleeping lock on PREEMPT_RT", 4: "a sleeping lock, a mutex or rw-semaphore",
           5: "any lock, task context"},
    False: {0: "not checked", 1: "wait-free, as RCU", 2: "a spinning lock, a raw_spinlock_t or spinlock_t",
            3: "a sleeping lock, a mutex or rw-semaphore", 4: "any lock, task context"},
    None: {0: "not checked", 1: "wait-free, as RCU", 2: "a spinning lock",
           3: "a spinlock_t (with CONFIG_PROVE_RAW_LOCK_NESTING) or a sleeping lock (without it)",
           4: "a sleeping lock (with CONFIG_PROVE_RAW_LOCK_NESTING) or any lock (without it)",
           5: "any lock, task context"},
}  # fmt: skip

#: The contexts ``task_wait_context()`` returns, by CONFIG_PROVE_RAW_LOCK_NESTING: the context, and what it allows.
_CONTEXTS: dict[bool | None, dict[int, tuple[str, str]]] = {
    True: {2: ("hard interrupt context", "only raw spinlocks may be taken"),
           3: ("softirq or threaded interrupt context", "no sleeping lock may be taken (a spinlock_t is one on "
               "PREEMPT_RT)"),
           5: ("task context", "any lock may be taken")},
    False: {2: ("interrupt context (hard or soft)", "only spinning locks may be taken"),
            4: ("task context", "any lock may be taken")},
    None: {2: ("interrupt context", "only spinning locks may be taken"),
           3: ("softirq or threaded interrupt context", "no sleeping lock may be taken"),
           4: ("task context", "any lock may be taken"), 5: ("task context", "any lock may be taken")},
}  # fmt: skip

#: A lock line with its wait type: "[addr ](name){usage}-{outer:inner}[, at: site]".
WAIT_LOCK = re.compile(
    r"^\s*(?:#(\d+):\s+)?(?:[0-9a-f]{8,16} )?\((.*)\)\{[^}]*\}-\{(\d):(\d)\}(?:, at: (?:\[<[0-9a-f]+>\]\s*)?(\S+))?"
)
WAIT_CONTEXT = re.compile(r"^\s*context-\{(\d):(\d)\}\s*$")
TRYING_TO_LOCK = re.compile(r"^\s*(.+?)/(\d+) is trying to lock:")


class WaitLock(NamedTuple):
    """A lock with its wait types, as a lock line prints it."""

    name: str
    outer: int
    inner: int
    site: str | None
    number: int | None  # its "#N" in a held list


def wait_lock(body: str) -> WaitLock | None:
    m = WAIT_LOCK.match(body)
    if m is None:
        return None
    number = int(m.group(1)) if m.group(1) is not None else None
    return WaitLock(m.group(2), int(m.group(3)), int(m.group(4)), m.group(5), number)


def raw_nesting(context: int | None, locks: Iterable[WaitLock]) -> bool | None:
    """Whether the kernel had CONFIG_PROVE_RAW_LOCK_NESTING, from the values printed; None when they do not tell.

    A context of 3 (LD_WAIT_CONFIG) or 5 (LD_WAIT_MAX) or a lock of 4 (LD_WAIT_SLEEP) only exist with it; a context of
    4 (LD_WAIT_MAX) only without it; rcu_read_lock's inner type is LD_WAIT_CONFIG, 3 with it and 2 without.
    """
    if context in (3, 5):
        return True
    if context == 4:
        return False
    for lock in locks:
        if lock.outer == 4 or lock.inner == 4:
            return True
        if lock.name == "rcu_read_lock" and lock.inner in (2, 3):
            return lock.inner == 3
    return None


def type_words(value: int, nesting: bool | None) -> str:
    return _WORDS[nesting].get(value, f"wait type {value}")


def lock_kind(value: int, nesting: bool | None) -> str:
    """What kind of lock an outer wait type is: "sleeping", "spinlock_t", "spinning", "wait-free", or both kinds a 3
    or 4 may be when the report does not tell CONFIG_PROVE_RAW_LOCK_NESTING."""
    if value == LD_WAIT_FREE:
        return "wait-free"
    if value == LD_WAIT_SPIN:
        return "spinning"
    if nesting is None and value in (3, 4):
        return "spinlock_t or sleeping" if value == 3 else "sleeping"
    sleeping = 4 if nesting else 3
    if value == sleeping:
        return "sleeping"
    return "spinlock_t" if nesting and value == 3 else "other"


def context_words(value: int, nesting: bool | None) -> tuple[str, str]:
    """The context a ``context-{N:N}`` names, and what may be taken in it."""
    return _CONTEXTS[nesting].get(value, (f"wait context {value}", "its locks may be taken"))


def held_forbidding(outer: int, held: Iterable[WaitLock]) -> list[WaitLock]:
    """The held locks that forbid a lock of outer type ``outer``: those whose inner type is below it
    (check_wait_context(): the lock's outer type above the least of them; a context forbids it alike, its type below
    ``outer``)."""
    return [lock for lock in held if lock.inner and lock.inner < outer]
