"""Waits and a run still open where a real recording (or a window of it) ends, recorded with trace-cmd in a private
tracefs instance and read by ``kforensic trace``.

A SCHED_FIFO hog spins on CPU1; a CFS sleeper pinned to CPU1 is woken behind it from CPU0 and stays queued; the
recording is stopped about 1.2 s after the hog's switch-in, the hog still spinning.  (On this 6.18 kernel the fair
server lets the queued CFS tasks in 950 ms after they began to wait, so the hog's own run ends near 950 ms: the run
at the RT budget still open at the end is had from the recording with CPU1's events after the hog's switch-in cut
out, a CPU running its task to the end.)

Until 2026-12-07 the hog's victims' waits and the sleeper's mean wakeup latency counted the open wait's length as
if it had ended ("1 other task(s) waited 400.000 ms in all behind it, up to 400.000 ms in one wait"), and a run at
the budget still open at the trace's end "had to" be stopped by RT throttling, inferred, not seen.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from tests.detectors.sched.tracefs_instance import MARKS, extract, fifo_hog_on, instance, sleeper_on, wake

EVENTS = ("sched/sched_switch", "sched/sched_waking", "sched/sched_wakeup")
QUEUED_S = 0.05  # from the hog's start to the sleeper's wakeup
RECORD_S = 1.2  # from the hog's start to the recording's end: past RT throttling's 950 ms budget

pytestmark = MARKS

# Spins until told (its flag file made), at most 5 s: past the recording's end in any case.
HOG = (
    "import os, sys, time\nend = time.monotonic() + 5\nprint(flush=True)\n"
    "while time.monotonic() < end and not os.path.exists(sys.argv[1]):\n    pass\n"
)


class Recording(NamedTuple):
    """A trace.dat, its ``trace-cmd report`` text, the sleeper's and the hog's pids, the sleeper's waking time and
    the hog's switch-in on CPU1 before it (its line's index in the text)."""

    dat: Path
    text: str
    sleeper: int
    hog: int
    woken: float
    hog_in: int


def _record(tmp: Path) -> tuple[Path, int, int]:
    """trace.dat of a sleeper queued behind an RT hog when the recording stops; the instance is removed whatever
    happens."""
    mine = os.sched_getaffinity(0)
    sleeper = hog = None
    flag = tmp / "stop.flag"
    with instance(f"kforensic_open_{os.getpid()}", EVENTS, 4096) as inst:
        try:
            os.sched_setaffinity(0, {0})
            sleeper = sleeper_on(1)
            (inst / "tracing_on").write_text("1")
            hog = fifo_hog_on(1, HOG, str(flag))  # the hog holds CPU1
            time.sleep(QUEUED_S)
            wake(sleeper)  # the wakeup: from CPU0 onto CPU1 (its only CPU), behind the hog
            time.sleep(RECORD_S - QUEUED_S)
            (inst / "tracing_on").write_text("0")  # the hog still spins
            flag.touch()
            sleeper.wait(timeout=20)
            hog.wait(timeout=20)
            return extract(inst, tmp / "open.dat"), sleeper.pid, hog.pid
        finally:
            os.sched_setaffinity(0, mine)
            flag.touch()
            for p in (sleeper, hog):
                if p is not None and p.poll() is None:
                    p.kill()
                    p.wait()


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Recording]:
    """One recording for the module's tests (each reads it its own way)."""
    tmp = tmp_path_factory.mktemp("open_waits")
    dat, sleeper, hog = _record(tmp)
    text = subprocess.run(["trace-cmd", "report", "-i", str(dat)], capture_output=True, text=True, check=True).stdout
    lines = text.splitlines()
    waking = next(
        (i for i, ln in enumerate(lines) if "sched_waking:" in ln and f" pid={sleeper} " in ln and "=001" in ln), None
    )
    assert waking is not None, f"no waking of the sleeper onto CPU1: {lines[-20:]}"
    woken = float(re.findall(r" (\d+\.\d+): ", lines[waking])[0])
    hog_in = max(
        (i for i, ln in enumerate(lines[:waking]) if "[001]" in ln and re.search(rf"==> \S+:{hog} \[89\]", ln)),
        default=None,
    )
    assert hog_in is not None, f"no switch-in of the hog on CPU1 before the waking: {lines[waking - 20 : waking]}"
    yield Recording(dat, text, sleeper, hog, woken, hog_in)


