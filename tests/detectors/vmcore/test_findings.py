"""detectors.vmcore.findings on hand-built snapshots: crash frame, blocked tasks, outsized caches, modules."""

from __future__ import annotations

from dataclasses import replace

import pytest

from detectors.vmcore import findings as vf
from detectors.vmcore.nullfield import analyse_fault
from forensics.model import LocatorKind, NotAvailable, Severity
from forensics.report.vmcore import completion_json
from forensics.types.vmcore import (
    CompletionWait,
    Frame,
    MemoryTotals,
    ModuleInfo,
    SlabCacheInfo,
    TaskCensus,
    TaskInfo,
)
from forensics.vmcore import layouts
from tests.detectors.vmcore.snapshots import (
    DUMP,
    LAYOUTS,
    backtrace,
    code,
    frame,
    log,
    null_member_snapshot,
    regs,
    snapshot,
    task,
)

MIB = 1 << 20


# -- where the crash happened ----------------------------------------------------------------------


def test_crash_frame_is_the_exception_frame_outside_the_kexec_path() -> None:
    frames = backtrace("crash_setup_regs", "__crash_kexec", "kf_sensor_read", "kf_dev_read", interrupted=0)
    # The kexec path's saved registers are not the fault's: without another exception frame the crash is
    # the caller of the last panic-path function.
    assert vf.crash_frame(frames) == frames[2]
    frames = (*frames[:3], replace(frames[3], interrupted=True))
    assert vf.crash_frame(frames) == frames[3]


def test_crash_frame_of_a_panic_is_its_caller_and_none_without_frames() -> None:
    frames = backtrace("dump_stack", "panic", "check_panic_on_oom", "out_of_memory")
    assert vf.crash_frame(frames) == frames[2]
    assert vf.crash_frame(backtrace("schedule", "kthread")) == backtrace("schedule", "kthread")[0]
    assert vf.crash_frame(()) is None


def test_an_inlined_frame_is_reported_as_the_function_it_was_inlined_into() -> None:
    pc = 0xFFFFFFFF81234567
    frames = (
        frame(0, "list_del", pc=pc, inline=True, interrupted=True),
        frame(1, "kf_session_close", pc=pc),
        frame(2, "kf_session_close_write"),
    )
    assert vf.crash_frame(frames) == frames[1]


def test_culprit_is_the_first_frame_past_generic_helpers() -> None:
    frames = backtrace("__list_del_entry_valid", "kf_session_close", "vfs_write", interrupted=0)
    crash = vf.crash_frame(frames)
    assert crash == frames[0]
    assert vf.culprit_frame(frames, crash) == frames[1]
    assert vf.culprit_frame(frames, None) is None


def test_taint_letters_and_register_excerpt() -> None:
    assert vf.taint_letters_of(0) == ""
    assert vf.taint_letters_of((1 << 0) | (1 << 12) | (1 << 13)) == "POE"
    assert vf.register_excerpt("rdi", 0x30) == "rdi=0x0000000000000030"


# -- the crash and the NULL field -------------------------------------------------------------------


def test_crash_finding_cites_frame_and_log_and_names_the_culprit() -> None:
    snap = null_member_snapshot()
    fault = analyse_fault(snap.code, snap.registers, snap.variables, snap.layouts, 0x30)  # type: ignore[arg-type]
    crash = vf.crash_finding(snap, "BUG: kernel NULL pointer dereference in kf_sensor_read", fault)
    assert crash.kind == "crash" and crash.severity is Severity.CRITICAL and crash.confidence == 0.95
    assert crash.baseline == vf.CRASHED
    assert crash.summary == (
        "The kernel crashed in kf_sensor_read (kf_buggy.c:88) while running cat (pid 77) on CPU 1."
    )
    assert crash.fact("task") == "cat (pid 77) on CPU 1"
    assert crash.fact("crash site") == "exception frame" and crash.fact("module") == "kf_buggy"
    assert crash.fact("effective address") == "0x30" and crash.fact("base register") == "rdi=0x0000000000000000"
    assert crash.next_steps == (f"crash> bt; crash> dis -rl {snap.backtrace[0].pc:#x}",)
    log_ev = crash.evidence[1]
    assert (log_ev.source, log_ev.locator.start, log_ev.excerpt) == (
        f"{DUMP}#log",
        1,
        "BUG: kernel NULL pointer dereference, address: 0000000000000030",
    )
    assert log_ev.timestamp is not None and log_ev.timestamp.seconds == 100.0


