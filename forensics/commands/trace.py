"""``kforensic trace``: scheduling and latency forensics from ftrace, trace-cmd and perf traces."""

from __future__ import annotations

import contextlib
import json
import math
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from forensics import __version__
from forensics.commands.common import (
    DebugOption,
    FailOnOption,
    ForceOption,
    FormatOption,
    OutputOption,
    check_number,
    deliver,
    exit_status,
    number_option,
    render_for,
)
from forensics.errors import UsageError
from forensics.model import Clock, Incident, NotAvailable, Timestamp, TimeWindow
from forensics.report import OutputFormat
from forensics.trace_spans import KERNEL_CLOCKS, SpanOptions

if TYPE_CHECKING:
    from detectors.sched.model import ParseSummary, Span, Thresholds, TraceAnalysis
    from detectors.spans.model import SpanReport

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


CLOCK_MARK = " †"  # after a figure that spans a step where a CPU's clock went back


def _table_rows(a: TraceAnalysis, top: int) -> list[tuple[str, list[str], list[list[str]]]]:
    """The summary tables (title, header, rows) shared by the text and markdown renderers."""
    from detectors.sched.findings import fmt_ms

    def mark(span: Span | None) -> str:
        """A dagger on figures that span a step where a CPU's clock went back (see the header)."""
        return CLOCK_MARK if span is not None and a.clock.disputes_span(span) else ""

    def blocked(t: object, state: str) -> str:
        for s in getattr(t, "blocked", ()):
            if s.state == state:
                return fmt_ms(s.total)
        return "-"

    tasks = []
    for t in a.tasks[:top]:
        run = t.runs.worst
        wake = t.worst_wakeup
        tasks.append(
            [
                t.comm,
                str(t.pid),
                str(t.prio),
                fmt_ms(t.runtime) + mark(run),  # a total that holds a run across a clock step is marked too
                str(t.runs.n),
                f"{fmt_ms(run.duration)}{mark(run)} @{run.start:.6f} CPU{run.cpu}" if run else "-",
                str(t.hog_runs),
                (
                    f"{fmt_ms(wake.span.duration)}{mark(wake.span)} behind {wake.behind[0].comm}"
                    if wake.behind
                    else fmt_ms(wake.span.duration) + mark(wake.span)
                )
                if wake
                else "-",
                fmt_ms(t.preempt_wait.worst.duration) + mark(t.preempt_wait.worst) if t.preempt_wait.worst else "-",
                blocked(t, "S"),
                blocked(t, "D"),
                ", ".join(f"{p.comm}x{p.times}" for p in t.preempted_by[:2]) or "-",
            ]
        )
    stepped = {c for c, _lo, _hi in a.clock.disputed}  # CPUs whose totals hold intervals across a clock step
    cpus = [
        [
            f"CPU{c.cpu}",
            f"{c.first_ts:.6f}",
            f"{c.last_ts:.6f}",
            *(
                fmt_ms(v) + (CLOCK_MARK if c.cpu in stepped else "")
                for v in (c.busy, c.idle, c.irq_time, c.softirq_time)
            ),
            str(c.switches),
        ]
        for c in a.cpus
    ]
    irqs = [
        [
            str(i.irq) if i.irq >= 0 else f"vec {-i.irq}",
            i.name,
            str(i.durations.n),
            fmt_ms(i.durations.mean) + mark(i.durations.worst),
            fmt_ms(i.durations.worst.duration) + mark(i.durations.worst) if i.durations.worst else "-",
            f"{i.durations.worst.start:.6f}" if i.durations.worst else "-",
        ]
        for i in a.irqs
    ]
    softirqs = [
        [
            s.name,
            str(s.durations.n),
            fmt_ms(s.durations.worst.duration) + mark(s.durations.worst) if s.durations.worst else "-",
            fmt_ms(s.raise_latency.mean),
            fmt_ms(s.raise_latency.worst.duration) + mark(s.raise_latency.worst) if s.raise_latency.worst else "-",
            s.worst_raise_wait.behind[0].comm if s.worst_raise_wait and s.worst_raise_wait.behind else "-",
        ]
        for s in a.softirqs
    ]
    works = [
        [
            w.function,
            str(w.durations.n),
            fmt_ms(w.durations.total),
            fmt_ms(w.durations.worst.duration) + mark(w.durations.worst) if w.durations.worst else "-",
        ]
        for w in a.works[:top]
    ]
    offs = [
        [
            o.what,
            str(o.source),
            ("-" if isinstance(o.source, NotAvailable) else str(o.intervals))
            if isinstance(o.intervals, NotAvailable)
            else str(o.intervals.n),
            fmt_ms(o.intervals.worst.duration)
            if not isinstance(o.intervals, NotAvailable) and o.intervals.worst
            else "-",
        ]
        for o in a.offtimes
    ]
    out = [
        (
            "Tasks (busiest first)",
            [
                "task",
                "pid",
                "prio",
                "runtime",
                "runs",
                "longest run",
                "hog runs",
                "worst wakeup latency",
                "worst preempt wait",
                "S time",
                "D time",
                "preempted by",
            ],
            tasks,
        ),
        ("CPUs", ["cpu", "first event", "last event", "busy", "idle", "irq", "softirq", "switches"], cpus),
        ("IRQ handlers", ["irq", "name", "count", "mean", "worst", "worst at"], irqs),
        (
            "Softirqs",
            ["vector", "runs", "longest", "raise->entry mean", "raise->entry worst", "ran meanwhile"],
            softirqs,
        ),
        ("Workqueue functions", ["function", "items", "total", "longest"], works),
        ("IRQs-off / preempt-off", ["what", "source", "intervals", "worst"], offs),
    ]
    if a.buckets:
        out.append(
            (
                f"Buckets of {fmt_ms(a.bucket_seconds or 0)} per CPU",
                ["start", "cpu", "top tasks", "irq", "softirq", "worst latency"],
                [
                    [
                        f"{b.start:.6f}",
                        str(b.cpu),
                        ", ".join(f"{t.comm} {fmt_ms(t.runtime)}" for t in b.top),
                        fmt_ms(b.irq_time),
                        fmt_ms(b.softirq_time),
                        f"{b.worst_latency_comm} {fmt_ms(b.worst_latency)}" if b.worst_latency is not None else "-",
                    ]
                    for b in a.buckets
                ],
            )
        )
    return out


