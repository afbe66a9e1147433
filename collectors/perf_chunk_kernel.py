"""The chunk pass of the profile reader, a kernel for numba (compiled ahead of time: perf_chains_aot).

What :meth:`collectors.perf_script.ScriptParser._blocks_bulk` does per 512 KiB of ``perf script`` text with
numpy and dictionaries (:func:`collectors.perf_scan.mask_times`, the split at blank lines, one look-up of each
sample text as a bytes object, its length and newlines), with no object per sample: :func:`scan_chunk` finds the
newlines and colons (eight bytes at a time), steps from one to the next to mask every time exactly as
``mask_times`` does (the same candidates, the same bounds, the same doubles for the span), splits the masked text
where ``bytes.split(b"\n\n")`` splits it, and gives each piece its slot: a text not seen before gets the next
slot, in the order met, as the dictionary of the Python path gives them.

One pass, no text read twice (issue #28): a piece is numbered as its two parts, its masked header line and its
call chain text (each kept once, compared exactly, not by hash alone), and a call chain text met for the first
time has its lines keyed there and gets the number of its chain.  A recording of a busy machine has ~90k distinct
call chain texts (they differ in addresses and offsets) of ~500k lines, but they name only ~15k chains of ~9k
keys: a line's key is what :func:`collectors.perf_script.parse_frame_line` reads of it (its symbol without the
``+0x`` offset, its DSO, whether its address is in the kernel half), so Python parses each key and makes each
chain's frames once.  A line is keyed only where the reader's regular expression ``^\\s*(\\w+)\\s*(.+) \\((.*)\\)``
is certain to match it the way it is read here: the expression tries the longest address, the longest run of
spaces and the longest symbol first, so when that way (the last `` (`` before the last ``)``, after at least one
symbol byte) matches, it is the match.  A text holding any other line (one that needs the expression to give back
bytes, or no frame at all) has no chain: the caller reads it line by line.  Blank and comment lines (``#``) are no
frames, as in the reader.

Plain Python over numpy arrays, without numba's import: a run on the module built ahead of time imports this one
for its constants and must not load numba (0.3 s of CPU, ~110 MB), so there are no ``@compiled`` helpers and the
element-by-element compares stay written out (``x == 32 or 9 <= x <= 13`` is the bytes ``\\s``); only run
compiled.
"""

from __future__ import annotations

from typing import Any

import numpy as np

# The zero-byte test's constants (uint64: numba keeps the arithmetic unsigned).
_NEWLINES8 = np.uint64(0x0A0A0A0A0A0A0A0A)
_COLONS8 = np.uint64(0x3A3A3A3A3A3A3A3A)
_BITS64 = np.uint64(64)
_ZERO64 = np.uint64(0)
#: The exact zero-byte test's constant (no false hits, unlike ``(t - 0x01..) & ~t & 0x80..`` past the first hit), and
#: what turns a word's lowest set high bit (``0x80 << 8k``, shifted down by 7: ``1 << 8k``) into ``k``: the top byte
#: of ``(1 << 8k) * 0x0001020304050607`` is byte ``7 - k`` of the constant, which is ``k``.
_LOWS8 = np.uint64(0x7F7F7F7F7F7F7F7F)
_BYTE_AT = np.uint64(0x0001020304050607)
_ONE64 = np.uint64(1)
_SEVEN64 = np.uint64(7)
_TOP_BYTE64 = np.uint64(56)

#: The bytes of ``\w`` (bytes regular expressions: ASCII letters, digits and ``_``), 1 each: the address's word is read
#: with one look-up per byte, not four range compares (a global array: numba compiles it in as a constant).
_WORD_BYTES = np.zeros(256, np.uint8)
_WORD_BYTES[[*range(48, 58), *range(65, 91), *range(97, 123), 95]] = 1

_FNV_OFFSET = -3750763034362895579  # 0xcbf29ce484222325 as int64: the arithmetic stays in int64 (wraps)
_FNV_PRIME = 1099511628211
#: A time with more digits than this is not read exactly by ``mask_times``: the chunk goes to the per-sample code.
MAX_DIGITS = 15

