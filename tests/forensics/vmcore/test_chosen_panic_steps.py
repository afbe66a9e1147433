"""The next steps of a panic the kernel chose (hung_task_panic, panic_on_oom) fit a post-mortem: they read what the
kernel's detector saw in the dump, not the code of the detector that called panic() (khungtaskd's watchdog,
out_of_memory), never a live machine's command, never "the guilty function's recent changes"."""

from __future__ import annotations

import pytest

from detectors.dmesg.findings import group_finding, group_reports
from detectors.dmesg.scanner import scan_chunks
from forensics.model import Finding
from tests.vmcore_cases import analysed_id, kernels_of, load_case

drgn = pytest.importorskip("drgn")

#: What does not fit: a live machine's command, the panic caller's code, a bug hunt in the detector.
UNFIT = ("sysrq-trigger", "dis -rl", "recent changes")


def _unfit(findings: list[Finding]) -> list[str]:
    return [s for f in findings for s in f.next_steps if any(word in s for word in UNFIT)]


@pytest.mark.parametrize("kernel", kernels_of("04-hung-task"))
def test_a_hung_task_panic_is_followed_up_in_the_blocked_tasks(kernel: str) -> None:
    """04: the steps were ``crash> bt; crash> dis -rl 0x...`` (watchdog+0x2f7, khungtaskd's) and ``echo w >
    /proc/sysrq-trigger``."""
    _case, result = analysed_id("04-hung-task", kernel)
    crash = next(f for f in result.incident.findings if f.kind == "crash")
    assert _unfit(list(result.incident.findings)) == []
    if kernel != "6.12":  # crash opens the dump: crash's commands (6.12's are drgn's, test_followup_runs.py)
        assert crash.next_steps[0] == "crash> foreach UN bt; crash> bt 43; crash> ps -m"


@pytest.mark.parametrize("kernel", kernels_of("11-abba-deadlock"))
def test_every_hung_report_of_a_dump_is_followed_up_in_the_dump(kernel: str) -> None:
    """11: kf_config's report did not panic (kf_stats' did): its step asked the dead machine for sysrq-w."""
    _case, result = analysed_id("11-abba-deadlock", kernel)
    assert _unfit(list(result.incident.findings)) == []


@pytest.mark.parametrize("kernel", kernels_of("09-oom"))
def test_a_panic_on_oom_is_followed_up_in_the_memory_use(kernel: str) -> None:
    """09 (panic_on_oom): the steps were ``crash> bt; crash> dis -rl`` of out_of_memory and "check the guilty
    function's recent changes"."""
    _case, result = analysed_id("09-oom", kernel)
    crash = next(f for f in result.incident.findings if f.kind == "crash")
    assert _unfit(list(result.incident.findings)) == []
    if kernel != "6.12":
        assert crash.next_steps[0] == "crash> kmem -i; crash> ps -G"


@pytest.mark.parametrize("name", ["04-hung-task", "09-oom"])
def test_the_console_of_a_chosen_panic_names_no_live_command(name: str) -> None:
    """`kforensic dmesg` of the console: the report the kernel panicked on says to read the dump."""
    case = load_case(name)
    data = case.console_log.read_bytes()
    findings = [group_finding(str(case.console_log), g) for g in group_reports(scan_chunks([data]))]
    critical = next(f for f in findings if f.severity.value == "critical")
    assert _unfit(findings) == []
    assert "read its dump" in critical.next_steps[0]


def test_a_hung_report_the_machine_went_down_after_names_no_live_command() -> None:
    """11's console: khungtaskd reported kf_config (line 247), then kf_stats, and panicked on that one; kf_config's
    finding asked the dead machine for ``echo w > /proc/sysrq-trigger``."""
    from forensics.pipelines.dmesg import analyse_logs

    case = load_case("11-abba-deadlock")
    findings = list(analyse_logs([str(case.console_log)], live=False).incident.findings)
    hung = [f for f in findings if f.title.startswith("INFO: task hung")]
    assert len(hung) == 2 and _unfit(findings) == []
