"""The profile reader's chunk pass through the compiled kernel (:mod:`collectors.perf_chunk_kernel`).

:class:`ChunkSlots` keeps the kernel's tables between chunks (the masked headers, call chain texts, frame keys,
chains and slots seen) and gives, per chunk, what the numpy path finds with
:func:`collectors.perf_scan.mask_times`, a split and a dictionary: each piece's slot, start, length, newlines
and times, the new slots' headers and call chain texts (as numbers) and the span of the times.  A chunk whose
new texts the reader then cannot take is forgotten (:meth:`ChunkSlots.forget`), as the Python path leaves its
dictionary unchanged; the headers, call chain texts, keys and chains it numbered stay numbered (numbers nothing
counts).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from itertools import chain
from typing import Any

from collectors.perf_chunk_kernel import (
    BODIES,
    BODY_MODE,
    BODY_USED,
    CHAINS,
    CHUNK_MODE,
    COLONS,
    HEADER_USED,
    HEADERS,
    KEY_COLUMNS,
    KEY_USED,
    KEYS,
    KEYS_USED,
    NEW,
    NEWLINES,
    SLOTS,
    STATE_SIZE,
    TIMES,
)

_NEWLINE, _COLON = 10, 58
#: The most bytes reserved at once for the store of call chain texts (it grows by doubling past that).
STORE_RESERVED = 256 << 20
#: Input bytes per text the slots' and texts' tables have room for at first (:class:`ChunkSlots`).
PRESIZE = 256


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
    masked: Any  # the chunk with its times masked (uint8; the scanner's buffer: valid until its next scan)
    newlines: Any  # the offsets of its newlines (as valid)
    colons: Any  # the colon of each time, in order
    wholes: Any  # the digits of each time as one integer (the dot left out)
    headers: Any  # the masked header's number of each new slot (ChunkSlots.header_text)
    bodies: Any  # its call chain text's number (Bodies.text)

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

    All entries at once: sorted by their home place, each lands on its home or the place after the one before it,
    whichever is later (a running maximum); every place between an entry's home and where it lands is then taken,
    as linear probing needs.  The few runs that pass the table's end go on at its start, one entry at a time.
    """
    import numpy as np

    table = np.zeros(1 << (2 * size).bit_length(), np.int64)
    mask = len(table) - 1
    entries = np.arange(first, len(hashes), dtype=np.int64)
    home = hashes[first:] & mask
    order = np.argsort(home, kind="stable")
    home, entries = home[order], entries[order]
    steps = np.arange(len(home), dtype=np.int64)
    at = steps + np.maximum.accumulate(home - steps) if len(home) else home
    inside = at <= mask
    table[at[inside]] = entries[inside] + 1
    for entry, home_at in zip(entries[~inside].tolist(), (at[~inside] & mask).tolist(), strict=True):
        place = home_at
        while table[place]:
            place = (place + 1) & mask
        table[place] = entry + 1
    return table


def _grown(array: Any, size: int, used: int) -> Any:
    """The first ``used`` rows of ``array`` at the start of an array of ``size`` rows or more (twice its rows: growth
    is amortised).

    The rest is left as it is: the kernel reads an entry's row and a store's bytes only once it wrote them.  Only
    the rows written are copied: the room the kernel asks for (every line of a chunk a new key, every byte of it a
    new text) is mostly never written, and copying it took its pages (1.9k page faults, ~5 ms, per 50 MB read).
    """
    import numpy as np

    out = np.empty((max(size, 2 * len(array)), *array.shape[1:]), array.dtype)  # read only where written
    out[:used] = array[:used]
    return out


