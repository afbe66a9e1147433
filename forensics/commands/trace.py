"""``kforensic trace``: scheduling and latency forensics from ftrace, trace-cmd and perf traces.

Its declaration for typer; the body is :func:`forensics.commands.trace_run.run_trace`, which ``forensics.cli``
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
    number_option,
)
from forensics.commands.trace_run import run_trace
from forensics.report.formats import OutputFormat

EXAMPLE = """
Example:

  trace-cmd record -e sched -e irq -e workqueue -- ./app; trace-cmd report > t.txt

  kforensic trace t.txt --bucket-ms 10 --format json -o trace.json

  kforensic trace trace.dat --around 407.6531:100 --png timeline.png

  kforensic trace ~/lttng-traces/kf-20261202 --slow-ms 5 --gantt-png gantt.png
"""


def trace(
    trace_file: Annotated[
        str,
        typer.Argument(
            help="Trace text (plain, gzip, xz, zstd, bzip2), trace.dat (needs trace-cmd), an LTTng directory,"
            " or - for stdin.",
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
    kernel_release: Annotated[
        str | None,
        typer.Option(
            "--kernel-release",
            help="The traced kernel's release (uname -r) where the trace does not name it (a text trace): from 6.6 "
            "a CFS task's wait is judged by EEVDF's slices, before by CFS's period; unset, CFS's is assumed and said.",
            metavar="RELEASE",
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
    raise typer.Exit(
        run_trace(
            trace_file=trace_file,
            bucket_ms=bucket_ms,
            window=window,
            around=around,
            task=task,
            hog_ms=hog_ms,
            latency_ms=latency_ms,
            irq_ms=irq_ms,
            softirq_ms=softirq_ms,
            dstate_ms=dstate_ms,
            top=top,
            png=png,
            save_text=save_text,
            span_patterns=span_patterns,
            span_sources=span_sources,
            slow_ms=slow_ms,
            slowest=slowest,
            kernel_clock=kernel_clock,
            preempt=preempt,
            kernel_release=kernel_release,
            span_png=span_png,
            gantt_png=gantt_png,
            fmt=fmt,
            output=output,
            fail_on=fail_on,
            debug=debug,
            force=force,
        )
    )


def register(app: typer.Typer) -> None:
    """Add the command to the CLI."""
    app.command("trace", epilog=EXAMPLE, help=f"{trace.__doc__}")(trace)
