"""A thread renamed by exec is named, in a slow span's breakdown, as the trace named it at that time.

Trace Compass's synctraces (scp_src) showed it: ``sudo`` (TID 7420) forks and execs ``tcpdump``; a
request preempted by it a second later was said to be "preempted by sudo (TID 7420)" although the
``sched_switch`` that preempted it says ``next_comm=tcpdump``: the breakdown named every thread by the
first name the trace gave it.  Here the project's own ftrace text: TID 200 is switched in as ``sudo``,
execs while it runs (switched out as ``tcpdump``), preempts the request again as ``tcpdump`` and wakes it.
And a span that starts at its thread's first event has no zero-length "unknown" part.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from forensics.pipelines.spans import SpanOptions
from forensics.pipelines.trace import analyse_trace_file
from forensics.types.spans import Breakdown

_SWITCH = (
    "{comm:>16}-{pid:<7} [000] d..2.  {ts}: sched_switch: prev_comm={comm} prev_pid={pid} prev_prio=120 "
    "prev_state={state} ==> next_comm={next} next_pid={next_pid} next_prio={prio}"
)


def _switch(ts: str, comm: str, pid: int, state: str, nxt: str, next_pid: int, prio: int = 120) -> str:
    return _SWITCH.format(ts=ts, comm=comm, pid=pid, state=state, next=nxt, next_pid=next_pid, prio=prio)


def _trace(path: Path) -> Path:
    lines = [
        "# tracer: nop",
        _switch("10.000000", "swapper/0", 0, "R", "req", 100),
        _switch("10.010000", "req", 100, "R", "sudo", 200, 110),  # preempted by sudo
        _switch("10.012000", "tcpdump", 200, "S", "req", 100),  # sudo exec'd tcpdump while it ran
        _switch("10.020000", "req", 100, "R", "tcpdump", 200, 110),  # preempted by tcpdump
        _switch("10.022000", "tcpdump", 200, "S", "req", 100),
        _switch("10.030000", "req", 100, "S", "swapper/0", 0),  # blocks
        _switch("10.049000", "swapper/0", 0, "R", "tcpdump", 200, 110),
        "         tcpdump-200     [000] d..3.  10.050000: sched_wakeup: comm=req pid=100 prio=120 target_cpu=000",
        _switch("10.051000", "tcpdump", 200, "S", "req", 100),
        _switch("10.200000", "req", 100, "S", "swapper/0", 0),
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def _slow(tmp_path: Path, start_ns: int) -> Breakdown:
    """The breakdown of request 100 from ``start_ns`` to 10.1 s (a span CSV) over the trace above."""
    trace = _trace(tmp_path / "kernel.txt")
    spans = tmp_path / "spans.csv"
    spans.write_text(f"tid,name,start_ns,end_ns\n100,req,{start_ns},10100000000\n")
    result = analyse_trace_file(str(trace), span_opts=SpanOptions(sources=(str(spans),), kernel_clock="mono"))
    assert result.spans is not None
    (slow,) = result.spans.slow
    return slow


def test_a_preemptor_and_waker_renamed_by_exec_are_named_as_they_were_then(tmp_path: Path) -> None:
    slow = _slow(tmp_path, 10_001_000_000)
    preempted = [p for p in slow.parts if p.what == "preempted"]
    assert [(p.by_tid, p.by_comm, p.by_prio) for p in preempted] == [(200, "sudo", 110), (200, "tcpdump", 110)]
    assert preempted[0].detail.startswith("preempted by sudo (TID 200) prio 110; ran meanwhile on CPU0: sudo")
    assert preempted[1].detail.startswith("preempted by tcpdump (TID 200) prio 110; ran meanwhile on CPU0: tcpdump")
    (blocked,) = [p for p in slow.parts if p.what == "blocked"]
    assert (blocked.by_tid, blocked.by_comm) == (200, "tcpdump")
    assert blocked.detail == "blocked in S, woken by tcpdump (TID 200)"
    assert dict(slow.totals) == pytest.approx(
        {"running": 0.009 + 0.008 + 0.008 + 0.049, "preempted": 0.004, "blocked": 0.020, "runnable": 0.001}, abs=1e-9
    )


def test_a_span_from_the_threads_first_event_has_no_empty_unknown_part(tmp_path: Path) -> None:
    """Was "running 75.000 ms, ..., unknown 0.000 ms": a zero-length part before the switch-in at the span's start."""
    slow = _slow(tmp_path, 10_000_000_000)
    assert [k for k, _v in slow.totals] == ["running", "preempted", "runnable", "blocked"]
    assert slow.parts[0].what == "running" and slow.parts[0].start == 10.0
    assert sum(p.duration for p in slow.parts) == pytest.approx(0.1, abs=1e-9)
