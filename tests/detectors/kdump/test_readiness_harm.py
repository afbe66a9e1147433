"""A kdump readiness gap is harm that has not happened: no readiness finding is a problem, each names its baseline.

Review ue24 F2: on this healthy machine (a kernel without kexec crash support, no kdump-tools) ``kdump check`` made
two high findings and a medium one ("kdump tooling not installed", "the kernel has no kexec crash support", "no
kernel debug info for the running kernel"), none with a baseline, and ``report`` led with them.  Nothing waited and
nothing broke: the next crash's dump would be lost.  Now a fail is low, a warn at most low, each judged against what
a machine ready for kdump has for that check; the command still exits 1 while a check fails (a readiness gate).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from forensics.model import PROBLEM, Severity
from forensics.pipelines.kdump import collect_check
from tests.collectors.kdump.roots import SCENARIOS, build
from tests.forensics.commands.test_kdump_cli import invoke


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_no_readiness_finding_reaches_medium_and_each_names_its_baseline(tmp_path: Path, scenario: str) -> None:
    system = SCENARIOS[scenario]
    check = collect_check(build(tmp_path / "root", system), system.statvfs)
    for finding in check.incident.findings:
        assert finding.severity < PROBLEM, (finding.title, finding.severity)
        assert finding.baseline is not None, finding.title
        status = finding.fact("status")
        if status == "fail":
            # The dump of the next crash would be lost: worth a look, not yet harm.
            assert finding.severity is Severity.LOW, finding.title
            assert finding.baseline.name == "a machine ready for kdump", finding.baseline
            assert finding.fact("harm") == "not yet: the next crash's dump would be lost"
        elif status in ("warn", "unknown"):
            assert finding.baseline.name == "a machine ready for kdump", finding.baseline
        else:  # blocked: judged against its root cause, whose severity it names
            assert status == "blocked", finding.facts
            assert finding.baseline.value.endswith("(low)"), finding.baseline


def test_this_machine_shape_has_low_fails_with_baselines_and_exits_1(tmp_path: Path) -> None:
    """debian12-direct-boot is this machine's shape (kernel without kexec, no kdump-tools, no boot loader)."""
    system = SCENARIOS["debian12-direct-boot"]
    root = build(tmp_path / "root", system)
    check = collect_check(root, system.statvfs)
    by_title = {f.title: f for f in check.incident.findings}
    tooling = by_title["kdump: kdump tooling not installed"]
    kernel = by_title["kdump: the kernel has no kexec crash support"]
    assert (tooling.severity, kernel.severity) == (Severity.LOW, Severity.LOW)
    assert tooling.baseline is not None and "kdump tooling installed" in tooling.baseline.value
    assert kernel.baseline is not None and "kexec crash support" in kernel.baseline.value
    assert not [f.title for f in check.incident.findings if f.severity >= PROBLEM]
    # A readiness gate for scripts and CI: a failing check exits 1, whatever --fail-on says.
    for flags in ((), ("--fail-on", "low"), ("--fail-on", "medium"), ("--fail-on", "critical")):
        assert invoke("kdump", "check", "--root", str(root), *flags).returncode == 1, flags
