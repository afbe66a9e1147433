"""Why a task could not sleep where it did: scheduling while atomic, sleeping in atomic context, a per-CPU access in
preemptible code.

A reviewer found no "why" for any of these in the syzkaller corpus (5 of 5 sleeping-in-atomic, 3 of 3 scheduling
while atomic, 4 of 4 this-cpu-preemptible) although each report prints its reason: "scheduling while atomic:
syz-executor.4/21395/0x00000201" is preempt_count 0x201 = bottom halves disabled once + schedule()'s own
preempt_disable(), on the way back to user space; "1 lock held ... (rcu_read_lock) at: nfnetlink_rcv_msg" is the
RCU read-side section __alloc_skb's GFP_KERNEL allocation sleeps in.  The logs here are written as the kernel prints
them (kernel/sched/core.c __schedule_bug and __might_resched, lib/smp_processor_id.c).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from detectors.dmesg.atomic import decode_preempt_count, sleeping_call
from forensics.pipelines.dmesg import triage_file

SCHEDULING_WHILE_ATOMIC = """\
[ 1181.712781] BUG: scheduling while atomic: syz-executor.4/21395/0x00000201
[ 1181.719776] no locks held by syz-executor.4/21395.
[ 1181.724731] Modules linked in:
[ 1181.735544] CPU: 0 PID: 21395 Comm: syz-executor.4 Not tainted 5.10.0 #3
[ 1181.751828] Call Trace:
[ 1181.754432]  dump_stack+0x14d/0x20b
[ 1181.781972]  __schedule_bug+0x10f/0x140
[ 1181.787791]  __schedule+0xd18/0x1d30
[ 1181.815591]  schedule+0x8f/0x1b0
[ 1181.820777]  exit_to_usermode_loop+0x164/0x360
[ 1181.826000]  do_syscall_64+0x6ec/0x940
[ 1181.830000]  entry_SYSCALL_64_after_hwframe+0x42/0xb7
"""

SLEEPING_UNDER_RCU = """\
[  566.230190][T22160] BUG: sleeping function called from invalid context at include/linux/sched/mm.h:201
[  566.293770][T22160] in_atomic(): 0, irqs_disabled(): 0, non_block: 0, pid: 22160, name: syz-executor.1
[  566.359350][T22160] 1 lock held by syz-executor.1/22160:
[  566.389164][T22160]  #0: ffffffff8bf797a0 (rcu_read_lock){....}-{1:2}, at: nfnetlink_rcv_msg+0x1da/0x1300
[  566.479571][T22160] Preemption disabled at:
[  566.479589][T22160] [<ffffffff8709e980>] __dev_queue_xmit+0x1f0/0x2e30
[  566.534726][T22160] CPU: 1 PID: 22160 Comm: syz-executor.1 Not tainted 5.12.0 #0
[  566.554585][T22160] Call Trace:
[  566.557997][T22160]  dump_stack+0x141/0x1d7
[  566.567572][T22160]  ___might_sleep.cold+0x1f1/0x237
[  566.572746][T22160]  kmem_cache_alloc_node+0x33d/0x3e0
[  566.583028][T22160]  __alloc_skb+0x20b/0x340
[  566.587492][T22160]  netlink_ack+0x1ed/0xaa0
[  566.618120][T22160]  netlink_rcv_skb+0x33d/0x420
"""

SLEEPING_IRQS_OFF = """\
[   74.488762][ T6529] BUG: sleeping function called from invalid context at kernel/printk/printk.c:2525
[   74.498327][ T6529] in_atomic(): 1, irqs_disabled(): 1, non_block: 0, pid: 6529, name: syz-executor925
[   74.507803][ T6529] preempt_count: 1, expected: 0
[   74.512654][ T6529] RCU nest depth: 0, expected: 0
[   74.517593][ T6529] 1 lock held by syz-executor925/6529:
[   74.522000][ T6529]  #0: ffff88801d2b0a50 (&tty->flow.lock){....}-{2:2}, at: n_tty_ioctl_helper+0xb6/0x2d0
[   74.530000][ T6529] CPU: 0 PID: 6529 Comm: syz-executor925 Not tainted 5.17.0 #0
[   74.540000][ T6529] Call Trace:
[   74.541000][ T6529]  dump_stack_lvl+0xcd/0x134
[   74.542000][ T6529]  __might_resched.cold+0x222/0x26b
[   74.543000][ T6529]  console_lock+0x17/0x80
[   74.544000][ T6529]  n_tty_ioctl_helper+0x1c0/0x2d0
"""

# A 4.15 report (no caller prefix, "[<hash>]" before each lock's site): the title's frame is a caller of the function
# that took the RCU section and copies to user space in it.
USER_COPY_UNDER_RCU = """\
[   31.000100] BUG: sleeping function called from invalid context at lib/usercopy.c:25
[   31.000200] in_atomic(): 1, irqs_disabled(): 0, pid: 2211, name: bpf-query
[   31.000300] 2 locks held by bpf-query/2211:
[   31.000400]  #0:  (bpf_event_mutex){+.+.}, at: [<00000000a1b2c3d4>] perf_event_query_prog_array+0x10e/0x280
[   31.000500]  #1:  (rcu_read_lock){....}, at: [<00000000d4c3b2a1>] bpf_prog_array_copy_to_user+0x0/0x4d0
[   31.000600] CPU: 0 PID: 2211 Comm: bpf-query Not tainted 4.15.0 #1
[   31.000700] Call Trace:
[   31.000800]  dump_stack+0x194/0x257
[   31.000900]  ___might_sleep+0x2b2/0x470
[   31.001000]  __might_sleep+0x95/0x190
[   31.001100]  __might_fault+0xab/0x1d0
[   31.001200]  _copy_to_user+0x2c/0xc0
[   31.001300]  bpf_prog_array_copy_to_user+0x217/0x4d0
[   31.001400]  ? _copy_to_user+0xa2/0xc0
[   31.001500]  bpf_prog_array_copy_info+0x17b/0x1c0
[   31.001600]  perf_event_query_prog_array+0x196/0x280
[   31.001700]  perf_ioctl+0x3e1/0x1480
"""

PREEMPTIBLE = """\
[   59.806466][ T6792] BUG: using smp_processor_id() in preemptible [00000000] code: syz-fuzzer/6792
[   59.815692][ T6792] caller is ext4_mb_new_blocks+0xa4d/0x3b70
[   59.821714][ T6792] CPU: 1 PID: 6792 Comm: syz-fuzzer Not tainted 5.7.0 #0
[   59.830000][ T6792] Call Trace:
[   59.831000][ T6792]  dump_stack+0x188/0x20d
[   59.832000][ T6792]  check_preemption_disabled+0x20d/0x220
[   59.833000][ T6792]  ext4_mb_new_blocks+0xa4d/0x3b70
[   59.834000][ T6792]  ext4_ext_map_blocks+0x2044/0x3410
"""


def test_preempt_count_is_taken_apart_as_preempt_h_lays_it_out() -> None:
    count = decode_preempt_count(0x201)
    assert (count.preempt, count.serving_softirq, count.bh_disabled, count.hardirq, count.nmi) == (1, False, 1, 0, 0)
    assert count.words(schedules=True) == (
        "0x00000201: bottom halves disabled once (local_bh_disable, spin_lock_bh), 1 preemption disable by "
        "schedule() itself"
    )
    assert decode_preempt_count(0x102).serving_softirq and decode_preempt_count(0x102).extra_preempt == 1
    assert decode_preempt_count(0x10001).hardirq == 1 and decode_preempt_count(0x100000).nmi == 1
    assert decode_preempt_count(0x1).words() == "0x00000001: preemption disabled once (preempt_disable, spin_lock)"


def _why(tmp_path: Path, text: str) -> tuple[str, dict[str, object]]:
    path = tmp_path / "console.log"
    path.write_text(text)
    result = triage_file(str(path))
    (report,) = result.reports
    why = result.whys[report.start_line]
    assert why.cause is not None, why.facts
    return why.cause.statement, {f.name: f.value for f in why.facts}


@pytest.mark.parametrize(
    ("text", "title", "statement", "facts"),
    [
        (
            SCHEDULING_WHILE_ATOMIC,
            "BUG: scheduling while atomic in exit_to_usermode_loop",
            "a system call returned to user space with bottom halves still disabled (1 local_bh_disable()/"
            "spin_lock_bh() without its enable): a path of the system call left it unbalanced (preempt_count "
            "0x00000201: bottom halves disabled once (local_bh_disable, spin_lock_bh), 1 preemption disable by "
            "schedule() itself); locks held: none (lockdep)",
            {"preempt_count": "0x00000201", "task": "syz-executor.4", "pid": 21395},
        ),
        (
            SLEEPING_UNDER_RCU,
            "BUG: sleeping function called from invalid context in __alloc_skb",
            "__alloc_skb calls kmem_cache_alloc_node, which may sleep (might_sleep at include/linux/sched/mm.h:201) "
            "inside an RCU read-side critical section (rcu_read_lock, taken at nfnetlink_rcv_msg+0x1da/0x1300); "
            "preemption was disabled at __dev_queue_xmit+0x1f0/0x2e30",
            {"in_atomic": 0, "irqs_disabled": 0, "preemption disabled at": "__dev_queue_xmit+0x1f0/0x2e30"},
        ),
        (
            SLEEPING_IRQS_OFF,
            "BUG: sleeping function called from invalid context in console_lock",
            "n_tty_ioctl_helper calls console_lock, which may sleep (might_sleep at kernel/printk/printk.c:2525) with "
            "interrupts disabled; also holding &tty->flow.lock",
            {"preempt_count": "0x00000001", "RCU nest depth": 0, "irqs_disabled": 1},
        ),
        (
            PREEMPTIBLE,
            "BUG: using smp_processor_id() in preemptible code in ext4_mb_new_blocks",
            "ext4_mb_new_blocks uses smp_processor_id() with preemption enabled (preempt_count 0x00000000): the task "
            "can move to another CPU between reading the CPU (or its per-CPU variable) and using it",
            {"caller": "ext4_mb_new_blocks+0xa4d/0x3b70", "per-CPU access": "smp_processor_id()"},
        ),
    ],
    ids=["scheduling-while-atomic", "sleeping-under-rcu", "sleeping-irqs-off", "this-cpu-preemptible"],
)
def test_the_report_says_why_the_task_could_not_sleep(
    tmp_path: Path, text: str, title: str, statement: str, facts: dict[str, object]
) -> None:
    path = tmp_path / "console.log"
    path.write_text(text)
    (report,) = triage_file(str(path)).reports
    assert report.title == title
    said, read = _why(tmp_path, text)
    assert said == statement
    assert {name: read.get(name) for name in facts} == facts


def test_the_sleeper_is_the_function_that_took_the_rcu_section_and_a_user_copy_is_moved_out(tmp_path: Path) -> None:
    """The title names bpf_prog_array_copy_info, a caller; the lock line and the stack name the function that took
    rcu_read_lock and calls _copy_to_user under it.  GFP_ATOMIC is no remedy for a copy that may fault."""
    path = tmp_path / "console.log"
    path.write_text(USER_COPY_UNDER_RCU)
    result = triage_file(str(path))
    (report,) = result.reports
    assert report.title == "BUG: sleeping function called from invalid context in bpf_prog_array_copy_info"
    cause = result.whys[report.start_line].cause
    assert cause is not None
    assert cause.statement == (
        "bpf_prog_array_copy_to_user (which took rcu_read_lock, called from bpf_prog_array_copy_info) calls "
        "_copy_to_user, which may sleep (might_sleep at lib/usercopy.c:25) inside an RCU read-side critical section "
        "(rcu_read_lock, taken at bpf_prog_array_copy_to_user+0x0/0x4d0); also holding bpf_event_mutex"
    )
    assert cause.next_command.startswith(
        "move the _copy_to_user in bpf_prog_array_copy_to_user out of the RCU read-side section "
        "bpf_prog_array_copy_to_user took: a user copy may fault and sleep"
    )
    assert "GFP_ATOMIC" not in cause.next_command


def test_the_locks_held_are_read_as_every_lockdep_list_is(tmp_path: Path) -> None:
    """The list is lockdep's, read by the one reader the RCU-usage report's list has: each lock's holder named
    "comm/pid" (it was "syz-executor925" here, "syz-executor5/14037" in an RCU report), the task among the tasks
    with how many it holds, each cited at its line."""
    path = tmp_path / "console.log"
    path.write_text(SLEEPING_IRQS_OFF)
    result = triage_file(str(path))
    (report,) = result.reports
    why = result.whys[report.start_line]
    assert [(lock.number, lock.name, lock.task) for lock in why.locks] == [
        (0, "&tty->flow.lock", "syz-executor925/6529")
    ]
    assert [(task.comm, task.pid, task.detail, task.at) for task in why.tasks] == [
        ("syz-executor925", 6529, "1 lock held", 4)
    ]


@pytest.mark.parametrize(
    ("functions", "site", "expected"),
    [
        (["dump_stack", "___might_sleep", "__might_sleep", "__might_fault", "_copy_to_user", "f", "g"],
         "lib/usercopy.c:25", ("_copy_to_user", "f", "g", "user copy")),
        (["dump_stack", "___might_sleep", "__might_sleep", "kmem_cache_alloc", "rds_tcp_conn_alloc"],
         "mm/slab.h:420", ("kmem_cache_alloc", "rds_tcp_conn_alloc", None, "allocation")),
        (["dump_stack", "___might_sleep", "slab_pre_alloc_hook_inlined", "f"],
         "mm/slab.h:420", ("slab_pre_alloc_hook_inlined", "f", None, "allocation")),
        (["dump_stack_lvl", "__might_resched", "mutex_lock_nested", "f"],
         "kernel/locking/mutex.c:577", ("mutex_lock_nested", "f", None, "lock or wait")),
        (["dump_stack_lvl", "__might_resched", "frob", "f"], "drivers/x.c:1", ("frob", "f", None, "other")),
    ],
    ids=["user-copy", "allocation", "allocator-site", "mutex", "other"],
)  # fmt: skip
def test_the_sleeping_call_is_the_frame_past_the_might_sleep_checks(
    functions: list[str], site: str, expected: tuple[str, str | None, str | None, str]
) -> None:
    assert tuple(sleeping_call(functions, site) or ()) == expected


def test_no_might_sleep_frame_names_no_sleeping_call() -> None:
    assert sleeping_call(["dump_stack", "kmem_cache_alloc", "f"], "mm/slab.h:420") is None
    assert sleeping_call(["dump_stack", "__might_sleep"], "mm/slab.h:420") is None
