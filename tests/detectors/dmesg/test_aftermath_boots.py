"""The reports of a critical report's boot (aftermath's ``_same_boot``): a slice of the log's reports in order,
found by bisection (issue 28: each report's boot looked up for every critical report was a quarter of the corpus
x4's run), the same reports as asking each its boot."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator
from types import SimpleNamespace
from typing import cast

from hypothesis import given, settings
from hypothesis import strategies as st

from detectors.dmesg.aftermath import LogReports, _same_boot, in_order
from detectors.dmesg.scanner import scan_text
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
    made = [cast(KernelReport, SimpleNamespace(start_line=n, excerpt=str)) for n in starts]  # (str(): no panic line)
    reports = in_order(made).ordered
    report = data.draw(st.sampled_from(reports))
    expected = [
        r
        for r in reports
        if r is not report and _boot(boot_lines, r.start_line) == _boot(boot_lines, report.start_line)
    ]
    assert _same_boot(report, reports, boot_lines) == expected


# A BUG printed twice byte for byte but for its times (the second a repeat the report memo made, its lines made only
# when read), then a panic of its own.
_LOG = """\
[  100.000001] BUG: kernel NULL pointer dereference, address: 0000000000000030
[  100.000002] #PF: supervisor read access in kernel mode
[  100.000003] Oops: 0000 [#1] SMP NOPTI
[  100.000004] CPU: 1 PID: 77 Comm: cat Not tainted 6.1.0 #1
[  100.000005] RIP: 0010:kf_null_member_read+0x11/0x30
[  100.000006] Call Trace:
[  100.000007]  <TASK>
[  100.000008]  vfs_read+0xb0/0x2b0
[  100.000009]  </TASK>
[  100.000010] ---[ end trace 0000000000000000 ]---
"""


def test_the_reports_printing_a_panic_line_are_found_once_per_log() -> None:
    # Which reports print "Kernel panic - not syncing" among their lines (aftermath reads only theirs for an oops's
    # own panic): a repeat is read through the report it repeats, without making its lines.
    text = _LOG + _LOG.replace("[  100.", "[  200.") + "[  300.000001] Kernel panic - not syncing: Fatal exception\n"
    reports = scan_text(text)
    found = in_order(reports)
    assert [r.start_line for r in found.ordered] == sorted(r.start_line for r in reports)
    holding = [r for r in reports if "Kernel panic - not syncing" in r.excerpt()]
    assert holding, [r.title for r in reports]
    assert found.panicking == frozenset(id(r) for r in holding)


def test_the_searches_on_each_side_of_a_report_find_what_searching_its_whole_boot_finds() -> None:
    """aftermath reads the reports of a critical report's boot that start within its lines for a panic inside them,
    and those after it for its own task's panic and a later panic (split by bisection: issue 28): the same finds as
    each search over the whole boot, on every bundled log's and corpus log's critical reports (copied twice, so
    that each has a later boot's copies and repeats)."""
    from pathlib import Path

    from detectors.dmesg.aftermath import _PANIC_LINE, _fatal, _own_panic, _start

    root = Path(__file__).parent
    logs = sorted([*root.glob("golden/*.log"), *root.glob("corpora/*/*.log")])
    critical = 0
    for report, same_boot, ordered in _critical_in_boots([log.read_text(errors="replace") for log in logs]):
        critical += 1
        split = bisect_right(same_boot, report.end_line, key=_start)
        assert all(r.start_line <= report.end_line for r in same_boot[:split])
        assert all(r.start_line > report.end_line for r in same_boot[split:])
        inside = [
            (n, t)
            for r in same_boot
            if r.start_line <= report.end_line and r.end_line > report.start_line
            for n, t in r.lines
            if report.start_line < n <= report.end_line and _PANIC_LINE in t
        ]
        assert inside == [
            (n, t)
            for r in same_boot[:split]
            if r.end_line > report.start_line
            for n, t in r.lines
            if report.start_line < n <= report.end_line and _PANIC_LINE in t
        ]
        assert _own_panic(report, same_boot[split:], ordered.panicking) == _own_panic(
            report, same_boot, ordered.panicking
        )
        panics = [r for r in same_boot if (_fatal(r) or r.panicked) and r.start_line > report.end_line]
        assert panics == [r for r in same_boot[split:] if _fatal(r) or r.panicked]
    assert critical >= 20


def test_an_oopses_own_panic_is_what_reading_each_later_report_in_turn_finds() -> None:
    """_own_panic tests a later report's place among the panicking ones, then its caller, before its other fields
    (issue 28: its field reads were most of its cost): the same answer as reading each report's place, kind, lines
    and caller in turn, for every critical report of the bundled and corpus logs copied twice, over its whole boot
    and over the reports after it."""
    from pathlib import Path

    from detectors.dmesg.aftermath import _PANIC_LINE, _own_panic, _start
    from detectors.dmesg.lines import parse_line
    from detectors.dmesg.taint import die_line

    def in_turn(report: KernelReport, later: list[KernelReport], panicking: frozenset[int]) -> object:
        own = report.context
        if own is None or own == "-" or die_line(report) is None:
            return None
        for r in later:
            if r.start_line <= report.end_line or r.is_event:
                continue
            for n, t in r.lines if id(r) in panicking else ():
                if n > report.end_line and _PANIC_LINE in t and parse_line(n, t).context == own:
                    return (n, t) if "Fatal exception" in t else None
            if r.context == own and die_line(r) is not None:
                return None
        return None

    root = Path(__file__).parent
    logs = sorted([*root.glob("golden/*.log"), *root.glob("corpora/*/*.log")])
    found = 0
    # Each log as it is, and with one printk caller id on every timed line (CONFIG_PRINTK_CALLER): its oopses then
    # have a task whose panic and later oopses are looked for.
    texts = [log.read_text(errors="replace") for log in logs]
    tagged = ["".join(line.replace("] ", "][ T1] ", 1) + "\n" for line in text.splitlines()) for text in texts]
    for report, same_boot, ordered in _critical_in_boots([*texts, *tagged]):
        after = same_boot[bisect_right(same_boot, report.end_line, key=_start) :]
        for later in (same_boot, after):
            got = _own_panic(report, later, ordered.panicking)
            assert got == in_turn(report, later, ordered.panicking), report.start_line
        found += report.context == "T1" and die_line(report) is not None and bool(after)
    assert found  # an oops of a task whose later reports were read (its own panic: test_oops_consequences.py)


def _critical_in_boots(texts: list[str]) -> Iterator[tuple[KernelReport, list[KernelReport], LogReports]]:
    """Each critical report of each text copied twice (so that each has a later boot's copies and repeats), with the
    reports of its boot in log order and the log's reports as aftermath reads them."""
    from forensics.model import Severity

    for text in texts:
        reports = scan_text(text + text)
        ordered = in_order(reports)
        boot_lines = sorted({r.boot_banner[0] for r in reports if r.boot_banner is not None})
        for report in reports:
            if report.severity is Severity.CRITICAL:
                yield report, _same_boot(report, ordered.ordered, boot_lines), ordered
