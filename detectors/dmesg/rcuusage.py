"""Lockdep's RCU checks: what a "suspicious RCU usage" report says failed, and what the locks held mean for it.

``lockdep_rcu_suspicious()`` (kernel/locking/lockdep.c) prints the check that failed as ``FILE:LINE MESSAGE!``
(``RCU_LOCKDEP_WARN(c, s)``, include/linux/rcupdate.h), then "other info that might help us debug this:", the
``rcu_scheduler_active = N, debug_locks = N`` line, "RCU used illegally from extended quiescent state!" (and from
an offline or idle CPU) when RCU was not watching the CPU, and the task's held locks (lockdep's list, where an RCU
reader is listed as ``rcu_read_lock``, ``rcu_read_lock_bh``, ``rcu_read_lock_sched`` or an ``srcu_struct``).

Each message means something else by the locks held: a dereference check (``rcu_dereference_check()``, the
``_bh``/``_sched``/``srcu_`` forms print the same words) fails when no reader and not the lock its condition names
was held; ``rcu_dereference_protected()`` wants the update-side lock its condition names, whatever reader is held;
"Illegal context switch in RCU read-side critical section" fails *because* a reader is held (a sleep inside it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal, NamedTuple

RcuCheckKind = Literal["sleep in reader", "dereference", "protected dereference", "list traversal", "idle reader",
                       "grace period in reader", "other"]  # fmt: skip


class RcuCheck(NamedTuple):
    """One of lockdep's RCU messages: what failed, and what it means."""

    pattern: re.Pattern[str]  # the message (without its FILE:LINE and "!")
    kind: RcuCheckKind
    needs: str  # what the check wanted held (or not held)
    step: str  # the fix it points to


#: lockdep's RCU messages, most specific first (include/linux/rcupdate.h, rculist.h, kernel/rcu/).
RCU_CHECKS: tuple[RcuCheck, ...] = (
    RcuCheck(re.compile(r"Illegal context switch in (RCU(?:-bh|-sched)?) read-side critical section"),
             "sleep in reader", "no RCU reader held while sleeping",
             "move the sleeping call out of the read-side section (or make it not sleep: GFP_ATOMIC, a non-blocking "
             "variant)"),
    RcuCheck(re.compile(r"Illegal (synchronize_\w+)\(\) in (.*?) read-side critical section"),
             "grace period in reader", "no reader held while waiting for a grace period",
             "move the grace-period wait out of the read-side section (or use call_rcu()/kfree_rcu())"),
    RcuCheck(re.compile(r"suspicious (rcu_dereference_protected)\(\) usage"), "protected dereference",
             "the update-side lock its condition names",
             "take the lock the condition names around the access (an updater's access), or read it with "
             "rcu_dereference() inside rcu_read_lock() (a reader's)"),
    RcuCheck(re.compile(r"suspicious (s?rcu_dereference\w*|rcu_access_pointer)\(\) usage"), "dereference",
             "an RCU read lock (rcu_read_lock(), or the _bh/_sched/SRCU reader of the flavour) or the lock its "
             "condition names",
             "take rcu_read_lock() around the dereference (or the lock the condition names, and say so in its "
             "lockdep condition)"),
    RcuCheck(re.compile(r"RCU-list traversed (?:in non-reader section|without holding the required lock)"),
             "list traversal", "an RCU read lock or the lock its condition names (list_for_each_entry_rcu()'s cond)",
             "take rcu_read_lock() around the traversal, or pass the lock held as the iterator's lockdep condition"),
    RcuCheck(re.compile(r"(rcu_read_(?:un)?lock(?:_bh|_sched)?)\(\) used illegally while idle"), "idle reader",
             "RCU watching the CPU (not idle, not an extended quiescent state)",
             "enter RCU's watching state before the reader (ct_irq_enter()/RCU_NONIDLE(), the _rcuidle tracepoint)"),
)  # fmt: skip

OTHER_CHECK = RcuCheck(re.compile(""), "other", "the condition of the check",
                       "read the condition of the check at its FILE:LINE")  # fmt: skip

#: The lock names lockdep lists an RCU reader as: the three flavours' maps, and an SRCU domain's srcu_struct.
READER_LOCKS = ("rcu_read_lock", "rcu_read_lock_bh", "rcu_read_lock_sched")
#: The reader a "context switch in FLAVOUR read-side critical section" names.
FLAVOUR_READER = {"RCU": "rcu_read_lock", "RCU-bh": "rcu_read_lock_bh", "RCU-sched": "rcu_read_lock_sched"}

#: "FILE:LINE MESSAGE!" as lockdep_rcu_suspicious() prints it ("%s:%d %s!\n"); list traversal's message ends in
#: "!!" of its own.
CHECK_LINE = re.compile(r"^\s*(\S+\.[A-Za-z]+:\d+) (\S.*?)!*\s*$")


class FailedCheck(NamedTuple):
    """The check a report names: where, its message, and which of :data:`RCU_CHECKS` it is."""

    site: str  # FILE:LINE
    message: str
    check: RcuCheck
    flavour: str | None  # the message's RCU flavour or function (``RCU-bh``, ``rcu_read_lock``, ``synchronize_rcu``)


def failed_check(body: str) -> FailedCheck | None:
    """The check of a "FILE:LINE MESSAGE!" line, or None when ``body`` is not one."""
    m = CHECK_LINE.match(body)
    if m is None:
        return None
    message = m.group(2)
    for check in RCU_CHECKS:
        if (found := check.pattern.search(message)) is not None:
            return FailedCheck(m.group(1), message, check, found.group(1) if found.groups() else None)
    return FailedCheck(m.group(1), message, OTHER_CHECK, None)


def is_reader(lock: str) -> bool:
    """Whether lockdep's name ``lock`` is an RCU reader (one of the flavours' maps, or an SRCU domain)."""
    return lock in READER_LOCKS or "srcu" in lock


def readers(held: Sequence[str]) -> list[str]:
    """The RCU readers among the locks ``held``, in their order."""
    return [name for name in held if is_reader(name)]
