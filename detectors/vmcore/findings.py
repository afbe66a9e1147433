"""Findings and ranked hypotheses from a crash dump snapshot.

Evidence from the dump itself uses locators that only the dump can resolve:
``FRAME`` (a frame of the crashed thread's backtrace, excerpt ``func+off/size``),
``REGISTER`` (``start`` the frame, ``name`` the register, excerpt ``rax=0x...``),
``ADDRESS`` (an instruction, excerpt its capstone text) and ``LINE`` on the
source ``<dump>#log`` (the dump's printk records, one per line).  The resolvers
in :mod:`forensics.vmcore.resolve` read them back from the dump with drgn.
"""

from __future__ import annotations

import dataclasses
import os
import re

from detectors.dmesg.taint import TAINT_FLAGS
from detectors.incident.deliberate import is_deliberate
from detectors.incident.hypotheses import DUMP_FAULT_ADDRESS, DUMP_FREE_SHARE, FREE_AT_CRASH
from detectors.vmcore.faultaddr import fault_address_record
from detectors.vmcore.steps import runs_here
from forensics.model import (
    Baseline,
    Clock,
    Evidence,
    Fact,
    Finding,
    FindingKind,
    IdFamily,
    Locator,
    LocatorKind,
    NotAvailable,
    Severity,
    Subject,
    SubjectKind,
    Timestamp,
    finding_id,
)
from forensics.quoting import shell_word, shown_path
from forensics.types.deliberate import FORCED
from forensics.types.dmesg import KernelReport
from forensics.types.vmcore import (
    WAIT_FRAMES,
    BugSite,
    CompletionWait,
    CrashSnapshot,
    FaultAnalysis,
    Frame,
    SlabCacheInfo,
    TaskInfo,
)

DETECTOR = "vmcore"
#: A slab cache holding more than this share of RAM is outsized.
OUTSIZED_SHARE = 0.10
#: ... or more than this many times the next largest cache and at least this many bytes.
OUTSIZED_FACTOR = 4.0
OUTSIZED_MIN_BYTES = 8 << 20
#: A module's own cache among this many largest caches, with at least this many bytes, is outsized.
MODULE_CACHE_RANK = 3
MODULE_CACHE_MIN_BYTES = 256 << 10
#: The hung-task detector's default timeout (``hung_task_timeout_secs``, kernel/hung_task.c
#: ``CONFIG_DEFAULT_HUNG_TASK_TIMEOUT``): a D-state sleep shorter than it is no hang the kernel would report.
HUNG_TASK_TIMEOUT_S = 120

# What each severity of the dump's findings is judged against (docs/severity.md, "Crash dumps").
#: The crash itself: a dump exists because the kernel panicked.
CRASHED = Baseline("the kernel crashed", "the machine went down", "a kdump dump is written only after a kernel panic")
# A crash requested with sysrq (detectors/incident/deliberate.py) is judged by FORCED, the baseline the log's report
# of it is judged by too (forensics/types/deliberate.py): it broke nothing that was not asked for.
#: A cause the dump's values establish: as severe as the crash it explains.
EXPLAINS_CRASH = Baseline("the crash it explains", "the machine went down", "read from the dump's values at the crash")
#: Tasks that wait for each other's locks: the wait never ends, however long it has lasted.
CYCLE = Baseline(
    "a wait in a lock cycle", "no task in the cycle can go on: a deadlock", "each lock's owner read from the dump"
)
#: A lock wait the kernel's hung-task detector reported: it judged the wait itself, against its own timeout.
LOCK_WAIT_REPORTED = Baseline(
    "the hung-task detector's timeout", "exceeded: khungtaskd reported the waiter", "the kernel's report in the log"
)
#: A lock wait read from the lock alone (the dump lacks the waiter's task_struct): how long it lasted is unknown.
LOCK_WAIT = Baseline(
    "time waited against the hung-task timeout",
    "unknown (the dump lacks the waiter's task_struct: when it last ran)",
    "hung_task_timeout_secs (Documentation/admin-guide/sysctl/kernel.rst)",
)
#: A module in the crashed thread's stack: who can debug the crash (its taint), not a harm of its own.
MODULE_IN_CRASH = Baseline(
    "the crash whose stack runs in it",
    "its harm is the crash finding's, counted once there",
    "its taint (O out-of-tree, E unsigned, P proprietary, C staging): kernel developers cannot debug it",
)
#: Values at the crash that match poison or code patterns: what kind of bug it was, not a harm of its own.
SUSPICIOUS = Baseline(
    "the crash they hint at",
    "its harm is the crash finding's (and the cause's the values establish), counted once there",
    "values read at the crash that match known poison, list-poison or code patterns: a clue to the kind of bug",
)
#: The dump's findings that are clues to the crash, not harm: the crash (and the cause its values establish) count
#: the machine going down once; who can debug it and what kind of bug the values suggest are context, which rated
#: medium counted the one crash's harm again (ue17 #11).  Kind: (severity, baseline); docs/severity.md "Crash dumps".
CLUES: dict[FindingKind, tuple[Severity, Baseline]] = {
    FindingKind.MODULE: (Severity.INFO, MODULE_IN_CRASH),
    FindingKind.SUSPICIOUS_VALUES: (Severity.INFO, SUSPICIOUS),
}


def log_source(dump_path: str) -> str:
    """The evidence source name of the dump's own log buffer."""
    return f"{dump_path}#log"


def register_excerpt(name: str, value: int) -> str:
    """How a register value is cited: ``rax=0x0000000000000000``."""
    return f"{name}={value:#018x}"


#: The name of an ADDRESS locator of memory words: ``u32`` (one 32-bit word), ``u64x2`` (two 64-bit words), ...
#: An ADDRESS locator's name of memory words: their width and count, and optionally what they are
#: (``u64 of pid 43's sched_info.last_arrival``).
MEMORY_WORDS = re.compile(r"u(32|64)(?:x(\d+))?(?: of .+)?")


def memory_locator_name(width: int, count: int) -> str:
    """The ADDRESS locator's name of ``count`` little-endian words of ``width`` bytes: ``u32``, ``u64x4``."""
    return f"u{width * 8}" + (f"x{count}" if count > 1 else "")


