"""The compiled line scanner of the trace reader: bracket-layout trace text to event columns.

:func:`scan` reads the lines of a byte buffer that are in the common tracefs
form (``comm-pid [cpu] flags ts: event: payload``) with the kernel's payload
formats, at machine speed (numba), and writes one row of columns per event the
analyses use.  It stops at the first line it does not take whole (comments,
markers, other payload formats, garbage, anything unusual) and hands that line
back: the line parser of :mod:`collectors.trace_text` parses it, so the
result is always what the line parser alone would give (tests compare both).

Numbers are read exactly as Python reads them: a timestamp ``S.F`` is the
integer ``SF`` divided by ``10**len(F)``; both are exact doubles (at most 15
digits), so the IEEE division gives the same correctly rounded double as
``float(b"S.F")``.  Longer numbers go to the line parser.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from collectors.trace_rows import (
    A_E,
    A_S,
    B_E,
    B_S,
    C_E,
    C_S,
    CPU,
    DONE,
    FULL,
    KIND,
    LINE_E,
    LINE_NO,
    LINE_S,
    N_COLS,
    NEXT_PID,
    NEXT_PRIO,
    PID,
    PRIO,
    SLOW,
    ST_EVENTS,
    ST_LINE_NO,
    ST_POS,
    ST_ROWS,
    ST_SLOW_E,
    ST_SLOW_S,
    ST_STOP,
    ST_UNKNOWN,
    ST_USED,
    ST_WAKING,
    STATE,
)
from forensics.jit import compiled, inline, njit, word_intrinsics
from forensics.types.trace import EVENT_KINDS, PLUGIN_STATE_LETTERS

# Unaligned 8-byte loads (compare texts and look for bytes 8 at a time) and arrays without reference
# counts (every helper call counted references to each array it was passed: an atomic operation each,
# 5 % of a run's CPU time).  See forensics.jit.word_intrinsics.
_word, _borrowed = word_intrinsics()
from numba.cpython.unsafe.numbers import trailing_zeros  # noqa: E402 (numba is set up above)

_trailing_zeros: Any = trailing_zeros  # count of trailing zero bits (LLVM's cttz)

# The helpers are plain compiled functions but for the small leaves (_digits, _match, _token_end,
# _has_byte), which numba inlines: LLVM did not, and a call passes the buffer's 7 fields each time.
# Measured on 2 MB of the bench trace (min of 150 runs, 2026-12-04): 189 ns per line before the word
# compares, 164 with them, 145 with the leaves inlined as well (compile 7 -> 10 s of CPU), 122-137
# with _line_end reading unaligned words and taking the newline from the lowest set bit.  Inlining
# every helper made the first compile take 80-130 s of CPU and 4.4 GB of memory for no more speed.

SCAN_COMPILE_S = 10.0  # compile time of scan() on 2 cores, announced on stderr (forensics.jit)
_MAX_DIGITS = 15  # an integer of up to 15 digits is an exact double and fits int64
POW10 = np.array([float(f"1e{k}") for k in range(_MAX_DIGITS + 1)])  # exact doubles
_NAMES = sorted(EVENT_KINDS.items())
NAME_BYTES = np.frombuffer(b"".join(name for name, _ in _NAMES), dtype=np.uint8).copy()
NAME_ENDS = np.cumsum([len(name) for name, _ in _NAMES]).astype(np.int64)
NAME_KINDS = np.array([kind for _, kind in _NAMES], dtype=np.int64)

_SPACE, _NL, _COLON, _LBRACKET, _RBRACKET, _DOT, _MINUS, _HASH, _CR = 32, 10, 58, 91, 93, 46, 45, 35, 13


@inline
def _digits(buf: npt.NDArray[np.uint8], i: int, end: int) -> tuple[int, int]:
    """The value of the digits at ``i`` and the position after them (-1, i when none or too many)."""
    value = 0
    j = i
    while j < end and 48 <= buf[j] <= 57:
        value = value * 10 + (buf[j] - 48)
        j += 1
    if j == i or j - i > _MAX_DIGITS:
        return -1, i
    return value, j


@compiled
def _signed(buf: npt.NDArray[np.uint8], i: int, end: int) -> tuple[int, int, bool]:
    """``-?\\d+`` at ``i``: value, position after, ok."""
    neg = i < end and buf[i] == _MINUS
    value, j = _digits(buf, i + 1 if neg else i, end)
    if value < 0:
        return 0, i, False
    return (-value if neg else value), j, True


@compiled
def _literal(buf: npt.NDArray[np.uint8], i: int, end: int, text: npt.NDArray[np.uint8]) -> bool:
    """True when ``text`` is at ``i`` (before ``end``)."""
    n = len(text)
    if i + n > end:
        return False
    for k in range(n):  # noqa: SIM110 (a plain loop compiles to a plain loop)
        if buf[i + k] != text[k]:
            return False
    return True


_ONES = np.uint64(0x0101010101010101)
_HIGHS = np.uint64(0x8080808080808080)
_SPACES, _LBRACKETS, _RBRACKETS, _COLONS = (np.uint64(0x0101010101010101 * c) for c in (32, 91, 93, 58))


@inline
def _has_byte(x: np.uint64, repeated: np.uint64) -> bool:
    """True when one of the 8 bytes of ``x`` is the byte ``repeated`` holds 8 times (exact, no false hits)."""
    y = x ^ repeated
    return bool(((y - _ONES) & ~y & _HIGHS) != 0)


@inline
def _token_end(buf: npt.NDArray[np.uint8], i: int, end: int) -> int:
    """Position of the first space at or after ``i`` (``end`` when none)."""
    while i + 8 <= end and not _has_byte(_word(buf, i), _SPACES):
        i += 8
    while i < end and buf[i] != _SPACE:
        i += 1
    return i


@compiled
def _timestamp(buf: npt.NDArray[np.uint8], i: int, end: int) -> tuple[float, int]:
    """``\\d+\\.\\d+: `` at ``i``: the time and the position after ``": "`` (-1 when not there)."""
    whole, j = _digits(buf, i, end)
    if whole < 0 or j >= end or buf[j] != _DOT:
        return 0.0, -1
    frac, k = _digits(buf, j + 1, end)
    if frac < 0 or k + 1 >= end or buf[k] != _COLON or buf[k + 1] != _SPACE:
        return 0.0, -1
    n_frac = k - j - 1
    if (j - i) + n_frac > _MAX_DIGITS:
        return 0.0, -1
    scale = POW10[n_frac]
    return (whole * scale + frac) / scale, k + 2


def _lit(text: bytes) -> npt.NDArray[np.uint8]:
    return np.frombuffer(text, dtype=np.uint8).copy()


Lit = tuple[int, np.uint64, np.uint64, np.uint64, np.uint64]


def _wlit(text: bytes) -> Lit:
    """``text`` (at most 16 bytes) as its length and two little-endian words with their masks, for :func:`_match`."""
    assert len(text) <= 16, text
    lo, hi = text[:8], text[8:]
    return (
        len(text),
        np.uint64(int.from_bytes(lo, "little")),
        np.uint64((1 << 8 * len(lo)) - 1),
        np.uint64(int.from_bytes(hi, "little")),
        np.uint64((1 << 8 * len(hi)) - 1),
    )


@inline
def _match(buf: npt.NDArray[np.uint8], i: int, end: int, lit: Lit) -> bool:
    """True when the text of ``lit`` (see :func:`_wlit`) is at ``i`` (before ``end``): ``_literal`` a word at a time."""
    n, w0, m0, w1, m1 = lit
    if i + n > end:
        return False
    if i + 16 <= len(buf):
        return bool(((_word(buf, i) ^ w0) & m0) == 0 and ((_word(buf, i + 8) ^ w1) & m1) == 0)
    for k in range(n):  # near the end of the buffer: byte by byte
        w = w0 if k < 8 else w1
        if buf[i + k] != (w >> np.uint64(8 * (k & 7))) & np.uint64(0xFF):
            return False
    return True


# The texts the scanner compares, as global arrays: numba compiles them in as constants (passed as
# arguments, each call would count references to every one of them: most of the time per line).
SW_HEAD, SW_PID, SW_PRIO, SW_STATE, SW_NEXT = (
    _lit(t) for t in (b"prev_comm=", b" prev_pid=", b" prev_prio=", b" prev_state=", b" ==> next_comm=")
)
SW_NEXT_PID, SW_NEXT_PRIO, ARROW = _lit(b" next_pid="), _lit(b" next_prio="), _lit(b" ==> ")
SWITCH, WAKING, WAKEUP_NEW, WAKEUP = (
    _lit(t) for t in (b"sched_switch:", b"sched_waking:", b"sched_wakeup_new:", b"sched_wakeup:")
)
F_TARGET_NAME, F_CPU = _lit(b"target_cpu="), _lit(b"CPU:")
# trace-cmd's sched_switch plugin prints old state letters: the first letter as the line parser normalises it
_PLUGIN_STATE = np.arange(256, dtype=np.int64)
for _old, _new in PLUGIN_STATE_LETTERS.items():
    _PLUGIN_STATE[_old[0]] = _new[0]
F_PID, F_PRIO, F_TARGET, F_COMM = _lit(b" pid="), _lit(b" prio="), _lit(b" target_cpu="), _lit(b"comm=")
F_VECTOR, F_IRQ, F_NAME, F_VEC = _lit(b"vector="), _lit(b"irq="), _lit(b" name="), _lit(b"vec=")
F_FUNCTION, F_CALLER, F_LB = _lit(b"function "), _lit(b"caller="), _lit(b" [")
# The same texts for _match (the plugin formats' searches keep the arrays above).
W_SW_HEAD, W_SW_PID, W_SW_PRIO, W_SW_STATE, W_SW_NEXT, W_SW_NEXT_PID, W_SW_NEXT_PRIO = (
    _wlit(t)
    for t in (
        b"prev_comm=",
        b" prev_pid=",
        b" prev_prio=",
        b" prev_state=",
        b" ==> next_comm=",
        b" next_pid=",
        b" next_prio=",
    )
)
W_SWITCH, W_WAKING, W_WAKEUP = (_wlit(t) for t in (b"sched_switch:", b"sched_waking:", b"sched_wakeup:"))
W_PID, W_PRIO, W_TARGET, W_COMM = _wlit(b" pid="), _wlit(b" prio="), _wlit(b" target_cpu="), _wlit(b"comm=")
W_VECTOR, W_IRQ, W_NAME, W_VEC = _wlit(b"vector="), _wlit(b"irq="), _wlit(b" name="), _wlit(b"vec=")
W_FUNCTION, W_CALLER = _wlit(b"function "), _wlit(b"caller=")
F_ORIG, F_DEST = _lit(b" orig_cpu="), _lit(b" dest_cpu=")
W_ORIG, W_DEST = _wlit(b" orig_cpu="), _wlit(b" dest_cpu=")


@compiled
def _name_kind(buf: npt.NDArray[np.uint8], s: int, e: int) -> int:
    """The kind of the event named ``buf[s:e]`` (0: not one the analyses use)."""
    n = e - s
    start = 0
    for k in range(len(NAME_ENDS)):
        stop = NAME_ENDS[k]
        if stop - start == n:
            same = True
            for x in range(n):
                if NAME_BYTES[start + x] != buf[s + x]:
                    same = False
                    break
            if same:
                return int(NAME_KINDS[k])
        start = stop
    return 0


@compiled
def _task(buf: Any, a: int, le: int, pid_text: Any, prio_text: Any) -> tuple[int, int, int, int]:
    """``COMM<pid_text>N<prio_text>P`` at ``a`` (no space in COMM): COMM's end, pid, prio, the end (-1: not)."""
    a_end = _token_end(buf, a, le)
    if not _match(buf, a_end, le, pid_text):
        return a_end, 0, 0, -1
    pid, j = _digits(buf, a_end + pid_text[0], le)
    if pid < 0 or not _match(buf, j, le, prio_text):
        return a_end, 0, 0, -1
    prio, j, ok = _signed(buf, j + prio_text[0], le)
    return a_end, pid, prio, (j if ok else -1)


