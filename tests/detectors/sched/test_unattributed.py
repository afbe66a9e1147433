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

from forensics.types.sched import CpuStats, TraceAnalysis
from tests.detectors.sched.test_input_sanity import _both, _lines, _write


def _gaps_said(analysis: TraceAnalysis) -> dict[int, tuple[float, float]]:
    note = analysis.coverage.note
    found = re.search(r"time counted neither busy nor idle \(([^)]*)\)", note)
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
