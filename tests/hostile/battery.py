"""A battery of hostile but realistic inputs for every command, and the check that each run is clean.

Clean (docs/cli.md, "Conventions"): exit 0, 1, 2 or 3; on 2 or 3 one ``kforensic: error:`` line (and an
optional ``kforensic: hint:``), never a traceback for exit 2/3, also under ``--debug`` (which adds one
``kforensic: debug:`` line after them, where the error was raised); every file,
link and node that existed before the run is as it was (evidence byte-identical, devices still devices,
symbolic links still pointing where they did); nothing new appears but the named output, which is complete
(valid JSON for ``--format json``) or absent.

``python -m tests.hostile.battery`` runs every case and prints one line per case and the totals;
``tests/hostile/test_hostile.py`` runs the cheap ones under pytest.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import lzma
import os
import re
import shutil
import signal
import sqlite3
import stat
import struct
import subprocess
import sys
import tarfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KFORENSIC = str(Path(sys.executable).with_name("kforensic"))
CONSOLE = ROOT / "vmcore_fixtures/cases/02-bug-on/console.log"
SNAPSHOTS = ROOT / "vmcore_fixtures/cases/08-slab-leak/snapshots"
VMCORE = ROOT / "vmcore_fixtures/cases/02-bug-on/vmcore"
VMLINUX_XZ = ROOT / "vmcore_fixtures/vmlinux.xz"
OTHER_VMLINUX_XZ = ROOT / "vmcore_fixtures/kernels/5.10/vmlinux.xz"
FTRACE = ROOT / "tests/data/traces/kf.ftrace.txt.gz"
PERF = ROOT / "tests/data/profile/contend.perf.txt.gz"
UST = ROOT / "tests/data/lttng/ust.tar.gz"
NOBODY = 65534


@dataclass
class Case:
    """One run: its argv (after ``kforensic``), what it may write, how it is fed."""

    name: str
    argv: list[str]
    output: Path | None = None  # the one path the run may create or replace
    json_output: bool = False
    stdin: bytes | None = None
    stdin_from: str | None = None  # a path opened as the run's standard input instead (`< /dev/zero`)
    fifo_feed: tuple[Path, bytes] | None = None  # a FIFO and what a writer puts into it
    as_nobody: bool = False
    want_rc: int | None = None  # the one exit code the case must end with, when the contract names it
    want_out: str | None = None  # text stdout must hold (a figure across a gap or a clock jump is flagged)
    want_err: str | None = None  # text the error line must hold (it says what is wrong)
    # "pipe"; "closed" (fd 1 closed, `>&-`); "broken" (a pipe whose reader went before the first write, as
    # `| head -1` is once it has its line: the run must meet EPIPE, whatever the size of its output)
    stdout: str = "pipe"
    stderr: str = "pipe"  # "pipe"; "broken" (its reader gone: a dead logger); then only the exit code can be judged
    # (seconds, signal): sent that long after the run has taken all but the last pipeful of ``stdin`` (give
    # more than 64 KB: the run is then past start-up and reading, whatever the load); SIGINT must end it
    # with exit 130 and one error line, any signal must leave no file behind
    signal_after: tuple[float, int] | None = None
    cheap: bool = True
    # Seconds without an answer that count as a hang: generous, because make test runs beside other jobs on a
    # 2-core machine (a command that answers in 2 s idle took 18 s at load 8); a real hang is still caught.
    timeout: float = 300.0
    # Most memory the run may hold (peak RSS, MB): an input that decompresses or reads without bound (a
    # decompression "bomb", one line of 512 MB) must not take the machine's memory
    max_rss_mb: int | None = None


@dataclass
class Outcome:
    case: str
    clean: bool
    why: str = ""
    returncode: int | None = None
    stderr: str = ""
    extra: dict[str, str] = field(default_factory=dict)


# ---------------------------------------------------------------- the files the cases read


def _bytes_of(path: Path) -> bytes:
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        return gzip.decompress(data)
    return data


_TS = re.compile(rb"(\s)(\d+)\.(\d{6})(: )")
_SNAP_HEAD = re.compile(rb"date=(\d+) uptime=([\d.]+)")
_DMESG_TS = re.compile(rb"^(<\d>)?\[\s*(\d+)\.(\d+)\]")


def _shift_ts(line: bytes, delta: float) -> bytes:
    """An ftrace line with its timestamp moved by ``delta`` seconds (a suspend, a clock step)."""

    def moved(m: re.Match[bytes]) -> bytes:
        return m[1] + b"%.6f" % max(0.0, float(m[2] + b"." + m[3]) + delta) + m[4]

    return _TS.sub(moved, line, count=1)


def _dmesg_back(line: bytes, back: bool) -> bytes:
    """A console line whose timestamp, in the second half, is 2 s earlier (a clock reset after a resume)."""
    if not back:
        return line
    return _DMESG_TS.sub(lambda m: (m[1] or b"") + b"[%5d.%s]" % (max(0, int(m[2]) - 2), m[3]), line, count=1)


_BIG_DEC = re.compile(rb"(?<![0-9A-Za-z])\d+(?![0-9A-Za-z])")
_BIG_HEX = re.compile(rb"(?<=0x)[0-9a-f]+|(?<![0-9A-Za-z])[0-9a-f]{8,}(?![0-9A-Za-z])")


def _blown(line: bytes, number: re.Pattern[bytes], digits: bytes) -> bytes:
    """A log line with each number of its message (after the ``[ sec.usec]`` stamp) replaced by ``digits``."""
    m = _DMESG_TS.match(line)
    at = m.end() if m else 0
    return line[:at] + number.sub(digits, line[at:])


def _cut_packet(stream: Path, _meta: Path) -> None:
    stream.write_bytes(stream.read_bytes()[: stream.stat().st_size // 2 + 37])


def _empty_stream(stream: Path, _meta: Path) -> None:
    stream.write_bytes(b"")


def _cut_metadata(_stream: Path, meta: Path) -> None:
    meta.write_bytes(meta.read_bytes()[: meta.stat().st_size // 2])


def _garbage_metadata(_stream: Path, meta: Path) -> None:
    meta.write_bytes(b"/* CTF 1.8 */\ntrace { major = 1; minor = 8; byte_order = le; }; event { name = ")


def _plain_metadata(meta: Path) -> str:
    """The TSDL text of a packetized metadata file (each packet: a 37-byte header, then its content)."""
    data, text, at = meta.read_bytes(), b"", 0
    while at + 37 <= len(data):
        content, packet = struct.unpack_from("<II", data, at + 24)
        text += data[at + 37 : at + content // 8]
        at += max(packet // 8, 37)
    return text.decode()


def _metadata_saying(old: str, new: str) -> Callable[[Path, Path], None]:
    """A damage that rewrites the metadata as plain TSDL with ``old`` replaced by ``new`` (valid-looking, absurd)."""

    def damage(_stream: Path, meta: Path) -> None:
        text = _plain_metadata(meta)
        assert old in text, old
        meta.write_text(text.replace(old, new, 1))

    return damage


_CTF_DAMAGE: dict[str, Callable[[Path, Path], None]] = {
    "ctf-cut-packet": _cut_packet,
    "ctf-empty-stream": _empty_stream,
    "ctf-cut-metadata": _cut_metadata,
    "ctf-unparsable-metadata": _garbage_metadata,
    # sizes and numbers no tracer writes (were exit 4: a negative shift, int64 overflow, a division by 0 Hz;
    # an event id of 99999999999 asked for terabytes of tables): collectors/ctf/metadata.py
    "ctf-negative-int-size": _metadata_saying(
        "size = 32; align = 8; signed = false; }", "size = -8; align = 8; signed = false; }"
    ),
    "ctf-huge-array": _metadata_saying("_procname[17]", "_procname[99999999999999999999999]"),
    "ctf-clock-0-hz": _metadata_saying("freq = 1000000000;", "freq = 0;"),
    "ctf-huge-event-id": _metadata_saying("\tid = 0;\n\tstream_id = 0;", "\tid = 99999999999;\n\tstream_id = 0;"),
}


BOMB_BYTES = 512 << 20
BOMB_RSS_MB = 400  # a run on a bomb holds no more than this (before: trace 1.06 GB, slab-import 5.3 GB)


def _zstd_bomb(byte: bytes, size: int) -> bytes:
    import zstandard

    out = zstandard.ZstdCompressor(level=1).compressobj()
    piece = byte * (1 << 24)
    return b"".join([*(out.compress(piece) for _ in range(size >> 24)), out.flush()])


def _gzip_bomb(byte: bytes, size: int) -> bytes:
    import zlib

    out = zlib.compressobj(1, wbits=31)
    piece = byte * (1 << 24)
    return b"".join([*(out.compress(piece) for _ in range(size >> 24)), out.flush()])


def make_inputs(base: Path) -> dict[str, Path]:
    """The hostile files, each under ``base``; names map to paths."""
    base.mkdir(parents=True, exist_ok=True)
    log = _bytes_of(CONSOLE)
    trace = _bytes_of(FTRACE)
    perf = _bytes_of(PERF)
    made: dict[str, Path] = {}

    def put(name: str, data: bytes) -> Path:
        path = base / name
        path.write_bytes(data)
        made[name] = path
        return path

    put("empty", b"")
    put("garbage", bytes(range(256)) * 400)
    put("nuls", b"\0" * 100_000)
    put("nul-in-log", log[: len(log) // 2] + b"\0" * 5000 + log[len(log) // 2 :])
    put("latin1", log.replace(b"BUG", "BÜG".encode("latin-1")) + b"\xff\xfe\xc3\x28\n")
    put("huge-line", b"<4>[  1.000000] " + b"A" * 12_000_000)
    gz = gzip.compress(log)
    put("trunc.gz", gz[: len(gz) // 2])
    put("corrupt.gz", gz[:20] + b"\xde\xad" * 100 + gz[220:])
    xz = lzma.compress(log)
    put("trunc.xz", xz[: len(xz) // 2])
    put("gz-garbage", b"\x1f\x8b" + os.urandom(4000))
    put("trace-trunc.gz", gzip.compress(trace)[:50_000])
    put("mixed-trace", perf[: len(perf) // 3] + trace[: len(trace) // 3] + perf[len(perf) // 3 :])
    put("perf", perf)
    put("ftrace", trace)
    put("log", log)
    put("json-deep", b"[" * 200_000 + b"]" * 200_000)
    # decompression bombs (collectors/inputs.decompress_chunks): one 1 MB chunk of gzip made 1 GB at once, a zstd
    # frame its whole content; then readers that held a whole line or file (profile 1.05 GB, span
    # tables 7.2 GB); 512 MB of one byte each, 16 KB (zstd) and 2.3 MB (gzip) on disk
    put("zstd-bomb", _zstd_bomb(b"A", BOMB_BYTES))  # one line of 512 MB, no newline
    put("gz-bomb", _gzip_bomb(b"\n", BOMB_BYTES))  # 512 M blank lines (trace: 4 us each, a line at a time)
    # an integer of more than 4300 digits: Python's int() refuses it (ValueError, not JSONDecodeError: exit 4)
    put("json-bigint", b'{"schema": "kforensic.incident/1", "findings": [{"severity": 1' + b"0" * 5000 + b"}]}")
    put("spans-bigint.jsonl", b'{"tid": 1' + b"0" * 5000 + b', "name": "x", "start_ns": 1, "end_ns": 2}\n')
    put("json-wrong", b'{"schema": "kforensic.incident/1", "findings": 5}')
    put("json-list", b"[1, 2, 3]")
    put("json-nan", b'{"schema": "kforensic.dmesg/1", "incident": {"findings": [{"severity": NaN}]}}')
    put("folded-bad", b"a;b;c notanumber\n;;; 5\nx -3\n" + b"y " + b"9" * 400 + b"\n")
    put("folded-zero", b"a;b;c 0\nd;e 0\n")  # valid-looking, but no CPU time to share out
    put("perf-period0", b"contend 12796   361.339342:          0 cpu-clock:ppp: \n\t126a critical+0x1a (/x)\n\n")
    put("crlf-log", log.replace(b"\n", b"\r\n"))
    # A header after a 200 KB run of non-space characters: the allocation-failure and OOM patterns, tried from every
    # character of the run, took 91 s of CPU on a 60 KB one (quadratic: this one outlasts the case's timeout).
    run = b"1:" * 100_000
    put(
        "log-long-run",
        b"[    1.000000] " + run + b" kworker/u8:2: page allocation failure: order:4, mode:0x40cc0(GFP_KERNEL)\n"
        b"[    1.000001] " + run + b" a invoked oom-killer: gfp_mask=" + run + b" order=0\n",
    )
    put("trace-cr-only", trace.replace(b"\n", b"\r"))  # lines ended by a lone CR: one line to a reader
    put(
        "trace-cr-only-events",
        b"".join(line for line in trace.splitlines(True) if not line.startswith(b"#")).replace(b"\n", b"\r"),
    )
    # every number of each line's message blown to 5,000 digits (decimal, then hex): none is what a kernel prints
    put("log-bigint", b"".join(_blown(line, _BIG_DEC, b"7" * 5000) for line in log.splitlines(keepends=True)))
    put("log-bighex", b"".join(_blown(line, _BIG_HEX, b"f" * 5000) for line in log.splitlines(keepends=True)))
    put("perf-bigint", re.sub(rb"(?m)^(\S+ +)\d+", rb"\g<1>" + b"7" * 5000, perf, count=3))  # pids past 64 bits
    put("log-bom-nul-latin1", b"\xef\xbb\xbf" + log.replace(b"\n", b"\r\n", 40).replace(b"Call Trace", b"Call\0Trace"))
    body = trace.splitlines(keepends=True)
    half = len(body) // 2
    put("clock-jump", b"".join(body[:half] + [_shift_ts(line, 3600.0) for line in body[half:]]))
    put("clock-back", b"".join(body[:half] + [_shift_ts(line, -0.2) for line in body[half:]]))
    put(
        "dmesg-back",
        b"".join(_dmesg_back(line, i > log.count(b"\n") // 2) for i, line in enumerate(log.splitlines(True))),
    )
    put(
        "perf-nosyms",
        perf.replace(b" critical+0x1a (/tmp/profile-workload/contend)", b" [unknown] ([unknown])")
        + b"contend 12796   362.000000:          1 sched:sched_switch: prev_comm=contend prev_pid=12796\n\n",
    )
    (base / "a dir").mkdir()
    made["dir"] = base / "a dir"
    fifo = base / "fifo"
    os.mkfifo(fifo)
    made["fifo"] = fifo
    loop = base / "loop"
    loop.symlink_to(base / "loop")
    made["loop"] = loop
    put("-leading-dash.log", log)
    put("new\nline.log", log)
    put("sp ace.log", log)
    unreadable = put("unreadable.log", log)
    unreadable.chmod(0)
    locked = base / "locked"  # a directory only root may enter, a log in it
    locked.mkdir()
    (locked / "kern.log").write_bytes(log)
    locked.chmod(0o700)
    made["locked-dir-file"] = locked / "kern.log"
    dangling = base / "dangling"
    dangling.symlink_to(base / "no-such-target")
    made["dangling"] = dangling
    # a store: the slab-leak fixture's snapshots imported, and a damaged copy of it
    store = base / "store.sqlite"
    done = subprocess.run(
        [KFORENSIC, "slab-import", str(SNAPSHOTS), "--store", str(store), "--no-analysis"],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"cannot make the store: {done.stderr!r}")
    made["store"] = store
    data = bytearray(store.read_bytes())
    for offset in range(4096, len(data), 4096):  # every page after the header: its b-tree header smashed
        data[offset : offset + 12] = b"\xa5" * 12
    put("store-corrupt.sqlite", bytes(data))
    put("store-trunc.sqlite", bytes(store.read_bytes()[: len(data) // 3]))
    put("store-header-only.sqlite", store.read_bytes()[:100])
    # stores whose pages are sound but whose values no writer makes (edited by hand, another tool's bug)
    for name, sql in (
        ("store-text-wall.sqlite", "UPDATE samples SET wall = 'yesterday' WHERE id > 45"),
        ("store-huge-wall.sqlite", "UPDATE samples SET wall = -1e300 WHERE id > 45"),
        ("store-negative-count.sqlite", "UPDATE slab_packed SET caches = -1 WHERE sample_id = 3"),
    ):
        edited = put(name, store.read_bytes())
        with contextlib.closing(sqlite3.connect(edited)) as db, db:
            db.execute(sql)
    # snapshots: one cut in the middle of its last row, one with garbage rows
    snaps = sorted(p for p in SNAPSHOTS.iterdir() if p.is_file())
    snapdir = base / "snaps-cut"
    snapdir.mkdir()
    for snap in snaps:
        shutil.copy(snap, snapdir / snap.name)
    last = snapdir / snaps[-1].name
    last.write_bytes(last.read_bytes()[: last.stat().st_size // 2])
    made["snaps-cut"] = snapdir
    garbled = base / "snaps-garbled"
    garbled.mkdir()
    for i, snap in enumerate(snaps):
        raw = snap.read_bytes()
        (garbled / snap.name).write_bytes(raw if i % 2 else raw.replace(b" ", b"\0", 40))
    made["snaps-garbled"] = garbled
    # a CTF trace missing its metadata
    ctf = base / "ctf"
    ctf.mkdir()
    with tarfile.open(UST) as tar:
        tar.extractall(ctf, filter="data")
    for meta in ctf.rglob("metadata"):
        meta.unlink()
    made["ctf-no-metadata"] = ctf
    for name, damage in _CTF_DAMAGE.items():
        where = base / name
        where.mkdir()
        with tarfile.open(UST) as tar:
            tar.extractall(where, filter="data")
        damage(sorted(where.rglob("channel*_*"))[0], next(where.rglob("metadata")))
        made[name] = where
    gap = base / "snaps-gap"  # the slab-leak samples with a two-hour hole (a suspend) in the middle
    gap.mkdir()
    for i, snap in enumerate(snaps):
        text = snap.read_bytes()
        if i >= len(snaps) // 2:
            text = _SNAP_HEAD.sub(lambda m: b"date=%d uptime=%.2f" % (int(m[1]) + 7200, float(m[2]) + 7200), text, 1)
        (gap / snap.name).write_bytes(text)
    made["snaps-gap"] = gap
    far = base / "snaps-year-10000"  # the samples' `date=` beyond any calendar date (a clock or a script gone wrong)
    far.mkdir()
    for i, snap in enumerate(snaps):
        (far / snap.name).write_bytes(
            _SNAP_HEAD.sub(b"date=%d uptime=\\2" % (253402300800 + 60 * i), snap.read_bytes(), 1)
        )
    made["snaps-year-10000"] = far
    far_store = base / "store-year-10000.sqlite"
    subprocess.run(
        [KFORENSIC, "slab-import", str(far), "--store", str(far_store), "--no-analysis"],
        capture_output=True,
        check=False,
    )
    if not far_store.exists():
        raise RuntimeError("cannot make the store of year 10000")
    made["store-year-10000"] = far_store
    ctf_empty = base / "ctf-empty"
    (ctf_empty / "kernel").mkdir(parents=True)
    (ctf_empty / "kernel" / "metadata").write_bytes(b"/* CTF 1.8 */\ntrace { major = 1; };\n")
    made["ctf-bad-metadata"] = ctf_empty
    # a kdump root with hostile files in it
    kroot = base / "kroot"
    (kroot / "etc/default").mkdir(parents=True)
    (kroot / "proc/sys/kernel").mkdir(parents=True)
    (kroot / "proc/cmdline").write_bytes(b"crashkernel=\xff\xfe\0 quiet\n")
    (kroot / "etc/default/kdump-tools").write_bytes(b"USE_KDUMP=\x00\xff\nKDUMP_COREDIR=`rm -rf /`\n")
    (kroot / "proc/sys/kernel/panic_on_oops").write_bytes(b"garbage\n")
    (kroot / "etc/default/grub").mkdir()
    made["kdump-root"] = kroot
    # a truncated vmcore, a directory with two dumps
    put("vmcore-trunc", VMCORE.read_bytes()[: 1 << 20])
    put("vmcore-header", VMCORE.read_bytes()[:4096])
    # a process's core (ET_CORE, x86-64, no VMCOREINFO note), and a dump copied compressed
    put("user-core", b"\x7fELF\x02\x01\x01" + b"\0" * 9 + b"\x04\x00\x3e\x00\x01" + b"\0" * 4139)
    put("vmcore.gz", gzip.compress(VMCORE.read_bytes()[: 1 << 20], 1))
    two = base / "two-dumps"
    two.mkdir()
    (two / "vmcore").write_bytes(VMCORE.read_bytes()[:8192])
    (two / "dump.202601010000").write_bytes(VMCORE.read_bytes()[:8192])
    made["two-dumps"] = two
    ro = base / "ro-dir"
    ro.mkdir()
    ro.chmod(0o555)
    made["ro-dir"] = ro
    foreign = put("foreign-out.json", b'{"not": "ours"}\n')
    os.chown(foreign, NOBODY, NOBODY)
    existing = put("existing-out.json", b'{"previous": "report"}\n')
    made["existing-out"] = existing
    link_to_evidence = base / "link-to-log"
    link_to_evidence.symlink_to(made["log"])
    made["link-to-log"] = link_to_evidence
    link_to_null = base / "link-to-null"
    link_to_null.symlink_to("/dev/null")
    made["link-to-null"] = link_to_null
    base.chmod(0o755)
    return made


def vmlinux_files(base: Path) -> dict[str, Path]:
    """The dump's own vmlinux and another kernel's, decompressed once (expensive cases only)."""
    made: dict[str, Path] = {}
    for name, source in (("vmlinux", VMLINUX_XZ), ("wrong-vmlinux", OTHER_VMLINUX_XZ)):
        target = base / name
        if not target.exists() and source.exists():
            with lzma.open(source) as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
        if target.exists():
            made[name] = target
    return made


# ---------------------------------------------------------------- the cases


# where each command takes one input file, and the argv around it
FILE_SLOTS: dict[str, Callable[[str], list[str]]] = {
    "dmesg": lambda p: ["dmesg", p],
    "trace": lambda p: ["trace", p],
    "profile": lambda p: ["profile", p],
    "slab-import": lambda p: ["slab-import", p, "--store", "{tmp}/imp.sqlite", "--no-analysis"],
    "leaks": lambda p: ["leaks", "--store", p],
    "slab-export": lambda p: ["slab-export", "--store", p],
    "report-from": lambda p: ["report", "--from", p],
    "report-dmesg": lambda p: ["report", "--dmesg", p],
    "report-trace": lambda p: ["report", "--trace", p],
    "report-profile": lambda p: ["report", "--profile", p],
    "report-store": lambda p: ["report", "--store", p],
    "vmcore": lambda p: ["vmcore", p, "--no-debuginfod"],
    "kdump-check": lambda p: ["kdump", "check", "--root", p],
    "profile-diff": lambda p: ["profile", "{perf}", "--diff", p],
}

HOSTILE_FILES = [
    "empty",
    "garbage",
    "nuls",
    "latin1",
    "huge-line",
    "trunc.gz",
    "corrupt.gz",
    "trunc.xz",
    "gz-garbage",
    "dir",
    "loop",
    "dangling",
    "unreadable.log",
    "locked-dir-file",
    "missing",
    "/dev/zero",
    "fifo",
    "zstd-bomb",
    "gz-bomb",
]
BOMBS = {"zstd-bomb", "gz-bomb"}  # judged on their peak memory too (BOMB_RSS_MB)


def _short(argv: list[str]) -> str:
    """An argv as a case name: paths by their last part."""
    return " ".join(Path(a).name if a.startswith("/") else a for a in argv)


def cases(inputs: dict[str, Path], tmp: Path, vmlinux: dict[str, Path] | None = None) -> Iterator[Case]:
    """Every case of the battery; ``tmp`` is where a case may put its output."""

    def path_of(name: str) -> str:
        if name.startswith("/"):
            return name
        if name == "missing":
            return str(tmp / "no-such-file")
        return str(inputs[name])

    def fill(argv: list[str]) -> list[str]:
        return [a.replace("{tmp}", str(tmp)).replace("{perf}", str(inputs["perf"])) for a in argv]

    heavy_slots = {"vmcore", "report-trace", "trace"}
    for slot, build in FILE_SLOTS.items():
        for kind in HOSTILE_FILES:
            argv = fill(build(path_of(kind)))
            name = f"{slot}:{kind}"
            feed = (inputs["fifo"], (inputs["garbage"]).read_bytes()) if kind == "fifo" else None
            cheap = kind not in {"huge-line", "/dev/zero", *BOMBS} and not (slot in heavy_slots and kind == "latin1")
            if kind in ("unreadable.log", "locked-dir-file"):
                # A file the user may not read is bad input (exit 3), not a usage error (docs/cli.md).
                yield Case(name, argv, as_nobody=True, want_rc=3, cheap=cheap)
            else:
                rss = BOMB_RSS_MB if kind in BOMBS else None
                yield Case(name, argv, fifo_feed=feed, cheap=cheap, max_rss_mb=rss)
    # --debug keeps the contract, on every command: no traceback for exit 2/3, one line where it was raised
    for slot, build in FILE_SLOTS.items():
        for kind in ("garbage", "dir", "missing"):
            yield Case(f"{slot}:{kind}:--debug", [*fill(build(path_of(kind))), "--debug"])
    # specific hostile inputs
    out = tmp / "out.json"
    specific: list[Case] = [
        Case("dmesg:nul-in-log", ["dmesg", str(inputs["nul-in-log"])]),
        Case("dmesg:leading-dash", ["dmesg", "--", str(inputs["-leading-dash.log"])]),
        Case("dmesg:leading-dash-bare", ["dmesg", "-leading-dash.log"]),
        Case("dmesg:newline-name", ["dmesg", str(inputs["new\nline.log"])]),
        Case("dmesg:space-name", ["dmesg", str(inputs["sp ace.log"])]),
        Case("dmesg:stdin-garbage", ["dmesg", "-"], stdin=inputs["garbage"].read_bytes()),
        Case("dmesg:stdin-empty", ["dmesg"], stdin=b""),
        # one log given twice (by a link too): every report was listed twice (forensics/commands/common.py)
        Case("dmesg:same-log-twice", ["dmesg", str(inputs["log"]), str(inputs["link-to-log"])], want_rc=2),
        Case(
            "report-dmesg:same-log-twice",
            ["report", "--dmesg", str(inputs["log"]), "--dmesg", str(inputs["log"])],
            want_rc=2,
            want_err="same file",
        ),
        Case("dmesg:stdin-twice", ["dmesg", "-", "-"], stdin=_bytes_of(CONSOLE), want_rc=2, want_err="read only once"),
        Case("trace:mixed-formats", ["trace", str(inputs["mixed-trace"])], cheap=False),
        Case("profile:mixed-formats", ["profile", str(inputs["mixed-trace"])]),
        Case("profile:folded-bad", ["profile", str(inputs["folded-bad"])]),
        # every count 0: each share was 0/0 (exit 4, forensics/pipelines/profile.py)
        Case("profile:folded-zero", ["profile", str(inputs["folded-zero"])], want_rc=3, want_err="counts 0"),
        Case("profile:perf-period0", ["profile", str(inputs["perf-period0"])], want_rc=3, want_err="counts 0"),
        # a filter that keeps no sample of a sound recording: usage, naming the option (was exit 3, as if the
        # input were bad: forensics/pipelines/profile._empty_selection, collectors/perf_script._checked)
        *(
            Case(f"profile:empty-selection:{label}", ["profile", str(inputs["perf"]), *args], want_rc=2, want_err=err)
            for label, args, err in (
                ("comm", ["--comm", "nosuch"], "--comm 'nosuch' matches no sample"),
                ("pid", ["--pid", "999999"], "--pid 999999 matches no sample"),
                ("window", ["--window", "1:2"], "--window 1:2 keeps no sample"),
                ("folded-alone", ["--comm", "nosuch", "--folded", "-"], "--comm 'nosuch' matches no sample"),
                ("diff-base", ["--diff", str(inputs["perf"]), "--tid", "1"], "--tid 1 matches no sample"),
            )
        ),
        Case(
            "profile-diff:folded-zero",
            ["profile", str(inputs["perf"]), "--diff", str(inputs["folded-zero"])],
            want_rc=3,
        ),
        Case("trace:truncated-gz", ["trace", str(inputs["trace-trunc.gz"])], cheap=False),
        Case("trace:ctf-no-metadata", ["trace", str(inputs["ctf-no-metadata"])]),
        Case("trace:ctf-bad-metadata", ["trace", str(inputs["ctf-bad-metadata"])]),
        Case(
            "trace:spans-ctf-no-metadata", ["trace", str(inputs["ftrace"]), "--spans", str(inputs["ctf-no-metadata"])]
        ),
        Case("trace:spans-garbage", ["trace", str(inputs["ftrace"]), "--spans", str(inputs["garbage"])]),
        Case("trace:span-bad-spec", ["trace", str(inputs["ftrace"]), "--span", "..", "--spans", str(inputs["empty"])]),
        Case("report-trace:ctf-no-metadata", ["report", "--trace", str(inputs["ctf-no-metadata"])]),
        Case("report-from:json-deep", ["report", "--from", str(inputs["json-deep"])]),
        Case("report-from:json-wrong", ["report", "--from", str(inputs["json-wrong"])]),
        Case("report-from:json-list", ["report", "--from", str(inputs["json-list"])]),
        Case("report-from:json-nan", ["report", "--from", str(inputs["json-nan"])]),
        # were exit 4: ValueError from int() past 4300 digits (forensics/pipelines/report.py, collectors/spans.py)
        Case("report-from:json-bigint", ["report", "--from", str(inputs["json-bigint"])], want_rc=3, want_err="4300"),
        Case(
            "trace:spans-json-bigint",
            ["trace", str(inputs["ftrace"]), "--spans", str(inputs["spans-bigint.jsonl"])],
            want_rc=3,
            want_err="4300",
        ),
        # a bomb given where a whole file is read: refused past 256 MiB (collectors/inputs.read_whole)
        Case(
            "trace:spans-bomb",
            ["trace", str(inputs["ftrace"]), "--spans", str(inputs["gz-bomb"])],
            want_rc=3,
            want_err="MiB",
            max_rss_mb=BOMB_RSS_MB * 2,
            cheap=False,
        ),
        Case("leaks:store-corrupt", ["leaks", "--store", str(inputs["store-corrupt.sqlite"])]),
        # was "not a slab-watch store (unable to open database file)": now says permission (collectors/slabstore.py)
        Case(
            "leaks:store-unreadable",
            ["leaks", "--store", str(inputs["store"])],
            as_nobody=True,
            want_rc=3,
            want_err="permission denied",
        ),
        Case("leaks:store-trunc", ["leaks", "--store", str(inputs["store-trunc.sqlite"])]),
        # values no writer makes: were exit 4 in numpy, or numpy warnings on stderr (collectors/slabstore.py)
        *(
            Case(
                f"{command}:{name}", [command, "--store", str(inputs[f"{name}.sqlite"])], want_rc=3, want_err="damaged"
            )
            for command in ("leaks", "slab-export")
            for name in ("store-text-wall", "store-huge-wall", "store-negative-count")
        ),
        Case("leaks:store-header-only", ["leaks", "--store", str(inputs["store-header-only.sqlite"])]),
        Case("slab-export:store-corrupt", ["slab-export", "--store", str(inputs["store-corrupt.sqlite"])]),
        Case("slab-export:store-trunc", ["slab-export", "--store", str(inputs["store-trunc.sqlite"])]),
        Case("report:store-corrupt", ["report", "--store", str(inputs["store-corrupt.sqlite"])]),
        Case(
            "slab-import:into-corrupt", ["slab-import", str(SNAPSHOTS), "--store", str(inputs["store-corrupt.sqlite"])]
        ),
        Case("slab-import:into-trunc", ["slab-import", str(SNAPSHOTS), "--store", str(inputs["store-trunc.sqlite"])]),
        Case("slab-import:snaps-cut", ["slab-import", str(inputs["snaps-cut"]), "--store", str(tmp / "cut.sqlite")]),
        Case(
            "slab-import:snaps-garbled", ["slab-import", str(inputs["snaps-garbled"]), "--store", str(tmp / "g.sqlite")]
        ),
        Case("slab-import:store-is-null", ["slab-import", str(SNAPSHOTS), "--store", "/dev/null"]),
        Case("slab-import:store-is-fifo", ["slab-import", str(SNAPSHOTS), "--store", str(inputs["fifo"])]),
        Case(
            "slab-import:store-is-link-to-null", ["slab-import", str(SNAPSHOTS), "--store", str(inputs["link-to-null"])]
        ),
        Case("slab-import:store-is-evidence", ["slab-import", str(SNAPSHOTS), "--store", str(inputs["log"])]),
        Case(
            "slab-import:store-ro-dir",
            ["slab-import", str(SNAPSHOTS), "--store", str(inputs["ro-dir"] / "s.sqlite")],
            as_nobody=True,
        ),
        Case(
            "slab-watch:store-is-null", ["slab-watch", "--store", "/dev/null", "--duration", "1s", "--interval", "1s"]
        ),
        Case(
            "slab-watch:root-garbage",
            [
                "slab-watch",
                "--root",
                str(inputs["dir"]),
                "--store",
                str(tmp / "w.sqlite"),
                "--duration",
                "2s",
                "--interval",
                "1s",
            ],
        ),
        Case(
            "slab-watch:root-is-file",
            [
                "slab-watch",
                "--root",
                str(inputs["log"]),
                "--store",
                str(tmp / "w2.sqlite"),
                "--duration",
                "2s",
                "--interval",
                "1s",
            ],
        ),
        Case(
            "slab-watch:textfile-dir-is-file",
            [
                "slab-watch",
                "--root",
                str(inputs["dir"]),
                "--store",
                str(tmp / "w3.sqlite"),
                "--duration",
                "1s",
                "--interval",
                "1s",
                "--textfile-dir",
                str(inputs["log"]),
            ],
        ),
        Case(
            "slab-watch:unit-newline", ["slab-watch", "--systemd-unit", "--store", "/var/lib/x\nExecStartPre=/bin/rm"]
        ),
        Case("leaks:prometheus-unreachable", ["leaks", "--prometheus", "http://127.0.0.1:1", "--timeout", "2"]),
        Case("leaks:prometheus-bad-url", ["leaks", "--prometheus", "http://[::1"]),
        Case("leaks:prometheus-no-scheme", ["leaks", "--prometheus", "localhost:9090", "--timeout", "2"]),
        Case("leaks:prometheus-file-url", ["leaks", "--prometheus", "file:///etc/passwd"]),
        Case(
            "leaks:prometheus-token-dir",
            ["leaks", "--prometheus", "http://127.0.0.1:1", "--bearer-token-file", str(inputs["dir"])],
        ),
        Case(
            "leaks:prometheus-unreachable-debug",
            ["leaks", "--prometheus", "http://127.0.0.1:1", "--timeout", "2", "--debug"],
        ),
        Case(
            "leaks:prometheus-bad-match",
            ["leaks", "--prometheus", "http://127.0.0.1:1", "--match", '{{{"', "--timeout", "1"],
        ),
        Case(
            "dmesg-signatures:garbage",
            ["dmesg", "--signatures", str(inputs["garbage"]), str(inputs["empty"]), "--workers", "1"],
            cheap=False,
        ),
        Case(
            "dmesg-signatures:dir-of-hostile",
            ["dmesg", "--signatures", str(tmp / "hostile-dir"), "--workers", "1"],
            cheap=False,
        ),
        Case(
            "dmesg-signatures:scheduler-unreachable",
            ["dmesg", "--signatures", str(inputs["log"]), "--scheduler", "tcp://127.0.0.1:1"],
            cheap=False,
        ),
        Case("dmesg-signatures:workers-0", ["dmesg", "--signatures", str(inputs["log"]), "--workers", "0"]),
        Case("dmesg-signatures:workers-neg", ["dmesg", "--signatures", str(inputs["log"]), "--workers", "-3"]),
        Case(
            "slab-watch:textfile-dir-missing-parent",
            [
                "slab-watch",
                "--root",
                str(inputs["dir"]),
                "--store",
                str(tmp / "w4.sqlite"),
                "--duration",
                "1s",
                "--interval",
                "1s",
                "--textfile-dir",
                "/nonexistent/a/b",
            ],
        ),
        Case("vmcore:two-dumps", ["vmcore", str(inputs["two-dumps"]), "--no-debuginfod"]),
        Case("vmcore:truncated", ["vmcore", str(inputs["vmcore-trunc"]), "--no-debuginfod"], cheap=False, timeout=600),
        Case("vmcore:header-only", ["vmcore", str(inputs["vmcore-header"]), "--no-debuginfod"]),
        # was exit 4 (drgn: "core file is missing NT_AUXV"): forensics/vmcore/program.py
        Case("vmcore:user-core", ["vmcore", str(inputs["user-core"]), "--no-debuginfod"], want_err="user process"),
        Case("vmcore:gzipped", ["vmcore", str(inputs["vmcore.gz"]), "--no-debuginfod"], want_err="gunzip"),
        Case("vmcore:vmlinux-garbage", ["vmcore", str(VMCORE), "--vmlinux", str(inputs["garbage"]), "--no-debuginfod"]),
        Case("vmcore:vmlinux-dir", ["vmcore", str(VMCORE), "--vmlinux", str(inputs["dir"]), "--no-debuginfod"]),
        Case(
            "vmcore:module-debug-garbage",
            ["vmcore", str(inputs["vmcore-header"]), "--module-debug", str(inputs["garbage"]), "--no-debuginfod"],
        ),
        Case(
            "vmcore:source-dir-file",
            ["vmcore", str(inputs["vmcore-header"]), "--source-dir", str(inputs["log"]), "--no-debuginfod"],
        ),
        Case(
            "vmcore:debuginfod-unreachable",
            ["vmcore", str(inputs["vmcore-header"]), "--debuginfod", "http://127.0.0.1:1"],
        ),
        Case("kdump-check:hostile-root", ["kdump", "check", "--root", str(inputs["kdump-root"])]),
        Case("kdump-setup:hostile-root", ["kdump", "setup", "--root", str(inputs["kdump-root"]), "--policy", "strict"]),
        Case("kdump-setup:bad-policy", ["kdump", "setup", "--policy", "yolo"]),
        Case("kdump-setup:root-garbage", ["kdump", "setup", "--root", str(inputs["garbage"])]),
        Case(
            "kdump-setup:json",
            ["kdump", "setup", "--root", str(inputs["kdump-root"]), "-f", "json", "-o", str(out)],
            output=out,
            json_output=True,
        ),
        Case("kdump-test:root-garbage", ["kdump", "test", "--root", str(inputs["garbage"])]),
        # time going backwards or jumping: the figures across it are flagged (†), the jump is named
        # a page written through: its plots go inline (was a directory /dev/stdout-plots: forensics/commands/report.py)
        Case(
            "output:report-html-store:dev-stdout",
            ["report", "--store", str(inputs["store"]), "-f", "html", "-o", "/dev/stdout"],
            want_rc=0,
        ),
        # wall times no calendar has (year 10000): were exit 4 in datetime and in matplotlib (forensics/units.py)
        Case(
            "slab-import:year-10000",
            ["slab-import", str(inputs["snaps-year-10000"]), "--store", str(tmp / "imp.sqlite")],
            want_rc=0,
            want_out="not a date",
        ),
        Case("leaks:store-year-10000", ["leaks", "--store", str(inputs["store-year-10000"])], want_out="not a date"),
        Case(
            "report:store-year-10000",
            ["report", "--store", str(inputs["store-year-10000"]), "-f", "html"],  # the plots inline
            want_rc=0,
            want_out="data:image/png",
        ),
        Case("trace:clock-jump", ["trace", str(inputs["clock-jump"])], want_out="ms †"),
        Case("trace:clock-back", ["trace", str(inputs["clock-back"])], want_out="ms †"),
        Case("report-trace:clock-jump", ["report", "--trace", str(inputs["clock-jump"])], want_out="jumps forward"),
        # numbers of 5,000 digits: was exit 4, int() refuses 4,300 (detectors/dmesg/why.py, extract.py, frames.py)
        *(
            Case(
                f"dmesg:{name}",
                ["dmesg", "-f", "json", "-o", str(out), str(inputs[name])],
                output=out,
                json_output=True,
            )
            for name in ("log-bigint", "log-bighex")
        ),
        Case("profile:perf-bigint", ["profile", str(inputs["perf-bigint"])], want_out="skipped"),
        Case("dmesg:timestamps-back", ["dmesg", str(inputs["dmesg-back"])], want_out="kernel BUG"),
        Case(
            "slab-import:samples-gap",
            ["slab-import", str(inputs["snaps-gap"]), "--store", str(tmp / "imp.sqlite")],
            want_out="gap(s)",
        ),
        # line ends, bytes and names
        Case("dmesg:crlf", ["dmesg", str(inputs["crlf-log"])], want_out="kernel BUG"),
        Case(
            "dmesg:long-run-before-a-header", ["dmesg", str(inputs["log-long-run"])], want_out="page allocation failure"
        ),
        Case("dmesg:bom-nul-crlf", ["dmesg", str(inputs["log-bom-nul-latin1"])]),
        Case("trace:stdin-empty", ["trace", "-"], stdin=b"", want_rc=3),
        # was "enable the events and record again", and without a header its first event analysed, the rest dropped
        # in silence with "No problem found" (forensics/pipelines/trace.py)
        *(
            Case(f"trace:{name}", ["trace", str(inputs[name])], want_rc=3, want_err="carriage return")
            for name in ("trace-cr-only", "trace-cr-only-events")
        ),
        Case("trace:stdin-binary", ["trace", "-"], stdin=bytes(range(256)) * 40, want_rc=3),
        Case("profile:stdin-binary", ["profile", "-"], stdin=bytes(range(256)) * 40, want_rc=3),
        # not judged on its figures: a tracepoint sample (payload after its event) is kept with the first event, as
        # stackcollapse-perf.pl keeps it (docs/profile.md, "Several events")
        Case("profile:perf-nosyms-mixed-events", ["profile", str(inputs["perf-nosyms"])]),
        # LTTng CTF directories damaged as copies get damaged
        *(Case(f"trace:{name}", ["trace", str(inputs[name])]) for name in _CTF_DAMAGE),
        # where the output goes: closed (exit 3), a reader gone (quiet exit 0), interrupted (130, nothing left)
        *(
            Case(f"stdout:{_short(argv)}:closed", argv, stdout="closed", want_rc=3, want_err="standard output")
            for argv in (
                ["dmesg", str(inputs["log"])],
                ["leaks", "--store", str(inputs["store"])],
                ["--help"],  # was exit 4: click's help met the closed stdout (forensics/cli.py)
                ["dmesg", "-h"],
                ["--version"],
            )
        ),
        *(
            Case(f"stdout:{_short(argv)}:broken-pipe", argv, stdout="broken", want_rc=0, cheap=argv[0] != "trace")
            for argv in (
                ["dmesg", str(inputs["log"])],
                ["dmesg", str(inputs["log"]), "-f", "json"],
                ["report", "--dmesg", str(inputs["log"]), "-f", "html"],
                ["profile", str(inputs["perf"])],
                ["trace", str(inputs["ftrace"])],
                ["--help"],  # was exit 1, as if a finding reached --fail-on (forensics/cli.py)
                ["trace", "-h"],
                ["--version"],
            )
        ),
        *(
            Case(
                f"signal:{sig.name}:{argv[0]}",
                [*argv, "-f", "json", "-o", str(out)],  # no `output`: an interrupted run may leave no file at all
                stdin=feed,
                signal_after=(0.2, sig),
                want_rc=130 if sig == signal.SIGINT else None,
                want_err="interrupted" if sig == signal.SIGINT else None,
            )
            for sig in (signal.SIGINT, signal.SIGTERM)
            for argv, feed in (
                (["dmesg", "-"], _bytes_of(CONSOLE) * 4),  # was exit 130 in silence (forensics/cli.py)
                (["report", "--dmesg", "-"], _bytes_of(CONSOLE) * 4),
                (["profile", "-"], _bytes_of(PERF)),
                (["trace", "-"], _bytes_of(FTRACE)),
            )
        ),
        # a name longer than the file system allows (ENAMETOOLONG): was exit 4 where Path.is_file() met it first
        *(
            Case(f"long-name:{slot}", fill(FILE_SLOTS[slot](str(tmp / ("n" * 300)))), want_rc=3, want_err="too long")
            for slot in FILE_SLOTS
        ),
        # standard input an endless device: read for ever (collectors/inputs.open_input now checks it, as for a path)
        *(
            Case(f"stdin-zero:{_short(argv)}", argv, stdin_from="/dev/zero", want_rc=3, want_err="never ends")
            for argv in (["dmesg"], ["trace", "-"], ["profile", "-"], ["report", "--dmesg", "-"])
        ),
        # standard input named twice: the second reader found it drained and said "an empty file" (now exit 2,
        # forensics/commands/common.stdin_read_once)
        *(
            Case(f"stdin:{_short(argv)}", argv, stdin=_bytes_of(CONSOLE), want_rc=2, want_err="read only once")
            for argv in (
                ["report", "--dmesg", "-", "--trace", "-"],
                ["report", "--dmesg", "-", "--profile", "-", "--dmesg", str(inputs["log"])],
                ["trace", "-", "--spans", "-"],
            )
        ),
        # standard error's reader gone (`2>&1 | logger`, the logger dead): the exit code the run earns, results
        # delivered (was exit 1 for an error and exit 0 at slab-watch's first warning, recording nothing:
        # forensics/cli.py)
        Case("stderr:dmesg missing:broken-pipe", ["dmesg", str(tmp / "missing.log")], stderr="broken", want_rc=3),
        Case("stderr:--bogus:broken-pipe", ["--bogus"], stderr="broken", want_rc=2),
        Case("stderr:dmesg log:broken-pipe", ["dmesg", str(inputs["log"])], stderr="broken", want_out="kernel BUG"),
        Case(
            "stderr:slab-watch:broken-pipe",
            ["slab-watch", "--store", str(tmp / "n.sqlite"), "--interval", "1", "--hours", "1"],
            stderr="broken",
            signal_after=(6.0, signal.SIGINT),
            want_rc=0,
            want_out="slab-watch summary",
            cheap=False,
        ),
        # slab-watch ends on either signal after committing its sample: exit 0 (docs/slab-watch.md, "Unattended");
        # it reads no stdin, so the signal comes 6 s after the start, past start-up at any load seen so far
        *(
            Case(
                f"signal:{sig.name}:slab-watch",
                ["slab-watch", "--store", str(tmp / "n.sqlite"), "--interval", "1", "--hours", "1"],
                signal_after=(6.0, sig),
                want_rc=0,
                want_err=f"stopped by {sig.name}",
                cheap=False,
            )
            for sig in (signal.SIGINT, signal.SIGTERM)
        ),
    ]
    if vmlinux:
        specific += [
            Case(
                "vmcore:wrong-vmlinux",
                ["vmcore", str(VMCORE), "--vmlinux", str(vmlinux["wrong-vmlinux"]), "--no-debuginfod"],
                cheap=False,
                timeout=300,
            ),
            Case(
                "vmcore:truncated-with-vmlinux",
                ["vmcore", str(inputs["vmcore-trunc"]), "--vmlinux", str(vmlinux["vmlinux"]), "--no-debuginfod"],
                cheap=False,
                timeout=300,
            ),
            Case(
                "report:truncated-vmcore",
                ["report", "--vmcore", str(inputs["vmcore-trunc"]), "--vmlinux", str(vmlinux["vmlinux"])],
                cheap=False,
                timeout=300,
            ),
        ]
    yield from specific
    # options out of range
    log, trace, perf, store = (str(inputs[k]) for k in ("log", "ftrace", "perf", "store"))
    bad_options = [
        ["trace", trace, "--bucket-ms", "-1"],
        ["trace", trace, "--bucket-ms", "nan"],
        ["trace", trace, "--hog-ms", "inf"],
        ["trace", trace, "--latency-ms", "-0"],
        ["trace", trace, "--window", "5:1"],
        ["trace", trace, "--window", "nan:1"],
        ["trace", trace, "--window", "1e300:1e301"],
        ["trace", trace, "--window", "abc"],
        ["trace", trace, "--around", "-1"],
        ["trace", trace, "--around", "1:-5"],
        ["trace", trace, "--around", "1:nan"],
        ["trace", trace, "--around", "99999999:1"],
        ["trace", trace, "--top", "0"],
        ["trace", trace, "--top", "-1"],
        ["trace", trace, "--slow-ms", "nan"],
        ["trace", trace, "--slowest", "0"],
        ["trace", trace, "--kernel-clock", "bogus"],
        ["trace", trace, "--task", ""],
        ["profile", perf, "--window", "3:1"],
        ["profile", perf, "--window", "nan:inf"],
        ["profile", perf, "--top", "0"],
        ["profile", perf, "--digest-bytes", "0"],
        ["profile", perf, "--digest-bytes", "-5"],
        ["profile", perf, "--pid", "-1"],
        ["profile", perf, "--pid", "abc"],
        ["profile", perf, "--event", "no-such-event"],
        ["profile", perf, "--kernel-only", "--user-only"],
        ["leaks", "--store", store, "--last", "-1h"],
        ["leaks", "--store", store, "--last", "0s"],
        ["leaks", "--store", store, "--last", "nan"],
        ["leaks", "--store", store, "--last", "99999999999d"],
        ["leaks", "--store", store, "--min-rate", "nan"],
        ["leaks", "--store", store, "--min-rate", "-1"],
        ["leaks", "--store", store, "--run", "-1"],
        ["leaks", "--store", store, "--run", "999999"],
        ["leaks", "--prometheus", "http://127.0.0.1:1", "--since", "-1h"],
        ["leaks", "--prometheus", "http://127.0.0.1:1", "--step", "0s"],
        ["leaks", "--prometheus", "http://127.0.0.1:1", "--timeout", "nan"],
        ["leaks", "--prometheus", "http://127.0.0.1:1", "--timeout", "-1"],
        ["slab-watch", "--interval", "0", "--store", str(tmp / "x.sqlite")],
        ["slab-watch", "--interval", "-5", "--store", str(tmp / "x.sqlite")],
        ["slab-watch", "--interval", "nan", "--store", str(tmp / "x.sqlite")],
        ["slab-watch", "--hours", "0", "--store", str(tmp / "x.sqlite")],
        ["slab-watch", "--hours", "nan", "--store", str(tmp / "x.sqlite")],
        ["slab-watch", "--hours", "-1", "--store", str(tmp / "x.sqlite")],
        ["slab-watch", "--duration", "0s", "--store", str(tmp / "x.sqlite")],
        ["slab-watch", "--duration", "-5m", "--store", str(tmp / "x.sqlite")],
        ["slab-watch", "--duration", "1e400s", "--store", str(tmp / "x.sqlite")],
        ["slab-export", "--store", store, "--run", "-1"],
        ["slab-export", "--store", store, "--run", "99999"],
        ["slab-export", "--store", store, "-f", "xml"],
        ["slab-export", "--store", store, "--table", "nope"],
        ["report", "--from", log, "--digest-bytes", "0"],
        ["report", "--dmesg", log, "--digest", str(tmp / "d.json"), "--digest-bytes", "10"],
        ["dmesg", log, "--fail-on", "bogus"],
        ["dmesg", log, "-f", "xml"],
        ["report"],
        ["kdump"],
        ["kdump", "nope"],
    ]
    for argv in bad_options:
        yield Case(f"options:{_short(argv)}", argv)
        yield Case(f"options:{_short(argv)} --debug", [*argv, "--debug"])
    # output paths
    outputs: list[tuple[str, list[str], Path | None]] = [
        ("dev-null", ["-o", "/dev/null"], None),
        ("dev-full", ["-o", "/dev/full"], None),
        ("link-to-null", ["-o", str(inputs["link-to-null"])], None),
        ("link-to-evidence", ["-o", str(inputs["link-to-log"])], None),
        ("dangling", ["-o", str(inputs["dangling"])], None),
        ("dir", ["-o", str(inputs["dir"])], None),
        ("fifo", ["-o", str(inputs["fifo"])], None),
        ("evidence", ["-o", str(inputs["log"])], None),
        ("foreign", ["-o", str(inputs["foreign-out.json"])], None),
        ("existing", ["-o", str(inputs["existing-out"])], inputs["existing-out"]),
        ("missing-parent", ["-o", str(tmp / "no/such/dir/out.json")], None),
        ("proc-file", ["-o", "/proc/version"], None),
        ("sys-file", ["-o", "/sys/kernel/profiling"], None),
        ("newline-name", ["-o", str(tmp / "out\nput.json")], tmp / "out\nput.json"),
        ("ro-dir", ["-o", str(inputs["ro-dir"] / "out.json")], None),
        # were a file named `newdir` and a file named `-` (forensics/commands/common.output_path)
        ("dir-slash-missing", ["-o", str(tmp / "newdir") + "/"], None),
        ("dash", ["-o", "-"], None),
    ]
    producers: dict[str, list[str]] = {
        "dmesg": ["dmesg", log, "-f", "json"],
        "report": ["report", "--dmesg", log, "-f", "json"],
        "slab-export": ["slab-export", "--store", store],
        "leaks": ["leaks", "--store", store, "-f", "json"],
        "kdump-check": ["kdump", "check", "--root", str(inputs["kdump-root"]), "-f", "json"],
        "profile": ["profile", perf, "-f", "json"],
    }
    for pname, base_argv in producers.items():
        for oname, extra, writable in outputs:
            if pname not in ("dmesg", "report") and oname in (
                "proc-file",
                "sys-file",
                "newline-name",
                "missing-parent",
                "evidence",  # the log is an input of dmesg and report only; elsewhere it is a file to replace
            ):
                continue
            json_ok = "-f" in base_argv and pname != "slab-export"
            yield Case(
                f"output:{pname}:{oname}",
                [*base_argv, *extra],
                output=writable,
                json_output=json_ok,
                as_nobody=oname == "ro-dir",
                cheap=oname != "fifo",
            )
    # side outputs of report/trace/profile/leaks onto hostile targets
    for flag_argv in (
        ["report", "--dmesg", log, "--html", "/dev/full"],
        ["report", "--dmesg", log, "--json", str(inputs["link-to-log"])],
        ["report", "--dmesg", log, "--digest", str(inputs["dir"])],
        ["report", "--dmesg", log, "--json", log],
        ["trace", trace, "--save-text", trace],
        ["trace", trace, "--png", str(inputs["link-to-log"])],
        ["profile", perf, "--svg", str(inputs["dir"])],
        ["profile", perf, "--folded", perf],
        ["profile", perf, "--folded", str(inputs["dangling"])],
        ["leaks", "--store", store, "--plots", log],
        ["leaks", "--store", store, "-o", store],
        ["slab-export", "--store", store, "-o", store],
        ["slab-import", str(SNAPSHOTS), "--store", str(tmp / "n.sqlite"), "-o", str(tmp / "n.sqlite")],
        # two outputs of one run naming one file: the second replaced the first, exit 0 (forensics/commands/common.py)
        ["report", "--dmesg", log, "--html", str(tmp / "both"), "--json", str(tmp / "both")],
        ["report", "--dmesg", log, "-o", str(tmp / "both"), "--digest", str(tmp / "both")],
        ["trace", trace, "--png", str(tmp / "both"), "--save-text", str(tmp / "both")],
        ["profile", perf, "--svg", str(tmp / "both"), "--folded", str(tmp / "both")],
    ):
        yield Case(
            "side-output:" + " ".join(Path(a).name if a.startswith("/") else a for a in flag_argv),
            flag_argv,
            cheap=flag_argv[0] not in ("trace",),
        )


# ---------------------------------------------------------------- running and judging


#: The SHA-256 of each regular file seen, by path, device, inode, size, modification and change time.  Every write,
#: truncation or replacement of a file sets its change time (ctime) to the clock, and no call sets it otherwise; so
#: a file whose key is unchanged holds the bytes it held (git's index relies on the same).  The inputs are hashed
#: once instead of before and after every case: 32 MB, 0.033 s of CPU a time, 5.6 s of the 95 tests' 9.3 s of their
#: own (issue #28).  A file changed less than a second before it is hashed is hashed again the next time: a change
#: within the clock's granularity keeps the times (git's "racy" rule).
_DIGESTS: dict[tuple[str, int, int, int, int, int], str] = {}


def _digest(path: Path, st: os.stat_result) -> str:
    """The SHA-256 of the regular file ``path`` whose ``lstat`` is ``st``."""
    key = (str(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    known = _DIGESTS.get(key)
    if known is None:
        known = hashlib.sha256(path.read_bytes()).hexdigest()
        if time.time_ns() - st.st_ctime_ns > 1_000_000_000:
            _DIGESTS[key] = known
    return known


def _state(paths: list[Path]) -> dict[str, tuple[object, ...]]:
    """What each path is: node type, link target, size, content hash, mode, owner."""
    seen: dict[str, tuple[object, ...]] = {}
    for top in paths:
        walk = [top]
        if top.is_dir() and not top.is_symlink():
            walk += [Path(d) / f for d, dirs, files in os.walk(top) for f in dirs + files]
        for path in walk:
            try:
                st = path.lstat()
            except OSError:
                continue
            kind = stat.S_IFMT(st.st_mode)
            if stat.S_ISLNK(st.st_mode):
                seen[str(path)] = (kind, os.readlink(path))
            elif stat.S_ISREG(st.st_mode):
                seen[str(path)] = (kind, st.st_size, _digest(path, st), st.st_mode, st.st_uid, int(st.st_mtime))
            elif stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
                seen[str(path)] = (kind, st.st_rdev, st.st_mode)
            else:
                seen[str(path)] = (kind, st.st_mode)
    return seen


DEVICES = [Path("/dev/null"), Path("/dev/full"), Path("/dev/zero"), Path("/dev/sda"), Path("/proc/version")]
# what a page written through once left beside it (report -f html -o /dev/stdout: its plots directory)
DEVICES += [Path("/dev/stdout-plots")]


def _feed_fifo(fifo: Path, data: bytes, stop: threading.Event) -> None:
    try:
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        # no reader yet: wait for one, but give up when the run is over
        while not stop.wait(0.05):
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError:
                continue
        else:
            return
    try:
        os.set_blocking(fd, True)
        os.write(fd, data)
    except OSError:
        pass
    finally:
        os.close(fd)


def _drain_fifo(fifo: Path, stop: threading.Event) -> None:
    """A reader for a FIFO used as an output, so a writer that opens it does not block."""
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        while not stop.wait(0.02):
            try:
                os.read(fd, 1 << 16)
            except BlockingIOError:
                continue
    finally:
        os.close(fd)


def _helper_for(case: Case, stop: threading.Event) -> threading.Thread | None:
    """A thread feeding the case's FIFO input, or draining its FIFO output, or None."""
    if case.fifo_feed is not None:
        return threading.Thread(target=_feed_fifo, args=(*case.fifo_feed, stop), daemon=True)
    if any(a.endswith("/fifo") for a in case.argv) and "-o" in case.argv:
        fifo = Path(case.argv[case.argv.index("-o") + 1])
        return threading.Thread(target=_drain_fifo, args=(fifo, stop), daemon=True)
    return None


