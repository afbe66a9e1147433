"""Reading CPU profiles: ``perf.data`` (through ``perf script``), ``perf script`` text and folded stacks.

The reader streams its input in chunks and keeps one counter per distinct (thread, event, call chain
text), so memory grows with the number of distinct stacks, never with the number of samples.  Each
distinct call chain is parsed once, the way Brendan Gregg's ``stackcollapse-perf.pl`` parses it (the
folded output is byte-for-byte the script's: same frame names, same tidying, periods summed as
counts), so the hot loop per sample is a header match and a dictionary update.

The result is a :class:`Profile`: typed stacks with sample counts and period sums, the events seen,
the time span, and notes on what was skipped (other events, lines that are not samples, samples
without a call chain).
"""

from __future__ import annotations

import contextlib
import gzip
import re
import shutil
import subprocess
from collections.abc import Iterable, Iterator
from itertools import chain, repeat
from pathlib import Path
from typing import Any

from forensics.errors import InputError, UsageError
from forensics.types.profile import Profile, ProfileFrame, ProfileStack, StackCount, Thread

#: ``perf.data`` files start with this magic (perf's own header, version 2).
PERF_DATA_MAGIC = b"PERFILE2"
GZIP_MAGIC = b"\x1f\x8b"

# stackcollapse-perf.pl's header rule: a command name (at least two characters, may hold spaces),
# then the pid (and /tid when perf prints both).
_HEADER = re.compile(rb"^(\S.+?)\s+(\d+)/*(\d+)*\s+")
# ... its event rule: ``[period] event:`` at the end of the header line.
_EVENT = re.compile(rb":\s*(\d+)*\s+(\S+):\s*$")
_TIME = re.compile(rb"\s(\d+\.\d+):\s")
# A call chain line: address, symbol(+offset), (DSO).
_FRAME = re.compile(rb"^\s*(\w+)\s*(.+) \((.*)\)")
_OFFSET = re.compile(r"\+0x[\da-f]+$")
_ARGS = re.compile(r"\((?!anonymous namespace\)).*")
# The sample line of ``perf script`` without callchains: ``... event: ip sym+off (dso)``.
_FLAT = re.compile(rb"^.*\s(\S+):\s+([0-9a-f]+)\s+(.+) \((.*)\)\s*$")
_FOLDED = re.compile(rb"^(.*\S) (\d+)$")


def _kernel_dso(dso: str, pc: str) -> bool:
    if dso.startswith("[") and "unknown" not in dso:
        return True
    if dso.endswith("vmlinux") or dso.endswith(".ko") or dso.endswith(".ko.xz") or dso.endswith(".ko.zst"):
        return True
    # An unresolved kernel address is still a kernel address (x86-64 and arm64 kernel halves).
    return len(pc) == 16 and pc[0] in "f" and pc.startswith("ffff")


_JIT_MAP = re.compile(r"perf-\d+\.map$")
_JAVA_ARGS = re.compile(r"\.\(.*\)\.")


def _jit_dso(dso: str) -> bool:
    return bool(_JIT_MAP.search(dso)) or "jitted-" in dso or dso.startswith("//anon")


_SYMBOLS: dict[tuple[bytes, bytes, bool, bool], tuple[ProfileFrame, ...]] = {}


def parse_frame_line(line: bytes, java: bool) -> tuple[ProfileFrame, ...] | None:
    """The frames of one call chain line (several when perf shows inlined ones as ``a->b``), or None."""
    m = _FRAME.match(line)
    if m is None:
        return None
    raw_b = m.group(2)
    plus = raw_b.rfind(b"+0x")
    if plus > 0 and len(raw_b) > plus + 3 and not raw_b[plus + 3 :].strip(b"0123456789abcdef"):  # +0x[0-9a-f]+$
        raw_b = raw_b[:plus]
    dso_b = m.group(3)
    pc = m.group(1)
    # The kernel half of the address space matters only when the DSO does not say (an unknown one).
    high = len(pc) == 16 and pc.startswith(b"ffff")
    key = (raw_b, dso_b, java, high)
    frames = _SYMBOLS.get(key)
    if frames is None:
        frames = _symbol_frames(raw_b, dso_b, java, high)
        if len(_SYMBOLS) < 1 << 20:  # bounded: a profile has far fewer distinct symbols
            _SYMBOLS[key] = frames
    return frames


