"""The leak analysis' records: a series' features, its grade and verdict, and the judgement of one series.

Made by detectors/leaks/ (features.py, decision.py, judge.py), carried by the results and shown by the
renderers (forensics/report/leaks.py, the fleet's).
"""

from __future__ import annotations

import enum
import fnmatch
import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, NamedTuple

from forensics.model import Finding, NotAvailable

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
    # info: a cache the kernel does not shrink (or not known to) that fell back and whose floor does not rise
    GIVEN_BACK = "growing but given back"
    UNDECIDED = "growing, too short to call"  # info: it rises, but the stretch cannot tell a leak yet
    STABLE = "stable"  # no finding

    @property
    def rank(self) -> int:
        """3 for a leak down to 0 for stable."""
        return {
            Grade.LEAK: 3,
            Grade.SUSPECT: 2,
            Grade.RECLAIMABLE: 1,
            Grade.GIVEN_BACK: 1,
            Grade.UNDECIDED: 1,
            Grade.STABLE: 0,
        }[self]


@dataclass(frozen=True)
class PageCacheTie:
    """How a series grew beside the page cache (meminfo Cached + Buffers) over its judged stretch."""

    growth: float  # bytes the page cache grew over the stretch (window medians, last minus first)
    ratio: float  # page-cache growth per byte of the series' growth
    in_step: bool  # they grow at the same moments (correlated increments), or both ramp and the series is generic
    correlation: float  # Pearson of the two series' window medians


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
class Fall:
    """The largest fall of a series between two samples: from a sample to a later, lower one.

    ``share`` is the fall over the series' rise before it (the peak less the lowest value before the peak), so 0.97
    is "gave back 97% of what it had grown"; a series that never fell after rising has none (:attr:`SeriesVerdict.fall`
    None): a fall from the first sample gives back nothing grown while sampled.
    """

    top: SampleRef  # the sample it fell from (the highest before the fall)
    bottom: SampleRef  # the lowest sample after it
    share: float  # of the rise before the fall, 0..1 (1: back to where it rose from, or below)
    # The lowest sample before the top, where the rise the share is of began: named, as the burst's finding measures
    # its own rise from its first window median (a second baseline read as the same one, /tmp/ue15 vm_area_struct).
    floor: SampleRef | None = None


class Excursion(NamedTuple):
    """A rise and its fall back near where it started, as rule returned-to-baseline judged it on window medians.

    One baseline for all its figures: a finding read "grew 9,253 KB" (from its lowest raw sample) beside "rose
    from 5,272 KB to 11,356 KB" (from its first window median) (/tmp/ue15, vm_area_struct)."""

    baseline: float  # bytes: the first window median judged
    peak: float  # bytes: the highest window median before it fell back
    back: float  # bytes: the lowest window median after the peak
    rose_for: float  # seconds from the baseline's window to the peak's
    fell_for: float  # seconds from the peak's window to the lowest after it
    # Where the peak and the lowest window median after it are (window centres, epoch s; None when not placed): a gap
    # in the samples between them holds the fall, unobserved.
    peak_wall: float | None = None
    back_wall: float | None = None
    again: float = 0.0  # bytes from the lowest window median after the peak to the last: what rose again
    again_for: float = 0.0  # seconds from that lowest window median to the last

    @property
    def rise(self) -> float:
        """Bytes from the baseline to the peak."""
        return self.peak - self.baseline

    @property
    def given_share(self) -> float:
        """The fall over the rise, 0..1 (1: back to the baseline or below)."""
        return min(1.0, (self.peak - self.back) / self.rise) if self.rise > 0 else 1.0


class Onset(NamedTuple):
    """Where a rise began, in the raw samples: the last one at the level before it, and the first above it.

    Found on ``measure``: a cache's objects in use (its first leaked objects fill free ones in its slabs, and its
    slab memory moves only when those run out), a meminfo field's bytes.  The values said are of that measure:
    the samples' bytes (:attr:`SampleRef.value`, num_objs x objsize) may not have moved at the onset found on
    objects in use (vm_area_struct, /tmp/ue9 v1: 15 s after the first mapping), and cited beside it read as a
    rise that had not begun."""

    before: SampleRef
    after: SampleRef
    measure: str  # what the rise was found on: OBJECTS_IN_USE or BYTES
    bar: float  # the fitted level before the rise and 3 standard deviations of its scatter, in ``measure``
    before_value: float  # the two samples' values in ``measure``
    after_value: float

    def amount(self, value: float) -> str:
        """A value of the onset's measure as read: ``19,914 objects in use`` or ``3,909 KB``."""
        return f"{value:,.0f} {OBJECTS_IN_USE}" if self.measure == OBJECTS_IN_USE else kb_amount(value)

    def said(self) -> str:
        """``rose after 05:04:25 (sample 49: 19,914 objects in use, within its level's scatter: at most 19,990),
        first above it at 05:04:30 (sample 50: 21,412 objects in use)``: what the samples show, on what; objects
        taken from free slab space, or growth under the level's scatter, do not show."""
        from forensics.units import iso_utc

        # Rounded down, as the counts it parts are whole: to the nearest, SUnreclaim read "within its level's scatter:
        # at most 61,608 KB), first above it at ... (sample 35: 61,608 KB)" of a bar of 61,607.6 KB.
        bar = self.amount(self.bar)
        if math.isfinite(self.bar):
            bar = (
                f"{math.floor(self.bar):,}" if self.measure == OBJECTS_IN_USE else f"{math.floor(self.bar / 1024):,} KB"
            )
        said = (
            f"rose after {iso_utc(self.before.wall)} (sample {self.before.sample_id}: {self.amount(self.before_value)},"
            f" within its level's scatter: at most {bar}), first above it at"
            f" {iso_utc(self.after.wall)} (sample {self.after.sample_id}: {self.amount(self.after_value)})"
        )
        if self.measure == OBJECTS_IN_USE:
            # Why the samples' slab memory cited beside it may not have moved yet.
            said += (
                "; found on objects in use (slabinfo's active_objs): slab memory grows once its free objects run out"
            )
        return said