def last_run_evidence(snap: CrashSnapshot, task: TaskInfo) -> Evidence | None:
    """When ``task`` last ran, read from the dump (``sched_info.last_arrival`` or ``se.exec_start``), as evidence
    with that time: on a timeline it starts the interval the task has been off the CPU (a read value, not a printed
    line)."""
    ran = task.last_run
    if ran is None:
        return None
    where = Locator(LocatorKind.ADDRESS, ran.address, name=f"u64 of pid {task.pid}'s {ran.field}")
    return Evidence(
        snap.dump_path, where, memory_excerpt((ran.ns,), 8), timestamp=Timestamp(ran.seconds, Clock.MONOTONIC)
    )


def _wait_end_evidence(snap: CrashSnapshot, task: TaskInfo) -> Evidence | None:
    """Where a blocked task's wait is last seen in the dump's log: khungtaskd's report of it, else the log's last
    record (the crash); the end of the interval :func:`last_run_evidence` starts."""
    said = f"task {task.comm}:{task.pid} blocked for more than"
    return record_evidence(snap, next((i for i, r in enumerate(snap.log) if said in r.text), len(snap.log) - 1))


def record_evidence(snap: CrashSnapshot, index: int) -> Evidence | None:
    """The dump's log record ``index`` (0-based; -1: the last, the crash's) as evidence with its printk time."""
    if not snap.log:
        return None
    record = snap.log[index]
    found = index % len(snap.log)
    return Evidence(
        log_source(snap.dump_path),
        Locator(LocatorKind.LINE, found + 1),
        record.text.split("\n", 1)[0],
        timestamp=Timestamp(record.seconds, Clock.MONOTONIC),
    )


def memory_excerpt(words: tuple[int, ...] | list[int], width: int) -> str:
    """How memory words read from a dump are cited (``crash> rd -64 ADDR N`` shows the same values)."""
    return " ".join(f"{w:#0{2 + 2 * width}x}" for w in words)


def taint_letters_of(mask: int) -> str:
    """Taint letters of a ``tainted_mask`` value, in the kernel's order."""
    return "".join(letter for bit, (letter, _) in enumerate(TAINT_FLAGS) if mask >> bit & 1)


#: Functions on the way from panic into the capture kernel; their saved registers are not the fault's.
KEXEC_PATH = (
    "crash_setup_regs",
    "__crash_kexec",
    "crash_kexec",
    "machine_crash_shutdown",
    "native_machine_crash_shutdown",
    "crash_save_cpu",
    "crash_nmi_callback",
    "kdump_nmi_callback",
)
#: Functions that end in a panic: the crash frame of a panic-time dump is their caller.
_PANIC_CALLS = ("panic", "vpanic", "nmi_panic", "__crash_kexec", "crash_kexec", "crash_setup_regs")


#: Kernel functions whose trap reports corruption that other code caused: a crash in one of them is
#: never a bug of its own (no "a bug in <checker>" hypothesis).  (name, what it checks), by version.
CORRUPTION_CHECKERS: tuple[tuple[str, str], ...] = (
    # CONFIG_DEBUG_LIST: renamed by commit "list: Introduce CONFIG_LIST_HARDENED" (v6.6), which made
    # __list_add_valid()/__list_del_entry_valid() inline wrappers of these.
    ("__list_add_valid_or_report", "the list_add() check of CONFIG_DEBUG_LIST"),
    ("__list_del_entry_valid_or_report", "the list_del() check of CONFIG_DEBUG_LIST"),
    ("__list_add_valid", "the list_add() check of CONFIG_DEBUG_LIST"),
    ("__list_del_entry_valid", "the list_del() check of CONFIG_DEBUG_LIST"),
    ("set_freepointer", "SLAB_FREELIST_HARDENED's double-free check, BUG_ON(object == fp)"),
    ("usercopy_abort", "hardened usercopy's bounds check"),
    # fortify_panic(name) became __fortify_panic(reason, avail, size), which __fortify_report() prints
    # for, in v6.10 (lib/string_helpers.c).
    ("__fortify_panic", "FORTIFY_SOURCE's buffer-overflow check"),
    ("__fortify_report", "FORTIFY_SOURCE's buffer-overflow check"),
    ("fortify_panic", "FORTIFY_SOURCE's buffer-overflow check"),
    ("refcount_warn_saturate", "refcount_t's overflow/underflow check"),
)


#: Functions a CPU spins in while it waits for a spinlock (x86-64 qspinlock, paravirt, debug): a lockup
#: caught there is a wait on the lock, no fault of theirs.  The slowpath is native_queued_spin_lock_slowpath
#: where paravirt spinlocks are configured, queued_spin_lock_slowpath where not (both seen on fixture kernels).
SPIN_FUNCTIONS = (
    "native_queued_spin_lock_slowpath",
    "queued_spin_lock_slowpath",
    "__pv_queued_spin_lock_slowpath",
    "do_raw_spin_lock",
    "_raw_spin_lock",
    "_raw_spin_lock_irq",
    "_raw_spin_lock_irqsave",
    "_raw_spin_lock_bh",
)


def corruption_checker(frame: Frame | None) -> str | None:
    """What a frame's function checks when it is a corruption checker (its trap reports others' bugs)."""
    if frame is None or not isinstance(frame.function, str):
        return None
    name = frame.function.split(".", 1)[0]  # a compiler clone (.constprop.0, .isra.0) is the same check
    return next((what for checker, what in CORRUPTION_CHECKERS if checker == name), None)


def crash_frame(frames: tuple[Frame, ...]) -> Frame | None:
    """The frame where the crash happened.

    The first exception frame (``interrupted``) outside the kexec path is the
    fault itself (an oops, BUG, WARN or the interrupt a lockup detector took);
    a dump taken at panic time without one (sysrq-c, hung task, OOM) crashed in
    the caller of ``panic()``.
    """
    for frame in frames:
        name = frame.function
        if frame.interrupted and isinstance(name, str) and not name.startswith(KEXEC_PATH):
            return physical_frame(frames, frame)
    after_panic = None
    for i, frame in enumerate(frames):
        if isinstance(frame.function, str) and frame.function in _PANIC_CALLS:
            after_panic = i + 1
    if after_panic is not None and after_panic < len(frames):
        return physical_frame(frames, frames[after_panic])
    return frames[0] if frames else None


