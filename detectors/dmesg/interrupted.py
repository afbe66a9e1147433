"""A report raised while another was being printed: the interruption is a consequence, the report it cut the root.

A kernel that faults while it prints a KASAN report (the unwinder or the stack depot reading the memory the bug
corrupted) prints the fault's oops in the middle of the report: syzkaller's corpus log 120, a KASAN
slab-out-of-bounds report whose "Allocated by task" stack is cut by "BUG: unable to handle kernel paging request"
in ``depot_fetch_stack``.  syzbot titles such a log by the first report; the second follows from it.  The scanner
ends the first report at the second's header (detectors/dmesg/extract.py ``report_extent``), so the log's lines
show it: the first report's kind always closes with an end marker (:data:`END_MARKERS`), its lines hold none,
and the next report's first line (its preamble's, or its header) is the very next line, of the same CPU and
printk caller.  Its finding is then linked to the first's as a consequence
(:func:`detectors.incident.consequences.as_consequence`: at most one severity below), citing both lines.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from detectors.dmesg.extract import NO_END_MARKER_RULES
from detectors.dmesg.findings import line_evidence
from detectors.dmesg.lines import drops_messages, parse_line
from detectors.incident.consequences import as_consequence
from forensics.model import Consequence, Evidence, Finding, NotAvailable
from forensics.types.dmesg import Frame, KernelReport, ReportGroup, ReportKind


@dataclass(frozen=True)
class EndMarker:
    """The line a kind of report always ends with, and where the kernel prints it."""

    kinds: frozenset[ReportKind]
    pattern: re.Pattern[str]
    text: str  # the marker as said to a reader
    source: str  # where the kernel prints it
    #: Text every match of ``pattern`` holds, one of these words: a line without any (as read: its body is the end of
    #: it) holds no marker, and is not parsed to be searched (tests/detectors/dmesg/test_interrupted.py checks them).
    words: tuple[str, ...]


#: The end markers, by the kinds of report that always print one (the other kinds, lockdep's, a hung task's, a
#: stall's, ``BUG: sleeping function called ...``'s dump_stack(), print none: their end is not in the log's lines).
#: One kind in one entry at most (a test checks it).
END_MARKERS: tuple[EndMarker, ...] = (
    EndMarker(
        frozenset({ReportKind.KASAN, ReportKind.KFENCE, ReportKind.KMSAN, ReportKind.KCSAN}),
        re.compile(r"^={40,}\s*$"),
        "the closing ===== line",
        "end_report() (mm/kasan/report.c), kfence_report_error(), kmsan_report(), kcsan's print_report()",
        ("=" * 40,),
    ),
    EndMarker(
        frozenset({ReportKind.UBSAN}),
        re.compile(r"^={40,}\s*$|---\[ end trace"),
        "the closing ===== or ---[ end trace ]--- line",
        "ubsan_epilogue() (lib/ubsan.c)",
        ("=" * 40, "---[ end trace"),
    ),
    EndMarker(
        frozenset(
            {
                ReportKind.GPF,
                ReportKind.NULL_DEREF,
                ReportKind.PAGE_FAULT,
                ReportKind.OOPS,
                ReportKind.TRAP,
                ReportKind.WARNING,
            }
        ),
        re.compile(r"---\[ end trace"),
        "---[ end trace ... ]---",
        "print_oops_end_marker() (kernel/panic.c), from oops_exit() and __warn()",
        ("---[ end trace",),
    ),
)
_MARKER_OF: dict[ReportKind, EndMarker] = {kind: m for m in END_MARKERS for kind in m.kinds}


@dataclass(frozen=True)
class Interruption:
    """``by`` was raised while ``interrupted`` was printed: its first line follows the other's last, no end marker."""

    interrupted: KernelReport
    by: KernelReport
    marker: EndMarker
    #: Set when ``by`` is a lockdep splat its printing raised (:func:`raised_by_printing`): the printk frame under the
    #: lock it took, and the reporter's frame under that printk, of ``by``'s call trace.
    through: tuple[Frame, Frame] | None = None

    @property
    def last_line(self) -> tuple[int, str]:
        """The interrupted report's last line, printed just before the interruption."""
        return self.interrupted.lines[-1]

    @property
    def first_line(self) -> int:
        """The first line of the interruption: its preamble's (a WARN's "cut here"), else its header."""
        return self.by.preamble[0][0] if self.by.preamble else self.by.start_line

    def how(self) -> str:
        """What ties the two, from the lines: the consequence's ``how``."""
        last, _ = self.last_line
        if self.through is not None:
            printk, reporter = self.through
            return (
                f"raised by its printing: line {self.by.start_line}'s call trace runs through {printk.function} "
                f"(line {printk.line}) called by {reporter.function} (line {reporter.line}), which printed the report "
                f"at line {self.interrupted.start_line}; its lines {self.interrupted.start_line}-{last} hold no end "
                f"marker ({self.marker.text})"
            )
        return (
            f"raised while it was printed: line {self.by.start_line} starts before its end marker "
            f"({self.marker.text}, {self.marker.source}); its lines {self.interrupted.start_line}-{last} hold none"
        )


