"""The dmesg engine's records: reports, their groups, frames and stacks, and what a report's body says (why).

Made by detectors/dmesg/ (the engine, the groups of findings.py, why.py), carried by the results and shown
by the renderers (forensics/report/dmesg.py).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from operator import itemgetter
from typing import Final, NamedTuple

from forensics.model import Baseline, FindingKind, NotAvailable, Severity
from forensics.types.causes import Cause
from forensics.types.deliberate import FORCED, requested_by_sysrq

#: Occurrences of one signature kept between the first and the last (spread evenly over the log).
SAMPLE_REPORTS = 4
#: The names of a report finding's evidence that mark an occurrence (its header line): the first report's, a kept
#: sample's ("one of N") and the last's ("last of N"); the incident timeline spans these (detectors.incident).
REPORT_EVIDENCE = "report"
ONE_OF = "one of "
LAST_OF = "last of "
#: The fact naming which boot of a log of several boots a report is of (detectors/dmesg/findings.py report_boot): a
#: report of an earlier boot is not the main problem of a later boot's crash (detectors/incident/hypotheses.py).
BOOT_FACT = "boot"
#: The fact of a critical report that did not panic, saying why its log cannot show whether it then panicked (a
#: syslog or journal log, or one that ends at the report): without it the log went on and showed no panic.
PANIC_UNSEEN_FACT = "panic after it"
#: The fact of a critical report that did not panic, saying what the log shows followed it: the machine went down
#: (to kdump, or a reboot), or the kernel went on (:class:`Aftermath`, detectors/dmesg/aftermath.py).
AFTER_FACT = "after it"
OCCURRENCE_NAMES = (REPORT_EVIDENCE, ONE_OF, LAST_OF)
#: The fact of an allocation failure saying whether memory was short when it failed, read from its Mem-Info: dump's
#: zone watermarks (detectors/dmesg/why.py): "yes: ...", "no: ..." or "unknown (why)".  Only "yes" makes the failure
#: a sign of memory exhaustion (detectors/incident/hypotheses.py): a request the machine could never meet is no sign
#: of pressure, and a failure whose dump is not in the log shows none.
PRESSURE_FACT = "memory pressure"


FactValue = str | int


class ReportKind(enum.StrEnum):
    """What a kernel report is, as the rule table (detectors/dmesg/rules.py) or the event reader names it.

    Its value is the JSON's ``type`` and part of the finding's id; :attr:`finding_kind` is the
    :class:`FindingKind` of the finding a report of this kind becomes (``dmesg.<value>``).
    """

    ALLOC_FAILURE = "alloc-failure"
    ATOMIC_SLEEP = "atomic-sleep"
    BUG = "bug"
    FIRMWARE = "firmware"
    FS = "fs"
    GPF = "gpf"
    HANG = "hang"
    HARDWARE = "hardware"
    KASAN = "kasan"
    KCSAN = "kcsan"
    KFENCE = "kfence"
    KMSAN = "kmsan"
    LEAK = "leak"
    LIST_CORRUPTION = "list-corruption"
    LOCKDEP = "lockdep"
    LOCKING = "locking"
    LOCKUP = "lockup"
    NET_DROP = "net-drop"
    MM = "mm"
    NO_ROOT = "no-root"
    NULL_DEREF = "null-deref"
    OOM = "oom"
    OOPS = "oops"
    PAGE_FAULT = "page-fault"
    PANIC = "panic"
    RCU = "rcu"
    RCU_STALL = "rcu-stall"
    REBOOT = "reboot"
    REFCOUNT = "refcount"
    RT_THROTTLING = "rt-throttling"
    RUST_PANIC = "rust-panic"
    SOFT_LOCKUP = "soft-lockup"
    STACK = "stack"
    STACK_OVERFLOW = "stack-overflow"
    STACK_PROTECTOR = "stack-protector"
    SYZ_FAILURE = "syz-failure"
    TRAP = "trap"
    UBSAN = "ubsan"
    USERCOPY = "usercopy"
    WARNING = "warning"

    @property
    def finding_kind(self) -> FindingKind:
        """The kind of the finding that reports of this kind become."""
        return _FINDING_KINDS[self]


#: Every report kind's finding kind (built at import: a report kind without its member fails here).
_FINDING_KINDS: dict[ReportKind, FindingKind] = {k: FindingKind(f"dmesg.{k.value}") for k in ReportKind}


class Frame(NamedTuple):
    """One frame of a call trace.

    ``function`` is the symbol without compiler suffixes (``.isra.0``,
    ``.cold``); ``symbol`` the name as printed; ``stack`` the stack the frame
    was on (``task``, ``irq``, ``nmi``, ``softirq``, ``exception``).
    """

    function: str
    symbol: str
    offset: int | None  # None when the dump does not print it (arm's callee column)
    size: int | None
    module: str | None
    reliable: bool
    stack: str
    line: int


@dataclass(frozen=True, init=False)
class KernelReport:
    """One kernel report (oops, BUG, WARNING, sanitizer, lockdep, stall, panic, ...) in a log.

    Line numbers are 1-based lines of the input; ``excerpt`` holds the lines
    ``start_line..end_line`` as read (only the report's own CPU or task when the
    log has caller prefixes, see ``lines``).  ``signature`` identifies the bug
    (title and guilty frame), the same for repeats of one bug.
    """

    title: str
    kind: ReportKind
    severity: Severity
    rule: str
    corrupted: bool
    corrupted_reason: str | None
    frame: str | NotAvailable
    trace: tuple[Frame, ...]
    cpu: int | NotAvailable
    pid: int | NotAvailable
    comm: str | NotAvailable
    taint: str | NotAvailable
    taint_flags: tuple[str, ...]
    kernel_release: str | NotAvailable
    hardware: str | NotAvailable
    start_time: float | NotAvailable
    end_time: float | NotAvailable
    start_line: int
    end_line: int
    header: str
    lines: tuple[tuple[int, str], ...]
    context: str | None
    panicked: bool
    signature: str
    is_event: bool = False  # a resource event (OOM kill, allocation failure, dropped packets), not a kernel bug
    details: tuple[tuple[str, str], ...] = ()
    boot_time: float | None = None  # epoch seconds of boot, from a line with both a wall and a printk time
    # The lines the kernel printed just above the header that belong to the report (a WARN's message after
    # "cut here", a list_debug message before its BUG), as (number, text): read by detectors.dmesg.why.
    preamble: tuple[tuple[int, str], ...] = ()
    # The line its guilty frame was read from when that is past its own lines (a caller-prefixed log: its
    # CPU's or task's lines after another report's header, detectors.dmesg.extract), as (offset from the
    # header, the line as printed, its time stamp and prefixes included): a repeat's own line (detectors.dmesg.memo).
    frame_past: tuple[int, str] | None = None
    # The boot banner ("Linux version X (...") of the boot the report was printed in, as (line, text, release):
    # the last banner above its first line (detectors.dmesg.scanner); None when no banner precedes it.
    boot_banner: tuple[int, str, str] | None = None
    # The first line of the report's boot when the log holds that boot's start (its lines printed at 0.000000,
    # after later ones) and no banner of it: its kernel is not known (the previous boot's banner is not its).
    bannerless_boot: int | None = None
    # Epoch seconds of its first line's dated wall-clock prefix (``journalctl -o short-iso``, rsyslog's RFC 3339,
    # ``dmesg -T``) when no line of it has a printk time: its time on the wall clock, not "no timestamp".
    start_wall: float | None = None
    # Its start_wall names no zone (``dmesg -T``'s local time, an ISO stamp without an offset): the local time as
    # printed, read as if UTC; shown as such, never with a UTC offset (Timestamp.zone_unknown).
    wall_zone_unknown: bool = False

    def __init__(
        self,
        title: str,
        kind: ReportKind,
        severity: Severity,
        rule: str,
        corrupted: bool,
        corrupted_reason: str | None,
        frame: str | NotAvailable,
        trace: tuple[Frame, ...],
        cpu: int | NotAvailable,
        pid: int | NotAvailable,
        comm: str | NotAvailable,
        taint: str | NotAvailable,
        taint_flags: tuple[str, ...],
        kernel_release: str | NotAvailable,
        hardware: str | NotAvailable,
        start_time: float | NotAvailable,
        end_time: float | NotAvailable,
        start_line: int,
        end_line: int,
        header: str,
        lines: tuple[tuple[int, str], ...],
        context: str | None,
        panicked: bool,
        signature: str,
        is_event: bool = False,
        details: tuple[tuple[str, str], ...] = (),
        boot_time: float | None = None,
        preamble: tuple[tuple[int, str], ...] = (),
        frame_past: tuple[int, str] | None = None,
        boot_banner: tuple[int, str, str] | None = None,
        bannerless_boot: int | None = None,
        start_wall: float | None = None,
        wall_zone_unknown: bool = False,
    ) -> None:
        # The frozen dataclass's own __init__ sets each field with object.__setattr__ (~7 us for the 31, ~66,000
        # instructions a report); the fields written into the instance's dict, in the same order, give
        # the same record (tests/detectors/dmesg/test_classes.py checks this signature against the fields).
        fields = self.__dict__
        fields["title"] = title
        fields["kind"] = kind
        fields["severity"] = severity
        fields["rule"] = rule
        fields["corrupted"] = corrupted
        fields["corrupted_reason"] = corrupted_reason
        fields["frame"] = frame
        fields["trace"] = trace
        fields["cpu"] = cpu
        fields["pid"] = pid
        fields["comm"] = comm
        fields["taint"] = taint
        fields["taint_flags"] = taint_flags
        fields["kernel_release"] = kernel_release
        fields["hardware"] = hardware
        fields["start_time"] = start_time
        fields["end_time"] = end_time
        fields["start_line"] = start_line
        fields["end_line"] = end_line
        fields["header"] = header
        fields["lines"] = lines
        fields["context"] = context
        fields["panicked"] = panicked
        fields["signature"] = signature
        fields["is_event"] = is_event
        fields["details"] = details
        fields["boot_time"] = boot_time
        fields["preamble"] = preamble
        fields["frame_past"] = frame_past
        fields["boot_banner"] = boot_banner
        fields["bannerless_boot"] = bannerless_boot
        fields["start_wall"] = start_wall
        fields["wall_zone_unknown"] = wall_zone_unknown

    def excerpt(self) -> str:
        """The texts of the report's lines, one a line (the JSON's ``excerpt``).  A repeat the report memo
        made (detectors/dmesg/memo.py) gives it without making its lines when they are those it repeats."""
        return "\n".join(map(itemgetter(1), self.lines))

    def repeats(self) -> tuple[KernelReport, int] | None:
        """The report this one repeats byte for byte and how many lines after it this one stands, or None.

        Such a repeat (made by the report memo, detectors/dmesg/memo.py) is that report with every line
        number moved on by the same count: its start and end line and its frames' lines; its times, texts and
        every other field are the same.  None for a report built from its own lines (or one whose lines differ
        from those it repeats, in their times).
        """
        return None


@dataclass(frozen=True)
class ReportGroup:
    """Reports of one signature in one log: the first, how many, the last, and an even sample between.

    ``sample`` holds at most :data:`SAMPLE_REPORTS` occurrences other than the
    first and the last, in log order: a log that repeats a crash a million times
    keeps a bounded number of reports (memory flat in log size) and still cites
    occurrences from all over the log.
    """

    first: KernelReport
    last: KernelReport
    count: int
    sample: tuple[KernelReport, ...] = ()
    # A hung task of a khungtaskd pass that ended in its "hung_task: blocked tasks" panic (printed in the pass's
    # last report, maybe another group's): that report.  hung_task_panic panics for every task of the pass, so the
    # panic is each one's, not the last printed's alone (detectors/dmesg/findings.py ReportGrouper).
    panicked_by: KernelReport | None = None

    @property
    def kept(self) -> tuple[KernelReport, ...]:
        """The occurrences kept, in log order: first, sample, last (once each)."""
        return (self.first, *self.sample, self.last) if self.count > 1 else (self.first,)

    @property
    def panicked(self) -> bool:
        """Whether the kernel panicked on the group: its first or last report holds the panic line, or it is of
        the khungtaskd pass whose panic another group's report printed (``panicked_by``)."""
        return self.first.panicked or self.last.panicked or self.panicked_by is not None

    @property
    def panic_report(self) -> KernelReport | None:
        """The report whose lines hold the panic the group caused (:attr:`panicked`): its own first, its last, or
        the pass's; None when it caused none."""
        if self.first.panicked:
            return self.first
        if self.last.panicked:
            return self.last
        return self.panicked_by


