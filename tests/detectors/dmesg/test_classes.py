"""General title conventions, one test per class of report (issue 18).

The logs here are written by the project in the kernel's formats; each test
names the convention it checks: system call entry names per architecture,
C++ and Rust symbols, generic helpers the guilty frame skips, corruption
marks, and the report kinds without a classic oops header.
"""

from __future__ import annotations

import dataclasses
import inspect

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from detectors.dmesg.frames import demangle, function_name, title_name
from detectors.dmesg.rules import RULES
from detectors.dmesg.scanner import scan_text
from detectors.dmesg.taint import taint_letters
from forensics.types.dmesg import KernelReport


def _log(*bodies: str, start: float = 100.0, context: str | None = None) -> str:
    """Lines with ``[ sec.usec]`` stamps (and a caller prefix when given), 1 ms apart."""
    caller = f"[{context:>6}]" if context else ""
    return "".join(f"[{start + i / 1000:12.6f}]{caller} {body}\n" for i, body in enumerate(bodies))


def _only(text: str) -> KernelReport:
    reports = [r for r in scan_text(text) if not r.is_event]
    assert len(reports) == 1, [r.title for r in reports]
    return reports[0]


_TAIL = ("RIP: 0033:0x7f0000001234", "RSP: 002b:00007ffd00000000 EFLAGS: 00000246", "</TASK>")


# --- system call entry points ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("symbol", "title"),
    [
        ("SyS_sendto", "sendto"),  # 4.x x86 SYSCALL_DEFINE wrapper
        ("SYSC_sendto", "sendto"),
        ("sys_sendto", "sendto"),  # older kernels and other arches
        ("ksys_read", "read"),  # the helper several entry points share
        ("__x64_sys_rmdir", "sys_rmdir"),  # x86-64 pt_regs stub: syzbot keeps sys_
        ("__ia32_sys_futex", "sys_futex"),
        ("__arm64_sys_socket", "sys_socket"),
        ("__se_sys_ioctl", "ioctl"),  # sign-extension wrapper
        ("__do_sys_bpf", "bpf"),  # the body of SYSCALL_DEFINE
        ("__sys_sendmsg", "sendmsg"),
        ("____sys_sendmsg", "sendmsg"),
        ("compat_SyS_ioctl", "ioctl"),
        ("ext4_file_write_iter", "ext4_file_write_iter"),  # not a system call: unchanged
    ],
)
def test_syscall_entry_names_per_kernel_and_arch(symbol: str, title: str) -> None:
    assert title_name(function_name(symbol)) == title


def test_syscall_entry_in_a_report_title() -> None:
    text = _log(
        "general protection fault, probably for non-canonical address 0xdffffc0000000003: 0000 [#1] SMP KASAN",
        "CPU: 1 PID: 4242 Comm: syz-executor Not tainted 6.6.0 #1",
        "RIP: 0010:ksys_write+0x5e/0x240",
        "Call Trace:",
        " <TASK>",
        " __x64_sys_write+0x73/0xb0",
        " do_syscall_64+0x3f/0x90",
        " entry_SYSCALL_64_after_hwframe+0x63/0xcd",
        *_TAIL,
    )
    report = _only(text)
    assert report.title == "general protection fault in write"
    assert report.frame == "write"
    # The trace keeps the symbols as printed (only compiler suffixes and the SYSCALL_DEFINE wrappers go).
    assert [f.function for f in report.trace][:1] == ["__x64_sys_write"]


# --- C++ and Rust symbols ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("symbol", "name"),
    [
        ("_RNvMs0_NtCs1234abcd_5mydrv4pathNtB5_5Table6insert", "<mydrv::path::Table>::insert"),  # Rust v0
        ("_ZN4core9panicking5panic17h0123456789abcdefE", "core::panicking::panic"),  # Rust legacy, hash dropped
        ("_ZN7android6binder4Node6updateEv", "android::binder::Node::update"),  # C++, parameters dropped
        ("_ZNK3drm6Device5flushEi.cold", "drm::Device::flush"),  # const method, compiler suffix
        ("__cfi__RNvCs1234abcd_5mydrv4init", "mydrv::init"),  # kCFI stub of a Rust function
        ("_raw_spin_lock", "_raw_spin_lock"),  # a C symbol that starts with an underscore
        ("_Zbogus", "_Zbogus"),  # not a valid mangling: left alone
    ],
)
def test_cpp_and_rust_symbols_are_demangled(symbol: str, name: str) -> None:
    assert function_name(symbol) == name


