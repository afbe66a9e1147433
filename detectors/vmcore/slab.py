"""Slab faults from the snapshot: double frees and use-after-free, with the object's cache, state and history.

Pure: typed snapshot in, findings and titles out.  The object records
(:class:`forensics.types.vmcore.SlabObject`) come from the drgn adapter; each
finding states its hypothesis and the command that confirms it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from detectors.pointers import SLAB_FILLS, SLAB_POISONS, classify_value
from detectors.vmcore.disasm import decode
from detectors.vmcore.evidence import (
    FAULT_LINES,
    frame_evidence,
    log_line_evidence,
    memory_evidence,
    object_state,
    root_cause_finding,
)
from detectors.vmcore.findings import crash_frame, culprit_frame
from detectors.vmcore.nullfield import value_before
from forensics.model import Evidence, Fact, Finding, FindingKind, NotAvailable
from forensics.types import causes
from forensics.types.vmcore import CrashSnapshot, Frame, SlabObject, SlabTrack

#: How a double free shows, most specific first: (name, test on the snapshot, what it means).
DOUBLE_FREE_SIGNALS: tuple[tuple[str, Callable[[CrashSnapshot], bool], str], ...] = (
    ("set_freepointer trap", lambda s: _trap_function(s) == "set_freepointer",
     "SLAB_FREELIST_HARDENED's BUG_ON(object == fp) in set_freepointer(): the object freed is already the "
     "head of its free list"),
    ("SLUB debug report", lambda s: _log_has(s, "Object already free"),
     "slub_debug's free check: the object is already free"),
    ("KASAN report", lambda s: _log_has(s, "KASAN: double-free"), "KASAN saw the object freed twice"),
    ("glibc-style report", lambda s: _log_has(s, "double free or corruption"), "the allocator saw a double free"),
)  # fmt: skip
#: Names the allocator's frames give the object being freed (set_freepointer, __kmem_cache_free, kfree, ...).
OBJECT_VARIABLES = ("object", "x", "objp", "head", "tail_obj")


_FRAME_ORIGIN = re.compile(r"\(frame #(\d+)")


def _trap_function(snap: CrashSnapshot) -> str | None:
    site = snap.bug_site
    return None if isinstance(site, NotAvailable) else site.function


def _log_has(snap: CrashSnapshot, text: str) -> bool:
    return any(text in r.text for r in snap.log)


def _culprit(snap: CrashSnapshot) -> Frame | None:
    return culprit_frame(snap.backtrace, crash_frame(snap.backtrace))


def track_text(track: SlabTrack) -> str:
    """``kf_conn_close+0x16 (pid 42, CPU 1): kf_conn_close_write < full_proxy_write < vfs_write``."""
    if track.missing is not None and not track.stack:
        head = track.caller or "?"
        return f"{head}: {track.missing}" if track.caller else track.missing
    stack = list(track.functions())
    caller = (track.caller or "").split("+")[0]
    if caller in stack:
        # Before v5.19 the track's own addrs[] begin inside the allocator (__slab_alloc < slab_alloc_node <
        # slab_alloc < kmem_cache_alloc < the caller): its frames are cut, as the stack depot's skip does since.
        stack = stack[stack.index(caller) :]
    elif caller:
        stack.insert(0, caller)  # the stack depot skips the allocator's own frames, and sometimes the caller's
    shown = " < ".join(stack[:8])
    return f"{track.caller} ({track.who()}): {shown}"


def object_facts(obj: SlabObject) -> list[Fact]:
    """The object's cache, state, tracks and the module variables still pointing at it."""
    cache = obj.cache + (f" (merged with {', '.join(obj.cache_aliases)})" if obj.cache_aliases else "")
    facts = [Fact("object", f"{obj.start:#x}, {obj.object_size} bytes in cache {cache}: "
                            + object_state(obj.allocated))]  # fmt: skip
    if obj.missing is not None:
        # The slab's metadata (struct slab, the free lists) can still tell the state of an object
        # whose own page the dump lacks: said beside the state, which stays what the slab says.
        facts.append(Fact("object memory", obj.missing))
    if obj.tracks_missing is not None:
        facts.append(Fact("alloc/free stacks", obj.tracks_missing))
    for track in obj.tracks:
        facts.append(Fact(f"{'allocated' if track.kind == 'alloc' else 'freed'} by", track_text(track)))
    if obj.referenced_by:
        facts.append(Fact("still pointed to by", ", ".join(obj.referenced_by)))
    return facts


