"""``kforensic trace``: scheduling and latency forensics from ftrace, trace-cmd and perf traces."""

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
    number_option,
)
from forensics.commands.shared import distinct_outputs, stdin_read_once
from forensics.delivery import deliver, exit_status, write_figures
from forensics.errors import UsageError
from forensics.pipelines.spans import KERNEL_CLOCKS, SpanOptions
from forensics.pipelines.trace import analyse_trace_file
from forensics.report.formats import OutputFormat, render
from forensics.report.trace import TraceRenderer
from forensics.types.sched import PREEMPTION_MODELS
from forensics.units import check_number

if TYPE_CHECKING:
    pass

EXAMPLE = """
Example:

  trace-cmd record -e sched -e irq -e workqueue -- ./app; trace-cmd report > t.txt

  kforensic trace t.txt --bucket-ms 10 --format json -o trace.json

  kforensic trace trace.dat --around 407.6531:100 --png timeline.png

  kforensic trace ~/lttng-traces/kf-20261202 --slow-ms 5 --gantt-png gantt.png
"""


def _interval(text: str, option: str) -> tuple[float, float]:
    """``T0:T1`` in trace seconds."""
    try:
        t0, t1 = (float(x) for x in text.split(":"))
    except ValueError:
        raise UsageError(
            f"{option} {text!r} is not T0:T1", hint=f"e.g. {option} 407.58:407.70 (trace seconds)"
        ) from None
    check_number(t0, option, "trace seconds", -math.inf)
    check_number(t1, option, "trace seconds", -math.inf)
    if t1 < t0:
        raise UsageError(f"{option} {text!r} ends before it starts", hint="give T0:T1 with T0 <= T1")
    return t0, t1


def _around(text: str) -> tuple[float, float]:
    """``TS[:MS]``: the MS milliseconds (default 100) before TS."""
    try:
        ts, _, span = text.partition(":")
        end, width = float(ts), float(span or 100.0)
    except ValueError:
        raise UsageError(f"--around {text!r} is not TIMESTAMP[:MS]", hint="e.g. --around 407.6531:100") from None
    check_number(end, "--around", "trace seconds", -math.inf)
    check_number(width, "--around", "milliseconds")
    return end - width / 1e3, end


def _window(window: str | None, around: str | None) -> tuple[float, float]:
    if window and around:
        raise UsageError("give --window or --around, not both", hint="--around TS:MS is the window TS-MS..TS")
    if window:
        return _interval(window, "--window")
    if around:
        return _around(around)
    return (-math.inf, math.inf)


