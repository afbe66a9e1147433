"""The compiled CTF decoder: one numba loop runs the layout programs of :mod:`collectors.ctf.layouts`.

:func:`decode` walks a stream file packet by packet and event by event, runs the programs, keeps the
clock (N-bit timestamps extended from the last full one, as CTF 1.8 section 8 says), counts every event
by id, and writes one row per *wanted* event (see :mod:`collectors.ctf.layouts` for the programs and
the row layout).  :mod:`collectors.ctf.plain` is the same decoder in plain Python, for inputs too small
to be worth compiling (and for a machine where the compiled code is not built yet); the two give the
same rows (tests/collectors/test_ctf_plain.py).

The hot paths do not interpret: an event header of LTTng's shape is read by straight-line code
(:func:`_header`), an event of fixed size that is not wanted is stepped over in one move, and a wanted
one has the value columns it keeps read straight from their offsets
(:func:`collectors.ctf.layouts.field_reads`); only variable-size payloads (strings, sequences,
variants) run their programs.
"""

from __future__ import annotations

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
    MAX_LOOPS,
    N_PKTCOLS,
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
    P_BACK,
    P_CONTENT,
    P_CPU,
    P_DISC,
    P_EVENTS,
    P_OFF,
    P_SEQ,
    P_SIZE,
    P_STATUS,
    P_TSB,
    P_TSE,
    R_CPU,
    R_EID,
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
)
from forensics.jit import compiled, njit
from forensics.types.trace import Kind

# The helpers below are compiled functions, not inline="always": numba then re-types the interpreter at each
# of the four call sites, which made the first compile 19.5 s of CPU (6.5 s without) for 0.05 s less
# decoding per 2 M events (forensics/jit.py: cached per user, the compile announced).


@compiled
def _read(
    buf: npt.NDArray[np.uint8], bitpos: int, size: int | np.int64, signed: int | np.int64, big: int | np.int64
) -> int:
    """The integer of ``size`` bits at ``bitpos`` (CTF bit order: LSB first for little endian)."""
    byte = bitpos >> 3
    shift = bitpos & 7
    nbytes = (shift + size + 7) >> 3
    v = np.uint64(0)
    if nbytes > 8:  # 58 bits or more at a bit offset: 64 bits and the ninth byte's share
        last = np.uint64(buf[byte + 8])
        if big:
            for k in range(8):
                v = (v << np.uint64(8)) | np.uint64(buf[byte + k])
            r = 72 - shift - size
            v = (v << np.uint64(8 - r)) | (last >> np.uint64(r))
        else:
            for k in range(8):
                v |= np.uint64(buf[byte + k]) << np.uint64(8 * k)
            v = (v >> np.uint64(shift)) | (last << np.uint64(64 - shift))
    elif big:
        for k in range(nbytes):
            v = (v << np.uint64(8)) | np.uint64(buf[byte + k])
        v = v >> np.uint64(nbytes * 8 - shift - size)
    else:
        for k in range(nbytes):
            v |= np.uint64(buf[byte + k]) << np.uint64(8 * k)
        v = v >> np.uint64(shift)
    if size < 64:
        v &= (np.uint64(1) << np.uint64(size)) - np.uint64(1)
        if signed and (v >> np.uint64(size - 1)) & np.uint64(1):
            return int(np.int64(v) - (np.int64(1) << np.int64(size)))
    return int(np.int64(v))


