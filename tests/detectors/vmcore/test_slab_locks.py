"""The slab and lock detectors on hand-built snapshots: every double-free signal, titles, cycles, lock words."""

from __future__ import annotations

from dataclasses import replace

import pytest

from detectors.vmcore.locks import lock_cycle_findings, spinlock_finding, word_text
from detectors.vmcore.slab import (
    DOUBLE_FREE_SIGNALS,
    double_free_finding,
    freed_object_findings,
    slab_title,
    track_text,
    use_after_free_title,
    written_after_free,
)
from detectors.vmcore.why import bug_condition_finding, classify_value
from forensics.model import NotAvailable
from forensics.types.vmcore import (
    AddressInfo,
    BugSite,
    CodeBytes,
    CrashSnapshot,
    Frame,
    FrameValues,
    LogRecord,
    MemoryTotals,
    RegisterSet,
    SlabObject,
    SlabTrack,
    SpinLockState,
    TaskInfo,
    ValueRead,
)

NA = NotAvailable("not in this test")
OBJ = 0xFFFF888004A0F008
PC = 0xFFFFFFFFC0001048


def _frame(index: int, function: str, module: str | None = None, **kw: object) -> Frame:
    return Frame(index, function, PC + index, 8, 16, module, "kf.c" if module else "mm/slub.c", 10 + index, **kw)  # type: ignore[arg-type]


def _snap(**fields: object) -> CrashSnapshot:
    base = CrashSnapshot(
        dump_path="/tmp/vmcore", dump_format="kdump-compressed", vmlinux_path=NA, kernel_release="6.1.0",
        build_id=NA, machine="x86_64", crash_time=NA, uptime=NA, panic_message=NA, crashed_cpu=1,
        crashed_pid=42, crashed_comm="sh", taint_mask=NA, cpus=2, memory_bytes=NA,
        backtrace=(_frame(0, "set_freepointer", interrupted=True), _frame(1, "__kmem_cache_free"),
                   _frame(2, "kf_msg_submit", "kf")),
        registers=NA, code=NA, variables=(), layouts=(), other_cpus=(), tasks=(),
        memory=MemoryTotals(NA, NA, NA, NA, NA, NA), slab_caches=(), modules=(), log=(), filtered=NA,
    )  # fmt: skip
    return replace(base, **fields)  # type: ignore[arg-type]


def _object(allocated: bool = False, tracks: tuple[SlabTrack, ...] = ()) -> SlabObject:
    missing = None if tracks else "not recorded: cache kmalloc-64 keeps no alloc/free tracks"
    return SlabObject(OBJ, "kmalloc-64", (), 64, allocated, bool(tracks), False, tracks, missing, (), ("rsi",))


def _trap() -> BugSite:
    return BugSite(0, PC, "set_freepointer", "mm/slub.c", 419, False, "vmlinux __bug_table", NA)


# ---------------------------------------------------------------- double free

SIGNAL_SNAPSHOTS = {
    "set_freepointer trap": {"bug_site": _trap()},
    "SLUB debug report": {"log": (LogRecord(1.0, "BUG kmalloc-64 (Tainted: G O): Object already free"),)},
    "KASAN report": {"log": (LogRecord(1.0, "BUG: KASAN: double-free in kf_msg_submit+0x18/0x39"),)},
    "glibc-style report": {"log": (LogRecord(1.0, "double free or corruption (fasttop)"),)},
}


@pytest.mark.parametrize("signal", [s[0] for s in DOUBLE_FREE_SIGNALS])
def test_every_double_free_signal_is_recognised_on_its_example(signal: str) -> None:
    finding = double_free_finding(_snap(**SIGNAL_SNAPSHOTS[signal]))
    assert finding is not None
    assert str(finding.fact("detected by")).startswith(f"{signal}: ")
    # the crash finding carries syzbot's title (slab_title); this one says what was freed twice
    assert finding.title == "an object freed twice, the second time by kf_msg_submit"


def test_no_signal_no_double_free() -> None:
    assert double_free_finding(_snap()) is None
    assert slab_title(_snap()) is None