def test_demangle_leaves_c_names_alone() -> None:
    assert demangle("kfree") == "kfree"


def test_rust_panic_title_is_the_message_in_the_panicking_function() -> None:
    text = _log(
        "rust_kernel: panicked at drivers/net/phy/ax88796b_rust.rs:41:9:",
        "attempt to add with overflow",
        "------------[ cut here ]------------",
        "kernel BUG at rust/helpers/bug.c:7!",
        "Oops: invalid opcode: 0000 [#1] PREEMPT SMP",
        "CPU: 0 UID: 0 PID: 77 Comm: kworker/0:2 Not tainted 6.12.0 #1",
        "RIP: 0010:rust_helper_BUG+0x8/0x10",
        "Call Trace:",
        " <TASK>",
        " ? die+0x36/0x90",
        " _RNvCs1aB2cD3eF4_7___rustc17rust_begin_unwind+0x15b/0x160",
        " _RNvNtCs9jEwPDbx20M_4core9panicking9panic_fmt+0x84/0x90",
        " _RNvNtNtCs9jEwPDbx20M_4core9panicking11panic_const24panic_const_add_overflow+0xb2/0xc0",
        " _RNvMs_NtCs5xYz_13ax88796b_rust6driverNtB4_9PhyDriver11read_status+0x1e5/0x260",
        " phy_check_link_status+0x2f/0xe0",
        " phy_state_machine+0x7b/0x2a0",
        " process_one_work+0x1a0/0x3c0",
        " </TASK>",
    )
    report = _only(text)
    assert report.title == "attempt to add with overflow in <ax88796b_rust::driver::PhyDriver>::read_status"
    assert report.rule == "rust-panic"
    assert not report.corrupted


def test_a_cpp_frame_names_the_warning() -> None:
    text = _log(
        "WARNING: CPU: 2 PID: 900 at drivers/gpu/vendor/device.cpp:120 _ZN3drm6Device5flushEv+0x44/0x90 [vgpu]",
        "CPU: 2 PID: 900 Comm: render Not tainted 6.6.0 #1",
        "RIP: 0010:_ZN3drm6Device5flushEv+0x44/0x90 [vgpu]",
        "Call Trace:",
        " <TASK>",
        " _ZN3drm5Queue6submitEPNS_3JobE+0x20/0x80 [vgpu]",
        " vgpu_ioctl+0x90/0x120 [vgpu]",
        " </TASK>",
    )
    assert _only(text).title == "WARNING in drm::Device::flush"


# --- generic helpers the guilty frame skips ----------------------------------------------------


@pytest.mark.parametrize(
    "helper",
    [
        "_printk",  # printing helpers
        "vprintk_emit",
        "_dev_warn",
        "netdev_err",
        "__queue_work",  # workqueue and kthread plumbing (the queueing side)
        "kthread_create_on_node",
        "__set_page_owner",  # page-owner and stack-depot bookkeeping
        "stack_trace_save",  # (not stack_depot_save: a crash in the depot is titled there, as syzbot does)
        "memory_is_poisoned",  # sanitizer internals
        "__check_object_size",
        "_find_next_bit",  # library leaf functions
        "csum_partial",
        "bitmap_copy",
    ],
)
def test_generic_helpers_are_not_the_guilty_frame(helper: str) -> None:
    text = _log(
        "BUG: unable to handle page fault for address: ffffc90000a1b000",
        "#PF: supervisor read access in kernel mode",
        "Oops: 0000 [#1] PREEMPT SMP",
        "CPU: 0 PID: 311 Comm: scanner Not tainted 6.6.0 #1",
        f"RIP: 0010:{helper}+0x10/0x40",
        "Call Trace:",
        " <TASK>",
        f" {helper}+0x10/0x40",
        " mydrv_scan_table+0x55/0x120 [mydrv]",
        " mydrv_probe+0x31/0x80 [mydrv]",
        " </TASK>",
    )
    report = _only(text)
    assert report.title == "BUG: unable to handle kernel paging request in mydrv_scan_table"


