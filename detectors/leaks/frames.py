"""The adapter from an opened slab-watch store to :class:`~detectors.leaks.analysis.LeakInput`.

The store is opened (and its errors reported) by the caller; this module only
calls its read API (``slab_frame``, ``counter_frame``, ``runs``,
``reclaimable``, ``aliases``), described here as a Protocol so the detectors
do not depend on the collector package.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from forensics.model import NotAvailable

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pandas as pd

    from detectors.leaks.analysis import LeakInput


class RunLike(Protocol):
    """What the adapter reads of a stored run."""

    @property
    def id(self) -> int:
        """The run id."""

    @property
    def mem_total_bytes(self) -> int | None:
        """MemTotal read when the run started."""


class SampleStore(Protocol):
    """The read API of ``collectors.slabstore.SlabStore`` the adapter uses."""

    path: Path

    def runs(self) -> Sequence[RunLike]:
        """All runs, oldest first."""

    def slab_frame(self, run_id: int | None = None) -> pd.DataFrame:
        """One row per sample and cache."""

    def counter_frame(self, run_id: int | None = None) -> pd.DataFrame:
        """One row per sample and counter."""

    def reclaimable(self, run_id: int) -> dict[str, bool]:
        """Cache name -> reclaim_account."""

    def aliases(self, run_id: int) -> dict[str, str]:
        """Merged cache name -> the /sys/kernel/slab directory it shares."""


def leak_input(store: SampleStore, run_id: int | None = None, last_hours: float | None = None) -> LeakInput:
    """The samples of one run (or the whole store), optionally only the last ``last_hours``.

    Cache attributes come from the runs read: a later run's reclaim_account
    and aliases win over an earlier one's (caches are created and merged at
    boot, so they rarely differ).
    """
    from detectors.leaks.analysis import LeakInput

    slabs = store.slab_frame(run_id)
    counters = store.counter_frame(run_id)
    if last_hours is not None and len(slabs):
        since = float(slabs["wall"].max()) - last_hours * 3600.0
        slabs = slabs[slabs["wall"] >= since]
        counters = counters[counters["wall"] >= since]
    runs = [r for r in store.runs() if run_id is None or r.id == run_id]
    reclaim: dict[str, bool] = {}
    aliases: dict[str, str] = {}
    for run in runs:
        reclaim.update(store.reclaimable(run.id))
        aliases.update(store.aliases(run.id))
    totals = [r.mem_total_bytes for r in runs if r.mem_total_bytes]
    mem_total: int | NotAvailable = int(totals[-1]) if totals else NotAvailable("the store's runs lack MemTotal")
    return LeakInput(
        slabs=slabs,
        counters=counters,
        mem_total=mem_total,
        reclaim_account=reclaim,
        aliases=aliases,
        source=str(store.path),
    )
