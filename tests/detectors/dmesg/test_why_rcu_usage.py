"""Why lockdep's RCU check failed: the check a "suspicious RCU usage" report names, and what the locks held mean.

The syzkaller corpus holds 9 such reports with their check line (rcu_dereference_check(), rcu_dereference_protected(),
"Illegal context switch in RCU read-side critical section") and none of them had a why: the check's FILE:LINE and
message, and whether an RCU reader was in the held-locks list, say which bug it is.  A dereference without any reader
held was made outside rcu_read_lock(); a context switch with rcu_read_lock held is a sleep inside the section.  The
logs are written as kernel/locking/lockdep.c lockdep_rcu_suspicious() prints them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from detectors.dmesg.rcuusage import failed_check, is_reader
from forensics.model import NotAvailable
from tests.detectors.dmesg.why_logs import offset, only_report_why

HEADER = "suspicious RCU usage"

DEREFERENCE_NO_LOCKS = """\
[   52.100000][ T5101] =============================
[   52.100100][ T5101] WARNING: suspicious RCU usage
[   52.100200][ T5101] 6.1.0-syzkaller #0 Not tainted
[   52.100300][ T5101] -----------------------------
[   52.100400][ T5101] net/sched/cls_api.c:1841 suspicious rcu_dereference_check() usage!
[   52.100500][ T5101]
[   52.100500][ T5101] other info that might help us debug this:
[   52.100500][ T5101]
[   52.100600][ T5101]
[   52.100600][ T5101] rcu_scheduler_active = 2, debug_locks = 1
[   52.100700][ T5101] no locks held by syz-executor.3/5101.
[   52.100800][ T5101]
[   52.100800][ T5101] stack backtrace:
[   52.100900][ T5101] CPU: 1 PID: 5101 Comm: syz-executor.3 Not tainted 6.1.0-syzkaller #0
[   52.101000][ T5101] Call Trace:
[   52.101100][ T5101]  <TASK>
[   52.101200][ T5101]  dump_stack_lvl+0xd1/0x138
[   52.101300][ T5101]  lockdep_rcu_suspicious+0x220/0x340
[   52.101400][ T5101]  tcf_chain_tp_find+0x2f1/0x3c0
[   52.101500][ T5101]  tc_new_tfilter+0x8a5/0x2270
[   52.101600][ T5101]  rtnetlink_rcv_msg+0x43d/0xd50
"""

SLEEP_UNDER_READER = """\
[   24.271604] =============================
[   24.275791] WARNING: suspicious RCU usage
[   24.279952] 5.4.0 #10 Not tainted
[   24.283625] -----------------------------
[   24.287794] ./include/linux/rcupdate.h:272 Illegal context switch in RCU read-side critical section!
[   24.297101]
[   24.297101] other info that might help us debug this:
[   24.297101]
[   24.305269]
[   24.305269] rcu_scheduler_active = 2, debug_locks = 1
[   24.311963] 2 locks held by kworker/0:1/62:
[   24.316826]  #0: ffff88813b019748 ((wq_completion)events){+.+.}, at: process_one_work+0x1d7/0x5e0
[   24.326332]  #1: ffffffff82065d20 (rcu_read_lock){....}, at: sock_map_free+0x5/0x170
[   24.345854]
[   24.345854] stack backtrace:
[   24.350373] CPU: 0 PID: 62 Comm: kworker/0:1 Not tainted 5.4.0 #10
[   24.366690] Call Trace:
[   24.369257]  dump_stack+0x194/0x257
[   24.377529]  lockdep_rcu_suspicious+0x123/0x170
[   24.382181]  ___might_sleep+0x385/0x470
[   24.382300]  __might_sleep+0x95/0x190
[   24.382400]  lock_sock_nested+0x2a/0xb0
[   24.382500]  sock_map_free+0x6b/0x170
[   24.382600]  process_one_work+0x2a3/0x5e0
"""

PROTECTED_WITH_READER = """\
[   91.193205] =============================
[   91.193207] WARNING: suspicious RCU usage
[   91.193218] 5.10.0 #284 Not tainted
[   91.193220] -----------------------------
[   91.193225] net/tipc/bearer.c:177 suspicious rcu_dereference_protected() usage!
[   91.193227]
[   91.193227] other info that might help us debug this:
[   91.193227]
[   91.193231]
[   91.193231] rcu_scheduler_active = 2, debug_locks = 1
[   91.193234] 2 locks held by syz-executor4/13218:
[   91.193237]  #0: ffffffff8d6b1a50 (cb_lock){++++}-{3:3}, at: genl_rcv+0x19/0x40
[   91.193262]  #1: ffffffff8b77c4e0 (rcu_read_lock){....}-{1:2}, at: tipc_nl_bearer_get+0x5c/0x2a0
[   91.193278]
[   91.193278] stack backtrace:
[   91.193285] CPU: 1 PID: 13218 Comm: syz-executor4 Not tainted 5.10.0 #284
[   91.193293] Call Trace:
[   91.193307]  dump_stack+0x194/0x257
[   91.193350]  lockdep_rcu_suspicious+0x123/0x170
[   91.193366]  tipc_bearer_find+0x2b4/0x3b0
[   91.193400]  tipc_nl_bearer_get+0x8e/0x2a0
"""

IDLE_CPU = """\
[    5.308588] =============================
[    5.308593] WARNING: suspicious RCU usage
[    5.320052] 5.9.0-rc3 #1 Not tainted
[    5.320057] -----------------------------
[    5.320063] include/trace/events/lock.h:37 suspicious rcu_dereference_check() usage!
[    5.320068]
[    5.320068] other info that might help us debug this:
[    5.320068]
[    5.320074]
[    5.320074] rcu_scheduler_active = 2, debug_locks = 1
[    5.320078] RCU used illegally from extended quiescent state!
[    5.320084] no locks held by swapper/0/0.
[    5.320089]
[    5.320089] stack backtrace:
[    5.320098] CPU: 0 PID: 0 Comm: swapper/0 Not tainted 5.9.0-rc3 #1
[    5.346452] Call trace:
[    5.346463]  dump_backtrace+0x0/0x1f8
[    5.346471]  show_stack+0x2c/0x38
[    5.346480]  dump_stack+0xec/0x15c
[    5.346490]  lockdep_rcu_suspicious+0xd4/0xf8
[    5.346499]  lock_acquire+0x3d0/0x440
[    5.346510]  _raw_spin_lock_irqsave+0x80/0xb0
[    5.413118]  __pm_runtime_suspend+0x34/0x1d0
[    5.417457]  psci_enter_domain_idle_state+0x4c/0xb0
"""


@pytest.mark.parametrize(
    ("text", "title", "statement", "reader", "reader_line", "cause_line"),
    [
        (
            DEREFERENCE_NO_LOCKS,
            "WARNING: suspicious RCU usage in tcf_chain_tp_find",
            "tcf_chain_tp_find dereferenced the pointer outside any RCU read-side critical section and without the "
            "lock the check's condition names: no locks held, none an RCU reader; lockdep's RCU check at "
            "net/sched/cls_api.c:1841: suspicious rcu_dereference_check() usage",
            "none",
            "no locks held by",
            "usage!",
        ),
        (
            SLEEP_UNDER_READER,
            "WARNING: suspicious RCU usage in lock_sock_nested",
            "sock_map_free calls lock_sock_nested, which may sleep, inside an RCU read-side critical section: "
            "rcu_read_lock is held, taken at sock_map_free+0x5/0x170; lockdep's RCU check at "
            "./include/linux/rcupdate.h:272: Illegal context switch in RCU read-side critical section",
            "rcu_read_lock, taken at sock_map_free+0x5/0x170",
            "#1: ffffffff82065d20 (rcu_read_lock)",
            "critical section!",
        ),
        (
            PROTECTED_WITH_READER,
            "WARNING: suspicious RCU usage in tipc_bearer_find",
            "rcu_dereference_protected() in tipc_bearer_find without the update-side lock its condition names (2 "
            "locks held (cb_lock, rcu_read_lock)); lockdep's RCU check at net/tipc/bearer.c:177: suspicious "
            "rcu_dereference_protected() usage: the RCU reader held (rcu_read_lock) does not satisfy it, only the "
            "updaters' lock",
            "rcu_read_lock, taken at tipc_nl_bearer_get+0x5c/0x2a0",
            "(rcu_read_lock){",
            "usage!",
        ),
        (
            IDLE_CPU,
            "WARNING: suspicious RCU usage in __pm_runtime_suspend",
            "lockdep's RCU check at include/trace/events/lock.h:37: suspicious rcu_dereference_check() usage ran on "
            "a CPU RCU was not watching (RCU used illegally from extended quiescent state): RCU ignores a CPU that "
            "is idle or in an extended quiescent state, so no read-side section protects anything there; the code "
            "ran from the idle loop or an entry path before RCU watched",
            "none",
            "no locks held by",
            "RCU used illegally",  # the reason, whatever the check
        ),
    ],
    ids=["dereference-no-locks", "sleep-under-reader", "protected-with-reader", "extended-quiescent-state"],
)
def test_the_why_names_the_failed_check_and_whether_a_reader_was_held(
    tmp_path: Path, text: str, title: str, statement: str, reader: str, reader_line: str, cause_line: str
) -> None:
    said_title, why = only_report_why(tmp_path, text)
    assert said_title == title
    assert why.cls == "rcu-usage"
    assert why.cause is not None and why.cause.cls == "rcu_usage"
    assert why.cause.statement == statement
    facts = {f.name: f for f in why.facts}
    # Each value is cited at the line that prints it.
    assert facts["RCU check at"].at == offset(text, HEADER, "usage!" if "usage!" in text else "critical section!")
    assert facts["rcu_scheduler_active"].at == offset(text, HEADER, "rcu_scheduler_active")
    assert (facts["RCU reader held"].value, facts["RCU reader held"].at) == (reader, offset(text, HEADER, reader_line))
    # Every line the statement rests on: where the check failed (or RCU was not watching), and the reader line.
    assert why.cause_at[0] == min(why.cause_at)
    assert offset(text, HEADER, cause_line) in why.cause_at
    assert facts["RCU reader held"].at in why.cause_at


def test_lockdep_off_is_said_to_make_the_list_doubtful(tmp_path: Path) -> None:
    _, why = only_report_why(tmp_path, DEREFERENCE_NO_LOCKS.replace("debug_locks = 1", "debug_locks = 0"))
    assert why.cause is not None
    assert why.cause.statement.endswith(
        "lockdep was already off (debug_locks = 0): its held-locks list may be stale, a possible false positive"
    )


def test_a_cut_list_is_not_read_as_no_reader(tmp_path: Path) -> None:
    """The console split the one entry over lines of other CPUs: which lock it is is not read, not "none"."""
    text = SLEEP_UNDER_READER.replace("2 locks held by kworker/0:1/62:", "3 locks held by kworker/0:1/62:")
    text = text.replace(" #1: ffffffff82065d20 (rcu_read_lock){....}, at: sock_map_free+0x5/0x170", " #1: ")
    _, why = only_report_why(tmp_path, text)
    held = next(f for f in why.facts if f.name == "RCU reader held")
    assert isinstance(held.value, NotAvailable)
    assert why.cause is not None and "(lockdep's list of the locks held is cut: not read which)" in why.cause.statement


def test_a_dereference_with_a_lock_held_may_be_the_wrong_accessor_not_a_missing_lock(tmp_path: Path) -> None:
    """ue10 11 (corpus 248): with the updaters' lock held in the very function, "without the lock the check's
    condition names" was said; a plain rcu_dereference() names none: the accessor may be the wrong one."""
    text = DEREFERENCE_NO_LOCKS.replace(
        "[   52.100700][ T5101] no locks held by syz-executor.3/5101.\n",
        "[   52.100700][ T5101] 2 locks held by syz-executor.3/5101:\n"
        "[   52.100700][ T5101]  #0: ffffffff8d6b1a50 (rtnl_mutex){+.+.}-{3:3}, at: rtnetlink_rcv_msg+0x3d0/0xd50\n"
        "[   52.100700][ T5101]  #1: ffff88801c2e0a18 (&chain->filter_chain_lock){+.+.}-{3:3}, at: "
        "tcf_chain_tp_find+0x1a0/0x3c0\n",
    )
    _, why = only_report_why(tmp_path, text)
    assert why.cause is not None and why.cause.confidence == 0.6
    assert why.cause.statement == (
        "tcf_chain_tp_find dereferenced the pointer outside any RCU read-side critical section with 2 locks held "
        "(rtnl_mutex, &chain->filter_chain_lock), none an RCU reader: if one of them serialises the updaters, the "
        "accessor is the wrong one (a plain rcu_dereference() names no lock in its condition); else the reader is "
        "missing; lockdep's RCU check at net/sched/cls_api.c:1841: suspicious rcu_dereference_check() usage"
    )
    assert "without the lock" not in why.cause.statement
    assert why.cause.next_command == (
        "read the accessor at net/sched/cls_api.c:1841: if &chain->filter_chain_lock (or another lock held) "
        "serialises the updaters, use rcu_dereference_protected(p, lockdep_is_held(&LOCK)); else take "
        "rcu_read_lock() around it"
    )


