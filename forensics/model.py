"""The incident model: severities, evidence, findings and incidents.

Every analysis in kforensic ends in :class:`Finding` records, each backed by at
least one :class:`Evidence` that cites an exact place in an input (a line of a
log, a frame of a dump, a sample of a store).  Findings from any number of
analyses are gathered into one :class:`Incident`, which the renderers in
:mod:`forensics.report` turn into text, markdown or JSON.

All records are frozen dataclasses: they are values, safe to hash, compare and
share between detectors.  Missing data is never an empty string or zero but a
:class:`NotAvailable` carrying the reason.
"""

from __future__ import annotations

import datetime
import enum
import hashlib
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Self, TypeVar

from forensics.quoting import shown_path

_T = TypeVar("_T")


@dataclass(frozen=True)
class NotAvailable:
    """A value that could not be determined, with the reason why."""

    reason: str

    def __str__(self) -> str:
        return f"not available: {self.reason}"


class FindingKind(enum.StrEnum):
    """What a finding is about. The values are the strings of the JSON documents (``kforensic.incident/1``).

    Kernel log reports are ``dmesg.<kind>``, one member per kind of the dmesg rule table and its events
    (``tests/forensics/test_model.py`` checks that every rule kind has its member).
    """

    # vmcore
    CRASH = "crash"
    NULL_FIELD = "null-field"
    HUNG_TASK = "hung-task"
    OUTSIZED_SLAB = "outsized-slab"
    MODULE = "module"
    BUG_CONDITION = "bug-condition"
    DEADLOCK = "deadlock"
    DOUBLE_FREE = "double-free"
    LIST_CORRUPTION = "list-corruption"
    LOCKUP_LOOP = "lockup-loop"
    OOM_USERS = "oom-users"
    SUSPICIOUS_VALUES = "suspicious-values"
    SPINLOCK_DEADLOCK = "spinlock-deadlock"
    USE_AFTER_FREE = "use-after-free"
    BUFFER_OVERFLOW = "buffer-overflow"
    # incident
    CONTRADICTION = "contradiction"
    # kdump
    KDUMP_READINESS = "kdump-readiness"
    # leaks
    SLAB_LEAK = "slab-leak"
    SLAB_LEAK_GROUP = "slab-leak-group"
    KERNEL_MEMORY_LEAK = "kernel-memory-leak"
    LEAK_COVERAGE = "leak-coverage"
    SNAPSHOT_ROWS_REJECTED = "snapshot-rows-rejected"
    SNAPSHOT_TIME_ORDER = "snapshot-time-order"
    SNAPSHOT_PARTIAL = "snapshot-partial"
    SNAPSHOT_CLOCK_STEP = "snapshot-clock-step"
    # profile
    PROFILE = "profile"
    # trace
    TRACE_CLOCK = "trace-clock"
    TRACE_COVERAGE = "trace-coverage"
    SCHED_CPU_HOG = "sched-cpu-hog"
    SCHED_RT_HOG = "sched-rt-hog"
    SCHED_WAKEUP_LATENCY = "sched-wakeup-latency"
    SCHED_LONG_IRQ = "sched-long-irq"
    SCHED_DSTATE = "sched-dstate"
    SCHED_SOFTIRQ_STARVATION = "sched-softirq-starvation"
    SCHED_SOFTIRQ_LONG = "sched-softirq-long"
    SCHED_IRQS_OFF = "sched-irqs-off"
    SCHED_PREEMPT_OFF = "sched-preempt-off"
    SPAN_SLOW = "span-slow"
    # kernel log reports and events (detectors/dmesg)
    DMESG_ALLOC_FAILURE = "dmesg.alloc-failure"
    DMESG_ATOMIC_SLEEP = "dmesg.atomic-sleep"
    DMESG_BUG = "dmesg.bug"
    DMESG_FIRMWARE = "dmesg.firmware"
    DMESG_FS = "dmesg.fs"
    DMESG_GPF = "dmesg.gpf"
    DMESG_HANG = "dmesg.hang"
    DMESG_HARDWARE = "dmesg.hardware"
    DMESG_KASAN = "dmesg.kasan"
    DMESG_KCSAN = "dmesg.kcsan"
    DMESG_KFENCE = "dmesg.kfence"
    DMESG_KMSAN = "dmesg.kmsan"
    DMESG_LEAK = "dmesg.leak"
    DMESG_LIST_CORRUPTION = "dmesg.list-corruption"
    DMESG_LOCKDEP = "dmesg.lockdep"
    DMESG_LOCKING = "dmesg.locking"
    DMESG_LOCKUP = "dmesg.lockup"
    DMESG_MM = "dmesg.mm"
    DMESG_NET_DROP = "dmesg.net-drop"
    DMESG_NO_ROOT = "dmesg.no-root"
    DMESG_NULL_DEREF = "dmesg.null-deref"
    DMESG_OOM = "dmesg.oom"
    DMESG_OOPS = "dmesg.oops"
    DMESG_PAGE_FAULT = "dmesg.page-fault"
    DMESG_PANIC = "dmesg.panic"
    DMESG_RCU = "dmesg.rcu"
    DMESG_RCU_STALL = "dmesg.rcu-stall"
    DMESG_REBOOT = "dmesg.reboot"
    DMESG_REFCOUNT = "dmesg.refcount"
    DMESG_RT_THROTTLING = "dmesg.rt-throttling"
    DMESG_RUST_PANIC = "dmesg.rust-panic"
    DMESG_SOFT_LOCKUP = "dmesg.soft-lockup"
    DMESG_STACK = "dmesg.stack"
    DMESG_STACK_OVERFLOW = "dmesg.stack-overflow"
    DMESG_STACK_PROTECTOR = "dmesg.stack-protector"
    DMESG_SYZ_FAILURE = "dmesg.syz-failure"
    DMESG_TRAP = "dmesg.trap"
    DMESG_UBSAN = "dmesg.ubsan"
    DMESG_USERCOPY = "dmesg.usercopy"
    DMESG_WARNING = "dmesg.warning"

    @property
    def from_kernel_log(self) -> bool:
        """A kernel log report or event (``dmesg.<kind>``, detectors/dmesg)."""
        return self in KERNEL_LOG_KINDS


