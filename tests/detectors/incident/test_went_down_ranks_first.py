"""The report the machine went down on ranks above a less severe finding printed inside its lines, unless it states
that finding as its cause.

Corpus log 218's shape: a WARNING that panicked (panic_on_warn), and, printed by another task right after its
header, a 0-byte ``vmalloc: allocation failure`` (an event read as its caller's unchecked size, 0.60).  The event was
hypothesis 1 over the WARNING (0.50) that took the machine down, which the log's title names.  The logs are made of
the 03-warn-on fixture's console log (a WARNING with panic_on_warn set) and warn_alloc()'s wording.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from detectors.incident.hypotheses import rank_hypotheses
from forensics.model import Evidence, Fact, Finding, Locator, LocatorKind, LogCause, Severity, finding_id
from forensics.pipelines.dmesg import analyse_logs
from forensics.types.dmesg import PANICKED

REPO = Path(__file__).resolve().parents[3]
CONSOLE = REPO / "vmcore_fixtures/cases/03-warn-on/console.log"
#: vmalloc's warn_alloc() header (4.x wording) for a size of 0, as another task prints it.
ZERO = "[    2.259600] kf-prog: vmalloc: allocation failure: 0 bytes, mode:0x14000c0(GFP_KERNEL), nodemask=(null)"


def _log(tmp_path: Path, at: int | None) -> Path:
    """The fixture's WARNING and its panic (from "cut here" to the panic's stack), with :data:`ZERO` inserted after
    its line ``at`` (counted from "cut here"; None: after the report, its lines done)."""
    lines = CONSOLE.read_text().splitlines()
    first = next(i for i, line in enumerate(lines) if "cut here" in line)
    last = next(i for i, line in enumerate(lines) if "panic_on_warn set" in line) + 30
    report = lines[first:last]
    if at is None:
        report = [*report, ZERO.replace("2.259600", "9.000000")]
    else:
        report.insert(at + 1, ZERO)
    path = tmp_path / "console.log"
    path.write_text("\n".join(report) + "\n")
    return path


def test_an_event_printed_inside_the_report_that_panicked_ranks_after_it(tmp_path: Path) -> None:
    result = analyse_logs([str(_log(tmp_path, 1))], live=False)  # right after the WARNING's header
    titles = {f.id: f.title for f in result.incident.findings}
    first, second = result.hypotheses[:2]
    # Before: 1. "allocation failure: ... a size of 0, ..." (0.60), 2. the WARNING's assertion (0.50).
    assert [titles[i] for i in first.finding_ids] == [t for t in titles.values() if t.startswith("WARNING")], first
    assert "a size of 0" in second.statement, second
    assert second.confidence < first.confidence, (first.confidence, second.confidence)
    assert any("the report the machine went down on" in a for a in second.against), second.against


def test_an_event_after_the_report_keeps_its_rank(tmp_path: Path) -> None:
    # Printed after the WARNING's lines (another report's aftermath, not amid the crash): ranked by its confidence.
    result = analyse_logs([str(_log(tmp_path, None))], live=False)
    assert "a size of 0" in result.hypotheses[0].statement, result.hypotheses[0]


def _report(kind: str, title: str, start: int, end: int, severity: Severity, cause: LogCause, *facts: Fact) -> Finding:
    ev = Evidence("kern.log", Locator(LocatorKind.LINE, start, end, "report"), title)
    return Finding(finding_id(kind, title), kind, title, severity, 0.9, "test", title, (ev,), (), facts, "test",
                   log_cause=cause)  # fmt: skip


DOWN = replace(
    _report("dmesg.warning", "WARNING in kf_table_alloc", 9, 103, Severity.CRITICAL,
            LogCause("bug_condition", "an assertion failed in kf_table_alloc", 0.5, "read it"),
            Fact("guilty frame", "kf_table_alloc")),
    baseline=PANICKED,
)  # fmt: skip
FAILURE = LogCause("alloc_failure", "allocation failure: kf_table_alloc asked vmalloc for 0 B", 0.6, "find the size")


@pytest.mark.parametrize(
    ("frame", "start", "down", "first"),
    [
        ("kf_other", 10, DOWN, "an assertion failed"),  # a side event: after the report that panicked
        ("kf_table_alloc", 10, DOWN, "allocation failure"),  # the WARNING's own caller: the cause it states
        ("kf_other", 104, DOWN, "allocation failure"),  # past its lines
        ("kf_other", 10, replace(DOWN, baseline=None, severity=Severity.HIGH), "allocation failure"),  # no panic
    ],
)
def test_the_rule_moves_only_a_side_finding_of_the_report_that_went_down(
    frame: str, start: int, down: Finding, first: str
) -> None:
    side = _report("dmesg.alloc-failure", "vmalloc: allocation failure", start, start, Severity.MEDIUM, FAILURE,
                   Fact("guilty frame", frame))  # fmt: skip
    ranked = rank_hypotheses((down, side))
    assert ranked[0].statement.startswith(first), ranked
    assert [h.rank for h in ranked] == [1, 2]
    assert ranked[0].confidence >= ranked[1].confidence
