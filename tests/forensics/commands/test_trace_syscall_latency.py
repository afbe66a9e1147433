"""The syscall latency table of ``kforensic trace`` on an LTTng kernel session, against babeltrace2.

The project's LTTng session (tests/data/lttng/kernel-session.tar.xz) records every syscall with a ``tid`` context:
babeltrace2's text names the thread of each event, which the table's pairing never reads (it takes the thread
from each CPU's ``sched_switch``, as LTTng 2.5's context-less ``sys_*``/``exit_syscall`` events need). Pairing
babeltrace2's events per context tid must give the same table.
"""

from __future__ import annotations

import functools
import json
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

import pytest

from tests.collectors.ctf_check import extract_session
from tests.helpers import Ran, cli_run

needs_babeltrace = pytest.mark.skipif(shutil.which("babeltrace2") is None, reason="needs babeltrace2")

# One pytest-xdist group: the session unpacked and babeltrace2's pairing of it made once, on one worker (issue #28).
pytestmark = pytest.mark.xdist_group("lttng-syscall-latency")


def trace(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> Ran:
    return cli_run(monkeypatch, capsys, "trace", *args)


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return extract_session(tmp_path_factory.mktemp("lttng"))


class Call(NamedTuple):
    ns: int
    tid: int
    entry_ns: int
    exit_ns: int
    cpu: int
    exit_cpu: int


class Expected(NamedTuple):
    calls: dict[str, list[Call]]
    open_at_end: int  # entries never followed by an event of their thread (exit/exit_group counted apart)
    thread_exits: int
    began_inside: int
    entries_after_entry: int


_EVENT = re.compile(
    r"^\[(\d+)\.(\d+)\] \([^)]*\) \S+ syscall_(entry|exit)_(\w+): \{ cpu_id = (\d+) \}, \{ tid = (\d+),", re.M
)


@functools.cache  # the module's two tests read it, never change it: babeltrace2 and its text read once (~0.7 s)
def babeltrace_pairs(kernel: Path) -> Expected:
    """Each thread's syscall entry paired with its next syscall event when that is an exit, per context tid."""
    text = subprocess.run(
        ["babeltrace2", "--clock-seconds", str(kernel)], capture_output=True, text=True, check=True
    ).stdout
    open_: dict[int, tuple[int, str, int]] = {}
    seen: set[int] = set()
    calls: dict[str, list[Call]] = defaultdict(list)
    ended = began = overwritten = 0
    for m in _EVENT.finditer(text):
        secs, frac, kind, name, cpu_text, tid_text = m.groups()
        ns, cpu, tid = int(secs) * 10**9 + int(frac.ljust(9, "0")), int(cpu_text), int(tid_text)
        if kind == "entry":
            overwritten += tid in open_
            if name in ("exit", "exit_group"):
                ended += 1
                open_.pop(tid, None)
            else:
                open_[tid] = (ns, name, cpu)
        elif tid in open_:
            start, entered, cpu0 = open_.pop(tid)
            assert entered == name
            calls[name].append(Call(ns - start, tid, start, ns, cpu0, cpu))
        elif tid not in seen:
            began += 1
        seen.add(tid)
    return Expected(dict(calls), len(open_), ended, began, overwritten)


@needs_babeltrace
def test_the_table_is_babeltrace2_paired_per_context_thread(
    session: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Per syscall name: the calls, their total, the worst call's duration, thread, CPUs and both events'
    times; what was not paired, counted as babeltrace2's events give it."""
    want = babeltrace_pairs(session / "kernel")
    # The data holds calls that leave on another CPU than they entered on: pairing per CPU would miss them.
    assert any(c.cpu != c.exit_cpu for calls in want.calls.values() for c in calls)
    out = tmp_path / "doc.json"
    assert trace(monkeypatch, capsys, str(session), "-f", "json", "-o", str(out)).returncode in (0, 1)
    doc = json.loads(out.read_text())
    got = doc["syscall_latency"]
    assert got["paired"] == sum(len(c) for c in want.calls.values())
    assert got["open_at_end"] == want.open_at_end
    assert got["thread_exits"] == want.thread_exits
    assert got["began_inside"] == want.began_inside
    assert got["entries_after_entry"] == want.entries_after_entry
    assert (got["exits_after_exit"], got["across_lost_events"], got["mismatched_names"]) == (0, 0, 0)
    assert got["thread_unknown_events"] == 0
    by_name = {s["name"]: s for s in got["syscalls"]}
    assert set(by_name) == set(want.calls)
    for name, calls in want.calls.items():
        s = by_name[name]
        worst = max(calls)
        assert s["count"] == len(calls), name
        assert s["total_ms"] == pytest.approx(sum(c.ns for c in calls) / 1e6, abs=1e-3), name
        w = s["worst"]
        assert w["ms"] == pytest.approx(worst.ns / 1e6, abs=1e-3), name
        if [c.ns for c in calls].count(worst.ns) == 1:  # (a tie: either call is the worst)
            assert (w["tid"], w["cpu"], w["exit_cpu"]) == (worst.tid, worst.cpu, worst.exit_cpu), name
            assert (w["entry"]["timestamp_ns"], w["exit"]["timestamp_ns"]) == (worst.entry_ns, worst.exit_ns), name
    worsts = [s["worst"]["ms"] for s in got["syscalls"]]
    assert worsts == sorted(worsts, reverse=True)
    (exam,) = doc["incident"]["examined"]
    assert f"syscall latency ({got['paired']:,} syscalls paired)" in exam["could_find"]
    assert not any("syscall latency" in line for line in exam["could_not"])


@needs_babeltrace
def test_the_text_shows_the_top_names_and_says_what_was_not_paired(
    session: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    want = babeltrace_pairs(session / "kernel")
    text = trace(monkeypatch, capsys, str(session), "--top", "5").stdout
    said = " ".join(text.split())
    assert f"Syscall latency (entry to exit per thread; 5 of {len(want.calls)} syscall names, longest call first)" in (
        said
    )
    longest = max(want.calls, key=lambda n: max(want.calls[n]).ns)
    assert re.search(rf"│ {longest} +│ {len(want.calls[longest])} ", text)
    paired = sum(len(c) for c in want.calls.values())
    assert f"syscall latency: {paired} syscalls paired" in said
    assert f"still in the syscall at the end: {want.open_at_end} " in said
    assert f"exits without entries: {want.began_inside} (the trace began inside them)" in said


def test_an_lttng_run_does_not_import_numpy_ma(session: Path, tmp_path: Path) -> None:
    # np.unique of one array imports numpy.ma (1.2 MB resident, 45-70 ms): the table's names use distinct().
    root = Path(__file__).resolve().parents[3]
    code = (
        "import sys\n"
        "from forensics.cli import entry\n"
        "sys.argv = ['kforensic', 'trace', sys.argv[1], '--format', 'json', '-o', sys.argv[2]]\n"
        "try:\n"
        "    entry()\n"
        "except SystemExit as exc:\n"
        "    assert not exc.code, exc.code\n"
        "print('numpy.ma' in sys.modules)\n"
    )
    out = tmp_path / "out.json"
    ran = subprocess.run(
        [sys.executable, "-c", code, str(session), str(out)], capture_output=True, text=True, check=True, cwd=root
    )
    assert json.loads(out.read_text())["syscall_latency"]["paired"] > 0  # (the table was made)
    assert ran.stdout.strip() == "False"
