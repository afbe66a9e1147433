"""The follow-up sessions of a dump: crash and drgn command lines with real, readable paths.

The report's next commands run in them (see :class:`forensics.types.vmcore.FollowUp`), so
every path is absolute, every debug file uncompressed (crash reads neither ``vmlinux.xz`` nor
``.ko.zst``: such files are decompressed into the cache, :func:`forensics.vmcore.debuginfo.decompressed`)
and every source file the debug info names is mapped to the copy found under ``--source-dir``.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
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


#: ``crash --version``'s first line: "crash 8.0.2" (a distribution's or a build's suffix after it: "9.0.0++").
_CRASH_VERSION = re.compile(r"^crash (\d+)\.(\d+)\.(\d+)", re.MULTILINE)


def installed_crash(path_env: str | None = None) -> tuple[int, ...] | NotAvailable:
    """The version of the crash on PATH (``path_env``: another PATH), read from ``crash --version`` once per binary
    (by its path, size and time: an upgraded crash is read anew); not available, saying why, when there is no crash
    or its version is not read."""
    found = shutil.which("crash", path=path_env)
    if found is None:
        return NotAvailable("crash not installed")
    try:
        st = os.stat(found)
    except OSError as exc:
        return NotAvailable(f"crash's version not read: {exc}")
    return _crash_version(found, st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=8)
def _crash_version(path: str, _size: int, _mtime_ns: int) -> tuple[int, ...] | NotAvailable:
    try:  # crash 8.0.2 prints its banner and exits 0 in ~0.08 s, opening nothing
        done = subprocess.run(
            [path, "--version"], capture_output=True, text=True, errors="replace", timeout=20, check=False,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError) as exc:
        return NotAvailable(f"crash's version not read: `{path} --version`: {exc}")
    m = _CRASH_VERSION.search(done.stdout)
    if m is None:
        said = (done.stdout.strip() or done.stderr.strip()).splitlines()[:1]
        return NotAvailable(
            f"crash's version not read: `{path} --version` printed {said[0][:80] if said else 'nothing'!r}"
        )
    return tuple(int(g) for g in m.groups())


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
    return FollowUp(
        os.path.abspath(dump), vmlinux, via, tuple(modules), tuple(sources), tuple(unused), installed_crash()
    )


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
