"""The profile reader's chunk pass through the compiled kernel (:mod:`collectors.perf_chunk_kernel`).

:class:`ChunkSlots` keeps the kernel's tables between chunks (the masked texts seen, their slots) and gives,
per chunk, what the numpy path finds with :func:`collectors.perf_scan.mask_times`, a split and a dictionary:
each piece's slot, start, length, newlines and times, the new texts (as bytes, the only ones made) and the
span of the times.  A chunk whose new texts the reader then cannot take is forgotten (:meth:`ChunkSlots.forget`),
as the Python path leaves its dictionary unchanged.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from collectors.perf_chunk_kernel import NEW, SLOTS, TIMES, USED

_NEWLINE, _COLON = 10, 58
#: The most bytes reserved at once for the store of masked texts (it grows by doubling past that).
STORE_RESERVED = 256 << 20


class Scanned(NamedTuple):
    """One chunk: per piece its slot, start, length, newlines and times; the new slots' first pieces and texts."""

    slots: Any
    starts: Any
    lengths: Any
    lines: Any
    times: Any
    new_at: Any  # the first piece of each new slot, in slot order
    new_texts: list[bytes]  # their masked texts
    base: int  # the first new slot
    lo: float | None
    hi: float | None


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
        self.span = np.zeros(2, np.float64)
        self._undo: tuple[Any, int, int] | None = None
        self._scratch = np.empty(0, np.int64)  # the per-piece outputs of a chunk, six of them

    def _room(self, size: int, pieces: int) -> None:
        """Room for every one of ``pieces`` pieces of ``size`` bytes being a new text."""
        import numpy as np

        slots = int(self.state[SLOTS]) + pieces
        if len(self.slot_start) < slots:
            self.slot_start = _grown(self.slot_start, slots)
            self.slot_len = _grown(self.slot_len, slots)
            self.slot_hash = _grown(self.slot_hash, slots)
        if len(self.table) < 2 * slots:
            # Rehash: the table grows by a power of two and every slot goes to its place in it, all slots at
            # once, a round per probe step (each free place goes to the first slot that wants it, the others
            # step on): every place between a slot's home and where it lands is taken, as linear probing needs.
            table = np.zeros(1 << (2 * slots).bit_length(), np.int64)
            mask = len(table) - 1
            todo = np.arange(1, int(self.state[SLOTS]), dtype=np.int64)
            at = self.slot_hash[todo] & mask
            while len(todo):
                free = np.flatnonzero(table[at] == 0)
                won = free[np.unique(at[free], return_index=True)[1]]
                table[at[won]] = todo[won] + 1
                left = np.ones(len(todo), bool)
                left[won] = False
                todo, at = todo[left], (at[left] + 1) & mask
            self.table = table
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
        n = self.run(
            buf,
            newlines,
            cands,
            np.empty(len(cands), np.int64),
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
        masked = buf.tobytes() if n_new else b""
        new_texts = list(
            map(masked.__getitem__, map(slice, starts[new_at].tolist(), (starts + lengths)[new_at].tolist()))
        )
        timed = int(self.state[TIMES]) > 0
        lo, hi = self.span.tolist()
        return Scanned(
            slots,
            starts,
            lengths,
            lines,
            times,
            new_at,
            new_texts,
            before[0],
            lo if timed else None,
            hi if timed else None,
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


__all__ = ["ChunkSlots", "Scanned"]
