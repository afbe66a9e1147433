"""``kforensic report``'s body and its table of options, without typer.

:func:`run_report` is what the command typer declares (:mod:`forensics.commands.report`) runs, and what
:func:`forensics.cli.main` runs itself, with the values :data:`LINE` parses, when a command line is made only of
the options and arguments the table declares (:mod:`forensics.commandline`): importing typer and click and
building the command was ~40 of the ~120 ms of CPU of a ``report --from`` run (issue #28).  The analyses' modules
are imported by the body, not here.
"""

import json
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from forensics.commandline import Argument, CommandLine, Option, integer, path
from forensics.commands.shared import (
    DEBUG,
    FAIL_ON,
    FORCE,
    OUTPUT,
    distinct_inputs,
    distinct_outputs,
    format_option,
    stdin_read_once,
)
from forensics.errors import DebugInfoMismatchError, ExitCode, UsageError
from forensics.model import Incident, InputKind, Severity
from forensics.report.formats import OutputFormat

if TYPE_CHECKING:
    from forensics.pipelines.sources import Given, Traced, Unusable
    from forensics.types.results import IncidentStory, SourceAnalysis


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


def run_report(
    from_files: list[Path] | None,
    extra: list[Path] | None,
    vmcore: Path | None,
    vmlinux: Path | None,
    module_debug: list[Path] | None,
    debug_dir: list[Path] | None,
    source_dir: list[Path] | None,
    dmesg: list[Path] | None,
    store: Path | None,
    trace: list[Path] | None,
    profile: list[Path] | None,
    json_out: Path | None,
    html_out: Path | None,
    digest: Path | None,
    digest_bytes: int,
    fmt: OutputFormat,
    output: Path | None,
    fail_on: Severity | None,
    debug: bool,
    force: bool,
) -> int:
    """Run every analysis the inputs allow, merge the findings into one report and deliver it; the exit status."""
    from forensics.delivery import deliver, exit_status, write_figures
    from forensics.pipelines import sources as analyses
    from forensics.pipelines.report import build_story
    from forensics.report.formats import render

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
    from collectors.slabstore import resolve_store_path
    from forensics.output import check_output_directories, check_outputs_not_named_inputs

    # As leaks and slab-watch read --store: a directory means the slab-watch.sqlite in it.
    store_file = resolve_store_path(store) if store is not None else None
    # (in the order the inputs are read and the outputs written: the error names the pair the late check named)
    named = [vmcore, *(dmesg or ()), store_file, *(trace or ()), *(profile or ()), *files]
    check_outputs_not_named_inputs((json_out, html_out, digest, output), named)
    check_output_directories((json_out, html_out, digest, output))
    plots_dir = _plots_dir(output if fmt.links_files else None, html_out)
    parts, loaded, dropped, traced = _analyse(
        analyses.Given(vmcore, vmlinux, tuple(module_debug or ()), tuple(debug_dir or ()), tuple(source_dir or ()),
                       tuple(dmesg or ()), store_file, tuple(trace or ()), tuple(profile or ()), tuple(files)),
        plots_dir,
    )  # fmt: skip
    unused = tuple(u.incident() for u in dropped)
    command = "kforensic " + shlex.join(sys.argv[1:])
    story = build_story(parts, loaded, command, unused)
    # A trace the story sets apart (another boot, host or kernel) is not judged with the log's kernel facts: its
    # findings are what it says alone.  The 6.12 log's release and preemption model judged a trace of another
    # machine, set apart as "cannot come from the crashed boot", by EEVDF slices: 16 findings where it has 11
    # (review 7, H).  Known only once the story is built: those traces are analysed again, without them.
    # A trace that names another kernel release than the logs (an LTTng session's metadata, a trace.dat's UNAME) is
    # of another boot or machine whatever its findings: a healthy CTF trace of a 3.10 kernel was judged with a 6.18
    # log's "Dynamic Preempt: none" and release, and its rerun command carried them (ue22 #3).
    if traced.preemption or traced.release:
        redo = [(i, t, why) for i, t in traced.at if (why := _not_the_logs_kernel(parts[i], story.apart, traced))]
        for i, t, why in redo:
            parts[i] = _judged_alone(
                analyses.analyse_trace(t, plots_dir, others=tuple(u for _, u in traced.at)),
                traced.preemption,
                traced.release,
                why,
            )
        story = build_story(parts, loaded, command, unused) if redo else story
    write_figures(figure for part in parts for figure in part.figures)
    _write_extras(story, json_out, html_out, digest, digest_bytes)
    from forensics.report.story import StoryRenderer, own_incident

    deliver(render(StoryRenderer(), story, fmt, output), output)
    # Findings of inputs set apart (another boot, host or release) are not this incident's: --fail-on judges its own.
    status = exit_status(own_incident(story), fail_on)
    if dropped and status == ExitCode.OK:
        # An input given could not be used (a typo'd --vmlinux, an empty or garbled dump, a log or store that is
        # none): the report of the other inputs is written, but a script must not take the run for a clean one (it
        # was exit 0, review ue20 #7).  Findings at --fail-on keep exit 1: they are the alert, and the warnings above
        # name the inputs.
        names = " and ".join(f"{OPTION[u.kind]} {u.path}" for u in dropped)
        # (a vmlinux alone dropped: the dump it was given for was read, its kernel log only)
        rest = "the dump's kernel log" if all(u.kind is InputKind.VMLINUX for u in dropped) else "the other inputs"
        print(
            f"kforensic: error: {names} could not be used: the report was written from {rest} (exit 3)",
            file=sys.stderr,
        )
        return int(ExitCode.BAD_INPUT)
    return int(status)


