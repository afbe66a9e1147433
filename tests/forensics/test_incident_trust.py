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
    crash that ended its boot, and not the dump's.  The log's report alone (from its sysrq line on): the whole log
    names its command line, which sets it apart as another boot (tests/forensics/test_incident_report.py); this
    one's boot is unconfirmed, and the two crashes disagree."""
    case, other = _need("01-null-member"), _need("07-sysrq-c")
    lines = other.console_log.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if "sysrq: Trigger a crash" in line)
    log = tmp_path / "console.log"
    log.write_text("".join(lines[at:]))
    doc = _json(
        monkeypatch, capsys, tmp_path / "report.json",
        "report", "--vmcore", case.vmcore, *_debug(case), "--dmesg", log,
    )  # fmt: skip
    [said] = [f for f in doc["findings"] if f["kind"] == "contradiction"]
    assert said["title"].startswith("the dump and the log disagree: 'BUG: unable to handle kernel NULL pointer")
    assert said["title"].endswith("'kernel panic: sysrq triggered crash'")
    # What the log's crash was compared with: the dump's (the contradiction named no baseline).
    assert said["baseline"]["name"] == "the crash the dump holds, which a log of the dumped boot ends in too"
    assert said["baseline"]["value"].startswith("'BUG: unable to handle kernel NULL pointer")