#: The measures an onset is found on (:attr:`Onset.measure`).
OBJECTS_IN_USE = "objects in use"
BYTES = "bytes"


@dataclass(frozen=True)
class Held:
    """A rise that stopped before the store's end and is held at its new level: the raw samples where it began,
    where it reached that level, and the store's last (values in bytes).

    ``late``: a rise that began late and lasts under an hour, judged on its own samples (growing, too short to
    call: it may rise again); otherwise a rise in the middle of the store, held at least as long as it rose."""

    rose: float  # from the level before the rise to the level held
    start: SampleRef  # the last sample at the level before the rise (the stretch's first when it rose from there)
    top: SampleRef  # the first sample at the level held
    end: SampleRef  # the store's last sample
    late: bool

    def said(self) -> str:
        """What the samples show, and what they cannot."""
        from forensics.units import iso_utc

        return (
            f"rose {kb_amount(self.rose)} from {iso_utc(self.start.wall)} (sample {self.start.sample_id}) to "
            f"{iso_utc(self.top.wall)} (sample {self.top.sample_id}), then flat for the last "
            f"{duration(self.end.wall - self.top.wall)}: held, not growing; a leak stopped or a burst kept"
        )


#: The rule of a series back at its baseline that rises again, too briefly to judge: its rate is that rise's
#: (detectors/leaks/decision.py; here for :attr:`SeriesVerdict.again`).
RETURNED_RISING = "returned-rising-again"


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
    # The largest fall of its raw samples over the whole stretch (not only the judged part): what the verdict may
    # say was given back; None when it never fell after a rise.
    fall: Fall | None = None
    # Where a judged part starts after the stretch's first sample (a late onset, a rise after a return): the raw
    # samples either side of the rise's start.  The judged part starts at a window's edge, up to a window or more
    # before the rise (/tmp/ue9 t4: judged from 05:03:59, the first socket at 05:04:25).
    onset: Onset | None = None
    # Where it rose and fell back near its first window median (rule returned-to-baseline), None otherwise.
    excursion: Excursion | None = None
    # A rise that stopped and is held at its level to the store's end (rule held-rise, docs/leaks.md).
    held: Held | None = None
    # The part of its boot (detectors/leaks/series.py, SeriesMatrix.part): n after the n-th step back of the wall
    # clock that no uptime measured across, judged apart from the samples before it
    part: int = 0

    @property
    def stretch(self) -> tuple[str, int]:
        """The stretch it was judged on: its boot id and part."""
        return self.boot_id, self.part

    @property
    def grade(self) -> Grade:
        """The grade of the verdict."""
        return self.verdict.grade

    @property
    def growth(self) -> float:
        """Growth of the judged part, first to last window median (bytes)."""
        return self.features.growth

    @property
    def again(self) -> Excursion | None:
        """Its rise and fall where its rate is that of the rise again since (rule returned-rising-again), else None:
        the rate is then of that rise alone, not of the stretch its growth is."""
        return self.excursion if self.verdict.rule == RETURNED_RISING else None


# ---------------------------------------------------------------- the analysis (detectors/leaks)


def duration(seconds: float) -> str:
    """A duration in the unit a reader expects: 3 s, 2.5 min, 10 min, 2.0 h, 1.5 days; never more than 5% off.

    Under 10 min, minutes keep a tenth: 150 s read "3 min", 20% over (ue24).
    """
    if seconds < 10:
        return f"{seconds:.2g} s"  # a sub-second interval is not "0 s"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 600:
        return f"{seconds / 60:.1f}".removesuffix(".0") + " min"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    hours = seconds / 3600.0
    return f"{hours:.1f} h" if hours < 48 else f"{hours / 24:.1f} days"


#: The precision :func:`duration` says a span at from 10 s on (up to the first bound, in seconds): 1 s, a tenth of
#: a minute, a minute, a tenth of an hour, a tenth of a day.
_SAID_STEPS = ((120.0, 1.0), (600.0, 6.0), (7200.0, 60.0), (48 * 3600.0, 360.0), (math.inf, 8640.0))

#: A measured span or interval within this share of a round figure is that figure (a sampler's few ms late).
JITTER = 1e-3


def duration_up(seconds: float) -> str:
    """A least span (``needs >= ...``) as :func:`duration` says it, rounded up at the precision said: 1.83 h is
    "1.9 h" (as "1.8 h" it would fall short), 126.5 s "2.2 min".  Sampling jitter (under 0.1% of the span) is not
    raised: 24 samples at a measured 5.003 s interval take 115.07 s, "115 s" as the plan at 5 s said, not
    "116 s" beside "at this 5 s interval"."""
    if not math.isfinite(seconds) or seconds <= 0:
        return duration(seconds)
    if seconds < 10:
        step = 10.0 ** (math.floor(math.log10(seconds)) - 1)  # two significant figures
    else:
        step = next(step for below, step in _SAID_STEPS if seconds < below)
    return duration(math.ceil(seconds * (1.0 - JITTER) / step) * step)


def kb_amount(value: float) -> str:
    """An amount as read: ``4,096 KB``."""
    return f"{value / 1024:,.0f} KB"


def kb_amount_up(value: float) -> str:
    """A least amount (``must grow ...``) as :func:`kb_amount`, rounded up: 20,971.52 KB is "20,972 KB"."""
    return f"{math.ceil(value / 1024 - 1e-9):,} KB" if math.isfinite(value) else kb_amount(value)


