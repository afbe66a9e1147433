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

import re
from collections.abc import Callable
from itertools import repeat
from operator import add, itemgetter
from typing import NamedTuple

from detectors.dmesg.frames import Frame
from detectors.dmesg.lines import Window, decode, line_time
from detectors.dmesg.model import KernelReport

#: A syslog time without a year (``Nov 30 06:55:30 host kernel:``): it gives no wall-clock time
#: (:func:`~detectors.dmesg.lines.parse_line` keeps none), so a key leaves it out.
_SYSLOG_TIME = re.compile(rb"\n[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d(?:\.\d+)?(?= \S+ kernel:)")
#: A line's printk time stamp, the other part of a line a key leaves out: at the line's start, or after
#: the prefixes parse_line takes off before it (a blanked syslog time and host, a ``dmesg -x`` facility
#: and level, a ``<N>`` level), matched as parse_line matches them, so that a blanked stamp is always
#: one parse_line reads as the line's time and never part of its message.
_STAMP = re.compile(
    rb"\n((?:\x00 \S+ kernel: ?"
    rb"|(?=[^\n]{0,7}:)(?:kern|user|mail|daemon|auth|syslog|lpr|news|uucp|cron|authpriv|ftp|local\d)[^\S\n]*:"
    rb"(?:emerg|alert|crit|err|warn|notice|info|debug)[^\S\n]*: ?)?(?:<\d{1,3}>)?)\[[^\S\n]*\d+\.\d+\]"
)
MAX_KEYS = 512  # distinct header lines remembered (each entry holds a report and its key: ~5-10 KB)
MAX_PER_KEY = 4  # reports remembered per header line (what follows a header may vary)


class _Entry(NamedTuple):
    lines: int  # how many window lines the builder read
    window_len: int  # the window's length when the builder read it to the end, else -1
    text: bytes  # those lines as read
    key: bytes  # those lines, stamps blanked
    report: KernelReport
    resume: int
    own: tuple[int, ...]  # window index of each report line
    timed: tuple[int, int] | None  # window index of the first and last report lines with a time
    stamps: tuple[int, int]  # where in those lines their time stands (see _stamp_at), -1: not known
    picks: (
        Callable[[list[str]], tuple[str, ...]] | None
    )  # the report's lines among the window's, from its first (None: all)
    frames: tuple[tuple[tuple[object, ...], ...], tuple[int, ...]] | None  # the frames: all fields but the line; lines


def _key(blob: bytes) -> bytes | None:
    """Lines joined, with their stamps blanked (None for text that has a NUL byte).

    A year-less syslog time becomes a NUL; each stamp is cut out and the text around it joined with a
    NUL on each side of the prefix before it (``split`` keeps the prefix group: all of it in C, where a
    ``sub`` template with a group reference would expand in Python, ~3 us a line).  Both patterns
    start with the newline before a line, a literal the regex engine finds by itself (a ``^`` is
    tried at every byte: four times slower).  No key is made of text with a NUL of its own, so two
    keys are equal only for texts equal but for those times.
    """
    if b"\x00" in blob:
        return None
    blob = b"\n" + blob
    if b" kernel:" in blob:
        blob = _SYSLOG_TIME.sub(b"\n\x00", blob)
    return b"\x00".join(_STAMP.split(blob))


_RAW_TIME = re.compile(rb"\[[^\S\n]*(\d+)\.(\d+)\]")


def _stamp_at(line: bytes) -> int:
    """Where the time of a timed line stands, when a key blanks it and it is the time parse_line reads.

    That is so for a stamp at the start or after a level or ``dmesg -x`` prefix in a line without
    `` kernel:`` (with it, parse_line may take a syslog or journalctl prefix first).  A line equal but
    for that stamp, as a key match says, has its time at the same offset.  -1: parse the line.
    """
    if b" kernel:" in line:
        return -1
    m = _STAMP.match(b"\n" + line)
    return -1 if m is None else len(m.group(1))


def _time_at(line: bytes, at: int) -> float | None:
    """The time of a line (as parse_line reads it), from the stamp at byte ``at`` (-1: parse the line)."""
    if at >= 0 and (m := _RAW_TIME.match(line, at)) is not None:
        usec = m.group(2)
        seconds: float = int(m.group(1)) + int(usec) / 10 ** len(usec)
        return seconds
    return line_time(decode(line))


def _slot_key(head: bytes) -> bytes:
    """A header line as the memo files it: its time stamp (and year-less syslog time) blanked."""
    head = b"\n" + head
    if b" kernel:" in head:
        head = _SYSLOG_TIME.sub(b"\n\x00", head, count=1)
    return b"\x00".join(_STAMP.split(head, maxsplit=1))


