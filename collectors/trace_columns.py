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

import contextlib
import mmap
import stat
import threading
from collections import Counter
from collections.abc import Callable, Generator, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from collectors import trace_rows as tr
from collectors.inputs import sniff_compression
from collectors.prefetch import prefetched
from collectors.trace_input import TRACE_DAT_MAGIC, MappedText
from collectors.trace_text import (
    BLANK_LINES,
    MAX_RUN,
    MAX_UNKNOWN_NAMES,
    Text,
    TraceParser,
    count_newlines,
    skipped_event,
)
from forensics.gcpause import gc_paused
from forensics.types.trace import TraceEvent, make_event
from forensics.types.trace_batch import EventBatch, Interner, record_texts

_NEWLINE = 10
_LOCAL_TIMER = -2  # B_S of an IRQ row from irq_vectors:local_timer_* (its name is not in the line)
_TEXT_KINDS = (5, 6, 10, 11, 12, 13, 14, 15)  # kinds whose state text is interned (see EventBatch)
_HAS_TEXT = np.isin(np.arange(32), _TEXT_KINDS)  # by kind (the scanner's kinds are 1-18)


# A TraceEvent's fields by position, and the columns that hold theirs saturated (_fit), for _Rows.add.
_F_KIND, _F_TS, _F_LINE_NO = (TraceEvent._fields.index(f) for f in ("kind", "ts", "line_no"))
_FITTED = tuple(
    (row, TraceEvent._fields.index(f))
    for row, f in (
        (tr.CPU, "cpu"),
        (tr.PID, "pid"),
        (tr.PRIO, "prio"),
        (tr.NEXT_PID, "next_pid"),
        (tr.NEXT_PRIO, "next_prio"),
    )
)


def _fit(value: int) -> int:
    """A number of a line-parsed record as a column holds it: saturated to 64 bits (the record keeps it whole)."""
    return max(-(1 << 63), min(value, (1 << 63) - 1))


