"""Whether a stretch of samples could have shown a leak: absence needs power.

The grading rules (:mod:`detectors.leaks.decision`) need enough samples for
their statistics (``min_samples`` raw samples, ``min_points`` window medians),
and a leak only shows once it has grown ``min_growth`` (less is within the
wander of a busy cache).  So a stretch of ``T`` hours can show a leak of
``min_growth / T`` per hour or faster, and only a stretch of at least
``min_growth / min_rate`` hours can rule out the slowest leak the detector
reports.  "Nothing found" is said with these figures, never bare.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from forensics.types.leaks import (
    LeakThresholds,
    Power,
    Stretch,
    duration,
    duration_up,
    kb_per_hour,
    kb_per_hour_up,
)

if TYPE_CHECKING:  # only a type here: slab-watch's plan check must not import pandas to warn
    from detectors.leaks.series import SeriesMatrix


def _short_rate(thresholds: LeakThresholds, mem_total: float | None) -> float:
    return math.inf if not mem_total else thresholds.short_share_per_day * mem_total / 24.0


def _slowest(thresholds: LeakThresholds, mem_total: float | None) -> float:
    """The slowest rate (bytes/h) a leak is reported at: ``min_rate``, and ``min_share_per_day`` of MemTotal (rule
    no-effect: 256 KB/h was said on a 64 GiB machine, whose slowest reported leak is 280 KB/h)."""
    return max(thresholds.min_rate, thresholds.min_share_per_day * mem_total / 24.0 if mem_total else 0.0)


def _short_memory(thresholds: LeakThresholds, mem_total: float | None) -> float:
    return math.inf if not mem_total else thresholds.short_share * mem_total


#: One-sided 95% normal quantile: a leak at the rate said falls short of the bar this rarely, for the noise measured.
_Z95 = 1.645


def median_noise(matrix: SeriesMatrix, min_growth: float) -> float:
    """The typical noise of one window median (bytes) among the series that moved enough to be judged.

    Each series' robust deviation of its second differences of window medians (a line's are 0; noise of sd s
    gives differences of sd s times the square root of 6), the median over the series; 0 when none moved.
    """
    import numpy as np

    grid = matrix.grid
    if len(grid) < 4:
        return 0.0
    with np.errstate(all="ignore"):
        moved = np.nanmax(grid, axis=0) - np.nanmin(grid, axis=0)
    columns = np.flatnonzero((moved >= min_growth * 0.5) & ~np.isnan(grid).any(axis=0))
    if not len(columns):
        return 0.0
    second = np.diff(grid[:, columns], n=2, axis=0)
    spread = np.median(np.abs(second - np.median(second, axis=0)), axis=0) / 0.6745 / math.sqrt(6.0)
    return float(np.median(spread))


def _full_span(power: Power) -> Power:
    """``power`` with ``full_seconds`` the least span at its interval over which a leak at ``min_rate`` shows.

    A growth is measured between the first and the last window median's centres, about a window less than the span
    (:attr:`Power.measured_seconds`), and a median's noise (``margin``) adds to the bar: ``min_growth / min_rate``
    alone (2 h) was said "full power", yet 121 samples every 60 s measure 1.96 h and show 262 KB/h, not 256
    ("No leak of 256 KB/h or faster in 121 samples over 2.0 h").  The span is searched on the rate itself, which
    falls as the span grows (its measured part and the short-stretch bar both do).
    """
    floor = power.full_seconds
    if power.interval_seconds is None or not math.isfinite(floor) or floor <= 0:
        return power
    # The scatter of fewer samples than a judgement needs is no measure to plan on: 4 samples of a busy machine
    # said "sample >= 5.7 h" where the plan for them said 2.1 h.  The span is then the plan's (its samples' count
    # and span alone), as the advice's rate is said beside it.
    judged = power if power.judgeable else replace(power, margin=0.0)

    def shows(span: float) -> bool:
        return replace(judged, span_seconds=span).detectable_rate <= power.min_rate * (1.0 + 1e-9)

    low, high = floor, max(floor, 1.0) * 2.0
    for _ in range(64):  # the rate falls with the span: a few doublings reach it
        if shows(high):
            break
        low, high = high, high * 2.0
    else:
        return power
    for _ in range(60):  # to well under a second of a span of hours
        middle = (low + high) / 2.0
        low, high = (low, middle) if shows(middle) else (middle, high)
    return replace(power, full_seconds=high)


def power_of(matrices: Sequence[SeriesMatrix], thresholds: LeakThresholds, mem_total: float | None = None) -> Power:
    """The power of the longest boot stretch among ``matrices`` (none: zero samples); ``mem_total`` in bytes.

    The growth a leak must show is measured between two window medians: their noise (:func:`median_noise`) is
    added to the bar, as much as takes a leak at the rate said under it 5% of the time.
    """
    longest = max(matrices, key=lambda m: (len(m.walls), m.span_hours), default=None)
    samples = 0 if longest is None else len(longest.walls)
    # Observed time only: a suspend's 10 min counted as coverage ("would show in 46 samples over 11 min", ue23 #4).
    span = 0.0 if longest is None else longest.observed_seconds
    interval = None if longest is None or samples < 2 else longest.interval_seconds
    margin = 0.0 if longest is None else _Z95 * math.sqrt(2.0) * median_noise(longest, thresholds.min_growth)
    power = _power(thresholds, mem_total, samples, span, interval, margin)
    if longest is None:
        return power
    # The span in hours and back loses the last digits: 59 s of 1-s samples left 1e-14 s "unobserved", and the
    # coverage read "the whole 59 s observed" of a stretch with no gap.  A gap is over 2.5 intervals, never a ms.
    unobserved = longest.span_hours * 3600.0 - span if longest.observed_seconds > 0 else 0.0
    return replace(
        power,
        unobserved_seconds=unobserved if unobserved > 1e-3 else 0.0,
        unmeasured=_step_back(longest),
        boots=stretches(matrices),
    )


def stretches(matrices: Sequence[SeriesMatrix]) -> tuple[Stretch, ...]:
    """Each matrix's stretch, its boot numbered from 1 in the order sampled, with its own interval and windows."""
    numbers: dict[str, int] = {}
    out = []
    for m in matrices:
        boot = numbers.setdefault(m.boot_id, len(numbers) + 1)
        several = len(m.walls) > 1
        out.append(
            Stretch(
                m.boot_id,
                boot,
                m.part,
                int(m.sample_ids[0]) if len(m.sample_ids) else 0,
                int(m.sample_ids[-1]) if len(m.sample_ids) else 0,
                len(m.walls),
                m.observed_seconds,
                m.interval_seconds if several else None,
                m.window_seconds if several else None,
            )
        )
    return tuple(out)


