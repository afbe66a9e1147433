"""Compiled regular expressions kept between runs: the rule tables' patterns without their compile.

``re.compile`` parses a pattern and generates its matcher code in pure Python: the ~330 patterns of
``kforensic dmesg`` (the rule table, the why reading, the frame and stack parsers) took 30-35 ms of every
run, as much as reading 10 MB of log.  What the compiler makes (the flags, the code as a list of
integers, the groups) is a function of the pattern, its flags and the interpreter alone; kept in a file,
it is handed straight to the regex engine (``_sre.compile``, which is what ``re.compile`` ends with and
which validates the code it is given), ~2 ms for all of them.

* The file is per user and per interpreter (:mod:`forensics.runcache`):
  ``$XDG_CACHE_HOME/kforensic/regex-<interpreter>.marshal`` (``~/.cache/...``); a read-only install
  caches as well as a checkout.  It is written at the end of a run that compiled a pattern it did not
  hold, atomically, mode 0600; its content is checked against the SHA-256 it carries.
* Anything unexpected (no cache directory, a file of another format, an interpreter whose ``re``
  internals differ) falls back to ``re.compile`` and says nothing: the cache only saves time.
* Only patterns fixed by the code go through it (none built from input), at most :data:`MAX_ENTRIES`.
"""

from __future__ import annotations

import _sre  # type: ignore[import-not-found]  # the regex engine: what re.compile hands its code to
import os
import re
import sys
from pathlib import Path
from typing import Any, AnyStr

from forensics.runcache import MarshalTable, cache_path

MAX_ENTRIES = 4096
_FORMAT = b"kforensic-regex-1\n"

#: What ``_sre.compile`` takes after the pattern: flags, code, groups, group index, index group.
_Entry = tuple[int, list[int], int, dict[str, int], tuple[str | None, ...]]


def cache_file(environ: dict[str, str] | os._Environ[str] = os.environ) -> Path:
    """Where this user's compiled patterns are kept for this interpreter."""
    tag = f"{sys.implementation.cache_tag}-{sys.hexversion:x}-{_sre.MAGIC}-{_sre.CODESIZE}"
    return cache_path("regex", tag, environ)


def _encode(entries: dict[tuple[str | bytes, int], _Entry]) -> Any:
    return [(p, f, *entry) for (p, f), entry in entries.items()]


def _decode(stored: Any) -> dict[tuple[str | bytes, int], _Entry]:
    return {(p, f): (fl, code, g, gi, ig) for p, f, fl, code, g, gi, ig in stored}


class _Table(MarshalTable[tuple[str | bytes, int], _Entry]):
    """The patterns of the cache file, loaded at the first compile; written back at exit when one was added."""

    def __init__(self) -> None:
        super().__init__(cache_file, _FORMAT, MAX_ENTRIES, _encode, _decode)


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
