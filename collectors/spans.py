"""Span sources and the kernel table the span breakdown reads.

Marks (the edges of spans) come from LTTng UST events (``lttng_ust_tracef``
messages, provider events with their ``id`` field, the thread from the
``vtid`` context), from ftrace ``trace_marker`` writes in the kernel trace
text, and spans whole from a CSV or JSONL file of ``tid,name,start_ns,end_ns``
(CLOCK_MONOTONIC).  :class:`KernelKeeper` sits in front of the scheduling
engine and keeps the kernel columns (and the comms) for the breakdown.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from collectors.ctf import layouts as ly
from collectors.ctf.feed import CtfRead, OpenSyscalls, give_back_freed_memory
from collectors.ctf.payload import PayloadReader, render
from collectors.ctf.reader import K_USER, LOST_DISCARDED, LOST_PACKETS, Session, syscall_name
from collectors.trace_input import open_trace
from collectors.ust_symbols import BIN_EVENTS, Binary, Resolver
from forensics.errors import InputError
from forensics.model import NotAvailable
from forensics.types.spans import KernelTable, Loss, Mark, Ref, Span, SyscallTable
from forensics.types.trace import Kind, TraceEvent
from forensics.types.trace_batch import EventBatch

_MARKER = re.compile(
    rb"^\s*(?P<comm>.+)-(?P<pid>\d+)\s+(?:\(\s*\S+\)\s+)?\[(?P<cpu>\d+)\]\s+(?:\S+\s+)?(?P<ts>\d+\.\d+):\s+"
    rb"(?:tracing_mark_write|print):\s+(?:tracing_mark_write:\s+)?(?P<msg>.*?)\s*$"
)


# The batch columns kept: what KernelTable reads (a row's line number comes with its record, ``ref``).
KEPT = ("kind", "cpu", "pid", "prio", "next_pid", "next_prio", "state")
_SIGNED = (np.int8, np.int16, np.int32, np.int64)


def narrow(col: npt.NDArray[np.int64]) -> npt.NDArray[np.signedinteger]:
    """A copy of ``col`` in the fewest bytes that hold every value: kinds, CPUs and state letters in one,
    priorities in two, pids in two or four (the x176 benchmark session: 11 bytes a row of the seven columns
    kept, instead of 28 as int32)."""
    low, high = (int(col.min()), int(col.max())) if len(col) else (0, 0)
    kind = next(t for t in _SIGNED if np.iinfo(t).min <= low and high <= np.iinfo(t).max)
    return col.astype(kind)


def kernel_table(
    cols: list[npt.NDArray[np.signedinteger]],
    ts: npt.NDArray[np.float64],
    event: Callable[[int], TraceEvent],
    source: str,
    comms: dict[int, str],
    syscalls: SyscallTable | None,
    threads: Statedump | None,
    open_irqs: tuple[tuple[int, dict[int, tuple[int, ...]]], ...] | None = None,
    where: Callable[[int], str] | None = None,
) -> KernelTable:
    """The :class:`KernelTable` of kept rows: their KEPT columns and times, the record of each (``event``), the
    comms learnt, the open syscalls and the statedump's names and policies."""

    def switch_names(i: int) -> tuple[str, str]:
        ev = event(i)
        return ev.comm.decode("utf-8", "replace"), ev.next_comm.decode("utf-8", "replace")

    dump = threads or Statedump({}, {}, "the trace does not record scheduling policies")
    return KernelTable(
        kind=cols[0],
        ts=ts,
        cpu=cols[1],
        pid=cols[2],
        prio=cols[3],
        next_pid=cols[4],
        next_prio=cols[5],
        state=cols[6],
        ref=lambda i: cite(event(i), source, where),
        comm=lambda tid: comms.get(tid) or dump.names.get(tid) or f"TID {tid}",
        syscalls=syscalls,
        policy=dump.policy,
        switch_names=switch_names,
        open_irqs=open_irqs,
    )


