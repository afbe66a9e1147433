"""Checklist lines as :class:`Finding` records, so ``kforensic report`` can merge them.

A readiness gap is harm that has not happened: the next crash's dump would be lost or damaged, while on the machine
checked nothing waited and nothing broke.  So no readiness finding reaches medium, the line of a problem
(docs/severity.md, "kdump readiness"): a failing check is low, a warning at most low, each judged against what a
machine ready to capture a crash has for that check (:data:`READY_BASELINES`).  Until 2026-12-07 a fail was high and a
warn medium, so a healthy machine's report led with "2 high" kdump findings, none with a baseline (review ue24 F2).
"""

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


#: The severity of a failing or warning line's finding: what a fault does to the next crash's dump (the line's weight,
#: :attr:`CheckLine.severity`, which also decides which unread lines hold the verdict back), capped here, since it is
#: harm still to come.  A fail (weight high: the dump would be lost) and a warn that damages the dump (medium) are low,
#: worth a look; a warn of weight low stays low, one of weight info (another boot entry's size) info.
READINESS_CAP = Severity.LOW

#: What a machine ready to capture a crash has for each check (the baseline of its finding), by line id prefix:
#: (prefix, what it has, where that comes from).  First match wins.
READY_NAME = "a machine ready for kdump"
_KDUMP_DOC = "Documentation/admin-guide/kdump/kdump.rst"
_TOOLING_DOC = "the distribution's kdump documentation (Debian kdump-tools, RHEL kexec-tools)"
READY_BASELINES: tuple[tuple[str, str, str], ...] = (
    ("distro", "a distribution whose kdump tooling the checks know (Debian/Ubuntu, RHEL/Fedora)", "docs/kdump.md"),
    (
        "crashkernel-cmdline",
        "crashkernel= on the running kernel's command line, reserving memory for its RAM",
        _KDUMP_DOC,
    ),
    ("crashkernel-boot", "crashkernel= in the boot configuration, so every boot reserves it", _TOOLING_DOC),
    (
        "crashkernel-generated",
        "the boot entry the boot loader boots carries the configuration's crashkernel=",
        _TOOLING_DOC,
    ),
    ("crashkernel-entries", "every boot entry offered reserves the same crash kernel memory", _TOOLING_DOC),
    (
        "crash-reservation",
        "a kernel built with kexec crash support (CONFIG_KEXEC, CONFIG_CRASH_DUMP), crash kernel memory reserved "
        "(/sys/kernel/kexec_crash_size above 0), at least the recommended size",
        _KDUMP_DOC,
    ),
    ("crash-loaded", "a crash kernel loaded (/sys/kernel/kexec_crash_loaded 1)", _KDUMP_DOC),
    (
        "kdump-tooling",
        "the kdump tooling installed (kdump-config or kdumpctl, makedumpfile) and its service loaded",
        _TOOLING_DOC,
    ),
    ("kdump-config", "a kdump configuration its tooling accepts", _TOOLING_DOC),
    ("kdump-enabled", "kdump enabled in its configuration", _TOOLING_DOC),
    ("kdump-service", "the kdump service started at every boot", _TOOLING_DOC),
    ("dump-space", "room at the dump target for a dump of this machine's memory", _TOOLING_DOC),
    ("ssh-key", "an SSH key the dump host accepts, for a dump written over SSH", _TOOLING_DOC),
    ("makedumpfile", "makedumpfile writing a complete dump in a format crash and drgn open", "makedumpfile(8)"),
    (
        "sysctl:kernel.sysrq",
        "SysRq-c allowed, to force a dump of a hung machine",
        "Documentation/admin-guide/sysrq.rst",
    ),
    (
        "sysctl:",
        "the failures its owner wants dumped made to panic (kforensic kdump setup --policy)",
        "Documentation/admin-guide/sysctl/kernel.rst",
    ),
    ("debuginfo", "the running kernel's debug info at hand (its vmlinux, or a debuginfod server)", "crash(8), drgn"),
    ("unreadable:", "every file the checks need readable", "docs/kdump.md"),
)

#: The harm a failing or warning line's finding states (fact ``harm``): none yet, and what the next crash would lose.
HARM_NOT_YET = {
    Status.FAIL: "not yet: the next crash's dump would be lost",
    Status.WARN: "not yet: the next crash would be captured with this gap",
}


def ready_baseline(line_id: str) -> Baseline:
    """What a machine ready for kdump has for the check ``line_id``: its finding's baseline."""
    for prefix, value, source in READY_BASELINES:
        if line_id.startswith(prefix):
            return Baseline(READY_NAME, value, source)
    return Baseline(READY_NAME, "this check passing", "docs/kdump.md")


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
    if line.status in HARM_NOT_YET:
        facts += (Fact("harm", HARM_NOT_YET[line.status]),)
    baseline = ready_baseline(line.id)
    consequence = None
    title = fault_title(line.id, line.title, line.status, state)
    severity = min(line.severity, READINESS_CAP)
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
        baseline = Baseline(
            "the root cause, counted once", f"{consequence.title} ({READINESS_CAP.value})", "kdump check dependencies"
        )
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
