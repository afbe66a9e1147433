"""From reports to findings: grouping repeats, evidence that cites the log, and the JSON form.

Identical reports (same signature: title and guilty frame) repeated in a log
are grouped into one :class:`ReportGroup` with a count and first/last time.
Each group becomes one :class:`~forensics.model.Finding` whose evidence is the
header line of the first occurrence (with its frame line when there is one),
the headers of an even sample of at most :data:`SAMPLE_REPORTS` repeats and
the header of the last occurrence, cited verbatim by line number.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Final, TypeVar

from detectors.dmesg.cpublocks import is_irq_state, other_cpu_lines
from detectors.dmesg.extract import BLOCKED_TASK_RULES, signature
from detectors.dmesg.frames import after_marker, parse_frame
from detectors.dmesg.interleaved import cr2_mixed, mixed_dumps
from detectors.dmesg.lines import parse_line
from detectors.dmesg.repeat import origin
from detectors.dmesg.taint import died_before, oops_before, oopses_of
from forensics import regexcache as rc
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
    LogCause,
    NotAvailable,
    Severity,
    Timestamp,
    finding_id,
)
from forensics.types.causes import Cause, memory_user
from forensics.types.deliberate import (
    FORCED,
    LOG_NEXT_STEPS,
    REQUESTED,
    REQUESTED_FACT,
    WHO,
    WHO_FACT,
    requested_by_sysrq,
)
from forensics.types.dmesg import (
    AFTER_FACT,
    BOOT_FACT,
    LAST_OF,
    ONE_OF,
    PANIC_UNSEEN_FACT,
    REPORT_EVIDENCE,
    SAMPLE_REPORTS,
    KernelReport,
    ReportGroup,
    ReportKind,
    StackKind,
    group_judgement,
    oom_baseline,
    went_down_baseline,
)

if TYPE_CHECKING:
    # The reading of report bodies (detectors/dmesg/why.py, its ~80 patterns, capstone's decoder) is imported
    # when a log has a report to read, not by every run.
    from forensics.types.dmesg import Aftermath, ReportWhy

DETECTOR = "dmesg"
_EXCERPT_MAX = 400

_NEXT_STEPS: dict[ReportKind, tuple[str, ...]] = {
    ReportKind.HANG: ("Look at the locks held and the task it waits for (echo w > /proc/sysrq-trigger).",),
    # Not only a loop: a grace-period kthread starved of CPU stalls RCU too (Documentation/RCU/stallwarn.rst).
    ReportKind.RCU_STALL: (
        "Read the stalled CPU's stack for a loop without cond_resched() or a long IRQ-off section; where the log says "
        "the grace-period kthread was starved, look at what ran on its CPU instead.",
    ),
    ReportKind.OOM: ("Check which task grew (Tasks state table) and the memory limits (cgroup, overcommit).",),
    # The page allocator's; a vmalloc failure's is _ALLOC_STEPS's (no order: it asks for a size, page by page).
    ReportKind.ALLOC_FAILURE: (
        "Check memory fragmentation (/proc/buddyinfo: free blocks of the failed order and above) and the caller's GFP "
        "flags and order (kvmalloc() for a large buffer).",
    ),
    ReportKind.LOCKDEP: ("Read both lock chains in the report; fix the lock order or the IRQ safety of the lock.",),
    ReportKind.HARDWARE: ("Run the platform's hardware diagnostics; decode the MCE banks with rasdaemon or mcelog.",),
    # The line names no task: the real-time tasks are found by their policy, their runs by a scheduler trace.
    ReportKind.RT_THROTTLING: (
        "Find the real-time task that ran its CPU's whole budget (the line does not name it): `ps -eLo "
        "pid,tid,cls,rtprio,pcpu,comm | awk '$3 ~ /FF|RR/'` lists the SCHED_FIFO/RR threads; a scheduler trace "
        "(`kforensic trace`, sched_switch) names its runs and who waited. A real-time task must sleep: RT throttling "
        "(/proc/sys/kernel/sched_rt_runtime_us) only keeps 5% of each second for the others.",
    ),
}
#: A network stack's drop is a limit reached, not a bug: the next step reads the limit and its use now, by the
#: drop's title (detectors/dmesg/events.py ONE_LINE_EVENTS).
_NET_DROP_STEPS: dict[str, tuple[str, ...]] = {
    "nf_conntrack: table full, dropping packet": (
        "Compare the connection tracking table's use with its limit: `sysctl net.netfilter.nf_conntrack_count "
        "net.netfilter.nf_conntrack_max`, and `conntrack -S` for its drops and insert failures; raise "
        "nf_conntrack_max (and nf_conntrack_buckets) or shorten the timeouts if the table stays full.",
    ),
    "TCP: out of memory -- consider tuning tcp_mem": (
        "Compare TCP's socket memory with its limit: `sysctl net.ipv4.tcp_mem` (pages) against the mem figure of "
        "`cat /proc/net/sockstat`, and `ss -tm` for the sockets that hold it; raise tcp_mem or find the sockets "
        "whose buffers are not read.",
    ),
}
#: An allocation failure's steps by its title's start, where they differ from the page allocator's (_NEXT_STEPS): a
#: vmalloc asks for a size, mapped from order-0 pages, so no order or fragmentation applies (review of 09900f47: its
#: step said "GFP flags and order" for an 8 GiB vmalloc).
_ALLOC_STEPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "vmalloc:",
        (
            "Check the size the caller passed to vmalloc: where it comes from and the bounds check that should limit "
            "it, against the machine's RAM (the Mem-Info dump's pages RAM); then the vmalloc space in use "
            "(/proc/vmallocinfo) and free memory (/proc/meminfo).",
        ),
    ),
)
_DEFAULT_STEPS = (
    "Search the title on the kernel mailing lists and syzbot; check the guilty function's recent changes.",
)
_HANG_DUMP_STEP = (
    "The machine went down after it, so no live command (sysrq-w) can ask it: read its dump, in crash "
    "foreach UN bt (every blocked task's stack), bt with the reported task's pid, ps -m (how long each has not run)."
)
_OOM_DUMP_STEP = (
    "The machine went down on it (the kernel panicked rather than kill a task): read its dump, in crash kmem -i "
    "(where the memory went) and ps -G (each task's resident memory)."
)
#: The next steps of a report the kernel panicked on, where the kernel chose the panic (hung_task_panic,
#: panic_on_oom): the machine is down and the function that called panic() is the kernel's own detector, not the
#: bug, so neither a live command nor "the guilty function's recent changes" fits; what the detector saw is in the
#: dump.  By the report's kind, then (a panic's own report) by the words of its title; first match wins.
_PANICKED_STEPS: dict[ReportKind, tuple[str, ...]] = {
    ReportKind.HANG: (_HANG_DUMP_STEP,),
    ReportKind.OOM: (_OOM_DUMP_STEP,),
}
_PANIC_TITLE_STEPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("hung_task: blocked tasks", (_HANG_DUMP_STEP,)),
    ("Out of memory", (_OOM_DUMP_STEP,)),
    ("System is deadlocked on memory", (_OOM_DUMP_STEP,)),
)


#: The same for a report the machine went down after without panicking on it (a dump's log: a later report took
#: the dump): only a live command's step is replaced.
_DOWN_STEPS: dict[ReportKind, tuple[str, ...]] = {ReportKind.HANG: (_HANG_DUMP_STEP,)}


def _kind_steps(report: KernelReport) -> tuple[str, ...]:
    """The steps of a report of its kind (:data:`_NEXT_STEPS`), an allocation failure's by its title's start
    (:data:`_ALLOC_STEPS`: the page allocator's or vmalloc's)."""
    steps = _NEXT_STEPS.get(report.kind, _DEFAULT_STEPS)
    if report.kind is _RK_ALLOC_FAILURE:
        return next((alloc for words, alloc in _ALLOC_STEPS if report.title.startswith(words)), steps)
    return steps


def _panicked_steps(report: KernelReport, down: bool) -> tuple[str, ...] | None:
    """The steps of a report whose panic the kernel chose (:data:`_PANICKED_STEPS`), or that the machine went down
    after (``down``, :data:`_DOWN_STEPS`); None for any other."""
    if not report.panicked:
        return _DOWN_STEPS.get(report.kind) if down else None
    if report.kind in _PANICKED_STEPS:
        return _PANICKED_STEPS[report.kind]
    if report.kind is ReportKind.PANIC:
        return next((steps for words, steps in _PANIC_TITLE_STEPS if words in report.title), None)
    return None


#: A module the kernel lists with taint flags: "Modules linked in: i915 drm_buddy nvidia(POE)" (print_modules(),
#: kernel/module/main.c: the flags module_flags() prints).
_MODULE_FLAGS = rc.compile(r"(?<!\S)([\w-]+)\(([A-Z]+)\)")
#: The flags that put a module outside upstream's reach: P proprietary, O out-of-tree (E, unsigned, alone does not).
_VENDOR_FLAGS: Final = {"P": "proprietary", "O": "out-of-tree"}


def guilty_module(report: KernelReport) -> tuple[str, str, int | None] | None:
    """The module of the report's guilty frame where it is proprietary or out-of-tree: (name, its flags, the
    number of the "Modules linked in:" line that lists them); the flags "" and no line where the report prints no
    such line but its kernel is tainted P or O (the module may be the one that tainted it, not known which).  None
    otherwise: no module frame, or none of P/O."""
    module = next((f.module for f in report.trace if f.function == report.frame and f.module), None)
    if module is None:
        return None
    for number, text in (*report.preamble, *report.lines):
        if "Modules linked in:" not in text:
            continue
        for m in _MODULE_FLAGS.finditer(text.split("Modules linked in:", 1)[1]):
            if m.group(1) == module:
                return (module, m.group(2), number) if any(c in _VENDOR_FLAGS for c in m.group(2)) else None
        return None  # listed without flags: an in-tree module
    taint = report.taint if isinstance(report.taint, str) else ""
    return (module, "", None) if any(c in _VENDOR_FLAGS for c in taint) else None


def _vendor_words(flags: str) -> str:
    return " and ".join(_VENDOR_FLAGS[c] for c in flags if c in _VENDOR_FLAGS)


def _vendor_step(module: str, flags: str, line: int | None, taint: str) -> str:
    if line is None:
        return (f"The guilty frame is in module {module} and the kernel is tainted {_vendor_words(taint)} (taint "
                f"{taint}); the report has no Modules linked in line to say whether {module} is that module: if it "
                f"is, report it to {module}'s vendor (upstream cannot read or fix its code); if not, search the "
                "title on the kernel mailing lists and syzbot.")  # fmt: skip
    return (f"Report it to the vendor of {module}: the guilty frame is in {module}, a {_vendor_words(flags)} module "
            f'("{module}({flags})" in Modules linked in, line {line}); upstream cannot read or fix its code, and '
            "searching syzbot or the kernel lists for it finds nothing.")  # fmt: skip


class _Acc:
    """One signature's occurrences while reading: first, last and a sample thinned as the count grows."""

    __slots__ = ("count", "first", "last", "panicked_by", "sample", "stride")

    def __init__(self, report: KernelReport) -> None:
        self.first = self.last = report
        self.count = 1
        self.panicked_by: KernelReport | None = None
        self.sample: list[tuple[int, KernelReport]] = []  # (occurrence index, report)
        self.stride = 1

    def add(self, report: KernelReport) -> None:
        # The previous last becomes a sample candidate: occurrence ``count - 1`` (0-based).
        index = self.count - 1
        if index and index % self.stride == 0:
            self.sample.append((index, self.last))
            if len(self.sample) > SAMPLE_REPORTS:
                # Keep every other one and take half as many from now on: the sample stays even.
                self.stride *= 2
                self.sample = [(i, r) for i, r in self.sample if i % self.stride == 0]
        self.last = report
        self.count += 1

    def group(self) -> ReportGroup:
        return ReportGroup(self.first, self.last, self.count, tuple(r for _, r in self.sample), self.panicked_by)


