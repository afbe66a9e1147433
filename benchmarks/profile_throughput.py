"""Throughput and peak memory of ``kforensic profile`` against ``stackcollapse-perf.pl`` on the same text.

The input is ``perf script`` text of a ``perf record -a -g`` recording (made here when perf is
installed: ``perf record -a -g -F 999 -- sleep SECONDS``, or given with --input), concatenated
until it holds at least --mb megabytes.  Each in its own process, so peak RSS is its own:

  kforensic profile FILE --svg OUT.svg --folded OUT.folded > OUT.txt    (hotspots + rules + folded + SVG)
  kforensic profile FILE --folded - > OUT.folded                         (folded stacks only)
  perl stackcollapse-perf.pl FILE > OUT.pl                               (folded stacks only)

The ratio is printed for both: the like-for-like one (the same output: folded stacks only) and the full
report's (kforensic also makes the tables, rule classes, findings, text report and flame graph).

A first run is cold (fresh process, empty compile caches: a new PYTHONPYCACHEPREFIX and
NUMBA_CACHE_DIR, so nothing compiled ahead of time: the call chains are read by the Python path); the
measured runs are warm, with the reader's chunk pass built ahead of time into that cache first
(as ``make compile`` builds it). It prints wall and CPU seconds, MB/s, peak RSS,
the ratios of the medians of --repeat alternating runs (wall and CPU: on a shared machine the wall time
depends on the load of the moment), the best runs, the load average before and after, and checks the two
folded outputs are byte-identical.  Note: repeating one
recording repeats its stacks; a longer recording has more distinct stacks (kforensic's memory
grows with distinct stacks, not with samples).  The hard case, a fresh recording of a busy machine where
most samples are distinct stacks, is made by benchmarks/record_varied_profile.py (Python, find and gcc
running under perf record -a -g -F 999; about 50 MB of text, not kept in git):
  .venv/bin/python benchmarks/record_varied_profile.py --out /tmp/fresh.perf.txt
  .venv/bin/python benchmarks/profile_throughput.py --input /tmp/fresh.perf.txt --mb 50 --repeat 5
Run: .venv/bin/python benchmarks/profile_throughput.py [--input FILE] [--mb 200] [--seconds 15] [--repeat 3]
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from statistics import median

from child_usage import mib, peak, run_child
from machine import machine_line

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PERL = ROOT.parent / "shared" / "tools" / "flamegraph" / "stackcollapse-perf.pl"


def run_measured(argv: list[str], stdout: Path, env: dict[str, str] | None = None) -> tuple[float, float, float | None]:
    """Run a command with stdout to a file; return wall seconds, CPU seconds and its own peak RSS in MiB (or None)."""
    with stdout.open("wb") as out:
        run = run_child(argv, stdout=out, env=env)
    if run.exit_code not in (0, 1):
        sys.exit(f"{argv[0]} failed: {run.stderr.decode(errors='replace')[-500:]}")
    return run.wall, run.cpu, run.rss_mib


def make_input(tmp: Path, given: Path | None, mb: int, seconds: int) -> Path:
    """The benchmark text: the given or a fresh recording's perf script text, repeated to >= mb MB."""
    if given is None:
        sys.path.insert(0, str(ROOT))
        from collectors.perf_script import find_perf

        perf = find_perf()
        if perf is None:
            sys.exit("perf is not installed: give --input with perf script -g text")
        data = tmp / "perf.data"
        subprocess.run(
            [perf, "record", "-q", "-a", "-g", "-F", "999", "-o", str(data), "--", "sleep", str(seconds)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        one = tmp / "one.txt"
        with one.open("wb") as out:
            subprocess.run([perf, "script", "-i", str(data)], check=True, stdout=out, stderr=subprocess.DEVNULL)
    else:
        one = given
    big = tmp / "big.perf.txt"
    # A .gz input is read decompressed: its bytes repeated are not one gzip stream kforensic can read.
    piece = gzip.decompress(one.read_bytes()) if one.suffix == ".gz" else one.read_bytes()
    if not piece.endswith(b"\n\n"):
        piece = piece.rstrip(b"\n") + b"\n\n"
    copies = max(1, -(-mb * 1_000_000 // len(piece)))
    with big.open("wb") as out:
        for _ in range(copies):
            out.write(piece)
    print(f"input: {big.stat().st_size / 1e6:.1f} MB ({copies} copies of {len(piece) / 1e6:.1f} MB)")
    return big


def main() -> None:
    """Parse options, run both, print the figures."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", type=Path, help="perf script -g text (default: record one now)")
    ap.add_argument("--mb", type=int, default=200, help="minimum input size in MB (default 200)")
    ap.add_argument("--seconds", type=int, default=15, help="length of the recording (default 15)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each, alternating; the medians count")
    ap.add_argument("--stackcollapse", type=Path, default=DEFAULT_PERL, help="path of stackcollapse-perf.pl")
    args = ap.parse_args()
    print(machine_line(), flush=True)  # the page cost: what makes this VM's figures vary (machine.py)
    if shutil.which("perl") is None or not args.stackcollapse.exists():
        sys.exit("needs perl and stackcollapse-perf.pl (--stackcollapse)")
    kforensic = str(Path(sys.executable).parent / "kforensic")
    with tempfile.TemporaryDirectory(prefix="profile-bench-") as d:
        tmp = Path(d)
        big = make_input(tmp, args.input, args.mb, args.seconds)
        size = big.stat().st_size / 1e6
        # Cold: a fresh process with empty compile caches (no .pyc: every module compiled; a new numba cache).
        cold_env = dict(os.environ, PYTHONPYCACHEPREFIX=str(tmp / "pyc"), NUMBA_CACHE_DIR=str(tmp / "numba"))
        cold_env.pop("PYTHONDONTWRITEBYTECODE", None)
        cold = [kforensic, "profile", str(big), "--svg", str(tmp / "c.svg"), "--folded", str(tmp / "c.folded")]
        c_wall, c_cpu, c_rss = run_measured(cold, tmp / "c.txt", cold_env)
        print(
            f"{'kforensic profile, cold (empty caches)':47s} wall {c_wall:7.2f} s {size / c_wall:7.1f} MB/s"
            f"   CPU {c_cpu:7.2f} s {size / c_cpu:7.1f} MB/s   peak RSS {mib(c_rss)}"
        )
        # The profile reader's chunk pass built ahead of time into that cache, as `make compile` builds it (a run
        # does not build it for an input under 2 GB: it reads without it and says so on stderr).  Checked: without
        # it the warm runs would measure the numpy path.
        subprocess.run(
            [sys.executable, "-c", "from collectors.perf_chains_aot import chunk_kernel; assert chunk_kernel(True)"],
            env=cold_env,
            cwd=ROOT,
            check=True,
            stderr=subprocess.DEVNULL,
        )
        # A first small run, so that both measured programs start with the files and bytecode cached.
        warm = tmp / "warm.txt"
        with big.open("rb") as src:
            head = src.read(1 << 20)
        warm.write_bytes(head[: head.rfind(b"\n\n") + 2])
        run_measured([kforensic, "profile", str(warm)], tmp / "warm.out", cold_env)
        runs_k, runs_f, runs_p = [], [], []
        load0 = os.getloadavg()[0]
        for _ in range(args.repeat):  # alternating, so all see the same load; the median run of each counts
            runs_k.append(
                run_measured(
                    [kforensic, "profile", str(big), "--svg", str(tmp / "k.svg"), "--folded", str(tmp / "k.folded")],
                    tmp / "k.txt",
                    cold_env,  # warm: the .pyc the cold run wrote
                )
            )
            runs_f.append(run_measured([kforensic, "profile", str(big), "--folded", "-"], tmp / "f.folded", cold_env))
            runs_p.append(run_measured(["perl", str(args.stackcollapse), str(big)], tmp / "p.folded"))
        perl_folded = (tmp / "p.folded").read_bytes()
        same = (tmp / "k.folded").read_bytes() == perl_folded
        same_f = (tmp / "f.folded").read_bytes() == perl_folded
        # The median run is the figure (what a run gives at this load); the best says what the code can do.
        pw, pc = median(r[0] for r in runs_p), median(r[1] for r in runs_p)
        for name, runs in (
            ("kforensic profile (hotspots+rules+folded+SVG)", runs_k),
            ("kforensic profile --folded - (folded only)", runs_f),
            ("stackcollapse-perf.pl (folded only)", runs_p),
        ):
            wall, cpu = median(r[0] for r in runs), median(r[1] for r in runs)
            print(
                f"{name:47s} wall {wall:7.2f} s {size / wall:7.1f} MB/s   CPU {cpu:7.2f} s {size / cpu:7.1f} MB/s"
                f"   peak RSS {mib(peak(r[2] for r in runs))}"
            )
        p_wall, p_cpu, _ = min(runs_p, key=lambda r: r[0])
        for what, runs in (("the same output, folded only", runs_f), ("the full report", runs_k)):
            kw, kc = median(r[0] for r in runs), median(r[1] for r in runs)
            k_wall, k_cpu, _ = min(runs, key=lambda r: r[0])
            # On a shared machine the wall time depends on the load at the moment; CPU time much less.
            print(
                f"{what}: ratio of the medians of {args.repeat} (stackcollapse time / kforensic time): "
                f"wall {pw / kw:.2f}x, CPU {pc / kc:.2f}x; best runs: kforensic wall {k_wall:.2f} s CPU {k_cpu:.2f} s,"
                f" stackcollapse wall {p_wall:.2f} s CPU {p_cpu:.2f} s, ratio wall {p_wall / k_wall:.2f}x,"
                f" CPU {p_cpu / k_cpu:.2f}x"
            )
        print(f"load average (1 min) before/after: {load0:.1f} / {os.getloadavg()[0]:.1f}")
        print(f"folded outputs identical: {same} (with the report), {same_f} (folded only)")
        print(f"SVG: {(tmp / 'k.svg').stat().st_size / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
