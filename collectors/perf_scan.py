"""The compiled sample scanner of the profile reader: ``perf script`` text to one key per sample.

:func:`scan` cuts a buffer of whole samples (it ends with a blank line) at its blank lines, exactly as
``bytes.split(b"\\n\\n")`` does, and gives each piece a 64-bit key: the FNV-1a hash of the piece with
the digits of its time (`` 123.456789: ``) read as ``0.0``, and its length mixed in.  Samples that
differ only in their time get the same key, so the Python side counts keys with numpy and parses
each distinct sample text once (:meth:`collectors.perf_script.ScriptParser._blocks_bulk`).

The time pattern is the bulk reader's regular expression `` (\\d+\\.\\d+): `` matched the way
``re.subn`` matches it (leftmost, non-overlapping); each piece reports how many it holds, so that
the caller can hand a chunk whose samples do not hold exactly one to the per-sample code.  Times are
read as Python reads them (``SF / 10**len(F)``, exact for up to 15 digits; longer ones count as
"not one time" and go to the per-sample code), so spans are the same doubles.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import numba
import numpy as np
import numpy.typing as npt

F = TypeVar("F", bound=Callable[..., Any])
njit = cast(Callable[[F], F], numba.njit(cache=True, nogil=True))

_MAX_DIGITS = 15
POW10 = np.array([float(f"1e{k}") for k in range(_MAX_DIGITS + 1)])


@njit
def scan(
    buf: npt.NDArray[np.uint8], pow10: npt.NDArray[np.float64]
) -> tuple[
    npt.NDArray[np.int64],
    npt.NDArray[np.int64],
    npt.NDArray[np.uint64],
    npt.NDArray[np.float64],
    npt.NDArray[np.int64],
    npt.NDArray[np.int64],
]:
    """Per piece between blank lines: start, end, key, time (NaN if none), number of times, newlines."""
    n = len(buf)
    cap = 1024
    starts = np.empty(cap, np.int64)
    ends = np.empty(cap, np.int64)
    keys = np.empty(cap, np.uint64)
    times = np.empty(cap, np.float64)
    ntimes = np.empty(cap, np.int64)
    nls = np.empty(cap, np.int64)
    prime = np.uint64(0x100000001B3)
    zero_dot_zero = (np.uint64(48), np.uint64(46), np.uint64(48))
    k = 0
    i = 0
    while True:
        # One piece: from i up to the next "\n\n" (or the end of the buffer).
        h = np.uint64(0xCBF29CE484222325)
        count = 0
        lines = 0
        t = np.nan
        j = i
        length = 0
        while j < n:
            c = buf[j]
            if c == 10 and j + 1 < n and buf[j + 1] == 10:
                break
            if c == 32 and j + 1 < n and 48 <= buf[j + 1] <= 57:
                # Maybe " S.F: ": digits, a dot, digits, a colon, a space.
                p = j + 1
                whole = 0
                nd = 0
                while p < n and 48 <= buf[p] <= 57:
                    whole = whole * 10 + (buf[p] - 48) if nd < 18 else whole
                    nd += 1
                    p += 1
                if p < n and buf[p] == 46:
                    q = p + 1
                    frac = 0
                    nf = 0
                    while q < n and 48 <= buf[q] <= 57:
                        frac = frac * 10 + (buf[q] - 48) if nf < 18 else frac
                        nf += 1
                        q += 1
                    if nf > 0 and q + 1 < n and buf[q] == 58 and buf[q + 1] == 32:
                        count += 1
                        if nd + nf <= 15:
                            t = (whole * pow10[nf] + frac) / pow10[nf]
                        else:
                            count += 100  # too long to read exactly: not a plain sample
                        # Hash " 0.0: " in place of the time, and go on after the match.
                        h = (h ^ np.uint64(32)) * prime
                        for z in zero_dot_zero:
                            h = (h ^ z) * prime
                        h = (h ^ np.uint64(58)) * prime
                        h = (h ^ np.uint64(32)) * prime
                        length += 6
                        j = q + 2
                        continue
            if c == 10:
                lines += 1
            h = (h ^ np.uint64(c)) * prime
            length += 1
            j += 1
        if k == cap:
            cap *= 2
            starts = _grow_i(starts, cap)
            ends = _grow_i(ends, cap)
            keys = _grow_u(keys, cap)
            times = _grow_f(times, cap)
            ntimes = _grow_i(ntimes, cap)
            nls = _grow_i(nls, cap)
        starts[k] = i
        ends[k] = j
        keys[k] = (h ^ np.uint64(length)) * prime
        times[k] = t
        ntimes[k] = count
        nls[k] = lines
        k += 1
        if j >= n:
            break
        i = j + 2
    return starts[:k], ends[:k], keys[:k], times[:k], ntimes[:k], nls[:k]


@njit
def _grow_i(a: npt.NDArray[np.int64], cap: int) -> npt.NDArray[np.int64]:
    out = np.empty(cap, np.int64)
    out[: len(a)] = a
    return out


@njit
def _grow_u(a: npt.NDArray[np.uint64], cap: int) -> npt.NDArray[np.uint64]:
    out = np.empty(cap, np.uint64)
    out[: len(a)] = a
    return out


@njit
def _grow_f(a: npt.NDArray[np.float64], cap: int) -> npt.NDArray[np.float64]:
    out = np.empty(cap, np.float64)
    out[: len(a)] = a
    return out


__all__ = ["POW10", "scan"]
