"""A step of the wall clock within one boot is measured across by uptime and said as an event, never read as a gap.

ue21 #7: a real UDP leak's store with the wall clock of its last 20 samples moved +1 h (uptime as recorded) read
"grew ... in 59 min" at confidence 0.01 and the leak vanished; moved -1 h it read "46 samples over -3.6e+03 s",
nothing judged.  Here: udp_leak_store's 2 h of 60-s samples, the wall time of samples 61 on moved by sqlite as
that store's was, the uptime left as recorded.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from detectors.leaks.clock import on_uptime
from tests.detectors.leaks.storebuild import run_leaks, udp_leak_store
from tests.helpers import cli_in_process


def _store(path: Path, step: float = 0.0, reboot: bool = False) -> Path:
    udp_leak_store(path)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE samples SET wall = wall + ? WHERE id > 60", (step,))
        if reboot:  # a new boot from sample 61: its own boot id, its uptime from 100 s
            db.execute("UPDATE samples SET boot_id = 'boot-2', uptime = uptime - 3500 WHERE id > 60")
    return path


def _udp(doc: dict[str, Any]) -> dict[str, Any]:
    [udp] = [s for s in doc["series"] if s["name"] == "UDP"]
    return udp


@pytest.mark.parametrize("step", [3600.0, -3600.0])
def test_a_wall_clock_step_within_a_boot_is_measured_by_uptime_and_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], step: float
) -> None:
    _, plain = run_leaks(monkeypatch, capsys, _store(tmp_path / "ok.sqlite"))
    text, doc = run_leaks(monkeypatch, capsys, _store(tmp_path / "step.sqlite", step))
    # The leak as without the step: its rate, grade and span measured on uptime, nothing marked across a gap.
    udp, ok = _udp(doc), _udp(plain)
    assert udp["grade"] == ok["grade"] == "leak", udp
    assert udp["rate_bytes_per_hour"] == pytest.approx(ok["rate_bytes_per_hour"], rel=1e-6)
    assert udp["span_hours"] == pytest.approx(ok["span_hours"], rel=1e-6)
    assert udp["across"] == [], udp["across"]
    assert "gap in sampling" not in text and "step back of the wall clock" not in text and "over -" not in text
    assert doc["power"]["span_seconds"] == plain["power"]["span_seconds"]
    found = {f["kind"]: f for f in doc["incident"]["findings"]}
    group = next(f for f in doc["incident"]["findings"] if f["title"].startswith("UDP sockets leak"))
    assert "lowered" not in group["confidence_reason"] and "not a fact" not in group["title"], group
    # The step itself: an event of its own, low, citing the samples on both sides; said where the samples are.
    said = found["snapshot-clock-step"]
    sign = "+" if step > 0 else "-"
    assert said["title"].startswith(f"The wall clock stepped {sign}60 min at sample 61 while uptime went on"), said
    assert said["severity"] == "low"
    assert [e["locator"]["start"] for e in said["evidence"]] == [60, 61], said["evidence"]
    assert f"the wall clock stepped {sign}60 min between samples 60 and 61" in text, text
    assert "spans and rates measured by uptime" in text
    assert doc["clock_steps"] == [
        {
            "before": 60,
            "after": 61,
            "seconds": step,
            "read": pytest.approx(1_780_003_600.0 + step),
            "placed": 1_780_003_600.0,
            "uptime_seconds": 60.0,
        }
    ]


def test_a_gap_where_the_uptime_jumps_too_stays_a_gap() -> None:
    """A suspend or a stopped sampler: the uptime (CLOCK_BOOTTIME counts a suspend) passed as the wall clock did."""
    walls = [0.0, 60.0, 1860.0, 1920.0]
    line = on_uptime([1, 2, 3, 4], walls, [10.0, 70.0, 1870.0, 1930.0], ["b"] * 4)
    assert line.steps == line.reboots == () and line.placed.tolist() == walls
    # NTP's slew and a sampler's jitter are no step: 1.5 s off over 60 s of uptime.
    line = on_uptime([1, 2], [0.0, 61.5], [10.0, 70.0], ["b", "b"])
    assert line.steps == () and line.placed.tolist() == [0.0, 61.5]


def test_at_a_reboot_nothing_is_carried_over() -> None:
    """A step before a reboot moves the rest of its boot only; the next boot (another boot id, or its uptime back)
    keeps its own wall clock."""
    ids, up = [1, 2, 3, 4, 5], [10.0, 70.0, 130.0, 5.0, 65.0]
    walls = [0.0, 60.0, 3720.0, 3800.0, 3860.0]
    for boots in (["a", "a", "a", "b", "b"], ["a"] * 5, [None] * 5):
        line = on_uptime(ids, walls, up, boots)
        assert [(s.before, s.after) for s in line.steps] == [(2, 3)], boots
        assert line.placed.tolist() == [0.0, 60.0, 120.0, 3800.0, 3860.0], boots
        [reboot] = line.reboots
        assert (reboot.before, reboot.after, reboot.boot_changed) == (3, 4, boots[3] == "b"), reboot
    # A sample without its uptime keeps the boot's placement (nothing says the clock stepped back there).
    line = on_uptime(ids, walls, [10.0, 70.0, 130.0, None, 250.0], ["a"] * 5)
    assert line.reboots == () and line.placed.tolist() == [0.0, 60.0, 120.0, 200.0, 260.0]


def test_a_reboot_is_said_and_each_boot_judged_on_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Across a reboot the wall clock is kept (each boot judged alone), and no step is made of its uptime going back."""
    text, doc = run_leaks(monkeypatch, capsys, _store(tmp_path / "reboot.sqlite", reboot=True))
    assert doc["boots"] == 2 and "clock_steps" in doc and doc["clock_steps"] == []
    assert {s["boot_id"] for s in doc["series"] if s["name"] == "UDP"} == {"boot-1", "boot-2"}
    assert "snapshot-clock-step" not in {f["kind"] for f in doc["incident"]["findings"]}
    assert "a reboot between samples 60 and 61" in text, text


