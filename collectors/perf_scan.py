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


def _digits_before(a: npt.NDArray[np.uint8], end: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int64], ...]:
    """For each ``end``, the run of digits just before it: its length and its value (exact to 18 digits)."""
    length = np.zeros(len(end), np.int64)
    value = np.zeros(len(end), np.int64)
    live = np.arange(len(end))
    scale = 1
    while len(live):
        at = end[live] - length[live] - 1
        ok = at >= 0
        d = a[np.where(ok, at, 0)] - _ZERO  # uint8 wraps below '0': one comparison tests both bounds
        ok &= d <= 9
        live, d = live[ok], d[ok]
        if scale <= 10**18:
            value[live] += d.astype(np.int64) * scale
        length[live] += 1
        scale *= 10
    return length, value


def mask_times(data: bytes | memoryview) -> Masked | None:
    """``data`` with the digits of each `` S.F: `` time written as ``0``; None if a time is too long to read exactly."""
    a = np.frombuffer(data, np.uint8)
    colons = np.flatnonzero(a[1:-1] == _COLON) + 1 if len(a) >= 3 else np.empty(0, np.int64)
    colons = colons[(a[colons + 1] == _SPACE) & (a[colons - 1] - _ZERO <= 9)]
    nf, frac = _digits_before(a, colons)
    dot = colons - nf - 1  # nf >= 1: the byte before the colon is a digit
    ok = dot >= 1
    ok[ok] = a[dot[ok]] == _DOT
    colons, nf, frac, dot = colons[ok], nf[ok], frac[ok], dot[ok]
    nd, whole = _digits_before(a, dot)
    space = dot - nd - 1
    ok = (nd > 0) & (space >= 0)
    ok[ok] = a[space[ok]] == _SPACE
    colons, nf, frac, nd, whole, space = colons[ok], nf[ok], frac[ok], nd[ok], whole[ok], space[ok]
    if not len(colons):
        return Masked(bytes(data), colons, None, None)
    if int((nd + nf).max()) > _MAX_DIGITS:
        return None
    times = (whole * _POW10[nf].astype(np.int64) + frac) / _POW10[nf]  # exact below 2**53, as Python reads it
    b = a.copy()
    lens = colons - space - 1
    offsets = np.repeat(space + 1 - np.concatenate(([0], np.cumsum(lens)[:-1])), lens) + np.arange(int(lens.sum()))
    b[offsets] = _ZERO
    b[dot] = _DOT
    return Masked(b.tobytes(), colons, float(times.min()), float(times.max()))


__all__ = ["Masked", "mask_times"]
