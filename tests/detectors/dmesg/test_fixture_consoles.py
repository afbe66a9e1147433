"""The fixture kernel's real console logs (vmcore_fixtures/cases/*/console.log) through the engine.

Each case's expected.json names the crash ("title", "type") and, when there is
one, the function at fault ("culprit_function").  The console title is checked
against ``dmesg_title`` when the case gives one, else the culprit function must
be the guilty frame of the first report.  A slab leak without kmemleak prints
nothing on the console but the final sysrq crash, so only that crash is
required there.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from detectors.dmesg.findings import group_finding, group_reports
from detectors.dmesg.scanner import scan_chunks
from tests.helpers import assert_evidence_resolves

try:
    from tests.vmcore_cases import console_logs
except ImportError:  # the fixtures helper has not landed yet
    console_logs = None

_NOT_ON_CONSOLE = {"slab_leak"}  # bugs the console log cannot name (no kmemleak in the fixture kernel)


def _logs() -> list[Path]:
    return console_logs() if console_logs is not None else []


@pytest.mark.parametrize("log", _logs() or [None], ids=lambda p: p.parent.name if p else "absent")
def test_fixture_console_log_is_triaged(log: Path | None) -> None:
    if log is None:
        pytest.skip("no fixture console logs: vmcore_fixtures/MANIFEST.json is absent (run vmcore_fixtures/build.sh)")
    expected_file = log.parent / "expected.json"
    if not expected_file.is_file():
        pytest.skip(f"{expected_file} is absent: the case has no ground truth yet")
    expected = json.loads(expected_file.read_text())
    reports = [r for r in scan_chunks([log.read_bytes()]) if not r.is_event]
    assert reports, f"{log}: no kernel report found"
    first = reports[0]
    if "dmesg_title" in expected:
        assert first.title == expected["dmesg_title"]
    elif expected.get("culprit_function") and expected.get("type") not in _NOT_ON_CONSOLE:
        assert first.frame == expected["culprit_function"], first.title
    else:  # nothing before the panic names the bug on the console: the first report is the panic itself
        assert (first.kind, first.panicked) == ("panic", True), first.title
        assert first.title == "kernel panic: " + str(expected["panic_message"]).removeprefix(
            "Kernel panic - not syncing: "
        )
    assert_evidence_resolves([group_finding(str(log), g) for g in group_reports(reports)])


@pytest.mark.parametrize("log", _logs() or [None], ids=lambda p: p.parent.name if p else "absent")
def test_kdump_dmesg_gives_the_console_title(log: Path | None) -> None:
    """The log kdump extracted from the dump (dmesg.txt) and the serial console name the same crash."""
    if log is None:
        pytest.skip("no fixture console logs: vmcore_fixtures/MANIFEST.json is absent (run vmcore_fixtures/build.sh)")
    dumped = log.parent / "dmesg.txt"
    if not dumped.is_file():
        pytest.skip(f"{dumped} is absent")
    console = [r for r in scan_chunks([log.read_bytes()]) if not r.is_event]
    from_dump = [r for r in scan_chunks([dumped.read_bytes()]) if not r.is_event]
    assert from_dump, f"{dumped}: no kernel report found"
    assert from_dump[0].title == console[0].title
    assert from_dump[0].frame == console[0].frame


@pytest.mark.parametrize("log", _logs() or [None], ids=lambda p: p.parent.name if p else "absent")
def test_fixture_console_comm_is_the_task_name(log: Path | None) -> None:
    """``Comm: sh Kdump: loaded Tainted: ...``: the comm is ``sh``, not ``sh Kdump: loaded`` (issue 19)."""
    if log is None:
        pytest.skip("no fixture console logs: vmcore_fixtures/MANIFEST.json is absent (run vmcore_fixtures/build.sh)")
    expected = json.loads((log.parent / "expected.json").read_text())
    reports = [r for r in scan_chunks([log.read_bytes()]) if not r.is_event]
    comms = {r.comm for r in reports if isinstance(r.comm, str)}
    assert comms, f"{log}: no report names its task"
    assert expected["task_comm"] in comms
    assert not any("Kdump" in c for c in comms), comms


@pytest.mark.parametrize("log", _logs() or [None], ids=lambda p: p.parent.name if p else "absent")
def test_a_panic_a_setting_asked_for_is_no_kernel_bug_hypothesis(log: Path | None) -> None:
    """09-oom panics by vm.panic_on_oom=1: its cause is the memory hog, as kforensic vmcore ranks it."""
    if log is None:
        pytest.skip("no fixture console logs: vmcore_fixtures/MANIFEST.json is absent (run vmcore_fixtures/build.sh)")
    from forensics.pipelines.dmesg import analyse_logs

    result = analyse_logs([str(log)], live=False)
    statements = [h.statement for h in result.hypotheses]
    assert not [s for s in statements if s.startswith("a kernel bug reported as kernel panic: ")], statements
    if log.parent.name == "09-oom":
        assert statements[0].startswith("memory exhausted by task kf_memhog "), statements