def trace(
    trace_file: Annotated[
        str,
        typer.Argument(
            help="Trace text (plain, gzip, xz, zstd), trace.dat (needs trace-cmd), an LTTng directory, or - for stdin.",
            metavar="TRACE",
        ),
    ],
    bucket_ms: Annotated[
        float | None,
        number_option("--bucket-ms", "Per-bucket digest of this many ms per CPU.", "milliseconds", above=True),
    ] = None,
    window: Annotated[
        str | None,
        typer.Option(
            "--window",
            help="Only T0:T1 (trace seconds): state at T0 carried in, runs open at T1 end there.",
            metavar="T0:T1",
        ),
    ] = None,
    around: Annotated[
        str | None, typer.Option("--around", help="Only the MS ms (default 100) before TIMESTAMP.", metavar="TS[:MS]")
    ] = None,
    task: Annotated[
        str | None,
        typer.Option("--task", help="Only this task (comm or pid) in tables and findings.", metavar="NAME|PID"),
    ] = None,
    hog_ms: Annotated[float, number_option("--hog-ms", "A run longer than this is a hog.", "milliseconds")] = 5.0,
    latency_ms: Annotated[
        float, number_option("--latency-ms", "Report wakeup latency above this.", "milliseconds")
    ] = 2.0,
    irq_ms: Annotated[float, number_option("--irq-ms", "Report IRQ handlers longer than this.", "milliseconds")] = 0.5,
    softirq_ms: Annotated[
        float, number_option("--softirq-ms", "Report softirq raise-to-entry/runs above this.", "milliseconds")
    ] = 2.0,
    dstate_ms: Annotated[
        float, number_option("--dstate-ms", "Report tasks with more D-state time than this.", "milliseconds")
    ] = 0.5,
    top: Annotated[int, typer.Option("--top", help="Rows per table (tasks, work items).", min=1)] = 15,
    png: Annotated[
        Path | None, typer.Option("--png", help="Write a per-CPU timeline PNG here.", metavar="FILE")
    ] = None,
    save_text: Annotated[
        Path | None,
        typer.Option("--save-text", help="Save the analysed text here (0600); findings cite it.", metavar="FILE"),
    ] = None,
    span_patterns: Annotated[
        list[str] | None,
        typer.Option(
            "--span", help="Span edges START..END (wildcards, {id}); repeatable.", metavar="[NAME=]START..END"
        ),
    ] = None,
    span_sources: Annotated[
        list[str] | None,
        typer.Option("--spans", help="More span sources: LTTng UST dir, CSV/JSONL; repeatable.", metavar="SOURCE"),
    ] = None,
    slow_ms: Annotated[
        float | None, number_option("--slow-ms", "Explain every span longer than this.", "milliseconds")
    ] = None,
    slowest: Annotated[int, typer.Option("--slowest", help="Else explain the N slowest per span name.", min=1)] = 3,
    kernel_clock: Annotated[
        str, typer.Option("--kernel-clock", help="The ftrace trace_clock of TRACE (mono joins with LTTng UST).")
    ] = "local",
    preempt: Annotated[
        str | None,
        typer.Option(
            "--preempt",
            help="The traced kernel's preemption model (none, voluntary, full, lazy, rt; dmesg says "
            "'Dynamic Preempt: none'): without kernel preemption an RT task waits for the next scheduling point.",
            metavar="MODEL",
        ),
    ] = None,
    span_png: Annotated[
        Path | None, typer.Option("--span-png", help="Write the span latency histogram PNG here.", metavar="FILE")
    ] = None,
    gantt_png: Annotated[
        Path | None,
        typer.Option("--gantt-png", help="Write the thread-state Gantt PNG of the slowest spans.", metavar="FILE"),
    ] = None,
    fmt: FormatOption = OutputFormat.TEXT,
    output: OutputOption = None,
    fail_on: FailOnOption = None,
    debug: DebugOption = False,
    force: ForceOption = False,
) -> None:
    """Scheduling and latency forensics from ftrace, trace-cmd, perf and LTTng (CTF) traces, and request spans."""
    from forensics.types.sched import Thresholds

    thresholds = Thresholds(hog_ms / 1e3, latency_ms / 1e3, irq_ms / 1e3, softirq_ms / 1e3, dstate_ms / 1e3)
    if kernel_clock not in KERNEL_CLOCKS:
        raise UsageError(
            f"--kernel-clock {kernel_clock!r} is not an ftrace clock", hint=f"one of {', '.join(KERNEL_CLOCKS)}"
        )
    if preempt is not None and preempt not in PREEMPTION_MODELS:
        raise UsageError(
            f"--preempt {preempt!r} is not a preemption model", hint=f"one of {', '.join(PREEMPTION_MODELS)}"
        )
    stdin_read_once(("TRACE", [trace_file]), ("--spans", span_sources))
    distinct_outputs(
        ("-o", output), ("--png", png), ("--save-text", save_text), ("--span-png", span_png), ("--gantt-png", gantt_png)
    )
    span_opts = SpanOptions(
        tuple(span_patterns or ()), tuple(span_sources or ()), slow_ms, slowest, kernel_clock, span_png, gantt_png
    )
    result = analyse_trace_file(
        trace_file,
        thresholds=thresholds,
        span=_window(window, around),
        bucket=bucket_ms / 1e3 if bucket_ms else None,
        task=task,
        png=png,
        save_text=save_text,
        span_opts=span_opts,
        preemption=preempt or "",
    )
    write_figures(result.figures)
    deliver(render(TraceRenderer(top, task is not None), result, fmt, output), output)
    raise typer.Exit(int(exit_status(result.incident, fail_on)))


def register(app: typer.Typer) -> None:
    """Add the command to the CLI."""
    app.command("trace", epilog=EXAMPLE, help=f"{trace.__doc__}")(trace)
