"""Past the end of a window (--window, --around): each CPU's next event, looked for over a batch's columns.

The analyzers read on past the window's end only until every CPU seen up to it has an event (or a lost-event
marker) after it (``SchedAnalyzer._after_window``, per event: the reference).  :func:`scan_after` does the same
over the rows of an :class:`~forensics.types.trace_batch.EventBatch` with numpy, materialising only the rows it
keeps: what :class:`~detectors.sched.engine.FastAnalyzer` and
:class:`~detectors.sched.analyzer.BatchAnalyzer` run once the window has ended.
"""

from __future__ import annotations

import math
from collections.abc import Collection

import numpy as np

from detectors.sched import rules
from forensics.types.trace import TraceEvent
from forensics.types.trace_batch import EventBatch


def kinds_of(kind: object) -> list[int]:
    """The distinct values of a batch's kind column (or a slice of it)."""
    return np.flatnonzero(np.bincount(np.asarray(kind, dtype=np.intp), minlength=1)).tolist()


def scan_after(
    batch: EventBatch, start: int, seen: Collection[int], after: dict[int, TraceEvent], kinds: set[int]
) -> tuple[bool, float]:
    """Rows ``start..`` of ``batch``, all past the window: each CPU of ``seen`` without an entry in ``after`` gets
    its first event or lost-event marker (a marker for no CPU counts for all).  Returns whether every CPU of
    ``seen`` has one now (``done``: the rows after the one that completed it are not looked at), and the latest
    time of the events looked at (-inf when none); ``kinds`` gets the kinds of the rows looked at."""
    kind = np.asarray(batch.kind[start:])
    cpu = np.asarray(batch.cpu[start:])
    events = np.flatnonzero(kind != rules.LOST)
    found: dict[int, int] = {}  # cpu -> its row (from start)
    cpus, at = np.unique(cpu[events], return_index=True)
    for c, row in zip(cpus.tolist(), events[at].tolist(), strict=True):
        if c in seen and c not in after:
            found[c] = row
    for row in np.flatnonzero(kind == rules.LOST).tolist():
        c = int(cpu[row])
        for one in seen if c < 0 else (c,) if c in seen else ():
            if one not in after and found.get(one, row + 1) > row:
                found[one] = row
    done = len(after) + len(found) == len(seen)
    end = max(found.values(), default=0) + 1 if done else len(kind)
    ts = np.asarray(batch.ts[start:])[events[events < end]]
    kinds.update(kinds_of(kind[:end]))
    for c, row in found.items():
        after[c] = batch.event(start + row)
    return done, float(ts.max()) if len(ts) else -math.inf