#: The kinds of the kernel log's reports and events (one per ``forensics.types.dmesg.ReportKind``).
KERNEL_LOG_KINDS = frozenset(k for k in FindingKind if k.value.startswith("dmesg."))


class Severity(enum.Enum):
    """How bad a finding is, ordered ``info < low < medium < high < critical``."""

    INFO = "info"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"

    @property
    def rank(self) -> int:
        """Position in the order, 0 for info up to 4 for critical."""
        return _SEVERITY_ORDER.index(self)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Severity):
            return NotImplemented
        return self.rank < other.rank

    def __le__(self, other: object) -> bool:
        if not isinstance(other, Severity):
            return NotImplemented
        return self.rank <= other.rank

    def __gt__(self, other: object) -> bool:
        if not isinstance(other, Severity):
            return NotImplemented
        return self.rank > other.rank

    def __ge__(self, other: object) -> bool:
        if not isinstance(other, Severity):
            return NotImplemented
        return self.rank >= other.rank


_SEVERITY_ORDER = (
    Severity.INFO,
    Severity.LOW,
    Severity.MEDIUM,
    Severity.HIGH,
    Severity.CRITICAL,
)


#: The lowest severity that is a problem: a healthy machine yields nothing at this level or above
#: (docs/severity.md); below it a finding is information (low: worth a look, info: context).
PROBLEM = Severity.MEDIUM


class LocatorKind(enum.Enum):
    """What a :class:`Locator` points at inside its source."""

    LINE = "line"  # 1-based line number of a text file (start..end inclusive)
    BYTE = "byte"  # byte offset into a file
    FRAME = "frame"  # stack frame number of a backtrace (#0 is innermost)
    REGISTER = "register"  # a CPU register of a frame; ``name`` holds the register
    ADDRESS = "address"  # a virtual address in a dump
    SAMPLE = "sample"  # a sample of a time series store (``start`` is its id)
    EVENT = "event"  # an event of a trace (``start`` is its line number)


