"""A cause cites every line it rests on, and a report without one says why (user-eyes review ue12, finding 8).

A reviewer found the NULL dereference's cause citing its header alone, while its statement names the decoded
``Code:`` instruction and the values of RAX and RDI (lines of their own); and a page fault with no ``Code:`` line
read with ``why.cause: null`` and no line in the text, no reason given, its generic hypothesis ranked above a
WARNING whose body states its cause.  The logs are written as an x86-64 kernel prints them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forensics.pipelines.dmesg import analyse_logs
from tests.detectors.dmesg.why_logs import offset, only_report_why
from tests.helpers import cli_run

NULL_OOPS = """\
[ 5123.004511] BUG: kernel NULL pointer dereference, address: 0000000000000008
[ 5123.004520] #PF: supervisor read access in kernel mode
[ 5123.004525] #PF: error_code(0x0000) - not-present page
[ 5123.004530] PGD 0 P4D 0
[ 5123.004545] Oops: 0000 [#1] PREEMPT SMP NOPTI
[ 5123.004550] CPU: 3 PID: 4412 Comm: kworker/3:2 Not tainted 6.6.30 #1
[ 5123.004560] Workqueue: events kf_rx_work [kf_mod]
[ 5123.004565] RIP: 0010:kf_rx_work+0x1c/0x60 [kf_mod]
[ 5123.004570] Code: 0f 1f 44 00 00 55 48 89 e5 41 54 53 48 89 fb 48 8b 47 f8 <48> 8b 40 08 0f b6 57 f0 48 8b 80
[ 5123.004575] RSP: 0018:ffffa8c1c1e4be68 EFLAGS: 00010246
[ 5123.004580] RAX: 0000000000000000 RBX: ffff8e2c4a1c0c40 RCX: 0000000000000000
[ 5123.004585] RDX: 0000000000000001 RSI: ffff8e2c4a1c0c40 RDI: ffff8e2c4a1c0c40
[ 5123.004590] Call Trace:
[ 5123.004595]  <TASK>
[ 5123.004600]  process_one_work+0x1e2/0x3e0
[ 5123.004605]  worker_thread+0x50/0x3a0
[ 5123.004610]  </TASK>
"""

NO_CODE_FAULT = """\
[  900.000000] BUG: unable to handle page fault for address: ffffc90000a3f000
[  900.000001] #PF: supervisor write access in kernel mode
[  900.000002] #PF: error_code(0x0002) - not-present page
[  900.000003] Oops: 0002 [#1] PREEMPT SMP NOPTI
[  900.000004] CPU: 0 PID: 77 Comm: kworker/0:1 Not tainted 6.1.0 #1
[  900.000005] RIP: 0010:memcpy_orig+0x31/0x140
[  900.000006] Call Trace:
[  900.000007]  <TASK>
[  900.000008]  kf_dma_map_pages+0x11c/0x2a0 [kf_mod]
[  900.000009]  process_one_work+0x1e2/0x3e0
[  900.000010]  </TASK>
[  900.000011] CR2: ffffc90000a3f000
"""


def test_the_null_dereferences_cause_cites_the_code_and_register_lines(tmp_path: Path) -> None:
    _, why = only_report_why(tmp_path, NULL_OOPS)
    assert why.cause is not None and why.cause.cls == "null_pointer"
    assert "rax = 0x0 in `mov rax, qword ptr [rax + 8]`, loaded from [rdi - 8] (rdi = 0xffff8e2c4a1c0c40)" in (
        why.cause.statement
    )
    header = "NULL pointer"
    assert why.cause_at == tuple(offset(NULL_OOPS, header, w) for w in ("NULL pointer", "Code:", "RAX:", "RDI:"))


def test_a_fault_without_code_says_why_it_has_no_cause(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _, why = only_report_why(tmp_path, NO_CODE_FAULT)
    assert why.cause is None
    assert why.no_cause.startswith("no Code: line in the log to decode the faulting access; a dump is needed")
    path = tmp_path / "console.log"
    ran = cli_run(monkeypatch, capsys, "dmesg", "--format", "json", path)
    (report,) = json.loads(ran.stdout)["sources"][0]["reports"]
    assert report["why"]["cause"] == {"not_available": why.no_cause}
    text = cli_run(monkeypatch, capsys, "dmesg", path).stdout
    assert f"  cause: unknown ({why.no_cause})" in text.splitlines()


WARNING_PANIC = """\
[  950.000000] WARNING: CPU: 2 PID: 901 at drivers/kf/kf_pm.c:635 kf_pm_release+0x4f/0x60
[  950.000001] CPU: 2 PID: 901 Comm: Xorg Not tainted 6.1.0 #1
[  950.000002] RIP: 0010:kf_pm_release+0x4f/0x60
[  950.000003] Call Trace:
[  950.000004]  <TASK>
[  950.000005]  kf_driver_release+0x6b/0x80
[  950.000006]  </TASK>
[  950.000007] Kernel panic - not syncing: kernel: panic_on_warn set ...
"""


def test_a_report_without_a_cause_is_not_ranked_above_a_stated_cause_of_its_severity(tmp_path: Path) -> None:
    # Both critical: the fault without a Code: line (no cause) and a WARNING the kernel panicked on (its WARN's site
    # is its cause, at 0.5).  The fault's generic hypothesis was 0.63 (its title's confidence x 0.7), ranked first.
    path = tmp_path / "console.log"
    path.write_text(NO_CODE_FAULT + WARNING_PANIC)
    result = analyse_logs([str(path)], live=False)
    findings = result.incident.findings
    stated = [f for f in findings if f.log_cause is not None and f.log_cause.statement]
    bare = [f for f in findings if f.title.startswith("BUG: unable to handle")]
    assert stated and bare and {f.severity for f in stated} == {f.severity for f in bare}
    ranked = result.hypotheses
    first_bare = next(h for h in ranked if h.statement.startswith("a kernel bug reported as"))
    first_stated = next(h for h in ranked if h.finding_ids[0] in {f.id for f in stated})
    assert first_stated.rank < first_bare.rank and first_bare.confidence < first_stated.confidence
