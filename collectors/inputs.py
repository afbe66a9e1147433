"""Opening input files the same way everywhere: clear errors, and a record of what was read.

This is the byte layer of every text input (logs, slabinfo/meminfo snapshots,
traces, findings files).  A compressed file is decompressed on the fly,
recognised by its magic bytes and not by its name: gzip, xz, zstd and bzip2
(the forms logrotate and journal exports leave).  The source record keeps the size
and sha256 of the file as it is on disk; a stream that ends before its end
marker (a cut file) is read up to the cut and its record says so.
"""

from __future__ import annotations

import hashlib
import io
import mmap
import os
import stat
import sys
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from collectors.mapping import map_file
from forensics.errors import InputError
from forensics.model import NotAvailable, SourceRecord
from forensics.output import register_input, register_stdin

# Imported where they are used, not at start-up (~1.8 ms of CPU of a run on a plain log): lzma for compressed
# inputs alone (decompress_chunks), threading and queue for an input over HASH_INLINE_BYTES alone (_Sha256).
if TYPE_CHECKING:
    import bz2
    import lzma
    import threading
    from queue import Queue

STDIN_NAME = "<stdin>"

#: Magic bytes of the compressed forms read transparently, most specific first (bzip2's "BZh" and its block size,
#: a digit: "BZh" alone starts text too).
COMPRESSION_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"\x1f\x8b", "gzip"),
    *((b"BZh" + bytes([digit]), "bzip2") for digit in b"123456789"),
)
#: What a decompressed input's findings cite: its path with this suffix (lines count in the decompressed text).
SOURCE_SUFFIX = {"gzip": " (gunzipped)", "xz": " (decompressed xz)", "zstd": " (decompressed zstd)",
                 "bzip2": " (decompressed bzip2)"}  # fmt: skip
_MAGIC_LEN = max(len(m) for m, _ in COMPRESSION_MAGIC)


def sniff_compression(head: bytes) -> str | None:
    """``gzip``, ``xz``, ``zstd`` or ``bzip2`` when ``head`` starts with that format's magic bytes, else None."""
    return next((kind for magic, kind in COMPRESSION_MAGIC if head.startswith(magic)), None)


#: Most bytes one step of decompression makes (a gzip or zstd "bomb" of 2 GB of one byte, 1-8 MB on disk, made
#: 0.7-3.8 GB at once from one chunk of input: each step's output is now bounded, whatever the input).
DECOMPRESS_STEP = 1 << 22
#: zstd has no output bound per call: its input goes in pieces this long (a zstd block, at most 128 KB of
#: output, takes at least 4 bytes, so a piece makes at most 8 MB; a 5 MB file costs no more CPU in pieces).
_ZSTD_PIECE = 256