class _Rows:
    """The rows of one batch while it is built: scanner columns plus records of line-parsed events."""

    def __init__(self, data: Text, capacity: int) -> None:
        self.data = data
        self.buf = np.frombuffer(data, dtype=np.uint8)
        self.words = np.frombuffer(data, dtype=np.uint64, count=len(data) // 8)
        # A row per column: the batch's columns are views.  Not zeroed (a page fault and a memset per 8 MB
        # batch): the scanner writes every column of its rows, add() those the batch's columns show.
        self.out = np.empty((tr.N_COLS, capacity), dtype=np.int64)
        self.ts = np.empty(capacity, dtype=np.float64)
        self.work = np.zeros(capacity, dtype=np.int64)  # interned work item of WORK_* rows
        self.n = 0
        self.parsed: dict[int, TraceEvent] = {}  # row -> record, for rows from the line parser

    def grow(self, rows: int) -> None:
        """Make room for at least ``rows`` more rows."""
        need = self.n + rows
        if need <= len(self.ts):
            return
        extra = max(need, 2 * len(self.ts)) - len(self.ts)
        self.out = np.concatenate([self.out, np.zeros((tr.N_COLS, extra), dtype=np.int64)], axis=1)
        self.ts = np.concatenate([self.ts, np.zeros(extra)])
        self.work = np.concatenate([self.work, np.zeros(extra, dtype=np.int64)])

    def add(self, events: list[TraceEvent], interner: Interner) -> None:
        """Append records made by the line parser, a column at a time (trace_batch.record_texts)."""
        k = len(events)
        if not k:
            return
        self.grow(k)
        out, n = self.out, self.n
        end = n + k
        fields = tuple(zip(*events, strict=True))  # the records' fields, each a column
        out[tr.KIND, n:end] = fields[_F_KIND]
        out[tr.LINE_NO, n:end] = fields[_F_LINE_NO]
        for row, field in _FITTED:
            try:
                out[row, n:end] = fields[field]
            except OverflowError:  # a number past 64 bits (rare): saturated one by one
                out[row, n:end] = [_fit(v) for v in fields[field]]
        out[tr.STATE, n:end], self.work[n:end] = record_texts(events, interner)
        self.ts[n:end] = fields[_F_TS]
        self.parsed.update(zip(range(n, end), events, strict=True))
        self.n = end

    def intern(self, start: int, interner: Interner) -> None:
        """Intern the text fields of the scanned rows from ``start`` (IRQ names, work items, callers)."""
        out, data = self.out, self.data
        rows = out[:, start : self.n]
        timer = rows[tr.B_S] == _LOCAL_TIMER  # the most frequent: one name for all
        rows[tr.STATE, timer] = interner.id(b"local_timer")
        for r in (np.flatnonzero(_HAS_TEXT[rows[tr.KIND]] & ~timer) + start).tolist():
            b_s = int(out[tr.B_S, r])
            if b_s >= 0:
                out[tr.STATE, r] = interner.id(data[b_s : out[tr.B_E, r]])
            if out[tr.KIND, r] in (10, 11):
                self.work[r] = interner.id(data[out[tr.A_S, r] : out[tr.A_E, r]])

    def event(self, i: int) -> TraceEvent:
        """The record of row ``i``."""
        ev = self.parsed.get(i)
        if ev is not None:
            return ev
        data = self.data
        o = self.out[:, i].tolist()
        kind = o[tr.KIND]
        b_s = o[tr.B_S]
        if b_s == _LOCAL_TIMER:
            state = b"local_timer"
        elif kind == 1:  # the first letter as the scanner read it (trace-cmd's old letters normalised)
            state = bytes((o[tr.STATE],)) + data[b_s + 1 : o[tr.B_E]] if o[tr.B_E] > b_s else b""
        else:
            state = data[b_s : o[tr.B_E]] if b_s >= 0 else b""
        comm = data[o[tr.A_S] : o[tr.A_E]] if o[tr.A_S] >= 0 else b""
        return make_event(
            (
                kind,
                float(self.ts[i]),
                o[tr.CPU],
                o[tr.LINE_NO],
                data[o[tr.LINE_S] : o[tr.LINE_E]],
                o[tr.PID],
                o[tr.PRIO],
                comm,
                state,
                o[tr.NEXT_PID],
                o[tr.NEXT_PRIO],
                data[o[tr.C_S] : o[tr.C_E]] if o[tr.C_S] >= 0 else b"",
            )
        )


#: The scanner's signature (:func:`collectors.trace_scan.scan`).
Scan = Callable[..., None]
SPLIT_BYTES = 1 << 20  # ranges of text from this size are scanned in two halves at once (BatchParser._scan)


class _Ahead(threading.Thread):
    """The scan of the second half of a range, run in a thread of its own from line number 0.

    Its rows go to arrays of its own (the first half's rows are written meanwhile); it stops at the
    first line it does not take or when its rows are full, and the caller goes on from there.
    """

    def __init__(self, rows: _Rows, start: int, cut: int, waking_seen: bool, skip_wakeup: bool, scan: Scan) -> None:
        super().__init__(name="kforensic-trace-scan", daemon=True)
        self.scan = scan
        self.rows, self.start_pos, self.cut = rows, start, cut
        self.waking_seen, self.skip_wakeup = waking_seen, skip_wakeup
        capacity = (cut + 1 - start) // 128 + 16
        self.out = np.empty((tr.N_COLS, capacity), dtype=np.int64)  # the scanner sets every row it writes
        self.ts = np.empty(capacity, dtype=np.float64)
        self.unknown = np.empty((tr.N_SKIPPED, capacity), dtype=np.int64)
        self.status = np.zeros(10, dtype=np.int64)
        self.status[tr.ST_POS] = start  # nothing read yet (should the thread fail to run)
        self.n = 0

    def run(self) -> None:
        rows = self.rows
        self.scan(
            rows.buf,
            rows.words,
            self.start_pos,
            self.cut + 1,
            0,
            self.waking_seen,
            self.skip_wakeup,
            self.out,
            self.ts,
            0,
            self.unknown,
            self.status,
        )
        self.n = int(self.status[tr.ST_ROWS])


class BatchParser(TraceParser):
    """A :class:`TraceParser` that gives an :class:`EventBatch` per chunk (see the module docstring)."""

    def __init__(
        self, *, skip_wakeup_after_waking: bool = False, compiled: bool = True, scan: Scan | None = None
    ) -> None:
        super().__init__(skip_wakeup_after_waking=skip_wakeup_after_waking)
        self.interner = Interner()
        self.eid = 0  # events given so far (the next batch's first event id)
        # False: every line goes through the line parser (nothing to compile; the same events and counts).
        self.compiled = compiled
        # The scanner: collectors.trace_scan.scan (numba, imported at the first scan) unless given, e.g. the
        # one compiled ahead of time (collectors.trace_scan_aot: no numba loaded).
        self._scanner = scan

    def _scan_kernel(self) -> Scan:
        if self._scanner is None:
            from collectors.trace_scan import scan  # numba: imported only when compiled code runs

            self._scanner = scan
        return self._scanner

    def feed_batch(self, chunk: bytes | list[bytes]) -> EventBatch:
        """Parse the complete lines of ``chunk`` (or of pieces read in a row), after the partial line left before."""
        with gc_paused():
            taken = self._take_lines(chunk)
            if taken is None:
                return self._batch(_Rows(b"", 0))
            return self._rows_batch(*taken)

    def feed_mapped(self, mapped: mmap.mmap, lo: int, hi: int) -> EventBatch:
        """``feed_batch(mapped[lo:hi])`` without copying the text: the rows point into the mapping.

        Taken as it is when ``mapped[lo:hi]`` is whole lines with no partial line left before it;
        else (a line longer than a batch, no newline at the end of the file) it is copied and fed.
        """
        if self._tail or self._overlong or hi <= lo or mapped[hi - 1] != _NEWLINE:
            return self.feed_batch(mapped[lo:hi])
        with gc_paused():
            start, before = self._until_layout(mapped, lo, hi - 1)
            return self._rows_batch(mapped, start, hi - 1, before)

    def _rows_batch(self, data: Text, start: int, cut: int, before: list[TraceEvent]) -> EventBatch:
        """The batch of the events ``before`` and of the lines ``data[start:cut]`` (``data[cut]`` is a newline)."""
        # Room for a row per 128 bytes (lines of events are longer); the scanner asks for more when full.
        rows = _Rows(data, (cut + 1 - start) // 128 + len(before) + 16)
        rows.add(before, self.interner)
        if start <= cut:
            if self.compiled:
                self._scan(rows, start, cut)
            else:
                rows.add(self._parse_lines(data[start:cut].split(b"\n")), self.interner)
        return self._batch(rows)

    def finish_batch(self) -> EventBatch:
        """The last line when the input did not end with a newline."""
        events = self.finish()
        rows = _Rows(b"", len(events))
        rows.add(events, self.interner)
        return self._batch(rows)

    def _scan(self, rows: _Rows, start: int, cut: int) -> None:
        """Scan ``rows.data[start:cut]`` (whole lines; ``data[cut]`` is their last newline) into ``rows``.

        A large range is cut in two at a newline and the second half is scanned ahead in a second thread
        (the scanner releases the GIL) while this one scans the first: the scanner is what the other
        threads wait for on two cores.  The second half's rows are taken as they are (line numbers
        shifted) when what they depend on is what the first half left: no line of the first half went
        to the line parser (it may learn a layout), and sched_waking was seen before both or neither
        (after one, sched_wakeup is only counted).  Else, and from the first line the second half did
        not take (a line for the line parser, full rows), the rest is scanned here in order.  Either way
        the rows, their order and the counts are those of one scan.
        """
        half = (cut - start) // 2
        mid = rows.data.find(b"\n", start + half, cut) if half >= SPLIT_BYTES // 2 and self._fused is False else -1
        if mid < 0:
            self._scan_from(rows, start, cut)
            return
        ahead = _Ahead(rows, mid + 1, cut, self._seen_waking, self._skip_wakeup, self._scan_kernel())
        ahead.start()
        before = (self._fused, self._cpu_col, self._seen_waking, self.counts.malformed, self.counts.comments)
        slow = self._scan_from(rows, start, mid)
        ahead.join()
        after = (self._fused, self._cpu_col, self._seen_waking, self.counts.malformed, self.counts.comments)
        if slow or before != after:  # the second half was read with the state of before: read it again
            self._scan_from(rows, mid + 1, cut)
            return
        first_row = rows.n
        rows.grow(ahead.n)
        rows.out[:, first_row : first_row + ahead.n] = ahead.out[:, : ahead.n]
        rows.ts[first_row : first_row + ahead.n] = ahead.ts[: ahead.n]
        rows.out[tr.LINE_NO, first_row : first_row + ahead.n] += self._line_no
        rows.n += ahead.n
        self._take_status(rows, first_row, ahead.status, ahead.unknown, self._line_no)
        if ahead.status[tr.ST_POS] <= cut:  # stopped at a line it does not take, or full: the rest here
            self._scan_from(rows, int(ahead.status[tr.ST_POS]), cut)

    def _scan_from(self, rows: _Rows, start: int, cut: int) -> bool:
        """Scan ``rows.data[start:cut]`` in order; True when a line went to the line parser."""
        scan = self._scan_kernel()
        status = np.zeros(10, dtype=np.int64)
        unknown_spans = np.empty((tr.N_SKIPPED, len(rows.ts)), dtype=np.int64)
        pos = start
        slow = False
        run = 1  # lines given to the line parser at the last stop
        while pos <= cut:
            if self._fused is not False:  # a line re-detected the layout: the line parser takes the rest
                self._line_no = self.counts.lines
                rows.add(self._parse_lines(rows.data[pos:cut].split(b"\n")), self.interner)
                return True
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
            rows.n = int(status[tr.ST_ROWS])
            self._take_status(rows, first_row, status, unknown_spans, 0)
            s = status.tolist()
            if s[tr.ST_STOP] == tr.FULL:  # the rows are full (grow them) or the unknown names (counted above)
                if rows.n >= len(rows.ts):
                    rows.grow(len(rows.ts))
                pos = s[tr.ST_POS]
                continue
            if s[tr.ST_STOP] != tr.SLOW:
                return slow
            slow = True
            line_s, end = s[tr.ST_SLOW_S], s[tr.ST_SLOW_E]
            blank = BLANK_LINES.match(rows.data, line_s, cut + 1)
            if blank is not None:  # blank lines, however many, counted at once
                self._blank_lines(count_newlines(rows.data, line_s, blank.end()))
                pos = blank.end()
                continue
            # Lines the scanner does not take go to the line parser in runs that double while it takes none
            # between them (garbage, another format): one by one, a scanner call each cost 30 us a line
            # (100,000 in the middle of an 87 MB trace: 1.79 s of CPU, now 0.56); the line parser gives the same rows.
            run = min(run * 2, MAX_RUN) if line_s == pos else 1
            for _ in range(run - 1):
                more = rows.data.find(b"\n", end + 1, cut + 1)
                if more < 0:
                    break
                end = more
            rows.add(self._parse_lines(rows.data[line_s:end].split(b"\n")), self.interner)
            pos = end + 1
        return slow

    def _take_status(self, rows: _Rows, first_row: int, status: npt.NDArray[np.int64], spans: Any, lines: int) -> None:
        """Count what a scan read (its lines after ``lines`` before), intern its rows' texts, count unknown names."""
        s = status.tolist()
        self._line_no = lines + s[tr.ST_LINE_NO]
        self._seen_waking = self._seen_waking or bool(s[tr.ST_WAKING])
        counts = self.counts
        counts.lines = self._line_no
        counts.events += s[tr.ST_EVENTS]
        counts.used += s[tr.ST_USED]
        rows.intern(first_row, self.interner)
        data = rows.data
        unknown = counts.unknown
        n_unknown = s[tr.ST_UNKNOWN]
        # Counted in C first; names new to ``unknown`` come in the order of their first line, so the names
        # kept under MAX_UNKNOWN_NAMES are those a count line by line keeps.
        starts, ends = spans[0, :n_unknown].tolist(), spans[1, :n_unknown].tolist()
        names = Counter([data[a:b] for a, b in zip(starts, ends, strict=True) if a >= 0])  # (-1: only counted)
        for name, n in names.items():
            if name in unknown or len(unknown) < MAX_UNKNOWN_NAMES:
                unknown[name] = unknown.get(name, 0) + n
        if n_unknown:
            self._skipped_rows(data, spans[:, :n_unknown], lines)

    def _skipped_rows(self, data: Text, spans: npt.NDArray[np.int64], lines: int) -> None:
        """Note the first and last skipped event of each CPU among a scan's (``spans``: its columns of them, line
        numbers after ``lines``), as the line parser notes them (TraceParser._note_skipped): the line of each read
        again here for its time, two lines per CPU and scan."""
        cpus = spans[2]
        found, first = np.unique(cpus, return_index=True)
        last = len(cpus) - 1 - np.unique(cpus[::-1], return_index=True)[1]
        counts = self.counts
        for cpu, a, b in zip(found.tolist(), first.tolist(), last.tolist(), strict=True):
            for k in (b,) if cpu in counts.skipped_first or a == b else (a, b):
                start = int(spans[4, k])
                line = data[start : data.find(b"\n", start)]
                ev = skipped_event(line, int(spans[3, k]) + lines, -1, False, cpu)
                if ev is not None:
                    counts.skipped(ev)

    def _batch(self, rows: _Rows) -> EventBatch:
        n = rows.n
        out = rows.out
        col: dict[str, npt.NDArray[np.int64]] = {
            "kind": out[tr.KIND, :n],
            "cpu": out[tr.CPU, :n],
            "line_no": out[tr.LINE_NO, :n],
            "pid": out[tr.PID, :n],
            "prio": out[tr.PRIO, :n],
            "next_pid": out[tr.NEXT_PID, :n],
            "next_prio": out[tr.NEXT_PRIO, :n],
            "state": out[tr.STATE, :n],
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
        if isinstance(chunks, MappedText):
            _mapped_batches(chunks, parser, put, stop)
            return
        with contextlib.closing(_read_ahead(chunks)) as ahead:
            for pieces in ahead:
                put(parser.feed_batch(pieces))
                if stop.is_set():
                    return
        put(parser.finish_batch())

    return prefetched(produce, stop, "kforensic-trace-reader")


MAPPED_BEHIND = 6 * BATCH_BYTES  # text of a mapped file kept mapped behind the batch being scanned


def _mapped_batches(
    text: MappedText, parser: BatchParser, put: Callable[[EventBatch], None], stop: threading.Event
) -> None:
    """Put the batches of a mapped file: ranges of about :data:`BATCH_BYTES` ending at a newline, not copied."""
    mapped = text.mapped
    size = len(mapped)
    pos = 0
    while pos < size:
        hi = min(pos + BATCH_BYTES, size)
        if hi < size:
            newline = mapped.rfind(b"\n", pos, hi)
            hi = newline + 1 if newline >= 0 else hi
        text.take(pos, hi)
        put(parser.feed_mapped(mapped, pos, hi))
        text.release(pos - MAPPED_BEHIND)  # batches that far back are analysed (the queue holds two)
        pos = hi
        if stop.is_set():
            return
    put(parser.finish_batch())


READ_AHEAD = 2  # batches of text read ahead of the scanner


def _read_ahead(chunks: Iterable[bytes]) -> Generator[list[bytes], None, None]:
    """``chunks`` in groups of :data:`BATCH_BYTES`, read (copied from the page cache, decompressed) in a thread.

    The scanner's thread is the one the others wait for on two cores; reading 870 MB of text costs
    about 0.3 s of CPU in the kernel's copy alone (more for gzip), which this moves off it.  A group a
    hand-over (each costs a wait for the GIL when the machine is busy).  When the result is closed
    early the chunks are closed in their thread (a ``trace-cmd report`` is killed).
    """

    def produce(put: Callable[[list[bytes]], None], stop: threading.Event) -> None:
        pending: list[bytes] = []
        size = 0
        for chunk in chunks:
            pending.append(chunk)
            size += len(chunk)
            if size >= BATCH_BYTES:
                put(pending)
                pending, size = [], 0
            if stop.is_set():
                break
        close = getattr(chunks, "close", None)
        if close is not None and stop.is_set():  # a generator: end it now (trace-cmd report is killed)
            close()
        elif pending:
            put(pending)

    return prefetched(produce, threading.Event(), "kforensic-trace-read", READ_AHEAD)


#: Trace text per input byte, about (generous).
_TEXT_PER_BYTE = {"xz": 30, "zstd": 30, "bzip2": 30, "trace.dat": 4, "ctf": 4}
#: Deflate's largest ratio (zlib's technical notes: 1032:1): no gzip member gives more text per byte.  A cut or damaged
#: gzip's last 4 bytes are not its size; unbounded, a 4 KB file "held" 2 GB and started the minutes-long compile.
_GZIP_MAX_RATIO = 1032


def text_size(path: str) -> int | None:
    """About how many bytes of trace text ``path`` gives (None: unknown, as standard input).

    For gzip the size is in the file (its last 4 bytes, modulo 4 GiB), at most what deflate can give
    (:data:`_GZIP_MAX_RATIO`); for the other compressions, trace.dat and CTF streams it is estimated from
    the ratios of :data:`_TEXT_PER_BYTE`.
    """
    if path == "-":
        return None
    p = Path(path)
    try:
        if p.is_dir() or p.name == "metadata":  # a CTF trace or session: its stream files
            root = p if p.is_dir() else p.parent
            return _TEXT_PER_BYTE["ctf"] * sum(f.stat().st_size for f in root.rglob("*") if f.is_file())
        st = p.stat()
        if not stat.S_ISREG(st.st_mode):  # a FIFO (`trace <(zcat t.gz)`): a peek here would eat what the reader needs
            return None
        size = st.st_size
        with p.open("rb") as f:
            head = f.read(16)
            kind = sniff_compression(head)
            if kind == "gzip":  # (under 4 bytes: no trailer; was a KeyError, exit 4, on a 2-byte b"\x1f\x8b")
                f.seek(-min(size, 4), 2)
                return min(max(int.from_bytes(f.read(4), "little"), size), _GZIP_MAX_RATIO * size)
    except OSError:
        return None  # the reader says what is wrong with it
    if kind is not None:
        return _TEXT_PER_BYTE[kind] * size
    if head.startswith(TRACE_DAT_MAGIC):
        return _TEXT_PER_BYTE["trace.dat"] * size
    return size
