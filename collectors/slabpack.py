"""The packed rows of the slab-watch store (schema 2): a sample's numbers as little-endian integer blobs.

Schema 1 stored one SQLite row per sample and cache: a week of 10 s samples of
250 caches is 15 million rows, and SQLite hands rows over at about 2 us each, so
reading one back took about a minute.  Schema 2 stores one row per sample: the
cache ids as one blob and each slabinfo column as one blob (likewise the counter
ids and values), so a week is 60,480 rows and numpy decodes each column of a
block of samples at once.

A blob holds ``count`` signed integers of the narrowest width (1, 2, 4 or 8
bytes) that holds them all, so the width is ``len(blob) // count``; an empty
blob means all zeros (the SLAB tunables and ``sharedavail`` on SLUB kernels).
The writer uses the standard ``array`` module only: the sampler never imports
numpy.  :func:`migrate` turns a schema-1 store's tables into schema-2 ones.
"""

from __future__ import annotations

import sqlite3
import sys
from array import array
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from forensics.errors import InputError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

SLAB_COLUMNS = (
    "active_objs",
    "num_objs",
    "objsize",
    "objperslab",
    "pagesperslab",
    "tunable_limit",
    "batchcount",
    "sharedfactor",
    "active_slabs",
    "num_slabs",
    "sharedavail",
)

# One row per sample.  The columns the leak analysis reads come first: SQLite walks a row's overflow
# pages only as far as the last column a query asks for.
PACKED_DDL = """
CREATE TABLE {schema}slab_packed (
    sample_id INTEGER PRIMARY KEY, caches INTEGER NOT NULL, cache_id BLOB NOT NULL,
    {slab_blobs});
CREATE TABLE {schema}counter_packed (
    sample_id INTEGER PRIMARY KEY, counters INTEGER NOT NULL, counter_id BLOB NOT NULL, value BLOB NOT NULL);
""".replace("{slab_blobs}", ", ".join(f"{c} BLOB NOT NULL" for c in SLAB_COLUMNS))

_WIDTHS = ((1, "b"), (2, "h"), (4, "i"), (8, "q"))
assert all(array(code).itemsize == size for size, code in _WIDTHS)  # true on every Linux ABI
_BIG_ENDIAN = sys.byteorder == "big"


def pack(values: Sequence[int]) -> bytes:
    """``values`` as little-endian signed integers of the narrowest width that holds them all (b"" if all 0)."""
    if not values:
        return b""
    low, high = min(values), max(values)
    if low == 0 and high == 0:
        return b""
    for size, code in _WIDTHS:
        bound = 1 << (8 * size - 1)
        if -bound <= low and high < bound:
            packed = array(code, values)
            if _BIG_ENDIAN:
                packed.byteswap()
            return packed.tobytes()
    raise OverflowError(f"a value of {low}..{high} does not fit in 64 bits")


def _width(blob: bytes, count: int) -> int:
    size = len(blob) // count if count > 0 else -1
    if size not in (0, 1, 2, 4, 8) or size * count != len(blob):
        raise InputError(
            f"damaged store: a packed row holds {len(blob)} bytes for {count} numbers",
            hint="salvage it with sqlite3 STORE .recover, or record a new store",
        )
    return size


def unpack_many(blobs: Sequence[bytes], counts: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The integers of several blobs (``counts[i]`` in ``blobs[i]``), concatenated, as int64."""
    import numpy as np

    total = int(counts.sum())
    lengths = np.fromiter(map(len, blobs), dtype=np.int64, count=len(blobs))
    widths = lengths // np.maximum(counts, 1)
    if bool(((widths * counts != lengths) | (counts <= 0) | ~np.isin(widths, (0, 1, 2, 4, 8))).any()):
        for blob, count in zip(blobs, counts.tolist(), strict=True):
            _width(blob, count)  # names the damaged row
    if len(widths) and bool(np.all(widths == widths[0])):  # the usual case: one decode for the block
        if widths[0] == 0:
            return np.zeros(total, dtype=np.int64)
        return np.frombuffer(b"".join(blobs), dtype=f"<i{int(widths[0])}").astype(np.int64)
    out = np.zeros(total, dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
    for size in np.unique(widths).tolist():
        if size == 0:
            continue
        picked = np.flatnonzero(widths == size)
        values = np.frombuffer(b"".join(blobs[i] for i in picked.tolist()), dtype=f"<i{size}")
        # positions of the picked blobs' numbers in the output: each blob's start, then consecutive
        within = np.arange(len(values)) - np.repeat(np.cumsum(counts[picked]) - counts[picked], counts[picked])
        out[np.repeat(starts[picked], counts[picked]) + within] = values
    return out


def unpack(blob: bytes, count: int) -> npt.NDArray[np.int64]:
    """The ``count`` integers of one blob, as int64."""
    import numpy as np

    return unpack_many([blob], np.array([count], dtype=np.int64))


def unpack_list(blob: bytes, count: int) -> list[int]:
    """The ``count`` integers of one blob, as Python ints (without numpy)."""
    size = _width(blob, count)
    if size == 0:
        return [0] * count
    values = array(dict(_WIDTHS)[size])
    values.frombytes(blob)
    if _BIG_ENDIAN:
        values.byteswap()
    return values.tolist()


def _grouped(rows: Iterator[tuple[int, ...]]) -> Iterator[tuple[int, list[tuple[int, ...]]]]:
    """Rows ordered by sample id, grouped: (sample id, its rows without the id)."""
    current: int | None = None
    group: list[tuple[int, ...]] = []
    for row in rows:
        if row[0] != current:
            if current is not None:
                yield current, group
            current, group = row[0], []
        group.append(row[1:])
    if current is not None:
        yield current, group


def packed_slab_row(sample_id: int, rows: Sequence[Sequence[int]]) -> tuple[object, ...]:
    """The slab_packed row of a sample from its (cache id, 11 slabinfo numbers) rows."""
    columns = list(zip(*rows, strict=True))
    return (sample_id, len(rows), *(pack(c) for c in columns))


def packed_counter_row(sample_id: int, rows: Sequence[Sequence[int]]) -> tuple[object, ...]:
    """The counter_packed row of a sample from its (counter id, value) rows."""
    ids, values = zip(*rows, strict=True)
    return (sample_id, len(rows), pack(ids), pack(values))


def migrate(db: sqlite3.Connection, target: str = "main") -> None:
    """Fill schema-2 packed tables in database ``target`` from the schema-1 ``slab`` and ``counter_values``.

    The caller holds the transaction.  Rows are read in primary-key order, so a
    sample's caches (and counters) are packed in id order; readers sort by name.
    """
    schema = f"{target}."
    for statement in PACKED_DDL.format(schema=schema).split(";"):
        if statement.strip():
            db.execute(statement)
    slab = db.execute(
        f"SELECT sample_id, cache_id, {', '.join(SLAB_COLUMNS)} FROM main.slab ORDER BY sample_id, cache_id"
    )
    marks = ", ".join("?" * (3 + len(SLAB_COLUMNS)))
    insert = f"INSERT INTO {schema}slab_packed VALUES ({marks})"
    db.executemany(insert, (packed_slab_row(sid, rows) for sid, rows in _grouped(iter(slab))))
    counters = db.execute("SELECT sample_id, counter_id, value FROM main.counter_values ORDER BY sample_id, counter_id")
    insert = f"INSERT INTO {schema}counter_packed VALUES (?, ?, ?, ?)"
    db.executemany(insert, (packed_counter_row(sid, rows) for sid, rows in _grouped(iter(counters))))