def _symbol_frames(raw_b: bytes, dso_b: bytes, java: bool, high: bool) -> tuple[ProfileFrame, ...]:
    raw = raw_b.decode("utf-8", "surrogateescape")
    dso = dso_b.decode("utf-8", "surrogateescape")
    if raw.startswith("("):
        return ()
    kernel = _kernel_dso(dso, "ffff000000000000" if high else "")
    jit = _jit_dso(dso)
    frames: list[ProfileFrame] = []
    for part in raw.split("->"):
        name = part
        if name == "[unknown]":
            name = "[" + (dso.rsplit("/", 1)[-1] if dso != "[unknown]" else "unknown") + "]"
        name = name.replace(";", ":")
        if not _JAVA_ARGS.search(name):
            name = _ARGS.sub("", name, count=1)
        name = name.replace('"', "").replace("'", "")
        if java and "/" in name and name.startswith("L"):
            name = name[1:]
        frames.append(ProfileFrame(name, dso, kernel, jit, bool(frames) or dso == "inlined"))
    return tuple(frames)


def _frames_of(
    body: bytes, java: bool, cache: dict[bytes, tuple[ProfileFrame, ...] | None]
) -> tuple[tuple[ProfileFrame, ...], int]:
    """Root-to-leaf frames of a call chain text, and its number of lines that are not frames.

    ``cache`` maps a line to its frames (empty for blank and comment lines, None for a line that is
    not a frame); it holds lines of one ``java`` value.  The same frame line (same address) recurs in
    many chains, so most lines are one look-up.
    """
    lines = body.split(b"\n")
    got = list(map(cache.get, lines, repeat(_NOT_PARSED)))
    if _NOT_PARSED in got:
        for i, (line, cached) in enumerate(zip(lines, got, strict=True)):
            if cached is _NOT_PARSED:
                parsed: tuple[ProfileFrame, ...] | None = None
                if not line or line[:1] == b"#":
                    parsed = ()
                elif line[:1].isspace():
                    parsed = parse_frame_line(line, java)
                got[i] = cache[line] = parsed
    bad = got.count(None)
    if bad:
        got = [g for g in got if g is not None]
    got.reverse()
    return tuple(chain.from_iterable(got)), bad  # type: ignore[arg-type]


_NOT_BULK = object()
# A header whose command name or pid holds the time (see ScriptParser._header); told by identity.
_TIMED: tuple[bytes, bytes, bytes | None, bytes, int] = (b"", b"", None, b"", -1)


def _parse_header(text: bytes, m: re.Match[bytes]) -> _Header:
    e = _EVENT.search(text)
    if e is None:
        return (m.group(1), m.group(2), m.group(3), b"", 1)
    return (m.group(1), m.group(2), m.group(3), e.group(2), int(e.group(1)) if e.group(1) else 1)


#: Bytes read at a time: large enough that per-chunk work (numpy calls) is small, small enough that the
#: passes over a chunk (mask, split, hash) find it in the CPU cache (4 MiB chunks were 20% slower).
CHUNK = 512 << 10
#: Input bytes read with the regular-expression bulk path before the numpy keyer (its import costs) takes over.
NUMPY_FROM = 8 << 20
_Header = tuple[bytes, bytes, bytes | None, bytes, int]  # comm, pid, tid, event, period
# The time of a sample header (perf script prints `` 123.456789: ``); the bulk reader checks there is
# exactly one per sample.  It starts with a literal space, which keeps the regex engine's scan fast.
_BULK_TIME = re.compile(rb" (\d+\.\d+): ")
_NOT_PARSED: Any = object()  # a cache miss (None is cached: "not a frame")


def _strip_leading(block: bytes, start_line: int) -> tuple[bytes, int]:
    """A block without its leading empty and comment lines, and the line number it now starts at."""
    while block[:1] == b"\n" or block[:1] == b"#":
        nl = block.find(b"\n")
        if nl < 0:
            return b"", start_line
        block = block[nl + 1 :]
        start_line += 1
    return block, start_line