def two_figures_up(rate: float) -> float:
    """A rate (bytes/h) rounded up to two significant figures of KB/h: 62,747 KB/h is 63,000 KB/h."""
    kb = rate / 1024
    if not math.isfinite(kb) or kb <= 0:
        return rate
    step = 10.0 ** (math.floor(math.log10(kb)) - 1)
    return math.ceil(kb / step - 1e-9) * step * 1024  # 1e-9: a figure already round is not raised by float error


def kb_per_hour(rate: float) -> str:
    """A growth rate as read: ``1,024 KB/h``."""
    return f"{rate / 1024:,.0f} KB/h"


def kb_per_hour_up(rate: float) -> str:
    """The slowest rate a stretch shows or a leak is reported at, as :func:`kb_per_hour`, rounded up: on 64 GiB
    279.6 KB/h is "280 KB/h" (a leak at a rate said below the bar would not be reported)."""
    return f"{math.ceil(rate / 1024 - 1e-9):,} KB/h" if math.isfinite(rate) else kb_per_hour(rate)


@dataclass(frozen=True)
class LeakThresholds:
    """The numbers behind the decision (documented in docs/leaks.md)."""

    min_rate: float = 256 * 1024  # bytes/h: slower growth is not worth a finding
    min_growth: float = 512 * 1024  # bytes over the stretch: less is noise for any cache
    clear_growth: float = 1024 * 1024  # less than this is within the wander of a busy cache...
    clear_tau: float = 0.9  # ...unless the growth is this steady (Kendall tau and r²)
    min_share_per_day: float = 0.0001  # of MemTotal: 0.01%/day
    min_points: int = 8  # window medians
    min_samples: int = 24  # raw samples: the ~24 windows the shape rules (step, plateau, onset) are tuned for
    min_hours: float = 0.0  # a shorter stretch is not judged
    # Under short_hours a cache warming up or a workload's ramp cannot be told from a leak by its shape (its
    # plateau lies beyond the stretch): a rise is called only from short_growth, or when it is harmful: it
    # would take short_share_per_day of MemTotal a day AND has already taken short_share of it within the
    # stretch (on a small guest 4 MiB is a lot; a rate extrapolated from seconds alone is not harm: 40 s of
    # a busy epoll cache growing 1.2 MB is 10% of a 24 GB machine a day, tests/data/workloads).  Baseline: 11
    # minutes of slab-watch on a freshly booted 2-core 24 GB machine at load 11 (tests/data/healthy/slabwatch)
    # saw ramps of up to 2.5 MB (SUnreclaim), 0.75% of MemTotal per day; a leak of 100 MB/h grows 4 MiB in
    # under 3 minutes; the vmcore fixture's leak (36 MB/h in a 143 MiB guest) takes 600% per day and 0.54%
    # of the guest's memory in its 94 s.
    short_hours: float = 1.0
    short_growth: float = 4 * 1024 * 1024
    short_share_per_day: float = 0.1
    short_share: float = 0.0025
    leak_tau: float = 0.7
    leak_r2: float = 0.8
    leak_minima_tau: float = 0.5
    min_persistence: float = 0.33
    max_leak_drawdown: float = 0.3
    suspect_tau: float = 0.4
    reclaim_seen: float = 0.2  # a drawdown of this share of the range means the cache was reclaimed
    reclaim_hours: float = 1.0  # without vmstat, a stretch this long is taken to have seen reclaim
    given_back: float = 0.35  # drawdown of a non-reclaimable cache that gives its growth back
    step_ratio: float = 0.35  # residuals of a one-time step / of a line
    plateau_ratio: float = 0.5  # residuals of rise-then-flat / of a line
    plateau_knot: float = 0.8  # the plateau must start before this share of the stretch
    smooth_fill: float = 1.25  # a fill is smooth when a saturating curve fits within this factor of the hinge
    onset_ratio: float = 0.5  # residuals of flat-then-rise / of a line
    onset_knot: float = 0.1  # a late onset starts after this share of the stretch
    min_in_use_share: float = 0.25  # a leak grows objects in use, not only slabs
    # A series that falls back to within this share of its rise above its baseline (its first window median) has
    # given its growth back: not a leak (rule returned-to-baseline); what rises after is judged on its own.
    returned_share: float = 0.25
    # Under short_hours a rise this unsteady (r² below it) is no leak's ramp: a busy cache's bursts; a suspicion
    # (medium) needs a steadier rise or a longer stretch (rule short-loose-rise).
    short_suspect_r2: float = 0.5
    # False for a series whose min_growth is the amplitude of its noise (the Unaccounted estimate): a rise
    # below it is noise however long the stretch, not "too short to call".
    short_rise_undecided: bool = True
    # A series that grows in step with a page cache growing this many times more (bytes) is not called a
    # leak while the page cache grows: page-cache metadata (buffer heads, xarray nodes, and kmalloc'ed
    # per-folio state) is freed with it.  Baseline: writing files on ext4 (Linux 6.18) grew kmalloc-512 by
    # 1 byte per 297-316 of page cache, buffer_head by 1 per 37, radix_tree_node by 1 per 417
    # (tests/data/workloads); a real leak beside the copy is judged on its own (detectors/leaks/pagecache.py).
    page_cache_ratio: float = 10.0


# ---------------------------------------------------------------- resampling windows
# A stretch is resampled to medians of fixed windows (detectors/leaks/series.py); growth is measured between the
# first and the last window median, whose centres lie less far apart than the first and the last sample.  Here, not
# in the detector, because what a stretch could show (Power) is measured in them too.

#: Longest resampling window, and how many windows a stretch is cut into at least.
MAX_WINDOW_SECONDS = 300.0
TARGET_WINDOWS = 24


