"""Options and output handling shared by every command."""

import math
from pathlib import Path
from typing import Annotated, Any

import typer

from forensics.commands.shared import force_outputs, number_check, output_path
from forensics.model import Severity
from forensics.report import OutputFormat

FormatOption = Annotated[
    OutputFormat,
    typer.Option(
        "--format", "-f", help="Output format: text (terminal), md (markdown), json or html (one self-contained page)."
    ),
]


def _output_path(value: str) -> Path:
    """``-o``'s value (:func:`forensics.commands.shared.output_path`), refused as a bad parameter (exit 2)."""
    try:
        return output_path(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


OutputOption = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        help="Write to FILE (atomically, mode 0600) instead of stdout.",
        metavar="FILE",
        parser=_output_path,
    ),
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
    typer.Option("--debug", help="On an error, say where it was raised (a bug, exit 4: its traceback)."),
]


ForceOption = Annotated[
    bool,
    typer.Option(
        "--force",
        help="Replace an output file owned by another user (see docs/cli.md, Output files).",
        callback=force_outputs,
    ),
]


def number_option(
    name: str, help: str, unit: str, low: float = 0.0, high: float = math.inf, *, above: bool = False, **extra: Any
) -> Any:
    """A typer option for a duration, rate, threshold or size: finite, in [low, high] (or (low, high]), in ``unit``.

    nan, inf and values out of range end the run with exit 2 and one line
    (``kforensic: error: --hog-ms nan is not a finite number of milliseconds``).
    """

    return typer.Option(
        name, help=f"{help} [{unit}]", callback=number_check(name, unit, low, high, above=above), **extra
    )
