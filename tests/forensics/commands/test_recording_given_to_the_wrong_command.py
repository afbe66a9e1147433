"""A recording given where another command's input belongs is named, with the option or command that reads it.

Review ue19 #15: `kforensic report healthy.dat` (a trace.dat given as a findings file) said "not a JSON document
('utf-8' codec can't decode byte 0x94 ...)", and `kforensic profile problem.txt` (`trace-cmd report` text) said
"no samples: not perf script text, folded stacks or perf.data (line 1: 'cpus=2')".  The recordings here are made
now: a trace.dat from a private tracefs instance (trace-cmd extract), its `trace-cmd report` text, a perf.data.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from collectors.perf_script import find_perf
from tests.detectors.sched.tracefs_instance import TRACEFS_MARKS, extract, instance
from tests.helpers import cli_run

pytestmark = TRACEFS_MARKS


@pytest.fixture(scope="module")
def trace_dat(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A trace.dat of 0.2 s of sched_switch, from an instance of its own (removed whatever happens)."""
    dat = tmp_path_factory.mktemp("wrong") / "t.dat"
    with instance(f"kforensic_wrong_{os.getpid()}", ("sched/sched_switch",)) as inst:
        (inst / "tracing_on").write_text("1")
        time.sleep(0.2)
        (inst / "tracing_on").write_text("0")
        return extract(inst, dat)


def test_a_trace_dat_given_as_findings_names_report_trace(
    trace_dat: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    ran = cli_run(monkeypatch, capsys, "report", trace_dat, "-o", tmp_path / "r.md")
    assert ran.returncode == 3, ran
    assert f"{trace_dat}: not a JSON document: a trace-cmd trace.dat recording" in ran.stderr, ran.stderr
    assert f"give it as `kforensic report --trace {trace_dat}`" in ran.stderr and "codec" not in ran.stderr


def test_a_perf_data_given_as_findings_names_report_profile(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    perf = find_perf()
    if perf is None:
        pytest.skip("perf is not installed")
    data = tmp_path / "perf.data"
    subprocess.run([perf, "record", "-q", "-o", str(data), "--", "true"], check=True, capture_output=True)
    ran = cli_run(monkeypatch, capsys, "report", data, "-o", tmp_path / "r.md")
    assert ran.returncode == 3, ran
    assert f"{data}: not a JSON document: a perf.data recording (it starts with 'PERFILE2')" in ran.stderr, ran.stderr
    assert f"give it as `kforensic report --profile {data}`" in ran.stderr


def test_trace_cmd_report_text_given_to_profile_names_kforensic_trace(
    trace_dat: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text = tmp_path / "t.txt"
    with open(text, "wb") as out:
        subprocess.run(["trace-cmd", "report", "-i", str(trace_dat)], check=True, stdout=out, stderr=subprocess.DEVNULL)
    assert text.read_text().startswith("cpus=")  # the premise: trace-cmd report's first line
    ran = cli_run(monkeypatch, capsys, "profile", text)
    assert ran.returncode == 3, ran
    assert f"{text}: no samples: trace-cmd report text (a trace, not a profile) (line 1: 'cpus=" in ran.stderr, (
        ran.stderr
    )
    assert f"read it with `kforensic trace {text}`" in ran.stderr
