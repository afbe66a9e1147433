"""The compiled CTF decoder built ahead of time (:mod:`forensics.aot`): the reader runs it without numba loaded.

The kernels of :mod:`collectors.ctf.decode` (``decode``, ``engine_columns``, ``string_keys``: their
Python source, compiled by numba's ``pycc`` for the types the reader passes), behind the same surface
as that module and :mod:`collectors.ctf.plain` (``run``, ``engine_columns``, ``string_keys``).  A call
with other types runs the JIT kernel instead (:class:`forensics.aot.Kernels`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from collectors.ctf.layouts import Layouts
from forensics.aot import Export, Group, Kernels, ensure, load

_A1, _A2, _A3 = "i8:1:r", "i8:2:r", "i8:3:r"  # read-only inputs (a writable array passes too)


class AotDecoder:
    """The decoder's surface (``run``, ``engine_columns``, ``string_keys``) over the module built ahead of time."""

    def __init__(self, found: Kernels) -> None:
        k: Any = found
        self._decode = k.decode
        self.engine_columns = k.engine_columns
        self.string_keys = k.string_keys

    def run(self, lay: Layouts, buf: npt.NDArray[np.uint8], pos: int, *rest: npt.NDArray[np.int64]) -> None:
        """:func:`collectors.ctf.decode.run` (``rest``: want, emit, reads, counts, rows, packets, state)."""
        self._decode(buf, pos, *lay.programs(), *rest)


def kernels(build: bool = False) -> AotDecoder | None:
    """The decoder built ahead of time (built now when ``build`` and not built yet); None without."""
    found = ensure(GROUP) if build else load(GROUP)
    return AotDecoder(found) if found is not None else None


def _jit() -> Any:
    """numba's kernels of the same names (imports numba)."""
    from collectors.ctf import decode

    return decode


def functions() -> dict[str, Any]:
    """The exported functions, for :func:`forensics.aot.build` (imports numba)."""
    decode = _jit()

    return {name: getattr(decode, name).py_func for name in ("decode", "engine_columns", "string_keys")}


GROUP = Group(
    name="kforensic_ctf_decode",
    exports=(
        Export(
            "decode",
            ("u1:1:r", "i8", _A2, _A2, _A3, _A1, _A3, _A2, _A2, _A2, _A3, "i8:4:r", "i8:2", "i8:2", "i8:2", "i8:1"),
            "none",
        ),
        Export("engine_columns", (_A2, "i8", _A1, "i8", "i8:2", "f8:1"), "i8"),
        Export("string_keys", ("u1:1:r", _A1, _A1, "i8"), "u8:1"),
    ),
    functions=functions,
    sources=("collectors.ctf.decode_aot", "collectors.ctf.decode", "collectors.ctf.layouts", "forensics.types.trace"),
    seconds=12.0,
    jit=_jit,
    what="the LTTng (CTF) decoder",
)
