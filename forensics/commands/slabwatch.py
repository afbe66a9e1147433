"""``kforensic slab-watch``, ``slab-import`` and ``slab-export``: record kernel memory counters over time.

``slab-watch`` samples /proc/slabinfo, meminfo, vmstat, the /proc/sys/fs
counts and the kernel log into a SQLite store (see docs/slab-watch.md);
``slab-import`` fills a store from snapshots taken by hand; ``slab-export``
turns a store into CSV, Parquet or Prometheus text.
"""

from __future__ import annotations

import importlib
import json
import re
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from forensics import __version__
from forensics.commands.common import (
    DebugOption,
    FailOnOption,
    ForceOption,
    FormatOption,
    OutputOption,
    deliver,
    exit_status,
    force_outputs,
    number_option,
)
from forensics.errors import InputError, KforensicError, UsageError
from forensics.model import Clock, Finding, Incident, NotAvailable, SourceRecord, Timestamp, TimeWindow
from forensics.report import OutputFormat

if TYPE_CHECKING:
    from collectors.slabstore import SlabStore, StoreSummary
    from collectors.slabwatch import Progress

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

_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)([smhd]?)")


def parse_duration(text: str, what: str) -> float:
    """Seconds in ``90``, ``90s``, ``30m``, ``2d`` or ``1h30m``; raises UsageError otherwise."""
    spec = text.strip().lower()
    parts = _DURATION.findall(spec)
    if not parts or "".join(n + u for n, u in parts) != spec:
        raise UsageError(f"{what} {text!r} is not a duration", hint="write e.g. 90, 90s, 30m, 24h, 2d or 1h30m")
    from forensics.commands.common import check_number

    return check_number(sum(float(n) * _UNITS[u or "s"] for n, u in parts), what, "seconds")


# ---------------------------------------------------------------- the end-of-run analysis hook


@dataclass(frozen=True)
class RunReport:
    """What a run (or a store) comes to: the summary and any findings of the leak analysis."""

    store: Path
    run_id: int | None
    summary: StoreSummary
    incident: Incident
    analysis: str  # what became of the leak analysis, one line


def leak_findings(store: SlabStore) -> tuple[tuple[Finding, ...], str]:
    """The leak analysis of the whole store, and one line saying what it did.

    This is the plug-in point of the leak detectors:
    ``detectors.leaks.findings_from_store(store, run_id)`` is called with the
    open store and ``run_id=None``: the whole store is analysed, not just the
    last run, since a restarted watcher continues one series.  Without that
    function, or when it has nothing to work on, the report is the summary
    alone, with no verdict made up.
    """
    try:
        leaks = importlib.import_module("detectors.leaks")
    except ImportError:
        return (), "leak analysis: not available in this kforensic"
    analyse = getattr(leaks, "findings_from_store", None)
    if analyse is None:
        return (), "leak analysis: not available in this kforensic"
    try:
        findings = tuple(analyse(store, None))
    except KforensicError as exc:
        return (), f"leak analysis: not run ({exc.message})"
    except Exception as exc:  # a bug in the analysis must not cost the summary of a day of sampling
        return (), (
            f"leak analysis failed: {type(exc).__name__}: {exc} (a bug in kforensic; the samples are safe:"
            f" rerun kforensic leaks --store {store.path} --debug)"
        )
    return findings, f"leak analysis of the whole store: {len(findings)} finding(s); details: kforensic leaks --store"


