"""Streaming reader of scheduler/IRQ trace text: tracefs, ``trace-cmd report`` and ``perf script``.

One parser reads every text layout kforensic knows, line by line, in big
byte chunks (bounded memory: a chunk and the partial line that ends it):

- raw tracefs text (``/sys/kernel/tracing/trace`` or ``trace_pipe`` captures):
  ``comm-pid [cpu] flags ts: event: payload`` with 4-, 5- or 7-character
  latency flags, no flags, or a ``(tgid)`` column;
- ``trace-cmd report`` default (``comm-pid [cpu] ts: event: payload``, plugin
  payloads such as ``bash:12 [120] R ==> cc1:13 [120]``), ``-N`` (kernel print
  formats) and ``-l`` (CPU fused with the flags: ``comm-pid 1d..2. ts:``, comms
  cut to 8 characters);
- ``perf script`` text (``comm pid [cpu] ts: sched:sched_switch: payload``).

Only the events the scheduling analyses use become :class:`TraceEvent`
records; other events are counted by name and skipped without parsing their
payload.  Comments, lost-event markers, truncated lines and garbage are
counted in :class:`ParseCounts`, never raised.

This parser is the definition of what a line means.  ``kforensic trace``
reads with :class:`collectors.trace_columns.BatchParser`, which hands every
line its compiled scanner does not take whole to this parser and gives the
same events (tests compare the two).
"""

from __future__ import annotations

import contextlib
import mmap
import re

from collectors.trace_payloads import (
    parse_irq,
    parse_migrate,
    parse_switch,
    parse_wakeup,
    parse_work,
    pid_prio_comm,
)
from forensics.gcpause import gc_paused
from forensics.types.trace import (
    EVENT_KINDS,
    PERF_LOSS_UNKNOWN,
    SKIPPED,
    Kind,
    ParseCounts,
    TraceEvent,
    make_event,
)

__all__ = ["TraceParser"]
_make = make_event

Text = bytes | mmap.mmap  # trace text: read into memory, or a file mapped read-only (sliced: bytes)
MAX_LINE = 1 << 20  # a "line" longer than this is garbage, counted and dropped unread
MAX_UNKNOWN_NAMES = 256  # distinct unknown event names remembered (the rest are only counted)


#: A run of blank lines (spaces, tabs, CR, FF, VT only), each with its newline: :meth:`TraceParser._parse_lines`
#: counts each as a comment; they are counted at once (20 million in an 87 MB trace: no end in 6 minutes a
#: line at a time, now 0.57 s of CPU for the whole trace).
BLANK_LINES = re.compile(rb"[ \t\r\n\x0b\x0c]*\n")  # (a repeated group held 140 bytes a line)
MAX_RUN = 1 << 16  # most lines given to the line parser at once where it takes lines one run at a time


def count_newlines(data: Text, start: int, end: int) -> int:
    """Newlines in ``data[start:end]`` (a mapping has no ``count``), copied 16 MB at a time."""
    return sum(data[at : min(end, at + (1 << 24))].count(b"\n") for at in range(start, end, 1 << 24))


