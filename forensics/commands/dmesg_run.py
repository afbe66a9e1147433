"""``kforensic dmesg``'s body and its table of options, without typer.

:func:`run_dmesg` is what the command typer declares (:mod:`forensics.commands.dmesg`) runs, and what
:func:`forensics.cli.main` runs itself, with the values :data:`LINE` parses, when a command line is made only of
the options and arguments the table declares (:mod:`forensics.commandline`): importing typer and click and
building the command was ~17-25 ms of the ~80-90 ms of CPU of a run on an empty log (issue #28).
"""

import os
import stat
import sys
from pathlib import Path

from forensics.commandline import Argument, CommandLine, Option, integer, text
from forensics.commands.shared import DEBUG, FAIL_ON, FORCE, FORMAT, OUTPUT, distinct_inputs
from forensics.errors import EmptyLogError, UsageError
from forensics.model import Severity
from forensics.report.formats import OutputFormat

NO_LOG = "dmesg needs a log file, '-' for stdin, or --live"
NO_LOG_HINT = "kforensic dmesg /var/log/kern.log"


def _stdin_carries_a_log() -> bool:
    """Whether standard input has something to read (not a terminal, ``/dev/null``, closed) when no LOG is named.

    A terminal, ``/dev/null`` or a closed descriptor is no log (nor, once read, an empty pipe or socket: cron's and
    ssh's): read as an empty log it said "No problem found" and exited 0 without having examined anything (its user
    likely meant the ring buffer, ``--live``).  ``-`` reads standard input whatever it is.
    """
    try:
        fd = sys.stdin.fileno()
        st = os.fstat(fd)
        if os.isatty(fd):
            return False
    except (OSError, ValueError, AttributeError):
        return False
    # /dev/null is (1, 3) on Linux (Documentation/admin-guide/devices.txt); another device (/dev/zero, a serial
    # line) is read and refused or read as any input is.
    return not (stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3))


def run_dmesg(
    logs: list[str] | None,
    live: bool,
    signatures: bool,
    scheduler: str | None,
    workers: int | None,
    fmt: OutputFormat,
    output: Path | None,
    fail_on: Severity | None,
    debug: bool,
    force: bool,
) -> int:
    """Find every kernel report in ``logs`` (or the live ring buffer), deliver the result; the exit status."""
    from forensics.delivery import deliver, exit_status

    if signatures or scheduler is not None or workers is not None:
        from forensics.fleet.signatures import analyse_fleet_logs, expand_inputs
        from forensics.output import check_not_input, register_input
        from forensics.report.fleet_signatures import SignaturesRenderer
        from forensics.report.formats import render

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
        return int(exit_status(fleet.incident, fail_on))
    from forensics.pipelines.dmesg import analyse_logs
    from forensics.report.dmesg import DmesgRenderer
    from forensics.report.formats import render_streamed
    from forensics.runend import keep

    names = list(logs or [])
    implicit = not names and not live
    if implicit:
        if not _stdin_carries_a_log():
            raise UsageError(NO_LOG, hint=NO_LOG_HINT)
        names = ["-"]
    distinct_inputs("LOG", names)
    try:
        result = analyse_logs(names, live)
    except EmptyLogError:
        if not implicit:
            raise
        # cron and ssh give a command an empty pipe or socket: it was not told to read it (a usage error, not
        # "not a kernel log"), and nothing was examined, not "no problem found".
        raise UsageError(f"{NO_LOG}: standard input was empty", hint=NO_LOG_HINT) from None
    deliver(render_streamed(DmesgRenderer(), result, fmt, output), output)
    # Delivered: held to the process's end, not freed now (~10 ms of a report-dense log's; forensics.runend).
    keep(result)
    return int(exit_status(result.incident, fail_on))


#: The options and arguments of :func:`forensics.commands.dmesg.dmesg`, as typer declares them (a test compares).
LINE = CommandLine(
    "dmesg",
    [
        Option(("--live",), "live", default=False),
        Option(("--signatures",), "signatures", default=False),
        Option(("--scheduler",), "scheduler", text),
        Option(("--workers",), "workers", integer()),
        FORMAT,
        OUTPUT,
        FAIL_ON,
        DEBUG,
        FORCE,
    ],
    [Argument("logs", many=True)],
    run_dmesg,
)
