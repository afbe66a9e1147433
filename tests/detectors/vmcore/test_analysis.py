"""detectors.vmcore.analysis on hand-built snapshots: the log, the crash report, findings and hypotheses."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from detectors.dmesg.scanner import scan_text
from detectors.vmcore.analysis import (
    analyse_snapshot,
    crash_report,
    fault_address_from_log,
    interrupted_by,
    log_as_text,
)
from detectors.vmcore.faultaddr import fault_address_record, no_fault_address
from forensics.model import LocatorKind, NotAvailable
from tests.detectors.vmcore.snapshots import (
    DUMP,
    FAULT_PC,
    NULL_OOPS_LOG,
    backtrace,
    log,
    null_member_snapshot,
    snapshot,
)


def test_fault_address_is_the_last_one_the_log_reports() -> None:
    records = log(
        "BUG: unable to handle page fault for address: ffffffffc0200000",
        "CR2: ffffffffc0200000",
        "BUG: kernel NULL pointer dereference, address: 0000000000000030",
    )
    assert fault_address_from_log(records) == 0x30
    assert fault_address_from_log(records[:2]) == 0xFFFFFFFFC0200000
    assert fault_address_from_log(log("Kernel panic - not syncing: sysrq triggered crash")) is None


def test_the_cr2_of_a_report_that_is_no_page_fault_is_not_a_fault_address() -> None:
    """A GPF, a BUG or a lockup does not set CR2: the register dump shows the last page fault's (6.12 case 10)."""
    gpf = log(
        "Oops: general protection fault, probably for non-canonical address 0x6b6b6b6b6b6b6b73: 0000 [#1] SMP",
        "CR2: 0000000000559c5a",
    )
    assert fault_address_from_log(gpf) is None
    bug = log("kernel BUG at mm/slub.c:550!", "Oops: invalid opcode: 0000 [#1] SMP", "CR2: 0000000000559c5a")
    assert fault_address_from_log(bug) is None
    page_fault = log("BUG: kernel NULL pointer dereference, address: 0000000000000030", "#PF: error_code(0x0000)",
                     "Oops: Oops: 0000 [#1] SMP", "CR2: 0000000000000030")  # fmt: skip
    assert fault_address_from_log(page_fault) == 0x30


def test_the_null_field_cites_the_log_line_its_fault_address_was_read_from() -> None:
    """The register dump's CR2 comes first and may hold another address; the evidence is the line read."""
    lines = list(NULL_OOPS_LOG)
    lines[lines.index("CR2: 0000000000000030")] = "CR2: ffffffffc018efef CR3: 0000000000a3a000 CR4: 00000000000006a0"
    last = lines.index("Kernel panic - not syncing: Fatal exception")
    lines.insert(last, "CR2: 0000000000000030")  # as 6.1 prints it at the end of the oops (fixture 01, line 283)
    snap = null_member_snapshot(log=log(*lines))
    assert fault_address_record(snap.log) == (0x30, last)
    null = next(f for f in analyse_snapshot(snap)[0].findings if f.kind == "null-field")
    cited = [(e.locator.start, e.excerpt) for e in null.evidence if e.locator.kind is LocatorKind.LINE]
    assert cited == [(last + 1, "CR2: 0000000000000030")]


def test_log_as_text_is_one_dmesg_line_per_record() -> None:
    records = log("first", "second\ncontinued", start=5.25)
    assert log_as_text(records) == "[    5.250000] first\n[    5.251000] second continued\n"


def test_crash_report_prefers_the_bug_over_the_panic_it_caused() -> None:
    warn_then_panic = scan_text(
        log_as_text(
            log(
                "WARNING: CPU: 1 PID: 77 at kf_buggy.c:140 kf_state_stop+0x20/0x40 [kf_buggy]",
                "RIP: 0010:kf_state_stop+0x20/0x40 [kf_buggy]",
                "Kernel panic - not syncing: kernel: panic_on_warn set ...",
            )
        )
    )
    found = crash_report(warn_then_panic)
    assert found is not None and found.title == "WARNING in kf_state_stop"
    panic_only = scan_text(log_as_text(log("Kernel panic - not syncing: sysrq triggered crash")))
    found = crash_report(panic_only)
    assert found is not None and (found.kind, found.title) == ("panic", "kernel panic: sysrq triggered crash")
    assert crash_report([]) is None


