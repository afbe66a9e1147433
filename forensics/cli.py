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

#: Command name -> the module in forensics.commands that registers it, in --help order.
COMMANDS: dict[str, str] = {
    "report": "report",
    "vmcore": "vmcore",
    "slab-watch": "slabwatch",
    "slab-import": "slabwatch",
    "slab-export": "slabwatch",
    "kdump": "kdump",
    "trace": "trace",
    "dmesg": "dmesg",
    "leaks": "leaks",
    "profile": "profile",
}


def _version(value: bool) -> None:
    if value:
        print(f"kforensic {__version__}")
        raise typer.Exit(0)


def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """Post-mortem crash and memory forensics for Linux kernels."""


def make_app(commands: tuple[str, ...] | None = None) -> typer.Typer:
    """The CLI with the given commands (all when None) registered."""
    import importlib

    cli = typer.Typer(
        name="kforensic",
        help="Post-mortem crash and memory forensics for Linux kernels.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
        rich_markup_mode=None,
    )
    cli.callback()(_root)
    wanted = COMMANDS if commands is None else {c: COMMANDS[c] for c in commands}
    for module_name in dict.fromkeys(wanted.values()):
        importlib.import_module(f"forensics.commands.{module_name}").register(cli)
    return cli


def _requested(argv: list[str]) -> tuple[str, ...] | None:
    """The command the user asked for, to import only its module (start-up time); None for all."""
    first = next((a for a in argv if not a.startswith("-")), None)
    if first in COMMANDS and not any(a in ("-h", "--help") for a in argv[: argv.index(first)]):
        # The command's siblings from the same module keep their help consistent.
        module = COMMANDS[first]
        return tuple(c for c, m in COMMANDS.items() if m == module)
    return None


def __getattr__(name: str) -> typer.Typer:
    # ``from forensics.cli import app`` (tests, tools) gets the CLI with every command.
    if name == "app":
        return make_app()
    raise AttributeError(name)


def _fail(message: str, hint: str | None, code: int) -> None:
    print(f"kforensic: error: {message}", file=sys.stderr)
    if hint:
        print(f"kforensic: hint: {hint}", file=sys.stderr)
    sys.exit(code)


def main() -> None:
    """Entry point of the ``kforensic`` console script."""
    debug = "--debug" in sys.argv[1:]
    try:
        make_app(_requested(sys.argv[1:]))(prog_name="kforensic")
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
