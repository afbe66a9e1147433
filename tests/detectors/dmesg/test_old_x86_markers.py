"""x86 call traces before v4.10: a context marker and the first frame of that context on one line.

Until "x86/dumpstack: Print stack identifier on its own line" (v4.10) the x86 unwinder printed ``<IRQ>`` before the
first interrupt frame and ``<EOI>`` before the first frame after it, on the frame's own line.  Such a line was read as
neither a marker nor a frame: its frame was lost, the interrupt's frames were labelled the task's, and the stack a
report's "why" lists ended at the ``<EOI>`` line, without the task's frames after it.  The log below is written here
in that format (an RCU stall of a 4.9 kernel, as syzbot's logs of the time print it).
"""

from __future__ import annotations

from detectors.dmesg import frames
from detectors.dmesg.findings import explain_reports
from detectors.dmesg.lines import LogLine, decode, parse_line
from detectors.dmesg.scanner import scan_chunks
from forensics.types.dmesg import StackKind

_STALL = (
    "INFO: rcu_sched self-detected stall on CPU",
    "\t1-...: (104999 ticks this GP) idle=f5f/140000000000001/0 softirq=29066/29066 fqs=26213 ",
    "\t (t=105000 jiffies g=29066 c=29065 q=1059)",
    "Task dump for CPU 1:",
    "syz-executor5   R  running task    26616 18123   3712 0x20020008",
    "Call Trace:",
    " <IRQ>  [<ffffffff8170cafa>] _sched_show_task+0x31a/0x325",
    " [<ffffffff8170d27f>] sched_show_task+0x10/0x12",
    " [<ffffffff8171694f>] rcu_dump_cpu_stacks+0x155/0x169",
    " [<ffffffff81512ccf>] update_process_times+0x3f/0x70",
    " [<ffffffff812af344>] local_apic_timer_interrupt+0x74/0x90",
    " [<ffffffff81012fba>] smp_apic_timer_interrupt+0x13a/0x4bd",
    " [<ffffffff81011d42>] apic_timer_interrupt+0x82/0x90",
    " <EOI>  [<ffffffff814f00eb>] ? debug_lockdep_rcu_enabled+0x3b/0x90",
    " [<ffffffff81085d5c>] kvm_vm_compat_ioctl+0x13c/0x250",
    " [<ffffffff819d8ee0>] compat_SyS_ioctl+0x650/0x2180",
    " [<ffffffff830a99b0>] sysenter_dispatch+0xf/0x32",
)


def _log() -> str:
    return "".join(f"[  393.{700000 + 1000 * i:06d}] {text}\n" for i, text in enumerate(_STALL))


def _lines() -> list[LogLine]:
    return [parse_line(n, decode(raw)) for n, raw in enumerate(_log().encode().splitlines(), 1)]


def test_a_marker_and_a_frame_on_one_line_open_the_stack_and_give_the_frame() -> None:
    lines = _lines()
    start = next(i for i, line in enumerate(lines) if line.body == "Call Trace:") + 1
    got, _ = frames.parse_trace(lines, start)
    assert [(f.function, f.stack, f.reliable) for f in got] == [
        ("_sched_show_task", "irq", True),
        ("sched_show_task", "irq", True),
        ("rcu_dump_cpu_stacks", "irq", True),
        ("update_process_times", "irq", True),
        ("local_apic_timer_interrupt", "irq", True),
        ("smp_apic_timer_interrupt", "irq", True),
        ("apic_timer_interrupt", "irq", True),
        ("debug_lockdep_rcu_enabled", "task", False),
        ("kvm_vm_compat_ioctl", "task", True),
        ("compat_SyS_ioctl", "task", True),
        ("sysenter_dispatch", "task", True),
    ]
    # Read from its middle, the trace is still the interrupt's up to <EOI>.
    middle = start + 4
    assert frames.stack_at(lines, middle) == "irq"
    assert frames.parse_trace(lines, middle, stack=frames.stack_at(lines, middle))[0][0].stack == "irq"
    assert frames.stack_at(lines, start) == "task"  # the trace's first line: nothing above it in the trace
    names: list[str] = []
    frames.trace_names(lines, start, names)
    assert names == [f.function for f in got if f.reliable]


def test_a_line_with_a_marker_alone_or_with_no_frame_after_it_only_opens_the_stack() -> None:
    assert frames.after_marker(" <IRQ>") is None
    assert frames.after_marker(" <IRQ>  ") is None
    assert frames.after_marker(" <IRQ>  [<ffffffff8170cafa>] f+0x1/0x2") == "[<ffffffff8170cafa>] f+0x1/0x2"
    assert frames.after_marker(" [<ffffffff8170cafa>] f+0x1/0x2") is None
    assert frames.after_marker(" <IRQ>x") is None  # no marker: the name runs on
    lines = [parse_line(n, decode(f"[    1.000000] {body}".encode())) for n, body in enumerate(
        (" <NMI>  some words", " [<ffffffff81011d42>] nmi_handle+0x82/0x90"), 1)]  # fmt: skip
    assert [(f.function, f.stack) for f in frames.parse_trace(lines, 0)[0]] == [("nmi_handle", "nmi")]


