"""The call chain interner of the profile reader, a kernel for numba (compiled ahead of time: perf_chains_aot).

A recording of a busy machine has ~90k distinct call chain texts (they differ in addresses and offsets)
made of ~1.2M lines, but they name only ~15k distinct chains of ~10k distinct symbols.  The Python
reader hashes, copies and looks up every line as a bytes object (about 0.6-0.8 s for such a recording);
:func:`intern_chains` reads all texts once, as bytes, and gives each line the number of its frame key
(its symbol without the ``+0x`` offset, its DSO, whether its address is in the kernel half: what
:func:`collectors.perf_script.parse_frame_line` reads) and each text the number of its chain (its
sequence of keys), so that Python parses each key and makes each chain's frames once.

A line is keyed only where the reader's regular expression ``^\\s*(\\w+)\\s*(.+) \\((.*)\\)`` is certain to
match it the way it is read here: the expression tries the longest address, the longest run of spaces
and the longest symbol first, so when that way (the last `` (`` before the last ``)``, after at least
one symbol byte) matches, it is the match.  A text holding any other line (one that needs the
expression to give back bytes, or no frame at all) is not numbered: the caller reads it line by line.
Blank and comment lines (``#``) are no frames, as in the reader.

Plain Python over numpy arrays, one function without numba's import: a run on the module built ahead of time
imports this one for :data:`KEY_COLUMNS` (collectors/perf_chains.py) and must not load numba (0.3 s of CPU,
~110 MB), so there are no ``@compiled`` helpers and its three element-by-element compares stay written out
(``x == 32 or 9 <= x <= 13`` is the bytes ``\\s``); only run compiled.
"""

from __future__ import annotations

from typing import Any

_FNV_OFFSET = -3750763034362895579  # 0xcbf29ce484222325 as int64: the arithmetic stays in int64 (wraps)
_FNV_PRIME = 1099511628211

#: Columns of the key table: symbol start and end (offset removed), DSO start and end, kernel half, hash.
KEY_COLUMNS = 6


