"""Judging every series of a matrix: screen cheaply, compute features, grade, pick evidence samples."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping

import numpy as np
import numpy.typing as npt

from detectors.leaks.attribution import attribution_for
from detectors.leaks.decision import (
    HELD_RISE,
    Context,
    Return,
    decide,
    late_onset,
    returned_to_baseline,
    rise_at_end,
)
from detectors.leaks.features import features, median_slope
from detectors.leaks.pagecache import interpolated, tie
from detectors.leaks.series import FloatArray, SeriesMatrix, observed_span, resample, sampling_interval
from forensics.types.leaks import (
    BYTES,
    OBJECTS_IN_USE,
    RETURNED_RISING,
    Fall,
    Features,
    Held,
    LeakThresholds,
    Onset,
    SampleRef,
    SeriesVerdict,
    window_for,
)

#: Text of a stored sample: (column index, sample row index) -> excerpt.
ExcerptOf = Callable[[int, int], str]


def evidence_samples(
    matrix: SeriesMatrix, column: int, since_wall: float, excerpt_of: ExcerptOf
) -> tuple[SampleRef, ...]:
    """First, last, minimum and maximum raw samples of a series from ``since_wall`` on (each cited once)."""
    values = matrix.raw[:, column]
    rows = np.flatnonzero(~np.isnan(values) & (matrix.walls >= since_wall))
    if len(rows) == 0:
        return ()
    picks = {
        "first": int(rows[0]),
        "last": int(rows[-1]),
        "min": int(rows[np.argmin(values[rows])]),
        "max": int(rows[np.argmax(values[rows])]),
    }
    seen: set[int] = set()
    refs = []
    for role, row in picks.items():
        if row in seen:
            continue
        seen.add(row)
        refs.append(sample_ref(matrix, column, row, role, excerpt_of))
    return tuple(refs)


def sample_ref(matrix: SeriesMatrix, column: int, row: int, role: str, excerpt_of: ExcerptOf) -> SampleRef:
    """A raw sample of series ``column`` cited as ``role``: its id, time, value and store line."""
    return SampleRef(
        role,
        int(matrix.sample_ids[row]),
        float(matrix.walls[row]),
        float(matrix.raw[row, column]),
        excerpt_of(column, row),
    )


def largest_fall(matrix: SeriesMatrix, column: int, excerpt_of: ExcerptOf) -> Fall | None:
    """The largest fall of a series' raw samples after a rise: from the highest sample that rose above one before it
    to the lowest after it, as a share of the rise before it (the top less the lowest sample before the top).

    A fall from the first sample, or from a level no later sample rose to, gives back nothing grown while sampled:
    taken as one, a dip of 169 KB from the first sample read "given back: yes: ... 100% of its rise before it" on
    a cache that then grew 1,742 KB and gave nothing back (/tmp/ue15, ext4_inode_cache); None when none is left."""
    values = matrix.raw[:, column]
    rows = np.flatnonzero(~np.isnan(values))
    if len(rows) < 2:
        return None
    v = values[rows]
    # A top counts only where it is above the lowest sample before it: something rose to it.
    lowest_before = np.concatenate(([np.inf], np.minimum.accumulate(v)[:-1]))
    risen = np.where(v > lowest_before, v, -np.inf)
    tops = np.maximum.accumulate(risen)
    drops = tops - v
    bottom = int(np.argmax(drops))
    if not np.isfinite(drops[bottom]) or drops[bottom] <= 0:
        return None
    top = int(np.argmax(risen[: bottom + 1]))
    floor = int(np.argmin(v[: top + 1]))
    rise = float(v[top]) - float(v[floor])
    share = min(1.0, float(drops[bottom]) / rise)

    return Fall(
        sample_ref(matrix, column, int(rows[top]), "before its largest fall", excerpt_of),
        sample_ref(matrix, column, int(rows[bottom]), "after its largest fall", excerpt_of),
        share,
        sample_ref(matrix, column, int(rows[floor]), "where the rise before its largest fall began", excerpt_of),
    )


#: How many of the judged part's windows either side of its start the rise's start is looked for in.
ONSET_SEARCH_WINDOWS = 3
#: A sample above the level by more than this many standard deviations of the flat part's own scatter has risen.
ONSET_SIGMAS = 3.0


def rise_onset(matrix: SeriesMatrix, column: int, since: float, window: float, excerpt_of: ExcerptOf) -> Onset | None:
    """Where a rise judged from ``since`` (a window's edge) began in the raw samples: the last sample at the level
    before it and the next one, above it; None when no rise from a level is found near ``since``.

    The judged part starts at the edge of the first window past the knot fitted to the window medians: said as
    the onset, that came a window early (/tmp/ue9 t4: judged from 05:03:59, flat through 05:04:20, the first
    socket at 05:04:25), or late.  Here a flat-then-rise line is fitted to the raw samples within a few windows
    of ``since`` (each sample a candidate knot, least squares), and the rise starts after the last sample within
    3 standard deviations of the fitted level (its flat samples' scatter).
    """
    raw = matrix.raw[:, column]
    # A cache's objects in use: its first leaked objects fill free ones in the slabs it has, and its slab memory
    # moves only when those run out (vm_area_struct, /tmp/ue9 v1: 15 s after the first mapping).
    in_use = "active_objs" in matrix.extra
    series = matrix.extra["active_objs"][:, column] if in_use else raw
    # The stretch's windows, not only the rise's own finer ones: the level before a late rise needs samples.
    reach = ONSET_SEARCH_WINDOWS * max(window, matrix.window_seconds)
    near = np.flatnonzero(~np.isnan(series) & (np.abs(matrix.walls - since) < reach))
    if len(near) < 6 or int(np.count_nonzero(matrix.walls[near] < since)) < 2:
        return None
    t = matrix.walls[near] - matrix.walls[near[0]]
    y = series[near]
    knots = np.arange(1, len(near) - 2)  # two samples at least on the level, two on the rise
    x = np.maximum(0.0, t[None, :] - t[knots, None])
    xc = x - x.mean(axis=1, keepdims=True)
    yc = y - y.mean()
    sxx = (xc * xc).sum(axis=1)
    sxy = xc @ yc
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = sxy / sxx
        sse = float(yc @ yc) - sxy * slope
    sse[~(slope > 0)] = np.inf
    if not np.isfinite(sse).any():
        return None
    best = int(np.argmin(sse))
    k = int(knots[best])
    level = float(y.mean() - slope[best] * x[best].mean())
    flat = y[: k + 1] - level
    top = level + ONSET_SIGMAS * float(np.sqrt((flat * flat).mean()))
    risen = np.flatnonzero(y > top)
    risen = risen[risen >= max(k - 1, 1)]
    if len(risen) == 0 or not bool((y[risen[0] :] > top).mean() > 0.9):
        return None
    after = int(risen[0])

    # Said in the measure it was found on, with the values that decided it (the samples' bytes may not have moved).
    return Onset(
        sample_ref(matrix, column, int(near[after - 1]), "the level before the rise", excerpt_of),
        sample_ref(matrix, column, int(near[after]), "the first above it", excerpt_of),
        OBJECTS_IN_USE if in_use else BYTES,
        top,
        float(y[after - 1]),
        float(y[after]),
    )


def object_size(matrix: SeriesMatrix, column: int) -> int:
    """A cache's object size: bytes over objects in its last sample that has objects (0 if none has)."""
    objects = matrix.extra["objects"][:, column]
    rows = np.flatnonzero(objects > 0)
    if len(rows) == 0:
        return 0
    return round(float(matrix.raw[rows[-1], column] / objects[rows[-1]]))


def _flat_before(hours: FloatArray, values: FloatArray, thresholds: LeakThresholds) -> bool:
    """Whether the window medians before an onset grew less than ``min_growth`` (the series was flat, then rose).

    A leak growing in bursts may also fit flat-then-rise at its last bursts; when its earlier bursts grew it
    before, it is judged over the whole stretch, as a leak that never stopped.
    """
    if len(values) < 3:
        return True
    return median_slope(hours, values) * float(hours[-1] - hours[0]) < thresholds.min_growth


def _rise_grid(
    matrix: SeriesMatrix, column: int, onset_wall: float, page_cache: FloatArray | None
) -> tuple[FloatArray, FloatArray, FloatArray | None, FloatArray | None, FloatArray | None, float] | None:
    """Window medians of a series' raw samples from ``onset_wall`` on, in windows fit for that part's span.

    (walls, values, objects, objects in use, page cache, window); None when fewer than 3 samples follow the onset.
    The page cache is interpolated from the stretch's grid (:func:`detectors.leaks.pagecache.interpolated`).
    """
    raw = matrix.raw[:, column]
    rows = np.flatnonzero(~np.isnan(raw) & (matrix.walls >= onset_wall))
    if len(rows) < 3:
        return None
    walls = matrix.walls[rows]
    names = [k for k in ("objects", "active_objs") if k in matrix.extra]
    values = np.column_stack([raw[rows], *(matrix.extra[k][rows, column] for k in names)])
    window = window_for(float(walls[-1] - walls[0]), sampling_interval(walls))
    centres, medians = resample(walls, values, window)
    extra = dict(zip(names, (medians[:, i + 1] for i in range(len(names))), strict=True))
    cached = None if page_cache is None else interpolated(matrix.grid_walls, page_cache, centres)
    return centres, medians[:, 0], extra.get("objects"), extra.get("active_objs"), cached, window


def judge_column(
    matrix: SeriesMatrix,
    column: int,
    reclaimable: bool,
    mem_total: float | None,
    thresholds: LeakThresholds,
    excerpt_of: ExcerptOf,
    reclaim_ran: bool | None = None,
    page_cache: FloatArray | None = None,
    aggregate: bool = False,
) -> SeriesVerdict | None:
    """Grade one series of a matrix; None when it has fewer than two window medians.

    ``reclaim_ran``: whether the shrinkers ran during the stretch (None: not recorded);
    ``page_cache``: the page cache's window medians on the matrix's grid (None: not recorded);
    ``aggregate``: the series sums many caches (SUnreclaim), judged by the bar its caches need.
    """
    y = matrix.grid[:, column]
    walls = matrix.grid_walls
    keep = ~np.isnan(y)
    if int(keep.sum()) < 2:
        return None
    plot_walls, plot_values = walls[keep], y[keep]  # the whole stretch's window medians, for the plot
    t0 = float(matrix.walls[0])
    hours = (walls - t0) / 3600.0
    window = matrix.window_seconds
    objects_grid = matrix.grid_extra["objects"][:, column] if "objects" in matrix.grid_extra else None
    active_grid = matrix.grid_extra["active_objs"][:, column] if "active_objs" in matrix.grid_extra else None
    feats = features(hours[keep], y[keep])
    since = float(walls[keep][0]) - window / 2.0 - 1e-6  # the start of the first window
    rose_later = False  # the judged part is a rise that began after the stretch's first sample
    rise: Onset | None = None  # where that rise began in the raw samples, once found
    onset = late_onset(feats, thresholds)
    if onset is None:
        onset = rise_at_end(hours[keep], feats, thresholds)
    if (
        onset is None
        # A series that rose over the stretch is judged over it (_flat_before): a steady leak's last samples lie
        # above its last window median by half a window's growth.
        and feats.ts_slope * feats.span_hours < thresholds.min_growth
        and tail_rise(matrix, column, float(y[keep][-1])) >= max(thresholds.min_growth / 2, 3 * feats.noise)
    ):
        # A rise shorter than half the last window moves no window median (125 s of a 6 MB/min leak at the end
        # of 2.8 h: unjudged in 6 of 40 alignments, "No cache ... grows like a leak"): its raw samples show it.
        end = rise_onset(matrix, column, float(matrix.walls[-1]) - window, window, excerpt_of)
        onset = None if end is None else (end.before.wall - t0) / 3600.0
    if onset is not None:
        # The series was flat, then started to rise: judge the rise on its own.
        part = keep & (hours >= onset)
        if int(part.sum()) >= thresholds.min_points:
            feats = features(hours[part], y[part])
            since = float(walls[part][0]) - window / 2.0 - 1e-6
            rose_later = True
        elif _flat_before(hours[keep & (hours < onset)], y[keep & (hours < onset)], thresholds):
            # The rise holds too few of the stretch's windows (a leak that started in the last tenth of a day,
            # a long quiet stretch before it): judged over the whole stretch, the flat part's pairs made its
            # Theil-Sen slope ~0 and a 5 MB/min leak "stable, grows 0 KB/h".  Its own samples are resampled
            # to windows of their own span; too few of them and the rule says so (growing, too short to call).
            # From the rise's first samples: from the knot's window centre, up to half a window of the level
            # before it was judged with the rise (a 127 MB/h rise over the last 2 min of 2.8 h said at 63 MB/h).
            rise = rise_onset(matrix, column, t0 + onset * 3600.0, matrix.window_seconds, excerpt_of)
            start = t0 + onset * 3600.0 if rise is None else rise.before.wall
            finer = _rise_grid(matrix, column, start, page_cache)
            if finer is not None:
                walls, y, objects_grid, active_grid, page_cache, window = finer
                keep = ~np.isnan(y)
                hours = (walls - t0) / 3600.0
                feats = features(hours[keep], y[keep])
                since = float(walls[keep][0]) - window / 2.0 - 1e-6
                rose_later = True
    returned: Return | None = None
    if not feats.daily_cycle:  # a daily cycle falls back every day by nature: judged on its 24-hour means
        part = keep & (walls >= since)
        returned = returned_to_baseline(hours[part], y[part], thresholds, feats.noise)
        if returned is not None and returned.after >= thresholds.min_points:
            # It gave its growth back, then rose again: what follows is judged on its own, as a new stretch.
            after = part & (hours >= returned.restart_hours)
            feats = features(hours[after], y[after])
            since = float(walls[after][0]) - window / 2.0 - 1e-6
            returned = None
            rose_later = True
    if rose_later and rise is None:
        rise = rise_onset(matrix, column, since, window, excerpt_of)
    who = attribution_for(matrix.names[column])
    lifetime = who.lifetime
    filling = None
    if lifetime is not None:
        # Objects freed on a timer fill to (rate x lifetime) in their first lifetime: judge what follows,
        # and only when it spans two lifetimes more (a fill, then a level, needs that to be seen).
        fill_end = since + lifetime.seconds
        part = keep & (walls >= fill_end)
        if int(part.sum()) >= thresholds.min_points and float(walls[part][-1]) - fill_end >= 2 * lifetime.seconds:
            feats = features(hours[part], y[part])
            since = fill_end
        else:
            filling = lifetime
    objects_rate = None
    active_rate = None
    objsize: int | None = None
    if objects_grid is not None and active_grid is not None:
        part = keep & (walls >= since)
        if int(part.sum()) >= 3:
            objects_rate = median_slope(hours[part], objects_grid[part])
            active_rate = median_slope(hours[part], active_grid[part])
        objsize = object_size(matrix, column)
    share = None
    if active_rate is not None and objsize and feats.ts_slope > 0:
        share = active_rate * objsize / feats.ts_slope
    raw = matrix.raw[:, column]
    counted = ~np.isnan(raw) & (matrix.walls >= since)
    samples = int(np.count_nonzero(counted))
    beside = None
    # Only a cache file I/O can grow is tied to the page cache: a VMA leak beside the machine's file writers (its
    # process and theirs running at the same moments under load) was "growing with the page cache" in a make test.
    if page_cache is not None and who.with_file_io:
        part = keep & (walls >= since)
        short = feats.span_hours < thresholds.short_hours
        beside = tie(matrix.names[column], y[part], page_cache[part], by_level=short)
    pinned = who.pinned_by if reclaimable else ""
    rose_from = since if rise is None else rise.before.wall
    held = (
        held_rise(matrix, column, rose_from, feats, excerpt_of)
        if rose_later and feats.span_hours < thresholds.short_hours
        else None
    )
    if held is None:
        held = held_level(matrix, column, rose_from, feats, thresholds, excerpt_of)
    context = Context(
        feats,
        reclaimable,
        mem_total,
        thresholds,
        share,
        reclaim_ran,
        samples,
        beside,
        filling,
        pinned,
        aggregate,
        returned,
        who.with_processes,
        held,
        t0,
        samples_seconds=observed_span(matrix.walls[counted], matrix.interval_seconds),
    )
    verdict = decide(context)
    # Back at its baseline and rising again: the rate said is that of the new rise, not a line through the fall.
    rate = returned.rise_rate if returned is not None and verdict.rule == RETURNED_RISING else feats.ts_slope
    return SeriesVerdict(
        name=matrix.names[column],
        boot_id=matrix.boot_id,
        verdict=verdict,
        features=feats,
        rate=rate,
        since_wall=since,
        reclaimable=reclaimable,
        # From the last sample at its level before a late rise (its onset), not the judged part's window edge: the
        # report's timeline starts a finding at its first evidence (a UDP leak from 15:03:33.5 was "First 15:03:24").
        samples=evidence_samples(matrix, column, rose_from, excerpt_of),
        objects_rate=objects_rate,
        active_rate=active_rate,
        objsize=objsize,
        grid_walls=plot_walls,
        grid_values=plot_values,
        origin_wall=t0,
        fall=largest_fall(matrix, column, excerpt_of),
        onset=rise,
        excursion=None if returned is None else returned.excursion(t0),
        part=matrix.part,
        held=held if verdict.rule == HELD_RISE else None,
    )


#: The last raw samples whose median is compared with the last window median (one sample alone may be a spike).
TAIL_SAMPLES = 3


def tail_rise(matrix: SeriesMatrix, column: int, last_median: float) -> float:
    """How far the median of a series' last :data:`TAIL_SAMPLES` raw samples lies above ``last_median`` (its last
    window median; bytes, 0 where it has no samples): what a rise shorter than half a window at the end adds."""
    tail = matrix.raw[-4 * TAIL_SAMPLES :, column]  # not the whole column: a week of samples is copied per call
    values = tail[~np.isnan(tail)][-TAIL_SAMPLES:]
    return float(np.median(values)) - last_median if len(values) else 0.0


#: The fewest raw samples at the level a late rise reached that show it held there (30 s of 5-s samples).
HELD_SAMPLES = 2 * TAIL_SAMPLES
#: ... and the shortest time they must span, whatever the interval: a leak's growth pauses (its workload between
#: requests) for seconds; at a 1-s scrape six samples were 5 s, and a real VMA leak at 1,000/s read "then flat for the
#: last 5 s: held, not growing" through Prometheus (CI, 2026-12-07) while it went on.
HELD_SECONDS = 30.0


def _held_tail(values: FloatArray) -> tuple[float, float, int]:
    """(band, level, first) of raw samples: the band their scatter spans (3 sigma, sigma from their second
    differences: a ramp's are 0, iid noise's have variance 6 sigma^2), the level of the last :data:`TAIL_SAMPLES`
    (their median), and the first of the samples at the end that all lie within the band of it."""
    second = np.diff(values, 2)
    sigma = 1.4826 * float(np.median(np.abs(second - np.median(second)))) / math.sqrt(6.0)
    band = max(3.0 * sigma, 1.0)
    level = float(np.median(values[-TAIL_SAMPLES:]))
    outside = np.flatnonzero(np.abs(values - level) > band)
    return band, level, int(outside[-1]) + 1 if len(outside) else 0


def held_rise(matrix: SeriesMatrix, column: int, since: float, feats: Features, excerpt_of: ExcerptOf) -> Held | None:
    """A late rise whose last raw samples no longer rise beyond their scatter: held at its level, not growing.

    Held when at least :data:`HELD_SAMPLES` samples at the end lie within the band of their level
    (:func:`_held_tail`), over at least :data:`HELD_SECONDS`, for long enough that the rise, had it gone on at its
    rate, would have left that band twice over (a slow leak's last samples are flat within their scatter over a few
    samples)."""
    raw = matrix.raw[:, column]
    rows = np.flatnonzero(~np.isnan(raw) & (matrix.walls >= since))
    values, walls = raw[rows], matrix.walls[rows]
    if len(values) < HELD_SAMPLES + TAIL_SAMPLES or feats.ts_slope <= 0:
        return None
    band, level, first = _held_tail(values)
    flat_seconds = float(walls[-1] - walls[first]) if first < len(walls) else 0.0
    if (
        first == 0
        or len(values) - first < HELD_SAMPLES
        or flat_seconds < HELD_SECONDS
        or feats.ts_slope * flat_seconds / 3600.0 < 4.0 * band
        or level - float(values[0]) < 4.0 * band
    ):
        return None
    return _held(matrix, column, rows, 0, first, level - float(values[0]), excerpt_of, late=True)


def held_level(
    matrix: SeriesMatrix, column: int, since: float, feats: Features, thresholds: LeakThresholds, excerpt_of: ExcerptOf
) -> Held | None:
    """A rise in the middle of the store, held at its new level to the store's end: not growing.

    As :func:`held_rise`, from the level of the first :data:`TAIL_SAMPLES` samples judged: the rise is the
    growth bar and 4 times the band above it, began after the last sample within the band of that level (the first
    sample, when it rose from there), and is held for at least as long as it took to rise and two windows: a leak
    growing in bursts rises over most of the stretch, its last quiet spell shorter than that.  A leak at the
    judged rate (or, if faster, the rate that grows the rise over the whole stretch) would have left the band twice
    over in the time held.  Held for :data:`HELD_SECONDS` at least, as a late rise is (ue21 #4: a rise of 15 s at a
    1-s interval was "held" after 24 s flat, the late rise's floor passed by this path)."""
    raw = matrix.raw[:, column]
    rows = np.flatnonzero(~np.isnan(raw) & (matrix.walls >= since))
    values, walls = raw[rows], matrix.walls[rows]
    if len(values) < HELD_SAMPLES + TAIL_SAMPLES:
        return None
    band, level, first = _held_tail(values)
    if first == 0 or len(values) - first < HELD_SAMPLES:
        return None
    base = float(np.median(values[:TAIL_SAMPLES]))
    rose = level - base
    at_base = np.flatnonzero(np.abs(values[:first] - base) <= band)
    start = int(at_base[-1]) if len(at_base) else 0
    held_seconds = float(walls[-1] - walls[first])
    # The judged rate, or the slowest steady leak that grows as much over the stretch (a step's Theil-Sen is ~0).
    rate = max(feats.ts_slope, rose * 3600.0 / float(walls[-1] - walls[0]))
    if (
        rose < max(thresholds.min_growth, 4.0 * band)
        or held_seconds < max(float(walls[first] - walls[start]), 2.0 * matrix.window_seconds, HELD_SECONDS)
        or rate * held_seconds / 3600.0 < 4.0 * band
    ):
        return None
    return _held(matrix, column, rows, start, first, rose, excerpt_of, late=False)


def _held(
    matrix: SeriesMatrix,
    column: int,
    rows: npt.NDArray[np.intp],
    start: int,
    first: int,
    rose: float,
    excerpt_of: ExcerptOf,
    late: bool,
) -> Held:
    """The held rise's record: its samples cited (``start``, ``first``: indices into ``rows``)."""
    return Held(
        rose,
        sample_ref(matrix, column, int(rows[start]), "the level before the rise", excerpt_of),
        sample_ref(matrix, column, int(rows[first]), "the first at the level held", excerpt_of),
        sample_ref(matrix, column, int(rows[-1]), "the last sample", excerpt_of),
        late,
    )


def screen(matrix: SeriesMatrix, thresholds: LeakThresholds) -> list[int]:
    """Columns whose window medians, or their last raw samples, move enough to possibly matter (cheap, vectorised)."""
    grid = matrix.grid
    counts = np.sum(~np.isnan(grid), axis=0)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a cache without samples at the end: NaN, not a warning
        # The last samples too: a rise at the very end moves no window median yet.
        tail = np.nanmedian(matrix.raw[-TAIL_SAMPLES:], axis=0) if len(matrix.raw) else np.full(grid.shape[1], np.nan)
        moved = np.fmax(np.nanmax(grid, axis=0), tail) - np.nanmin(grid, axis=0)
    wanted = (counts >= 2) & (moved >= thresholds.min_growth * 0.5)
    return [int(i) for i in np.flatnonzero(wanted)]


def judge_matrix(
    matrix: SeriesMatrix,
    reclaimable: Callable[[str], bool],
    mem_total: float | None,
    thresholds: LeakThresholds,
    excerpt_of: ExcerptOf,
    always: Mapping[str, bool] | None = None,
    reclaim_ran: bool | None = None,
    page_cache: FloatArray | None = None,
) -> list[SeriesVerdict]:
    """Judge the screened columns of a matrix (and the columns named in ``always``)."""
    columns = set(screen(matrix, thresholds))
    for name in always or {}:
        if name in matrix.names:
            columns.add(matrix.column(name))
    out = []
    for column in sorted(columns):
        judged = judge_column(
            matrix,
            column,
            reclaimable(matrix.names[column]),
            mem_total,
            thresholds,
            excerpt_of,
            reclaim_ran,
            page_cache,
        )
        if judged is not None:
            out.append(judged)
    return out
