"""systemd journal exports (``journalctl -o json``, ``-o json-seq``, ``-o export``) as kernel log lines.

``journalctl -k -o json`` is how logs are shipped off a fleet: one JSON object a line, each a journal entry with
its fields (systemd.journal-fields(7)).  ``-o export`` (the Journal Export Format,
https://systemd.io/JOURNAL_EXPORT_FORMATS/) writes each field on its own line, ``NAME=value``, or, for a value that
is not plain text, ``NAME``, a newline, its length as 64-bit little-endian, its bytes and a newline; an empty line
ends each entry.  Read as text, their titles were "... in corrupted", raw JSON leaked into facts and the entries'
times, host and boot were lost.

:class:`JournalText` turns each kernel entry into the line rsyslog writes for it, which the log readers already
take apart (detectors/dmesg/lines.py): ``2026-12-07T07:05:23.004511+00:00 web-03 kernel: [ 5123.004511] text``:
the wall time is ``__REALTIME_TIMESTAMP`` (when journald stored it, microseconds since the epoch: UTC), the printk
time ``_SOURCE_MONOTONIC_TIMESTAMP`` (the kernel's own, journald reads it off /dev/kmsg), else
``__MONOTONIC_TIMESTAMP`` (journald's receipt, on the same clock), the host ``_HOSTNAME``, the text ``MESSAGE``
(a string, or an array of bytes when it is not UTF-8).  Entries of other programs (neither ``_TRANSPORT=kernel``
nor ``SYSLOG_IDENTIFIER=kernel``) become empty lines.

Each entry is one line, in order, so that a cited line N is the file's entry N: in ``-o json`` the file's own line N
(an entry a line), in ``-o export`` its Nth entry (its fields are a dozen lines each: kept as lines, the empty ones
between an entry's message and the next cut reports in the scanner's windows of lines, and titled them corrupted).
The evidence check reads a source through the same conversion (forensics/textcodec.py), so a cited line resolves.
A message of several lines is one line here (its newlines become spaces), as it is one entry.
"""

from __future__ import annotations

import codecs
import datetime as _dt
import json
import re
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from decimal import Decimal

#: What starts a JSON entry of journalctl (``-o json``; ``-o json-seq`` puts an RS byte first).
_JSON_HEAD: Final = re.compile(rb'\A\x1e?\{"(?:__CURSOR|__REALTIME_TIMESTAMP|__MONOTONIC_TIMESTAMP|_BOOT_ID|MESSAGE|'
                               rb'_TRANSPORT|PRIORITY|_HOSTNAME|SYSLOG_[A-Z]+|_SOURCE_[A-Z_]+)"')  # fmt: skip
#: An export entry's first field: journalctl writes ``__CURSOR`` first, then the timestamps.
_EXPORT_HEAD: Final = re.compile(rb"\A(?:__CURSOR|__REALTIME_TIMESTAMP|__MONOTONIC_TIMESTAMP|__SEQNUM)=")
#: The ``NAME`` of a field (sd-journal's journal_field_valid: upper case letters, digits and underscores).
_FIELD: Final = re.compile(rb"[A-Z0-9_]+")
_LENGTH_BYTES = 8
#: util-linux ``dmesg -J`` (``--json``): one document ``{"dmesg": [{"pri": 5, "time": 0.000000, "msg": "..."}, ...]}``,
#: with ``-x`` ``"fac": "kern", "pri": "notice"`` in words.
_DMESG_JSON_HEAD: Final = re.compile(rb'\A\s*\{\s*"dmesg"\s*:\s*\[')
#: A ``dmesg -J`` record's ``"caller"``: printk's caller id, a task's ``T`` or a CPU's ``C`` and its number.
_CALLER_ID: Final = re.compile(r"[TC]\d{1,10}")
#: The start of a JSON document (an object, or an array of values; never a printk stamp "[    0.000000]").
_JSON_DOCUMENT: Final = re.compile(rb'\A\s*(?:\{\s*["}]|\[\s*[\[{"\]])')


def journal_kind(head: bytes) -> str | None:
    """``"json"`` or ``"export"`` when ``head``, the start of a file, is a journal export of that format,
    ``"dmesg-json"`` for util-linux ``dmesg -J``, else None."""
    if _JSON_HEAD.match(head) is not None:
        return "json"
    if _EXPORT_HEAD.match(head) is not None:
        return "export"
    if _DMESG_JSON_HEAD.match(head) is not None:
        return "dmesg-json"
    return None