class ScriptParser:
    """Streaming parser of ``perf script`` text; feed bytes, then :meth:`close`."""

    def __init__(self, source: str, window: tuple[float, float] | None = None, kind: str = "perf script") -> None:
        self.source = source
        self.kind = kind
        self.window = window
        self._rest = b""
        self._line = 1  # line number of the first line of ``_rest``
        self._counts: dict[tuple[bytes, bytes, bytes | None, bytes, bytes], StackCount] = {}
        self._events_raw: dict[bytes, int] = {}
        self._seen: dict[bytes, tuple[StackCount, int, bytes] | None] = {}
        # The numpy path: masked sample text -> slot; slot 0 is "counts nothing" (empty pieces).
        self._ids: dict[bytes, int] = {b"": 0}
        self._slots: list[tuple[StackCount, int, bytes] | None] = [None]
        self._slot_counts: Any = None  # numpy counts per slot, made when the numpy path starts
        self._fed = 0
        self._shapes: dict[bytes, tuple[bytes, bytes, bytes | None, bytes, int] | None] = {}
        self._start: float | None = None
        self._end: float | None = None
        self._flat = 0
        self._skipped = 0
        self._first_skipped: tuple[int, str] | None = None
        self._outside = 0
        self._untimed = 0

    def feed(self, chunk: bytes) -> None:
        """Parse every whole sample in ``chunk`` (plus what was left of the previous one)."""
        data = self._rest + chunk if self._rest else chunk
        cut = data.rfind(b"\n\n")
        if cut < 0:
            self._rest = data
            if len(data) > 1 << 24:
                # No blank line in 16 MiB: samples without call chains (one line each).
                cut = data.rfind(b"\n")
                if cut >= 0:
                    self._blocks(data[: cut + 1])
                    self._rest = data[cut + 1 :]
            return
        if self.window is None:
            self._fed += cut + 2
            # Importing numpy costs more than it saves on small inputs.
            if self._fed > NUMPY_FROM:
                self._blocks_bulk(data, cut + 2)
            else:
                self._blocks_counted(data[: cut + 2])
        else:
            self._blocks(data[: cut + 2])
        self._rest = data[cut + 2 :]

    def close(self) -> Profile:
        """Parse what is left (a last sample without its blank line is dropped, as stackcollapse-perf.pl does)."""
        if self._rest.strip():
            self._blocks(self._rest, last=True)
        self._rest = b""
        return self._profile()

    def _skip(self, line_no: int, text: bytes) -> None:
        self._skipped += 1
        if self._first_skipped is None:
            self._first_skipped = (line_no, text.decode("utf-8", "replace")[:200])

    def _header(self, shape: bytes) -> _Header | None:
        """comm, pid, tid, event and period of a header whose time was replaced by ``0.0``.

        :data:`_TIMED` when those fields hold the time: perf prints ``:-1    -1 [000]  12.5: ...``
        for a task it lost, and stackcollapse-perf.pl's rule then takes everything up to the period
        as the command name, time included; such headers are parsed as they are, sample by sample.
        """
        m = _HEADER.match(shape)
        if m is None:
            return None
        at = shape.find(b"0.0:")
        if 0 <= at < m.end():
            return _TIMED
        return _parse_header(shape, m)

    def _real_header(self, header: bytes) -> _Header | None:
        """:meth:`_header` of a header as it is (its time included)."""
        m = _HEADER.match(header)
        return None if m is None else _parse_header(header, m)

    def _blocks_counted(self, data: bytes) -> None:
        """:meth:`_blocks_bulk` without numpy: times masked by ``re.subn``, ``Counter`` counts."""
        from collections import Counter

        shaped, replaced = _BULK_TIME.subn(b" 0.0: ", data)
        pieces = shaped.split(b"\n\n")
        if replaced != len(pieces) - pieces.count(b""):
            # Not one time per sample (no times, or a frame line that looks like one): the slow way.
            self._blocks(data)
            return
        counted = Counter(pieces)
        seen = self._seen
        new = [b for b in counted if b not in seen and b]
        if new:
            fresh = set(new)
            first: dict[bytes, tuple[int, int]] = {}
            line = self._line
            for i, piece in enumerate(pieces):
                if piece in fresh:
                    first[piece] = (i, line)
                    fresh.discard(piece)
                    if not fresh:
                        break
                line += piece.count(b"\n") + 2
            parsed = [self._bulk_parse(block, first[block][1]) for block in new]
            if any(p is _NOT_BULK or p is _TIMED for p in parsed):
                self._blocks(data)
                return
            originals = data.split(b"\n\n")
            for block, got in zip(new, parsed, strict=True):
                i, line = first[block]
                seen[block] = None if got is None else self._bulk_count(got, originals[i], line)  # type: ignore[arg-type]
                counted[block] -= 1  # the first occurrence was counted when it was parsed
        self._line += shaped.count(b"\n")
        times = _BULK_TIME.findall(data)
        if times:
            lo = min(map(float, times))
            hi = max(map(float, times))
            if self._start is None or lo < self._start:
                self._start = lo
            if self._end is None or hi > self._end:
                self._end = hi
        events = self._events_raw
        for block, n in counted.items():
            if not n or not block:
                continue
            slot = seen[block]
            if slot is None:
                continue
            sc, period, event = slot
            sc.samples += n
            sc.period += n * period
            events[event] += n

    def _blocks_bulk(self, data: bytes, end: int) -> None:
        """The same as :meth:`_blocks` on whole samples (``data[:end]`` ends with a blank line), in bulk.

        Samples differ from each other mostly in their time: :func:`collectors.perf_scan.mask_times`
        writes zeros over the times, a dictionary gives each distinct text a slot (one look-up per
        sample, in C), numpy counts the slots, and only texts not seen before go through the
        per-sample code, which parses them and finds their line and verbatim header (masking keeps
        every offset, so the original text is at the same place).  Chunks holding samples without
        exactly one time (no ``-g``, garbage, no times) go to :meth:`_blocks`.
        """
        import numpy as np

        from collectors.perf_scan import mask_times

        view = memoryview(data)[:end]
        masked = mask_times(view)
        if masked is None:
            self._blocks(data[:end])
            return
        pieces = masked.text.split(b"\n\n")
        ends = np.cumsum(np.fromiter(map(len, pieces), np.int64, len(pieces)) + 2)
        starts = np.concatenate(([0], ends[:-1]))
        # Exactly one time in each piece that is not empty (and none in the empty ones).
        owner = np.searchsorted(ends, masked.colons, side="right")
        per_piece = np.bincount(owner, minlength=len(pieces))
        if not np.array_equal(per_piece, (ends - starts > 2).astype(per_piece.dtype)):
            self._blocks(data[:end])
            return
        ids = self._ids
        # Each piece's slot (-2: a text not seen before), one C-level look-up each; numpy finds the rest.
        slots = np.fromiter(map(ids.get, pieces, repeat(-2)), np.int64, len(pieces))
        missing = np.flatnonzero(slots == -2)
        newlines = None
        if len(missing):
            newlines = np.flatnonzero(np.frombuffer(view, np.uint8) == 10)
            first: dict[bytes, int] = {}  # each new text's first piece in this chunk
            for i in missing.tolist():
                first.setdefault(pieces[i], i)
            at = np.fromiter(first.values(), np.int64, len(first))
            lines = (self._line + np.searchsorted(newlines, starts[at])).tolist()
            fresh: list[tuple[int, bytes, int, bytes, object]] = []
            for (block, i), line, lo, hi in zip(
                first.items(), lines, starts[at].tolist(), (ends[at] - 2).tolist(), strict=True
            ):
                piece = data[lo:hi]
                got = self._bulk_parse(_BULK_TIME.sub(b" 0.0: ", piece), line)
                if got is _NOT_BULK:
                    self._blocks(data[:end])
                    return
                fresh.append((i, block, line, piece, got))
            counted: list[int] = []
            for i, block, line, piece, got in fresh:
                if got is _TIMED:
                    ids[block] = -1  # read sample by sample, below
                    continue
                ids[block] = len(self._slots)
                self._slots.append(None if got is None else self._bulk_count(got, piece, line))  # type: ignore[arg-type]
                counted.append(i)
            slots[missing] = np.fromiter(
                map(ids.__getitem__, map(pieces.__getitem__, missing.tolist())), np.int64, len(missing)
            )
            slots[counted] = 0  # the first occurrence was counted when it was parsed
        timed = np.flatnonzero(slots == -1)
        if len(timed):
            # Samples whose header fields hold their time: each is its own stack, as in the script.
            if newlines is None:
                newlines = np.flatnonzero(np.frombuffer(view, np.uint8) == 10)
            line0 = self._line
            for i in timed.tolist():
                self._line = line0 + int(np.searchsorted(newlines, starts[i]))
                self._blocks(data[starts[i] : ends[i]])
            slots[timed] = 0
            self._line = line0
        if newlines is not None:
            self._line += len(newlines)
        else:
            self._line += int(np.count_nonzero(np.frombuffer(view, np.uint8) == 10))
        counts = np.bincount(slots, minlength=len(self._slots))
        if self._slot_counts is None:
            self._slot_counts = np.zeros(0, np.int64)
        if len(self._slot_counts) < len(counts):
            grown = np.zeros(max(len(counts), 2 * len(self._slot_counts)), np.int64)
            grown[: len(self._slot_counts)] = self._slot_counts
            self._slot_counts = grown
        self._slot_counts[: len(counts)] += counts
        if masked.lo is not None and masked.hi is not None:
            if self._start is None or masked.lo < self._start:
                self._start = masked.lo
            if self._end is None or masked.hi > self._end:
                self._end = masked.hi

    def _flush_slots(self) -> None:
        """Add the bulk reader's counts of repeated samples to their stacks and events."""
        if self._slot_counts is None:
            return
        for slot, n in zip(self._slots, self._slot_counts.tolist(), strict=False):
            if slot is None or not n:
                continue
            sc, period, event = slot
            sc.samples += n
            sc.period += n * period
            self._events_raw[event] += n
        self._slot_counts[:] = 0

    def _bulk_parse(self, block: bytes, start_line: int) -> tuple[int, bytes, _Header] | object | None:
        """A new sample shape's header line, body and parsed header; None to ignore, _NOT_BULK if odd."""
        if block[:1] == b"\n" or block[:1] == b"#":
            block, start_line = _strip_leading(block, start_line)
            if not block:
                return None
        nl = block.find(b"\n")
        shape = block if nl < 0 else block[:nl]
        body = b"" if nl < 0 else block[nl + 1 :]
        if shape in self._shapes:
            h = self._shapes[shape]
        else:
            h = self._shapes[shape] = self._header(shape)
        if h is None or h is _TIMED or (body and not body[:1].isspace()):
            return _NOT_BULK if h is not _TIMED else _TIMED
        return (start_line, body, h)

    def _bulk_count(
        self, parsed: tuple[int, bytes, _Header], piece: bytes, piece_line: int
    ) -> tuple[StackCount, int, bytes]:
        """Count the first occurrence of a new sample shape; its counter, period and event for the next ones."""
        start_line, body, (comm, pid, tid, event, period) = parsed
        self._events_raw[event] = self._events_raw.get(event, 0) + 1
        key = (comm, pid, tid, event, body)
        sc = self._counts.get(key)
        if sc is None:
            skip = start_line - piece_line  # leading blank and comment lines
            header = piece.split(b"\n", skip + 1)[skip] if skip else piece.partition(b"\n")[0]
            sc = self._counts[key] = StackCount(1, period, start_line, header.decode("utf-8", "replace"))
        else:
            sc.samples += 1
            sc.period += period
        return (sc, period, event)

    def _blocks(self, data: bytes, last: bool = False) -> None:
        # The hot loop: per sample, one search for the time, two dictionary look-ups.  Headers differ
        # only in their time (and CPU), so they are parsed once per shape, with the time as "0.0".
        counts = self._counts
        shapes = self._shapes
        events = self._events_raw
        time_re = _TIME.search
        window = self.window
        line = self._line
        start_line = line
        for piece in data.split(b"\n\n"):
            block = piece
            start_line = line
            line += piece.count(b"\n") + 2
            if not block:
                continue
            if block[:1] == b"\n" or block[:1] == b"#":
                block, start_line = _strip_leading(block, start_line)
                if not block:
                    continue
            nl = block.find(b"\n")
            header = block if nl < 0 else block[:nl]
            body = b"" if nl < 0 else block[nl + 1 :]
            t = time_re(header)
            shape = header if t is None else header[: t.start(1)] + b"0.0" + header[t.end(1) :]
            if shape in shapes:
                h = shapes[shape]
            else:
                h = shapes[shape] = self._header(shape)
            if h is _TIMED:
                h = self._real_header(header)
            if h is None:
                if header[:1].isspace() and _FLAT.search(header):
                    # perf script without -g right-aligns the command name: one sample per line.
                    self._flat_block(block, start_line)
                else:
                    self._skip(start_line, header)
                continue
            if body and not body[:1].isspace():
                # Lines that all start in column 0: perf script without callchains (or garbage).
                self._flat_block(block, start_line)
                continue
            if last:
                # The sample had no blank line after it: stackcollapse-perf.pl never counts it.
                break
            comm, pid, tid, event, period = h
            events[event] = events.get(event, 0) + 1
            if t is not None:
                ts = float(t.group(1))
                if window is not None and not window[0] <= ts <= window[1]:
                    self._outside += 1
                    continue
                if self._start is None or ts < self._start:
                    self._start = ts
                if self._end is None or ts > self._end:
                    self._end = ts
            elif window is not None:
                self._untimed += 1
                continue
            key = (comm, pid, tid, event, body)
            sc = counts.get(key)
            if sc is None:
                counts[key] = StackCount(1, period, start_line, header.decode("utf-8", "replace"))
            else:
                sc.samples += 1
                sc.period += period
        # The last piece is what follows the last blank line: the next chunk's text starts there.
        self._line = start_line

    def _flat_block(self, block: bytes, start_line: int) -> None:
        """Samples printed one per line (no ``-g``): count them with a one-frame stack."""
        for i, text in enumerate(block.split(b"\n")):
            if not text.strip():
                continue
            m = _HEADER.match(text.lstrip())
            f = _FLAT.search(text)
            if m is None or f is None:
                self._skip(start_line + i, text)
                continue
            self._flat += 1
            event = f.group(1)
            self._events_raw[event] = self._events_raw.get(event, 0) + 1
            t = _TIME.search(text)
            if t is not None:
                ts = float(t.group(1))
                if self.window is not None and not self.window[0] <= ts <= self.window[1]:
                    self._outside += 1
                    continue
                self._start = ts if self._start is None else min(self._start, ts)
                self._end = ts if self._end is None else max(self._end, ts)
            p = re.search(rb":\s*(\d+)\s+\S+:\s+\w+\s", text)
            period = int(p.group(1)) if p else 1
            body = b"\t" + f.group(2) + b" " + f.group(3) + b" (" + f.group(4) + b")"
            key = (m.group(1), m.group(2), m.group(3), event, body)
            sc = self._counts.get(key)
            if sc is None:
                self._counts[key] = StackCount(1, period, start_line + i, text.decode("utf-8", "replace"))
            else:
                sc.samples += 1
                sc.period += period

    def _profile(self) -> Profile:
        self._flush_slots()
        events = {e.decode("utf-8", "replace"): n for e, n in self._events_raw.items()}
        # stackcollapse-perf.pl keeps the first event it meets (and samples whose header names none).
        first = next((e for e in events if e), None)
        stacks: list[ProfileStack] = []
        parsed: dict[tuple[bytes, bool], tuple[tuple[ProfileFrame, ...], int]] = {}
        line_caches: dict[bool, dict[bytes, tuple[ProfileFrame, ...] | None]] = {False: {}, True: {}}
        bad_bodies = 0
        # Stacks of one thread share its Thread, equal call chains share one frames tuple (chains that
        # differ only in addresses parse to equal frames): later stages may group by identity.
        threads: dict[tuple[bytes, bytes, bytes | None], Thread] = {}
        chains: dict[tuple[ProfileFrame, ...], tuple[ProfileFrame, ...]] = {}
        names = {e: e.decode("utf-8", "replace") for e in self._events_raw}
        for (comm, a, b, event, body), sc in self._counts.items():
            thread = threads.get((comm, a, b))
            if thread is None:
                comm_s = comm.decode("utf-8", "surrogateescape")
                # stackcollapse-perf.pl: one number is the tid (perf's default), two are pid/tid.
                thread = Thread(comm_s, None, int(a)) if b is None else Thread(comm_s, int(a), int(b))
                threads[(comm, a, b)] = thread
            java = thread.comm.startswith("java")
            got = parsed.get((body, java))
            if got is None:
                frames, bad = _frames_of(body, java, line_caches[java])
                got = parsed[(body, java)] = (chains.setdefault(frames, frames), bad)
            frames, bad = got
            if bad:
                bad_bodies += sc.samples
            stacks.append(
                ProfileStack(thread, names[event], frames, sc.samples, sc.period, sc.first_line, sc.first_header)
            )
        notes: list[str] = []
        if len([e for e in events if e]) > 1 and first is not None:
            others = ", ".join(f"{e or '(unnamed)'}: {n} samples" for e, n in events.items() if e != first)
            notes.append(
                f"several events in one input; hotspots and flame graph use the first, {first} ({others} left out)"
            )
        if self._flat and not any(s.frames and len(s.frames) > 1 for s in stacks):
            notes.append(
                f"{self._flat} samples carry no call chain (recorded without -g): flat hotspots only, no call paths"
            )
        elif self._flat:
            notes.append(f"{self._flat} samples carry no call chain; they count as one-frame stacks")
        if self._skipped and self._first_skipped is not None:
            line_no, text = self._first_skipped
            notes.append(
                f"{self._skipped} lines are not perf script samples and were skipped (first: line {line_no}: {text!r})"
            )
        if bad_bodies:
            notes.append(f"{bad_bodies} samples have call chain lines that are not frames (ignored in their stacks)")
        if self._outside:
            notes.append(f"{self._outside} samples outside the --window were left out")
        if self._untimed:
            notes.append(f"{self._untimed} samples without a timestamp were left out by --window")
        return Profile(
            source=self.source,
            kind=self.kind,
            stacks=stacks,
            events=events,
            first_event=first,
            start=self._start,
            end=self._end,
            lines=self._line,
            notes=notes,
            flat_samples=self._flat,
            skipped_lines=self._skipped,
            first_skipped=self._first_skipped,
        )