def judge_stderr(stderr: str, returncode: int, debug: bool, interrupted: bool = False) -> list[str]:
    """What is wrong with a run's exit code and messages (docs/cli.md, "Exit codes").

    ``interrupted``: the run was sent SIGINT, so 130 is its code, said in one error line as 2 and 3 are.
    """
    problems: list[str] = []
    said = (2, 3, 130) if interrupted else (2, 3)
    if returncode not in (0, 1, *said):
        problems.append(f"exit {returncode}")
    lines = [line for line in stderr.splitlines() if line.strip()]
    if "Traceback" in stderr and (not debug or returncode in said):  # --debug: a traceback for a bug (exit 4) only
        problems.append("traceback" + ("" if debug else " without --debug"))
    if returncode not in said:
        return problems
    errors = [i for i, line in enumerate(lines) if line.startswith("kforensic: error: ")]
    if len(errors) != 1:
        return [*problems, f"{len(errors)} error lines"]
    after = lines[errors[0] + 1 :]
    if debug and after and after[-1].startswith("kforensic: debug: "):  # where it was raised: one line at most
        after = after[:-1]
    if any(not line.startswith("kforensic: hint: ") for line in after):
        problems.append("more after the error line")
    # warnings and notices ("kforensic: analysing without compiled code ...") may come first
    noise = [line for line in lines[: errors[0]] if not line.startswith("kforensic: ")]
    if noise:
        problems.append(f"noise before the error: {noise[0][:80]!r}")
    if len(lines[errors[0]]) < 30:
        problems.append("error line too short to say what and where")
    return problems


