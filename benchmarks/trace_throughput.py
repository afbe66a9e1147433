"""Throughput and peak memory of ``kforensic trace`` against a plain per-line regex parse; first runs too.

For the input (default: ../shared/traces/bench/big.ftrace.txt.gz, decompressed into a temporary
folder) and for COPIES concatenated copies of it, runs, each in its own process so peak RSS is
its own:

  kforensic trace FILE --format json -o OUT      (the whole analysis, findings and JSON)
  BASELINE: for line in open(FILE): m = REGEX.match(line); float(ts); int(cpu); count event

and prints wall seconds, events/s, peak RSS and the ratio baseline time / kforensic time: the medians of
--repeat alternating runs of each (the machine may be shared: both see the same load).

First ("cold") runs, each in a fresh process on an empty compile cache (NUMBA_CACHE_DIR a new
folder): the bundled trace (tests/data/traces/kf.ftrace.txt.gz), the input, and the one-time build of
the compiled code (``python -m forensics.pipelines.build``, what a large input needs compiled).  The
"warm" runs after use the built cache.  Every line carries the load average at its start (the
machine may be shared: CPU seconds are the steadier figure).
Run: .venv/bin/python benchmarks/trace_throughput.py [--input FILE] [--copies 10] [--repeat 3] [--no-cold]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from statistics import median

from child_usage import mib, peak, run_child
from machine import machine_line

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_INPUT = ROOT.parent / "shared" / "traces" / "bench" / "big.ftrace.txt.gz"
BUNDLED = ROOT / "tests" / "data" / "traces" / "kf.ftrace.txt.gz"

# The regex a one-off script would use: comm-pid, optional (tgid), [cpu], optional flags, ts, event, payload.
BASELINE_RE = re.compile(
    r"^\s*(?P<comm>.+)-(?P<pid>\d+)\s+(?:\(\s*\d+\)\s+)?\[(?P<cpu>\d+)\]\s+(?:(?P<flags>\S+)\s+)?"
    r"(?P<ts>\d+\.\d+):\s+(?P<event>[\w:]+):\s+(?P<payload>.*)$"
)


def baseline(path: str) -> None:
    """The baseline parse, run in a child process: prints the number of events."""
    counts: dict[str, int] = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = BASELINE_RE.match(line)
            if m:
                float(m["ts"])
                int(m["cpu"])
                event = m["event"]
                counts[event] = counts.get(event, 0) + 1
    print(sum(counts.values()))


def load() -> str:
    """The 1-minute load average, for the figures it qualifies."""
    return f"load {os.getloadavg()[0]:.1f}"


def run_measured(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float, float | None, str]:
    """Run a command; return wall seconds, CPU seconds, its own peak RSS in MiB (or None) and its stdout."""
    run = run_child(argv, env=env, capture_stdout=True)
    if run.exit_code not in (0, 1):
        sys.exit(f"{' '.join(argv[:5])} failed ({run.exit_code}): {run.stderr.decode(errors='replace')[:500]}")
    return run.wall, run.cpu, run.rss_mib, run.stdout.decode()


def trace_argv(path: Path, out: Path) -> list[str]:
    """``kforensic trace PATH --format json -o OUT`` run by this interpreter."""
    return [sys.executable, "-m", "forensics", "trace", str(path), "--format", "json", "-o", str(out)]


def figure(label: str, wall: float, cpu: float, rss: float | None, at: str) -> None:
    """One measured line."""
    print(f"  {label:<44} {wall:7.2f} s wall ({cpu:6.2f} s CPU)  peak RSS {mib(rss)}  ({at})")


def installed_env(pyc: Path, **extra: str) -> dict[str, str]:
    """The environment of a run as an installed kforensic sees it: bytecode cached (in ``pyc``), not forced.

    Without it a shell with PYTHONDONTWRITEBYTECODE set compiles kforensic's own modules from source on
    every run (about 0.07 s here), which no install does.
    """
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(pyc), **extra}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("KFORENSIC_COMPILED", None)
    return env


def first_runs(path: Path, out_dir: Path, cache: Path) -> None:
    """Fresh processes on the empty cache ``cache``: the bundled trace, the input, then the build into it.

    Cold: no machine code in ``cache`` and no bytecode (a new PYTHONPYCACHEPREFIX) either.
    """
    env = installed_env(out_dir / "cold-pyc", NUMBA_CACHE_DIR=str(cache))
    print(f"\nfirst runs (cold: a fresh process, empty compile cache {cache}):")
    for label, src in (("bundled trace kf.ftrace.txt.gz (600 KB)", BUNDLED), (f"{path.name} ({_mb(path)})", path)):
        at = load()
        wall, cpu, rss, _ = run_measured(trace_argv(src, out_dir / "cold.json"), env)
        figure(label, wall, cpu, rss, at)
    at = load()
    wall, cpu, rss, _ = run_measured([sys.executable, "-m", "forensics.pipelines.build"], env)
    figure("build the compiled code once (cache empty)", wall, cpu, rss, at)
    at = load()
    wall, cpu, rss, _ = run_measured([sys.executable, "-m", "forensics.pipelines.build"], env)
    figure("build again (cache warm: loads)", wall, cpu, rss, at)
    at = load()
    wall, cpu, rss, _ = run_measured(trace_argv(BUNDLED, out_dir / "warm.json"), env)
    figure("bundled trace, warm", wall, cpu, rss, at)


def _mb(path: Path) -> str:
    return f"{path.stat().st_size / 1e6:.0f} MB"


def warm_up(path: Path, out_dir: Path) -> float:
    """Run kforensic once on the first lines, so numba's compiled code is in its cache before timing.

    The first run after an install or a change of the compiled modules compiles them (printed: the
    one-time cost); later runs load them from the cache.
    """
    small = out_dir / "warm.txt"
    with path.open("rb") as src:
        small.write_bytes(b"".join(src.readline() for _ in range(20_000)))
    env = installed_env(out_dir / "pyc", KFORENSIC_COMPILED="yes")  # 20k lines are a small input: force compiled
    argv = trace_argv(small, out_dir / "w.json")
    first, _, _, _ = run_measured(argv, env)
    again = min(run_measured(argv, env)[0] for _ in range(3))
    print(f"start-up on 20k lines: first run {first:.2f} s (compiles if the cache is cold), then {again:.2f} s")
    return again


def bench(path: Path, out_dir: Path, repeat: int) -> dict[str, float]:
    """Measure kforensic and the baseline on one file, alternating, ``repeat`` runs of each; medians count.

    The median says what a run gives on this machine at this load; the best and worst are printed too.
    """
    size = path.stat().st_size
    out = out_dir / "trace.json"
    tool: list[tuple[float, float, float | None]] = []
    base: list[tuple[float, float, float | None]] = []
    base_events = 0.0
    loads = [os.getloadavg()[0]]
    for _ in range(repeat):
        wall, cpu, rss, _ = run_measured(trace_argv(path, out), installed_env(out_dir / "pyc"))
        tool.append((wall, cpu, rss))
        wall, cpu, rss, base_out = run_measured([sys.executable, __file__, "--baseline", str(path)])
        base.append((wall, cpu, rss))
        base_events = float(base_out.strip() or 0)
        loads.append(os.getloadavg()[0])
    doc = json.loads(out.read_text())
    events = doc["parse"]["events"]
    t_wall, t_cpu = median(r[0] for r in tool), median(r[1] for r in tool)
    b_wall, b_cpu = median(r[0] for r in base), median(r[1] for r in base)
    t_rss, b_rss = peak(r[2] for r in tool), peak(r[2] for r in base)
    print(
        f"\n{path.name}: {size / 1e6:.0f} MB, {doc['parse']['lines']} lines, {events} events; median of {repeat} "
        f"alternating runs each (load {min(loads):.1f}-{max(loads):.1f})"
    )
    print(
        f"  kforensic trace : {t_wall:7.2f} s ({t_cpu:6.2f} s CPU)  {events / t_wall / 1e3:7.0f} k events/s  "
        f"{size / t_wall / 1e6:6.1f} MB/s  peak RSS {mib(t_rss)}  (wall {_spread(tool, 0)})"
    )
    print(
        f"  regex baseline  : {b_wall:7.2f} s ({b_cpu:6.2f} s CPU)  {base_events / b_wall / 1e3:7.0f} k events/s  "
        f"{size / b_wall / 1e6:6.1f} MB/s  peak RSS {mib(b_rss)}  (wall {_spread(base, 0)})"
    )
    print(
        f"  ratio baseline / kforensic (medians): {b_wall / t_wall:.2f}x wall, {b_cpu / t_cpu:.2f}x CPU; "
        f"per CPU second: kforensic {events / t_cpu / 1e3:.0f} k events/s, baseline {base_events / b_cpu / 1e3:.0f} k"
    )
    best = min(tool, key=lambda r: r[0])
    print(
        f"  best kforensic run: {best[0]:.2f} s ({best[1]:.2f} s CPU), {events / best[0] / 1e3:.0f} k events/s; "
        f"ratio to the median baseline {b_wall / best[0]:.2f}x wall"
    )
    return {"tool_s": t_wall, "tool_cpu": t_cpu, "events": float(events), "size": float(size)}


def _spread(runs: list[tuple[float, float, float | None]], i: int) -> str:
    """The lowest and highest of field ``i`` of the runs, as text."""
    values = [r[i] for r in runs]
    return f"{min(values):.2f}-{max(values):.2f} s"


def main() -> None:
    """Prepare the inputs and print the figures."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", type=Path, default=DEFAULT_INPUT, help="trace text or .gz (default: %(default)s)")
    ap.add_argument("--copies", type=int, default=10, help="concatenated copies for the big run (0: skip)")
    ap.add_argument("--repeat", type=int, default=3, help="alternating runs of each measurement (medians count)")
    ap.add_argument("--no-cold", action="store_true", help="skip the first runs on an empty compile cache")
    ap.add_argument("--baseline", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.baseline:  # the measured child: it prints its count only
        baseline(args.baseline)
        return
    print(machine_line(), flush=True)  # the page cost: what makes this VM's figures vary (machine.py)
    if not args.input.exists():
        sys.exit(f"no input {args.input}; give --input TRACE")
    # The machine may be shared: CPU seconds are the steadier figure, the load says how shared.
    print(f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="kf-trace-bench-") as tmp:
        work = Path(tmp)
        one = work / "one.txt"
        opener = gzip.open if args.input.suffix == ".gz" else open
        with opener(args.input, "rb") as src, one.open("wb") as dst:
            shutil.copyfileobj(src, dst, 8 << 20)
        if not args.no_cold:
            first_runs(one, work, work / "empty-cache")
        print()
        start_up = warm_up(one, work)
        results = [bench(one, work, args.repeat)]
        if args.copies > 1:
            many = work / f"x{args.copies}.txt"
            with many.open("wb") as dst:
                for _ in range(args.copies):
                    with one.open("rb") as src:
                        shutil.copyfileobj(src, dst, 8 << 20)
            one.unlink()
            results.append(bench(many, work, args.repeat))
            small, big = results
            wall = (big["tool_s"] / big["events"]) / (small["tool_s"] / small["events"])
            cpu = (big["tool_cpu"] / big["events"]) / (small["tool_cpu"] / small["events"])
            print(f"\nlinearity: time per event on x{args.copies} / on x1 = {wall:.2f} wall, {cpu:.2f} CPU")
            # A run costs a fixed start-up (Python, numba, loading compiled code) plus a time per event; the
            # two sizes give the time per event, and the fixed cost they imply should be the start-up measured.
            per_event = (big["tool_s"] - small["tool_s"]) / (big["events"] - small["events"])
            fixed = small["tool_s"] - per_event * small["events"]
            print(
                f"  time = fixed + per event: {per_event * 1e6:.3f} us per event, implied fixed {fixed:.2f} s "
                f"(start-up measured on 20k lines: {start_up:.2f} s)"
            )


if __name__ == "__main__":
    main()