def parse_folded(chunks: Iterable[bytes], source: str) -> Profile:
    """Folded stacks (``comm;a;b;c 42``): the first frame is taken as the command name."""
    rest = b""
    counts: dict[str, list[int]] = {}
    first_text: dict[str, str] = {}  # the line that first named each stack, verbatim (evidence)
    line_no = 0
    skipped = 0
    first_skipped: tuple[int, str] | None = None

    def lines() -> Iterator[bytes]:
        nonlocal rest
        for chunk in chunks:
            data = rest + chunk
            parts = data.split(b"\n")
            rest = parts.pop()
            yield from parts
        if rest:
            yield rest

    for raw in lines():
        line_no += 1
        text = raw.rstrip(b"\r")
        if not text.strip() or text.startswith(b"#"):
            continue
        m = _FOLDED.match(text)
        if m is None:
            skipped += 1
            if first_skipped is None:
                first_skipped = (line_no, text.decode("utf-8", "replace")[:200])
            continue
        stack = m.group(1).decode("utf-8", "replace")
        slot = counts.get(stack)
        if slot is None:
            counts[stack] = [int(m.group(2)), line_no]
            first_text[stack] = text.decode("utf-8", "replace")
        else:
            slot[0] += int(m.group(2))
    stacks = []
    for stack, (count, first) in counts.items():
        names = stack.split(";")
        comm, frames = (names[0], names[1:]) if len(names) > 1 else ("", names)
        stacks.append(
            ProfileStack(
                Thread(comm, None, None),
                "",
                tuple(ProfileFrame(n, "", n.endswith("_[k]"), n.endswith("_[j]"), n.endswith("_[i]")) for n in frames),
                count,
                count,
                first,
                first_text[stack],
            )
        )
    notes = []
    if first_skipped is not None:
        notes.append(
            f"{skipped} lines are not folded stacks and were skipped "
            f"(first: line {first_skipped[0]}: {first_skipped[1]!r})"
        )
    notes.append("folded stacks carry no threads, events or times: per-thread and DSO tables are not available")
    return Profile(
        source,
        "folded",
        stacks,
        {"": sum(s.samples for s in stacks)},
        None,
        None,
        None,
        line_no,
        notes,
        skipped_lines=skipped,
        first_skipped=first_skipped,
    )


