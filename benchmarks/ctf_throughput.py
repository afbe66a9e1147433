"""Throughput and peak memory of ``kforensic trace`` on an LTTng session, against ``babeltrace2 DIR``, cold and warm.

The input (default: the project's LTTng kernel + user-space session, tests/data/lttng/kernel-session.tar.xz,
48,103 events with poll/epoll/select layouts; or any session or trace directory, read-only) is copied into
a temporary folder COPIES times end to end: each stream file is the concatenation of COPIES copies of its
packets, copy k shifted in time by k * 2**35 ns (longer than the trace, and a multiple of 2**32, so the
27- and 32-bit event timestamps stay valid: only the 64-bit clock fields, found by the general decoder in
the packet contexts and extended event headers, are rewritten).  Then, each in its own process, peak RSS
its own (GNU time), the load average beside each figure:

* cold: a fresh process on an empty compile cache (``NUMBA_CACHE_DIR`` and ``XDG_CACHE_HOME`` new
  directories): the session by the default path (under 10 MB: the plain-Python decoder and engine,
  nothing compiled), the copies by the default path (compiled code not built, under 250 MB: the plain
  path, said on stderr), the session with compiled code forced (builds the decoder and the engine ahead of
  time, forensics/aot.py, into the cache the warm runs use: those load no numba), and the copies with
  numba's JIT forced (``KFORENSIC_AOT=no``: compiles into its own cache); each
  compiled run's peak RSS beside babeltrace2's on the copies, as a ratio;
* warm: the session both ways, the copies by the JIT and by the code built ahead of time (RSS ratios),
  then --repeat alternating pairs on the copies of

  babeltrace2 DIR > /dev/null                      (the baseline: decode and pretty-print every event)
  kforensic trace DIR --format json -o OUT         (decode, merge, the scheduling and span analyses, JSON)

with each pair's ratio, the best and median run of each tool, the min/median/max ratio (wall and CPU,
start-up included) and peak RSS against babeltrace2's.
Run: nice -n 10 .venv/bin/python benchmarks/ctf_throughput.py [--input DIR] [--copies 44] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import struct
import sys
import tarfile
import tempfile
from pathlib import Path

from child_usage import mib, run_child
from machine import machine_line

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DEFAULT_INPUT = ROOT / "tests" / "data" / "lttng" / "kernel-session.tar.xz"
SHIFT = 1 << 35


def run_measured(
    argv: list[str], env: dict[str, str] | None = None, ok: tuple[int, ...] = (0, 1)
) -> tuple[float, float, int]:
    """Run a command; wall seconds, CPU seconds and its own peak RSS in bytes (child_usage: GNU time).

    The RSS ratio to babeltrace2 is one of issue #28's lines, so a figure that could be this process's
    own (no GNU time) stops the benchmark rather than print a ratio of the wrong peaks.
    """
    run = run_child(argv, env=env)
    if run.exit_code not in ok:
        raise SystemExit(f"{argv[0]} failed: {run.stderr.decode(errors='replace')[-500:]}")
    if run.rss_mib is None:
        raise SystemExit(f"peak RSS of {argv[0]} unknown: {mib(None)}")
    return run.wall, run.cpu, int(run.rss_mib * 2**20)


def line(label: str, got: tuple[float, float, int]) -> str:
    """One figure: wall, CPU, peak RSS and the load average now."""
    wall, cpu, rss = got
    return (
        f"  {label:52} {wall:7.2f} s wall ({cpu:6.2f} s CPU)  peak RSS {rss / 2**20:6.0f} MB"
        f"  (load {os.getloadavg()[0]:.1f})"
    )


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
    ap.add_argument("--no-cold-big", action="store_true", help="skip the cold run on the copied (large) input")
    args = ap.parse_args()
    print(machine_line(), flush=True)  # the page cost: what makes this VM's figures vary (machine.py)
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
        big = t / "big"
        events = make_copies(args.input, big, args.copies)
        small_size = sum(p.stat().st_size for p in args.input.rglob("*") if p.is_file())
        size = sum(p.stat().st_size for p in big.rglob("*") if p.is_file())
        print(f"{args.input.name}: {small_size / 1e6:.1f} MB; x{args.copies}: {size / 1e6:.0f} MB, {events} events")

        def env(cache: str, compiled: str = "auto", aot: str = "") -> dict[str, str]:
            """A compile cache of its own (cold: a new directory), XDG_CACHE_HOME beside it (no other cache)."""
            base = {k: v for k, v in os.environ.items() if k != "KFORENSIC_AOT"}
            return {
                **base,
                "NUMBA_CACHE_DIR": str(t / cache),
                "XDG_CACHE_HOME": str(t / f"{cache}-xdg"),
                "KFORENSIC_COMPILED": compiled,
                **({"KFORENSIC_AOT": aot} if aot else {}),
            }

        def trace(path: Path) -> list[str]:
            return [*kforensic, str(path), "--format", "json", "-o", str(t / "out.json")]

        print("cold (a fresh process, an empty compile cache each):")
        print(line("the session, default path (no compile under 10 MB)", run_measured(trace(args.input), env("c1"))))
        if not args.no_cold_big:
            print(
                line(f"x{args.copies}, default path (not built: plain, said so)", run_measured(trace(big), env("c2")))
            )
        bt_rss = run_measured(["babeltrace2", str(big)], None, (0,))[2]
        print(f"  babeltrace2 on x{args.copies} (for the RSS ratios below): peak RSS {bt_rss / 2**20:.0f} MB")

        def vs_bt(label: str, got: tuple[float, float, int]) -> str:
            return f"{line(label, got)}  {got[2] / bt_rss:.1f}x babeltrace2's RSS"

        print(
            vs_bt(
                "the session, compiled forced (builds decoder+engine ahead of time)",
                run_measured(trace(args.input), env("w", "yes")),
            )
        )
        if not args.no_cold_big:
            print(
                vs_bt(
                    f"x{args.copies}, compiled forced, JIT (KFORENSIC_AOT=no: numba compiles)",
                    run_measured(trace(big), env("c3", "yes", "no")),
                )
            )
        print("warm (compiled code in the cache of the runs above):")
        print(line("the session, compiled forced (ahead of time)", run_measured(trace(args.input), env("w", "yes"))))
        print(line("the session, default path", run_measured(trace(args.input), env("w"))))
        if not args.no_cold_big:
            print(vs_bt(f"x{args.copies}, JIT (KFORENSIC_AOT=no)", run_measured(trace(big), env("c3", "yes", "no"))))
            print(vs_bt(f"x{args.copies}, ahead of time (the default once built)", run_measured(trace(big), env("w"))))
        runs: dict[str, list[tuple[float, float, int]]] = {"babeltrace2": [], "kforensic trace": []}
        ratios: list[tuple[float, float, float]] = []  # per pair of runs: wall ratio, CPU ratio, load average
        print(f"x{args.copies}, babeltrace2 {big.name} > /dev/null against kforensic trace (warm), alternating:")
        for k in range(args.repeat):
            pair = {}
            for name, argv, run_env, ok in (
                ("babeltrace2", ["babeltrace2", str(big)], None, (0,)),
                ("kforensic trace", trace(big), env("w"), (0, 1)),
            ):
                pair[name] = got = run_measured(argv, run_env, ok)
                runs[name].append(got)
            (bw, bc, brss), (kw, kc, krss) = pair["babeltrace2"], pair["kforensic trace"]
            load = os.getloadavg()[0]
            ratios.append((bw / kw, bc / kc, load))
            print(
                f"  run {k + 1}: babeltrace2 {bw:6.2f} s ({bc:5.2f} CPU, {brss / 2**20:4.0f} MB), kforensic {kw:6.2f} s"
                f" ({kc:5.2f} CPU, {krss / 2**20:4.0f} MB): {bw / kw:.2f}x wall, {bc / kc:.2f}x CPU (load {load:.1f})"
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
        rss_ratio = max(r for _w, _c, r in runs["kforensic trace"]) / max(r for _w, _c, r in runs["babeltrace2"])
        print(
            f"ratio babeltrace2 / kforensic, same run: wall min {walls[0]:.2f}x median {statistics.median(walls):.2f}x"
            f" max {walls[-1]:.2f}x; CPU min {cpus[0]:.2f}x median {statistics.median(cpus):.2f}x;"
            f" peak RSS kforensic / babeltrace2 {rss_ratio:.1f}x;"
            f" load average {min(r[2] for r in ratios):.1f}-{max(r[2] for r in ratios):.1f}"
        )


if __name__ == "__main__":
    main()
