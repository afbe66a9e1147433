"""The figures a result asks for: what the delivery step draws and writes, in order.

A pipeline does not draw or write: its result holds each PNG it was asked for as the data to draw and the
path to write, and forensics/delivery.py's ``write_figures`` draws and writes them.  A module of its own, out of
:mod:`forensics.types.results`: the trace pipeline needs these and its own result, not the other results'
dataclasses (creating them all cost ~10 ms of every trace run's start-up).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from forensics.types.sched import TraceAnalysis
    from forensics.types.spans import GanttChart, SpanReport

    FloatArray = npt.NDArray[np.float64]
    BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class FigureDirectory:
    """A directory of plots to make (mode 0700) before the figures after it are written."""

    path: Path


@dataclass(frozen=True)
class SeriesFigure:
    """A flagged leak series: its window medians over time and the fitted trend (forensics/leakplots.py)."""

    path: Path
    title: str
    walls: FloatArray  # the windows' wall times (seconds)
    values: FloatArray  # their medians (bytes)
    judged: BoolArray  # the windows of the judged part (after a late onset)
    trend: FloatArray  # the fitted line at the judged windows (bytes); empty when none is judged
    trend_label: str


@dataclass(frozen=True)
class SpanHistogramFigure:
    """The span durations per name, with P50/P99 (forensics/spanplots.py)."""

    path: Path
    report: SpanReport


@dataclass(frozen=True)
class SpanGanttFigure:
    """The thread states around the slowest spans (detectors/spans/gantt.py, drawn by forensics/spanplots.py)."""

    path: Path
    charts: tuple[GanttChart, ...]


@dataclass(frozen=True)
class CpuTimelineFigure:
    """Who ran on each CPU when, hogs and long waits marked (forensics/report/cpu_timeline.py)."""

    path: Path
    analysis: TraceAnalysis
    runs: Sequence[tuple[int, float, float, int]]  # (cpu, start, end, pid)
    title: str
    named: frozenset[int] = frozenset()  # the pids whose wait a wakeup-latency finding names (marked apart)


#: One step of writing a result's figures.
Figure = FigureDirectory | SeriesFigure | SpanHistogramFigure | SpanGanttFigure | CpuTimelineFigure
