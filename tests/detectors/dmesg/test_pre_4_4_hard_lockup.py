"""Hard lockups as kernels before v4.4 reported them: a WARN or a panic in the NMI watchdog's own callback.

Up to v4.3, kernel/watchdog.c's watchdog_overflow_callback() did ``WARN(1, "Watchdog detected hard LOCKUP on cpu
%d")``, or ``panic()`` with that text under hardlockup_panic; since v4.4 it prints the message with pr_emerg() (so
with the file's "NMI watchdog: " prefix, later "watchdog: "), the registers, and panics with "Hard LOCKUP".  The old
report's header is the WARNING of the watchdog's own function, or the panic, and its trace is the NMI's (dump_stack,
the WARN or panic, the perf overflow, the NMI handler), then ``<<EOE>>`` and the interrupted code.  Such a report was
titled "WARNING in watchdog_overflow_callback" or "kernel panic: Watchdog detected hard LOCKUP on cpu NUM"; it is
titled, and explained, as the modern report of the same lockup.  The logs below are written here in the formats of
RHEL 7's 3.10, Debian's 3.16, 3.7 and 3.0 kernels as their reports were posted.
"""

from __future__ import annotations

from detectors.dmesg.findings import explain_reports
from detectors.dmesg.scanner import scan_chunks
from forensics.model import Severity
from forensics.types.dmesg import KernelReport, ReportKind

#: The NMI's frames of a 3.10 kernel's WARN: the report's own, the watchdog's, the NMI handler's.
_NMI_WARN = (
    " <NMI>  [<ffffffff815e19ba>] dump_stack+0x19/0x1b",
    " [<ffffffff8105dee1>] warn_slowpath_common+0x61/0x80",
    " [<ffffffff8105df4c>] warn_slowpath_fmt+0x5c/0x80",
    " [<ffffffff8110b6d0>] ? watchdog_enable_all_cpus.part.2+0x40/0x40",
    " [<ffffffff8110b76c>] watchdog_overflow_callback+0x9c/0xd0",
    " [<ffffffff8114a69e>] __perf_event_overflow+0x8e/0x2b0",
    " [<ffffffff8114b184>] perf_event_overflow+0x14/0x20",
    " [<ffffffff81027a88>] intel_pmu_handle_irq+0x1f8/0x3f0",
    " [<ffffffff815eb1cb>] perf_event_nmi_handler+0x2b/0x50",
    " [<ffffffff815ea919>] nmi_handle.isra.0+0x69/0xb0",
    " [<ffffffff815eaa30>] do_nmi+0xd0/0x340",
    " [<ffffffff815e9cb7>] end_repeat_nmi+0x1e/0x2e",
    " [<ffffffff815e8f2a>] ? _raw_spin_lock+0x3a/0x50",
)
#: The interrupted task's frames, from the ``<<EOE>>`` line on.
_TASK = (
    " <<EOE>>  [<ffffffffa04a31b5>] mydrv_poll_status+0x45/0x120 [mydrv]",
    " [<ffffffffa04a3402>] mydrv_ioctl+0x92/0x1a0 [mydrv]",
    " [<ffffffff811c2a35>] do_vfs_ioctl+0x2e5/0x4c0",
    " [<ffffffff811c2cb1>] SyS_ioctl+0xa1/0xc0",
    " [<ffffffff815f2119>] system_call_fastpath+0x16/0x1b",
)
_MODULES = "Modules linked in: mydrv(OE) xfs libcrc32c sd_mod ahci libahci libata e1000e dm_mod"
_CPU_310 = "CPU: 3 PID: 2817 Comm: myapp Tainted: G           OE ------------   3.10.0-123.el7.x86_64 #1"
_STACK_WORDS = (
    " 0000000000000000 000000003b2bd4a2 ffff88103fa66b18 ffffffff815e19ba",
    " ffff88103fa66b50 ffffffff8105dee1 0000000000000000 ffff880ff23c4000",
)

