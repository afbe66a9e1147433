"""Shape features of one resampled series: how fast, how steadily and in what shape it grows.

Every feature is computed on window medians (see :mod:`detectors.leaks.series`)
with times in hours, values in bytes.  None of them is a p-value: a day of
correlated samples makes any test "significant".  The decision
(:mod:`detectors.leaks.decision`) weighs effect size first and shape second.

* OLS slope and r² (SciPy's ``linregress`` arithmetic): linearity;
* Theil–Sen slope with a 90% confidence interval (SciPy's ``theilslopes``):
  the growth rate, robust to bursts and outliers;
* Kendall tau-b: how monotonic the growth is;
* persistence: the Theil–Sen slope of the second half over the first (a cache
  warming up to a plateau has persistence near 0, a leak near 1);
* maximum drawdown relative to the range: how much of its growth the cache
  gave back at some point (reclaim);
* rolling minima and their trend: the floor a reclaimable cache returns to;
* change points: a one-time step, a rise to a plateau and a late onset are
  fitted and compared with a straight line by their residuals;
* a daily cycle, when the stretch covers two days or more: the trend is then
  judged on 24-hour means.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from detectors.leaks.trend_stats import kendall_tau_b, ols_slope_r, theil_sen_90
from forensics.types.leaks import ChangePoint, Features

if TYPE_CHECKING:
    from forensics.types.leaks import FloatArray

#: Shape fits and Theil–Sen use at most this many points (medians of neighbouring windows beyond).
MAX_SHAPE_POINTS = 200


def _shrink(t: FloatArray, y: FloatArray, limit: int) -> tuple[FloatArray, FloatArray]:
    """At most about ``limit`` points: medians (and mean times) of runs of neighbouring points."""
    n = len(y)
    if n <= limit:
        return t, y
    size = -(-n // limit)
    full = (n // size) * size
    ts = t[:full].reshape(-1, size).mean(axis=1)
    ys = np.median(y[:full].reshape(-1, size), axis=1)
    if full < n:
        ts = np.append(ts, t[full:].mean())
        ys = np.append(ys, np.median(y[full:]))
    return ts, ys


def median_slope(t: FloatArray, y: FloatArray) -> float:
    """The Theil–Sen slope alone (median of pairwise slopes), without scipy's confidence interval."""
    t, y = _shrink(t, y, MAX_SHAPE_POINTS)
    n = len(y)
    if n < 2:
        return 0.0
    i, j = np.triu_indices(n, k=1)
    dt = t[j] - t[i]
    keep = dt != 0
    if not keep.any():
        return 0.0
    return float(np.median((y[j][keep] - y[i][keep]) / dt[keep]))


def _rss_line(t: FloatArray, y: FloatArray) -> float:
    tc = t - t.mean()
    yc = y - y.mean()
    sxx = float(tc @ tc)
    syy = float(yc @ yc)
    if sxx == 0.0:
        return syy
    sxy = float(tc @ yc)
    return max(syy - sxy * sxy / sxx, 0.0)


def best_step(t: FloatArray, y: FloatArray, rss_line: float) -> ChangePoint:
    """The one-time step (two flat levels) that fits best."""
    n = len(y)
    if n < 4 or rss_line <= 0.0:
        return ChangePoint(float(t[0]) if n else 0.0, 1.0, 0.0)
    c1 = np.cumsum(y)
    c2 = np.cumsum(y * y)
    j = np.arange(1, n)  # left part holds y[:j]
    left = c2[j - 1] - c1[j - 1] ** 2 / j
    right = (c2[-1] - c2[j - 1]) - (c1[-1] - c1[j - 1]) ** 2 / (n - j)
    rss = left + right
    best = int(np.argmin(rss))
    k = int(j[best])
    size = float(y[k:].mean() - y[:k].mean())
    return ChangePoint(float((t[k - 1] + t[k]) / 2.0), float(max(rss[best], 0.0) / rss_line), size)


