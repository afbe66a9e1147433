"""``kforensic dmesg``: find, classify and title every kernel report in kernel logs.

Its declaration for typer; the body is :func:`forensics.commands.dmesg_run.run_dmesg`, which ``forensics.cli``
also runs without typer from the command's table of options (start-up time; issue #28).
"""

from typing import Annotated

import typer

from forensics.commands.common import (
    DebugOption,
    FailOnOption,
    ForceOption,
    FormatOption,
    OutputOption,
)
from forensics.commands.dmesg_run import run_dmesg
from forensics.report.formats import OutputFormat

EXAMPLE = """
Example:

  kforensic dmesg /var/log/kern.log vmcore-dmesg.txt

  journalctl -k -b -1 | kforensic dmesg --format json -o dmesg.json

  sudo kforensic dmesg --live --fail-on high

  kforensic dmesg --signatures /archive/kern-logs/ --format json -o signatures.json
"""


def dmesg(
    logs: Annotated[
        list[str] | None,
        typer.Argument(
            help="Kernel logs (plain, gzip, xz, zstd or bzip2): dmesg output, kern.log, journalctl -k,"
            " vmcore-dmesg.txt, '-' for stdin."
        ),
    ] = None,
    live: Annotated[bool, typer.Option("--live", help="Read the live kernel ring buffer (/dev/kmsg).")] = False,
    signatures: Annotated[
        bool,
        typer.Option(
            "--signatures", help="LOG... are many hosts' logs (dirs, globs, URLs): group by signature on Dask."
        ),
    ] = False,
    scheduler: Annotated[
        str | None,
        typer.Option("--scheduler", help="--signatures: run on this Dask scheduler.", metavar="tcp://HOST:8786"),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option("--workers", help="--signatures: local worker processes (default: one per core; 0: serial)."),
    ] = None,
    fmt: FormatOption = OutputFormat.TEXT,
    output: OutputOption = None,
    fail_on: FailOnOption = None,
    debug: DebugOption = False,
    force: ForceOption = False,
) -> None:
    """Find every kernel report (oops, BUG, WARNING, KASAN, lockdep, stalls, panics, OOM) in kernel logs."""
    raise typer.Exit(
        run_dmesg(
            logs=logs,
            live=live,
            signatures=signatures,
            scheduler=scheduler,
            workers=workers,
            fmt=fmt,
            output=output,
            fail_on=fail_on,
            debug=debug,
            force=force,
        )
    )


def register(app: typer.Typer) -> None:
    """Add the command to the CLI."""
    app.command("dmesg", epilog=EXAMPLE, help=f"{dmesg.__doc__}")(dmesg)
