"""Types of slab samples: snapshot imports (read by the snapshot-input detector) and the stored samples as matrices."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple, Protocol

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


class RejectedLine(NamedTuple):
    """A line of a counter file that was not used: where, what it says, and why."""

    line: int  # 1-based, in the file the text came from
    text: str
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}: {self.text[:60]!r}"


class SnapshotPlace(Protocol):
    """Where an imported snapshot stands: its file, first line and the text of that line, and its time."""

    @property
    def source(self) -> str: ...
    @property
    def line(self) -> int: ...
    @property
    def head(self) -> str: ...
    @property
    def wall(self) -> float: ...


@dataclass(frozen=True)
class OutOfOrder:
    """A snapshot whose time is earlier than the one before it in the same file (imported sorted by time)."""

    earlier: SnapshotPlace  # the snapshot before it in the file
    later: SnapshotPlace  # the one that goes back in time


@dataclass(frozen=True)
class SlabTable:
    """Slab samples as matrices: one row per sample, one column per cache (what the leak analysis reads).

    The same numbers as the store's long slab frame (one row per sample and
    cache) for its columns ``sample_id``, ``wall``, ``boot_id``, ``cache``,
    ``active_objs``, ``num_objs`` and ``objsize``, without a row per number:
    a week of 10 s samples of 250 caches is three 121 MB matrices instead of a
    15-million-row frame.  Samples are in id order (only those with slab
    rows), caches sorted by code point (only those present in some sample).
    """

    sample_ids: npt.NDArray[np.int64]  # (samples,)
    walls: npt.NDArray[np.float64]  # (samples,) seconds since the epoch
    boot_codes: npt.NDArray[np.int64]  # (samples,) index into boot_ids, -1 when the boot id is unknown
    boot_ids: tuple[str, ...]
    names: tuple[str, ...]  # (caches,)
    active_objs: npt.NDArray[np.float64]  # (samples, caches), NaN where a sample does not list the cache
    num_objs: npt.NDArray[np.float64]
    objsize: npt.NDArray[np.float64]

    def __len__(self) -> int:
        """How many (sample, cache) rows: the long frame's length."""
        import numpy as np

        return int(np.count_nonzero(~np.isnan(self.num_objs)))

    def since(self, wall: float) -> SlabTable:
        """The samples taken at ``wall`` or later (caches left without a sample dropped)."""
        import numpy as np

        keep = self.walls >= wall
        num = self.num_objs[keep]
        present = ~np.isnan(num).all(axis=0)
        return SlabTable(
            self.sample_ids[keep],
            self.walls[keep],
            self.boot_codes[keep],
            self.boot_ids,
            tuple(self.names[i] for i in np.flatnonzero(present).tolist()),
            self.active_objs[keep][:, present],
            num[:, present],
            self.objsize[keep][:, present],
        )


@dataclass(frozen=True)
class PartialSample:
    """A sample that ends in the middle of a row (a copy or a read cut short): left out, and said.

    Its counters would read as caches that vanished (every row after the cut
    is missing), so the growth between the first and last sample would vanish
    with them.
    """

    source: str  # the snapshot file (or the live file, /proc/slabinfo)
    line: int  # the line that is cut (1-based, in ``source``)
    text: str  # what is left of it
    first_line: int  # where the sample starts in ``source`` (its time line)
    wall: float | None  # the sample's time, when it has one
