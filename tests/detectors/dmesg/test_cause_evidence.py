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


#: Corpus 364's shape, with printk caller ids: the panicking task's fault (no Code: line: no cause), another task's
#: fault, and the panic of the first task printed in the middle of the second's lines.
TWO_FAULTS_ONE_PANIC = """\
[  900.000000][   T77] BUG: unable to handle page fault for address: ffffc90000a3f000
[  900.000001][   T77] #PF: supervisor write access in kernel mode
[  900.000002][   T77] #PF: error_code(0x0002) - not-present page
[  900.000003][   T77] Oops: 0002 [#1] PREEMPT SMP NOPTI
[  900.000004][   T77] CPU: 0 PID: 77 Comm: kworker/0:1 Not tainted 6.1.0 #1
[  900.000005][   T77] RIP: 0010:memcpy_orig+0x31/0x140
[  900.000006][   T77] Call Trace:
[  900.000007][   T77]  <TASK>
[  900.000008][   T77]  kf_dma_map_pages+0x11c/0x2a0 [kf_mod]
[  900.000009][   T77]  process_one_work+0x1e2/0x3e0
[  900.000010][   T77]  </TASK>
[  900.000011][   T77] CR2: ffffc90000a3f000
[  900.000012][   T77] ---[ end trace 0000000000000000 ]---
[  900.000100][ T4242] BUG: unable to handle page fault for address: ffffc90000b40000
[  900.000101][ T4242] #PF: supervisor read access in kernel mode
[  900.000102][ T4242] #PF: error_code(0x0000) - not-present page
[  900.000103][ T4242] Oops: 0000 [#2] PREEMPT SMP NOPTI
[  900.000104][ T4242] CPU: 1 PID: 4242 Comm: kf-reader Tainted: G      D           6.1.0 #1
[  900.000105][ T4242] RIP: 0010:strncpy_from_user+0x5e/0x140
[  900.000106][ T4242] RSP: 0018:ffffa8c1c2a3bd10 EFLAGS: 00010246
[  900.000107][ T4242] RAX: 0000000000000000 RBX: ffff8e2c4a1c0c40 RCX: 0000000000000000
[  900.000108][ T4242] RDX: 0000000000000001 RSI: ffff8e2c4a1c0c40 RDI: ffff8e2c4a1c0c40
[  900.000109][ T4242] RBP: ffffa8c1c2a3bd48 R08: 0000000000000000 R09: 0000000000000000
[  900.000110][ T4242] R10: 0000000000000000 R11: 0000000000000000 R12: ffff8e2c4a1c0c40
[  900.000111][ T4242] R13: 0000000000000000 R14: 0000000000000000 R15: 0000000000000000
[  900.000112][ T4242] FS:  00007f1c2a3b4740(0000) GS:ffff8e2d6fc40000(0000) knlGS:0000000000000000
[  900.000113][ T4242] CS:  0010 DS: 0000 ES: 0000 CR0: 0000000080050033
[  900.000114][ T4242] CR2: ffffc90000b40000 CR3: 000000010a2b4000 CR4: 00000000003706e0
[  900.000115][ T4242] Call Trace:
[  900.000116][ T4242]  <TASK>
[  900.000117][ T4242]  getname_flags+0x91/0x1e0
[  900.000118][ T4242]  do_sys_openat2+0x9c/0x170
[  900.000119][ T4242]  __x64_sys_openat+0x54/0xa0
[  900.000120][ T4242]  do_syscall_64+0x3b/0x90
[  900.000121][ T4242]  entry_SYSCALL_64_after_hwframe+0x63/0xcd
[  900.000122][ T4242] RIP: 0033:0x7f1c2a4e1b1b
[  900.000123][ T4242] RSP: 002b:00007ffd1a2b3c40 EFLAGS: 00000246 ORIG_RAX: 0000000000000101
[  900.000124][ T4242] RAX: ffffffffffffffda RBX: 0000000000000003 RCX: 00007f1c2a4e1b1b
[  900.000125][ T4242]  </TASK>
[  900.000126][ T4242] Modules linked in: kf_mod
[  900.000130][   T77] Kernel panic - not syncing: Fatal exception
[  900.000131][ T4242] CR2: ffffc90000b40000
[  900.000132][ T4242] ---[ end trace 0000000000000001 ]---
[  900.000200][   T77] Kernel Offset: disabled
[  900.000201][   T77] Rebooting in 86400 seconds..
"""


def test_the_report_a_panic_makes_fatal_is_not_ranked_below_it_for_lack_of_a_cause(tmp_path: Path) -> None:
    # ue14 finding 3: the cap that ranks a cause-less report below a stated cause of its severity took the panic's
    # "kernel_panic" (0.50) as that stated cause and put the fault the panic makes fatal at 0.49, below the panic
    # and below the other task's fault, which did not panic.
    path = tmp_path / "console.log"
    path.write_text(TWO_FAULTS_ONE_PANIC)
    ranked = analyse_logs([str(path)], live=False).hypotheses
    fatal = next(h for h in ranked if h.statement.startswith("a kernel bug") and "kf_dma_map_pages" in h.statement)
    other = next(h for h in ranked if h.statement.startswith("a kernel bug") and "getname_flags" in h.statement)
    panic = next(h for h in ranked if h.statement.startswith("the kernel panicked"))
    assert "kf_dma_map_pages" in panic.statement  # (the panic names the first fault as the report it makes fatal)
    assert fatal.rank < panic.rank and fatal.confidence >= panic.confidence
    assert fatal.rank < other.rank