def test_a_crash_forced_with_sysrq_is_reported_low_as_deliberate() -> None:
    frames = backtrace("panic", "sysrq_handle_crash", "__handle_sysrq", "write_sysrq_trigger")
    crash = vf.crash_finding(snapshot(backtrace=frames), "kernel panic: sysrq triggered crash", NotAvailable("x"))
    assert crash.severity is Severity.LOW and crash.baseline == vf.FORCED
    assert crash.fact("crashing function") == "sysrq_handle_crash"


def test_crash_finding_names_a_culprit_past_the_helper() -> None:
    frames = backtrace("__list_del_entry_valid", "kf_session_close", interrupted=0)
    frames = (frames[0], replace(frames[1], source_file="kf_buggy.c", source_line=285))
    crash = vf.crash_finding(snapshot(backtrace=frames), "BUG: corrupted list in kf_session_close", NotAvailable("x"))
    assert crash.fact("crashing function") == "__list_del_entry_valid"
    assert crash.fact("culprit (first frame past generic helpers)") == "kf_session_close+0x10/0x40 kf_buggy.c:285"


def test_null_field_finding_cites_register_instruction_and_cr2() -> None:
    snap = null_member_snapshot()
    fault = analyse_fault(snap.code, snap.registers, snap.variables, snap.layouts, 0x30)  # type: ignore[arg-type]
    assert not isinstance(fault, NotAvailable)
    null = vf.null_field_finding(snap, fault)
    assert null is not None and null.kind == "null-field" and null.severity is Severity.HIGH
    assert [(e.locator.kind, e.locator.name, e.excerpt) for e in null.evidence] == [
        (LocatorKind.REGISTER, "rdi", "rdi=0x0000000000000000"),
        (LocatorKind.ADDRESS, None, "mov rax, qword ptr [rdi + 0x30]"),
        (LocatorKind.LINE, None, "CR2: 0000000000000030"),
    ]
    assert null.next_steps == (
        f"crash> dis -rl {fault.instruction.address:#x}",
        "crash> struct -o kf_device",
        "crash> struct -o kf_sensor",
    )
    assert null.fact("NULL field") == str(fault.null_field)


def test_no_null_field_finding_when_the_pointer_is_not_null() -> None:
    dev = 0xFFFF89F50021B3C0
    fault = analyse_fault(code(), regs(rdi=dev, rbx=dev), (), LAYOUTS, 0xDEAD)
    assert not isinstance(fault, NotAvailable)
    assert vf.null_field_finding(null_member_snapshot(), fault) is None


# -- blocked tasks -----------------------------------------------------------------------------------

_WAITER = ("schedule", "__mutex_lock", "mutex_lock", "kf_waiter_update", "kthread")
_HOLDER = ("schedule", "schedule_timeout", "msleep", "kf_holder_fn", "kthread")


def test_a_task_blocked_on_a_mutex_names_the_owner_and_the_chain() -> None:
    waiter = task(43, "kf_waiter", "D", *_WAITER, blocked_on="mutex kf_dev_lock", lock_owner_pid=42,
                  last_run_ns=122_500_000_000)  # fmt: skip
    holder = task(42, "kf_holder", "S", *_HOLDER)
    (found,) = vf.blocked_task_findings(snapshot(tasks=(waiter, holder)))
    assert found.kind == "hung-task" and found.severity is Severity.HIGH and found.confidence == 0.9
    assert found.title == "task kf_waiter blocked in D state on mutex kf_dev_lock held by kf_holder (pid 42)"
    assert found.fact("waits in") == "kf_waiter_update+0x10/0x40"
    assert found.fact("last ran") == "122.5 s before the crash"
    assert found.fact("lock owner") == "kf_holder (pid 42, state S)"
    assert found.fact("wait-for chain") == (
        "kf_waiter (pid 43) -> mutex kf_dev_lock -> kf_holder (pid 42, S, in kf_holder_fn+0x10/0x40)"
    )
    assert [(e.locator.name, e.locator.start, e.excerpt) for e in found.evidence] == [
        ("pid 43", 3, "kf_waiter_update+0x10/0x40"),
        ("pid 42", 3, "kf_holder_fn+0x10/0x40"),
    ]
    assert found.next_steps == (">>> %crash bt 43", ">>> %crash bt 42")


