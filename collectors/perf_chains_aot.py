"""The profile reader's kernels compiled ahead of time (:mod:`forensics.aot`): the reader runs them without numba.

:func:`collectors.perf_chain_kernel.intern_chains` (the call chain interner),
:func:`collectors.perf_chunk_kernel.scan_chunk` (the chunk pass) and :func:`collectors.perf_chunk_kernel.intern_ranges`
(numbering header lines and call chain texts), built by numba's ``pycc`` into one module for
the arrays :func:`collectors.perf_chains.chains_compiled` and :class:`collectors.perf_chunks.ChunkSlots` pass.
A call with other types runs numba's JIT of the same function (:class:`forensics.aot.Kernels`).
"""

from __future__ import annotations

from typing import Any

from forensics.aot import Export, Group, ensure, load


def kernels(build: bool = False) -> Any:
    """The interner built ahead of time (built now, announced, when ``build`` and not built yet); None without."""
    found: Any = ensure(GROUP) if build else load(GROUP)
    return None if found is None else found.intern_chains


def chunk_kernel(build: bool = False) -> Any:
    """The chunk pass built ahead of time (built now, announced, when ``build`` and not built yet); None without."""
    found: Any = ensure(GROUP) if build else load(GROUP)
    return None if found is None else found.scan_chunk


def range_kernel() -> Any:
    """:func:`collectors.perf_chunk_kernel.intern_ranges` built ahead of time when it is, else numba's JIT of it."""
    found: Any = load(GROUP)
    return jitted_ranges() if found is None else found.intern_ranges


class _Jit:
    """numba's JIT of the interner (imports numba): for calls of other types, and for the tests."""

    @staticmethod
    def intern_chains(*args: Any) -> tuple[int, int]:
        return jitted()(*args)  # type: ignore[no-any-return]

    @staticmethod
    def scan_chunk(*args: Any) -> int:
        return jitted_scan()(*args)  # type: ignore[no-any-return]

    @staticmethod
    def intern_ranges(*args: Any) -> int:
        return jitted_ranges()(*args)  # type: ignore[no-any-return]


_jitted: dict[str, Any] = {}


def _jit_of(name: str, what: str) -> Any:
    """The kernel ``name`` of its module compiled by numba's JIT (cached per user), once per process."""
    if name not in _jitted:
        from collectors import perf_chain_kernel, perf_chunk_kernel
        from forensics.jit import njit

        module = perf_chain_kernel if name == "intern_chains" else perf_chunk_kernel
        _jitted[name] = njit(what, 3.0)(getattr(module, name))
    return _jitted[name]


def jitted() -> Any:
    """:func:`collectors.perf_chain_kernel.intern_chains` compiled by numba's JIT."""
    return _jit_of("intern_chains", "the profile's call chain interner")


def jitted_scan() -> Any:
    """:func:`collectors.perf_chunk_kernel.scan_chunk` compiled by numba's JIT."""
    return _jit_of("scan_chunk", "the profile's chunk pass")


def jitted_ranges() -> Any:
    """:func:`collectors.perf_chunk_kernel.intern_ranges` compiled by numba's JIT."""
    return _jit_of("intern_ranges", "the profile's text interner")


def _jit() -> Any:
    return _Jit


def functions() -> dict[str, Any]:
    """The exported functions, for :func:`forensics.aot.build` (imports numba)."""
    from collectors.perf_chain_kernel import intern_chains
    from collectors.perf_chunk_kernel import intern_ranges, scan_chunk

    return {"intern_chains": intern_chains, "scan_chunk": scan_chunk, "intern_ranges": intern_ranges}


GROUP = Group(
    name="kforensic_perf_chains",
    exports=(
        Export(
            "intern_chains",
            ("u1:1:r", "i8:1:r", "i8:1", "i8:1", "i8:1", "i8:1", "i8:2", "i8:1", "i8:1", "i8:1"),
            "(i8, i8)",
        ),
        Export(
            "scan_chunk",
            ("u1:1", "i8:1:r", "i8:1:r", *("i8:1",) * 6, "u1:1", *("i8:1",) * 7, "f8:1"),
            "i8",
        ),
        Export(
            "intern_ranges",
            ("u1:1:r", "i8:1:r", "i8:1:r", *("i8:1",) * 4, "u1:1", "i8:1", "i8:1", "i8"),
            "i8",
        ),
    ),
    functions=functions,
    sources=("collectors.perf_chains_aot", "collectors.perf_chain_kernel", "collectors.perf_chunk_kernel"),
    seconds=12.0,
    jit=_jit,
    what="the profile reader's chunk pass and call chain interner",
)