def interruption(first: KernelReport, then: KernelReport) -> Interruption | None:
    """Whether ``then`` (the next report in the log) was raised while ``first`` was printed, read from their lines."""
    marker = _MARKER_OF.get(first.kind)
    if marker is None or first.is_event or then.is_event:
        return None
    if first.context != then.context:
        return None  # another CPU's or task's report, printed beside it
    lines, shift = _own_lines(first)
    if not lines:
        return None
    last = lines[-1][0] + shift
    start = then.preamble[0][0] if then.preamble else then.start_line
    if start != last + 1:
        return None  # the first report stopped before (a quiet tail, its window's end), not at the second
    after_header = first.start_line - shift
    between = [text for n, text in lines if n > after_header]
    # The lines' texts searched at once, before any line is parsed and matched one by one: for a marker's words (each
    # line of ~480 candidate pairs of the shared corpus x4 was parsed and searched, ~30 M instructions, ~1.5% of the
    # run), and for printk's dropped-messages line (its pattern matches no newline: in the joined lines exactly when
    # in one of them).  Then from the last line up: a report printed to its end marker ends there.
    joined = "\n".join(between)
    if any(word in joined for word in marker.words) and any(
        marker.pattern.search(_body(n, text)) for n, text in reversed(lines) if n > after_header
    ):
        return None  # it was printed to its end
    if drops_messages(joined) or drops_messages(then.preamble[0][1] if then.preamble else then.header):
        return None  # printk dropped lines there: the end marker may have been among them
    if _differ(first.cpu, then.cpu) or _before(then.start_time, first.start_time):
        return None  # two CPUs' reports interleaved, or lines of another log (time going back)
    if _printed(first) != _printed(then):
        return None  # one header without the other's kernel prefix or printk time: not printed by the same console
    return Interruption(first, then, marker)


#: printk's own functions (kernel/printk/printk.c): a lockdep splat whose stack runs through one of them, under the
#: lock it reports, was raised by a message being printed (console_owner taken under the lock the printer held).
_PRINTK_FRAMES: Final = frozenset(
    {"printk", "_printk", "vprintk", "vprintk_emit", "vprintk_default", "vprintk_func", "console_unlock",
     "console_flush_all", "console_emit_next_record"}
)  # fmt: skip
#: The functions that print a report (its header, registers or stack): under printk in such a stack, the splat was
#: raised while that report was printed.
_REPORTER_FRAMES: Final = frozenset(
    {"report_bug", "__warn", "__warn_printk", "warn_slowpath_fmt", "die", "__die", "oops_begin", "oops_end",
     "show_regs", "__show_regs", "page_fault_oops", "no_context", "kasan_report", "end_report", "print_report",
     "bad_page", "print_address_description"}
)  # fmt: skip
_LOCKDEP_ENTRY: Final = frozenset({"lock_acquire", "__lock_acquire", "lock_acquire_trace"})
#: An oops's end marker, for a report whose kind prints it but has none of its own in END_MARKERS (``kernel BUG at``:
#: die() and oops_end() print it).
_OOPS_MARKER: Final = END_MARKERS[-1]


def raised_by_printing(first: KernelReport, then: KernelReport) -> Interruption | None:
    """Whether ``then``, a lockdep splat (extract.NO_END_MARKER_RULES), was raised by the printing of ``first``, the
    report before it of the same caller: its call trace, below the lock it takes (lock_acquire), runs through printk
    (:data:`_PRINTK_FRAMES`) called by a report's printer (:data:`_REPORTER_FRAMES`), and ``first`` printed no end
    marker before it.  syzkaller's corpus log 352: ``kernel BUG at mm/page_alloc.c:3112!`` under zone->lock, whose
    printk took console_owner: the splat is the BUG's consequence, and the end marker and panic after the splat are
    the BUG's (ue22 #4)."""
    if then.rule not in NO_END_MARKER_RULES or first.is_event or then.is_event:
        return None
    if first.context != then.context or first.start_line >= then.start_line:
        return None
    frames = [f for f in then.trace if f.reliable]
    entry = next((i for i, f in enumerate(frames) if f.function in _LOCKDEP_ENTRY), None)
    if entry is None:
        return None
    printk = next((i for i in range(entry, len(frames)) if frames[i].function in _PRINTK_FRAMES), None)
    if printk is None:
        return None
    reporter = next((f for f in frames[printk:] if f.function in _REPORTER_FRAMES), None)
    if reporter is None:
        return None
    marker = _MARKER_OF.get(first.kind, _OOPS_MARKER)
    lines, _ = _own_lines(first)
    if any(word in text for _, text in lines for word in marker.words):
        return None  # it was printed to its end before the splat
    return Interruption(first, then, marker, (frames[printk], reporter))


