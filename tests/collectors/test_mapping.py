"""A mapped input that another process truncates while kforensic reads it: one line and exit 3, not SIGBUS.

The run is started for real, the test waits until the file shows in the run's ``/proc/PID/maps`` and
truncates it to one page there and then: the run's next read past that page faults (SIGBUS, exit 135
without a word before collectors/mapping.py).  Both mapped readers: the LTTng stream files and a large
ftrace text (mapped from trace_input.MAP_MIN_BYTES).
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from collectors.trace_input import MAP_MIN_BYTES
from tests.collectors.ctf_check import extract_session

TRACES = Path(__file__).resolve().parents[1] / "data" / "traces"


def _truncated_while_read(path: Path, argv: list[str], out: Path) -> subprocess.CompletedProcess[str]:
    """Run ``kforensic ARGV -o OUT``, truncate ``path`` to 4096 bytes as soon as the run has it mapped."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "forensics", *argv, "-o", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    real = str(path.resolve())
    deadline = time.monotonic() + 600  # a first compile on a loaded machine takes minutes
    seen = False
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            maps = Path(f"/proc/{proc.pid}/maps").read_text()
        except OSError:
            break
        if real in maps:
            os.truncate(path, 4096)
            seen = True
            break
        time.sleep(0.002)
    stdout, stderr = proc.communicate(timeout=600)
    assert seen, f"the run ended before the file was truncated: {stderr[-2000:]}"
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def _check(done: subprocess.CompletedProcess[str], path: Path, size: int, out: Path) -> None:
    assert done.returncode == 3, done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if not line.startswith("kforensic: compiling")]
    assert lines == [
        f"kforensic: error: {path}: the file shrank while it was being read ({size} bytes when opened, 4096 now):"
        " another process truncated or rewrote it",
        "kforensic: hint: analyse a copy that nothing writes to (cp it first), or wait until its writer is done",
    ]
    assert not out.exists()
    assert sorted(p.name for p in out.parent.iterdir() if p.name.startswith(".")) == []  # no temporary file left


@pytest.mark.parametrize("compiled", ["no", "yes"])
def test_an_lttng_stream_cut_while_read(tmp_path: Path, compiled: str, monkeypatch: pytest.MonkeyPatch) -> None:
    root = extract_session(tmp_path / "session")
    stream = root / "kernel" / "kch_0"
    size = stream.stat().st_size
    monkeypatch.setenv("KFORENSIC_COMPILED", compiled)
    out = tmp_path / "out" / "report.json"
    out.parent.mkdir()
    done = _truncated_while_read(stream, ["trace", str(root), "-f", "json"], out)
    _check(done, stream, size, out)


def test_a_large_ftrace_text_cut_while_read(tmp_path: Path) -> None:
    text = gzip.decompress((TRACES / "kf.ftrace.txt.gz").read_bytes())
    trace = tmp_path / "big.txt"
    with trace.open("wb") as f:
        for _ in range(MAP_MIN_BYTES * 5 // 4 // len(text) + 1):  # mapped from MAP_MIN_BYTES, not read
            f.write(text)
    size = trace.stat().st_size
    out = tmp_path / "out" / "report.txt"
    out.parent.mkdir()
    done = _truncated_while_read(trace, ["trace", str(trace)], out)
    _check(done, trace, size, out)
