"""The ordered rule table that says what a hotspot means.

Each sampled call chain is classed by the first rule that matches it, tried top to bottom, so
specific rules come before generic ones (futex waits before syscall overhead, page faults before
memcpy).  A rule looks at the leaf frame (where the CPU was), or at any frame of the chain (what the
CPU was doing it for).  ``tests/detectors/profile/test_rules.py`` checks each rule's example is
classed by that rule, so that no rule is shadowed by an earlier one.
"""

from __future__ import annotations

import re
from functools import reduce
from itertools import repeat
from operator import or_
from typing import TYPE_CHECKING, Any

from forensics import regexcache as rc
from forensics.model import Severity
from forensics.types.profile import HotspotRule

if TYPE_CHECKING:
    from forensics.types.profile import ChainNames


def _p(*alternatives: str) -> re.Pattern[str]:
    # Through the per-user cache of compiled patterns (forensics/regexcache.py): compiling the table's 12 large
    # alternations took 4.5 ms of every profile run's start-up.
    return rc.compile("|".join(f"(?:{a})" for a in alternatives))


#: The system call entry and exit path (x86-64, 32-bit compat, arm64): what every call pays, whatever it does.
_SYSCALL_ENTRY = _p(
    r"^entry_SYSCALL_64",
    r"^do_syscall_64$",
    r"^__x64_sys_",
    r"^syscall_exit_to_user_mode",
    r"^entry_SYSCALL_compat",
    r"^el0_svc",
    r"^__arm64_sys_",
    r"^syscall_return_via_sysret",
)