class StackFrame(NamedTuple):
    """One frame of a stack section.

    ``symbol`` as printed (``.isra.0`` kept), ``function`` the name a title uses; ``source`` the
    ``file:line`` a symbolized log prints; ``inline`` when the log says the frame was inlined
    into the next one; ``at`` the frame's line as an offset from the report's first line.
    """

    function: str
    symbol: str
    offset: int | None
    size: int | None
    module: str | None
    source: str | None
    inline: bool
    reliable: bool
    at: int


class StackKind(enum.StrEnum):
    """What a stack section of a report is, as detectors/dmesg/stacks.py's heading table names it (its value is
    the JSON's ``kind`` and the ``stack <kind>`` fact's)."""

    ALLOCATED = "allocated"
    FREED = "freed"
    AUX_WORK = "aux-work"
    AUX_WORK_2 = "aux-work-2"
    UNINIT_STORED = "uninit-stored"
    UNINIT_CREATED = "uninit-created"
    PAGE_ALLOC = "page-alloc"
    PAGE_FREE = "page-free"
    LOCK_CHAIN = "lock-chain"
    LEAK_BACKTRACE = "leak-backtrace"
    RACE_ACCESS_1 = "race-access-1"  # KCSAN's first access ("write to 0x... of 8 bytes by task 1 on cpu 0:")
    RACE_ACCESS_2 = "race-access-2"  # and the second, the reporting task's
    CALL_TRACE = "call-trace"


