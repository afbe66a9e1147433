"""A kernel log found beside a dump is read only when it is the dump's: its last records are the dump's own.

Review ue21 #5: fixture 10-use-after-free's dump beside 02-bug-on's ``dmesg.txt`` was read as "saved beside the dump
by kdump" and gave a critical "kernel BUG in kf_buffer_put" for a use-after-free; with drgn, a log of the same bug
from another boot had its lines cited as the crash's evidence.  The dumps and logs are the real fixtures; the
dump's own log is what the real makedumpfile reads (without it, the log beside is read and said unchecked).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from forensics.model import Examined
from forensics.vmcore.locate import locate_dump
from tests.forensics.vmcore.test_vmcore_without_debug_info import _dmesg_titles, _log_only, _titles
from tests.helpers import Ran, cli_run
from tests.vmcore_cases import VmcoreCase, case_names, load_case, on_case

needs_makedumpfile = pytest.mark.skipif(shutil.which("makedumpfile") is None, reason="makedumpfile is not installed")

DUMP = "10-use-after-free"  # a general protection fault (a use-after-free) in kf_conn_send
OTHER = "02-bug-on"  # a BUG_ON in kf_buffer_put, another boot of the same kernel


@pytest.fixture
def kf(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Callable[..., Ran]:
    return lambda *args: cli_run(monkeypatch, capsys, *args)


def _need(name: str, kernel: str = "6.1") -> VmcoreCase:
    if name not in case_names(kernel):
        pytest.skip(f"vmcore fixture {name} of kernel {kernel} is absent (vmcore_fixtures/build.sh)")
    return load_case(name, kernel)


def _crash_dir(tmp: Path, dump: VmcoreCase, log: Path | bytes) -> Path:
    """A crash directory: ``dump``'s vmcore and, as ``dmesg.txt``, ``log`` (a file, or these bytes)."""
    crash = tmp / "crash"
    crash.mkdir()
    (crash / "vmcore").symlink_to(dump.vmcore)
    if isinstance(log, Path):
        (crash / "dmesg.txt").symlink_to(log)
    else:
        (crash / "dmesg.txt").write_bytes(log)
    return crash


def _last_line(log: Path) -> str:
    return log.read_text().splitlines()[-1]


@needs_makedumpfile
def test_another_crashs_log_is_not_read_the_dumps_own_is(no_debug_info: Path, tmp_path: Path) -> None:
    from forensics.types.results import DumpLogResult, LogExtracted

    dump, other = _need(DUMP), _need(OTHER)
    crash = _crash_dir(tmp_path, dump, other.dmesg)
    result = _log_only(dump, crash, no_debug_info)
    assert isinstance(result, DumpLogResult) and isinstance(result.log, LogExtracted), result
    said = (
        f"{crash / 'dmesg.txt'} beside the dump is not this dump's log: its last record `{_last_line(other.dmesg)}` "
        f"is not in the dump's log (whose last is `{_last_line(dump.dmesg)}`); not read"
    )
    assert result.log.not_used == said
    # The dump's crash, as its own log tells it; not the other log's BUG_ON.
    assert _titles(result.incident) == _dmesg_titles(dump.dmesg)
    assert not any("kf_buffer_put" in t for t in _titles(result.incident))
    assert Examined(said) in result.incident.examined  # said where the inputs are


@needs_makedumpfile
def test_a_log_that_ends_before_the_dumps_end_is_not_read(no_debug_info: Path, tmp_path: Path) -> None:
    """The dump's own log up to its first 200 lines (written before the crash's end, or cut): not the dump's log."""
    from forensics.types.results import DumpLogResult, LogExtracted

    dump = _need(DUMP)
    lines = dump.dmesg.read_bytes().splitlines(keepends=True)
    crash = _crash_dir(tmp_path, dump, b"".join(lines[:200]))
    result = _log_only(dump, crash, no_debug_info)
    assert isinstance(result, DumpLogResult) and isinstance(result.log, LogExtracted), result
    assert result.log.not_used.startswith(
        f"{crash / 'dmesg.txt'} beside the dump is not this dump's log: it ends {len(lines) - 200} record(s) before "
        f"the dump's log: its last record `{lines[199].decode().rstrip()}` is followed in the dump by more"
    ), result.log.not_used
    assert _titles(result.incident) == _dmesg_titles(dump.dmesg)


