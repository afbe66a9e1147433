"""Why CONFIG_DEBUG_SPINLOCK stopped: which check failed on which lock, and what the lock's words say.

The syzkaller corpus's 4 "BUG: spinlock ..." reports had no why, although spin_dump() prints the lock's words: a bad
magic of 0xffff8800 with an .owner_cpu of 131071 is a lock overwritten by a pointer, not a lock at all; a recursion
whose .owner is the reporting task is a task taking a lock it holds.  The logs are written as
kernel/locking/spinlock_debug.c's spin_dump() and rwlock_bug() print them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from detectors.dmesg.spindebug import magic_meaning, owner_cpu_meaning
from tests.detectors.dmesg.why_logs import offset, only_report_why

HEADER = "BUG: "

NEVER_INITIALISED = """\
[  301.100000][ T8812] BUG: spinlock bad magic on CPU#1, syz-executor.2/8812
[  301.100100][ T8812]  lock: 0xffff88807b6c1e40, .magic: 00000000, .owner: <none>/-1, .owner_cpu: 0
[  301.100200][ T8812] CPU: 1 PID: 8812 Comm: syz-executor.2 Not tainted 5.15.0 #1
[  301.100300][ T8812] Call Trace:
[  301.100400][ T8812]  <TASK>
[  301.100500][ T8812]  dump_stack_lvl+0xcd/0x134
[  301.100600][ T8812]  do_raw_spin_lock+0x1e5/0x290
[  301.100700][ T8812]  _raw_spin_lock_irqsave+0x45/0x60
[  301.100800][ T8812]  hci_conn_drop+0x4c/0x1a0
[  301.100900][ T8812]  hci_sock_ioctl+0x2b1/0x5c0
"""

RECURSION = """\
[  213.269287] BUG: spinlock recursion on CPU#0, syz-executor7/5032
[  213.281506]  lock: 0xffff88006c122d00, .magic: dead4ead, .owner: syz-executor7/5032, .owner_cpu: 0
[  213.285112] CPU: 0 PID: 5032 Comm: syz-executor7 Not tainted 4.9.0 #58
[  213.285200] Call Trace:
[  213.285300]  [<ffffffff81d9d4a9>] dump_stack+0xc1/0x128
[  213.285400]  [<ffffffff814df1d4>] spin_dump+0x154/0x280
[  213.285500]  [<ffffffff814df5e8>] do_raw_spin_lock+0x2d8/0x330
[  213.285600]  [<ffffffff8271af2b>] _raw_spin_lock+0x3b/0x50
[  213.285700]  [<ffffffff8140c5a1>] wake_up_new_task+0x2e1/0x7a0
[  213.285800]  [<ffffffff81386fb1>] _do_fork+0x221/0xc70
"""

ALREADY_UNLOCKED = """\
[   77.500000] BUG: spinlock already unlocked on CPU#3, kworker/3:1/151
[   77.500100]  lock: dev_list_lock+0x0/0x40, .magic: dead4ead, .owner: <none>/-1, .owner_cpu: -1
[   77.500200] CPU: 3 PID: 151 Comm: kworker/3:1 Not tainted 6.1.0 #1
[   77.500300] Call Trace:
[   77.500400]  <TASK>
[   77.500500]  dump_stack_lvl+0x8b/0xb3
[   77.500600]  do_raw_spin_unlock+0x16f/0x230
[   77.500700]  _raw_spin_unlock+0x22/0x40
[   77.500800]  frob_remove_dev+0x8e/0x150
[   77.500900]  frob_work+0x2a/0x60
"""

RWLOCK = """\
[   12.000000] BUG: rwlock wrong owner on CPU#2, swapper/2/0, ffff888100c3a1d8
[   12.000100] CPU: 2 PID: 0 Comm: swapper/2 Not tainted 5.10.0 #1
[   12.000200] Call Trace:
[   12.000300]  dump_stack+0x8b/0xb0
[   12.000400]  do_raw_write_unlock+0x6d/0x90
[   12.000500]  _raw_write_unlock_bh+0x15/0x30
[   12.000600]  neigh_periodic_work+0x2c1/0x3a0
"""


@pytest.mark.parametrize(
    ("text", "title", "cls", "statement", "cited"),
    [
        (
            NEVER_INITIALISED,
            "BUG: spinlock bad magic in hci_conn_drop",
            "bad_lock",
            "the spinlock at 0xffff88807b6c1e40 is not a live spinlock (lock->magic != SPINLOCK_MAGIC), taken by "
            "syz-executor.2 (pid 8812) on CPU 1: its .magic is 0: the lock was never initialised (no "
            "spin_lock_init()/DEFINE_SPINLOCK on this memory) or was zeroed",
            {"magic": " lock: ", "lock check": "BUG: spinlock"},
        ),
        (
            RECURSION,
            "BUG: spinlock recursion in wake_up_new_task",
            "lock_misuse",
            "spinlock recursion (lock->owner == current) on the spinlock at 0xffff88006c122d00, by syz-executor7 (pid "
            "5032) on CPU 0: the task takes a lock it already holds, on its own path or in an interrupt or softirq "
            "handler that interrupted it while it held the lock (the holder not having disabled them: _irqsave/_bh): "
            "a self-deadlock (without CONFIG_DEBUG_SPINLOCK it spins forever); the lock records owner "
            "syz-executor7/5032, the reporting task itself, .owner_cpu CPU 0",
            {"owner is": " lock: ", "task": "BUG: spinlock"},
        ),
        (
            ALREADY_UNLOCKED,
            "BUG: spinlock already unlocked in frob_remove_dev",
            "lock_misuse",
            "spinlock already unlocked (!raw_spin_is_locked(lock)) on the spinlock at dev_list_lock+0x0/0x40, by "
            "kworker/3:1 (pid 151) on CPU 3: an unlock of a lock that is not held: a double unlock, or an unlock on a "
            "path that did not take it; the lock records no owner, .owner_cpu -1, none recorded (as while it is "
            "unlocked)",
            {"owner": " lock: "},
        ),
        (
            RWLOCK,
            "BUG: rwlock wrong owner in neigh_periodic_work",
            "lock_misuse",
            "rwlock wrong owner (lock->owner != current) on the rwlock at ffff888100c3a1d8, by swapper/2 (pid 0) on "
            "CPU 2: a task releases a lock another task took; rwlock_bug() prints none of its words",
            {"lock": "BUG: rwlock"},
        ),
    ],
    ids=["bad-magic-zero", "recursion", "already-unlocked", "rwlock-no-words"],
)
def test_the_why_names_the_check_and_reads_the_locks_words(
    tmp_path: Path, text: str, title: str, cls: str, statement: str, cited: dict[str, str]
) -> None:
    said, why = only_report_why(tmp_path, text)
    assert said == title
    assert why.cls == "spinlock"
    assert why.cause is not None and (why.cause.cls, why.cause.statement) == (cls, statement)
    assert {name: why.fact_at(name) for name in cited} == {name: offset(text, HEADER, w) for name, w in cited.items()}


def test_a_cpu_recursion_is_another_task_holding_the_lock_on_this_cpu_not_an_interrupt(tmp_path: Path) -> None:
    """ue10 4: spinlock_debug.c checks owner == current ("recursion") before owner_cpu == this CPU ("cpu
    recursion"); an interrupt handler runs as the task it interrupted, so its re-take is a "recursion". A "cpu
    recursion" is another task's lock on this CPU: it slept or was preempted holding it, or the words are stale."""
    text = RECURSION.replace("spinlock recursion", "spinlock cpu recursion").replace(
        ".owner: syz-executor7/5032", ".owner: kworker/0:2/77"
    )
    _, why = only_report_why(tmp_path, text)
    assert why.cause is not None and why.cause.cls == "lock_misuse"
    assert why.cause.statement == (
        "spinlock cpu recursion (lock->owner_cpu == this CPU, lock->owner != current) on the spinlock at "
        "0xffff88006c122d00, by syz-executor7 (pid 5032) on CPU 0: another task took the lock on this CPU and has not "
        "released it: its holder slept or was preempted holding it, or the lock's words are stale (a lock copied "
        "while held, or never unlocked); the lock records owner kworker/0:2/77, .owner_cpu CPU 0"
    )
    assert "interrupt" not in why.cause.statement and "_irqsave" not in why.cause.next_command
    assert why.cause.next_command.startswith("find what the lock's owner (kworker/0:2/77) did after taking it")


def test_an_owner_with_no_cpu_is_said_to_be_words_that_disagree_not_a_self_deadlock(tmp_path: Path) -> None:
    """ue10 7 (corpus 68): .owner the reporting task and .owner_cpu -1; debug_spin_lock_after() sets both and
    debug_spin_unlock() resets both, so no lock or unlock leaves this: stale or overwritten words."""
    text = RECURSION.replace(".owner_cpu: 0", ".owner_cpu: -1")
    _, why = only_report_why(tmp_path, text)
    assert why.cause is not None and why.cause.cls == "lock_misuse" and why.cause.confidence == 0.5
    assert why.cause.statement == (
        "spinlock recursion (lock->owner == current) on the spinlock at 0xffff88006c122d00, by syz-executor7 (pid "
        "5032) on CPU 0: the lock's words disagree: its .owner, syz-executor7/5032 (the reporting task itself), says "
        "it is held, its .owner_cpu, -1, says it is unlocked, a state no lock or unlock leaves: the words are stale "
        "or overwritten (the lock copied while held, as in a structure copied whole, or written over), as likely as "
        "a real recursion"
    )
    assert "self-deadlock" not in why.cause.statement
    assert why.fact_at("owner_cpu") == offset(text, HEADER, " lock: ")
    assert why.cause.next_command.startswith("find where the structure holding the lock at 0xffff88006c122d00")


def test_a_static_locks_next_step_reads_its_words_not_a_heap_object(tmp_path: Path) -> None:
    _, why = only_report_why(tmp_path, ALREADY_UNLOCKED.replace("already unlocked", "bad magic").replace(
        ".magic: dead4ead", ".magic: 6b6b6b6b"))  # fmt: skip
    assert why.cause is not None
    assert why.cause.next_command.startswith("crash> rd -x dev_list_lock 4")
    assert "slab poison 0x6b (POISON_FREE): the object holding the lock was freed" in why.cause.statement


def test_an_overwritten_lock_is_said_so_by_both_its_words(tmp_path: Path) -> None:
    """The corpus's bad magic 0xffff8800 with .owner_cpu 131071: a pointer's high half, and no CPU."""
    text = NEVER_INITIALISED.replace(".magic: 00000000", ".magic: ffff8800").replace(
        ".owner_cpu: 0", ".owner_cpu: 131071"
    )
    _, why = only_report_why(tmp_path, text)
    assert why.cause is not None
    assert why.cause.statement.endswith(
        "its .magic is 0xffff8800, the high half of a kernel address: a pointer lies where the magic should be (the "
        "memory was reused or overwritten, or the lock pointer is wrong); its .owner_cpu, 131071: no CPU number (the "
        "word is overwritten too)"
    )


@pytest.mark.parametrize(
    ("value", "kind", "words"),
    [
        (0xDEAD4EAD, "spinlock", "0xdead4ead, the spinlock's magic: the lock is initialised"),
        (0xDEAF1EED, "spinlock", "0xdeaf1eed, the other lock type's magic: an rwlock_t taken as a spinlock (a wrong "
         "pointer or type)"),
        (0x5A5A5A5A, "spinlock", "slab poison 0x5a (POISON_INUSE): the object holding the lock was allocated and "
         "never initialised"),
        # POISON_END, the freed object's last byte: was "neither lock magic: the lock's memory was overwritten".
        (0xA56B6B6B, "spinlock", "slab poison 0x6b ending in 0xa5 (POISON_FREE, POISON_END): the object holding the "
         "lock was freed (a use-after-free), the magic its last word"),
        (0x64636261, "rwlock", "0x64636261, printable text 'abcd': text overwrote the lock"),
        (0x12345, "spinlock", "0x00012345, neither lock magic: the lock's memory was overwritten, or the pointer does "
         "not point to a lock"),
    ],
)  # fmt: skip
def test_the_magic_is_read_as_what_lies_there(value: int, kind: str, words: str) -> None:
    assert magic_meaning(value, kind) == words


def test_the_owner_cpu_is_a_cpu_none_or_no_cpu() -> None:
    assert [owner_cpu_meaning(v) for v in (3, -1, 131071)] == [
        "CPU 3",
        "-1, none recorded (as while it is unlocked)",
        "131071: no CPU number (the word is overwritten too)",
    ]
