"""Types of slab samples: snapshot imports (read by the snapshot-input detector) and the stored samples as matrices."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple, Protocol

from forensics.model import NotAvailable

if TYPE_CHECKING:
    from collections.abc import Callable

    import numpy as np
    import numpy.typing as npt
    import pandas as pd


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
    ``active_objs`` and ``num_objs``, and ``num_objs * objsize`` (the bytes the
    analysis judges, multiplied in float64 as it would), without a row per
    number: a week of 10 s samples of 250 caches is three 121 MB matrices
    instead of a 15-million-row frame.  Samples are in id order (only those with slab
    rows), caches sorted by code point (only those present in some sample).
    """

    sample_ids: npt.NDArray[np.int64]  # (samples,)
    walls: npt.NDArray[np.float64]  # (samples,) seconds since the epoch
    boot_codes: npt.NDArray[np.int64]  # (samples,) index into boot_ids, -1 when the boot id is unknown
    boot_ids: tuple[str, ...]
    names: tuple[str, ...]  # (caches,)
    active_objs: npt.NDArray[np.float64]  # (samples, caches), NaN where a sample does not list the cache
    num_objs: npt.NDArray[np.float64]
    num_bytes: npt.NDArray[np.float64]  # num_objs * objsize

    def __len__(self) -> int:
        """How many (sample, cache) rows: the long frame's length."""
        import numpy as np

        return int(np.count_nonzero(~np.isnan(self.num_objs)))

    def between(self, first: float, last: float = float("inf")) -> SlabTable:
        """The samples taken from ``first`` to ``last`` (caches left without a sample dropped)."""
        import numpy as np

        keep = (self.walls >= first) & (self.walls <= last)
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
            self.num_bytes[keep][:, present],
        )


@dataclass(frozen=True)
class CounterTable:
    """Counter samples as a matrix: one row per sample, one column per counter (meminfo, vmstat, fs).

    The same numbers as the store's long counter frame, without a row per
    number (a week of 10 s samples of the 58 counters the leak analysis reads
    is 3.5 million frame rows, 28 MB here).  Samples in id order (those with
    a counter value), columns in counter id order.
    """

    sample_ids: npt.NDArray[np.int64]  # (samples,)
    walls: npt.NDArray[np.float64]
    boot_codes: npt.NDArray[np.int64]  # index into boot_ids, -1 when the boot id is unknown
    boot_ids: tuple[str, ...]
    sources: tuple[str, ...]  # (counters,) meminfo, vmstat or fs
    names: tuple[str, ...]
    units: tuple[str, ...]  # "kB" or ""
    values: npt.NDArray[np.int64]  # (samples, counters), as stored
    present: npt.NDArray[np.bool_]  # (samples, counters): whether the sample has the value

    def __len__(self) -> int:
        """How many (sample, counter) rows: the long frame's length."""
        import numpy as np

        return int(np.count_nonzero(self.present))

    def between(self, first: float, last: float = float("inf")) -> CounterTable:
        """The samples taken from ``first`` to ``last``."""
        keep = (self.walls >= first) & (self.walls <= last)
        return CounterTable(
            self.sample_ids[keep],
            self.walls[keep],
            self.boot_codes[keep],
            self.boot_ids,
            self.sources,
            self.names,
            self.units,
            self.values[keep],
            self.present[keep],
        )

    def frame(self, select: Callable[[str, str], bool]) -> pd.DataFrame:
        """The long frame (sample_id, wall, boot_id, source, name, unit, value) of the counters ``select`` accepts."""
        import numpy as np
        import pandas as pd

        columns = [j for j in range(len(self.names)) if select(self.sources[j], self.names[j])]
        rows, picked = np.nonzero(self.present[:, columns])
        place = np.array(columns, dtype=np.int64)[picked]
        boots = np.array([*self.boot_ids, None], dtype=object)
        return pd.DataFrame(
            {
                "sample_id": self.sample_ids[rows],
                "wall": self.walls[rows],
                "boot_id": boots[self.boot_codes[rows]],  # -1 picks the final None
                "source": np.array(self.sources, dtype=object)[place],
                "name": np.array(self.names, dtype=object)[place],
                "unit": np.array(self.units, dtype=object)[place],
                "value": self.values[rows, place],
            }
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


#: A wall clock that moves more than this (seconds, plus :data:`STEP_SHARE` of the uptime passed) off the uptime
#: that passed between two samples of one boot has been stepped.  Time lines from `date` have whole seconds,
#: uptime hundredths; NTP slews far less than 1%.
STEP_TOLERANCE = 2.0
STEP_SHARE = 0.01


def clock_stepped(moved: float, uptime_passed: float) -> bool:
    """Whether a wall clock that moved ``moved`` seconds off the ``uptime_passed`` between two samples was stepped
    (slab-watch and slab-import when they store samples, the leak analysis when it reads them).

    One that reads earlier than the sample before (``moved < -uptime_passed``) was stepped however little: time
    does not go back, and a clock set back 1.5 s between 1-s samples, under the tolerance, left the later sample
    0.5 s before the earlier one, so the store read "cannot judge ... no uptime in the store to measure across it"
    of samples that all had one, with findings "measured across a 0.5 s step back" at 0.5 beside it."""
    return abs(moved) > STEP_TOLERANCE + STEP_SHARE * uptime_passed or moved < -uptime_passed


@dataclass(frozen=True)
class WallClockStep:
    """The wall clock stepped between two samples of one boot while uptime went on (NTP, a VM resumed).

    Not a reboot: the boot is decided from uptime going back (and the boot id
    where recorded).  Growth is measured on the monotonic clock across the
    step: the samples after it are placed at the earlier sample's time plus
    the uptime that passed, and ``recorded`` keeps what their time line said.
    """

    source: str  # the snapshot file of the sample after the step
    line: int  # its time line
    head: str  # the text of that line
    recorded: float  # the wall time it holds
    expected: float  # the time the uptime since the previous sample gives
    before_source: str  # the sample before the step
    before_line: int

    @property
    def seconds(self) -> float:
        """How far the wall clock stepped (negative: back)."""
        return self.recorded - self.expected


# ---------------------------------------------------------------- what the store gives back (collectors/slabstore.py)


class SampleRow(NamedTuple):
    """A sample of the store (without its data)."""

    id: int
    run_id: int
    wall: float
    uptime: float | None
    boot_id: str | None
    cost: float | None
    missing: str | None


class CounterPoint(NamedTuple):
    """One counter in one sample."""

    sample_id: int
    wall: float
    boot_id: str | None
    value: int


class CacheGrowth(NamedTuple):
    """How a cache changed between the first and last sample of a series."""

    name: str
    first_active_bytes: int
    last_active_bytes: int
    first_active_objs: int
    last_active_objs: int

    @property
    def delta_bytes(self) -> int:
        """Growth in bytes (negative: shrink)."""
        return self.last_active_bytes - self.first_active_bytes


@dataclass(frozen=True)
class StoreSummary:
    """A short account of a run or a whole store: no verdicts, only what was recorded."""

    samples: int
    caches: int
    boots: int
    first_wall: float | NotAvailable
    last_wall: float | NotAvailable
    kmsg_records: int
    kmsg_missing: int
    top_growers: tuple[CacheGrowth, ...]
