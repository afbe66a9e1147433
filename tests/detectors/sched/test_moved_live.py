"""A real cross-CPU wakeup, recorded with trace-cmd in a private tracefs instance, read by ``kforensic trace``.

ue15 #3: a task queued by its wakeup on one CPU and switched in on another was blamed on the tasks of the CPU
where it finally ran ("find waited 150.694 ms to run, behind cc1", confidence 0.95), though when it moved is
not in a trace without sched_migrate_task.  Here a sleeper pinned to CPU0 is woken by this process from CPU1
while a SCHED_FIFO hog holds CPU0, so it waits queued there; this process then moves it to CPU1
(sched_setaffinity), where it runs.  The recording is made with and without sched_migrate_task enabled.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.detectors.sched.tracefs_instance import MARKS, extract, fifo_hog_on, instance, sleeper_on, wake

EVENTS = ("sched/sched_switch", "sched/sched_waking", "sched/sched_wakeup")
HOG_S = 0.9  # the SCHED_FIFO hog's longest run on CPU0 (under RT throttling's 0.95 s); it stops once told
QUEUED_S = 0.08  # how long the sleeper is left queued behind it before it is moved to CPU1

pytestmark = MARKS

# The hog says when it is ready on its stdout (tracefs_instance.fifo_hog_on), holding CPU0.
# The hog spins until this process has moved the sleeper (its flag file made), not for a fixed time: on a loaded
# machine (CI, three workers) this process was once kept off CPU1 past a 0.4 s hog's end, and the sleeper, woken
# after it, ran at once: no wait to find.
HOG = (
    f"import os, sys, time\nend = time.monotonic() + {HOG_S}\nprint(flush=True)\n"
    "while time.monotonic() < end and not os.path.exists(sys.argv[1]):\n    pass\n"
)


def _record(tmp: Path, migrate: bool) -> tuple[Path, int, int]:
    """trace.dat of one cross-CPU wakeup, its sleeper's and hog's pids; the instance is removed whatever happens."""
    mine = os.sched_getaffinity(0)
    sleeper = hog = None
    name = f"kforensic_moved_{os.getpid()}_{'m' if migrate else 'n'}x"
    # traced from the wakeup on only (the instance's tracing is off until then)
    with instance(name, (*EVENTS, *(("sched/sched_migrate_task",) if migrate else ()))) as inst:
        try:
            os.sched_setaffinity(0, {1})
            sleeper = sleeper_on(0)
            (inst / "tracing_on").write_text("1")
            flag = tmp / f"moved-{'m' if migrate else 'n'}.flag"
            hog = fifo_hog_on(0, HOG, str(flag))  # the hog holds CPU0
            wake(sleeper)  # the wakeup: from CPU1, onto CPU0 (its only CPU), behind the hog
            time.sleep(QUEUED_S)
            os.sched_setaffinity(sleeper.pid, {1})  # moved while queued: it runs on CPU1
            flag.touch()  # the hog may stop
            sleeper.wait(timeout=10)
            hog.wait(timeout=10)
            (inst / "tracing_on").write_text("0")
            dat = extract(inst, tmp / f"moved-{'m' if migrate else 'n'}.dat")
            return dat, sleeper.pid, hog.pid
        finally:
            os.sched_setaffinity(0, mine)
            for p in (sleeper, hog):
                if p is not None and p.poll() is None:
                    p.kill()
                    p.wait()


#: A trace-cmd report line: its CPU, time, event and fields (after the instance's name and the current task).
_LINE = re.compile(r"\[(\d{3})\]\s+(\d+\.\d+):\s+(\w+):\s+(.*)$")
#: The least wait the scenario makes: the sleeper is left queued on CPU0 for QUEUED_S before it is moved.
WAITED_S = QUEUED_S / 2
#: Recordings made before a test gives up on the scenario (skipped: the machine did not schedule it so).
TRIES = 3


def _premise(report: str, pid: int, hog: int, migrate: bool) -> str:
    """Why a recording is not the scenario these tests are about, "" when it is: the sleeper's wakeup queued it on
    CPU0 while the hog held CPU0, it was first switched in on CPU1 at least WAITED_S later, and (``migrate``) a
    sched_migrate_task moved it from CPU0 to CPU1 in between.

    Under load the scheduling is not always that (CI b15, b18 and a loaded 2-core machine here, about 2 runs in 6:
    "no single wakeup finding for the sleeper"): the sleeper not yet asleep when written to, the hog not yet on CPU0,
    or this process kept off CPU1 past the hog's end.  Such a recording says nothing of the analysis."""
    current0 = woken = moved = None
    held = False
    for line in report.splitlines():
        m = _LINE.search(line)
        if m is None:
            continue
        cpu, ts, event, fields = int(m[1]), float(m[2]), m[3], m[4]
        if event == "sched_switch":
            nxt = re.search(r"==> .*:(\d+) \[-?\d+\]\s*$", fields)
            nxt_pid = int(nxt[1]) if nxt else None
            if cpu == 0:
                current0 = nxt_pid
            if woken is not None and nxt_pid == pid:
                if cpu != 1:
                    return f"the sleeper ran on CPU{cpu} at {ts:.6f}, not moved to CPU1 first"
                if ts - woken < WAITED_S:
                    return f"the sleeper waited {ts - woken:.6f} s only (at least {WAITED_S} s expected)"
                if migrate and moved is None:
                    return "no sched_migrate_task moved the sleeper from CPU0 to CPU1 before it ran"
                return "" if held else f"CPU0 ran pid {current0}, not the hog (pid {hog}), at the sleeper's wakeup"
        elif event == "sched_wakeup" and woken is None:
            onto0 = re.search(rf":{pid} \[\d+\] CPU:000\b", fields) or re.search(
                rf"\bpid={pid} .*target_cpu=000", fields
            )
            if onto0:
                woken, held = ts, current0 == hog
        elif (
            event == "sched_migrate_task"
            and woken is not None
            and moved is None
            and re.search(rf"\bpid={pid} .*orig_cpu=0 dest_cpu=1\b", fields)
        ):
            moved = ts
    return "no sched_wakeup queued the sleeper on CPU0" if woken is None else "the sleeper never ran after its wakeup"