def perf_data_notes(head: bytes, file_size: int) -> list[str]:
    """What a perf.data header says about the file being complete (perf script reads a cut file silently).

    The header (perf's ``struct perf_file_header``) holds the offset and size of the data section at
    bytes 40 and 48, little-endian; perf writes the size when the recording ends.
    """
    if len(head) < 56 or head[:8] != PERF_DATA_MAGIC:
        return []
    offset = int.from_bytes(head[40:48], "little")
    size = int.from_bytes(head[48:56], "little")
    if size == 0:
        return ["the perf.data header was never finished (perf record interrupted?): samples may be missing"]
    if offset + size > file_size:
        return [
            f"the perf.data file is truncated: its header announces {offset + size:,} bytes, the file has "
            f"{file_size:,}; the samples after the cut are missing"
        ]
    return []


def find_perf() -> str | None:
    """The perf binary: ``perf`` on PATH when it runs, else Debian's versioned ``/usr/bin/perf_X.Y``."""
    candidates = [shutil.which("perf"), *sorted(str(p) for p in Path("/usr/bin").glob("perf_*"))]
    for c in candidates:
        if not c:
            continue
        try:
            ok = subprocess.run([c, "--version"], capture_output=True, timeout=20, check=False).returncode == 0
        except OSError:
            ok = False
        if ok:
            return c
    return None


