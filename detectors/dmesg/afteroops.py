"""An oops on a kernel an earlier oops left tainted ``D``: it follows from that oops, it is no independent bug.

oops_end() (arch/x86/kernel/dumpstack.c, and every arch's die()) adds TAINT_DIE, which every later report prints
as ``D`` in its ``Tainted:`` line ("kernel died recently", Documentation/admin-guide/tainted-kernels.rst).  The
task that oopsed was killed with the locks it held and the data it was changing half-changed: a later oops on
that kernel may be its consequence (a waiter on the dead task's lock, a reader of its half-written list), so
it is said to come after the oops, not counted as a second, independent sighting.  The earlier oops is the
last report above it whose header or oops line prints a die counter (``[#1]``); without one in the log (the
ring buffer wrapped), nothing is linked, and the taint alone is said (its ``taint flag`` fact).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Final

from detectors.dmesg.findings import line_evidence
from detectors.dmesg.taint import die_line, died_before, oops_before, oopses_of
from detectors.incident.consequences import as_consequence
from forensics.model import Consequence, Finding
from forensics.types.dmesg import KernelReport, ReportGroup

#: The name of the evidence citing the earlier oops.
AFTER_OOPS: Final = "after the oops"


def how(report: KernelReport, oops: KernelReport) -> str:
    """What ties a report to the oops before it: its taint, read from its own line."""
    taint = next((n for n, t in report.lines if "Tainted:" in t), report.start_line)
    return (
        f"after the oops at line {oops.start_line} (taint D): line {taint} says the kernel had already died once "
        "(TAINT_DIE, set by oops_end()); the state that oops left (locks held by its killed task, data half-changed) "
        "may be what this one hit"
    )


def link_after_oops(source: str, groups: Sequence[ReportGroup], findings: Sequence[Finding]) -> list[Finding]:
    """The findings of one log's groups (``findings[i]`` of ``groups[i]``) with each group whose every occurrence
    is tainted ``D`` and follows an oops of another group linked to that oops's finding, as a consequence, citing
    the oops's line.  One already linked (an interruption) is left as it is."""
    kept = [r for g in groups for r in g.kept]
    if not any(died_before(r) for r in kept):
        return list(findings)  # (most logs: no report's lines are read again)
    oopses = oopses_of(kept)  # once, not for each report tainted D
    group_of = {r.start_line: i for i, g in enumerate(groups) for r in g.kept}
    out = list(findings)
    for i, group in enumerate(groups):
        if out[i].consequence_of is not None:
            continue
        befores = [oops_before(r, oopses) for r in group.kept]
        if any(b is None for b in befores):
            continue
        first = befores[0]
        assert first is not None
        root = group_of[first.start_line]
        if root == i or any(group_of[b.start_line] != root for b in befores if b is not None):
            continue
        top = out[root]
        linked = as_consequence(top, out[i], Consequence(top.id, top.title, how(group.first, first)))
        number, text = die_line(first) or (first.start_line, first.header)
        cited = line_evidence(source, number, text, AFTER_OOPS, first)
        out[i] = dataclasses.replace(linked, evidence=(*linked.evidence[:1], cited, *linked.evidence[1:]))
    return out
