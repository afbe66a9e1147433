"""The code of the functions dataclasses and named tuples generate, kept between runs: no parser at start-up.

A dataclass writes the source of its ``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__``...
and ``exec``s it when its class is created; ``collections.namedtuple`` ``eval``s its ``__new__``, and
``typing.ForwardRef`` compiles each string annotation it is given.  A run of ``kforensic dmesg`` created ~60
dataclasses and named tuples that way: 195 ``exec`` and 68 ``eval``/``compile`` calls, whose parsing and
compiling were 118 M of the 532 M instructions of its start-up (~0.02 s of every run of every command).  The
code an ``exec`` of a string runs is ``compile(source, "<string>", mode)``'s, a function of the source text and
the interpreter alone: kept in a file (:mod:`forensics.runcache`,
``$XDG_CACHE_HOME/kforensic/code-<command>-<interpreter>.marshal``), it is taken from there by its source text,
as Python takes a module's code from its ``__pycache__`` file.

:func:`install` (called by the CLI's ``main`` with the command's name, not at the import of any module) gives
the three modules a name ``exec``, ``eval`` and ``compile`` of their own (a module's globals come before the
builtins): functions that do what the builtins do, with a code object from the table in place of the source
text; any other call goes to the builtin unchanged.  The code is compiled as the builtins compile it there: no
``__future__`` flags (the three modules have none) and no optimization.  One table per command (each command's
runs make their own classes; one table of all would be read whole by every run).  The file is the user's, mode
0600, read only by this user's runs, checked against its SHA-256 and keyed by the interpreter's version and
bytecode magic number: the same trust as the bytecode Python caches for every module it imports.

A table that is full (:data:`MAX_ENTRIES`) when a run must add an entry keeps only the entries that run asked for,
then grows again; one written back holding more than :data:`KEEP` times what its run asked for is written with
those entries alone (issue #28).  Before, a full table took no new entry at all: the code of earlier versions of the
project's classes filled it over time (`kforensic leaks`'s, `report`'s and `slab-watch`'s held 1,024 entries in a
checkout of 2026-12-05), and a run whose code was not among them compiled it again at every start
(`kforensic leaks --help`: 21 sources each run).
"""

from __future__ import annotations

import builtins
import functools
import importlib.util
import marshal
import os
import sys
import types
from pathlib import Path
from types import CodeType
from typing import Any

from forensics.runcache import MarshalTable, cache_path

MAX_ENTRIES = 1024  # per command: a run of kforensic dmesg makes ~260
KEEP = 1.5  # a table written back holds at most this many times what the run asked for (see _encode)
_FORMAT = b"kforensic-code-1\n"
_MODES = ("exec", "eval")


def cache_file(command: str = "kforensic", environ: dict[str, str] | os._Environ[str] = os.environ) -> Path:
    """Where this user's generated code of ``command``'s runs is kept for this interpreter."""
    tag = f"{sys.implementation.cache_tag}-{sys.hexversion:x}-{importlib.util.MAGIC_NUMBER.hex()}-{marshal.version}"
    return cache_path(f"code-{command}", tag, environ)


def _decode(stored: Any) -> dict[tuple[str, str], CodeType]:
    if not isinstance(stored, dict):
        raise TypeError("not a table of code")
    for (source, mode), code in stored.items():
        if type(source) is not str or mode not in _MODES or type(code) is not CodeType:
            raise TypeError("not a table of code")
    return stored


def _encode(entries: dict[tuple[str, str], CodeType]) -> Any:
    # Written back only by a run that compiled code (a new version of some class, a path not run before): when the
    # table holds much more than this run asked for, the rest is mostly the code of earlier versions, which every
    # run reads for nothing (the dmesg table of a checkout of 2026-12-05: 832 entries, 250-275 asked for by a run;
    # ~2 ms of its start-up).  What other paths of the command need and a run leaves out is compiled again by the
    # next run that takes them, and kept then.
    if len(entries) > KEEP * len(_asked):
        return {key: code for key, code in entries.items() if key in _asked}
    return entries