def window_for(span_seconds: float, interval: float) -> float:
    """The resampling window: about span/24, at most 5 minutes, at least one interval."""
    return float(max(interval, min(MAX_WINDOW_SECONDS, span_seconds / TARGET_WINDOWS)))


def centres_apart(span_seconds: float, window: float) -> float:
    """Seconds between the first and the last window's centres of regular samples over ``span_seconds``.

    The first window's centre is half a window in; the last window, cut short by the end of sampling, is centred
    on what it holds (:func:`detectors.leaks.series.resample`).
    """
    if span_seconds <= 0 or window <= 0:
        return 0.0
    last_start = math.floor(span_seconds / window) * window
    return max(0.0, (last_start + span_seconds) / 2.0 - window / 2.0)


class Stretch(NamedTuple):
    """One stretch of samples judged on its own: a boot's, or a part of one cut by a step back of its wall clock
    that no uptime measured across (detectors/leaks/series.py)."""

    boot_id: str
    boot: int  # 1 for the store's first boot
    part: int  # 0 from the boot's first sample; n after its n-th step back judged apart
    first: int  # its first sample (store id)
    last: int  # its last sample
    samples: int
    observed_seconds: float
    interval_seconds: float | None  # None: one sample
    window_seconds: float | None

    def label(self, boots: int, parts: bool) -> str:
        """``boot 2``, ``samples 46 to 90``, or ``boot 2 samples 46 to 90``: as much as tells it from the others
        (``boots``: the store's boots; ``parts``: whether a boot was cut)."""
        said = [f"boot {self.boot}"] if boots > 1 else []
        if parts:
            said.append(f"samples {self.first} to {self.last}")
        return " ".join(said)

    def tag(self, boots: int, parts: bool) -> str:
        """The table's short form of :meth:`label`: ``2``, ``46-90`` or ``2:46-90``."""
        said = [str(self.boot)] if boots > 1 else []
        if parts:
            said.append(f"{self.first}-{self.last}")
        return ":".join(said)


