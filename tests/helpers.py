"""Test helpers shared by every test package.

``assert_evidence_resolves`` is the one check that a detector's evidence is
real: each excerpt must stand verbatim at its locator in its source.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from forensics.evidence import Resolver, check_findings
from forensics.model import Finding, LocatorKind


def assert_evidence_resolves(
    findings: Iterable[Finding],
    source_paths: Mapping[str, Path] | None = None,
    resolvers: Mapping[LocatorKind, Resolver] | None = None,
) -> None:
    """Fail the test unless every evidence excerpt of every finding resolves in its source.

    Also fails when there are no findings, so a detector that finds nothing
    cannot pass a test meant to check its evidence.
    """
    found = list(findings)
    assert found, "no findings to check: the detector found nothing"
    problems = check_findings(found, source_paths, resolvers)
    assert not problems, "evidence does not resolve:\n" + "\n".join(str(p) for p in problems)
