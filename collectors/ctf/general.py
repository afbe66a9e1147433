"""The general CTF 1.8 decoder: every layout TSDL allows, in plain Python, one event at a time.

:mod:`collectors.ctf.decode` runs compiled programs for speed; this module
walks the metadata types themselves (integers and enums of any size at any
bit offset and alignment, either byte order; floats; strings; structs;
variants selected by their enum tag; arrays and sequences of anything,
nested).  It is used for the packets whose events the compiled programs
cannot express (:attr:`~collectors.ctf.decode.Layouts.general`), and the
tests run both decoders on the same streams and compare them.

Each event comes back twice: as values (a tree of ``int``, ``float``,
``str``, ``dict`` and ``list``; a variant is ``{option: value}``; an array or
sequence of 8-bit text integers is a ``str``) and as *flat* values, the
convention of the compiled registers: ``path -> int`` with ``.`` between
struct members and ``[]`` for the element of an array (the last one decoded),
a string or array as its byte offset in the buffer with ``path#len``.

Damage is a :class:`DecodeError` naming the event and the byte offset; never
a guessed position.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from collectors.ctf.layouts import MAX_EMPTY, align_of, field_name, min_bits, resolve_path, strip, variant_ranges
from collectors.ctf.metadata import (
    PACKET_MAGIC,
    ArrayType,
    CtfType,
    EnumType,
    FloatType,
    IntType,
    Metadata,
    SequenceType,
    StringType,
    StructType,
    VariantType,
)

Buffer = bytes | bytearray | memoryview | npt.NDArray[np.uint8]


class DecodeError(Exception):
    """A stream that does not decode with its metadata: what, where (byte offset) and which event."""

    def __init__(self, what: str, offset: int, event: str = "") -> None:
        super().__init__(f"{what}{f' in event {event}' if event else ''} at byte {offset}")
        self.what = what
        self.offset = offset
        self.event = event


@dataclass
class Event:
    """One decoded event."""

    offset: int  # byte offset of its header in the stream file
    stream_id: int
    id: int
    name: str
    cycles: int  # the clock value (extended from the N-bit header field, CTF 1.8 section 8)
    header: dict[str, Any]
    context: dict[str, Any]  # the stream's event context, then the event's own context
    fields: dict[str, Any]
    flat: dict[str, int]  # context and payload, as the compiled registers (see the module docstring)
    end: int  # bit position after it


@dataclass
class Packet:
    """One decoded packet."""

    offset: int
    stream_id: int
    header: dict[str, int]  # packet header and context, flat
    content_bits: int
    packet_bits: int
    events: list[Event] = field(default_factory=list)
    # A packet the file ends inside, read with ``salvage``: the byte where its first event not read starts
    # (its events that end before the cut are ``events``); -1: the whole packet is in the file.
    cut_at: int = -1

    @property
    def next_offset(self) -> int:
        """Byte offset of the next packet."""
        return self.offset + self.packet_bits // 8


class _Cursor:
    """A bit position in a buffer, with the clock (N-bit timestamps extended from the last value)."""

    def __init__(self, buf: bytes, pos: int, limit: int) -> None:
        self.buf = buf
        self.pos = pos
        self.limit = limit
        self.clock = 0
        self.clock_fields: list[tuple[int, int]] | None = None  # (bit position, bits) of clock values read

    def align(self, a: int) -> None:
        if a > 1:
            self.pos = (self.pos + a - 1) // a * a

    def need(self, bits: int, what: str) -> None:
        if self.pos + bits > self.limit:
            raise DecodeError(f"{what} runs past the end of the packet content", self.pos // 8)

    def read_int(self, t: IntType) -> int:
        self.align(t.align)
        self.need(t.size, f"a {t.size}-bit integer")
        v = read_bits(self.buf, self.pos, t.size, t.signed, t.big_endian)
        self.pos += t.size
        if t.clock is not None:
            self.extend_clock(v, t.size)
            if self.clock_fields is not None:
                self.clock_fields.append((self.pos - t.size, t.size))
        return v

    def extend_clock(self, v: int, size: int) -> None:
        if size >= 64:
            self.clock = v
            return
        mask = (1 << size) - 1
        new = (self.clock & ~mask) | (v & mask)
        if (v & mask) < (self.clock & mask):
            new += mask + 1
        self.clock = new


def read_bits(buf: bytes, bitpos: int, size: int, signed: bool, big: bool) -> int:
    """The ``size``-bit integer at ``bitpos`` (CTF 1.8: little endian fills a byte from its least
    significant bit, big endian from its most significant bit)."""
    byte, shift = divmod(bitpos, 8)
    nbytes = (shift + size + 7) // 8
    chunk = buf[byte : byte + nbytes]
    v = int.from_bytes(chunk, "big") >> (nbytes * 8 - shift - size) if big else int.from_bytes(chunk, "little") >> shift
    v &= (1 << size) - 1
    if signed and size and v >> (size - 1):
        v -= 1 << size
    return v


def as_int64(v: int) -> int:
    """``v`` as the compiled decoder keeps it (int64: a 64-bit unsigned value is read as its bits)."""
    return v - (1 << 64) if v >= 1 << 63 else v


def _is_text(t: CtfType) -> bool:
    return isinstance(t, IntType) and t.text and t.size == 8


class _Walker:
    """Decodes one scope (header, context or payload) into values and flat values."""

    def __init__(self, cur: _Cursor, flat: dict[str, int]) -> None:
        self.cur = cur
        self.flat = flat
        self.enums: dict[str, EnumType] = {}

    def value(self, t: CtfType, path: str) -> Any:
        cur = self.cur
        if isinstance(t, EnumType):
            self.enums[path] = t
            v = cur.read_int(t.base)
            self.flat[path] = as_int64(v)
            return v
        if isinstance(t, IntType):
            v = cur.read_int(t)
            self.flat[path] = as_int64(v)
            return v
        if isinstance(t, FloatType):
            cur.align(t.align)
            cur.need(t.size, f"a {t.size}-bit float")
            raw = read_bits(cur.buf, cur.pos, t.size, False, t.big_endian) & ((1 << t.size) - 1)
            cur.pos += t.size
            if t.size == 32:
                return struct.unpack("<f", raw.to_bytes(4, "little"))[0]
            if t.size == 64:
                return struct.unpack("<d", raw.to_bytes(8, "little"))[0]
            return raw
        if isinstance(t, StringType):
            cur.align(8)
            start = cur.pos // 8
            end = cur.buf.find(b"\0", start, cur.limit // 8)
            if end < 0:
                raise DecodeError("a string runs past the end of the packet content", start)
            self.flat[path] = start
            self.flat[path + "#len"] = end - start
            cur.pos = (end + 1) * 8
            return cur.buf[start:end].decode("utf-8", "replace")
        if isinstance(t, StructType):
            cur.align(align_of(t))
            out: dict[str, Any] = {}
            for name, ft in t.fields:
                out[strip(name)] = self.value(ft, f"{path}.{strip(name)}" if path else strip(name))
            return out
        if isinstance(t, ArrayType | SequenceType):
            return self.array(t, path)
        if isinstance(t, VariantType):
            tag_path = resolve_path(self.enums, path, field_name(t.tag))
            if tag_path is None:
                raise DecodeError(f"variant {path}: its tag {t.tag} is not an enum decoded before it", cur.pos // 8)
            tag = self.flat[tag_path]
            for name, ft, lo, hi in variant_ranges(self.enums[tag_path], t):
                if lo <= tag <= hi:
                    return {strip(name): self.value(ft, f"{path}.{strip(name)}")}
            raise DecodeError(f"variant {path}: tag value {tag} selects none of its options", cur.pos // 8)
        raise DecodeError(f"type of {path} not known", cur.pos // 8)

    def array(self, t: ArrayType | SequenceType, path: str) -> Any:
        cur = self.cur
        if isinstance(t, ArrayType):
            n = t.length
        else:
            where = resolve_path(self.flat, path, field_name(t.length))
            if where is None:
                raise DecodeError(
                    f"sequence {path}: its length field {t.length} was not decoded before it", cur.pos // 8
                )
            n = self.flat[where]
        cur.align(align_of(t.elem))
        least = min_bits(t.elem)
        if n < 0 or (n * least > cur.limit - cur.pos if least else n > MAX_EMPTY):
            raise DecodeError(f"{path}: {n} elements cannot fit in the packet", cur.pos // 8)
        self.flat[path] = cur.pos // 8
        self.flat[path + "#len"] = n
        elem = t.elem
        base = elem.base if isinstance(elem, EnumType) else elem
        if isinstance(base, IntType) and base.size % 8 == 0 and base.align % 8 == 0 and base.size % base.align == 0:
            # Whole-byte integers: one slice (an array of text bytes is a string, up to its first NUL).
            size = base.size // 8
            cur.need(n * base.size, f"{path} ({n} elements)")
            raw = bytes(cur.buf[cur.pos // 8 : cur.pos // 8 + n * size])
            cur.pos += n * base.size
            if _is_text(base):
                return raw.split(b"\0", 1)[0].decode("utf-8", "replace")
            order: Literal["big", "little"] = "big" if base.big_endian else "little"
            return [int.from_bytes(raw[k : k + size], order, signed=base.signed) for k in range(0, len(raw), size)]
        return [self.value(elem, path + "[]") for _k in range(n)]


class GeneralDecoder:
    """Decodes the packets of one trace's stream files with its metadata."""

    def __init__(self, meta: Metadata) -> None:
        self.meta = meta

    def packet(
        self, buf: Buffer, offset: int, clock_fields: list[tuple[int, int]] | None = None, salvage: bool = False
    ) -> Packet:
        """The packet at byte ``offset`` of ``buf`` (a whole stream file), all its events decoded.

        ``clock_fields`` receives the bit position and size of every clock value read (packet context
        and event headers): what a tool that shifts a trace in time rewrites.  ``salvage``: a packet the
        file ends inside gives the events that end before the cut, and ``cut_at`` (else DecodeError).
        """
        data = buf if isinstance(buf, bytes) else bytes(buf)
        pk, cur = self._open(data, offset, clock_fields, salvage)
        while cur.pos < cur.limit:
            start = cur.pos
            try:
                ev = self._event(cur, pk.stream_id)
            except DecodeError:
                if pk.cut_at < 0:
                    raise
                cur.pos = start  # the event the cut goes through: not read (as the compiled decoder)
                break
            if ev is None:
                break
            pk.events.append(ev)
        if pk.cut_at >= 0:
            pk.cut_at = cur.pos // 8
        return pk

    def first_clock(self, buf: Buffer, offset: int) -> int | None:
        """The clock value of the first event of the packet at byte ``offset`` of ``buf``, read from its header
        alone (events without a header are at the packet's ``timestamp_begin``); None when it holds no event.
        A packet the file ends inside is read up to the cut."""
        data = buf if isinstance(buf, bytes) else bytes(buf)
        pk, cur = self._open(data, offset, None, salvage=True)
        sc = self.meta.streams[pk.stream_id]
        start = cur.pos
        if start >= cur.limit:
            return None
        if sc.header is not None:
            try:
                _Walker(cur, {}).value(sc.header, "")
            except DecodeError as exc:
                if cur.limit - start < 64:
                    return None  # only the padding at the end of the content
                raise DecodeError(f"event header: {exc.what}", exc.offset) from None
        return cur.clock

    def _open(
        self, data: bytes, offset: int, clock_fields: list[tuple[int, int]] | None, salvage: bool = False
    ) -> tuple[Packet, _Cursor]:
        """The packet at ``offset``: its header and context read, the cursor at its first event (``salvage``: a
        packet the file ends inside is read up to the cut, ``cut_at`` set, instead of a DecodeError)."""
        meta = self.meta
        size_bits = len(data) * 8
        cur = _Cursor(data, offset * 8, size_bits)
        cur.clock_fields = clock_fields
        flat: dict[str, int] = {}
        w = _Walker(cur, flat)
        try:
            if meta.packet_header is not None:
                w.value(meta.packet_header, "")
            magic = flat.get("magic")
            if magic is not None and magic & 0xFFFFFFFF != PACKET_MAGIC:
                raise DecodeError("a packet does not start with the CTF magic number", offset)
            sid = flat.get("stream_id", 0)
            sc = meta.streams.get(sid)
            if sc is None:
                raise DecodeError(f"a packet names stream class {sid}, which the metadata does not declare", offset)
            if sc.packet_context is not None:
                w.value(sc.packet_context, "")
        except DecodeError as exc:
            raise DecodeError(f"packet header: {exc.what}", exc.offset) from None
        packet_bits = flat.get("packet_size", size_bits - offset * 8)
        content_bits = flat.get("content_size", packet_bits)
        if packet_bits <= 0 or content_bits > packet_bits:
            raise DecodeError("a packet's sizes are inconsistent", offset)
        cut = offset * 8 + packet_bits > size_bits
        if cut and not salvage:
            raise DecodeError("the file ends inside a packet (truncated stream file)", offset)
        pk = Packet(offset, sid, dict(flat), content_bits, packet_bits, cut_at=offset if cut else -1)
        cur.limit = min(offset * 8 + content_bits, size_bits)
        cur.clock = flat.get("timestamp_begin", 0)
        return pk, cur

    def _event(self, cur: _Cursor, sid: int) -> Event | None:
        meta = self.meta
        sc = meta.streams[sid]
        start = cur.pos
        hflat: dict[str, int] = {}
        header: dict[str, Any] = {}
        if sc.header is not None:
            try:
                header = _Walker(cur, hflat).value(sc.header, "")
            except DecodeError as exc:
                if cur.limit - start < 64:
                    return None  # no whole header fits: the padding at the end of the content
                raise DecodeError(f"event header: {exc.what}", exc.offset) from None
        eid = hflat.get("v.extended.id", hflat.get("id", 0))
        ec = meta.events.get((sid, eid))
        if ec is None:
            raise DecodeError(f"event id {eid} is not declared by the metadata", start // 8)
        flat: dict[str, int] = {}
        w = _Walker(cur, flat)
        context: dict[str, Any] = {}
        try:
            if sc.event_context is not None:
                context.update(w.value(sc.event_context, ""))
            if ec.context is not None:
                context.update(w.value(ec.context, ""))
            fields = w.value(ec.fields, "")
        except DecodeError as exc:
            raise DecodeError(exc.what, exc.offset, ec.name) from None
        return Event(start // 8, sid, eid, ec.name, cur.clock, header, context, fields, flat, cur.pos)


def decode_stream(meta: Metadata, buf: Buffer) -> list[Packet]:
    """Every packet of a stream file (tests and checks; the reader decodes packet by packet)."""
    data = buf if isinstance(buf, bytes) else bytes(buf)
    dec = GeneralDecoder(meta)
    out: list[Packet] = []
    pos = 0
    while pos < len(data):
        pk = dec.packet(data, pos)
        out.append(pk)
        pos = pk.next_offset
    return out
