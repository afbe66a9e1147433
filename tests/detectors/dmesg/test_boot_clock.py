"""The boot's wall-clock time where a log gives it: the RTC's time the kernel set its clock to, a dated boot banner.

A console log of printk times only, with "rtc_cmos 00:00: setting system clock to 2026-12-07T08:00:03 UTC
(1796630403)" at [1.523311] (drivers/rtc/class.c), and a journal's "2026-12-07T08:00:01+0000 web-03 kernel: Linux
version ..." both said "Boot time: not available: no input records when the kernel booted"; now the boot time is
read from them (the line cited), and unknown with why where the log's boots disagree or the zone is not known.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from forensics.model import BootTime, NotAvailable
from forensics.pipelines.dmesg import analyse_logs
from tests.helpers import cli_run

BANNER = "Linux version 6.6.30 (builder@host) (gcc 12) #1 SMP PREEMPT_DYNAMIC"
WARNING = [
    "------------[ cut here ]------------",
    "WARNING: CPU: 1 PID: 23 at fs/inode.c:100 iput+0x3c1/0x4f0",
    "CPU: 1 PID: 23 Comm: kworker/1:1 Not tainted 6.6.30 #1",
    "RIP: 0010:iput+0x3c1/0x4f0",
    "Call Trace:",
    " <TASK>",
    " evict+0x41/0x50",
    " </TASK>",
    "---[ end trace 0000000000000000 ]---",
]
RTC = 1796630403  # 2026-12-07T08:00:03 UTC


def _boot(rtc: int, at: float = 1.523311) -> list[str]:
    return [
        f"[    0.000000] {BANNER}",
        "[    0.000000] Command line: console=ttyS0",
        f"[{at:12.6f}] rtc_cmos 00:00: setting system clock to 2026-12-07T08:00:03 UTC ({rtc})",
        *(f"[  500.{i:06d}] {line}" for i, line in enumerate(WARNING)),
    ]


def _boot_time(tmp_path: Path, lines: list[str]) -> BootTime | NotAvailable:
    path = tmp_path / "console.log"
    path.write_text("\n".join(lines) + "\n")
    return analyse_logs([str(path)], live=False).incident.boot_time


def test_the_rtc_reading_gives_the_boot_time(tmp_path: Path) -> None:
    boot = _boot_time(tmp_path, _boot(RTC))
    assert isinstance(boot, BootTime), boot
    assert boot.wall == pytest.approx(RTC - 1.523311)
    assert boot.uncertainty == 1.0  # the RTC's whole seconds
    assert "console.log line 3: the RTC's time the kernel set its clock to" in boot.basis


def test_a_journal_banner_gives_the_boot_time(tmp_path: Path) -> None:
    prefix = "2026-12-07T08:00:01+0000 web-03 kernel: "
    later = "2026-12-07T08:08:21+0000 web-03 kernel: "
    boot = _boot_time(tmp_path, [prefix + BANNER, *(later + line for line in WARNING)])
    assert isinstance(boot, BootTime), boot
    assert boot.wall == RTC - 2
    assert "console.log line 1: the boot banner's dated time" in boot.basis


def test_boots_that_began_apart_leave_it_unknown_with_why(tmp_path: Path) -> None:
    boot = _boot_time(tmp_path, [*_boot(RTC), *_boot(RTC + 3600)])
    assert isinstance(boot, NotAvailable)
    assert "the log's boots began at different times (" in boot.reason and "console.log line 3: " in boot.reason


def test_a_banner_of_a_zone_not_known_is_not_read(tmp_path: Path) -> None:
    """dmesg -T's local time names no zone: no UTC boot time is made of it."""
    boot = _boot_time(tmp_path, [f"[Mon Dec  7 08:00:01 2026] {x}" for x in (BANNER, *WARNING)])
    assert isinstance(boot, NotAvailable)
    assert "nor the RTC's time the kernel set its clock to at boot" in boot.reason


def test_the_report_header_shows_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "console.log"
    log.write_text("\n".join(_boot(RTC)) + "\n")
    ran = cli_run(monkeypatch, capsys, "report", "--dmesg", log, "-f", "md")
    assert ran.returncode == 0, ran.stderr
    assert f"| Boot time | 2026-12-07T08:00:01+00:00 ±1.0 s ({log} line 3: the RTC's time" in ran.stdout
    assert "First (2026-12-07 08:08:21 UTC ±1.0 s): WARNING in evict." in ran.stdout
