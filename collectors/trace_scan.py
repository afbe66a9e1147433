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

from collections.abc import Callable
from typing import Any, TypeVar, cast

import numba
import numpy as np
import numpy.typing as npt

from collectors.trace_events import EVENT_KINDS

F = TypeVar("F", bound=Callable[..., Any])
njit = cast(Callable[[F], F], numba.njit(cache=True, nogil=True))
# Helpers are inlined into scan(): as separate functions, every call counts references to the arrays it
# is given (atomic operations that made the scanner several times slower).
inline = cast(Callable[[F], F], numba.njit(cache=True, nogil=True, inline="always"))

# Columns of the integer output (rows are events); spans are [start, end) offsets into the buffer, -1 if none.
KIND, CPU, LINE_NO, PID, PRIO, NEXT_PID, NEXT_PRIO, STATE = range(8)
LINE_S, LINE_E, A_S, A_E, B_S, B_E, C_S, C_E = range(8, 16)
N_COLS = 16
# What scan() stopped at.
DONE, SLOW, FULL = 0, 1, 2
# Results of scan() in its int64 status array.
ST_POS, ST_LINE_NO, ST_ROWS, ST_UNKNOWN, ST_EVENTS, ST_USED, ST_STOP, ST_WAKING, ST_SLOW_S, ST_SLOW_E = range(10)

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


@inline
def _signed(buf: npt.NDArray[np.uint8], i: int, end: int) -> tuple[int, int, bool]:
    """``-?\\d+`` at ``i``: value, position after, ok."""
    neg = i < end and buf[i] == _MINUS
    value, j = _digits(buf, i + 1 if neg else i, end)
    if value < 0:
        return 0, i, False
    return (-value if neg else value), j, True


@inline
def _literal(buf: npt.NDArray[np.uint8], i: int, end: int, text: npt.NDArray[np.uint8]) -> bool:
    """True when ``text`` is at ``i`` (before ``end``)."""
    n = len(text)
    if i + n > end:
        return False
    for k in range(n):  # noqa: SIM110 (a plain loop compiles to a plain loop)
        if buf[i + k] != text[k]:
            return False
    return True


@inline
def _token_end(buf: npt.NDArray[np.uint8], i: int, end: int) -> int:
    """Position of the first space at or after ``i`` (``end`` when none)."""
    while i < end and buf[i] != _SPACE:
        i += 1
    return i


@inline
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


# The texts the scanner compares, as global arrays: numba compiles them in as constants (passed as
# arguments, each call would count references to every one of them: most of the time per line).
SW_HEAD, SW_PID, SW_PRIO, SW_STATE, SW_NEXT = (
    _lit(t) for t in (b"sched_switch: prev_comm=", b" prev_pid=", b" prev_prio=", b" prev_state=", b" ==> next_comm=")
)
SW_NEXT_PID, SW_NEXT_PRIO = _lit(b" next_pid="), _lit(b" next_prio=")
WAKING, WAKEUP_NEW, WAKEUP = (
    _lit(b"sched_waking: comm="),
    _lit(b"sched_wakeup_new: comm="),
    _lit(b"sched_wakeup: comm="),
)
F_PID, F_PRIO, F_TARGET, F_COMM = _lit(b" pid="), _lit(b" prio="), _lit(b" target_cpu="), _lit(b"comm=")
F_VECTOR, F_IRQ, F_NAME, F_VEC = _lit(b"vector="), _lit(b"irq="), _lit(b" name="), _lit(b"vec=")
F_FUNCTION, F_CALLER = _lit(b"function "), _lit(b"caller=")


@inline
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


@inline
def _task(buf: Any, a: int, le: int, pid_text: Any, prio_text: Any) -> tuple[int, int, int, int]:
    """``COMM<pid_text>N<prio_text>P`` at ``a`` (no space in COMM): COMM's end, pid, prio, the end (-1: not)."""
    a_end = _token_end(buf, a, le)
    if not _literal(buf, a_end, le, pid_text):
        return a_end, 0, 0, -1
    pid, j = _digits(buf, a_end + len(pid_text), le)
    if pid < 0 or not _literal(buf, j, le, prio_text):
        return a_end, 0, 0, -1
    prio, j, ok = _signed(buf, j + len(prio_text), le)
    return a_end, pid, prio, (j if ok else -1)


