"""The CTF decoder in plain Python: :mod:`collectors.ctf.decode`'s loop, line by line, without compiling anything.

A small session (``kforensic trace`` on a few MB of LTTng streams) is decoded here: loading or compiling
the numba decoder would take longer than the whole run.  Each function mirrors its compiled namesake —
the same programs (:mod:`collectors.ctf.layouts`), the same reads in the same order, the same bounds
checks, rows, packet rows, counts and stop codes — on Python integers and lists instead of numpy
scalars; ``tests/collectors/test_ctf_plain.py`` checks that both give the same rows on the project's
LTTng session and on random layouts.  Importing this module imports no numba.
"""

from __future__ import annotations

import mmap
import struct
from collections import Counter
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from collectors.ctf.layouts import (
    F_BYTEPOS,
    F_INT,
    F_REG,
    H_ALIGN,
    H_EXT,
    H_FAST,
    H_IDBITS,
    H_TSALIGN,
    H_TSBITS,
    H_XALIGN,
    H_XTSALIGN,
    MAX_EMPTY,
    N_REGS,
    N_ROWCOLS,
    N_STATE,
    N_VALUES,
    OP_ALIGN,
    OP_ARRAY,
    OP_CLEAR,
    OP_ENDLOOP,
    OP_FAILIF,
    OP_IFRANGE,
    OP_INT,
    OP_LOOP,
    OP_SEQ,
    OP_SET,
    OP_STR,
    R_CPU,
    R_KIND,
    R_OFF,
    R_TS,
    R_V0,
    ROLE_CONTENT,
    ROLE_CPU,
    ROLE_DISC,
    ROLE_EXT_ID,
    ROLE_ID,
    ROLE_MAGIC,
    ROLE_SEQ,
    ROLE_SIZE,
    ROLE_STREAM,
    ROLE_TSB,
    ROLE_TSE,
    ST_BAD_MAGIC,
    ST_BAD_STREAM,
    ST_BAD_TAG,
    ST_END,
    ST_GENERAL,
    ST_OVERRUN,
    ST_ROWS_FULL,
    ST_TRUNCATED,
    ST_UNKNOWN_ID,
    ST_UNSUPPORTED,
    Layouts,
    fixed_size,
)
from forensics.types.trace import Kind

_U64 = (1 << 64) - 1
_I64_MAX = (1 << 63) - 1
_CODES = {8: "b", 16: "h", 32: "i", 64: "q"}  # signed; upper case unsigned (64 bits: int64 as compiled)


@dataclass(frozen=True)
class _Fixed:
    """A program of integers and fixed arrays only, read without interpreting it (the event context that
    LTTng writes before every event: tid, pid, procname, prio...). Offsets are from the aligned start."""

    align: int
    bits: int  # the position after it, as the program leaves it
    last_end: int  # where its last field ends: past ``limit``, the program would have failed
    ints: tuple[tuple[int, int, int, int, int], ...]  # (register, bit offset, bits, signed, big)
    arrays: tuple[tuple[int, int, int, int], ...]  # (position register, bit offset, length register, length)
    struct: struct.Struct | None  # every integer at once, when all are whole bytes at byte offsets
    struct_regs: tuple[int, ...]


def _data(buf: npt.NDArray[np.uint8]) -> bytes | mmap.mmap:
    """The bytes ``buf`` views: the stream file's mapping (or bytes) itself when it views all of it, else a copy.

    The reader's streams are mapped files (:func:`collectors.ctf.reader._map`): copying one whole on every
    call (``tobytes``) read the 50 MB file again per call, 4 GB of page faults for a 100 MB session.
    """
    base = buf.base
    if isinstance(base, memoryview):  # np.frombuffer(mapping) views a memoryview of it
        base = base.obj
    if isinstance(base, (bytes, mmap.mmap)) and buf.ndim == 1 and len(base) == buf.nbytes:
        return base  # a uint8 view of all of ``base`` (np.frombuffer): the same bytes
    return buf.tobytes()


