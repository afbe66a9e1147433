"""Checklist lines as :class:`Finding` records, so ``kforensic report`` can merge them."""

from __future__ import annotations

from detectors.kdump.dependencies import cause_fault
from detectors.kdump.util import file_evidence
from forensics.model import (
    Baseline,
    Consequence,
    Evidence,
    Fact,
    Finding,
    FindingKind,
    IdFamily,
    Severity,
    finding_id,
)
from forensics.types.kdump import Blocker, CheckLine, Checklist, KdumpState, Status

DETECTOR = "kdump.checklist"

#: What is wrong when a check fails or warns, by line id prefix: (fail, warn); ``{title}`` is the check's name.
#: A finding titled by the check's name alone ("high: kdump: Crash kernel memory reserved") read as a success in a
#: report (review ue15 #4); the title says the fault, the check's name stays in the checklist.  First match wins.
FAULT_TITLES: tuple[tuple[str, str, str], ...] = (
    ("distro", "distribution not supported by the kdump checks", "distribution not known: tooling checks generic"),
    (
        "crashkernel-cmdline",
        "no usable crashkernel= on the kernel command line",
        "crashkernel= on the command line in doubt",
    ),
    (
        "crashkernel-boot",
        "no usable crashkernel= in the boot configuration",
        "crashkernel= not kept in the boot configuration",
    ),
    (
        "crashkernel-generated",
        "the generated boot entry lacks crashkernel=",
        "the generated boot entry lacks crashkernel=",
    ),
    (
        "crashkernel-entries",
        "other boot entries reserve no crash memory",
        "other boot entries reserve other crash memory",
    ),
    ("crash-reservation", "no crash kernel memory reserved", "crash kernel memory reserved is too small"),
    ("crash-loaded", "no crash kernel loaded", "crash kernel loaded in doubt"),
    ("kdump-tooling", "kdump tooling not installed", "kdump tooling incomplete"),
    ("kdump-config", "kdump configuration unusable", "kdump configuration has a problem"),
    ("kdump-enabled", "kdump disabled in its configuration", "kdump enabled in its configuration in doubt"),
    ("kdump-service", "kdump service not enabled at boot", "kdump service not known to start at boot"),
    ("dump-space", "no room for the dump", "room for the dump in doubt"),
    ("ssh-key", "no SSH key for the dump target", "SSH key for the dump target in doubt"),
    ("makedumpfile", "makedumpfile options lose the dump", "makedumpfile options make the dump worse"),
    # A trigger, not a failure made to panic: what its fault loses is a dump forced by hand (of a hung machine).
    ("sysctl:kernel.sysrq", "SysRq-c cannot force a crash dump", "SysRq-c cannot force a crash dump"),
    ("sysctl:", "{title}: the failure it governs is not dumped", "{title}: the failure it governs is not dumped"),
    ("debuginfo", "no kernel debug info for the running kernel", "no kernel debug info for the running kernel"),
)


def fault_title(line_id: str, title: str, status: Status, state: KdumpState) -> str:
    """What is wrong, for a failing or warning line (the check's name and status otherwise): a failed root cause's
    deeper fault when it has one (:func:`detectors.kdump.dependencies.cause_fault`), else :data:`FAULT_TITLES`'."""
    if status is Status.FAIL and (deeper := cause_fault(state, line_id)) is not None:
        return deeper
    if status in (Status.FAIL, Status.WARN):
        for prefix, failed, warned in FAULT_TITLES:
            if line_id.startswith(prefix):
                return (failed if status is Status.FAIL else warned).format(title=title)
        return title
    return f"{title}: {status.value}"


def _consequence(blocker: Blocker, state: KdumpState) -> Consequence:
    """The typed link of a blocked line to its root cause's finding (the cause is always a failed line)."""
    root = fault_title(blocker.line_id, blocker.title, Status.FAIL, state)
    return Consequence(finding_id(IdFamily.KDUMP, blocker.line_id), f"kdump: {root}", blocker.reason)


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
    consequence = None
    title = fault_title(line.id, line.title, line.status, state)
    severity = line.severity
    confidence_reason = "read directly from the system's configuration, /proc and /sys"
    if line.status is Status.UNKNOWN:
        # Not a problem: nothing was judged.  Counted apart ("could not be judged"); the harm a bad value would do is
        # kept as a fact and in the verdict (NOT KNOWN TO BE READY), never as the severity of a fault not seen (a
        # --root tree without /proc made "5 problem(s)" of checks whose files it did not hold).
        severity = Severity.INFO
        title = f"{line.title}: could not be judged"
        summary = f"{line.detail}. If it is bad: {line.why} ({line.severity.value})." if line.why else line.detail
        facts += (Fact("harm_if_bad", line.severity.value),)
        confidence_reason = "its input was not read: nothing judged"
    blocker = line.blocked_by
    if blocker is not None:
        consequence = _consequence(blocker, state)
        title = f"{line.title}: blocked ({blocker.reason})"
        summary = f"Blocked by: {blocker.reason}. {summary}"
        facts += (Fact("blocked_by", blocker.line_id),)
        # Info, not its own harm: the harm is counted once, on the cause's finding.
        baseline = Baseline("the root cause, counted once", f"{consequence.title} (high)", "kdump check dependencies")
    return Finding(
        id=finding_id(IdFamily.KDUMP, line.id),
        kind=FindingKind.KDUMP_READINESS,
        title=f"kdump: {title}",
        severity=severity,
        confidence=0.9,
        confidence_reason=confidence_reason,
        summary=summary,
        evidence=evidence,
        next_steps=(line.fix,) if line.fix else (),
        facts=facts,
        detector=DETECTOR,
        baseline=baseline,
        consequence_of=consequence,
    )


def checklist_findings(checklist: Checklist, state: KdumpState) -> tuple[Finding, ...]:
    """Findings for every warn and fail line that has evidence."""
    found = (line_finding(line, state) for line in checklist.lines)
    return tuple(f for f in found if f is not None)