def learn_comms(comms: dict[int, str], batch: EventBatch) -> None:
    """The comm of each thread a batch's ``sched_switch`` rows name first (the next task's, then the previous')."""
    sw = np.flatnonzero(batch.kind == 1)
    for col, attr in ((batch.next_pid, "next_comm"), (batch.pid, "comm")):
        pids, first = np.unique(col[sw], return_index=True)
        for p, i in zip(pids.tolist(), first.tolist(), strict=True):
            if p not in comms:
                comms[p] = getattr(batch.event(int(sw[i])), attr).decode("utf-8", "replace")


def cite(ev: TraceEvent, source: str, where: Callable[[int], str] | None = None) -> Ref:
    """The citation of a kernel row's record: ``file:line`` for a text line; ``where`` names an LTTng event from
    its ``line_no`` (:meth:`collectors.ctf.reader.Session.where`: stream file, number, time)."""
    text = ev.line.decode("utf-8", "replace")
    return Ref(
        ev.ts, ev.cpu, f"{source}:{ev.line_no}" if where is None else where(ev.line_no), text, ev.line_no, source
    )


class KernelKeeper:
    """A batch sink that keeps the kernel columns and comms, then feeds the engine (``inner``)."""

    def __init__(self, inner: object, source: str) -> None:
        self.inner = inner
        self.source = source
        self.where: Callable[[int], str] | None = None  # an LTTng session's names of its events (cite)
        # Per column, the chunks kept, each in the fewest bytes that hold its values (see narrow).
        self.cols: list[list[npt.NDArray[np.signedinteger]]] = [[] for _ in KEPT]
        self.ts: list[npt.NDArray[np.float64]] = []
        self.events: list[tuple[int, Callable[[int], TraceEvent]]] = []
        self.comms: dict[int, str] = {0: "<idle>"}

    @property
    def done(self) -> bool:
        """The engine has seen enough (a window ended)."""
        return bool(getattr(self.inner, "done", False))

    @property
    def past(self) -> bool:
        """The window (--window, --around) ended: the engine reads on only for each CPU's next event."""
        return bool(getattr(self.inner, "past", False))

    def feed(self, batch: EventBatch) -> None:
        """Keep the columns, learn new comms, pass on."""
        if self.past:  # nothing after the window is kept (the engine's reading on is not the breakdown's)
            self.inner.feed(batch)  # type: ignore[attr-defined]
            return
        for kept, name in zip(self.cols, KEPT, strict=True):
            kept.append(narrow(getattr(batch, name)))
        self.ts.append(batch.ts.copy())
        self.events.append((batch.first_eid, batch.event))
        learn_comms(self.comms, batch)
        feed = getattr(self.inner, "feed", None)
        if feed is not None:
            feed(batch)

    def table(self, syscalls: SyscallTable | None = None, threads: Statedump | None = None) -> KernelTable:
        """The kept rows as a :class:`KernelTable` (in time order), with the syscall events when there are, and
        the names and policies an LTTng statedump gives of the threads that existed when the session started."""
        ts = np.concatenate(self.ts) if self.ts else np.zeros(0)
        self.ts = [ts]
        cols: list[npt.NDArray[np.signedinteger]] = []
        for chunks in self.cols:  # each column joined as narrow as its widest chunk, then let go
            col = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int64)
            chunks[:] = [col]
            cols.append(col)
            # The chunks just let go are small blocks of the C heap, stranded there until trimmed: trimmed
            # column by column, the join holds one column twice at most, not every column (the x176
            # benchmark session's table peaked 86 MB above the end of reading when joined as int64).
            give_back_freed_memory()
        n_kernel = len(ts)
        starts = np.array([first for first, _e in self.events] + [n_kernel], dtype=np.int64)
        events = [e for _f, e in self.events]
        order: npt.NDArray[np.intp] | None = None  # row i of the table is kept row order[i] (None: row i)
        if bool(np.any(ts[1:] < ts[:-1])):  # a text trace's CPUs may interleave out of order
            order = np.argsort(ts, kind="stable")
            cols = [c[order] for c in cols]
            ts = ts[order]
            syscalls = syscalls.reordered(order) if syscalls is not None else None
        # else an LTTng session's rows, merged in time order by the reader (an identity order: 8 bytes a row)
        source = self.source

        def event(i: int) -> TraceEvent:
            orig = i if order is None else int(order[i])
            b = int(np.searchsorted(starts, orig, side="right")) - 1
            return events[b](orig - int(starts[b]))

        return kernel_table(cols, ts, event, source, self.comms, syscalls, threads, where=self.where)