def test_the_list_is_read_past_another_tasks_call_trace_interleaved_above_it(tmp_path: Path) -> None:
    """ue10 6 (corpus 244): a fault injection's stack printed between the check and the list; its "Call Trace:"
    ended the reading, and the why said "no locks-held list in the log" of a log that has it."""
    other = (
        "[   91.193226] CPU: 0 PID: 14047 Comm: syz-executor7 Not tainted 5.10.0 #284\n"
        "[   91.193226] Call Trace:\n"
        "[   91.193226]  dump_stack+0x1b9/0x294\n"
        "[   91.193226]  should_fail.cold.4+0xa/0x1a\n"
    )
    check = "[   91.193225] net/tipc/bearer.c:177 suspicious rcu_dereference_protected() usage!\n"
    text = PROTECTED_WITH_READER.replace(check, check + other)
    _, why = only_report_why(tmp_path, text)
    facts = {f.name: f.value for f in why.facts}
    assert facts["locks held"] == "2" and facts["rcu_scheduler_active"] == 2
    assert facts["RCU reader held"] == "rcu_read_lock, taken at tipc_nl_bearer_get+0x5c/0x2a0"
    assert why.cause is not None and "no locks-held list" not in why.cause.statement
    assert "(2 locks held (cb_lock, rcu_read_lock))" in why.cause.statement