@compiled
def _run(
    ops: npt.NDArray[np.int64],
    start: int,
    end: int,
    buf: npt.NDArray[np.uint8],
    pos: int,
    limit: int,
    regs: npt.NDArray[np.int64],
    clock: npt.NDArray[np.int64],
    stack: npt.NDArray[np.int64],
) -> int:
    """Run ops[start:end] from bit ``pos``; the new position, -1 past ``limit`` (bits), -2 on OP_FAIL,
    -3 when a variant's tag selects no option.  ``stack`` (MAX_LOOPS, 2): open loops (body start, left)."""
    i = start
    sp = 0
    while i < end:
        op = ops[i, 0]
        if op == OP_INT:
            a = ops[i, 1]
            pos = (pos + a - 1) & -a  # alignments are powers of two (checked when compiled)
            size = ops[i, 2]
            if pos + size > limit:
                return -1
            v = _read(buf, pos, size, ops[i, 3], ops[i, 4])
            pos += size
            r = ops[i, 5]
            if r >= 0:
                regs[r] = v
            if ops[i, 6]:  # maps to the clock: extend the N-bit value from the last full one
                _clock_extend(clock, v, size)
        elif op == OP_STR:
            p = (pos + 7) >> 3
            regs[ops[i, 1]] = p
            lim = limit >> 3
            q = p
            while q < lim and buf[q] != 0:
                q += 1
            if q >= lim:
                return -1
            regs[ops[i, 2]] = q - p
            pos = (q + 1) << 3
        elif op in (OP_ARRAY, OP_SEQ):
            a = ops[i, 1]
            pos = (pos + a - 1) & -a  # alignments are powers of two (checked when compiled)
            n = ops[i, 2] if op == OP_ARRAY else regs[ops[i, 2]]
            bits = n * ops[i, 3]
            if n < 0 or pos + bits > limit:
                return -1
            regs[ops[i, 4]] = pos >> 3
            regs[ops[i, 5]] = n
            pos += bits
        elif op == OP_ALIGN:
            a = ops[i, 1]
            pos = (pos + a - 1) & -a  # alignments are powers of two (checked when compiled)
        elif op == OP_IFRANGE:
            v = regs[ops[i, 1]]
            if v < ops[i, 2] or v > ops[i, 3]:
                i += ops[i, 4]
        elif op == OP_LOOP:
            a = ops[i, 1]
            pos = (pos + a - 1) & -a  # alignments are powers of two (checked when compiled)
            n = regs[ops[i, 2]] if ops[i, 3] else ops[i, 2]
            least = ops[i, 7]  # bits an element takes at least: more elements than fit is damage
            if n < 0 or (n * least > limit - pos if least else n > MAX_EMPTY):
                return -1
            regs[ops[i, 5]] = pos >> 3
            regs[ops[i, 6]] = n
            if n == 0:
                i += ops[i, 4]  # past OP_ENDLOOP
            else:
                stack[sp, 0] = i + 1
                stack[sp, 1] = n - 1
                sp += 1
        elif op == OP_ENDLOOP:
            if stack[sp - 1, 1] > 0:
                stack[sp - 1, 1] -= 1
                i = stack[sp - 1, 0]
                continue
            sp -= 1
        elif op == OP_SET:
            regs[ops[i, 1]] = ops[i, 2]
        elif op == OP_FAILIF:
            if regs[ops[i, 1]] == 0:
                return -3
        elif op == OP_CLEAR:
            regs[ops[i, 1]] = -1
        else:
            return -2
        i += 1
    return pos


@compiled
def _clock_extend(clock: npt.NDArray[np.int64], v: int, size: int) -> None:
    """Extend the N-bit time ``v`` from the last full one (CTF 1.8 section 8)."""
    if size >= 64:
        clock[0] = v
    else:
        mask = (np.int64(1) << size) - 1
        cur = clock[0]
        new = (cur & ~mask) | v
        if v < (cur & mask):
            new += mask + 1
        clock[0] = new


@compiled
def _header(
    buf: npt.NDArray[np.uint8], pos: int, limit: int, hdr: npt.NDArray[np.int64], clock: npt.NDArray[np.int64]
) -> tuple[int, int]:
    """The LTTng event header at bit ``pos`` (see :func:`_header_shape`): (new position or -1, event id).

    The same reads, in the same order and with the same bounds checks, as its program.  Each literal
    argument list makes numba compile another copy of ``_read``: the hot one (``size, 0, 0``: id and time of
    every event) keeps its copy, where the constants spare the sign and byte-order branches; the extended
    header's two reads pass ``np.int64`` values and use the general ``_read`` (two copies fewer: 0.5 s of
    the decoder's compile).
    """
    zero = np.int64(0)
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
        eid = _read(buf, pos, np.int64(32), zero, zero)  # (rare: an extended header)
        pos += 32
        a = hdr[H_XTSALIGN]
        pos = (pos + a - 1) & -a
        if pos + 64 > limit:
            return -1, 0
        clock[0] = _read(buf, pos, np.int64(64), zero, zero)
        pos += 64
    return pos, eid


