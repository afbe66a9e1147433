"""Call chain texts to frames through the compiled interner (:mod:`collectors.perf_chain_kernel`).

What :func:`collectors.perf_script._chains_of` gives, for many texts at once: the texts are joined
into one buffer, the kernel numbers each line's frame key and each text's chain, and Python then
parses each distinct key once (the reader's symbol parse, through its cache) and makes each distinct
chain's frames tuple once; a text is then one look-up.  Texts holding a line the kernel does not key
are read by the reader, line by line.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import chain
from typing import Any

from forensics.types.profile import ProfileFrame

Frames = tuple[ProfileFrame, ...]

#: Keys and chains the first tables have room for besides a share of the lines and texts (a call that
#: finds them too small is run again with four times the room).
ROOM = 1024


def _tables(n_lines: int, n_bodies: int, keys: int, chains: int) -> tuple[Any, ...]:
    """Zeroed output arrays for :func:`collectors.perf_chain_kernel.intern_chains` with this much room."""
    import numpy as np

    from collectors.perf_chain_kernel import KEY_COLUMNS

    def table(n: int) -> Any:
        return np.zeros(1 << (2 * n).bit_length(), np.int64)

    return (
        np.zeros(n_lines, np.int64),
        np.zeros(n_bodies, np.int64),
        np.zeros(n_bodies, np.int64),
        np.zeros(n_bodies, np.int64),
        np.zeros((keys, KEY_COLUMNS), np.int64),
        table(keys),
        np.zeros(chains, np.int64),
        table(chains),
    )


def chains_compiled(
    bodies: list[bytes],
    run: Any,
    symbol: Callable[[bytes, bytes, bool], Frames],
    line_by_line: Callable[[list[bytes]], tuple[list[Frames], list[int]]],
) -> tuple[list[Frames], list[int]]:
    """Root-to-leaf frames of each call chain text and its number of lines that are not frames.

    ``run``: the kernel (compiled ahead of time, or numba's JIT); ``symbol(raw, dso, high)``: the
    frames of a symbol (the reader's ``_symbol_frames`` for one java value, cached); ``line_by_line``:
    the reader's own reading of texts, for those holding a line the kernel does not key.
    """
    import numpy as np

    if not bodies:
        return [], []
    joined = b"\n".join(bodies)
    ends = np.cumsum(np.fromiter(map(len, bodies), np.int64, len(bodies)) + 1) - 1
    return chains_joined(joined, ends, run, symbol, lambda odd: line_by_line(list(map(bodies.__getitem__, odd))))


def chains_joined(
    joined: bytes,
    ends: Any,
    run: Any,
    symbol: Callable[[bytes, bytes, bool], Frames],
    line_by_line: Callable[[list[int]], tuple[list[Frames], list[int]]],
) -> tuple[list[Frames], list[int]]:
    """:func:`chains_compiled` of texts already joined by newlines (text ``b`` ends at ``ends[b]``, exclusive).

    ``line_by_line(numbers)``: the reader's reading of the texts of those numbers, for those the kernel does
    not key.
    """
    made, of_body, odd = chains_numbered(joined, ends, run, symbol, line_by_line)
    if not odd:
        return list(map(made.__getitem__, of_body.tolist())), [0] * len(of_body)
    out_frames: list[Frames] = []
    bad: list[int] = []
    for i, c in enumerate(of_body.tolist()):
        frames, n_bad = (made[c], 0) if c >= 0 else odd[i]
        out_frames.append(frames)
        bad.append(n_bad)
    return out_frames, bad


def _newlines(buf: Any) -> int:
    """The newlines of a uint8 array, counted a block at a time (no comparison array as large as ``buf``)."""
    import numpy as np

    return sum(int(np.count_nonzero(buf[at : at + _BLOCK] == 10)) for at in range(0, len(buf), _BLOCK))


#: Bytes of a uint8 array compared at once when its newlines are counted.
_BLOCK = 1 << 20


def chains_numbered(
    joined: bytes | Any,
    ends: Any,
    run: Any,
    symbol: Callable[[bytes, bytes, bool], Frames],
    line_by_line: Callable[[list[int]], tuple[list[Frames], list[int]]],
) -> tuple[list[Frames], Any, dict[int, tuple[Frames, int]]]:
    """:func:`chains_joined` as numbers: each chain's frames, each text's chain number (an int64 array; -1 for a
    text the kernel does not key) and, for those texts, their frames and lines that are not frames.

    ``joined``: bytes, or a uint8 numpy array (read where it is: the reader's store of chain texts, 25 MB on a
    recording of distinct stacks, is not copied into a bytes object).
    """
    import numpy as np

    n_bodies = len(ends)
    if not n_bodies:
        return [], np.zeros(0, np.int64), {}
    if isinstance(joined, bytes):
        buf, n_lines = np.frombuffer(joined, np.uint8), joined.count(b"\n") + 1
    else:
        buf, n_lines = joined, _newlines(joined) + 1
    view = memoryview(joined)  # a key's symbol and DSO are sliced from it (bytes of bytes: no copy)
    keys, chains = ROOM + n_lines // 16, ROOM + n_bodies // 4
    while True:
        line_ids, first, count, body_chain, key_rows, _, chain_first, _ = out = _tables(n_lines, n_bodies, keys, chains)
        n_keys, n_chains = run(buf, ends, *out)
        if n_keys >= 0 and n_chains >= 0:
            break
        keys, chains = (keys * 4 if n_keys < 0 else keys), (chains * 4 if n_chains < 0 else chains)
    # Each key's frames, parsed once.
    frames_of = [
        symbol(bytes(view[a:b]), bytes(view[c:d]), bool(high)) for a, b, c, d, high in key_rows[:n_keys, :5].tolist()
    ]
    # Each chain's frames: its keys' frames, last line first (the text is leaf first).
    ids = line_ids.tolist()
    made: list[Frames] = []
    for at, n in zip(first[chain_first[:n_chains]].tolist(), count[chain_first[:n_chains]].tolist(), strict=True):
        part = ids[at : at + n]
        part.reverse()
        made.append(tuple(chain.from_iterable(map(frames_of.__getitem__, part))))
    at_odd = np.flatnonzero(body_chain < 0).tolist()
    odd: dict[int, tuple[Frames, int]] = {}
    if at_odd:
        got_frames, got_bad = line_by_line(at_odd)
        odd = dict(zip(at_odd, zip(got_frames, got_bad, strict=True), strict=True))
    return made, body_chain, odd


__all__ = ["chains_compiled", "chains_joined", "chains_numbered"]
