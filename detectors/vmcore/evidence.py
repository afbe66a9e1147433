"""The shared pieces of the dump's root-cause findings: evidence from the dump's log and backtrace, and the
finding every vmcore "why" analysis builds (its :class:`~forensics.model.StatedCause`: the hypothesis and the
next command, which ``kforensic vmcore`` and ``kforensic report`` rank the same way).

Used by :mod:`detectors.vmcore.why`, :mod:`detectors.vmcore.locks` and :mod:`detectors.vmcore.slab`.
"""

from __future__ import annotations

import re

from detectors.vmcore.findings import DETECTOR, EXPLAINS_CRASH, log_source, memory_excerpt, memory_locator_name
from forensics.model import (
    Baseline,
    Clock,
    Evidence,
    Fact,
    Finding,
    FindingKind,
    Locator,
    LocatorKind,
    Severity,
    StatedCause,
    Subject,
    Timestamp,
)
from forensics.model import finding_id as make_id
from forensics.types.vmcore import CrashSnapshot

__all__ = [
    "FAULT_LINES",
    "frame_evidence",
    "log_line_evidence",
    "memory_evidence",
    "object_state",
    "root_cause_finding",
]

#: The kernel log lines of a fault report (an oops, a GPF, a BUG, a corruption report).
FAULT_LINES = re.compile(r"unable to handle|general protection fault|kernel BUG at|corruption")


def object_state(allocated: bool | None) -> str:
    """``allocated``, ``FREE``, or why the slab object's state is unknown."""
    if allocated is None:
        return "state unknown (its slab's free list runs through memory the dump lacks)"
    return "allocated" if allocated else "FREE"


def log_line_evidence(snap: CrashSnapshot, needle: str) -> Evidence | None:
    for number, record in enumerate(snap.log, 1):
        if needle in record.text:
            return Evidence(
                log_source(snap.dump_path),
                Locator(LocatorKind.LINE, number),
                record.text.split("\n", 1)[0],
                timestamp=Timestamp(record.seconds, Clock.MONOTONIC),
            )
    return None


def memory_evidence(snap: CrashSnapshot, address: int, words: tuple[int, ...], width: int = 8) -> Evidence | None:
    """The memory words a finding states, read from the dump at ``address`` (``crash> rd``); None when none were
    read."""
    if not words:
        return None
    where = Locator(LocatorKind.ADDRESS, address, name=memory_locator_name(width, len(words)))
    return Evidence(snap.dump_path, where, memory_excerpt(words, width))


def frame_evidence(snap: CrashSnapshot, index: int) -> Evidence | None:
    frame = next((f for f in snap.backtrace if f.index == index), None)
    if frame is None:
        return None
    return Evidence(snap.dump_path, Locator(LocatorKind.FRAME, frame.index), frame.label())


def root_cause_finding(
    kind: FindingKind,
    key: str,
    title: str,
    summary: str,
    hypothesis: str,
    next_command: str,
    confidence: float,
    reason: str,
    evidence: list[Evidence | None],
    facts: list[Fact],
    severity: Severity = Severity.HIGH,
    baseline: Baseline = EXPLAINS_CRASH,
    subjects: tuple[Subject, ...] = (),
) -> Finding:
    return Finding(
        id=make_id(kind, key),
        kind=kind,
        title=title,
        severity=severity,
        confidence=round(confidence, 2),
        confidence_reason=reason,
        summary=summary,
        evidence=tuple(e for e in evidence if e is not None),
        next_steps=(next_command,),
        facts=tuple(facts),
        detector=DETECTOR,
        stated=StatedCause(hypothesis, next_command),
        baseline=baseline,
        subjects=subjects,
    )
