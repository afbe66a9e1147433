"""Feeding an LTTng session to a batch consumer (the scheduling engine), and keeping rows for the span analysis."""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import numpy.typing as npt

from collectors.ctf import layouts as ly
from collectors.ctf.reader import (
    K_STATEDUMP,
    K_SYSCALL_ENTRY,
    K_SYSCALL_EXIT,
    K_USER,
    Session,
    SplitChunk,
    kernel_batch,
)
from collectors.ctf.syscall_latency import SyscallPairing
from collectors.prefetch import prefetched
from collectors.trace_input import TraceStream
from forensics.model import SourceRecord
from forensics.types.sched import ClockCheck, LossGap, PacketLoss
from forensics.types.trace import SKIPPED, Kind, ParseCounts, make_event
from forensics.types.trace_batch import EventBatch


class BatchSink(Protocol):
    """What consumes the kernel batches (``detectors.sched.engine.FastAnalyzer``)."""

    done: bool  # and, when it has a window (--window, --around), ``past``: the window ended, the engine reads on
    # only for each CPU's next event, and no row is kept any more (a sink without it never has a window)

    def feed(self, batch: EventBatch) -> None: ...


@dataclass
class OpenSyscalls:
    """Per kernel row fed to the engine (in feed order), the syscall entry its CPU was in just before it.

    ``entry`` is that entry's index in the entry columns, -1 when the CPU's last syscall event before the
    row was an exit, or none was seen.  Per entry: ``key`` is ``stream * width + event id`` (``width``: the
    most event ids of a trace); ``ts`` (ns), ``off`` (byte offset in its stream file) and ``cpu`` cite it.
    Worked out chunk by chunk as the events are merged (:class:`SyscallTracker`): a session recorded with
    ``--syscall -a`` has five times more syscall events than scheduling ones, and keeping them to look
    this up afterwards was most of the run's memory and a tenth of its time.  The rows that one syscall
    entry is open for share it: 4 bytes a kernel row, and 24 per entry met (x176 benchmark session: 1.17 M
    kernel rows, 105 K entries, 7.2 MB instead of 28 MB as four columns a row).
    """

    entry: npt.NDArray[np.int32]
    key: npt.NDArray[np.int32]
    ts: npt.NDArray[np.int64]
    off: npt.NDArray[np.int64]
    cpu: npt.NDArray[np.int32]
    width: int
    events: int  # the syscall events read


class SyscallTracker:
    """The last syscall event of each CPU, carried from merged chunk to merged chunk (time order)."""

    def __init__(self, width: int) -> None:
        self.width = width
        # cpu -> (kind, key, ts ns, byte offset, its entry index: -1 until a row cites it)
        self.last: dict[int, tuple[int, int, int, int, int]] = {}
        self.events = 0
        self.rows: list[npt.NDArray[np.int32]] = []  # per chunk, the entry of each fed row
        # The entries cited, (key, ts, off, cpu) columns per CPU and chunk: joined by result().
        self.entries: list[tuple[npt.NDArray[np.signedinteger], ...]] = []
        self.n_entries = 0

    def _add_entries(
        self, key: npt.NDArray[np.int64], ts: npt.NDArray[np.int64], off: npt.NDArray[np.int64], cpu: int
    ) -> int:
        """Note entries (one CPU's); the index of the first."""
        first = self.n_entries
        self.entries.append((key, ts, off, np.full(len(key), cpu, dtype=np.int64)))
        self.n_entries += len(key)
        return first

    def chunk(
        self,
        rows: npt.NDArray[np.int64],
        owner: npt.NDArray[np.int64],
        fed: npt.NDArray[np.intp],
        kinds: npt.NDArray[np.int64],
    ) -> None:
        """Note the syscall events of a merged chunk, and the open syscall of its rows ``fed`` to the engine.

        "Before" is strictly earlier in time: a syscall event at the very time of a row counts as after it.
        ``kinds`` is the rows' kind column (contiguous).
        """
        calls = np.flatnonzero((kinds == K_SYSCALL_ENTRY) | (kinds == K_SYSCALL_EXIT))
        self.events += len(calls)
        entry = np.full(len(fed), -1, dtype=np.int32)
        if len(calls) or self.last:
            call_cpu = rows[calls, ly.R_CPU]
            fed_cpu = rows[fed, ly.R_CPU]
            both = np.concatenate([call_cpu, fed_cpu])
            low = int(both.min()) if len(both) else 0
            for c in (np.flatnonzero(np.bincount(both - low)) + low).tolist():  # the CPUs (counted: no sort)
                mine = calls[call_cpu == c]  # this CPU's syscall rows, in time order
                at = np.flatnonzero(fed_cpu == c)
                if len(at):
                    k = np.searchsorted(rows[mine, ly.R_TS], rows[fed[at], ly.R_TS], side="left") - 1
                    inside = k >= 0
                    src = mine[k[inside]]
                    hit = at[inside]
                    is_entry = rows[src, ly.R_KIND] == K_SYSCALL_ENTRY
                    if bool(is_entry.any()):  # each entry cited noted once (src is in time order)
                        cited, which = np.unique(src[is_entry], return_inverse=True)
                        first = self._add_entries(
                            owner[cited] * self.width + rows[cited, ly.R_EID],
                            rows[cited, ly.R_TS],
                            rows[cited, ly.R_OFF],
                            c,
                        )
                        entry[hit[is_entry]] = first + which.ravel()
                    prev = self.last.get(c)
                    early = at[~inside]
                    if prev is not None and prev[0] == K_SYSCALL_ENTRY and len(early):  # the carried one
                        index = prev[4]
                        if index < 0:
                            one = [np.array([v], dtype=np.int64) for v in prev[1:4]]
                            index = self._add_entries(one[0], one[1], one[2], c)
                            self.last[c] = (*prev[:4], index)
                        entry[early] = index
                if len(mine):
                    r = int(mine[-1])
                    kind, eid, t, o = (int(x) for x in rows[r, [ly.R_KIND, ly.R_EID, ly.R_TS, ly.R_OFF]])
                    self.last[c] = (kind, int(owner[r]) * self.width + eid, t, o, -1)
        self.rows.append(entry)

    def result(self) -> OpenSyscalls:
        """Everything noted, joined."""
        if len(self.rows) != 1:
            self.rows = [np.concatenate(self.rows) if self.rows else np.zeros(0, dtype=np.int32)]
        key, ts, off, cpu = (
            np.concatenate([e[k] for e in self.entries]).astype(dt, copy=False)
            if self.entries
            else np.zeros(0, dtype=dt)
            for k, dt in enumerate((np.int32, np.int64, np.int64, np.int32))
        )
        self.entries = [(key, ts, off, cpu)] if self.entries else []
        return OpenSyscalls(self.rows[0], key, ts, off, cpu, self.width, self.events)