SCRATCH_STORES = ("imp.sqlite", "cut.sqlite", "g.sqlite", "n.sqlite")  # stores the cases are asked to make


def judge_files(
    case: Case, before: dict[str, tuple[object, ...]], after: dict[str, tuple[object, ...]], returncode: int
) -> list[str]:
    """What the run changed that it must not have: evidence, nodes, links, stray or half-written files."""
    problems: list[str] = []
    allowed = {str(case.output)} if case.output is not None else set()
    for path, what in before.items():
        if path not in allowed and after.get(path) != what:
            problems.append(f"changed: {path!r} {what!r} -> {after.get(path)!r}")
    for path in after.keys() - before.keys():
        name = Path(path)
        made = name.name in SCRATCH_STORES or (name.suffix == ".sqlite" and returncode == 0)
        if path not in allowed and not made and name.parent.name != "__pycache__":
            problems.append(f"new file: {path!r}")
    if case.output is not None and case.json_output and case.output.exists():
        try:
            json.loads(case.output.read_bytes())
        except ValueError:
            problems.append("output is not whole JSON")
    return problems


def run_case(case: Case, watch: list[Path]) -> Outcome:
    """Run one case and judge it."""
    before = _state(watch + DEVICES)
    argv = [KFORENSIC, *case.argv]
    if case.as_nobody:
        if shutil.which("setpriv") is None or os.geteuid() != 0:
            return Outcome(case.name, True, "skipped: needs root and setpriv")
        argv = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *argv]
    stop = threading.Event()
    helper = _helper_for(case, stop)
    if helper is not None:
        helper.start()
    env = dict(os.environ, NO_COLOR="1", COLUMNS="120", DEBUGINFOD_URLS="")
    try:
        done, ran_until_signal = _run(case, argv, env, watch[0])
    except subprocess.TimeoutExpired:
        return Outcome(case.name, False, f"no answer in {case.timeout:.0f} s (hangs)")
    finally:
        stop.set()
        if helper is not None:
            helper.join(2)
    raw_err, peak = split_peak_rss(done.stderr) if case.max_rss_mb is not None else (done.stderr, None)
    stderr = raw_err.decode("utf-8", "replace")
    returncode = done.returncode
    sent = case.signal_after[1] if case.signal_after is not None else None
    problems: list[str] = []
    if case.max_rss_mb is not None and (peak is None or peak > case.max_rss_mb):
        problems.append(f"peak RSS {peak} MB, more than {case.max_rss_mb} MB")
    if not ran_until_signal:
        problems.append("the run ended before the signal: nothing was interrupted")
    if sent not in (None, signal.SIGINT) and returncode == -sent:
        # Killed by a signal the contract leaves to its default action (SIGTERM, like SIGKILL, docs/cli.md
        # "Output files"): judged by what it left, as a shell shows 128+N.
        returncode = 0
    if case.stderr == "broken":  # nothing could be said: the exit code must still be the one the run earns
        problems += [f"exit {returncode}"] if returncode not in (0, 1, 2, 3) else []
    else:
        problems += judge_stderr(stderr, returncode, "--debug" in case.argv, interrupted=sent == signal.SIGINT)
    if case.want_out is not None and case.want_out not in (done.stdout or b"").decode("utf-8", "replace"):
        problems.append(f"stdout does not say {case.want_out!r}")
    if case.want_err is not None and case.want_err not in stderr:
        problems.append(f"the error does not say {case.want_err!r}")
    problems += judge_files(case, before, _state(watch + DEVICES), returncode)
    if case.want_rc is not None and done.returncode != case.want_rc:
        problems.append(f"exit {done.returncode}, the contract says {case.want_rc}")
    extra = {"peak RSS": f"{peak} MB"} if peak is not None else {}
    return Outcome(case.name, not problems, "; ".join(problems), done.returncode, stderr, extra)


