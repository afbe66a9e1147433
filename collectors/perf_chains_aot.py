"""The profile reader's kernel compiled ahead of time (:mod:`forensics.aot`): the reader runs it without numba.

:func:`collectors.perf_chunk_kernel.scan_chunk` (the chunk pass, which numbers headers, call chain texts, frame
keys and chains as it reads, and numbers call chain texts given whole), built by numba's ``pycc`` into a module for
the arrays :class:`collectors.perf_chunks.ChunkSlots` passes.  A call with other types runs numba's JIT of the same
function (:class:`forensics.aot.Kernels`).
"""

from __future__ import annotations

from typing import Any

from forensics.aot import Export, Group, ensure, load


def chunk_kernel(build: bool = False) -> Any:
    """The chunk pass built ahead of time (built now, announced, when ``build`` and not built yet); None without."""
    found: Any = ensure(GROUP) if build else load(GROUP)
    return None if found is None else found.scan_chunk


class _Jit:
    """numba's JIT of the chunk pass (imports numba): for calls of other types, and for the tests."""

    @staticmethod
    def scan_chunk(*args: Any) -> int:
        return jitted_scan()(*args)  # type: ignore[no-any-return]


_jitted: list[Any] = []


def jitted_scan() -> Any:
    """:func:`collectors.perf_chunk_kernel.scan_chunk` compiled by numba's JIT (cached per user), once per process."""
    if not _jitted:
        from collectors.perf_chunk_kernel import scan_chunk
        from forensics.jit import njit

        _jitted.append(njit("the profile's chunk pass", 3.0)(scan_chunk))
    return _jitted[0]


def _jit() -> Any:
    return _Jit


def functions() -> dict[str, Any]:
    """The exported functions, for :func:`forensics.aot.build` (imports numba)."""
    from collectors.perf_chunk_kernel import scan_chunk

    return {"scan_chunk": scan_chunk}


GROUP = Group(
    name="kforensic_perf_chains",
    exports=(
        Export(
            "scan_chunk",
            (
                *("u1:1", "u8:1:r"),  # the chunk: its bytes, and eight at a time
                *("i8:1", "i8:1", "i8:1", "i8:1"),  # its newlines and colons, its times' colons and digits (out)
                *("i8", "i8:1:r", "i8:1:r"),  # the mode, the texts given (BODY_MODE)
                *("i8:1", "i8:2"),  # slots
                *("i8:1", "i8:2", "u1:1", "u8:1"),  # headers (their store, and its memory as words)
                *("i8:1", "i8:2", "u1:1", "u8:1"),  # call chain texts (the same)
                *("i8:1", "i8:2", "u1:1", "u8:1"),  # frame keys (their store, and its memory as words)
                *("i8:1", "i8:2", "i8:1"),  # chains
                *("i8:1",) * 7,  # the state, the outputs per piece and per new slot
                "f8:1",  # the span of the times
            ),
            "i8",
        ),
    ),
    functions=functions,
    sources=("collectors.perf_chains_aot", "collectors.perf_chunk_kernel"),
    seconds=12.0,
    jit=_jit,
    what="the profile reader's chunk pass",
)
