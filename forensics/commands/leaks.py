"""``kforensic leaks``: is the kernel leaking, and what?  Judge a slab-watch store's series.

Reads the store written by ``slab-watch`` (or ``slab-import``), grades every
slab cache and the meminfo fields a leak can hide in (see docs/leaks.md), and
reports leaks, suspects and reclaimable growth with the growth rate, the time
until MemAvailable runs out, who typically allocates the objects and how to
confirm it.  ``--format json`` writes a ``kforensic.leaks/1`` document that
embeds the findings as an incident for ``kforensic report --from``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import time
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
    number_option,
    render_for,
)
from forensics.errors import InputError, UsageError
from forensics.model import Clock, Incident, NotAvailable, SourceRecord, Timestamp, TimeWindow
from forensics.report import OutputFormat

if TYPE_CHECKING:
    from collectors.slabstore import SlabStore
    from detectors.leaks.analysis import LeakAnalysis
    from detectors.leaks.decision import Thresholds
    from detectors.leaks.judge import SeriesVerdict
    from forensics.leakplots import Plot

LEAKS_SCHEMA = "kforensic.leaks/1"

EXAMPLE = """
Example:

  sudo kforensic slab-watch --interval 60s --hours 24 --store /var/lib/kforensic/

  kforensic leaks --store /var/lib/kforensic/ --plots leak-plots -f md -o leaks.md

  kforensic leaks --store leak.sqlite --last 6h --format json -o leaks.json --fail-on medium

  kforensic leaks --prometheus http://prom:9090 --match '{job="node"}' --since 7d --step 5m
