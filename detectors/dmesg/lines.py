"""Kernel log line prefixes: timestamps, levels, callers and the wrappers of log tools.

A kernel message reaches a file through many hands: ``dmesg`` prints
``[   12.345678] text``, ``dmesg -r`` and kdump's ``vmcore-dmesg.txt`` keep the
``<4>`` level, ``CONFIG_PRINTK_CALLER`` adds ``[T1234]`` (task) or ``[C2]`` (CPU),
syslog and ``journalctl`` put ``Mon DD HH:MM:SS host kernel:`` in front, ``dmesg
-x`` adds ``kern  :warn  :``, ``dmesg -T`` prints a wall clock time and
``/dev/kmsg`` gives ``level,seq,usec,flags;text`` records.  :func:`parse_line`
peels these layers off in that order and returns the message body with what the
prefixes said.
"""

from __future__ import annotations

import datetime as _dt
import functools
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Final, NamedTuple, overload

from forensics import regexcache as rc
from forensics.types import log_prefix

if TYPE_CHECKING:
    # mypyc's native 64-bit integer, for the offsets and digits parse_raw reads off a line's bytes: compiled, a C
    # integer (and a byte read by index a load), where an ``int`` is a tagged value that every operation tests and a
    # byte a call; in the source (where this import never runs) the names stay plain ints.
    from mypy_extensions import i64