def test_crash_report_is_not_an_earlier_warning_the_kernel_survived() -> None:
    """The stock 6.1 spin_deadlock dump: insmod's preemption-imbalance WARNING, then kf_hw_poll's soft lockup."""
    reports = scan_text(
        log_as_text(
            log(
                "initcall kf_buggy_init+0x0/0x1000 [kf_buggy] returned with preemption imbalance",
                "WARNING: CPU: 0 PID: 104 at init/main.c:1284 do_one_initcall+0x1d7/0x220",
                "RIP: 0010:do_one_initcall+0x1d7/0x220",
                "---[ end trace 0000000000000000 ]---",
                "watchdog: BUG: soft lockup - CPU#1 stuck for 8s! [kf_hw_poll:105]",
                "CPU: 1 PID: 105 Comm: kf_hw_poll Tainted: G        W  OE      6.1.0-57-amd64 #1  Debian 6.1.192-3",
                "RIP: 0010:native_queued_spin_lock_slowpath+0x60/0x2a0",
                "Call Trace:",
                " kf_hw_read_status+0x12/0x2c [kf_buggy]",
                " kf_hw_poll_fn+0x1a/0x40 [kf_buggy]",
                "Kernel panic - not syncing: softlockup: hung tasks",
            )
        )
    )
    found = crash_report(reports)
    assert found is not None and found.title.startswith("BUG: soft lockup in ")


def test_crash_report_is_not_an_earlier_bug_the_kernel_survived() -> None:
    """A stock 6.12 spin_deadlock dump: insmod's "scheduling while atomic" (survived), then the soft lockup."""
    reports = scan_text(
        log_as_text(
            log(
                "kf_buggy: kf_hw_configure returned -19",
                "BUG: scheduling while atomic: insmod/155/0x00000002",
                "CPU: 0 UID: 0 PID: 155 Comm: insmod Kdump: loaded Tainted: G           OE      6.12.118 #1",
                "Call Trace:",
                " <TASK>",
                " dump_stack_lvl+0x64/0x80",
                " __schedule_bug+0x56/0x70",
                " do_one_initcall+0x283/0x320",
                " </TASK>",
                "watchdog: BUG: soft lockup - CPU#1 stuck for 8s! [kf_hw_poll:156]",
                "CPU: 1 UID: 0 PID: 156 Comm: kf_hw_poll Kdump: loaded Tainted: G        W  OE      6.12.118 #1",
                "RIP: 0010:native_queued_spin_lock_slowpath+0x60/0x2a0",
                "Call Trace:",
                " kf_hw_read_status+0x12/0x2c [kf_buggy]",
                " kf_hw_poll_fn+0x1a/0x40 [kf_buggy]",
                "Kernel panic - not syncing: softlockup: hung tasks",
            )
        )
    )
    assert [r.kind for r in reports][:2] == ["atomic-sleep", "soft-lockup"]
    found = crash_report(reports)
    assert found is not None and found.title.startswith("BUG: soft lockup in ")


def test_null_member_oops_gives_the_crash_the_null_field_and_the_module() -> None:
    analysis, fault, reports = analyse_snapshot(null_member_snapshot())
    assert [r.title for r in reports] == ["BUG: unable to handle kernel NULL pointer dereference in kf_sensor_read"]
    assert [f.kind for f in analysis.findings] == ["crash", "null-field", "module"]
    crash, null, module = analysis.findings
    assert crash.title == reports[0].title and crash.confidence == 0.95
    # The crash cites its frame, the panic line of the dump's log and the report in it (lines 1-13).
    assert [(e.source, e.locator.kind, e.locator.start) for e in crash.evidence] == [
        (DUMP, LocatorKind.FRAME, 0),
        (f"{DUMP}#log", LocatorKind.LINE, 1),
        (f"{DUMP}#log", LocatorKind.LINE, 1),
    ]
    assert crash.evidence[2].locator.end == len(NULL_OOPS_LOG)
    assert null.title == (
        "NULL pointer: dev->sensor was NULL; the fault reads ops (offset 0x30 of struct kf_sensor) through it "
        "at kf_buggy.c:88"
    )
    assert module.title == "out-of-tree/unsigned module kf_buggy (O) is in the crashing stack"
    assert not isinstance(fault, NotAvailable) and fault.instruction.address == FAULT_PC
    assert analysis.crash_frame is not None and analysis.crash_frame.function == "kf_sensor_read"
    assert analysis.culprit_frame == analysis.crash_frame
    # One rule table (detectors/incident/hypotheses.py): the NULL field first, the crash site (0.95 x 0.8), then
    # the module; ranks count from 1.
    assert [(h.rank, h.confidence) for h in analysis.hypotheses] == [(1, 0.9), (2, 0.76), (3, 0.6)]
    assert analysis.hypotheses[1].statement == "a bug in kf_sensor_read (module kf_buggy)"
    first = analysis.hypotheses[0]
    assert first.statement == f"{null.title}: a missing NULL check or an object used before it is set up"
    # The debug info's kf_buggy.c is no file here: a source tree is needed to grep it.
    assert first.next_command == "grep -n 'sensor' SOURCE_TREE/kf_buggy.c  # find where sensor is set (kf_sensor_read)"


