"""Smaller points of the user-eyes review ue12 (finding 12): a guilty frame in a proprietary module, "Not tainted",
and the line a panic's severity is judged by.  Logs written as an x86-64 kernel prints them."""

from __future__ import annotations

from pathlib import Path

import pytest

from forensics.model import Finding
from forensics.pipelines.dmesg import analyse_logs

OOPS = """\
[  900.000000] BUG: unable to handle page fault for address: ffffc90000a3f000
[  900.000001] #PF: supervisor write access in kernel mode
[  900.000002] #PF: error_code(0x0002) - not-present page
[  900.000003] Oops: 0002 [#1] PREEMPT SMP NOPTI
{modules}[  900.000004] CPU: 0 PID: 77 Comm: kworker/0:1 {taint} 6.1.0 #1
[  900.000005] RIP: 0010:memcpy_orig+0x31/0x140
[  900.000006] Call Trace:
[  900.000007]  <TASK>
[  900.000008]  kf_dma_map_pages+0x11c/0x2a0 [{module}]
[  900.000009]  process_one_work+0x1e2/0x3e0
[  900.000010]  </TASK>
[  900.000011] CR2: ffffc90000a3f000
"""


def _finding(tmp_path: Path, text: str) -> Finding:
    path = tmp_path / "console.log"
    path.write_text(text)
    (finding,) = analyse_logs([str(path)], live=False).incident.findings
    return finding


def test_a_fault_in_a_proprietary_module_is_for_its_vendor(tmp_path: Path) -> None:
    modules = "[  900.000003] Modules linked in: kf_gpu(POE) ext4\n"
    text = OOPS.format(modules=modules, taint="Tainted: P           OE", module="kf_gpu")
    finding = _finding(tmp_path, text)
    assert (
        finding.fact("guilty module") == "kf_gpu: proprietary and out-of-tree (kf_gpu(POE), Modules linked in line 5)"
    )
    assert finding.next_steps[0].startswith("Report it to the vendor of kf_gpu: the guilty frame is in kf_gpu")
    assert "syzbot" not in finding.next_steps[0].split(";")[0]


def test_an_in_tree_modules_fault_keeps_the_upstream_step(tmp_path: Path) -> None:
    modules = "[  900.000003] Modules linked in: kf_gpu(POE) ext4\n"
    finding = _finding(tmp_path, OOPS.format(modules=modules, taint="Tainted: P           OE", module="ext4"))
    assert finding.fact("guilty module") is None
    assert finding.next_steps[0].startswith("Search the title on the kernel mailing lists and syzbot")


def test_without_a_modules_line_the_taint_makes_it_a_possibility(tmp_path: Path) -> None:
    finding = _finding(tmp_path, OOPS.format(modules="", taint="Tainted: P           OE", module="kf_gpu"))
    assert str(finding.fact("guilty module")).startswith("kf_gpu: perhaps the proprietary and out-of-tree module")
    assert "whether kf_gpu is that module" in finding.next_steps[0]


def test_not_tainted_is_said(tmp_path: Path) -> None:
    finding = _finding(tmp_path, OOPS.format(modules="", taint="Not tainted", module="kf_gpu"))
    assert finding.fact("taint") == 'none ("Not tainted")'
    assert finding.fact("guilty module") is None


@pytest.mark.parametrize("panic_line", [13])
def test_a_panics_severity_cites_its_panic_line(tmp_path: Path, panic_line: int) -> None:
    text = OOPS.format(modules="", taint="Not tainted", module="kf_gpu")
    text += "[  900.000012] Kernel panic - not syncing: Fatal exception\n"
    path = tmp_path / "console.log"
    path.write_text(text)
    findings = analyse_logs([str(path)], live=False).incident.findings
    panicked = [f for f in findings if f.baseline is not None and f.baseline.name == "the kernel panicked on it"]
    assert panicked
    assert all(f.baseline is not None and f.baseline.source.endswith(f"line {panic_line}") for f in panicked)
