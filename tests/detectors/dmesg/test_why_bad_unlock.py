"""A bad unlock balance says which lock was released that the task did not hold, where, and what it did hold.

A reviewer found no cause for lockdep's "bad unlock balance detected!" reports although each names the task, the
lock it released, where, and the locks it held (kernel/locking/lockdep.c print_unlock_imbalance_bug()).  The logs
here are written as lockdep prints them, in its older ("[ BUG: ... ]") and newer ("WARNING: ...") headers.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.detectors.dmesg.why_logs import offset, only_report_why

REPORT = """\
[  264.300000] =====================================
[  264.309846] {header}
[  264.318945] 6.1.0-kf #1 Not tainted
[  264.318946] -------------------------------------
[  264.323751] kf-test/1081 is trying to release lock (&kf->lock) at:
[  264.330694] [<ffffffff834dea24>] kf_seq_stop+0xe4/0x140
[  264.336540] but there are no more locks to release!
[  264.341515]
[  264.341515] other info that might help us debug this:
{held}[  264.360901]
[  264.360901] stack backtrace:
[  264.365364] CPU: 1 PID: 1081 Comm: kf-test Not tainted 6.1.0-kf #1
[  264.406014] Call Trace:
[  264.408566]  dump_stack_lvl+0xc1/0x128
[  264.410000]  lock_release+0x4d1/0x6a0
[  264.411000]  kf_seq_stop+0xe4/0x140
[  264.412000]  seq_read_iter+0x3c1/0x1090
[  264.413000]  vfs_read+0x2c9/0x4a0
"""
HELD = """\
[  264.348145] 1 lock held by kf-test/1081:
[  264.352688]  #0: ffff8801c2a13e48 (&p->lock){+.+.}-{3:3}, at: seq_read_iter+0xdd/0x1290
"""


@pytest.mark.parametrize("header", ["[ BUG: bad unlock balance detected! ]", "WARNING: bad unlock balance detected!"])
def test_a_bad_unlock_names_the_lock_released_and_the_locks_held(tmp_path: Path, header: str) -> None:
    text = REPORT.format(header=header, held=HELD)
    title, why = only_report_why(tmp_path, text)
    assert title in {"WARNING: bad unlock balance in kf_seq_stop", "BUG: bad unlock balance in kf_seq_stop"}
    assert why.cause is not None
    assert why.cause.statement == (
        "bad unlock balance (lockdep): kf-test released &kf->lock in kf_seq_stop+0xe4/0x140, a lock it did not hold "
        "(lockdep found no more locks to release; it held &p->lock): an unlock twice, on a path that never took it, "
        "or of a lock another task took"
    )
    assert why.cause_at == (offset(text, "bad unlock balance", "is trying to release"),)


def test_without_a_held_list_it_names_none(tmp_path: Path) -> None:
    text = REPORT.format(
        header="WARNING: bad unlock balance detected!", held="[  264.348145] no locks held by kf-test/1081.\n"
    )
    _, why = only_report_why(tmp_path, text)
    assert why.cause is not None
    assert "(lockdep found no more locks to release): " in why.cause.statement