def _links(findings: list[dict[str, Any]]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The one critical finding, and the findings linked to it as its consequences."""
    [root] = [f for f in findings if f["severity"] == "critical"]
    assert "consequence_of" not in root
    return root, [f for f in findings if (f.get("consequence_of") or {}).get("id") == root["id"]]


def _check_consequences(root: dict[str, Any], linked: list[dict[str, Any]]) -> None:
    for f in linked:
        assert f["consequence_of"]["title"] == root["title"] and f["consequence_of"]["how"], f["title"]
        assert f["severity"] == "high" and f["evidence"], f["title"]  # below the root, its evidence kept
        if f["baseline"]["name"] == "its root cause, where the harm is counted once":
            assert f["baseline"]["value"] == f"critical: finding {root['id']}"


@pytest.mark.parametrize("with_log", [False, True], ids=["vmcore", "report"])
def test_a_deadlock_is_one_critical_root_and_its_hung_tasks_and_crash_are_its_consequences(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], with_log: bool
) -> None:
    """11-abba-deadlock: the lock cycle, the two tasks in it, khungtaskd's reports of them and the crash
    kernel.hung_task_panic made of one were three critical findings (vmcore: the crash, the cycle, the log's
    report; report: the crash, the cycle, kf_stats merged with the log's report)."""
    case = _need("11-abba-deadlock")
    if with_log:
        findings = _json(
            monkeypatch, capsys, tmp_path / "report.json",
            "report", "--vmcore", case.vmcore, *_debug(case), "--dmesg", case.console_log,
        )["findings"]  # fmt: skip
    else:
        findings = _json(monkeypatch, capsys, tmp_path / "vmcore.json", "vmcore", case.vmcore, *_debug(case))[
            "incident"
        ]["findings"]
    root, linked = _links(findings)
    assert root["kind"] == "deadlock"
    _check_consequences(root, linked)
    kinds = sorted(f["kind"] for f in linked)
    assert kinds == (
        ["crash", "hung-task", "hung-task"] if with_log else ["crash", "dmesg.hang", "hung-task", "hung-task"]
    )
    [crash] = [f for f in linked if f["kind"] == "crash"]
    assert "kf_config (pid 42)" in crash["consequence_of"]["how"]
    assert {f["consequence_of"]["how"] for f in linked if f["kind"] == "hung-task"} == {
        "kf_config (pid 42) waits in the cycle",
        "kf_stats (pid 43) waits in the cycle",
    }
    if with_log:  # the log's reports are merged into them, their lines still cited
        cited = {e["source"] for f in linked for e in f["evidence"]}
        assert str(case.console_log) in cited


def test_a_spinlock_never_released_is_one_critical_root_and_the_lockup_crash_its_consequence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    case = _need("14-spin-deadlock")
    doc = _json(
        monkeypatch, capsys, tmp_path / "report.json",
        "report", "--vmcore", case.vmcore, *_debug(case), "--dmesg", case.console_log,
    )  # fmt: skip
    root, linked = _links(doc["findings"])
    assert root["kind"] == "spinlock-deadlock"
    _check_consequences(root, linked)
    [crash] = linked
    assert crash["kind"] == "crash" and crash["title"] == "BUG: soft lockup in kf_hw_poll_fn"
    assert crash["consequence_of"]["how"] == "the lockup detector stopped the kernel on CPU 1, which spins on the lock"
    assert {e["locator"]["kind"] for e in crash["evidence"]} >= {"frame", "line"}  # the dump's frame, the log's lines


def test_the_links_are_read_back_from_a_findings_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    case = _need("11-abba-deadlock")
    dump = _json(monkeypatch, capsys, tmp_path / "vmcore.json", "vmcore", case.vmcore, *_debug(case))
    (tmp_path / "in.json").write_text(json.dumps(dump))
    again = _json(monkeypatch, capsys, tmp_path / "report.json", "report", "--from", tmp_path / "in.json")
    links = {f["id"]: f.get("consequence_of") for f in dump["incident"]["findings"]}
    # (the log's report of kf_stats is merged into the dump's hung task of kf_stats, as with a log beside it)
    read = {f["id"]: f.get("consequence_of") for f in again["findings"]}
    assert read == {i: link for i, link in links.items() if i in read} and len(read) == len(links) - 1
    assert sum(link is not None for link in read.values()) == 3


def test_a_log_report_the_kernel_panicked_on_does_not_raise_the_dumps_hung_task(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """04-hung-task: the log's report of kf_waiter is critical because kernel.hung_task_panic panicked on it; that
    panic is the dump's crash, counted there.  The dump's hung task merged with it stays as the dump judged it
    (it was critical under "D state for 8.2 s ... against the hung-task timeout": a severity its baseline did not
    give)."""
    case = _need("04-hung-task")
    doc = _json(
        monkeypatch, capsys, tmp_path / "report.json",
        "report", "--vmcore", case.vmcore, *_debug(case), "--dmesg", case.console_log,
    )  # fmt: skip
    [critical] = [f for f in doc["findings"] if f["severity"] == "critical"]
    assert critical["kind"] == "crash"
    [hung] = [f for f in doc["findings"] if f["kind"] == "hung-task"]
    assert hung["severity"] == "high" and hung["baseline"]["name"].startswith("D state for ")
    assert any(e["source"] == str(case.console_log) for e in hung["evidence"])  # the log's report still cited


def _cut_console(case: VmcoreCase, tmp_path: Path, last: str) -> tuple[Path, int]:
    """A copy of the case's console log cut after the first line of its crash report that holds ``last``."""
    lines = case.console_log.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if "BUG: kernel NULL pointer dereference" in line)
    end = next(i for i in range(at, len(lines)) if last in lines[i]) + 1
    log = tmp_path / "cut.log"
    log.write_text("".join(lines[:end]))
    return log, end


def _story(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path, case: VmcoreCase, log: Path
) -> dict[str, Any]:
    """The report's JSON story (findings, correlations) of the case's dump beside ``log``, with its markdown."""
    ran = cli_run(
        monkeypatch, capsys,
        "report", "--vmcore", case.vmcore, *_debug(case), "--dmesg", log, "--json", tmp_path / "story.json",
        "-o", tmp_path / "r.md",
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    story: dict[str, Any] = json.loads((tmp_path / "story.json").read_text())
    return story


@pytest.mark.parametrize("last", ["#PF: supervisor read access", "RIP: 0010:kf_null_member_read"])
def test_a_console_log_cut_before_the_trace_is_the_reports_start_not_corroboration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], last: str
) -> None:
    """01-null-member's console log cut inside its oops, before the call trace: it prints the dump's header line at
    the same time (and, cut after the RIP line, the same title), and was said to corroborate the whole crash."""
    case = _need("01-null-member")
    log, end = _cut_console(case, tmp_path, last)
    alone = _json(monkeypatch, capsys, tmp_path / "vmcore.json", "vmcore", case.vmcore, *_debug(case))
    doc = _json(
        monkeypatch, capsys, tmp_path / "report.json",
        "report", "--vmcore", case.vmcore, *_debug(case), "--dmesg", log,
    )  # fmt: skip
    [crash] = [f for f in doc["findings"] if f["kind"] == "crash"]
    [dumped] = [f for f in alone["incident"]["findings"] if f["kind"] == "crash"]
    assert not [f for f in crash["facts"] if f["name"] == "corroborated by"]
    assert "corroborated" not in crash["confidence_reason"] and crash["confidence"] == dumped["confidence"]
    [same] = [f["value"] for f in crash["facts"] if f["name"] == "same event as"]
    assert f"the rest is not in the log (cut at line {end}): its call trace, which would confirm it" in same
    assert f"the same report's start: {log} lines " in crash["confidence_reason"]
    assert "its header line (printed at the same time since boot)" in crash["confidence_reason"]
    # The report's Correlations say the same (they said "the dump's crash is the report at cut.log line 233-240").
    story = _story(monkeypatch, capsys, tmp_path, case, log)
    [same] = [c["statement"] for c in story["correlations"] if c["rule"] == "same-crash"]
    assert same.startswith(f"the same report's start: {log} lines ")


def test_a_console_log_cut_inside_the_trace_says_what_it_matched_and_what_it_lacks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Cut after the trace's first frames: it corroborates, saying what it matched and what it could not show; its
    register dump's CR2 (the closing CR2 line is cut off) made "the dump and the log disagree on the crash's fault
    address" (medium)."""
    case = _need("01-null-member")
    log, end = _cut_console(case, tmp_path, "full_proxy_read+")
    doc = _json(
        monkeypatch, capsys, tmp_path / "report.json",
        "report", "--vmcore", case.vmcore, *_debug(case), "--dmesg", log,
    )  # fmt: skip
    [crash] = [f for f in doc["findings"] if f["kind"] == "crash"]
    [said] = [f["value"] for f in crash["facts"] if f["name"] == "corroborated by"]
    assert f"the log is cut at line {end}: it matched its header line" in said
    assert "and holds the start of its call trace; not in the cut log: the rest of its 39 lines" in said
    assert "the fault address of its closing CR2 line" in said
    assert not [f for f in doc["findings"] if f["kind"] == "contradiction"]


def test_a_console_log_cut_inside_the_trace_before_the_function_is_the_same_event_in_both_places(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Review ue20 #11: 04-hung-task's console log cut at the trace's first frame (__schedule) is titled "INFO: task
    hung in corrupted", not after the dump's kf_waiter_update: the finding merged it as "same event as", but the
    Correlations section said "the dump's crash is the report at cut.log lines ...", as if it corroborated."""
    case = _need("04-hung-task")
    lines = case.console_log.read_text().splitlines(keepends=True)
    end = next(i for i, line in enumerate(lines) if line.endswith(" __schedule+0x370/0x3b7\n")) + 1
    log = tmp_path / "cut.log"
    log.write_text("".join(lines[:end]))
    story = _story(monkeypatch, capsys, tmp_path, case, log)
    [crash] = [f for f in story["incident"]["findings"] if f["kind"] == "crash"]
    assert crash["title"] == "INFO: task hung in kf_waiter_update"
    assert not [f for f in crash["facts"] if f["name"] == "corroborated by"]
    [same] = [f["value"] for f in crash["facts"] if f["name"] == "same event as"]
    assert same.startswith("INFO: task hung in corrupted (") and "it does not corroborate the function" in same
    [said] = [c["statement"] for c in story["correlations"] if c["rule"] == "same-crash"]
    assert said.startswith(f"the same report: {log} lines ") and "the dump's crash is the report" not in said
    assert said.endswith("not the function the dump's crash names (kf_waiter_update)")
    assert "corroborated" not in crash["confidence_reason"]
