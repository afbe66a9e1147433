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
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from forensics.errors import InputError, UsageError
from forensics.model import SourceRecord

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
_OFFSET_B = re.compile(rb"\+0x[\da-f]+")
_ARGS = re.compile(r"\((?!anonymous namespace\)).*")
# The sample line of ``perf script`` without callchains: ``... event: ip sym+off (dso)``.
_FLAT = re.compile(rb"^.*\s(\S+):\s+([0-9a-f]+)\s+(.+) \((.*)\)\s*$")
_FOLDED = re.compile(rb"^(.*\S) (\d+)$")


class Frame(NamedTuple):
    """One frame of a call chain, named as stackcollapse-perf.pl names it (a tuple: made by the thousand)."""

    name: str
    dso: str
    kernel: bool
    jit: bool
    inlined: bool


@dataclass
class StackCount:
    """How often one thread was sampled in one call chain, and where it was first seen."""

    samples: int
    period: int
    first_line: int
    first_header: str


@dataclass(frozen=True)
class Thread:
    """Who was sampled: command name as perf printed it, pid (None when perf printed only the tid), tid."""

    comm: str
    pid: int | None
    tid: int | None


@dataclass(frozen=True)
class ProfileStack:
    """A distinct (thread, event, call chain) with its counts; frames from root to leaf."""

    thread: Thread
    event: str
    frames: tuple[Frame, ...]
    samples: int
    period: int
    first_line: int
    first_header: str


@dataclass
class Profile:
    """Everything read from one profile input."""

    source: str
    kind: str  # "perf.data", "perf script" or "folded"
    stacks: list[ProfileStack]
    events: dict[str, int]  # samples per event, in first-seen order
    first_event: str | None
    start: float | None
    end: float | None
    lines: int
    notes: list[str] = field(default_factory=list)
    flat_samples: int = 0  # samples that carried no call chain
    skipped_lines: int = 0
    first_skipped: tuple[int, str] | None = None
    record: SourceRecord | None = None


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


_SYMBOLS: dict[tuple[bytes, bytes, bool, bool], tuple[Frame, ...]] = {}


def parse_frame_line(line: bytes, java: bool) -> tuple[Frame, ...] | None:
    """The frames of one call chain line (several when perf shows inlined ones as ``a->b``), or None."""
    m = _FRAME.match(line)
    if m is None:
        return None
    raw_b = m.group(2)
    plus = raw_b.rfind(b"+0x")
    if plus > 0 and _OFFSET_B.fullmatch(raw_b, plus):
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


def _symbol_frames(raw_b: bytes, dso_b: bytes, java: bool, high: bool) -> tuple[Frame, ...]:
    raw = raw_b.decode("utf-8", "surrogateescape")
    dso = dso_b.decode("utf-8", "surrogateescape")
    if raw.startswith("("):
        return ()
    kernel = _kernel_dso(dso, "ffff000000000000" if high else "")
    jit = _jit_dso(dso)
    frames: list[Frame] = []
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
        frames.append(Frame(name, dso, kernel, jit, bool(frames) or dso == "inlined"))
    return tuple(frames)


def _frames_of(
    body: bytes, java: bool, cache: dict[tuple[bytes, bool], tuple[Frame, ...] | None]
) -> tuple[tuple[Frame, ...], int]:
    """Root-to-leaf frames of a call chain text, and its number of lines that are not frames.

    ``cache`` maps a line to its frames: the same frame line (same address) recurs in many chains.
    """
    out: list[tuple[Frame, ...]] = []
    bad = 0
    for raw_line in body.split(b"\n"):
        if not raw_line or raw_line[:1] == b"#":
            continue
        key = (raw_line, java)
        parsed = cache.get(key, _NOT_PARSED)
        if parsed is _NOT_PARSED:
            parsed = cache[key] = parse_frame_line(raw_line, java) if raw_line[:1].isspace() else None
        if parsed is None:
            bad += 1
            continue
        out.append(parsed)
    out.reverse()
    return tuple(f for group in out for f in group), bad


