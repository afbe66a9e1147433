"""The call chain interner compiled ahead of time (:mod:`forensics.aot`): the profile reader runs it without numba.

:func:`collectors.perf_chain_kernel.intern_chains`, built by numba's ``pycc`` for the arrays
:func:`collectors.perf_chains.chains_compiled` passes.  A call with other types runs numba's JIT of the
same function (:class:`forensics.aot.Kernels`).
"""

from __future__ import annotations

from typing import Any

from forensics.aot import Export, Group, ensure, load


def kernels(build: bool = False) -> Any:
    """The interner built ahead of time (built now, announced, when ``build`` and not built yet); None without."""
    found: Any = ensure(GROUP) if build else load(GROUP)
    return None if found is None else found.intern_chains


class _Jit:
    """numba's JIT of the interner (imports numba): for calls of other types, and for the tests."""

    @staticmethod
    def intern_chains(*args: Any) -> tuple[int, int]:
        return jitted()(*args)  # type: ignore[no-any-return]


_jitted: Any = None


def jitted() -> Any:
    """:func:`collectors.perf_chain_kernel.intern_chains` compiled by numba's JIT (cached per user)."""
    global _jitted  # noqa: PLW0603 (compiled once)
    if _jitted is None:
        from collectors.perf_chain_kernel import intern_chains
        from forensics.jit import njit

        _jitted = njit("the profile's call chain interner", 3.0)(intern_chains)
    return _jitted


def _jit() -> Any:
    return _Jit


def functions() -> dict[str, Any]:
    """The exported function, for :func:`forensics.aot.build` (imports numba)."""
    from collectors.perf_chain_kernel import intern_chains

    return {"intern_chains": intern_chains}


GROUP = Group(
    name="kforensic_perf_chains",
    exports=(
        Export(
            "intern_chains",
            ("u1:1:r", "i8:1:r", "i8:1", "i8:1", "i8:1", "i8:1", "i8:2", "i8:1", "i8:1", "i8:1"),
            "(i8, i8)",
        ),
    ),
    functions=functions,
    sources=("collectors.perf_chains_aot", "collectors.perf_chain_kernel"),
    seconds=8.0,
    jit=_jit,
    what="the profile's call chain interner",
)
