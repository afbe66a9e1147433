"""The adapter from an opened slab-watch store to :class:`~detectors.leaks.analysis.LeakInput`.

The store is opened (and its errors reported) by the caller; this module only
calls its read API (``slab_table``, ``counter_table``, ``runs``,
``reclaimable``, ``aliases``), described here as a Protocol so the detectors
do not depend on the collector package.

The slabs and counters are read as matrices (:class:`~forensics.types.slab.SlabTable`,
:class:`~forensics.types.slab.CounterTable`), the counters only those the analysis
reads (meminfo, and the vmstat counters that show reclaim): a week of 10 s samples of
250 caches never becomes a 15-million-row frame.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from forensics.model import NotAvailable

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from detectors.leaks.analysis import LeakInput
    from forensics.types.slab import CounterTable, SlabTable


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

    def slab_table(self, run_id: int | None = None) -> SlabTable:
        """The slab samples as matrices."""

    def counter_table(
        self, run_id: int | None = None, select: Callable[[str, str], bool] | None = None
    ) -> CounterTable:
        """The counter samples as a matrix (the counters ``select(source, name)`` accepts)."""

    def reclaimable(self, run_id: int) -> dict[str, bool]:
        """Cache name -> reclaim_account."""

    def aliases(self, run_id: int) -> dict[str, str]:
        """Merged cache name -> the /sys/kernel/slab directory it shares."""


def _read_by_the_analysis(source: str, name: str) -> bool:
    """The counters the leak analysis reads: meminfo, and the vmstat counters that show reclaim."""
    from detectors.leaks.analysis import RECLAIM_COUNTERS

    return source == "meminfo" or (source == "vmstat" and name in RECLAIM_COUNTERS)


def leak_input(store: SampleStore, run_id: int | None = None, last_hours: float | None = None) -> LeakInput:
    """The samples of one run (or the whole store), optionally only the last ``last_hours``.

    Cache attributes come from the runs read: a later run's reclaim_account
    and aliases win over an earlier one's (caches are created and merged at
    boot, so they rarely differ).
    """
    from detectors.leaks.analysis import LeakInput

    slabs = store.slab_table(run_id)
    counters = store.counter_table(run_id, _read_by_the_analysis)
    if last_hours is not None and len(slabs.walls):
        since = float(slabs.walls.max()) - last_hours * 3600.0
        slabs = slabs.between(since)
        counters = counters.between(since)
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