def test_dispatch_frames_still_name_the_crash_site() -> None:
    # A crash inside the workqueue itself (a corrupted work item) is titled there, not marked corrupted.
    text = _log(
        "BUG: kernel NULL pointer dereference, address: 0000000000000008",
        "Oops: 0000 [#1] SMP",
        "CPU: 3 PID: 81 Comm: kworker/3:1 Not tainted 6.6.0 #1",
        "RIP: 0010:process_one_work+0x3a/0x3c0",
        "Call Trace:",
        " <TASK>",
        " worker_thread+0x4d/0x3e0",
        " kthread+0xf0/0x120",
        " ret_from_fork+0x2c/0x50",
        " </TASK>",
    )
    assert _only(text).title == "BUG: unable to handle kernel NULL pointer dereference in process_one_work"


def test_a_crash_inside_the_stack_depot_is_titled_there() -> None:
    # The stack depot is skipped as page-owner bookkeeping (reached through set_page_owner), not when the
    # bug is in it: a KMSAN report on its free list names it (syzbot: "... in stack_depot_save_flags").
    report = _only(
        _log(
            "=====================================================",
            "BUG: KMSAN: uninit-value in __list_del_entry_valid_or_report+0x19e/0x490 lib/list_debug.c:52",
            " __list_del_entry_valid_or_report+0x19e/0x490 lib/list_debug.c:52",
            " depot_pop_free lib/stackdepot.c:426 [inline]",
            " stack_depot_save_flags+0x3e9/0x7b0 lib/stackdepot.c:684",
            " stack_depot_save+0x12/0x20 lib/stackdepot.c:722",
            " ref_tracker_alloc+0x215/0x700 lib/ref_tracker.c:210",
            " linkwatch_fire_event+0x32b/0x6d0 net/core/link_watch.c:292",
            "",
            "CPU: 0 PID: 1 Comm: swapper/0 Not tainted 6.8.0 #0",
            "=====================================================",
        )
    )
    assert report.title == "KMSAN: uninit-value in stack_depot_save_flags"  # before: in linkwatch_fire_event


@pytest.mark.parametrize(
    ("first", "second", "title"),
    [
        # 6.18's WARNING: FILE:LINE at FUNC, CPU#n: the inlined function first, then the one it is in.
        (
            "WARNING: ./include/linux/ns_common.h:288 at __ns_ref_active_get include/linux/ns_common.h:288 [inline],"
            " CPU#1: syz.0.20/6007",
            "WARNING: ./include/linux/ns_common.h:288 at nsproxy_ns_active_get+0x8ab/0xcb0 fs/nsfs.c:690,"
            " CPU#1: syz.0.20/6007",
            "WARNING in nsproxy_ns_active_get",
        ),
        # The older header, symbolized the same way.
        (
            "WARNING: CPU: 1 PID: 10417 at mm/page_alloc.c:4619 __alloc_pages_slowpath mm/page_alloc.c:4619 [inline]",
            "WARNING: CPU: 1 PID: 10417 at mm/page_alloc.c:4619 __alloc_frozen_pages_noprof+0x1f21/0x23f0"
            " mm/page_alloc.c:5161",
            "WARNING in new_slab",
        ),
    ],
)
def test_a_header_naming_an_inlined_function_is_continued_by_the_next(first: str, second: str, title: str) -> None:
    # One report (before: a first one "WARNING in corrupted" for the [inline] line), titled by the rule's usual
    # frame choice from the second header on.
    report = _only(
        _log(
            "------------[ cut here ]------------",
            first,
            second,
            "Modules linked in:",
            "CPU: 1 UID: 0 PID: 6007 Comm: syz.0.20 Not tainted syzkaller #0 PREEMPT(full)",
            "RIP: 0010:nsproxy_ns_active_get+0x8ab/0xcb0 fs/nsfs.c:690"
            if "nsproxy" in second
            else "RIP: 0010:__alloc_frozen_pages_noprof+0x1f21/0x23f0 mm/page_alloc.c:5161",
            "Call Trace:",
            " <TASK>",
            *(
                (" switch_task_namespaces+0x3e/0x110 kernel/nsproxy.c:240",)
                if "nsproxy" in second
                else (
                    " alloc_pages_mpol+0x1fb/0x550 mm/mempolicy.c:2416",
                    " new_slab+0x265/0x330 mm/slub.c:2709",
                    " ___slab_alloc+0xcf2/0x1740 mm/slub.c:3891",
                    " xfs_init_fs_context+0x45/0x5e0 fs/xfs/xfs_super.c:2278",
                )
            ),
            " do_syscall_64+0xfa/0xfa0 arch/x86/entry/syscall_64.c:94",
            " entry_SYSCALL_64_after_hwframe+0x77/0x7f",
            *_TAIL,
        )
    )
    assert report.title == title
    assert not report.corrupted