def _recorded(tmp: Path, migrate: bool) -> tuple[Path, int, int, str]:
    """:func:`_record` until the recording is the scenario (:func:`_premise`), at most TRIES times; the trace, the
    sleeper's and hog's pids and the trace-cmd report.  Skipped when no recording is: a failure is then an analysis
    that misreads the scenario, never a machine too loaded to make it."""
    why = []
    for n in range(TRIES):
        attempt = tmp / f"try{n}"
        attempt.mkdir()
        dat, pid, hog = _record(attempt, migrate)
        shown = subprocess.run(["trace-cmd", "report", "-i", str(dat)], capture_output=True, text=True, check=True)
        missing = _premise(shown.stdout, pid, hog, migrate)
        if not missing:
            return dat, pid, hog, shown.stdout
        why.append(missing)
    pytest.skip(f"the machine did not schedule the scenario in {TRIES} recordings: {'; '.join(why)}")


def _sleeper_finding(dat: Path, pid: int, *options: str) -> dict[str, object]:
    out = subprocess.run(
        [
            str(Path(sys.executable).with_name("kforensic")),
            "trace",
            str(dat),
            "--task",
            str(pid),
            "-f",
            "json",
            *options,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode in (0, 1), out.stderr
    doc = json.loads(out.stdout)
    found = [f for f in doc["incident"]["findings"] if f["kind"] == "sched-wakeup-latency"]
    # CI b15 and b18 (2026-12-07, under make test's load): none found; the message says what the run saw instead, as
    # text (a tuple's repr was cut short: "{'pid': 2527, 'comm': 'python', ...}"), with the sleeper's recorded events.
    if len(found) != 1:
        tasks = [t for t in doc.get("tasks", []) if t.get("pid") == pid] if isinstance(doc.get("tasks"), list) else []
        shown = subprocess.run(["trace-cmd", "report", "-i", str(dat)], capture_output=True, text=True, check=False)
        mine = [ln for ln in shown.stdout.splitlines() if f":{pid} " in ln or f"pid={pid} " in ln or f"-{pid} " in ln]
        said = {"findings": [f["title"] for f in doc["incident"]["findings"]], "tasks": tasks, "events": mine[:60]}
        pytest.fail("no single wakeup finding for the sleeper: " + json.dumps(said, indent=1))
    return found[0]


@pytest.mark.parametrize("migrate", [False, True])
def test_a_recorded_cross_cpu_wakeup_is_not_blamed_on_one_cpu(tmp_path: Path, migrate: bool) -> None:
    """Without sched_migrate_task the wait moved at an unknown time: who delayed it is not known (what ran on
    both CPUs is context).  With it, the move is cited and the hog that held CPU0 meanwhile is named."""
    dat, pid, hog, report = _recorded(tmp_path, migrate)
    assert ("sched_migrate_task" in report) == migrate
    finding = _sleeper_finding(dat, pid)
    title = str(finding["title"])
    summary = str(finding["summary"])
    if migrate:  # the sched_migrate_task recorded the move: the hog that held its queue on CPU0 delayed it
        # The hog is named as the last sched_switch naming it says: "taskset" where it has not been switched out
        # since its exec, else "python" (a fresh clone's CI at 14:05 on 2026-12-07: "behind python"); by its pid.
        assert title.endswith(("to run, behind taskset", "to run, behind python")), title
        assert finding["confidence"] > 0.6
        assert "it moved from CPU0 to CPU1 at " in summary and "(sched_migrate_task); " in summary, summary
        assert re.search(rf"CPU0 ran (taskset|python) \(pid {hog}\) ", summary), summary
        assert "not known" not in summary, summary
        return
    assert title.endswith("to run (woken onto CPU0, ran on CPU1)"), title  # its sched_wakeup's CPU
    assert "behind" not in title
    assert finding["confidence"] == 0.6
    assert "it moved from CPU0 to CPU1 at an unknown time" in summary, summary
    assert "no sched_migrate_task among the events read" in summary and "who delayed it is not known" in summary
    # the hog that held its queue, by its pid: "taskset" before its exec, "python" after (CI b5, 2026-12-07 17:00)
    assert re.search(rf"CPU0 ran (taskset|python) \(pid {hog}\) ", summary), summary
    # judged unknown, low: who shared the CPU it waited on is not known (until 2026-12-07 judged against "1 runnable
    # task(s)", the largest ratio: ue19 #1)
    assert "its fair share is unknown" in summary and finding["severity"] == "low"
    assert finding["baseline"]["name"].startswith("fair share: unknown")


def test_a_recorded_wait_open_at_a_windows_end_is_closed_where_sched_migrate_task_moved_it(tmp_path: Path) -> None:
    """A window ending after the recorded move to CPU1 and before the sleeper's switch-in there: its wait, still
    open, was closed on CPU0, where it was queued, told as one that never moved (the move not said, CPU1 not
    named).  Now it is closed on CPU1, the move cited, the hog that held CPU0 until then named."""
    dat, pid, hog, report = _recorded(tmp_path, True)
    move = re.search(rf"(\d+\.\d+): sched_migrate_task: .*pid={pid} .*orig_cpu=0 dest_cpu=1", report)
    assert move is not None, report[-2000:]
    moved = float(move[1])
    ran = re.search(rf"(\d+\.\d+): sched_switch: .*==> \S+:{pid} ", report[move.end() :])
    assert ran is not None and float(ran[1]) > moved
    window = f"{moved - 0.05:.6f}:{(moved + float(ran[1])) / 2:.7f}"  # 50 ms queued on CPU0 in it, then on CPU1
    finding = _sleeper_finding(dat, pid, "--window", window)
    title, summary = str(finding["title"]), str(finding["summary"])
    # the hog, as above; still waiting at the window's end: a lower bound, said so
    assert title.endswith(
        ("to run, behind taskset (still waiting at the window's end)", "to run, behind python (still waiting at the "
         "window's end)")
    ), title  # fmt: skip
    assert f"it moved from CPU0 to CPU1 at {moved:.6f} (sched_migrate_task)" in summary, summary
    assert re.search(rf"CPU0 ran (taskset|python) \(pid {hog}\) ", summary), summary