class StackSection(NamedTuple):
    """A stack of a report: its kind, heading line, the task it names, its frames and its first foreign frame.

    ``skipped``: the lines of frames the console cut short ("el1_interrupt+0x3c/0x"), skipped as the stack
    goes on past them (offsets from the report's first line).
    ``cpu``: the CPU whose dump holds the stack, where the report says it (a lockup's: the stuck CPU's own, or
    another CPU's "NMI backtrace for cpu N"); None elsewhere.
    """

    kind: StackKind
    heading: str
    at: int
    task: int | None
    frames: tuple[StackFrame, ...]
    first_foreign: StackFrame | None
    skipped: tuple[int, ...] = ()
    cpu: int | None = None


class CodeInstruction(NamedTuple):
    """One decoded instruction: its offset from the faulting instruction, its text, and whether it faulted.

    ``uncertain``: an instruction before the faulting one that another start of the decoding the bytes allow does not
    hold (the bytes of a ``Code:`` line start inside an instruction): shown marked, never read as a fact
    (detectors/dmesg/code.py)."""

    offset: int
    text: str
    faulting: bool
    uncertain: bool = False


class CodeListing(NamedTuple):
    """The ``Code:`` line decoded: the instructions, the faulting one, and what it touched."""

    arch: str
    at: int  # the Code: line, offset from the report's first line
    instructions: tuple[CodeInstruction, ...]
    faulting: str | None  # the faulting instruction's text
    memory: str | None  # its memory operand, e.g. ``[rax + 8]``
    access: str | None  # "read", "write" or "read-write" of that operand
    base: str | None  # the operand's base register
    base_value: int | None  # its value in the oops's registers
    index_reg: str | None  # the operand's index register
    index_value: int | None
    displacement: int | None
    loaded_from: str | None  # where that register was loaded from: ``[rdi + 0x20]``
    loaded_base: str | None  # the load's base register (``rdi``)
    loaded_value: int | None  # its value: the object the bad pointer was read from
    compared: tuple[tuple[str, int | None], ...]  # a trap's compare before the ud2: the registers and their values
    # (register, line) of the register dump, offsets from the report's first line: where a register's value is
    register_lines: tuple[tuple[str, int], ...] = ()

    def register_at(self, name: str | None) -> int:
        """The line (offset) that prints a register's value; the Code: line's when the dump does not print it."""
        return next((at for register, at in self.register_lines if register == name), self.at)


