"""A table of values kept between runs in a per-user file: what the interpreter makes of the code alone.

Used by :mod:`forensics.regexcache` (compiled regular expressions) and :mod:`forensics.codecache` (the code of
the functions dataclasses and named tuples generate): each keeps its table in
``$XDG_CACHE_HOME/kforensic/<name>-<interpreter>.marshal`` (``~/.cache/...``), per user and per interpreter,
beside the compiled kernels of :mod:`forensics.jit`, so that a read-only install caches as well as a checkout.

* The table is read at its first use and written back at exit when an entry was added, atomically, mode 0600;
  the file carries a format line and the SHA-256 of its content, checked when it is read.
* Anything unexpected (no cache directory, a file of another format, cut short or damaged) is an empty table and
  says nothing: the cache only saves time.  At most ``max_entries`` are kept.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import marshal
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, TypeVar

from forensics.userdirs import cache_home

K = TypeVar("K")
V = TypeVar("V")
_DIGEST = 32  # bytes of the SHA-256 after the format line


def cache_path(name: str, tag: str, environ: dict[str, str] | os._Environ[str] = os.environ) -> Path:
    """Where this user's table ``name`` is kept for the interpreter ``tag`` names."""
    return cache_home(environ) / "kforensic" / f"{name}-{tag}.marshal"  # NoHomeError (an OSError) without one


class MarshalTable(Generic[K, V]):
    """Entries loaded from the file at the first :meth:`load`; written back at exit when one was added.

    ``encode`` turns the entries into what ``marshal`` writes, ``decode`` back (raising ValueError, TypeError or
    KeyError on anything else); ``path`` says where the file is (asked at each read and write).
    """

    def __init__(
        self,
        path: Callable[[], Path],
        fmt: bytes,
        max_entries: int,
        encode: Callable[[dict[K, V]], Any],
        decode: Callable[[Any], dict[K, V]],
    ) -> None:
        self.path, self.fmt, self.max_entries, self.encode, self.decode = path, fmt, max_entries, encode, decode
        self.entries: dict[K, V] | None = None
        self.added = False

    def load(self) -> dict[K, V]:
        if self.entries is None:
            self.entries = {}
            with contextlib.suppress(OSError, ValueError, EOFError, TypeError, KeyError):
                self.entries = self._read()
        return self.entries

    def _read(self) -> dict[K, V]:
        """The entries of the file, {} when it is not this table's.

        Read once into one bytes object, its payload checked and decoded through views of it (not sliced off into
        a second copy: ~450 first touches of pages for the three tables of a ``kforensic dmesg`` run).  Read, not
        mapped: kforensic replaces the file by a rename, but a shared or prepared cache refreshed by ``cp`` or
        ``install`` (truncated, then written) while a run had it mapped would end that run with SIGBUS; a read of
        it gives bytes whose digest does not match, the table is taken as empty and the run goes on.
        """
        with open(self.path(), "rb") as file:
            blob = memoryview(file.read())
        start = len(self.fmt)
        with blob, blob[start + _DIGEST :] as payload:
            if blob[:start] != self.fmt or hashlib.sha256(payload).digest() != blob[start : start + _DIGEST]:
                return {}
            return self.decode(marshal.loads(payload))

    def add(self, key: K, value: V) -> None:
        entries = self.load()
        if len(entries) < self.max_entries:
            entries[key] = value
            if not self.added:
                self.added = True
                atexit.register(self.save)

    def save(self) -> None:
        """Write the table to its file (atomically, 0600); nothing when it cannot be written."""
        if self.entries is None or not self.added:
            return
        self.added = False
        try:
            path = self.path()  # NoHomeError (an OSError): nowhere to keep it
        except OSError:
            return
        payload = marshal.dumps(self.encode(self.entries))
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(self.fmt + hashlib.sha256(payload).digest() + payload)
            os.replace(tmp, path)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