@dataclass(frozen=True)
class _RowReads:
    """How the value columns of a wanted fixed-size event are filled (``field_reads`` of one event, worked out once).

    Indices are into the row (value column k is row index R_V0 + k).  ``consts``: the columns as they start
    (F_CONST values, 0 for an unmapped register); ``ints``: (index, bit offset, bits, flags) of the fields read
    from the payload, or all at once by ``packed`` (a struct from the payload's first byte, into
    ``packed_cols``) when the payload starts on a byte and every field is a whole byte-aligned integer of one
    byte order; ``regs``: (index, register) from the event context; ``bytepos``: (index, bit offset) of arrays.
    """

    consts: tuple[int, ...]
    constant: bool  # no column is read: the row is ``consts`` after the header columns
    ints: tuple[tuple[int, int, int, int], ...]
    packed: struct.Struct | None
    packed_cols: tuple[int, ...]
    regs: tuple[tuple[int, int], ...]
    bytepos: tuple[tuple[int, int], ...]


def _row_reads(ev_reads: list[list[int]], ev_emit: list[int]) -> _RowReads:
    """The :class:`_RowReads` of one event from its ``field_reads`` rows and ``emit`` registers."""
    consts = [0] * N_VALUES
    ints, regs, bytepos = [], [], []
    for k in range(N_VALUES):
        how, at, bits, flags = ev_reads[k]
        if how == F_REG:
            if ev_emit[k] >= 0:
                regs.append((R_V0 + k, ev_emit[k]))
        elif how == F_INT:
            ints.append((R_V0 + k, at, bits, flags))
        elif how == F_BYTEPOS:
            bytepos.append((R_V0 + k, at))
        else:
            consts[k] = at
    packed = None
    in_order = sorted(ints, key=lambda x: x[1])
    if (
        ints
        and all(at % 8 == 0 and bits in _CODES for _k, at, bits, _f in ints)
        and len({f >> 1 for *_x, f in ints}) == 1
    ):
        fmt, pos = (">" if ints[0][3] >> 1 else "<"), 0
        for _k, at, bits, flags in in_order:
            if at // 8 < pos:  # overlapping fields: read one by one
                fmt = ""
                break
            fmt += "x" * (at // 8 - pos) + (_CODES[bits] if flags & 1 or bits == 64 else _CODES[bits].upper())
            pos = (at + bits) // 8
        packed = struct.Struct(fmt) if fmt else None
    return _RowReads(
        tuple(consts),
        not (ints or regs or bytepos),
        tuple(ints),
        packed,
        tuple(k for k, *_x in in_order),
        tuple(regs),
        tuple(bytepos),
    )


def _fixed_program(ops: list[list[int]], start: int, end: int) -> _Fixed | None:
    """``ops[start:end]`` as a :class:`_Fixed`, or None when its size can vary (or it sets the clock)."""
    prog = ops[start:end]
    got = fixed_size(prog)
    if got is None:
        return None
    ints, arrays = [], []
    pos = last_end = 0
    for op in prog:
        pos = (pos + op[1] - 1) // op[1] * op[1]
        if op[0] == OP_INT:
            if op[5] >= 0:
                ints.append((op[5], pos, op[2], op[3], op[4]))
            pos += op[2]
            last_end = pos
        elif op[0] == OP_ARRAY:
            arrays.append((op[4], pos, op[5], op[2]))
            pos += op[2] * op[3]
            last_end = pos
    packed = None
    whole_bytes = all(off % 8 == 0 and size in _CODES for _r, off, size, _s, _b in ints)
    if got[0] % 8 == 0 and whole_bytes and len({big for *_x, big in ints}) <= 1:
        fmt, at = ">" if ints and ints[0][4] else "<", 0
        for _r, off, size, signed, _big in ints:
            fmt += "x" * (off // 8 - at) + (_CODES[size] if signed or size == 64 else _CODES[size].upper())
            at = (off + size) // 8
        packed = struct.Struct(fmt)
    return _Fixed(got[0], got[1], last_end, tuple(ints), tuple(arrays), packed, tuple(r for r, *_x in ints))


def _run_fixed(f: _Fixed, buf: bytes | mmap.mmap, pos: int, limit: int, regs: list[int]) -> int:
    """What :func:`_run` gives for the program ``f`` (the same registers, position and -1 past ``limit``)."""
    a = f.align
    base = (pos + a - 1) & -a
    if base + f.last_end > limit:
        return -1
    if f.struct is not None:
        for r, v in zip(f.struct_regs, f.struct.unpack_from(buf, base >> 3), strict=True):
            regs[r] = v
    else:
        for r, off, size, signed, big in f.ints:
            regs[r] = _read(buf, base + off, size, signed, big)
    for r, off, rl, n in f.arrays:
        regs[r] = (base + off) >> 3
        regs[rl] = n
    return base + f.bits


def _wrap64(v: int) -> int:
    """``v`` as the int64 the compiled code holds (two's complement)."""
    v &= _U64
    return v - (1 << 64) if v >> 63 else v


def _read(buf: bytes | mmap.mmap, bitpos: int, size: int, signed: int, big: int) -> int:
    """The integer of ``size`` bits at ``bitpos`` (as :func:`collectors.ctf.decode._read`: 64 bits are int64)."""
    byte = bitpos >> 3
    shift = bitpos & 7
    nbytes = (shift + size + 7) >> 3
    if big:
        v = int.from_bytes(buf[byte : byte + nbytes], "big") >> (nbytes * 8 - shift - size)
    else:
        v = int.from_bytes(buf[byte : byte + nbytes], "little") >> shift
    if size < 64:
        v &= (1 << size) - 1
        if signed and v >> (size - 1):
            return v - (1 << size)
        return v
    return _wrap64(v)


def _clock_extend(clock: list[int], v: int, size: int) -> None:
    """Extend the N-bit time ``v`` from the last full one (CTF 1.8 section 8)."""
    if size >= 64:
        clock[0] = v
    else:
        mask = (1 << size) - 1
        cur = clock[0]
        new = (cur & ~mask) | v
        if v < (cur & mask):
            new += mask + 1
        clock[0] = _wrap64(new)


def _run(  # noqa: C901 (mirrors collectors.ctf.decode._run op for op)
    ops: list[list[int]],
    start: int,
    end: int,
    buf: bytes | mmap.mmap,
    pos: int,
    limit: int,
    regs: list[int],
    clock: list[int],
) -> int:
    """Run ops[start:end] from bit ``pos``; the new position, -1 past ``limit`` (bits), -2 on OP_FAIL,
    -3 when a variant's tag selects no option (as :func:`collectors.ctf.decode._run`)."""
    stack: list[list[int]] = []  # open loops: [body start, elements left]
    i = start
    while i < end:
        o = ops[i]
        op = o[0]
        if op == OP_INT:
            a = o[1]
            pos = (pos + a - 1) & -a
            size = o[2]
            if pos + size > limit:
                return -1
            v = _read(buf, pos, size, o[3], o[4])
            pos += size
            if o[5] >= 0:
                regs[o[5]] = v
            if o[6]:
                _clock_extend(clock, v, size)
        elif op == OP_STR:
            p = (pos + 7) >> 3
            regs[o[1]] = p
            q = buf.find(b"\0", p, limit >> 3)
            if q < 0:
                return -1
            regs[o[2]] = q - p
            pos = (q + 1) << 3
        elif op in (OP_ARRAY, OP_SEQ):
            a = o[1]
            pos = (pos + a - 1) & -a
            n = o[2] if op == OP_ARRAY else regs[o[2]]
            bits = n * o[3]
            if n < 0 or pos + bits > limit:
                return -1
            regs[o[4]] = pos >> 3
            regs[o[5]] = n
            pos += bits
        elif op == OP_ALIGN:
            a = o[1]
            pos = (pos + a - 1) & -a
        elif op == OP_IFRANGE:
            v = regs[o[1]]
            if v < o[2] or v > o[3]:
                i += o[4]
        elif op == OP_LOOP:
            a = o[1]
            pos = (pos + a - 1) & -a
            n = regs[o[2]] if o[3] else o[2]
            least = o[7]
            if n < 0 or (n * least > limit - pos if least else n > MAX_EMPTY):
                return -1
            regs[o[5]] = pos >> 3
            regs[o[6]] = n
            if n == 0:
                i += o[4]
            else:
                stack.append([i + 1, n - 1])
        elif op == OP_ENDLOOP:
            if stack[-1][1] > 0:
                stack[-1][1] -= 1
                i = stack[-1][0]
                continue
            stack.pop()
        elif op == OP_SET:
            regs[o[1]] = o[2]
        elif op == OP_FAILIF:
            if regs[o[1]] == 0:
                return -3
        elif op == OP_CLEAR:
            regs[o[1]] = -1
        else:
            return -2
        i += 1
    return pos


def _header(buf: bytes | mmap.mmap, pos: int, limit: int, hdr: list[int], clock: list[int]) -> tuple[int, int]:
    """The LTTng event header at bit ``pos``: (new position or -1, event id), as the compiled one."""
    a = hdr[H_ALIGN]
    pos = (pos + a - 1) & -a
    size = hdr[H_IDBITS]
    if pos + size > limit:
        return -1, 0
    eid = _read(buf, pos, size, 0, 0)
    pos += size
    if eid < hdr[H_EXT]:
        a = hdr[H_TSALIGN]
        pos = (pos + a - 1) & -a
        size = hdr[H_TSBITS]
        if pos + size > limit:
            return -1, 0
        _clock_extend(clock, _read(buf, pos, size, 0, 0), size)
        pos += size
    elif eid == hdr[H_EXT]:
        a = hdr[H_XALIGN]
        pos = (pos + a - 1) & -a
        if pos + 32 > limit:
            return -1, 0
        eid = _read(buf, pos, 32, 0, 0)
        pos += 32
        a = hdr[H_XTSALIGN]
        pos = (pos + a - 1) & -a
        if pos + 64 > limit:
            return -1, 0
        clock[0] = _read(buf, pos, 64, 0, 0)
        pos += 64
    return pos, eid


def run(  # noqa: C901 (mirrors collectors.ctf.decode.decode branch for branch)
    lay: Layouts,
    buf_array: npt.NDArray[np.uint8],
    pos: int,
    want_array: npt.NDArray[np.int64],
    emit_array: npt.NDArray[np.int64],
    reads_array: npt.NDArray[np.int64],
    counts: npt.NDArray[np.int64],
    rows: npt.NDArray[np.int64],
    packets: npt.NDArray[np.int64],
    state: npt.NDArray[np.int64],
) -> None:
    """:func:`collectors.ctf.decode.run` in Python: the same arguments, the same rows, packets, counts, state."""
    buf = _data(buf_array)
    ops: list[list[int]] = lay.ops.tolist()
    stream_progs: list[list[int]] = lay.stream_progs.tolist()
    event_progs: list[list[list[int]]] = lay.event_progs.tolist()
    roles: list[int] = lay.roles.tolist()
    skips: list[list[list[int]]] = lay.skips.tolist()
    headers: list[list[int]] = lay.headers.tolist()
    general: list[list[int]] = lay.general.tolist()
    want: list[list[int]] = want_array.tolist()
    emit: list[list[list[int]]] = emit_array.tolist()
    reads: list[list[list[list[int]]]] = reads_array.tolist()
    regs = [0] * N_REGS
    clock = [0]
    # The rows written, flat (N_ROWCOLS values a row), copied into ``rows`` at the end: extending one list and
    # converting it at once costs half of building and converting a list per row.
    out: list[int] = []
    put = out.extend
    out_packets: list[list[int]] = []
    seen: dict[tuple[int, int], int] = {}
    row_reads: dict[tuple[int, int], _RowReads] = {}
    infos: dict[int, list[tuple[int, ...]]] = {}
    bad_eid = bad_sid = -1
    cap = int(state[0])
    nev = back = 0
    last_ev = int(state[7])
    size = len(buf)
    code = ST_END
    stop_at = pos
    n_streams = len(stream_progs)
    max_id = len(event_progs[0]) if event_progs else 0
    max_packets = packets.shape[0]
    r_magic, r_stream, r_size, r_content = roles[ROLE_MAGIC], roles[ROLE_STREAM], roles[ROLE_SIZE], roles[ROLE_CONTENT]
    rid, rext = roles[ROLE_ID], roles[ROLE_EXT_ID]
    ctx_fixed = [_fixed_program(ops, p[4], p[5]) if p[5] > p[4] else None for p in stream_progs]
    while pos < size and len(out_packets) < max_packets:
        regs[:] = [-1] * N_REGS
        clock[0] = 0
        end = _run(ops, stream_progs[0][0], stream_progs[0][1], buf, pos * 8, size * 8, regs, clock)
        if end < 0:
            code, stop_at = ST_TRUNCATED, pos
            break
        if r_magic >= 0 and regs[r_magic] != 0xC1FC1FC1:
            code, stop_at = ST_BAD_MAGIC, pos
            break
        sid = regs[r_stream] if r_stream >= 0 else 0
        if sid < 0 or sid >= n_streams or stream_progs[sid][2] < 0:
            code, stop_at = ST_BAD_STREAM, pos
            break
        psize = regs[r_size] if r_size >= 0 else (size - pos) * 8
        csize = regs[r_content] if r_content >= 0 else psize
        if psize <= 0 or csize > psize:
            code, stop_at = ST_BAD_MAGIC, pos
            break
        cut = pos * 8 + psize > size * 8  # the file ends inside it: the events before the cut are read (as decode)
        need = (psize if not cut else size * 8 - pos * 8) // 32 + 1
        if len(out) // N_ROWCOLS + need > cap:
            code, stop_at = ST_ROWS_FULL, need
            break
        tsb = regs[roles[ROLE_TSB]] if roles[ROLE_TSB] >= 0 else 0
        clock[0] = tsb
        cpu = regs[roles[ROLE_CPU]] if roles[ROLE_CPU] >= 0 else -1
        pk_back = 1 if tsb < last_ev else 0
        pk = [
            pos,
            tsb,
            regs[roles[ROLE_TSE]] if roles[ROLE_TSE] >= 0 else 0,
            regs[roles[ROLE_DISC]] if roles[ROLE_DISC] >= 0 else 0,
            cpu,
            csize,
            psize,
            0,  # events
            0,  # status
            regs[roles[ROLE_SEQ]] if roles[ROLE_SEQ] >= 0 else -1,
            pk_back,
        ]
        back0, last0 = back, last_ev
        back += pk_back
        limit = min(pos * 8 + csize, size * 8)
        bit = end
        hdr_s, hdr_e, ctx_s, ctx_e = stream_progs[sid][2:6]
        hdr = headers[sid]
        fast = hdr[H_FAST]
        info = infos.get(sid)
        if info is None:  # what the loop asks of each event id of this stream class, in one tuple
            info = infos[sid] = [
                (
                    event_progs[sid][e][0] >= 0,
                    general[sid][e],
                    want[sid][e],
                    *skips[sid][e],
                    reads[sid][e][N_VALUES][0],
                    *reads[sid][e][N_VALUES][1:4],
                )
                for e in range(max_id)
            ]
        # LTTng's compact and large headers: byte-aligned, the time right after the id (no padding between).
        word_bits = 0
        hdr_align = hdr[H_ALIGN] or 1
        ts_align = hdr[H_TSALIGN] or 1
        if fast and hdr_align % 8 == 0 and hdr_align % ts_align == 0 and hdr[H_IDBITS] % ts_align == 0:
            id_bits, ts_bits, ext = hdr[H_IDBITS], hdr[H_TSBITS], hdr[H_EXT]
            word_bits = id_bits + ts_bits
            word_bytes = (word_bits + 7) >> 3
            id_mask, ts_mask = (1 << id_bits) - 1, (1 << ts_bits) - 1
            ts_high = ~ts_mask
        status = 0
        nrows0 = len(out)
        packet_ids: list[int] = []
        while bit < limit:
            ev_start = bit
            prev = clock[0]
            at = (bit + hdr_align - 1) & -hdr_align
            if word_bits and at + word_bits <= limit:
                # The compact header (id and time in one little-endian word) read at once, as _header would.
                w = int.from_bytes(buf[at >> 3 : (at >> 3) + word_bytes], "little")
                eid = w & id_mask
                if eid < ext:  # _clock_extend inlined (once per event)
                    v = (w >> id_bits) & ts_mask
                    cur = clock[0]
                    new = (cur & ts_high) | v
                    if v < (cur & ts_mask):
                        new += ts_mask + 1
                    clock[0] = new if 0 <= new <= _I64_MAX else _wrap64(new)
                    b = at + word_bits
                else:
                    b, eid = _header(buf, bit, limit, hdr, clock)
            elif fast:
                b, eid = _header(buf, bit, limit, hdr, clock)
            else:
                if rext >= 0:
                    regs[rext] = -1
                b = _run(ops, hdr_s, hdr_e, buf, bit, limit, regs, clock)
                eid = regs[rext] if rext >= 0 and regs[rext] >= 0 else (regs[rid] if rid >= 0 else 0)
            if b < 0:
                if b == -1 and limit - bit < 64:
                    break
                status = ST_OVERRUN if b == -1 else ST_UNSUPPORTED
                break
            if clock[0] < prev:
                back += 1
            last_ev = clock[0]
            if eid < 0 or eid >= max_id:
                status = ST_UNKNOWN_ID
                bad_eid, bad_sid = eid, sid
                break
            known, gen, kind, a, bits, fixed_reads, ctx_skip, ctx_a, ctx_bits = info[eid]
            if not known:
                status = ST_UNKNOWN_ID
                bad_eid, bad_sid = eid, sid
                break
            if gen:
                status = ST_GENERAL
                bad_eid, bad_sid = eid, sid
                break
            if ctx_e > ctx_s:
                if ctx_skip:  # a fixed-size context nothing of this event reads: stepped over
                    b = ((b + ctx_a - 1) & -ctx_a) + ctx_bits
                    if b > limit:
                        b = -1
                else:
                    cf = ctx_fixed[sid]
                    b = (
                        _run_fixed(cf, buf, b, limit, regs)
                        if cf is not None
                        else _run(ops, ctx_s, ctx_e, buf, b, limit, regs, clock)
                    )
            base = -1
            if b >= 0:
                if a > 0 and (kind == 0 or fixed_reads):
                    base = (b + a - 1) & -a
                    b = base + bits
                    if b > limit:
                        b = -1
                else:
                    prog = event_progs[sid][eid]
                    b = _run(ops, prog[0], prog[1], buf, b, limit, regs, clock)
            if b < 0:
                status = ST_OVERRUN if b == -1 else ST_BAD_TAG if b == -3 else ST_UNSUPPORTED
                bad_eid, bad_sid = eid, sid
                break
            bit = b
            packet_ids.append(eid)
            if kind:
                row = [kind, eid, clock[0], ev_start >> 3, cpu]
                if base < 0:  # every value from the registers its program set
                    row += [regs[r] if r >= 0 else 0 for r in emit[sid][eid]]
                else:  # the value columns read as field_reads says (see _RowReads)
                    rr = row_reads.get((sid, eid))
                    if rr is None:
                        rr = row_reads[(sid, eid)] = _row_reads(reads[sid][eid], emit[sid][eid])
                    if rr.constant:  # nothing read (a syscall entry: most events of a --syscall -a session)
                        put(row)
                        put(rr.consts)
                        continue
                    row += rr.consts
                    if rr.packed is not None and not base & 7:
                        for k, v in zip(rr.packed_cols, rr.packed.unpack_from(buf, base >> 3), strict=True):
                            row[k] = v
                    else:
                        for k, at, bits, flags in rr.ints:
                            row[k] = _read(buf, base + at, bits, flags & 1, flags >> 1)
                    for k, r in rr.regs:
                        row[k] = regs[r]
                    for k, at in rr.bytepos:
                        row[k] = (base + at) >> 3
                put(row)
        if status == ST_GENERAL:  # undo this packet: the caller decodes it whole, then calls again after it
            del out[nrows0:]
            back, last_ev = back0, last0
            code, stop_at = status, pos
            break
        if cut and status in (0, ST_OVERRUN):  # the last event (or the next header) runs past the cut
            status = ST_TRUNCATED
            bad_eid = bad_sid = -1
        for eid, n in Counter(packet_ids).items():  # counted in C, not one Python step per event
            seen[(sid, eid)] = seen.get((sid, eid), 0) + n
        pk[7] = len(packet_ids)
        pk[8] = status
        out_packets.append(pk)
        nev += len(packet_ids)
        pos = min(pos + psize // 8, size)
        if status:
            code = status
            stop_at = bit >> 3
            break
    for (sid, eid), n in seen.items():
        counts[sid, eid] += n
    if out:
        rows[: len(out) // N_ROWCOLS] = np.array(out, dtype=np.int64).reshape(-1, N_ROWCOLS)
    if out_packets:
        packets[: len(out_packets)] = out_packets
    state[0] = pos
    state[1] = len(out) // N_ROWCOLS
    state[2] = len(out_packets)
    state[3] = code
    state[4] = stop_at
    state[5] = nev
    state[6] = back
    state[7] = last_ev
    if state.shape[0] >= N_STATE:
        state[8] = bad_eid
        state[9] = bad_sid


_SWITCH, _WAKING, _WAKEUP_NEW, _PROCESS_EXIT, _MIGRATE = (
    int(Kind.SWITCH),
    int(Kind.WAKING),
    int(Kind.WAKEUP_NEW),
    int(Kind.PROCESS_EXIT),
    int(Kind.MIGRATE),
)


def engine_columns(
    rows: npt.NDArray[np.int64],
    below: int,
    letters: npt.NDArray[np.int64],
    wake_shift: int,
    cols: npt.NDArray[np.int64],
    ts: npt.NDArray[np.float64],
) -> int:
    """:func:`collectors.ctf.decode.engine_columns` with numpy masks (the same columns)."""
    keep = rows[rows[:, R_KIND] < below]
    n = len(keep)
    kind = keep[:, R_KIND]
    v = keep[:, R_V0:]
    cols[0, :n] = kind
    cols[1, :n] = keep[:, R_CPU]
    cols[2, :n] = keep[:, R_OFF]
    ts[:n] = keep[:, R_TS] / 1e9
    pid = np.zeros(n, dtype=np.int64)
    prio = np.zeros(n, dtype=np.int64)
    next_pid = np.zeros(n, dtype=np.int64)
    next_prio = np.zeros(n, dtype=np.int64)
    state = np.zeros(n, dtype=np.int64)
    sw = kind == _SWITCH
    pid[sw], prio[sw], next_pid[sw], next_prio[sw] = v[sw, 0], v[sw, 1] + 100, v[sw, 3], v[sw, 4] + 100
    state[sw] = letters[v[sw, 2] & 0xFF]
    wk = (kind >= _WAKING) & (kind <= _WAKEUP_NEW)
    pid[wk], prio[wk], next_pid[wk] = v[wk, 0], v[wk, 1] + wake_shift, v[wk, 2]
    ex = kind == _PROCESS_EXIT
    pid[ex], prio[ex] = v[ex, 0], v[ex, 1] + wake_shift
    mg = kind == _MIGRATE
    pid[mg], prio[mg], next_pid[mg], next_prio[mg] = v[mg, 0], v[mg, 1] + wake_shift, v[mg, 2], v[mg, 3]
    num = (
        ((kind >= Kind.IRQ_ENTRY) & (kind <= Kind.IRQ_EXIT))
        | ((kind >= Kind.SOFTIRQ_RAISE) & (kind <= Kind.SOFTIRQ_EXIT))
        | (kind == Kind.LOST)
    )
    pid[num] = v[num, 0]
    for k, col in enumerate((pid, prio, next_pid, next_prio, state)):
        cols[3 + k, :n] = col
    return n


def string_keys(
    buf: npt.NDArray[np.uint8], off: npt.NDArray[np.int64], length: npt.NDArray[np.int64], salt: int
) -> npt.NDArray[np.uint64]:
    """:func:`collectors.ctf.decode.string_keys` in Python (FNV-1a, the same 64-bit keys)."""
    out = np.empty(len(off), dtype=np.uint64)
    prime = 0x100000001B3
    data = _data(buf) if len(off) else b""
    for i, (o, n) in enumerate(zip(off.tolist(), length.tolist(), strict=True)):
        h = ((salt * 0x9E3779B97F4A7C15) & _U64) ^ (n & _U64)
        for byte in data[o : min(o + n, len(data))] if n > 0 else b"":
            h = ((h ^ byte) * prime) & _U64
        out[i] = h
    return out
