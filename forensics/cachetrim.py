"""Compiled code no run has used for a month, removed from the per-user cache.

Why: every compiled entry is keyed on the sources it was made from (:func:`forensics.jit.jit_cache_dir`,
:func:`forensics.native.group_dir`, :func:`forensics.aot.module_path`), so an upgrade or another checkout makes new
ones beside the old, and nothing removed the old: numba's JIT directories are 10-40 MB each, a mypyc build of the
kernel log reader ~3-6 MB, a module built ahead of time ~0.8 MB. A developer's machine held 35 JIT directories,
20 native builds and 30 modules (~300 MB) after three days of checkouts; a fleet host upgraded monthly would grow
by ~50 MB a release, forever (ccache and pip bound theirs the same way: by size or by age).

How:
- :func:`used` stamps an entry a run loads with the time (one ``utime``: a directory's own time, or the time of
  the note beside a module; never a file whose time or contents a check reads);
- :func:`trim` runs where a new entry is made (a build takes seconds to minutes, so its cost is nothing beside
  it): under the cache directory it removes the entries of kforensic's own naming (``jit-<16 hex>``,
  ``native/<group>-<20 hex>``, ``aot/<group>-<20 hex><suffix>`` with its notes) whose stamp is older than
  :data:`IDLE_SECONDS`. Anything else there (a build in progress in a ``tmp*`` directory, a user's file, a link, a
  name of another shape) is never touched; nor is the entry being made. Other entries of the running sources that
  went unused for a month may go too (numba's JIT directory of an install that ran only code built ahead of time):
  a run that needs one builds it again, announced, as after an upgrade.

An install that has not run for a month loses its compiled code and builds it again at its next run, saying so,
as after an upgrade. A cache the user cannot write or search (a shared, prepared one; another user's) is neither
stamped nor trimmed: every error of the file system is ignored here, the run goes on.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import time
from collections.abc import Sequence
from pathlib import Path

#: How long an entry may go unused before a build removes it.
IDLE_SECONDS = 30 * 86400

# kforensic's own entry names, per place under the cache directory (forensics.jit.cache_dir).
_JIT = re.compile(r"jit-[0-9a-f]{16}")
_NATIVE = re.compile(r"kforensic_[a-z0-9_]+-[0-9a-f]{20}")
_AOT = re.compile(r"(kforensic_[a-z0-9_]+-[0-9a-f]{20})\.[A-Za-z0-9_.-]*?(\.so|\.sha256|\.failed)")


def used(path: Path) -> None:
    """Stamp ``path`` (an entry's directory, or the note beside a module) as used now."""
    with contextlib.suppress(OSError):  # a read-only cache, an entry removed meanwhile: nothing to keep fresh
        os.utime(path)


def _aot_stem(name: str) -> str | None:
    """The entry a file of ``aot/`` belongs to (``<group>-<key>``), None for a name not of kforensic's making.

    A module's last use is the newest time among its files: the note beside it is stamped when it is loaded.
    """
    m = _AOT.fullmatch(name)
    return m.group(1) if m else None


def stale(cache: Path, keep: Sequence[Path] = (), now: float | None = None) -> list[Path]:
    """The entries under ``cache`` unused for :data:`IDLE_SECONDS` (directories and module files), ``keep`` aside."""
    cutoff = (time.time() if now is None else now) - IDLE_SECONDS
    kept = {p.name for p in keep} | {stem for p in keep if (stem := _aot_stem(p.name))}
    found = [
        path
        for path in (*_entries(cache, _JIT), *_entries(cache / "native", _NATIVE))
        if path.name not in kept and _mtime(path) < cutoff
    ]
    modules: dict[str, list[Path]] = {}
    for path in _files(cache / "aot"):
        if (stem := _aot_stem(path.name)) is not None:
            modules.setdefault(stem, []).append(path)
    for stem, files in sorted(modules.items()):
        if stem not in kept and max(_mtime(f, missing=0.0) for f in files) < cutoff:
            found += sorted(files)
    return found


def trim(cache: Path, keep: Sequence[Path] = ()) -> list[Path]:
    """Remove :func:`stale` entries under ``cache`` (``keep``: the entry being made); what was removed."""
    import shutil  # here: trimming follows a build, and every run imports this module

    removed = []
    for path in stale(cache, keep):
        try:
            if stat.S_ISDIR(path.lstat().st_mode):
                shutil.rmtree(path)
            else:
                path.unlink()
        except OSError:  # read-only, or removed by another run meanwhile
            continue
        removed.append(path)
    return removed


def _entries(where: Path, name: re.Pattern[str]) -> list[Path]:
    """The directories in ``where`` whose names are ``name`` (not links: a link is not ours to remove)."""
    try:
        with os.scandir(where) as children:
            return [Path(e.path) for e in children if name.fullmatch(e.name) and e.is_dir(follow_symlinks=False)]
    except OSError:  # absent, not searchable
        return []


def _files(where: Path) -> list[Path]:
    """The regular files in ``where`` (not links)."""
    try:
        with os.scandir(where) as children:
            return [Path(e.path) for e in children if e.is_file(follow_symlinks=False)]
    except OSError:
        return []


def _mtime(path: Path, missing: float = float("inf")) -> float:
    """An entry's last use (its own time, a link's not followed); ``missing`` for one gone or unreadable meanwhile:
    by default "used now" (not ours to judge), 0 for one of a module's files (it does not make the module look
    used)."""
    try:
        return path.lstat().st_mtime
    except OSError:
        return missing