class ReportMemo:
    """Builds reports through a builder, reusing one already built from the same text."""

    def __init__(self) -> None:
        self._entries: dict[tuple[str, bytes], list[_Entry]] = {}
        self._known: tuple[str, bytes, list[_Entry] | None] = ("", b"", None)  # the last known_lines look-up
        self.hits = 0

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
        hit = self._find(window, entries)
        if hit is not None:
            return hit
        built = make()
        if built is None or not self._keep(built[0], entries):
            return built
        report, resume = built
        raw = window.raw
        read = window.parsed_upto
        text = b"\n".join(raw[:read])
        key = _key(text)
        if key is None:
            return report, resume
        first = window.first
        own = tuple(number - first for number, _ in report.lines)
        stamped = [i for i in own if window[i].timestamp is not None]
        entry = _Entry(
            read,
            len(raw) if read >= len(raw) else -1,
            text,
            key,
            report,
            resume,
            own,
            (stamped[0], stamped[-1]) if stamped else None,
            (_stamp_at(raw[stamped[0]]), _stamp_at(raw[stamped[-1]])) if stamped else (-1, -1),
            None if own[-1] - own[0] + 1 == len(own) else itemgetter(*(i - own[0] for i in own)),
            (tuple(f[:7] for f in report.trace), tuple(f[7] for f in report.trace)) if report.trace else None,
        )
        self._entries.setdefault(slot, []).append(entry)
        return report, resume

    def known_lines(self, kind: str, head: bytes) -> int:
        """How many lines a window must hold for :meth:`lookup` to find any report remembered for a header.

        Only reports that did not need the rest of their window count (0: none is remembered).  The
        entries found are kept for the :meth:`lookup` of a window that starts with this same header.
        """
        entries = self._entries.get((kind, _slot_key(head)))
        self._known = (kind, head, entries)
        return max((e.lines for e in entries if e.window_len == -1), default=0) if entries else 0

    def lookup(self, window: Window, kind: str) -> tuple[KernelReport, int] | None:
        """A remembered report for ``window`` (one whose builder stopped before the window's end), or None."""
        head = window.raw[0]
        known_kind, known_head, entries = self._known
        if known_kind != kind or known_head != head:
            entries = self._entries.get((kind, _slot_key(head)))
        return self._find(window, entries)

    def _find(self, window: Window, entries: list[_Entry] | None) -> tuple[KernelReport, int] | None:
        raw = window.raw
        for entry in entries or ():
            if entry.window_len not in (-1, len(raw)) or len(raw) < entry.lines:
                continue
            text = b"\n".join(raw[: entry.lines])
            # The same bytes (a log repeated verbatim) need no blanking, nor their times parsing: one
            # compare at memory speed.  Otherwise blank the stamps (~0.7 us per line) and compare again.
            exact = text == entry.text
            if exact or _key(text) == entry.key:
                self.hits += 1
                window.mark_read(entry.lines)  # as far as the builder would have read
                return _moved(entry, window, None if exact else text), entry.resume
        return None

    def _keep(self, report: KernelReport, entries: list[_Entry] | None) -> bool:
        """Whether to remember a report just built (memory is bounded; some reports are never keyed)."""
        if (entries is None and len(self._entries) >= MAX_KEYS) or (entries and len(entries) >= MAX_PER_KEY):
            return False
        # A report with a boot time has wall-clock prefixes, different in every copy.
        return report.boot_time is None


def _moved(entry: _Entry, window: Window, text: bytes | None) -> KernelReport:
    """The memoised report as it stands in ``window``: its line numbers, texts and times.

    ``text``: the window's first ``entry.lines`` lines joined (they hold the report's lines), None when
    they are byte for byte those of the memoised report (so are their times).
    """
    exact = text is None
    old = entry.report
    first = window.first
    delta = first - old.start_line
    raw = window.raw
    own = entry.own
    lo, hi = own[0], own[-1]
    if exact:
        # The texts are those of the memoised report's lines: only the numbers change.
        numbers = range(first + lo, first + hi + 1) if hi - lo + 1 == len(own) else [first + i for i in own]
        lines = tuple(zip(numbers, map(itemgetter(1), old.lines), strict=True))
        texts: list[str] = []
    else:
        assert text is not None
        if b"\r" in text:
            texts = [decode(line) for line in raw[lo : hi + 1]]
        else:
            # One decode for all the lines read (a newline never ends an invalid UTF-8 sequence early):
            # the report's own lines, ``lo`` to ``hi``, are among them.
            texts = text.decode("utf-8", errors="replace").split("\n")[lo : hi + 1]
        if entry.picks is None:
            # The report's lines follow one another (no other CPU's lines between): pair them in C.
            lines = tuple(zip(range(first + lo, first + hi + 1), texts, strict=True))
        else:
            lines = tuple(zip(map(first.__add__, own), entry.picks(texts), strict=True))
    times: dict[str, object] = {}
    if entry.timed is not None and not exact:
        a, b = entry.timed
        at_a, at_b = entry.stamps
        start = _time_at(raw[a], at_a)
        times["start_time"] = start
        times["end_time"] = start if a == b else _time_at(raw[b], at_b)
    # A copy of the frozen record with a few fields changed: dataclasses.replace would run __init__ with
    # all 28 fields again, several times the cost of the rest of this function.
    moved = object.__new__(KernelReport)
    fields = moved.__dict__
    fields.update(old.__dict__)
    fields.update(times)
    fields["start_line"] = first
    fields["end_line"] = old.end_line + delta
    fields["header"] = lines[0][1]
    fields["lines"] = lines
    if delta and entry.frames:
        # Each frame with its line moved, all in C: (head + (line + delta,)), made a Frame by tuple.__new__
        # (not the named tuple's Python-level constructor).
        heads, at = entry.frames
        fields["trace"] = tuple(map(tuple.__new__, repeat(Frame), map(add, heads, zip(map(delta.__add__, at)))))
    return moved