#: A printk time lower than the report's before by more than this is a step back of the log's clock, not two CPUs'
#: lines printed out of order (printk stamps each line when it is stored: lines of CPUs printing at once may be a few
#: milliseconds out of order; collectors/log_boots.py's BACKWARDS_SECONDS).
TIME_STEP_SECONDS: Final = 1.0


class ReportGrouper:
    """Groups reports by signature as they come (memory bounded per signature), in order of first appearance.

    It also keeps what an incident needs of every report, not only of the kept
    ones: the kernel releases named, the first and last report times and the
    boot time estimates (8 bytes each, only from lines with a dated wall time).
    """

    def __init__(self) -> None:
        self._groups: dict[str, _Acc] = {}
        self.releases: set[str] = set()
        self.first_time: float | None = None
        self.last_time: float | None = None
        self.boot_times = array("d")
        self.boot_time_lines = array("q")  # the first line of the report of each of boot_times (its boot's)
        self.banners: dict[int, str] = {}  # the log's boot banners, line -> release (the scanner's)
        self.boot_clocks: list[tuple[int, float, str]] = []  # the boot's wall-clock readings (the scanner's)
        self.boot_lines: tuple[int, ...] = ()  # the first line of each boot of the log (the scanner's)
        self.kaslr: list[tuple[int, int, str]] = []  # what the log shows of KASLR, by boot (the scanner's)
        self.command_lines: list[tuple[int, str]] = []  # the command lines saying how a boot ends (the scanner's)
        self.boot_tails: list[tuple[int, str]] = []  # the last line with text of each boot (the scanner's)
        # Rate limiting's lines ("N callbacks suppressed"): the first few (line, words) and their number (the
        # scanner's): the log's counts are lower bounds.
        self.suppressed: list[tuple[int, str]] = []
        self.suppressed_lines = 0
        # The first and last wall-clock times of reports without a printk time (a log stamped with dated
        # wall-clock prefixes only), and where, in log order, that clock went back between two reports (an NTP
        # step, a clock set by hand, lines of another host or boot): (line before, line after, seconds back).
        self.first_wall: float | None = None
        self.last_wall: float | None = None
        self.wall_steps: list[tuple[int, int, float]] = []
        self._previous_wall: tuple[int, float] | None = None
        # Where, in log order, the printk time goes back between two reports (a new boot, with or without its
        # banner, a kexec, a log wrapped or merged from several): (line before, line after, time before, after).
        # A duration or an order across one is no fact.
        # A new boot between two reports (report_boot_line) is one too, where the time does not go back.
        self.time_steps: list[tuple[int, int, float, float]] = []
        self._previous_time: tuple[int, float, int] | None = None
        # The groups of the khungtaskd pass being read (hung_passes' definition, as the reports come) and the time
        # of its last report: a hung-task panic printed in the pass's last report is caused by each of its tasks.
        self._pass: list[_Acc] = []
        self._pass_time: float | NotAvailable | None = None

    def add(self, report: KernelReport) -> None:
        """Count one more report."""
        if isinstance(report.kernel_release, str):
            self.releases.add(report.kernel_release)
        t = report.start_time
        if isinstance(t, float):
            self.first_time = t if self.first_time is None else min(self.first_time, t)
            self.last_time = t if self.last_time is None else max(self.last_time, t)
            previous = self._previous_time
            boot = report_boot_line(report)
            if previous is not None and (t < previous[1] - TIME_STEP_SECONDS or boot != previous[2]):
                self.time_steps.append((previous[0], report.start_line, previous[1], t))
            self._previous_time = (report.start_line, t, boot)
        if report.boot_time is not None:
            self.boot_times.append(report.boot_time)
            self.boot_time_lines.append(report.start_line)
        if (wall := report.start_wall) is not None:
            self._add_wall(report.start_line, wall)
        acc = self._groups.get(report.signature)
        if acc is None:
            acc = self._groups[report.signature] = _Acc(report)
        else:
            acc.add(report)
        self._khungtaskd_pass(report, acc)

    def _khungtaskd_pass(self, report: KernelReport, acc: _Acc) -> None:
        """Follow the khungtaskd pass (:func:`hung_passes`): at its "hung_task: blocked tasks" panic, every group of
        the pass is the panic's (hung_task_panic panics for any task it found, after printing them all)."""
        if report.rule not in _HUNG_RULES:
            self._pass = []
            return
        t, last = report.start_time, self._pass_time
        if self._pass and isinstance(t, float) and isinstance(last, float) and t - last > _HUNG_PASS_SECONDS:
            self._pass = []
        self._pass.append(acc)
        self._pass_time = t
        if report.panicked and any(_HUNG_PANIC in text for _, text in report.lines):
            for member in self._pass:
                if member.panicked_by is None and not member.first.panicked:
                    member.panicked_by = report
            self._pass = []

    def _add_wall(self, line: int, wall: float) -> None:
        self.first_wall = wall if self.first_wall is None else min(self.first_wall, wall)
        self.last_wall = wall if self.last_wall is None else max(self.last_wall, wall)
        previous = self._previous_wall
        # Wall-clock prefixes have whole seconds at worst (rsyslog's early lines all take its start time): a step
        # back of a second or less is their rounding, not the clock's.
        if previous is not None and wall < previous[1] - 1.0:
            self.wall_steps.append((previous[0], line, previous[1] - wall))
        self._previous_wall = (line, wall)

    def groups(self) -> list[ReportGroup]:
        """The groups so far."""
        return [acc.group() for acc in self._groups.values()]