def test_a_lock_cycle_ends_the_chain() -> None:
    a = task(10, "kf_config", "D", *_WAITER, blocked_on="mutex kf_stats_lock", lock_owner_pid=11)
    b = task(11, "kf_stats", "D", *_WAITER, blocked_on="mutex kf_config_lock", lock_owner_pid=10)
    found = vf.blocked_task_findings(snapshot(tasks=(a, b)))
    assert [f.fact("wait-for chain") for f in found] == [
        "kf_config (pid 10) -> mutex kf_stats_lock -> kf_stats (pid 11, D, in kf_waiter_update+0x10/0x40) -> "
        "mutex kf_config_lock -> kf_config (pid 10, D, in kf_waiter_update+0x10/0x40) -> (a cycle)",
        "kf_stats (pid 11) -> mutex kf_config_lock -> kf_config (pid 10, D, in kf_waiter_update+0x10/0x40) -> "
        "mutex kf_stats_lock -> kf_stats (pid 11, D, in kf_waiter_update+0x10/0x40) -> (a cycle)",
    ]


def test_an_owner_missing_from_the_dump_and_a_plain_d_sleep() -> None:
    orphan = task(43, "kf_waiter", "D", *_WAITER, blocked_on="mutex kf_dev_lock", lock_owner_pid=99)
    sleeper = task(50, "kworker/0:1", "D", "schedule", "io_schedule", "blk_mq_get_tag", "kthread")
    running = task(51, "bash", "R", "kf_spin")
    gone, plain = vf.blocked_task_findings(snapshot(tasks=(orphan, sleeper, running)))
    assert gone.title == "task kf_waiter blocked in D state on mutex kf_dev_lock" and gone.confidence == 0.6
    assert gone.fact("lock owner") is None  # no hypothesis is made of an owner not read
    assert gone.confidence_reason == (
        "its owner, pid 99, name unknown (not read), read through the lock's owner word, is not among the tasks read: "
        "it is in neither the PID table nor the list of tasks (a CPU's idle task, a task not yet attached to its pid, "
        "or one that exited, whose task_struct may then be freed memory)"
    )
    assert gone.fact("lock owner, not among the tasks read") == gone.confidence_reason
    # A name read through the owner word is said (review 8, 13)
    named = replace(orphan, lock_owner_comm="kworker/1:2")
    (seen, _p) = vf.blocked_task_findings(snapshot(tasks=(named, sleeper, running)))
    assert seen.confidence_reason.startswith("its owner, kworker/1:2 (pid 99), read through the lock's owner word")
    # A dump whose list of tasks is incomplete: the owner may be among the tasks not read (review 7; note 2026-12-07)
    census = TaskCensus(hidden=2, recovered=0)
    (unread, _p) = vf.blocked_task_findings(snapshot(tasks=(orphan, sleeper, running), task_census=census))
    assert unread.confidence_reason.startswith(
        "its owner, pid 99, name unknown (not read), read through the lock's owner word, is not among the tasks read: 2"
    )
    assert plain.title == "task kworker/0:1 in uninterruptible sleep (D) in blk_mq_get_tag"
    assert plain.next_steps == (">>> %crash bt 50",)
    # how long it slept is not known: no harm is stated, and no lock is named where there is none
    assert plain.severity is Severity.INFO and plain.baseline is not None
    assert plain.baseline.name.startswith("time in D state: unknown")
    assert "lock" not in plain.confidence_reason.replace("no lock", "")
    assert plain.summary == (
        "kworker/0:1 (pid 50) sleeps uninterruptibly in blk_mq_get_tag; it waits on I/O: frame #1 of its stack is "
        "io_schedule+0x10/0x40, no lock's wait."
    )


def test_the_json_says_why_a_completion_is_not_named() -> None:
    """A completion's wait whose frames keep no readable x: not available, and why; a stack not read: that; a
    done count not read: null, with the reason; a wait that is no completion's (I/O): null."""
    waiter = task(50, "kworker/0:1", "D", "__schedule", "schedule", "schedule_timeout", "__wait_for_common",
                  "wait_for_completion", "kf_flush", "kthread")  # fmt: skip
    assert completion_json(waiter) == {
        "not_available": "not read: no frame of its completion's wait (__wait_for_common, wait_for_completion) "
        "keeps a readable x"
    }
    assert completion_json(replace(waiter, stack=())) == {"not_available": "its stack was not read"}
    assert completion_json(task(51, "kworker/0:2", "D", "schedule", "io_schedule", "blk_mq_get_tag")) is None
    gone = NotAvailable("not in dump: memory at 0xffff888001234560 was not captured")
    read = CompletionWait(3, "__wait_for_common", 0xFFFF888001234560, gone, (61,))
    assert completion_json(replace(waiter, completion=read)) == {
        "address": "0xffff888001234560",
        "frame": 3,
        "function": "__wait_for_common",
        "done": None,
        "other_waiters": [61],
        "not_available": "its done count: not in dump: memory at 0xffff888001234560 was not captured",
    }


