"""Streaming over a kernel log: find report headers fast, parse deeply only around them.

The scanner takes the log as byte chunks of any size and keeps a bounded
buffer: the lines not yet looked at, plus a short look-back.  One
multi-word search (:data:`detectors.dmesg.rules.TRIGGERS`) skips
ordinary text at SIMD speed; only the line it hits is decoded and tried against the rule
table, and only a real header makes the scanner cut a window of up to
:data:`MAX_REPORT_LINES` lines and build the report.  Memory does not grow
with the input: a line longer than :data:`MAX_LINE_BYTES` is cut (the rest of
it is dropped) and the window never holds more than :data:`MAX_WINDOW_BYTES`.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from typing import Final

from ahocorasick_rs import BytesAhoCorasick, Implementation, MatchKind

from detectors.dmesg.events import (
    KILLED,
    MEM_INFO,
    ONE_LINE_WORDS,
    alloc_failure,
    build_event,
    build_one_line_event,
    find_event_header,
)
from detectors.dmesg.extract import (
    ALLOC_FAILURE_WORDS,
    HEADER_HINT_SEARCH,
    build_report,
    match_header,
    quotes_header,
)
from detectors.dmesg.lines import LogLine, Window, parse_line, parse_raw, wall_zone_unknown
from detectors.dmesg.memo import DIGITS_AS_ZERO, MAX_FULL_LINES, ReportMemo
from detectors.dmesg.repeat import line_numbers
from detectors.dmesg.rules import TRIGGERS, Rule
from forensics import regexcache as rc
from forensics.types.dmesg import KernelReport, ReportKind

MAX_REPORT_LINES: Final = MAX_FULL_LINES  # 1000: the full window, which the memo's look-up in place knows too
FIRST_WINDOW_LINES: Final = 120  # most reports end within this; a longer one gets the full window
MAX_WINDOW_BYTES: Final = 512 * 1024
MAX_LINE_BYTES: Final = 64 * 1024
LOOKBACK_LINES: Final = 64
MAX_DIRECT: Final = 4096  # header layouts remembered for the memo's fast look-up
HEADER_LOOKBACK: Final = 30  # lines above a continuation (Oops:, a panic) searched for its header
PREAMBLE_BYTES: Final = 2048  # bytes above a header searched for the lines that belong to it (KernelReport.preamble)
PREAMBLE_LINES: Final = 6
#: How many distinct preambles a scanner remembers (LogScanner._preambles; emptied when full): ~2 KB each.
PREAMBLES_REMEMBERED: Final = 1024
_PREAMBLE_WORDS: Final = (
    b"cut here",
    b"corruption",
    b"refcount_t:",
    b"double add",
    b"kasan: ",
    b"ssertion failed: ",
    b"Trigger a crash",
)
#: Whether any of them is above a header: one automaton pass (~2 us for the 2 KB; five ``in`` tests took ~20 us).
_PREAMBLE_SEARCH: Final = BytesAhoCorasick(
    list(_PREAMBLE_WORDS), matchkind=MatchKind.LeftmostFirst, implementation=Implementation.ContiguousNFA
)
#: A message printed above its report's header without a "cut here" line between them.
#: A filesystem's ASSERT() prints its condition, then BUG()s: btrfs "assertion failed: cond, in file.c:436" (above
#: "cut here"), XFS "XFS: Assertion failed: cond, file: fs/xfs/x.c, line: 42".  A kasan: message only as the
#: line's own message (after its time, syslog's "kernel: " or a level): "page dumped because: kasan: bad access
#: detected" ends a KASAN report's page dump, above whatever header follows it.  SysRq-c's "sysrq: Trigger a crash"
#: ("SysRq : Trigger a crash" before v4.9) is printed just above the crash it requests: the line that says so.
_PREAMBLE_MESSAGE: Final = rc.compile(
    rb"list_(?:add|del) corruption|list_add double add|refcount_t: |(?:^|\] |kernel: |>)kasan: |[Aa]ssertion failed: "
    rb"|[Ss]ys[Rr]q ?: Trigger a crash"
)


#: Rate limiting's words: ``___ratelimit()``'s "NAME: N callbacks suppressed" (lib/ratelimit.c; net_ratelimit's,
#: __warn_printk's), old printk_ratelimit's "printk: N messages suppressed.": the messages after such a line are
#: fewer than the kernel meant to print, so every count of the log is a lower bound (:attr:`LogScanner.suppressed`).
_SUPPRESSED_WORDS: Final = (b"callbacks suppressed", b"messages suppressed")
_SUPPRESSED: Final = rc.compile(r"(\S+:? \d+ (?:callbacks|messages) suppressed)")
_SUPPRESSED_KEPT: Final = 8  # the lines kept to cite; the rest are counted
#: The RTC's reading at boot (drivers/rtc/class.c rtc_hctosys): "rtc_cmos 00:00: setting system clock to
#: 2026-12-07T08:00:03 UTC (1796025603)", the seconds since the epoch the kernel set its clock to, at the line's printk
#: time: the boot's wall-clock time, read (:attr:`LogScanner.boot_clocks`).
_CLOCK_WORDS: Final = (b"setting system clock to ",)
_CLOCK_SET: Final = rc.compile(r"setting system clock to .{8,40} UTC \((\d{1,12})\)")
#: Whether KASLR is on in a boot: ``nokaslr`` on its command line, the "Kernel Offset: ..." line a panic prints
#: (arch/x86/kernel/setup.c dump_kernel_offset: "disabled", or the offset).  Read once per boot, for all its reports
#: (:attr:`LogScanner.kaslr`; the lines inside a report are its reading's, detectors/dmesg/findings.py).
_KASLR_WORDS: Final = (b"nokaslr", b"Kernel Offset: ")
#: The command-line words that say how a boot ends after an oops the kernel printed no panic for: ``oops=panic`` and
#: ``panic_on_oops`` (oops_end() then goes down: crash_kexec() to a loaded capture kernel, which prints no "Kernel
#: panic" line, else panic()), ``elfcorehdr=`` (kexec gives it to the capture kernel: that boot is kdump's, so the
#: one before it went down).  Kept as (line, text) (:attr:`LogScanner.command_lines`; detectors/dmesg/aftermath.py).
_COMMAND_WORDS: Final = ("oops=panic", "panic_on_oops", "elfcorehdr=")
#: A line with nothing to read: blank, or a printk stamp (and prefixes) with no message (:attr:`LogScanner.boot_tails`).
_STAMP_ONLY: Final = rc.compile(r"\s*(?:<\d+>)?(?:\[[^\]]*\]\s*)*")
_TAIL_LINES: Final = 8  # the blank lines passed over, at most, for the last line with text of a boot


#: Every trigger word in one automaton: ahocorasick_rs (Rust's aho-corasick crate, whose SIMD "Teddy" prefilter
#: looks at 16-32 bytes a step) finds them ~17x faster than the seven regex passes of one literal anchor byte
#: each that it replaced (0.026 s instead of 0.45 s on the benchmark's 100 MB console log).  Leftmost-first,
#: non-overlapping matches lose no line: a word that overlaps an earlier match lies on the same line (no word
#: holds a newline), and a line is all the scanner takes from a hit.
_TRIGGER_SEARCH: Final = BytesAhoCorasick(
    [
        *TRIGGERS,
        *(w.encode() for w in ALLOC_FAILURE_WORDS),
        *(w.encode() for w in ONE_LINE_WORDS),
        *_SUPPRESSED_WORDS,
        *_CLOCK_WORDS,
        *_KASLR_WORDS,
        *(w.encode() for w in _COMMAND_WORDS),
    ],
    matchkind=MatchKind.LeftmostFirst,
)
#: What a log says before a reboot that was asked for or follows a crash already reported, and systemd's
#: last targets (``Reached target`` is then read to the end of its line), found in one automaton pass.
_REBOOT_WORDS: Final = (
    b"Kernel panic", b"reboot: ", b"Restarting system", b"Power down", b"kexec", b"sysrq: ",
    b"Starting crashdump kernel", b"Rebooting in", b"Oops", b"BUG:", b"WARNING:", b"systemd-shutdown",
    # die()'s headers that carry no "Oops"/"BUG:" word (x86's BUG_ON, GPF, other traps): with oops=panic or kdump the
    # boot goes down on them, and a log of that boot's kern.log shows no panic line before the next banner.
    b"kernel BUG at", b"general protection fault", b"invalid opcode: ", b"stack segment: ", b"divide error: ",
    b"double fault",
)  # fmt: skip
_REACHED_TARGET: Final = len(_REBOOT_WORDS)
#: Contiguous NFAs (this one, the preamble's): searches of a few kilobytes, whose automata are built at every start
#: (~0.03-0.06 ms each, half as long as the default DFA's).
_REBOOT_SEARCH: Final = BytesAhoCorasick(
    [*_REBOOT_WORDS, b"Reached target"], matchkind=MatchKind.LeftmostFirst, implementation=Implementation.ContiguousNFA
)
_REBOOT_TARGET: Final = rc.compile(rb"Reached target.*(?:Reboot|Shutdown)")
_NEAR_BYTES: Final = 1024  # the bytes just above a boot banner, searched first for a reason
_ALLOC_TOKEN: Final = b"allocation failure"  # LogScanner._event's token for an allocation failure's header


def _memory_token(body: str) -> bytes | None:
    """What a memory event's line holds (LogScanner._event's token): Mem-Info: (its header above), an OOM kill (b""),
    an allocation failure's header (:data:`_ALLOC_TOKEN`); None for another line."""
    if MEM_INFO in body:
        return b"Mem-Info:"
    if "Killed process" in body:
        return b""
    return _ALLOC_TOKEN if alloc_failure(body) is not None else None