def group_reports(reports: Iterable[KernelReport]) -> list[ReportGroup]:
    """Group reports by signature, in order of first appearance."""
    grouper = ReportGrouper()
    for report in reports:
        grouper.add(report)
    return grouper.groups()


# ---------------------------------------------------------------- the findings' records, made without __init__
#
# Locator, Evidence, Fact and Timestamp are frozen dataclasses: their __init__ is a Python function that sets each
# field through object.__setattr__ (~0.4-1 us a record, ~11,000 records of the corpus x4's findings, ~7 ms).  Made
# here as a frozen dataclass's __init__ leaves them, their instance dict holding every field in the class's order
# (a test checks these against the classes' fields and compares them with the constructors' records, JSON too),
# with the checks of their __post_init__: a value they refuse goes through the constructor, which raises.

_R = TypeVar("_R")
_new_object: Final = object.__new__
#: The enum members the findings' records hold or compare with, bound once (a member read through its class goes
#: through EnumType's ``__getattr__`` hook under Python 3.11: ~700 instructions from compiled code; see why.py).
_CLOCK_MONOTONIC: Final = Clock.MONOTONIC
_CLOCK_WALL: Final = Clock.WALL
_ID_DMESG: Final = IdFamily.DMESG
_LK_LINE: Final = LocatorKind.LINE
_RK_REBOOT: Final = ReportKind.REBOOT
_RK_NET_DROP: Final = ReportKind.NET_DROP
_RK_ALLOC_FAILURE: Final = ReportKind.ALLOC_FAILURE
_SEV_CRITICAL: Final = Severity.CRITICAL
_SK_CALL_TRACE: Final = StackKind.CALL_TRACE


def _record(cls: type[_R], fields: dict[str, object]) -> _R:
    """A record of the frozen dataclass ``cls`` whose fields are ``fields`` (every one, in order)."""
    got = _new_object(cls)
    got.__dict__.update(fields)
    return got


def _line_at(start: int, end: int | None = None, name: str | None = None) -> Locator:
    """``Locator(LocatorKind.LINE, start, end, name)``."""
    if start < 0 or (end is not None and end < start):
        return Locator(LocatorKind.LINE, start, end, name)  # (its check raises)
    return _record(Locator, {"kind": _LK_LINE, "start": start, "end": end, "name": name, "event": None})


def _cited(
    source: str, locator: Locator, excerpt: str, timestamp: Timestamp | None = None, cpu: int | None = None
) -> Evidence:
    """``Evidence(source, locator, excerpt, timestamp, cpu)``."""
    if not excerpt:
        return Evidence(source, locator, excerpt, timestamp, cpu)  # (its check raises)
    return _record(Evidence, {"source": source, "locator": locator, "excerpt": excerpt, "timestamp": timestamp,
                              "cpu": cpu})  # fmt: skip


def _fact(name: str, value: str) -> Fact:
    """``Fact(name, value)``."""
    return _record(Fact, {"name": name, "value": value, "lower_bound": False})


def _excerpt(text: str) -> str:
    # A prefix of the line is still found verbatim in it; very long lines are cut.
    return text[:_EXCERPT_MAX]


def _when(report: KernelReport) -> Timestamp | None:
    t = report.start_time
    if isinstance(t, NotAvailable):
        # A log with dated wall-clock prefixes only: the time is on the wall clock, not "none".
        wall = report.start_wall
        if wall is None:
            return None
        return _record(Timestamp, {"seconds": wall, "clock": _CLOCK_WALL, "zone_unknown": report.wall_zone_unknown})
    return _record(Timestamp, {"seconds": t, "clock": _CLOCK_MONOTONIC, "zone_unknown": False})


#: The reports of a stuck CPU: its frames are its own dump's (detectors.dmesg.cpublocks).
_LOCKUPS: Final = frozenset((ReportKind.SOFT_LOCKUP, ReportKind.LOCKUP))


#: The names of the evidence that cites a report's guilty frame: its line, or a "?" line where it has no other.
_GUILTY_FRAME: Final = "guilty frame"
_GUILTY_UNCONFIRMED: Final = "guilty frame ('?': a stack word the unwinder did not confirm)"


