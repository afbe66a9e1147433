"""Grading a series: effect size first, then shape; never a p-value alone.

A series is first asked whether its growth matters at all (bytes per hour,
growth over the stretch, share of MemTotal per day).  Only then is its shape
judged, by the ordered rules of :data:`RULES` (the first that matches wins):
a stretch too short for the statistics, or too short for a rising series to
show the growth that tells a leak from a busy cache's wander, is "growing, too
short to call" (never "stable": absence needs the power to see a leak);
one-time steps, caches filling to a plateau and daily cycles are not leaks;
growth in step with a much larger growth of the page cache is file I/O's
metadata until the page cache stops growing (detectors/leaks/pagecache.py);
reclaimable caches (reclaim_account, or known to be freed under pressure) are
judged on the floor they return to; a steady, monotonic, persistent ramp is a
leak; a weaker but consistent rise is suspect.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from detectors.leaks.attribution import Lifetime
from forensics.model import Baseline
from forensics.types.leaks import (
    RETURNED_RISING,  # a rule of this table, named there for SeriesVerdict.again
    Excursion,
    Features,
    Grade,
    Held,
    LeakThresholds,
    PageCacheTie,
    Verdict,
    duration,
    duration_up,
)
from forensics.units import iso_utc


@dataclass(frozen=True)
class Return:
    """A series that rose and fell back near its baseline (the first window median of the stretch judged)."""

    baseline: float  # bytes
    base_hours: float  # hours from the start of the samples to the baseline's window median
    peak: float  # bytes, the highest window median before it fell back
    peak_hours: float  # hours from the start of the samples
    back: float  # bytes, the lowest window median after the peak
    back_hours: float
    restart_hours: float  # the last window median near the baseline: what follows is a new stretch
    after: int  # window medians from the restart on (judged on their own when enough)
    rises_after: float  # bytes, the last window median less ``back``
    rise_rate: float  # bytes/h from ``back`` to the last window median: the rate of what rises again
    last_hours: float = 0.0  # hours from the start of the samples to the last window median

    def excursion(self, origin: float | None = None) -> Excursion:
        """The rise and the fall, with durations (not offsets from the first sample: both read "+4 min"), and what
        rose again since; placed in time from ``origin`` (the wall time of hour 0) when given."""
        return Excursion(
            self.baseline,
            self.peak,
            self.back,
            (self.peak_hours - self.base_hours) * 3600.0,
            (self.back_hours - self.peak_hours) * 3600.0,
            None if origin is None else origin + self.peak_hours * 3600.0,
            None if origin is None else origin + self.back_hours * 3600.0,
            self.rises_after,
            (self.last_hours - self.back_hours) * 3600.0,
        )


def returned_to_baseline(
    hours: npt.NDArray[np.float64], values: npt.NDArray[np.float64], thresholds: LeakThresholds, noise: float = 0.0
) -> Return | None:
    """The last time the window medians came back to within ``returned_share`` of their rise above the first one.

    The rise must matter (``clear_growth``) and stand out of the series' noise (3 times its robust deviation around
    the fitted line), so that a noisy leak's wander is no return.  None when the series never fell back.
    """
    if len(values) < 3:
        return None
    base = float(values[0])
    rise = np.maximum.accumulate(values) - base
    least = max(thresholds.clear_growth, 3.0 * noise)
    near = (rise >= least) & (values - base <= thresholds.returned_share * rise)
    found = np.flatnonzero(near)
    if len(found) == 0:
        return None
    restart = int(found[-1])
    top = int(np.argmax(values[: restart + 1]))
    bottom = top + int(np.argmin(values[top:]))
    return Return(
        base,
        float(hours[0]),
        float(values[top]),
        float(hours[top]),
        float(values[bottom]),
        float(hours[bottom]),
        float(hours[restart]),
        len(values) - restart,
        float(values[-1] - values[bottom]),
        float(values[-1] - values[bottom]) / max(float(hours[-1] - hours[bottom]), 1e-9),
        float(hours[-1]),
    )


@dataclass(frozen=True)
class Context:
    """What a rule sees: the features, the cache's nature and the machine's size."""

    features: Features
    reclaimable: bool
    mem_total: float | None  # bytes, None when unknown
    thresholds: LeakThresholds
    in_use_share: float | None = None  # growth of the bytes of objects in use / growth of the cache (caches only)
    reclaim_ran: bool | None = None  # the shrinkers ran during the stretch (vmstat), None when not recorded
    samples: int | None = None  # raw samples behind the window medians, None when not known
    page_cache: PageCacheTie | None = None  # how the page cache grew beside it, None when not recorded
    filling: Lifetime | None = None  # objects freed on a timer, and the stretch too short to see past their fill
    pinned_by: str = ""  # what holds the objects a reclaimable cache cannot free (its unused ones it can)
    aggregate: bool = False  # a sum of many caches (SUnreclaim): its growth is not one cache's
    returned: Return | None = None  # it fell back near its baseline, and too little follows to judge on its own
    with_processes: bool = False  # its objects live as long as processes (detectors/leaks/attribution.py)
    held: Held | None = None  # a rise that stopped and is held at its level to the store's end (judge.py)
    origin: float | None = None  # the wall time (epoch s) of hour 0 of the features' times, None when not known
    # The time the raw samples behind the window medians observed (gaps left out, as the coverage counts it), None
    # when not known: the features' span is the window medians', shorter by about a window (ue24 F6: "13 samples
    # over 57 s" of samples the coverage said "over 60 s")
    samples_seconds: float | None = None

    @property
    def rate(self) -> float:
        """The growth rate judged: the Theil–Sen slope (bytes/h)."""
        return self.features.ts_slope

    @property
    def growth(self) -> float:
        """Growth over the stretch: the fitted slope times the span, or the medians' net growth when more.

        The Theil–Sen slope, a median, underrates a leak that grows in a few large bursts; the net
        growth from the first to the last window median does not.
        """
        f = self.features
        return max(self.rate * f.span_hours, f.growth)

    @property
    def share_per_day(self) -> float | None:
        """Growth per day as a share of MemTotal, None when MemTotal is unknown."""
        return None if not self.mem_total else self.rate * 24.0 / self.mem_total


def _kb(value: float) -> str:
    return f"{value / 1024:,.0f} KB"


def _hours(hours: float) -> str:
    return duration(hours * 3600.0)


def _at(c: Context, hours: float) -> str:
    """A position in the series, as the evidence and the onset cite one: its UTC time, and how far into the
    samples in the reader's unit ("2026-12-07T15:02:11+00:00, 11 min into the samples"); without the wall time
    of the first sample, the offset alone.  Its fractional hours read "+0.18 h" beside onsets and spans said as
    times and minutes."""
    offset = f"{_hours(hours)} into the samples"
    return offset if c.origin is None else f"{iso_utc(c.origin + hours * 3600.0)}, {offset}"


def _grown(c: Context) -> str:
    """The growth judged (:attr:`Context.growth`), said as what it is.

    The net growth of the window medians is what the samples show (the finding's "grew" and "total growth");
    where the fitted rate times the span is more (the medians' growth is the smaller figure), the judged figure
    is that one and is named so: "2,216 KB (2,398 KB at its fitted rate)".
    """
    seen = c.features.growth
    fitted = c.rate * c.features.span_hours
    if fitted <= seen or _kb(fitted) == _kb(seen):
        return _kb(seen)
    return f"{_kb(seen)} ({_kb(fitted)} at its fitted rate)"


def _short_of_power(c: Context) -> str | None:
    """Why the stretch is too short for the statistics (samples, window medians, hours), None when it is not."""
    f, th = c.features, c.thresholds
    if c.samples is not None and c.samples < th.min_samples:
        # The samples' own span, as the coverage says it; the window medians' is said where it is what falls short.
        over = "" if c.samples_seconds is None else f" over {duration(c.samples_seconds)}"
        return f"{c.samples} samples{over}, needs >= {th.min_samples}"
    if f.points < th.min_points:
        return f"{f.points} window medians, needs >= {th.min_points}"
    if f.span_hours < th.min_hours:
        return (
            f"{_hours(f.span_hours)} from the first to the last window median, needs >= "
            f"{duration_up(th.min_hours * 3600.0)}"
        )
    return None


def _rising(c: Context) -> bool:
    """The series rises at a rate worth a finding and consistently (Kendall tau, the slope's lower bound)."""
    f, th = c.features, c.thresholds
    return c.rate >= th.min_rate and f.growth > 0 and f.tau >= th.suspect_tau and f.ts_low > 0


def _growing_too_short(c: Context) -> str | None:
    short = _short_of_power(c)
    if short is not None and _rising(c):
        # Seen: the net growth of the window medians (the finding's "total growth"), not the slope times the span.
        return f"grows {_kb(c.rate)}/h ({_kb(c.features.growth)} seen), but {short}: growing, too short to call"
    return None


def _too_short(c: Context) -> str | None:
    short = _short_of_power(c)
    return None if short is None else f"cannot judge yet: {short}"


def _rise_below_growth(c: Context) -> str | None:
    th = c.thresholds
    if th.short_rise_undecided and c.growth < th.min_growth and _rising(c):
        # At this rate the stretch is too short to grow the amount that tells a leak from the wander of a
        # busy cache: that is no evidence of absence.
        needed = th.min_growth / c.rate
        return (
            f"grows {_kb(c.rate)}/h but only {_grown(c)} in {_hours(c.features.span_hours)}; "
            f"a leak is told from a busy cache's wander from {_kb(th.min_growth)} of growth, "
            f"{duration_up(needed * 3600.0)} at this rate: growing, too short to call"
        )
    return None


def _grows_with_page_cache(c: Context) -> str | None:
    tie, th = c.page_cache, c.thresholds
    if tie is None or not tie.in_step or tie.ratio < th.page_cache_ratio or not _rising(c):
        return None
    # File I/O grows the page cache's metadata with it (buffer heads, xarray nodes, per-folio state), and
    # reclaim frees it with the pages: while the page cache grows, the ramp cannot tell a leak.
    return (
        f"grows {_grown(c)} in step with the page cache, which grew {_kb(tie.growth)} ({tie.ratio:,.0f} times "
        f"as much, r {tie.correlation:.2f}): file I/O grows the page cache's metadata with it and reclaim frees "
        "it with the pages; growing, too short to call until the page cache stops growing or is reclaimed"
    )


def _timer_fill(c: Context) -> str | None:
    life = c.filling
    if life is None or not _rising(c):
        return None
    return (
        f"{life.why}: their count rises to the creation rate x {duration(life.seconds)} and levels off there; "
        f"{_hours(c.features.span_hours)} of samples cannot show past that fill (needs >= "
        f"{duration_up(3 * life.seconds)}): growing, too short to call"
    )


def _harmful(c: Context) -> bool:
    """Memory already gone, not a rate from seconds: short_share of MemTotal grown at short_share_per_day."""
    th = c.thresholds
    share = c.share_per_day
    return (
        share is not None and share >= th.short_share_per_day and c.growth >= th.short_share * float(c.mem_total or 0.0)
    )


def _short_ramp(c: Context) -> str | None:
    th = c.thresholds
    share = c.share_per_day
    if c.features.span_hours < th.short_hours and c.growth < th.short_growth and not _harmful(c) and _rising(c):
        of_memory = "" if not c.mem_total else f" ({c.growth / c.mem_total:.2%} of MemTotal, {share:.1%} a day)"
        return (
            f"grew {_grown(c)} in {_hours(c.features.span_hours)}{of_memory}: under {_hours(th.short_hours)} "
            f"a cache warming up or a workload's ramp grows this much; a leak is called from {_kb(th.short_growth)} "
            f"of growth, or from {th.short_share:.2%} of MemTotal grown at {th.short_share_per_day:.0%} of it a day, "
            f"or over >= {duration_up(th.short_hours * 3600.0)}: growing, too short to call"
        )
    return None


def _aggregate_short(c: Context) -> str | None:
    th = c.thresholds
    # A sum of many caches passes short_growth from their ramps together, each too brief to call (a UDP socket
    # leak of 85 s, 2.8 MB, beside the page cache's radix_tree_node: SUnreclaim "leaks" 4.8 MB in 130 s at
    # high): the bar is the one its caches need, so under short_hours the sum alone is no leak, unless harmful.
    if c.aggregate and c.features.span_hours < th.short_hours and not _harmful(c) and _rising(c):
        return (
            f"growing fast over {_hours(c.features.span_hours)}: grew {_grown(c)}, a sum of many caches; under "
            f"{_hours(th.short_hours)} a cache is called a leak from {_kb(th.short_growth)} of its own growth, or "
            f"from {th.short_share:.2%} of MemTotal grown at {th.short_share_per_day:.0%} of it a day: "
            "too short to call a leak, watch it"
        )
    return None


def _back_at_baseline(c: Context) -> str:
    assert c.returned is not None
    r = c.returned.excursion()
    return (
        f"rose {_kb(r.rise)} from {_kb(r.baseline)} (its first window median) to {_kb(r.peak)} in "
        f"{duration(r.rose_for)}, then fell back to {_kb(r.back)} in {duration(r.fell_for)}, within "
        f"{c.thresholds.returned_share:.0%} of its rise above where it started: given back, not a leak"
    )


def _returned_rising_again(c: Context) -> str | None:
    r, th = c.returned, c.thresholds
    if r is None or r.rises_after < th.min_growth:
        return None
    return (
        f"{_back_at_baseline(c)}; it rose {_kb(r.rises_after)} again since, too little of the stretch to judge on "
        f"its own ({r.after} window median{'' if r.after == 1 else 's'} from +{_hours(r.restart_hours)}, needs >= "
        f"{th.min_points}): "
        "growing, too short to call"
    )


def _returned(c: Context) -> str | None:
    return None if c.returned is None else _back_at_baseline(c)


def _no_effect(c: Context) -> str | None:
    th = c.thresholds
    if c.rate < th.min_rate:
        return f"grows {_kb(c.rate)}/h, below {_kb(th.min_rate)}/h"
    if c.growth < th.min_growth:
        return f"grows {_grown(c)} over the stretch, below {_kb(th.min_growth)}"
    share = c.share_per_day
    if share is not None and share < th.min_share_per_day:
        return f"grows {share:.4%} of MemTotal per day, below {th.min_share_per_day:.3%}"
    return None


def _small_growth(c: Context) -> str | None:
    f, th = c.features, c.thresholds
    growth = c.growth
    if growth < th.clear_growth and not (f.tau >= th.clear_tau and f.r2 >= th.clear_tau):
        return (
            f"grows {_grown(c)} over the stretch, within the wander of a busy cache "
            f"(not steady enough to tell: Kendall tau {f.tau:.2f}, r² {f.r2:.2f})"
        )
    return None


def _one_time_step(c: Context) -> str | None:
    f, th = c.features, c.thresholds
    # A step fits as well as a hinge whose bend is one window long (a jump at the very end): within
    # 5% the simpler reading, a one-time step, wins.
    best_hinge = min(f.plateau.rss_ratio, f.onset.rss_ratio)
    if f.step.rss_ratio <= th.step_ratio and f.step.rss_ratio <= best_hinge * 1.05 and f.step_sides_flat:
        # The knot lies between two window medians' centres: the step is placed to within a window.
        return f"one-time step of {_kb(f.step.size)} at about {_at(c, f.step.hours)}, flat before and after"
    return None


def _plateau(c: Context) -> str | None:
    f, th = c.features, c.thresholds
    if (
        f.plateau.rss_ratio <= th.plateau_ratio
        and f.plateau.size > 0
        and f.plateau.hours <= f.span_hours * th.plateau_knot
        and f.fill.size > 0
        and f.fill.rss_ratio <= f.plateau.rss_ratio * th.smooth_fill
        and f.fill.hours <= f.span_hours / 3
    ):
        # A cache warming up slows down smoothly as it fills, and is 95% full three time constants
        # in (so the fill must have happened within the stretch); a leak that pauses stops abruptly.
        return (
            f"filled smoothly (time constant {_hours(f.fill.hours)}), flat after about {_at(c, f.plateau.hours)}: "
            "warming up"
        )
    return None


def _no_consistent_trend(c: Context) -> str | None:
    f, th = c.features, c.thresholds
    if f.tau < th.suspect_tau and f.minima_tau < th.suspect_tau:
        return f"moves without a consistent trend (Kendall tau {f.tau:.2f}, of its floor {f.minima_tau:.2f})"
    return None


def _floor_rises_through_reclaim(c: Context) -> str | None:
    f, th = c.features, c.thresholds
    # A drawdown alone may be files deleted, not reclaim: the shrinkers must have run (vmstat
    # slabs_scanned or drop_slab moved), or, unrecorded, the stretch must be long enough.
    reclaimed = c.reclaim_ran is True or (c.reclaim_ran is None and f.span_hours >= th.reclaim_hours)
    # Under short_hours the floor of a reclaimable cache follows the files and objects in use (a build
    # creating files raises it between two shrinker passes): one stretch of rises is not a leak's floor.
    if (
        f.span_hours >= th.short_hours
        and c.reclaimable
        and reclaimed
        and f.drawdown >= th.reclaim_seen
        and f.minima_slope >= th.min_rate
        and f.minima_tau >= th.leak_tau
    ):
        return (
            f"reclaimable, and was reclaimed (gave back {f.drawdown:.0%} of its range), "
            f"yet its floor rises {_kb(f.minima_slope)}/h"
        )
    return None


def _reclaimable(c: Context) -> str | None:
    f = c.features
    if c.reclaimable:
        seen = f"gave back {f.drawdown:.0%} of its range" if f.drawdown > 0.05 else "not yet reclaimed"
        if c.reclaim_ran is False:
            seen += "; the shrinkers did not run during the stretch"
        if c.pinned_by:
            return f"reclaimable only where unused, growing {_kb(c.rate)}/h ({seen}): {c.pinned_by}"
        return f"reclaimable cache growing {_kb(c.rate)}/h ({seen}); the kernel frees it under memory pressure"
    return None


def _given_back(c: Context) -> str | None:
    f, th = c.features, c.thresholds
    if f.drawdown >= th.given_back and (f.minima_slope < th.min_rate or f.minima_tau < th.suspect_tau):
        return f"gave back {f.drawdown:.0%} of its range and its floor does not rise: freed again"
    return None


def _slabs_not_objects(c: Context) -> str | None:
    share = c.in_use_share
    if share is not None and share < c.thresholds.min_in_use_share:
        return (
            f"its slabs grow but the objects in use account for only {max(share, 0.0):.0%} of it: "
            "free objects kept in partial or per-CPU slabs, not (yet) leaked objects"
        )
    return None


def _steady_ramp(c: Context) -> str | None:
    f, th = c.features, c.thresholds
    if (
        f.tau >= th.leak_tau
        and f.r2 >= th.leak_r2
        and f.ts_low > 0
        and (f.persistence is None or f.persistence >= th.min_persistence)
        and f.drawdown <= th.max_leak_drawdown
        and f.minima_tau >= th.leak_minima_tau
    ):
        return (
            f"steady ramp: Kendall tau {f.tau:.2f}, r² {f.r2:.2f}, never gave back more than "
            f"{f.drawdown:.0%} of its range"
        )
    return None


def _short_loose_rise(c: Context) -> str | None:
    f, th = c.features, c.thresholds
    if f.span_hours >= th.short_hours or c.aggregate or _harmful(c) or f.r2 >= th.short_suspect_r2 or c.rate <= 0:
        return None
    # (Before slabs-not-objects: filp under a build's churn, r² 0.27 in 3 min, was an "open files suspected leak".)
    return (
        f"rises but not steadily (Kendall tau {f.tau:.2f}, r² {f.r2:.2f}, under {th.short_suspect_r2:.1f}) over "
        f"{_hours(f.span_hours)}: a busy cache's bursts; too short to call from so loose a fit"
    )


def _short_process_rise(c: Context) -> str | None:
    f, th = c.features, c.thresholds
    if not c.with_processes or f.span_hours >= th.short_hours or _harmful(c) or _consistent_rise(c) is None:
        return None  # (what would not be a suspicion anyway keeps its grade: no-trend is stable)
    # A build or a test suite starts and ends thousands of processes a minute: their mappings, tasks and file
    # tables come and go in bursts.  Over a short stretch only a steady ramp (steady-ramp) tells a leak.
    return (
        f"rises but not steadily (Kendall tau {f.tau:.2f}, r² {f.r2:.2f}) over {_hours(f.span_hours)}, and its "
        "objects live as long as processes: processes starting and exiting grow and free them in bursts; "
        f"a leak is called from a steady ramp (r² >= {th.leak_r2:.1f}) or over >= {_hours(th.short_hours)}: "
        "growing, too short to call"
    )


def _consistent_rise(c: Context) -> str | None:
    f, th = c.features, c.thresholds
    if f.tau >= th.suspect_tau and f.ts_low > 0 and f.minima_slope > 0:
        return f"rises consistently but not steadily: Kendall tau {f.tau:.2f}, r² {f.r2:.2f}"
    return None


def _otherwise(c: Context) -> str | None:
    return f"no consistent trend (Kendall tau {c.features.tau:.2f})"


Rule = tuple[str, Grade, Callable[[Context], str | None]]

#: The rule that names growth beside the page cache (findings say so in their titles).
WITH_PAGE_CACHE = "grows-with-page-cache"
#: The rule of a sum of caches (SUnreclaim) growing fast over a stretch too short for any of its caches.
AGGREGATE_SHORT = "aggregate-short"

#: The rule of a rise that stopped before the store's end and is held: not a leak until it rises again.
HELD_RISE = "held-rise"
RETURNED = "returned-to-baseline"  # a series that rose and fell back to where it started (findings.returned_finding)

#: The ordered rules: the first whose test returns a reason decides.
RULES: tuple[Rule, ...] = (
    ("growing-too-short", Grade.UNDECIDED, _growing_too_short),
    ("too-short", Grade.STABLE, _too_short),
    (RETURNED_RISING, Grade.UNDECIDED, _returned_rising_again),
    (RETURNED, Grade.STABLE, _returned),
    ("rise-below-growth", Grade.UNDECIDED, _rise_below_growth),
    ("no-effect", Grade.STABLE, _no_effect),
    ("small-growth", Grade.STABLE, _small_growth),
    ("one-time-step", Grade.STABLE, _one_time_step),
    ("plateau", Grade.STABLE, _plateau),
    ("no-consistent-trend", Grade.STABLE, _no_consistent_trend),
    ("timer-fill", Grade.UNDECIDED, _timer_fill),
    ("short-ramp", Grade.UNDECIDED, _short_ramp),
    ("floor-rises-through-reclaim", Grade.SUSPECT, _floor_rises_through_reclaim),
    ("reclaimable", Grade.RECLAIMABLE, _reclaimable),
    # After rule reclaimable: only caches the kernel does not shrink (or not known to) reach it, "given back"
    # by their owners, never "reclaimable".
    ("given-back", Grade.GIVEN_BACK, _given_back),
    (WITH_PAGE_CACHE, Grade.UNDECIDED, _grows_with_page_cache),
    ("short-loose-rise", Grade.UNDECIDED, _short_loose_rise),
    ("slabs-not-objects", Grade.SUSPECT, _slabs_not_objects),
    (AGGREGATE_SHORT, Grade.UNDECIDED, _aggregate_short),
    ("steady-ramp", Grade.LEAK, _steady_ramp),
    ("short-process-rise", Grade.UNDECIDED, _short_process_rise),
    ("consistent-rise", Grade.SUSPECT, _consistent_rise),
    ("no-trend", Grade.STABLE, _otherwise),
)


def decide(context: Context) -> Verdict:
    """Apply :data:`RULES` in order and return the first verdict; a rise held at its level to the store's end first."""
    if context.held is not None:
        # Before every rule (and outside docs/leaks.md's numbered table): a rise judged on its own is a steady ramp
        # up to its top, a leak's shape, but one that stopped 50 s before the store's end (a JVM mapping its heap)
        # was "leaks 193,686 KB/h" at high.  It is a leak only while it still rises at the end.  A late, short one
        # may rise again (too short to call); one held since the middle of the store, as long as it rose, is
        # stable: 40 min of a ramp, then 50 min flat, was "leak suspected" (consistent-rise) at medium.
        return Verdict(Grade.UNDECIDED if context.held.late else Grade.STABLE, HELD_RISE, context.held.said())
    for name, grade, test in RULES:
        reason = test(context)
        if reason is not None:
            return Verdict(grade, name, reason)
    raise AssertionError("the last rule always decides")  # pragma: no cover


def rule_number(rule: str) -> int:
    """The rule's number in :data:`RULES` and in docs/leaks.md's table (1 first)."""
    return next(i for i, (name, _grade, _test) in enumerate(RULES, 1) if name == rule)


def _yardstick(th: LeakThresholds) -> dict[str, tuple[str, str, str]]:
    """What each rule that calls a problem (leak, suspect) holds a series to: (what, value, thresholds read)."""
    steady = (
        f"Kendall tau >= {th.leak_tau:.2f}, r² >= {th.leak_r2:.2f}, the rate's 90% CI above 0, persistence >= "
        f"{th.min_persistence:.2f}, never giving back more than {th.max_leak_drawdown:.0%} of its range, a rising "
        f"floor (minima tau >= {th.leak_minima_tau:.2f})"
    )
    # The effect every rule below needs first (rules no-effect, small-growth, short-ramp).
    effect = (
        f"growth of >= {_kb(th.min_growth)} at >= {_kb(th.min_rate)}/h (>= {_kb(th.short_growth)} under "
        f"{_hours(th.short_hours)}, unless harmful), then "
    )
    return {
        "steady-ramp": (
            "a leak's steady ramp",
            effect + steady,
            "min_growth, min_rate, short_growth, leak_tau, leak_r2, min_persistence, max_leak_drawdown, "
            "leak_minima_tau",
        ),
        "consistent-rise": (
            "a consistent rise, short of a leak's steady ramp",
            f"{effect}Kendall tau >= {th.suspect_tau:.2f}, the rate's 90% CI above 0, a rising floor (a leak needs "
            f"{steady})",
            "min_growth, min_rate, short_growth, suspect_tau",
        ),
        "slabs-not-objects": (
            "the share of a cache's growth a leak makes of objects in use",
            f">= {th.min_in_use_share:.0%} (less: free objects kept in slabs, a suspicion only)",
            "min_in_use_share",
        ),
        "floor-rises-through-reclaim": (
            "the floor a reclaimable cache falls back to",
            f"not rising after reclaim: a rise of >= {_kb(th.min_rate)}/h (minima tau >= {th.leak_tau:.2f}) after "
            f"giving back >= {th.reclaim_seen:.0%} of its range, over >= {_hours(th.reclaim_hours)}, is suspect",
            "min_rate, leak_tau, reclaim_seen, reclaim_hours",
        ),
    }


def rule_baseline(name: str, rule: str, th: LeakThresholds) -> Baseline:
    """What the rule that graded series ``name`` judged it against (docs/severity.md): a leak's or a suspect's, the
    bar that rule called it by; a rule that calls no problem (too short to call, reclaimable, given back, held), the
    bar a leak call needs, which that rule made it information before (its info findings had none: ``"baseline":
    null``, ue15 #13).  The growth judged is the series' own, from its first window median."""
    bars = _yardstick(th)
    said = bars.get(rule)
    named = (
        f"rule {rule_number(rule)} {rule}"
        if any(n == rule for n, _g, _t in RULES)
        else f"{rule} (before the numbered rules)"
    )
    if said is None:
        what, value, read = bars["steady-ramp"]
        return Baseline(
            f"what a leak call needs ({what}), {name} judged from its own first window median; {named} made it "
            "information first",
            value,
            f"LeakThresholds {read}: docs/leaks.md {named}",
        )
    what, value, read = said
    return Baseline(
        f"{what}, {name} judged from its own first window median",
        value,
        f"LeakThresholds {read}: docs/leaks.md {named}",
    )


def late_onset(features: Features, thresholds: LeakThresholds) -> float | None:
    """Hours into the stretch where a flat series starts to rise, when that fits much better than a line."""
    onset = features.onset
    if (
        onset.rss_ratio <= thresholds.onset_ratio
        and onset.size > 0
        and onset.hours >= features.span_hours * thresholds.onset_knot
        and onset.rss_ratio < features.step.rss_ratio * 0.95
    ):
        return onset.hours
    return None


def rise_at_end(hours: npt.NDArray[np.float64], features: Features, thresholds: LeakThresholds) -> float | None:
    """Hours of the last window median before a rise at the end of the stretch that its windows cannot tell from a
    one-time step; None when there is none.

    A rise over the last window or two fits a step (up, fitting much better than a line) as well as a late onset
    (the onset's knot cannot be placed after the last window but one): judged on the stretch's windows, the step
    won and the flat part's pairs made the Theil-Sen slope 0 (216 MB/h over the last 200 s of 2.8 h of 5-s
    samples: "stable, grows 0 KB/h").  Fewer than ``min_points`` windows after the step cannot show its shape;
    the raw samples from here on can (detectors.leaks.judge judges them on their own).
    """
    step = features.step
    if (
        step.size <= 0
        or step.rss_ratio > thresholds.onset_ratio
        or step.hours < features.span_hours * thresholds.onset_knot
        or int(np.count_nonzero(hours > step.hours)) >= thresholds.min_points
    ):
        return None
    before = hours[hours < step.hours]
    return float(before[-1]) if len(before) else None