class TraceParser:
    """Incremental parser: feed byte chunks, get lists of :class:`TraceEvent`.

    ``skip_wakeup_after_waking``: once a ``sched_waking`` event was seen,
    ``sched_wakeup`` lines are counted but not parsed.  Off by default: the
    analyses measure wakeup latency from waking when the trace has it, and
    read the wakeup that follows for the CPU the task was queued on (the
    waking's target_cpu is the CPU it last ran on).
    """

    def __init__(self, *, skip_wakeup_after_waking: bool = False) -> None:
        self.counts = ParseCounts()
        self._tail = b""
        self._line_no = 0
        self._fused: bool | None = None
        self._cpu_col = 0
        self._overlong = False
        self._cpu_at: dict[bytes, int] = {}
        self._skip_wakeup = skip_wakeup_after_waking
        self._seen_waking = False

    def feed(self, chunk: bytes) -> list[TraceEvent]:
        """Parse the complete lines of ``chunk`` (plus the partial line left from before)."""
        with gc_paused():
            return self._feed(chunk)

    def _feed(self, chunk: bytes) -> list[TraceEvent]:
        taken = self._take_lines(chunk)
        if taken is None:
            return []
        data, start, cut, out = taken
        if start > cut:
            return out
        return out + self._parse_lines(data[start:cut].split(b"\n"))

    def _take_lines(self, chunk: bytes | list[bytes]) -> tuple[bytes, int, int, list[TraceEvent]] | None:
        """The complete lines of the tail and ``chunk`` (or its pieces): (data, start, cut, events of the lines before).

        ``data[start:cut]`` are lines still to parse (``data[cut]`` is their last newline); the lines
        before ``start`` were parsed one by one until an event line told the layout.  None: no
        complete line yet.
        """
        if isinstance(chunk, list):  # pieces read in a row: one copy with the tail
            data = b"".join([self._tail, *chunk])
        else:
            data = self._tail + chunk if self._tail else chunk
        cut = data.rfind(b"\n")
        if cut < 0:
            if len(data) > MAX_LINE:  # no newline for MAX_LINE bytes: garbage; keep memory bounded
                self._tail = data[:MAX_LINE]
                self._overlong = True
            else:
                self._tail = data
            return None
        self._tail = data[cut + 1 :]
        if self._overlong:  # the rest of an over-long line: drop its remainder
            self._overlong = False
            first = data.find(b"\n")
            self._line_no += 1
            self.counts.lines = self._line_no
            self._malformed(self._line_no, data[:200])
            data = data[first + 1 :]
            cut -= first + 1
            if cut < 0:
                return None
        start, out = self._until_layout(data, 0, cut)
        return data, start, cut, out

    def _until_layout(self, data: Text, start: int, cut: int) -> tuple[int, list[TraceEvent]]:
        """Parse the lines of ``data`` from ``start`` one by one until an event line tells the layout.

        ``data[cut]`` is the last newline.  Returns where the rest starts and the events parsed.
        """
        out: list[TraceEvent] = []
        run = 1  # lines parsed at once, doubled while none tells the layout (4 us a line one by one)
        while self._fused is None and start <= cut:
            blank = BLANK_LINES.match(data, start, cut + 1)
            if blank is not None:  # blank lines, however many, counted at once
                self._blank_lines(count_newlines(data, start, blank.end()))
                start = blank.end()
                continue
            end = data.find(b"\n", start)  # found: data[cut] is a newline
            for _ in range(run - 1):
                if end >= cut:
                    break
                end = data.find(b"\n", end + 1)
            out += self._parse_lines(data[start:end].split(b"\n"))
            start = end + 1
            run = min(2 * run, MAX_RUN)
        return start, out

    def finish(self) -> list[TraceEvent]:
        """Parse the last line when the input did not end with a newline."""
        tail, self._tail = self._tail, b""
        return self._parse_lines([tail]) if tail else []

    def _header(self, line: bytes) -> None:
        """Learn what comment lines tell: CPU count, tracer, latency-tracer results."""
        counts = self.counts
        counts.comments += 1
        if line.startswith(b"cpus="):
            try:
                counts.cpus_declared = int(line[5:])
            except ValueError:
                counts.comments -= 1
                counts.malformed += 1
            return
        if not line.startswith(b"#"):
            return
        text = line.decode("utf-8", "replace").removesuffix("\r")
        if text.startswith("# latency:"):
            if len(counts.latency_headers) < 1000:
                counts.latency_headers.append((self._line_no, text))
        elif text.startswith("#  => started at:"):
            if len(counts.latency_callers) < 1000:
                counts.latency_callers.append((self._line_no, text.split(":", 1)[1].strip()))
        elif text.startswith("# tracer:"):
            counts.tracer = text.split(":", 1)[1].strip()
        elif "#P:" in text:
            with contextlib.suppress(ValueError, IndexError):
                counts.cpus_declared = int(text.rsplit("#P:", 1)[1].split()[0])
            # "# entries-in-buffer/entries-written: 2505/2600   #P:2": the ring buffer overwrote 95 events.
            if "entries-written:" in text:
                with contextlib.suppress(ValueError, IndexError):
                    kept, written = text.split("entries-written:", 1)[1].split()[0].split("/")
                    counts.overwritten = max(0, int(written) - int(kept))
                    counts.entries = int(kept)

    def _blank_lines(self, n: int) -> None:
        """Count ``n`` blank lines as :meth:`_parse_lines` does, without reading them: each is a comment."""
        self._line_no += n
        self.counts.comments += n
        self.counts.lines = self._line_no

    def _detect_layout(self, line: bytes, ts_start: int, name: bytes) -> bool:
        """True when the CPU is fused with the flags (``trace-cmd report -l``).  The first time, a ``system:event``
        ``name`` tells perf script text, whose losses are unknown unless it shows them (ParseCounts.loss_unknown)."""
        if self._fused is None and b":" in name:
            self.counts.loss_unknown = PERF_LOSS_UNKNOWN
        head = line[:ts_start]
        right = head.rfind(b"]")
        fused = not (right > 0 and head[head.rfind(b"[", 0, right) + 1 : right].strip().isdigit())
        self._fused = fused
        self.counts.layout = "fused" if fused else "bracket"
        return fused

    def _malformed(self, line_no: int, line: bytes) -> None:
        counts = self.counts
        counts.malformed += 1
        if len(counts.first_malformed) < 5:
            counts.first_malformed.append((line_no, line[:200].decode("utf-8", "replace")))

    # The plain-Python reference of collectors/trace_scan.py's compiled _scan_line, branch for branch: it is
    # on the complexity limit's allowlist with the kernels it defines (see pyproject.toml).
    def _parse_lines(self, lines: list[bytes]) -> list[TraceEvent]:  # noqa: C901
        out: list[TraceEvent] = []
        append = out.append
        kinds = EVENT_KINDS
        counts = self.counts
        unknown = counts.unknown
        fused = self._fused
        skip_wakeup = self._skip_wakeup and self._seen_waking
        line_no = self._line_no
        n_events = 0
        n_lost = 0  # lost-event markers: records, but not events
        make = _make
        # "[001]" -> 1 at the column where the first event line had its CPU: raw tracefs and
        # trace-cmd pad "comm-pid" to a fixed width, so most lines hit this cache (others fall back).
        col = self._cpu_col
        cpu_at = self._cpu_at
        skipped: dict[int, tuple[bytes, int, int]] = {}  # CPU -> its last skipped event line here (line, number, p)

        def skip(line: bytes, line_no: int, p: int) -> None:
            """An event line the analyses skip (``p``: the ``: `` after its timestamp): its CPU read as an event's
            is (the cached column first), its line kept as the CPU's last here, noted at once when its first."""
            c = cpu_at.get(line[col : col + 5], -1)
            if c < 0 or line.rfind(b"]", 0, p) != col + 4:
                c = self._skipped_cpu(line, line_no, p)
            if c >= 0:
                if c not in skipped and c not in counts.skipped_first:
                    self._note_skipped(line, line_no, p, c)
                skipped[c] = (line, line_no, p)

        for line in lines:
            line_no += 1
            p = line.find(b": ")
            if p >= 0 and line[:1] != b"#":
                # The timestamp's ": ", not one of an instance prefix ("trace1: comm-pid [000] ts:") or a comm's.
                p = _timestamp_end(line, p)
            if p < 0 or line[:1] == b"#":
                # No event: a marker or a header, also behind trace-cmd's instance prefix ("inst: CPU:1 [372
                # EVENTS DROPPED]"), or garbage.
                body = _unprefixed(line)
                if b"LOST" in body or b"DROPPED" in body:
                    self._line_no = line_no
                    append(self._lost(line, line_no))
                    n_lost += 1
                elif line.strip() == b"" or body.startswith((b"#", b"cpus=", b"CPU ", b"version =")):
                    self._line_no = line_no
                    self._header(body)
                else:
                    self._malformed(line_no, line)
                continue
            q = line.find(b": ", p + 2)
            if q < 0:
                if b" <-" in line:  # the function tracer: "ts: func <-parent"
                    n_events += 1
                    unknown[b"(function)"] = unknown.get(b"(function)", 0) + 1
                    skip(line, line_no, p)
                elif line[p + 2 :].lstrip(b" ").startswith(b"PERF_RECORD_LOST "):
                    append(self._perf_lost(line, line_no, p))
                    n_lost += 1
                else:
                    self._malformed(line_no, line)
                continue
            name = line[p + 2 : q]
            if name[:1] == b" ":  # perf script pads the event name
                name = name.lstrip()
            n_events += 1
            kind = kinds.get(name)
            if kind is None:
                if b" " in name or not name:
                    self._malformed(line_no, line)
                    n_events -= 1
                else:
                    if name in unknown or len(unknown) < MAX_UNKNOWN_NAMES:
                        unknown[name] = unknown.get(name, 0) + 1
                    skip(line, line_no, p)
                continue
            if kind == 3 and skip_wakeup:  # Kind.WAKEUP, once waking events are known
                skip(line, line_no, p)
                continue
            try:
                s = line.rfind(b" ", 0, p)
                ts = float(line[s + 1 : p])
                cpu = cpu_at.get(line[col : col + 5], -1)
                if cpu >= 0 and line.rfind(b"]", 0, s) != col + 4:
                    cpu = -1  # "[001]" at the cached column is not this line's last "[..]" (say "[x]" flags)
                if cpu >= 0:
                    pass
                elif fused is None or (not fused and line.rfind(b"]", 0, s) < 0):
                    fused = self._detect_layout(line, s, name)
                    col = self._cpu_col
                    cpu = -1
                if cpu >= 0:
                    pass
                elif fused:
                    cpu = _fused_cpu(line, s)
                else:
                    r = line.rfind(b"]", 0, s)
                    left = line.rfind(b"[", 0, r)
                    cpu = int(line[left + 1 : r])
                    if r - left == 4 and len(cpu_at) < 4096:
                        cpu_at[line[left : r + 1]] = cpu
                        col = self._cpu_col = left
                payload = line[q + 2 :]
                if payload[:1] == b" ":
                    payload = payload.lstrip()
                if kind == 1:
                    f = payload.split(b" ")
                    if len(f) == 8 and f[0][:10] == b"prev_comm=":  # the kernel format without spaces in comms
                        append(
                            make(
                                (1, ts, cpu, line_no, line, int(f[1][9:]), int(f[2][10:]), f[0][10:], f[3][11:],
                                 int(f[6][9:]), int(f[7][10:]), f[5][10:])
                            )
                        )  # fmt: skip
                    else:
                        append(parse_switch(kind, ts, cpu, line_no, line, payload))
                elif kind == 2 and payload[:5] == b"comm=" and payload.count(b" ") == 3:  # waking, no spaces in comm
                    self._seen_waking = True
                    skip_wakeup = self._skip_wakeup
                    f = payload.split(b" ")
                    if f[3][:11] != b"target_cpu=":
                        raise ValueError("not the kernel's sched_waking format")
                    append(
                        make(
                            (2, ts, cpu, line_no, line, int(f[1][4:]), int(f[2][5:]), f[0][5:], b"",
                             int(f[3][11:]), 0, b"")
                        )
                    )  # fmt: skip
                elif kind <= 4:
                    if kind == 2:
                        self._seen_waking = True
                        skip_wakeup = self._skip_wakeup
                    append(parse_wakeup(kind, ts, cpu, line_no, line, payload))
                elif kind <= 9:
                    append(parse_irq(kind, ts, cpu, line_no, line, payload))
                elif kind <= 11:
                    append(parse_work(kind, ts, cpu, line_no, line, payload))
                elif kind <= 15:
                    caller = payload.split(b" ", 1)[0].removeprefix(b"caller=")
                    append(_make((kind, ts, cpu, line_no, line, 0, 0, b"", caller, 0, 0, b"")))
                elif kind == 16:
                    pid, prio, comm = pid_prio_comm(payload)
                    append(_make((kind, ts, cpu, line_no, line, pid, prio, comm, b"", 0, 0, b"")))
                else:  # Kind.MIGRATE
                    append(parse_migrate(ts, cpu, line_no, line, payload))
            except (ValueError, IndexError):
                n_events -= 1
                self._malformed(line_no, line)
        self._line_no = line_no
        self._fused = fused
        for c, (line, n, p) in skipped.items():
            self._note_skipped(line, n, p, c)
        counts.lines = line_no
        counts.events += n_events
        counts.used += len(out) - n_lost
        return out

    def _skipped_cpu(self, line: bytes, line_no: int, p: int) -> int:
        """The CPU of a skipped event line not at the cached column (-1: the line does not give it)."""
        ev = skipped_event(line, line_no, p, self._fused)
        return -1 if ev is None else ev.cpu

    def _note_skipped(self, line: bytes, line_no: int, p: int, cpu: int) -> None:
        """Note an event line the analyses skip (``p``: the ``: `` after its timestamp) as its CPU's first or last
        (ParseCounts.skipped): when a CPU last reported is told by any event of it, not only by those analysed (a
        CPU busy with sched_stat_runtime events to the end was said to stop reporting 24 ms before it).  Each
        call of _parse_lines notes a CPU's first skipped event if it is the trace's, and its last."""
        ev = skipped_event(line, line_no, p, self._fused, cpu)
        if ev is not None:
            self.counts.skipped(ev)

    def _perf_lost(self, line: bytes, line_no: int, p: int) -> TraceEvent:
        """``perf script --show-lost-events``'s ``comm pid [001] ts: PERF_RECORD_LOST lost 2517`` (``p``: the ``: ``
        after its timestamp): the kernel lost that many records of the CPU's buffer before this time (a full ring
        buffer), a marker like tracefs's ``[LOST N EVENTS]`` (its time unused, as theirs: the loss is before it)."""
        counts = self.counts
        counts.lost_markers += 1
        at = skipped_event(line, line_no, p, self._fused)
        words = line[p + 2 :].split()
        lost = int(words[2]) if len(words) > 2 and words[1] == b"lost" and words[2].isdigit() else 0
        counts.lost_events += lost
        cpu = -1 if at is None else at.cpu
        return _make((int(Kind.LOST), -1.0, cpu, line_no, line, lost, 0, b"", b"", 0, 0, b""))

    def _lost(self, line: bytes, line_no: int) -> TraceEvent:
        """A lost-events marker such as ``CPU:1 [LOST 42 EVENTS]``; the CPU is -1 when not printed."""
        # ``CPU 2 is empty`` / ``##### CPU 2 buffer started ####`` are headers, not losses (see _parse_lines).
        counts = self.counts
        counts.lost_markers += 1
        text = line.decode("utf-8", "replace")
        cpu = -1
        lost = 0
        words = text.replace("[", " ").replace("]", " ").split()
        for i, word in enumerate(words):
            if word.startswith("CPU:") and word[4:].isdigit():
                cpu = int(word[4:])
            elif word.isdigit() and i > 0 and words[i - 1] == "CPU" and cpu < 0:
                cpu = int(word)
            elif word.isdigit() and i + 1 < len(words) and words[i + 1] == "EVENTS":
                lost = int(word)  # "[LOST 42 EVENTS]" (tracefs) or "[42 EVENTS DROPPED]"
        counts.lost_events += lost
        return _make((int(Kind.LOST), -1.0, cpu, line_no, line, lost, 0, b"", b"", 0, 0, b""))