# The kernel's scheduling policies (include/uapi/linux/sched.h), by number.
_POLICIES = {0: "SCHED_OTHER", 1: "SCHED_FIFO", 2: "SCHED_RR", 3: "SCHED_BATCH", 5: "SCHED_IDLE", 6: "SCHED_DEADLINE"}


class Statedump:
    """What an LTTng session's statedump says of the threads that existed when it started.

    ``names``: tid -> its name (``lttng_statedump_process_state``'s ``name``), for the threads the sched
    events never name; ``policies``: tid -> scheduling policy, when the statedump records it; ``why``:
    why a thread's policy is unknown otherwise.  lttng-modules 2.13's statedump has no priority or
    policy field: priorities come from ``sched_switch`` (``prev_prio``/``next_prio``), policies are
    "unknown (not in this statedump)".
    """

    def __init__(self, names: dict[int, str], policies: dict[int, str], why: str) -> None:
        self.names = names
        self.policies = policies
        self.why = why

    def policy(self, tid: int) -> str | NotAvailable:
        """The thread's scheduling policy, or why it is unknown."""
        got = self.policies.get(tid)
        if got is not None:
            return got
        if self.policies:
            return NotAvailable("not in the statedump: the thread started after it")
        return NotAvailable(self.why)


def statedump_threads(ctf: CtfRead) -> Statedump:
    """The names (and policies, when recorded) of the threads in a CTF session's statedump (first dump wins)."""
    session = ctf.session
    names: dict[int, str] = {}
    policies: dict[int, str] = {}
    has_policy = False
    for rows, owner in ctf.kept_statedump:
        for row, stream in zip(rows.tolist(), owner.tolist(), strict=True):
            v = row[ly.R_V0 :]
            tid = v[0]
            if tid in names:
                continue
            names[tid] = session.text(stream, v[1], v[2]).decode("utf-8", "replace")
            layouts = session.traces[session.streams[stream].trace].layouts
            if any("policy" in regs for (_s, e), regs in layouts.regs.items() if e == row[ly.R_EID]):
                has_policy = True
                policies[tid] = _POLICIES.get(v[3], f"policy {v[3]}")
    if not names:
        why = "the session has no statedump (lttng_statedump_process_state was not recorded)"
    elif not has_policy:
        why = "not in this statedump"
    else:
        why = "not in the statedump"
    return Statedump(names, policies, why)