def _freed_object(snap: CrashSnapshot) -> SlabObject | None:
    """The object the allocator was freeing: a frame variable of the allocator's frames, else a free object."""
    starts = {o.start: o for o in snap.slab_objects}
    for fv in snap.frame_values:
        for read in fv.variables:
            if read.expression in OBJECT_VARIABLES and read.value in starts:
                return starts[read.value]
    return next((o for o in snap.slab_objects if o.allocated is False), None)


def double_free_finding(snap: CrashSnapshot) -> Finding | None:
    """A double free: how the kernel caught it, the object, its cache and state, the first free when recorded."""
    signal = next(((name, meaning) for name, test, meaning in DOUBLE_FREE_SIGNALS if test(snap)), None)
    if signal is None:
        return None
    name, meaning = signal
    culprit = _culprit(snap)
    func = str(culprit.function) if culprit is not None else "the caller"
    code = str(culprit.code_symbol()) if culprit is not None else func  # the code of the pc: kf_msg_submit.cold
    where = snap.where(culprit) if culprit is not None else None
    obj = _freed_object(snap)
    facts = [Fact("detected by", f"{name}: {meaning}")]
    if where:
        facts.append(Fact("second free", f"in {func} at {where}"))
    earlier = snap.earlier_free
    if earlier is not None and where:
        guard = " && ".join(f"({c})" if len(earlier.conditions) > 1 else c for c in earlier.conditions)
        held = ", ".join(f"{o.expression} = {o.value}" for o in earlier.operands)
        facts.append(
            Fact(
                "first free",
                f"{earlier.text} at {snap.cite(earlier.source_file, earlier.line)}, earlier in {func}"
                + (f", under `if ({guard})`: {held} in its frame" if earlier.conditions else ""),
            )
        )
    evidence: list[Evidence | None] = [
        log_line_evidence(snap, "kernel BUG at")
        or log_line_evidence(snap, "double free")
        or log_line_evidence(snap, "already free"),
        frame_evidence(snap, culprit.index) if culprit is not None else None,
    ]
    what = "an object"
    confidence = 0.8
    if obj is not None:
        facts += object_facts(obj)
        what = f"the {obj.cache} object {obj.start:#x}"
        free = obj.track("free")
        if free is not None and free.stack:
            facts.append(Fact("first free", track_text(free)))
        confidence = 0.92 if obj.allocated is False else 0.75
    else:
        gone = next((a for a in snap.addresses if a.kind == "slab" and a.missing), None)
        facts.append(Fact("object", f"{gone.address:#x} (seen in {gone.origin}): {gone.missing}" if gone else
                          "not identified: no pointer of the frames or registers lies in a slab object"))  # fmt: skip
    first = obj.track("free") if obj is not None else None
    hypothesis = causes.double_free(
        func, obj.cache if obj else None, obj.start if obj else None, where,
        first.caller.split("+")[0] if first is not None and first.caller else None,
    )  # fmt: skip
    return root_cause_finding(
        FindingKind.DOUBLE_FREE, f"{func}:{obj.cache if obj else '?'}",
        # not the crash's title (slab_title, "BUG: double free in f"): the crash finding says that; this one the object
        f"{what} freed twice, the second time by {func}",
        f"{meaning}. {what[0].upper() + what[1:]} is freed again by {func}"
        + (f" ({where})" if where else "") + ".",
        hypothesis,
        f"crash> kmem {obj.start:#x}; crash> dis -l {code}" if obj else f"crash> dis -l {code}",
        confidence, "the trap and the object's state read from the dump", evidence, facts,
    )  # fmt: skip


def fault_access(snap: CrashSnapshot) -> str | None:
    """``Read`` or ``Write``: what the faulting instruction did with its memory operand."""
    if isinstance(snap.code, NotAvailable):
        return None
    insn = next((i for i in decode(snap.code) if i.address == snap.code.fault_pc), None)
    if insn is None or insn.memory is None:
        return None
    return "Read" if insn.memory_is_source else "Write"


def use_after_free_title(snap: CrashSnapshot) -> str | None:
    """``BUG: use-after-free Read in f`` when the fault used a FREE object or its poison (syzbot's wording)."""
    regs = snap.registers.as_dict() if not isinstance(snap.registers, NotAvailable) else {}
    freed = [o for o in snap.slab_objects if o.allocated is False]
    poison = any((c := classify_value(v)) is not None and c.kind == "slab-poison-free" for v in regs.values())
    if not freed or not (poison or any(o.poisoned for o in freed)):
        return None
    access = fault_access(snap)
    culprit = _culprit(snap)
    if access is None or culprit is None:
        return None
    return f"BUG: use-after-free {access} in {culprit.function}"