def perf_script_chunks(
    path: Path, perf: str | None = None, warnings: list[str] | None = None, label: str | None = None
) -> Iterator[bytes]:
    """``perf script -i PATH`` output, streamed; raises :class:`InputError` when perf fails or is missing.

    ``label`` names the input in errors when ``path`` is a decompressed copy of it.

    What perf says on stderr when it still succeeds (a truncated file it read up to the cut) is
    appended to ``warnings``.
    """
    binary = perf or find_perf()
    if binary is None:
        raise InputError(
            f"{label or path} is a perf.data file and perf is not installed",
            hint="install perf (apt-get install linux-perf) or give `perf script` text made where perf is",
        )
    import tempfile

    # stderr goes to a file: a pipe could fill up (a damaged file makes perf complain at length) and
    # block perf while this reads its stdout.
    with tempfile.TemporaryFile() as errors:
        proc = subprocess.Popen(
            [binary, "script", "-i", str(path)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=errors
        )
        assert proc.stdout is not None
        produced = 0
        try:
            while chunk := proc.stdout.read(1 << 20):
                produced += len(chunk)
                yield chunk
        finally:
            proc.stdout.close()
            rc = proc.wait()
        errors.seek(0)
        said = [x.strip() for x in errors.read(1 << 20).decode("utf-8", "replace").splitlines() if x.strip()]
    reason = said[0][:200] if said else f"exit status {rc}"
    if rc != 0 and (warnings is None or not produced):
        raise InputError(
            f"{label or path}: perf script failed: {reason}",
            hint="the perf.data file may be truncated or from another perf; re-record, or give `perf script` text",
        )
    if warnings is not None and rc != 0:
        warnings.append(f"perf script stopped part way ({reason}): the samples after that point are missing")
    elif warnings is not None and said:
        warnings.append(f"perf script said: {reason}" + (f" (+{len(said) - 1} more lines)" if len(said) > 1 else ""))


def _is_folded(head: bytes) -> bool:
    lines = [x for x in head.split(b"\n")[:50] if x.strip() and not x.startswith(b"#")]
    if len(head.split(b"\n")) > 1 and not head.endswith(b"\n"):
        lines = lines[:-1]
    return bool(lines) and all(_FOLDED.match(x.rstrip(b"\r")) and not x[:1].isspace() for x in lines)


def read_profile(name: str, window: tuple[float, float] | None = None, perf: str | None = None) -> Profile:
    """Read one profile input (a path, or ``-`` for stdin), told from its content."""
    from collectors.inputs import open_input

    with open_input(name) as tracked:
        chunks = tracked.read_chunks(CHUNK)
        first = next(chunks, b"")
        if first.startswith(PERF_DATA_MAGIC):
            if name == "-":
                raise UsageError("perf.data on stdin is not supported", hint="give the perf.data path")
            with contextlib.ExitStack() as cleanup:
                data_path = Path(name)
                if tracked.compression is not None:
                    # perf script reads only a plain perf.data: spool the decompressed one to a private file.
                    import tempfile

                    spool = Path(cleanup.enter_context(tempfile.TemporaryDirectory(prefix="kforensic-perf-")))
                    data_path = spool / "perf.data"
                    try:
                        with open(data_path, "wb") as out:
                            out.write(first)
                            for chunk in chunks:
                                out.write(chunk)
                    except OSError as exc:
                        raise InputError(
                            f"{tracked.name}: cannot decompress it into {spool}: {exc.strerror or exc}",
                            hint="free space in the temporary directory (TMPDIR), or give the perf.data decompressed",
                        ) from None
                for _ in chunks:  # hash the whole file for the source record
                    pass
                record = tracked.record()
                size = data_path.stat().st_size  # of the perf.data itself, decompressed
                parser = ScriptParser(tracked.name, window, kind="perf.data")
                warnings: list[str] = []
                for chunk in perf_script_chunks(data_path, perf, warnings, tracked.name):
                    parser.feed(chunk)
            profile = parser.close()
            profile.notes[:0] = warnings + perf_data_notes(first, size) + tracked.notes
            profile.record = record
            return _checked(profile, window)

        def rest() -> Iterator[bytes]:
            yield first
            yield from chunks

        stream: Iterator[bytes] = rest()  # already decompressed by the input layer (gzip, xz, zstd)
        head = next(stream, b"")
        if not head.strip():
            rest_data = b"".join(stream)
            if not rest_data.strip():
                raise InputError(
                    f"{tracked.name}: the profile is empty",
                    hint="record with `perf record -g -- CMD` and give the perf.data or `perf script` output",
                )
            head = head + rest_data

        def all_chunks() -> Iterator[bytes]:
            yield head
            yield from stream

        if _is_folded(head):
            profile = parse_folded(all_chunks(), tracked.name)
        else:
            parser = ScriptParser(tracked.name, window)
            for chunk in all_chunks():
                parser.feed(chunk)
            profile = parser.close()
        profile.record = tracked.record()
        profile.notes.extend(tracked.notes)  # a compressed stream cut short: read up to the cut, and said
    return _checked(profile, window)


def _checked(profile: Profile, window: tuple[float, float] | None) -> Profile:
    """The profile, or a one-line error when it holds no sample."""
    if profile.stacks:
        return profile
    if window is not None and any("--window" in n for n in profile.notes):
        raise InputError(
            f"{profile.source}: no samples in the --window {window[0]:g}:{window[1]:g}",
            hint="times are perf's seconds, as perf script prints them after the pid; widen the window",
        )
    where = f" (line {profile.first_skipped[0]}: {profile.first_skipped[1][:60]!r})" if profile.first_skipped else ""
    raise InputError(
        f"{profile.source}: no samples: not perf script text, folded stacks or perf.data{where}",
        hint="give `perf script` output, folded stacks (a;b;c 42) or a perf.data file",
    )


def read_gzip_text(path: Path) -> bytes:
    """A whole (possibly gzipped) text file; for tests and tools."""
    data = path.read_bytes()
    return gzip.decompress(data) if data.startswith(GZIP_MAGIC) else data


__all__ = ["ScriptParser", "find_perf", "parse_folded", "read_profile"]


def perf_script_lines(path: Path, perf: str | None = None) -> list[str]:
    """The lines of ``perf script -i PATH``, for resolving the evidence of a perf.data input (sample locators)."""
    text = b"".join(perf_script_chunks(path, perf))
    return text.decode("utf-8", "replace").split("\n")