def ctf_syscalls(session: Session, opened: OpenSyscalls) -> SyscallTable:
    """The open syscall of each kernel row of a CTF session as a :class:`SyscallTable`."""
    width = opened.width
    names: list[str] = []
    ids: dict[str, int] = {}
    # The name id of each (stream, event id) key met: one Python step per key (in key order), not per row.
    lookup = np.full(len(session.streams) * width, -1, dtype=np.int32)
    met = np.zeros(len(lookup), dtype=np.bool_)
    met[opened.key] = True
    for key in np.flatnonzero(met).tolist():
        name = syscall_name(session.event_name(key // width, key % width))
        if name not in ids:
            ids[name] = len(names)
            names.append(name)
        lookup[key] = ids[name]
    # Per entry its name id, and one more (index -1: the rows in no syscall) for none.
    entry_name = np.append(lookup[opened.key], np.int32(-1))
    entry = opened.entry

    def ref(k: int) -> Ref:  # (a row in a syscall: name >= 0)
        e = int(entry[k])
        key = int(opened.key[e])
        return _ctf_ref(session, int(opened.ts[e]), int(opened.cpu[e]), int(opened.off[e]), key % width, key // width)

    return SyscallTable(entry_name[entry], ref, lambda i: names[i] if 0 <= i < len(names) else "?", opened.events)


def _ctf_ref(
    session: Session,
    ts_ns: int,
    cpu: int,
    off: int,
    eid: int,
    stream: int,
    named: bool = True,
    excerpt: str | None = None,
    tid: int | None = None,
) -> Ref:
    """An event of ``stream`` at byte ``off``: its locator is its position in the session (the evidence names it
    as babeltrace2 does: Session.cite); ``named``: its ``where`` too (else its stream file and byte offset).
    ``excerpt``: its text (else its name); ``tid``: the thread the excerpt names (Ref.tid)."""
    pos = session.position(stream, off)
    where = session.where(pos) if named else f"{session.stream_label(stream)} byte {off}"
    name = session.event_name(stream, eid)
    label = session.stream_label(stream)
    text = name if excerpt is None else excerpt
    return Ref(ts_ns / 1e9, cpu, where, text, pos, session.source, name, tid, label)


def ust_marks(
    session: Session,
    rows: npt.NDArray[np.int64],
    owner: npt.NDArray[np.int64],
    payloads: UstPayloads | None = None,
) -> tuple[list[Mark], list[str]]:
    """Marks from the UST rows of a session (tracef message, or the event name and its ``id`` field).

    ``payloads``: where the session's events are cited from, given the symbols that named its functions (a cited
    lttng_ust_cyg_profile event's ``call_site`` is named by them, each cause not named said once)."""
    sel = np.flatnonzero(rows[:, ly.R_KIND] == K_USER)
    marks: list[Mark] = []
    notes: list[str] = []
    has_id: dict[tuple[int, int], bool] = {}
    no_tid = 0
    addrs: list[int] = []  # per mark, the function address it carries (0: none)
    binaries: list[Binary] = []
    readers: dict[int, PayloadReader] = {}
    for r in sel.tolist():
        row = rows[r]
        stream = int(owner[r])
        v = row[ly.R_V0 :].tolist()
        eid = int(row[ly.R_EID])
        name = session.event_name(stream, eid)
        trace = session.traces[session.streams[stream].trace]
        key = (session.streams[stream].trace, eid)
        if key not in has_id:
            has_id[key] = any("id" in regs and e == eid for (_s, e), regs in trace.layouts.regs.items())
            tid_known = any(t in trace.layouts.ctx_regs.get(0, {}) for t in ("vtid", "tid"))
            tid_known = tid_known or any(
                ("vtid" in regs or "tid" in regs) and e == eid for (_s, e), regs in trace.layouts.regs.items()
            )
            has_id[(key[0], -1 - eid)] = tid_known
        tid = v[0] if has_id[(key[0], -1 - eid)] else -1
        if tid < 0:
            no_tid += 1
        text = session.text(stream, v[1], v[2]).decode("utf-8", "replace") if v[2] > 0 else name
        ident = v[3] if has_id[key] else None
        # An event without a message is named once ("infer:request_begin 'infer:request_begin' id=15" said it twice).
        said = f" {text!r}" if v[2] > 0 else ""
        excerpt = f"{name}{said}" + (f" id={ident}" if ident is not None else "") + f" vtid={tid}"
        ref = _ctf_ref(
            session, int(row[ly.R_TS]), int(row[ly.R_CPU]), int(row[ly.R_OFF]), eid, stream, False, excerpt, tid
        )
        if name in BIN_EVENTS:  # where a binary was mapped: its payload (a path) is read again from the file
            t = session.streams[stream].trace
            reader = readers.get(t) or readers.setdefault(t, PayloadReader(session.traces[t].meta))
            f = reader.fields(session.streams[stream].path, int(row[ly.R_OFF]))
            if f is not None and all(k in f for k in ("baddr", "memsz", "path")):
                binaries.append(Binary(int(f["baddr"]), int(f["memsz"]), str(f["path"]), bool(f.get("is_pic", 1))))
        addrs.append(v[7] & 0xFFFFFFFFFFFFFFFF)
        marks.append(Mark(ref.ts, tid, text, ident, ref))
    # The kind of a lttng_ust_cyg_profile mark: its function, named by the binaries' symbols when the session's
    # statedump says where they were mapped ("serve (0x401461)"), else in hex ("addr=0x401461", and why, once).
    if any(addrs):
        resolver = Resolver(binaries)
        marks = [replace(m, kind=resolver.name(a)) if a else m for m, a in zip(marks, addrs, strict=True)]
        notes += [f"{UNRESOLVED}{why}" for why in resolver.why]
        if payloads is not None:
            payloads.add(session, resolver)
    if no_tid:
        notes.append(
            f"{no_tid} user-space events carry no thread id: "
            "record with `lttng add-context -u -t vtid` to pair per thread"
        )
    return marks, notes


def ust_losses(session: Session, rows: npt.NDArray[np.int64], owner: npt.NDArray[np.int64]) -> list[Loss]:
    """The events the user-space streams of a session lost, from its lost-event marker rows (discarded events and
    lost packets; a clock that went back loses none)."""
    out = []
    for r in np.flatnonzero(rows[:, ly.R_KIND] == Kind.LOST).tolist():
        stream = int(owner[r])
        v = rows[r, ly.R_V0 : ly.R_V0 + 5].tolist()
        if session.traces[session.streams[stream].trace].meta.domain != "ust" or v[1] not in (
            LOST_DISCARDED,
            LOST_PACKETS,
        ):
            continue
        out.append(Loss(v[2] / 1e9, v[3] / 1e9, v[0], session.source, session.stream_label(stream), v[4]))
    return out


def marker_marks(path: str) -> list[Mark]:
    """ftrace ``trace_marker`` writes (``tracing_mark_write: TEXT``) of a text trace, as marks."""
    marks: list[Mark] = []
    with open_trace(path, None) as stream:
        line_no = 0
        tail = b""
        for chunk in stream.chunks:
            data = tail + chunk
            lines = data.split(b"\n")
            tail = lines.pop()
            for line in lines:
                line_no += 1
                if b"tracing_mark_write" not in line and b" print: " not in line:
                    continue
                m = _MARKER.match(line)
                if m:
                    text = line.decode("utf-8", "replace")
                    ts, cpu = float(m.group("ts")), int(m.group("cpu"))
                    ref = Ref(ts, cpu, f"{stream.name}:{line_no}", text, line_no, stream.name)
                    marks.append(Mark(ts, int(m.group("pid")), m.group("msg").decode("utf-8", "replace"), None, ref))
    return marks


def table_spans(path: Path) -> list[Span]:
    """Spans of a CSV (header ``tid,name,start_ns,end_ns``) or JSONL file (objects with those keys)."""
    from collectors.inputs import open_input, read_whole

    # open_input: gzip/xz/zstd/bzip2 by magic bytes, one-line errors, the file registered as an input of the run.
    with open_input(str(path)) as tracked:
        data = read_whole(tracked, "a span table (CSV or JSONL)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a text file", hint="give a CSV or JSONL of tid,name,start_ns,end_ns") from None
    lines = text.splitlines()
    rows: list[tuple[int, dict[str, str]]] = []
    if text.lstrip().startswith("{"):
        for n, line in enumerate(lines, 1):
            if line.strip():
                try:
                    obj = json.loads(line)
                except RecursionError:
                    raise InputError(f"{path}:{n}: not JSON (nested too deep)", hint="one object per line") from None
                except ValueError as exc:  # not JSON, or an integer of more than 4300 digits (sys.int_info)
                    why = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
                    raise InputError(f"{path}:{n}: not JSON ({why})", hint="one object per line") from None
                if not isinstance(obj, dict):
                    raise InputError(f"{path}:{n}: not a JSON object", hint="one object per line") from None
                rows.append((n, {k: str(v) for k, v in obj.items()}))
    else:
        reader = csv.DictReader(io.StringIO(text))
        try:
            rows = [(n, row) for n, row in enumerate(reader, 2)]
        except csv.Error as exc:  # a NUL byte, a field over the size limit
            raise InputError(
                f"{path}:{reader.line_num}: not CSV ({exc})", hint="columns tid,name,start_ns,end_ns"
            ) from None
    if not rows:
        raise InputError(
            f"{path}: no span rows (the file is empty or holds only a header)",
            hint="give a CSV or JSONL of tid,name,start_ns,end_ns with one row per span",
        )
    spans = []
    for n, row in rows:
        try:
            tid, name = int(row["tid"]), row["name"]
            start, end = int(row["start_ns"]) / 1e9, int(row["end_ns"]) / 1e9
        except (KeyError, ValueError, TypeError):
            raise InputError(
                f"{path}:{n}: not a span row (tid, name, start_ns, end_ns)",
                hint="columns tid,name,start_ns,end_ns; times in ns of CLOCK_MONOTONIC",
            ) from None
        if end < start:
            raise InputError(f"{path}:{n}: the span ends before it starts", hint="check start_ns and end_ns")
        line = f"{path.name}:{n}"
        excerpt = lines[n - 1] if n - 1 < len(lines) else ""
        spans.append(
            Span(
                name,
                tid,
                "",
                start,
                end,
                Ref(start, -1, line, excerpt, n, str(path)),
                Ref(end, -1, line, excerpt, n, str(path)),
            )
        )
    return spans


#: The head of a span note that says why lttng_ust_cyg_profile addresses stay in hex.
UNRESOLVED = "lttng_ust_cyg_profile addresses not resolved to functions: "


class UstPayloads:
    """What the cited user-space events of LTTng sessions carried: each event's payload fields, read again from its
    stream file (collectors.ctf.payload), for the few events a slow span's evidence cites."""

    def __init__(self) -> None:
        self.sessions: dict[str, Session] = {}
        self._readers: dict[tuple[str, int], PayloadReader] = {}
        self._resolvers: dict[str, tuple[Resolver, int]] = {}  # per session: its symbols, the causes said by then
        self._fields: dict[tuple[str, int], dict[str, Any] | None] = {}

    def add(self, session: Session, resolver: Resolver | None = None) -> None:
        """A session whose events may be cited; ``resolver``: the symbols that named its functions (ust_marks)."""
        self.sessions[session.source] = session
        if resolver is not None:
            self._resolvers[session.source] = (resolver, len(resolver.why))

    def _payload(self, ref: Ref) -> dict[str, Any] | None:
        """The payload fields of a cited event of an added session (read once); None for any other."""
        key = (ref.source, ref.line_no)
        if key in self._fields:
            return self._fields[key]
        session = self.sessions.get(ref.source)
        if session is None or ref.line_no <= 0:
            return None
        stream, off = session.locate(ref.line_no)
        trace = session.streams[stream].trace
        reader = self._readers.get((ref.source, trace))
        if reader is None:
            reader = self._readers[(ref.source, trace)] = PayloadReader(session.traces[trace].meta)
        got = self._fields[key] = reader.fields(session.streams[stream].path, off)
        return got

    def called_from(self, ref: Ref) -> str | None:
        """Where a cited lttng_ust_cyg_profile event's call was made: its ``call_site`` (the return address in the
        caller) named by the session's symbols, ``main+0x86 (0x40152d)``, else ``call_site=0x40152d`` (the cause
        in :meth:`notes`); None for an event without a call_site or a session whose functions were not named."""
        fields = self._payload(ref)
        site = None if fields is None else fields.get("call_site")
        got = self._resolvers.get(ref.source)
        if not isinstance(site, int) or got is None:
            return None
        return got[0].name_return(site & 0xFFFFFFFFFFFFFFFF)

    def notes(self) -> list[str]:
        """The causes of call sites not named that ust_marks' notes did not say already, each once."""
        return [f"{UNRESOLVED}{why}" for resolver, said in self._resolvers.values() for why in resolver.why[said:]]

    def cite(self, ref: Ref) -> Ref:
        """``ref`` with its excerpt the event's name, payload fields and thread (``lttng_ust_cyg_profile:func_entry
        addr=0x804fb11 call_site=0x804aa86 vtid=596``); any other ref, or one that does not decode, as it is."""
        fields = None if not ref.event else self._payload(ref)
        if fields is None:
            return ref
        text = f"{ref.event} {render(fields)}".rstrip() + (f" vtid={ref.tid}" if ref.tid is not None else "")
        return replace(ref, text=text)
