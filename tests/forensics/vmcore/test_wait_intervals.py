"""A blocked task's wait, and a lock cycle, are intervals on the timeline from when the dump says the task last ran.

ue17 findings 6 and 11: the hung-task timeline started kf_waiter's wait at khungtaskd's report (10.53 s after
boot, 20:15:58), although the dump read that it last ran 8.2 s earlier (console line 234, 2.337585: "kf_waiter
wants kf_dev_lock"); the AB-BA deadlock (11) showed the cycle at 10.79 s, its tasks blocked at about 3 s.  Now the
task's last run, read from its task_struct (these 6.1 kernels have no CONFIG_SCHED_INFO: ``se.exec_start``),
starts the interval, cited at its address, and the report (or the crash) ends it (crash's ``ps -m``).
"""

from __future__ import annotations

import pytest

from detectors.incident.timeline import build_timeline
from forensics.model import FindingKind
from forensics.pipelines.vmcore import analyse_dump
from forensics.types.incident import TimelineEvent
from forensics.vmcore.program import DebugInfoRequest
from tests.vmcore_cases import load_case


def _timeline(name: str) -> tuple[TimelineEvent, ...]:
    case = load_case(name)
    result = analyse_dump(case.directory, DebugInfoRequest(case.vmlinux, (), case.module_debug, ()))
    return build_timeline(result.incident.sorted_findings(), result.incident.boot_time)


def test_a_hung_task_is_an_interval_from_its_last_run_to_its_report() -> None:
    events = _timeline("04-hung-task")
    waiter = next(e for e in events if e.title.startswith("task kf_waiter blocked in D state"))
    # Was: an instant at 10.529772, the report, "blocked for more than 5 s when reported".
    assert waiter.when.seconds == pytest.approx(2.338005151)  # se.exec_start of pid 43, read
    assert "(u64 of pid 43's se.exec_start)" in waiter.cite
    assert waiter.end is not None and waiter.end.seconds == pytest.approx(10.529772, abs=2e-6)  # khungtaskd's report
    assert waiter.duration == pytest.approx(8.19, abs=0.01)
    assert "#log line" in (waiter.end_cite or "")


def test_a_lock_cycle_starts_when_its_last_task_last_ran() -> None:
    events = _timeline("11-abba-deadlock")
    cycle = next(e for e in events if e.kind is FindingKind.DEADLOCK)
    tasks = [e for e in events if e.title.startswith(("task kf_config blocked", "task kf_stats blocked"))]
    assert len(tasks) == 2 and all(t.end is not None for t in tasks)
    # The cycle closed no earlier than the later of its two tasks last ran (pid 43, kf_stats).
    assert cycle.when.seconds == pytest.approx(max(t.when.seconds for t in tasks))
    assert 2.9 < min(t.when.seconds for t in tasks) < cycle.when.seconds < 3.3
    assert "(u64 of pid 43's se.exec_start)" in cycle.cite
    assert cycle.end is not None and cycle.end.seconds == pytest.approx(10.789913, abs=2e-6)  # was: instant there
