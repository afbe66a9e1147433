"""Samples of one boot with a hole in them (a suspend, a stopped sampler): the hole is said, never crossed silently.

The slab-leak fixture's snapshots (1 s apart) with the second half moved two hours later (date and
uptime alike, so it is one boot and no wall-clock step): a "no leak in 2.0 h" verdict or a rate over
the two hours would be a figure computed across a gap presented as fact.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers import cli_in_process

SNAPSHOTS = Path(__file__).resolve().parents[3] / "vmcore_fixtures/cases/08-slab-leak/snapshots"
_HEAD = re.compile(r"date=(\d+) uptime=([\d.]+)")


def test_a_two_hour_hole_in_the_samples_is_named_with_its_samples(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    files = sorted(SNAPSHOTS.iterdir())
    half = len(files) // 2
    snaps = tmp_path / "snaps"
    snaps.mkdir()
    for i, snap in enumerate(files):
        text = snap.read_text()
        if i >= half:
            text = _HEAD.sub(lambda m: f"date={int(m[1]) + 7200} uptime={float(m[2]) + 7200:.2f}", text, count=1)
        (snaps / snap.name).write_text(text)
    store = tmp_path / "gap.sqlite"
    code, _ = cli_in_process(monkeypatch, capsys, "slab-import", str(snaps), "--store", str(store), "--no-analysis")
    assert code == 0
    code, out = cli_in_process(monkeypatch, capsys, "leaks", "--store", str(store), "-f", "md")
    assert code in (0, 1)
    assert f"(samples {half} to {half + 1})" in out, out  # sample ids count from 1
    assert "not observed" in out and "a 2.0 h gap in sampling from" in out
    # without the hole: nothing said about gaps
    code, _ = cli_in_process(monkeypatch, capsys, "slab-import", str(SNAPSHOTS), "--store", str(tmp_path / "ok.sqlite"))
    code, out = cli_in_process(monkeypatch, capsys, "leaks", "--store", str(tmp_path / "ok.sqlite"), "-f", "md")
    assert "gap" not in out