def _evidence(source: str, report: KernelReport) -> list[Evidence]:
    cpu = report.cpu if isinstance(report.cpu, int) else None
    items = [
        _cited(
            source,
            _line_at(report.start_line, report.end_line, REPORT_EVIDENCE),
            _excerpt(report.header),
            _when(report),
            cpu,
        )
    ]
    frame = report.frame
    if isinstance(frame, str):
        # The two texts made once, not for each line looked at (the guilty frame's line may be dozens down).
        # The frame's name first: a line without it holds neither (one substring test a line, not two).
        at_offset, at_suffix = f"{frame}+0x", f" {frame}."
        # A lockup's stuck CPU's frame is cited from its own lines, not another CPU's NMI backtrace in the same
        # report; never from lockdep's irq-state lines (where interrupts were last switched, not where it was).
        foreign = other_cpu_lines(report.lines, cpu) if cpu is not None and report.kind in _LOCKUPS else frozenset()
        # Not a "? f+0x../0x.." line where a reliable one of the frame follows: "?" marks a word the unwinder
        # found on the stack and did not confirm as a return address (a stale one, its offset not the frame's;
        # syzkaller's log 476 cited "? audit_data_to_entry+0x225c" two lines above the reliable frame), the line a
        # kernel developer skips.  The title's frame is a reliable one: cited by its own line, a "?" line only
        # where the report has no other (its name then says so).
        unconfirmed: tuple[int, str] | None = None
        for number, text in report.lines:
            if (
                number != report.start_line
                and frame in text
                and _names_frame(text, at_offset, at_suffix)
                and number not in foreign
                and not is_irq_state(text)
            ):
                if _unreliable_frame(parse_line(number, text).body):
                    unconfirmed = unconfirmed or (number, text)
                    continue
                items.append(_cited(source, _line_at(number, None, _GUILTY_FRAME), _excerpt(text), None, cpu))
                break
        else:
            if unconfirmed is not None:
                at_line = _line_at(unconfirmed[0], None, _GUILTY_UNCONFIRMED)
                items.append(_cited(source, at_line, _excerpt(unconfirmed[1]), None, cpu))
            elif report.frame_past is not None:
                # Read past its own lines (after another report's header): that line, the CPU it does not name.
                at, body = report.frame_past
                items.append(_cited(source, _line_at(report.start_line + at, None, _GUILTY_FRAME), _excerpt(body)))
    return items


def _unreliable_frame(body: str) -> bool:
    """Whether a line (message body) is a frame the unwinder marked unreliable (``? f+0x1/0x2``, powerpc's
    ``(unreliable)``), also after a context marker (``<EOI> [ 420.505397]  [<...>] ? f+0x1/0x2``, x86 before
    v4.10); not a RIP line, nor any other line that names a function."""
    found = parse_frame(after_marker(body) or body)
    return found is not None and not found.reliable


def line_evidence(source: str, number: int, text: str, name: str, report: KernelReport) -> Evidence:
    """One line of ``report``'s (or one read beside it) cited by ``name``, with the report's CPU."""
    return _cited(
        source, _line_at(number, None, name), _excerpt(text), None, report.cpu if isinstance(report.cpu, int) else None
    )


def _names_frame(text: str, at_offset: str, at_suffix: str) -> bool:
    """Whether a line names the frame as ``<frame>+0x`` (not inside a longer name: syzkaller's log 1000 cited
    ``do_read_cache_folio+0x240/0x5b8`` as the guilty frame read_cache_folio, one line above its own) or as
    `` <frame>.``."""
    if at_suffix in text:
        return True
    at = text.find(at_offset)
    while at >= 0:
        if at == 0 or not (text[at - 1].isalnum() or text[at - 1] == "_"):
            return True
        at = text.find(at_offset, at + 1)
    return False


def _occurrence(source: str, report: KernelReport, name: str) -> Evidence:
    """One repeat of a report: its header line, citing the repeat's lines as the first report's evidence does
    (the CPU it names stands in them: a hung task's ``CPU: 1`` is khungtaskd's, dozens of lines on)."""
    return _cited(
        source,
        _line_at(report.start_line, report.end_line, name),
        _excerpt(report.header),
        _when(report),
        report.cpu if isinstance(report.cpu, int) else None,
    )


_BANNER = "boot banner"  # the name of the evidence citing the banner of a report's boot


def release_lines(source: str, groups: Iterable[ReportGroup]) -> tuple[Evidence, ...]:
    """The line of each group's first report that prints its kernel release (``CPU: 1 ... 6.12.118 #1``), cited
    verbatim: what a contradiction of kernels cites for the log (:attr:`Examined.named_by`), where the finding's
    own first line (``kernel BUG at ...``) does not show the release."""
    out = []
    for group in groups:
        report = group.first
        release = report.kernel_release
        if not isinstance(release, str):
            continue  # its boot's banner, when it has one, is cited by its finding and prints the release
        number, text = next(((n, t) for n, t in report.lines if release in t), (0, ""))
        if text:
            cpu = report.cpu if isinstance(report.cpu, int) else None
            out.append(_cited(source, _line_at(number, None, "kernel"), _excerpt(text), None, cpu))
    return tuple(out)


#: The facts a report reads from its ``CPU: N PID: M Comm: ... Tainted: ...`` line.
_DUMP_FIELDS: Final = frozenset({"cpu", "pid", "comm", "taint"})
_PANIC: Final = "Kernel panic - not syncing:"
#: The name of the evidence citing the panic a report ended in (its consequence: the machine went down).
PANIC_EVIDENCE: Final = "then the kernel panicked"


def _panic_line(report: KernelReport) -> tuple[int, str] | None:
    """The report's own ``Kernel panic - not syncing`` line, as (number, text): the first (a panic while panicking
    prints none, a second report's is its own)."""
    return next(((n, t) for n, t in report.lines if _PANIC in t), None)


def _after_oops(group: ReportGroup) -> list[tuple[KernelReport, KernelReport]]:
    """The group's occurrences after its first tainted ``D`` by an oops of the group above them, each with it."""
    if group.count < 2:
        return []
    kept = group.kept
    if not any(died_before(r) for r in kept[1:]):
        # (most groups: no occurrence tainted D, so no oops is looked for among their lines; reading every kept
        # report's lines for a die counter, a memo repeat's through the report it repeats each time, was 1.4% of
        # the corpus x4's run)
        return []
    oopses = {id(r) for r in oopses_of(kept)}  # (read once: oops_before looks among the ones above each)
    # The oopses above each occurrence kept as the walk goes: the list made again for each was O(K^2) in a group's
    # kept reports (1.6% of the corpus x4's run, issue 28).
    above: list[KernelReport] = []
    pairs: list[tuple[KernelReport, KernelReport]] = []
    for r in kept:
        if above and (o := oops_before(r, above)) is not None:
            pairs.append((r, o))
        if id(r) in oopses:
            above.append(r)
    return pairs


def group_finding(source: str, group: ReportGroup, down: bool = False) -> Finding:
    """The finding of one report group, with evidence from the log; ``down``: the machine went down after it (the
    log is a dump's), so no step asks the live machine."""
    return explained_finding(source, group, None, down=down)


