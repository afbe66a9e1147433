"""CTF layouts as small programs: what the decoders (compiled and plain) run over a stream file.

:func:`compile_layouts` turns the layouts of :mod:`collectors.ctf.metadata`
(packet header, packet context, event header, event context, each event's
payload) into rows of a flat ``int64`` program (an op and its arguments);
:mod:`collectors.ctf.decode` (numba) and :mod:`collectors.ctf.plain` (Python)
run them packet by packet and event by event and write one row per *wanted*
event: its kind, id, timestamp, byte offset, CPU and up to :data:`N_VALUES`
register values (named fields of the payload).  Arrays and sequences of
compound or bit-field elements run their element's program in a loop
(``OP_LOOP`` ... ``OP_ENDLOOP``); a variant runs the option its enum tag
selects (a tag that selects none is a damaged stream).  An event layout this
compiler still cannot express (more fields than registers, an alignment that
is not a power of two) is marked in ``Layouts.general``: the packet that holds
such an event is handed back whole to the general decoder
(:mod:`collectors.ctf.general`), so no event is skipped and no offset guessed.

This module imports no numba: a small input is decoded without compiling anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from collectors.ctf.metadata import (
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

OP_INT, OP_STR, OP_ARRAY, OP_SEQ, OP_ALIGN, OP_IFRANGE, OP_FAIL, OP_CLEAR, OP_LOOP, OP_ENDLOOP, OP_SET, OP_FAILIF = (
    range(12)
)
OP_WIDTH = 8  # op, then 7 arguments
N_REGS = 512
HDR_BASE, CTX_BASE, PAY_BASE = 0, 64, 128  # register ranges: event header, event context, payload
PKT_BASE = 448  # packet header and context registers
MAX_LOOPS = 16  # nesting of arrays/sequences of compound elements
MAX_EMPTY = 1 << 20  # elements of an array of empty elements (taking no bits) beyond this are damage
N_VALUES = 8  # payload values a row keeps
# Row columns.
R_KIND, R_EID, R_TS, R_OFF, R_CPU, R_V0 = range(6)
N_ROWCOLS = R_V0 + N_VALUES
# Packet columns.
P_OFF, P_TSB, P_TSE, P_DISC, P_CPU, P_CONTENT, P_SIZE, P_EVENTS, P_STATUS, P_SEQ, P_BACK = range(11)
N_PKTCOLS = 11
# Stop codes of decode().
(
    ST_END,
    ST_ROWS_FULL,
    ST_TRUNCATED,
    ST_BAD_MAGIC,
    ST_UNKNOWN_ID,
    ST_OVERRUN,
    ST_UNSUPPORTED,
    ST_BAD_STREAM,
    ST_BAD_TAG,
    ST_GENERAL,
) = range(10)
STOP_TEXT = {
    ST_TRUNCATED: "the file ends inside a packet (truncated stream file)",
    ST_BAD_MAGIC: "a packet does not start with the CTF magic number (damaged stream file)",
    ST_UNKNOWN_ID: "an event id the metadata does not declare (damaged stream or wrong metadata)",
    ST_OVERRUN: "an event runs past its packet's content (damaged stream or wrong metadata)",
    ST_UNSUPPORTED: "an event layout this reader does not decode",
    ST_BAD_STREAM: "a packet names a stream class the metadata does not declare",
    ST_BAD_TAG: "a variant's tag selects none of its options (damaged stream or wrong metadata)",
}
N_STATE = 10  # decode()'s state vector
# Roles of packet registers (indices into the program's role table).
(
    ROLE_MAGIC,
    ROLE_STREAM,
    ROLE_TSB,
    ROLE_TSE,
    ROLE_CONTENT,
    ROLE_SIZE,
    ROLE_DISC,
    ROLE_CPU,
    ROLE_SEQ,
    ROLE_ID,
    ROLE_EXT_ID,
) = range(11)
N_ROLES = 11


def strip(name: str) -> str:
    """A TSDL field name as babeltrace shows it (one leading underscore removed)."""
    return name[1:] if name.startswith("_") else name


@dataclass
class _Program:
    ops: list[list[int]] = field(default_factory=list)
    regs: dict[str, int] = field(default_factory=dict)  # field path -> register
    next_reg: int = 0
    limit: int = 0
    unsupported: str | None = None
    depth: int = 0  # loops open while compiling

    def reg(self, name: str) -> int:
        if name in self.regs:
            return self.regs[name]
        if self.next_reg >= self.limit:
            self.unsupported = "too many fields"
            return -1
        r = self.regs[name] = self.next_reg
        self.next_reg += 1
        return r

    def emit(self, *args: int) -> None:
        if args[0] in (OP_INT, OP_ARRAY, OP_SEQ, OP_ALIGN, OP_LOOP) and (args[1] <= 0 or args[1] & (args[1] - 1)):
            self.unsupported = f"alignment {args[1]} is not a power of two"
            args = (OP_FAIL,)
        self.ops.append([*args] + [0] * (OP_WIDTH - len(args)))


def min_bits(t: CtfType) -> int:
    """The fewest bits a value of ``t`` takes (alignment padding not counted)."""
    if isinstance(t, IntType | FloatType):
        return t.size
    if isinstance(t, EnumType):
        return t.base.size
    if isinstance(t, StringType):
        return 8
    if isinstance(t, StructType):
        return sum(min_bits(ft) for _n, ft in t.fields)
    if isinstance(t, ArrayType):
        return t.length * min_bits(t.elem)
    if isinstance(t, VariantType):
        return min((min_bits(ft) for _n, ft in t.options), default=0)
    return 0


def align_of(t: CtfType) -> int:
    """The alignment of ``t`` in bits (a compound: the largest of its members and its own ``align()``)."""
    if isinstance(t, IntType | FloatType):
        return t.align
    if isinstance(t, EnumType):
        return t.base.align
    if isinstance(t, StringType):
        return 8
    if isinstance(t, StructType):
        return max([t.min_align, *(align_of(ft) for _n, ft in t.fields)])
    if isinstance(t, ArrayType | SequenceType):
        return align_of(t.elem)
    return 1


def _compile(p: _Program, t: CtfType, path: str, enums: dict[str, EnumType]) -> None:
    if isinstance(t, EnumType):
        enums[path] = t
        t = t.base
    if isinstance(t, IntType):
        p.emit(OP_INT, t.align, t.size, int(t.signed), int(t.big_endian), p.reg(path), int(t.clock is not None))
    elif isinstance(t, FloatType):
        if t.size not in (32, 64):
            p.unsupported = f"float of {t.size} bits"
        p.emit(OP_INT, t.align, t.size, 0, int(t.big_endian), -1, 0)
    elif isinstance(t, StringType):
        r = p.reg(path)
        p.emit(OP_STR, r, p.reg(path + "#len"))
    elif isinstance(t, StructType):
        p.emit(OP_ALIGN, align_of(t))
        for name, ft in t.fields:
            _compile(p, ft, f"{path}.{strip(name)}" if path else strip(name), enums)
    elif isinstance(t, ArrayType | SequenceType):
        _compile_array(p, t, path, enums)
    elif isinstance(t, VariantType):
        _compile_variant(p, t, path, enums)
    else:
        p.unsupported = f"type of {path}"
        p.emit(OP_FAIL)


def _compile_array(p: _Program, t: ArrayType | SequenceType, path: str, enums: dict[str, EnumType]) -> None:
    elem = t.elem.base if isinstance(t.elem, EnumType) else t.elem
    length = -1
    if isinstance(t, SequenceType):
        length = _resolve(p, path, field_name(t.length))
        if length < 0:
            p.unsupported = f"sequence {path}: length field {t.length} not found"
            p.emit(OP_FAIL)
            return
    r = p.reg(path)
    rl = p.reg(path + "#len")
    # Whole-byte elements that follow each other without padding: one step over all of them.
    if (
        isinstance(elem, IntType | FloatType)
        and elem.size % 8 == 0
        and elem.align % 8 == 0
        and elem.size % elem.align == 0
    ):
        if isinstance(t, ArrayType):
            p.emit(OP_ARRAY, elem.align, t.length, elem.size, r, rl)
        else:
            p.emit(OP_SEQ, elem.align, length, elem.size, r, rl)
        return
    # Compound or bit-field elements: the element's program in a loop (its registers hold the last element).
    if p.depth >= MAX_LOOPS:
        p.unsupported = f"array or sequence {path} nested more than {MAX_LOOPS} deep"
        p.emit(OP_FAIL)
        return
    at = len(p.ops)
    if isinstance(t, ArrayType):
        p.emit(OP_LOOP, align_of(t.elem), t.length, 0, 0, r, rl, min_bits(t.elem))
    else:
        p.emit(OP_LOOP, align_of(t.elem), length, 1, 0, r, rl, min_bits(t.elem))
    p.depth += 1
    _compile(p, t.elem, path + "[]", enums)
    p.depth -= 1
    p.emit(OP_ENDLOOP, len(p.ops) - at - 1)
    p.ops[at][4] = len(p.ops) - at - 1  # body and OP_ENDLOOP: skipped for zero elements


def _compile_variant(p: _Program, t: VariantType, path: str, enums: dict[str, EnumType]) -> None:
    tag_path = _resolve_name(p, path, field_name(t.tag))
    enum = enums.get(tag_path or "")
    if tag_path is None or enum is None:
        p.unsupported = f"variant {path} not tagged by an enum"
        p.emit(OP_FAIL)
        return
    tag_reg = p.regs[tag_path]
    chosen = variant_ranges(enum, t)
    # A tag no option takes is a damaged stream: checked unless the options cover every value of the tag
    # (LTTng's event header: 5 or 16 bits, all of them compact/large or extended).
    covered = sum(hi - lo + 1 for _n, _ft, lo, hi in chosen)
    check = not (not enum.base.signed and enum.base.size < 63 and covered >= 1 << enum.base.size)
    flag = p.reg(path + "#chosen") if check else -1
    if check:
        p.emit(OP_SET, flag, 0)
    for name, ft, lo, hi in chosen:
        at = len(p.ops)
        p.emit(OP_IFRANGE, tag_reg, lo, hi, 0)
        if check:
            p.emit(OP_SET, flag, 1)
        _compile(p, ft, f"{path}.{strip(name)}", enums)
        p.ops[at][4] = len(p.ops) - at - 1  # ops to skip when the tag is not in range
    if check:
        p.emit(OP_FAILIF, flag)


def field_name(ref: str) -> str:
    """A TSDL field reference (``_len``, ``event.fields._len``, ``stream.event.context.x``) as a register path.

    The scope prefixes are dropped (the registers of the header, contexts and payload are apart) and each
    part loses one leading underscore, as :func:`strip` does for declared names.
    """
    for prefix in (
        "trace.packet.header.",
        "stream.packet.context.",
        "stream.event.header.",
        "stream.event.context.",
        "event.context.",
        "event.fields.",
    ):
        if ref.startswith(prefix):
            ref = ref[len(prefix) :]
            break
    return ".".join(strip(part) for part in ref.split("."))


def variant_ranges(enum: EnumType, t: VariantType) -> list[tuple[str, CtfType, int, int]]:
    """Each option of ``t`` with the tag values that select it (every range of its label; unlabelled: none)."""
    out: list[tuple[str, CtfType, int, int]] = []
    for name, ft in t.options:
        for label, lo, hi in enum.labels:
            if label in (name, strip(name)):
                out.append((name, ft, lo, hi))
    return out


def resolve_path(known: Mapping[str, object], path: str, name: str) -> str | None:
    """The path of ``name`` as seen from ``path`` (innermost scope first) among ``known`` paths."""
    parts = path.split(".")
    for k in range(len(parts) - 1, -1, -1):
        cand = ".".join([*parts[:k], name]) if k else name
        if cand in known:
            return cand
    return None


def _resolve_name(p: _Program, path: str, name: str) -> str | None:
    return resolve_path(p.regs, path, name)


def _resolve(p: _Program, path: str, name: str) -> int:
    found = _resolve_name(p, path, name)
    return p.regs[found] if found is not None else -1


_I64s = npt.NDArray[np.int64]


@dataclass
class Layouts:
    """The compiled programs of one trace (see the module docstring)."""

    ops: npt.NDArray[np.int64]  # (n_ops, OP_WIDTH)
    # per stream class s: [pkt start, pkt end, hdr start, hdr end, ctx start, ctx end]
    stream_progs: npt.NDArray[np.int64]
    event_progs: npt.NDArray[np.int64]  # (n_streams, max_id + 1, 2): payload program start, end (-1: undeclared)
    roles: npt.NDArray[np.int64]  # (N_ROLES,): register of each role, -1 when absent
    names: dict[tuple[int, int], str]  # (stream class, id) -> event name
    regs: dict[tuple[int, int], dict[str, int]]  # (stream class, id) -> payload field -> register
    ctx_regs: dict[int, dict[str, int]]  # stream class -> event context field -> register
    unsupported: dict[tuple[int, int], str]  # events whose payload cannot be decoded, and why
    packet_unsupported: str | None
    skips: npt.NDArray[np.int64]  # (n_streams, max_id + 1, 2): alignment and bits of a fixed-size payload, -1
    # (n_streams, N_HDRCOLS): the LTTng event header as straight-line code (H_FAST 0: run its program)
    headers: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int64))
    # (stream class, id) -> register -> (F_* how, bit offset or value, bits, signed | big << 1) of a
    # fixed-size payload's fields, relative to its aligned start
    fixed: dict[tuple[int, int], dict[int, tuple[int, int, int, int]]] = field(default_factory=dict)
    clock_bits: int = 64
    # (n_streams, max_id + 1): 1 where the payload goes to the general decoder (see ``unsupported``)
    general: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int64))

    def programs(self) -> tuple[_I64s, _I64s, _I64s, _I64s, _I64s, _I64s, _I64s]:
        """What the decoder kernel takes of these layouts, in its order (ops ... general)."""
        return (self.ops, self.stream_progs, self.event_progs, self.roles, self.skips, self.headers, self.general)


def compile_layouts(meta: Metadata) -> Layouts:
    """Programs for every layout of ``meta``."""
    ops: list[list[int]] = []
    enums: dict[str, EnumType] = {}
    n_streams = max(meta.streams) + 1
    max_id = max((eid for _s, eid in meta.events), default=0)
    stream_progs = np.full((n_streams, 6), -1, dtype=np.int64)
    event_progs = np.full((n_streams, max_id + 1, 2), -1, dtype=np.int64)
    roles = np.full(N_ROLES, -1, dtype=np.int64)
    names: dict[tuple[int, int], str] = {}
    regs: dict[tuple[int, int], dict[str, int]] = {}
    ctx_regs: dict[int, dict[str, int]] = {}
    unsupported: dict[tuple[int, int], str] = {}
    packet_unsupported = None

    def add(t: StructType | None, base: int, limit: int) -> tuple[int, int, _Program]:
        p = _Program(next_reg=base, limit=limit)
        if t is not None:
            _compile(p, t, "", enums)
        start = len(ops)
        ops.extend(p.ops)
        return start, len(ops), p

    for sid, sc in meta.streams.items():
        # The packet header (trace level) and this stream's packet context share one program and register range.
        fields = (meta.packet_header.fields if meta.packet_header else ()) + (
            sc.packet_context.fields if sc.packet_context else ()
        )
        a, b, pk = add(StructType(tuple(fields)), PKT_BASE, N_REGS)
        packet_unsupported = packet_unsupported or pk.unsupported
        for role, name in (
            (ROLE_MAGIC, "magic"),
            (ROLE_STREAM, "stream_id"),
            (ROLE_TSB, "timestamp_begin"),
            (ROLE_TSE, "timestamp_end"),
            (ROLE_CONTENT, "content_size"),
            (ROLE_SIZE, "packet_size"),
            (ROLE_DISC, "events_discarded"),
            (ROLE_CPU, "cpu_id"),
            (ROLE_SEQ, "packet_seq_num"),
        ):
            roles[role] = pk.regs.get(name, -1)
        c, d, hp = add(sc.header, HDR_BASE, CTX_BASE)
        packet_unsupported = packet_unsupported or hp.unsupported
        roles[ROLE_ID] = hp.regs.get("id", -1)
        roles[ROLE_EXT_ID] = hp.regs.get("v.extended.id", -1)
        e, f, cp = add(sc.event_context, CTX_BASE, PAY_BASE)
        ctx_regs[sid] = cp.regs
        stream_progs[sid] = (a, b, c, d, e, f)
    for (sid, eid), ev in meta.events.items():
        if sid >= n_streams:
            continue
        t = ev.fields if ev.context is None else StructType(ev.context.fields + ev.fields.fields)
        start, end, p = add(t, PAY_BASE, PKT_BASE)
        event_progs[sid, eid] = (start, end)
        names[(sid, eid)] = ev.name
        regs[(sid, eid)] = p.regs
        if p.unsupported:
            unsupported[(sid, eid)] = p.unsupported
    skips = np.full((n_streams, max_id + 1, 2), -1, dtype=np.int64)
    general = np.zeros((n_streams, max_id + 1), dtype=np.int64)
    for sid, eid in unsupported:
        general[sid, eid] = 1
    fixed_reads: dict[tuple[int, int], dict[int, tuple[int, int, int, int]]] = {}
    for (sid, eid), (start, end) in ((k, tuple(event_progs[k])) for k in names):
        prog = [ops[i] for i in range(start, end)]
        fixed = fixed_size(prog)
        if fixed is not None:
            skips[sid, eid] = fixed
            fixed_reads[(sid, eid)] = fixed_fields(prog)
    first = min(meta.streams)
    stream_progs[:, 0:2] = stream_progs[first, 0:2]  # one packet header + context program (LTTng has one)
    headers = np.zeros((n_streams, N_HDRCOLS), dtype=np.int64)
    for sid in meta.streams:
        a, b = stream_progs[sid, 2:4]
        headers[sid] = _header_shape(ops[a:b], int(roles[ROLE_ID]), int(roles[ROLE_EXT_ID]))
    arr = np.array(ops, dtype=np.int64).reshape(-1, OP_WIDTH) if ops else np.zeros((0, OP_WIDTH), dtype=np.int64)
    return Layouts(
        arr,
        stream_progs,
        event_progs,
        roles,
        names,
        regs,
        ctx_regs,
        unsupported,
        packet_unsupported,
        skips,
        headers,
        fixed_reads,
        general=general,
    )


# The LTTng event header (compact: 5-bit id, 27-bit time; large: 16-bit id, 32-bit time; both with an
# extended form of 32-bit id and 64-bit time), read on every event, as parameters of straight-line code.
H_FAST, H_ALIGN, H_IDBITS, H_EXT, H_TSALIGN, H_TSBITS, H_XALIGN, H_XTSALIGN = range(8)
N_HDRCOLS = 8


def _header_shape(prog: list[list[int]], rid: int, rext: int) -> list[int]:
    """The H_* parameters of an event header program of LTTng's shape, else all 0 (the program runs).

    The shape: align; unsigned id; if id in 0..EXT-1 {align; N-bit clock}; if id == EXT {align; 32-bit
    id; 64-bit clock}.  Two alignments in a row are one to the larger (both powers of two).
    """
    if len(prog) != 9 or rid < 0 or rext < 0:
        return [0] * N_HDRCOLS
    al, idf, if1, al2, ts, if2, al3, xid, xts = prog
    ext = if1[3] + 1
    ok = (
        al[0] == OP_ALIGN
        and idf[:7] == [OP_INT, idf[1], idf[2], 0, 0, rid, 0]
        and 0 < idf[2] < 64
        and if1[:5] == [OP_IFRANGE, rid, 0, ext - 1, 2]
        and al2[0] == OP_ALIGN
        and ts[0] == OP_INT
        and 0 < ts[2] <= 64
        and ts[3:5] == [0, 0]
        and ts[6] == 1
        and if2[:5] == [OP_IFRANGE, rid, ext, ext, 3]
        and al3[0] == OP_ALIGN
        and xid[:7] == [OP_INT, xid[1], 32, 0, 0, rext, 0]
        and xts[0] == OP_INT
        and xts[2:5] == [64, 0, 0]
        and xts[6] == 1
    )
    if not ok:
        return [0] * N_HDRCOLS
    return [1, max(al[1], idf[1]), idf[2], ext, max(al2[1], ts[1]), ts[2], max(al3[1], xid[1]), xts[1]]


# How a value column of a fixed-size payload is read: from the registers (the event context, or 0),
# an integer at a bit offset, an array's byte position, a constant (an array's length).
F_REG, F_INT, F_BYTEPOS, F_CONST = range(4)
N_FIXCOLS = 4


def fixed_fields(prog: list[list[int]]) -> dict[int, tuple[int, int, int, int]]:
    """Per register set by a fixed-size payload program, how :func:`decode` reads it without running it.

    Offsets are from the payload's start aligned to the program's first alignment, as in :func:`fixed_size`.
    """
    out: dict[int, tuple[int, int, int, int]] = {}
    pos = 0
    for op in prog:
        kind, a = op[0], op[1]
        pos = (pos + a - 1) // a * a
        if kind == OP_INT:
            if op[5] >= 0:
                out[op[5]] = (F_INT, pos, op[2], op[3] | op[4] << 1)
            pos += op[2]
        elif kind == OP_ARRAY:
            out[op[4]] = (F_BYTEPOS, pos, 0, 0)
            out[op[5]] = (F_CONST, op[2], 0, 0)
            pos += op[2] * op[3]
    return out


def field_reads(lay: Layouts, want: npt.NDArray[np.int64], emit: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """(n_streams, n_ids, N_VALUES + 1, N_FIXCOLS): how :func:`decode` fills each value column of a wanted
    fixed-size event straight from the buffer ([.., N_VALUES, 0] 1: it may; else its program runs), and
    whether it steps over the event context instead of running it ([.., N_VALUES, 1] 1, then [.., 2] and
    [.., 3] the context's alignment and bits).

    It may read the columns so when every column it keeps is a field of that layout (read as its program
    would) or a register of the event context.  It may step over the context when the context's size never
    varies, it maps nothing to the clock, and neither a kept column nor the payload's program reads one of
    its registers (LTTng kernel contexts: tid, pid, procname, prio on every event, read by nothing the
    reader keeps but a user-space event's thread id).
    """
    reads = np.zeros((*emit.shape[:2], N_VALUES + 1, N_FIXCOLS), dtype=np.int64)
    for (sid, eid), fields in lay.fixed.items():
        if not want[sid, eid]:
            continue
        cols = [(F_REG, 0, 0, 0)] * N_VALUES
        ok = True
        for k in range(N_VALUES):
            r = int(emit[sid, eid, k])
            if r >= PAY_BASE:
                if r not in fields:
                    ok = False
                    break
                cols[k] = fields[r]
        if ok:
            reads[sid, eid, :N_VALUES] = cols
            reads[sid, eid, N_VALUES, 0] = 1
    ops = lay.ops.tolist()
    for sid, (_a, _b, _c, _d, ctx_s, ctx_e) in enumerate(lay.stream_progs.tolist()):
        shape = fixed_size(ops[ctx_s:ctx_e]) if ctx_e > ctx_s else None
        if shape is None:
            continue
        for (s, eid), (start, end) in ((k, lay.event_progs[k].tolist()) for k in lay.names if k[0] == sid):
            kept = emit[s, eid]
            if bool(np.any((kept >= CTX_BASE) & (kept < PAY_BASE))) or _reads_context(ops[start:end]):
                continue
            reads[s, eid, N_VALUES, 1:4] = (1, *shape)
    return reads


def _reads_context(prog: list[list[int]]) -> bool:
    """Whether a payload program reads an event context register (a sequence length, a variant tag)."""
    for op in prog:
        kind = op[0]
        read = (
            op[2] if kind == OP_SEQ or (kind == OP_LOOP and op[3]) else op[1] if kind in (OP_IFRANGE, OP_FAILIF) else -1
        )
        if CTX_BASE <= read < PAY_BASE:
            return True
    return False


def fixed_size(prog: list[list[int]]) -> tuple[int, int] | None:
    """(alignment, bits) of a payload whose size never varies (integers and fixed arrays), else None.

    The program starts by aligning to its struct's alignment A, the largest inside it, so from any
    A-aligned start the payload always takes the same number of bits.
    """
    if not prog or prog[0][0] != OP_ALIGN:
        return None
    first = prog[0][1]
    pos = 0
    for op in prog:
        kind, a = op[0], op[1]
        if kind not in (OP_INT, OP_ALIGN, OP_ARRAY) or a > first or first % a:
            return None
        if kind == OP_INT and op[6]:  # maps to the clock: must run
            return None
        pos = (pos + a - 1) // a * a
        if kind == OP_INT:
            pos += op[2]
        elif kind == OP_ARRAY:
            pos += op[2] * op[3]
    return first, pos