def test_without_makedumpfile_the_log_beside_is_read_said_unchecked(
    no_debug_info: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check cannot be made: the log is read as found, and said "not checked", never "saved by kdump"."""
    from forensics.report.dumplog import preamble_text
    from forensics.types.results import DumpLogResult, LogBeside

    dump, other = _need(DUMP), _need(OTHER)
    crash = _crash_dir(tmp_path, dump, other.dmesg)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))  # no makedumpfile there
    result = _log_only(dump, crash, no_debug_info)
    assert isinstance(result, DumpLogResult) and isinstance(result.log, LogBeside), result
    assert result.log.unchecked.startswith("the dump's own log could not be read: makedumpfile is not installed")
    assert not result.log.checked
    [line] = [x for x in preamble_text(result) if x.startswith("  kernel log: ")]
    assert line.startswith(f"  kernel log: `{crash / 'dmesg.txt'}`, found beside the dump, not checked against it (")
    assert "by kdump" not in line


@needs_makedumpfile
def test_vmcore_says_which_log_it_read(tmp_path: Path, kf: Callable[..., Ran], no_debug_info: Path) -> None:
    dump, other = _need(DUMP), _need(OTHER)
    crash = _crash_dir(tmp_path, dump, other.dmesg)
    empty = tmp_path / "debug"
    empty.mkdir()
    ran = kf("vmcore", crash, "--debug-dir", empty, "--no-debuginfod")
    assert ran.returncode == 0, ran.stderr
    [line] = [x for x in ran.stdout.splitlines() if x.startswith("  kernel log: ")]
    assert line.startswith("  kernel log: extracted from the dump by makedumpfile for this run; ")
    assert line.endswith(f"({crash / 'dmesg.txt'} beside the dump is not this dump's log: its last record "
                         f"`{_last_line(other.dmesg)}` is not in the dump's log (whose last is "
                         f"`{_last_line(dump.dmesg)}`); not read)")  # fmt: skip
    assert "general protection fault in kf_conn_send" in ran.stdout
    assert "kf_buffer_put" not in ran.stdout


@needs_makedumpfile
def test_report_with_another_kernels_vmlinux_reads_the_dumps_own_log(tmp_path: Path, kf: Callable[..., Ran]) -> None:
    """The vmlinux does not fit: the report reads the dump's log, not the other crash's log beside it."""
    dump, other = _need(DUMP), _need(OTHER)
    wrong = _need(DUMP, "6.12").vmlinux
    crash = _crash_dir(tmp_path, dump, other.dmesg)
    out = tmp_path / "report.md"
    ran = kf("report", "--vmcore", crash / "vmcore", "--vmlinux", wrong, "-o", out)
    assert ran.returncode == 3, ran.stderr  # the vmlinux given could not be used
    text = out.read_text()
    assert "The report: general protection fault in kf_conn_send." in text
    assert "kernel BUG in kf_buffer_put" not in text
    assert f"- examined: {crash / 'dmesg.txt'} beside the dump is not this dump's log: " in text


@pytest.mark.skipif(not case_names("6.12"), reason="no 6.12 fixture dumps")
@on_case(f"6.1/{DUMP}")
def test_with_debug_info_a_log_of_the_same_bug_from_another_boot_is_not_cited(tmp_path: Path) -> None:
    """drgn reads the dump's printk records: the log beside is checked against them (no other run).  The 6.12 boot's
    log of the same use-after-free has the crash's title, and its lines were cited as this crash's evidence."""
    from forensics.pipelines.sources import analyse_vmcore
    from forensics.types.results import VmcoreResult

    dump, same_bug = _need(DUMP), _need(DUMP, "6.12")
    crash = _crash_dir(tmp_path, dump, same_bug.dmesg)
    analysed = analyse_vmcore(crash, dump.vmlinux, dump.module_debug, ())  # as report runs it
    result = analysed.details
    assert isinstance(result, VmcoreResult)
    beside = str(crash / "dmesg.txt")
    assert result.dmesg_path is None
    cited = {e.source for f in result.analysis.findings for e in f.evidence}
    assert beside not in cited and any(s.endswith("#log") for s in cited), cited
    said = (
        f"{beside} beside the dump is not this dump's log: its last record `{_last_line(same_bug.dmesg)}` is not in "
        f"the dump's log (whose last is `{_last_line(dump.dmesg)}`); not read: the dump's own records are"
    )
    assert said in result.snapshot.warnings  # kforensic vmcore's warnings
    assert analysed.incident.examined[1] == Examined(said)  # report's "examined", after the dump's own line


def test_a_stamped_dump_takes_only_the_log_of_its_stamp(tmp_path: Path) -> None:
    """kdump-tools writes ``dump.<stamp>`` and ``dmesg.<stamp>`` together: another stamp's log is another crash's."""
    crash = tmp_path / "202612071840"
    crash.mkdir()
    (crash / "dump.202612071840").write_bytes(b"KDUMP   ")
    (crash / "dmesg.202611300712").write_text("[    1.000000] another crash\n")
    assert locate_dump(crash).dmesg is None
    (crash / "dmesg.202612071840").write_text("[    2.000000] this crash\n")
    assert locate_dump(crash).dmesg == crash / "dmesg.202612071840"
    # An older kdump-tools' vmcore in /var/crash/<stamp>/: the log of its directory's stamp, not the last by name.
    older = tmp_path / "202612071850"
    older.mkdir()
    (older / "vmcore").write_bytes(b"KDUMP   ")
    (older / "dmesg.202612071850").write_text("[    2.000000] this crash\n")
    (older / "dmesg.202612071999").write_text("[    1.000000] another crash\n")
    assert locate_dump(older).dmesg == older / "dmesg.202612071850"


def test_records_compare_as_printk_printed_them() -> None:
    """A continuation line (indented, no time) belongs to the record before; makedumpfile's ``\\xNN`` escape is the
    byte drgn reads: the same records either way."""
    from forensics.vmcore.logcheck import DumpLog, compare, text_records

    text = (
        "[    0.100000] Calibrating delay loop\n"
        "               Probably due to long platform interrupts.\n"
        "[    2.206837] Modules linked in: kf_buggy(O) \\x1b\n"
    )
    records = [(0.1, "Calibrating delay loop\nProbably due to long platform interrupts."),
               (2.206837, "Modules linked in: kf_buggy(O) \x1b")]  # fmt: skip
    assert text_records(text) == DumpLog(records=records).whole() == DumpLog(text).whole()
    assert compare(text, DumpLog(records=records)).ours
    assert not compare(text, DumpLog(records=records[:1])).ours


def test_only_the_end_of_a_long_log_is_read() -> None:
    """The last records of a log of megabytes, as the whole log parsed gives them (continuations kept whole)."""
    from forensics.vmcore.logcheck import TAIL_RECORDS, text_records

    text = "".join(f"[{i / 1000:12.6f}] record {i}\n    its continuation {i}\n" for i in range(40_000))
    assert text_records(text, TAIL_RECORDS) == text_records(text)[-TAIL_RECORDS:]
    assert text_records(text, TAIL_RECORDS)[0] == ("39.984000", "record 39984 its continuation 39984")


def test_a_file_of_no_printk_records_is_said_as_none_not_quoted() -> None:
    """A dmesg.txt of random bytes beside a dump was rejected by quoting its "last record" (the bytes as text,
    `\ufffd u '\ufffd(...`); a file whose last lines hold no `[seconds] text` record is no log kdump wrote, said so."""
    import random

    from forensics.vmcore.logcheck import DumpLog, compare

    junk = random.Random(1).randbytes(4000).decode("utf-8", "replace")
    check = compare(junk, DumpLog(records=((2.206837, "Modules linked in: kf_buggy(O)"),)))
    assert not check.ours
    assert check.why == "its last lines hold no printk record (`[seconds] text`): not a log kdump wrote", check.why
