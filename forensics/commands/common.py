"""Options and output handling shared by every command."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from forensics.errors import ExitCode
from forensics.model import Incident, Severity
from forensics.report import OutputFormat, render_incident

FormatOption = Annotated[
    OutputFormat,
    typer.Option("--format", "-f", help="Output format: text (terminal), md (markdown) or json."),
]
OutputOption = Annotated[
    Path | None,
    typer.Option("--output", "-o", help="Write to FILE (atomically, mode 0600) instead of stdout.", metavar="FILE"),
]
FailOnOption = Annotated[
    Severity | None,
    typer.Option(
        "--fail-on",
        help="Exit 1 when a finding is at or above this severity (info, low, medium, high, critical).",
        case_sensitive=False,
    ),
]
DebugOption = Annotated[
    bool,
    typer.Option("--debug", help="Show tracebacks and internal details on errors."),
]


def deliver(text: str, output: Path | None) -> None:
    """Write the rendered result to ``output`` atomically, or to stdout."""
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    from forensics.output import write_atomic

    write_atomic(output, text)


def render_for(incident: Incident, fmt: OutputFormat, output: Path | None) -> str:
    """Render for the destination: colour only for a terminal on stdout."""
    color = output is None and fmt is OutputFormat.TEXT and sys.stdout.isatty()
    return render_incident(incident, fmt, color=color)


def exit_status(incident: Incident, fail_on: Severity | None) -> ExitCode:
    """0, or 1 when ``--fail-on`` was given and a finding reaches it."""
    worst = incident.worst_severity()
    if fail_on is not None and worst is not None and worst >= fail_on:
        return ExitCode.FINDINGS
    return ExitCode.OK