def report_boot(report: KernelReport) -> str:
    """Which boot of its log ``report`` is of: the one whose banner is the last above it, or whose printk time
    restarts at 0.000000 without a banner (the scanner's ``boot_banner``, ``bannerless_boot``), else the boot the log
    starts in."""
    if report.boot_banner is not None:
        line, _, release = report.boot_banner
        return f"the boot from line {line} (its banner: Linux version {release})"
    if report.bannerless_boot is not None:
        return f"the boot from line {report.bannerless_boot} (printk time back at 0, no banner)"
    return "the boot the log starts in (its start is not in the log)"


def explained_finding(
    source: str,
    group: ReportGroup,
    why: ReportWhy | None,
    cause: Cause | None = None,
    suppressed: bool = False,
    boot: str | None = None,
    ended: Aftermath | None = None,
    oom_panic: tuple[int, str] | None = None,
    log_lines: int | None = None,
    down: bool = False,
) -> Finding:
    """:func:`group_finding` with the reading of its first report: facts, the lines they come from, the cause.

    One :class:`Finding` made with all of them (not the group's and then a copy with the reading's: a frozen
    dataclass's ``replace``, ~4 us of the ~25 of a finding).  ``ended``: what the log shows followed a critical
    report the kernel printed no panic line for (detectors/dmesg/aftermath.py): a fact, and the baseline when the
    machine went down.  ``oom_panic``: the panic line right after an OOM report (detectors/dmesg/aftermath.py
    oom_panic): no task was killed, panic_on_oom made it a panic.
    """
    first, last = group.first, group.last
    severity, baseline = group_judgement(group)
    evidence = _evidence(source, first)
    if group.count > 1:
        evidence += [_occurrence(source, r, f"{ONE_OF}{group.count}") for r in group.sample]
        evidence.append(_occurrence(source, last, f"{LAST_OF}{group.count}"))
    after = _after_oops(group)
    # ``suppressed``: the log says rate limiting dropped messages ("N callbacks suppressed"): a lower bound.
    count = f"at least {group.count}" if suppressed else str(group.count)
    if after:
        count += f" ({len(after)} after an oops above, taint D: not independent)"
    facts = [_fact("type", first.kind.value), _fact("occurrences", count)]
    if boot is not None:  # a log of several boots: which one this report is of (report_boot)
        facts.append(_fact(BOOT_FACT, boot))
    if oom_panic is not None and first.kind is ReportKind.OOM:
        baseline = oom_baseline(first, oom_panic)
    ending = ""  # what the summary says followed it (the machine went down), after its title and lines
    if ended is not None and severity is Severity.CRITICAL and not group.panicked:
        baseline, ending = _ending(source, ended, baseline, facts, evidence)
    release: str | NotAvailable = first.kernel_release
    banner = first.boot_banner
    if isinstance(release, NotAvailable) and banner is not None:
        # A report that prints no release of its own is of the kernel its boot's banner names, cited last (a
        # hypothesis cites a finding's first two).  An unexpected reboot's header is the next boot's banner: the
        # kernel that died is the one the banner above it names (its boot's, the scanner's boot_banner).
        release = banner[2]
        evidence.append(_cited(source, _line_at(banner[0], None, _BANNER), _excerpt(banner[1])))
    elif isinstance(release, NotAvailable) and first.bannerless_boot is not None:
        # Its boot's start is in the log, its banner is not: the banner above is another boot's.
        which = "the boot that died" if first.kind is _RK_REBOOT else "this boot"
        release = f"unknown (no boot banner for {which}, which starts at line {first.bannerless_boot})"
    mixed = mixed_dumps(first) or cr2_mixed(first)
    # Two CPUs' dumps in its lines (a capture without caller ids, detectors/dmesg/interleaved.py): which CPU: line
    # is its own cannot be known, nor the task and taint that line prints (of a complete report too, where its CR2
    # lines disagree: its CR2 is said so, review ue20 #5).
    unread = None if mixed is None else f"not read (its lines print two dumps, interleaved: {mixed[0]}; {mixed[1]})"
    for name, value in (
        ("guilty frame", first.frame),
        ("cpu", first.cpu),
        ("pid", first.pid),
        ("comm", first.comm),
        ("kernel", release),
        ("hardware", first.hardware),
        # ("" is the kernel's "Not tainted": said, not an empty field)
        ("taint", first.taint or 'none ("Not tainted")'),
    ):
        if unread is not None and name in _DUMP_FIELDS:
            facts.append(_fact(name, unread))
        elif not isinstance(value, NotAvailable):
            facts.append(_fact(name, str(value)))
    facts += [_fact("taint flag", t) for t in first.taint_flags if unread is None]
    facts += [_fact(k, v) for k, v in first.details]
    if first.corrupted_reason:
        facts.append(_fact("corrupted", first.corrupted_reason))
    where = f"line {first.start_line}" + (
        f", {group.count} times up to line {last.start_line}" if group.count > 1 else ""
    )
    if len(group.kept) < group.count:
        where += f"; cited: {', '.join(str(r.start_line) for r in group.kept)}"
    if after:
        # A repeat on a kernel the oops above it tainted D follows from that oops (detectors/dmesg/afteroops.py):
        # said, so that the count does not read as independent sightings.
        where += "; " + ", ".join(
            f"line {r.start_line} after the oops at line {o.start_line} (taint D)" for r, o in after
        )
    confidence = 0.5 if first.corrupted else 0.9
    logged = None
    if why is not None:
        cause = cause or why.cause
        have = {f.name for f in facts}
        facts += [f for f in why_facts(why) if f.name not in have]
        cut = len(evidence) - 1 if evidence[-1].locator.name == _BANNER else len(evidence)
        evidence[cut:cut] = why_evidence(source, first, why)  # before the boot banner, which stays last
        logged = None if cause is None else log_cause(cause, _panicked_steps(first, down) is not None)
        if logged is not None and logged.confidence > confidence:
            # The cause was read from the report's own lines: it cannot be surer than the report (a damaged one).
            facts.append(_fact(CAUSE_CAPPED, _capped(logged.confidence, confidence, first.corrupted_reason)))
            logged = LogCause(logged.cls, logged.statement, confidence, logged.next_command)
    # (a group of a khungtaskd pass whose panic another group's report printed: that panic, caused by the pass)
    by = first if first.panicked else group.panicked_by
    panic = _panic_line(by) if severity is _SEV_CRITICAL and by is not None else None
    summary = f"{first.title} ({where})"
    summary += ending
    if panic is not None:
        # The panic is this report's consequence (oops_end()'s "Fatal exception", panic_on_warn's, hung_task_panic's),
        # not a second bug: cited as what followed from it, its line and its reason.
        number, text = panic
        reason = text[text.find(_PANIC) + len(_PANIC) :].strip()
        summary += f", then the kernel panicked (line {number}: {reason})" if reason else ", then the kernel panicked"
        cut = len(evidence) - 1 if evidence[-1].locator.name == _BANNER else len(evidence)
        evidence.insert(cut, line_evidence(source, number, text, PANIC_EVIDENCE, first))
    chosen = _panicked_steps(first, down)
    steps = chosen if chosen is not None else _kind_steps(first)
    if first.kind is _RK_NET_DROP:
        steps = _NET_DROP_STEPS.get(first.title, steps)
    # (by membership, not ``steps is _DEFAULT_STEPS``: compiled by mypyc, a module-level tuple read twice need not be
    # one object, and the compiled dmesg never gave the vendor's step -- the native tier's comparison, 2026-12-07)
    elif chosen is None and first.kind not in _NEXT_STEPS and (vendor := guilty_module(first)) is not None:
        # The fault is in a proprietary or out-of-tree module (the taint's P/O): its vendor is who can fix it.
        name, flags, line = vendor
        taint = first.taint if isinstance(first.taint, str) else ""
        said = (
            f"{name}: {_vendor_words(flags)} ({name}({flags}), Modules linked in line {line})"
            if line is not None
            else f"{name}: perhaps the {_vendor_words(taint)} module of taint {taint} (no Modules linked in line)"
        )
        facts.append(_fact("guilty module", said))
        steps = (_vendor_step(name, flags, line, taint),)
    if baseline is FORCED:
        # Asked for (sysrq): who asked is the question, no bug to search for; the sysrq line says so, cited.
        summary += f" The crash was {REQUESTED}: {WHO}; not a kernel bug."
        steps = LOG_NEXT_STEPS
        have = {f.name for f in facts}
        facts += [_fact(n, v) for n, v in ((REQUESTED_FACT, REQUESTED), (WHO_FACT, WHO)) if n not in have]
        asked = [(n, text) for n, text in first.preamble if requested_by_sysrq([text])]
        evidence[1:1] = [line_evidence(source, n, text, REQUESTED_FACT, first) for n, text in asked[-1:]]
    # "WARNING in corrupted" names no culprit: reports of different sites (their signatures, extract._site) are
    # different bugs, not one bug's finding with the other's occurrences merged in (by `report`, by id).
    site = (
        (first.signature,)
        if first.title.endswith(" in corrupted") and first.signature != signature(first.title, None)
        else ()
    )
    return _finding(
        finding_id(_ID_DMESG, first.kind.value, first.title, *site),
        first.kind.finding_kind,
        first.title,
        severity,
        confidence,
        f"the report is damaged: {first.corrupted_reason}" if first.corrupted else "a complete report with its header",
        summary,
        tuple(evidence),
        steps,
        tuple(facts),
        logged,
        baseline,
    )


