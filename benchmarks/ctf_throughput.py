"""Throughput and peak memory of ``kforensic trace`` on an LTTng kernel trace, against ``babeltrace2 DIR``.

The input (default: ../shared/traces/ctf/bug446190, read-only) is copied into a temporary folder
COPIES times end to end: each stream file is the concatenation of COPIES copies of its packets, copy k
shifted in time by k * 2**35 ns (longer than the trace, and a multiple of 2**32, so the 32-bit compact
event timestamps stay valid: only the packet contexts' 64-bit timestamps and the extended event headers
are rewritten).  Then, each in its own process (peak RSS is its own):

  babeltrace2 DIR > /dev/null                      (the baseline: decode and pretty-print every event)
  kforensic trace DIR --format json -o OUT         (decode, merge, the whole scheduling analysis, JSON)

and prints wall and CPU seconds, events/s, peak RSS and the ratio.  kforensic runs once before on the
original trace (numba compiles into its cache on a first run).
Runs alternate (babeltrace2, kforensic) --repeat times; prints each pair's ratio, then the best and the
median run of each tool and the min/median/max of the per-pair ratios with the load average.
Run: .venv/bin/python benchmarks/ctf_throughput.py [--input DIR] [--copies 256] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DEFAULT_INPUT = ROOT.parent / "shared" / "traces" / "ctf" / "bug446190"
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


def event_offsets(trace: Path, stream: Path) -> tuple[list[tuple[int, int]], list[int]]:
    """(packet offset, packet bytes) and the byte offsets of the events, from kforensic's own decoder."""
    from collectors.ctf import decode as d
    from collectors.ctf.metadata import parse_metadata

    meta = parse_metadata(trace / "metadata")
    lay = d.compile_layouts(meta)
    n_streams, n_ids = lay.event_progs.shape[:2]
    want = np.ones((n_streams, n_ids), dtype=np.int64)
    emit = np.full((n_streams, n_ids, d.N_VALUES), -1, dtype=np.int64)
    buf = np.fromfile(stream, dtype=np.uint8)
    rows = np.zeros((len(buf) // 4 + 16, d.N_ROWCOLS), dtype=np.int64)
    packets = np.zeros((len(buf) // 64 + 16, d.N_PKTCOLS), dtype=np.int64)
    counts = np.zeros((n_streams, n_ids), dtype=np.int64)
    st = np.zeros(8, dtype=np.int64)
    st[0] = len(rows)
    d.run(lay, buf, 0, want, emit, d.field_reads(lay, want, emit), counts, rows, packets, st)
    if st[3] != d.ST_END:
        raise SystemExit(f"{stream}: not fully decodable (stop code {st[3]})")
    pk = [(int(p[d.P_OFF]), int(p[d.P_SIZE]) // 8) for p in packets[: st[2]]]
    return pk, rows[: st[1], d.R_OFF].tolist()


def make_copies(src: Path, dst: Path, copies: int) -> int:
    """The trace ``src`` repeated ``copies`` times in ``dst`` (see the module docstring); the event count."""
    dst.mkdir()
    shutil.copy(src / "metadata", dst / "metadata")
    total = 0
    for stream in sorted(p for p in src.iterdir() if p.is_file() and p.name.startswith("channel")):
        data = stream.read_bytes()
        packets, events = event_offsets(src, stream)
        total += len(events) * copies
        ext: list[int] = []  # offsets of extended headers' 64-bit timestamps (event_header_large, id 65535)
        for off in events:
            pos = (off + 1) // 2 * 2
            if struct.unpack_from("<H", data, pos)[0] == 65535:
                pos = (pos + 2 + 7) // 8 * 8 + 4  # the extended struct is 64-bit aligned: u32 id, u64 timestamp
                ext.append((pos + 7) // 8 * 8)
        with open(dst / stream.name, "wb") as out:
            for k in range(copies):
                buf = bytearray(data)
                for off, _size in packets:
                    for field in (24, 32):  # timestamp_begin, timestamp_end after magic, uuid, stream_id
                        value = struct.unpack_from("<Q", buf, off + field)[0]
                        struct.pack_into("<Q", buf, off + field, value + k * SHIFT)
                for pos in ext:
                    struct.pack_into("<Q", buf, pos, struct.unpack_from("<Q", buf, pos)[0] + k * SHIFT)
                out.write(buf)
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--input", type=Path, default=DEFAULT_INPUT)
    ap.add_argument("--copies", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    if shutil.which("babeltrace2") is None:
        raise SystemExit("babeltrace2 is not installed (apt-get install babeltrace2)")
    kforensic = [sys.executable, "-m", "forensics", "trace"]
    print(f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        wall, _cpu, _rss = run_measured([*kforensic, str(args.input), "--format", "json", "-o", str(t / "w.json")])
        print(f"start-up on the original trace: {wall:.2f} s (compiles if the cache is cold)")
        big = t / "big"
        events = make_copies(args.input, big, args.copies)
        size = sum(p.stat().st_size for p in big.iterdir())
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
