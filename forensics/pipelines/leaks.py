"""``kforensic leaks``: judge a slab-watch store's series and build the incident."""

from __future__ import annotations

import hashlib
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING

from forensics import __version__
from forensics.errors import InputError, UsageError
from forensics.model import Clock, Finding, Incident, NotAvailable, SourceRecord, Timestamp, TimeWindow
from forensics.types.figures import Figure, FigureDirectory, SeriesFigure
from forensics.types.results import LeaksResult, Plot

if TYPE_CHECKING:
    from collectors.slabstore import SlabStore
    from detectors.leaks.analysis import LeakInput
    from detectors.leaks.clock import TimeLine
    from forensics.types.leaks import LeakAnalysis, LeakThresholds, SeriesVerdict
    from forensics.types.slab import CounterTable, SampleRow, SlabTable

#: At most this many plots per run: the worst series first.
MAX_PLOTS = 12


def _store_record(path: Path) -> SourceRecord:
    """The store as an input: size and sha256 of its bytes now (WAL content is read by SQLite, not hashed)."""
    started = time.monotonic()
    digest = hashlib.sha256()
    size = 0
    try:
        with open(path, "rb") as stream:
            while chunk := stream.read(1 << 20):
                size += len(chunk)
                digest.update(chunk)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        return SourceRecord(str(path), NotAvailable(reason), NotAvailable(reason), 0.0, error=reason)
    return SourceRecord(str(path), size, digest.hexdigest(), round(time.monotonic() - started, 6))


def _incident(store: SlabStore, run_id: int | None, analysis: LeakAnalysis) -> Incident:
    from detectors.leaks.findings import examined_record

    runs = [r for r in store.runs() if run_id is None or r.id == run_id]
    hosts = {r.host for r in runs if r.host} or ({store.meta("host")} - {None, ""})
    kernels = {r.kernel_release for r in runs if r.kernel_release}
    window: TimeWindow | NotAvailable = NotAvailable("the store has no slab samples")
    if isinstance(analysis.first_wall, float) and isinstance(analysis.last_wall, float):
        window = TimeWindow(Timestamp(analysis.first_wall, Clock.WALL), Timestamp(analysis.last_wall, Clock.WALL))
    return Incident(
        host=str(hosts.pop()) if len(hosts) == 1 else NotAvailable("the store does not name one host"),
        kernel_release=kernels.pop() if len(kernels) == 1 else NotAvailable("the store does not name one kernel"),
        window=window,
        sources=(_store_record(store.path),),
        findings=analysis.findings,
        tool_version=__version__,
        examined=(examined_record(analysis.examined, str(store.path)),),
    )


def analyse_store(
    store_path: Path,
    run_id: int | None = None,
    last_hours: float | None = None,
    thresholds: LeakThresholds | None = None,
    plots_dir: Path | None = None,
) -> LeaksResult:
    """Open the store read-only, analyse it (one run, or all; optionally the last hours); plan the plots."""
    from collectors.slabstore import SlabStore
    from forensics.types.leaks import LeakThresholds as DefaultThresholds

    th = thresholds or DefaultThresholds()
    with SlabStore.open(store_path, readonly=True) as store:
        if run_id is not None and run_id not in {r.id for r in store.runs()}:
            known = ", ".join(str(r.id) for r in store.runs()) or "none"
            raise UsageError(f"{store_path}: no run {run_id}", hint=f"runs in the store: {known}")
        # The analysis (numpy, pandas: ~0.35 s of CPU) once the store is open and the run known: a missing,
        # unreadable or foreign store and a wrong --run are said without it (`kforensic leaks --store missing.db`:
        # 0.47 -> 0.06 s of CPU, issue #28).
        from detectors.leaks.analysis import analyse

        data = leak_input(store, run_id, last_hours)
        if not len(data.slabs):
            raise InputError(
                f"{store_path}: no slab samples to analyse",
                hint="record some as root with kforensic slab-watch (slabinfo is readable by root only)",
            )
        analysis = analyse(data, th)
        incident = _incident(store, run_id, analysis)
    plots: tuple[Plot, ...] = ()
    figures: tuple[Figure, ...] = ()
    if plots_dir is not None:
        plots, series = _plots(analysis, plots_dir)
        figures = (FigureDirectory(plots_dir), *series)
    return LeaksResult(store_path, run_id, analysis, th, incident, plots, figures)


