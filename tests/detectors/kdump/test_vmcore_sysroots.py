"""The /proc and /sys copies of real guests recorded by the vmcore fixtures (vmcore_fixtures/build.sh sysroots).

The guests are busybox initramfs systems without distribution tooling, so only
the kernel side of the checklist can be judged: ``crashkernel=`` given, memory
reserved, crash kernel loaded.  "Ready" here is :attr:`Checklist.kernel_ready`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.kdump.state import collect_kdump_state
from detectors.kdump.checklist import run_checklist
from detectors.kdump.findings import checklist_findings
from forensics.types.kdump import Status
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
    # No distribution tooling in a busybox guest: the whole check is not ready.
    assert not checklist.ready
    assert_evidence_resolves(checklist_findings(checklist, state))


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
