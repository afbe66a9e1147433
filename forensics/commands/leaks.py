"""``kforensic leaks``: is the kernel leaking, and what?  Judge a slab-watch store's series.

Reads the store written by ``slab-watch`` (or ``slab-import``), grades every
slab cache and the meminfo fields a leak can hide in (see docs/leaks.md), and
reports leaks, suspects and reclaimable growth with the growth rate, the time
until MemAvailable runs out, who typically allocates the objects and how to
confirm it.  ``--format json`` writes a ``kforensic.leaks/1`` document that
embeds the findings as an incident for ``kforensic report --from``.
"""

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from forensics.commands.common import DebugOption, FailOnOption, ForceOption, FormatOption, OutputOption, number_option
from forensics.delivery import deliver, exit_status, write_figures
from forensics.errors import UsageError
from forensics.pipelines.leaks import analyse_store
from forensics.report.formats import OutputFormat, render
from forensics.report.leaks import LeaksRenderer

if TYPE_CHECKING:
    pass


EXAMPLE = """
Example:

  sudo kforensic slab-watch --interval 60s --hours 24 --store /var/lib/kforensic/

  kforensic leaks --store /var/lib/kforensic/ --plots leak-plots -f md -o leaks.md

  kforensic leaks --store leak.sqlite --last 6h --format json -o leaks.json --fail-on medium

  kforensic leaks --prometheus http://prom:9090 --match '{job="node"}' --since 7d --step 5m
"""


# ---------------------------------------------------------------- running the analysis


# ---------------------------------------------------------------- rendering


# ---------------------------------------------------------------- the command


def leaks(
    store: Annotated[
        Path | None,
        typer.Option(
            "--store", help="slab-watch store (file, or directory holding slab-watch.sqlite).", metavar="PATH"
        ),
    ] = None,
    run: Annotated[int | None, typer.Option("--run", help="Analyse only this run of the store.", metavar="ID")] = None,
    last: Annotated[
        str | None, typer.Option("--last", help="Analyse only the last DURATION (e.g. 6h, 2d).", metavar="DURATION")
    ] = None,
    plots: Annotated[
        Path | None, typer.Option("--plots", help="Write PNG plots of the flagged series into DIR.", metavar="DIR")
    ] = None,
    min_rate: Annotated[
        float | None,
        number_option("--min-rate", "Ignore growth slower than this (default 256).", "KB per hour", above=True),
    ] = None,
    prometheus: Annotated[
        str | None,
        typer.Option("--prometheus", help="Read every instance's series from this Prometheus server.", metavar="URL"),
    ] = None,
    match: Annotated[
        str | None, typer.Option("--match", help="--prometheus: label selector of the instances.", metavar="SELECTOR")
    ] = None,
    since: Annotated[
        str, typer.Option("--since", help="--prometheus: how far back to read.", metavar="DURATION")
    ] = "1d",
    step: Annotated[
        str,
        typer.Option(
            "--step",
            help="--prometheus: query resolution; auto: the scrape interval, coarsened to 10,000 points over the data.",
            metavar="DURATION|auto",
        ),
    ] = "auto",
    bearer_token_file: Annotated[
        Path | None, typer.Option("--bearer-token-file", help="--prometheus: send this token.", metavar="FILE")
    ] = None,
    basic_auth_file: Annotated[
        Path | None,
        typer.Option("--basic-auth-file", help="--prometheus: user:password for basic auth.", metavar="FILE"),
    ] = None,
    ca_file: Annotated[
        Path | None, typer.Option("--ca-file", help="--prometheus: CA certificates to verify TLS.", metavar="FILE")
    ] = None,
    cert_file: Annotated[
        Path | None, typer.Option("--cert-file", help="--prometheus: client certificate (TLS).", metavar="FILE")
    ] = None,
    key_file: Annotated[
        Path | None, typer.Option("--key-file", help="--prometheus: client certificate key.", metavar="FILE")
    ] = None,
    insecure: Annotated[
        bool, typer.Option("--insecure", help="--prometheus: do not verify the server's certificate.")
    ] = False,
    timeout: Annotated[
        float, number_option("--timeout", "--prometheus: seconds to wait for each answer.", "seconds", above=True)
    ] = 30.0,
    fmt: FormatOption = OutputFormat.TEXT,
    output: OutputOption = None,
    fail_on: FailOnOption = None,
    debug: DebugOption = False,
    force: ForceOption = False,
) -> None:
    """Find slab caches and kernel memory that grow like a leak, and say who allocates them."""
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
        raise typer.Exit(int(exit_status(fleet.incident, fail_on)))
    from collectors.slabstore import resolve_store_path
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
    result = analyse_store(resolve_store_path(store), run, last_hours, thresholds, plots)
    write_figures(result.figures)
    deliver(render(LeaksRenderer(), result, fmt, output), output)
    raise typer.Exit(int(exit_status(result.incident, fail_on)))


def register(app: typer.Typer) -> None:
    """Add the command to the CLI."""
    app.command("leaks", epilog=EXAMPLE, help=f"{leaks.__doc__}")(leaks)