RULES: tuple[HotspotRule, ...] = (
    HotspotRule(
        "idle",
        "CPU idle or polling",
        "leaf",
        _p(
            r"^(?:intel_idle|acpi_idle|poll_idle|default_idle|cpu_idle_poll|native_safe_halt|mwait_idle\w*|"
            r"pv_native_safe_halt|arch_cpu_idle|cpuidle_enter_state|do_idle|acpi_safe_halt)"
        ),
        "samples in the idle loop are not work: the CPUs had nothing to run; shares of the rest are of a "
        "partly idle machine",
        "profile only the busy process (perf record -g -p PID) or compare with `mpstat`; an idle-heavy "
        "system-wide profile of a slow service points at waiting (I/O, locks, network), not CPU",
        ("swapper", "secondary_startup_64", "cpu_startup_entry", "do_idle", "default_idle_call", "pv_native_safe_halt"),
        Severity.INFO,
    ),
    HotspotRule(
        "spinlock",
        "kernel spinlock contention",
        "leaf",
        # Not the unlock functions: a timer sample that lands on _raw_spin_unlock_irqrestore is time spent
        # with interrupts off before it, not spinning.
        _p(
            r"^(?:native_)?queued_spin_lock_slowpath",
            r"^__pv_queued_spin_lock_slowpath",
            r"^_raw_spin_lock",
            r"^_raw_(?:read|write)_lock",
            r"^osq_lock",
            r"^mutex_spin_on_owner",
            r"^rwsem_spin_on_owner",
            r"^do_raw_spin_lock",
        ),
        "CPUs spinning on a kernel lock burn cycles without progress; the lock is held too long or taken too often",
        "find the lock from the callers of the spin (the call paths below); `perf lock contention -ab` (perf >= 6.x) "
        "names the lock and its waiters",
        ("contend", "entry_SYSCALL_64", "do_syscall_64", "futex_wake", "native_queued_spin_lock_slowpath"),
        Severity.MEDIUM,
        kernel_only=True,
    ),
    HotspotRule(
        "user-spin",
        "user-space spinlock spinning",
        "leaf",
        # glibc's names as perf shows them: the exported, versioned symbol with frame pointers
        # (pthread_spin_lock@@GLIBC_2.34, pthread_spin_lock@GLIBC_2.2.5), the internal DWARF name under
        # --call-graph dwarf (__pthread_spin_lock, shown "(inlined)").
        _p(r"^_*pthread_spin_(?:lock|trylock|unlock)"),
        "threads spinning on a user-space spinlock burn the CPU while they wait: this share is the waiting "
        "itself, on CPU (a spinner never sleeps, so it shows in no off-CPU or scheduler trace); the holder keeps "
        "the lock too long or the lock is taken too often",
        "find the holder: it runs the code between the lock and unlock calls in the callers the call paths below "
        "name (`perf annotate` of them shows that critical section and its cost); `perf c2c record -p PID` then "
        "`perf c2c report` names the contended cache line and the code touching it; shorten the critical "
        "section, split the lock, or use a sleeping lock (a mutex) where it is held long",
        ("spin", "start_thread", "w", "__pthread_spin_lock"),
        Severity.MEDIUM,
    ),
    HotspotRule(
        "lock",
        "lock and futex contention",
        "leaf",
        # glibc's lock code under every name perf shows for it, across versions: exported and versioned
        # (pthread_mutex_lock@@GLIBC_2.2.5), internal (__pthread_mutex_lock, ___pthread_mutex_lock since 2.34,
        # __GI___pthread_mutex_unlock_usercnt), and the low-level lock helpers, functions or inlined
        # (__lll_lock_wait, __lll_lock_wake_private, lll_mutex_lock_optimized, __lll_lock_elision).
        _p(
            r"^_*(?:GI_+)?pthread_mutex_(?:(?:un|try|timed|clock)?lock|cond_lock)",
            r"^_*(?:GI_+)?pthread_rwlock_(?:(?:try|timed|clock)?(?:rd|wr)lock|unlock)",
            r"^_*(?:GI_+)?pthread_cond_(?:(?:timed|clock)?wait|signal|broadcast)",
            r"^_*lll_",
            r"^__condvar_",
            r"^_*futex_",
            r"^do_futex",
            r"^__x64_sys_futex",
            r"^std::mutex::lock",
            r"^__gthread_mutex_(?:un)?lock",
        ),
        "time in lock and unlock calls and in futex wake-ups is overhead of sharing; the waiting itself is "
        "off-CPU and does not show in a CPU profile, so contention is usually worse than this share",
        "lock contention is mostly off-CPU: record sched_switch (`perf sched record`, `perf record -e "
        "sched:sched_switch -g`) or run `kforensic trace` to see who waits and for how long; "
        "`perf lock contention -u` names the user locks",
        ("contend", "start_thread", "worker", "pthread_mutex_lock@@GLIBC_2.2.5"),
        Severity.MEDIUM,
    ),
    HotspotRule(
        "lock",
        "lock and futex contention",
        "stack",
        _p(r"^__x64_sys_futex$", r"^do_futex$", r"^futex_wa(?:it|ke)$", r"^_*lll_lock_wa(?:it|ke)"),
        "the kernel work of futex calls (wake-ups, scheduling of waiters) is the CPU cost of contended locks",
        "lock contention is mostly off-CPU: record sched_switch (`perf sched record`) or run `kforensic trace`",
        ("contend", "__lll_lock_wake", "entry_SYSCALL_64", "do_syscall_64", "__x64_sys_futex", "do_futex", "wake_up_q"),
        Severity.MEDIUM,
    ),
    # Before the classes of what the work was, and each by what its handler does (review 13, finding 1): irq_work,
    # the timer tick, the scheduler's and TLB's IPIs, a hypervisor's vectors, device interrupts and the other
    # system vectors.  Only device interrupts are "irq": any frame, unless the code the interrupt stopped (the
    # frames before the first interrupt entry) is filesystem or network code: there the softirq work at its exit
    # is that I/O's completion and the sample stays that class's (dd's blk_done_softirq under common_interrupt under
    # generic_perform_write).  A program doing no I/O interrupted by blk_done_softirq is not "filesystem ... fsync
    # less often" (review 11, 12b): a device interrupt.  The others are "stack": a tick or an IPI that interrupted
    # ext4 is the tick's work (scheduler accounting, RCU, timers), not the filesystem's (ue14 finding 7).
    HotspotRule(
        "irq-work",
        "irq_work (deferred kernel work: perf, printk, RCU)",
        "stack",
        _p(r"^(?:asm_|__)?sysvec_irq_work$", r"^irq_work_run", r"^irq_work_single$"),
        "irq_work is kernel work queued from contexts that cannot do it themselves (perf's own sample wake-ups and "
        "throttling, printk's console flush, RCU, BPF) and run from a self-IPI or the next tick; a sampling "
        "profiler's wake-ups of its reader land here, so some of it is the profiler's own cost",
        "see whose: `perf record -e irq_work:irq_work_entry -a -g` (or the stacks under irq_work_run here); a "
        "high rate of perf's own points to a too small buffer (`perf record -m`) or too high a frequency",
        ("hot", "warm_parse", "asm_sysvec_irq_work", "sysvec_irq_work", "__sysvec_irq_work", "irq_work_run"),
        Severity.INFO,
    ),
    HotspotRule(
        "irq-timer",
        "timer interrupt and scheduler tick (charged to the interrupted task)",
        "stack",
        _p(
            r"^(?:asm_|__)?sysvec_apic_timer_interrupt$",
            r"^hrtimer_interrupt$",
            r"^__hrtimer_run_queues$",
            r"^tick_sched_(?:timer|handle)",
            r"^update_process_times$",
            r"^arch_timer_handler_",
            # A guest's tick from the hypervisor: Hyper-V's synthetic timer, Xen's timer event channel.
            r"^(?:asm_|__)?sysvec_hyperv_stimer0$",
            r"^hv_stimer0_isr$",
            r"^xen_timer_interrupt$",
        ),
        "the local timer interrupt (the scheduler tick, expired hrtimers and the softirq work at its exit) runs "
        "on every busy CPU; a sampling profiler's own timer samples land beside it, so the tick is charged to the "
        "task it interrupted (its accounting and time-slice checks are done for that task)",
        "a steady share is the tick's cost per CPU: check the timers that fire (`perf record -e "
        "timer:hrtimer_expire_entry -a`, /proc/timer_list); nohz_full removes the tick from a CPU running one task",
        ("hot", "warm_parse", "asm_sysvec_apic_timer_interrupt", "sysvec_apic_timer_interrupt", "hrtimer_interrupt"),
        Severity.INFO,
    ),
    HotspotRule(
        "irq-ipi",
        "reschedule and call-function IPIs (wake-ups, TLB shootdowns)",
        "stack",
        _p(
            r"^(?:asm_|__)?sysvec_reschedule_ipi$",
            r"^(?:asm_|__)?sysvec_call_function",
            r"^(?:generic_)?smp_call_function",
            r"^flush_tlb_func",
            r"^do_handle_IPI$",
            r"^ipi_handler$",
        ),
        "inter-processor interrupts: a reschedule IPI is sent when a task is woken onto this CPU or it must "
        "preempt, a call-function IPI when another CPU flushes this one's TLB (munmap, mprotect, page migration) "
        "or runs a function on it; the causes are often the program's own (its threads waking each other under "
        "lock contention, its own mapping changes), and the sample lands in the IPI's exit path (scheduling)",
        "for reschedule IPIs see who wakes whom: `perf sched record` then `perf sched latency`, or `kforensic "
        "trace`; reduce the lock contention that causes the wake-ups; for call-function IPIs count the shootdowns "
        "(the TLB line of /proc/interrupts, `perf record -e tlb:tlb_flush -g`) and batch munmap/mprotect",
        ("contend", "start_thread", "critical", "asm_sysvec_reschedule_ipi", "irqentry_exit_to_user_mode"),
        Severity.INFO,
    ),
    HotspotRule(
        "irq-hypervisor",
        "hypervisor interrupts (this machine is a guest)",
        "stack",
        _p(
            r"^(?:asm_|__)?sysvec_kvm_asyncpf_interrupt$",
            r"^(?:asm_|__)?sysvec_hyperv_(?:callback|reenlightenment)$",
            r"^(?:asm_|__)?sysvec_xen_hvm_callback$",
            r"^xen_evtchn_do_upcall$",
            r"^kvm_async_pf_task_wake$",
        ),
        "vectors the hypervisor raises in this guest: KVM's async page fault completions (a page of guest memory "
        "the host had swapped out is back), Hyper-V's VMBus and re-enlightenment callbacks, Xen's event channels; "
        "the time is the host's doing as much as the program's",
        "check the host side: memory overcommit and host swapping for async page faults (`grep -i async "
        "/proc/vmstat`, the host's `vmstat 1`), the paravirtual devices' event rate in /proc/interrupts",
        ("hot", "warm_parse", "asm_sysvec_kvm_asyncpf_interrupt", "sysvec_kvm_asyncpf_interrupt"),
        Severity.INFO,
    ),
    HotspotRule(
        "irq-device",
        "device interrupts (charged to the interrupted task)",
        "irq",
        _p(
            r"^asm_common_interrupt$",
            r"^common_interrupt$",
            r"^do_IRQ$",
            r"^handle_irq_event",
            r"^el[01]_interrupt$",
            r"^el1h_64_irq",
            r"^el0t_64_irq",
        ),
        "device interrupts and the softirq work run as they exit (block I/O completions, network receive) are "
        "charged to whatever task was running; a block or network completion may be this program's own I/O "
        "(whose request it completes is not in the sample) or another's, on the CPU the device's interrupt is "
        "steered to",
        "see which: /proc/interrupts and /proc/softirqs per CPU (`watch -d`), `perf record -e "
        "irq:irq_handler_entry -a`; if the interrupts are another device's (not this program's I/O), steer them "
        "elsewhere with IRQ affinity (/proc/irq/N/smp_affinity) or isolcpus for a latency-critical task",
        (
            "hot",
            "warm_parse",
            "asm_common_interrupt",
            "common_interrupt",
            "irq_exit_rcu",
            "handle_softirqs",
            "blk_done_softirq",
        ),
        Severity.INFO,
    ),
    HotspotRule(
        "irq-other",
        "other system interrupts (thermal, MCE threshold, APIC error, platform vectors)",
        "stack",
        _p(r"^(?:asm_|__)?sysvec_"),
        "a system vector no other class names: the thermal and machine-check threshold interrupts, the APIC's error "
        "and spurious vectors, platform IPIs; they are the hardware's or the platform's, not the program's",
        "see which in /proc/interrupts (the THR, TRM, MCE, ERR, SPU, PLT rows per CPU) and the kernel log for their "
        "messages (thermal throttling, corrected machine-check errors)",
        ("hot", "warm_parse", "asm_sysvec_thermal", "sysvec_thermal", "intel_thermal_interrupt"),
        Severity.INFO,
    ),
    HotspotRule(
        "page-fault",
        "page faults",
        "stack",
        _p(
            r"^asm_exc_page_fault$",
            r"^exc_page_fault$",
            r"^do_user_addr_fault$",
            r"^handle_mm_fault$",
            r"^do_page_fault$",
            r"^__handle_mm_fault$",
        ),
        "faulting pages in (first touch of fresh memory, file mappings, copy-on-write) costs kernel time per "
        "page; a steady share means memory is mapped and dropped over and over",
        "count them with `perf stat -e page-faults,minor-faults,major-faults`; reuse buffers, pre-fault "
        "(MAP_POPULATE), or use huge pages; `perf record -e page-faults -g` shows who touches",
        (
            "mixed",
            "main",
            "asm_exc_page_fault",
            "exc_page_fault",
            "do_user_addr_fault",
            "handle_mm_fault",
            "clear_page_erms",
        ),
        Severity.INFO,
    ),
    HotspotRule(
        "memcpy",
        "memory copies and fills (memcpy/memmove/memset)",
        "leaf",
        _p(
            r"^(?:__)?mem(?:cpy|move|set|cmp)",
            r"^__(?:GI_)?mem(?:cpy|move|set)",
            r"^__memmove_",
            r"^__memset_",
            r"^__memcpy_",
            r"^copy_user_",
            r"^rep_movs",
            r"^rep_stos",
            r"^copy_page",
            r"^_copy_(?:to|from)_user",
            r"^copy_folio_from_iter",
            r"^copy_page_(?:to|from)_iter",
            r"^clear_page",
            r"^_copy_to_iter",
            r"^__memcpy$",
            r"^__memset$",
            r"^memcpy_orig",
        ),
        "bytes being copied or cleared are often needless: a copy per layer, a buffer cleared before it is "
        "overwritten, data read through the page cache and copied to user space",
        "look at the callers (the call paths below) for copies that can be avoided: pass buffers by reference, "
        "use zero-copy (sendfile, splice, mmap, io_uring), allocate without memset",
        ("mixed", "main", "__memmove_avx512_unaligned_erms"),
        Severity.INFO,
    ),
    HotspotRule(
        "allocator",
        "memory allocator (malloc/free, kmalloc/kfree, page allocator)",
        "leaf",
        _p(
            r"^(?:__libc_)?(?:malloc|free|calloc|realloc)$",
            r"^_int_(?:malloc|free|realloc)",
            r"^malloc_consolidate",
            r"^tcache_",
            r"^cfree",
            r"^__GI___libc_(?:malloc|free)",
            r"^je_",
            r"^tc_(?:malloc|free|new|delete)",
            r"^operator (?:new|delete)",
            r"^__?kmalloc",
            r"^kfree",
            r"^kmem_cache_(?:alloc|free)",
            r"^__slab_",
            r"^___slab_alloc",
            r"^__alloc_pages",
            r"^get_page_from_freelist",
            r"^rmqueue",
            r"^free_pages",
            r"^__free_pages",
            r"^free_unref_page",
            r"^alloc_pages",
            r"^PyObject_(?:Malloc|Free|Realloc)$",
            r"^_PyObject_(?:Malloc|Free)",
            r"^pymalloc_",
            r"^PyMem_",
        ),
        "allocation churn: objects allocated and freed on the hot path; each call costs, and freed memory "
        "is not reused as well as a pool would",
        "find the callers (the call paths below); reuse objects, pool buffers, or try a per-thread allocator "
        "(jemalloc, tcmalloc); `perf record -e 'probe_libc:malloc'` counts the calls",
        ("mixed", "main", "_int_malloc"),
        Severity.INFO,
    ),
    HotspotRule(
        "time",
        "clock reads (clock_gettime, vDSO, gettimeofday)",
        "stack",
        _p(
            r"clock_gettime",
            r"^__vdso_",
            r"^__cvdso_",
            r"^(?:__)?gettimeofday",
            r"^do_hres",
            r"^__x64_sys_clock_gettime",
            r"^ktime_get_ts64$",
            r"^read_tsc$",
            r"^vread_tsc",
            r"^do_coarse",
        ),
        "reading the clock in a tight loop is cheap per call but adds up; a clock read that falls back to "
        "a syscall (no vDSO, unstable TSC) costs a kernel entry each time",
        "read the clock once per batch, use CLOCK_MONOTONIC_COARSE when precision allows; check "
        "/sys/devices/system/clocksource/clocksource0/current_clocksource is tsc",
        ("mixed", "main", "cpu_phase", "__GI___clock_gettime", "__vdso_clock_gettime"),
        Severity.INFO,
    ),
    HotspotRule(
        "network",
        "network stack",
        "stack",
        _p(
            r"^tcp_",
            r"^udp_",
            r"^ip_(?:output|rcv|finish|queue_xmit|local_out)",
            r"^__netif_",
            r"^net_rx_action$",
            r"^napi_",
            r"^__sys_(?:sendto|recvfrom|sendmsg|recvmsg)",
            r"^dev_queue_xmit",
            r"^__dev_queue_xmit",
            r"^sock_(?:sendmsg|recvmsg)",
            r"^inet_(?:sendmsg|recvmsg)",
            r"^__skb_",
            r"^skb_copy",
        ),
        "CPU in the network stack: per-packet work (small messages, many syscalls), softirq processing or "
        "copies of payloads",
        "batch sends and receives (larger writes, sendmmsg/recvmmsg), check offloads (`ethtool -k`), and "
        "look at softirq time per CPU in /proc/softirqs",
        ("nginx", "__libc_send", "entry_SYSCALL_64", "do_syscall_64", "__sys_sendto", "tcp_sendmsg", "tcp_push"),
        Severity.INFO,
        keeps_interrupted=True,
    ),
    HotspotRule(
        "filesystem",
        "filesystem and journal",
        "stack",
        _p(
            r"^jbd2_",
            r"^ext4_",
            r"^xfs_",
            r"^btrfs_",
            r"^f2fs_",
            r"^nfs_",
            r"^filemap_",
            r"^iomap_",
            r"^submit_bio",
            r"^blk_",
            r"^generic_perform_write$",
            r"^__generic_file_write_iter$",
            r"^file_write_and_wait_range$",
            r"^vfs_fsync",
        ),
        "CPU in filesystem code (page cache writes, extent and journal updates, block submission); with "
        "fsync in the stacks the process also waits for the disk, off-CPU",
        "see which files: `perf trace -e 'write*,fsync' -p PID` or `strace -f -e trace=desc`; write in larger "
        "blocks, fsync less often; `iostat -x 1` for the device side",
        (
            "dd",
            "write",
            "entry_SYSCALL_64",
            "do_syscall_64",
            "ksys_write",
            "vfs_write",
            "ext4_buffered_write_iter",
            "generic_perform_write",
            "ext4_da_write_end",
        ),
        Severity.INFO,
        keeps_interrupted=True,
    ),
    HotspotRule(
        "interpreter",
        "interpreter loop",
        "leaf",
        _p(
            r"^_PyEval_EvalFrameDefault",
            r"^PyEval_",
            r"^_PyEval_",
            r"^luaV_execute",
            r"^rb_vm_exec",
            r"^vm_exec_core",
            r"^Interpreter::",
            r"^js::Interpret",
            r"^execute_ex$",
            r"^ZEND_",
            r"^Perl_runops",
            r"^Perl_pp_",
            # Frames perf could not name inside a stripped interpreter binary are the interpreter too.
            r"^\[(?:lib)?python[\d.]*(?:\.so[\d.]*)?\]$",
            r"^\[(?:lib)?ruby[\d.]*\]$",
            r"^\[node\]$",
            r"^_PyObject_(?:Call|Vectorcall)",
            r"^PyObject_(?:Call|GetAttr|RichCompare)",
            r"^Py(?:Long|Float|Number)_",
            r"^_Py_(?:Dealloc|Incref|Decref)",
            r"^unicode(?:keys)?_",
            r"^lookdict",
        ),
        "the interpreter's dispatch loop and object machinery: the profile shows the VM, not the script's "
        "functions, so the hot code is hidden behind it",
        "profile at the language level (py-spy, `python -X perf` with perf >= 6 on Python >= 3.12, "
        "rbspy, perf-map for JITs) to see which script functions are hot; move the loop to compiled code",
        ("python3", "_start", "Py_BytesMain", "_PyEval_EvalFrameDefault"),
        Severity.INFO,
    ),
    HotspotRule(
        "syscall",
        "system calls: entry, exit and kernel work no other class names",
        "stack",
        _SYSCALL_ENTRY,
        "kernel code run for system calls that no more specific class names: the entry and exit path (and "
        "mitigations such as page table isolation), which many small calls each pay for little work, and the "
        "calls' own work (path lookups, /proc and sysfs text, mapping changes); the heaviest symbols say which",
        "count them with `perf trace -s -p PID` or `strace -c -f -p PID`; batch the work (bigger reads and "
        "writes, writev, io_uring) so fewer calls do more each",
        ("mixed", "main", "__GI___libc_write", "entry_SYSCALL_64_after_hwframe", "do_syscall_64", "ksys_write"),
        Severity.INFO,
        work=HotspotRule(
            "syscall-work",
            "kernel work of system calls",
            "stack",
            _SYSCALL_ENTRY,
            "the time is the work the kernel does for the calls (the heaviest symbols), not the cost of entering "
            "and leaving the kernel: fewer, bigger calls do not make it smaller, asking the kernel for less does",
            "see what the heaviest kernel function does for the call: `perf report --no-children -S SYMBOL -G` "
            "shows the calls that reach it, `perf trace -s -p PID` counts them and their time; ask the kernel "
            "for less (read fewer bytes, cache results, use a cheaper source or interface)",
            ("dd", "read", "entry_SYSCALL_64", "do_syscall_64", "ksys_read", "get_random_bytes_user", "chacha_permute"),
            names_work=True,
        ),
    ),
)

