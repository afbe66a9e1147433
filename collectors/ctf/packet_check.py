"""Whether a stream file is one of its metadata's: its first packet's header and context read as a CTF reader must.

A stream file beside another trace's ``metadata`` (copied over it, or a trace directory assembled from two
recordings) decodes into garbage: the fields sit at other offsets, and a discard counter read from the wrong
bytes said "25,769,803,776 events lost (100%)" of another host (review 11 #6).  babeltrace2 refuses such a
trace; so does this check, before anything is decoded, with what does not match (CTF 1.8 section 5: the
packet header's ``magic`` is 0xC1FC1FC1, its ``uuid`` the trace's, its ``stream_id`` a declared stream class;
the packet context's ``content_size`` is at most its ``packet_size``, and both hold the header).

Only fixed-size leading fields are read (integers, enums, arrays of bytes): the fields CTF places first.
"""

from __future__ import annotations

import uuid as uuidlib

from collectors.ctf.metadata import (
    PACKET_MAGIC,
    ArrayType,
    CtfType,
    EnumType,
    IntType,
    Metadata,
    StructType,
)

#: The bytes of a stream file read for its first packet's header and context (LTTng's are under 100 bytes).
FIRST_PACKET_BYTES = 4096


def _align_of(t: CtfType) -> int:
    """The alignment (bits) of a field of type ``t`` (a struct: its largest field's, at least its own)."""
    if isinstance(t, IntType):
        return t.align
    if isinstance(t, EnumType):
        return t.base.align
    if isinstance(t, ArrayType):
        return _align_of(t.elem)
    if isinstance(t, StructType):
        return max([t.min_align, *(_align_of(f) for _n, f in t.fields)])
    return 8


def _fixed_fields(struct: StructType, data: bytes, bit: int, big: bool) -> tuple[dict[str, int | bytes], int]:
    """The leading fixed-size fields of ``struct`` read from bit ``bit`` of ``data`` (an integer or enum as its
    value, an array of 8-bit integers as its bytes), up to the first field of another kind; and the bit after the
    struct (-1 when a field was not read)."""
    out: dict[str, int | bytes] = {}
    bit += -bit % _align_of(struct)
    for name, t in struct.fields:
        base = t.base if isinstance(t, EnumType) else t
        if isinstance(base, IntType) and base.size % 8 == 0 and base.align % 8 == 0 and base.size <= 64:
            bit += -bit % base.align
            end = bit + base.size
            if end > len(data) * 8:
                return out, -1
            raw = data[bit // 8 : end // 8]
            out[name] = int.from_bytes(raw, "big" if base.big_endian else "little")
            bit = end
        elif isinstance(t, ArrayType) and isinstance(t.elem, IntType) and t.elem.size == 8 and t.elem.align % 8 == 0:
            bit += -bit % t.elem.align
            end = bit + 8 * t.length
            if end > len(data) * 8:
                return out, -1
            out[name] = data[bit // 8 : end // 8]
            bit = end
        else:
            return out, -1
    return out, bit


def foreign_packet(meta: Metadata, data: bytes) -> str | None:
    """What in the first packet of a stream file (its first bytes ``data``) contradicts ``meta``; None when
    nothing does (or nothing could be read: an empty file is said elsewhere)."""
    if not data or meta.packet_header is None:
        return None
    header, bit = _fixed_fields(meta.packet_header, data, 0, meta.big_endian)
    magic = header.get("magic")
    if isinstance(magic, int) and magic != PACKET_MAGIC:
        return f"its first packet starts with {magic:#010x}, not the CTF magic number {PACKET_MAGIC:#010x}"
    got = header.get("uuid")
    if isinstance(got, bytes) and len(got) == 16 and meta.uuid:
        try:
            want = uuidlib.UUID(meta.uuid)
        except ValueError:
            want = None
        if want is not None and got != want.bytes:
            return f"its packets carry trace uuid {uuidlib.UUID(bytes=got)}, the metadata's is {want}"
    sid = header.get("stream_id", 0 if "stream_id" not in dict(meta.packet_header.fields) else None)
    if not isinstance(sid, int):
        return None
    sc = meta.streams.get(sid)
    if sc is None:
        declared = ", ".join(map(str, sorted(meta.streams))) or "none"
        return (
            f"its first packet names stream class {sid}, which the metadata does not declare (it declares {declared})"
        )
    if sc.packet_context is None or bit < 0:
        return None
    context, end = _fixed_fields(sc.packet_context, data, bit, meta.big_endian)
    size, content = context.get("packet_size"), context.get("content_size")
    if isinstance(size, int) and isinstance(content, int) and not (max(end, 1) <= content <= size):
        return (
            f"its first packet's sizes are impossible (content {content:,} bits, packet {size:,} bits, "
            f"its header and context {end:,} bits)"
        )
    return None