def intern_chains(
    buf: Any,
    body_ends: Any,
    line_ids: Any,
    body_first: Any,
    body_count: Any,
    body_chain: Any,
    keys: Any,
    key_table: Any,
    chain_first: Any,
    chain_table: Any,
) -> tuple[int, int]:
    """Number the frame keys of every line and the chain of every text; (keys, chains) made, or -1 when full.

    ``buf``: the texts joined by newlines, text ``b`` ending (exclusive) at ``body_ends[b]``.  Out:
    ``line_ids`` (one per line, packed per text from ``body_first[b]``, ``body_count[b]`` of them, blank
    and comment lines left out), ``body_chain[b]`` (-1: a line is not keyed, read it line by line),
    ``keys`` (:data:`KEY_COLUMNS` per key), ``chain_first[c]`` (the first text of chain ``c``).
    ``key_table`` and ``chain_table``: zeroed, power-of-two sizes larger than ``keys`` and
    ``chain_first`` hold (open addressing, id + 1 per slot).  A result of -1: ``keys`` (first) or
    ``chain_first`` (second) was too small; call again with more room.
    """
    n_keys = 0
    n_chains = 0
    n_ids = 0
    key_mask = len(key_table) - 1
    chain_mask = len(chain_table) - 1
    start = 0
    for b in range(len(body_ends)):
        end = body_ends[b]
        first = n_ids
        ok = True
        pos = start
        while True:
            le = pos
            while le < end and buf[le] != 10:
                le += 1
            if le > pos and buf[pos] != 35:  # not blank, not a comment
                if not (buf[pos] == 32 or 9 <= buf[pos] <= 13):
                    ok = False
                    break
                i = pos
                while i < le and (buf[i] == 32 or 9 <= buf[i] <= 13):
                    i += 1
                c0 = buf[i] if i < le else 0
                word = 48 <= c0 <= 57 or 65 <= c0 <= 90 or 97 <= c0 <= 122 or c0 == 95
                if not word:
                    ok = False
                    break
                i0 = i
                while i < le:
                    c = buf[i]
                    if not (48 <= c <= 57 or 65 <= c <= 90 or 97 <= c <= 122 or c == 95):
                        break
                    i += 1
                i1 = i
                while i < le and (buf[i] == 32 or 9 <= buf[i] <= 13):
                    i += 1
                i2 = i
                close = le - 1
                while close >= pos and buf[close] != 41:
                    close -= 1
                e = close - 2
                while e >= i2 + 1 and not (buf[e] == 32 and buf[e + 1] == 40):
                    e -= 1
                if close < pos or e < i2 + 1:
                    ok = False
                    break
                # The offset: the symbol's last "+0x", removed when something follows it and all of that is hex.
                raw_end = e
                p3 = e - 3
                while p3 >= i2 and not (buf[p3] == 43 and buf[p3 + 1] == 48 and buf[p3 + 2] == 120):
                    p3 -= 1
                if p3 > i2 and e > p3 + 3:
                    hexed = True
                    for j in range(p3 + 3, e):
                        c = buf[j]
                        if not (48 <= c <= 57 or 97 <= c <= 102):
                            hexed = False
                            break
                    if hexed:
                        raw_end = p3
                high = 0
                if (
                    i1 - i0 == 16
                    and buf[i0] == 102
                    and buf[i0 + 1] == 102
                    and buf[i0 + 2] == 102
                    and buf[i0 + 3] == 102
                ):
                    high = 1
                h = _FNV_OFFSET
                for j in range(i2, raw_end):
                    h = (h ^ buf[j]) * _FNV_PRIME
                h = (h ^ 256) * _FNV_PRIME
                for j in range(e + 2, close):
                    h = (h ^ buf[j]) * _FNV_PRIME
                h = (h ^ (257 + high)) * _FNV_PRIME
                slot = h & key_mask
                kid = -1
                while key_table[slot] != 0:
                    k = key_table[slot] - 1
                    if (
                        keys[k, 5] == h
                        and keys[k, 4] == high
                        and keys[k, 1] - keys[k, 0] == raw_end - i2
                        and keys[k, 3] - keys[k, 2] == close - e - 2
                    ):
                        same = True
                        at = keys[k, 0]
                        for j in range(i2, raw_end):
                            if buf[at + j - i2] != buf[j]:
                                same = False
                                break
                        if same:
                            at = keys[k, 2]
                            for j in range(e + 2, close):
                                if buf[at + j - e - 2] != buf[j]:
                                    same = False
                                    break
                        if same:
                            kid = k
                            break
                    slot = (slot + 1) & key_mask
                if kid < 0:
                    if n_keys == len(keys) or 2 * (n_keys + 1) > len(key_table):
                        return -1, n_chains
                    kid = n_keys
                    n_keys += 1
                    keys[kid, 0] = i2
                    keys[kid, 1] = raw_end
                    keys[kid, 2] = e + 2
                    keys[kid, 3] = close
                    keys[kid, 4] = high
                    keys[kid, 5] = h
                    key_table[slot] = kid + 1
                line_ids[n_ids] = kid
                n_ids += 1
            if le >= end:
                break
            pos = le + 1
        start = end + 1
        if not ok:
            body_chain[b] = -1
            n_ids = first
            continue
        count = n_ids - first
        body_first[b] = first
        body_count[b] = count
        h = _FNV_OFFSET
        for j in range(first, n_ids):
            h = (h ^ line_ids[j]) * _FNV_PRIME
        slot = h & chain_mask
        cid = -1
        while chain_table[slot] != 0:
            c = chain_table[slot] - 1
            other = chain_first[c]
            if body_count[other] == count:
                at = body_first[other]
                same = True
                for j in range(count):
                    if line_ids[at + j] != line_ids[first + j]:
                        same = False
                        break
                if same:
                    cid = c
                    break
            slot = (slot + 1) & chain_mask
        if cid < 0:
            if n_chains == len(chain_first) or 2 * (n_chains + 1) > len(chain_table):
                return n_keys, -1
            cid = n_chains
            n_chains += 1
            chain_first[cid] = b
            chain_table[slot] = cid + 1
        body_chain[b] = cid
    return n_keys, n_chains


__all__ = ["KEY_COLUMNS", "intern_chains"]