@compiled
def _switch(buf: Any, i: int, le: int, out: Any, r: int) -> bool:
    """A sched_switch payload in the kernel format, no spaces in comms, ending the line; fills row ``r``."""
    if not _match(buf, i, le, W_SW_HEAD):
        return False
    a = i + len(SW_HEAD)
    a_end, pid, prio, j = _task(buf, a, le, W_SW_PID, W_SW_PRIO)
    if j < 0 or not _match(buf, j, le, W_SW_STATE):
        return False
    b = j + len(SW_STATE)
    b_end = _token_end(buf, b, le)
    if b_end == b or not _match(buf, b_end, le, W_SW_NEXT):
        return False
    c = b_end + len(SW_NEXT)
    c_end, npid, nprio, j = _task(buf, c, le, W_SW_NEXT_PID, W_SW_NEXT_PRIO)
    if j != le:
        return False
    _row(out, r, 1, pid, prio, npid, a, a_end)
    out[NEXT_PRIO, r] = nprio
    out[STATE, r] = buf[b]
    out[B_S, r] = b
    out[B_E, r] = b_end
    out[C_S, r] = c
    out[C_E, r] = c_end
    return True


@compiled
def _row(out: Any, r: int, kind: int, pid: int, prio: int, next_pid: int, a_s: int, a_e: int) -> bool:
    """Write the fields every task event has into row ``r``; True."""
    out[KIND, r] = kind
    out[PID, r] = pid
    out[PRIO, r] = prio
    out[NEXT_PID, r] = next_pid
    out[A_S, r] = a_s
    out[A_E, r] = a_e
    return True


