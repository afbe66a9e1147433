"""Why the kernel panicked: what "Kernel panic - not syncing: ..." says, and the report above it that it made fatal.

A reviewer found no "why" for any of the syzkaller corpus's 37 panics, although each message says it: "Fatal
exception" is oops_end()/die() panicking on an oops with panic_on_oops set ("in interrupt": in_interrupt(), where no
task can be killed), "hung_task: blocked tasks" khungtaskd's with hung_task_panic set, "Attempted to kill init!"
do_exit() of pid 1 with its exit code.  The logs here are written as the kernel prints them (kernel/panic.c,
arch/x86/kernel/dumpstack.c oops_end(), kernel/hung_task.c, kernel/exit.c, drivers/tty/tty_ldisc.c).  Since v5.x an
oops prints its registers again after its ``---[ end trace`` line, as syzbot's logs show; the panic below them is
part of the oops's report (0bcb9d13), where why it panicked is a fact ("then panicked"); a panic of its own (a hung
task's with hung_task_panic, a panic whose oops the console lost) is a report read here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from forensics.model import NotAvailable
from forensics.pipelines.dmesg import triage_file
from forensics.types.dmesg import ReportWhy

GPF = """\
[  120.100000][ T4242] general protection fault: 0000 [#1] PREEMPT SMP KASAN
[  120.100001][ T4242] CPU: 1 PID: 4242 Comm: kf-test Not tainted 6.1.0 #1
[  120.100002][ T4242] RIP: 0010:kf_walk+0x2e/0x90
[  120.100003][ T4242] RSP: 0018:ffffc90000a77c58 EFLAGS: 00010246
[  120.100004][ T4242] RAX: 6b6b6b6b6b6b6b6b RBX: ffff888012345600 RCX: 0000000000000000
[  120.100005][ T4242] Call Trace:
[  120.100006][ T4242]  <TASK>
[  120.100007][ T4242]  kf_ioctl+0x55/0x120
[  120.100008][ T4242]  __x64_sys_ioctl+0x18f/0x210
[  120.100009][ T4242]  do_syscall_64+0x3d/0xb0
[  120.100010][ T4242]  </TASK>
[  120.100011][ T4242] ---[ end trace 0000000000000000 ]---
[  120.100012][ T4242] RIP: 0010:kf_walk+0x2e/0x90
[  120.100013][ T4242] RSP: 0018:ffffc90000a77c58 EFLAGS: 00010246
[  120.100014][ T4242] RAX: 6b6b6b6b6b6b6b6b RBX: ffff888012345600 RCX: 0000000000000000
[  120.100015][ T4242] CR2: 0000000000000000 CR3: 0000000203e42000 CR4: 00000000001526e0
"""

OTHER_OOPS = """\
[  120.100020][ T5151] BUG: unable to handle page fault for address: ffffffffffffff8b
[  120.100021][ T5151] #PF: supervisor read access in kernel mode
[  120.100022][ T5151] Oops: 0000 [#2] PREEMPT SMP KASAN
[  120.100023][ T5151] CPU: 0 PID: 5151 Comm: kf-other Not tainted 6.1.0 #1
[  120.100024][ T5151] RIP: 0010:kf_other+0x10/0x40
[  120.100025][ T5151] Call Trace:
[  120.100026][ T5151]  <TASK>
[  120.100027][ T5151]  kf_other_ioctl+0x21/0x60
[  120.100028][ T5151]  do_syscall_64+0x3d/0xb0
[  120.100029][ T5151]  </TASK>
[  120.100030][ T5151] ---[ end trace 0000000000000001 ]---
[  120.100031][ T5151] RIP: 0010:kf_other+0x10/0x40
[  120.100032][ T5151] RSP: 0018:ffffc90000b77c58 EFLAGS: 00010246
"""


def _panic(caller: str, message: str, time: str = "120.200000") -> str:
    return (
        f"[  {time}][{caller}] Kernel panic - not syncing: {message}\n"
        f"[  {time}][{caller}] Kernel Offset: disabled\n"
        f"[  {time}][{caller}] Rebooting in 86400 seconds..\n"
    )


def _whys(tmp_path: Path, text: str) -> list[tuple[str, int, ReportWhy]]:
    path = tmp_path / "console.log"
    path.write_text(text)
    result = triage_file(str(path))
    return [(r.title, r.start_line, result.whys[r.start_line]) for r in result.reports]


def _line_of(text: str, words: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if words in line)


def test_a_fatal_exception_is_said_of_the_oops_it_ends_with_panic_on_oops(tmp_path: Path) -> None:
    # The panic after an oops is part of the oops's report (0bcb9d13, ue12 #1): why it panicked is a fact of the
    # oops's reading, cited at the panic's line; the oops's cause stays its fault reader's.
    text = GPF + _panic(" T4242", "Fatal exception")
    ((title, gpf_line, why),) = _whys(tmp_path, text)
    assert title == "general protection fault in kf_walk" and why.cls == "fault"
    panicked = next(f for f in why.facts if f.name == "then panicked")
    assert isinstance(panicked.value, str) and panicked.value.startswith("Fatal exception: an oops made fatal")
    assert "panic_on_oops is set" in panicked.value
    assert gpf_line + panicked.at == _line_of(text, "Kernel panic")
    assert why.cause is None or why.cause.cls != "kernel_panic"


def test_the_oops_a_panic_ends_is_the_panicking_tasks_not_the_nearest(tmp_path: Path) -> None:
    # Another CPU's oops is printed between the task's own and its panic: the printk caller ([T4242]) says whose.
    text = GPF + OTHER_OOPS + _panic(" T4242", "Fatal exception")
    reports = {title: why for title, _, why in _whys(tmp_path, text)}
    assert set(reports) == {
        "general protection fault in kf_walk",
        "BUG: unable to handle kernel paging request in kf_other",
    }
    assert reports["general protection fault in kf_walk"].fact("then panicked") is not None
    assert reports["BUG: unable to handle kernel paging request in kf_other"].fact("then panicked") is None


def test_a_fatal_exception_in_interrupt_says_no_task_could_be_killed(tmp_path: Path) -> None:
    text = GPF + _panic(" T4242", "Fatal exception in interrupt")
    ((_, _, why),) = _whys(tmp_path, text)
    panicked = why.fact("then panicked")
    assert isinstance(panicked, str) and "in interrupt context (in_interrupt()" in panicked
    assert "panic_on_oops or not" in panicked


def test_a_fatal_exception_without_its_oops_says_only_what_the_message_does(tmp_path: Path) -> None:
    # The log starts at the panic (the console lost the oops): no report is named as the one made fatal.
    (title, _, why), *_ = _whys(tmp_path, _panic(" T4242", "Fatal exception"))
    assert title == "kernel panic: Fatal exception"
    assert why.cause is not None and "made fatal" in why.cause.statement
    assert "the report it makes fatal" not in why.cause.statement
    assert why.fact("follows report") is None and why.cause_at == (0,)


HUNG = """\
[  716.122185] INFO: task kf-sync:16519 blocked for more than 140 seconds.
[  716.122190]       Not tainted 6.1.0 #1
[  716.122195] "echo 0 > /proc/sys/kernel/hung_task_timeout_secs" disables this message.
[  716.122200] task:kf-sync         state:D stack:27448 pid:16519 ppid:  3701 flags:0x00004004
[  716.122205] Call Trace:
[  716.122210]  <TASK>
[  716.122215]  __schedule+0x8a4/0x1f60
[  716.122220]  schedule+0xc8/0x250
[  716.122225]  kf_wait_forever+0x1a/0x40
[  716.122230]  kf_sync_ioctl+0x35/0x80
[  716.122235]  </TASK>
[  716.418270] Showing all locks held in the system:
[  716.418275] 1 lock held by kf-sync/16519:
[  716.418280]  #0: ffff888012345678 (&kf->mutex){+.+.}-{3:3}, at: kf_sync_ioctl+0x20/0x80
[  716.631258] =============================================
[  716.638295] NMI backtrace for cpu 0
[  716.638300] CPU: 0 PID: 733 Comm: khungtaskd Not tainted 6.1.0 #1
[  716.638305] Call Trace:
[  716.638310]  <TASK>
[  716.638315]  dump_stack_lvl+0x8b/0xb3
[  716.638320]  nmi_cpu_backtrace+0x1d6/0x1f0
[  716.638325]  nmi_trigger_cpumask_backtrace+0x1e6/0x230
[  716.638330]  watchdog+0x8f5/0xc40
[  716.638335]  kthread+0x2e9/0x3a0
[  716.638340]  </TASK>
[  716.729168] Sending NMI from CPU 0 to CPUs 1:
[  716.733670] NMI backtrace for cpu 1
[  716.733680] CPU: 1 PID: 16526 Comm: kf-spin Not tainted 6.1.0 #1
[  716.733699] RIP: 0010:kf_spin+0x15/0x30
[  716.733703] RSP: 0018:ffff8801a1d1f1c0 EFLAGS: 00000246
"""
# v4.15's NMI backtrace of the other CPU dumps its stack as words ("f180  00000000 ..."), two dozen lines and more:
# past them the panic is a report of its own, as in syzbot's logs.
HUNG += "".join(
    f"[  716.7350{i:02d}] f{i:x}80  00000000 00000000 00000000 00000000 a1d1f208 ffff8801 81556fec\n" for i in range(24)
)


def test_a_hung_task_panic_names_hung_task_panic_and_the_task(tmp_path: Path) -> None:
    # check_hung_task(): the task's report, the locks held, every CPU's backtrace (trigger_all_cpu_backtrace()),
    # then the panic.
    text = HUNG + _panic("", "hung_task: blocked tasks", "716.735692").replace("[]", "")
    (hung_title, hung_line, _), (title, _, why) = _whys(tmp_path, text)
    assert title == "kernel panic: hung_task: blocked tasks"
    assert why.cause is not None
    assert "hung_task_panic is set" in why.cause.statement
    assert f"the report it makes fatal: line {hung_line}, {hung_title}" in why.cause.statement


@pytest.mark.parametrize(
    ("code", "words"),
    [
        ("0x0000000b", "init (pid 1) was killed by SIGSEGV (exitcode=0x0000000b: signal 11)"),
        ("0x00000086", "killed by SIGABRT (exitcode=0x00000086: signal 6, dumping core)"),
        ("0x00000100", "init (pid 1) exited with status 1 (exitcode=0x00000100)"),
    ],
    ids=["segv", "abort-core", "exit-1"],
)
def test_killing_init_decodes_its_exit_code(tmp_path: Path, code: str, words: str) -> None:
    text = _panic(" T1", f"Attempted to kill init! exitcode={code}")
    (title, _, why), *_ = _whys(tmp_path, text)
    assert title == "kernel panic: Attempted to kill init!"
    assert why.cause is not None and words in why.cause.statement


def test_an_ldisc_panic_names_its_errno(tmp_path: Path) -> None:
    text = _panic(" T9", "Couldn't open N_TTY ldisc for ptm3 --- error -12.")
    (_, _, why), *_ = _whys(tmp_path, text)
    assert why.cause is not None
    assert "for ptm3 (error -12, ENOMEM)" in why.cause.statement


def test_a_message_it_does_not_read_is_said_unread(tmp_path: Path) -> None:
    text = _panic(" T9", "kf: the widget table is gone")
    (title, _, why), *_ = _whys(tmp_path, text)
    assert title == "kernel panic: kf: the widget table is gone"
    assert why.cls == "panic" and why.cause is None
    unread = next(f for f in why.facts if f.name == "why it panicked")
    assert isinstance(unread.value, NotAvailable) and unread.at == 0
