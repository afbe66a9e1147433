"""``kforensic leaks``'s body and its table of options, without typer.

:func:`run_leaks` is what the command typer declares (:mod:`forensics.commands.leaks`) runs, and what
:func:`forensics.cli.main` runs itself, with the values :data:`LINE` parses, when a command line is made only of
the options the table declares (:mod:`forensics.commandline`): importing typer and click and building the command
was ~17-25 ms of CPU of every run (issue #28).  The analysis' own modules are imported by the body, not here.
"""

import dataclasses
from pathlib import Path

from forensics.commandline import CommandLine, Option, integer, path, real, text
from forensics.commands.shared import DEBUG, FAIL_ON, FORCE, FORMAT, OUTPUT, number_check
from forensics.errors import UsageError
from forensics.model import Severity
from forensics.report.formats import OutputFormat


def run_leaks(
    store: Path | None,
    run: int | None,
    last: str | None,
    plots: Path | None,
    min_rate: float | None,
    prometheus: str | None,
    match: str | None,
    since: str,
    step: str,
    bearer_token_file: Path | None,
    basic_auth_file: Path | None,
    ca_file: Path | None,
    cert_file: Path | None,
    key_file: Path | None,
    insecure: bool,
    timeout: float,
    fmt: OutputFormat,
    output: Path | None,
    fail_on: Severity | None,
    debug: bool,
    force: bool,
) -> int:
    """Judge the store's series (or a Prometheus server's), deliver the result; the exit status."""
    from forensics.delivery import deliver, exit_status, write_figures
    from forensics.report.formats import render

    if prometheus is not None:
        from collectors.prometheus import PromAuth
        from forensics.fleet.leaks import fetch_and_analyse
        from forensics.report.fleet_leaks import FleetLeaksRenderer
        from forensics.units import parse_duration

        if store is not None or run is not None or plots is not None or last is not None:
            raise UsageError("--prometheus reads a server: --store, --run, --last and --plots do not apply")
        auth = PromAuth(bearer_token_file, basic_auth_file, ca_file, cert_file, key_file, insecure, timeout)
        # --step auto (the default): None here, picked from the data by fetch_and_analyse.
        span, resolution = parse_duration(since, "--since"), None if step == "auto" else parse_duration(step, "--step")
        if span <= 0 or (resolution is not None and resolution <= 0):
            raise UsageError("--since and --step must be more than 0", hint="give e.g. --since 7d --step 60s")
        if resolution is not None and resolution < 1:
            raise UsageError(f"--step {step} is under a second", hint="Prometheus steps are whole seconds or more here")
        if min_rate is not None and min_rate <= 0:
            raise UsageError(f"--min-rate {min_rate:g} must be more than 0", hint="give KB per hour, e.g. 256")
        fleet = fetch_and_analyse(prometheus, match, span, resolution, auth, min_rate)
        deliver(render(FleetLeaksRenderer(), fleet, fmt, output), output)
        return int(exit_status(fleet.incident, fail_on))
    from collectors.slabstore import resolve_store_path
    from forensics.output import check_outputs_not_named_inputs
    from forensics.pipelines.leaks import analyse_store
    from forensics.report.leaks import LeaksRenderer
    from forensics.types.leaks import LeakThresholds

    last_hours = None
    if last is not None:
        from forensics.units import parse_duration

        last_hours = parse_duration(last, "--last") / 3600.0
        if last_hours <= 0:
            raise UsageError("--last must be more than 0", hint="give e.g. --last 6h")
    thresholds = LeakThresholds()
    if min_rate is not None:
        if min_rate <= 0:
            raise UsageError(f"--min-rate {min_rate:g} must be more than 0", hint="give KB per hour, e.g. 256")
        thresholds = dataclasses.replace(thresholds, min_rate=min_rate * 1024)
    store_file = resolve_store_path(store)
    check_outputs_not_named_inputs([output], [store_file])
    result = analyse_store(store_file, run, last_hours, thresholds, plots)
    write_figures(result.figures)
    deliver(render(LeaksRenderer(), result, fmt, output), output)
    return int(exit_status(result.incident, fail_on))


#: The options of :func:`forensics.commands.leaks.leaks`, as typer declares them (a test compares).
LINE = CommandLine(
    "leaks",
    [
        Option(("--store",), "store", path),
        Option(("--run",), "run", integer()),
        Option(("--last",), "last", text),
        Option(("--plots",), "plots", path),
        Option(("--min-rate",), "min_rate", real, callback=number_check("--min-rate", "KB per hour", above=True)),
        Option(("--prometheus",), "prometheus", text),
        Option(("--match",), "match", text),
        Option(("--since",), "since", text, "1d"),
        Option(("--step",), "step", text, "auto"),
        Option(("--bearer-token-file",), "bearer_token_file", path),
        Option(("--basic-auth-file",), "basic_auth_file", path),
        Option(("--ca-file",), "ca_file", path),
        Option(("--cert-file",), "cert_file", path),
        Option(("--key-file",), "key_file", path),
        Option(("--insecure",), "insecure", default=False),
        Option(("--timeout",), "timeout", real, 30.0, callback=number_check("--timeout", "seconds", above=True)),
        FORMAT,
        OUTPUT,
        FAIL_ON,
        DEBUG,
        FORCE,
    ],
    [],
    run_leaks,
)
