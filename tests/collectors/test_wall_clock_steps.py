"""Issue #32 item 2: the wall clock steps back one hour mid-run while uptime goes on.

Before the fix the step was read as a reboot: the series were split at it and
the slab-leak fixture's leak was not found (slab-import said nothing, exit 0).
Now the boot is decided from uptime, the step is a flagged event, and growth
is measured on the monotonic clock across it.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from collectors.slabimport import load_snapshots
from collectors.slabstore import SlabStore
from tests.collectors.test_procfs import FakeTree
from tests.collectors.test_slabwatch import watch
from tests.forensics.commands.test_slabwatch_cli import kforensic

SNAPSHOTS = Path("vmcore_fixtures/cases/08-slab-leak/snapshots")
_DATE = re.compile(r"date=(\d+)")


def _stepped_copy(tmp: Path, step: int = -3600) -> tuple[Path, Path]:
    """The fixture's snapshots with the wall clock stepped by ``step`` s from the middle sample on."""
    copy = tmp / "snapshots"
    shutil.copytree(SNAPSHOTS, copy)
    files = sorted(copy.iterdir())
    middle = files[len(files) // 2]
    for file in files[len(files) // 2 :]:
        text = file.read_text()
        file.write_text(_DATE.sub(lambda m: f"date={int(m.group(1)) + step}", text, count=1))
    return copy, middle


def test_an_hour_step_back_is_one_boot_with_a_flagged_step_and_the_leak_found(tmp_path: Path) -> None:
    copy, middle = _stepped_copy(tmp_path)
    store = tmp_path / "s.sqlite"
    done = kforensic("slab-import", str(copy), "--store", str(store), "-f", "json")
    assert done.returncode == 0, done.stderr
    findings = json.loads(done.stdout)["incident"]["findings"]
    kinds = [f["kind"] for f in findings]
    assert any(f["kind"] == "slab-leak" and "kf_leak_obj" in f["title"] for f in findings), kinds
    steps = [f for f in findings if f["kind"] == "snapshot-clock-step"]
    assert len(steps) == 1, kinds
    assert "back 3,6" in steps[0]["title"]
    assert steps[0]["evidence"][0]["source"] == str(middle) and steps[0]["evidence"][0]["locator"]["start"] == 1
    with SlabStore.open(store) as reader:
        samples = reader.samples()
        assert len({s.boot_id for s in samples}) == 1  # not split into two boots
        walls = [s.wall for s in samples]
        assert walls == sorted(walls)  # on the monotonic clock: time goes on across the step
        assert walls[-1] - walls[0] < 200  # the 93 s run, not an hour


def test_the_step_is_typed_and_a_real_reboot_is_still_one(tmp_path: Path) -> None:
    copy, middle = _stepped_copy(tmp_path)
    loaded = load_snapshots([copy])
    assert [(s.source, s.line) for s in loaded.clock_steps] == [(str(middle), 1)]
    assert -3601 < loaded.clock_steps[0].seconds < -3599
    assert not loaded.out_of_order  # said once, as the step
    # A reboot (uptime back to a few seconds) with the wall clock going on is still a new boot.
    files = sorted(copy.iterdir())
    late = files[-1]
    text = late.read_text()
    late.write_text(re.sub(r"uptime=[\d.]+", "uptime=3.00", text, count=1))
    again = load_snapshots([copy])
    ups = [s.uptime for s in again.snapshots]
    assert ups.index(3.0) == len(ups) - 1  # the rebooted sample comes after the first boot's samples


def test_live_watch_places_samples_on_uptime_across_a_wall_clock_step(tmp_path: Path) -> None:
    # The wall clock stepping back an hour and uptime running an hour ahead of it are the same to the
    # watcher: the tree's /proc/uptime jumps 3600 s between two samples taken 10 ms apart.
    tree = FakeTree(tmp_path / "root")
    seen = watch(tree, tmp_path / "s.sqlite", [None, lambda: tree.write("proc/uptime", "3700.00 180.00\n"), None])
    notes = [n for p in seen for n in p.doubtful if "wall clock stepped" in n]
    assert len(notes) == 1 and "not a reboot" in notes[0]
    stepped = re.search(r"stepped ([-+][\d.]+) s", notes[0])
    assert stepped and -3601 < float(stepped.group(1)) < -3590
    with SlabStore.open(tmp_path / "s.sqlite") as reader:
        samples = reader.samples()
        walls = [s.wall for s in samples]
        assert walls == sorted(walls) and len({s.boot_id for s in samples}) == 1
        assert 3599 < walls[2] - walls[1] < 3601  # the uptime that passed, not the wall clock's 10 ms
        assert samples[2].missing is not None and "wall clock stepped" in samples[2].missing
