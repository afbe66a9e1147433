"""Leak detectors: which slab caches and kernel memory grow like a leak, and who allocates them.

Pure analysis of sample tables (as the slab-watch store holds them): no file
I/O, no clock.  Entry point: :func:`detectors.leaks.analysis.analyse`.  The
modules, in the order data flows through them:

* :mod:`~detectors.leaks.series`: per-boot matrices of series, window medians;
* :mod:`~detectors.leaks.features`: slopes, linearity, persistence, reclaim, change points;
* :mod:`~detectors.leaks.decision`: the ordered grading rules;
* :mod:`~detectors.leaks.judge`: screening and grading every series, evidence samples;
* :mod:`~detectors.leaks.cogrowth`: caches growing together, and the user action;
* :mod:`~detectors.leaks.attribution`: who allocates each cache, how to confirm;
* :mod:`~detectors.leaks.meminfo`: kernel memory outside the slab caches;
* :mod:`~detectors.leaks.findings`: verdicts as findings with evidence;
* :mod:`~detectors.leaks.evidence`: resolving SAMPLE evidence against sample tables.

Importing this package imports numpy, pandas and scipy: commands import it
inside their functions only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from detectors.leaks.frames import SampleStore
    from forensics.model import Finding


def findings_from_store(store: SampleStore, run_id: int | None = None) -> tuple[Finding, ...]:
    """The leak findings of a store's run (or of the whole store): the end-of-run hook of slab-watch.

    The last finding (info) says what was examined and what it could have
    shown.  ``store`` is an opened ``collectors.slabstore.SlabStore``; numpy,
    pandas and scipy are imported here, not when the package is.
    """
    from detectors.leaks.analysis import analyse
    from detectors.leaks.frames import leak_input

    data = leak_input(store, run_id)
    analysis = analyse(data)
    if not len(data.slabs):
        return analysis.findings  # nothing the leak analysis is about was sampled: no statement of coverage
    return (*analysis.findings, analysis.coverage(data.source))