class ChunkSlots:
    """The masked texts seen so far, numbered by their parts, and their slots (slot 0: the empty text), for the
    kernel ``run`` (:func:`collectors.perf_chunk_kernel.scan_chunk`)."""

    def __init__(self, run: Any, expected: int = 0) -> None:
        """``expected``: the size of the input when known (the store of call chain texts is never larger)."""
        import numpy as np

        self.run = run
        # Room at first for a text per PRESIZE bytes of the input (about a sample's length: a recording of distinct
        # stacks), so that its tables are neither grown nor rehashed; np.zeros takes pages only as they are written,
        # so an input of repeated stacks pays for what it uses.
        rows = 1 << max(10, (min(expected, STORE_RESERVED) // PRESIZE).bit_length())
        self.table = np.zeros(2 * rows, np.int64)  # the slots
        self.slot_meta = np.zeros((rows, 3), np.int64)
        self.header_table = np.zeros(1 << 10, np.int64)
        self.header_meta = np.zeros((1 << 8, 3), np.int64)
        self.header_store = np.empty(1 << 16, np.uint8)
        self.body_table = np.zeros(2 * rows, np.int64)
        self.body_meta = np.zeros((rows, 4), np.int64)
        # Room for the whole input at once: its pages are taken only as texts are stored (a copy per doubling
        # would touch twice the store's size).  Bounded: a kernel refuses a reservation much larger than its
        # memory (heuristic overcommit), and the distinct texts of a large input are a fraction of it.
        self.body_store = np.empty(max(1 << 20, (min(expected, STORE_RESERVED) + 7) // 8 * 8), np.uint8)  # (words)
        self.key_table = np.zeros(1 << 12, np.int64)
        self.keys = np.zeros((1 << 10, KEY_COLUMNS), np.int64)
        self.key_store = np.empty(1 << 16, np.uint8)
        self.chain_table = np.zeros(1 << 12, np.int64)
        self.chain_meta = np.zeros((1 << 10, 3), np.int64)
        self.key_ids = np.empty(1 << 16, np.int64)
        self.state = np.zeros(STATE_SIZE, np.int64)
        self.state[SLOTS] = 1
        self.span = np.zeros(6, np.float64)
        self._undo: tuple[Any, int] | None = None
        self._scratch = np.empty(0, np.int64)  # the per-piece outputs of a chunk, six of them
        # A chunk's bytes, newlines, colons, and its times' colons and digits: kept from chunk to chunk (pages
        # taken once, not per chunk); the newlines and colons grow when a chunk has more.
        self._buf = np.empty(0, np.uint8)
        self._words = self._buf.view(np.uint64)  # the same memory, eight bytes at a time
        self._found = np.empty((4, 0), np.int64)
        self._lines = 0  # the newlines of the last chunk
        self._none = np.zeros(0, np.int64)

    def _room(self, size: int, pieces: int, lines: int) -> None:
        """Room for every one of ``pieces`` pieces and ``lines`` lines of ``size`` bytes being new."""
        state = self.state
        # (entries made, rows wanted, meta array, table, hash column, first entry) per kind
        for count, want, meta_name, table_name, column, first in (
            (int(state[SLOTS]), pieces, "slot_meta", "table", 2, 1),
            (int(state[HEADERS]), pieces, "header_meta", "header_table", 2, 0),
            (int(state[BODIES]), pieces, "body_meta", "body_table", 2, 0),
            (int(state[KEYS]), lines, "keys", "key_table", 5, 0),
            (int(state[CHAINS]), pieces, "chain_meta", "chain_table", 2, 0),
        ):
            rows = count + want
            meta = getattr(self, meta_name)
            if len(meta) < rows:
                setattr(self, meta_name, meta := _grown(meta, rows, count))
            if len(getattr(self, table_name)) < 2 * rows:
                # Rehash: the table grows by a power of two and every entry goes to its place in it.
                setattr(self, table_name, _rehashed(rows, meta[:count, column], first))
        for store_name, used, more in (
            ("header_store", HEADER_USED, size + 8 * pieces),  # (each text starts at a word: 7 bytes more at most)
            ("body_store", BODY_USED, size + 8 * pieces),
            ("key_store", KEY_USED, size),
            ("key_ids", KEYS_USED, lines),
        ):
            written = int(state[used])
            want = (written + more + 7) // 8 * 8  # (whole words: the kernel reads the keys' as words)
            if len(getattr(self, store_name)) < want:
                setattr(self, store_name, _grown(getattr(self, store_name), want, written))

    def _run(
        self,
        buf: Any,
        words: Any,
        newlines: Any,
        cands: Any,
        colons: Any,
        wholes: Any,
        mode: int,
        starts: Any,
        ends: Any,
        outs: tuple[Any, ...],
    ) -> int:
        import numpy as np

        return int(
            self.run(
                buf,
                words,
                newlines,
                cands,
                colons,
                wholes,
                mode,
                starts,
                ends,
                self.table,
                self.slot_meta,
                self.header_table,
                self.header_meta,
                self.header_store,
                self.header_store.view(np.uint64),
                self.body_table,
                self.body_meta,
                self.body_store,
                self.body_store.view(np.uint64),
                self.key_table,
                self.keys,
                self.key_store,
                self.key_store.view(np.uint64),
                self.chain_table,
                self.chain_meta,
                self.key_ids,
                self.state,
                *outs,
                self.span,
            )
        )

    def scan(self, rest: bytes, view: memoryview) -> Scanned | None:
        """The pieces of ``rest + view`` (whole samples) and their slots; None when a time is too long to read.

        The chunk's masked bytes and newlines (:attr:`Scanned.masked`, :attr:`Scanned.newlines`) are read where the
        kernel left them: valid until the next scan.
        """
        import numpy as np

        self._undo = None
        size = len(rest) + len(view)
        if len(self._buf) < size:
            self._buf = np.empty((max(size, 2 * len(self._buf)) + 7) // 8 * 8, np.uint8)
            self._words = self._buf.view(np.uint64)
        buf = self._buf[:size]
        buf[: len(rest)] = np.frombuffer(rest, np.uint8)
        buf[len(rest) :] = np.frombuffer(view, np.uint8)
        if self._found.shape[1] < size // 16 + 16:
            self._found = np.empty((4, size // 16 + 16), np.int64)  # a line or a colon every 16 bytes or fewer
        room = self._lines + self._lines // 2 + 64  # newlines: as the last chunk, and more (the kernel checks)
        while True:
            newlines, cands, colons, wholes = self._found
            most = room // 2 + 2  # pieces: two newlines between two
            self._room(size, most, room + 1)
            if len(self._scratch) < 6 * most:
                self._scratch = np.empty(12 * most, np.int64)
            outs = tuple(self._scratch[i * most : (i + 1) * most] for i in range(6))
            before = int(self.state[SLOTS])
            n = self._run(buf, self._words, newlines, cands, colons, wholes, CHUNK_MODE, self._none, self._none, outs)
            if n != -2:
                break
            # Not room enough for its newlines, colons, pieces or lines: room for them all, and the chunk again
            # (nothing was done).
            room = int(self.state[NEWLINES])
            found = max(room, int(self.state[COLONS]))
            if self._found.shape[1] < found:
                self._found = np.empty((4, 2 * found), np.int64)
        self._lines = int(self.state[NEWLINES])
        if n < 0:
            return None
        slots, starts, lines, times, new_at, new_pos = outs
        newlines = newlines[: int(self.state[NEWLINES])]
        colons = colons[: int(self.state[COLONS])]
        n_new = int(self.state[NEW])
        self._undo = (new_pos[:n_new].copy(), before)
        # Copies: the scratch arrays are the next chunk's.
        slots, starts, lines, times = slots[:n].copy(), starts[:n].copy(), lines[:n].copy(), times[:n].copy()
        new_at = new_at[:n_new].copy()
        lengths = np.empty(n, np.int64)
        lengths[:-1] = starts[1:] - 2 - starts[:-1]
        lengths[-1] = size - starts[-1]
        n_times = int(self.state[TIMES])
        lo, hi, first, last, back, gap = self.span.tolist()
        made = self.slot_meta[before : before + n_new]
        return Scanned(
            slots,
            starts,
            lengths,
            lines,
            times,
            new_at,
            before,
            lo if n_times else None,
            hi if n_times else None,
            (first, last, back, gap) if n_times else None,
            buf,
            newlines,
            colons[:n_times].copy(),
            wholes[:n_times].copy(),
            made[:, 0].copy(),
            made[:, 1].copy(),
        )

    def forget(self) -> None:
        """Forget the new slots of the last chunk scanned (the reader read that chunk another way)."""
        if self._undo is None:
            return
        # The newest entries of a linear-probing table are at the ends of their runs: clearing them leaves
        # every older entry reachable.
        positions, slots = self._undo
        self.table[positions] = 0
        self.state[SLOTS] = slots
        self._undo = None

    def header_text(self, k: int) -> bytes:
        """Masked header ``k`` as bytes."""
        at, size, _ = self.header_meta[k].tolist()
        return self.header_store[at : at + size].tobytes()

    @property
    def headers(self) -> int:
        """The masked headers numbered so far."""
        return int(self.state[HEADERS])

    def bodies(self) -> Bodies:
        """The call chain texts numbered so far, and more to number (:class:`Bodies`)."""
        return Bodies(self)


class Bodies:
    """The call chain texts a :class:`ChunkSlots` numbered (each kept as its lines' numbers), with their chains."""

    def __init__(self, slots: ChunkSlots) -> None:
        self.slots = slots

    def __len__(self) -> int:
        return int(self.slots.state[BODIES])

    def number(self, buf: Any, starts: Any, ends: Any) -> Any:
        """The number of each text ``buf[starts[i]:ends[i]]`` (int64 array); texts not met before get the next ones."""
        import numpy as np

        s = self.slots
        if not buf.flags.writeable:
            buf = buf.copy()  # (the kernel's chunk mode writes its buffer: its one type is a writable array)
        n = len(starts)
        size = int((ends - starts).sum()) if n else 0
        lines = int(np.count_nonzero(buf == _NEWLINE)) + n
        s._room(size, n, lines)
        outs = tuple(np.empty(max(n, 1), np.int64) for _ in range(6))
        none = s._none
        s._run(buf, s._words[:0], none, none, none, none, BODY_MODE, starts, ends, outs)
        return outs[0][:n].copy()

    def text(self, k: int) -> bytes:
        """Text ``k`` as bytes."""
        s = self.slots
        at, size = s.body_meta[k, :2].tolist()
        return s.body_store[at : at + size].tobytes()

    def chains(self) -> Any:
        """Each text's chain (its frame keys' sequence) by number; -1 for a text holding a line that is not keyed."""
        return self.slots.body_meta[: len(self), 3].copy()

    def frames(self, symbol: Any, chains: Any) -> list[Any]:
        """The root-to-leaf frames of the chains numbered ``chains``: each key's ``symbol(raw, dso, high)`` (each
        key parsed once), last line first (a chain's keys are leaf first)."""
        import numpy as np

        s = self.slots
        view = s.key_store.data
        spans = s.chain_meta[chains, :2].tolist()
        key_ids = s.key_ids[: int(s.state[KEYS_USED])].tolist()
        n_keys = int(s.state[KEYS])
        # The keys of these chains (all of them, when all chains are asked for), each parsed once.
        if len(spans) == int(s.state[CHAINS]):
            used = np.arange(n_keys)
        else:
            used = np.unique(np.array(list(chain.from_iterable(key_ids[a : a + n] for a, n in spans)), np.int64))
        frames_of: list[Any] = [None] * n_keys
        for k, (a, b, c, d, high) in zip(used.tolist(), s.keys[used, :5].tolist(), strict=True):
            frames_of[k] = symbol(bytes(view[a:b]), bytes(view[c:d]), bool(high))
        made = []
        for at, n in spans:
            part = key_ids[at : at + n]
            part.reverse()
            made.append(tuple(chain.from_iterable(map(frames_of.__getitem__, part))))
        return made

    def key_texts(self) -> tuple[list[str], list[str], list[bool]]:
        """Each key's symbol and DSO decoded as the reader decodes them (UTF-8, an undecodable byte kept as a lone
        surrogate), and whether its address is in the kernel half."""
        s = self.slots
        n_keys = int(s.state[KEYS])
        spans = s.keys[:n_keys, :5].tolist()
        store = s.key_store[: int(s.state[KEY_USED])].tobytes()
        if store.isascii():  # (most are: all decoded at once, each key's texts slices of that one text)
            text = store.decode("ascii")
            syms = [text[a:b] for a, b, _, _, _ in spans]
            dsos = [text[c:d] for _, _, c, d, _ in spans]
        else:
            syms = [store[a:b].decode("utf-8", "surrogateescape") for a, b, _, _, _ in spans]
            dsos = [store[c:d].decode("utf-8", "surrogateescape") for _, _, c, d, _ in spans]
        return syms, dsos, [high == 1 for _, _, _, _, high in spans]

    def joined(self, names: list[str | None], chains: Any) -> list[str]:
        """The frame names of the chains numbered ``chains``, root to leaf, joined by ``;`` (the folded stacks'
        form), from each key's ``names`` (its frames' names joined by ``;``; None: a key of no frame, left out)."""
        import numpy as np

        s = self.slots
        at, count = s.chain_meta[chains, :2].T
        # All the chains' keys in one array, each chain's root first (its keys are leaf first), keys of no frame
        # left out: then each chain's names are a slice of one list.
        ends = np.cumsum(count)
        starts = ends - count
        total = int(ends[-1]) if len(ends) else 0
        keys = s.key_ids[: int(s.state[KEYS_USED])][np.repeat(at + count - 1 + starts, count) - np.arange(total)]
        named = np.fromiter((n is not None for n in names), bool, len(names))
        if not named.all():
            kept = np.concatenate(([0], np.cumsum(named[keys])))
            keys = keys[named[keys]]
            starts, ends = kept[starts], kept[ends]
        texts = [n or "" for n in names]  # (those of no frame are no chain's now)
        flat = list(map(texts.__getitem__, keys.tolist()))
        join = ";".join
        return [join(flat[a:b]) for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]


__all__ = ["Bodies", "ChunkSlots", "Scanned"]
