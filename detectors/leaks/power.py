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
from dataclasses import dataclass
from typing import TYPE_CHECKING

from detectors.leaks.decision import LeakThresholds, duration

if TYPE_CHECKING:  # only a type here: slab-watch's plan check must not import pandas to warn
    from detectors.leaks.series import SeriesMatrix


def _kb_per_hour(rate: float) -> str:
    return f"{rate / 1024:,.0f} KB/h"


@dataclass(frozen=True)
class Power:
    """What the longest boot stretch of samples can show.

    ``needed_seconds`` is the span ``needed_samples`` take at the stretch's
    own interval; ``full_seconds`` the span over which a leak at ``min_rate``
    grows ``min_growth``.
    """

    samples: int
    span_seconds: float
    interval_seconds: float | None  # None: fewer than two samples
    needed_samples: int
    needed_seconds: float
    full_seconds: float
    min_rate: float  # bytes/h
    min_growth: float  # bytes
    short_seconds: float = 0.0  # under this span a rise is called only from short_growth...
    short_growth: float = 0.0
    short_rate: float = math.inf  # ...or from this rate (bytes/h: short_share_per_day of MemTotal)

    @property
    def judgeable(self) -> bool:
        """Enough samples over a long enough span for the statistics."""
        return self.samples >= self.needed_samples and self.span_seconds >= self.needed_seconds

    @property
    def full(self) -> bool:
        """The stretch is long enough to show a leak at the slowest rate reported."""
        return self.judgeable and self.span_seconds >= self.full_seconds

    @property
    def detectable_rate(self) -> float:
        """The slowest leak (bytes/h) this stretch can show: ``min_growth`` over the span, at least ``min_rate``."""
        if self.span_seconds <= 0:
            return math.inf
        hours = self.span_seconds / 3600.0
        rate = self.min_growth / hours
        if self.span_seconds < self.short_seconds:
            rate = max(rate, min(self.short_growth / hours, self.short_rate))
        return max(self.min_rate, rate)

    def seen(self) -> str:
        """``121 samples over 10 min``."""
        return f"{self.samples} sample{'s' if self.samples != 1 else ''} over {duration(self.span_seconds)}"

    def shortfall(self) -> str:
        """``cannot judge yet: 4 samples over 3 s, needs >= 24 over >= 23 s``."""
        every = f" (at this {duration(self.interval_seconds)} interval)" if self.interval_seconds else ""
        return (
            f"cannot judge yet: {self.seen()}, needs >= {self.needed_samples} "
            f"over >= {duration(self.needed_seconds)}{every}"
        )

    def reach(self) -> str:
        """What a judgeable stretch can and cannot show, in one clause."""
        if self.full:
            return f"a leak of {_kb_per_hour(self.min_rate)} or faster would show in {self.seen()}"
        return (
            f"a leak of {_kb_per_hour(self.detectable_rate)} or faster would show in {self.seen()}; "
            f"a slower one (down to {_kb_per_hour(self.min_rate)}) needs >= {duration(self.full_seconds)} of samples"
        )


def _short_rate(thresholds: LeakThresholds, mem_total: float | None) -> float:
    return math.inf if not mem_total else thresholds.short_share_per_day * mem_total / 24.0


def power_of(matrices: Sequence[SeriesMatrix], thresholds: LeakThresholds, mem_total: float | None = None) -> Power:
    """The power of the longest boot stretch among ``matrices`` (none: zero samples); ``mem_total`` in bytes."""
    longest = max(matrices, key=lambda m: (len(m.walls), m.span_hours), default=None)
    samples = 0 if longest is None else len(longest.walls)
    span = 0.0 if longest is None else longest.span_hours * 3600.0
    interval = None if longest is None or samples < 2 else longest.interval_seconds
    needed = max(thresholds.min_samples, thresholds.min_points)
    return Power(
        samples=samples,
        span_seconds=span,
        interval_seconds=interval,
        needed_samples=needed,
        needed_seconds=max((needed - 1) * (interval or 0.0), thresholds.min_hours * 3600.0),
        full_seconds=thresholds.min_growth / thresholds.min_rate * 3600.0,
        min_rate=thresholds.min_rate,
        min_growth=thresholds.min_growth,
        short_seconds=thresholds.short_hours * 3600.0,
        short_growth=thresholds.short_growth,
        short_rate=_short_rate(thresholds, mem_total),
    )


def planned(interval: float, seconds: float, thresholds: LeakThresholds | None = None) -> Power:
    """The power a slab-watch plan will have: samples every ``interval`` for ``seconds``."""
    th = thresholds or LeakThresholds()
    samples = int(seconds / interval) + 1
    needed = max(th.min_samples, th.min_points)
    return Power(
        samples=samples,
        span_seconds=(samples - 1) * interval,
        interval_seconds=interval,
        needed_samples=needed,
        needed_seconds=max((needed - 1) * interval, th.min_hours * 3600.0),
        full_seconds=th.min_growth / th.min_rate * 3600.0,
        min_rate=th.min_rate,
        min_growth=th.min_growth,
        short_seconds=th.short_hours * 3600.0,
        short_growth=th.short_growth,
    )


def plan_warning(interval: float, seconds: float | None) -> str | None:
    """What slab-watch says at start when its plan cannot give ``kforensic leaks`` enough to judge (None: it can)."""
    if seconds is None:
        return None
    power = planned(interval, seconds)
    if not power.judgeable:
        longest = max(power.needed_seconds, power.needed_samples * interval)
        shorter = max(1, int(seconds / power.needed_samples))  # slab-watch's shortest interval is 1 s
        faster = f" or more often (e.g. --interval {shorter}s)" if shorter < interval else ""
        return (
            f"{duration(seconds)} at a {duration(interval)} interval gives {power.samples} samples: "
            f'kforensic leaks would say "{power.shortfall()}"; sample for >= {duration(longest)}{faster}'
        )
    if not power.full:
        return (
            f"{duration(seconds)} of samples can show a leak of {_kb_per_hour(power.detectable_rate)} or faster; "
            f"a slower one (down to {_kb_per_hour(power.min_rate)}) needs >= {duration(power.full_seconds)}"
        )
    return None