def _step_back(matrix: SeriesMatrix) -> str:
    """Why the stretch's span cannot be measured: its wall clock went back between two samples and no uptime placed
    them (detectors/leaks/clock.py places them where every sample has one); "" where it did not."""
    import numpy as np

    steps = np.diff(matrix.walls)
    back = np.flatnonzero(steps < 0)
    if not len(back):
        return ""
    i = int(back[0])
    more = f" (and {len(back) - 1} more time(s))" if len(back) > 1 else ""
    return (
        f"the wall clock went back {duration(-float(steps[i]))} between samples {int(matrix.sample_ids[i])} and"
        f" {int(matrix.sample_ids[i + 1])}{more}: a clock step; no uptime in the store to measure across it"
    )


def planned(
    interval: float, seconds: float, thresholds: LeakThresholds | None = None, mem_total: float | None = None
) -> Power:
    """The power a slab-watch plan will have: samples every ``interval`` for ``seconds``.

    ``mem_total``: the machine's MemTotal in bytes, which the store will hold and :func:`power_of` judges with
    (a short stretch calls a rise that is harmful on this machine: on a small one a slower leak shows).
    """
    samples = int(seconds / interval) + 1
    return _power(thresholds or LeakThresholds(), mem_total, samples, (samples - 1) * interval, interval)


def _power(
    th: LeakThresholds,
    mem_total: float | None,
    samples: int,
    span: float,
    interval: float | None,
    margin: float = 0.0,
) -> Power:
    """The power of ``samples`` over ``span`` seconds, a sample every ``interval`` (None: unknown), judged with
    ``th`` on a machine of ``mem_total`` bytes (:func:`power_of` of a store, :func:`planned` of a plan)."""
    needed = max(th.min_samples, th.min_points)
    return _full_span(
        Power(
            samples=samples,
            span_seconds=span,
            interval_seconds=interval,
            needed_samples=needed,
            needed_seconds=max((needed - 1) * (interval or 0.0), th.min_hours * 3600.0),
            full_seconds=th.min_growth / _slowest(th, mem_total) * 3600.0,
            min_rate=_slowest(th, mem_total),
            min_growth=th.min_growth,
            short_seconds=th.short_hours * 3600.0,
            short_growth=th.short_growth,
            short_rate=_short_rate(th, mem_total),
            short_memory=_short_memory(th, mem_total),
            margin=margin,
        )
    )


def plan_warning(interval: float, seconds: float | None, mem_total: float | None = None) -> str | None:
    """What slab-watch says at start when its plan cannot give ``kforensic leaks`` enough to judge (None: it can);
    ``mem_total``: the machine's MemTotal in bytes (None: not known), so that the rates it says are those
    ``kforensic leaks`` will say of the store."""
    if seconds is None:
        return None
    power = planned(interval, seconds, mem_total=mem_total)
    if not power.judgeable:
        shorter = max(1, int(seconds / power.needed_samples))  # slab-watch's shortest interval is 1 s
        faster = f"; or sample more often (e.g. --interval {shorter}s)" if shorter < interval else ""
        return (
            f"{duration(seconds)} at a {duration(interval)} interval gives {power.samples} samples: "
            f'kforensic leaks would say "{power.shortfall()}"; sample longer: {power.advice()}{faster}'
        )
    if not power.full:
        return (
            f"{duration(seconds)} of samples can show a leak of {kb_per_hour(power.shown_rate)} or faster (more "
            "where the caches' samples scatter: the store's figure adds their noise); "
            f"a slower one (down to {kb_per_hour_up(power.min_rate)}) needs >= {duration_up(power.full_seconds)}"
        )
    return None