def test_a_completion_value_not_read_is_said_with_its_reason_in_the_finding_as_in_the_json() -> None:
    """A done count or waiters not read: the finding says "not read: why" at that value, from the same record whose
    reasons the JSON's not_available joins; one reason said once where both were not read for it."""
    waiter = task(50, "kworker/0:1", "D", "__schedule", "schedule", "__wait_for_common", "wait_for_completion")
    gone = NotAvailable("not in dump: memory at 0xffff888001234560 was not captured")
    old = layouts.unknown_read("no simple wait queue in struct completion ('struct completion' has no member 'wait')")
    cases = (
        (gone, (61,), "its done count not read: not in dump: memory at 0xffff888001234560 was not captured; other "
         "waiters on it: pid 61."),
        (0, old, "its done count 0 (not completed yet), other waiters on it: not read: unknown on this kernel (no "
         "simple wait queue in struct completion ('struct completion' has no member 'wait'))."),
        (gone, gone, "its done count and other waiters on it not read: not in dump: memory at 0xffff888001234560 "
         "was not captured."),
    )  # fmt: skip
    for done, others, said in cases:
        read = CompletionWait(2, "__wait_for_common", 0xFFFF888001234560, done, others)
        (found,) = vf.blocked_task_findings(snapshot(tasks=(replace(waiter, completion=read),)))
        assert found.summary.endswith(f"(x of frame #2, __wait_for_common): {said}")
        json_reason = completion_json(replace(waiter, completion=read))["not_available"]  # type: ignore[index]
        assert all(v.reason in json_reason for v in (done, others) if isinstance(v, NotAvailable))
        assert (found.evidence[-1].locator.start == read.address) is (done == 0)  # a value not read is not cited


def test_a_d_sleep_on_no_lock_says_what_it_waits_on_with_the_frame_as_evidence() -> None:
    """A completion's wait (__wait_for_common under wait_for_completion): said with its frame, and that which
    completion is not read; a stack with no wait in it: unknown, and why.  Never "waits on no lock the dump shows"."""
    waiter = task(50, "kworker/0:1", "D", "__schedule", "schedule", "schedule_timeout", "__wait_for_common",
                  "wait_for_completion", "kf_flush", "kthread")  # fmt: skip
    (found,) = vf.blocked_task_findings(snapshot(tasks=(waiter,)))
    assert found.summary.startswith(
        "kworker/0:1 (pid 50) sleeps uninterruptibly in __wait_for_common; it waits on a completion: frame #4 of "
        "its stack is wait_for_completion+0x10/0x40, no lock's wait. Which completion (its address"
    )
    assert found.fact("waits for") == "a completion (in wait_for_completion)"
    assert [e.locator.start for e in found.evidence] == [3, 4]
    assert "frame #4, wait_for_completion" in found.confidence_reason
    read = CompletionWait(3, "__wait_for_common", 0xFFFF888001234560, 0, (61,))
    (named,) = vf.blocked_task_findings(snapshot(tasks=(replace(waiter, completion=read),)))
    assert named.summary.endswith(
        "it waits on the completion at 0xffff888001234560 (x of frame #3, __wait_for_common): its done count 0 "
        "(not completed yet), other waiters on it: pid 61."
    )
    assert named.evidence[-1].excerpt == "0x00000000" and named.evidence[-1].locator.start == 0xFFFF888001234560
    (unknown,) = vf.blocked_task_findings(snapshot(tasks=(task(51, "kf_sleeper", "D", "schedule", "kf_sleep"),)))
    assert unknown.summary == (
        "kf_sleeper (pid 51) sleeps uninterruptibly in kf_sleep; what it waits on is unknown (no lock, and no wait "
        "its stack shows)."
    )