# 3.10: "WARNING: at", the message, then dump_stack()'s CPU line (since v3.10) and stack words.
_WARN_3_10 = (
    "------------[ cut here ]------------",
    "WARNING: at kernel/watchdog.c:245 watchdog_overflow_callback+0x9c/0xd0()",
    "Watchdog detected hard LOCKUP on cpu 3",
    _MODULES,
    _CPU_310,
    "Hardware name: Dell Inc. PowerEdge R720/0X3D66, BIOS 2.2.2 01/16/2014",
    *_STACK_WORDS,
    "Call Trace:",
    *_NMI_WARN,
    *_TASK,
    "---[ end trace 2a8e6c51fb3d7a10 ]---",
)

# The same lockup as v4.4 and later report it: the message with the watchdog's prefix, the registers (the RIP is the
# interrupted code), the trace of the NMI without the WARN, the panic under hardlockup_panic.
_MODERN = (
    "NMI watchdog: Watchdog detected hard LOCKUP on cpu 3",
    _MODULES,
    "CPU: 3 PID: 2817 Comm: myapp Tainted: G           OE   4.4.0-21-generic #37",
    "Hardware name: Dell Inc. PowerEdge R720/0X3D66, BIOS 2.2.2 01/16/2014",
    "task: ffff880ff23c4000 ti: ffff880ff2b48000 task.ti: ffff880ff2b48000",
    "RIP: 0010:[<ffffffffa04a31b5>]  [<ffffffffa04a31b5>] mydrv_poll_status+0x45/0x120 [mydrv]",
    "RSP: 0018:ffff880ff2b4bd90  EFLAGS: 00000046",
    "Call Trace:",
    " [<ffffffffa04a3402>] mydrv_ioctl+0x92/0x1a0 [mydrv]",
    " [<ffffffff811c2a35>] do_vfs_ioctl+0x2e5/0x4c0",
    " [<ffffffff811c2cb1>] SyS_ioctl+0xa1/0xc0",
    " [<ffffffff815f2119>] entry_SYSCALL_64_fastpath+0x16/0x75",
    "Code: 48 89 e5 41 54 53 48 8b 47 08 <f3> 90 8b 40 08 85 c0 74 f6",
    "Kernel panic - not syncing: Hard LOCKUP",
)


def _log(lines: tuple[str, ...], second: int = 4021) -> bytes:
    return "".join(f"[ {second}.{386400 + 7 * i:06d}] {text}\n" for i, text in enumerate(lines)).encode()


def _reports(lines: tuple[str, ...]) -> list[KernelReport]:
    return list(scan_chunks([_log(lines)]))


def _only(lines: tuple[str, ...]) -> KernelReport:
    (report,) = _reports(lines)
    return report


def test_a_3_10_warn_of_the_watchdog_is_a_hard_lockup_in_the_interrupted_code() -> None:
    report = _only(_WARN_3_10)
    assert (report.title, report.kind, report.severity, report.rule) == (
        "BUG: hard lockup in mydrv_poll_status",
        ReportKind.LOCKUP,
        Severity.CRITICAL,
        "warn-hard-lockup",
    )
    assert (report.frame, report.cpu, report.corrupted) == ("mydrv_poll_status", 3, False)
    assert (report.start_line, report.end_line) == (2, len(_WARN_3_10))
    stacks = {f.function: f.stack for f in report.trace}
    assert (stacks["watchdog_overflow_callback"], stacks["mydrv_poll_status"]) == ("nmi", "task")