def _trace_json(path: Path, *options: str) -> dict[str, Any]:
    out = subprocess.run(
        [str(Path(sys.executable).with_name("kforensic")), "trace", str(path), "-f", "json", *options],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode in (0, 1), out.stderr
    doc: dict[str, Any] = json.loads(out.stdout)
    return doc


def _finding(doc: dict[str, Any], kind: str, pid: int) -> dict[str, Any]:
    found = [
        f
        for f in doc["incident"]["findings"]
        if f["kind"] == kind and any(s.get("pid") == pid for s in f.get("subjects", ()))
    ]
    assert len(found) == 1, [f["title"] for f in doc["incident"]["findings"]]
    return found[0]


def _facts(finding: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [x for x in finding["facts"] if x["name"] == name]


def _task(doc: dict[str, Any], pid: int) -> dict[str, Any]:
    (task,) = [t for t in doc["tasks"] if t["pid"] == pid]
    return task


def test_a_victims_wait_open_at_a_windows_end_makes_the_hogs_delay_and_its_mean_lower_bounds(
    recording: Recording,
) -> None:
    """A window ending 400 ms after the sleeper's wakeup, the hog still spinning: the sleeper's one wait is open
    there.  The hog's delay in all, its longest wait, the sleeper's tally and its mean wakeup latency count that
    wait up to the window's end: each is said "at least" (typed: the facts' and the JSON's ``lower_bound``)."""
    r = recording
    doc = _trace_json(r.dat, "--window", f"{r.woken - 0.01:.6f}:{r.woken + 0.4:.6f}", "--top", "1000")
    hog = _finding(doc, "sched-rt-hog", r.hog)
    summary = hog["summary"]
    assert re.search(r"waited at least \d+\.\d{3} ms in all behind it, the longest at least \d+\.\d{3} ms", summary), (
        summary
    )
    assert "waits still open at the window's end counted up to there" in summary, summary
    (delay,) = _facts(hog, "delay caused to others")
    assert delay.get("lower_bound") is True, delay
    mine = [x["value"] for x in _facts(hog, "waited behind it") if f"(pid {r.sleeper})" in x["value"]]
    assert len(mine) == 1 and re.fullmatch(
        rf"python\S* \(pid {r.sleeper}\) at least \d+\.\d{{3}} ms in 1 wait\(s\), the longest at least "
        r"\d+\.\d{3} ms \(one still waiting at the window's end\)",
        mine[0],
    ), mine
    victims = [v for v in _task(doc, r.hog)["victims"] if v["pid"] == r.sleeper]
    assert victims and victims[0]["lower_bound"] is True and victims[0]["open_at"] == "window", victims
    wakeup = _task(doc, r.sleeper)["wakeup_latency"]
    assert wakeup["open"] == 1 and wakeup["lower_bound"] is True, wakeup
    woken = _finding(doc, "sched-wakeup-latency", r.sleeper)
    assert re.search(r"Mean wakeup latency at least \d+\.\d{3} ms over 1 wakeups", woken["summary"]), woken["summary"]


def test_a_run_at_the_rt_budget_open_at_the_traces_end_is_not_said_stopped_by_throttling(
    recording: Recording, tmp_path: Path
) -> None:
    """The report with CPU1's events after the hog's switch-in cut out: CPU1 ran the hog to the trace's end, over
    950 ms.  That RT throttling stopped it is not seen: what was seen is said (it ran at least N ms without a
    switch, at the budget), and whether throttling stopped it is unknown, the likely outcome.  The sleeper's wait,
    queued on CPU1, is open to the trace's end: the hog's delay is "at least"."""
    r = recording
    lines = r.text.splitlines(keepends=True)
    cut = [ln for i, ln in enumerate(lines) if i <= r.hog_in or "[001]" not in ln]
    path = tmp_path / "cpu1_cut.txt"
    path.write_text("".join(cut))
    doc = _trace_json(path)
    hog = _finding(doc, "sched-rt-hog", r.hog)
    assert "(still running when the recording stopped)" in hog["title"], hog["title"]
    (longest,) = _facts(hog, "longest run")
    assert longest.get("lower_bound") is True
    ran = float(longest["value"].split()[0])
    assert ran >= 950.0, longest  # at the budget
    summary = hog["summary"]
    assert "had to stop" not in summary, summary
    assert f"It ran at least {ran:.3f} ms on CPU1 without a switch, still running when the recording stopped" in (
        summary
    ), summary
    assert "Whether RT throttling then stopped it is unknown (the trace ends first)" in summary, summary
    assert "it is the likely outcome" in summary, summary
    assert re.search(r"waited at least \d+\.\d{3} ms in all behind it", summary), summary
    assert "waits still open when the recording stopped counted up to there" in summary, summary
