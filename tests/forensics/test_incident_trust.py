"""The incident's verdicts on the real fixture dumps and their console logs: one judgement of one event.

A crash requested with sysrq is low in ``dmesg`` alone, ``vmcore`` alone and ``report`` with both (the log's
report kept it critical and the merge kept the higher of the two).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from forensics.types.deliberate import FORCED
from tests.helpers import Ran, cli_run
from tests.vmcore_cases import CASES_DIR, VmcoreCase, case_names, load_case

# The cases' dumps are analysed by the vmcore tests' worker too; here each test runs the CLI in this process.
pytestmark = pytest.mark.xdist_group("incident-trust")


def _need(name: str) -> VmcoreCase:
    if name not in case_names():
        pytest.skip(f"vmcore fixture {name} is absent (vmcore_fixtures/build.sh)")
    return load_case(name)


def _json(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], out: Path, *args: str | Path) -> Any:
    ran: Ran = cli_run(monkeypatch, capsys, *args, "-f", "json", "-o", out)
    assert ran.returncode == 0, ran.stderr
    return json.loads(out.read_text())


def _debug(case: VmcoreCase) -> list[str | Path]:
    return ["--vmlinux", case.vmlinux, *(a for m in case.module_debug for a in ("--module-debug", m))]


def _baseline(finding: dict[str, Any]) -> tuple[str, str, str] | None:
    b = finding.get("baseline")
    return None if b is None else (b["name"], b["value"], b["source"])


_FORCED = (FORCED.name, FORCED.value, FORCED.source)


def test_a_sysrq_crash_is_low_against_one_baseline_in_dmesg_vmcore_and_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    case = _need("07-sysrq-c")
    log = _json(monkeypatch, capsys, tmp_path / "dmesg.json", "dmesg", case.console_log)
    dump = _json(monkeypatch, capsys, tmp_path / "vmcore.json", "vmcore", case.vmcore, *_debug(case))
    both = _json(
        monkeypatch, capsys, tmp_path / "report.json",
        "report", "--vmcore", case.vmcore, *_debug(case), "--dmesg", case.console_log,
    )  # fmt: skip
    [from_log] = log["incident"]["findings"]
    [from_dump] = [f for f in dump["incident"]["findings"] if f["kind"] == "crash"]
    [merged] = [f for f in both["findings"] if "sysrq triggered crash" in f["title"]]
    for said in (from_log, from_dump, merged):
        assert (said["severity"], _baseline(said)) == ("low", _FORCED), said["id"]
    # One crash, two views: the log's report corroborates the dump's crash (it was kept apart while it was low).
    assert any(f["value"].endswith(f"({from_log['id']})") for f in merged["facts"] if f["name"] == "corroborated by")
    assert not [f for f in both["findings"] if f["severity"] in ("medium", "high", "critical")]


def test_a_real_crash_that_a_sysrq_line_precedes_stays_critical(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """01-null-member's console log, with the line ``echo w > /proc/sysrq-trigger`` prints before its oops: an
    operator who asked for the blocked tasks did not ask for the crash."""
    console = CASES_DIR / "01-null-member" / "console.log"
    if not console.is_file():
        pytest.skip(f"no {console}")
    lines = console.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if "BUG: kernel NULL pointer dereference" in line)
    stamp = lines[at][: lines[at].index("]") + 1]
    log = tmp_path / "console.log"
    log.write_text("".join([*lines[:at], f"{stamp} sysrq: Show Blocked State\n", *lines[at:]]))
    doc = _json(monkeypatch, capsys, tmp_path / "dmesg.json", "dmesg", log)
    [crash] = [f for f in doc["incident"]["findings"] if f["kind"] == "dmesg.null-deref"]
    assert crash["severity"] == "critical" and _baseline(crash) != _FORCED


def test_a_sysrq_crash_log_of_another_crash_still_contradicts_the_dump(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """01-null-member's dump with 07-sysrq-c's console log: the log's crash, low because requested, is still the
    crash that ended its boot, and not the dump's."""
    case, other = _need("01-null-member"), _need("07-sysrq-c")
    doc = _json(
        monkeypatch, capsys, tmp_path / "report.json",
        "report", "--vmcore", case.vmcore, *_debug(case), "--dmesg", other.console_log,
    )  # fmt: skip
    [said] = [f for f in doc["findings"] if f["kind"] == "contradiction"]
    assert said["title"].startswith("the dump and the log disagree: 'BUG: unable to handle kernel NULL pointer")
    assert said["title"].endswith("'kernel panic: sysrq triggered crash'")
