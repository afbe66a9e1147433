"""Why, from the log alone: each report class read to its values, each value with its line.

The title says what happened and where; the report's body, which kernel engineers read next,
says why: KASAN's access and the object it hit with who allocated and who freed it, lockdep's
chain of locks with where each was taken, the CPUs and tasks an RCU stall names, the lock a
hung task waits for, the pointers of a corrupted list, the faulting instruction of an oops,
the consumers of memory at an OOM.  :func:`explain` reads them into a :class:`ReportWhy`:
typed facts (:class:`WhyFact`: name, value, the line it was read from), the stacks
(:mod:`detectors.dmesg.stacks`), the decoded ``Code:`` bytes (:mod:`detectors.dmesg.code`) and
the root cause they support (:class:`forensics.types.causes.Cause`), worded as ``kforensic vmcore``
words the same cause read from a dump.

Rules are ordered data, specific first: :data:`EXTRACTORS` (which reader applies to which
report) and :data:`CAUSE_RULES` (which cause the facts establish).  Lines are kept as offsets
from the report's first line (negative for the lines the kernel printed just above the header,
``KernelReport.preamble``), so that the reading of a report holds for every repeat of it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Final, NamedTuple

from ahocorasick_rs import BytesAhoCorasick, MatchKind

from detectors.dmesg.atomic import PreemptCount, SleepingCall, decode_preempt_count, sleeping_call
from detectors.dmesg.code import listing, registers, x86_canonical
from detectors.dmesg.cpublocks import cpu_blocks, cpu_of, other_cpu_lines
from detectors.dmesg.events import MEM_INFO, MEM_INFO_REACH, VMALLOC_FAILURE
from detectors.dmesg.extract import BLOCKED_TASK_RULES, NO_END_MARKER_RULES
from detectors.dmesg.frames import HUNG_SKIPS, function_name, is_skipped
from detectors.dmesg.interleaved import mixed_dumps
from detectors.dmesg.lines import LogLine, parse_line
from detectors.dmesg.model import parsed_lines
from detectors.dmesg.rcuusage import FLAVOUR_READER, RCU_CHECKS, FailedCheck, failed_check, is_reader
from detectors.dmesg.repeat import line_numbers, origin
from detectors.dmesg.rules import RULES
from detectors.dmesg.spindebug import (
    MAX_NR_CPUS,
    SPIN_CHECKS,
    SPIN_FIELDS,
    SPIN_HEADER,
    magic_meaning,
    owner_cpu_meaning,
)
from detectors.dmesg.stacks import (
    LOCK_PRIMITIVES,
    RACE_ACCESS,
    first_lock_taker,
    header_inline,
    headless_call_trace,
    lines_holding,
    race_sections,
    stack_sections,
)
from detectors.dmesg.ubsan import OVERFLOW_INTRO, UBSAN_HEADER, indexed_length, operation
from detectors.dmesg.waitcontext import (
    TRYING_TO_LOCK,
    WAIT_CONTEXT,
    WaitLock,
    context_words,
    held_forbidding,
    lock_kind,
    raw_nesting,
    type_words,
    wait_lock,
)
from detectors.pointers import (
    LIST_POISON1,
    LIST_POISON2,
    SLAB_POISONS,
    ValueClass,
    ValueKind,
    ascii_text,
    classify_value,
    kaslr_moves,
    kernel_region,
)
from forensics import regexcache as rc
from forensics.model import NotAvailable
from forensics.types.causes import Cause
from forensics.types.dmesg import (
    PRESSURE_FACT,
    CodeListing,
    FactValue,
    KernelReport,
    LockInfo,
    MemoryConsumer,
    ReportKind,
    ReportWhy,
    StackFrame,
    StackKind,
    StackSection,
    StalledCpu,
    StalledTask,
    WhyFact,
    ZoneFree,
)
from forensics.units import S64_MIN, U64_MAX, human_bytes, log_dec, log_hex, past_64_bits

#: ``tuple.__new__``: the readings' records (named tuples) made without their own constructor, a Python function
#: (~1 us a call from compiled code, against ~0.2: ~6,000 records of the corpus x4's readings, as many of the x1's).
_new_tuple: Final = tuple.__new__

#: The enum members the readers compare with, bound once: under Python 3.11 a member read through its class
#: (``ReportKind.LOCKDEP``) goes through EnumType's ``__getattr__`` hook, which calls ``type.__getattribute__`` as a
#: method (~700 instructions from compiled code, against a static's few; ~8,500 reads of the corpus x4's readings).
_RK_ALLOC_FAILURE: Final = ReportKind.ALLOC_FAILURE
_RK_BUG: Final = ReportKind.BUG
_RK_KASAN: Final = ReportKind.KASAN
_RK_KCSAN: Final = ReportKind.KCSAN
_RK_KFENCE: Final = ReportKind.KFENCE
_RK_KMSAN: Final = ReportKind.KMSAN
_RK_LEAK: Final = ReportKind.LEAK
_RK_LOCKDEP: Final = ReportKind.LOCKDEP
_RK_LOCKUP: Final = ReportKind.LOCKUP
_RK_OOM: Final = ReportKind.OOM
_RK_RCU_STALL: Final = ReportKind.RCU_STALL
_RK_REFCOUNT: Final = ReportKind.REFCOUNT
_RK_SOFT_LOCKUP: Final = ReportKind.SOFT_LOCKUP
_RK_STACK_OVERFLOW: Final = ReportKind.STACK_OVERFLOW
_RK_UBSAN: Final = ReportKind.UBSAN
_RK_WARNING: Final = ReportKind.WARNING
_SK_ALLOCATED: Final = StackKind.ALLOCATED
_SK_AUX_WORK: Final = StackKind.AUX_WORK
_SK_CALL_TRACE: Final = StackKind.CALL_TRACE
_SK_FREED: Final = StackKind.FREED
_SK_LEAK_BACKTRACE: Final = StackKind.LEAK_BACKTRACE
_SK_LOCK_CHAIN: Final = StackKind.LOCK_CHAIN
_SK_PAGE_ALLOC: Final = StackKind.PAGE_ALLOC
_SK_PAGE_FREE: Final = StackKind.PAGE_FREE
_SK_RACE_ACCESS_1: Final = StackKind.RACE_ACCESS_1
_SK_RACE_ACCESS_2: Final = StackKind.RACE_ACCESS_2
_SK_UNINIT_CREATED: Final = StackKind.UNINIT_CREATED
_SK_UNINIT_STORED: Final = StackKind.UNINIT_STORED
_VK_NON_CANONICAL: Final = ValueKind.NON_CANONICAL
_VK_USER_ADDRESS: Final = ValueKind.USER_ADDRESS
_VK_SLAB_POISON_END: Final = ValueKind.SLAB_POISON_END
_VK_SLAB_POISON_FREE: Final = ValueKind.SLAB_POISON_FREE
PID_MAX_LIMIT: Final = 4 * 1024 * 1024  # the largest pid_max on 64-bit (include/linux/threads.h)


def _fact(name: str, value: FactValue | NotAvailable, at: int, also: tuple[int, ...] = ()) -> WhyFact:
    """``WhyFact(name, value, at, also)``, made by :data:`_new_tuple`."""
    return _new_tuple(WhyFact, (name, value, at, also))


@dataclass
class _Reading:
    """What the extractors gather for one report (mutable while reading)."""

    report: KernelReport
    lines: list[LogLine]  # preamble lines, then the report's own
    first: int  # the report's first line number
    facts: list[WhyFact] = field(default_factory=list)
    stacks: list[StackSection] = field(default_factory=list)
    locks: list[LockInfo] = field(default_factory=list)
    cpus: list[StalledCpu] = field(default_factory=list)
    tasks: list[StalledTask] = field(default_factory=list)
    consumers: list[MemoryConsumer] = field(default_factory=list)
    zones: list[ZoneFree] = field(default_factory=list)
    #: The Mem-Info's per-order free lists read whole, one a zone: its name, (block kB, free blocks) each, offset.
    free_lists: list[tuple[str, tuple[tuple[int, int], ...], int]] = field(default_factory=list)
    code: CodeListing | None = None
    rcu_check: FailedCheck | None = None  # the RCU check a "suspicious RCU usage" names, as read (its cause's)
    held_unread: str | None = None  # why a "#N:" entry of the locks-held list was not taken as its task's
    text: str = ""  # the bodies of ``lines`` joined by newlines (explain's)
    arch: str | None = None  # the architecture its registers name (:func:`report_arch`); None: no user/kernel claim
    kaslr_off: str | None = None  # what in its boot's lines shows KASLR off (:func:`kaslr_off`); None: not shown
    kaslr_on: str | None = None  # what in its boot's lines shows KASLR on (a "Kernel Offset: 0x..." line), cited
    kaslr_read: bool = False  # whether a fact says what its boot shows of KASLR (:meth:`pointer`)
    _blob: bytes | None = None

    def blob(self) -> bytes:
        """``text`` as UTF-8, made once (for :func:`lines_holding`)."""
        if self._blob is None:
            self._blob = self.text.encode()
        return self._blob

    def pointer(self, value: int) -> str:
        """:func:`pointer_class` of a value on the report's architecture, with what its boot shows of KASLR; noted
        (``kaslr_read``) where the words depend on it: an x86-64 address in a range KASLR moves."""
        if self.arch == "x86_64" and kaslr_moves(value):
            self.kaslr_read = True
        return pointer_class(value, self.arch, self.kaslr_off, self.kaslr_on)

    def add(self, name: str, value: FactValue | None, line: LogLine) -> None:
        if value is not None and value != "":
            self.facts.append(_fact(name, value, line.number - self.first))

    def computed(self, name: str, value: FactValue | None, at: int, line: LogLine) -> None:
        """A fact computed from values on two lines (``at``, an offset, and ``line``): both are cited."""
        if value is not None:
            self.facts.append(_fact(name, value, at, (line.number - self.first,)))

    def num(self, name: str, text: str, line: LogLine) -> None:
        """A decimal field's fact: its value, or "unknown" with why when past the 64 bits a kernel prints."""
        value = log_dec(text)
        self.facts.append(_fact(name, value if value is not None else _past_64_bits(text), line.number - self.first))

    def cpu(self, text: str, detail: str, line: LogLine) -> None:
        """A stalled CPU of number ``text``; none when past 64 bits (no CPU a kernel names)."""
        if (number := log_dec(text)) is not None:
            self.cpus.append(_new_tuple(StalledCpu, (number, detail, line.number - self.first)))

    def task(self, comm: str | None, pid: str, detail: str, line: LogLine) -> None:
        """A stalled task of pid ``pid``; none when past 64 bits (no pid a kernel prints)."""
        if (number := log_dec(pid)) is not None:
            self.tasks.append(_new_tuple(StalledTask, (comm, number, detail, line.number - self.first)))

    def consumer(self, kind: str, name: str, pid: int | None, size: int | None, at: int) -> None:
        """A consumer of memory of ``size`` bytes; none when its size is past 64 bits (not what a kernel prints)."""
        if size is not None:
            self.consumers.append(_new_tuple(MemoryConsumer, (kind, name, pid, size, at)))

    def get(self, name: str) -> FactValue | None:
        return next((f.value for f in self.facts if f.name == name and not isinstance(f.value, NotAvailable)), None)

    def at(self, name: str) -> int | None:
        return next((f.at for f in self.facts if f.name == name), None)

    def search(self, pattern: re.Pattern[str], hint: str = "") -> tuple[LogLine, re.Match[str]] | None:
        for line in self.lines:
            if hint in line.body and (m := pattern.search(line.body)) is not None:
                return line, m
        return None

    def stack(self, kind: StackKind) -> StackSection | None:
        return next((s for s in self.stacks if s.kind is kind), None)

    @property
    def named_func(self) -> str | None:
        """The report's guilty function (the title's); where its call trace gave none (a damaged report), the function
        the report's own lines name as where it happened (a sanitizer's "in f", the RIP, a WARNING's site), read."""
        if isinstance(self.report.frame, str):
            return self.report.frame
        site = self.get("reported in") or self.get("faulting function") or self.get("warning site")
        return _function_name(str(site).split("+")[0].split("/")[0]) if site else None

    @property
    def func(self) -> str:
        """:attr:`named_func` for a statement's words ("an unknown function" where the report names none)."""
        return self.named_func or "an unknown function"

    def frame_above(self, function: str) -> str | None:
        """The function that called ``function`` by the report's call trace: the first reliable frame after its
        reliable one (a ``?`` frame is a stale return address, no caller); None when the trace shows none."""
        frames = self.report.trace
        at = next((i for i, f in enumerate(frames) if f.function == function and f.reliable), None)
        if at is None:
            return None
        return next((f.function for f in frames[at + 1 :] if f.reliable and f.stack == frames[at].stack), None)


def _past_64_bits(text: str) -> NotAvailable:
    """Why a field of ``text`` is not read: a number no kernel prints (``log_dec``, ``log_hex``)."""
    return NotAvailable(past_64_bits(text))


def _bounded(value: int) -> int | None:
    """A sum or product of values read: itself when a 64-bit number (as every number in the output), else None."""
    return value if S64_MIN <= value <= U64_MAX else None


def _scaled(text: str, factor: int) -> int | None:
    """The decimal field ``text`` times ``factor`` (pages, kB to bytes), None when either is past 64 bits."""
    value = log_dec(text)
    return _bounded(value * factor) if value is not None else None


def _difference(address: str, base: str) -> int | None:
    """``address - base`` of two hex fields, None if either is past 64 bits."""
    a, b = log_hex(address), log_hex(base)
    return a - b if a is not None and b is not None else None


# ---------------------------------------------------------------- sanitizers

_KASAN_HEAD = rc.compile(
    r"BUG: KASAN: ([a-z\-]+(?: or [a-z\-]+)?) (?:in ([^\s+]+)(?:\+0x[0-9a-f]+/0x[0-9a-f]+)?(?: \[[^\]]+\])?"
    r"(?: at addr ([0-9a-f]+))?|on address\s+(\S+)|in range \[(0x[0-9a-f]+)-)"
)
# "Read of size 8 at addr X by task t/1"; tag-based KASAN (arm64) prints no size; old kernels no address.
_KASAN_ACCESS = rc.compile(r"(Read|Write) (?:of size (\d+) )?(?:at addr ([0-9a-f]+) )?by task (.+?)/(\d+)\s*$")
_KASAN_FREE_AT = rc.compile(r"Free of addr ([0-9a-f]+) by task (.+?)/(\d+)")
_KASAN_OBJECT = rc.compile(r"The buggy address belongs to the object at ([0-9a-f]+)")
_KASAN_CACHE = rc.compile(r"which belongs to the cache (\S+) of size (\d+)")
_KASAN_LOCATED = rc.compile(r"The buggy address is located (\d+) bytes (inside of|to the right of|to the left of)")
_KASAN_REGION = rc.compile(r"(?:(freed|allocated) )?(\d+)-byte region \[([0-9a-f]+), ([0-9a-f]+)\)")
_KASAN_OLD_OBJECT = rc.compile(r"Object at ([0-9a-f]+), in cache (\S+) size: (\d+)")
_KASAN_STACK_VAR = rc.compile(r"The buggy address (?:is located in stack of task (.+?)/(\d+)(?: at offset (\d+))?|"
                              r"belongs to (?:the variable|stack of task))")  # fmt: skip


def _sanitizer_stacks(r: _Reading) -> None:
    """Who allocated, who freed, the work that was queued: each stack's first foreign frame and task."""
    for kind, name in ((_SK_ALLOCATED, "allocated by"), (_SK_FREED, "freed by"),
                       (_SK_AUX_WORK, "work creation"), (_SK_UNINIT_STORED, "uninit stored by"),
                       (_SK_UNINIT_CREATED, "uninit created by")):  # fmt: skip
        section = r.stack(kind)
        if section is None:
            continue
        if section.first_foreign is not None:
            r.facts.append(_fact(name, section.first_foreign.function, section.first_foreign.at))
        if section.task is not None:
            # A pid past PID_MAX_LIMIT (4 M, include/linux/threads.h) is no task: the report's text was damaged
            # (syzkaller log 120: "Allocated by task 3625515936:" printed while a second oops interrupted it).
            task = (
                section.task if section.task <= PID_MAX_LIMIT else f"{section.task}: not a pid (past {PID_MAX_LIMIT})"
            )
            # Older KASAN printed the task on the line after its "Allocated:" heading ("PID = 4655"): cite that line.
            at = section.at if "task" in section.heading else section.at + 1
            r.facts.append(_fact(f"{name} task", task, at))


def _kasan_located(r: _Reading, m: re.Match[str], line: LogLine) -> None:
    """KASAN's "The buggy address is located N bytes inside of / to the left of / to the right of" line."""
    r.add("located", f"{m.group(1)} bytes {m.group(2)}", line)
    distance, relation = log_dec(m.group(1)), m.group(2)
    size = r.get("object size")
    if distance is None:
        r.facts.append(_fact("offset", _past_64_bits(m.group(1)), line.number - r.first))
    elif relation == "inside of":
        r.add("offset", distance, line)
    elif relation == "to the left of":
        r.add("offset", -distance, line)
    elif isinstance(size, int):
        r.add("offset", _bounded(size + distance), line)


def _kasan_region(r: _Reading, m: re.Match[str], line: LogLine) -> None:
    """KASAN's "[freed] N-byte region [start, end)" line."""
    r.add("region", f"{m.group(1) + ' ' if m.group(1) else ''}{m.group(2)}-byte region", line)
    if m.group(1):
        r.add("object state", m.group(1), line)
    if r.get("object size") is None:
        r.num("object size", m.group(2), line)
    if r.get("offset") is None and (relation := r.get("located")) and "right" in str(relation):
        size, distance = log_dec(m.group(2)), log_dec(str(relation).split()[0])
        r.add("offset", _bounded(size + distance) if size is not None and distance is not None else None, line)


#: The words one of which each branch of :func:`_kasan`'s reading tests first.
_KASAN_WORDS = ("KASAN:", " by task ", "Free of addr", "to the object", "to the cache", "is located", "-byte region",
                "Object at", "buggy address")  # fmt: skip
_KASAN_SEARCH = BytesAhoCorasick([w.encode() for w in _KASAN_WORDS], matchkind=MatchKind.LeftmostFirst)


def _kasan(r: _Reading) -> None:
    lines = r.lines
    for i in lines_holding(r.blob(), _KASAN_SEARCH):  # (a line without one of the words is read by no branch)
        line = lines[i]
        body = line.body
        if "KASAN:" in body and (m := _KASAN_HEAD.search(body)):
            r.add("tool", "KASAN", line)
            r.add("bug", m.group(1), line)
            r.add("reported in", m.group(2), line)
            address = m.group(3) or m.group(4) or m.group(5)
            if address and address != "(null)":
                r.add("address", address if address.startswith("0x") else f"0x{address}", line)
            elif address:
                r.add("address", "0x0", line)
        elif " by task " in body and (m := _KASAN_ACCESS.search(body)) is not None and r.get("access") is None:
            r.add("access", m.group(1), line)
            if m.group(2):
                r.num("size", m.group(2), line)
            if m.group(3):
                r.add("address", f"0x{m.group(3)}", line)
            r.add("task", m.group(4), line)
            r.num("pid", m.group(5), line)
        elif "Free of addr" in body and (m := _KASAN_FREE_AT.search(body)) is not None:
            r.add("access", "free", line)
            r.add("address", f"0x{m.group(1)}", line)
            r.add("task", m.group(2), line)
            r.num("pid", m.group(3), line)
        elif "to the object" in body and (m := _KASAN_OBJECT.search(body)) is not None:
            r.add("object", f"0x{m.group(1)}", line)
        elif "to the cache" in body and (m := _KASAN_CACHE.search(body)) is not None:
            r.add("cache", m.group(1), line)
            r.num("object size", m.group(2), line)
        elif "is located" in body and (m := _KASAN_LOCATED.search(body)) is not None:
            _kasan_located(r, m, line)
        elif "-byte region" in body and (m := _KASAN_REGION.search(body)) is not None and r.get("region") is None:
            _kasan_region(r, m, line)
        elif "Object at" in body and (m := _KASAN_OLD_OBJECT.search(body)) is not None:
            r.add("object", f"0x{m.group(1)}", line)
            r.add("cache", m.group(2), line)
            r.num("object size", m.group(3), line)
            address = r.get("address")
            if isinstance(address, str):
                r.add("offset", _difference(address, m.group(1)), line)
        elif "buggy address" in body and (m := _KASAN_STACK_VAR.search(body)) is not None:
            r.add("memory", "stack" if "stack" in body else "global variable", line)
            if m.group(3):
                r.num("offset", m.group(3), line)
    address, obj = r.get("address"), r.get("object")
    if r.get("offset") is None and isinstance(address, str) and isinstance(obj, str) and r.get("cache"):
        # A report cut before "The buggy address is located N bytes ..." still gives both addresses; tag-based
        # KASAN (arm64) keeps a tag in the top byte of each (0xf3f0..., 0xfff0...), which is not the address.
        untagged = (1 << 56) - 1
        at = r.at("object")
        a, o = log_hex(address), log_hex(obj)
        if a is not None and o is not None:
            r.facts.append(_fact("offset", (a & untagged) - (o & untagged), at or 0))
    _sanitizer_stacks(r)


# A symbolized log (syzbot's) ends the header with the source position, "in f+0x1/0x2 mm/x.c:12 [inline]".
_SOURCE_TAIL = r"(?: \S+\.[a-zA-Z]+:\d+)?(?: \[inline\])?"
_KFENCE_HEAD = rc.compile(
    r"BUG: KFENCE: ([a-z\- ]+?)(?: (read|write))?(?: in (\S+?)(?:\+0x\S+)?" + _SOURCE_TAIL + r")?\s*$"
)
_KFENCE_AT = rc.compile(
    r"^\s*(?:(Use-after-free|Out-of-bounds|Invalid) (read|write) at|Invalid free of|Corrupted memory at) "
    r"0x([0-9a-f]+)(?: \[[^\]]*\])? \((?:(\d+)B (left|right) of|in) kfence-#(\d+)\)"
)
_KFENCE_OBJECT = rc.compile(r"kfence-#(\d+) \[0x([0-9a-f]+)-0x([0-9a-f]+), size=(\d+), cache=(\S+?)\]")


def _kfence(r: _Reading) -> None:
    for line in r.lines:
        body = line.body
        if "KFENCE:" in body and (m := _KFENCE_HEAD.search(body)):
            r.add("tool", "KFENCE", line)
            r.add("bug", m.group(1), line)
            if m.group(2):
                r.add("access", m.group(2).capitalize(), line)
            r.add("reported in", m.group(3), line)
        elif (m := _KFENCE_AT.search(body)) is not None:
            r.add("address", f"0x{m.group(3)}", line)
            if m.group(2) and r.get("access") is None:
                r.add("access", m.group(2).capitalize(), line)
            if m.group(5):
                r.add("located", f"{m.group(4)} bytes to the {m.group(5)} of", line)
            r.num("kfence object", m.group(6), line)
        elif (m := _KFENCE_OBJECT.search(body)) is not None and r.get("cache") is None:
            r.add("object", f"0x{m.group(2)}", line)
            r.num("object size", m.group(4), line)
            r.add("cache", m.group(5), line)
            address = r.get("address")
            if isinstance(address, str):
                r.add("offset", _difference(address, m.group(2)), line)
    _sanitizer_stacks(r)


_KMSAN_HEAD = rc.compile(r"BUG: KMSAN: ([a-z\-]+) in (\S+?)(?:\+0x\S+)?" + _SOURCE_TAIL + r"\s*$")
_KMSAN_BYTES = rc.compile(r"Bytes (\d+)-(\d+) of (\d+) are uninitialized")
_KMSAN_ACCESS = rc.compile(r"Memory access of size (\d+) starts at ([0-9a-f]+)")
_KMSAN_COPIED = rc.compile(r"Data copied to user address ([0-9a-fx]+)")
_KMSAN_VARIABLE = rc.compile(r"Local variable (\S+) created at:")


def _kmsan(r: _Reading) -> None:
    for line in r.lines:
        body = line.body
        if "KMSAN:" in body and (m := _KMSAN_HEAD.search(body)):
            r.add("tool", "KMSAN", line)
            r.add("bug", m.group(1), line)
            r.add("reported in", m.group(2), line)
        elif (m := _KMSAN_BYTES.search(body)) is not None:
            r.add("uninitialized bytes", f"{m.group(1)}-{m.group(2)} of {m.group(3)}", line)
        elif (m := _KMSAN_ACCESS.search(body)) is not None:
            r.num("size", m.group(1), line)
            r.add("address", f"0x{m.group(2)}", line)
        elif (m := _KMSAN_COPIED.search(body)) is not None:
            r.add("copied to user address", m.group(1), line)
        elif (m := _KMSAN_VARIABLE.search(body)) is not None:
            r.add("local variable", m.group(1), line)
    _sanitizer_stacks(r)


_KCSAN_HEAD = rc.compile(r"BUG: KCSAN: (.+?) in (\S+?)(?:\+0x[0-9a-f]+/0x[0-9a-f]+)?(?: / (\S+?)(?:\+0x\S+)?)?\s*$")
_KCSAN_CHANGED = rc.compile(r"^\s*value changed: (0x[0-9a-f]+) -> (0x[0-9a-f]+)")
# The line after "Reported by Kernel Concurrency Sanitizer on:"; 6.11+ print the UID.
_KCSAN_ON = rc.compile(r"^\s*CPU: (\d+) (?:UID: \d+ )?PID: (\d+) Comm: (.+?)(?: Not tainted| Tainted:|\s*$)")


def _kcsan(r: _Reading) -> None:
    """KCSAN: the two accesses (type, address, size, task or interrupt, CPU, the function and its first foreign
    caller), the value change, and the reporting task.  The accesses' stacks are read here, for KCSAN only."""
    r.stacks.extend(race_sections(r.lines[len(r.report.preamble) :], r.first))
    accesses = 0
    reported_on = False
    for line in r.lines:
        body = line.body
        if "KCSAN:" in body and (m := _KCSAN_HEAD.search(body)) is not None and r.get("tool") is None:
            r.add("tool", "KCSAN", line)
            r.add("bug", m.group(1), line)
            r.add("reported in", " / ".join(g for g in m.groups()[1:] if g), line)
        elif " bytes by " in body and (m := RACE_ACCESS.match(body)) is not None:
            accesses += 1
            name = f"access {accesses}"
            r.add(name, m.group("type") + m.group("marks"), line)
            r.add(f"{name} address", m.group("address"), line)
            r.num(f"{name} size", m.group("size"), line)
            r.add(f"{name} by", "interrupt" if m.group("interrupt") else f"task {m.group('pid')}", line)
            r.num(f"{name} cpu", m.group("cpu"), line)
            if m.group("unknown"):
                r.add("other access", "unknown origin", line)
        elif "value changed" in body and (m := _KCSAN_CHANGED.match(body)) is not None:
            r.add("value changed", f"{m.group(1)} -> {m.group(2)}", line)
        elif "Reported by Kernel Concurrency Sanitizer" in body:
            reported_on = True
        elif reported_on and (m := _KCSAN_ON.match(body)) is not None:
            r.num("CPU", m.group(1), line)
            r.num("pid", m.group(2), line)
            r.add("task", m.group(3).strip(), line)
            reported_on = False
    for number, kind in enumerate((_SK_RACE_ACCESS_1, _SK_RACE_ACCESS_2), 1):
        section = r.stack(kind)
        top = next((f for f in section.frames if f.reliable), None) if section is not None else None
        if section is None or top is None:
            continue
        r.facts.append(_fact(f"access {number} in", top.function, top.at))
        if section.first_foreign is not None and section.first_foreign.function != top.function:
            r.facts.append(_fact(f"access {number} caller", section.first_foreign.function, section.first_foreign.at))


_LEAK_OBJECT = rc.compile(r"unreferenced object (0x[0-9a-f]+) \(size (\d+)\):")
# '  comm "syz-executor1", pid 8262, jiffies 4294976807 (age 33.830s)' (no age from 6.7 on).
_LEAK_COMM = rc.compile(r'^\s*comm "(.*)", pid (\d+), jiffies (\d+)(?: \(age (\d+)\.(\d{3})s\))?')


def _kmemleak(r: _Reading) -> None:
    """kmemleak: the unreferenced object (address, size), the task that allocated it and when, and who allocated
    it: its backtrace's first foreign frame, past the allocator and the rule's allocation wrappers."""
    for line in r.lines:
        body = line.body
        if "unreferenced object" in body and (m := _LEAK_OBJECT.search(body)) is not None and r.get("object") is None:
            r.add("object", m.group(1), line)
            r.num("object size", m.group(2), line)
        elif "comm " in body and (m := _LEAK_COMM.match(body)) is not None and r.get("task") is None:
            r.add("task", m.group(1), line)
            r.num("pid", m.group(2), line)
            r.num("jiffies", m.group(3), line)
            if m.group(4):
                seconds, ms = log_dec(m.group(4)), log_dec(m.group(5))
                r.add("age ms", _bounded(seconds * 1000 + ms) if seconds is not None and ms is not None else None, line)
    section = r.stack(_SK_LEAK_BACKTRACE)
    if section is not None and section.first_foreign is not None:
        r.facts.append(_fact("allocated by", section.first_foreign.function, section.first_foreign.at))


# ---------------------------------------------------------------- lockdep

_LOCK = r"(?:[0-9a-f]{8,16} )?\((.*)\)\{[^}]*\}(?:-\{[^}]*\})?"
_LOCK_AT = rc.compile(r"^\s*" + _LOCK + r"(?:, at: (?:\[<[0-9a-f]+>\]\s*)?(\S+))?")
_HELD = rc.compile(r"^\s*#(\d+):\s+" + _LOCK + r"(?:, at: (?:\[<[0-9a-f]+>\]\s*)?(\S+))?")
# The task's name may hold a "/" ("5 locks held by kworker/1:1/44:"): the pid is the last "/N".
_HELD_BY = rc.compile(r"^\s*(\d+|no) locks? held by (.+)/(\d+)[:.]?\s*$")  # "no locks held by t/4648."
_CHAIN = rc.compile(r"^\s*-> #(\d+) \((.*)\)\{[^}]*\}(?:-\{[^}]*\})?:\s*$")
_TRYING = rc.compile(r"^\s*(.+?)/(\d+)(?: \[.*\])? is trying to acquire(?: lock)?:")
_RELEASING = rc.compile(r"^\s*(.+?)/(\d+) is trying to release lock \((.*)\) at:")
_SITE = rc.compile(r"^\s*(?:\[<[0-9a-f]+>\]\s*)?([A-Za-z_][\w.]*\+0x[0-9a-f]+/0x[0-9a-f]+)")
_LOCKDEP_KIND = rc.compile(
    r"(?:WARNING|INFO): (possible circular locking dependency|possible recursive locking|inconsistent lock state|"
    r"possible irq lock inversion dependency|[A-Z]+-safe -> [A-Z]+-unsafe lock order|bad unlock balance|"
    r"held lock freed|nested lock was not taken|suspicious RCU usage|lock held when returning to user space|"
    r"trying to register non-static key)"
)
_SCENARIO = rc.compile(r"^(\s*)(lock|unlock|<Interrupt>)\(?(.*?)\)?;?\s*$")
_CHAIN_EXISTS = rc.compile(r"^\s*(\S.* --> .*\S)\s*$")
_INCONSISTENT = rc.compile(r"\{([A-Z\-]+)\} -> \{([A-Z\-]+)\} usage")


