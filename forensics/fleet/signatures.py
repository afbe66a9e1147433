"""``kforensic dmesg --signatures``: many hosts' kernel logs triaged on Dask, grouped by crash signature.

Each host is one log file (a path, a directory's files, a glob, or an fsspec
URL such as ``s3://bucket/logs/*.log`` when fsspec's backend for it is
installed).  The per-host work is the ``kforensic dmesg`` pipeline unchanged
(:func:`forensics.pipelines.dmesg.triage_file`: the same reader, scanner, rules
and grouping), run as Dask tasks on a ``LocalCluster`` of this machine (one
single-threaded worker process per core by default) or on a running cluster
(``--scheduler tcp://HOST:8786``).  A task returns a small
:class:`HostResult` (the host's report groups with one example each), never
the log; the client merges them into fleet groups keyed by signature (title
and guilty frame): count, hosts, kernels, first and last seen, one example
with its evidence.  A log that cannot be read is a failed host with its
one-line reason; the job goes on.  JSON: ``kforensic.dmesg-signatures/1``.
"""

from __future__ import annotations

import glob
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from forensics import __version__
from forensics.errors import InputError, KforensicError, UsageError
from forensics.model import Incident, NotAvailable
from forensics.types.fleet import Engine, FleetGroup, HostGroup, HostResult, SignatureRun

if TYPE_CHECKING:
    from forensics.types.dmesg_result import SourceResult

#: Hosts per Dask task at most: a task per host costs the scheduler ~1 ms, as much as a small log's triage.
MAX_BATCH = 32


# ---------------------------------------------------------------- inputs


def expand_inputs(specs: Sequence[str]) -> list[tuple[str, str]]:
    """(host, path) of every log named by the specs: files, directories (their files, recursively), globs, URLs.

    A host's name is its path relative to the directory given (or the glob's
    fixed prefix), else the path as given.  Raises UsageError when a spec
    names nothing.
    """
    out: list[tuple[str, str]] = []
    for spec in specs:
        if "://" in spec:
            out += _expand_url(spec)
            continue
        path = Path(spec)
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.is_file() or p.is_symlink())
            out += [(str(p.relative_to(path)), str(p)) for p in files]
        elif glob.has_magic(spec):
            found = sorted(glob.glob(spec, recursive=True))
            if not found:
                raise UsageError(f"{spec}: no file matches", hint="check the pattern (quote it for the shell)")
            base = _glob_base(spec)
            out += [(os.path.relpath(p, base) if base else p, p) for p in found if not Path(p).is_dir()]
        else:
            out.append((spec, spec))  # a missing file is a failed host, said per host
    if not out:
        raise UsageError("--signatures: no log files in " + " ".join(specs), hint="give directories, files or globs")
    seen: dict[str, int] = {}
    unique = []
    for host, where in out:
        n = seen.get(host, 0)
        seen[host] = n + 1
        unique.append((host if n == 0 else f"{host}#{n + 1}", where))
    return unique


def _glob_base(spec: str) -> str:
    parts = Path(spec).parts
    fixed = [p for p in parts[: next(i for i, p in enumerate(parts) if glob.has_magic(p))]]
    return str(Path(*fixed)) if fixed else ""


def _expand_url(spec: str) -> list[tuple[str, str]]:
    try:
        import fsspec
    except ImportError:
        raise UsageError(
            f"{spec}: URLs need fsspec", hint="pip install 'kforensic[fleet]' (dask brings fsspec)"
        ) from None
    try:
        fs, _, paths = fsspec.get_fs_token_paths(spec)
    except (ImportError, ValueError) as exc:
        raise UsageError(
            f"{spec}: {exc}", hint="install the fsspec backend for this scheme (s3fs, gcsfs, ...)"
        ) from None
    protocol = fs.protocol[0] if isinstance(fs.protocol, tuple | list) else fs.protocol
    files = [p for p in paths if not fs.isdir(p)] if glob.has_magic(spec) else _files_under(fs, paths)
    if not files:
        raise UsageError(f"{spec}: no file matches")
    base = _glob_base(spec.split("://", 1)[1]) if glob.has_magic(spec) else spec.split("://", 1)[1].rstrip("/")
    return [(os.path.relpath(p, base) if base and p.startswith(base) else p, f"{protocol}://{p}") for p in files]


def _files_under(fs: Any, paths: Iterable[str]) -> list[str]:
    out: list[str] = []
    for p in paths:
        out += sorted(fs.find(p)) if fs.isdir(p) else [p]
    return out


# ---------------------------------------------------------------- the per-host work (runs on the workers)


