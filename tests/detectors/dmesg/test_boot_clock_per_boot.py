"""A boot's wall-clock reading (its RTC line, its dated banner) dates that boot only; a banner starts a new clock.

The review of 2026-12-07 (ue16, finding 1) ran ``kforensic report --dmesg`` on two-boot console logs where only the
second boot prints "rtc_cmos 00:00: setting system clock to ...":
- boot 1's WARNING at [5000.000001], boot 2's at [100.000001]: the report said "First (2026-12-07 11:23:21 UTC
  ±1.0 s): WARNING in evict", boot 1's warning dated by boot 2's RTC, 83 min after boot 2 began, and left boot 2's
  own warning unconverted;
- boot 1's WARNING at [100.000001], boot 2's at [5000.000001] (times rising across the reboot): "for 81.7 min",
  an interval across the reboot, and ``kforensic dmesg``'s window [100.000001] – [5000.000001].
Now the reading holds for its own boot's lines (BootTime.holds_for), the incident's boot time is that of the boot of
the report told, or unknown with why, and a boot banner splits the timeline as a time going back does.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from detectors.incident.timeline import build_timeline
from forensics.model import BootTime, NotAvailable
from forensics.pipelines.dmesg import analyse_logs
from tests.detectors.dmesg.test_boot_clock import BANNER, RTC, WARNING
from tests.helpers import cli_run

#: The second boot's RTC reading (2026-12-07T10:00:03 UTC), two hours after RTC.
RTC2 = RTC + 7200
#: A second warning of another site, reached from another caller (its own finding).
OTHER = [line.replace("evict+0x41", "dput+0x41") for line in WARNING]


def _boot(at: float, report: list[str], rtc: int | None = None) -> list[str]:
    clock = [f"[    1.523311] rtc_cmos 00:00: setting system clock to 2026-12-07T10:00:03 UTC ({rtc})"] if rtc else []
    return [
        f"[    0.000000] {BANNER}",
        "[    0.000000] Command line: console=ttyS0",
        *clock,
        *(f"[{at + i / 1e6:12.6f}] {line}" for i, line in enumerate(report)),
    ]


def _log(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "console.log"
    path.write_text("\n".join(lines) + "\n")
    return path


def _report(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], log: Path) -> str:
    ran = cli_run(monkeypatch, capsys, "report", "--dmesg", log, "-f", "md")
    assert ran.returncode == 0, ran.stderr
    return ran.stdout


def test_a_reading_of_the_next_boot_does_not_date_the_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """tb/two3.log: boot 1 (no RTC line) warns at [5000], boot 2 (RTC at line 14) at [100]."""
    log = _log(tmp_path, [*_boot(5000.0, WARNING), *_boot(100.0, OTHER, RTC2)])
    incident = analyse_logs([str(log)], live=False).incident
    assert incident.sources[0].boot_lines == (1, 12)
    boot = incident.boot_time
    # The report told (WARNING in evict, line 4) is of boot 1, which the log does not date.
    assert isinstance(boot, NotAvailable), boot
    assert f"({log} line 14) is of another boot than that of WARNING in evict (line 4 of {log})" in boot.reason
    out = _report(monkeypatch, capsys, log)
    assert "First (5000.000 s since boot): WARNING in evict." in out
    assert f"| Boot time | not available: the log's boot clock reading ({log} line 14) is of another boot" in out
    # Boot 1's lane is since boot (no wall-clock time in it); boot 2's on a lane of its own, dated by its own reading
    # (it was after a clock jump row of boot 1's lane, undated).
    told = out.split("### Since boot\n", 1)[1].split("\n### ", 1)[0]
    assert "UTC" not in told and "| 5000.000001 s |  | instant | WARNING in evict |" in told, told
    lane = out.split(f"### Input {log} (its boot from line 12)\n", 1)[1].split("\n## ", 1)[0]
    assert "| 2026-12-07T10:01:41+00:00 ±1.0 s |  | instant | WARNING in corrupted |" in lane, lane
    assert (
        "Which of the two boots came first is unknown: the inputs of the boot this report tells do not date it" in out
    )
    # The same from a findings file: the told boot is read from its findings, boot 2's reading from its record.
    ran = cli_run(monkeypatch, capsys, "dmesg", log, "--format", "json")
    findings = tmp_path / "findings.json"
    findings.write_text(ran.stdout)
    again = cli_run(monkeypatch, capsys, "report", "--from", findings, "-f", "md")
    assert again.returncode == 0, again.stderr
    assert again.stdout.split("## Hypotheses")[0] == out.split("## Hypotheses")[0]


def test_a_reading_dates_its_own_boot_only(tmp_path: Path) -> None:
    """The same log with boot 2's report told: boot 2's times converted with its RTC, boot 1's left since boot."""
    log = _log(tmp_path, [*_boot(5000.0, OTHER), *_boot(100.0, WARNING, RTC2)])
    incident = analyse_logs([str(log)], live=False).incident
    boot = incident.boot_time
    assert isinstance(boot, BootTime), boot
    assert boot.wall == pytest.approx(RTC2 - 1.523311)
    assert boot.holds_for is not None and (boot.holds_for.first, boot.holds_for.end) == (12, None)
    assert "it dates the boot of lines 12 to the log's end only" in boot.basis
    events = build_timeline(incident.sorted_findings(), boot, {str(log): incident.sources[0].boot_lines})
    by_line = {e.cite.split(" line ")[1].split("-")[0]: e for e in events}
    assert by_line["4"].wall is None and by_line["4"].when.seconds == pytest.approx(5000.000001)
    assert by_line["16"].wall == pytest.approx(RTC2 - 1.523311 + 100.000001)
    assert by_line["16"].jump is not None and by_line["16"].jump.boot == 12


