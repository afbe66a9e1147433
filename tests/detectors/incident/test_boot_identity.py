"""Whether a kernel log is of the dumped boot, on the fixture guests' own logs (detectors/incident/boot_identity.py).

The dump's own log is stood for by ``dmesg.txt``, what makedumpfile extracted from each fixture dump's printk
buffer (the report reads the same records from the dump itself: tests/forensics/test_incident_report.py).  The 14
guests of the 6.1 kernel all run 6.1.192: a release cannot tell their logs apart, their boots can.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from collectors.log_boots import read_boots
from detectors.incident.boot_identity import BootCheck, check_boot, log_reference
from forensics.model import Finding, FindingKind, Severity
from forensics.types.boots import LoggedBoot
from tests.helpers import assert_evidence_resolves
from tests.vmcore_cases import CASES_DIR, FIXTURES_DIR

#: Every guest of every fixture kernel with its dump's log and its console log, by kernel.
KERNELS = {
    kernel: sorted(p for p in cases.iterdir() if (p / "dmesg.txt").is_file() and (p / "console.log").is_file())
    for kernel, cases in [("6.1", CASES_DIR), *((k.name, k / "cases") for k in FIXTURES_DIR.glob("kernels/*"))]
    if cases.is_dir()
}


def _need(name: str) -> Path:
    path = CASES_DIR / name
    if not (path / "dmesg.txt").is_file():
        pytest.skip(f"vmcore fixture {name} is absent (vmcore_fixtures/build.sh)")
    return path


def _dump(case: Path) -> LoggedBoot:
    """The dumped boot's log: every record makedumpfile extracted from the dump (one boot)."""
    [boot] = read_boots(str(case / "dmesg.txt"), None)
    return boot


def _check(dump: LoggedBoot, log: Path) -> BootCheck:
    found = check_boot(dump, read_boots(str(log), [x.seconds for x in dump.lines]))
    assert found is not None
    return found


def _resolves(check: BootCheck, dump_case: Path) -> None:
    """The lines a check cites stand at their lines in the two logs."""
    finding = Finding("x", FindingKind.CONTRADICTION, check.why, Severity.LOW, 0.9, "", "", check.evidence)
    assert_evidence_resolves([finding])
    assert {e.source for e in check.evidence} == {str(dump_case / "dmesg.txt"), check.source}


def test_a_console_log_holds_the_crashed_boot_then_the_capture_kernels() -> None:
    case = _need("01-null-member")
    crashed, capture = read_boots(str(case / "console.log"), ())
    assert (crashed.first_line, crashed.release) == (1, "6.1.192")
    assert crashed.command_line is not None and crashed.command_line.body.endswith("kf_case=null_member")
    assert capture.first_line == 272 and capture.command_line is not None
    assert "elfcorehdr=" in capture.command_line.body
    assert crashed.lines == () == capture.lines  # no time asked for, no line kept


def test_another_guests_log_is_set_apart_by_its_command_line() -> None:
    """The reviewer's case: the 10-use-after-free guest's console log beside the 01-null-member dump."""
    dump_case = _need("01-null-member")
    found = _check(_dump(dump_case), _need("10-use-after-free") / "console.log")
    assert (found.other, found.check) == (True, "command line")
    assert "kf_case=use_after_free" in found.why and "kf_case=null_member" in found.why
    assert "nor is its other boot (from line 283) the dumped one" in found.why  # the capture kernel's
    _resolves(found, dump_case)


def test_without_command_lines_lines_at_the_same_times_set_it_apart(tmp_path: Path) -> None:
    """A log cut after its boot banner (no ``Command line:``): a time since boot at which the two logs print other
    lines separates it."""
    dump_case = _need("11-abba-deadlock")
    log = tmp_path / "console.log"
    text = (_need("04-hung-task") / "console.log").read_text()
    log.write_text("".join(x for x in text.splitlines(keepends=True) if "Command line:" not in x))
    found = _check(_dump(dump_case), log)
    assert (found.other, found.check) == (True, "same times"), found
    assert "one boot prints one record at one time" in found.why
    _resolves(found, dump_case)


def test_a_boot_that_panicked_while_the_dumped_kernel_ran_is_set_apart(tmp_path: Path) -> None:
    """The 04-hung-task guest's report alone (its panic at 10.5 s) beside the 08-slab-leak dump, whose kernel printed
    until 97 s: the log's kernel was dead while the dumped one ran."""
    dump_case = _need("08-slab-leak")
    log = tmp_path / "hung.log"
    lines = (_need("04-hung-task") / "console.log").read_text().splitlines(keepends=True)
    log.write_text("".join(lines[235:264]))
    found = _check(_dump(dump_case), log)
    assert (found.other, found.check) == (True, "panic"), found
    assert "Kernel panic - not syncing: hung_task: blocked tasks" in found.why and "until 97." in found.why
    _resolves(found, dump_case)


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_each_guests_own_log_is_its_dumps_boot_and_no_other_guests(kernel: str) -> None:
    """Every guest's console log is confirmed as its dump's boot, and every other guest's of the same kernel is set
    apart: no guest's log of the same release is taken for another's (nor its own for another boot)."""
    cases = KERNELS[kernel]
    if len(cases) < 2:
        pytest.skip("the vmcore fixtures are absent (vmcore_fixtures/build.sh)")
    dumps = {case: _dump(case) for case in cases}
    for case in cases:
        own = _check(dumps[case], case / "console.log")
        assert own.other is False and own.why.startswith("the dumped boot's: "), (case.name, own)
    for dump_case, log_case in itertools.permutations(cases, 2):
        found = _check(dumps[dump_case], log_case / "console.log")
        assert found.other is True, (dump_case.name, log_case.name, found)


