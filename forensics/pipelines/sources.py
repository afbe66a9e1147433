"""Running each analysis the incident report has input for, through the pipeline its own command runs.

Each function returns a :class:`~forensics.types.results.SourceAnalysis`: the
incident of that input, its result (the report renders it as its own command's
document, nested under a heading of its own), the plots it shows (and the
figures to draw for them) and the command line that reproduces it.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TypeVar

from forensics.errors import DebugInfoMismatchError, InputError
from forensics.model import BootTime, Examined, Incident, InputKind, NotAvailable, SourceRecord
from forensics.types.dmesg_result import DmesgResult, SourceResult
from forensics.types.profile_result import ProfileResult
from forensics.types.results import DumpLogResult, LeaksResult, SourceAnalysis, VmcoreResult
from forensics.types.slab import SampleRow


def _cmd(*parts: str | Path) -> str:
    return " ".join(shlex.quote(str(p)) for p in parts)


def analyse_vmcore(
    path: Path,
    vmlinux: Path | None,
    module_debug: tuple[Path, ...],
    debug_dirs: tuple[Path, ...],
    source_dirs: tuple[Path, ...] = (),
    wrong: DebugInfoMismatchError | None = None,
) -> SourceAnalysis:
    """``kforensic vmcore``: the dump, with the kernel log beside it; without the kernel's debug info, the dump's
    kernel log alone, as ``kforensic vmcore`` reads it then.  ``wrong``: the ``vmlinux`` given is another kernel's
    (the error opening the dump with it raised): the dump's kernel log alone is read, as without debug info."""
    from forensics.errors import NoDebugInfoError
    from forensics.pipelines.vmcore import analyse_dump_log, analyse_dump_or_log
    from forensics.vmcore.request import DebugInfoRequest

    result: VmcoreResult | DumpLogResult
    if wrong is None:
        result = analyse_dump_or_log(path, DebugInfoRequest(vmlinux, debug_dirs, module_debug, source_dirs))
    else:
        result = analyse_dump_log(path, NoDebugInfoError(str(path), wrong.message, wrong.hint or ""))
        vmlinux = None  # (the command that reproduces it: without the vmlinux that is not the dump's)
    args: list[str | Path] = ["kforensic", "vmcore", path]
    if vmlinux:
        args += ["--vmlinux", vmlinux]
    for m in module_debug:
        args += ["--module-debug", m]
    for d in debug_dirs:
        args += ["--debug-dir", d]
    for d in source_dirs:
        args += ["--source-dir", d]
    title = f"vmcore {path}" + (" (its kernel log only: no debug info)" if isinstance(result, DumpLogResult) else "")
    # What the dump's analysis read is its incident's (forensics/pipelines/vmcore.py), as the log-only analysis's.
    return SourceAnalysis(result.incident, title, result, (), _cmd(*args))


T = TypeVar("T")


@dataclass(frozen=True)
class Given:
    """The inputs a report is given, with the debug info a dump is opened with."""

    vmcore: Path | None
    vmlinux: Path | None
    module_debug: tuple[Path, ...]
    debug_dirs: tuple[Path, ...]
    source_dirs: tuple[Path, ...]
    dmesg: tuple[Path, ...]
    store: Path | None
    trace: tuple[Path, ...]
    profile: tuple[Path, ...]
    files: tuple[Path, ...]


@dataclass(frozen=True)
class Traced:
    """Where a report's trace analyses are among its analyses (``at``: index and trace, the traces that could be
    used), and the kernel facts the logs beside them stated (:func:`log_kernel`), which judged them."""

    at: tuple[tuple[int, Path], ...]
    preemption: str
    release: str


