"""The fixture kernel's real console logs (vmcore_fixtures/cases/*/console.log) through the engine.

Each case's expected.json names the crash ("title", "type") and, when there is
one, the function at fault ("culprit_function").  The console title is checked
against ``dmesg_title`` when the case gives one, else the culprit function must
be the guilty frame of the first report.  A slab leak without kmemleak prints
nothing on the console but the final sysrq crash, so only that crash is
required there.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from detectors.dmesg.findings import group_finding, group_reports
from detectors.dmesg.scanner import scan_chunks
from tests.helpers import assert_evidence_resolves

try:
    from tests.vmcore_cases import console_logs
except ImportError:  # the fixtures helper has not landed yet
    console_logs = None

_NOT_ON_CONSOLE = {"slab_leak"}  # bugs the console log cannot name (no kmemleak in the fixture kernel)


def _logs() -> list[Path]:
    return console_logs() if console_logs is not None else []


@pytest.mark.parametrize("log", _logs() or [None], ids=lambda p: p.parent.name if p else "absent")
def test_fixture_console_log_is_triaged(log: Path | None) -> None:
    if log is None:
        pytest.skip("no fixture console logs: vmcore_fixtures/MANIFEST.json is absent (run vmcore_fixtures/build.sh)")
    expected_file = log.parent / "expected.json"
    if not expected_file.is_file():
        pytest.skip(f"{expected_file} is absent: the case has no ground truth yet")
    expected = json.loads(expected_file.read_text())
    reports = [r for r in scan_chunks([log.read_bytes()]) if not r.is_event]
    assert reports, f"{log}: no kernel report found"
    first = reports[0]
    if "dmesg_title" in expected:
        assert first.title == expected["dmesg_title"]
    elif expected.get("culprit_function") and expected.get("type") not in _NOT_ON_CONSOLE:
        assert first.frame == expected["culprit_function"], first.title
    else:  # nothing before the panic names the bug on the console: the first report is the panic itself
        assert (first.kind, first.panicked) == ("panic", True), first.title
        assert first.title == "kernel panic: " + str(expected["panic_message"]).removeprefix(
            "Kernel panic - not syncing: "
        )
    assert_evidence_resolves([group_finding(str(log), g) for g in group_reports(reports)])


@pytest.mark.parametrize("log", _logs() or [None], ids=lambda p: p.parent.name if p else "absent")
def test_kdump_dmesg_gives_the_console_title(log: Path | None) -> None:
    """The log kdump extracted from the dump (dmesg.txt) and the serial console name the same crash."""
    if log is None:
        pytest.skip("no fixture console logs: vmcore_fixtures/MANIFEST.json is absent (run vmcore_fixtures/build.sh)")
    dumped = log.parent / "dmesg.txt"
    if not dumped.is_file():
        pytest.skip(f"{dumped} is absent")
    console = [r for r in scan_chunks([log.read_bytes()]) if not r.is_event]
    from_dump = [r for r in scan_chunks([dumped.read_bytes()]) if not r.is_event]
    assert from_dump, f"{dumped}: no kernel report found"
    assert from_dump[0].title == console[0].title
    assert from_dump[0].frame == console[0].frame


@pytest.mark.parametrize("log", _logs() or [None], ids=lambda p: p.parent.name if p else "absent")
def test_fixture_console_comm_is_the_task_name(log: Path | None) -> None:
    """``Comm: sh Kdump: loaded Tainted: ...``: the comm is ``sh``, not ``sh Kdump: loaded`` (issue 19)."""
    if log is None:
        pytest.skip("no fixture console logs: vmcore_fixtures/MANIFEST.json is absent (run vmcore_fixtures/build.sh)")
    expected = json.loads((log.parent / "expected.json").read_text())
    reports = [r for r in scan_chunks([log.read_bytes()]) if not r.is_event]
    comms = {r.comm for r in reports if isinstance(r.comm, str)}
    assert comms, f"{log}: no report names its task"
    if expected.get("type") == "hung_task":
        # A hung task's report is the blocked task's (kf_waiter; kf_config and kf_stats), not that of khungtaskd,
        # the crashing task that prints it and panics (test_a_hung_task_is_the_task_its_header_names).
        blocked = [expected["lock"]["waiter_comm"]] if "lock" in expected else list(expected["why"]["tasks"])
        assert comms == set(blocked), comms
    else:
        assert expected["task_comm"] in comms
    assert not any("Kdump" in c for c in comms), comms


def _hung_task_logs() -> list[object]:
    """Every fixture kernel's hung-task logs: the serial console's and the one kdump read from the dump."""
    if console_logs is None:
        return [None]
    from tests.vmcore_cases import kernels

    found = [(k, log) for k in kernels() for log in console_logs(k) if log.parent.name == "04-hung-task"]
    logs = [*found, *((k, log.parent / "dmesg.txt") for k, log in found if (log.parent / "dmesg.txt").is_file())]
    return [pytest.param(log, id=f"{k}-{log.name}") for k, log in logs] or [None]


@pytest.mark.parametrize("log", _hung_task_logs())
def test_a_hung_task_is_the_task_its_header_names(log: Path | None) -> None:
    """A hung task's header ("INFO: task kf_waiter:53 blocked for more than 5 seconds.") names the report's task,
    which sleeps, on no CPU.

    The report's only "CPU: 0 PID: 25 Comm: khungtaskd" line is the panic's that follows it: khungtaskd's, which
    found the blocked task; its facts, cited lines and Code: are not the blocked task's.
    """
    if log is None:
        pytest.skip("no fixture console logs: vmcore_fixtures/MANIFEST.json is absent (run vmcore_fixtures/build.sh)")
    from forensics.model import NotAvailable

    expected = json.loads((log.parent / "expected.json").read_text())
    text = log.read_text()
    header = next(line for line in text.splitlines() if f"INFO: task {expected['lock']['waiter_comm']}:" in line)
    pid = int(header.split(" blocked ")[0].rsplit(":", 1)[1])
    hung = next(r for r in scan_chunks([log.read_bytes()]) if r.rule == "hung-task")
    assert (hung.comm, hung.pid) == (expected["lock"]["waiter_comm"], pid)
    assert isinstance(hung.cpu, NotAvailable), hung.cpu
    assert "khungtaskd" in text  # (the line the report's facts were taken from before)
    [finding] = [group_finding(str(log), g) for g in group_reports([hung])]
    facts = {f.name: f.value for f in finding.facts}
    assert (facts.get("comm"), facts.get("pid"), facts.get("cpu")) == (hung.comm, str(pid), None)
    assert all(e.cpu is None for e in finding.evidence), [(e.locator, e.cpu) for e in finding.evidence]


@pytest.mark.parametrize("log", _logs() or [None], ids=lambda p: p.parent.name if p else "absent")
def test_a_panic_a_setting_asked_for_is_no_kernel_bug_hypothesis(log: Path | None) -> None:
    """09-oom panics by vm.panic_on_oom=1: its cause is the memory hog, as kforensic vmcore ranks it."""
    if log is None:
        pytest.skip("no fixture console logs: vmcore_fixtures/MANIFEST.json is absent (run vmcore_fixtures/build.sh)")
    from forensics.pipelines.dmesg import analyse_logs

    result = analyse_logs([str(log)], live=False)
    statements = [h.statement for h in result.hypotheses]
    assert not [s for s in statements if s.startswith("a kernel bug reported as kernel panic: ")], statements
    if log.parent.name == "09-oom":
        assert statements[0].startswith("memory exhausted by task kf_memhog "), statements


def test_another_cpus_nmi_backtrace_is_not_the_hung_tasks() -> None:
    """khungtaskd with hung_task_all_cpu_backtrace=1 has the other CPUs dump their stacks after the hung task's:
    "NMI backtrace for cpu 1", that CPU's "CPU: 1 PID: 41 Comm: kf_spinner", its RIP, Code: and call trace.  They are
    where CPU 1 was, with another task: the report's task stays kf_waiter on no CPU, its Code: is not decoded as the
    blocked task's, and CPU 1's stack is cited as CPU 1's.

    The log: the fixture kernel's hung-task report (04) with the spinning CPU's dump of its soft lockup (05) as the
    NMI backtrace, before the hung-task panic, as the kernel prints them.
    """
    from detectors.dmesg.why import explain
    from forensics.model import NotAvailable
    from forensics.types.dmesg import StackKind
    from tests.vmcore_cases import payload_dir

    cases = payload_dir() / "cases"
    hung, spin = (cases / name / "console.log" for name in ("04-hung-task", "05-soft-lockup"))
    if not hung.is_file() or not spin.is_file():
        pytest.skip("no fixture console logs: vmcore_fixtures/MANIFEST.json is absent (run vmcore_fixtures/build.sh)")
    lines = hung.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if "INFO: task kf_waiter:" in line)
    panic = next(i for i in range(start, len(lines)) if "Kernel panic - not syncing: hung_task" in lines[i])
    end = next(i for i in range(panic, len(lines)) if "</TASK>" in lines[i]) + 1
    other = spin.read_text().splitlines()
    cpu1 = next(i for i, line in enumerate(other) if "CPU: 1 PID: 41 Comm: kf_spinner" in line)
    cpu1_end = next(i for i in range(cpu1, len(other)) if "</TASK>" in other[i]) + 1
    stamp = lines[panic].split("]")[0] + "]"
    log = [
        *lines[start:panic],
        f"{stamp} Sending NMI from CPU 0 to CPUs 1:",
        f"{stamp} NMI backtrace for cpu 1",
        *other[cpu1:cpu1_end],
        *lines[panic:end],
    ]
    [report] = [r for r in scan_chunks([("\n".join(log) + "\n").encode()]) if not r.is_event]
    assert report.title == "INFO: task hung in kf_waiter_update"
    assert (report.comm, report.pid) == ("kf_waiter", 43)
    assert isinstance(report.cpu, NotAvailable)
    why = explain(report)
    assert why.code is None  # CPU 1's Code: line (kf_poll_ready's pause loop) is not the sleeping task's
    traces = [(s.cpu, s.first_foreign.function if s.first_foreign else None)
              for s in why.stacks if s.kind is StackKind.CALL_TRACE]  # fmt: skip
    assert traces == [(None, "kf_waiter_update"), (1, "kf_spinner_fn"), (0, "watchdog")], traces
    assert {f.name: f.value for f in why.facts}["waits for"] == "a mutex"


def test_a_stack_the_dump_printed_for_another_pid_is_no_missing_frames() -> None:
    """A 4.4 Android/ChromeOS kernel's show_state() prints a stack it printed for another task once: the next
    task's "Call Trace:" is followed by "<Same stack as pid 43>", not frames.  That is a stack given, not a call
    trace the console lost: the report is not corrupted (syzkaller's log 254 was called "corrupted: no frames in a
    call trace" for four such tasks while its blocked task's own trace had 39 frame lines).

    The log: the fixture kernel's hung-task report with a second kf_waiter in the 4.4 show_state() form, where the
    log ends (a kernel without hung_task_panic goes on; the next check is minutes later).
    """
    from tests.vmcore_cases import payload_dir

    hung = payload_dir() / "cases" / "04-hung-task" / "console.log"
    if not hung.is_file():
        pytest.skip("no fixture console logs: vmcore_fixtures/MANIFEST.json is absent (run vmcore_fixtures/build.sh)")
    lines = hung.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if "INFO: task kf_waiter:" in line)
    panic = next(i for i in range(start, len(lines)) if "Kernel panic - not syncing: hung_task" in lines[i])
    stamp = lines[panic].split("]")[0] + "]"
    same = [
        f"{stamp} kf_waiter       D ffff88008addf688     0    44      2 0x00000000",
        f"{stamp}  ffff88008addf688 ffff88008add0000 dffffc0000000000 0000000000000007",
        f"{stamp} Call Trace:",
        f"{stamp} <Same stack as pid 43>",
    ]
    log = [*lines[start:panic], *same]
    [report] = [r for r in scan_chunks([("\n".join(log) + "\n").encode()]) if not r.is_event]
    assert report.title == "INFO: task hung in kf_waiter_update"
    assert (report.corrupted, report.corrupted_reason) == (False, None)


def _fixture_logs() -> list[object]:
    """Every fixture kernel's logs of every case: the serial console's and the one kdump read from the dump."""
    if console_logs is None:
        return [None]
    from tests.vmcore_cases import kernels

    found = [(k, log) for k in kernels() for log in console_logs(k)]
    logs = [*found, *((k, log.parent / "dmesg.txt") for k, log in found if (log.parent / "dmesg.txt").is_file())]
    return [pytest.param(log, id=f"{k}-{log.parent.name}-{log.name}") for k, log in logs] or [None]


@pytest.mark.parametrize("log", _fixture_logs())
def test_the_guilty_frame_is_cited_by_a_reliable_frame_line(log: Path | None) -> None:
    """The guilty frame's evidence is a line the unwinder confirmed (or the RIP line), never a "? f+0x20/0x20" one
    above it: the 6.12 hung-task log's "? kf_waiter_update+0x20/0x20 [kf_buggy]" (a stack word: 0x20 of a 0x20
    function is the next one's entry) was cited, one line above "kf_waiter_update+0xc/0x20 [kf_buggy]"."""
    if log is None:
        pytest.skip("no fixture console logs: vmcore_fixtures/MANIFEST.json is absent (run vmcore_fixtures/build.sh)")
    from detectors.dmesg.frames import parse_frame
    from detectors.dmesg.lines import parse_line

    reports = [r for r in scan_chunks([log.read_bytes()]) if not r.is_event]
    for group in group_reports(reports):
        report, finding = group.first, group_finding(str(log), group)
        cited = [e for e in finding.evidence if e.locator.name == "guilty frame"]
        if not isinstance(report.frame, str) or not cited:
            continue
        frames = [parse_frame(parse_line(n, t).body) for n, t in report.lines]
        if not any(f is not None and f.reliable and f.function == report.frame for f in frames):
            continue  # (the frame is the RIP's, or the report names it otherwise)
        [evidence] = cited
        line = parse_frame(parse_line(evidence.locator.start, evidence.excerpt).body)
        assert line is None or line.reliable, (report.title, evidence.locator.start, evidence.excerpt)


def test_a_hung_tasks_wait_is_cited_by_its_reliable_frame() -> None:
    """The 6.12 hung-task log: the guilty frame and "waits in" cite line 272 "kf_waiter_update+0xc/0x20", where
    kf_waiter sleeps, not line 271's "? kf_waiter_update+0x20/0x20" (which `kforensic vmcore` cited too)."""
    from detectors.dmesg.findings import explain_reports
    from tests.vmcore_cases import payload_dir

    log = payload_dir("6.12") / "cases" / "04-hung-task" / "dmesg.txt"
    if not log.is_file():
        pytest.skip(f"{log} is absent (run vmcore_fixtures/build.sh)")
    [report] = [r for r in scan_chunks([log.read_bytes()]) if not r.is_event]
    [finding] = [group_finding(str(log), g) for g in group_reports([report])]
    [guilty] = [e for e in finding.evidence if e.locator.name == "guilty frame"]
    assert guilty.excerpt.split("]", 1)[1].strip() == "kf_waiter_update+0xc/0x20 [kf_buggy]"
    why = explain_reports([report])[report.start_line]
    [waits_in] = [f for f in why.facts if f.name == "waits in"]
    assert (waits_in.value, report.start_line + waits_in.at) == ("kf_waiter_update", guilty.locator.start)
