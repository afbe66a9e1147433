"""The report's timeline across a jump of a log's printk time (a second boot in one log, a clock reset).

A log of two boots (tests/detectors/dmesg/test_boots_of_a_log.py: a WARNING at [1811.0] in boot 1, then, after a
second banner, an oops at [700.0] in boot 2) was told "First (700.000 s since boot): ...oops... Then (1811.000 s
since boot): WARNING", the timeline's rows in that order, as if the two boots' times were on one clock.  Now the
rows are ordered by clock segment, then time, and the table and the story say where the printk time went back.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from detectors.incident.timeline import build_timeline, clock_jumps
from detectors.sched.findings import detect
from forensics.model import FindingKind, NotAvailable
from forensics.pipelines.dmesg import analyse_logs
from forensics.types.sched import TraceAnalysis
from forensics.units import fmt_ms
from tests.detectors.dmesg.test_boots_of_a_log import BOOT1, BOOT2
from tests.detectors.dmesg.test_clock_steps import _warning
from tests.detectors.sched.traces import analyse_path, recorded
from tests.helpers import cli_run

WARNING = "WARNING in intel_runtime_pm_driver_release"
OOPS = "BUG: unable to handle kernel paging request in nv_dma_map_pages"


def _two_boots(tmp_path: Path) -> Path:
    path = tmp_path / "kern.log"
    path.write_text("".join(f"[{t:12.6f}] {body}\n" for t, body in (*BOOT1, *BOOT2)))
    return path


def test_rows_are_ordered_by_boot_then_time(tmp_path: Path) -> None:
    findings = analyse_logs([str(_two_boots(tmp_path))], live=False).incident.findings
    (jump,) = clock_jumps(findings)[str(tmp_path / "kern.log")]
    assert (jump.was, jump.now, jump.before, jump.after) == (1811.0, 700.0, 4, len(BOOT1) + 3)  # the two reports
    events = build_timeline(findings, NotAvailable("no boot time"))
    assert [(e.title, e.segment) for e in events] == [(WARNING, 0), (OOPS, 1)]
    assert events[0].jump is None and events[1].jump == jump


def _clock_reset(tmp_path: Path) -> Path:
    """The two boots' lines without the second's banner and command line (at 0.0): one boot, whose printk time goes
    back from [1811.0] to [700.0] (a clock reset, a merged log): no new boot is seen."""
    path = tmp_path / "reset.log"
    path.write_text("".join(f"[{t:12.6f}] {body}\n" for t, body in (*BOOT1, *BOOT2[2:])))
    return path


def test_the_report_says_where_the_clock_jumps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    log, out, js = _clock_reset(tmp_path), tmp_path / "incident.md", tmp_path / "incident.json"
    ran = cli_run(monkeypatch, capsys, "report", "--dmesg", log, "-o", out, "--json", js)
    assert ran.returncode == 0, ran.stderr
    text = out.read_text()
    said = (
        f"the printk time of {log} goes back between lines 4 and {len(BOOT1) + 1}, from [1811.000000] to [700.000000]"
    )
    table = text.split("## Timeline", 1)[1].split("## Hypotheses", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| start")]
    assert len(rows) == 3 and WARNING in rows[0] and said in rows[1] and OOPS in rows[2], rows
    # The story: the oops after the WARNING, on the new clock, said.
    story = [line for line in text.splitlines() if line.startswith(("First", "Then"))]
    assert story[0].startswith("First (1811.000 s since boot): WARNING"), story
    assert story[1].startswith(f"Then, after the printk time went back at line {len(BOOT1) + 1} of {log}, on a new "
                               "clock (700.000 s since boot): BUG"), story  # fmt: skip
    timeline = json.loads(js.read_text())["timeline"]
    assert [(e["title"], e["segment"], e["jump"] is not None) for e in timeline] == [
        (WARNING, 0, False),
        (OOPS, 1, True),
    ]


def test_the_report_tells_each_boot_of_the_log_on_its_own_lane(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Where a second banner begins a new boot, the boot before the told one (no RTC line: neither dated) is on a
    lane of its own, as a second log's would be, not above a "clock jump" row of the told boot's lane (ue23 #3)."""
    log, out, js = _two_boots(tmp_path), tmp_path / "incident.md", tmp_path / "incident.json"
    ran = cli_run(monkeypatch, capsys, "report", "--dmesg", log, "-o", out, "--json", js)
    assert ran.returncode == 0, ran.stderr
    text = out.read_text()
    table = text.split("## Timeline", 1)[1].split("## Hypotheses", 1)[0]
    assert "clock jump" not in table and f"### Input {log} (its boot from line 1)" in table, table
    story = [line for line in text.splitlines() if line.startswith(("First", "Then"))]
    assert story == [f"First (700.000 s since boot): {OOPS}."], story
    assert "Which of the two boots came first is unknown: neither" in text
    timeline = json.loads(js.read_text())["timeline"]
    assert [(e["title"], e["lane"], e["jump"]) for e in timeline if e["title"] in (WARNING, OOPS)] == [
        (OOPS, "since boot", None),
        (WARNING, f"input {log} (its boot from line 1)", None),
    ]


def test_a_repeat_after_the_jump_is_no_end_of_the_interval(tmp_path: Path) -> None:
    """One WARNING site at [500] and again at [12] after a clock reset: one finding, whose duration is not computed
    across the jump (it was "for 8.1 min" backwards)."""
    site = ("kernel/workqueue.c:1726", "__queue_work", "queue_work_on")
    path = tmp_path / "kern.log"
    path.write_text("\n".join([*_warning(500.0, 0, 10, *site), *_warning(12.0, 0, 10, *site)]) + "\n")
    findings = analyse_logs([str(path)], live=False).incident.findings
    (event,) = build_timeline(findings, NotAvailable("no boot time"))
    assert event.segment == 0 and event.end is None and event.when.seconds == pytest.approx(500.0001)


def test_a_log_without_a_jump_has_one_segment(tmp_path: Path) -> None:
    path = tmp_path / "kern.log"
    path.write_text("".join(f"[{t:12.6f}] {body}\n" for t, body in BOOT2))
    findings = analyse_logs([str(path)], live=False).incident.findings
    assert clock_jumps(findings) == {}
    assert [e.segment for e in build_timeline(findings, NotAvailable("no boot time"))] == [0]


def test_an_rt_hogs_row_is_the_run_its_title_states(tmp_path: Path) -> None:
    """kf.ftrace.txt's RT hog cites its longest run, then the waits behind it: its row said "31.182 ms" from its
    first run's start to a victim's switch-in (two runs and the gap between) for a title "ran 8.090 ms" (ue24 F8).
    Its row is its run now, as a CPU hog's is."""
    path = recorded("kf.ftrace.txt", tmp_path)
    analysis, _counts = analyse_path(path)
    assert isinstance(analysis, TraceAnalysis)
    findings = tuple(detect(analysis, str(path)))
    events = {e.finding_id: e for e in build_timeline(findings, NotAvailable("no boot time"))}
    for f in findings:
        if f.kind not in (FindingKind.SCHED_RT_HOG, FindingKind.SCHED_CPU_HOG):
            continue
        run = next(x.value for x in f.facts if x.name == "longest run")
        row = events[f.id]
        assert fmt_ms(row.duration) == run, f.title
        assert row.end_cite == f.evidence[1].cite()
    rt = next(f for f in findings if f.kind is FindingKind.SCHED_RT_HOG)
    assert len(rt.evidence) > 2  # (the waits behind it are cited, not spanned)
    assert fmt_ms(events[rt.id].duration) == "8.090 ms"
