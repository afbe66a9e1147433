"""The report the incident is about (the verdict's main problem, the boot time's boot) is the one the best-ranked
hypothesis names, cited by its rank; a more severe report ranked below it is named, with why.

Chosen by severity, the verdict of a log with a UBSAN out-of-bounds index (medium, hypothesis 1 at 0.80) and a later
soft lockup (high, hypothesis 2 at 0.60) said "The finding: BUG: soft lockup in proc_reg_write (high)" above a ranking
that put the UBSAN report first; and the boot time was read in the soft lockup's boot.

The logs are made of the project's own lines: the golden logs' UBSAN and soft lockup reports, the lockdep splat of
lockdep_kasan_interleaved.log, and the 02-bug-on fixture's console log (its boot, its RTC line, its kernel BUG).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from forensics.model import BootTime
from forensics.pipelines.dmesg import analyse_logs
from tests.detectors.dmesg.test_boot_clock_per_boot import _log, _report

REPO = Path(__file__).resolve().parents[3]

GOLDEN = REPO / "tests/detectors/dmesg/golden"
CONSOLE = REPO / "vmcore_fixtures/cases/02-bug-on/console.log"
BANNER = "Linux version 6.1.0-13-amd64 (debian-kernel@lists.debian.org) #1 SMP PREEMPT_DYNAMIC Debian 6.1.55-1"


def _bodies(path: Path, first: int, last: int, prefix: str = r"^\[[^]]*\] ") -> list[str]:
    """Lines ``first`` to ``last`` (1-based) of a log, their time stamps or syslog prefixes cut."""
    return [re.sub(prefix, "", line) for line in path.read_text().splitlines()[first - 1 : last]]


def _timed(at: float, bodies: list[str]) -> list[str]:
    return [f"[{at + i / 1e6:12.6f}] {body}" for i, body in enumerate(bodies)]


#: The golden UBSAN report (medium; its cause read at 0.80) and soft lockup (high; its cause read at 0.60).
UBSAN = _bodies(GOLDEN / "alloc_failure_ubsan_dmesg_T.log", 16, 26)
SOFT_LOCKUP = [
    body.replace("6.1.0-kf", "6.1.0-13-amd64")
    for body in _bodies(GOLDEN / "soft_lockup_iso.log", 1, 12, r"^.* kernel: ")
]


def _verdict(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], log: Path) -> str:
    """The verdict's first sentence as ``report --dmesg LOG -f md`` writes it."""
    return _report(monkeypatch, capsys, log).splitlines()[2]


def test_the_main_problem_is_hypothesis_1s_not_the_most_severe_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _log(tmp_path, [f"[    0.000000] {BANNER}", *_timed(20.0, UBSAN), *_timed(50.0, SOFT_LOCKUP)])
    result = analyse_logs([str(log)], live=False)
    first, second = result.hypotheses[:2]
    assert first.statement.startswith("array-index-out-of-bounds in iwl_mvm_rx_mpdu_mq"), first
    assert second.statement.startswith("soft lockup: CPU 3"), second
    said = _verdict(monkeypatch, capsys, log)
    assert said.startswith(
        "The Linux kernel on the machine had a problem: the kernel reported an error. The finding: UBSAN: "
        "array-index-out-of-bounds in iwl_mvm_rx_mpdu_mq (medium). Hypothesis 1 of the ranking (confidence 0.80) "
        "names it. "
    ), said
    assert said.endswith(
        "The more severe BUG: soft lockup in proc_reg_write (high) is not the main problem: the hypotheses rank this "
        "cause above it (it is hypothesis 2, confidence 0.60)."
    ), said


def test_a_lockdep_splat_ranked_first_is_the_main_problem_of_the_bug_that_panicked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The brief's case: a lockdep splat, then a kernel BUG that panicked; the splat's cause is ranked first."""
    lockdep = _bodies(GOLDEN / "lockdep_kasan_interleaved.log", 1, 24)
    lines = CONSOLE.read_text().splitlines()
    log = _log(
        tmp_path,
        [
            *lines[:235],
            *_timed(2.1, lockdep),
            *lines[235:270],
            "[    2.216200] Kernel panic - not syncing: Fatal exception",
        ],
    )
    said = _verdict(monkeypatch, capsys, log)
    assert said.startswith(
        "The Linux kernel on the machine crashed (kernel BUG in kf_buffer_put). The main problem found: the lock "
        "checker (lockdep) found a locking bug. The finding: possible deadlock in kf_dev_reset. Hypothesis 1 of the "
        "ranking (confidence 0.80) names it."
    ), said
    # The BUG is the crash the sentence names as what happened: not said again as "not the main problem".
    assert "is not the main problem" not in said, said


def test_the_boot_time_is_of_the_boot_of_hypothesis_1s_report(tmp_path: Path) -> None:
    """Two boots (the fixture's first 200 boot lines each), each dated by its RTC line: the UBSAN report ranked first
    is in the first; the soft lockup, more severe, in the second.  The boot time dated the soft lockup's boot (by
    severity); it dates the UBSAN's now, the verdict's main problem."""
    rtc = 1796630403  # 2026-12-07T08:00:03 UTC
    boot_lines = CONSOLE.read_text().splitlines()[1:200]

    def boot(clock: int, at: float, report: list[str]) -> list[str]:
        return [
            f"[    0.000000] {BANNER}",
            *boot_lines,
            f"[    1.500000] rtc_cmos 00:00: setting system clock to 2026-12-07T08:00:03 UTC ({clock})",
            *_timed(at, report),
        ]

    first = boot(rtc, 20.0, UBSAN)
    log = _log(tmp_path, [*first, *boot(rtc + 7200, 50.0, SOFT_LOCKUP)])
    boot_time = analyse_logs([str(log)], live=False).incident.boot_time
    assert isinstance(boot_time, BootTime), boot_time
    assert boot_time.wall == pytest.approx(rtc - 1.5)
    assert boot_time.holds_for is not None
    assert (boot_time.holds_for.first, boot_time.holds_for.end) == (1, len(first) + 1)
