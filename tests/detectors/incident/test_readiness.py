"""The readiness sentence of a report: a kdump check's findings said apart from the incident's (review ue24 F2)."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

from detectors.incident.readiness import incident_findings, readiness_after, readiness_only, readiness_sentence
from forensics.model import Evidence, Examined, Finding, FindingKind, Locator, LocatorKind, Severity
from forensics.pipelines.kdump import collect_check
from forensics.types.kdump import Status
from forensics.types.results import KdumpCheck
from tests.collectors.kdump.roots import SCENARIOS, build

#: A finding of another input (a kernel log's), beside the check.
LOG_FINDING = Finding(
    id="dmesg:rt",
    kind=FindingKind.DMESG_RT_THROTTLING,
    title="sched: RT throttling activated",
    severity=Severity.MEDIUM,
    confidence=0.9,
    confidence_reason="read",
    summary="RT throttling",
    evidence=(Evidence("host.log", Locator(LocatorKind.LINE, 906), "sched: RT throttling activated"),),
)


def _check(tmp_path: Path, scenario: str, empty_pseudo: bool = False) -> KdumpCheck:
    system = SCENARIOS[scenario]
    root = build(tmp_path / "root", system)
    if empty_pseudo:  # an installed system mounted for inspection: no running kernel to judge
        for pseudo in ("proc", "sys"):
            shutil.rmtree(root / pseudo)
            (root / pseudo).mkdir()
    return collect_check(root, system.statvfs)


def test_not_ready_names_the_failing_checks_and_counts_the_rest(tmp_path: Path) -> None:
    check = _check(tmp_path, "debian12-direct-boot")
    findings = check.incident.findings
    blocked = sum(1 for f in findings if f.fact("status") == "blocked")
    said = readiness_sentence(findings)
    assert said.startswith(
        "kdump is not ready: 2 check(s) fail (kdump tooling not installed; the kernel has no kexec crash support), "
        "so the next crash's dump would be lost; "
    ), said
    assert f"{blocked} blocked by them" in said and said.endswith("not counted as a problem)."), said
    # Alone, the check is all there is to tell: the summary says it, nothing after the story.
    assert readiness_only(findings, check.incident.examined)
    assert readiness_after(findings, check.incident.examined) == ""
    # Beside a log's finding, the log is told and the readiness after it; the log's finding alone is the incident's.
    both = (LOG_FINDING, *findings)
    examined = (Examined("kernel log host.log: 1,778 lines"), *check.incident.examined)
    assert not readiness_only(both, examined)
    assert readiness_after(both, examined) == f"Readiness: {said}"
    assert incident_findings(both) == (LOG_FINDING,)


def test_checks_not_read_leave_it_not_known_to_be_ready(tmp_path: Path) -> None:
    check = _check(tmp_path, "debian12-ready", empty_pseudo=True)
    assert not check.checklist.ready and check.checklist.count(Status.FAIL) == 0
    said = readiness_sentence(check.incident.findings)
    assert said.startswith("kdump is not known to be ready: "), said
    assert "could not be read (" in said and ": could not be judged" not in said, said


def test_a_ready_machine_with_warnings_says_ready(tmp_path: Path) -> None:
    check = _check(tmp_path, "fedora41-zstd")
    assert check.checklist.ready
    said = readiness_sentence(check.incident.findings)
    assert said.startswith("kdump is ready to capture the next crash, with "), said
    assert "not ready" not in said, said


def test_no_readiness_finding_no_sentence() -> None:
    assert readiness_sentence((LOG_FINDING,)) == ""
    assert readiness_after((LOG_FINDING,), ()) == ""
    assert not readiness_only((replace(LOG_FINDING, severity=Severity.LOW),), ())