def test_the_null_member_s_next_command_greps_the_frame_s_source_file_whole(tmp_path: Path) -> None:
    """The file is the frame's source_file (until 2026-12-06 cut out of its ``file:line`` at the first ':', a build
    directory named ``linux-6.1:amd64`` cut there)."""
    snap = null_member_snapshot()
    odd = tmp_path / "linux-6.1:amd64" / "kf_buggy.c"
    odd.parent.mkdir()
    odd.write_text("dev->sensor = NULL;\n")
    snap = replace(snap, backtrace=(replace(snap.backtrace[0], source_file=str(odd)), *snap.backtrace[1:]))
    first = analyse_snapshot(snap)[0].hypotheses[0]
    assert first.next_command == f"grep -n 'sensor' {odd}  # find where sensor is set"
    # A copy under a directory with a space: one argument, as the shell reads it (it was two).
    spaced = tmp_path / "my tree" / "kf_buggy.c"
    spaced.parent.mkdir()
    spaced.write_text("dev->sensor = NULL;\n")
    snap = replace(snap, backtrace=(replace(snap.backtrace[0], source_file=str(spaced)), *snap.backtrace[1:]))
    assert analyse_snapshot(snap)[0].hypotheses[0].next_command == (
        f"grep -n 'sensor' '{spaced}'  # find where sensor is set"
    )
    # No file named by the debug info: the function's name was given as the file to grep.
    snap = replace(snap, backtrace=(replace(snap.backtrace[0], source_file=None), *snap.backtrace[1:]))
    assert analyse_snapshot(snap)[0].hypotheses[0].next_command == (
        "grep -rn 'sensor' SOURCE_TREE  # find where sensor is set (kf_sensor_read)"
    )


def test_the_null_member_s_next_command_needs_a_source_tree_where_the_build_path_is_no_file() -> None:
    """The debug info names the build machine's path (DW_AT_comp_dir of the module), which does not exist where
    the dump is read: the grep of it exited 2 (ue10 #10).  The path is said as the build's, a source tree needed."""
    snap = null_member_snapshot()
    built = "/build/nowhere/kf_buggy/kf_buggy.c"
    snap = replace(snap, backtrace=(replace(snap.backtrace[0], source_file=built), *snap.backtrace[1:]))
    assert analyse_snapshot(snap)[0].hypotheses[0].next_command == (
        f"grep -rn 'sensor' SOURCE_TREE  # find where sensor is set (kf_sensor_read; built as {built})"
    )
    # A kernel tree's relative name: the file under the tree.
    snap = replace(snap, backtrace=(replace(snap.backtrace[0], source_file="drivers/hwmon/kf.c"), *snap.backtrace[1:]))
    assert analyse_snapshot(snap)[0].hypotheses[0].next_command == (
        "grep -n 'sensor' SOURCE_TREE/drivers/hwmon/kf.c  # find where sensor is set (kf_sensor_read)"
    )


def test_without_machine_code_the_fault_says_why_once() -> None:
    analysis, fault, reports = analyse_snapshot(snapshot(code=NotAvailable("the page of the pc is not in the dump")))
    assert fault == NotAvailable("the page of the pc is not in the dump")  # not "not available: not available: ..."
    no_regs = analyse_snapshot(null_member_snapshot(registers=NotAvailable("no exception frame")))[1]
    assert no_regs == NotAvailable("no exception frame")
    assert reports == [] and [f.kind for f in analysis.findings] == ["crash"]


def test_a_panic_without_an_exception_frame_is_no_bug_of_its_caller() -> None:
    """sysrq-c: the crash is the caller of panic(), no hypothesis blames it: it was requested (deliberate)."""
    frames = backtrace("panic", "sysrq_handle_crash", "__handle_sysrq", "write_sysrq_trigger")
    records = log("sysrq: Trigger a crash", "Kernel panic - not syncing: sysrq triggered crash")
    analysis, fault, _ = analyse_snapshot(snapshot(backtrace=frames, log=records))
    crash = analysis.findings[0]
    assert crash.title == "kernel panic: sysrq triggered crash"
    assert crash.fact("crash site") == "caller of panic()" and crash.fact("crashing function") == "sysrq_handle_crash"
    assert [h.statement.split(":")[0] for h in analysis.hypotheses] == ["the crash was deliberate"]
    assert isinstance(fault, NotAvailable)


