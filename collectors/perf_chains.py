"""Call chain texts to frames through the compiled chunk pass (:mod:`collectors.perf_chunk_kernel`).

What :func:`collectors.perf_script._chains_of` gives, for many texts at once: the texts are numbered as the chunk
pass numbers the call chain texts of the samples it reads (:class:`collectors.perf_chunks.Bodies`: each text's
lines keyed, each text given its chain), Python then parses each distinct key once (the reader's symbol parse,
through its cache) and makes each distinct chain's frames tuple once; a text is then one look-up.  Texts holding a
line the kernel does not key are read by the reader, line by line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from forensics.types.profile import ProfileFrame

Frames = tuple[ProfileFrame, ...]


def chains_compiled(
    bodies: list[bytes],
    run: Any,
    symbol: Callable[[bytes, bytes, bool], Frames],
    line_by_line: Callable[[list[bytes]], tuple[list[Frames], list[int]]],
) -> tuple[list[Frames], list[int]]:
    """Root-to-leaf frames of each call chain text and its number of lines that are not frames.

    ``run``: the chunk pass's kernel (compiled ahead of time, or numba's JIT); ``symbol(raw, dso, high)``: the
    frames of a symbol (the reader's ``_symbol_frames`` for one java value, cached); ``line_by_line``: the
    reader's own reading of texts, for those holding a line the kernel does not key.
    """
    import numpy as np

    from collectors.perf_chunks import ChunkSlots

    if not bodies:
        return [], []
    texts = ChunkSlots(run).bodies()
    sizes = np.fromiter(map(len, bodies), np.int64, len(bodies))
    ends = np.cumsum(sizes)
    numbers = texts.number(np.frombuffer(b"".join(bodies), np.uint8), ends - sizes, ends)
    keyed = texts.chains()
    made = texts.frames(symbol, np.arange(int(keyed.max(initial=-1)) + 1))
    of_body = keyed[numbers].tolist()
    odd = [i for i, c in enumerate(of_body) if c < 0]
    if not odd:
        return list(map(made.__getitem__, of_body)), [0] * len(bodies)
    got_frames, got_bad = line_by_line(list(map(bodies.__getitem__, odd)))
    read = dict(zip(odd, zip(got_frames, got_bad, strict=True), strict=True))
    out = [made[c] if c >= 0 else read[i][0] for i, c in enumerate(of_body)]
    return out, [0 if c >= 0 else read[i][1] for i, c in enumerate(of_body)]


__all__ = ["chains_compiled"]
