"""SIGTERM while an output is written where the file system has no ``O_TMPFILE``: no temporary file is left.

There the writer (forensics/output.py) writes a named ``mkstemp`` file and renames it into place; SIGTERM's
default action ran no cleanup and left ``.NAME.XXXXXXXX.tmp`` (half-written) beside the target.  The file
system is a FUSE pass-through (``vmcore/loopback_fs.py``: fusepy and libfuse2, which has no tmpfile); the test is
skipped where ``/dev/fuse``, ``fusermount`` or fusepy are missing.
"""

from __future__ import annotations

import gzip
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import fuse_mounted

SERVER = Path(__file__).parent / "vmcore" / "loopback_fs.py"
TRACES = Path(__file__).resolve().parents[1] / "data" / "traces"


@pytest.fixture
def no_tmpfile_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory on a file system without O_TMPFILE."""
    source = tmp_path / "source"
    source.mkdir()
    (source / "up").write_bytes(b"")
    with fuse_mounted(SERVER, source, tmp_path / "mnt", ready="up") as mount:
        (mount / "up").unlink()
        try:
            os.close(os.open(mount, os.O_TMPFILE | os.O_WRONLY, 0o600))
        except OSError:
            pass
        else:
            pytest.skip("this FUSE has O_TMPFILE: the writer would not name a temporary file")
        yield mount


def test_sigterm_while_a_named_temporary_output_is_written(no_tmpfile_dir: Path, tmp_path: Path) -> None:
    text = gzip.decompress((TRACES / "kf.ftrace.txt.gz").read_bytes())
    trace = tmp_path / "big.txt"
    trace.write_bytes(text * 100)  # 30 MB: saved through FUSE for seconds
    target = no_tmpfile_dir / "saved.txt"
    target.write_bytes(b"the previous text\n")
    run = subprocess.Popen(
        [sys.executable, "-m", "forensics", "trace", str(trace), "--save-text", str(target)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 600
    named: list[str] = []
    while run.poll() is None and time.monotonic() < deadline and not named:
        named = [n for n in os.listdir(no_tmpfile_dir) if n.startswith(".saved.txt.")]
        time.sleep(0.002)
    assert named, "the run wrote no named temporary file"
    time.sleep(0.2)  # writing it
    assert run.poll() is None, "the run was over before the signal"
    run.send_signal(signal.SIGTERM)
    _out, err = run.communicate(timeout=600)
    assert run.returncode == -signal.SIGTERM, err.decode()[-2000:]  # ended by the signal, as before
    assert sorted(os.listdir(no_tmpfile_dir)) == ["saved.txt"]  # no temporary file left
    assert target.read_bytes() == b"the previous text\n"