#: A "#N:" entry's first line, whatever of it the console kept on it ("#0: ", "#0:  (").
_OPEN_HELD = rc.compile(r"^\s*#(\d+):\s*(.*?)\s*$")
_AT_ONLY = rc.compile(r"^\s*, at: ")
#: How many console lines one split "#N:" entry may take (address, "(", name, "){..}", the "at:" lines).
_SPLIT_PIECES = 8
#: How many other CPUs' lines one split entry may be read past (syzkaller 244: 12 frames between "#0: " and its "at:").
_SPLIT_FOREIGN = 48
#: What print_lock() has printed of an entry so far, its pieces joined (kernel/locking/lockdep.c: "%p" the instance,
#: " (", the class's name (its "#N" and "/N" pieces too), "){usage}" with "-{wait:wait}" since 5.7, ", at: %pS").  A
#: name may hold parentheses, never a space or a brace.
_ENTRY_SO_FAR = rc.compile(
    r"(?:[0-9a-f]{8,16})?(?:\s*\((?:(?!\))[^\s{}]+(?:\{[^}]*\}(?:-\{[^}]*\})?(?:, at: \S.*)?)?)?)?"
)
#: Another CPU's line that cannot be a piece of an entry: a stack frame ("? sym+0x1/0x2", "sym+0x1/0x2 file.c:1",
#: "sym file.h:1 [inline]") or a stack's marker ("<IRQ>"); a lock's name has neither a "+0x../0x.." nor a space.
_FOREIGN_LINE = rc.compile(
    r"^\s*(?:(?:\? )?[\w.$]+(?:\+0x[0-9a-f]+/0x[0-9a-f]+|(?= \S+:\d+))(?: \[\w+\])?(?: \S+:\d+)?(?: \[inline\])?"
    r"(?: \([A-Z]\))?|</?[A-Z]+>)\s*$"
)


def _held_lines(lines: list[LogLine]) -> list[LogLine]:
    """The lines with each "#N:" entry of a locks-held list that the console split over several lines joined.

    Lines printed by other CPUs at the same time cut an entry where printk continued it (pr_cont): "#0: " alone, then
    "ffff888021e92948", " (", "(wq_completion)usb_hub_wq){+.+.}-{0:0}, at: process_one_work+0x1277/0x1b40"; the
    inlined sites follow as ", at: rcu_read_lock ... [inline]" or "ffff... (&dev->mutex){....}-{3:3}, at: ..." without
    their "#N:".  Each is read as the whole "#N: addr (lock){..}, at: site" line it was, on the site's line.

    Other CPUs' lines may come between the pieces (syzkaller 244: a fault injection's stack, one frame between each
    two pieces).  A line is read as a piece only where it can be told to be one: of the entry's printk caller when
    the log names callers ([T1234], [C1]), and continuing what the entry printed so far (:data:`_ENTRY_SO_FAR`); a
    frame of another stack never is.  Another line is passed over, as the other CPU's, and kept where it is.
    """
    if not any(_opened(x.body) is not None for x in lines if "#" in x.body):
        return lines
    out: list[LogLine] = []
    # The entry being joined: its number, its text, its pieces, the other lines passed over, its printk caller.
    pending: tuple[str, str, int, int, str | None] | None = None
    last: tuple[str, str] | None = None  # the entry just joined: its number and its text before ", at:"
    for line in lines:
        body = line.body
        if "#" in body and (opened := _opened(body)) is not None:
            pending, last = (*opened, 0, 0, line.context), None
            continue
        if pending is not None:
            number, text, pieces, foreign, caller = pending
            joined = text + body if text else body.lstrip()
            if (
                (caller is not None and line.context is not None and line.context != caller)
                or _FOREIGN_LINE.match(body) is not None
                or _ENTRY_SO_FAR.fullmatch(joined) is None
            ):
                # Another CPU's line: kept as it is, the entry still open past a bounded number of them.
                pending = (number, text, pieces, foreign + 1, caller) if foreign + 1 < _SPLIT_FOREIGN else None
                out.append(line)
                continue
            if ", at: " in joined and _HELD.match(f"#{number}: {joined}") is not None:
                out.append(line._replace(body=f" #{number}: {joined}"))
                pending, last = None, (number, joined.partition(", at: ")[0])
            else:
                pending = (number, joined, pieces + 1, foreign, caller) if pieces + 1 < _SPLIT_PIECES else None
            continue
        if last is not None and ", at: " in body:
            number, lock = last
            if _AT_ONLY.match(body) or body.partition(", at: ")[0].strip() == lock.strip():
                out.append(line._replace(body=f" #{number}: {lock}, at: {body.partition(', at: ')[2]}"))
                continue
        last = None
        out.append(line)
    return out


def _opened(body: str) -> tuple[str, str] | None:
    """The number and the text so far of a "#N:" entry that the console cut on this line (the rest of it on lines
    below); None for a whole entry, or another line."""
    if ", at: " in body:
        return None  # (a whole entry, the common line: no pattern tried)
    m = _OPEN_HELD.match(body)
    if m is None or _HELD.match(body) is not None or _ENTRY_SO_FAR.fullmatch(m.group(2)) is None:
        return None
    return m.group(1), m.group(2)


def _held_by(m: re.Match[str], at: int) -> StalledTask | None:
    """A "N locks held by task/pid:" line: the task, and how many locks it holds (worded as the kernel words it).

    None when its pid is past 64 bits (not what a kernel prints).
    """
    count, pid = m.group(1), log_dec(m.group(3))
    if pid is None:
        return None
    return _new_tuple(StalledTask, (m.group(2), pid, f"{count} {'lock' if count == '1' else 'locks'} held", at))


def _add_held(r: _Reading, m: re.Match[str], task: str | None, line: LogLine) -> None:
    """A "#N: addr (lock){..}, at: site" line of a locks-held list.

    A symbolized log prints one such line per inlined function of the site ("at: rcu_lock_acquire ... [inline]",
    then "at: debug_show_all_locks+0x55/0x2a0"): the same lock #N of the same task, not another lock.  Its site
    is the last line's, the function that took it (the inlined ones are in it).
    """
    at = line.number - r.first
    held = _new_tuple(LockInfo, ("held", m.group(2), log_dec(m.group(1)), task, m.group(3), at))
    last = r.locks[-1] if r.locks else None
    if (
        last is not None
        and last.role == "held"
        and (last.number, last.name, last.task) == (held.number, held.name, task)
    ):
        r.locks[-1] = held
    else:
        r.locks.append(held)


class _HeldList(NamedTuple):
    """The locks-held list being read: its task ("comm/pid"), that pid, how many locks it names, the number and lock
    of its last "#N:" read, its heading's printk caller and line, and why its next entries cannot be told to be the
    task's (None while they can)."""

    task: str
    pid: str
    listed: int
    last: int
    last_lock: str | None
    caller: str | None
    line: int
    broken: str | None


def _held_list_line(r: _Reading, body: str, line: LogLine, held: _HeldList | None) -> _HeldList | None:
    """A line of lockdep's list of the locks the current task holds (lockdep_print_held_locks()), read: its "N locks
    held by comm/pid:" line (the count as the "locks held" fact, the task among the tasks) or one of its "#N:" entries
    (a lock the list's task holds).  The list as read after this line.

    An entry is the heading's task's only where its lines can be told to be: no other task's "CPU: N PID: P Comm:"
    between the heading and it, its number continuing the list's (above the last read, below the count; the same
    number again is an inlined site's line), and of the heading's printk caller where the log names callers.  The
    console interleaves the lists and stacks of tasks reporting at once (syzkaller 206: pid 5955's warn_alloc header
    between pid 5953's "1 lock held by" and its "#0:"); an entry that cannot be told to be the task's is not taken,
    and why is kept (:attr:`_Reading.held_unread`)."""
    if "held by" in body and (m := _HELD_BY.match(body)) is not None:
        if (held_by := _held_by(m, line.number - r.first)) is not None:
            r.tasks.append(held_by)
        task, count = f"{m.group(2)}/{m.group(3)}", int(m.group(1)) if m.group(1).isdigit() else 0
        open_ = held is not None and held.task != task and held.last + 1 < held.listed
        if held is not None and open_ and held.caller is not None and line.context not in (None, held.caller):
            return held  # another printk caller's list: the open one goes on with its caller's lines
        r.add("locks held", "none (lockdep)" if m.group(1) == "no" else m.group(1), line)
        new = _HeldList(task, m.group(3), count, -1, None, line.context, line.number, None)
        if held is not None and open_:
            # Another task's list begins before this one's entries are all printed, of the same printk caller (or
            # none named): the entries below may be either's.
            return new._replace(
                broken=f"{held.task}'s list of the locks held (line {held.line}) is not all printed "
                f"when {task}'s begins (line {line.number}): their entries cannot be told apart"
            )
        return new
    if held is None:
        if "#" in body and (m := _HELD.match(body)) is not None:
            _add_held(r, m, None, line)  # (no heading read: the entry is no task's)
        return None
    if "PID: " in body and (m := _CPU_COMM.search(body)) is not None and m.group(2) != held.pid:
        return held._replace(broken=held.broken or f"pid {m.group(2)}'s lines (line {line.number}) come between "
                             f"{held.task}'s list of the locks held and its entries")  # fmt: skip
    if "#" in body and (m := _HELD.match(body)) is not None:
        number = int(m.group(1))
        why = held.broken
        if why is None and held.caller is not None and line.context is not None and line.context != held.caller:
            why = (f"entry #{number} (line {line.number}) is printk caller {line.context}'s, {held.task}'s list of the "
                   f"locks held {held.caller}'s")  # fmt: skip
        # (#N again is an inlined site's line of the same lock; with another lock it is another list's #N)
        clash = number == held.last and m.group(2) != held.last_lock
        if why is None and (number < held.last or number >= held.listed or clash):
            why = f"entry #{number} (line {line.number}) does not continue {held.task}'s list of the locks held"
        if why is not None:
            r.held_unread = r.held_unread or why
            return held
        _add_held(r, m, held.task, line)
        return held._replace(last=number, last_lock=m.group(2))
    return held


def _entries_unread(r: _Reading) -> bool:
    """Whether lockdep's "N locks held" names more locks than the "#N:" entries read so far."""
    count = r.get("locks held")
    return (
        isinstance(count, str)
        and count.isdigit()
        and int(count) > len({lock.number for lock in r.locks if lock.role == "held"})
    )


#: Lines that name the task and the lock the next lock line is: (a word of the line, pattern, role).
#: An irq lock inversion says "task/pid just changed the state of lock:" (that lock and where).
_ROLE_TASK_LINES = (
    ("trying to acquire", _TRYING, "acquiring"),
    ("is trying to lock:", TRYING_TO_LOCK, "acquiring"),  # "[ BUG: Invalid wait context ]"
    (" takes:", rc.compile(r"^\s*(.+?)/(\d+) \["), "acquiring"),
    ("just changed the state of lock", rc.compile(r"^\s*(.+)/(\d+) just changed"), "changed"),
)


def _lockdep_role(r: _Reading, body: str, line: LogLine) -> str | None:
    """The role of the lock the next lock line names, when this line announces one (and the task it names)."""
    for word, pattern, role in _ROLE_TASK_LINES:
        if word in body and (m := pattern.search(body)) is not None:
            r.add("task", m.group(1), line)
            r.num("pid", m.group(2), line)
            return role
    if "already holding" in body and body.rstrip().endswith(":"):
        return "holding"
    if "Chain exists of:" in body:
        return "chain-exists"
    if "-irq-safe lock:" in body and "connects a" in body:
        return "irq-safe"  # "but this new dependency connects a HARDIRQ-irq-safe lock:"
    if "-irq-unsafe lock:" in body and body.lstrip().startswith("to a"):
        return "irq-unsafe"  # "to a HARDIRQ-irq-unsafe lock:"
    if "the dependencies between" in body and "-irq-safe lock and" in body:
        return "irq-safe"  # its first line "-> (L){...} {" names the safe lock (a log that lost the line above)
    if "but this lock " in body and "in the past" in body:
        # An irq lock inversion's other lock: "but this lock took another, HARDIRQ-unsafe lock in the past:" or
        # "... was taken by another, HARDIRQ-safe lock in the past:".
        return "other"
    return None


#: A lock line's site inlined from a header: "at: inode_lock include/linux/fs.h:756 [inline]".
_AT_INLINE = rc.compile(r", at: \S+ (\S+):\d+ \[inline\]\s*$")

#: The lock whose "at:" lines are being read: its role, its name, and whether its site so far is a header helper.
_Run = tuple[str, str, bool]


def _run_of(role: str, name: str, body: str) -> _Run:
    """The run a lock line opens: whether its site is a helper inlined from a header (a lock wrapper)."""
    m = _AT_INLINE.search(body) if "[inline]" in body else None
    return role, name, m is not None and header_inline(True, m.group(1))


def _lock_site_continued(r: _Reading, run: _Run | None, body: str, line: LogLine) -> _Run | None:
    """The run, when a line continues the "at:" lines of the lock just read, choosing the site that took it.

    A symbolized log prints one "at:" line per inlined function of the site, innermost first ("at: spin_lock
    ... [inline]", "at: class_spinlock_irqsave_constructor ... [inline]", "at: snd_timer_interrupt+0x31/0xd80"):
    the site is the first that is not a lock primitive or wrapper (the lock-chain stacks' skips, and the helpers
    inlined from a header: "at: filemap_invalidate_lock include/linux/fs.h:801 [inline]" then "at:
    ext4_setattr+0x804/0xb38"), else the last line's, the function the wrappers were inlined into.  ``run``: the
    role and the name of the lock just read, and whether its site is such a header helper.
    """
    if run is None or "at: " not in body or (m := _LOCK_AT.match(body)) is None or m.group(1) != run[1]:
        return None
    role, name, header = run
    lock = r.locks[-1]
    if m.group(2) and lock.site and (header or is_skipped(LOCK_PRIMITIVES, function_name(lock.site.split("+")[0]))):
        at = line.number - r.first
        r.locks[-1] = lock._replace(site=m.group(2), at=at)
        r.facts = [_fact(f.name, m.group(2), at) if f.name == f"{role} at" else f for f in r.facts]
        return _run_of(role, name, body)
    return role, name, False


#: An IRQ-safety report's "... which became HARDIRQ-irq-safe at:" (and "-irq-unsafe"): the stack that follows is
#: where the lock first got that usage (lockdep's usage trace).
_BECAME = rc.compile(r"which became \S+-irq-(safe|unsafe) at:")
#: The safe lock as the dependencies' heading names it: "-> (&ctx->completion_lock#2){-...}-{2:2} {".
_DEPENDENCY_LOCK = rc.compile(r"^\s*-> \((.*)\)\{[^}]*\}(?:-\{[^}]*\})?\s*\{\s*$")


def _irq_lock(r: _Reading, role: str, body: str, line: LogLine) -> bool:
    """An IRQ-safety report's safe or unsafe lock line (``role`` "irq-safe", "irq-unsafe"): its fact, once."""
    m = _LOCK_AT.match(body) or _DEPENDENCY_LOCK.match(body)
    if m is None:
        return False
    if r.get(f"{role} lock") is None:
        r.add(f"{role} lock", m.group(1), line)
    return True


def _became_at(r: _Reading, usage: str, body: str, line: LogLine) -> str | None:
    """Reading the stack of "... which became X-irq-``usage`` at:": None once its first foreign frame is read (the
    fact ``irq-<usage> at``, the function that took the lock) or the stack ended, else ``usage`` (read on)."""
    if body.strip() == "...":
        return usage  # lockdep's mark of a trace it cut short at the top
    m = _SITE.match(body)
    if m is None:
        return None
    name = function_name(m.group(1).partition("+")[0])
    if is_skipped((), name):
        return usage
    r.add(f"irq-{usage} at", name, line)
    return None


def _irq_usage_line(
    r: _Reading, became: str | None, role: str | None, body: str, line: LogLine
) -> tuple[bool, str | None, str | None]:
    """An IRQ-safety report's line: a frame of a "which became ... at:" stack (``became``), such a heading, or the
    safe or unsafe lock (``role``).  Whether the line was read so, and the stack and the role read on."""
    if became is not None and (became := _became_at(r, became, body, line)) is not None:
        return True, became, role
    if "which became" in body and (m := _BECAME.search(body)) is not None:
        return True, (None if r.get(f"irq-{m.group(1)} at") is not None else m.group(1)), role
    if role is not None and role in ("irq-safe", "irq-unsafe") and _irq_lock(r, role, body, line):
        return True, None, None
    return False, None, role


def _lockdep(r: _Reading) -> None:
    role = None  # which lock the next lock line names
    run: _Run | None = None  # the lock whose "at:" lines are being read
    scenario_cpu_column: int | None = None
    became: str | None = None  # the usage ("safe", "unsafe") whose "which became ... at:" stack is being read
    chain_sections = [s for s in r.stacks if s.kind is _SK_LOCK_CHAIN]
    for line in _held_lines(r.lines):
        body = line.body
        if (run := _lock_site_continued(r, run, body, line)) is not None:
            continue
        read, became, role = _irq_usage_line(r, became, role, body, line)
        if read:
            continue
        if (
            ("WARNING:" in body or "INFO:" in body)
            and (m := _LOCKDEP_KIND.search(body)) is not None
            and r.get("lockdep") is None
        ):
            r.add("lockdep", m.group(1), line)
            continue
        if (opened := _lockdep_role(r, body, line)) is not None:
            role = opened
            continue
        if "trying to release" in body and (m := _RELEASING.search(body)) is not None:
            r.add("task", m.group(1), line)
            r.num("pid", m.group(2), line)
            r.add("releasing lock", m.group(3), line)
            role = "releasing"
            continue
        if role == "releasing" and (m := _SITE.match(body)) is not None:
            r.add("releasing at", m.group(1), line)
            r.locks.append(_new_tuple(LockInfo, ("releasing", str(r.get("releasing lock")), None, None, m.group(1),
                                                 line.number - r.first)))  # fmt: skip
            role = None
            continue
        if "usage" in body and (m := _INCONSISTENT.search(body)) is not None:
            r.add("usage", f"{m.group(1)} -> {m.group(2)}", line)
            continue
        if role is not None and (m := _LOCK_AT.match(body)) is not None:
            # The "other" lock of an irq inversion was taken by some context in the past, not by this task now.
            task = f"{r.get('task')}/{r.get('pid')}" if r.get("task") and role != "other" else None
            r.locks.append(_new_tuple(LockInfo, (role, m.group(1), None, task, m.group(2), line.number - r.first)))
            r.add(f"{role} lock", m.group(1), line)
            if m.group(2):
                r.add(f"{role} at", m.group(2), line)
            run = _run_of(role, m.group(1), body)
            role = None
            continue
        if "-> #" in body and (m := _CHAIN.match(body)) is not None:
            section = next((s for s in chain_sections if s.at == line.number - r.first), None)
            site = section.first_foreign.function if section and section.first_foreign else None
            r.locks.append(
                _new_tuple(LockInfo, ("chain", m.group(2), log_dec(m.group(1)), None, site, line.number - r.first))
            )
            continue
        if "held by" in body and (m := _HELD_BY.search(body)) is not None:
            if (held_by := _held_by(m, line.number - r.first)) is not None:
                r.tasks.append(held_by)
            continue
        if "#" in body and (m := _HELD.match(body)) is not None:
            owner = r.tasks[-1] if r.tasks else None
            _add_held(r, m, f"{owner.comm}/{owner.pid}" if owner is not None else None, line)
            continue
        if role == "chain-exists" and (m := _CHAIN_EXISTS.match(body)) is not None:
            r.add("chain", m.group(1), line)
            role = None
            continue
        if "CPU0" in body and ("CPU1" in body or body.strip() == "CPU0"):
            scenario_cpu_column = body.index("CPU1") if "CPU1" in body else None
            continue
        if "*** DEADLOCK ***" in body:
            scenario_cpu_column = None
            continue
        if scenario_cpu_column is not None and (m := _SCENARIO.match(body)) is not None:
            cpu = "CPU1" if len(m.group(1)) >= scenario_cpu_column - 2 else "CPU0"
            lock = m.group(3).strip() if m.group(2) != "<Interrupt>" else "<Interrupt>"
            r.facts.append(_fact(f"scenario {cpu}", f"{m.group(2)}({lock})" if lock != "<Interrupt>" else lock,
                                   line.number - r.first))  # fmt: skip
    if r.get("chain") is None and (links := [k for k in r.locks if k.role == "chain"]):
        r.facts.append(_fact("chain", " --> ".join(k.name for k in links), links[0].at))


# ---------------------------------------------------------------- RCU stalls and hung tasks

_RCU_HEAD = rc.compile(
    r"INFO: (rcu_\w+) (self-detected stall on CPU|detected (?:expedited )?stalls? on (?:CPUs/tasks|tasks))"
)
# "\t1-...!: (3 GPs behind) idle=..." (flags since 4.x), "\t0: (104999 ticks this GP) idle=..." (older).
_RCU_CPU = rc.compile(r"^\s*(?:rcu:\s*)?(\d+)(?:-([.O][.o][.N][.D!]?\S*))?:? \((.*?)\)(.*)$")
_RCU_ALL_QS = rc.compile(r"All QSes seen, last (rcu_\w+) kthread activity (\d+)")
_RCU_TASK_DUMP = rc.compile(r"Task dump for CPU (\d+):")
# "syz-executor R  running task" (older) and "task:syz-executor    state:R  running task" (5.x on).
_RUNNING_TASK = rc.compile(r"^\s*(?:task:)?(\S+)\s+(?:state:)?R\s+running task")
_RCU_CPU_OLD = rc.compile(r"\{\s*([\d ]+)\}")
_RCU_T = rc.compile(r"t=(\d+) jiffies(?:,? g=(-?\d+))?")
_RCU_DETECTED_BY = rc.compile(r"detected by (\d+)")
_RCU_TASKS_BLOCKED = rc.compile(r"Tasks blocked on level-\d+ rcu_node \(CPUs [\d-]+\): (.*)$")
_RCU_TASK = rc.compile(r"P(\d+)(?:/\S+)?")
# "rcu_preempt kthread starved for 10492 jiffies! g12045 f0x0 RCU_GP_WAIT_FQS(5) ->state=0x0 ->cpu=0": the task
# state of the grace-period kthread and the CPU it last ran on (4.x on).
_RCU_STARVED = rc.compile(
    r"(rcu_\w+) kthread starved for (\d+) jiffies(?:.*?->state=(0x[0-9a-f]+))?(?:.*?->cpu=(\d+))?"
)
_RCU_FQS = rc.compile(r"\bfqs=(\d+)")
_CPU_COMM = rc.compile(r"CPU: (\d+) (?:UID: \d+ )?PID: (\d+) Comm: (\S+)")
_RCU_TASKS_TASK = rc.compile(r"^\s*task:(\S+)\s+state:(\S+).*?pid:\s*(\d+)")


def _rcu_stall(r: _Reading) -> None:
    for line in r.lines:
        body = line.body
        if "INFO: rcu" in body and (m := _RCU_HEAD.search(body)):
            r.add("flavour", m.group(1), line)
            r.add("stall", m.group(2), line)
            if (old := _RCU_CPU_OLD.search(body[m.end() :])) is not None:
                for cpu in old.group(1).split():
                    r.cpu(cpu, "stalled", line)
        elif (
            body.lstrip(" \trcu:")[:1].isdigit()
            and (m := _RCU_CPU.match(body)) is not None
            and not r.tasks
            and len(r.cpus) < 64
        ):
            r.cpu(m.group(1), f"{m.group(2) or ''} ({m.group(3)}){m.group(4)}".strip(), line)
            if "ticks this GP" in m.group(3):
                r.num("ticks this grace period", m.group(3).split()[0], line)
        elif "Tasks blocked" in body and (m := _RCU_TASKS_BLOCKED.search(body)) is not None:
            for p in _RCU_TASK.finditer(m.group(1)):
                r.task(None, p.group(1), "blocks the grace period", line)
        elif "rcu_tasks" in str(r.get("flavour") or "") and (m := _RCU_TASKS_TASK.search(body)) is not None:
            r.task(m.group(1), m.group(3), f"state {m.group(2)}", line)
        if "jiffies" in body and (m := _RCU_T.search(body)) is not None and r.get("stalled jiffies") is None:
            r.num("stalled jiffies", m.group(1), line)
            if m.group(2):
                r.num("grace period", m.group(2), line)
        if (
            "detected by" in body
            and (m := _RCU_DETECTED_BY.search(body)) is not None
            and r.get("detected by CPU") is None
        ):
            r.num("detected by CPU", m.group(1), line)
        if "starved" in body and (m := _RCU_STARVED.search(body)) is not None:
            r.num("kthread starved jiffies", m.group(2), line)
            r.add("kthread state", m.group(3), line)
            if m.group(4):
                r.num("kthread last ran on CPU", m.group(4), line)
        if "All QSes" in body and (m := _RCU_ALL_QS.search(body)) is not None:
            r.add("all quiescent states seen", "yes", line)
            r.num("kthread inactive jiffies", m.group(2), line)
        if "Task dump" in body and (m := _RCU_TASK_DUMP.search(body)) is not None:
            r.num("task dump for CPU", m.group(1), line)
    _rcu_running_task(r)
    _name_rcu_tasks(r)
    if r.cpus:
        r.facts.append(_fact("stalled CPUs", ",".join(str(c.cpu) for c in r.cpus), r.cpus[0].at))
    if r.tasks:
        r.facts.append(_fact("stalled tasks", ",".join(str(t.pid) for t in r.tasks), r.tasks[0].at))
    if isinstance(r.report.frame, str):
        r.facts.append(_fact("running", r.report.frame, _frame_at(r, r.report.frame)))


def _rcu_running_task(r: _Reading) -> None:
    """The task that ran: a stalled CPU's "task:X state:R running task" dump, or the task on the CPU where a starved
    grace-period kthread last ran ("Stack dump where RCU GP kthread last ran:", then that CPU's NMI backtrace).

    The kthread's own dump ("task:rcu_preempt state:R running task") is not it: runnable, it did not run.
    """
    last_ran = False
    for line in r.lines:
        body = line.body
        if "running task" in body and (m := _RUNNING_TASK.match(body)) is not None and m.group(1) != r.get("flavour"):
            r.add("running task", m.group(1), line)
            return
        if "GP kthread last ran" in body:
            last_ran = True
        elif last_ran and "Comm:" in body and (m := _CPU_COMM.search(body)) is not None:
            r.add("running task", m.group(3), line)
            r.num("running pid", m.group(2), line)
            r.num("running on CPU", m.group(1), line)
            return


def _name_rcu_tasks(r: _Reading) -> None:
    """Name the tasks "Tasks blocked on level-0 rcu_node (CPUs 0-1): P5930" gives by pid, from their dump's
    "task:syz-executor state:R ... pid:5930" line."""
    if not any(t.comm is None for t in r.tasks):
        return
    for line in r.lines:
        if "task:" in line.body and (m := _RCU_TASKS_TASK.search(line.body)) is not None:
            pid = log_dec(m.group(3))
            r.tasks = [t._replace(comm=m.group(1)) if t.pid == pid and t.comm is None else t for t in r.tasks]


def _frame_at(r: _Reading, function: str) -> int:
    """The line of the first reliable frame of ``function`` in the report, else of its first "?" frame (a stack word
    the unwinder did not confirm, its offset maybe not the frame's: the fixture's "? kf_waiter_update+0x20/0x20"
    above "kf_waiter_update+0xc/0x20"); else, for the report's frame read past its own lines (a stall's CPU after
    another report's header), that line; else the header."""
    unconfirmed: int | None = None
    for section in r.stacks:
        for frame in section.frames:
            if frame.function == function:
                if frame.reliable:
                    return frame.at
                unconfirmed = frame.at if unconfirmed is None else unconfirmed
    if unconfirmed is not None:
        return unconfirmed
    # (a frame of the report's trace that its stack sections do not hold: an allocation failure's read below the
    # header of another CPU's report that cut its trace short, detectors/dmesg/extract.py frames_below_cut)
    traced = next((f.line for f in r.report.trace if f.function == function and f.reliable), None)
    if traced is not None and traced >= r.first:
        return traced - r.first
    past = r.report.frame_past
    return past[0] if past is not None and function == r.report.frame else 0


_HUNG_HEAD = rc.compile(r"INFO: task (.+?):(\d+) (?:blocked|can't die) (?:in I/O wait )?for more than (\d+) seconds")
_TASK_LINE = rc.compile(r"^\s*task:(.+?)\s+state:(\S+)")
_BLOCKED_ON = rc.compile(
    r"INFO: task (.+?):(\d+) is blocked on an? (\S+)(?: at \S+)?, but the owner is task (.+?):(\d+)"
    r"|INFO: task (.+?):(\d+) is blocked on an? (\S+) likely owned by task (.+?):(\d+)"
)
_PREEMPTED = "the CPU (preempted in an interrupt)"
#: The interrupt entry and the irqflags helpers between a preemption in an interrupt and the function the interrupt
#: hit (arm64's el1h_64_irq <- el1_interrupt <- __el1_irq, x86's asm_sysvec_* and irqentry_exit).
_IRQ_ENTRY = rc.compile(
    r"^_*el1h?_64_irq|^_*el1_irq$|^el1_interrupt$|^irqentry_exit|^(?:asm_)?sysvec_|^(?:asm_)?common_interrupt$|"
    r"^_*(?:daif_|arch_)?local_irq_restore$"
)
#: Wait primitives a hung task's stack shows, most specific first: (frame pattern, what it waits for).
WAIT_PRIMITIVES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (rc.compile(p), what)
    for p, what in (
        (r"^rtnl_lock", "the rtnl mutex"),
        (r"^_*mutex_lock|^mutex_lock", "a mutex"),
        (r"^rwsem_down_read|^down_read", "an rw-semaphore (read)"),
        (r"^rwsem_down_write|^down_write", "an rw-semaphore (write)"),
        (r"^_*down(?:_interruptible|_killable|_timeout)?$", "a semaphore"),
        (r"^_*synchronize_(?:rcu|srcu|net|sched)", "an RCU grace period"),
        (r"^wait_for_completion|^_*wait_for_common", "a completion"),
        (
            r"^(?:io_schedule|folio_wait_bit|wait_on_page_bit|__folio_lock|__lock_page|bit_wait_io)",
            "I/O or a page lock",
        ),
        (
            r"^(?:flush_work|__flush_work|flush_delayed_work|flush_workqueue|__flush_workqueue|drain_workqueue)",
            "work to finish",
        ),
        (r"^rt_mutex|^__rt_mutex", "an rt-mutex"),
        # Preempted on the way out of an interrupt, with its state already set to sleep: the task waits for
        # nothing but to run again (its CPU was kept busy, or the wakeup it set up for was lost).
        (r"^(?:arm64_)?preempt_schedule_irq$", _PREEMPTED),
        (r"^percpu_down_write|^percpu_rwsem_wait", "a per-CPU rw-semaphore"),
    )
)


