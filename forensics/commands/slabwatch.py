"""``kforensic slab-watch``, ``slab-import`` and ``slab-export``: record kernel memory counters over time.

``slab-watch`` samples /proc/slabinfo, meminfo, vmstat, the /proc/sys/fs
counts and the kernel log into a SQLite store (see docs/slab-watch.md);
``slab-import`` fills a store from snapshots taken by hand; ``slab-export``
turns a store into CSV, Parquet or Prometheus text.
"""

import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from forensics.commands.common import (
    DebugOption,
    FailOnOption,
    ForceOption,
    FormatOption,
    OutputOption,
    number_option,
)
from forensics.commands.shared import force_outputs
from forensics.delivery import deliver, exit_status
from forensics.errors import ExitCode, InputError, UsageError
from forensics.model import NotAvailable, Severity
from forensics.pipelines.slabwatch import NO_SLABINFO_IMPORTED, end_of_run_analysis, store_export, systemd_unit
from forensics.report.formats import ExportFormat, OutputFormat, export, render
from forensics.report.slabwatch import RunReportRenderer, prometheus_text
from forensics.units import human_bytes, parse_duration

if TYPE_CHECKING:
    import pandas

    from collectors.slabstore import SlabStore
    from collectors.slabwatch import Progress, WatchResult
    from forensics.types.results import RunReport

WATCH_SCHEMA = "kforensic.slab-watch/1"
IMPORT_SCHEMA = "kforensic.slab-import/1"

WATCH_EXAMPLE = """
Example:

  sudo kforensic slab-watch --hours 24 --store /var/lib/kforensic/

  sudo kforensic slab-watch --systemd-unit --hours 24 > /etc/systemd/system/kforensic-slab-watch.service

  sudo kforensic slab-watch --interval 15s --textfile-dir /var/lib/prometheus/node-exporter
"""
IMPORT_EXAMPLE = """
Example:

  kforensic slab-import --store leak.sqlite snapshots/

  kforensic slab-import --store leak.sqlite --host db7 slabinfo-every-minute.log
"""
EXPORT_EXAMPLE = """
Example:

  kforensic slab-export --store leak.sqlite --format csv -o slab.csv

  kforensic slab-export --store /var/lib/kforensic/ --format prometheus > /var/lib/node_exporter/slab.prom
"""

NoAnalysisOption = Annotated[
    bool, typer.Option("--no-analysis", help="Skip the leak analysis at the end (the summary is still printed).")
]


# ---------------------------------------------------------------- the end-of-run analysis hook


# ---------------------------------------------------------------- slab-watch


class _PlainProgress:
    """One log line per sample, for journals and pipes."""

    def __call__(self, p: "Progress") -> None:
        movers = ", ".join(
            f"{m.name} {'+' if m.delta_bytes >= 0 else ''}{human_bytes(m.delta_bytes)}" for m in p.movers
        )
        total = p.plan.expected_samples()
        of = f"/{total}" if total else ""
        extra = " REBOOT (series break)" if p.rebooted else ""
        missing = f"; missing: {'; '.join(p.missing)}" if p.missing and p.index == 1 else ""
        if p.doubtful and p.index > 1:  # rows left out and clock steps are said at every sample, not only the first
            missing = f"; doubtful: {'; '.join(p.doubtful[:3])}" + (" ..." if len(p.doubtful) > 3 else "")
        # A gap before this sample (its movers span it, not one interval), as kforensic leaks will say it.
        gap = f"; {_gap_said(p)}" if p.missed is not None else ""
        print(
            f"slab-watch: run {p.run_id} sample {p.index}{of} cost {p.cost_seconds * 1000:.1f} ms,"
            f" kmsg +{p.kmsg_records}{extra}{gap}{'; ' + movers if movers else ''}{missing}",
            file=sys.stderr,
            flush=True,
        )


def _gap_said(p: "Progress") -> str:
    """``15 slots missed (79.0 s since the previous sample), 15 in this run``."""
    assert p.missed is not None
    return f"{p.missed.said()}, {p.missed_slots} in this run"


def _exporting(show: Callable[["Progress"], None], textfile_dir: Path | None) -> Callable[["Progress"], None]:
    """``show`` that first writes the sample to the textfile directory (when given)."""
    if textfile_dir is None:
        return show
    from forensics.fleet.exposition import textfile_writer

    write = textfile_writer(textfile_dir)

    def both(p: "Progress") -> None:
        if p.sample is not None:
            write(p.sample)
        show(p)

    return both


