"""Pausing the cyclic garbage collector around allocation-heavy work that makes no cycles.

A module of its own, not beside the trace records it was first written for: the kernel log and profile paths
use it too, and importing ``forensics.types.trace`` for it cost them ~2 ms of start-up (its enums, records and
named tuple).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a chunk is parsed or analysed.

    A chunk makes hundreds of thousands of short-lived tuples; each 700
    allocations start a collection that walks the young ones, and none can be
    part of a cycle (tuples of bytes, ints and floats).  Measured: about 5% of
    the instructions of the whole analysis.  The previous state is restored.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
