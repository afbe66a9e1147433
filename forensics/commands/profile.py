"""``kforensic profile``: hotspots of a CPU profile, what they mean, folded stacks and flame graphs.

Its declaration for typer; the body is :func:`forensics.commands.profile_run.run_profile`, which ``forensics.cli``
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
from forensics.commands.profile_run import run_profile
from forensics.report.formats import OutputFormat

EXAMPLE = """
Example:

  perf record -g -F 999 -p PID -- sleep 30

  kforensic profile perf.data --svg flame.svg

  perf script | kforensic profile - --format json -o profile.json

  kforensic profile new.perf.txt --diff base.perf.txt --svg diff.svg
"""


def profile(
    ctx: typer.Context,
    source: Annotated[
        str,
        typer.Argument(
            help="perf.data, `perf script` output or folded stacks (may be gzip, xz, zstd or bzip2); '-' for stdin."
        ),
    ],
    window: Annotated[
        str | None,
        typer.Option("--window", help="Only samples with T0 <= time <= T1 (perf's seconds).", metavar="T0:T1"),
    ] = None,
    comm: Annotated[
        str | None, typer.Option("--comm", help="Only samples of this command name.", metavar="NAME")
    ] = None,
    pid: Annotated[
        int | None,
        typer.Option(
            "--pid",
            help="Only samples of this process id (-1: tasks that exited before perf read their comm).",
            metavar="PID",
        ),
    ] = None,
    tid: Annotated[int | None, typer.Option("--tid", help="Only samples of this thread id.", metavar="TID")] = None,
    event: Annotated[
        str | None,
        typer.Option(
            "--event",
            help="Which event to analyse when there are several (default: the first; a tracepoint only when no "
            "other event is sampled).",
            metavar="NAME",
        ),
    ] = None,
    kernel_only: Annotated[bool, typer.Option("--kernel-only", help="Keep only kernel frames.")] = False,
    user_only: Annotated[bool, typer.Option("--user-only", help="Keep only user-space frames.")] = False,
    svg: Annotated[
        Path | None, typer.Option("--svg", help="Write an interactive flame graph SVG.", metavar="FILE")
    ] = None,
    folded: Annotated[
        Path | None,
        typer.Option(
            "--folded",
            help="Write folded stacks (stackcollapse-perf.pl format); '-': to stdout, in place of the report"
            " (which -o FILE still writes), and alone they skip the analysis.",
            metavar="FILE",
        ),
    ] = None,
    diff: Annotated[
        str | None,
        typer.Option(
            "--diff", help="A base profile: add a difference table and make --svg differential.", metavar="BASE"
        ),
    ] = None,
    top: Annotated[int, typer.Option("--top", help="Rows per table.", min=1, metavar="N")] = 15,
    digest_bytes: Annotated[
        int,
        typer.Option(
            "--digest-bytes", help="Size bound of the JSON digest (--format json).", min=1024, metavar="BYTES"
        ),
    ] = 8192,
    fmt: FormatOption = OutputFormat.TEXT,
    output: OutputOption = None,
    fail_on: FailOnOption = None,
    debug: DebugOption = False,
    force: ForceOption = False,
) -> None:
    """Find the hotspots of a CPU profile (perf), say what they mean, and draw flame graphs."""
    given = ctx.get_parameter_source("fmt")  # click's ParameterSource: COMMANDLINE when --format was typed
    raise typer.Exit(
        run_profile(
            source=source,
            window=window,
            comm=comm,
            pid=pid,
            tid=tid,
            event=event,
            kernel_only=kernel_only,
            user_only=user_only,
            svg=svg,
            folded=folded,
            diff=diff,
            top=top,
            digest_bytes=digest_bytes,
            fmt=fmt,
            output=output,
            fail_on=fail_on,
            debug=debug,
            force=force,
            format_given=given is not None and given.name == "COMMANDLINE",
        )
    )


def register(app: typer.Typer) -> None:
    """Add the command to the CLI."""
    app.command("profile", epilog=EXAMPLE, help=f"{profile.__doc__}")(profile)