_WHOLE_LIST = (
    "[   91.193237]  #0: ffffffff8d6b1a50 (cb_lock){++++}-{3:3}, at: genl_rcv+0x19/0x40\n"
    "[   91.193262]  #1: ffffffff8b77c4e0 (rcu_read_lock){....}-{1:2}, at: tipc_nl_bearer_get+0x5c/0x2a0\n"
)


def _split(caller: str = "", other: str = "") -> str:
    """PROTECTED_WITH_READER's two entries as a console cuts them when another CPU prints a stack meanwhile (corpus
    244): each printk piece on a line of its own, a frame of the other stack between each two (with caller prefixes
    ``caller`` for the list's lines, ``other`` for the other CPU's)."""
    pieces = [" #0: ", "ffffffff8d6b1a50", " (", "cb_lock", "){++++}-{3:3}", ", at: genl_rcv+0x19/0x40",
              " #1: ", "ffffffff8b77c4e0", " (", "rcu_read_lock", "){....}-{1:2}",
              ", at: tipc_nl_bearer_get+0x5c/0x2a0"]  # fmt: skip
    frames = [" ? graph_lock+0x170/0x170", " __should_failslab+0x124/0x180", "<IRQ>",
              " ip_append_data+0x6d/0x90 net/ipv4/ip_output.c:1277"]  # fmt: skip
    out = []
    for i, piece in enumerate(pieces):
        out.append(f"[   91.1932{i:02d}]{caller} {piece}\n")
        out.append(f"[   91.1932{i:02d}]{other} {frames[i % len(frames)]}\n")
    return "".join(out)


