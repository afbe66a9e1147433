"""``kforensic dmesg``: find, classify and title every kernel report in kernel logs."""

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from forensics.commands.common import (
    DebugOption,
    FailOnOption,
    ForceOption,
    FormatOption,
    OutputOption,
    distinct_inputs,
)
from forensics.delivery import deliver, exit_status
from forensics.errors import UsageError
from forensics.pipelines.dmesg import analyse_logs
from forensics.report.dmesg import DmesgRenderer
from forensics.report.formats import OutputFormat, render, render_streamed

if TYPE_CHECKING:
    pass


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
            help="Kernel logs (plain, gzip, xz or zstd): dmesg output, kern.log, journalctl -k, vmcore-dmesg.txt,"
            " '-' for stdin."
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
    if signatures or scheduler is not None or workers is not None:
        from forensics.fleet.signatures import analyse_fleet_logs, expand_inputs
        from forensics.output import check_not_input, register_input
        from forensics.report.fleet_signatures import SignaturesRenderer

        if not signatures or live or not logs:
            raise UsageError(
                "--scheduler and --workers go with --signatures, which needs log directories, files or globs",
                hint="kforensic dmesg --signatures /archive/kern-logs/",
            )
        if workers is not None and workers < 0:
            raise UsageError(f"--workers {workers} must be 0 (serial) or more")
        if scheduler is not None and workers is not None:
            raise UsageError("--workers sizes the local cluster: give it or --scheduler, not both")
        items = expand_inputs(logs)
        for _host, where in items:  # the workers read them in other processes: register them here too
            if "://" not in where:
                register_input(where)
        if output is not None:
            check_not_input(output)  # before the cluster starts, not after the whole run
        fleet = analyse_fleet_logs(items, scheduler, workers)
        deliver(render(SignaturesRenderer(), fleet, fmt, output), output)
        raise typer.Exit(int(exit_status(fleet.incident, fail_on)))
    names = list(logs or [])
    if not names and not live:
        if sys.stdin.isatty():
            raise UsageError(
                "dmesg needs a log file, '-' for stdin, or --live", hint="kforensic dmesg /var/log/kern.log"
            )
        names = ["-"]
    distinct_inputs("LOG", names)
    result = analyse_logs(names, live)
    deliver(render_streamed(DmesgRenderer(), result, fmt, output), output)
    raise typer.Exit(int(exit_status(result.incident, fail_on)))


def register(app: typer.Typer) -> None:
    """Add the command to the CLI."""
    app.command("dmesg", epilog=EXAMPLE, help=f"{dmesg.__doc__}")(dmesg)