class WhyFact(NamedTuple):
    """A value read from one line of a report: ``at`` is the line's offset from the report's first line.

    ``value`` is :class:`~forensics.model.NotAvailable` when the report's class is known but its reader found
    none of its values (the body ends early, its lines cut): the reason names what is missing, ``at`` the
    report's last line.
    """

    name: str
    value: FactValue | NotAvailable
    at: int
    # the other lines a value computed from several is read from (RAM bytes: "pages RAM" less "pages reserved"):
    # no one line holds it, so each is cited
    also: tuple[int, ...] = ()

    def lines(self, first: int) -> tuple[int, ...]:
        """The log lines the value is read from, ``first`` the report's first line's number."""
        return (first + self.at, *(first + a for a in self.also))


class LockInfo(NamedTuple):
    """A lock a report names.

    ``role``: ``acquiring`` (the lock being taken), ``holding`` (the lock already held), ``chain``
    (a link ``-> #N`` of lockdep's dependency chain, ``number`` N), ``held`` (a "locks held by"
    list, ``number`` its ``#N``), ``blocked-on`` (a hung task's lock with its likely owner).
    ``site``: where it was taken (``rtnl_lock+0x17/0x20`` as printed, or a chain link's first
    foreign frame).
    """

    role: str
    name: str
    number: int | None
    task: str | None
    site: str | None
    at: int


class StalledCpu(NamedTuple):
    """A CPU an RCU stall names, with what the kernel printed about it."""

    cpu: int
    detail: str
    at: int


class StalledTask(NamedTuple):
    """A task an RCU stall or a hung-task report names."""

    comm: str | None
    pid: int
    detail: str
    at: int


class MemoryConsumer(NamedTuple):
    """A user of memory at an OOM: a task of the task dump (rss), the page cache, a slab cache."""

    kind: str  # "task", "page-cache", "slab"
    name: str
    pid: int | None
    bytes: int
    at: int


class ZoneFree(NamedTuple):
    """Free memory of one zone as an OOM or allocation failure prints it (kB)."""

    node: int | None
    zone: str
    free_kb: int
    min_kb: int | None
    low_kb: int | None
    high_kb: int | None
    managed_kb: int | None
    at: int


class Aftermath(NamedTuple):
    """What a log shows followed a critical report the kernel printed no ``Kernel panic`` line for.

    oops_end() with panic_on_oops goes to crash_kexec() before panic(): with a capture kernel loaded, the machine
    goes down without a "Kernel panic" line (kernel/kexec_core.c).  So no panic line does not mean the kernel went on:
    ``went_down`` is read from the command line (``oops=panic``), the report's ``Kdump: loaded``, the next boot being
    a capture kernel (``elfcorehdr=``), a dump of the boot, or the log going on in the same boot.
    """

    went_down: bool | None  # True: the machine went down; False: the kernel went on; None: the log cannot tell
    shown: str  # what the evidence shows, with its lines (or, unknown, why the log cannot tell)
    cited: tuple[tuple[int, str], ...] = ()  # the lines of the log it cites outside the report, (number, text)

    @property
    def said(self) -> str:
        """The reading in words: "went down: ...", "went on: ...", "unknown (...)"."""
        if self.went_down is None:
            return f"unknown ({self.shown})"
        return f"{'went down' if self.went_down else 'went on'}: {self.shown}"