def test_a_list_cut_between_another_cpus_frames_is_put_back_together(tmp_path: Path) -> None:
    """ue10 6 (corpus 244): the three entries, each cut into its printk pieces with another CPU's stack frames
    between them, were "not read" ("the list of the locks held is cut"); each piece continues its entry, no frame
    can, so the list is read as lockdep printed it, each entry on its site's line."""
    text = PROTECTED_WITH_READER.replace(_WHOLE_LIST, _split())
    _, why = only_report_why(tmp_path, text)
    facts = {f.name: f for f in why.facts}
    assert facts["RCU reader held"].value == "rcu_read_lock, taken at tipc_nl_bearer_get+0x5c/0x2a0"
    assert facts["RCU reader held"].at == offset(text, HEADER, "at: tipc_nl_bearer_get")
    assert [(lock.number, lock.name, lock.site, lock.task) for lock in why.locks] == [
        (0, "cb_lock", "genl_rcv+0x19/0x40", "syz-executor4/13218"),
        (1, "rcu_read_lock", "tipc_nl_bearer_get+0x5c/0x2a0", "syz-executor4/13218"),
    ]
    assert why.cause is not None and "(2 locks held (cb_lock, rcu_read_lock))" in why.cause.statement
    assert "cut" not in why.cause.statement


