"""The scheduling analysis on a scenario with exactly known figures, in every text layout."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from collectors.trace_text import TraceParser
from detectors.sched import rules
from detectors.sched.analyzer import SchedAnalyzer
from forensics.model import NotAvailable
from forensics.report.trace_json import analysis_to_dict
from forensics.types.sched import TaskStats, Thresholds, TraceAnalysis
from forensics.types.trace import PERF_LOSS_UNKNOWN, ParseCounts, TraceEvent
from tests.detectors.sched.traces import EXPECTED, LAYOUTS, analyse_path, recorded, scenario_text, write_scenario


def _analyse(path: Path, **options: Any) -> TraceAnalysis:
    analysis, _counts = analyse_path(path, **options)
    assert isinstance(analysis, TraceAnalysis)
    return analysis


def _task(a: TraceAnalysis, pid: int) -> TaskStats:
    return next(t for t in a.tasks if t.pid == pid)


def ms(seconds: float) -> float:
    return round(seconds * 1e3, 3)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_scenario_figures_in_every_layout(tmp_path: Path, layout: str) -> None:
    a = _analyse(write_scenario(tmp_path, layout))
    rt, hog, sleeper, victim = (_task(a, p) for p in (200, 500, 400, 300))
    assert rt.comm == "rt task" and rt.is_rt and rt.prio == 49
    assert rt.runs.worst is not None and ms(rt.runs.worst.duration) == EXPECTED.rt_run and rt.runs.worst.cpu == 1
    assert hog.runs.worst is not None and ms(hog.runs.worst.duration) == EXPECTED.hog_run and hog.hog_runs == 1
    wake = sleeper.worst_wakeup
    assert wake is not None and ms(wake.span.duration) == EXPECTED.sleeper_wakeup
    assert wake.behind[0].pid == 200 and ms(wake.behind[0].seconds) == EXPECTED.sleeper_wakeup
    assert wake.source == "sched_waking" and a.latency_source == "sched_waking"
    d_state = {s.state: s for s in sleeper.blocked}["D"]
    assert d_state.n == 1 and ms(d_state.total) == EXPECTED.sleeper_d
    pw = victim.worst_preempt_wait
    assert pw is not None and ms(pw.span.duration) == EXPECTED.victim_preempt_wait and pw.behind[0].pid == 200
    assert [(p.pid, p.times) for p in victim.preempted_by] == [(200, 1)]
    assert rt.delay_caused > 0.014 and {v.pid for v in rt.victims} == {300, 400}
    irq = {i.irq: i for i in a.irqs}[24]
    assert (
        irq.name == "eth0" and irq.durations.worst is not None and ms(irq.durations.worst.duration) == EXPECTED.irq_eth0
    )
    net_rx = {s.name: s for s in a.softirqs}["NET_RX"]
    assert net_rx.raise_latency.worst is not None and ms(net_rx.raise_latency.worst.duration) == EXPECTED.net_rx_raise
    assert net_rx.worst_raise_wait is not None and net_rx.worst_raise_wait.behind[0].pid == 200
    assert net_rx.durations.worst is not None and ms(net_rx.durations.worst.duration) == EXPECTED.net_rx_run
    work = {w.function: w for w in a.works}["vmstat_update"]
    assert work.durations.worst is not None and ms(work.durations.worst.duration) == EXPECTED.work


def _without_lines(doc: object) -> object:
    """The digest without line numbers and CPU count (headers differ between layouts, figures must not)."""
    if isinstance(doc, dict):
        return {k: _without_lines(v) for k, v in doc.items() if k not in ("line", "cpus_declared")}
    if isinstance(doc, list):
        return [_without_lines(v) for v in doc]
    return doc


def test_every_layout_gives_the_same_digest(tmp_path: Path) -> None:
    digests: dict[str, object] = {}
    for layout in LAYOUTS:
        doc = analysis_to_dict(_analyse(write_scenario(tmp_path, layout), bucket=0.005))
        digests[layout] = _without_lines(doc)
    first = digests["ftrace"]
    for layout, digest in digests.items():
        if layout == "perf":  # perf script text does not show its losses (none shown: unknown), the others would
            cov: Any = digest["coverage"]  # type: ignore[index]
            assert cov["lost_events"] == {"not_available": PERF_LOSS_UNKNOWN}
            said = f"events lost: unknown ({PERF_LOSS_UNKNOWN})"
            assert cov["note"].endswith(said)
            cov["lost_events"] = 0
            cov["note"] = cov["note"].removesuffix(said).removesuffix("; ")
        assert digest == first, f"{layout} differs from raw ftrace"


def test_sched_wakeup_is_used_when_the_trace_has_no_waking(tmp_path: Path) -> None:
    text = "\n".join(line for line in scenario_text("ftrace").splitlines() if "sched_waking" not in line)
    path = tmp_path / "nowaking.txt"
    path.write_text(text + "\n")
    a = _analyse(path)
    wake = _task(a, 400).worst_wakeup
    assert a.latency_source == "sched_wakeup"
    assert wake is not None and wake.source == "sched_wakeup" and ms(wake.span.duration) == 6.509


def test_offtime_is_not_available_without_preemptirq_events(tmp_path: Path) -> None:
    a = _analyse(write_scenario(tmp_path, "ftrace"))
    for off in a.offtimes:
        assert isinstance(off.intervals, NotAvailable) and isinstance(off.source, NotAvailable)
        assert "preemptirq" in off.intervals.reason


def test_offtime_from_preemptirq_events(tmp_path: Path) -> None:
    lines = [
        "          <idle>-0       [000] d..1.   200.000100: irq_disable: caller=do_idle+0x1/0x2 parent=0x0",
        "          <idle>-0       [000] d..1.   200.001600: irq_enable: caller=do_idle+0x3/0x4 parent=0x0",
        "            bash-12      [001] ...1.   200.002000: preempt_disable: caller=vfs_write+0x1/0x2 parent=0x0",
        "            bash-12      [001] ...1.   200.002250: preempt_enable: caller=vfs_write+0x5/0x6 parent=0x0",
    ]
    path = tmp_path / "preemptirq.txt"
    path.write_text("\n".join(lines) + "\n")
    a = _analyse(path)
    irqs_off, preempt_off = a.offtimes
    assert irqs_off.source == "preemptirq events" and not isinstance(irqs_off.intervals, NotAvailable)
    assert irqs_off.intervals.worst is not None and ms(irqs_off.intervals.worst.duration) == 1.5
    assert [ms(s.duration) for s in irqs_off.worst] == [1.5]
    assert not isinstance(preempt_off.intervals, NotAvailable) and preempt_off.intervals.n == 1
    assert preempt_off.worst == ()  # 0.25 ms is under the 1 ms threshold for listing


def test_offtime_from_irqsoff_tracer_output(tmp_path: Path) -> None:
    text = (
        "# tracer: irqsoff\n#\n# irqsoff latency trace v1.1.5 on 6.1.0\n"
        "# --------------------------------------------------------------------\n"
        "# latency: 259 us, #4/4, CPU#2 | (M:preempt VP:0, KP:0, SP:0 HP:0 #P:4)\n"
        "#    -----------------\n"
        "#    | task: swapper/2-0 (uid:0 nice:0 policy:0 rt_prio:0)\n"
        "  <idle>-0       2d.s2    0us : __do_softirq <-irq_exit\n"
    )
    path = tmp_path / "irqsoff.txt"
    path.write_text(text)
    a, counts = analyse_path(path)
    assert isinstance(a, TraceAnalysis)
    irqs_off = a.offtimes[0]
    assert not isinstance(irqs_off.intervals, NotAvailable)
    assert irqs_off.intervals.worst is not None and ms(irqs_off.intervals.worst.duration) == 0.259
    assert irqs_off.intervals.worst.cpu == 2 and irqs_off.intervals.worst.begin.line_no == 5
    assert isinstance(a.offtimes[1].intervals, NotAvailable)
    assert counts.malformed == 1  # the function-trace body line is not an event


def test_window_clips_intervals_and_stops_early(tmp_path: Path) -> None:
    path = write_scenario(tmp_path, "ftrace")
    a = _analyse(path, window=(100.004, 100.0086))
    rt = _task(a, 200)
    assert rt.runs.worst is not None and ms(rt.runs.worst.duration) == 4.51  # 100.004 .. 100.008510
    assert a.irqs == ()  # the IRQ ended before the window: no handler figures at all
    assert a.window == (100.004, 100.0086)
    analyzer = SchedAnalyzer(window=(99.0, 100.0))
    from collectors.trace_text import TraceParser

    analyzer.feed(TraceParser().feed(path.read_bytes()))
    assert analyzer.done  # events after the window end the reading


def test_lost_events_drop_spanning_intervals(tmp_path: Path) -> None:
    lines = scenario_text("ftrace").splitlines()
    at = next(i for i, line in enumerate(lines) if "100.003000" in line)
    lines.insert(at, "CPU:1 [LOST 42 EVENTS]")
    path = tmp_path / "lost.txt"
    path.write_text("\n".join(lines) + "\n")
    a, counts = analyse_path(path)
    assert isinstance(a, TraceAnalysis)
    assert counts.lost_markers == 1 and counts.lost_events == 42
    assert a.coverage.lost_events == 42 and "lost" in a.coverage.note
    rt = _task(a, 200)
    assert rt.runs.n == 0  # its run started before the loss
    assert _task(a, 400).worst_wakeup is None  # woken before the loss


def test_cpu_buffers_starting_late_are_reported(tmp_path: Path) -> None:
    lines = scenario_text("ftrace").splitlines()
    kept = [line for line in lines if "[001]" not in line or float(line.split(": ")[0].split()[-1]) > 100.005]
    path = tmp_path / "late.txt"
    path.write_text("\n".join(kept) + "\n")
    a = _analyse(path)
    cov = a.coverage
    assert cov.cpus_seen == (0, 1) and cov.cpus_declared == 2
    assert cov.common_start == 100.008510 and "CPU1 from 100.008510" in cov.note


def test_buckets_split_runs_and_keep_the_worst_latency(tmp_path: Path) -> None:
    a = _analyse(write_scenario(tmp_path, "ftrace"), bucket=0.002)
    assert a.bucket_seconds == 0.002
    cells = {(round(b.start, 3), b.cpu): b for b in a.buckets}
    rt_cells = [b for b in a.buckets if b.cpu == 1 and b.top and b.top[0].pid == 200]
    assert math.isclose(sum(t.runtime for b in rt_cells for t in b.top if t.pid == 200), 0.008, abs_tol=1e-9)
    worst = cells[(100.008, 1)]
    assert worst.worst_latency_pid == 300 and worst.worst_latency is not None and ms(worst.worst_latency) == 8.09
    assert cells[(100.002, 0)].irq_time > 0


def test_thresholds_decide_hog_runs(tmp_path: Path) -> None:
    path = write_scenario(tmp_path, "ftrace")
    assert _task(_analyse(path, thresholds=Thresholds(hog=0.009)), 500).hog_runs == 0
    assert _task(_analyse(path, thresholds=Thresholds(hog=0.001)), 500).hog_runs == 1


def test_buckets_coarsen_to_stay_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from detectors.sched import rules

    monkeypatch.setattr(rules, "MAX_BUCKET_CELLS", 8)
    path = write_scenario(tmp_path, "ftrace")
    fine = _analyse(path, bucket=0.0005)
    a, _ = analyse_path(path, chunk=200, bucket=0.0005)  # small chunks: the budget is checked per batch
    assert a.bucket_seconds is not None and a.bucket_seconds > 0.0005 and len(a.buckets) <= 8
    total = sum(t.runtime for b in a.buckets for t in b.top)
    assert math.isclose(total, sum(t.runtime for b in fine.buckets for t in b.top), rel_tol=1e-9)
    assert max(b.worst_latency or 0 for b in a.buckets) == max(b.worst_latency or 0 for b in fine.buckets)


def test_overwritten_ring_buffer_is_noted(tmp_path: Path) -> None:
    text = scenario_text("ftrace").replace("entries-written: 21/21", "entries-written: 21/500")
    path = tmp_path / "overwritten.txt"
    path.write_text(text)
    a, counts = analyse_path(path)
    assert counts.overwritten == 479 and "overwrote 479 events" in a.coverage.note


def _ev(kind: int, ts: float, line: int, pid: int = 0, state: bytes = b"", nxt: int = 0) -> TraceEvent:
    return TraceEvent(kind, ts, 0, line, b"line %d" % line, pid, 120, b"t%d" % pid, state, nxt, 120, b"t%d" % nxt)


def test_result_twice_counts_open_runs_once() -> None:
    """Freezing changes nothing: a run still open at the end is counted once however often result() is called."""
    first = [_ev(rules.SWITCH, 1.0, 1, 0, b"R", 5), _ev(rules.WAKING, 1.01, 2, 6)]  # pid 5 runs from 1.0 on
    more = [_ev(rules.SWITCH, 1.02, 3, 5, b"S", 0)]  # ... to 1.02
    ref = SchedAnalyzer()
    ref.feed(first)
    once, twice = ref.result(ParseCounts()), ref.result(ParseCounts())
    assert once == twice
    task = _task(once, 5)
    assert (task.runs.n, task.hog_runs) == (1, 1) and task.runtime == pytest.approx(0.01, abs=1e-12)
    assert once.cpus[0].busy == task.runtime
    ref.feed(more)  # the open run goes on and ends: counted once, over its whole length
    done = _task(ref.result(ParseCounts()), 5)
    assert (done.runs.n, done.hog_runs) == (1, 1) and done.runtime == pytest.approx(0.02, abs=1e-12)
    whole = SchedAnalyzer()
    whole.feed(first + more)
    assert ref.result(ParseCounts()) == whole.result(ParseCounts())


def test_result_midway_then_at_the_end_equals_one_result(tmp_path: Path) -> None:
    """result() on part of a recorded trace, then feeding the rest, gives what one pass gives."""
    data = recorded("kf.ftrace.txt", tmp_path).read_bytes()
    parser = TraceParser()
    events = parser.feed(data) + parser.finish()
    split = SchedAnalyzer()
    at = len(events) // 2
    split.feed(events[:at])
    # Stop where a task (not idle) has been running for a while: an open run of some length.
    while not any(pid != 0 and split.last[cpu].ts > since for cpu, (pid, since, *_) in split.cur.items()):
        split.feed(events[at : at + 1])
        at += 1
    midway = split.result(parser.counts)
    split.feed(events[at:])
    whole = SchedAnalyzer()
    whole.feed(events)
    assert repr(split.result(parser.counts)) == repr(whole.result(parser.counts)) != repr(midway)