#: Kinds of report that never start the report of a continuation line found below them.
_NOT_ABOVE: Final = (ReportKind.PANIC, ReportKind.REBOOT)
_RAW_STAMP: Final = rc.compile(rb"\[\s*(\d+)\.(\d+)\]")
_COUNT_STEP: Final = 1024  # bytes between the marks of a count to the scan's end (LogScanner._line_at_end)
_TYPICAL_LINE: Final = 160  # bytes per line assumed when cutting a window (grown when lines are longer)
#: Lines split for the windows kept above the first line of the latest window (see LogScanner._split_upto): more than
#: a window's look-back reaches (LOOKBACK_LINES), so that the lines above a header are among them.
_SPLIT_KEPT: Final = 2 * LOOKBACK_LINES


#: A boot banner's release: ``Linux version 6.1.192 (builder@host) (gcc ...) #1 SMP ...``.
_BANNER: Final = rc.compile(r"Linux version (\S+) \(")
#: The printk time of a boot's first lines: start_kernel prints the banner, then the early setup, at 0.000000.
#: A run of such lines after a line with a later time starts a boot, whether or not the log holds its banner.
_BOOT_STAMP: Final = b"[    0.000000]"  # printk pads the seconds to five places
_BOOT_SEARCH: Final = BytesAhoCorasick([_BOOT_STAMP])
_BOOT_STAMP_WITHIN: Final = (
    96  # bytes from a line's start its printk time may stand at (after a syslog or level prefix)
)


