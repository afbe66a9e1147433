"""The chunk pass of the profile reader, a kernel for numba (compiled ahead of time: perf_chains_aot).

What :meth:`collectors.perf_script.ScriptParser._blocks_bulk` does per 512 KiB of ``perf script`` text with
numpy and dictionaries (:func:`collectors.perf_scan.mask_times`, the split at blank lines, one look-up of each
sample text as a bytes object, its length and newlines), with no object per sample: numpy finds the newlines
and colons (:mod:`collectors.perf_chunks`), :func:`scan_chunk` steps from one to the next to mask every time
exactly as ``mask_times`` does (the same candidates, the same bounds, the same doubles for the span), to split
the masked text where ``bytes.split(b"\n\n")`` splits it, and gives each piece its slot from a table of the
masked texts seen before (kept in one byte store, compared exactly, not by hash alone); a text not seen before
gets the next slot, in the order met, as the dictionary of the Python path gives them.  Python then parses
only the new texts, as on the numpy path.

Plain Python over numpy arrays, without numba's import (see :mod:`collectors.perf_chain_kernel`: a run on the
module built ahead of time must not load numba); only run compiled.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_FNV_OFFSET = -3750763034362895579  # 0xcbf29ce484222325 as int64: the arithmetic stays in int64 (wraps)
_FNV_PRIME = 1099511628211
#: A time with more digits than this is not read exactly by ``mask_times``: the chunk goes to the per-sample code.
MAX_DIGITS = 15

#: Fields of the ``state`` array: slots made, store bytes used, new slots of this chunk, times found.
SLOTS, USED, NEW, TIMES = 0, 1, 2, 3


def scan_chunk(
    buf: Any,
    newlines: Any,
    cands: Any,
    colons: Any,
    wholes: Any,
    table: Any,
    slot_start: Any,
    slot_len: Any,
    slot_hash: Any,
    store: Any,
    state: Any,
    piece_slot: Any,
    piece_start: Any,
    piece_lines: Any,
    piece_times: Any,
    new_first: Any,
    new_pos: Any,
    span: Any,
) -> int:
    """Mask the times of ``buf`` in place, split it into pieces and give each its slot; the number of pieces.

    -1 (nothing interned) when a time has more than :data:`MAX_DIGITS` digits.  ``newlines`` and ``cands``:
    the offsets of every newline and every colon of ``buf``, ascending (numpy finds them a vector at a time;
    the loops here then step from one to the next, not byte by byte); ``colons``: room for the offset of each
    time's colon (``len(cands)``) and ``wholes`` for its digits read as one integer (the dot left out: the
    time's text is these digits, zero-padded to the digits of the masked text).  ``table`` (open addressing,
    slot + 1 per entry, a power of two more than twice the slots it may hold), ``slot_start``/``slot_len``/
    ``slot_hash`` (each slot's masked text in ``store``) and ``store`` persist between chunks; the caller gives
    them room for every piece of ``buf`` being new.  ``state``: see :data:`SLOTS` (``state[SLOTS]`` and
    ``state[USED]`` in and out).  Out per piece: its slot (0: empty), start, newlines and times; per new slot
    (``state[NEW]`` of them, in slot order): its first piece and its entry in ``table`` (to forget it);
    ``span``: the smallest and largest time, the first and the last, the largest step back and the largest step
    forward from one time to the next (when ``state[TIMES]``).
    """
    n = len(buf)
    # Pass 1: the times, as mask_times finds them (a colon, a space after, digits, a dot, digits, a space).
    n_times = 0
    lo = 0.0
    hi = 0.0
    first = 0.0
    prev = 0.0
    back = 0.0
    gap = 0.0
    for k in range(len(cands)):
        c = cands[k]
        if c < 1 or c > n - 2 or buf[c + 1] != 32 or not 48 <= buf[c - 1] <= 57:
            continue
        dot = c - 1
        while dot >= 0 and 48 <= buf[dot] <= 57:
            dot -= 1
        if dot < 1 or buf[dot] != 46:
            continue
        space = dot - 1
        while space >= 0 and 48 <= buf[space] <= 57:
            space -= 1
        if space == dot - 1 or space < 0 or buf[space] != 32:
            continue
        if c - dot - 1 + dot - space - 1 > MAX_DIGITS:
            return -1
        whole = 0
        for j in range(space + 1, dot):
            whole = whole * 10 + (buf[j] - 48)
            buf[j] = 48
        scale = 1
        for j in range(dot + 1, c):
            whole = whole * 10 + (buf[j] - 48)
            scale *= 10
            buf[j] = 48
        t = whole / float(scale)  # (S * 10**len(F) + F) / 10**len(F): exact below 2**53, as mask_times reads it
        if n_times == 0 or t < lo:
            lo = t
        if n_times == 0 or t > hi:
            hi = t
        if n_times == 0:
            first = t
        elif t < prev:
            back = max(back, prev - t)
        else:
            gap = max(gap, t - prev)
        prev = t
        colons[n_times] = c
        wholes[n_times] = whole
        n_times += 1
    span[0] = lo
    span[1] = hi
    span[2] = first
    span[3] = prev
    span[4] = back
    span[5] = gap
    state[TIMES] = n_times
    # Pass 2: the pieces between blank lines (bytes.split(b"\n\n"): leftmost, not overlapping), each looked up.
    mask = len(table) - 1
    n_slots = state[SLOTS]
    used = state[USED]
    n_new = 0
    n_pieces = 0
    ci = 0
    pos = 0
    n_lines = len(newlines)
    li = 0
    while True:
        # The piece ends at the next newline followed by another (the newlines before it are its lines).
        end = n
        lines = 0
        while li < n_lines:
            if li + 1 < n_lines and newlines[li + 1] == newlines[li] + 1:
                end = newlines[li]
                break
            lines += 1
            li += 1
        li += 2  # the blank line's two newlines
        # FNV-1a over four interleaved lanes (bytes 4k, 4k + 1, ... of the text): four multiplications in flight
        # instead of one chain of them; counted from the text's start, so equal texts hash alike anywhere.
        h0 = _FNV_OFFSET
        h1 = _FNV_OFFSET
        h2 = _FNV_OFFSET
        h3 = _FNV_OFFSET
        j = pos
        while j + 4 <= end:
            h0 = (h0 ^ buf[j]) * _FNV_PRIME
            h1 = (h1 ^ buf[j + 1]) * _FNV_PRIME
            h2 = (h2 ^ buf[j + 2]) * _FNV_PRIME
            h3 = (h3 ^ buf[j + 3]) * _FNV_PRIME
            j += 4
        while j < end:
            h0 = (h0 ^ buf[j]) * _FNV_PRIME
            j += 1
        h = ((((h0 * _FNV_PRIME) ^ h1) * _FNV_PRIME ^ h2) * _FNV_PRIME) ^ h3
        times = 0
        while ci < n_times and colons[ci] < end:
            ci += 1
            times += 1
        size = end - pos
        slot = 0
        if size:
            at = h & mask
            slot = -1
            while table[at] != 0:
                k = table[at] - 1
                if slot_hash[k] == h and slot_len[k] == size:
                    other = slot_start[k]
                    # (numba's array_equal of the two slices: 0.136 -> 0.112 s for kernel.perf.txt x175, whose
                    # samples are nearly all known texts, against a compare loop written out)
                    if np.array_equal(store[other : other + size], buf[pos : pos + size]):
                        slot = k
                        break
                at = (at + 1) & mask
            if slot < 0:
                slot = n_slots
                n_slots += 1
                store[used : used + size] = buf[pos : pos + size]  # (a slice: LLVM's copy, not a byte loop)
                slot_start[slot] = used
                slot_len[slot] = size
                slot_hash[slot] = h
                used += size
                table[at] = slot + 1
                new_first[n_new] = n_pieces
                new_pos[n_new] = at
                n_new += 1
        piece_slot[n_pieces] = slot
        piece_start[n_pieces] = pos
        piece_lines[n_pieces] = lines
        piece_times[n_pieces] = times
        n_pieces += 1
        if end >= n:
            break
        pos = end + 2
    state[SLOTS] = n_slots
    state[USED] = used
    state[NEW] = n_new
    return n_pieces


def intern_ranges(
    buf: Any,
    starts: Any,
    ends: Any,
    table: Any,
    ent_start: Any,
    ent_len: Any,
    ent_hash: Any,
    store: Any,
    state: Any,
    out_ids: Any,
    sep: int,
) -> int:
    """Give each range ``buf[starts[i]:ends[i]]`` the number of its text, the texts not met before the next ones;
    the number of new texts.

    The texts met so far are kept in ``store`` (each followed by the byte ``sep`` when it is 0-255), entry ``k``
    at ``ent_start[k]`` for ``ent_len[k]`` bytes, hashed ``ent_hash[k]`` (the hash :func:`scan_chunk` gives a
    text), found through ``table`` (open addressing, entry + 1 per place, a power of two more than twice the
    entries); ``state``: entries made and store bytes used, in and out.  The caller gives room for every range
    being new.  Out: ``out_ids[i]``.  What the reader numbers the masked header lines of new sample texts and
    the call chain texts with.
    """
    mask = len(table) - 1
    n_ent = state[0]
    used = state[1]
    for i in range(len(starts)):
        pos = starts[i]
        end = ends[i]
        h0 = _FNV_OFFSET
        h1 = _FNV_OFFSET
        h2 = _FNV_OFFSET
        h3 = _FNV_OFFSET
        j = pos
        while j + 4 <= end:
            h0 = (h0 ^ buf[j]) * _FNV_PRIME
            h1 = (h1 ^ buf[j + 1]) * _FNV_PRIME
            h2 = (h2 ^ buf[j + 2]) * _FNV_PRIME
            h3 = (h3 ^ buf[j + 3]) * _FNV_PRIME
            j += 4
        while j < end:
            h0 = (h0 ^ buf[j]) * _FNV_PRIME
            j += 1
        h = ((((h0 * _FNV_PRIME) ^ h1) * _FNV_PRIME ^ h2) * _FNV_PRIME) ^ h3
        size = end - pos
        at = h & mask
        found = -1
        while table[at] != 0:
            k = table[at] - 1
            if ent_hash[k] == h and ent_len[k] == size:
                other = ent_start[k]
                if np.array_equal(store[other : other + size], buf[pos : pos + size]):  # (as scan_chunk's)
                    found = k
                    break
            at = (at + 1) & mask
        if found < 0:
            found = n_ent
            n_ent += 1
            store[used : used + size] = buf[pos : pos + size]  # (a slice: LLVM's copy, not a byte loop)
            ent_start[found] = used
            ent_len[found] = size
            ent_hash[found] = h
            used += size
            if 0 <= sep <= 255:
                store[used] = sep
                used += 1
            table[at] = found + 1
        out_ids[i] = found
    made = n_ent - state[0]
    state[0] = n_ent
    state[1] = used
    return int(made)


__all__ = ["MAX_DIGITS", "intern_ranges", "scan_chunk"]
