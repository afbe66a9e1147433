"""The report readers of detectors/dmesg/why.py on project-written reports, one format each.

The golden tests (test_why_golden.py) hold the values of real reports; these reports are written here, in the
kernels' formats, to pin each reading down on its own: where a lock was taken when a symbolized log prints a
lock's inline wrappers as "at:" lines of their own, who allocated when the allocator's internals are frames of
their own, KCSAN's two accesses, kmemleak's leaked object.
"""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from detectors.dmesg.findings import explain_reports, explained_finding, group_reports, hung_passes, lock_cycle_causes
from detectors.dmesg.scanner import scan_chunks
from forensics.model import NotAvailable
from forensics.report.dmesg_json import why_to_dict
from forensics.types.causes import Cause
from forensics.types.dmesg import ReportWhy, StackKind
from tests.detectors.dmesg.why_logs import hung_report


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


# ---------------------------------------------------------------- lockdep: header helpers around a lock

CIRCULAR_HEADER_HELPERS = """\
======================================================
WARNING: possible circular locking dependency detected
6.2.0-kf #1 Not tainted
------------------------------------------------------
kf-worker/77 is trying to acquire lock:
ffff0000cb1ae540 (mapping.invalidate_lock){++++}-{3:3}, at: filemap_invalidate_lock include/linux/fs.h:801 [inline]
ffff0000cb1ae540 (mapping.invalidate_lock){++++}-{3:3}, at: kf_setattr+0x804/0xb38 fs/kf/inode.c:5545

but task is already holding lock:
ffff0000cb1ae3a0 (&kf->i_rwsem){+.+.}-{3:3}, at: inode_lock include/linux/fs.h:756 [inline]
ffff0000cb1ae3a0 (&kf->i_rwsem){+.+.}-{3:3}, at: kf_truncate+0xf8/0x154 fs/kf/open.c:63

which lock already depends on the new lock.


the existing dependency chain (in reverse order) is:

-> #2 (&kf->i_rwsem){+.+.}-{3:3}:
       down_write+0x5c/0x88 kernel/locking/rwsem.c:1562
       inode_lock include/linux/fs.h:756 [inline]
       kf_xattr_create fs/kf/xattr.c:1457 [inline]
       kf_xattr_set+0x3d0/0x1404 fs/kf/xattr.c:1975
       do_syscall_64+0x6d/0x140 arch/x86/entry/common.c:83

-> #1 (fs_reclaim){+.+.}-{0:0}:
       __fs_reclaim_acquire mm/page_alloc.c:3853 [inline]
       fs_reclaim_acquire+0x102/0x150 mm/page_alloc.c:3867
       might_alloc include/linux/sched/mm.h:318 [inline]
       xa_insert include/linux/xarray.h:783 [inline]
       kf_init_ctx fs/kf/ctx.c:3924 [inline]
       kf_alloc_ctx+0x503/0x11c0 fs/kf/ctx.c:4457
       do_syscall_64+0x6d/0x140 arch/x86/entry/common.c:83

-> #0 (mapping.invalidate_lock){++++}-{3:3}:
       lock_acquire+0x100/0x1f8 kernel/locking/lockdep.c:5668
       down_write+0x5c/0x88 kernel/locking/rwsem.c:1562
       filemap_invalidate_lock include/linux/fs.h:801 [inline]
       kf_setattr+0x804/0xb38 fs/kf/inode.c:5545
       do_syscall_64+0x6d/0x140 arch/x86/entry/common.c:83

other info that might help us debug this:
"""


def test_a_lock_taken_through_a_header_helper_is_taken_in_the_function_that_called_it() -> None:
    (why,) = read(CIRCULAR_HEADER_HELPERS)
    got = facts(why)
    assert (got["acquiring at"], got["holding at"]) == ("kf_setattr+0x804/0xb38", "kf_truncate+0xf8/0x154")
    # Each link of the chain: past the lock primitives, fs_reclaim's lockdep map and the helpers inlined from headers
    # (inode_lock, might_alloc, xa_insert); a helper of the driver's own inlined there (kf_init_ctx) is its taker.
    assert [(k.number, k.name, k.site) for k in why.locks if k.role == "chain"] == [
        (2, "&kf->i_rwsem", "kf_xattr_create"),
        (1, "fs_reclaim", "kf_init_ctx"),
        (0, "mapping.invalidate_lock", "kf_setattr"),
    ]
    assert why.cause is not None and "takes mapping.invalidate_lock in kf_setattr+0x804/0xb38 while" in (
        why.cause.statement
    )


def test_an_inline_frame_without_an_offset_is_inline_not_of_a_module() -> None:
    (why,) = read(CIRCULAR_HEADER_HELPERS)
    chain = next(s for s in why.stacks if s.kind is StackKind.LOCK_CHAIN)
    inode_lock = next(f for f in chain.frames if f.function == "inode_lock")
    assert (inode_lock.inline, inode_lock.module, inode_lock.source) == (True, None, "include/linux/fs.h:756")


# ---------------------------------------------------------------- hung tasks: what a completion stands for

HUNG_SRCU = """\
INFO: task kf-worker:5290 blocked for more than 143 seconds.
      Not tainted 6.11.0-kf #0
"echo 0 > /proc/sys/kernel/hung_task_timeout_secs" disables this message.
task:kf-worker       state:D stack:22080 pid:5290  tgid:5290  ppid:2      flags:0x00004000
Call Trace:
 <TASK>
 context_switch kernel/sched/core.c:5188 [inline]
 __schedule+0xe37/0x5490 kernel/sched/core.c:6529
 schedule+0xe7/0x350 kernel/sched/core.c:6621
 schedule_timeout+0x258/0x2a0 kernel/time/timer.c:2557
 do_wait_for_common kernel/sched/completion.c:95 [inline]
 __wait_for_common+0x3de/0x5f0 kernel/sched/completion.c:116
 __synchronize_srcu+0x1bd/0x2a0 kernel/rcu/srcutree.c:1398
 kf_release_notifiers drivers/kf/kf.c:345 [inline]
 kf_release+0x28b/0x660 drivers/kf/kf.c:357
 do_exit+0x9bf/0x2bb0 kernel/exit.c:869
 </TASK>
"""


def test_a_hung_task_waiting_on_a_completion_of_srcu_waits_for_a_grace_period() -> None:
    (why,) = read(HUNG_SRCU)
    got = facts(why)
    assert (got["waits for"], got["wait primitive"]) == ("an RCU grace period", "__synchronize_srcu")
    # The title names the grouped wait (synchronize_rcu), not a frame of the stack: the wait's caller is where.
    assert got["waits in"] == "kf_release_notifiers"
    # The stack's own frame is past the switch and the waits.
    trace = next(s for s in why.stacks if s.kind is StackKind.CALL_TRACE)
    assert trace.first_foreign is not None and trace.first_foreign.function == "kf_release_notifiers"


def test_a_hung_task_flushing_work_waits_for_the_work_and_a_mutex_stays_a_mutex() -> None:
    flush = HUNG_SRCU.replace(" __synchronize_srcu+0x1bd/0x2a0 kernel/rcu/srcutree.c:1398\n",
                              " wait_for_completion+0x2bf/0x5d0 kernel/sched/completion.c:153\n"
                              " __flush_work+0x9b9/0xbc0 kernel/workqueue.c:4247\n"
                              " flush_delayed_work+0x13e/0x190 kernel/workqueue.c:4290\n")  # fmt: skip
    got = facts(read(flush)[0])
    assert (got["waits for"], got["wait primitive"]) == ("work to finish", "__flush_work")
    mutex = HUNG_SRCU.replace(" __synchronize_srcu+0x1bd/0x2a0 kernel/rcu/srcutree.c:1398\n",
                              " __mutex_lock+0x724/0xe80 kernel/locking/mutex.c:747\n"
                              " mutex_lock_nested+0x2c/0x38 kernel/locking/mutex.c:804\n")  # fmt: skip
    mutex = mutex.replace(" __wait_for_common+0x3de/0x5f0 kernel/sched/completion.c:116\n", "")
    got = facts(read(mutex)[0])
    assert (got["waits for"], got["wait primitive"]) == ("a mutex", "__mutex_lock")


# ---------------------------------------------------------------- hung tasks: one khungtaskd pass, one locks list


_hung = hung_report


#: Two hung tasks of one pass, then the one list: the first waits for a device's mutex that a third task holds
#: (listed with the same address), the second for the rtnl mutex whose holder is not listed (a running task).
_RTNL_FRAMES = " rtnl_lock+0x17/0x20 net/core/rtnetlink.c:80\n do_setlink+0x10/0x200 net/core/rtnetlink.c:900\n"
HUNG_PASS = (
    _hung("kworker/0:0", 9, " hub_activate+0xb7/0x1ea0 drivers/usb/core/hub.c:1096\n")
    + _hung("syz.1.2", 77, _RTNL_FRAMES)
    + """
Showing all locks held in the system:
3 locks held by kworker/0:0/9:
 #0: ffff88801a882148 ((wq_completion)events){+.+.}-{0:0}, at: process_scheduled_works+0x9b4/0x17b0
 #1: ffff888023888198 (&dev->mutex){....}-{4:4}, at: device_lock include/linux/device.h:884 [inline]
 #1: ffff888023888198 (&dev->mutex){....}-{4:4}, at: hub_activate+0xb7/0x1ea0 drivers/usb/core/hub.c:1096
2 locks held by kworker/1:0/24:
 #0: ffff888023888198 (&dev->mutex){....}-{4:4}, at: usb_disconnect+0x10/0x950 drivers/usb/core/hub.c:2300
 #1: ffff888023999198 (&dev->mutex){....}-{4:4}, at: usb_disconnect+0x10/0x950 drivers/usb/core/hub.c:2300
1 lock held by syz.1.2/77:
 #0: ffffffff8f3798c8 (rtnl_mutex){+.+.}-{3:3}, at: rtnl_lock+0x17/0x20 net/core/rtnetlink.c:80
3 locks held by kworker/u8:1/30:
1 lock held by khungtaskd/31:
 #0: ffffffff8e33bee0 (rcu_read_lock){....}-{1:3}, at: debug_show_all_locks+0x2e/0x180 kernel/locking/lockdep.c:6770

=============================================
"""
)


