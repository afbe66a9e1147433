"""Reading a log the test wrote that holds one report: its title and why, and where its lines stand."""

from __future__ import annotations

from pathlib import Path

from forensics.pipelines.dmesg import triage_file
from forensics.types.dmesg import ReportWhy


def only_report_why(tmp_path: Path, text: str) -> tuple[str, ReportWhy]:
    """The title and the why of the one report of ``text`` (written to a file, triaged as a user's log is)."""
    path = tmp_path / "console.log"
    path.write_text(text)
    result = triage_file(str(path))
    (report,) = result.reports
    return report.title, result.whys[report.start_line]


def offset(text: str, header: str, words: str) -> int:
    """The offset of the first line holding ``words`` from the report's header (the first line holding ``header``),
    as a fact cites it."""
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if header in line)
    return next(i for i, line in enumerate(lines) if words in line) - first