def _triage(path: str) -> SourceResult:
    """``kforensic dmesg``'s pipeline on one log: a local path through triage_file, a URL through fsspec."""
    from forensics.pipelines.dmesg import scan_chunks, source_result, triage_file

    if "://" not in path:
        return triage_file(path)
    import fsspec

    from collectors.inputs import TrackedInput
    from collectors.kernel_log import log_chunks

    try:
        with fsspec.open(path, "rb") as stream:
            tracked = TrackedInput(path, stream)
            grouper, lines = scan_chunks(log_chunks(tracked))
            return source_result(path, tracked.record(), grouper, lines)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc}") from None


def _number(value: object) -> float | None:
    return value if isinstance(value, float) else None


def triage_host(host: str, path: str) -> HostResult:
    """Triage one host's log; never raises: a failure is the host's ``error``."""
    from detectors.dmesg.findings import group_finding

    started = time.monotonic()
    try:
        result = _triage(path)
    except KforensicError as exc:
        return HostResult(host, path, error=exc.message, seconds=time.monotonic() - started)
    except Exception as exc:  # a bug on one log must not cost the other hosts' results
        return HostResult(host, path, error=f"internal error: {type(exc).__name__}: {exc}")
    groups = []
    # A report that does not print the release (a hung task's, an OOM's) is of the kernel of the boot banner above it,
    # else of the kernel the log names when it names one: "kernels" said "-" (not named in the logs) of the
    # 11-abba-deadlock guest's hung task.  Not of the other reports' kernel in a log of several boots of different
    # kernels: a 6.1 boot's OOM was counted under the 6.12 boot's release.
    named = result.releases | {release for _, release in result.banners}
    only = next(iter(named)) if len(named) == 1 else None
    for g in result.groups:
        first, last = g.first, g.last
        finding = group_finding(result.name, g)

        def wall(r: Any) -> float | None:
            t = _number(r.start_time)
            return None if t is None or r.boot_time is None else r.boot_time + t

        groups.append(
            HostGroup(
                signature=first.signature,
                title=first.title,
                frame=first.frame if isinstance(first.frame, str) else None,
                kind=first.kind.value,
                severity=finding.severity.value,
                corrupted=first.corrupted,
                count=g.count,
                kernel=first.kernel_release
                if isinstance(first.kernel_release, str)
                else result.release_at(first.start_line) or only,
                first_line=first.start_line,
                last_line=last.start_line,
                first_time=_number(first.start_time),
                last_time=_number(last.start_time),
                first_wall=wall(first),
                last_wall=wall(last),
                finding=finding,
            )
        )
    return HostResult(host, path, result.lines, tuple(groups), seconds=time.monotonic() - started)


def warm_up() -> None:
    """Import the per-host pipeline (run once on each worker before the tasks)."""
    from detectors.dmesg import findings, scanner
    from forensics.pipelines import dmesg

    del findings, scanner, dmesg  # imported for their cost, once per worker


def triage_batch(batch: Sequence[tuple[str, str]]) -> list[HostResult]:
    """Triage several hosts in one task."""
    return [triage_host(host, path) for host, path in batch]


# ---------------------------------------------------------------- merging (on the client)


@dataclass
class _Merging:
    """One signature's fleet group while the hosts' results are merged."""

    first_group: HostGroup
    count: int = 0
    hosts: set[str] = field(default_factory=set)
    kernels: set[str] = field(default_factory=set)
    first: tuple[Any, ...] = ()  # order key, host, HostGroup
    last: tuple[Any, ...] = ()

    def group(self) -> FleetGroup:
        g = self.first_group
        return FleetGroup(
            g.signature, g.title, g.frame, g.kind, g.severity, self.count, frozenset(self.hosts),
            frozenset(self.kernels), self.first, self.last,
        )  # fmt: skip


def merge(results: Iterable[HostResult]) -> list[FleetGroup]:
    """Fleet groups by signature; first/last seen by wall time when the logs date their lines, else by host and line."""
    groups: dict[str, _Merging] = {}
    for r in results:
        for g in r.groups:
            fg = groups.get(g.signature)
            if fg is None:
                fg = groups[g.signature] = _Merging(g)
            fg.count += g.count
            fg.hosts.add(r.host)
            if g.kernel:
                fg.kernels.add(g.kernel)
            first_key = (g.first_wall is None, g.first_wall or 0.0, r.host, g.first_line)
            last_key = (g.last_wall is not None, g.last_wall or 0.0, r.host, g.last_line)
            if not fg.first or first_key < fg.first[0]:
                fg.first = (first_key, r.host, g)
            if not fg.last or last_key > fg.last[0]:
                fg.last = (last_key, r.host, g)
    merged = [m.group() for m in groups.values()]
    return sorted(merged, key=lambda x: (-len(x.hosts), -x.count, x.title, x.signature))


# ---------------------------------------------------------------- running