@pytest.mark.parametrize(
    ("seconds", "log_lines", "severity", "timeout"),
    [
        (0.0, (), Severity.INFO, "120 s"),  # ran a moment before the crash (a kworker waiting for a completion)
        (7.9, (), Severity.INFO, "120 s"),
        (130.0, (), Severity.HIGH, "120 s"),  # past the hung-task detector's default timeout
        (8.2, ("INFO: task kworker/0:1:50 blocked for more than 5 seconds.",), Severity.HIGH, "5 s"),
    ],
)
def test_a_d_sleep_is_judged_by_its_time_off_the_cpu_against_the_hung_task_timeout(
    seconds: float, log_lines: tuple[str, ...], severity: Severity, timeout: str
) -> None:
    sleeper = task(50, "kworker/0:1", "D", "schedule", "do_wait_for_common", "kthread", last_run_ns=int(seconds * 1e9))
    (found,) = vf.blocked_task_findings(snapshot(tasks=(sleeper,), log=log(*log_lines)))
    assert found.severity is severity
    assert found.baseline is not None and found.baseline.value == timeout
    assert found.baseline.name == f"D state for {seconds:.1f} s (since it last ran) against the hung-task timeout"


@pytest.mark.parametrize(
    ("dumped", "severity", "timeout", "said"),
    [
        (30, Severity.HIGH, "30 s", "read from the dump"),  # the crashed kernel's own, lower setting
        (0, Severity.INFO, "120 s", "its hung-task detector was off"),
        (NotAvailable("the kernel has no hung-task detector"), Severity.INFO, "120 s", "not available (the kernel"),
    ],
)
def test_a_d_sleep_is_judged_against_the_crashed_kernels_own_timeout(
    dumped: int | NotAvailable, severity: Severity, timeout: str, said: str
) -> None:
    """The review's 08 and 10 dumps said "the crashed machine's setting is not read", though every dump holds
    sysctl_hung_task_timeout_secs: 40 s off the CPU is a hang on a kernel set to 30 s."""
    sleeper = task(50, "kworker/0:1", "D", "schedule", "do_wait_for_common", "kthread", last_run_ns=40 * 10**9)
    (found,) = vf.blocked_task_findings(replace(snapshot(tasks=(sleeper,)), hung_task_timeout=dumped))
    assert found.severity is severity
    assert found.baseline is not None and found.baseline.value == timeout and said in found.baseline.source


def test_a_lock_wait_in_a_cycle_is_high_however_short() -> None:
    a = task(42, "kf_config", "D", *_WAITER, blocked_on="mutex kf_stats_lock", lock_owner_pid=43, last_run_ns=10**9)
    b = task(43, "kf_stats", "D", *_WAITER, blocked_on="mutex kf_config_lock", lock_owner_pid=42, last_run_ns=10**9)
    found = vf.blocked_task_findings(snapshot(tasks=(a, b)))
    assert [f.severity for f in found] == [Severity.HIGH, Severity.HIGH]
    assert all(f.baseline == vf.CYCLE for f in found)


# -- outsized slab caches ------------------------------------------------------------------------------