def _hung_task(r: _Reading) -> None:
    for line in _held_lines(r.lines):
        body = line.body
        if "INFO: task" in body and (m := _HUNG_HEAD.search(body)) is not None and r.get("task") is None:
            r.add("task", m.group(1), line)
            r.num("pid", m.group(2), line)
            r.num("blocked seconds", m.group(3), line)
        elif "task:" in body and (m := _TASK_LINE.match(body)) is not None and r.get("state") is None:
            r.add("state", m.group(2), line)
        elif "blocked on" in body and (m := _BLOCKED_ON.search(body)) is not None:
            g = m.groups()
            lock, owner, pid = (g[2], g[3], g[4]) if g[0] else (g[7], g[8], g[9])
            r.add("blocked on", lock, line)
            r.add("lock owner", owner, line)
            r.num("lock owner pid", pid, line)
            r.locks.append(
                _new_tuple(LockInfo, ("blocked-on", lock, None, f"{owner}/{pid}", None, line.number - r.first))
            )
        elif "held by" in body and (m := _HELD_BY.search(body)) is not None:
            if (held_by := _held_by(m, line.number - r.first)) is not None:
                r.tasks.append(held_by)
        elif "#" in body and (m := _HELD.match(body)) is not None and r.tasks:
            owner = r.tasks[-1]
            _add_held(r, m, f"{owner.comm}/{owner.pid}", line)
    # Each call trace of another CPU's dump labelled with that CPU: khungtaskd's NMI backtraces and its panic's stack
    # are where those CPUs were, with other tasks (syzkaller's log 254: CPU 0 printing to the serial console while
    # init waits for console_sem); the blocked tasks' stacks, before the first dump, are on no CPU.
    blocks = cpu_blocks(r.report.lines, -1)[1:]  # (cpu_blocks's first block, the lines before any dump, left out)
    if blocks:
        r.stacks[:] = [
            s._replace(cpu=cpu_of(blocks, r.first + s.at)) if s.kind is _SK_CALL_TRACE else s for s in r.stacks
        ]
    trace = next((s for s in r.stacks if s.kind is _SK_CALL_TRACE and s.cpu is None), None)
    if trace is None:
        return
    if (wait := _wait_of(trace)) is not None:
        what, frame = wait
        r.facts.append(_fact("waits for", what, frame.at))
        r.facts.append(_fact("wait primitive", frame.function, frame.at))
    titled = r.report.frame
    if wait is not None and wait[0] == _PREEMPTED and (hit := _interrupted(trace, wait[1])) is not None:
        # Where it was preempted: the function the interrupt hit, not the interrupt entry a title names.
        r.facts.append(_fact("waits in", hit.function, hit.at))
    elif isinstance(titled, str) and any(f.function == titled for f in trace.frames):
        r.facts.append(_fact("waits in", titled, _frame_at(r, titled)))
    elif wait is not None and (caller := _caller_of(trace, wait[1])) is not None:
        # The title names a function the stack does not hold (a hung task "in synchronize_rcu" whose stack waits
        # in __synchronize_srcu): the caller of the wait is where it waits.
        r.facts.append(_fact("waits in", caller.function, caller.at))


def _wait_of(trace: StackSection) -> tuple[str, StackFrame] | None:
    """What a hung task waits for and the primitive it waits in: the innermost wait primitive of its stack.

    A completion is how other waits are built (synchronize_srcu, flush_work wait for one): when the frames right
    above it are wait primitives of another kind, the outermost of them says what the completion stands for
    (``__wait_for_common`` <- ``__synchronize_srcu``: an RCU grace period).
    """
    found: tuple[str, StackFrame] | None = None
    for frame in trace.frames:
        if not frame.reliable:
            continue
        what = next((w for p, w in WAIT_PRIMITIVES if p.search(frame.function)), None)
        if found is None:
            found = (what, frame) if what is not None else None
        elif what is None:
            break  # the run of wait primitives ended at their caller
        elif found[0] == "a completion" and what != found[0]:
            found = (what, frame)
    return found


def _interrupted(trace: StackSection, primitive: StackFrame) -> StackFrame | None:
    """The function an interrupt hit: the first reliable frame past the preemption and the interrupt entry."""
    frames = [f for f in trace.frames if f.reliable]
    past = frames[frames.index(primitive) + 1 :]
    return next(
        (
            f
            for f in past
            if not _IRQ_ENTRY.search(f.function) and not any(p.search(f.function) for p, _ in WAIT_PRIMITIVES)
        ),
        None,
    )


def _caller_of(trace: StackSection, primitive: StackFrame) -> StackFrame | None:
    """The first reliable frame above the run of wait primitives that ``primitive`` is part of."""
    frames = [f for f in trace.frames if f.reliable]
    start = frames.index(primitive)
    return next((f for f in frames[start:] if not any(p.search(f.function) for p, _ in WAIT_PRIMITIVES)), None)


class _Held(NamedTuple):
    """One "#N:" entry of a "Showing all locks held in the system:" list (``line``: its absolute line number)."""

    task: str  # "comm/pid", as "N locks held by comm/pid:" names it
    number: int
    address: str | None  # the lock's address (its instance); None when the console lost it
    name: str
    site: str | None
    line: int


_HELD_ADDRESS = rc.compile(r"^\s*#\d+:\s+([0-9a-f]{8,16}) \(")


def _locks_list(report: KernelReport) -> list[_Held]:
    """The "Showing all locks held in the system:" list of a report, each entry with its task and address.

    A symbolized log prints one line per inlined function of a site: the last of them is the entry (its site is the
    function that took the lock), as :func:`_add_held` keeps it.
    """
    if not any("Showing all locks held" in text for _, text in report.lines):
        return []
    lines = _held_lines(list(own_lines(report)))
    start = next(i for i, x in enumerate(lines) if "Showing all locks held" in x.body)
    out: list[_Held] = []
    task: str | None = None
    for line in lines[start + 1 :]:
        body = line.body
        if "=====" in body:
            break
        if "held by" in body and (m := _HELD_BY.search(body)) is not None:
            task = f"{m.group(2)}/{m.group(3)}"
        elif (
            task is not None
            and "#" in body
            and (m := _HELD.match(body)) is not None
            and (number := log_dec(m.group(1))) is not None
        ):
            address = _HELD_ADDRESS.match(body)
            held = _new_tuple(_Held, (task, number, address.group(1) if address else None, m.group(2), m.group(3),
                                      line.number))  # fmt: skip
            if out and (out[-1].task, out[-1].number, out[-1].name) == (task, held.number, held.name):
                out[-1] = held
            else:
                out.append(held)
    return out


def _entry_waited_on(listed: Sequence[_Held], own: str, trace: StackSection) -> _Held | None:
    """The lock a hung task waits for: its own entry of the locks list taken at a frame of its stack.

    lockdep records a sleeping lock as held when it is requested, before the task sleeps for it: the task's own
    entry whose site ("at: hugetlb_fault+0x56f/0x3770") is a frame of its stack (the same offset) is the lock it
    waits for.  Only a frame with the site's offset counts, or the inlined frame a symbolized site names.
    """
    frames = {(f.symbol, f.offset) for f in trace.frames if f.reliable}
    for held in listed:
        if held.task != own or not held.site:
            continue
        symbol, _, offset = held.site.partition("+")
        if (symbol, log_hex(offset.split("/")[0]) if offset else None) in frames:
            return held
    return None


def _holder_of(listed: Sequence[_Held], waited: _Held, waiters: set[str], past: set[str]) -> _Held | None:
    """The one other task whose entry is the same lock (name and address), not a known waiter of it; else None.

    Several such tasks are the holder and waiters not yet reported (lockdep lists a waiter's lock too): the holder
    is then the one of them ``past`` names (a hung task of the pass whose stack is past the lock: blocked in
    something else, an RCU grace period, a completion, another lock), when exactly one is; else no guess.
    A running holder's entries are not printed ("N locks held by t/p:" alone): no holder either.
    """
    if waited.address is None:
        return None
    lock = (waited.name, waited.address)
    others = {
        h.task: h for h in listed if h.task != waited.task and h.task not in waiters and (h.name, h.address) == lock
    }
    if len(others) == 1:
        return next(iter(others.values()))
    known = [h for task, h in others.items() if task in past]
    return known[0] if len(known) == 1 else None


def _past_lock(why: ReportWhy, entry: _Held | None, lock: tuple[str, str | None]) -> bool:
    """Whether a hung task of the pass is known not to wait for ``lock`` (name, address): its stack waits for
    something that is no lock (an RCU grace period, a completion, I/O), or for another lock of the list."""
    if entry is not None:
        return (entry.name, entry.address) != lock
    waits = why.fact("waits for")
    return waits is not None and waits not in _LOCK_WAIT_WORDS


def read_hung_pass(members: Sequence[tuple[KernelReport, ReportWhy]]) -> list[ReportWhy]:
    """The hung tasks of one khungtaskd pass read across its reports: each one's lock and who holds it.

    khungtaskd prints each hung task's report, then one "Showing all locks held in the system:" list after the
    last of them (in that report's lines).  For each task of the pass: its own entry of the list that is the lock it
    waits for (``waits for lock``) and the other task whose entry is the same lock (``lock holder``: the task, its
    pid and the function that took it), each fact at its own line of the list (an offset past the end of an earlier
    report's own lines, whose texts ``read_past`` carries for the finding's evidence).  The cause of a task whose
    holder is known names it.  A hung task of the pass that holds the lock others wait for gets ``holds lock`` and
    ``lock waiters`` (how many other tasks the list shows with it, and how many of them were reported hung): its
    cause is the cascade's, the one the others wait behind.
    """
    listed = _locks_list(members[-1][0])
    if not listed:
        return [why for _, why in members]
    list_texts = dict(members[-1][0].lines)
    waited: list[_Held | None] = []
    owns: list[str] = []
    for _report, why in members:
        trace = next((s for s in why.stacks if s.kind is _SK_CALL_TRACE), None)
        own = f"{why.fact('task')}/{why.fact('pid')}"
        owns.append(own)
        waited.append(None if trace is None else _entry_waited_on(listed, own, trace))
    # The lock each holder found holds, the tasks the list shows with it and those of them reported hung.
    holding: dict[str, tuple[_Held, set[str], set[str]]] = {}
    holders: list[_Held | None] = []
    for entry in waited:
        if entry is None:
            holders.append(None)
            continue
        lock = (entry.name, entry.address)
        waiters = {w.task for w in waited if w is not None and (w.name, w.address) == lock}
        past = {o for (_, w), o, e in zip(members, owns, waited, strict=True) if _past_lock(w, e, lock)}
        # A hung task of the pass whose stack is in a lock's wait (its entry not read as the one it waits for) may
        # wait for this one: lockdep lists it as held from the request on, so it is never taken for the holder.
        holder = _holder_of(listed, entry, waiters | (set(owns) - past), past)
        holders.append(holder)
        if holder is not None and holder.task in owns:
            others = {h.task for h in listed if (h.name, h.address) == lock} - {holder.task}
            holding[holder.task] = (holder, others, waiters)
    out: list[ReportWhy] = []
    for (report, why), own, entry, holder in zip(members, owns, waited, holders, strict=True):
        facts = list(why.facts)
        cited: set[int] = set()
        if entry is not None:
            facts.append(_fact("waits for lock", entry.name, entry.line - report.start_line))
            cited.add(entry.line)
        if holder is not None:
            comm, _, pid = holder.task.rpartition("/")
            held_at = holder.line - report.start_line
            holder_pid = log_dec(pid)
            facts += [
                _fact("lock holder", comm, held_at),
                _fact("lock holder pid", holder_pid if holder_pid is not None else _past_64_bits(pid), held_at),
            ]
            if holder.site:
                facts.append(_fact("lock held since", function_name(holder.site.partition("+")[0]), held_at))
            cited.add(holder.line)
        held = holding.get(own)
        if held is not None:
            lock_entry, others, hung = held
            at = lock_entry.line - report.start_line
            facts += [
                _fact("holds lock", lock_entry.name, at),
                _fact("lock waiters", len(others), at),
                _fact("lock waiters hung", len(hung & others), at),
            ]
            cited.add(lock_entry.line)
        if not cited:
            out.append(why)
            continue
        r = _Reading(report, [], report.start_line, [f for f in facts if f.name != "root cause"], list(why.stacks))
        cause, cause_at = _conclude(r)
        # The texts of the list lines cited past this report's own (every task's but the last's), for its evidence.
        own_lines = {n for n, _ in report.lines}
        read_past = tuple((n - report.start_line, list_texts[n]) for n in sorted(cited - own_lines) if n in list_texts)
        out.append(why._replace(facts=tuple(r.facts), cause=cause, cause_at=cause_at, read_past=read_past))
    return out


_SOFT_LOCKUP = rc.compile(r"BUG: soft lockup - CPU#(\d+) stuck for (\d+)s! \[(.+):(\d+)\]")
_HARD_LOCKUP = rc.compile(r"(?:Watchdog detected hard LOCKUP|BUG: hard lockup) on cpu (\d+)")


#: A kernel instruction-pointer line: x86's "RIP: 0010:f+0x1/0x2" (i386's "EIP: 0060:").
_KERNEL_IP = rc.compile(r"\b(?:RIP|EIP): (?:0010|0060):")


def _lockup(r: _Reading) -> None:
    for line in r.lines:
        body = line.body
        if "soft lockup" in body and (m := _SOFT_LOCKUP.search(body)) is not None:
            r.add("lockup", "soft", line)
            r.num("CPU", m.group(1), line)
            r.num("stuck seconds", m.group(2), line)
            r.add("task", m.group(3), line)
            r.num("pid", m.group(4), line)
        elif ("LOCKUP" in body or "hard lockup" in body) and (m := _HARD_LOCKUP.search(body)) is not None:
            r.add("lockup", "hard", line)
            r.num("CPU", m.group(1), line)
    cpu = r.report.cpu
    if isinstance(cpu, int):
        # Each call trace labelled with the CPU whose dump holds it: another CPU's NMI backtrace in the report is
        # where that CPU was, with another task, not the stuck CPU's stack (syzkaller's log 264: CPU 0's d_walk).
        blocks = cpu_blocks(r.report.lines, cpu)
        r.stacks[:] = [
            s._replace(cpu=cpu_of(blocks, r.first + s.at)) if s.kind is _SK_CALL_TRACE else s for s in r.stacks
        ]
    if isinstance(r.report.frame, str):
        at = _own_frame_at(r, r.report.frame, cpu) if isinstance(cpu, int) else _frame_at(r, r.report.frame)
        r.facts.append(_fact("spins in", r.report.frame, at))


def _own_frame_at(r: _Reading, function: str, cpu: int) -> int:
    """The line of the stuck CPU's frame of ``function``, from its own lines (not another CPU's NMI backtrace in
    the report, detectors.dmesg.cpublocks): its first call-trace frame, else its kernel ``RIP:`` line (the loop's
    own frame, which a trace after an interrupt does not repeat); else as :func:`_frame_at` finds it past its
    lines, else the header."""
    foreign = other_cpu_lines(r.report.lines, cpu)
    for section in r.stacks:
        for frame in section.frames:
            if frame.function == function and frame.at + r.first not in foreign:
                return frame.at
    at_offset = f":{function}+0x"
    for number, text in r.report.lines:
        if at_offset in text and number not in foreign and _KERNEL_IP.search(text) is not None:
            return number - r.first
    past = r.report.frame_past
    return past[0] if past is not None else 0


# ---------------------------------------------------------------- corruption

_LIST_MESSAGE = rc.compile(
    r"(list_add|list_del) corruption[.,] (?:"
    r"(prev->next|next->prev) should be (?:next|prev)? ?\(?([0-9a-f]+)\)?, but was ([0-9a-f]+|\(null\))"
    r"(?:\. \((prev|next)=([0-9a-f]+)\))?"
    r"|([0-9a-f]+)->(next|prev) is (LIST_POISON[12]|NULL) \(([0-9a-f]+|\(null\))\)"
    r"|(next|prev) is NULL"
    r")"
)
_LIST_DOUBLE_ADD = rc.compile(r"list_add double add: new=([0-9a-f]+), prev=([0-9a-f]+), next=([0-9a-f]+)")


#: Poison values a faulting address is a member offset away from (a pointer read from poisoned memory,
#: then a member read through it): the address's own class would be misleading (0x6b6b...73 spells text).
_POISON_BASES = ((LIST_POISON1, "LIST_POISON1"), (LIST_POISON2, "LIST_POISON2"))
_POISON_BYTES = {0x6B: "slab poison 0x6b (POISON_FREE): a pointer read from freed memory", 0x5A: "slab poison 0x5a "
                 "(POISON_INUSE): a pointer read from memory never initialised", 0xCC: "SLUB red zone 0xcc",
                 0xBB: "SLUB red zone 0xbb"}  # fmt: skip


def _poison_plus_offset(value: int) -> str | None:
    """``slab poison 0x6b (POISON_FREE) plus 0x8: ...`` for an address a small offset past a poison value."""
    # The nearest base below: LIST_POISON2 (0x122 + delta) is itself LIST_POISON1 plus 0x22, and is named as
    # itself by classify_value (ue12 #7: 0xdead000000000122 read "LIST_POISON1 plus 0x22").
    for base, name in sorted(_POISON_BASES, reverse=True):
        if value == base:
            return None
        if 0 < value - base < 0x1000:
            return f"{name} plus {value - base:#x}: a member read through a list pointer of a deleted entry"
    raw = (value & 0xFFFFFFFFFFFFFFFF).to_bytes(8, "little")
    if len(set(raw[2:])) == 1 and raw[7] in _POISON_BYTES:
        offset = value - int.from_bytes(bytes([raw[7]]) * 8, "little")
        if 0 < offset < 0x1000:
            return f"{_POISON_BYTES[raw[7]]}, plus {offset:#x}: a member read through that pointer"
    return None


#: The end of the values :func:`detectors.pointers.classify_value` calls small counts (its user range starts there).
_LOW_VALUES_END: Final = 0x400000


#: The architecture a report's register dump is of, by the names it prints, first match: x86-64's RAX/RIP, arm64's
#: x29 and pstate (and its "pc : symbol"), 32-bit arm's "pc : [<8 digits>]", r10 and psr, i386's EAX/EIP.  Each
#: pattern comes with the words one of which every match of it holds: the pattern is searched from the line of the
#: first word found, and not at all in a report naming none, where its search (its alternatives start with ``\b``,
#: so ``re`` has no literal to skip ahead to) tried every position of the report's text: 7% of the corpus x4's run
#: (issue 28).  tests/detectors/dmesg/test_why_arch.py checks the words against the patterns.
_ARCH_REGISTERS: Final = (
    # (a 3.x kernel's "IP: [<ffffffff810a376f>] f+0x1f/0x280" above its registers: a 64-bit instruction pointer)
    (
        "x86_64",
        ("RAX: ", "RIP: ", "IP: [<"),
        rc.compile(r"\bRAX: [0-9a-f]{16}\b|\bRIP: [0-9a-f]{4}:|(?<![ER])\bIP: \[<[0-9a-f]{16}>\]"),
    ),
    (
        "arm64",
        ("x29: ", "pstate: ", "pc : "),
        rc.compile(r"\bx29: [0-9a-f]{16}\b|\bpstate: [0-9a-f]{8}\b|(?m:^\s*pc : [A-Za-z_])"),
    ),
    (
        "arm",
        ("pc : [<", "r10", "psr: "),
        rc.compile(r"\bpc : \[<[0-9a-f]{8}>\]|\br10 ?: [0-9a-f]{8}\b|\bpsr: [0-9a-f]{8}\b"),
    ),
    ("i386", ("EAX: ", "EIP: "), rc.compile(r"\bEAX: [0-9a-f]{8}\b|\bEIP: ")),
)
#: 32-bit kernels split the 4 GiB between user and kernel at PAGE_OFFSET, a build choice (arm's and i386's
#: CONFIG_VMSPLIT_*: 0x40000000 to 0xc0000000; arm's modules sit 16 MiB below it): below the lowest split's
#: modules every split has user space, from the highest every split has the kernel.
_SPLIT_LOW: Final = 0x3F000000
_SPLIT_HIGH: Final = 0xC0000000
#: The lowest kernel address of a 64-bit top-half kernel (arm64's with 48-bit VAs; x86-64's is 0xffff800000000000
#: too, with 4-level paging).
_TOP_HALF: Final = 0xFFFF800000000000
_KASLR_OFF: Final = re.compile(r"Kernel Offset: disabled|\bnokaslr\b")


def kaslr_off(text: str) -> str | None:
    """What in a report's lines shows KASLR off (its "Kernel Offset: disabled" line, ``nokaslr`` on a printed command
    line), or None: then the x86-64 direct map, vmalloc and vmemmap may have moved (CONFIG_RANDOMIZE_MEMORY)."""
    m = _KASLR_OFF.search(text)
    if m is None:
        return None
    return "KASLR off (the log's 'Kernel Offset: disabled')" if m.group(0).startswith("K") else "KASLR off (nokaslr)"


def kaslr_said(line: int, body: str) -> tuple[bool, str] | None:
    """What a line of a boot shows of KASLR, with its line cited: (True, "KASLR off (...)") for "Kernel Offset:
    disabled" or ``nokaslr`` on a command line, (False, "KASLR on (...)") for a "Kernel Offset: 0x..." line; None."""
    if "Kernel Offset: disabled" in body:
        return True, f"KASLR off (line {line}: the log's 'Kernel Offset: disabled')"
    if "Kernel Offset: 0x" in body:
        return False, f"KASLR on (line {line}: the log's 'Kernel Offset: 0x...')"
    if "ommand line:" in body and _KASLR_OFF.search(body) is not None:
        return True, f"KASLR off (line {line}: nokaslr on the boot's command line)"
    return None


def report_arch(text: str, code: CodeListing | None = None) -> str | None:
    """The architecture of a report (``x86_64``, ``arm64``, ``arm``, ``i386``), from its decoded Code: line or the
    register names it prints; None when it prints none (no user/kernel claim is made then)."""
    if code is not None:
        return code.arch
    for arch, words, pattern in _ARCH_REGISTERS:
        at = -1
        for word in words:
            found = text.find(word)
            if found >= 0 and (at < 0 or found < at):
                at = found
        # Searched from the start of the line holding the first word: every match holds a word and starts on its
        # line (arm64's "^\s*pc : " where its spaces do; ``\b`` and the look-behind still see the text before).
        if at >= 0 and pattern.search(text, text.rfind("\n", 0, at) + 1):
            return arch
    return None


def pointer_class(
    value: int, arch: str | None = "x86_64", kaslr_off: str | None = None, kaslr_on: str | None = None
) -> str:
    """How a pointer reads on ``arch`` (:func:`report_arch`): NULL, list poison, slab poison (freed memory), text, a
    bogus address, the default x86-64 kernel range it is in, or plausible.  Whether it is a user or a kernel
    address is said only for a known architecture (0x80b0f484 is a kernel address under 32-bit arm's 2G/2G split),
    or for a 64-bit value in the top half.  ``kaslr_off``: what shows KASLR off (:func:`kaslr_off`), or None;
    ``kaslr_on``: what shows it on (:func:`kaslr_said`), or None."""
    if value == 0:
        return "NULL: never set, or cleared"
    cls = classify_value(value)
    if arch in ("arm", "i386"):
        return _pointer_class_32(value, arch, cls)
    near = _poison_plus_offset(value)
    if near is not None:
        return near
    if arch is None and cls is None and value >= _TOP_HALF:
        # Printed as 16 hex digits: a 64-bit kernel, and every 64-bit one Linux has with a top-half kernel
        # (x86-64, arm64, riscv64, ...) has the kernel there.
        return ("a kernel address (not poison, not text; 64-bit: from 0xffff800000000000, the kernel's half on "
                "every 64-bit architecture)")  # fmt: skip
    if arch is None and (cls is None or cls.kind is _VK_USER_ADDRESS):
        return ("unknown whether a user or a kernel address: the report prints no registers that name its "
                "architecture")  # fmt: skip
    if cls is None and value < _LOW_VALUES_END:
        # Past NULL's page and below 4 MiB (classify_value's small counts): no arch maps the kernel that low.
        return "a small value in the user range, not a kernel address: an integer or an offset, not a pointer"
    if cls is None and arch == "x86_64" and (region := kernel_region(value, kaslr_off, kaslr_on)) is not None:
        return region
    return cls.meaning if cls is not None else "a kernel address (not poison, not text)"


def _pointer_class_32(value: int, arch: str, cls: ValueClass | None) -> str:
    """:func:`pointer_class` on a 32-bit kernel: the user/kernel split is a build choice the log does not print."""
    if cls is not None and cls.kind is not _VK_USER_ADDRESS:
        return cls.meaning
    if value < _LOW_VALUES_END:
        return "a small value in the user range, not a kernel address: an integer or an offset, not a pointer"
    if value < _SPLIT_LOW:
        return f"a user-space address on {arch} (below {_SPLIT_LOW:#x}: user space in every user/kernel split)"
    if value >= _SPLIT_HIGH:
        return f"a kernel address on {arch} (from {_SPLIT_HIGH:#x}: the kernel's in every user/kernel split)"
    return (f"unknown whether a user or a kernel address on {arch}: it depends on the kernel's user/kernel split "
            f"(CONFIG_VMSPLIT_*, PAGE_OFFSET {_SPLIT_LOW + 0x1000000:#x} to {_SPLIT_HIGH:#x}), which the log does "
            "not print")  # fmt: skip


def _list_corruption(r: _Reading) -> None:
    for line in r.lines:
        body = line.body
        if "corruption" not in body and "double add" not in body:
            continue
        if (m := _LIST_MESSAGE.search(body)) is not None:
            r.add("operation", m.group(1), line)
            r.add("message", body.strip(), line)
            if m.group(2):
                r.add("pointer", m.group(2), line)
                r.add("expected", f"0x{m.group(3)}", line)
                found = 0 if m.group(4) == "(null)" else log_hex(m.group(4))
                if found is not None:
                    r.add("found", f"{found:#x}", line)
                    r.add("found is", r.pointer(found), line)
                if m.group(6):
                    r.add(m.group(5), f"0x{m.group(6)}", line)
            elif m.group(7):
                r.add("entry", f"0x{m.group(7)}", line)
                r.add("pointer", f"entry->{m.group(8)}", line)
                found = 0 if m.group(10) == "(null)" else log_hex(m.group(10))
                if found is not None:
                    r.add("found", f"{found:#x}", line)
                    r.add("found is", r.pointer(found), line)
            else:
                r.add("pointer", m.group(11), line)
                r.add("found", "0x0", line)
                r.add("found is", r.pointer(0), line)
            return
        if (m := _LIST_DOUBLE_ADD.search(body)) is not None:
            r.add("operation", "list_add", line)
            r.add("message", body.strip(), line)
            r.add("pointer", "new", line)
            r.add("entry", f"0x{m.group(1)}", line)
            r.add("found is", "the entry is already on the list (added twice)", line)
            return


_REFCOUNT = rc.compile(r"refcount_t: ([a-z0-9 ]+?)(?:; ([a-z\- ]+))?\.?\s*$")


def _refcount(r: _Reading) -> None:
    found = r.search(_REFCOUNT, "refcount_t:")
    if found is not None:
        line, m = found
        r.add("refcount event", m.group(1), line)
        if m.group(2):
            r.add("consequence", m.group(2), line)


_BAD_PAGE = rc.compile(r"BUG: Bad page (state|map) in process (\S+)\s+pfn:([0-9a-f]+)")
_PAGE_LINE = rc.compile(r"page:\s*(?:([0-9a-f]+) )?refcount:(-?\d+) mapcount:(-?\d+) mapping:\s*([0-9a-f]+)")
_PAGE_FLAGS = rc.compile(r"^\s*flags: (0x[0-9a-f]+)\(([^)]*)\)")
_PAGE_REASON = rc.compile(r"page dumped because: (.*?)\s*$")
_BAD_FLAGS = rc.compile(r"bad because of flags: (0x[0-9a-f]+)\(([^)]*)\)")


def _bad_page(r: _Reading) -> None:
    for line in r.lines:
        body = line.body
        if (m := _BAD_PAGE.search(body)) is not None:
            r.add("bad page", m.group(1), line)
            r.add("process", m.group(2), line)
            r.add("pfn", f"0x{m.group(3)}", line)
        elif (m := _PAGE_LINE.search(body)) is not None and r.get("refcount") is None:
            r.add("page", f"0x{m.group(1)}" if m.group(1) else None, line)
            r.num("refcount", m.group(2), line)
            r.num("mapcount", m.group(3), line)
            r.add("mapping", f"0x{m.group(4)}", line)
        elif (m := _PAGE_FLAGS.search(body)) is not None and r.get("flags") is None:
            r.add("flags", f"{m.group(1)}({m.group(2)})", line)
        elif (m := _PAGE_REASON.search(body)) is not None and r.get("reason") is None:
            r.add("reason", m.group(1), line)
        elif (m := _BAD_FLAGS.search(body)) is not None:
            r.add("bad flags", f"{m.group(1)}({m.group(2)})", line)
    for kind, name in ((_SK_PAGE_ALLOC, "page allocated by"), (_SK_PAGE_FREE, "page freed by")):
        section = r.stack(kind)
        if section is not None and section.first_foreign is not None:
            r.facts.append(_fact(name, section.first_foreign.function, section.first_foreign.at))


# ---------------------------------------------------------------- faults