def _list_206(between: str) -> str:
    """PROTECTED_WITH_READER with corpus 206's list (4.15's format, no address: "#0: ", " (", "rcu_read_lock",
    "){....}", ", at: [<...>] site") cut by another CPU's stack, ``between`` its heading and its "#0: "."""
    list_ = (
        f"{between}"
        "[   91.193237]  #0: \n"
        "[   91.193238] Call Trace:\n"
        "[   91.193239]  dump_stack+0x194/0x257\n"
        "[   91.193240]  (\n"
        "[   91.193241]  warn_alloc+0x19a/0x2b0\n"
        "[   91.193242] rcu_read_lock\n"
        "[   91.193243] ){....}\n"
        "[   91.193244] , at: [<0000000072a5383e>] tipc_nl_bearer_get+0x5c/0x2a0\n"
    )
    return PROTECTED_WITH_READER.replace("2 locks held", "1 lock held").replace(_WHOLE_LIST, list_)


def test_a_list_is_read_past_another_cpus_call_trace_until_its_entries_are(tmp_path: Path) -> None:
    """Another CPU's "Call Trace:" between "#0: " and its pieces, no other task named between: the entry is read."""
    _, why = only_report_why(tmp_path, _list_206(""))
    facts = {f.name: f.value for f in why.facts}
    assert facts["RCU reader held"] == "rcu_read_lock, taken at tipc_nl_bearer_get+0x5c/0x2a0"
    assert [(lock.name, lock.task) for lock in why.locks] == [("rcu_read_lock", "syz-executor4/13218")]


def test_an_entry_after_another_tasks_header_is_not_taken_as_the_lists_task(tmp_path: Path) -> None:
    """ue13 3 (corpus 206): pid 5955's warn_alloc header came between pid 5953's "1 lock held by" and its "#0:";
    the entry was read as 5953's and the cause joined it to 5955's stack ("rcu_read_lock is held, taken at ...").
    Which task's the pieces are cannot be told: not read, and why."""
    other = "[   91.193235] CPU: 0 PID: 5955 Comm: syz-executor5 Not tainted 4.15.0+ #222\n"
    text = _list_206(other)
    _, why = only_report_why(tmp_path, text)
    held = next(f for f in why.facts if f.name == "RCU reader held")
    line = text.splitlines().index(other.rstrip("\n")) + 1
    assert held.value == NotAvailable(
        f"lockdep's list names 1 held, none read (pid 5955's lines (line {line}) come between syz-executor4/13218's "
        "list of the locks held and its entries)"
    )
    assert not why.locks
    assert why.cause is not None and "rcu_read_lock" not in why.cause.statement
    assert f"not read whether a reader was held: pid 5955's lines (line {line})" in why.cause.statement


_TWO_LISTS = (
    "[   91.193234]{a} 2 locks held by syz-executor4/13218:\n"
    "[   91.193235]{b} 1 lock held by syz-executor5/5955:\n"
    "[   91.193237]{a}  #0: ffffffff8d6b1a50 (cb_lock){{++++}}-{{3:3}}, at: genl_rcv+0x19/0x40\n"
    "[   91.193238]{b}  #0: ffffffff8c9d2e00 (rtnl_mutex){{+.+.}}-{{3:3}}, at: rtnetlink_rcv_msg+0x3d0/0xd50\n"
    "[   91.193262]{a}  #1: ffffffff8b77c4e0 (rcu_read_lock){{....}}-{{1:2}}, at: tipc_nl_bearer_get+0x5c/0x2a0\n"
)