class ReportWhy(NamedTuple):
    """What a report says about why: its class, facts, stacks, locks, CPUs, tasks, memory and cause."""

    cls: str | None
    facts: tuple[WhyFact, ...]
    stacks: tuple[StackSection, ...]
    locks: tuple[LockInfo, ...]
    cpus: tuple[StalledCpu, ...]
    tasks: tuple[StalledTask, ...]
    consumers: tuple[MemoryConsumer, ...]
    zones: tuple[ZoneFree, ...]
    code: CodeListing | None
    cause: Cause | None
    cause_at: tuple[int, ...]  # the lines the cause is read from
    #: The lines past the report's own that facts were read from, (offset, text): a hung task's lock and its
    #: holder in the locks list printed after the last report of its khungtaskd pass; empty for the others.
    read_past: tuple[tuple[int, str], ...] = ()
    #: Why no cause is stated (``cause`` None): what the log lacks to establish one, said as "not available: why"
    #: rather than left silent (a reading of no known class, or one whose facts match no cause rule).
    no_cause: str = ""
    #: Whether a fact says what the report's boot shows of KASLR (an x86-64 address in a range KASLR moves, named
    #: with the line that shows KASLR off or on): the reading holds for the repeats of its report in boots that
    #: show the same only; the others' does for every repeat (detectors/dmesg/findings.py explain_reports).
    kaslr_read: bool = False

    def fact(self, name: str) -> FactValue | None:
        """The first value read of that name, or None (a fact not available is no value)."""
        return next((f.value for f in self.facts if f.name == name and not isinstance(f.value, NotAvailable)), None)

    def fact_at(self, name: str) -> int | None:
        """The line offset of the first fact of that name."""
        return next((f.at for f in self.facts if f.name == name), None)

    def stack(self, kind: StackKind) -> StackSection | None:
        """The first stack section of that kind."""
        return next((s for s in self.stacks if s.kind == kind), None)


#: A report the kernel panicked on: critical, whatever its kind (the same words as the dump's other log reports).
PANICKED = Baseline("the kernel panicked on it", "the machine went down", "its 'Kernel panic - not syncing' line")

#: An oops the machine went down on without a "Kernel panic" line (:class:`Aftermath`): its name, which the report's
#: verdict reads as "crashed" (detectors/incident/hypotheses.py), as it reads :data:`PANICKED`'s.
WENT_DOWN = "an oops the machine went down on"
WENT_DOWN_SOURCE = "oops_end() (arch/x86/kernel/dumpstack.c), crash_kexec() (kernel/kexec_core.c)"


def went_down_baseline(after: Aftermath) -> Baseline:
    """The baseline of a report the machine went down on, citing what shows it."""
    return Baseline(WENT_DOWN, f"the machine went down: {after.shown}", WENT_DOWN_SOURCE)


_OOPS = Baseline(
    "an oops: the kernel faulted in its own code",
    "any oops is a kernel bug: oops_end() kills the task that hit it (the locks it held stay held), or takes the "
    "machine down (panic_on_oops, an oops in interrupt context)",
    "die() and the oops handlers (arch/*/kernel/traps.c); Documentation/admin-guide/bug-hunting.rst",
)
_SANITIZER = Baseline(
    "an invalid memory access a sanitizer caught",
    "any report: the access happened, the memory it touched may be corrupted",
    "KASAN, KFENCE, KMSAN (Documentation/dev-tools/)",
)
_LOCKING = Baseline(
    "a lock misuse the kernel's checks caught",
    "any report: a lock taken in an order or a context that can deadlock, or released or freed wrongly",
    "lockdep and the locking checks (Documentation/locking/lockdep-design.rst, kernel/locking/)",
)