def skipped_event(line: bytes, line_no: int, p: int, fused: bool | None, cpu: int = -1) -> TraceEvent | None:
    """The record (kind SKIPPED: time, CPU, line) of an event line the analyses skip; ``p``: the ``: `` after its
    timestamp (-1: found here), ``cpu`` when known (the scanner read it), else read as the line parser reads a
    CPU (``fused``: trace-cmd report -l; None: the layout is not known yet, told by this line).  None when the
    line does not give them."""
    try:
        if p < 0:
            p = _timestamp_end(line, line.find(b": "))
            if p < 0:
                return None
        s = line.rfind(b" ", 0, p)
        ts = float(line[s + 1 : p])
        if cpu < 0:
            r = line.rfind(b"]", 0, s)
            left = line.rfind(b"[", 0, r) if r > 0 else -1
            if not fused and left >= 0 and line[left + 1 : r].strip().isdigit():
                cpu = int(line[left + 1 : r])
            else:
                cpu = _fused_cpu(line, s)
    except (ValueError, IndexError):
        return None
    return _make((SKIPPED, ts, cpu, line_no, line, 0, 0, b"", b"", 0, 0, b""))


def _fused_cpu(line: bytes, s: int) -> int:
    """The CPU of a ``trace-cmd report -l`` line (``s``: the space before its timestamp): the digits that begin
    the token before it, fused with the latency flags (``1d..2.``); ValueError when there are none."""
    head = line[:s].rstrip()
    tok = head[head.rfind(b" ") + 1 :]
    i = 0
    while i < len(tok) and 48 <= tok[i] <= 57:
        i += 1
    return int(tok[:i])


