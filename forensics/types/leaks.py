"""The leak analysis' records: a series' features, its grade and verdict, and the judgement of one series.

Made by detectors/leaks/ (features.py, decision.py, judge.py), carried by the results and shown by the
renderers (forensics/report/leaks.py, the fleet's).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: slab-watch imports these records and must not load numpy to do so
    import numpy as np
    import numpy.typing as npt

    FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class ChangePoint:
    """The best fit of a one-knot model, and how it compares with a straight line."""

    hours: float  # time of the knot, hours from the start
    rss_ratio: float  # residual sum of squares of the model / of the straight line (lower: better fit)
    size: float  # step height (bytes) for a step, slope (bytes/h) for a hinge


@dataclass(frozen=True)
class Features:
    """The features of one series (see detectors/leaks/features.py)."""

    points: int
    span_hours: float
    first: float  # first window median
    last: float  # last window median
    low: float
    high: float
    ols_slope: float  # bytes/h
    r2: float
    ts_slope: float  # bytes/h
    ts_low: float  # 90% confidence interval of the Theil–Sen slope
    ts_high: float
    ts_intercept: float
    tau: float
    persistence: float | None  # None when the first half does not grow
    drawdown: float  # 0..1 of the range
    minima_slope: float  # Theil–Sen slope of the rolling minima, bytes/h
    minima_tau: float
    noise: float  # robust standard deviation of the residuals around the Theil–Sen line
    step: ChangePoint
    plateau: ChangePoint  # rise then flat
    fill: ChangePoint  # smooth saturating fill a + b(1 - exp(-t/tau)): hours = tau
    onset: ChangePoint  # flat then rise
    step_sides_flat: bool  # both sides of the best step are flat compared with the step
    daily_cycle: bool

    @property
    def growth(self) -> float:
        """Growth from the first to the last window median (bytes)."""
        return self.last - self.first


class Grade(enum.Enum):
    """The verdict on a series, worst first."""

    LEAK = "leak"  # high
    SUSPECT = "suspect"  # medium
    RECLAIMABLE = "growing but reclaimable"  # info
    UNDECIDED = "growing, too short to call"  # info: it rises, but the stretch cannot tell a leak yet
    STABLE = "stable"  # no finding

    @property
    def rank(self) -> int:
        """3 for a leak down to 0 for stable."""
        return {Grade.LEAK: 3, Grade.SUSPECT: 2, Grade.RECLAIMABLE: 1, Grade.UNDECIDED: 1, Grade.STABLE: 0}[self]


@dataclass(frozen=True)
class Verdict:
    """The grade of a series, the rule that gave it and why (one line)."""

    grade: Grade
    rule: str
    reason: str


@dataclass(frozen=True)
class SampleRef:
    """A stored sample cited as evidence: which, when, the value, and its stored text."""

    role: str  # first, last, min, max
    sample_id: int
    wall: float
    value: float  # bytes
    excerpt: str


@dataclass(frozen=True)
class SeriesVerdict:
    """The judgement of one series (a cache or a meminfo field) within one boot's stretch."""

    name: str
    boot_id: str
    verdict: Verdict
    features: Features
    rate: float  # bytes/h as judged (Theil–Sen, of the part after a late onset)
    since_wall: float  # where the judged part starts (a late onset, or the first sample)
    reclaimable: bool
    samples: tuple[SampleRef, ...]
    objects_rate: float | None  # objects/h (caches only)
    active_rate: float | None  # objects in use per hour (caches only)
    objsize: int | None
    grid_walls: FloatArray
    grid_values: FloatArray
    origin_wall: float  # time 0 of the fitted line (``features.ts_intercept`` is its value there)

    @property
    def grade(self) -> Grade:
        """The grade of the verdict."""
        return self.verdict.grade

    @property
    def growth(self) -> float:
        """Growth of the judged part, first to last window median (bytes)."""
        return self.features.growth