@compiled
def _wake(buf: Any, q: int, le: int, out: Any, r: int, kind: int) -> bool:
    """A wakeup payload in the kernel format (``comm=C pid=N prio=P target_cpu=T``) ending the line."""
    a = q + len(F_COMM)
    a_end, pid, prio, j = _task(buf, a, le, W_PID, W_PRIO)
    if j < 0 or not _match(buf, j, le, W_TARGET):
        return False
    target, j = _digits(buf, j + len(F_TARGET), le)
    if target < 0 or j != le:
        return False
    return _row(out, r, kind, pid, prio, target, a, a_end)


@compiled
def _odd_space(buf: Any, q: int, le: int) -> bool:
    """True when ``buf[q:le]`` holds whitespace other than spaces (Python's strip() would take it)."""
    for x in range(q, le):
        c = buf[x]
        if c == 9 or c == 11 or c == 12 or c == _CR:  # noqa: PLR1714
            return True
    return False


@compiled
def _find(buf: Any, lo: int, hi: int, text: Any) -> int:
    """First position of ``text`` wholly inside ``buf[lo:hi]`` (-1: none), as ``bytes.find``."""
    for x in range(lo, hi - len(text) + 1):
        if _literal(buf, x, hi, text):
            return x
    return -1


@compiled
def _rfind(buf: Any, lo: int, hi: int, text: Any) -> int:
    """Last position of ``text`` wholly inside ``buf[lo:hi]`` (-1: none), as ``bytes.rfind``."""
    for x in range(hi - len(text), lo - 1, -1):
        if _literal(buf, x, hi, text):
            return x
    return -1