def _run(
    case: Case, argv: list[str], env: dict[str, str], cwd: Path
) -> tuple[subprocess.CompletedProcess[bytes], bool]:
    """Run the case's command, its stdout as the case says, interrupted when it says.

    Also returns whether the run was still going when its signal was due (True when none is).
    """
    if case.stdout == "closed":  # started by a shell as with `>&-`
        argv = ["/bin/sh", "-c", 'exec "$@" >&-', "sh", *argv]
    if case.max_rss_mb is not None:  # the peak RSS on the last line of stderr (_PEAK_RSS)
        argv = [sys.executable, "-c", _PEAK_RSS, *argv]
    if case.signal_after is not None:
        # Ctrl-C at a terminal: a run started in the background of a script (make test under `nohup … &`, a CI
        # runner) inherits SIGINT ignored, rightly kept by Python and kforensic, so the signal cases would test
        # nothing there (CI: "exit 0, the contract says 130"). A shell cannot undo an inherited ignore (POSIX).
        argv = [sys.executable, "-c", _SIGINT_AS_AT_A_TERMINAL, *argv]
    stdout = _reader_gone() if case.stdout == "broken" else subprocess.PIPE
    stderr = _reader_gone() if case.stderr == "broken" else subprocess.PIPE
    stdin = os.open(case.stdin_from, os.O_RDONLY) if case.stdin_from else subprocess.PIPE
    try:
        proc = subprocess.Popen(argv, stdin=stdin, stdout=stdout, stderr=stderr, env=env, cwd=cwd)
    finally:
        for fd in (stdin, stdout, stderr):
            if fd >= 0:  # the run's end of a broken pipe, or its input file
                os.close(fd)
    ran_until_signal = True
    feed = case.stdin or b""
    if case.signal_after is not None:
        seconds, sig = case.signal_after
        assert proc.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.write(feed)  # returns once the run has read all but the pipe's last 64 KB
            proc.stdin.flush()
        feed = b""
        time.sleep(seconds)
        ran_until_signal = proc.poll() is None
        if ran_until_signal:
            proc.send_signal(sig)
    try:
        out, err = proc.communicate(feed, timeout=case.timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    return subprocess.CompletedProcess(argv, proc.returncode, out, err or b""), ran_until_signal


#: Runs its arguments and ends as they did (by the same signal, if one ended them), with their peak RSS (MB) as a
#: last stderr line `peak-rss: N`.  The run is a child (its rusage is only had by waiting for it), which dies with
#: the wrapper (PR_SET_PDEATHSIG): a case past its timeout is killed through the wrapper, and must not live on;
#: SIGINT and SIGTERM sent to the wrapper are passed on to it.
_PEAK_RSS = (
    "import ctypes, os, signal, sys\n"
    "parent = os.getpid()\n"
    "pid = os.fork()\n"
    "if pid == 0:\n"
    "    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG\n"
    "    if os.getppid() != parent:\n"
    "        os._exit(137)\n"
    "    os.execvp(sys.argv[1], sys.argv[1:])\n"
    "for sig in (signal.SIGINT, signal.SIGTERM):  # passed on: the run says how it ended\n"
    "    signal.signal(sig, lambda sig, _: os.kill(pid, sig))\n"
    "_, status, usage = os.wait4(pid, 0)\n"
    "print(f'peak-rss: {usage.ru_maxrss >> 10}', file=sys.stderr, flush=True)\n"
    "if os.WIFSIGNALED(status):\n"
    "    signal.signal(os.WTERMSIG(status), signal.SIG_DFL)\n"
    "    os.kill(os.getpid(), os.WTERMSIG(status))\n"
    "sys.exit(os.waitstatus_to_exitcode(status))\n"
)


def split_peak_rss(stderr: bytes) -> tuple[bytes, int | None]:
    """(the run's stderr, its peak RSS in MB): the `peak-rss: N` line _PEAK_RSS wrote last taken out."""
    body = stderr.rstrip(b"\n")
    head, _, last = body.rpartition(b"\n")
    if not last.startswith(b"peak-rss: "):
        return stderr, None
    return (head + b"\n" if head else b""), int(last.split()[1])


#: Resets SIGINT to its default action and execs its arguments (the disposition survives exec).
_SIGINT_AS_AT_A_TERMINAL = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])"
)