def best_hinge(t: FloatArray, y: FloatArray, rss_line: float, rise_first: bool) -> ChangePoint:
    """The best rise-then-flat (``rise_first``) or flat-then-rise line with one knot."""
    n = len(y)
    if n < 5 or rss_line <= 0.0:
        return ChangePoint(float(t[-1]) if n else 0.0, 1.0, 0.0)
    knots = t[1:-1]
    x = np.minimum(t[None, :], knots[:, None]) if rise_first else np.maximum(t[None, :] - knots[:, None], 0.0)
    xc = x - x.mean(axis=1, keepdims=True)
    yc = y - y.mean()
    sxx = np.einsum("ij,ij->i", xc, xc)
    sxy = xc @ yc
    syy = float(yc @ yc)
    with np.errstate(divide="ignore", invalid="ignore"):
        rss = np.where(sxx > 0, syy - sxy * sxy / sxx, syy)
        slopes = np.where(sxx > 0, sxy / sxx, 0.0)
    best = int(np.argmin(rss))
    return ChangePoint(float(knots[best]), float(max(rss[best], 0.0) / rss_line), float(slopes[best]))


def best_fill(t: FloatArray, y: FloatArray, rss_line: float) -> ChangePoint:
    """The best smooth fill ``a + b(1 - exp(-t/tau))``: how a cache warming up approaches its size."""
    n = len(y)
    span = float(t[-1] - t[0]) if n else 0.0
    if n < 5 or rss_line <= 0.0 or span <= 0.0:
        return ChangePoint(span, 1.0, 0.0)
    taus = span * np.geomspace(0.02, 1.0, 40)
    x = 1.0 - np.exp(-(t[None, :] - t[0]) / taus[:, None])
    xc = x - x.mean(axis=1, keepdims=True)
    yc = y - y.mean()
    sxx = np.einsum("ij,ij->i", xc, xc)
    sxy = xc @ yc
    syy = float(yc @ yc)
    rss = np.where(sxx > 0, syy - sxy * sxy / np.where(sxx > 0, sxx, 1.0), syy)
    best = int(np.argmin(rss))
    size = float(sxy[best] / sxx[best]) if sxx[best] > 0 else 0.0
    return ChangePoint(float(taus[best]), float(max(rss[best], 0.0) / rss_line), size)


def theil_sen(t: FloatArray, y: FloatArray) -> tuple[float, float, float, float]:
    """Theil–Sen slope, intercept and the 90% confidence interval of the slope (zeros when undefined)."""
    if len(y) < 3 or float(np.ptp(t)) == 0.0:
        return 0.0, float(y.mean()) if len(y) else 0.0, 0.0, 0.0
    res = theil_sen_90(y, t)
    return res.slope, res.intercept, res.low_slope, res.high_slope


def _tau(t: FloatArray, y: FloatArray) -> float:
    if len(y) < 3 or float(np.ptp(y)) == 0.0:
        return 0.0
    value = kendall_tau_b(t, y)
    return 0.0 if math.isnan(value) else value


def rolling_minima(t: FloatArray, y: FloatArray, width: int) -> tuple[FloatArray, FloatArray]:
    """Minima over sliding windows of ``width`` points, at the windows' centre times."""
    width = max(1, min(width, len(y)))
    minima = sliding_window_view(y, width).min(axis=1)
    centres = sliding_window_view(t, width).mean(axis=1)
    return centres, minima


def has_daily_cycle(t: FloatArray, y: FloatArray, slope: float, intercept: float) -> bool:
    """Whether the residuals around the trend repeat every 24 hours (needs two days or more)."""
    if len(t) < 8 or float(t[-1] - t[0]) < 48.0:
        return False
    step = float(np.median(np.diff(t)))
    lag = round(24.0 / step)
    half = round(12.0 / step)
    if lag < 4 or lag >= len(y) - 2:
        return False
    res = y - (intercept + slope * t)
    if float(res.std()) == 0.0:
        return False

    def autocorrelation(k: int) -> float:
        a, b = res[:-k], res[k:]
        if float(a.std()) == 0.0 or float(b.std()) == 0.0:
            return 0.0
        return float(np.corrcoef(a, b)[0, 1])

    return autocorrelation(lag) >= 0.5 and autocorrelation(half) <= 0.0