def interruptions(reports: Sequence[KernelReport]) -> dict[int, Interruption]:
    """The interruptions among a log's reports (those kept, in any order), by the interrupting report's first line."""
    ordered = sorted((r for r in reports if not r.is_event), key=lambda r: r.start_line)
    out: dict[int, Interruption] = {}
    for first, then in itertools.pairwise(ordered):
        found = interruption(first, then) or raised_by_printing(first, then)
        if found is not None:
            out[then.start_line] = found
    return out


def _own_lines(report: KernelReport) -> tuple[tuple[tuple[int, str], ...], int]:
    """A report's lines and how far to move their numbers: a repeat's are the report it repeats (detectors/dmesg/
    repeat.py), read there; reading its own ``lines`` would make every lazy field of each of a log's repeats (the
    JSON document then wrote them one by one, not from their report's template)."""
    found = report.repeats()
    if found is None:
        return report.lines, 0
    old, shift = found
    return old.lines, shift


def _body(number: int, text: str) -> str:
    """A line's body, its prefixes (time, caller, syslog's) peeled off: an end marker is the whole of it."""
    return parse_line(number, text).body


def _printed(report: KernelReport) -> tuple[bool, bool]:
    """How a report's header line was printed: with a kernel prefix, with a printk time."""
    line = parse_line(report.start_line, report.header)
    return line.prefixed, line.timestamp is not None


def _differ(a: int | NotAvailable, b: int | NotAvailable) -> bool:
    return isinstance(a, int) and isinstance(b, int) and a != b


def _before(a: float | NotAvailable, b: float | NotAvailable) -> bool:
    return isinstance(a, float) and isinstance(b, float) and a < b


def link_interruptions(source: str, groups: Sequence[ReportGroup], findings: Sequence[Finding]) -> list[Finding]:
    """The findings of one log's groups (``findings[i]`` of ``groups[i]``) with each interruption linked to the
    report it cut, as a consequence, citing the lines that show it (the interrupted report's header and last line).

    A group is linked when every occurrence it lists interrupts a report of one other group (a report that also
    comes alone is a bug of its own); its root is that group's finding, or the root that finding is linked to.
    """
    kept = [r for g in groups for r in g.kept]
    found = interruptions(kept)
    if not found:
        return list(findings)
    group_of = {r.start_line: i for i, g in enumerate(groups) for r in g.kept}
    root_of: dict[int, tuple[int, Interruption]] = {}  # group -> (the group it interrupts, the first occurrence's)
    for i, group in enumerate(groups):
        cut = [found.get(r.start_line) for r in group.kept]
        if any(c is None for c in cut):
            continue
        roots = {group_of[c.interrupted.start_line] for c in cut if c is not None}
        first = cut[0]
        if len(roots) == 1 and first is not None and (root := roots.pop()) != i:
            root_of[i] = (root, first)
    out = list(findings)
    for i in sorted(root_of, key=lambda i: groups[i].first.start_line):
        root, it = root_of[i]
        seen = {i}
        while root in root_of and root not in seen:  # the report it cut may have cut another
            seen.add(root)
            root = root_of[root][0]
        top = out[root]
        cited = _cited_lines(source, it, out[i])
        linked = as_consequence(top, out[i], Consequence(top.id, top.title, it.how()))
        out[i] = dataclasses.replace(linked, evidence=(*linked.evidence[:1], *cited, *linked.evidence[1:]))
    return out


def _cited_lines(source: str, it: Interruption, finding: Finding) -> tuple[Evidence, ...]:
    """The interrupted report's header and last line, as the interruption's evidence (not cited twice)."""
    a = it.interrupted
    number, text = it.last_line
    wanted = [(a.start_line, a.header, "interrupted report")]
    if number != a.start_line and text.strip():
        wanted.append((number, text, "interrupted at"))
    have = {(e.locator.start, e.locator.name) for e in finding.evidence}
    return tuple(line_evidence(source, n, t, name, a) for n, t, name in wanted if (n, name) not in have)