def _batches(items: list[tuple[str, str]], workers: int) -> list[list[tuple[str, str]]]:
    size = max(1, min(MAX_BATCH, len(items) // max(1, workers * 8)))
    return [items[i : i + size] for i in range(0, len(items), size)]


def _finished(hosts: list[HostResult], engine: Engine, seconds: float, setup_seconds: float = 0.0) -> SignatureRun:
    groups = tuple(merge(hosts))
    return SignatureRun(tuple(hosts), groups, engine, seconds, incident(hosts, groups), setup_seconds)


def run_serial(items: list[tuple[str, str]]) -> SignatureRun:
    """The same job in this process, one host after another (the reference for the Dask run)."""
    started = time.monotonic()
    hosts = [triage_host(h, p) for h, p in items]
    return _finished(hosts, Engine("serial", 1, 1), time.monotonic() - started)


def run_dask(items: list[tuple[str, str]], scheduler: str | None = None, workers: int | None = None) -> SignatureRun:
    """The job on Dask: a LocalCluster (``workers`` processes, default one per core) or ``scheduler``."""
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise UsageError(
            "--signatures runs on Dask, which is not installed", hint="pip install 'kforensic[fleet]'"
        ) from None

    started = time.monotonic()
    cluster = None
    try:
        if scheduler is not None:
            try:
                client = Client(scheduler, timeout="10s")  # type: ignore[no-untyped-call]
            except (OSError, TimeoutError) as exc:
                raise InputError(
                    f"cannot reach the Dask scheduler {scheduler}: {exc}",
                    hint="start one with dask scheduler, and workers with dask worker " + scheduler,
                ) from None
        else:
            count = workers or os.cpu_count() or 1
            cluster = LocalCluster(  # type: ignore[no-untyped-call]
                n_workers=count, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
            )
            client = Client(cluster)  # type: ignore[no-untyped-call]
        with client:
            client.wait_for_workers(1, timeout=60)
            client.run(warm_up)  # imports on every worker: part of the setup, not of the first hosts' cost
            setup = time.monotonic() - started
            info = client.scheduler_info()
            nworkers = len(info.get("workers", {}))
            threads = sum(int(w.get("nthreads", 1)) for w in info.get("workers", {}).values())
            batches = _batches(items, max(1, threads))
            futures = client.map(triage_batch, batches, pure=False)
            batch_of = {f.key: b for f, b in zip(futures, batches, strict=True)}
            hosts: list[HostResult] = []
            for future in as_completed(futures):  # type: ignore[no-untyped-call]
                try:
                    hosts.extend(future.result())
                except Exception as exc:  # a worker died: its hosts are failed hosts, the others go on
                    hosts += [
                        HostResult(h, p, error=f"task failed on the cluster: {exc}") for h, p in batch_of[future.key]
                    ]
            kind = scheduler if scheduler is not None else "local"
            order = {h: i for i, (h, _) in enumerate(items)}
            hosts.sort(key=lambda r: order.get(r.host, 0))
            done = time.monotonic()
    finally:
        if cluster is not None:
            cluster.close()
    end = time.monotonic()
    engine = Engine(kind, nworkers, threads)
    return _finished(hosts, engine, end - started, setup + (end - done))


def incident(hosts: Sequence[HostResult], groups: Sequence[FleetGroup]) -> Incident:
    """One finding per fleet group (the example's, with the fleet counts as facts), for --fail-on and report."""
    import dataclasses

    from forensics.model import Fact

    findings = []
    for g in groups:
        example: HostGroup = g.first[2]
        facts = (
            Fact("hosts", f"{len(g.hosts)} of {len(hosts)}"),
            Fact("reports", str(g.count)),
            Fact("kernels", ", ".join(sorted(g.kernels)) or "not named in the logs"),
            *example.finding.facts,
        )
        findings.append(dataclasses.replace(example.finding, facts=facts))
    return Incident(
        host=NotAvailable(f"a fleet of {len(hosts)} hosts"),
        kernel_release=NotAvailable("many hosts"),
        window=NotAvailable("hosts' logs have their own clocks"),
        sources=(),
        findings=tuple(findings),
        tool_version=__version__,
    )


def analyse_fleet_logs(items: list[tuple[str, str]], scheduler: str | None, workers: int | None) -> SignatureRun:
    """Every host's log triaged (serially with ``workers`` 0, else on Dask), grouped by signature.

    A run where no log could be read is an input error: "no kernel reports" would be a false all-clear.
    """
    run = run_serial(items) if workers == 0 else run_dask(items, scheduler, workers)
    failed = [h for h in run.hosts if h.error is not None]
    if failed and len(failed) == len(run.hosts):
        raise InputError(
            f"--signatures: none of the {len(failed)} logs could be read (first: {failed[0].error})",
            hint="check the paths and permissions",
        )
    return run
