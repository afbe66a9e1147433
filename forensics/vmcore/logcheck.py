"""Whether a kernel log found beside a dump is that dump's log: its last records must be the dump's own.

kdump writes the log beside the dump from the dump (``makedumpfile --dump-dmesg`` or ``vmcore-dmesg`` on
``/proc/vmcore``), so the dump's log ends where it ends: the same last records, time and text.  A log of another
crash (an older one left in the directory, dumps copied into one place) ends elsewhere, and a log written before
the dump's end (a live snapshot of the same boot) ends earlier.  The dump's records come from drgn (the snapshot's
printk records) or from ``makedumpfile --dump-dmesg`` (:mod:`forensics.vmcore.kernellog`, VMCOREINFO alone); the
comparison is text against records, nothing read from the dump here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

#: How many of the last records must agree: one record ("Modules linked in: ...") ends many crashes alike; 16 carry
#: the crash's own lines (its registers, its stack) and their times to the microsecond.
TAIL_RECORDS = 16

#: A printk line: ``[    2.212356] text`` (the time as printk prints it, whole microseconds).
_STAMPED = re.compile(r"\[\s*(\d+\.\d{6})\]\s?(.*)")
#: makedumpfile's and vmcore-dmesg's escape of a byte that is not printable: ``\x1b``.
_ESCAPE = re.compile(r"\\x([0-9a-fA-F]{2})")
#: How much of a record a message quotes.
_QUOTED = 100

#: One printk record as compared: its time (``"2.212356"``; None for a log printed without times) and its text
#: (continuation lines joined, blanks collapsed, escapes read back).
Record = tuple[str | None, str]


@dataclass(frozen=True)
class LogCheck:
    """The log beside a dump compared with the dump's own: ``ours`` (it is the dump's log) or not, and ``why``, one
    clause quoting the records compared (``its last 16 records are the dump's, up to `[    2.206837] ...```)."""

    ours: bool
    why: str


def _clean(text: str) -> str:
    unescaped = _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)
    return " ".join("".join(c if c.isprintable() else " " for c in unescaped).split())


def text_records(text: str, last: int | None = None) -> list[Record]:
    """The records of a log as makedumpfile, vmcore-dmesg or ``dmesg`` print it: a ``[seconds]`` line starts one, an
    unstamped line (a continuation, indented) extends the one before; a log without times is one record a line.
    ``last``: only the last so many, read from the text's end (a log of megabytes is not parsed for 16 records)."""
    records: list[Record] = []
    for line in _tail_lines(text, last) if last is not None else text.splitlines():
        stamped = _STAMPED.match(line)
        if stamped is not None:
            records.append((stamped.group(1), _clean(stamped.group(2))))
        elif records and records[-1][0] is not None and line[:1].isspace():
            records[-1] = (records[-1][0], _clean(records[-1][1] + " " + line))
        elif line.strip():
            records.append((None, _clean(line)))
    return records[-last:] if last is not None else records


def _starts_record(line: str) -> bool:
    return _STAMPED.match(line) is not None or (bool(line.strip()) and not line[:1].isspace())


def _tail_lines(text: str, last: int) -> list[str]:
    """The lines of ``text`` from the start of its ``last``-th record from the end: a piece of its end, grown until
    it holds that many record starts (its first line, maybe cut, not counted), else the whole text."""
    size = 1 << 14
    while True:
        whole = size >= len(text)
        lines = text.splitlines() if whole else text[-size:].splitlines()[1:]
        found, start = 0, len(lines)
        while start > 0 and found < last:
            start -= 1
            found += _starts_record(lines[start])
        if found == last or whole:
            return lines[start:]
        size *= 4


def dump_records(log: Iterable[tuple[float, str]]) -> list[Record]:
    """The dump's printk records (seconds as printk printed them, text) as :func:`text_records` reads a log."""
    return [(f"{seconds:.6f}", _clean(text)) for seconds, text in log]


def _shown(record: Record) -> str:
    stamp, text = record
    line = f"[{stamp:>12}] {text}" if stamp is not None else text
    return "`" + (line if len(line) <= _QUOTED else line[: _QUOTED - 3] + "...") + "`"


@dataclass(frozen=True)
class DumpLog:
    """The dump's own log, read as far as a comparison needs: makedumpfile's ``text``, or drgn's ``records`` (seconds
    as printk printed them, text)."""

    text: str | None = None
    records: Sequence[tuple[float, str]] = ()

    def tail(self, n: int) -> list[Record]:
        """Its last ``n`` records."""
        return text_records(self.text, n) if self.text is not None else dump_records(self.records[-n:])

    def whole(self) -> list[Record]:
        """All its records (only to say where a log that is not the dump's stops agreeing)."""
        return text_records(self.text) if self.text is not None else dump_records(self.records)


def compare(beside: str, dumped: DumpLog) -> LogCheck:
    """Whether the log ``beside`` ends as the dump's own log ends: its last :data:`TAIL_RECORDS` records (all, when
    it holds fewer) are the dump's last, in order, time and text."""
    tail = text_records(beside, TAIL_RECORDS)
    if not tail:
        return LogCheck(False, "it holds no kernel log record")
    if all(stamp is None for stamp, _ in tail):
        # makedumpfile and vmcore-dmesg stamp every record: a file whose end holds none is no log kdump wrote (a
        # file of random bytes was quoted as "its last record `\ufffd u '\ufffd(...`").
        return LogCheck(False, "its last lines hold no printk record (`[seconds] text`): not a log kdump wrote")
    n = len(tail)
    if dumped.tail(n) == tail:
        return LogCheck(True, f"its last {n} record(s) are the dump's, up to {_shown(tail[-1])}")
    return LogCheck(False, _differs(tail, dumped.whole()))


def _differs(tail: Sequence[Record], dumped: Sequence[Record]) -> str:
    """Where the log's last records part from the dump's, one clause quoting both."""
    last = tail[-1]
    if not dumped:
        return f"its last record {_shown(last)} is not in the dump's log, which holds no record"
    if last != dumped[-1]:
        if last in dumped:
            before = len(dumped) - 1 - max(i for i, r in enumerate(dumped) if r == last)
            return (
                f"it ends {before} record(s) before the dump's log: its last record {_shown(last)} is followed in "
                f"the dump by more, up to {_shown(dumped[-1])}"
            )
        return f"its last record {_shown(last)} is not in the dump's log (whose last is {_shown(dumped[-1])})"
    back = next(i for i in range(1, len(tail)) if i >= len(dumped) or tail[-1 - i] != dumped[-1 - i])
    theirs = _shown(dumped[-1 - back]) if back < len(dumped) else "nothing"
    return f"its record {_shown(tail[-1 - back])}, {back} before its last, is {theirs} in the dump's log"
