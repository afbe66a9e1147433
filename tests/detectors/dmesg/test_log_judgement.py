"""What a log's finding says of itself beyond its reading: a crash someone requested, a cause read from a damaged
report.  The logs are the fixture kernel's console (07-sysrq-c) and logs written here in the kernel's formats."""

from __future__ import annotations

from pathlib import Path

from detectors.dmesg.findings import CAUSE_CAPPED
from forensics.model import Finding, Severity
from forensics.pipelines.dmesg import analyse_logs
from forensics.types.deliberate import LOG_NEXT_STEPS, REQUESTED_FACT
from forensics.types.dmesg_result import DmesgResult
from tests.detectors.dmesg.test_interrupted import _FAULT, _KASAN, _KASAN_TITLE
from tests.helpers import assert_evidence_resolves

SYSRQ_CONSOLE = Path(__file__).resolve().parents[3] / "vmcore_fixtures" / "cases" / "07-sysrq-c" / "console.log"

#: SysRq-c on a kernel before v4.9: "SysRq : Trigger a crash", then the NULL write in sysrq_handle_crash.
_OLD_SYSRQ = """\
[   52.100001] SysRq : Trigger a crash
[   52.100020] BUG: unable to handle kernel NULL pointer dereference at           (null)
[   52.100030] IP: [<ffffffff813f2a16>] sysrq_handle_crash+0x16/0x20
[   52.100040] PGD 3b2b1067 PUD 3b2b0067 PMD 0 \n\
[   52.100050] Oops: 0002 [#1] SMP \n\
[   52.100060] CPU: 0 PID: 301 Comm: bash Not tainted 4.4.0-kf #1
[   52.100070] RIP: 0010:[<ffffffff813f2a16>]  [<ffffffff813f2a16>] sysrq_handle_crash+0x16/0x20
[   52.100080] Call Trace:
[   52.100090]  [<ffffffff813f31c7>] __handle_sysrq+0xf7/0x150
[   52.100100]  [<ffffffff813f367b>] write_sysrq_trigger+0x2b/0x30
[   52.100110]  [<ffffffff8122d2ad>] proc_reg_write+0x3d/0x60
[   52.100120] ---[ end trace 4f7a1cb0b5a1e2c3 ]---
"""


def _run(log: Path) -> DmesgResult:
    return analyse_logs([str(log)], live=False)


def _requested(result: DmesgResult, sysrq_line: int) -> Finding:
    (crash,) = result.incident.findings
    assert crash.severity is Severity.LOW
    assert crash.fact(REQUESTED_FACT)
    # Who asked is the question: the log's steps, no bug to search for.
    assert crash.next_steps == LOG_NEXT_STEPS
    assert not any("syzbot" in step or "mailing lists" in step for step in crash.next_steps)
    cited = [e for e in crash.evidence if e.locator.name == REQUESTED_FACT]
    assert [(e.locator.start, "Trigger a crash" in e.excerpt) for e in cited] == [(sysrq_line, True)]
    assert_evidence_resolves([crash])
    (deliberate,) = [h for h in result.hypotheses if h.statement.startswith("the crash was deliberate")]
    assert deliberate.next_command == LOG_NEXT_STEPS[0]  # not the dump's "crash> log"
    return crash


def test_a_sysrq_crash_in_a_log_is_said_requested_with_its_line() -> None:
    lines = SYSRQ_CONSOLE.read_text().splitlines()
    at = next(i for i, text in enumerate(lines, 1) if "sysrq: Trigger a crash" in text)
    _requested(_run(SYSRQ_CONSOLE), at)


def test_an_old_kernels_sysrq_crash_too(tmp_path: Path) -> None:
    log = tmp_path / "kern.log"
    log.write_text(_OLD_SYSRQ)
    crash = _requested(_run(log), 1)
    assert crash.title.endswith("in sysrq_handle_crash")


def test_a_cause_read_from_a_damaged_report_is_no_surer_than_it(tmp_path: Path) -> None:
    log = tmp_path / "kern.log"
    log.write_text(_KASAN + _FAULT)
    result = _run(log)
    kasan = next(f for f in result.incident.findings if f.title == _KASAN_TITLE)
    assert kasan.confidence == 0.5 and kasan.log_cause is not None
    assert kasan.log_cause.confidence == kasan.confidence
    capped = kasan.fact(CAUSE_CAPPED)
    assert capped is not None and capped.startswith("0.85 as read, 0.50 as the report's: the report is damaged (")
    assert max(h.confidence for h in result.hypotheses) <= 0.5
    # The complete report keeps its cause's own confidence, below its own.
    log.write_text(_FAULT)
    (fault,) = _run(log).incident.findings
    assert fault.fact(CAUSE_CAPPED) is None