def culprit_frame(frames: tuple[Frame, ...], crash: Frame | None) -> Frame | None:
    """The first frame from the crash frame outwards that is not generic infrastructure.

    A BUG in ``__list_del_entry_valid`` is a bug of the code that called
    ``list_del``: the dmesg engine's skip lists (locking, lists, strings,
    allocators, reporting, ...) name the frames to pass over.
    """
    from detectors.dmesg.frames import skip_matcher

    if crash is None:
        return None
    skip = skip_matcher(())
    for frame in frames[crash.index :]:
        name = frame.function
        if isinstance(name, str) and not skip.search(name):
            return frame
    return crash


def physical_frame(frames: tuple[Frame, ...], frame: Frame) -> Frame:
    """The real function a frame was inlined into (itself when not inlined).

    drgn lists inlined calls as frames of their own, innermost first, sharing
    the pc; the kernel's log names the real function, so findings do too.
    """
    i = frame.index
    while frames[i].inline and i + 1 < len(frames) and frames[i + 1].pc == frames[i].pc:
        i += 1
    return frames[i]


def innermost_frame(frames: tuple[Frame, ...], frame: Frame) -> Frame:
    """The innermost inlined call at a frame's pc (itself when nothing is inlined there): the source line the
    instruction belongs to, which is the one a BUG()/WARN() names (``kernel BUG at mm/slub.c:305``)."""
    i = frame.index
    while i > 0 and frames[i - 1].inline and frames[i - 1].pc == frame.pc:
        i -= 1
    return frames[i]


def crash_where(snap: CrashSnapshot, frame: Frame, origin: bool = False) -> str | None:
    """``file:line`` of the crash as the kernel states it, with the function it is in when that is not the real
    function the log and the headline name (an inlined call).

    A BUG()/WARN() trap is where its bug table entry says (``kernel BUG at mm/slub.c:305``), which is the innermost
    inlined call at the pc, not the line where the real function inlines it; a dump taken in panic() is at the line
    that called it (``check_hung_uninterruptible_tasks``, inlined into ``watchdog``).  Any other exception (a fault,
    a lockup's interrupt) keeps the real function's line: the innermost there is a helper such as cpu_relax().
    The file is the one a reader opens (:meth:`CrashSnapshot.cite`: the copy found via --source-dir); ``origin``:
    saying so, with the path the debug info names (the source fact's value)."""
    cite = snap.cite_with_origin if origin else snap.cite
    site = snap.bug_site
    inner = innermost_frame(snap.backtrace, frame)
    file, line, function = inner.source_file, inner.source_line, inner.function
    if file is None:
        file, line = frame.source_file, frame.source_line
    if isinstance(site, BugSite) and site.pc == frame.pc and site.file and site.line is not None:
        if inner.source_line != site.line:  # the bug table's word over DWARF's; the same line keeps DWARF's path
            file, line, function = site.file, site.line, site.function
    elif frame.interrupted:
        return cite(frame.source_file, frame.source_line)
    where = cite(file, line)
    if where is None or function == frame.function:
        return where
    return f"{where} in {function}, inlined"


def _frame_evidence(snap: CrashSnapshot, frame: Frame) -> Evidence:
    return Evidence(snap.dump_path, Locator(LocatorKind.FRAME, frame.index), frame.label())


def _log_evidence(snap: CrashSnapshot, needle: str) -> Evidence | None:
    for number, record in enumerate(snap.log, 1):
        if needle in record.text:
            first = record.text.split("\n", 1)[0]
            return Evidence(
                log_source(snap.dump_path),
                Locator(LocatorKind.LINE, number),
                first,
                timestamp=Timestamp(record.seconds, Clock.MONOTONIC),
            )
    return None


def _fault_address_evidence(snap: CrashSnapshot) -> Evidence | None:
    """The log line the fault address (CR2) was read from: the last page fault's, not the first ``CR2:`` line of
    the log (a register dump's CR2 is whatever the last page fault left there: ``CR2: ffffffffc018efef`` in the
    oops of a NULL dereference at 0x30, whose ``CR2: 0000000000000030`` comes at its end)."""
    found = fault_address_record(snap.log)
    if found is None:
        return None
    record = snap.log[found[1]]
    return Evidence(
        log_source(snap.dump_path),
        Locator(LocatorKind.LINE, found[1] + 1),
        record.text.split("\n", 1)[0],
        timestamp=Timestamp(record.seconds, Clock.MONOTONIC),
    )


def _fault_facts(fault: FaultAnalysis) -> list[Fact]:
    if fault.stopped is not None:  # a trap or an interrupt: where the CPU was, no fault to state
        return [Fact("stopped at", f"{fault.instruction.address:#x}: {fault.instruction.text()} ({fault.stopped})")]
    facts = [Fact("faulting instruction", f"{fault.instruction.address:#x}: {fault.instruction.text()}")]
    if fault.base_register is not None and fault.base_value is not None:
        facts.append(Fact("base register", register_excerpt(fault.base_register, fault.base_value)))
    if fault.displacement is not None:
        facts.append(Fact("displacement", f"{fault.displacement:#x}"))
    if fault.effective_address is not None:
        facts.append(Fact("effective address", f"{fault.effective_address:#x}"))
    if fault.fault_address is not None:
        facts.append(Fact(DUMP_FAULT_ADDRESS, f"{fault.fault_address:#x}"))
    if not isinstance(fault.null_field, NotAvailable):
        facts.append(Fact("NULL field", str(fault.null_field)))
    if not isinstance(fault.read_member, NotAvailable):
        facts.append(Fact("member read through it", str(fault.read_member)))
    return facts


def _crash_site(frames: tuple[Frame, ...], frame: Frame | None) -> str:
    """``exception frame``, ``caller of panic()`` or the corruption check that trapped (not the bug's site).

    The check may be inlined into the frame (set_freepointer() into __kmem_cache_free() on 6.1): the
    inlined frames at the same pc count.
    """
    if frame is None or not frame.interrupted:
        return "caller of panic()"
    for inner in (f for f in frames if f.pc == frame.pc and f.index <= frame.index):
        checker = corruption_checker(inner)
        if checker is not None:
            return f"corruption check: {inner.function} is {checker}, which reports corruption other code caused"
    if isinstance(frame.function, str) and frame.function.split(".", 1)[0] in SPIN_FUNCTIONS:
        return f"lock wait: the CPU was caught spinning in {frame.function}, a spinlock's wait loop"
    return "exception frame"


