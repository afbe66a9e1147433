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

from detectors.dmesg.atomic import decode_preempt_count
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
            "__alloc_skb may sleep (might_sleep at include/linux/sched/mm.h:201) inside an RCU read-side critical "
            "section (rcu_read_lock, taken at nfnetlink_rcv_msg+0x1da/0x1300); preemption was disabled at "
            "__dev_queue_xmit+0x1f0/0x2e30",
            {"in_atomic": 0, "irqs_disabled": 0, "preemption disabled at": "__dev_queue_xmit+0x1f0/0x2e30"},
        ),
        (
            SLEEPING_IRQS_OFF,
            "BUG: sleeping function called from invalid context in console_lock",
            "console_lock may sleep (might_sleep at kernel/printk/printk.c:2525) with interrupts disabled; also "
            "holding &tty->flow.lock",
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
