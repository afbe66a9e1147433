"""The typed result of ``kforensic trace``: one analysed trace, ready to render.

A module of its own, re-exported by :mod:`forensics.types.results` (``report`` nests it): the trace command
imports it without the other results' dataclasses (see :mod:`forensics.types.figures`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from forensics.model import Incident, StreamEvent
    from forensics.types.figures import Figure
    from forensics.types.sched import ParseSummary, TraceAnalysis
    from forensics.types.spans import SpanReport
    from forensics.types.syscalls import SyscallLatency
    from forensics.types.trace import StreamCut


@dataclass(frozen=True)
class TraceResult:
    """One analysed trace, ready to render."""

    source: str  # the input's name as findings cite it
    kind: str  # the input's format
    analysis: TraceAnalysis
    parse: ParseSummary
    incident: Incident
    notes: tuple[str, ...] = ()  # what the reader could not read or saw lost (CTF traces)
    ctf: dict[str, object] | None = None  # traces, clocks and streams of a CTF session (JSON "input")
    spans: SpanReport | None = None
    figures: tuple[Figure, ...] = ()  # --png, --span-png, --gantt-png, report's plots (forensics/delivery.py)
    # An LTTng session's event at an analysis's ``line_no`` (its position in the session), named as babeltrace2
    # finds it (collectors.ctf.reader.Session.stream_event); None: a text trace, whose ``line_no`` is a line.
    # (A lookup into the session, not a result: left out of comparisons; what it names is in the incident's evidence.)
    events: Callable[[int], StreamEvent | None] | None = field(default=None, compare=False, repr=False)
    # An LTTng kernel session's syscall latency per syscall name (None: no syscall event declared, or a text trace).
    syscalls: SyscallLatency | None = None
    # The LTTng stream files that end inside a packet: what of the trace was not read (also in the examined block).
    cuts: tuple[StreamCut, ...] = ()