def crashed_task_text(snap: CrashSnapshot, report: KernelReport | None = None) -> str:
    """``sh (pid 151) on CPU 1``; from the crash report's header line when the dump lacks the task_struct.

    The report's ``CPU: 1 ... PID: 151 Comm: sh`` names the task that ran it, which is the crashed
    task when the report is the crash and its CPU is the crashed CPU.
    """
    comm, pid = snap.crashed_comm, snap.crashed_pid
    if (
        isinstance(comm, NotAvailable)
        and report is not None
        and isinstance(report.comm, str)
        and isinstance(report.pid, int)
        and report.cpu == snap.crashed_cpu
        and (isinstance(pid, NotAvailable) or pid == report.pid)
    ):
        return (
            f"{report.comm} (pid {report.pid}) on CPU {snap.crashed_cpu}, named by the kernel log's report "
            "(the dump lacks its task_struct)"
        )
    return f"{comm} (pid {pid}) on CPU {snap.crashed_cpu}"


#: The crash finding's next steps where the kernel chose to panic, by the words of its panic message (first match
#: wins): the caller of panic() is the kernel's own detector (khungtaskd's watchdog, out_of_memory), whose code is
#: not the bug; what it saw is in the dump.  ``{reported}`` stands for the pids the log's hung-task reports name (the
#: step is left out without them).  Crash commands, given in drgn's form where crash does not open the dump
#: (:mod:`detectors.vmcore.steps`); never a live machine's (/proc/sysrq-trigger): the machine is down.
CHOSEN_PANIC_STEPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # every blocked task's stack, the reported waiter's, how long each has not run
    ("hung_task: blocked tasks", ("foreach UN bt", "bt {reported}", "ps -m")),
    # memory use, then each task's RSS (panic_on_oom, or nothing left to kill)
    ("Out of memory", ("kmem -i", "ps -G")),
    ("System is deadlocked on memory", ("kmem -i", "ps -G")),
)


def _crash_steps(snap: CrashSnapshot, frame: Frame | None) -> str:
    """The crash finding's next step, at the prompt of the report's Follow-up crash session: a chosen panic's
    (:data:`CHOSEN_PANIC_STEPS`), else the backtrace and the disassembly of the crash's frame."""
    panic = snap.panic_message if isinstance(snap.panic_message, str) else ""
    chosen = next((steps for words, steps in CHOSEN_PANIC_STEPS if words in panic), None)
    if chosen is not None:
        reported = " ".join(str(pid) for pid in _hung_timeouts(snap))
        commands = [c.format(reported=reported) for c in chosen if reported or "{reported}" not in c]
        return "; ".join(f"crash> {c}" for c in commands if runs_here(snap, c)) or "crash> bt"
    return f"crash> bt; crash> dis -rl {frame.pc:#x}" if frame else "crash> bt"


def crash_finding(
    snap: CrashSnapshot, title: str, fault: FaultAnalysis | NotAvailable, report: KernelReport | None = None
) -> Finding:
    """The crash itself: where it happened and in which task."""
    frame = crash_frame(snap.backtrace)
    evidence: list[Evidence] = []
    if frame is not None:
        evidence.append(_frame_evidence(snap, frame))
    if isinstance(snap.panic_message, str):
        panic_ev = _log_evidence(snap, snap.panic_message.split("\n", 1)[0][:80])
        if panic_ev is not None:
            evidence.append(panic_ev)
    if not evidence:
        evidence.append(Evidence(snap.dump_path, Locator(LocatorKind.BYTE, 0), "KDUMP   "))
    # The file a reader opens: the copy found via --source-dir, not the build machine's path (which the fact keeps).
    where = crash_where(snap, frame) if frame else None
    func = frame.function if frame else NotAvailable("no backtrace")
    facts = [
        Fact("crashing function", str(func)),
        Fact(
            "source", (crash_where(snap, frame, origin=True) if frame else None) or "not available: no line information"
        ),
        Fact("task", crashed_task_text(snap, report)),
        Fact("panic message", str(snap.panic_message)),
        Fact("crash site", _crash_site(snap.backtrace, frame)),
    ]
    culprit = culprit_frame(snap.backtrace, frame)
    if culprit is not None and frame is not None and culprit.index != frame.index:
        facts.append(
            Fact("culprit (first frame past generic helpers)", f"{culprit.label()} {snap.where(culprit) or ''}".strip())
        )
    if frame is not None and frame.module:
        facts.append(Fact("module", frame.module))
    if not isinstance(fault, NotAvailable):
        facts += _fault_facts(fault)
    summary = (
        f"The kernel crashed in {func}"
        + (f" ({where})" if where else "")
        + f" while running {crashed_task_text(snap, report)}."
    )
    crash = Finding(
        id=finding_id(IdFamily.VMCORE_CRASH, title),
        kind=FindingKind.CRASH,
        title=title,
        severity=Severity.CRITICAL,
        confidence=0.95 if frame is not None else 0.5,
        confidence_reason=(
            "no backtrace could be read"
            if frame is None
            else "read from the dump's exception frame"
            if frame.interrupted
            else "read from the crashed thread's stack: the caller of panic()"
        ),
        summary=summary,
        evidence=tuple(evidence),
        next_steps=(_crash_steps(snap, frame),),
        facts=tuple(facts),
        detector=DETECTOR,
        subjects=(
            *((Subject(SubjectKind.FUNCTION, func),) if isinstance(func, str) else ()),
            *(
                (Subject(SubjectKind.TASK, snap.crashed_comm, snap.crashed_pid),)
                if isinstance(snap.crashed_comm, str) and isinstance(snap.crashed_pid, int)
                else ()
            ),
            *((Subject(SubjectKind.CPU, str(snap.crashed_cpu)),) if isinstance(snap.crashed_cpu, int) else ()),
        ),
        baseline=CRASHED,
    )
    if is_deliberate(crash):
        # Someone asked for this crash: it is still reported, with who may have asked, at low (worth a look:
        # who asked and why), not as a failure of the kernel.
        return dataclasses.replace(crash, severity=Severity.LOW, baseline=FORCED)
    return crash


