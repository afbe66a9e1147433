"""From long sample tables to per-boot matrices of series, resampled to window medians.

The input is what the slab-watch store holds, one row per sample and cache
(or counter).  A change of boot id is a series break (counters restart at a
reboot), so every boot's stretch of samples becomes its own
:class:`SeriesMatrix` and is judged on its own.  Where asked (the samples carry
no uptime to place them), a step back of the wall clock within a boot is a break
too: nothing measures the time that passed across it, so the samples on each
side are judged apart, as a boot's are (``part`` counts the steps before them).

Within a stretch the series are resampled to medians of fixed windows: a
median ignores the odd sample taken while a burst was in flight, and the
window adapts to the sampling interval (about 24 windows per stretch, at most
5 minutes each, never shorter than the interval).
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from forensics.types.leaks import window_for
from forensics.types.prometheus import is_gap
from forensics.types.slab import CounterTable, SlabTable

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: Columns a slab frame must have (as ``SlabStore.slab_frame()`` returns them; ``slab_table()`` gives the same
#: samples as matrices).
SLAB_COLUMNS = ("sample_id", "wall", "boot_id", "cache", "active_objs", "num_objs", "objsize")
#: Columns a counter frame must have (as ``SlabStore.counter_frame()`` returns them).
COUNTER_COLUMNS = ("sample_id", "wall", "boot_id", "source", "name", "unit", "value")


@dataclass(frozen=True)
class SeriesMatrix:
    """The series of one boot's stretch of samples: one column per cache or counter.

    ``raw`` holds the sampled values (bytes), NaN where a series has no
    sample; ``grid`` the window medians at ``grid_walls`` (window centres).
    ``extra`` holds further sampled quantities per column (objects, bytes in
    use), resampled alike in ``grid_extra``.
    """

    boot_id: str
    names: tuple[str, ...]
    sample_ids: IntArray
    walls: FloatArray
    raw: FloatArray  # (samples, names)
    grid_walls: FloatArray
    grid: FloatArray  # (windows, names)
    window_seconds: float
    interval_seconds: float
    extra: dict[str, FloatArray]
    grid_extra: dict[str, FloatArray]
    # Which stretch of its boot: 0 from its first sample, n after the n-th step back of the wall clock that no
    # uptime measured across (its samples judged apart from the ones before, ue23 #11)
    part: int = 0

    @property
    def stretch(self) -> tuple[str, int]:
        """The stretch's key: its boot id and part (two parts of one boot are judged apart, as two boots are)."""
        return self.boot_id, self.part

    def column(self, name: str) -> int:
        """Index of a series by name."""
        return self.names.index(name)

    @property
    def span_hours(self) -> float:
        """Hours between the first and the last sample."""
        return float(self.walls[-1] - self.walls[0]) / 3600.0 if len(self.walls) else 0.0

    @property
    def observed_seconds(self) -> float:
        """Seconds between the first and the last sample less the gaps in the sampling (:func:`observed_span`)."""
        return observed_span(self.walls, self.interval_seconds)