_GPF = rc.compile(r"general protection fault(?:, probably for non-canonical address (0x[0-9a-f]+))?:? ([0-9a-f]{4})")
_KASAN_RANGE = rc.compile(r"KASAN: ((?:maybe |probably )?[a-z\-]+) in range \[(0x[0-9a-f]+)-(0x[0-9a-f]+)\]")
_PAGE_FAULT = rc.compile(
    r"BUG: (?:unable to handle (?:kernel )?(?:page fault for address|paging request at|NULL pointer dereference at)|"
    r"kernel NULL pointer dereference, address):? ([0-9a-f]+)"
    r"|Unable to handle kernel (?:paging request|NULL pointer dereference) at virtual address ([0-9a-f]+)"
)
# show_fault_oops() prints "read access", "write access" and "instruction fetch" (no "access" after it).
_PF_ACCESS = rc.compile(r"#PF: (supervisor|user) (read|write|instruction fetch)(?: access)? in (kernel|user) mode")
_PF_ERROR = rc.compile(r"#PF: error_code\((0x[0-9a-f]+)\) - (.*?)\s*$")
# x86's die() after a page fault: "Oops: 0010 [#1] SMP KASAN", the fault's error code in 4 hex digits (what 4.x and
# older print instead of the "#PF:" lines).  Not arm's "Internal error: Oops: 96000005" (an ESR) nor s390's
# "Oops: 0004 ilc:2 [#1]" (an interruption code).
_OOPS_CODE = rc.compile(r"^\s*Oops: ([0-9a-f]{4}) \[#\d+\]")
#: The page fault error code's bits (arch/x86/include/asm/trap_pf.h): X86_PF_PROT (a protection violation, not a
#: page not present), X86_PF_WRITE, X86_PF_USER (the access came from user mode), X86_PF_RSVD (a reserved bit set
#: in a page table entry) and X86_PF_INSTR (an instruction fetch).
X86_PF_PROT, X86_PF_WRITE, X86_PF_USER, X86_PF_RSVD, X86_PF_INSTR = 1, 1 << 1, 1 << 2, 1 << 3, 1 << 4
# arm64's link register: "lr : filemap_read_folio+0x44/0xf4": where a call to a bad pc returns to (its caller).
_ARM64_LR = rc.compile(r"^\s*lr : ([A-Za-z_][\w.]*\+0x[0-9a-f]+/0x[0-9a-f]+)")
# A RIP the kernel printed as a number: no function is there ("RIP: 0010:0x86").
_BARE_ADDRESS = rc.compile(r"0x[0-9a-f]{1,16}")
# arm64's data abort: "  CM = 0, WnR = 0, TnD = 0, ..." (6.x prints WnR amid other bits); an instruction abort
# ("EC = 0x21: IABT (current EL)") faulted fetching the instruction: a jump to a bad address.
_ARM64_WNR = rc.compile(r"(?:^\s*|, )WnR = ([01])")
_ARM64_IABT = rc.compile(r"^\s*EC = 0x2[01]: IABT")
_RIP = rc.compile(
    r"^\s*(?:(?:RIP|EIP): (?:0010|0060):|IP: )(?:\[<[0-9a-f]+>\]\s*)*(\S+)"
    r"|^\s*(?:pc : |PC is at )([A-Za-z_][\w.]*\+0x\S+)"
    # A symbolized arm64 log's "pc : check_mem_cache kernel/bpf/memalloc.c:649 [inline]": the inlined function
    # the pc is in, as x86's "RIP: 0010:__alloc_pages_slowpath mm/page_alloc.c:4619 [inline]" gives it.
    r"|^\s*pc : ([A-Za-z_][\w.]*) \S+:\d+ \[inline\]"
    # powerpc's "NIP [c000000008068dfc] .eeh_dev_check_failure+0x27c/0x390" (the dot of ELFv1 symbols dropped)
    # and s390's "Krnl PSW : 0704f00180000000 000003ff8086d03a (will_oops_init+0x3a/0x1000 [will_oops])".
    r"|^\s*NIP:? +\[[0-9a-f]+\] \.?([A-Za-z_][\w.]*\+0x[0-9a-f]+/0x[0-9a-f]+)"
    r"|^\s*Krnl PSW : [0-9a-f]+ [0-9a-f]+ \(([A-Za-z_][\w.]*\+0x[0-9a-f]+/0x[0-9a-f]+)"
)
_BUG_AT = rc.compile(r"kernel BUG at (\S+?)!")
# "WARNING: CPU: 1 PID: 5 at f.c:9 ...", 6.x's "WARNING: f.c:9 at ...", and 3.x's "WARNING: at f.c:9".
_WARN_AT = rc.compile(r"WARNING: (?:CPU: \d+ PID: \d+ at |\S+:\d+ at |at )?(\S+\.[a-z]+:\d+)")
# The function the WARNING line names after its file and line ("at f.c:9 func+0x1c/0x40", 6.x's "f.c:9 at
# func+0x1c/0x40,"): the WARN's own address, printed by the kernel, not unwound: the site where the call trace is lost.
_WARN_FUNC = rc.compile(r"\.[a-z]+:\d+ (?:at )?([A-Za-z_][\w.]*\+0x[0-9a-f]+/0x[0-9a-f]+)")
#: KASAN_SHADOW_OFFSET of x86-64: a KASAN kernel checks an address by reading the byte at (address >> 3) + this.
KASAN_SHADOW_OFFSET = 0xDFFFFC0000000000
_CR2 = rc.compile(r"\bCR2: ([0-9a-f]+)")
_HASHED_TASK = rc.compile(r"\btask: ([0-9a-f]{16}) task\.stack: ")


#: The words one of which each test of :func:`_fault`'s reading needs in a line (its first test of each branch).
_FAULT_WORDS = ("protection fault", "in range [", "handle", "dereference", "#PF:", "WnR", "IABT", "IP", "pc", "PC",
                "PSW", "WARNING:", "BUG at", "CR2", "kasan: GPF", "Thread overran stack", "Oops: ",
                "lr : ")  # fmt: skip
_FAULT_SEARCH = BytesAhoCorasick([w.encode() for w in _FAULT_WORDS], matchkind=MatchKind.LeftmostFirst)


def _warning_line(r: _Reading, m: re.Match[str], line: LogLine) -> tuple[str, LogLine] | None:
    """The WARNING line: its file and line (a fact), and the function it names there: the site where no RIP line
    (printed after it) names one, as symbolized logs do down to an inlined function."""
    r.add("warning at", m.group(1), line)
    named = _WARN_FUNC.search(line.body, m.start(1))
    return (named.group(1), line) if named is not None else None


#: The panic schedule_debug() (kernel/sched/core.c) raises when a task's stack end (STACK_END_MAGIC, its lowest
#: word) was overwritten: nothing faulted, so a RIP line of its report is where an interrupt preempted the task.
_STACK_END = "corrupted stack end detected inside scheduler"


def _site_name(r: _Reading) -> str:
    """What a report's RIP (or pc) line is: a warning's site, an interrupted point, or the faulting function."""
    if r.report.kind in (_RK_WARNING, _RK_REFCOUNT, _RK_LOCKDEP):
        return "warning site"
    if r.report.kind is _RK_STACK_OVERFLOW and _STACK_END in r.text:
        return "interrupted at"
    return "faulting function"


def _fault(r: _Reading) -> None:
    site = _site_name(r)
    lines = r.lines
    warned: tuple[str, LogLine] | None = None
    oops: tuple[int, LogLine] | None = None  # x86's "Oops: 0010 [#1]": the page fault's error code
    cr2s: list[tuple[str, LogLine]] = []  # a page fault's CR2: lines, (value, line)
    lr: tuple[str, LogLine] | None = None  # arm64's "lr : f+0x44/0xf4"
    # Only the lines holding one of the words each branch tests first (one automaton pass over the report's text,
    # not ~14 substring tests a line: most lines hold none, and a line without is read by no branch).
    for i in lines_holding(r.blob(), _FAULT_SEARCH):
        line = lines[i]
        body = line.body
        if "protection fault" in body and (m := _GPF.search(body)) is not None and r.get("fault") is None:
            r.add("fault", "general protection fault", line)
            if m.group(1):
                r.add("address", m.group(1), line)
                r.add(
                    "address is",
                    r.pointer(a) if (a := log_hex(m.group(1))) is not None else None,
                    line,
                )
            r.add("error code", f"0x{m.group(2)}", line)
        elif "in range [" in body and (m := _KASAN_RANGE.search(body)) is not None:
            r.add("KASAN range", f"{m.group(1)} in [{m.group(2)}-{m.group(3)}]", line)
            r.add("bad address", m.group(2), line)
        elif (
            ("handle" in body or "dereference" in body)
            and (m := _PAGE_FAULT.search(body)) is not None
            and r.get("fault") is None
        ):
            address = log_hex(m.group(1) or m.group(2))
            r.add("fault", "page fault", line)
            if address is not None:
                r.add("address", f"{address:#x}", line)
                r.add("address is", r.pointer(address), line)
        elif "#PF:" in body and (m := _PF_ACCESS.search(body)) is not None:
            r.add("access", m.group(2), line)
            # What the kernel printed: "supervisor write access in kernel mode", "supervisor instruction fetch in
            # kernel mode" (no "access" after a fetch).
            r.add("mode", m.group(0).removeprefix("#PF: "), line)
        elif "#PF:" in body and (m := _PF_ERROR.search(body)) is not None:
            r.add("error code", m.group(1), line)
            r.add("page", m.group(2), line)
        elif "Oops: " in body and (m := _OOPS_CODE.match(body)) is not None and oops is None:
            oops = int(m.group(1), 16), line
        elif "lr : " in body and (m := _ARM64_LR.match(body)) is not None and lr is None:
            lr = m.group(1), line
        elif "WnR" in body and (m := _ARM64_WNR.search(body)) is not None and r.get("access") is None:
            r.add("access", "write" if m.group(1) == "1" else "read", line)
        elif "IABT" in body and _ARM64_IABT.match(body) is not None and r.get("access") is None:
            r.add("access", "instruction fetch", line)
        elif (
            ("IP" in body or "pc" in body or "PC" in body or "PSW" in body)
            and (m := _RIP.search(body)) is not None
            and r.get(site) is None
        ):
            r.add(site, next(g for g in m.groups() if g), line)
        elif "WARNING:" in body and (m := _WARN_AT.search(body)) is not None and r.get("warning at") is None:
            warned = _warning_line(r, m, line)
        elif "BUG at" in body and (m := _BUG_AT.search(body)) is not None and r.get("bug at") is None:
            r.add("bug at", m.group(1), line)
        elif "CR2" in body and (m := _CR2.search(body)) is not None and r.get("fault") == "page fault":
            cr2s.append((m.group(1), line))
        elif "kasan: GPF" in body and (m := _KASAN_GPF_HINT.search(body)) is not None:
            r.add("KASAN hint", m.group(1), line)
        elif "Thread overran stack" in body and r.get("stack") is None:
            # arch/x86/mm/fault.c prints it when the fault address lies in the task's stack guard page.
            r.add("stack", "the kernel says: thread overran its stack, or the stack is corrupted", line)
    if warned is not None and r.get(site) is None:
        r.add(site, warned[0], warned[1])
    _cr2(r, cr2s)
    _oops_error_code(r, oops)
    _instruction_fetch(r, lr)
    _hashed_address(r)
    _preamble_facts(r)
    _arm64_address(r)
    _code_facts(r)
    _access_words(r)


#: The line x86's page_fault_oops() prints last, after the modules: the fault's own address, saved on entry.
_CLOSING_CR2 = rc.compile(r"\s*CR2: ([0-9a-f]+)\s*")
#: show_opcodes()'s line when it cannot read the code before RIP: its own read faulted there.
_OPCODES_UNREAD = rc.compile(r"Unable to access opcode bytes at (0x[0-9a-f]+)")


def _cr2(r: _Reading, cr2s: list[tuple[str, LogLine]]) -> None:
    """The page fault's CR2: its closing ``CR2: <address>`` line's (page_fault_oops(), arch/x86/mm/fault.c), else the
    register dump's.  The register dump reads CR2 when it prints: a fault taken since (show_opcodes() reading the
    code bytes before a RIP in unmapped memory, "Code: Unable to access opcode bytes at ...") has overwritten it
    there, so a register dump's CR2 that differs is said to be that later fault's where that line of the report names
    it; else (another CPU's oops interleaved without caller ids) the two values are said, whose each is unknown.
    Where the report's lines print two dumps (:func:`~detectors.dmesg.interleaved.mixed_dumps`) and its CR2 lines
    disagree, no CR2 line is known to be its own: each value is said, with its line, and which report it belongs to
    as unknown."""
    if not cr2s:
        return
    mixed = mixed_dumps(r.report, whole=True) if len({int(v, 16) for v, _ in cr2s}) > 1 else None
    if mixed is not None and (own := _header_cr2(r, cr2s)) is not None:
        # The closing CR2 agrees with the fault address its own header line names (page_fault_oops()'s "paging
        # request at", "address:"): that value is its own, whichever dump the others are (review ue20 #5, corpus 324).
        value, line = own
        r.facts.append(_fact("cr2", f"0x{value}", line.number - r.first, (0,)))
        _two_dumps(r, mixed)
        for v, x in cr2s:
            if int(v, 16) != int(value, 16):
                r.add(
                    "cr2 in the register dump",
                    f"0x{v}: not the 0x{value} of its closing line ({line.number}), which the fault address of its "
                    f"header (line {r.first}) confirms as its own; its lines print two dumps, interleaved ({mixed[0]}; "
                    f"{mixed[1]}): which report this one belongs to is unknown",
                    x,
                )
                break
        return
    if mixed is not None:
        _two_dumps(r, mixed)
        # Two CPUs' dumps interleave in its lines (detectors/dmesg/interleaved.py) and its CR2 lines disagree: any of
        # them, the closing one too, may be the other report's, and so may a "Code: Unable to access opcode bytes"
        # line naming one.  (Lines that agree give one value whoever's they are.)
        values = "; ".join(f"0x{v} (line {line.number})" for v, line in cr2s)
        r.facts.append(
            _fact(
                "cr2",
                NotAvailable(
                    f"not read (its lines print two dumps, interleaved: {mixed[0]}; {mixed[1]}): which report each "
                    f"of its CR2 lines belongs to is unknown: {values}"
                ),
                cr2s[-1][1].number - r.first,
                tuple(line.number - r.first for _, line in cr2s[:-1]),
            )
        )
        return
    closing = next(((v, line) for v, line in reversed(cr2s) if _CLOSING_CR2.fullmatch(line.body)), None)
    dumped = next(((v, line) for v, line in cr2s if _CLOSING_CR2.fullmatch(line.body) is None), None)
    value, line = closing or dumped or cr2s[0]
    r.add("cr2", f"0x{value}", line)
    if closing is None or dumped is None or int(dumped[0], 16) == int(closing[0], 16):
        return
    later = f"0x{int(dumped[0], 16):x}"
    unread = next(
        (
            x
            for x in r.lines
            if "opcode bytes" in x.body
            and x.number < dumped[1].number
            and (m := _OPCODES_UNREAD.search(x.body)) is not None
            and int(m.group(1), 16) == int(dumped[0], 16)
        ),
        None,
    )
    if unread is None:
        # Nothing of the report shows a fault after it (two oopses printed at once without caller ids: the register
        # dump may be the other's): the two values are said, not whose each is.
        r.add(
            "cr2 in the register dump",
            f"0x{dumped[0]}: not the 0x{closing[0]} of its closing line (line {closing[1].number}); which fault each "
            "belongs to is unknown (no 'Code: Unable to access opcode bytes at' line of the report names a nested "
            "fault there, and another oops's lines may be among its own)",
            dumped[1],
        )
        return
    r.add(
        "cr2 in the register dump",
        f"0x{dumped[0]}: not this oops's fault address but a later, nested fault's (line {unread.number}: "
        f"show_opcodes() could not read the code bytes at {later}), which overwrote CR2 before the register dump read "
        f"it; the oops's own is on line {closing[1].number}",
        dumped[1],
    )


def _two_dumps(r: _Reading, mixed: tuple[str, str]) -> None:
    """Said of a report whose lines print two dumps (:func:`_cr2`): what was read from its first ``RIP:`` and
    ``Code:`` lines may be the other dump's (review ue20 #5: corpus 324 stated them beside an unknown CR2)."""
    read = [name for name in ("faulting function", "faulting instruction", "code bytes") if r.get(name) is not None]
    if r.code is not None and "code bytes" not in read:
        read.append("code (and the faulting instruction decoded from it)")
    if not read:
        return
    listed = read[0] if len(read) == 1 else f"{', '.join(read[:-1])} and {read[-1]}"
    at = r.at("faulting function")
    r.facts.append(
        _fact(
            "two dumps",
            f"its lines print two dumps, interleaved ({mixed[0]}; {mixed[1]}): its {listed} are read from its first "
            "RIP: and Code: lines, which may be the other dump's",
            0 if at is None else at,
        )
    )


def _header_cr2(r: _Reading, cr2s: list[tuple[str, LogLine]]) -> tuple[str, LogLine] | None:
    """The report's closing ``CR2:`` line (its value and line) when it equals the fault address its header line (its
    first) names; else None."""
    address = r.get("address")
    closing = next(((v, line) for v, line in reversed(cr2s) if _CLOSING_CR2.fullmatch(line.body)), None)
    if closing is None or r.at("address") != 0 or not isinstance(address, str):
        return None
    try:
        return closing if int(address, 16) == int(closing[0], 16) else None
    except ValueError:
        return None


def _access_words(r: _Reading) -> None:
    """The address's class worded for the access: the pointer table's is worded for a read."""
    access = r.get("access")
    if access in ("write", "instruction fetch"):
        # The pointer table's "a member read through a NULL pointer" is worded for a read; this access wrote, or
        # fetched its next instruction there (a call through a bad function pointer, no member read).
        said = (("a member read through", "a member written through") if access == "write" else
                ("a member read through a NULL pointer",
                 "fetched as an instruction: a call or jump through a NULL (or bad) function pointer"))  # fmt: skip
        r.facts = [f._replace(value=f.value.replace(*said))
                   if f.name in ("address is", "base register is") and isinstance(f.value, str) else f
                   for f in r.facts]  # fmt: skip


def _oops_error_code(r: _Reading, oops: tuple[int, LogLine] | None) -> None:
    """4.x's page fault without the "#PF:" lines: its access, page and mode read from the "Oops: 0002 [#1]" line's
    error code, worded as show_fault_oops() words them where it prints them (the facts are at the Oops line).

    Only a page fault's: x86's die("Oops", regs, error_code) is called from the page fault path alone (a general
    protection fault prints its own line), and :data:`_OOPS_CODE` matches neither arm64's ESR nor s390's codes.
    """
    if oops is None or r.get("fault") != "page fault" or r.get("error code") is not None or r.get("access"):
        return  # not a page fault, or the "#PF:" lines said it already
    code, line = oops
    access = "instruction fetch" if code & X86_PF_INSTR else "write" if code & X86_PF_WRITE else "read"
    r.add("error code", f"{code:#06x}", line)
    r.add("access", access, line)
    r.add("mode", f"{'user' if code & X86_PF_USER else 'supervisor'} {access}"
          + ("" if code & X86_PF_INSTR else " access"), line)  # fmt: skip
    r.add("page", "not-present page" if not code & X86_PF_PROT
          else "reserved bit violation" if code & X86_PF_RSVD else "permissions violation", line)  # fmt: skip


def _instruction_fetch(r: _Reading, lr: tuple[str, LogLine] | None) -> None:
    """A page fault the CPU took fetching its next instruction, and the function that sent it there.

    Three signals, any of which says it: the "#PF: supervisor instruction fetch" line, the error code's X86_PF_INSTR
    bit ("#PF: error_code(0x0010)", or 4.x's "Oops: 0010 [#1]": :func:`_oops_error_code`), and a RIP that is the
    fault's own address. A RIP the kernel could not symbolize ("RIP: 0010:0x86") is then where the CPU was sent, not
    a function: the function at fault is the caller that jumped there, whose return address is on top of the stack
    (the call trace's first frame; arm64's link register: ``lr``). Read as a data access, 0x86 was "a member read
    through a NULL pointer" in "an unknown function".
    """
    if r.get("fault") != "page fault":
        return
    address = _hex_value(r.get("address"))
    pc = r.get("faulting function")
    bare = isinstance(pc, str) and _BARE_ADDRESS.fullmatch(pc) is not None
    if r.get("access") is None:
        code = _hex_value(r.get("error code"))
        if code is not None and code & X86_PF_INSTR:
            r.facts.append(_fact("access", "instruction fetch", r.at("error code") or 0))
        elif bare and address is not None and _hex_value(pc) == address:
            r.facts.append(_fact("access", "instruction fetch", r.at("faulting function") or 0))
    if r.get("access") != "instruction fetch" or not (bare or pc is None):
        return  # a data access, or a fetch in a function the kernel names (it ran off its end into a bad page)
    if pc is not None:
        r.facts = [_fact("jumped to", f.value, f.at) if f.name == "faulting function" else f for f in r.facts]
    if lr is not None:  # the return address of the call (arm64 keeps it in a register)
        r.add("faulting function", lr[0], lr[1])
        return
    trace = r.stack(_SK_CALL_TRACE)
    if trace is None or not trace.frames:
        return
    # x86's call pushed it: the call trace's first frame, "?" when the unwinder found it on the stack without
    # confirming it (it cannot unwind from a bad address).
    frame = trace.frames[0]
    printed = frame.symbol + (f"+{frame.offset:#x}" if frame.offset is not None else "")
    printed += f"/{frame.size:#x}" if frame.offset is not None and frame.size is not None else ""
    r.facts.append(_fact("faulting function", printed, frame.at))
    if not frame.reliable:
        r.facts.append(_fact("caller is", "the call trace's first frame, a '?' frame the unwinder did not confirm "
                             "(it cannot unwind from a bad address)", frame.at))  # fmt: skip


def _hex_value(value: FactValue | None) -> int | None:
    """A fact's hexadecimal value ("0x86", "0x0010"), None when it is none."""
    return log_hex(value) if isinstance(value, str) and _BARE_ADDRESS.fullmatch(value) else None


def _hashed_address(r: _Reading) -> None:
    """The faulting address said unknown where the report prints hashed pointers.

    From v4.15-rc1 (commit ad67b74d2469 "printk: hash addresses printed with %p") a kernel printing the fault's
    address with %p prints a 32-bit hash: "unable to handle kernel paging request at 000000007c8b2954" is no
    user-space address.  The same report's "task: 00000000ad16368f task.stack: ..." line shows it: a task_struct
    is never below 4 GiB on a 64-bit kernel.  CR2 is no substitute: the register dump reads it when it prints
    (6.1's dumps print another fault's CR2 there, the saved one only at the oops' end).
    """
    printed = next((f for f in r.facts if f.name == "address is"), None)
    if printed is None or not isinstance(printed.value, str):
        return
    for line in r.lines:
        if "task.stack:" in line.body and (m := _HASHED_TASK.search(line.body)) is not None:
            if int(m.group(1), 16) >= 1 << 32:
                return
            cr2 = next((f.value for f in r.facts if f.name == "cr2"), None)
            said = f"; CR2 when the registers were printed: {cr2}" if cr2 is not None else ""
            why = NotAvailable(f"the line prints a hashed pointer (this kernel hashes %p: task: {m.group(1)}){said}")
            r.facts = [_fact(f.name, why, line.number - r.first) if f is printed else f for f in r.facts]
            return


def _preamble_facts(r: _Reading) -> None:
    """What the lines above the header say: a filesystem ASSERT's condition, a WARN's own message."""
    for line in r.lines[: len(r.report.preamble)]:
        if "ssertion failed" in line.body and (m := _ASSERTION.search(line.body)) is not None:
            r.add("condition", m.group(1), line)
            r.add("assertion at", m.group(2) or f"{m.group(3)}:{m.group(4)}", line)
            continue
        # A WARN's own message, printed between "cut here" and the WARNING line.
        if not _PREAMBLE_KNOWN.search(line.body) and line.body.strip():
            r.add("message", line.body.strip(), line)
            break


def _arm64_address(r: _Reading) -> None:
    """ "Non-canonical" and its general protection fault are x86's: an arm64 abort ("Mem abort info:", "ESR = ")
    at such an address is a translation fault the kernel words "address between user and kernel address ranges"."""
    if not str(r.get("address is") or "").startswith("non-canonical") or not any("ESR = " in x.body for x in r.lines):
        return
    r.facts = [
        f._replace(value="between the user and kernel address ranges: not a pointer at all")
        if f.name == "address is" else f
        for f in r.facts
    ]  # fmt: skip


#: Report kinds whose RIP and Code: are the faulting (or trapping) instruction's.
_FAULT_KINDS = frozenset((ReportKind.GPF, ReportKind.NULL_DEREF, ReportKind.PAGE_FAULT, ReportKind.OOPS,
                          ReportKind.TRAP, ReportKind.BUG, ReportKind.LIST_CORRUPTION, ReportKind.STACK_OVERFLOW,
                          ReportKind.USERCOPY, ReportKind.WARNING, ReportKind.REFCOUNT))  # fmt: skip
# "\bBUG:": debugobjects' "ODEBUG: assert_init not available ..." is the WARN's message, not a report header.
_PREAMBLE_KNOWN = rc.compile(r"corruption|refcount_t:|double add|cut here|kasan: |\bWARNING:|\bBUG:")
#: A filesystem's ASSERT(): btrfs "assertion failed: cond, in fs/btrfs/space-info.c:436", XFS "Assertion failed:
#: cond, file: fs/xfs/libxfs/xfs_bmap.c, line: 1234".
_ASSERTION = rc.compile(r"[Aa]ssertion failed: (.+?), (?:in (\S+:\d+)|file: (\S+), line: (\d+))\s*$")
_KASAN_GPF_HINT = rc.compile(r"kasan: GPF could be caused by (.*?)\s*$")


def shadow_checked(code: CodeListing) -> tuple[str, int] | None:
    """For a KASAN shadow check (``cmp byte ptr [rax + rdx], 0`` with one register at KASAN_SHADOW_OFFSET): the
    other register and the address it checks (its value << 3)."""
    disp = code.displacement or 0
    pairs = ((code.base, code.base_value, code.index_reg, code.index_value),
             (code.index_reg, code.index_value, code.base, code.base_value))  # fmt: skip
    for _reg, value, other, other_value in pairs:
        if value == KASAN_SHADOW_OFFSET and other and other_value is not None:
            return other, ((other_value + disp) << 3) & 0xFFFFFFFFFFFFFFFF
    if code.base_value is not None and code.base and code.base_value >> 44 == KASAN_SHADOW_OFFSET >> 44:
        return code.base, ((code.base_value - KASAN_SHADOW_OFFSET + disp) << 3) & 0xFFFFFFFFFFFFFFFF
    return None


def _code_facts(r: _Reading) -> None:
    """The faulting instruction and what its operand held, from the ``Code:`` bytes and the registers."""
    code = r.code
    if code is None:
        return
    at = code.at
    if r.get("interrupted at") is not None:
        # An interrupted instruction did not fault: its operands tell nothing of the report.
        if code.faulting:
            r.facts.append(_fact("interrupted instruction", code.faulting, at))
        return
    if code.faulting:
        r.facts.append(_fact("faulting instruction", code.faulting, at))
    if code.memory:
        r.facts.append(_fact("memory operand", code.memory, at))
    if code.access and r.get("access") is None:
        r.facts.append(_fact("access", code.access, at))
    checked = shadow_checked(code)
    if checked is not None:
        # A KASAN kernel's check of an address: the byte at (address >> 3) + KASAN_SHADOW_OFFSET.
        register, address = checked
        r.facts.append(_fact("KASAN checks", f"{register} << 3 = {address:#x}", at))
        r.facts.append(_fact("checked address is", r.pointer(address), at))
    elif code.base and code.base_value is not None:
        # a register's value is cited by the line of the register dump that prints it, not the Code: line
        r.facts.append(_fact("base register", f"{code.base} = {code.base_value:#x}", code.register_at(code.base)))
        r.facts.append(
            _fact(
                "base register is",
                r.pointer(code.base_value),
                code.register_at(code.base),
            )
        )
    if code.loaded_from:
        r.facts.append(_fact("loaded from", code.loaded_from, at))
    if code.loaded_base and code.loaded_value is not None:
        r.facts.append(
            _fact("object pointer", f"{code.loaded_base} = {code.loaded_value:#x}", code.register_at(code.loaded_base))
        )
    for name, value in code.compared:
        r.facts.append(_fact("compared", f"{name} = {value:#x}" if value is not None else name, code.register_at(name)))


# ---------------------------------------------------------------- memory

_OOM_INVOKED = rc.compile(r"(?<!\S)(\S+) invoked oom-killer: gfp_mask=(0x[0-9a-f]+)(\([^)]*\))?, order=(-?\d+)"
                          r"(?:, oom_score_adj=(-?\d+))?")  # fmt: skip
_OOM_CONSTRAINT = rc.compile(r"oom-kill:constraint=(\w+)(?:,nodemask=([^,]*))?.*?,(global_oom|oom_memcg=[^,]*)"
                             r"(?:,task_memcg=([^,]*))?")  # fmt: skip
_OOM_KILLED = rc.compile(
    r"(?:(Memory cgroup )?[Oo]ut of memory(?: \(([a-z_]+)\))?: )?Kill(?:ed)? process (\d+) \((.*?)\)"
    r"(?: total-vm:(\d+)kB, anon-rss:(\d+)kB, file-rss:(\d+)kB, shmem-rss:(\d+)kB)?"
)
_ALLOC_FAIL = rc.compile(r"(?<!\S)(\S+): page allocation failure: order:(\d+), mode:(0x[0-9a-f]+)(\([^)]*\))?"
                         r"(?:, nodemask=([^,\s]*))?")  # fmt: skip
#: A zone's per-order free lists on one line (show_free_areas(): "Node 0 Normal: 3*4kB (UM) 0*8kB ... = 2789380kB");
#: pr_cont()'d, so a line interleaved with other output is not one (its pieces are not read).
_FREE_LISTS = rc.compile(
    r"^\s*Node (\d+) (DMA32|DMA|Normal|HighMem|Movable|Device): ((?:\d+\*\d+kB (?:\([A-Z]+\) )?)+)= \d+kB\s*$"
)
_FREE_LIST = rc.compile(r"(\d+)\*(\d+)kB")
_ZONE = rc.compile(
    r"^\s*(?:Node (\d+) )?(DMA32|DMA|Normal|HighMem|Movable|Device) free:(\d+)kB"
    r"(?:.*? min:(\d+)kB)?(?:.*? low:(\d+)kB)?(?:.*? high:(\d+)kB)?(?:.*? managed:(\d+)kB)?"
)
#: A row of the OOM killer's task dump: ``[  pid  ] uid tgid total_vm rss [rss_anon rss_file rss_shmem]
#: pgtables_bytes swapents oom_score_adj name`` (newer kernels split rss: the 6.12 fixture guest prints it).
_TASK_ROW = rc.compile(
    r"^\s*\[\s*(\d+)\]\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)(?:\s+\d+\s+\d+\s+\d+)?\s+(\d+)\s+(\d+)\s+(-?\d+)\s+(.+?)\s*$"
)
_PAGES_RAM = rc.compile(r"^\s*(\d+) pages RAM")
_PAGES_RESERVED = rc.compile(r"^\s*(\d+) pages reserved")
_PAGECACHE = rc.compile(r"^\s*(\d+) total pagecache pages")
_MEMCG_USAGE = rc.compile(r"memory: usage (\d+)kB, limit (\d+)kB, failcnt (\d+)")
_SLAB_ROW = rc.compile(r"^\s*(\S+)\s+(\d+)KB\s+(\d+)KB\s*$")
PAGE_SIZE = 4096  # the task dump's rss column is in pages ("memory values in pages"); x86 and arm64's default


def _oom_killed(r: _Reading, m: re.Match[str], line: LogLine) -> None:
    """The OOM killer's "Killed process PID (comm) ... anon-rss:..kB, file-rss:..kB" line."""
    r.add("killed", m.group(4), line)
    r.num("killed pid", m.group(3), line)
    if m.group(1):
        r.add("scope", "memory cgroup", line)
    if m.group(6):
        r.num("killed anon-rss kB", m.group(6), line)
        r.num("killed file-rss kB", m.group(7), line)


