"""LTTng's sched_migrate_task is read as an event (Kind.MIGRATE) on the project's kernel session, as babeltrace2
shows it, and counted alike by both scheduling engines (TraceAnalysis.migrations)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from collectors.ctf.reader import Session, kernel_batch
from forensics.jit import COMPILED_ENV
from forensics.pipelines.trace import analyse_trace_file
from forensics.types.trace import Kind
from tests.collectors.ctf_check import extract_session

_FIELDS = re.compile(rb"comm = \"([^\"]*)\", tid = (\d+), prio = (-?\d+), orig_cpu = (\d+), dest_cpu = (\d+)")


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return extract_session(tmp_path_factory.mktemp("lttng"))


def test_migrate_events_are_read_with_both_cpus(session: Path) -> None:
    """Before, the reader skipped them (counted by name): now each is a record whose next_pid is the CPU the task
    moved to and next_prio the one it left, the fields babeltrace2 prints."""
    s = Session(str(session))
    got = []
    for rows, owner in s.rows():
        batch = kernel_batch(s, rows, owner, False)
        got += [batch.event(i) for i in range(len(batch)) if batch.kind[i] == Kind.MIGRATE]
    assert len(got) == 47
    assert (got[0].pid, got[0].comm, got[0].next_pid, got[0].next_prio) == (15, b"rcu_preempt", 0, 1)
    if shutil.which("babeltrace2"):
        text = subprocess.run(["babeltrace2", str(session)], capture_output=True, check=True).stdout
        want = [m.groups() for m in _FIELDS.finditer(text)]
        assert [(e.comm, e.pid, e.next_prio, e.next_pid) for e in got] == [
            (c, int(t), int(o), int(d)) for c, t, _p, o, d in want
        ]
        assert {e.prio for e in got} == {int(p) for _c, _t, p, _o, _d in want}


@pytest.mark.parametrize("compiled", ["no", "yes"])
def test_both_engines_count_them(session: Path, compiled: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(COMPILED_ENV, compiled)
    analysis = analyse_trace_file(str(session)).analysis
    assert analysis.migrations == 47