def test_two_tasks_interleaved_lists_are_not_joined(tmp_path: Path) -> None:
    """Two tasks' lists printed at once, without caller prefixes: pid 5955's heading came before 13218's entries;
    each "#N:" below may be either's, and none is taken as one task's."""
    text = PROTECTED_WITH_READER.replace(
        "[   91.193234] 2 locks held by syz-executor4/13218:\n" + _WHOLE_LIST, _TWO_LISTS.format(a="", b="")
    )
    _, why = only_report_why(tmp_path, text)
    held = next(f for f in why.facts if f.name == "RCU reader held")
    assert isinstance(held.value, NotAvailable) and "cannot be told apart" in held.value.reason
    assert not why.locks


def test_with_caller_prefixes_interleaved_lists_are_each_their_callers(tmp_path: Path) -> None:
    """The same two lists with printk caller prefixes: each entry is its caller's list's; the report's (13218's) is
    read whole, the other's "#0:" is not taken into it."""
    text = PROTECTED_WITH_READER.replace(
        "[   91.193234] 2 locks held by syz-executor4/13218:\n" + _WHOLE_LIST,
        _TWO_LISTS.format(a="[T13218]", b="[T5955]"),
    )
    _, why = only_report_why(tmp_path, text)
    facts = {f.name: f.value for f in why.facts}
    assert facts["locks held"] == "2"
    assert facts["RCU reader held"] == "rcu_read_lock, taken at tipc_nl_bearer_get+0x5c/0x2a0"
    assert [(lock.number, lock.name, lock.task) for lock in why.locks] == [
        (0, "cb_lock", "syz-executor4/13218"),
        (1, "rcu_read_lock", "syz-executor4/13218"),
    ]


def test_with_caller_prefixes_only_the_lists_own_lines_are_its_pieces(tmp_path: Path) -> None:
    """A line of another printk caller is never a piece, even one that would continue the entry (a bare word where
    the lock's name is due)."""
    text = PROTECTED_WITH_READER.replace(_WHOLE_LIST, _split("[T13218]", "[T99]"))
    text = text.replace("[T99] <IRQ>", "[T99] rtnl_mutex")  # fits the name's place of #0's " (" piece above it
    _, why = only_report_why(tmp_path, text)
    assert [lock.name for lock in why.locks] == ["cb_lock", "rcu_read_lock"]


def test_an_entry_whose_pieces_cannot_all_be_found_stays_not_read(tmp_path: Path) -> None:
    """#1's name never printed (dropped by the console): its other pieces cannot make an entry, and whether a reader
    was held is not read."""
    text = PROTECTED_WITH_READER.replace(_WHOLE_LIST, _split()).replace(" rcu_read_lock\n", " \n")
    _, why = only_report_why(tmp_path, text)
    held = next(f for f in why.facts if f.name == "RCU reader held")
    assert held.value == NotAvailable("lockdep's list names 2 held, 1 read (the console cut its entries)")
    assert [lock.name for lock in why.locks] == ["cb_lock"]


@pytest.mark.parametrize(
    ("line", "kind", "flavour"),
    [
        ("kernel/sched/core.c:8294 Illegal context switch in RCU-bh read-side critical section!", "sleep in reader",
         "RCU-bh"),
        ("net/netfilter/nf_tables_api.c:523 RCU-list traversed in non-reader section!!", "list traversal", None),
        ("include/linux/rcupdate.h:692 rcu_read_unlock() used illegally while idle!", "idle reader",
         "rcu_read_unlock"),
        ("kernel/rcu/tree.c:3400 Illegal synchronize_rcu() in RCU read-side critical section!",
         "grace period in reader", "synchronize_rcu"),
        ("fs/x.c:1 Need a lock held!", "other", None),
    ],
)  # fmt: skip
def test_each_message_is_its_check(line: str, kind: str, flavour: str | None) -> None:
    check = failed_check(line)
    assert check is not None and (check.check.kind, check.flavour) == (kind, flavour)
    assert not check.message.endswith("!")


def test_the_readers_are_the_flavours_maps_and_srcu_domains() -> None:
    assert [is_reader(n) for n in ("rcu_read_lock_bh", "&kvm->srcu", "rcu_callback", "&mm->mmap_lock")] == [
        True, True, False, False]  # fmt: skip
