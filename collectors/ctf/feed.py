"""Feeding an LTTng session to a batch consumer (the scheduling engine), and keeping rows for the span analysis."""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import numpy.typing as npt

from collectors.ctf import layouts as ly
from collectors.ctf.reader import K_SYSCALL_ENTRY, K_SYSCALL_EXIT, K_USER, Session, kernel_batch
from collectors.prefetch import prefetched
from collectors.trace_input import TraceStream
from forensics.model import SourceRecord
from forensics.types.trace import Kind, ParseCounts
from forensics.types.trace_batch import EventBatch


class BatchSink(Protocol):
    """What consumes the kernel batches (``detectors.sched.engine.FastAnalyzer``)."""

    done: bool

    def feed(self, batch: EventBatch) -> None: ...


@dataclass
class SyscallRows:
    """The syscall entry/exit rows kept for the span breakdown, narrow: what it reads and what a citation needs.

    ``key`` is ``stream * width + event id`` (``width``: the most event ids of a trace), which names the event.
    A session recorded with ``--syscall -a`` has mostly these rows: kept as 13 int64 columns they were
    most of the run's memory.
    """

    kind: npt.NDArray[np.int8]
    cpu: npt.NDArray[np.int32]
    ts: npt.NDArray[np.int64]  # ns
    off: npt.NDArray[np.int64]  # byte offset in the stream file
    key: npt.NDArray[np.int32]
    width: int

    @staticmethod
    def take(
        rows: npt.NDArray[np.int64], owner: npt.NDArray[np.int64], sel: npt.NDArray[np.intp], width: int
    ) -> SyscallRows:
        """The rows ``sel`` of a chunk."""
        return SyscallRows(
            rows[sel, ly.R_KIND].astype(np.int8),
            rows[sel, ly.R_CPU].astype(np.int32),
            rows[sel, ly.R_TS],
            rows[sel, ly.R_OFF],
            (owner[sel] * width + rows[sel, ly.R_EID]).astype(np.int32),
            width,
        )


