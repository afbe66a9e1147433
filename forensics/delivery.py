"""Where a rendered result goes: stdout or an output file, and the exit status it earns."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, assert_never

from forensics.errors import ExitCode
from forensics.model import FindingKind, Incident, Severity
from forensics.report.formats import IncidentRenderer, OutputFormat, Streamed, render

if TYPE_CHECKING:
    from forensics.types.figures import Figure


def _to_stdout(text: str | bytes | Streamed) -> None:
    """Write to standard output (bytes as they are, a streamed result piece by piece); a full or closed one is
    exit 3 in one line, a closed pipe ends quietly."""
    import errno
    import os

    from forensics.errors import InputError
    from forensics.output import encode_text

    stream = sys.stdout
    if stream is None:  # started with fd 1 closed (`kforensic ... >&-`)
        raise InputError("standard output is closed", hint="give -o FILE, or run with a standard output")
    try:
        buffer = getattr(stream, "buffer", None)
        if isinstance(text, Streamed):
            if buffer is None:
                whole = bytearray()
                text.write_to(whole.extend)
                stream.write(whole.decode())
            else:
                stream.flush()
                text.write_to(buffer.write)
        elif buffer is None:
            stream.write(text.decode() if isinstance(text, bytes) else text)
        else:
            stream.flush()
            buffer.write(text if isinstance(text, bytes) else encode_text(text))
        stream.flush()
    except BrokenPipeError:
        from forensics.output import reader_went_away

        reader_went_away()
    except OSError as exc:
        # Drop what is still buffered, so that the interpreter's final flush does not fail again.
        import contextlib
        import io

        with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation), open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), stream.fileno())
        hint = "free some space, or write with -o elsewhere" if exc.errno == errno.ENOSPC else "give -o FILE"
        raise InputError(f"cannot write to standard output: {exc.strerror or exc}", hint=hint) from None


def deliver(text: str | bytes | Streamed, output: Path | None, *, force: bool | None = None) -> None:
    """Write the rendered result (text, bytes already encoded, or pieces written as they are made) to ``output``
    (by the rules of :mod:`forensics.output`), or to stdout."""
    if output is None:
        _to_stdout(text)
        return
    if isinstance(text, Streamed):
        from forensics.output import open_output

        with open_output(output, force=force) as out:
            text.write_to(out.write)
        return
    from forensics.output import write_atomic

    write_atomic(output, text, force=force)


def write_figures(figures: Iterable[Figure]) -> None:
    """Draw and write a result's figures in order (PNG, atomically, 0600); make each plot directory first."""
    figures = tuple(figures)
    if not figures:  # most runs: nothing to draw, and the figure records' module not to import (~3 ms)
        return
    from forensics.output import output_directory, write_atomic
    from forensics.types.figures import (  # here: a command without figures never loads them
        CpuTimelineFigure,
        FigureDirectory,
        SeriesFigure,
        SpanGanttFigure,
        SpanHistogramFigure,
    )

    for figure in figures:
        if isinstance(figure, FigureDirectory):
            output_directory(figure.path)
        elif isinstance(figure, SeriesFigure):
            from forensics.leakplots import render_png

            write_atomic(figure.path, render_png(figure))
        elif isinstance(figure, SpanHistogramFigure):
            from forensics.spanplots import histogram_png

            write_atomic(figure.path, histogram_png(figure.report))
        elif isinstance(figure, SpanGanttFigure):
            from forensics.spanplots import gantt_png

            write_atomic(figure.path, gantt_png(figure.charts))
        elif isinstance(figure, CpuTimelineFigure):
            from forensics.report.cpu_timeline import timeline_png

            write_atomic(figure.path, timeline_png(figure.analysis, figure.runs, figure.title, named=figure.named))
        else:
            assert_never(figure)


def render_for(incident: Incident, fmt: OutputFormat, output: Path | None) -> str:
    """Render for the destination: colour only for a terminal on stdout."""
    return render(IncidentRenderer(), incident, fmt, output)


#: Findings that state what an analysis examined and could have shown (slab-watch's and slab-import's coverage of
#: the leak analysis): a statement about the samples, not a finding about the kernel.  They never set the exit
#: status, so the same store gives the same status to ``slab-import``, ``slab-watch`` and ``leaks`` (which
#: states its coverage apart, as "examined").
COVERAGE_KINDS = frozenset({FindingKind.LEAK_COVERAGE})


def exit_status(incident: Incident, fail_on: Severity | None) -> ExitCode:
    """0, or 1 when ``--fail-on`` was given and a finding (not a statement of coverage) reaches it."""
    worst = max((f.severity for f in incident.findings if f.kind not in COVERAGE_KINDS), default=None)
    if fail_on is not None and worst is not None and worst >= fail_on:
        return ExitCode.FINDINGS
    return ExitCode.OK
