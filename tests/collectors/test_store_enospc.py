"""Issue #32 item 6: the disk fills up (ENOSPC) at random points of slab-import and slab-watch.

The store is on a small real tmpfs, filled to a random level first, so the
disk runs out at a different sample each trial.  Either the run completes, or
it is exit 3 in one line saying how many samples the store keeps; the store is
then consistent (``PRAGMA integrity_check``), readable, and holds exactly that
many samples.  ``KF_FAULT_TRIALS`` sets the trials (default 3; see docs/cli.md
for the longer run).
"""

from __future__ import annotations

import os
import random
import re
from collections.abc import Callable
from pathlib import Path

from collectors.slabstore import SlabStore
from tests.collectors.test_procfs import FakeTree
from tests.forensics.commands.test_slabwatch_cli import fast_watch, kforensic
from tests.helpers import fill

TRIALS = int(os.environ.get("KF_FAULT_TRIALS", "3"))
SNAPSHOTS = Path("vmcore_fixtures/cases/08-slab-leak/snapshots")
_KEPT = re.compile(r"the store keeps (?:the )?(none|\d+)")


def _clear(where: Path) -> None:
    for item in where.iterdir():
        item.unlink()


def _kept_and_check(store: Path, stderr: str, code: int) -> int | None:
    """After a run: the samples it says it kept (None: completed) match a consistent, readable store."""
    errors = [line for line in stderr.splitlines() if line.startswith("kforensic: error: ")]
    if code == 0:
        said = None
    else:
        assert code == 3 and len(errors) == 1 and "Traceback" not in stderr, stderr
        if not store.exists():  # the disk was full before the store's tables were made: no empty store left
            assert "cannot create store" in errors[0], stderr
            return 0
        if "the store is unchanged" in errors[0]:  # the disk was full before this run wrote anything
            return 0
        found = _KEPT.search(errors[0])
        assert found and "full" in errors[0], stderr
        said = 0 if found.group(1) == "none" else int(found.group(1))
    with SlabStore.open(store) as reader:  # readable as is, on the full disk
        assert reader.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        samples = len(reader.samples())
    if said is not None:
        assert samples == said, (samples, stderr)
    return said


def _trials(small_tmpfs: Callable[[str], Path], run: Callable[[Path], tuple[int, str]], leave: tuple[int, int]) -> None:
    where = small_tmpfs("2m")
    rng = random.Random(6)
    outcomes = []
    for _ in range(TRIALS):
        _clear(where)
        fill(where, rng.randint(*leave))
        code, stderr = run(where / "s.sqlite")
        outcomes.append(_kept_and_check(where / "s.sqlite", stderr, code))
    print(f"kept per trial (None: completed): {outcomes}")


def test_slab_import_on_a_disk_that_fills_up(small_tmpfs: Callable[[str], Path]) -> None:
    def run(store: Path) -> tuple[int, str]:
        done = kforensic("slab-import", str(SNAPSHOTS), "--store", str(store), "--no-analysis")
        return done.returncode, done.stderr

    _trials(small_tmpfs, run, (150_000, 1_200_000))  # the 90 samples need about 240 KB, and their WAL more


def test_slab_watch_on_a_disk_that_fills_up(small_tmpfs: Callable[[str], Path], tmp_path: Path) -> None:
    tree = FakeTree(tmp_path / "root")

    def run(store: Path) -> tuple[int, str]:
        done = fast_watch(tree, store, "--duration", "0.6")
        return done.returncode, done.stderr

    _trials(small_tmpfs, run, (80_000, 400_000))


def test_a_disk_full_before_the_first_sample_keeps_none(small_tmpfs: Callable[[str], Path]) -> None:
    where = small_tmpfs("4m")
    done = kforensic("slab-import", str(SNAPSHOTS), "--store", str(where / "s.sqlite"), "--no-analysis")
    assert done.returncode == 0, done.stderr
    fill(where, 0)
    # A second import into the same store: the disk is full from its first sample on.
    done = kforensic("slab-import", str(SNAPSHOTS), "--store", str(where / "s.sqlite"), "--force", "--no-analysis")
    assert _kept_and_check(where / "s.sqlite", done.stderr, done.returncode) in (0, None)