def end_of_run_analysis(store: SlabStore, run_id: int | None, analyse: bool = True) -> RunReport:
    """Summarise a run (or the store) and run the leak analysis on the store: what a run ends with."""
    summary = store.summary(run_id)
    findings: tuple[Finding, ...] = ()
    if not analyse:
        analysis = "leak analysis: skipped (--no-analysis); run kforensic leaks --store"
    elif not summary.samples:
        analysis = "leak analysis: no samples"
    else:
        findings, analysis = leak_findings(store)
    runs = [r for r in store.runs() if run_id is None or r.id == run_id]
    hosts = {r.host for r in runs if r.host}
    kernels = {r.kernel_release for r in runs if r.kernel_release}
    window: TimeWindow | NotAvailable = NotAvailable("the store has no samples")
    if isinstance(summary.first_wall, float) and isinstance(summary.last_wall, float):
        window = TimeWindow(Timestamp(summary.first_wall, Clock.WALL), Timestamp(summary.last_wall, Clock.WALL))
    size = store.path.stat().st_size
    incident = Incident(
        host=hosts.pop() if len(hosts) == 1 else NotAvailable("the store does not name one host"),
        kernel_release=kernels.pop() if len(kernels) == 1 else NotAvailable("the store does not name one kernel"),
        window=window,
        sources=(SourceRecord(str(store.path), size, NotAvailable("a store changes while it is written"), 0.0),),
        findings=findings,
        tool_version=__version__,
    )
    return RunReport(store.path, run_id, summary, incident, analysis)


def _human_bytes(value: int) -> str:
    sign = "-" if value < 0 else ""
    size = float(abs(value))
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{sign}{size:.0f} {unit}" if unit == "B" else f"{sign}{size:.1f} {unit}"
        size /= 1024
    return f"{sign}{size:.1f} GiB"


def _when(value: float | NotAvailable) -> str:
    return str(Timestamp(value, Clock.WALL)) if isinstance(value, float) else str(value)


def report_to_dict(report: RunReport, schema: str) -> dict[str, Any]:
    """The ``kforensic.slab-watch/1`` (or slab-import) JSON document."""
    from forensics.serialize import incident_to_dict

    s = report.summary
    return {
        "schema": schema,
        "store": str(report.store),
        "run_id": report.run_id,
        "analysis": report.analysis,
        "summary": {
            "samples": s.samples,
            "caches": s.caches,
            "boots": s.boots,
            "first_wall": s.first_wall if isinstance(s.first_wall, float) else None,
            "last_wall": s.last_wall if isinstance(s.last_wall, float) else None,
            "kmsg_records": s.kmsg_records,
            "kmsg_missing": s.kmsg_missing,
            "top_growers": [
                {
                    "cache": g.name,
                    "first_active_bytes": g.first_active_bytes,
                    "last_active_bytes": g.last_active_bytes,
                    "first_active_objs": g.first_active_objs,
                    "last_active_objs": g.last_active_objs,
                }
                for g in s.top_growers
            ],
        },
        "incident": incident_to_dict(report.incident),
    }


def render_report(report: RunReport, fmt: OutputFormat, schema: str) -> str:
    """The report as text, markdown or JSON."""
    if fmt is OutputFormat.JSON:
        return json.dumps(report_to_dict(report, schema), indent=2) + "\n"
    s = report.summary
    md = fmt is OutputFormat.MD
    lines = ["# slab-watch summary", ""] if md else ["slab-watch summary"]
    bullet = "- " if md else "  "
    lines += [
        f"{bullet}store: {report.store}" + (f" (run {report.run_id})" if report.run_id is not None else ""),
        f"{bullet}samples: {s.samples} from {_when(s.first_wall)} to {_when(s.last_wall)}",
        f"{bullet}caches: {s.caches}; boots: {s.boots}"
        + ("  (a reboot splits the series: growth is measured within the last boot)" if s.boots > 1 else ""),
        f"{bullet}kernel log records: {s.kmsg_records}; never read (sequence gaps): {s.kmsg_missing}",
    ]
    lines += ["", "## Top growers (bytes in use, last boot)", ""] if md else ["top growers (bytes in use, last boot):"]
    if not s.top_growers:
        lines.append(f"{bullet}none: no cache grew between the first and last sample")
    for g in s.top_growers:
        lines.append(
            f"{bullet}{g.name}: {_human_bytes(g.first_active_bytes)} -> {_human_bytes(g.last_active_bytes)}"
            f" ({'+' if g.delta_bytes >= 0 else ''}{_human_bytes(g.delta_bytes)};"
            f" objects {g.first_active_objs} -> {g.last_active_objs})"
        )
    lines += ["", report.analysis]
    if report.incident.findings:
        from forensics.report import render_incident

        lines += ["", render_incident(report.incident, fmt, color=False)]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- slab-watch