def _memory(r: _Reading) -> None:
    ram = reserved = None
    ram_at = 0
    in_slab_info = False
    for line in r.lines:
        body = line.body
        at = line.number - r.first
        if "oom-killer" in body and (m := _OOM_INVOKED.search(body)) is not None and r.get("invoker") is None:
            r.add("invoker", m.group(1), line)
            r.add("gfp_mask", m.group(2) + (m.group(3) or ""), line)
            r.num("order", m.group(4), line)
            if m.group(5):
                r.num("oom_score_adj", m.group(5), line)
        elif ("allocation failure" in body or "vmalloc error" in body) and _alloc_header(r, line):
            pass
        elif "oom-kill:" in body and (m := _OOM_CONSTRAINT.search(body)) is not None:
            r.add("constraint", m.group(1), line)
            r.add("scope", "memory cgroup" if m.group(3).startswith("oom_memcg") else "global", line)
            if m.group(4):
                r.add("task memcg", m.group(4), line)
        elif "Kill" in body and (m := _OOM_KILLED.search(body)) is not None and r.get("killed") is None:
            _oom_killed(r, m, line)
        elif "free:" in body and (m := _ZONE.search(body)) is not None:
            g = m.groups()
            low, min_, high, managed = (log_dec(x) if x else None for x in (g[4], g[3], g[5], g[6]))
            if (free := log_dec(g[2])) is not None:
                r.zones.append(
                    _new_tuple(ZoneFree, (log_dec(g[0]) if g[0] else None, g[1], free, min_, low, high, managed, at))
                )
        elif "*" in body and "kB" in body and (m := _FREE_LISTS.match(body)) is not None:
            lists = tuple((int(kb), int(n)) for n, kb in _FREE_LIST.findall(m.group(3)))
            r.free_lists.append((m.group(2) if m.group(1) == "0" else f"node {m.group(1)} {m.group(2)}", lists, at))
        elif body.lstrip()[:1] == "[" and (m := _TASK_ROW.match(body)) is not None:
            rss, swap = _scaled(m.group(5), PAGE_SIZE), _scaled(m.group(7), PAGE_SIZE)
            size = _bounded(rss + swap) if rss is not None and swap is not None else None
            r.consumer("task", m.group(9), log_dec(m.group(1)), size, at)
        elif "pages RAM" in body and (m := _PAGES_RAM.match(body)) is not None:
            ram, ram_at = log_dec(m.group(1)), line.number - r.first
        elif "reserved" in body and (m := _PAGES_RESERVED.match(body)) is not None:
            reserved = log_dec(m.group(1))
            usable = _bounded((ram - reserved) * PAGE_SIZE) if ram and reserved is not None else None
            r.computed("RAM bytes", usable, ram_at, line)  # neither line holds it: the difference, both cited
        elif "pagecache" in body and (m := _PAGECACHE.match(body)) is not None:
            r.consumer("page-cache", "page cache (files and shmem)", None, _scaled(m.group(1), PAGE_SIZE), at)
        elif "usage" in body and (m := _MEMCG_USAGE.search(body)) is not None:
            r.num("memcg usage kB", m.group(1), line)
            r.num("memcg limit kB", m.group(2), line)
        elif "Unreclaimable slab info:" in body:
            in_slab_info = True
        elif in_slab_info and (m := _SLAB_ROW.match(body)) is not None:
            r.consumer("slab", m.group(1), None, _scaled(m.group(3), 1024), at)
    r.consumers.sort(key=lambda c: -c.bytes)
    managed = sum(z.managed_kb or 0 for z in r.zones)
    if r.get("RAM bytes") is None and managed and (ram_bytes := _bounded(managed * 1024)) is not None:
        r.facts.append(_fact("RAM bytes", ram_bytes, r.zones[0].at))
    if r.report.kind is _RK_ALLOC_FAILURE:
        _alloc_failure_parts(r)


def _alloc_header(r: _Reading, line: LogLine) -> bool:
    """Read warn_alloc()'s header, the page allocator's (order, mode, nodemask) or vmalloc's (size, mode and, from
    5.13, what failed), the first of each kind; whether ``line`` is one."""
    body = line.body
    if "vmalloc" in body and (m := VMALLOC_FAILURE.search(body)) is not None:
        if r.get("size bytes") is None:
            if m.group(1):
                r.add("task", m.group(1), line)
            r.num("size bytes", m.group(2) or m.group(3), line)
            r.add("mode", m.group(5), line)
            r.add("failed", m.group(4), line)
        return True
    if (m := _ALLOC_FAIL.search(body)) is None:
        return False
    if r.get("order") is None:
        r.add("task", m.group(1), line)
        r.num("order", m.group(2), line)
        r.add("mode", m.group(3) + (m.group(4) or ""), line)
        if m.group(5):
            r.add("nodemask", m.group(5), line)
    return True


def _alloc_failure_parts(r: _Reading) -> None:
    """An allocation failure's caller, and whether its call trace and memory state are in the log: the event opens at
    its header, and a log may hold neither (warn_alloc() prints the memory state at most once a second; a cut log)."""
    if isinstance(r.report.frame, str):
        r.facts.append(_fact("caller", r.report.frame, _frame_at(r, r.report.frame)))
    elif not r.report.trace:
        reason = "not in the log: no call trace follows its header in its context"
        r.facts.append(_fact("call trace", NotAvailable(reason), 0))
    dump = next((line for line in r.lines if line.body.startswith(MEM_INFO)), None)
    if dump is not None:
        r.add("memory state", "Mem-Info: printed with it", dump)
        said, judged = memory_pressure(r.zones)
        at = [z.at for z in judged] or [dump.number - r.first]
        r.facts.append(_fact(PRESSURE_FACT, said, at[0], tuple(at[1:])))
    else:
        reason = (f"not in the log: no Mem-Info: dump of its context follows it within {MEM_INFO_REACH} lines "
                  "(warn_alloc() prints one at most once a second; or the log was cut)")  # fmt: skip
        r.facts.append(_fact("memory state", NotAvailable(reason), 0))
        r.facts.append(_fact(PRESSURE_FACT, PRESSURE_UNKNOWN, 0))


#: An allocation failure's pressure when its Mem-Info: dump is not in the log: nothing shows memory was short.
PRESSURE_UNKNOWN = "unknown (no Mem-Info in the log)"


def memory_pressure(zones: Sequence[ZoneFree]) -> tuple[str, list[ZoneFree]]:
    """Whether memory was short when an allocation failed ("yes: ...", "no: ...", "unknown (why)"), from its
    Mem-Info: dump's zones, and the zones judged.

    The page allocator fails a request (after reclaim) when the zones it may use have no more free pages than their
    min watermark; kswapd is woken below the low one (mm/page_alloc.c, Documentation/admin-guide/mm/concepts.rst).
    Memory was short when every zone judged was at or below its low watermark (its min where the dump prints no
    low): a zone with more free than that could have met an order-0 request.  DMA is left out beside other zones:
    lowmem_reserve keeps its pages for the requests that can use nothing else, so its free pages say nothing of the
    others.  A zone without managed pages or watermarks (an empty Movable zone) is not judged.
    """
    judged = [z for z in zones if z.managed_kb != 0 and (z.low_kb or z.min_kb)]
    if len(judged) > 1 and any(z.zone != "DMA" for z in judged):
        judged = [z for z in judged if z.zone != "DMA"]
    if not judged:
        return "unknown (its Mem-Info: dump prints no zone watermarks)", []

    def said(z: ZoneFree) -> str:
        mark, name = (z.low_kb, "low") if z.low_kb else (z.min_kb, "min")
        node = f"node {z.node} " if z.node is not None and any(x.node != z.node for x in judged) else ""
        return f"{node}{z.zone} free {z.free_kb} kB, {name} watermark {mark} kB"

    short = [z for z in judged if z.free_kb <= (z.low_kb or z.min_kb or 0)]
    if len(short) == len(judged):
        return "yes: every zone at or below its low watermark (" + "; ".join(map(said, judged)) + ")", judged
    above = [z for z in judged if z not in short]
    return "no: free pages above the low watermark (" + "; ".join(map(said, above)) + ")", above


# ---------------------------------------------------------------- atomic context: scheduling or sleeping in it

_SCHED_ATOMIC = rc.compile(r"BUG: scheduling while atomic: (.+)/(\d+)/0x([0-9a-f]{1,8})\s*$")
_MIGHT_SLEEP = rc.compile(r"BUG: sleeping function called from invalid context at (\S+)")
_IN_ATOMIC = rc.compile(r"^\s*in_atomic\(\): (\d+), irqs_disabled\(\): (\d+)")
_PREEMPT_COUNT = rc.compile(r"^\s*preempt_count: ([0-9a-f]{1,8}), expected: ([0-9a-f]{1,8})")
_RCU_DEPTH = rc.compile(r"^\s*RCU nest depth: (\d+), expected: (\d+)")
_PREEMPTIBLE = rc.compile(r"BUG: using ([\w_]+\(\)) in preemptible \[([0-9a-f]{1,8})\] code: (.+)/(\d+)")
_CALLER_IS = rc.compile(r"^\s*caller is ([\w.]+\+0x[0-9a-f]+/0x[0-9a-f]+)")
#: The functions of the way back to user space: a count left set there was left by the system call.
_EXIT_TO_USER = frozenset((
    "exit_to_usermode_loop", "exit_to_user_mode_prepare", "exit_to_user_mode_loop", "syscall_exit_to_user_mode",
    "prepare_exit_to_usermode", "irqentry_exit_to_user_mode",
))  # fmt: skip


#: The reports :func:`_atomic` reads.
_ATOMIC_RULES = frozenset(("sched-atomic", "atomic-sleep", "this-cpu-preemptible"))


def _atomic(r: _Reading) -> None:
    """What a "scheduling while atomic" or "sleeping function called from invalid context" report prints of the
    context the task slept in (kernel/sched/core.c __schedule_bug, __might_resched): its preempt_count decoded,
    in_atomic() and irqs_disabled(), the RCU nesting, the locks held (lockdep) and where preemption was disabled."""
    task: _HeldList | None = None
    site_next = False
    for line in _held_lines(r.lines):
        body = line.body
        if site_next:
            site_next = False
            if (m := _SITE.match(body)) is not None:
                r.add("preemption disabled at", m.group(1), line)
                continue
        if "Call Trace:" in body:
            break  # the context is printed above the stack
        if "scheduling while atomic" in body and (m := _SCHED_ATOMIC.search(body)) is not None:
            r.add("task", m.group(1), line)
            r.num("pid", m.group(2), line)
            count = decode_preempt_count(int(m.group(3), 16))
            r.add("preempt_count", f"0x{count.value:08x}", line)
            r.add("preempt_count is", count.words(schedules=True), line)
        elif "sleeping function" in body and (m := _MIGHT_SLEEP.search(body)) is not None:
            r.add("might sleep at", m.group(1), line)
        elif "in preemptible" in body and (m := _PREEMPTIBLE.search(body)) is not None:
            r.add("per-CPU access", m.group(1), line)
            r.add("preempt_count", f"0x{decode_preempt_count(int(m.group(2), 16)).value:08x}", line)
            r.add("task", m.group(3), line)
            r.num("pid", m.group(4), line)
        elif "caller is" in body and (m := _CALLER_IS.match(body)) is not None:
            r.add("caller", m.group(1), line)
        elif "in_atomic()" in body and (m := _IN_ATOMIC.match(body)) is not None:
            r.num("in_atomic", m.group(1), line)
            r.num("irqs_disabled", m.group(2), line)
        elif "preempt_count:" in body and (m := _PREEMPT_COUNT.match(body)) is not None:
            count = decode_preempt_count(int(m.group(1), 16))
            r.add("preempt_count", f"0x{count.value:08x}", line)
            r.add("preempt_count is", count.words(), line)
        elif "RCU nest depth" in body and (m := _RCU_DEPTH.match(body)) is not None:
            r.num("RCU nest depth", m.group(1), line)
        elif body.strip() == "Preemption disabled at:":
            site_next = True
        else:
            task = _held_list_line(r, body, line, task)


def _atomic_cause(r: _Reading) -> Cause | None:
    """Why the task could not sleep where it did, from what :func:`_atomic` read."""
    rule = r.report.rule
    if rule == "this-cpu-preemptible":
        return _preemptible_cause(r)
    if rule not in ("sched-atomic", "atomic-sleep"):
        return None
    held = [lock for lock in r.locks if lock.role == "held"]
    disabled_at = r.get("preemption disabled at")
    since = f"; preemption was disabled at {disabled_at}" if disabled_at else ""
    raw = r.get("preempt_count")
    count = decode_preempt_count(int(str(raw), 16)) if raw is not None else None
    if rule == "sched-atomic":
        if count is None:
            return None
        if count.nmi or count.hardirq:
            what = "schedule() was called from a hard interrupt or NMI handler"
        elif count.serving_softirq:
            what = "schedule() was called while a softirq was served (a timer, tasklet or NAPI callback that sleeps)"
        else:
            left = []
            if count.bh_disabled:
                left.append(f"bottom halves still disabled ({count.bh_disabled} local_bh_disable()/spin_lock_bh() "
                            "without its enable)")  # fmt: skip
            if count.extra_preempt:
                left.append(f"preemption still disabled ({count.extra_preempt} preempt_disable()/spin_lock() without "
                            "its release)")  # fmt: skip
            if not left:
                return None
            trace = {f.function for f in r.report.trace if f.reliable}
            if trace & _EXIT_TO_USER:
                what = (
                    f"a system call returned to user space with {' and '.join(left)}: a path of the system call "
                    "left it unbalanced"
                )
            else:
                what = f"schedule() was called from {r.func} with {' and '.join(left)}"
        locks = "" if r.get("locks held") is None else f"; locks held: {r.get('locks held')}"
        statement = f"{what} (preempt_count {count.words(schedules=True)}){locks}{since}"
        return _cause("atomic_context", r, 0.6, "find the unbalanced disable on the path (CONFIG_DEBUG_PREEMPT and "
                      "lockdep print where it was taken)", r.at("preempt_count"), statement=statement)  # fmt: skip
    return _sleeping_cause(r, held, count, since)


def _sleeping_cause(r: _Reading, held: list[LockInfo], count: PreemptCount | None, since: str) -> Cause | None:
    """A "sleeping function called from invalid context": the call that may sleep (past the might_sleep() frames),
    its caller, and the context it slept in (an RCU section, interrupts off, a preempt_count)."""
    site = r.get("might sleep at")
    might = f" (might_sleep at {site})" if site else ""
    rcu = next((lock for lock in held if lock.name.startswith("rcu_read_lock")), None)
    # The function that took the RCU section, from its lock line (the report's title frame may be a caller of it).
    taker = _function_name(rcu.site.split("+")[0]) if rcu is not None and rcu.site else None
    call = sleeping_call([f.function for f in r.report.trace if f.reliable], str(site) if site else None)
    if call is not None and call.caller is not None:
        took = [f"which took {rcu.name}"] if rcu is not None and taker == call.caller else []
        if call.above is not None and call.above == r.named_func:
            took.append(f"called from {call.above}")
        who = f"{call.caller} ({', '.join(took)})" if took else call.caller
        sleeps = f"{who} calls {call.call}, which may sleep{might}"
    else:
        sleeps = f"{r.func} may sleep{might}"
    nested = r.get("RCU nest depth")
    if rcu is not None:
        where = f", taken at {rcu.site}" if rcu.site else ""
        context = f"inside an RCU read-side critical section ({rcu.name}{where})"
        at = rcu.at
    elif isinstance(nested, int) and nested > 0:
        context = f"inside an RCU read-side critical section (RCU nest depth {nested})"
        at = r.at("RCU nest depth") or 0
    elif r.get("irqs_disabled") == 1:
        context = "with interrupts disabled"
        at = r.at("irqs_disabled") or 0
    elif count is not None and count.value:
        context = f"in atomic context (preempt_count {count.words()})"
        at = r.at("preempt_count") or 0
    elif r.get("in_atomic") == 1:
        context = "in atomic context (in_atomic() is 1)"
        at = r.at("in_atomic") or 0
    else:
        return None
    others = [lock.name for lock in held if lock is not rcu]
    holding = f"; also holding {', '.join(others)}" if others else ""
    statement = f"{sleeps} {context}{holding}{since}"
    section = f"the RCU read-side section {taker} took" if taker else "that section"
    return _cause("atomic_context", r, 0.6, _sleeping_advice(call, section, r.func), at, statement=statement)


def _sleeping_advice(call: SleepingCall | None, section: str, func: str) -> str:
    """What to do about the sleeping call, by what it is: no flag makes a user copy or a mutex atomic."""
    if call is None or call.caller is None:
        # No stack to tell what sleeps: either remedy may apply.
        return (
            f"move the sleeping call out of {section}, or make {func} not sleep there (GFP_ATOMIC, a non-blocking "
            "variant)"
        )
    if call.kind == "user copy":
        # The user page may have to be read in, whatever the flags.
        return (
            f"move the {call.call} in {call.caller} out of {section}: a user copy may fault and sleep; copy into a "
            "kernel buffer inside the section and to user space after it ends"
        )
    if call.kind == "allocation":
        return (
            f"allocate without sleeping at the {call.call} call in {call.caller} (GFP_ATOMIC or GFP_NOWAIT, the flags "
            f"may come from a caller), or move the allocation out of {section}"
        )
    if call.kind == "lock or wait":
        return (
            f"move the {call.call} call in {call.caller} out of {section}: a sleeping lock or wait has no atomic form"
        )
    return f"move the {call.call} call in {call.caller} out of {section}, or use a variant that does not sleep"


def _preemptible_cause(r: _Reading) -> Cause | None:
    """A per-CPU access with preemption enabled (lib/smp_processor_id.c check_preemption_disabled): the task may
    move to another CPU between reading which CPU it is on (or its variable) and using it."""
    access = r.get("per-CPU access")
    if access is None:
        return None
    caller = str(r.get("caller") or "")
    # "caller is __this_cpu_preempt_check": the check's own frame; the caller is the report's guilty frame.
    who = r.func if not caller or "preempt_check" in caller else caller.partition("+")[0]
    statement = (
        f"{who} uses {access} with preemption enabled (preempt_count {r.get('preempt_count')}): the task can move to "
        "another CPU between reading the CPU (or its per-CPU variable) and using it"
    )
    return _cause("atomic_context", r, 0.6, "disable preemption around the access (get_cpu()/put_cpu(), "
                  "preempt_disable()), or use the raw_/this_cpu_ form where a migration is harmless",
                  r.at("per-CPU access"), statement=statement)  # fmt: skip


# ---------------------------------------------------------------- suspicious RCU usage

_RCU_SCHEDULER = rc.compile(r"rcu_scheduler_active = (\d+), debug_locks = (\d+)")
_RCU_NOT_WATCHING = rc.compile(r"RCU used illegally from (extended quiescent state|offline CPU|idle CPU)!")


def _rcu_usage(r: _Reading) -> None:
    """What lockdep_rcu_suspicious() prints (kernel/locking/lockdep.c): the check that failed ("FILE:LINE
    MESSAGE!"), rcu_scheduler_active and debug_locks, whether RCU was watching the CPU, and the locks held (where
    an RCU reader is listed as a lock: rcu_read_lock, rcu_read_lock_bh, rcu_read_lock_sched, an srcu_struct)."""
    task: _HeldList | None = None
    # lockdep prints "other info that might help us debug this:", the scheduler line and the held locks before its
    # "stack backtrace:": a call trace above them is another task's, interleaved by the console (syzkaller 244: a
    # fault injection's stack between the check and the list), and reading stops only at the report's own.
    # A list whose entries are not all read yet goes on past another CPU's call trace (syzkaller 206: a warn_alloc's
    # stack between "#0: " and its pieces).
    info = False
    for line in _held_lines(r.lines):
        body = line.body
        if "stack backtrace:" in body or (
            info and ("Call Trace:" in body or "Call trace:" in body) and not _entries_unread(r)
        ):
            break  # the held locks are printed above the stack
        if "other info that might help" in body:
            info = True
        if r.rcu_check is None and ":" in body and (check := failed_check(body)) is not None:
            r.rcu_check = check
            r.add("RCU check", check.message, line)
            r.add("RCU check at", check.site, line)
        elif "rcu_scheduler_active" in body and (m := _RCU_SCHEDULER.search(body)) is not None:
            info = True
            r.num("rcu_scheduler_active", m.group(1), line)
            r.num("debug_locks", m.group(2), line)
        elif "used illegally from" in body and (m := _RCU_NOT_WATCHING.search(body)) is not None:
            r.add("RCU not watching", m.group(1), line)
        else:
            task = _held_list_line(r, body, line, task)
            info = info or task is not None  # (the list's first line read)
    held = [lock for lock in r.locks if lock.role == "held"]
    if r.get("locks held") is None:
        return
    held_reader = next((lock for lock in held if is_reader(lock.name)), None)
    if held_reader is not None:
        r.facts.append(_fact("RCU reader held", f"{held_reader.name}" + (f", taken at {held_reader.site}"
                             if held_reader.site else ""), held_reader.at))  # fmt: skip
    elif str(count := r.get("locks held")).isdigit() and int(str(count)) > len(held):
        # The console cut the list's entries (other CPUs' lines between its pieces): which locks is not read.
        why = r.held_unread or "the console cut its entries"
        cut = NotAvailable(f"lockdep's list names {count} held, {len(held) or 'none'} read ({why})")
        r.facts.append(_fact("RCU reader held", cut, r.at("locks held") or 0))
    else:
        r.facts.append(_fact("RCU reader held", "none", r.at("locks held") or 0))


def _held_words(held: Sequence[LockInfo], count: FactValue | None) -> str:
    """The locks held as a statement names them: "no locks held", "2 locks held (a, b)"."""
    if count == "none (lockdep)" or (not held and count is None):
        return "no locks held"
    names = ", ".join(lock.name for lock in held)
    number = count if count is not None else len(held)
    return f"{number} {'lock' if str(number) == '1' else 'locks'} held" + (f" ({names})" if names else "")


def _rcu_usage_cause(r: _Reading) -> Cause | None:
    """Why the RCU check failed, from its message and the locks held: a reader held where none may be (a sleep
    or a grace-period wait inside it), none held where one must be (a dereference, a list traversal), the
    update-side lock missing (rcu_dereference_protected), or a CPU RCU was not watching."""
    check = r.rcu_check
    if r.report.rule != "suspicious-rcu" or check is None:
        return None
    site = check.site
    held = [lock for lock in r.locks if lock.role == "held"]
    held_readers = [lock for lock in held if is_reader(lock.name)]
    count = r.get("locks held")
    # No "N locks held by" line read: the console may have dropped or mangled it, so its absence is "not read".
    listed = _held_words(held, count) if count is not None else "the locks-held list not read from the log"
    kind = check.check.kind
    failed = f"lockdep's RCU check at {site}: {check.message}"
    # The list's entries cut: whether a reader is among them is not known (:func:`_rcu_usage`).
    cut = r.get("RCU reader held") is None and r.at("RCU reader held") is not None
    # Its entries not told to be its task's (another task's lines between): said as that, not as a cut.
    unread = r.held_unread
    at: tuple[int | None, ...] = (r.at("RCU check"), r.at("RCU reader held"))
    accessor_step: str | None = None  # a lock held that may be the updaters': the accessor may be the wrong one
    not_watching = r.get("RCU not watching")
    if not_watching is not None:
        statement = (f"{failed} ran on a CPU RCU was not watching (RCU used illegally from {not_watching}): RCU "
                     "ignores a CPU that is idle or in an extended quiescent state, so no read-side section protects "
                     "anything there; the code ran from the idle loop or an entry path before RCU watched")  # fmt: skip
        at = (r.at("RCU not watching"), *at)
    elif kind in ("sleep in reader", "grace period in reader"):
        wanted = FLAVOUR_READER.get(check.flavour or "", "") if kind == "sleep in reader" else ""
        reader = next((lock for lock in held_readers if lock.name == wanted), None) or next(iter(held_readers), None)
        if kind == "sleep in reader":
            call = sleeping_call([f.function for f in r.report.trace if f.reliable], None)
            doing = (f"{call.caller} calls {call.call}, which may sleep," if call is not None and call.caller
                     else f"{r.func} may sleep")  # fmt: skip
            section = f"an {check.flavour} read-side critical section"
        else:
            doing = f"{r.func} waits for a grace period ({check.flavour}()),"
            section = "a read-side critical section (the grace period waits for that section itself: a deadlock)"
        if reader is not None:
            taken = f", taken at {reader.site}" if reader.site else ""
            statement = f"{doing} inside {section}: {reader.name} is held{taken}; {failed}"
        elif cut:
            not_read = (
                f"not read which: {unread}" if unread else "lockdep's list of the locks held is cut: not read which"
            )
            statement = f"{doing} inside {section} ({not_read}); {failed}"
        else:
            statement = (f"{doing} inside {section}, though lockdep lists no RCU reader held ({listed}): the "
                         "section was entered without its lockdep map (preemption or bottom halves disabled); "
                         f"{failed}")  # fmt: skip
    elif cut:
        not_read = (f"not read whether a reader was held: {unread}" if unread
                    else "the list of the locks held is cut (not read whether a reader was held)")  # fmt: skip
        statement = f"{failed}, in {r.func}: {not_read}"
    elif kind in ("dereference", "list traversal") and not held_readers and held:
        # rcu_dereference() is rcu_dereference_check(p, 0): its condition names no lock, so the updaters' lock held
        # (syzkaller 248: ip6_sk_fl_lock in ipv6_flowlabel_opt) fits a wrong accessor as well as a missing reader.
        did = "dereferenced the pointer" if kind == "dereference" else "traversed the RCU list"
        statement = (f"{r.func} {did} outside any RCU read-side critical section with {listed}, none an RCU "
                     "reader: if one of them serialises the updaters, the accessor is the wrong one (a plain "
                     "rcu_dereference() names no lock in its condition); else the reader is missing; "
                     f"{failed}")  # fmt: skip
        accessor = ("rcu_dereference_protected(p, lockdep_is_held(&LOCK))" if kind == "dereference"
                    else "list_for_each_entry_rcu(..., lockdep_is_held(&LOCK))")  # fmt: skip
        own = next((lock for lock in held if lock.site and lock.site.startswith(f"{r.func}+")), held[-1])
        accessor_step = (f"read the accessor at {site}: if {own.name} (or another lock held) serialises the "
                         f"updaters, use {accessor}; else take rcu_read_lock() around it")  # fmt: skip
    elif kind in ("dereference", "list traversal") and not held_readers:
        did = "dereferenced the pointer" if kind == "dereference" else "traversed the RCU list"
        statement = (f"{r.func} {did} outside any RCU read-side critical section and without the lock the check's "
                     f"condition names: {listed}, none an RCU reader; {failed}")  # fmt: skip
    elif kind in ("dereference", "list traversal"):
        names = ", ".join(lock.name for lock in held_readers)
        statement = (f"{failed} failed in {r.func} with {names} held: the check wants another reader (the _bh, "
                     "_sched or SRCU flavour its accessor names) or the lock its condition names")  # fmt: skip
    elif kind == "protected dereference":
        statement = (f"rcu_dereference_protected() in {r.func} without the update-side lock its condition names "
                     f"({listed}); {failed}")  # fmt: skip
        if held_readers:
            statement += f": the RCU reader held ({held_readers[0].name}) does not satisfy it, only the updaters' lock"
    elif kind == "idle reader":
        statement = (f"{check.flavour}() in {r.func} on a CPU RCU sees as idle (an extended quiescent state): RCU "
                     f"ignores the reader there; {failed}")  # fmt: skip
    else:
        statement = f"{failed}, in {r.func} with {listed}: read its condition at {site}"
    if r.get("debug_locks") == 0:
        statement += ("; lockdep was already off (debug_locks = 0): its held-locks list may be stale, a possible "
                      "false positive")  # fmt: skip
    # Not watching: whatever the check, the fix is the idle reader's (RCU must watch the CPU first).
    step = check.check.step if not_watching is None else next(c.step for c in RCU_CHECKS if c.kind == "idle reader")
    if accessor_step is not None:
        return _cause("rcu_usage", r, 0.6, accessor_step, *at, statement=statement)
    return _cause("rcu_usage", r, 0.7, step, *at, statement=statement)


# ---------------------------------------------------------------- invalid wait context


def _wait_context(r: _Reading) -> None:
    """What print_lock_invalid_wait_context() prints (kernel/locking/lockdep.c): the lock being taken with its wait
    types ``-{outer:inner}``, the task's context (``context-{N:N}``) and the held locks' wait types; and which of them
    forbid the lock (its outer type above the context's, or above a held lock's inner type).  The locks themselves
    (roles, sites, the task) are the lockdep reader's."""
    taking: tuple[WaitLock, LogLine] | None = None
    context: tuple[int, LogLine] | None = None
    held: list[tuple[WaitLock, LogLine]] = []
    announced = False
    for line in _held_lines(r.lines):
        body = line.body
        if "stack backtrace:" in body or "Call Trace:" in body or "Call trace:" in body:
            break  # the context and the held locks are printed above the stack
        if "is trying to lock" in body and TRYING_TO_LOCK.match(body) is not None:
            announced = True
        elif announced and taking is None and (lock := wait_lock(body)) is not None:
            taking = lock, line
        elif "context-{" in body and (m := WAIT_CONTEXT.match(body)) is not None:
            context = int(m.group(1)), line
        elif "#" in body and (lock := wait_lock(body)) is not None and lock.number is not None:
            held.append((lock, line))
    if taking is None:
        return
    lock, at = taking
    nesting = raw_nesting(context[0] if context else None, [lock, *(h for h, _ in held)])
    r.add("lock taken wait type", f"{{{lock.outer}:{lock.inner}}}: {type_words(lock.outer, nesting)}", at)
    r.add("lock taken kind", lock_kind(lock.outer, nesting), at)
    if context is not None:
        n = context[0]
        where, allows = context_words(n, nesting)
        r.add("wait context", f"{{{n}:{n}}}: {where}", context[1])
        if n < lock.outer:  # the context's type below the lock's outer type (check_wait_context())
            r.add("forbidden by context", f"{where} (context-{{{n}:{n}}}), where {allows}", context[1])
    inside = held_forbidding(lock.outer, [h for h, _ in held])
    for holder, line in held:
        if holder in inside:
            taken = f", taken at {holder.site}," if holder.site else ""
            r.add("forbidden inside", f"{holder.name}{taken} which allows at most {type_words(holder.inner, nesting)} "
                  f"(its inner wait type {holder.inner})", line)  # fmt: skip


