"""Per-boot matrices and window medians."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.slabstore import SlabStore
from detectors.leaks.analysis import LeakInput, analyse
from detectors.leaks.series import SeriesMatrix, counter_matrices, resample, slab_matrices
from forensics.types.leaks import window_for
from tests.detectors.leaks.frames_for_tests import slab_frame, two_hours


@settings(max_examples=60, deadline=None)
@given(
    samples=st.integers(2, 300),
    series=st.integers(1, 5),
    window=st.floats(1.0, 50.0),
    seed=st.integers(0, 2**16),
    gappy=st.booleans(),
)
def test_the_fast_medians_equal_grouped_medians(
    samples: int, series: int, window: float, seed: int, gappy: bool
) -> None:
    rng = np.random.default_rng(seed)
    walls = np.cumsum(rng.uniform(0.5, 3.0, samples)) if gappy else np.arange(samples, dtype=np.float64)
    values = rng.normal(0, 100, (samples, series))
    exact = rng.random(series) < 0.7
    centres, medians = resample(walls, values, window, exact)
    bins = np.floor((walls - walls[0]) / window).astype(np.int64)
    expected = pd.DataFrame(values).groupby(bins).median().to_numpy()
    means = pd.DataFrame(values).groupby(bins).mean().to_numpy()
    assert medians.shape == expected.shape == (len(centres), series)
    assert np.allclose(medians[:, exact], expected[:, exact])
    assert np.allclose(medians[:, ~exact], means[:, ~exact])
    assert np.all(np.diff(centres) > 0)


def test_a_reboot_splits_the_series_and_caches_may_come_and_go() -> None:
    walls, hours = two_hours()
    half = len(walls) // 2
    first = slab_frame(walls[:half], {"a": (64, 100 + hours[:half]), "b": (64, 50 + hours[:half])}, boot="one")
    second = slab_frame(walls[half:], {"a": (64, 10 + hours[half:])}, boot="two")
    second["sample_id"] += half
    frame = pd.concat([second, first], ignore_index=True)  # any row order
    one, two = slab_matrices(frame)
    assert (one.boot_id, two.boot_id) == ("one", "two")
    assert one.names == ("a", "b") and two.names == ("a",)
    assert list(one.sample_ids) == list(range(1, half + 1))
    assert one.raw[0, 0] == 100 * 64


def test_the_window_adapts_to_the_interval() -> None:
    assert window_for(7200, 60) == 300  # two hours of minutes: 5-minute medians
    assert window_for(30, 0.5) == 1.25  # half a minute of half seconds
    assert window_for(7 * 86400, 10) == 300
    assert window_for(100, 60) == 60  # never shorter than the interval


def _same_matrices(frame_side: list[SeriesMatrix], table_side: list[SeriesMatrix]) -> None:
    assert len(frame_side) == len(table_side) > 0
    for a, b in zip(frame_side, table_side, strict=True):
        assert (a.boot_id, a.names, a.window_seconds, a.interval_seconds) == (
            b.boot_id,
            b.names,
            b.window_seconds,
            b.interval_seconds,
        )
        for x, y in ((a.sample_ids, b.sample_ids), (a.walls, b.walls), (a.raw, b.raw), (a.grid, b.grid)):
            np.testing.assert_array_equal(x, y)  # bit for bit, NaN where a cache is absent
        for key in a.extra:
            np.testing.assert_array_equal(a.extra[key], b.extra[key])
        for key in a.grid_extra:
            np.testing.assert_array_equal(a.grid_extra[key], b.grid_extra[key])


def test_the_store_s_table_gives_the_matrices_and_verdicts_of_its_frame(tmp_path: Path) -> None:
    """Caches that come, go and are listed twice, a reboot, two runs: SlabTable and long frame agree exactly."""
    path = tmp_path / "store.sqlite"
    fixture = Path(__file__).resolve().parents[2] / "data" / "slabstore_v1" / "store.sqlite.gz"
    path.write_bytes(gzip.decompress(fixture.read_bytes()))
    with SlabStore.open_for_writing(path, "fixturehost"):
        pass  # migrated to the packed layout
    with SlabStore.open(path) as store:
        frame, table = store.slab_frame(), store.slab_table()
        counters, counter_table = store.counter_frame(), store.counter_table()
        run = store.runs()[-1].id
        run_frame, run_table = store.slab_frame(run), store.slab_table(run)
    assert len(table) == len(frame) and len(table.boot_ids) == 2
    _same_matrices(slab_matrices(frame, 1000.0), slab_matrices(table, 1000.0))
    _same_matrices(slab_matrices(run_frame), slab_matrices(run_table))
    since = float(frame["wall"].max()) - 3600.0
    _same_matrices(slab_matrices(frame[frame["wall"] >= since]), slab_matrices(table.between(since)))
    _same_matrices(counter_matrices(counters), counter_matrices(counter_table))
    _same_matrices(counter_matrices(counters, "vmstat"), counter_matrices(counter_table, "vmstat"))
    assert len(counter_table) == len(counters)
    vmstat = counter_table.frame(lambda source, _name: source == "vmstat")
    expected = counters[counters["source"] == "vmstat"][list(vmstat.columns)].reset_index(drop=True)
    pd.testing.assert_frame_equal(vmstat.astype(object), expected.astype(object))
    by_frame, by_table = analyse(LeakInput(frame, counters)), analyse(LeakInput(table, counter_table))
    assert by_frame.findings == by_table.findings and by_frame.findings
    assert (by_frame.samples, by_frame.cache_names, by_frame.first_wall, by_frame.last_wall) == (
        by_table.samples,
        by_table.cache_names,
        by_table.first_wall,
        by_table.last_wall,
    )
