"""The CTF 1.8 metadata of an LTTng trace: TSDL text to typed layouts.

A CTF trace directory holds a ``metadata`` file (TSDL text, plain or in
metadata packets, told by the packet magic) and one binary file per stream.
This module reads the TSDL that LTTng writes (lttng-modules and lttng-ust,
2.x): ``typealias``, ``trace``, ``env``, ``clock``, ``stream``, ``event``, and
the types ``integer``, ``floating_point``, ``string``, ``enum``, ``struct``,
``variant``, arrays and sequences.  Anything else is an :class:`InputError`
naming the file and the token (never a guess).
"""

from __future__ import annotations

import pickle
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path

from forensics.errors import InputError

METADATA_MAGIC = 0x75D11D57  # a metadata packet (CTF 1.8 section 7.1)
PACKET_MAGIC = 0xC1FC1FC1  # a stream packet


#: The largest ids and fixed array length the metadata may declare (LTTng numbers events and streams from 0, a
#: few thousand at most; an array is a field of a record, bytes of it at most a packet's).
_MAX_EVENT_ID = (1 << 20) - 1
_MAX_STREAM_ID = (1 << 16) - 1
_MAX_ARRAY = 1 << 32


@dataclass(frozen=True)
class IntType:
    """An integer field (also the base of enums; ``clock`` names the clock it maps to)."""

    size: int
    align: int
    signed: bool
    big_endian: bool
    clock: str | None = None
    text: bool = False  # encoding UTF8/ASCII: an array of these is a string


@dataclass(frozen=True)
class FloatType:
    """A floating-point field (skipped by the decoder; its size and alignment matter)."""

    size: int
    align: int
    big_endian: bool


@dataclass(frozen=True)
class StringType:
    """A NUL-terminated string."""


@dataclass(frozen=True)
class EnumType:
    """An integer with labels (``label -> (lo, hi)``)."""

    base: IntType
    labels: tuple[tuple[str, int, int], ...]

    def range_of(self, label: str) -> tuple[int, int] | None:
        """The values of ``label``."""
        for name, lo, hi in self.labels:
            if name == label:
                return lo, hi
        return None


@dataclass(frozen=True)
class StructType:
    """Named fields in order."""

    fields: tuple[tuple[str, CtfType], ...]
    min_align: int = 1


@dataclass(frozen=True)
class VariantType:
    """One of several types, chosen by an enum field (``tag``)."""

    tag: str
    options: tuple[tuple[str, CtfType], ...]


@dataclass(frozen=True)
class ArrayType:
    """A fixed number of elements."""

    elem: CtfType
    length: int


@dataclass(frozen=True)
class SequenceType:
    """Elements counted by an earlier integer field (``length`` names it)."""

    elem: CtfType
    length: str


CtfType = IntType | FloatType | StringType | EnumType | StructType | VariantType | ArrayType | SequenceType


@dataclass(frozen=True)
class Clock:
    """A clock class: name, frequency (Hz) and offset from the Epoch (``offset_s`` s + ``offset`` cycles)."""

    name: str
    freq: int = 1_000_000_000
    offset_s: int = 0
    offset: int = 0
    uuid: str = ""
    description: str = ""
    absolute: bool = False  # ``absolute = TRUE``: its origin is the Unix epoch

    @property
    def epoch_offset_ns(self) -> int:
        """Nanoseconds from the Epoch to the clock's zero."""
        return self.offset_s * 1_000_000_000 + self.offset * 1_000_000_000 // self.freq


@dataclass(frozen=True)
class EventClass:
    """One event type of a stream class."""

    id: int
    name: str
    stream_id: int
    fields: StructType
    context: StructType | None = None


@dataclass(frozen=True)
class StreamClass:
    """One stream class: its event header, packet context and per-event context layouts."""

    id: int
    header: StructType | None
    packet_context: StructType | None
    event_context: StructType | None