@compiled
def _rfind_byte(buf: Any, lo: int, hi: int, c: int) -> int:
    """Last position of byte ``c`` in ``buf[lo:hi]`` (-1: none)."""
    for x in range(hi - 1, lo - 1, -1):
        if buf[x] == c:
            return x
    return -1


@compiled
def _find_byte(buf: Any, lo: int, hi: int, c: int) -> int:
    """First position of byte ``c`` in ``buf[lo:hi]`` (-1: none)."""
    for x in range(lo, hi):
        if buf[x] == c:
            return x
    return -1


@compiled
def _number(buf: Any, a: int, b: int) -> tuple[int, bool]:
    """``-?\\d+`` filling ``buf[a:b]`` exactly: value, ok (what int() gives for such text)."""
    value, j, ok = _signed(buf, a, b)
    return value, ok and j == b and b > a


@compiled
def _plugin_task(buf: Any, q: int, le: int) -> tuple[int, int, int, int]:
    """trace-cmd's ``comm:pid [prio]`` in ``buf[q:le]``: pid, prio, the comm's end, ok (1 or 0).

    Read as the line parser reads it: the last " [", the first "]" after it, the last ":" before it.
    """
    lb = _rfind(buf, q, le, F_LB)
    if lb < 0:
        return 0, 0, 0, 0
    rb = _find_byte(buf, lb, le, _RBRACKET)
    colon = _rfind_byte(buf, q, lb, _COLON)
    if rb < 0 or colon < 0:
        return 0, 0, 0, 0
    prio, ok = _number(buf, lb + 2, rb)
    pid, pid_ok = _number(buf, colon + 1, lb)
    if not ok or not pid_ok or pid < 0:
        return 0, 0, 0, 0
    return pid, prio, colon, 1


