"""Growth that follows the page cache: file I/O, not a leak, while the page cache grows.

Writing or reading files grows the page cache (meminfo ``Cached`` and
``Buffers``) and, with it, the objects that describe its pages: buffer heads,
xarray nodes, and per-folio state some filesystems kmalloc (ext4 on 6.18 grows
``kmalloc-512`` by one object per ~150 KB of file data written).  They grow
steadily for as long as the I/O runs and are freed when the pages are
reclaimed, so a short stretch sees a perfect ramp.  A series that grows at the
same moments as a page cache growing many times more is "growing with the page
cache": too soon to call until the page cache stops growing or is reclaimed.

Two steady ramps carry no timing (:func:`detectors.leaks.cogrowth.moves_together`),
so without correlated increments only a generic series (a kmalloc size class,
SUnreclaim, the unaccounted estimate), which any subsystem's page-cache
metadata can land in, is tied to the page cache by its level alone.
"""

from __future__ import annotations

import fnmatch

import numpy as np

from detectors.leaks.cogrowth import moves_together
from detectors.leaks.meminfo import UNACCOUNTED
from detectors.leaks.series import FloatArray, SeriesMatrix
from forensics.types.leaks import PageCacheTie

#: meminfo fields whose sum is the page cache: file pages (Cached, shmem included) and block-device buffers.
PAGE_CACHE_FIELDS = ("Cached", "Buffers")

#: Series whose objects any subsystem's page-cache metadata may be: tied to the page cache by level alone.
GENERIC_SERIES = ("kmalloc-*", "kmalloc-cg-*", "dma-kmalloc-*", "SUnreclaim", UNACCOUNTED)

#: Pearson correlation of the window medians a level-only tie needs.
MIN_LEVEL_CORRELATION = 0.95


def page_cache_on(meminfo: SeriesMatrix, walls: FloatArray) -> FloatArray | None:
    """The page cache's window medians (bytes) interpolated at ``walls``; None when a field was not sampled."""
    total: FloatArray | None = None
    for name in PAGE_CACHE_FIELDS:
        try:
            values = meminfo.grid[:, meminfo.column(name)]
        except ValueError:
            return None
        total = values if total is None else total + values
    if total is None:
        return None
    return interpolated(meminfo.grid_walls, total, walls)


def interpolated(grid_walls: FloatArray, values: FloatArray, walls: FloatArray) -> FloatArray | None:
    """``values`` (window medians at ``grid_walls``, NaN where unknown) interpolated at ``walls``: NaN outside the
    known span; None when fewer than two are known."""
    keep = ~np.isnan(values)
    if int(keep.sum()) < 2:
        return None
    inside = (walls >= grid_walls[keep][0]) & (walls <= grid_walls[keep][-1])
    out: FloatArray = np.full(len(walls), np.nan)
    out[inside] = np.interp(walls[inside], grid_walls[keep], values[keep])
    return out


def is_generic(name: str) -> bool:
    """Whether a series may hold any subsystem's objects (see :data:`GENERIC_SERIES`)."""
    return any(fnmatch.fnmatchcase(name, p) for p in GENERIC_SERIES)


def tie(name: str, series: FloatArray, page_cache: FloatArray, by_level: bool = True) -> PageCacheTie | None:
    """How ``series`` grew beside the page cache (both window medians on one grid); None when unknown.

    ``None`` also when either did not grow: a tie explains growth only.  ``by_level``: a generic series may
    be tied by its level alone (the caller allows it only under an hour: over hours any two monotonic series
    correlate, and a slow kmalloc leak beside a day of log writes must still be judged).
    """
    keep = ~(np.isnan(series) | np.isnan(page_cache))
    if int(keep.sum()) < 6:
        return None
    y, p = series[keep], page_cache[keep]
    grown, cached = float(y[-1] - y[0]), float(p[-1] - p[0])
    if grown <= 0 or cached <= 0 or float(np.ptp(y)) == 0.0 or float(np.ptp(p)) == 0.0:
        return None
    correlation = float(np.corrcoef(y, p)[0, 1])
    in_step = moves_together(y, p) or (by_level and is_generic(name) and correlation >= MIN_LEVEL_CORRELATION)
    return PageCacheTie(cached, cached / grown, in_step, correlation)