@dataclass(frozen=True)
class Power:
    """What the longest boot stretch of samples can show.

    ``needed_seconds`` is the span ``needed_samples`` take at the stretch's
    own interval; ``full_seconds`` the least span at that interval over which a
    leak at ``min_rate`` shows (grows ``min_growth`` and what a median's noise
    may take off it between the first and the last window median).
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
    short_rate: float = math.inf  # ...or from this rate (bytes/h: short_share_per_day of MemTotal)...
    short_memory: float = math.inf  # ...once grown this much (bytes: short_share of MemTotal)
    # What the noise of a window median can take off a growth measured between two of them (bytes): a leak at the
    # rate said falls short of the bar 5% of the time at most (detectors/leaks/power.py, median_noise).
    margin: float = 0.0
    # Seconds of the stretch in gaps of its sampling (a suspend, a stopped sampler): not in ``span_seconds``, which
    # is the time observed; a 10-min suspend was counted as coverage ("would show in 46 samples over 11 min", ue23 #4)
    unobserved_seconds: float = 0.0
    # Why the stretch's span cannot be measured at all (its wall clock went back, no uptime to measure across it);
    # "" where it can.  A step back of 1 h said "46 samples over -3.6e+03 s" (ue23 #11).
    unmeasured: str = ""
    # Each stretch judged on its own (a boot's, or a part of one cut by a step back of the wall clock no uptime
    # measured), in the order sampled.  The figures above are the longest's; a store of two boots said "26 samples
    # over 25 s" of 46 samples, the second boot judged too (ue23 #10), and "every 10 s" of both where one was
    # sampled every second.
    boots: tuple[Stretch, ...] = ()

    @property
    def judgeable(self) -> bool:
        """Enough samples over a long enough span for the statistics, and a span measured."""
        return not self.unmeasured and self.samples >= self.needed_samples and self.span_seconds >= self.needed_seconds

    @property
    def full(self) -> bool:
        """The stretch shows a leak at the slowest rate reported: measured between its window medians, with their
        noise (:attr:`detectable_rate`), not only as long as ``min_growth / min_rate`` (121 samples every 60 s
        show 262 KB/h, not 256)."""
        return self.judgeable and self.detectable_rate <= self.min_rate * (1.0 + 1e-9)

    @property
    def measured_seconds(self) -> float:
        """Seconds a growth is measured over: between the first and the last window median's centres, less than
        the span by about a window (a leak at ``min_growth`` over the whole span grew 4,016 KB of the 4,096 KB
        the bar needs between them: /tmp/ue9 pw/)."""
        if self.interval_seconds is None:
            return self.span_seconds
        return centres_apart(self.span_seconds, window_for(self.span_seconds, self.interval_seconds))

    @property
    def shown_rate(self) -> float:
        """:attr:`detectable_rate` as said: rounded up to two significant figures of KB/h, so that a plan and its
        store say the same (62,747 and 63,511 KB/h were said of one 4 min plan and its store, /tmp/ue15) and a
        leak at the rate said still shows (rounded down it might not)."""
        return two_figures_up(self.detectable_rate)

    @property
    def said_rate(self) -> float:
        """The slowest leak (bytes/h) this stretch is said to show, as said (the JSON's figure is the text's): at
        full power the slowest rate reported, rounded up to a whole KB/h (:func:`kb_per_hour_up`), else
        :attr:`shown_rate`."""
        if self.full:
            return math.ceil(self.min_rate / 1024 - 1e-9) * 1024.0 if math.isfinite(self.min_rate) else self.min_rate
        return self.shown_rate

    @property
    def detectable_rate(self) -> float:
        """The slowest leak (bytes/h) this stretch can show: ``min_growth`` (and what a median's noise may take
        off it) over the time between the first and the last window median, at least ``min_rate``."""
        hours = self.measured_seconds / 3600.0
        if self.span_seconds <= 0 or hours <= 0:
            return math.inf
        rate = (self.min_growth + self.margin) / hours
        if self.measured_seconds < self.short_seconds:  # the rules measure a stretch's span between its windows too
            harmful = max(self.short_rate, self.short_memory / hours)
            rate = max(rate, min((self.short_growth + self.margin) / hours, harmful))
        return max(self.min_rate, rate)

    @property
    def cut(self) -> bool:
        """Whether a boot's samples were cut by a step back of the wall clock into stretches judged apart."""
        return any(b.part for b in self.boots)

    @property
    def unit(self) -> str:
        """What a stretch is called where several are judged: ``boot``, or ``stretch`` where a boot was cut."""
        return "stretch" if self.cut else "boot"

    def seen(self, cadence: bool = False) -> str:
        """``121 samples over 10 min``; with a gap ``46 samples over 44 s observed (plus 10 min in gaps, not
        observed)``; of a store of several boots each boot's with its own interval (``46 samples of 2 boots:
        boot 1 (26 over 25 s every 1 s), boot 2 (20 over 3.2 min every 10 s)``); of a boot cut by a step back of
        its wall clock no uptime measured, each side's (``90 samples judged in 2 stretches apart: samples 1 to 45
        (45 over 44 s every 1 s), ...``).  ``cadence``: the one stretch's interval too (``... every 1 s``)."""
        if len(self.boots) > 1:
            boots = len({b.boot_id for b in self.boots})
            each = ", ".join(
                f"{b.label(boots, self.cut)} ({b.samples} over {duration(b.observed_seconds)}"
                + (f" every {duration(b.interval_seconds)}" if b.interval_seconds else "")
                + ")"
                for b in self.boots
            )
            total = sum(b.samples for b in self.boots)
            if self.cut:
                of = f" of {boots} boots" if boots > 1 else ""
                return f"{total} samples{of} judged in {len(self.boots)} stretches apart: {each}"
            return f"{total} samples of {boots} boots: {each}"
        every = f" every {duration(self.interval_seconds)}" if cadence and self.interval_seconds else ""
        return self.seen_longest() + every

    def seen_longest(self) -> str:
        """The longest boot's samples and the time they observed: ``46 samples over 44 s observed (plus 10 min in
        gaps, not observed)``; where its span cannot be measured, its samples alone."""
        said = f"{self.samples} sample{'s' if self.samples != 1 else ''}"
        if self.unmeasured:
            return said
        return f"{said} over {self.whole()}"

    def whole(self) -> str:
        """The time the longest boot's samples observed: ``44 s observed (plus 10 min in gaps, not observed)``, or
        ``10 min``."""
        if self.unobserved_seconds > 0:
            gaps = duration(self.unobserved_seconds)
            return f"{duration(self.span_seconds)} observed (plus {gaps} in gaps, not observed)"
        return duration(self.span_seconds)

    def needed_span(self) -> str:
        """`` over >= 23 s``: the span the samples needed take; "" where no interval was measured (one sample) and
        no least span is set, so that "over >= 0 s" is never said of an interval not read."""
        if self.interval_seconds is None and self.needed_seconds <= 0:
            return ""
        return f" over >= {duration_up(self.needed_seconds)}"

    def shortfall(self) -> str:
        """``cannot judge yet: 4 samples over 3 s, needs >= 24 over >= 23 s``."""
        if self.unmeasured:
            return f"cannot judge: {self.seen()}; {self.unmeasured}"
        every = f" (at this {duration(self.interval_seconds)} interval)" if self.interval_seconds else ""
        return f"cannot judge yet: {self.seen()}, needs >= {self.needed_samples}{self.needed_span()}{every}"

    def advice(self) -> str:
        """How long to sample for which power, in one clause, from the figures the other lines say.

        ``>= 115 s (24 samples at this 5 s interval) shows a leak of 140,000 KB/h or faster, >= 2.0 h one down
        to 256 KB/h``: the span that judges at all and what it can show, then the span of full power.
        """
        slowest = kb_per_hour_up(self.min_rate)
        if self.interval_seconds is None:
            full = duration_up(self.full_seconds)
            return f"{self.needed_samples} samples judge at all, over >= {full} a leak down to {slowest}"
        judged = (
            f">= {duration_up(self.needed_seconds)} ({self.needed_samples} samples at this"
            f" {duration(self.interval_seconds)} interval)"
        )
        if self.needed_seconds >= self.full_seconds:
            return f"{judged} shows a leak down to {slowest}"
        # Rounded up, as every rate said to show: to the nearest, 131,072 KB/h was said "130,000" (a leak at 130,500
        # would not show).
        first = replace(self, span_seconds=self.needed_seconds)
        note = self.scatter_note(self.needed_seconds)
        return (
            f"{judged} shows a leak of {kb_per_hour(first.shown_rate)} or faster{note},"
            f" >= {duration_up(self.full_seconds)} one down to {slowest}"
        )

    def scatter_note(self, span_seconds: float | None = None) -> str:
        """`` (63,000 KB/h from the samples' count and span alone, ...)``, or "": said after :attr:`shown_rate` of
        this stretch (or of one of ``span_seconds`` at this interval) where the scatter of its caches' window
        medians (:attr:`margin`) raises it by a rounding step or more above what the samples' count and span alone
        give, the figure slab-watch's plan says (a plan cannot know the scatter): a 4 min plan said 63,000 KB/h and
        its store 64,000 KB/h, the difference unexplained (/tmp/ue15)."""
        power = self if span_seconds is None else replace(self, span_seconds=span_seconds)
        bare = replace(power, margin=0.0).shown_rate
        if bare >= power.shown_rate:
            return ""
        return (
            f" ({kb_per_hour(bare)} from the samples' count and span alone, as a slab-watch plan for them says;"
            f" the scatter of these caches' window medians, which may take up to {kb_amount_up(self.margin)} off a"
            " growth measured between two, raises it)"
        )

    def later(self) -> str:
        """What growth shorter than the stretch needs: the same growth in its own samples, said in one clause.

        The detectable rate assumes growth through the whole stretch; a leak that starts later is judged on its own
        samples (a late onset) and must grow the amount a stretch of its length needs (rules 1, 5, 6 and 12).
        """
        needs = f"over >= {self.needed_samples} samples"
        if self.interval_seconds:
            needs += f" ({duration_up(self.needed_seconds)} at this interval)"
        if self.span_seconds < self.short_seconds:
            amount = min(self.short_growth, max(self.short_rate * self.span_seconds / 3600.0, self.short_memory))
            grow = kb_amount_up(max(self.min_growth, amount))
        elif self.short_seconds > 0:
            grow = (
                f"{kb_amount_up(self.short_growth)} if it lasts under {duration(self.short_seconds)}, "
                f"{kb_amount_up(self.min_growth)} if longer"
            )
        else:
            grow = kb_amount_up(self.min_growth)
        # Up to the last sample: a rise at the end, where a responder's leak is, is judged on its own raw samples
        # even where it moved no window median yet (detectors/leaks/judge.py, tail_rise).
        return f"one that starts later must grow {grow} after it starts, {needs}, up to the last sample"

    def reach(self) -> str:
        """What a judgeable stretch can and cannot show, in one clause."""
        longest = f"the longest {self.unit}'s " if len(self.boots) > 1 else ""
        whole = f"that lasts the whole {duration(self.span_seconds)} would show in {longest}{self.seen_longest()}"
        later = self.later()
        if self.full:
            return f"a leak of {kb_per_hour_up(self.min_rate)} or faster {whole}; {later}"
        return (
            f"a leak of {kb_per_hour(self.shown_rate)} or faster {whole}{self.scatter_note()}; {later}; "
            f"a slower one (down to {kb_per_hour_up(self.min_rate)}) needs >= {duration_up(self.full_seconds)} of"
            " samples"
        )


