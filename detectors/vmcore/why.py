"""Why the kernel crashed, from the values the adapter read: BUG/WARN conditions, corrupted values,
list corruption, busy-wait loops, lock cycles and the memory users of an OOM.

Pure: typed snapshot in, :class:`forensics.model.Finding` out.  Each finding carries a
``hypothesis`` fact (the root-cause statement) and a ``next command`` fact, which both
``kforensic vmcore`` and ``kforensic report`` rank the same way.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from detectors.pointers import (
    LIST_POISON1,
    LIST_POISON2,
    VALUE_RULES,
    ValueClass,
    ValueKind,
    ascii_text,
    classify_value,
)
from detectors.vmcore import cexpr, locks, slab
from detectors.vmcore.evidence import (
    frame_evidence,
    log_line_evidence,
    memory_evidence,
    object_state,
    root_cause_finding,
)
from detectors.vmcore.findings import CLUES, crash_frame, culprit_frame, log_source, register_excerpt
from forensics.model import (
    Baseline,
    Clock,
    Evidence,
    Fact,
    Finding,
    FindingKind,
    Locator,
    LocatorKind,
    NotAvailable,
    Severity,
    Timestamp,
)
from forensics.quoting import shown_path
from forensics.types.causes import (
    list_corruption,
    list_poison_explain,
    list_text_explain,
    memory_user,
    memory_user_label,
)
from forensics.types.vmcore import (
    AddressInfo,
    BugSite,
    CrashSnapshot,
    LoopSite,
    MemberInfo,
    MemoryUser,
    TypeLayout,
    ValueRead,
)

__all__ = ["LIST_POISON1", "LIST_POISON2", "VALUE_RULES", "ValueClass", "classify_value"]

# The value classification is shared with the kernel log's reports (detectors/pointers.py).
_ascii = ascii_text


def _pointer_typed(read: ValueRead) -> bool:
    return read.type_name.endswith("*") or read.type_name.startswith("struct list_head")


# ---------------------------------------------------------------- BUG/WARN conditions


def operand_text(read: ValueRead) -> str:
    """``buf->refcount = 0``; a named constant as ``KF_RUNNING = 1``."""
    shown = read.shown()
    if read.value is not None and shown.startswith(f"{read.expression} ("):
        shown = str(read.value)
    return f"{read.expression} = {shown}"


@dataclass(frozen=True)
class ConditionVerdict:
    """A BUG/WARN condition with its operands' values and whether it held."""

    macro: str
    condition: str
    operands: tuple[ValueRead, ...]
    result: int | None  # 1 true, 0 false, None unknown

    def text(self) -> str:
        """``BUG_ON(a >= b): a = 64, b = 64 -> true``."""
        values = ", ".join(operand_text(o) for o in self.operands) or "no operands"
        verdict = "unknown" if self.result is None else ("true" if self.result else "false")
        return f"{self.macro}({self.condition}): {values} -> {verdict}"


def judge_condition(site: BugSite) -> ConditionVerdict | NotAvailable:
    """Parse the assertion on the bug site's source line and evaluate it from the operands read."""
    if isinstance(site.source, NotAvailable):
        return NotAvailable(site.source.reason)
    assertion = cexpr.find_assertion(site.source.text)
    if assertion is None:
        return NotAvailable(f"no BUG_ON/WARN_ON condition on {site.source.path}:{site.line}: `{site.source.text}`")
    try:
        node = cexpr.parse(assertion.condition)
    except cexpr.ParseError as exc:
        return NotAvailable(f"cannot parse {assertion.condition!r}: {exc}")
    values = {o.expression: o.value for o in site.operands if o.value is not None}
    return ConditionVerdict(assertion.macro, assertion.condition, site.operands, cexpr.evaluate(node, values))


#: Kernel assertions whose condition is known without the source: (function, macro, condition, where it is). Only
#: a function with this one assertion: a trap in it is this one, whatever the line.
KNOWN_ASSERTIONS: tuple[tuple[str, str, str, str], ...] = (
    ("set_freepointer", "BUG_ON", "object == fp",
     "mm/slub.c's set_freepointer() under CONFIG_SLAB_FREELIST_HARDENED (v4.14 and later)"),
)  # fmt: skip


