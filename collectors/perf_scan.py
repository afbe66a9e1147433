"""The vectorised sample keyer of the profile reader: ``perf script`` text with its times masked.

Samples of one thread in one call chain differ only in their time (`` 123.456789: ``).
:func:`mask_times` finds every time with a handful of numpy passes over the buffer and writes ``0``
over its digits (the dot stays, so the text keeps its length and its offsets), so that
``bytes.split(b"\\n\\n")`` and a dictionary give the distinct sample texts and how often each
occurs, at C speed; the Python side parses each distinct text once
(:meth:`collectors.perf_script.ScriptParser._blocks_bulk`).  No compiler is involved: importing
numba cost more than the whole scan.

A time is what the reader's regular expression `` (\\d+\\.\\d+): `` matches: a space, digits, a dot,
digits, a colon and a space.  Each piece between blank lines must hold exactly one (the caller
checks, and hands a chunk where one does not to the per-sample code), so the regular expression,
which matches leftmost and non-overlapping, finds the same one.  Where the times are depends only on
which bytes are digits, dots, colons and spaces, and masking keeps those classes, so a masked text
holds its times at the same places as every text that masks to it.  Times are read as Python reads
them (``SF / 10**len(F)``, exact for up to 15 digits; a longer one makes the chunk go to the
per-sample code), so spans are the same doubles.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

_MAX_DIGITS = 15
_POW10 = np.array([float(f"1e{k}") for k in range(_MAX_DIGITS + 1)])
_POW10_INT = 10 ** np.arange(19, dtype=np.int64)

_ZERO, _DOT, _COLON, _SPACE = 48, 46, 58, 32
# Digits looked at in one gather before a colon (a fraction: perf prints 6, or 9 with --ns) and
# before a dot (seconds since boot: 8 digits are three years); a longer run is read digit by digit.
_FRACTION_WINDOW = 7
_WHOLE_WINDOW = 8


class Masked(NamedTuple):
    """A buffer with its times masked, where the times were, and their smallest and largest value."""

    text: bytes
    colons: npt.NDArray[np.int64]  # offset of the colon after each time, ascending
    lo: float | None
    hi: float | None
    # The first and the last time, the largest step back and forward from one time to the next (in order).
    steps: tuple[float, float, float, float] | None = None


def _digits_stepwise(a: npt.NDArray[np.uint8], end: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int64], ...]:
    """For each ``end``, the run of digits just before it: its length and its value (exact to 18 digits)."""
    length = np.zeros(len(end), np.int64)
    value = np.zeros(len(end), np.int64)
    live = np.arange(len(end))
    pos = end - 1
    scale = 1
    while len(live):
        ok = pos >= 0
        d = a[np.where(ok, pos, 0)] - _ZERO  # uint8 wraps below '0': one comparison tests both bounds
        ok &= d <= 9
        live, pos, d = live[ok], pos[ok], d[ok]
        if scale <= 10**18:
            value[live] += d.astype(np.int64) * scale
        length[live] += 1
        pos -= 1
        scale *= 10
    return length, value


def _digits_before(
    a: npt.NDArray[np.uint8], end: npt.NDArray[np.int64], width: int
) -> tuple[npt.NDArray[np.int64], ...]:
    """:func:`_digits_stepwise`, with the ``width`` bytes before each end read in one gather.

    A few numpy calls on an ``n x width`` array instead of a dozen per digit: each call costs more
    in its overhead than in its elements here (about 1,600 times per 512 KiB).  Runs that fill the
    whole window are read again digit by digit.
    """
    steps = np.arange(1, width + 1)
    at = end[:, None] - steps
    if len(end) and int(end.min()) < width:
        outside = at < 0
        at[outside] = 0
        d = a[at] - np.uint8(_ZERO)
        d[outside] = 255  # not a digit
    else:
        d = a[at] - np.uint8(_ZERO)
    digit = d <= 9
    length = digit.argmin(1)  # the first byte that is not a digit (0 when all are)
    d[steps - 1 >= length[:, None]] = 0
    # Integers, not doubles: a matrix product of doubles is a BLAS call, whose threads then spin
    # (measured: 0.1 s of CPU more over 200 MB).
    value = d.astype(np.int64) @ _POW10_INT[:width]
    full = np.flatnonzero(digit[:, -1] & (length == 0))
    if len(full):
        length[full], value[full] = _digits_stepwise(a, end[full])
    return length, value


def mask_times(*parts: bytes | memoryview) -> Masked | None:
    """The concatenation of ``parts`` with the digits of each `` S.F: `` time written as ``0``.

    None if a time is too long to read exactly.  The parts are copied once, into the masked buffer
    (a caller holding the end of the previous chunk need not join it to the next one first).
    """
    b = np.empty(sum(map(len, parts)), np.uint8)
    at = 0
    for part in parts:
        b[at : at + len(part)] = np.frombuffer(part, np.uint8)
        at += len(part)
    a = b  # read before anything is written
    colons = np.flatnonzero(a[1:-1] == _COLON) + 1 if len(a) >= 3 else np.empty(0, np.int64)
    colons = colons[(a[colons + 1] == _SPACE) & (a[colons - 1] - _ZERO <= 9)]
    nf, frac = _digits_before(a, colons, _FRACTION_WINDOW)
    dot = colons - nf - 1  # nf >= 1: the byte before the colon is a digit
    ok = dot >= 1
    ok[ok] = a[dot[ok]] == _DOT
    colons, nf, frac, dot = colons[ok], nf[ok], frac[ok], dot[ok]
    nd, whole = _digits_before(a, dot, _WHOLE_WINDOW)
    space = dot - nd - 1
    ok = (nd > 0) & (space >= 0)
    ok[ok] = a[space[ok]] == _SPACE
    colons, nf, frac, nd, whole, space = colons[ok], nf[ok], frac[ok], nd[ok], whole[ok], space[ok]
    if not len(colons):
        return Masked(b.tobytes(), colons, None, None)
    if int((nd + nf).max()) > _MAX_DIGITS:
        return None
    times = (whole * _POW10_INT[nf] + frac) / _POW10[nf]  # exact below 2**53, as Python reads it
    lens = colons - space - 1
    offsets = np.repeat(space + 1 - np.concatenate(([0], np.cumsum(lens)[:-1])), lens) + np.arange(int(lens.sum()))
    b[offsets] = _ZERO
    b[dot] = _DOT
    step = np.diff(times)
    back = float(max(-step.min(), 0.0)) if len(step) else 0.0
    gap = float(max(step.max(), 0.0)) if len(step) else 0.0
    return Masked(
        b.tobytes(), colons, float(times.min()), float(times.max()), (float(times[0]), float(times[-1]), back, gap)
    )


__all__ = ["Masked", "mask_times"]
