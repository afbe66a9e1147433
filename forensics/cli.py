"""The ``kforensic`` command line: typer app, error boundary and exit codes.

This is the only place where errors become messages and exit statuses, and
where tracebacks are shown (with ``--debug`` only).
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from forensics import __version__
from forensics.errors import ExitCode, KforensicError

app = typer.Typer(
    name="kforensic",
    help="Post-mortem crash and memory forensics for Linux kernels.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        print(f"kforensic {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """Post-mortem crash and memory forensics for Linux kernels."""


def _register_commands() -> None:
    # One import per line: each command module adds itself here.
    from forensics.commands import dmesg, kdump, leaks, report, slabwatch, trace, vmcore

    for module in (report, vmcore, slabwatch, kdump, trace, dmesg, leaks):
        module.register(app)


_register_commands()


def _fail(message: str, hint: str | None, code: int) -> None:
    print(f"kforensic: error: {message}", file=sys.stderr)
    if hint:
        print(f"kforensic: hint: {hint}", file=sys.stderr)
    sys.exit(code)


def main() -> None:
    """Entry point of the ``kforensic`` console script."""
    debug = "--debug" in sys.argv[1:]
    try:
        app(prog_name="kforensic")
    except KforensicError as exc:
        if debug:
            raise
        _fail(exc.message, exc.hint, int(exc.exit_code))
    except KeyboardInterrupt:
        _fail("interrupted", None, 130)
    except BrokenPipeError:
        # The reader (e.g. `| head`) went away; nothing more to say.
        sys.stderr.close()
        sys.exit(int(ExitCode.OK))
    except MemoryError:
        _fail("out of memory", "give a smaller input or more memory", int(ExitCode.BAD_INPUT))
    except Exception as exc:  # the boundary: anything else is a bug, said in one line
        if debug:
            raise
        _fail(
            f"internal error: {type(exc).__name__}: {exc}",
            "this is a bug in kforensic; rerun with --debug and report the traceback",
            int(ExitCode.INTERNAL),
        )