def null_field_finding(snap: CrashSnapshot, fault: FaultAnalysis) -> Finding | None:
    """Which NULL pointer and member the fault went through."""
    if isinstance(fault.null_expression, NotAvailable) and isinstance(fault.read_member, NotAvailable):
        return None
    if fault.base_register is None or fault.base_value is None:
        return None
    fault_frame = next((f for f in snap.backtrace if f.pc == fault.instruction.address), None)
    frame_index = fault_frame.index if fault_frame else 0
    evidence = [
        Evidence(
            snap.dump_path,
            Locator(LocatorKind.REGISTER, frame_index, name=fault.base_register),
            register_excerpt(fault.base_register, fault.base_value),
        ),
        Evidence(snap.dump_path, Locator(LocatorKind.ADDRESS, fault.instruction.address), fault.instruction.text()),
    ]
    cr2 = _fault_address_evidence(snap)
    if cr2 is not None:
        evidence.append(cr2)
    if not isinstance(fault.null_field, NotAvailable) and not isinstance(fault.read_member, NotAvailable):
        what = (
            f"`{fault.null_expression}` was NULL; the fault reads `{fault.read_member.member.name}` "
            f"(offset {fault.read_member.member.offset:#x} of {fault.read_member.struct}) through it"
        )
        key = f"{fault.null_field.struct}.{fault.null_field.member.name}"
    elif not isinstance(fault.read_member, NotAvailable):
        what = f"a NULL {fault.read_member.struct} pointer; the fault reads `{fault.read_member.member.name}`"
        key = f"{fault.read_member.struct}.{fault.read_member.member.name}"
    else:
        what = f"`{fault.null_expression}` was NULL"
        key = str(fault.null_expression)
    where = snap.where(fault_frame) if fault_frame else None
    title = f"NULL pointer: {what}" + (f" at {where}" if where else "")
    return Finding(
        id=finding_id(FindingKind.NULL_FIELD, key),
        kind=FindingKind.NULL_FIELD,
        title=title.replace("`", ""),
        severity=Severity.HIGH,
        confidence=fault.confidence,
        confidence_reason="; ".join(fault.steps[-2:]) if fault.steps else "register and type layout",
        summary=f"{what}. " + " → ".join(fault.steps),
        evidence=tuple(evidence),
        next_steps=(
            f"crash> dis -rl {fault.instruction.address:#x}",
            *(f"crash> struct -o {s.removeprefix('struct ')}" for s in _structs(fault)),  # crash: no "struct"
        ),
        facts=(*_fault_facts(fault), *_null_next_command(snap, fault)),
        detector=DETECTOR,
        baseline=EXPLAINS_CRASH,
    )


def _null_next_command(snap: CrashSnapshot, fault: FaultAnalysis) -> list[Fact]:
    """Where to look next: the source file of the culprit frame, for the line that sets the NULL member."""
    if isinstance(fault.null_field, NotAvailable):
        return []
    frame = culprit_frame(snap.backtrace, crash_frame(snap.backtrace))
    func = str(frame.function) if frame else "the crashing function"
    member = fault.null_field.member.name
    path = frame.source_file if frame else None
    if path is None:  # no file to name: the function's name is no path to grep (it was given as one)
        return [Fact("next command", f"grep -rn '{member}' SOURCE_TREE  # find where {member} is set ({func})")]
    local = path if isinstance(snap.follow_up, NotAvailable) else snap.follow_up.local_source(path)  # --source-dir
    if not os.path.isfile(local):
        # The build machine's path (DW_AT_comp_dir, a kernel tree's relative name) with no file behind it here: the
        # grep of it exited 2 (ue10 #10).  A source tree is needed, named as the other steps needing one do.
        if path.startswith("/"):
            built = f"({func}; built as {shown_path(path)})"
            return [Fact("next command", f"grep -rn '{member}' SOURCE_TREE  # find where {member} is set {built}")]
        return [
            Fact(
                "next command",
                f"grep -n '{member}' SOURCE_TREE/{shell_word(path)}  # find where {member} is set ({func})",
            )
        ]
    # quoted for the shell: a source copy under a directory with a space broke the command
    return [Fact("next command", f"grep -n '{member}' {shell_word(local)}  # find where {member} is set")]


def _modinfo(snap: CrashSnapshot, module: str) -> str:
    """``modinfo`` on the module file the analysis loaded (runs anywhere); by name only on the crashed host."""
    path = None if isinstance(snap.follow_up, NotAvailable) else snap.follow_up.module_file(module)
    return f"modinfo {shell_word(path)}" if path else f"modinfo {module}  # on the crashed machine"


def _structs(fault: FaultAnalysis) -> list[str]:
    out = []
    for ref in (fault.null_field, fault.read_member):
        if not isinstance(ref, NotAvailable):
            out.append(ref.struct)
    return list(dict.fromkeys(out))


#: khungtaskd's report of a task: ``INFO: task kf_waiter:43 blocked for more than 5 seconds.``
_HUNG_REPORT = re.compile(r"task (.+):(\d+) blocked for more than (\d+) seconds")


def _hung_timeouts(snap: CrashSnapshot) -> dict[int, int]:
    """The tasks the kernel's hung-task detector reported in the log, by pid: the timeout it applied (seconds)."""
    return {int(m.group(2)): int(m.group(3)) for r in snap.log if (m := _HUNG_REPORT.search(r.text))}


def _blocked_severity(
    task: TaskInfo, cycle: bool, reported: int | None, has_lock: bool, dumped: int | NotAvailable
) -> tuple[Severity, Baseline]:
    """How much a D-state task was hurt: its time off the CPU against the hung-task timeout.

    The time since it last ran bounds its sleep; a task that ran a moment before the crash waited for
    nobody's fault yet (a kworker waiting for a completion, a kthread in msleep()).  A lock cycle never ends.
    The timeout is the one khungtaskd applied when it reported the task, else the crashed kernel's own setting
    (``dumped``: sysctl_hung_task_timeout_secs read from the dump), else the default.
    """
    if cycle:
        return Severity.HIGH, CYCLE
    timeout = HUNG_TASK_TIMEOUT_S
    if reported is not None:
        timeout = reported
        source = f"the timeout khungtaskd applied: it reported this task (hung_task_timeout_secs = {reported} s)"
    elif isinstance(dumped, int) and dumped > 0:
        timeout = dumped
        source = "the crashed kernel's hung_task_timeout_secs, read from the dump (sysctl_hung_task_timeout_secs)"
    elif isinstance(dumped, int):
        source = (
            "hung_task_timeout_secs' default (Documentation/admin-guide/sysctl/kernel.rst): the crashed kernel's "
            "is 0 (sysctl_hung_task_timeout_secs in the dump), its hung-task detector was off"
        )
    else:
        source = (
            "hung_task_timeout_secs' default (Documentation/admin-guide/sysctl/kernel.rst); the crashed machine's "
            f"setting: not available ({dumped.reason})"
        )
    if task.last_run_ns is None:
        return Severity.INFO, Baseline(
            "time in D state: unknown (when it last ran was not read)", f"hung-task timeout {timeout} s", source
        )
    seconds = task.last_run_ns / 1e9
    name = f"D state for {seconds:.1f} s (since it last ran) against the hung-task timeout"
    if reported is not None or seconds >= timeout:
        return Severity.HIGH, Baseline(name, f"{timeout} s", source)
    return (Severity.LOW if has_lock and seconds >= 1 else Severity.INFO), Baseline(name, f"{timeout} s", source)


