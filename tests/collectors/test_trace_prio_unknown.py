"""A sched_switch or sched_wakeup line that prints no prio: its prio is unknown, never 0 (a real-time priority).

Until 2026-12-06 ``comm=victim pid=11 target_cpu=000`` gave the woken task prio 0 (an RT task in the task
table and JSON, "rt": true), and a sched_switch without ``prev_prio``/``next_prio`` was a malformed line.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from collectors.trace_payloads import parse_switch, parse_wakeup
from forensics.types.trace import PRIO_UNKNOWN

HEAD = "# tracer: nop\n#\n"
LINES = [
    "<idle>-0 [000] d..2. 100.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R"
    " ==> next_comm=hog next_pid=10 next_prio=120",
    "other-20 [001] d..2. 100.001000: sched_waking: comm=victim pid=11 target_cpu=000",
    "other-20 [001] d..2. 100.002000: sched_switch: prev_comm=other prev_pid=20 prev_prio=120 prev_state=S"
    " ==> next_comm=swapper/1 next_pid=0 next_prio=120",
    "hog-10 [000] d..2. 100.012000: sched_switch: prev_comm=hog prev_pid=10 prev_state=R"
    " ==> next_comm=victim next_pid=11",
    "<idle>-0 [001] d..2. 100.030000: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R"
    " ==> next_comm=other next_pid=20 next_prio=120",
]


def test_a_payload_without_prio_parses_as_unknown() -> None:
    ev = parse_wakeup(2, 1.0, 0, 1, b"", b"comm=victim pid=11 target_cpu=000")
    assert (ev.pid, ev.prio, ev.next_pid) == (11, PRIO_UNKNOWN, 0)
    assert parse_wakeup(2, 1.0, 0, 1, b"", b"comm=v pid=11 prio=0 target_cpu=000").prio == 0  # a real prio 0 stays
    sw = parse_switch(1, 1.0, 0, 1, b"", b"prev_comm=hog prev_pid=10 prev_state=R ==> next_comm=victim next_pid=11")
    assert (sw.pid, sw.prio, sw.state, sw.next_pid, sw.next_prio) == (10, PRIO_UNKNOWN, b"R", 11, PRIO_UNKNOWN)
    with_prio = b"prev_comm=a b prev_pid=1 prev_prio=98 prev_state=S ==> next_comm=c next_pid=2 next_prio=120"
    assert (parse_switch(1, 1.0, 0, 1, b"", with_prio).prio, parse_switch(1, 1.0, 0, 1, b"", with_prio).next_prio) == (
        98,
        120,
    )


def test_a_task_whose_lines_print_no_prio_is_not_real_time(tmp_path: Path) -> None:
    trace = tmp_path / "t.txt"
    trace.write_text(HEAD + "\n".join(LINES) + "\n")
    out = tmp_path / "t.json"
    cmd = [sys.executable, "-m", "forensics", "trace", str(trace), "--format", "json", "-o", str(out)]
    subprocess.run(cmd, check=True, capture_output=True, timeout=600)
    d = json.loads(out.read_text())
    assert d["parse"]["malformed_lines"] == 0  # the sched_switch without priorities is read
    tasks = {t["comm"]: t for t in d["tasks"]}
    assert tasks["victim"]["prio"] == {"not_available": "no line of the task prints its prio"}
    assert tasks["victim"]["rt"] is False
    assert tasks["other"]["prio"] == 120
    assert not [f for f in d["incident"]["findings"] if f["kind"] == "sched-rt-hog"]
