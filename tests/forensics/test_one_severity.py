"""One severity per finding in every table: the log's report table says what its finding says."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.vmcore_cases import CASES_DIR


def _dmesg(*args: str) -> str:
    ran = subprocess.run(
        [sys.executable, "-m", "forensics", "dmesg", *args], capture_output=True, text=True, timeout=120, check=False
    )
    assert ran.returncode == 0, ran.stderr
    return ran.stdout


@pytest.mark.parametrize(
    ("case", "severity"),
    [
        ("04-hung-task", "critical"),  # the kernel panicked on it (hung_task_panic)
        ("07-sysrq-c", "low"),  # it panicked because someone asked (forensics/types/deliberate.py), as the dump says
    ],
)
def test_a_panic_report_has_one_severity_in_the_table_and_the_finding(case: str, severity: str) -> None:
    log = CASES_DIR / case / "console.log"
    if not log.is_file():
        pytest.skip(f"no {log}")
    [finding] = json.loads(_dmesg(str(log), "-f", "json"))["incident"]["findings"]
    table = _dmesg(str(log)).splitlines()
    row = next(line for line in table if line.startswith(str(log)))
    assert finding["severity"] == severity
    assert f" {finding['severity']} " in row and finding["title"] in row, row


def test_the_report_prints_each_hypothesis_once() -> None:
    from forensics.model import (
        Clock,
        Evidence,
        Finding,
        Incident,
        Locator,
        LocatorKind,
        NotAvailable,
        Severity,
        Timestamp,
        finding_id,
    )
    from forensics.pipelines.report import build_story
    from forensics.report.document import Document, Paragraph, Section
    from forensics.report.story import detail_sections, nested_blocks, render_story_markdown
    from forensics.types.dmesg_result import DmesgResult
    from forensics.types.results import SourceAnalysis

    ev = Evidence("kern.log", Locator(LocatorKind.LINE, 3), "rt hog", timestamp=Timestamp(5.0, Clock.MONOTONIC))
    hog = Finding(finding_id("sched-rt-hog", "spin"), "sched-rt-hog", "RT hog: spin ran 90 ms", Severity.MEDIUM,
                  0.9, "test", "spin ran", (ev,), ("step",), (), "test")  # fmt: skip
    incident = Incident("vm", "6.1", NotAvailable("x"), (), (hog,))
    part = SourceAnalysis(incident, "kernel logs k", DmesgResult((), incident, ()), (), "kforensic dmesg k")
    story = build_story([part], [], "kforensic report")
    text = render_story_markdown(story)
    assert text.count("CPU starvation: RT hog: spin ran 90 ms") == 1, text
    assert [b.title for b in detail_sections(story)] == ["kernel logs k"]
    # An input's document with its own ranking (vmcore's, dmesg's) is nested without it.
    own = Section("Hypotheses", (Paragraph("1. CPU starvation: RT hog: spin ran 90 ms"),))
    assert nested_blocks(Document("t", (Paragraph("details"), own))) == (Paragraph("details"),)
