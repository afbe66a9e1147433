#!/usr/bin/env python3
"""Wall time and peak RSS of ``kforensic vmcore`` on each fixture, against ``crash`` in the same run.

For every committed vmcore fixture, runs ``kforensic vmcore --format json`` (the
full report) and ``crash -s VMLINUX VMCORE -i CMDS`` with ``sys``, ``bt``,
``log``, ``kmem -i`` and ``ps`` (Debian package ``crash``), each a few times,
and prints the median wall time, the peak RSS of the child and the ratio.

    .venv/bin/python benchmarks/vmcore_speed.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.vmcore_cases import FIXTURES_DIR, case_names, load_case

CRASH_CMDS = "sys\nbt\nlog\nkmem -i\nps\nquit\n"


def _run(argv: list[str]) -> tuple[float, float, int]:
    """Wall seconds, peak RSS (MB) of the child, exit status."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    return wall, usage.ru_maxrss / 1024, status


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    names = case_names()
    if not names:
        print("no vmcore fixtures (vmcore_fixtures/MANIFEST.json); run vmcore_fixtures/build.sh")
        return 1
    crash = shutil.which("crash")
    kforensic = [sys.executable, "-m", "forensics", "vmcore"]
    print(f"{'case':<16} {'kforensic s':>11} {'RSS MB':>7} {'crash s':>8} {'RSS MB':>7} {'ratio':>6}")
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        cmds = Path(tmp) / "cmds"
        cmds.write_text(CRASH_CMDS)
        for name in names:
            try:
                case = load_case(name)
            except BaseException as exc:  # pytest.skip outside pytest raises its own exception type
                print(f"{name:<16} skipped: {exc}")
                continue
            modules = [a for m in case.module_debug for a in ("--module-debug", str(m))]
            # The module's source too: reading it and evaluating BUG/WARN conditions is part of the work.
            argv = [*kforensic, str(case.vmcore), "--vmlinux", str(case.vmlinux), *modules]
            argv += ["--source-dir", str(FIXTURES_DIR)]
            argv += ["--format", "json", "-o", f"{tmp}/out.json"]
            ours = [_run(argv) for _ in range(args.repeat)]
            if any(s != 0 for _, _, s in ours):
                print(f"{name:<16} kforensic failed")
                continue
            k_wall = statistics.median(w for w, _, _ in ours)
            k_rss = max(r for _, r, _ in ours)
            if crash:
                theirs = [_run([crash, "-s", str(case.vmlinux), str(case.vmcore), "-i", str(cmds)])
                          for _ in range(args.repeat)]  # fmt: skip
                c_wall = statistics.median(w for w, _, _ in theirs)
                c_rss = max(r for _, r, _ in theirs)
                ratio = c_wall / k_wall
                ratios.append(ratio)
                print(f"{name:<16} {k_wall:11.3f} {k_rss:7.0f} {c_wall:8.3f} {c_rss:7.0f} {ratio:5.1f}x")
            else:
                print(f"{name:<16} {k_wall:11.3f} {k_rss:7.0f} {'-':>8} {'-':>7} {'-':>6}  (crash not installed)")
    if ratios:
        print(f"median speed-up over crash: {statistics.median(ratios):.1f}x (min {min(ratios):.1f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
