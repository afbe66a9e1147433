"""Reading kernel log records from /dev/kmsg since a known sequence number.

/dev/kmsg hands out one record per ``read()``: a header
``PRIO,SEQ,USEC,FLAGS[,caller=...];MESSAGE`` and, on the following lines that
start with a space, the record's dictionary (``SUBSYSTEM=``, ``DEVICE=``).
Non-printable bytes in the message are escaped as ``\\xNN`` by the kernel
(kernel/printk/printk.c, ``msg_add_ext_text``).  A ``c`` flag marks a
``KERN_CONT`` fragment continuing the previous record.

The reader is non-blocking: each :meth:`KmsgReader.read_new` returns what was
logged since the previous call and never waits.  Sequence numbers that jump
are reported as :class:`KmsgGap` (the ring buffer overwrote records before
they were read, or the reader was not running).  A regular file at
``root/dev/kmsg`` (tests, a saved ``cat /dev/kmsg``) is read as text with the
same format, one record per line plus its dictionary lines.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

KMSG = "dev/kmsg"
_READ_SIZE = 16384  # larger than CONSOLE_EXT_LOG_MAX (8 KiB): one record always fits


class KmsgRecord(NamedTuple):
    """One kernel log record."""

    seq: int
    facility: int
    level: int
    usec: int  # microseconds since boot (the printk clock)
    flags: str  # "-" or "c" (continuation fragment)
    message: str
    properties: tuple[tuple[str, str], ...] = ()  # SUBSYSTEM=..., DEVICE=...
    caller: str | None = None  # T123 or C1 with CONFIG_PRINTK_CALLER

    @property
    def is_continuation(self) -> bool:
        """Whether this record continues the previous one (``KERN_CONT``)."""
        return "c" in self.flags


class KmsgGap(NamedTuple):
    """Records that were never read: sequence numbers ``after_seq + 1`` .. ``next_seq - 1``."""

    after_seq: int
    next_seq: int

    @property
    def missing(self) -> int:
        """How many records are missing."""
        return self.next_seq - self.after_seq - 1


@dataclass(frozen=True)
class KmsgBatch:
    """What one read returned: new records, gaps, and an error when the log could not be read."""

    records: tuple[KmsgRecord, ...]
    gaps: tuple[KmsgGap, ...] = ()
    error: str | None = None


def parse_kmsg_record(raw: str) -> KmsgRecord | None:
    """Parse one record (header line plus dictionary lines); None when it is not a kmsg record."""
    head, *dict_lines = raw.split("\n")
    prefix, semicolon, message = head.partition(";")
    fields = prefix.split(",")
    if not semicolon or len(fields) < 4:
        return None
    try:
        prio, seq, usec = int(fields[0]), int(fields[1]), int(fields[2])
    except ValueError:
        return None
    caller = next((f.removeprefix("caller=") for f in fields[4:] if f.startswith("caller=")), None)
    properties = []
    for line in dict_lines:
        if line.startswith(" ") and "=" in line:
            key, _, value = line[1:].partition("=")
            properties.append((key, value))
    return KmsgRecord(seq, prio >> 3, prio & 7, usec, fields[3], message, tuple(properties), caller)


def parse_kmsg_text(data: bytes) -> list[KmsgRecord]:
    """Parse a saved /dev/kmsg stream: a record per line, dictionary lines start with a space."""
    records: list[KmsgRecord] = []
    current: list[str] = []

    def flush() -> None:
        if current:
            record = parse_kmsg_record("\n".join(current))
            if record is not None:
                records.append(record)
            current.clear()

    for raw in data.decode("utf-8", errors="replace").split("\n"):
        line = raw.removesuffix("\r")
        if line.startswith(" ") and current:
            current.append(line)
        elif line:
            flush()
            current.append(line)
    flush()
    return records


def find_gaps(records: list[KmsgRecord], last_seq: int | None) -> tuple[KmsgGap, ...]:
    """Gaps in the sequence numbers of ``records`` (in order), starting after ``last_seq``."""
    gaps = []
    previous = last_seq
    for record in records:
        if previous is not None and record.seq > previous + 1:
            gaps.append(KmsgGap(previous, record.seq))
        previous = record.seq
    return tuple(gaps)


class KmsgReader:
    """Non-blocking reader of the records logged after ``last_seq`` (None: everything still in the buffer).

    Keep one reader open for a whole run: after the first call, each read
    returns only records logged since the previous one, without rereading the
    buffer.
    """

    def __init__(self, root: Path, last_seq: int | None = None) -> None:
        self.path = root / KMSG
        self.last_seq = last_seq
        self._fd: int | None = None
        self._is_device = False
        self._error: str | None = None
        try:
            self._fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            self._is_device = stat.S_ISCHR(os.fstat(self._fd).st_mode)
        except OSError as exc:
            self._error = f"{self.path}: {exc.strerror or exc}"

    def close(self) -> None:
        """Close the device."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> KmsgReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _read_device(self, fd: int) -> tuple[list[KmsgRecord], str | None]:
        records: list[KmsgRecord] = []
        while True:
            try:
                raw = os.read(fd, _READ_SIZE)
            except BlockingIOError:
                break  # nothing more logged: the non-blocking end of the log
            except OSError as exc:
                if exc.errno == errno.EPIPE:
                    continue  # the record we were at was overwritten; the next read resumes at the oldest
                return records, f"{self.path}: {exc.strerror or exc}"
            if not raw:
                break
            record = parse_kmsg_record(raw.decode("utf-8", errors="replace").rstrip("\n"))
            if record is not None:
                records.append(record)
        return records, None

    def _read_file(self, fd: int) -> tuple[list[KmsgRecord], str | None]:
        os.lseek(fd, 0, os.SEEK_SET)
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return parse_kmsg_text(b"".join(chunks)), None

    def read_new(self) -> KmsgBatch:
        """The records logged since the last call (or since ``last_seq``), with any sequence gaps."""
        if self._fd is None:
            return KmsgBatch((), (), self._error or f"{self.path} is closed")
        reader = self._read_device if self._is_device else self._read_file
        records, error = reader(self._fd)
        if self.last_seq is not None:
            # A sequence number lower than or equal to the last one is either a record we
            # already have, or a new boot whose numbering restarted; the caller passes
            # last_seq only for the same boot id, so these are duplicates.
            records = [r for r in records if r.seq > self.last_seq]
        gaps = find_gaps(records, self.last_seq)
        if records:
            self.last_seq = records[-1].seq
        return KmsgBatch(tuple(records), gaps, error)
