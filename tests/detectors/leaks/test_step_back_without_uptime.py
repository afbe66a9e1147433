"""A step back of the wall clock in samples that carry no uptime: each side judged apart, no figure across it.

ue23 #11 / the session after it: slab-import of timestamped files stores no uptime, so nothing measures the time
that passed across a step back of the clock.  The store said "cannot judge: ... no uptime in the store to measure
across it", and beside that a finding computed across the step stood at 0.5 ("UDP sockets leak ... (4,484,654
KB/h) (measured across a 29 s step back of the wall clock: not a fact)", high): a rate made of window medians
mixing both sides, UDP's 2,242,327 KB/h 42% above the 1,581,654 KB/h each side shows on its own.
Now the samples on each side of the step are two stretches judged on their own, as two boots are.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from tests.detectors.leaks.storebuild import run_leaks, udp_leak_store
from tests.helpers import cli_in_process

SNAPSHOTS = Path(__file__).resolve().parents[3] / "vmcore_fixtures/cases/08-slab-leak/snapshots"
_HEAD = re.compile(r"date=(\d+) uptime=[\d.]+ [\d.]+")


def test_each_side_of_a_step_back_without_uptime_is_judged_apart_and_no_rate_is_given_across_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """udp_leak_store's sockets at 1,200,000/h, 120 samples every second, the wall clock set back 30 s after the 60th;
    the samples' uptime dropped, as slab-import of timestamped files stores none."""
    store = tmp_path / "back.sqlite"
    udp_leak_store(store, samples=120, interval=1.0, sockets_per_hour=1_200_000, late=lambda i: -30.0 if i >= 60 else 0)
    with sqlite3.connect(store) as db:
        db.execute("UPDATE samples SET uptime = NULL")
    text, doc = run_leaks(monkeypatch, capsys, store)
    assert "cannot judge" not in text, text
    assert (
        "120 samples judged in 2 stretches apart: samples 1 to 60 (60 over 59 s every 1 s), samples 61 to 120 (60 over"
        " 59 s every 1 s)"
    ) in text, text
    assert "a 29 s step back of the wall clock between samples 60 and 61" in text
    assert "the samples on each side judged apart, no span or rate measured across it" in text
    # No figure across the step: no finding marked as measured across it, none believed less for it.
    findings = doc["incident"]["findings"]
    assert not [f["title"] for f in findings if "(measured across" in f["title"]], [f["title"] for f in findings]
    assert not [f for f in findings if "its times not facts" in f["confidence_reason"]]
    # The leak found on each side, at its own rate (the same on both: the sockets open at one pace throughout).
    udps = [s for s in doc["series"] if s["name"] == "UDP"]
    assert sorted(s["part"] for s in udps) == [0, 1], udps
    assert {s["grade"] for s in udps} == {"leak"} and all(s["across"] == [] for s in udps), udps
    assert udps[0]["rate_bytes_per_hour"] == pytest.approx(udps[1]["rate_bytes_per_hour"], rel=0.01)
    group = next(f for f in findings if f["title"].startswith("UDP sockets leak"))
    assert group["severity"] == "high" and group["confidence"] > 0.5, group
    # Found on both sides, merged: its rates are each side's, the span of its evidence is across the step (the
    # report read "for 89.0 s" of it, unmarked).
    assert group["title"].endswith(
        "(found on each side of a 29 s step back of the wall clock, judged apart: its span not a fact)"
    ), group["title"]
    power = doc["power"]
    assert power["unmeasured"] is None and power["judgeable"] is True
    assert [(b["part"], b["first_sample"], b["last_sample"]) for b in power["boots"]] == [(0, 1, 60), (1, 61, 120)]
    assert doc["boots"] == 1
    code, table = cli_in_process(monkeypatch, capsys, "leaks", "--store", str(store))
    assert code in (0, 1)
    header = next(line for line in table.splitlines() if line.startswith("grade"))
    assert header.split()[:3] == ["grade", "series", "stretch"], header
    rows = [line.split() for line in table.splitlines() if line.startswith("leak ") and " UDP " in line]
    assert sorted(r[r.index("UDP") + 1] for r in rows) == ["1-60", "61-120"], rows
    assert "1 boot(s) in 2 stretches judged apart" in table


def test_two_imports_of_snapshots_without_uptime_a_clock_set_back_between_them_are_judged_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The slab-leak fixture's snapshots with no uptime on their time lines, imported with slab-import in two goes
    (the first 45, then the last 45 dated an hour earlier: the clock set back between them).  Before: "cannot judge:
    90 samples; the wall clock went back 60 min between samples 45 and 46", nothing judged."""
    files = sorted(SNAPSHOTS.iterdir())
    halves = tmp_path / "a", tmp_path / "b"
    for half in halves:
        half.mkdir()
    for i, snap in enumerate(files):
        back = 3600 if i >= 45 else 0
        text = _HEAD.sub(lambda m, b=back: f"date={int(m[1]) - b}", snap.read_text(), count=1)
        (halves[i >= 45] / snap.name).write_text(text)
    store = tmp_path / "two.sqlite"
    for half in halves:
        code, out = cli_in_process(
            monkeypatch, capsys, "slab-import", str(half), "--store", str(store), "--no-analysis"
        )
        assert code == 0, out
    text, doc = run_leaks(monkeypatch, capsys, store)
    assert "cannot judge" not in text, text
    assert "90 samples judged in 2 stretches apart: samples 1 to 45 (45 over" in text, text
    assert "a 60 min step back of the wall clock between samples 45 and 46" in text
    assert "the samples carry no uptime to measure across it" in text
    leak = [s for s in doc["series"] if s["name"] == "kf_leak_obj"]
    assert sorted(s["part"] for s in leak) == [0, 1], leak
    assert all(s["across"] == [] and s["rate_bytes_per_hour"] > 0 for s in leak), leak
    assert not [f["title"] for f in doc["incident"]["findings"] if "(measured across" in f["title"]]