def _wait_context_cause(r: _Reading) -> Cause | None:
    """Which lock was taken where its wait type is not allowed, and what forbids it (lockdep's wait-type check)."""
    kind = r.get("lock taken wait type")
    if r.report.rule != "invalid-wait-context" or kind is None:
        return None
    lock = r.get("acquiring lock") or "a lock"
    site = r.get("acquiring at")
    task = r.get("task") or "the task"
    types, _, what = str(kind).partition(": ")
    # might_fault()'s lockdep annotation of the mmap lock: the lock is "taken" by a user copy that may fault.
    user_copy = site is not None and str(site).split("+")[0] in ("__might_fault", "might_fault")
    annotation = (
        "might_fault()'s annotation of a user-memory access, which may fault and sleep on it; " if user_copy else ""
    )
    takes = f"{task} takes {lock}" + (f" at {site}" if site else "") + f" ({annotation}wait type {types}: {what})"
    reasons = []
    if (context := r.get("forbidden by context")) is not None:
        reasons.append(f"in {context}")
    inside = [str(f.value) for f in r.facts if f.name == "forbidden inside"]
    if inside:
        reasons.append("inside " + " and ".join(inside))
    if reasons:
        statement = f"{takes} {' and '.join(reasons)}: lockdep's wait-type check forbids it there"
    else:
        statement = (f"{takes}; what forbids it (the context or a held lock's inner wait type) is not in the lines "
                     f"read (context {r.get('wait context') or 'not printed'})")  # fmt: skip
    if user_copy:
        step = "move the user copy out of that section (copy into a kernel buffer inside it, to user space after)"
    elif r.get("lock taken kind") == "sleeping":
        step = (
            f"take {lock} outside that section (a sleeping lock cannot be taken there), or use one that does not sleep"
        )
    else:
        step = (
            f"take {lock} outside that context, or make it (or the lock it nests in) fit: a raw_spinlock_t where "
            "PREEMPT_RT would make a spinlock_t sleep")  # fmt: skip
    return _cause("wait_context", r, 0.7, step, r.at("lock taken wait type"), statement=statement)


# ---------------------------------------------------------------- CONFIG_DEBUG_SPINLOCK's checks


def _spinlock(r: _Reading) -> None:
    """What spin_dump() and rwlock_bug() print (kernel/locking/spinlock_debug.c): the check that failed, the CPU and
    task, and the lock's words (address, magic, owner, owner CPU) with what each says."""
    for line in r.lines:
        body = line.body
        if "Call Trace:" in body or "Call trace:" in body:
            break
        if r.get("lock check") is None and "BUG: " in body and (m := SPIN_HEADER.search(body)) is not None:
            r.add("lock type", m.group(1), line)
            r.add("lock check", m.group(2), line)
            r.num("CPU", m.group(3), line)
            r.add("task", m.group(4), line)
            r.num("pid", m.group(5), line)
            r.add("lock", m.group(6), line)  # rwlock_bug()'s address
        elif r.get("lock check") is not None and ".magic:" in body and (m := SPIN_FIELDS.match(body)) is not None:
            r.add("lock", m.group(1), line)
            kind = str(r.get("lock type"))
            r.add("magic", m.group(2).rjust(8, "0"), line)
            r.add("magic is", magic_meaning(int(m.group(2), 16), kind), line)
            owner = "none" if m.group(3) == "<none>" and m.group(4) == "-1" else f"{m.group(3)}/{m.group(4)}"
            r.add("owner", owner, line)
            if owner == f"{r.get('task')}/{r.get('pid')}":
                r.add("owner is", "the reporting task", line)
            r.add("owner_cpu", int(m.group(5)), line)
            r.add("owner_cpu is", owner_cpu_meaning(int(m.group(5))), line)
            break


def _spinlock_cause(r: _Reading) -> Cause | None:
    """Which of CONFIG_DEBUG_SPINLOCK's checks failed on which lock, and what the lock's words say of it: a bad magic
    read as what overwrote it, a recursion's owner the reporting task itself."""
    message = r.get("lock check")
    if r.report.rule != "spinlock" or message is None:
        return None
    check = SPIN_CHECKS[str(message)]
    kind = str(r.get("lock type"))
    lock = f"the {kind} at {r.get('lock')}" if r.get("lock") else f"a {kind}"
    who = f"{r.get('task')} (pid {r.get('pid')}) on CPU {r.get('CPU')}"
    at = r.at("lock check")
    if r.get("magic") is None:
        # rwlock_bug() prints the address alone; spin_dump()'s words line may be cut from the log.
        words = "rwlock_bug() prints none of its words" if kind == "rwlock" else "its words are not in the log"
        statement = f"{kind} {message} ({check.condition}) on {lock}, by {who}: {check.meaning}; {words}"
    elif message == "bad magic":
        statement = (
            f"{lock} is not a live {kind} ({check.condition}), taken by {who}: its .magic is {r.get('magic is')}"
        )
        owner_cpu = r.get("owner_cpu")
        if isinstance(owner_cpu, int) and not -1 <= owner_cpu < MAX_NR_CPUS:
            statement += f"; its .owner_cpu, {r.get('owner_cpu is')}"
        at = r.at("magic")
    else:
        owner = r.get("owner")
        held = (
            "no owner"
            if owner == "none"
            else f"owner {owner}" + (", the reporting task itself" if r.get("owner is") else "")
        )
        owner_cpu = r.get("owner_cpu")
        if owner != "none" and owner_cpu == -1:
            # debug_spin_lock_after() sets .owner and .owner_cpu together and debug_spin_unlock() resets both: an
            # owner with no CPU is a state no lock or unlock leaves, so the words, not the task, are what is known.
            itself = " (the reporting task itself)" if r.get("owner is") else ""
            statement = (
                f"{kind} {message} ({check.condition}) on {lock}, by {who}: the lock's words disagree: its "
                f".owner, {owner}{itself}, says it is held, its .owner_cpu, -1, says it is unlocked, a state "
                "no lock or unlock leaves: the words are stale or overwritten (the lock copied while held, "
                f"as in a structure copied whole, or written over), as likely as a real {message}"
            )
            at = r.at("owner_cpu")
            step = (f"find where the structure holding the lock at {r.get('lock')} was copied or written on "
                    f"{r.func}'s path (a memcpy or struct assignment while the lock was held), and whether it was "
                    "initialised with spin_lock_init() after")  # fmt: skip
            return _cause("lock_misuse", r, 0.5, step, at, statement=statement)
        statement = (f"{kind} {message} ({check.condition}) on {lock}, by {who}: {check.meaning}; the lock records "
                     f"{held}, .owner_cpu {r.get('owner_cpu is')}")  # fmt: skip
    retaken = (
        f"find where the lock was first taken on {r.func}'s path (CONFIG_PROVE_LOCKING's recursive locking report "
        "names it); a handler that interrupts its holder needs the holder's _irqsave/_bh form"
    )
    step = {
        # An address is a heap object's (kmem says whose); a symbol (%pS) is static data, its words read as they are.
        "bad magic": f"crash> kmem {r.get('lock')}  # in a dump of this crash: whose object the address is, and "
        "whether it is freed"
        if str(r.get("lock")).startswith("0x")
        else f"crash> rd -x {str(r.get('lock')).split('+')[0]} 4  # in a dump of this crash: the lock's words",
        "lockup suspected": "look at what the lock's owner does (its stack: echo l > /proc/sysrq-trigger)",
        "recursion": retaken,
        "cpu recursion": f"find what the lock's owner ({r.get('owner') or 'its .owner'}) did after taking it on this "
        "CPU: a sleep or a preemption with it held (CONFIG_DEBUG_ATOMIC_SLEEP reports the sleep), a return without "
        "the unlock, or a copy of the structure holding the lock while it was held",
        "trylock failure on UP": retaken,
    }.get(str(message), f"pair every lock and unlock of this lock on {r.func}'s paths (CONFIG_PROVE_LOCKING names "
                       "where it was taken)")  # fmt: skip
    return _cause("bad_lock" if message == "bad magic" else "lock_misuse", r, 0.7, step, at, statement=statement)


# ---------------------------------------------------------------- UBSAN

#: The lines that end a UBSAN report's message (the dump_stack() that follows it, the closing rule).
_UBSAN_END = ("CPU: ", "Call Trace:", "Call trace:", "Hardware name:", "=====", "---[ end")


def _ubsan(r: _Reading) -> None:
    """What lib/ubsan.c prints: the check (the header's word, or the message's in the legacy "Undefined behaviour"
    format), where (FILE:LINE:COL), and the message with the operation's values, read into words."""
    check: str | None = None
    header = False
    intro: tuple[str, LogLine] | None = None  # the legacy "signed integer overflow:" line
    for line in r.lines:
        body = line.body
        if not header:
            if "UBSAN:" in body and (m := UBSAN_HEADER.search(body)) is not None:
                header, check = True, m.group(1)
                r.add("UBSAN at", m.group(2), line)
            continue
        if any(word in body for word in _UBSAN_END):
            break
        message = body.strip()
        if not message:
            continue
        if intro is None and (m := OVERFLOW_INTRO.match(message)) is not None:
            intro = m.group(1), line
            continue
        found = operation(message, check)
        r.add("UBSAN check", found.check, line)
        r.add("UBSAN message", message, line)
        r.add("UBSAN operation", found.words, line)
        return
    if intro is not None:
        r.add("UBSAN check", check or "integer-overflow", intro[1])
        r.add("UBSAN operation", f"{intro[0]} integer overflow (its values are not in the log)", intro[1])


def _ubsan_cause(r: _Reading) -> Cause | None:
    """The operation UBSAN caught, with its values, at the site it names."""
    words = r.get("UBSAN operation")
    if r.report.kind is not _RK_UBSAN or words is None:
        return None
    check = str(r.get("UBSAN check"))
    site = r.get("UBSAN at") or "the site the report names"
    statement = f"{check} in {r.func} at {site}: {words}"
    if check == "array-index-out-of-bounds":
        length = indexed_length(str(r.get("UBSAN message")))
        if length == 0:  # often the declaration, not the access, is wrong
            step = (f"check the allocation's size against the index at {site} (the array's real length), and "
                    "declare the member a flexible array member ([]) so that UBSAN knows it")  # fmt: skip
            return _cause("out_of_bounds", r, 0.5, step, r.at("UBSAN operation"), statement=statement)
        if length == 1:  # a flexible array or a one-element one: the declaration says which
            step = (f"read the array's declaration (the index at {site}): if it is its struct's last member, check "
                    "the allocation's size against the index and declare it a flexible array member ([]); else "
                    "check the index against its one element")  # fmt: skip
            return _cause("out_of_bounds", r, 0.5, step, r.at("UBSAN operation"), statement=statement)
        return _cause("out_of_bounds", r, 0.8, f"check the index against the array's length at {site}",
                      r.at("UBSAN operation"), statement=statement)  # fmt: skip
    step = {
        "shift-out-of-bounds": f"keep the shift count from 0 to the type's width - 1 at {site} (or shift a wider type)",
        "integer-overflow": f"check the operands at {site} (check_add_overflow()/check_mul_overflow(), a wider type)",
    }.get(check, f"read {site}: the operation's operands and where they come from")
    return _cause("undefined_behaviour", r, 0.7, step, r.at("UBSAN operation"), statement=statement)


# ---------------------------------------------------------------- divide error

_DIVIDE = rc.compile(r"^(i?div) ([a-z0-9]+)$")


def _register_bits(name: str) -> int:
    """The bits an x86 general register's name reads of its 64-bit register: rcx 64, ecx 32, cx 16, cl 8, r8d 32,
    r8w 16, r8b 8."""
    if name[0] == "r" and name[1:].isdigit():
        return 64
    if name[0] == "r" and name[-1] in "dwb":
        return {"d": 32, "w": 16, "b": 8}[name[-1]]
    if len(name) == 3:
        return 64 if name[0] == "r" else 32 if name[0] == "e" else 8  # rcx, ecx, sil
    return 8 if name[-1] in "lh" and name[0] in "abcd" else 16  # cl, ah; cx, si


def _divide_cause(r: _Reading) -> Cause | None:
    """A #DE (divide error): a DIV or IDIV whose divisor was zero, or whose quotient does not fit its register (IDIV
    of the most negative value by -1); which one, from the faulting instruction and its divisor register's value."""
    if r.report.rule != "divide-error":
        return None
    insn = str(r.get("faulting instruction") or "")
    m = _DIVIDE.match(insn)
    at = r.at("faulting instruction") or 0
    if m is None:
        statement = f"a division in {r.func} by zero, or with a quotient too large for its register" + (
            f" (the faulting instruction: {insn})" if insn else " (no Code: line to tell which)"
        )
        return _cause("divide_error", r, 0.5, _dis(r), at, statement=statement)
    name = m.group(2)
    regs, _ = registers(own_lines(r.report))
    full = regs.get(x86_canonical(name) or name)
    bits = _register_bits(name)
    value = None if full is None else (full >> 8 if name in ("ah", "bh", "ch", "dh") else full) & ((1 << bits) - 1)
    if value is not None:
        # The divisor's value, cited at the register dump's line that prints it (not the Code: line).
        printed = f"{(x86_canonical(name) or name).upper()}: "
        line = next((x for x in own_lines(r.report) if printed in x.body), None)
        if line is not None:
            r.add("divisor", f"{name} = {value:#x}", line)
            at = r.at("divisor") or at
    if value == 0:
        statement = f"{r.func} divided by zero: `{insn}` with {name} = 0"
        confidence = 0.8
    elif value is not None:
        statement = (
            f"{r.func}: `{insn}` with {name} = {value:#x}, not zero: the quotient does not fit in {bits} bits"
            + (" (the most negative value divided by -1)" if m.group(1) == "idiv" and value == (1 << bits) - 1 else "")
        )
        confidence = 0.6
    else:
        statement = f"{r.func} divided by zero (or overflowed the quotient): `{insn}`, {name} not in the register dump"
        confidence = 0.5
    return _cause("divide_error", r, confidence, _dis(r), at, statement=statement)


# ---------------------------------------------------------------- the tables


# -- a panic: what "Kernel panic - not syncing: ..." says made the kernel stop.

_PANIC = rc.compile(r"Kernel panic - not syncing: (.*?)\s*$")
_END_TRACE = "---[ end trace"
#: The signal numbers of asm-generic/signal.h (x86, arm, arm64, riscv, s390, powerpc: the arches syzkaller runs);
#: alpha, mips, parisc and sparc number some otherwise.
_SIGNALS = {
    1: "SIGHUP",
    2: "SIGINT",
    3: "SIGQUIT",
    4: "SIGILL",
    5: "SIGTRAP",
    6: "SIGABRT",
    7: "SIGBUS",
    8: "SIGFPE",
    9: "SIGKILL",
    10: "SIGUSR1",
    11: "SIGSEGV",
    12: "SIGUSR2",
    13: "SIGPIPE",
    14: "SIGALRM",
    15: "SIGTERM",
}
#: A few errno values a panic message prints negated (include/uapi/asm-generic/errno-base.h).
_ERRNOS = {1: "EPERM", 2: "ENOENT", 5: "EIO", 12: "ENOMEM", 16: "EBUSY", 19: "ENODEV", 22: "EINVAL", 28: "ENOSPC"}


class _PanicReason(NamedTuple):
    """What a panic message says made the kernel panic (kernel/panic.c and its callers)."""

    pattern: re.Pattern[str]
    follows: str | None  # the kind of report the panic follows and makes fatal, where there is one
    words: Callable[[re.Match[str]], str]  # the statement, from the message's match


def _panic_reason(message: str) -> tuple[_PanicReason, re.Match[str]] | None:
    """The first of :data:`_PANIC_REASONS` that reads ``message``, and its match; None where none does."""
    for reason in _PANIC_REASONS:
        if (m := reason.pattern.match(message)) is not None:
            return reason, m
    return None


def _exit_code(m: re.Match[str]) -> str:
    """do_exit()'s code of the init task, decoded as wait(2) would: a signal in its low 7 bits, else a status."""
    code = int(m.group(1), 16)
    if code & 0x7F:
        signal = _SIGNALS.get(code & 0x7F, f"signal {code & 0x7F}")
        core = ", dumping core" if code & 0x80 else ""
        return (
            f"init (pid 1) was killed by {signal} (exitcode={m.group(1)}: signal {code & 0x7F}{core}); the kernel "
            "cannot run without init, so do_exit() panicked: read the init's fault above (its segfault line)"
        )
    return (
        f"init (pid 1) exited with status {(code >> 8) & 0xFF} (exitcode={m.group(1)}); the kernel cannot run "
        "without init, so do_exit() panicked: init (or the initramfs's /init) returned or called exit()"
    )


def _errno_words(m: re.Match[str]) -> str:
    errno = int(m.group(2))
    name = _ERRNOS.get(errno, f"errno {errno}")
    return (
        f"n_tty could not be opened for {m.group(1)} (error -{errno}, {name}) while a line discipline was set "
        "back, and tty_ldisc_restore() has no other to fall back to"
        + (": an allocation failed (fault injection or memory pressure)" if errno == 12 else "")
    )


#: The panic messages read, most specific first (the first that matches the message says why).
_PANIC_REASONS: tuple[_PanicReason, ...] = (
    _PanicReason(rc.compile(r"^(?:\w+: )?Fatal exception in interrupt"), "oops",
                 lambda m: "an oops in interrupt context (in_interrupt(): a hard or soft interrupt, an NMI, or bottom "
                 "halves disabled): no task can be killed there, so oops_end()/die() panicked, panic_on_oops or not"),
    _PanicReason(rc.compile(r"^(?:\w+: )?Fatal exception"), "oops",
                 lambda m: "an oops made fatal: oops_end()/die() panics instead of killing the task when "
                 "panic_on_oops is set (oops=panic)"),
    _PanicReason(rc.compile(r"^(?:\w+: )?panic_on_warn set"), "warning",
                 lambda m: "a warning made fatal: panic_on_warn is set, so the WARNING (or the sanitizer's report, "
                 "which checks it too) panicked"),
    _PanicReason(rc.compile(r"^(?:\w+: )?panic_on_(\w+) set"), "report",
                 lambda m: f"a {m.group(1).upper()} report made fatal: panic_on_{m.group(1)} is set"),
    _PanicReason(rc.compile(r"^hung_task: blocked tasks"), "hung task",
                 lambda m: "a task blocked past hung_task_timeout_secs made fatal: khungtaskd panics when "
                 "hung_task_panic is set"),
    _PanicReason(rc.compile(r"^softlockup: hung tasks"), "soft lockup",
                 lambda m: "a soft lockup made fatal: the watchdog panics when softlockup_panic is set"),
    _PanicReason(rc.compile(r"^(?:Hard LOCKUP|hardlockup|Watchdog detected hard LOCKUP)"), "hard lockup",
                 lambda m: "a hard lockup made fatal: the NMI watchdog panics when hardlockup_panic is set "
                 "(nmi_watchdog=panic)"),
    _PanicReason(rc.compile(r"^Out of memory and no killable processes"), "out of memory",
                 lambda m: "out of memory with no task the OOM killer may kill (each unkillable, or already dying): "
                 "out_of_memory() panics"),
    _PanicReason(rc.compile(r"^System is deadlocked on memory"), "out of memory",
                 lambda m: "out of memory and the OOM killer found no task to kill: the system is deadlocked on "
                 "memory"),
    _PanicReason(rc.compile(r"^Out of memory: (compulsory|system-wide) panic_on_oom"), "out of memory",
                 lambda m: f"out of memory with panic_on_oom set ({m.group(1)}): the OOM killer panics in place of "
                 "killing a task"),
    _PanicReason(rc.compile(r"^stack-protector: Kernel stack is corrupted in: (\S+)"), None,
                 lambda m: f"the stack canary of {m.group(1)}'s frame was overwritten when it returned "
                 "(__stack_chk_fail): a write past a buffer on the stack, in that function or in one it passed "
                 "the buffer to"),
    _PanicReason(rc.compile(r"^corrupted stack end detected inside scheduler"), None,
                 lambda m: "the task's STACK_END_MAGIC was overwritten (schedule_debug()): its kernel stack "
                 "overflowed, or a write past a stack buffer reached its end"),
    _PanicReason(rc.compile(r"^VFS: Unable to mount root fs on (\S+)"), None,
                 lambda m: f"the root file system could not be mounted on {m.group(1)}: the root= device is missing "
                 "(unknown-block(0,0): no driver for it, or no such device) or holds no file system the kernel reads"),
    _PanicReason(rc.compile(r"^Attempted to kill init! exitcode=(0x[0-9a-f]+)"), None, _exit_code),
    _PanicReason(rc.compile(r"^Attempted to kill the idle task!"), "oops",
                 lambda m: "the idle task oopsed (or exited): the kernel cannot run without it"),
    _PanicReason(rc.compile(r"^Aiee, killing interrupt handler!"), "oops",
                 lambda m: "an oops in interrupt context: do_exit() cannot kill an interrupt handler"),
    _PanicReason(rc.compile(r"^Couldn't open N_TTY ldisc for (\S+) --- error -(\d+)"), None, _errno_words),
    _PanicReason(rc.compile(r"^sysrq triggered crash"), None,
                 lambda m: "a requested crash: sysrq_handle_crash() panics on SysRq-C (echo c > /proc/sysrq-trigger, "
                 "Alt+SysRq+C, or a watchdog writing to sysrq-trigger), by design"),
    _PanicReason(rc.compile(r"^bad mode"), None,
                 lambda m: "an exception the vector table does not handle (arm64 bad_mode(): an exception taken in "
                 "an unexpected mode, or a synchronous one of an unknown class)"),
)  # fmt: skip


def _panic(r: _Reading) -> None:
    """The panic's message, and the report above it that it makes fatal where the message says there is one: the
    ``---[ end trace`` line an oops or WARNING ends with, when it is among the lines above the panic's."""
    found = r.search(_PANIC, "Kernel panic")
    if found is None:
        return
    line, m = found
    message = m.group(1)
    if not r.report.rule.startswith("panic"):
        # The panic ends this report (oops_end() on an oops, with panic_on_oops set): said of it, not its cause.
        read = _panic_reason(message)
        r.add("then panicked", message if read is None else f"{message}: " + read[0].words(read[1]), line)
        return
    r.add("panic message", message, line)
    if _panic_reason(message) is None:
        r.facts.append(
            _fact(
                "why it panicked",
                NotAvailable("the message is not one kforensic reads: the caller of panic() in the call trace says"),
                line.number - r.first,
            )
        )
    # arm64's bad_mode() prints the mode and ESR above its panic ("Bad mode in Synchronous Abort handler ...").
    if message.startswith("bad mode") and (bad := r.search(_BAD_MODE, "Bad mode")) is not None:
        r.add("bad mode", bad[1].group(0).strip(), bad[0])
    # The nearest end marker above, printed by the same caller where the log prints callers ("[T26603]"): another
    # CPU's oops may end between the panicking task's own and its panic.
    for line_before in reversed([x for x in r.lines if x.number < line.number]):
        if _END_TRACE in line_before.body and (line.context is None or line_before.context in (None, line.context)):
            r.add("report ended", line_before.body.strip(), line_before)
            break


_BAD_MODE = rc.compile(r"Bad mode in .*? handler detected.*$")


def _panic_cause(r: _Reading) -> Cause | None:
    message = r.get("panic message")
    if message is None:
        return None
    at = r.at("panic message")
    read = _panic_reason(str(message))
    if read is None:
        return None
    reason, m = read
    statement = "the kernel panicked on " + reason.words(m)
    if r.get("bad mode"):
        statement += f"; the kernel printed: {r.get('bad mode')}"
    ended = r.get("report ended") if reason.follows in ("oops", "warning", "report") else None
    if ended is not None:
        statement += f"; the {reason.follows} above it ended at line {r.first + (r.at('report ended') or 0)}"
    return _cause("kernel_panic", r, 0.7, "read the report above the panic that it makes fatal",
                  at, r.at("report ended") if ended is not None else None, statement=statement,
                  follows=reason.follows, message=str(message))  # fmt: skip


#: The kinds of report a panic makes fatal, by what its message says it follows (:data:`_PANIC_REASONS`).
_PANIC_FOLLOWS: Final[dict[str, frozenset[ReportKind]]] = {
    "oops": _FAULT_KINDS - {ReportKind.WARNING, ReportKind.REFCOUNT} | {ReportKind.RUST_PANIC, ReportKind.NULL_DEREF},
    "warning": frozenset((ReportKind.WARNING, ReportKind.REFCOUNT, ReportKind.KASAN, ReportKind.UBSAN,
                          ReportKind.KFENCE, ReportKind.KCSAN, ReportKind.LOCKDEP, ReportKind.LIST_CORRUPTION)),
    "report": frozenset((ReportKind.KMSAN,)),
    "hung task": frozenset((ReportKind.HANG,)),
    "soft lockup": frozenset((ReportKind.SOFT_LOCKUP,)),
    "hard lockup": frozenset((ReportKind.LOCKUP,)),
    "out of memory": frozenset((ReportKind.OOM,)),
}  # fmt: skip


def link_panic(report: KernelReport, why: ReportWhy, above: Sequence[KernelReport]) -> ReportWhy:
    """A panic's reading with the report it makes fatal named: the nearest report of ``above`` (the log's reports
    before it, in log order) of the kind its message follows, printed by the same caller where the log prints
    callers; ``why`` as it is where there is none (the oops cut off, or not kept)."""
    cause = why.cause
    if cause is None or cause.cls != "kernel_panic":
        return why
    fields = dict(cause.fields)
    kinds = _PANIC_FOLLOWS.get(str(fields.get("follows")))
    if kinds is None:
        return why
    caller = parse_line(report.start_line, report.lines[0][1]).context if report.lines else None
    for before in reversed(above):
        if before.start_line >= report.start_line or not before.lines:
            continue
        if caller is not None and parse_line(before.start_line, before.lines[0][1]).context not in (None, caller):
            continue
        if before.kind not in kinds:
            if fields.get("follows") == "oops" and before.rule in NO_END_MARKER_RULES:
                # A lockdep splat ends in no end marker and no panic: one between an oops and its "Fatal exception"
                # was raised while the oops was printed (its printk took a lock: corpus log 352, ue22 #4).
                continue
            return why  # the nearest report of its caller is of another kind: no claim which one it was
        at = before.start_line - report.start_line
        statement = f"{fields['statement']}; the report it makes fatal: line {before.start_line}, {before.title}"
        fields.update(statement=statement, follows_line=before.start_line, follows_title=before.title)
        linked = Cause(
            cause.cls,
            tuple(fields.items()),
            cause.confidence,
            f"read the report at line {before.start_line} that it makes fatal: its cause is the panic's",
        )
        facts = (*why.facts, _fact("follows report", before.title, at))
        return why._replace(facts=facts, cause=linked, cause_at=tuple(sorted({*why.cause_at, at})))
    return why


class Extractor(NamedTuple):
    """A reader of one report class: which reports it applies to, and the function that reads them."""

    name: str
    applies: Callable[[KernelReport, str], bool]  # the report, and its text (preamble and lines) joined
    read: Callable[[_Reading], None]
    example: str  # a header of a report it applies to (checked by the tests)
    reads: str  # what it reads from a report's body, named when it found none of it


#: Every reader, most specific first; the first that applies names the report's class, every one
#: that applies adds its facts (a list corruption's BUG also has a faulting instruction).
EXTRACTORS: tuple[Extractor, ...] = (
    Extractor("kasan", lambda r, t: r.kind is _RK_KASAN and "BUG: KASAN:" in t, _kasan,
              "BUG: KASAN: use-after-free in f+0x1/0x2",
              "the bad access (its address, size and object)"),
    Extractor("kfence", lambda r, t: r.kind is _RK_KFENCE, _kfence,
              "BUG: KFENCE: use-after-free read in f+0x1/0x2",
              "the bad access (its address and object)"),
    Extractor("kmsan", lambda r, t: r.kind is _RK_KMSAN, _kmsan, "BUG: KMSAN: uninit-value in f+0x1/0x2",
              "the uninitialized value's use and origin"),
    Extractor("data-race", lambda r, t: r.kind is _RK_KCSAN, _kcsan, "BUG: KCSAN: data-race in f / g",
              "the two racing accesses"),
    Extractor("memory-leak", lambda r, t: r.kind is _RK_LEAK, _kmemleak, "BUG: memory leak",
              "its unreferenced object and backtrace"),
    Extractor("list-corruption", lambda r, t: ("corruption" in t and _LIST_MESSAGE.search(t) is not None)
              or "list_add double add" in t, _list_corruption, "kernel BUG at lib/list_debug.c:53!",
              "the corrupted list pointers"),
    Extractor("refcount", lambda r, t: "refcount_t:" in t, _refcount, "WARNING: CPU: 0 PID: 1 at lib/refcount.c:28 f",
              "the refcount's misuse"),
    Extractor("spinlock", lambda r, t: r.rule == "spinlock", _spinlock, "BUG: spinlock bad magic on CPU#0, swapper/0/1",
              "the lock's words (magic, owner, owner CPU)"),
    Extractor("wait-context", lambda r, t: r.rule == "invalid-wait-context", _wait_context,
              "[ BUG: Invalid wait context ]", "the lock taken and its context's wait types"),
    Extractor("lockdep", lambda r, t: r.kind is _RK_LOCKDEP
              or r.rule in ("bad-unlock", "held-lock-freed", "locks-held", "lock-held-user"), _lockdep,
              "WARNING: possible circular locking dependency detected",
              "its locks and tasks"),
    Extractor("lockup", lambda r, t: r.kind in (_RK_SOFT_LOCKUP, _RK_LOCKUP), _lockup,
              "watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [kworker/1:1:60]",
              "the stuck CPU and task"),
    Extractor("rcu-stall", lambda r, t: r.kind is _RK_RCU_STALL, _rcu_stall,
              "rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:",
              "the stalled CPUs and tasks"),
    Extractor("hung-task", lambda r, t: r.rule in BLOCKED_TASK_RULES, _hung_task,
              "INFO: task kworker/0:1:12 blocked for more than 143 seconds.",
              "the blocked task and its stack"),
    Extractor("bad-page", lambda r, t: r.rule == "bad-page-state", _bad_page,
              "BUG: Bad page state in process syz-executor  pfn:1a2b3",
              "the page's state"),
    Extractor("oom", lambda r, t: r.kind is _RK_OOM, _memory, "x invoked oom-killer: gfp_mask=0x0(), order=0",
              "the memory state and the task killed"),
    Extractor("alloc-failure", lambda r, t: r.kind is _RK_ALLOC_FAILURE, _memory,
              "x: page allocation failure: order:4, mode:0x40dc0(GFP_KERNEL)",
              "the failed allocation's order or size and memory state"),
    Extractor("atomic-context", lambda r, t: r.rule in _ATOMIC_RULES, _atomic,
              "BUG: scheduling while atomic: syz-executor.4/21395/0x00000201",
              "the context it slept in (preempt_count, held locks)"),
    Extractor("rcu-usage", lambda r, t: r.rule == "suspicious-rcu", _rcu_usage, "WARNING: suspicious RCU usage",
              "the RCU check that failed and the locks held"),
    Extractor("ubsan", lambda r, t: r.kind is _RK_UBSAN, _ubsan, "UBSAN: shift-out-of-bounds in net/foo.c:12:3",
              "the operation and its values"),
    Extractor("fault", lambda r, t: r.kind in _FAULT_KINDS or _lockdep_warn(r, t), _fault,
              "general protection fault, probably for non-canonical address 0xdffffc0000000000: 0000 [#1] SMP KASAN",
              "the faulting address and instruction"),
    # After the fault reader: a panic of a fault's kind (a corrupted stack end's) keeps its class.
    # A report that ends in a panic (an oops and its "Fatal exception", joined since 0bcb9d13) reads it too: why it
    # panicked is a fact there, the report's own cause stays its reader's.
    Extractor("panic", lambda r, t: r.rule.startswith("panic") or (r.panicked and "Kernel panic" in t), _panic,
              "Kernel panic - not syncing: Fatal exception", "why it panicked (its message)"),
)  # fmt: skip