@dataclass(frozen=True)
class Unusable:
    """An input ``report`` could not use, and the error its own command refuses it with (``error.message``: its one
    line)."""

    kind: InputKind
    path: Path
    error: InputError

    def incident(self) -> Incident:
        """No findings; under "Examined" a not-available line with why, and that message as its source's error, so
        that the report goes on with the other inputs and says which it went without."""
        try:
            size: int | NotAvailable = self.path.stat().st_size
        except (OSError, ValueError) as exc:  # (ValueError: a path with a NUL byte)
            size = NotAvailable(getattr(exc, "strerror", None) or str(exc))
        dropped = NotAvailable(f"the {self.kind} could not be used")
        return Incident(
            host=dropped,
            kernel_release=dropped,
            window=dropped,
            sources=(SourceRecord(str(self.path), size, NotAvailable("not read"), 0.0, error=self.error.message),),
            findings=(),
            examined=(
                Examined(
                    f"{self.kind} {self.path}",
                    unusable=NotAvailable(self.error.message),
                    input=self.kind,
                    hint=self.error.hint or "",
                ),
            ),
        )


def attempt(kind: InputKind, path: Path, analyse: Callable[[], T]) -> T | Unusable:
    """``analyse()``, or, when it refuses its input (an :class:`InputError`: missing, a directory, another format,
    cut short), the input as :class:`Unusable`: a report goes on with its other inputs."""
    try:
        return analyse()
    except InputError as exc:
        return Unusable(kind, path, exc)


def analyse_dmesg(paths: tuple[Path, ...]) -> SourceAnalysis:
    """``kforensic dmesg``: every report in the kernel logs."""
    from forensics.pipelines.dmesg import triage_file

    return _dmesg_of(paths, [triage_file(str(p)) for p in paths])


def analyse_usable_logs(paths: tuple[Path, ...]) -> tuple[SourceAnalysis | None, tuple[Unusable, ...]]:
    """:func:`analyse_dmesg` of the logs that can be read, and those that cannot (missing, a directory, not a kernel
    log), each with its one-line error: one bad log of several leaves the others read (None: none could be)."""
    from forensics.pipelines.dmesg import triage_file

    tried = [(p, attempt(InputKind.LOG, p, partial(triage_file, str(p)))) for p in paths]
    bad = tuple(r for _, r in tried if isinstance(r, Unusable))
    good = [(p, r) for p, r in tried if not isinstance(r, Unusable)]
    if not good:
        return None, bad
    return _dmesg_of(tuple(p for p, _ in good), [r for _, r in good]), bad


def _dmesg_of(paths: tuple[Path, ...], results: list[SourceResult]) -> SourceAnalysis:
    from forensics.pipelines.dmesg import build_incident

    incident = build_incident(results)
    return SourceAnalysis(
        incident,
        "kernel logs " + ", ".join(str(p) for p in paths),
        # No hypotheses of its own: the report ranks every input's findings together.
        DmesgResult(tuple(results), incident, ()),
        (),
        _cmd("kforensic", "dmesg", *paths),
    )


def store_boot_time(store_path: Path) -> BootTime | NotAvailable:
    """When the sampled kernel booted: the last sample's wall time minus its uptime.  Of a store of several boots
    it is the last boot's, said so with the others' (the report's table gave the last one's alone beside a time
    window spanning both, ue23 #10's store)."""
    from collectors.slabstore import SlabStore
    from forensics.units import iso_utc

    with SlabStore.open(store_path, readonly=True) as store:
        rows = [s for s in store.samples() if isinstance(s.uptime, float)]
    if not rows:
        return NotAvailable("the store's samples carry no uptime")
    last = rows[-1]
    assert isinstance(last.uptime, float)
    basis = "slab store: sample wall time minus /proc/uptime"
    boots: dict[str | None, list[int]] = {}
    for row in rows:
        boots.setdefault(row.boot_id, []).append(row.id)
    if len(boots) > 1:
        firsts = {row.boot_id: row for row in reversed(rows)}  # each boot's first sample
        others = [
            f"boot {i} (samples {ids[0]} to {ids[-1]}) at {iso_utc(firsts[b].wall - (firsts[b].uptime or 0.0))}"
            for i, (b, ids) in enumerate(boots.items(), 1)
            if b != last.boot_id
        ]
        mine = boots[last.boot_id]
        basis += (
            f", of the last of its {len(boots)} boots (samples {mine[0]} to {mine[-1]}); the others booted: "
            + ", ".join(others)
        )
    wall, uncertainty = _boot_estimate([r for r in rows if r.boot_id == last.boot_id])
    return BootTime(wall, uncertainty, basis)


