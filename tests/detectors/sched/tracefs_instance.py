"""A private tracefs instance for the live ``kforensic trace`` tests that record with trace-cmd: the marks that skip
them where it cannot be made, and the instance itself, removed whatever happens."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

TRACEFS = Path("/sys/kernel/tracing")

#: live, and skipped without trace-cmd, root and tracefs instances
TRACEFS_MARKS = [
    pytest.mark.live,
    pytest.mark.skipif(shutil.which("trace-cmd") is None, reason="trace-cmd is not installed"),
    pytest.mark.skipif(
        os.geteuid() != 0 or not (TRACEFS / "instances").is_dir(), reason="needs root and tracefs instances"
    ),
]
#: :data:`TRACEFS_MARKS`, and skipped without CPUs 0 and 1 (the tests pin tasks to them)
MARKS = [
    *TRACEFS_MARKS,
    pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2 or not {0, 1} <= os.sched_getaffinity(0), reason="2 CPUs"),
]


@contextmanager
def instance(name: str, events: tuple[str, ...], buffer_kb: int = 2048) -> Iterator[Path]:
    """A new tracefs instance ``name`` recording ``events`` (``sched/sched_switch``...), tracing off until the
    caller turns it on; turned off and removed on the way out (``trace-cmd extract -B`` may have removed it)."""
    inst = TRACEFS / "instances" / name
    inst.mkdir()
    try:
        (inst / "tracing_on").write_text("0")  # a new instance traces from its creation
        (inst / "buffer_size_kb").write_text(str(buffer_kb))
        for e in events:
            (inst / "events" / e / "enable").write_text("1")
        yield inst
    finally:
        if inst.is_dir():
            (inst / "tracing_on").write_text("0")
            inst.rmdir()


def extract(inst: Path, dat: Path) -> Path:
    """The instance's buffers as a trace.dat (``trace-cmd extract -B``)."""
    subprocess.run(["trace-cmd", "extract", "-B", inst.name, "-o", str(dat)], check=True, capture_output=True)
    return dat


#: A CFS task that says it is ready on its stdout, blocks reading its stdin, then runs a few ms and exits.
SLEEPER = "import sys\nprint(flush=True)\nsys.stdin.buffer.read(1)\nsum(range(200000))\n"


def sleeper_on(cpu: int) -> subprocess.Popen[bytes]:
    """:data:`SLEEPER` pinned to ``cpu``, blocked on its read when this returns (:func:`wake` it)."""
    sleeper = subprocess.Popen(
        ["taskset", "-c", str(cpu), sys.executable, "-c", SLEEPER], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert sleeper.stdout is not None
    sleeper.stdout.readline()
    time.sleep(0.05)  # blocked on its read
    return sleeper


def wake(sleeper: subprocess.Popen[bytes]) -> None:
    """Wake :func:`sleeper_on`'s task (from this process's CPU)."""
    assert sleeper.stdin is not None
    sleeper.stdin.write(b"x")
    sleeper.stdin.flush()


def fifo_hog_on(cpu: int, code: str, *args: str) -> subprocess.Popen[bytes]:
    """Python ``code`` run SCHED_FIFO 10 pinned to ``cpu``, holding it when this returns (its first line printed)."""
    hog = subprocess.Popen(
        ["chrt", "-f", "10", "taskset", "-c", str(cpu), sys.executable, "-c", code, *args], stdout=subprocess.PIPE
    )
    assert hog.stdout is not None
    hog.stdout.readline()
    return hog
