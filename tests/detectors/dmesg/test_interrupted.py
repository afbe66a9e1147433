"""A report raised while another was printed (detectors/dmesg/interrupted.py): a consequence of the report it cut.

The logs are written here, in the kernel's formats, around the fixture kernel's functions: a KASAN report of
``kf_ring_push`` whose "Allocated by task" stack is cut by a page fault in the stack depot, as the unwinder or the
depot faults on the memory the bug corrupted.
"""

from __future__ import annotations

from pathlib import Path

from detectors.dmesg.interrupted import END_MARKERS
from forensics.model import Finding, Severity
from forensics.pipelines.dmesg import analyse_logs
from forensics.types.dmesg import ReportKind
from forensics.types.dmesg_result import DmesgResult
from tests.helpers import assert_evidence_resolves

_KASAN = """\
[  311.402113] ==================================================================
[  311.402140] BUG: KASAN: slab-out-of-bounds in kf_ring_push+0x5c/0x120 [kf_buggy]
[  311.402151] Write of size 64 at addr ffff888012345f80 by task kf_writer/212
[  311.402153] \n\
[  311.402160] CPU: 0 PID: 212 Comm: kf_writer Tainted: G           O       6.1.192 #1
[  311.402166] Hardware name: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 1.16.2-debian-1.16.2-1 04/01/2014
[  311.402170] Call Trace:
[  311.402172]  <TASK>
[  311.402180]  dump_stack_lvl+0x44/0x5c
[  311.402190]  print_report+0x17f/0x47b
[  311.402199]  kasan_report+0xad/0x130
[  311.402208]  kf_ring_push+0x5c/0x120 [kf_buggy]
[  311.402217]  kf_write+0x91/0x140 [kf_buggy]
[  311.402226]  vfs_write+0xc5/0x3a0
[  311.402234]  ksys_write+0x5f/0xe0
[  311.402242]  do_syscall_64+0x3b/0x90
[  311.402250]  entry_SYSCALL_64_after_hwframe+0x64/0xce
[  311.402255]  </TASK>
[  311.402257] \n\
[  311.402260] Allocated by task 212:
"""
_CLOSED = "[  311.402262] ==================================================================\n"
_FAULT = """\
[  311.402301] BUG: unable to handle page fault for address: ffffed1002468bf0
[  311.402306] #PF: supervisor read access in kernel mode
[  311.402309] #PF: error_code(0x0000) - not-present page
[  311.402312] PGD 7ffd0067 P4D 7ffd0067 PUD 7ffcc067 PMD 0 \n\
[  311.402318] Oops: 0000 [#1] PREEMPT SMP KASAN NOPTI
[  311.402323] CPU: 0 PID: 212 Comm: kf_writer Tainted: G    B      O       6.1.192 #1
[  311.402328] Hardware name: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 1.16.2-debian-1.16.2-1 04/01/2014
[  311.402333] RIP: 0010:stack_depot_fetch+0x1d/0x60
[  311.402350] RSP: 0018:ffffc90000327a98 EFLAGS: 00010246
[  311.402360] Call Trace:
[  311.402362]  <TASK>
[  311.402370]  kasan_save_stack+0x22/0x50
[  311.402378]  print_report+0x2e1/0x47b
[  311.402386]  kasan_report+0xad/0x130
[  311.402394]  kf_ring_push+0x5c/0x120 [kf_buggy]
[  311.402402]  kf_write+0x91/0x140 [kf_buggy]
[  311.402410]  vfs_write+0xc5/0x3a0
[  311.402412]  </TASK>
[  311.402420] ---[ end trace 0000000000000000 ]---
"""
_WARNING = """\
[  311.400100] ------------[ cut here ]------------
[  311.400110] WARNING: CPU: 0 PID: 212 at drivers/kf/kf_buggy.c:310 kf_ring_push+0x77/0x120 [kf_buggy]
[  311.400120] Modules linked in: kf_buggy(O)
[  311.400130] CPU: 0 PID: 212 Comm: kf_writer Tainted: G           O       6.1.192 #1
[  311.400140] RIP: 0010:kf_ring_push+0x77/0x120 [kf_buggy]
[  311.400150] Call Trace:
[  311.400152]  <TASK>
[  311.400160]  kf_write+0x91/0x140 [kf_buggy]
[  311.400170]  vfs_write+0xc5/0x3a0
[  311.400180]  </TASK>
"""
_WARNING_END = "[  311.400190] ---[ end trace 0000000000000000 ]---\n"
_KASAN_TITLE = "KASAN: slab-out-of-bounds Write in kf_ring_push"
_FAULT_TITLE = "BUG: unable to handle kernel paging request in stack_depot_fetch"