def slab_title(snap: CrashSnapshot) -> str | None:
    """The crash's title when the dump shows a slab fault: a double free or a use-after-free."""
    if any(test(snap) for _name, test, _meaning in DOUBLE_FREE_SIGNALS):
        culprit = _culprit(snap)
        return f"BUG: double free in {culprit.function}" if culprit is not None else None
    return use_after_free_title(snap)


def _poisoned_members(snap: CrashSnapshot, obj: SlabObject) -> list[Fact]:
    """Members the faulting frames read from the object that hold slab poison, with their offsets."""
    out = []
    for fv in snap.frame_values:
        for read in fv.members:
            cls = classify_value(read.value) if read.value is not None else None
            if cls is None or cls.kind not in SLAB_POISONS:
                continue
            where = ""
            if read.address is not None and obj.start <= read.address < obj.start + obj.object_size:
                where = f" at offset {read.address - obj.start:#x}"
            out.append(Fact(f"{read.expression} (frame #{fv.frame} {fv.function})",
                            f"{read.value:#x}{where}: {cls.meaning}"))  # fmt: skip
    return out


#: SLUB's poison of a free object (include/linux/poison.h): POISON_FREE bytes, POISON_END last (init_object()).
POISON_FREE, POISON_END = 0x6B, 0xA5


def _member_name(snap: CrashSnapshot, obj: SlabObject, offset: int) -> str | None:
    """``conn->tx_bytes``: the member at ``offset`` of the struct a frame variable pointing at the object has."""
    for fv in snap.frame_values:
        for read in fv.variables:
            if read.value == obj.start and read.pointee and (layout := snap.layout(read.pointee)):
                member = layout.member_at(offset)
                if member is not None:
                    inside = offset - member.offset
                    return f"{read.expression}->{member.name}" + (f"+{inside:#x}" if inside else "")
    return None


def _writer(snap: CrashSnapshot, address: int) -> str | None:
    """The instruction before the fault that wrote the word at ``address``, from the registers at the fault."""
    if isinstance(snap.code, NotAvailable) or isinstance(snap.registers, NotAvailable):
        return None
    instructions = decode(snap.code)
    fault = next((k for k, i in enumerate(instructions) if i.address == snap.code.fault_pc), None)
    if fault is None:
        return None
    for k in range(fault - 1, max(-1, fault - 16), -1):
        insn = instructions[k]
        mem = insn.memory
        if mem is None or not insn.memory_is_written or mem.base is None or mem.index or mem.segment:
            continue
        base = value_before(instructions, k, mem.base, snap.registers, fault)
        if base is not None and base[0] + mem.disp <= address < base[0] + mem.disp + 8:
            return f"{insn.text()} at {insn.address:#x}"
    return None


@dataclass(frozen=True)
class WrittenAfterFree:
    """A word of a free object that is not SLUB's poison: what the poison became, and who wrote it."""

    address: int
    offset: int
    word: int
    poison: int  # what SLUB left there
    member: str | None  # ``conn->tx_bytes``
    writer: str | None  # the instruction before the fault that wrote it

    def text(self) -> str:
        """``0xa56b...6d at offset 0x28 (conn->tx_bytes): the poison 0xa56b...6b + 0x2``."""
        delta = self.word - self.poison
        how = (
            f"the poison {self.poison:#x} {'+' if delta > 0 else '-'} {abs(delta):#x}"
            if abs(delta) < 1 << 16
            else f"not the poison {self.poison:#x}"
        )
        member = f" ({self.member})" if self.member else ""
        return f"{self.word:#x} at offset {self.offset:#x}{member}: {how}"


def written_after_free(snap: CrashSnapshot, obj: SlabObject) -> list[WrittenAfterFree]:
    """The words of a free, poisoned object that are not SLUB's poison: memory written after the free.

    Judged only where the object holds the poison in most of its words (a cache with a constructor is not
    poisoned though SLAB_POISON is set).  Each word with its member and the instruction before the fault that
    wrote it.
    """
    data = obj.contents
    if obj.allocated is not False or not obj.poisoned or len(data) < obj.object_size or obj.object_size < 8:
        return []
    poison = bytes([POISON_FREE] * (obj.object_size - 1) + [POISON_END])
    offsets = range(0, obj.object_size - obj.object_size % 8, 8)
    changed = [o for o in offsets if data[o : o + 8] != poison[o : o + 8]]
    if len(changed) * 2 > len(offsets):
        return []
    return [
        WrittenAfterFree(
            obj.start + o,
            o,
            int.from_bytes(data[o : o + 8], "little"),
            int.from_bytes(poison[o : o + 8], "little"),
            _member_name(snap, obj, o),
            _writer(snap, obj.start + o),
        )
        for o in changed[:3]
    ]