def test_the_hung_tasks_of_one_pass_read_their_locks_and_holders_from_the_one_list() -> None:
    first, second = read(HUNG_PASS)
    got = facts(first)
    # The first task's lock is in the list printed after the second task's report; its holder is the other task
    # whose entry is the same lock at the same address (not kworker/1:0's other &dev->mutex).
    assert (got["waits for lock"], got["lock holder"], got["lock holder pid"], got["lock held since"]) == (
        "&dev->mutex",
        "kworker/1:0",
        24,
        "usb_disconnect",
    )
    lines = HUNG_PASS.splitlines()
    assert "(&dev->mutex)" in lines[first.fact_at("waits for lock") or 0]
    assert "hub_activate" in lines[first.fact_at("waits for lock") or 0]
    assert "usb_disconnect" in lines[first.fact_at("lock holder") or 0]
    assert first.cause is not None and first.cause.cls == "lock_wait"
    assert "&dev->mutex in hub_activate, held by kworker/1:0 (pid 24) since usb_disconnect" in first.cause.statement
    # The rtnl mutex's holder prints no entry (a running task): the lock is named, no holder guessed.
    got = facts(second)
    assert got["waits for lock"] == "rtnl_mutex"
    assert "lock holder" not in got


def test_the_finding_of_an_earlier_task_of_a_pass_cites_its_lock_and_holder_lines_past_its_report() -> None:
    # The first task's lock and holder are read from the list in the second task's report: its finding cites them.
    reports = list(scan_chunks([HUNG_PASS.encode()]))
    whys = explain_reports(reports)
    first = next(g for g in group_reports(reports) if g.first.start_line == 1)
    lines = HUNG_PASS.splitlines()
    lock = 1 + next(i for i, t in enumerate(lines) if "(&dev->mutex)" in t and "hub_activate+" in t)
    holder = 1 + next(i for i, t in enumerate(lines) if "usb_disconnect" in t)
    assert lock > first.first.end_line and holder > first.first.end_line
    evidence = explained_finding("pass.log", first, whys[1]).evidence
    cited = {e.locator.start: (e.locator.name, e.excerpt) for e in evidence}
    assert cited[holder] == ("cause", lines[holder - 1])  # the cause names the holder, read there
    assert cited[lock] == ("waits for lock", lines[lock - 1])
    # Only the lines read past a report are carried with its reading: the last task's list is its own.
    assert [at for at, _ in whys[1].read_past] == [lock - 1, holder - 1]
    assert whys[reports[-1].start_line].read_past == ()


def test_a_pass_repeated_byte_for_byte_reads_as_the_pass_it_repeats() -> None:
    """A log printing one khungtaskd pass three times: the second pass's tasks repeat the first's bytes, each moved by
    the same number of lines (its reading is the first's), the third's last task is no such repeat (read on its own);
    every pass reads the pass once alone, each lock and holder at the lines of its own copy."""
    text = HUNG_PASS * 3 + "usb 1-1: end\n"
    reports = list(scan_chunks([text.encode()]))
    assert [len(members) for members in hung_passes(reports)] == [2, 2, 2]
    moved = [r.repeats() for r in reports]
    assert [m[1] if m else None for m in moved][2:4] == [43, 43]  # (the second pass: both moved alike)
    whys = explain_reports(reports)
    once = read(HUNG_PASS)
    lines = text.splitlines()
    for start in range(0, 6, 2):
        pair = [whys[r.start_line] for r in reports[start : start + 2]]
        assert pair == once
        first = reports[start].start_line
        assert "hub_activate" in lines[first - 1 + (pair[0].fact_at("waits for lock") or 0)]
        assert "usb_disconnect" in lines[first - 1 + (pair[0].fact_at("lock holder") or 0)]


def test_a_lock_listed_by_two_other_tasks_has_no_holder_named() -> None:
    # The holder and a waiter not yet reported both list a sleeping lock: which one holds it is not known.
    two = HUNG_PASS.replace("2 locks held by kworker/1:0/24:\n",
                            "1 lock held by udevd/40:\n"
                            " #0: ffff888023888198 (&dev->mutex){....}-{4:4}, at: usb_reset+0x10/0x90 a.c:1\n"
                            "2 locks held by kworker/1:0/24:\n")  # fmt: skip
    got = facts(read(two)[0])
    assert got["waits for lock"] == "&dev->mutex"
    assert "lock holder" not in got


def test_the_last_split_lock_entry_of_a_report_stays_in_it() -> None:
    # The console split khungtaskd's own "#0:" entry, the report's last lines, into pieces without report structure.
    site = ", at: debug_show_all_locks+0x2e/0x180 kernel/locking/lockdep.c:6770\n"
    whole = " #0: ffffffff8e33bee0 (rcu_read_lock){....}-{1:3}" + site
    pieces = " #0: \nffffffff8e33bee0\n (rcu_read_lock\n){....}-{1:3}\n" + site
    split = HUNG_PASS.replace(whole, pieces).replace("\n=============================================\n", "")
    lock = read(split)[-1].locks[-1]
    assert [lock.name, lock.task, lock.site] == ["rcu_read_lock", "khungtaskd/31", "debug_show_all_locks+0x2e/0x180"]


#: A task preempted on its way out of an interrupt whose stack has a frame line the console cut short.
HUNG_PREEMPTED = """\
INFO: task kworker/u8:7:279 blocked for more than 143 seconds.
      Not tainted 6.16.0 #0
task:kworker/u8:7    state:D stack:0     pid:279   tgid:279   ppid:2      task_flags:0x4208060 flags:0x00000010
Call trace:
 __switch_to+0x414/0x834 arch/arm64/kernel/process.c:742 (T)
 __schedule+0x1414/0x2a28 kernel/sched/core.c:6790
 preempt_schedule_irq+0x80/0x188 kernel/sched/core.c:7113
 arm64_preempt_schedule_irq+0x44/0x58 arch/arm64/kernel/entry-common.c:305
 el1_interrupt+0x3c/0x
 el1_interrupt+0x3c/0x54 arch/arm64/kernel/entry-common.c:668
 el1h_64_irq_handler+0x18/0x24 arch/arm64/kernel/entry-common.c:673
 el1h_64_irq+0x6c/0x70 arch/arm64/kernel/entry.S:592
 arch_local_irq_restore arch/arm64/include/asm/irqflags.h:195 [inline] (P)
 put_cpu_partial+0x154/0x1c0 mm/slub.c:3258 (P)
 __slab_free+0x1b0/0x280 mm/slub.c:4513
 crda_timeout_work+0x38/0x68 net/wireless/reg.c:543
 process_one_work+0x7e8/0x155c kernel/workqueue.c:3238
 kthread+0x5fc/0x75c kernel/kthread.c:464
 ret_from_fork+0x10/0x20 arch/arm64/kernel/entry.S:843
"""


def test_a_frame_line_cut_short_is_skipped_and_the_stack_goes_on() -> None:
    (why,) = read(HUNG_PREEMPTED)
    (trace,) = why.stacks
    assert [f.function for f in trace.frames][-3:] == ["process_one_work", "kthread", "ret_from_fork"]
    assert trace.skipped == (8,)
    got = facts(why)
    assert (got["frame line cut"], why.fact_at("frame line cut")) == ("el1_interrupt+0x3c/0x", 8)
    # Preempted in an interrupt: it waits to run again, where the interrupt hit (past the entry and irqflags).
    assert (got["waits for"], got["waits in"]) == ("the CPU (preempted in an interrupt)", "put_cpu_partial")
    # A line that only looks cut, at a stack's end, still ends it.
    (why,) = read(HUNG_PREEMPTED.split(" el1_interrupt+0x3c/0x54", maxsplit=1)[0])
    assert why.stacks[0].skipped == ()


# ---------------------------------------------------------------- RCU: who ran while the kthread starved

RCU_STARVED = """\
rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:
rcu: 	(detected by 1, t=10502 jiffies, g=14269, q=1142 ncpus=2)
rcu: All QSes seen, last rcu_preempt kthread activity 10500 (4294965239-4294954739), jiffies_till_next_fqs=1
rcu: rcu_preempt kthread starved for 10500 jiffies! g14269 f0x2 RCU_GP_WAIT_FQS(5) ->state=0x0 ->cpu=0
rcu: RCU grace-period kthread stack dump:
task:rcu_preempt     state:R  running task     stack:27128 pid:16    tgid:16    ppid:2      flags:0x00080000
Call Trace:
 <TASK>
 __schedule+0x150e/0x5070 kernel/sched/core.c:6866
 schedule+0x165/0x360 kernel/sched/core.c:6963
 rcu_gp_kthread+0x99/0x390 kernel/rcu/tree.c:2285
 </TASK>
rcu: Stack dump where RCU GP kthread last ran:
Sending NMI from CPU 1 to CPUs 0:
NMI backtrace for cpu 0
CPU: 0 UID: 0 PID: 6253 Comm: kf-spin Not tainted 6.18.0-kf #0
RIP: 0010:kf_spin+0x4b/0x110 drivers/kf/kf.c:193
Call Trace:
 <TASK>
 kf_spin+0x4b/0x110 drivers/kf/kf.c:193
 kf_ioctl+0x99a/0xed0 drivers/kf/kf.c:4492
 do_syscall_64+0x6d/0x140 arch/x86/entry/common.c:83
 </TASK>
"""


def test_a_starved_grace_period_kthread_names_the_task_that_ran_on_its_cpu() -> None:
    (why,) = read(RCU_STARVED)
    got = facts(why)
    # The kthread's own dump says it was runnable ("R running task"): it is not the task that ran instead.
    assert (got["running task"], got["running pid"], got["running on CPU"]) == ("kf-spin", 6253, 0)
    assert why.cause is not None and "(kf-spin ran instead" in why.cause.statement


