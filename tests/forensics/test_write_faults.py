"""Issue #32 item 6: the process killed (SIGKILL) at random points while it writes an output file.

Each trial starts a child that writes over a complete older file and kills it
after a random delay; the target must then be the old file or the complete new
one, never a mix, and no temporary file may be left beside it.

``KF_FAULT_TRIALS`` sets the number of trials per case (default 4 in
``make test``); the longer run documented in docs/cli.md ("Faults during
writes") is ``KF_FAULT_TRIALS=100 .venv/bin/pytest tests/forensics/test_write_faults.py``.
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.forensics.commands.test_slabwatch_cli import kforensic

TRIALS = int(os.environ.get("KF_FAULT_TRIALS", "4"))
SNAPSHOTS = Path("vmcore_fixtures/cases/08-slab-leak/snapshots")
REPO = Path.cwd()  # tests run from the repository root (the fixtures are relative paths)

#: The writer: a big report written through forensics.output, once the imports are done ("ready").
CHILD = """
import sys
from pathlib import Path
from forensics.output import write_atomic
target, size = Path(sys.argv[1]), int(sys.argv[2])
line = b"kmalloc-64 6400 6400 64 64 1 : tunables 0 0 0 : slabdata 100 100 0\\n"
data = (line * (size // len(line) + 1))[:size]
print("ready", flush=True)
write_atomic(target, data)
print("done", flush=True)
"""


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


#: What differs between two whole runs of one command: the time taken to read each input (report tables).
_VARYING = re.compile(rb"\| \d+\.\d{3} \|")


def _steady(data: bytes) -> bytes:
    return _VARYING.sub(b"| T |", data)


def _check(target: Path, old: bytes, new_digest: str | None, new_size: int | None) -> str:
    """The target is the old file or the whole new one (its steady part), alone in its directory; returns which."""
    # (a report's plots directory is an output of its own; nothing temporary may be in it either)
    leftovers = sorted(str(p) for p in target.parent.rglob("*") if p.name.startswith(".") or p.suffix == ".tmp")
    assert leftovers == [], f"left beside {target.name}: {leftovers}"
    now = target.read_bytes()
    if now == old:
        return "old"
    assert new_size is None or abs(len(now) - new_size) < 64, f"a mix: {len(now)} bytes, old {len(old)}, new {new_size}"
    assert new_digest is None or _digest(_steady(now)) == new_digest, "a mix: neither the old nor the new content"
    return "new"


def _kill_after(process: subprocess.Popen[bytes], delay: float) -> None:
    time.sleep(delay)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=60)


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def _writer(target: Path, size: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(target), str(size)], stdout=subprocess.PIPE, cwd=REPO, env=_env()
    )
    assert process.stdout is not None
    assert process.stdout.readline() == b"ready\n"
    return process


def test_killed_while_writing_a_big_report_leaves_old_or_new(tmp_path: Path) -> None:
    size = 48 << 20
    out = tmp_path / "out"
    out.mkdir()
    target = out / "report.md"
    # Calibrate: how long one whole write takes here (the kills fall inside it).
    target.write_bytes(b"old report\n")
    process = _writer(target, size)
    started = time.monotonic()
    assert process.wait(timeout=120) == 0
    took = time.monotonic() - started
    new = target.read_bytes()
    assert len(new) == size
    new_digest = _digest(_steady(new))
    rng = random.Random(32)
    seen: dict[str, int] = {}
    for trial in range(TRIALS):
        old = f"old report {trial}\n".encode() * (trial + 1)
        target.write_bytes(old)
        process = _writer(target, size)
        _kill_after(process, rng.uniform(0.0, took))
        which = _check(target, old, new_digest, size)
        seen[which] = seen.get(which, 0) + 1
    print(f"killed writer, {TRIALS} trials: {seen}")


def _store(tmp: Path) -> Path:
    store = tmp / "slab.sqlite"
    done = kforensic("slab-import", str(SNAPSHOTS), "--store", str(store), "--no-analysis")
    assert done.returncode == 0, done.stderr
    return store


def _command_trials(tmp: Path, argv: list[str], target: Path) -> dict[str, int]:
    """Run ``argv`` once whole (the new content, its duration), then TRIALS times killed at random points."""
    target.write_bytes(b"previous output\n")
    started = time.monotonic()
    whole = subprocess.run(
        [sys.executable, "-m", "forensics", *argv], cwd=REPO, env=_env(), capture_output=True, timeout=600, check=False
    )
    took = time.monotonic() - started
    assert whole.returncode in (0, 1), whole.stderr.decode()
    new = target.read_bytes()
    rng = random.Random(hash(tuple(argv)) & 0xFFFF)
    seen: dict[str, int] = {}
    for trial in range(TRIALS):
        old = f"previous output {trial}\n".encode()
        target.write_bytes(old)
        process = subprocess.Popen([sys.executable, "-m", "forensics", *argv], cwd=REPO, env=_env())
        _kill_after(process, rng.uniform(0.3 * took, 1.1 * took))
        which = _check(target, old, _digest(_steady(new)), len(new))
        seen[which] = seen.get(which, 0) + 1
    return seen


@pytest.mark.parametrize("command", ["slab-export", "report", "trace-save-text"])
def test_killed_commands_leave_old_or_new(tmp_path: Path, command: str) -> None:
    out = tmp_path / "out"
    out.mkdir()
    if command == "slab-export":
        target = out / "slab.csv"
        argv = ["slab-export", "--store", str(_store(tmp_path)), "-o", str(target)]
    elif command == "report":
        target = out / "report.md"
        argv = ["report", "--store", str(_store(tmp_path)), "--dmesg", str(SNAPSHOTS.parent / "console.log")]
        argv += ["-o", str(target)]
    else:
        target = out / "trace.txt"
        argv = ["trace", "tests/data/traces/kf.ftrace.txt.gz", "--save-text", str(target), "-o", os.devnull]
    seen = _command_trials(tmp_path, argv, target)
    print(f"{command}: killed {TRIALS} times: {seen}")