def test_the_modern_report_of_the_same_lockup_has_the_same_title_and_why() -> None:
    modern = _only(_MODERN)
    for old in (_only(_WARN_3_10), _only(_panic_3_10())):
        assert (old.title, old.kind, old.severity, old.frame) == (modern.title, modern.kind, modern.severity,
                                                                  modern.frame)  # fmt: skip
        why, now = (explain_reports([r])[r.start_line] for r in (old, modern))
        # The facts and cause, not where they were read (the line numbers of two logs), nor whether and how the
        # kernel panicked after it (the 3.10 WARN did not; a panic's message is a fact of its own, 0ea654f4).
        panic_facts = ("then panicked", "panic message", "why it panicked")
        assert [(f.name, f.value) for f in why.facts if f.name not in panic_facts] == [
            (f.name, f.value) for f in now.facts if f.name not in panic_facts
        ]
        assert why.cause is not None and why.cause == now.cause
        assert why.cause.cls == "busy_wait"
        assert dict(why.cause.fields)["statement"].startswith("hard lockup: CPU 3 was stuck in mydrv_poll_status")


def test_3_11_and_later_warnings_name_the_cpu_and_a_build_path() -> None:
    # v3.11 put the CPU and PID in the WARNING line; distributions built in a directory of their own (Debian 3.16:
    # "at /build/linux-xkTWug/linux-3.16.7-ckt11/kernel/watchdog.c:265").
    for header in (
        "WARNING: CPU: 3 PID: 2817 at kernel/watchdog.c:265 watchdog_overflow_callback+0x98/0xc0()",
        "WARNING: CPU: 3 PID: 2817 at /build/linux-xkTWug/linux-3.16.7-ckt11/kernel/watchdog.c:265 "
        "watchdog_overflow_callback+0x98/0xc0()",
    ):
        lines = (_WARN_3_10[0], header, *_WARN_3_10[2:])
        assert _only(lines).title == "BUG: hard lockup in mydrv_poll_status"


def test_a_warning_before_3_10_with_the_pid_line_and_no_dump_stack_frame() -> None:
    # 3.7: the board name between the header and the message, the old dump_stack() line ("Pid: N, comm: ..."), and
    # the trace from warn_slowpath_common on.
    lines = (
        "------------[ cut here ]------------",
        "WARNING: at kernel/watchdog.c:245 watchdog_overflow_callback+0x9c/0xd0()",
        "Hardware name: PowerEdge 6950",
        "Watchdog detected hard LOCKUP on cpu 3",
        "Modules linked in: lockd sunrpc kvm_amd kvm bnx2 pcspkr",
        "Pid: 3429, comm: stress Tainted: G      D 3.7.0-rc2 #3",
        "Call Trace:",
        " <NMI>  [<ffffffff8105c29f>] warn_slowpath_common+0x7f/0xc0",
        *_NMI_WARN[2:],
        " <<EOE>>  [<ffffffff8113b087>] pagevec_lru_move_fn+0x97/0x110",
        " [<ffffffff8113b11c>] __pagevec_lru_add+0x1c/0x20",
        " [<ffffffff8113b4e8>] __lru_cache_add+0x68/0x90",
        " [<ffffffff81161151>] page_add_new_anon_rmap+0xc1/0x170",
        " [<ffffffff81158162>] handle_mm_fault+0x2c2/0x360",
        "---[ end trace c8d6b169e0c3f25b ]---",
    )
    report = _only(lines)
    assert (report.title, report.kind) == ("BUG: hard lockup in pagevec_lru_move_fn", ReportKind.LOCKUP)
    why = explain_reports([report])[report.start_line]
    assert ("CPU", 3) in [(f.name, f.value) for f in why.facts]  # from the message: no CPU: line


def _panic_3_10() -> tuple[str, ...]:
    # hardlockup_panic: the panic is the report's first line, its trace the NMI's from panic() on.
    return (
        "Kernel panic - not syncing: Watchdog detected hard LOCKUP on cpu 3",
        _CPU_310,
        "Hardware name: Dell Inc. PowerEdge R720/0X3D66, BIOS 2.2.2 01/16/2014",
        *_STACK_WORDS,
        "Call Trace:",
        " <NMI>  [<ffffffff816038f7>] dump_stack+0x19/0x1b",
        " [<ffffffff815fd14b>] panic+0xd8/0x1e7",
        *_NMI_WARN[3:],
        *_TASK,
    )