def test_an_exception_frame_alone_blames_the_crashing_function() -> None:
    frames = (*backtrace("kf_parse", "kf_ioctl", interrupted=0),)
    frames = (replace(frames[0], source_file="kf.c", source_line=12), frames[1])
    analysis, _, _ = analyse_snapshot(snapshot(backtrace=frames, panic_message="general protection fault"))
    assert analysis.findings[0].title == "general protection fault in kf_parse"  # no log: the panic message
    (only,) = analysis.hypotheses
    assert (only.rank, only.statement, only.confidence) == (1, "a bug in kf_parse", 0.76)
    assert only.next_command == f"crash> bt; crash> dis -rl {frames[0].pc:#x}"


def test_an_empty_snapshot_still_has_a_crash_finding() -> None:
    analysis, _, _ = analyse_snapshot(snapshot())
    (crash,) = analysis.findings
    assert crash.title == "Kernel panic - not syncing: sysrq triggered crash"
    assert crash.confidence == 0.5 and crash.confidence_reason == "no backtrace could be read"
    assert [(e.locator.kind, e.locator.start, e.excerpt) for e in crash.evidence] == [(LocatorKind.BYTE, 0, "KDUMP   ")]
    assert analysis.crash_frame is None and analysis.culprit_frame is None


def test_a_crashed_task_the_dump_lacks_is_named_by_its_report_on_the_same_cpu() -> None:
    from dataclasses import replace as changed

    from detectors.vmcore.findings import crashed_task_text
    from forensics.model import NotAvailable

    [report] = scan_text(
        log_as_text(
            log(
                "Oops: general protection fault, probably for non-canonical address 0x6b6b6b6b6b6b6b73: 0000 [#1]",
                "CPU: 1 UID: 0 PID: 150 Comm: sh Kdump: loaded Tainted: G           OE      6.12.118 #1",
                "RIP: 0010:kf_conn_send+0x8/0x20 [kf_buggy]",
            )
        )
    )
    gone = NotAvailable("name unknown: the dump lacks its task_struct")
    snap = snapshot(crashed_comm=gone, crashed_pid=NotAvailable("unknown"), crashed_cpu=1)
    assert crashed_task_text(snap, report).startswith("sh (pid 150) on CPU 1, named by the kernel log's report")
    # another CPU's report names another task: not taken
    assert crashed_task_text(changed(snap, crashed_cpu=0), report).startswith("not available: name unknown")


def test_no_fault_address_says_a_general_protection_fault_sets_no_cr2() -> None:
    """The GPF's register dump shows an earlier page fault's CR2; the header's guessed address is returned."""
    gpf = log(
        "general protection fault, probably for non-canonical address 0x6b6b6b6b6b6b6b73: 0000 [#1] SMP",
        "RIP: 0010:kf_conn_send+0x8/0x10 [kf_buggy]",
        "CR2: 0000000000559c5a CR3: 000000000036c000 CR4: 00000000000006a0",
    )
    assert no_fault_address(gpf) == (
        "none: a general protection fault sets no CR2 (the CR2: 0000000000559c5a its register dump shows is an "
        "earlier page fault's)",
        0x6B6B6B6B6B6B6B73,
    )
    assert no_fault_address(log("general protection fault: 0000 [#1] SMP")) == (
        "none: a general protection fault sets no CR2",
        None,
    )
    assert no_fault_address(log("Kernel panic - not syncing: sysrq triggered crash")) == ("not in the log", None)


_LOCKUP_PANIC = """\
[    9.976013] Kernel panic - not syncing: softlockup: hung tasks
[    9.976013] CPU: 1 PID: 41 Comm: kf_spinner Kdump: loaded Tainted: G           O L     6.1.192 #1
[    9.976013] Call Trace:
[    9.976013]  <IRQ>
[    9.976013]  dump_stack_lvl+0x34/0x48
[    9.976013]  panic+0x10a/0x2b2
[    9.976013]  watchdog_timer_fn.cold+0x15/0x15
[    9.976013]  </IRQ>
"""


def test_a_soft_lockup_panic_without_its_report_is_worded_by_what_the_log_says() -> None:
    """ "softlockup: hung tasks" is the soft lockup detector's panic: its timer interrupt, never the hard one's NMI."""
    said = interrupted_by(crash_report(scan_text(_LOCKUP_PANIC)))
    assert said is not None and "NMI" not in said
    assert said.startswith("the soft lockup detector's timer interrupt took the CPU here (the log's panic: softlockup")
    hard = interrupted_by(crash_report(scan_text(_LOCKUP_PANIC.replace("softlockup: hung tasks", "Hard LOCKUP"))))
    assert hard == "the hard lockup detector's NMI took the CPU here: nothing faulted"
