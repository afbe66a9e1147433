"""Building one report from the lines that follow its header.

:func:`match_header` finds the rule of a header line; :func:`build_report`
takes the lines from that header on, decides where the report ends (the next
report's header, ``---[ end trace``, or the window's end), keeps only the lines
of the header's CPU or task when the log has caller prefixes, and fills in the
title, guilty frame, call trace and context of the report.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterator, Sequence
from typing import Final, cast

from ahocorasick_rs import AhoCorasick, BytesAhoCorasick, Implementation, MatchKind

from detectors.dmesg.frames import (
    STACK_START,
    STACK_START_WORDS,
    function_name,
    hung_frame,
    is_frame,
    parse_trace,
    remember,
    required_text,
    skip_matcher,
    stack_at,
    stall_frame,
    title_name,
    trace_names,
)
from detectors.dmesg.lines import LogLine, Window, wall_zone_unknown
from detectors.dmesg.model import keep_parsed
from detectors.dmesg.rules import IGNORED, RULES, TRIGGERS, Rule, StackSpec, Step
from detectors.dmesg.taint import decode_taint, taint_letters
from forensics import regexcache as rc
from forensics.model import NotAvailable
from forensics.types import log_prefix
from forensics.types.dmesg import Frame, KernelReport
from forensics.units import log_dec, past_64_bits

_END_MARKER: Final = rc.compile(r"---\[ end (?:trace|Kernel panic)")
# dump_stack_print_info(): "Comm: %.20s %s%s ..." where the first %s is "Kdump: loaded " when a crash
# kernel is loaded, then "Tainted: ..." or "Not tainted"; a comm may itself hold spaces.
_CPU_LINE: Final = rc.compile(
    r"CPU: (\d+) (?:UID: \d+ )?PID: (\d+) Comm: (.+?)(?: Kdump: loaded)?(?: Not tainted| Tainted:| *$)"
)
_RELEASE: Final = rc.compile(r"(?:Not tainted|Tainted: [A-Z ]+?)\s+(\d+\.\d+[^\s]*)")
_HARDWARE: Final = rc.compile(r"Hardware name: (.+?)\s*$")
#: The task a hung-task report is about, as khungtaskd names it (``INFO: task %s:%d blocked for more than %ld
#: seconds.``, ``... can't die for ...``); a comm may hold colons (``kworker/0:1:12``): the pid is the last number.
_BLOCKED_TASK: Final = rc.compile(r"INFO: task (.+?):(\d+) (?:blocked|can't die) ")
#: The rules whose report is about a task asleep (khungtaskd's): no CPU runs it, and no "CPU:" line of its report is
#: its own.
BLOCKED_TASK_RULES: Final = ("hung-task", "task-cant-die")
_TIMESTAMP_IN_TITLE: Final = rc.compile(r"\[ *\d+\.\d+\]")
_OFFSET: Final = rc.compile(r"\+0x[0-9a-f]+/0x[0-9a-f]+")
_ADDRESS: Final = rc.compile(r"\b(?:0x[0-9a-fA-F]+|[0-9a-fA-F]{8,})\b")
_NUMBER: Final = rc.compile(r"\b\d+\b")
# A run of 7 digits or more inside a word ("./syzkaller-testdir264563108") is an occurrence's number, not part
# of a name (names keep short ones: cfg80211, nl802154); syzkaller's titles replace it too.
_LONG_NUMBER: Final = rc.compile(r"\d{7,}")
_SYMBOL: Final = rc.compile(r"[A-Za-z_][A-Za-z0-9_.$]*")


def sanitize(text: str) -> str:
    """Free text of a header as it goes into a title: no offsets, addresses (ADDR) or numbers (NUM).

    Titles name a bug, not one occurrence of it: two boots of the same bug must
    give the same title (and finding id).
    """
    text = _ADDRESS.sub("ADDR", _OFFSET.sub("", text))
    return _LONG_NUMBER.sub("NUM", _NUMBER.sub("NUM", text)).strip()


_STRUCTURAL: Final = rc.compile(
    r"^\s*(?:R[A-Z0-9]{1,2}:|[A-Z]{2,3}:|[CD]R\d:|Code:|\? |<|Modules linked in|Hardware name|CPU: |Call [Tt]race|"
    r"Kernel Offset|Dumping ftrace|---\[|\(ftrace buffer|Workqueue:|Allocated by|Freed by|The buggy address|"
    r"Memory state|Disabling lock|irq event stamp|hardirqs|softirqs|\[<|#\d|\s*\d+ locks? held|other info|"
    r"Possible unsafe|stack backtrace|Showing all locks|task:|pc :|lr :|sp :|x\d+:|"
    # The last piece of a "#N:" lock entry the console split over lines (", at: debug_show_all_locks+0x75/0x340").
    r", at: |"
    # KASAN's object lines after its stacks ("which belongs to the cache kmalloc-64 of size 64", "allocated
    # 64-byte region [...)"): a report cut after them still ends with them, the cache and size are read there.
    r"which belongs to the cache|(?:freed |allocated )?\d+-byte region)"
)
#: After the call trace, this many lines without report structure end the report.
_TAIL_SLACK: Final = 20
#: Before any call trace (lockdep's lock chains come first), this many.
_HEAD_SLACK: Final = 80


#: Each rule with the text every match of its header holds ("" for none), and that text's index among the distinct
#: texts (-1 for none).  A line is tried against a rule's pattern only when it holds the text: one automaton pass
#: over the line finds which of them it holds, where an ``in`` test per rule (~110) was most of a distinct line's
#: ~9 us in :func:`match_header`.
_HINTS = tuple((rule, required_text(rule.header.pattern, rule.header.flags)) for rule in RULES)
_HINT_TEXTS: Final = sorted({hint for _, hint in _HINTS if hint})
_HINT_INDEX: Final = {hint: i for i, hint in enumerate(_HINT_TEXTS)}
_RULE_HINTS: Final = tuple((rule, _HINT_INDEX[hint] if hint else -1) for rule, hint in _HINTS)
#: Standard, overlapping: every occurrence of every text is found.  A contiguous NFA: built in ~0.1 ms at the import,
#: where the default (a DFA for so few texts) took ~1.2 ms and searched a header line no faster (~1 us).
_HINT_SEARCH: Final = AhoCorasick(
    _HINT_TEXTS, matchkind=MatchKind.Standard, implementation=Implementation.ContiguousNFA
)


def _hints_held(body: str) -> bytearray:
    """Which of :data:`_HINT_TEXTS` ``body`` holds (a byte each: 1 held, 0 not)."""
    held = bytearray(len(_HINT_TEXTS))
    for index, _, _ in _HINT_SEARCH.find_matches_as_indexes(body, overlapping=True):
        held[index] = 1
    return held


@functools.lru_cache(maxsize=8192)
def match_header(body: str) -> tuple[Rule, re.Match[str]] | None:
    """The first rule whose header pattern is found in a line's body, or None.

    Cached: logs repeat their lines (a driver's warning in a loop, the same boot
    messages after every reboot), and a line that looks like a header but is not
    one would otherwise be tried against the whole table each time.
    """
    held = _hints_held(body)
    for rule, hint in _RULE_HINTS:
        if (hint < 0 or held[hint]) and (m := rule.header.search(body)) is not None:
            return (rule, m) if IGNORED.search(body) is None else None
    return None


#: A syslog line another program wrote (``Dec  7 10:00:00 host abrt-notification[812]: ...``): a report title in it is
#: a program quoting it (abrt's notice of the oops beside it), not a report.
_FOREIGN_SYSLOG: Final = rc.compile(log_prefix.FOREIGN_SYSLOG)
#: A field label in capitals alone before the header on a line without a kernel prefix (``TITLE: BUG: soft lockup in
#: f``, ``ALT: ...``: syzkaller's annotated test logs; a form or a summary quoting a title): no kernel message starts
#: so; a subsystem's own prefix before a header is lower case or more than one word (``watchdog: BUG:``, ``rcu:
#: INFO:``, ``NMI watchdog: BUG:``).
_FIELD_LABEL: Final = rc.compile(r"[A-Z][A-Z_]+: ")


def quotes_header(line: LogLine, match: re.Match[str]) -> bool:
    """Whether ``line``, where a header rule's ``match`` was found, only quotes a report's title: a syslog line of
    another program (:data:`_FOREIGN_SYSLOG`) or a field label before the header (:data:`_FIELD_LABEL`).

    Taken as a report, such a line made the real report beside it "occurrence 2" of a one-line report that read no
    fact (a user-space notice above the oops, ue22 #1), or a report of its own (the test log's ``TITLE:`` line).
    """
    if line.prefixed:
        return False  # the kernel's own prefix: its message
    text = line.text
    return _FOREIGN_SYSLOG.match(text) is not None or _FIELD_LABEL.fullmatch(line.body, 0, match.start()) is not None


def matching_rules(body: str, first: Rule) -> Iterator[tuple[Rule, re.Match[str]]]:
    """``first`` and every later rule whose header also matches (fallbacks when a report pattern is absent), in
    table order, each tried when asked for: the report builder mostly takes the first (the whole table after it
    tried at once was ~89,000 instructions a distinct header, 29 M of the shared corpus)."""
    for rule, hint in _HINTS[_RULE_INDEX[first.name] :]:
        if hint in body and (m := rule.header.search(body)) is not None:
            yield rule, m


_RULE_INDEX: Final = {rule.name: i for i, rule in enumerate(RULES)}


def _same_context(header: str | None, line: str | None, cpu_traceback: bool) -> bool:
    if line == _NO_PREFIX:
        # Text without the kernel's prefix amid prefixed lines (a fuzzer's program, user space
        # output on the console) is not part of the report.
        return header == _NO_PREFIX
    if header is None or line is None or header == _NO_PREFIX:
        return True
    if line == header:
        return True
    # While all CPUs are dumped ("Sending NMI from CPU"), lines of other CPUs belong to the report.
    return cpu_traceback and line.startswith("C")


_NO_PREFIX: Final = "-"  # context of a line that carries no kernel prefix at all


def line_context(line: LogLine) -> str | None:
    """The printk caller of a line, or ``"-"`` when the line has no kernel prefix."""
    return line.context if line.prefixed else _NO_PREFIX


#: The rules of lockdep's own splats: print_circular_bug() and its kin end with dump_stack(), never an oops's end
#: marker.  A ``---[ end trace`` line after such a splat's header is the end of a report whose printing raised it
#: (a BUG's oops, whose printk took console_owner under zone->lock: syzkaller's corpus log 352): it, and the
#: register summary and panic after it, are that report's, not the splat's (ue22 #4).
NO_END_MARKER_RULES: Final = frozenset(
    {"lockdep-circular", "lockdep-irq-inversion", "lockdep-irq-order", "lockdep-recursive", "lockdep-inconsistent"}
)


def report_extent(
    window: Sequence[LogLine],
    header_context: str | None,
    stop_at_headers: bool = True,
    kinds: list[int] | None = None,
    end_is_anothers: bool = False,
) -> tuple[list[LogLine], int, int]:
    """The report's own lines, the index of its last line in ``window`` and where scanning resumes.

    Scanning resumes at the first line the report did not take (a line of
    another CPU or task, or the next report's header).  ``kinds``, when given, receives the :func:`_line_kind` of
    each own line (for :func:`_corruption` and, since b1e85d6, the trace reader of the report's frames, which read
    them again by body otherwise: ~20 M instructions of the shared corpus for the first).  ``end_is_anothers``: the
    report prints no oops end marker (:data:`NO_END_MARKER_RULES`), so an ``---[ end trace`` line ends it before it.
    """
    own: list[LogLine] = [window[0]]
    if kinds is not None:
        kinds.append(_line_kind(own[0].body))
    where = [0]  # index in the window of each line of ``own``
    resume: int | None = None
    cpu_traceback = False
    seen_trace = False
    quiet = 0  # lines since the last one with report structure
    # By index, not an iterator over the window (islice, enumerate and the window's generator: ~700 instructions
    # a line more, compiled; ~46,000 lines of the shared corpus).  The same lines are read, in the same order; a
    # scanner's window's by its own method (see Window.line).
    win = window if isinstance(window, Window) else None
    for i in range(1, len(window)):
        line = win.line(i) if win is not None else window[i]
        context = line.context if line.prefixed else _NO_PREFIX  # line_context(), inlined: every line
        if context != header_context and not _same_context(header_context, context, cpu_traceback):
            if resume is None:
                resume = i
            continue
        body = line.body
        kind = _line_kind(body)
        if kind & _NMI:
            cpu_traceback = True
        if kind & _HEADER == _STARTS and stop_at_headers:
            break
        if kind & _END and end_is_anothers and "end trace" in body:
            break
        own.append(line)
        where.append(i)
        if kinds is not None:
            kinds.append(kind)
        if kind & _END and not _panic_follows(window, i, header_context, own):
            quiet = 0
            break
        if kind & _FRAME or (not seen_trace and kind & _OPENS):
            seen_trace = True
        if kind & _STRUCTURE:
            quiet = 0
        else:
            quiet += 1
            if quiet > (_TAIL_SLACK if seen_trace else _HEAD_SLACK):
                break
    if seen_trace and quiet:
        # The lines after the call trace that have no report structure are not part of it.
        del own[-quiet:], where[-quiet:]
        if kinds is not None:
            del kinds[-quiet:]
    end = where[-1]
    return own, end, end + 1 if resume is None else min(resume, end + 1)


#: How many lines below another report's header the frames of a trace it cut short are looked for (see
#: :func:`frames_below_cut`): an oops's registers, Code: and module list stand before its own stack (~30 lines).
CUT_TRACE_REACH = 100


def frames_below_cut(window: Sequence[LogLine], end: int, context: str | None) -> list[int]:
    """Indices in ``window`` of the frames of a call trace that another report's header cut short at
    ``window[end + 1]``: the frame lines of ``context`` between that header and the first stack start (or end marker,
    or further header) below it.

    Two CPUs printing at once without caller ids interleave their lines: an allocation failure's trace goes on
    between a general protection fault's header and its registers (corpus syzkaller-linux-dev 198: the failure's
    caller, xt_alloc_entry_offsets, 15 lines below the fault's header).  The report whose header cut in prints no
    frame before its own stack starts (its registers, Code:, modules), so the frames there are the cut trace's.
    None when the line after ``end`` starts no report.
    """
    stop = min(len(window), end + 2 + CUT_TRACE_REACH)
    if end + 1 >= stop or _line_kind(window[end + 1].body) & _HEADER != _STARTS:
        return []
    out = []
    for i in range(end + 2, stop):
        line = window[i]
        if line_context(line) != context:
            continue
        kind = _line_kind(line.body)
        if kind & (_OPENS | _END) or kind & _HEADER == _STARTS:
            break
        if kind & _FRAME:
            out.append(i)
    return out


#: The words of warn_alloc()'s header (an allocation failure's: the page allocator's, vmalloc's up to 5.12 and since
#: 5.13), see events.ALLOC_FAILURE and events.VMALLOC_FAILURE.
ALLOC_FAILURE_WORDS: Final = ("page allocation failure:", "vmalloc: allocation failure:", "vmalloc error:")
_ALLOC_HEADER: Final = rc.compile("|".join(map(re.escape, ALLOC_FAILURE_WORDS)))
#: warn_alloc()'s frame (warn_alloc_failed before 4.9; ".cold" split out by newer compilers).
_WARN_ALLOC_FRAME: Final = rc.compile(r"\bwarn_alloc(?:_failed)?(?:\.\w+)?\+0x")
#: How far below an allocation failure's header its warn_alloc frame is looked for: its header, the cpuset and
#: dump_stack's lines, and another report's lines printed at once between them.
_WARN_ALLOC_REACH: Final = 60


def foreign_trace(lines: Sequence[LogLine], trace: Sequence[Frame]) -> bool:
    """Whether ``trace``, read from an allocation failure's ``lines``, is another report's: it has no warn_alloc
    frame (every failure's trace since 3.1 has one) and another report's header stands among the lines (corpus
    syzkaller-linux-dev 218: a vmalloc failure printed between a WARNING and its panic, whose trace is the panic's)."""
    if not trace or any(_WARN_ALLOC_FRAME.search(f.function + "+0x") for f in trace):
        return False
    return any(_line_kind(x.body) & _HEADER for x in lines[1:])


def _without(own: Sequence[LogLine], kinds: Sequence[int], drop: set[int]) -> tuple[list[LogLine], list[int]]:
    """``own`` and its ``kinds`` without the lines at the indices ``drop``."""
    keep = [i for i in range(len(own)) if i not in drop]
    return [own[i] for i in keep], [kinds[i] for i in keep]


def alloc_failure_stacks(own: Sequence[LogLine], kinds: Sequence[int]) -> tuple[set[int], int | None]:
    """The indices in a report's ``own`` lines (``kinds``: of each) of the call traces of allocation failures
    printed among them, and the line number of the first such failure's header (None when there is none).

    Two tasks printing at once without caller ids interleave their lines: an allocation failure's header and its
    call trace land inside another report's extent (corpus syzkaller-linux-dev 206: a vmalloc failure's trace,
    dump_stack ... warn_alloc ... xt_alloc_entry_offsets, between a suspicious-RCU warning's header and its own
    stack).  The failure's trace is the stack that holds warn_alloc's frame below its header: from the stack start
    above that frame (or the header) to the next stack start, end marker or report header.  A failure whose
    warn_alloc frame is not in the lines has no trace to take (its lines cut off): the header alone is returned.
    """
    foreign: set[int] = set()
    first: int | None = None
    for k in range(1, len(own)):
        body = own[k].body
        # Every header word holds "alloc": a substring test passes over the other lines (the regex on each line of
        # every report cost the corpus x4 ~3.7% more instructions, as source).
        if "alloc" not in body or _ALLOC_HEADER.search(body) is None:
            continue
        first = own[k].number if first is None else first
        stop = min(len(own), k + 1 + _WARN_ALLOC_REACH)
        at = next((j for j in range(k + 1, stop) if kinds[j] & _FRAME and _WARN_ALLOC_FRAME.search(own[j].body)), None)
        if at is None:
            continue
        begin = next((j for j in range(at - 1, k, -1) if kinds[j] & _OPENS), k + 1)
        foreign.add(begin)
        for j in range(begin + 1, len(own)):
            if kinds[j] & (_OPENS | _END) or kinds[j] & _HEADER == _STARTS:
                break
            if kinds[j] & _FRAME:
                foreign.add(j)
    return foreign, first


# What _line_kind says of a line, as bits of a small int (a cached int object, where a tuple was ~100 bytes a distinct
# line held to the end of the run: 1.2 MiB of the corpus x4).  The header bits: none (0), a continuation, a report
# start.  Final: compiled, each is a constant where it is read, not a look-up in the module's dict (~1% of the
# shared corpus's instructions went to such look-ups of module names, mostly in the per-line functions).
_HEADER: Final = 3
_CONTINUES: Final = 1
_STARTS: Final = 2
_NMI: Final = 4  # an NMI backtrace marker
_END: Final = 8  # an end marker
# The frame, stack-start and marker bits are frames.TRACE_FRAME, TRACE_OPENS and TRACE_MARK (the same values, written
# out: a constant where it is read), so that a report's kinds are given to parse_trace as they stand.
_FRAME: Final = 16  # a frame
_OPENS: Final = 32  # a stack start
#: Report structure of any kind (a frame, a header or one of _STRUCTURAL's lines): it ends a quiet run.
_STRUCTURE: Final = 64
_MARK: Final = 128  # holds a text parse_trace's marker or exception pattern needs

#: :func:`_line_kind` by line body (see ``frames.LINES_REMEMBERED``).
_KINDS: Final[dict[str, int]] = {}


def _line_kind(body: str) -> int:
    """What :func:`report_extent` needs to know of one line's body, computed once per distinct body: its bits.

    Header (:data:`_HEADER`: 0, continuation, start), NMI backtrace marker, end marker, frame, stack start, report
    structure (a frame, a header, or another line :data:`_STRUCTURAL` matches, asked only of a line that is no frame
    and no header).  Remembered: frame lines and report boilerplate repeat from report to report of one kernel.
    """
    kind = _KINDS.get(body)
    return kind if kind is not None else remember(_KINDS, body, _line_kind_of(body))


def _trace_hints(body: str) -> int:
    """``frames.trace_hints(body)``, as :func:`_line_kind` remembers it (a dict look-up, where that is an automaton
    pass and four ``in`` tests)."""
    return _line_kind(body) & (_OPENS | _MARK)  # frames.TRACE_OPENS and TRACE_MARK


def _line_kind_of(body: str) -> int:
    """:func:`_line_kind`, not remembered."""
    seen = 0  # which of the words the tests below need the line holds: one automaton pass
    for word, _, _ in _KIND_SEARCH.find_matches_as_indexes(body, overlapping=True):
        seen |= _KIND_BITS[word]
    found = match_header(body) if seen & _HINT_WORD else None
    header = 0 if found is None else _STARTS if found[0].starts else _CONTINUES
    kind = header
    if seen & _NMI_WORD:
        kind |= _NMI
    if seen & _END_WORD and _END_MARKER.search(body) is not None:
        kind |= _END
    if seen & _FRAME_WORD and is_frame(body):
        kind |= _FRAME | _STRUCTURE
    elif header or _STRUCTURAL.match(body) is not None:
        kind |= _STRUCTURE
    if seen & _STACK_WORD and STACK_START.search(body) is not None:  # starts_stack(body)
        kind |= _OPENS
    if seen & _MARK_WORD:
        kind |= _MARK
    return kind


#: The registers x86's oops_end() prints again after the end marker (since "x86/dumpstack: Save first regs set for
#: the executive summary", 2018): RIP, Code, RSP, RAX ... R15, FS, CS, CR2, DR0-7, PKRU.
_SUMMARY: Final = rc.compile(r"^\s*(?:[A-Z][A-Z0-9]{1,3}|Code): ")
#: How many lines after an end marker are looked through for the panic: the summary's ~12 and some slack.
_SUMMARY_LINES: Final = 24


def _panic_follows(window: Sequence[LogLine], i: int, context: str | None, own: Sequence[LogLine]) -> bool:
    """Whether the next line of the report's context, past the registers oops_end() prints again, is a panic that
    continues it.

    ``Fatal exception`` (panic_on_oops), ``Fatal exception in interrupt`` (an oops in interrupt context) and
    ``Fatal machine check`` are oops_end()'s and the machine check handler's panic after the oops's end marker:
    the oops is the report, the panic its consequence (syzkaller's pkg/report keeps them in one report too).
    The summary's ``RIP:`` is the report's own (``own``, its lines so far): another's (an oops whose end another
    report's lines cut off, syzkaller's corpus log 352) is not this report's panic.
    """
    # One line at a time, up to the first that decides: the memo (detectors.dmesg.memo) compares a repeat's
    # bytes as far as the builder read them, and a slice would read them all.
    for j in range(i + 1, min(len(window), i + 1 + _SUMMARY_LINES)):
        line = window[j]
        if _same_context(context, line_context(line), False):
            body = line.body
            if "panic" in body:
                found = match_header(body)
                return found is not None and not found[0].starts
            if _SUMMARY.match(body) is None:
                return False
            if body.lstrip().startswith("RIP:") and all(mine.body != body for mine in own):
                return False  # the summary of another oops
    return False


# A line inside a report starts another report only if the scanner could have found it: through a
# trigger word, or as a header just above an oops counter or panic (arm faults, double faults).
_HEADER_HINTS = (
    *(word.decode() for word in TRIGGERS),
    "Unable to handle", "Unhandled fault", "Alignment trap", "Internal error", "PANIC", "fault", "error:", "Oops",
    "panicked at",
)  # fmt: skip


#: The words in one automaton on raw bytes, to pass over lines without parsing them (~170 us for 30 lines as a
#: regex alternation, 3.5 us this way).  Leftmost-first like the alternation; no word holds a newline, so every
#: line with a word has a match.
HEADER_HINT_SEARCH: Final = BytesAhoCorasick(
    [word.encode() for word in _HEADER_HINTS],
    matchkind=MatchKind.LeftmostFirst,
    implementation=Implementation.ContiguousNFA,
)


#: The words :func:`_line_kind` looks for (an automaton: a regex alternation of words is tried at every
#: character), each with the tests it serves (bits): the header hints (a line without one is not tried against
#: the rule table), the stack-start words (STACK_START's), the frame's ``+0x``, the end marker's ``---[`` and the
#: NMI backtrace's two phrases.  One overlapping pass finds every occurrence of every word, so a bit is set
#: exactly when one of its words is in the line: what the two automata (header hints, stack starts) and the four
#: ``in`` tests it replaces said, in one call a distinct line (~14,600 of the shared corpus).
_HINT_WORD: Final = 1
_STACK_WORD: Final = 2
_FRAME_WORD: Final = 4
_END_WORD: Final = 8
_NMI_WORD: Final = 16
_MARK_WORD: Final = 32
_KIND_WORDS: dict[str, int] = {}
for _words, _bit in (
    (_HEADER_HINTS, _HINT_WORD),
    (STACK_START_WORDS, _STACK_WORD),
    (("+0x",), _FRAME_WORD),
    (("---[",), _END_WORD),
    (("Sending NMI from CPU", "NMI backtrace for cpu"), _NMI_WORD),
    (("<", "--- interrupt: ", "Exception stack", "irq event stamp"), _MARK_WORD),  # frames.trace_hints's texts
):
    for _word in _words:
        _KIND_WORDS[_word] = _KIND_WORDS.get(_word, 0) | _bit
#: The default (a DFA), not a contiguous NFA as _HINT_SEARCH's: built in ~0.19 ms, not ~0.05, but its overlapping
#: search of a line takes ~1,000 instructions fewer (~14,600 distinct lines of the shared corpus x4).
_KIND_SEARCH: Final = AhoCorasick(list(_KIND_WORDS), matchkind=MatchKind.Standard)
_KIND_BITS: Final = tuple(_KIND_WORDS.values())


def _follow(
    lines: Sequence[LogLine], path: tuple[Step, ...], with_frames: bool = True, kinds: Sequence[int] | None = None
) -> tuple[list[str], list[Frame]]:
    """Candidate functions met along one step path (as far as it can be followed), and trace frames (none made
    without ``with_frames``).  ``kinds``: :func:`_line_kind` of each line, when the caller has them (a report's own
    lines, from :func:`report_extent`): the call traces are read without a look-up by body a line."""
    names: list[str] = []
    frames: list[Frame] = []
    pos = 0
    for step in path:
        if step.trace:
            if not with_frames:
                pos = trace_names(lines, pos, names, _trace_hints, kinds)
                continue
            got, pos = parse_trace(lines, pos, _trace_hints, kinds, stack_at(lines, pos, _trace_hints, kinds))
            frames.extend(got)
            names.extend(f.function for f in got if f.reliable)
            continue
        assert step.anchor is not None
        if step.only_if is not None and not any(step.only_if.search(x.body) for x in lines):
            break
        search, hint = step.anchor.search, step.hint
        for j in range(pos, len(lines)):
            body = lines[j].body
            # any() of a generator: compiled, a loop of ``in`` tests (not a map of a bound method, called per word).
            if hint and not any(word in body for word in hint):
                continue  # no word every match holds: the search would find nothing
            m = search(body)
            if m is not None:
                if m.lastindex and m.group(1):
                    names.append(function_name(m.group(1)))
                pos = j + 1
                break
        else:
            break  # the rest of this path is not in the report
    return names, frames


def guilty_frame(
    lines: Sequence[LogLine], spec: StackSpec, kinds: Sequence[int] | None = None
) -> tuple[str | None, list[Frame]]:
    """The guilty function by the rule's stack spec, and the frames seen on the way.

    Each step path is followed as far as the report allows; the first path that
    yields a frame outside the skip lists wins.  ``kinds``: as for :func:`_follow`.
    """
    seen: list[Frame] = []
    skips = skip_matcher(spec.skip)
    for path in spec.paths:
        names, frames = _follow(lines, path, True, kinds)
        seen = seen or frames
        if spec.extractor == "stall":
            frame = stall_frame([n for n in names if not skips.skipped(n)])
        elif spec.extractor == "hung":
            frame = hung_frame([n for n in names if not skips.skipped(n)] or names)
        else:
            frame = next((n for n in names if not skips.skipped(n)), None)
        if frame is not None:
            return title_name(frame), frames
    return None, seen


def first_unskipped(lines: Sequence[LogLine], spec: StackSpec, kinds: Sequence[int] | None = None) -> str | None:
    """``guilty_frame(lines, spec._replace(extractor="first"))``'s function: the first function outside the skip
    lists along the first path that has one, read without the frames' records (nor the spec's copy)."""
    skips = skip_matcher(spec.skip)
    for path in spec.paths:
        names, _ = _follow(lines, path, False, kinds)
        frame = next((n for n in names if not skips.skipped(n)), None)
        if frame is not None:
            return title_name(frame)
    return None


def _corruption(
    rule: Rule, title: str, text: str, lines: Sequence[LogLine], frames: int, header_at: int, kinds: Sequence[int]
) -> str | None:
    """Why the report cannot be trusted, or None.

    ``frames``: how many frames the report's stacks hold; ``header_at``: where the
    header starts in the first line (text before it, a login prompt, is not the report's); ``kinds``: of each line,
    as :func:`report_extent` gives them (:func:`_line_kind`: whether it opens a stack, whether it is a frame).
    """
    if rule.corrupted:
        return "the header is damaged or incomplete"
    if _TIMESTAMP_IN_TITLE.search(title):
        return "a timestamp is merged into the title"
    if lines and _TIMESTAMP_IN_TITLE.search(lines[0].body, header_at):
        return "another line's output is merged into the header line"
    if not rule.needs_trace:
        return None
    if (
        not frames
        and "Call Trace" not in text
        and "Call trace" not in text
        and "acktrace" not in text
        # 32-bit arm prints its frames ("[<pc>] (f) from [<lr>] (g+0x1/0x2)") with no heading.
        and not any(") from [<" in line.body and is_frame(line.body) for line in lines)
    ):
        return "no call trace in the report"
    for i, kind in enumerate(kinds):
        if not kind & _OPENS:
            continue
        for j in range(i + 1, min(i + 16, len(lines))):
            if kinds[j] & _OPENS:
                break
            # A heading with no frames on purpose: a task's stack that cannot be read, or the same as another
            # task's the dump printed above (show_state()'s "<Same stack as pid N>", 4.4 Android/ChromeOS kernels).
            body = lines[j].body
            if kinds[j] & _FRAME or "(stack is not available)" in body or "<Same stack as pid " in body:
                break
        else:
            return "no frames in a call trace"
    return None


def _context_fields(text: str) -> dict[str, object]:
    """What a report's lines say of its CPU, task, taint, release and hardware; ``text``: their bodies joined by
    newlines.  The first line holding ``CPU: `` that the CPU pattern matches gives the first five, the first
    holding ``Hardware name: `` with a name after it the last: each found by a search of the joined bodies, not an
    ``in`` test a line (~40 lines a report before the two, ~18 M instructions of the corpus x4)."""
    fields: dict[str, object] = {}
    at = text.find("CPU: ")
    while at >= 0:
        body, end = _line_around(text, at)
        if (m := _CPU_LINE.search(body)) is not None:
            cpu, pid = log_dec(m.group(1)), log_dec(m.group(2))
            fields["cpu"] = cpu if cpu is not None else NotAvailable(past_64_bits(m.group(1)))
            fields["pid"] = pid if pid is not None else NotAvailable(past_64_bits(m.group(2)))
            fields["comm"] = m.group(3).strip()
            taint = taint_letters(body)
            if taint is not None:
                fields["taint"] = taint
            if r := _RELEASE.search(body):
                fields["release"] = r.group(1)
            break
        at = text.find("CPU: ", end)
    at = text.find("Hardware name: ")
    while at >= 0:
        body, end = _line_around(text, at)
        if (hardware := _hardware_name(body)) is not None:
            fields["hardware"] = hardware
            break
        at = text.find("Hardware name: ", end)
    return fields


def _blocked_task(header: str, fields: dict[str, object]) -> None:
    """A hung task's identity in ``fields`` (:func:`_context_fields`'): the task its header names, on no CPU.

    The task sleeps (state D): the kernel prints its stack with sched_show_task(), which prints no "CPU:" line.
    Every "CPU: N PID: P Comm: C" line of the report is another task's: khungtaskd's own (its NMI backtrace, the
    "Kernel panic - not syncing: hung_task" that follows), or whatever ran on the other CPUs when khungtaskd had
    them dump their stacks (syzkaller's log 254 named syz-executor491, printing to the serial console on CPU 0,
    as the task blocked: init).  Those lines' taint, release and hardware are the machine's and stay.
    """
    fields["cpu"] = NotAvailable("a blocked task runs on no CPU (the report's CPU: lines are other tasks')")
    m = _BLOCKED_TASK.search(header)
    pid = None if m is None else log_dec(m.group(2))
    if m is None or pid is None:
        fields["pid"] = NotAvailable("the header does not name the blocked task")
        fields["comm"] = NotAvailable("the header does not name the blocked task")
        return
    fields["pid"], fields["comm"] = pid, m.group(1)


def _line_around(text: str, at: int) -> tuple[str, int]:
    """The line of ``text`` (lines joined by newlines) that holds offset ``at``, and where it ends."""
    end = text.find("\n", at)
    end = len(text) if end < 0 else end
    return text[text.rfind("\n", 0, at) + 1 : end], end


def _hardware_name(body: str) -> str | None:
    r"""``_HARDWARE.search(body).group(1)``, or None: the text after the first ``Hardware name: `` without its
    trailing white space, when that leaves some and the line has no newline (the pattern's lazy group tries
    ``\s*$`` after each character: ~2.5 us a line); else the pattern's own answer."""
    at = body.find("Hardware name: ")
    if at < 0:
        return None
    name = body[at + 15 :].rstrip()  # \s is what str.isspace() says, as for rstrip
    if name and "\n" not in body:
        return name
    m = _HARDWARE.search(body)
    return None if m is None else m.group(1)


def signature(title: str, frame: str | None) -> str:
    """Stable identity of a bug: the same for repeats of one report, independent of addresses and times."""
    return hashlib.sha256(f"{title}\x1f{frame or ''}".encode()).hexdigest()[:16]


#: Where a report without a trustworthy frame was raised: a WARNING's ``at FILE:LINE`` (__warn()), else the function
#: of its ``RIP:`` (x86 show_regs(), without the offset).
_SITE: Final = rc.compile(r" at (\S+\.[chS]:\d+)|RIP: [0-9a-f]{4}:(?:\[<[0-9a-f]+>\] )?([A-Za-z_][\w.]*)")


def _site(text: str) -> str:
    """The site of a report whose title names no culprit ("WARNING in corrupted"), for its signature: two such
    reports of different sites (workqueue.c:1726, page_alloc.c:4402) were one bug counted twice.  Empty when the
    report names none (its repeats still group by title)."""
    m = _SITE.search(text)
    return "" if m is None else "\x1e" + (m.group(1) or m.group(2))


def _format_title(rule: Rule, header: re.Match[str], text: str, frame: str | None) -> tuple[str | None, str | None]:
    """The title and the culprit function, or (None, None) when the rule's report pattern is absent.

    When the report pattern names the culprit (``in {r1}``) but that function is
    infrastructure (a lock or wait primitive), the guilty frame of the stack is
    used instead; when the stack gives nothing, the report pattern's function is.
    """
    # Offsets (+0x1f/0x40) never belong in a title: they change with every build.
    values = {f"h{i}": sanitize(g or "") for i, g in enumerate(header.groups(), 1)}
    if rule.report is not None:
        m = rule.report.search(text)
        if m is None:
            return None, None
        values.update({f"r{i}": (g or "") for i, g in enumerate(m.groups(), 1)})
        named = values.get("r1", "")
        if rule.title.endswith("{r1}"):
            # The first function the report names that is not infrastructure, else the stack's.
            skip = skip_matcher(rule.stack.skip if rule.stack else ())
            names = [function_name(g) for g in m.groups() if g]
            chosen = next((n for n in names if not skip.search(n)), None)
            values["r1"] = title_name(chosen) if chosen else frame or named
            frame = values["r1"] or frame
        elif frame is None and named and "{frame}" in rule.title and _SYMBOL.fullmatch(named):
            frame = function_name(named)
    if frame is None and (named_in_header := re.search(r" in \{(h\d)\}$", rule.title)):
        # The header itself names the culprit (stack-protector's "corrupted in: func").
        culprit = values[named_in_header.group(1)]
        frame = culprit if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", culprit) else None
    values["frame"] = frame or "corrupted"
    try:
        return rule.title.format(**values).rstrip(), frame
    except (KeyError, IndexError):
        return None, None


def build_report(
    window: Sequence[LogLine], rule: Rule, header: re.Match[str], past: int | None = None
) -> tuple[KernelReport, int] | None:
    """The report that starts at ``window[0]``, and the index in ``window`` where scanning resumes.

    None when the report reaches line ``past`` of the window: it may go on after the window's end, and the
    caller builds it from a longer window (the frames, title and fields of the short one would be thrown away).
    """
    head = window[0]
    kinds: list[int] = []
    own, end, resume = report_extent(
        window, line_context(head), kinds=kinds, end_is_anothers=rule.name in NO_END_MARKER_RULES
    )
    if past is not None and end >= past:
        return None
    text = "\n".join(line.body for line in own)
    corrupted_reason: str | None = None
    frame: str | None = None
    trace: list[Frame] = []
    rest: Sequence[LogLine] = ()
    # An allocation failure's call trace printed among the report's lines (no caller ids) is not its stack: the
    # frames are read from the other lines (the failure is an event of its own, see events.build_event).
    foreign, failure = alloc_failure_stacks(own, kinds) if rule.stack is not None else (set(), None)
    mine, my_kinds = (own, kinds) if not foreign else _without(own, kinds, foreign)
    if rule.stack is not None:
        frame, trace = guilty_frame(mine, rule.stack, my_kinds)
        if frame is None and head.context is not None:
            # With caller prefixes the lines of this CPU or task that follow another report's header
            # still belong to this report's stack (the other report is another CPU's or interleaved), as
            # syzkaller's pkg/report reads them: the report of a context runs on past a second report.
            rest, _, _ = report_extent(window, line_context(head), stop_at_headers=False)
            frame, trace = guilty_frame(rest, rule.stack)
        if not trace:
            trace = _all_frames(mine, my_kinds)
    else:
        trace = _all_frames(own, kinds)
    title = None
    for candidate, match in matching_rules(head.body, rule):
        if candidate.report is not None and candidate.report.search(text) is None:
            continue  # this rule needs lines the report does not have; try the next one
        if candidate is not rule and candidate.name.endswith("-generic"):
            break  # a catch-all says less than the specific rule's "... in corrupted"
        if candidate is not rule:
            rule, header = candidate, match
            if rule.stack is not None:
                frame, trace = guilty_frame(mine, rule.stack, my_kinds)
                rest = ()  # the frame is read from the report's own lines
        title, frame = _format_title(rule, header, text, frame)
        break
    if title is None:
        # The lines that name the culprit were cut off or interleaved with other output.
        groups = {f"h{i}": (g or "").strip() for i, g in enumerate(header.groups(), 1)}
        groups.update({f"r{i}": "" for i in range(1, 10)})
        prefix, cut, _ = rule.title.partition(" in {")
        title = " ".join(prefix.format(**groups).split()) + (" in corrupted" if cut else "")
        frame = None
        corrupted_reason = "the report is cut off before the lines that name the culprit"
    elif _fault_injection_before(trace, frame):
        # A fault injection stack is interleaved with the report: no frame can be trusted.
        title = title.replace(f" in {frame}", " in corrupted") if frame else title
        frame = None
        corrupted_reason = "a fault injection stack (should_fail) is mixed into the report"
    elif rule.stack is not None and frame is None and failure is not None:
        corrupted_reason = (
            f"the call trace among its lines is the allocation failure's printed with them (line {failure}, its "
            "warn_alloc frame; no caller ids tell the two tasks' lines apart): its own stack is not in the log"
            if foreign
            else f"its frames are not told apart from those of the allocation failure printed among its lines "
            f"(line {failure}; no caller ids tell the two tasks' lines apart)"
        )
    elif rule.stack is not None and frame is None:
        corrupted_reason = "no frame of the call trace can be trusted"
    if corrupted_reason is None:
        corrupted_reason = _corruption(rule, title, text, own, len(trace), header.start(), kinds)
    fields = _context_fields(text)
    if rule.name in BLOCKED_TASK_RULES:
        _blocked_task(head.body, fields)
    panicked = "Kernel panic - not syncing" in text  # the bodies joined: one search, not one a line (no newline in it)
    taint = fields.get("taint")
    # The first and the last time, looked for from each end: compiled, a list of them boxed every float again (a new
    # object a line, ~26,000 of the shared corpus x4).
    start_time: float | None = None
    for line in own:
        if (start_time := line.timestamp) is not None:
            break
    end_time: float | None = None
    for line in reversed(own):
        if (end_time := line.timestamp) is not None:
            break
    # A log stamped with dated wall-clock times only: the report's time is its first line's (a printk time wins).
    start_wall, zone_unknown, untimed = wall_time(head, own, start_time is not None)
    # A stall's culprit from the lines its frame was read from: past another report's header, its CPU's.
    culprit = _culprit(rest, rule, frame, None) if rest else _culprit(mine, rule, frame, my_kinds)
    report = KernelReport(
        title=title,
        kind=rule.kind,
        severity=rule.severity,
        rule=rule.name,
        corrupted=corrupted_reason is not None,
        corrupted_reason=corrupted_reason,
        frame=culprit
        or NotAvailable(
            corrupted_reason if failure is not None and corrupted_reason else "no trustworthy frame in the report"
        ),
        trace=tuple(trace),
        cpu=_int_or_na(fields.get("cpu"), "no CPU: line in the report"),
        pid=_int_or_na(fields.get("pid"), "no PID in the report"),
        comm=_str_or_na(fields.get("comm"), "no Comm: in the report"),
        taint=taint if isinstance(taint, str) else NotAvailable("no Tainted: field in the report"),
        taint_flags=decode_taint(taint) if isinstance(taint, str) else (),
        kernel_release=_str_or_na(fields.get("release"), "the report does not print the kernel release"),
        hardware=_str_or_na(fields.get("hardware"), "no Hardware name: line in the report"),
        start_time=start_time if start_time is not None else untimed,
        end_time=end_time if end_time is not None else untimed,
        start_line=head.number,
        end_line=window[end].number,
        header=head.text,
        lines=_numbered_texts(own),
        context=head.context,
        panicked=panicked,
        signature=signature(title, frame if frame is not None else _site(text)),
        boot_time=next((x.wall - x.timestamp for x in own if x.wall is not None and x.timestamp is not None), None),
        frame_past=_frame_past(rest, own, culprit),
        start_wall=start_wall,
        wall_zone_unknown=zone_unknown,
    )
    keep_parsed(report, own)
    return report, resume


#: The reason a report (or event) has no time since boot: its lines have none, or only a dated wall-clock time
#: (``start_wall``).
UNTIMED: Final = NotAvailable("the log has no timestamps")
#: Syslog's and ``journalctl -k``'s short forms ("Dec 07 07:05:23.004511 host kernel:"): a time without its year
#: (RFC 3164), in the host's zone, which the line does not name: no date and no time since boot, but a time.
YEARLESS: Final = NotAvailable(
    "its syslog time has no year (syslog's and journalctl's short format: the time as printed is in its lines, in "
    "the host's zone, which the log does not name): neither a date nor a time since boot"
)
_YEARLESS_PREFIX: Final = rc.compile(f"(?:{log_prefix.SHORT}) \\S+ kernel:")


def untimed_reason(text: str) -> NotAvailable:
    """Why a report whose first line is ``text`` has no time: a year-less syslog time (:data:`YEARLESS`), else
    none at all (:data:`UNTIMED`)."""
    return YEARLESS if text[:1].isupper() and _YEARLESS_PREFIX.match(text) is not None else UNTIMED


WALL_ONLY: Final = NotAvailable("the log's lines carry wall-clock times only (start_wall), no time since boot")


def wall_time(head: LogLine, own: Sequence[LogLine], timed: bool) -> tuple[float | None, bool, NotAvailable]:
    """A report's (or an event's) time in a log stamped with dated wall-clock times only: its first line's that has
    one (None where ``timed``, its lines have a printk time, which wins), whether that time names no zone
    (:func:`detectors.dmesg.lines.wall_zone_unknown`), and why it has no time since boot (:data:`WALL_ONLY`, else
    :func:`untimed_reason` of its first line ``head``)."""
    walled = None if timed else next((x for x in own if x.wall is not None), None)
    if walled is None:
        return None, False, untimed_reason(head.text)
    return walled.wall, wall_zone_unknown(walled.text), WALL_ONLY


def _numbered_texts(own: list[LogLine]) -> tuple[tuple[int, str], ...]:
    """Each line's number and text (``line[:2]``), as a report lists them, read as the objects they are: compiled,
    ``(line.number, line.text)`` unboxed the number and boxed it again as a new int (~26,000 of the shared corpus x1,
    held by the reports)."""
    pairs: list[object] = []
    for line in own:
        item = cast("tuple[object, ...]", line)
        pairs.append((item[0], item[1]))
    return cast("tuple[tuple[int, str], ...]", tuple(pairs))


def _frame_past(rest: Sequence[LogLine], own: Sequence[LogLine], frame: str | None) -> tuple[int, str] | None:
    """The line past the report's own lines its guilty frame was read from, as ``KernelReport.frame_past`` (its
    offset from the header and its text as printed, time stamp and prefixes included, as a report's own lines).

    ``rest``: the lines of the report's CPU or task read past another report's header when its own lines gave
    no frame (empty otherwise): the first of them, not one of its own, that prints the frame as it is named
    (``__x64_sys_X+0x``, ``X.part.0+0x``), else within a longer name the title shortens
    (``smp_call_function_single+0x``).
    """
    if frame is None or not rest:
        return None
    first, mine = own[0].number, {line.number for line in own}
    past = [(line, line.body.find(frame)) for line in rest if line.number not in mine]
    for exact in (True, False):
        for line, at in past:
            body = line.body
            if at >= 0 and (body.startswith(("+0x", "."), at + len(frame)) if exact else "+0x" in body[at:]):
                return line.number - first, line.text  # as printed: its time stamp cited with it
    return None


def _culprit(lines: Sequence[LogLine], rule: Rule, titled: str | None, kinds: Sequence[int] | None) -> str | None:
    """The guilty function: the frame the title names, except for stalls and lockups.

    A stall's title names the operation that loops (the frame above the
    dispatch point, so that one bug gets one title wherever the CPU was caught);
    its culprit is where the CPU was found looping, the first frame that is not
    infrastructure.
    """
    if titled is None or rule.stack is None or rule.stack.extractor != "stall":
        return titled
    return first_unskipped(lines, rule.stack, kinds) or titled


def _fault_injection_before(trace: Sequence[Frame], frame: str | None) -> bool:
    """Whether a reliable should_fail frame comes before the guilty frame (fault injection interleaved)."""
    if frame not in {f.function for f in trace if f.reliable}:
        return False  # the culprit came from the header or the RIP line, before any frame
    for f in trace:
        if f.reliable and f.function.startswith("should_fail"):
            return True
        if f.reliable and f.function == frame:
            return False
    return False


def _all_frames(lines: Sequence[LogLine], kinds: Sequence[int]) -> list[Frame]:
    """The frames of the first call trace of a report's own lines (``kinds``: of each, as report_extent gives them)."""
    for i, kind in enumerate(kinds):
        if kind & _OPENS:
            return parse_trace(lines, i + 1, _trace_hints, kinds)[0]
    for i, line in enumerate(lines):
        # 32-bit arm prints its frames with no heading after the stack dump.
        if ") from [<" in line.body and kinds[i] & _FRAME:
            return parse_trace(lines, i, _trace_hints, kinds)[0]
    return []


def _int_or_na(value: object, why: str) -> int | NotAvailable:
    if isinstance(value, NotAvailable):
        return value  # a number past 64 bits: its own reason
    return value if isinstance(value, int) else NotAvailable(why)


def _str_or_na(value: object, why: str) -> str | NotAvailable:
    return value if isinstance(value, str) and value else NotAvailable(why)
