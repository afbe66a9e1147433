"""``kforensic trace``'s body and its table of options, without typer.

:func:`run_trace` is what the command typer declares (:mod:`forensics.commands.trace`) runs, and what
:func:`forensics.cli.main` runs itself, with the values :data:`LINE` parses, when a command line is made only of
the options and arguments the table declares (:mod:`forensics.commandline`): importing typer and click and
building the command was ~17-25 ms of CPU of every run (issue #28).  The analysis' modules are imported by the
body, not here.
"""

import math
from pathlib import Path

from forensics.commandline import Argument, CommandLine, Option, integer, path, real, text
from forensics.commands.shared import (
    DEBUG,
    FAIL_ON,
    FORCE,
    FORMAT,
    OUTPUT,
    distinct_outputs,
    number_check,
    stdin_read_once,
)
from forensics.errors import UsageError
from forensics.model import Severity
from forensics.report.formats import OutputFormat
from forensics.units import check_number


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


def _named_inputs(trace_file: str, span_sources: list[str]) -> list[Path]:
    """The files the run will read, as their readers register them (forensics.output.register_input): the trace (a
    CTF session's every file, as collectors.ctf.reader.Session registers them), then the span files.  An output that
    is one of them is refused before the analysis (it was refused when written, after the whole analysis, ~0.25 s of
    CPU for a small LTTng session).  A directory that holds no CTF trace is left to the reading to say so."""
    named = []
    if trace_file not in ("-", ""):
        if Path(trace_file).is_dir():
            from collectors.ctf.reader import find_trace_dirs
            from forensics.errors import InputError

            try:
                dirs = find_trace_dirs(Path(trace_file))
            except InputError:
                dirs = []
            named += [f for tdir in dirs for f in tdir.rglob("*") if f.is_file()]
        else:
            named.append(Path(trace_file))
    return named + [Path(s) for s in span_sources if s not in ("-", "")]


def run_trace(
    trace_file: str,
    bucket_ms: float | None,
    window: str | None,
    around: str | None,
    task: str | None,
    hog_ms: float,
    latency_ms: float,
    irq_ms: float,
    softirq_ms: float,
    dstate_ms: float,
    top: int,
    png: Path | None,
    save_text: Path | None,
    span_patterns: list[str] | None,
    span_sources: list[str] | None,
    slow_ms: float | None,
    slowest: int,
    kernel_clock: str,
    preempt: str | None,
    kernel_release: str | None,
    span_png: Path | None,
    gantt_png: Path | None,
    fmt: OutputFormat,
    output: Path | None,
    fail_on: Severity | None,
    debug: bool,
    force: bool,
) -> int:
    """Analyse the trace (and spans), deliver the result; the exit status."""
    from forensics.delivery import deliver, exit_status, write_figures
    from forensics.pipelines.spans import KERNEL_CLOCKS, SpanOptions
    from forensics.pipelines.trace import analyse_trace_file
    from forensics.report.formats import render
    from forensics.report.trace import TraceRenderer
    from forensics.types.sched import PREEMPTION_MODELS, Thresholds

    thresholds = Thresholds(hog_ms / 1e3, latency_ms / 1e3, irq_ms / 1e3, softirq_ms / 1e3, dstate_ms / 1e3)
    if kernel_clock not in KERNEL_CLOCKS:
        raise UsageError(
            f"--kernel-clock {kernel_clock!r} is not an ftrace clock", hint=f"one of {', '.join(KERNEL_CLOCKS)}"
        )
    if preempt is not None and preempt not in PREEMPTION_MODELS:
        raise UsageError(
            f"--preempt {preempt!r} is not a preemption model", hint=f"one of {', '.join(PREEMPTION_MODELS)}"
        )
    if kernel_release:
        from detectors.sched.harm import scheduler_of

        if not scheduler_of(kernel_release):  # unread, the trace would be judged as if no release were given
            raise UsageError(
                f"--kernel-release {kernel_release!r} is not a kernel release",
                hint="give the traced kernel's `uname -r`, e.g. 6.1.0-18-amd64",
            )
    stdin_read_once(("TRACE", [trace_file]), ("--spans", span_sources))
    distinct_outputs(
        ("-o", output), ("--png", png), ("--save-text", save_text), ("--span-png", span_png), ("--gantt-png", gantt_png)
    )
    from forensics.output import check_outputs_not_named_inputs

    # (--save-text of a CTF trace: the analysis says it is for text traces, first)
    ctf = Path(trace_file).is_dir() or Path(trace_file).name == "metadata"
    outputs = (None if ctf else save_text, png, span_png, gantt_png, output)  # in the order they are written
    check_outputs_not_named_inputs(outputs, _named_inputs(trace_file, span_sources or []))
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
        kernel_release=kernel_release or "",
    )
    write_figures(result.figures)
    deliver(render(TraceRenderer(top, task is not None), result, fmt, output), output)
    return int(exit_status(result.incident, fail_on))


#: The options and arguments of :func:`forensics.commands.trace.trace`, as typer declares them (a test compares).
LINE = CommandLine(
    "trace",
    [
        Option(("--bucket-ms",), "bucket_ms", real, callback=number_check("--bucket-ms", "milliseconds", above=True)),
        Option(("--window",), "window", text),
        Option(("--around",), "around", text),
        Option(("--task",), "task", text),
        Option(("--hog-ms",), "hog_ms", real, 5.0, callback=number_check("--hog-ms", "milliseconds")),
        Option(("--latency-ms",), "latency_ms", real, 2.0, callback=number_check("--latency-ms", "milliseconds")),
        Option(("--irq-ms",), "irq_ms", real, 0.5, callback=number_check("--irq-ms", "milliseconds")),
        Option(("--softirq-ms",), "softirq_ms", real, 2.0, callback=number_check("--softirq-ms", "milliseconds")),
        Option(("--dstate-ms",), "dstate_ms", real, 0.5, callback=number_check("--dstate-ms", "milliseconds")),
        Option(("--top",), "top", integer(1), 15),
        Option(("--png",), "png", path),
        Option(("--save-text",), "save_text", path),
        Option(("--span",), "span_patterns", text, multiple=True),
        Option(("--spans",), "span_sources", text, multiple=True),
        Option(("--slow-ms",), "slow_ms", real, callback=number_check("--slow-ms", "milliseconds")),
        Option(("--slowest",), "slowest", integer(1), 3),
        Option(("--kernel-clock",), "kernel_clock", text, "local"),
        Option(("--preempt",), "preempt", text),
        Option(("--kernel-release",), "kernel_release", text),
        Option(("--span-png",), "span_png", path),
        Option(("--gantt-png",), "gantt_png", path),
        FORMAT,
        OUTPUT,
        FAIL_ON,
        DEBUG,
        FORCE,
    ],
    [Argument("trace_file")],
    run_trace,
)