def _header_lines(a: TraceAnalysis, parse: ParseSummary, source: str, notes: tuple[str, ...] = ()) -> list[str]:
    window = a.window
    lines = [
        f"trace {source}: {parse.lines} lines, {parse.events} events ({parse.used} analysed), layout {parse.layout}",
        f"window {window}" if isinstance(window, NotAvailable) else f"window {window[0]:.6f} .. {window[1]:.6f}",
        f"wakeup latency measured from: {a.latency_source}",
        f"skipped: {parse.malformed} malformed lines, {sum(n for _k, n in parse.unknown)} events of other kinds, "
        f"{a.coverage.lost_markers} lost-event markers ({a.coverage.lost_events} events lost)",
    ]
    if a.coverage.note:
        lines.append(f"coverage: {a.coverage.note}")
    if a.clock.back:
        lines.append(
            f"clock: {a.clock.back} of {a.clock.steps} steps between events of one CPU go back in time; figures "
            f"marked{CLOCK_MARK} span such a step and are not reliable (see the trace-clock finding)"
        )
    lines += [f"warning: {note}" for note in notes]
    return lines


def render_text(
    a: TraceAnalysis, parse: ParseSummary, source: str, top: int, color: bool, notes: tuple[str, ...] = ()
) -> str:
    """Terminal tables of the analysis."""
    import io

    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    buf = io.StringIO()
    console = Console(file=buf, width=160, color_system="standard" if color else None, highlight=False)
    for line in _header_lines(a, parse, source, notes):
        console.print(escape(line))
    for title, header, rows in _table_rows(a, top):
        if not rows:
            continue
        table = Table(title=title, title_justify="left")
        for h in header:
            table.add_column(h)
        for row in rows:
            table.add_row(*(escape(c) for c in row))
        console.print(table)
    return buf.getvalue()


