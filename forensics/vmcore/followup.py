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
    sources: list[tuple[str, str]] = []
    unused: list[tuple[str, str, str]] = []
    for path, locations in _locations(snapshot).items():
        found = local_source(path, source_dirs)
        if found is None or found == path:
            continue
        why = _not_the_build(snapshot, found, locations)
        if why is None:
            sources.append((path, found))
        else:
            unused.append((path, found, why))
    return FollowUp(os.path.abspath(dump), vmlinux, via, tuple(modules), tuple(sources), tuple(unused))


def _locations(snapshot: CrashSnapshot) -> dict[str, list[tuple[int, str | None]]]:
    """Every (line, function) the snapshot cites in each source file the debug info names: its frames' and the
    faulting instructions' (whose function is not recorded)."""
    out: dict[str, list[tuple[int, str | None]]] = {}
    for frame in _frames(snapshot):
        if frame.source_file:
            cited = out.setdefault(frame.source_file, [])
            if frame.source_line:
                cited.append((frame.source_line, frame.function if isinstance(frame.function, str) else None))
    if not isinstance(snapshot.code, NotAvailable):
        for _, file, line in snapshot.code.source_lines:
            if file in out:
                out[file].append((line, None))
    return out


def _not_the_build(snapshot: CrashSnapshot, local: str, locations: list[tuple[int, str | None]]) -> str | None:
    """Why the copy ``local`` is not the source the kernel was built from (it is then not cited in its place), None
    when it checks: the BUG/WARN line read from it fits (:func:`forensics.vmcore.why.read_source_line`) and every
    location cited in it lies in its function (:func:`forensics.vmcore.why.copy_fits`)."""
    from collectors.inputs import open_input
    from forensics.errors import InputError
    from forensics.vmcore.why import copy_fits

    site = snapshot.bug_site
    source = site if isinstance(site, NotAvailable) else site.source
    if not isinstance(source, NotAvailable) and os.path.abspath(source.path) == local and source.mismatch:
        return source.mismatch
    try:
        with open_input(local) as tracked:
            lines = tracked.stream.read().decode(errors="replace").splitlines()
    except (OSError, InputError) as exc:
        return f"not readable: {exc}"
    return copy_fits(lines, locations)
