"""The rules both scheduling engines share (detectors.sched.rules): dispatch table, kinds, rule functions."""

from __future__ import annotations

from detectors.sched import engine_kernels, engine_layout, rules
from detectors.sched.analyzer import SchedAnalyzer
from forensics.types.sched import Thresholds
from forensics.types.trace import Kind


def test_handlers_cover_every_event_kind_in_dispatch_order() -> None:
    """Both engines dispatch on ``kind <= last`` in table order: the ranges must follow each other (LOST, taken
    before the window check, is the one kind outside the table, between sched_process_exit and
    sched_migrate_task)."""
    firsts = [first for first, _last, _method in rules.HANDLERS]
    lasts = [last for _first, last, _method in rules.HANDLERS]
    assert firsts[0] == rules.SWITCH and lasts[-1] == rules.MIGRATE == int(Kind.MIGRATE)
    assert all(
        nxt == (last + 2 if last + 1 == rules.LOST else last + 1) for last, nxt in zip(lasts, firsts[1:], strict=False)
    )
    methods = ["_switch", "_wake", "_irq", "_softirq", "_work", "_offtime", "_exit", "_migrate"]
    assert [m for _f, _l, m in rules.HANDLERS] == methods
    assert all(callable(getattr(SchedAnalyzer, method)) for _f, _l, method in rules.HANDLERS)
    assert rules.PROCESS_EXIT < rules.LOST == int(Kind.LOST) < rules.MIGRATE


def test_offtime_toggles() -> None:
    pairs = [(rules.IRQ_DISABLE, rules.IRQ_ENABLE), (rules.PREEMPT_DISABLE, rules.PREEMPT_ENABLE)]
    for index, (disable, enable) in enumerate(pairs):
        assert rules.off_base(disable) == rules.off_base(enable) == disable
        assert rules.off_index(disable) == rules.off_index(enable) == index
        assert rules.opens_offtime(disable) and not rules.opens_offtime(enable)


def test_hog_and_offtime_limits() -> None:
    assert not rules.is_hog(0.005, 0.005) and rules.is_hog(0.0050001, 0.005)  # strictly longer
    assert rules.keeps_offtime(0.001, 0.001) and not rules.keeps_offtime(0.0009, 0.001)  # at least as long


def test_the_compiled_engine_uses_the_same_rules() -> None:
    """The rule functions compiled by engine_kernels give what the Python ones give; the sizes are the same."""
    for run, limit in ((0.005, 0.005), (0.006, 0.005), (0.0, 0.0), (1.0, 0.0)):
        assert engine_kernels.is_hog(run, limit) == rules.is_hog(run, limit)
        assert engine_kernels.keeps_offtime(run, limit) == rules.keeps_offtime(run, limit)
    for kind in range(rules.IRQ_DISABLE, rules.PREEMPT_ENABLE + 1):
        assert engine_kernels.off_base(kind) == rules.off_base(kind)
        assert engine_kernels.off_index(kind) == rules.off_index(kind)
        assert engine_kernels.opens_offtime(kind) == rules.opens_offtime(kind)
    for count, oldest, ts in ((511, 0.0, 10.0), (512, 7.9, 10.0), (512, 8.0, 10.0), (rules.RECENT_MAX, 9.9, 10.0)):
        assert engine_kernels.drops_run(count, oldest, ts) == rules.drops_run(count, oldest, ts)
    assert engine_layout.RING == rules.RECENT_RUNS  # the rings' first depth: they deepen up to rules.RECENT_MAX


def test_default_thresholds_are_the_rules() -> None:
    t = Thresholds()
    assert (t.hog, t.wakeup_latency, t.irq, t.softirq, t.dstate, t.offtime) == (
        rules.HOG,
        rules.WAKEUP_LATENCY,
        rules.IRQ,
        rules.SOFTIRQ,
        rules.DSTATE,
        rules.OFFTIME,
    )