def blocked_task_findings(snap: CrashSnapshot) -> list[Finding]:
    """D-state tasks: the lock each waits for and its owner, judged by how long it had been off the CPU."""
    out = []
    by_pid = {t.pid: t for t in snap.tasks}
    hung = _hung_timeouts(snap)
    for task in snap.tasks:
        if task.state != "D" or not task.stack:
            continue
        top = first_own_frame(task)
        owner = by_pid.get(task.lock_owner_pid) if task.lock_owner_pid is not None else None
        lock = task.blocked_on or "an uninterruptible sleep"
        in_func = f" in {top.function}" if top else ""
        if task.blocked_on:
            title = f"task {task.comm} blocked in D state on {lock}"
        else:
            title = f"task {task.comm} in uninterruptible sleep (D){in_func}"
        if owner is not None:
            title += f" held by {owner.comm} (pid {owner.pid})"
        shown = top if top is not None else task.stack[0]
        evidence = [
            Evidence(snap.dump_path, Locator(LocatorKind.FRAME, shown.index, name=f"pid {task.pid}"), shown.label())
        ]
        owner_top = first_own_frame(owner) if owner is not None else None
        if owner is not None and owner_top is not None:
            where = Locator(LocatorKind.FRAME, owner_top.index, name=f"pid {owner.pid}")
            evidence.append(Evidence(snap.dump_path, where, owner_top.label()))
        facts = [Fact("waiter", f"{task.comm} (pid {task.pid})"), Fact("waits in", top.label() if top else "?")]
        if task.last_run_ns is not None:
            at = task.last_run
            since = f", at {at.seconds:.6f} s since boot (its {at.field}, read)" if at is not None else ""
            facts.append(Fact("last ran", f"{task.last_run_ns / 1e9:.1f} s before the crash{since}"))
        # The wait as an interval: from when it last ran (read) to where the log last shows it (report or crash).
        if (start := last_run_evidence(snap, task)) is not None and (end := _wait_end_evidence(snap, task)):
            evidence += [start, end]
        chain = _wait_chain(snap, task)
        if owner is not None:
            # In a lock cycle the owner is no culprit that "never releases" the lock: it waits too, and
            # the deadlock finding states the cycle; the fact is named so no hypothesis is made of it.
            facts += [
                Fact(
                    "lock owner" if "(a cycle)" not in chain else "lock owner, itself waiting in the cycle",
                    f"{owner.comm} (pid {owner.pid}, state {owner.state})",
                ),
                Fact("owner is in", owner_top.label() if owner_top else "not available: no stack"),
                Fact("wait-for chain", chain),
            ]
        severity, baseline = _blocked_severity(
            task, "(a cycle)" in chain, hung.get(task.pid), bool(task.blocked_on), snap.hung_task_timeout
        )
        if task.blocked_on:
            summary = f"{task.comm} (pid {task.pid}) sleeps uninterruptibly on {lock}" + (
                f", which {owner.comm} (pid {owner.pid}) holds." if owner else "."
            )
            reason = (
                "lock owner read from the lock in the waiter's frame"
                if owner is not None
                else _unread_owner(snap, task)
            )
            if owner is None and task.lock_owner_pid is not None:
                facts.append(Fact("lock owner, not among the tasks read", reason))
        else:
            summary, reason, wait = _lockless_wait(task, in_func)
            facts.insert(2, Fact("waits for", task.waits_for()))
            read = task.completion
            if read is not None:
                facts.insert(3, Fact("completion", f"{read.address:#x}"))
                if not isinstance(read.done, NotAvailable):  # the value the summary states, cited where it was read
                    # done is struct completion's first member, an unsigned int: `crash> rd -32 ADDR` shows it
                    where = Locator(LocatorKind.ADDRESS, read.address, name=memory_locator_name(4, 1))
                    evidence.append(Evidence(snap.dump_path, where, memory_excerpt((read.done,), 4)))
            if wait is not None and wait is not shown:
                evidence.insert(
                    1,
                    Evidence(
                        snap.dump_path, Locator(LocatorKind.FRAME, wait.index, name=f"pid {task.pid}"), wait.label()
                    ),
                )
        out.append(
            Finding(
                id=finding_id(IdFamily.BLOCKED_TASK, task.comm, lock, top.label().split("+")[0] if top else ""),
                kind=FindingKind.HUNG_TASK,
                title=title,
                severity=severity,
                confidence=0.9 if owner is not None else 0.6,
                confidence_reason=reason,
                summary=summary,
                evidence=tuple(evidence),
                # drgn's crash-compatible bt: crash 8.0.2 finds no task by pid in these 6.1 dumps
                next_steps=(f">>> %crash bt {task.pid}",) + ((f">>> %crash bt {owner.pid}",) if owner else ()),
                subjects=(
                    Subject(SubjectKind.TASK, task.comm, task.pid),
                    *((Subject(SubjectKind.LOCK, task.blocked_on),) if task.blocked_on else ()),
                ),
                facts=tuple(facts),
                detector=DETECTOR,
                baseline=baseline,
            )
        )
    return out


def _unread_owner(snap: CrashSnapshot, task: TaskInfo) -> str:
    """Why a lock waiter's owner, read through the lock's owner word, is not among the tasks read: the dump's list of
    tasks is incomplete (its state and stack are then unknown, not absent), or it is in neither the PID table nor the
    list of tasks: a per-CPU idle task, a task not yet attached to its pid, or one that exited (then what was read of
    it may be freed memory).  Nothing more is asserted (review 8, 13: "its owner exited" was)."""
    owner = task.lock_owner_text()
    if owner is None:
        return "waiting task found; the lock owner could not be read"
    census = snap.task_census
    said = f"its owner, {owner}, read through the lock's owner word, is not among the tasks read"
    if not census.complete:
        return f"{said}: {census.why_incomplete()}"
    return (
        f"{said}: it is in neither the PID table nor the list of tasks (a CPU's idle task, a task not yet attached "
        "to its pid, or one that exited, whose task_struct may then be freed memory)"
    )