def test_the_object_being_freed_comes_from_the_allocators_frame_variable() -> None:
    other = replace(_object(), start=OBJ + 0x1000)
    values = (FrameValues(1, "__kmem_cache_free", None, (ValueRead("x", "void *", OBJ, hex(OBJ)),)),)
    snap = _snap(bug_site=_trap(), slab_objects=(other, _object()), frame_values=values)
    finding = double_free_finding(snap)
    assert finding is not None
    assert str(finding.fact("object")).startswith(f"{OBJ:#x}, 64 bytes in cache kmalloc-64: FREE")
    assert finding.fact("alloc/free stacks") == "not recorded: cache kmalloc-64 keeps no alloc/free tracks"
    assert finding.confidence > 0.9


def test_a_recorded_first_free_is_named_in_the_hypothesis() -> None:
    free = SlabTrack("free", "kf_msg_submit+0x10", 42, 1, 100, (_frame(0, "kf_msg_submit_write", "kf"),))
    finding = double_free_finding(_snap(bug_site=_trap(), slab_objects=(_object(tracks=(free,)),)))
    assert finding is not None
    assert finding.fact("first free") == "kf_msg_submit+0x10 (pid 42, CPU 1): kf_msg_submit < kf_msg_submit_write"
    assert "the first free was in kf_msg_submit" in str(finding.fact("hypothesis"))


def test_a_double_free_is_not_also_a_use_after_free() -> None:
    free = AddressInfo(OBJ, "rsi", "slab", "kmalloc-64", (), OBJ, 64, 0, False)
    log = (LogRecord(1.0, "kernel BUG at mm/slub.c:419!"),)
    assert freed_object_findings(_snap(bug_site=_trap(), addresses=(free,), log=log)) == []
    assert len(freed_object_findings(_snap(addresses=(free,), log=log))) == 1


# ---------------------------------------------------------------- use-after-free title


@pytest.mark.parametrize(("code", "access"), [(b"\x8b\x40\x08", "Read"), (b"\x89\x40\x08", "Write")])
def test_use_after_free_title_says_read_or_write(code: bytes, access: str) -> None:
    frames = (_frame(0, "kf_conn_send", "kf", interrupted=True), _frame(1, "kf_conn_send_write", "kf"))
    snap = _snap(
        backtrace=frames, code=CodeBytes(PC, code, PC, "X86_64"),
        registers=RegisterSet((("rax", 0x6B6B6B6B6B6B6B6B), ("rip", PC))),
        slab_objects=(replace(_object(), poisoned=True),),
    )  # fmt: skip
    assert use_after_free_title(snap) == f"BUG: use-after-free {access} in kf_conn_send"
    assert use_after_free_title(replace(snap, slab_objects=(_object(allocated=True),))) is None


def test_a_word_of_a_free_object_that_is_not_poison_was_written_after_the_free() -> None:
    """SLUB fills a free object with 0x6b and ends it with 0xa5: a word that differs was written after kfree,
    and the instruction before the fault whose operand is that word wrote it (``add [rdi+0x28], rsi``)."""
    poison = bytearray(b"\x6b" * 63 + b"\xa5")
    poison[0x28] = 0x6D
    obj = replace(_object(), poisoned=True, contents=bytes(poison))
    code = CodeBytes(PC, bytes.fromhex("48017728") + b"\x8b\x40\x08", PC + 4, "X86_64")  # add [rdi+0x28], rsi; mov
    snap = _snap(code=code, registers=RegisterSet((("rdi", OBJ), ("rip", PC + 4))))
    [written] = written_after_free(snap, obj)
    assert (written.offset, written.word, written.poison) == (0x28, 0x6B6B6B6B6B6B6B6D, 0x6B6B6B6B6B6B6B6B)
    assert written.writer == f"add qword ptr [rdi + 0x28], rsi at {PC:#x}"
    assert written.text() == "0x6b6b6b6b6b6b6b6d at offset 0x28: the poison 0x6b6b6b6b6b6b6b6b + 0x2"
    assert written_after_free(snap, replace(obj, contents=bytes(64))) == []  # no poison at all: a constructor's
    assert written_after_free(snap, replace(obj, allocated=True)) == []
    assert written_after_free(snap, replace(obj, contents=bytes(b"\x6b" * 63 + b"\xa5"))) == []


