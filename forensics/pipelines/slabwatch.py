"""``kforensic slab-watch`` / ``slab-import``: what a run of samples ends with, and the systemd unit."""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from forensics import __version__
from forensics.errors import InputError, KforensicError
from forensics.model import Clock, Finding, Incident, NotAvailable, SourceRecord, Timestamp, TimeWindow
from forensics.types.results import RunReport, StoreExport

if TYPE_CHECKING:
    from collectors.slabstore import SlabStore


def plan_warning(root: Path, interval: float, seconds: float | None) -> str | None:
    """What slab-watch says at start of a plan that cannot give ``kforensic leaks`` full power (None: it can),
    with the MemTotal of the machine under ``root``: the rates it says are those leaks will say of the store.
    An unreadable MemTotal is judged as leaks judges a store without one."""
    from detectors.leaks.power import plan_warning as warning

    if seconds is None:
        return None
    from collectors.procfs import MEMINFO, Counters, mem_total_of, parse_meminfo, read_file

    read = read_file(root, MEMINFO)
    try:
        meminfo: Counters | NotAvailable = parse_meminfo(read.data or b"", str(root / MEMINFO))
    except InputError as exc:  # no counters: the watch itself says so when it samples
        meminfo = NotAvailable(exc.message)
    mem_total = mem_total_of(meminfo)
    return warning(interval, seconds, mem_total if isinstance(mem_total, int) and mem_total > 0 else None)


def leak_findings(store: SlabStore) -> tuple[tuple[Finding, ...], str, bool]:
    """The leak analysis of the whole store, and one line saying what it did.

    This is the plug-in point of the leak detectors:
    ``forensics.pipelines.leaks.findings_from_store(store, run_id)`` is called with the
    open store and ``run_id=None``: the whole store is analysed, not just the
    last run, since a restarted watcher continues one series.  Without that
    function, or when it has nothing to work on, the report is the summary
    alone, with no verdict made up.
    """
    try:
        from forensics.pipelines.leaks import findings_from_store as analyse
    except ImportError:  # the package, or its function, is missing from this installation
        return (), "leak analysis: not available in this kforensic", False
    try:
        findings = tuple(analyse(store, None))
    except KforensicError as exc:
        return (), f"leak analysis: not run ({exc.message})", False
    except Exception as exc:  # a bug in the analysis must not cost the summary of a day of sampling
        return (
            (),
            (
                f"leak analysis failed: {type(exc).__name__}: {exc} (a bug in kforensic; the samples are safe:"
                f" rerun {leaks_command(store.path)} --debug)"
            ),
            True,
        )
    said = f"leak analysis of the whole store: {len(findings)} finding(s); details: {leaks_command(store.path)}"
    return findings, said, False


def leaks_command(store: Path) -> str:
    """The command that analyses a store, ready to paste (the path shell-quoted where it needs it)."""
    return f"kforensic leaks --store {shlex.quote(str(store))}"


#: Why a sampling run read no slab cache.
NO_SLABINFO_SAMPLED = "no sample read /proc/slabinfo: it is readable by root only, and some kernels lack it"
#: Why an import holds no slab cache.
NO_SLABINFO_IMPORTED = "the imported files hold no /proc/slabinfo table"


def end_of_run_analysis(
    store: SlabStore, run_id: int | None, analyse: bool = True, no_slabinfo: str = NO_SLABINFO_SAMPLED
) -> RunReport:
    """Summarise a run (or the store) and run the leak analysis on the store: what a run ends with.

    ``no_slabinfo``: why no slab cache was read, when none was (a run sampling this machine, or an import)."""
    summary = store.summary(run_id)
    findings: tuple[Finding, ...] = ()
    failed = False
    if not analyse:
        analysis = f"leak analysis: skipped (--no-analysis); run {leaks_command(store.path)}"
    elif not summary.samples:
        analysis = "leak analysis: no samples"
    elif not summary.caches:
        # what kforensic leaks refuses ("no slab samples to analyse"): no verdict on caches never read
        analysis = f"leak analysis: not run: no slab samples to analyse ({no_slabinfo})"
    else:
        findings, analysis, failed = leak_findings(store)
    runs = [r for r in store.runs() if run_id is None or r.id == run_id]
    hosts = {r.host for r in runs if r.host}
    kernels = {r.kernel_release for r in runs if r.kernel_release}
    window: TimeWindow | NotAvailable = NotAvailable("the store has no samples")
    if isinstance(summary.first_wall, float) and isinstance(summary.last_wall, float):
        window = TimeWindow(Timestamp(summary.first_wall, Clock.WALL), Timestamp(summary.last_wall, Clock.WALL))
    size = store.path.stat().st_size
    incident = Incident(
        host=hosts.pop() if len(hosts) == 1 else NotAvailable("the store does not name one host"),
        kernel_release=kernels.pop() if len(kernels) == 1 else NotAvailable("the store does not name one kernel"),
        window=window,
        sources=(SourceRecord(str(store.path), size, NotAvailable("a store changes while it is written"), 0.0),),
        findings=findings,
        tool_version=__version__,
    )
    return RunReport(store.path, run_id, summary, incident, analysis, failed)


