"""``kforensic profile``'s body and its table of options, without typer.

:func:`run_profile` is what the command typer declares (:mod:`forensics.commands.profile`) runs, and what
:func:`forensics.cli.main` runs itself, with the values :data:`LINE` parses, when a command line is made only of
the options and arguments the table declares (:mod:`forensics.commandline`): importing typer and click and
building the command was ~19 ms of CPU of every run (~5% of one of ``--folded -`` on 50 MB; issue #28).
"""

import math
from pathlib import Path

from forensics.commandline import Argument, CommandLine, Option, integer, path, text
from forensics.commands.shared import DEBUG, FAIL_ON, FORCE, FORMAT, OUTPUT, distinct_outputs
from forensics.errors import UsageError
from forensics.model import Severity
from forensics.report.formats import OutputFormat
from forensics.types.profile_result import ProfileFilters


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


def run_profile(
    source: str,
    window: str | None,
    comm: str | None,
    pid: int | None,
    tid: int | None,
    event: str | None,
    kernel_only: bool,
    user_only: bool,
    svg: Path | None,
    folded: Path | None,
    diff: str | None,
    top: int,
    digest_bytes: int,
    fmt: OutputFormat,
    output: Path | None,
    fail_on: Severity | None,
    debug: bool,
    force: bool,
    format_given: bool,
) -> int:
    """Analyse the profile ``source`` and deliver what was asked (``format_given``: --format was typed); the exit
    status."""
    from forensics.output import write_atomic

    if kernel_only and user_only:
        raise UsageError("--kernel-only and --user-only exclude each other", hint="give one of them")
    folded_out = folded is not None and str(folded) == "-"  # the folded stacks to stdout, not the report
    distinct_outputs(("-o", output), ("--folded", None if folded_out else folded), ("--svg", svg))
    if folded_out and output is None and format_given:
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
        return 0
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
    return int(exit_status(result.incident, fail_on))


#: The options and arguments of :func:`forensics.commands.profile.profile`, as typer declares them (a test
#: compares).
LINE = CommandLine(
    "profile",
    [
        Option(("--window",), "window", text),
        Option(("--comm",), "comm", text),
        Option(("--pid",), "pid", integer()),
        Option(("--tid",), "tid", integer()),
        Option(("--event",), "event", text),
        Option(("--kernel-only",), "kernel_only", default=False),
        Option(("--user-only",), "user_only", default=False),
        Option(("--svg",), "svg", path),
        Option(("--folded",), "folded", path),
        Option(("--diff",), "diff", text),
        Option(("--top",), "top", integer(1), 15),
        Option(("--digest-bytes",), "digest_bytes", integer(1024), 8192),
        FORMAT,
        OUTPUT,
        FAIL_ON,
        DEBUG,
        FORCE,
    ],
    [Argument("source")],
    run_profile,
    given_as={"format_given": "fmt"},
)