# ---------------------------------------------------------------- faults: a wild address, a failed ASSERT()

WILD_GPF = """\
Oops: general protection fault, probably for non-canonical address 0xe003fbfffff80000: 0000 [#1] PREEMPT SMP KASAN
KASAN: maybe wild-memory-access in range [0x001fffffffc00000-0x001fffffffc00007]
CPU: 1 PID: 5570 Comm: kworker/1:5 Not tainted 6.10.0-kf #0
RIP: 0010:kf_get_pool+0xcb/0x1c0 drivers/kf/kf.c:887
Call Trace:
 <TASK>
 kf_queue+0x200/0x1020 drivers/kf/kf.c:2301
 </TASK>
"""


def test_a_wild_memory_access_is_a_corrupted_pointer() -> None:
    (why,) = read(WILD_GPF)
    assert why.cause is not None and why.cause.cls == "corrupted_values"
    assert "[0x001fffffffc00000-0x001fffffffc00007] (maybe wild-memory-access)" in why.cause.statement
    # A NULL-based range stays a NULL pointer dereference.
    null = WILD_GPF.replace("maybe wild-memory-access in range [0x001fffffffc00000-0x001fffffffc00007]",
                            "null-ptr-deref in range [0x0000000000000028-0x000000000000002f]")  # fmt: skip
    (other,) = read(null)
    assert other.cause is not None and other.cause.cls == "null_pointer"


ASSERTION_BUG = """\
assertion failed: kf->reserved >= ticket->bytes, in fs/kf/space.c:436
------------[ cut here ]------------
kernel BUG at fs/kf/space.c:436!
Oops: invalid opcode: 0000 [#1] PREEMPT SMP KASAN
CPU: 0 PID: 25603 Comm: kf-worker Not tainted 6.6.0-kf #0
RIP: 0010:kf_remove_ticket fs/kf/space.c:436 [inline]
RIP: 0010:kf_grant_tickets+0x59f/0x5d0 fs/kf/space.c:468
Call Trace:
 <TASK>
 kf_release_bytes+0x506/0x5f0 fs/kf/rsv.c:295
 </TASK>
"""


def test_a_filesystem_assert_names_the_condition_that_was_false() -> None:
    (why,) = read(ASSERTION_BUG)
    got = facts(why)
    assert (got["condition"], got["assertion at"]) == ("kf->reserved >= ticket->bytes", "fs/kf/space.c:436")
    assert why.cause is not None
    assert why.cause.statement.startswith("an assertion failed: `kf->reserved >= ticket->bytes` was false at ")
    xfs = ASSERTION_BUG.replace(
        "assertion failed: kf->reserved >= ticket->bytes, in fs/kf/space.c:436",
        "XFS: Assertion failed: kf->reserved >= ticket->bytes, file: fs/kf/space.c, line: 436",
    )
    assert facts(read(xfs)[0])["assertion at"] == "fs/kf/space.c:436"
    # An assertion of another place does not word this BUG's condition.
    elsewhere = ASSERTION_BUG.replace("in fs/kf/space.c:436\n", "in fs/kf/other.c:12\n")
    (other,) = read(elsewhere)
    assert other.cause is not None and "a BUG_ON (or BUG) at fs/kf/space.c:436" in other.cause.statement


# ---------------------------------------------------------------- who allocated and freed a socket

KASAN_SOCKET = """\
==================================================================
BUG: KASAN: slab-use-after-free in kf_accept+0x3f/0x50 net/kf/af_kf.c:300
Read of size 8 at addr ffff8880336f0500 by task kf-worker/2839

Call Trace:
 <TASK>
 kf_accept+0x3f/0x50 net/kf/af_kf.c:300
 </TASK>

Allocated by task 9307:
 kasan_save_stack+0x33/0x60 mm/kasan/common.c:47
 __kasan_kmalloc+0xaa/0xb0 mm/kasan/common.c:387
 __kmalloc_noprof+0x1e8/0x400 mm/slub.c:4174
 sk_prot_alloc+0x1a8/0x2a0 net/core/sock.c:2096
 sk_alloc+0x36/0xb90 net/core/sock.c:2149
 kf_sock_alloc+0x3b/0x3a0 net/kf/af_kf.c:148
 do_syscall_64+0x6d/0x140 arch/x86/entry/common.c:83

Freed by task 11681:
 kasan_save_stack+0x33/0x60 mm/kasan/common.c:47
 __kasan_slab_free+0x32/0x50 mm/kasan/common.c:256
 kfree+0x12a/0x3b0 mm/slub.c:4598
 sk_prot_free net/core/sock.c:2132 [inline]
 __sk_destruct+0x5eb/0x720 net/core/sock.c:2224
 sk_destruct+0xc2/0xf0 net/core/sock.c:2239
 __sk_free+0xf4/0x3e0 net/core/sock.c:2250
 sk_free+0x6a/0x90 net/core/sock.c:2261
 sock_put include/net/sock.h:1884 [inline]
 kf_sock_kill+0x171/0x2d0 net/kf/af_kf.c:1235
 do_syscall_64+0x6d/0x140 arch/x86/entry/common.c:83

The buggy address belongs to the object at ffff8880336f0000
 which belongs to the cache kmalloc-2k of size 2048
The buggy address is located 1280 bytes inside of
 freed 2048-byte region [ffff8880336f0000, ffff8880336f0800)
==================================================================
"""


def test_a_socket_is_allocated_and_freed_by_the_protocol_past_the_socket_layer() -> None:
    (why,) = read(KASAN_SOCKET)
    first = {s.kind: s.first_foreign.function for s in why.stacks if s.first_foreign is not None}
    assert (first[StackKind.ALLOCATED], first[StackKind.FREED]) == ("kf_sock_alloc", "kf_sock_kill")
    socket_layer = " sk_prot_alloc+0x1a8/0x2a0 net/core/sock.c:2096\n sk_alloc+0x36/0xb90 net/core/sock.c:2149\n"
    skb = KASAN_SOCKET.replace(socket_layer, " skb_clone+0x20c/0x390 net/core/skbuff.c:2052\n")
    (other,) = read(skb)
    allocated = next(s for s in other.stacks if s.kind is StackKind.ALLOCATED)
    assert allocated.first_foreign is not None and allocated.first_foreign.function == "kf_sock_alloc"


def test_a_lockdep_call_trace_names_the_function_past_the_header_helper() -> None:
    text = CIRCULAR_HEADER_HELPERS + (
        "stack backtrace:\n"
        "CPU: 1 PID: 77 Comm: kf-worker Not tainted 6.2.0-kf #1\n"
        "Call trace:\n"
        " dump_backtrace+0x1c4/0x1f0 arch/arm64/kernel/stacktrace.c:156\n"
        " check_noncircular+0x2cc/0x378 kernel/locking/lockdep.c:2178\n"
        " lock_acquire+0x100/0x1f8 kernel/locking/lockdep.c:5668\n"
        " down_write+0x5c/0x88 kernel/locking/rwsem.c:1562\n"
        " filemap_invalidate_lock include/linux/fs.h:801 [inline]\n"
        " kf_setattr+0x804/0xb38 fs/kf/inode.c:5545\n"
        " do_syscall_64+0x6d/0x140 arch/x86/entry/common.c:83\n"
    )
    (why,) = read(text)
    trace = next(s for s in why.stacks if s.kind is StackKind.CALL_TRACE)
    assert trace.first_foreign is not None and trace.first_foreign.function == "kf_setattr"


LOCKDEP_OWN_WARN = """\
------------[ cut here ]------------
DEBUG_LOCKS_WARN_ON(1)
WARNING: CPU: 0 PID: 11 at kernel/locking/lockdep.c:232 __lock_acquire+0x573/0x1fd0 kernel/locking/lockdep.c:5087
Modules linked in:
CPU: 0 PID: 11 Comm: kf-worker Not tainted 6.9.0-kf #0
RIP: 0010:__lock_acquire+0x573/0x1fd0 kernel/locking/lockdep.c:5087
Call Trace:
 <TASK>
 lock_acquire+0x1ed/0x550 kernel/locking/lockdep.c:5754
 _raw_spin_lock_nested+0x31/0x40 kernel/locking/spinlock.c:378
 kf_lock_queue+0x1e1/0x670 drivers/kf/kf.c:1942
 kf_work+0x13f/0x7f0 drivers/kf/kf.c:2075
 </TASK>
"""


def test_lockdeps_own_warning_gives_its_site_and_message() -> None:
    (why,) = read(LOCKDEP_OWN_WARN)
    assert why.cls == "lockdep"
    got = facts(why)
    assert (got["warning at"], got["message"]) == ("kernel/locking/lockdep.c:232", "DEBUG_LOCKS_WARN_ON(1)")
    assert why.cause is not None and why.cause.cls == "bug_condition"
    assert "the message: DEBUG_LOCKS_WARN_ON(1)" in why.cause.statement


def test_khungtaskds_own_backtrace_names_the_hung_task_check() -> None:
    text = HUNG_SRCU + (
        "NMI backtrace for cpu 0\n"
        "CPU: 0 PID: 30 Comm: khungtaskd Not tainted 6.11.0-kf #0\n"
        "Call Trace:\n"
        " <TASK>\n"
        " dump_stack_lvl+0x116/0x1f0 lib/dump_stack.c:120\n"
        " nmi_cpu_backtrace+0x27b/0x390 lib/nmi_backtrace.c:113\n"
        " nmi_trigger_cpumask_backtrace+0x29c/0x300 lib/nmi_backtrace.c:62\n"
        " trigger_all_cpu_backtrace include/linux/nmi.h:162 [inline]\n"
        " check_hung_uninterruptible_tasks kernel/hung_task.c:223 [inline]\n"
        " watchdog+0xf0c/0x1240 kernel/hung_task.c:379\n"
        " </TASK>\n"
    )
    why = read(text)[0]
    firsts = [s.first_foreign.function for s in why.stacks if s.first_foreign is not None]
    assert firsts == ["kf_release_notifiers", "check_hung_uninterruptible_tasks"]