@dataclass(frozen=True)
class StreamEvent:
    """An event of a CTF (LTTng) trace named as babeltrace2 and Trace Compass find it.

    ``number`` is 1-based among the events of its stream file (``babeltrace2`` given that stream's directory
    prints it on line ``number``), ``packet`` 0-based among the stream's packets, ``byte`` the offset of the
    event's header in the stream file.  ``ns`` is its time as babeltrace2 prints it by default: the clock
    value with the clock's offset applied (nanoseconds since the Unix epoch when ``epoch``, else since the
    clock's own origin); ``cycles`` the raw clock value (``babeltrace2 --clock-cycles``).  See docs/trace.md.
    """

    stream: str  # the stream file, relative to the trace or session directory read
    number: int
    packet: int
    byte: int
    cycles: int
    ns: int
    clock: str  # the clock class's name (LTTng: monotonic)
    epoch: bool  # the clock's origin is the Unix epoch (babeltrace2: origin_is_unix_epoch)

    def time_text(self) -> str:
        """The time as babeltrace2 prints it with ``--clock-date --clock-gmt`` (or ``--clock-seconds``)."""
        secs, frac = divmod(self.ns, 1_000_000_000)
        if not self.epoch:
            return f"{secs}.{frac:09d} s from clock {self.clock}'s own origin"
        day = datetime.datetime.fromtimestamp(secs, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S")
        return f"{day}.{frac:09d} UTC"

    def __str__(self) -> str:
        return (
            f"{self.stream} event {self.number} (packet {self.packet}, byte {self.byte})"
            f" at {self.time_text()} ({self.clock} clock: {self.cycles} cycles)"
        )


def cpu_name(cpu: int) -> str:
    """A CPU as a trace's event locator names it (:attr:`Locator.name`: the buffer that holds the event)."""
    return f"CPU{cpu}"


@dataclass(frozen=True)
class Locator:
    """Where in a source a piece of evidence stands.

    ``start`` is the line, byte offset, frame number, address or sample id;
    ``end`` the last line of a multi-line excerpt; ``name`` qualifies the place
    (a register name, a task, a CPU buffer).  ``event``: a CTF trace's event as
    babeltrace2 finds it (``start`` its number, ``name`` its stream file).
    """

    kind: LocatorKind
    start: int
    end: int | None = None
    name: str | None = None
    event: StreamEvent | None = None

    def __post_init__(self) -> None:
        if self.start < 0:
            raise ValueError(f"locator start must be >= 0, got {self.start}")
        if self.end is not None and self.end < self.start:
            raise ValueError(f"locator end {self.end} is before its start {self.start}")

    def names_cpu(self, cpu: int) -> bool:
        """Whether its name begins with CPU ``cpu`` (:func:`cpu_name`: "CPU1", "CPU0, the waker's: ..."), as a
        trace's events are named by the CPU whose buffer holds them: a citation says that CPU once (until
        2026-12-07 "line 6 (CPU1) [   10.600000] CPU 1")."""
        head = cpu_name(cpu)
        name = (self.name or "") if self.event is None else ""  # (a CTF event is cited by its stream event alone)
        return name.startswith(head) and not name[len(head) : len(head) + 1].isdigit()

    def __str__(self) -> str:
        if self.event is not None:
            return str(self.event)
        kind = self.kind
        if kind is LocatorKind.LINE or kind is LocatorKind.EVENT:
            # A text trace's event is named by its line (``start``): "event N" read as the Nth event (a CTF
            # trace's, named by its stream event above), not as ``sed -n Np``.
            span = f"{self.start}" if self.end in (None, self.start) else f"{self.start}-{self.end}"
            text = f"line {span}"
        elif kind is LocatorKind.BYTE or kind is LocatorKind.ADDRESS:
            text = f"{kind.value} {self.start:#x}"
        elif kind is LocatorKind.FRAME:
            text = f"frame #{self.start}"
        elif kind is LocatorKind.SAMPLE and self.name == PERF_SCRIPT_LINE:
            return f"perf script output line {self.start}"  # Evidence.cite says the sample's time and CPU first
        elif kind is LocatorKind.REGISTER and self.name:
            # ``start`` is the frame: "register 0 (rax)" read as DWARF's register number 0
            return f"frame #{self.start} register {self.name}"
        else:
            text = f"{kind.value} {self.start}"
        return f"{text} ({self.name})" if self.name else text


#: The :attr:`Locator.name` of a perf.data's sample: ``start`` is its header line in ``perf script -i FILE``'s output
#: (the file is binary). Cited as :func:`perf_sample_said` says it.
PERF_SCRIPT_LINE = "perf script line"


def perf_sample_said(line: int, ts: float | None, cpu: int | None) -> str:
    """A perf.data's sample as a perf user finds it in the recording: by its time and CPU when perf recorded one
    (``perf script --time T,T+0.000001 -C N``: perf prints the time cut to the microsecond, so the sample may be up to
    999 ns after T and ``--time T,T`` misses it), then its line of ``perf script``'s output (a line of no file they
    have, and another perf's output may differ: said as the output's)."""
    at = f" at {ts:.6f}" if ts is not None else ""
    on = f" on CPU {cpu}" if cpu is not None else ""
    return f"sample{at}{on} (perf script output line {line})"


class Clock(enum.Enum):
    """Which clock a :class:`Timestamp` was read from."""

    MONOTONIC = "monotonic"  # seconds since boot, as printk prints them
    WALL = "wall"  # seconds since the Unix epoch (UTC)
    TRACE = "trace"  # a tracer's own clock (ftrace local/global, perf): not convertible to the others


@dataclass(frozen=True)
class Timestamp:
    """A point in time on a named clock."""

    seconds: float
    clock: Clock = Clock.MONOTONIC
    # A wall-clock time of a zone not known (dmesg -T's host local time): ``seconds`` is the local time as printed,
    # read as if UTC; shown as printed, never with a UTC offset, and not lined up with UTC times.
    zone_unknown: bool = False

    def __str__(self) -> str:
        if self.clock is Clock.MONOTONIC:
            return f"[{self.seconds:12.6f}]"
        if self.clock is Clock.TRACE:
            return f"{self.seconds:.6f} (trace clock)"
        from forensics.units import iso_local, iso_utc  # only needed when a wall clock time is shown

        return iso_local(self.seconds) if self.zone_unknown else iso_utc(self.seconds)


@dataclass(frozen=True)
class Evidence:
    """A verbatim excerpt of an input that supports a finding.

    ``source`` names the input (a path, or a name such as ``<stdin>``); the
    excerpt must be found verbatim at ``locator`` in that source
    (see :mod:`forensics.evidence`).
    """

    source: str
    locator: Locator
    excerpt: str
    timestamp: Timestamp | None = None
    cpu: int | None = None

    def __post_init__(self) -> None:
        if not self.excerpt:
            raise ValueError("evidence needs a non-empty excerpt")

    def cite(self) -> str:
        """One-line citation, e.g. ``kern.log line 12`` or ``vmcore frame #0``."""
        if self.locator.kind is LocatorKind.SAMPLE and self.locator.name == PERF_SCRIPT_LINE:
            ts = self.timestamp.seconds if self.timestamp is not None else None
            return f"{shown_path(self.source)} {perf_sample_said(self.locator.start, ts, self.cpu)}"
        extra = []
        if self.timestamp is not None and self.locator.event is None:  # (a CTF event's locator says its time)
            extra.append(str(self.timestamp))
        if self.cpu is not None and not self.locator.names_cpu(self.cpu):  # "line 6 (CPU1)": said once
            extra.append(f"CPU {self.cpu}")
        suffix = f" {' '.join(extra)}" if extra else ""
        # One line: a source named with a newline (a --source-dir copy, a log "new\nline.log") is shown escaped.
        return f"{shown_path(self.source)} {self.locator}{suffix}"


@dataclass(frozen=True)
class Fact:
    """A named value a detector established (``name: value``), shown with a finding.  ``lower_bound``: the value is
    a floor, what was measured up to where the input ends (a run or a wait still open at a window's or a
    recording's end): shown "at least VALUE" (:attr:`said`), written with ``"lower_bound": true``."""

    name: str
    value: str
    lower_bound: bool = False

    @property
    def said(self) -> str:
        """The value as every renderer shows it: "at least VALUE" for a lower bound."""
        return f"at least {self.value}" if self.lower_bound else self.value


class SubjectKind(enum.StrEnum):
    """What a finding is about, as rules match it (never by its title's text)."""

    TASK = "task"
    SLAB_CACHE = "slab cache"
    FUNCTION = "function"
    LOCK = "lock"
    SPAN = "span"
    CPU = "cpu"
    # Kernel objects a user process holds open (sockets, files, mappings; ``name`` what they are, "UDP sockets"): a
    # leak of them is a process keeping them, which its exit frees, not a fault of the kernel's (the verdict says so).
    HELD_BY_PROCESS = "held by a process"


@dataclass(frozen=True)
class Subject:
    """One thing a finding is about: a task (``name`` its comm, ``pid``), a slab cache, a function, ..."""

    kind: SubjectKind
    name: str
    pid: int | None = None

    def __str__(self) -> str:
        return f"{self.kind} {self.name}" + (f" (pid {self.pid})" if self.pid is not None else "")


@dataclass(frozen=True)
class Baseline:
    """What a finding's figure was judged against: the expected value, and where that expectation comes from.

    E.g. ``Baseline("CFS latency period, 4 runnable tasks, 2 CPUs", "12.000 ms",
    "Documentation/scheduler/sched-design-CFS.rst")``.  Every renderer shows it
    beside the severity, so a reader can check the judgement (docs/severity.md).
    """

    name: str  # what the expectation is
    value: str  # its value, with units
    source: str  # where it comes from: a kernel document, a kernel default, the input's own distribution

    def __str__(self) -> str:
        return f"{self.name}: {self.value} ({self.source})"


class InputKind(enum.StrEnum):
    """The kinds of input a report reads; the values are how it names one ("crash dump D", "kernel log L") and the
    strings of the JSON documents (``examined[].input``)."""

    DUMP = "crash dump"
    VMLINUX = "vmlinux"  # (the dump's debug info given: one of another kernel is dropped, the dump's log still read)
    LOG = "kernel log"
    STORE = "slab store"
    TRACE = "trace"
    PROFILE = "profile"
    FINDINGS = "findings file"
    KDUMP = "kdump check"  # (read from a findings file: `kdump check -f json`; a report of it alone tells readiness)


#: How :attr:`Examined.standing` starts for an input set apart from the boot a report tells (another boot, host or
#: kernel release), before why.
SET_APART = "set apart: "


@dataclass(frozen=True)
class Examined:
    """What one analysis looked at, so that "nothing found" says what it could and could not have found.

    ``what`` is one line (``trace t.txt: 251,149 events, 2 CPUs, 22.683 s; sched_switch, irq_handler_entry``);
    ``could_find`` names what the input had the power to show, ``could_not`` what it lacked and why
    (``wakeup latency: needs sched_waking or sched_wakeup events``).
    """

    what: str
    could_find: tuple[str, ...] = ()
    could_not: tuple[str, ...] = ()
    # How the input stands to the boot a report tells ("set apart: it names kernel 6.12.118, the dump 6.1.192",
    # "boot: unconfirmed: ..."); "" outside a report.
    standing: str = ""
    # The records that name the input's kernel release or host where no finding's evidence prints them (a perf.data
    # header's ``# os release : ...`` and ``# hostname : ...`` lines): what a contradiction of kernels or hosts cites
    # for the input.
    named_by: tuple[Evidence, ...] = ()
    # An input that could not be used at all, and why: the one-line message its own command refuses it with (a
    # report goes on with its other inputs: "not a kernel crash dump (...)", "truncated dump: ...", "cannot read L: No
    # such file or directory", "S: not a slab-watch store (...)").
    unusable: NotAvailable | None = None
    # The kind of input it is, where a reader needs it: set for an input that could not be used (a step that needs
    # the dump says what to get first when the dump given was one of them).
    input: InputKind | None = None
    # What would make such an input usable: its error's hint ("use the vmlinux of the kernel that crashed; ..."); of
    # a dump read as its kernel log only (no debug info), where its debug info is had.
    hint: str = ""
    # What of the input was not read because its file is cut short (an LTTng stream file that ends inside a packet, a
    # perf.data shorter than its header announces), each among ``could_not`` too: a verdict of "no problem" holds for
    # the part read only, so a report's first paragraph names it (review ue22 #10).
    cut: tuple[str, ...] = ()

    @property
    def blind(self) -> bool:
        """Whether the analysis could have found nothing (too few samples, a dump without debug info, an input that
        could not be used): its "no finding" is no verdict, and is said as "could not judge"."""
        return self.unusable is not None or (not self.could_find and bool(self.could_not))


def unusable_said(examined: tuple[Examined, ...]) -> str:
    """The inputs that could not be used, as a sentence after a verdict (" The crash dump d could not be used: ...");
    "" when every input was: a report that went on without its dump says so beside what it found."""
    return "".join(f" The {e.what} could not be used: {e.unusable.reason}." for e in examined if e.unusable)


def cut_said(examined: tuple[Examined, ...]) -> str:
    """What of the inputs was not read because a file is cut short, as a sentence after a verdict (" It could not
    judge what was cut off: events after byte 49980 of channel0_1 (...)."); "" when no file was."""
    cut = [why for e in examined for why in e.cut]
    return f" It could not judge what was cut off: {'; '.join(cut)}." if cut else ""


def unjudged_count(examined: tuple[Examined, ...]) -> str:
    """How many things the analyses could not judge, said apart from the problems ("3 could not be judged"); "" when
    none: a check whose input was not read is no problem, and a verdict counting problems alone hid them."""
    count = sum(len(e.could_not) for e in examined)
    return f"{count} could not be judged" if count else ""


def unjudged(examined: tuple[Examined, ...]) -> str:
    """What could not be judged at all, in the analyses' own words ("any leak: cannot judge yet: 10 samples ..."),
    "" when every analysis could have found something."""
    return "; ".join(why for e in examined if e.blind for why in e.could_not)


def below_problem(findings: tuple[Finding, ...]) -> str:
    """How many findings lie below :data:`PROBLEM`, by severity: "16 finding(s) below medium: 7 low (worth a look), 9
    info (context)" (all were called information)."""
    below = [f.severity for f in findings if f.severity < PROBLEM]
    words = {Severity.LOW: "worth a look", Severity.INFO: "context"}
    counts = [f"{below.count(s)} {s.value} ({words[s]})" for s in (Severity.LOW, Severity.INFO) if s in below]
    return f"{len(below)} finding(s) below {PROBLEM.value}: {', '.join(counts)}"


#: Low findings named by title in a verdict; the rest are counted.
WATCH_NAMED = 2


def to_watch(findings: tuple[Finding, ...]) -> str:
    """The low findings by name, worst first: "1 low finding to watch: SUnreclaim ... watch it" ("" without one).

    A verdict that said "No problem found" beside a low "watch it" finding read as a contradiction: low is below
    the line of a problem (docs/severity.md), yet worth a look, so it is named where the verdict is said.
    """
    low = [
        f for f in sorted(findings, key=lambda f: (-f.confidence, f.title)) if f.severity is Severity.LOW
    ]  # as listed
    if not low:
        return ""
    named = "; ".join(f.title for f in low[:WATCH_NAMED])
    more = f"; and {len(low) - WATCH_NAMED} more" if len(low) > WATCH_NAMED else ""
    return f"{len(low)} low finding{'s' if len(low) > 1 else ''} to watch: {named}{more}"


class IdFamily(enum.StrEnum):
    """The prefix of a finding's id where it is not the finding's kind.

    Ids minted before the kinds were named as they are now: kept, so that the same problem keeps its id
    across versions (``report --from`` merges by id; stores and saved JSON hold the old ids).
    """

    DMESG = "dmesg"  # every kernel log report: its report kind is the first part
    VMCORE_CRASH = "vmcore-crash"  # FindingKind.CRASH
    BLOCKED_TASK = "blocked-task"  # FindingKind.HUNG_TASK of a blocked task the dump shows
    HELD_LOCK = "held-lock"  # FindingKind.HUNG_TASK of a lock whose owner the dump names
    TAINTING_MODULE = "tainting-module-in-stack"  # FindingKind.MODULE
    KDUMP = "kdump"  # FindingKind.KDUMP_READINESS


def finding_id(kind: FindingKind | IdFamily, *parts: str) -> str:
    """Stable identifier of a problem, the same across runs and hosts: ``<kind>:<hash>``.

    Pass only what identifies the problem (kind, title, guilty function,
    cache name), never addresses, PIDs or times.  Whitespace and case of the
    parts do not matter.
    """
    normal = "\x1f".join(" ".join(p.split()).casefold() for p in (kind, *parts))
    # surrogatepass: a part read from undecodable input bytes (a symbol, a comm decoded with surrogateescape)
    # still has an identity; a strict encode raised UnicodeEncodeError (exit 4) on one byte 0xb2 in a perf script.
    digest = hashlib.sha256(normal.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{kind}:{digest}"


@dataclass(frozen=True)
class StatedCause:
    """The root cause a detector establishes from values it read, worded by it, and the command that confirms it.

    Ranked first among equals by the ``stated`` rule of detectors/incident/hypotheses.py. Shown and written
    (JSON) as the finding's last two facts, ``hypothesis`` and ``next command`` (:attr:`Finding.shown_facts`),
    and read back from them.
    """

    statement: str
    next_command: str

    def as_facts(self) -> tuple[Fact, Fact]:
        """The two facts it is shown and written as."""
        return Fact(HYPOTHESIS_FACT, self.statement), Fact(NEXT_COMMAND_FACT, self.next_command)


#: The names of the two facts a :class:`StatedCause` is shown and written as, in this order.
HYPOTHESIS_FACT = "hypothesis"
NEXT_COMMAND_FACT = "next command"


@dataclass(frozen=True)
class LogCause:
    """The root cause a kernel log report's body establishes (detectors/dmesg/why.py), as data.

    ``cls`` is the cause's class (forensics/types/causes.py), ``confidence`` its own (two decimals, as
    written). Ranked by the ``log-cause`` rule of detectors/incident/hypotheses.py. Shown and written
    (JSON) as the finding's last four facts (:data:`LOG_CAUSE_FACTS`), and read back from them.
    """

    cls: str
    statement: str
    confidence: float
    next_command: str

    def as_facts(self) -> tuple[Fact, Fact, Fact, Fact]:
        """The four facts it is shown and written as."""
        cls, statement, confidence, command = LOG_CAUSE_FACTS
        return (
            Fact(cls, self.cls),
            Fact(statement, self.statement),
            Fact(confidence, f"{self.confidence:.2f}"),
            Fact(command, self.next_command),
        )


@dataclass(frozen=True)
class Consequence:
    """A typed link from a finding to the root finding it follows from: a hung task of a lock cycle, the crash a
    spinlock never released brought on.  The harm is counted once, at the root (docs/severity.md, "Root findings
    and their consequences"); the consequence keeps its own evidence.

    ``root`` is the root finding's id, ``title`` its title (shown without looking it up), ``how`` what ties
    the two, from the values read (``kf_stats (pid 43) waits in the cycle``).
    """

    root: str
    title: str
    how: str

    def __str__(self) -> str:
        return f"{self.title} ({self.root}): {self.how}"


#: The names of the four facts a :class:`LogCause` is shown and written as, in this order.
LOG_CAUSE_FACTS = ("root cause class", "root cause", "root cause confidence", "root cause next command")


@dataclass(frozen=True)
class Finding:
    """One problem found in the inputs, with the evidence that shows it."""

    id: str
    kind: FindingKind  # a plain string of a known kind is converted (JSON, tests); an unknown one is refused
    title: str
    severity: Severity
    confidence: float
    confidence_reason: str
    summary: str
    evidence: tuple[Evidence, ...]
    next_steps: tuple[str, ...] = ()
    facts: tuple[Fact, ...] = ()
    detector: str = "unknown"
    subjects: tuple[Subject, ...] = ()  # what it is about, typed: correlation rules match these
    baseline: Baseline | None = None  # what the figure behind the severity was judged against (docs/severity.md)
    stated: StatedCause | None = None  # the root cause it establishes itself (a dump's "why" analysis), typed
    log_cause: LogCause | None = None  # the root cause its kernel log report's body establishes, typed
    consequence_of: Consequence | None = None  # the root finding it follows from, whose severity counts its harm

    @property
    def shown_facts(self) -> tuple[Fact, ...]:
        """The facts as shown and written: its own, then a stated cause's two, then a log cause's four."""
        if self.stated is None and self.log_cause is None:
            return self.facts
        stated = () if self.stated is None else self.stated.as_facts()
        logged = () if self.log_cause is None else self.log_cause.as_facts()
        return (*self.facts, *stated, *logged)

    def subject(self, kind: SubjectKind) -> Subject | None:
        """The first subject of that kind, None when the finding names none."""
        return next((s for s in self.subjects if s.kind is kind), None)

    def __post_init__(self) -> None:
        if not isinstance(self.kind, FindingKind):
            object.__setattr__(self, "kind", FindingKind(self.kind))  # ValueError for a kind nobody makes
        if not self.evidence:
            raise ValueError(f"finding {self.id!r} has no evidence; a finding without evidence is a bug")
        if not 0.0 <= self.confidence <= 1.0:
            raise ValueError(f"confidence {self.confidence} of {self.id!r} is outside 0..1")
        if not self.title:
            raise ValueError(f"finding {self.id!r} has no title")

    def fact(self, name: str) -> str | None:
        """The value of the fact called ``name`` (a stated cause's too), None when the finding has none."""
        return next((f.value for f in self.shown_facts if f.name == name), None)

    def merged_with(self, other: Finding) -> Finding:
        """Merge another finding with the same id: keep all evidence, the worst severity.

        The worse of the two leads (``self`` on a tie): its title, summary and baseline, its evidence, facts
        and next steps first.  The severity must be the one its words and baseline judged: a task's info
        "Long run ... others waited within their fair share" of one trace merged with its low "CPU hog" of
        another was shown low under the info finding's "none exceeded".
        """
        if other.id != self.id:
            raise ValueError(f"cannot merge finding {other.id!r} into {self.id!r}")
        lead, rest = (other, self) if other.severity > self.severity else (self, other)
        evidence = _unique(lead.evidence + rest.evidence)
        facts = _unique(lead.facts + rest.facts)
        steps = _unique(lead.next_steps + rest.next_steps)
        best = self if self.confidence >= other.confidence else other
        return Finding(
            id=self.id,
            kind=lead.kind,
            title=lead.title,
            severity=lead.severity,
            confidence=best.confidence,
            confidence_reason=best.confidence_reason,
            summary=lead.summary,
            evidence=evidence,
            next_steps=steps,
            facts=facts,
            detector=lead.detector,
            subjects=_unique(lead.subjects + rest.subjects),
            baseline=lead.baseline or (rest.baseline if rest.severity == lead.severity else None),
            stated=lead.stated or rest.stated,
            log_cause=lead.log_cause or rest.log_cause,
            consequence_of=lead.consequence_of or rest.consequence_of,
        )


@dataclass(frozen=True)
class SourceRecord:
    """An input that was read: what it was, how big, its digest, time taken, errors."""

    path: str
    size: int | NotAvailable
    sha256: str | NotAvailable
    seconds: float
    error: str | None = None
    # A kernel log's: the first line of each boot it holds (a boot banner, or the printk time restarting at 0.000000
    # without one), in log order: the times either side of one are of two boots' clocks (ClockJump's boot).
    boot_lines: tuple[int, ...] = ()
    # A kernel log of several boots: when each boot its own lines date began (its RTC line, a dated banner, its
    # syslog-dated reports), each holding for that boot's lines only (BootTime.holds_for), in log order.  Carried in
    # a findings file so that ``report --from`` puts each boot on its own clock as the run on the log itself does.
    boot_times: tuple[BootTime, ...] = ()

    def boot_of(self, line: int) -> int:
        """The first line of the boot ``line`` is in (0: the boot the log starts in, whose start it lacks)."""
        at = bisect_right(self.boot_lines, line)
        return self.boot_lines[at - 1] if at else 0

    def next_boot(self, line: int) -> int | None:
        """The first line of the boot after the one ``line`` is in (None: that boot runs to the log's end)."""
        at = bisect_right(self.boot_lines, line)
        return self.boot_lines[at] if at < len(self.boot_lines) else None


@dataclass(frozen=True)
class TimeWindow:
    """The span of time the inputs cover; ``left_out``: the inputs on a tracer's own clock it does not place (a trace
    or a profile beside a log or a store: their clock cannot be converted to the others')."""

    start: Timestamp
    end: Timestamp
    left_out: tuple[str, ...] = ()

    def __str__(self) -> str:
        # "start – end" alone read as the incident's whole span where a trace and a profile lay outside it (the
        # healthy-machine review of 2026-12-07, 13): what it leaves out is said with it.
        span = f"{self.start} – {self.end}"
        if not self.left_out:
            return span
        return f"{span} (not placed on it: {', '.join(self.left_out)}: a tracer's own clock)"


@dataclass(frozen=True)
class BootScope:
    """The lines of a log a boot time holds for: those of the boot it was read in, from line ``first`` (0: the log's
    start) to before line ``end`` (None: the log's end).  Another boot of the same log began at another time."""

    source: str
    first: int
    end: int | None

    def covers(self, source: str, line: int) -> bool:
        """Whether line ``line`` of ``source`` is of this boot (a line of another input is not this scope's)."""
        return source != self.source or (self.first <= line and (self.end is None or line < self.end))


@dataclass(frozen=True)
class BootTime:
    """When the kernel booted, on the wall clock: converts monotonic (since-boot) times to wall times."""

    wall: float  # seconds since the Unix epoch (UTC)
    uncertainty: float  # seconds, either way
    basis: str  # how it was determined, e.g. "vmcore CRASHTIME minus the last printk time"
    # Read in one boot of a log of several (its RTC line, its dated banner): the times of that boot's lines only are
    # converted with it (None: it holds for every time since boot of the inputs).
    holds_for: BootScope | None = None

    def to_wall(self, ts: Timestamp) -> float:
        """The wall-clock time of a wall or monotonic timestamp (a trace clock has none)."""
        if ts.clock is Clock.TRACE:
            raise ValueError("a trace clock cannot be converted to wall-clock time")
        return ts.seconds if ts.clock is Clock.WALL else self.wall + ts.seconds


_NO_BOOT_TIME = NotAvailable("no input records when the kernel booted")


def _finding_order(f: Finding) -> tuple[int, float, float, str]:
    """The key of :meth:`Incident.sorted_findings`."""
    cause = f.log_cause.confidence if f.log_cause is not None else 0.0
    return (-f.severity.rank, -f.confidence, -cause, f.title)


@dataclass(frozen=True)
class Incident:
    """Everything known about one kernel incident: where, when, what was read, findings."""

    host: str | NotAvailable
    kernel_release: str | NotAvailable
    window: TimeWindow | NotAvailable
    sources: tuple[SourceRecord, ...]
    findings: tuple[Finding, ...]
    tool_version: str = field(default="unknown")
    boot_time: BootTime | NotAvailable = _NO_BOOT_TIME
    examined: tuple[Examined, ...] = ()  # what each analysis looked at (said with "no problem found")

    def sorted_findings(self) -> tuple[Finding, ...]:
        """Findings, worst first, then by confidence, then by the confidence of the cause each reads from its log
        report (one hung task that holds the lock the others of its pass wait for before them: all critical at
        their panic), then by title."""
        return tuple(sorted(self.findings, key=_finding_order))

    def problems(self) -> tuple[Finding, ...]:
        """The findings at :data:`PROBLEM` or above, worst first: below it a finding is information."""
        return tuple(f for f in self.sorted_findings() if f.severity >= PROBLEM)

    def worst_severity(self) -> Severity | None:
        """The highest severity among the findings, None when there are none."""
        return max((f.severity for f in self.findings), default=None)

    @classmethod
    def merge(cls, incidents: list[Self], tool_version: str) -> Self:
        """Merge incidents into one: findings deduplicated by id with all their evidence."""
        by_id: dict[str, Finding] = {}
        for incident in incidents:
            for finding in incident.findings:
                known = by_id.get(finding.id)
                by_id[finding.id] = finding if known is None else known.merged_with(finding)
        boot = merge_boot_times([i.boot_time for i in incidents])
        return cls(
            host=_merge_label([i.host for i in incidents], "host"),
            kernel_release=_merge_label([i.kernel_release for i in incidents], "kernel release"),
            window=_merge_windows([i.window for i in incidents], boot, [i.sources for i in incidents]),
            sources=_unique(tuple(s for i in incidents for s in i.sources)),
            findings=tuple(by_id.values()),
            tool_version=tool_version,
            boot_time=boot,
            examined=_unique(tuple(e for i in incidents for e in i.examined)),
        )


def _unique(items: tuple[_T, ...]) -> tuple[_T, ...]:
    """Items in first-seen order without repeats."""
    return tuple(dict.fromkeys(items))


def _merge_label(values: list[str | NotAvailable], what: str) -> str | NotAvailable:
    known = list(dict.fromkeys(v for v in values if isinstance(v, str)))
    if len(known) == 1:
        return known[0]
    if not known:
        reasons = sorted({v.reason for v in values if isinstance(v, NotAvailable)})
        return NotAvailable(reasons[0] if len(reasons) == 1 else f"no input names the {what}")
    return NotAvailable(f"inputs disagree on the {what}: {', '.join(known)}")


def _merge_windows(
    windows: list[TimeWindow | NotAvailable],
    boot: BootTime | NotAvailable,
    sources: list[tuple[SourceRecord, ...]] | None = None,
) -> TimeWindow | NotAvailable:
    """The span of ``windows`` on one clock; ``sources``, each window's incident's inputs: named in ``left_out`` when
    that window is on a tracer's clock and left out."""
    known = [w for w in windows if isinstance(w, TimeWindow)]
    if not known:
        # An input's own why is kept (its printk time goes back: reports on two boots' clocks; syslog times without a
        # year): "no input carries timestamps" was said of a kern.log of two boots, every line of it stamped.
        reasons = list(dict.fromkeys(w.reason for w in windows if isinstance(w, NotAvailable)))
        return NotAvailable("; ".join(reasons) if reasons else "no input carries timestamps")
    # A tracer's clock cannot be converted: it only spans the window when nothing else does.
    placed = [w for w in known if w.start.clock != Clock.TRACE]
    left_out: list[str] = [name for w in known for name in w.left_out]
    if placed and sources is not None:
        left_out += [
            s.path.rsplit("/", 1)[-1] or s.path
            for w, given in zip(windows, sources, strict=True)
            if isinstance(w, TimeWindow) and w.start.clock == Clock.TRACE
            for s in given
        ]
    known = placed or known
    clocks = {w.start.clock for w in known}
    if len(clocks) > 1:
        if not isinstance(boot, BootTime):
            return NotAvailable("inputs use different clocks (monotonic and wall) and the boot time is unknown")
        known = [
            TimeWindow(Timestamp(boot.to_wall(w.start), Clock.WALL), Timestamp(boot.to_wall(w.end), Clock.WALL))
            for w in known
        ]
    start = min(known, key=lambda w: w.start.seconds).start
    end = max(known, key=lambda w: w.end.seconds).end
    return TimeWindow(start, end, tuple(dict.fromkeys(left_out)))


def merge_boot_times(times: list[BootTime | NotAvailable]) -> BootTime | NotAvailable:
    """The most precise boot time, unless the inputs come from different boots."""
    known = sorted((t for t in times if isinstance(t, BootTime)), key=lambda t: t.uncertainty)
    if not known:
        # The inputs' one reason says why (a log's RTC line of another boot than its report's), the generic line not.
        reasons = {t.reason for t in times if isinstance(t, NotAvailable)}
        return NotAvailable(reasons.pop()) if len(reasons) == 1 else _NO_BOOT_TIME
    best = known[0]
    for other in known[1:]:
        if abs(other.wall - best.wall) > best.uncertainty + other.uncertainty + 1.0:
            return NotAvailable(
                f"inputs come from different boots ({best.basis}: {best.wall:.0f}; {other.basis}: {other.wall:.0f})"
            )
    return best
