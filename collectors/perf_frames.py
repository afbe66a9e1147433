"""The vectorised frame-line keyer of the profile reader: what of a call chain line names its frames.

A recording of a busy machine has a hundred thousand distinct call chain lines that differ only in
their address (and offset) but name a few ten thousand symbols.  Parsing each line with the reader's
regular expression costs about 4 µs of Python; :func:`frame_keys` instead finds, for all the lines at
once with a handful of numpy passes, the parts :func:`collectors.perf_script.parse_frame_line` reads
(the symbol without its ``+0x`` offset, the DSO, whether the address is in the kernel half) and
writes them as one key per line, so that the reader parses each distinct key once.  No compiler:
importing numba costs more than this saves.

A line is keyed only where the answer is certain to be the regular expression's
``^\\s*(\\w+)\\s*(.+) \\((.*)\\)``: the expression tries the longest address, the longest run of
spaces and the longest symbol first, and takes the first way that matches, so when that way (the
last `` (`` before the last ``)``, after at least one symbol byte) matches, it is the match.  Any
other line (blank, a comment, not starting with a space, one that needs the expression to give back
bytes of its address, one holding a NUL byte, which separates the key's fields) gets no key and is
parsed line by line.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

_NL, _OPEN, _CLOSE, _SPACE, _PLUS, _ZERO, _X = 10, 40, 41, 32, 43, 48, 120
_IS_SPACE = np.zeros(256, bool)
_IS_SPACE[list(b" \t\n\r\x0b\x0c")] = True  # the regular expression's \s for bytes
_IS_WORD = np.zeros(256, bool)
_IS_WORD[list(b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")] = True  # \w for bytes
_NOT_HEX = np.ones(256, bool)
_NOT_HEX[list(b"0123456789abcdef")] = False  # the offset's digits, as parse_frame_line strips them
_FFFF = np.frombuffer(b"ffff", np.uint8)
_HEAD = 48  # bytes read at the start of each line for the address and the spaces around it
_DIGITS = 16  # bytes read after a "+0x" for the offset's digits


def key_flag(java: bool, high: bool) -> int:
    """The first byte of a key: the two flags of a symbol's frames besides its name and DSO."""
    return 48 + 2 * java + high


def _last_before(positions: npt.NDArray[np.int64], limit: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """For each ``limit``, the largest of the sorted ``positions`` that is ``<= limit`` (-1 when none)."""
    if not len(positions):
        return np.full(len(limit), -1, np.int64)
    k = np.searchsorted(positions, limit, side="right") - 1
    return np.where(k >= 0, positions[np.maximum(k, 0)], -1)


def _first(found: npt.NDArray[np.bool_]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """For each row, the first column where ``found`` holds, and whether there is one."""
    at = found.argmax(1)
    return at, found[np.arange(len(found)), at]


def frame_keys(lines: list[bytes], java: bool) -> list[bytes | None]:
    """For each line, ``flag + symbol + NUL + DSO`` as :func:`parse_frame_line` reads them, or None.

    The flag is :func:`key_flag` of ``java`` and of the address being 16 digits starting ``ffff``;
    the symbol has its ``+0x`` offset removed the way ``parse_frame_line`` removes it.  None: the
    line must go through the reader's per-line parse (see the module docstring).

    A few passes over the bytes find the newlines, `` (``, ``)`` and ``+0x``; the address and the
    spaces around it are read from the first bytes of each line, the offset's digits from the bytes
    after its ``+0x`` (a line where either runs longer than that window is parsed line by line).
    """
    out: list[bytes | None] = [None] * len(lines)
    if not lines:
        return out
    a = np.frombuffer(b"\n".join(lines) + b"\n", np.uint8)
    if (a == 0).any():  # a NUL would read as the key's separator: the per-line parse
        return out
    n = len(a)
    ends = np.flatnonzero(a == _NL)  # one per line
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    # The address and the spaces around it, from the first _HEAD bytes (the newline stops each run).
    cols = np.arange(_HEAD)
    head = a[np.minimum(starts[:, None] + cols, n - 1)]
    space = _IS_SPACE[head] & (head != _NL)
    word = _IS_WORD[head]
    ok = space[:, 0]  # parse_frame_line's lines start with a space
    pc, found = _first(~space)
    ok &= found & word[np.arange(len(head)), pc]
    pc_end, found = _first(~word & (cols >= pc[:, None]))
    ok &= found
    rest, found = _first(~space & (cols >= pc_end[:, None]))
    ok &= found
    high = ok & (pc_end - pc == 16)
    at = np.flatnonzero(high)
    high[at] = (a[(starts[at] + pc[at])[:, None] + np.arange(4)] == _FFFF).all(1)
    rest += starts
    # The symbol (.+) ends at the last " (" that a ")" follows, and holds at least one byte.
    close = _last_before(np.flatnonzero(a == _CLOSE), ends - 1)
    open_ = _last_before(np.flatnonzero((a[:-1] == _SPACE) & (a[1:] == _OPEN)), close - 2)
    ok &= (open_ >= rest + 1) & (close >= open_ + 2)
    # The offset: the symbol's last "+0x", removed when something follows it and all of that is hex.
    plus_at = np.flatnonzero((a[:-2] == _PLUS) & (a[1:-1] == _ZERO) & (a[2:] == _X))
    plus = _last_before(plus_at, open_ - 3)
    digits = open_ - plus - 3
    strip = ok & (plus > rest) & (digits > 0)
    at = np.flatnonzero(strip)
    if len(at):
        ok[at[digits[at] > _DIGITS]] = False
        window = np.minimum((plus[at] + 3)[:, None] + np.arange(_DIGITS), n - 1)
        hex_ok = ~(_NOT_HEX[a[window]] & (np.arange(_DIGITS) < digits[at, None])).any(1)
        strip[at] = hex_ok
    raw_end = np.where(strip, plus, open_)
    good = np.flatnonzero(ok)
    if not len(good):
        return out
    # Each good line keeps its flag (written over the byte before the symbol), symbol, NUL (over the
    # space of " (") and DSO; every line keeps its newline; the rest goes.
    runs = np.zeros((len(ends), 8), np.int64)
    runs[:, 0] = ends - starts  # a line without a key: all of it goes
    g_start, g_rest, g_open, g_close = starts[good], rest[good], open_[good], close[good]
    runs[good, 0] = g_rest - 1 - g_start
    runs[good, 1] = raw_end[good] - g_rest + 1  # the flag and the symbol
    runs[good, 2] = g_open - raw_end[good]  # the offset
    runs[good, 3] = 1  # the NUL
    runs[good, 4] = 1  # "("
    runs[good, 5] = g_close - g_open - 2  # the DSO
    runs[good, 6] = ends[good] - g_close  # ")" and what follows
    runs[:, 7] = 1  # the newline
    keep = np.repeat(np.tile(np.array([False, True, False, True, False, True, False, True]), len(ends)), runs.ravel())
    b = a.copy()
    b[g_rest - 1] = np.where(high[good], key_flag(java, True), key_flag(java, False))
    b[g_open] = 0
    keys = b[keep].tobytes().split(b"\n")
    for i in good.tolist():
        out[i] = keys[i]
    return out


__all__ = ["frame_keys", "key_flag"]
