"""The reports of a critical report's boot (aftermath's ``_same_boot``): a slice of the log's reports in order,
found by bisection (issue 28: each report's boot looked up for every critical report was a quarter of the corpus
x4's run), the same reports as asking each its boot."""

from __future__ import annotations

from bisect import bisect_right
from types import SimpleNamespace
from typing import cast

from hypothesis import given, settings
from hypothesis import strategies as st

from detectors.dmesg.aftermath import _same_boot, in_order
from forensics.types.dmesg import KernelReport


def _boot(boot_lines: list[int], line: int) -> int:
    at = bisect_right(boot_lines, line)
    return boot_lines[at - 1] if at else 0


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(0, 400), unique=True).map(sorted),
    st.lists(st.integers(0, 400), min_size=1, max_size=40),
    st.data(),
)
def test_the_slice_is_the_reports_of_the_boot(boot_lines: list[int], starts: list[int], data: st.DataObject) -> None:
    # Reports as their first lines (all _same_boot reads); several may start on one line (an event and a report).
    reports = in_order([cast(KernelReport, SimpleNamespace(start_line=n)) for n in starts])
    report = data.draw(st.sampled_from(reports))
    expected = [
        r
        for r in reports
        if r is not report and _boot(boot_lines, r.start_line) == _boot(boot_lines, report.start_line)
    ]
    assert _same_boot(report, reports, boot_lines) == expected