@inline
def _switch(buf: Any, i: int, le: int, out: Any, r: int) -> bool:
    """sched_switch in the kernel format, no spaces in comms, ending the line; fills row ``r``."""
    if not _literal(buf, i, le, SW_HEAD):
        return False
    a = i + len(SW_HEAD)
    a_end, pid, prio, j = _task(buf, a, le, SW_PID, SW_PRIO)
    if j < 0 or not _literal(buf, j, le, SW_STATE):
        return False
    b = j + len(SW_STATE)
    b_end = _token_end(buf, b, le)
    if b_end == b or not _literal(buf, b_end, le, SW_NEXT):
        return False
    c = b_end + len(SW_NEXT)
    c_end, npid, nprio, j = _task(buf, c, le, SW_NEXT_PID, SW_NEXT_PRIO)
    if j != le:
        return False
    out[r, KIND] = 1
    out[r, PID] = pid
    out[r, PRIO] = prio
    out[r, NEXT_PID] = npid
    out[r, NEXT_PRIO] = nprio
    out[r, STATE] = buf[b]
    out[r, A_S] = a
    out[r, A_E] = a_end
    out[r, B_S] = b
    out[r, B_E] = b_end
    out[r, C_S] = c
    out[r, C_E] = c_end
    return True


@inline
def _wake(buf: Any, i: int, le: int, out: Any, r: int) -> int:
    """sched_waking/wakeup_new/wakeup in the kernel format ending the line: its kind (0: not)."""
    if _literal(buf, i, le, WAKING):
        kind, a = 2, i + len(WAKING)
    elif _literal(buf, i, le, WAKEUP_NEW):
        kind, a = 4, i + len(WAKEUP_NEW)
    elif _literal(buf, i, le, WAKEUP):
        kind, a = 3, i + len(WAKEUP)
    else:
        return 0
    a_end, pid, prio, j = _task(buf, a, le, F_PID, F_PRIO)
    if j < 0 or not _literal(buf, j, le, F_TARGET):
        return 0
    target, j = _digits(buf, j + len(F_TARGET), le)
    if target < 0 or j != le:
        return 0
    out[r, KIND] = kind
    out[r, PID] = pid
    out[r, PRIO] = prio
    out[r, NEXT_PID] = target
    out[r, A_S] = a
    out[r, A_E] = a_end
    return kind


@inline
def _other(buf: Any, kind: int, p: int, le: int, out: Any, r: int) -> bool:
    """The payload (at ``p``) of the other events the analyses use, in their usual forms; fills row ``r``."""
    if p >= le or buf[p] == _SPACE:
        return False
    for x in range(p, le):
        if buf[x] == _CR:
            return False
    if kind <= 6:  # IRQ entry/exit, local timer entry/exit
        if _literal(buf, p, le, F_VECTOR):
            vector, j = _digits(buf, p + len(F_VECTOR), le)
            if vector < 0 or j != le:
                return False
            out[r, PID] = -vector
            out[r, B_S] = -2  # the name "local_timer"
        else:
            if not _literal(buf, p, le, F_IRQ):
                return False
            irq, j = _digits(buf, p + len(F_IRQ), le)
            if irq < 0 or (j != le and buf[j] != _SPACE):
                return False
            out[r, PID] = irq
            if kind == 5 and j != le:
                if not _literal(buf, j, le, F_NAME):
                    return False
                out[r, B_S] = j + len(F_NAME)
                out[r, B_E] = le
            elif kind == 5:
                out[r, B_S] = j
                out[r, B_E] = j
    elif kind <= 9:  # softirq raise/entry/exit
        if not _literal(buf, p, le, F_VEC):
            return False
        vec, j = _digits(buf, p + len(F_VEC), le)
        if vec < 0 or (j != le and buf[j] != _SPACE):
            return False
        out[r, PID] = vec
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
        if _literal(buf, f, le, F_FUNCTION):
            f += len(F_FUNCTION)
        out[r, A_S] = w
        out[r, A_E] = colon
        out[r, B_S] = f
        out[r, B_E] = _token_end(buf, f, le)
    elif kind <= 15:  # irq/preempt disable/enable: the caller
        e = _token_end(buf, p, le)
        c = p + len(F_CALLER) if _literal(buf, p, e, F_CALLER) else p
        out[r, B_S] = c
        out[r, B_E] = e
    elif kind == 16:  # sched_process_exit: "comm=C pid=N prio=P"
        if not _literal(buf, p, le, F_COMM):
            return False
        a = p + len(F_COMM)
        a_end, pid, prio, j = _task(buf, a, le, F_PID, F_PRIO)
        if j < 0 or (j != le and buf[j] != _SPACE):
            return False
        out[r, PID] = pid
        out[r, PRIO] = prio
        out[r, A_S] = a
        out[r, A_E] = a_end
    else:
        return False
    out[r, KIND] = kind
    return True


