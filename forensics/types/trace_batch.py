"""Columnar batches of trace events: what the compiled scanner produces and the compiled analysis reads.

A batch holds the events of one chunk of trace text that the analyses use (the
same events, in the same order, as the :class:`~forensics.types.trace.TraceEvent`
records the line parser returns), one numpy array per field.  Text fields that
the analysis compares (IRQ names, work functions, work items) are interned as
integers; everything else stays in the chunk's text and is turned into a
:class:`TraceEvent` only for the few events that end up cited as evidence
(:meth:`EventBatch.event`).

Event ids: the events of a whole trace are numbered from 0 in order; row ``i``
of a batch is event ``first_eid + i``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from forensics.types.trace import TraceEvent

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
COLUMNS = ("kind", "ts", "cpu", "line_no", "pid", "prio", "next_pid", "next_prio", "state", "work")


class Interner:
    """Text to small integers and back (ids from 1; 0 is "no text")."""

    def __init__(self) -> None:
        self.ids: dict[bytes, int] = {b"": 0}
        self.texts: list[bytes] = [b""]

    def id(self, text: bytes) -> int:
        """The id of ``text`` (a new one the first time)."""
        found = self.ids.get(text)
        if found is None:
            found = self.ids[text] = len(self.texts)
            self.texts.append(text)
        return found

    def text(self, ident: int) -> bytes:
        """The text of an id."""
        return self.texts[ident]


@dataclass
class EventBatch:
    """The used events of one chunk, column by column (all int64 but ``ts``).

    Field meaning follows :class:`TraceEvent`: ``pid``/``prio`` of the task
    switched out, woken or exiting (the IRQ number or softirq vector for
    IRQ/softirq events, the lost count for LOST); ``next_pid``/``next_prio``
    of the task switched in (the target CPU, -1 when not printed, for wakeup
    events).  ``state``: for SWITCH the first byte of prev_state (0 when
    empty); for IRQ_ENTRY the interned IRQ name; for WORK_* the interned work
    function; for the irq/preempt toggles the interned caller.  ``work``: for
    WORK_* the interned work item (``TraceEvent.comm``).  ``event(i)`` builds
    the full record of row ``i`` (its line, comms and state text).
    """

    first_eid: int
    kind: I64
    ts: F64
    cpu: I64
    line_no: I64
    pid: I64
    prio: I64
    next_pid: I64
    next_prio: I64
    state: I64
    work: I64
    event: Callable[[int], TraceEvent]

    def __len__(self) -> int:
        return len(self.kind)

    @classmethod
    def from_events(cls, events: Sequence[TraceEvent], first_eid: int, interner: Interner) -> EventBatch:
        """A batch of already parsed records (the line parser's output; tests and the slow layouts)."""
        n = len(events)
        ts = np.zeros(n, dtype=np.float64)
        cols = {name: np.zeros(n, dtype=np.int64) for name in COLUMNS if name != "ts"}
        if n:  # column by column (see record_texts)
            fields = dict(zip(TraceEvent._fields, zip(*events, strict=True), strict=True))
            ts[:] = fields["ts"]
            for name in ("kind", "cpu", "line_no", "pid", "prio", "next_pid", "next_prio"):
                cols[name][:] = fields[name]
            cols["state"][:], cols["work"][:] = record_texts(events, interner)
        rows = list(events)
        return cls(first_eid, ts=ts, **cols, event=rows.__getitem__)


def record_texts(events: Sequence[TraceEvent], interner: Interner) -> tuple[list[int], list[int]]:
    """The ``state`` and ``work`` columns of records (0: none), interned record by record, in their order (an id is
    given at first sight).  The other columns are the records' numbers, written a column at a time: written a record
    at a time, numpy's item stores were half of a small trace's read (issue #28)."""
    states: list[int] = []
    work: list[int] = []
    for ev in events:
        states.append(state_code(ev, interner))
        work.append(interner.id(ev.comm) if ev.kind in (10, 11) else 0)  # Kind.WORK_START, Kind.WORK_END
    return states, work


def state_code(ev: TraceEvent, interner: Interner) -> int:
    """The ``state`` column of one record (see :class:`EventBatch`)."""
    if ev.kind == 1:  # Kind.SWITCH: only the first letter of prev_state is compared
        return ev.state[0] if ev.state else 0
    if ev.state:
        return interner.id(ev.state)
    return 0
