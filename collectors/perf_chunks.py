"""The profile reader's chunk pass through the compiled kernel (:mod:`collectors.perf_chunk_kernel`).

:class:`ChunkSlots` keeps the kernel's tables between chunks (the masked texts seen, their slots) and gives,
per chunk, what the numpy path finds with :func:`collectors.perf_scan.mask_times`, a split and a dictionary:
each piece's slot, start, length, newlines and times, the new texts (as bytes, the only ones made) and the
span of the times.  A chunk whose new texts the reader then cannot take is forgotten (:meth:`ChunkSlots.forget`),
as the Python path leaves its dictionary unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from collectors.perf_chunk_kernel import NEW, SLOTS, TIMES, USED

_NEWLINE, _COLON = 10, 58
#: The most bytes reserved at once for the store of masked texts (it grows by doubling past that).
STORE_RESERVED = 256 << 20


@dataclass
class Scanned:
    """One chunk: per piece its slot, start, length, newlines and times; the new slots' first pieces and texts."""

    slots: Any
    starts: Any
    lengths: Any
    lines: Any
    times: Any
    new_at: Any  # the first piece of each new slot, in slot order
    base: int  # the first new slot
    lo: float | None
    hi: float | None
    steps: tuple[float, float, float, float] | None  # the first and last time, the largest steps back and forward
    masked: Any  # the chunk with its times masked (uint8)
    newlines: Any  # the offsets of its newlines
    colons: Any  # the colon of each time, in order
    wholes: Any  # the digits of each time as one integer (the dot left out)

    @cached_property
    def new_texts(self) -> list[bytes]:
        """The masked texts of the new slots, as bytes (made only when asked for)."""
        if not len(self.new_at):
            return []
        masked = self.masked.tobytes()
        at = self.new_at
        return list(
            map(masked.__getitem__, map(slice, self.starts[at].tolist(), (self.starts + self.lengths)[at].tolist()))
        )


def _rehashed(size: int, hashes: Any, first: int) -> Any:
    """A zeroed open-addressing table of a power of two above ``2 * size`` places holding entries ``first..`` of
    ``hashes`` (entry + 1 per place), as the kernels' linear probing places them.

    All entries at once, a round per probe step (each free place goes to the first entry that wants it, the
    others step on): every place between an entry's home and where it lands is taken, as linear probing needs.
    """
    import numpy as np

    table = np.zeros(1 << (2 * size).bit_length(), np.int64)
    mask = len(table) - 1
    todo = np.arange(first, len(hashes), dtype=np.int64)
    at = hashes[todo] & mask
    while len(todo):
        free = np.flatnonzero(table[at] == 0)
        won = free[np.unique(at[free], return_index=True)[1]]
        table[at[won]] = todo[won] + 1
        left = np.ones(len(todo), bool)
        left[won] = False
        todo, at = todo[left], (at[left] + 1) & mask
    return table


def _grown(array: Any, size: int) -> Any:
    """``array`` at the start of an array of ``size`` elements or more (twice its length: growth is amortised).

    The rest is left as it is: the kernel reads a slot's entries and the store's bytes only once it wrote them.
    """
    import numpy as np

    out = np.empty(max(size, 2 * len(array)), array.dtype)  # read only where written
    out[: len(array)] = array
    return out


