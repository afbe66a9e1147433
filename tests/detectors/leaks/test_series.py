"""Per-boot matrices and window medians."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from detectors.leaks.series import resample, slab_matrices, window_for
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
