"""Readiness findings (a kdump check's), told apart from an incident's problems.

A kdump check says whether the next crash will be captured.  A gap there is harm that has not happened: on the
machine checked nothing waited and nothing broke, so its findings are no problem of the boot a report tells.  They
are neither counted among its problems nor told as "the kernel had a problem"; the verdict says them in one sentence
of their own, after the incident's story ("kdump is not ready: 2 checks fail (...)"), and a report of a kdump check
alone says the machine's readiness (docs/report.md, "Readiness").  Until 2026-12-07 a healthy machine's report led
with "2 high" kdump findings while its headline named the medium RT throttling below them as "The finding", and a
report of a check alone said "Kforensic found 3 problem(s) on vm" (review ue24 F2).
"""

from __future__ import annotations

from forensics.model import Examined, Finding, FindingKind, InputKind, Severity

#: The kinds of finding that say whether a failure to come would be captured, not what happened.
READINESS_KINDS = frozenset({FindingKind.KDUMP_READINESS})

#: Failing (or unread) checks named in the sentence; the rest are counted.
NAMED = 3

#: The weights (a finding's ``harm_if_bad`` fact) of an unread check that leaves the verdict "not known to be ready"
#: (``Checklist.unread_needed``: medium or above).
_HOLDS_BACK = frozenset(s.value for s in Severity if s >= Severity.MEDIUM)


def is_readiness(finding: Finding) -> bool:
    """Whether the finding is a readiness gap (a kdump check's), not an event of the boot told."""
    return finding.kind in READINESS_KINDS


def incident_findings(findings: tuple[Finding, ...]) -> tuple[Finding, ...]:
    """The findings about what happened: all but the readiness ones."""
    return tuple(f for f in findings if not is_readiness(f))


def readiness_only(findings: tuple[Finding, ...], examined: tuple[Examined, ...]) -> bool:
    """Whether a kdump check is all there is to tell: readiness findings, no other finding, and every input examined
    a kdump check (a healthy log beside it is told as such, the readiness after it)."""
    return (
        any(is_readiness(f) for f in findings)
        and not incident_findings(findings)
        and all(e.input is InputKind.KDUMP for e in examined)
    )


def _named(findings: list[Finding]) -> str:
    titles = [f.title.removeprefix("kdump: ").removesuffix(": could not be judged") for f in findings[:NAMED]]
    more = len(findings) - NAMED
    return "; ".join(titles) + (f"; and {more} more" if more > 0 else "")


def readiness_sentence(findings: tuple[Finding, ...]) -> str:
    """The readiness findings in one sentence ("" without one): not ready (checks fail), not known to be (checks
    that capture rests on were not read), or ready with warnings; what else the check found, counted."""
    ready = sorted((f for f in findings if is_readiness(f)), key=lambda f: f.title)
    if not ready:
        return ""
    status = {f.id: f.fact("status") for f in ready}
    fails = [f for f in ready if status[f.id] == "fail"]
    warns = [f for f in ready if status[f.id] == "warn"]
    unread = [f for f in ready if status[f.id] == "unknown" and f.fact("harm_if_bad") in _HOLDS_BACK]
    blocked = sum(1 for f in ready if status[f.id] == "blocked")
    others = len([f for f in ready if status[f.id] == "unknown"]) - len(unread)
    if fails:
        said = (
            f"kdump is not ready: {len(fails)} check(s) fail ({_named(fails)}), so the next crash's dump would be lost"
        )
        rest = [f"{len(warns)} check(s) warn" if warns else "", f"{len(unread)} not read" if unread else ""]
    elif unread:
        said = (
            f"kdump is not known to be ready: {len(unread)} check(s) it rests on could not be read ({_named(unread)})"
        )
        rest = [f"{len(warns)} check(s) warn" if warns else ""]
    else:
        said = "kdump is ready to capture the next crash" + (
            f", with {len(warns)} warning(s) ({_named(warns)})" if warns else ""
        )
        rest = []
    rest += [f"{blocked} blocked by them" if blocked else "", f"{others} more not read" if others else ""]
    counted = ", ".join(x for x in rest if x)
    return f"{said}{'; ' + counted if counted else ''} (a readiness gap: no harm yet, not counted as a problem)."


def readiness_after(findings: tuple[Finding, ...], examined: tuple[Examined, ...]) -> str:
    """The sentence the verdict says after the incident's story ("" without readiness findings, or where a kdump
    check is all there is to tell: the summary says it then)."""
    if readiness_only(findings, examined):
        return ""
    said = readiness_sentence(findings)
    return f"Readiness: {said}" if said else ""
