"""Resolving SAMPLE evidence against sample tables, for tests and for analyses without a store.

With a slab-watch store, use ``SlabStore.resolve_evidence`` instead: it reads
the stored row.  Both give the same text for the same row: a cache's slabinfo
line (as mm/slab_common.c prints it) or ``Name: value kB``.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from forensics.evidence import Resolver
from forensics.model import Evidence, LocatorKind

#: Stored text of (sample id, name), None when there is no such row.
SampleText = Callable[[int, str], str | None]


def sample_resolver(text_of: SampleText) -> Resolver:
    """A resolver of SAMPLE locators that asks ``text_of(sample_id, locator.name)``."""

    def resolve(evidence: Evidence) -> str | None:
        loc = evidence.locator
        if loc.kind is not LocatorKind.SAMPLE or not loc.name:
            return None
        return text_of(loc.start, loc.name)

    return resolve


def frame_text(slabs: pd.DataFrame, counters: pd.DataFrame | None = None) -> SampleText:
    """Stored text of rows of sample tables: caches by name, counters as ``meminfo:NAME``."""
    cols = ["sample_id", "cache", "active_objs", "num_objs", "objsize"]
    slab_rows = {
        (int(sid), str(cache)): (int(active), int(num), int(size))
        for sid, cache, active, num, size in zip(*(slabs[c].tolist() for c in cols), strict=True)
    }
    counter_rows: dict[tuple[int, str], str] = {}
    if counters is not None:
        ccols = ["sample_id", "source", "name", "unit", "value"]
        counter_rows = {
            (int(sid), f"{source}:{name}"): f"{name}: {int(value)} {unit}".rstrip()
            for sid, source, name, unit, value in zip(*(counters[c].tolist() for c in ccols), strict=True)
        }

    def text_of(sample_id: int, name: str) -> str | None:
        found = counter_rows.get((sample_id, name))
        if found is not None:
            return found
        row = slab_rows.get((sample_id, name))
        if row is None:
            return None
        return f"{name:<17} {row[0]:6} {row[1]:6} {row[2]:6} : tunables"

    return text_of
