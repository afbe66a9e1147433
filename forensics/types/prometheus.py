"""What ``kforensic leaks --prometheus`` read of one instance: its metric family, scrape gaps and resets.

Made by collectors/fleet_metrics.py, kept in the fleet's results (forensics/types/fleet.py) and shown by
its renderer (forensics/report/fleet_leaks.py).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Family:
    """The metric names of one exporter."""

    name: str
    active: str
    objects: str
    objsize: str
    cache_label: str
    boot: str


@dataclass(frozen=True)
class Gap:
    """Steps of the query window without a sample of this instance."""

    start: float  # last sample before the gap
    end: float  # first sample after it

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
