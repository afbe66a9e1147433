"""Root findings and their consequences: one event's harm counted once, at its root cause.

A lock cycle (``deadlock``) stops its tasks: each one's hung-task finding, khungtaskd's report of it and the
crash ``kernel.hung_task_panic`` made of that report follow from the cycle.  A spinlock nobody releases
(``spinlock-deadlock``) stops its CPU: the crash the lockup detector made of the spinning CPU follows from it.
Each consequence keeps its evidence and gets a typed link to its root (:class:`forensics.model.Consequence`);
its severity stays below the root's (the harm is counted there), with a baseline that says so when that
lowered it.  Used on a dump's findings (detectors/vmcore/analysis.py) and again on the incident's, after the
log's reports were merged into them (detectors/incident/correlate.py): the same links either way.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable

from forensics.model import Baseline, Consequence, Finding, FindingKind, Severity, Subject, SubjectKind

#: khungtaskd's report of a task, in the kernel's words: ``INFO: task kf_stats:43 blocked for more than 5 seconds.``
HUNG_REPORT = re.compile(r"INFO: task (.+?):(\d+) blocked for more than")

#: The kinds of root findings: causes that stop the machine's progress by themselves (critical).
ROOT_KINDS = (FindingKind.DEADLOCK, FindingKind.SPINLOCK_DEADLOCK)

_ORDER = (Severity.INFO, Severity.LOW, Severity.MEDIUM, Severity.HIGH, Severity.CRITICAL)


def reported_hung_tasks(finding: Finding) -> set[Subject]:
    """The tasks khungtaskd's reports cited by a finding name (the kernel's own lines, not a detector's words)."""
    return {
        Subject(SubjectKind.TASK, m.group(1), int(m.group(2)))
        for ev in finding.evidence
        if (m := HUNG_REPORT.search(ev.excerpt))
    }


def _tasks(finding: Finding) -> set[Subject]:
    return {s for s in finding.subjects if s.kind is SubjectKind.TASK}


def _how(root: Finding, finding: Finding) -> str | None:
    """What ties ``finding`` to ``root``, from values read; None when it is not a consequence of it."""
    if finding.id == root.id or finding.kind in ROOT_KINDS:
        return None
    if root.kind is FindingKind.DEADLOCK:
        cycle = _tasks(root)
        if finding.kind is FindingKind.HUNG_TASK:
            waiter = finding.subject(SubjectKind.TASK)
            if waiter is not None and waiter in cycle:
                return f"{waiter.name} (pid {waiter.pid}) waits in the cycle"
            return None
        if finding.kind is FindingKind.CRASH or finding.kind is FindingKind.DMESG_HANG:
            named = sorted(reported_hung_tasks(finding) & cycle, key=lambda s: s.pid or 0)
            if named:
                who = ", ".join(f"{s.name} (pid {s.pid})" for s in named)
                if finding.kind is FindingKind.CRASH:
                    return f"the kernel panicked on khungtaskd's report of {who}, which waits in the cycle"
                return f"khungtaskd reported {who}, which waits in the cycle"
        return None
    # A spinlock nobody releases: the crash is the lockup detector's, on the CPU that spins on it.
    cpu = root.subject(SubjectKind.CPU)
    if finding.kind is FindingKind.CRASH and cpu is not None and finding.subject(SubjectKind.CPU) == cpu:
        return f"the lockup detector stopped the kernel on CPU {cpu.name}, which spins on the lock"
    return None


def _counted_once(root: Finding) -> Baseline:
    return Baseline(
        "its root cause, where the harm is counted once",
        f"{root.severity.value}: finding {root.id}",
        "a consequence stays below its root (docs/severity.md, root findings and their consequences)",
    )


def link_consequences(findings: Iterable[Finding]) -> list[Finding]:
    """The findings with each consequence of a root finding linked to it (the first root that explains it).

    A consequence is at most one severity below its root: a finding already there keeps its own severity and
    baseline; one above (a crash, a report the kernel panicked on) is lowered, judged against the root.  A
    finding linked before (a dump's, merged with a log's report since) keeps its link.
    """
    found = list(findings)
    roots = [f for f in found if f.kind in ROOT_KINDS and f.consequence_of is None]
    out = []
    for finding in found:
        link = finding.consequence_of
        root = next((r for r in roots if link is not None and r.id == link.root), None)
        if link is None:
            for candidate in roots:
                how = _how(candidate, finding)
                if how is not None:
                    root, link = candidate, Consequence(candidate.id, candidate.title, how)
                    break
        if root is None or link is None:
            out.append(finding)
            continue
        out.append(as_consequence(root, finding, link))
    return out


def as_consequence(root: Finding, finding: Finding, link: Consequence) -> Finding:
    """``finding`` linked to ``root`` by ``link``, at most one severity below it.

    A finding already there keeps its own severity and baseline; one above is lowered, judged against the root.
    Also used by a kernel log's reports, for one raised while another was printed (detectors/dmesg/interrupted.py).
    """
    cap = _ORDER[max(root.severity.rank - 1, 0)]
    if finding.severity > cap:
        return dataclasses.replace(finding, severity=cap, baseline=_counted_once(root), consequence_of=link)
    return finding if finding.consequence_of is link else dataclasses.replace(finding, consequence_of=link)