def systemd_unit(
    store: Path, interval: str, duration: str | None, require: bool, textfile_dir: Path | None = None
) -> str:
    """A ready systemd service running slab-watch unattended, niced, with only the store writable."""
    launcher = Path(sys.argv[0])
    exe = str(launcher.absolute()) if launcher.name == "kforensic" and launcher.is_file() else shutil.which("kforensic")
    command = [exe] if exe else [sys.executable, "-m", "forensics"]
    command += ["slab-watch", "--store", str(store), "--interval", interval]
    if duration is not None:
        command += ["--duration", duration]
    if require:
        command.append("--require-slabinfo")
    if textfile_dir is not None:
        command += ["--textfile-dir", str(textfile_dir)]
    from forensics.quoting import shell_single, systemd_arg, systemd_path

    # Every value is quoted the way systemd reads it (or refused when it holds a newline or a
    # control character): an option value can never add a line or a directive to the unit.
    exec_start = " ".join(systemd_arg(a, "--store" if a == str(store) else "argument") for a in command)
    directory = store.parent
    try:
        state = directory.relative_to("/var/lib")
    except ValueError:
        state = None
    if state is not None and str(state) != ".":
        # systemd creates a StateDirectory (0700) and keeps it writable under ProtectSystem=strict.
        writable = [f"StateDirectory={systemd_path(str(state), '--store')}", "StateDirectoryMode=0700"]
    else:
        # ReadWritePaths= must exist when the service starts: create it first (mkdir -m 0700).
        where = systemd_path(str(directory), "--store")
        writable = [f"# mkdir -m 0700 -p {shell_single(str(directory))}", f"ReadWritePaths={where}"]
    if textfile_dir is not None:
        writable.append(f"ReadWritePaths={systemd_path(str(textfile_dir), '--textfile-dir')}")
    return "\n".join(
        [
            "[Unit]",
            "Description=kforensic slab-watch: kernel slab and memory counters for leak analysis",
            "After=local-fs.target",
            "",
            "[Service]",
            "Type=simple",
            "ExecStart=" + exec_start,
            "Nice=10",
            "IOSchedulingClass=idle",
            "CPUSchedulingPolicy=batch",
            "ProtectSystem=strict",
            *writable,
            "ProtectHome=read-only",
            "PrivateTmp=yes",
            "NoNewPrivileges=yes",
            "UMask=0077",
            "# SIGTERM ends the run after the sample being taken; exit status 0.",
            "KillSignal=SIGTERM",
            "TimeoutStopSec=30",
            "Restart=on-failure",
            "RestartSec=30",
            "",
            "[Install]",
            "WantedBy=multi-user.target",
            "",
        ]
    )


class _PlainProgress:
    """One log line per sample, for journals and pipes."""

    def __call__(self, p: Progress) -> None:
        movers = ", ".join(
            f"{m.name} {'+' if m.delta_bytes >= 0 else ''}{_human_bytes(m.delta_bytes)}" for m in p.movers
        )
        total = p.plan.expected_samples()
        of = f"/{total}" if total else ""
        extra = " REBOOT (series break)" if p.rebooted else ""
        missing = f"; missing: {'; '.join(p.missing)}" if p.missing and p.index == 1 else ""
        if p.doubtful and p.index > 1:  # rows left out and clock steps are said at every sample, not only the first
            missing = f"; doubtful: {'; '.join(p.doubtful[:3])}" + (" ..." if len(p.doubtful) > 3 else "")
        print(
            f"slab-watch: run {p.run_id} sample {p.index}{of} cost {p.cost_seconds * 1000:.1f} ms,"
            f" kmsg +{p.kmsg_records}{extra}{'; ' + movers if movers else ''}{missing}",
            file=sys.stderr,
            flush=True,
        )