#: The option that gives each kind of input (the warnings and the last line name an input dropped by it).
OPTION = {
    InputKind.DUMP: "--vmcore",
    InputKind.VMLINUX: "--vmlinux",
    InputKind.LOG: "--dmesg",
    InputKind.STORE: "--store",
    InputKind.TRACE: "--trace",
    InputKind.PROFILE: "--profile",
    InputKind.FINDINGS: "--from",
    InputKind.KDUMP: "--from",
}


def _analyse(
    given: "Given", plots_dir: Path | None
) -> tuple[list["SourceAnalysis"], list[Incident], list["Unusable"], "Traced"]:
    """Every analysis the inputs allow, in the order they are given on the table of options: the analyses, the
    findings files read, the inputs that could not be used (each its own command's one-line error) and where the
    traces' analyses are.

    An input that cannot be used (missing, a directory, another format, cut short; a dump of another kernel's
    vmlinux) beside one that can is said and left out: the report is of the others (before, any one refused the
    whole report, exit 3).  When none can be used there is no report: the last one's error is raised, the ones
    before it said as warnings, as ``report`` said them before.
    """
    from functools import partial

    from forensics.pipelines import sources as analyses
    from forensics.pipelines.report import load_findings_file
    from forensics.pipelines.sources import Traced, Unusable, attempt

    parts: list[SourceAnalysis] = []
    dropped: list[Unusable] = []

    def keep(result: "SourceAnalysis | Unusable") -> None:
        if isinstance(result, Unusable):
            dropped.append(result)
        else:
            parts.append(result)

    if given.vmcore is not None:
        dump = partial(analyses.analyse_vmcore, given.vmcore, given.vmlinux, given.module_debug, given.debug_dirs,
                       given.source_dirs)  # fmt: skip
        opened = attempt(InputKind.DUMP, given.vmcore, dump)
        if isinstance(opened, Unusable) and isinstance(opened.error, DebugInfoMismatchError) and given.vmlinux:
            # Another kernel's vmlinux: the dump's state cannot be read with it, its kernel log still can (VMCOREINFO
            # locates it, no symbols needed, as makedumpfile --dump-dmesg reads it).  It was set aside whole.
            wrong = Unusable(InputKind.VMLINUX, given.vmlinux, opened.error)
            opened = attempt(InputKind.DUMP, given.vmcore, partial(dump, wrong=opened.error))
            # The log not read either: the dump alone is said, its error naming the vmlinux after what stopped the log
            # (a cut first: the vmlinux's line came first, then the cut's at its end, ue21 #8).
            dropped += [] if isinstance(opened, Unusable) else [wrong]
        keep(opened)
    logs: tuple[Path, ...] = ()
    if given.dmesg:
        read, bad = analyses.analyse_usable_logs(given.dmesg)
        dropped += bad
        if read is not None:
            parts.append(read)
            logs = tuple(p for p in given.dmesg if all(u.path != p for u in bad))
    if given.store is not None:
        store = attempt(InputKind.STORE, given.store, partial(analyses.analyse_store, given.store, plots_dir))
        # (the store's kernel log records, read as a kernel log unless a --dmesg log is of their boot)
        parts += analyses.store_records(store, logs) if not isinstance(store, Unusable) else ()
        dropped += [store] if isinstance(store, Unusable) else []
    # The kernel log beside a trace says the kernel's preemption model, which sets an RT task's promise, and its
    # release, whether the fair class is CFS or EEVDF (a text trace names none).
    preemption, release = analyses.log_kernel(logs) if logs and given.trace else ("", "")
    # The text traces first: a session's spans name the kernel trace beside them they are not joined with, and one
    # that could not be used is none (they said "not joined with trace junk.txt: its clock is not known ...").
    from collectors.ctf.reader import is_ctf

    tried: dict[int, SourceAnalysis | Unusable] = {}
    for n in sorted(range(len(given.trace)), key=lambda n: is_ctf(str(given.trace[n]))):
        others = tuple(t for k, t in enumerate(given.trace) if not isinstance(tried.get(k), Unusable))
        run = partial(analyses.analyse_trace, given.trace[n], plots_dir, preemption, release, others)
        tried[n] = attempt(InputKind.TRACE, given.trace[n], run)
    at: list[tuple[int, Path]] = []
    for n, t in enumerate(given.trace):
        at += [] if isinstance(tried[n], Unusable) else [(len(parts), t)]
        keep(tried[n])
    for p in given.profile:
        keep(attempt(InputKind.PROFILE, p, partial(analyses.analyse_profile, p)))
    loaded: list[Incident] = []
    for f in given.files:
        found = attempt(InputKind.FINDINGS, f, partial(load_findings_file, f))
        if isinstance(found, Unusable):
            dropped.append(found)
        else:
            loaded.append(found)
    if dropped and not parts and not loaded:
        for u in dropped[:-1]:
            print(f"kforensic: warning: {OPTION[u.kind]} {u.path} not used: {u.error.message}", file=sys.stderr)
        raise dropped[-1].error
    for u in dropped:
        print(f"kforensic: warning: {OPTION[u.kind]} {u.path} not used: {u.error.message}", file=sys.stderr)
    return parts, loaded, dropped, Traced(tuple(at), preemption, release)