def run(
    lay: Layouts,
    buf: npt.NDArray[np.uint8],
    pos: int,
    want: npt.NDArray[np.int64],
    emit: npt.NDArray[np.int64],
    reads: npt.NDArray[np.int64],
    counts: npt.NDArray[np.int64],
    rows: npt.NDArray[np.int64],
    packets: npt.NDArray[np.int64],
    state: npt.NDArray[np.int64],
) -> None:
    """:func:`decode` with the programs of ``lay``."""
    decode(buf, pos, *lay.programs(), want, emit, reads, counts, rows, packets, state)


_SWITCH, _WAKING, _WAKEUP_NEW, _PROCESS_EXIT, _MIGRATE = (
    int(Kind.SWITCH),
    int(Kind.WAKING),
    int(Kind.WAKEUP_NEW),
    int(Kind.PROCESS_EXIT),
    int(Kind.MIGRATE),
)
_IRQ_ENTRY, _IRQ_EXIT, _SOFTIRQ_RAISE, _SOFTIRQ_EXIT = (
    int(Kind.IRQ_ENTRY),
    int(Kind.IRQ_EXIT),
    int(Kind.SOFTIRQ_RAISE),
    int(Kind.SOFTIRQ_EXIT),
)
_LOST = int(Kind.LOST)


@compiled
def engine_columns(
    rows: npt.NDArray[np.int64],
    below: int,
    letters: npt.NDArray[np.int64],
    wake_shift: int,
    cols: npt.NDArray[np.int64],
    ts: npt.NDArray[np.float64],
) -> int:
    """The scheduling engine's columns of the rows whose kind is below ``below``, in one pass.

    ``cols`` (8, len(rows)) receives kind, cpu, byte offset, pid, prio, next pid, next prio, state
    (``letters[prev_state & 0xFF]`` for a switch), ``ts`` the time in seconds; returns the rows kept.
    Switch priorities get 100 added back (lttng-modules records them minus 100), wakeup, exit and migrate ones
    ``wake_shift``; a migrate's next pid and next prio are its dest_cpu and orig_cpu; an IRQ, softirq or lost
    marker keeps its number (or count) as pid.
    """
    n = 0
    for i in range(rows.shape[0]):
        kind = rows[i, R_KIND]
        if kind >= below:
            continue
        cols[0, n] = kind
        cols[1, n] = rows[i, R_CPU]
        cols[2, n] = rows[i, R_OFF]
        ts[n] = rows[i, R_TS] / 1e9
        v0 = rows[i, R_V0]
        pid = prio = next_pid = next_prio = state = 0
        if kind == _SWITCH:
            pid, prio, next_pid, next_prio = v0, rows[i, R_V0 + 1] + 100, rows[i, R_V0 + 3], rows[i, R_V0 + 4] + 100
            state = letters[rows[i, R_V0 + 2] & 0xFF]
        elif _WAKING <= kind <= _WAKEUP_NEW:
            pid, prio, next_pid = v0, rows[i, R_V0 + 1] + wake_shift, rows[i, R_V0 + 2]
        elif kind == _PROCESS_EXIT:
            pid, prio = v0, rows[i, R_V0 + 1] + wake_shift
        elif kind == _MIGRATE:  # next pid: the CPU it moved to, next prio: the one it left (as the text parsers)
            pid, prio, next_pid, next_prio = v0, rows[i, R_V0 + 1] + wake_shift, rows[i, R_V0 + 2], rows[i, R_V0 + 3]
        elif _IRQ_ENTRY <= kind <= _IRQ_EXIT or _SOFTIRQ_RAISE <= kind <= _SOFTIRQ_EXIT or kind == _LOST:
            pid = v0
        cols[3, n] = pid
        cols[4, n] = prio
        cols[5, n] = next_pid
        cols[6, n] = next_prio
        cols[7, n] = state
        n += 1
    return n


