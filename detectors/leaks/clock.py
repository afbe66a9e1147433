"""The samples' time line within a boot: the wall clock where it agrees with the uptime, the uptime where it steps.

Every sample of a slab-watch store records its wall time and its uptime (CLOCK_BOOTTIME: it counts a suspend,
and no one sets it).  Within one boot the uptime says how much time passed between two samples; where the wall
clock moved otherwise (NTP stepping it, a hand, a VM resumed from a snapshot) the clock was stepped, and a span, a
rate or a gap read off the wall clock across the step is wrong: a step forward of an hour read 45 s of a UDP leak
as "grew ... in 59 min", a step back as "46 samples over -3.6e+03 s" (ue21 #7).  The samples after a step are
placed as slab-watch and slab-import place them when they store them (collectors/slabwatch.py,
``MonotonicPlacement``): at the earlier sample's time plus the uptime that passed.  A gap, where the uptime
jumps as much as the wall clock, stays a gap.  At a reboot (another boot id, or the uptime going back) nothing is
carried over: each boot is judged on its own, on its own wall clock.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from forensics.types.leaks import ClockStep, Reboot
from forensics.types.slab import clock_stepped


class TimeLine(NamedTuple):
    """The samples' times as the analysis measures them, the steps of the wall clock and the reboots found."""

    placed: npt.NDArray[np.float64]  # per sample, in the order given
    steps: tuple[ClockStep, ...]
    reboots: tuple[Reboot, ...]


def on_uptime(
    sample_ids: Sequence[int], walls: Sequence[float], uptimes: Sequence[float | None], boots: Sequence[str | None]
) -> TimeLine:
    """Each sample's time on the boot's monotonic clock (its wall time where no step came before it in its boot),
    the steps of the wall clock and the reboots found; the samples in the order taken (id order)."""
    placed = np.asarray(walls, dtype=np.float64).copy()
    steps: list[ClockStep] = []
    reboots: list[Reboot] = []
    offset = 0.0  # how far the wall clock has been stepped since the boot's first sample
    for i in range(1, len(placed)):
        up, before = uptimes[i], uptimes[i - 1]
        if boots[i] != boots[i - 1] or (up is not None and before is not None and up < before):
            offset = 0.0  # a reboot: its own clock from here
            ids = int(sample_ids[i - 1]), int(sample_ids[i])
            reboots.append(Reboot(*ids, boots[i] != boots[i - 1], before, up))
        elif up is not None and before is not None and math.isfinite(up) and math.isfinite(before):
            passed = up - before
            moved = (float(walls[i]) - offset) - (float(placed[i - 1]) + passed)
            if clock_stepped(moved, passed):
                offset += moved
                read = float(walls[i])
                steps.append(ClockStep(int(sample_ids[i - 1]), int(sample_ids[i]), moved, read, read - offset, passed))
        placed[i] = float(walls[i]) - offset
    return TimeLine(placed, tuple(steps), tuple(reboots))


def placed_at(
    sample_ids: npt.NDArray[np.int64], known: npt.NDArray[np.int64], placed: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """The placed times of ``sample_ids`` (each one of ``known``, which is sorted)."""
    return placed[np.searchsorted(known, sample_ids)]
