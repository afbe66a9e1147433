"""The report readers of detectors/dmesg/why.py on project-written reports, one format each.

The golden tests (test_why_golden.py) hold the values of real reports; these reports are written here, in the
kernels' formats, to pin each reading down on its own: where a lock was taken when a symbolized log prints a
lock's inline wrappers as "at:" lines of their own, who allocated when the allocator's internals are frames of
their own, KCSAN's two accesses, kmemleak's leaked object.
"""

from __future__ import annotations

from detectors.dmesg.findings import explain_reports
from detectors.dmesg.scanner import scan_chunks
from forensics.types.dmesg import ReportWhy, StackKind


def read(text: str) -> list[ReportWhy]:
    """Every report of a log, read."""
    reports = list(scan_chunks([text.encode()]))
    whys = explain_reports(reports)
    return [whys[r.start_line] for r in reports]


def facts(why: ReportWhy) -> dict[str, object]:
    return {f.name: f.value for f in reversed(why.facts)}


# ---------------------------------------------------------------- lockdep: where the lock was taken

INCONSISTENT_GUARD = """\
================================
WARNING: inconsistent lock state
6.8.0-kf #1 Not tainted
--------------------------------
inconsistent {SOFTIRQ-ON-W} -> {IN-SOFTIRQ-W} usage.
kf-worker/77 [HC0[0]:SC1[1]:HE0:SE0] takes:
ffff888029d3e948 (&kf->lock){+.?.}-{2:2}, at: class_spinlock_irqsave_constructor include/linux/spinlock.h:574 [inline]
ffff888029d3e948 (&kf->lock){+.?.}-{2:2}, at: kf_timer_fn+0x31/0xd80 drivers/kf/kf.c:818
{SOFTIRQ-ON-W} state was registered at:
  lock_acquire+0x1b1/0x540 kernel/locking/lockdep.c:5719
  _raw_spin_lock+0x2e/0x40 kernel/locking/spinlock.c:154
  kf_close+0x65/0xbd0 drivers/kf/kf.c:412
"""

CIRCULAR_WRAPPERS = """\
======================================================
WARNING: possible circular locking dependency detected
6.12.0-kf #1 Not tainted
------------------------------------------------------
kf-worker/77 is trying to acquire lock:
ffff8880b8823d90 (&kf->stats_lock){+.+.}-{3:3}, at: spin_lock include/linux/spinlock.h:351 [inline]
ffff8880b8823d90 (&kf->stats_lock){+.+.}-{3:3}, at: class_spinlock_constructor include/linux/spinlock.h:561 [inline]
ffff8880b8823d90 (&kf->stats_lock){+.+.}-{3:3}, at: kf_stats_update+0x264/0x400 drivers/kf/kf.c:168

but task is already holding lock:
ffff8880302d0150 (&kf->config_lock){+.+.}-{3:3}, at: spin_lock_irq include/linux/spinlock.h:376 [inline]
ffff8880302d0150 (&kf->config_lock){+.+.}-{3:3}, at: class_spinlock_irq_constructor include/linux/spinlock.h:567
ffff8880302d0150 (&kf->config_lock){+.+.}-{3:3}, at: kf_config_apply+0x10d/0x270 drivers/kf/kf.c:2223

which lock already depends on the new lock.

"""


def test_a_lock_taken_through_a_guard_is_taken_in_the_function_the_guard_is_in() -> None:
    (why,) = read(INCONSISTENT_GUARD)
    assert why.cls == "lockdep"
    assert facts(why)["acquiring at"] == "kf_timer_fn+0x31/0xd80"
    assert [(k.role, k.site, k.at) for k in why.locks if k.role == "acquiring"] == [
        ("acquiring", "kf_timer_fn+0x31/0xd80", 6)
    ]
    assert why.cause is not None and "in kf_timer_fn+0x31/0xd80:" in why.cause.statement


def test_lock_sites_skip_every_inline_lock_wrapper() -> None:
    (why,) = read(CIRCULAR_WRAPPERS)
    got = facts(why)
    assert (got["acquiring at"], got["holding at"]) == ("kf_stats_update+0x264/0x400", "kf_config_apply+0x10d/0x270")
    # The fact is read from the line that names the site (the 11th after the header).
    assert next(f.at for f in why.facts if f.name == "holding at") == 11


def test_an_unsymbolized_lock_site_is_kept_as_printed() -> None:
    text = CIRCULAR_WRAPPERS.replace(
        "at: spin_lock include/linux/spinlock.h:351 [inline]\n", "at: _raw_spin_lock+0x2e/0x40\n"
    )
    text = "\n".join(x for x in text.splitlines() if "class_spinlock_constructor" not in x and "kf_stats" not in x)
    (why,) = read(text)
    # One "at:" line: nothing better is printed than the primitive itself.
    assert facts(why)["acquiring at"] == "_raw_spin_lock+0x2e/0x40"


