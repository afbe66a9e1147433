"""Differences between two profiles: which symbols gained or lost self share."""

from __future__ import annotations

from forensics.types.profile import Hotspots, SymbolDelta


def diff_hotspots(base: Hotspots, new: Hotspots, limit: int = 20) -> list[SymbolDelta]:
    """The symbols whose self share changed most, largest change first."""
    b = {r.key: r for r in base.self_symbols}
    n = {r.key: r for r in new.self_symbols}
    rows = [
        SymbolDelta(
            k,
            b[k].share if k in b else 0.0,
            n[k].share if k in n else 0.0,
            b[k].samples if k in b else 0,
            n[k].samples if k in n else 0,
        )
        for k in set(b) | set(n)
    ]
    rows.sort(key=lambda r: (-abs(r.delta), r.symbol))
    return rows[:limit]
