"""A remembered report where a repeat of it stands (:class:`_Repeat`), made from the memo's entry for it.

Apart from :mod:`detectors.dmesg.memo`, which is compiled to C with the scanner (``make compile``): mypyc cannot
compile a class with ``__getattr__`` (a repeat's fields made on first read), nor one whose instances take other
attributes in their ``__dict__``.  The memo calls :func:`moved` for each repeat it finds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from itertools import repeat
from operator import add, itemgetter
from typing import Any, Protocol

from detectors.dmesg.lines import decode, line_time
from forensics import regexcache as rc
from forensics.types.dmesg import Frame, KernelReport


class Remembered(Protocol):
    """What a repeat reads of the memo's entry for the report it repeats (``memo._Entry``; a protocol, so that
    this module, below the memo, does not import it)."""

    @property
    def report(self) -> KernelReport: ...  # the report built from the remembered text
    @property
    def own(self) -> tuple[int, ...]: ...  # window index of each report line
    @property
    def timed(self) -> tuple[int, int] | None: ...  # window index of the first and last report lines with a time
    @property
    def stamps(self) -> tuple[int, int]: ...  # where in those lines their time stands, -1: not known
    @property
    def picks(self) -> Callable[[list[str]], tuple[str, ...]] | None: ...  # the report's lines among the window's
    @property
    def frames(self) -> tuple[tuple[tuple[object, ...], ...], tuple[int, ...]] | None: ...  # all fields but the line


_RAW_TIME = rc.compile(rb"\[[^\S\n]*(\d{1,20})\.(\d{1,20})\]")  # 64-bit numbers only, as lines._FAST


def _time_at(line: bytes, at: int) -> float | None:
    """The time of a line (as parse_line reads it), from the stamp at byte ``at`` (-1: parse the line)."""
    if at >= 0 and (m := _RAW_TIME.match(line, at)) is not None:
        usec = m.group(2)
        seconds: float = int(m.group(1)) + int(usec) / 10 ** len(usec)
        return seconds
    return line_time(decode(line))


_EXCERPT = "_excerpt"  # a remembered report's excerpt (an instance attribute, not a field: never compared nor pickled)
#: The fields of a moved report made only when something reads them (most repeats are only counted).
_LAZY = frozenset(("header", "lines", "trace", "end_time", "frame_past"))
_FIELDS = tuple(f.name for f in dataclasses.fields(KernelReport))


class _Made:
    """A lazy field of :class:`_Repeat`, made on its first read into the instance's dict (:meth:`_Repeat._made`).

    A descriptor without ``__set__``: once the instance's dict holds the field, a read finds it there first, as
    any attribute's.  (A ``__getattr__`` of the class did the same, but Python then reads every attribute of its
    instances through a slower hook, ~450 instructions a read from compiled code, where a plain one is ~100:
    ~190,000 reads of repeats of the corpus x4, ~60 M instructions.)
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, instance: _Repeat | None, owner: type | None = None) -> Any:
        if instance is None:
            raise AttributeError(self.name)  # (not a class attribute: KernelReport has none of these)
        return instance._made(self.name)


class _Repeat(KernelReport):
    """A memoised report where a repeat of it stands: its lines, frames and end time made on first use.

    A log repeating a crash a million times keeps a handful of its reports (the groups' first, last and
    sample); the others are counted, and what counting reads (signature, title, start time and line,
    release) is set at once.  Reading any other field makes them all, as :func:`_moved_rest` gives
    them, so a repeat reads exactly as the report built from its own lines would.
    """

    # Each lazy field, ``frame_past`` too: its dataclass default (None) is a class attribute of KernelReport's, which a
    # read found while the rest was not made (a repeat read by its frames alone, why.own_lines, cited no line past
    # its own where the report it repeats did).
    header = _Made("header")
    lines = _Made("lines")
    trace = _Made("trace")
    end_time = _Made("end_time")
    frame_past = _Made("frame_past")

    def _made(self, name: str) -> Any:
        """The lazy field ``name``, made now (Python asks only while the instance's dict lacks it)."""
        fields = self.__dict__
        entry, first, _, text = fields["_source"]
        if text is None and name != "lines":
            # A repeat of the same bytes: its header and end time are the remembered report's, its frames
            # theirs moved, each made alone as _moved_rest makes it; its lines, ~70 a report, only when read
            # (a kept repeat is listed with its frames and excerpt, see excerpt(), and cited by its header).
            old = entry.report
            value = old.lines[0][1] if name == "header" else old.end_time if name == "end_time" else old.frame_past
            fields[name] = _moved_trace(entry, first) if name == "trace" else value
            return fields[name]
        fields.update(_moved_rest(*fields.pop("_source")))
        return fields[name]

    def __eq__(self, other: object) -> bool:
        # The dataclass compares records of one class only; a repeat equals the report built from its lines.
        if not isinstance(other, KernelReport):
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in _FIELDS)

    __hash__ = KernelReport.__hash__

    def excerpt(self) -> str:
        source = self.__dict__.get("_source")
        if source is None or source[3] is not None:
            return super().excerpt()
        # A repeat of the same bytes: the remembered report's texts, joined once for all its repeats.
        old = source[0].report
        joined: str | None = old.__dict__.get(_EXCERPT)
        if joined is None:
            joined = old.excerpt()
            object.__setattr__(old, _EXCERPT, joined)
        return joined

    def repeats(self) -> tuple[KernelReport, int] | None:
        source = self.__dict__.get("_source")
        if source is None or source[3] is not None:
            return None  # its lines made already, or texts that differ in their times
        old = source[0].report
        return old, source[1] - old.start_line

    def __reduce__(self) -> tuple[type[KernelReport], tuple[object, ...]]:
        # Pickled (a Dask worker's result) or copied as the plain record, every field made.
        return KernelReport, tuple(getattr(self, f) for f in _FIELDS)


