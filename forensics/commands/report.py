"""``kforensic report``: every analysis the inputs allow, merged into one incident report."""

import json
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from forensics.commands.common import (
    DebugOption,
    FailOnOption,
    ForceOption,
    FormatOption,
    OutputOption,
)
from forensics.commands.shared import distinct_inputs, distinct_outputs, stdin_read_once
from forensics.delivery import deliver, exit_status, write_figures
from forensics.errors import UsageError
from forensics.report.formats import OutputFormat, render

if TYPE_CHECKING:
    from forensics.types.results import IncidentStory, SourceAnalysis

EXAMPLE = """
Example:

  kforensic report --vmcore /var/crash/202611300712/ --vmlinux vmlinux --store slab.db -o incident.md

  kforensic report --from a.json b.json -o incident.md
"""


def _plots_dir(*pages: Path | None) -> Path | None:
    """Plots go next to the first page written to a file (markdown, else HTML); none on stdout only.

    A page written through (``/dev/stdout``, ``/dev/null``, a FIFO, ``/dev/fd/N``) has no directory to put
    them beside: they go inline, as on stdout (before, ``-o /dev/stdout`` made ``/dev/stdout-plots``).
    """
    page = next((p for p in pages if p is not None), None)
    from forensics.output import written_through

    if page is None or written_through(page):
        return None
    return page.parent / f"{page.stem}-plots"


def _base(path: Path | None) -> Path | None:
    return None if path is None else path.parent


def report(
    from_files: Annotated[
        list[Path] | None,
        typer.Option("--from", help="Findings files (JSON from any kforensic command).", metavar="FILE..."),
    ] = None,
    extra: Annotated[list[Path] | None, typer.Argument(hidden=True, metavar="[FILE]...")] = None,
    vmcore: Annotated[
        Path | None, typer.Option("--vmcore", help="A crash dump or its /var/crash/<stamp>/ directory.", metavar="PATH")
    ] = None,
    vmlinux: Annotated[
        Path | None, typer.Option("--vmlinux", help="The crashed kernel's vmlinux with debug info.", metavar="FILE")
    ] = None,
    module_debug: Annotated[
        list[Path] | None, typer.Option("--module-debug", help="A module with debug info (repeatable).", metavar="FILE")
    ] = None,
    debug_dir: Annotated[
        list[Path] | None, typer.Option("--debug-dir", help="A /usr/lib/debug style tree (repeatable).", metavar="DIR")
    ] = None,
    source_dir: Annotated[
        list[Path] | None,
        typer.Option("--source-dir", help="A kernel or module source tree for the dump (repeatable).", metavar="DIR"),
    ] = None,
    dmesg: Annotated[
        list[Path] | None, typer.Option("--dmesg", help="A kernel log file (repeatable).", metavar="FILE")
    ] = None,
    store: Annotated[
        Path | None, typer.Option("--store", help="A slab-watch store (SQLite) to analyse for leaks.", metavar="PATH")
    ] = None,
    trace: Annotated[
        list[Path] | None,
        typer.Option("--trace", help="An ftrace/trace-cmd/perf trace or LTTng directory (repeatable).", metavar="PATH"),
    ] = None,
    profile: Annotated[
        list[Path] | None,
        typer.Option(
            "--profile",
            help="A CPU profile: perf.data, perf script text or folded stacks (repeatable).",
            metavar="FILE",
        ),
    ] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Also write the report as JSON (kforensic.report/1).", metavar="FILE")
    ] = None,
    html_out: Annotated[
        Path | None, typer.Option("--html", help="Also write a self-contained HTML page.", metavar="FILE")
    ] = None,
    digest: Annotated[
        Path | None, typer.Option("--digest", help="Also write a size-bounded JSON digest.", metavar="FILE")
    ] = None,
    digest_bytes: Annotated[
        int, typer.Option("--digest-bytes", help="Size bound of the digest.", min=512, metavar="BYTES")
    ] = 8192,
    fmt: FormatOption = OutputFormat.MD,
    output: OutputOption = None,
    fail_on: FailOnOption = None,
    debug: DebugOption = False,
    force: ForceOption = False,
) -> None:
    """Run every analysis the inputs allow and merge the findings into one incident report."""
    from forensics.pipelines import sources as analyses
    from forensics.pipelines.report import build_story, load_findings_file

    files = [*(from_files or []), *(extra or [])]
    if not (files or vmcore or dmesg or store or trace or profile):
        raise UsageError(
            "report needs at least one input",
            hint="kforensic report --vmcore DUMP --dmesg LOG --store STORE --trace FILE, or --from a.json b.json",
        )
    stdin_read_once(("--dmesg", dmesg), ("--trace", trace), ("--profile", profile), ("--from", files))
    distinct_outputs(("-o", output), ("--json", json_out), ("--html", html_out), ("--digest", digest))
    distinct_inputs("--dmesg", dmesg)
    distinct_inputs("--from", files)
    plots_dir = _plots_dir(output if fmt.links_files else None, html_out)
    parts: list[SourceAnalysis] = []
    if vmcore is not None:
        parts.append(
            analyses.analyse_vmcore(
                vmcore, vmlinux, tuple(module_debug or ()), tuple(debug_dir or ()), tuple(source_dir or ())
            )
        )
    if dmesg:
        parts.append(analyses.analyse_dmesg(tuple(dmesg)))
    if store is not None:
        parts.append(analyses.analyse_store(store, plots_dir))
    # The kernel log beside a trace says the kernel's preemption model, which sets an RT task's promise.
    preemption = analyses.log_preemption(tuple(dmesg)) if dmesg and trace else ""
    parts += [analyses.analyse_trace(t, plots_dir, preemption) for t in trace or ()]
    parts += [analyses.analyse_profile(p) for p in profile or ()]
    write_figures(figure for part in parts for figure in part.figures)
    story = build_story(parts, [load_findings_file(p) for p in files], "kforensic " + shlex.join(sys.argv[1:]))
    _write_extras(story, json_out, html_out, digest, digest_bytes)
    from forensics.report.story import StoryRenderer

    deliver(render(StoryRenderer(), story, fmt, output), output)
    raise typer.Exit(int(exit_status(story.incident, fail_on)))


def _write_extras(
    story: "IncidentStory", json_out: Path | None, html_out: Path | None, digest: Path | None, digest_bytes: int
) -> None:
    from forensics.output import write_atomic
    from forensics.report.digest import build_digest
    from forensics.report.story import render_story_html, story_to_dict

    if json_out is not None:
        doc = story_to_dict(story, _base(json_out))
        write_atomic(json_out, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    if html_out is not None:
        write_atomic(html_out, render_story_html(story, _base(html_out)))
    if digest is not None:
        doc = build_digest(story.incident, story.summary, story.timeline, story.hypotheses, digest_bytes)
        write_atomic(digest, json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n")


def register(app: typer.Typer) -> None:
    """Add the command to the CLI."""
    app.command("report", epilog=EXAMPLE, help=f"{report.__doc__}")(report)
