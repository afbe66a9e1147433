"""Reading kernel logs: files, standard input and the live ``/dev/kmsg``, as byte chunks.

Everything here streams: files and stdin are read in chunks of
``CHUNK_SIZE`` bytes through :func:`collectors.inputs.open_input` (which
records size, digest and time for the report), and ``/dev/kmsg`` is read one
record per ``read()`` without blocking, so memory does not grow with the log.
File and stdin bytes pass through :class:`forensics.textcodec.TextNormalizer`
(UTF-16 logs become UTF-8, ANSI colour codes are removed; a plain UTF-8 log is
unchanged) on their way to the pure engine in :mod:`detectors.dmesg`; the
evidence check reads sources the same way, so cited lines resolve.
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from collectors.binary_formats import binary_format
from collectors.inputs import TrackedInput, open_input
from forensics.errors import CollectionError, InputError
from forensics.model import NotAvailable, SourceRecord
from forensics.textcodec import TextNormalizer

if TYPE_CHECKING:
    from collectors.log_identity import LogIdentity

CHUNK_SIZE = 1 << 20
KMSG_PATH = "/dev/kmsg"
KMSG_NAME = "/dev/kmsg"
# A kmsg record is at most about 1 KiB of text plus dictionary lines; read() needs room for one.
_KMSG_RECORD_MAX = 16 * 1024


@contextmanager
def open_log(name: str) -> Iterator[TrackedInput]:
    """Open a log file (or ``-`` for standard input); raises InputError with one clear line."""
    with open_input(name) as tracked:
        yield tracked


def log_chunks(tracked: TrackedInput, chunk_size: int = CHUNK_SIZE, head: bytearray | None = None) -> Iterator[bytes]:
    """The bytes of an opened log, in chunks, counted and hashed into ``tracked``'s source record.

    ``head``: filled with the log's first :data:`collectors.log_identity.HEAD_BYTES` bytes as read (decompressed,
    not normalized): what :func:`collectors.log_identity.read_identity` reads of a log file, without reading it
    again (``kforensic dmesg``; as :class:`KmsgDumpReader` keeps the ring buffer's).
    """
    # SHA-256 runs at about 1 GB/s here: hashing on the reading thread costs less than handing
    # chunks to a helper thread would.  The record hashes the bytes as read; the engine gets them normalized.
    norm = TextNormalizer()
    first = True
    keep = 0
    if head is not None:
        from collectors.log_identity import HEAD_BYTES

        keep = HEAD_BYTES
    for chunk in tracked.read_chunks(chunk_size):
        if first:
            _refuse_binary(tracked.source, chunk)
            first = False
        if head is not None and len(head) < keep:
            head += chunk[: keep - len(head)]
        if out := norm.feed(chunk):
            yield out
    if out := norm.close():
        yield out


def _refuse_binary(source: str, head: bytes) -> None:
    """A file another command reads (perf.data, a dump, trace.dat...) is not a kernel log: exit 3 naming it."""
    known = binary_format(head)
    if known is not None:
        raise InputError(
            f"{source}: not a kernel log: {known.what} (it starts with {known.magic!r})",
            hint=f"read it with `{known.reader}`; kforensic dmesg reads dmesg/journalctl -k/console text",
        )


@dataclass
class KmsgDumpReader:
    """What was read from ``/dev/kmsg``: records seen, bytes, and time taken."""

    path: str = KMSG_PATH
    records: int = 0
    size: int = 0
    started: float = field(default_factory=time.monotonic)
    lost: int = 0  # records overwritten before they could be read (EPIPE)
    head: bytearray = field(default_factory=bytearray)  # the first records (HEAD_BYTES): the boot banner's

    def record(self) -> SourceRecord:
        """The source record of the live read (the ring buffer has no stable digest)."""
        return SourceRecord(
            path=KMSG_NAME,
            size=self.size,
            sha256=NotAvailable("the kernel ring buffer is live; it has no stable digest"),
            seconds=round(time.monotonic() - self.started, 6),
            error=f"{self.lost} records were overwritten while reading" if self.lost else None,
        )

    def identity(self) -> LogIdentity:
        """What the records read say of their kernel and host (after :meth:`chunks`).

        The ring buffer is the running kernel's: its release and host are this machine's (``/proc/sys/kernel``),
        whether or not the boot banner is still in the buffer; the head gives the preemption model and,
        when the buffer wrapped, how long after boot its first record was logged.
        """
        from collectors.log_identity import parse_identity  # imported by live runs only
        from collectors.procfs import HOSTNAME, OSRELEASE, read_file

        said = parse_identity(bytes(self.head))
        release, host = (read_file(Path("/"), f).data for f in (OSRELEASE, HOSTNAME))
        return replace(
            said,
            releases=(release.decode("utf-8", "replace").strip(),) if release else said.releases,
            hosts=(host.decode("utf-8", "replace").strip(),) if host else said.hosts,
        )

    def chunks(self) -> Iterator[bytes]:
        """Every record now in the ring buffer, one ``prio,seq,usec,flags;text`` line each.

        Continuation lines of a record (`` KEY=value``, the record's dictionary)
        are dropped: they describe the device, not the message.  Raises
        :class:`CollectionError` when the kernel does not let us read.
        """
        from collectors.log_identity import HEAD_BYTES

        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
        except OSError as exc:
            raise _kmsg_error(self.path, exc) from None
        try:
            while True:
                try:
                    data = os.read(fd, _KMSG_RECORD_MAX)
                except BlockingIOError:
                    return  # the end of what the ring buffer holds now
                except OSError as exc:
                    if exc.errno == errno.EPIPE:
                        self.lost += 1  # overwritten while we read: skip to the next record
                        continue
                    raise _kmsg_error(self.path, exc) from None
                if not data:
                    return
                text = data.split(b"\n", 1)[0]
                self.records += 1
                self.size += len(text) + 1
                if len(self.head) < HEAD_BYTES:
                    self.head += text + b"\n"
                yield text + b"\n"
        finally:
            os.close(fd)


def _kmsg_error(path: str, exc: OSError) -> CollectionError:
    reason = exc.strerror or str(exc)
    if isinstance(exc, PermissionError):
        return CollectionError(
            f"cannot read {path}: {reason}",
            hint="run as root, or allow it with: sysctl kernel.dmesg_restrict=0",
        )
    if isinstance(exc, FileNotFoundError):
        return CollectionError(f"cannot read {path}: {reason}", hint="this system has no /dev/kmsg; give a log file")
    return CollectionError(f"cannot read {path}: {reason}")


def kmsg_available(path: str = KMSG_PATH) -> bool:
    """Whether ``/dev/kmsg`` can be opened for reading here (for tests and --live checks)."""
    try:
        os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
    except OSError:
        return False
    return Path(path).exists()