def test_a_run_of_inline_headers_is_titled_by_its_last_line() -> None:
    # KASAN and KMSAN print one header line per inlined function, the outermost last (before: the first line was
    # the header, "KASAN: wild-memory-access in instrument_atomic_read include/linux/instrumented.h:NUM [inline]").
    report = _only(
        _log(
            "==================================================================",
            "BUG: KASAN: wild-memory-access in instrument_atomic_read include/linux/instrumented.h:68 [inline]",
            "BUG: KASAN: wild-memory-access in _test_bit include/asm-generic/bitops/instrumented-non-atomic.h:141"
            " [inline]",
            "BUG: KASAN: wild-memory-access in get_futex_key+0x595/0x1540 kernel/futex/core.c:587",
            "Read of size 8 at addr 1fffffff818b9088 by task syz-executor931/5831",
            "",
            "CPU: 0 UID: 0 PID: 5831 Comm: syz-executor931 Not tainted 6.15.0 #0",
            "Call Trace:",
            " <TASK>",
            " dump_stack_lvl+0x116/0x1f0 lib/dump_stack.c:120",
            " kasan_report+0xe0/0x110 mm/kasan/report.c:634",
            " get_futex_key+0x595/0x1540 kernel/futex/core.c:587",
            " futex_wake+0xea/0x530 kernel/futex/waitwake.c:165",
            " do_syscall_64+0xcd/0x230 arch/x86/entry/syscall_64.c:94",
            *_TAIL,
            "==================================================================",
        )
    )
    assert report.title == "KASAN: wild-memory-access Read in get_futex_key"


def test_an_inline_header_line_alone_is_still_a_report() -> None:
    # No second header after it: the [inline] line is the header (nothing is lost).
    report = _only(
        _log(
            "WARNING: CPU: 1 PID: 9 at mm/page_alloc.c:4619 __alloc_pages_slowpath mm/page_alloc.c:4619 [inline]",
            "Modules linked in:",
            "RIP: 0010:__alloc_pages_slowpath+0x1f21/0x23f0 mm/page_alloc.c:4619",
            "Call Trace:",
            " <TASK>",
            " kf_alloc+0x45/0x5e0 fs/xfs/xfs_super.c:2278",
            *_TAIL,
        )
    )
    assert report.title.startswith("WARNING in ")


def test_symbolized_arm32_backtrace_frames() -> None:
    # 32-bit arm's "[<pc>] (callee) from [<lr>] (caller+off/size)", as syzbot prints it with file:line before
    # the parenthesis closes (before: no frame was read and the WARNING was "in corrupted").
    report = _only(
        _log(
            "------------[ cut here ]------------",
            "WARNING: CPU: 0 PID: 12513 at mm/mmap.c:965 vma_merge+0x170/0x818 mm/mmap.c:965",
            "Modules linked in:",
            "CPU: 0 PID: 12513 Comm: syz-executor.1 Not tainted 6.4.0-rc5-syzkaller #0",
            "Hardware name: ARM-Versatile Express",
            "Backtrace: ",
            "[<817da338>] (dump_backtrace) from [<817da42c>] (show_stack+0x18/0x1c arch/arm/kernel/traps.c:256)",
            "[<817da414>] (show_stack) from [<817f6f14>] (__dump_stack lib/dump_stack.c:88 [inline])",
            "[<80242148>] (__warn) from [<802423a0>] (warn_slowpath_fmt+0xd8/0x1d8 kernel/panic.c:697)",
            "[<802422cc>] (warn_slowpath_fmt) from [<80465728>] (vma_merge+0x170/0x818 mm/mmap.c:965)",
            "[<804655b8>] (vma_merge) from [<80531bf8>] (userfaultfd_ioctl+0x1268/0x1534 fs/userfaultfd.c:2050)",
            "[<804e53cc>] (sys_ioctl) from [<80200060>] (ret_fast_syscall+0x0/0x1c arch/arm/mm/proc-v7.S:66)",
        )
    )
    assert report.title == "WARNING in vma_merge"
    assert [f.function for f in report.trace] == [
        "show_stack", "warn_slowpath_fmt", "vma_merge", "userfaultfd_ioctl", "ret_fast_syscall",
    ]  # fmt: skip


