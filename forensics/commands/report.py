"""``kforensic report``: every analysis the inputs allow, merged into one incident report.

Its declaration for typer; the body is :func:`forensics.commands.report_run.run_report`, which ``forensics.cli``
also runs without typer from the command's table of options (start-up time; issue #28).
"""

from pathlib import Path
from typing import Annotated

import typer

from forensics.commands.common import (
    DebugOption,
    FailOnOption,
    ForceOption,
    FormatOption,
    OutputOption,
)
from forensics.commands.report_run import run_report
from forensics.report.formats import OutputFormat

EXAMPLE = """
Example:

  kforensic report --vmcore /var/crash/202611300712/ --vmlinux vmlinux --store slab.db -o incident.md

  kforensic report --from a.json b.json -o incident.md
"""


def report(
    from_files: Annotated[
        list[Path] | None,
        typer.Option("--from", help="Findings files (JSON from any kforensic command).", metavar="FILE..."),
    ] = None,
    extra: Annotated[list[Path] | None, typer.Argument(hidden=True, metavar="[FILE]...")] = None,
    vmcore: Annotated[
        Path | None, typer.Option("--vmcore", help="A crash dump or its /var/crash/<stamp>/ directory.", metavar="PATH")
    ] = None,
    vmlinux: Annotated[
        Path | None, typer.Option("--vmlinux", help="The crashed kernel's vmlinux with debug info.", metavar="FILE")
    ] = None,
    module_debug: Annotated[
        list[Path] | None, typer.Option("--module-debug", help="A module with debug info (repeatable).", metavar="FILE")
    ] = None,
    debug_dir: Annotated[
        list[Path] | None, typer.Option("--debug-dir", help="A /usr/lib/debug style tree (repeatable).", metavar="DIR")
    ] = None,
    source_dir: Annotated[
        list[Path] | None,
        typer.Option("--source-dir", help="A kernel or module source tree for the dump (repeatable).", metavar="DIR"),
    ] = None,
    dmesg: Annotated[
        list[Path] | None, typer.Option("--dmesg", help="A kernel log file (repeatable).", metavar="FILE")
    ] = None,
    store: Annotated[
        Path | None,
        typer.Option(
            "--store",
            help="A slab-watch store to analyse for leaks (file, or directory holding slab-watch.sqlite).",
            metavar="PATH",
        ),
    ] = None,
    trace: Annotated[
        list[Path] | None,
        typer.Option("--trace", help="An ftrace/trace-cmd/perf trace or LTTng directory (repeatable).", metavar="PATH"),
    ] = None,
    profile: Annotated[
        list[Path] | None,
        typer.Option(
            "--profile",
            help="A CPU profile: perf.data, perf script text or folded stacks (repeatable).",
            metavar="FILE",
        ),
    ] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Also write the report as JSON (kforensic.report/1).", metavar="FILE")
    ] = None,
    html_out: Annotated[
        Path | None, typer.Option("--html", help="Also write a self-contained HTML page.", metavar="FILE")
    ] = None,
    digest: Annotated[
        Path | None, typer.Option("--digest", help="Also write a size-bounded JSON digest.", metavar="FILE")
    ] = None,
    digest_bytes: Annotated[
        int, typer.Option("--digest-bytes", help="Size bound of the digest.", min=512, metavar="BYTES")
    ] = 8192,
    fmt: FormatOption = OutputFormat.MD,
    output: OutputOption = None,
    fail_on: FailOnOption = None,
    debug: DebugOption = False,
    force: ForceOption = False,
) -> None:
    """Run every analysis the inputs allow and merge the findings into one incident report."""
    raise typer.Exit(
        run_report(
            from_files=from_files,
            extra=extra,
            vmcore=vmcore,
            vmlinux=vmlinux,
            module_debug=module_debug,
            debug_dir=debug_dir,
            source_dir=source_dir,
            dmesg=dmesg,
            store=store,
            trace=trace,
            profile=profile,
            json_out=json_out,
            html_out=html_out,
            digest=digest,
            digest_bytes=digest_bytes,
            fmt=fmt,
            output=output,
            fail_on=fail_on,
            debug=debug,
            force=force,
        )
    )


def register(app: typer.Typer) -> None:
    """Add the command to the CLI."""
    app.command("report", epilog=EXAMPLE, help=f"{report.__doc__}")(report)