#: What the severity of a report its kernel did not panic on is judged against, by kind (the rules' severities,
#: detectors/dmesg/rules.py, and the events', detectors/dmesg/events.py; docs/severity.md, "Kernel logs").
KIND_BASELINES: dict[ReportKind, Baseline] = {
    ReportKind.ALLOC_FAILURE: Baseline(
        "an allocation the kernel could not satisfy",
        "any failure: its caller got no memory and fails or retries its request",
        "warn_alloc() (mm/page_alloc.c)",
    ),
    ReportKind.ATOMIC_SLEEP: Baseline(
        "a sleep or a preemptible section in atomic context",
        "any report: a kernel bug that can deadlock the CPU or corrupt per-CPU data",
        "might_sleep(), __schedule_bug() (kernel/sched/core.c), check_preemption_disabled() (lib/smp_processor_id.c)",
    ),
    ReportKind.BUG: Baseline(
        "a BUG the kernel reported",
        "any BUG is a kernel bug; BUG() and BUG_ON() also kill the task that hit them",
        "BUG(), BUG_ON() (include/asm-generic/bug.h) and the kernel's own checks",
    ),
    ReportKind.FIRMWARE: Baseline(
        "a firmware assertion or panic", "any: the secure firmware stopped", "the trusty driver's report"
    ),
    ReportKind.FS: Baseline(
        "a filesystem consistency check",
        "any report: the VFS found its own state broken (a use-after-free risk)",
        "the VFS checks (fs/dcache.c, fs/buffer.c, fs/super.c, fs/open.c)",
    ),
    ReportKind.GPF: _OOPS,
    ReportKind.HANG: Baseline(
        "the hung-task timeout",
        "exceeded: khungtaskd reports a task in D state past hung_task_timeout_secs (the report says how long)",
        "kernel/hung_task.c; hung_task_timeout_secs (Documentation/admin-guide/sysctl/kernel.rst)",
    ),
    ReportKind.HARDWARE: Baseline(
        "a machine check", "any uncorrected hardware error", "the machine-check handler (arch/x86/kernel/cpu/mce/)"
    ),
    ReportKind.KASAN: _SANITIZER,
    ReportKind.KCSAN: Baseline(
        "a data race KCSAN saw",
        "any report: two accesses raced, which may or may not corrupt anything",
        "Documentation/dev-tools/kcsan.rst",
    ),
    ReportKind.KFENCE: _SANITIZER,
    ReportKind.KMSAN: _SANITIZER,
    ReportKind.LEAK: Baseline(
        "an object kmemleak found unreferenced",
        "any: the memory is lost until reboot, the object's size each time",
        "Documentation/dev-tools/kmemleak.rst",
    ),
    ReportKind.LIST_CORRUPTION: Baseline(
        "a list the list checks found corrupted",
        "any: memory was corrupted; with BUG_ON_DATA_CORRUPTION the kernel stops the task",
        "CONFIG_DEBUG_LIST (lib/list_debug.c)",
    ),
    ReportKind.LOCKDEP: _LOCKING,
    ReportKind.LOCKING: _LOCKING,
    ReportKind.LOCKUP: Baseline(
        "the hard-lockup watchdog's threshold",
        "exceeded: a CPU took no timer interrupt for watchdog_thresh (10 s by default)",
        "kernel/watchdog.c (Documentation/admin-guide/lockup-watchdogs.rst)",
    ),
    ReportKind.MM: Baseline(
        "a memory-management consistency check",
        "any report: page, slab or mm state found corrupted",
        "bad_page() (mm/page_alloc.c), the slab checks (mm/slub.c), check_mm() (kernel/fork.c)",
    ),
    ReportKind.NO_ROOT: Baseline(
        "the root filesystem", "not mounted: the kernel cannot start init", "mount_root() (init/do_mounts.c)"
    ),
    ReportKind.NULL_DEREF: _OOPS,
    ReportKind.NET_DROP: Baseline(
        "the network stack's limits (the connection tracking table, TCP's socket memory)",
        "reached: it drops packets (new connections through conntrack) or aborts sockets (TCP out of memory) and "
        "says so, rate limited",
        "nf_conntrack_alloc() (net/netfilter/nf_conntrack_core.c, nf_conntrack_max), tcp_out_of_memory() "
        "(net/ipv4/tcp.c, net.ipv4.tcp_mem)",
    ),
    ReportKind.RT_THROTTLING: Baseline(
        "RT throttling's budget: the most real-time tasks may run of each period on a CPU before its other tasks get "
        "the rest (sched_rt_runtime_us of sched_rt_period_us)",
        "950000 of 1000000 us by default (the line does not print the values set): reached, so the CPU's other tasks "
        "waited up to that long; printed once a boot, later throttles are not said",
        "sched_rt_runtime_exceeded() (kernel/sched/rt.c), Documentation/scheduler/sched-rt-group.rst",
    ),
    ReportKind.OOM: Baseline(
        "the memory an allocation could use",
        "exhausted: the OOM killer kills a task to free memory, or panics (panic_on_oom)",
        "out_of_memory() (mm/oom_kill.c)",
    ),
    ReportKind.OOPS: _OOPS,
    ReportKind.PAGE_FAULT: _OOPS,
    ReportKind.PANIC: PANICKED,
    ReportKind.RCU: Baseline(
        "RCU's usage check",
        "any report: an RCU-protected pointer used outside a read-side section or its lock",
        "CONFIG_PROVE_RCU (Documentation/RCU/lockdep-splat.rst)",
    ),
    ReportKind.RCU_STALL: Baseline(
        "the RCU CPU stall timeout",
        "exceeded: a grace period waited past rcu_cpu_stall_timeout (21 s by default)",
        "Documentation/RCU/stallwarn.rst",
    ),
    ReportKind.REBOOT: Baseline(
        "a boot that ends cleanly",
        "not seen: the next boot's banner follows without a shutdown or panic line",
        "the log itself",
    ),
    ReportKind.REFCOUNT: Baseline(
        "refcount_t's range check",
        "any report: a reference count went below zero or saturated (a use-after-free or leak risk)",
        "lib/refcount.c",
    ),
    ReportKind.RUST_PANIC: _OOPS,
    ReportKind.SOFT_LOCKUP: Baseline(
        "the soft-lockup watchdog's threshold",
        "exceeded: a CPU ran kernel code without scheduling for 2 x watchdog_thresh (20 s by default; the report "
        "says how long)",
        "kernel/watchdog.c (Documentation/admin-guide/lockup-watchdogs.rst)",
    ),
    ReportKind.STACK: Baseline(
        "the unwinder's stack checks",
        "a value it could not use: the stack trace may be wrong, the kernel goes on",
        "the unwinders (arch/x86/kernel/unwind_*.c)",
    ),
    ReportKind.STACK_OVERFLOW: _OOPS,
    ReportKind.STACK_PROTECTOR: _OOPS,
    ReportKind.SYZ_FAILURE: Baseline(
        "syzkaller's own failure", "the fuzzer stopped, not the kernel", "syz-executor's SYZFAIL/SYZFATAL"
    ),
    ReportKind.TRAP: _OOPS,
    ReportKind.UBSAN: Baseline(
        "undefined behaviour UBSAN caught",
        "any report: the result is undefined by C (it may still work as meant)",
        "Documentation/dev-tools/ubsan.rst",
    ),
    ReportKind.USERCOPY: _OOPS,
    ReportKind.WARNING: Baseline(
        "a WARNING",
        "any: a condition its code asserts never holds did; the kernel goes on",
        "WARN(), WARN_ON() (include/asm-generic/bug.h)",
    ),
}
if set(KIND_BASELINES) != set(ReportKind):  # every kind's report is judged against something (checked at import)
    raise AssertionError(f"no baseline for {sorted(set(ReportKind) - set(KIND_BASELINES))}")


