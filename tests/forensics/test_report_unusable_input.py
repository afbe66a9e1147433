"""``report`` with a log, store, trace, profile or findings file it cannot use beside inputs it can: it goes on with
them and says which input it went without and why, as it does for a dump (tests/forensics/test_report_unusable_dump.py).

Before, any one such input (missing, a directory, another format, cut short) refused the whole report: exit 3, no
report, though the inputs beside it told the crash or the leak.
"""

from __future__ import annotations

import json
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.forensics.test_cli import run
from tests.helpers import Ran, cli_run
from tests.vmcore_cases import VmcoreCase, case_names, load_case

pytestmark = pytest.mark.xdist_group("incident-trust")

TRACE = Path(__file__).resolve().parents[1] / "data" / "traces" / "kf.ftrace.txt.gz"


def _need(name: str) -> VmcoreCase:
    if name not in case_names():
        pytest.skip(f"vmcore fixture {name} is absent (vmcore_fixtures/build.sh)")
    return load_case(name)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 08-slab-leak guest's samples, written into a store by slab-watch's own code (slab-import)."""
    made = tmp_path_factory.mktemp("leak") / "slab.db"
    result = run("slab-import", _need("08-slab-leak").directory / "snapshots", "--store", made, "--no-analysis")
    assert result.returncode == 0, result.stderr
    return made


#: A bad input: (what is given, the path the report names it by) from the test's directory and a real store.
Maker = Callable[[Path, Path], tuple[Path, Path]]


def _missing(tmp: Path, _store: Path) -> tuple[Path, Path]:
    return tmp / "gone", tmp / "gone"


def _a_directory(tmp: Path, _store: Path) -> tuple[Path, Path]:
    (tmp / "dir").mkdir()
    return tmp / "dir", tmp / "dir"


def _empty(tmp: Path, _store: Path) -> tuple[Path, Path]:
    (tmp / "empty").write_bytes(b"")
    return tmp / "empty", tmp / "empty"


def _the_trace(_tmp: Path, _store: Path) -> tuple[Path, Path]:
    return TRACE, TRACE


def _a_console_log(_tmp: Path, _store: Path) -> tuple[Path, Path]:
    log = _need("02-bug-on").console_log  # (another guest's than the one beside it: a path named once)
    return log, log


def _cut_store(tmp: Path, store: Path) -> tuple[Path, Path]:
    cut = tmp / "cut.db"
    cut.write_bytes(store.read_bytes()[:8192])  # its first two pages: the tables' pages are lost
    return cut, cut


def _store_directory(tmp: Path, _store: Path) -> tuple[Path, Path]:
    (tmp / "dir").mkdir()
    return tmp / "dir", tmp / "dir" / "slab-watch.sqlite"  # (a directory means the store in it, as leaks reads it)


#: (option, how it is bad, its maker, the input's kind as the report names it, its own command's words before it)
BAD: list[tuple[str, str, Maker, str, tuple[str, ...]]] = [
    ("--dmesg", "missing", _missing, "kernel log", ("dmesg",)),
    ("--dmesg", "a directory", _a_directory, "kernel log", ("dmesg",)),
    ("--dmesg", "empty", _empty, "kernel log", ("dmesg",)),
    ("--dmesg", "a trace", _the_trace, "kernel log", ("dmesg",)),
    ("--store", "missing", _missing, "slab store", ("leaks", "--store")),
    ("--store", "a directory without one", _store_directory, "slab store", ("leaks", "--store")),
    ("--store", "a kernel log", _a_console_log, "slab store", ("leaks", "--store")),
    ("--store", "cut short", _cut_store, "slab store", ("leaks", "--store")),
    ("--trace", "missing", _missing, "trace", ("trace",)),
    ("--trace", "a directory without a CTF trace", _a_directory, "trace", ("trace",)),
    ("--trace", "a kernel log", _a_console_log, "trace", ("trace",)),
    ("--profile", "a kernel log", _a_console_log, "profile", ("profile",)),
    ("--from", "a kernel log", _a_console_log, "findings file", ("report", "--from")),
]


def _beside(option: str, store: Path) -> tuple[list[str | Path], str]:
    """A usable input beside the bad one, and the title of the problem it tells: the leaking guest's store beside a
    bad log, the crashed guest's console log beside the others."""
    if option == "--dmesg":
        return ["--store", store], "Slab cache kf_leak_obj leaks"
    log = _need("01-null-member").console_log
    return ["--dmesg", log], "BUG: unable to handle kernel NULL pointer dereference in kf_null_member_read"


