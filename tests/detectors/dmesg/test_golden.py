"""Golden files: one log per case under golden/, its expected report headers in NAME.expected.json.

Regenerate after a deliberate change with:
    .venv/bin/python -m tests.detectors.dmesg.test_golden --update
and review the diff of the .expected.json files.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from detectors.dmesg.findings import group_finding, group_reports
from detectors.dmesg.scanner import scan_chunks
from tests.helpers import assert_evidence_resolves

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(GOLDEN.glob("*.log"))
_FIELDS = ("title", "kind", "corrupted", "start_line", "end_line", "is_event")


def headers(path: Path) -> list[dict[str, Any]]:
    """The expected-header view of every report of a golden log."""
    out = []
    for r in scan_chunks([path.read_bytes()]):
        item = {name: getattr(r, name) for name in _FIELDS}
        item["frame"] = r.frame if isinstance(r.frame, str) else None
        item["cpu"] = r.cpu if isinstance(r.cpu, int) else None
        item["taint"] = r.taint if isinstance(r.taint, str) else None
        out.append(item)
    return out


@pytest.mark.parametrize("log", CASES, ids=[p.stem for p in CASES])
def test_golden(log: Path) -> None:
    expected = json.loads(log.with_suffix(".expected.json").read_text())
    assert headers(log) == expected


@pytest.mark.parametrize("log", CASES, ids=[p.stem for p in CASES])
def test_golden_evidence_resolves(log: Path) -> None:
    reports = list(scan_chunks([log.read_bytes()]))
    if not reports:
        pytest.skip(f"{log.name} holds no report (checked by test_golden)")
    findings = [group_finding(str(log), g) for g in group_reports(reports)]
    assert_evidence_resolves(findings)


def test_every_golden_case_has_expectations() -> None:
    assert len(CASES) >= 8
    for log in CASES:
        assert log.with_suffix(".expected.json").exists(), f"run --update to create {log.stem}.expected.json"


def update() -> None:
    """Rewrite every .expected.json from the current engine."""
    for log in CASES:
        log.with_suffix(".expected.json").write_text(json.dumps(headers(log), indent=1) + "\n")
        print(f"updated {log.with_suffix('.expected.json').name}")


if __name__ == "__main__":
    if "--update" in sys.argv[1:]:
        update()
    else:
        print(__doc__)
