"""slabinfo/meminfo rows that do not parse or hold impossible values, and sample times that go back (issue 19).

Rows are counted and cited (file:line) in slab-import and in the live watch, never
dropped silently; two snapshots of one time are refused; times going back are said.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from collectors import procfs
from collectors.slabimport import load_snapshots
from collectors.slabstore import SlabStore
from detectors.snapshot_input import rejected_rows, times_going_back, wall_clock_steps
from forensics.errors import InputError
from tests.collectors.test_procfs import FakeTree, cache, slabinfo_text
from tests.collectors.test_slabimport import block
from tests.collectors.test_slabwatch import watch
from tests.forensics.test_cli import run
from tests.helpers import assert_evidence_resolves

BAD_ROWS = {
    "missing column": "dentry 600 640 192 21 1 : tunables 0 0 : slabdata 30 30 0",
    "negative": "inode_cache -5 640 600 13 2 : tunables 0 0 0 : slabdata 50 50 0",
    "absurd": "kmalloc-8k 99999999999999999999 640 8192 4 8 : tunables 0 0 0 : slabdata 160 160 0",
    "active > total": "files_cache 9000 640 704 23 4 : tunables 0 0 0 : slabdata 28 28 0",
}


def _damaged_slabinfo() -> str:
    lines = slabinfo_text([cache("kmalloc-64", 6400), cache("task_struct", 300, 6016, 5)]).splitlines()
    return "\n".join([*lines[:2], *BAD_ROWS.values(), *lines[2:]]) + "\n"


def test_parser_lists_each_bad_row_with_its_line_and_why() -> None:
    parsed = procfs.parse_slabinfo(_damaged_slabinfo().encode(), "slabinfo")
    assert [c.name for c in parsed.caches] == ["kmalloc-64", "task_struct"]
    assert [r.line for r in parsed.rejected] == [3, 4, 5, 6]
    assert [r.text for r in parsed.rejected] == list(BAD_ROWS.values())
    assert "columns" in parsed.rejected[0].reason and "more active" in parsed.rejected[3].reason
    mem = procfs.parse_meminfo(b"MemTotal: 8048036 kB\nMemFree: 99999999999999999999 kB\nSlab:\n", "meminfo")
    assert [c.name for c in mem.counters] == ["MemTotal"]
    assert [r.line for r in mem.rejected] == [2, 3]


def _snapshot_file(tmp: Path, walls: list[int], damaged: int | None = None) -> Path:
    text = ""
    for i, wall in enumerate(walls):
        one = block(i, wall, 10.0 + i, i * 20)
        if i == damaged:
            one = one.replace(
                slabinfo_text([]).splitlines()[1] + "\n",
                slabinfo_text([]).splitlines()[1] + "\n" + BAD_ROWS["missing column"] + "\n",
            )
            one = one.replace("MemFree:         1204544 kB", "MemFree:")
        text += one
    path = tmp / "samples.txt"
    path.write_text(text)
    return path


def test_import_cites_the_rows_it_left_out(tmp_path: Path) -> None:
    path = _snapshot_file(tmp_path, [1700000000 + 60 * i for i in range(4)], damaged=2)
    loaded = load_snapshots([path])
    assert len(loaded.rejected) == 2
    findings = rejected_rows(loaded.rejected)
    assert findings and findings[0].fact("rows left out") == "2"
    # What each row was compared with (it named none: a low finding without its baseline).
    said = findings[0].baseline
    assert said is not None and said.name.startswith("every row as the kernel prints it")
    assert said.value.startswith(f"0 rows left out (here 2: {loaded.rejected[0][1].reason}")
    lines = path.read_text().splitlines()
    for item in findings[0].evidence:
        assert item.source == str(path) and lines[item.locator.start - 1] == item.excerpt
    assert_evidence_resolves(findings)
    store = tmp_path / "s.sqlite"
    result = run("slab-import", "--store", store, "--host", "h", path, "--format", "json", "--no-analysis")
    assert result.returncode in (0, 1), result.stderr
    doc = json.loads(result.stdout)
    kinds = [f["kind"] for f in doc["incident"]["findings"]]
    assert "snapshot-rows-rejected" in kinds
    with SlabStore.open(store, readonly=True) as reader:
        assert len(reader.samples()) == 4  # the good rows of the damaged snapshot are still imported


def test_duplicate_sample_times_are_refused(tmp_path: Path) -> None:
    # The same file given twice: the same times and the same uptimes (#32: a wall time met again at
    # another uptime is a clock step, not a duplicate).
    path = _snapshot_file(tmp_path, [1700000000, 1700000060, 1700000120])
    with pytest.raises(InputError, match="same time"):
        load_snapshots([path, path])
    result = run("slab-import", "--store", tmp_path / "s.sqlite", "--host", "h", path, path)
    assert result.returncode == 3 and "same time" in result.stderr and "Traceback" not in result.stderr


def test_reversed_sample_times_are_said(tmp_path: Path) -> None:
    path = _snapshot_file(tmp_path, [1700000180, 1700000120, 1700000060, 1700000000])
    path.write_text(re.sub(r" uptime=[\d.]+", "", path.read_text()))  # no uptime: wall time is all there is
    loaded = load_snapshots([path])
    assert [s.wall for s in loaded.snapshots] == sorted(s.wall for s in loaded.snapshots)
    findings = times_going_back(loaded.out_of_order)
    assert len(loaded.out_of_order) == 3 and findings and "go back 3 times" in findings[0].title
    said = findings[0].baseline
    assert said is not None and said.source == "the file's own snapshot above it"
    later = loaded.out_of_order[0].later.line
    assert said.value == f"at or after 2023-11-14T22:16:20+00:00 ({path}:1); {path}:{later} is 60.000 s earlier"
    assert_evidence_resolves(findings)


def test_times_going_back_while_uptime_goes_on_are_clock_steps(tmp_path: Path) -> None:
    path = _snapshot_file(tmp_path, [1700000180, 1700000120, 1700000060, 1700000000])
    loaded = load_snapshots([path])
    assert not loaded.out_of_order and len(loaded.clock_steps) == 3
    assert [s.uptime for s in loaded.snapshots] == [10.0, 11.0, 12.0, 13.0]  # taken in this order
    findings = wall_clock_steps(loaded.clock_steps)
    assert findings and "stepped back" in findings[0].title
    said = findings[0].baseline
    assert said is not None and said.name.startswith(f"the wall time of {path}:1 plus the uptime that passed")
    assert said.value == "2023-11-14T22:16:21+00:00 (the line says 2023-11-14T22:15:20+00:00, -61.000 s)"
    assert_evidence_resolves(findings)


def test_live_watch_says_which_rows_it_left_out(tmp_path: Path) -> None:
    tree = FakeTree(tmp_path / "root")
    good = (tmp_path / "root/proc/slabinfo").read_text()
    seen = watch(
        tree,
        tmp_path / "s.sqlite",
        [lambda: tree.write("proc/slabinfo", _damaged_slabinfo()), lambda: tree.write("proc/slabinfo", good)],
    )
    assert not seen[0].doubtful
    assert len(seen[1].doubtful) == 4 and "slabinfo line 3" in seen[1].doubtful[0]
    assert not seen[2].doubtful
    with SlabStore.open(tmp_path / "s.sqlite", readonly=True) as store:
        stored = store.samples()[1].missing
        assert stored is not None and "4 rows left out" in stored and "line 3" in stored


def test_live_watch_flags_a_wall_clock_going_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A clock stepped back between samples (NTP): the sample is kept, flagged in the store and the progress."""
    from collectors import slabwatch

    tree = FakeTree(tmp_path / "root")
    walls = iter([1700000100.0, 1700000000.0, 1700000200.0])
    real = slabwatch.take_sample

    def stepped(root: Path, kmsg: object) -> object:
        from dataclasses import replace

        return replace(real(root, kmsg), wall=next(walls))  # type: ignore[arg-type]

    monkeypatch.setattr(slabwatch, "take_sample", stepped)
    seen = watch(tree, tmp_path / "s.sqlite", [None, None])
    # Back 100 s, then forward 200 s, while uptime went on: two steps of the wall clock (#32), each said once
    # and stored on the monotonic clock, so the stored times stay in order (no "went back" beside a step).
    assert not seen[0].doubtful
    assert any("stepped -100.000 s" in d for d in seen[1].doubtful), seen[1].doubtful
    assert any("stepped +200.000 s" in d for d in seen[2].doubtful), seen[2].doubtful
    assert not any("went back" in d for s in seen for d in s.doubtful)
    with SlabStore.open(tmp_path / "s.sqlite", readonly=True) as store:
        samples = store.samples()
        assert "stepped -100.000 s" in (samples[1].missing or "")
        walls = [s.wall for s in samples]
        assert walls == sorted(walls) and walls[-1] - walls[0] < 60, walls
