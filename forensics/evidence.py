"""Checking that evidence is real: every excerpt must stand verbatim at its locator.

Text sources are read the way the log readers read them: bytes normalized by
:func:`forensics.textcodec.normalize_text` (a UTF-16 file decoded, ANSI escape
sequences removed; plain UTF-8 is unchanged), decoded as UTF-8 with invalid
sequences replaced (U+FFFD), lines split on ``\\n`` with a trailing ``\\r``
removed.  A ``LINE`` (or ``EVENT``) locator holds when the
excerpt is contained in the text of lines ``start..end`` and its first line is
in line ``start``; a ``BYTE`` locator when the excerpt's UTF-8 bytes stand at
that offset.  Other kinds (frames, registers, samples) need a resolver from the
code that understands that source, passed in ``resolvers``; with none the check
fails rather than passes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from forensics.model import Evidence, Finding, LocatorKind
from forensics.textcodec import normalize_text

#: Given the evidence, return the text found at its locator, or None when absent.
Resolver = Callable[[Evidence], str | None]


@dataclass(frozen=True)
class EvidenceProblem:
    """An evidence item that does not resolve, and why."""

    finding_id: str
    evidence: Evidence
    reason: str

    def __str__(self) -> str:
        return f"{self.finding_id}: {self.evidence.cite()}: {self.reason}"


def iter_text_lines(data: bytes) -> Iterator[str]:
    """Split bytes into text lines as every kforensic log reader does."""
    for raw in data.split(b"\n"):
        yield raw.decode("utf-8", errors="replace").removesuffix("\r")


def _line_problem(evidence: Evidence, data: bytes) -> str | None:
    loc = evidence.locator
    end = loc.end if loc.end is not None else loc.start
    lines = data.split(b"\n")
    if loc.start < 1 or end > len(lines):
        return f"line {loc.start}-{end} is outside the source ({len(lines)} lines)"
    text = "\n".join(iter_text_lines(b"\n".join(lines[loc.start - 1 : end])))
    first = evidence.excerpt.split("\n", 1)[0]
    if evidence.excerpt not in text or first not in text.split("\n", 1)[0]:
        return f"excerpt {evidence.excerpt[:60]!r} is not at {loc}"
    return None


def _byte_problem(evidence: Evidence, data: bytes) -> str | None:
    want = evidence.excerpt.encode()
    start = evidence.locator.start
    if data[start : start + len(want)] != want:
        return f"excerpt {evidence.excerpt[:60]!r} is not at byte {start:#x}"
    return None


def check_evidence(
    evidence: Evidence,
    source_paths: Mapping[str, Path] | None = None,
    resolvers: Mapping[LocatorKind, Resolver] | None = None,
) -> str | None:
    """Return why ``evidence`` does not resolve, or None when it does.

    ``source_paths`` maps source names that are not paths (``<stdin>``) to
    files holding the same bytes; other sources are opened as paths.
    """
    kind = evidence.locator.kind
    if resolvers and kind in resolvers:
        found = resolvers[kind](evidence)
        if found is None:
            return f"nothing at {evidence.locator}"
        if evidence.excerpt not in found:
            return f"excerpt {evidence.excerpt[:60]!r} is not in {found[:60]!r}"
        return None
    if kind not in (LocatorKind.LINE, LocatorKind.EVENT, LocatorKind.BYTE):
        return f"no resolver for {kind.value} locators was given"
    path = (source_paths or {}).get(evidence.source, Path(evidence.source))
    try:
        data = path.read_bytes()
    except OSError as exc:
        return f"cannot read source {path}: {exc.strerror or exc}"
    if kind is LocatorKind.BYTE:
        return _byte_problem(evidence, data)
    return _line_problem(evidence, normalize_text(data))


def check_findings(
    findings: tuple[Finding, ...] | list[Finding],
    source_paths: Mapping[str, Path] | None = None,
    resolvers: Mapping[LocatorKind, Resolver] | None = None,
) -> list[EvidenceProblem]:
    """Check every evidence item of every finding; return the problems found."""
    problems = []
    for finding in findings:
        for item in finding.evidence:
            reason = check_evidence(item, source_paths, resolvers)
            if reason is not None:
                problems.append(EvidenceProblem(finding.id, item, reason))
    return problems
