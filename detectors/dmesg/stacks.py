"""Stacks as data: every stack section of a report with its frames, and each section's first foreign frame.

A report holds several stacks: the call trace, KASAN's and KFENCE's "Allocated by task N" and
"Freed by task N", "Last potentially related work creation", KMSAN's "Uninit was stored to memory
at" and "Uninit was created at", page_owner's "page last allocated via" and "page last free",
lockdep's dependency chain (``-> #1 (&a->lock){+.+.}:`` and where that lock was taken).  Each
section is kept with its frames (function, offset, module and, in a symbolized log, file:line and
whether the frame was inlined).

The *first foreign frame* of a section is the first reliable frame that is not the machinery that
printed, allocated, freed or locked: the skip lists of the titles' guilty frame
(:data:`detectors.dmesg.frames.BASE_SKIP`) plus the entries of the section's kind
(:data:`SECTION_SKIPS`), so that "who allocated" and "who freed" are named the way a title names
the culprit.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final, cast

from ahocorasick_rs import BytesAhoCorasick, MatchKind

from detectors.dmesg.frames import (
    ABSENT,
    MARKER_NAMES,
    STACK_FIELDS,
    StackFields,
    after_marker,
    function_name,
    read_stack_frame,
    remember,
    skip_matcher,
)
from detectors.dmesg.lines import LogLine
from forensics import regexcache as rc
from forensics.types.dmesg import StackFrame, StackKind, StackSection
from forensics.units import log_dec, log_hex

#: A frame line: ``[<addr>]`` columns, ``?``, the symbol, ``+off/size``, ``[module]``, ``file:line``, ``[inline]``.
#: A frame without an offset counts only with a source position (a symbolized inlined frame).
_FRAME = rc.compile(
    r"^\s*(?:\[\s*<?(?:0x)?[0-9a-fA-F]+>?\]\s*){0,2}(\?\s+)?(?:\d+:)?\.?"
    r"([A-Za-z_][A-Za-z0-9_.$]*)"
    r"(?:\+(0x[0-9a-fA-F]+)/(0x[0-9a-fA-F]+))?"
    r"(?:\s+\[([A-Za-z0-9_\-]+)\])?"
    r"(?:\s+([A-Za-z0-9_\-./]+\.[A-Za-z]+:\d+(?::\d+)?))?"
    r"(?:\s+\[([A-Za-z0-9_\-]+)\])?"
    # arm64 (6.13+) marks where each frame's pc came from: "(P)" pt_regs, "(C)" the current frame, "(L)" lr.
    r"(\s+\[inline\])?\s*(?:\(unreliable\)|\([PCLKTUF]\))?\s*$"
)
# arm's "[<pc>] (callee) from [<lr>] (caller+0x18/0x1c)"; symbolized, "(caller+0x18/0x1c file.c:256)" or, for
# an inlined caller, "(__dump_stack lib/dump_stack.c:88 [inline])".
_ARM_FRAME = rc.compile(
    r"^\s*\[<[0-9a-f]+>\] \([^)]*\) from \[<[0-9a-f]+>\] \(([A-Za-z_][A-Za-z0-9_.$]*)"
    r"(?:\+(0x[0-9a-f]+)/(0x[0-9a-f]+))?(?: ([A-Za-z0-9_\-./]+\.[A-Za-z]+:\d+))?( \[inline\])?\)"
)
#: Lines that may stand inside a stack without ending it: the context markers (``<IRQ>``, ``</TASK>``), register
#: dumps, ``PID = 1``.  One pattern, the markers' its first branch: a line that is no frame is tried once, not by a
#: pattern of markers and then one of the rest (~1,700 instructions a call; ~5,700 lines of the corpus x4's stacks).
_INSIDE: Final = rc.compile(
    rf"^\s*(?:</?(?:{MARKER_NAMES})>\s*$|"
    # arm's backtrace prints the registers a frame saved ("r7:00000000 r6:826229c4") and an exception stack's
    # words ("1fa0: 00000000 ...") between its frames.
    r"(?:R[A-Z0-9]{1,3}|[A-Z]{2,3}|CR\d|DR\d|ORIG_RAX|pc|lr|sp|x\d+|r\d+|[0-9a-f]{4})\s*:|Code:|PID = \d+|"
    r"---\s*interrupt|"
    r"Exception stack|\(stack is not available\)|$)"
)


#: Section headings, most specific first: (kind, a word every match holds, pattern).  ``task`` is the group naming the
#: task.  The word is tested first (an ``in`` test, not the pattern's search: ~1,000 instructions each, ~13 a line).
SECTION_HEADINGS: tuple[tuple[StackKind, str, re.Pattern[str]], ...] = tuple(
    (kind, word, rc.compile(pattern))
    for kind, word, pattern in (
        (StackKind.ALLOCATED, "Allocated", r"^\s*(?:Allocated by task (?P<task>\d+)|Allocated):"),
        (StackKind.FREED, "Freed", r"^\s*(?:Freed by task (?P<task>\d+)|Freed):"),
        # KFENCE: "kfence-#69 [...] allocated by task 9997:", "freed by task 9997:".
        (StackKind.ALLOCATED, "allocated by",
         r"allocated by task (?P<task>\d+)(?: on cpu \d+ at [\d.]+s)?(?: \(age: [\d.]+s\))?:\s*$"),
        (StackKind.FREED, "freed by",
         r"^\s*freed by task (?P<task>\d+)(?: on cpu \d+ at [\d.]+s)?(?: \(age: [\d.]+s\))?:\s*$"),
        (StackKind.AUX_WORK, "potentially related", r"^\s*Last potentially related work creation:"),
        (StackKind.AUX_WORK_2, "potentially related", r"^\s*Second to last potentially related work creation:"),
        (StackKind.UNINIT_STORED, "Uninit was", r"^\s*Uninit was stored to memory at:"),
        (StackKind.UNINIT_CREATED, "created at:", r"^\s*(?:Uninit was created at:|Local variable .* created at:)"),
        (StackKind.PAGE_ALLOC, "page last", r"^\s*page last allocated via .*pid (?P<task>\d+)"),
        (StackKind.PAGE_FREE, "page last", r"^\s*page last free (?:pid (?P<task>\d+) .*)?stack trace:"),
        (StackKind.LOCK_CHAIN, "-> #", r"^\s*-> #\d+ \(.*\)(?:\{[^}]*\})*(?:-\{[^}]*\})?:\s*$"),
        (StackKind.LEAK_BACKTRACE, "acktrace", r"^\s*backtrace(?: \(crc [0-9a-f]+\))?:"),
        (StackKind.CALL_TRACE, "race:", r"^\s*(?:Call [Tt]race:|Backtrace:)"),
    )
)  # fmt: skip
#: Words one of which every heading holds (a cheap test before the patterns): the headings' own, each once.
_HEADING_WORDS = tuple(dict.fromkeys(word for _, word, _ in SECTION_HEADINGS))
#: The same words in one automaton, to find the lines that may be headings in one pass over a report's bodies
#: (a regex alternation is tried at every character: ~1.5 us a line).  Leftmost-first, non-overlapping: no word
#: holds a newline, so every line with a word has a match.
_HEADING_SEARCH = BytesAhoCorasick([w.encode() for w in _HEADING_WORDS], matchkind=MatchKind.LeftmostFirst)

#: A section's own skips on top of the titles' base list: the machinery that recorded the stack.
#: The stack depot and track recorders of old kernels (save_stack_trace, set_track) come first in every such stack.
#: KASAN's inlined helpers print as frames of their own in a symbolized stack (poison_kmalloc_redzone).
_RECORDERS = ("^_*save_stack", "^set_track", "^depot_", "^_*kasan", "kfence_", "^_*(?:un)?poison_")
#: Softirq and RCU callback machinery: a free from an RCU callback is the callback's (i_callback), not theirs.
_CALLBACKS = ("rcu_do_batch", "rcu_core", "^_*rcu_", "^_*do_softirq", "^handle_softirqs", "^run_ksoftirqd", "^irq_exit",
              "^smpboot_thread_fn", "^_*irq_exit_rcu")  # fmt: skip

#: The slab and page allocator's entry points and internals, old and new: 6.10's memory allocation profiling
#: renamed them ``*_noprof`` (``__kmalloc_cache_noprof``, ``kmem_cache_alloc_noprof``, ``alloc_pages_noprof``),
#: and ``__do_kmalloc_node``, ``slab_alloc_node``, ``slab_post_alloc_hook`` are inlined into them (a symbolized
#: stack prints them as frames of their own).  Who allocated is the caller of the first of them.
_ALLOCATOR = ("^_*kmem_cache_alloc", "^_*kmalloc", "^_*do_kmalloc", "^_*k[vzc]alloc", "^_*kvmalloc", "^_*vmalloc",
              "krealloc", "slab_alloc", "slab_post_alloc_hook", "^_*alloc_pages", "^_*alloc_frozen_pages",
              "_noprof$")  # fmt: skip
#: The slab, vmalloc and string helpers around the allocator and the free, where the base skip list does not
#: reach: who freed is the caller of kzfree (kfree_sensitive since 5.9), vfree, SLAB's __cache_free; who allocated
#: the caller of kvrealloc, kstrndup or kasprintf.
_FREE_HELPERS = ("^_*kzfree$", "^_*vfree", "^_*vunmap$", "^_*cache_free$")
_ALLOC_HELPERS = ("^_*kvrealloc", "^kstrndup$", "^k?v?asprintf$")
#: The socket and packet layers' own allocation wrappers: a socket is allocated by sk_alloc through sk_prot_alloc for
#: whichever protocol called sk_alloc (bt_sock_alloc), an skb by skb_clone or alloc_skb for its caller; a socket is
#: freed by the last sock_put through sk_free and the destructors, whoever dropped that reference (l2cap_sock_kill).
_NET_ALLOCATORS = ("^sk_prot_alloc$", "^sk_alloc$", "^skb_clone$", "^_*alloc_skb", "^_*(?:netdev|napi)_alloc_skb",
                   "^skb_copy$", "^_*pskb_copy")  # fmt: skip
_NET_FREERS = ("^sk_prot_free$", "^_*sk_destruct$", "^_*sk_free$", "^sock_put$", "^skb_release_", "^kfree_skbmem$",
               "^skb_free_head$", "^consume_skb$")  # fmt: skip
#: The lock primitives and the inline wrappers a symbolized log prints as frames of their own: spin_lock,
#: _raw_spin_lock_irqsave, mutex_lock_nested (the base skip list has them), and 6.x's guard()/scoped_guard()
#: cleanup classes, ``class_spinlock_irqsave_constructor``, ``class_mutex_destructor``, whatever the lock.
#: fs_reclaim_acquire takes lockdep's fs_reclaim map for an allocation that may reclaim: the allocating caller took it.
LOCK_PRIMITIVES = ("lock_sock", "lock_acquire", "^_*down_", "^_*mutex_lock", "rtnl_lock$", "^percpu_down_", "seqlock",
                   r"^class_\w+_(?:constructor|destructor)$", "^_*local_lock", "^_*fs_reclaim_acquire$")  # fmt: skip


def header_inline(inline: bool, source: str | None) -> bool:
    """Whether a frame is a helper inlined from a header (``inode_lock include/linux/fs.h:756 [inline]``).

    Where a lock was taken, such helpers are the generic wrappers around the lock (inode_lock,
    filemap_invalidate_lock, device_lock, might_alloc, xa_insert): the function that took the lock is the first
    frame after them, as a title names it.
    """
    return inline and source is not None and (source.startswith("include/") or "/include/" in source)


def first_lock_taker(frames: Sequence[StackFrame], skip: tuple[str, ...] = ()) -> StackFrame | None:
    """A lock chain link's first foreign frame: past the lock primitives (and ``skip``) and the header helpers
    inlined above it."""
    skips = skip_matcher((*LOCK_PRIMITIVES, *skip))
    for frame in frames:
        if frame.reliable and not header_inline(frame.inline, frame.source) and not skips.skipped(frame.function):
            return frame
    return None


SECTION_SKIPS: dict[StackKind, tuple[str, ...]] = {
    StackKind.ALLOCATED: (*_RECORDERS, *_ALLOCATOR, *_ALLOC_HELPERS, *_NET_ALLOCATORS),
    StackKind.FREED: (*_RECORDERS, *_CALLBACKS, "kmem_cache_free", "^_*kfree", "slab_free", *_FREE_HELPERS,
                      *_NET_FREERS),
    StackKind.AUX_WORK: (*_RECORDERS, "call_rcu", "^_*queue_work", "insert_work", "task_work_add", "kvfree_call_rcu",
                 "^_*call_rcu_common", "^_*schedule_work", "^_*queue_delayed_work", "irq_work_queue"),
    StackKind.AUX_WORK_2: (*_RECORDERS, "call_rcu", "^_*queue_work", "insert_work", "task_work_add", "kvfree_call_rcu",
                   "^_*call_rcu_common", "^_*schedule_work", "^_*queue_delayed_work", "irq_work_queue"),
    StackKind.PAGE_ALLOC: ("get_page_from_freelist", "new_slab", "_slab_alloc", "allocate_slab", "alloc_pages_mpol",
                   "alloc_slab_page", "folio_alloc", *_ALLOCATOR),
    StackKind.PAGE_FREE: ("^_*free_", "free_pcp", "free_unref", "put_partials", "qlist_free_all", "kasan_quarantine",
                  "discard_slab", "__slab_free", "release_pages", "folios_put"),
    StackKind.LOCK_CHAIN: LOCK_PRIMITIVES,
    StackKind.UNINIT_STORED: ("^_*msan", "kmsan", "^memcpy", "^memmove"),
    StackKind.UNINIT_CREATED: ("^_*msan", "kmsan", *_ALLOCATOR),
    # kmemleak's own create_object records the allocation (2.6-era backtraces start with it).
    StackKind.LEAK_BACKTRACE: ("kmemleak", "^create_object$", *_ALLOCATOR),
}  # fmt: skip


#: Every call trace's own skips: arm64's tag-based KASAN reports from its fault handler (kasan_report <-
#: report_tag_fault <- do_tag_recovery <- __do_kernel_fault ...); the frames above the exception entry are KASAN's.
_CALL_TRACE_SKIPS = ("^report_tag_fault$", "^do_tag_recovery$")


#: :func:`parse_stack_frame` by line body (see ``frames.LINES_REMEMBERED``): the frame reader's dict, which the
#: scan's reading of a frame line fills too (:data:`detectors.dmesg.frames.STACK_FIELDS`).
_FIELDS: Final = STACK_FIELDS


def parse_stack_frame(body: str) -> StackFields | None:
    """Function, symbol, offset, size, module, source, inline and reliability of a frame line, or None.

    Read from the line's bytes (:func:`read_stack_frame`) when it has the common shape, else by the patterns.
    Remembered by line: frames recur from report to report, and the scan read most of them already.
    """
    got = _FIELDS.get(body, ABSENT)
    if got is not ABSENT:
        return cast("StackFields | None", got)
    fields = read_stack_frame(body)
    return remember(_FIELDS, body, _stack_frame_by_pattern(body) if fields is not None and not fields[1] else fields)


def _stack_frame_by_pattern(body: str) -> StackFields | None:
    """:func:`parse_stack_frame` by the frame patterns: the meaning of a frame line."""
    m = _FRAME.match(body)
    if m is None:
        arm = _ARM_FRAME.match(body)
        if arm is None:
            return None
        symbol, off, size, source, inline = arm.groups()
        if off is None and source is None:
            return None
        offset, length = log_hex(off) if off else None, log_hex(size) if size else None
        if (off and offset is None) or (size and length is None):
            return None  # an offset or size past 64 bits: no frame a kernel prints
        return (function_name(symbol), symbol, offset, length, None, source, inline is not None, True)
    unreliable, symbol, off, size, module, source, module2, inline = m.groups()
    if off is None and source is None:
        return None  # a bare word is not a frame
    offset, length = log_hex(off) if off else None, log_hex(size) if size else None
    if (off and offset is None) or (size and length is None):
        return None  # an offset or size past 64 bits: no frame a kernel prints
    reliable = unreliable is None and not body.rstrip().endswith("(unreliable)")
    if (module or module2) == "inline" and inline is None:
        # A frame without an offset ("inode_lock include/linux/fs.h:756 [inline]"): its "[inline]" is the mark, not
        # a module's name in brackets.
        module = module2 = None
        inline = "[inline]"
    return (
        function_name(symbol),
        symbol,
        offset,
        length,
        module or module2,
        source,
        inline is not None,
        reliable,
    )


_new_tuple: Final = tuple.__new__

#: The stack kinds compared with per section, bound once (an enum member read through its class goes through
#: EnumType's ``__getattr__`` hook under Python 3.11: ~700 instructions from compiled code; see why.py).
_SK_CALL_TRACE: Final = StackKind.CALL_TRACE
_SK_LEAK_BACKTRACE: Final = StackKind.LEAK_BACKTRACE
_SK_LOCK_CHAIN: Final = StackKind.LOCK_CHAIN
_SK_RACE_ACCESS_1: Final = StackKind.RACE_ACCESS_1
_SK_RACE_ACCESS_2: Final = StackKind.RACE_ACCESS_2


def _heading(body: str) -> tuple[StackKind, int | None] | None:
    """The kind of stack a heading line opens, and the task it names; None for other lines (a line that holds one
    of the heading words, :func:`stack_sections`' automaton found)."""
    for kind, word, pattern in SECTION_HEADINGS:
        if word in body and (m := pattern.search(body)) is not None:
            task = m.groupdict().get("task")
            return kind, log_dec(task) if task else None
    return None


def first_foreign(frames: Sequence[StackFrame], skip: tuple[str, ...]) -> StackFrame | None:
    """The first reliable frame outside the titles' skip lists and ``skip`` (inlined frames count)."""
    skips = skip_matcher(skip)
    for frame in frames:
        if frame.reliable and not skips.skipped(frame.function):
            return frame
    return None


def lines_holding(blob: bytes, search: BytesAhoCorasick) -> list[int]:
    """The indices of the lines of ``blob`` (lines joined by newlines) that hold a word of ``search`` (an automaton
    of words without a newline, leftmost-first and not overlapping: each line with a word has a match), in order.

    One pass over a report's text finds the few lines a reader reads (a substring test of each line, ~260
    instructions compiled, is dearer for a reader that tests several words a line).
    """
    out: list[int] = []
    line = prev = 0
    for _, at, _ in search.find_matches_as_indexes(blob):
        line += blob.count(b"\n", prev, at)
        prev = at
        if not out or out[-1] != line:
            out.append(line)
    return out


def stack_sections(
    lines: Sequence[LogLine],
    first: int,
    skip_call_trace: tuple[str, ...] = (),
    blob: bytes | None = None,
    before: int = 0,
) -> list[StackSection]:
    """Every stack section of a report's lines (``first``: the report's first line number).

    A section runs from its heading to the next heading, or to the first line after its
    frames that is neither a frame nor a line that may stand inside a stack (markers,
    register dumps).  ``skip_call_trace``: the report rule's own skips for the stack it titles the report from
    (the call trace; kmemleak's backtrace).  ``blob``: the bodies of ``before`` lines and then of ``lines``, joined
    by newlines and encoded (the reading's text, whose preamble lines come first), when the caller has it.
    """
    if blob is None:
        blob, before = "\n".join([line.body for line in lines]).encode(), 0
    headings: dict[int, tuple[StackKind, int | None]] = {}
    for i in lines_holding(blob, _HEADING_SEARCH):
        if i >= before and (heading := _heading(lines[i - before].body)) is not None:
            at = i - before
            if heading[1] is None and at + 1 < len(lines) and (m := _OLD_KASAN_PID.match(lines[at + 1].body)):
                heading = (heading[0], log_dec(m.group(1)))
            headings[at] = heading
    return _sections(lines, first, headings, skip_call_trace)


#: Older KASAN (mm/kasan/report.c's print_track before "Allocated by task N:") printed the task on the line after
#: its "Allocated:" / "Freed:" heading: "PID = 4655".
_OLD_KASAN_PID = rc.compile(r"^\s*PID = (\d+)\s*$")


#: KCSAN's access line (kernel/kcsan/report.c): the access type with its marks ("read (marked)", "write (scoped)",
#: "read-write", "assert no writes (reordered)"), the address and size, by a task or an interrupt, on which CPU.
#: A race whose other access KCSAN did not see (the value changed while it watched) prints "race at unknown origin,
#: with read to ...".
RACE_ACCESS = rc.compile(
    r"^\s*(?P<unknown>race at unknown origin, with )?"
    r"(?P<type>read-write|read|write|assert no (?:accesses|writes))(?P<marks>(?: \([a-z, ]+\))*) "
    r"to (?P<address>0x[0-9a-f]+) of (?P<size>\d+) bytes by (?:task (?P<pid>\d+)|(?P<interrupt>interrupt)) "
    r"on cpu (?P<cpu>\d+):\s*$"
)


def race_sections(lines: Sequence[LogLine], first: int) -> list[StackSection]:
    """KCSAN's accesses, each with its stack: the first printed, then the reporting task's (a KCSAN report only)."""
    headings: dict[int, tuple[StackKind, int | None]] = {}
    for i, line in enumerate(lines):
        if " bytes by " in line.body and (m := RACE_ACCESS.match(line.body)) is not None:
            kind = _SK_RACE_ACCESS_2 if headings else _SK_RACE_ACCESS_1
            headings[i] = (kind, log_dec(m.group("pid")) if m.group("pid") else None)
    return _sections(lines, first, headings, ())


def _sections(
    lines: Sequence[LogLine],
    first: int,
    headings: dict[int, tuple[StackKind, int | None]],
    skip_call_trace: tuple[str, ...],
) -> list[StackSection]:
    """The sections that open at ``headings`` (a line's index: the kind it opens and the task it names)."""
    out: list[StackSection] = []
    current: tuple[StackKind, str, int, int | None] | None = None
    frames: list[StackFrame] = []
    cut: list[int] = []  # the frame lines the console cut short, skipped
    pending = 0  # lines since the heading before any frame

    def close() -> None:
        if current is None:
            return
        kind, heading, at, task = current
        if kind is _SK_CALL_TRACE:
            skip = (*skip_call_trace, *_CALL_TRACE_SKIPS)
        elif kind is _SK_LEAK_BACKTRACE:
            # kmemleak's backtrace is the stack the memory-leak rule titles the report from: who allocated the
            # leaked object is named as the title names it, past the allocation wrappers (sk_prot_alloc, idr_*).
            skip = (*SECTION_SKIPS[kind], *skip_call_trace)
        elif kind is _SK_LOCK_CHAIN:
            out.append(
                _new_tuple(
                    StackSection, (kind, heading, at, task, tuple(frames), first_lock_taker(frames), tuple(cut), None)
                )
            )
            return
        else:
            skip = SECTION_SKIPS.get(kind, ())
        out.append(
            _new_tuple(
                StackSection, (kind, heading, at, task, tuple(frames), first_foreign(frames, skip), tuple(cut), None)
            )
        )

    # The headings' lines in order, each met by comparing its index (not a dict lookup a line: ~24,000 lines of the
    # corpus x4's readings, a few dozen headings).
    opening = sorted(headings)
    opening.append(len(lines))
    following = 0
    for i, line in enumerate(lines):
        body = line.body
        if i == opening[following]:
            heading = headings[i]
            following += 1
            close()
            current = (heading[0], body.strip(), line.number - first, heading[1])
            frames, cut = [], []
            pending = 0
            continue
        if current is None:
            continue
        parsed = parse_stack_frame(body) if ("+0x" in body or ":" in body or ") from [<" in body) else None
        if parsed is None and "<" in body and (rest := after_marker(body)) is not None:
            parsed = parse_stack_frame(rest)  # a marker and a frame on one line (x86 before v4.10)
        if parsed is not None:
            # tuple.__new__: the named tuple's own constructor is a Python function with keywords.
            # The fields named, not unpacked with ``*``: compiled, the tuple is then made at once, not from a list.
            function, symbol, offset, size, module, source, inline, reliable = parsed
            fields = (function, symbol, offset, size, module, source, inline, reliable, line.number - first)
            frames.append(_new_tuple(StackFrame, fields))
            continue
        if _INSIDE.match(body):
            continue
        if frames and "+0x" in body and _CUT_FRAME.match(body) and _frame_follows(lines, i):
            # A frame line the console cut short ("el1_interrupt+0x3c/0x", the rest lost or printed later): the
            # stack goes on at the next line, as an engineer reads past it.
            cut.append(line.number - first)
            continue
        pending += 1
        if frames or pending > 3:
            close()
            current = None
    close()
    return out


#: The start of a frame line cut short: a symbol and an offset that stops before its end ("+0x3c/0x", "+0x3").
_CUT_FRAME: Final = rc.compile(r"^\s*(?:\?\s+)?[A-Za-z_][A-Za-z0-9_.$]*\+0x[0-9a-fA-F]*(?:/(?:0x[0-9a-fA-F]*)?)?\s*$")


def _frame_follows(lines: Sequence[LogLine], i: int) -> bool:
    """Whether the line after ``lines[i]`` is a frame (a cut line inside a stack, not at its end)."""
    return i + 1 < len(lines) and parse_stack_frame(lines[i + 1].body) is not None


def headless_call_trace(
    trace: Sequence[tuple[str, str, int | None, int | None, str | None, bool, str, int]],
    first: int,
    skip_call_trace: tuple[str, ...] = (),
) -> StackSection | None:
    """The call trace of a report that prints it without a heading, from the frames the scanner read.

    KMSAN prints its stack right under "BUG: KMSAN: ...", 32-bit arm's oops without "Backtrace:" (its frames
    are "[<pc>] (f) from [<lr>] (g+0x.../0x...)"): no heading opens a section, yet the report has a call trace.
    ``trace``: the report's frames (:class:`forensics.types.dmesg.Frame`: function, symbol, offset, size,
    module, reliable, stack, line).
    """
    if not trace:
        return None
    frames = tuple(
        _new_tuple(StackFrame, (function, symbol, offset, size, module, None, False, reliable, line - first))
        for function, symbol, offset, size, module, reliable, _stack, line in trace
    )
    skip = (*skip_call_trace, *_CALL_TRACE_SKIPS)
    return _new_tuple(
        StackSection, (_SK_CALL_TRACE, "", frames[0].at, None, frames, first_foreign(frames, skip), (), None)
    )