_NOT_BULK = object()
#: Bytes read at a time: large enough that per-chunk work (numpy calls) is small, small enough to stream.
CHUNK = 4 << 20
#: Input bytes read with the pure-Python bulk path before the compiled scanner takes over.
COMPILED_FROM = 8 << 20
_Header = tuple[bytes, bytes, bytes | None, bytes, int]  # comm, pid, tid, event, period
# The time of a sample header (perf script prints `` 123.456789: ``); the bulk reader checks there is
# exactly one per sample.  It starts with a literal space, which keeps the regex engine's scan fast.
_BULK_TIME = re.compile(rb" (\d+\.\d+): ")
_NOT_PARSED: tuple[Frame, ...] = (Frame("", "", False, False, False),)


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
        self._fed = 0
        self._known_keys: Any = None  # numpy arrays of the compiled path, made when it starts
        self._known_slots: Any = None
        self._slots: list[tuple[StackCount, int, bytes] | None] = []
        self._slot_counts: Any = None
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
            # Compiling the scanner's imports (numba, numpy) costs more than it saves on small inputs.
            if self._fed > COMPILED_FROM:
                self._blocks_bulk(data[: cut + 2])
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
        """comm, pid, tid, event and period of a header whose time was replaced by ``0.0``."""
        m = _HEADER.match(shape)
        if m is None:
            return None
        e = _EVENT.search(shape)
        if e is None:
            return (m.group(1), m.group(2), m.group(3), b"", 1)
        return (m.group(1), m.group(2), m.group(3), e.group(2), int(e.group(1)) if e.group(1) else 1)

    def _blocks_counted(self, data: bytes) -> None:
        """:meth:`_blocks_bulk` without the compiled scanner: times masked by ``re.subn``, ``Counter`` counts."""
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
            if any(p is _NOT_BULK for p in parsed):
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

    def _blocks_bulk(self, data: bytes) -> None:
        """The same as :meth:`_blocks` on whole samples (``data`` ends with a blank line), in bulk.

        Samples differ from each other mostly in their time: the compiled scanner
        (:func:`collectors.perf_scan.scan`) gives each sample a key that ignores its time, numpy
        counts the keys, and only samples with a key not seen before go through the per-sample code,
        which parses them and finds their line and verbatim header.  Chunks holding samples without
        exactly one time (no ``-g``, garbage, no times) go to :meth:`_blocks` whole.
        """
        import numpy as np

        from collectors.perf_scan import POW10, scan

        if self._known_keys is None:
            self._known_keys = np.empty(0, np.uint64)
            self._known_slots = np.empty(0, np.int64)
            self._slot_counts = np.zeros(0, np.int64)
        buf = np.frombuffer(data, dtype=np.uint8)
        starts, ends, keys, times, ntimes, nls = scan(buf, POW10)
        real = ends > starts
        if not np.all(ntimes[real] == 1):
            self._blocks(data)
            return
        piece_lines = self._line + np.concatenate(([0], np.cumsum(nls + 2)[:-1]))
        idx = np.flatnonzero(real)
        uniq, first, counts = np.unique(keys[idx], return_index=True, return_counts=True)
        known = self._known_keys
        pos = np.searchsorted(known, uniq)
        hit = pos < len(known)
        hit[hit] = known[pos[hit]] == uniq[hit]
        new = np.flatnonzero(~hit)
        new = new[np.argsort(first[new], kind="stable")]  # in the order they come, as the per-sample code
        if len(new):
            parsed = []
            for u in new:
                i = int(idx[first[u]])
                piece = data[starts[i] : ends[i]]
                got = self._bulk_parse(_BULK_TIME.sub(b" 0.0: ", piece), int(piece_lines[i]))
                if got is _NOT_BULK:
                    self._blocks(data)
                    return
                parsed.append((got, piece, int(piece_lines[i])))
            slots = np.empty(len(new), np.int64)
            for n, (got, piece, line) in enumerate(parsed):
                slots[n] = len(self._slots)
                if got is None:
                    self._slots.append(None)
                else:
                    self._slots.append(self._bulk_count(got, piece, line))  # type: ignore[arg-type]
            counts[new] -= 1  # the first occurrence was counted when it was parsed
            merged = np.concatenate((known, uniq[new]))
            order = np.argsort(merged, kind="stable")
            self._known_keys = merged[order]
            self._known_slots = np.concatenate((self._known_slots, slots))[order]
            pos = np.searchsorted(self._known_keys, uniq)
        slot_of = self._known_slots[pos]
        if len(self._slot_counts) < len(self._slots):
            grown = np.zeros(max(len(self._slots), 2 * len(self._slot_counts)), np.int64)
            grown[: len(self._slot_counts)] = self._slot_counts
            self._slot_counts = grown
        np.add.at(self._slot_counts, slot_of, counts)
        self._line = int(piece_lines[-1])
        timed = times[real]
        if len(timed):
            lo, hi = float(timed.min()), float(timed.max())
            if self._start is None or lo < self._start:
                self._start = lo
            if self._end is None or hi > self._end:
                self._end = hi

    def _flush_slots(self) -> None:
        """Add the bulk reader's counts of repeated samples to their stacks and events."""
        if self._slot_counts is None:
            return
        counts = self._slot_counts.tolist()
        for slot, n in zip(self._slots, counts, strict=False):
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
        if h is None or (body and not body[:1].isspace()):
            return _NOT_BULK
        return (start_line, body, h)

    def _bulk_count(
        self, parsed: tuple[int, bytes, _Header], piece: bytes, piece_line: int
    ) -> tuple[StackCount, int, bytes]:
        """Count the first occurrence of a new sample shape; its counter, period and event for the next ones."""
        start_line, body, (comm, pid, tid, event, period) = parsed
        header = piece.split(b"\n", start_line - piece_line + 1)[start_line - piece_line]
        self._events_raw[event] = self._events_raw.get(event, 0) + 1
        key = (comm, pid, tid, event, body)
        sc = self._counts.get(key)
        if sc is None:
            sc = self._counts[key] = StackCount(1, period, start_line, header.decode("utf-8", "replace"))
        else:
            sc.samples += 1
            sc.period += period
        return (sc, period, event)

    def _blocks(self, data: bytes, last: bool = False) -> None:
        if self._slots:
            # Keep the counts in order: what the bulk reader counted so far goes to the stacks first.
            self._flush_slots()
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
        parsed: dict[tuple[bytes, bool], tuple[tuple[Frame, ...], int]] = {}
        line_cache: dict[tuple[bytes, bool], tuple[Frame, ...] | None] = {}
        bad_bodies = 0
        for (comm, a, b, event, body), sc in self._counts.items():
            comm_s = comm.decode("utf-8", "surrogateescape")
            java = comm_s.startswith("java")
            got = parsed.get((body, java))
            if got is None:
                got = parsed[(body, java)] = _frames_of(body, java, line_cache)
            frames, bad = got
            if bad:
                bad_bodies += sc.samples
            # stackcollapse-perf.pl: one number is the tid (perf's default), two are pid/tid.
            thread = Thread(comm_s, None, int(a)) if b is None else Thread(comm_s, int(a), int(b))
            stacks.append(
                ProfileStack(
                    thread,
                    event.decode("utf-8", "replace"),
                    frames,
                    sc.samples,
                    sc.period,
                    sc.first_line,
                    sc.first_header,
                )
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
                tuple(Frame(n, "", n.endswith("_[k]"), n.endswith("_[j]"), n.endswith("_[i]")) for n in frames),
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


def _gunzip(chunks: Iterable[bytes], name: str) -> Iterator[bytes]:
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    for chunk in chunks:
        pending = chunk
        while pending:
            try:
                yield d.decompress(pending, 1 << 22)
            except zlib.error as exc:
                raise InputError(f"{name}: not valid gzip ({exc})", hint="give the file uncompressed") from None
            pending = d.unconsumed_tail
    if not d.eof:
        raise InputError(f"{name}: the gzip stream is cut short", hint="the file was truncated; copy it again")


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

        stream: Iterator[bytes] = rest()
        if first.startswith(GZIP_MAGIC):
            stream = _gunzip(stream, tracked.name)
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


__all__ = [
    "Frame",
    "Profile",
    "ProfileStack",
    "ScriptParser",
    "Thread",
    "find_perf",
    "parse_folded",
    "read_profile",
]


def perf_script_lines(path: Path, perf: str | None = None) -> list[str]:
    """The lines of ``perf script -i PATH``, for resolving the evidence of a perf.data input (sample locators)."""
    text = b"".join(perf_script_chunks(path, perf))
    return text.decode("utf-8", "replace").split("\n")
