"""The end of a run: the result it delivered kept to the end, and the process ended without the interpreter's teardown.

A report-dense log's result is millions of objects (the reports, their lines and frames, the readings, the
findings): freeing them when the command returns, and the modules when the interpreter exits, was ~13 ms of
CPU of the ~0.4 s of ``kforensic dmesg --format json`` of the shared corpus four times over, done for nothing,
the process ending next (issue #28).  A command keeps its result once it is delivered (:func:`keep`); the
process's entry (:func:`forensics.cli.entry`) then ends it by :func:`end`, which does what the interpreter's own
exit does that anyone can see (the ``atexit`` handlers, which write the caches' tables back; the standard streams
flushed), then ``os._exit`` with the same status.  Where that would not be the same, it returns and the
interpreter's exit runs as before: no result kept (a run that failed, or was not delivered), another thread
still running (which the interpreter waits for), or a standard stream whose flush fails (the interpreter says
so and exits 120, as before).  ``main()`` itself never ends the process: tests call it in theirs.
"""

from __future__ import annotations

import atexit
import os
import sys

#: The result the run delivered (one: a test calling the command again in its process frees the one before).
_kept: list[object] = []


def keep(result: object) -> None:
    """Hold ``result``, delivered, until the process ends (freed then by the interpreter's exit, if :func:`end`
    declines)."""
    _kept[:] = [result]


def end(code: int) -> None:
    """End the process with exit status ``code``, without the interpreter's teardown, where a result was kept and
    the end is otherwise what the interpreter's exit would be; otherwise return (the caller exits as usual)."""
    if not _kept:
        return
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return  # the interpreter waits for its non-daemon threads before its atexit handlers
    atexit._run_exitfuncs()  # as the interpreter runs them: each once, an exception printed and passed over
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            try:
                stream.flush()
            except (OSError, ValueError):
                return  # the interpreter's exit flushes it again and says why it cannot (exit 120)
    os._exit(code)