@compiled
def _wake_plugin(buf: Any, q: int, le: int, out: Any, r: int, kind: int) -> bool:
    """A wakeup in trace-cmd's plugin format: ``comm:pid [prio] CPU:ddd``."""
    if _odd_space(buf, q, le) or _rfind(buf, q, le, F_TARGET_NAME) >= 0:
        return False
    pid, prio, colon, ok = _plugin_task(buf, q, le)
    if not ok:
        return False
    target = -1
    t = _rfind(buf, q, le, F_CPU)
    if t >= 0:
        te = _token_end(buf, t + 4, le)
        target, target_ok = _number(buf, t + 4, te)
        if not target_ok or target < 0:
            return False
    return _row(out, r, kind, pid, prio, target, q, colon)


@compiled
def _switch_plugin(buf: Any, q: int, le: int, out: Any, r: int) -> bool:
    """sched_switch in trace-cmd's plugin format: ``prev:pid [prio] S ==> next:pid [prio]``.

    The state's first letter is normalised as the line parser does (trace-cmd's old letters).
    """
    if _odd_space(buf, q, le):
        return False
    d = _find(buf, q, le, ARROW)
    if d < 0:
        return False
    pid, prio, pc, ok = _plugin_task(buf, q, d)
    if not ok:
        return False
    lb = _rfind(buf, q, d, F_LB)
    s0 = _find_byte(buf, lb, d, _RBRACKET) + 1
    s1 = d
    while s0 < s1 and buf[s0] == _SPACE:
        s0 += 1
    while s1 > s0 and buf[s1 - 1] == _SPACE:
        s1 -= 1
    r0 = d + len(ARROW)
    r1 = le
    while r0 < r1 and buf[r0] == _SPACE:
        r0 += 1
    while r1 > r0 and buf[r1 - 1] == _SPACE:
        r1 -= 1
    npid, nprio, nc, ok = _plugin_task(buf, r0, r1)
    if not ok:
        return False
    state = 0
    if s1 > s0:
        state = _PLUGIN_STATE[buf[s0]]
    _row(out, r, 1, pid, prio, npid, q, pc)
    out[NEXT_PRIO, r] = nprio
    out[STATE, r] = state
    out[B_S, r] = s0
    out[B_E, r] = s1
    out[C_S, r] = r0
    out[C_E, r] = nc
    return True