_SLOW_LINE = -2  # _scan_line: the line is not one the scanner takes whole
_COUNTED = -1  # _scan_line: an event that is only counted (sched_wakeup once waking events are known)
_UNKNOWN = 0  # _scan_line: an event the analyses do not use (its name's span is in A_S/A_E)


@inline
def _scan_line(buf: Any, ls: int, le: int, out: Any, r: int, ts_out: Any, waking_seen: bool, skip_wakeup: bool) -> int:
    """One line: the kind of the event written to row ``r``, or _SLOW_LINE, _COUNTED, _UNKNOWN."""
    # comm-pid: up to the first "[" with no ":" before it (and not a "#" comment), then "[cpu]" and spaces
    # (a ":" in the comm is fine, but not ": ", and no "]": the line parser finds the timestamp at the first
    # ": " and the CPU at the last "]" before it, so both must be the ones found here)
    i = ls
    if buf[i] == _HASH:
        return _SLOW_LINE
    while i < le and buf[i] != _LBRACKET:
        if buf[i] == _RBRACKET or (buf[i] == _COLON and buf[i + 1] == _SPACE):
            return _SLOW_LINE
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
    out[r, CPU] = cpu
    ts_out[r] = ts
    if _switch(buf, e, le, out, r):
        return 1
    kind = _wake(buf, e, le, out, r)
    if kind == 3 and waking_seen and skip_wakeup:
        return _COUNTED
    if kind > 0:
        return kind
    # any other event: its name (word characters and ':') up to ": "
    ne = e
    while ne < le:
        c = buf[ne]
        if not ((48 <= c <= 57) or (65 <= c <= 90) or (97 <= c <= 122) or c == 95 or c == _COLON):  # noqa: PLR1714
            break
        ne += 1
    if ne - e < 2 or ne >= le or buf[ne] != _SPACE or buf[ne - 1] != _COLON:
        return _SLOW_LINE
    known = _name_kind(buf, e, ne - 1)
    if known == 0:
        out[r, A_S] = e
        out[r, A_E] = ne - 1
        return _UNKNOWN
    if known == 3 and waking_seen and skip_wakeup:
        return _COUNTED
    if known >= 5 and _other(buf, known, ne + 1, le, out, r):
        return known
    return _SLOW_LINE


@njit
def scan(
    buf: npt.NDArray[np.uint8],
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

    Stops at the end, at the first line it does not take whole (status
    ``SLOW`` with the line's span; its line number is not counted yet), or
    when ``out`` is full (status ``FULL``).
    Unknown event names are written as spans to ``unknown`` (to be counted
    by name).  Results go to ``status`` (see the ``ST_*`` indexes).
    """
    n_unknown = 0
    n_events = 0
    n_used = 0
    stop = DONE
    slow_s = -1
    slow_e = -1
    while pos < end:
        if r >= out.shape[0] or n_unknown >= unknown.shape[1]:  # full: the caller makes room and calls again
            stop = FULL
            break
        le = pos
        while buf[le] != _NL:
            le += 1
        ls = pos
        for col in range(N_COLS):
            out[r, col] = -1 if col >= A_S else 0
        kind = _scan_line(buf, ls, le, out, r, ts_out, waking_seen, skip_wakeup)
        if kind == _SLOW_LINE:
            stop = SLOW
            slow_s = ls
            slow_e = le
            break
        n_events += 1
        if kind == 2:
            waking_seen = True
        if kind == _UNKNOWN:
            unknown[0, n_unknown] = out[r, A_S]
            unknown[1, n_unknown] = out[r, A_E]
            n_unknown += 1
        elif kind > 0:
            out[r, LINE_NO] = line_no + 1
            out[r, LINE_S] = ls
            out[r, LINE_E] = le
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
