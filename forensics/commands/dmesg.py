"""``kforensic dmesg``: find, classify and title every kernel report in kernel logs."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
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
    render_for,
)
from forensics.errors import UsageError
from forensics.model import BootTime, Incident, NotAvailable, SourceRecord, Timestamp, TimeWindow
from forensics.report import OutputFormat

if TYPE_CHECKING:
    from detectors.dmesg.findings import ReportGroup, ReportGrouper

SCHEMA = "kforensic.dmesg/1"

EXAMPLE = """
Example:

  kforensic dmesg /var/log/kern.log vmcore-dmesg.txt

  journalctl -k -b -1 | kforensic dmesg --format json -o dmesg.json

  sudo kforensic dmesg --live --fail-on high

  kforensic dmesg --signatures /archive/kern-logs/ --format json -o signatures.json
"""


class SourceResult:
    """What one input gave: its record, groups of reports, the reports kept and its number of lines."""

    def __init__(self, name: str, record: SourceRecord, grouper: ReportGrouper, lines: int) -> None:
        self.name = name
        self.record = record
        self.grouper = grouper
        self.groups: list[ReportGroup] = grouper.groups()
        # Only the occurrences the groups keep (first, an even sample, last): memory flat in log size.
        kept = sorted((r for g in self.groups for r in g.kept), key=lambda r: r.start_line)
        self.reports = [r for r in kept if not r.is_event]
        self.events = [r for r in kept if r.is_event]
        self.lines = lines


def _scan(chunks: Iterable[bytes]) -> tuple[ReportGrouper, int]:
    """Every report and event of one input, grouped as they come, and its number of lines."""
    from collectors.trace_events import gc_paused
    from detectors.dmesg.findings import ReportGrouper
    from detectors.dmesg.scanner import LogScanner

    scanner = LogScanner()
    grouper = ReportGrouper()
    for chunk in chunks:
        # A chunk of a report-dense log makes ~100 short-lived tuples per report (lines, frames), none
        # in a cycle: the cyclic collector, started every 700 of them, took ~15% of the CPU time on the
        # benchmark's dense log.  It runs between chunks (read from the input), so memory stays bounded.
        with gc_paused():
            for report in scanner.feed(chunk):
                grouper.add(report)
    with gc_paused():
        for report in scanner.close():
            grouper.add(report)
    return grouper, scanner.lines_seen


def triage_file(name: str) -> SourceResult:
    """Triage one log file (``-`` for standard input)."""
    from collectors.kernel_log import log_chunks, open_log

    with open_log(name) as tracked:
        grouper, lines = _scan(log_chunks(tracked))
        record = tracked.record()
    return SourceResult(tracked.source, record, grouper, lines)


def triage_live() -> SourceResult:
    """Triage what the kernel ring buffer holds now."""
    from collectors.kernel_log import KMSG_NAME, KmsgReader

    reader = KmsgReader()
    grouper, lines = _scan(reader.chunks())
    return SourceResult(KMSG_NAME, reader.record(), grouper, lines)


def build_incident(results: list[SourceResult]) -> Incident:
    """All findings of all inputs as one incident."""
    from detectors.dmesg.findings import group_finding

    findings = [group_finding(r.name, g) for r in results for g in r.groups]
    releases = {x for r in results for x in r.grouper.releases}
    firsts = [r.grouper.first_time for r in results if r.grouper.first_time is not None]
    lasts = [r.grouper.last_time for r in results if r.grouper.last_time is not None]
    window: TimeWindow | NotAvailable = (
        TimeWindow(Timestamp(min(firsts)), Timestamp(max(lasts)))
        if firsts
        else NotAvailable("no report has a timestamp")
    )
    release: str | NotAvailable = (
        releases.pop()
        if len(releases) == 1
        else NotAvailable("the reports disagree on the kernel release" if releases else "no report names the release")
    )
    return Incident(
        host=NotAvailable("kernel logs do not name the host reliably"),
        kernel_release=release,
        window=window,
        sources=tuple(r.record for r in results),
        findings=tuple(findings),
        tool_version=__version__,
        boot_time=_boot_time([t for r in results for t in r.grouper.boot_times]),
    )


def _boot_time(times: list[float]) -> BootTime | NotAvailable:
    """When the kernel booted, from log lines that carry both a dated wall time and a printk time."""
    estimates = sorted(times)
    if not estimates:
        return NotAvailable("no log line carries both a dated wall-clock time and a printk time")
    if estimates[-1] - estimates[0] > 60:
        return NotAvailable("the logs' wall and printk times disagree by more than a minute (several boots?)")
    # Syslog times have whole seconds at best, and printk time drifts from the wall clock.
    spread = estimates[-1] - estimates[0]
    return BootTime(estimates[len(estimates) // 2], 1.0 + spread, "kernel log: wall time minus the printk time")


def to_document(results: list[SourceResult], incident: Incident) -> dict[str, Any]:
    """The ``kforensic.dmesg/1`` JSON document."""
    from detectors.dmesg.findings import group_to_dict, report_to_dict
    from forensics.serialize import incident_to_dict

    return {
        "schema": SCHEMA,
        "tool_version": __version__,
        "sources": [
            {
                "path": r.name,
                "lines": r.lines,
                "reports": [report_to_dict(x) for x in r.reports],
                "events": [report_to_dict(x) for x in r.events],
                "groups": [group_to_dict(g) for g in r.groups],
            }
            for r in results
        ],
        "incident": incident_to_dict(incident),
    }


def _time(value: object) -> str:
    return f"{value:.6f}" if isinstance(value, float) else "-"


def _rows(results: list[SourceResult]) -> list[list[str]]:
    rows = []
    for r in results:
        for g in r.groups:
            first = g.first
            rows.append(
                [
                    r.name,
                    f"{first.start_line}-{first.end_line}",
                    _time(first.start_time),
                    first.severity.value,
                    first.title + (" [corrupted]" if first.corrupted else ""),
                    str(g.count),
                ]
            )
    return rows


_HEADER = ["source", "lines", "time", "severity", "title", "count"]


def render_table(results: list[SourceResult], fmt: OutputFormat) -> str:
    """The reports of every input as a terminal or markdown table."""
    rows = _rows(results)
    if fmt is OutputFormat.MD:
        out = ["## Kernel reports", "", "| " + " | ".join(_HEADER) + " |", "|" + "---|" * len(_HEADER)]
        out += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
        if not rows:
            out.append("| (none) |" + " |" * (len(_HEADER) - 1))
        return "\n".join(out) + "\n\n"
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(_HEADER)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(_HEADER, widths, strict=True))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    if not rows:
        lines.append("no kernel reports found")
    return "\n".join(lines) + "\n\n"


def dmesg(
    logs: Annotated[
        list[str] | None,
        typer.Argument(
            help="Kernel logs (plain, gzip, xz or zstd): dmesg output, kern.log, journalctl -k, vmcore-dmesg.txt,"
            " '-' for stdin."
        ),
    ] = None,
    live: Annotated[bool, typer.Option("--live", help="Read the live kernel ring buffer (/dev/kmsg).")] = False,
    signatures: Annotated[
        bool,
        typer.Option(
            "--signatures", help="LOG... are many hosts' logs (dirs, globs, URLs): group by signature on Dask."
        ),
    ] = False,
    scheduler: Annotated[
        str | None,
        typer.Option("--scheduler", help="--signatures: run on this Dask scheduler.", metavar="tcp://HOST:8786"),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option("--workers", help="--signatures: local worker processes (default: one per core; 0: serial)."),
    ] = None,
    fmt: FormatOption = OutputFormat.TEXT,
    output: OutputOption = None,
    fail_on: FailOnOption = None,
    debug: DebugOption = False,
    force: ForceOption = False,
) -> None:
    """Find every kernel report (oops, BUG, WARNING, KASAN, lockdep, stalls, panics, OOM) in kernel logs."""
    if signatures or scheduler is not None or workers is not None:
        from forensics.fleet.signatures import run_signatures

        if not signatures or live or not logs:
            raise UsageError(
                "--scheduler and --workers go with --signatures, which needs log directories, files or globs",
                hint="kforensic dmesg --signatures /archive/kern-logs/",
            )
        fleet = run_signatures(logs, scheduler, workers, fmt.value, output)
        raise typer.Exit(int(exit_status(fleet, fail_on)))
    names = list(logs or [])
    if not names and not live:
        if sys.stdin.isatty():
            raise UsageError(
                "dmesg needs a log file, '-' for stdin, or --live", hint="kforensic dmesg /var/log/kern.log"
            )
        names = ["-"]
    results = [triage_file(n) for n in names]
    if live:
        results.append(triage_live())
    incident = build_incident(results)
    if fmt is OutputFormat.JSON:
        text = json.dumps(to_document(results, incident), indent=1, ensure_ascii=False) + "\n"
    else:
        text = render_table(results, fmt) + render_for(incident, fmt, output)
    deliver(text, output)
    raise typer.Exit(int(exit_status(incident, fail_on)))


def register(app: typer.Typer) -> None:
    """Add the command to the CLI."""
    app.command("dmesg", epilog=EXAMPLE, help=f"{dmesg.__doc__}")(dmesg)