class LogScanner:
    """Incremental report finder: :meth:`feed` chunks, then :meth:`close`; both return reports."""

    def __init__(self) -> None:
        self._buf = b""
        self._line0 = 1  # line number of the first line in _buf
        self._pos = 0  # where the prefilter search resumes in _buf
        # Up to where (a byte of _buf) the lines are a built report's: only an allocation failure's header there is
        # looked at (see _inside); past _pos only while such an event waits for more input.
        self._inside_until = 0
        self._event_claimed: set[int] = set()  # of _claimed, the lines an event took (a report's may hold an event)
        self._cut_line = False  # inside an over-long line whose rest is dropped
        self._claimed: set[int] = set()  # lines taken by a report, not to be scanned again
        self._last_end = 0  # last line of the last report built
        # The lines _preamble_lines chose above a header, by what they depend on (see _remembered_preamble).
        self._preambles: dict[tuple[bytes, bool, str | None, int], tuple[tuple[int, str], ...]] = {}
        self._count_off = 0
        self._count_line = 1
        self._end_at = -1  # the scan's end for which _end_line is the line number (-1: none; reset each scan)
        self._marks: list[int] = []  # line numbers every _COUNT_STEP bytes from _marks_at to _end_at (see _line_at_end)
        self._marks_at = 0
        self._end_line = 0
        self.lines_seen = 0
        self.bytes_seen = 0
        self._memo = ReportMemo()  # repeats of a report are built once
        # Lines parsed by a look-back window outside the lines split for the windows (those have their parsed
        # lines in _split_parsed), by number: windows overlap, a line is parsed once.  Trimmed with the buffer.
        self._known_lines: dict[int, LogLine] = {}
        # Whole lines of the buffer split for the windows (see _split_upto): from byte _split_at, line number
        # _split_first, to byte _split_end (just past a newline).
        self._split: list[bytes] = []
        self._split_parsed: list[LogLine | None] = []  # of them, those a window parsed (Window's ``shared``)
        self._split_at = self._split_end = 0
        self._split_first = 1
        # Header lines that started a report directly (not a continuation, a reboot or an event), by their
        # digit layout, with the rule that matched.  A later line of that layout is first looked up in the
        # memo under that rule, which compares its text but for the stamps with a remembered report's: a
        # hit means the same header text, so the same rule and the same checks on the way here.
        self._direct: dict[bytes, str] = {}
        self.banners: dict[int, str] = {}  # boot banners where the release changes: line -> the release it names
        # Rate limiting's lines (_SUPPRESSED): the first few as (line, what it says), and how many there were.
        self.suppressed: list[tuple[int, str]] = []
        self.suppressed_lines = 0
        # The boot's wall-clock time where the log gives it, as (line, epoch seconds of the boot, what was read):
        # ``rtc`` the RTC's time the kernel set its clock to (_CLOCK_SET), ``banner`` the boot banner's dated prefix
        # (journalctl -o short-iso, rsyslog's ISO stamps; not a time of a zone the log does not name).
        self.boot_clocks: list[tuple[int, float, str]] = []
        # What shows KASLR on or off, as (boot, line, text): the boot is the first line of the boot the line is in (0:
        # the boot the log starts in), as a report's (detectors/dmesg/findings.py report_boot_line).
        self.kaslr: list[tuple[int, int, str]] = []
        # The command lines that hold one of _COMMAND_WORDS, as (line, text), in log order.
        self.command_lines: list[tuple[int, str]] = []
        # The last line with text of each boot the log shows: above each boot start (_starts) and at the log's end, as
        # (line, text), in log order.  What a report's boot printed last: whether the kernel went on after a report
        # (detectors/dmesg/aftermath.py), read without keeping the log's lines.
        self.boot_tails: list[tuple[int, str]] = []
        self._pending_tails: list[tuple[int, str] | None] = []  # of each of _pending: (lines above it, text)
        self._banner_lines: list[int] = []  # every boot banner's line, in log order
        self._banner: str | None = None  # the release of the last banner
        # The last two banners, as (line, text, release): a report's boot is that of the last banner above its
        # first line (the one before the last when its header, found below, is past the last banner).
        self._boots: tuple[tuple[int, str, str], ...] = ()
        # Where boots start (see _BOOT_STAMP), line numbers in log order: a report whose boot started after the
        # last banner above it is of a boot whose banner the log lacks.  Found by one search of the bytes per
        # scan, apart from the per-line scan: the bytes searched end at _starts_at; the last 0.000000 line found
        # ends at _zero_end (None: none yet).  A start is found as an offset (_pending) and numbered when a report
        # below it asks (_number_starts): counted from the line counter's place, not over all the input between
        # two boots (a second pass over the input's newlines, ~5 ms of the shared corpus x4).
        self._starts: list[int] = []
        self._pending: list[int] = []
        self._starts_at = 0
        self._zero_end: int | None = None

    def feed(self, chunk: bytes) -> list[KernelReport]:
        """Add the next piece of the log; return the reports completed so far."""
        self.bytes_seen += len(chunk)
        if self._cut_line:
            nl = chunk.find(b"\n")
            if nl < 0:
                return []
            chunk = chunk[nl:]
            self._cut_line = False
        buf = self._buf + chunk if self._buf else chunk
        tail = len(buf) - buf.rfind(b"\n") - 1
        if tail > MAX_LINE_BYTES:
            buf = buf[: len(buf) - tail + MAX_LINE_BYTES]
            self._cut_line = True
        self._buf = buf
        reports = list(self._scan(final=False))
        self._trim()
        return reports

    def close(self) -> list[KernelReport]:
        """End of input: return the reports still pending."""
        reports = list(self._scan(final=True))
        self.lines_seen = self._line_at(len(self._buf)) - (1 if self._buf.endswith(b"\n") or not self._buf else 0)
        if self._pending:
            self._number_starts(self.lines_seen + 1)
        tail = self._tail_above(len(self._buf) + (0 if self._buf.endswith(b"\n") else 1))
        if tail is not None:
            self.boot_tails.append((self.lines_seen + 1 - tail[0], tail[1]))
        return reports

    def _tail_above(self, start: int) -> tuple[int, str] | None:
        """The last line with text above the line starting at byte ``start`` of the buffer, as (how many lines up,
        its text); None when the few lines above in the buffer are blank or not there (a trimmed buffer)."""
        buf = self._buf
        end = start - 1  # the newline that ends the line above
        for back in range(1, _TAIL_LINES + 1):
            if end < 0:
                return None
            begin = buf.rfind(b"\n", 0, end) + 1  # (a trimmed buffer starts at a line's start)
            text = buf[begin:end].decode("utf-8", "replace").rstrip()
            if _STAMP_ONLY.fullmatch(text) is None:
                return back, text
            end = begin - 1
        return None

    def _line_at(self, off: int) -> int:
        """Line number of the line holding byte ``off`` of the buffer (incremental newline count)."""
        if off >= self._count_off:
            at, line = self._count_off, self._count_line
            marks = self._marks
            if marks and self._marks_at <= off <= self._end_at:
                # The newlines up to the scan's end were counted (_line_at_end): from the mark at or before ``off``
                # when it is past the counter, not over bytes counted already.
                k = min((off - self._marks_at) // _COUNT_STEP, len(marks) - 1)
                mark = self._marks_at + k * _COUNT_STEP
                if mark > at:
                    at, line = mark, marks[k]
            line += self._buf.count(b"\n", at, off)
        else:
            line = self._count_line - self._buf.count(b"\n", off, self._count_off)
        self._count_off, self._count_line = off, line
        return line

    def _line_at_end(self, end: int) -> int:
        """``_line_at(end)`` without moving the incremental count (the scan's next headers are before ``end``),
        remembered for the scan's ``end``.  Asked after ``_line_at`` of a header before ``end``.

        Counted in steps of :data:`_COUNT_STEP` bytes, the line number at each step kept (``_marks``): the line
        counter then goes on from the last mark before each header, where it counted the same bytes again (half
        of each 1 MB chunk's newlines: the look-ups near its end ask for the count)."""
        if self._end_at != end:
            buf = self._buf
            at, line = self._count_off, self._count_line
            marks = [line]
            while at + _COUNT_STEP < end:
                line += buf.count(b"\n", at, at + _COUNT_STEP)
                at += _COUNT_STEP
                marks.append(line)
            self._end_at = end
            self._end_line = line + buf.count(b"\n", at, end)
            self._marks, self._marks_at = marks, self._count_off
        return self._end_line

    def _window(
        self, start: int, end: int, limit: int = MAX_REPORT_LINES, seed: Window | None = None
    ) -> tuple[Window, bool]:
        """Up to ``limit`` lines from byte ``start``, and whether the window is complete.

        The window's lines are the whole lines from ``start`` within the byte budget (``min(end, start +
        MAX_WINDOW_BYTES)``), up to ``limit``; when there are fewer, the rest of the budget too (a line cut by the
        budget is dropped, and the empty rest after the last newline of the input) unless no whole line is there.
        Complete when it holds ``limit`` lines or the budget ends before ``end``.  The lines are taken from
        :meth:`_split_upto`'s (a report-dense log's windows overlap: each line is split once, not once a window);
        they are decoded and parsed only when the report builder looks at them (``seed``: a shorter window from
        ``start`` whose parsed lines are taken).
        """
        budget = min(end, start + MAX_WINDOW_BYTES)
        number = self._line_at(start)
        lines = self._split_upto(start, number, limit, budget)
        k = number - self._split_first
        if self._split_end <= budget:
            n = min(limit, len(lines) - k)
        else:  # split further by another window, past this one's budget: its whole lines within the budget
            n = min(limit, self._buf.count(b"\n", start, budget))
        parts = lines[k : k + n]
        complete = True
        if n < limit:
            # Every whole line within the budget is taken: what follows the last one's newline is the rest.
            rest = self._buf[self._buf.rfind(b"\n", start, budget) + 1 if n else start : budget]
            if budget < end:
                if not n:
                    parts = [rest]  # no newline within the budget: the cut line alone
            else:
                complete = False
                if not n or rest:
                    parts.append(rest)  # the input's last line without a newline (or its only, empty one)
        return Window(number, parts, seed, shared=self._split_parsed, shared_at=k, shared_n=n), complete

    def _split_upto(self, start: int, number: int, limit: int, budget: int) -> list[bytes]:
        """The lines split from the buffer, holding line ``number`` (at byte ``start``) and up to ``limit - 1``
        after it, or as many whole lines as there are before byte ``budget``.

        The split lines run from ``_split_at`` (line ``_split_first``) to ``_split_end`` (past a newline); a window
        that starts elsewhere starts them again.  They are split in steps of ``_TYPICAL_LINE`` bytes a line
        wanted, four times as many each step (long lines), as the windows were cut before.  Those more than
        :data:`_SPLIT_KEPT` lines above a window's first are dropped (new lists: a window made before holds the old
        ones), the rest with the buffer's lines (:meth:`_trim`).
        """
        buf = self._buf
        lines = self._split
        if not lines or not self._split_at <= start <= self._split_end:
            self._split = lines = []
            self._split_parsed = []
            self._split_at = self._split_end = start
            self._split_first = number
        elif number - self._split_first > 2 * _SPLIT_KEPT:
            # The scan only goes on from here (a window starts at most a look-back above its header): the lines
            # above are freed as it goes, not held to the end of the buffer (a report-dense megabyte's ~14,000, and
            # the lists' growth: ~1,000 page faults of the corpus x4's scan).
            k = number - self._split_first
            drop = k - _SPLIT_KEPT
            at = start  # where the first line kept starts: back from the window's first over the lines kept
            for i in range(drop, k):
                at -= len(lines[i]) + 1
            self._split = lines = lines[drop:]
            self._split_parsed = self._split_parsed[drop:]
            self._split_at = at
            self._split_first += drop
        want = number - self._split_first + limit
        span = (want - len(lines)) * _TYPICAL_LINE
        while len(lines) < want and self._split_end < budget:
            at = self._split_end
            stop = min(budget, at + span)
            nl = buf.rfind(b"\n", at, stop)
            if nl >= 0:
                got = buf[at:nl].split(b"\n")
                lines.extend(got)
                self._split_parsed.extend([None] * len(got))
                self._split_end = nl + 1
            elif stop == budget:
                break  # no newline before the budget's end
            span *= 4
        return lines

    def _lookback(self, start: int, number: int) -> Window:
        """Up to LOOKBACK_LINES lines before byte ``start``, the start of line ``number`` (parsed when looked at).

        Line ``i`` of the result starts at ``start - sum(len(raw) + 1 for raw in raw[i:])``.
        """
        # rsplit with a limit: only the last lines become objects (the first part keeps the rest whole,
        # and is dropped below whenever the limit was reached).
        begin = max(0, start - LOOKBACK_LINES * _TYPICAL_LINE)
        parts = self._buf[begin:start].rsplit(b"\n", LOOKBACK_LINES + 1)
        while len(parts) <= LOOKBACK_LINES + 1 and begin > 0:  # long lines: look further back
            begin = max(0, begin - LOOKBACK_LINES * _TYPICAL_LINE)
            parts = self._buf[begin:start].rsplit(b"\n", LOOKBACK_LINES + 1)
        if parts and not parts[-1]:
            parts.pop()  # start is at a line start: the slice ends with the newline before it
        if begin > 0:
            parts.pop(0)  # the slice may begin inside a line
        parts = parts[-LOOKBACK_LINES:]
        # The lines end just before line ``number``: no newline count (the counter would go back and forth).
        first = number - len(parts)
        k = first - self._split_first
        if self._split and k >= 0 and number - self._split_first <= len(self._split):
            # Lines among those split for the windows: parsed once for both (a header above a continuation is
            # the first line of the window cut from it next).
            return Window(first, parts, shared=self._split_parsed, shared_at=k, shared_n=len(parts))
        return Window(first, parts, known=self._known_lines)

    def _candidates(self, start: int, end: int) -> list[int]:
        """Sorted offsets in ``buf[start:end]`` where a trigger word starts (at least one on each line with one)."""
        with memoryview(self._buf) as view:
            found = _TRIGGER_SEARCH.find_matches_as_indexes(view[start:end], overlapping=False)
        return [start + at for _, at, _ in found]

    def _boot_starts(self, end: int) -> None:
        """Note where boots start in ``buf[_starts_at:end]``: the first of each run of lines printed at 0.000000
        that has a later printk time (or nothing) above it.  The log's few runs are of some dozens of lines."""
        buf = self._buf
        begin = self._starts_at
        # Every 0.000000 stamp in one automaton pass (SIMD; bytes.find was a byte loop over all the input, ~0.4 ns a
        # byte).  The stamp cannot overlap itself: its occurrences are all found, and those on a line already looked
        # at are passed over, as a find from that line's end did.
        with memoryview(buf) as view:
            found = _BOOT_SEARCH.find_matches_as_indexes(view[begin:end])
        line_end = begin
        for _, offset, _ in found:
            at = begin + offset
            if at < line_end:
                continue
            start = buf.rfind(b"\n", 0, at) + 1
            line_end = buf.find(b"\n", at, end)
            line_end = end if line_end < 0 else line_end
            if at - start <= _BOOT_STAMP_WITHIN:
                if (
                    self._zero_end is None or _RAW_STAMP.search(buf, self._zero_end, start) is not None
                ) and not self._early_above(start):
                    self._pending.append(start)
                    self._pending_tails.append(self._tail_above(start))
                self._zero_end = line_end + 1
        self._starts_at = end

    def _early_above(self, start: int) -> bool:
        """Whether the line above the one at ``start`` was printed in a boot's first second: a 0.000000 line below it
        is a secondary CPU's, printed before its clock was synchronised ("[0.000000] calibrate_delay_direct() failed
        ..." after smpboot's lines at [0.168492], the 6.12 fixtures' console logs), not a new boot."""
        if start == 0:
            return False
        above = self._buf.rfind(b"\n", 0, start - 1) + 1
        stamp = _RAW_STAMP.search(self._buf, above, min(above + _BOOT_STAMP_WITHIN + 16, start))
        return stamp is not None and stamp.group(1) == b"0" and stamp.group(2) != b"000000"

    def _scan(self, final: bool) -> Iterator[KernelReport]:
        buf = self._buf
        end = len(buf) if final else buf.rfind(b"\n") + 1
        self._end_at = -1  # a new buffer, or the same one scanned again: offsets of another text
        self._marks = []
        if self._starts_at < end:
            self._boot_starts(end)
        for hit in self._candidates(self._pos, end):
            start = buf.rfind(b"\n", 0, hit) + 1
            line_end = buf.find(b"\n", hit, end)
            line_end = end if line_end < 0 else line_end
            number = self._line_at(start)
            if hit < self._pos or hit < self._inside_until or number in self._claimed:
                # Inside a report already built, or a report's line (another CPU's stall backtrace it took, corpus
                # syzkaller-linux-dev 492): only an allocation failure's header there still opens its event.
                if (inside := self._inside(number, start, line_end, end, final)) is None:
                    return  # wait for more input
                yield from inside
                continue
            layout = buf[start:line_end].translate(DIGITS_AS_ZERO)
            kind = self._direct.get(layout)
            if kind is not None and (built := self._fast_repeat(start, end, number, kind, layout)) is not None:
                # A header seen before, a repeat of a report remembered for it: neither the header line nor
                # its rule need looking at again (see _direct).  A miss takes the usual way below.
                report, resume_at = built
                self._pos = max(resume_at, line_end + 1) if resume_at <= start else resume_at
                self._preamble(report, start)
                self._boot(report)
                self._last_end = max(self._last_end, report.end_line)
                yield report
                continue
            head = parse_raw(number, buf[start:line_end])
            one = self._one_line(head)
            if one is not None:
                self._pos = line_end + 1
                if isinstance(one, KernelReport):
                    yield one
                continue
            token = _memory_token(head.body)
            if token is not None:
                got = self._event(head, start, line_end, end, final, token)
                if got is None:
                    return  # wait for more input
                if isinstance(got, KernelReport):
                    self._boot(got)
                    yield got
                continue
            # A banner is kept where the release changes: bounded by the kernels, not the boots.
            banner = _BANNER.match(head.body) if head.body.startswith("Linux version ") else None
            if banner is not None:
                if not self._boots or self._boots[-1][0] != number:  # not a line scanned again (more input awaited)
                    self._boots = (*self._boots[-1:], (number, head.text, banner[1]))
                    self._banner_lines.append(number)
                    if head.wall is not None and not wall_zone_unknown(head.text):
                        # start_kernel prints the banner first, at 0.000000: its dated time less its printk time (a
                        # journal line has none) is when the boot began.
                        self.boot_clocks.append((number, head.wall - (head.timestamp or 0.0), "banner"))
                if banner[1] != self._banner:
                    self.banners[number] = self._banner = banner[1]
            found = match_header(head.body)
            if (
                found is None
                # a program's line quoting a title, not the kernel's report (extract.quotes_header)
                or (not head.prefixed and quotes_header(head, found[1]))
                or (found[0].name == "unexpected-reboot" and not self._unexpected_reboot(start, head))
            ):
                self._pos = line_end + 1
                continue
            if " [inline]" in head.body and self._continued(head, line_end, end, found[0]):
                # A symbolized header naming an inlined function (6.18's "WARNING: f.h:1 at g f.h:1 [inline],
                # CPU#1: ...", KASAN's and KMSAN's "BUG: KASAN: ... in f f.h:1 [inline]") is printed again at once
                # for each function it was inlined into: the last of the run is the report's header (syzbot
                # titles by it), the lines before are its first part.
                self._pos = line_end + 1
                continue
            kind = found[0].name
            if not found[0].starts:
                # A continuation (Oops:, Internal error, a panic) seen first: its report's own header,
                # if it has no trigger word (arm's "Unable to handle kernel ..."), stands a few lines up.
                # Those reports are memoised apart from the ones whose header was hit directly.
                start, found = self._header_above(start, head, found)
                kind = found[0].name + " above"
            elif kind != "unexpected-reboot" and len(self._direct) < MAX_DIRECT:
                self._direct[buf[start:line_end].translate(DIGITS_AS_ZERO)] = kind
            built = self._build(start, end, final, found, kind)
            if built is None:
                self._pos = start
                return  # wait for more input
            report, resume_at = built
            self._pos = max(resume_at, line_end + 1) if resume_at <= start else resume_at
            self._preamble(report, start)
            self._boot(report)
            self._clock_inside(report)
            self._last_end = max(self._last_end, report.end_line)
            yield report
        self._pos = max(self._pos, end)

    def _clock_inside(self, report: KernelReport) -> None:
        """Read the RTC's reading among the lines of a boot's own report (an unexpected reboot's: its banner and the
        boot's first lines, up to ~80): the scan resumes after the report, so the boot's "setting system clock to"
        line in them was never read, and that boot was dated by none (or told another boot's reading)."""
        if report.rule != "unexpected-reboot":
            return
        for number, text in report.lines:
            if "setting system clock to " in text:
                self._one_line(parse_line(number, text))

    def _one_line(self, head: LogLine) -> KernelReport | bool | None:
        """A line that is all it says: rate limiting's (noted, True), a one-line event (a network stack's drop, RT
        throttling: detectors/dmesg/events.py ONE_LINE_EVENTS); else None."""
        body = head.body
        if "suppressed" in body and (said := _SUPPRESSED.search(body)) is not None:
            if not self.suppressed or self.suppressed[-1][0] < head.number:  # not a line scanned again
                self.suppressed_lines += 1
                if len(self.suppressed) < _SUPPRESSED_KEPT:
                    self.suppressed.append((head.number, said.group(1)))
            return True
        if "setting system clock to " in body:
            clock = _CLOCK_SET.search(body)
            if clock is not None and head.timestamp is not None:
                if not self.boot_clocks or self.boot_clocks[-1][0] < head.number:  # (not a line scanned again)
                    self.boot_clocks.append((head.number, int(clock.group(1)) - head.timestamp, "rtc"))
                return True
        if "ommand line:" in body and any(word in body for word in _COMMAND_WORDS):
            if not self.command_lines or self.command_lines[-1][0] < head.number:  # (not a line scanned again)
                self.command_lines.append((head.number, head.text))
            if "nokaslr" not in body:
                return True
        if ("nokaslr" in body and "ommand line:" in body) or "Kernel Offset: " in body:
            if not self.kaslr or self.kaslr[-1][1] < head.number:  # (not a line scanned again)
                self.kaslr.append((self._boot_of(head.number), head.number, body.strip()))
            return True
        if any(words in body for words in ONE_LINE_WORDS) and (event := build_one_line_event([head])) is not None:
            self._claimed.add(head.number)
            self._boot(event)
            return event
        return None

    def _boot_of(self, line: int) -> int:
        """The first line of the boot ``line`` is in: its banner's, or where its printk time restarts at 0.000000
        without one (:meth:`_boot`'s boots); 0 for the boot the log starts in."""
        if self._pending:
            self._number_starts(line)
        banners, starts = self._banner_lines, self._starts
        at, start = bisect_left(banners, line), bisect_left(starts, line)
        return max(banners[at - 1] if at else 0, starts[start - 1] if start else 0)

    def boot_lines(self) -> tuple[int, ...]:
        """The first line of each boot the log shows, in log order: its banner's, or where its printk time restarts at
        0.000000 without one (:meth:`_boot_of`'s boots).  Asked at the end of the input."""
        if self._pending:
            self._number_starts(self.lines_seen + 1)
        return tuple(sorted({*self._banner_lines, *self._starts}))

    def _boot(self, report: KernelReport) -> None:
        """Set the banner of the report's boot (``KernelReport.boot_banner``): the last banner above its first
        line, None when no banner precedes it or when a boot starts between that banner and the report (then
        ``KernelReport.bannerless_boot`` is that boot's first line).  Set in place on every report yielded, as its
        preamble is: a repeat the memo made carries the banner of the report it repeats, maybe of another boot."""
        banner = None
        for boot in reversed(self._boots):
            if boot[0] < report.start_line:
                banner = boot
                break
        if self._pending:
            self._number_starts(report.start_line)
        starts = self._starts
        at = bisect_left(starts, report.start_line)  # the boots that start above the report's first line
        bannerless = starts[at - 1] if at and (banner is None or banner[0] < starts[at - 1]) else None
        if bannerless is not None:
            banner = None
        if banner != report.boot_banner:
            object.__setattr__(report, "boot_banner", banner)
        if bannerless != report.bannerless_boot:
            object.__setattr__(report, "bannerless_boot", bannerless)

    def _number_starts(self, below: int) -> None:
        """Number the boot starts found (``_pending``, in log order) whose line is above line ``below``, into
        ``_starts``; the newlines are counted from the line counter's place (a report's first line, where the
        scan is) to each start and between them, without moving the counter."""
        buf = self._buf
        pending = self._pending
        off, line = self._count_off, self._count_line
        done = 0
        for at in pending:
            if at >= off and line >= below:
                break  # at or below the counter's line, itself not above ``below`` (the usual case: no count)
            line = line + buf.count(b"\n", off, at) if at >= off else line - buf.count(b"\n", at, off)
            off = at
            if line >= below:
                break
            self._starts.append(line)
            tail = self._pending_tails[done]
            if tail is not None:
                self.boot_tails.append((line - tail[0], tail[1]))
            done += 1
        if done:
            del pending[:done]
            del self._pending_tails[:done]

    def _preamble(self, report: KernelReport, start: int) -> None:
        """Set the lines just above the header at ``start`` that belong to the report (``KernelReport.preamble``).

        A WARN prints its message between "cut here" and the header; list_debug prints its message
        before "cut here" (or before the BUG).  Most reports have neither: one search of the bytes
        above says so.  The report is the scanner's own record (a fresh repeat, or the built one
        whose repeats get theirs here too), so it is set in place.
        """
        lo = max(0, start - PREAMBLE_BYTES)
        found: tuple[tuple[int, str], ...] = ()
        # A copy of the 2 KB, not a memoryview of the buffer: compiled, the view's making, slicing, __enter__ and
        # __exit__ (generic calls and look-ups) were ~2,500 instructions a header, the copy ~300.
        above = self._buf[lo:start]
        if _PREAMBLE_SEARCH.find_matches_as_indexes(above):
            found = self._remembered_preamble(above, lo > 0, report)
        if found != report.preamble:
            object.__setattr__(report, "preamble", found)

    def _remembered_preamble(self, above: bytes, cut: bool, report: KernelReport) -> tuple[tuple[int, str], ...]:
        """:meth:`_preamble_lines`, remembered by what it reads: the bytes above the header, whether they were cut,
        the report's context and how many of the last :data:`PREAMBLE_LINES` lines above its first are past the
        last report's end (the lines are then held as offsets from its first line).

        A repeat of a report (a fuzzer's log, a crash looping) mostly has the bytes above its header that the report
        had: its preamble was read again (~40,000 instructions each, 336 of the corpus x4's 448 reads), where the
        key's hash and look-up are ~8,000 compiled (docs/measurements/dmesg.md, 29th part).
        tests/detectors/dmesg/test_preamble.py checks the remembered preambles against those read anew.
        """
        first = report.start_line
        # _preamble_lines keeps a line of offset r (from -PREAMBLE_LINES to -1) when first + r > _last_end: every
        # one at a floor of -PREAMBLE_LINES - 1 or below, none at -1 or above.
        floor = min(-1, max(-PREAMBLE_LINES - 1, self._last_end - first))
        key = (above, cut, report.context, floor)
        held = self._preambles.get(key)
        if held is not None:
            return tuple([(first + offset, text) for offset, text in held])
        found = self._preamble_lines(above, cut, report)
        if len(self._preambles) >= PREAMBLES_REMEMBERED:
            self._preambles.clear()
        self._preambles[key] = tuple([(number - first, text) for number, text in found])
        return found

    def _preamble_lines(self, above: bytes, cut: bool, report: KernelReport) -> tuple[tuple[int, str], ...]:
        # ``above`` ends with the newline before the header; its last lines alone split (the first piece, all the
        # bytes before them, is never among the last PREAMBLE_LINES: more pieces than that are split off).
        raw = above.rsplit(b"\n", PREAMBLE_LINES + 1)[:-1]
        if cut:
            raw = raw[1:]  # the slice may begin inside a line
        raw = raw[-PREAMBLE_LINES:]
        first = report.start_line - len(raw)
        # The lines are chosen on their bytes; only those are parsed (most reports have none or one).
        # ``find``, not ``in``: the ``in`` of bytes first tries its needle as an int (a TypeError raised and cleared).
        cut_at = next((i for i in range(len(raw) - 1, -1, -1) if raw[i].find(b"cut here") >= 0), None)
        if cut_at is not None:
            chosen = list(range(cut_at + 1, len(raw)))
            if cut_at > 0 and _PREAMBLE_MESSAGE.search(raw[cut_at - 1]):
                chosen.insert(0, cut_at - 1)
        else:
            chosen = []
            for i in range(len(raw) - 1, max(-1, len(raw) - 3), -1):
                if not _PREAMBLE_MESSAGE.search(raw[i]):
                    break
                chosen.insert(0, i)
        lines = (parse_raw(first + i, raw[i]) for i in chosen if first + i > self._last_end)
        return tuple((x.number, x.text) for x in lines if report.context is None or x.context in (None, report.context))

    def _build(
        self, start: int, end: int, final: bool, found: tuple[Rule, re.Match[str]], kind: str
    ) -> tuple[KernelReport, int] | None:
        """The report at byte ``start`` and the offset where scanning resumes; None to wait for input.

        ``kind`` files the report in the memo: the rule's name (with `` above`` when the header was found
        above a continuation line).
        """
        hit = self._remembered(start, end, final, kind)
        if hit is not None:
            return hit
        window, complete = self._window(start, end, FIRST_WINDOW_LINES)
        if not complete and not final:
            return None
        # A report that reaches the window's last two lines may go on past it: its builder stops once it knows
        # (a fifth of the report-building time of the shared corpus went to such reports' first builds, thrown away).
        built = self._report(window, found, kind, past=len(window) - 2 if len(window) < MAX_REPORT_LINES else None)
        return self._finish(start, end, final, found, kind, window, built)

    def _remembered(self, start: int, end: int, final: bool, kind: str) -> tuple[KernelReport, int] | None:
        """A report the memo remembers for the lines at ``start``, cutting only the lines it needs.

        The builder of a remembered report stopped ``n`` lines in, before its window's end: a window of
        ``n + 2`` lines gives the same report, which then ends at least two lines before the window's
        end, so that :meth:`_finish` would not look further either.
        """
        line_end = self._buf.find(b"\n", start, end)
        need = self._memo.known_lines(kind, self._buf[start : end if line_end < 0 else line_end])
        if not need or need + 2 > FIRST_WINDOW_LINES:
            return None
        window, complete = self._window(start, end, need + 2)
        if not complete and not final:
            return None
        hit = self._memo.lookup(window, kind)
        if hit is None:
            return None
        report, resume, claims = hit
        if claims:
            # Lines the report took after the resume point must not start reports of their own.
            first = window.first
            self._claimed.update(first + i for i in claims)
        taken = window.raw[:resume]
        return report, start + sum(map(len, taken)) + len(taken)

    def _fast_repeat(
        self, start: int, end: int, number: int, kind: str, layout: bytes
    ) -> tuple[KernelReport, int] | None:
        """:meth:`_remembered` for a header hit directly, read off the buffer (:meth:`ReportMemo.fast_lookup`)."""
        # Near the end of the input the look-up may ask whether the full window's lines are all there: the newlines
        # to the end are then counted once a scan (from the first such header), not once a look-up.
        to_end = self._line_at_end(end) - number if start + MAX_WINDOW_BYTES >= end else -1
        hit = self._memo.fast_lookup(
            kind, layout, self._buf, start, end, number, FIRST_WINDOW_LINES, MAX_WINDOW_BYTES, to_end
        )
        if hit is None:
            return None
        report, resume_at, claims = hit
        if claims:
            self._claimed.update(number + i for i in claims)
        return report, start + resume_at

    def _finish(
        self,
        start: int,
        end: int,
        final: bool,
        found: tuple[Rule, re.Match[str]],
        kind: str,
        window: Window,
        built: tuple[KernelReport, int] | None,
    ) -> tuple[KernelReport, int] | None:
        """The report built from the first window, or from the full one when it may go on past it (``built``
        None: its builder stopped there; or a remembered report of the first window that reaches its end)."""
        if built is None or (built[0].end_line >= window.first + len(window) - 2 and len(window) < MAX_REPORT_LINES):
            # Built from the full window (the first window's lines parsed once).
            window, complete = self._window(start, end, seed=window)
            if not complete and not final:
                return None
            built = self._report(window, found, kind)
            assert built is not None  # no ``past``: a report is always built
        report, resume = built
        self._claim(report, window, resume)
        # Where line ``resume`` of the window starts (just after the window when it is past the end).
        taken = window.raw[:resume]
        return report, start + sum(map(len, taken)) + len(taken)

    def _report(
        self, window: Window, found: tuple[Rule, re.Match[str]], kind: str, past: int | None = None
    ) -> tuple[KernelReport, int] | None:
        """The report at ``window[0]`` (remembered or built), None when it reaches line ``past`` of the window
        (nothing is then remembered: :meth:`ReportMemo.build` files only reports)."""
        # The rule and match passed one by one: compiled, a call with ``*found`` goes through the Python wrapper.
        return self._memo.build(window, kind, lambda: build_report(window, found[0], found[1], past))

    def _continued(self, head: LogLine, line_end: int, end: int, rule: Rule) -> bool:
        """Whether ``head`` (naming an ``[inline]`` function) is the first of a run of headers of its rule.

        The kernel prints one such line per inlined function, outermost last, at once; the run ends with the
        header of the function they were inlined into (no ``[inline]``).  True when that line follows in the
        same context, so that it is the report's header.
        """
        at = line_end + 1
        number = head.number
        for _ in range(HEADER_LOOKBACK):  # a run is as long as the inlining depth
            nxt = self._buf.find(b"\n", at, end)
            if nxt < 0:
                return False
            number += 1
            line = parse_raw(number, self._buf[at:nxt])
            found = match_header(line.body) if line.context == head.context else None
            if found is None or found[0].name != rule.name:
                return False
            if " [inline]" not in line.body:
                return True
            at = nxt + 1
        return False

    def _header_above(
        self, start: int, head: LogLine, found: tuple[Rule, re.Match[str]]
    ) -> tuple[int, tuple[Rule, re.Match[str]]]:
        """The first report header among the lines just above ``start`` not yet reported.

        Only lines of the same context count; the topmost header wins, since a
        report (arm's "Alignment trap") may be followed by more headers of itself.
        """
        best = (start, found)
        if head.number - 1 <= self._last_end:
            return best  # the line above belongs to the last report (a panic at its end): nothing to look at
        above = self._lookback(start, head.number)
        raw = above.raw
        lo = len(raw)  # the lines above, from ``lo`` on, not yet reported
        while lo > max(0, len(raw) - HEADER_LOOKBACK):
            number = above.first + lo - 1
            if number <= self._last_end or number in self._claimed:
                break
            lo -= 1
        # Which of them may be headers: one automaton pass over them joined.
        blob = b"\n".join(raw[lo:])
        hinted: list[int] = []
        line = prev = 0
        for _, at, _ in HEADER_HINT_SEARCH.find_matches_as_indexes(blob):
            line += blob.count(b"\n", prev, at)
            prev = at
            if not hinted or hinted[-1] != lo + line:
                hinted.append(lo + line)
        for i in reversed(hinted):  # bottom up: the topmost header found is the one kept
            line_ = above[i]
            if head.context is not None and line_.context not in (None, head.context):
                continue
            other = match_header(line_.body) if line_.body else None
            if other is not None and other[0].kind not in _NOT_ABOVE and not quotes_header(line_, other[1]):
                taken = raw[i:]
                best = (start - sum(map(len, taken)) - len(taken), other)
        return best

    def _unexpected_reboot(self, start: int, head: LogLine) -> bool:
        """Whether a boot banner at ``start`` is a reboot nobody asked for.

        It is one when the printk clock went back (an earlier line has a later
        time: this is a new boot, not the log's first) and none of the
        LOOKBACK_LINES lines just above says why: a panic, a reboot or power-off
        request, kexec, sysrq.  Read from the bytes, without splitting or parsing lines.
        """
        if head.timestamp is None:
            return False
        buf = self._buf
        line_end = start - 1  # the newline that ends the line above
        for _ in range(LOOKBACK_LINES):
            # The clock is looked at first: in most logs it did not go back, and then no reason is searched for.
            if line_end < 0:
                return False
            begin = buf.rfind(b"\n", 0, line_end) + 1
            m = _RAW_STAMP.search(buf, begin, min(begin + 64, line_end))
            if m is not None:
                # Bounded: the stamp is searched for in 64 bytes, so int() converts at most 62 digits.
                went_back = int(m.group(1)) + float(b"0." + m.group(2)) > head.timestamp
                return went_back and not self._reboot_reason(start)
            line_end = begin - 1
        return False

    def _reboot_reason(self, start: int) -> bool:
        """Whether the LOOKBACK_LINES lines above byte ``start`` say why the system rebooted.

        That is whether a reason stands on one of them: the kilobyte just above is searched first (most
        reasons are the last lines before the banner), then all of them.
        """
        near = max(0, start - _NEAR_BYTES)
        if near > 0 and self._reason_in(near, start) is True:
            return True
        begin = max(0, start - (LOOKBACK_LINES + 1) * _TYPICAL_LINE)
        while True:
            found = self._reason_in(begin, start)
            if found is not None:
                return found
            # Nothing here; long lines may leave some of the lines above ``begin``.
            if begin == 0 or self._buf.count(b"\n", begin, start) > LOOKBACK_LINES:
                return False
            begin = max(0, begin - LOOKBACK_LINES * _TYPICAL_LINE)

    def _reason_in(self, begin: int, start: int) -> bool | None:
        """A reboot reason in ``buf[begin:start]``: True, False when the nearest word past them is above the
        LOOKBACK_LINES lines, None when there is none.  Each match lies on one line (no word holds a newline),
        and one that overlaps another would be on its line too: a line with a reason always has a match."""
        buf = self._buf
        with memoryview(buf) as view:
            found = _REBOOT_SEARCH.find_matches_as_indexes(view[begin:start], overlapping=False)
        for word, offset, _ in reversed(found):  # nearest first: one word within the lines is enough
            at = begin + offset
            if buf.count(b"\n", at, start) > LOOKBACK_LINES:
                return False  # above the lines looked at
            if word != _REACHED_TARGET:
                return True
            eol = buf.find(b"\n", at, start)
            if _REBOOT_TARGET.match(buf, at, start if eol < 0 else eol) is not None:
                return True
        return None

    def _inside(self, number: int, start: int, line_end: int, end: int, final: bool) -> list[KernelReport] | None:
        """Handle a trigger word on line ``number`` (bytes ``start`` to ``line_end``) inside a report already built
        or among a report's lines: an allocation failure's header there opens its event all the same (its lines overlap
        the report's: two tasks printed at once without caller ids, corpus syzkaller-linux-dev 206's vmalloc failure
        among a suspicious-RCU warning's lines; another CPU's lines a stall report took, 492).

        None means wait for more input (scanning resumes at the header, the lines up to the report's end still
        inside), else the event made (none or one).  Scanning goes on where it was, or past the line where that is at
        or before it."""
        buf = self._buf
        pos, until = self._pos, self._inside_until
        after = max(pos, line_end + 1) if pos <= start else pos
        if _ALLOC_TOKEN not in buf[start:line_end] and b"vmalloc error:" not in buf[start:line_end]:
            self._pos = after
            return []
        head = parse_raw(number, buf[start:line_end])
        if number in self._event_claimed or alloc_failure(head.body) is None:
            self._pos = after
            return []
        got = self._event(head, start, line_end, end, final, _ALLOC_TOKEN)
        if got is None:
            self._inside_until = max(until, pos)  # self._pos is the header's start: resumed there
            return None
        self._pos, self._inside_until = after, until
        if not isinstance(got, KernelReport):
            return []
        self._boot(got)
        return [got]

    def _event(
        self, head: LogLine, start: int, line_end: int, end: int, final: bool, token: bytes
    ) -> KernelReport | bool | None:
        """Handle a memory event trigger; None means wait for more input, False nothing found.

        ``token``: what the line holds: ``Mem-Info:`` (its header is looked for above), :data:`_ALLOC_TOKEN` (an
        allocation failure's header: the event starts at it), else an OOM kill's line."""
        if token == b"" and KILLED.search(head.body) is None:
            self._pos = line_end + 1
            return False
        begin = start
        if token == b"Mem-Info:" and head.body.startswith(MEM_INFO):
            before = self._lookback(start, head.number)
            idx = find_event_header(before)
            if idx is None or before[idx].number in self._claimed:
                self._pos = line_end + 1
                return False
            taken = before.raw[idx:]
            begin = start - sum(map(len, taken)) - len(taken)
        elif token == b"Mem-Info:":
            self._pos = line_end + 1
            return False
        # Most events end within a few dozen lines: try a short window first.  When the builder did not
        # read it to its end, a longer window gives the same event (what it read is all that counts).
        short, complete = self._window(begin, end, FIRST_WINDOW_LINES)
        if not complete and not final:
            self._pos = begin
            return None
        got = self._memo.build(short, "event", lambda: build_event(short))
        if short.parsed_upto >= len(short):
            window, complete = self._window(begin, end, seed=short)
            if not complete and not final:
                self._pos = begin
                return None
            got = self._memo.build(window, "event", lambda: build_event(window))
        if got is None:
            self._pos = line_end + 1
            return False
        report, _ = got
        numbers = line_numbers(report)
        self._claimed.update(numbers)
        self._event_claimed.update(numbers)
        self._pos = line_end + 1
        return report

    def _claim(self, report: KernelReport, window: Window, resume: int) -> None:
        # Lines the report took after the resume point must not start reports of their own.
        if resume < len(window):
            first = window.first + resume  # not window[resume]: that would parse the line
            if type(report) is KernelReport:
                # Built here: its lines are in log order, those at or after ``first`` last (mostly none: the report
                # ends where scanning resumes), read from the end; not every line's number listed and tested.
                claimed = self._claimed
                lines = report.lines
                k = len(lines) - 1
                while k >= 0 and lines[k][0] >= first:
                    claimed.add(lines[k][0])
                    k -= 1
            else:
                # Line numbers only: a repeat of a remembered report makes its lines when they are read.
                self._claimed.update(number for number in line_numbers(report) if number >= first)

    def _trim(self) -> None:
        """Drop what is behind the scan position, keeping the look-back lines."""
        keep = self._pos
        for _ in range(LOOKBACK_LINES):
            if keep <= 0:
                break
            keep = self._buf.rfind(b"\n", 0, keep - 1) + 1
        if keep <= 0:
            return
        line = self._line_at(keep)
        if self._pending:
            self._number_starts(line)  # those above ``keep``, counted in the buffer they are offsets of
        self._buf = self._buf[keep:]
        self._pos -= keep
        self._inside_until = max(0, self._inside_until - keep)
        self._line0 = line
        self._count_off, self._count_line = 0, line
        self._marks = []  # offsets of the buffer before the trim
        self._starts_at -= keep
        if self._zero_end is not None:
            self._zero_end = max(0, self._zero_end - keep)
        if self._pending:
            self._pending = [at - keep for at in self._pending]
        if self._claimed:
            self._claimed = {n for n in self._claimed if n >= line}
        if self._event_claimed:
            self._event_claimed = {n for n in self._event_claimed if n >= line}
        if self._known_lines:
            self._known_lines = {n: x for n, x in self._known_lines.items() if n >= line}
        self._split = []  # offsets of another buffer: split again when a window asks
        self._split_parsed = []
        self._split_at = self._split_end = 0
        self._split_first = 1


def scan_chunks(chunks: Iterable[bytes]) -> Iterator[KernelReport]:
    """Every report and event of a log given as byte chunks, in log order."""
    scanner = LogScanner()
    for chunk in chunks:
        yield from scanner.feed(chunk)
    yield from scanner.close()


def scan_text(text: str) -> list[KernelReport]:
    """Every report of a log held in a string (for tests and small inputs)."""
    return list(scan_chunks([text.encode()]))