def _boot_estimate(rows: list[SampleRow]) -> tuple[float, float]:
    """The boot's wall time from one boot's samples, and its uncertainty: every sample's wall minus uptime, the
    walls read to their resolution (an imported snapshot's ``date=`` is whole seconds: the time it was taken is up to
    1 s later), the spread between samples (the guest's uptime drifts against the host's clock) kept in the
    interval, ±0.5 s at least.  The last sample alone, ±0.5 s, put the demo's boot 0.81 s from its first sample's
    estimate and its crash 1 s before the dump's CRASHTIME (ue24 F14)."""
    bounds = [r.wall - r.uptime for r in rows if r.uptime is not None]
    resolution = 1.0 if all(r.wall == int(r.wall) for r in rows) else 0.0
    low, high = min(bounds), max(bounds) + resolution
    return (low + high) / 2, max(0.5, (high - low) / 2)


def analyse_store(store_path: Path, plots_dir: Path | None) -> SourceAnalysis:
    """``kforensic leaks``: leak-shaped growth in a slab-watch store."""

    from forensics.pipelines.leaks import analyse_store as leaks_of_store

    result = leaks_of_store(store_path, plots_dir=plots_dir)
    incident = replace(result.incident, boot_time=store_boot_time(store_path))
    plots = tuple((f"{p.kind} {p.name}", p.path) for p in result.plots)
    return SourceAnalysis(
        incident,
        f"slab store {store_path}",
        result,
        plots,
        _cmd("kforensic", "leaks", "--store", store_path),
        result.figures,
    )


def store_records(store: SourceAnalysis, logs: tuple[Path, ...]) -> tuple[SourceAnalysis, ...]:
    """The store's analysis, then the analysis of its kernel log records of the stored boot as a kernel log
    (forensics/pipelines/store_log.py), unless one of ``logs`` is of that boot (it prints their lines at their
    times: read there, not twice).  The store's "Examined" says what became of its records."""
    from collectors.inputs import STDIN_NAME
    from collectors.log_boots import read_boots
    from detectors.incident.boot_identity import check_boot
    from forensics.errors import KforensicError
    from forensics.pipelines.store_log import (
        analyse_stored_log,
        export_command,
        read_stored_log,
        reference,
        stored_boot,
    )

    assert isinstance(store.details, LeaksResult)
    path = store.details.store
    log = read_stored_log(path)
    notes: list[str] = []
    same = None
    if log is not None and log.rows:
        boot, ref = stored_boot(log), reference(log)
        times = [x.seconds for x in boot.lines]
        for given in logs:
            if str(given) == STDIN_NAME:  # (read once, by its own analysis)
                continue
            try:
                check = check_boot(boot, read_boots(str(given), times), ref)
            except KforensicError:  # (unreadable since: its own analysis said so; the records are read then)
                continue
            if check is not None and check.other is False:
                same = (given, check)
                break
        what = f"kernel log records of {ref.boot} in store {path} (table kmsg, read-only): {len(log.rows):,} record(s)"
        notes.append(
            f"{what}: the boot of {same[0]} ({same[1].why}): read there, not twice"
            if same is not None
            else f"{what}: read as a kernel log, cited as {log.name}"
        )
    else:
        notes.append(f"kernel log records in store {path} (table kmsg): none of the boot of its last sample")
    others = () if log is None else log.others
    could_not = tuple(
        f"the kernel log records of boot {b} in the store ({n:,} record(s)): not analysed, the report's boot time "
        f"is of another boot; give them with --dmesg (`{export_command(path, b)} > kmsg-{b[:8]}.log`)"
        for b, n in others
    )
    if (log is None or not log.rows) and not could_not:
        return (store,)  # (no record at all: a store slab-import made, or a watcher that could not read /dev/kmsg)
    extra = Examined(notes[0], (), could_not)
    parts = (replace(store, incident=replace(store.incident, examined=(*store.incident.examined, extra))),)
    if log is None or not log.rows or same is not None:
        return parts
    result = analyse_stored_log(log)
    # (the stored boot's records are of the store's boot: its boot time is theirs)
    incident = replace(result.incident, boot_time=store.incident.boot_time)
    title = f"kernel log records of the stored boot {log.boot_id} in store {path}"
    return (
        *parts,
        SourceAnalysis(incident, title, result, (), f"{export_command(path, log.boot_id)} | kforensic dmesg -"),
    )