#: The caches a listing of /proc/PID/fd grows, one object each per fd listed: procfs's inode (and a dentry).
FD_VIEW_CACHES = ("proc_inode_cache",)


class Signature(NamedTuple):
    """A user action recognised by the caches it grows together."""

    subject: str  # "UDP sockets"
    action: str  # the likely user action, as said in the finding
    required: tuple[tuple[str, ...], ...]  # every group must match a member (any of its fnmatch patterns)
    next_steps: tuple[str, ...]
    companions: tuple[str, ...] = ()  # caches the same action typically grows too (fnmatch patterns)
    # (pattern, objects per anchor object) the action makes of a cache others allocate from too: one dentry, filp
    # and lsm_file_cache blob per socket (sock_alloc_file).  Where a member grows faster, the rest is not the group's.
    per_object: tuple[tuple[str, float], ...] = ()
    # Whether the objects are held open by a process (its sockets, files, mappings, watches): its exit frees them, so
    # the report's verdict says a process holds kernel memory, not that the kernel had a problem.
    held_by_process: bool = False
    # Open file descriptors each anchor object stands for (a socket's, a pipe end's): whoever lists a process's fds
    # (ls /proc/PID/fd, lsof, a monitoring agent) makes one procfs inode and one dentry per fd, kept while it is open.
    fds_per_object: float | None = None

    def involves(self, cache: str) -> bool:
        """Whether the action typically grows ``cache`` (the procfs view of its fds too, where it holds fds)."""
        patterns = (*(p for group in self.required for p in group), *self.companions)
        if self.fds_per_object is not None:
            patterns = (*patterns, *FD_VIEW_CACHES)
        return any(fnmatch.fnmatchcase(cache, p) for p in patterns)

    def made_per_object(self, cache: str) -> float | None:
        """How many objects of ``cache`` the action makes per anchor object, None when no fixed count is known."""
        return next((n for p, n in self.per_object if fnmatch.fnmatchcase(cache, p)), None)


class Share(NamedTuple):
    """How much of a member's growth is the group's, and on what evidence.

    ``fraction`` of the member's growth is attributed to the group (1.0: all of it), None when the samples cannot
    tell (the share is unknown: it is then left out of the group's rate).  ``basis``: "anchor" (the cache the group
    is counted by), "count" (the action makes a known number per anchor object), "in step" (its increments follow
    the anchor's), "unknown".  ``why`` says it in words.
    """

    fraction: float | None
    basis: str
    why: str


@dataclass(frozen=True)
class CoGrowth:
    """Caches growing together: the anchor first, objects per anchor object, and the action recognised."""

    members: tuple[SeriesVerdict, ...]
    ratios: tuple[float, ...]  # objects of each member per object of the anchor (1.0 for the anchor)
    signature: Signature | None
    shares: tuple[Share, ...] = ()  # per member: how much of its growth is the group's (empty: all of it)

    @property
    def grade(self) -> Grade:
        """The worst grade among the members."""
        return max((m.grade for m in self.members), key=lambda g: g.rank)

    @property
    def names(self) -> tuple[str, ...]:
        """Member cache names, anchor first."""
        return tuple(m.name for m in self.members)

    def share(self, index: int) -> Share:
        """The share of member ``index`` (all of it where none was worked out)."""
        return self.shares[index] if self.shares else Share(1.0, "anchor" if index == 0 else "in step", "")

    def attributed(self, index: int) -> float | None:
        """Bytes per hour of member ``index`` that are the group's, None when its share is unknown."""
        fraction = self.share(index).fraction
        return None if fraction is None else fraction * max(self.members[index].rate, 0.0)

    @property
    def rate(self) -> float:
        """Bytes per hour the group's members grow for it: each member's attributed share, unknown shares left out.

        A cache the group shares with other users (dentry grows for procfs and ext4 lookups too) counts only the
        part in step with the anchor; before, its whole growth was summed into the group's.
        """
        return sum(a for i in range(len(self.members)) if (a := self.attributed(i)) is not None)

    @property
    def unattributed_rate(self) -> float:
        """Bytes per hour of members' growth not attributed to the group (other reasons, or shares unknown)."""
        return sum(max(m.rate, 0.0) for m in self.members) - self.rate