@dataclass
class CtfRead:
    """What reading a session gave: the stream record, the reader counts, and the rows kept."""

    session: Session
    stream: TraceStream
    counts: ParseCounts
    kept: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]] = field(default_factory=list)
    tracker: SyscallTracker | None = None
    kept_statedump: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]] = field(default_factory=list)
    # The syscall latency table's pairing (None: the session declares no syscall event).
    syscall_pairs: SyscallPairing | None = None

    def rows(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """The kept user-space rows and lost-event markers (time order) and the stream index of each (joined once, then
        kept joined)."""
        if not self.kept:
            return np.zeros((0, ly.N_ROWCOLS), dtype=np.int64), np.zeros(0, dtype=np.int64)
        if len(self.kept) > 1:
            self.kept = [(np.concatenate([r for r, _o in self.kept]), np.concatenate([o for _r, o in self.kept]))]
        return self.kept[0]

    def syscalls(self) -> OpenSyscalls:
        """The open syscall of each kernel row fed (with the rows kept)."""
        if self.tracker is None:
            self.tracker = SyscallTracker(self.key_width())
        return self.tracker.result()

    def key_width(self) -> int:
        """The ``width`` of :class:`SyscallRows` keys for this session."""
        return max((t.want.shape[1] for t in self.session.traces), default=1)


def feed_session(session: Session, sink: BatchSink, keep: bool = False, user: bool = True) -> CtfRead:
    """Read ``session`` in time order; kernel rows go to ``sink``; ``keep`` keeps the user-space rows (unless not
    ``user``: read before, Session.ust_rows) and the statedump's, and notes the syscall each kernel row's CPU was
    in: of every row, or of the rows in the windows of a sink that has ``inside(ts)`` (collectors/span_windows.py)."""
    path = str(session.root)
    counts = ParseCounts(layout="ctf")
    _name, major, minor = next((t.meta.tracer for t in session.traces if t.meta.domain == "kernel"), ("", 0, 0))
    # lttng-modules records sched_switch priorities minus 100 (MAX_RT_PRIO); its wakeup events did so too from 2.9.
    shift_wakeup = (major, minor) >= (2, 9)
    counts.tracer = None
    read = CtfRead(session, TraceStream(path, _kind(session), iter(()), []), counts)
    analysed = _Extent()
    tracker = read.tracker = SyscallTracker(read.key_width())
    inside = getattr(sink, "inside", None)  # a WindowSink: the open syscall of its rows only
    if any(bool((t.want == K_SYSCALL_ENTRY).any()) for t in session.traces):
        read.syscall_pairs = SyscallPairing(session, read.key_width())
    pairs = read.syscall_pairs
    # The files' hashes (evidence) computed meanwhile: hashlib lets the reader and the engine run.
    records: list[list[SourceRecord] | BaseException] = []
    hasher = threading.Thread(
        target=_collect, args=(session.source_records, records), name="kforensic-ctf-hash", daemon=True
    )
    hasher.start()
    # The compiled decoder releases the GIL: it runs ahead in a thread while this one analyses. The plain one
    # holds it: a thread would only add switches between the two.
    chunks = _prefetched(session.split_rows()) if session.compiled else session.split_rows()
    for chunk in chunks:
        rows, owner = chunk.head, chunk.owner  # (syscall rows narrowed: the tracker reads no more columns)
        kinds = np.ascontiguousarray(rows[:, ly.R_KIND])  # read once, masked six times
        if keep:  # the span breakdown's rows: user-space marks whole, and the lost-event markers (a span across one)
            marks = np.flatnonzero(((kinds == K_USER) | (kinds == Kind.LOST)) & user)
            if len(marks):
                read.kept.append((chunk.full(marks), owner[marks]))
            dump = np.flatnonzero(kinds == K_STATEDUMP)
            if len(dump):  # the threads that existed when the session started: names (and policies)
                read.kept_statedump.append((chunk.full(dump), owner[dump]))
        if pairs is not None:  # every chunk read (a window's end stops the reading, and the table, there)
            pairs.chunk(chunk, kinds)
        if sink.done:
            if not keep:  # the window ended: nothing more to analyse
                break
            tracker.chunk(rows, owner, np.zeros(0, dtype=np.intp), kinds)  # counted: whether the session has any
            continue
        # The engine's rows: the kernel events (a sched_wakeup after its sched_waking too: where it queued the task).
        wanted = kinds < K_SYSCALL_ENTRY
        sel = np.flatnonzero(wanted)
        batch = kernel_batch(session, chunk.full(sel), owner[sel], shift_wakeup)
        if keep:
            noted = sel if inside is None else sel[inside(batch.ts)]
            tracker.chunk(rows, owner, np.zeros(0, dtype=np.intp) if getattr(sink, "past", False) else noted, kinds)
        counts.used += len(batch) - int(np.count_nonzero(batch.kind == Kind.LOST))  # markers are not events
        if len(sel):
            analysed.chunk(rows[sel, ly.R_TS], owner[sel])  # (the times: every row's head holds them)
        if len(batch):
            sink.feed(batch)
    counts.events = sum(s.events for s in session.streams)
    counts.lines = counts.events
    counts.unknown = session.skipped()
    counts.aside = session.read_aside()
    counts.lost_markers = sum(1 for s in session.streams if s.discarded or s.lost_packets or s.gaps)
    counts.lost_events = sum(s.discarded for s in session.streams)
    counts.cpus_declared = None
    _note_reported(session, counts, analysed)
    hasher.join()
    if isinstance(records[0], BaseException):
        raise records[0]
    read.stream.records.extend(records[0])
    give_back_freed_memory()  # the chunks read are gone: what the analyses allocate next starts lower
    return read


class _Extent:
    """Per stream, the times (ns) of its first and last event fed to the engine."""

    def __init__(self) -> None:
        self.first: dict[int, int] = {}
        self.last: dict[int, int] = {}

    def chunk(self, ts: npt.NDArray[np.int64], owner: npt.NDArray[np.int64]) -> None:
        """Note the rows of a merged chunk fed (their times and streams; time order)."""
        streams, at = np.unique(owner, return_index=True)
        end = len(owner) - 1 - np.unique(owner[::-1], return_index=True)[1]
        for stream, a, b in zip(streams.tolist(), at.tolist(), end.tolist(), strict=True):
            self.first.setdefault(stream, int(ts[a]))
            self.last[stream] = int(ts[b])


#: The text of a CPU's first or last event when it is of a kind the analysis does not read (its fields not decoded):
#: evidence needs an excerpt, and the evidence names the event by its stream and number (Session.cite).
_NOT_ANALYSED = b"an event of a kind not analysed (its stream file and number name it)"


def _note_reported(session: Session, counts: ParseCounts, analysed: _Extent) -> None:
    """Per CPU of the kernel traces: its first and last event of any kind (ParseCounts.skipped_first/last; their
    positions read again, only where they are not the events the engine was fed: ``analysed``), and the time its
    buffer covered, from the begin of its first packet with events to the end of its last (ParseCounts.
    packet_span: an idle CPU writes no event, its packets say it was recorded all the same)."""
    for i, s in enumerate(session.streams):
        t = session.traces[s.trace]
        if t.meta.domain != "kernel" or s.cpu < 0:
            continue
        if s.cut_at >= 0:
            counts.cut_cpus.add(s.cpu)
        if s.packet_begin >= 0:
            begin, end = (t.ns_num * c // t.ns_den / 1e9 for c in (s.packet_begin, s.packet_end))
            known = counts.packet_span.get(s.cpu)
            counts.packet_span[s.cpu] = (min(begin, known[0]), max(end, known[1])) if known else (begin, end)
        if s.first_ts < 0:
            continue
        first, last = session.reported(
            i, s.first_ts < analysed.first.get(i, s.first_ts + 1), s.last_ts > analysed.last.get(i, s.last_ts - 1)
        )
        for got, into, earlier in ((first, counts.skipped_first, True), (last, counts.skipped_last, False)):
            if got is None:
                continue
            ev = make_event((SKIPPED, got[1] / 1e9, s.cpu, got[0], _NOT_ANALYSED, 0, 0, b"", b"", 0, 0, b""))
            known_ev = into.get(s.cpu)
            if known_ev is None or (ev.ts < known_ev.ts if earlier else ev.ts > known_ev.ts):
                into[s.cpu] = ev


def give_back_freed_memory() -> None:
    """Return the C heap's freed memory to the system (glibc's ``malloc_trim``; nothing where there is none).

    numpy's chunk arrays come from the heap once glibc has raised its mmap threshold (it does after the
    first large free), and memory freed there stays in the process: after reading the x44 benchmark
    session 27 MB of it, 21 MB more once the span table was joined, all counted in the peak RSS that the
    allocations after them add to.  One call walks the heap once (milliseconds).
    """
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl, macOS): its allocator keeps to itself
        return
    trim(0)


def _collect(make: Callable[[], list[SourceRecord]], into: list[list[SourceRecord] | BaseException]) -> None:
    """``make()`` (or its error) appended to ``into``: the body of a thread."""
    try:
        into.append(make())
    except BaseException as exc:  # handed to the caller's thread
        into.append(exc)


def _prefetched(rows: Iterator[SplitChunk]) -> Generator[SplitChunk, None, None]:
    """``rows`` produced in a background thread (decoding releases the GIL) while the caller analyses.

    At most one chunk waits (bounded memory: each is about 3 MB; a second waiting one added 1.7 MB to the
    x176 benchmark session's peak RSS); an error of the reader is raised in the caller's thread; closing this
    generator early (a window ended) stops the reader.
    """

    def produce(put: Callable[[SplitChunk], None], stop: threading.Event) -> None:
        for item in rows:
            if stop.is_set():
                return
            put(item)

    return prefetched(produce, threading.Event(), "kforensic-ctf-reader", depth=1)


def _kind(session: Session) -> str:
    domains = sorted({t.meta.domain for t in session.traces})
    tracers = sorted({f"{t.meta.tracer[0]} {t.meta.tracer[1]}.{t.meta.tracer[2]}" for t in session.traces})
    return f"LTTng CTF ({'+'.join(domains)}; {', '.join(tracers)}; clock {session.traces[0].clock.name})"


def per_packet(clock: ClockCheck, packets: list[PacketLoss], seen: tuple[int, ...], window: object) -> ClockCheck:
    """``clock`` with the losses of each CPU none of whose events the analysis reads (an LTTng UST stream's: the
    analysis adds its markers up in one row, having no event of the CPU to bound each by) one per marker, each with
    its packets' time window (``packets``: Session.packet_losses).  Only when the markers the analysis read are
    those (``window``: the analysis's, its markers' times in it): else the row stays as it was."""
    import math

    lo, hi = window if isinstance(window, tuple) else (-math.inf, math.inf)
    merged = {g.cpu for g in clock.losses if g.cpu not in seen}
    split: dict[int, list[LossGap]] = {}
    for cpu in merged:
        mine = [k for k in packets if k.cpu == cpu and lo <= k.at <= hi]
        if len(mine) == sum(g.markers for g in clock.losses if g.cpu == cpu):
            split[cpu] = [LossGap(cpu, k.events, None, None, 1, k) for k in mine]
    if not split:
        return clock
    out: list[LossGap] = []
    for g in clock.losses:
        if g.cpu not in split:
            out.append(g)
        elif split[g.cpu]:  # its rows where its first merged row was
            out += split[g.cpu]
            split[g.cpu] = []
    return clock._replace(losses=tuple(out))