def systemd_unit(
    store: Path, interval: str, duration: str | None, require: bool, textfile_dir: Path | None = None
) -> str:
    """A ready systemd service running slab-watch unattended, niced, with only the store writable."""
    launcher = Path(sys.argv[0])
    exe = str(launcher.absolute()) if launcher.name == "kforensic" and launcher.is_file() else shutil.which("kforensic")
    command = [exe] if exe else [sys.executable, "-m", "forensics"]
    command += ["slab-watch", "--store", str(store), "--interval", interval]
    if duration is not None:
        command += ["--duration", duration]
    if require:
        command.append("--require-slabinfo")
    if textfile_dir is not None:
        command += ["--textfile-dir", str(textfile_dir)]
    from forensics.quoting import shell_single, systemd_arg, systemd_path

    # Every value is quoted the way systemd reads it (or refused when it holds a newline or a
    # control character): an option value can never add a line or a directive to the unit.
    exec_start = " ".join(systemd_arg(a, "--store" if a == str(store) else "argument") for a in command)
    directory = store.parent
    try:
        state = directory.relative_to("/var/lib")
    except ValueError:
        state = None
    if state is not None and str(state) != ".":
        # systemd creates a StateDirectory (0700) and keeps it writable under ProtectSystem=strict.
        writable = [f"StateDirectory={systemd_path(str(state), '--store')}", "StateDirectoryMode=0700"]
    else:
        # ReadWritePaths= must exist when the service starts: create it first (mkdir -m 0700).
        where = systemd_path(str(directory), "--store")
        writable = [f"# mkdir -m 0700 -p {shell_single(str(directory))}", f"ReadWritePaths={where}"]
    if textfile_dir is not None:
        writable.append(f"ReadWritePaths={systemd_path(str(textfile_dir), '--textfile-dir')}")
    return "\n".join(
        [
            "[Unit]",
            "Description=kforensic slab-watch: kernel slab and memory counters for leak analysis",
            "After=local-fs.target",
            "",
            "[Service]",
            "Type=simple",
            "ExecStart=" + exec_start,
            "Nice=10",
            "IOSchedulingClass=idle",
            "CPUSchedulingPolicy=batch",
            "ProtectSystem=strict",
            *writable,
            "ProtectHome=read-only",
            "PrivateTmp=yes",
            "NoNewPrivileges=yes",
            "UMask=0077",
            "# SIGTERM ends the run after the sample being taken; exit status 0.",
            "KillSignal=SIGTERM",
            "TimeoutStopSec=30",
            "Restart=on-failure",
            "RestartSec=30",
            "",
            "[Install]",
            "WantedBy=multi-user.target",
            "",
        ]
    )


def store_export(store: SlabStore, run_id: int | None, all_samples: bool) -> StoreExport:
    """What ``slab-export --format prometheus`` writes: the last sample of the run (or every one)."""
    samples = store.samples(run_id)
    if not samples:
        raise InputError(f"{store.path}: no samples to export")
    exported = frozenset(s.id for s in samples) if all_samples else frozenset({samples[-1].id})
    rows = tuple(r for r in store.iter_slab_rows(run_id) if r[0] in exported)
    meminfo = tuple(
        (name, unit, tuple(p for p in store.counter_series(source, name, run_id) if p.sample_id in exported))
        for source, name, unit in store.counter_names()
        if source == "meminfo"
    )
    return StoreExport(store.path, samples, exported, all_samples, rows, meminfo)
