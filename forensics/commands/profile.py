"""``kforensic profile``: hotspots of a CPU profile, what they mean, folded stacks and flame graphs."""

import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from forensics.commands.common import (
    DebugOption,
    FailOnOption,
    ForceOption,
    FormatOption,
    OutputOption,
    distinct_outputs,
)
from forensics.errors import UsageError
from forensics.report.formats import OutputFormat
from forensics.types.profile_result import ProfileFilters

if TYPE_CHECKING:
    pass


EXAMPLE = """
Example:

  perf record -g -F 999 -p PID -- sleep 30

  kforensic profile perf.data --svg flame.svg

  perf script | kforensic profile - --format json -o profile.json

  kforensic profile new.perf.txt --diff base.perf.txt --svg diff.svg
"""


def parse_window(text: str | None) -> tuple[float, float] | None:
    """``T0:T1`` (seconds on perf's clock; either side may be empty) as a closed interval."""
    if text is None:
        return None
    left, sep, right = text.partition(":")
    try:
        if not sep:
            raise ValueError
        t0 = float(left) if left.strip() else float("-inf")
        t1 = float(right) if right.strip() else float("inf")
    except ValueError:
        raise UsageError(
            f"--window {text!r} is not T0:T1", hint="give seconds as perf script prints them, e.g. --window 120.5:130"
        ) from None
    if any(part.strip() and not math.isfinite(float(part)) for part in (left, right)):
        raise UsageError(
            f"--window {text!r}: nan and inf are not times", hint="give finite seconds, or leave a side empty (120.5:)"
        )
    if t1 < t0:
        raise UsageError(f"--window {text!r} ends before it starts", hint="give T0:T1 with T0 <= T1")
    return (t0, t1)


def profile(
    ctx: typer.Context,
    source: Annotated[
        str,
        typer.Argument(
            help="perf.data, `perf script` output or folded stacks (may be gzip, xz or zstd); '-' for stdin."
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
            "--event", help="Which event to analyse when there are several (default: the first).", metavar="NAME"
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
    from forensics.output import write_atomic

    if kernel_only and user_only:
        raise UsageError("--kernel-only and --user-only exclude each other", hint="give one of them")
    folded_out = folded is not None and str(folded) == "-"  # the folded stacks to stdout, not the report
    distinct_outputs(("-o", output), ("--folded", None if folded_out else folded), ("--svg", svg))
    given = ctx.get_parameter_source("fmt")  # click's ParameterSource: COMMANDLINE when --format was typed
    if folded_out and output is None and given is not None and given.name == "COMMANDLINE":
        raise UsageError(  # the report in that format would be dropped without a word
            f"--format {fmt.value} has nowhere to go: --folded - writes the folded stacks to stdout",
            hint="give -o FILE for the report, or --folded FILE",
        )
    filters = ProfileFilters(
        parse_window(window), comm, pid, tid, "kernel" if kernel_only else "user" if user_only else None, event
    )
    if folded_out and output is None and svg is None and diff is None and fail_on is None:
        # Only the folded stacks asked for (what stackcollapse-perf.pl gives): no tables, findings or report.
        from forensics.commands.profile_folded import folded_to_stdout

        folded_to_stdout(source, filters)
        return
    from forensics.delivery import deliver, exit_status
    from forensics.gcpause import gc_paused
    from forensics.pipelines.profile import analyse_profile
    from forensics.report.formats import render
    from forensics.report.profile import ProfileRenderer, render_flamegraph

    # The cyclic collector paused for the whole command, not only the reader: the tables, the flame
    # graph's tree and the texts make no cycles, and each full collection they set off walked every
    # object of the profile (about 0.1-0.2 s of CPU on a recording of 100k distinct stacks).
    with gc_paused():
        result = analyse_profile(source, filters)
        base = deltas = None
        if diff is not None:
            from detectors.profile.diff import diff_hotspots

            base = analyse_profile(diff, filters)
            deltas = diff_hotspots(base.hot, result.hot, top)
        if folded is not None:
            from detectors.profile.hotspots import folded_lines

            lines = "".join(line + "\n" for line in folded_lines(result.stacks, result.by_command))
            if folded_out:
                deliver(lines, None)
            else:
                write_atomic(folded, lines)
        if svg is not None:
            write_atomic(svg, render_flamegraph(result, base))
        if not folded_out or output is not None:  # stdout holds the folded stacks: the report only with -o FILE
            deliver(render(ProfileRenderer(top, deltas, digest_bytes), result, fmt, output), output)
    raise typer.Exit(int(exit_status(result.incident, fail_on)))


def register(app: typer.Typer) -> None:
    """Add the command to the CLI."""
    app.command("profile", epilog=EXAMPLE, help=f"{profile.__doc__}")(profile)
