"""Grading rules that need more than one series' shape: objects in use, reclaimable floors."""

from __future__ import annotations

import numpy as np
import pandas as pd

from detectors.leaks.analysis import LeakInput, analyse
from forensics.model import Severity
from forensics.types.leaks import Grade
from tests.detectors.leaks.frames_for_tests import slab_frame, two_hours


def test_slabs_that_grow_without_objects_in_use_are_only_suspect() -> None:
    walls, hours = two_hours()
    frame = slab_frame(walls, {"foo_cache": (512, 1_000 + 8_000 * hours)})
    frame["active_objs"] = 900  # the objects in use stay put: free objects are kept in slabs
    result = analyse(LeakInput(frame))
    [verdict] = [v for v in result.caches if v.name == "foo_cache"]
    assert verdict.grade is Grade.SUSPECT
    assert verdict.verdict.rule == "slabs-not-objects"
    assert verdict.active_rate is not None and abs(verdict.active_rate) < 1


def test_a_reclaimable_cache_growing_without_reclaim_is_info_only() -> None:
    walls, hours = two_hours()
    frame = slab_frame(walls, {"dentry": (192, 100_000 + 30_000 * hours)})
    [finding] = analyse(LeakInput(frame, reclaim_account={"dentry": True})).findings
    assert finding.severity is Severity.INFO
    assert "reclaimable" in finding.title


def test_a_reclaimable_cache_whose_floor_rises_through_reclaim_is_suspect() -> None:
    walls, hours = two_hours()
    floor = 100_000 + 20_000 * hours  # the floor it returns to after each reclaim keeps rising
    teeth = 40_000 * np.mod(hours, 0.5) / 0.5
    frame = slab_frame(walls, {"dentry": (192, floor + teeth)})
    result = analyse(LeakInput(frame, reclaim_account={"dentry": True}))
    [verdict] = [v for v in result.caches if v.name == "dentry"]
    assert verdict.verdict.rule == "floor-rises-through-reclaim"
    assert verdict.grade is Grade.SUSPECT


def _vmstat(walls: np.ndarray, slabs_scanned: np.ndarray) -> pd.DataFrame:  # type: ignore[type-arg]
    return pd.DataFrame(
        {
            "sample_id": np.arange(1, len(walls) + 1),
            "wall": walls,
            "boot_id": "boot-1",
            "source": "vmstat",
            "name": "slabs_scanned",
            "unit": "",
            "value": slabs_scanned.astype(np.int64),
        }
    )


def test_a_drawdown_without_the_shrinkers_running_is_not_reclaim() -> None:
    walls, hours = two_hours()
    floor = 100_000 + 20_000 * hours
    teeth = 40_000 * np.mod(hours, 0.5) / 0.5  # files deleted, not reclaim: slabs_scanned never moves
    frame = slab_frame(walls, {"dentry": (192, floor + teeth)})
    quiet = _vmstat(walls, np.full(len(walls), 129))
    [verdict] = [v for v in analyse(LeakInput(frame, quiet, reclaim_account={"dentry": True})).caches]
    assert verdict.grade is Grade.RECLAIMABLE
    assert "shrinkers did not run" in verdict.verdict.reason
    busy = _vmstat(walls, 129 + 1000 * np.arange(len(walls)))
    [verdict] = [v for v in analyse(LeakInput(frame, busy, reclaim_account={"dentry": True})).caches]
    assert verdict.verdict.rule == "floor-rises-through-reclaim"


def _given_back_frame(name: str) -> pd.DataFrame:
    """Two hours of a cache whose teeth grow but whose floor stays: every 24 min it falls back to 200,000 objects."""
    walls, hours = two_hours()
    teeth = np.where(np.mod(hours, 0.4) / 0.4 < 0.25, 200_000, 200_000 + 120_000 * hours)
    return slab_frame(walls, {name: (512, np.where(hours < 0.05, 100_000, teeth))})


def test_a_cache_that_gives_its_growth_back_is_not_said_reclaimable_unless_it_is() -> None:
    # Rule given-back judges only caches rule reclaimable did not take: before, it graded them "growing but
    # reclaimable" and titled "foo_cache grows 60,000 KB/h but is reclaimable" with reclaim_account 0 read.
    frame = _given_back_frame("foo_cache")
    result = analyse(LeakInput(frame, reclaim_account={"foo_cache": False}))
    [verdict] = result.caches
    assert verdict.verdict.rule == "given-back"
    [finding] = result.findings
    assert finding.severity is Severity.INFO
    assert "reclaimable" not in finding.title and "gave back 54% of its range" in finding.title
    assert verdict.grade.value == "growing but given back"
    assert finding.fact("reclaimable") == "no: its reclaim_account flag is 0 (read from /sys/kernel/slab)"
    # Its flag not read: what the name tells, and why the flag is unknown.
    [finding] = analyse(LeakInput(frame)).findings
    said = finding.fact("reclaimable") or ""
    assert said == (
        "unknown: no reclaim_account flag was read for it (see reclaim_account); "
        "judged not reclaimable (a cache of no known kind)"
    )
    # SLAB_RECLAIM_ACCOUNT, yet held by its owners: the flag is said, and what holds it.
    sock = _given_back_frame("sock_inode_cache")
    [finding] = analyse(LeakInput(sock, reclaim_account={"sock_inode_cache": True})).findings
    assert "reclaimable" not in finding.title
    assert (finding.fact("reclaimable") or "").startswith("no: its reclaim_account flag is 1 (counted in")