@pytest.mark.parametrize(("option", "how", "make", "kind", "own"), BAD, ids=[f"{o} {h}" for o, h, *_ in BAD])
def test_an_input_that_cannot_be_used_is_said_and_the_report_is_of_the_others(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    store: Path,
    option: str,
    how: str,
    make: Maker,
    kind: str,
    own: tuple[str, ...],
) -> None:
    given, named = make(tmp_path, store)
    alone: Ran = cli_run(monkeypatch, capsys, *own, given)
    assert alone.returncode == 3, (how, alone)
    said = alone.stderr.splitlines()[0].removeprefix("kforensic: error: ")
    hint = alone.stderr.splitlines()[1].removeprefix("kforensic: hint: ")  # what would make it usable
    # Alone in a report, it is refused as its own command refuses it: no report.
    refused = cli_run(monkeypatch, capsys, "report", option, given, "-o", tmp_path / "alone.md")
    assert refused.returncode == 3 and f"kforensic: error: {said}" in refused.stderr.splitlines(), refused
    assert not (tmp_path / "alone.md").exists()
    good, problem = _beside(option, store)
    out = tmp_path / "report.json"
    ran = cli_run(monkeypatch, capsys, "report", *good, option, given, "--json", out, "-o", tmp_path / "r0.md")
    # The report of the other input is written (before: exit 3 and none), and the run is no clean one: exit 3.
    assert ran.returncode == 3, ran.stderr
    assert f"kforensic: warning: {option} {named} not used: {said}" in ran.stderr.splitlines(), ran.stderr
    assert ran.stderr.splitlines()[-1] == (
        f"kforensic: error: {option} {named} could not be used: the report was written from the other inputs (exit 3)"
    )
    doc: dict[str, Any] = json.loads(out.read_text())
    assert doc["incident"]["examined"][0] == {
        "what": f"{kind} {named}",
        "could_find": [],
        "could_not": [],
        "unusable": {"not_available": said},
        "input": kind,
        "hint": hint,
    }
    assert [s["error"] for s in doc["incident"]["sources"] if s["path"] == str(named)] == [said]
    titles = [f["title"] for f in doc["incident"]["findings"]]
    assert any(t.startswith(problem) for t in titles), titles
    # The verdict says what it went without; the markdown page names it under what was examined.
    assert f"The {kind} {named} could not be used: {said}." in doc["summary"]
    failed = cli_run(monkeypatch, capsys, "report", *good, option, given, "--fail-on", "high", "-o", tmp_path / "r.md")
    assert failed.returncode == 1, failed.stderr  # the alert a script acts on: the other input's problem
    page = (tmp_path / "r.md").read_text()
    assert f"- not examined: {kind} {named}: could not be used (not available: {said})" in page
    # A cause read from the log alone is against no dump: a log, store or trace dropped is no dump dropped.
    assert "given could not be used" not in page and "confirm: first" not in page


def test_one_bad_log_of_two_leaves_the_other_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _need("01-null-member").console_log
    out = tmp_path / "report.json"
    ran = cli_run(monkeypatch, capsys, "report", "--dmesg", tmp_path / "gone.log", "--dmesg", log, "-o", out,
                  "-f", "json")  # fmt: skip
    assert ran.returncode == 3, ran.stderr
    doc = json.loads(out.read_text())
    assert [e["what"].split(":")[0] for e in doc["examined"]] == [f"kernel log {tmp_path / 'gone.log'}",
                                                                  f"kernel log {log}"]  # fmt: skip
    assert [f["severity"] for f in doc["findings"]] == ["critical"]


def test_nothing_found_in_what_was_read_names_what_was_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A healthy log beside a trace that is none: "no known kernel problem" alone would look like a clean run."""
    text = _need("01-null-member").console_log.read_text()
    healthy = tmp_path / "healthy.log"
    healthy.write_text(text[: text.index("BUG: kernel NULL pointer dereference")].rsplit("\n", 1)[0] + "\n")
    bad = tmp_path / "trace.txt"
    bad.write_text("not a trace\n")
    md = tmp_path / "r.md"
    ran = cli_run(monkeypatch, capsys, "report", "--dmesg", healthy, "--trace", bad, "-o", md)
    assert ran.returncode == 3, ran.stderr
    verdict = md.read_text().split("\n\n")[1]
    assert verdict.startswith("kforensic found no known kernel problem"), verdict
    assert f"The trace {bad} could not be used: {bad}: 1 of 1 lines are not trace events" in verdict, verdict


def test_every_input_unusable_is_refused_without_a_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nothing to report from: exit 3, the last input's one line (its hint after it), the ones before as warnings."""
    (tmp_path / "empty.log").write_bytes(b"")
    bad_trace = tmp_path / "trace.txt"
    bad_trace.write_text("not a trace\n")
    md = tmp_path / "r.md"
    ran = cli_run(monkeypatch, capsys, "report", "--dmesg", tmp_path / "empty.log", "--trace", bad_trace, "-o", md)
    assert ran.returncode == 3 and not md.exists(), ran
    lines = ran.stderr.splitlines()
    assert lines[0].startswith(f"kforensic: warning: --dmesg {tmp_path / 'empty.log'} not used: ")
    assert lines[1].startswith(f"kforensic: error: {bad_trace}: 1 of 1 lines are not trace events")
    assert lines[2].startswith("kforensic: hint: ") and len(lines) == 3, lines


def test_a_sessions_spans_are_not_said_unjoined_with_a_trace_that_could_not_be_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An LTTng session's slow spans beside a text trace that is none said "not joined with trace junk.txt: its clock
    is not known to be CLOCK_MONOTONIC": a claim about a trace that was never read.  There is no kernel trace."""
    with tarfile.open(Path(__file__).resolve().parents[1] / "data" / "lttng" / "ust.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    bad = tmp_path / "kernel.txt"
    bad.write_text("not a trace\n")
    for order in (("--trace", tmp_path / "ust", "--trace", bad), ("--trace", bad, "--trace", tmp_path / "ust")):
        md = tmp_path / "r.md"
        ran = cli_run(monkeypatch, capsys, "report", *order, "-o", md)
        assert ran.returncode == 3, ran.stderr
        page = md.read_text()
        assert f"- not examined: trace {bad}: could not be used" in page
        assert f"not joined with trace {bad}" not in page and "no kernel trace" in page