# --- corrupted reports -------------------------------------------------------------------------


def test_header_with_another_lines_output_merged_is_corrupted() -> None:
    text = (
        "[  331.001241] trusty: panic (caller [  331.008787] trusty: 0xffffffffe000fbb8): "
        "ASSERT FAILED at (lib/trusty/ipc.c:472): \n"
        "[  331.026926] trusty: !list_in_list(&chan->node)\n"
    )
    report = _only(text)
    assert report.title == "trusty: ASSERT FAILED:"
    assert report.corrupted
    assert report.corrupted_reason == "another line's output is merged into the header line"


def test_a_login_prompt_before_the_header_is_not_corruption() -> None:
    text = "syzkaller login: " + _log(
        "BUG: sleeping function called from invalid context at mm/slab.h:421",
        "in_atomic(): 1, irqs_disabled(): 0, non_block: 0, pid: 5, name: poller",
        "Call Trace:",
        " <TASK>",
        " __might_resched+0x10/0x20",
        " kmem_cache_alloc+0x30/0x200",
        " poll_refill+0x22/0x90",
        " </TASK>",
    )
    report = _only(text)
    assert report.title == "BUG: sleeping function called from invalid context in poll_refill"
    assert not report.corrupted


def test_call_trace_without_frames_is_corrupted() -> None:
    text = _log(
        "WARNING: CPU: 0 PID: 1 at fs/inode.c:330 drop_nlink+0x2a/0x40",
        "CPU: 0 PID: 1 Comm: init Not tainted 6.6.0 #1",
        "Call Trace:",
        "some unrelated console text",
    )
    report = _only(text)
    assert report.corrupted


def test_report_cut_before_the_culprit_is_titled_in_corrupted() -> None:
    text = _log("WARNING: possible circular locking dependency detected", "6.6.0 #1 Not tainted")
    report = _only(text)
    assert report.title == "possible deadlock in corrupted"
    assert report.corrupted


# --- reports without a classic oops header and the less common kinds --------------------------


def test_stuck_netdev_unregistration() -> None:
    text = _log(
        "unregister_netdevice: waiting for vxcan1 to become free. Usage count = 2",
        "ref_tracker: netdev@ffff888012345678 has 1/1 users at",
        "     dev_hold+0x1a/0x30",
        "unregister_netdevice: waiting for vxcan1 to become free. Usage count = 2",
    )
    reports = [r for r in scan_text(text) if not r.is_event]
    assert reports and reports[0].title == "unregister_netdevice: waiting for DEV to become free"
    assert not reports[0].corrupted


def _boot(start: float) -> list[str]:
    return [
        "Linux version 6.6.0 (builder@host) (gcc 12.2.0) #1 SMP PREEMPT_DYNAMIC",
        "Command line: console=ttyS0 root=/dev/vda",
        "x86/fpu: Supporting XSAVE feature 0x001: 'x87 floating point registers'",
    ]


def test_unexpected_reboot_is_reported_only_mid_log_and_unexplained() -> None:
    first = _log(*_boot(0.0), start=0.0) + _log("systemd[1]: Started Journal Service.", start=50.0)
    silent = first + _log(*_boot(0.0), start=0.0)
    report = _only(silent)
    assert report.title == "unexpected kernel reboot"
    assert report.start_line == 5
    # The first boot of a log is not a reboot; a reboot after a panic or a request is expected.
    assert scan_text(first) == []
    after_panic = first + _log("Kernel panic - not syncing: sysrq triggered crash", start=60.0)
    assert [r.title for r in scan_text(after_panic + _log(*_boot(0.0), start=0.0))] == [
        "kernel panic: sysrq triggered crash"
    ]
    requested = first + _log("reboot: Restarting system", start=60.0) + _log(*_boot(0.0), start=0.0)
    assert scan_text(requested) == []


