"""Why lockdep found an invalid wait context: which lock (its wait type) was taken inside which context.

The syzkaller corpus's two "[ BUG: Invalid wait context ]" reports had no why, although each prints its reason as
numbers: the lock taken with ``-{outer:inner}`` (its wait type), the task's ``context-{N:N}`` and each held lock's
types.  Read with include/linux/lockdep_types.h, they say "a sleeping lock taken inside rcu_read_lock" or "a
spinlock_t (a sleeping lock on PREEMPT_RT) taken in hard interrupt context".  The logs are written as
kernel/locking/lockdep.c print_lock_invalid_wait_context() prints them, with and without
CONFIG_PROVE_RAW_LOCK_NESTING (which numbers the types differently).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from detectors.dmesg.waitcontext import WaitLock, lock_kind, raw_nesting, wait_lock
from tests.detectors.dmesg.why_logs import offset, only_report_why

HEADER = "Invalid wait context"

# Without CONFIG_PROVE_RAW_LOCK_NESTING: rcu_read_lock is {1:2}, a sleeping lock 3, task context 4.
SLEEPING_IN_RCU = """\
[  513.624689][ T4448] =============================
[  513.625024][ T4448] [ BUG: Invalid wait context ]
[  513.625454][ T4448] 5.9.0 #15 Not tainted
[  513.625876][ T4448] -----------------------------
[  513.626258][ T4448] syz-executor.0/4448 is trying to lock:
[  513.626811][ T4448] ffff00004a747498 (&mm->mmap_lock){++++}-{3:3}, at: __might_fault+0x108/0x1b0
[  513.628246][ T4448] other info that might help us debug this:
[  513.628677][ T4448] context-{4:4}
[  513.629067][ T4448] 1 lock held by syz-executor.0/4448:
[  513.629453][ T4448]  #0: ffffa00019769560 (rcu_read_lock){....}-{1:2}, at: count_memcg_event_mm+0x24/0x2f0
[  513.630554][ T4448] stack backtrace:
[  513.631277][ T4448] CPU: 0 PID: 4448 Comm: syz-executor.0 Not tainted 5.9.0 #15
[  513.632435][ T4448] Call trace:
[  513.632830][ T4448]  dump_backtrace+0x0/0x4d0
[  513.633979][ T4448]  __lock_acquire+0x1a04/0x4930
[  513.634359][ T4448]  lock_acquire+0x278/0xb88
[  513.634769][ T4448]  __might_fault+0x138/0x1b0
[  513.635149][ T4448]  do_ipv6_setsockopt.isra.0+0x4a8/0x4738
[  513.635538][ T4448]  ipv6_setsockopt+0x124/0x408
"""

# With it: a spinlock_t is 3 (LD_WAIT_CONFIG), hard interrupt context 2, rcu_read_lock {1:3}.
SPINLOCK_IN_HARDIRQ = """\
[  669.483353][    C1] =============================
[  669.483797][    C1] [ BUG: Invalid wait context ]
[  669.484620][    C1] 5.10.2 #14 Not tainted
[  669.485076][    C1] -----------------------------
[  669.485554][    C1] udevd/95 is trying to lock:
[  669.487336][    C1] 83711010 (&n->list_lock){..-.}-{3:3}, at: deactivate_slab+0x2a8/0x558
[  669.489135][    C1] other info that might help us debug this:
[  669.489511][    C1] context-{2:2}
[  669.489868][    C1] 1 lock held by udevd/95:
[  669.490182][    C1]  #0: 81223780 (rcu_read_lock){....}-{1:3}, at: __d_lookup+0x0/0x4a8
[  669.491061][    C1] stack backtrace:
[  669.491629][    C1] CPU: 1 PID: 95 Comm: udevd Not tainted 5.10.2 #14
[  669.492000][    C1] Call Trace:
[  669.492100][    C1]  dump_stack+0x154/0x1a8
[  669.492200][    C1]  __lock_acquire+0x840/0x30e0
[  669.492300][    C1]  lock_acquire+0x68/0x74
[  669.492400][    C1]  _raw_spin_lock+0x4c/0x5c
[  669.492500][    C1]  deactivate_slab+0x2a8/0x558
[  669.492600][    C1]  flush_cpu_slab+0x34/0x40
"""

# With it, in task context (5): a spinlock_t taken inside a raw_spinlock_t (inner 2).
SPINLOCK_IN_RAW = """\
[   88.100000][ T3011] =============================
[   88.100100][ T3011] [ BUG: Invalid wait context ]
[   88.100200][ T3011] 6.1.0 #1 Not tainted
[   88.100300][ T3011] -----------------------------
[   88.100400][ T3011] kworker/1:2/3011 is trying to lock:
[   88.100500][ T3011] ffff888012345678 (&port->lock){-.-.}-{3:3}, at: serial_port_write+0x3a/0x120
[   88.100600][ T3011] other info that might help us debug this:
[   88.100700][ T3011] context-{5:5}
[   88.100800][ T3011] 2 locks held by kworker/1:2/3011:
[   88.100900][ T3011]  #0: ffff888011112222 ((wq_completion)events){+.+.}-{0:0}, at: process_one_work+0x8a/0x5e0
[   88.101000][ T3011]  #1: ffffffff8d1e0a58 (console_owner_lock){....}-{2:2}, at: console_emit+0x51/0x210
[   88.101100][ T3011] stack backtrace:
[   88.101200][ T3011] CPU: 1 PID: 3011 Comm: kworker/1:2 Not tainted 6.1.0 #1
[   88.101300][ T3011] Call Trace:
[   88.101400][ T3011]  <TASK>
[   88.101500][ T3011]  dump_stack_lvl+0x8b/0xb3
[   88.101600][ T3011]  __lock_acquire+0x1620/0x1c20
[   88.101700][ T3011]  lock_acquire+0xd3/0x2f0
[   88.101800][ T3011]  _raw_spin_lock_irqsave+0x45/0x60
[   88.101900][ T3011]  serial_port_write+0x3a/0x120
[   88.102000][ T3011]  console_emit+0x12e/0x210
"""


@pytest.mark.parametrize(
    ("text", "title", "statement", "cited"),
    [
        (
            SLEEPING_IN_RCU,
            "WARNING: locking bug in do_ipv6_setsockopt",
            "syz-executor.0 takes &mm->mmap_lock at __might_fault+0x108/0x1b0 (might_fault()'s annotation of a "
            "user-memory access, which may fault and sleep on it; wait type {3:3}: a sleeping lock, a "
            "mutex or rw-semaphore) inside rcu_read_lock, taken at count_memcg_event_mm+0x24/0x2f0, which allows at "
            "most a spinning lock, a raw_spinlock_t or spinlock_t (its inner wait type 2): lockdep's wait-type check "
            "forbids it there",
            {"lock taken wait type": "(&mm->mmap_lock)", "wait context": "context-{", "forbidden inside": "#0:"},
        ),
        (
            SPINLOCK_IN_HARDIRQ,
            "WARNING: locking bug in deactivate_slab",
            "udevd takes &n->list_lock at deactivate_slab+0x2a8/0x558 (wait type {3:3}: a spinlock_t, a sleeping lock "
            "on PREEMPT_RT) in hard interrupt context (context-{2:2}), where only raw spinlocks may be taken: "
            "lockdep's wait-type check forbids it there",
            {"lock taken wait type": "(&n->list_lock)", "forbidden by context": "context-{"},
        ),
        (
            SPINLOCK_IN_RAW,
            "WARNING: locking bug in serial_port_write",
            "kworker/1:2 takes &port->lock at serial_port_write+0x3a/0x120 (wait type {3:3}: a spinlock_t, a sleeping "
            "lock on PREEMPT_RT) inside console_owner_lock, taken at console_emit+0x51/0x210, which allows at most a "
            "spinning lock, a raw_spinlock_t (its inner wait type 2): lockdep's wait-type check forbids it there",
            {"lock taken wait type": "(&port->lock)", "wait context": "context-{", "forbidden inside": "#1:"},
        ),
    ],
    ids=["sleeping-lock-in-rcu", "spinlock-in-hardirq", "spinlock-in-raw-spinlock"],
)
def test_the_why_names_the_lock_its_wait_type_and_what_forbids_it(
    tmp_path: Path, text: str, title: str, statement: str, cited: dict[str, str]
) -> None:
    said, why = only_report_why(tmp_path, text)
    assert said == title
    assert why.cls == "wait-context"
    assert why.cause is not None and why.cause.cls == "wait_context"
    assert why.cause.statement == statement
    # Each value cited at the line that prints it; only what forbids the lock is named (not the workqueue's map).
    assert {name: why.fact_at(name) for name in cited} == {name: offset(text, HEADER, w) for name, w in cited.items()}
    assert len([f for f in why.facts if f.name == "forbidden inside"]) == ("forbidden inside" in cited)


def test_the_lock_being_taken_is_lockdeps_acquiring_lock(tmp_path: Path) -> None:
    _, why = only_report_why(tmp_path, SLEEPING_IN_RCU)
    # __might_fault takes no lock: its annotation stands for a user copy, which is what moves out of the section.
    assert why.cause is not None and why.cause.next_command.startswith("move the user copy out of that section")
    assert (why.fact("acquiring lock"), why.fact("acquiring at")) == ("&mm->mmap_lock", "__might_fault+0x108/0x1b0")
    assert [(lock.role, lock.name) for lock in why.locks] == [
        ("acquiring", "&mm->mmap_lock"),
        ("held", "rcu_read_lock"),
    ]


def _lock(name: str, outer: int, inner: int) -> WaitLock:
    return WaitLock(name, outer, inner, None, None)


@pytest.mark.parametrize(
    ("context", "locks", "nesting"),
    [
        (4, [], False),  # LD_WAIT_MAX without CONFIG_PROVE_RAW_LOCK_NESTING
        (5, [], True),
        (3, [], True),  # LD_WAIT_CONFIG exists only with it
        (2, [_lock("rcu_read_lock", 1, 3)], True),
        (2, [_lock("rcu_read_lock", 1, 2)], False),
        (2, [_lock("&x->mutex", 4, 4)], True),
        (2, [_lock("&x->lock", 3, 3)], None),  # a spinlock_t with it, a sleeping lock without: not told
    ],
)
def test_the_numbering_is_told_from_the_values_printed(
    context: int, locks: list[WaitLock], nesting: bool | None
) -> None:
    assert raw_nesting(context, locks) is nesting


def test_a_lock_line_is_read_with_its_wait_types_and_kind() -> None:
    assert wait_lock(" #1: ffffffff8d1e0a58 (console_owner_lock){....}-{2:2}, at: console_emit+0x51/0x210") == (
        WaitLock("console_owner_lock", 2, 2, "console_emit+0x51/0x210", 1))  # fmt: skip
    assert [lock_kind(3, True), lock_kind(3, False), lock_kind(3, None), lock_kind(4, True)] == [
        "spinlock_t", "sleeping", "spinlock_t or sleeping", "sleeping"]  # fmt: skip
