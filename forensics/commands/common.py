"""Options and output handling shared by every command."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from forensics.errors import ExitCode
from forensics.model import Incident, Severity
from forensics.report import OutputFormat, render_incident

FormatOption = Annotated[
    OutputFormat,
    typer.Option("--format", "-f", help="Output format: text (terminal), md (markdown) or json."),
]
OutputOption = Annotated[
    Path | None,
    typer.Option("--output", "-o", help="Write to FILE (atomically, mode 0600) instead of stdout.", metavar="FILE"),
]
FailOnOption = Annotated[
    Severity | None,
    typer.Option(
        "--fail-on",
        help="Exit 1 when a finding is at or above this severity (info, low, medium, high, critical).",
        case_sensitive=False,
    ),
]
DebugOption = Annotated[
    bool,
    typer.Option("--debug", help="Show tracebacks and internal details on errors."),
]


def force_outputs(value: bool) -> bool:
    """Option callback of ``--force``: this run may replace output files owned by other users."""
    from forensics.output import set_force

    set_force(bool(value))
    return value


ForceOption = Annotated[
    bool,
    typer.Option(
        "--force",
        help="Replace an output file owned by another user (see docs/cli.md, Output files).",
        callback=force_outputs,
    ),
]


def check_number(
    value: float, what: str, unit: str, low: float = 0.0, high: float = math.inf, *, above: bool = False
) -> float:
    """``value`` when it is finite and in range (``above``: strictly more than ``low``); else UsageError (exit 2).

    The one check behind every duration, rate, threshold and size option
    (``number_option``) and the values parsed from text (``--last 6h``).
    """
    from forensics.errors import UsageError

    if not math.isfinite(value):
        raise UsageError(f"{what} {value} is not a finite number of {unit}", hint=f"give a number of {unit}")
    if value < low or (above and value == low) or value > high:
        bound = f"more than {low:g}" if above else f"at least {low:g}"
        top = f" and at most {high:g}" if math.isfinite(high) else ""
        raise UsageError(f"{what} {value:g} {unit} is out of range: give {bound}{top}", hint=f"in {unit}")
    return value


def number_option(
    name: str, help: str, unit: str, low: float = 0.0, high: float = math.inf, *, above: bool = False, **extra: Any
) -> Any:
    """A typer option for a duration, rate, threshold or size: finite, in [low, high] (or (low, high]), in ``unit``.

    nan, inf and values out of range end the run with exit 2 and one line
    (``kforensic: error: --hog-ms nan is not a finite number of milliseconds``).
    """

    def validate(value: float | None) -> float | None:
        return None if value is None else check_number(value, name, unit, low, high, above=above)

    return typer.Option(name, help=f"{help} [{unit}]", callback=validate, **extra)


def _to_stdout(text: str) -> None:
    """Write to standard output; a full or closed one is exit 3 in one line, a closed pipe ends quietly."""
    import errno
    import os

    from forensics.errors import InputError
    from forensics.output import encode_text

    stream = sys.stdout
    if stream is None:  # started with fd 1 closed (`kforensic ... >&-`)
        raise InputError("standard output is closed", hint="give -o FILE, or run with a standard output")
    try:
        buffer = getattr(stream, "buffer", None)
        if buffer is None:
            stream.write(text)
        else:
            stream.flush()
            buffer.write(encode_text(text))
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


def deliver(text: str, output: Path | None, *, force: bool | None = None) -> None:
    """Write the rendered result to ``output`` (by the rules of :mod:`forensics.output`), or to stdout."""
    if output is None:
        _to_stdout(text)
        return
    from forensics.output import write_atomic

    write_atomic(output, text, force=force)


def render_for(incident: Incident, fmt: OutputFormat, output: Path | None) -> str:
    """Render for the destination: colour only for a terminal on stdout."""
    color = output is None and fmt is OutputFormat.TEXT and sys.stdout.isatty()
    return render_incident(incident, fmt, color=color)


def exit_status(incident: Incident, fail_on: Severity | None) -> ExitCode:
    """0, or 1 when ``--fail-on`` was given and a finding reaches it."""
    worst = incident.worst_severity()
    if fail_on is not None and worst is not None and worst >= fail_on:
        return ExitCode.FINDINGS
    return ExitCode.OK