def _ending(
    source: str, ended: Aftermath, baseline: Baseline, facts: list[Fact], evidence: list[Evidence]
) -> tuple[Baseline, str]:
    """What the log shows followed a critical report without a panic line: its fact and the lines it cites added;
    the baseline and the summary's end, which say the machine went down when it did."""
    facts.append(_fact(PANIC_UNSEEN_FACT if ended.went_down is None else AFTER_FACT, ended.said))
    # The lines it rests on, whichever way it went (the line of another task that shows the kernel went on, too).
    evidence += [_cited(source, _line_at(n, None, AFTER_FACT), _excerpt(text)) for n, text in ended.cited]
    if not ended.went_down:
        return baseline, ""
    return went_down_baseline(ended), f", then the machine went down: {ended.shown}"


#: The fact that says a cause's confidence was lowered to its report's.
CAUSE_CAPPED = "root cause confidence capped"


def _capped(read: float, report: float, damage: str | None) -> str:
    why = f"the report is damaged ({damage})" if damage else "the report is not complete"
    return (
        f"{read:.2f} as read, {report:.2f} as the report's: {why}, and a cause read from it cannot be surer than "
        "the report"
    )


def _finding(
    id: str,
    kind: FindingKind,
    title: str,
    severity: Severity,
    confidence: float,
    reason: str,
    summary: str,
    evidence: tuple[Evidence, ...],
    next_steps: tuple[str, ...],
    facts: tuple[Fact, ...],
    logged: LogCause | None,
    baseline: Baseline | None,
) -> Finding:
    """``Finding(...)`` of a report group (this detector's, without subjects or stated cause), made as
    the other records here (its ``__init__`` sets 15 fields through ``object.__setattr__``: ~3 us a finding, 327
    of the corpus x4's log), with its ``__post_init__``'s checks: what they would convert or refuse goes through
    the constructor."""
    if not (isinstance(kind, FindingKind) and evidence and 0.0 <= confidence <= 1.0 and title):
        return Finding(id, kind, title, severity, confidence, reason, summary, evidence, next_steps, facts,
                       DETECTOR, baseline=baseline, log_cause=logged)  # fmt: skip
    return _record(Finding, {"id": id, "kind": kind, "title": title, "severity": severity, "confidence": confidence,
                             "confidence_reason": reason, "summary": summary, "evidence": evidence,
                             "next_steps": next_steps, "facts": facts, "detector": DETECTOR, "subjects": (),
                             "baseline": baseline, "stated": None, "log_cause": logged,
                             "consequence_of": None})  # fmt: skip


# ---------------------------------------------------------------- why: the report body read to its values


def report_boot_line(report: KernelReport) -> int:
    """The first line of the boot ``report`` is of (:func:`report_boot`'s boot; 0: the boot the log starts in), as
    :meth:`detectors.dmesg.scanner.LogScanner._boot_of` numbers a line's."""
    if report.bannerless_boot is not None:
        return report.bannerless_boot
    return 0 if report.boot_banner is None else report.boot_banner[0]


def kaslr_by_boot(
    reports: Sequence[KernelReport], read: Sequence[tuple[int, int, str]] = ()
) -> dict[int, tuple[bool, str]]:
    """What each boot shows of KASLR (:func:`detectors.dmesg.why.kaslr_said`), by its first line: from the lines the
    scanner read outside reports (``read``: (boot, line, text): ``nokaslr`` on the command line, a "Kernel Offset:"
    line) and the "Kernel Offset:" lines of the reports (a panic prints it at its end).  Off where a line shows it
    off, else on where one shows it on: read once per boot, it holds for every report of the boot (an oops above
    the panic that printed "Kernel Offset: disabled" did not know it)."""
    from detectors.dmesg.why import kaslr_said

    seen = list(read)
    # A report's own lines: those of the report it repeats, moved (a repeat's lines are made when read, and a repeat
    # that has made them is no longer listed as one: detectors/dmesg/repeat.py), looked for once per report read.
    offsets: dict[int, list[tuple[int, str]]] = {}
    for r in reports:
        source = origin(r)
        found = offsets.get(id(source))
        if found is None:
            first = source.start_line
            found = offsets[id(source)] = [(n - first, t) for n, t in source.lines if "Kernel Offset: " in t]
        if found:
            boot, first = report_boot_line(r), r.start_line
            seen.extend((boot, first + at, t) for at, t in found)
    out: dict[int, tuple[bool, str]] = {}
    for boot, line, text in sorted(seen):
        said = kaslr_said(line, text)
        if said is not None and (boot not in out or (said[0] and not out[boot][0])):
            out[boot] = said
    return out