#: Shares (percent of the period) from which a class becomes a finding.
MIN_SHARE = 5.0

#: The frames where the kernel enters an interrupt (x86-64 device and system vectors, i386 do_IRQ, arm64): the
#: frames before a chain's first one are the code the interrupt stopped.
_IRQ_ENTRY = _p(
    r"^asm_common_interrupt$",
    r"^common_interrupt$",
    r"^asm_sysvec_",
    r"^sysvec_",
    r"^do_IRQ$",
    r"^el[01]_interrupt$",
    r"^el1h_64_irq",
    r"^el0t_64_irq",
)
_ENTRY_BIT = 1 << len(RULES)  # in a frame's mask: the frame is an interrupt entry
#: The rules whose code keeps a sample that interrupted it (HotspotRule.keeps_interrupted).
_KEEPS = sum(1 << i for i, rule in enumerate(RULES) if rule.keeps_interrupted)
#: The interrupt classes (irq-work, irq-timer, irq-ipi, ...).  An interrupt may interrupt another (an IPI taken inside
#: the tick's handler, a tick inside a device interrupt's softirq work): the CPU was running the innermost one, so
#: these rules look only at the frames from the chain's last interrupt entry to the leaf (the whole chain without
#: one).  Matched anywhere, the table's order named the tick for an IPI sampled inside it.
_INTERRUPTS = sum(1 << i for i, rule in enumerate(RULES) if rule.name.startswith("irq-"))

