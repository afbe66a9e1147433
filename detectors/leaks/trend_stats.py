"""The three trend statistics of a leak's shape, in numpy: Theil–Sen with its 90% interval, Kendall's tau-b, OLS.

Why not ``scipy.stats``: importing it costs 1.1-1.7 s of CPU (its ~100 distributions and the generated
docstrings of every function), more than the rest of a ``kforensic leaks`` run on a day of samples, and
``kforensic report`` pays it too; the features need three functions on series of at most
:data:`detectors.leaks.features.MAX_SHAPE_POINTS` points.  Each function below is the arithmetic of
SciPy 1.17's (``theilslopes`` with ``method='separate'``, ``kendalltau`` variant b, ``linregress``) in the
same order, so the results are equal to the bit: ``tests/detectors/leaks/test_trend_stats.py`` checks it
against the installed SciPy on random series with and without ties.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

if TYPE_CHECKING:
    from forensics.types.leaks import FloatArray

#: ``scipy.stats.norm.ppf((1 - 0.90) / 2)``: the normal quantile of the 90% interval (the test checks it).
#: ``statistics.NormalDist().inv_cdf`` differs from it in the last bit, which can move an interval's index.
Z_90 = -1.6448536269514729


class TheilSen(NamedTuple):
    """The median slope, its intercept and the 90% confidence interval of the slope (Sen 1968)."""

    slope: float
    intercept: float
    low_slope: float
    high_slope: float


def _repeat_counts(values: FloatArray) -> FloatArray:
    """How often each value that occurs more than once occurs (scipy's ``_find_repeats``)."""
    arr = np.sort(np.asarray(values, dtype=np.float64).ravel())
    change = np.concatenate(([True], arr[1:] != arr[:-1]))
    freq = np.diff(np.concatenate((np.nonzero(change)[0], [arr.size])))
    return freq[freq > 1]


def theil_sen_90(y: FloatArray, x: FloatArray) -> TheilSen:
    """The Theil–Sen slope of ``y`` over ``x`` (at least two points) with its 90% interval, NaN where undefined."""
    y = np.array(y, dtype=float, copy=True).ravel()
    x = np.array(x, dtype=float, copy=True).ravel()
    deltax = x[:, np.newaxis] - x
    deltay = y[:, np.newaxis] - y
    slopes = deltay[deltax > 0] / deltax[deltax > 0]
    slopes.sort()
    medslope = float(np.median(slopes))  # NaN (and numpy's warning) when every x is equal, as scipy
    medinter = float(np.median(y) - medslope * np.median(x))
    nt, ny = len(slopes), len(y)
    ties = sum(int(k) * (int(k) - 1) * (2 * int(k) + 5) for k in (*_repeat_counts(x), *_repeat_counts(y)))
    sigsq = 1 / 18.0 * (ny * (ny - 1) * (2 * ny + 5) - ties)  # Sen (1968), equation 2.6
    if nt == 0 or sigsq < 0:
        return TheilSen(medslope, medinter, math.nan, math.nan)
    sigma = math.sqrt(sigsq)
    upper = min(int(np.round((nt - Z_90 * sigma) / 2.0)), nt - 1)
    lower = max(int(np.round((nt + Z_90 * sigma) / 2.0)) - 1, 0)
    return TheilSen(medslope, medinter, float(slopes[lower]), float(slopes[upper]))


def _dense_ranks(sorted_values: FloatArray) -> FloatArray:
    return np.r_[True, sorted_values[1:] != sorted_values[:-1]].cumsum(dtype=np.intp)  # type: ignore[no-any-return]


def _tie_pairs(ranks: FloatArray) -> int:
    cnt = np.bincount(ranks).astype("int64", copy=False)
    cnt = cnt[cnt > 1]
    return int((cnt * (cnt - 1) // 2).sum())


def kendall_tau_b(x: FloatArray, y: FloatArray) -> float:
    """Kendall's tau-b of two equally long series; NaN when either is empty or constant."""
    x, y = np.asarray(x).ravel(), np.asarray(y).ravel()
    size = x.size
    if size == 0:
        return math.nan
    perm = np.argsort(y)
    x, y = x[perm], _dense_ranks(y[perm])
    perm = np.argsort(x, kind="mergesort")
    x, y = _dense_ranks(x[perm]), y[perm]
    # Discordant pairs: one increases where the other decreases (an exact count, as scipy's merge sort's).
    dis = int(np.count_nonzero(np.sign(x[:, None] - x) * np.sign(y[:, None] - y) < 0)) // 2
    obs = np.r_[True, (x[1:] != x[:-1]) | (y[1:] != y[:-1]), True]
    cnt = np.diff(np.nonzero(obs)[0]).astype("int64", copy=False)
    ntie = int((cnt * (cnt - 1) // 2).sum())
    xtie, ytie = _tie_pairs(x), _tie_pairs(y)
    tot = (size * (size - 1)) // 2
    if tot in (xtie, ytie):
        return math.nan
    con_minus_dis = tot - xtie - ytie + ntie - 2 * dis
    tau = con_minus_dis / np.sqrt(tot - xtie) / np.sqrt(tot - ytie)
    return float(np.minimum(1.0, max(-1.0, tau)))


def ols_slope_r(x: FloatArray, y: FloatArray) -> tuple[float, float]:
    """The least-squares slope and Pearson's r (NaN when neither varies with the other) of ``y`` over ``x``."""
    ssxm, ssxym, _, ssym = np.cov(x, y, bias=True).flat
    if ssxm == 0.0 or ssym == 0.0:
        r = math.nan if ssxym == 0 else 0.0
    else:
        r = float(ssxym / np.sqrt(ssxm * ssym))
        if r > 1.0:  # rounding, as scipy clamps it (a NaN stays NaN)
            r = 1.0
        elif r < -1.0:
            r = -1.0
    return float(ssxym / ssxm), r
