"""Running each analysis the incident report has input for, the way its own command would.

Each function returns a :class:`SourceAnalysis`: the incident of that input,
its details as its own command renders them in markdown, the plots it wrote
and the command line that reproduces it.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from forensics.model import BootTime, Incident, NotAvailable
from forensics.report.story import SourceSection


@dataclass(frozen=True)
class SourceAnalysis:
    """One input's analysis, ready to merge into the incident report."""

    incident: Incident
    section: SourceSection
    plots: tuple[tuple[str, Path], ...]
    command: str


def _cmd(*parts: str | Path) -> str:
    return " ".join(shlex.quote(str(p)) for p in parts)


def analyse_vmcore(
    path: Path,
    vmlinux: Path | None,
    module_debug: tuple[Path, ...],
    debug_dirs: tuple[Path, ...],
    source_dirs: tuple[Path, ...] = (),
) -> SourceAnalysis:
    """``kforensic vmcore``: the dump, with the kernel log beside it."""
    from forensics.pipelines.vmcore import analyse_dump
    from forensics.report.vmcore import render_vmcore_markdown
    from forensics.vmcore.program import DebugInfoRequest

    result = analyse_dump(path, DebugInfoRequest(vmlinux, debug_dirs, module_debug, source_dirs))
    details = render_vmcore_markdown(result).split("\n## Findings (incident)", 1)[0]
    args: list[str | Path] = ["kforensic", "vmcore", path]
    if vmlinux:
        args += ["--vmlinux", vmlinux]
    for m in module_debug:
        args += ["--module-debug", m]
    for d in debug_dirs:
        args += ["--debug-dir", d]
    for d in source_dirs:
        args += ["--source-dir", d]
    return SourceAnalysis(result.incident, SourceSection(f"vmcore {path}", details), (), _cmd(*args))


def analyse_dmesg(paths: tuple[Path, ...]) -> SourceAnalysis:
    """``kforensic dmesg``: every report in the kernel logs."""
    from forensics.pipelines.dmesg import build_incident, triage_file
    from forensics.report import OutputFormat
    from forensics.report.dmesg import render_table

    results = [triage_file(str(p)) for p in paths]
    incident = build_incident(results)
    table = render_table(results, OutputFormat.MD)
    return SourceAnalysis(
        incident,
        SourceSection("kernel logs " + ", ".join(str(p) for p in paths), table),
        (),
        _cmd("kforensic", "dmesg", *paths),
    )


def store_boot_time(store_path: Path) -> BootTime | NotAvailable:
    """When the sampled kernel booted: the last sample's wall time minus its uptime."""
    from collectors.slabstore import SlabStore

    with SlabStore.open(store_path, readonly=True) as store:
        rows = [s for s in store.samples() if isinstance(s.uptime, float)]
    if not rows:
        return NotAvailable("the store's samples carry no uptime")
    last = rows[-1]
    assert isinstance(last.uptime, float)
    return BootTime(last.wall - last.uptime, 0.5, "slab store: sample wall time minus /proc/uptime")


def analyse_store(store_path: Path, plots_dir: Path | None) -> SourceAnalysis:
    """``kforensic leaks``: leak-shaped growth in a slab-watch store."""
    from dataclasses import replace

    from forensics.pipelines.leaks import analyse_store as leaks_of_store
    from forensics.report.leaks import render_markdown

    result = leaks_of_store(store_path, plots_dir=plots_dir)
    incident = replace(result.incident, boot_time=store_boot_time(store_path))
    plots = tuple((f"{p.kind} {p.name}", p.path) for p in result.plots)
    # The table only: the report shows the plots and the findings in sections of its own.
    table = render_markdown(result, None).split("\n## Plots\n", 1)[0].split("\n# kforensic incident report", 1)[0]
    return SourceAnalysis(
        incident,
        SourceSection(f"slab store {store_path}", table),
        plots,
        _cmd("kforensic", "leaks", "--store", store_path),
    )


def analyse_trace(path: Path, plots_dir: Path | None) -> SourceAnalysis:
    """``kforensic trace``: scheduling and latency findings of one trace (text or LTTng directory), its PNGs.

    An LTTng session with user-space events adds its request spans (statistics, slow spans explained).
    """
    from forensics.pipelines.spans import SpanOptions
    from forensics.pipelines.trace import analyse_trace_file
    from forensics.report.trace import render_markdown, span_markdown

    png = None if plots_dir is None else plots_dir / f"trace-{path.name}.png"
    result = analyse_trace_file(str(path), png=png)
    plots: tuple[tuple[str, Path], ...] = ((f"per-CPU timeline of {path.name}", png),) if png is not None else ()
    if result.spans is not None and plots_dir is not None and result.spans.spans:
        hist, gantt = plots_dir / f"spans-{path.name}.png", plots_dir / f"gantt-{path.name}.png"
        result = analyse_trace_file(str(path), span_opts=SpanOptions(hist_png=hist, gantt_png=gantt))
        plots += ((f"span latency histogram of {path.name}", hist), ("thread states around the slowest spans", gantt))
    section = render_markdown(result.analysis, result.parse, result.source, 15, result.notes) + span_markdown(
        result.spans
    )
    return SourceAnalysis(
        result.incident, SourceSection(f"trace {path}", section), plots, _cmd("kforensic", "trace", path)
    )


def analyse_profile(path: Path) -> SourceAnalysis:
    """``kforensic profile``: hotspots of a CPU profile and what they mean."""
    from forensics.pipelines.profile import analyse_profile as profile_of
    from forensics.report import OutputFormat
    from forensics.report.profile import render_tables

    result = profile_of(str(path))
    table = render_tables(result, OutputFormat.MD, 10).replace("# CPU profile\n\n", "", 1)
    return SourceAnalysis(
        result.incident, SourceSection(f"CPU profile {path}", table), (), _cmd("kforensic", "profile", path)
    )
