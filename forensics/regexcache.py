"""Compiled regular expressions kept between runs: the rule tables' patterns without their compile.

``re.compile`` parses a pattern and generates its matcher code in pure Python: the ~330 patterns of
``kforensic dmesg`` (the rule table, the why reading, the frame and stack parsers) took 30-35 ms of every
run, as much as reading 10 MB of log.  What the compiler makes (the flags, the code as a list of
integers, the groups) is a function of the pattern, its flags and the interpreter alone; kept in a file,
it is handed straight to the regex engine (``_sre.compile``, which is what ``re.compile`` ends with and
which validates the code it is given), ~2 ms for all of them.

* The file is per user and per interpreter, beside the compiled kernels of :mod:`forensics.jit`:
  ``$XDG_CACHE_HOME/kforensic/regex-<interpreter>.marshal`` (``~/.cache/...``); a read-only install
  caches as well as a checkout.  It is written at the end of a run that compiled a pattern it did not
  hold, atomically, mode 0600; its content is checked against the SHA-256 it carries.
* Anything unexpected (no cache directory, a file of another format, an interpreter whose ``re``
  internals differ) falls back to ``re.compile`` and says nothing: the cache only saves time.
* Only patterns fixed by the code go through it (none built from input), at most :data:`MAX_ENTRIES`.
"""

from __future__ import annotations

import _sre  # type: ignore[import-not-found]  # the regex engine: what re.compile hands its code to
import atexit
import contextlib
import hashlib
import marshal
import os
import re
import sys
from pathlib import Path
from typing import Any, AnyStr

MAX_ENTRIES = 4096
_FORMAT = b"kforensic-regex-1\n"
_DIGEST = 32  # bytes of the SHA-256 after the format line

#: What ``_sre.compile`` takes after the pattern: flags, code, groups, group index, index group.
_Entry = tuple[int, list[int], int, dict[str, int], tuple[str | None, ...]]


def cache_file(environ: dict[str, str] | os._Environ[str] = os.environ) -> Path:
    """Where this user's compiled patterns are kept for this interpreter."""
    xdg = environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    tag = f"{sys.implementation.cache_tag}-{sys.hexversion:x}-{_sre.MAGIC}-{_sre.CODESIZE}"
    return base / "kforensic" / f"regex-{tag}.marshal"


class _Table:
    """The patterns of the cache file, loaded at the first compile; written back at exit when one was added."""

    def __init__(self) -> None:
        self.entries: dict[tuple[str | bytes, int], _Entry] | None = None
        self.added = False

    def load(self) -> dict[tuple[str | bytes, int], _Entry]:
        if self.entries is None:
            self.entries = {}
            with contextlib.suppress(OSError, ValueError, EOFError, TypeError):
                blob = cache_file().read_bytes()
                digest, payload = blob[len(_FORMAT) : len(_FORMAT) + _DIGEST], blob[len(_FORMAT) + _DIGEST :]
                if blob.startswith(_FORMAT) and hashlib.sha256(payload).digest() == digest:
                    self.entries = {
                        (p, f): (fl, code, g, gi, ig) for p, f, fl, code, g, gi, ig in marshal.loads(payload)
                    }
        return self.entries

    def add(self, key: tuple[str | bytes, int], entry: _Entry) -> None:
        entries = self.load()
        if len(entries) < MAX_ENTRIES:
            entries[key] = entry
            if not self.added:
                self.added = True
                atexit.register(self.save)

    def save(self) -> None:
        """Write the table to the cache file (atomically, 0600); nothing when it cannot be written."""
        if self.entries is None or not self.added:
            return
        self.added = False
        path = cache_file()
        payload = marshal.dumps([(p, f, *entry) for (p, f), entry in self.entries.items()])
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(_FORMAT + hashlib.sha256(payload).digest() + payload)
            os.replace(tmp, path)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)


_TABLE = _Table()


def compile(pattern: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    """``re.compile(pattern, flags)``, from the cache file when it holds the pattern."""
    key = (pattern, int(flags))
    entry = _TABLE.load().get(key)
    if entry is None:
        try:
            entry = _compiled(pattern, int(flags))
        except (AttributeError, ImportError, TypeError):  # re's internals are not those of CPython 3.11-3.13
            return re.compile(pattern, flags)
        _TABLE.add(key, entry)
    final, code, groups, groupindex, indexgroup = entry
    try:
        compiled: re.Pattern[AnyStr] = _sre.compile(pattern, final, code, groups, groupindex, indexgroup)
    except (RuntimeError, TypeError, ValueError):  # not this interpreter's code after all
        return re.compile(pattern, flags)
    return compiled


def _compiled(pattern: str | bytes, flags: int) -> _Entry:
    """What ``re._compiler.compile`` hands to ``_sre.compile`` (CPython 3.11-3.13), as plain values."""
    from re import _compiler, _parser  # type: ignore[attr-defined]

    parsed: Any = _parser.parse(pattern, flags)
    code = [int(op) for op in _compiler._code(parsed, flags)]
    groupindex = dict(parsed.state.groupdict)
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    return int(flags | parsed.state.flags), code, parsed.state.groups - 1, groupindex, tuple(indexgroup)