_MASKS: dict[str, int] = {}


def _mask(name: str) -> int:
    """Which rules' patterns match a frame name, as a bit mask (bit i for RULES[i], :data:`_ENTRY_BIT` for an
    interrupt entry); cached per name."""
    m = _MASKS.get(name)
    if m is None:
        m = sum(1 << i for i, rule in enumerate(RULES) if rule.pattern.search(name))
        if _IRQ_ENTRY.search(name):
            m |= _ENTRY_BIT
        if len(_MASKS) < 1 << 20:  # bounded: a profile has far fewer distinct names
            _MASKS[name] = m
    return m


def classify_chains(names: ChainNames, leaf_kernel: Any) -> Any:
    """:func:`classify` of every chain of a table at once: the index in :data:`RULES` of each chain's rule, or -1.

    ``names``: the chains' frame names as numbers (:attr:`forensics.types.profile.StackTable.names`);
    ``leaf_kernel``: whether each chain's leaf is a kernel frame (bool array).  Each distinct name's mask is
    made once; a chain's masks are ORed with numpy, and the first rule that takes it wins, as in ``classify``.
    """
    import numpy as np

    masks = np.fromiter(map(_mask, names.names), np.int64, len(names.names))
    n = len(names.lengths)
    out = np.full(n, -1, np.int64)
    full = np.flatnonzero(names.lengths > 0)
    if not len(full):
        return out
    frame_masks = masks[names.flat]
    anywhere = np.zeros(n, np.int64)
    anywhere[full] = np.bitwise_or.reduceat(frame_masks, names.starts[full])
    leaf = np.zeros(n, np.int64)
    leaf[full] = frame_masks[names.starts[full] + names.lengths[full] - 1]
    # The code each chain's first interrupt entry stopped: its frames before that entry (all, without one).
    at = np.arange(len(frame_masks))
    first = np.minimum.reduceat(np.where(frame_masks & _ENTRY_BIT, at, len(at)), names.starts[full])
    chain_first = np.repeat(first, names.lengths[full])
    interrupted = np.zeros(n, np.int64)
    interrupted[full] = np.bitwise_or.reduceat(np.where(at < chain_first, frame_masks, 0), names.starts[full])
    kept = (interrupted & _KEEPS) != 0
    # The innermost interrupt's frames: from each chain's last interrupt entry to its leaf (all, without one).
    last = np.maximum.reduceat(np.where(frame_masks & _ENTRY_BIT, at, -1), names.starts[full])
    last = np.where(last < 0, names.starts[full], last)
    chain_last = np.repeat(last, names.lengths[full])
    innermost = np.zeros(n, np.int64)
    innermost[full] = np.bitwise_or.reduceat(np.where(at >= chain_last, frame_masks, 0), names.starts[full])
    anywhere = (anywhere & ~_INTERRUPTS) | (innermost & _INTERRUPTS)
    for i, rule in enumerate(RULES):
        bit = 1 << i
        hit = ((leaf if rule.where == "leaf" else anywhere) & bit) != 0
        if rule.where == "leaf" and rule.kernel_only:
            hit &= leaf_kernel
        elif rule.where == "irq":
            hit &= ~kept
        out[(out < 0) & hit] = i
    return out