@pytest.mark.parametrize(
    "header",
    [
        "kernel BUG at kf_buggy/kf_buggy.c:156!",
        "general protection fault, probably for non-canonical address 0xdead000000000100: 0000 [#1] SMP",
        "stack segment: 0000 [#1] PREEMPT SMP KASAN",
    ],
)
def test_a_boot_after_a_crash_that_printed_no_panic_line_is_no_unexpected_reboot(header: str) -> None:
    """oops=panic or kdump: die() goes to crash_kexec() and prints no "Kernel panic" line; a kern.log then holds the
    crash's report and the next boot's banner.  x86's BUG_ON and GPF headers carry no "Oops" nor "BUG:": the next boot
    was "unexpected kernel reboot" (high), the finding a report led with (review ue23 #3)."""
    body = [f"filler line {i}" for i in range(30)]  # (a report's registers and frames: the header is 30 lines above)
    crashed = _log(*_boot(0.0), start=0.0) + _log(header, *body, "Modules linked in: kf_buggy(O)", start=2.0)
    titles = [r.title for r in scan_text(crashed + _log(*_boot(0.0), start=0.0))]
    assert "unexpected kernel reboot" not in titles, titles


@pytest.mark.parametrize(
    ("line", "title"),
    [
        ("VFS: Close: file count is 0", "VFS: Close: file count is 0"),
        ("VFS: brelse: Trying to free free buffer", "VFS: brelse: Trying to free free buffer"),
        (
            "VFS: Busy inodes after unmount of loop0 (ext4). Self-destruct in 5 seconds.  Have a nice day...",
            "VFS: Busy inodes after unmount (use-after-free)",
        ),
    ],
)
def test_vfs_warnings(line: str, title: str) -> None:
    assert _only(_log(line)).title == title


def test_lockdep_nested_lock_and_invalid_subclass() -> None:
    trace = ("Call Trace:", " <TASK>", " lock_acquire+0x1a/0x40", " ovl_lock_pair+0x44/0x90", " </TASK>")
    nested = _only(_log("WARNING: nested lock was not taken", "6.6.0 #1 Not tainted", *trace))
    assert nested.title == "WARNING: nested lock was not taken in ovl_lock_pair"
    subclass = _only(_log("BUG: looking up invalid subclass: 8", "turning off the locking correctness validator.",
                          *trace))  # fmt: skip
    assert subclass.title == "BUG: looking up invalid subclass in ovl_lock_pair"


def test_arm64_stack_overflow() -> None:
    text = _log(
        "Insufficient stack space to handle exception!",
        "ESR: 0x0000000096000047 -- DABT (current EL)",
        "FAR: 0xffff800082cdfff0",
        "Task stack:     [0xffff800082ce0000..0xffff800082ce4000]",
        "CPU: 1 PID: 412 Comm: fsck Not tainted 6.6.0 #1",
        "pc : walk_dir_tree+0x1c/0x88",
        "lr : walk_dir_tree+0x60/0x88",
        "Call trace:",
        " walk_dir_tree+0x1c/0x88",
        " walk_dir_tree+0x60/0x88",
        " walk_dir_tree+0x60/0x88",
        "Kernel panic - not syncing: kernel stack overflow",
    )
    reports = scan_text(text)
    assert reports[0].title == "kernel stack overflow in walk_dir_tree"
    assert reports[0].kind == "stack-overflow"


def test_arm64_irq_entry_names_a_hung_task_preempted_there() -> None:
    # arm64's el1_* exception entry is skipped as fault plumbing, but el1_interrupt, the IRQ entry a
    # task was preempted in, is named for a hung task caught there (syzbot: "INFO: task hung in
    # el1_interrupt"); the frames below the interrupt are what it interrupted.
    text = _log(
        "INFO: task kworker/u8:2:91 blocked for more than 143 seconds.",
        "      Not tainted 6.16.0 #1",
        "task:kworker/u8:2    state:D stack:0     pid:91    tgid:91    ppid:2      flags:0x00000010",
        "Call trace:",
        " __switch_to+0x414/0x834 (T)",
        " __schedule+0x1414/0x2a28",
        " preempt_schedule_irq+0x80/0x188",
        " arm64_preempt_schedule_irq+0x44/0x58",
        " el1_interrupt+0x3c/0x54",
        " el1h_64_irq_handler+0x18/0x24",
        " el1h_64_irq+0x6c/0x70",
        " mydrv_poll+0x154/0x1c0 (P)",
        " process_one_work+0x7e8/0x155c",
    )
    assert _only(text).title == "INFO: task hung in el1_interrupt"


