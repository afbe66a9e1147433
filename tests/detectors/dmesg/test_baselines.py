"""Every finding of a kernel log names the baseline its severity was judged against (docs/severity.md, "Kernel
logs"): the fixture kernels' real console logs and the golden logs, through the CLI's JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from forensics.model import Baseline
from forensics.types.deliberate import FORCED
from forensics.types.dmesg import KIND_BASELINES, PANICKED, ReportKind
from tests.vmcore_cases import console_logs, kernels

GOLDEN = sorted((Path(__file__).parent / "golden").glob("*.log"))


def _logs() -> list[Path]:
    return [log for kernel in kernels() for log in console_logs(kernel)] + GOLDEN


def _judged(finding: dict[str, object]) -> tuple[str, str, str] | None:
    b = finding.get("baseline")
    return (b["name"], b["value"], b["source"]) if isinstance(b, dict) else None


def _as_tuple(b: Baseline) -> tuple[str, str, str]:
    return (b.name, b.value, b.source)


def test_every_log_finding_names_its_baseline() -> None:
    logs = _logs()
    if not logs:
        pytest.skip("no logs")
    ran = subprocess.run(
        [sys.executable, "-m", "forensics", "dmesg", *map(str, logs), "-f", "json"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    findings = json.loads(ran.stdout)["incident"]["findings"]
    assert len(findings) >= len(logs)
    assert len({f["kind"] for f in findings}) >= 10  # many kinds, not one
    for f in findings:
        judged = _judged(f)
        assert judged is not None, f["title"]
        if judged == _as_tuple(FORCED):
            assert (f["severity"], "sysrq" in f["title"]) == ("low", True), f["title"]
        elif judged == _as_tuple(PANICKED):
            assert f["severity"] == "critical", f["title"]
        else:  # not panicked on: its kind's baseline, at its rule's severity
            assert judged == _as_tuple(KIND_BASELINES[ReportKind(f["kind"].removeprefix("dmesg."))]), f["title"]
    # The fixtures panic on every report; the golden logs hold reports the kernel went on after.
    said = {_judged(f) for f in findings}
    assert {_as_tuple(PANICKED), _as_tuple(FORCED), _as_tuple(KIND_BASELINES[ReportKind.SOFT_LOCKUP])} <= said
    assert _as_tuple(KIND_BASELINES[ReportKind.HANG]) in said


def test_every_report_kind_has_a_baseline() -> None:
    assert set(KIND_BASELINES) == set(ReportKind)
    assert all(b.name and b.value and b.source for b in KIND_BASELINES.values())