def test_a_gap_the_uptime_shows_is_said_as_no_clock_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 31-min stop of the sampler, the uptime passing as the wall clock did: "a suspend, a stopped sampler or a
    clock step" offered a step the uptime rules out.  Without uptimes the step stays possible, and is said."""
    store = tmp_path / "gap.sqlite"
    udp_leak_store(store, late=lambda i: 1800.0 if i >= 60 else 0.0)
    text, doc = run_leaks(monkeypatch, capsys, store)
    assert "a 31 min gap in sampling from" in text, text
    assert "a suspend or a stopped sampler (the uptime passed as much as the wall clock: no clock step)" in text
    assert "or a clock step" not in text and doc["clock_steps"] == []
    with sqlite3.connect(store) as db:
        db.execute("UPDATE samples SET uptime = NULL")
    text, _ = run_leaks(monkeypatch, capsys, store)
    assert "a suspend, a stopped sampler or a clock step" in text, text


def test_a_step_back_in_a_store_without_uptime_is_said_and_no_span_is_made_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """ue23 #11: slab-import of timestamped files stores no uptime; a step back of 1 h said "46 samples over
    -3.6e+03 s".  Without an uptime nothing measures across it: said, no span made across it, each side judged
    apart (tests/detectors/leaks/test_step_back_without_uptime.py)."""
    store = _store(tmp_path / "noup.sqlite", -3600.0)
    with sqlite3.connect(store) as db:
        db.execute("UPDATE samples SET uptime = NULL")
    text, doc = run_leaks(monkeypatch, capsys, store)
    said = (
        "121 samples judged in 2 stretches apart: samples 1 to 60 (60 over 59 min every 60 s), samples 61 to 121"
        " (61 over 60 min every 60 s)"
    )
    assert said in text, text
    assert "a 59 min step back of the wall clock between samples 60 and 61" in text, text
    assert "over -" not in text and "e+03" not in text
    assert doc["power"]["unmeasured"] is None
    assert doc["power"]["span_seconds"] >= 0


def test_each_boot_is_counted_in_what_was_examined_and_named_in_the_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """ue23 #10: a store of two boots said "examined: 26 samples over 25 s" of 46 samples, and its table listed
    the caches of both boots with nothing saying which."""
    text, doc = run_leaks(monkeypatch, capsys, _store(tmp_path / "reboot.sqlite", reboot=True))
    assert "121 samples of 2 boots: boot 1 (60 over 59 min every 60 s), boot 2 (61 over 60 min every 60 s)" in text
    assert "in the longest boot's 61 samples over 60 min" in text, text
    assert [(b["boot_id"], b["samples"]) for b in doc["power"]["boots"]] == [("boot-1", 60), ("boot-2", 61)]
    code, table = cli_in_process(monkeypatch, capsys, "leaks", "--store", str(tmp_path / "reboot.sqlite"))
    assert code in (0, 1), table
    header = next(line for line in table.splitlines() if line.startswith("grade"))
    assert header.split()[:3] == ["grade", "series", "boot"], header
    rows = [line.split() for line in table.splitlines() if " UDP " in f" {line} " and line.startswith("growing")]
    assert sorted(r[r.index("UDP") + 1] for r in rows) == ["1", "2"], rows


