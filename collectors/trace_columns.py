"""The trace reader that gives columns: the compiled scanner for common lines, the line parser for the rest.

:class:`BatchParser` is a :class:`~collectors.trace_text.TraceParser` whose
``feed_batch`` returns an :class:`~forensics.types.trace_batch.EventBatch` instead
of a list of records.  Lines in the bracket layout go through
:func:`collectors.trace_scan.scan`; every line it does not take (and every
line of the other layouts) goes through the line parser, so the events, their
order and the counts are the same as ``TraceParser.feed`` gives (tests compare
them).  Records are built only for the events that are cited in the end
(``EventBatch.event``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator, Iterable

import numpy as np
import numpy.typing as npt

from collectors.prefetch import prefetched
from collectors.trace_scan import (
    A_E,
    A_S,
    B_E,
    B_S,
    C_E,
    C_S,
    CPU,
    FULL,
    KIND,
    LINE_E,
    LINE_NO,
    LINE_S,
    N_COLS,
    NEXT_PID,
    NEXT_PRIO,
    PID,
    PRIO,
    SLOW,
    ST_EVENTS,
    ST_LINE_NO,
    ST_POS,
    ST_ROWS,
    ST_SLOW_E,
    ST_SLOW_S,
    ST_STOP,
    ST_UNKNOWN,
    ST_USED,
    ST_WAKING,
    STATE,
    scan,
)
from collectors.trace_text import MAX_UNKNOWN_NAMES, TraceParser
from forensics.types.trace import TraceEvent, gc_paused, make_event
from forensics.types.trace_batch import EventBatch, Interner, state_code

_LOCAL_TIMER = -2  # B_S of an IRQ row from irq_vectors:local_timer_* (its name is not in the line)
_TEXT_KINDS = (5, 6, 10, 11, 12, 13, 14, 15)  # kinds whose state text is interned (see EventBatch)


def _fit(value: int) -> int:
    """A number of a line-parsed record as a column holds it: saturated to 64 bits (the record keeps it whole)."""
    return max(-(1 << 63), min(value, (1 << 63) - 1))


class _Rows:
    """The rows of one batch while it is built: scanner columns plus records of line-parsed events."""

    def __init__(self, data: bytes, capacity: int) -> None:
        self.data = data
        self.buf = np.frombuffer(data, dtype=np.uint8)
        self.words = np.frombuffer(data, dtype=np.uint64, count=len(data) // 8)
        self.out = np.zeros((N_COLS, capacity), dtype=np.int64)  # a row per column: the batch's columns are views
        self.ts = np.zeros(capacity, dtype=np.float64)
        self.work = np.zeros(capacity, dtype=np.int64)  # interned work item of WORK_* rows
        self.n = 0
        self.parsed: dict[int, TraceEvent] = {}  # row -> record, for rows from the line parser

    def grow(self, rows: int) -> None:
        """Make room for at least ``rows`` more rows."""
        need = self.n + rows
        if need <= len(self.ts):
            return
        extra = max(need, 2 * len(self.ts)) - len(self.ts)
        self.out = np.concatenate([self.out, np.zeros((N_COLS, extra), dtype=np.int64)], axis=1)
        self.ts = np.concatenate([self.ts, np.zeros(extra)])
        self.work = np.concatenate([self.work, np.zeros(extra, dtype=np.int64)])

    def add(self, events: list[TraceEvent], interner: Interner) -> None:
        """Append records made by the line parser."""
        self.grow(len(events))
        out, n = self.out, self.n
        for ev in events:
            out[KIND, n] = ev.kind
            out[LINE_NO, n] = ev.line_no
            out[CPU, n] = _fit(ev.cpu)
            out[PID, n] = _fit(ev.pid)
            out[PRIO, n] = _fit(ev.prio)
            out[NEXT_PID, n] = _fit(ev.next_pid)
            out[NEXT_PRIO, n] = _fit(ev.next_prio)
            out[STATE, n] = state_code(ev, interner)
            if ev.kind in (10, 11):
                self.work[n] = interner.id(ev.comm)
            self.ts[n] = ev.ts
            self.parsed[n] = ev
            n += 1
        self.n = n

    def intern(self, start: int, interner: Interner) -> None:
        """Intern the text fields of the scanned rows from ``start`` (IRQ names, work items, callers)."""
        out, data = self.out, self.data
        rows = out[:, start : self.n]
        timer = rows[B_S] == _LOCAL_TIMER  # the most frequent: one name for all
        rows[STATE, timer] = interner.id(b"local_timer")
        for r in (np.flatnonzero(np.isin(rows[KIND], _TEXT_KINDS) & ~timer) + start).tolist():
            b_s = int(out[B_S, r])
            if b_s >= 0:
                out[STATE, r] = interner.id(data[b_s : out[B_E, r]])
            if out[KIND, r] in (10, 11):
                self.work[r] = interner.id(data[out[A_S, r] : out[A_E, r]])

    def event(self, i: int) -> TraceEvent:
        """The record of row ``i``."""
        ev = self.parsed.get(i)
        if ev is not None:
            return ev
        data = self.data
        o = self.out[:, i].tolist()
        kind = o[KIND]
        b_s = o[B_S]
        if b_s == _LOCAL_TIMER:
            state = b"local_timer"
        elif kind == 1:  # the first letter as the scanner read it (trace-cmd's old letters normalised)
            state = bytes((o[STATE],)) + data[b_s + 1 : o[B_E]] if o[B_E] > b_s else b""
        else:
            state = data[b_s : o[B_E]] if b_s >= 0 else b""
        comm = data[o[A_S] : o[A_E]] if o[A_S] >= 0 else b""
        return make_event(
            (
                kind,
                float(self.ts[i]),
                o[CPU],
                o[LINE_NO],
                data[o[LINE_S] : o[LINE_E]],
                o[PID],
                o[PRIO],
                comm,
                state,
                o[NEXT_PID],
                o[NEXT_PRIO],
                data[o[C_S] : o[C_E]] if o[C_S] >= 0 else b"",
            )
        )


class BatchParser(TraceParser):
    """A :class:`TraceParser` that gives an :class:`EventBatch` per chunk (see the module docstring)."""

    def __init__(self, *, skip_wakeup_after_waking: bool = True) -> None:
        super().__init__(skip_wakeup_after_waking=skip_wakeup_after_waking)
        self.interner = Interner()
        self.eid = 0  # events given so far (the next batch's first event id)

    def feed_batch(self, chunk: bytes | list[bytes]) -> EventBatch:
        """Parse the complete lines of ``chunk`` (or of pieces read in a row), after the partial line left before."""
        with gc_paused():
            taken = self._take_lines(chunk)
            if taken is None:
                return self._batch(_Rows(b"", 0))
            data, start, cut, before = taken
            # Room for a row per 128 bytes (lines of events are longer); the scanner asks for more when full.
            rows = _Rows(data, (cut + 1 - start) // 128 + len(before) + 16)
            rows.add(before, self.interner)
            if start <= cut:
                self._scan(rows, start, cut)
            return self._batch(rows)

    def finish_batch(self) -> EventBatch:
        """The last line when the input did not end with a newline."""
        events = self.finish()
        rows = _Rows(b"", len(events))
        rows.add(events, self.interner)
        return self._batch(rows)

    def _scan(self, rows: _Rows, start: int, cut: int) -> None:
        status = np.zeros(10, dtype=np.int64)
        unknown_spans = np.zeros((2, len(rows.ts)), dtype=np.int64)
        counts = self.counts
        unknown = counts.unknown
        pos = start
        while pos <= cut:
            if self._fused is not False:  # a line re-detected the layout: the line parser takes the rest
                self._line_no = counts.lines
                rows.add(self._parse_lines(rows.data[pos:cut].split(b"\n")), self.interner)
                return
            first_row = rows.n
            scan(
                rows.buf,
                rows.words,
                pos,
                cut + 1,
                self._line_no,
                self._seen_waking,
                self._skip_wakeup,
                rows.out,
                rows.ts,
                rows.n,
                unknown_spans,
                status,
            )
            s = status.tolist()
            rows.n = s[ST_ROWS]
            self._line_no = s[ST_LINE_NO]
            self._seen_waking = bool(s[ST_WAKING])
            counts.lines = self._line_no
            counts.events += s[ST_EVENTS]
            counts.used += s[ST_USED]
            rows.intern(first_row, self.interner)
            data = rows.data
            n_unknown = s[ST_UNKNOWN]
            for a, b in zip(unknown_spans[0, :n_unknown].tolist(), unknown_spans[1, :n_unknown].tolist(), strict=True):
                name = data[a:b]
                if name in unknown or len(unknown) < MAX_UNKNOWN_NAMES:
                    unknown[name] = unknown.get(name, 0) + 1
            if s[ST_STOP] == FULL:  # the rows are full (grow them) or the unknown names (counted above)
                if rows.n >= len(rows.ts):
                    rows.grow(len(rows.ts))
                pos = s[ST_POS]
                continue
            if s[ST_STOP] != SLOW:
                return
            rows.add(self._parse_lines([data[s[ST_SLOW_S] : s[ST_SLOW_E]]]), self.interner)
            pos = s[ST_SLOW_E] + 1

    def _batch(self, rows: _Rows) -> EventBatch:
        n = rows.n
        out = rows.out
        col: dict[str, npt.NDArray[np.int64]] = {
            "kind": out[KIND, :n],
            "cpu": out[CPU, :n],
            "line_no": out[LINE_NO, :n],
            "pid": out[PID, :n],
            "prio": out[PRIO, :n],
            "next_pid": out[NEXT_PID, :n],
            "next_prio": out[NEXT_PRIO, :n],
            "state": out[STATE, :n],
        }
        batch = EventBatch(self.eid, ts=rows.ts[:n], work=rows.work[:n], event=rows.event, **col)
        self.eid += n
        return batch


BATCH_BYTES = 8 << 20  # text per batch: per-batch costs vanish, memory stays a few batches' worth


def read_batches(
    chunks: Iterable[bytes], parser: BatchParser, stop: threading.Event
) -> Generator[EventBatch, None, None]:
    """Batches of the text ``chunks``, parsed in a background thread while the caller analyses the last one.

    The scanner runs without the GIL, so reading, decompressing and scanning
    overlap the analysis (two cores do the work of one).  At most two batches
    wait in the queue (bounded memory).  Setting ``stop`` ends the reading
    early (the analysis has seen enough); an error of the reader (a corrupt
    gzip stream, a failing ``trace-cmd report``) is raised here, in the
    caller's thread.
    """

    def produce(put: Callable[[EventBatch], None], stop: threading.Event) -> None:
        pending: list[bytes] = []
        size = 0
        for chunk in chunks:
            pending.append(chunk)
            size += len(chunk)
            if size >= BATCH_BYTES:
                put(parser.feed_batch(pending))
                pending, size = [], 0
            if stop.is_set():
                close = getattr(chunks, "close", None)
                if close is not None:  # a generator: end it now (trace-cmd report is killed)
                    close()
                return
        if pending:
            put(parser.feed_batch(pending))
        put(parser.finish_batch())

    return prefetched(produce, stop, "kforensic-trace-reader")