@compiled
def string_keys(
    buf: npt.NDArray[np.uint8], off: npt.NDArray[np.int64], length: npt.NDArray[np.int64], salt: int
) -> npt.NDArray[np.uint64]:
    """Per string (byte offset and length in ``buf``) a 64-bit FNV-1a hash of ``salt``, its length and bytes."""
    out = np.empty(len(off), dtype=np.uint64)
    prime = np.uint64(0x100000001B3)
    for i in range(len(off)):
        h = (np.uint64(salt) * np.uint64(0x9E3779B97F4A7C15)) ^ np.uint64(length[i])
        end = min(off[i] + length[i], len(buf))
        for k in range(off[i], end):
            h = (h ^ np.uint64(buf[k])) * prime
        out[i] = h
    return out


@njit("the LTTng (CTF) decoder", 7.0)
def decode(
    buf: npt.NDArray[np.uint8],
    pos: int,
    ops: npt.NDArray[np.int64],
    stream_progs: npt.NDArray[np.int64],
    event_progs: npt.NDArray[np.int64],
    roles: npt.NDArray[np.int64],
    skips: npt.NDArray[np.int64],
    headers: npt.NDArray[np.int64],
    general: npt.NDArray[np.int64],
    want: npt.NDArray[np.int64],
    emit: npt.NDArray[np.int64],
    reads: npt.NDArray[np.int64],
    counts: npt.NDArray[np.int64],
    rows: npt.NDArray[np.int64],
    packets: npt.NDArray[np.int64],
    state: npt.NDArray[np.int64],
) -> None:
    """Decode whole packets from byte ``pos`` until the rows could not hold the next packet, or the file ends.

    ``want[s, id]``: the row kind of a wanted event (0: counted only);
    ``emit[s, id, k]``: the register of value column ``k`` (-1: 0).  ``state``
    in: [0] rows capacity, [7] the stream's last event time so far; out: [0] next packet's byte offset, [1] rows
    written, [2] packets written, [3] stop code, [4] byte offset of the stop,
    [5] events decoded, [6] timestamps that went back, [7] the last event time; when ``state`` has
    N_STATE entries, [8] and [9] the event id and stream class an error stopped at (-1: none).  Stopped at
    ST_ROWS_FULL, [4] is the rows the next packet needs; at ST_GENERAL, [0] and [4] are the byte offset
    of a packet holding an event whose ``general[s, id]`` is set: nothing of it was written or counted.
    """
    regs = np.zeros(N_REGS, dtype=np.int64)
    clock = np.zeros(1, dtype=np.int64)
    stack = np.zeros((MAX_LOOPS, 2), dtype=np.int64)
    seen = np.zeros(1024, dtype=np.int64)  # the ids of the current packet's events, counted when it ends
    bad_eid = -1
    bad_sid = -1
    cap = state[0]
    nrows = 0
    npk = 0
    nev = 0
    back = 0
    last_ev = state[7]
    size = len(buf)
    code = ST_END
    stop_at = pos
    n_streams = stream_progs.shape[0]
    max_id = event_progs.shape[1]
    while pos < size and npk < packets.shape[0]:
        # The packet header and context (stream class 0's program: LTTng has one packet context per trace).
        regs[:] = -1
        clock[0] = 0
        end = _run(ops, stream_progs[0, 0], stream_progs[0, 1], buf, pos * 8, size * 8, regs, clock, stack)
        if end < 0:
            code = ST_TRUNCATED
            stop_at = pos
            break
        if roles[ROLE_MAGIC] >= 0 and regs[roles[ROLE_MAGIC]] != 0xC1FC1FC1:
            code = ST_BAD_MAGIC
            stop_at = pos
            break
        sid = regs[roles[ROLE_STREAM]] if roles[ROLE_STREAM] >= 0 else 0
        if sid < 0 or sid >= n_streams or stream_progs[sid, 2] < 0:
            code = ST_BAD_STREAM
            stop_at = pos
            break
        psize = regs[roles[ROLE_SIZE]] if roles[ROLE_SIZE] >= 0 else (size - pos) * 8
        csize = regs[roles[ROLE_CONTENT]] if roles[ROLE_CONTENT] >= 0 else psize
        if psize <= 0 or csize > psize:
            code = ST_BAD_MAGIC
            stop_at = pos
            break
        # A packet the file ends inside (a stream file cut short): its events that end before the cut are still
        # read (limit: the file's end), then the stream stops there with ST_TRUNCATED.
        cut = pos * 8 + psize > size * 8
        # An event takes at least 32 bits (the smallest LTTng header): rows never overflow (a cut packet: the bits
        # in the file).
        need = (psize if not cut else size * 8 - pos * 8) // 32 + 1
        if nrows + need > cap:
            code = ST_ROWS_FULL
            stop_at = need  # with no row written: the caller grows the rows to this and calls again
            break
        tsb = regs[roles[ROLE_TSB]] if roles[ROLE_TSB] >= 0 else 0
        clock[0] = tsb
        cpu = regs[roles[ROLE_CPU]] if roles[ROLE_CPU] >= 0 else -1
        pk = packets[npk]
        pk[P_OFF] = pos
        pk[P_TSB] = tsb
        pk[P_TSE] = regs[roles[ROLE_TSE]] if roles[ROLE_TSE] >= 0 else 0
        pk[P_DISC] = regs[roles[ROLE_DISC]] if roles[ROLE_DISC] >= 0 else 0
        pk[P_CPU] = cpu
        pk[P_CONTENT] = csize
        pk[P_SIZE] = psize
        pk[P_SEQ] = regs[roles[ROLE_SEQ]] if roles[ROLE_SEQ] >= 0 else -1
        pk[P_STATUS] = 0
        back0, last0 = back, last_ev
        pk[P_BACK] = 1 if tsb < last_ev else 0  # the packet starts before the last event of the one before
        back += pk[P_BACK]
        limit = min(pos * 8 + csize, size * 8)
        bit = end
        events = 0
        hdr_s, hdr_e = stream_progs[sid, 2], stream_progs[sid, 3]
        ctx_s, ctx_e = stream_progs[sid, 4], stream_progs[sid, 5]
        rid, rext = roles[ROLE_ID], roles[ROLE_EXT_ID]
        hdr = headers[sid]
        fast = hdr[H_FAST]
        status = 0
        if psize // 32 + 1 > seen.shape[0]:
            seen = np.zeros(psize // 32 + 1, dtype=np.int64)
        nrows0 = nrows
        while True:
            # An event header never starts in the last bits of padding: stop when no whole header fits.
            if bit >= limit:
                break
            ev_start = bit
            prev = clock[0]
            if fast:
                b, eid = _header(buf, bit, limit, hdr, clock)
            else:
                if rext >= 0:
                    regs[rext] = -1
                b = _run(ops, hdr_s, hdr_e, buf, bit, limit, regs, clock, stack)
                eid = regs[rext] if rext >= 0 and regs[rext] >= 0 else (regs[rid] if rid >= 0 else 0)
            if b < 0:
                if b == -1 and limit - bit < 64:  # padding at the end of the content
                    break
                status = ST_OVERRUN if b == -1 else ST_UNSUPPORTED
                break
            if clock[0] < prev:
                back += 1
            last_ev = clock[0]
            if eid < 0 or eid >= max_id or event_progs[sid, eid, 0] < 0:
                status = ST_UNKNOWN_ID
                bad_eid, bad_sid = eid, sid
                break
            if general[sid, eid]:  # a layout the programs cannot express: the whole packet goes to Python
                status = ST_GENERAL
                bad_eid, bad_sid = eid, sid
                break
            if ctx_e > ctx_s:
                if reads[sid, eid, N_VALUES, 1]:  # a fixed-size context nothing of this event reads: stepped over
                    a = reads[sid, eid, N_VALUES, 2]
                    b = ((b + a - 1) & -a) + reads[sid, eid, N_VALUES, 3]
                    if b > limit:
                        b = -1
                else:
                    b = _run(ops, ctx_s, ctx_e, buf, b, limit, regs, clock, stack)
            kind = want[sid, eid]
            base = -1
            if b >= 0:
                a = skips[sid, eid, 0]
                if a > 0 and (kind == 0 or reads[sid, eid, N_VALUES, 0]):
                    # Fixed size: step over it (its kept fields are read below, from its aligned start).
                    base = (b + a - 1) & -a
                    b = base + skips[sid, eid, 1]
                    if b > limit:
                        b = -1
                else:
                    b = _run(ops, event_progs[sid, eid, 0], event_progs[sid, eid, 1], buf, b, limit, regs, clock, stack)
            if b < 0:
                status = ST_OVERRUN if b == -1 else ST_BAD_TAG if b == -3 else ST_UNSUPPORTED
                bad_eid, bad_sid = eid, sid
                break
            bit = b
            seen[events] = eid
            events += 1
            if kind:
                row = rows[nrows]
                row[R_KIND] = kind
                row[R_EID] = eid
                row[R_TS] = clock[0]
                row[R_OFF] = ev_start >> 3
                row[R_CPU] = cpu
                for k in range(N_VALUES):
                    how = reads[sid, eid, k, 0]
                    if base < 0 or how == F_REG:
                        r = emit[sid, eid, k]
                        row[R_V0 + k] = regs[r] if r >= 0 else 0
                    elif how == F_INT:
                        flags = reads[sid, eid, k, 3]
                        row[R_V0 + k] = _read(
                            buf, base + reads[sid, eid, k, 1], reads[sid, eid, k, 2], flags & 1, flags >> 1
                        )
                    elif how == F_BYTEPOS:
                        row[R_V0 + k] = (base + reads[sid, eid, k, 1]) >> 3
                    else:
                        row[R_V0 + k] = reads[sid, eid, k, 1]
                nrows += 1
        if status == ST_GENERAL:  # undo this packet: the caller decodes it whole, then calls again after it
            nrows = nrows0
            back, last_ev = back0, last0
            code = status
            stop_at = pos
            break
        if cut and status in (0, ST_OVERRUN):  # the last event (or the next header) runs past the cut
            status = ST_TRUNCATED
            bad_eid, bad_sid = -1, -1
        for k in range(events):
            counts[sid, seen[k]] += 1
        pk[P_EVENTS] = events
        pk[P_STATUS] = status
        nev += events
        npk += 1
        if status:
            code = status
            stop_at = bit >> 3
            pos = min(pos + psize // 8, size)
            break
        pos += psize // 8
    state[0] = pos
    state[1] = nrows
    state[2] = npk
    state[3] = code
    state[4] = stop_at
    state[5] = nev
    state[6] = back
    state[7] = last_ev
    if state.shape[0] >= N_STATE:
        state[8] = bad_eid
        state[9] = bad_sid


def warm_up() -> None:
    """Run each kernel once on empty input of the types the reader passes (compiles them, or loads the cache).

    What ``python -m forensics.pipelines.build`` runs so that the first large LTTng session does not wait.
    """
    i64 = np.int64
    lay = Layouts(
        ops=np.zeros((0, 8), dtype=i64),
        stream_progs=np.zeros((1, 6), dtype=i64),
        event_progs=np.zeros((1, 1, 2), dtype=i64),
        roles=np.full(11, -1, dtype=i64),
        names={},
        regs={},
        ctx_regs={},
        unsupported={},
        packet_unsupported=None,
        skips=np.zeros((1, 1, 2), dtype=i64),
        headers=np.zeros((1, 8), dtype=i64),
        general=np.zeros((1, 1), dtype=i64),
    )
    buf = np.frombuffer(b"", dtype=np.uint8)  # read-only, as a mapped stream file
    two, three = np.zeros((1, 1), dtype=i64), np.zeros((1, 1, N_VALUES), dtype=i64)
    reads = np.zeros((1, 1, N_VALUES + 1, 4), dtype=i64)
    state = np.zeros(N_STATE, dtype=i64)
    rows, packets = np.zeros((1, N_ROWCOLS), dtype=i64), np.zeros((1, N_PKTCOLS), dtype=i64)
    run(lay, buf, 0, two, three, reads, two.copy(), rows, packets, state)
    engine_columns(rows[:0], 100, np.zeros(256, dtype=i64), 0, np.zeros((8, 0), dtype=i64), np.zeros(0))
    string_keys(buf, np.zeros(0, dtype=i64), np.zeros(0, dtype=i64), 0)