def freed_object_findings(snap: CrashSnapshot) -> list[Finding]:
    """Pointers of the fault (registers, frame variables, the crash log) into FREE slab objects."""

    faulted = any(FAULT_LINES.search(r.text) for r in snap.log)
    if any(test(snap) for _name, test, _meaning in DOUBLE_FREE_SIGNALS):
        return []  # the object is free because it is being freed again: the double-free finding says it
    culprit = _culprit(snap)
    # A frame variable counts only from the crash frame to the culprit: an outer frame's argument (kthread()'s
    # _create, a kthread_create_info freed once the thread ran) is a stale value nobody uses again.
    limit = culprit.index if culprit is not None else 0

    def near(origin: str) -> bool:
        m = _FRAME_ORIGIN.search(origin)
        return m is None or int(m.group(1)) <= limit

    # Registers are the fault's only when the CPU faulted; an interrupt (a lockup) catches them anywhere.
    freed = [
        a for a in snap.addresses
        if a.kind == "slab" and a.allocated is False and (faulted or not a.origin.isalnum()) and near(a.origin)
    ]  # fmt: skip
    if not freed:
        return []
    func = str(culprit.function) if culprit is not None else "the crashing function"
    objects = {o.start: o for o in snap.slab_objects}
    out: list[Finding] = []
    done: set[int | None] = set()
    for a in freed:
        if a.object_start in done or len(out) >= 3:
            continue
        done.add(a.object_start)
        cache = f"{a.cache}" + (f" (merged with {', '.join(a.cache_aliases)})" if a.cache_aliases else "")
        where = f"{a.object_start:#x}+{a.offset:#x}" if a.object_start is not None and a.offset is not None else "?"
        facts = [Fact("pointer", f"{a.address:#x} seen in {a.origin}")]
        obj = objects.get(a.object_start) if a.object_start is not None else None
        written = written_after_free(snap, obj) if obj is not None else []
        if obj is not None:
            facts += object_facts(obj) + _poisoned_members(snap, obj)
            facts += [
                Fact("written after free", w.text() + (f", by {w.writer} before the fault" if w.writer else ""))
                for w in written
            ]
        else:
            facts += [Fact("object", f"{where} of {a.object_size} bytes in cache {cache}: FREE"),
                      Fact("alloc/free stacks", "not read: the object's slab could not be read again")]  # fmt: skip
        facts.append(Fact("first words", ", ".join(f"{w:#x}" for w in a.words[:4]) or "not in dump"))
        poisoned = any((c := classify_value(w)) is not None and c.kind in SLAB_FILLS for w in a.words)
        freer = obj.track("free") if obj is not None else None
        hypothesis = causes.use_after_free(
            func, a.cache, f"{a.origin} = {a.address:#x}",
            freer.caller.split("+")[0] if freer is not None and freer.caller else None,
            obj.referenced_by if obj is not None else (),
        )  # fmt: skip
        evidence: list[Evidence | None] = [frame_evidence(snap, culprit.index) if culprit else None]
        evidence.append(
            log_line_evidence(snap, "general protection fault") or log_line_evidence(snap, "unable to handle")
        )
        evidence.append(memory_evidence(snap, a.address, a.words[:4]))
        evidence += [memory_evidence(snap, w.address, (w.word,)) for w in written]
        modified = "".join(
            f" Freed memory was modified: {w.text()}" + (f", written by {w.writer}." if w.writer else ".")
            for w in written[:1]
        )
        out.append(
            root_cause_finding(
                FindingKind.USE_AFTER_FREE, f"{a.cache}:{a.origin}",
                f"use-after-free in {func}: {a.origin} points into a free {a.cache} object",
                f"{a.origin} holds {a.address:#x}, inside the {cache} object at {where}, which the slab "
                "allocator has on its free list." + (" The object holds slab poison." if poisoned else "")
                + modified,
                hypothesis, f"crash> kmem {a.address:#x}",
                (0.9 if freer is not None else 0.8) if poisoned else 0.65,
                "the slab's free list in the dump says the object is free"
                + ("; SLUB's free track names who freed it" if freer is not None else "")
                + ("" if poisoned else "; a stale value in a register may also be dead"),
                evidence, facts,
            )
        )  # fmt: skip
    return out