def test_trusty_tee_panics() -> None:
    assertion = _only(
        _log(
            "trusty: panic (caller 0xffffffffe000fbd0): DEBUG ASSERT FAILED at (kernel/lib/heap.c:63): ptr != NULL",
            "trusty: HALT: (reason = 9)",
        )
    )
    assert assertion.title == "trusty: ASSERT FAILED: ptr != NULL"
    assert assertion.kind == "firmware" and not assertion.corrupted
    plain = _only(_log("trusty: panic (caller 0xffffffffe0012345): out of memory in pmm_alloc"))
    assert plain.title == "trusty: panic: out of memory in pmm_alloc"


def test_every_new_class_has_a_rule_in_the_table() -> None:
    names = {rule.name for rule in RULES}
    assert {"rust-panic", "rust-bug", "netdev-unregister", "unexpected-reboot", "vfs-close", "vfs-brelse",
            "warn-nested-lock", "lockdep-subclass", "arm64-stack-overflow", "trusty-assert",
            "trusty-panic"} <= names  # fmt: skip


# --- the record ----------------------------------------------------------------------------------


def test_the_report_record_takes_its_fields_as_the_dataclass_would() -> None:
    """KernelReport's own __init__ (it writes the instance's dict) takes every field, in order, with its default."""
    fields = dataclasses.fields(KernelReport)
    params = list(inspect.signature(KernelReport).parameters.values())
    assert [p.name for p in params] == [f.name for f in fields]
    assert all(p.kind is p.POSITIONAL_OR_KEYWORD for p in params)
    assert [p.default for p in params] == [
        inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default for f in fields
    ]
    values = {f.name: (f.name, i) for i, f in enumerate(fields)}  # a distinct value a field
    by_name = KernelReport(**values)
    by_place = KernelReport(*values.values())
    assert list(vars(by_name).items()) == list(values.items()) == list(vars(by_place).items())
    assert by_name == by_place and hash(by_name) == hash(by_place)
    required = {f.name: values[f.name] for f in fields if f.default is dataclasses.MISSING}
    assert dataclasses.asdict(KernelReport(**required)) == {
        f.name: values[f.name] if f.default is dataclasses.MISSING else f.default for f in fields
    }
    with pytest.raises(dataclasses.FrozenInstanceError):
        by_name.title = "changed"  # type: ignore[misc]
    assert dataclasses.replace(by_name, title="other").title == "other"


# --- the CPU and hardware lines -------------------------------------------------------------------

_CONTEXT_PIECES = ["CPU: 1 PID: 7 Comm: a", " Not tainted", "Not tainted", "Tainted: ", "tainted", "ainted", "G ",
                   "  W ", "6.1.0-rc4 ", "#1", " ", "\t", "\n", "\xa0", "x", "(", "Hardware name: ", "QEMU",
                   "\xe9"]  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_CONTEXT_PIECES), max_size=14))
def test_the_cpu_and_hardware_lines_read_as_their_patterns_search_them(pieces: list[str]) -> None:
    # The taint letters searched from just before the first "ainted", the hardware name read as the text after
    # its label: what a search of the whole line finds, for any line.
    from detectors.dmesg.extract import _HARDWARE, _hardware_name
    from detectors.dmesg.taint import _TAINTED

    body = "".join(pieces)
    m = _TAINTED.search(body)
    assert taint_letters(body) == (None if m is None else "".join(c for c in m.group(1) or "" if c not in " G"))
    hardware = _HARDWARE.search(body)
    assert _hardware_name(body) == (None if hardware is None else hardware.group(1))


def test_a_long_digit_run_inside_a_word_is_a_number_of_the_occurrence() -> None:
    # syz-executor names its temp dirs with a random number: two runs of the same failure must give one title
    # (syzkaller's titles say "testdirNUM"); a short run is part of a name (cfg80211) and stays.
    line = "SYZFATAL: executor {} failed 11 times: failed to create temp dir: mkdir ./syzkaller-testdir{}: read-only"
    titles = {_only(_log(line.format(n, d))).title for n, d in ((4, "264563108"), (2, "1049"), (3, "98765432101"))}
    assert titles == {
        "SYZFATAL: executor NUM failed NUM times: failed to create temp dir: mkdir ./syzkaller-testdirNUM: read-only",
        "SYZFATAL: executor NUM failed NUM times: failed to create temp dir: mkdir ./syzkaller-testdir1049: read-only",
    }
    assert _only(_log("SYZFAIL: cfg80211 nl802154 setup failed")).title == "SYZFAIL: cfg80211 nl802154 setup failed"
