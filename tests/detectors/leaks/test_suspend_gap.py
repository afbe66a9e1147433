"""A suspend within a boot is a gap: growth across it is unobserved, not absent, and its minutes are no coverage.

ue23 #4: a real UDP leak's store (1-s samples) with a 10-min suspend after sample 26 (CLOCK_BOOTTIME and the wall
clock both moved) lost the 23,530 KB UDP rise: the windows were cut from the whole 11 min (27 s each), which
flattened it, while the coverage said "nothing else grows like a leak ... would show in 46 samples over 11 min".
Here: udp_leak_store's sockets opened at 1,200,000/h, 46 samples every second, samples 27 on taken 600 s late (wall
and uptime alike: a suspend).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.detectors.leaks.storebuild import run_leaks, udp_leak_store


def test_a_leak_seen_rising_on_both_sides_of_a_suspend_is_found_and_the_gap_is_no_coverage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "suspend.sqlite"
    udp_leak_store(store, samples=46, interval=1.0, sockets_per_hour=1_200_000, late=lambda i: 600.0 if i >= 26 else 0)
    text, doc = run_leaks(monkeypatch, capsys, store)
    [udp] = [s for s in doc["series"] if s["name"] == "UDP"]
    # Found (before: "growing, too short to call" from 27-s windows, no finding above info) and flagged across the gap.
    assert udp["grade"] in ("suspect", "leak"), udp
    assert udp["across"], udp
    group = next(f for f in doc["incident"]["findings"] if f["title"].startswith("UDP sockets"))
    assert group["severity"] in ("medium", "high"), group
    assert "measured across a 10 min gap" in group["title"] and "not a fact" in group["title"], group["title"]
    assert "not observed" in group["confidence_reason"], group["confidence_reason"]
    # The coverage is the observed 44 s (45 steps of 1 s less the one that holds the gap), the 10 min in the gap said
    # apart, never "over 11 min".
    power = doc["power"]
    assert power["span_seconds"] == pytest.approx(44.0)
    assert power["unobserved_seconds"] == pytest.approx(601.0)
    # It read "(10 min in gaps, not)", which did not say what was not (ue24 F5).
    assert "46 samples over 44 s observed (plus 10 min in gaps, not observed)" in text, text
    assert "in 46 samples over 11 min" not in text and "the whole 11 min" not in text
    assert "the whole 44 s observed" in text
