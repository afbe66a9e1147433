"""A khungtaskd pass whose tasks queue behind one hung task that holds their lock (review ue22 #2, #11).

The log is written here in the kernel's format (kernel/hung_task.c, lockdep's debug_show_all_locks()): one task
blocked in synchronize_rcu_expedited() while it holds rtnl_mutex, two hung tasks waiting in __mutex_lock for it, a
fourth task (not reported) listed with rtnl_mutex too, then hung_task_panic's panic.  lockdep lists a lock as held
from the moment it is requested: the waiters' entries are the lock they wait for, the holder is the one hung task
whose stack is past the lock.
"""

from __future__ import annotations

from detectors.dmesg.findings import explain_reports, group_reports
from detectors.dmesg.scanner import scan_chunks
from forensics.model import Severity
from forensics.pipelines.dmesg import analyse_log_bytes
from forensics.types.dmesg import ReportWhy, group_judgement
from tests.detectors.dmesg.why_logs import hung_report

_HOLDER_FRAMES = (
    " synchronize_rcu_expedited+0x57f/0x5f0 kernel/rcu/tree_exp.h:990\n"
    " synchronize_net+0x3b/0x60 net/core/dev.c:11000\n"
    " rollback_registered_many+0xb2c/0xfc0 net/core/dev.c:8800\n"
    " cleanup_net+0x4e2/0xa60 net/core/net_namespace.c:600\n"
)
_WAITER_FRAMES = " rtnl_lock+0x17/0x20 net/core/rtnetlink.c:80\n do_setlink+0x10/0x200 net/core/rtnetlink.c:900\n"
CASCADE = (
    hung_report("kworker/u4:5", 9381, _HOLDER_FRAMES, wait="")
    + hung_report("syz.1.2", 77, _WAITER_FRAMES)
    + hung_report("syz.3.4", 78, _WAITER_FRAMES)
    + """
Showing all locks held in the system:
4 locks held by kworker/u4:5/9381:
 #0: ffff8880a9a1ed28 ((wq_completion)netns){+.+.}-{0:0}, at: process_one_work+0x88b/0x1740
 #1: ffff88806a60fdc0 (net_cleanup_work){+.+.}-{0:0}, at: process_one_work+0x8c1/0x1740
 #2: ffffffff8998ae88 (pernet_ops_rwsem){++++}-{4:4}, at: cleanup_net+0xae/0xa60
 #3: ffffffff899980e0 (rtnl_mutex){+.+.}-{4:4}, at: rtnl_lock+0x17/0x20
3 locks held by kworker/0:11/804:
 #0: ffff88809c339528 ((wq_completion)ipv6_addrconf){+.+.}-{0:0}, at: process_one_work+0x88b/0x1740
 #1: ffff888075fe7dc0 ((addr_chk_work).work){+.+.}-{0:0}, at: process_one_work+0x8c1/0x1740
 #2: ffffffff899980e0 (rtnl_mutex){+.+.}-{4:4}, at: rtnl_lock+0x17/0x20
1 lock held by syz.1.2/77:
 #0: ffffffff899980e0 (rtnl_mutex){+.+.}-{4:4}, at: rtnl_lock+0x17/0x20
1 lock held by syz.3.4/78:
 #0: ffffffff899980e0 (rtnl_mutex){+.+.}-{4:4}, at: rtnl_lock+0x17/0x20

=============================================

Kernel panic - not syncing: hung_task: blocked tasks
CPU: 1 PID: 31 Comm: khungtaskd Not tainted 6.16.0 #0
Kernel Offset: disabled
"""
)
LINES = CASCADE.splitlines()


def _line(*words: str) -> int:
    """The number of the first line of CASCADE holding every one of ``words``."""
    return 1 + next(i for i, t in enumerate(LINES) if all(w in t for w in words))


def _read() -> list[ReportWhy]:
    reports = list(scan_chunks([CASCADE.encode()]))
    whys = explain_reports(reports)
    return [whys[r.start_line] for r in reports]


def test_the_hung_task_past_the_lock_the_others_wait_for_is_named_its_holder() -> None:
    """Before: two tasks (kworker/u4:5 and kworker/0:11) listed rtnl_mutex beside the waiters, so no holder was
    named, and kworker/u4:5's cause was "waited 143 s for an RCU grace period" at 0.50 like the others'."""
    holder, first, second = _read()
    held, blocked = _line("kworker/u4:5/9381") + 4, _line("synchronize_rcu_expedited+")
    assert "rtnl_mutex" in LINES[held - 1]
    assert holder.cause is not None and holder.cause.confidence == 0.8
    assert holder.cause.statement.startswith(
        f"kworker/u4:5 (pid 9381) holds rtnl_mutex (line {held}) and is itself blocked in synchronize_rcu_expedited "
        f"(line {blocked}) for 143 s, waiting for an RCU grace period in"
    )
    # kworker/0:11 is listed with the mutex but not reported: it waits too (a mutex has one holder).
    assert holder.cause.statement.endswith("3 tasks wait behind it (2 of them reported hung)")
    assert {f.name: f.value for f in holder.facts}["holds lock"] == "rtnl_mutex"
    for waiter in (first, second):
        facts = {f.name: f.value for f in waiter.facts}
        assert (facts["waits for lock"], facts["lock holder"], facts["lock holder pid"]) == (
            "rtnl_mutex",
            "kworker/u4:5",
            9381,
        )
        assert waiter.cause is not None and waiter.cause.confidence < holder.cause.confidence