def render_markdown(a: TraceAnalysis, parse: ParseSummary, source: str, top: int, notes: tuple[str, ...] = ()) -> str:
    """Markdown tables of the analysis."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    out = ["# kforensic trace", ""]
    out += [f"- {cell(line)}" for line in _header_lines(a, parse, source, notes)]
    for title, header, rows in _table_rows(a, top):
        if not rows:
            continue
        out += ["", f"## {title}", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        out += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(out) + "\n\n"


def _span_rows(report: SpanReport) -> tuple[list[str], list[list[str]], list[str]]:
    """The span statistics table and one line per slow span (shared by text and markdown)."""
    from detectors.spans.findings import explain

    def ms(x: float) -> str:
        return "-" if math.isnan(x) else f"{x * 1e3:.3f}"

    header = ["span", "count", "P50 ms", "P90 ms", "P99 ms", "P99.9 ms", "max ms", "unmatched start/end"]
    rows = [
        [
            s.name,
            str(s.count),
            ms(s.p50),
            ms(s.p90),
            ms(s.p99),
            ms(s.p999),
            ms(s.max),
            f"{s.unmatched_starts}/{s.unmatched_ends}",
        ]
        for s in report.stats
    ]
    lines = [explain(b) for b in report.slow] + [f"note: {n}" for n in report.notes]
    return header, rows, lines


def span_text(report: SpanReport | None) -> str:
    """The span section of the text output."""
    if report is None:
        return ""
    header, rows, lines = _span_rows(report)
    out = ["", "Spans (nearest-rank percentiles)", "  ".join(header)]
    out += ["  ".join(r) for r in rows]
    out += ["", "Slow spans:"] + [f"- {line}" for line in lines]
    return "\n".join(out) + "\n"


def span_markdown(report: SpanReport | None) -> str:
    """The span section of the markdown output."""
    if report is None:
        return ""
    header, rows, lines = _span_rows(report)
    out = ["## Spans", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    out += ["", "### Slow spans", ""] + [f"- {line}" for line in lines]
    return "\n".join(out) + "\n\n"


@dataclass(frozen=True)
class TraceResult:
    """One analysed trace, ready to render."""

    source: str  # the input's name as findings cite it
    kind: str  # the input's format
    analysis: TraceAnalysis
    parse: ParseSummary
    incident: Incident
    notes: tuple[str, ...] = ()  # what the reader could not read or saw lost (CTF traces)
    ctf: dict[str, object] | None = None  # traces, clocks and streams of a CTF session (JSON "input")
    spans: SpanReport | None = None


def analyse_trace_file(
    trace_file: str,
    *,
    thresholds: Thresholds | None = None,
    span: tuple[float, float] = (-math.inf, math.inf),
    bucket: float | None = None,
    task: str | None = None,
    png: Path | None = None,
    save_text: Path | None = None,
    span_opts: SpanOptions | None = None,
) -> TraceResult:
    """Read and analyse one trace (what ``kforensic trace`` does before rendering); optionally write the PNG."""
    from collectors.ctf.reader import is_ctf
    from collectors.trace_columns import BatchParser, read_batches
    from collectors.trace_input import open_trace
    from detectors.sched.digest import select_tasks
    from detectors.sched.engine import FastAnalyzer
    from detectors.sched.findings import detect
    from detectors.sched.model import Thresholds as DefaultThresholds

    analyzer = FastAnalyzer(thresholds or DefaultThresholds(), span, bucket, timeline=png is not None)
    opts = span_opts or SpanOptions()
    ctf = None
    keeper = None
    if trace_file != "-" and is_ctf(trace_file):
        from collectors.ctf.feed import feed_session
        from collectors.ctf.reader import Session

        if save_text is not None:
            raise UsageError("--save-text is for text traces", hint="a CTF trace is cited by stream file and byte")
        session = Session(trace_file)
        spans_on = opts.wanted or any(t.meta.domain == "ust" for t in session.traces)
        sink: object = analyzer
        if spans_on:
            from collectors.spans import KernelKeeper

            sink = keeper = KernelKeeper(analyzer, trace_file)
        ctf = feed_session(session, sink, keep=spans_on)  # type: ignore[arg-type]
        stream = ctf.stream
        counts = ctf.counts
    else:
        parser = BatchParser()
        if opts.wanted:
            from collectors.spans import KernelKeeper

            keeper = KernelKeeper(analyzer, trace_file)
        with open_trace(trace_file, save_text) as stream:
            stop = threading.Event()
            with contextlib.closing(read_batches(stream.chunks, parser, stop)) as batches:
                for batch in batches:
                    (keeper or analyzer).feed(batch)
                    if analyzer.done:
                        break
        counts = parser.counts
        if keeper is not None:
            keeper.source = stream.name
    analysis = analyzer.result(counts)
    parse = analyzer.summary(counts)
    if task:
        analysis = select_tasks(analysis, task)
        if not analysis.tasks:
            raise UsageError(
                f"--task {task!r} matches no task in {trace_file}", hint="give a comm or pid from the task table"
            )
    findings = detect(analysis, stream.name)
    span_report = None
    if keeper is not None:
        from forensics.trace_spans import run_spans

        extra = names = None
        if ctf is not None:
            from collectors.spans import ctf_syscalls

            rows, owner = ctf.rows()
            extra, names = ctf_syscalls(ctf.session, rows, owner)
        table = keeper.table(extra, names)
        span_report, span_found = run_spans(trace_file, opts, table, ctf)
        findings = [*findings, *span_found]
    win = analysis.window
    incident = Incident(
        host=NotAvailable("a trace does not name its host"),
        kernel_release=NotAvailable("a trace does not name its kernel"),
        window=win
        if isinstance(win, NotAvailable)
        else TimeWindow(Timestamp(win[0], Clock.TRACE), Timestamp(win[1], Clock.TRACE)),
        sources=tuple(stream.records),
        findings=tuple(findings),
        tool_version=__version__,
    )
    if png is not None:
        from detectors.sched.timeline import timeline_png
        from forensics.output import output_directory, write_atomic

        output_directory(png.parent)
        write_atomic(png, timeline_png(analysis, analyzer.timeline or [], f"kforensic trace {stream.name}"))
    notes: tuple[str, ...] = ()
    ctf_info = None
    if ctf is not None:
        from collectors.ctf.reader import describe

        ctf_info = describe(ctf.session)
        notes = tuple(ctf.session.notes())
    return TraceResult(stream.name, stream.kind, analysis, parse, incident, notes, ctf_info, span_report)


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
    window: Annotated[str | None, typer.Option("--window", help="Only T0:T1 (trace seconds).", metavar="T0:T1")] = None,
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
    from detectors.sched.digest import TRACE_SCHEMA, analysis_to_dict, parse_to_dict
    from detectors.sched.model import Thresholds
    from detectors.spans.findings import report_to_dict
    from forensics.serialize import incident_to_dict

    thresholds = Thresholds(hog_ms / 1e3, latency_ms / 1e3, irq_ms / 1e3, softirq_ms / 1e3, dstate_ms / 1e3)
    if kernel_clock not in KERNEL_CLOCKS:
        raise UsageError(
            f"--kernel-clock {kernel_clock!r} is not an ftrace clock", hint=f"one of {', '.join(KERNEL_CLOCKS)}"
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
    )
    analysis, parse, incident = result.analysis, result.parse, result.incident
    if fmt is OutputFormat.JSON:
        doc = {
            "schema": TRACE_SCHEMA,
            "tool_version": __version__,
            "input": {"source": result.source, "kind": result.kind, **(result.ctf or {})},
            "parse": parse_to_dict(parse),
            **analysis_to_dict(analysis, top=None if task else top),
            **({"spans": report_to_dict(result.spans)} if result.spans is not None else {}),
            "incident": incident_to_dict(incident),
        }
        text = json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
    elif fmt is OutputFormat.MD:
        text = (
            render_markdown(analysis, parse, result.source, top, result.notes)
            + span_markdown(result.spans)
            + render_for(incident, fmt, output)
        )
    else:
        color = output is None and sys.stdout.isatty()
        text = (
            render_text(analysis, parse, result.source, top, color, result.notes)
            + span_text(result.spans)
            + "\n"
            + render_for(incident, fmt, output)
        )
    deliver(text, output)
    raise typer.Exit(int(exit_status(incident, fail_on)))


def register(app: typer.Typer) -> None:
    """Add the command to the CLI."""
    app.command("trace", epilog=EXAMPLE, help=f"{trace.__doc__}")(trace)
