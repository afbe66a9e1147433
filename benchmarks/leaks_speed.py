"""Speed of the leak analysis: 7 days of samples every 10 s for 250 caches (the issue's target: < 10 s).

Builds the slab table in memory (as ``SlabStore.slab_frame()`` returns it):
240 caches of flat noise, sawtooth and warm-up shapes, and 10 leaking ones,
plus a meminfo table.  Times the full analysis (resampling, features,
grading, co-growth, findings) and, as the baseline run in the same process,
the naive analysis the issue warns about: one ``scipy.stats.linregress`` per
cache on the raw samples.  Prints the figures, the ratio and the peak RSS.

    .venv/bin/python benchmarks/leaks_speed.py [DAYS] [INTERVAL_S] [CACHES]
"""

from __future__ import annotations

import os
import resource
import sys
import time

import numpy as np
import pandas as pd


def build(days: float, interval: float, caches: int, seed: int = 7) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The slab and counter tables of a synthetic week."""
    rng = np.random.default_rng(seed)
    n = int(days * 86400 / interval)
    walls = 1_780_000_000.0 + np.arange(n) * interval
    hours = (walls - walls[0]) / 3600.0
    sample_ids = np.arange(1, n + 1)
    names = [f"cache-{i:03d}" for i in range(caches)]
    objsize = 256
    columns = []
    for i in range(caches):
        base = rng.uniform(1, 50) * 2**20
        kind = i % 25
        if kind == 0:  # a leak, 1-20 MB/h
            series = base + rng.uniform(1, 20) * 2**20 * hours
        elif kind in (1, 2):  # sawtooth: grows, reclaimed every 1-6 h
            period = rng.uniform(1, 6)
            series = base + 5 * 2**20 * np.mod(hours, period) / period
        elif kind == 3:  # warms up during the first hours
            series = base + 20 * 2**20 * (1 - np.exp(-hours / rng.uniform(0.5, 6)))
        else:  # flat
            series = np.full(n, base)
        series = series + rng.normal(0, 64 * 1024, n)
        columns.append(np.maximum(series / objsize, 1).astype(np.int64))
    num = np.stack(columns, axis=1)  # samples x caches
    slabs = pd.DataFrame(
        {
            "sample_id": np.repeat(sample_ids, caches),
            "wall": np.repeat(walls, caches),
            "boot_id": pd.Categorical(np.full(n * caches, "boot-1")),
            "cache": pd.Categorical.from_codes(np.tile(np.arange(caches), n), categories=names),
            "active_objs": num.ravel() - 2,
            "num_objs": num.ravel(),
            "objsize": np.full(n * caches, objsize),
        }
    )
    fields = ["MemTotal", "MemFree", "MemAvailable", "Active", "Inactive", "Slab", "SUnreclaim", "KernelStack"]
    values = np.stack(
        [
            np.full(n, 8 * 2**20),
            4 * 2**20 - hours * 100,
            5 * 2**20 - hours * 100,
            np.full(n, 1_500_000),
            np.full(n, 1_000_000),
            300_000 + hours * 100,
            100_000 + hours * 100,
            np.full(n, 12_000),
        ],
        axis=1,
    ).astype(np.int64)
    counters = pd.DataFrame(
        {
            "sample_id": np.repeat(sample_ids, len(fields)),
            "wall": np.repeat(walls, len(fields)),
            "boot_id": pd.Categorical(np.full(n * len(fields), "boot-1")),
            "source": "meminfo",
            "name": pd.Categorical.from_codes(np.tile(np.arange(len(fields)), n), categories=fields),
            "unit": "kB",
            "value": values.ravel(),
        }
    )
    return slabs, counters


def naive(slabs: pd.DataFrame) -> int:
    """The baseline: a least-squares slope per cache on the raw samples, flag any positive slope."""
    from scipy import stats

    flagged = 0
    for _, group in slabs.groupby("cache", observed=True):
        fit = stats.linregress(group["wall"].to_numpy(), (group["num_objs"] * group["objsize"]).to_numpy())
        flagged += fit.slope > 0 and fit.pvalue < 0.05
    return flagged


def main() -> None:
    """Build, analyse, compare with the baseline, print."""
    from detectors.leaks.analysis import LeakInput, analyse

    days = float(sys.argv[1]) if len(sys.argv) > 1 else 7.0
    interval = float(sys.argv[2]) if len(sys.argv) > 2 else 10.0
    caches = int(sys.argv[3]) if len(sys.argv) > 3 else 250
    started = time.perf_counter()
    slabs, counters = build(days, interval, caches)
    built = time.perf_counter() - started
    print(
        f"input: {days:g} days every {interval:g} s, {caches} caches: {len(slabs):,} slab rows ({built:.1f} s to build)"
    )

    started, cpu = time.perf_counter(), time.process_time()
    result = analyse(LeakInput(slabs, counters, mem_total=8 * 2**30, source="<benchmark>"))
    ours, ours_cpu = time.perf_counter() - started, time.process_time() - cpu
    leaks = sorted(v.name for v in result.caches if v.grade.rank >= 2)
    print(
        f"leak analysis: {ours:.2f} s wall, {ours_cpu:.2f} s CPU; {len(result.caches)} caches judged, "
        f"{len(leaks)} flagged, {len(result.findings)} findings"
    )

    started, cpu = time.perf_counter(), time.process_time()
    flagged = naive(slabs)
    baseline, baseline_cpu = time.perf_counter() - started, time.process_time() - cpu
    print(
        f"baseline (linregress per cache on raw samples): {baseline:.2f} s wall, {baseline_cpu:.2f} s CPU; "
        f"{flagged} caches with p < 0.05"
    )
    print(f"ratio leak analysis / baseline (CPU): {ours_cpu / baseline_cpu:.2f}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS: {peak:,.0f} MiB")
    expected = caches // 25 + (caches % 25 > 0)
    load = os.getloadavg()[0]
    verdict = "met" if ours < 10 else "MISSED"
    print(f"target: < 10 s wall -> {verdict} (load average {load:.1f} on {os.cpu_count()} CPUs)")
    print(f"leaking caches flagged {len(leaks)}/{expected}")


if __name__ == "__main__":
    main()