# -- causes: each rule reads the facts and returns the cause they establish, or None.


def _lockdep_warn(report: KernelReport, text: str) -> bool:
    """A lockdep report that is lockdep's own WARN (``DEBUG_LOCKS_WARN_ON(1)`` in __lock_acquire: "WARNING: locking
    bug"): no lock chain to read, but a WARN's site and message."""
    return report.kind is _RK_LOCKDEP and "DEBUG_LOCKS_WARN_ON" in text


def _cause(cls: str, r: _Reading, confidence: float, command: str, *at: int | None, **fields: object) -> Cause:
    """The cause, its "root cause" fact at the first of the lines ``at`` and citing every other one: each line the
    statement rests on (the Code: line, the registers it names) is in its evidence, not the first alone."""
    lines = list(dict.fromkeys(a for a in at if a is not None)) or [0]
    r.facts.append(_fact("root cause", cls, lines[0], tuple(lines[1:])))
    return Cause(cls, tuple((k, v) for k, v in fields.items() if v is not None and v != ()), confidence, command)


def _code_lines(code: CodeListing | None, loaded: bool = True) -> tuple[int, ...]:
    """The lines a statement from the decoded Code: line rests on: the Code: line, the line printing the faulting
    operand's base register and (``loaded``) the one printing the register it was loaded through."""
    if code is None:
        return ()
    out = [code.at]
    if code.base and code.base_value is not None:
        out.append(code.register_at(code.base))
    if loaded and code.loaded_from and code.loaded_base and code.loaded_value is not None:
        out.append(code.register_at(code.loaded_base))
    return tuple(out)


def _cause_lines(r: _Reading, *names: str) -> tuple[int, ...]:
    return tuple(a for n in names if (a := r.at(n)) is not None)


def _pointer_words(r: _Reading) -> str | None:
    access, size, address = r.get("access"), r.get("size"), r.get("address")
    if access and address:
        return f"{access} of size {size} at {address}" if size else f"{access} at {address}"
    return None


def _dis(r: _Reading, func: FactValue | None = None, flags: str = "-l", note: str = "", then: str = "") -> str:
    """crash's disassembly of ``func`` (else the report's function), with source lines; where the report names no
    function (its call trace lost or damaged), the backtrace of a dump instead: ``dis`` of no name is no command."""
    # ``-r`` reads up to an address: "f+0x1c" (a trace's "f+0x1c/0x40" without its length, which crash rejects); a
    # name without its offset is read from its start (``-r`` up to a bare name shows one instruction).
    name = _function_name(str(func).split("/")[0] if "r" in flags else str(func).split("+")[0]) if func else None
    name = name or r.named_func
    if name is None:
        command = "crash> bt"
        note = "# in a dump of this crash: this log names no function to disassemble"
    else:
        command = f"crash> dis {flags if '+' in name else flags.replace('r', '')} {name}"
    return f"{command}; {then}" if then else f"{command}  {note}" if note else command


#: A kernel function's name as a trace prints it ("f", "f.isra.0", "f+0x1c"): not an address ("0x86"), a register
#: line's other field ("EFLAGS:") or two names ("f / g").
_FUNCTION_NAME = rc.compile(r"(?!0x[0-9a-f]+$)[A-Za-z_][\w.]*(?:\+0x[0-9a-f]+)?")


def _function_name(text: str) -> str | None:
    """``text`` when it is a function's name (maybe with an offset), else None."""
    return text if _FUNCTION_NAME.fullmatch(text) else None


def _sanitizer_double_free(r: _Reading) -> Cause | None:
    """KASAN's or KFENCE's free of an object already free.  KASAN before 5.x says "double-free or invalid-free"
    (kasan_report_invalid_free(): it does not tell them apart): a confidence below a plain "double-free"'s.  Where
    the object's allocation and first free are another owner's than the freeing path's (neither function on its
    call trace, another task), the pointer it frees is stale: its own object freed earlier with the slot reused, or
    another owner's memory (:func:`_stale_free`).
    """
    bug = str(r.get("bug") or "")
    if r.get("tool") not in ("KASAN", "KFENCE") or "double-free" not in bug:
        return None
    either = "invalid-free" in bug
    stale = _stale_free(r, either)
    if stale is not None:
        return stale
    address = r.get("address") or r.get("object")
    return _cause("double_free", r, 0.75 if either else 0.9, f"grep the freeing paths of {r.func} for a second kfree",
                  r.at("bug"), func=r.func, cache=r.get("cache"), address=log_hex(str(address)) if address else None,
                  first_free=r.get("freed by"))  # fmt: skip


#: The frames of an RCU callback's invocation (RCU's softirq, or its rcuc/rcuo kthreads) and of softirq's: a stack
#: with one ran there, and KASAN's "Freed by task N" over it names whatever task the softirq interrupted.
_RCU_CALLBACK_FRAME = rc.compile(
    r"(?:rcu_do_batch|rcu_process_callbacks|rcu_core(?:_si)?|_*rcu_reclaim|rcu_cpu_kthread|nocb_cb_wait"
    r"|rcu_nocb_cb_kthread)$"
)
_SOFTIRQ_FRAME = rc.compile(r"(?:_*do_softirq(?:_own_stack)?|handle_softirqs|run_ksoftirqd|_*irq_exit(?:_rcu)?)$")


def _ran_from(stack: StackSection | None) -> tuple[str, int] | None:
    """Where a recorded stack ran when its frames show it, and the frame's line: "from an RCU callback", "in softirq
    context"; else None (process context, or not read).  Its "by task N" then names no actor, only the task the
    softirq interrupted."""
    frames = stack.frames if stack is not None else ()
    for where, frame_pattern in (("from an RCU callback", _RCU_CALLBACK_FRAME), ("in softirq context", _SOFTIRQ_FRAME)):
        frame = next((f for f in frames if frame_pattern.match(f.function)), None)
        if frame is not None:
            return where, frame.at
    return None


def _by(who: FactValue, task: FactValue | None, ran: tuple[str, int] | None) -> str:
    """The words naming who made a recorded stack: ' by f (task N)', or ' by f (from an RCU callback)' where it
    ran there."""
    return f" by {who}" + (f" ({ran[0]})" if ran else f" (task {task})" if task is not None else "")


def _stale_free(r: _Reading, either: bool) -> Cause | None:
    """A free of memory another owner allocated and freed: the function that allocated the object and the one that
    freed it first are not on the freeing call trace, and the tasks that did are not the freeing one (where both
    are read).  The pointer it frees is stale.  KASAN's alloc and free stacks are the slot's last owner's, so the
    log cannot tell the path's own object freed earlier (the slot then reused by that owner, and freed again here)
    from a pointer to that owner's memory: both are said.  A task is named only for a stack run in process context
    (:func:`_ran_from`)."""
    allocator, freer = r.get("allocated by"), r.get("freed by")
    trace = r.stack(_SK_CALL_TRACE)
    if allocator is None or freer is None or trace is None:
        return None
    on_path = {f.function for f in trace.frames}
    if allocator in on_path or freer in on_path or r.func in (allocator, freer):
        return None
    task, pid = r.get("allocated by task"), r.report.pid
    if isinstance(pid, int) and task == pid:
        return None  # the freeing task allocated it: its own object, maybe freed twice
    allocated, freed = _ran_from(r.stack(_SK_ALLOCATED)), _ran_from(r.stack(_SK_FREED))
    statement = (f"stale pointer: {r.func} frees memory last allocated{_by(allocator, task, allocated)} "
                 f"and already freed{_by(freer, r.get('freed by task'), freed)}: either its own object "
                 "freed earlier and the slot reused, or a pointer to another owner's memory")  # fmt: skip
    step = (f"find where {r.func}'s caller got the pointer it frees and whether that memory was freed before "
            f"(the slot then reused by {allocator}), or is {allocator}'s own; "
            "look for the structure that held it freed earlier, or the pointer kept after its free")  # fmt: skip
    return _cause("invalid_free", r, 0.6 if either else 0.7, step, r.at("bug"), r.at("allocated by"),
                  r.at("freed by"), *(ran[1] for ran in (allocated, freed) if ran), statement=statement)  # fmt: skip


def _trap_double_free(r: _Reading) -> Cause | None:
    """SLAB_FREELIST_HARDENED's BUG_ON(object == fp) in set_freepointer(): the compared registers are equal."""
    if not str(r.get("faulting function") or r.get("warning site") or "").startswith("set_freepointer"):
        return None
    compared = [f.value for f in r.facts if f.name == "compared"]
    values = {str(v).split(" = ")[1] for v in compared if " = " in str(v)}
    address = log_hex(values.pop()) if len(compared) == 2 and len(values) == 1 else None
    return _cause("double_free", r, 0.85, _dis(r, note="# the second kfree"), r.at("faulting function"),
                  func=r.func, address=address)  # fmt: skip


def _slub_double_free(r: _Reading) -> Cause | None:
    if "Object already free" not in r.text:
        return None
    return _cause("double_free", r, 0.85, _dis(r), 0, func=r.func)


def _sanitizer_use_after_free(r: _Reading) -> Cause | None:
    bug = str(r.get("bug") or "")
    if r.get("tool") not in ("KASAN", "KFENCE") or "use-after-free" not in bug:
        return None
    freed = r.stack(_SK_FREED)
    step = (
        "look for the path that uses the object after the free (freed-by stack)"
        if freed is not None and freed.frames
        # A report cut before its frames (syzkaller's log 106: "Freed:", "PID = 4655", then the next report) has no
        # stack to look at: who freed it is read again where KASAN prints it whole.
        else "this log has no freed-by stack (cut): reproduce and read KASAN's freed-by stack, or find the kfree of "
        "this cache's objects that can run while the accessing task still holds the pointer"
    )
    return _cause("use_after_free", r, 0.9, step, r.at("bug"), func=r.func, cache=r.get("cache"),
                  pointer=_pointer_words(r), freed_by=r.get("freed by"))  # fmt: skip


def _poison_use_after_free(r: _Reading) -> Cause | None:
    """A fault through slab poison 0x6b (POISON_FREE) read from an object: that object was freed."""
    code = r.code
    if code is None or code.base_value is None or code.base is None or shadow_checked(code) is not None:
        return None
    cls = classify_value(code.base_value)
    if cls is None or cls.kind not in (_VK_SLAB_POISON_FREE, _VK_SLAB_POISON_END):
        return None
    if code.loaded_base and code.loaded_value is not None:
        pointer = f"{code.loaded_base} = {code.loaded_value:#x}"
    else:
        pointer = f"{code.base} = {code.base_value:#x}"
    return _cause("use_after_free", r, 0.8, f"crash> kmem {pointer.split(' = ')[1]}  # in a dump of this crash",
                  code.at, func=r.func, pointer=pointer)  # fmt: skip


def _list_node(r: _Reading) -> str | None:
    """The address of the list node whose pointer is wrong, as the message printed it: the entry being deleted (its
    own address, or what its neighbour should have pointed back to), else the neighbour named in parentheses."""
    entry = r.get("entry")
    if entry is None and r.get("operation") == "list_del":
        entry = r.get("expected")  # "prev->next should be ENTRY, but was X": __list_del_entry_valid()'s wording
    return str(entry or r.get("prev") or r.get("next") or "") or None


def _list_cause(r: _Reading) -> Cause | None:
    found = r.get("found")
    if r.get("operation") is None:
        return None
    at = r.at("message")
    node = _list_node(r)
    command = _dis(r, then=f"crash> kmem {node}  # in a dump of this crash: whose object it is" if node else "")
    value = log_hex(str(found)) if found else None
    if value in (LIST_POISON1, LIST_POISON2):
        poisons = ("next",) if value == LIST_POISON1 else ("prev",)
        return _cause("list_corruption", r, 0.85, command, at, func=r.func, poisons=poisons)
    if value is not None and (text := ascii_text(value)) is not None:
        return _cause("list_corruption", r, 0.85, command, at, func=r.func, value=value, text=text)
    what = str(r.get("found is") or "")
    if value is not None and (cls := classify_value(value)) is not None and cls.kind in SLAB_POISONS:
        explain = f"{r.get('pointer')} holds {value:#x}, {cls.meaning}: the entry or its neighbour was freed"
    elif value == 0:
        explain = f"{r.get('pointer')} is NULL: the entry was never initialised (INIT_LIST_HEAD) or was cleared"
    elif "added twice" in what:
        explain = "the entry is added to a list it is already on (added twice)"
    else:
        explain = f"{r.get('pointer') or 'a list pointer'} does not point back: memory corruption ({what})"
    return _cause("list_corruption", r, 0.7, command, at, func=r.func, explain=explain)


#: What a refcount_t warning says of the references (refcount_warn_saturate()'s messages).
_REFCOUNT_MEANINGS = (
    (("underflow", "decrement hit 0"), "dropped more often than it was taken"),
    (("addition on 0", "increment on 0"), "taken on an object whose count had fallen to 0 (already being freed)"),
    (("saturated", "overflow"), "taken more often than it was dropped (a reference leak)"),
)


def _refcount_cause(r: _Reading) -> Cause | None:
    event = r.get("refcount event")
    if event is None:
        return None
    consequence = r.get("consequence")
    meaning = next((m for words, m in _REFCOUNT_MEANINGS if any(w in str(event) for w in words)), "mishandled")
    statement = f"refcount {event} in {r.func}: a reference was {meaning}"
    if consequence:
        statement += f" ({consequence})"
    return _cause("refcount", r, 0.75, f"check the get/put pairs of the object {r.func} releases",
                  r.at("refcount event"), statement=statement)  # fmt: skip


def _sanitizer_other(r: _Reading) -> Cause | None:
    bug = str(r.get("bug") or "")
    tool = r.get("tool")
    if tool is None:
        return None
    if "out-of-bounds" in bug:
        where = f"{r.get('located')} the {r.get('cache')} object" if r.get("cache") and r.get("located") else None
        statement = (
            f"out-of-bounds access in {r.func}: " + (_pointer_words(r) or "an access") + (f", {where}" if where else "")
        )
        return _cause("out_of_bounds", r, 0.85, f"check the index or length {r.func} uses", r.at("bug"),
                      statement=statement)  # fmt: skip
    if tool == "KMSAN":
        created = r.get("uninit created by") or r.get("local variable")
        statement = f"uninitialised memory used in {r.func}" + (f": created in {created}" if created else "")
        return _cause("uninit_value", r, 0.85, "initialise the memory where it is created (uninit-created stack)",
                      r.at("bug"), statement=statement)  # fmt: skip
    if "invalid-free" in bug or "invalid free" in bug:
        return _cause(
            "invalid_free",
            r,
            0.8,
            f"check what {r.func} frees",
            r.at("bug"),
            statement=f"invalid free in {r.func}: the pointer freed is not the start of a live object",
        )
    if "invalid-access" in bug:
        where = f" in the {r.get('cache')} object at offset {r.get('offset')}" if r.get("cache") else ""
        return _cause(
            "invalid_access",
            r,
            0.75,
            "compare the allocated-by and freed-by stacks with the access",
            r.at("bug"),
            statement=f"KASAN tag mismatch in {r.func}: "
            + (_pointer_words(r) or "an access")
            + f"{where}: the pointer's tag is not the memory's (freed and reused, or out of bounds)",
        )
    if "null-ptr-deref" in bug:
        return _cause(
            "null_pointer",
            r,
            0.85,
            _dis(r),
            r.at("bug"),
            statement=f"NULL pointer dereference in {r.func}: " + (_pointer_words(r) or "an access"),
        )
    return None


def _race_cause(r: _Reading) -> Cause | None:
    """KCSAN: what the two functions race on, each side worded as KCSAN prints it, and the value change."""
    if r.get("tool") != "KCSAN" or r.get("access 1") is None:
        return None
    accesses = []
    for n in (1, 2):
        access = r.get(f"access {n}")
        if access is None:
            continue
        address = r.get(f"access {n} address")
        size = r.get(f"access {n} size")
        accesses.append({"func": str(r.get(f"access {n} in") or r.func), "access": str(access),
                         "size": size if isinstance(size, int) else None,
                         "address": log_hex(address) if isinstance(address, str) else None,
                         "caller": r.get(f"access {n} caller"),
                         "interrupt": r.get(f"access {n} by") == "interrupt"})  # fmt: skip
    return _cause("data_race", r, 0.75, "mark the accesses (READ_ONCE/WRITE_ONCE, data_race()) or take a common lock",
                  r.at("access 1"), accesses=tuple(accesses), value_change=r.get("value changed"))  # fmt: skip


def _leak_cause(r: _Reading) -> Cause | None:
    """kmemleak: who allocated the object nothing references any more."""
    who = r.get("allocated by")
    if r.report.kind is not _RK_LEAK or who is None:
        return None
    address, size, pid = r.get("object"), r.get("object size"), r.get("pid")
    return _cause("memory_leak", r, 0.7, f"look for the path of {who}'s object that drops it without a free "
                  "(echo scan > /sys/kernel/debug/kmemleak to confirm)", r.at("object") or r.at("allocated by"),
                  func=str(who), size=size if isinstance(size, int) else None,
                  address=log_hex(address) if isinstance(address, str) else None,
                  task=r.get("task"), pid=pid if isinstance(pid, int) else None)  # fmt: skip


def _null_cause(r: _Reading) -> Cause | None:
    kasan = r.get("KASAN range")
    address = r.get("address")
    value = log_hex(str(address)) if isinstance(address, str) else None
    code = r.code
    checked = shadow_checked(code) if code is not None else None
    if kasan is not None and "null-ptr-deref" in str(kasan):
        where = f"KASAN names the address range {str(kasan).split(' in ', 1)[-1]} (NULL plus an offset)"
    elif r.get("fault") == "page fault" and value is not None and value < 0x1000:
        # "NULL plus 0x0" says nothing: an address of 0 is NULL itself.
        where = f"address {value:#x} is NULL plus {value:#x}" if value else "address 0x0 is NULL"
        if r.get("access") == "instruction fetch":
            # The CPU fetched its next instruction from there (x86's "#PF: supervisor instruction fetch", arm64's
            # IABT): a call or jump through a NULL function pointer (or one NULL plus an offset: a bad one, a
            # member of a NULL object called), not a data access.
            where += ", fetched as an instruction: a call or jump through a NULL " + (
                "function pointer" if not value else "(or bad) function pointer"
            )
            caller = r.get("faulting function")
            if caller is not None:
                where += f" from {caller}" + (" (a '?' frame, unconfirmed)" if r.get("caller is") else "")
    elif checked is not None and checked[1] < 0x1000:
        where = f"the address KASAN checks is NULL plus {checked[1]:#x}"
    else:
        return None
    if code is not None and checked is not None:
        where += f"; `{code.faulting}` checks {checked[0]} << 3 = {checked[1]:#x}"
    elif code is not None and code.base and code.base_value is not None:
        where += f"; {code.base} = {code.base_value:#x} in `{code.faulting}`"
        if code.loaded_from:
            where += f", loaded from {code.loaded_from}"
            if code.loaded_base and code.loaded_value is not None:
                where += f" ({code.loaded_base} = {code.loaded_value:#x})"
    used: tuple[int, ...] = ()
    if code is not None and checked is not None:
        used = (code.at, code.register_at(checked[0]))
    elif code is not None and code.base and code.base_value is not None:
        used = _code_lines(code)
    return _cause("null_pointer", r, 0.8, _dis(r, r.get("faulting function"), flags="-rl"),
                  r.at("KASAN range") or r.at("address"), *used,
                  statement=f"NULL pointer dereference in {r.func}: {where}")  # fmt: skip


def _bad_jump_cause(r: _Reading) -> Cause | None:
    """A page fault fetching an instruction at a bad address that is not NULL plus an offset (log 160's RIP =
    CR2 = 0xffffffffffffffff): the CPU was sent there by a call or jump through a corrupted function pointer, and
    the function that made it is the caller :func:`_instruction_fetch` found (its return address)."""
    jumped = r.get("jumped to")
    value = _hex_value(jumped)
    if r.get("fault") != "page fault" or r.get("access") != "instruction fetch" or value is None or value < 0x1000:
        return None  # NULL plus an offset is :func:`_null_cause`'s
    cls = classify_value(value)
    what = cls.meaning if cls is not None else str(r.get("address is") or "a kernel address (not poison, not text)")
    statement = f"jump to a bad address in {r.func}: the CPU fetched its next instruction at {jumped}, {what}: "
    statement += "a call or jump through a corrupted function pointer"
    caller = r.get("faulting function")
    if caller is not None:
        statement += f" from {caller}" + (" (a '?' frame, unconfirmed)" if r.get("caller is") else "")
    return _cause("corrupted_values", r, 0.6, _dis(r, caller, flags="-rl"), r.at("jumped to"), statement=statement)


#: Value kinds a register's value can be without memory being corrupted: a NULL member read, a user pointer, and
#: the slab poisons of a use-after-free (said by their own causes).
_NOT_CORRUPTION = frozenset(
    {ValueKind.NULL_OFFSET, ValueKind.USER_ADDRESS, ValueKind.SLAB_POISON_FREE, ValueKind.SLAB_POISON_END}
)


#: The debug locks' magics: a pointer read from a lock's words (a wrong or stale object, not random damage).
_LOCK_MAGICS: Final = {
    ValueKind.SPINLOCK_MAGIC: ("SPINLOCK_MAGIC 0xdead4ead", "spinlock_t", "include/linux/spinlock_types.h"),
    ValueKind.RWLOCK_MAGIC: ("RWLOCK_MAGIC 0xdeaf1eed", "rwlock_t", "include/linux/rwlock_types.h"),
}


def _corrupted_values(r: _Reading) -> Cause | None:
    """A fault through a value no pointer can have (text, poison other than a freed object's, a bogus address)."""
    code = r.code
    kasan = str(r.get("KASAN range") or "")
    if "wild-memory-access" in kasan and isinstance(bad := r.get("bad address"), str):
        # KASAN's shadow check names the address the code used; "wild" is an address no object has: the pointer
        # was a bogus value (read from corrupted memory, or computed from one).
        cls = classify_value(v) if (v := log_hex(bad)) is not None else None
        if cls is not None and cls.kind not in _NOT_CORRUPTION:
            # The pointer table words a non-canonical value for x86's general protection fault; arm64 faults too.
            meaning = ("an address outside both the user and the kernel ranges: not a pointer at all"
                       if cls.kind is _VK_NON_CANONICAL else cls.meaning)  # fmt: skip
            kind, _, where = kasan.partition(" in ")
            return _cause("corrupted_values", r, 0.6, "crash> bt -FF; crash> rd -SS <address> 8", r.at("KASAN range"),
                          statement=f"memory corruption: KASAN names the address range {where} ({kind}): "
                          f"{meaning}")  # fmt: skip
    if code is None or code.base_value is None:
        return None
    checked = shadow_checked(code)
    cls = classify_value(checked[1] if checked is not None else code.base_value)
    if cls is None or cls.kind in _NOT_CORRUPTION:
        return None
    if cls.kind in _LOCK_MAGICS:
        return _lock_words_cause(r, code, checked, _LOCK_MAGICS[cls.kind])
    return _cause("corrupted_values", r, 0.7, "crash> bt -FF; crash> rd -SS <address> 8", *_code_lines(code, False),
                  statement=f"memory corruption: {cls.meaning}")  # fmt: skip


#: x86-64's user half ends here (TASK_SIZE_MAX, 4-level paging): KASAN names a shadow address of [PAGE_SIZE, TASK_SIZE)
#: "probably user-memory-access" (mm/kasan/report.c kasan_non_canonical_hook()).
_USER_END: Final = 0x0000800000000000


def _user_address_cause(r: _Reading) -> Cause | None:
    """A KASAN kernel's fault through an address in the user half: KASAN's decode of the shadow address ("probably
    user-memory-access in range [...]"), or the address the faulting shadow check tests (older kernels print no
    range).  The pointer the code used held no kernel address."""
    kasan = str(r.get("KASAN range") or "")
    code = r.code
    checked = shadow_checked(code) if code is not None else None
    if "user-memory-access" in kasan and isinstance(bad := r.get("bad address"), str):
        kind, _, where = kasan.partition(" in ")
        said = f"the address the code used, {bad} (KASAN: {kind} in {where})"
        at = r.at("KASAN range")
    elif not kasan and checked is not None and 0x1000 <= checked[1] < _USER_END:
        said = f"the address KASAN's check tests, {checked[1]:#x} ({checked[0]} << 3, to 8 bytes)"
        at = r.at("KASAN checks")
    else:
        return None
    statement = (f"a bad pointer in {r.func}: {said}, is in the user half of the address space, where no kernel "
                 "object is: the pointer held no kernel address (an integer, a stale, uninitialized or overwritten "
                 "field) or was a user pointer used without copy_from_user()")  # fmt: skip
    used: tuple[int, ...] = ()
    if code is not None and checked is not None:
        statement += f"; `{code.faulting}` checks {checked[0]} << 3 = {checked[1]:#x}"
        used = (code.at, code.register_at(checked[0]))
    return _cause("bad_pointer", r, 0.5, _dis(r, r.get("faulting function"), flags="-rl"), at, *used,
                  statement=statement)  # fmt: skip


def _lock_words_cause(
    r: _Reading, code: CodeListing, checked: tuple[str, int] | None, lock_kind: tuple[str, str, str]
) -> Cause:
    """A lock's words where a pointer was read: the memory the pointer came from is a lock (a live object of another
    type, or a freed one reused), not random damage."""
    magic, lock, header = lock_kind
    holder = checked is None and code.loaded_base is not None and code.loaded_value is not None
    if checked is not None:
        value = f"the address KASAN checks, {checked[0]} << 3 = {checked[1]:#x}, is made of"
    else:
        read = f", loaded from {code.loaded_from}," if code.loaded_from else ""
        value = f"{code.base} = {code.base_value:#x}{read} holds"
    source = (f"{code.loaded_base} = {code.loaded_value:#x} points into or over a {lock}" if holder
              else f"the pointer was read from a {lock}")  # fmt: skip
    step = (f"crash> kmem {code.loaded_value:#x}  # in a dump of this crash: the object it points into"
            if holder else "crash> bt -FF; crash> rd -SS <address> 8")  # fmt: skip
    return _cause("corrupted_values", r, 0.7, step, *_code_lines(code, holder),
                  statement=f"a wrong or stale object: {value} {magic} (a debug {lock}'s magic word, {header}): "
                  f"{source}, not the object the code expects (freed and reused, or of another type)")  # fmt: skip


#: The scheduler's and the interrupt return's frames above the interrupted stack of a stack-end panic.
_SCHEDULER_FRAMES = rc.compile(
    r"^_*schedule|^_*cond_resched|^preempt_schedule|^retint_|^irqentry_exit|^ret_from_intr|^asm_sysvec_|^_*sysvec_|"
    r"^apic_timer_interrupt$|^common_interrupt$|^_*dump_stack|^panic$"
)
#: How many functions of an overflowed stack's chain a statement names (its outermost and innermost halves).
_CHAIN_NAMED = 10


