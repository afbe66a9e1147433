"""Judging every series of a matrix: screen cheaply, compute features, grade, pick evidence samples."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from detectors.leaks.attribution import attribution_for
from detectors.leaks.decision import Context, decide, late_onset
from detectors.leaks.features import features, median_slope
from detectors.leaks.pagecache import tie
from detectors.leaks.series import FloatArray, SeriesMatrix
from forensics.types.leaks import LeakThresholds, SampleRef, SeriesVerdict

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
        refs.append(
            SampleRef(
                role, int(matrix.sample_ids[row]), float(matrix.walls[row]), float(values[row]), excerpt_of(column, row)
            )
        )
    return tuple(refs)


def object_size(matrix: SeriesMatrix, column: int) -> int:
    """A cache's object size: bytes over objects in its last sample that has objects (0 if none has)."""
    objects = matrix.extra["objects"][:, column]
    rows = np.flatnonzero(objects > 0)
    if len(rows) == 0:
        return 0
    return round(float(matrix.raw[rows[-1], column] / objects[rows[-1]]))


def judge_column(
    matrix: SeriesMatrix,
    column: int,
    reclaimable: bool,
    mem_total: float | None,
    thresholds: LeakThresholds,
    excerpt_of: ExcerptOf,
    reclaim_ran: bool | None = None,
    page_cache: FloatArray | None = None,
) -> SeriesVerdict | None:
    """Grade one series of a matrix; None when it has fewer than two window medians.

    ``reclaim_ran``: whether the shrinkers ran during the stretch (None: not recorded);
    ``page_cache``: the page cache's window medians on the matrix's grid (None: not recorded).
    """
    y = matrix.grid[:, column]
    walls = matrix.grid_walls
    keep = ~np.isnan(y)
    if int(keep.sum()) < 2:
        return None
    t0 = float(matrix.walls[0])
    hours = (walls - t0) / 3600.0
    feats = features(hours[keep], y[keep])
    since = float(walls[keep][0]) - matrix.window_seconds / 2.0 - 1e-6  # the start of the first window
    onset = late_onset(feats, thresholds)
    if onset is not None:
        # The series was flat, then started to rise: judge the rise on its own.
        part = keep & (hours >= onset)
        if int(part.sum()) >= thresholds.min_points:
            feats = features(hours[part], y[part])
            since = float(walls[part][0]) - matrix.window_seconds / 2.0 - 1e-6
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
    if "objects" in matrix.grid_extra:
        part = keep & (walls >= since)
        if int(part.sum()) >= 3:
            objects_rate = median_slope(hours[part], matrix.grid_extra["objects"][part, column])
            active_rate = median_slope(hours[part], matrix.grid_extra["active_objs"][part, column])
        objsize = object_size(matrix, column)
    share = None
    if active_rate is not None and objsize and feats.ts_slope > 0:
        share = active_rate * objsize / feats.ts_slope
    raw = matrix.raw[:, column]
    samples = int(np.count_nonzero(~np.isnan(raw) & (matrix.walls >= since)))
    beside = None
    if page_cache is not None:
        part = keep & (walls >= since)
        short = feats.span_hours < thresholds.short_hours
        beside = tie(matrix.names[column], y[part], page_cache[part], by_level=short)
    pinned = who.pinned_by if reclaimable else ""
    context = Context(feats, reclaimable, mem_total, thresholds, share, reclaim_ran, samples, beside, filling, pinned)
    verdict = decide(context)
    return SeriesVerdict(
        name=matrix.names[column],
        boot_id=matrix.boot_id,
        verdict=verdict,
        features=feats,
        rate=feats.ts_slope,
        since_wall=since,
        reclaimable=reclaimable,
        samples=evidence_samples(matrix, column, since, excerpt_of),
        objects_rate=objects_rate,
        active_rate=active_rate,
        objsize=objsize,
        grid_walls=walls[keep],
        grid_values=y[keep],
        origin_wall=t0,
    )


def screen(matrix: SeriesMatrix, thresholds: LeakThresholds) -> list[int]:
    """Columns whose window medians move enough to possibly matter (cheap, vectorised)."""
    grid = matrix.grid
    counts = np.sum(~np.isnan(grid), axis=0)
    with np.errstate(all="ignore"):
        moved = np.nanmax(grid, axis=0) - np.nanmin(grid, axis=0)
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
