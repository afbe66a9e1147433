"""Opening input files the same way everywhere: clear errors, and a record of what was read."""

from __future__ import annotations

import hashlib
import os
import stat
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from forensics.errors import InputError
from forensics.model import NotAvailable, SourceRecord

STDIN_NAME = "<stdin>"


@dataclass
class TrackedInput:
    """A binary input being read; hashes and counts what passes through ``read_chunks``."""

    name: str
    stream: BinaryIO
    started: float = field(default_factory=time.monotonic)
    size: int = 0
    _hash: hashlib._Hash = field(default_factory=hashlib.sha256)

    def read_chunks(self, chunk_size: int = 1 << 20) -> Iterator[bytes]:
        """Yield the input in chunks, hashing them on the way."""
        while chunk := self.stream.read(chunk_size):
            self.size += len(chunk)
            self._hash.update(chunk)
            yield chunk

    def record(self, error: str | None = None) -> SourceRecord:
        """What was read so far, as a source record."""
        return SourceRecord(
            path=self.name,
            size=self.size,
            sha256=self._hash.hexdigest(),
            seconds=round(time.monotonic() - self.started, 6),
            error=error,
        )


def _describe_os_error(path: Path, exc: OSError) -> InputError:
    reason = exc.strerror or str(exc)
    if isinstance(exc, PermissionError):
        hint = "check the file's permissions, or run as a user who may read it"
    elif isinstance(exc, FileNotFoundError):
        hint = "check the path"
    else:
        hint = None
    return InputError(f"cannot read {path}: {reason}", hint=hint)


@contextmanager
def open_input(name: str) -> Iterator[TrackedInput]:
    """Open a file (or ``-`` for standard input) for reading, with one-line errors.

    Raises :class:`InputError` for missing files, directories, permission
    problems and other OS errors.
    """
    if name == "-":
        yield TrackedInput(STDIN_NAME, sys.stdin.buffer)
        return
    path = Path(name)
    try:
        st = path.stat()
        if stat.S_ISDIR(st.st_mode):
            raise InputError(f"cannot read {path}: it is a directory", hint="give a file inside it")
        fd = os.open(path, os.O_RDONLY)
    except OSError as exc:
        raise _describe_os_error(path, exc) from None
    with os.fdopen(fd, "rb") as stream:
        try:
            yield TrackedInput(str(path), stream)
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