def test_a_locks_held_entry_the_console_split_is_read_whole() -> None:
    text = HUNG_SRCU + (
        "\nShowing all locks held in the system:\n"
        "3 locks held by kf-worker/25:\n"
        " #0: \n"
        "ffff888021e92948\n"
        " (\n"
        "(wq_completion)kf_wq){+.+.}-{0:0}, at: process_one_work+0x1277/0x1b40 kernel/workqueue.c:3206\n"
        " #1: ffffc900001f7d80 ((work_completion)(&kf->work)){+.+.}-{0:0}, at: process_one_work+0x921/0x1b40\n"
        " #2: \n"
        "ffff8880254ed190 (&kf->mutex){....}-{3:3}, at: device_lock include/linux/device.h:1009 [inline]\n"
        "ffff8880254ed190 (&kf->mutex){....}-{3:3}, at: kf_attach+0x7f/0x4b0 drivers/kf/kf.c:1004\n"
        "1 lock held by khungtaskd/30:\n"
        " #0: \n"
        "ffffffff8ddb9fe0\n"
        " (rcu_read_lock\n"
        "){....}-{1:2}\n"
        ", at: rcu_lock_acquire include/linux/rcupdate.h:326 [inline]\n"
        ", at: debug_show_all_locks+0x75/0x340 kernel/locking/lockdep.c:6626\n"
        "1 lock held by kf-reader/31:\n"
        " #0: ffff8880254ed190 (&kf->mutex){....}-{3:3}, at: kf_read+0x7f/0x4b0 drivers/kf/kf.c:104\n"
        "\n=============================================\n"
    )
    why = read(text)[0]
    assert [(k.number, k.name, k.task, k.site) for k in why.locks if k.role == "held"] == [
        (0, "(wq_completion)kf_wq", "kf-worker/25", "process_one_work+0x1277/0x1b40"),
        (1, "(work_completion)(&kf->work)", "kf-worker/25", "process_one_work+0x921/0x1b40"),
        (2, "&kf->mutex", "kf-worker/25", "kf_attach+0x7f/0x4b0"),
        (0, "rcu_read_lock", "khungtaskd/30", "debug_show_all_locks+0x75/0x340"),
        (0, "&kf->mutex", "kf-reader/31", "kf_read+0x7f/0x4b0"),
    ]


def _timed(text: str, seconds: float) -> str:
    """``text`` with every line printed at ``seconds`` of printk time."""
    return "".join(f"[{seconds:12.6f}] {line}\n" for line in text.splitlines())


_LIST = ("Showing all locks held in the system:\n1 lock held by khungtaskd/31:\n"
         " #0: ffffffff8e33bee0 (rcu_read_lock){....}-{1:3}, at: debug_show_all_locks+0x2e/0x180\n")  # fmt: skip
_IN_A = " ext4_file_write+0x10/0x90 fs/ext4/file.c:100\n"
_IN_B = " xfs_file_read+0x10/0x90 fs/xfs/xfs_file.c:200\n"


def _cycles(text: str) -> tuple[list[list[int]], dict[str, Cause]]:
    """The passes (their reports' first lines) and the lock-cycle causes of a log."""
    reports = list(scan_chunks([text.encode()]))
    whys = explain_reports(reports)
    return [[r.start_line for r in p] for p in hung_passes(reports)], lock_cycle_causes(reports, whys)


def test_two_passes_a_second_apart_are_two_passes_for_the_locks_and_the_lock_cycles_alike() -> None:
    # Each pass ends with its own list: the two tasks, 1 s apart, were not reported together, so no cycle of them
    # (the time alone, within the 2 s of a pass, put them in one before).
    two = _timed(_hung("a.task", 10, _IN_A) + _LIST, 100.0) + _timed(_hung("b.task", 11, _IN_B) + _LIST, 101.0)
    passes, causes = _cycles(two)
    assert len(passes) == 2 and all(len(p) == 1 for p in passes)
    assert causes == {}
    # One pass, one list after both: the two tasks on mutexes in different functions may be a cycle.
    one = _timed(_hung("a.task", 10, _IN_A), 100.0) + _timed(_hung("b.task", 11, _IN_B) + _LIST, 101.0)
    passes, causes = _cycles(one)
    assert len(passes) == 1 and len(passes[0]) == 2
    assert len(causes) == 2 and {c.cls for c in causes.values()} == {"lock_cycle"}


def test_the_json_stack_lists_the_frame_lines_it_skipped() -> None:
    # A reader of the JSON sees which frame line the stack went on past: its absolute line and its text.
    (report,) = scan_chunks([HUNG_PREEMPTED.encode()])
    (stack,) = why_to_dict(report, explain_reports([report])[report.start_line])["stacks"]
    assert stack["skipped"] == [{"line": 9, "text": "el1_interrupt+0x3c/0x"}]
    assert HUNG_PREEMPTED.splitlines()[9 - 1].strip() == "el1_interrupt+0x3c/0x"
    (whole,) = read(HUNG_PREEMPTED.replace(" el1_interrupt+0x3c/0x\n", ""))
    assert whole.stacks[0].skipped == ()


# ---------------------------------------------------------------- a known class with nothing read says so

#: A kmemleak report cut off after its header: no unreferenced object, no backtrace.
LEAK_CUT = """\
[  300.100000] kmemleak: 1 new suspected memory leaks (see /sys/kernel/debug/kmemleak)
[  300.200000] BUG: memory leak
[  300.200001]
"""


def test_a_known_class_with_nothing_read_says_what_is_missing_and_states_no_cause() -> None:
    reports = list(scan_chunks([LEAK_CUT.encode()]))
    whys = explain_reports(reports)
    (report,) = reports
    why = whys[report.start_line]
    assert why.cls == "memory-leak" and why.cause is None
    (fact,) = why.facts
    assert fact.name == "body read" and isinstance(fact.value, NotAvailable)
    last = report.start_line + fact.at  # the last line with text (the header), not the blank line after it
    assert LEAK_CUT.splitlines()[last - 1].endswith("BUG: memory leak")
    assert str(fact.value) == (
        f"not available: the report ends at line {last} with none of its unreferenced object and backtrace read"
    )
    assert why.fact("body read") is None  # a value not available is no value
    # Rendered as the other values not available are: in the JSON an object with the reason, in the text the
    # reason after "not available:"; the finding cites the line.
    assert why_to_dict(report, why)["facts"] == [
        {"name": "body read", "value": {"not_available": fact.value.reason}, "line": last}
    ]
    (group,) = group_reports(reports)
    finding = explained_finding("leak.log", group, why)
    assert any(f.name == "body read" and f.value == str(fact.value) for f in finding.facts)
    assert any(e.locator.start == last for e in finding.evidence)  # here the header, cited once


def test_a_report_with_its_values_read_has_no_body_read_fact() -> None:
    whole = LEAK_CUT.replace(
        "[  300.200001]\n",
        "[  300.200001] unreferenced object 0xffff888012345678 (size 32):\n"
        '[  300.200002]   comm "syz-executor", pid 5000, jiffies 4294967296\n',
    )
    (why,) = read(whole)
    assert why.cls == "memory-leak" and why.fact("object size") == 32
    assert all(f.name != "body read" for f in why.facts)


def test_the_oom_task_dump_with_the_rss_split_names_the_task() -> None:
    """A 6.12 kernel's task dump has rss_anon, rss_file and rss_shmem after rss: the memory user was named
    "278528        0             0 kf_memhog" (pgtables_bytes, swapents and oom_score_adj read as its name)."""
    from pathlib import Path

    log = (
        Path(__file__).resolve().parents[3]
        / "vmcore_fixtures"
        / "kernels"
        / "6.12"
        / "cases"
        / "09-oom"
        / "console.log"
    )
    text = log.read_text()
    assert "rss_anon rss_file rss_shmem" in text
    [oom] = [w for w in read(text) if w.consumers]
    top = oom.consumers[0]
    assert (top.kind, top.name, top.pid, top.bytes) == ("task", "kf_memhog", 50, 29666 * 4096)
    assert oom.cause is not None and oom.cause.statement.startswith("memory exhausted by task kf_memhog (pid 50)")


# ---------------------------------------------------------------- a stall's CPU read past another report

# Written here in the format of a syzkaller console (caller prefixes): the stalled CPU's own dump follows the
# WARNING its stall check hit, so the stall's frame is read past that report's header.  syzbot titles it by the
# operation (smp_call_function), the CPU was caught in smp_call_function_single.
STALL_PAST_A_WARNING = """\
[  100.000001][    C0] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:
[  100.000002][    C0] rcu: \tTasks blocked on level-0 rcu_node (CPUs 0-1):
[  100.000003][    C0] ------------[ cut here ]------------
[  100.000004][    C0] WARNING: CPU: 0 PID: 321 at kernel/sched/core.c:1000 kf_checker+0x10/0x80
[  100.000005][    C0] CPU: 0 PID: 321 Comm: kf-test Not tainted 6.1.0 #1
[  100.000006][    C0] Call Trace:
[  100.000007][    C0]  <IRQ>
[  100.000008][    C0]  dump_stack+0x10/0x20
[  100.000009][    C0]  __warn+0x20/0x30
[  100.000010][    C0] RIP: 0010:kf_checker+0x10/0x80
[  100.000011][    C0]  rcu_sched_clock_irq+0x100/0x200
[  100.000012][    C0]  update_process_times+0x10/0x20
[  100.000013][    C0]  </IRQ>
[  100.000014][    C0]  asm_sysvec_apic_timer_interrupt+0x12/0x20
[  100.000015][    C0] RIP: 0010:smp_call_function_single+0x123/0x456
[  100.000016][    C0]  on_each_cpu_cond_mask+0x40/0x90
[  100.000017][    C0]  kf_sync_all+0x18/0x20
[  100.000018][    C0]  __x64_sys_ioctl+0x17e/0x210
[  100.000019][    C0]  do_syscall_64+0x73/0xe0
[  100.000020][    C0]  entry_SYSCALL_64_after_hwframe+0x44/0xa9
"""


