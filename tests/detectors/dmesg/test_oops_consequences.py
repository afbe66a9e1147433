"""What follows from an oops: the panic it ends in, and the oopses after it on a kernel it left tainted ``D``.

The logs are written here in the kernel's formats.  x86's oops_end() prints the end marker, then the registers
again (the "executive summary", since 2018), then panics when it must: ``Fatal exception`` (panic_on_oops),
``Fatal exception in interrupt`` (an oops in interrupt context); the machine check handler's ``Fatal machine
check`` likewise.  The panic is the oops's consequence, not a second bug (syzkaller's pkg/report keeps the panic
in the oops's report too).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from detectors.dmesg.findings import PANIC_EVIDENCE
from detectors.incident.hypotheses import plain_summary
from forensics.model import Finding, Severity
from forensics.pipelines.dmesg import analyse_logs
from forensics.types.dmesg import AFTER_FACT, PANIC_UNSEEN_FACT, WENT_DOWN
from forensics.types.dmesg_result import DmesgResult
from tests.helpers import assert_evidence_resolves

_OOPS = """\
[ 5123.004511] BUG: kernel NULL pointer dereference, address: 0000000000000008
[ 5123.004530] #PF: supervisor read access in kernel mode
[ 5123.004535] #PF: error_code(0x0000) - not-present page
[ 5123.004540] PGD 0 P4D 0 \n\
[ 5123.004545] Oops: 0000 [#1] PREEMPT SMP NOPTI
[ 5123.004550] CPU: 3 PID: 1187 Comm: kworker/3:2 Tainted: G           OE      5.15.0-91-generic #101-Ubuntu
[ 5123.004555] Hardware name: QEMU Standard PC (Q35 + ICH9, 2009), BIOS 1.15.0-1 04/01/2014
[ 5123.004560] Workqueue: events mlx5e_rx_dim_work [mlx5_core]
[ 5123.004565] RIP: 0010:mlx5e_rx_dim_work+0x1c/0x60 [mlx5_core]
[ 5123.004570] Code: 0f 1f 44 00 00 55 48 89 e5 41 54 53 48 89 fb 48 8b 47 f8 <48> 8b 40 08 0f b6 57 f0 48 8b 80 e0 00
[ 5123.004575] RSP: 0018:ffffa8c1c1e4be68 EFLAGS: 00010246
[ 5123.004580] RAX: 0000000000000000 RBX: ffff8e2c4a1c0c40 RCX: 0000000000000000
[ 5123.004585] RDX: 0000000000000001 RSI: ffff8e2c4a1c0c40 RDI: ffff8e2c4a1c0c40
[ 5123.004590] Call Trace:
[ 5123.004592]  <TASK>
[ 5123.004607]  process_one_work+0x228/0x3d0
[ 5123.004610]  worker_thread+0x53/0x420
[ 5123.004612]  kthread+0x127/0x150
[ 5123.004615]  ret_from_fork+0x1f/0x30
[ 5123.004617]  </TASK>
[ 5123.004620] Modules linked in: mlx5_ib ib_uverbs mlx5_core(OE) mlxfw psample tls
[ 5123.004625] CR2: 0000000000000008
[ 5123.004630] ---[ end trace 2a6b0e3f1c9d7e11 ]---
"""
_TITLE = "BUG: unable to handle kernel NULL pointer dereference in mlx5e_rx_dim_work"
# oops_end()'s executive summary: the first registers again.
_SUMMARY = """\
[ 5123.004640] RIP: 0010:mlx5e_rx_dim_work+0x1c/0x60 [mlx5_core]
[ 5123.004641] Code: 0f 1f 44 00 00 55 48 89 e5 41 54 53 48 89 fb 48 8b 47 f8 <48> 8b 40 08 0f b6 57 f0 48 8b 80 e0 00
[ 5123.004642] RSP: 0018:ffffa8c1c1e4be68 EFLAGS: 00010246
[ 5123.004643] RAX: 0000000000000000 RBX: ffff8e2c4a1c0c40 RCX: 0000000000000000
[ 5123.004644] RDX: 0000000000000001 RSI: ffff8e2c4a1c0c40 RDI: ffff8e2c4a1c0c40
[ 5123.004645] RBP: ffffa8c1c1e4be78 R08: 0000000000000000 R09: 0000000000000000
[ 5123.004646] R10: 0000000000000000 R11: 0000000000000000 R12: ffff8e2c4a1c0c00
[ 5123.004647] R13: 0000000000000000 R14: ffff8e2c40051c00 R15: ffff8e2c4a1c0c48
[ 5123.004648] FS:  0000000000000000(0000) GS:ffff8e33bfcc0000(0000) knlGS:0000000000000000
[ 5123.004649] CS:  0010 DS: 0000 ES: 0000 CR0: 0000000080050033
[ 5123.004649] CR2: 0000000000000008 CR3: 000000010a8c4005 CR4: 0000000000770ee0
[ 5123.004649] PKRU: 55555554
"""


def _panic(reason: str) -> str:
    return (
        f"[ 5123.004650] Kernel panic - not syncing: {reason}\n"
        "[ 5123.004700] Kernel Offset: 0x2c600000 from 0xffffffff81000000 (relocation range: "
        "0xffffffff80000000-0xffffffffbfffffff)\n"
        f"[ 5123.004710] ---[ end Kernel panic - not syncing: {reason} ]---\n"
    )


def _run(tmp_path: Path, text: str) -> DmesgResult:
    log = tmp_path / "kern.log"
    log.write_text(text)
    return analyse_logs([str(log)], live=False)


def _findings(result: DmesgResult) -> list[Finding]:
    return list(result.incident.findings)


@pytest.mark.parametrize("reason", ["Fatal exception", "Fatal exception in interrupt", "Fatal machine check"])
@pytest.mark.parametrize("summary", [_SUMMARY, ""], ids=["registers-again", "panic-next"])
def test_the_panic_after_an_oops_is_its_consequence_not_a_second_bug(tmp_path: Path, reason: str, summary: str) -> None:
    text = _OOPS + summary + _panic(reason)
    result = _run(tmp_path, text)
    (report,) = result.sources[0].reports
    assert (report.title, report.panicked, report.corrupted) == (_TITLE, True, False)
    panic_line = text.splitlines().index(_panic(reason).splitlines()[0]) + 1
    assert report.end_line >= panic_line
    (finding,) = _findings(result)
    assert finding.severity is Severity.CRITICAL
    assert f"then the kernel panicked (line {panic_line}: {reason})" in finding.summary
    cited = {(e.locator.name, e.locator.start) for e in finding.evidence}
    assert (PANIC_EVIDENCE, panic_line) in cited
    assert_evidence_resolves(_findings(result))
    assert all(finding.id in h.finding_ids for h in result.hypotheses)


def test_a_fatal_exception_with_no_oops_above_is_a_damaged_report_of_its_own(tmp_path: Path) -> None:
    # The oops's header was lost (the ring buffer wrapped, the console came up late): the panic is all there is.
    result = _run(tmp_path, "[ 5123.004600] random: crng reseeded\n" + _SUMMARY + _panic("Fatal exception"))
    (report,) = result.sources[0].reports
    assert (report.title, report.corrupted) == ("kernel panic: Fatal exception", True)


def test_an_oops_that_did_not_panic_says_so(tmp_path: Path) -> None:
    # The same oops, the machine kept running: its summary registers are no panic, and no panic is claimed.
    result = _run(tmp_path, _OOPS + _SUMMARY + "[ 5124.000000] e1000e: eth0 NIC Link is Up 1000 Mbps Full Duplex\n")
    (report,) = result.sources[0].reports
    assert (report.title, report.panicked) == (_TITLE, False)
    (finding,) = _findings(result)
    assert "panicked" not in finding.summary


def _gpf(at: int, counter: int, cpu: int, comm: str, taint: str, rip: str = "shrink_folio_list+0x6a1/0xd20") -> str:
    """A general protection fault on list poison, as x86's die() prints it, at second ``at``."""
    t = f"[  {at}.1000"
    return f"""\
{t}00] general protection fault, probably for non-canonical address 0xdead000000000122: 0000 [#{counter}] SMP NOPTI
{t}10] CPU: {cpu} PID: {800 + cpu} Comm: {comm} {taint} 6.6.30 #1
{t}20] Hardware name: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 1.16.2-debian-1.16.2-1 04/01/2014
{t}30] RIP: 0010:{rip}
{t}50] RSP: 0018:ffffc90000a3fb50 EFLAGS: 00010246
{t}60] RAX: dead000000000122 RBX: ffff888104a3c000 RCX: 0000000000000000
{t}80] Call Trace:
{t}81]  <TASK>
{t}82]  shrink_inactive_list+0x1a6/0x410
{t}83]  shrink_lruvec+0x2c5/0x3c0
{t}84]  balance_pgdat+0x2a3/0x720
{t}86]  kthread+0xef/0x120
{t}87]  ret_from_fork+0x31/0x50
{t}88]  </TASK>
{t}90] ---[ end trace 0000000000000000 ]---
"""


def test_a_second_oops_on_a_kernel_tainted_d_is_said_to_follow_the_first(tmp_path: Path) -> None:
    # The same oops again a second later, on another CPU, its Tainted: line holding D: counted with the first (same
    # title and body) but said to come after it, not as an independent sighting.
    text = _gpf(220, 1, 5, "kswapd0", "Not tainted") + _gpf(221, 2, 2, "postgres", "Tainted: G      D")
    result = _run(tmp_path, text)
    (finding,) = _findings(result)
    assert "2 times up to line 16; line 16 after the oops at line 1 (taint D)" in finding.summary
    facts = {f.name: f.value for f in finding.facts}
    assert facts["occurrences"] == "2 (1 after an oops above, taint D: not independent)"


def test_another_oops_on_a_kernel_tainted_d_is_a_consequence_of_the_first(tmp_path: Path) -> None:
    # A different oops after the first (another function): its own finding, linked to the first as a consequence.
    later = _gpf(221, 2, 2, "postgres", "Tainted: G      D", rip="list_lru_del+0x3a/0x90")
    result = _run(tmp_path, _gpf(220, 1, 5, "kswapd0", "Not tainted") + later)
    first, second = sorted(_findings(result), key=lambda f: f.evidence[0].locator.start)
    assert first.consequence_of is None
    assert second.consequence_of is not None and second.consequence_of.root == first.id
    assert second.consequence_of.how.startswith("after the oops at line 1 (taint D): line 17 says")
    assert second.severity < first.severity
    assert ("after the oops", 1) in {(e.locator.name, e.locator.start) for e in second.evidence}
    assert_evidence_resolves(_findings(result))


def test_an_oops_tainted_d_with_no_oops_in_the_log_is_left_alone(tmp_path: Path) -> None:
    # The first oops is not in the log (the ring buffer wrapped): nothing to link, the taint flag alone says it.
    result = _run(tmp_path, _gpf(221, 2, 2, "postgres", "Tainted: G      D"))
    (finding,) = _findings(result)
    assert finding.consequence_of is None
    assert "after the oops" not in finding.summary


def test_report_does_not_say_crashed_of_oopses_that_did_not_panic(tmp_path: Path) -> None:
    # report's first sentence (detectors/incident/hypotheses.py plain_summary) on the findings of the log alone.
    log = tmp_path / "kern.log"
    later = "[  222.000000] systemd[1]: Started Session 5 of User root.\n"  # user space goes on after it
    log.write_text(_gpf(220, 1, 5, "kswapd0", "Not tainted") + _gpf(221, 2, 2, "postgres", "Tainted: G      D") + later)
    said = plain_summary(analyse_logs([str(log)], live=False).incident.findings, "web-03")
    assert "crashed" not in said and "oopsed and went on: its boot goes on to line 31 (systemd[1]: Started" in said
    log.write_text(_OOPS + _SUMMARY + _panic("Fatal exception"))
    said = plain_summary(analyse_logs([str(log)], live=False).incident.findings, "web-03")
    assert said.startswith("The Linux kernel on web-03 crashed: ")


def test_registers_of_another_oops_after_the_end_marker_do_not_join_its_panic(tmp_path: Path) -> None:
    # The summary oops_end() prints is the first registers of its own oops: another RIP is another oops's summary
    # (one whose own lines were lost, or cut by this report), and the panic after it is not this report's.
    other = _SUMMARY.replace("mlx5e_rx_dim_work+0x1c/0x60 [mlx5_core]", "__isolate_free_page+0x4a8/0x680")
    result = _run(tmp_path, _OOPS + other + _panic("Fatal exception"))
    first = min(result.sources[0].reports, key=lambda r: r.start_line)
    assert (first.title, first.panicked, first.end_line) == (_TITLE, False, _OOPS.count("\n"))


def _syslog(text: str) -> str:
    """``text`` as rsyslog writes it to kern.log: each line's printk time behind a syslog prefix."""
    return "".join(f"Dec  7 06:31:40 web-03 kernel: {line}\n" for line in text.splitlines())


@pytest.mark.parametrize(
    ("text", "why"),
    [
        # A panic stops user space before rsyslog or journald writes it: kern.log or the journal never holds one.
        (_syslog(_gpf(220, 1, 5, "kswapd0", "Not tainted")) + "Dec  7 06:31:41 web-03 systemd[1]: ok\n", "syslog"),
        # A console capture cut at the oops's end marker: a panic after it could not be in it.
        (_gpf(220, 1, 5, "kswapd0", "Not tainted"), "the log ends at the report's last line, 15"),
    ],
)
def test_report_does_not_say_no_panic_of_a_log_that_cannot_show_one(tmp_path: Path, text: str, why: str) -> None:
    log = tmp_path / "kern.log"
    log.write_text(text)
    said = plain_summary(analyse_logs([str(log)], live=False).incident.findings, "web-03")
    assert "no panic" not in said and "crashed" not in said
    assert "oopsed; whether it then went down is unknown (" in said and why in said


# ---------------------------------------------------------------- how an oops without a panic line ended

_FIXTURE_01 = Path(__file__).resolve().parents[3] / "vmcore_fixtures" / "cases" / "01-null-member" / "console.log"
_BANNER = (
    "[    0.000000] Linux version 5.15.0-91-generic (buildd@lcy02-amd64-045) (gcc (Ubuntu 11.4.0-1ubuntu1) 11.4.0) #1\n"
)


def _boot(command_line: str) -> str:
    return f"{_BANNER}[    0.000000] Command line: {command_line}\n"


def _after(finding: Finding) -> str:
    return next(str(f.value) for f in finding.facts if f.name in (AFTER_FACT, PANIC_UNSEEN_FACT))


def test_a_kdumped_oops_is_said_to_have_taken_the_machine_down() -> None:
    # The fixture's oops went to kdump: oops=panic on line 2, "Kdump: loaded" in its CPU: line 238, and the capture
    # kernel's boot (elfcorehdr=) at line 272; oops_end() went to crash_kexec(), which prints no panic line.  It was
    # said "the task that hit it is killed" and, by report, "oopsed, and the log shows no panic after it".
    result = analyse_logs([str(_FIXTURE_01)], live=False)
    (finding,) = _findings(result)
    after = _after(finding)
    assert after.startswith("went down: oops=panic (line 2), Kdump: loaded (line 238) and a capture kernel boots at ")
    assert "line 272 (elfcorehdr=, line 273)" in after
    assert finding.baseline is not None and finding.baseline.name == WENT_DOWN
    assert "killed" not in finding.baseline.value
    assert {2, 273} <= {e.locator.start for e in finding.evidence if e.locator.name == AFTER_FACT}
    assert_evidence_resolves(_findings(result))
    said = plain_summary(result.incident.findings, "web-03")
    assert said.startswith("The Linux kernel on web-03 crashed (went down: oops=panic (line 2)"), said
    assert "no panic" not in said


def test_oops_equals_panic_alone_says_the_machine_went_down(tmp_path: Path) -> None:
    (finding,) = _findings(_run(tmp_path, _boot("ro quiet oops=panic") + _OOPS))
    assert _after(finding).startswith("went down: oops=panic (line 2): oops_end() takes the machine down")


def test_kdump_loaded_alone_does_not_take_the_machine_down(tmp_path: Path) -> None:
    # A capture kernel loaded, no panic_on_oops: oops_end() kills the task and the kernel goes on, as the log does.
    oops = _OOPS.replace("Comm: kworker/3:2 Tainted:", "Comm: kworker/3:2 Kdump: loaded Tainted:")
    later = "[ 5124.000000] systemd[1]: Started Session 5 of User root.\n"
    result = _run(tmp_path, _boot("ro quiet panic_on_oops=0") + oops + later)
    (finding,) = _findings(result)
    assert _after(finding) == (
        "went on: its boot goes on to line 26 (systemd[1]: Started Session 5 of User root.), printed 0.995370 s "
        "after its last line by another task, PID 1, with no 'Kernel panic' line"
    )
    said = plain_summary(result.incident.findings, "web-03")
    assert "oopsed and went on: its boot goes on to line 26" in said and "crashed" not in said


def test_a_new_boot_right_after_the_oops_is_said_to_end_it(tmp_path: Path) -> None:
    (finding,) = _findings(_run(tmp_path, _boot("ro") + _OOPS + _boot("ro")))
    assert _after(finding).startswith("went down: the next boot starts at line 26, right after its last line")


def test_cr2_is_the_oops_closing_line_not_the_register_dumps() -> None:
    # 6.1's oops of a NULL member read: show_opcodes() faulted reading the code before RIP (line 240), which left
    # CR2 = ffffffffc018efef for the register dump (line 249); the fault's own CR2 closes the oops (line 271), which
    # the report's span left out.  The register dump's was said to be the fault's CR2.
    result = analyse_logs([str(_FIXTURE_01)], live=False)
    (report,) = result.sources[0].reports
    assert (report.start_line, report.end_line) == (233, 271)
    (finding,) = _findings(result)
    assert finding.fact("cr2") == "0x0000000000000030"
    assert {e.locator.start for e in finding.evidence if e.locator.name == "cr2"} == {271}
    nested = str(finding.fact("cr2 in the register dump"))
    assert nested.startswith("0xffffffffc018efef: not this oops's fault address but a later, nested fault's (line 240")
    assert nested.endswith("the oops's own is on line 271")
    assert_evidence_resolves(_findings(result))


def test_a_register_dump_cr2_nothing_explains_is_not_said_to_be_a_nested_faults(tmp_path: Path) -> None:
    # The same oops without its "Code: Unable to access opcode bytes at" line (as when another CPU's register dump
    # is interleaved without caller ids, corpus 364): the dump's other CR2 was said to be "a later, nested fault's"
    # with nothing in the report showing one.
    lines = _FIXTURE_01.read_text().splitlines(keepends=True)
    assert "Unable to access opcode bytes at" in lines[239]
    log = tmp_path / "no-opcodes.log"
    log.write_text("".join([*lines[:239], lines[239].split("Code:")[0] + "Code: 48 8b 47 30\n", *lines[240:]]))
    (finding,) = _findings(analyse_logs([str(log)], live=False))
    assert finding.fact("cr2") == "0x0000000000000030"
    said = str(finding.fact("cr2 in the register dump"))
    assert "nested fault's" not in said
    assert said.startswith("0xffffffffc018efef: not the 0x0000000000000030 of its closing line (line 271); which fault")


def _two_page_faults() -> tuple[list[str], list[str]]:
    """Two CPUs' page faults (CPU 3 at 0x8, CPU 1 at 0xa0), each with its register dump's CR2 line, as lines."""
    regs = "[ 5123.004589] CR2: 0000000000000008 CR3: 000000010a8c4005 CR4: 0000000000770ee0\n"
    own = _OOPS.replace("[ 5123.004590] Call Trace:\n", regs + "[ 5123.004590] Call Trace:\n").splitlines()
    other = (
        "\n".join(own)
        .replace("CPU: 3 PID: 1187 Comm: kworker/3:2", "CPU: 1 PID: 2000 Comm: syz-executor")
        .replace("0000000000000008", "00000000000000a0")
        .replace("mlx5e_rx_dim_work", "mlx5e_tx_dim_work")
        .replace("5123.00", "5123.01")
        .splitlines()
    )
    return own, other


def test_cr2_lines_of_two_interleaved_dumps_are_not_said_to_be_the_reports(tmp_path: Path) -> None:
    # Two CPUs' page faults printed at once without caller ids, the second's header lost: the scanner keeps one
    # report, whose lines print both CPU: lines and both CR2 lines.  Its closing "CR2: 00000000000000a0" is the other
    # CPU's, and was said to be its fault address (the register dump's 0x8 "which fault each belongs to is unknown").
    own, other = _two_page_faults()
    text = "".join(f"{x}\n" for x in own[:4]) + _interleaved(own[4:], other[4:])
    result = _run(tmp_path, text)
    (finding,) = _findings(result)
    said = str(finding.fact("cr2"))
    assert "not read (its lines print two dumps, interleaved: CPU: 3 PID: 1187; CPU: 1 PID: 2000)" in said, said
    assert said.endswith(
        "which report each of its CR2 lines belongs to is unknown: 0x0000000000000008 (line 23); 0x00000000000000a0 "
        "(line 24); 0x0000000000000008 (line 41); 0x00000000000000a0 (line 42)"
    ), said
    assert finding.fact("cr2 in the register dump") is None
    cited = {e.locator.start for e in finding.evidence if e.locator.name == "cr2"}
    assert cited == {23, 24, 41, 42}, cited
    assert_evidence_resolves(_findings(result))


def test_a_closing_cr2_of_two_interleaved_dumps_that_agrees_with_its_header_is_the_reports(tmp_path: Path) -> None:
    # Review ue20 #5 (corpus 324): the closing "CR2: 000000fe840fc4b9" agreed with the header's "paging request at
    # 000000fe840fc4b9", yet the CR2 was "not read (its lines print two dumps ...)", while cpu and pid were stated
    # from the same mixed lines.  Now the CR2 its header confirms is read (both lines cited), the other value is said
    # unknown, and the task read from the mixed CPU: lines is not stated.
    own, other = _two_page_faults()
    # The other dump's line first in each pair: the report's own closing CR2 line is its last one.
    text = "".join(f"{x}\n" for x in own[:4]) + _interleaved(other[4:], own[4:])
    result = _run(tmp_path, text)
    (finding,) = _findings(result)
    assert finding.fact("cr2") == "0x0000000000000008", finding.fact("cr2")
    # The closing line is cited as the CR2's; the header line (the fact's other line) is the finding's own first.
    assert {e.locator.start for e in finding.evidence if e.locator.name == "cr2"} == {42}
    assert 1 in {e.locator.start for e in finding.evidence}
    said = str(finding.fact("cr2 in the register dump"))
    assert said.startswith(
        "0x00000000000000a0: not the 0x0000000000000008 of its closing line (42), which the fault address of its "
        "header (line 1) confirms as its own; its lines print two dumps, interleaved (CPU: 1 PID: 2000; CPU: 3 PID: "
        "1187): which report this one belongs to is unknown"
    ), said
    for name in ("cpu", "pid", "comm"):
        value = finding.fact(name)
        assert str(value).startswith("not read (its lines print two dumps, interleaved"), (name, value)
    assert "may be the other dump's" in str(finding.fact("two dumps")), finding.fact("two dumps")
    assert_evidence_resolves(_findings(result))


def test_a_log_cut_inside_its_report_says_so_under_examined(tmp_path: Path) -> None:
    # The fixture's console cut 30 bytes into line 240 (inside the oops): what was examined said only "240 lines, 1
    # report(s)", and `report` beside the dump said "corroborated" with no word of the cut (ue17 #12).
    data = _FIXTURE_01.read_bytes()
    at = sum(len(line) + 1 for line in data.split(b"\n")[:239]) + 30
    log = tmp_path / "cutmid.log"
    log.write_bytes(data[:at])
    result = analyse_logs([str(log)], live=False)
    (examined,) = result.incident.examined
    said = [x for x in examined.could_not if "the log ends inside it" in x]
    assert said == [
        "the rest of the report at lines 233-240 (BUG: unable to handle kernel NULL pointer dereference in "
        "kf_null_member_read): the log ends inside it, at line 240 (no call trace in the report); the console or a "
        "dump's own log holds the rest"
    ]
    # The whole log ends past its report: nothing said.
    whole = analyse_logs([str(_FIXTURE_01)], live=False).incident.examined[0]
    assert not [x for x in whole.could_not if "ends inside" in x]


def test_a_panic_later_in_the_boot_is_another_reports(tmp_path: Path) -> None:
    # Another report's panic ends the boot later: the kernel went on until then; whether the oops led to it is not
    # shown.  A bare "Fatal exception" later may be the oops's own (oops_end()'s panic): unknown.
    # panic()'s dump_stack() names the task that panicked (khungtaskd): another task ran after the oops.
    who = [
        "CPU: 1 PID: 37 Comm: khungtaskd Tainted: G      D    OE      5.15.0-91-generic #101-Ubuntu",
        "Call Trace:",
        " <TASK>",
        " dump_stack_lvl+0x34/0x48",
        " panic+0x107/0x2a8",
        " watchdog+0x3a3/0x3e0",
        " kthread+0x127/0x150",
        " ret_from_fork+0x1f/0x30",
        " </TASK>",
    ]
    hung = [
        "e1000e: eth0 NIC Link is Up 1000 Mbps Full Duplex",
        "Kernel panic - not syncing: hung_task: blocked tasks",
        *who,
        "Kernel Offset: disabled",
        "---[ end Kernel panic - not syncing: hung_task: blocked tasks ]---",
    ]
    later = "".join(f"[ 5124.{i:06d}] {x}\n" for i, x in enumerate(hung))
    result = _run(tmp_path, _boot("ro") + _OOPS + later)
    oops = next(f for f in _findings(result) if f.title == _TITLE)
    assert _after(oops) == (
        "went on: a later report of its boot, kernel panic: hung_task: blocked tasks (line 27), was printed after it "
        "by another task, PID 37, and that one's panic took the machine down (whether this one led to it is not shown)"
    )
    # The same panic naming no task: whether another task ran is not shown, and the boot ends in a panic of its own.
    later = "".join(f"[ 5124.{i:06d}] {x}\n" for i, x in enumerate(x for x in hung if x not in who))
    result = _run(tmp_path, _boot("ro") + _OOPS + later)
    oops = next(f for f in _findings(result) if f.title == _TITLE)
    assert _after(oops).startswith("unknown (its boot ends in a panic at line 27 (kernel panic: hung_task: blocked")
    result = _run(tmp_path, _boot("ro") + _OOPS + later.replace("hung_task: blocked tasks", "Fatal exception"))
    oops = next(f for f in _findings(result) if f.title == _TITLE)
    assert _after(oops).startswith("unknown (its boot ends in a panic at line 27 (kernel panic: Fatal exception)")


@pytest.mark.parametrize(
    ("after", "why"),
    [
        # oops_end()'s register summary after the end marker, the log cut there (corpus 308 of the shared corpus).
        (_SUMMARY, "the lines after it in its boot (lines 26-37) show no later message"),
        # A blank last line (corpus 522).
        ("\n", "the lines after it in its boot (line 26) show no later message"),
        # panic()'s closing lines, of a panic whose start the log lost (corpus 392): the machine went down.
        (
            "[ 5124.100000] Kernel Offset: disabled\n[ 5124.200000] Rebooting in 86400 seconds..\n",
            "its boot ends in panic()'s closing lines (line 27: Rebooting in 86400 seconds..)",
        ),
    ],
    ids=["own-registers", "blank", "panic-tail"],
)
def test_lines_after_an_oops_that_are_not_the_kernel_going_on(tmp_path: Path, after: str, why: str) -> None:
    # Every line after the report in its boot was taken for the kernel going on: "went on" on 11 of 375 logs of the
    # shared corpus, 9 of them its own trailer, a blank, or panic()'s lines.
    (finding,) = (f for f in _findings(_run(tmp_path, _boot("ro") + _OOPS + after)) if f.title == _TITLE)
    assert _after(finding).startswith(f"unknown ({why}"), _after(finding)


def _tagged(text: str, tag: str) -> str:
    """``text`` with a printk caller id after each line's time, as CONFIG_PRINTK_CALLER prints it."""
    return "".join(line.replace("] ", f"][{tag}] ", 1) + "\n" for line in text.splitlines())


def test_a_fatal_exception_that_began_inside_an_oops_took_the_machine_down(tmp_path: Path) -> None:
    # Two CPUs oops at once (corpus 364): the first one's register summary and "Fatal exception" panic come inside
    # the second's lines, then panic()'s tail ends the boot.  The second was said to have gone on (its last lines
    # are panic()'s), the first too.
    first = _tagged(_OOPS, " T100")
    second = _OOPS.replace("mlx5e_rx_dim_work", "mlx5e_tx_dim_work").replace("5123.00", "5123.01").splitlines()
    summary = _SUMMARY.replace("5123.00", "5123.02").splitlines()
    panic = _panic("Fatal exception").replace("5123.00", "5123.02").splitlines()[0]
    middle = "\n".join([*summary[:3], panic])
    text = (
        _tagged("\n".join(second[:12]), " T200") + _tagged(middle, " T100") + _tagged("\n".join(second[12:]), " T200")
    )
    tail = "[ 5124.300000][ T100] Shutting down cpus with NMI\n[ 5124.300100][ T100] Rebooting in 86400 seconds..\n"
    result = _run(tmp_path, _boot("ro") + first + text + tail)
    first_said, second = sorted(_findings(result), key=lambda f: f.title)
    assert first_said.title == _TITLE and "Fatal exception" in str(first_said.fact("then panicked"))
    assert _after(second).startswith(
        "went down: a panic began inside its lines (26-52), line 41: Kernel panic - not syncing: Fatal exception: the "
        "machine went down while it was printed"
    ), _after(second)


def _fixture_lines(case: str) -> list[str]:
    return (_FIXTURE_01.parents[1] / case / "console.log").read_text().splitlines(keepends=True)


def _shifted(lines: list[str], by: float) -> list[str]:
    """The lines with ``by`` seconds added to their printk times (a crash later in the same boot)."""
    out = []
    for line in lines:
        stamp, _, rest = line.partition("] ")
        out.append(f"[{float(stamp.strip('[ ')) + by:12.6f}] {rest}" if rest and stamp.startswith("[") else line)
    return out


#: oops_exit()'s end marker, which oops_end() prints when crash_kexec() did not take the machine down.
_END = "[    2.216200] ---[ end trace 0000000000000000 ]---\n"


def _ordinary(first: int, last: int, step: int) -> list[str]:
    return [f"[{t:5d}.000000] systemd[1]: Started session {t}.\n" for t in range(first, last + 1, step)]


def test_a_later_crash_not_the_survived_oops_took_the_machine_to_kdump(tmp_path: Path) -> None:
    # 02-bug-on's BUG without oops=panic (its end marker: the kernel went on), 50 s of the boot going on, then
    # 07-sysrq-c's crash to kdump.  The capture kernel and "Kdump: loaded" were taken for the BUG going down.
    bug = _fixture_lines("02-bug-on")
    sysrq = _fixture_lines("07-sysrq-c")
    at = next(i for i, line in enumerate(sysrq) if "sysrq: Trigger a crash" in line)
    capture = next(i for i, line in enumerate(sysrq) if i > at and "Linux version" in line)
    crashed = [line.replace(" oops=panic", "") for line in bug[1:270]] + [_END]  # its first boot, then oops_exit()
    log = tmp_path / "kdumped.log"
    log.write_text("".join([bug[0], *crashed, *_ordinary(10, 55, 5), *_shifted(sysrq[at:capture], 60.0)]))
    whole = tmp_path / "whole.log"
    whole.write_text(log.read_text() + "".join(sysrq[capture:]))
    for result in (analyse_logs([str(whole)], live=False), analyse_logs([str(log)], live=False, dumped=True)):
        oops = next(f for f in _findings(result) if f.title == "kernel BUG in kf_buffer_put")
        assert _after(oops).startswith(
            "went on: a later report of its boot, kernel panic: sysrq triggered crash (line 283), was printed after it"
        ), _after(oops)
        assert oops.baseline is None or oops.baseline.name != WENT_DOWN
        said = plain_summary(result.incident.findings, "web-03")
        assert "went down" not in said, said
        # What took the machine down comes first: the sysrq crash, not the BUG (it said "had a problem").
        assert said.startswith(
            "The Linux kernel on web-03 was crashed on request with sysrq (kernel panic: sysrq triggered crash): "
        ), said
        assert "The finding: kernel BUG in kf_buffer_put (critical)." in said, said


def test_oops_equals_panic_is_outweighed_by_the_log_going_on(tmp_path: Path) -> None:
    # 02-bug-on's BUG with oops=panic, its end marker, then the boot goes on for 380 s (panic_on_oops cleared at run
    # time, by sysctl): it was said "went down: oops=panic (line 2) and Kdump: loaded".
    bug = _fixture_lines("02-bug-on")
    log = tmp_path / "went-on.log"
    log.write_text("".join([*bug[:270], _END, *_ordinary(20, 380, 20)]))  # its first boot, lines 1-270, goes on
    (oops,) = _findings(analyse_logs([str(log)], live=False))
    assert _after(oops).startswith("went on: its boot goes on to line 290 (systemd[1]: Started session 380.)")


def test_a_damaged_report_is_not_said_to_have_gone_on_by_the_report_that_cut_it(tmp_path: Path) -> None:
    # Corpus 154: a paging-request BUG's first line, cut by a KASAN report printed at once (another CPU): the report
    # that cut it, at a later printk time, was taken for the kernel going on after it (4 corpus logs).
    cut = "[ 5122.900000] BUG: unable to handle kernel paging request at ffffffff0001eea6\n"
    later = "[ 5124.000000] e1000e: eth0 NIC Link is Up 1000 Mbps Full Duplex\n"
    result = _run(tmp_path, _boot("ro") + cut + _OOPS.replace("mlx5e_rx_dim_work", "mlx5e_tx_dim_work") + later)
    damaged = [r for r in result.sources[0].reports if r.corrupted]
    assert damaged and damaged[0].start_line == 3, [(r.start_line, r.title) for r in result.sources[0].reports]
    found = next(f for f in _findings(result) if any(e.locator.start == 3 for e in f.evidence))
    assert _after(found).startswith("unknown (the report is damaged"), _after(found)


def _interleaved(first: list[str], second: list[str]) -> str:
    """Two tasks' lines printed at once, one of each in turn (a serial console with caller ids), then the rest."""
    mixed = [line for pair in zip(first, second, strict=False) for line in pair]
    rest = first[len(second) :] if len(first) > len(second) else second[len(first) :]
    return "".join(f"{line}\n" for line in [*mixed, *rest])


def test_an_oops_whose_own_task_printed_the_panic_after_other_tasks_lines_went_down(tmp_path: Path) -> None:
    # Corpus 364's shape: T100's oops ends, T200's oops begins at once, and T100's register summary and "Fatal
    # exception" panic come interleaved with it, the panic more lines after T100's end marker than the extractor looks
    # through for it.  T100's oops was "unknown (its boot ends in a panic at line N ...: whether this one led to it
    # is not shown)"; its own task printed that panic (caller id T100).
    first = _tagged(_OOPS, " T100")
    second = _tagged(_OOPS.replace("mlx5e_rx_dim_work", "mlx5e_tx_dim_work").replace("5123.00", "5123.01"), " T200")
    own = _tagged((_SUMMARY + _panic("Fatal exception")).replace("5123.00", "5123.02"), " T100").splitlines()
    tail = "[ 5124.300000][ T100] Rebooting in 86400 seconds..\n"
    text = _boot("ro") + first + _interleaved(own[:12], second.splitlines()) + "".join(f"{x}\n" for x in own[12:])
    result = _run(tmp_path, text + tail)
    panic_line = next(i for i, x in enumerate((text + tail).splitlines(), 1) if "Kernel panic - not syncing" in x)
    assert panic_line > 25 + 24  # past the extractor's look for the panic after T100's end marker (line 25)
    oops = next(f for f in _findings(result) if f.title == _TITLE)
    assert _after(oops) == (
        f"went down: its own task (T100) printed oops_end()'s panic for it at line {panic_line} (Kernel panic - not "
        "syncing: Fatal exception), matched by printk caller id past other tasks' lines"
    )
    assert panic_line in {e.locator.start for e in oops.evidence if e.locator.name == AFTER_FACT}
    assert_evidence_resolves(_findings(result))
    # Without caller ids, which oops the panic is of is not shown: unknown, as before.
    untagged = _run(tmp_path, re.sub(r"\]\[ T\d+\]", "]", text + tail))
    oops = next(f for f in _findings(untagged) if f.title == _TITLE)
    assert not _after(oops).startswith("went down: its own task"), _after(oops)


#: A WARNING the crashed task raised on its way out (do_exit() after the oops), as its own lines.
_EXIT_WARNING = """\
[ 5124.000000] WARNING: CPU: 3 PID: 1187 at kernel/exit.c:812 do_exit+0x8e/0xb20
[ 5124.000010] CPU: 3 PID: 1187 Comm: kworker/3:2 Tainted: G      D    OE      5.15.0-91-generic #101-Ubuntu
[ 5124.000020] RIP: 0010:do_exit+0x8e/0xb20
[ 5124.000030] Call Trace:
[ 5124.000031]  <TASK>
[ 5124.000032]  make_task_dead+0x8a/0x90
[ 5124.000033]  rewind_stack_and_make_dead+0x17/0x20
[ 5124.000034]  </TASK>
[ 5124.000040] ---[ end trace 2a6b0e3f1c9d7e12 ]---
"""


@pytest.mark.parametrize(
    ("tag", "after", "why"),
    [
        # An interrupt's message (caller id C3): a machine wedged after the oops still takes interrupts.
        (
            " T100",
            "[ 5124.000000][   C3] hrtimer: interrupt took 2143 ns\n",
            "its boot's last line, 26 (hrtimer: interrupt took 2143 ns), printed later, is no evidence (caller id C3: "
            "printed outside a task",
        ),
        # The crashed task's own lines after its oops (its exit): caller id T100, its own.
        (
            " T100",
            _tagged(_EXIT_WARNING, " T100"),
            "a later report of its boot, WARNING in do_exit (line 26), is no evidence (caller id T100: its own task",
        ),
        # The same without caller ids: its header's PID is the crashed task's.
        ("", _EXIT_WARNING, "a later report of its boot, WARNING in do_exit (line 26), is no evidence (PID 1187: its"),
        # A kernel line of a log without caller ids within a second of it: who printed it is not shown (its own
        # task's end, or another CPU's before panic() stopped it).
        (
            "",
            "[ 5124.000000] e1000e: eth0 NIC Link is Up 1000 Mbps Full Duplex\n",
            "the log has no printk caller ids and the line names no task: its own task's end, an interrupt's "
            "message or another task's cannot be told apart in its exit lines or within 1 s of its last line",
        ),
    ],
    ids=["interrupt", "own-task", "own-pid", "untagged"],
)
def test_a_later_line_not_shown_to_be_another_tasks_is_no_evidence_of_going_on(
    tmp_path: Path, tag: str, after: str, why: str
) -> None:
    # Any later line of the boot at a later printk time was "went on": an interrupt's message, the crashed task's
    # own exit, a line no caller id or task name says the printer of.
    oops = _tagged(_OOPS, tag) if tag else _OOPS
    (finding,) = (f for f in _findings(_run(tmp_path, _boot("ro") + oops + after)) if f.title == _TITLE)
    said = _after(finding)
    assert said.startswith("unknown (no line after it in its boot (") and why in said, said


def test_a_later_line_of_another_task_is_cited_as_the_kernel_going_on(tmp_path: Path) -> None:
    text = _boot("ro") + _tagged(_OOPS, " T100") + "[ 5124.000000][ T300] e1000e: eth0 NIC Link is Up 1000 Mbps\n"
    (finding,) = _findings(_run(tmp_path, text))
    assert _after(finding) == (
        "went on: its boot goes on to line 26 (e1000e: eth0 NIC Link is Up 1000 Mbps), printed 0.995370 s after its "
        "last line by another task, caller id T300, with no 'Kernel panic' line"
    )
    assert 26 in {e.locator.start for e in finding.evidence if e.locator.name == AFTER_FACT}


def test_a_kernel_line_printed_long_after_an_oops_without_caller_ids_shows_the_kernel_printed_on(
    tmp_path: Path,
) -> None:
    # Review ue20 #3: without printk caller ids (the distributions' kernels), an oops followed by a NIC, an ext4 and a
    # USB line 1-2 h later was "unknown (... the log has no printk caller ids and the line names no task ...)": a
    # kernel that went down prints nothing more in its boot.  Past the grace the kernel printed on; which task
    # printed it is not known, and said so.
    later = (
        "[ 8723.000000] e1000e 0000:00:19.0 eth0: NIC Link is Down\n"
        "[ 8728.000000] EXT4-fs (sda1): re-mounted. Opts: (null)\n"
        "[12123.004630] usb 1-1: new high-speed USB device number 3 using xhci_hcd\n"
    )
    (finding,) = _findings(_run(tmp_path, _boot("ro") + _OOPS + later))
    assert _after(finding) == (
        "went on: the kernel printed on: line 28, 7000.000000 s after its last line (usb 1-1: new high-speed USB "
        "device number 3 using xhci_hcd); which task printed it is not known (no printk caller ids)"
    )
    assert 28 in {e.locator.start for e in finding.evidence if e.locator.name == AFTER_FACT}
    # A later event naming no task is evidence too (its own finding: named, not cited), before the boot's last line.
    event = "[ 5130.000000] sched: RT throttling activated\n"
    found = next(f for f in _findings(_run(tmp_path, _boot("ro") + _OOPS + event + later)) if f.title == _TITLE)
    assert _after(found).startswith("went on: the kernel printed on: line 26, 6.995370 s after its last line ("), (
        _after(found)
    )
    # The crashed task's own end (make_task_dead()'s "Fixing recursive fault"), however late: still unknown.
    own = "[ 5130.000000] Fixing recursive fault but reboot is needed!\n"
    (finding,) = _findings(_run(tmp_path, _boot("ro") + _OOPS + own))
    assert _after(finding).startswith("unknown (no line after it in its boot (line 26) shows another task"), _after(
        finding
    )


def test_the_oopses_read_once_per_text_are_those_each_reports_lines_show() -> None:
    """``oopses_of`` reads the die counter of the report each one's text is (``repeat.origin``), once for all the
    reports of that text: the same oopses, in the same order, as each report's own die line, on every bundled and
    corpus log copied three times (later copies' reports are repeats; some with their lines made, some not)."""
    from detectors.dmesg.scanner import scan_text
    from detectors.dmesg.taint import die_line, oopses_of

    root = Path(__file__).parent
    logs = sorted([*root.glob("golden/*.log"), *root.glob("corpora/*/*.log")])
    oopses = made = 0
    for log in logs:
        text = log.read_text(errors="replace")
        reports = scan_text(text + text.replace("] ", "]  ", 3) + text)
        for r in reports[1::2]:
            made += len(r.lines) > 0  # (its lines made: a repeat that made them reads its own)
        got = oopses_of(reports)
        assert got == [r for r in reports if not r.is_event and die_line(r) is not None], log.name
        oopses += len(got)
    assert oopses >= 30 and made >= 30
