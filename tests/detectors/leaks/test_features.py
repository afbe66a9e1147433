"""Features of one series: slopes, linearity, persistence, reclaim, change points, daily cycles."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from detectors.leaks.decision import RULES, Context, decide
from detectors.leaks.features import features, median_slope, rolling_minima
from forensics.types.leaks import Grade, LeakThresholds

HOURS = np.linspace(0.0, 2.0, 25)
MB = 2.0**20


def test_a_straight_line_has_its_slope_and_perfect_linearity() -> None:
    f = features(HOURS, 10 * MB + 3 * MB * HOURS)
    assert math.isclose(f.ts_slope, 3 * MB, rel_tol=1e-9)
    assert math.isclose(f.ols_slope, 3 * MB, rel_tol=1e-9)
    assert f.r2 > 0.999 and f.tau > 0.999
    assert f.ts_low <= f.ts_slope <= f.ts_high
    assert f.persistence is not None and math.isclose(f.persistence, 1.0, rel_tol=1e-6)
    assert f.drawdown == 0.0
    assert math.isclose(f.minima_slope, 3 * MB, rel_tol=1e-6)
    assert math.isclose(f.growth, 6 * MB, rel_tol=1e-9)


def test_a_one_time_step_is_found_where_it_is() -> None:
    y = 10 * MB + 8 * MB * (HOURS >= 1.2)
    f = features(HOURS, y)
    assert f.step.rss_ratio < 0.01
    assert abs(f.step.hours - 1.2) < 0.1
    assert math.isclose(f.step.size, 8 * MB, rel_tol=1e-6)
    assert f.step_sides_flat


def test_a_fill_to_a_plateau_fits_a_saturating_curve() -> None:
    y = 10 * MB + 20 * MB * (1 - np.exp(-HOURS / 0.3))
    f = features(HOURS, y)
    assert f.plateau.rss_ratio < 0.5
    assert f.fill.rss_ratio < 0.05
    assert 0.2 < f.fill.hours < 0.45
    assert f.persistence is not None and f.persistence < 0.2


def test_a_late_onset_is_located() -> None:
    y = 10 * MB + 4 * MB * np.maximum(HOURS - 1.0, 0.0)
    f = features(HOURS, y)
    assert f.onset.rss_ratio < 0.05
    assert abs(f.onset.hours - 1.0) < 0.1
    assert math.isclose(f.onset.size, 4 * MB, rel_tol=0.05)


def test_a_sawtooth_gives_its_growth_back() -> None:
    y = 10 * MB + 5 * MB * np.mod(HOURS, 0.5) / 0.5
    f = features(HOURS, y)
    assert f.drawdown > 0.7
    assert abs(f.minima_slope) < 0.5 * MB


def test_a_daily_cycle_is_seen_over_three_days_and_averaged_out() -> None:
    hours = np.arange(0, 72, 1 / 6)
    y = 20 * MB + 10 * MB * np.sin(2 * np.pi * hours / 24)
    f = features(hours, y)
    assert f.daily_cycle
    assert abs(f.ts_slope) < 0.05 * MB
    assert not features(hours[:200], y[:200]).daily_cycle  # under two days: not judged for a cycle


def test_missing_samples_are_dropped() -> None:
    y = 10 * MB + MB * HOURS
    y[3] = np.nan
    f = features(HOURS, y)
    assert f.points == 24
    assert math.isclose(f.ts_slope, MB, rel_tol=1e-9)


def test_median_slope_is_robust_to_one_outlier() -> None:
    y = 5.0 * HOURS
    y[10] = 1e9
    assert math.isclose(median_slope(HOURS, y), 5.0, rel_tol=1e-9)


def test_rolling_minima_follow_the_floor() -> None:
    centres, minima = rolling_minima(HOURS, np.arange(25.0), 5)
    assert len(minima) == 21
    assert list(minima[:3]) == [0.0, 1.0, 2.0]
    assert math.isclose(centres[0], float(HOURS[:5].mean()))


def test_every_rule_can_decide() -> None:
    names = [rule[0] for rule in RULES]
    assert len(set(names)) == len(names)
    assert names[-1] == "no-trend"


def test_the_documented_rules_are_the_rules_in_their_order() -> None:
    doc = (Path(__file__).resolve().parents[3] / "docs" / "leaks.md").read_text()
    documented = re.findall(r"^\| (\d+) \| ([a-z-]+) \|", doc, flags=re.MULTILINE)
    assert [int(n) for n, _ in documented] == list(range(1, len(RULES) + 1))
    assert [name for _, name in documented] == [rule[0] for rule in RULES]


finite = st.floats(min_value=-1e12, max_value=1e12, allow_nan=False, allow_infinity=False)


@settings(max_examples=150, deadline=None)
@given(values=arrays(np.float64, st.integers(2, 120), elements=finite), reclaimable=st.booleans())
def test_features_and_decisions_never_fail_on_any_series(values: np.ndarray, reclaimable: bool) -> None:  # type: ignore[type-arg]
    hours = np.linspace(0.0, 3.0, len(values))
    f = features(hours, values)
    for name in ("ts_slope", "ols_slope", "r2", "tau", "drawdown", "minima_slope"):
        assert math.isfinite(getattr(f, name)), name
    assert 0.0 <= f.drawdown <= 1.0
    assert -1.0 <= f.tau <= 1.0
    verdict = decide(Context(f, reclaimable, 8 * 2**30, LeakThresholds()))
    assert isinstance(verdict.grade, Grade)
    assert verdict.reason


@settings(max_examples=60, deadline=None)
@given(
    rate=st.floats(min_value=2.0, max_value=200.0),
    base=st.floats(min_value=1.0, max_value=1000.0),
    noise=st.floats(min_value=0.0, max_value=0.02),
    seed=st.integers(0, 2**16),
)
def test_any_clean_steady_ramp_of_a_few_mb_per_hour_is_a_leak(
    rate: float, base: float, noise: float, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    y = base * MB + rate * MB * HOURS + rng.normal(0, noise * rate * MB, len(HOURS))
    verdict = decide(Context(features(HOURS, y), False, 8 * 2**30, LeakThresholds()))
    assert verdict.grade is Grade.LEAK, verdict


def test_a_step_and_a_plateau_are_placed_in_time_not_in_fractional_hours() -> None:
    """Their reasons read "at +0.18 h" beside onsets and spans said as UTC times and minutes."""
    from forensics.units import iso_utc

    origin = 1_780_000_000.0
    step = features(HOURS, 10 * MB + 8 * MB * (HOURS >= 1.2))
    verdict = decide(Context(step, False, 8 * 2**30, LeakThresholds(), origin=origin))
    assert verdict.rule == "one-time-step", verdict
    at = origin + step.step.hours * 3600.0
    assert f"one-time step of 8,192 KB at about {iso_utc(at)}, {step.step.hours * 60:.0f} min into" in verdict.reason
    assert not re.search(r"\d\.\d\d h", verdict.reason), verdict.reason
    # Without the first sample's wall time, the offset alone, in the reader's unit.
    bare = decide(Context(step, False, 8 * 2**30, LeakThresholds()))
    assert f"at about {step.step.hours * 60:.0f} min into the samples," in bare.reason, bare.reason
    fill = features(HOURS, 10 * MB + 20 * MB * (1 - np.exp(-HOURS / 0.3)))
    verdict = decide(Context(fill, False, 8 * 2**30, LeakThresholds(), origin=origin))
    assert verdict.rule == "plateau", verdict
    assert f"time constant {fill.fill.hours * 60:.0f} min" in verdict.reason, verdict.reason
    assert f"flat after about {iso_utc(origin + fill.plateau.hours * 3600.0)}, " in verdict.reason, verdict.reason
    assert not re.search(r"\d\.\d\d h", verdict.reason), verdict.reason