def test_a_3_10_panic_of_the_watchdog_is_a_hard_lockup_in_the_interrupted_code() -> None:
    report = _only(_panic_3_10())
    assert (report.title, report.kind, report.severity, report.rule) == (
        "BUG: hard lockup in mydrv_poll_status",
        ReportKind.LOCKUP,
        Severity.CRITICAL,
        "panic-watchdog-lockup",
    )
    assert (report.frame, report.cpu, report.panicked, report.corrupted) == ("mydrv_poll_status", 3, True, False)


def test_a_3_0_panic_after_an_oops_reached_the_nmi_handler_through_the_die_notifiers() -> None:
    # 3.0: the NMI went through the die notifier chain from the "nmi" entry.  The oops before it (a recursive fault,
    # its end marker, "Fixing recursive fault") is another report: the lockup came after it ended.
    lines = (
        "BUG: unable to handle kernel paging request at fffffffffffffff8",
        "IP: [<ffffffff810846a0>] kthread_data+0x10/0x20",
        "Oops: 0000 [#2] SMP ",
        "Pid: 4, comm: kworker/0:0 Tainted: G      D     3.0.0-rc1+ #3",
        "RIP: 0010:[<ffffffff810846a0>]  [<ffffffff810846a0>] kthread_data+0x10/0x20",
        "Call Trace:",
        " [<ffffffff8107fc45>] wq_worker_sleeping+0x15/0xa0",
        " [<ffffffff814d2a5d>] schedule+0x5dd/0x8a0",
        " [<ffffffff810666ed>] do_exit+0x1fd/0x430",
        "RIP  [<ffffffff810846a0>] kthread_data+0x10/0x20",
        " RSP <ffff88027116b828>",
        "CR2: fffffffffffffff8",
        "---[ end trace 742b26ee0c4fab73 ]---",
        "Fixing recursive fault but reboot is needed!",
        "Kernel panic - not syncing: Watchdog detected hard LOCKUP on cpu 0",
        "Pid: 4, comm: kworker/0:0 Tainted: G      D     3.0.0-rc1+ #3",
        "Call Trace:",
        " <NMI>  [<ffffffff814d062f>] panic+0x91/0x1a8",
        " [<ffffffff810c76e1>] watchdog_overflow_callback+0xb1/0xc0",
        " [<ffffffff810fbbdd>] __perf_event_overflow+0x9d/0x250",
        " [<ffffffff810fc1c4>] perf_event_overflow+0x14/0x20",
        " [<ffffffff8101df36>] intel_pmu_handle_irq+0x326/0x530",
        " [<ffffffff814d4ba9>] perf_event_nmi_handler+0x29/0xa0",
        " [<ffffffff814d6f65>] notifier_call_chain+0x55/0x80",
        " [<ffffffff814d6fca>] atomic_notifier_call_chain+0x1a/0x20",
        " [<ffffffff814d6ffe>] notify_die+0x2e/0x30",
        " [<ffffffff814d4199>] default_do_nmi+0x39/0x1f0",
        " [<ffffffff814d43d0>] do_nmi+0x80/0xa0",
        " [<ffffffff814d3b90>] nmi+0x20/0x30",
        " [<ffffffff8123f379>] ? __write_lock_failed+0x9/0x20",
        " <<EOE>>  [<ffffffff814d32de>] ? _raw_write_lock_irq+0x1e/0x20",
        " [<ffffffff81065cec>] forget_original_parent+0x3c/0x330",
        " [<ffffffff81065ffb>] exit_notify+0x1b/0x190",
        " [<ffffffff810666ed>] do_exit+0x1fd/0x430",
        " [<ffffffff810846ce>] kthread+0x8e/0xa0",
        " [<ffffffff814dc544>] kernel_thread_helper+0x4/0x10",
    )
    oops, lockup = _reports(lines)
    assert oops.title == "BUG: unable to handle kernel paging request in kthread_data"
    assert (lockup.title, lockup.kind, lockup.start_line) == (
        "BUG: hard lockup in forget_original_parent",
        ReportKind.LOCKUP,
        15,
    )