def test_a_tracks_own_stack_starts_at_the_caller_not_in_the_allocator() -> None:
    """5.10's track addrs[] begin in SLUB (__slab_alloc < ... < kmem_cache_alloc): cut as 6.1's stack depot does."""
    names = ("__slab_alloc", "slab_alloc_node", "slab_alloc", "kmem_cache_alloc", "kf_conn_open", "kf_conn_open_write")
    stack = tuple(_frame(i, name, "kf" if name.startswith("kf") else None) for i, name in enumerate(names))
    track = SlabTrack("alloc", "kf_conn_open+0x15", 43, 1, 1, stack)
    assert track_text(track) == "kf_conn_open+0x15 (pid 43, CPU 1): kf_conn_open < kf_conn_open_write"


def test_a_track_shows_its_caller_when_the_depot_skipped_it() -> None:
    track = SlabTrack("free", "kf_conn_close+0x16", 7, 0, 1, (_frame(0, "kf_conn_close_write", "kf"),))
    assert track_text(track) == "kf_conn_close+0x16 (pid 7, CPU 0): kf_conn_close < kf_conn_close_write"
    gone = SlabTrack("free", "kf_conn_close+0x16", 7, 0, 1, missing="stack depot pool not in dump")
    assert track_text(gone) == "kf_conn_close+0x16: stack depot pool not in dump"


# ---------------------------------------------------------------- locks


def _waiter(pid: int, comm: str, wants: str, owner: int) -> TaskInfo:
    stack = (Frame(0, "__schedule", PC, 0, 1, None, None, None), Frame(1, f"{comm}_fn", PC, 0, 1, "kf", "kf.c", 5))
    return TaskInfo(pid, comm, "D", 0, False, None, stack, f"mutex {wants}", owner, None)


def test_a_three_task_cycle_names_each_held_and_wanted_lock() -> None:
    tasks = (_waiter(1, "a", "lock_b", 2), _waiter(2, "b", "lock_c", 3), _waiter(3, "c", "lock_a", 1))
    [cycle] = lock_cycle_findings(_snap(tasks=tasks))
    assert cycle.fact("a (pid 1) holds") == "lock_a"
    assert cycle.fact("a (pid 1) wants") == "mutex lock_b (held by pid 2)"
    assert cycle.fact("c (pid 3) stack") == "c_fn"
    assert "lock cycle of 3 tasks" in cycle.title


def test_a_chain_without_a_cycle_is_no_deadlock() -> None:
    owner = TaskInfo(3, "c", "S", 0, False, None)
    assert lock_cycle_findings(_snap(tasks=(_waiter(1, "a", "x", 2), _waiter(2, "b", "y", 3), owner))) == []


@pytest.mark.parametrize(
    ("word", "text"),
    [
        (0x101, "0x101: locked, pending (a first waiter spins), no queued waiters"),
        (0x1, "0x1: locked, no queued waiters"),
        ((3 + 1) << 18 | 0x101, "0x100101: locked, pending (a first waiter spins), queue tail CPU 3"),
    ],
)
def test_lock_words_are_decoded(word: int, text: str) -> None:
    assert word_text(SpinLockState(0x1000, None, "lock", word)) == text


def _spinning(lock: SpinLockState, other: TaskInfo) -> CrashSnapshot:
    frames = (_frame(0, "native_queued_spin_lock_slowpath", interrupted=True), _frame(1, "kf_hw_read_status", "kf"))
    return _snap(backtrace=frames, spinlock=lock, other_cpus=((0, other),))


