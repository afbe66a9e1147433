"""The C heap of a run that reads a large input: freed memory kept for reuse, not handed back to the system.

A chunked reader makes a few buffers of about a chunk each (the chunk read, its normalized copy, the scanner's
buffer joined with the rest of the last one), and frees them when the next chunk comes.  glibc's defaults hand
such memory back: a block above its mmap threshold (128 KiB at first, raised to the size of each mapped block
freed) is a mapping of its own, unmapped when freed, and the heap's top is trimmed once more than twice that is
free.  Each new chunk's buffers were then fresh pages, each first touched at a page fault that zeroes it (2-20 us
a page on the 2-core VM the benchmarks run on, by the hour: ``clear_page_erms`` was 1-16% of the samples of three
runs of the corpus x4).  Measured (2026-12-07, docs/measurements/dmesg.md, twenty-fourth part), ``kforensic dmesg``
with the settings made once its input is known to be larger than a chunk, against the same tree without them: the
100 MB console log faulted ~14,900-15,700 -> ~9,800 times, the syzkaller corpus x4 ~15,100-16,000 -> ~14,500.
Either setting alone faulted more (set as the environment's ``MALLOC_*_`` variables, the console log 20,536 ->
56,800 with the trim threshold alone: it turns glibc's raising of the mmap threshold off, and every buffer was a
mapping again).

The cost: memory freed stays in the process to its end, for its next allocations (a command that reads, reports and
exits); peak RSS measured +0.1 MiB on the corpus x4, +0.6 to +5.6 MiB on the console log.
"""

from __future__ import annotations

#: mallopt's parameters (glibc's malloc.h) and the values set: the largest mmap threshold glibc takes on 64 bits
#: (HEAP_MAX_SIZE / 2; a larger value is refused), and a trim threshold no heap of these runs reaches.
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_MMAP_THRESHOLD = 32 << 20
_TRIM_THRESHOLD = 1 << 30

_kept: list[bool] = []  # the answer of the first call, for the next ones


def keep_freed_memory() -> bool:
    """Tell the C library to keep the memory freed in this process for its next allocations (once a process);
    whether it took both settings (False where the C library is not glibc: its allocator keeps to itself).

    Called where a reader knows its input is larger than one chunk: ctypes' import (~7 M instructions, ~1.5 ms) is
    then paid by runs that gain ~1,500 faults or more from it, not by a small log's.
    """
    if _kept:
        return _kept[0]
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # no C library symbols to look up, or no mallopt in it
        _kept.append(False)
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    # Both or neither: either one set ends glibc's raising of the mmap threshold, and alone each faulted more.
    took = bool(mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD))
    _kept.append(took)
    return took
