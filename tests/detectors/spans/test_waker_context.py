"""Who woke a blocked span thread: the waking line's own context, not a handler whose exit the trace never saw.

Review 11 #1: an ftrace instance starts with ``tracing_on=1`` and its events are enabled one after another, so
a ``softirq_entry`` can be traced before ``softirq_exit`` is: its exit is missing.  The table's pairing then
kept that handler open to the end of the trace, and every later wakeup on its CPU was "woken by softirq 9",
although the waking lines said ``d..2.`` (task context) and named the lock holder.  Here the project's own
ftrace text: request 100 blocks on CPU0 and is woken from CPU1 by TID 200, after one unpaired
``softirq_entry`` and a context switch on CPU1.
"""

from __future__ import annotations

import re
from pathlib import Path

from forensics.pipelines.spans import SpanOptions
from forensics.pipelines.trace import analyse_trace_file
from forensics.types.spans import Part

_SW = "sched_switch: prev_comm={} prev_pid={} prev_prio=120 prev_state={} ==> next_comm={} next_pid={} next_prio=120"


def _lines(waking_flags: str, softirq_around_waking: bool) -> list[str]:
    wake = [
        f"          writer-200     [001] {waking_flags}   100.010000: sched_waking: comm=req pid=100 prio=120 "
        "target_cpu=000"
    ]
    if softirq_around_waking:  # a real softirq, entry and exit traced, in which the wakeup happens
        wake = [
            "          writer-200     [001] ..s1.   100.009900: softirq_entry: vec=1 [action=TIMER]",
            *wake,
            "          writer-200     [001] ..s1.   100.010050: softirq_exit: vec=1 [action=TIMER]",
        ]
    return [
        "# tracer: nop",
        "          writer-200     [001] .Ns..   100.000000: softirq_entry: vec=9 [action=RCU]",  # its exit not traced
        "          writer-200     [001] d..2.   100.000100: " + _SW.format("writer", 200, "R", "other", 300),
        "           other-300     [001] d..2.   100.000200: " + _SW.format("other", 300, "S", "writer", 200),
        "             req-100     [000] d..2.   100.000300: " + _SW.format("swapper/0", 0, "R", "req", 100),
        "             req-100     [000] d..2.   100.001100: " + _SW.format("req", 100, "S", "swapper/0", 0),
        *wake,
        "          <idle>-0       [000] d..2.   100.010100: " + _SW.format("swapper/0", 0, "R", "req", 100),
        "          writer-200     [001] d..2.   100.012000: " + _SW.format("writer", 200, "S", "swapper/1", 0),
    ]


def _blocked(tmp_path: Path, lines: list[str]) -> Part:
    trace = tmp_path / "kernel.txt"
    trace.write_text("\n".join(lines) + "\n")
    spans = tmp_path / "spans.csv"
    spans.write_text("tid,name,start_ns,end_ns\n100,req,100001000000,100011000000\n")
    result = analyse_trace_file(str(trace), span_opts=SpanOptions(sources=(str(spans),), kernel_clock="mono"))
    assert result.spans is not None
    (slow,) = result.spans.slow
    (blocked,) = [p for p in slow.parts if p.what == "blocked"]
    return blocked


def test_a_task_context_waking_line_names_its_task_after_an_unpaired_softirq_entry(tmp_path: Path) -> None:
    blocked = _blocked(tmp_path, _lines("d..2.", softirq_around_waking=False))
    assert (blocked.detail, blocked.by_tid) == ("blocked in S, woken by writer (TID 200)", 200)
    assert any("sched_waking: comm=req pid=100" in r.text for r in blocked.refs)  # the waking line is cited


def test_without_latency_flags_the_cpus_context_switch_closes_the_unpaired_entry(tmp_path: Path) -> None:
    """A trace without the flags field (trace-cmd report's default): the context switch on CPU1 after the entry
    says the handler was over (a handler does not span a switch of its CPU)."""
    lines = [re.sub(r"(\[00[01]\]) \S+ ", r"\1 ", line) for line in _lines("d..2.", softirq_around_waking=False)]
    assert "d..2." not in "\n".join(lines)
    blocked = _blocked(tmp_path, lines)
    assert (blocked.detail, blocked.by_tid) == ("blocked in S, woken by writer (TID 200)", 200)


def test_a_wakeup_inside_a_traced_softirq_names_that_softirq(tmp_path: Path) -> None:
    blocked = _blocked(tmp_path, _lines("..s2.", softirq_around_waking=True))
    assert (blocked.detail, blocked.by_tid) == ("blocked in S, woken by softirq 1 on CPU1", None)
    assert any("softirq_entry: vec=1" in r.text for r in blocked.refs)


def test_a_softirq_flag_with_no_traced_entry_says_a_softirq_interrupting_the_task(tmp_path: Path) -> None:
    blocked = _blocked(tmp_path, _lines("..s2.", softirq_around_waking=False))
    assert blocked.detail == "blocked in S, woken by a softirq on CPU1 (interrupting writer-200)"