class _Member:
    """One gzip member, xz or bzip2 stream or zstd frame being decompressed, each piece of output bounded."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.eof = False
        self.unused = b""  # the bytes given past the member's end (the next member's)
        if kind == "gzip":
            self._zlib = zlib.decompressobj(wbits=31)
        elif kind == "xz":
            import lzma

            self._xz: lzma.LZMADecompressor | bz2.BZ2Decompressor = lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
        elif kind == "bzip2":
            import bz2  # as lzma: imported for its own inputs only

            self._xz = bz2.BZ2Decompressor()  # the same interface as lzma's: max_length, needs_input, eof
        else:
            import zstandard  # a runtime dependency; imported only for .zst inputs

            self._zstd = zstandard.ZstdDecompressor().decompressobj()

    def feed(self, data: bytes) -> Iterator[bytes]:
        """The output of ``data``, in pieces of at most :data:`DECOMPRESS_STEP` bytes (zstd: 8 MB)."""
        if self.kind == "gzip":
            out = self._zlib.decompress(data, DECOMPRESS_STEP)
            while out:
                yield out
                # input kept back while the output was at its bound
                out = self._zlib.decompress(self._zlib.unconsumed_tail, DECOMPRESS_STEP)
            self.eof, self.unused = self._zlib.eof, self._zlib.unused_data
        elif self.kind in ("xz", "bzip2"):
            out = self._xz.decompress(data, DECOMPRESS_STEP)
            while True:
                if out:
                    yield out
                if self._xz.eof or self._xz.needs_input:
                    break
                out = self._xz.decompress(b"", DECOMPRESS_STEP)  # output it holds back
            self.eof, self.unused = self._xz.eof, self._xz.unused_data
        else:
            view = memoryview(data)
            for at in range(0, len(view), _ZSTD_PIECE):
                if out := self._zstd.decompress(view[at : at + _ZSTD_PIECE]):
                    yield out
                if self._zstd.eof:
                    self.eof, self.unused = True, self._zstd.unused_data + data[at + _ZSTD_PIECE :]
                    return


def _corrupt_data_errors(kind: str) -> tuple[type[Exception], ...]:
    """What decompressing corrupt data of ``kind`` raises: its own library's error, and EOFError.

    Each kind's library is imported for its own inputs only: zstandard's import (for its error class) was ~2 ms
    of CPU, and lzma's ~1 ms, of every run that read a gzip input (issue #28).
    """
    if kind == "gzip":
        return (zlib.error, EOFError)
    if kind == "xz":
        import lzma

        return (lzma.LZMAError, EOFError)
    if kind == "bzip2":
        return (OSError, EOFError)  # bz2 says "Invalid data stream" with an OSError
    import zstandard

    return (zstandard.ZstdError, EOFError)


def decompress_chunks(kind: str, chunks: Iterator[bytes], name: str, notes: list[str]) -> Iterator[bytes]:
    """The decompressed bytes of ``chunks``; concatenated members/streams/frames are all read.

    Memory stays bounded whatever the ratio: each piece yielded is at most :data:`DECOMPRESS_STEP` bytes
    (8 MB for zstd).  A stream that ends before its end marker (the file was cut) adds a note to
    ``notes`` and keeps the text before the cut; corrupt data is an InputError.
    """
    corrupt = _corrupt_data_errors(kind)
    member = _Member(kind)
    try:
        for chunk in chunks:
            pending = chunk
            while pending:
                if member.eof:  # the next member, stream or frame (xz's ended one would refuse more input)
                    member = _Member(kind)
                yield from member.feed(pending)
                if not member.eof:
                    break
                pending = member.unused
        if not member.eof:
            notes.append(f"the {kind} stream ends early (the file is truncated): only the text before the cut was read")
    except corrupt as exc:
        raise InputError(
            f"{name}: corrupt {kind} data ({exc})", hint="check the file, or give it decompressed"
        ) from None


#: Bytes hashed in the reading thread before the rest is handed to a hashing thread (small inputs start none).
HASH_INLINE_BYTES = 8 << 20


class _Sha256:
    """sha256 of the chunks given: the first :data:`HASH_INLINE_BYTES` at once, the rest in a thread.

    hashlib releases the GIL while it hashes, so on a large input the hashing (1.6 GB/s here: 0.55 s
    of CPU per 870 MB of trace text) runs on the other core instead of in the reader's loop.  The
    chunks go to the thread in groups of :data:`HASH_INLINE_BYTES` (each hand-over of the GIL costs
    the reader a wait when the machine is busy); at most 4 groups wait (bounded memory).
    :meth:`hexdigest` waits for the chunks given.
    """

    def __init__(self) -> None:
        self._hash = hashlib.sha256()
        self._inline = 0
        self._group: list[bytes | memoryview] = []
        self._group_bytes = 0
        self._queue: Queue[list[bytes | memoryview] | None] | None = None
        self._thread: threading.Thread | None = None

    def update(self, chunk: bytes | memoryview) -> None:
        if self._queue is None and self._inline < HASH_INLINE_BYTES:
            self._inline += len(chunk)
            self._hash.update(chunk)
            return
        self._group.append(chunk)
        self._group_bytes += len(chunk)
        if self._group_bytes >= HASH_INLINE_BYTES:
            self._hand_over()

    def _hand_over(self) -> None:
        if self._queue is None:
            import threading
            from queue import Queue

            self._queue = Queue(maxsize=4)
            self._thread = threading.Thread(target=self._run, args=(self._queue,), name="kforensic-sha256", daemon=True)
            self._thread.start()
        self._queue.put(self._group)
        self._group, self._group_bytes = [], 0

    def _run(self, queue: Queue[list[bytes | memoryview] | None]) -> None:
        while (group := queue.get()) is not None:
            for chunk in group:
                self._hash.update(chunk)
            queue.task_done()
        queue.task_done()

    def _settle(self) -> None:
        """Every chunk given is in the digest (the last group hashed here, the thread's ones waited for)."""
        if self._queue is not None:
            self._queue.join()
        for chunk in self._group:
            self._hash.update(chunk)
        self._group, self._group_bytes = [], 0

    def close(self) -> None:
        """End the thread (after the chunks given); the digest stays readable."""
        self._settle()
        if self._queue is not None and self._thread is not None:
            self._queue.put(None)
            self._thread.join()
            self._queue = self._thread = None

    def hexdigest(self) -> str:
        """The digest of every chunk given so far."""
        self._settle()
        return self._hash.hexdigest()


class _Unhashed(_Sha256):
    """No digest: for a run whose output cites no input (``kforensic profile --folded -``); 0.03-0.06 s of CPU
    less per 50 MB (the hashing and its thread's hand-overs)."""

    def update(self, chunk: bytes | memoryview) -> None:
        pass


#: The source record's digest of an input read without one (:func:`open_input`'s ``hashed=False``).
UNHASHED = "not computed: the run's output cites no input"


@dataclass
class TrackedInput:
    """A binary input being read; hashes and counts what passes through ``read_chunks``."""

    name: str
    stream: BinaryIO
    started: float = field(default_factory=time.monotonic)
    size: int = 0
    _hash: _Sha256 = field(default_factory=_Sha256)
    compression: str | None = None  # "gzip", "xz", "zstd", "bzip2" once read_chunks has seen the magic bytes
    notes: list[str] = field(default_factory=list)  # what went wrong while reading (a truncated stream)
    decompress: bool = True

    @property
    def source(self) -> str:
        """The name findings cite: the path, with a suffix when the text is the decompressed content."""
        return self.name + (SOURCE_SUFFIX[self.compression] if self.compression else "")

    def raw_chunks(self, chunk_size: int = 1 << 20) -> Iterator[bytes]:
        """Yield the bytes as stored, in chunks, hashing them on the way."""
        try:
            while chunk := self.stream.read(chunk_size):
                self.size += len(chunk)
                self._hash.update(chunk)
                yield chunk
        finally:
            self._hash.close()

    def mapped(self, min_bytes: int) -> mmap.mmap | None:
        """The file mapped read-only, when nothing was read yet and it is a regular file of ``min_bytes`` or more.

        A reader that slices the mapping copies nothing (no read() into buffers, no joins); it accounts
        what it takes with :meth:`take`, so the source record is the same.  None: standard input, a
        pipe or device, a small file, or a file that cannot be mapped (the chunks are read instead).
        """
        if self.size or self.name == STDIN_NAME:
            return None
        try:
            st = os.fstat(self.stream.fileno())
            if not stat.S_ISREG(st.st_mode) or st.st_size < min_bytes:
                return None
            mapped = map_file(self.stream.fileno(), self.name)  # cut short while read: one line, exit 3
        except (OSError, ValueError):
            return None
        mapped.madvise(mmap.MADV_SEQUENTIAL)
        return mapped

    def take(self, view: memoryview) -> None:
        """Account bytes of the mapping (:meth:`mapped`) as read: counted and hashed (in a thread past 8 MB)."""
        self.size += len(view)
        self._hash.update(view)

    def close_hash(self) -> None:
        """End the hashing thread (after what was taken); the digest stays readable."""
        self._hash.close()

    def read_chunks(self, chunk_size: int = 1 << 20) -> Iterator[bytes]:
        """Yield the content in chunks (decompressed when the file is gzip, xz, zstd or bzip2), hashing the file."""
        raw = self.raw_chunks(chunk_size)
        head = b""
        for chunk in raw:  # a pipe may give fewer bytes than the longest magic in its first read
            head += chunk
            if len(head) >= _MAGIC_LEN:
                break
        kind = sniff_compression(head) if self.decompress else None
        rest = _chain(head, raw)
        if kind is None:
            yield from (c for c in rest if c)
            return
        self.compression = kind
        yield from decompress_chunks(kind, rest, self.name, self.notes)

    def record(self, error: str | None = None) -> SourceRecord:
        """What was read so far, as a source record (the notes of the reading, if any, as its error)."""
        said = "; ".join([*self.notes, *([error] if error else [])]) or None
        return SourceRecord(
            path=self.name,
            size=self.size,
            sha256=NotAvailable(UNHASHED) if isinstance(self._hash, _Unhashed) else self._hash.hexdigest(),
            seconds=round(time.monotonic() - self.started, 6),
            error=said,
        )


#: Most (decompressed) text a reader that holds a whole input in memory takes (:func:`read_whole`): a findings
#: file, a span table.  Past it the input is refused in one line: a decompression "bomb" (2 GB of one byte in a
#: 2 MB gzip file) held 3.8 GB (findings, slab snapshots) to 14 GB (span table) before it was called no input.
WHOLE_TEXT_MAX = 256 << 20


def read_whole(tracked: TrackedInput, what: str, limit: int = WHOLE_TEXT_MAX) -> bytes:
    """All the text of ``tracked`` (decompressed), or an InputError once it passes ``limit`` bytes.

    ``what`` names what the input should be, for the error: "a findings file", "a span table".
    """
    parts: list[bytes] = []
    size = 0
    for chunk in tracked.read_chunks():
        size += len(chunk)
        if size > limit:
            raise InputError(
                f"{tracked.source}: more than {limit >> 20} MiB of text: too large for {what}",
                hint=f"check that it is {what}; split it into smaller files",
            )
        parts.append(chunk)
    return b"".join(parts)


def _chain(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    yield first
    yield from rest


def _describe_os_error(path: Path, exc: OSError) -> InputError:
    reason = exc.strerror or str(exc)
    if isinstance(exc, PermissionError):
        hint = "check the file's permissions, or run as a user who may read it"
    elif isinstance(exc, FileNotFoundError):
        hint = "check the path"
    else:
        hint = None
    return InputError(f"cannot read {path}: {reason}", hint=hint)


# Linux memory devices (major 1, Documentation/admin-guide/devices.txt) whose reads never end: the run would
# read until memory runs out (/dev/zero, /dev/urandom) or wait for ever (/dev/kmsg) instead of failing.
_ENDLESS_DEVICES = {1: "/dev/mem", 2: "/dev/kmem", 4: "/dev/port", 5: "/dev/zero", 7: "/dev/full", 8: "/dev/random",
                    9: "/dev/urandom", 11: "/dev/kmsg"}  # fmt: skip


def _refuse_endless_device(path: Path, st: os.stat_result) -> None:
    """Raise InputError when ``path`` is a device whose content never ends."""
    if not stat.S_ISCHR(st.st_mode) or os.major(st.st_rdev) != 1 or os.minor(st.st_rdev) not in _ENDLESS_DEVICES:
        return
    device = _ENDLESS_DEVICES[os.minor(st.st_rdev)]
    hint = "`kforensic dmesg --live` reads the kernel ring buffer" if device == "/dev/kmsg" else "give a file"
    raise InputError(f"cannot read {path}: it is {device}, a device whose content never ends", hint=hint)


@contextmanager
def open_input(name: str, *, decompress: bool = True, hashed: bool = True) -> Iterator[TrackedInput]:
    """Open a file (or ``-`` for standard input) for reading, with one-line errors.

    ``read_chunks`` of the result decompresses gzip, xz, zstd and bzip2 content
    (``decompress=False``: the bytes as stored; ``hashed=False``: no sha256 in its
    source record, for a run whose output cites no input).  The path is registered as an
    input of the run, so no output of the run may replace it.  Raises
    :class:`InputError` for missing files, directories, permission problems
    and other OS errors.
    """
    if name == "-":
        stdin = sys.stdin.buffer
        # `kforensic dmesg < /dev/zero` read for ever, as `dmesg /dev/zero` did before its path was checked
        try:
            st: os.stat_result | None = os.fstat(stdin.fileno())
        except (OSError, ValueError, io.UnsupportedOperation):  # not a descriptor (a test's BytesIO)
            st = None
        if st is not None:
            _refuse_endless_device(Path("standard input"), st)
            register_stdin(st)  # `kforensic dmesg - -o LOG < LOG` would replace the log it reads
        yield TrackedInput(STDIN_NAME, stdin, _hash=_Sha256() if hashed else _Unhashed(), decompress=decompress)
        return
    path = Path(name)
    register_input(path)
    try:
        st = path.stat()
        if stat.S_ISDIR(st.st_mode):
            raise InputError(f"cannot read {path}: it is a directory", hint="give a file inside it")
        _refuse_endless_device(path, st)
        fd = os.open(path, os.O_RDONLY)
    except OSError as exc:
        raise _describe_os_error(path, exc) from None
    with os.fdopen(fd, "rb") as stream:
        try:
            yield TrackedInput(str(path), stream, _hash=_Sha256() if hashed else _Unhashed(), decompress=decompress)
        except OSError as exc:
            raise _describe_os_error(path, exc) from None


def unreadable_record(name: str, error: str) -> SourceRecord:
    """A source record for an input that could not be read at all."""
    return SourceRecord(
        path=name,
        size=NotAvailable(error),
        sha256=NotAvailable(error),
        seconds=0.0,
        error=error,
    )
