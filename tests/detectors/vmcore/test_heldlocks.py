"""The held-lock rules on hand-built snapshots: which lock waits are faults, and how tasks are named.

The real-dump side (fixtures with the tasks' pages filtered out) is tests/forensics/vmcore/test_held_locks.py.
"""

from __future__ import annotations

from detectors.dmesg.scanner import scan_text
from detectors.vmcore.analysis import log_as_text
from detectors.vmcore.heldlocks import held_lock_findings
from forensics.model import Finding, FindingKind
from forensics.types.vmcore import GlobalLock, LockTaskRef, LogRecord
from tests.detectors.vmcore.snapshots import log, snapshot

A, B = 0xFFFF888001000000, 0xFFFF888002000000
GONE = "not in dump: its task_struct at 0x... was filtered out by makedumpfile at dump level 31"
HUNG = log(
    "INFO: task kf_waiter:43 blocked for more than 5 seconds.",
    "      Tainted: G           O       6.12.118 #1",
    '"echo 0 > /proc/sys/kernel/hung_task_timeout_secs" disables this message.',
    "task:kf_waiter       state:D stack:0     pid:43    tgid:43    ppid:2      flags:0x00004000",
    "Call Trace:",
    " <TASK>",
    " __schedule+0x2a5/0x8a0",
    " schedule+0x27/0xa0",
    " schedule_preempt_disabled+0x15/0x30",
    " __mutex_lock.constprop.0+0x15a/0x203",
    " kf_waiter_update+0x11/0x20 [kf_buggy]",
    " kf_waiter_fn+0x1a/0x30 [kf_buggy]",
    " kthread+0xd2/0x100",
    " ret_from_fork+0x34/0x50",
    " </TASK>",
    "Kernel panic - not syncing: hung_task: blocked tasks",
)


def _lock(name: str, owner: LockTaskRef, *waiters: LockTaskRef) -> GlobalLock:
    return GlobalLock(name, "kf_buggy", "mutex", 0xFFFFFFFFC0100000 + len(name), owner, waiters)


def _findings(records: tuple[LogRecord, ...], *locks: GlobalLock) -> list[Finding]:
    snap = snapshot(tasks=(), global_locks=locks, log=records)
    return held_lock_findings(snap, scan_text(log_as_text(snap.log)))


def test_a_wait_the_kernel_reported_hung_is_a_finding_named_from_the_log() -> None:
    waiter = LockTaskRef(
        A, None, missing=GONE, stack_text=("kf_waiter_update+0x11", "kf_waiter_fn+0x1a", "kthread+0xd2")
    )
    [finding] = _findings(HUNG, _lock("kf_dev_lock", LockTaskRef(B, 42, "kf_holder", "S"), waiter))
    assert finding.kind is FindingKind.HUNG_TASK
    facts = {f.name: f.value for f in finding.facts}
    # neither task_struct nor struct pid: the report whose trace has a return address of this stack names it
    assert facts["waiter"] == "kf_waiter (pid 43), state D (the log's hung-task report)"
    assert facts["waits in"].startswith("kf_waiter_update+0x11 (")
    assert "kf_waiter_update+0x11, a return address on this task's stack" in facts[f"pid 43 of task_struct {A:#x}"]
    assert facts["lock owner"] == "kf_holder (pid 42), state S"


def test_a_wait_nobody_reported_hung_is_no_finding() -> None:
    waiter = LockTaskRef(A, 43, "kf_waiter", "S")
    assert _findings(log("nothing to see"), _lock("kf_dev_lock", LockTaskRef(B, 42, "kf_holder", "S"), waiter)) == []


def test_a_stack_that_matches_no_report_leaves_the_task_unnamed() -> None:
    waiter = LockTaskRef(A, None, missing=GONE, stack_text=("other_fn+0x10",))
    [finding] = _findings(
        HUNG, _lock("kf_dev_lock", LockTaskRef(B, 42, "kf_holder", "S"), waiter, LockTaskRef(B + 64, 43))
    )
    waiters = [f.value for f in finding.facts if f.name == "waiter"]
    assert waiters == [
        f"task_struct {A:#x} (name unknown), state unknown",
        "kf_waiter (pid 43), state D (the log's hung-task report)",
    ]


def test_a_cycle_is_a_deadlock_even_without_a_report() -> None:
    a = LockTaskRef(A, 42, "kf_config", "D", stack_text=("kf_config_apply+0x22",))
    b = LockTaskRef(B, 43, "kf_stats", "D", stack_text=("kf_stats_update+0x22",))
    [finding] = _findings(log("nothing"), _lock("kf_config_lock", a, b), _lock("kf_stats_lock", b, a))
    assert finding.kind is FindingKind.DEADLOCK
    assert finding.fact("hypothesis") == (
        "AB-BA deadlock: kf_config holds kf_config_lock and wants kf_stats_lock; "
        "kf_stats holds kf_stats_lock and wants kf_config_lock"
    )
    facts = {f.name: f.value for f in finding.facts}
    assert facts["kf_config (pid 42) waits in"].startswith("kf_config_apply+0x22 (")


def test_two_stacks_matching_one_report_name_neither() -> None:
    stack = ("kf_waiter_update+0x11", "kf_waiter_fn+0x1a")
    one = LockTaskRef(A, None, missing=GONE, stack_text=stack)
    two = LockTaskRef(A + 0x4000, None, missing=GONE, stack_text=stack)
    [finding] = _findings(HUNG, _lock("kf_dev_lock", LockTaskRef(B, 42, "kf_holder", "S"), one, two))
    waiters = [f.value for f in finding.facts if f.name == "waiter"]
    assert all("(name unknown)" in w for w in waiters), waiters