def test_the_report_reads_the_interrupts_frames_and_the_tasks_after_eoi() -> None:
    reports = list(scan_chunks([_log().encode()]))
    assert [r.title for r in reports] == ["INFO: rcu detected stall in kvm_vm_compat_ioctl"]
    report = reports[0]
    # The stall rule reads the trace from past the timer interrupt's handler: those frames are still the interrupt's.
    assert [(f.function, f.stack, f.line) for f in report.trace] == [
        ("smp_apic_timer_interrupt", "irq", 12),
        ("apic_timer_interrupt", "irq", 13),
        ("debug_lockdep_rcu_enabled", "task", 14),
        ("kvm_vm_compat_ioctl", "task", 15),
        ("compat_SyS_ioctl", "task", 16),
        ("sysenter_dispatch", "task", 17),
    ]
    why = explain_reports(reports)[report.start_line]
    (trace,) = [s for s in why.stacks if s.kind is StackKind.CALL_TRACE]
    assert [f.function for f in trace.frames] == [
        "_sched_show_task",
        "sched_show_task",
        "rcu_dump_cpu_stacks",
        "update_process_times",
        "local_apic_timer_interrupt",
        "smp_apic_timer_interrupt",
        "apic_timer_interrupt",
        "debug_lockdep_rcu_enabled",
        "kvm_vm_compat_ioctl",
        "compat_SyS_ioctl",
        "sysenter_dispatch",
    ]


def test_eoe_closes_an_exception_stack_and_an_inline_stamp_is_passed_over() -> None:
    # <<EOE>> ended an NMI or #DF stack before v4.10; a console that did not join the marker's printk with the next
    # printed the frame's own stamp after the marker.
    bodies = (
        " <NMI>  [<ffffffff8101f2a5>] perf_event_nmi_handler+0x25/0x40",
        " [<ffffffff8101c2ab>] nmi_handle+0x8b/0x150",
        " <<EOE>>  [<ffffffffa0123456>] mydrv_poll+0x45/0x120 [mydrv]",
        " [<ffffffff811fbe2a>] do_sys_poll+0x2aa/0x560",
        " <IRQ> [  420.408595]  [<ffffffff814249f9>] sched_show_task+0x10/0x12",
        " <EOI> [  420.505397]  [<ffffffff81085d5c>] ? smp_call_function_single+0x13c/0x250",
        " <IRQ> [  420.408595]",
    )
    lines = [parse_line(n, decode(f"[    1.000000] {body}".encode())) for n, body in enumerate(bodies, 1)]
    assert [(f.function, f.stack, f.module, f.reliable) for f in frames.parse_trace(lines, 0)[0]] == [
        ("perf_event_nmi_handler", "nmi", None, True),
        ("nmi_handle", "nmi", None, True),
        ("mydrv_poll", "task", "mydrv", True),
        ("do_sys_poll", "task", None, True),
        ("sched_show_task", "irq", None, True),
        ("smp_call_function_single", "task", None, False),
    ]
    assert frames.stack_at(lines, len(lines)) == "irq"  # the last line: a marker and its stamp, nothing more


# A hard lockup whose call trace is the NMI watchdog's own stack first, the interrupted task's after <<EOE>> (the
# pre-v4.10 x86 format), with no RIP line of the interrupted code.
_HARD_LOCKUP = (
    "NMI watchdog: Watchdog detected hard LOCKUP on cpu 3",
    "Modules linked in: mydrv(OE) xfs libcrc32c",
    "CPU: 3 PID: 1234 Comm: myapp Tainted: G           OE  ------------   3.10.0-957.el7.x86_64 #1",
    "Call Trace:",
    " <NMI>  [<ffffffff81761e41>] dump_stack+0x19/0x1b",
    " [<ffffffff810985db>] __warn+0xfb/0x120",
    " [<ffffffff8109864f>] warn_slowpath_fmt+0x5f/0x80",
    " [<ffffffff81149640>] watchdog_overflow_callback+0x120/0x130",
    " [<ffffffff811a4d11>] __perf_event_overflow+0x51/0x100",
    " [<ffffffff81009d88>] intel_pmu_handle_irq+0x1e8/0x470",
    " [<ffffffff8176ae1b>] perf_event_nmi_handler+0x2b/0x50",
    " [<ffffffff8176c25c>] nmi_handle.isra.0+0x8c/0x150",
    " [<ffffffff8176c528>] do_nmi+0x208/0x340",
    " [<ffffffff8176b6c1>] end_repeat_nmi+0x1e/0x7e",
    " [<ffffffff811230bb>] ? native_queued_spin_lock_slowpath+0x1fb/0x200",
    " <<EOE>>  [<ffffffff8175b0f9>] queued_spin_lock_slowpath+0xb/0xf",
    " [<ffffffff8176a7b0>] _raw_spin_lock+0x20/0x30",
    " [<ffffffffc0512345>] mydrv_do_thing+0x45/0x120 [mydrv]",
    " [<ffffffff812345ab>] vfs_write+0xbd/0x1e0",
    " [<ffffffff812346cf>] SyS_write+0x7f/0xf0",
    " [<ffffffff81774ddb>] system_call_fastpath+0x22/0x27",
    "---[ end trace 6f2a5b1e9c0d3a11 ]---",
)


def test_a_pre_4_10_hard_lockup_is_named_after_the_task_not_the_watchdog() -> None:
    log = "".join(f"[ 1234.{100000 + 1000 * i:06d}] {text}\n" for i, text in enumerate(_HARD_LOCKUP))
    (report,) = scan_chunks([log.encode()])
    assert report.title == "BUG: hard lockup in mydrv_do_thing"
    by_function = {f.function: f.stack for f in report.trace}
    assert by_function["watchdog_overflow_callback"] == "nmi"
    assert by_function["queued_spin_lock_slowpath"] == "task"  # the frame on the <<EOE>> line, the task's again
    assert by_function["mydrv_do_thing"] == "task"