def _wait_chain(snap: CrashSnapshot, task: TaskInfo) -> str:
    """``kf_waiter (pid 43) -> mutex kf_dev_lock -> kf_holder (pid 42, S, in kf_holder_fn+0x..)``, to the end."""
    by_pid = {t.pid: t for t in snap.tasks}
    parts = [f"{task.comm} (pid {task.pid})"]
    seen = {task.pid}
    current = task
    while current.lock_owner_pid is not None:
        parts.append(current.blocked_on or "a lock")
        owner = by_pid.get(current.lock_owner_pid)
        if owner is None:
            parts.append(f"pid {current.lock_owner_pid}")
            break
        top = first_own_frame(owner)
        parts.append(f"{owner.comm} (pid {owner.pid}, {owner.state}" + (f", in {top.label()})" if top else ")"))
        if owner.pid in seen:
            parts.append("(a cycle)")
            break
        seen.add(owner.pid)
        current = owner
    return " -> ".join(parts)


_SCHED_FRAMES = (
    "__schedule",
    "schedule",
    "schedule_preempt_disabled",
    "schedule_timeout",
    "io_schedule",
    "__mutex_lock",
    "mutex_lock",
    "__mutex_lock_slowpath",
    "rwsem_down_",
    "down_",
    "msleep",
    "usleep_range",
    "__switch_to",
    "context_switch",
    "kthread",
    "ret_from_fork",
)


def own_function(name: str) -> bool:
    """A function of the task's own code path, not the scheduler's, a lock's or the kthread machinery."""
    return not name.startswith(_SCHED_FRAMES)


def wait_frame(task: TaskInfo) -> tuple[str, Frame] | None:
    """The frame of a lockless wait a task's stack shows and what it waits on there (``a completion``), as
    :meth:`TaskInfo.waits_for` names it: the first of :data:`WAIT_FRAMES` the stack holds."""
    for prefix, what in WAIT_FRAMES:
        for frame in task.stack:
            if isinstance(frame.function, str) and frame.function.startswith(prefix):
                return what, frame
    return None


def _lockless_wait(task: TaskInfo, in_func: str) -> tuple[str, str, Frame | None]:
    """The summary and confidence reason of a D-state task that waits on no lock, with the frame of its wait.

    The kind of wait is read from the stack (a frame of __wait_for_common is a completion's wait); which
    completion or queue is not: the snapshot keeps no frame variables of sleeping tasks, so none is named.
    """
    head = f"{task.comm} (pid {task.pid}) sleeps uninterruptibly{in_func}"
    found = wait_frame(task)
    if found is None:
        return (
            f"{head}; what it waits on is {task.waits_for()}.",
            "a task in D state; its stack shows no lock and no wait",
            None,
        )
    what, frame = found
    read = task.completion
    if read is not None:
        return (
            f"{head}; it waits on the completion at {read.address:#x} (x of frame #{read.frame}, {read.function}): "
            f"{_completion_values(read)}.",
            f"a task in D state; the completion read from its frame #{read.frame} ({read.function}), no lock",
            frame,
        )
    which = (
        " Which completion (its address, done count, other waiters) is not read: its wait's frames keep no readable x."
        if what == "a completion"
        else ""
    )
    return (
        f"{head}; it waits on {what}: frame #{frame.index} of its stack is {frame.label()}, no lock's wait.{which}",
        f"a task in D state; the wait read from its stack (frame #{frame.index}, {frame.function}), no lock",
        frame,
    )


def _completion_values(read: CompletionWait) -> str:
    """``its done count 0 (not completed yet), other waiters on it: pid 61``; a value not read says why, from the
    record the JSON's ``not_available`` is made of (once, where both were not read for the same reason)."""
    done, others = read.done, read.other_waiters
    if isinstance(done, NotAvailable) and isinstance(others, NotAvailable) and done.reason == others.reason:
        return f"its done count and other waiters on it not read: {done.reason}"
    if isinstance(done, NotAvailable):  # "; " after it: a reason may hold commas of its own
        count = f"its done count not read: {done.reason};"
    else:
        count = f"its done count {done}" + (" (not completed yet)," if done == 0 else ",")
    if isinstance(others, NotAvailable):
        return f"{count} other waiters on it: not read: {others.reason}"
    return f"{count} other waiters on it: " + (", ".join(f"pid {p}" for p in others) if others else "none")


def first_own_frame(task: TaskInfo) -> Frame | None:
    for frame in task.stack:
        name = frame.function
        if isinstance(name, str) and not name.startswith(_SCHED_FRAMES):
            return frame
    return None


def free_memory_at_crash(snap: CrashSnapshot) -> str | None:
    """``124 MiB of 143 MiB (87%) free (nr_free_pages; page cache not counted)``, or None when unread.

    Free pages understate what was available (page cache can be reclaimed), so this
    figure can say memory was *not* used up, never that it was.
    """
    total, free = snap.memory.total, snap.memory.free
    if not isinstance(total, int) or not isinstance(free, int) or total <= 0:
        return None
    return (
        f"{free / 2**20:,.0f} MiB of {total / 2**20:,.0f} MiB ({free / total:.0%}) free "
        "(nr_free_pages; reclaimable page cache not counted)"
    )


