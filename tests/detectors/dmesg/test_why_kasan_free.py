"""KASAN's free of memory already free, read from a project-written 4.x report (review ue22 #6).

KASAN before 5.x says "double-free or invalid-free" (kasan_report_invalid_free() cannot tell them apart).  When the
object's allocation and first free are another owner's (another function, another task) than the freeing path's,
the freeing path holds a stale pointer: KASAN's stacks are the slot's last owner's, so either its own object freed
earlier (the slot reused by that owner) or a pointer to that owner's memory; a free in softirq names no task.
"""

from __future__ import annotations

from detectors.dmesg.findings import explain_reports
from detectors.dmesg.scanner import scan_chunks
from forensics.types.dmesg import ReportWhy

#: The first free's stack above its freeing function: RCU's softirq invoking the callback (4.16's), or a system call.
_FROM_RCU = " rcu_process_callbacks+0xd6c/0x17f0\n __do_softirq+0x2d7/0xb85\n"
_FROM_NET_RX = " net_rx_action+0x7a3/0x1a70\n __do_softirq+0x2d7/0xb85\n"
_FROM_SYSCALL = " do_syscall_64+0x281/0x940\n"


def _report(bug: str, allocator: str, freer: str, task: int, freed_from: str = _FROM_RCU) -> str:
    return f"""\
==================================================================
BUG: KASAN: {bug} in kvfree+0x36/0x60
CPU: 1 PID: 4260 Comm: kf-repl Not tainted 4.16.0-kf #1
Call Trace:
 dump_stack+0x194/0x24d
 print_address_description+0x73/0x250
 kasan_report_invalid_free+0x55/0x80
 __kasan_slab_free+0x145/0x170
 kfree+0xd9/0x260
 kvfree+0x36/0x60
 kf_free_table+0xaf/0x170
 kf_do_replace+0x810/0xa70
 kf_setsockopt+0x67/0xc0
 do_syscall_64+0x281/0x940

Allocated by task {task}:
 save_stack+0x43/0xd0
 kasan_kmalloc+0xad/0xe0
 __kmalloc_track_caller+0x15e/0x760
 kmemdup+0x24/0x50
 {allocator}+0x43/0xa0
 do_syscall_64+0x281/0x940

Freed by task {task}:
 save_stack+0x43/0xd0
 __kasan_slab_free+0x11a/0x170
 kfree+0xd9/0x260
 {freer}+0x48/0x70
{freed_from}
The buggy address belongs to the object at ffff8801c95e2880
 which belongs to the cache kmalloc-32 of size 32
The buggy address is located 0 bytes inside of
 32-byte region [ffff8801c95e2880, ffff8801c95e28a0)
==================================================================
"""


def _read(text: str) -> ReportWhy:
    (report,) = scan_chunks([text.encode()])
    return explain_reports([report])[report.start_line]


def test_a_free_of_another_owner_s_freed_memory_is_a_stale_pointer_either_way() -> None:
    """Before 2c8fba16: "double free in kf_free_table ... the first free was in kf_cred_free" at 0.90.  Before ue23 #5:
    "... already freed by kf_cred_free (task 7667): the pointer it holds is stale (not its own object freed twice
    ...)": KASAN's stacks are the slot's last owner's, so its own object freed earlier and the slot reused cannot
    be ruled out; and task 7667 is only the task RCU's softirq interrupted."""
    text = _report("double-free or invalid-free", "kf_cred_prepare", "kf_cred_free", 7667)
    why = _read(text)
    assert why.cause is not None
    assert why.cause.cls == "invalid_free"
    assert why.cause.statement == (
        "stale pointer: kf_free_table frees memory last allocated by kf_cred_prepare (task 7667) and already freed by "
        "kf_cred_free (from an RCU callback): either its own object freed earlier and the slot reused, or a pointer "
        "to another owner's memory"
    )
    assert why.cause.confidence == 0.6
    assert why.cause.next_command.startswith("find where kf_free_table's caller got the pointer it frees")
    assert "second kfree" not in why.cause.next_command
    # The lines it rests on: the header, the allocating and the first freeing function, the RCU callback's frame.
    lines = text.splitlines()
    first = lines.index("BUG: KASAN: double-free or invalid-free in kvfree+0x36/0x60")
    cited = [lines[first + at] for at in why.cause_at]
    assert any("kf_cred_prepare+" in t for t in cited) and any("kf_cred_free+" in t for t in cited)
    assert any("rcu_process_callbacks+" in t for t in cited)
    # KASAN's plain "double-free" (the object was free when freed): the same story, surer.
    plain = _read(_report("double-free", "kf_cred_prepare", "kf_cred_free", 7667))
    assert plain.cause is not None and plain.cause.cls == "invalid_free" and plain.cause.confidence == 0.7


def test_a_first_free_s_task_is_named_only_in_process_context() -> None:
    in_softirq = _read(_report("double-free", "kf_cred_prepare", "kf_cred_free", 7667, _FROM_NET_RX)).cause
    assert in_softirq is not None
    assert "already freed by kf_cred_free (in softirq context):" in in_softirq.statement
    assert in_softirq.statement.count("task 7667") == 1  # the allocation's, made in a system call
    in_syscall = _read(_report("double-free", "kf_cred_prepare", "kf_cred_free", 7667, _FROM_SYSCALL)).cause
    assert in_syscall is not None
    assert "already freed by kf_cred_free (task 7667): either its own object" in in_syscall.statement


def test_the_freeing_path_s_own_object_freed_again_stays_a_double_free_with_kasan_s_doubt() -> None:
    # Allocated by the freeing task, first freed by the same function: its own object freed twice.
    why = _read(_report("double-free or invalid-free", "kf_alloc_table", "kf_free_table", 4260))
    assert why.cause is not None and why.cause.cls == "double_free"
    assert why.cause.confidence == 0.75  # below a plain "double-free"'s 0.9: KASAN's "or invalid-free"
    assert why.cause.next_command == "grep the freeing paths of kf_free_table for a second kfree"
