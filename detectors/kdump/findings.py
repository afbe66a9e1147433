"""Checklist lines as :class:`Finding` records, so ``kforensic report`` can merge them."""

from __future__ import annotations

from detectors.kdump.util import file_evidence
from forensics.model import Baseline, Evidence, Fact, Finding, FindingKind, IdFamily, finding_id
from forensics.types.kdump import CheckLine, Checklist, KdumpState, Status

DETECTOR = "kdump.checklist"


def _fallback_evidence(state: KdumpState) -> tuple[Evidence, ...]:
    """Evidence for a line about something absent: the file that shows what the system is."""
    for file, line in (
        (state.os_release, state.distro.evidence_line or 1),
        (state.cmdline, 1),
        (state.osrelease, 1),
    ):
        found = file_evidence(file, line)
        if found:
            return found
    return ()


def line_finding(line: CheckLine, state: KdumpState) -> Finding | None:
    """The finding of a warn or fail line; None for a pass, or when no file read can stand as evidence."""
    if line.status is Status.PASS:
        return None
    evidence = line.evidence or _fallback_evidence(state)
    if not evidence:
        return None
    summary = f"{line.detail}. {line.why}." if line.why else line.detail
    facts: tuple[Fact, ...] = (Fact("status", line.status.value), Fact("check", line.id))
    baseline = None
    blocker = line.blocked_by
    if blocker is not None:
        summary = f"Blocked by: {blocker.reason}. {summary}"
        facts += (Fact("blocked_by", blocker.line_id),)
        # Info, not its own harm: the harm is counted once, on the cause's finding.
        baseline = Baseline("the root cause, counted once", f"{blocker.title} (high)", "kdump check dependencies")
    return Finding(
        id=finding_id(IdFamily.KDUMP, line.id),
        kind=FindingKind.KDUMP_READINESS,
        title=f"kdump: {line.title}",
        severity=line.severity,
        confidence=0.9,
        confidence_reason="read directly from the system's configuration, /proc and /sys",
        summary=summary,
        evidence=evidence,
        next_steps=(line.fix,) if line.fix else (),
        facts=facts,
        detector=DETECTOR,
        baseline=baseline,
    )


def checklist_findings(checklist: Checklist, state: KdumpState) -> tuple[Finding, ...]:
    """Findings for every warn and fail line that has evidence."""
    found = (line_finding(line, state) for line in checklist.lines)
    return tuple(f for f in found if f is not None)