class PrintedThreshold(NamedTuple):
    """A threshold a kind of report prints itself: where to find it, and what the printed value is."""

    pattern: re.Pattern[str]
    header_only: bool  # printed on the header line (else on any line of the report)
    meaning: str  # what the value printed is, said after it


#: The reports that print the value they were judged by: the baseline names it, with its line, over the kind's
#: default (:data:`KIND_BASELINES`).  An RCU stall prints how long its grace period waited, not its timeout.
PRINTED_THRESHOLDS: dict[ReportKind, PrintedThreshold] = {
    ReportKind.HANG: PrintedThreshold(
        re.compile(r"blocked for more than \d{1,20} seconds"),
        True,
        "khungtaskd's timeout (hung_task_timeout_secs) or, on newer kernels, how long the task has waited past it",
    ),
    ReportKind.SOFT_LOCKUP: PrintedThreshold(
        re.compile(r"stuck for \d{1,20}s!"),
        True,
        "how long the CPU ran kernel code without scheduling, past 2 x watchdog_thresh (20 s by default)",
    ),
    ReportKind.RCU_STALL: PrintedThreshold(
        re.compile(r"\bt=\d{1,20} jiffies"),
        False,
        "how long the grace period had waited, past rcu_cpu_stall_timeout (21 s by default; the report does not "
        "print the timeout)",
    ),
}


def printed_baseline(report: KernelReport) -> Baseline | None:
    """The kind's baseline naming the threshold the report prints, with its line; None when it prints none."""
    printed = PRINTED_THRESHOLDS.get(report.kind)
    if printed is None:
        return None
    lines = ((report.start_line, report.header),) if printed.header_only else report.lines
    for number, text in lines:
        found = printed.pattern.search(text)
        if found is not None:
            kind = KIND_BASELINES[report.kind]
            return Baseline(
                kind.name, f'exceeded: line {number} prints "{found.group(0)}", {printed.meaning}', kind.source
            )
    return None


def panicked_baseline(report: KernelReport) -> Baseline:
    """:data:`PANICKED`, its source citing the report's "Kernel panic - not syncing" line by number where the report
    holds it (a baseline a reader checks names the line to check)."""
    at = next((n for n, text in report.lines if "Kernel panic - not syncing" in text), None)
    if at is None:
        return PANICKED
    return Baseline(PANICKED.name, PANICKED.value, f"{PANICKED.source}, line {at}")


#: The OOM killer's kill line ("Out of memory: Killed process 4242 (memhog) ... anon-rss:1000200kB", "Memory cgroup
#: out of memory: Killed process ...", older kernels' "Kill process"): its pid (group 2), name (3) and anon-rss (4).
#: Read by the event reader (detectors/dmesg/events.py KILLED) and by :func:`oom_baseline`.
OOM_KILLED = (
    r"(?:(Memory cgroup )?[Oo]ut of memory(?: \([a-z_]+\))?: )?Kill(?:ed)? process (\d+) \((.*?)\)"
    r"(?:.*?anon-rss:(\d+)kB)?"
)
_OOM_KILLED: Final = re.compile(OOM_KILLED)


