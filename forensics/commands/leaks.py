"""``kforensic leaks``: is the kernel leaking, and what?  Judge a slab-watch store's series.

Reads the store written by ``slab-watch`` (or ``slab-import``), grades every
slab cache and the meminfo fields a leak can hide in (see docs/leaks.md), and
reports leaks, suspects and reclaimable growth with the growth rate, the time
until MemAvailable runs out, who typically allocates the objects and how to
confirm it.  ``--format json`` writes a ``kforensic.leaks/1`` document that
embeds the findings as an incident for ``kforensic report --from``.

Its declaration for typer; the body is :func:`forensics.commands.leaks_run.run_leaks`, which ``forensics.cli``
also runs without typer from the command's table of options (start-up time; issue #28).
"""

from pathlib import Path
from typing import Annotated

import typer

from forensics.commands.common import DebugOption, FailOnOption, ForceOption, FormatOption, OutputOption, number_option
from forensics.commands.leaks_run import run_leaks
from forensics.report.formats import OutputFormat

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
    raise typer.Exit(
        run_leaks(
            store=store,
            run=run,
            last=last,
            plots=plots,
            min_rate=min_rate,
            prometheus=prometheus,
            match=match,
            since=since,
            step=step,
            bearer_token_file=bearer_token_file,
            basic_auth_file=basic_auth_file,
            ca_file=ca_file,
            cert_file=cert_file,
            key_file=key_file,
            insecure=insecure,
            timeout=timeout,
            fmt=fmt,
            output=output,
            fail_on=fail_on,
            debug=debug,
            force=force,
        )
    )


def register(app: typer.Typer) -> None:
    """Add the command to the CLI."""
    app.command("leaks", epilog=EXAMPLE, help=f"{leaks.__doc__}")(leaks)
