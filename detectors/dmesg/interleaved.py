"""Facts a report cannot own: lines of a console capture where two CPUs' reports interleave without caller ids.

A serial or netconsole capture of two CPUs oopsing at once holds both reports' lines mixed; with printk's caller
ids (``[T123]``/``[C1]``, CONFIG_PRINTK_CALLER) the scanner splits them, without them which line is whose cannot be
known.  The scanner gives each line to one report, and flags such a report corrupted; what its why read from a line
another report may have printed is then no fact of it.  Two signs that lines are shared:

- a line inside the span of another report's lines (its first to its last), the two spans overlapping;
- a report whose own lines print two register dumps' once-per-oops lines that disagree (``CPU: 2 PID: 5511`` and
  ``CPU: 5 PID: 812``, two ``RIP:`` lines of different functions), right after a report it cut short: every
  line after its header may be either's.

Such facts are said ``not read (interleaved with the report at line N)``, and a cause read from such a line is
dropped (the reader's own words are not changed: the value, not the reading, is what cannot be trusted).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Final

from detectors.dmesg.frames import is_frame, starts_stack
from detectors.dmesg.lines import parse_line
from forensics.model import NotAvailable
from forensics.types.dmesg import KernelReport, ReportKind, ReportWhy, WhyFact

#: The lines an oops prints once (show_regs(), dump_stack()'s header): two that differ are two reports' lines.  A
#: ``RIP:`` is keyed by its code segment (the group before its value): one dump prints the kernel's registers (``RIP:
#: 0010:``) and, at the end of a syscall's trace, the user ones (``RIP: 0033:``), which are not a second dump.
_ONCE: Final = re.compile(r"\b(CPU: \d+ (?:UID: \d+ )?PID: \d+|(RIP: [0-9a-f]{4}):\S+)")


def mixed_dumps(report: KernelReport, whole: bool = False) -> tuple[str, str] | None:
    """The first once-per-oops line the report's own lines print twice with different values, as the two values
    (``CPU: 2 PID: 5511``, ``CPU: 5 PID: 812``); None when they agree.  Only of a corrupted report, unless ``whole``:
    a complete one prints its own once, but the scanner does not flag every interleave (two page faults' lines
    mixed line by line keep one header and one trace), and one value read from a line a dump prints (the CR2 reading,
    detectors/dmesg/why.py) asks of any report."""
    if (not report.corrupted and not whole) or report.is_event:
        return None
    seen: dict[str, str] = {}
    for _, text in report.lines:
        if "CPU: " not in text and "RIP: " not in text:
            continue
        for found in _ONCE.finditer(text):
            value = found.group(1)
            had = seen.setdefault(found.group(2) or value[:3], value)
            if had != value:
                return had, value
    return None


#: A register dump's (or page_fault_oops()'s closing) CR2 line.
_CR2: Final = re.compile(r"\bCR2: ([0-9a-f]+)")


def cr2_mixed(report: KernelReport) -> tuple[str, str] | None:
    """:func:`mixed_dumps` of the whole report (complete or not) when its ``CR2:`` lines disagree: the values read
    from its once-per-oops lines (its CPU: line's task, its CR2) may then be the other dump's, as detectors/dmesg/
    why.py says of its CR2 (review ue20 #5: corpus 324 gave cpu and pid as read from the lines whose CR2 it said
    unknown).  (Lines that agree give one value whoever's they are; a report holding other CPUs' backtraces, an RCU
    stall's, prints no CR2 that disagrees.)"""
    cr2s = [m for _, text in report.lines if "CR2: " in text and (m := _CR2.search(text)) is not None]
    # Only a page fault's report: page_fault_oops() closes it with a CR2: line of its own (a soft lockup's NMI
    # backtraces of other CPUs print their register dumps' CR2 and are one report: corpus 288, 504).
    if not any(not m.string[m.end() :].strip() for m in cr2s):  # (a register dump's goes on: "CR3: ... CR4: ...")
        return None
    values = {int(m.group(1), 16) for m in cr2s}
    return mixed_dumps(report, whole=True) if len(values) > 1 else None


def unread(report: KernelReport, others: Sequence[KernelReport]) -> dict[int, int]:
    """The lines of ``report`` another report (of ``others``, in log order) may have printed, each with that report's
    first line."""
    out: dict[int, int] = {}
    for other in others:
        if other.start_line > report.end_line:
            break  # (others in log order)
        if other.start_line == report.start_line or other.is_event or other.end_line < report.start_line:
            continue
        lo, hi = max(report.start_line, other.start_line), min(report.end_line, other.end_line)
        for n in range(lo, hi + 1):  # the spans overlap: those lines are in both
            out.setdefault(n, other.start_line)
    if mixed_dumps(report) is not None:
        above = [o for o in others if not o.is_event and o.start_line < report.start_line <= o.end_line + 1]
        if above:
            cut = max(above, key=lambda o: o.start_line)
            for n in range(report.start_line + 1, report.end_line + 1):
                out.setdefault(n, cut.start_line)
    return out


def _not_read(other: int) -> NotAvailable:
    return NotAvailable(f"not read (interleaved with the report at line {other})")


def unread_facts(reports: Sequence[KernelReport], whys: Mapping[int, ReportWhy]) -> dict[int, ReportWhy]:
    """``whys`` (by report first line) with the facts read from lines another report may own said not read: those of
    the corrupted ones among ``reports`` (a log's kept reports, in log order)."""
    out = dict(whys)
    contexts = {r.context for r in reports if not r.is_event}
    if len(reports) < 2 or any(c is not None and c != "-" for c in contexts):
        return out  # one report, or caller ids: the scanner split the lines by who printed them
    for report in reports:
        why = out.get(report.start_line)
        if why is None or report.is_event or not report.corrupted:
            continue  # a report the scanner found whole reads its own lines
        shared = unread(report, reports)
        if not shared:
            continue
        first = report.start_line
        facts = tuple(
            f._replace(value=_not_read(shared[first + f.at]))
            if first + f.at in shared and not isinstance(f.value, NotAvailable)
            else f
            for f in why.facts
        )
        # A stack or Code: line another report may have printed: not listed, said in its place.
        stacks = tuple(s for s in why.stacks if first + s.at not in shared)
        gone = [
            WhyFact(f"{s.kind.value} stack", _not_read(shared[first + s.at]), s.at)
            for s in why.stacks
            if first + s.at in shared
        ]
        code = why.code
        if code is not None and first + code.at in shared:
            gone.append(WhyFact("code", _not_read(shared[first + code.at]), code.at))
            code = None
        cause_shared = any(first + at in shared for at in why.cause_at)
        out[first] = why._replace(
            facts=(*facts, *gone),
            stacks=stacks,
            code=code,
            cause=None if cause_shared else why.cause,
            cause_at=() if cause_shared else why.cause_at,
        )
    return out


#: The kinds of oops die() prints: header, "Oops:", the CPU: line, the registers, then the stack: no frame line comes
#: before its first stack's heading ("Call Trace:").
_DIE_KINDS: Final = frozenset(
    {ReportKind.GPF, ReportKind.NULL_DEREF, ReportKind.PAGE_FAULT, ReportKind.OOPS, ReportKind.TRAP}
)


def stray_frames(report: KernelReport) -> tuple[int, ...]:
    """The frame lines of an oops (:data:`_DIE_KINDS`) printed between its header and its first stack's heading: its
    lines hold another task's stack printed at the same time, and without caller ids which frame is whose cannot be
    told (corpus 198: CPU 1's vmalloc failure trace among CPU 0's GPF, "do_arpt_set_ctl" given as the GPF's first
    foreign frame, ue22 #9).  Empty with caller ids (the scanner split the lines) or when none."""
    if report.is_event or report.kind not in _DIE_KINDS or report.context is not None:
        return ()
    out: list[int] = []
    for number, text in report.lines[1:]:
        body = parse_line(number, text).body
        # starts_stack, not STACK_START.search alone: the regex, without a literal to look for first, is tried at
        # every character of each line (~37,000 instructions a line compiled, ~22 M of the corpus x4's 605 lines).
        if starts_stack(body):
            return tuple(out)
        if is_frame(body):
            out.append(number)
    return ()  # no stack heading: nothing after it to doubt


def interleaved_stacks(reports: Sequence[KernelReport], whys: Mapping[int, ReportWhy]) -> dict[int, ReportWhy]:
    """``whys`` (by report first line) with the stacks of each oops that holds :func:`stray_frames` said unknown in
    their place, with why: their frames, the first foreign one above all, may be the other task's.

    A repeat (the report memo's) is judged by the report it repeats, whose lines are its own moved on: asking a
    repeat for its lines makes them, and it was no longer listed as a repeat (test_address_ranges.py); its reading,
    shared with that report's, is replaced by the same one.  The reason counts the lines, it does not number them:
    a shared reading holds for every repeat.
    """
    out = dict(whys)
    stray_of: dict[int, tuple[int, ...]] = {}  # by id() of the report whose lines were looked through
    done: dict[int, ReportWhy] = {}  # by id() of a reading replaced: its repeats' is the same object
    for report in reports:
        why = out.get(report.start_line)
        if why is None or not why.stacks or report.is_event or report.kind not in _DIE_KINDS:
            continue
        if id(why) in done:
            out[report.start_line] = done[id(why)]
            continue
        repeated = report.repeats()
        own = report if repeated is None else repeated[0]
        stray = stray_of.get(id(own))
        if stray is None:
            stray = stray_of[id(own)] = stray_frames(own)
        if not stray:
            continue
        reason = NotAvailable(
            f"its lines interleave with another task's stack printed at the same time, without caller ids to tell "
            f"whose ({len(stray)} frame line(s) between its header and its first stack, the first cited): which "
            "frames are its own is unknown"
        )
        at = stray[0] - own.start_line
        gone = tuple(WhyFact(f"{s.kind.value} stack", reason, at) for s in why.stacks)
        done[id(why)] = out[report.start_line] = why._replace(facts=(*why.facts, *gone), stacks=())
    return out


#: dump_stack()'s header line, which names the task whose stack follows: its CPU, pid and comm.
_TASK_LINE: Final = re.compile(r"\bCPU: \d+ (?:UID: \d+ )?PID: (\d+) Comm: (\S+)")
#: A pid a report's header names as its own task's (``WARNING: CPU: 1 PID: 5 at ...``, ``... pid: 5, name: x``).
_HEADER_PID: Final = re.compile(r"\bPID: (\d+) at |\bpid: (\d+), name: ")
#: What an event is called where a report's stack is said to be its task's, by the event's kind.
_EVENT_WORDS: Final = {ReportKind.ALLOC_FAILURE: "allocation failure", ReportKind.OOM: "OOM kill"}


def _task_lines(report: KernelReport) -> list[tuple[int, int, str]]:
    """The report's dump_stack() header lines, as (line number, pid, comm)."""
    return [
        (number, int(m.group(1)), m.group(2))
        for number, text in report.lines
        if "PID: " in text and (m := _TASK_LINE.search(text)) is not None
    ]


def _event_pid(event: KernelReport, why: ReportWhy | None) -> int | None:
    """The pid of the task an event is, read from its lines: its own pid where it prints one, else the
    dump_stack() header above the first frame of its trace that names the task its header names (the
    ``task`` its reading took from warn_alloc's ``comm: vmalloc: ...``); None when none tells."""
    if isinstance(event.pid, int):
        return event.pid
    task = next((f.value for f in why.facts if f.name == "task"), None) if why is not None else None
    if not event.trace or not isinstance(task, str):
        return None
    above = [(n, pid) for n, pid, comm in _task_lines(event) if n < event.trace[0].line and comm == task]
    return above[-1][1] if above else None


def event_stacks(reports: Sequence[KernelReport], whys: Mapping[int, ReportWhy]) -> dict[int, ReportWhy]:
    """``whys`` (by report first line) without the stacks of a report that an event printed amid its lines is the
    task of, each said in its place; a stack whose task cannot be told, said unknown.

    Without caller ids the scanner gives a report every line in its span, an event's too: corpus log 206's
    suspicious-RCU warning (pid 5953) listed among its stacks the call trace of pid 5955's vmalloc failure
    (warn_alloc, __vmalloc_node_range, xt_alloc_entry_offsets), printed between its header and its own.  A stack is
    the task's its dump_stack() header (``CPU: N PID: P Comm: C``, the last above it in the report's lines) names:
    the event's when that is the event's task (its pid, or the header above its own trace naming the task its header
    names) and not the report's own (a pid its header names).  Any other inside the event's lines whose frames are
    lines the event read as its trace cannot be told: unknown.
    """
    out = dict(whys)
    events = [e for e in reports if e.is_event and e.context is None and e.trace]
    for report in reports:
        why = out.get(report.start_line)
        if why is None or not why.stacks or report.is_event or report.context is not None:
            continue
        for event in events:
            if event.end_line >= report.start_line and event.start_line <= report.end_line:
                why = _without_event_stacks(report, why, event, _event_pid(event, out.get(event.start_line)))
        out[report.start_line] = why
    return out


def _without_event_stacks(report: KernelReport, why: ReportWhy, event: KernelReport, pid: int | None) -> ReportWhy:
    """``why`` without the stacks :func:`event_stacks` tells are ``event``'s (``pid``: its task's) or cannot tell."""
    own = _HEADER_PID.search(report.header)
    if own is not None and pid is not None and int(own.group(1) or own.group(2)) == pid:
        return why  # the report is the event's task's own: its stacks are that task's
    first = report.start_line
    what = _EVENT_WORDS.get(event.kind, "event")
    whose = f"pid {pid}'s {what}" if pid is not None else f"the {what}"
    traced = {frame.line for frame in event.trace}
    tasks = _task_lines(report)
    kept, said = [], []
    for stack in why.stacks:
        heading = first + stack.at
        above = [(n, p) for n, p, _ in tasks if n < heading]
        reason = None
        if event.start_line <= heading <= event.end_line:
            if above and pid is not None and above[-1][1] == pid:
                reason = (
                    f"another task's: its dump_stack() header (line {above[-1][0]}) names pid {pid}, whose {what} "
                    f"(line {event.start_line}) printed it amid this report's lines"
                )
            elif any(first + f.at in traced for f in stack.frames):
                reason = f"unknown (interleaved with {whose}, line {event.start_line})"
        if reason is None:
            kept.append(stack)
        else:
            said.append(WhyFact(f"{stack.kind.value} stack", NotAvailable(reason), stack.at))
    return why._replace(facts=(*why.facts, *said), stacks=tuple(kept)) if said else why