@compiled
def _other(buf: Any, kind: int, p: int, le: int, out: Any, r: int) -> bool:
    """The payload (at ``p``) of the other events the analyses use, in their usual forms; fills row ``r``."""
    if _odd_space(buf, p, le):
        return False
    if kind <= 6:  # IRQ entry/exit, local timer entry/exit
        if _match(buf, p, le, W_VECTOR):
            vector, j = _digits(buf, p + len(F_VECTOR), le)
            if vector < 0 or j != le:
                return False
            out[PID, r] = -vector
            out[B_S, r] = -2  # the name "local_timer"
        else:
            if not _match(buf, p, le, W_IRQ):
                return False
            irq, j = _digits(buf, p + len(F_IRQ), le)
            if irq < 0 or (j != le and buf[j] != _SPACE):
                return False
            out[PID, r] = irq
            if kind == 5 and j != le:
                if not _match(buf, j, le, W_NAME):
                    return False
                out[B_S, r] = j + len(F_NAME)
                out[B_E, r] = le
            elif kind == 5:
                out[B_S, r] = j
                out[B_E, r] = j
    elif kind <= 9:  # softirq raise/entry/exit
        if not _match(buf, p, le, W_VEC):
            return False
        vec, j = _digits(buf, p + len(F_VEC), le)
        if vec < 0 or (j != le and buf[j] != _SPACE):
            return False
        out[PID, r] = vec
    elif kind <= 11:  # workqueue: "work struct W: function F"
        colon = -1
        for x in range(p, le - 1):
            if buf[x] == _COLON and buf[x + 1] == _SPACE:
                colon = x
                break
        if colon < 0:
            return False
        w = colon
        while w > p and buf[w - 1] != _SPACE:
            w -= 1
        f = colon + 2
        if _match(buf, f, le, W_FUNCTION):
            f += len(F_FUNCTION)
        out[A_S, r] = w
        out[A_E, r] = colon
        out[B_S, r] = f
        out[B_E, r] = _token_end(buf, f, le)
    elif kind <= 15:  # irq/preempt disable/enable: the caller
        e = _token_end(buf, p, le)
        c = p + len(F_CALLER) if _match(buf, p, e, W_CALLER) else p
        out[B_S, r] = c
        out[B_E, r] = e
    elif kind == 16 and not _match(buf, p, le, W_COMM):  # sched_process_exit, trace-cmd's "comm:pid [prio]"
        pid, prio, colon, ok = _plugin_task(buf, p, le)
        if not ok:
            return False
        out[PID, r] = pid
        out[PRIO, r] = prio
        out[A_S, r] = p
        out[A_E, r] = colon
    elif kind == 16:  # sched_process_exit: "comm=C pid=N prio=P"
        a = p + len(F_COMM)
        a_end, pid, prio, j = _task(buf, a, le, W_PID, W_PRIO)
        if j < 0 or (j != le and buf[j] != _SPACE):
            return False
        out[PID, r] = pid
        out[PRIO, r] = prio
        out[A_S, r] = a
        out[A_E, r] = a_end
    elif kind == 18:  # sched_migrate_task: "comm=C pid=N prio=P orig_cpu=O dest_cpu=D" (NEXT_PID D, NEXT_PRIO O)
        if not _match(buf, p, le, W_COMM):
            return False
        a = p + len(F_COMM)
        a_end, pid, prio, j = _task(buf, a, le, W_PID, W_PRIO)
        if j < 0 or not _match(buf, j, le, W_ORIG):
            return False
        orig, j = _digits(buf, j + len(F_ORIG), le)
        if orig < 0 or not _match(buf, j, le, W_DEST):
            return False
        dest, j = _digits(buf, j + len(F_DEST), le)
        if dest < 0 or j != le:
            return False
        _row(out, r, kind, pid, prio, dest, a, a_end)
        out[NEXT_PRIO, r] = orig
    else:
        return False
    out[KIND, r] = kind
    return True


@compiled
def _first_word(buf: Any, ls: int, i: int) -> bool:
    """True when ``buf[ls:i]`` is spaces then one word (no space in it), not empty."""
    k = i - 1
    while k >= ls and buf[k] != _SPACE:
        k -= 1
    if k == i - 1:
        return False
    while k >= ls:
        if buf[k] != _SPACE:
            return False
        k -= 1
    return True


_SLOW_LINE = -2  # _scan_line: the line is not one the scanner takes whole
_COUNTED = -1  # _scan_line: an event that is only counted (sched_wakeup once waking events are known)
_UNKNOWN = 0  # _scan_line: an event the analyses do not use (its name's span is in A_S/A_E)