# ---------------------------------------------------------------- who allocated: the allocator's internals

KMSAN_NOPROF = """\
=====================================================
BUG: KMSAN: uninit-value in kf_parse+0x1a7/0x1b0 drivers/kf/kf.c:311
 kf_parse+0x1a7/0x1b0 drivers/kf/kf.c:311
 kf_ioctl+0x217/0x3e0 drivers/kf/kf.c:1065
 __x64_sys_ioctl+0x11b/0x1a0 fs/ioctl.c:893
 do_syscall_64+0x6d/0x140 arch/x86/entry/common.c:83
 entry_SYSCALL_64_after_hwframe+0x63/0x6b

Uninit was created at:
 slab_post_alloc_hook mm/slub.c:4975 [inline]
 slab_alloc_node mm/slub.c:5280 [inline]
 __do_kmalloc_node mm/slub.c:5641 [inline]
 __kmalloc_noprof+0x3e3/0x6b0 mm/slub.c:5654
 kmalloc_noprof include/linux/slab.h:961 [inline]
 kmalloc_array_noprof include/linux/slab.h:1003 [inline]
 kf_alloc_table drivers/kf/kf.c:1780 [inline]
 kf_open+0x384/0x5a0 drivers/kf/kf.c:1801
 do_syscall_64+0x6d/0x140 arch/x86/entry/common.c:83

CPU: 0 PID: 5401 Comm: kf-worker Not tainted 6.12.0-kf #0
=====================================================
"""


def test_uninit_created_by_the_caller_of_the_allocator_internals() -> None:
    (why,) = read(KMSAN_NOPROF)
    assert why.cls == "kmsan"
    assert facts(why)["uninit created by"] == "kf_alloc_table"
    internals = ("__do_kmalloc_node", "__kmem_cache_alloc_node", "__kmalloc_cache_noprof", "kmem_cache_alloc_noprof",
                 "alloc_pages_noprof", "slab_alloc_node", "kmalloc_node_track_caller_noprof")  # fmt: skip
    for internal in internals:
        (other,) = read(KMSAN_NOPROF.replace(" __do_kmalloc_node ", f" {internal} "))
        assert facts(other)["uninit created by"] == "kf_alloc_table", internal


# ---------------------------------------------------------------- KCSAN: the two accesses

KCSAN_RACE = """\
==================================================================
BUG: KCSAN: data-race in kf_stats_read / kf_stats_update

read-write (marked) to 0xffff88812ed8b730 of 8 bytes by interrupt on cpu 1:
 kf_stats_update+0xa9/0x170 drivers/kf/kf.c:165
 kf_irq+0x27/0x80 drivers/kf/kf.c:835
 __handle_irq_event_percpu+0x46/0x140 kernel/irq/handle.c:158

read to 0xffff88812ed8b730 of 8 bytes by task 4242 on cpu 0:
 strscpy+0xde/0x170 lib/string.c:174
 kf_name kf/kf.c:260 [inline]
 kf_stats_read+0x45/0x70 drivers/kf/kf.c:252
 vfs_read+0x281/0x3050 fs/read_write.c:1822

value changed: 0x0000000000000001 -> 0x0000000000000002

Reported by Kernel Concurrency Sanitizer on:
CPU: 0 UID: 0 PID: 4242 Comm: kf reader Not tainted 6.12.0-kf #0
==================================================================
"""


def test_kcsan_reads_both_accesses_and_the_value_change() -> None:
    (why,) = read(KCSAN_RACE)
    assert why.cls == "data-race"
    got = facts(why)
    assert got.items() >= {
        "bug": "data-race", "reported in": "kf_stats_read / kf_stats_update",
        "access 1": "read-write (marked)", "access 1 address": "0xffff88812ed8b730", "access 1 size": 8,
        "access 1 by": "interrupt", "access 1 cpu": 1, "access 1 in": "kf_stats_update",
        "access 2": "read", "access 2 by": "task 4242", "access 2 cpu": 0, "access 2 in": "strscpy",
        "access 2 caller": "kf_name", "value changed": "0x0000000000000001 -> 0x0000000000000002",
        "CPU": 0, "pid": 4242, "task": "kf reader",
    }.items()  # fmt: skip
    assert "access 1 caller" not in got  # the function itself is foreign
    assert [(s.kind, s.task, len(s.frames)) for s in why.stacks] == [
        (StackKind.RACE_ACCESS_1, None, 3),
        (StackKind.RACE_ACCESS_2, 4242, 4),
    ]
    assert why.cause is not None and why.cause.cls == "data_race"
    assert why.cause.statement == (
        "data race: kf_stats_update reads and writes 8 bytes at 0xffff88812ed8b730 (marked) in an interrupt while "
        "strscpy (from kf_name) reads 8 bytes at 0xffff88812ed8b730, with no lock in common and not both marked "
        "(READ_ONCE/WRITE_ONCE); the value changed 0x0000000000000001 -> 0x0000000000000002"
    )


