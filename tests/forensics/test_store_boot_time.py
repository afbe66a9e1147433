"""A slab store's boot time: from every sample of its boot, to the resolution of the walls it holds.

The demo's store (the 08-slab-leak fixture's snapshots, ``date=`` in whole seconds) gave its boot from the last
sample alone, ±0.5 s: 0.81 s from its first sample's estimate, and its crash 20:18:04 beside the dump's CRASHTIME
20:18:05 (ue24 F14).  The dump that crashed is the reference here: its CRASHTIME minus the crash's printk time.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from collectors.slabstore import SlabStore
from forensics.model import BootTime
from forensics.pipelines.sources import store_boot_time
from tests.helpers import cli_in_process

CASE = Path(__file__).resolve().parents[2] / "vmcore_fixtures" / "cases" / "08-slab-leak"


def test_the_boot_time_holds_every_samples_reading_and_the_dumps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "slab.db"
    code, _ = cli_in_process(
        monkeypatch, capsys, "slab-import", str(CASE / "snapshots"), "--store", str(store), "--no-analysis"
    )
    assert code == 0
    boot = store_boot_time(store)
    assert isinstance(boot, BootTime), boot
    low, high = boot.wall - boot.uncertainty, boot.wall + boot.uncertainty
    with SlabStore.open(store, readonly=True) as opened:
        rows = opened.samples()
    assert len(rows) > 50 and all(r.wall == int(r.wall) for r in rows)  # the premise: whole-second walls
    for r in rows:  # taken up to 1 s after its date=
        assert r.uptime is not None
        assert low - 1e-6 <= r.wall - r.uptime and r.wall + 1 - r.uptime <= high + 1e-6, (r, boot)
    match = re.search(rb"CRASHTIME=(\d+)", (CASE / "vmcore").read_bytes())
    assert match is not None
    panic = re.search(r"^\[\s*(\d+\.\d+)\] Kernel panic - not syncing: sysrq", (CASE / "dmesg.txt").read_text(), re.M)
    assert panic is not None
    crashed = int(match.group(1)) - float(panic.group(1))  # CRASHTIME is whole seconds too: up to 1 s later
    assert low <= crashed + 1 and crashed <= high, (crashed, boot)


def test_a_converted_time_is_rounded_to_the_second_not_cut() -> None:
    """A time since boot converted with a boot time ±0.5 s was cut to the second: the crash 20:18:04.58 showed as
    20:18:04 beside the dump's 20:18:05 (ue24 F14).  Rounded, as the boot time itself; a wall time read (no
    conversion, uncertainty 0) is as the source printed it."""
    from forensics.model import Clock, Timestamp
    from forensics.types.incident import TimelineEvent

    def text(wall: float, uncertainty: float) -> str:
        ts = Timestamp(97.097476, Clock.MONOTONIC)
        return TimelineEvent(ts, wall, uncertainty, "f", "t", "c", "x").when_text()

    assert text(1796242684.58, 0.9) == "2026-12-02T20:18:05+00:00 (±0.9 s)"
    assert text(1796242684.58, 0.0) == "2026-12-02T20:18:04+00:00"