class SampleGap(NamedTuple):
    """A hole in one boot's samples (a suspend, a stopped sampler), or a step back of its wall clock."""

    before: int  # the sample before it (store id)
    after: int  # the sample after it
    seconds: float  # negative: the wall clock went back between the two samples (NTP stepped it, or a hand)
    start: float  # wall time of the sample before
    end: float  # wall time of the sample after
    # A step back with no uptime to measure across it: the samples on each side were judged apart, no figure is
    # measured across it (ue23 #11: a figure at 0.5 was given across it beside "cannot judge")
    apart: bool = False

    @property
    def back(self) -> bool:
        """The wall clock stepped back: the later sample reads an earlier time."""
        return self.seconds < 0

    def said(self) -> str:
        """``a 79 s gap in sampling from 05:06:20 to 05:07:39 (samples 72 to 73)``, or ``a 60 min step back of the
        wall clock between samples 60 and 61 (21:25:40, then 20:26:40)``."""
        from forensics.units import iso_utc

        if self.back:
            return (
                f"a {duration(-self.seconds)} step back of the wall clock between samples {self.before} and"
                f" {self.after} ({iso_utc(self.start)}, then {iso_utc(self.end)})"
                + (" and the samples carry no uptime to measure across it" if self.apart else "")
            )
        return (
            f"a {duration(self.seconds)} gap in sampling from {iso_utc(self.start)} to {iso_utc(self.end)}"
            f" (samples {self.before} to {self.after})"
        )

    def short(self) -> str:
        """``a 72 s gap in the samples`` or ``a 60 min step back of the wall clock``: said beside a figure."""
        if self.back:
            return f"a {duration(-self.seconds)} step back of the wall clock"
        return f"a {duration(self.seconds)} gap in the samples"


class ClockStep(NamedTuple):
    """The wall clock stepped between two samples of one boot while their uptime went on (NTP, a hand, a VM resumed).

    Not a gap: the uptime (CLOCK_BOOTTIME, which counts a suspend) says how much time passed, and the sample after
    it and every later one of the boot are placed at the earlier sample's time plus the uptime that passed, so
    spans, rates and gaps are measured by uptime across it.
    """

    before: int  # the sample before it (store id)
    after: int  # the sample after it
    seconds: float  # how far the wall clock moved off the uptime (negative: back)
    read: float  # the wall time the sample after it holds, as recorded
    placed: float  # where it is placed: the sample before's time plus the uptime that passed
    uptime_passed: float  # seconds of uptime between the two samples

    def said(self) -> str:
        """``the wall clock stepped +60 min between samples 26 and 27 (sample 27 reads 2026-12-07T19:46:57+00:00,
        1.0 s of uptime after sample 26); spans and rates measured by uptime``."""
        from forensics.units import iso_utc

        sign = "+" if self.seconds >= 0 else "-"
        return (
            f"the wall clock stepped {sign}{duration(abs(self.seconds))} between samples {self.before} and"
            f" {self.after} (sample {self.after} reads {iso_utc(self.read)}, {duration(self.uptime_passed)} of uptime"
            f" after sample {self.before}: placed at {iso_utc(self.placed)}); spans and rates measured by uptime"
        )


class Reboot(NamedTuple):
    """A reboot between two samples: the boot id changed, or the uptime went back under one boot id (or none)."""

    before: int  # the sample before it (store id)
    after: int  # the sample after it
    boot_changed: bool  # False: only the uptime says it (the store has no boot id, or the same one on both sides)
    uptime_before: float | None
    uptime_after: float | None

    def said(self) -> str:
        """``a reboot between samples 60 and 61 (the boot id changed; uptime 3,600 s, then 100 s): each boot judged
        on its own, on its own clock``."""
        uptimes = (
            f"uptime {self.uptime_before:,.0f} s, then {self.uptime_after:,.0f} s"
            if self.uptime_before is not None and self.uptime_after is not None
            else "uptime not recorded"
        )
        if self.boot_changed:
            return (
                f"a reboot between samples {self.before} and {self.after} (the boot id changed; {uptimes}): each boot"
                " judged on its own, on its own wall clock"
            )
        return (
            f"the uptime went back between samples {self.before} and {self.after} ({uptimes}) with no change of boot"
            " id: a reboot the store does not mark, judged as one boot, so figures across it are not facts"
        )


#: More gaps than this are said as one (count, time in all, the longest).
GAPS_SAID_ONE_BY_ONE = 3