def _reader_gone() -> int:
    """The write end of a pipe whose reader has gone: the run's first write to it meets EPIPE."""
    reader, writer = os.pipe()
    os.close(reader)
    return writer


def _reset_scratch(tmp: Path) -> None:
    for child in tmp.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()


def main() -> int:
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cheap", action="store_true", help="only the cases pytest runs")
    parser.add_argument("-k", default="", help="only cases whose name contains this")
    parser.add_argument("-v", action="store_true", help="print stderr of failing cases")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kf-hostile-") as where:
        base = Path(where)
        base.chmod(0o755)
        inputs = make_inputs(base / "in")
        vml = {} if args.cheap else vmlinux_files(base)
        scratch = base / "scratch"
        scratch.mkdir()
        scratch.chmod(0o777)
        (scratch / "hostile-dir").mkdir()
        total = clean = 0
        for case in cases(inputs, scratch, vml):
            if (args.cheap and not case.cheap) or args.k not in case.name:
                continue
            _reset_scratch(scratch)
            (scratch / "hostile-dir").mkdir()
            shutil.copy(inputs["garbage"], scratch / "hostile-dir" / "g.log")
            outcome = run_case(case, [base / "in", scratch])
            total += 1
            clean += outcome.clean
            mark = "clean" if outcome.clean else "FAIL "
            measured = "".join(f" ({name} {value})" for name, value in outcome.extra.items())
            print(f"{mark} rc={outcome.returncode} {case.name!r}{measured} {outcome.why}", flush=True)
            if args.v and not outcome.clean:
                print("    " + outcome.stderr[-1500:].replace("\n", "\n    "))
        print(f"{clean}/{total} clean")
    return 0 if clean == total else 1


if __name__ == "__main__":
    raise SystemExit(main())
