"""Leak detectors: which slab caches and kernel memory grow like a leak, and who allocates them.

Pure analysis of sample tables (as the slab-watch store holds them, read for them by
forensics/pipelines/leaks.py's ``leak_input``): no file I/O, no clock.  Entry point:
:func:`detectors.leaks.analysis.analyse`.  The modules, in the order data flows through them:

* :mod:`~detectors.leaks.series`: per-boot matrices of series, window medians;
* :mod:`~detectors.leaks.features`: slopes, linearity, persistence, reclaim, change points;
* :mod:`~detectors.leaks.decision`: the ordered grading rules;
* :mod:`~detectors.leaks.judge`: screening and grading every series, evidence samples;
* :mod:`~detectors.leaks.cogrowth`: caches growing together, and the user action;
* :mod:`~detectors.leaks.attribution`: who allocates each cache, how to confirm;
* :mod:`~detectors.leaks.meminfo`: kernel memory outside the slab caches;
* :mod:`~detectors.leaks.findings`: verdicts as findings with evidence;
* :mod:`~detectors.leaks.evidence`: resolving SAMPLE evidence against sample tables.

Importing this package imports numpy and pandas: commands import it
inside their functions only.
"""

from __future__ import annotations
