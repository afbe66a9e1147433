"""The /proc and /sys copies of real guests recorded by the vmcore fixtures (vmcore_fixtures/build.sh sysroots).

The guests are busybox initramfs systems without distribution tooling, so only
the kernel side of the checklist can be judged: ``crashkernel=`` given, memory
reserved, crash kernel loaded.  "Ready" here is :attr:`Checklist.kernel_ready`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from collectors.kdump.state import collect_kdump_state
from detectors.kdump.checklist import run_checklist
from detectors.kdump.findings import checklist_findings
from forensics.types.kdump import Status
from tests.forensics.commands.test_kdump_cli import invoke
from tests.helpers import assert_evidence_resolves

SYSROOTS = Path(__file__).resolve().parents[3] / "vmcore_fixtures" / "sysroots"


def _sysroot(kind: str) -> Path:
    path = SYSROOTS / kind
    if not (path / "proc" / "cmdline").is_file():
        pytest.skip(f"vmcore fixture sysroot {path} is absent; record it with vmcore_fixtures/build.sh sysroots")
    return path


def test_guest_with_crash_kernel_loaded_is_ready_on_the_kernel_side() -> None:
    state = collect_kdump_state(_sysroot("crash-loaded"))
    checklist = run_checklist(state)
    assert checklist.kernel_ready
    status = {line.id: line.status for line in checklist.lines}
    assert status["crashkernel-cmdline"] is Status.PASS
    assert status["crash-loaded"] is Status.PASS
    assert status["crash-reservation"] is not Status.FAIL
    # The recording holds /proc and /sys only: the tooling, its configuration and its service were not examined,
    # so the whole check is not known to be ready, and nothing is said to be missing.
    assert not checklist.ready
    assert checklist.count(Status.FAIL) == 0
    for check in ("kdump-tooling", "kdump-config", "kdump-service"):
        assert status[check] is Status.UNKNOWN
    assert_evidence_resolves(checklist_findings(checklist, state))


def test_a_tree_without_usr_or_etc_does_not_say_the_crash_will_be_lost() -> None:
    """kexec_crash_loaded is 1 and the tree has no /usr nor /etc: "missing: kdump-config or kdumpctl, makedumpfile"
    and "NOT READY: the next crash will be lost" were said of what was never looked at."""
    root = _sysroot("crash-loaded")
    result = invoke("kdump", "check", "--root", str(root))
    assert result.returncode == 1  # not known to be ready is not ready
    assert "will be lost" not in result.stdout and "[FAIL]" not in result.stdout
    assert "NOT KNOWN TO BE READY: kdump tooling installed" in result.stdout
    assert f"makedumpfile: not examined: the root {root} has no /usr" in result.stdout


def test_setup_on_a_tree_without_usr_or_etc_plans_nothing_it_did_not_see() -> None:
    """No install of tooling not looked for, no reboot for a boot configuration not seen: both said not read."""
    root = _sysroot("crash-loaded")
    doc = json.loads(invoke("kdump", "setup", "--root", str(root), "--format", "json").stdout)
    assert doc["packages"] == [] and doc["changes"] == [] and doc["commands"] == []
    assert doc["reboot_needed"] is False
    assert [u.split(":")[0] for u in doc["unread"]] == ["/usr", "/etc"]


def test_a_tree_with_usr_but_no_tooling_still_fails(tmp_path: Path) -> None:
    """The same recording with the system directories present and no kdump program in them: missing, a FAIL."""
    root = tmp_path / "root"
    shutil.copytree(_sysroot("crash-loaded"), root, symlinks=True)
    (root / "usr/sbin").mkdir(parents=True)
    (root / "usr/bin").mkdir()
    (root / "etc").mkdir()
    checklist = run_checklist(collect_kdump_state(root))
    tooling = next(line for line in checklist.lines if line.id == "kdump-tooling")
    assert tooling.status is Status.FAIL and tooling.detail == "missing: kdump-config or kdumpctl, makedumpfile"
    assert "will be lost" in invoke("kdump", "check", "--root", str(root)).stdout


def test_guest_without_crashkernel_is_not_ready() -> None:
    state = collect_kdump_state(_sysroot("no-crashkernel"))
    checklist = run_checklist(state)
    assert not checklist.kernel_ready
    assert not checklist.ready
    status = {line.id: line.status for line in checklist.lines}
    assert status["crashkernel-cmdline"] is Status.FAIL
    assert status["crash-reservation"] is Status.BLOCKED  # by the missing crashkernel=: one cause, one high finding
    assert status["crash-loaded"] is Status.BLOCKED  # by the missing crashkernel=: one cause, one high finding
    findings = checklist_findings(checklist, state)
    assert_evidence_resolves(findings)
    cited = {e.source.rsplit("/", 2)[-1] for f in findings for e in f.evidence}
    assert {"cmdline", "kexec_crash_size", "kexec_crash_loaded"} <= cited
