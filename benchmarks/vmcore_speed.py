#!/usr/bin/env python3
"""Wall time, CPU and peak RSS of ``kforensic vmcore`` per dump, cold and warm, against ``crash``; where the time goes.

For every fixture kernel (6.1: vmcore_fixtures/; 5.10 and 6.12: vmcore_fixtures/kernels/) and
each of its cases, in fresh processes:

* cold: empty compile caches: a new ``PYTHONPYCACHEPREFIX`` (no ``.pyc``: every module compiled)
  and new ``NUMBA_CACHE_DIR`` and ``XDG_CACHE_HOME`` (kforensic's regex cache);
* warm: the same again ``--repeat`` times (``.pyc`` written by the cold run), the median counts;
* the baseline in the same run: ``crash -s VMLINUX VMCORE -i CMDS`` with ``sys``, ``bt``, ``log``,
  ``kmem -i`` and ``ps`` (Debian package ``crash``), ``--repeat`` times.

Then, per kernel, the median CPU of each stage over its cases (benchmarks/vmcore_phases.py, one
warm run per case): drgn opening the dump and indexing the DWARF, kforensic's page check, its
reads through drgn, its analyses, and the rest (start-up, imports, rendering).

    .venv/bin/python benchmarks/vmcore_speed.py [--repeat 3] [--kernels 6.1,5.10,6.12] [--cases 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from machine import machine_line

from tests.vmcore_cases import FIXTURES_DIR, case_names, kernels, load_case

ROOT = Path(__file__).resolve().parents[1]
CRASH_CMDS = "sys\nbt\nlog\nkmem -i\nps\nquit\n"


def _run(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float, float, int, bytes]:
    """Wall seconds, CPU seconds, peak RSS (MB) of the child, exit status, its stderr."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), err


def main() -> int:
    """Run every kernel's cases, print the table and the breakdown."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--kernels", default=",".join(kernels()), help="fixture kernels (default: all committed)")
    ap.add_argument("--cases", type=int, default=0, help="only the first N cases of each kernel (0: all)")
    args = ap.parse_args()
    print(machine_line(), flush=True)  # the page cost: what makes this VM's figures vary (machine.py)
    crash = shutil.which("crash")
    print(f"load average before: {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        cmds = Path(tmp) / "cmds"
        cmds.write_text(CRASH_CMDS)
        for kernel in args.kernels.split(","):
            names = case_names(kernel)[: args.cases or None]
            if not names:
                print(f"kernel {kernel}: no fixtures")
                continue
            print(f"\nkernel {kernel}")
            print(
                f"{'case':<18} {'cold s':>7} {'CPU':>5} {'warm s':>7} {'CPU':>5} {'RSS MB':>7}"
                f" {'crash s':>8} {'RSS MB':>7} {'ratio':>6}"
            )
            ratios, warm_walls, breakdowns = [], [], []
            for name in names:
                try:
                    case = load_case(name, kernel)
                except BaseException as exc:  # pytest.skip outside pytest raises its own exception type
                    print(f"{name:<18} skipped: {exc}")
                    continue
                modules = [a for m in case.module_debug for a in ("--module-debug", str(m))]
                # The module's source too: reading it and evaluating BUG/WARN conditions is part of the work.
                options = [str(case.vmcore), "--vmlinux", str(case.vmlinux), *modules]
                options += ["--source-dir", str(FIXTURES_DIR), "--format", "json", "-o", f"{tmp}/out.json"]
                caches = Path(tempfile.mkdtemp(dir=tmp))
                env = dict(
                    os.environ,
                    PYTHONPYCACHEPREFIX=str(caches / "pyc"),
                    NUMBA_CACHE_DIR=str(caches / "numba"),
                    XDG_CACHE_HOME=str(caches / "xdg"),  # kforensic's own caches (the regex cache)
                )
                env.pop("PYTHONDONTWRITEBYTECODE", None)  # the cold run writes the .pyc a first run writes
                argv = [sys.executable, "-m", "forensics", "vmcore", *options]
                cold = _run(argv, env)
                warm = [_run(argv, env) for _ in range(args.repeat)]
                if cold[3] != 0 or any(w[3] != 0 for w in warm):
                    print(f"{name:<18} kforensic failed: {(cold[4] or warm[-1][4]).decode(errors='replace')[-300:]}")
                    continue
                w_wall, w_cpu = statistics.median(w[0] for w in warm), statistics.median(w[1] for w in warm)
                rss = max(w[2] for w in (cold, *warm))
                warm_walls.append(w_wall)
                phases = _run([sys.executable, str(ROOT / "benchmarks" / "vmcore_phases.py"), *options], env)
                breakdowns.append(json.loads(phases[4].decode().strip().splitlines()[-1]))
                line = f"{name:<18} {cold[0]:7.3f} {cold[1]:5.2f} {w_wall:7.3f} {w_cpu:5.2f} {rss:7.0f}"
                if crash:
                    theirs = [_run([crash, "-s", str(case.vmlinux), str(case.vmcore), "-i", str(cmds)])
                              for _ in range(args.repeat)]  # fmt: skip
                    c_wall = statistics.median(t[0] for t in theirs)
                    ratios.append(c_wall / w_wall)
                    line += f" {c_wall:8.3f} {max(t[2] for t in theirs):7.0f} {c_wall / w_wall:5.1f}x"
                print(line)
            if warm_walls:
                worst = max(warm_walls)
                print(
                    f"kernel {kernel}: warm median {statistics.median(warm_walls):.3f} s, worst {worst:.3f} s per dump"
                )
            if ratios:
                middle = statistics.median(ratios)
                print(f"kernel {kernel}: median speed-up over crash {middle:.1f}x (min {min(ratios):.1f}x)")
            if breakdowns:
                print(f"kernel {kernel}: where the CPU goes (median over its cases, one warm run each)")
                for span in breakdowns[0]["spans"]:
                    values = [b["spans"].get(span, 0.0) for b in breakdowns]
                    print(f"  {span:<40} {statistics.median(values):6.3f} s")
                print(f"  {'total':<40} {statistics.median(b['cpu'] for b in breakdowns):6.3f} s")
    print(f"\nload average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