def _unprefixed(line: bytes) -> bytes:
    """``line`` without trace-cmd's instance prefix (``inst: ``, padded: the name of a ``-B`` buffer, no spaces in
    it); ``line`` itself when it has none."""
    p = line.find(b": ")
    name = line[:p].lstrip()
    if p < 0 or not name or line[:1] == b"#" or b" " in name:
        return line
    return line[p + 2 :].lstrip(b" ")


def _timestamp_end(line: bytes, p: int) -> int:
    """Position of the first ``: `` (from ``p``) that ends a timestamp, or -1.

    A timestamp is a word of digits with at most one dot (``1240.024383``; a counter clock prints only digits),
    with something before it: what comes first on a line (after trace-cmd's padding) is the task or trace-cmd's
    ``-B`` instance name (``ue15:``, ``trace1:``, ``a:1:``, ``  42:``: any text but ``/``), never the time.
    """
    while p >= 0:
        if p > 0 and 48 <= line[p - 1] <= 57:
            s = line.rfind(b" ", 0, p)
            word = line[s + 1 : p]
            if (
                s > 0
                and line[:s].strip()
                and 48 <= word[0] <= 57
                and word.count(b".") <= 1
                and word.replace(b".", b"").isdigit()
            ):
                return p
        p = line.find(b": ", p + 2)
    return p