#: What an OOM's panic line says made it a panic, by its words, in order (mm/oom_kill.c: check_panic_on_oom()'s
#: "Out of memory: compulsory|system-wide panic_on_oom is enabled", out_of_memory()'s "Out of memory and no killable
#: processes..." when it found no task to kill, 2.6-4.18).
_OOM_PANIC_WHY: Final = (
    ("panic_on_oom", "panic_on_oom made the OOM a panic"),
    ("no killable process", "the OOM killer found no task it could kill, and out_of_memory() panics then"),
)


def oom_baseline(report: KernelReport, panic: tuple[int, str] | None = None) -> Baseline:
    """An OOM report's baseline saying what the OOM killer did: the task it killed (its line), or, with no kill line,
    that none was killed: ``panic`` (the "Kernel panic - not syncing: Out of memory ..." line after it, as (number,
    text)) says why the OOM became a panic (panic_on_oom, or no task to kill), worded from the line; without it, no
    kill is shown."""
    kind = KIND_BASELINES[ReportKind.OOM]
    killed = next(((n, m) for n, t in report.lines if (m := _OOM_KILLED.search(t)) is not None), None)
    if killed is not None:
        number, m = killed
        said = f"exhausted: the OOM killer killed a task to free memory (line {number}: pid {m.group(2)}, {m.group(3)})"
    elif panic is not None:
        number, text = panic
        reason = text[text.find("not syncing:") + len("not syncing:") :].strip()
        why = next((w for words, w in _OOM_PANIC_WHY if words in reason), "the OOM became a panic")
        said = f"exhausted; no task was killed: {why} (line {number}: {reason})"
    else:
        said = "exhausted; no task is shown killed: its lines hold no 'Killed process' line"
    return Baseline(kind.name, said, kind.source)


def group_judgement(group: ReportGroup) -> tuple[Severity, Baseline]:
    """A group's one severity, in its finding and in every table, and the baseline it was judged against.

    A crash requested with sysrq is low, as the dump's crash finding of it is (:data:`FORCED`): the kernel
    panicked because someone asked.  Any other report the kernel panicked on is critical (:data:`PANICKED`);
    the rest are as severe as their rule says (detectors/dmesg/rules.py), against their kind's baseline
    (:data:`KIND_BASELINES`), naming the threshold the report prints where it prints one (:func:`printed_baseline`).
    """
    first = group.first
    texts = [first.title, first.header, *(text for _, text in first.preamble)]  # (the sysrq line is its preamble)
    if isinstance(first.frame, str):
        texts.append(first.frame)
    if requested_by_sysrq(texts):
        return Severity.LOW, FORCED
    panicked = group.panic_report
    if panicked is not None:
        return Severity.CRITICAL, panicked_baseline(panicked)
    if first.kind is ReportKind.NET_DROP:
        return net_drop_judgement(group)
    if first.kind is ReportKind.OOM:
        return first.severity, oom_baseline(first)
    return first.severity, printed_baseline(first) or KIND_BASELINES[first.kind]


#: How long a network stack's drops must go on to be a problem (medium): a minute of them is a table or a memory
#: limit that stays reached under load; one line, or a burst within seconds, is a spike it recovered from.
NET_DROP_SPAN: Final = 60.0


def net_drop_judgement(group: ReportGroup) -> tuple[Severity, Baseline]:
    """A net-drop group's severity from the harm its lines show: how many, over how long (their printk times, else
    their wall-clock times).  One line is low; lines repeated over :data:`NET_DROP_SPAN` or more are medium, as are
    repeated lines whose span cannot be read (the drops went on, for how long is not known); a burst within less is
    low.  The count is of the lines read: net_ratelimit() suppressed more ("N callbacks suppressed"), a lower
    bound, as the finding's occurrences say."""
    first, last = group.first, group.last
    kind = KIND_BASELINES[ReportKind.NET_DROP]
    rule = f"one line: low; repeated over {NET_DROP_SPAN:.0f} s or more: medium"
    if group.count == 1:
        return Severity.LOW, Baseline(kind.name, f"{rule} (here one line)", kind.source)
    span: float | None = None
    if (
        isinstance(first.start_time, float)
        and isinstance(last.start_time, float)
        and last.start_time >= first.start_time
    ):
        span = last.start_time - first.start_time
    elif first.start_wall is not None and last.start_wall is not None and last.start_wall >= first.start_wall:
        span = last.start_wall - first.start_wall
    if span is None:
        said = f"here {group.count} lines, their span not read (no times)"
        return Severity.MEDIUM, Baseline(kind.name, f"{rule} ({said})", kind.source)
    said = f"here {group.count} lines over {span:.0f} s"
    severity = Severity.MEDIUM if span >= NET_DROP_SPAN else Severity.LOW
    return severity, Baseline(kind.name, f"{rule} ({said})", kind.source)


def group_severity(group: ReportGroup) -> Severity:
    """A group's one severity (:func:`group_judgement`'s)."""
    return group_judgement(group)[0]