def test_a_stalls_guilty_frame_is_where_its_cpu_was_caught_also_past_another_report() -> None:
    # The fact said the title's frame (smp_call_function) and cited the line of smp_call_function_single: a stall
    # whose own lines have it says where the CPU was caught, and one read past another report's header now too.
    reports = list(scan_chunks([STALL_PAST_A_WARNING.encode()]))
    stall = reports[0]
    assert stall.title == "INFO: rcu detected stall in smp_call_function"  # syzbot's title, unchanged
    assert stall.frame == "smp_call_function_single"
    whys = explain_reports(reports)
    assert facts(whys[1])["running"] == "smp_call_function_single"
    assert next(f.at for f in whys[1].facts if f.name == "running") == 14  # line 15, not the header
    (group, *_) = group_reports(reports)
    finding = explained_finding("stall.log", group, whys[1])
    assert finding.fact("guilty frame") == "smp_call_function_single"
    (cited,) = (e for e in finding.evidence if e.locator.name == "guilty frame")
    excerpt = "[  100.000015][    C0] RIP: 0010:smp_call_function_single+0x123/0x456"  # with its time stamp
    assert (cited.locator.start, cited.excerpt) == (15, excerpt)


# ---------------------------------------------------------------- the register block of an oops


def test_registers_of_each_family() -> None:
    """x86's (64- and 32-bit names), arm64's and 32-bit arm's register lines read to their values, each family's
    names found on lines that hold none of the other's letters (arm's ``sp``/``fp``/``ip`` line: a ``p`` alone; an
    x86 line of ``E`` names alone), from the kernel ``RIP:``/``pc :`` line to the end of its block."""
    from detectors.dmesg.code import registers
    from detectors.dmesg.lines import parse_line

    def regs(text: str) -> dict[str, int]:
        lines = [parse_line(n, t) for n, t in enumerate(text.splitlines(), 1)]
        got, rip_at = registers(lines)
        assert rip_at is not None
        return got.as_dict()

    x86 = regs(
        "Oops: 0000 [#1] SMP\n"
        "RAX: 0000000000000099 RBX: ffff888012345678\n"  # above the RIP line: not the kernel frame's
        "RIP: 0010:kf_read+0x12/0x40\n"
        "RSP: 0018:ffffc90000a1be48 EFLAGS: 00010246\n"
        "RAX: 0000000000000001 RBX: ffff888000000002 R10: 0000000000000003\n"
        "EDX: 00000004 ESI: 00000005\n"
        "Call Trace:\n"
        "RAX: 0000000000000077\n"
    )
    assert x86 == {"rsp": 0xFFFFC90000A1BE48, "rax": 1, "rbx": 0xFFFF888000000002, "r10": 3, "rdx": 4, "rsi": 5}
    arm64 = regs(
        "pc : kf_read+0x12/0x40\n"
        "lr : kf_write+0x8/0x10\n"
        "sp : ffff800080001000\n"
        "x29: ffff800080001010 x28: 0000000000000002\n"
        "Call trace:\n"
    )
    assert arm64 == {"sp": 0xFFFF800080001000, "x29": 0xFFFF800080001010, "x28": 2}
    arm = regs(
        "pc : [<c0333330>]    lr : [<c0333320>]    psr: 60000013\n"
        "sp : c1a2bd30  ip : 00000001  fp : c1a2bd4c\n"
        "r10: e89fa198  r9 : 00000002\n"
    )
    assert arm == {"sp": 0xC1A2BD30, "ip": 1, "fp": 0xC1A2BD4C, "r10": 0xE89FA198, "r9": 2}


def test_registers_of_an_old_oops_end_at_its_block_and_skip_its_frame_lines() -> None:
    """An old kernel prints its call trace's frames right after the register block, without a heading: frame lines
    hold an ``x`` and a ``p`` (``0x7d``, ``vprintk``) but no ``": "``, which an arm register name needs after it; a
    ``": "`` line of arm names amid them is still read."""
    from detectors.dmesg.code import registers
    from detectors.dmesg.lines import parse_line

    text = (
        "RIP: 0010:add_uevent_var+0x2e7/0x310\n"
        "RSP: 0018:ffff8881d8c368b0 EFLAGS: 00010286\n"
        "RAX: 0000000000000000 RBX: ffff8881d16de000\n"
        " ? vprintk_func+0x7d/0x113\n"
        " kobject_uevent_env+0x6e0/0x11f0\n"
        "x1 : 0000000000000007\n"
        " sp: 00000000000000ff\n"
    )
    got, rip_at = registers([parse_line(n, t) for n, t in enumerate(text.splitlines(), 1)])
    assert rip_at == 0
    assert got.as_dict() == {"rsp": 0xFFFF8881D8C368B0, "rax": 0, "rbx": 0xFFFF8881D16DE000, "x1": 7, "sp": 0xFF}


def _code_bytes_by_token(text: str) -> tuple[bytes, int] | None:
    """The x86 Code: line's bytes and marked byte, one token at a time (what ``code._x86_bytes`` gives at once)."""
    data = bytearray()
    mark = None
    for token in text.split():
        if token.startswith("<"):
            mark = len(data)
        data.append(int(token.strip("<>"), 16))
    return (bytes(data), mark) if mark is not None else None


@given(st.lists(st.tuples(st.integers(0, 255), st.booleans(), st.booleans()), min_size=1, max_size=70))
def test_code_bytes_are_the_tokens_bytes_and_the_last_marked_one(tokens: list[tuple[int, bool, bool]]) -> None:
    """Every text the Code: pattern takes (bytes of two hex digits, each maybe in ``<`` and ``>``, one blank apart)
    gives the bytes and the last ``<`` byte's index, as reading it token by token does; none without a ``<``."""
    from detectors.dmesg.code import _X86_CODE, _x86_bytes

    text = " ".join(
        ("<" if opens else "") + f"{value:02x}" + (">" if closes else "") for value, opens, closes in tokens
    )
    m = _X86_CODE.match(f"Code: {text}")
    assert m is not None and m.group(1) == text
    assert _x86_bytes(text) == _code_bytes_by_token(text)


@given(
    st.text(alphabet=" \t\n\x1c\u3000", max_size=2),
    st.lists(st.text(alphabet="<>0a9fgF \t", min_size=0, max_size=5), max_size=8),
    st.sampled_from(["Code: ", "Code:", "Code:  ", "code: ", "x Code: ", ""]),
)
def test_x86_code_reads_what_its_pattern_takes(blank: str, tokens: list[str], head: str) -> None:
    """The Code: line's text read token by token is the pattern's group, and None where the pattern does not match
    (blanks around the line, tokens of any shape, one blank or other blanks apart)."""
    from detectors.dmesg.code import _X86_CODE, _x86_code

    for body in (f"{blank}{head}{' '.join(tokens)}{blank}", f"{head}{' '.join(tokens)}", f"{head}{''.join(tokens)}"):
        m = _X86_CODE.match(body)
        assert _x86_code(body) == (m.group(1) if m is not None else None), body


@given(
    st.lists(st.sampled_from(["0a", "9f", "<0a>", "<9f", "a9>", "ff"]), max_size=8),
    st.text(alphabet="<>0a9fgF \t", max_size=5),
    st.integers(min_value=0, max_value=8),
    st.sampled_from(["Code: ", "Code:  ", "  Code: ", "Code:"]),
)
@example([], "0a9", 0, "Code: ")
@example(["0a"], "<0a>>", 1, "Code: ")
@example(["0a", "9f"], "", 1, "Code: ")
@example(["0a", "9f"], "\t", 1, "Code: ")
@example(["0a"], "<<0a", 0, "Code: ")
def test_x86_code_among_valid_bytes_reads_what_its_pattern_takes(
    tokens: list[str], odd: str, at: int, head: str
) -> None:
    """One token of any shape among valid bytes (random tokens alone are rarely all valid but one, the case where
    the token reader and the pattern could part): the reader gives the pattern's group, or None where it fails."""
    from detectors.dmesg.code import _X86_CODE, _x86_code

    line = [*tokens[:at], odd, *tokens[at:]]
    for body in (f"{head}{' '.join(line)}", f"{head}{' '.join(line)} ", f"{head}{' '.join(tokens)}"):
        m = _X86_CODE.match(body)
        assert _x86_code(body) == (m.group(1) if m is not None else None), body


@given(st.lists(st.text(alphabet="aIPpc# \u00e9WnR:[", max_size=12), max_size=12))
def test_lines_holding_finds_the_lines_with_a_word(bodies: list[str]) -> None:
    """The lines an automaton's pass over a report's text finds are those a substring test of each line finds."""
    from ahocorasick_rs import BytesAhoCorasick, MatchKind

    from detectors.dmesg.stacks import lines_holding

    words = ("IP", "pc", "#PF:", "WnR", "in range [", "\u00e9a")
    search = BytesAhoCorasick([w.encode() for w in words], matchkind=MatchKind.LeftmostFirst)
    expected = [i for i, body in enumerate(bodies) if any(w in body for w in words)]
    assert lines_holding("\n".join(bodies).encode(), search) == expected


def _stamped(text: str, second: int) -> str:
    """Each line of ``text`` with a printk time of that second."""
    return "".join(f"[{second:5d}.{n:06d}] {line}\n" for n, line in enumerate(text.splitlines()))