def origin(report: KernelReport) -> KernelReport:
    """The report built from text that ``report`` repeats (itself when it was built, not remembered).

    A repeat has the text of its origin but for the printk times: what is read from the text alone
    (:func:`detectors.dmesg.why.explain`, with lines as offsets) holds for both.
    """
    found = report.__dict__.get("_origin")
    return found if isinstance(found, KernelReport) else report


def line_numbers(report: KernelReport) -> list[int]:
    """The line numbers of a report's lines, without making the lines of a repeat that has not made them."""
    source = report.__dict__.get("_source")
    if source is not None:
        entry, first = source[0], source[1]
        return [first + i for i in entry.own]
    return [number for number, _ in report.lines]


def moved(entry: Remembered, first: int, raw: list[bytes] | None, text: bytes | None) -> KernelReport:
    """The memoised report as it stands in ``window``: its line numbers, texts and times.

    ``text``: the window's first ``entry.lines`` lines joined (they hold the report's lines), None when
    they are byte for byte those of the memoised report (so are their times).  Only what grouping
    reads is set here; the rest is made when read (:class:`_Repeat`).
    """
    old = entry.report
    # A copy of the frozen record with a few fields changed: dataclasses.replace would run __init__ with
    # all 28 fields again, several times the cost of the rest of this function.  The remembered report's fields
    # copied as a dict and given to the repeat as its own (``dict.copy`` clones the table: ~0.2 us, where an
    # update of the repeat's empty dict inserted the 32 entries one by one, ~1 us, and this function took ~4 us
    # a repeat, ~1,350 of the corpus x4).
    fields = old.__dict__.copy()
    for name in _LAZY:
        del fields[name]
    fields.pop(_EXCERPT, None)  # the remembered report's own, not the repeat's (whose texts may differ)
    if text is None and old.lines:
        # A repeat of the same bytes: its header is the remembered report's first line, set here as __getattr__
        # would set it (~0.1 us), not made there on first read (~1 us: the attribute's look-up fails first; the
        # grouping and the findings read it of ~950 of the corpus x4's ~1,350 repeats).
        fields["header"] = old.lines[0][1]
    elif entry.timed is not None and text is not None:
        assert raw is not None
        fields["start_time"] = _time_at(raw[entry.timed[0]], entry.stamps[0])
    fields["start_line"] = first
    fields["end_line"] = old.end_line + first - old.start_line
    fields["_source"] = (entry, first, raw, text)
    fields["_origin"] = old.__dict__.get("_origin", old)  # the report built from text, for readers that cache by it
    moved = object.__new__(_Repeat)
    object.__setattr__(moved, "__dict__", fields)  # (the record is frozen: its own __setattr__ refuses)
    return moved


def _moved_rest(entry: Remembered, first: int, raw: list[bytes] | None, text: bytes | None) -> dict[str, object]:
    """The lazy fields of a moved report (see :func:`moved`): header, lines, frames, end time."""
    old = entry.report
    own = entry.own
    lo, hi = own[0], own[-1]
    lines: tuple[tuple[int, str], ...]
    if text is None:
        # The texts are those of the memoised report's lines: only the numbers change.
        numbers = range(first + lo, first + hi + 1) if hi - lo + 1 == len(own) else [first + i for i in own]
        lines = tuple(zip(numbers, map(itemgetter(1), old.lines), strict=True))
    else:
        if text.find(b"\r") >= 0:
            assert raw is not None
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
    end_time: object = old.end_time
    if entry.timed is not None and text is not None:
        a, b = entry.timed
        at_a, at_b = entry.stamps
        assert raw is not None
        end_time = _time_at(raw[b], at_b) if a != b else _time_at(raw[a], at_a)
    past = old.frame_past
    if past is not None and text is not None:
        # The line past the report's own its frame was read from, as it stands here (its time stamp).
        assert raw is not None
        past = (past[0], decode(raw[lo + past[0]]))
    return {
        "header": lines[0][1],
        "lines": lines,
        "trace": _moved_trace(entry, first),
        "end_time": end_time,
        "frame_past": past,
    }


def _moved_trace(entry: Remembered, first: int) -> tuple[Frame, ...]:
    """The frames of a moved report (see :func:`moved`): the memoised report's, their lines moved."""
    old = entry.report
    delta = first - old.start_line
    if not delta or not entry.frames:
        return old.trace
    # Each frame with its line moved, all in C: (head + (line + delta,)), made a Frame by tuple.__new__
    # (not the named tuple's Python-level constructor).
    heads, at = entry.frames
    return tuple(map(tuple.__new__, repeat(Frame), map(add, heads, zip(map(delta.__add__, at)))))
