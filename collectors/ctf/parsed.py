"""A trace's parsed metadata and layout programs, kept per user so that the next run does not parse them again.

LTTng's kernel metadata is 350 KB of TSDL (one declaration per syscall, two per event with
``--syscall -a``): parsing it and compiling its layout programs takes 0.12 s of CPU, every run,
for the same text (a machine's lttng-modules writes the same metadata session after session).
Loading the pickled result takes 0.015 s.

An entry is keyed by the sha256 of the metadata file's bytes and of this reader's parser and
layout compiler (their source files), so a changed parser never reads an old entry.  Entries live
beside the compiled code (:func:`forensics.jit.cache_dir`: per user, ``$NUMBA_CACHE_DIR`` when
set), written whole (a temporary file renamed) and readable by their owner only (the metadata
names the host and its kernel).  Any problem with the cache — no directory to write, a damaged or
foreign entry — is silent: the metadata is parsed as without one.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import tempfile
from pathlib import Path

from collectors.ctf import layouts as ly
from collectors.ctf import metadata as md
from forensics.jit import cache_dir

_SOURCES = (Path(md.__file__), Path(ly.__file__), Path(__file__))
_code_key: bytes | None = None


def _code() -> bytes:
    """The digest of the parser's and the layout compiler's sources (worked out once per process)."""
    global _code_key  # noqa: PLW0603 (a constant of the process, computed when first needed)
    if _code_key is None:
        h = hashlib.sha256()
        for src in _SOURCES:
            with contextlib.suppress(OSError):
                h.update(src.read_bytes())
        _code_key = h.digest()
    return _code_key


def entry_path(metadata: Path) -> Path | None:
    """Where the parsed form of the ``metadata`` file is kept (None: the file cannot be read)."""
    try:
        data = metadata.read_bytes()
    except OSError:
        return None  # parse_metadata says what is wrong with it
    key = hashlib.sha256(_code() + data).hexdigest()
    try:
        return cache_dir() / "ctf-metadata" / f"{key}.pickle"
    except OSError:  # NoHomeError: a user without a home keeps no cache, the metadata is parsed every run
        return None


def load(metadata: Path) -> tuple[md.Metadata, ly.Layouts]:
    """The parsed ``metadata`` file and its layout programs: from the cache, else parsed (and kept)."""
    entry = entry_path(metadata)
    if entry is not None:
        try:
            with open(entry, "rb") as fh:
                got = pickle.load(fh)
        except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, IndexError, TypeError):
            got = None
        if (
            isinstance(got, tuple)
            and len(got) == 2
            and isinstance(got[0], md.Metadata)
            and isinstance(got[1], ly.Layouts)
        ):
            meta, layouts = got
            meta.path = metadata  # the entry may come from another copy of the same session
            return meta, layouts
    meta = md.parse_metadata(metadata)
    layouts = ly.compile_layouts(meta)
    if entry is not None:
        _keep(entry, (meta, layouts))
    return meta, layouts


def _keep(entry: Path, value: tuple[md.Metadata, ly.Layouts]) -> None:
    """Write ``value`` to ``entry`` whole (a temporary file renamed into place), mode 0600; silent on failure."""
    try:
        entry.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=entry.parent)  # mode 0600
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as fh:
            pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, entry)
    except (OSError, pickle.PicklingError, RecursionError):
        with contextlib.suppress(OSError):
            os.unlink(tmp)