def log_kernel(paths: tuple[Path, ...]) -> tuple[str, str]:
    """The preemption model (``Dynamic Preempt: none``, the banner's build flags) and the release (the boot banner)
    the kernel logs state, each where they agree on one, else "" (none stated, or several boots of different kernels:
    a trace is not tied to one).  Each log's head is read once for both."""
    from collectors.log_identity import read_identity

    identities = [read_identity(str(p)) for p in paths if p.is_file()]
    models = {m for i in identities for m in i.preemption}
    releases = {r for i in identities for r in i.releases}
    return (models.pop() if len(models) == 1 else "", releases.pop() if len(releases) == 1 else "")


def analyse_trace(
    path: Path, plots_dir: Path | None, preemption: str = "", kernel_release: str = "", others: tuple[Path, ...] = ()
) -> SourceAnalysis:
    """``kforensic trace``: scheduling and latency findings of one trace (text or LTTng directory), its plots.

    An LTTng session with user-space events adds its request spans (statistics, slow spans explained).
    ``preemption``: the kernel's preemption model, ``kernel_release`` its release, from the kernel log given beside
    the trace; ``others``: the report's other traces (a text kernel trace is not joined with a user-space session:
    its clock is not known to be CLOCK_MONOTONIC, and the spans say so, with the command that joins them).
    """
    from collectors.ctf.reader import is_ctf
    from forensics.pipelines.spans import SpanOptions, span_plot_paths
    from forensics.pipelines.trace import analyse_trace_file

    png = None if plots_dir is None else plots_dir / f"trace-{path.name}.png"
    text = next((o for o in others if o != path and not is_ctf(str(o))), None)
    # Review 11 #8: "(no kernel trace)" beside the kernel trace given in the same report.
    no_kernel = (
        ""
        if text is None
        else f"not joined with trace {text}: its clock is not known to be CLOCK_MONOTONIC (`kforensic trace {text} "
        f"--kernel-clock mono --spans {path}` joins them)"
    )
    result = analyse_trace_file(
        str(path),
        png=png,
        span_opts=SpanOptions(plots_dir_if_spans=plots_dir, no_kernel=no_kernel),
        preemption=preemption,
        kernel_release=kernel_release,
    )
    plots: tuple[tuple[str, Path], ...] = ((f"per-CPU timeline of {path.name}", png),) if png is not None else ()
    if result.spans is not None and plots_dir is not None and result.spans.spans:
        hist, gantt = span_plot_paths(plots_dir, str(path))
        plots += ((f"span latency histogram of {path.name}", hist), ("thread states around the slowest spans", gantt))
    # "none or voluntary" (a banner without PREEMPT) is judged as either: --preempt none reproduces it
    declared: tuple[str, ...] = ("--preempt", preemption.split(maxsplit=1)[0]) if preemption else ()
    declared += ("--kernel-release", kernel_release) if kernel_release else ()
    command = _cmd("kforensic", "trace", path, *declared)
    return SourceAnalysis(result.incident, f"trace {path}", result, plots, command, result.figures)


def _profile_title(result: ProfileResult, path: Path) -> str:
    """The details' title: a CPU profile, or the profile of an event that is not CPU time (sched:sched_switch)."""
    sampled = result.hot.sampled
    return f"CPU profile {path}" if sampled.cpu_time else f"Profile of {sampled.name} ({sampled.unit}) {path}"


def analyse_profile(path: Path) -> SourceAnalysis:
    """``kforensic profile``: hotspots of a CPU profile and what they mean."""
    from forensics.pipelines.profile import analyse_profile as profile_of

    result = profile_of(str(path))
    return SourceAnalysis(result.incident, _profile_title(result, path), result, (), _cmd("kforensic", "profile", path))