def _watch(
    store_path: Path,
    root: Path,
    interval: float,
    duration: float | None,
    require: bool,
    force: bool,
    textfile_dir: Path | None = None,
) -> "WatchResult":
    from collectors import procfs
    from collectors.slabstore import SlabStore
    from collectors.slabwatch import SlabWatcher, WatchPlan, check_slabinfo, require_slabinfo, slabinfo_hint

    if require:
        require_slabinfo(root)
    elif (problem := check_slabinfo(root)) is not None:
        print(
            f"kforensic: notice: {problem} ({slabinfo_hint(root)});"
            " recording meminfo, vmstat, fs counts and the kernel log only",
            file=sys.stderr,
        )
    host = procfs.read_identity(root, NotAvailable("not needed")).hostname
    store = SlabStore.open_for_writing(store_path, host, force=force)
    plan = WatchPlan(root, interval, duration, require)
    with store:
        watcher = SlabWatcher(store, plan)
        if sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
            from rich.progress import Progress as RichProgress

            columns = [TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(), TimeRemainingColumn()]
            with RichProgress(*columns, console=Console(stderr=True), transient=False) as bar:
                task = bar.add_task("slab-watch: starting", total=plan.expected_samples())

                def show(p: "Progress") -> None:
                    movers = ", ".join(f"{m.name} {human_bytes(m.delta_bytes)}" for m in p.movers[:2])
                    bar.update(task, completed=p.index, description=f"sample {p.index} {movers}".strip())
                    if p.missed is not None:
                        bar.console.print(
                            f"slab-watch: sample {p.index}: {_gap_said(p)}", markup=False, highlight=False
                        )
                    for note in p.doubtful[:3]:
                        bar.console.print(f"slab-watch: sample {p.index}: {note}", markup=False, highlight=False)

                result = watcher.run(_exporting(show, textfile_dir))
        else:
            result = watcher.run(_exporting(_PlainProgress(), textfile_dir))
        stopped = f", stopped by {result.stopped_by}" if result.stopped_by else ""
        cut = result.partial
        left = f"; {len(cut)} left out (a read cut short mid-row: {cut[0].source}:{cut[0].line})" if cut else ""
        left += f"; {result.missed_said()}" if result.missed else ""
        print(
            f"slab-watch: {result.samples} samples in run {result.run_id}{stopped}{left};"
            f" {result.cpu_seconds / max(result.samples, 1) * 1000:.1f} ms CPU per sample",
            file=sys.stderr,
        )
        return result