def test_a_log_no_check_decides_is_unconfirmed(tmp_path: Path) -> None:
    """No command line, no line at a time the dump's log prints, no panic while the dumped kernel ran: neither of the
    dumped boot nor proved another's."""
    dump_case = _need("11-abba-deadlock")
    log = tmp_path / "console.log"
    text = (_need("10-use-after-free") / "console.log").read_text()
    log.write_text("".join(x for x in text.splitlines(keepends=True) if "Command line:" not in x))
    found = _check(_dump(dump_case), log)
    assert found.other is None and found.why.startswith("unconfirmed: "), found


def test_without_a_dump_the_told_logs_boot_is_named_not_a_dump() -> None:
    """Two console logs, no dump: the told log's boot is the reference, and the sentences name it (they said "the
    dump's" of a report given no dump)."""
    told, other = _need("10-use-after-free") / "console.log", _need("02-bug-on") / "console.log"
    boot = read_boots(str(told), None)[0]
    found = check_boot(boot, read_boots(str(other), [x.seconds for x in boot.lines]), log_reference("T.log", 1))
    assert found is not None and (found.other, found.check) == (True, "command line")
    assert found.why.startswith("its boot's command line is not T.log's: ") and "dump" not in found.why, found.why
    assert "kf_case=use_after_free slub_debug=FZPU,kf_conn' (line 2)" in found.why  # the told log's line, cited
    assert found.why.endswith("nor is its other boot (from line 271) the boot of T.log from line 1"), found.why
    assert {e.source for e in found.evidence} == {str(told), str(other)}
    finding = Finding("x", FindingKind.CONTRADICTION, found.why, Severity.LOW, 0.9, "", "", found.evidence)
    assert_evidence_resolves([finding])


def _same_command_line(log: Path, like: Path, out: Path) -> Path:
    """``log`` with the ``Command line:`` lines of ``like``: another boot of one machine, whose command line is the
    same (kern.log.1 and kern.log across a reboot)."""
    lines = like.read_text().splitlines(keepends=True)
    commands = iter([x for x in lines if "Command line: " in x])
    out.write_text("".join(next(commands) if "Command line: " in x else x for x in log.read_text().splitlines(True)))
    return out


def test_another_boot_of_the_same_command_line_is_set_apart_by_its_boot_time(tmp_path: Path) -> None:
    """Two boots of one command line: no line at the same time differs, no panic while the other ran; each boot's
    RTC line says when it began, 158 s apart (the log was "unconfirmed", and dated with the other's boot time)."""
    told = _need("10-use-after-free") / "console.log"
    other = _same_command_line(_need("02-bug-on") / "console.log", told, tmp_path / "console.log")
    boot = read_boots(str(told), None)[0]
    assert boot.clock is not None and boot.clock.number == 232 and boot.began == pytest.approx(1796242696 - 0.612888)
    found = check_boot(boot, read_boots(str(other), [x.seconds for x in boot.lines]), log_reference("T.log", 1))
    assert found is not None and (found.other, found.check) == (True, "boot time"), found
    assert found.why.startswith(
        "its boot began at 2026-12-02T20:15:37+00:00 (line 218: the RTC's time the kernel set its clock to, less the "
        "line's printk time), 158 s before the boot of T.log from line 1, which began at 2026-12-02T20:18:15+00:00 "
        "(line 232): one boot begins once"
    ), found.why
    assert [(e.source, e.locator.start) for e in found.evidence] == [(str(told), 232), (str(other), 218)]
    finding = Finding("x", FindingKind.CONTRADICTION, found.why, Severity.LOW, 0.9, "", "", found.evidence)
    assert_evidence_resolves([finding])
    # The same boot's two logs (the console's and kdump's copy) read the same RTC line: not apart by it.
    dmesg = _need("10-use-after-free") / "dmesg.txt"
    same = check_boot(boot, read_boots(str(dmesg), [x.seconds for x in boot.lines]), log_reference("T.log", 1))
    assert same is not None and same.other is False, same


def test_a_log_of_the_dumped_boot_names_its_other_boots_a_check_separates() -> None:
    """A console log of the dumped boot holds the capture kernel's boot after it: confirmed, with that boot named
    apart (its lines are not the dumped boot's: the report puts them on a lane of their own)."""
    case = _need("01-null-member")
    found = _check(_dump(case), case / "console.log")
    assert found.other is False, found
    [capture] = found.others
    assert (capture.first, capture.end) == (272, None), capture
    assert capture.why.startswith("its boot's command line is not the dump's: ") and "elfcorehdr=" in capture.why
    assert capture.began is not None and "the RTC's time the kernel set its clock to" in capture.began.basis, capture
