"""Healthy recordings of this machine under ordinary load (tests/data/healthy/record.sh): nothing is a problem.

#27: a healthy machine yields no finding at medium or above, and "no problem found" says what was
examined and what could not be judged.  The data are real: an ftrace of sched/irq/workqueue events, a
system-wide ``perf record -g`` profile and the machine's dmesg, all taken while a Python busy loop,
``ls -R /usr``, gzip, ``crash --help`` and other users' builds ran on 2 CPUs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

HEALTHY = Path(__file__).resolve().parents[2] / "data" / "healthy"
PROBLEM = ("medium", "high", "critical")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "forensics", *args], capture_output=True, text=True, timeout=300, check=False
    )


def _incident(doc: dict[str, Any]) -> dict[str, Any]:
    incident: dict[str, Any] = doc.get("incident", doc)
    return incident


@pytest.mark.parametrize(
    ("command", "data"),
    [("trace", "ftrace.txt.gz"), ("profile", "perf.txt.gz"), ("dmesg", "dmesg.txt.gz")],
)
def test_no_finding_at_medium_or_above_on_a_healthy_recording(command: str, data: str) -> None:
    res = run(command, str(HEALTHY / data), "--format", "json", "--fail-on", "medium")
    assert res.returncode == 0, res.stderr  # --fail-on medium exits 1 on any problem
    incident = _incident(json.loads(res.stdout))
    problems = [f"{f['severity']}: {f['title']}" for f in incident["findings"] if f["severity"] in PROBLEM]
    assert problems == [], problems
    assert incident["problems"] == 0 and incident["examined"], "no problem found says what was examined"
    for finding in incident["findings"]:
        if finding["kind"].startswith("sched-") and finding["severity"] != "info":
            assert finding["baseline"]["value"] and finding["baseline"]["source"], finding["title"]


def test_the_healthy_trace_could_have_found_wakeup_latency() -> None:
    res = run("trace", str(HEALTHY / "ftrace.txt.gz"), "--format", "json")
    examined = _incident(json.loads(res.stdout))["examined"][0]
    assert "sched_waking" in examined["what"] and "2 CPU(s)" in examined["what"]
    assert any("wakeup latency" in x for x in examined["could_find"])
    assert any("irqs-off" in x for x in examined["could_not"])  # no preemptirq events were recorded
    # A user-space busy loop never gets kernel advice.
    for f in _incident(json.loads(res.stdout))["findings"]:
        assert not any("cond_resched" in s for s in f["next_steps"]), f["title"]


def test_report_on_the_healthy_recordings_says_no_problem_and_what_was_examined(tmp_path: Path) -> None:
    res = run(
        "report",
        "--trace",
        str(HEALTHY / "ftrace.txt.gz"),
        "--profile",
        str(HEALTHY / "perf.txt.gz"),
        "--dmesg",
        str(HEALTHY / "dmesg.txt.gz"),
        "--format",
        "md",
        "--json",
        str(tmp_path / "report.json"),
        "--fail-on",
        "medium",
    )
    assert res.returncode == 0, res.stderr
    head = res.stdout.split("## ", 1)[0]
    assert "found no problem" in head and "had a problem" not in head
    for what in ("examined: trace", "examined: profile", "examined: kernel log"):
        assert what in head, head
    assert "No hypothesis" in res.stdout  # nothing at medium or above points at a cause
    doc = json.loads((tmp_path / "report.json").read_text())
    assert _incident(doc)["problems"] == 0


def test_a_finding_of_two_traces_is_told_by_the_worse_of_them(tmp_path: Path) -> None:
    """The same task's hog, info in one healthy trace and low in another, merges under the low one's words.

    python's and crash's longest runs are info in ftrace.txt.gz ("Long run ... others waited within their fair
    share", judged "none exceeded") and low in the LTTng workload's ftrace (a wait past the CFS period), pytest's
    the other way round: the report showed python and crash low under the info finding's title, summary and
    "none exceeded" baseline (the first input's words, the worst severity).
    """
    lttng_kernel = HEALTHY.parent / "lttng" / "kernel.ftrace.txt.gz"
    out = tmp_path / "report.json"
    res = run("report", "--trace", str(HEALTHY / "ftrace.txt.gz"), "--trace", str(lttng_kernel), "--json", str(out))
    assert res.returncode == 0, res.stderr
    hogs = [f for f in _incident(json.loads(out.read_text()))["findings"] if f["kind"] == "sched-cpu-hog"]
    merged = [f for f in hogs if len({e["source"] for e in f["evidence"]}) == 2]
    assert {f["title"].split(":")[1].split()[0] for f in merged} >= {"python", "crash", "pytest"}, hogs
    for f in merged:  # python, crash, pytest: info ("Long run") in one trace, low ("CPU hog") in the other
        assert f["severity"] == "low" and f["title"].startswith("CPU hog: "), f["title"]
        assert "none exceeded" not in f["baseline"]["value"], f["baseline"]
        task = f["title"].split(":")[1].split()[0]
        lead = lttng_kernel if task in ("python", "crash") else HEALTHY / "ftrace.txt.gz"  # low there (first on a tie)
        assert f["evidence"][0]["source"].startswith(str(lead)), f["evidence"][0]
