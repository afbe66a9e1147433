"""Overhead of slab-watch: CPU seconds per sample and store bytes per sample.

Runs the real sampling loop (collectors.slabwatch.SlabWatcher) on this
machine's /proc for ``--samples`` samples at ``--interval`` seconds into a
fresh store, then, in the same process, the baseline people use today: a loop
copying /proc/slabinfo, /proc/meminfo and /proc/vmstat into one file per
sample.  Prints the figures and the ratio of slab-watch to the baseline.

Then the command as a user starts it, each in a fresh process so that peak RSS is its own:
``kforensic slab-watch --duration 3s --interval 1s`` into a new store, cold (empty bytecode and numba
caches: a new PYTHONPYCACHEPREFIX and NUMBA_CACHE_DIR) and warm (the same caches again), with wall
and CPU seconds, peak RSS and the load average.

Usage: .venv/bin/python benchmarks/slabwatch_overhead.py [--samples 600] [--interval 0.1] [--root /]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from child_usage import mib, run_child
from machine import machine_line

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from collectors import procfs
from collectors.slabstore import Sample, SlabStore
from collectors.slabwatch import Progress, SlabWatcher, WatchPlan


def cpu_seconds() -> float:
    """User + system CPU time of this process (system time includes the kernel formatting /proc files)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run_slab_watch(root: Path, samples: int, interval: float, directory: Path) -> dict[str, float]:
    """The real loop: CPU per sample (whole loop and per-sample cost as recorded), store size."""
    store_path = directory / "bench.sqlite"
    costs: list[float] = []
    writes: list[float] = []
    with SlabStore.open_for_writing(store_path, "bench") as store:
        append = store.append_sample

        def timed_append(run_id: int, sample: Sample) -> int:
            started = time.process_time()  # CLOCK_PROCESS_CPUTIME_ID: finer than getrusage's ticks
            try:
                return append(run_id, sample)
            finally:
                writes.append(time.process_time() - started)

        store.append_sample = timed_append  # type: ignore[method-assign]
        watcher = SlabWatcher(store, WatchPlan(root, interval, None))

        def on_sample(p: Progress) -> None:
            costs.append(p.cost_seconds)
            if p.index >= samples:
                watcher.stop("benchmark")

        started_cpu, started = cpu_seconds(), time.monotonic()
        watcher.run(on_sample)
        cpu, wall = cpu_seconds() - started_cpu, time.monotonic() - started
        caches = store.summary().caches
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = store_path.stat().st_size
    return {
        "cpu_per_sample": cpu / samples,
        "read_parse_median": statistics.median(costs),
        "write_median": statistics.median(writes),
        "wall": wall,
        "bytes_per_sample": size / samples,
        "caches": caches,
    }


def run_command(root: Path, directory: Path, env: dict[str, str], name: str) -> tuple[float, float, float | None]:
    """``kforensic slab-watch`` for 3 samples in a fresh process: wall s, CPU s, its own peak RSS MiB (child_usage)."""
    kforensic = Path(sys.executable).with_name("kforensic")
    argv = [str(kforensic), "slab-watch", "--duration", "3s", "--interval", "1s", "--root", str(root)]
    argv += ["--store", str(directory / f"{name}.sqlite"), "--no-analysis", "-o", str(directory / f"{name}.txt")]
    run = run_child(argv, env=env, stderr=subprocess.DEVNULL)
    if run.exit_code not in (0, 1):
        raise SystemExit(f"benchmark: {' '.join(argv)} exited {run.exit_code}")
    return run.wall, run.cpu, run.rss_mib


def run_baseline(root: Path, samples: int, interval: float, directory: Path) -> dict[str, float]:
    """What people do by hand: copy the three files into one file per sample (no parsing, no database)."""
    out = directory / "copies"
    out.mkdir()
    started_cpu = cpu_seconds()
    start = time.monotonic()
    for i in range(samples):
        parts = [procfs.read_file(root, rel).data or b"" for rel in (procfs.SLABINFO, procfs.MEMINFO, procfs.VMSTAT)]
        (out / f"sample-{i:05d}.txt").write_bytes(f"{time.time()}\n".encode() + b"".join(parts))
        due = (i + 1) * interval
        time.sleep(max(0.0, due - (time.monotonic() - start)))
    cpu = cpu_seconds() - started_cpu
    size = sum(p.stat().st_size for p in out.iterdir())
    return {"cpu_per_sample": cpu / samples, "bytes_per_sample": size / samples}


def main() -> None:
    """Run both loops and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=600)
    parser.add_argument("--interval", type=float, default=0.1)
    parser.add_argument("--root", type=Path, default=Path("/"))
    args = parser.parse_args()
    print(machine_line(), flush=True)  # the page cost: what makes this VM's figures vary (machine.py)
    if procfs.read_file(args.root, procfs.SLABINFO).data is None:
        print("warning: /proc/slabinfo is not readable (not root): the figures exclude slab caches", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="kforensic-bench-") as tmp:
        watch = run_slab_watch(args.root, args.samples, args.interval, Path(tmp))
        base = run_baseline(args.root, args.samples, args.interval, Path(tmp))
        cold_env = dict(
            os.environ, PYTHONPYCACHEPREFIX=f"{tmp}/pyc", NUMBA_CACHE_DIR=f"{tmp}/numba", XDG_CACHE_HOME=f"{tmp}/xdg"
        )
        command = [("cold", run_command(args.root, Path(tmp), cold_env, "cold"), os.getloadavg()[0])]
        command.append(("warm", run_command(args.root, Path(tmp), cold_env, "warm"), os.getloadavg()[0]))
    loop_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    day = 24 * 60
    print(f"slab-watch overhead: {args.samples} samples at {args.interval} s on {int(watch['caches'])} caches")
    print(f"  kernel {os.uname().release}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    print(f"  slab-watch CPU per sample (user+sys, whole loop): {watch['cpu_per_sample'] * 1000:.2f} ms")
    print(f"  slab-watch read+parse CPU per sample (median):    {watch['read_parse_median'] * 1000:.2f} ms")
    print(f"  slab-watch store write CPU per sample (median):   {watch['write_median'] * 1000:.2f} ms")
    print(f"  slab-watch store bytes per sample:                {watch['bytes_per_sample']:.0f} B")
    print(f"  slab-watch store for 24 h at 60 s:                {watch['bytes_per_sample'] * day / 1e6:.1f} MB")
    print(f"  baseline (copy files) CPU per sample:             {base['cpu_per_sample'] * 1000:.2f} ms")
    print(f"  baseline bytes per sample:                        {base['bytes_per_sample']:.0f} B")
    cpu_ratio = watch["cpu_per_sample"] / base["cpu_per_sample"]
    bytes_ratio = watch["bytes_per_sample"] / base["bytes_per_sample"]
    print(f"  ratio CPU slab-watch / baseline:                  {cpu_ratio:.2f}")
    print(f"  ratio bytes slab-watch / baseline:                {bytes_ratio:.2f}")
    print(f"  peak RSS of this process (both loops):            {loop_rss:.0f} MiB")
    print("kforensic slab-watch --duration 3s --interval 1s (3 samples, start-up included), fresh process:")
    for name, (wall, cpu, rss), load in command:
        print(f"  {name}: {wall:5.2f} s wall, {cpu:5.2f} s CPU, peak RSS {mib(rss)}, load {load:.2f}")


if __name__ == "__main__":
    main()
