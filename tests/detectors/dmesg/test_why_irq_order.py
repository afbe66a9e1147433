"""lockdep's IRQ-safety report ("HARDIRQ-safe -> HARDIRQ-unsafe lock order detected"), project-written in the format
of kernel/locking/lockdep.c print_bad_irq_dependency() (review ue22 #8): the why names both locks and where each got
its usage, with their lines; lockdep's and KASAN's own frames are not the task's first foreign frame.
"""

from __future__ import annotations

from detectors.dmesg.findings import explain_reports
from detectors.dmesg.frames import is_skipped
from detectors.dmesg.scanner import scan_chunks
from forensics.types.dmesg import ReportWhy, StackKind

IRQ_ORDER = """\
=====================================================
WARNING: HARDIRQ-safe -> HARDIRQ-unsafe lock order detected
6.1.0-kf #1 Not tainted
-----------------------------------------------------
kf-submit/6133 [HC0[0]:SC0[0]:HE0:SE1] is trying to acquire:
ffff888026df22b8 (&kf->fa_lock){.+.+}-{2:2}, at: kf_notify+0x14b/0x460

and this task is already holding:
ffff888022a48498 (&kf->completion_lock){-...}-{2:2}, at: kf_flush_completions+0x4d/0x3a0
which would create a new lock dependency:
 (&kf->completion_lock){-...}-{2:2} -> (&kf->fa_lock){.+.+}-{2:2}

but this new dependency connects a HARDIRQ-irq-safe lock:
 (&kf->completion_lock){-...}-{2:2}

... which became HARDIRQ-irq-safe at:
  lock_acquire+0x29d/0x740
  _raw_spin_lock_irqsave+0x39/0x50
  kf_timeout_fn+0x6f/0x3d0
  __hrtimer_run_queues+0x693/0xea0
  hrtimer_interrupt+0x334/0x940

to a HARDIRQ-irq-unsafe lock:
 (&kf->fa_lock){.+.+}-{2:2}

... which became HARDIRQ-irq-unsafe at:
...
  lock_acquire+0x29d/0x740
  _raw_read_lock+0x5b/0x70
  kf_notify+0x14b/0x460
  pipe_write+0xb7a/0x1ac0

other info that might help us debug this:

 Possible interrupt unsafe locking scenario:

       CPU0                    CPU1
       ----                    ----
  lock(&kf->fa_lock);
                               local_irq_disable();
                               lock(&kf->completion_lock);
                               lock(&kf->fa_lock);
  <Interrupt>
    lock(&kf->completion_lock);

 *** DEADLOCK ***

2 locks held by kf-submit/6133:
 #0: ffff888022a483e8 (&kf->ring_lock){+.+.}-{3:3}, at: kf_enter+0x6c6/0x1e70
 #1: ffff888022a48498 (&kf->completion_lock){-...}-{2:2}, at: kf_flush_completions+0x4d/0x3a0

stack backtrace:
CPU: 0 PID: 6133 Comm: kf-submit Not tainted 6.1.0-kf #1
Call Trace:
 <TASK>
 dump_stack_lvl+0x107/0x163
 check_irq_usage.cold+0x4f5/0x6c8
 __lock_acquire+0x2af6/0x5500
 lock_acquire+0x29d/0x740
 _raw_read_lock+0x5b/0x70
 kf_notify+0x14b/0x460
 kf_commit_ring+0x34e/0xa90
 </TASK>
"""


def _read(text: str) -> tuple[int, ReportWhy]:
    (report,) = scan_chunks([text.encode()])
    return report.start_line, explain_reports([report])[report.start_line]


def _number(text: str, *words: str) -> int:
    return 1 + next(i for i, t in enumerate(text.splitlines()) if all(w in t for w in words))


def test_the_why_names_both_locks_and_where_each_got_its_irq_usage() -> None:
    """Before: "HARDIRQ-safe -> HARDIRQ-unsafe lock order (lockdep) in kf_timeout_fn", no lock named, and the
    inversion put "in" the function where the safe lock became IRQ-safe."""
    _, why = _read(IRQ_ORDER)
    assert why.cause is not None and why.cause.cls == "lock_order"
    held = _number(IRQ_ORDER, "already holding") + 1
    acquiring = _number(IRQ_ORDER, "(&kf->fa_lock)", "at: kf_notify")
    safe_at = _number(IRQ_ORDER, "kf_timeout_fn+")
    unsafe_at = _number(IRQ_ORDER, "  kf_notify+")
    assert why.cause.statement == (
        f"HARDIRQ-safe -> HARDIRQ-unsafe lock order (lockdep): holding &kf->completion_lock (line {held}), kf-submit "
        f"takes &kf->fa_lock in kf_notify (line {acquiring}); &kf->completion_lock is HARDIRQ-safe (taken in an "
        f"interrupt in kf_timeout_fn, line {safe_at}) and &kf->fa_lock HARDIRQ-unsafe (taken with that interrupt "
        f"enabled in kf_notify, line {unsafe_at})"
    )


def test_a_log_that_lost_the_safe_lock_s_line_reads_it_from_the_dependencies_heading() -> None:
    # A console that dropped "and this task is already holding:" up to the "connects" lines (corpus 558's shape):
    # the safe lock from "the dependencies between HARDIRQ-irq-safe lock and the holding lock:", the held one from
    # the task's locks list.
    cut = (
        IRQ_ORDER[: IRQ_ORDER.index("and this task")]
        + IRQ_ORDER[IRQ_ORDER.index("... which became HARDIRQ-irq-safe") :]
    )
    cut = cut.replace(
        "stack backtrace:",
        "the dependencies between HARDIRQ-irq-safe lock and the holding lock:\n"
        "-> (&kf->completion_lock){-...}-{2:2} {\n   IN-HARDIRQ-W at:\n\nstack backtrace:",
    )
    _, why = _read(cut)
    assert why.cause is not None
    held = _number(cut, "#1:", "&kf->completion_lock")
    assert f"holding &kf->completion_lock (line {held}), kf-submit takes &kf->fa_lock" in why.cause.statement
    assert "&kf->completion_lock is HARDIRQ-safe (taken in an interrupt in kf_timeout_fn" in why.cause.statement


def test_lockdep_s_and_kasan_s_own_frames_are_not_the_first_foreign_frame() -> None:
    """Before: "call-trace: check_irq_usage" (lockdep's checker) and "end_report" (KASAN's reporter)."""
    _, why = _read(IRQ_ORDER)
    trace = next(s for s in why.stacks if s.kind is StackKind.CALL_TRACE)
    assert trace.first_foreign is not None and trace.first_foreign.function == "kf_notify"
    for name in ("check_irq_usage", "check_usage", "print_bad_irq_dependency", "end_report", "start_report",
                 "check_panic_on_warn"):  # fmt: skip
        assert is_skipped((), name), name
    assert not is_skipped((), "kf_notify")