def _exporting(show: Callable[[Progress], None], textfile_dir: Path | None) -> Callable[[Progress], None]:
    """``show`` that first writes the sample to the textfile directory (when given)."""
    if textfile_dir is None:
        return show
    from forensics.fleet.exposition import textfile_writer

    write = textfile_writer(textfile_dir)

    def both(p: Progress) -> None:
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
) -> int:
    from collectors import procfs
    from collectors.slabstore import SlabStore
    from collectors.slabwatch import SlabWatcher, WatchPlan, check_slabinfo, require_slabinfo

    if require:
        require_slabinfo(root)
    elif (problem := check_slabinfo(root)) is not None:
        print(
            f"kforensic: notice: {problem} (mode 0400: run as root for slab caches);"
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

                def show(p: Progress) -> None:
                    movers = ", ".join(f"{m.name} {_human_bytes(m.delta_bytes)}" for m in p.movers[:2])
                    bar.update(task, completed=p.index, description=f"sample {p.index} {movers}".strip())
                    for note in p.doubtful[:3]:
                        bar.console.print(f"slab-watch: sample {p.index}: {note}", markup=False, highlight=False)

                result = watcher.run(_exporting(show, textfile_dir))
        else:
            result = watcher.run(_exporting(_PlainProgress(), textfile_dir))
        stopped = f", stopped by {result.stopped_by}" if result.stopped_by else ""
        print(
            f"slab-watch: {result.samples} samples in run {result.run_id}{stopped};"
            f" {result.cpu_seconds / max(result.samples, 1) * 1000:.1f} ms CPU per sample",
            file=sys.stderr,
        )
        return result.run_id


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
    from collectors.slabstore import SlabStore, resolve_store_path
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
    if not root.is_dir():
        raise InputError(f"--root {root} is not a directory", hint="give the directory holding proc/ and sys/")
    if textfile_dir is not None and not textfile_dir.is_dir():
        raise InputError(
            f"--textfile-dir {textfile_dir} is not a directory",
            hint="give node_exporter's --collector.textfile.directory",
        )
    run_id = _watch(store_path, root, seconds, length, require, force, textfile_dir)
    with SlabStore.open(store_path, readonly=True) as reader:
        report = end_of_run_analysis(reader, run_id, analyse=not no_analysis)
    deliver(render_report(report, fmt, WATCH_SCHEMA), output)
    raise typer.Exit(int(exit_status(report.incident, fail_on)))


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
    from collectors.slabstore import SlabStore, resolve_store_path
    from detectors.snapshot_input import rejected_rows, times_going_back

    loaded = load_snapshots(paths)
    snapshots = loaded.snapshots
    store_path = resolve_store_path(store)
    origin = ",".join(str(p.absolute()) for p in paths)
    owner: str | NotAvailable = host if host else NotAvailable("imported snapshots do not name their host")
    with SlabStore.open_for_writing(store_path, owner, force=force) as writer:
        run_id = import_snapshots(writer, snapshots, origin, owner, force=force)
    with SlabStore.open(store_path, readonly=True) as reader:
        report = end_of_run_analysis(reader, run_id, analyse=not no_analysis)
    checks = (*rejected_rows(loaded.rejected), *times_going_back(loaded.out_of_order))
    if checks:  # the input checks come first: they say how far the figures can be trusted
        report = replace(report, incident=replace(report.incident, findings=(*checks, *report.incident.findings)))
    deliver(render_report(report, fmt, IMPORT_SCHEMA), output)
    raise typer.Exit(int(exit_status(report.incident, fail_on)))


# ---------------------------------------------------------------- slab-export


def _prom_label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


_SLAB_METRICS = (
    # (node_exporter name, help, column of the slab row)
    ("node_slabinfo_active_objects", "The number of objects that are currently active (i.e., in use).", 4),
    ("node_slabinfo_objects", "The total number of allocated objects (i.e., objects that are both in use and not).", 5),
    ("node_slabinfo_object_size_bytes", "The size of objects in this slab, in bytes.", 6),
    ("node_slabinfo_objects_per_slab", "The number of objects stored in each slab.", 7),
    ("node_slabinfo_pages_per_slab", "The number of pages allocated for each slab.", 8),
)


def _meminfo_metric(name: str, unit: str) -> str:
    # node_exporter: "Active(anon)" -> "Active_anon"; sizes in kB become *_bytes.
    key = re.sub(r"\((.*)\)", r"_\1", name)
    return f"node_memory_{key}_bytes" if unit == "kB" else f"node_memory_{key}"


def prometheus_text(store: SlabStore, run_id: int | None, all_samples: bool) -> str:
    """node_exporter-compatible text exposition of the last sample (or every sample, with timestamps)."""
    samples = store.samples(run_id)
    if not samples:
        raise InputError(f"{store.path}: no samples to export")
    wanted = {s.id for s in samples} if all_samples else {samples[-1].id}
    stamp = {s.id: f" {int(s.wall * 1000)}" if all_samples else "" for s in samples}
    out: list[str] = []
    rows = [r for r in store.iter_slab_rows(run_id) if r[0] in wanted]
    for metric, text, column in _SLAB_METRICS:
        out += [f"# HELP {metric} {text}", f"# TYPE {metric} gauge"]
        out += [f'{metric}{{slab="{_prom_label(str(r[3]))}"}} {r[column]}{stamp[int(str(r[0]))]}' for r in rows]
    for source, name, unit in store.counter_names():
        if source != "meminfo":
            continue
        metric = _meminfo_metric(name, unit)
        points = [p for p in store.counter_series(source, name, run_id) if p.sample_id in wanted]
        if not points:
            continue
        out += [f"# HELP {metric} Memory information field {name}.", f"# TYPE {metric} gauge"]
        scale = 1024 if unit == "kB" else 1
        out += [f"{metric} {p.value * scale}{stamp[p.sample_id]}" for p in points]
    return "\n".join(out) + "\n"


def slab_export(
    store: Annotated[str, typer.Option("--store", help="Store file or directory to export.")],
    fmt: Annotated[
        str, typer.Option("--format", "-f", help="csv, parquet (needs pyarrow) or prometheus (text exposition).")
    ] = "csv",
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

    if fmt not in ("csv", "parquet", "prometheus"):
        raise UsageError(f"--format {fmt} is not one of csv, parquet, prometheus")
    if table not in ("slab", "counters"):
        raise UsageError(f"--table {table} is not one of slab, counters")
    with SlabStore.open(resolve_store_path(store), readonly=True) as reader:
        if run is not None and run not in {r.id for r in reader.runs()}:
            known = ", ".join(str(r.id) for r in reader.runs()) or "none"
            raise UsageError(f"{reader.path}: no run {run}", hint=f"runs in the store: {known}")
        if fmt == "prometheus":
            deliver(prometheus_text(reader, run, all_samples), output)
            return
        frame = reader.slab_frame(run) if table == "slab" else reader.counter_frame(run)
        if fmt == "csv":
            deliver(frame.to_csv(index=False), output)
            return
        try:
            importlib.import_module("pyarrow")
        except ImportError:
            raise InputError(
                "parquet export needs pyarrow, which is not installed", hint="pip install pyarrow, or use --format csv"
            ) from None
        if output is None:
            raise UsageError("parquet is binary: give -o FILE")
        from forensics.output import write_atomic

        write_atomic(output, frame.to_parquet(index=False))


def register(app: typer.Typer) -> None:
    """Add the three commands to the CLI."""
    app.command("slab-watch", epilog=WATCH_EXAMPLE, help=f"{slab_watch.__doc__}")(slab_watch)
    app.command("slab-import", epilog=IMPORT_EXAMPLE, help=f"{slab_import.__doc__}")(slab_import)
    app.command("slab-export", epilog=EXPORT_EXAMPLE, help=f"{slab_export.__doc__}")(slab_export)