def explain_reports(
    reports: Iterable[KernelReport], kaslr: Sequence[tuple[int, int, str]] = ()
) -> dict[int, ReportWhy]:
    """:func:`detectors.dmesg.why.explain` of each report, by its first line; repeats of one report read once.

    A repeat (:func:`detectors.dmesg.repeat.origin`) has the text of the report it repeats but for the
    printk times, and the reading keeps lines as offsets: it holds for every repeat with the same lines
    above its header, but for one whose facts say what the report's boot shows of KASLR
    (``ReportWhy.kaslr_read``: cited by its line, which is another for another boot's repeat): that one holds for
    the repeats of boots that show the same.  ``kaslr``: what the scanner read of KASLR outside the reports
    (:func:`kaslr_by_boot`).
    """
    reports = list(reports)
    if not reports:
        return {}
    from detectors.dmesg.why import explain

    boots = kaslr_by_boot(reports, kaslr)
    # The key of a reading: the report repeated and the bodies of the lines above its header.  A repeat of a
    # report's bytes has its preamble's texts too: the key by those texts as printed (times and all; equal texts
    # have equal bodies), their bodies' parse (~2 us a line) for the first of them.
    keys: dict[tuple[int, tuple[str, ...]], tuple[int, tuple[str, ...]]] = {}
    # Each key's reading, with what its boot showed of KASLR; and, where the reading says it, the readings of the
    # report's repeats in boots that show otherwise (each a key and what its boot shows).
    read: dict[tuple[int, tuple[str, ...]], tuple[ReportWhy, tuple[bool, str] | None]] = {}
    by_boot: dict[tuple[tuple[int, tuple[str, ...]], tuple[bool, str] | None], ReportWhy] = {}
    out: dict[int, ReportWhy] = {}
    for report in reports:
        source = id(origin(report))
        boot = boots.get(report_boot_line(report)) if boots else None
        texts = (source, tuple([text for _, text in report.preamble]))
        key = keys.get(texts)
        preamble = None
        if key is None:
            preamble = [parse_line(n, text) for n, text in report.preamble]  # (explain's, not parsed again)
            key = keys[texts] = (source, tuple([line.body for line in preamble]))
        held = read.get(key)
        if held is None:
            why = explain(report, preamble, boot)
            read[key] = (why, boot)
        elif not held[0].kaslr_read or held[1] == boot:
            why = held[0]
        else:
            again = by_boot.get((key, boot))
            why = by_boot[(key, boot)] = explain(report, preamble, boot) if again is None else again
        out[report.start_line] = why
    _read_hung_passes(reports, out)
    _link_panics(reports, out)
    return out


def _link_panics(reports: list[KernelReport], whys: dict[int, ReportWhy]) -> None:
    """Each panic's reading with the report above it that it makes fatal (:func:`detectors.dmesg.why.link_panic`)."""
    panics = [r for r in reports if r.rule.startswith("panic")]
    if not panics:
        return
    from bisect import bisect_left

    from detectors.dmesg.why import link_panic

    ordered = sorted(reports, key=_start_line)
    starts = [r.start_line for r in ordered]
    for report in panics:
        why = whys[report.start_line]
        if why.cause is not None and why.cause.cls == "kernel_panic":  # (the others name no report they follow)
            whys[report.start_line] = link_panic(report, why, ordered[: bisect_left(starts, report.start_line)])


def _start_line(report: KernelReport) -> int:
    return report.start_line


def hung_passes(reports: Iterable[KernelReport]) -> list[list[KernelReport]]:
    """The khungtaskd passes of a log's reports, each its hung-task reports in log order: the one definition.

    A pass: reports of khungtaskd's classes (:data:`_HUNG_RULES`) one after another, no other report between
    them, each within :data:`_HUNG_PASS_SECONDS` of the one before when both are timed; it ends at the report
    whose lines hold the "Showing all locks held in the system:" list khungtaskd prints once, after the last
    task of the pass.  Both the reading across a pass (:func:`_read_hung_passes`) and the lock cycles among
    its tasks (:func:`lock_cycle_causes`) use it, so a cycle is never claimed across two passes nor a lock
    read from another pass's list.
    """
    passes: list[list[KernelReport]] = []
    members: list[KernelReport] = []
    listed: dict[int, bool] = {}  # _holds_locks_list by the report whose bytes a report is
    for report in sorted(reports, key=lambda r: r.start_line):
        if report.rule not in _HUNG_RULES:
            if members:
                passes.append(members)
            members = []
            continue
        last = members[-1].start_time if members else None
        t = report.start_time
        if members and isinstance(t, float) and isinstance(last, float) and t - last > _HUNG_PASS_SECONDS:
            passes.append(members)
            members = []
        members.append(report)
        # A repeat of a report's bytes holds the list where that report does: read in that report's lines (a
        # repeat's own are made only when read: ~70 a report, most never read otherwise).
        repeated = report.repeats()
        source = report if repeated is None else repeated[0]
        holds = listed.get(id(source))
        if holds is None:
            holds = listed[id(source)] = _holds_locks_list(source)
        if holds:
            passes.append(members)
            members = []
    if members:
        passes.append(members)
    return passes


def _holds_locks_list(report: KernelReport) -> bool:
    """Whether the lines of a report hold khungtaskd's "Showing all locks held in the system:" list."""
    return any("Showing all locks held" in text for _, text in report.lines)


def _read_hung_passes(reports: list[KernelReport], whys: dict[int, ReportWhy]) -> None:
    """Each khungtaskd pass (:func:`hung_passes`) that ends with its locks list read across its reports, in ``whys``.

    The reading is :func:`detectors.dmesg.why.read_hung_pass`; a pass without the list (a kernel without
    lockdep, a log cut short) has none to read.  Other classes are not touched.
    """
    from detectors.dmesg.why import read_hung_pass

    # Each pass's reading by what it read (identities; the pass read is held with it, so that no identity is reused).
    read: dict[tuple[tuple[int, int], ...], tuple[list[tuple[KernelReport, ReportWhy]], list[ReportWhy]]] = {}
    for members in hung_passes(reports):  # (read_hung_pass leaves a pass without the list as it is)
        key = _pass_key(members, whys)
        done = read.get(key) if key is not None else None
        if done is None:
            given = [(m, whys[m.start_line]) for m in members]
            done = (given, read_hung_pass(given))
            if key is not None:
                read[key] = done
        whys.update((m.start_line, w) for m, w in zip(members, done[1], strict=True))


def _pass_key(members: list[KernelReport], whys: dict[int, ReportWhy]) -> tuple[tuple[int, int], ...] | None:
    """What :func:`detectors.dmesg.why.read_hung_pass` reads of a pass, when it reads the same of another: the
    report whose bytes each member is and its reading (identities), all of them moved by one number of lines.

    The reading of a pass holds lines as offsets from each member's first, and the texts of the list's lines: the
    pass of repeats of another pass's bytes (each a line count further on, the same readings) reads the same.
    None when the members are not moved alike (the pass is read).
    """
    key: list[tuple[int, int]] = []
    shift: int | None = None
    for m in members:
        repeated = m.repeats()
        source, delta = (m, 0) if repeated is None else repeated
        if shift is None:
            shift = delta
        elif delta != shift:
            return None
        key.append((id(source), id(whys[m.start_line])))
    return tuple(key)


