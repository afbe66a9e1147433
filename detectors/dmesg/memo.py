"""Reports that repeat: a report built once is reused for the same text anywhere else in the log.

Logs repeat their crashes: a fuzzer's console log holds the same report after
every reboot, a driver warns in a loop, a flapping bug prints the same oops
hour after hour.  Only the printk times and the line numbers differ between two
such copies, and :func:`~detectors.dmesg.extract.build_report` depends on the
lines' text, not on those.  :class:`ReportMemo` keys a built report by the
window lines the builder read, with each line's leading ``[ sec.usec]`` stamp
blanked out; a later window whose first lines are the same text gets the same
report with its own line numbers, line texts and times (parsed from the two
lines that give them).  Anything else that differs (a wall-clock prefix, a
kmsg sequence number, one character of the text) is a miss and the report is
built from scratch, so the memo changes nothing but the cost.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import itemgetter
from typing import Final, NamedTuple, cast

from detectors.dmesg.lines import Window
from detectors.dmesg.repeat import moved
from forensics import regexcache as rc
from forensics.types import log_prefix
from forensics.types.dmesg import Frame, KernelReport

#: A syslog time without a year (``Nov 30 06:55:30 host kernel:``) or with a zone's name (journalctl -o short-full,
#: ``Mon 2026-12-07 14:30:02 CET host kernel:``): it gives no wall-clock time (:func:`~detectors.dmesg.lines.parse_line`
#: keeps none), so a key leaves it out.  A key kept short-full's: repeats under it were built again (ue6 10f).
_SYSLOG_TIME: Final = rc.compile(rb"\n" + log_prefix.UNTIMED.encode() + rb"(?= \S+ kernel:)")
#: A line's printk time stamp, the other part of a line a key leaves out: at the line's start, or after
#: the prefixes parse_line takes off before it (a blanked syslog time and host, a ``dmesg -x`` facility
#: and level, a ``<N>`` level), matched as parse_line matches them, so that a blanked stamp is always
#: one parse_line reads as the line's time and never part of its message.
_STAMP: Final = rc.compile(
    rb"\n((?:\x00 \S+ kernel: ?"
    rb"|(?=[^\n]{0,7}:)(?:kern|user|mail|daemon|auth|syslog|lpr|news|uucp|cron|authpriv|ftp|local\d)[^\S\n]*:"
    rb"(?:emerg|alert|crit|err|warn|notice|info|debug)[^\S\n]*: ?)?(?:<\d{1,3}>)?)\[[^\S\n]*\d+\.\d+\]"
)
#: _STAMP as it stands in a text before its syslog times are blanked: the NUL that stands for a blanked time
#: is the time itself (a line has one where _SYSLOG_TIME matched, and _SYSLOG_TIME asks for what follows here).
_STAMP_RAW: Final = rc.compile(_STAMP.pattern.replace(rb"\x00", log_prefix.UNTIMED.encode(), 1))
#: Every digit as ``0``: two texts with the same layout differ at most in their digits (``bytes.translate``).
DIGITS_AS_ZERO: Final = bytes.maketrans(b"123456789", b"000000000")
MAX_KEYS: Final = 512  # distinct header lines remembered (each entry holds a report and its key: ~5-10 KB)
# Reports remembered per header line (what follows a header may vary): a fuzzer's log has dozens of lockdep
# cycles or KASAN reports under one header line ("WARNING: possible circular locking dependency detected");
# with 4 the others were built again at every repeat (82 builds, 0.08 s of the shared corpus x4).
MAX_PER_KEY: Final = 32
#: The scanner's full window: at most this many lines (its MAX_REPORT_LINES).
MAX_FULL_LINES: Final = 1000
MAX_ENTRIES: Final = 4 * MAX_KEYS  # reports remembered in all: the memory bound of 512 lines x 4 (~10-20 MB at worst)


class _Kept(NamedTuple):
    """What a repeat reads of the entry for the report it repeats (:class:`detectors.dmesg.repeat.Remembered`), apart
    from the entry: a repeat holds this alone until its lines are made, so that the entry's text and shape, the
    memo's, go with the memo at the scan's end (~2 MB of the shared corpus x4, reused by the reading's allocations)."""

    report: KernelReport
    own: tuple[int, ...]  # window index of each report line
    timed: tuple[int, int] | None  # window index of the first and last report lines with a time
    stamps: tuple[int, int]  # where in those lines their time stands (see _stamp_at), -1: not known
    picks: (
        Callable[[list[str]], tuple[str, ...]] | None
    )  # the report's lines among the window's, from its first (None: all)
    frames: tuple[tuple[tuple[object, ...], ...], tuple[int, ...]] | None  # the frames: all fields but the line; lines


class _Entry(NamedTuple):
    lines: int  # how many window lines the builder read
    window_len: int  # the window's length when the builder read it to the end, else -1
    text: bytes  # those lines as read (without a NUL byte: see _key)
    kept: _Kept  # the report and what a repeat of it reads
    resume: int
    claims: tuple[int, ...]  # window index of each report line at or after ``resume`` (the scanner claims them)
    shape: _Shape | None  # the last text found to have this key, for a fast compare
    resume_at: int  # where line ``resume`` starts in ``text``, from its start (-1: past the lines read)


class _Shape:
    """A text with a key, held for :func:`_same_but_stamps`: its digit layout, its bytes as an integer, its stamps.

    It is the last text a look-up found to have its entry's key: the times of a log grow, and a stamp one
    digit wider changes the layout of every later repeat.
    """

    __slots__ = ("_bare", "_head", "_layout", "_mask", "_number", "_text", "size")

    def __init__(self, text: bytes) -> None:
        self.take(text)

    def take(self, text: bytes) -> None:
        """Hold ``text`` instead."""
        self._text = text
        self.size = len(text)  # the layout's length
        # Made when first compared: a report repeated byte for byte (or never) needs none of them (the layout
        # made with each entry was ~2% of the shared corpus's scan, and 2 MiB held).
        self._layout: bytes | None = None
        self._number: int | None = None
        self._mask: int | None = None
        self._bare: bytes | None = None
        self._head: bytes | None = None  # the bare text of its first _PIECE_BYTES (see differs_early)

    @property
    def layout(self) -> bytes:
        """The text with every digit as 0."""
        if self._layout is None:
            self._layout = self._text.translate(DIGITS_AS_ZERO)
        return self._layout

    def differs_early(self, text: bytes) -> bool:
        """Whether the bare texts of ``text`` and of the text held differ within the first :data:`_PIECE_BYTES`
        bytes of each: the bare text of a piece is a prefix of the whole's, so that then they differ whatever
        follows.  Most key compares a report's build makes with the other entries of its memo slot stop there,
        without the bare text of kilobytes (14 M instructions of the shared corpus)."""
        mine = self._head
        if mine is None:
            mine = self._head = _bare(self._text[:_PIECE_BYTES])  # the same for each compare (~900 of the corpus x4)
        other = _bare(text[:_PIECE_BYTES])
        common = min(len(mine), len(other))
        return mine[:common] != other[:common]

    @property
    def bare(self) -> bytes:
        """The text without its digits and blanks (see :func:`_bare`)."""
        if self._bare is None:
            self._bare = _bare(self._text)
        return self._bare

    @property
    def number(self) -> int:
        """The text's bytes as an integer."""
        if self._number is None:
            self._number = int.from_bytes(self._text, "big")
        return self._number

    @property
    def mask(self) -> int:
        """0xFF for each byte outside the stamps, 0x00 inside them."""
        if self._mask is None:
            self._mask = _stamp_mask(self._text)
        return self._mask


def _key(blob: bytes) -> bytes | None:
    """Lines joined, with their stamps blanked (None for text that has a NUL byte).

    A year-less syslog time becomes a NUL; each stamp is cut out and the text around it joined with a
    NUL on each side of the prefix before it (``split`` keeps the prefix group: all of it in C, where a
    ``sub`` template with a group reference would expand in Python, ~3 us a line).  Both patterns
    start with the newline before a line, a literal the regex engine finds by itself (a ``^`` is
    tried at every byte: four times slower).  No key is made of text with a NUL of its own, so two
    keys are equal only for texts equal but for those times.
    """
    # ``find``, not ``in``: the ``in`` of bytes first tries its needle as an int, raising and clearing a
    # TypeError (~1,800 instructions a test, here and in the other tests of this module).
    if blob.find(b"\x00") >= 0:
        return None
    blob = b"\n" + blob
    if blob.find(b" kernel:") >= 0:
        blob = _SYSLOG_TIME.sub(b"\n\x00", blob)
    return b"\x00".join(_STAMP.split(blob))


def _stamp_at(line: bytes) -> int:
    """Where the time of a timed line stands, when a key blanks it and it is the time parse_line reads.

    That is so for a stamp at the start or after a level or ``dmesg -x`` prefix in a line without
    `` kernel:`` (with it, parse_line may take a syslog or journalctl prefix first).  A line equal but
    for that stamp, as a key match says, has its time at the same offset.  -1: parse the line.
    """
    if line.find(b" kernel:") >= 0:
        return -1
    if _stamp_end(line) >= 0:
        return 0  # _STAMP's match at the line's start, with an empty prefix group
    m = _STAMP.match(b"\n" + line)
    return -1 if m is None else len(m.group(1))


def _stamp_end(line: bytes) -> int:
    """Where a ``[ sec.usec]`` stamp that starts ``line`` ends (past its bracket), as _STAMP reads one at a line's
    start with no prefix (``[``, blanks but the newline, digits, ``.``, digits, ``]``); -1 when none does.  Read byte
    by byte: a slot key's and a stamp's place were a regex split or match each (~9,000 and ~6,000 instructions)."""
    n = len(line)
    if not n or line[0] != 91:  # "["
        return -1
    i = 1
    while i < n and line[i] in _BLANKS:
        i += 1
    j = i
    while j < n and 48 <= line[j] <= 57:
        j += 1
    if not (i < j < n and line[j] == 46):  # "."
        return -1
    j += 1
    k = j
    while k < n and 48 <= line[k] <= 57:
        k += 1
    return k + 1 if j < k < n and line[k] == 93 else -1  # "]"


def _stamp_mask(text: bytes) -> int:
    """A byte mask of ``text``: 0x00 over what a key blanks, 0xFF elsewhere.

    That is every ``[ sec.usec]`` stamp (the brackets) and, in lines with `` kernel:``, every year-less
    syslog time (positions in ``text`` are one less than in the key's ``b"\\n" + text``).
    """
    mask = bytearray(b"\xff") * len(text)
    blob = b"\n" + text
    if blob.find(b" kernel:") >= 0:
        for m in _SYSLOG_TIME.finditer(blob):
            mask[m.start() : m.end() - 1] = bytes(m.end() - 1 - m.start())
    for m in _STAMP_RAW.finditer(blob):
        # In ``text`` the stamp runs from the end of the prefix group to the end of the match, one byte earlier.
        lo, hi = m.end(1) - 1, m.end() - 1
        mask[lo:hi] = bytes(hi - lo)
    return int.from_bytes(mask, "big")


#: What _STAMP's ``[^\S\n]`` takes between a stamp's bracket and its digits (a bytes pattern's white space but the
#: newline), as byte values.
_BLANKS: Final = frozenset(b" \t\r\x0b\x0c")
#: The first piece of bytes :meth:`_Ahead.surely_other` compares without digits and blanks (then 4 times as many).
_PIECE_BYTES: Final = 512
#: What a stamp is made of besides its brackets and dot: digits and the blanks that pad it.
_STAMP_FILL: Final = b"0123456789 \t"


def _bare(text: bytes) -> bytes:
    """``text`` without digits and blanks: two texts with the same key have the same bare text, but for the
    month of a year-less syslog time, or the weekday and zone of a short-full one (blanked by the key), so that a
    different bare text rules out the key compare in C (~10 us for 10 KB, where a key costs a regex split: ~0.5 us
    a line).  A miss it makes for two texts that differ only in such a month is only a rebuild (the memo never
    changes a report)."""
    return text.translate(None, _STAMP_FILL)


def _same_but_stamps(text: bytes, shape: _Shape | None) -> bool:
    """Whether ``text`` is the shape's text with only the digits of its stamps changed (widths kept).

    Equal digit layouts (every digit read as 0) mean equal bytes but for digits, at the same places; an
    XOR of the two texts as integers, masked to the bytes outside the stamps, says whether any other
    digit differs.  All of it runs in C (~1 us for a 4 KB report, where a key costs ~0.5 us per line).
    The stamps found in the entry's text stand at the same places in ``text``, and match there the
    same way (the key's patterns tell a digit from a non-digit, never one digit from another), so a
    text this accepts has the entry's key: the compare only goes faster.  A stamp grown by one digit
    changes the layout: then the key decides.
    """
    return (
        shape is not None
        and len(text) == shape.size  # most misses: no translation of the ~30 KB of a window made for them
        and text.translate(DIGITS_AS_ZERO) == shape.layout
        and not (int.from_bytes(text, "big") ^ shape.number) & shape.mask
    )


class _Ahead:
    """The bytes from ``buf[start]`` that the scanner's windows may take (its byte budget, and no further than
    ``end``), for one fast look-up: lines are counted there with ``bytes.count`` (in C; a ``find`` per line is
    a Python loop).  ``to_end``: how many newlines ``buf[start:end]`` holds when the caller knows it (the scanner
    counts them once for all the look-ups near the end of its input), else -1."""

    __slots__ = ("_piece", "_piece_stop", "_stop", "buf", "end", "max_bytes", "start", "to_end")

    def __init__(self, buf: bytes, start: int, end: int, max_bytes: int, to_end: int = -1) -> None:
        self.buf, self.start, self.end, self.max_bytes, self.to_end = buf, start, end, max_bytes, to_end
        self._stop = min(end, start + max_bytes)  # the usual path's window ends there at the latest
        # The bare text of the bytes from ``start`` to ``_piece_stop`` (see surely_other), the last one made: a
        # look-up passes over ~4 entries of its slot, each compared with the same first piece.
        self._piece = b""
        self._piece_stop = -1

    def has_lines(self, lines: int) -> bool:
        """Whether ``lines`` whole lines (each with its newline) fit the budget."""
        if self.to_end >= 0:
            # The newlines up to the end are known: fewer than asked for, fewer within the budget too; and when the
            # budget reaches the end they are the answer (a count of up to 1,000 lines a look-up of a long report
            # near the end of the input otherwise: 41 M instructions of the corpus x4).
            if self.to_end < lines:
                return False
            if self._stop == self.end:
                return True
        # Counted in steps of the bytes such lines may take (64, 96 and 160 a line, then all the budget): most
        # counts stop at the first or second (the look-ups of the corpus x4 ask for 1,000 lines of 48-80 bytes on
        # average), where one count to 160 a line took ~2.5 times the bytes (~79 M instructions of the x4).
        buf, at, stop, seen = self.buf, self.start, self._stop, 0
        for per_line in (64, 96, 160, 0):
            end = stop if per_line == 0 else min(stop, self.start + per_line * lines)
            if end > at:
                seen += buf.count(b"\n", at, end)
                at = end
            if seen >= lines:
                return True
        return False

    def full_window_is(self, lines: int) -> bool:
        """Whether the scanner's full window here (complete) has ``lines`` lines: MAX_FULL_LINES, or the whole
        lines within the budget (at least one: a line cut by the budget is dropped, not the only one)."""
        if lines >= MAX_FULL_LINES:
            return self.has_lines(MAX_FULL_LINES)
        if self.has_lines(lines + 1):
            return False  # more lines than that fit: the window has more
        known = self._stop == self.end and self.to_end >= 0
        return max(self.to_end if known else self.buf.count(b"\n", self.start, self._stop), 1) == lines

    def surely_other(self, entry: _Entry) -> bool:
        """Whether the lines here that the usual path would compare with the entry (as many as it read) surely
        do not have its key: their text without digits and blanks differs (see :func:`_bare`), which
        :meth:`ReportMemo._same_key` checks first.  False when it cannot tell (too few lines yet)."""
        shape = entry.shape
        if shape is None:
            return False
        bare = shape.bare
        # Most entries passed over differ within their first bytes: the bare text of a short piece of the bytes
        # here (within the budget) that is no prefix of the entry's, nor has it as a prefix, rules the entry out
        # whatever follows (the bare text of any longer run of these bytes starts with the piece's), with no
        # copy, count and translation of kilobytes (9.8 MB of them in the shared corpus x4, ~1,200 look-ups).
        size = _PIECE_BYTES
        while True:
            stop = min(self._stop, self.start + size)
            if stop != self._piece_stop:
                self._piece, self._piece_stop = _bare(self.buf[self.start : stop]), stop
            piece = self._piece
            common = min(len(piece), len(bare))
            if piece[:common] != bare[:common]:
                return True
            if common == len(bare) or stop == self._stop:
                break
            size *= 4
        # Bytes enough for the lines (stamps may have grown; else all the budget): the bare text of the first
        # lines is the bare text of the entry's, so that of the bytes starts with it.
        for stop in (min(self._stop, self.start + 2 * shape.size + 256), self._stop):
            chunk = self.buf[self.start : stop]
            if chunk.count(b"\n") >= entry.lines:
                return not _bare(chunk).startswith(shape.bare)
        return False


def _fast_compare(entry: _Entry, ahead: _Ahead, more: int) -> tuple[bytes, bool] | None:
    """The entry's text as it stands at ``ahead.start`` (the same bytes, or the same but for the stamps' digits)
    and whether byte for byte, when ``more`` whole lines follow it, all within the byte budget."""
    # As long as the text the entry's shape holds (a stamp may have grown since the entry was made).
    buf, start, end = ahead.buf, ahead.start, ahead.end
    size = len(entry.text) if entry.shape is None else entry.shape.size
    stop = start + size
    if buf[stop : stop + 1] != b"\n":
        return None
    # The same bytes (most hits) compared in place, the entry's text given for them: no copy of kilobytes made for
    # a compare (~1,800 of the shared corpus x4); else a copy, the same but for its stamps' digits.
    if size == len(entry.text) and buf.startswith(entry.text, start):
        text, exact = entry.text, True
    else:
        text, exact = buf[start:stop], False
        if not _same_but_stamps(text, entry.shape):
            return None
    if entry.resume_at < 0:
        return None
    # The text's lines end at ``stop``: its newlines stand where the entry's do.  The ``more`` lines after it are
    # whole within the budget when that many newlines stand before the budget's end (or the input's), counted in
    # steps of the bytes such lines may take (a find a line was a call each, ~10 a look-up of the corpus x4).
    if not more:
        return None if stop + 1 - start > ahead.max_bytes else (text, exact)
    limit = min(end, start + ahead.max_bytes)
    at, seen = stop + 1, 0
    for per_line in (96, 256):
        upto = min(limit, stop + 1 + per_line * more)
        if upto > at:
            seen += buf.count(b"\n", at, upto)
            at = upto
        if seen >= more:
            return text, exact
    # Longer lines, or fewer before the end (near the end of the input): the rest one find a line (memchr), not a
    # count of all the bytes to the budget's end.
    for _ in range(more - seen):
        at = buf.find(b"\n", at, limit) + 1
        if not at:
            return None
    return text, exact


def _frames_apart(trace: tuple[Frame, ...]) -> tuple[tuple[tuple[object, ...], ...], tuple[int, ...]]:
    """A report's frames as an entry keeps them: each one's fields but its line (``frame[:7]``), and their lines.
    Each 7-tuple is made at once, of the frame's items read as the objects they are: a slice of the named tuple was
    a generic call (~700 instructions a frame, ~10,800 frames filed of the shared corpus x1), an item getter mapped
    over them ~1,000, and the named fields, compiled, unboxed the offset, the size and the line, then boxed each
    again as a new int."""
    fields: list[tuple[object, ...]] = []
    lines: list[object] = []
    for frame in trace:
        f = cast("tuple[object, ...]", frame)
        fields.append((f[0], f[1], f[2], f[3], f[4], f[5], f[6]))
        lines.append(f[7])
    return tuple(fields), cast("tuple[int, ...]", tuple(lines))


def _slot_key(head: bytes) -> bytes:
    """A header line as the memo files it: its time stamp (and year-less syslog time) blanked."""
    end = _stamp_end(head)
    if end >= 0:
        # The usual line, ``[ sec.usec] text``: _STAMP matches at its start only (after the newline put before it),
        # with an empty prefix group (no prefix starts with "["), and its split gives two NULs and the rest.
        return b"\x00\x00" + head[end:]
    head = b"\n" + head
    if head.find(b" kernel:") >= 0:
        head = _SYSLOG_TIME.sub(b"\n\x00", head, count=1)
    return b"\x00".join(_STAMP.split(head, maxsplit=1))


class ReportMemo:
    """Builds reports through a builder, reusing one already built from the same text."""

    def __init__(self) -> None:
        self._entries: dict[tuple[str, bytes], list[_Entry]] = {}
        self._known: tuple[str, bytes, list[_Entry] | None] = ("", b"", None)  # the last known_lines look-up
        # The entries of a slot by the digit layout of their header line, for fast_lookup.
        self._by_layout: dict[tuple[str, bytes], list[_Entry]] = {}
        self._count = 0  # entries in all
        # Per slot (by its list's id: a slot's list is never dropped), the most lines an entry that stopped
        # before its window's end read: the window a look-up needs.
        self._need: dict[int, int] = {}
        # Each entry's key (its text with the stamps blanked: _key), made when a compare first needs it: a log
        # repeated byte for byte, or with only the stamps' digits changed, never does.
        self._keys: dict[int, bytes | None] = {}
        self.hits = 0
        self.fast_hits = 0  # of them, found by fast_lookup

    def build(
        self, window: Window, kind: str, make: Callable[[], tuple[KernelReport, int] | None]
    ) -> tuple[KernelReport, int] | None:
        """The report (or event) at ``window[0]`` and where scanning resumes, as ``make()`` gives them.

        ``kind`` names what ``make`` builds (the header's rule): only reports of the same kind share
        entries.  ``make`` must read the window through its items, so that what it read is known, or
        say with :meth:`Window.mark_read` that it read all (the OOM builder when it searched the raw bytes
        to the end).
        """
        slot = (kind, _slot_key(window.raw[0]))
        entries = self._entries.get(slot)
        hit = self._find(window, entries, kind)
        if hit is not None:
            return hit[0], hit[1].resume
        built = make()
        if built is None or not self._keep(built[0], entries):
            return built
        report, resume = built
        raw = window.raw
        read = window.parsed_upto
        text = b"\n".join(raw[:read])
        if text.find(b"\x00") >= 0:
            return report, resume  # no key can be made of it (see _key)
        first = window.first
        own = tuple(number - first for number, _ in report.lines)
        # The first and the last of the report's lines with a time: looked for from each end (the builder parsed
        # them all), not a list of every timed line made (~58 lines a report).
        lo = hi = -1
        for i in own:
            if window.line(i).timestamp is not None:
                lo = i
                break
        if lo >= 0:
            for i in reversed(own):
                if window.line(i).timestamp is not None:
                    hi = i
                    break
        kept = _Kept(
            report,
            own,
            (lo, hi) if lo >= 0 else None,
            (_stamp_at(raw[lo]), _stamp_at(raw[hi])) if lo >= 0 else (-1, -1),
            None if own[-1] - own[0] + 1 == len(own) else itemgetter(*(i - own[0] for i in own)),
            _frames_apart(report.trace) if report.trace else None,
        )
        entry = _Entry(
            read,
            len(raw) if read >= len(raw) else -1,
            text,
            kept,
            resume,
            tuple(i for i in own if i >= resume),
            _Shape(text),
            sum(map(len, raw[:resume])) + resume if resume <= read else -1,
        )
        listed = self._entries.setdefault(slot, [])
        listed.append(entry)
        if entry.window_len == -1:
            self._need[id(listed)] = max(self._need.get(id(listed), 0), read)
        self._count += 1
        if len(self._by_layout) < 4 * MAX_KEYS:
            self._by_layout[(kind, raw[0].translate(DIGITS_AS_ZERO))] = listed
        return report, resume

    def known_lines(self, kind: str, head: bytes) -> int:
        """How many lines a window must hold for :meth:`lookup` to find any report remembered for a header.

        Only reports that did not need the rest of their window count (0: none is remembered).  The
        entries found are kept for the :meth:`lookup` of a window that starts with this same header.
        """
        entries = self._entries.get((kind, _slot_key(head)))
        self._known = (kind, head, entries)
        return self._need.get(id(entries), 0) if entries else 0

    def lookup(self, window: Window, kind: str) -> tuple[KernelReport, int, tuple[int, ...]] | None:
        """A remembered report for ``window`` (one whose builder stopped before the window's end), or None.

        Also the window indices, from where scanning resumes on, of the lines the report takes.
        """
        head = window.raw[0]
        known_kind, known_head, entries = self._known
        if known_kind != kind or known_head != head:
            entries = self._entries.get((kind, _slot_key(head)))
        found = self._find(window, entries, kind)
        if found is None:
            return None
        report, entry = found
        return report, entry.resume, entry.claims

    def _find(self, window: Window, entries: list[_Entry] | None, kind: str) -> tuple[KernelReport, _Entry] | None:
        raw = window.raw
        for entry in entries or ():
            if entry.window_len not in (-1, len(raw)) or len(raw) < entry.lines:
                continue
            text = b"\n".join(raw[: entry.lines])
            # The same bytes (a log repeated verbatim) need no blanking, nor their times parsing: one
            # compare at memory speed.  Then the same bytes but for the stamps' digits (a repeat at a later
            # time), also in C.  Otherwise blank the stamps (~0.5 us per line) and compare again.
            exact = text == entry.text
            if exact or _same_but_stamps(text, entry.shape) or self._same_key(text, entry, kind, entries):
                self.hits += 1
                window.mark_read(entry.lines)  # as far as the builder would have read
                # An exact repeat reads nothing of the window's lines (its texts and times are the entry's): it does
                # not hold them (146 windows' lines of the shared corpus x4, 1.4 MB, held by repeats to the end).
                return moved(entry.kept, window.first, None if exact else raw, None if exact else text), entry
        return None

    def fast_lookup(
        self,
        kind: str,
        layout: bytes,
        buf: bytes,
        start: int,
        end: int,
        first: int,
        max_lines: int,
        max_bytes: int,
        to_end: int = -1,
    ) -> tuple[KernelReport, int, tuple[int, ...]] | None:
        """What the scanner's memo path (``known_lines``, a window, :meth:`lookup`) gives, read off the buffer.

        ``layout``: the digit layout of the header line at ``buf[start]``, line number ``first``.  The
        report, where scanning resumes (bytes from ``start``) and the window indices of the lines to claim;
        None whenever the usual path might decide otherwise (not enough input yet, a window of other
        bounds, an entry before the matching one that a key compare might take, a stamp grown wider):
        the caller then takes the usual path.  No window is cut, no line split: the remembered text's
        length tells how many bytes to compare, and a hit has its lines where the remembered one had them.
        ``to_end``: the newlines of ``buf[start:end]`` when known, else -1 (see :class:`_Ahead`).
        """
        listed = self._by_layout.get((kind, layout))
        if not listed:
            return None
        # The entries of a slot with this layout: a hit (the same text but for the stamps) is in the header's
        # own slot, and so are the entries passed over before it.  Headers of one layout may differ in digits
        # outside their stamps (a hung task's pid, a lock's address), other slots: without a hit, the
        # header's own slot (a regex split, ~2 us, only then).
        ahead = _Ahead(buf, start, end, max_bytes, to_end)
        found = self._fast_in(listed, ahead, first, max_lines)
        if found is not None:
            return found
        nl = buf.find(b"\n", start, end)
        entries = self._entries.get((kind, _slot_key(buf[start : end if nl < 0 else nl])))
        if not entries or entries is listed:
            return None
        return self._fast_in(entries, ahead, first, max_lines)

    def _fast_in(
        self, entries: list[_Entry], ahead: _Ahead, first: int, max_lines: int
    ) -> tuple[KernelReport, int, tuple[int, ...]] | None:
        """:meth:`fast_lookup` among the entries of one memo slot."""
        need = self._need.get(id(entries), 0)
        if not need or need + 2 > max_lines:
            return self._fast_window(entries, ahead, first, max_lines)
        for entry in entries:
            if entry.window_len != -1:
                if entry.window_len == need + 2:
                    return None  # the usual window could match it
                continue
            # The usual path waits for a window of need + 2 whole lines.
            found = _fast_compare(entry, ahead, need + 2 - entry.lines)
            if found is not None:
                # Not ``*found``: compiled, a call with it goes through the method's Python wrapper.
                return self._fast_hit(entry, first, found[0], found[1])
            if not ahead.surely_other(entry):
                return None  # this entry might still match by key, before any later one
        return None

    def _fast_window(
        self, entries: list[_Entry], ahead: _Ahead, first: int, max_lines: int
    ) -> tuple[KernelReport, int, tuple[int, ...]] | None:
        """:meth:`fast_lookup` when no remembered report fits a window shorter than the first one.

        The usual path then cuts a window of ``max_lines`` lines (the scanner's first window) and compares, in
        order, the entries that read all of one that long or stopped within it; the others it passes over.
        A hit whose report ends within two lines of that window's end is built again from the full window
        (:meth:`_fast_full`).  In a fuzzer's log these are most repeats: the console lines of other
        programs after a report are read to the window's end, and long reports (lockdep's) need the full one.
        The builder of a long report stops at the first window's end (nothing is remembered of it there): when
        no entry of the first window matches, one built from the full window that does (it read more than
        ``max_lines`` lines) says that the first window's builder would stop, and is the hit.
        """
        long = False
        for entry in entries:
            if entry.window_len != max_lines and (entry.window_len != -1 or entry.lines > max_lines):
                long = long or entry.lines > max_lines
                continue
            found = _fast_compare(entry, ahead, max_lines - entry.lines)
            if found is None:
                if ahead.surely_other(entry):
                    continue
                return None  # this entry might still match by key, before any later one
            if entry.kept.own[-1] < max_lines - 2:
                return self._fast_hit(entry, first, found[0], found[1])
            return self._fast_full(entries, ahead, first)
        return self._fast_full(entries, ahead, first, past=max_lines) if long else None

    def _fast_full(
        self, entries: list[_Entry], ahead: _Ahead, first: int, past: int = 0
    ) -> tuple[KernelReport, int, tuple[int, ...]] | None:
        """:meth:`fast_lookup` for a report that goes on past the first window: the entries of the full window
        (up to MAX_FULL_LINES lines within the byte budget, complete: the scanner waits for more input
        otherwise), compared as the usual path compares them.  A hit must have read more than ``past`` lines."""
        if ahead.start + ahead.max_bytes >= ahead.end and not ahead.has_lines(MAX_FULL_LINES):
            return None  # not complete: the usual path waits for more input, or reads the end of the log
        for entry in entries:
            if entry.window_len != -1:
                if not ahead.full_window_is(entry.window_len):
                    continue
            elif entry.lines > MAX_FULL_LINES:
                continue
            # A hit's lines are within the budget: the full window holds them all.
            found = _fast_compare(entry, ahead, 0)
            if found is not None:
                return self._fast_hit(entry, first, found[0], found[1]) if entry.lines > past else None
            if not ahead.surely_other(entry):
                return None
        return None

    def _fast_hit(
        self, entry: _Entry, first: int, text: bytes, exact: bool
    ) -> tuple[KernelReport, int, tuple[int, ...]]:
        """A fast look-up's hit: the report moved to line ``first``, where scanning resumes, the lines to claim."""
        self.hits += 1
        self.fast_hits += 1
        if exact:
            return moved(entry.kept, first, None, None), entry.resume_at, entry.claims
        # Equal but for the stamps' digits, maybe of a wider stamp than the entry's own text: its lines.
        raw = text.split(b"\n")
        resume_at = sum(map(len, raw[: entry.resume])) + entry.resume
        return moved(entry.kept, first, raw, text), resume_at, entry.claims

    def _same_key(self, text: bytes, entry: _Entry, kind: str, entries: list[_Entry] | None) -> bool:
        """Whether ``text`` has the entry's key; if so, the next compare of a repeat is made with its shape."""
        shape = entry.shape
        if shape is not None and (shape.differs_early(text) or _bare(text) != shape.bare):
            return False
        key = self._keys.get(id(entry))
        if key is None:
            key = self._keys[id(entry)] = _key(entry.text)
        if _key(text) != key:
            return False
        if entry.shape is not None:
            # Same key, other layout: a stamp grew wider.  The later repeats will look like this one, their
            # header too.
            entry.shape.take(text)
            if entries is not None and len(self._by_layout) < 4 * MAX_KEYS:
                head = text.split(b"\n", 1)[0]
                self._by_layout[(kind, head.translate(DIGITS_AS_ZERO))] = entries
        return True

    def _keep(self, report: KernelReport, entries: list[_Entry] | None) -> bool:
        """Whether to remember a report just built (memory is bounded; some reports are never keyed)."""
        if (
            (entries is None and len(self._entries) >= MAX_KEYS)
            or (entries and len(entries) >= MAX_PER_KEY)
            or self._count >= MAX_ENTRIES
        ):
            return False
        # A report with a boot time has wall-clock prefixes, different in every copy.
        return report.boot_time is None