def other_json(head: bytes) -> bool:
    """Whether ``head``, the start of a file, is a JSON document of no log format read here (:func:`journal_kind`):
    read as text, ``dmesg -J`` said "No problem found" of a healthy log and "WARNING in corrupted", message ``},``,
    of a real one (review ue15 #5); another document would be judged by its stray words the same way."""
    return _JSON_DOCUMENT.match(head) is not None and journal_kind(head) is None


#: The fields of a JSON-lines log record that hold its message, by the tools that write them (rsyslog's, Vector's and
#: Fluent Bit's ``message``, the journal's ``MESSAGE``, many applications' ``msg``, Docker's ``log``).
_MESSAGE_FIELDS: Final = ("message", "MESSAGE", "msg", "log")


def json_lines_message(head: bytes) -> str | None:
    """When ``head``, the start of a file, is JSON lines (its first line one whole JSON object) of no format read
    here: the field of that object that holds the message text (:data:`_MESSAGE_FIELDS`), ``""`` when none does;
    else None (one JSON document over several lines, or not JSON)."""
    if not other_json(head):
        return None
    first = head.split(b"\n", 1)[0] if b"\n" in head else None
    try:
        record = json.loads(first) if first is not None else None
    except ValueError:
        return None
    if not isinstance(record, dict):
        return None
    return next((name for name in _MESSAGE_FIELDS if isinstance(record.get(name), str)), "")


def _decimal() -> type[Decimal]:
    """``decimal.Decimal``, imported where a ``dmesg -J`` document is read (its times decoded as such, digits as
    printed): a run on a plain log does not import the module."""
    from decimal import Decimal

    return Decimal


def dmesg_record_line(record: object) -> bytes:
    """The line ``dmesg -r`` (or, with ``-x``'s words, ``dmesg -x``) prints for one record of ``dmesg -J``, no
    newline: ``<5>[    0.000000] Linux version ...``; empty when it is no record (no ``msg`` string).

    A record's ``"caller"`` (util-linux >= 2.39 on a kernel with CONFIG_PRINTK_CALLER: ``"T1234"``, ``"C1"``) follows
    the time as printk's console prefix, ``[    0.000000][ T1234] ``, the form the log reader takes a caller from:
    dropped, two CPUs' reports printed at once were read as one, where ``dmesg -r`` of the same buffer told them
    apart.  Only after a time stamp (``--notime``): the reader reads a caller there only.
    """
    if not isinstance(record, dict) or not isinstance(msg := record.get("msg"), str):
        return b""
    message = " ".join(msg.rstrip("\n").split("\n"))
    when = record.get("time")
    stamp = ""
    if isinstance(when, (int, _decimal())) and not isinstance(when, bool) and 0 <= when < 10**12:
        seconds = int(when)
        stamp = f"[{seconds:5d}.{int((when - seconds) * 1_000_000):06d}]"  # Decimal: the digits as printed
        caller = record.get("caller")
        if isinstance(caller, str) and _CALLER_ID.fullmatch(caller) is not None:
            stamp += f"[{caller:>6}]"
        stamp += " "
    fac, pri = record.get("fac"), record.get("pri")
    if isinstance(fac, str) and isinstance(pri, str) and fac.isalnum() and pri.isalpha():
        head = f"{fac:<6}:{pri:<6}: "  # dmesg -x's decoded facility and level
    elif isinstance(pri, int) and not isinstance(pri, bool) and 0 <= pri < 1 << 10:
        head = f"<{pri}>"  # the syslog priority, facility and level, as dmesg -r prints it
    else:
        head = ""
    return f"{head}{stamp}{message}".encode("utf-8", "replace")


def _micro(value: object) -> int | None:
    """Microseconds, a field's decimal digits (a JSON string, an export field's bytes)."""
    if isinstance(value, bytes):
        value = value.decode("ascii", "replace")
    if isinstance(value, str) and value.isdigit() and len(value) <= 20:
        return int(value)
    return None


