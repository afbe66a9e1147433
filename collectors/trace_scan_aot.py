"""The ftrace text scanner compiled ahead of time (:mod:`forensics.aot`): the reader runs it without numba loaded.

:func:`collectors.trace_scan.scan` (its Python source and helpers, the ``word``/``borrowed`` intrinsics
of :mod:`forensics.jit` compiled in), built by numba's ``pycc`` for the types the reader passes
(:mod:`collectors.trace_columns`).  Its two flags are passed as int64 (0 or 1): the exports take the
scalar types of :data:`forensics.aot.Spec`.  A call with other types runs the JIT scanner instead
(:class:`forensics.aot.Kernels`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from forensics.aot import Export, Group, ensure, load

Scan = Callable[..., None]


def kernels(build: bool = False) -> Scan | None:
    """The scanner built ahead of time, with :func:`collectors.trace_scan.scan`'s arguments (built now when
    ``build`` and not built yet); None without."""
    found = ensure(GROUP) if build else load(GROUP)
    if found is None:
        return None
    k: Any = found
    run = k.scan

    def scan(buf: Any, words: Any, pos: int, end: int, line_no: int, waking: bool, skip: bool, *rest: Any) -> None:
        run(buf, words, pos, end, line_no, int(waking), int(skip), *rest)

    return scan


class _Jit:
    """numba's scanner with the exports' int64 flags (imports numba): for calls of other types."""

    @staticmethod
    def scan(buf: Any, words: Any, pos: int, end: int, line_no: int, waking: int, skip: int, *rest: Any) -> None:
        from collectors.trace_scan import scan

        scan(buf, words, pos, end, line_no, bool(waking), bool(skip), *rest)


def _jit() -> Any:
    return _Jit


def functions() -> dict[str, Any]:
    """The exported function, for :func:`forensics.aot.build` (imports numba)."""
    from collectors.trace_scan import scan as jit_scan

    # pycc compiles a function of fixed arguments (no *args)
    def scan(
        buf: Any,
        words: Any,
        pos: int,
        end: int,
        line_no: int,
        waking: int,
        skip: int,
        out: Any,
        ts_out: Any,
        r: int,
        unknown: Any,
        status: Any,
    ) -> None:
        jit_scan(buf, words, pos, end, line_no, waking != 0, skip != 0, out, ts_out, r, unknown, status)

    return {"scan": scan}


GROUP = Group(
    name="kforensic_trace_scan",
    exports=(
        Export(
            "scan",
            ("u1:1:r", "u8:1:r", "i8", "i8", "i8", "i8", "i8", "i8:2", "f8:1", "i8", "i8:2", "i8:1"),
            "none",
        ),
    ),
    functions=functions,
    sources=(
        "collectors.trace_scan_aot",
        "collectors.trace_scan",
        "collectors.trace_rows",
        "forensics.jit",
        "forensics.types.trace",
    ),
    seconds=15.0,
    jit=_jit,
    what="the ftrace text scanner",
)