@dataclass(frozen=True)
class ExaminedSeries:
    """What the analysis looked at: the series judged, how many grow too briefly to call, the power."""

    power: Power
    caches: int  # cache names seen
    judged: int  # caches that moved enough to be judged
    meminfo: int  # meminfo series judged
    flagged: int  # series graded leak or suspect
    undecided: int  # series graded "growing, too short to call"
    refs: tuple[SampleRef, ...]  # the first and last sample of the stretch
    locator_name: str  # what the refs cite (a cache, or meminfo:FIELD)
    gaps: tuple[SampleGap, ...] = ()  # holes in the sampling of one boot (a suspend, a stopped sampler)
    steps: tuple[ClockStep, ...] = ()  # steps of the wall clock within a boot, measured across by uptime
    reboots: tuple[Reboot, ...] = ()  # where a boot ends and the next begins
    uptime_known: bool = False  # every sample recorded its uptime: a gap is then no step of the wall clock

    def reboot_note(self) -> str:
        """The reboots between the samples ("" without): each, and how the boots are judged."""
        said = "; ".join(r.said() for r in self.reboots[:GAPS_SAID_ONE_BY_ONE])
        more = len(self.reboots) - GAPS_SAID_ONE_BY_ONE
        return said + (f"; and {more} more reboot(s)" if more > 0 else "")

    def step_note(self) -> str:
        """The steps of the wall clock within a boot ("" without): each, and that the figures are on uptime."""
        said = "; ".join(s.said() for s in self.steps[:GAPS_SAID_ONE_BY_ONE])
        more = len(self.steps) - GAPS_SAID_ONE_BY_ONE
        return said + (f"; and {more} more step(s) of the wall clock" if more > 0 else "")

    def gap_note(self) -> str:
        """What the gaps in the samples mean for the figures ("" without gaps): each (from, to, how long)."""
        if not self.gaps:
            return ""
        holes = [g for g in self.gaps if not g.back]
        steps = [g for g in self.gaps if g.back]
        notes = []
        if len(holes) > GAPS_SAID_ONE_BY_ONE:
            longest = max(holes, key=lambda g: g.seconds)
            notes.append(
                f"{len(holes)} gaps in sampling ({duration(sum(g.seconds for g in holes))} in all, the"
                f" longest {longest.said().removeprefix('a ')})"
            )
        elif holes:
            notes.append("; ".join(g.said() for g in holes))
        if holes:
            notes[-1] += (
                (
                    ": a suspend or a stopped sampler (the uptime passed as much as the wall clock: no clock step)"
                    if self.uptime_known
                    else ": a suspend, a stopped sampler or a clock step"
                )
                + "; growth during a gap was not observed, so rates and"
                " spans measured across one are not facts and a leak may be missed"
            )
        for said, these in (
            # Samples are kept in the order taken: on both sides of a step back their times overlap, and a span or
            # rate measured on the wall clock across it is wrong, not merely unobserved.
            (
                ": the clock was set back (NTP or by hand); times, spans and rates measured across it are not facts",
                [g for g in steps if not g.apart],
            ),
            # With no uptime nothing measures across it: each side judged on its own, no figure across it (ue23 #11).
            (
                ": the clock was set back (NTP or by hand); the samples on each side judged apart, no span or rate"
                " measured across it",
                [g for g in steps if g.apart],
            ),
        ):
            if these:
                more = len(these) - GAPS_SAID_ONE_BY_ONE
                notes.append(
                    "; ".join(g.said() for g in these[:GAPS_SAID_ONE_BY_ONE])
                    + (f" and {more} more" if more > 0 else "")
                    + said
                )
        return "; ".join(notes)

    def absence(self) -> str:
        """The sentence said when nothing leaks: what was examined, and what it could have shown."""
        what = f"{self.caches} slab caches ({self.judged} moved enough to judge) and {self.meminfo} meminfo series"
        if not self.power.judgeable:
            undecided = f"; {self.undecided} grow, too short to call" if self.undecided else ""
            return f"Leaks: {self.power.shortfall()}. Examined {what}{undecided}."
        if self.flagged:
            return f"Examined {what}: {self.power.reach()}."
        if self.undecided:  # growth too brief to call is not absence: said first, never as "no leak"
            return (
                f"Growing, too short to call: {self.undecided} series grow, not yet long enough to tell a leak from"
                f" a ramp; nothing else grows like a leak: examined {what}; {self.power.reach()}."
            )
        said = f"No cache or meminfo field grows like a leak: examined {what}; {self.power.reach()}."
        return f"{said} But {self.gap_note()}." if self.gaps else said


@dataclass(frozen=True)
class LeakAnalysis:
    """Everything the analysis found, for renderers and plots."""

    caches: tuple[SeriesVerdict, ...]  # every cache judged (the screened ones), all boots
    groups: tuple[CoGrowth, ...]
    meminfo: tuple[SeriesVerdict, ...]
    findings: tuple[Finding, ...]
    boots: int
    samples: int
    cache_names: int
    first_wall: float | NotAvailable
    last_wall: float | NotAvailable
    mem_total: float | None
    mem_available: float | None
    interval_seconds: float | NotAvailable
    window_seconds: float | NotAvailable
    examined: ExaminedSeries
    # meminfo series whose growth the flagged caches explain (their finding is info)
    explained: frozenset[str] = frozenset()
    mem_available_at: SampleRef | None = None  # the last MemAvailable read: where the runway is counted from
    # The boots' ids in the order sampled: "boot 1", "boot 2" in the examined line and the table are these
    boot_ids: tuple[str, ...] = ()

    @property
    def power(self) -> Power:
        """What the longest boot stretch could have shown."""
        return self.examined.power

    def absence(self) -> str:
        """What was examined and what it could have shown (said whenever nothing is leaking or suspect)."""
        return self.examined.absence()

    def flagged(self) -> tuple[SeriesVerdict, ...]:
        """Caches and meminfo fields graded above stable, worst first."""
        found = [v for v in (*self.caches, *self.meminfo) if v.grade is not Grade.STABLE]
        return tuple(sorted(found, key=lambda v: (-v.grade.rank, -v.rate, v.name)))
