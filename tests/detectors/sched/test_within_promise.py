"""A wait within what the task's class promises, for a task ``--task`` asks about: said at info, not dropped.

Found on host.ftrace.txt (ue24 F11): ``--task 9661`` showed python's 44.528 ms wakeup wait in its table, above
--latency-ms, then "No problem found: no findings": a nice-10 task's wait within its fair share was dropped without
a word, where a CPU hog within its promise gets an info "Long run".  And the picture labelled it "python waits
44.5 ms", by comm, beside a finding "python waited 19.886 ms" of another pid.  Here ``waiter`` (pid 700, nice 10)
waits 22 ms on CPU0 while ``ping`` and ``pong`` (nice 0) take 2 ms turns.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from detectors.sched.findings import detect
from forensics.model import FindingKind, Severity
from forensics.pipelines.trace import analyse_trace_file
from forensics.report.cpu_timeline import wait_marks
from forensics.types.figures import CpuTimelineFigure
from forensics.types.sched import TraceAnalysis
from tests.detectors.sched.traces import analyse_path, busy_wait_text
from tests.helpers import cli_run

WAITER = 700


def _niced(tmp_path: Path, prio: int = 130) -> Path:
    path = tmp_path / f"niced-{prio}.txt"
    path.write_text(busy_wait_text(10, 2e-3, prio=prio))
    return path


def _waits(doc: dict[str, object]) -> list[dict[str, object]]:
    incident = doc["incident"]
    assert isinstance(incident, dict)
    return [f for f in incident["findings"] if f["kind"] == FindingKind.SCHED_WAKEUP_LATENCY.value]


def test_an_asked_tasks_wait_within_its_fair_share_is_said_at_info(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _niced(tmp_path)
    whole = json.loads(cli_run(monkeypatch, capsys, "trace", path, "-f", "json").stdout)
    assert _waits(whole) == []  # without --task: no finding for a wait within its promise (no flood of infos)
    for spec in (str(WAITER), "waiter"):
        ran = cli_run(monkeypatch, capsys, "trace", path, "--task", spec, "-f", "json")
        assert ran.returncode == 0, ran.stderr
        (wait,) = _waits(json.loads(ran.stdout))
        assert wait["severity"] == "info"
        assert (
            wait["title"] == "Wakeup latency: waiter waited 22.000 ms to run, within its fair share as a nice 10 task"
        )
        assert "within its fair share as a nice 10 task" in str(wait["summary"])
        assert "x9.3 for its weight (prio 130)" in wait["baseline"]["name"]  # (3 tasks: 2 of nice 0)
    text = cli_run(monkeypatch, capsys, "trace", path, "--task", str(WAITER)).stdout
    assert "no findings" not in text and "1 info" in text


def test_a_wait_past_the_promise_keeps_its_severity_with_task(tmp_path: Path) -> None:
    """A nice-0 waiter's 22 ms is past its fair share: low, with or without --task (``within`` changes nothing)."""
    analysis, _counts = analyse_path(_niced(tmp_path, 120))
    for asked in (frozenset(), frozenset({WAITER})):
        (wait,) = (f for f in detect(analysis._replace(asked=asked), "t") if f.kind is FindingKind.SCHED_WAKEUP_LATENCY)
        assert wait.severity is Severity.LOW and "fair share" not in wait.title


def test_the_pictures_wait_labels_name_the_pid_and_whether_a_finding_names_it(tmp_path: Path) -> None:
    path = _niced(tmp_path)
    for prio, named in ((130, False), (120, True)):
        result = analyse_trace_file(str(_niced(tmp_path, prio)), png=tmp_path / f"t{prio}.png")
        (figure,) = (f for f in result.figures if isinstance(f, CpuTimelineFigure))
        assert (WAITER in figure.named) is named
        (mark,) = wait_marks(figure.analysis, figure.named)
        assert mark.label() == "waiter (700) waits 22.0 ms" and mark.named is named
    analysis, _counts = analyse_path(path)
    assert isinstance(analysis, TraceAnalysis)
    assert [m.named for m in wait_marks(analysis)] == [False]