def _stack_end_cause(r: _Reading) -> Cause | None:
    """schedule_debug()'s panic: the task's stack ran past its end, overwriting STACK_END_MAGIC."""
    if r.report.kind is not _RK_STACK_OVERFLOW or _STACK_END not in r.text:
        return None
    comm = r.report.comm
    task = comm if isinstance(comm, str) else "the task"
    interrupted = r.get("interrupted at")
    frames = r.report.trace
    names: list[str] = []
    if interrupted is not None:
        where = (
            f"when an interrupt preempted it in {interrupted} (the RIP printed is that preemption point, not a fault)"
        )
        cut = r.first + (r.at("interrupted at") or 0)
        names = [str(interrupted).split("+")[0]]
        names += [f.function for f in frames if f.line > cut and f.reliable]
    else:
        where = "when it called schedule()"
        last = max((i for i, f in enumerate(frames) if _SCHEDULER_FRAMES.search(f.function)), default=-1)
        names = [f.function for f in frames[last + 1 :] if f.reliable]
    statement = (f"kernel stack overflow: {task}'s stack ran past its end and overwrote STACK_END_MAGIC, found by "
                 f"__schedule's check (schedule_debug(), kernel/sched/core.c) {where}")  # fmt: skip
    if names:
        depth = len(names)
        if depth > _CHAIN_NAMED:
            names = [*names[: _CHAIN_NAMED // 2], f"({depth - _CHAIN_NAMED} more)", *names[-_CHAIN_NAMED // 2 :]]
        statement += f"; the deepest call chain printed ({depth} frames): " + " <- ".join(names)
    return _cause("stack_overflow", r, 0.75, "find the deep or recursive chain and its large stack frames: "
                  "scripts/checkstack.pl on the vmlinux; CONFIG_VMAP_STACK turns the overflow into a guard-page fault "
                  "at the overflowing function", r.at("interrupted at"), 0, statement=statement)  # fmt: skip


def _lockdep_cause(r: _Reading) -> Cause | None:
    kind = str(r.get("lockdep") or "")
    if not kind.startswith(("possible circular", "possible recursive", "possible irq", "inconsistent")) and (
        "unsafe lock order" not in kind
    ):
        return None
    acquiring, holding = r.get("acquiring lock"), r.get("holding lock")
    task = r.get("task") or "a task"
    if kind.startswith("possible circular") and acquiring and holding:
        statement = (f"lock order inversion (lockdep): {task} takes {acquiring} in {r.get('acquiring at') or '?'} "
                     f"while holding {holding}, and the opposite order was taken before"
                     + (f": {r.get('chain')}" if r.get("chain") else " (the chain is not in the log)"))  # fmt: skip
    elif kind.startswith("possible recursive") and acquiring:
        statement = f"recursive locking (lockdep): {task} takes {acquiring} again in {r.get('acquiring at') or '?'}"
    elif kind.startswith("inconsistent"):
        statement = (
            f"inconsistent lock state (lockdep): {acquiring or 'a lock'} is used {r.get('usage') or ''} "
            f"in {r.get('acquiring at') or r.func}: an interrupt that takes it can deadlock its holder"
        )
    elif "unsafe lock order" in kind and (irq := _irq_order(r, kind)) is not None:
        statement, lines = irq
        return _cause("lock_order", r, 0.8, "fix the lock order (or the IRQ safety) of the locks named", *lines,
                      statement=statement)  # fmt: skip
    else:
        statement = f"{kind} (lockdep) in {r.func}"
    return _cause("lock_order", r, 0.8, "fix the lock order (or the IRQ safety) of the locks named", r.at("lockdep"),
                  statement=" ".join(statement.split()))  # fmt: skip


def _irq_order(r: _Reading, kind: str) -> tuple[str, tuple[int | None, ...]] | None:
    """An IRQ-safety report's both locks, where each got its usage and what the task holds and takes, with lines:
    "HARDIRQ-safe -> HARDIRQ-unsafe lock order (lockdep): holding L (line 62), T takes U in f (line 9); L is
    HARDIRQ-safe (taken in an interrupt in g, line 14) and U HARDIRQ-unsafe (taken with that interrupt on in h,
    line 38)".  None when the safe lock is not read (neither its line nor the scenario's interrupt names it)."""
    safe_word, _, unsafe_word = kind.partition(" -> ")
    unsafe_word = unsafe_word.removesuffix(" lock order")
    safe = r.get("irq-safe lock")
    if safe is None:
        # The scenario's "<Interrupt>" is followed by the safe lock the interrupt takes.
        scenario = [f for f in r.facts if f.name.startswith("scenario ")]
        safe = next((str(b.value)[5:-1] for a, b in pairwise(scenario) if a.value == "<Interrupt>"), None)
    if not safe:
        return None
    unsafe = r.get("irq-unsafe lock") or r.get("acquiring lock")

    def line(name: str) -> str:
        at = r.at(name)
        return f"line {r.first + at}" if at is not None else "line not read"

    holding, held_at = r.get("holding lock"), r.at("holding lock")
    if holding is None:
        held = next((k for k in r.locks if k.role == "held" and k.name == safe), None)
        holding, held_at = (held.name, held.at) if held is not None else (None, None)
    task = r.get("task") or "a task"
    acquiring = r.get("acquiring lock") or unsafe
    site = r.get("acquiring at")
    where = f" in {function_name(str(site).partition('+')[0])}" if site else ""
    statement = f"{kind} (lockdep): "
    if holding is not None:
        statement += f"holding {holding} (line {r.first + (held_at or 0)}), "
    statement += f"{task} takes {acquiring}{where} ({line('acquiring lock')}); {safe} is {safe_word} ("
    statement += (
        f"taken in an interrupt in {r.get('irq-safe at')}, {line('irq-safe at')})"
        if r.get("irq-safe at")
        else "where it became so is not in the log)"
    )
    if unsafe is not None:
        statement += f" and {unsafe} {unsafe_word} (" + (
            f"taken with that interrupt enabled in {r.get('irq-unsafe at')}, {line('irq-unsafe at')})"
            if r.get("irq-unsafe at")
            else "where it became so is not in the log)"
        )
    if holding is not None and holding != safe and r.get("chain"):
        statement += f"; the chain: {r.get('chain')}"
    cited = (r.at("acquiring lock"), held_at, r.at("irq-safe at"), r.at("irq-unsafe at"), r.at("lockdep"))
    return statement, cited


def _bad_unlock_cause(r: _Reading) -> Cause | None:
    """lockdep's "bad unlock balance" (print_unlock_imbalance_bug()): a release of a lock the task does not hold."""
    lock = r.get("releasing lock")
    if lock is None:
        return None
    held = [lock.name for lock in r.locks if lock.role == "held"]
    statement = (f"bad unlock balance (lockdep): {r.get('task') or 'a task'} released {lock} in "
                 f"{r.get('releasing at') or r.func}, a lock it did not hold (lockdep found no more locks to release"
                 + (f"; it held {', '.join(held)}" if held else "")
                 + "): an unlock twice, on a path that never took it, or of a lock another task took")  # fmt: skip
    return _cause("lock_order", r, 0.7, _dis(r, r.get("releasing at"), flags="-rl", note="# the unlock"),
                  r.at("releasing lock"), statement=statement)  # fmt: skip


def _hung_cause(r: _Reading) -> Cause | None:
    if r.get("task") is None or r.get("blocked seconds") is None:
        return None
    owner = r.get("lock owner")
    what = r.get("blocked on") or r.get("waits for") or "something"
    where = r.get("waits in") or r.func
    if owner is not None:
        statement = f"{owner} (pid {r.get('lock owner pid')}) holds the {what} {r.get('task')} waits for in {where}"
        return _cause("lock_wait", r, 0.75, f"look at what {owner} does (its stack: echo t > /proc/sysrq-trigger)",
                      r.at("lock owner"), statement=statement,
                      dump_command=f"crash> bt {r.get('lock owner pid')}  # what {owner}, the lock's owner, "
                      "does")  # fmt: skip
    held = r.get("holds lock")
    if held is not None:
        return _holder_cause(r, str(held), what, where)
    holder = r.get("lock holder")
    if holder is not None:
        # The one other task of the locks list whose entry is the lock this task waits for (read_hung_pass).
        since = f" since {r.get('lock held since')}" if r.get("lock held since") else ""
        held = f"held by {holder} (pid {r.get('lock holder pid')}){since}"
        statement = f"{r.get('task')} (pid {r.get('pid')}) waited {r.get('blocked seconds')} s for " + (
            f"{r.get('waits for lock')} in {where}, {held}"
        )
        return _cause("lock_wait", r, 0.7, f"look at what {holder} does (its stack: echo t > /proc/sysrq-trigger)",
                      r.at("lock holder"), statement=statement,
                      dump_command=f"crash> bt {r.get('lock holder pid')}  # what {holder}, the lock's holder, "
                      "does")  # fmt: skip
    if what == "something":
        what = "a wait the stack does not name"
    statement = f"{r.get('task')} (pid {r.get('pid')}) waited {r.get('blocked seconds')} s for {what} in {where}"
    cls = "lock_wait" if what in _LOCK_WAIT_WORDS else "hung_task"
    return _cause(cls, r, 0.5, "echo w > /proc/sysrq-trigger  # the blocked tasks and their locks",
                  r.at("task"), statement=statement, dump_command=_BLOCKED_DUMP)  # fmt: skip


#: The dump's counterpart of sysrq-w, for a machine that went down after its hung tasks (no live command reaches it).
_BLOCKED_DUMP = "crash> foreach UN bt  # every blocked task's stack, in the dump"


def _holder_cause(r: _Reading, lock: str, what: FactValue, where: FactValue) -> Cause:
    """A hung task that holds the lock other hung tasks of its pass wait for (:func:`read_hung_pass`): the cascade's
    head.  What it waits for itself is what holds them all; its wait is said with the lines of both facts."""
    task, pid = r.get("task"), r.get("pid")
    primitive = r.get("wait primitive")
    blocked = f"in {primitive} (line {r.first + (r.at('wait primitive') or 0)})" if primitive else f"in {where}"
    waiters, hung = r.get("lock waiters"), r.get("lock waiters hung")
    statement = (f"{task} (pid {pid}) holds {lock} (line {r.first + (r.at('holds lock') or 0)}) and is itself "
                 f"blocked {blocked} for {r.get('blocked seconds')} s, waiting for {what} in {where}; {waiters} "
                 f"{'task waits' if waiters == 1 else 'tasks wait'} behind it "
                 f"({hung} of them reported hung)")  # fmt: skip
    step = f"find why {primitive or where} does not return in {task}: every task's stack, echo t > /proc/sysrq-trigger"
    return _cause("lock_wait", r, 0.8, step, r.at("holds lock"), r.at("wait primitive"), statement=statement,
                  dump_command=f"crash> bt {pid}  # why {task} does not return from {primitive or where} while it "
                  f"holds {lock}")  # fmt: skip


#: What a hung task may wait for that is a lock (the other waits are a completion, I/O, an RCU grace period).
_LOCK_WAIT_WORDS = ("the rtnl mutex", "a mutex", "an rw-semaphore (read)", "an rw-semaphore (write)", "a semaphore",
                    "an rt-mutex", "a per-CPU rw-semaphore")  # fmt: skip


def _rcu_cause(r: _Reading) -> Cause | None:
    if r.get("flavour") is None:
        return None
    cpus, tasks = r.get("stalled CPUs"), r.get("stalled tasks")
    who = " and ".join(x for x in (f"CPU {cpus}" if cpus else "", f"task {tasks}" if tasks else "") if x) or "a CPU"
    jiffies = r.get("stalled jiffies")
    if r.get("all quiescent states seen") and not cpus and not tasks:
        idle = r.get("kthread inactive jiffies")
        statement = (f"RCU stall: every CPU passed a quiescent state, but the {r.get('flavour')} kthread did not "
                     f"run for {idle} jiffies: it was starved of CPU")  # fmt: skip
        if r.get("running task"):
            running = f", in {r.get('running')}" if r.get("running") else ""
            statement += f" ({r.get('running task')} ran instead{running})"
        return _cause("rcu_stall", r, 0.65, "look at what kept the CPU busy (the running task's stack)",
                      r.at("all quiescent states seen"), statement=statement)  # fmt: skip
    starved = r.get("kthread starved jiffies")
    kthread_cpu = r.get("kthread last ran on CPU")
    if (
        isinstance(starved, int)
        and isinstance(jiffies, int)
        and 0 < jiffies <= 2 * starved
        # The kthread's CPU a stalled one: that CPU's own loop kept the kthread off, the loop is the cause.
        and all(c.cpu != kthread_cpu for c in r.cpus)
    ):
        return _starved_cause(r, who, starved, jiffies)
    statement = f"RCU stall: {who} did not pass a quiescent state" + (f" for {jiffies} jiffies" if jiffies else "")
    if isinstance(r.report.frame, str):
        statement += f", running {r.report.frame}: a loop without cond_resched() or a long IRQ-off section"
    if isinstance(starved, int) and kthread_cpu is not None and any(c.cpu == kthread_cpu for c in r.cpus):
        statement += (f"; it kept the {r.get('flavour')} grace-period kthread, last on CPU {kthread_cpu}, from running "
                      f"for {starved} jiffies")  # fmt: skip
    return _cause("rcu_stall", r, 0.7, "find the loop in the stalled CPU's stack; add cond_resched()", r.at("flavour"),
                  statement=statement)  # fmt: skip


def _starved_cause(r: _Reading, who: str, starved: int, jiffies: int) -> Cause:
    """A stall whose grace-period kthread did not run for most of it: the kthread starved, not (only) a CPU's loop.

    Documentation/RCU/stallwarn.rst: starving the grace-period kthread of CPU time causes stall warnings even when
    every CPU passed its quiescent state; ``->state`` is the kthread's task state, ``->cpu`` where it last ran.
    """
    flavour = r.get("flavour")
    cpu = r.get("kthread last ran on CPU")
    on = f" on CPU {cpu}" if cpu is not None else ""
    if cpu is not None and r.get("running on CPU") == cpu:
        # The log dumps the CPU the kthread last ran on ("Stack dump where RCU GP kthread last ran:").
        on += f" ({r.get('running task')}, pid {r.get('running pid')}, ran there)"
    state = r.get("kthread state")
    if state == "0x0":
        how = (f"it was starved of CPU, runnable (->state=0x0) but not running{on}: a task or an IRQ-off section "
               "kept that CPU, or the host did not run that vCPU")  # fmt: skip
    elif state is not None:
        how = f"it was not woken, asleep (->state={state}){on}: its timer's wake-up did not come"
    else:
        how = f"it was starved of CPU{on}"
    # The kthread's idle time is counted from its last activity, which may precede the grace period's start.
    if starved >= jiffies:
        span = f"{starved} jiffies, the whole stall ({jiffies})"
    else:
        span = f"{starved} of the stall's {jiffies} jiffies"
    statement = (f"RCU stall: the {flavour} grace-period kthread did not run for {span}: {how} "
                 "(Documentation/RCU/stallwarn.rst)")  # fmt: skip
    fqs = next((m.group(1) for c in r.cpus if (m := _RCU_FQS.search(c.detail)) is not None), None)
    if fqs is not None:
        statement += f"; fqs={fqs}: its forcing of quiescent states ran {fqs} time(s)"
    if isinstance(r.report.frame, str):
        statement += (
            f"; less likely, {who} running {r.report.frame}: a loop without cond_resched() or a long IRQ-off section"
        )
    where = f"CPU {cpu}" if cpu is not None else "the CPU the kthread last ran on"
    return _cause("rcu_stall", r, 0.7, f"look at what ran on {where} (its backtrace where the log has one; echo l > "
                  "/proc/sysrq-trigger); on a VM, the host's steal time for that vCPU", r.at("kthread starved jiffies"),
                  statement=statement)  # fmt: skip


def _bad_page_cause(r: _Reading) -> Cause | None:
    if r.get("bad page") is None:
        return None
    statement = f"bad page {r.get('bad page')} in process {r.get('process')}: {r.get('reason') or 'unexpected state'}"
    if r.get("page allocated by"):
        statement += f"; the page was last allocated by {r.get('page allocated by')}"
    return _cause("bad_page", r, 0.7, "boot with page_owner=on to see who allocated and freed the page",
                  r.at("bad page"), statement=statement)  # fmt: skip


def _oom_cause(r: _Reading) -> Cause | None:
    if r.report.kind is not _RK_OOM or not r.consumers:
        return None
    top = r.consumers[0]
    total = r.get("RAM bytes")
    return _cause("oom", r, 0.75, "check the top consumer's memory limits (cgroup, overcommit)", top.at,
                  kind=top.kind, name=top.name, size=top.bytes, pid=top.pid,
                  total=total if isinstance(total, int) else None)  # fmt: skip


def _alloc_cause(r: _Reading) -> Cause | None:
    if r.report.kind is not _RK_ALLOC_FAILURE:
        return None
    if (size := r.get("size bytes")) is not None:
        return _vmalloc_cause(r, size)
    if r.get("order") is None:
        return None
    order = r.get("order")
    statement = f"allocation failure: {r.get('task')} asked for order {order} ({r.get('mode')}) in {r.func}"
    if r.zones:
        statement += "; free: " + ", ".join(f"{z.zone} {z.free_kb} kB" + (f" (min {z.min_kb} kB)" if z.min_kb else "")
                                            for z in r.zones[:4])  # fmt: skip
    statement += f"; memory short: {r.get(PRESSURE_FACT)}"
    cited: tuple[int, ...] = ()
    if isinstance(order, int) and order >= _COSTLY_ORDER:
        said, cited = _fragmentation(r, order)
        statement += f"; fragmentation: {said}"
    return _cause("alloc_failure", r, 0.6, "cat /proc/buddyinfo; use kvmalloc() for large buffers", r.at("order"),
                  *cited, statement=statement)  # fmt: skip


#: From this order up a request is "costly" (PAGE_ALLOC_COSTLY_ORDER is 3): it needs that many contiguous pages,
#: which free memory may lack in one block.
_COSTLY_ORDER = 3


def _fragmentation(r: _Reading, order: int) -> tuple[str, tuple[int, ...]]:
    """Whether the zones had a free block of the failed order or above, from the Mem-Info's per-order free lists
    read whole (DMA left out beside other zones, as :func:`memory_pressure` does), and the lines read; "unknown
    (why)" without them: free memory above the watermarks alone does not show it fragmented."""
    lists = [z for z in r.free_lists if z[0] != "DMA"] or r.free_lists
    if not lists:
        why = (
            "no Mem-Info in the log"
            if r.get("memory state") is None
            else "its per-order free lists are not in the log whole, a line a zone"
        )
        return f"unknown ({why})", ()
    # A list's first block is one page (4 kB on x86, 16 or 64 kB on some arm64 kernels); order N is 2**N of them.
    need = min(free[0][0] for _, free, _ in lists if free) << order
    blocks = [(zone, sum(n for kb, n in free if kb >= need)) for zone, free, _ in lists]
    at = tuple(z[2] for z in lists)
    kb = f"{need} kB" if need < 1024 else f"{need // 1024} MB"
    if not any(n for _, n in blocks):
        zones = ", ".join(zone for zone, _ in blocks)
        return f"yes: no free block of order {order} ({kb}) or above in {zones}, per its free lists", at
    have = ", ".join(f"{zone} {n}" for zone, n in blocks if n)
    return (f"no: free blocks of order {order} ({kb}) or above in its free lists ({have}); the request's zones or "
            "migrate type may not reach them", at)  # fmt: skip


#: A vmalloc size from here up has the top bit of a 64-bit size_t set: a negative int passed as a size (no kernel's
#: address space holds half of 2**64 bytes), whatever the RAM.
_NEGATIVE_SIZE = 1 << 63


def _vmalloc_cause(r: _Reading, size: FactValue) -> Cause:
    """A vmalloc() that failed: its size against the machine's RAM where the Mem-Info: dump gives it.

    A size above the RAM is no allocation any state of memory could meet: its caller passed a size nothing bounded
    (a length from user space, an overflowed product), and the failure says nothing of memory pressure.  So is a
    size with its top bit set (:data:`_NEGATIVE_SIZE`), the RAM printed or not.  Otherwise whether memory was short
    is the dump's (:func:`memory_pressure`), or unknown without it."""
    # (GiB at most: a negative length's 17179869184.0 GiB says less than its hex, given below)
    asked = (
        f"{human_bytes(size)} ({size} bytes)" if isinstance(size, int) and size < _NEGATIVE_SIZE else f"{size} bytes"
    )
    task, caller = r.get("task"), r.named_func
    how = ", ".join(str(x) for x in (r.get("mode"), f"task {task}" if task else None, r.get("failed")) if x)
    who = caller or "an unknown function (its call trace names no caller)"
    statement = f"allocation failure: {who} asked vmalloc for {asked}" + (f" ({how})" if how else "")
    ram = r.get("RAM bytes")
    above = r.frame_above(caller) if caller else None
    if isinstance(size, int) and ((isinstance(ram, int) and size > ram) or size >= _NEGATIVE_SIZE or size == 0):
        if size == 0:
            beyond = "a size of 0, which vmalloc refuses before allocating anything"
        elif isinstance(ram, int) and size > ram:
            beyond = f"more than the machine's {human_bytes(ram)} of RAM"
        else:
            beyond = f"a size with its top bit set ({size:#x}): a negative length taken as size_t"
        bug = "a size bug in" if size == 0 else "an unchecked size from"
        statement += (f", {beyond}: {bug} {'its caller' if caller is None else caller}, "
                      "not memory pressure")  # fmt: skip
        where = (f"in {caller}" + (f" and its caller {above}" if above else "")) if caller else "in the allocating code"
        step = (
            f"find where the size comes from and the bounds check that should have refused it {where} "
            "(a length from user space, an unchecked multiplication)"
        )
        return _cause("alloc_failure", r, 0.6, step, r.at("size bytes"), r.at("RAM bytes"),
                      statement=statement)  # fmt: skip
    statement += f"; memory short: {r.get(PRESSURE_FACT)}"
    step = f"check the size {caller or 'its caller (the call trace names none)'} passes to vmalloc and the vmalloc "
    step += "space in use (cat /proc/vmallocinfo)"
    return _cause("alloc_failure", r, 0.6, step, r.at("size bytes"), r.at("RAM bytes") if ram is not None else None,
                  statement=statement)  # fmt: skip


def _lockup_cause(r: _Reading) -> Cause | None:
    if r.get("lockup") is None:
        return None
    what = f"CPU {r.get('CPU')} was stuck" + (f" for {r.get('stuck seconds')} s" if r.get("stuck seconds") else "")
    where = f" in {r.get('spins in')}" if r.get("spins in") else ""
    statement = f"{r.get('lockup')} lockup: {what}{where}" + (f" ({r.get('task')}, pid {r.get('pid')})"
                                                               if r.get("task") else "")  # fmt: skip
    statement += ": a loop that never yields, or waits for a lock or a value that never comes"
    return _cause("busy_wait", r, 0.6, _dis(r, r.get("spins in"), note="# the loop"), r.at("lockup"),
                  statement=statement)  # fmt: skip


def _assertion_cause(r: _Reading) -> Cause | None:
    """A BUG_ON/WARN_ON that trapped: where, and what the trap compared when the registers still hold it."""
    where = r.get("bug at") or r.get("warning at")
    if where is None or r.report.kind not in (_RK_BUG, _RK_WARNING, _RK_LOCKDEP):
        return None
    what = "BUG" if r.get("bug at") else "WARN"
    site = str(r.get("faulting function") or r.get("warning site") or r.func).split("+")[0].split(".")[0]
    # "kernel BUG at" and "WARNING: at" are printed by BUG()/WARN() as well as by BUG_ON()/WARN_ON() (skb_panic's
    # BUG() is unconditional): the log does not say a condition held, only that the assertion fired.
    # A filesystem's ASSERT() printed the condition that was false before its BUG().
    asserted = r.get("condition") if r.get("assertion at") == where else None
    check = f"`{asserted}` was false" if asserted else f"a {what}_ON (or {what})"
    caller = r.named_func
    statement = f"an assertion failed: {check} at {where} in {site}" + (
        f", on the way from {caller}" if caller is not None and site != caller.split(".")[0] else ""
    )
    compared = [str(f.value) for f in r.facts if f.name == "compared"]
    if compared:
        statement += f"; the trap compared {' and '.join(compared)}"
    if r.get("message"):
        statement += f"; the message: {r.get('message')}"
    return _cause("bug_condition", r, 0.5, f"read the condition at {where}; kforensic vmcore DUMP --source-dir DIR "
                  "evaluates it", r.at("bug at") or r.at("warning at"), statement=statement)  # fmt: skip


#: Which cause the facts establish: the first rule that returns one wins (specific first).
CAUSE_RULES: tuple[tuple[str, Callable[[_Reading], Cause | None]], ...] = (
    ("sanitizer-double-free", _sanitizer_double_free),
    ("trap-double-free", _trap_double_free),
    ("slub-double-free", _slub_double_free),
    ("sanitizer-use-after-free", _sanitizer_use_after_free),
    ("list-corruption", _list_cause),
    ("poison-use-after-free", _poison_use_after_free),
    ("refcount", _refcount_cause),
    ("data-race", _race_cause),
    ("memory-leak", _leak_cause),
    ("sanitizer-other", _sanitizer_other),
    ("stack-end", _stack_end_cause),
    ("null-pointer", _null_cause),
    ("bad-jump", _bad_jump_cause),
    ("corrupted-values", _corrupted_values),
    ("user-address", _user_address_cause),
    ("lockdep", _lockdep_cause),
    ("bad-unlock", _bad_unlock_cause),
    ("hung-task", _hung_cause),
    ("rcu-stall", _rcu_cause),
    ("lockup", _lockup_cause),
    ("bad-page", _bad_page_cause),
    ("oom", _oom_cause),
    ("alloc-failure", _alloc_cause),
    ("atomic-context", _atomic_cause),
    ("divide-error", _divide_cause),
    ("rcu-usage", _rcu_usage_cause),
    ("wait-context", _wait_context_cause),
    ("spinlock", _spinlock_cause),
    ("ubsan", _ubsan_cause),
    ("assertion", _assertion_cause),
    ("panic", _panic_cause),
)


def _conclude(r: _Reading) -> tuple[Cause | None, tuple[int, ...]]:
    """The first cause the facts establish (:data:`CAUSE_RULES`) and the lines it is read from."""
    cause = None
    for _name, make in CAUSE_RULES:
        cause = make(r)
        if cause is not None:
            break
    return cause, tuple(sorted({a for f in r.facts if f.name == "root cause" for a in (f.at, *f.also)}))


#: The rules by name, the first of a name (:data:`RULES` names each once): a look-up, not ~55 compares a report.
_RULE_NAMED: Final = {rule.name: rule for rule in reversed(RULES)}


def own_lines(report: KernelReport) -> Sequence[LogLine]:
    """A report's lines parsed (:func:`detectors.dmesg.model.parsed_lines`); those of a repeat of another report's
    bytes (the memo's copy of the same texts, times and all, elsewhere in the log) as that report's parsed lines
    with the repeat's numbers.

    Such a repeat is read when the report it repeats is not (a group keeps a few of its reports), and its own lines
    were parsed again (~13,000 instructions a line, against ~2,000 for a copy of the record): :func:`parse_line` of
    a text gives the same fields at any number.
    """
    source = origin(report)
    if source is not report:
        found = report.repeats()
        if found is not None and found[0] is source:
            # A repeat of that report's bytes (KernelReport.repeats): its texts are that report's, its numbers
            # moved; its own lines are not made for this (~36,000 instructions a repeat read, compiled).
            numbers = line_numbers(report)
            kept = parsed_lines(source)
            if len(kept) == len(numbers):
                return [
                    _new_tuple(LogLine, (n, k.text, k.body, k.timestamp, k.context, k.level, k.prefixed, k.wall))
                    for k, n in zip(kept, numbers, strict=True)
                ]
        lines = report.lines
        kept = parsed_lines(source)
        if len(kept) == len(lines) and all(k.text == text for k, (_, text) in zip(kept, lines, strict=True)):
            return [
                _new_tuple(LogLine, (n, k.text, k.body, k.timestamp, k.context, k.level, k.prefixed, k.wall))
                for k, (n, _) in zip(kept, lines, strict=True)
            ]
    return parsed_lines(report)


def explain(
    report: KernelReport, preamble: Sequence[LogLine] | None = None, kaslr: tuple[bool, str] | None = None
) -> ReportWhy:
    """Read a report's lines (and the lines just above its header) into facts, stacks and a cause.

    ``preamble``: the lines above the header (``report.preamble``) parsed, where the caller has them; ``kaslr``: what
    the report's boot shows of KASLR (:func:`kaslr_said`, read once per boot: detectors/dmesg/findings.py).
    """
    first = report.start_line
    if preamble is None:
        preamble = [parse_line(n, t) for n, t in report.preamble]
    lines = [*preamble, *own_lines(report)]
    own = lines[len(report.preamble) :]
    rule = _RULE_NAMED.get(report.rule)
    skip = rule.stack.skip if rule is not None and rule.stack is not None else ()
    blocked = report.rule in BLOCKED_TASK_RULES
    if blocked:
        skip = (*skip, *HUNG_SKIPS)  # the hung task's own frame is past the switch and the waits, as its title's
    text = "\n".join([line.body for line in lines])
    blob = text.encode()
    stacks = stack_sections(own, first, skip, blob, len(report.preamble))
    if report.kind is _RK_LOCKDEP:
        # Where the lock is taken (or released) now: past the lock primitives and the header helpers, as each link.
        stacks = [
            s._replace(first_foreign=first_lock_taker(s.frames, skip) or s.first_foreign)
            if s.kind is _SK_CALL_TRACE
            else s
            for s in stacks
        ]
    # A report without a "Call Trace:" heading (KMSAN, 32-bit arm) still has the scanner's frames; not lockdep's,
    # whose frames without the "stack backtrace:" are where a lock was taken in the past, not the report's stack.
    if (
        report.kind is not _RK_LOCKDEP
        and not any(s.kind is _SK_CALL_TRACE for s in stacks)
        and (headless := headless_call_trace(report.trace, first, skip))
    ):
        stacks.insert(0, headless)
    r = _Reading(report, lines, first, stacks=stacks, text=text, _blob=blob)
    if any(section.skipped for section in stacks):  # (the lines by number made only for a stack that has them)
        texts = dict(report.lines)
        for section in stacks:
            for at in section.skipped:  # noted: the reading went on past a frame line the console cut short
                r.facts.append(_fact("frame line cut", texts.get(first + at, "").strip(), at))
    found: Extractor | None = None
    if "Code:" in text and not blocked and report.rule not in NO_END_MARKER_RULES:
        # (A blocked task's report prints no registers of its own: its Code: lines are other CPUs' NMI backtraces'.
        # Nor does a lockdep splat: a Code: line in its stack is an exception frame's, the BUG whose printing raised
        # it in corpus log 352, credited to the splat as its "code" (ue22 #4).)
        r.code = listing(own, first)
    r.arch = report_arch(text, r.code)
    if kaslr is not None and kaslr[0]:
        r.kaslr_off = kaslr[1]
    else:
        r.kaslr_off = kaslr_off(text)
        r.kaslr_on = None if kaslr is None or r.kaslr_off is not None else kaslr[1]
    noted = len(r.facts)
    for extractor in EXTRACTORS:
        if extractor.applies(report, text):
            found = found or extractor
            extractor.read(r)
    cause, cause_at = _conclude(r)
    if found is not None and cause is None and _nothing_read(r, noted):
        r.facts.append(_not_read(report, found.reads))
    cls = None if found is None else found.name
    return _new_tuple(ReportWhy, (
        cls, tuple(r.facts), tuple(r.stacks), tuple(r.locks), tuple(r.cpus), tuple(r.tasks), tuple(r.consumers),
        tuple(r.zones), r.code, cause, cause_at, (), "" if cause is not None else _no_cause(r, found),
        r.kaslr_read))  # fmt: skip


def _no_cause(r: _Reading, found: Extractor | None) -> str:
    """Why a reading states no cause: what the log lacks (the decodable access of a fault, its registers), or that
    the values read match none of :data:`CAUSE_RULES`; a dump (its memory and registers) is what would tell."""
    if found is None:
        return "no reader knows this kind of report: its lines were not read for a cause"
    if any(f.name == "body read" for f in r.facts):
        return f"none of {found.reads} was read from its lines (fact 'body read'); a dump is needed"
    if found.name == "fault":
        code = r.code
        if code is None or not code.instructions:
            return "no Code: line in the log to decode the faulting access; a dump is needed (kforensic vmcore DUMP)"
        if code.base is None or code.base_value is None:
            return ("the log prints no value of the register the faulting instruction uses"
                    f" (`{code.faulting}`); a dump is needed (kforensic vmcore DUMP)")  # fmt: skip
        return (f"the faulting access (`{code.faulting}`, {code.base} = {code.base_value:#x}) matches no known cause "
                "(NULL, poison, user address, corrupted value); a dump is needed (kforensic vmcore DUMP)")  # fmt: skip
    return f"what its lines say ({found.reads}) matches no known cause; a dump is needed (kforensic vmcore DUMP)"


def _nothing_read(r: _Reading, noted: int) -> bool:
    """Whether the readers found none of a report's values: no fact past the ``noted`` ones (cut frame lines),
    no lock, CPU, task, memory user, zone or code listing."""
    return len(r.facts) == noted and not (r.locks or r.cpus or r.tasks or r.consumers or r.zones or r.code)


def _not_read(report: KernelReport, what: str) -> WhyFact:
    """The fact that a report of a known class has none of its values read: where it ends, and what is missing.

    Said rather than left silent: a class with no facts and no cause reads as nothing to say, when the body
    was cut (a console that stopped, a log rotated), its lines garbled, or the report of a class that prints
    them otherwise (a fault-class BUG without a faulting address).  The reason states only what was read:
    where the report ends, not why it has none.  ``what``: what the class's reader reads (:attr:`Extractor.reads`);
    ``at``: the report's last line with text.
    """
    # Its last line with text past the printk prefix: a report may end on a blank line, which cites nothing.
    last = next((n for n, text in reversed(report.lines) if parse_line(n, text).body.strip()), report.start_line)
    reason = f"the report ends at line {last} with none of {what} read"
    return _fact("body read", NotAvailable(reason), last - report.start_line)


def lock_cycle_cause(waiters: Sequence[tuple[str, str | None, str | None]]) -> Cause:
    """A possible lock cycle of hung tasks that each wait for a lock: (comm, what it waits for, where)."""
    found = tuple({"comm": c, "wants": w, "waits_in": f} for c, w, f in waiters)
    return Cause("lock_cycle", (("waiters", found),), 0.5,
                 "echo w > /proc/sysrq-trigger; enable CONFIG_PROVE_LOCKING to name the locks")  # fmt: skip


__all__ = [
    "CAUSE_RULES",
    "EXTRACTORS",
    "LockInfo",
    "MemoryConsumer",
    "ReportWhy",
    "StalledCpu",
    "StalledTask",
    "WhyFact",
    "ZoneFree",
    "explain",
    "link_panic",
    "lock_cycle_cause",
    "pointer_class",
    "read_hung_pass",
    "report_arch",
]