class ChunkSlots:
    """The masked texts seen so far and their slots (slot 0: the empty text), for the kernel ``run``."""

    def __init__(self, run: Any, expected: int = 0) -> None:
        """``expected``: the size of the input when known (the store of masked texts is never larger)."""
        import numpy as np

        self.run = run
        self.table = np.zeros(1 << 12, np.int64)
        self.slot_start = np.zeros(1 << 10, np.int64)
        self.slot_len = np.zeros(1 << 10, np.int64)
        self.slot_hash = np.zeros(1 << 10, np.int64)
        # Room for the whole input at once: its pages are taken only as texts are stored (a copy per doubling
        # would touch twice the store's size).  Bounded: a kernel refuses a reservation much larger than its
        # memory (heuristic overcommit), and the distinct texts of a large input are a fraction of it.
        self.store = np.empty(max(1 << 20, min(expected, STORE_RESERVED)), np.uint8)
        self.state = np.zeros(4, np.int64)
        self.state[SLOTS] = 1
        self.span = np.zeros(6, np.float64)
        self._undo: tuple[Any, int, int] | None = None
        self._scratch = np.empty(0, np.int64)  # the per-piece outputs of a chunk, six of them
        self._wholes = np.empty(0, np.int64)  # the digits of each time of a chunk

    def _room(self, size: int, pieces: int) -> None:
        """Room for every one of ``pieces`` pieces of ``size`` bytes being a new text."""

        slots = int(self.state[SLOTS]) + pieces
        if len(self.slot_start) < slots:
            self.slot_start = _grown(self.slot_start, slots)
            self.slot_len = _grown(self.slot_len, slots)
            self.slot_hash = _grown(self.slot_hash, slots)
        if len(self.table) < 2 * slots:
            # Rehash: the table grows by a power of two and every slot goes to its place in it.
            self.table = _rehashed(slots, self.slot_hash[: int(self.state[SLOTS])], 1)
        used = int(self.state[USED]) + size
        if len(self.store) < used:
            self.store = _grown(self.store, used)

    def scan(self, rest: bytes, view: memoryview) -> Scanned | None:
        """The pieces of ``rest + view`` (whole samples) and their slots; None when a time is too long to read."""
        import numpy as np

        self._undo = None
        size = len(rest) + len(view)
        buf = np.empty(size, np.uint8)
        buf[: len(rest)] = np.frombuffer(rest, np.uint8)
        buf[len(rest) :] = np.frombuffer(view, np.uint8)
        # The newlines and colons, a vector at a time: the kernel steps from one to the next.  Blank lines bound
        # the pieces (two newlines each), colons the times.
        newlines = np.flatnonzero(buf == _NEWLINE)
        cands = np.flatnonzero(buf == _COLON)
        most = len(newlines) // 2 + 2
        self._room(size, most)
        if len(self._scratch) < 6 * most:
            self._scratch = np.empty(12 * most, np.int64)
        slots, starts, lines, times, new_at, new_pos = (self._scratch[i * most : (i + 1) * most] for i in range(6))
        before = int(self.state[SLOTS]), int(self.state[USED])
        colons = np.empty(len(cands), np.int64)
        if len(self._wholes) < len(cands):
            self._wholes = np.empty(2 * len(cands), np.int64)
        n = self.run(
            buf,
            newlines,
            cands,
            colons,
            self._wholes,
            self.table,
            self.slot_start,
            self.slot_len,
            self.slot_hash,
            self.store,
            self.state,
            slots,
            starts,
            lines,
            times,
            new_at,
            new_pos,
            self.span,
        )
        if n < 0:
            return None
        n_new = int(self.state[NEW])
        self._undo = (new_pos[:n_new].copy(), *before)
        # Copies: the scratch arrays are the next chunk's.
        slots, starts, lines, times = slots[:n].copy(), starts[:n].copy(), lines[:n].copy(), times[:n].copy()
        new_at = new_at[:n_new].copy()
        lengths = np.empty(n, np.int64)
        lengths[:-1] = starts[1:] - 2 - starts[:-1]
        lengths[-1] = size - starts[-1]
        n_times = int(self.state[TIMES])
        lo, hi, first, last, back, gap = self.span.tolist()
        return Scanned(
            slots,
            starts,
            lengths,
            lines,
            times,
            new_at,
            before[0],
            lo if n_times else None,
            hi if n_times else None,
            (first, last, back, gap) if n_times else None,
            buf,
            newlines,
            colons[:n_times],
            self._wholes[:n_times].copy(),
        )

    def forget(self) -> None:
        """Forget the new texts of the last chunk scanned (the reader read that chunk another way)."""
        if self._undo is None:
            return
        # The newest entries of a linear-probing table are at the ends of their runs: clearing them leaves
        # every older entry reachable.
        positions, slots, used = self._undo
        self.table[positions] = 0
        self.state[SLOTS] = slots
        self.state[USED] = used
        self._undo = None


class Interned:
    """Texts numbered by :func:`collectors.perf_chunk_kernel.intern_ranges` (the kernel ``run``), in the order met.

    Each text is kept once in :attr:`store`, followed by ``sep`` when it is a byte (0-255): with ``sep`` 10 the
    store is the texts joined by newlines, as the call chain interner reads them.
    """

    def __init__(self, run: Any, sep: int = -1, reserve: int = 1 << 16) -> None:
        import numpy as np

        self.run = run
        self.sep = sep
        self.table = np.zeros(1 << 10, np.int64)
        self.start = np.zeros(1 << 8, np.int64)
        self.length = np.zeros(1 << 8, np.int64)
        self.hash = np.zeros(1 << 8, np.int64)
        self.store = np.empty(max(reserve, 1 << 10), np.uint8)
        self.state = np.zeros(2, np.int64)

    def __len__(self) -> int:
        return int(self.state[0])

    def number(self, buf: Any, starts: Any, ends: Any) -> Any:
        """The number of each text ``buf[starts[i]:ends[i]]`` (int64 array); texts not met before get the next ones."""
        import numpy as np

        n = len(starts)
        entries = int(self.state[0]) + n
        if len(self.start) < entries:
            self.start = _grown(self.start, entries)
            self.length = _grown(self.length, entries)
            self.hash = _grown(self.hash, entries)
        if len(self.table) < 2 * entries:
            self.table = _rehashed(entries, self.hash[: int(self.state[0])], 0)
        used = int(self.state[1]) + int((ends - starts).sum()) + n
        if len(self.store) < used:
            self.store = _grown(self.store, used)
        out = np.empty(n, np.int64)
        self.run(
            buf, starts, ends, self.table, self.start, self.length, self.hash, self.store, self.state, out, self.sep
        )
        return out

    def text(self, k: int) -> bytes:
        """Text ``k`` as bytes."""
        at = int(self.start[k])
        return self.store[at : at + int(self.length[k])].tobytes()


__all__ = ["ChunkSlots", "Interned", "Scanned"]
