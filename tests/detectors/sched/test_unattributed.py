"""A CPU's time that no sched_switch accounts for is said, with how much, not left for the reader to add up.

The recorded ``kf.ftrace.txt`` lacks most of CPU1's switches out of idle (the next switch names a previous task,
the one switched in is idle): 91 ms of CPU1's 241 ms are counted neither busy nor idle, and the CPU table's two
columns do not add up to its span.  Not counting that time is right (who ran there is not known); saying nothing
was not.  Both analyzers agree (``_both``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from collectors.trace_text import TraceParser
from detectors.sched.analyzer import SchedAnalyzer
from forensics.types.sched import CpuStats, TraceAnalysis
from tests.detectors.sched.test_input_sanity import _both, _lines, _write
from tests.detectors.sched.traces import analyse_path


def _gaps_said(analysis: TraceAnalysis) -> dict[int, tuple[float, float]]:
    note = analysis.coverage.note
    found = re.search(r"time (?:in the window )?counted neither busy nor idle \(([^)]*)\)", note)
    if found is None:
        return {}
    return {
        int(cpu): (float(gap), float(span))
        for cpu, gap, span in re.findall(r"CPU(\d+) ([\d.]+) ms of its ([\d.]+) ms", found.group(1))
    }


def _gap_ms(c: CpuStats) -> float:
    assert isinstance(c.busy, float) and isinstance(c.idle, float)
    assert isinstance(c.first_ts, float) and isinstance(c.last_ts, float)
    return (c.last_ts - c.first_ts - c.busy - c.idle) * 1e3


def test_the_time_missing_switches_leave_out_is_said_per_cpu(tmp_path: Path) -> None:
    head, body = _lines(tmp_path)
    analysis, _findings = _both(_write(tmp_path, "kf.txt", head, body))
    said = _gaps_said(analysis)
    cpu1 = next(c for c in analysis.cpus if c.cpu == 1)
    assert said[1][0] == pytest.approx(_gap_ms(cpu1), abs=1e-3) and said[1][0] > 80  # 91.280 ms of 241.047 ms
    assert said[1][1] == pytest.approx((cpu1.last_ts - cpu1.first_ts) * 1e3, abs=1e-3)  # type: ignore[operator]


def test_a_switch_cut_out_of_a_cpu_grows_its_unattributed_time(tmp_path: Path) -> None:
    """One of CPU0's switches removed: the time it leaves without a task is added to what the note says."""
    head, body = _lines(tmp_path)
    whole, _ = _both(_write(tmp_path, "whole.txt", head, body))
    switches = [i for i, line in enumerate(body) if "[000]" in line and "sched_switch" in line]
    k = len(switches) // 2
    earlier, cut, after = switches[k - 1], switches[k], switches[k + 1]
    ts = [float(re.search(r" (\d+\.\d+): ", body[i]).group(1)) for i in (earlier, after)]  # type: ignore[union-attr]
    analysis, _ = _both(_write(tmp_path, "cut.txt", head, body[:cut] + body[cut + 1 :]))
    before = _gaps_said(whole).get(0, (0.0, 0.0))[0]
    # The switch after the cut names a task the analysis never saw switched in: neither its run nor the one of the
    # task before it (from the switch before the cut) can be told, so both leave the count.
    assert _gaps_said(analysis)[0][0] == pytest.approx(before + (ts[1] - ts[0]) * 1e3, abs=2e-3)


def _windowed(path: Path, window: tuple[float, float]) -> TraceAnalysis:
    """The analysis of ``window`` of ``path``, compiled and reference alike."""
    fast, _counts = analyse_path(path, chunk=1 << 12, window=window)
    parser = TraceParser()
    ref = SchedAnalyzer(window=window)
    ref.feed(parser.feed(path.read_bytes()))
    ref.feed(parser.finish())
    assert repr(fast) == repr(ref.result(parser.counts))
    return fast


@pytest.mark.parametrize("window", [(797.55, 797.65), (797.6, 797.78)])
def test_a_windows_unattributed_time_is_said_over_the_window(tmp_path: Path, window: tuple[float, float]) -> None:
    """In a window each CPU's span is the window (both CPUs report after it): CPU1's missing switches leave part of
    it counted neither busy nor idle, said over the window; CPU0's busy and idle add up to it and it is not named.
    Until 2026-12-05 nothing was said (CPU1 busy 124.3 ms, idle 0 of the 180 ms of 797.6:797.78)."""
    head, body = _lines(tmp_path)
    analysis = _windowed(_write(tmp_path, "kf.txt", head, body), window)
    assert "time in the window counted neither" in analysis.coverage.note
    said = _gaps_said(analysis)
    span_ms = (window[1] - window[0]) * 1e3
    by_cpu = {c.cpu: c for c in analysis.cpus}
    assert set(said) == {1}
    cpu1 = by_cpu[1]
    assert isinstance(cpu1.busy, float) and isinstance(cpu1.idle, float)
    assert said[1][1] == pytest.approx(span_ms, abs=1e-3)
    assert said[1][0] == pytest.approx(span_ms - (cpu1.busy + cpu1.idle) * 1e3, abs=1e-3) and said[1][0] > 10
    cpu0 = by_cpu[0]
    assert isinstance(cpu0.busy, float) and isinstance(cpu0.idle, float)
    assert (cpu0.busy + cpu0.idle) * 1e3 == pytest.approx(span_ms, rel=0.01)