def test_a_boot_banner_splits_the_timeline_where_the_time_rises(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """tb/two2.log: boot 1 warns at [100], boot 2 (RTC) at [5000], the same title: no interval across the reboot."""
    log = _log(tmp_path, [*_boot(100.0, WARNING), *_boot(5000.0, WARNING, RTC2)])
    out = _report(monkeypatch, capsys, log)
    assert "First (100.000 s since boot): WARNING in evict." in out
    assert " min" not in out.split("## Hypotheses", 1)[0]  # no "for 81.7 min" across the reboot
    assert "a duration or order across lines 4-16: a new boot begins between them" in out
    ran = cli_run(monkeypatch, capsys, "dmesg", log, "--format", "json")
    window = json.loads(ran.stdout)["incident"]["window"]
    assert "a new boot of" in window["not_available"] and "at lines 4 and 16" in window["not_available"]


def test_a_findings_file_keeps_which_boot_a_reading_dates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``kforensic dmesg --format json`` then ``report --from``: the boots and the reading's scope are kept, so boot
    1's warning stays since boot and boot 2's is dated, as from the log itself."""
    log = _log(tmp_path, [*_boot(5000.0, OTHER), *_boot(100.0, WARNING, RTC2)])
    ran = cli_run(monkeypatch, capsys, "dmesg", log, "--format", "json")
    doc = json.loads(ran.stdout)["incident"]
    assert doc["sources"][0]["boot_lines"] == [1, 12]
    assert doc["boot_time"]["holds_for"] == {"source": str(log), "first_line": 12, "end_line": None}
    findings = tmp_path / "findings.json"
    findings.write_text(ran.stdout)
    again = cli_run(monkeypatch, capsys, "report", "--from", findings, "-f", "md")
    assert again.returncode == 0, again.stderr
    assert again.stdout.split("## Hypotheses")[0] == _report(monkeypatch, capsys, log).split("## Hypotheses")[0]
    # Boot 2's warning is the story, dated; boot 1's on a lane of its own, since its boot (it was "First (5000.000 s
    # since boot): WARNING in corrupted", then "on a new clock" boot 2's).
    assert "First (2026-12-07 10:01:41 UTC ±1.0 s): WARNING in evict." in again.stdout
    lane = again.stdout.split(f"### Input {log} (its boot from line 1)\n", 1)[1].split("\n## ", 1)[0]
    assert "| 5000.000001 s |  | instant | WARNING in corrupted |" in lane, lane


def test_a_secondary_cpus_zero_stamp_is_no_new_boot(tmp_path: Path) -> None:
    """A 0.000000 line just after [0.168492] (a CPU brought up before its clock was synchronised) was taken for a
    boot's start, the banner's boot cut at it: a journal export's boot time lost its banner's reading."""
    lines = _boot(100.0, WARNING, RTC2)
    lines[2:2] = [
        "[    0.168492] smpboot: x86: Booting SMP configuration:",
        "[    0.000000] calibrate_delay_direct() failed to get a good estimate for loops_per_jiffy.",
        "[    0.302066] smp: Brought up 1 node, 2 CPUs",
    ]
    incident = analyse_logs([str(_log(tmp_path, lines))], live=False).incident
    assert incident.sources[0].boot_lines == (1,)
    assert isinstance(incident.boot_time, BootTime) and incident.boot_time.holds_for is not None
    assert incident.boot_time.holds_for.first == 1


def test_a_reading_among_an_unexpected_reboots_lines_dates_its_boot(tmp_path: Path) -> None:
    """Boot 1 ends without a crash report (a UBSAN report), so boot 2's banner is an unexpected reboot, a report of the
    boot's first lines; its RTC line (line 17) was among them, never read: the boot time of boot 2's lockdep splat was
    "the log's boot clock reading (LOG line 3) is of another boot than that of possible deadlock in kf_dev_reset"."""
    from tests.detectors.incident.test_headline_follows_ranking import GOLDEN, UBSAN, _bodies

    lockdep = _bodies(GOLDEN / "lockdep_kasan_interleaved.log", 1, 24)
    first = _boot(20.0, UBSAN, RTC)
    log = _log(tmp_path, [*first, *_boot(40.0, lockdep, RTC2)])
    result = analyse_logs([str(log)], live=False)
    assert "unexpected kernel reboot" in {f.title for f in result.incident.findings}
    assert [line for line, _, _ in result.sources[0].boot_clocks] == [3, len(first) + 3]
    boot = result.incident.boot_time
    assert isinstance(boot, BootTime), boot
    assert boot.wall == pytest.approx(RTC2 - 1.523311)
    assert boot.holds_for is not None and boot.holds_for.first == len(first) + 1
