"""Throughput and peak memory of ``kforensic dmesg`` on three kinds of large log, against grep on each.

Each input is run from this one process as
  kforensic dmesg --format json LOG           cold: a fresh process with empty bytecode, numba and regex caches;
                                              (--format text adds rows for the terminal text, what a user gets);
                                              warm: the caches filled (best of --warm-runs)
  grep -cE 'BUG|WARNING|Oops|panic' LOG       the baseline, on the same file
each with wall time, CPU time and peak RSS, the load average after the run, and the ratio of
kforensic's warm run to grep's.  Start-up is included everywhere (a new process per run).  The inputs:
  (a) console  every fixture console log (vmcore_fixtures/cases/*/console.log: real boots of the test
               kernel with a crash in each) repeated to CONSOLE_MB (a report every ~150 lines);
  (b) dense    the project's golden logs (tests/detectors/dmesg/golden) repeated to DENSE_MB: nothing
               but reports, the worst case per byte;
  (c) sparse   ordinary noise (this machine's ring buffer, else the golden logs' noise lines) with a
               golden report every REPORT_EVERY lines, SIZE_MB in all;
  (d) corpus   the shared evaluation corpus of syzkaller console logs (--corpus DIR, default
               ../shared/corpus/syzkaller-linux-dev when it exists), each file's log (not its KEY: value
               header) one after the other, the whole concatenated four times (issue 28's report-dense
               input: 7.4 MB, ~2,200 reports of ~560 kinds); read at run time, never copied into the project.
               Also the corpus once ("corpus x1", 1.8 MB): no repeats, the cost of reports read for the first time.
In (a) and (b) every copy of the block has its printk times moved on by ``copy × span`` seconds (span:
the block's last time, rounded up), the stamp's width kept: real repeats of a crash differ in their
times, never byte for byte.  ``--verbatim`` adds rows (labelled ``verbatim``) for the same inputs
repeated byte for byte, the best case of the report memo.
The machine may be shared: CPU seconds say what the work costs, wall seconds what a user waits; the
load average is printed with each row.  ``--rss-check`` also runs (a) at a quarter of its size, so
that peak RSS can be compared across sizes (it must stay flat).
Run: .venv/bin/python benchmarks/dmesg_throughput.py [--console-mb 512 --dense-mb 128 --size-mb 1024]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from child_usage import mib, run_child
from machine import machine_line

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "detectors" / "dmesg" / "golden"
CONSOLES = ROOT / "vmcore_fixtures" / "cases"
SHARED_CORPUS = ROOT.parent.parent / "shared" / "corpus" / "syzkaller-linux-dev"
if not SHARED_CORPUS.is_dir():
    SHARED_CORPUS = Path("/work/shared/corpus/syzkaller-linux-dev")


def corpus_block(directory: Path) -> tuple[bytes, int]:
    """Every log of a syzkaller-style corpus (the text after each file's header, before a REPORT: section)."""
    names = sorted((p for p in directory.iterdir() if p.name.isdigit()), key=lambda p: int(p.name))
    logs = [p.read_bytes().partition(b"\n\n")[2].split(b"\nREPORT:\n")[0].rstrip(b"\n") + b"\n" for p in names]
    return b"".join(logs), 0


def noise_lines() -> list[bytes]:
    """Real boot/runtime messages: the live ring buffer, as ``[sec.usec] text`` lines."""
    lines: list[bytes] = []
    try:
        fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        fd = -1
    if fd >= 0:
        try:
            while True:
                try:
                    rec = os.read(fd, 16384)
                except BlockingIOError:
                    break
                except OSError:
                    continue
                head, _, text = rec.split(b"\n", 1)[0].partition(b";")
                usec = int(head.split(b",")[2])
                lines.append(b"[%5d.%06d] %s" % (usec // 1_000_000, usec % 1_000_000, text))
        finally:
            os.close(fd)
    if len(lines) < 50:
        lines += [ln for p in GOLDEN.glob("*.log") for ln in p.read_bytes().splitlines() if b"BUG" not in ln]
    # Noise is what a running system prints: the boot banner repeated mid-log would be a reboot each time.
    return [ln for ln in lines if b"Linux version" not in ln]


def sparse_block(report_every: int) -> tuple[bytes, int]:
    """Noise with a golden report every ``report_every`` lines; the block and its report count."""
    noise = noise_lines()
    reports = [p.read_bytes() for p in sorted(GOLDEN.glob("*.log"))]
    block = bytearray()
    n = 0
    for i in range(report_every * len(reports)):
        block += noise[i % len(noise)] + b"\n"
        if i % report_every == report_every - 1:
            block += reports[n % len(reports)].rstrip(b"\n") + b"\n"
            n += 1
    return bytes(block), n


def joined_block(paths: list[Path]) -> tuple[bytes, int]:
    """The files one after the other (each ending in a newline); the report count is not known here."""
    return b"".join(p.read_bytes().rstrip(b"\n") + b"\n" for p in paths), 0


#: A line's printk time, after a syslog prefix if there is one (groups: prefix, padding, seconds, fraction).
_STAMP = re.compile(rb"^([^\n\[]{0,64}?)\[(\s*)(\d+)\.(\d+)\]", re.MULTILINE)


def shifted(block: bytes, seconds: int) -> bytes:
    """``block`` with every leading ``[ sec.usec]`` time moved on by ``seconds``, the stamp as wide as before."""

    def move(m: re.Match[bytes]) -> bytes:
        width = len(m.group(2)) + len(m.group(3))
        return b"%s[%*d.%s]" % (m.group(1), width, int(m.group(3)) + seconds, m.group(4))

    return _STAMP.sub(move, block)


def write_repeated(path: Path, size: int, block: bytes, shift: bool) -> None:
    """Write ``block`` again and again until the file holds at least ``size`` bytes.

    ``shift``: copy ``i`` has its printk times moved on by ``i × span`` seconds (span: past the block's
    last time), as a crash repeated in a real log differs from its first copy.
    """
    span = 1 + max((int(m.group(3)) for m in _STAMP.finditer(block)), default=0)
    written = 0
    copy = 0
    with path.open("wb") as out:
        while written < size:
            out.write(shifted(block, copy * span) if shift and copy else block)
            written += len(block)
            copy += 1


def measure(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float, float | None, bytes]:
    """Wall seconds, CPU seconds and its own peak RSS (MiB, None if unknown: child_usage) of one child process,
    and its first output bytes (the output goes to a file: the JSON of a large log is tens of MB)."""
    with tempfile.TemporaryFile() as out:
        run = run_child(cmd, stdout=out, stderr=subprocess.DEVNULL, env=env)
        out.seek(0)
        head = out.read(200)
    return run.wall, run.cpu, run.rss_mib, head


def sha256_cpu_seconds(path: Path) -> float:
    """CPU seconds this process spends on the SHA-256 of a file read in 1 MiB chunks."""
    digest = hashlib.sha256()
    start = time.process_time()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return time.process_time() - start


def cold_env(cache: Path) -> dict[str, str]:
    """The environment of a first run: bytecode, numba and compiled-regex caches in ``cache`` (empty before the
    cold run; ``XDG_CACHE_HOME`` holds forensics/regexcache.py's file)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(cache / "pycache")
    env["NUMBA_CACHE_DIR"] = str(cache / "numba")
    env["XDG_CACHE_HOME"] = str(cache / "xdg")
    return env


def link_compiled(cache: Path) -> str:
    """Give the warm runs this user's modules compiled by ``make compile`` (forensics/native.py), as a machine
    where it ran has them: ``compiled`` when they are built for the current sources, else ``source``."""
    import detectors.dmesg
    from forensics import native
    from forensics.jit import cache_dir

    built = native.group_dir(detectors.dmesg.NATIVE)
    if not built.is_dir():
        return "source"
    (cache / "numba").mkdir(parents=True, exist_ok=True)
    (cache / "numba" / "native").symlink_to(cache_dir() / "native", target_is_directory=True)
    return "compiled"


def figures(mb: float, wall: float, cpu: float, rss: float | None) -> str:
    """One run's figures: throughput by wall and CPU time, the times, the command's own peak RSS."""
    return f"{mb / wall:6.1f} MB/s wall {wall:6.2f} s {mb / cpu:6.1f} MB/s CPU {cpu:5.2f} s RSS {mib(rss)}"


def run_one(label: str, log: Path, warm_runs: int, fmt: str = "json") -> None:
    """Run kforensic cold and warm and grep on one log, in this process; print one row.

    Cold: a fresh process whose bytecode, numba and regex caches are empty (``PYTHONPYCACHEPREFIX``,
    ``NUMBA_CACHE_DIR`` and ``XDG_CACHE_HOME`` in a new directory), as the first run after an install.
    Warm: the same caches filled by the cold run, the best of ``warm_runs`` by CPU time (the machine may
    be shared), and the median of their CPU times; with the modules ``make compile`` built when it ran
    (:func:`link_compiled`: ``compiled`` in the row, else ``source``).
    """
    mb = log.stat().st_size / 1e6
    kf = [sys.executable, "-m", "forensics", "dmesg", "--format", fmt, str(log)]
    label = label if fmt == "json" else f"{label} ({fmt})"
    with tempfile.TemporaryDirectory() as cache:
        env = cold_env(Path(cache))
        cold = measure(kf, env)
        load_cold = os.getloadavg()[0]
        code = link_compiled(Path(cache))
        runs = [measure(kf, env) for _ in range(warm_runs)]
        warm = min(runs, key=lambda r: r[1])
        median_cpu = statistics.median(r[1] for r in runs)
        load_warm = os.getloadavg()[0]
    g_s, g_cpu, g_rss, g_out = measure(["grep", "-cE", "BUG|WARNING|Oops|panic", str(log)])
    h_cpu = sha256_cpu_seconds(log)
    g_cpu = max(g_cpu, 1e-3)  # grep on a small file may report no CPU time at all
    print(
        f"{label:<16} {mb:7.1f} MB | cold {figures(mb, *cold[:3])} load {load_cold:.2f} | "
        f"warm ({code}) {figures(mb, *warm[:3])} (median {mb / median_cpu:6.1f} MB/s CPU {median_cpu:5.2f} s of "
        f"{len(runs)}) load {load_warm:.2f} | grep -c {figures(mb, g_s, g_cpu, g_rss)} "
        f"({g_out.decode().strip()} lines) | warm/grep: {warm[0] / g_s:4.1f}x the wall, {warm[1] / g_cpu:4.1f}x "
        f"the CPU | sha256 {h_cpu:.2f} s",
        flush=True,
    )


def main() -> None:
    """Build the three logs, run both commands on each, print the figures."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--console-mb", type=int, default=100, help="size of (a), the fixture console logs")
    ap.add_argument("--dense-mb", type=int, default=128, help="size of (b), the golden logs")
    ap.add_argument("--size-mb", type=int, default=1024, help="size of (c), the sparse log")
    ap.add_argument("--report-every", type=int, default=20000, help="noise lines between two reports in (c)")
    ap.add_argument("--corpus", type=Path, default=SHARED_CORPUS, help="(d): a syzkaller-style corpus directory")
    ap.add_argument("--only", choices=("console", "dense", "sparse", "corpus"), action="append", help="run only these")
    ap.add_argument("--rss-check", action="store_true", help="also run (a) at a quarter of its size")
    ap.add_argument("--verbatim", action="store_true", help="also run (a) and (b) repeated byte for byte")
    ap.add_argument("--warm-runs", type=int, default=2, help="warm runs per input (the best is printed)")
    ap.add_argument(
        "--format",
        choices=("json", "text"),
        action="append",
        dest="formats",
        help="the output format(s) measured, a row each (default json; text is what a terminal user gets)",
    )
    args = ap.parse_args()
    print(machine_line(), flush=True)  # the page cost: what makes this VM's figures vary (machine.py)
    console = lambda: joined_block(sorted(CONSOLES.glob("*/console.log")))  # noqa: E731
    dense = lambda: joined_block(sorted(GOLDEN.glob("*.log")))  # noqa: E731
    inputs: list[tuple[str, int, Callable[[], tuple[bytes, int]], bool]] = [
        ("console", args.console_mb, console, True),
        ("dense", args.dense_mb, dense, True),
        ("sparse", args.size_mb, lambda: sparse_block(args.report_every), False),
    ]
    if args.corpus.is_dir():
        corpus = corpus_block(args.corpus)
        # The corpus once (every report distinct: what the report memo cannot save), then four times, byte for
        # byte (write_repeated writes whole copies up to the size): the repeats are what the memo saves.
        inputs.append(("corpus x1", -(-len(corpus[0]) // (1 << 20)), lambda: corpus, False))
        inputs.append(("corpus x4", -(-4 * len(corpus[0]) // (1 << 20)), lambda: corpus, False))
    if args.verbatim:
        inputs[2:2] = [
            ("console/verbatim", args.console_mb, console, False),
            ("dense/verbatim", args.dense_mb, dense, False),
        ]
    if args.rss_check:
        inputs.insert(0, ("console/4", max(1, args.console_mb // 4), console, True))
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at the start", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for label, size_mb, make, shift in inputs:
            if args.only and label.split("/")[0].split()[0] not in args.only:
                continue
            log = Path(tmp) / f"{label.replace('/', '-').replace(' ', '-')}.log"
            block, _ = make()
            size = {"corpus x1": len(block), "corpus x4": 4 * len(block)}.get(label, size_mb << 20)
            write_repeated(log, size, block, shift)
            for fmt in args.formats or ["json"]:
                run_one(label, log, args.warm_runs, fmt)
            log.unlink()


if __name__ == "__main__":
    main()
