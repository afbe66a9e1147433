"""The labelled synthetic suite: cache series of known shapes generated from fixed seeds.

Each :class:`Shape` makes the bytes of one cache over time (``leak`` says
whether it is a leak); :func:`frame_for` turns a series into the rows a
slab-watch store holds, next to a few flat filler caches.  Run as a script to
print the precision/recall table of docs/leaks.md::

    .venv/bin/python -m tests.detectors.leaks.synthetic [TRIALS]
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

FloatArray = npt.NDArray[np.float64]
MB = 1024.0 * 1024.0
KB = 1024.0
HOUR = 3600.0
START = 1_780_000_000.0  # a fixed wall clock start (2026)
OBJSIZE = 256
MEM_TOTAL = 8 * 1024**3
CACHE = "kmalloc-256"

#: (hours since start) -> bytes, for one trial's random generator.
Generator = Callable[[FloatArray, np.random.Generator], FloatArray]


@dataclass(frozen=True)
class Shape:
    """A labelled series shape: name, whether it is a leak, duration, interval and generator."""

    name: str
    leak: bool
    hours: float
    interval: float
    make: Generator
    rate: float | None = None  # the true leak rate, bytes/h
    reboot_at: float | None = None  # hours: the boot id changes here


def _white(rng: np.random.Generator, n: int, sigma: float) -> FloatArray:
    return rng.normal(0.0, sigma, n)


def _ar1(rng: np.random.Generator, n: int, sigma: float, phi: float) -> FloatArray:
    out = np.empty(n)
    innovation = sigma * np.sqrt(1 - phi * phi)
    out[0] = rng.normal(0.0, sigma)
    for i in range(1, n):
        out[i] = phi * out[i - 1] + rng.normal(0.0, innovation)
    return out


def linear(rate: float, sigma: float) -> Generator:
    """A steady leak of ``rate`` bytes/h with white noise of ``sigma`` bytes."""
    return lambda t, rng: 20 * MB + rate * t + _white(rng, len(t), sigma)


def bursty(rate: float, sigma: float, every_minutes: float = 12.0) -> Generator:
    """A leak in bursts at random times (Poisson, one per ``every_minutes`` on average), ``rate`` on average.

    Burst sizes vary (gamma, coefficient of variation 0.5): a batch job leaking per request.
    """

    def make(t: FloatArray, rng: np.random.Generator) -> FloatArray:
        span = float(t[-1])
        count = max(1, rng.poisson(span * 60.0 / every_minutes))
        times = np.sort(rng.uniform(0, span, count))
        sizes = rng.gamma(4.0, 1.0, count)
        sizes *= rate * span / sizes.sum()
        steps = np.searchsorted(times, t, side="right")
        cumulative = np.concatenate(([0.0], np.cumsum(sizes)))
        return 20 * MB + cumulative[steps] + _white(rng, len(t), sigma)

    return make


def sawtooth(rise_per_hour: float, period_hours: float, sigma: float) -> Generator:
    """A cache that grows and is reclaimed back to its floor every period."""

    def make(t: FloatArray, rng: np.random.Generator) -> FloatArray:
        phase = rng.uniform(0, period_hours)
        return 20 * MB + rise_per_hour * np.mod(t + phase, period_hours) + _white(rng, len(t), sigma)

    return make


def plateau(amount: float, sigma: float) -> Generator:
    """A cache filling up to a plateau (exponential approach, time constant a 10th to a 4th of the span)."""

    def make(t: FloatArray, rng: np.random.Generator) -> FloatArray:
        tau = float(t[-1]) * rng.uniform(0.1, 0.25)
        return 20 * MB + amount * (1 - np.exp(-t / tau)) + _white(rng, len(t), sigma)

    return make


def daily(amplitude: float, sigma: float, rate: float = 0.0) -> Generator:
    """A daily cycle (a load that follows the day), with an optional leak under it."""

    def make(t: FloatArray, rng: np.random.Generator) -> FloatArray:
        phase = rng.uniform(0, 2 * np.pi)
        cycle = amplitude * (1 + np.sin(2 * np.pi * t / 24.0 + phase))
        return 20 * MB + cycle + rate * t + _white(rng, len(t), sigma)

    return make


def step(sigma: float) -> Generator:
    """A one-time step (a module loaded, a table allocated once) of 2 to 50 MB."""

    def make(t: FloatArray, rng: np.random.Generator) -> FloatArray:
        at = float(t[-1]) * rng.uniform(0.2, 0.8)
        size = rng.uniform(2, 50) * MB
        return 20 * MB + size * (t >= at) + _white(rng, len(t), sigma)

    return make


def flat(sigma: float, phi: float = 0.0) -> Generator:
    """Flat noise: white, or AR(1) with coefficient ``phi`` per sample (correlated, wandering)."""

    def make(t: FloatArray, rng: np.random.Generator) -> FloatArray:
        noise = _white(rng, len(t), sigma) if phi == 0.0 else _ar1(rng, len(t), sigma, phi)
        return 20 * MB + noise

    return make


def reboot_refill(sigma: float, reboot_at: float) -> Generator:
    """A stable cache; at the reboot its counters restart low and it fills back within minutes."""

    def make(t: FloatArray, rng: np.random.Generator) -> FloatArray:
        after = t - reboot_at
        refill = 20 * MB * (1 - np.exp(-np.maximum(after, 0) / rng.uniform(0.05, 0.2)))
        return np.where(t < reboot_at, 20 * MB, 1 * MB + refill) + _white(rng, len(t), sigma)

    return make


def reboot_leak(rate: float, sigma: float, reboot_at: float) -> Generator:
    """A leak that restarts from a low level after a reboot."""

    def make(t: FloatArray, rng: np.random.Generator) -> FloatArray:
        since = np.where(t < reboot_at, t, t - reboot_at)
        return 20 * MB + rate * since + _white(rng, len(t), sigma)

    return make


#: The labelled shapes, leak shapes first.  Rates in bytes/h, noise in bytes per sample.
SHAPES: tuple[Shape, ...] = (
    *(
        Shape(f"linear {r:g} MB/h, noise {s:g} KB", True, 2.0, 60.0, linear(r * MB, s * KB), r * MB)
        for r in (1, 2, 5, 20)
        for s in (64, 256, 512)
    ),
    Shape("slow noisy 0.5 MB/h, noise 512 KB, 8 h", True, 8.0, 60.0, linear(0.5 * MB, 512 * KB), 0.5 * MB),
    Shape("slow noisy 1 MB/h, noise 1 MB, 2 h", True, 2.0, 60.0, linear(1 * MB, 1024 * KB), 1 * MB),
    Shape("bursty 1 MB/h, noise 64 KB", True, 2.0, 60.0, bursty(1 * MB, 64 * KB), 1 * MB),
    Shape("bursty 5 MB/h, noise 256 KB", True, 2.0, 60.0, bursty(5 * MB, 256 * KB), 5 * MB),
    Shape("daily cycle + 1 MB/h, 3 days", True, 72.0, 600.0, daily(20 * MB, 256 * KB, 1 * MB), 1 * MB),
    Shape("reboot, leak 2 MB/h both boots", True, 4.0, 60.0, reboot_leak(2 * MB, 256 * KB, 1.0), 2 * MB, 1.0),
    Shape("sawtooth 20 MB/h, 30 min period", False, 2.0, 60.0, sawtooth(20 * MB, 0.5, 256 * KB)),
    Shape("sawtooth 10 MB/h, 90 min period", False, 4.0, 60.0, sawtooth(10 * MB, 1.5, 256 * KB)),
    Shape("fill to plateau 30 MB", False, 2.0, 60.0, plateau(30 * MB, 256 * KB)),
    Shape("fill to plateau 5 MB, 8 h", False, 8.0, 60.0, plateau(5 * MB, 128 * KB)),
    Shape("daily cycle, 3 days", False, 72.0, 600.0, daily(20 * MB, 256 * KB)),
    Shape("one-time step", False, 2.0, 60.0, step(256 * KB)),
    Shape("flat white noise 256 KB", False, 2.0, 60.0, flat(256 * KB)),
    Shape("flat noise 1 MB", False, 2.0, 60.0, flat(1024 * KB)),
    Shape("flat AR(1) noise 256 KB, phi 0.95", False, 2.0, 60.0, flat(256 * KB, 0.95)),
    Shape("reboot, stable cache refills", False, 4.0, 60.0, reboot_refill(256 * KB, 1.5), None, 1.5),
)


def series(shape: Shape, seed: int) -> tuple[FloatArray, FloatArray]:
    """(wall clock seconds, bytes) of one trial of ``shape``."""
    rng = np.random.default_rng(seed)
    n = int(shape.hours * HOUR / shape.interval) + 1
    # Samples a little late now and then, as a real sampler is.
    walls = START + np.arange(n) * shape.interval + rng.uniform(0, 0.05 * shape.interval, n)
    hours = (walls - START) / HOUR
    return walls, np.maximum(shape.make(hours, rng), OBJSIZE * 16.0)


def frame_for(
    walls: FloatArray,
    values: FloatArray,
    reboot_at: float | None = None,
    cache: str = CACHE,
    fillers: int = 3,
    seed: int = 0,
) -> pd.DataFrame:
    """Slab rows (as the store's slab_frame) for the cache and ``fillers`` flat caches."""
    rng = np.random.default_rng(seed + 1_000_003)
    n = len(walls)
    boot = np.where((walls - START) / HOUR < (reboot_at if reboot_at is not None else np.inf), "boot-a", "boot-b")
    frames = []
    names = [cache, *(f"filler-{i}" for i in range(fillers))]
    for i, name in enumerate(names):
        size = OBJSIZE if i == 0 else 64 * (i + 1)
        series_bytes = values if i == 0 else 4 * MB + rng.normal(0, 16 * KB, n)
        num = np.maximum(np.round(series_bytes / size), 1).astype(np.int64)
        active = np.maximum(num - rng.integers(0, 8, n), 0)
        frames.append(
            pd.DataFrame(
                {
                    "sample_id": np.arange(1, n + 1),
                    "wall": walls,
                    "boot_id": boot,
                    "cache": name,
                    "active_objs": active,
                    "num_objs": num,
                    "objsize": size,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


@dataclass(frozen=True)
class Outcome:
    """The verdict on the labelled cache in one trial, and the worst finding severity rank overall."""

    grade: str
    worst_rank: int  # -1: no finding, 0: info ... 3: high
    rate: float | None


def run_trial(shape: Shape, seed: int) -> Outcome:
    """Analyse one trial and report the verdict on the labelled cache."""
    from detectors.leaks.analysis import LeakInput, analyse

    walls, values = series(shape, seed)
    result = analyse(LeakInput(frame_for(walls, values, shape.reboot_at, seed=seed), mem_total=MEM_TOTAL))
    mine = [v for v in result.caches if v.name == CACHE]
    worst = max(mine, key=lambda v: v.grade.rank, default=None)
    rank = max((f.severity.rank for f in result.findings), default=-1)
    return Outcome(worst.grade.value if worst else "stable", rank, worst.rate if worst else None)


@dataclass(frozen=True)
class ShapeScore:
    """How a shape fared over its trials."""

    shape: Shape
    trials: int
    flagged: int  # findings above info on the labelled cache (medium or high)
    high: int
    above_info: int  # trials with any finding above info
    rate_errors: tuple[float, ...]  # |estimated - true| / true of flagged leak trials


def score(shape: Shape, trials: int, first_seed: int = 0) -> ShapeScore:
    """Run ``trials`` trials with seeds ``first_seed``... and count the outcomes."""
    flagged = high = above = 0
    errors = []
    for seed in range(first_seed, first_seed + trials):
        out = run_trial(shape, seed)
        is_flagged = out.grade in ("leak", "suspect")
        flagged += is_flagged
        high += out.grade == "leak"
        above += out.worst_rank >= 2
        if is_flagged and shape.rate and out.rate is not None:
            errors.append(abs(out.rate - shape.rate) / shape.rate)
    return ShapeScore(shape, trials, flagged, high, above, tuple(errors))


def table(trials: int) -> str:
    """The markdown precision/recall table of docs/leaks.md."""
    lines = [
        "| shape | leak? | trials | flagged (≥ medium) | of which high | any finding > info | median rate error |",
        "|---|---|---|---|---|---|---|",
    ]
    tp = fp = fn = 0
    target_flagged = target_trials = 0
    for shape in SHAPES:
        s = score(shape, trials)
        if shape.leak and shape.rate is not None and shape.rate >= MB and shape.hours <= 2 and shape.interval == 60:
            target_flagged += s.flagged
            target_trials += s.trials
        err = f"{np.median(s.rate_errors):.1%}" if s.rate_errors else "–"
        lines.append(
            f"| {shape.name} | {'yes' if shape.leak else 'no'} | {s.trials} | {s.flagged / s.trials:.0%} "
            f"| {s.high / s.trials:.0%} | {s.above_info / s.trials:.0%} | {err} |"
        )
        if shape.leak:
            tp += s.flagged
            fn += s.trials - s.flagged
        else:
            fp += s.above_info
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    lines.append("")
    lines.append(f"Overall: precision {precision:.1%}, recall {recall:.1%} (flagged = medium or high).")
    if target_trials:
        lines.append(
            f"Leaks of >= 1 MB/h within 2 h of 60 s samples: recall {target_flagged / target_trials:.1%} "
            f"({target_flagged}/{target_trials})."
        )
    return "\n".join(lines)


if __name__ == "__main__":
    print(table(int(sys.argv[1]) if len(sys.argv) > 1 else 50))
