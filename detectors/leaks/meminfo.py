"""Kernel memory outside the slab caches: the meminfo fields a leak can hide in.

A leak of large kmallocs (served straight from the page allocator), of
``alloc_pages`` in a driver, of vmalloc or of per-CPU memory grows no slab
cache.  These fields are judged like caches (never as reclaimable):

* ``SUnreclaim``: all unreclaimable slab memory (when no cache explains its
  growth, the leak is spread over merged or many small caches);
* ``KernelStack``, ``PageTables``, ``VmallocUsed``, ``Percpu``;
* ``Unaccounted``: an estimate of kernel memory no counter names, MemTotal
  minus everything meminfo does account for (see :data:`ACCOUNTED`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from detectors.leaks.series import FloatArray, SeriesMatrix, with_column
from detectors.leaks.trend_stats import ols_slope_r

UNACCOUNTED = "Unaccounted"


class MeminfoField(NamedTuple):
    """A meminfo field judged for leaks, who grows it and how to look closer.

    ``min_growth`` (bytes) and ``min_hours`` raise the general thresholds for a
    field whose noise is larger than a cache's; ``aggregate`` marks a sum of the
    slab caches (judged by the bar its caches need, decision rule aggregate-short).
    """

    name: str
    subject: str
    grown_by: str
    confirm: tuple[str, ...]
    min_growth: float = 0.0
    min_hours: float = 0.0
    aggregate: bool = False


MEMINFO_FIELDS: tuple[MeminfoField, ...] = (
    MeminfoField(
        "SUnreclaim",
        "unreclaimable slab",
        "slab caches that only kfree() returns",
        ("slabtop -o -s c | head -20", "see the slab cache findings; merged caches hide behind one name"),
        aggregate=True,
    ),
    MeminfoField(
        "KernelStack",
        "kernel stacks",
        "threads: each has a kernel stack (16 KiB on x86-64)",
        ("ps -eLf | wc -l (threads)", "ps -eo nlwp,pid,comm --sort=-nlwp | head"),
        # Process-driven, as PageTables.
        min_hours=1.0,
    ),
    MeminfoField(
        "PageTables",
        "page tables",
        "processes' address spaces: many processes or large sparse mappings",
        ("grep VmPTE /proc/[0-9]*/status | sort -k2 -n | tail",),
        # Grown and freed with processes: a workload starting processes moves it by tens of MB within
        # minutes (+19.8 MB in 11 minutes at load 11, tests/data/healthy/slabwatch), so only a stretch
        # longer than such a workload's processes live can tell a leak.
        min_hours=1.0,
    ),
    MeminfoField(
        "VmallocUsed",
        "vmalloc",
        "vmalloc()/vmap() users: modules, BPF programs and maps, large tables",
        ("sort -k2 -n /proc/vmallocinfo | tail -20 (size and caller of each area)",),
    ),
    MeminfoField(
        "Percpu",
        "per-CPU memory",
        "alloc_percpu(): cgroups, BPF maps, network devices",
        ("find /sys/fs/cgroup -type d | wc -l (each cgroup holds per-CPU counters)", "bpftool map list"),
    ),
    MeminfoField(
        UNACCOUNTED,
        "unaccounted kernel memory",
        "alloc_pages()/large kmalloc() by drivers and subsystems that no meminfo field counts",
        (
            "grep -E 'MemFree|Active|Inactive|Slab|Vmalloc' /proc/meminfo",
            "bcc memleak (kernel mode) or the page_owner debug feature (page_owner=on) to find the allocator",
        ),
        # Pages in flight to the LRU lists sit in per-CPU batches that no field counts; with large
        # folios a busy machine swings the estimate by hundreds of MB within seconds.
        min_growth=256 * 2**20,
        min_hours=0.5,
    ),
)

#: Fields subtracted from MemTotal to estimate unaccounted kernel memory; the first four must exist.
#: SecPageTables appeared with commit ebc97a52b5d6 ("mm: add NR_SECONDARY_PAGETABLE to count
#: secondary page table uses."), Percpu with commit 7e8a6304d541 ("/proc/meminfo: add percpu
#: populated pages count"); VmallocUsed read 0 from commit a5ad88ce8c7f ("mm: get rid of
#: 'vmalloc_info' from /proc/meminfo") until commit 97105f0ab7b8 ("mm: vmalloc: show number of
#: vmalloc pages in /proc/meminfo").  Missing fields are skipped (EAFP), not guessed.
REQUIRED = ("MemTotal", "MemFree", "Active", "Inactive", "Slab")
ACCOUNTED = ("Unevictable", "KernelStack", "PageTables", "SecPageTables", "Percpu", "VmallocUsed", "Hugetlb")


class Unaccounted(NamedTuple):
    """The estimate's series, and which fields it could not subtract."""

    raw: FloatArray
    missing: tuple[str, ...]