@dataclass
class Metadata:
    """A parsed ``metadata`` file."""

    path: Path
    big_endian: bool = False
    packet_header: StructType | None = None
    uuid: str = ""
    env: dict[str, str | int] = field(default_factory=dict)
    clocks: dict[str, Clock] = field(default_factory=dict)
    streams: dict[int, StreamClass] = field(default_factory=dict)
    events: dict[tuple[int, int], EventClass] = field(default_factory=dict)  # (stream id, event id)
    version: tuple[int, int] = (1, 8)

    @property
    def domain(self) -> str:
        """``kernel`` or ``ust`` (LTTng's ``env.domain``), else ``unknown``."""
        return str(self.env.get("domain", "unknown"))

    @property
    def tracer(self) -> tuple[str, int, int]:
        """The tracer name and version from ``env``."""
        major, minor = self.env.get("tracer_major", 0), self.env.get("tracer_minor", 0)
        return (
            str(self.env.get("tracer_name", "unknown")),
            major if isinstance(major, int) else 0,
            minor if isinstance(minor, int) else 0,
        )

    # Pickled (collectors/ctf/parsed.py keeps a parsed metadata file per user), ``events`` is one bytes object,
    # unpickled when first read: only the general decoder reads it after the layouts are compiled, and a session
    # that needs no general decoding never does.  LTTng's kernel metadata (``--syscall -a``) declares 1218
    # events: 1.5 MB of objects that stayed resident through every run (x44 benchmark session), 0.2 MB so.
    def __getstate__(self) -> dict[str, object]:
        state = dict(self.__dict__)
        if "events" in state:
            state["events"] = pickle.dumps(state["events"], protocol=pickle.HIGHEST_PROTOCOL)
        else:  # (never read since it was unpickled: still its bytes)
            state["events"] = state.pop("_events_pickled")
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        events = state.pop("events")
        self.__dict__.update(state)
        self._events_pickled = events

    def __getattr__(self, name: str) -> object:  # (called only for an attribute not set: ``events`` once loaded)
        if name == "events" and "_events_pickled" in self.__dict__:
            self.events = pickle.loads(self.__dict__.pop("_events_pickled"))
            return self.events
        raise AttributeError(name)


_TOKEN = re.compile(
    r"""\s+|//[^\n]*|/\*.*?\*/
    |(?P<str>"(?:[^"\\]|\\.)*")
    |(?P<num>-?(?:0[xX][0-9a-fA-F]+|\d+))(?:[uUlL]*)
    |(?P<id>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)
    |(?P<op>:=|\.\.\.|[{}\[\]();=:,<>+\-*])""",
    re.S | re.X,
)