def test_a_locked_spinlock_while_the_other_cpus_idle_is_a_leak() -> None:
    lock = SpinLockState(
        0xFFFFFFFFC0002420, "kf_hw_lock+0x0", "lock", 0x101, takers=("kf_hw_configure", "kf_hw_read_status")
    )
    idle = TaskInfo(0, "swapper/0", "R", 0, True, None)
    finding = spinlock_finding(_spinning(lock, idle))
    assert finding is not None
    assert finding.title.startswith("kf_hw_read_status spins on kf_hw_lock")
    assert "a path returned without spin_unlock() (the other functions that take it: kf_hw_configure)" in str(
        finding.fact("hypothesis")
    )
    busy = TaskInfo(77, "worker", "R", 0, True, None)
    held = spinlock_finding(_spinning(replace(lock, owner="worker (pid 77)", owner_cpu=0), busy))
    assert held is not None and "worker (pid 77) holds it" in str(held.fact("hypothesis"))
    assert spinlock_finding(_snap()) is None


def test_per_cpu_offsets_are_no_user_addresses() -> None:
    assert classify_value(0x21DC0) is None  # s->cpu_slab: an offset into the per-CPU area
    found = classify_value(0x55D0C0DE1000)
    assert found is not None and found.kind == "user-address"


# ---------------------------------------------------------------- values the dump does not give: "unknown (why)"


def test_a_track_without_its_pid_and_cpu_says_unknown_not_none() -> None:
    track = SlabTrack("free", "kf_conn_close+0x16", None, None, 1, (_frame(0, "kf_conn_close_write", "kf"),))
    unknown = "unknown (not read with the track)"
    assert (
        track_text(track) == f"kf_conn_close+0x16 (pid {unknown}, CPU {unknown}): kf_conn_close < kf_conn_close_write"
    )


def test_a_spinlock_owner_whose_cpu_was_not_read_says_unknown_and_why() -> None:
    why = "owner_cpu not in dump: memory at 0xffffffffc0002424 was not captured"
    lock = SpinLockState(0xFFFFFFFFC0002420, "kf_hw_lock+0x0", "lock", 0x101, "worker (pid 77)", owner_cpu_missing=why)
    busy = TaskInfo(77, "worker", "R", 0, True, None)
    finding = spinlock_finding(_spinning(lock, busy))
    assert finding is not None and finding.fact("owner") == f"worker (pid 77) on CPU unknown ({why})"
    bare = spinlock_finding(_spinning(replace(lock, owner_cpu_missing=None), busy))
    assert bare is not None and bare.fact("owner") == "worker (pid 77) on CPU unknown (not read)"
    known = spinlock_finding(_spinning(replace(lock, owner_cpu=0, owner_cpu_missing=None), busy))
    assert known is not None and known.fact("owner") == "worker (pid 77) on CPU 0"


def test_a_trap_whose_line_the_dump_does_not_give_says_unknown_and_why() -> None:
    why = "its bug table entry not in dump: memory at 0xffffffffc0004010 was not captured"
    site = BugSite(0, PC, "kf_check", "drivers/kf/kf.c", None, True, "module kf __bug_table", NA, line_missing=why)
    report = LogRecord(1.0, "WARNING: CPU: 1 PID: 42 at drivers/kf/kf.c:57 kf_check+0x8/0x30 [kf]")
    finding = bug_condition_finding(_snap(bug_site=site, log=(report,)))
    assert finding is not None
    assert (
        finding.fact("trap")
        == f"WARN at drivers/kf/kf.c, line unknown ({why}) in kf_check (bug table: module kf __bug_table)"
    )
    assert finding.title == "WARN in kf_check at drivers/kf/kf.c, line unknown: not evaluated: no source (--source-dir)"
    assert "None" not in " ".join((finding.title, finding.summary, *(str(f.value) for f in finding.facts)))
    assert any("drivers/kf/kf.c:57" in str(e.excerpt) for e in finding.evidence)  # the log's report gives the line
    known = bug_condition_finding(_snap(bug_site=replace(site, line=57, line_missing=None), log=(report,)))
    assert known is not None and str(known.fact("trap")).startswith("WARN at drivers/kf/kf.c:57 in kf_check")