def slab_watch(
    interval: Annotated[str, typer.Option("--interval", help="Time between samples: 1s to 1h (60, 90s, 5m).")] = "60s",
    hours: Annotated[float | None, number_option("--hours", "Sample for this many hours.", "hours", above=True)] = None,
    duration: Annotated[
        str | None, typer.Option("--duration", help="Sample for this long (30m, 24h, 2d); default: until stopped.")
    ] = None,
    store: Annotated[
        str | None,
        typer.Option(
            "--store",
            help="Store file or directory (default /var/lib/kforensic/ as root, else ~/.local/share/kforensic/).",
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Add to a store recorded on another host; replace an output file owned by another user.",
            callback=force_outputs,
        ),
    ] = False,
    root: Annotated[
        Path, typer.Option("--root", help="Read proc/ and sys/ below DIR (a copied tree).", metavar="DIR")
    ] = Path("/"),
    require: Annotated[
        bool, typer.Option("--require-slabinfo", help="Fail (exit 3) instead of continuing without /proc/slabinfo.")
    ] = False,
    unit: Annotated[
        bool, typer.Option("--systemd-unit", help="Print a systemd service for these options and exit.")
    ] = False,
    textfile_dir: Annotated[
        Path | None,
        typer.Option(
            "--textfile-dir",
            help="Also write each sample for node_exporter's textfile collector into DIR (kforensic_* metrics).",
            metavar="DIR",
        ),
    ] = None,
    no_analysis: NoAnalysisOption = False,
    fast: Annotated[bool, typer.Option("--allow-fast-interval", hidden=True)] = False,
    fmt: FormatOption = OutputFormat.TEXT,
    output: OutputOption = None,
    fail_on: FailOnOption = None,
    debug: DebugOption = False,
) -> None:
    """Sample kernel slab caches, meminfo, vmstat and the kernel log into a store (SIGTERM/Ctrl-C end it cleanly)."""
    from collectors.slabstore import SlabStore, check_store_directory, resolve_store_path
    from collectors.slabwatch import MAX_INTERVAL, MIN_INTERNAL_INTERVAL, MIN_INTERVAL

    seconds = parse_duration(interval, "--interval")
    lowest = MIN_INTERNAL_INTERVAL if fast else MIN_INTERVAL
    if not lowest <= seconds <= MAX_INTERVAL:
        raise UsageError(f"--interval {interval} is outside 1s..1h", hint="give e.g. --interval 60s")
    if hours is not None and duration is not None:
        raise UsageError("give --hours or --duration, not both")
    length = hours * 3600.0 if hours is not None else None
    if duration is not None:
        length = parse_duration(duration, "--duration")
    if length is not None and length <= 0:
        raise UsageError("the duration must be more than 0")
    store_path = resolve_store_path(store)
    if unit:
        spec = duration if duration is not None else (f"{hours}h" if hours is not None else None)
        textfiles = textfile_dir.absolute() if textfile_dir is not None else None
        deliver(systemd_unit(store_path.absolute(), interval, spec, require, textfiles), output)
        raise typer.Exit(0)
    check_store_directory(store, store_path)
    if not root.is_dir():
        raise InputError(f"--root {root} is not a directory", hint="give the directory holding proc/ and sys/")
    if textfile_dir is not None and not textfile_dir.is_dir():
        raise InputError(
            f"--textfile-dir {textfile_dir} is not a directory",
            hint="give node_exporter's --collector.textfile.directory",
        )
    from forensics.pipelines.slabwatch import plan_warning

    if (warning := plan_warning(root, seconds, length)) is not None:
        print(f"kforensic: warning: {warning}", file=sys.stderr)
    from detectors.snapshot_input import partial_samples

    result = _watch(store_path, root, seconds, length, require, force, textfile_dir)
    with SlabStore.open(store_path, readonly=True) as reader:
        report = end_of_run_analysis(reader, result.run_id, analyse=not no_analysis)
    if checks := partial_samples(result.partial, result.samples):
        report = replace(report, incident=replace(report.incident, findings=(*checks, *report.incident.findings)))
    deliver(render(RunReportRenderer(WATCH_SCHEMA), report, fmt, output), output)
    raise typer.Exit(_run_status(report, fail_on))


# ---------------------------------------------------------------- slab-import


def slab_import(
    paths: Annotated[list[Path], typer.Argument(help="Snapshot files or directories.", metavar="PATH...")],
    store: Annotated[str, typer.Option("--store", help="Store file or directory (created 0600 if missing).")],
    host: Annotated[str | None, typer.Option("--host", help="Host the snapshots were taken on.")] = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Import again / into another host's store; replace an output file owned by another user.",
            callback=force_outputs,
        ),
    ] = False,
    no_analysis: NoAnalysisOption = False,
    fmt: FormatOption = OutputFormat.TEXT,
    output: OutputOption = None,
    fail_on: FailOnOption = None,
    debug: DebugOption = False,
) -> None:
    """Import slabinfo/meminfo snapshots (timestamped files or concatenated `cat` output) into a store."""
    from collectors.slabimport import import_snapshots, load_snapshots
    from collectors.slabstore import SlabStore, check_store_directory, resolve_store_path
    from detectors.snapshot_input import partial_samples, rejected_rows, times_going_back, wall_clock_steps

    store_path = resolve_store_path(store)
    check_store_directory(store, store_path)  # before the snapshots are read
    loaded = load_snapshots(paths)
    snapshots = loaded.snapshots
    origin = ",".join(str(p.absolute()) for p in paths)
    owner: str | NotAvailable = host if host else NotAvailable("imported snapshots do not name their host")
    with SlabStore.open_for_writing(store_path, owner, force=force) as writer:
        run_id = import_snapshots(writer, snapshots, origin, owner, force=force)
    with SlabStore.open(store_path, readonly=True) as reader:
        report = end_of_run_analysis(reader, run_id, analyse=not no_analysis, no_slabinfo=NO_SLABINFO_IMPORTED)
    checks = (
        *partial_samples(loaded.partial, len(snapshots)),
        *wall_clock_steps(loaded.clock_steps),
        *rejected_rows(loaded.rejected),
        *times_going_back(loaded.out_of_order),
    )
    if checks:  # the input checks come first: they say how far the figures can be trusted
        report = replace(report, incident=replace(report.incident, findings=(*checks, *report.incident.findings)))
    deliver(render(RunReportRenderer(IMPORT_SCHEMA), report, fmt, output), output)
    raise typer.Exit(_run_status(report, fail_on))