def known_condition(snap: CrashSnapshot, site: BugSite) -> tuple[ConditionVerdict, str] | None:
    """The assertion of a function :data:`KNOWN_ASSERTIONS` names, evaluated from its frame's values, with where
    the condition is from; None for another function, or where an operand was not read."""
    known = next((k for k in KNOWN_ASSERTIONS if k[0] == site.function), None)
    values = next((fv for fv in snap.frame_values if fv.frame == site.frame), None)
    if known is None or values is None:
        return None
    _function, macro, condition, origin = known
    node = cexpr.parse(condition)
    reads = {v.expression: v for v in (*values.variables, *values.members)}
    operands = [reads.get(o.text) for o in cexpr.operands(node)]
    read = [o for o in operands if o is not None and o.value is not None]
    if len(read) != len(operands):
        return None
    result = cexpr.evaluate(node, {o.expression: o.value for o in read if o.value is not None})
    return ConditionVerdict(macro, condition, tuple(read), result), origin


def bug_condition_finding(snap: CrashSnapshot) -> Finding | None:
    """The BUG/WARN that trapped, with its condition evaluated from the frame (or what is missing)."""
    site = snap.bug_site
    if isinstance(site, NotAvailable):
        return None
    what = "WARN" if site.warning else "BUG"
    where = site.where(why=False)  # titles and summaries; the trap fact says why a line is unknown
    frame_ev = frame_evidence(snap, site.frame)
    # The kernel's report says "at file:line": without the line, its file finds the report (which gives the line).
    log_ev = log_line_evidence(snap, f"at {site.file}:{'' if site.line is None else site.line}") if site.file else None
    evidence: list[Evidence | None] = [frame_ev, log_ev]
    facts = [Fact("trap", f"{what} at {site.where()} in {site.function} (bug table: {site.table})")]
    values = next((fv for fv in snap.frame_values if fv.frame == site.frame), None)
    if values is not None:
        facts += [Fact(f"frame #{site.frame} {v.expression}", v.shown()) for v in (*values.variables, *values.members)]
    known = known_condition(snap, site) if isinstance(site.source, NotAvailable) else None
    if known is not None and known[0].result == 1 and isinstance(site.source, NotAvailable):
        held, origin = known
        facts.append(Fact("condition", f"{held.text()} (the condition of {origin}, evaluated from the frame's "
                          f"values; this build's line not read: {site.source.reason})"))  # fmt: skip
        return root_cause_finding(
            FindingKind.BUG_CONDITION, f"{site.function}:{held.condition}",
            f"{held.text()} in {site.function} ({where})",
            f"The kernel trapped on {held.macro}() in {site.function} at {where}, the check of {origin}. "
            f"{held.text()}, from the frame's values.",
            f"{held.macro}({held.condition}) held in {site.function}: "
            + ", ".join(operand_text(o) for o in held.operands),
            f"crash> dis -rl {site.pc:#x}  # the comparison before the trap", 0.5,
            "condition known for this function, evaluated from the frame's values; its source line not read",
            evidence, facts, Severity.INFO,
            # The check that caught the fault: the finding of what it caught carries the crash.
            Baseline("the condition that trapped", "held",
                     "the kernel's own check; what it caught is the finding that explains the crash"),
        )  # fmt: skip
    if isinstance(site.source, NotAvailable):
        facts.append(Fact("condition", f"not available: {site.source.reason}"))
        # What was not read is no finding of harm: the crash finding carries the crash's severity, this one
        # only says what is missing and how to give it (info, docs/severity.md).
        return root_cause_finding(
            FindingKind.BUG_CONDITION, f"{site.function}:{where}",
            f"{what} in {site.function} at {where}: not evaluated: no source (--source-dir)",
            f"The kernel trapped on a {what} in {site.function} ({where}); the source line is needed to name the "
            f"condition: {site.source.reason}. The frame's values are listed.",
            f"an assertion in {site.function} ({where}) failed; its condition is not known without the source",
            f"crash> dis -rl {site.pc:#x}  # the comparison before the trap; the source tree of this build "
            "(--source-dir) names the condition", 0.5,
            "trap and frame read from the dump; the source line is missing", evidence, facts, Severity.INFO,
            Baseline("the condition that trapped", "unknown (no source line)",
                     "the source tree of this build (--source-dir) names it"),
        )  # fmt: skip
    evidence.append(
        Evidence(site.source.path, Locator(LocatorKind.LINE, site.source.line), site.source.text.split("  ")[0][:60])
    )
    facts.append(
        Fact("source", f"{shown_path(site.source.path)}:{site.source.line} (found via {site.source.found_via})")
    )
    if not site.source.matches_build:
        facts.append(Fact("source mismatch", str(site.source.mismatch)))
        return root_cause_finding(
            FindingKind.BUG_CONDITION, f"{site.function}:{where}",
            f"{what} in {site.function} at {where}: the source given does not match the build",
            f"{site.source.mismatch}. The condition is not evaluated from a line that may not be the one compiled.",
            f"an assertion in {site.function} ({where}) failed; the source at hand is another version",
            f"crash> dis -rl {site.pc:#x}  # the comparison the build made; --source-dir the tree it was built from",
            0.45,
            "the source line does not fit the build", evidence, facts,
        )  # fmt: skip
    verdict = judge_condition(site)
    if isinstance(verdict, NotAvailable):
        facts.append(Fact("condition", str(verdict)))
        statement = f"an assertion in {site.function} ({where}) failed: `{site.source.text}`"
        return root_cause_finding(
            FindingKind.BUG_CONDITION,
            f"{site.function}:{where}", f"{what} in {site.function} at {where}", statement + ".",
            statement, f"crash> dis -rl {site.pc:#x}", 0.6, "trap, source line read; condition not parsed",
            evidence, facts,
        )  # fmt: skip
    facts.append(Fact("condition", verdict.text()))
    for operand in verdict.operands:
        facts.append(Fact(f"operand {operand.expression}", operand.shown()))
        if operand.value is not None and _pointer_typed(operand) and (cls := classify_value(operand.value)):
            facts.append(Fact(f"{operand.expression} is suspicious", cls.meaning))
    missing = [o.expression for o in verdict.operands if o.value is None]
    confidence = 0.95 if verdict.result == 1 else 0.7
    reason = "condition evaluated from the frame's values in the dump: it holds"
    if verdict.result is None:
        confidence, reason = 0.6, f"operands not readable: {', '.join(missing)}"
    elif verdict.result == 0:
        reason = "the condition evaluates false now: the value changed after the check (a race) or was misread"
    hypothesis = f"{verdict.macro}({verdict.condition}) held in {site.function}: " + ", ".join(
        operand_text(o) for o in verdict.operands
    )
    return root_cause_finding(
        FindingKind.BUG_CONDITION, f"{site.function}:{verdict.condition}",
        f"{verdict.text()} in {site.function} ({where})",
        f"The kernel trapped on {verdict.macro}() in {site.function} at {where}. {verdict.text()}."
        + (f" Not readable: {', '.join(missing)}." if missing else ""),
        hypothesis, f"crash> dis -rl {site.pc:#x}; crash> bt -FF  # the values of {site.function}'s frame",
        confidence, reason, evidence, facts,
    )  # fmt: skip