def test_each_boot_says_its_own_interval_and_windows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A store of two boots, the first sampled every minute, the second every 10 min: the summary line said the last
    boot's cadence of the whole store ("121 samples every 10 min (medians of ... windows), 2 boot(s)"), the examined
    line "boot 1 60 over 59 min, boot 2 61 over 10.0 h every 60 s" (the first boot's interval said of both) and the
    JSON's one interval_seconds was the last boot's.  Each boot now says its own."""
    store = tmp_path / "two.sqlite"
    udp_leak_store(store, late=lambda i: 540.0 * (i - 60) if i >= 60 else 0.0)
    with sqlite3.connect(store) as db:
        db.execute("UPDATE samples SET boot_id = 'boot-2', uptime = uptime - 3500 WHERE id > 60")
    text, doc = run_leaks(monkeypatch, capsys, store)
    assert "boot 1 (60 over 59 min every 60 s), boot 2 (61 over 10.0 h every 10 min)" in text, text
    assert "every 60 s, boot 2" not in text
    code, table = cli_in_process(monkeypatch, capsys, "leaks", "--store", str(store))
    assert code in (0, 1)
    summary = table.splitlines()[1]
    assert summary.startswith("121 samples (boot 1 every 60 s, medians of ") and "; boot 2 every 10 min, " in summary
    # Series counted once however many boots judged them (before: "8 caches (11 moved enough to judge), 12 meminfo
    # series" of 8 caches and 6 fields).
    assert re.search(r"8 caches \([1-8] moved enough to judge\), 6 meminfo series;", summary), summary
    assert [b["interval_seconds"] for b in doc["power"]["boots"]] == [60.0, 600.0], doc["power"]["boots"]
    assert all(b["window_seconds"] >= b["interval_seconds"] for b in doc["power"]["boots"])


def test_the_reports_boot_time_of_a_store_of_two_boots_says_whose_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`kforensic report --store` of two boots gave "Boot time | <the last boot's> (slab store: sample wall time minus
    /proc/uptime)" beside a time window spanning both boots, the first boot's start unsaid."""
    store = _store(tmp_path / "reboot.sqlite", reboot=True)
    out = tmp_path / "report.md"
    code, text = cli_in_process(monkeypatch, capsys, "report", "--store", str(store), "-o", str(out))
    assert code in (0, 1), text
    [row] = [line for line in out.read_text().splitlines() if line.startswith("| Boot time |")]
    assert "of the last of its 2 boots (samples 61 to 121); the others booted: boot 1 (samples 1 to 60) at 20" in row


def test_a_small_step_back_under_the_step_rule_is_placed_on_the_uptime(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The wall clock set back 1.5 s between two 1-s samples, every sample with its uptime: under the step rule's 2 s,
    the later sample read 0.5 s before the earlier one, and the store said "cannot judge: 120 samples; the wall clock
    went back 0.5 s ...: no uptime in the store to measure across it" (it had one) beside findings at 0.5 "measured
    across a 0.5 s step back".  A clock that reads earlier than the sample before was stepped: placed on the uptime,
    the leak read as without the step."""
    plain, stepped = tmp_path / "plain.sqlite", tmp_path / "back.sqlite"
    for store in (plain, stepped):
        udp_leak_store(store, samples=120, interval=1.0, sockets_per_hour=1_200_000)
    with sqlite3.connect(stepped) as db:
        db.execute("UPDATE samples SET wall = wall - 1.5 WHERE id > 60")
    _, ok = run_leaks(monkeypatch, capsys, plain)
    text, doc = run_leaks(monkeypatch, capsys, stepped)
    assert "cannot judge" not in text and "no uptime in the store" not in text, text
    assert "the wall clock stepped -1.5 s between samples 60 and 61" in text, text
    assert [s["after"] for s in doc["clock_steps"]] == [61]
    udp, udp_ok = _udp(doc), _udp(ok)
    assert udp["grade"] == udp_ok["grade"] == "leak" and udp["across"] == [], udp
    assert udp["rate_bytes_per_hour"] == pytest.approx(udp_ok["rate_bytes_per_hour"], rel=0.001)
    assert not [f["title"] for f in doc["incident"]["findings"] if "(measured across" in f["title"]]


def test_a_finding_found_in_both_boots_says_its_span_crosses_the_reboot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each boot is judged on its own, and a series found in both merges into one finding: `kforensic report` gave
    "Slab cache UDP grows 3,954 KB/h, too short to call" an interval of 2.0 h across the reboot, of two boots of 1 h
    each, unmarked."""
    _, doc = run_leaks(monkeypatch, capsys, _store(tmp_path / "reboot.sqlite", reboot=True))
    [udp] = [f for f in doc["incident"]["findings"] if f["title"].startswith("Slab cache UDP")]
    assert udp["title"].endswith("(found on each side of a reboot, judged apart: its span not a fact)"), udp["title"]
    assert any(
        f["name"] == "caveat" and f["value"].startswith("found on each side of a reboot between samples 60 and 61")
        for f in udp["facts"]
    ), udp["facts"]