# Wrappers that come before the kernel's own prefix, tried in order (first match wins).
# Numbers of at most 20 digits (a kernel prints 64 bits): a longer run is no stamp, and is never converted
# (forensics.units.log_dec); the delimiter after each keeps a longer run from matching in part.
_KMSG: Final = rc.compile(r"(\d{1,20}),(\d{1,20}),(\d{1,20}),[^;]*;")
_SYSLOG: Final = rc.compile(
    f"(?:{log_prefix.SHORT}"  # syslog / journalctl short
    # short-iso, rfc3339: the group is the whole stamp (its date and time may be parted by a space, not only a "T")
    f"|({log_prefix.ISO})"
    f"|{log_prefix.MONOTONIC}"  # journalctl short-monotonic
    # journalctl short-full, "Mon 2026-12-07 14:30:02 CET": it times nothing (a zone's name gives no offset); its
    # lines were not taken apart ("kernel BUG in corrupted [corrupted]")
    f"|{log_prefix.SHORT_FULL})"
    r" \S+ kernel: ?"
)
#: A console line's stamp, written by the machine that captured it (``ts``, minicom, grabserial): before the kernel's.
_CAPTURE: Final = rc.compile(log_prefix.CAPTURE)
_CAPTURE_FIRST: Final = frozenset("[0123456789")  # what one of them starts with, but ts's default "Dec 07 ..."
_MONTHS: Final = frozenset(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"))
_DMESG_X: Final = rc.compile(
    r"(?:kern|user|mail|daemon|auth|syslog|lpr|news|uucp|cron|authpriv|ftp|local\d)\s*:"
    r"(emerg|alert|crit|err|warn|notice|info|debug)\s*: ?"
)
_LEVEL: Final = rc.compile(r"<(\d{1,3})>")
_DROPPED: Final = rc.compile(r"\*\* \d+ printk messages dropped \*\* ?")
_MONO: Final = rc.compile(r"\[\s*(\d{1,20})\.(\d{1,20})\]")
_WALL: Final = rc.compile(r"\[[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}\]")
_CALLER: Final = rc.compile(r"\[\s*([TC]\d+)\]")

# The common case, a bare ``[ sec.usec]`` stamp and maybe a caller, in one match.
_FAST: Final = rc.compile(r"\[\s*(\d{1,20})\.(\d{1,20})\](?:\[\s*([TC]\d+)\])? ?")

_LEVEL_NAMES: Final = ("emerg", "alert", "crit", "err", "warn", "notice", "info", "debug")


class LogLine(NamedTuple):
    """One line of a kernel log with its prefixes taken apart.

    ``number`` is 1-based; ``text`` the whole line as read (``\\r`` removed);
    ``body`` the kernel message without prefixes; ``timestamp`` seconds since
    boot when the line carries a ``[ sec.usec]`` stamp; ``context`` the printk
    caller (``T1234`` or ``C2``); ``level`` the console log level 0..7;
    ``wall`` the wall-clock time when the prefix names the year (journalctl
    short-iso, ``dmesg -T``), so that a line with both gives the boot time.
    """

    number: int
    text: str
    body: str
    timestamp: float | None
    context: str | None
    level: int | None
    prefixed: bool = True  # False: no kernel prefix at all (console text of another program)
    wall: float | None = None  # seconds since the epoch, when the prefix gives a full date (ISO, dmesg -T)


_new_tuple: Final = tuple.__new__
#: The class as a Final name: compiled, a static read where the class's own name is a look-up in the module's dict
#: at every line (~27,000 of the shared corpus).
_LOG_LINE: Final = LogLine


def parse_line(number: int, text: str) -> LogLine:
    """Split one decoded line into its prefixes and message body."""
    if text[:1] == "[" and (m := _FAST.match(text)) is not None and " kernel:" not in text:
        # Most lines of a console log: no wrapper (journalctl's "[ sec] host kernel:" is one).  Made with
        # tuple.__new__: the NamedTuple's own __new__ is a Python function, ~0.4 us a line more.
        sec, usec, caller = m.groups()
        body = text[m.end() :]
        return _new_tuple(
            _LOG_LINE, (number, text, body, int(sec) + int(usec) / 10 ** len(usec), caller, None, True, None)
        )
    pos = 0
    timestamp: float | None = None
    level: int | None = None
    if text[:1].isdigit() and (m := _KMSG.match(text)):
        # /dev/kmsg record: "prio,seq,usec,flags;message" (Documentation/ABI/testing/dev-kmsg).
        level = int(m.group(1)) & 7
        timestamp = int(m.group(3)) / 1e6
        return _new_tuple(_LOG_LINE, (number, text, text[m.end() :], timestamp, None, level, True, None))
    # Cheap substring checks first: most lines carry none of these wrappers.
    wall: float | None = None
    start = 0  # where the kernel's own prefixes may start: after a capture tool's stamp
    if " kernel:" in text and (m := _SYSLOG.match(text)):
        pos = m.end()
        if (stamp := m.group(1)) is not None:
            wall = _iso_wall(stamp)
    elif (text[:1] in _CAPTURE_FIRST or text[:3] in _MONTHS) and (m := _CAPTURE.match(text)) is not None:
        # What the machine capturing the console wrote as it read the line (log_prefix.CAPTURE_FORMS), before the
        # kernel's prefixes.  Tried after syslog's (most of a syslog file's lines), and only on a line starting as
        # one of them does: a match tried on every other line was ~0.35 us more a line, interpreted.
        start = pos = m.end()
        if m.lastindex is not None:
            wall = _iso_wall(m.group(m.lastindex))
    elif ":" in text[:8] and (m := _DMESG_X.match(text)):
        level = _LEVEL_NAMES.index(m.group(1))
        pos = m.end()
    if text.startswith("**", pos) and (m := _DROPPED.match(text, pos)):
        pos = m.end()
    if text.startswith("<", pos) and (m := _LEVEL.match(text, pos)):
        level = int(m.group(1)) & 7
        pos = m.end()
    stamped = False
    if not text.startswith("[", pos):
        pass
    elif m := _MONO.match(text, pos):
        timestamp = int(m.group(1)) + int(m.group(2)) / 10 ** len(m.group(2))
        pos = m.end()
        stamped = True
    elif m := _WALL.match(text, pos):
        wall = _ctime_wall(text[m.start() + 1 : m.end() - 1])
        pos = m.end()
        stamped = True
    context = None
    if stamped and text.startswith("[", pos) and (m := _CALLER.match(text, pos)):
        context = m.group(1)
        pos = m.end()
    if stamped and text.startswith(" ", pos):
        # printk puts one space between the prefix and the message.
        pos += 1
    # tuple.__new__: the named tuple's own constructor is a Python function (~3,000 instructions a line more, compiled:
    # the console lines of other programs amid a report, ~1,500 of the shared corpus x4, come here).
    # A capture stamp alone is no kernel prefix: such a line is console text of another program, as it is uncaptured.
    return _new_tuple(_LOG_LINE, (number, text, text[pos:], timestamp, context, level, pos > start, wall))


#: 10**k for the fractions :func:`parse_raw` reads, as doubles (at most 15 digits: every such numerator and 10**k
#: are exact doubles, so that their quotient is the correctly rounded one a division of two Python ints gives, compiled
#: or not; compiled, the division and the sum with the seconds are then the CPU's, not calls of the number protocol).
_POW10: Final = tuple(float(10**k) for k in range(16))


#: The caller a line parsed last gave (``T1234``, ``C2``), as bytes and text: the next line of the same task or CPU
#: shares its string, not a slice of its own (a report's lines are mostly one task's: ~12,000 strings of ~56 bytes
#: held by the parsed lines of the shared corpus x4).  A list: compiled, a Final name is a static read.
_LAST_CALLER: Final[list[tuple[bytes, str]]] = [(b"", "")]


def parse_raw(number: int, raw: bytes) -> LogLine:
    """``parse_line(number, decode(raw))``: the common ``[ sec.usec]`` stamp read from the line's bytes.

    A stamp of spaces, 1-15 digits, a dot and 1-15 digits, maybe a caller (``[``, spaces, ``T`` or ``C``,
    digits, ``]``), is read here, byte by byte (its bytes are ASCII: their offsets are the text's); any other
    line, any byte the stamp's pattern might take otherwise (a tab, another digit, another ``[``), and a line
    journalctl's short-monotonic prefix may match (``[ sec.usec] host kernel:``) go to :func:`parse_line`.
    Compiled, the digits are read without a regex match, its groups or ``int`` of each, in native integers.
    """
    text = decode(raw)
    n: i64 = len(raw)
    if n > 4 and raw[0] == 91:  # "["
        i: i64 = 1
        while i < n and raw[i] == 32:
            i += 1
        start = i
        sec, i = _ascii_digits(raw, i, n)
        if start < i <= start + 15 and i < n and raw[i] == 46:  # "."
            start = i + 1
            frac, i = _ascii_digits(raw, start, n)
            digits = i - start
            if 0 < digits <= 15 and i < n and raw[i] == 93:  # "]"
                i += 1
                caller: str | None = None
                if i < n and raw[i] == 91:  # "[": a caller ("[ T1234]", "[    C2]"), else the pattern's way
                    j = i + 1
                    while j < n and raw[j] == 32:
                        j += 1
                    k = j + 1
                    if j < n and (raw[j] == 67 or raw[j] == 84):  # "C", "T"
                        while k < n and 48 <= raw[k] <= 57:
                            k += 1
                    if not (j + 1 < k < n and raw[k] == 93):
                        return parse_line(number, text)
                    caller = _caller(raw, text, j, k)
                    i = k + 1
                elif i + 1 < n and raw[i] == 32 and _journal_kernel(raw, i + 1):
                    return parse_line(number, text)
                if i < n and raw[i] == 32:
                    i += 1
                # Both below 10**15: exact as doubles, as ``int + int / float`` converts them.
                seconds = float(sec) + float(frac) / _POW10[digits]
                return _new_tuple(_LOG_LINE, (number, text, text[i:], seconds, caller, None, True, None))
    return parse_line(number, text)


def _ascii_digits(raw: bytes, i: i64, n: i64) -> tuple[i64, i64]:
    """The number the ASCII digits from ``raw[i]`` (before ``n``) write, and where they end: at most 16 digits are
    read (a 16th says that they are no stamp's, and 15 fit a native integer: 10**15 < 2**63)."""
    value: i64 = 0
    stop = i + 16 if i + 16 < n else n
    while i < stop:
        c: i64 = raw[i]
        if c < 48 or c > 57:
            break
        value = value * 10 + (c - 48)
        i += 1
    return value, i


def _caller(raw: bytes, text: str, j: i64, k: i64) -> str:
    """``text[j:k]``, the caller of a line (its bytes ``raw[j:k]`` are ASCII), as the line parsed last gave it when
    the same (see :data:`_LAST_CALLER`): compared byte by byte, not sliced."""
    last_raw, last = _LAST_CALLER[0]
    size = k - j
    if size == len(last_raw):
        t: i64 = 0
        while t < size and raw[j + t] == last_raw[t]:
            t += 1
        if t == size:
            return last
    caller = text[j:k]
    _LAST_CALLER[0] = (raw[j:k], caller)
    return caller


def _journal_kernel(raw: bytes, at: i64) -> bool:
    r"""Whether journalctl's short-monotonic prefix may follow a stamp's ``"] "`` (``at`` just past them): its
    pattern's ``\S+ kernel:`` takes the run up to the first white space, which must be the space of `` kernel:``.

    The first ASCII space from ``at`` on is that of `` kernel:``, after one byte or more, or the pattern cannot
    match there (an earlier white space of another kind, or a space not followed by ``kernel:``; a multi-byte
    character holds no ASCII byte).  The first word read byte by byte, where an ``in`` test was a pass over the
    line (and a ``find`` from an offset a generic method call, compiled).
    """
    n: i64 = len(raw)
    space = at
    while space < n and raw[space] != 32:
        space += 1
    return at < space <= n - 8 and raw[space + 1] == 107 and raw[space : space + 8] == b" kernel:"  # "k"


def local_wall_stamp(text: str) -> str | None:
    """``dmesg -T``'s ``[Mon Nov 30 06:55:29 2026]`` at the start of ``text``, or None: a time of the host's local
    zone, which the line does not name (read as if UTC, :func:`_ctime_wall`)."""
    return m.group() if (m := _WALL.match(text)) is not None else None


#: An ISO 8601 stamp's offset from UTC at its end (``+01:00``, ``-0500``).
_OFFSET_AT_END: Final = rc.compile(r"[+-]\d\d:?\d\d$")


def naive_iso_stamp(text: str) -> str | None:
    """The ISO 8601 stamp of a syslog line that names no offset (``2026-12-07 14:30:02 host kernel:``), or of a
    capture tool's (``[2026-12-07 14:30:02.123] [ 2.2] ...``), or None: :func:`_iso_wall` takes it as UTC, which the
    line does not say (journalctl's short-iso and rsyslog's RFC 3339 name one)."""
    m = _SYSLOG.match(text) if " kernel:" in text else None
    stamp = m.group(1) if m is not None else None
    if m is None and (capture := _CAPTURE.match(text)) is not None and capture.lastindex is not None:
        stamp = capture.group(capture.lastindex)  # a capture tool's date and time: no form of it names a zone
    if stamp is None or stamp.endswith("Z") or _OFFSET_AT_END.search(stamp) is not None:
        return None
    return stamp


def syslog_prefixed(text: str) -> bool:
    """Whether a line was written by syslog or journald (``Mon DD HH:MM:SS host kernel:`` and journalctl's other
    formats), not read off a console or the ring buffer: such a log cannot hold a panic (user space stops first)."""
    return " kernel:" in text and _SYSLOG.match(text) is not None


def wall_zone_unknown(text: str) -> bool:
    """Whether the wall-clock time of ``text``'s prefix names no zone: ``dmesg -T``'s (the host's local time) or an
    ISO stamp without an offset; its ``LogLine.wall`` is that time read as if it were UTC."""
    return local_wall_stamp(text) is not None or naive_iso_stamp(text) is not None


def line_time(text: str) -> float | None:
    """``parse_line(n, text).timestamp``: the same value, without taking the rest of the line apart."""
    if text[:1] == "[" and (m := _FAST.match(text)) is not None and " kernel:" not in text:
        usec = m.group(2)
        seconds: float = int(m.group(1)) + int(usec) / 10 ** len(usec)
        return seconds
    return parse_line(0, text).timestamp


def _iso_wall(stamp: str) -> float | None:
    """Seconds since the epoch of an ISO 8601 time (naive times are taken as UTC)."""
    try:
        when = _dt.datetime.fromisoformat(stamp.replace(",", "."))
    except ValueError:
        return None
    return (when if when.tzinfo else when.replace(tzinfo=_dt.UTC)).timestamp()


@functools.lru_cache(maxsize=1024)
def _ctime_wall(stamp: str) -> float | None:
    """Seconds since the epoch of ``dmesg -T``'s ``Mon Nov 30 06:55:29 2026``, the host's local time, read as if it
    were UTC: its digits as printed, the same for every reader.  Read in the reading machine's zone (TZ), two
    analysts in two zones got two different times of one file, each shown as a UTC fact; the zone stays unknown,
    which "what it could not judge" says (forensics/pipelines/dmesg.py)."""
    try:
        return _dt.datetime.strptime(stamp, "%a %b %d %H:%M:%S %Y").replace(tzinfo=_dt.UTC).timestamp()
    except ValueError:
        return None


def decode(raw: bytes) -> str:
    """Decode one line as every kforensic reader does (UTF-8, replacement, no trailing CR)."""
    # Positional arguments: compiled, the decoder is called directly (not as a method with a keyword), ~30 ns a line
    # less (~28,000 lines of the shared corpus).  The CR is looked for in the bytes, by index (compiled, a load; the
    # text's ``endswith`` was a call, ~100 instructions a line): a CR is ASCII, the last character of the text exactly
    # when it is the last byte (an incomplete sequence before it is one replacement character either way, ended by
    # the CR or by the end of the bytes).
    n = len(raw)
    if n and raw[n - 1] == 13:  # "\r"
        raw = raw[: n - 1]
    return raw.decode("utf-8", "replace")


class Window(Sequence[LogLine]):
    """Consecutive raw lines, decoded and parsed on first access (most are never looked at)."""

    def __init__(
        self,
        first: int,
        raw: list[bytes],
        seed: Window | None = None,
        known: dict[int, LogLine] | None = None,
        shared: list[LogLine | None] | None = None,
        shared_at: int = 0,
        shared_n: int = 0,
    ) -> None:
        self._first = first
        self._raw = raw
        self._parsed: list[LogLine | None] = [None] * len(raw)
        self._upto = 0  # one past the last line parsed
        # A shorter window of the same lines, already looked at: its parsed lines are taken instead of
        # parsing them again (what this window's reader looks at is counted as usual).
        self._seed = seed._parsed if seed is not None and seed._first == first else None
        # Lines parsed by other windows of the same log, by line number (the scanner's: its windows overlap).
        self._known = known
        # Or, for a window of lines split once for all windows (the scanner's), the lines parsed of them, by index:
        # line ``i < shared_n`` of this window is ``shared[shared_at + i]`` (a list index, where ``known`` hashes a
        # number); a line after them (the input's last, without its newline) is parsed alone.
        self._shared = shared
        self._shared_at = shared_at
        self._shared_n = shared_n

    @property
    def parsed_upto(self) -> int:
        """How many lines from the first are within what was looked at (one past the last line parsed)."""
        return self._upto

    @property
    def first(self) -> int:
        """The line number of the first line."""
        return self._first

    def mark_read(self, upto: int | None = None) -> None:
        """Say that the lines up to ``upto`` (all by default) were looked at without parsing them.

        For a caller that searched the raw bytes of them all, or one that reused what an earlier
        look at the same lines gave.
        """
        self._upto = max(self._upto, len(self._raw) if upto is None else upto)

    @property
    def raw(self) -> list[bytes]:
        """The lines as read, undecoded (for byte searches that need not parse every line)."""
        return self._raw

    def __len__(self) -> int:
        return len(self._raw)

    def __iter__(self) -> Iterator[LogLine]:
        # Sequence's own __iter__ calls __getitem__ for each line; the lines looked at already are taken as
        # they are (the report builder walks a window line by line: ~50,000 lines of the shared corpus).
        load = self._load
        for i, line in enumerate(self._parsed):
            yield load(i) if line is None else line

    @overload
    def __getitem__(self, index: int) -> LogLine: ...

    @overload
    def __getitem__(self, index: slice) -> list[LogLine]: ...

    def __getitem__(self, index: int | slice) -> LogLine | list[LogLine]:
        if isinstance(index, int):  # first: compiled, a type check (``slice`` is a look-up of a builtin name each call)
            line = self._parsed[index]
            return self._load(index % len(self._raw)) if line is None else line
        return [self[i] for i in range(*index.indices(len(self._raw)))]

    def line(self, i: int) -> LogLine:
        """``self[i]`` for an index from 0 to ``len(self) - 1``: compiled, a native call with the index unboxed (the
        ``[]`` of a sequence boxes it, calls the generic item protocol and tests it for a slice: ~270 instructions
        a line of the report builder's walk, ~48,000 lines of the shared corpus x4)."""
        line = self._parsed[i]
        return self._load(i) if line is None else line

    def _load(self, i: int) -> LogLine:
        """Line ``i`` (from 0), not looked at before through this window: a seed's, a known one or parsed."""
        seed = self._seed
        if seed is None or i >= len(seed) or (line := seed[i]) is None:
            shared = self._shared
            if shared is not None and i < self._shared_n:
                j = self._shared_at + i
                if (line := shared[j]) is None:
                    line = shared[j] = parse_raw(self._first + i, self._raw[i])
            else:
                known = self._known
                number = self._first + i
                if known is None:
                    line = parse_raw(number, self._raw[i])
                elif (line := known.get(number)) is None:
                    line = known[number] = parse_raw(number, self._raw[i])
        self._parsed[i] = line
        if i >= self._upto:
            self._upto = i + 1
        return line


def drops_messages(text: str) -> bool:
    """Whether a line as read says printk dropped messages just before it (``** N printk messages dropped **``):
    the lines above it are not the ones printed before it."""
    return "printk messages dropped" in text and _DROPPED.search(text) is not None
