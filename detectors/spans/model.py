"""Typed records of the span analysis: marks, spans, per-name statistics and the breakdown of a slow span."""

from __future__ import annotations

from dataclasses import dataclass

from forensics.model import NotAvailable
from forensics.types.spans import Mark, Ref, Span

__all__ = ["Breakdown", "Mark", "Part", "Ref", "Span", "SpanReport", "SpanStats"]


@dataclass(frozen=True)
class SpanStats:
    """Latency figures of one span name (nearest-rank percentiles: each is the duration of a real span)."""

    name: str
    count: int
    p50: float
    p90: float
    p99: float
    p999: float
    max: float
    mean: float
    unmatched_starts: int
    unmatched_ends: int


@dataclass(frozen=True)
class Part:
    """One interval of a slow span's time: what the thread was doing, and the events that show it."""

    what: str  # running | irq | preempted | runnable | blocked | unknown
    start: float
    end: float
    cpu: int
    detail: str  # who preempted it, the state and waker, the IRQ
    refs: tuple[Ref, ...]
    by_tid: int | None = None  # the preempting task, or the waker
    by_comm: str = ""
    by_prio: int | None = None
    state: str = ""  # the blocked state (S, D, ...)
    syscall: str | NotAvailable | None = None
    chain: tuple[str, ...] = ()  # the waker chain, outermost first

    @property
    def duration(self) -> float:
        """Seconds."""
        return self.end - self.start


@dataclass(frozen=True)
class Breakdown:
    """Where a slow span's wall time went."""

    span: Span
    totals: tuple[tuple[str, float], ...]  # what -> seconds (running, irq, preempted, runnable, blocked, unknown)
    parts: tuple[Part, ...]
    migrations: int
    cpus: tuple[int, ...]
    note: str = ""  # e.g. the kernel trace does not cover the span


@dataclass(frozen=True)
class SpanReport:
    """Everything the span analysis found."""

    stats: tuple[SpanStats, ...]
    spans: tuple[Span, ...]
    slow: tuple[Breakdown, ...]
    sources: tuple[str, ...]
    notes: tuple[str, ...]