def _run(tmp_path: Path, text: str) -> DmesgResult:
    log = tmp_path / "kern.log"
    log.write_text(text)
    return analyse_logs([str(log)], live=False)


def _by_title(result: DmesgResult) -> dict[str, Finding]:
    return {f.title: f for f in result.incident.findings}


def test_a_fault_raised_inside_a_kasan_report_is_its_consequence(tmp_path: Path) -> None:
    result = _run(tmp_path, _KASAN + _FAULT)
    found = _by_title(result)
    kasan, fault = found[_KASAN_TITLE], found[_FAULT_TITLE]
    assert fault.consequence_of is not None and fault.consequence_of.root == kasan.id
    assert "line 21 starts before its end marker" in fault.consequence_of.how
    assert kasan.consequence_of is None
    # One severity below its root, which leads: the report syzbot titles the log by.
    assert (kasan.severity, fault.severity) == (Severity.HIGH, Severity.MEDIUM)
    lead = max(result.incident.findings, key=lambda f: (f.severity.rank, f.confidence))
    assert lead.id == kasan.id
    # The lines that show it: the cut report's header and its last line, right after the fault's own header.
    cited = {(e.locator.name, e.locator.start) for e in fault.evidence}
    assert {("interrupted report", 2), ("interrupted at", 20)} <= cited
    assert_evidence_resolves(list(result.incident.findings))
    # The fault's generic "a kernel bug" hypothesis (high and above only) is gone with it.
    assert all(kasan.id in h.finding_ids for h in result.hypotheses)


def test_a_report_printed_to_its_end_marker_is_not_interrupted(tmp_path: Path) -> None:
    found = _by_title(_run(tmp_path, _KASAN + _CLOSED + _FAULT))
    assert found[_FAULT_TITLE].consequence_of is None
    assert found[_FAULT_TITLE].severity is Severity.CRITICAL


def test_a_warning_is_cut_unless_its_end_trace_line_came_first(tmp_path: Path) -> None:
    found = _by_title(_run(tmp_path, _WARNING + _FAULT))
    warning, fault = found["WARNING in kf_ring_push"], found[_FAULT_TITLE]
    assert fault.consequence_of is not None and fault.consequence_of.root == warning.id
    assert "---[ end trace" in fault.consequence_of.how
    assert fault.severity < warning.severity
    # Printed to its end marker, then the fault on the next line: two reports, each its own.
    found = _by_title(_run(tmp_path, _WARNING + _WARNING_END + _FAULT))
    assert found[_FAULT_TITLE].consequence_of is None


def test_another_cpus_report_or_dropped_lines_are_no_interruption(tmp_path: Path) -> None:
    other_cpu = _FAULT.replace("CPU: 0 PID: 212", "CPU: 1 PID: 212")
    assert _by_title(_run(tmp_path, _KASAN + other_cpu))[_FAULT_TITLE].consequence_of is None
    # printk dropped lines before the fault: the end marker may have been among them.
    dropped = "** 12 printk messages dropped ** " + _FAULT
    assert _by_title(_run(tmp_path, _KASAN + dropped))[_FAULT_TITLE].consequence_of is None


def test_no_report_kind_has_two_end_markers() -> None:
    kinds = [k for m in END_MARKERS for k in m.kinds]
    assert len(kinds) == len(set(kinds))
    # Kinds that print no end marker of their own are never read as cut.
    assert not {ReportKind.HANG, ReportKind.LOCKDEP, ReportKind.RCU_STALL, ReportKind.SOFT_LOCKUP} & set(kinds)


def test_every_end_marker_line_holds_one_of_its_words() -> None:
    """A line whose body a marker's pattern finds holds one of the marker's words as read (what interruption() looks
    for in a report's lines before it parses any): each line of the golden logs and the markers as kernels print
    them, with and without their prefixes."""
    from detectors.dmesg.lines import parse_line

    golden = Path(__file__).parent / "golden"
    texts = [t for log in sorted(golden.glob("*.log")) for t in log.read_text(errors="replace").splitlines()]
    printed = ["=" * 66, "=" * 40 + "  ", "---[ end trace 0000000000000000 ]---", "---[ end trace ]---"]
    texts += [*printed, *(f"[  311.402300] {t}" for t in printed), *(f"[  311.402300][ T212] {t}" for t in printed)]
    found = 0
    for marker in END_MARKERS:
        for number, text in enumerate(texts, 1):
            if marker.pattern.search(parse_line(number, text).body) is not None:
                found += 1
                assert any(word in text for word in marker.words), (marker.text, text)
    assert found >= 3 * len(printed)  # the test saw markers to check