def outsized_cache_findings(snap: CrashSnapshot) -> list[Finding]:
    """Slab caches far larger than they should be at the crash.

    Three rules, any of which flags a cache among the largest few:
    it holds at least :data:`OUTSIZED_SHARE` of RAM; it is the largest and
    :data:`OUTSIZED_FACTOR` times the next one (and at least
    :data:`OUTSIZED_MIN_BYTES`); or it belongs to a module and ranks among the
    :data:`MODULE_CACHE_RANK` largest caches of the whole kernel with at least
    :data:`MODULE_CACHE_MIN_BYTES` -- a driver's private cache rarely
    outgrows the kernel's core caches unless its objects are never freed.
    """
    caches = [c for c in snap.slab_caches if c.total_bytes]
    if not caches:
        return []
    total = snap.memory.total if isinstance(snap.memory.total, int) else None
    ranked = sorted(caches, key=lambda c: -(c.total_bytes or 0))
    out = []
    for i, cache in enumerate(ranked[:MODULE_CACHE_RANK]):
        size = cache.total_bytes or 0
        runner_up = ranked[i + 1].total_bytes if i + 1 < len(ranked) else 0
        share = size / total if total else None
        reasons = []
        if share is not None and share >= OUTSIZED_SHARE:
            reasons.append(f"{100 * share:.1f}% of RAM")
        if i == 0 and size >= OUTSIZED_MIN_BYTES and size >= OUTSIZED_FACTOR * (runner_up or 1):
            reasons.append(f"{size / max(runner_up or 1, 1):.1f}x the next largest cache")
        if cache.owner_module and size >= MODULE_CACHE_MIN_BYTES:
            reasons.append(f"a cache of module {cache.owner_module}, yet the #{i + 1} largest cache of the kernel")
        if not reasons:
            continue
        share_txt = f"{100 * share:.1f}% of RAM" if share is not None else "share of RAM not available"
        # slabinfo's columns (name, in use, total, size); an in-use count the dump cannot give says why, not None.
        line = f"{cache.name} {cache.active_text()} {cache.total_objects} {cache.object_size}"
        facts = [
            Fact("cache", cache.name),
            Fact("objects (active/total)", f"{cache.active_text()}/{cache.total_objects}"),
            Fact("object size", str(cache.object_size)),
            Fact("bytes", str(size)),
            Fact("rank by size", f"#{i + 1} of {len(ranked)}"),
        ]
        if cache.owner_module:
            facts.append(Fact("created by module", cache.owner_module))
        free = free_memory_at_crash(snap)
        if free:
            facts.append(Fact(FREE_AT_CRASH, free))
        severity, baseline = _outsized_severity(snap, share)
        out.append(
            Finding(
                id=finding_id(FindingKind.OUTSIZED_SLAB, cache.name),
                kind=FindingKind.OUTSIZED_SLAB,
                title=f"slab cache {cache.name} is outsized: {size / 2**20:.1f} MiB ({share_txt}, #{i + 1} by size)",
                severity=severity,
                confidence=0.8 if len(reasons) > 1 or (share or 0) >= OUTSIZED_SHARE else 0.55,
                confidence_reason="; ".join(reasons) + " (one dump: growth over time is not known)",
                summary=f"{_holds(cache, size)}: {'; '.join(reasons)}. A cache this large at the crash suggests "
                "its objects are leaked; samples over time (kforensic slab-watch) confirm it.",
                evidence=(
                    Evidence(
                        snap.dump_path, Locator(LocatorKind.ADDRESS, cache.address, name="struct kmem_cache"), line
                    ),
                ),
                next_steps=(f"crash> kmem -s {cache.name}", "kforensic leaks --store STORE  # if samples exist"),
                subjects=(Subject(SubjectKind.SLAB_CACHE, cache.name),),
                facts=tuple(facts),
                detector=DETECTOR,
                baseline=baseline,
            )
        )
    return out


def _holds(cache: SlabCacheInfo, size: int) -> str:
    """``kf_leak_obj holds 1148 objects of 512 bytes in use (its slabs: 1152 slots, 0.6 MiB)``: the objects in use,
    not its slabs' capacity (the total counts the free slots too); an in-use count not read says why."""
    slabs = f"its slabs: {cache.total_text()} slots, {size / 2**20:.1f} MiB"
    if cache.active_objects is None:
        return f"{cache.name}'s objects of {cache.object_size} bytes in use: {cache.active_text()} ({slabs})"
    return f"{cache.name} holds {cache.active_objects} objects of {cache.object_size} bytes in use ({slabs})"


def _outsized_severity(snap: CrashSnapshot, share: float | None) -> tuple[Severity, Baseline]:
    """An outsized cache's harm: the RAM it holds, and whether memory was short at the crash.

    Medium from :data:`OUTSIZED_SHARE` of RAM, or when free pages were under :data:`DUMP_FREE_SHARE` (memory may
    have run short); below both it is worth a look (low): one dump shows a size, not a leak's rate (samples over
    time, kforensic leaks, judge that).
    """
    total, free = snap.memory.total, snap.memory.free
    ram = f"{total / 2**30:.3g} GiB" if isinstance(total, int) and total >= 2**30 else (
        f"{total / 2**20:,.0f} MiB" if isinstance(total, int) else "RAM of unknown size"
    )  # fmt: skip
    free_share = free / total if isinstance(total, int) and isinstance(free, int) and total > 0 else None
    shown = f"{100 * share:.1f}% of {ram}" if share is not None else f"unknown ({ram})"
    if free_share is not None:
        shown += f"; {free_share:.0%} free at the crash"
    baseline = Baseline(
        f"RAM held, a problem from {OUTSIZED_SHARE:.0%} or with under {DUMP_FREE_SHARE:.0%} free",
        shown,
        "one dump: its size, not its growth (a leak's rate needs samples: kforensic leaks)",
    )
    short = free_share is not None and free_share < DUMP_FREE_SHARE
    if (share is not None and share >= OUTSIZED_SHARE) or short:
        return Severity.MEDIUM, baseline
    return Severity.LOW, baseline


def module_findings(snap: CrashSnapshot, frames: tuple[Frame, ...]) -> list[Finding]:
    """Out-of-tree or unsigned modules that appear in the crashing stack."""
    tainting = {m.name: m for m in snap.modules if set(m.taints) & set("OEPC")}
    out = []
    for name in dict.fromkeys(f.module for f in frames if f.module):
        module = tainting.get(name or "")
        if module is None:
            continue
        frame = next(f for f in frames if f.module == name)
        out.append(
            Finding(
                id=finding_id(IdFamily.TAINTING_MODULE, module.name),
                kind=FindingKind.MODULE,
                title=f"out-of-tree/unsigned module {module.name} ({module.taints}) is in the crashing stack",
                severity=CLUES[FindingKind.MODULE][0],
                confidence=0.9,
                confidence_reason="the module's taint flags and a frame of the crashed thread",
                summary=f"Frame #{frame.index} runs in {module.name}, which taints the kernel with "
                f"{module.taints}: report the crash to the module's vendor first.",
                evidence=(_frame_evidence(snap, frame),),
                next_steps=(_modinfo(snap, module.name), "crash> mod -t"),
                facts=(Fact("module taint", module.taints), Fact("debug info", "yes" if module.debug_info else "no")),
                detector=DETECTOR,
                baseline=CLUES[FindingKind.MODULE][1],
            )
        )
    return out
