"""Throughput and peak memory of ``kforensic dmesg`` on a large log, against grep on the same file.

Builds a log of SIZE MB: ordinary noise (this machine's own kernel ring buffer
when it can be read, else the noise lines of the golden logs) with a real
report (the golden logs of tests/detectors/dmesg/golden) every REPORT_EVERY
lines, then runs, in this one process:
  kforensic dmesg --format json LOG          (wall time, peak RSS)
  grep -cE 'BUG|WARNING|Oops|panic' LOG       (wall time, peak RSS)
and prints MB/s for both and the ratio.  Run: .venv/bin/python benchmarks/dmesg_throughput.py [--size-mb 1024]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "detectors" / "dmesg" / "golden"


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
    return lines


def build_log(path: Path, size: int, report_every: int) -> int:
    """Write the benchmark log; return the number of reports in it."""
    noise = noise_lines()
    reports = [p.read_bytes() for p in sorted(GOLDEN.glob("*.log"))]
    block = bytearray()
    n = 0
    for i in range(report_every * len(reports)):
        block += noise[i % len(noise)] + b"\n"
        if i % report_every == report_every - 1:
            block += reports[n % len(reports)].rstrip(b"\n") + b"\n"
            n += 1
    written = count = 0
    with path.open("wb") as out:
        while written < size:
            out.write(block)
            written += len(block)
            count += n
    return count


def measure(cmd: list[str]) -> tuple[float, float, float, bytes]:
    """Wall seconds, CPU seconds and peak RSS (MB) of one child process, and its first output bytes."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    head = proc.stdout.read(200)
    for _ in iter(lambda: proc.stdout.read(1 << 20), b""):  # type: ignore[union-attr]
        pass
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, head


def sha256_cpu_seconds(path: Path) -> float:
    """CPU seconds this process spends on the SHA-256 of a file read in 1 MiB chunks."""
    digest = hashlib.sha256()
    start = time.process_time()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return time.process_time() - start


def main() -> None:
    """Build the log, run both commands, print the figures."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--report-every", type=int, default=20000, help="noise lines between two reports")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "big.log"
        t0 = time.perf_counter()
        n = build_log(log, args.size_mb << 20, args.report_every)
        mb = log.stat().st_size / 1e6
        print(f"log: {mb:.0f} MB, {n} reports, built in {time.perf_counter() - t0:.1f} s")
        kf = [sys.executable, "-m", "forensics", "dmesg", "--format", "json", str(log)]
        k_s, k_cpu, k_rss, _ = measure(kf)
        g_s, g_cpu, g_rss, g_out = measure(["grep", "-cE", "BUG|WARNING|Oops|panic", str(log)])
        # The machine may be shared: CPU seconds say what the work costs, wall seconds what a user waits.
        print(f"kforensic dmesg: {k_s:.2f} s wall ({mb / k_s:.1f} MB/s), {k_cpu:.2f} s CPU, peak RSS {k_rss:.0f} MB")
        count = g_out.decode().strip()
        print(f"grep -cE:        {g_s:.2f} s wall ({mb / g_s:.1f} MB/s), {g_cpu:.2f} s CPU, peak RSS {g_rss:.0f} MB")
        print(f"grep counted {count} lines; load average {os.getloadavg()[0]:.2f}")
        print(f"ratio kforensic/grep throughput: {(mb / k_s) / (mb / g_s):.3f}")
        # kforensic digests every input (SHA-256 of the source record) while it reads it.
        h_cpu = sha256_cpu_seconds(log)
        print(f"kforensic dmesg per CPU second: {mb / k_cpu:.1f} MB/s (of which SHA-256 of the input ~{h_cpu:.2f} s)")


if __name__ == "__main__":
    main()