# ---------------------------------------------------------------- corruption


def _words_command(snap: CrashSnapshot, read_from: tuple[int, ...] = ()) -> str:
    """The stack's values, then the words of the slab object the suspicious values were read from (``read_from``:
    the addresses of the members that held them), else of a free one, else of the first the crash points into (no
    placeholder).  The first alone named an object a register happened to hold (6.1 case 10: r14's dentry, not
    the freed kf_conn the poison came from)."""
    objects = [a for a in snap.addresses if a.object_start is not None and a.missing is None]

    def holds(a: AddressInfo, address: int) -> bool:
        return a.object_start is not None and a.object_start <= address < a.object_start + (a.object_size or 1)

    obj = next(
        (a for address in read_from for a in objects if holds(a, address)),
        next((a for a in objects if a.allocated is False), objects[0] if objects else None),
    )
    if obj is None or obj.object_start is None:
        return "crash> bt -FF"
    words = max(1, min((obj.object_size or 64) // 8, 32))
    return f"crash> bt -FF; crash> rd -SS {obj.object_start:#x} {words}"


def suspicious_value_findings(snap: CrashSnapshot) -> list[Finding]:
    """Registers of the fault and pointer values of the frames that hold poison, text or bogus addresses."""
    hits: list[tuple[str, int, ValueClass, Evidence | None]] = []
    read_from: list[int] = []  # where the suspicious members were read (an object's address)
    regs = snap.registers.as_dict() if not isinstance(snap.registers, NotAvailable) else {}
    fault_frame = next((f.index for f in snap.backtrace if f.interrupted and f.pc == regs.get("rip")), None)
    for name, value in sorted(regs.items()):
        if name in ("rip", "rsp", "rbp", "rflags", "cs", "ss", "fs_base", "gs_base"):
            continue
        cls = classify_value(value)
        if cls is None or cls.kind in (ValueKind.USER_ADDRESS, ValueKind.NULL_OFFSET, ValueKind.NON_CANONICAL):
            continue  # small counts and user pointers are common in registers; only poison and text count
        ev = None
        if fault_frame is not None:
            ev = Evidence(
                snap.dump_path, Locator(LocatorKind.REGISTER, fault_frame, name=name), register_excerpt(name, value)
            )
        hits.append((name, value, cls, ev))
    for fv in snap.frame_values:
        for read in (*fv.variables, *fv.members):
            if read.value is None or not _pointer_typed(read):
                continue
            cls = classify_value(read.value)
            # A pointer variable may be a __user buffer or a small cookie: only members of kernel
            # structs are judged on that; poison, text and list poison count everywhere.
            if cls is not None and cls.kind in (ValueKind.USER_ADDRESS, ValueKind.NULL_OFFSET) and read in fv.variables:
                continue
            if cls is not None and not any(h[1] == read.value and h[0].startswith(read.expression) for h in hits):
                hits.append((f"{read.expression} (frame #{fv.frame} {fv.function})", read.value, cls, None))
                if read.address is not None:
                    read_from.append(read.address)
    if not hits:
        return []
    kinds = sorted({h[2].kind for h in hits})
    first = hits[0]
    facts = [Fact(where, f"{value:#018x}: {cls.meaning}") for where, value, cls, _ in hits]
    return [
        root_cause_finding(
            FindingKind.SUSPICIOUS_VALUES,
            ",".join(kinds),
            f"suspicious values: {first[0]} = {first[1]:#x} ({first[2].kind})"
            + (f" and {len(hits) - 1} more" if len(hits) > 1 else ""),
            "Values the failing code used that no valid pointer can have: "
            + "; ".join(f"{w} = {v:#x} — {c.meaning}" for w, v, c, _ in hits[:6])
            + ".",
            f"memory corruption: {first[2].meaning}",
            _words_command(snap, tuple(read_from)),
            0.7,
            "the values match known poison/text patterns",
            [h[3] for h in hits] + [frame_evidence(snap, 0)],
            facts,
            *CLUES[FindingKind.SUSPICIOUS_VALUES],
        )
    ]


_LIST_MESSAGE = re.compile(r"list_(?:add|del) corruption")
_HEX = re.compile(r"\b([0-9a-f]{16})\b")


def _owner(snap: CrashSnapshot, info: AddressInfo) -> tuple[str, str, TypeLayout] | None:
    """The frame variable pointing at the object's start, and its struct's layout."""
    if info.object_start is None:
        return None
    for fv in snap.frame_values:
        for read in fv.variables:
            if read.value == info.object_start and read.pointee and (layout := snap.layout(read.pointee)):
                return f"{read.expression} (frame #{fv.frame} {fv.function})", read.pointee, layout
    # No variable points at this object: the call site's own objects of the same cache tell its type
    # when their struct has a list_head at the entry's offset (a list of objects of one struct).
    slabs = {a.address: a for a in snap.addresses if a.kind == "slab"}
    for fv in snap.frame_values:
        for read in fv.variables:
            other = slabs.get(read.value) if read.value is not None else None
            if other is None or other.cache != info.cache or not read.pointee or info.offset is None:
                continue
            layout = snap.layout(read.pointee)
            tops = [m for m in layout.members if "." not in m.name] if layout is not None else []
            member = next((m for m in tops if m.offset <= info.offset < m.offset + m.size), None)
            if layout is not None and member is not None and member.type_name == "struct list_head":
                how = f"the type of {read.expression} (frame #{fv.frame} {fv.function}), an object of the same cache"
                return how, read.pointee, layout
    return None


@dataclass(frozen=True)
class _Overflow:
    """A string that ran out of the member before a list head: its text and where its NUL landed."""

    text: str
    terminator: int | None  # offset of its NUL from the list head (None: past the words read)

    def prev_byte(self) -> int | None:
        """The byte of ``prev`` (0 = lowest) the NUL overwrote, when it landed there."""
        return self.terminator - 8 if self.terminator is not None and 8 <= self.terminator < 16 else None


def _overflow(entry: AddressInfo, source: MemberInfo) -> _Overflow | None:
    """The string written from ``source`` (a char array before the list head) through the entry's words.

    strcpy() writes the text and then its NUL: bytes the text did not reach keep their value, so a NUL inside
    ``prev`` is the terminator when the text ran through the whole of ``next``."""
    if entry.offset is None or not source.type_name.startswith("char ["):
        return None
    span = entry.offset - source.offset
    if span <= 0 or len(entry.leading) < span:
        return None
    data = entry.leading[-span:] + b"".join(w.to_bytes(8, "little") for w in entry.words)
    end = data.find(b"\0")
    text = (data if end < 0 else data[:end]).decode("ascii", errors="replace")
    if end >= 0 and end <= span:
        return None  # the string ended inside its member: no overflow to spell
    return _Overflow(text, None if end < 0 else end - span)


def _overflow_facts(spill: _Overflow, source: MemberInfo, entry: AddressInfo, facts: list[Fact]) -> None:
    """The overflow's string and what its NUL did to ``prev``, as facts."""
    length = f"{len(spill.text)} characters and its NUL" if spill.terminator is not None else "no NUL in the words read"
    facts.append(Fact("overflowing string", f"{spill.text!r} ({length}, into {source.name}, {source.type_name})"))
    byte = spill.prev_byte()
    if byte is not None:
        facts.append(
            Fact(
                "prev",
                f"{entry.words[1]:#x}: its byte {byte} (from the lowest) is the string's NUL terminator, so prev was "
                "overwritten too: its true value is unknown",
            )
        )


def list_corruption_finding(snap: CrashSnapshot) -> Finding | None:
    """A list_add/list_del corruption report explained: the entry, its object, struct, member and neighbour."""
    record_no, record = next(((n, r) for n, r in enumerate(snap.log, 1) if _LIST_MESSAGE.search(r.text)), (None, None))
    if record is None or record_no is None:
        return None
    message = record.text.strip()
    addresses = [int(h, 16) for h in _HEX.findall(message)]
    infos = {a.address: a for a in snap.addresses}
    entry = next(
        (infos[a] for a in addresses if a in infos and infos[a].kind == "slab" and infos[a].object_start is not None),
        None,
    )
    log_ev = Evidence(
        log_source(snap.dump_path), Locator(LocatorKind.LINE, record_no), message.split("\n")[0],
        timestamp=Timestamp(record.seconds, Clock.MONOTONIC),
    )  # fmt: skip
    facts = [Fact("report", message)]
    bad = [(a, c) for a in addresses if (c := classify_value(a)) is not None]
    for value, cls in bad:
        facts.append(Fact(f"{value:#x}", cls.meaning))
    culprit = next(
        (f for f in snap.backtrace if isinstance(f.function, str) and f.module and not f.inline), None
    ) or next((f for f in snap.backtrace if isinstance(f.function, str) and "list" not in f.function), None)
    func = str(culprit.function) if culprit else "the caller"
    explain = ""
    member_text = ""
    if entry is not None:
        facts.append(
            Fact("entry object", f"{entry.object_start:#x} in cache {entry.cache}"
                 + (f" (merged with {', '.join(entry.cache_aliases)})" if entry.cache_aliases else "")
                 + f", offset {entry.offset:#x}, {object_state(entry.allocated)}")
        )  # fmt: skip
        words = ", ".join(f"{w:#x}" for w in entry.words[:2])
        facts.append(Fact("entry words (next, prev)", words))
        owner = _owner(snap, entry)
        if owner is not None and entry.offset is not None:
            var, struct, layout = owner
            member = layout.member_at(entry.offset)
            if member is not None:
                member_text = f"{struct}.{member.name.split('.')[0]}"
                facts.append(Fact("list head", f"{member_text} at offset {entry.offset:#x} ({var})"))
                before = [m for m in layout.members if "." not in m.name and m.offset + m.size <= entry.offset]
                if before:
                    neighbour = max(before, key=lambda m: m.offset)
                    facts.append(Fact("member before it", f"{neighbour.name} ({neighbour.type_name})"))
                    if any(c.kind is ValueKind.ASCII for _, c in bad) or any(
                        (c := classify_value(w)) is not None and c.kind is ValueKind.ASCII for w in entry.words[:2]
                    ):
                        spelled = [v for v in (*(a for a, _ in bad), *entry.words[:2]) if _ascii(v) is not None]
                        explain = list_text_explain(spelled[0], str(_ascii(spelled[0])), member_text,
                                                    f"{struct}.{neighbour.name} ({neighbour.type_name})")  # fmt: skip
                        # the string and its NUL are facts: the hypothesis is the log's wording (one for both)
                        spill = _overflow(entry, neighbour)
                        if spill is not None:
                            _overflow_facts(spill, neighbour, entry, facts)
        poison = [w for w in entry.words[:2] if w in (LIST_POISON1, LIST_POISON2)]
        if not explain and len(poison) == 2:
            explain = list_poison_explain(func, member_text or None, ("next", "prev"))
        if not explain and entry.allocated is False:
            explain = "the entry lies in a FREE slab object: a use-after-free of the object that holds the list"
    if not explain:
        explain = "; ".join(c.meaning for _, c in bad) or "a list pointer does not point back: memory corruption"
    where = f"{member_text} " if member_text else ""
    title = f"list corruption in {func}: {where}— " + explain.split(":")[0].split(",")[0]
    hypothesis = list_corruption(func, explain, member_text or None)
    evidence: list[Evidence | None] = [log_ev, frame_evidence(snap, culprit.index) if culprit else None]
    if entry is not None:
        evidence.append(memory_evidence(snap, entry.address, entry.words[:2]))
    return root_cause_finding(
        FindingKind.LIST_CORRUPTION,
        member_text or message[:60], title, f"{message.splitlines()[0]} — {explain}.", hypothesis,
        f"crash> kmem {entry.address:#x}; crash> struct -o {member_text.split('.')[0].removeprefix('struct ')}"
        if entry else "crash> kmem -s",
        0.9 if entry is not None and member_text else 0.7,
        "entry, object and struct read from the dump" if entry else "from the log message only", evidence, facts,
    )  # fmt: skip


# ---------------------------------------------------------------- lockups and locks


_NO_LOAD = (
    "the loop's machine code reads no memory at all, so nothing another CPU writes can end it "
    "(the compiler kept no load: the polled value is not read with READ_ONCE()/volatile, or never written)"
)


def lockup_finding(snap: CrashSnapshot) -> Finding | None:
    """A busy-wait loop the crashed CPU spins in, with the condition's operands."""
    loop = snap.loop
    if isinstance(loop, NotAvailable):
        return None
    if isinstance(loop.condition, NotAvailable) or isinstance(loop.source, NotAvailable):
        return _machine_code_loop_finding(snap, loop)
    values = ", ".join(operand_text(o) for o in loop.operands) or "no operands"
    facts = [
        Fact("loop", f"while ({loop.condition}) at {loop.source.path}:{loop.source.line}"),
        *(Fact(f"operand {o.expression}", o.shown()) for o in loop.operands),
    ]
    for word in snap.polled:
        facts.append(Fact(f"reads {word.symbol or hex(word.address)}", str(word.value) if word.missing is None
                          else word.missing))  # fmt: skip
    why = f"it waits for `{loop.condition}` to become false ({values})"
    if loop.loop_reads_memory is False:
        why += "; " + _NO_LOAD
        facts.append(Fact("loop machine code", "reads no memory (compiled to a loop with no load)"))
        gone = [o.expression for o in loop.operands if o.missing == "optimized out" and "(" not in o.expression]
        if gone:
            why += f"; {', '.join(gone)} has no storage in this build (optimized out): nothing ever writes it"
    return root_cause_finding(
        FindingKind.LOCKUP_LOOP, f"{loop.function}:{loop.condition}",
        f"CPU spins in {loop.function}: while ({loop.condition}); {values}",
        f"The interrupted task spins in {loop.function} ({loop.source.path}:{loop.source.line}): {why}.",
        f"{loop.function} busy-waits forever: {why}", f"crash> dis -l {loop.function}", 0.9,
        "loop and operands read from the dump and the source", [frame_evidence(snap, loop.frame)], facts,
    )  # fmt: skip


def _machine_code_loop_finding(snap: CrashSnapshot, loop: LoopSite) -> Finding:
    """The loop a CPU spins in as its machine code shows it, where the source is not at hand: whether it reads
    memory needs no source; its C condition and operands' values do (said not available, and what gives them)."""
    span = f"{loop.body[0]:#x}..{loop.body[1]:#x}" if loop.body else "around the pc"
    missing = loop.condition.reason if isinstance(loop.condition, NotAvailable) else "no source"
    facts = [Fact("loop", f"{span} in {loop.function} (machine code: a backward jump around the pc)")]
    if loop.loop_reads_memory is False:
        why = _NO_LOAD
        facts.append(Fact("loop machine code", "reads no memory (compiled to a loop with no load)"))
    else:
        why = "the loop's machine code reads memory: it waits for a value another CPU or a device should change"
        facts.append(Fact("loop machine code", "reads memory"))
    gives = "the source would give the loop's C condition and its operands' values"
    facts.append(Fact("condition", f"not available: {missing}; {gives}"))
    sure = loop.loop_reads_memory is False  # a loop with no load can never end: the machine code says so
    return root_cause_finding(
        FindingKind.LOCKUP_LOOP, f"{loop.function}:{span}",
        f"CPU spins in {loop.function}: a loop at {span} that "
        + ("reads no memory" if sure else "polls memory; condition not available (no source)"),
        f"The interrupted task spins in {loop.function}, in the loop at {span}: {why}.",
        f"{loop.function} busy-waits forever: {why}" if sure else f"{loop.function} busy-waits: {why}",
        f"crash> dis -l {loop.function}", 0.85 if sure else 0.6,
        "loop read from the dump's machine code; its C condition needs the source", [frame_evidence(snap, loop.frame)],
        facts,
    )  # fmt: skip


# ---------------------------------------------------------------- OOM

#: The smallest memory user an OOM's list names (bytes).
_SMALLEST_USER = 64 << 10
_OOM_REQUEST = re.compile(r"(?<!\S)(\S+) invoked oom-killer: gfp_mask=(0x[0-9a-f]+)(\([^)]*\))?, order=(\d+)")


def oom_finding(snap: CrashSnapshot) -> Finding | None:
    """The failed allocation of an OOM and the top memory users the dump holds."""
    found = next(((n, r, m) for n, r in enumerate(snap.log, 1) if (m := _OOM_REQUEST.search(r.text))), None)
    if found is None:
        return None
    number, record, m = found
    users = snap.memory_users
    facts = [Fact("failed allocation", f"gfp_mask={m.group(2)}{m.group(3) or ''}, order={m.group(4)} by {m.group(1)}")]
    total = snap.memory.total if isinstance(snap.memory.total, int) else None
    top_text = "not available"
    if isinstance(users, NotAvailable):
        facts.append(Fact("memory users", str(users)))
    else:
        ranked = list(users)
        for cache in snap.slab_caches[:3]:
            if cache.total_bytes:
                ranked.append(MemoryUser("slab", cache.name, cache.total_bytes))
        ranked.sort(key=lambda u: -u.bytes)
        # Users under 64 KiB are left out: "vmalloc by n_tty_open: 0.0 MiB" among the top users was noise.
        for u in [u for u in ranked if u.bytes >= _SMALLEST_USER][:8]:
            share = f" ({100 * u.bytes / total:.0f}% of RAM)" if total else ""
            label = memory_user_label(u.kind, u.name, u.pid)
            facts.append(Fact(f"memory user: {label}", f"{u.bytes / 2**20:.1f} MiB{share}"))
        if ranked:
            top = ranked[0]
            top_text = memory_user(top.kind, top.name, top.bytes, top.pid, total)
    log_ev = Evidence(
        log_source(snap.dump_path), Locator(LocatorKind.LINE, number), record.text.split("\n")[0],
        timestamp=Timestamp(record.seconds, Clock.MONOTONIC),
    )  # fmt: skip
    return root_cause_finding(
        FindingKind.OOM_USERS, m.group(1),
        f"out of memory: the top memory user is {top_text}; the failed request was order {m.group(4)} "
        + (m.group(3) or f"({m.group(2)})"),
        f"{m.group(1)} asked for an order-{m.group(4)} allocation ({m.group(2)}) and nothing could be reclaimed. "
        f"Largest user: {top_text}.",
        f"memory exhausted by {top_text}", _oom_steps(snap, () if isinstance(users, NotAvailable) else users), 0.85,
        "memory users read from the dump (RSS counters, vmalloc areas, slab caches)", [log_ev], facts,
    )  # fmt: skip


def _oom_steps(snap: CrashSnapshot, users: Sequence[MemoryUser]) -> str:
    """drgn's ``ps -G`` sorted by RSS, and ``kmem -i``; where the task list walk broke (makedumpfile left a
    task_struct out: ``ps`` without pids stops at it, "Excluded page"), ``ps -G`` of the tasks counted, by pid."""
    if snap.task_census.complete and not snap.task_census.breaks:
        return ">>> %crash ps -G | sort -k 8 -n | tail; >>> %crash kmem -i"
    pids = [str(u.pid) for u in users if u.kind == "task" and u.pid is not None][:8]
    if not pids:
        return f">>> %crash kmem -i  # the task list walk breaks in this dump ({snap.task_census.why_incomplete()})"
    return (
        f">>> %crash ps -G {' '.join(pids)}; >>> %crash kmem -i  # the tasks by pid: the task list walk breaks in "
        "this dump (see Tasks)"
    )


#: Hardening checks that stop a bad copy in the function that asked for it (their caller is the culprit):
#: (checker function, what stopped the copy, the log line it prints).
OVERFLOW_CHECKERS: tuple[tuple[str, str, str], ...] = (
    ("fortify_panic", "FORTIFY_SOURCE", "detected buffer overflow"),
    ("__fortify_panic", "FORTIFY_SOURCE", "detected buffer overflow"),
    ("__fortify_report", "FORTIFY_SOURCE", "detected buffer overflow"),
    ("usercopy_abort", "hardened usercopy", "usercopy: Kernel memory"),
)


def overflow_check_finding(snap: CrashSnapshot) -> Finding | None:
    """A hardening check (FORTIFY_SOURCE, hardened usercopy) that stopped a buffer overflow: blame its caller."""
    frame = crash_frame(snap.backtrace)
    if frame is None or not isinstance(frame.function, str):
        return None
    found = next((c for c in OVERFLOW_CHECKERS if c[0] == frame.function.split(".", 1)[0]), None)
    if found is None:
        return None
    checker, by, needle = found
    culprit = culprit_frame(snap.backtrace, frame)
    if culprit is None or culprit.index == frame.index:
        return None
    func = str(culprit.function)
    where = snap.where(culprit)
    report = log_line_evidence(snap, needle)
    said = f" ('{report.excerpt.strip()}')" if report is not None else ""
    facts = [
        Fact("detected by", f"{by}: {checker}() stopped the copy before it ran past the buffer"),
        Fact("overflowing code", f"{culprit.label()}" + (f" at {where}" if where else "")),
    ]
    if report is not None:
        facts.append(Fact("report", report.excerpt.strip()))
    hypothesis = f"buffer overflow in {func}" + (f" ({where})" if where else "") + f": {by} stopped it{said}"
    return root_cause_finding(
        FindingKind.BUFFER_OVERFLOW, f"{func}:{checker}", f"buffer overflow in {func}, stopped by {by}",
        f"{by}'s check in {checker}() found that {func} copies more than its destination holds{said}; "
        "the copy did not happen.",
        hypothesis, f"crash> dis -l {culprit.code_symbol()}", 0.85,
        f"the trap is {by}'s own, and the first frame past it is {func}",
        [frame_evidence(snap, frame.index), frame_evidence(snap, culprit.index), report], facts,
    )  # fmt: skip


def why_findings(snap: CrashSnapshot) -> list[Finding]:
    """Every explanation the snapshot supports, in order: condition, list, lockup, locks, OOM, values."""
    out: list[Finding] = []
    for make in (bug_condition_finding, list_corruption_finding, lockup_finding, oom_finding, overflow_check_finding):
        found = make(snap)
        if found is not None:
            out.append(found)
    for made in (slab.double_free_finding(snap), locks.spinlock_finding(snap)):
        if made is not None:
            out.append(made)
    out += locks.lock_cycle_findings(snap)
    out += slab.freed_object_findings(snap)
    out += suspicious_value_findings(snap)
    return out
