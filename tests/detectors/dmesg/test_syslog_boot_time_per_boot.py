"""The boot time a log's syslog-dated lines give (wall time less printk time) is of their own boot only.

A kern.log of two boots two hours apart (rsyslog's ISO prefixes over printk times), the soft lockup of the second
the report told: the estimates of both boots were pooled, so the boot time was "the logs' wall and printk times
disagree by more than a minute (several boots?)"; with the second boot's lines undated (a console capture), the first
boot's estimate was the incident's boot time, for every line (no scope), 2 h before the boot it was said of.

The reports are the golden logs' (warning_syslog.log's WARNING, soft_lockup_iso.log's soft lockup).
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from forensics.model import BootScope, BootTime, NotAvailable
from forensics.pipelines.dmesg import analyse_logs
from tests.detectors.dmesg.test_boot_clock_per_boot import _log, _report

GOLDEN = Path(__file__).parent / "golden"
WARNING = [
    re.sub(r"^.* kernel: \[[^]]*\] ", "", line) for line in (GOLDEN / "warning_syslog.log").read_text().splitlines()[1:]
]
SOFT_LOCKUP = [line.split("kernel: ", 1)[1] for line in (GOLDEN / "soft_lockup_iso.log").read_text().splitlines()[:12]]
BOOT1 = dt.datetime(2026, 12, 7, 8, 0, 3, tzinfo=dt.UTC)
BOOT2 = BOOT1 + dt.timedelta(hours=2)


def _boot(began: dt.datetime, at: float, report: list[str], dated: bool = True) -> list[str]:
    """One boot's lines from its first (printk time 0, no banner), the report ``at`` seconds since boot; ``dated``:
    each line with rsyslog's ISO prefix, the boot's start plus its printk time."""
    lines = [
        (0.0, "Command line: BOOT_IMAGE=/vmlinuz root=/dev/sda1"),
        *((at + i / 1e6, b) for i, b in enumerate(report)),
    ]
    return [
        ((began + dt.timedelta(seconds=t)).strftime("%Y-%m-%dT%H:%M:%S+0000 web-03 kernel: ") if dated else "")
        + f"[{t:12.6f}] {body}"
        for t, body in lines
    ]


def test_each_boot_is_dated_by_its_own_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _boot(BOOT1, 100.0, WARNING)
    log = _log(tmp_path, [*first, *_boot(BOOT2, 50.0, SOFT_LOCKUP)])
    incident = analyse_logs([str(log)], live=False).incident
    assert incident.sources[0].boot_lines == (1, len(first) + 1)
    boot = incident.boot_time
    assert isinstance(boot, BootTime), boot
    assert boot.wall == pytest.approx(BOOT2.timestamp(), abs=1.0)
    assert boot.holds_for is not None and (boot.holds_for.first, boot.holds_for.end) == (len(first) + 1, None)
    assert f"kernel log: wall time minus the printk time (1 report(s), from {log} line {len(first) + 2})" in boot.basis
    # Each boot's own lines date it, in the log's record (a findings file carries them).
    first_boot, second_boot = incident.sources[0].boot_times
    assert first_boot.holds_for == BootScope(str(log), 1, len(first) + 1), first_boot
    assert first_boot.wall == pytest.approx(BOOT1.timestamp(), abs=1.0), first_boot
    assert second_boot.holds_for == BootScope(str(log), len(first) + 1, None), second_boot
    assert second_boot.wall == pytest.approx(BOOT2.timestamp(), abs=1.0), second_boot
    out = _report(monkeypatch, capsys, log)
    # The soft lockup is the story, on its boot's wall clock; the first boot's WARNING on a lane of its own, on its own
    # boot's wall clock (it was "First (100.000 s since boot)", then "on a new clock" the soft lockup).
    assert "First (2026-12-07 10:00:53 UTC ±1.0 s, stuck for 26 s when reported): BUG: soft lockup in " in out
    lane = out.split(f"### Input {log} (its boot from line 1)\n", 1)[1].split("\n## ", 1)[0]
    assert "| 2026-12-07T08:01:43+00:00 ±1.0 s |  | instant | WARNING in e1000e_update_stats |" in lane, lane
    assert "Its boot began 7200 s before that of the boot this report tells (" in out and "clock jump" not in out


def test_a_boot_without_dated_lines_is_not_dated_by_another(tmp_path: Path) -> None:
    first = _boot(BOOT1, 100.0, WARNING)
    log = _log(tmp_path, [*first, *_boot(BOOT2, 50.0, SOFT_LOCKUP, dated=False)])
    boot = analyse_logs([str(log)], live=False).incident.boot_time
    assert isinstance(boot, NotAvailable), boot
    assert boot.reason == (
        f"the log's syslog-dated lines ({log} line 3, wall time less printk time) are of another boot than that of "
        f"BUG: soft lockup in proc_reg_write (line {len(first) + 2} of {log}), whose start the log does not date"
    )
