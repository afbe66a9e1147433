"""A report lists no stack another task printed amid its lines: an event's (an allocation failure's) stack is the
event's, and a stack whose task cannot be told is said unknown.

Corpus log 206's shape (test_alloc_failure_events.py's ``_RCU_HEAD``): pid 5955's vmalloc failure printed amid pid
5953's suspicious-RCU warning, without caller ids.  The failure is its own event, yet the warning's why listed the
failure's call trace (dump_stack, warn_alloc, __vmalloc_node_range, ..., kf_table_alloc) among its stacks.
"""

from __future__ import annotations

from pathlib import Path

from forensics.model import NotAvailable
from forensics.pipelines.dmesg import analyse_logs
from forensics.types.dmesg import KernelReport, ReportWhy
from tests.detectors.dmesg.test_alloc_failure_events import _RCU_HEAD, _RCU_OWN_STACK, _log


def _warning(tmp_path: Path, bodies: list[str]) -> tuple[KernelReport, ReportWhy]:
    log = tmp_path / "kern.log"
    log.write_bytes(_log(bodies))
    (source,) = analyse_logs([str(log)], live=False).sources
    assert [e.title for e in source.events] == ["vmalloc: allocation failure in kf_table_alloc"]
    (warning,) = source.reports
    return warning, source.whys[warning.start_line]


def _said(why: ReportWhy) -> list[str]:
    return [f.value.reason for f in why.facts if f.name == "call-trace stack" and isinstance(f.value, NotAvailable)]


def test_the_stack_of_the_failure_s_task_is_not_the_warning_s(tmp_path: Path) -> None:
    _, why = _warning(tmp_path, [*_RCU_HEAD, *_RCU_OWN_STACK])
    # Before: two call traces, the first the failure's (warn_alloc ... kf_table_alloc).
    functions = [[f.function for f in s.frames] for s in why.stacks]
    assert functions == [["dump_stack", "lockdep_rcu_suspicious", "___might_sleep", "__might_sleep",
                          "kmem_cache_alloc_trace", "kf_conn_alloc", "kf_sendmsg"]]  # fmt: skip
    header = _RCU_HEAD.index("CPU: 0 PID: 5955 Comm: kf-prog Not tainted 4.15.0+ #222") + 1
    assert _said(why) == [
        f"another task's: its dump_stack() header (line {header}) names pid 5955, whose allocation failure (line 4) "
        "printed it amid this report's lines"
    ]


def test_a_stack_under_both_tasks_headers_is_unknown(tmp_path: Path) -> None:
    # The warning's own dump_stack() header printed between the failure's and the failure's call trace: which task's
    # the trace is cannot be told by its header.  Before: listed as the warning's.
    at = _RCU_HEAD.index("CPU: 0 PID: 5955 Comm: kf-prog Not tainted 4.15.0+ #222") + 1
    head = [*_RCU_HEAD[:at], _RCU_OWN_STACK[0], *_RCU_HEAD[at:]]
    _, why = _warning(tmp_path, [*head, *_RCU_OWN_STACK[1:]])
    assert not any("warn_alloc" in [f.function for f in s.frames] for s in why.stacks), why.stacks
    assert _said(why) == ["unknown (interleaved with pid 5955's allocation failure, line 4)"]


def test_a_warning_of_the_failing_task_keeps_its_stacks(tmp_path: Path) -> None:
    # The report's header names the failure's own task: the stack is that task's, the report's own.
    bodies = [*_RCU_HEAD, *_RCU_OWN_STACK]
    bodies[1] = "WARNING: CPU: 0 PID: 5955 at mm/vmalloc.c:2 kf_check+0x1/0x2"
    _, why = _warning(tmp_path, bodies)
    assert not _said(why)
    assert any("warn_alloc" in [f.function for f in s.frames] for s in why.stacks)