def unaccounted(matrix: SeriesMatrix) -> Unaccounted | None:
    """MemTotal - MemFree - LRU pages - Slab - the other accounted fields, per sample; None without the basics."""
    try:
        columns = {name: matrix.raw[:, matrix.column(name)] for name in REQUIRED}
    except ValueError:
        return None
    estimate = columns["MemTotal"] - columns["MemFree"] - columns["Active"] - columns["Inactive"] - columns["Slab"]
    missing = []
    for name in ACCOUNTED:
        try:
            estimate = estimate - np.nan_to_num(matrix.raw[:, matrix.column(name)])
        except ValueError:
            missing.append(name)
    try:
        # KReclaimable counts SReclaimable plus other reclaimable kernel memory (e.g. ION buffers).
        other = matrix.raw[:, matrix.column("KReclaimable")] - matrix.raw[:, matrix.column("SReclaimable")]
        estimate = estimate - np.nan_to_num(other)
    except ValueError:
        missing.append("KReclaimable")
    return Unaccounted(estimate, tuple(missing))


def with_unaccounted(matrix: SeriesMatrix) -> tuple[SeriesMatrix, tuple[str, ...] | None]:
    """The meminfo matrix with the ``Unaccounted`` estimate added, and the fields it lacked (None: not added)."""
    found = unaccounted(matrix)
    if found is None:
        return matrix, None
    return with_column(matrix, UNACCOUNTED, found.raw), found.missing


def field_info(name: str) -> MeminfoField:
    """The :data:`MEMINFO_FIELDS` entry of a field."""
    return next(f for f in MEMINFO_FIELDS if f.name == name)


def last_value(matrix: SeriesMatrix, name: str) -> float | None:
    """The last sampled value of a field (bytes), None when it was never sampled."""
    try:
        values = matrix.raw[:, matrix.column(name)]
    except ValueError:
        return None
    values = values[~np.isnan(values)]
    return float(values[-1]) if len(values) else None


#: Window medians of MemAvailable needed to call its decline measured (a slope of fewer is two points' noise).
MIN_DECLINE_WINDOWS = 3
#: r² of the fit under which MemAvailable's fall is others' noise, not a measured decline.
MIN_DECLINE_R2 = 0.9


def decline_rate(matrix: SeriesMatrix, name: str, since_wall: float) -> float | None:
    """How fast a field fell from ``since_wall`` on (bytes/h: the least-squares slope of its window medians,
    negated), None when it was not sampled there, in too few windows, or did not fall steadily."""
    try:
        values = matrix.grid[:, matrix.column(name)]
    except ValueError:
        return None
    keep = (matrix.grid_walls >= since_wall) & ~np.isnan(values)
    if int(keep.sum()) < MIN_DECLINE_WINDOWS:
        return None
    hours = (matrix.grid_walls[keep] - matrix.grid_walls[keep][0]) / 3600.0
    if float(hours[-1]) <= 0:
        return None
    slope, r = ols_slope_r(hours, values[keep])
    # Other processes' memory moves MemAvailable by hundreds of MB either way: only a steady fall is a rate (r² of
    # the line; a flat field's r is NaN).
    if slope >= 0 or not r * r >= MIN_DECLINE_R2:
        return None
    return -slope
