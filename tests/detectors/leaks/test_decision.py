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
