"""``kforensic report``: merge findings files into one incident report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from forensics import __version__
from forensics.commands.common import (
    DebugOption,
    FailOnOption,
    FormatOption,
    OutputOption,
    deliver,
    exit_status,
    render_for,
)
from forensics.errors import InputError, UsageError
from forensics.model import Incident
from forensics.report import OutputFormat

EXAMPLE = """
Example:

  kforensic dmesg --format json -o a.json /var/log/kern.log

  kforensic report --from a.json b.json -o incident.md
"""


def load_findings_file(path: Path) -> Incident:
    """Read a findings file written by any kforensic command with ``--format json``."""
    from collectors.inputs import open_input
    from forensics.serialize import incident_from_dict

    with open_input(str(path)) as tracked:
        data = b"".join(tracked.read_chunks())
        record = tracked.record()
    try:
        doc = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(
            f"{path}: not a JSON document ({exc})", hint="give files written by kforensic ... --format json"
        ) from None
    incident = incident_from_dict(doc, str(path))
    # The findings file itself is an input of the merged report.
    return Incident(
        host=incident.host,
        kernel_release=incident.kernel_release,
        window=incident.window,
        sources=(*incident.sources, record),
        findings=incident.findings,
        tool_version=incident.tool_version,
    )


def report(
    from_files: Annotated[
        list[Path] | None,
        typer.Option("--from", help="Findings files (JSON from any kforensic command).", metavar="FILE..."),
    ] = None,
    extra: Annotated[list[Path] | None, typer.Argument(hidden=True, metavar="[FILE]...")] = None,
    fmt: FormatOption = OutputFormat.MD,
    output: OutputOption = None,
    fail_on: FailOnOption = None,
    debug: DebugOption = False,
) -> None:
    """Merge findings from other commands into one incident report (deduplicated by finding id)."""
    files = [*(from_files or []), *(extra or [])]
    if not files:
        raise UsageError("report needs at least one findings file", hint="kforensic report --from a.json b.json")
    incidents = [load_findings_file(p) for p in files]
    merged = Incident.merge(incidents, tool_version=__version__)
    deliver(render_for(merged, fmt, output), output)
    raise typer.Exit(int(exit_status(merged, fail_on)))


def register(app: typer.Typer) -> None:
    """Add the command to the CLI."""
    app.command("report", epilog=EXAMPLE, help=f"{report.__doc__}")(report)
