"""Check lines and the evidence they cite."""

from __future__ import annotations

from forensics.model import Evidence, Locator, LocatorKind, Severity
from forensics.types.kdump import CheckLine, MaybeFile, Status, TextFile


def file_evidence(file: MaybeFile | None, line: int, excerpt: str | None = None) -> tuple[Evidence, ...]:
    """Evidence for ``excerpt`` (default: the whole line) at a 1-based line of a file read; () when absent."""
    if not isinstance(file, TextFile) or not 1 <= line <= len(file.lines):
        return ()
    text = file.lines[line - 1]
    quote = excerpt if excerpt and excerpt in text else text.strip()
    if not quote:
        return ()
    return (Evidence(source=file.source, locator=Locator(LocatorKind.LINE, line), excerpt=quote),)


def pass_(id_: str, title: str, detail: str, evidence: tuple[Evidence, ...], *, kernel: bool = False) -> CheckLine:
    """A passing line."""
    return CheckLine(id_, title, Status.PASS, detail, "", "", evidence, kernel, Severity.INFO)


def warn(
    id_: str,
    title: str,
    detail: str,
    why: str,
    fix: str,
    evidence: tuple[Evidence, ...],
    *,
    kernel: bool = False,
    severity: Severity = Severity.MEDIUM,
) -> CheckLine:
    """A line that does not stop the capture but will hurt."""
    return CheckLine(id_, title, Status.WARN, detail, why, fix, evidence, kernel, severity)


def fail(
    id_: str,
    title: str,
    detail: str,
    why: str,
    fix: str,
    evidence: tuple[Evidence, ...],
    *,
    kernel: bool = False,
) -> CheckLine:
    """A line that means the next crash will not be captured."""
    return CheckLine(id_, title, Status.FAIL, detail, why, fix, evidence, kernel, Severity.HIGH)


def unknown(
    id_: str,
    title: str,
    reason: str,
    why: str,
    fix: str,
    evidence: tuple[Evidence, ...],
    *,
    severity: Severity,
    by_hand: bool = False,
) -> CheckLine:
    """A line whose value was never read: ``unknown (reason)``, never a pass.

    ``severity`` is the harm the check guards against when the unread value is bad; ``by_hand``: only a person can
    read it (``fix`` says how), so setup lists it as a manual step.
    """
    return CheckLine(
        id_, title, Status.UNKNOWN, f"unknown ({reason})", why, fix, evidence, False, severity, by_hand=by_hand
    )