#: Why a trace set apart by the story was not judged with the kernel log's facts (review 8, 18).
SET_APART_WHY = (
    "the trace is set apart from the boot this report tells; it may still come from another boot of that kernel the"
    " log shows, which its times alone cannot prove"
)


def _not_the_logs_kernel(part: "SourceAnalysis", apart: frozenset[str], traced: "Traced") -> str:
    """Why a trace's analysis must not use the kernel log's facts, or "": it names another kernel release than the
    log (its own metadata says which kernel it recorded), or the story set one of its findings apart."""
    named = part.incident.kernel_release
    if traced.release and isinstance(named, str) and named != traced.release:
        return f"the trace names kernel {named} (its own metadata), not the log's {traced.release}"
    return SET_APART_WHY if any(f.id in apart for f in part.incident.findings) else ""


def _judged_alone(part: "SourceAnalysis", preemption: str, release: str, why: str) -> "SourceAnalysis":
    """A trace set apart, analysed without the log's kernel facts, says so under "could not judge": its baselines
    read "assumed", and why the log's release was not taken stayed unsaid where its times fit another boot of the
    log (review 8, 18)."""
    from dataclasses import replace

    facts = " and ".join(x for x in (f"release {release}" if release else "", f"preemption model {preemption}"
                                     if preemption else "") if x)  # fmt: skip
    note = f"the kernel log's {facts}: not used, as {why}"
    examined = tuple(replace(e, could_not=(*e.could_not, note)) for e in part.incident.examined)
    return replace(part, incident=replace(part.incident, examined=examined))


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
        doc = build_digest(
            story.incident, story.summary, story.timeline, story.hypotheses, digest_bytes, dict(story.apart_why)
        )
        write_atomic(digest, json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n")


#: The options and arguments of :func:`forensics.commands.report.report`, as typer declares them (a test compares).
LINE = CommandLine(
    "report",
    [
        Option(("--from",), "from_files", path, multiple=True),
        Option(("--vmcore",), "vmcore", path),
        Option(("--vmlinux",), "vmlinux", path),
        Option(("--module-debug",), "module_debug", path, multiple=True),
        Option(("--debug-dir",), "debug_dir", path, multiple=True),
        Option(("--source-dir",), "source_dir", path, multiple=True),
        Option(("--dmesg",), "dmesg", path, multiple=True),
        Option(("--store",), "store", path),
        Option(("--trace",), "trace", path, multiple=True),
        Option(("--profile",), "profile", path, multiple=True),
        Option(("--json",), "json_out", path),
        Option(("--html",), "html_out", path),
        Option(("--digest",), "digest", path),
        Option(("--digest-bytes",), "digest_bytes", integer(512), 8192),
        format_option(OutputFormat.MD),
        OUTPUT,
        FAIL_ON,
        DEBUG,
        FORCE,
    ],
    [Argument("extra", path, many=True)],
    run_report,
)
