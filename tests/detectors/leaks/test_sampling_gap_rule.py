"""One gap rule for a store and Prometheus: a hole over 2.5 sampling intervals is a gap, said with its times, and a
finding whose rate is computed across one says so (review round 9, finding 5).

Before, a store counted only holes over 10 intervals and 300 s: a sampler stopped 79 s during a leak (5-s samples)
went unsaid, and the HIGH leak's rate was shown across it as plain fact.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from forensics.types.prometheus import is_gap
from forensics.units import iso_utc
from tests.detectors.leaks.storebuild import START, Cache, meminfo_text, write_store
from tests.helpers import cli_run

INTERVAL = 5.0
HOLE_AFTER = 60  # samples 0..59 on time, then every later one ``late`` seconds after its slot


def _leak_store(path: Path, late: float) -> None:
    def sockets(base: int) -> Callable[[int, float], int]:
        return lambda i, h: base + int(200_000 * h)

    caches = [Cache("sock_inode_cache", 832, sockets(200)), Cache("UDP", 1344, sockets(40))]
    caches += [Cache("task_struct", 4416, lambda i, h: 300 + (i * 7919) % 5)]

    def meminfo(i: int, h: float) -> str:
        leaked_kb = int(200_000 * h * (832 + 1344) / 1024)
        return meminfo_text(4_000_000 - leaked_kb, 100_000 + leaked_kb)

    write_store(path, caches, 121, INTERVAL, meminfo, late=lambda i: late if i >= HOLE_AFTER else 0.0)


def test_the_rule_is_two_and_a_half_intervals() -> None:
    assert not is_gap(10.0, 5.0)  # one missed sample
    assert not is_gap(12.0, 5.0)  # ... late
    assert is_gap(15.5, 5.0)  # two missed


def test_a_79_s_hole_in_5_s_samples_is_said_and_carried_onto_the_leak(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "hole.sqlite"
    _leak_store(store, late=74.0)  # samples 60 and 61 (ids 60, 61) 79 s apart
    start, end = START + (HOLE_AFTER - 1) * INTERVAL, START + HOLE_AFTER * INTERVAL + 74.0
    said = f"a 79 s gap in sampling from {iso_utc(start)} to {iso_utc(end)} (samples 60 to 61)"
    ran = cli_run(monkeypatch, capsys, "leaks", "--store", store, "-f", "md")
    assert said in ran.stdout, ran.stdout  # was: no word of it (a hole under 300 s)
    ran = cli_run(monkeypatch, capsys, "leaks", "--store", store, "-f", "json")
    doc = json.loads(ran.stdout)["incident"]
    leaks = [f for f in doc["findings"] if f["severity"] in ("high", "critical", "medium")]
    assert leaks, [f["title"] for f in doc["findings"]]
    for finding in leaks:
        caveats = [fact["value"] for fact in finding["facts"] if fact["name"] == "caveat"]
        assert f"computed across {said}" in caveats, finding["facts"]
        assert f"computed across {said}" in finding["confidence_reason"]


def test_one_missed_sample_is_no_gap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "late.sqlite"
    _leak_store(store, late=INTERVAL)
    ran = cli_run(monkeypatch, capsys, "leaks", "--store", store, "-f", "json")
    assert "gap" not in ran.stdout


def test_a_stores_gaps_follow_the_one_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """The store's steps are judged by is_gap itself, not by a copy of its comparison: moving the rule moves both."""
    import numpy as np

    from detectors.leaks.analysis import sampling_gaps
    from detectors.leaks.series import slab_matrices
    from forensics.types import prometheus
    from tests.detectors.leaks.frames_for_tests import START, slab_frame

    walls = START + np.concatenate([np.arange(20) * INTERVAL, 19 * INTERVAL + 16.0 + np.arange(20) * INTERVAL])
    matrices = slab_matrices(slab_frame(walls, {"filp": (256, np.full(len(walls), 1000.0))}))
    steps = np.diff(walls)
    assert [g.seconds for g in sampling_gaps(matrices)] == [16.0]  # 3.2 intervals: a gap
    assert list(np.flatnonzero(prometheus.is_gap(steps, INTERVAL))) == [19]
    monkeypatch.setattr(prometheus, "GAP_INTERVALS", 4.0)
    assert not prometheus.is_gap(16.0, INTERVAL)
    assert sampling_gaps(matrices) == ()  # was: still one (its own copy of the constant)
