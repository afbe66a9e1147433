"""Console logs captured on another machine with a stamp before each line (``ts``, minicom, grabserial) are read as
the console they captured.

A reviewer put ``[2026-12-07 10:00:01] `` (``sed 's/^/.../'``, as minicom and ``ts`` write it) or ``10:00:01.123 ``
before each line of the BUG_ON fixture's log: "kernel BUG in corrupted [corrupted]", lines 248-249, where the same log
with a syslog or journal prefix gave "kernel BUG in kf_buffer_put", 248-282 (ue23 #14): the stamp hid the kernel's
prefix, and the report was its header alone.  The logs here are the fixtures', with each form of
:data:`forensics.types.log_prefix.CAPTURE_FORMS` put before every line.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from collectors.log_identity import parse_identity
from detectors.dmesg.lines import parse_line, wall_zone_unknown
from forensics.pipelines.dmesg import analyse_log_bytes
from forensics.types.log_prefix import CAPTURE_FORMS, CaptureForm

ROOT = Path(__file__).resolve().parents[3]
CASES = ("01-null-member", "02-bug-on", "03-warn-on", "06-list-corrupt", "10-use-after-free")
_FORMS = {form.tools: form for form in CAPTURE_FORMS}


def _log(case: str) -> bytes:
    path = ROOT / "vmcore_fixtures/cases" / case / "dmesg.txt"
    if not path.is_file():
        pytest.skip("no fixture dmesg")
    return path.read_bytes()


def _captured(data: bytes, stamp: str) -> bytes:
    return b"".join(stamp.encode() + b" " + line for line in data.splitlines(keepends=True))


def _reports(name: str, data: bytes) -> list[tuple[str, int, int, float | None]]:
    result = analyse_log_bytes(name, data)
    return [
        (r.title, r.start_line, r.end_line, r.start_time if isinstance(r.start_time, float) else None)
        for s in result.sources
        for r in s.reports
    ]


def test_every_form_is_an_example_of_itself() -> None:
    """The table's examples are what its patterns take (the tests below use them as the tools' output)."""
    for form in CAPTURE_FORMS:
        assert re.fullmatch(form.pattern, form.example) is not None, form


@pytest.mark.parametrize("form", CAPTURE_FORMS, ids=list(_FORMS))
@pytest.mark.parametrize("case", CASES)
def test_a_captured_console_gives_the_reports_of_the_console(case: str, form: CaptureForm) -> None:
    """Each report as the uncaptured log gives it: its title, its lines, its printk time."""
    plain = _log(case)
    reports = _reports("dmesg.txt", plain)
    assert reports and all(not title.endswith(" in corrupted") for title, *_ in reports)
    assert _reports("dmesg.txt", _captured(plain, form.example)) == reports


def test_the_reviewers_log_is_read_whole() -> None:
    """The finding's own input: the BUG_ON fixture behind ``[2026-12-07 10:00:01] ``, and behind ``10:00:01.123 ``."""
    plain = _log("02-bug-on")
    for stamp in ("[2026-12-07 10:00:01]", "10:00:01.123"):
        ((title, first, last, when),) = _reports("ts.log", _captured(plain, stamp))
        assert (title, first, last, when) == ("kernel BUG in kf_buffer_put", 248, 282, pytest.approx(2.212356))


def test_a_capture_stamp_is_taken_off_the_line() -> None:
    """What each line gives: the kernel's time, caller and message; a dated stamp's time as the line's wall clock,
    in a zone the line does not name; a time of day none.  A stamp before no kernel prefix is no kernel prefix."""
    line = parse_line(7, "[2026-12-07 10:00:01.250] [   12.500000][ T1234] kf: hello")
    assert (line.body, line.timestamp, line.context, line.prefixed) == ("kf: hello", 12.5, "T1234", True)
    assert line.wall == 1796637601.25 and wall_zone_unknown(line.text)
    line = parse_line(7, "Dec 07 10:00:01 <4>[   12.500000] kf: hello")
    assert (line.body, line.timestamp, line.level, line.wall) == ("kf: hello", 12.5, 4, None)
    line = parse_line(7, "10:00:01.123 syzkaller login: ")
    assert (line.body, line.prefixed, line.wall) == ("syzkaller login: ", False, None)
    # ts's default stamp is syslog's: before anything but a printk time, the line is left as it is.
    line = parse_line(7, "Dec 07 10:00:01 kfhost kdumpctl[812]: kernel BUG at mm/slub.c:123!")
    assert (line.body, line.prefixed) == (line.text, False)


def test_a_captured_console_without_printk_times_is_timed_by_its_capture() -> None:
    """A kernel printing no time (printk.time=0) captured with dated stamps: the report is timed by them, said to be
    in a zone the log does not name, as a syslog line's ISO time without an offset is."""
    plain = re.sub(rb"(?m)^\[ *\d+\.\d+\] ", b"", _log("02-bug-on"))
    result = analyse_log_bytes("console.log", _captured(plain, "[2026-12-07 10:00:01.123]"))
    (report,) = result.sources[0].reports
    assert report.title == "kernel BUG in kf_buffer_put" and (report.start_line, report.end_line) == (248, 282)
    assert report.start_wall == 1796637601.123 and report.wall_zone_unknown


def test_a_capture_started_after_boot_is_said_to_be_cut() -> None:
    """The log's first printk time behind a bracketed stamp is read: a capture started 2 s after boot is cut."""
    tail = b"".join(_log("02-bug-on").splitlines(keepends=True)[-40:])
    assert parse_identity(tail).starts_after is not None
    assert parse_identity(_captured(tail, "[2026-12-07 10:00:01]")).starts_after == parse_identity(tail).starts_after
