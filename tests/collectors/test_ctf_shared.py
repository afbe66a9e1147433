"""The LTTng kernel traces of ../shared/traces/ctf: kforensic's figures against a reference built from babeltrace2 text.

The reference reads ``babeltrace2 --clock-cycles`` output with a regular
expression and recomputes per-task runtime, longest run and worst wakeup
latency by the definitions of docs/trace.md (a run is switch-in to
switch-out on one CPU, runs still open at the end count up to the CPU's last
analysed event; wakeup latency is the first wakeup after a switch-out to the
switch-in).  It shares no code with the CTF reader or the engine.  Skipped
when the evaluation data or babeltrace2 is missing.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.forensics.commands.test_trace_cli import run

SHARED = Path(__file__).resolve().parents[3] / "shared" / "traces" / "ctf"
if not SHARED.is_dir():
    SHARED = Path("/work/shared/traces/ctf")

pytestmark = pytest.mark.skipif(
    not SHARED.is_dir() or shutil.which("babeltrace2") is None, reason="needs ../shared/traces/ctf and babeltrace2"
)

_LINE = re.compile(r"^\[(\d+)\] \(\S+\) \S+ (\w+): \{ cpu_id = (\d+) \}, \{ (.*) \}$")
_FIELD = re.compile(r'(\w+) = ("(?:[^"\\]|\\.)*"|[^,]+)')
_ANALYSED = {
    "sched_switch",
    "sched_wakeup",
    "sched_waking",
    "sched_wakeup_new",
    "sched_process_exit",
    "irq_handler_entry",
    "irq_handler_exit",
    "softirq_raise",
    "softirq_entry",
    "softirq_exit",
    "workqueue_execute_start",
    "workqueue_execute_end",
}


def reference(trace: Path) -> dict[int, tuple[float, float, float]]:
    """tid -> (runtime ms, longest run ms, worst wakeup latency ms) from babeltrace2 text."""
    text = subprocess.run(
        ["babeltrace2", "--clock-cycles", str(trace)], capture_output=True, text=True, check=True
    ).stdout
    cur: dict[int, tuple[int, int]] = {}  # cpu -> (tid, since)
    last: dict[int, int] = {}
    runtime: dict[int, int] = {}
    longest: dict[int, int] = {}
    pending: dict[int, int] = {}
    worst_wake: dict[int, int] = {}
    waking = "sched_waking:" in text
    for line in text.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        ts, name, cpu = int(m.group(1)), m.group(2), int(m.group(3))
        last[cpu] = ts  # an open run lasts to its CPU's last event of any kind (ue4 #3)
        if name not in _ANALYSED:
            continue
        f = {k: v.strip() for k, v in _FIELD.findall(m.group(4))}
        if name in ("sched_waking" if waking else "sched_wakeup", "sched_wakeup_new"):
            tid = int(f["tid"])
            if tid and tid not in pending:
                pending[tid] = ts
        elif name == "sched_switch":
            prev, nxt = int(f["prev_tid"]), int(f["next_tid"])
            if cpu in cur:
                tid, since = cur[cpu]
                if tid and tid == prev:
                    runtime[tid] = runtime.get(tid, 0) + ts - since
                    longest[tid] = max(longest.get(tid, 0), ts - since)
            pending.pop(prev, None)
            cur[cpu] = (nxt, ts)
            if nxt in pending:
                worst_wake[nxt] = max(worst_wake.get(nxt, 0), ts - pending.pop(nxt))
    for cpu, (tid, since) in cur.items():
        if tid:
            runtime[tid] = runtime.get(tid, 0) + last[cpu] - since
            longest[tid] = max(longest.get(tid, 0), last[cpu] - since)
    return {tid: (runtime[tid] / 1e6, longest.get(tid, 0) / 1e6, worst_wake.get(tid, 0) / 1e6) for tid in runtime}


@pytest.mark.slow
@pytest.mark.parametrize("name", ["bug446190"])
def test_kernel_trace_agrees_with_babeltrace2_reference(name: str, tmp_path: Path) -> None:
    trace = SHARED / name
    ref = reference(trace)
    out = tmp_path / "t.json"
    result = run(str(trace), "--format", "json", "--top", "100000", "-o", str(out))
    assert result.returncode in (0, 1), result.stderr
    doc = json.loads(out.read_text())
    assert doc["input"]["kind"].startswith("LTTng CTF (kernel")
    assert doc["parse"]["events"] == sum(
        1
        for _ in subprocess.run(
            ["babeltrace2", str(trace)], capture_output=True, text=True, check=True
        ).stdout.splitlines()
    )
    tasks = {t["pid"]: t for t in doc["tasks"]}
    assert len(ref) > 20
    for tid, (runtime, longest, wake) in ref.items():
        t = tasks[tid]
        assert t["runtime_ms"] == pytest.approx(runtime, abs=2e-3), tid
        assert t["runs"]["worst"]["ms"] == pytest.approx(longest, abs=2e-3), tid
        got_wake = t["wakeup_latency"]["worst"]["ms"] if t["wakeup_latency"]["worst"] else 0.0
        assert got_wake == pytest.approx(wake, abs=2e-3), tid


@pytest.mark.slow
def test_span_breakdown_on_an_lttng_kernel_trace_with_syscalls(tmp_path: Path) -> None:
    """A CSV span over lttng-consumerd (TID 496) on bug446190: its D sleeps, in a syscall, against babeltrace2 text."""
    trace = SHARED / "bug446190"
    spans = tmp_path / "spans.csv"
    spans.write_text("tid,name,start_ns,end_ns\n496,consumerd,7633690000000,7635690000000\n")
    out = tmp_path / "t.json"
    result = run(str(trace), "--spans", str(spans), "--format", "json", "-o", str(out))
    assert result.returncode in (0, 1), result.stderr
    slow = json.loads(out.read_text())["spans"]["slow"]
    assert len(slow) == 1
    span = slow[0]
    assert sum(p["ms"] for p in span["parts"]) == pytest.approx(span["ms"], abs=1e-3)
    text = subprocess.run(
        ["babeltrace2", "--clock-cycles", str(trace)], capture_output=True, text=True, check=True
    ).stdout
    # The reference: the first switch-out of 496 in D (prev_state 2) within the span, from the text.
    first_d = None
    for line in text.splitlines():
        m = _LINE.match(line)
        if m and m.group(2) == "sched_switch" and int(m.group(1)) >= 7633690000000:
            f = dict(_FIELD.findall(m.group(4)))
            if f["prev_tid"].strip() == "496" and f["prev_state"].strip() == "2":
                first_d = int(m.group(1)) / 1e9
                break
    assert first_d is not None
    blocked = [p for p in span["parts"] if p["what"] == "blocked"]
    assert blocked[0]["start"] == pytest.approx(first_d, abs=1e-9)
    assert blocked[0]["state"] == "D"
    assert blocked[0]["syscall"] == "arm_fadvise64_64"  # from the sys_* entry events of lttng-modules 2.5
    assert blocked[0]["by_tid"] is not None and blocked[0]["by_tid"] > 0


@pytest.mark.slow
@pytest.mark.parametrize(
    "options",
    [{}, {"window": (7634.0, 7636.5)}, {"bucket": 0.05}, {"timeline": True}],
    ids=["whole", "window", "buckets", "timeline"],
)
def test_ctf_columns_and_records_give_the_reference_analysis(options: dict[str, object]) -> None:
    """The compiled engine on the CTF columns equals SchedAnalyzer (the reference) on the records of the same rows."""
    from collectors.ctf.feed import feed_session
    from collectors.ctf.reader import Session
    from detectors.sched.analyzer import SchedAnalyzer
    from detectors.sched.engine import FastAnalyzer
    from forensics.types.trace_batch import EventBatch

    class Both:
        def __init__(self) -> None:
            self.fast = FastAnalyzer(**options)  # type: ignore[arg-type]
            self.ref = SchedAnalyzer(**options)  # type: ignore[arg-type]
            self.done = False

        def feed(self, batch: EventBatch) -> None:
            self.fast.feed(batch)
            self.ref.feed([batch.event(i) for i in range(len(batch))])
            self.done = self.fast.done and self.ref.done

    both = Both()
    read = feed_session(Session(str(SHARED / "bug446190")), both)
    expected = both.ref.result(read.counts)
    got = both.fast.result(read.counts)
    assert got == expected
    assert repr(got) == repr(expected)
    assert both.fast.timeline == both.ref.timeline
    # (a window's table lists only the tasks active in it: 14 of the trace's tasks in 7634.0 .. 7636.5)
    assert len(expected.tasks) >= (10 if "window" in options else 20)
