"""Throughput and peak memory of ``kforensic trace`` on an LTTng kernel trace, against ``babeltrace2 DIR``.

The input (default: the project's LTTng kernel + user-space session, tests/data/lttng/kernel-session.tar.xz,
48,103 events with poll/epoll/select layouts; or any session or trace directory, read-only) is copied into
a temporary folder COPIES times end to end: each stream file is the concatenation of COPIES copies of its
packets, copy k shifted in time by k * 2**35 ns (longer than the trace, and a multiple of 2**32, so the
27- and 32-bit event timestamps stay valid: only the 64-bit clock fields, found by the general decoder in
the packet contexts and extended event headers, are rewritten).  Then, each in its own process (peak
RSS is its own):

  babeltrace2 DIR > /dev/null                      (the baseline: decode and pretty-print every event)
  kforensic trace DIR --format json -o OUT         (decode, merge, the whole scheduling analysis, JSON)

and prints wall and CPU seconds, events/s, peak RSS and the ratio.  kforensic runs once before on the
original trace (numba compiles into its cache on a first run).
Runs alternate (babeltrace2, kforensic) --repeat times; prints each pair's ratio, then the best and the
median run of each tool and the min/median/max of the per-pair ratios with the load average.
Run: .venv/bin/python benchmarks/ctf_throughput.py [--input DIR] [--copies 44] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DEFAULT_INPUT = ROOT / "tests" / "data" / "lttng" / "kernel-session.tar.xz"
SHIFT = 1 << 35


def run_measured(argv: list[str], stdout: int | None = subprocess.DEVNULL) -> tuple[float, float, int]:
    """Run a command; wall seconds, CPU seconds and peak RSS in bytes (from wait4)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=stdout, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) not in ((0,) if argv[0] == "babeltrace2" else (0, 1)):
        raise SystemExit(f"{argv[0]} failed: {err.decode(errors='replace')[-500:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def clock_fields(meta_path: Path, stream: Path) -> tuple[list[int], list[int]]:
    """Byte offsets of the packets and of every 64-bit clock field of a stream (general decoder)."""
    from collectors.ctf.general import GeneralDecoder
    from collectors.ctf.metadata import parse_metadata

    dec = GeneralDecoder(parse_metadata(meta_path))
    data = stream.read_bytes()
    packets: list[int] = []
    fields: list[tuple[int, int]] = []
    pos = 0
    while pos < len(data):
        packets.append(pos)
        pos = dec.packet(data, pos, fields).next_offset
    wide = [bit // 8 for bit, size in fields if size == 64]
    if any(bit % 8 for bit, size in fields if size == 64):
        raise SystemExit(f"{stream}: a 64-bit clock field is not byte-aligned (not handled)")
    return packets, wide


def make_copies(src: Path, dst: Path, copies: int) -> int:
    """Every trace under ``src`` repeated ``copies`` times in ``dst`` (see the module docstring); the events."""
    from collectors.ctf.general import decode_stream
    from collectors.ctf.metadata import parse_metadata

    total = 0
    for meta_path in sorted(src.rglob("metadata")):
        tdir = meta_path.parent
        out_dir = dst / tdir.relative_to(src)
        out_dir.mkdir(parents=True, exist_ok=True)
        shutil.copy(meta_path, out_dir / "metadata")
        meta = parse_metadata(meta_path)
        for stream in sorted(p for p in tdir.iterdir() if p.is_file() and p.name != "metadata"):
            data = stream.read_bytes()
            total += sum(len(pk.events) for pk in decode_stream(meta, data)) * copies
            _packets, wide = clock_fields(meta_path, stream)
            order = ">Q" if meta.big_endian else "<Q"
            with open(out_dir / stream.name, "wb") as out:
                for k in range(copies):
                    buf = bytearray(data)
                    for off in wide:
                        struct.pack_into(order, buf, off, struct.unpack_from(order, buf, off)[0] + k * SHIFT)
                    out.write(buf)
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--input", type=Path, default=DEFAULT_INPUT)
    ap.add_argument("--copies", type=int, default=44)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    if shutil.which("babeltrace2") is None:
        raise SystemExit("babeltrace2 is not installed (apt-get install babeltrace2)")
    kforensic = [sys.executable, "-m", "forensics", "trace"]
    print(f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        if args.input.is_file():  # a session kept as an archive (the default)
            with tarfile.open(args.input) as tar:
                tar.extractall(t / "input", filter="data")
            args.input = t / "input"
        wall, _cpu, _rss = run_measured([*kforensic, str(args.input), "--format", "json", "-o", str(t / "w.json")])
        print(f"start-up on the original trace: {wall:.2f} s (compiles if the cache is cold)")
        big = t / "big"
        events = make_copies(args.input, big, args.copies)
        size = sum(p.stat().st_size for p in big.rglob("*") if p.is_file())
        print(f"\n{args.input.name} x{args.copies}: {size / 1e6:.0f} MB, {events} events")
        runs: dict[str, list[tuple[float, float, int]]] = {"babeltrace2": [], "kforensic trace": []}
        ratios: list[tuple[float, float, float]] = []  # per pair of runs: wall ratio, CPU ratio, load average
        for k in range(args.repeat):
            pair = {}
            for name, argv in (
                ("babeltrace2", ["babeltrace2", str(big)]),
                ("kforensic trace", [*kforensic, str(big), "--format", "json", "-o", str(t / "out.json")]),
            ):
                pair[name] = got = run_measured(argv)
                runs[name].append(got)
            (bw, bc, _), (kw, kc, _) = pair["babeltrace2"], pair["kforensic trace"]
            load = os.getloadavg()[0]
            ratios.append((bw / kw, bc / kc, load))
            print(
                f"  run {k + 1}: babeltrace2 {bw:6.2f} s, kforensic {kw:6.2f} s: {bw / kw:.2f}x wall, "
                f"{bc / kc:.2f}x CPU (load {load:.1f})"
            )
        for label, pick in (("best", min), ("median", statistics.median_low)):
            print(f"{label} of {args.repeat}:")
            for name, measured in runs.items():
                wall = pick(w for w, _c, _r in measured)
                _w, cpu, rss = next(r for r in measured if r[0] == wall)
                print(
                    f"  {name:16}: {wall:7.2f} s ({cpu:6.2f} s CPU) {events / wall / 1e3:8.0f} k events/s"
                    f"  peak RSS {rss / 2**20:6.0f} MB"
                )
        walls = sorted(r[0] for r in ratios)
        cpus = sorted(r[1] for r in ratios)
        print(
            f"ratio babeltrace2 / kforensic, same run: wall min {walls[0]:.2f}x median {statistics.median(walls):.2f}x"
            f" max {walls[-1]:.2f}x; CPU min {cpus[0]:.2f}x median {statistics.median(cpus):.2f}x;"
            f" load average {min(r[2] for r in ratios):.1f}-{max(r[2] for r in ratios):.1f}"
        )


if __name__ == "__main__":
    main()