def test_a_repeats_lines_are_parsed_at_its_own_numbers() -> None:
    """A report repeated (the memo's copy of the same text elsewhere in the log): its lines as read are those that
    parsing its own gives, byte-for-byte repeats (made from the report they repeat) and repeats whose times differ."""
    from detectors.dmesg.lines import parse_line
    from detectors.dmesg.repeat import origin
    from detectors.dmesg.why import own_lines

    timed = _stamped(HUNG_PASS, 10) + _stamped(HUNG_PASS, 20) + _stamped(HUNG_PASS, 30)
    for text, texts_equal in ((HUNG_PASS * 3, True), (timed, False)):
        reports = list(scan_chunks([text.encode()]))
        repeats = [r for r in reports if origin(r) is not r]
        assert repeats, text[:40]
        for report in reports:
            assert list(own_lines(report)) == [parse_line(n, t) for n, t in report.lines]
        for report in repeats:
            texts = [t for _, t in origin(report).lines] == [t for _, t in report.lines]
            assert texts is texts_equal


def test_the_lines_that_stand_inside_a_stack() -> None:
    """Context markers, register dumps, a Code: line, ``PID = 1`` and blank lines stand inside a stack; other text
    does not."""
    from detectors.dmesg.stacks import _INSIDE

    inside = ["<IRQ>", " </IRQ>", "\t<TASK> ", "</NMI>", "<SOFTIRQ>", "<EOI>", "<#DF>", "RIP: 0010:f+0x1/0x2",
              "RAX: 0000000000000000 RBX: 0000000000000001", "CR2: 0000000000000000", "ORIG_RAX: ff", "pc : f+0x4/0x8",
              "x29: 0000 x28: 0001", "r7:00000000 r6:826229c4", "1fa0: 00000000 00000000", "Code: 48 89 e5",
              "PID = 1", "--- interrupt: 901", "Exception stack(0xc0b1bfa8 to 0xc0b1bff0)", "(stack is not available)",
              "", "  "]  # fmt: skip
    outside = ["<TASKS>", "<#df>", "< IRQ>", "f+0x1/0x2", "Modules linked in: a", "---[ end trace 0 ]---", "abc: x"]
    assert [line for line in inside if _INSIDE.match(line) is None] == []
    assert [line for line in outside if _INSIDE.match(line) is not None] == []


def test_a_heading_is_read_by_its_word_and_pattern_as_by_the_patterns_alone() -> None:
    """Each stack heading's word is one of the automaton's; every line of the bundled logs (and headings made of each
    kind's text) is the heading the patterns alone read, tried in order without the words."""
    import glob
    from pathlib import Path

    from detectors.dmesg.lines import parse_line
    from detectors.dmesg.stacks import _HEADING_WORDS, SECTION_HEADINGS, _heading

    assert {word for _, word, _ in SECTION_HEADINGS} <= set(_HEADING_WORDS)
    root = Path(__file__).resolve().parents[3]
    bodies = {
        parse_line(0, line).body
        for log in glob.glob(str(root / "tests/detectors/dmesg/**/*.log"), recursive=True)
        for line in Path(log).read_text(errors="replace").splitlines()
    }
    bodies |= {"Allocated:", "Freed by task 7:", "kfence-#1 allocated by task 9 on cpu 0 at 1.5s:", " freed by task 3:",
               "Uninit was created at:", "Local variable x created at:", "page last allocated via order 0, pid 12",
               "page last free pid 5 tgid 5 stack trace:", "-> #1 (&a->lock){+.+.}:", "backtrace (crc 1a2b):",
               "Call trace:", "Backtrace:", "Second to last potentially related work creation:"}  # fmt: skip
    found = 0
    for body in bodies:
        alone = next(
            ((kind, m.groupdict().get("task")) for kind, _, p in SECTION_HEADINGS if (m := p.search(body))), None
        )
        got = _heading(body)
        assert (got is None) == (alone is None), body
        if got is not None and alone is not None:
            found += 1
            assert got == (alone[0], int(alone[1]) if alone[1] else None), body
    assert found > 40


# ---------------------------------------------------------------- the function a damaged report still names

# A WARNING whose call trace is lost (the log ends): the WARNING line names the site itself, the WARN's own address.
WARNING_ALONE = """\
[ 1722.511384] ------------[ cut here ]------------
[ 1722.511385] WARNING: CPU: 3 PID: 1975 at drivers/kf/kf.c:241 kf_free_context+0x118/0x180()
"""
NULL_MEMBER = """\
[  120.100000] BUG: kernel NULL pointer dereference, address: 0000000000000008
[  120.100010] #PF: supervisor read access in kernel mode
[  120.100040] Oops: 0000 [#1] PREEMPT SMP NOPTI
[  120.100050] CPU: 1 PID: 4242 Comm: kf-reader Not tainted 6.1.0-kf #1
[  120.100060] RIP: 0010:kf_read_entry+0x1c/0x40 [kf]
[  120.100100] Call Trace:
[  120.100110]  <TASK>
[  120.100120]  kf_read+0x5a/0xa0 [kf]
[  120.100130]  vfs_read+0xb0/0x2d0
[  120.100170]  </TASK>
"""
SLUB_ALREADY_FREE = "[  367.131148] BUG kmalloc-8 (Tainted: G    B         ): Object already free\n"
LIST_DEL_NEXT = """\
[ 50.71] list_del corruption. next->prev should be ffff8801d8caa528, but was ffffffff868a8010. (next=ffff8801d8caa600)
[   50.719785] ------------[ cut here ]------------
[   50.724628] kernel BUG at lib/list_debug.c:62!
[   50.729330] invalid opcode: 0000 [#1] SMP
[   50.767597] RIP: 0010:__list_del_entry_valid+0x370/0x390
[   50.850936] Call Trace:
[   50.853563]  kf_session_close+0x2cf/0x490
[   50.857828]  kf_release+0x2f6/0x470
"""


def test_a_warning_without_its_trace_is_placed_where_its_line_says() -> None:
    (why,) = read(WARNING_ALONE)
    assert facts(why)["warning site"] == "kf_free_context+0x118/0x180"
    assert why.cause is not None
    assert why.cause.statement == "an assertion failed: a WARN_ON (or WARN) at drivers/kf/kf.c:241 in kf_free_context"


SYMBOLIZED_WARNING = """\
[   86.960000][ T3004] ------------[ cut here ]------------
[   86.960044][ T3004] WARNING: CPU: 0 PID: 3004 at include/linux/kfq.h:12 kfq_outer+0x6c/0x74
[   86.960060][ T3004] CPU: 0 PID: 3004 Comm: kfq-tool Not tainted 6.1.0-kf #1
[   86.960070][ T3004] RIP: 0010:kfq_inlined include/linux/kfq.h:12 [inline]
[   86.960071][ T3004] RIP: 0010:kfq_outer+0x6c/0x74 fs/kfq/kfq.c:40
[   86.960080][ T3004] Call Trace:
[   86.960081][ T3004]  <TASK>
[   86.960082][ T3004]  kfq_ioctl+0x10/0x20 fs/kfq/kfq.c:80
[   86.960083][ T3004]  __x64_sys_ioctl+0x10/0x20 fs/ioctl.c:870
[   86.960084][ T3004]  </TASK>
"""


def test_a_rip_line_names_the_warning_site_before_the_warning_line_does() -> None:
    """A symbolized log's RIP names the inlined function the WARN is in; the WARNING line's function (printed first)
    is the site only where no RIP line names one."""
    (why,) = read(SYMBOLIZED_WARNING)
    assert facts(why)["warning site"] == "kfq_inlined"
    assert why.cause is not None and why.cause.statement.endswith("in kfq_inlined, on the way from kfq_outer")


def test_crash_commands_name_what_crash_reads() -> None:
    """``dis -rl`` up to an address crash parses ("f+0x1c": crash rejects a trace's "f+0x1c/0x40" as an invalid
    expression); a report that names no function gets no ``dis`` of one; the list node whose pointer is wrong, as
    the message printed it, for ``kmem``."""
    (null,) = read(NULL_MEMBER)
    assert null.cause is not None and null.cause.next_command == "crash> dis -rl kf_read_entry+0x1c"
    (free,) = read(SLUB_ALREADY_FREE)
    assert free.cause is not None and free.cause.cls == "double_free"
    assert free.cause.next_command.startswith("crash> bt  #") and "unknown" not in free.cause.next_command
    why = next(w for w in read(LIST_DEL_NEXT) if w.cause is not None)
    assert why.cause is not None
    assert why.cause.next_command == (
        "crash> dis -l kf_session_close; crash> kmem 0xffff8801d8caa528  # in a dump of this crash: whose object it is"
    )
    # Without a call trace: the list node's kmem still follows the backtrace.
    cut = LIST_DEL_NEXT.split("[   50.767597]", maxsplit=1)[0]  # the log ends after "invalid opcode": no RIP, no trace
    alone = next(w for w in read(cut) if w.cause is not None)
    assert alone.cause is not None and alone.cause.next_command.startswith("crash> bt; crash> kmem 0xffff8801d8caa528")
    # A RIP that names no function ("0x86": a jump to nowhere) is no function to disassemble.
    (jump,) = read(
        NULL_MEMBER.replace("kf_read_entry+0x1c/0x40 [kf]", "0x86").replace("  kf_read+0x5a/0xa0 [kf]\n", "")
    )
    assert jump.cause is not None and jump.cause.next_command.startswith("crash> bt  #")


# ---------------------------------------------------------------- page faults printed with hashed pointers

HASHED_FAULT = """\
[   80.100000] BUG: unable to handle kernel paging request at 000000007c8b2954
[   80.100010] IP: kf_fetch+0x11/0x40
[   80.100020] PGD 5e28067 P4D 5e28067 PUD 5e29063 PMD 0
[   80.100030] Thread overran stack, or stack corrupted
[   80.100040] Oops: 0000 [#1] SMP KASAN
[   80.100050] CPU: 1 PID: 4078 Comm: kf-worker Not tainted 4.15.0-rc2-kf #1
[   80.100060] task: 00000000ad16368f task.stack: 00000000e9d18cac
[   80.100070] RIP: 0010:kf_fetch+0x11/0x40
[   80.100080] RSP: 0000:ffff8801d818fd48 EFLAGS: 00010006
[   80.100090] CR2: ffffffff88cd0078 CR3: 00000001c154f000 CR4: 00000000001406e0
[   80.100100] Call Trace:
[   80.100110]  kf_unwind+0x2d/0x330
[   80.100120]  kthread+0x37a/0x440
"""


