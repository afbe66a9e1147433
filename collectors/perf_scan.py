"""The vectorised sample keyer of the profile reader: ``perf script`` text with its times masked.

Samples of one thread in one call chain differ only in their time (`` 123.456789: ``).
:func:`mask_times` finds every time with a handful of numpy passes over the buffer and writes ``0``
over its digits (the dot stays, so the text keeps its length and its offsets), so that
``bytes.split(b"\\n\\n")`` and a ``Counter`` give the distinct sample texts and how often each
occurs, at C speed; the Python side parses each distinct text once
(:meth:`collectors.perf_script.ScriptParser._blocks_bulk`).  No compiler is involved: importing
numba cost more than the whole scan.

A time is what the reader's regular expression `` (\\d+\\.\\d+): `` matches: a space, digits, a dot,
digits, a colon and a space.  Each piece between blank lines must hold exactly one (the caller
checks, and hands a chunk where one does not to the per-sample code), so the regular expression,
which matches leftmost and non-overlapping, finds the same one.  Times are read as Python reads them
(``SF / 10**len(F)``, exact for up to 15 digits; a longer one makes the chunk go to the per-sample
code), so spans are the same doubles.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

_MAX_DIGITS = 15
_POW10 = np.array([float(f"1e{k}") for k in range(_MAX_DIGITS + 1)])
_ZERO, _DOT, _COLON, _SPACE = 48, 46, 58, 32


class Masked(NamedTuple):
    """A buffer with its times masked, where the times were, and their smallest and largest value."""

    text: bytes
    colons: npt.NDArray[np.int64]  # offset of the colon after each time, ascending
    lo: float | None
    hi: float | None


def _digit_run_start(a: npt.NDArray[np.uint8], end: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """For each ``end`` (the offset just past a run of digits), the offset where the run starts."""
    p = end.copy()
    live = np.arange(len(p))
    while len(live):
        q = p[live] - 1
        ok = q >= 0
        ok[ok] = a[q[ok]] - _ZERO <= 9  # uint8 wraps below '0': one comparison tests both bounds
        live = live[ok]
        p[live] -= 1
    return p


def mask_times(data: bytes | memoryview) -> Masked | None:
    """``data`` with the digits of each `` S.F: `` time written as ``0``; None if a time is too long to read exactly."""
    a = np.frombuffer(data, np.uint8)
    n = len(a)
    if n < 5:
        return Masked(bytes(data), np.empty(0, np.int64), None, None)
    colons = np.flatnonzero(a[1:-1] == _COLON) + 1
    colons = colons[(a[colons + 1] == _SPACE) & (a[colons - 1] - _ZERO <= 9)]
    frac = _digit_run_start(a, colons)  # the fraction's first digit
    ok = frac >= 2
    ok[ok] = a[frac[ok] - 1] == _DOT
    colons, frac = colons[ok], frac[ok]
    ok = a[frac - 2] - _ZERO <= 9
    colons, frac = colons[ok], frac[ok]
    whole = _digit_run_start(a, frac - 1)
    ok = whole >= 1
    ok[ok] = a[whole[ok] - 1] == _SPACE
    colons, frac, whole = colons[ok], frac[ok], whole[ok]
    if not len(colons):
        return Masked(bytes(data), colons, None, None)
    nd, nf = frac - 1 - whole, colons - frac
    if int((nd + nf).max()) > _MAX_DIGITS:
        return None
    # The value of each time, digit by digit (at most 15 steps over the times, not over the text).
    value = np.zeros(len(colons), np.int64)
    for k in range(int((nd + nf).max())):
        pos = whole + k
        pos = np.where(k < nd, pos, pos + 1)  # skip the dot
        value = np.where(k < nd + nf, value * 10 + (a[np.minimum(pos, n - 1)] - _ZERO), value)
    times = value / _POW10[nf]
    # The masked text: every digit of each time becomes "0".
    b = a.copy()
    lens = colons - whole
    offsets = np.repeat(whole - np.concatenate(([0], np.cumsum(lens)[:-1])), lens) + np.arange(int(lens.sum()))
    b[offsets] = _ZERO
    b[frac - 1] = _DOT
    return Masked(b.tobytes(), colons, float(times.min()), float(times.max()))


__all__ = ["Masked", "mask_times"]
