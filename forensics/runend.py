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
from types import FrameType

#: The result the run delivered (one: a test calling the command again in its process frees the one before).
_kept: list[object] = []


def keep(result: object) -> None:
    """Hold ``result``, delivered, until the process ends (freed then by the interpreter's exit, if :func:`end`
    declines)."""
    _kept[:] = [result]


def _run_by_the_interpreter(frame: FrameType | None) -> bool:
    """Whether ``frame`` (the entry's caller) is the top level of what the interpreter itself runs: the console
    script (nothing below it) or ``python -m forensics`` (runpy's ``_run_code`` below it, ``_run_module_as_main``
    below that, nothing further)."""
    if frame is None or frame.f_code.co_name != "<module>":
        return False
    below = frame.f_back
    if below is None:
        return True
    for name in ("_run_code", "_run_module_as_main"):
        if below is None or below.f_code.co_name != name or below.f_globals.get("__name__") != "runpy":
            return False
        below = below.f_back
    return below is None


def end(code: int, caller: FrameType | None = None) -> None:
    """End the process with exit status ``code``, without the interpreter's teardown, where a result was kept and
    the end is otherwise what the interpreter's exit would be; otherwise return (the caller exits as usual).

    ``caller``, the frame that called the process's entry, must be the interpreter's own run of the program (see
    :func:`_run_by_the_interpreter`), with no profiler or tracer set: a tool that runs the module and goes on after
    it returns (``python -m cProfile -o FILE -m forensics``, ``python -m trace``, pdb, a ``runpy.run_module``
    caller) must get control back, as the interpreter's exit would give it."""
    if not _kept or sys.getprofile() is not None or sys.gettrace() is not None:
        return
    if not _run_by_the_interpreter(caller):
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