# ---------------------------------------------------------------- slab-export


@dataclass(frozen=True)
class _StoreExporter:
    """A store's samples (one run, or all) in each export format (``forensics.report.formats.export``)."""

    reader: "SlabStore"
    table: str  # csv/parquet: slab (per cache) or counters
    run: int | None
    all_samples: bool  # prometheus: every sample with its timestamp

    def _frame(self) -> "pandas.DataFrame":
        return self.reader.slab_frame(self.run) if self.table == "slab" else self.reader.counter_frame(self.run)

    def csv(self) -> str:
        return str(self._frame().to_csv(index=False))

    def parquet(self) -> bytes:
        if importlib.util.find_spec("pyarrow") is None:
            raise InputError(
                "parquet export needs pyarrow, which is not installed", hint="pip install pyarrow, or use --format csv"
            )
        return bytes(self._frame().to_parquet(index=False))

    def prometheus(self) -> str:
        return prometheus_text(store_export(self.reader, self.run, self.all_samples))


def slab_export(
    store: Annotated[str, typer.Option("--store", help="Store file or directory to export.")],
    fmt: Annotated[
        ExportFormat,
        typer.Option("--format", "-f", help="csv, parquet (needs pyarrow) or prometheus (text exposition)."),
    ] = ExportFormat.CSV,
    table: Annotated[str, typer.Option("--table", help="csv/parquet: slab (per cache) or counters.")] = "slab",
    run: Annotated[int | None, typer.Option("--run", help="Only this run (see the summary); default all.")] = None,
    all_samples: Annotated[
        bool, typer.Option("--all-samples", help="prometheus: every sample with its timestamp, not just the last.")
    ] = False,
    output: OutputOption = None,
    debug: DebugOption = False,
    force: ForceOption = False,
) -> None:
    """Export a store as CSV, Parquet or Prometheus text (node_exporter metric names)."""
    from collectors.slabstore import SlabStore, resolve_store_path

    if table not in ("slab", "counters"):
        raise UsageError(f"--table {table} is not one of slab, counters")
    from forensics.output import check_outputs_not_named_inputs

    store_file = resolve_store_path(store)
    check_outputs_not_named_inputs([output], [store_file])  # before the store's reading (and pandas' import)
    with SlabStore.open(store_file, readonly=True) as reader:
        if run is not None and run not in {r.id for r in reader.runs()}:
            known = ", ".join(str(r.id) for r in reader.runs()) or "none"
            raise UsageError(f"{reader.path}: no run {run}", hint=f"runs in the store: {known}")
        data = export(_StoreExporter(reader, table, run, all_samples), fmt)
    if isinstance(data, str):
        deliver(data, output)
        return
    if output is None:
        raise UsageError(f"{fmt.value} is binary: give -o FILE")
    from forensics.output import write_atomic

    write_atomic(output, data)


def register(app: typer.Typer) -> None:
    """Add the three commands to the CLI."""
    app.command("slab-watch", epilog=WATCH_EXAMPLE, help=f"{slab_watch.__doc__}")(slab_watch)
    app.command("slab-import", epilog=IMPORT_EXAMPLE, help=f"{slab_import.__doc__}")(slab_import)
    app.command("slab-export", epilog=EXPORT_EXAMPLE, help=f"{slab_export.__doc__}")(slab_export)


def _run_status(report: "RunReport", fail_on: Severity | None) -> int:
    """The exit status of a run: 4 (a bug in kforensic) when the leak analysis failed, said on stderr too, after the
    summary is written (the samples are stored); else 1 for findings at ``--fail-on`` or above, else 0."""
    if report.analysis_failed:
        print(f"kforensic: error: {report.analysis}", file=sys.stderr)
        return int(ExitCode.INTERNAL)
    return int(exit_status(report.incident, fail_on))