@compiled
def _scan_line(buf: Any, ls: int, le: int, out: Any, r: int, ts_out: Any, waking_seen: bool, skip_wakeup: bool) -> int:
    """One line: the kind of the event written to row ``r``, or _SLOW_LINE, _COUNTED, _UNKNOWN."""
    # comm-pid: up to the first "[" with no ":" before it (and not a "#" comment), then "[cpu]" and spaces
    # (a ":" in the comm is fine, but not ": ", and no "]": the line parser finds the timestamp at the first
    # ": " and the CPU at the last "]" before it, so both must be the ones found here)
    i = ls
    if buf[i] == _HASH:
        return _SLOW_LINE
    while i + 8 <= le:  # whole words with none of "[", "]", ":" first (the line's end is not in them)
        x = _word(buf, i)
        if _has_byte(x, _LBRACKETS) or _has_byte(x, _RBRACKETS) or _has_byte(x, _COLONS):
            break
        i += 8
    prefixed = False
    while i < le and buf[i] != _LBRACKET:
        if buf[i] == _RBRACKET:
            return _SLOW_LINE
        if buf[i] == _COLON and buf[i + 1] == _SPACE:
            # trace-cmd's -B instance prefix ("  kf_sched1: comm-pid [001] ..."): the line's first word (after
            # padding), ended by ": "; the line parser reads no timestamp there either (nothing before it)
            if prefixed or not _first_word(buf, ls, i):
                return _SLOW_LINE
            prefixed = True
        i += 1
    if i >= le:
        return _SLOW_LINE
    cpu, j = _digits(buf, i + 1, le)
    if cpu < 0 or j >= le - 1 or buf[j] != _RBRACKET or buf[j + 1] != _SPACE:
        return _SLOW_LINE
    f = j + 1
    while f < le and buf[f] == _SPACE:
        f += 1
    # optional latency flags (a token and spaces), then the timestamp
    t = f
    while t < le:
        c = buf[t]
        if c == _SPACE or c == _COLON or c == _LBRACKET or c == _RBRACKET:  # noqa: PLR1714, SIM109
            break
        t += 1
    e = -1
    ts = 0.0
    if t > f and t < le and buf[t] == _SPACE:
        u = t
        while u < le and buf[u] == _SPACE:
            u += 1
        ts, e = _timestamp(buf, u, le)
    if e < 0:
        ts, e = _timestamp(buf, f, le)
    if e < 0:
        return _SLOW_LINE
    out[CPU, r] = cpu
    ts_out[r] = ts
    while e < le and buf[e] == _SPACE:  # perf script pads the event name
        e += 1
    # the event's name: the frequent ones directly, else word characters and ':' up to ": "
    kind = 0
    q = -1
    if _match(buf, e, le, W_SWITCH):
        kind, q = 1, e + len(SWITCH)
    elif _match(buf, e, le, W_WAKING):
        kind, q = 2, e + len(WAKING)
    elif _match(buf, e, le, W_WAKEUP):
        kind, q = 3, e + len(WAKEUP)
    elif _literal(buf, e, le, WAKEUP_NEW):  # 17 bytes, and rare
        kind, q = 4, e + len(WAKEUP_NEW)
    if kind == 0 or q >= le or buf[q] != _SPACE:
        ne = e
        while ne < le:
            c = buf[ne]
            if not ((48 <= c <= 57) or (65 <= c <= 90) or (97 <= c <= 122) or c == 95 or c == _COLON):  # noqa: PLR1714
                break
            ne += 1
        if ne - e < 2 or ne >= le or buf[ne] != _SPACE or buf[ne - 1] != _COLON:
            return _SLOW_LINE
        kind = _name_kind(buf, e, ne - 1)
        if kind == 0:
            out[A_S, r] = e
            out[A_E, r] = ne - 1
            return _UNKNOWN
        q = ne
    if kind == 3 and waking_seen and skip_wakeup:
        return _COUNTED
    # the payload: after ": " and any padding (trace-cmd pads event names)
    q += 1
    while q < le and buf[q] == _SPACE:
        q += 1
    if q >= le or buf[q] == 9 or buf[q] == 11 or buf[q] == 12 or buf[q] == _CR:
        return _SLOW_LINE
    if kind == 1:
        ok = _switch(buf, q, le, out, r) if _match(buf, q, le, W_SW_HEAD) else _switch_plugin(buf, q, le, out, r)
    elif kind <= 4:
        ok = _wake(buf, q, le, out, r, kind) if _match(buf, q, le, W_COMM) else _wake_plugin(buf, q, le, out, r, kind)
    else:
        ok = _other(buf, kind, q, le, out, r)
    return kind if ok else _SLOW_LINE


_NEWLINES = np.uint64(0x0A0A0A0A0A0A0A0A)