def test_a_fault_address_printed_hashed_is_not_classified() -> None:
    """v4.15-rc kernels hash %p: the fault line's 000000007c8b2954 is no user-space address (syzkaller's log 120
    was told it was); the report's own task line shows the hashing, and the thread-overran-stack line is read."""
    (why,) = read(HASHED_FAULT)
    got = facts(why)
    said = got["address is"]
    assert isinstance(said, NotAvailable), said
    assert "hashed" in said.reason and "00000000ad16368f" in said.reason and "0xffffffff88cd0078" in said.reason
    assert got["stack"] == "the kernel says: thread overran its stack, or the stack is corrupted"
    # The same report with the real pointers of an unhashed kernel classifies the address as before.
    (plain,) = read(
        HASHED_FAULT.replace("00000000ad16368f", "ffff8801ad16368f").replace("00000000e9d18cac", "ffff8801e9d18cac")
    )
    assert facts(plain)["address is"] == "a user-space address where the kernel expects a kernel pointer"


def test_a_task_number_past_pid_max_is_said_not_a_pid() -> None:
    """A damaged KASAN report's "Allocated by task 3625515936:" is no task (pid_max is at most 4 M)."""
    text = KASAN_SOCKET.replace("Allocated by task 9307:", "Allocated by task 3625515936:")
    (good,) = read(KASAN_SOCKET)
    (bad,) = read(text)
    assert facts(good)["allocated by task"] == 9307
    assert facts(bad)["allocated by task"] == "3625515936: not a pid (past 4194304)"


OLD_KASAN_CUT = """\
[   55.468844] ==================================================================
[   55.476243] BUG: KASAN: use-after-free in kf_consume+0x39f/0x530 at addr ffff8801cbeda574
[   55.484627] Read of size 4 by task kf-worker/4676
[   55.490296] Object at ffff8801cbeda480, in cache kf_cache size: 248
[   55.497470] Allocated:
[   55.499957] PID = 4655
[   55.502578] Freed:
[   55.504709] PID = 4655
[   55.507369] Memory state around the buggy address:
"""


def test_an_old_kasan_reports_tasks_are_read_and_a_cut_freed_stack_is_not_sent_for() -> None:
    """Older KASAN printed "PID = N" under "Allocated:" / "Freed:"; a report cut before the freed-by frames
    (syzkaller's log 106) must not send the reader to a stack the log lacks."""
    (why,) = read(OLD_KASAN_CUT)
    got = facts(why)
    assert (got["allocated by task"], got["freed by task"], got["pid"]) == (4655, 4655, 4676)
    assert why.cause is not None and why.cause.next_command.startswith("this log has no freed-by stack (cut)")
    (whole,) = read(KASAN_SOCKET)
    assert whole.cause is not None and "(freed-by stack)" in whole.cause.next_command


# ---------------------------------------------------------------- user-eyes round 4: what the why names

KASAN_KZFREE = """\
[   53.730124] ==================================================================
[   53.730124] BUG: KASAN: use-after-free in kf_recvmsg+0x1758/0x1bc0
[   53.736605] Read of size 4 at addr ffff8801c1afdb5c by task kf-worker/3568
[   53.736700] Call Trace:
[   53.736710]  kf_recvmsg+0x1758/0x1bc0
[   53.736720]  sock_recvmsg+0xc9/0x110
[   53.766339] Allocated by task 3568:
[   53.766345]  save_stack+0x43/0xd0
[   53.766350]  kasan_kmalloc+0xad/0xe0
[   53.766355]  __kmalloc_track_caller+0x15e/0x760
[   53.766360]  kstrndup+0x59/0xa0
[   53.766367]  kf_create_tfm+0x82/0x2e0
[   53.766424] Freed by task 3568:
[   53.766430]  save_stack+0x43/0xd0
[   53.766436]  kasan_slab_free+0x71/0xc0
[   53.766442]  kfree+0xca/0x250
[   53.766450]  kzfree+0x28/0x30
[   53.766456]  kf_destroy_tfm+0x140/0x2e0
[   53.766470]  kf_sock_destruct+0x13c/0x220
[   53.766564] The buggy address belongs to the object at ffff8801c1afdb40
[   53.766564]  which belongs to the cache kmalloc-128 of size 128
[   53.766570] ==================================================================
"""


def test_the_freer_and_the_allocator_are_named_past_the_slab_helpers() -> None:
    """kzfree (kfree_sensitive since 5.9), like kfree, is the slab's free, not who freed; kstrndup likewise."""
    (why,) = read(KASAN_KZFREE)
    assert (facts(why)["freed by"], facts(why)["allocated by"]) == ("kf_destroy_tfm", "kf_create_tfm")
    assert why.cause is not None and why.cause.statement.endswith("freed by kf_destroy_tfm")
    for helper in ("kfree_sensitive", "vfree", "__vunmap", "___cache_free", "kvfree_call_rcu", "kfree_rcu_work"):
        (other,) = read(KASAN_KZFREE.replace(" kzfree+0x28/0x30", f" {helper}+0x28/0x30"))
        assert facts(other)["freed by"] == "kf_destroy_tfm", helper
    for helper in ("kvrealloc", "kasprintf", "kvmalloc_node", "kmalloc_track_caller"):
        (other,) = read(KASAN_KZFREE.replace(" kstrndup+0x59/0xa0", f" {helper}+0x59/0xa0"))
        assert facts(other)["allocated by"] == "kf_create_tfm", helper


def test_an_old_kasan_reports_tasks_are_cited_at_the_line_holding_the_pid() -> None:
    """ "Allocated:" then "PID = 4655": the fact's line is the second, where the value is."""
    (report,) = scan_chunks([OLD_KASAN_CUT.encode()])
    why = explain_reports([report])[report.start_line]
    lines = OLD_KASAN_CUT.splitlines()
    for name in ("allocated by task", "freed by task"):
        (fact,) = [f for f in why.facts if f.name == name]
        assert lines[report.start_line + fact.at - 1].endswith("PID = 4655"), name
    (new,) = scan_chunks([KASAN_SOCKET.encode()])
    fact = next(f for f in explain_reports([new])[new.start_line].facts if f.name == "freed by task")
    assert KASAN_SOCKET.splitlines()[new.start_line + fact.at - 1] == "Freed by task 11681:"


RCU_STARVED_FQS = """\
[  328.823841] rcu: INFO: rcu_preempt self-detected stall on CPU
[  328.830097] rcu: \t1-...!: (3 GPs behind) idle=19a/1/0x4000000000000002 softirq=12356/12357 fqs=2
[  328.839607] rcu: \t (t=10500 jiffies g=12045 q=155)
[  328.844567] rcu: rcu_preempt kthread starved for 10492 jiffies! g12045 f0x0 RCU_GP_WAIT_FQS(5) ->state=0x0 ->cpu=0
[  328.855046] rcu: RCU grace-period kthread stack dump:
[  328.860235] rcu_preempt     R  running task    22872    10      2 0x80000000
[  328.867450] Call Trace:
[  328.870074]  __schedule+0x86c/0x1ed0
[  328.919601]  schedule+0xfe/0x460
[  328.950461]  schedule_timeout+0x140/0x260
[  328.969038]  rcu_gp_kthread+0x9d9/0x2310
[  329.236894]  kthread+0x35a/0x420
[  329.240000] NMI backtrace for cpu 1
[  329.240100] CPU: 1 PID: 8314 Comm: kf-vcpu Not tainted 4.19.0-kf #1
[  329.240200] Call Trace:
[  329.240300]  <IRQ>
[  329.240400]  nmi_cpu_backtrace+0x63/0x110
[  329.240500]  rcu_dump_cpu_stacks+0x175/0x1c2
[  329.240600]  rcu_check_callbacks+0x112d/0x1cd0
[  329.240700]  update_process_times+0x2d/0x70
[  329.240800]  tick_sched_timer+0x59/0x170
[  329.240900]  apic_timer_interrupt+0xf/0x20
[  329.241000]  </IRQ>
[  329.661757] RIP: 0010:kf_mmu_page_fault+0x2a3/0x1ad0
[  329.661800]  kf_vcpu_run+0x1a3/0x2000
[  329.661900]  kf_vcpu_ioctl+0x7c5/0x1160
[  329.662000]  do_vfs_ioctl+0x1de/0x1790
[  329.662100]  ksys_ioctl+0xa9/0xd0
[  329.662200]  do_syscall_64+0x1b9/0x820
"""


