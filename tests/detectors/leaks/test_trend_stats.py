"""The leak features' trend statistics give SciPy's results to the bit (detectors/leaks/trend_stats.py).

They are SciPy 1.17's arithmetic in numpy, kept out of ``scipy.stats`` for its import cost; here the installed
SciPy is the reference, on random series (with ties, steps, plateaus, constant stretches) as the features
shrink them (at most 200 points), and on the shapes a leak and a healthy cache give.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from detectors.leaks.trend_stats import Z_90, kendall_tau_b, ols_slope_r, theil_sen_90

# scipy.stats (1.1-1.7 s of CPU to import, and imported by no other test) is imported by these tests, on the one
# pytest-xdist worker of their group: imported here at collection, each of make test's three workers paid for it.
pytestmark = pytest.mark.xdist_group("scipy-stats")


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def _check(t: np.ndarray, y: np.ndarray) -> None:
    from scipy import stats

    with warnings.catch_warnings():  # extreme values overflow a slope in both, alike
        warnings.simplefilter("ignore")
        ours, ref = theil_sen_90(y, t), stats.theilslopes(y, t, alpha=0.90)
        tau, ref_tau = kendall_tau_b(t, y), float(stats.kendalltau(t, y).statistic)
        (slope, r), ols = ols_slope_r(t, y), stats.linregress(t, y)
    assert all(_same(float(a), float(b)) for a, b in zip(ours, ref, strict=True)), (ours, ref)
    assert _same(tau, ref_tau), (tau, ref_tau)
    assert _same(slope, float(ols.slope)) and _same(r, float(ols.rvalue)), ((slope, r), ols)


def test_the_interval_quantile_is_scipys() -> None:
    from scipy import stats

    assert stats.norm.ppf((1.0 - 0.90) / 2.0) == Z_90


_VALUES = st.one_of(
    st.integers(-5, 5).map(float),  # many ties
    st.floats(-1e12, 1e12, allow_nan=False),
    st.sampled_from([0.0, 4096.0, 8192.0, 1e9]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_VALUES, _VALUES), min_size=3, max_size=60))
def test_random_series_give_scipys_results(points: list[tuple[float, float]]) -> None:
    t = np.array([p[0] for p in points])
    y = np.array([p[1] for p in points])
    if float(np.ptp(t)) == 0.0:  # the features never ask for a slope over one instant
        return
    _check(t, y)


@pytest.mark.parametrize("shape", ["leak", "plateau", "step", "sawtooth", "flat", "noise"])
@pytest.mark.parametrize("n", [3, 7, 48, 200])
def test_leak_shapes_give_scipys_results(shape: str, n: int) -> None:
    rng = np.random.default_rng(n)
    t = np.cumsum(rng.uniform(0.002, 0.004, n))  # hours, 10 s samples with jitter
    base = 2.0e6
    y = {
        "leak": base + 9.1e5 * t + rng.normal(0, 4096, n).round(),
        "plateau": base + 1e6 * (1 - np.exp(-t / (t[-1] / 5 + 1e-9))),
        "step": base + np.where(np.arange(n) >= n // 2, 65536.0, 0.0),
        "sawtooth": base + 4096.0 * (np.arange(n) % 7),
        "flat": np.full(n, base),
        "noise": base + rng.integers(-3, 4, n) * 4096.0,
    }[shape]
    _check(t, y)