def test_kcsan_race_of_unknown_origin_and_assertions() -> None:
    text = KCSAN_RACE.replace(
        "data-race in kf_stats_read / kf_stats_update", "assert: race in kf_stats_update+0x6df/0x760"
    )
    text = text.replace("read-write (marked) to", "race at unknown origin, with assert no writes (scoped) to")
    head, _, tail = text.partition("\nread to ")
    (why,) = read(head + "\nvalue changed: 0x0 -> 0x1\n" + tail.split("value changed: ", 1)[1].split("\n", 1)[1])
    got = facts(why)
    assert got.items() >= {"bug": "assert: race", "reported in": "kf_stats_update", "other access": "unknown origin",
                           "access 1": "assert no writes (scoped)"}.items()  # fmt: skip
    assert "access 2" not in got
    assert why.cause is not None and why.cause.statement == (
        "data race: kf_stats_update asserts no concurrent writes to 8 bytes at 0xffff88812ed8b730 (scoped) in an "
        "interrupt while an access KCSAN did not see (unknown origin) changes it; the value changed 0x0 -> 0x1"
    )


# ---------------------------------------------------------------- kmemleak: the leaked object and who allocated it

KMEMLEAK = """\
BUG: memory leak
unreferenced object 0xffff88812638cc20 (size 96):
  comm "kf ctl", pid 6104, jiffies 4294942640 (age 17.310s)
  hex dump (first 32 bytes):
    00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00  ................
    00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00  ................
  backtrace (crc 1f2e3d4c):
    kmemleak_alloc_recursive include/linux/kmemleak.h:44 [inline]
    slab_post_alloc_hook mm/slub.c:4975 [inline]
    slab_alloc_node mm/slub.c:5280 [inline]
    __do_kmalloc_node mm/slub.c:5641 [inline]
    __kmalloc_cache_noprof+0x3e3/0x6b0 mm/slub.c:5654
    kmalloc_noprof include/linux/slab.h:961 [inline]
    kzalloc_noprof include/linux/slab.h:1094 [inline]
    kf_session_new drivers/kf/kf.c:1309 [inline]
    kf_ioctl+0x108/0x140 drivers/kf/kf.c:1292
    __x64_sys_ioctl+0x71/0x350 fs/ioctl.c:893
    do_syscall_64+0xa4/0xfa0 arch/x86/entry/syscall_64.c:94
    entry_SYSCALL_64_after_hwframe+0x77/0x7f

"""


def test_kmemleak_reads_the_object_its_task_and_who_allocated_it() -> None:
    (why,) = read(KMEMLEAK)
    assert why.cls == "memory-leak"
    assert facts(why) == {
        "object": "0xffff88812638cc20", "object size": 96, "task": "kf ctl", "pid": 6104, "jiffies": 4294942640,
        "age ms": 17310, "allocated by": "kf_session_new", "root cause": "memory_leak",
    }  # fmt: skip
    assert why.cause is not None and why.cause.statement == (
        "memory leak: kf_session_new allocated the 96-byte object 0xffff88812638cc20 (task kf ctl, pid 6104), and "
        "nothing points at it any more: a path drops its last pointer without freeing it"
    )


def test_kmemleak_of_old_kernels_names_the_allocator_past_kmemleaks_own_frames() -> None:
    # 2.6/3.x: "[<addr>] f+off/size" frames from kmemleak's create_object, no hex dump; an allocation wrapper.
    text = """\
BUG: memory leak
unreferenced object 0xc625e000 (size 2048):
  comm "swapper", pid 1, jiffies 4294937521
  backtrace:
    [<c00c89f0>] create_object+0x11c/0x200
    [<c00c6764>] __kmalloc_track_caller+0x138/0x178
    [<c01d78c0>] kf_alloc_buffer+0x4c/0x100
    [<c0198b48>] kf_rx_fill+0xd8/0x3fc
    [<c019ac74>] kf_start+0x30/0xf8

"""
    (why,) = read(text)
    assert facts(why).items() >= {"object size": 2048, "task": "swapper", "allocated by": "kf_rx_fill"}.items()
    assert "age ms" not in facts(why)