"""


@dataclasses.dataclass(frozen=True)
class LeaksResult:
    """A finished leak analysis of a store, ready to render."""

    store: Path
    run_id: int | None
    analysis: LeakAnalysis
    thresholds: Thresholds
    incident: Incident
    plots: tuple[Plot, ...]


# ---------------------------------------------------------------- running the analysis


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
    )


def analyse_store(
    store_path: Path,
    run_id: int | None = None,
    last_hours: float | None = None,
    thresholds: Thresholds | None = None,
    plots_dir: Path | None = None,
) -> LeaksResult:
    """Open the store read-only, analyse it (one run, or all; optionally the last hours), write plots."""
    from collectors.slabstore import SlabStore
    from detectors.leaks.analysis import analyse
    from detectors.leaks.decision import Thresholds as DefaultThresholds
    from detectors.leaks.frames import leak_input

    th = thresholds or DefaultThresholds()
    with SlabStore.open(store_path, readonly=True) as store:
        if run_id is not None and run_id not in {r.id for r in store.runs()}:
            known = ", ".join(str(r.id) for r in store.runs()) or "none"
            raise UsageError(f"{store_path}: no run {run_id}", hint=f"runs in the store: {known}")
        data = leak_input(store, run_id, last_hours)
        if not len(data.slabs):
            raise InputError(
                f"{store_path}: no slab samples to analyse",
                hint="record some as root with kforensic slab-watch (slabinfo is readable by root only)",
            )
        analysis = analyse(data, th)
        incident = _incident(store, run_id, analysis)
    plots: tuple[Plot, ...] = ()
    if plots_dir is not None:
        from forensics.leakplots import write_plots

        meminfo_ids = {id(v) for v in analysis.meminfo}
        flagged = [("meminfo" if id(v) in meminfo_ids else "cache", v) for v in analysis.flagged()]
        plots = tuple(write_plots(flagged, plots_dir))
    return LeaksResult(store_path, run_id, analysis, th, incident, plots)


# ---------------------------------------------------------------- rendering


def _number(value: float | None) -> float | None:
    """A float for JSON: NaN and infinities become null."""
    return None if value is None or not math.isfinite(value) else round(float(value), 6)


def _hours_left(rate: float, available: float | None) -> float | None:
    return None if available is None or rate <= 0 else available / rate


def series_to_dict(kind: str, v: SeriesVerdict, mem_available: float | None) -> dict[str, Any]:
    """One judged series as JSON."""
    f = v.features
    return {
        "kind": kind,
        "name": v.name,
        "boot_id": v.boot_id,
        "grade": v.grade.value,
        "rule": v.verdict.rule,
        "reason": v.verdict.reason,
        "rate_bytes_per_hour": _number(v.rate),
        "rate_ci_bytes_per_hour": [_number(f.ts_low), _number(f.ts_high)],
        "ols_rate_bytes_per_hour": _number(f.ols_slope),
        "growth_bytes": _number(v.growth),
        "span_hours": _number(f.span_hours),
        "r2": _number(f.r2),
        "kendall_tau": _number(f.tau),
        "persistence": _number(f.persistence),
        "drawdown": _number(f.drawdown),
        "minima_rate_bytes_per_hour": _number(f.minima_slope),
        "daily_cycle": f.daily_cycle,
        "reclaimable": v.reclaimable,
        "objects_per_hour": _number(v.objects_rate),
        "objects_in_use_per_hour": _number(v.active_rate),
        "object_size": v.objsize,
        "since": _number(v.since_wall),
        "hours_until_memavailable_exhausted": _number(_hours_left(v.rate, mem_available)),
        "samples": [
            {"role": s.role, "sample_id": s.sample_id, "wall": s.wall, "value_bytes": _number(s.value)}
            for s in v.samples
        ],
    }


def result_to_dict(result: LeaksResult) -> dict[str, Any]:
    """The ``kforensic.leaks/1`` document (schema in docs/leaks.md)."""
    from forensics.serialize import incident_to_dict

    a = result.analysis
    interesting = sorted(
        [("cache", v) for v in a.caches] + [("meminfo", v) for v in a.meminfo],
        key=lambda kv: (-kv[1].grade.rank, -kv[1].rate, kv[1].name),
    )
    return {
        "schema": LEAKS_SCHEMA,
        "tool_version": __version__,
        "store": str(result.store),
        "run_id": result.run_id,
        "window": {
            "first": a.first_wall if isinstance(a.first_wall, float) else None,
            "last": a.last_wall if isinstance(a.last_wall, float) else None,
        },
        "samples": a.samples,
        "boots": a.boots,
        "caches_seen": a.cache_names,
        "interval_seconds": _number(a.interval_seconds) if isinstance(a.interval_seconds, float) else None,
        "window_seconds": _number(a.window_seconds) if isinstance(a.window_seconds, float) else None,
        "mem_total_bytes": _number(a.mem_total),
        "mem_available_bytes": _number(a.mem_available),
        "thresholds": dataclasses.asdict(result.thresholds),
        "series": [series_to_dict(kind, v, a.mem_available) for kind, v in interesting],
        "groups": [
            {
                "subject": g.signature.subject if g.signature else None,
                "action": g.signature.action if g.signature else None,
                "grade": g.grade.value,
                "members": list(g.names),
                "objects_per_anchor_object": [_number(r) for r in g.ratios],
                "rate_bytes_per_hour": _number(g.rate),
            }
            for g in a.groups
        ],
        "plots": [{"name": p.name, "kind": p.kind, "path": str(p.path)} for p in result.plots],
        "incident": incident_to_dict(result.incident),
    }


def _kb(value: float) -> str:
    return f"{value / 1024:,.0f}"


def _left(v: SeriesVerdict, available: float | None) -> str:
    hours = _hours_left(v.rate, available)
    if hours is None:
        return "-"
    return f"{hours:,.1f} h" if hours < 48 else f"{hours / 24:,.1f} d"


def _rows(result: LeaksResult) -> list[tuple[str, str, str, str, str, str, str]]:
    from forensics.model import Severity, finding_id

    a = result.analysis
    severities = {f.id: f.severity for f in a.findings}
    meminfo_ids = {id(v) for v in a.meminfo}
    rows = []
    for v in a.flagged():
        f = v.features
        grade = v.grade.value
        explained = severities.get(finding_id("kernel-memory-leak", v.name)) is Severity.INFO
        if id(v) in meminfo_ids and explained and v.grade.rank >= 2:
            grade = f"{grade} (explained by caches)"
        rows.append(
            (grade, v.name, _kb(v.rate), _kb(v.growth), f"{f.r2:.2f}", f"{f.tau:.2f}", _left(v, a.mem_available))
        )
    return rows


_HEADERS = ("grade", "series", "KB/h", "growth KB", "r²", "tau", "MemAvailable gone in")


def _summary_line(result: LeaksResult) -> str:
    a = result.analysis
    interval = f"{a.interval_seconds:g} s" if isinstance(a.interval_seconds, float) else "?"
    window = f"{a.window_seconds:g} s" if isinstance(a.window_seconds, float) else "?"
    leaks = sum(1 for v in a.flagged() if v.grade.rank >= 2)
    return (
        f"{a.samples} samples every {interval} (medians of {window} windows), {a.boots} boot(s), "
        f"{a.cache_names} caches ({len(a.caches)} moved enough to judge), {len(a.meminfo)} meminfo series; "
        f"{leaks} leaking or suspect, "
        f"{len(a.groups)} co-growth group(s)"
    )


def render_text(result: LeaksResult) -> str:
    """A terminal table of the flagged series, then the incident."""
    rows = _rows(result)
    lines = [f"kforensic leaks: {result.store}", _summary_line(result), ""]
    if rows:
        widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(_HEADERS)]
        lines.append("  ".join(h.ljust(w) for h, w in zip(_HEADERS, widths, strict=True)))
        lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    else:
        lines.append("No cache or meminfo field grows like a leak.")
    for plot in result.plots:
        lines.append(f"plot: {plot.path}")
    lines.append("")
    return "\n".join(lines) + "\n" + render_for(result.incident, OutputFormat.TEXT, None)


def render_markdown(result: LeaksResult, output: Path | None) -> str:
    """A markdown report: the table, the plots (linked relative to the output file), then the incident."""
    from forensics.report.markdown import md_escape

    lines = ["# kforensic leaks", "", f"Store `{md_escape(str(result.store))}`: {_summary_line(result)}.", ""]
    rows = _rows(result)
    if rows:
        lines += ["| " + " | ".join(_HEADERS) + " |", "|" + "---|" * len(_HEADERS)]
        lines += ["| " + " | ".join(md_escape(c) for c in r) + " |" for r in rows]
    else:
        lines.append("No cache or meminfo field grows like a leak.")
    if result.plots:
        lines += ["", "## Plots", ""]
        base = output.parent if output is not None else Path(".")
        for plot in result.plots:
            link = os.path.relpath(plot.path, base)
            lines += [f"![{md_escape(plot.name)}]({link})", ""]
    lines.append("")
    return "\n".join(lines) + "\n" + render_for(result.incident, OutputFormat.MD, output)


def render(result: LeaksResult, fmt: OutputFormat, output: Path | None) -> str:
    """The result in the chosen format."""
    if fmt is OutputFormat.JSON:
        return json.dumps(result_to_dict(result), indent=2, ensure_ascii=False) + "\n"
    if fmt is OutputFormat.MD:
        return render_markdown(result, output)
    return render_text(result)


# ---------------------------------------------------------------- the command


def leaks(
    store: Annotated[
        Path | None,
        typer.Option(
            "--store", help="slab-watch store (file, or directory holding slab-watch.sqlite).", metavar="PATH"
        ),
    ] = None,
    run: Annotated[int | None, typer.Option("--run", help="Analyse only this run of the store.", metavar="ID")] = None,
    last: Annotated[
        str | None, typer.Option("--last", help="Analyse only the last DURATION (e.g. 6h, 2d).", metavar="DURATION")
    ] = None,
    plots: Annotated[
        Path | None, typer.Option("--plots", help="Write PNG plots of the flagged series into DIR.", metavar="DIR")
    ] = None,
    min_rate: Annotated[
        float | None,
        number_option("--min-rate", "Ignore growth slower than this (default 256).", "KB per hour", above=True),
    ] = None,
    prometheus: Annotated[
        str | None,
        typer.Option("--prometheus", help="Read every instance's series from this Prometheus server.", metavar="URL"),
    ] = None,
    match: Annotated[
        str | None, typer.Option("--match", help="--prometheus: label selector of the instances.", metavar="SELECTOR")
    ] = None,
    since: Annotated[
        str, typer.Option("--since", help="--prometheus: how far back to read.", metavar="DURATION")
    ] = "1d",
    step: Annotated[str, typer.Option("--step", help="--prometheus: query resolution.", metavar="DURATION")] = "60s",
    bearer_token_file: Annotated[
        Path | None, typer.Option("--bearer-token-file", help="--prometheus: send this token.", metavar="FILE")
    ] = None,
    basic_auth_file: Annotated[
        Path | None,
        typer.Option("--basic-auth-file", help="--prometheus: user:password for basic auth.", metavar="FILE"),
    ] = None,
    ca_file: Annotated[
        Path | None, typer.Option("--ca-file", help="--prometheus: CA certificates to verify TLS.", metavar="FILE")
    ] = None,
    cert_file: Annotated[
        Path | None, typer.Option("--cert-file", help="--prometheus: client certificate (TLS).", metavar="FILE")
    ] = None,
    key_file: Annotated[
        Path | None, typer.Option("--key-file", help="--prometheus: client certificate key.", metavar="FILE")
    ] = None,
    insecure: Annotated[
        bool, typer.Option("--insecure", help="--prometheus: do not verify the server's certificate.")
    ] = False,
    timeout: Annotated[
        float, number_option("--timeout", "--prometheus: seconds to wait for each answer.", "seconds", above=True)
    ] = 30.0,
    fmt: FormatOption = OutputFormat.TEXT,
    output: OutputOption = None,
    fail_on: FailOnOption = None,
    debug: DebugOption = False,
    force: ForceOption = False,
) -> None:
    """Find slab caches and kernel memory that grow like a leak, and say who allocates them."""
    if prometheus is not None:
        from collectors.prometheus import PromAuth
        from forensics.fleet.leaks import run_prometheus

        if store is not None or run is not None or plots is not None or last is not None:
            raise UsageError("--prometheus reads a server: --store, --run, --last and --plots do not apply")
        auth = PromAuth(bearer_token_file, basic_auth_file, ca_file, cert_file, key_file, insecure, timeout)
        min_kb = None if min_rate is None else float(min_rate)
        fleet = run_prometheus(prometheus, match, since, step, auth, min_kb, fmt.value, output)
        raise typer.Exit(int(exit_status(fleet.incident, fail_on)))
    from collectors.slabstore import resolve_store_path
    from detectors.leaks.decision import Thresholds

    last_hours = None
    if last is not None:
        from forensics.commands.slabwatch import parse_duration

        last_hours = parse_duration(last, "--last") / 3600.0
        if last_hours <= 0:
            raise UsageError("--last must be more than 0", hint="give e.g. --last 6h")
    thresholds = Thresholds()
    if min_rate is not None:
        if min_rate <= 0:
            raise UsageError(f"--min-rate {min_rate:g} must be more than 0", hint="give KB per hour, e.g. 256")
        thresholds = dataclasses.replace(thresholds, min_rate=min_rate * 1024)
    result = analyse_store(resolve_store_path(store), run, last_hours, thresholds, plots)
    deliver(render(result, fmt, output), output)
    raise typer.Exit(int(exit_status(result.incident, fail_on)))


def register(app: typer.Typer) -> None:
    """Add the command to the CLI."""
    app.command("leaks", epilog=EXAMPLE, help=f"{leaks.__doc__}")(leaks)
