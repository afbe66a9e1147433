"""The spans and shapes a leak finding says, as a user read them on a real machine's stores (ue24).

/tmp/ue24's stores were made by ``slab-watch --interval 5s`` on a loaded VM: 13 samples over 60 s, each a few ms
late of its slot (the offsets below are that store's own), and 31 samples over 150 s.  It said "13 samples over
60 s observed (7.1e-15 s in gaps, not)" (F5), "13 samples over 60 s" in its coverage and "13 samples over 57 s" in a
finding of the same samples (F6), "PageTables grows 76,209 KB/h" of a series that gave back all its rise (F7), and
"31 samples over 3 min" of 150 s.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from forensics.types.leaks import duration, duration_up
from tests.detectors.leaks.storebuild import Cache, meminfo_text, run_leaks, udp_leak_store, write_store

# How late of its 5-s slot each sample of the reviewer's 13-sample store was taken (seconds, read from its walls):
# their sum of steps and their first-to-last span differ in the last bit, 7.1e-15 s.
LATE = (0.0, 0.0035131, 0.01149631, 0.00132775, 0.00013018, 0.00350618, 0.00016856, 0.00349426, 0.10458612)
LATE += (0.00749779, 0.00348449, 0.00231457, 0.0001204)


def test_a_store_without_a_gap_says_no_gap_and_its_findings_say_the_samples_span_it_covers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """F5, F6: no gap clause of float residue; the finding's "13 samples over" is the coverage's span."""
    store = tmp_path / "slab.sqlite"
    udp_leak_store(store, samples=13, interval=5.0, sockets_per_hour=1_200_000, late=lambda i: LATE[i])
    text, doc = run_leaks(monkeypatch, capsys, store)
    assert doc["power"]["unobserved_seconds"] == 0.0, doc["power"]
    assert "in gaps" not in text and "e-1" not in text, text
    assert "cannot judge yet: 13 samples over 60 s, needs >= 24" in text, text
    # Each too-short finding said "13 samples over 57 s" (the window medians' span) beside that: now the samples'.
    short = [f for f in doc["incident"]["findings"] if "13 samples" in f["summary"]]
    assert short, [f["summary"] for f in doc["incident"]["findings"]]
    for finding in short:
        assert "13 samples over 60 s, needs >= 24" in finding["summary"], finding["summary"]


def _rise_and_give_back(i: int, h: float) -> int:
    """Up 2,000 objects a sample, and most of it given back at once after sample 20 (then up again)."""
    return 10_000 + 2_000 * i - (30_000 if i >= 20 else 0)


def test_a_series_that_gave_back_more_than_a_leak_may_is_titled_as_moving_not_growing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """F7: a series whose largest drawdown is over the leak bar's 30% was titled "grows N KB/h, too short to call"
    while its own facts said it gave back most of its rise; its title says it moves, with the fitted rate and the
    share given back, for a slab cache and a meminfo field alike."""
    store = tmp_path / "moves.sqlite"

    def meminfo(i: int, h: float) -> str:
        return meminfo_text(4_000_000, 100_000, {"PageTables": 30_000 + 1_000 * i - (15_000 if i >= 20 else 0)})

    write_store(store, [Cache("vm_area_struct", 176, _rise_and_give_back)], 31, 5.0, meminfo)
    _, doc = run_leaks(monkeypatch, capsys, store)
    for name in ("Slab cache vm_area_struct ", "PageTables (page tables) "):
        [finding] = [f for f in doc["incident"]["findings"] if f["title"].startswith(name)]
        title = finding["title"]
        drawdown = next(f["value"] for f in finding["facts"] if f["name"] == "reclaim")
        assert int(drawdown.split("largest drawdown ")[1].split("%")[0]) > 30, drawdown
        assert " grows " not in title and "moves up and down (+" in title, title
        assert "KB/h fitted, gave back " in title and "% of its rise)" in title, title


def test_a_steady_rise_is_still_titled_as_growing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The control: a ramp that never gives back keeps "grows N KB/h, too short to call"."""
    store = tmp_path / "ramp.sqlite"
    write_store(store, [Cache("vm_area_struct", 176, lambda i, h: 10_000 + 300 * i)], 31, 5.0)
    _, doc = run_leaks(monkeypatch, capsys, store)
    [finding] = [f for f in doc["incident"]["findings"] if "vm_area_struct" in f["title"]]
    assert " grows " in finding["title"] and "moves" not in finding["title"], finding["title"]


def test_spans_under_ten_minutes_keep_their_figure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """ "31 samples over 3 min" of 150 s: whole minutes overstated it 20%; now a tenth of a minute under 10 min."""
    assert duration(150.0) == "2.5 min" and duration(180.0) == "3 min" and duration(126.5) == "2.1 min"
    assert duration(100.0) == "100 s" and duration(1800.0) == "30 min" and duration(3.0 * 3600) == "3.0 h"
    # A least span is rounded up at the precision said: never below the figure it bounds.
    assert duration_up(126.5) == "2.2 min" and duration_up(115.07) == "115 s"
    store = tmp_path / "slab150.sqlite"
    udp_leak_store(store, samples=31, interval=5.0)
    text, _ = run_leaks(monkeypatch, capsys, store)
    assert "31 samples over 2.5 min" in text and "over 3 min" not in text, text