def _text(value: object) -> str | None:
    """A field's value: a JSON string, an array of bytes (journalctl's form of a value that is not UTF-8), or the
    bytes of an export field."""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, list) and all(isinstance(b, int) and 0 <= b < 256 for b in value):
        return bytes(value).decode("utf-8", "replace")
    return None


def entry_line(fields: dict[str, object]) -> bytes:
    """The kernel log line of one journal entry (no newline), empty when it is no kernel message."""
    transport, ident = _text(fields.get("_TRANSPORT")), _text(fields.get("SYSLOG_IDENTIFIER"))
    if (transport is not None or ident is not None) and "kernel" not in (transport, ident):
        return b""
    message = _text(fields.get("MESSAGE"))
    if message is None:
        return b""
    message = " ".join(message.rstrip("\n").split("\n"))
    # The printk time only from the record's own (_SOURCE_MONOTONIC_TIMESTAMP, the kmsg record's): journald's
    # __MONOTONIC_TIMESTAMP is when journald received it (a kmsg backlog read at start-up shares one), and printed as
    # "[ s.us]" it was taken for the kernel's time since boot, durations between kernel events computed from it.
    mono = _micro(fields.get("_SOURCE_MONOTONIC_TIMESTAMP"))
    stamp = "" if mono is None else f"[{mono // 1_000_000:5d}.{mono % 1_000_000:06d}] "
    wall, host = _micro(fields.get("__REALTIME_TIMESTAMP")), _text(fields.get("_HOSTNAME"))
    if wall is None or not host or any(c.isspace() for c in host):
        # No wall time or no host: rsyslog's prefix needs both; the printk stamp alone.
        return (stamp + message).encode("utf-8", "replace")
    when = _dt.datetime.fromtimestamp(wall // 1_000_000, _dt.UTC).replace(microsecond=wall % 1_000_000)
    return f"{when.isoformat(timespec='microseconds')} {host} kernel: {stamp}{message}".encode("utf-8", "replace")


class JournalText:
    """Streams a journal export (:func:`journal_kind`) into kernel log lines, a line for each of its entries."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._export_format = kind == "export"  # else an entry a line (json, json-seq)
        self._buf = b""
        self._dmesg: DmesgJsonText | None = DmesgJsonText() if kind == "dmesg-json" else None

    def feed(self, chunk: bytes) -> bytes:
        """The lines of ``chunk`` converted (those of an entry not complete yet are held)."""
        if self._dmesg is not None:
            return self._dmesg.feed(chunk)
        self._buf += chunk
        return self._export(final=False) if self._export_format else self._json(final=False)

    @property
    def cut(self) -> str | None:
        """How a ``dmesg -J`` document ended short (:attr:`DmesgJsonText.cut`), after :meth:`close`; None else."""
        return self._dmesg.cut if self._dmesg is not None else None

    def close(self) -> bytes:
        """What is held, at the end of the input."""
        if self._dmesg is not None:
            return self._dmesg.close()
        return self._export(final=True) if self._export_format else self._json(final=True)

    def _json(self, final: bool) -> bytes:
        buf = self._buf
        cut = len(buf) if final else buf.rfind(b"\n") + 1
        self._buf = buf[cut:]
        out = []
        for line in buf[:cut].split(b"\n"):
            fields = None
            if line.strip():
                try:
                    fields = json.loads(line.lstrip(b"\x1e"))
                except ValueError:
                    fields = None
            # A line that is no JSON entry (one cut at the file's end, a stray line) is kept as it is: dropped, a
            # file of one cut entry was "empty" and a cut report's header lost; as text the log reader judges it.
            out.append(entry_line(fields) if isinstance(fields, dict) else line.lstrip(b"\x1e"))
        if not final and out:
            out.pop()  # the empty piece after the last newline
        return b"\n".join(out) + (b"\n" if not final and out else b"")

    def _export(self, final: bool) -> bytes:
        buf = self._buf
        out: list[bytes] = []
        pos = 0  # where the entry being read starts
        at = 0
        fields: dict[str, object] = {}
        while True:
            end = buf.find(b"\n", at)
            if end < 0:
                break
            line = buf[at:end]
            if not line:  # the empty line that ends an entry
                out.append(entry_line(fields) + b"\n")
                fields = {}
                at = pos = end + 1
                continue
            eq = line.find(b"=")
            if eq >= 0:
                name, value = line[:eq], line[eq + 1 :]
            elif _FIELD.fullmatch(line) is not None:
                # A binary field: its length, its bytes, a newline.
                start = end + 1
                if len(buf) < start + _LENGTH_BYTES:
                    break
                length = int.from_bytes(buf[start : start + _LENGTH_BYTES], "little")
                stop = start + _LENGTH_BYTES + length
                if len(buf) < stop + 1:
                    break
                name, value = line, buf[start + _LENGTH_BYTES : stop]
                end = stop if buf[stop : stop + 1] == b"\n" else stop - 1
            else:
                name, value = b"", b""  # no field: passed over
            fields[name.decode("ascii", "replace")] = value
            at = end + 1
        if final:
            if buf[pos:].strip():
                # An entry without its closing empty line (the file's end), its fields read up to a cut one.
                out.append(entry_line(fields) + b"\n")
            self._buf = b""
        else:
            self._buf = buf[pos:]
        return b"".join(out)


class DmesgJsonText:
    """Streams util-linux ``dmesg -J`` into the lines ``dmesg -r`` prints (:func:`dmesg_record_line`), a line for each
    record, so that a cited line N is the document's record N.

    The records are decoded one at a time as they arrive (the document is one JSON value: decoded whole, a log of
    any size would be held whole); a record cut at the input's end, or text that is no record, is kept as its text
    (the log reader judges it, as a cut journal entry's), and the document's closing ``]}`` ends it.
    """

    def __init__(self) -> None:
        self._decoder = json.JSONDecoder(parse_float=_decimal())
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buf = ""
        self._pos = -1  # where the next record is looked for, -1 before the document's "dmesg": [
        self._done = False  # the array's "]" was read
        self._records_read = 0
        self._cut_record = False  # a record cut at the input's end was kept as its text
        self.cut: str | None = None  # at the end: how the document was cut short, if it was (no closing "]")

    def feed(self, chunk: bytes) -> bytes:
        """The lines of the records ``chunk`` completes."""
        self._buf += self._utf8.decode(chunk)
        return self._records(final=False)

    def close(self) -> bytes:
        """The lines of what is held, at the end of the input; :attr:`cut` says how it ended short, if it did."""
        self._buf += self._utf8.decode(b"", final=True)
        out = self._records(final=True)
        if not self._done:
            # A cut file read as its records was "2 lines" and "No problem found", the cut unsaid.
            self.cut = (
                f"the dmesg -J document ends inside its record {self._records_read + 1} (the file is cut): the "
                "records before it were read, the cut one as its text"
                if self._cut_record
                else f"the dmesg -J document ends after {self._records_read} record(s), without its closing ']' "
                "(the file is cut)"
            )
        return out

    def _records(self, final: bool) -> bytes:
        buf, out = self._buf, []
        if self._pos < 0:
            head = _DMESG_JSON_HEAD.match(buf.encode("utf-8", "replace"))
            if head is None:
                return b""  # the head is not all here yet (journal_kind saw it whole: it comes)
            self._pos = len(head.group().decode("utf-8", "replace"))
        pos = self._pos
        while not self._done:
            while pos < len(buf) and buf[pos] in " \t\r\n,":
                pos += 1
            if pos >= len(buf):
                break
            if buf[pos] == "]":
                self._done = True
                break
            try:
                record, end = self._decoder.raw_decode(buf, pos)
            except ValueError:
                if not final:
                    break  # the record continues in the next chunk
                out.append(" ".join(buf[pos:].split()).encode("utf-8", "replace"))  # cut: kept as its text
                self._cut_record = True
                pos = len(buf)
                break
            out.append(dmesg_record_line(record))
            self._records_read += 1
            pos = end
        if self._done:
            self._buf, self._pos = "", 0  # the document's closing "}" and after: nothing of the log
        else:
            self._buf, self._pos = buf[pos:], 0
        return b"".join(line + b"\n" for line in out)


def convert(data: bytes) -> bytes:
    """The whole of ``data`` converted when it is a journal export (:func:`journal_kind`), else as it is."""
    kind = journal_kind(data)
    if kind is None:
        return data
    journal = JournalText(kind)
    return journal.feed(data) + journal.close()
