"""Compiled regular expressions kept between runs: the rule tables' patterns without their compile.

``re.compile`` parses a pattern and generates its matcher code in pure Python: the ~330 patterns of
``kforensic dmesg`` (the rule table, the why reading, the frame and stack parsers) took 30-35 ms of every
run, as much as reading 10 MB of log.  What the compiler makes (the flags, the code as a list of
integers, the groups) is a function of the pattern, its flags and the interpreter alone; kept in a file (the
code as its words' bytes), it is handed straight to the regex engine (``_sre.compile``, which is what
``re.compile`` ends with and which validates the code it is given), ~1 ms for all of them.

* The file is per user and per interpreter (:mod:`forensics.runcache`):
  ``$XDG_CACHE_HOME/kforensic/regex-<interpreter>.marshal`` (``~/.cache/...``); a read-only install
  caches as well as a checkout.  It is written at the end of a run that compiled a pattern it did not
  hold, atomically, mode 0600; its content is checked against the SHA-256 it carries.
* Anything unexpected (no cache directory, a file of another format, an interpreter whose ``re``
  internals differ) falls back to ``re.compile`` and says nothing: the cache only saves time.
* Only patterns fixed by the code go through it (none built from input), at most :data:`MAX_ENTRIES`.

:func:`install` (called by the CLI's ``main`` with the command's name, as :func:`forensics.codecache.install` is)
does the same for the patterns other modules compile at their top level as they are imported, the standard
library's among them (``platform``'s and ``json``'s, which orjson imports; ~35 patterns, ~3 ms of every run of
``kforensic dmesg``): ``re``'s compiler, asked from a module's top level (a constant of its code, not input), takes
them from a table of the command's own (``regex-<command>-<interpreter>.marshal``: each command imports other
modules, and one table of all would be read whole by every run).
"""

from __future__ import annotations

import _sre  # type: ignore[import-not-found]  # the regex engine: what re.compile hands its code to
import functools
import os
import re
import sys
from pathlib import Path
from types import FrameType
from typing import Any, AnyStr

from forensics.runcache import MarshalTable, cache_path

MAX_ENTRIES = 4096
_FORMAT = b"kforensic-regex-2\n"

#: What ``_sre.compile`` takes after the pattern: flags, code, groups, group index, index group; the code as its
#: words' bytes (:func:`_words`), made the list the engine takes when the pattern is compiled (:func:`_engine`).
_Entry = tuple[int, bytes, int, dict[str, int], tuple[str | None, ...]]

#: A code word as kept: the platform's ``unsigned int`` (4 bytes), which holds every word of ``_sre``'s code
#: (``_sre.CODESIZE`` bytes, 4 in CPython 3.11-3.13; a word that does not fit is an OverflowError: re's own).
_WORD = memoryview(bytes(8)).cast("I").itemsize


def _tag() -> str:
    """This interpreter's, as the tables' file names carry it (its regex engine's code format), and the format of
    the tables' entries (``b``: the code as bytes; a table of the earlier format, lists of integers, under another
    name is never read)."""
    return f"{sys.implementation.cache_tag}-{sys.hexversion:x}-{_sre.MAGIC}-{_sre.CODESIZE}-b"


def _words(code: list[int]) -> bytes:
    """The code as the table keeps it: each word's bytes, in the platform's order.

    Not the list of integers: unmarshalled, ~97,000 words of a ``kforensic dmesg`` run's two tables were ~100,000
    objects read one by one (~3 ms of every run) and ~800 KB of lists held to the end; their bytes are read in one
    piece, and each pattern's list, made when it is compiled, is freed once the engine has copied it (issue #28).
    """
    return b"".join([word.to_bytes(_WORD, sys.byteorder) for word in code])


def _engine(pattern: Any, entry: _Entry) -> Any:
    """``_sre.compile`` of ``pattern`` and its entry (a TypeError where the code's length is not whole words)."""
    final, code, groups, groupindex, indexgroup = entry
    return _sre.compile(pattern, final, memoryview(code).cast("I").tolist(), groups, groupindex, indexgroup)


def cache_file(environ: dict[str, str] | os._Environ[str] = os.environ) -> Path:
    """Where this user's compiled patterns are kept for this interpreter."""
    return cache_path("regex", _tag(), environ)


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
        except (AttributeError, ImportError, TypeError, OverflowError):  # re's internals are not 3.11-3.13's
            return re.compile(pattern, flags)
        _TABLE.add(key, entry)
    try:
        compiled: re.Pattern[AnyStr] = _engine(pattern, entry)
    except (RuntimeError, TypeError, ValueError):  # not this interpreter's code after all
        return re.compile(pattern, flags)
    return compiled


def _compiled(pattern: str | bytes, flags: int) -> _Entry:
    """What ``re._compiler.compile`` hands to ``_sre.compile`` (CPython 3.11-3.13), as plain values."""
    from re import _compiler, _parser  # type: ignore[attr-defined]

    parsed: Any = _parser.parse(pattern, flags)
    code = _words([int(op) for op in _compiler._code(parsed, flags)])
    groupindex = dict(parsed.state.groupdict)
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    return int(flags | parsed.state.flags), code, parsed.state.groups - 1, groupindex, tuple(indexgroup)


def _at_module_level() -> bool:
    """Whether ``re``'s compiler was asked from a module's top level (the first frame outside ``re``; 2 up: this
    function's caller, the compiler's stand-in)."""
    frame: FrameType | None = sys._getframe(2)
    while frame is not None and frame.f_globals.get("__name__", "").partition(".")[0] == "re":
        frame = frame.f_back
    return frame is not None and frame.f_code.co_name == "<module>"


def install(command: str) -> None:
    """Give ``re`` a compiler that takes the patterns compiled at a module's top level from ``command``'s table (and
    adds those it does not hold); any other pattern, a debug compile, or anything unexpected goes to ``re``'s own."""
    from re import _compiler  # type: ignore[attr-defined]

    own: Any = _compiler.compile
    if getattr(own, "_kforensic_table", None) is not None:
        return  # installed already (a test's second main())
    table = MarshalTable(
        functools.partial(cache_path, f"regex-{command}", _tag()), _FORMAT, MAX_ENTRIES, _encode, _decode
    )

    def compile_(p: Any, flags: int = 0) -> Any:
        if type(p) in (str, bytes) and type(flags) is int and not flags & re.DEBUG and _at_module_level():
            try:
                key = (p, flags)
                entry = table.load().get(key)
                if entry is None:
                    entry = _compiled(p, flags)
                    table.add(key, entry)
                return _engine(p, entry)
            except Exception:  # an invalid pattern (re's own compiler says why), other internals
                pass
        return own(p, flags)

    compile_._kforensic_table = table  # type: ignore[attr-defined]
    compile_._kforensic_own = own  # type: ignore[attr-defined]
    _compiler.compile = compile_