def test_a_stall_whose_grace_period_kthread_starved_says_so_and_names_its_cpu() -> None:
    """The kthread idle for 10492 of the stall's 10500 jiffies, runnable (->state=0x0) on CPU 0: starved of CPU
    there (Documentation/RCU/stallwarn.rst); the stalled CPU's loop is the lesser candidate."""
    (why,) = read(RCU_STARVED_FQS)
    got = facts(why)
    assert (got["kthread state"], got["kthread last ran on CPU"]) == ("0x0", 0)
    assert why.cause is not None and why.cause.cls == "rcu_stall"
    statement = why.cause.statement
    assert "kthread did not run for 10492 of the stall's 10500 jiffies: it was starved of CPU" in statement
    assert "runnable (->state=0x0) but not running on CPU 0" in statement
    assert statement.index("starved") < statement.index("less likely, CPU 1 running") < statement.index("cond_resched")
    assert "CPU 0" in why.cause.next_command and "cond_resched" not in why.cause.next_command
    # A kthread idle for a small part of the stall: the CPU's own loop stays the cause.
    (short,) = read(RCU_STARVED_FQS.replace("starved for 10492 jiffies", "starved for 2100 jiffies"))
    assert short.cause is not None and "starved" not in short.cause.statement
    assert "a loop without cond_resched()" in short.cause.statement
    # The kthread last ran on the stalled CPU itself: that CPU's loop kept it off, and stays the cause.
    (own,) = read(RCU_STARVED_FQS.replace("->cpu=0", "->cpu=1"))
    assert own.cause is not None and own.cause.statement.startswith("RCU stall: CPU 1 did not pass a quiescent state")
    assert own.cause.statement.endswith("; it kept the rcu_preempt grace-period kthread, last on CPU 1, from running "
                                        "for 10492 jiffies")  # fmt: skip
    # The task that ran on the kthread's CPU, where the log dumps that CPU, is named.
    (ran,) = read(RCU_STARVED.replace("All QSes seen", "Some QSes seen"))
    assert ran.cause is not None and "not running on CPU 0 (kf-spin, pid 6253, ran there)" in ran.cause.statement


_STACK_END_CODE = (
    "f8 83 e0 01 48 89 c6 48 89 85 80 fc ff ff e8 bb a7 e1 ff 48 8b 85 80 fc ff ff 4c 8b ad 88 fc ff ff 48 85 c0 "
    "0f 85 83 0e 00 00 <e8> 6f a6 e1 ff 4c 89 ea 48 b8 00 00 00 00 00 fc ff df 48 c1 ea 03"
)
STACK_END = f"""\
[  200.999653] Kernel panic - not syncing: corrupted stack end detected inside scheduler
[  201.007844] CPU: 1 PID: 7 Comm: kworker/u4:0 Not tainted 4.20.0-kf #1
[  201.029181] Call Trace:
[  201.031778]  dump_stack+0x1d3/0x2c6
[  201.040625]  panic+0x2ad/0x55f
[  201.076801]  __schedule+0x1ec6/0x1ed0
[  201.120555]  preempt_schedule_irq+0x87/0x110
[  201.124972]  retint_kernel+0x1b/0x2d
[  201.128689] RIP: 0010:kf_add_page_locked+0x48c/0x1840
[  201.134577] Code: {_STACK_END_CODE}
[  201.153480] RSP: 0018:ffff8880a9e14668 EFLAGS: 00000246 ORIG_RAX: ffffffffffffff13
[  201.161200] RAX: 0000000000000000 RBX: ffff8880a9e14a08 RCX: ffffffff819fff65
[  201.168506] RDX: 0000000000000000 RSI: 0000000000000000 RDI: 0000000000000007
[  201.175804] RBP: ffff8880a9e14a30 R08: ffff8880a9e061c0 R09: ffffed1015ce5b8f
[  201.183079] R10: ffffea00052dfc80 R11: ffff8880ae72dc7b R12: ffff88821a1f6430
[  201.190351] R13: ffffea00052dfc80 R14: 0000000000000003 R15: dead000000000100
[  201.261080]  kf_add_page+0x355/0xdb0
[  201.324288]  kf_get_page+0x53a/0xf00
[  201.382778]  kf_fs_map_blocks+0xa80/0x1e70
[  201.771231]  kf_fs_writepages+0x2573/0x4180
[  201.850921]  do_writepages+0x9a/0x1a0
[  202.092390]  wb_workfn+0xee9/0x1790
[  202.218262]  process_one_work+0xc90/0x1c40
[  202.322376]  worker_thread+0x17f/0x1390
[  202.396119]  kthread+0x35a/0x440
[  202.403283]  ret_from_fork+0x3a/0x50
[  202.408257] Kernel Offset: disabled
"""


def test_a_corrupted_stack_end_is_a_stack_overflow_found_at_a_preemption_not_a_fault() -> None:
    """schedule_debug()'s panic: the RIP is where an interrupt preempted the task; its stack overflowed."""
    (why,) = read(STACK_END)
    got = facts(why)
    assert got["interrupted at"] == "kf_add_page_locked+0x48c/0x1840"
    assert got["interrupted instruction"].startswith("call ")
    assert not {"faulting function", "faulting instruction", "memory operand", "access"} & got.keys()
    assert why.cause is not None and why.cause.cls == "stack_overflow"
    statement = why.cause.statement
    assert "kworker/u4:0's stack ran past its end and overwrote STACK_END_MAGIC" in statement
    assert "when an interrupt preempted it in kf_add_page_locked+0x48c/0x1840" in statement
    assert "(11 frames): kf_add_page_locked <- kf_add_page <- kf_get_page" in statement
    assert statement.endswith("kthread <- ret_from_fork")
    # Found at a voluntary schedule (no interrupt, no RIP line): the chain starts below the scheduler's frames.
    voluntary = "\n".join(
        line.replace("retint_kernel+0x1b/0x2d", "_cond_resched+0x1b/0x2d")
        for line in STACK_END.splitlines()
        if not any(word in line for word in ("RIP:", "Code:", "RSP:", "RAX:", "RDX:", "RBP:", "R10:", "R13:"))
    )
    (called,) = read(voluntary)
    assert called.cause is not None and "interrupted at" not in facts(called)
    assert "when it called schedule(); the deepest call chain printed (10 frames): kf_add_page <-" in (
        called.cause.statement
    )


_GPF_CODE = (
    "00 fc ff df 44 89 e3 49 8d 7c de 08 48 89 fa 48 c1 ea 03 80 3c 02 00 0f 85 b6 37 00 00 49 8b 5c de 08 48 85 db "
    "0f 84 28 fb ff ff <f0> ff 83 98 01 00 00 49 8d 85 68 08 00 00 48 89 c2 48 89 44 24"
)
GPF_SPINLOCK = f"""\
[   27.260630] kasan: GPF could be caused by NULL-ptr deref or user memory access
[   27.260634] general protection fault: 0000 [#1] PREEMPT SMP KASAN
[   27.260650] CPU: 1 PID: 3377 Comm: kf-test Not tainted 4.4.107-kf #1
[   27.260671] RIP: 0010:[<ffffffff8123487f>]  [<ffffffff8123487f>] __lock_acquire+0x61f/0x4b50
[   27.260680] RSP: 0018:ffff8801d4b2f8f0  EFLAGS: 00010006
[   27.260690] RAX: dffffc0000000000 RBX: dead4ead00000000 RCX: 0000000000000000
[   27.260700] RDX: 1bd5a9d5a0000033 RSI: 0000000000000000 RDI: ffff8801d189c480
[   27.260710] RBP: ffff8801d4b2fa90 R08: 0000000000000001 R09: 0000000000000000
[   27.260720] R10: 0000000000000000 R11: 0000000000000000 R12: 0000000000000000
[   27.260730] R13: ffff8801d3b0c740 R14: ffff8801d189c478 R15: 0000000000000000
[   27.260787] Call Trace:
[   27.260790]  [<ffffffff81239a0a>] lock_acquire+0x15a/0x430
[   27.260800]  [<ffffffff825b8a89>] kf_remove_request+0x69/0x110
[   27.260810]  [<ffffffff825b8b99>] kf_release+0x59/0x110
[   27.261026] Code: {_GPF_CODE}
"""


def test_a_pointer_holding_a_spinlocks_magic_is_a_wrong_or_stale_object() -> None:
    """0xdead4ead00000000 is a debug spinlock_t's lock word and SPINLOCK_MAGIC, read where a pointer was."""
    (why,) = read(GPF_SPINLOCK)
    got = facts(why)
    assert got["base register"] == "rbx = 0xdead4ead00000000"
    assert str(got["base register is"]).startswith("SPINLOCK_MAGIC 0xdead4ead")
    assert why.cause is not None and why.cause.cls == "corrupted_values"
    assert why.cause.statement.startswith("a wrong or stale object: rbx = 0xdead4ead00000000, loaded from ")
    assert "r14 = 0xffff8801d189c478 points into or over a spinlock_t" in why.cause.statement
    assert why.cause.next_command.startswith("crash> kmem 0xffff8801d189c478")


LIST_POISON_GPF = """\
[  220.100000] general protection fault, probably for non-canonical address 0xdead000000000122: 0000 [#1] PREEMPT SMP
[  220.100010] CPU: 5 PID: 812 Comm: kf-reclaim Not tainted 6.6.30-kf #1
[  220.100030] RIP: 0010:kf_unlink_entry+0x61/0xd0
[  220.100050] RSP: 0018:ffffc90000a3fb50 EFLAGS: 00010246
[  220.100060] RAX: dead000000000122 RBX: ffff888104a3c000 RCX: 0000000000000000
[  220.100070] RDX: ffff888104a3c0f0 RSI: 0000000000000000 RDI: ffff888104a3c000
[  220.100080] Call Trace:
[  220.100081]  <TASK>
[  220.100082]  kf_shrink_list+0x1a6/0x410
[  220.100087]  kthread+0xef/0x120
[  220.100088]  </TASK>
"""


def test_list_poison2_is_named_as_itself_not_as_list_poison1_plus_an_offset() -> None:
    """0xdead000000000122 is LIST_POISON2 (0x122 + POISON_POINTER_DELTA, include/linux/poison.h), the ->prev of a
    deleted entry; it is also LIST_POISON1 plus 0x22, which the address's fact said while the cause said LIST_POISON2
    (ue12 #7).  An offset past LIST_POISON2 is counted from it, the nearest base."""
    from detectors.dmesg.why import pointer_class

    got = facts(read(LIST_POISON_GPF)[0])
    assert "LIST_POISON2" in str(got["address is"]) and "LIST_POISON1" not in str(got["address is"]), got
    assert pointer_class(0xDEAD000000000122).startswith("LIST_POISON2")
    assert pointer_class(0xDEAD00000000012A).startswith("LIST_POISON2 plus 0x8")
    assert pointer_class(0xDEAD000000000108).startswith("LIST_POISON1 plus 0x8")
