"""What the options every command shares mean, and their rows of a command's table, without typer.

The typer declarations of the options (:mod:`forensics.commands.common`) call these functions, and so do the
commands run without typer from a table of their options (:mod:`forensics.commandline`, start-up time; issue #28):
one meaning for both ways.  No typer or click import here.
"""

import math
from collections.abc import Callable, Iterable
from pathlib import Path

from forensics.commandline import DeclinedError, Option, choice
from forensics.errors import UsageError
from forensics.model import Severity
from forensics.report.formats import OutputFormat


def output_path(value: str) -> Path:
    """``-o``'s value as a path; one ending in ``/`` names a directory: ValueError (typer's declaration says it as a
    bad parameter, exit 2, as a directory is refused; a table of options declines it).

    ``Path`` drops the slash: ``-o reports/`` with no ``reports`` directory wrote a file named ``reports``.
    ``-`` is standard output, as for every tool that takes ``-o -`` (it wrote a file named ``-``).
    """
    if value == "-":
        return Path("/dev/stdout")
    if value.endswith("/") and value.strip("/"):
        raise ValueError(f"{value} ends in '/': it names a directory, not a file (give e.g. {value}report)")
    return Path(value)


def force_outputs(value: bool) -> bool:
    """Option callback of ``--force``: this run may replace output files owned by other users."""
    from forensics.output import set_force

    set_force(bool(value))
    return value


def stdin_read_once(*given: tuple[str, Iterable[object] | None]) -> None:
    """Refuse ``-`` given to more than one option: standard input can be read only once.

    The second reader found it drained and said the input was empty (`report --dmesg - --trace -`: "<stdin>:
    holds no trace events (an empty file)"), which sends the user looking for a fault in a good trace.
    """
    users = [option for option, values in given for value in values or () if str(value) == "-"]
    if len(users) > 1:
        raise UsageError(
            f"standard input ('-') is given {len(users)} times ({', '.join(users)}); it can be read only once",
            hint="save it to a file and give that file's path to all but one of them",
        )


def distinct_inputs(option: str, names: Iterable[object] | None) -> None:
    """Refuse (exit 2) one file given twice to ``option`` (by path, link or hard link): its reports counted twice.

    (``dmesg kern.log kern.log``, ``report --dmesg a --dmesg link-to-a``: every report listed twice, as if the
    machine had crashed twice.) Standard input twice is refused by :func:`stdin_read_once`.
    """
    import os
    import stat

    stdin_read_once((option, names))
    seen: dict[tuple[int, int], str] = {}
    for name in names or ():
        text = str(name)
        try:
            st = os.stat(text) if text != "-" else None
        except OSError:
            continue  # said by the reader, with its own words
        if st is None or not stat.S_ISREG(st.st_mode):
            continue  # a FIFO or device reads differently each time
        key = (st.st_dev, st.st_ino)
        if key in seen:
            raise UsageError(
                f"{option}: {seen[key]} and {text} are the same file: its reports would be counted twice",
                hint="give each log once",
            )
        seen[key] = text


def distinct_outputs(*given: tuple[str, Path | None]) -> None:
    """Refuse (exit 2) two output options naming one file, before anything is written.

    The second write silently replaced the first (`report --html r --json r` left only the JSON, exit 0). Paths
    written through (:func:`forensics.output.written_through`: devices, FIFOs) may be named twice
    (`--html /dev/null --json /dev/null`).
    """
    import os

    from forensics.output import written_through

    seen: dict[str, str] = {}
    for option, path in given:
        if path is None or written_through(path):
            continue
        try:
            st = os.stat(path)
            key = f"{st.st_dev}:{st.st_ino}"
        except OSError:
            key = os.path.abspath(path)
        if key in seen:
            raise UsageError(
                f"{seen[key]} and {option} both name {path}: the second output would replace the first",
                hint="give each output its own path",
            )
        seen[key] = option


def number_check(
    name: str, unit: str, low: float = 0.0, high: float = math.inf, *, above: bool = False
) -> Callable[[float | None], float | None]:
    """The callback of a duration, rate, threshold or size option (``common.number_option``): the value when it is
    finite and in [low, high] (or (low, high]), else UsageError (exit 2) in one line."""

    def validate(value: float | None) -> float | None:
        from forensics.units import check_number  # (here: profile's start-up does not need its module)

        return None if value is None else check_number(value, name, unit, low, high, above=above)

    return validate


def _output(value: str) -> Path:
    try:
        return output_path(value)
    except ValueError:
        raise DeclinedError from None


#: The rows of the shared options in a command's table (:class:`forensics.commandline.CommandLine`): the same
#: names, values, defaults and callback as their typer declarations in :mod:`forensics.commands.common`.
def format_option(default: OutputFormat) -> Option:
    """The ``--format``/``-f`` row with the command's default (``text``; ``report``'s is ``md``)."""
    return Option(("--format", "-f"), "fmt", choice(OutputFormat), default)


FORMAT = format_option(OutputFormat.TEXT)
OUTPUT = Option(("--output", "-o"), "output", _output)
FAIL_ON = Option(("--fail-on",), "fail_on", choice(Severity, case_sensitive=False))
DEBUG = Option(("--debug",), "debug", default=False)
FORCE = Option(("--force",), "force", default=False, callback=force_outputs)
