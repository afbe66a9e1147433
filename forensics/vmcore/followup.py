"""The follow-up sessions of a dump: crash and drgn command lines with real, readable paths.

The report's next commands run in them (see :class:`forensics.types.vmcore.FollowUp`), so
every path is absolute, every debug file uncompressed (crash reads neither ``vmlinux.xz`` nor
``.ko.zst``: such files are decompressed into the cache, :func:`forensics.vmcore.debuginfo.decompressed`)
and every source file the debug info names is mapped to the copy found under ``--source-dir``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from forensics.model import NotAvailable
from forensics.types.vmcore import CrashSnapshot, FollowUp, Frame


def local_source(path: str, source_dirs: tuple[Path, ...]) -> str | None:
    """The local copy of a source file the debug info names: under a --source-dir (longest trailing
    part first: ``/build/x/drivers/foo.c`` -> ``DIR/drivers/foo.c``), else the path itself when it exists.
    """
    parts = [p for p in Path(path).parts if p != "/"]
    for d in source_dirs:
        for i in range(len(parts)):
            candidate = d.joinpath(*parts[i:])
            if candidate.is_file():
                return os.path.abspath(candidate)
    return os.path.abspath(path) if os.path.isfile(path) else None


def _frames(snapshot: CrashSnapshot) -> Iterable[Frame]:
    yield from snapshot.backtrace
    for _, task in snapshot.other_cpus:
        yield from task.stack
    for task in snapshot.tasks:
        yield from task.stack


def build_follow_up(
    snapshot: CrashSnapshot,
    dump: Path,
    via: str,
    module_files: tuple[tuple[str, str], ...],
    source_dirs: tuple[Path, ...],
    notice: Callable[[str], None] | None = None,
) -> FollowUp:
    """The follow-up of an extracted dump (``module_files``: what drgn loaded for each module)."""
    from forensics.vmcore.debuginfo import decompressed

    vmlinux: str | NotAvailable = snapshot.vmlinux_path
    if isinstance(vmlinux, str):
        readable, why_not = decompressed(Path(vmlinux), notice)
        vmlinux = (
            NotAvailable(f"{vmlinux} is compressed and crash cannot read it: {why_not}")
            if why_not
            else os.path.abspath(readable)
        )
    modules = []
    for name, path in module_files:
        readable, why_not = decompressed(Path(path), notice)
        if why_not is None:
            modules.append((name, os.path.abspath(readable)))
    sources: dict[str, str] = {}
    for frame in _frames(snapshot):
        if frame.source_file and frame.source_file not in sources:
            found = local_source(frame.source_file, source_dirs)
            if found is not None and found != frame.source_file:
                sources[frame.source_file] = found
    return FollowUp(os.path.abspath(dump), vmlinux, via, tuple(modules), tuple(sources.items()))