def require_columns(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    """Raise ValueError naming the columns ``frame`` lacks."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{what} frame lacks columns {missing}")


def sampling_interval(walls: FloatArray) -> float:
    """The typical time between samples (median of the gaps), 1 s when unknown."""
    if len(walls) < 2:
        return 1.0
    gaps = np.diff(walls)
    gaps = gaps[gaps > 0]
    return float(np.median(gaps)) if len(gaps) else 1.0


def observed_span(walls: FloatArray, interval: float) -> float:
    """Seconds the samples watched: their span less every gap in the sampling (a suspend, a stopped sampler).

    CLOCK_BOOTTIME and the wall clock both count a suspend: a 10-min hole after 25 s of 1-s samples made the
    windows 27 s long (span / 24), which flattened a 23,530 KB rise of 15 s away (ue23 #4).
    """
    if len(walls) < 2:
        return 0.0
    steps = np.diff(walls)
    return float(np.sum(steps[(steps > 0) & ~is_gap(steps, interval)]))


def _stretches(boot_ids: npt.NDArray[Any], walls: FloatArray | None = None) -> list[tuple[int, int, int]]:
    """[start, end) index ranges of consecutive samples with the same boot id, each with its part (0 from the boot's
    first sample); with ``walls`` a step back of the wall clock also starts a new part of the same boot."""
    if len(boot_ids) == 0:
        return []
    cut = boot_ids[1:] != boot_ids[:-1]
    back = np.zeros_like(cut) if walls is None else np.diff(walls) < 0
    change = np.flatnonzero(cut | back) + 1
    edges = [0, *change.tolist(), len(boot_ids)]
    out, part = [], 0
    for start, end in itertools.pairwise(edges):
        part = part + 1 if start and not cut[start - 1] else 0
        out.append((start, end, part))
    return out


def _medians_of_rows(values: FloatArray) -> FloatArray:
    """Medians along the last axis: sorting a few dozen values beats np.median's partitioning by far.

    Sorts ``values`` in place (the caller hands over a copy of its own).
    """
    values.sort(axis=-1)
    ordered = values
    n = ordered.shape[-1]
    middle = ordered[..., n // 2]
    return middle if n % 2 else (middle + ordered[..., n // 2 - 1]) / 2.0


def resample(
    walls: FloatArray, values: FloatArray, window: float, exact: npt.NDArray[np.bool_] | None = None
) -> tuple[FloatArray, FloatArray]:
    """Window centres and medians of ``values`` (samples x series) over windows of ``window`` seconds.

    Only the columns marked in ``exact`` (all when None) get medians; the
    others get window means, which are much cheaper and enough for series
    that barely move.
    """
    bins = np.floor((walls - walls[0]) / window).astype(np.int64)
    used, starts, counts = np.unique(bins, return_index=True, return_counts=True)
    columns = np.arange(values.shape[1]) if exact is None else np.flatnonzero(exact)
    ordered = bool(np.all(np.diff(bins) >= 0))
    if not ordered or np.isnan(values).any():
        medians = pd.DataFrame(values).groupby(bins, sort=True).median().to_numpy(dtype=np.float64)
    else:
        if len(columns) == values.shape[1]:  # every column gets medians below: no means needed
            medians = np.empty((len(used), values.shape[1]))
        else:
            medians = np.add.reduceat(values, starts, axis=0) / counts[:, None]
        per = int(counts[0])
        if not len(columns):
            pass  # nothing moves enough: the means will do
        elif len(used) > 1 and bool(np.all(counts[:-1] == per)):
            # Regular sampling (the usual case): every window but the last holds the same number of
            # samples, so a reshape replaces the much slower grouped median.
            full = int(starts[-1])
            # Series-major and contiguous: sorting along the last axis is the fast case.  Indexing the
            # transposed view makes the one copy (C order), which is then sorted in place.
            picked = values[:full].T[columns].reshape(len(columns), -1, per)
            head = _medians_of_rows(picked).T
            medians[:, columns] = np.vstack([head, np.median(values[full:, columns], axis=0, keepdims=True)])
        else:
            frame = pd.DataFrame(values[:, columns])
            medians[:, columns] = frame.groupby(bins, sort=True).median().to_numpy(dtype=np.float64)
    centres = walls[0] + (used.astype(np.float64) + 0.5) * window
    # The last window may be cut short by the end of sampling: centre it on what it holds.
    last_start = walls[0] + used[-1] * window
    centres[-1] = (last_start + walls[-1]) / 2.0
    return centres, medians


def _pivot(
    sample_codes: IntArray, name_codes: IntArray, n_samples: int, n_names: int, values: FloatArray
) -> FloatArray:
    out = np.full((n_samples, n_names), np.nan)
    out[sample_codes, name_codes] = values
    return out


def _sorted_by_sample(frame: pd.DataFrame) -> npt.NDArray[np.int64] | None:
    """The row order by sample id, None when the rows are in that order already (as the store returns them)."""
    ids = frame["sample_id"].to_numpy()
    if len(ids) < 2 or bool(np.all(ids[1:] >= ids[:-1])):
        return None
    return np.argsort(ids, kind="stable").astype(np.int64)


def _regular_codes(codes: IntArray, samples: int) -> IntArray | None:
    """The name codes of one sample when every sample has the same rows in the same order, else None."""
    if samples == 0 or len(codes) % samples:
        return None
    per = len(codes) // samples
    first = codes[:per]
    if len(np.unique(first)) != per or not bool(np.all(codes.reshape(samples, per) == first)):
        return None
    return first


def _matrix(
    boot_id: str,
    names: tuple[str, ...],
    sample_ids: IntArray,
    walls: FloatArray,
    raw: FloatArray,
    extras: dict[str, FloatArray],
    resampled: tuple[str, ...],
    min_range: float,
    part: int = 0,
) -> SeriesMatrix:
    """One boot stretch's matrix: the sampled series and their window medians."""
    interval = sampling_interval(walls)
    window = window_for(observed_span(walls, interval), interval)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns: a cache absent in this boot
        moved = np.nanmax(raw, axis=0) - np.nanmin(raw, axis=0)
    exact = ~(moved < min_range)
    grid_walls, grid = resample(walls, raw, window, exact)
    grid_extra = {k: resample(walls, extras[k], window, exact)[1] for k in resampled}
    return SeriesMatrix(
        boot_id=boot_id,
        names=names,
        sample_ids=sample_ids,
        walls=walls,
        raw=raw,
        grid_walls=grid_walls,
        grid=grid,
        window_seconds=window,
        interval_seconds=interval,
        extra=extras,
        grid_extra=grid_extra,
        part=part,
    )


def build_matrices(
    frame: pd.DataFrame,
    name_column: str,
    value: FloatArray,
    extra: dict[str, FloatArray] | None = None,
    resampled: tuple[str, ...] = (),
    min_range: float = 0.0,
    apart: bool = False,
) -> list[SeriesMatrix]:
    """Cut a long frame (one row per sample and name) into one matrix per boot stretch.

    ``value`` (and each ``extra`` array) is aligned with the rows of ``frame``;
    the extras named in ``resampled`` also get window medians.  Series whose
    samples move less than ``min_range`` get window means instead of medians
    (cheap; they are too flat to be judged anyway).  Samples without a boot id
    count as one boot.  ``apart``: a step back of the wall clock also cuts a stretch (:func:`_stretches`).
    """
    order = _sorted_by_sample(frame)

    def arranged(array: npt.NDArray[Any]) -> npt.NDArray[Any]:
        return array if order is None else array[order]

    sample_ids_all = arranged(np.asarray(frame["sample_id"].to_numpy(), dtype=np.int64))
    walls_all = arranged(frame["wall"].to_numpy(dtype=np.float64))
    # Factorising once is much cheaper than comparing millions of strings (categoricals keep their codes).
    boot_codes, boot_names = pd.factorize(frame["boot_id"], use_na_sentinel=True)
    name_codes_all, all_names = pd.factorize(frame[name_column], sort=True)
    boot_codes = arranged(boot_codes)
    name_codes_all = arranged(name_codes_all)
    value = arranged(value)
    extra_sorted = {k: arranged(v) for k, v in (extra or {}).items()}

    # The first row of each sample, in order; a sample's rows run up to the next one's first.
    firsts = np.flatnonzero(np.concatenate(([True], sample_ids_all[1:] != sample_ids_all[:-1])))
    bounds = np.append(firsts, len(sample_ids_all))
    sample_ids = sample_ids_all[firsts]
    sample_walls = walls_all[firsts]
    sample_boots = boot_codes[firsts]

    matrices = []
    for start, end, part in _stretches(sample_boots, sample_walls if apart else None):
        rows = slice(int(bounds[start]), int(bounds[end]))
        n_s = end - start
        walls = sample_walls[start:end]
        stretch_codes = name_codes_all[rows]
        regular = _regular_codes(stretch_codes, n_s)
        if regular is not None:
            # Every sample lists the same caches in the same order (as the store returns them):
            # a reshape replaces the scatter into a NaN-filled matrix.
            layout = np.argsort(regular)
            names = tuple(str(all_names[int(c)]) for c in regular[layout])
            raw = value[rows].reshape(n_s, len(names))[:, layout]
            extras = {k: v[rows].reshape(n_s, len(names))[:, layout] for k, v in extra_sorted.items()}
        else:
            present = np.bincount(stretch_codes, minlength=len(all_names)) > 0
            codes = (np.cumsum(present) - 1)[stretch_codes]
            names = tuple(str(all_names[int(u)]) for u in np.flatnonzero(present))
            s_codes = np.repeat(np.arange(n_s), np.diff(bounds[start : end + 1]))
            raw = _pivot(s_codes, codes, n_s, len(names), value[rows])
            extras = {k: _pivot(s_codes, codes, n_s, len(names), v[rows]) for k, v in extra_sorted.items()}
        boot = int(sample_boots[start])
        boot_id = str(boot_names[boot]) if boot >= 0 else ""
        matrices.append(_matrix(boot_id, names, sample_ids[start:end], walls, raw, extras, resampled, min_range, part))
    return matrices


def slab_matrices(slabs: pd.DataFrame | SlabTable, min_range: float = 0.0, apart: bool = False) -> list[SeriesMatrix]:
    """Per-boot matrices of cache bytes (num_objs x objsize), with objects (resampled) and active objects as extras.

    ``slabs``: the long frame (one row per sample and cache), or the same samples as a
    :class:`~forensics.types.slab.SlabTable` (the store's matrices: no long frame at all).
    ``min_range``, ``apart``: see :func:`build_matrices`.
    """
    if isinstance(slabs, SlabTable):
        return _table_matrices(slabs, min_range, apart)
    require_columns(slabs, SLAB_COLUMNS, "slab")
    objsize = slabs["objsize"].to_numpy(dtype=np.float64)
    num = slabs["num_objs"].to_numpy(dtype=np.float64)
    active = slabs["active_objs"].to_numpy(dtype=np.float64)
    return build_matrices(
        slabs,
        "cache",
        num * objsize,
        {"objects": num, "active_objs": active},
        ("objects", "active_objs"),
        min_range,
        apart,
    )


def _table_matrices(table: SlabTable, min_range: float, apart: bool) -> list[SeriesMatrix]:
    """:func:`slab_matrices` of a SlabTable: the same matrices as from its long frame, cut per boot stretch."""
    matrices = []
    for start, end, part in _stretches(table.boot_codes, table.walls if apart else None):
        rows = slice(start, end)
        present = ~np.isnan(table.num_objs[rows]).all(axis=0)
        if bool(present.all()):  # the usual case: views, no copies
            num, active, raw = table.num_objs[rows], table.active_objs[rows], table.num_bytes[rows]
        else:
            columns = np.flatnonzero(present)
            num, active, raw = (m[rows][:, columns] for m in (table.num_objs, table.active_objs, table.num_bytes))
        names = tuple(table.names[i] for i in np.flatnonzero(present).tolist())
        boot = int(table.boot_codes[start])
        extras = {"objects": num, "active_objs": active}
        matrices.append(
            _matrix(
                table.boot_ids[boot] if boot >= 0 else "",
                names,
                table.sample_ids[rows],
                table.walls[rows],
                raw,
                extras,
                ("objects", "active_objs"),
                min_range,
                part,
            )
        )
    return matrices


def slab_extent(slabs: pd.DataFrame | SlabTable) -> tuple[int, int, FloatArray]:
    """(samples, cache names, sample times) of a slab frame or table: what the samples cover."""
    if isinstance(slabs, SlabTable):
        return len(slabs.sample_ids), len(slabs.names), slabs.walls
    if not len(slabs):
        return 0, 0, np.empty(0)
    return (
        int(slabs["sample_id"].nunique()),
        int(slabs["cache"].nunique()),
        slabs["wall"].to_numpy(dtype=np.float64),
    )


def counter_matrices(
    counters: pd.DataFrame | CounterTable, source: str = "meminfo", apart: bool = False
) -> list[SeriesMatrix]:
    """Per-boot matrices of one counter source (meminfo by default), sizes in bytes; ``apart``: see
    :func:`build_matrices`."""
    if isinstance(counters, CounterTable):
        return _counter_table_matrices(counters, source, apart)
    require_columns(counters, COUNTER_COLUMNS, "counter")
    rows = counters[counters["source"] == source]
    if rows.empty:
        return []
    scale = np.where(rows["unit"].to_numpy(dtype=object) == "kB", 1024.0, 1.0)
    raw_value = rows["value"].to_numpy(dtype=np.float64)
    return build_matrices(rows, "name", raw_value * scale, {"stored": raw_value}, apart=apart)


def _counter_table_matrices(table: CounterTable, source: str, apart: bool) -> list[SeriesMatrix]:
    """:func:`counter_matrices` of a CounterTable: the same matrices as from its long frame."""
    columns = sorted((j for j in range(len(table.names)) if table.sources[j] == source), key=lambda j: table.names[j])
    present = table.present[:, columns]
    sampled = np.flatnonzero(present.any(axis=1))  # the samples with a value of this source
    if not len(sampled):
        return []
    values = table.values[sampled][:, columns].astype(np.float64)
    values[~present[sampled]] = np.nan
    scale = np.array([1024.0 if table.units[j] == "kB" else 1.0 for j in columns])
    boots = table.boot_codes[sampled]
    matrices = []
    for start, end, part in _stretches(boots, table.walls[sampled] if apart else None):
        used = np.flatnonzero(present[sampled[start:end]].any(axis=0))
        stored = values[start:end][:, used]
        boot = int(boots[start])
        matrices.append(
            _matrix(
                table.boot_ids[boot] if boot >= 0 else "",
                tuple(table.names[columns[u]] for u in used.tolist()),
                table.sample_ids[sampled[start:end]],
                table.walls[sampled[start:end]],
                stored * scale[used],
                {"stored": stored},
                (),
                0.0,
                part,
            )
        )
    return matrices


def counter_units(counters: pd.DataFrame | CounterTable | None, source: str = "meminfo") -> dict[str, str]:
    """Counter name -> unit ("kB" or ""), of one source."""
    if counters is None or not len(counters):
        return {}
    if isinstance(counters, CounterTable):
        return {n: u for s, n, u in zip(counters.sources, counters.names, counters.units, strict=True) if s == source}
    pairs = counters[["source", "name", "unit"]].drop_duplicates()
    pairs = pairs[pairs["source"] == source]
    return {str(n): str(u) for n, u in zip(pairs["name"].tolist(), pairs["unit"].tolist(), strict=True)}


def with_column(matrix: SeriesMatrix, name: str, raw: FloatArray) -> SeriesMatrix:
    """The matrix with one more (derived) series, resampled like the others."""
    _, grid = resample(matrix.walls, raw[:, None], matrix.window_seconds)
    return SeriesMatrix(
        boot_id=matrix.boot_id,
        names=(*matrix.names, name),
        sample_ids=matrix.sample_ids,
        walls=matrix.walls,
        raw=np.hstack([matrix.raw, raw[:, None]]),
        grid_walls=matrix.grid_walls,
        grid=np.hstack([matrix.grid, grid]),
        window_seconds=matrix.window_seconds,
        interval_seconds=matrix.interval_seconds,
        extra={k: np.hstack([v, np.full((len(raw), 1), np.nan)]) for k, v in matrix.extra.items()},
        grid_extra={k: np.hstack([v, np.full((len(grid), 1), np.nan)]) for k, v in matrix.grid_extra.items()},
        part=matrix.part,
    )
