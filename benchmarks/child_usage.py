"""A measured child process: wall and CPU seconds and the child's own peak RSS.

Why not ``wait4``'s ``ru_maxrss`` alone: Linux keeps a process's peak RSS across ``exec``
(``setmax_mm_hiwater_rss`` in ``exec_mmap``), and a child starts with this benchmark's memory (a fork
copies it, a vfork shares it), so the figure is at least what this process held when it started the
child: ``perl -e 1`` started from a Python process holding 200 MB read 213 MiB, against 4.8 MiB through
GNU time (2026-12-05).  Benchmarks that read or build their inputs in process (a 50 MB recording, a
week of samples) showed their own size as the peer's peak.

GNU time (``/usr/bin/time -f %M``, Debian package ``time``) forks the command from its own small
process and reports that command's peak, so it is used where installed.  Without it, a ``wait4`` figure
that is not above this process's own peak cannot be told from it and is returned as ``None``.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO


@dataclass(frozen=True)
class ChildRun:
    """One finished child: ``rss_mib`` is None when its own peak could not be told from this process's."""

    wall: float
    cpu: float
    rss_mib: float | None
    exit_code: int
    stderr: bytes
    stdout: bytes = b""


def gnu_time() -> str | None:
    """The path of GNU time, or None (the shell keyword ``time`` cannot report a peak RSS)."""
    return shutil.which("time", path="/usr/bin:/bin")


def run_child(
    argv: list[str],
    *,
    stdout: int | IO[bytes] | None = subprocess.DEVNULL,
    stderr: int | None = subprocess.PIPE,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    capture_stdout: bool = False,
) -> ChildRun:
    """Run ``argv`` to its end and measure it (CPU from ``wait4``: GNU time's own share is ~1 ms).

    ``capture_stdout`` keeps the child's standard output (through a file: two pipes read one after the
    other can block the child, and ``communicate`` would reap it before ``wait4`` could measure it).
    """
    timer = gnu_time()
    with (
        tempfile.NamedTemporaryFile("r", suffix=".time") as peak,
        tempfile.TemporaryFile() as captured,
    ):
        wrapped = [timer, "-q", "-f", "%M", "-o", peak.name, *argv] if timer else argv
        start = time.perf_counter()
        sink = captured if capture_stdout else stdout
        proc = subprocess.Popen(wrapped, stdout=sink, stderr=stderr, env=env, cwd=cwd)
        err = proc.stderr.read() if proc.stderr is not None else b""
        _pid, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        text = peak.read().split()
        captured.seek(0)
        out = captured.read()
    cpu = usage.ru_utime + usage.ru_stime
    if timer and text and text[-1].isdigit():
        rss: float | None = int(text[-1]) / 1024
    else:
        own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        rss = usage.ru_maxrss / 1024 if usage.ru_maxrss > own else None
    return ChildRun(wall, cpu, rss, os.waitstatus_to_exitcode(status), err, out)


def mib(rss: float | None) -> str:
    """A peak RSS for a figure line: 'unknown' says why it is missing."""
    return f"{rss:.1f} MiB" if rss is not None else "unknown MiB (install GNU time: apt install time)"


def peak(values: Iterable[float | None]) -> float | None:
    """The largest of several runs' peaks; None when any run's is unknown (the largest could be that one)."""
    known = list(values)
    return None if any(v is None for v in known) else max(v for v in known if v is not None)
