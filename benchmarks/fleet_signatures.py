"""Throughput of ``kforensic dmesg --signatures`` on 1,000 host logs: serial, and Dask with 1 and 2 workers.

Builds HOSTS logs (default 1,000) of about SIZE KB each (default 256): this
machine's own ring buffer lines (else the golden logs' noise lines) with one
to three real reports of the golden logs (tests/detectors/dmesg/golden) per
host, chosen by host number so that signatures span many hosts; one host's
log is a dangling link (an unreadable log among many).  Then runs, in this
one process, the same job three ways and prints them side by side:

  serial        forensics.fleet.signatures.run_serial (one host after another: the baseline)
  dask 1 worker run_dask on a LocalCluster of 1 single-threaded worker process
  dask 2 workers run_dask on a LocalCluster of 2 single-threaded worker processes

Wall time includes starting and stopping the cluster (reported apart too),
so the per-host cost of the task graph shows.  The groups of every run are
checked equal to the serial run's.  Before them, the serial job runs in a
fresh process twice, cold (empty bytecode and numba caches: a new
PYTHONPYCACHEPREFIX and NUMBA_CACHE_DIR) and warm (those caches again), with
wall and CPU seconds and its own peak RSS (wait4).  Run:
  .venv/bin/python benchmarks/fleet_signatures.py [--hosts 1000] [--size-kb 256]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

from child_usage import mib, run_child
from machine import machine_line

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.dmesg_throughput import GOLDEN, noise_lines  # noqa: E402


def build_hosts(directory: Path, hosts: int, size: int) -> int:
    """Write ``hosts`` logs under ``directory``/hostNNNN/kern.log; return the bytes written."""
    noise = noise_lines()
    reports = [p.read_bytes().rstrip(b"\n") + b"\n" for p in sorted(GOLDEN.glob("*.log"))]
    body = bytearray()
    i = 0
    while len(body) < size:
        body += noise[i % len(noise)] + b"\n"
        i += 1
    half = len(body) // 2
    cut = body.rfind(b"\n", 0, half) + 1
    total = 0
    for h in range(hosts):
        picked = [reports[h % len(reports)]]
        if h % 3 == 0:
            picked.append(reports[(h // 3) % len(reports)])
        if h % 7 == 0:
            picked.append(reports[(h // 7 + 5) % len(reports)])
        data = bytes(body[:cut]) + b"".join(picked) + bytes(body[cut:])
        host = directory / f"host{h:04d}"
        host.mkdir()
        (host / "kern.log").write_bytes(data)
        total += len(data)
    gone = directory / "host-gone"
    gone.mkdir()
    (gone / "kern.log").symlink_to(directory / "no-such-log")
    return total


def _groups(run: object) -> object:
    from forensics.report.fleet_signatures import to_document

    doc = to_document(run)  # type: ignore[arg-type]
    return [
        (g["signature"], g["count"], g["hosts"], g["kernels"], g["first_seen"], g["last_seen"]) for g in doc["groups"]
    ]


def serial_in_fresh_process(directory: Path, env: dict[str, str]) -> tuple[float, float, float | None]:
    """The serial job in a new interpreter (imports included): wall s, CPU s, peak RSS MiB."""
    argv = [sys.executable, __file__, "--serial-only", str(directory)]
    run = run_child(argv, env=env, stderr=None)
    if run.exit_code != 0:
        raise SystemExit(f"benchmark: the serial child exited {run.exit_code}")
    return run.wall, run.cpu, run.rss_mib


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--size-kb", type=int, default=256)
    parser.add_argument("--serial-only", type=Path, help=argparse.SUPPRESS)  # the child of the cold/warm runs
    args = parser.parse_args()
    if args.serial_only is not None:  # the measured child: the machine line is its parent's
        from forensics.fleet.signatures import expand_inputs, run_serial

        run_serial(expand_inputs([str(args.serial_only)]))
        return
    print(machine_line(), flush=True)  # the page cost: what makes this VM's figures vary (machine.py)

    from dask.distributed import LocalCluster

    from forensics.fleet.signatures import expand_inputs, run_dask, run_serial

    with tempfile.TemporaryDirectory(prefix="kf-fleet-") as tmp:
        directory = Path(tmp)
        started = time.perf_counter()
        size = build_hosts(directory, args.hosts, args.size_kb * 1024)
        items = expand_inputs([str(directory)])
        print(
            f"{len(items)} host logs, {size / 1e6:,.0f} MB, built in {time.perf_counter() - started:.1f} s;"
            f" load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"
        )

        caches = Path(tempfile.mkdtemp(prefix="kf-fleet-caches-", dir=tmp))
        cold_env = dict(
            os.environ,
            PYTHONPYCACHEPREFIX=str(caches / "pyc"),
            NUMBA_CACHE_DIR=str(caches / "numba"),
            XDG_CACHE_HOME=str(caches / "xdg"),  # kforensic's own caches (the regex cache)
        )
        for name in ("cold", "warm"):
            wall, cpu, rss = serial_in_fresh_process(directory, cold_env)
            print(
                f"serial, fresh process, {name}: {wall:.2f} s wall, {cpu:.2f} s CPU, peak RSS {mib(rss)},"
                f" load {os.getloadavg()[0]:.2f}"
            )

        # The cost of a cluster alone: start and stop, with no work.
        t = time.perf_counter()
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40):
            pass
        startup = time.perf_counter() - t

        rows = []
        t = time.perf_counter()
        cpu = time.process_time()
        serial = run_serial(items)
        rows.append(("serial (baseline)", time.perf_counter() - t, time.process_time() - cpu, serial))
        for workers in (1, 2):
            t = time.perf_counter()
            run = run_dask(items, workers=workers)
            rows.append((f"dask, {workers} worker{'s' if workers > 1 else ''}", time.perf_counter() - t, None, run))

        base = rows[0][1]
        expected = _groups(serial)
        print(f"LocalCluster of 2 workers: start and stop alone {startup:.2f} s")
        print(
            f"{'run':<20} {'wall s':>8} {'cluster s':>9} {'work s':>8} {'hosts/s':>9} {'MB/s':>8} {'x serial':>9}"
            "  groups  failed  same groups  triage s (sum in tasks)"
        )
        for name, wall, _cpu, run in rows:
            failed = sum(1 for h in run.hosts if h.error)
            same = _groups(run) == expected
            work = wall - run.setup_seconds
            print(
                f"{name:<20} {wall:8.2f} {run.setup_seconds:9.2f} {work:8.2f} {len(items) / work:9.1f}"
                f" {size / 1e6 / work:8.1f} {base / wall:9.2f}  {len(run.groups):6}  {failed:6}  {same!s:11}"
                f"  {sum(h.seconds for h in run.hosts):.2f}"
            )
        print(
            "hosts/s and MB/s exclude the cluster's start and stop (the 'cluster s' column); x serial is of wall time"
        )
        per_host = sum(h.seconds for h in serial.hosts) / len(items)
        print(f"per-host triage (serial, in-process): {per_host * 1000:.2f} ms mean; serial CPU {rows[0][2]:.2f} s")
        own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(
            f"peak RSS: this process {own:.0f} MiB, largest child (a Dask worker or the serial child) {workers:.0f} MiB"
        )


if __name__ == "__main__":
    main()