def classify(frames: tuple[str, ...], leaf_kernel: bool | None = None) -> HotspotRule | None:
    """The first rule that classes a call chain (root to leaf names), or None (plain user or kernel code)."""
    if not frames:
        return None
    # The masks of names met before through one C-level map (no Python call per frame: 15k chains of
    # 120k frames in 0.02 s instead of 0.06 s); the others through _mask.
    masks = list(map(_MASKS.get, frames, repeat(-1)))  # -1: not cached (a mask is never negative)
    if -1 in masks:
        masks = list(map(_mask, frames))
    leaf = masks[-1]
    anywhere = reduce(or_, masks)
    if not anywhere:
        return None
    # As classify_chains: the code the first interrupt entry stopped (the whole chain without one).
    entry = next((i for i, m in enumerate(masks) if m & _ENTRY_BIT), len(masks))
    kept = bool(reduce(or_, masks[:entry], 0) & _KEEPS)
    # As classify_chains: the interrupt classes only from the innermost interrupt entry on.
    last = next((i for i in range(len(masks) - 1, -1, -1) if masks[i] & _ENTRY_BIT), 0)
    anywhere = (anywhere & ~_INTERRUPTS) | (reduce(or_, masks[last:]) & _INTERRUPTS)
    for i, rule in enumerate(RULES):
        bit = 1 << i
        if rule.where == "leaf":
            if leaf & bit and not (rule.kernel_only and leaf_kernel is False):
                return rule
        elif anywhere & bit and not (kept and rule.where == "irq"):
            return rule
    return None