#: Fields of the ``state`` array: slots made; headers made and their store's bytes used; call chain texts made
#: and their store's bytes used; frame keys made and their store's bytes used; chains made and their keys' store
#: used; then per call: new slots, times found.
SLOTS, HEADERS, HEADER_USED, BODIES, BODY_USED, KEYS, KEY_USED, CHAINS, KEYS_USED, NEW, TIMES = range(11)
#: ... and the newlines and colons found (:func:`scan_chunk` finds them first).
NEWLINES, COLONS = 11, 12
#: ... and a sum of what passes 3 and 5 looked at (kept only so that the compiler keeps those loads).
LOOKED = 13
STATE_SIZE = 14
#: What a line is when it is no frame key's: a blank or comment line (no frame, left out of the chain), or a
#: line the kernel does not key (its text is read line by line: the chain is -1).
NOT_FRAME, ODD = -2, -1
#: Columns of the key table: symbol start and end (offset removed), DSO start and end (in ``key_store``), kernel
#: half, hash.
KEY_COLUMNS = 6
#: ``mode``: the pieces of a chunk of perf script text (a header line, then its call chain), or call chain texts
#: alone (given as ranges).
CHUNK_MODE, BODY_MODE = 0, 1


def scan_chunk(
    buf: Any,
    words: Any,
    newlines: Any,
    cands: Any,
    colons: Any,
    wholes: Any,
    mode: int,
    given_start: Any,
    given_end: Any,
    slot_table: Any,
    slot_meta: Any,
    header_table: Any,
    header_meta: Any,
    header_store: Any,
    header_words: Any,
    body_table: Any,
    body_meta: Any,
    body_store: Any,
    body_words: Any,
    key_table: Any,
    keys: Any,
    key_store: Any,
    key_words: Any,
    chain_table: Any,
    chain_meta: Any,
    key_ids: Any,
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

    ``words``: ``buf``'s memory as uint64 (its first ``len(buf) // 8`` words).  -1 (nothing interned) when a time
    has more than :data:`MAX_DIGITS` digits; -2 (nothing done) when ``newlines`` or ``cands`` is too small, or a
    table, store or output has no room for every piece and line of the chunk being new (``state[NEWLINES]`` and
    ``state[COLONS]`` say how many there are: call again with more room).  The offsets of every newline and every
    colon of ``buf`` are found first, in one pass, into ``newlines`` and ``cands`` (ascending; the loops then step
    from one to the next, not byte by byte); ``colons``: room for the offset of each time's colon (as many as
    ``cands``) and ``wholes`` for its digits read as one integer (the dot left out: the time's text is these
    digits, zero-padded to the digits of the masked text).

    A piece (a masked sample text, split where ``bytes.split(b"\\n\\n")`` splits) is numbered as its two parts:
    its first line (the masked header) among the headers, the rest (its call chain text) among the bodies, and
    the pair among the slots; two pieces have one slot exactly when their texts are equal (each part kept once
    in its store, compared exactly, not by hash alone).  A body met for the first time has its lines keyed
    there (the symbol without its offset, the DSO, the address's half: see the module's text; the keys' bytes kept
    in ``key_store``), and gets the number of its chain (its
    keys, leaf first, blank and comment lines left out; -1 when a line is not keyed): the call chains are
    numbered as the samples are read, no text read twice.  Everything is numbered in the order met.

    ``mode`` :data:`BODY_MODE`: no times, no headers, no slots: the texts ``buf[given_start[i]:given_end[i]]``
    are numbered as bodies (``piece_slot[i]``: the body's number); ``newlines`` and ``cands`` are then not used.

    Tables (open addressing, entry + 1 per place, a power of two more than twice the entries they may hold) and
    the ``*_meta`` and store arrays persist between calls; the caller gives them room for every piece, line and
    byte of ``buf`` being new.  ``slot_meta``: header, body, hash per slot; ``header_meta``: start, length,
    hash; ``body_meta``: start, length, hash, chain; ``keys``: symbol start and end, DSO start and end (in
    ``key_store``), kernel half, hash; ``key_words``: ``key_store``'s memory as uint64 (its length a multiple of
    8); ``header_words`` and ``body_words``: ``header_store``'s and ``body_store``'s memory as uint64 (each text is
    kept from the start of a word); ``chain_meta``: first key (in ``key_ids``), count, hash.  ``state``: see
    :data:`SLOTS` (in and out).  Out per piece: its slot (0: empty), start, newlines and times; per new slot
    (``state[NEW]`` of them, in slot order): its first piece and its place in ``slot_table`` (to forget it);
    ``span``: the smallest and largest time, the first and the last, the largest step back and the largest step
    forward from one time to the next (when ``state[TIMES]``).
    """
    n = len(buf)
    n_nl = 0
    n_cands = 0
    if mode == CHUNK_MODE:
        # Pass 0: the newlines and colons.
        room_nl = len(newlines)
        room_cands = len(cands)
        # Eight bytes at a time (``words``: the same memory as uint64, little-endian): the bytes of a word that
        # XORed with a newline (a colon) are zero get their high bit set in a mask (the exact zero-byte test), and
        # the set bits are taken lowest first, each its byte's offset: no byte-by-byte reading of the words that
        # hold one (19% of them in a recording of distinct stacks: 1.02M newlines and 0.45M colons in 50 MB; the byte
        # loop was ~15% of this kernel's samples).  The bytes past the last whole word one by one.
        whole = n // 8
        for w in range(whole):
            x = words[w]
            t = x ^ _NEWLINES8
            u = x ^ _COLONS8
            mt = ~(((t & _LOWS8) + _LOWS8) | t | _LOWS8)
            mu = ~(((u & _LOWS8) + _LOWS8) | u | _LOWS8)
            if not (mt | mu):
                continue
            base = 8 * w
            while mt:
                if n_nl < room_nl:
                    newlines[n_nl] = base + np.int64((((mt & (~mt + _ONE64)) >> _SEVEN64) * _BYTE_AT) >> _TOP_BYTE64)
                n_nl += 1
                mt &= mt - _ONE64
            while mu:
                if n_cands < room_cands:
                    cands[n_cands] = base + np.int64((((mu & (~mu + _ONE64)) >> _SEVEN64) * _BYTE_AT) >> _TOP_BYTE64)
                n_cands += 1
                mu &= mu - _ONE64
        if whole * 8 < n:
            for j in range(whole * 8, n):
                c = buf[j]
                if c == 10:
                    if n_nl < room_nl:
                        newlines[n_nl] = j
                    n_nl += 1
                elif c == 58:
                    if n_cands < room_cands:
                        cands[n_cands] = j
                    n_cands += 1
        state[NEWLINES] = n_nl
        state[COLONS] = n_cands
        if n_nl > room_nl or n_cands > room_cands or n_cands > len(colons) or n_cands > len(wholes):
            return -2
        # Room for every piece (two newlines between two) and every line being new.
        most = n_nl // 2 + 2
        lines_most = n_nl + 1
        for made, room, table in (
            (state[SLOTS], len(slot_meta), len(slot_table)),
            (state[HEADERS], len(header_meta), len(header_table)),
            (state[BODIES], len(body_meta), len(body_table)),
            (state[CHAINS], len(chain_meta), len(chain_table)),
        ):
            if made + most > room or 2 * (made + most) > table:
                return -2
        if state[KEYS] + lines_most > len(keys) or 2 * (state[KEYS] + lines_most) > len(key_table):
            return -2
        if state[KEYS_USED] + lines_most > len(key_ids) or len(piece_slot) < most or len(new_first) < most:
            return -2
        if (
            state[HEADER_USED] + n + 8 * most > len(header_store)  # (each text starts at a word: 7 bytes more at most)
            or state[BODY_USED] + n + 8 * most > len(body_store)
            or state[KEY_USED] + n > len(key_store)
        ):
            return -2
    n_times = 0
    lo = 0.0
    hi = 0.0
    first = 0.0
    prev = 0.0
    back = 0.0
    gap = 0.0
    if mode == CHUNK_MODE:
        # Pass 1: the times, as mask_times finds them (a colon, a space after, digits, a dot, digits, a space).
        for k in range(n_cands):
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
    # Pass 2: the pieces between blank lines (bytes.split(b"\n\n"): leftmost, not overlapping), or the texts
    # given, each with its bounds and hashes; then a look at the places each will be looked up at (pass 3); then
    # each numbered, in order (pass 4), and its slot (pass 5).
    slot_mask = len(slot_table) - 1
    header_mask = len(header_table) - 1
    body_mask = len(body_table) - 1
    key_mask = len(key_table) - 1
    chain_mask = len(chain_table) - 1
    n_slots = state[SLOTS]
    n_headers = state[HEADERS]
    header_used = state[HEADER_USED]
    n_bodies = state[BODIES]
    body_used = state[BODY_USED]
    n_keys = state[KEYS]
    key_used = state[KEY_USED]
    n_chains = state[CHAINS]
    keys_used = state[KEYS_USED]
    n_new = 0
    n_pieces = 0
    ci = 0
    most = n_nl // 2 + 2 if mode == CHUNK_MODE else len(given_start)
    # start, end, lines, the first line's newline, the header's end, the header's hash, the body's hash
    bounds = np.empty((max(most, 1), 7), np.int64)
    n_all = 0
    pos = 0
    li = 0
    while True:
        if mode == CHUNK_MODE:
            # The piece ends at the next newline followed by another (the newlines before it are its lines).
            end = n
            lines = 0
            li0 = li
            while li < n_nl:
                if li + 1 < n_nl and newlines[li + 1] == newlines[li] + 1:
                    end = newlines[li]
                    break
                lines += 1
                li += 1
            li += 2  # the blank line's two newlines
            hend = newlines[li0] if lines > 0 else end  # the header: the piece's first line
            bpos = min(hend + 1, end)  # the body (the call chain text): the rest
        else:
            if n_all == len(given_start):
                break
            pos = given_start[n_all]
            end = given_end[n_all]
            lines = 0
            li0 = 0
            hend = pos  # no header
            bpos = pos
        hh = 0
        h = 0
        # The header's and the body's hashes, from the text's start: its length, then its 8-byte words in two lanes (a
        # word at any offset: two aligned words of ``words`` shifted together; in BODY_MODE, which has no ``words``,
        # the same little-endian word made of its bytes: numba's targets are little-endian), the bytes past the last
        # 16 one by one, then mixed so that every byte reaches the low bits the tables' places use.  One
        # multiplication per 8 bytes, not per byte (every byte of the input is hashed).
        if end > pos or mode != CHUNK_MODE:  # (the chunk's empty text is slot 0: no hash)
            for part in range(2):
                j = pos if part == 0 else bpos
                stop = hend if part == 0 else end
                h0 = _FNV_OFFSET ^ (stop - j)
                h1 = _FNV_OFFSET
                while j + 16 <= stop:
                    if mode == CHUNK_MODE:
                        q = j >> 3
                        r = np.uint64((j & 7) * 8)
                        if r == 0:
                            w0 = words[q]
                            w1 = words[q + 1]
                        else:
                            w0 = (words[q] >> r) | (words[q + 1] << (_BITS64 - r))
                            w1 = (words[q + 1] >> r) | (words[q + 2] << (_BITS64 - r))
                    else:
                        w0 = _ZERO64
                        w1 = _ZERO64
                        for t in range(8):
                            w0 |= np.uint64(buf[j + t]) << np.uint64(8 * t)
                            w1 |= np.uint64(buf[j + 8 + t]) << np.uint64(8 * t)
                    h0 = (h0 ^ int(np.int64(w0))) * _FNV_PRIME
                    h1 = (h1 ^ int(np.int64(w1))) * _FNV_PRIME
                    j += 16
                while j < stop:
                    h0 = (h0 ^ buf[j]) * _FNV_PRIME
                    j += 1
                h = (h0 ^ (h1 >> 29)) * _FNV_PRIME
                h = h ^ (h >> 32) ^ h1
                h = (h ^ (h >> 29)) * _FNV_PRIME
                h = h ^ (h >> 32)
                if part == 0:
                    hh = h
        bounds[n_all, 0] = pos
        bounds[n_all, 1] = end
        bounds[n_all, 2] = lines
        bounds[n_all, 3] = li0
        bounds[n_all, 4] = hend
        bounds[n_all, 5] = hh
        bounds[n_all, 6] = h
        n_all += 1
        if mode == CHUNK_MODE:
            if end >= n:
                break
            pos = end + 2
    # Pass 3: a look at each piece's place in the call chain texts' table, the text there and its first word (its
    # slot's place is looked at in pass 5): the tables and the store are megabytes, and these loads, independent of
    # each other, are fetched from memory all at once, where the numbering in order waited for each in turn (-10%
    # of the chunk pass's time).
    looked = 0
    for i in range(n_all):
        k = body_table[bounds[i, 6] & body_mask]
        if k > 0:
            looked += body_words[body_meta[k - 1, 0] >> 3]  # (its row, and the first word of its text: compared next)
    # Pass 4: each piece's header and body numbered, in order (their numbers kept in ``bounds``' hash columns, which
    # are read no more); its slot in pass 5.
    for piece in range(n_all):
        pos = bounds[piece, 0]
        end = bounds[piece, 1]
        lines = bounds[piece, 2]
        li0 = bounds[piece, 3]
        hend = bounds[piece, 4]
        hh = bounds[piece, 5]
        h = bounds[piece, 6]
        bpos = min(hend + 1, end) if mode == CHUNK_MODE else pos
        hid = -1
        bid = -1
        times = 0
        if mode == CHUNK_MODE:
            while ci < n_times and colons[ci] < end:
                ci += 1
                times += 1
            if end == pos:  # the empty text: slot 0, nothing numbered
                bounds[piece, 5] = -1
                piece_slot[n_pieces] = 0
                piece_start[n_pieces] = pos
                piece_lines[n_pieces] = 0
                piece_times[n_pieces] = times
                n_pieces += 1
                continue
        # Its masked header (CHUNK_MODE) and its body, each found in its table or kept (the same code for both: a
        # text's store is 8-byte aligned, so each is compared with the stored one and copied into the store eight
        # bytes at a time, the chunk's side read as words at any offset as the hashes read it; a byte loop did both).
        new = False
        for part in range(2 if mode == CHUNK_MODE else 1):
            head = mode == CHUNK_MODE and part == 0
            if head:
                a0, stop, hx, tmask, made, used = pos, hend, hh, header_mask, n_headers, header_used
                places, meta, store, stored = header_table, header_meta, header_store, header_words
            else:
                a0, stop, hx, tmask, made, used = bpos, end, h, body_mask, n_bodies, body_used
                places, meta, store, stored = body_table, body_meta, body_store, body_words
            size = stop - a0
            at = hx & tmask
            while True:
                k = places[at] - 1
                if k >= 0 and not (meta[k, 2] == hx and meta[k, 1] == size):
                    at = (at + 1) & tmask
                    continue
                # An empty place (k < 0): the text is new, copied into its store at ``used``; else compared with k.
                o = used if k < 0 else meta[k, 0]
                a = a0
                m = size
                same = True
                if mode == CHUNK_MODE:
                    while m >= 8:
                        q = a >> 3
                        r = np.uint64((a & 7) * 8)
                        wa = words[q]
                        if r != 0:
                            wa = (wa >> r) | (words[q + 1] << (_BITS64 - r))
                        if k < 0:
                            stored[o >> 3] = wa
                        elif wa != stored[o >> 3]:
                            same = False
                            break
                        a += 8
                        o += 8
                        m -= 8
                if same:
                    for j in range(m):
                        if k < 0:
                            store[o + j] = buf[a + j]
                        elif store[o + j] != buf[a + j]:
                            same = False
                            break
                if same:
                    break
                at = (at + 1) & tmask
            found = k
            if found < 0:
                found = made
                meta[found, 0] = used
                meta[found, 1] = size
                meta[found, 2] = hx
                places[at] = found + 1
                aligned = (size + 7) // 8 * 8  # (the next text starts at a word)
                if head:
                    n_headers += 1
                    header_used += aligned
                else:
                    n_bodies += 1
                    body_used += aligned
                    new = True
            if head:
                hid = found
            else:
                bid = found
        if new:
            # Its chain: the keys of its lines, leaf first (blank and comment lines left out; none when a line is
            # not keyed), each line keyed here while its bytes are at hand.
            count = 0
            ch = _FNV_OFFSET
            odd = False
            lp = bpos
            b = 0
            while size > 0:
                if mode == CHUNK_MODE:
                    le = newlines[li0 + b + 1] if b + 1 < lines else end
                else:
                    le = lp
                    while le < end and buf[le] != 10:
                        le += 1
                b += 1
                kid = NOT_FRAME
                if le > lp and buf[lp] != 35:  # not blank, not a comment
                    kid = ODD
                    i = lp
                    if buf[i] == 32 or 9 <= buf[i] <= 13:
                        while i < le and (buf[i] == 32 or 9 <= buf[i] <= 13):
                            i += 1
                        c0 = buf[i] if i < le else 0
                        if _WORD_BYTES[c0]:
                            i0 = i
                            while i < le and _WORD_BYTES[buf[i]]:
                                i += 1
                            i1 = i
                            while i < le and (buf[i] == 32 or 9 <= buf[i] <= 13):
                                i += 1
                            i2 = i
                            close = le - 1
                            while close >= lp and buf[close] != 41:
                                close -= 1
                            e = close - 2
                            while e >= i2 + 1 and not (buf[e] == 32 and buf[e + 1] == 40):
                                e -= 1
                            if close >= lp and e >= i2 + 1:
                                # The offset: the symbol's last "+0x", removed when something follows it and all
                                # of that is hex.
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
                                n_sym = raw_end - i2
                                n_dso = close - e - 2
                                # Hashed from the lengths, the kernel half and the first and last 8 bytes of the
                                # symbol and of the DSO, in four lanes (the compare reads all of them): a key is
                                # looked up per call chain line, and hashing every byte cost more than the rest.
                                h0 = (_FNV_OFFSET ^ n_sym) * _FNV_PRIME
                                h1 = (_FNV_OFFSET ^ n_dso) * _FNV_PRIME
                                h2 = (_FNV_OFFSET ^ high) * _FNV_PRIME
                                h3 = _FNV_OFFSET
                                for j in range(min(8, n_sym)):
                                    h0 = (h0 ^ buf[i2 + j]) * _FNV_PRIME
                                    h1 = (h1 ^ buf[raw_end - 1 - j]) * _FNV_PRIME
                                for j in range(min(8, n_dso)):
                                    h2 = (h2 ^ buf[e + 2 + j]) * _FNV_PRIME
                                    h3 = (h3 ^ buf[close - 1 - j]) * _FNV_PRIME
                                kh = ((((h0 * _FNV_PRIME) ^ h1) * _FNV_PRIME ^ h2) * _FNV_PRIME) ^ h3
                                kat = kh & key_mask
                                while key_table[kat] != 0:
                                    k = key_table[kat] - 1
                                    if (
                                        keys[k, 5] == kh
                                        and keys[k, 4] == high
                                        and keys[k, 1] - keys[k, 0] == n_sym
                                        and keys[k, 3] - keys[k, 2] == n_dso
                                    ):
                                        # Eight bytes at a time where the chunk's words are at hand (a word at any
                                        # offset: two aligned words shifted together, as the texts' hashes read
                                        # them), the rest byte by byte (written out: numba's array_equal makes an
                                        # array per call).
                                        same = True
                                        for part in range(2):
                                            a = i2 if part == 0 else e + 2
                                            o = keys[k, 0] if part == 0 else keys[k, 2]
                                            m = n_sym if part == 0 else n_dso
                                            if mode == CHUNK_MODE:
                                                while m >= 8:
                                                    wa = words[a >> 3]
                                                    ra = np.uint64((a & 7) * 8)
                                                    if ra != 0:
                                                        wa = (wa >> ra) | (words[(a >> 3) + 1] << (_BITS64 - ra))
                                                    wo = key_words[o >> 3]
                                                    ro = np.uint64((o & 7) * 8)
                                                    if ro != 0:
                                                        wo = (wo >> ro) | (key_words[(o >> 3) + 1] << (_BITS64 - ro))
                                                    if wa != wo:
                                                        same = False
                                                        break
                                                    a += 8
                                                    o += 8
                                                    m -= 8
                                            if same:
                                                for j in range(m):
                                                    if key_store[o + j] != buf[a + j]:
                                                        same = False
                                                        break
                                            if not same:
                                                break
                                        if same:
                                            kid = k
                                            break
                                    kat = (kat + 1) & key_mask
                                if kid < 0:
                                    # A new key: its symbol and DSO kept together (a few hundred KiB: the compares
                                    # read them from the CPU's caches).
                                    kid = n_keys
                                    n_keys += 1
                                    # Copied byte by byte, not as slices: numba's slice assignment compiles its
                                    # shape-mismatch error (a formatted message), 3 of the kernel's 13 s of CPU to
                                    # compile (JIT and ahead of time, 2026-12-06); the room is checked above (n).
                                    for j in range(n_sym):
                                        key_store[key_used + j] = buf[i2 + j]
                                    keys[kid, 0] = key_used
                                    key_used += n_sym
                                    keys[kid, 1] = key_used
                                    for j in range(n_dso):
                                        key_store[key_used + j] = buf[e + 2 + j]
                                    keys[kid, 2] = key_used
                                    key_used += n_dso
                                    keys[kid, 3] = key_used
                                    keys[kid, 4] = high
                                    keys[kid, 5] = kh
                                    key_table[kat] = kid + 1
                if kid == ODD:
                    odd = True
                    break
                if kid != NOT_FRAME:
                    key_ids[keys_used + count] = kid
                    count += 1
                    ch = (ch ^ kid) * _FNV_PRIME
                if le >= end:
                    break
                lp = le + 1
            cid = -1
            if not odd:
                at = ch & chain_mask
                while chain_table[at] != 0:
                    k = chain_table[at] - 1
                    if chain_meta[k, 2] == ch and chain_meta[k, 1] == count:
                        other = chain_meta[k, 0]
                        same = True
                        for j in range(count):
                            if key_ids[other + j] != key_ids[keys_used + j]:
                                same = False
                                break
                        if same:
                            cid = k
                            break
                    at = (at + 1) & chain_mask
                if cid < 0:
                    cid = n_chains
                    n_chains += 1
                    chain_meta[cid, 0] = keys_used
                    chain_meta[cid, 1] = count
                    chain_meta[cid, 2] = ch
                    chain_table[at] = cid + 1
                    keys_used += count
            body_meta[bid, 3] = cid
        if mode == CHUNK_MODE:
            bounds[piece, 5] = hid
            bounds[piece, 6] = bid
        else:
            piece_slot[n_pieces] = bid
        piece_start[n_pieces] = pos
        piece_lines[n_pieces] = lines
        piece_times[n_pieces] = times
        n_pieces += 1
    if mode == CHUNK_MODE:
        # Pass 5: each piece's slot, the pair of its numbers.  Its place in the slots' table is looked at for every
        # piece first, then the pieces are numbered in order: a new call chain text makes a new slot, whose place
        # (in a table of megabytes) was a load the numbering waited for, one piece after the other (~10% of the
        # kernel's samples); looked at first, they are fetched together, as in pass 3.
        for i in range(n_all):
            hid = bounds[i, 5]
            if hid >= 0:
                sh = (((_FNV_OFFSET ^ hid) * _FNV_PRIME) ^ bounds[i, 6]) * _FNV_PRIME
                bounds[i, 4] = sh
                k = slot_table[sh & slot_mask]
                if k > 0:
                    looked += slot_meta[k - 1, 0]
        for i in range(n_all):
            hid = bounds[i, 5]
            if hid < 0:
                continue
            bid = bounds[i, 6]
            sh = bounds[i, 4]
            at = sh & slot_mask
            slot = -1
            while slot_table[at] != 0:
                k = slot_table[at] - 1
                if slot_meta[k, 0] == hid and slot_meta[k, 1] == bid:
                    slot = k
                    break
                at = (at + 1) & slot_mask
            if slot < 0:
                slot = n_slots
                n_slots += 1
                slot_meta[slot, 0] = hid
                slot_meta[slot, 1] = bid
                slot_meta[slot, 2] = sh
                slot_table[at] = slot + 1
                new_first[n_new] = i
                new_pos[n_new] = at
                n_new += 1
            piece_slot[i] = slot
    state[LOOKED] = looked  # (kept: the compiler may not drop the loads of passes 3 and 5)
    state[SLOTS] = n_slots
    state[HEADERS] = n_headers
    state[HEADER_USED] = header_used
    state[BODIES] = n_bodies
    state[BODY_USED] = body_used
    state[KEYS] = n_keys
    state[KEY_USED] = key_used
    state[CHAINS] = n_chains
    state[KEYS_USED] = keys_used
    state[NEW] = n_new
    return n_pieces


__all__ = ["BODY_MODE", "CHUNK_MODE", "KEY_COLUMNS", "MAX_DIGITS", "NOT_FRAME", "ODD", "STATE_SIZE", "scan_chunk"]