def daily_means(t: FloatArray, y: FloatArray) -> tuple[FloatArray, FloatArray]:
    """24-hour rolling means: a daily cycle averaged out, the trend kept."""
    step = float(np.median(np.diff(t)))
    width = max(1, round(24.0 / step))
    return rolling_means(t, y, width)


def rolling_means(t: FloatArray, y: FloatArray, width: int) -> tuple[FloatArray, FloatArray]:
    """Means over sliding windows of ``width`` points, at the windows' centre times."""
    width = max(1, min(width, len(y)))
    return sliding_window_view(t, width).mean(axis=1), sliding_window_view(y, width).mean(axis=1)


def _sides_flat(t: FloatArray, y: FloatArray, step: ChangePoint) -> bool:
    """Whether the levels before and after a step move little compared with the step itself."""
    cut = int(np.searchsorted(t, step.hours))
    drift = 0.0
    for part_t, part_y in ((t[:cut], y[:cut]), (t[cut:], y[cut:])):
        if len(part_y) >= 3:
            drift += abs(median_slope(part_t, part_y)) * float(part_t[-1] - part_t[0])
    return drift <= 0.3 * abs(step.size)


def features(t: FloatArray, y: FloatArray) -> Features:
    """Compute all features of a series (``t`` in hours from the start, ``y`` in bytes), NaNs dropped."""
    keep = ~np.isnan(y)
    t, y = t[keep], y[keep]
    n = len(y)
    if n < 2:
        raise ValueError("a series needs at least two points")
    span = float(t[-1] - t[0])
    st, sy = _shrink(t, y, MAX_SHAPE_POINTS)
    slope, intercept, lo, hi = theil_sen(st, sy)
    daily = has_daily_cycle(st, sy, slope, intercept)
    if daily:
        # Judge the trend on 24-hour means: the cycle averages out.
        st, sy = daily_means(st, sy)
        slope, intercept, lo, hi = theil_sen(st, sy)
    m = len(sy)
    if m >= 3 and float(np.ptp(st)) > 0:
        ols_slope, r = ols_slope_r(st, sy)
        r2 = r**2
        r2 = 0.0 if math.isnan(r2) else r2
    else:
        ols_slope, r2 = 0.0, 0.0
    tau = _tau(st, sy)
    half = m // 2
    persistence = None
    if half >= 3:
        first_half = median_slope(st[:half], sy[:half])
        second_half = median_slope(st[half:], sy[half:])
        if first_half > 0:
            persistence = second_half / first_half
    value_range = float(np.ptp(y))
    drawdown = float(np.max(np.maximum.accumulate(y) - y)) / value_range if value_range > 0 else 0.0
    width = max(3, m // 8)
    mt, my = rolling_minima(st, sy, width)
    minima_slope = median_slope(mt, my) if len(my) >= 3 else slope
    minima_tau = _tau(mt, my) if len(my) >= 3 else tau
    residuals = sy - (intercept + slope * st)
    noise = float(np.median(np.abs(residuals - np.median(residuals)))) / 0.6745
    rss = _rss_line(st, sy)
    step = best_step(st, sy, rss)
    return Features(
        points=n,
        span_hours=span,
        first=float(y[0]),
        last=float(y[-1]),
        low=float(y.min()),
        high=float(y.max()),
        ols_slope=ols_slope,
        r2=r2,
        ts_slope=slope,
        ts_low=lo,
        ts_high=hi,
        ts_intercept=intercept,
        tau=tau,
        persistence=persistence,
        drawdown=drawdown,
        minima_slope=minima_slope,
        minima_tau=minima_tau,
        noise=noise,
        step=step,
        plateau=best_hinge(st, sy, rss, rise_first=True),
        fill=best_fill(st, sy, rss),
        onset=best_hinge(st, sy, rss, rise_first=False),
        step_sides_flat=_sides_flat(st, sy, step),
        daily_cycle=daily,
    )
