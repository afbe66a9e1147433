"""The ordered rule table: which line starts which report, and how it is titled.

Rules are tried top to bottom on a header line and the first that matches
wins, so specific rules come before generic ones and each family ends with a
catch-all.  ``tests/detectors/dmesg/test_rules.py`` checks that no rule is
shadowed by an earlier one (every rule has an example header that it, and no
earlier rule, matches).

Titles follow the convention of syzbot, the form kernel developers search
for: ``KIND in FUNCTION`` where FUNCTION is the guilty frame
(:mod:`detectors.dmesg.frames`).  Placeholders: ``{h1}``.. are groups of the
header pattern, ``{r1}``.. groups of the ``report`` pattern (searched in the
whole report text), ``{frame}`` the guilty frame.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from forensics import regexcache as rc
from forensics.model import Severity
from forensics.types.dmesg import ReportKind

_FUNC = r"\.?([A-Za-z0-9_]+)[.+]"  # a function name as printed before "+0x" or ".isra" (ppc64: ".func")
_PC = r"\[<[0-9a-f]+>\]"
_SRC = r"([A-Za-z0-9\-_/.]+\.[a-z]+:[0-9]+)"


class Step(NamedTuple):
    """One step of the way to the guilty frame.

    ``anchor`` is searched in the report lines after the previous step; when it
    has a group, that group is a candidate function.  ``trace`` steps take the
    frames of the call trace that follows.
    """

    anchor: re.Pattern[str] | None
    trace: bool = False
    only_if: re.Pattern[str] | None = None  # the step applies only when this is somewhere in the report
    #: Words one of which every match of ``anchor`` holds: a line without any is not searched (a search of
    #: the RIP anchor tries its alternation at every character, ~10 us a line; the ~2,700 lines of the shared
    #: corpus it was tried on before its hit took ~4% of the run).  Empty: every line is searched.
    hint: tuple[str, ...] = ()


def _anchor(pattern: str, *hint: str) -> Step:
    return Step(rc.compile(pattern), hint=hint)


TRACE = Step(None, trace=True)
RIP = _anchor(
    # x86 RIP/IP, arm/arm64 pc and PC is at, mips epc, loongarch ERA, powerpc NIP, s390's PSW (address, then the
    # function in parentheses).
    r"(?:^|\s)(?:(?:N?[RE]?IP|pc|epc|ERA|NIP)\s*:|PC is at|NIP \[[0-9a-f]+\]|Krnl PSW\s*:\s*[0-9a-f]+\s+[0-9a-f]+\s+\()"
    r"\s*(?:\[?[0-9a-fx]+\]?\s+)?(?:\d+:)?\s*"
    r"(?:\[<?[0-9a-f]+>?\]\s+){0,2}(?:" + _FUNC + r"|0x[0-9a-f]+|\(null\))",
    "IP", "pc", "ERA", "PC is at", "PSW",  # [RE]IP, NIP; pc, epc; ERA; PC is at; Krnl PSW
)  # fmt: skip
CALL_TRACE = _anchor(r"Call [Tt]race:|^\s*Backtrace:", "race:")
BACKTRACE = _anchor(r"^\s*backtrace(?: \(crc [0-9a-f]+\))?:|(?<!stack) backtrace:", "backtrace")
# The timer interrupt that caught the stalled CPU: x86's APIC timer, arm64's IRQ entry.
IRQ_ENTRY = _anchor(r"apic_timer_interrupt|el1h_64_irq|el1_interrupt|gic_handle_irq", "interrupt", "irq")
INTERRUPT = _anchor(r"--- interrupt: [0-9a-f]+ at " + _FUNC, "--- interrupt: ")


class StackSpec(NamedTuple):
    """How to find the guilty frame: step lists tried in order, extra skips, extractor."""

    paths: tuple[tuple[Step, ...], ...]
    skip: tuple[str, ...] = ()
    extractor: str = "first"  # "first" reliable non-skipped frame, "stall" or "hung"


def _stack(*paths: tuple[Step, ...], skip: tuple[str, ...] = (), extractor: str = "first") -> StackSpec:
    return StackSpec(paths, skip, extractor)


#: The NMI watchdog's own path, printed above ``<<EOE>>`` in a hard lockup's call trace before v4.10 (x86 printed the
#: NMI stack first, then the interrupted task's): the perf event overflow that detected the lockup, not the code that
#: held the CPU.  Since v4.10's reports the interrupted code's RIP comes first (the rule's first path).
#: In 3.0's and 3.1's reports the NMI reached perf_event_nmi_handler through the die notifiers, from the ``nmi`` entry.
_NMI_WATCHDOG_SKIP = ("^watchdog_overflow_callback$", "^_*perf_event_overflow$", "_pmu_handle_irq$",
                      "^perf_event_nmi_handler$", "^nmi_handle", "^_*do_nmi$", "^default_do_nmi$", "^end_repeat_nmi$",
                      "^repeat_nmi$", "^nmi_panic$", "notifier_call_chain$", "^notify_die$", "^nmi$")  # fmt: skip
#: A hard lockup reported before v4.4, by WARN() or panic() in the perf NMI watchdog's own callback (the rules
#: warn-hard-lockup and panic-watchdog-lockup): no register dump, a dump_stack() of the NMI, so the interrupted code is
#: the first frame past the watchdog's, the WARN's or panic's (skipped by every rule) and ``<<EOE>>``.  Only where that
#: callback is in the report: another detector's trace is of the CPU that noticed the lockup, not of the locked one.
_PRE_4_4_HARD_LOCKUP = _stack(
    (Step(CALL_TRACE.anchor, only_if=rc.compile(r"watchdog_overflow_callback"), hint=CALL_TRACE.hint), TRACE),
    skip=_NMI_WATCHDOG_SKIP,
)

# arm's link register: the caller, which is all there is when the PC itself is 0 (a NULL call).
LR = Step(
    rc.compile(r"(?:LR is at|lr :)\s*(?:\[<[0-9a-f]+>\]\s*)?" + _FUNC),
    only_if=rc.compile(r"pc : \[<0+>\]|PC is at 0x0\b|pc : 0x0\b"),
    hint=("LR is at", "lr :"),
)
#: The Rust panic machinery between the panicking code and the BUG() that stops the kernel.
_RUST_SKIP = ("rust_begin_unwind", "^core::", "^alloc::", "^__rustc::", "^rust_helper_", "^std::", "panic_const",
              "^kernel::panic")  # fmt: skip
TRACE_ONLY = _stack((CALL_TRACE, TRACE), (TRACE,))  # arm (32-bit) prints frames without "Call trace:"
RIP_THEN_TRACE = _stack((RIP, CALL_TRACE, TRACE), (CALL_TRACE, TRACE), (LR,))


def _warning_stack(*skip: str) -> StackSpec:
    # x86 WARNINGs trap: the RIP line names the warning site and the trace follows it;
    # powerpc prints "--- interrupt:"; older kernels only print "Call Trace:".  When the
    # stack is lost, the function the header names is the last resort.
    return _stack((RIP, TRACE), (INTERRUPT, TRACE), (CALL_TRACE, TRACE), skip=skip)


class Rule(NamedTuple):
    """One kind of report: the header that starts it and how to title it."""

    name: str
    header: re.Pattern[str]
    title: str
    kind: ReportKind
    severity: Severity
    example: str  # a header line this rule matches (checked by the shadowing test)
    stack: StackSpec | None = None
    report: re.Pattern[str] | None = None
    corrupted: bool = False  # the header itself says the report is damaged
    needs_trace: bool = True  # a report of this kind without a call trace is damaged
    starts: bool = True  # False: inside another report this line continues it


def _rule(
    name: str,
    header: str,
    title: str,
    kind: ReportKind,
    severity: Severity,
    example: str,
    **kw: object,
) -> Rule:
    report = kw.pop("report", None)
    return Rule(
        name,
        rc.compile(header),
        title,
        kind,
        severity,
        example,
        report=rc.compile(str(report)) if report is not None else None,
        **kw,  # type: ignore[arg-type]
    )


C, H, M = Severity.CRITICAL, Severity.HIGH, Severity.MEDIUM
K = ReportKind
_LOCKDEP_AT = r"(?:.*\n)+?.*at: (?:" + _PC + r" +)?" + _FUNC
# The lock already held, second choice when the lock being taken is taken in a generic helper.
_HELD_AT = r"(?:(?:.*\n)+?.*already holding lock(?:.*\n)+?.*at: (?:" + _PC + r" +)?" + _FUNC + ")?"

#: Every header rule, most specific first.  Families: KASAN/KMSAN/KCSAN/KFENCE, page faults,
#: BUG:, WARNING:/lockdep, INFO:, oopses and traps, panics, other subsystems.
# fmt: off
RULES: tuple[Rule, ...] = (
    # --- sanitizers -------------------------------------------------------------------------
    _rule("kasan-invalid-free", r"BUG: KASAN: (?:double-free or invalid-free|double-free|invalid-free) in ",
          "KASAN: invalid-free in {frame}", K.KASAN, H, "BUG: KASAN: double-free or invalid-free in kfree+0x10/0x20",
          stack=_stack((_anchor(r"BUG: KASAN: [a-z\- ]+ in " + _FUNC), CALL_TRACE, TRACE), (CALL_TRACE, TRACE),
          skip=("kmem_", "slab_", "kfree", "vunmap", "vfree"))),
    _rule("kasan-access", r"BUG: KASAN: ([a-z\-]+) in ", "KASAN: {h1} {r1} in {frame}", K.KASAN, H,
          "BUG: KASAN: use-after-free in foo_read+0x10/0x20",
          report=r"BUG: KASAN: [a-z\-]+ in (?:.*\n)+?.*(Read|Write) (?:of size|at addr)",
          stack=_stack((_anchor(r"BUG: KASAN: [a-z\-]+ in " + _FUNC), CALL_TRACE, TRACE), (CALL_TRACE, TRACE))),
    _rule("kasan-address", r"BUG: KASAN: ([a-z\-]+) (?:on address|in range)", "KASAN: {h1} {r1}", K.KASAN, H,
          "BUG: KASAN: null-ptr-deref on address 0000000000000010",
          report=r"(?:.*\n)*?.*(Read|Write) (?:of size|at addr)"),
    _rule("kasan-corrupted", r"BUG: KASAN: (.*)", "KASAN: {h1}", K.KASAN, H, "BUG: KASAN: something odd",
          corrupted=True ),
    _rule("kmsan-usb-infoleak", r"BUG: KMSAN: kernel-usb-infoleak", "KMSAN: kernel-usb-infoleak in {frame}", K.KMSAN,
          H, "BUG: KMSAN: kernel-usb-infoleak in usb_submit_urb+0x1/0x2", stack=_stack((CALL_TRACE, TRACE),
          skip=("usb_submit_urb", "usb_start_wait_urb", "usb_bulk_msg", "usb_interrupt_msg", "usb_control_msg"))),
    _rule("kmsan", r"BUG: KMSAN: ([a-z\-]+)", "KMSAN: {h1} in {frame}", K.KMSAN, H,
          "BUG: KMSAN: uninit-value in foo+0x1/0x2", stack=_stack((CALL_TRACE, TRACE), (_anchor(r"BUG: KMSAN:"),
          TRACE)), needs_trace=False),
    _rule("kcsan", r"BUG: KCSAN: (.*)", "KCSAN: {h1}", K.KCSAN, M, "BUG: KCSAN: data-race in foo / bar",
          needs_trace=False ),
    _rule("kfence", r"BUG: KFENCE: ([a-z\- ]+?) in ", "KFENCE: {h1} in {frame}", K.KFENCE, H,
          "BUG: KFENCE: use-after-free read in foo+0x1/0x2",
          stack=_stack((_anchor(r"BUG: KFENCE: [a-z\- ]+ in " + _FUNC), TRACE), (TRACE,)), needs_trace=False),
    _rule("kfence-bare", r"BUG: KFENCE: ([a-z\- ]+)$", "KFENCE: {h1} in {frame}", K.KFENCE, H,
          "BUG: KFENCE: invalid free", stack=_stack((TRACE,)), needs_trace=False),
    # --- page faults ---------------------------------------------------------------------------
    _rule("paging-request",
          r"BUG: (?:unable to handle kernel paging request|unable to handle page fault for address|"
          r"Unable to handle kernel data access)",
          "BUG: unable to handle kernel paging request in {frame}", K.PAGE_FAULT, C,
          "BUG: unable to handle page fault for address: ffffffffffffffe8", stack=RIP_THEN_TRACE),
    _rule("null-deref",
          r"BUG: (?:unable to handle kernel NULL pointer dereference|kernel NULL pointer dereference|"
          r"Kernel NULL pointer dereference)",
          "BUG: unable to handle kernel NULL pointer dereference in {frame}", K.NULL_DEREF, C,
          "BUG: kernel NULL pointer dereference, address: 0000000000000000", stack=RIP_THEN_TRACE),
    _rule("fault-corrupted", r"BUG: (?:unable to handle kernel|Unable to handle kernel)",
          "BUG: unable to handle kernel", K.PAGE_FAULT, C, "BUG: unable to handle kernel", corrupted=True),
    # --- BUG: -------------------------------------------------------------------------------
    _rule("spinlock", r"BUG: (spinlock|rwlock) (lockup suspected|already unlocked|cpu recursion|recursion|bad magic|"
          r"wrong owner|wrong CPU|trylock failure on UP)", "BUG: {h1} {h2} in {frame}", K.LOCKING, H,
          "BUG: spinlock bad magic on CPU#0, swapper/0/1",
          stack=_stack((CALL_TRACE, TRACE), skip=("spin_", "_lock", "_unlock"))),
    _rule("soft-lockup", r"BUG: soft lockup", "BUG: soft lockup in {frame}", K.SOFT_LOCKUP, H,
          "watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [kworker/1:1:60]", stack=_stack((RIP, CALL_TRACE, TRACE),
          (CALL_TRACE, TRACE), extractor="stall")),
    _rule("locks-held", r"BUG: .*still has locks held!", "BUG: still has locks held in {r1}", K.LOCKING, H,
          "BUG: syz-executor/123 still has locks held!",
          report=r"still has locks held!(?:.*\n)+?.*(?:" + _PC + r"|at:) +" + _FUNC),
    _rule("lock-held-user", r"BUG: lock held when returning to user space",
          "BUG: lock held when returning to user space in {r1}", K.LOCKING, H,
          "BUG: lock held when returning to user space!",
          report=r"leaving the kernel with locks still held" + _LOCKDEP_AT, needs_trace=False),
    _rule("bad-unlock", r"BUG: bad unlock balance detected!", "BUG: bad unlock balance in {r1}", K.LOCKING, H,
          "BUG: bad unlock balance detected!",
          report=r"is trying to release lock(?:.*\n){0,15}?.*(?:" + _PC + r"|at:) +" + _FUNC, stack=TRACE_ONLY,),
    _rule("held-lock-freed", r"BUG: held lock freed!", "BUG: held lock freed in {r1}", K.LOCKING, H,
          "BUG: held lock freed!", report=r"held lock freed!(?:.*\n)+?.*(?:" + _PC + r"|at:) +" + _FUNC,),
    _rule("rss-counter", r"BUG: Bad rss-counter state", "BUG: Bad rss-counter state", K.MM, M,
          "BUG: Bad rss-counter state mm:00000000 type:MM_FILEPAGES val:-1", needs_trace=False),
    _rule("nr-ptes", r"BUG: non-zero (nr_ptes|nr_pmds) on freeing mm", "BUG: non-zero {h1} on freeing mm", K.MM, M,
          "BUG: non-zero nr_ptes on freeing mm: 2", needs_trace=False),
    # The file system type and block device of the message would split one bug into many titles.
    _rule("dentry-in-use", r"BUG: Dentry .* still in use \([0-9]+\) \[(unmount) of ([^\]]+)\]",
          "BUG: Dentry still in use in {h1}", K.FS, H,
          "BUG: Dentry ffff88 {/} still in use (1) [unmount of tmpfs tmpfs]", needs_trace=False),
    _rule("bad-page-state", r"BUG: Bad page (state|map)", "BUG: Bad page {h1} in {frame}", K.MM, H,
          "BUG: Bad page state in process syz-executor  pfn:1a2b3",
          # With page_owner the page's allocator is printed first: that is the culprit.
          stack=_stack((_anchor(r"page last allocated via"), TRACE), (CALL_TRACE, TRACE),
                       skip=("page_pool", "post_alloc_hook", "get_page_from_freelist", "_noprof$", "alloc_pages",
                             "free_", "bad_page", "_free_", "put_page", "release_pages", "page_remove_rmap", "zap_",
                             "unmap_", "print_bad_pte"))),
    _rule("workqueue-lockup", r"BUG: workqueue lockup", "BUG: workqueue lockup", K.HANG, H,
          "BUG: workqueue lockup - pool cpus=0 node=0 flags=0x0 nice=0 stuck for 33s!", needs_trace=False),
    # One type for sleeping and scheduling in atomic context: syzkaller's crash types give "BUG: sleeping function
    # called from invalid context in" and "BUG: scheduling while atomic in" the same one, AtomicSleep
    # (pkg/report/crash/title_to_type.go; the corpus's TYPE: ATOMIC_SLEEP of both): one bug, a sleep where none may be,
    # caught by might_sleep() before or by schedule() after.
    _rule("atomic-sleep", r"BUG: sleeping function called from invalid context",
          "BUG: sleeping function called from invalid context in {frame}", K.ATOMIC_SLEEP, H,
          "BUG: sleeping function called from invalid context at mm/slab.h:421", stack=TRACE_ONLY),
    _rule("sched-atomic", r"BUG: scheduling while atomic", "BUG: scheduling while atomic in {frame}", K.ATOMIC_SLEEP,
          H, "BUG: scheduling while atomic: swapper/0/0x00000002", stack=_stack((CALL_TRACE, TRACE), skip=("schedule",
          "preempt"))),
    _rule("this-cpu-preemptible", r"BUG: using ([a-z_]+\(\)) in preemptible",
          "BUG: using {h1} in preemptible code in {frame}", K.ATOMIC_SLEEP, M,
          "BUG: using smp_processor_id() in preemptible [00000000] code: syz/1", stack=_stack((CALL_TRACE, TRACE),
          skip=("dump_stack", "preemption", "preempt", "debug_", "processor_id", "this_cpu"))),
    _rule("workqueue-leak", r"BUG: workqueue leaked lock or atomic", "BUG: workqueue leaked lock or atomic in {r1}",
          K.LOCKING, H, "BUG: workqueue leaked lock or atomic: kworker/0:1/0x00000000/12",
          report=r"last function: ([a-zA-Z0-9_]+)", needs_trace=False),
    _rule("memory-leak", r"BUG: memory leak", "memory leak in {frame}", K.LEAK, M, "BUG: memory leak",
          stack=_stack((BACKTRACE, TRACE), skip=("kmemleak", "kmalloc", "kcalloc", "kzalloc", "vmalloc", "mmap",
          "kmem", "slab", "alloc", "create_object", "idr_get", "list_lru_init", "kasprintf", "kvasprintf",
          "pcpu_create", "strdup", "strndup", "memdup"))),
    _rule("stack-guard", r"BUG: (?:TASK |IRQ )?stack guard page was hit at", "BUG: stack guard page was hit in {frame}",
          K.STACK_OVERFLOW, C, "BUG: stack guard page was hit at 00000000dead (stack is 0000..0000)",
          needs_trace=False,
          # The overflow is a deep recursion: the frame above the dispatch point names the operation.
          stack=_stack((CALL_TRACE, TRACE), extractor="stall")),
    _rule("max-stack-entries", r"BUG: MAX_(STACK_TRACE_ENTRIES|LOCKDEP_[A-Z_]+) too low!", "BUG: MAX_{h1} too low!",
          K.LOCKDEP, M, "BUG: MAX_STACK_TRACE_ENTRIES too low!", needs_trace=False),
    _rule("invalid-wait-context", r"BUG: Invalid wait context", "WARNING: locking bug in {frame}", K.LOCKDEP, H,
          "[ BUG: Invalid wait context ]", stack=TRACE_ONLY),
    _rule("lockdep-subclass", r"BUG: looking up invalid subclass", "BUG: looking up invalid subclass in {frame}",
          K.LOCKDEP, H, "BUG: looking up invalid subclass: 8", stack=TRACE_ONLY),
    _rule("bug-empty", r"BUG:\s*$", "BUG: corrupted", K.BUG, H, "BUG:", corrupted=True),
    _rule("bug-generic", r"BUG: ([A-Za-z][^:!\]]*?)(?:[:!\]].*)?$", "BUG: {h1}", K.BUG, H, "BUG: Object already free",
          needs_trace=False),
    _rule("slub-object", r"BUG [a-z0-9_\-]+ \([^)]*\): (Object already free|.+?)\s*$", "BUG: {h1}", K.MM, H,
          "BUG kmalloc-64 (Not tainted): Object already free"),
    # --- WARNING: and lockdep -----------------------------------------------------------------------
    # A hard lockup as kernels before v4.4 reported it: the perf NMI watchdog's callback, on the locked CPU, did
    # WARN(1, "Watchdog detected hard LOCKUP on cpu %d") (panic() with the same text under hardlockup_panic:
    # panic-watchdog-lockup).  So the header names the watchdog's own function, and the message under it has no
    # "NMI watchdog: " (kernel/watchdog.c's pr_fmt, which WARN() and panic() do not apply): v4.3's
    # watchdog_overflow_callback() still WARNs, v4.4's prints the message with pr_emerg() and then the registers
    # (the hard-lockup rule) and panics with "Hard LOCKUP".  Titled, and explained, as that rule's report.
    _rule("warn-hard-lockup", r"WARNING: .*kernel/watchdog\.c:\d+ watchdog_overflow_callback\+",
          "BUG: hard lockup in {frame}", K.LOCKUP, C,
          "WARNING: at kernel/watchdog.c:245 watchdog_overflow_callback+0x9c/0xd0()", stack=_PRE_4_4_HARD_LOCKUP),
    _rule("warn-odebug", r"WARNING: .*lib/debugobjects\.c", "WARNING: ODEBUG bug in {frame}", K.WARNING, M,
          "WARNING: CPU: 0 PID: 1 at lib/debugobjects.c:481 debug_print_object+0x1/0x2", stack=_warning_stack("debug_",
          "rcu", "hrtimer_", "timer_", "work_", "percpu_", "kmem_", "slab_", "kfree", "vunmap", "vfree", "__free_",
          "debug_check", "kobject_")),
    _rule("warn-usercopy", r"WARNING: .*mm/usercopy\.c", "WARNING: bad usercopy in {frame}", K.WARNING, M,
          "WARNING: CPU: 0 PID: 1 at mm/usercopy.c:80 usercopy_warn+0x1/0x2", stack=_warning_stack("usercopy",
          "__check")),
    _rule("warn-kobject", r"WARNING: .*lib/kobject\.c", "WARNING: kobject bug in {frame}", K.WARNING, M,
          "WARNING: CPU: 0 PID: 1 at lib/kobject.c:600 kobject_put+0x1/0x2", stack=_warning_stack("kobject_")),
    _rule("warn-proc", r"WARNING: .*fs/proc/generic\.c.* proc_register", "WARNING: proc registration bug in {frame}",
          K.WARNING, M, "WARNING: CPU: 0 PID: 1 at fs/proc/generic.c:300 proc_register+0x1/0x2",
          stack=_warning_stack("proc_")),
    _rule("warn-refcount", r"WARNING: .*lib/refcount\.c", "WARNING: refcount bug in {frame}", K.REFCOUNT, H,
          "WARNING: CPU: 0 PID: 1 at lib/refcount.c:28 refcount_warn_saturate+0x1/0x2",
          stack=_warning_stack("refcount", "kobject_")),
    _rule("warn-lockdep", r"WARNING: .*kernel/locking/lockdep\.c", "WARNING: locking bug in {frame}", K.LOCKDEP, H,
          "WARNING: CPU: 0 PID: 1 at kernel/locking/lockdep.c:1 __lock_acquire+0x1/0x2",
          stack=_warning_stack("lock_sock", "release_sock")),
    _rule("warn-lock-held-user", r"WARNING: lock held when returning to user space",
          "WARNING: lock held when returning to user space in {r1}", K.LOCKDEP, H,
          "WARNING: lock held when returning to user space!",
          report=r"leaving the kernel with locks still held" + _LOCKDEP_AT, needs_trace=False),
    _rule("warn-kmalloc", r"WARNING: .*mm/.*\.c.* k?.?malloc", "WARNING: kmalloc bug in {frame}", K.WARNING, M,
          "WARNING: CPU: 0 PID: 1 at mm/slab_common.c:1 kmalloc_slab+0x1/0x2", stack=_warning_stack("kmalloc",
          "kcalloc", "kzalloc", "krealloc", "vmalloc", "slab", "kmem")),
    _rule("warn-zero-vmalloc", r"WARNING: .*mm/vmalloc\.c.* __vmalloc_node_range",
          "WARNING: zero-size vmalloc in {frame}", K.WARNING, M,
          "WARNING: CPU: 0 PID: 1 at mm/vmalloc.c:2 __vmalloc_node_range+0x1/0x2", stack=_warning_stack("vmalloc",
          "kvmalloc", "kvzalloc", "kvcalloc")),
    _rule("warn-usb", r"WARNING: .* usb_submit_urb", "WARNING in {frame}/usb_submit_urb", K.WARNING, M,
          "WARNING: CPU: 0 PID: 1 at drivers/usb/core/urb.c:1 usb_submit_urb+0x1/0x2",
          stack=_warning_stack("usb_submit_urb", "usb_start_wait_urb", "usb_bulk_msg", "usb_interrupt_msg",
          "usb_control_msg" )),
    _rule("warning", r"WARNING: (?:CPU: \d+ PID: \d+ at \S+|\S+:\d+ at \S+|at \S+)", "WARNING in {frame}", K.WARNING,
          M, "WARNING: CPU: 1 PID: 99 at drivers/foo/bar.c:42 foo_probe+0x1/0x2", stack=_warning_stack()),
    _rule("lockdep-circular", r"(?:WARNING|INFO): possible circular locking dependency detected",
          "possible deadlock in {r1}", K.LOCKDEP, H, "WARNING: possible circular locking dependency detected",
          report=r"is trying to acquire lock" + _LOCKDEP_AT + _HELD_AT, stack=TRACE_ONLY),
    _rule("lockdep-irq-inversion", r"(?:WARNING|INFO): possible irq lock inversion dependency detected",
          "possible deadlock in {r1}", K.LOCKDEP, H, "WARNING: possible irq lock inversion dependency detected",
          report=r"just changed the state of lock" + _LOCKDEP_AT, stack=TRACE_ONLY),
    _rule("lockdep-irq-order", r"(?:WARNING|INFO): (?:SOFT|HARD)IRQ-safe -> (?:SOFT|HARD)IRQ-unsafe lock order",
          "possible deadlock in {frame}", K.LOCKDEP, H, "WARNING: SOFTIRQ-safe -> SOFTIRQ-unsafe lock order detected",
          stack=_stack((_anchor(r"which became [A-Z]+-irq-safe at:"), TRACE)),
          report=r"is trying to acquire" + _LOCKDEP_AT),
    _rule("lockdep-recursive", r"(?:WARNING|INFO): possible recursive locking detected", "possible deadlock in {r1}",
          K.LOCKDEP, H, "WARNING: possible recursive locking detected",
          report=r"is trying to acquire lock" + _LOCKDEP_AT, stack=TRACE_ONLY),
    _rule("lockdep-inconsistent", r"(?:WARNING|INFO): inconsistent lock state", "inconsistent lock state in {r1}",
          K.LOCKDEP, H, "WARNING: inconsistent lock state", report=r"takes" + _LOCKDEP_AT,
          stack=TRACE_ONLY),
    _rule("suspicious-rcu", r"(WARNING|INFO): suspicious RCU usage", "{h1}: suspicious RCU usage in {frame}", K.RCU, M,
          "WARNING: suspicious RCU usage", stack=_stack((CALL_TRACE, TRACE), skip=("rcu", "kmem", "slab", "kmalloc",
          "vmalloc", "kcalloc", "kzalloc"))),
    _rule("stack-regs-bad", r"WARNING: kernel stack regs at [0-9a-f]+ in [^ ]* has bad '([^']+)' value",
          "WARNING: kernel stack regs has bad '{h1}' value", K.STACK, M,
          "WARNING: kernel stack regs at 00000000 in syz:1 has bad 'bp' value 0000", needs_trace=False),
    _rule("stack-frame-bad", r"WARNING: kernel stack frame pointer at [0-9a-f]+ in [^ ]* has bad value",
          "WARNING: kernel stack frame pointer has bad value", K.STACK, M,
          "WARNING: kernel stack frame pointer at 0000 in syz:1 has bad value 0000", needs_trace=False),
    _rule("stack-frame-bad-hashed", r"WARNING: kernel stack (?:frame pointer|regs) .* has bad (?:'bp' )?value",
          "WARNING: kernel stack regs has bad value", K.STACK, M,
          "WARNING: kernel stack frame pointer at (ptrval) in syz:1 has bad value (ptrval)", needs_trace=False),
    _rule("warn-bad-unlock", r"WARNING: bad unlock balance detected!", "WARNING: bad unlock balance in {r1}",
          K.LOCKDEP, H, "WARNING: bad unlock balance detected!",
          report=r"is trying to release lock(?:.*\n){0,15}?.*(?:" + _PC + r"|at:) +" + _FUNC, stack=TRACE_ONLY,),
    _rule("warn-held-lock-freed", r"WARNING: held lock freed!", "WARNING: held lock freed in {r1}", K.LOCKDEP, H,
          "WARNING: held lock freed!", report=r"held lock freed!(?:.*\n)+?.*at:(?: " + _PC + r")? +" + _FUNC,),
    _rule("warn-locks-held", r"WARNING: .*still has locks held!", "WARNING: still has locks held in {r1}", K.LOCKDEP,
          H, "WARNING: syz/1 still has locks held!",
          report=r"still has locks held!(?:.*\n)+?.*(?:" + _PC + r"|at:) +" + _FUNC),
    _rule("warn-nested-lock", r"WARNING: nested lock was not taken", "WARNING: nested lock was not taken in {frame}",
          K.LOCKDEP, H, "WARNING: nested lock was not taken", stack=TRACE_ONLY),
    _rule("warn-empty", r"WARNING:\s*$", "WARNING: corrupted", K.WARNING, M, "WARNING:", corrupted=True),
    # --- INFO: ------------------------------------------------------------------------------
    _rule("rcu-tasks-stall", r"INFO: rcu_tasks\w* detected stalls? on tasks", "INFO: rcu detected stall in {frame}",
          K.RCU_STALL, H, "INFO: rcu_tasks detected stalls on tasks:", stack=_stack((CALL_TRACE, TRACE), skip=("rcu",),
          extractor="stall")),
    _rule("rcu-stall", r"INFO: rcu_\w+ (?:self-)?detected(?: expedited)? stall", "INFO: rcu detected stall in {frame}",
          K.RCU_STALL, H, "rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:", stack=_stack((IRQ_ENTRY, RIP,
          TRACE), (IRQ_ENTRY, TRACE), skip=("apic_timer_interrupt", "rcu"), extractor="stall")),
    _rule("non-static-key", r"INFO: trying to register non-static key",
          "INFO: trying to register non-static key in {frame}", K.LOCKDEP, M,
          "INFO: trying to register non-static key.", stack=_stack((CALL_TRACE, TRACE), skip=("stack", "lock",
          "IRQ"))),
    _rule("hung-task", r"INFO: task .* blocked (?:in I/O wait )?for more than [0-9]+ seconds",
          "INFO: task hung in {frame}", K.HANG, H, "INFO: task kworker/0:1:12 blocked for more than 143 seconds.",
          stack=_stack((CALL_TRACE, TRACE), extractor="hung")),
    _rule("task-cant-die", r"INFO: task .* can't die for more than [0-9]+ seconds", "INFO: task can't die in {frame}",
          K.HANG, H, "INFO: task syz:1 can't die for more than 143 seconds.", stack=_stack((CALL_TRACE, TRACE),
          extractor="hung")),
    _rule("info-alloc-free", r"INFO: (Freed|Allocated) in (.*)", "INFO: {h1} in {h2}", K.KASAN, H,
          "INFO: Freed in kfree+0x1/0x2 age=1 cpu=0 pid=1", corrupted=True),
    _rule("info-empty", r"INFO:\s*$", "INFO: corrupted", K.BUG, M, "INFO:", corrupted=True),
    # --- oopses, traps and exceptions ------------------------------------------------------------
    _rule("gpf", r"general protection fault.*:", "general protection fault in {frame}", K.GPF, C,
          "general protection fault, probably for non-canonical address 0xdffffc0000000000: 0000 [#1] SMP KASAN",
          stack=RIP_THEN_TRACE),
    _rule("stack-segment", r"stack segment: ", "stack segment fault in {frame}", K.GPF, C,
          "stack segment: 0000 [#1] PREEMPT SMP KASAN", stack=RIP_THEN_TRACE),
    _rule("double-fault", r"PANIC: double fault", "PANIC: double fault in {frame}", K.STACK_OVERFLOW, C,
          "PANIC: double fault, error_code: 0x0", stack=_stack((RIP,)), starts=False),
    _rule("list-corruption", r"kernel BUG at lib/list_debug\.c", "BUG: corrupted list in {frame}", K.LIST_CORRUPTION,
          C, "kernel BUG at lib/list_debug.c:53!", stack=_stack((RIP, CALL_TRACE, TRACE), (CALL_TRACE, TRACE))),
    _rule("bad-usercopy", r"kernel BUG at mm/usercopy\.c", "BUG: bad usercopy in {frame}", K.USERCOPY, C,
          "kernel BUG at mm/usercopy.c:99!", stack=_stack((RIP, CALL_TRACE, TRACE), (CALL_TRACE, TRACE),
          skip=("usercopy", "__check"))),
    # A Rust panic ends in BUG() from a C helper; the "panicked at" lines above it start the report.
    _rule("rust-bug", r"kernel BUG at rust/", "kernel BUG in {frame}", K.RUST_PANIC, C,
          "kernel BUG at rust/helpers/bug.c:7!", stack=_stack((CALL_TRACE, TRACE), skip=_RUST_SKIP), starts=False),
    _rule("kernel-bug", r"kernel BUG at (.*)", "kernel BUG in {frame}", K.BUG, C,
          "kernel BUG at fs/ext4/inode.c:2700!", stack=RIP_THEN_TRACE),
    _rule("kernel-bug-ppc", r"Kernel BUG (.*)", "kernel BUG {h1}", K.BUG, C,
          "Kernel BUG at c000000000123456 [verbose debug info unavailable]", needs_trace=False),
    _rule("divide-error", r"divide[ _]error: ", "divide error in {frame}", K.TRAP, C, "divide error: 0000 [#1] SMP",
          stack=_stack((RIP,))),
    _rule("invalid-opcode", r"invalid opcode: ", "invalid opcode in {frame}", K.TRAP, C,
          "invalid opcode: 0000 [#1] PREEMPT SMP", stack=_stack((RIP,)), needs_trace=False, starts=False),
    _rule("ubsan-legacy", r"UBSAN: Undefined behaviour in", "UBSAN: undefined-behaviour in {frame}", K.UBSAN, M,
          "UBSAN: Undefined behaviour in net/core/foo.c:12:3", stack=_stack((CALL_TRACE, TRACE), skip=("ubsan",
          "overflow"))),
    _rule("ubsan", r"UBSAN: ([a-z\-]+) in ", "UBSAN: {h1} in {frame}", K.UBSAN, M,
          "UBSAN: array-index-out-of-bounds in net/foo.c:12:3", stack=_stack((CALL_TRACE, TRACE), skip=("ubsan",
          "overflow"))),
    _rule("internal-error", r"Internal error: ", "Internal error in {frame}", K.OOPS, C,
          "Internal error: Oops: 96000004 [#1] PREEMPT SMP", stack=_stack((RIP, CALL_TRACE, TRACE), (CALL_TRACE,
          TRACE)), starts=False),
    _rule("unhandled-fault", r"Unhandled fault:", "Unhandled fault in {frame}", K.OOPS, C,
          "Unhandled fault: alignment exception (0x001) at 0x00000001", stack=_stack((RIP, CALL_TRACE, TRACE),
          (CALL_TRACE, TRACE))),
    _rule("alignment-trap", r"Alignment trap: ", "Alignment trap in {frame}", K.OOPS, C,
          "Alignment trap: not handling instruction e1923f9f at [<80123456>]", stack=_stack((RIP, CALL_TRACE, TRACE),
          (CALL_TRACE, TRACE))),
    _rule("arm-paging", r"Unable to handle kernel (paging request|NULL pointer dereference)",
          "BUG: unable to handle kernel {h1} in {frame}", K.PAGE_FAULT, C,
          "Unable to handle kernel paging request at virtual address dead000000000108",
          stack=_stack((RIP, CALL_TRACE, TRACE), (CALL_TRACE, TRACE), (LR,))),
    _rule("oops", r"Oops(?: - [a-z ]+)?: [0-9a-f]{4}", "Oops in {frame}", K.OOPS, C, "Oops: 0002 [#1] SMP PTI",
          stack=RIP_THEN_TRACE, starts=False),
    # --- panics -----------------------------------------------------------------------------
    _rule("panic-stack-protector", r"Kernel panic - not syncing: stack-protector: .* in: " + _FUNC,
          "kernel panic: stack is corrupted in {h1}", K.STACK_PROTECTOR, C,
          "Kernel panic - not syncing: stack-protector: Kernel stack is corrupted in: foo+0x1/0x2", needs_trace=False),
    _rule("panic-stack-protector-addr", r"Kernel panic - not syncing: stack-protector:",
          "kernel panic: stack is corrupted in {frame}", K.STACK_PROTECTOR, C,
          "Kernel panic - not syncing: stack-protector: Kernel stack is corrupted in: ffffffff81234567",
          stack=_stack((CALL_TRACE, TRACE), skip=("stack_chk",))),
    _rule("panic-stack-end", r"Kernel panic - not syncing: corrupted stack end",
          "kernel panic: corrupted stack end in {frame}", K.STACK_OVERFLOW, C,
          "Kernel panic - not syncing: corrupted stack end detected inside scheduler", stack=_stack((CALL_TRACE,
          TRACE), skip=("schedule", "retint_kernel"), extractor="stall")),
    _rule("panic-kill-init", r"Kernel panic - not syncing: Attempted to kill init!",
          "kernel panic: Attempted to kill init!", K.PANIC, C,
          "Kernel panic - not syncing: Attempted to kill init! exitcode=0x0000000b"),
    _rule("panic-n-tty", r"Kernel panic - not syncing: Couldn't open N_TTY ldisc for [^ ]+ --- error -[0-9]+",
          "kernel panic: Couldn't open N_TTY ldisc", K.PANIC, C,
          "Kernel panic - not syncing: Couldn't open N_TTY ldisc for ptm0 --- error -12."),
    _rule("panic-root", r"Kernel panic - not syncing: (VFS: Unable to mount root fs.*)", "kernel panic: {h1}",
          K.NO_ROOT, C, "Kernel panic - not syncing: VFS: Unable to mount root fs on unknown-block(0,0)",
          needs_trace=False),
    _rule("panic-fatal-exception", r"Kernel panic - not syncing: Fatal exception", "kernel panic: Fatal exception",
          K.PANIC, C, "Kernel panic - not syncing: Fatal exception in interrupt", corrupted=True, starts=False),
    _rule("panic-on-warn", r"Kernel panic - not syncing: (panic_on_\w+ set)", "kernel panic: {h1}", K.PANIC, C,
          "Kernel panic - not syncing: panic_on_warn set ...", corrupted=True, starts=False),
    _rule("panic-hung-task", r"Kernel panic - not syncing: hung_task: blocked tasks",
          "kernel panic: hung_task: blocked tasks", K.PANIC, C, "Kernel panic - not syncing: hung_task: blocked tasks",
          corrupted=True, starts=False),
    # The panic of a pre-v4.4 hard lockup (warn-hard-lockup): the report's first line; like every panic, inside
    # another report it continues it.  Only the perf NMI watchdog's (its callback in the trace): other arches'
    # detectors panic with the same text and other frames (arm's, which watches another CPU from a timer, on the CPU
    # that noticed, whose trace is not the locked CPU's), and keep the generic panic's title.
    _rule("panic-watchdog-lockup", r"Kernel panic - not syncing: Watchdog detected hard LOCKUP on cpu \d+",
          "BUG: hard lockup in {frame}", K.LOCKUP, C,
          "Kernel panic - not syncing: Watchdog detected hard LOCKUP on cpu 3", report=r"watchdog_overflow_callback",
          stack=_PRE_4_4_HARD_LOCKUP, starts=False),
    _rule("panic-hard-lockup", r"Kernel panic - not syncing: (Hard LOCKUP|softlockup: hung tasks)",
          "kernel panic: {h1}", K.LOCKUP, C, "Kernel panic - not syncing: Hard LOCKUP", needs_trace=False,
          starts=False),
    _rule("panic", r"Kernel panic - not syncing: (.*?)\s*$", "kernel panic: {h1}", K.PANIC, C,
          "Kernel panic - not syncing: bad mode", needs_trace=False, starts=False),
    # --- watchdogs, hardware and other subsystems ------------------------------------------------
    _rule("hard-lockup",
          r"(?:NMI watchdog|[Ww]atchdog): (?:Watchdog detected hard LOCKUP|BUG: hard lockup) on cpu (\d+)",
          "BUG: hard lockup in {frame}", K.LOCKUP, C, "watchdog: Watchdog detected hard LOCKUP on cpu 1",
          stack=_stack((RIP, CALL_TRACE, TRACE), (CALL_TRACE, TRACE), (LR,), skip=_NMI_WATCHDOG_SKIP)),
    _rule("machine-check", r"(?:mce: )?\[Hardware Error\]: (?:CPU \d+: )?(Machine Check(?: Exception)?)", "MCE: {h1}",
          K.HARDWARE, C, "mce: [Hardware Error]: CPU 0: Machine Check Exception: 5 Bank 4: b200000000070f0f",
          needs_trace=False),
    _rule("vfs-busy-inodes", r"VFS: Busy inodes after unmount", "VFS: Busy inodes after unmount (use-after-free)",
          K.FS, H, "VFS: Busy inodes after unmount of sda1. Self-destruct in 5 seconds.  Have a nice day...",
          needs_trace=False),
    # --- reports without a classic oops header -------------------------------------------------
    # Rust: "rust_kernel: panicked at FILE:LINE:COL:" and the panic message on the next line; the
    # title is the message in the first frame that is not the panic machinery (core::panicking).
    _rule("rust-panic", r"panicked at (?:'[^']*', )?\S+\.rs:\d+", "{r1} in {frame}", K.RUST_PANIC, C,
          "rust_kernel: panicked at drivers/android/binder/node.rs:877:13:",
          report=r"panicked at [^\n]*\.rs:[\d:]+\s*\n\s*(\S[^\n]*?)\s*(?:\n|$)",
          stack=_stack((CALL_TRACE, TRACE), skip=_RUST_SKIP)),
    _rule("rust-panic-inline", r"panicked at '([^']*)', \S+\.rs:\d+", "{h1} in {frame}", K.RUST_PANIC, C,
          "rust_kernel: panicked at 'index out of bounds', rust/kernel/lib.rs:12:5",
          stack=_stack((CALL_TRACE, TRACE), skip=_RUST_SKIP)),
    # A net device whose references are never dropped: unregistration waits for ever.  The device name
    # differs between runs of one bug.  Like a panic it does not cut the report it appears in.
    _rule("netdev-unregister", r"unregister_netdevice: waiting for \S+ to become free",
          "unregister_netdevice: waiting for DEV to become free", K.HANG, H,
          "unregister_netdevice: waiting for lo to become free. Usage count = 2", needs_trace=False, starts=False),
    # The kernel booted again with no crash report, panic or reboot request before: the previous boot
    # died silently (triple fault, watchdog, power).  The scanner keeps only mid-log boots that follow
    # a later printk time with none of those just above (see scanner._unexpected_reboot).
    _rule("unexpected-reboot", r"^Linux version \d+\.\d+", "unexpected kernel reboot", K.REBOOT, H,
          "Linux version 6.1.0 (gcc 12) #1 SMP PREEMPT_DYNAMIC", needs_trace=False),
    # VFS consistency checks that print no WARNING header.
    _rule("vfs-close", r"VFS: Close: file count is 0", "VFS: Close: file count is 0", K.FS, H,
          "VFS: Close: file count is 0", needs_trace=False),
    _rule("vfs-brelse", r"VFS: brelse: Trying to free free buffer", "VFS: brelse: Trying to free free buffer", K.FS,
          H, "VFS: brelse: Trying to free free buffer", needs_trace=False),
    # arm64 stack overflow: the exception entry finds no stack left and panics ("kernel stack overflow").
    _rule("arm64-stack-overflow", r"Insufficient stack space to handle exception!", "kernel stack overflow in {frame}",
          K.STACK_OVERFLOW, C, "Insufficient stack space to handle exception!",
          stack=_stack((RIP, CALL_TRACE, TRACE), (CALL_TRACE, TRACE)), needs_trace=False),
    # Firmware and trusted execution environments that log through the kernel: Trusty (Android's TEE)
    # prints its own panics and assertions; the assertion text names the bug.
    _rule("trusty-assert", r"trusty: panic .*?ASSERT FAILED at \([^)]*\):\s*(.*?)\s*$",
          "trusty: ASSERT FAILED: {h1}", K.FIRMWARE, C,
          "trusty: panic (caller 0xffffffffe000fbd0): DEBUG ASSERT FAILED at (lib/reflist.h:63): list_in_list(&r)",
          needs_trace=False),
    _rule("trusty-panic", r"trusty: panic(?: \(caller [^)]*\))?:?\s*(.*?)\s*$", "trusty: panic: {h1}", K.FIRMWARE, C,
          "trusty: panic (caller 0xffffffffe000fbd0): out of memory", needs_trace=False),
    _rule("syzfail", r"SYZFAIL: (.*?)\s*$", "SYZFAIL: {h1}", K.SYZ_FAILURE, M, "SYZFAIL: SIGSEGV", needs_trace=False),
    _rule("syzfatal", r"SYZFATAL: (.*?)\s*$", "SYZFATAL: {h1}", K.SYZ_FAILURE, M,
          "SYZFATAL: executor 1 failed 11 times: failed to create temp dir", needs_trace=False),
)
# fmt: on

#: Header lines that look like a report but are not one (printed by tools, or informational).
IGNORED = rc.compile(
    r"WARNING: /etc/ssh/moduli does not exist|WARNING: workqueue cpumask: online intersect > possible intersect|"
    r"INFO: lockdep is turned off|INFO: Stall ended before state dump start|INFO: NMI handler|"
    r"INFO: recovery required on readonly filesystem|(?:handler|interrupt).*took too long|_INFO::|"
    r"INFO: sys_.* is not present in /proc/kallsyms|INFO: no syscalls can create resource|"
    r"BUG: no syscalls can create resource|ODEBUG:|Boot_DEBUG:|DEBUG:"
)

#: A fast first look at raw bytes.  Every report has one of these words in its header or in
#: the line that follows it: ``[#1]`` is the oops counter of x86 and arm oopses, ``Kernel panic``
#: follows the reports whose own header has no trigger word (the scanner then looks a few lines
#: up for that header), ``Mem-Info`` marks memory events (their header is found above it).
#: The scanner finds them all in one pass (an Aho-Corasick automaton, :data:`detectors.dmesg.scanner`).
TRIGGERS: tuple[bytes, ...] = (
    b"WARNING",
    b"PANIC",
    b"INFO:",
    b"Mem-Info",
    b"Insufficient stack",  # arm64 stack overflow
    b"BUG",
    b"Busy inodes",
    b"UBSAN:",
    b"Kernel panic",
    b"LOCKUP",
    b"KASAN:",
    b"KMSAN:",
    b"KCSAN:",
    b"KFENCE:",
    b"Linux version",  # a boot banner: a reboot when it is not the log's first boot
    b"SYZFAIL:",  # syzkaller's executor failures on the console
    b"SYZFATAL:",
    b"Machine Check",
    b"[#",
    # Report kinds whose header has no upper-case word.
    b"rust_kernel: panicked",
    b"unregister_netdevice: waiting",
    b"trusty: panic",
    b"VFS: Close",
    b"VFS: brelse",
)