def plot_file_name(kind: str, name: str) -> str:
    """A safe file name for a series' plot, e.g. ``cache-kmalloc-64.png``."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "series"
    return f"{kind}-{safe}.png"


def _plots(analysis: LeakAnalysis, directory: Path) -> tuple[tuple[Plot, ...], tuple[SeriesFigure, ...]]:
    """One plot per flagged series, worst first, at most :data:`MAX_PLOTS`: what is shown and what to draw."""
    meminfo_ids = {id(v) for v in analysis.meminfo}
    plots, figures = [], []
    for verdict in analysis.flagged()[:MAX_PLOTS]:
        kind = "meminfo" if id(verdict) in meminfo_ids else "cache"
        path = directory / plot_file_name(kind, verdict.name)
        title = f"{verdict.name}: {verdict.verdict.reason}"
        if len(title) > 90:
            title = title[:87] + "..."
        plots.append(Plot(verdict.name, kind, path))
        figures.append(_series_figure(path, title, verdict))
    return tuple(plots), tuple(figures)


def _series_figure(path: Path, title: str, verdict: SeriesVerdict) -> SeriesFigure:
    """The plot of a series: its window medians and, over the judged windows, the fitted Theil–Sen line."""
    f = verdict.features
    judged = verdict.grid_walls >= verdict.since_wall
    hours = (verdict.grid_walls[judged] - verdict.origin_wall) / 3600.0
    trend = f.ts_intercept + f.ts_slope * hours
    label = f"trend {verdict.rate / 1024:,.0f} KB/h ({verdict.grade.value})"
    return SeriesFigure(path, title, verdict.grid_walls, verdict.grid_values, judged, trend, label)


# ---------------------------------------------------------------- reading the store for the leak analysis
#
# The slabs and counters are read as matrices (forensics.types.slab's SlabTable, CounterTable), the counters
# only those the analysis reads (meminfo, and the vmstat counters that show reclaim): a week of 10 s samples
# of 250 caches never becomes a 15-million-row frame.


def _read_by_the_analysis(source: str, name: str) -> bool:
    """The counters the leak analysis reads: meminfo, and the vmstat counters that show reclaim."""
    from detectors.leaks.analysis import RECLAIM_COUNTERS

    return source == "meminfo" or (source == "vmstat" and name in RECLAIM_COUNTERS)


def leak_input(store: SlabStore, run_id: int | None = None, last_hours: float | None = None) -> LeakInput:
    """The samples of one run (or the whole store), optionally only the last ``last_hours``.

    Cache attributes come from the runs read: a later run's reclaim_account
    and aliases win over an earlier one's (caches are created and merged at
    boot, so they rarely differ).
    """
    from detectors.leaks.analysis import LeakInput

    with store.snapshot():  # the slabs and counters of the same samples, on a store being written too
        slabs = store.slab_table(run_id)
        counters = store.counter_table(run_id, _read_by_the_analysis)
        samples = store.samples(run_id)
    slabs, counters, line = _on_uptime(slabs, counters, samples)
    if last_hours is not None and len(slabs.walls):
        since = float(slabs.walls.max()) - last_hours * 3600.0
        slabs = slabs.between(since)
        counters = counters.between(since)
    runs = [r for r in store.runs() if run_id is None or r.id == run_id]
    reclaim: dict[str, bool] = {}
    aliases: dict[str, str] = {}
    for run in runs:
        reclaim.update(store.reclaimable(run.id))
        aliases.update(store.aliases(run.id))
    # A merged cache (slabinfo's lsm_inode_cache, a symlink to /sys/kernel/slab/:0000032) has the flag of the
    # directory it shares: SLUB merges only caches of the same flags.  Read there, not guessed from the name.
    for name, target in aliases.items():
        if name not in reclaim and target in reclaim:
            reclaim[name] = reclaim[target]
    totals = [r.mem_total_bytes for r in runs if r.mem_total_bytes]
    mem_total: int | NotAvailable = int(totals[-1]) if totals else NotAvailable("the store's runs lack MemTotal")
    return LeakInput(
        slabs=slabs,
        counters=counters,
        mem_total=mem_total,
        reclaim_account=reclaim,
        aliases=aliases,
        source=str(store.path),
        clock_steps=line.steps,
        reboots=line.reboots,
        uptime_known=bool(samples) and all(s.uptime is not None for s in samples),
    )


def _on_uptime(
    slabs: SlabTable, counters: CounterTable, samples: tuple[SampleRow, ...]
) -> tuple[SlabTable, CounterTable, TimeLine]:
    """The tables with their samples' times placed on the uptime across steps of the wall clock, and the time line
    (its steps and reboots: detectors/leaks/clock.py): before, a step forward of 1 h read 45 s of a UDP leak as
    "grew ... in 59 min"."""
    import dataclasses

    import numpy as np

    from detectors.leaks.clock import on_uptime, placed_at

    ids = np.array([s.id for s in samples], dtype=np.int64)
    line = on_uptime(
        ids.tolist(), [s.wall for s in samples], [s.uptime for s in samples], [s.boot_id or None for s in samples]
    )
    if not line.steps:
        return slabs, counters, line
    return (
        dataclasses.replace(slabs, walls=placed_at(slabs.sample_ids, ids, line.placed)),
        dataclasses.replace(counters, walls=placed_at(counters.sample_ids, ids, line.placed)),
        line,
    )


def findings_from_store(store: SlabStore, run_id: int | None = None) -> tuple[Finding, ...]:
    """The leak findings of a store's run (or of the whole store): the end-of-run hook of slab-watch.

    The last finding (info) says what was examined and what it could have shown; numpy and pandas are
    imported here, not when the module is.
    """
    from detectors.leaks.analysis import end_of_run_findings

    return end_of_run_findings(leak_input(store, run_id))