def new_table(command: str = "kforensic") -> MarshalTable[tuple[str, str], CodeType]:
    """The table of ``command``'s cache file, not yet read."""
    return MarshalTable(functools.partial(cache_file, command), _FORMAT, MAX_ENTRIES, _encode, _decode)


_TABLE = new_table()
_asked: set[tuple[str, str]] = set()  # the entries this run asked for: what a full table keeps


def code(source: str, mode: str) -> CodeType:
    """``compile(source, "<string>", mode)`` as the three modules' own calls compile it, from the table when held."""
    key = (source, mode)
    entries = _TABLE.load()
    _asked.add(key)
    compiled = entries.get(key)
    if compiled is None:
        compiled = builtins.compile(source, "<string>", mode, dont_inherit=True)
        if len(entries) >= MAX_ENTRIES:  # full: what this run did not ask for goes (earlier versions' code, mostly)
            for stale in [k for k in entries if k not in _asked]:
                del entries[stale]
        _TABLE.add(key, compiled)
    return compiled


def _exec(source: Any, globals: Any = None, locals: Any = None, /) -> None:
    """``exec``, with a string's code from the table."""
    if type(source) is str:
        source = code(source, "exec")
    builtins.exec(source, globals, locals)


def _eval(source: Any, globals: Any = None, locals: Any = None, /) -> Any:
    """``eval``, with a string's code from the table."""
    if type(source) is str:
        source = code(source, "eval")
    return builtins.eval(source, globals, locals)


def _compile(
    source: Any, filename: Any, mode: str, flags: int = 0, dont_inherit: bool = False, optimize: int = -1
) -> Any:
    """``compile``, from the table for a string compiled as ``<string>`` without flags (typing's string annotations)."""
    if type(source) is str and filename == "<string>" and mode in _MODES and flags == 0 and optimize == -1:
        return code(source, mode)
    return builtins.compile(source, filename, mode, flags, True, optimize)


class _DeferredInspect(types.ModuleType):
    """Stands for ``inspect`` not imported yet: imports it at the first use of one of its names, and gives that."""

    def __getattr__(self, name: str) -> Any:
        if sys.modules.get("inspect") is self:  # asked while dataclasses is imported (no Python 3.11-3.13 module does)
            del sys.modules["inspect"]
        import inspect

        return getattr(inspect, name)


def _dataclasses() -> types.ModuleType:
    """``dataclasses``, imported without ``inspect`` where neither is imported yet (issue #28).

    ``dataclasses`` imports ``inspect`` (and with it ``ast``, ``dis``, ``tokenize``, ``linecache``: ~5 ms, ~33 M
    instructions, of a ``kforensic dmesg`` run's ~65 ms start-up) for one call, ``inspect.signature``, made only for a
    class without a docstring (the project's have one).  Its ``inspect`` is a :class:`_DeferredInspect` in its place:
    the first use imports the real one.  ``sys.modules`` holds the stand-in only while ``dataclasses`` is imported (no
    other module sees it); already imported (a test run, a library user), nothing changes.  Python 3.11's alone:
    from 3.12 ``dataclasses`` asks ``inspect.get_annotations`` of every class (the stand-in would import it at the
    first and stand in each call's way).
    """
    if sys.version_info < (3, 12) and "dataclasses" not in sys.modules and "inspect" not in sys.modules:
        deferred = _DeferredInspect("inspect")
        sys.modules["inspect"] = deferred
        try:
            import dataclasses
        finally:
            if sys.modules.get("inspect") is deferred:
                del sys.modules["inspect"]
    import dataclasses

    return dataclasses


def install(command: str) -> None:
    """Give dataclasses, collections (named tuples) and typing (string annotations) the cached exec/eval/compile,
    with the table of ``command``."""
    import collections
    import typing

    dataclasses = _dataclasses()
    _TABLE.path = functools.partial(cache_file, command)  # read at the first class made, after this
    setattr(dataclasses, "exec", _exec)  # noqa: B010 (a module global named as the builtin it stands for)
    setattr(collections, "eval", _eval)  # noqa: B010
    setattr(typing, "compile", _compile)  # noqa: B010
