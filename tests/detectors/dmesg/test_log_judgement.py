"""What a log's finding says of itself beyond its reading: a cause read from a damaged report is no surer than it.
The logs are written in the kernel's formats (tests/detectors/dmesg/test_interrupted.py's)."""

from __future__ import annotations

from pathlib import Path

from detectors.dmesg.findings import CAUSE_CAPPED
from forensics.pipelines.dmesg import analyse_logs
from forensics.types.dmesg_result import DmesgResult
from tests.detectors.dmesg.test_interrupted import _FAULT, _KASAN, _KASAN_TITLE


def _run(log: Path) -> DmesgResult:
    return analyse_logs([str(log)], live=False)


def test_a_cause_read_from_a_damaged_report_is_no_surer_than_it(tmp_path: Path) -> None:
    log = tmp_path / "kern.log"
    log.write_text(_KASAN + _FAULT)
    result = _run(log)
    kasan = next(f for f in result.incident.findings if f.title == _KASAN_TITLE)
    assert kasan.confidence == 0.5 and kasan.log_cause is not None
    assert kasan.log_cause.confidence == kasan.confidence
    capped = kasan.fact(CAUSE_CAPPED)
    assert capped is not None and capped.startswith("0.85 as read, 0.50 as the report's: the report is damaged (")
    assert max(h.confidence for h in result.hypotheses) <= 0.5
    # The complete report keeps its cause's own confidence, below its own.
    log.write_text(_FAULT)
    (fault,) = _run(log).incident.findings
    assert fault.fact(CAUSE_CAPPED) is None