def _cache(name: str, mib: float, module: str | None = None, address: int = 0xFFFF888003A0E500) -> SlabCacheInfo:
    size = int(mib * MIB)
    return SlabCacheInfo(name, address, 256, size // 256, size // 256, size, module)


def _memory(total: int | NotAvailable) -> MemoryTotals:
    na = NotAvailable("not extracted")
    return MemoryTotals(total, na, na, na, na, na)


def test_a_cache_holding_a_tenth_of_ram_is_outsized() -> None:
    caches = (_cache("kmalloc-256", 120), _cache("dentry", 60), _cache("inode_cache", 50))
    (found,) = vf.outsized_cache_findings(snapshot(slab_caches=caches, memory=_memory(1024 * MIB)))
    assert found.title == "slab cache kmalloc-256 is outsized: 120.0 MiB (11.7% of RAM, #1 by size)"
    assert found.confidence == 0.8 and found.severity is Severity.MEDIUM
    assert found.baseline is not None and found.baseline.value == "11.7% of 1 GiB"
    assert found.fact("rank by size") == "#1 of 3" and found.fact("bytes") == str(120 * MIB)
    (evidence,) = found.evidence
    assert (evidence.locator.kind, evidence.locator.name) == (LocatorKind.ADDRESS, "struct kmem_cache")
    assert evidence.excerpt == f"kmalloc-256 {120 * MIB // 256} {120 * MIB // 256} 256"


def test_a_cache_four_times_the_next_is_outsized_without_ram_known() -> None:
    caches = (_cache("kf_req", 40), _cache("dentry", 9))
    (found,) = vf.outsized_cache_findings(snapshot(slab_caches=caches, memory=_memory(NotAvailable("no totals"))))
    assert found.title == "slab cache kf_req is outsized: 40.0 MiB (share of RAM not available, #1 by size)"
    assert found.confidence == 0.55 and "4.4x the next largest cache" in found.confidence_reason


def test_a_module_cache_among_the_largest_is_outsized() -> None:
    caches = (_cache("dentry", 3), _cache("kf_request", 2, module="kf_buggy"), _cache("inode_cache", 1.5))
    (found,) = vf.outsized_cache_findings(snapshot(slab_caches=caches, memory=_memory(1024 * MIB)))
    assert found.fact("cache") == "kf_request" and found.fact("created by module") == "kf_buggy"
    assert "a cache of module kf_buggy, yet the #2 largest cache of the kernel" in found.confidence_reason
    # 0.2% of RAM, nearly all of it free: worth a look, no harm (a leak's rate is kforensic leaks' job)
    assert found.severity is Severity.LOW and found.baseline is not None
    assert found.baseline.value == "0.2% of 1 GiB"
    na = NotAvailable("not extracted")
    short = MemoryTotals(1024 * MIB, 50 * MIB, na, na, na, na)  # under a tenth free: memory may have run short
    (found,) = vf.outsized_cache_findings(snapshot(slab_caches=caches, memory=short))
    assert found.severity is Severity.MEDIUM and found.baseline is not None
    assert found.baseline.value == "0.2% of 1 GiB; 5% free at the crash"


@pytest.mark.parametrize(
    "caches",
    [
        (),
        (_cache("dentry", 30), _cache("inode_cache", 20)),  # ordinary sizes, below 10% of RAM, no 4x gap
        (*(_cache(f"c{i}", 10 - i) for i in range(3)), _cache("kf_small", 1, module="kf_buggy")),  # rank 4
    ],
)
def test_ordinary_caches_are_not_outsized(caches: tuple[SlabCacheInfo, ...]) -> None:
    assert vf.outsized_cache_findings(snapshot(slab_caches=caches, memory=_memory(1024 * MIB))) == []


# -- modules --------------------------------------------------------------------------------------------


def test_only_tainting_modules_in_the_stack_are_findings() -> None:
    frames = (
        frame(0, "kf_sensor_read", module="kf_buggy", interrupted=True),
        frame(1, "e1000_clean", module="e1000"),
        frame(2, "kf_dev_read", module="kf_buggy"),
        frame(3, "vfs_read"),
    )
    modules = (ModuleInfo("kf_buggy", "OE", False), ModuleInfo("e1000", "", True), ModuleInfo("kf_other", "O", True))
    (found,) = vf.module_findings(snapshot(modules=modules), frames)
    assert found.title == "out-of-tree/unsigned module kf_buggy (OE) is in the crashing stack"
    assert found.evidence[0].locator.start == 0 and found.fact("debug info") == "no"
    assert vf.module_findings(snapshot(modules=modules), frames[1:2] + frames[3:]) == []


def test_an_inlined_frame_is_labelled_by_the_symbol_that_holds_its_pc() -> None:
    """An inlined call has no symbol of its own: ``spin_lock+0xc/0x1a`` does not exist; drgn's way is shown."""
    inlined = Frame(3, "spin_lock", 0xFFFFFFFFC000000C, 0xC, 0x1A, "kf", None, None, inline=True,
                    symbol="kf_hw_read_status")  # fmt: skip
    assert inlined.label() == "kf_hw_read_status+0xc/0x1a [kf] in spin_lock (inlined)"
    assert replace(inlined, symbol=None).label() == "spin_lock+0xc/0x1a [kf] (inlined)"
    assert replace(inlined, inline=False, symbol=None).label() == "spin_lock+0xc/0x1a [kf]"


def test_a_sleeping_task_says_what_it_waits_for_never_a_question_mark() -> None:
    """Its lock, else the wait its stack shows (a completion's sleeps in schedule_timeout too), else unknown, why."""

    def stack(*names: str) -> tuple[Frame, ...]:
        return tuple(Frame(i, n, 0xFFFFFFFF81000000 + i, 0, 8, None, None, None) for i, n in enumerate(names))

    completion = TaskInfo(21, "kworker/1:1", "D", 1, False, 0, stack("__schedule", "schedule", "schedule_timeout",
                                                                    "do_wait_for_common", "worker_thread"))  # fmt: skip
    assert completion.waits_for() == "a completion (in do_wait_for_common)"
    assert replace(completion, blocked_on="mutex kf_lock").waits_for() == "mutex kf_lock"
    assert replace(completion, stack=stack("__schedule", "kthread")).waits_for() == (
        "unknown (no lock, and no wait its stack shows)"
    )
    assert replace(completion, stack=()).waits_for() == "unknown (its stack was not read)"