def test_a_waiter_whose_entry_is_not_a_frame_of_its_stack_is_no_holder() -> None:
    # syz.3.4's entry names another offset than its stack's rtnl_lock frame: which entry it waits for is not read,
    # but its stack is in __mutex_lock, so it is no task past the lock; kworker/u4:5 stays the one holder.
    text = CASCADE.replace(
        "1 lock held by syz.3.4/78:\n #0: ffffffff899980e0 (rtnl_mutex){+.+.}-{4:4}, at: rtnl_lock+0x17/0x20",
        "1 lock held by syz.3.4/78:\n #0: ffffffff899980e0 (rtnl_mutex){+.+.}-{4:4}, at: rtnl_lock+0x1c/0x20",
    )
    assert text != CASCADE
    reports = list(scan_chunks([text.encode()]))
    whys = explain_reports(reports)
    holder, first, second = (whys[r.start_line] for r in reports)
    assert {f.name: f.value for f in first.facts}["lock holder"] == "kworker/u4:5"
    assert "holds lock" not in {f.name for f in second.facts}
    assert holder.cause is not None and holder.cause.statement.endswith("(1 of them reported hung)")


def test_a_hung_task_in_a_lock_wait_is_never_the_holder_even_when_alone_beside_the_waiter() -> None:
    # Without the holder's report and kworker/0:11, syz.3.4 (its entry at another offset than its stack's frame, so
    # not read as the lock it waits for) is the only other task listed with rtnl_mutex: its stack is in
    # __mutex_lock, a waiter, not the holder.  Before, the one other task listed was named the holder.
    text = CASCADE[CASCADE.index("INFO: task syz.1.2") :]
    text = text.replace(
        "1 lock held by syz.3.4/78:\n #0: ffffffff899980e0 (rtnl_mutex){+.+.}-{4:4}, at: rtnl_lock+0x17/0x20",
        "1 lock held by syz.3.4/78:\n #0: ffffffff899980e0 (rtnl_mutex){+.+.}-{4:4}, at: rtnl_lock+0x1c/0x20",
    )
    for gone in (" #3: ffffffff899980e0 (rtnl_mutex){+.+.}-{4:4}, at: rtnl_lock+0x17/0x20\n",
                 " #2: ffffffff899980e0 (rtnl_mutex){+.+.}-{4:4}, at: rtnl_lock+0x17/0x20\n"):  # fmt: skip
        assert gone in text
        text = text.replace(gone, "")
    reports = list(scan_chunks([text.encode()]))
    whys = explain_reports(reports)
    first = {f.name: f.value for f in whys[reports[0].start_line].facts}
    assert first["waits for lock"] == "rtnl_mutex"
    assert "lock holder" not in first
    assert all("holds lock" not in {f.name for f in whys[r.start_line].facts} for r in reports)


def test_a_hung_task_panic_is_every_task_of_the_pass_s_and_the_holder_ranks_first() -> None:
    """Before: only the group whose report printed the panic was critical (syz.3.4's, the last printed): the holder's
    report was high, ranked below its waiters, and every hypothesis said "echo w > /proc/sysrq-trigger" on a machine
    the same finding said had gone down."""
    reports = list(scan_chunks([CASCADE.encode()]))
    panic = _line("Kernel panic - not syncing")
    for group in group_reports(reports):
        severity, baseline = group_judgement(group)
        assert severity is Severity.CRITICAL
        assert baseline.source.endswith(f"line {panic}")
    result = analyse_log_bytes("cascade.log", CASCADE.encode())
    first = result.incident.sorted_findings()[0]
    assert first.title == "INFO: task hung in synchronize_rcu"
    assert f"then the kernel panicked (line {panic}: hung_task: blocked tasks)" in first.summary
    top = result.hypotheses[0]
    assert top.statement.startswith("kworker/u4:5 (pid 9381) holds rtnl_mutex")
    # The machine went down: every confirm step reads the dump, as the finding's next step says.
    assert top.next_command.startswith("crash> bt 9381")
    assert all("sysrq-trigger" not in h.next_command for h in result.hypotheses)
    assert all("no live command" in f.next_steps[0] for f in result.incident.findings)


def test_the_hang_s_length_is_the_timeline_s_figure_not_its_reports_printing_span() -> None:
    """Before: "for 1.0 s (blocked for more than 143 s when reported)": the span over which the waiters' two reports
    were printed, where a reader reads how long the hang lasted."""
    from detectors.incident.timeline import build_timeline, narrative
    from forensics.model import NotAvailable

    timed = "\n".join(f"[  {100 + i / 1000:.6f}] {t}" for i, t in enumerate(LINES))
    second = _line("INFO: task syz.3.4") - 1
    timed = timed.replace(f"[  {100 + second / 1000:.6f}]", f"[  {101 + second / 1000:.6f}]")
    # (syz.3.4 is syz.1.2's signature: one group of two reports, 1.0 s apart, then the list and the panic)
    result = analyse_log_bytes("cascade.log", timed.replace("syz.3.4", "syz.1.2").encode())
    events = build_timeline(result.incident.findings, NotAvailable("no boot time"))
    waiters = next(e for e in events if e.title == "INFO: task hung in rtnl_lock")
    assert waiters.duration_text() == "blocked for more than 143 s when reported; its reports printed over 1.0 s"
    assert (
        "blocked for more than 143 s when reported; its reports printed over 1.0 s): INFO: task hung in rtnl_lock"
        in (narrative(events))
    )
