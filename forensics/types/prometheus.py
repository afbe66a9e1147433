"""What ``kforensic leaks --prometheus`` read of one instance: its metric family, scrape gaps and resets.

Made by collectors/fleet_metrics.py, kept in the fleet's results (forensics/types/fleet.py) and shown by
its renderer (forensics/report/fleet_leaks.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, overload

from forensics.units import iso_utc as iso

if TYPE_CHECKING:  # the rule takes arrays too (a store's steps), without importing numpy for the fleet's records
    import numpy as np
    import numpy.typing as npt

#: More scrape gaps than this are said as one note (count, seconds in all, the longest).
GAPS_SAID_ONE_BY_ONE = 3


@dataclass(frozen=True)
class Family:
    """The metric names of one exporter."""

    name: str
    active: str
    objects: str
    objsize: str
    cache_label: str
    boot: str


#: A hole between two samples longer than this many sampling intervals is a gap (a stopped sampler, a suspend,
#: failed scrapes), for a store and Prometheus alike: one missed sample (2 intervals, with jitter) is not one, two are.
GAP_INTERVALS = 2.5


@overload
def is_gap(seconds: float, interval: float) -> bool: ...
@overload
def is_gap(seconds: npt.NDArray[np.float64], interval: float) -> npt.NDArray[np.bool_]: ...
def is_gap(seconds: float | npt.NDArray[np.float64], interval: float) -> bool | npt.NDArray[np.bool_]:
    """Whether ``seconds`` between two samples taken every ``interval`` seconds is a gap in the sampling (element-wise
    for an array of steps)."""
    return seconds > GAP_INTERVALS * interval


@dataclass(frozen=True)
class Gap:
    """Steps of the query window without a sample of this instance."""

    start: float  # last sample before the gap
    end: float  # first sample after it
    # Scrapes went on but served the reading taken before (slab-watch's textfile sample time did not move): the
    # sampler stopped, Prometheus did not fail.
    sampling: bool = False

    @property
    def kind(self) -> str:
        """``scrape gap``, or ``sampling gap`` when the exporter's sampler stopped while scrapes went on."""
        return "sampling gap" if self.sampling else "scrape gap"

    @property
    def seconds(self) -> float:
        """Length of the gap."""
        return self.end - self.start


@dataclass(frozen=True)
class Reset:
    """A series that started over: a reboot (boot time changed) or a counter that went down."""

    at: float
    series: str
    what: str


@dataclass(frozen=True)
class InstanceRead:
    """What was read of one instance, without its sample frames: its metric family, scrape gaps, resets, points."""

    instance: str
    family: Family
    gaps: tuple[Gap, ...]
    resets: tuple[Reset, ...]
    points: int  # slab points read
    repeats: int = 0  # query steps that showed a sample already read (late or missed scrapes): not samples


def gap_notes(gaps: Sequence[Gap], across: str = "") -> list[str]:
    """Scrape gaps in words: each, or (more than :data:`GAPS_SAID_ONE_BY_ONE`: late or failed scrapes on a loaded
    host) one note with their count, seconds in all and the longest.  ``across``: what is said of a figure
    computed over them (e.g. ": the rate is computed across it")."""
    if len(gaps) > GAPS_SAID_ONE_BY_ONE:
        longest = max(gaps, key=lambda g: g.seconds)
        kinds = sorted({g.kind for g in gaps}, reverse=True)  # scrape, sampling
        noun = " and ".join(k.removesuffix(" gap") for k in kinds) + " gaps"
        return [
            f"{len(gaps)} {noun} ({sum(g.seconds for g in gaps):.0f} s in all, the longest {longest.seconds:.0f} s"
            f" from {iso(longest.start)} to {iso(longest.end)}){across.replace(' it', ' them')}"
        ]
    return [f"{g.kind} of {g.seconds:.0f} s from {iso(g.start)} to {iso(g.end)}{_why(g)}{across}" for g in gaps]


def _why(gap: Gap) -> str:
    return " (scraped on, no new sample: the sampler stopped)" if gap.sampling else ""
