"""Recordings made now of tests/data/profile/src/glibc.c (hot code in glibc and the vDSO), with frame pointers
(``perf record -g``) or DWARF unwinding (``perf record --call-graph dwarf``): perf names glibc's functions
differently in each (the exported, versioned symbol; the internal name of glibc's debug info).

Each recording is made once per test process (a pytest-xdist worker), in a directory of its own, and the workload
built once: a test only reads the perf.data it is given (its own files go to its own directory).  They were made in
each test's directory: the workload compiled again for each test (~0.15 s of gcc) and the same recording
made again by the tests that ask for the same one (0.3-1.2 s of CPU each: the workload spins for its seconds).  A
test skips where perf or a C compiler is missing or perf may not record.
"""

from __future__ import annotations

import atexit
import re
import shutil
import subprocess
import tempfile
from functools import cache
from pathlib import Path

import pytest

from collectors.perf_script import find_perf

SOURCE = Path(__file__).resolve().parents[2] / "data" / "profile" / "src" / "glibc.c"

#: The mark of a test that records: one pytest-xdist worker makes the recordings two tests share (tests/conftest.py:
#: --dist loadgroup deals an ungrouped test to any worker, which made the recording again).
RECORDS = pytest.mark.xdist_group("glibc-recordings")

#: How each call graph mode is asked of perf record.
CALL_GRAPH = {
    "fp": ("-g",),
    "dwarf": ("--call-graph", "dwarf"),
    # Kernel call chains only: a sample taken in user mode has an empty chain (perf script prints no frame).
    "kernel-chains": ("-g", "--kernel-callchains"),
    # Events that are not CPU time, with call chains: one sample per context switch, per page faults.
    "sched-switch": ("-e", "sched:sched_switch", "-g"),
    "page-faults": ("-e", "page-faults", "-g"),
    "sched-two": ("-e", "sched:sched_switch", "-e", "sched:sched_wakeup", "-g"),
    # A tracepoint met before the CPU time it is recorded with (its samples' lines end with their payload).
    "sched-cpu": ("-e", "sched:sched_switch", "-e", "cpu-clock", "-g"),
    # The workload's exec is its first sample: perf enables the events at that exec, whose tracepoint then fires.
    "exec-cpu": ("-e", "sched:sched_process_exec", "-e", "cpu-clock", "-g"),
    # The same with context switches, without call chains: one line per sample, a tracepoint's with no address.
    "exec-cpu-flat": ("-e", "sched:sched_process_exec", "-e", "sched:sched_switch", "-e", "cpu-clock"),
}
#: The modes that sample an event of their own: recorded at its own period (perf's default), not -F 999.
EVENT_MODES = frozenset({"sched-switch", "page-faults", "sched-two", "sched-cpu", "exec-cpu", "exec-cpu-flat"})


@cache
def _home() -> Path:
    """This process's directory of the workload and its recordings, removed when the process ends."""
    home = Path(tempfile.mkdtemp(prefix="kforensic-glibc-"))
    atexit.register(shutil.rmtree, home, True)
    return home


@cache
def _built() -> Path:
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler to build the workload")
    out = _home() / "glibc"
    subprocess.run(
        [cc, "-O2", "-g", "-fno-omit-frame-pointer", "-pthread", "-o", str(out), str(SOURCE)],
        check=True,
        capture_output=True,
    )
    return out


def record(workload: str, mode: str, secs: float = 0.6) -> Path:
    """``perf.data`` of ``glibc WORKLOAD SECS`` recorded in ``mode`` (a key of :data:`CALL_GRAPH`), made once per
    process: read only."""
    perf = find_perf()
    if perf is None:
        pytest.skip("perf is not installed")
    binary = _built()
    out = _home() / f"{workload}-{mode}-{secs}.data"
    if not out.exists():
        rec = subprocess.run(
            [
                perf,
                "record",
                "-q",
                *CALL_GRAPH[mode],
                *(() if mode in EVENT_MODES else ("-F", "999")),
                "-o",
                str(out),
                "--",
                str(binary),
                workload,
                str(secs),
            ],
            capture_output=True,
            timeout=120,
            check=False,
        )
        if rec.returncode != 0 or not out.exists():
            pytest.skip(f"perf record is not allowed here: {rec.stderr.decode(errors='replace')[:200]}")
    return out


def perf_report_dsos(data: Path, event: str | None = None) -> dict[str, float]:
    """``perf report --sort dso``'s share of each DSO (its base name, as perf names it), in percent: in the section of
    ``event`` when given (a recording of several events has one each)."""
    perf = find_perf()
    assert perf is not None
    report = subprocess.run(
        [perf, "report", "-i", str(data), "--stdio", "--no-children", "-g", "none", "--sort", "dso"],
        capture_output=True,
        timeout=120,
        check=True,
    ).stdout.decode()
    if event is not None:
        report = report.split(f"of event '{event}'", 1)[1].split("\n# Samples:", 1)[0]
    return {m.group(2): float(m.group(1)) for m in re.finditer(r"^\s+(\d+\.\d+)%\s+(\S+)", report, re.M)}