#: The panic hung_task_panic makes of a khungtaskd pass (kernel/hung_task.c).
_HUNG_PANIC: Final = "Kernel panic - not syncing: hung_task: blocked tasks"
#: The hung-task reports of one khungtaskd pass come within this many seconds of each other.
_HUNG_PASS_SECONDS = 2.0
#: The rules of khungtaskd's reports.
_HUNG_RULES = BLOCKED_TASK_RULES  # khungtaskd's classes: a blocked task, one that cannot die


#: Facts of the report itself that a why fact of the same name would only repeat.
_REPORT_FACTS = frozenset(("type", "occurrences", "guilty frame", "cpu", "pid", "comm", "kernel", "hardware", "taint"))
_CAUSE_EVIDENCE = 4  # lines cited for the cause
_WHY_EVIDENCE = 8  # lines cited for the other facts and the stacks
#: Facts cited right after the cause, before the stacks and the other facts: a hung task's lock and its holder.
_FIRST_FACTS = frozenset(("waits for lock", "lock holder"))


def why_facts(why: ReportWhy) -> list[Fact]:
    """The reading of a report as ``name: value`` facts (locks, CPUs, tasks, memory users, stacks' frames)."""
    facts = [_fact(f.name, str(f.value)) for f in why.facts if f.name not in _REPORT_FACTS and f.name != "root cause"]
    for lock in why.locks:
        where = f" taken in {lock.site}" if lock.site else ""
        owner = f" by {lock.task}" if lock.task and lock.role in ("held", "blocked-on") else ""
        number = f" #{lock.number}" if lock.number is not None else ""
        facts.append(_fact(f"lock {lock.role}{number}", f"{lock.name}{owner}{where}"))
    facts += [_fact(f"stalled CPU {c.cpu}", c.detail) for c in why.cpus]
    facts += [_fact("task", f"{t.comm or '?'} (pid {t.pid}): {t.detail}") for t in why.tasks]
    facts += [_fact("memory user", memory_user(c.kind, c.name, c.bytes, c.pid, None)) for c in why.consumers[:5]]
    facts += [
        _fact(f"zone {z.zone} free", f"{z.free_kb} kB" + (f" (min {z.min_kb} kB)" if z.min_kb is not None else ""))
        for z in why.zones
    ]
    for section in why.stacks:
        if section.first_foreign is not None and section.kind is not _SK_CALL_TRACE:
            facts.append(_fact(f"stack {section.kind}", section.first_foreign.function))
    if why.code is not None and why.code.faulting:
        facts.append(
            _fact(
                "code",
                " ; ".join(
                    ("=> " if i.faulting else "? " if i.uncertain else "") + i.text for i in why.code.instructions
                ),
            )
        )
    return facts


def _line_text(report: KernelReport, why: ReportWhy, number: int) -> str | None:
    """The text of line ``number`` among those a reading may cite: the report's preamble and own lines, and those
    read past them; None when it is none of them.

    Looked up, not a dict of them all made for each finding (~70 lines, for the ~5 it cites): each of the three
    holds increasing line numbers apart from the others' (the preamble is above the header, a line read past
    is no line of the report's), and the report's own mostly follow one another (an index from its first).
    """
    first = report.start_line
    for at, text in why.read_past:
        if first + at == number:
            return text
    own, preamble = report.lines, report.preamble
    for lines in (own, preamble):
        if lines:
            i = number - lines[0][0]
            if 0 <= i < len(lines) and lines[i][0] == number:
                return lines[i][1]
    for lines in (own, preamble):  # lines of other CPUs between the report's
        for n, text in lines:
            if n == number:
                return text
    return None


def why_evidence(source: str, report: KernelReport, why: ReportWhy) -> list[Evidence]:
    """The lines the cause and the main facts were read from, cited verbatim, wherever in the log they lie."""
    first = report.start_line
    cpu = report.cpu if isinstance(report.cpu, int) else None
    out: list[Evidence] = []
    seen = {first}
    wanted = [(at, "cause") for at in why.cause_at[:_CAUSE_EVIDENCE]]
    wanted += [(at, f.name) for f in why.facts if f.name in _FIRST_FACTS for at in (f.at, *f.also)]
    wanted += [
        (s.first_foreign.at, f"stack {s.kind}") for s in why.stacks if s.first_foreign and s.kind is not _SK_CALL_TRACE
    ]
    wanted += [
        (at, f.name)
        for f in why.facts
        if f.name != "root cause" and f.name not in _FIRST_FACTS
        for at in (f.at, *f.also)
    ]
    for at, name in wanted:
        number = first + at
        if number in seen or len(out) >= _CAUSE_EVIDENCE + _WHY_EVIDENCE:
            continue
        text = _line_text(report, why, number)
        if text is None:
            continue
        seen.add(number)
        out.append(_cited(source, _line_at(number, None, name), _excerpt(text), None, cpu))
    return out


def log_cause(cause: Cause, post_mortem: bool = False) -> LogCause:
    """The typed cause a finding carries for the one hypothesis table (rule ``log-cause``).

    ``post_mortem``: the machine went down after the report (its finding's steps read the dump): a cause whose step
    asks the live machine (sysrq) and that names the dump's counterpart (its ``dump_command`` field) gives that one,
    so the hypothesis's confirm step is the finding's.
    """
    command = cause.next_command
    if post_mortem:
        command = str(dict(cause.fields).get("dump_command") or command)
    return LogCause(cause.cls, cause.statement, float(f"{cause.confidence:.2f}"), command)


#: Waits that take a sleeping lock a task may hold while it waits for another (the stuff of lock cycles).
_LOCK_WAITS = ("a mutex", "an rw-semaphore (read)", "an rw-semaphore (write)", "a semaphore", "an rt-mutex")


def lock_cycle_causes(reports: Sequence[KernelReport], whys: dict[int, ReportWhy]) -> dict[str, Cause]:
    """A possible lock cycle among the hung tasks of one khungtaskd pass, by the signature of each report in it.

    ``reports``: those read into ``whys`` (:func:`explain_reports`), so that the passes (:func:`hung_passes`)
    are the ones read there.  Two to four tasks reported together, each blocked on a sleeping lock in a
    different function and none on the rtnl mutex (whose waiters queue behind one holder, not in a cycle):
    their locks may be taken in opposite orders.  The log names no lock without lockdep, so the cycle is
    possible, not shown (:func:`detectors.dmesg.why.lock_cycle_cause`).  A signature in several passes keeps
    the cause of its first.
    """
    from detectors.dmesg.why import lock_cycle_cause

    passes = [[(m, whys[m.start_line]) for m in members] for members in hung_passes(reports) if len(members) >= 2]
    out: dict[str, Cause] = {}
    for members in passes:
        waiting = [(g, w) for g, w in members if w.fact("waits for") in _LOCK_WAITS]
        where = {w.fact("waits in") for _, w in waiting}
        if not 2 <= len(waiting) <= 4 or len(where) != len(waiting) or len(waiting) != len(members):
            continue
        # A pid fact is an int the reader read (forensics.units.log_dec: 64 bits at most), or none.
        ordered = sorted(waiting, key=lambda x: int(x[1].fact("pid") or 0))
        cause = lock_cycle_cause(
            [(str(w.fact("task")), str(w.fact("waits for")), str(w.fact("waits in"))) for _, w in ordered]
        )
        for report, _ in ordered:
            out.setdefault(report.signature, cause)
    return out