def test_a_panic_on_warn_inside_the_warning_continues_it() -> None:
    # panic_on_warn (v3.19): the panic follows the WARN's message, its trace holds the WARN's frames; one report,
    # the WARN's, titled as the lockup.
    lines = (
        "------------[ cut here ]------------",
        "WARNING: CPU: 3 PID: 2817 at kernel/watchdog.c:311 watchdog_overflow_callback+0x79/0xa0()",
        "Watchdog detected hard LOCKUP on cpu 3",
        "Kernel panic - not syncing: panic_on_warn set ...",
        "",
        "CPU: 3 PID: 2817 Comm: myapp Tainted: G           OE   4.2.0-27-generic #32",
        "Call Trace:",
        " <NMI>  [<ffffffff815e19ba>] dump_stack+0x19/0x1b",
        " [<ffffffff815fd14b>] panic+0xd8/0x1e7",
        *_NMI_WARN[1:],
        *_TASK,
        "---[ end Kernel panic - not syncing: panic_on_warn set ...",
    )
    report = _only(lines)
    assert (report.title, report.rule, report.panicked) == (
        "BUG: hard lockup in mydrv_poll_status",
        "warn-hard-lockup",
        True,
    )


def test_a_lockup_panic_inside_another_report_continues_it() -> None:
    # Not a start inside a report (as the modern "Kernel panic - not syncing: Hard LOCKUP"): a report whose trace the
    # panic interrupts is not cut in two.
    lines = (
        "BUG: soft lockup - CPU#1 stuck for 22s! [myapp:2817]",
        _MODULES,
        "CPU: 1 PID: 2817 Comm: myapp Tainted: G           OE ------------   3.10.0-123.el7.x86_64 #1",
        "RIP: 0010:[<ffffffffa04a31b5>]  [<ffffffffa04a31b5>] mydrv_poll_status+0x45/0x120 [mydrv]",
        "Call Trace:",
        "Kernel panic - not syncing: Watchdog detected hard LOCKUP on cpu 3",
        *_TASK[1:],
    )
    (report,) = _reports(lines)
    assert (report.title, report.end_line) == ("BUG: soft lockup in mydrv_ioctl", len(lines))


def test_a_panic_of_a_detector_that_watches_another_cpu_keeps_the_panic_title() -> None:
    # arm's detector, which watches another CPU from a timer, panics with the same text on the CPU that noticed: its
    # trace is not the locked CPU's, so no frame of it names the lockup.
    lines = (
        "Kernel panic - not syncing: Watchdog detected hard LOCKUP on cpu 0",
        "CPU: 7 PID: 0 Comm: swapper/7 Tainted: G S  B             5.4.25 #100",
        "Call trace:",
        " dump_backtrace+0x0/0x188",
        " show_stack+0x20/0x2c",
        " dump_stack+0xdc/0x144",
        " panic+0x168/0x370",
        " watchdog_check_hardlockup_other_cpu+0x68/0x90",
        " watchdog_timer_fn+0x68/0x290",
        " __hrtimer_run_queues+0x264/0x498",
        " hrtimer_interrupt+0xf0/0x22c",
        " gic_handle_irq+0x100/0x1c4",
        " el1_irq+0xbc/0x180",
        " arch_cpu_idle+0x3c/0x5c",
        " do_idle+0x1a4/0x2a0",
    )
    report = _only(lines)
    assert (report.title, report.kind, report.rule) == (
        "kernel panic: Watchdog detected hard LOCKUP on cpu NUM",
        ReportKind.PANIC,
        "panic",
    )
    assert not isinstance(report.frame, str)