@compiled
def _line_end(buf: Any, words: Any, pos: int) -> int:
    """Position of the first newline at or after ``pos`` (there is one), eight bytes at a time.

    A word holds a newline when ``(x - 0x01..) & ~x & 0x80..`` is not zero for ``x = word ^ 0x0a..``;
    its lowest set bit is in the first newline's byte (a false hit can only be above a true one), so
    no byte is checked one by one.  ``words`` (``buf`` as aligned uint64 words) is not needed since
    the words are read unaligned (:func:`_word`).
    """
    i = pos
    n = len(buf)
    while i + 8 <= n:
        x = _word(buf, i) ^ _NEWLINES
        hit = (x - _ONES) & ~x & _HIGHS
        if hit:
            return i + (int(_trailing_zeros(hit)) >> 3)
        i += 8
    while buf[i] != _NL:
        i += 1
    return i


@njit("the trace scanner", seconds=SCAN_COMPILE_S)
def scan(
    buf: npt.NDArray[np.uint8],
    words: npt.NDArray[np.uint64],
    pos: int,
    end: int,
    line_no: int,
    waking_seen: bool,
    skip_wakeup: bool,
    out: npt.NDArray[np.int64],
    ts_out: npt.NDArray[np.float64],
    r: int,
    unknown: npt.NDArray[np.int64],
    status: npt.NDArray[np.int64],
) -> None:
    """Scan the lines of ``buf[pos:end]`` (which ends with a newline) into rows from ``r``.

    ``words``: the whole 8-byte words of ``buf`` as uint64 (for finding newlines).

    Stops at the end, at the first line it does not take whole (status
    ``SLOW`` with the line's span; its line number is not counted yet), or
    when ``out`` is full (status ``FULL``).
    The events skipped (an unknown name, or a sched_wakeup only counted) are
    written to the columns of ``unknown``: their name's span (to be counted by
    name; -1 when only counted), CPU, line number and line start (when their
    CPU reported).  Results go to ``status`` (see the ``ST_*`` indexes).
    """
    buf = _borrowed(buf)
    words = _borrowed(words)
    out = _borrowed(out)
    ts_out = _borrowed(ts_out)
    unknown = _borrowed(unknown)
    n_unknown = 0
    n_events = 0
    n_used = 0
    stop = DONE
    slow_s = -1
    slow_e = -1
    while pos < end:
        if r >= out.shape[1] or n_unknown >= unknown.shape[1]:  # full: the caller makes room and calls again
            stop = FULL
            break
        le = _line_end(buf, words, pos)
        ls = pos
        for col in range(N_COLS):
            out[col, r] = -1 if col >= A_S else 0
        kind = _scan_line(buf, ls, le, out, r, ts_out, waking_seen, skip_wakeup)
        if kind == _SLOW_LINE:
            stop = SLOW
            slow_s = ls
            slow_e = le
            break
        n_events += 1
        if kind == 2:
            waking_seen = True
        if kind == _UNKNOWN or kind == _COUNTED:  # noqa: PLR1714, SIM109
            # skipped: its name (none when only counted), CPU, line number and start (when the CPU reported)
            unknown[0, n_unknown] = out[A_S, r] if kind == _UNKNOWN else -1
            unknown[1, n_unknown] = out[A_E, r] if kind == _UNKNOWN else -1
            unknown[2, n_unknown] = out[CPU, r]
            unknown[3, n_unknown] = line_no + 1
            unknown[4, n_unknown] = ls
            n_unknown += 1
        elif kind > 0:
            out[LINE_NO, r] = line_no + 1
            out[LINE_S, r] = ls
            out[LINE_E, r] = le
            r += 1
            n_used += 1
        line_no += 1
        pos = le + 1
    status[ST_POS] = pos
    status[ST_LINE_NO] = line_no
    status[ST_ROWS] = r
    status[ST_UNKNOWN] = n_unknown
    status[ST_EVENTS] = n_events
    status[ST_USED] = n_used
    status[ST_STOP] = stop
    status[ST_WAKING] = 1 if waking_seen else 0
    status[ST_SLOW_S] = slow_s
    status[ST_SLOW_E] = slow_e