@dataclass
class CtfRead:
    """What reading a session gave: the stream record, the reader counts, and the rows kept."""

    session: Session
    stream: TraceStream
    counts: ParseCounts
    kept: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]] = field(default_factory=list)
    kept_syscalls: list[SyscallRows] = field(default_factory=list)

    def rows(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """The kept user-space rows (time order) and the stream index of each (joined once, then kept joined)."""
        if not self.kept:
            return np.zeros((0, ly.N_ROWCOLS), dtype=np.int64), np.zeros(0, dtype=np.int64)
        if len(self.kept) > 1:
            self.kept = [(np.concatenate([r for r, _o in self.kept]), np.concatenate([o for _r, o in self.kept]))]
        return self.kept[0]

    def syscalls(self) -> SyscallRows:
        """The kept syscall rows (time order), joined once."""
        width = self.key_width()
        parts = self.kept_syscalls
        if len(parts) != 1:
            joined = SyscallRows(
                np.concatenate([p.kind for p in parts]) if parts else np.zeros(0, dtype=np.int8),
                np.concatenate([p.cpu for p in parts]) if parts else np.zeros(0, dtype=np.int32),
                np.concatenate([p.ts for p in parts]) if parts else np.zeros(0, dtype=np.int64),
                np.concatenate([p.off for p in parts]) if parts else np.zeros(0, dtype=np.int64),
                np.concatenate([p.key for p in parts]) if parts else np.zeros(0, dtype=np.int32),
                width,
            )
            self.kept_syscalls = parts = [joined]
        return parts[0]

    def key_width(self) -> int:
        """The ``width`` of :class:`SyscallRows` keys for this session."""
        return max((t.want.shape[1] for t in self.session.traces), default=1)


def feed_session(session: Session, sink: BatchSink, keep: bool = False) -> CtfRead:
    """Read ``session`` in time order; kernel rows go to ``sink``; ``keep`` keeps the user-space and syscall rows."""
    path = str(session.root)
    counts = ParseCounts(layout="ctf")
    _name, major, minor = next((t.meta.tracer for t in session.traces if t.meta.domain == "kernel"), ("", 0, 0))
    # lttng-modules records sched_switch priorities minus 100 (MAX_RT_PRIO); its wakeup events did so too from 2.9.
    shift_wakeup = (major, minor) >= (2, 9)
    counts.tracer = None
    seen_waking = False
    read = CtfRead(session, TraceStream(path, _kind(session), iter(()), []), counts)
    width = read.key_width()
    # The files' hashes (evidence) computed meanwhile: hashlib lets the reader and the engine run.
    records: list[list[SourceRecord] | BaseException] = []
    hasher = threading.Thread(
        target=_collect, args=(session.source_records, records), name="kforensic-ctf-hash", daemon=True
    )
    hasher.start()
    for rows, owner in _prefetched(session.rows()):
        kinds = rows[:, ly.R_KIND]
        if keep:  # the span breakdown's rows: user-space marks whole, syscalls narrow
            user = np.flatnonzero(kinds == K_USER)
            if len(user):
                read.kept.append((rows[user], owner[user]))
            sys_rows = np.flatnonzero((kinds == K_SYSCALL_ENTRY) | (kinds == K_SYSCALL_EXIT))
            if len(sys_rows):
                read.kept_syscalls.append(SyscallRows.take(rows, owner, sys_rows, width))
        if sink.done:
            if not keep:  # the window ended: nothing more to analyse
                break
            continue
        wanted = kinds < K_SYSCALL_ENTRY  # the engine's rows: kernel events, less the wakeups a waking makes redundant
        if not seen_waking:
            first = np.flatnonzero(kinds == Kind.WAKING)
            if len(first):
                seen_waking = True
                wanted &= (kinds != Kind.WAKEUP) | (np.arange(len(kinds)) <= first[0])
        else:
            wanted &= kinds != Kind.WAKEUP
        sel = np.flatnonzero(wanted)
        batch = kernel_batch(session, rows[sel], owner[sel], shift_wakeup)
        counts.used += len(batch)
        if len(batch):
            sink.feed(batch)
    counts.events = sum(s.events for s in session.streams)
    counts.lines = counts.events
    counts.unknown = session.skipped()
    counts.lost_markers = sum(1 for s in session.streams if s.discarded or s.lost_packets)
    counts.lost_events = sum(s.discarded for s in session.streams)
    counts.cpus_declared = None
    hasher.join()
    if isinstance(records[0], BaseException):
        raise records[0]
    read.stream.records.extend(records[0])
    return read


def _collect(make: Callable[[], list[SourceRecord]], into: list[list[SourceRecord] | BaseException]) -> None:
    """``make()`` (or its error) appended to ``into``: the body of a thread."""
    try:
        into.append(make())
    except BaseException as exc:  # handed to the caller's thread
        into.append(exc)


_Rows = tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]  # a chunk of decoded rows and their owners


def _prefetched(rows: Iterator[_Rows]) -> Generator[_Rows, None, None]:
    """``rows`` produced in a background thread (decoding releases the GIL) while the caller analyses.

    At most two chunks wait (bounded memory); an error of the reader is raised in the caller's
    thread; closing this generator early (a window ended) stops the reader.
    """

    def produce(put: Callable[[_Rows], None], stop: threading.Event) -> None:
        for item in rows:
            if stop.is_set():
                return
            put(item)

    return prefetched(produce, threading.Event(), "kforensic-ctf-reader")


def _kind(session: Session) -> str:
    domains = sorted({t.meta.domain for t in session.traces})
    tracers = sorted({f"{t.meta.tracer[0]} {t.meta.tracer[1]}.{t.meta.tracer[2]}" for t in session.traces})
    return f"LTTng CTF ({'+'.join(domains)}; {', '.join(tracers)}; clock {session.traces[0].clock.name})"
