"""Carrying out a setup plan's file changes under a root, with a backup of every file changed.

This is the only code of ``kforensic kdump`` that writes.  Every write lands
under ``root`` (links inside the tree are resolved against the root, and a
path that still leads outside is refused); every file replaced is first
copied next to itself as ``<name>.kforensic-<UTC time>.bak``; nothing else is
touched.  Commands of the plan are run by the CLI, and only on the live system.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import stat
from collections.abc import Sequence
from pathlib import Path

from collectors.kdump.reader import RootReader
from forensics.errors import InputError
from forensics.output import write_atomic
from forensics.types.kdump import AppliedChange, FileChange

NEW_FILE_MODE = 0o644  # configuration snippets hold no kernel data; grub and sysctl read them as root anyway


def _inside(path: Path, root: Path) -> bool:
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    return real == real_root or real.startswith(real_root.rstrip("/") + "/")


def _current_text(host: Path) -> str | None:
    """The file's text as the collector reads it; None when absent.  Refuses what is not a regular file."""
    try:
        if not stat.S_ISREG(host.stat().st_mode):
            raise InputError(f"{host} is not a regular file", hint="replace it with a file, or remove it")
        data = host.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InputError(f"cannot read {host}: {exc.strerror or exc}") from None
    from forensics.evidence import iter_text_lines

    lines = list(iter_text_lines(data))
    if lines and lines[-1] == "" and data.endswith(b"\n"):
        lines.pop()
    return "".join(line + "\n" for line in lines)


def _check_writable(change: FileChange, host: Path, root: Path) -> None:
    """Refuse before anything is written: outside the root, changed since planned, or not writable."""
    if not _inside(host.parent if not host.exists() else host, root):
        raise InputError(
            f"{change.path} resolves to {os.path.realpath(host)}, outside --root {root}",
            hint="a link in the tree points out of it; fix the link or give the real root",
        )
    if _current_text(host) != change.old:
        raise InputError(
            f"{host} changed since the plan was made", hint="run kforensic kdump setup again to see a new plan"
        )
    directory = host.parent
    while not directory.exists():
        directory = directory.parent
    if not os.access(directory, os.W_OK):
        reason = "read-only file system" if _read_only(directory) else "permission denied"
        raise InputError(
            f"cannot write {host}: {reason}", hint="mount the root read-write, or run without --apply to see the plan"
        )


def _read_only(directory: Path) -> bool:
    try:
        return bool(os.statvfs(directory).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def backup_name(host: Path, when: dt.datetime) -> Path:
    """A free backup name next to ``host``: ``<name>.kforensic-YYYYmmddTHHMMSSZ.bak`` (``-1``, ``-2``... if taken)."""
    stamp = when.astimezone(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    candidate = host.with_name(f"{host.name}.kforensic-{stamp}.bak")
    counter = 1
    while os.path.lexists(candidate):
        candidate = host.with_name(f"{host.name}.kforensic-{stamp}-{counter}.bak")
        counter += 1
    return candidate


def back_up(paths: Sequence[str], root: Path, when: dt.datetime) -> tuple[AppliedChange, ...]:
    """Copy each of ``paths`` that exists next to itself (:func:`backup_name`) before a command rewrites it whole
    (grub-mkconfig's grub.cfg).  Raises :class:`InputError` when a copy cannot be made: the command is then not run."""
    reader = RootReader(root)
    done = []
    for path in paths:
        host = reader.host_path(path)
        if not host.is_file():
            continue  # nothing to keep: the command creates it
        backup = backup_name(host, when)
        try:
            shutil.copy2(host, backup)
        except OSError as exc:
            backup.unlink(missing_ok=True)
            raise InputError(
                f"cannot back up {host} to {backup}: {exc.strerror or exc}",
                hint="the command that rewrites it was not run; make room or fix the directory, then run again",
            ) from None
        done.append(AppliedChange(path, str(backup)))
    return tuple(done)


def apply_changes(changes: Sequence[FileChange], root: Path, when: dt.datetime) -> tuple[AppliedChange, ...]:
    """Write every change under ``root``, backing up each existing file first.

    All changes are checked before the first write, so a refusal (a path
    leading outside the root, a read-only file system, a file edited since the
    plan) leaves the tree as it was.  Raises :class:`InputError` with the file.
    """
    reader = RootReader(root)
    targets = [(change, reader.host_path(change.path)) for change in changes]
    for change, host in targets:
        _check_writable(change, host, root)
    done: list[AppliedChange] = []
    for change, host in targets:
        backup_path: Path | None = None
        try:
            mode = NEW_FILE_MODE
            if change.old is not None:
                mode = host.stat().st_mode & 0o7777
                backup_path = backup_name(host, when)
                shutil.copy2(host, backup_path)
            else:
                host.parent.mkdir(parents=True, exist_ok=True)
            # The file is configuration the user owns (maybe through a package): replacing it is the point.
            write_atomic(host, change.new, mode=mode, force=True)
        except (OSError, InputError) as exc:
            # Nothing was changed for this file (an immutable file, a full disk): its backup is not needed.
            if backup_path is not None:
                backup_path.unlink(missing_ok=True)
            reason = exc.message if isinstance(exc, InputError) else f"cannot write {host}: {exc.strerror or exc}"
            raise InputError(
                reason,
                hint="the files of the plan before this one were written; their backups are next to them"
                if done
                else "nothing was changed",
            ) from None
        done.append(AppliedChange(change.path, str(backup_path) if backup_path else None))
    return tuple(done)