# The same tokens as _TOKEN in one findall (no groups: a list of strings), comments and number suffixes
# dropped after; anything else is one character (the last alternative), handed to _TOKEN for the error.
_FAST_TOKEN = re.compile(
    r"""/\*.*?\*/|//[^\n]*|"(?:[^"\\]|\\.)*"|-?(?:0[xX][0-9a-fA-F]+|\d+)[uUlL]*
    |[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*|:=|\.\.\.|[{}\[\]();=:,<>+\-*]|\S""",
    re.S | re.X,
)
_ONE_CHAR = frozenset("{}[]();=:,<>+-*_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _tokens(text: str, path: Path) -> list[str]:
    """The TSDL tokens of ``text`` (LTTng's 350 KB kernel metadata: 0.035 s, half the time of _TOKEN alone)."""
    out = []
    for found in _FAST_TOKEN.findall(text):
        first = found[0]
        if first == "/" or (len(found) == 1 and found not in _ONE_CHAR):
            if found.startswith(("/*", "//")):
                continue
            return _tokens_checked(text, path)  # not a token: _TOKEN says where
        out.append(found.rstrip("uUlL") if first in "-0123456789" and found != "-" else found)
    return out


def _tokens_checked(text: str, path: Path) -> list[str]:
    out: list[str] = []
    pos, n = 0, len(text)
    while pos < n:
        m = _TOKEN.match(text, pos)
        if m is None:
            raise InputError(
                f"{path}: TSDL metadata not understood at offset {pos}: {text[pos : pos + 30]!r}",
                hint="the trace's metadata is damaged or of a format this reader does not know",
            )
        if m.lastgroup:
            out.append(m.group(m.lastgroup))
        pos = m.end()
    return out


def read_metadata_text(path: Path) -> str:
    """The TSDL text of a ``metadata`` file (plain, or packetized: packets joined)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}", hint="check the path and permissions") from None
    if (len(data) >= 4 and struct.unpack_from("<I", data)[0] in (METADATA_MAGIC,)) or (
        len(data) >= 4 and struct.unpack_from(">I", data)[0] == METADATA_MAGIC
    ):
        endian = "<" if struct.unpack_from("<I", data)[0] == METADATA_MAGIC else ">"
        parts: list[bytes] = []
        pos = 0
        while pos + 37 <= len(data):
            magic, _uuid, _checksum, content_bits, packet_bits = struct.unpack_from(endian + "I16sIII", data, pos)
            if magic != METADATA_MAGIC or packet_bits < 37 * 8 or content_bits > packet_bits:
                raise InputError(
                    f"{path}: metadata packet at offset {pos} is damaged",
                    hint="the metadata file was cut or overwritten; re-copy the trace",
                )
            end = pos + content_bits // 8
            if end > len(data):
                raise InputError(
                    f"{path}: the metadata file is truncated at offset {len(data)}", hint="re-copy the trace"
                )
            parts.append(data[pos + 37 : end])
            pos += packet_bits // 8
        text = b"".join(parts)
    else:
        text = data
    return text.decode("utf-8", errors="replace").rstrip("\0")


class _Parser:
    """Recursive descent over TSDL tokens."""

    def __init__(self, tokens: list[str], path: Path) -> None:
        self.t = tokens
        self.i = 0
        self.path = path
        self.aliases: dict[str, CtfType] = {}
        self.structs: dict[str, StructType] = {}
        self.enums: dict[str, EnumType] = {}
        self.variants: dict[str, VariantType] = {}
        self.meta = Metadata(path)
        for name, size, signed in (
            ("int", 32, True),
            ("long", 64, True),
            ("short", 16, True),
            ("char", 8, True),
        ):
            self.aliases[name] = IntType(size, 8, signed, False, text=name == "char")

    # -- token helpers
    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.t[j] if j < len(self.t) else ""

    def next(self) -> str:
        tok = self.peek()
        if not tok:
            self.fail("unexpected end of metadata")
        self.i += 1
        return tok

    def expect(self, tok: str) -> None:
        got = self.next()
        if got != tok:
            self.fail(f"expected {tok!r}, found {got!r}")

    def fail(self, what: str) -> None:
        near = " ".join(self.t[max(0, self.i - 4) : self.i + 4])
        raise InputError(
            f"{self.path}: TSDL metadata: {what} (near: {near})",
            hint="this CTF layout is not one LTTng writes; convert it with babeltrace2 or report it",
        )

    # -- top level
    def trace_byte_order(self) -> None:
        """The trace block's ``byte_order``, read ahead: "native" integers declared before it are of that order
        (LTTng declares its typealiases, used by the packet header, before the trace block's attributes)."""
        t = self.t
        for i in range(len(t) - 1):
            if t[i] == "trace" and t[i + 1] == "{":
                depth = 0
                for j in range(i + 1, len(t) - 2):
                    depth += (t[j] == "{") - (t[j] == "}")
                    if depth == 0:
                        return
                    if depth == 1 and t[j] == "byte_order" and t[j + 1] == "=":
                        self.meta.big_endian = t[j + 2] in ("be", "network")
                        return

    def parse(self) -> Metadata:
        self.trace_byte_order()
        while self.peek():
            tok = self.peek()
            if tok == "/":  # "/* CTF 1.8 */" is stripped as a comment; stray tokens are errors
                self.fail("stray '/'")
            if tok == "typealias":
                self.typealias()
            elif tok in ("trace", "env", "clock", "stream", "event", "callsite") and self.peek(1) == "{":
                self.next()
                self.block(tok)
            else:  # a type declaration at top level: "struct name {...};", "enum name : ...;"
                self.type_spec()
                self.expect(";")
        return self.meta

    def typealias(self) -> None:
        self.expect("typealias")
        typ = self.type_spec()
        self.expect(":=")
        names = []
        while self.peek() != ";":
            names.append(self.next())
        self.expect(";")
        self.aliases[" ".join(names)] = typ

    def value(self) -> str | int:
        tok = self.next()
        if tok.startswith('"'):
            return tok[1:-1]
        if re.fullmatch(r"-?(0[xX][0-9a-fA-F]+|\d+)", tok):
            return int(tok, 0) if not re.fullmatch(r"-?0\d+", tok) else int(tok, 10)
        return tok

    def block(self, kind: str) -> None:
        self.expect("{")
        attrs: dict[str, str | int] = {}
        types: dict[str, CtfType] = {}
        while self.peek() != "}":
            key = self.next()
            if self.peek() == ":=":
                self.next()
                types[key] = self.type_spec()
            else:
                self.expect("=")
                attrs[key] = self.value()
                while self.peek() != ";":  # e.g. model.emf.uri spans tokens in odd writers
                    self.next()
            self.expect(";")
        self.expect("}")
        self.expect(";")
        self.finish_block(kind, attrs, types)

    def finish_block(self, kind: str, attrs: dict[str, str | int], types: dict[str, CtfType]) -> None:
        meta = self.meta
        if kind == "trace":
            bo = attrs.get("byte_order", "le")
            meta.big_endian = bo in ("be", "network")
            meta.uuid = str(attrs.get("uuid", ""))
            major, minor = attrs.get("major", 1), attrs.get("minor", 8)
            meta.version = (major if isinstance(major, int) else 1, minor if isinstance(minor, int) else 8)
            if meta.version[0] != 1:
                self.fail(f"CTF {meta.version[0]}.{meta.version[1]} is not CTF 1.8")
            header = types.get("packet.header")
            meta.packet_header = self.as_struct(header) if header is not None else None
            # Integers declared before the trace block default to little endian; re-resolve is not needed
            # for LTTng (the trace block comes first and aliases follow it).
        elif kind == "env":
            meta.env.update(attrs)
        elif kind == "clock":
            name = str(attrs.get("name", "clock"))
            if int(attrs.get("freq", 1_000_000_000)) < 1:  # every timestamp is cycles / freq (was exit 4)
                self.fail(f"clock {name} has frequency {attrs.get('freq')} Hz")
            meta.clocks[name] = Clock(
                name=name,
                freq=int(attrs.get("freq", 1_000_000_000)),
                offset_s=int(attrs.get("offset_s", 0)),
                offset=int(attrs.get("offset", 0)),
                uuid=str(attrs.get("uuid", "")),
                description=str(attrs.get("description", "")),
                absolute=str(attrs.get("absolute", "")).lower() in ("true", "1"),
            )
        elif kind == "stream":
            sid = self.numbered("stream id", attrs.get("id", 0), _MAX_STREAM_ID)
            meta.streams[sid] = StreamClass(
                sid,
                self.opt_struct(types.get("event.header")),
                self.opt_struct(types.get("packet.context")),
                self.opt_struct(types.get("event.context")),
            )
        elif kind == "event":
            eid = self.numbered("event id", attrs.get("id", 0), _MAX_EVENT_ID)
            sid = self.numbered("stream id", attrs.get("stream_id", 0), _MAX_STREAM_ID)
            fields = self.opt_struct(types.get("fields")) or StructType(())
            meta.events[(sid, eid)] = EventClass(
                eid, str(attrs.get("name", f"event {eid}")), sid, fields, self.opt_struct(types.get("context"))
            )

    def numbered(self, what: str, value: object, most: int) -> int:
        """An id the decoder indexes tables by: 0 to ``most``, else a metadata error.

        Its tables hold a row per id (16 bytes per stream and id): an id of 99999999999 asked for terabytes
        ("out of memory"), a negative one wrote another id's row.
        """
        try:
            number: int = int(str(value))
        except ValueError:
            self.fail(f"{what} {value!r} is not a number")
            raise
        if not 0 <= number <= most:
            self.fail(f"{what} {number} (this reader takes 0 to {most})")
        return number

    def opt_struct(self, typ: CtfType | None) -> StructType | None:
        return None if typ is None else self.as_struct(typ)

    def as_struct(self, typ: CtfType) -> StructType:
        if not isinstance(typ, StructType):
            self.fail("a struct is expected here")
        assert isinstance(typ, StructType)
        return typ

    # -- types
    def type_spec(self) -> CtfType:
        tok = self.peek()
        if tok == "integer":
            self.next()
            return self.integer(self.attrs())
        if tok == "floating_point":
            self.next()
            a = self.attrs()
            size = int(a.get("exp_dig", 8)) + int(a.get("mant_dig", 24))
            return FloatType(size, int(a.get("align", 8)), self.big(a))
        if tok == "string":
            self.next()
            if self.peek() == "{":
                self.attrs()
            return StringType()
        if tok == "enum":
            return self.enum()
        if tok == "struct":
            return self.struct()
        if tok == "variant":
            return self.variant()
        # a named alias, possibly of several words ("unsigned long"): the longest one that is declared
        for n in (3, 2, 1):
            words = [self.peek(k) for k in range(n)]
            name = " ".join(words)
            if all(re.fullmatch(r"[A-Za-z_][\w.]*", w) for w in words) and name in self.aliases:
                self.i += n
                return self.aliases[name]
        if tok in ("unsigned", "signed"):
            self.next()
            return IntType(32, 8, tok == "signed", self.meta.big_endian)
        self.fail(f"unknown type {tok!r}")
        raise AssertionError

    def attrs(self) -> dict[str, str | int]:
        self.expect("{")
        out: dict[str, str | int] = {}
        while self.peek() != "}":
            key = self.next()
            self.expect("=")
            val = self.value()
            out[key] = val
            self.expect(";")
        self.expect("}")
        return out

    def big(self, a: dict[str, str | int]) -> bool:
        bo = a.get("byte_order")
        if bo is None or bo == "native":
            return self.meta.big_endian
        return bo in ("be", "network")

    def integer(self, a: dict[str, str | int]) -> IntType:
        size = int(a.get("size", 32))
        if not 1 <= size <= 64:  # the decoders read at most 64 bits (a negative size was exit 4)
            self.fail(f"an integer of {size} bits (CTF readers take 1 to 64)")
        signed = a.get("signed", 0) in (1, "true", "TRUE")
        mapped = a.get("map")
        clock = None
        if isinstance(mapped, str) and mapped.startswith("clock."):
            clock = mapped.split(".")[1]
        return IntType(
            size,
            int(a.get("align", 8 if size % 8 == 0 else 1)),
            signed,
            self.big(a),
            clock,
            text=str(a.get("encoding", "none")).upper() in ("UTF8", "ASCII"),
        )

    def enum(self) -> EnumType:
        self.expect("enum")
        name = None
        if self.peek() not in (":", "{"):
            name = self.next()
            if self.peek() not in (":", "{"):
                return self.enums[name]
        base: IntType = self.aliases.get("int", IntType(32, 8, True, False))  # type: ignore[assignment]
        if self.peek() == ":":
            self.next()
            b = self.type_spec()
            if not isinstance(b, IntType):
                self.fail("an enum's base must be an integer")
            assert isinstance(b, IntType)
            base = b
        self.expect("{")
        labels = []
        nxt = 0
        while self.peek() != "}":
            label = self.next()
            label = label[1:-1] if label.startswith('"') else label
            lo = hi = nxt
            if self.peek() == "=":
                self.next()
                lo = hi = self.int_value()
                if self.peek() == "...":
                    self.next()
                    hi = self.int_value()
            labels.append((label, lo, hi))
            nxt = hi + 1
            if self.peek() == ",":
                self.next()
        self.expect("}")
        typ = EnumType(base, tuple(labels))
        if name:
            self.enums[name] = typ
        return typ

    def int_value(self) -> int:
        v = self.value()
        if not isinstance(v, int):
            self.fail(f"an integer is expected, found {v!r}")
        assert isinstance(v, int)
        return v

    def struct(self) -> StructType:
        self.expect("struct")
        name = None
        if self.peek() != "{":
            name = self.next()
            if self.peek() != "{":
                if name not in self.structs:
                    self.fail(f"unknown struct {name!r}")
                return self.structs[name]
        self.expect("{")
        fields = self.fields()
        self.expect("}")
        align = 1
        if self.peek() == "align":
            self.next()
            self.expect("(")
            align = self.int_value()
            self.expect(")")
        typ = StructType(tuple(fields), align)
        if name:
            self.structs[name] = typ
        return typ

    def variant(self) -> VariantType:
        self.expect("variant")
        name = None
        if self.peek() not in ("<", "{"):
            name = self.next()
        tag = ""
        if self.peek() == "<":
            self.next()
            tag = self.next()
            self.expect(">")
        if self.peek() != "{":
            if name is None or name not in self.variants:
                self.fail(f"unknown variant {name!r}")
            assert name is not None
            return VariantType(tag, self.variants[name].options)
        self.expect("{")
        options = self.fields()
        self.expect("}")
        typ = VariantType(tag, tuple(options))
        if name:
            self.variants[name] = typ
        return typ

    def fields(self) -> list[tuple[str, CtfType]]:
        out: list[tuple[str, CtfType]] = []
        while self.peek() != "}":
            if self.peek() == "typealias":
                self.typealias()
                continue
            typ = self.type_spec()
            name = self.next()
            while self.peek() == "[":
                self.next()
                length = self.next()
                self.expect("]")
                if re.fullmatch(r"\d+|0[xX][0-9a-fA-F]+", length):
                    if int(length, 0) > _MAX_ARRAY:  # (one past int64 was exit 4 in numpy)
                        self.fail(f"an array of {length} elements")
                    typ = ArrayType(typ, int(length, 0))
                else:
                    typ = SequenceType(typ, length)
            self.expect(";")
            out.append((name, typ))
        return out


def parse_metadata(path: Path) -> Metadata:
    """The trace's layouts, clocks and environment from its ``metadata`` file (InputError when not TSDL)."""
    text = read_metadata_text(path)
    if "/* CTF" not in text[:64] and "trace" not in text:
        raise InputError(f"{path}: not CTF metadata", hint="give an LTTng trace directory (it holds a 'metadata' file)")
    meta = _Parser(_tokens(text, path), path).parse()
    if not meta.streams:
        raise InputError(f"{path}: the metadata declares no stream", hint="the trace is incomplete; re-copy it")
    return meta
