"""Input files mapped read-only, and one clear line instead of a bus error when one shrinks under the run.

A mapped file that another process truncates while it is read makes the next read of a page past its new
end raise SIGBUS, which kills the process (exit 135, no message).  Reading such files instead (read() into
buffers) would cost their size in resident memory (the LTTng reader keeps its 100 MB sessions under 90 MiB
by mapping them and giving the decoded pages back), so the files stay mapped and :func:`map_file` installs,
once, a SIGBUS handler that writes ``kforensic: error: FILE: the file shrank while it was being read ...``
and a hint, and ends the run with exit 3 (bad input).

SIGBUS is synchronous: the faulting read would run again on return, so the handler never returns when it
names a file, and Python's own ``signal.signal`` cannot be used (its C handler returns at once and leaves
the Python function for later: the read would fault forever).  The handler is set with libc's ``signal``
as a ctypes callback; it only stats the mapped paths, writes two lines with ``os.write`` and calls
``os._exit`` (no output file is half-written: outputs are unnamed ``O_TMPFILE`` files until they are
complete, forensics/output.py).  When no mapped file shrank or changed (a bus error of another cause), the
default action is put back and the fault happens again as it would have: the process dies as before.
"""

from __future__ import annotations

import mmap
import os
from typing import Any

#: (path, size, mtime in ns) of every file mapped so far: what the handler checks.
_MAPPED: list[tuple[str, int, int]] = []
_HANDLER: list[Any] = []  # the ctypes callback, kept alive for the life of the process


def map_file(fd: int, path: str) -> mmap.mmap:
    """The whole file open as ``fd`` (named ``path`` in messages) mapped read-only; OSError/ValueError as mmap's."""
    st = os.fstat(fd)
    mapped = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    _MAPPED.append((path, st.st_size, st.st_mtime_ns))
    if not _HANDLER:
        _install()
    return mapped


def _changed() -> tuple[str, int, int] | None:
    """The first mapped file that is now shorter than when it was mapped, or rewritten: (path, was, now)."""
    for path, size, mtime in _MAPPED:
        try:
            st = os.stat(path)
        except OSError:
            continue  # removed: its pages stay readable (the inode lives while mapped), not the cause
        if st.st_size < size or st.st_mtime_ns != mtime:
            return path, size, st.st_size
    return None


def _on_bus_error(signum: int) -> None:
    found = _changed()
    if found is None:  # not a file we mapped: the default action, on the fault's retry
        _libc_signal(signum, 0)
        return
    path, was, now = found
    shown = path.replace("\n", "\\n")
    lines = (
        f"kforensic: error: {shown}: the file shrank while it was being read ({was} bytes when opened, {now} now):"
        " another process truncated or rewrote it\n"
        "kforensic: hint: analyse a copy that nothing writes to (cp it first), or wait until its writer is done\n"
    )
    try:
        os.write(2, lines.encode("utf-8", "replace"))
    finally:
        os._exit(3)


def _libc_signal(signum: int, handler: Any) -> None:
    import ctypes

    libc = ctypes.CDLL(None)
    libc.signal.argtypes = (ctypes.c_int, ctypes.c_void_p)
    libc.signal.restype = ctypes.c_void_p
    libc.signal(signum, ctypes.cast(handler, ctypes.c_void_p) if handler else None)


def _install() -> None:
    import ctypes  # (here: a run that maps nothing does not import it, 10 ms)
    import signal  # (and this, ~0.5 ms: its enums of every signal)

    handler = ctypes.CFUNCTYPE(None, ctypes.c_int)(_on_bus_error)
    _HANDLER.append(handler)
    _libc_signal(signal.SIGBUS, handler)
