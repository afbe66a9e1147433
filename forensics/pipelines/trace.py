"""``kforensic trace``: read a trace, run the scheduling engine and the span analysis, build the incident."""

from __future__ import annotations

import contextlib
import math
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from forensics import __version__
from forensics.errors import UsageError
from forensics.model import Clock, Incident, NotAvailable, Timestamp, TimeWindow
from forensics.pipelines.spans import SpanOptions
from forensics.types.results import TraceResult

if TYPE_CHECKING:
    from detectors.sched.engine import FastAnalyzer
    from detectors.sched.model import Thresholds


def trace_kernels() -> tuple[object, ...]:
    """The compiled kernels of the text trace path (importing them imports numba, nothing is compiled)."""
    from collectors.trace_scan import scan
    from detectors.sched import engine_kernels as k

    return (scan, k.run_batch, k.new_maps, k.state_refs)


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
    from collectors.trace_columns import BatchParser, read_batches, text_size
    from collectors.trace_input import open_trace
    from detectors.sched.analyzer import BatchAnalyzer, SchedAnalyzer
    from detectors.sched.findings import detect
    from detectors.sched.model import Thresholds as DefaultThresholds
    from detectors.sched.select import select_tasks
    from forensics.jit import compiled_pays

    # A small input is read and analysed without compiled code (the same results, no compile to wait for).
    compiled = compiled_pays(text_size(trace_file), trace_kernels)
    options = (thresholds or DefaultThresholds(), span, bucket, png is not None)
    analyzer: BatchAnalyzer | FastAnalyzer
    if compiled:
        from detectors.sched.engine import FastAnalyzer

        analyzer = FastAnalyzer(*options)
    else:
        analyzer = BatchAnalyzer(SchedAnalyzer(*options))
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
        parser = BatchParser(compiled=compiled)
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
        from forensics.pipelines.spans import run_spans

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
