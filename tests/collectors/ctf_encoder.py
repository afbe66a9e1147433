"""A CTF 1.8 writer for tests: random TSDL layouts as metadata text, and events encoded as stream files.

It shares no code with the reader: its own type model (:class:`TInt`, :class:`TEnum`, ...), its own
TSDL text, its own bit writer (CTF 1.8 section 4.1.5: a little-endian field fills bytes from their
least significant bit, a big-endian one from their most significant bit), so a decoder that agrees
with it agrees with the specification as written here, not with itself.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field, replace
from typing import Any

from hypothesis import strategies as st

MAGIC = 0xC1FC1FC1


@dataclass(frozen=True)
class TInt:
    size: int
    align: int
    signed: bool = False
    order: str = "native"  # native | le | be
    text: bool = False
    clock: bool = False


@dataclass(frozen=True)
class TEnum:
    base: TInt
    labels: tuple[tuple[str, int, int], ...]


@dataclass(frozen=True)
class TString:
    pass


@dataclass(frozen=True)
class TStruct:
    fields: tuple[tuple[str, Any], ...]
    min_align: int = 1


@dataclass(frozen=True)
class TArray:
    elem: Any
    length: int


@dataclass(frozen=True)
class TSeq:
    elem: Any
    length: str  # a preceding unsigned integer field of the same struct


@dataclass(frozen=True)
class TVariant:
    tag: str  # a preceding enum field of the same struct, one label per option
    options: tuple[tuple[str, Any], ...]


def align_of(t: Any) -> int:
    if isinstance(t, TInt):
        return t.align
    if isinstance(t, TEnum):
        return t.base.align
    if isinstance(t, TString):
        return 8
    if isinstance(t, TStruct):
        return max([t.min_align, *(align_of(ft) for _n, ft in t.fields)])
    if isinstance(t, TArray | TSeq):
        return align_of(t.elem)
    return 1


# -- TSDL text


def tsdl(t: Any) -> str:
    if isinstance(t, TInt):
        parts = [f"size = {t.size}", f"align = {t.align}", f"signed = {int(t.signed)}"]
        if t.order != "native":
            parts.append(f"byte_order = {t.order}")
        if t.text:
            parts.append("encoding = UTF8")
        if t.clock:
            parts.append("map = clock.monotonic.value")
        return "integer { " + "; ".join(parts) + "; }"
    if isinstance(t, TEnum):
        labels = ", ".join(f'"{n}" = {lo}' if lo == hi else f'"{n}" = {lo} ... {hi}' for n, lo, hi in t.labels)
        return f"enum : {tsdl(t.base)} {{ {labels} }}"
    if isinstance(t, TString):
        return "string"
    if isinstance(t, TStruct):
        body = " ".join(declare(n, ft) for n, ft in t.fields)
        return f"struct {{ {body} }}" + (f" align({t.min_align})" if t.min_align > 1 else "")
    if isinstance(t, TVariant):
        body = " ".join(declare(n, ft) for n, ft in t.options)
        return f"variant <{t.tag}> {{ {body} }}"
    raise TypeError(t)


def declare(name: str, t: Any) -> str:
    if isinstance(t, TArray):
        return f"{tsdl(t.elem)} {name}[{t.length}];" if not isinstance(t.elem, TArray | TSeq) else _wrapped(name, t)
    if isinstance(t, TSeq):
        return f"{tsdl(t.elem)} {name}[{t.length}];" if not isinstance(t.elem, TArray | TSeq) else _wrapped(name, t)
    return f"{tsdl(t)} {name};"


def _wrapped(name: str, t: TArray | TSeq) -> str:
    raise TypeError("nested arrays are written as arrays of structs")  # the strategies never make them


# -- values and encoding


class BitWriter:
    """Bits appended at increasing positions (CTF bit order)."""

    def __init__(self, big: bool) -> None:
        self.data = bytearray()
        self.pos = 0
        self.big = big  # the trace's native byte order

    def align(self, a: int) -> None:
        self.pos = (self.pos + a - 1) // a * a
        self._room()

    def _room(self) -> None:
        need = (self.pos + 7) // 8
        if len(self.data) < need:
            self.data.extend(b"\0" * (need - len(self.data)))

    def int(self, v: int, size: int, big: bool) -> None:
        v &= (1 << size) - 1
        for i in range(size):
            bit = (v >> (size - 1 - i)) & 1 if big else (v >> i) & 1
            p = self.pos + i
            self.pos_room(p)
            if bit:
                self.data[p // 8] |= (0x80 >> (p % 8)) if big else (1 << (p % 8))
        self.pos += size

    def pos_room(self, p: int) -> None:
        if len(self.data) <= p // 8:
            self.data.extend(b"\0" * (p // 8 + 1 - len(self.data)))

    def bytes(self, b: bytes) -> None:
        self.align(8)
        self.data[self.pos // 8 :] = b""
        self.data.extend(b)
        self.pos += 8 * len(b)


def big_of(t: TInt, trace_big: bool) -> bool:
    return trace_big if t.order == "native" else t.order == "be"


def encode(w: BitWriter, t: Any, v: Any) -> None:
    """Append value ``v`` of type ``t`` (values as the general decoder returns them)."""
    if isinstance(t, TEnum):
        encode(w, t.base, v)
    elif isinstance(t, TInt):
        w.align(t.align)
        w.int(v, t.size, big_of(t, w.big))
    elif isinstance(t, TString):
        w.bytes(v.encode() + b"\0")
    elif isinstance(t, TStruct):
        w.align(align_of(t))
        for name, ft in t.fields:
            encode(w, ft, v[name.removeprefix("_")])
    elif isinstance(t, TArray | TSeq):
        w.align(align_of(t.elem))
        if isinstance(t.elem, TInt) and t.elem.text:
            data = v.encode()
            n = t.length if isinstance(t, TArray) else len(data)
            for b in data.ljust(n, b"\0"):
                encode(w, t.elem, b)
        else:
            for item in v:
                encode(w, t.elem, item)
    elif isinstance(t, TVariant):
        ((name, value),) = v.items()
        ft = dict((n.removeprefix("_"), ft) for n, ft in t.options)[name]
        encode(w, ft, value)
    else:
        raise TypeError(t)


# -- strategies: types


def ints(text_ok: bool = True) -> st.SearchStrategy[TInt]:
    def make(size: int, bytewise: bool, signed: bool, order: str, align_pow: int) -> TInt:
        if bytewise:
            size = max(8, size // 8 * 8)
            align = max(8, min(64, 1 << align_pow))
        else:
            align = 1 << min(align_pow, 3) if align_pow < 3 else 1
            order = "native"  # the byte order changes only between whole bytes (CTF 1.8 section 4.1.5)
        return TInt(size, align, signed, order)

    return st.builds(
        make,
        st.integers(1, 64),
        st.booleans(),
        st.booleans(),
        st.sampled_from(["native", "le", "be"]),
        st.integers(0, 6),
    )


@st.composite
def structs(draw: st.DrawFn, depth: int = 0) -> TStruct:
    """A struct of 1-5 members; sequences and variants get their length and tag fields just before them."""
    members: list[tuple[str, Any]] = []
    for k in range(draw(st.integers(1, 5 if depth == 0 else 3))):
        kinds = ["int", "int", "string", "enum", "array", "text"]
        if depth < 2:
            kinds += ["struct", "seq", "variant", "seqstruct"]
        kind = draw(st.sampled_from(kinds))
        name = f"_f{k}" if k % 3 == 0 else f"f{k}"
        if kind == "int":
            members.append((name, draw(ints())))
        elif kind == "string":
            members.append((name, TString()))
        elif kind == "text":
            members.append((name, TArray(TInt(8, 8, True, text=True), draw(st.integers(0, 6)))))
        elif kind == "enum":
            base = replace(draw(ints()), signed=False)
            members.append((name, TEnum(base, (("zero", 0, 0), ("one", 1, 1)))))
        elif kind == "array":
            members.append((name, TArray(draw(ints()), draw(st.integers(0, 4)))))
        elif kind == "struct":
            members.append((name, draw(structs(depth + 1))))
        elif kind in ("seq", "seqstruct"):
            length = f"f{k}_len"
            members.append((length, TInt(draw(st.sampled_from([8, 16, 32])), 8, False)))
            elem = draw(ints()) if kind == "seq" else draw(structs(depth + 1))
            members.append((name, TSeq(elem, length)))
        else:
            tag = f"f{k}_tag"
            n = draw(st.integers(1, 3))
            base = TInt(draw(st.sampled_from([3, 8])), draw(st.sampled_from([1, 8])), False)
            # Option k is selected by tag values 2k and 2k+1 (one label, one range each).
            members.append((tag, TEnum(base, tuple((f"o{j}", 2 * j, 2 * j + 1) for j in range(n)))))
            opts = tuple((f"o{j}", draw(st.one_of(ints(), structs(depth + 1), st.just(TString())))) for j in range(n))
            members.append((name, TVariant(tag, opts)))
    min_align = draw(st.sampled_from([1, 1, 8, 32]))
    return TStruct(tuple(members), min_align)


# -- strategies: values


def values(draw: st.DrawFn, t: Any, scope: dict[str, Any] | None = None) -> Any:
    if isinstance(t, TEnum):
        return draw(st.sampled_from([lo for _n, lo, _hi in t.labels if lo < 1 << t.base.size] or [0]))
    if isinstance(t, TInt):
        if t.text:
            return draw(st.integers(32, 126))
        lo, hi = (-(1 << (t.size - 1)), (1 << (t.size - 1)) - 1) if t.signed else (0, (1 << t.size) - 1)
        return draw(st.integers(lo, hi))
    if isinstance(t, TString):
        return draw(st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=8))
    if isinstance(t, TStruct):
        out: dict[str, Any] = {}
        fields = dict(t.fields)
        for name, ft in t.fields:
            key = name.removeprefix("_")
            if key in out:
                continue
            if isinstance(ft, TSeq):
                n = draw(st.integers(0, 3))
                out[ft.length.removeprefix("_")] = n
                out[key] = [values(draw, ft.elem) for _ in range(n)]
            elif isinstance(ft, TVariant):
                tag_t = fields[ft.tag]
                j = draw(st.integers(0, len(ft.options) - 1))
                out[ft.tag.removeprefix("_")] = 2 * j + draw(st.integers(0, 1))
                oname, otype = ft.options[j]
                out[key] = {oname.removeprefix("_"): values(draw, otype)}
                assert isinstance(tag_t, TEnum)
            elif isinstance(ft, TArray) and isinstance(ft.elem, TInt) and ft.elem.text:
                out[key] = draw(st.text(st.characters(min_codepoint=33, max_codepoint=126), max_size=ft.length))
            elif isinstance(ft, TArray):
                out[key] = [values(draw, ft.elem) for _ in range(ft.length)]
            else:
                out[key] = values(draw, ft)
        return {name.removeprefix("_"): out[name.removeprefix("_")] for name, _ft in t.fields}
    raise TypeError(t)


# -- a whole trace


@dataclass
class Trace:
    metadata: str
    stream: bytes
    events: list[tuple[int, int, dict[str, Any]]] = field(default_factory=list)  # (id, clock, payload)


UINT = "integer { size = %d; align = %d; signed = 0; }"


def make_trace(
    big: bool, compact: bool, payloads: list[TStruct], events: list[tuple[int, int, Any]], per_packet: int
) -> Trace:
    """The metadata and one stream file holding ``events`` (event id, clock delta, payload value).

    ``compact``: LTTng's event header (5-bit id, 27-bit clock, extended form for ids >= 31 and large
    clock steps), else a plain one (32-bit id, 64-bit clock).
    """
    order = "be" if big else "le"
    lines = [
        "/* CTF 1.8 */",
        f"trace {{ major = 1; minor = 8; byte_order = {order};",
        f"  packet.header := struct {{ {UINT % (32, 8)} magic; {UINT % (32, 8)} stream_id; }}; }};",
        'env { domain = "ust"; tracer_name = "kforensic-test"; };',
        'clock { name = "monotonic"; freq = 1000000000; offset = 0; };',
        f"typealias {UINT % (64, 8)} := uint64_t;",
        "typealias integer { size = 64; align = 8; signed = 0; map = clock.monotonic.value; } := clk64_t;",
        "typealias integer { size = 27; align = 1; signed = 0; map = clock.monotonic.value; } := clk27_t;",
    ]
    if compact:
        header = (
            "struct { enum : integer { size = 5; align = 1; signed = 0; } { compact = 0 ... 30, extended = 31 } id;"
            " variant <id> { struct { clk27_t timestamp; } compact;"
            f" struct {{ {UINT % (32, 8)} id; clk64_t timestamp; }} align(8) extended; }} v; }} align(8)"
        )
    else:
        header = f"struct {{ {UINT % (32, 32)} id; clk64_t timestamp; }}"
    lines.append(
        "stream { id = 0; event.header := " + header + ";"
        " packet.context := struct { uint64_t timestamp_begin; uint64_t timestamp_end; uint64_t content_size;"
        " uint64_t packet_size; uint64_t events_discarded; " + UINT % (32, 8) + " cpu_id; }; };"
    )
    for eid, p in enumerate(payloads):
        lines.append(f'event {{ name = "ev{eid}"; id = {eid}; stream_id = 0; fields := {tsdl(p)}; }};')
    out = bytearray()
    clock = 1000
    kept: list[tuple[int, int, Any]] = []
    for start in range(0, max(len(events), 1), per_packet):
        chunk = events[start : start + per_packet]
        w = BitWriter(big)
        w.int(MAGIC, 32, big)
        w.int(0, 32, big)
        ctx_at = w.pos
        for _ in range(6):
            w.int(0, 64 if _ < 5 else 32, big)
        begin = clock
        last = clock
        for eid, delta, payload in chunk:
            clock += delta
            w.align(8 if compact else 32)
            if compact:
                if eid < 31 and clock - last < 1 << 27:
                    w.int(eid, 5, big)
                    w.int(clock & ((1 << 27) - 1), 27, big)
                else:
                    w.int(31, 5, big)
                    w.align(8)
                    w.int(eid, 32, big)
                    w.int(clock, 64, big)
            else:
                w.int(eid, 32, big)
                w.int(clock, 64, big)
            encode(w, payloads[eid], payload)
            kept.append((eid, clock, payload))
            last = clock
        content = w.pos
        # Packets keep 64-bit alignment (real ones are pages); some are padded after their content.
        size = (content + 63) // 64 * 64 + 64 * (len(chunk) % 3)
        w.pos = ctx_at
        for v, bits in ((begin, 64), (clock, 64), (content, 64), (size, 64), (0, 64), (0, 32)):
            w.int(v, bits, big)
        data = bytes(w.data).ljust(size // 8, b"\0")
        out += data
    return Trace("\n".join(lines) + "\n", bytes(out), kept)


def pack_u32(v: int, big: bool) -> bytes:
    return struct.pack(">I" if big else "<I", v)
