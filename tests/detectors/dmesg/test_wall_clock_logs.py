"""A log stamped with dated wall-clock times only is timed on the wall clock, not "the log has no timestamps".

A reviewer rewrote the 6.12 use-after-free fixture's log to ``journalctl -k -o short-iso``'s prefix (documented in
docs/dmesg.md), to rsyslog's RFC 3339 kern.log and to ``dmesg -T``: the report's time was "-", its JSON
``start_time`` "the log has no timestamps", the window "no report has a timestamp", although every line carries a
dated time to the second.  ``report`` beside a store recorded on another host then told that store's two info
findings as the verdict's "First ... Then ..." and put the crash on no timeline.  The logs here are the fixture's,
rewritten the same way: the boot at 15:15:11 UTC, its printk time added to each line.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Final

import pytest

ROOT = Path(__file__).resolve().parents[3]
LOG = ROOT / "vmcore_fixtures/kernels/6.12/cases/10-use-after-free/dmesg.txt"
BOOT = dt.datetime(2026, 12, 3, 15, 15, 11, tzinfo=dt.UTC)
KFORENSIC = [sys.executable, "-m", "forensics"]
_STAMP = re.compile(r"^\[\s*(\d+\.\d+)\] ?")


def _iso(when: dt.datetime, body: str) -> str:
    return f"{when.strftime('%Y-%m-%dT%H:%M:%S')}+0000 web01 kernel: {body}"


def _rfc3339(when: dt.datetime, body: str) -> str:
    return f"{when.isoformat(timespec='microseconds')} web01 kernel: {body}"


def _iso_space(when: dt.datetime, body: str) -> str:
    # rsyslog and journald exports with a space between the date and the time: it was read up to the space, midnight.
    return f"{when.strftime('%Y-%m-%d %H:%M:%S')} web01 kernel: {body}"


def _rfc3339_space(when: dt.datetime, body: str) -> str:
    return f"{when.isoformat(sep=' ', timespec='microseconds')} web01 kernel: {body}"


def _ctime(when: dt.datetime, body: str) -> str:
    # dmesg -T prints local time; the test runs with TZ=UTC (see _run).
    return f"[{when.strftime('%a %b %e %H:%M:%S %Y')}] {body}"


#: The forms whose stamps name no zone.
_ZONE_UNKNOWN: Final = ("dmesg -T", "short-iso, space")
FORMS: dict[str, Callable[[dt.datetime, str], str]] = {
    "short-iso": _iso,
    "rfc3339": _rfc3339,
    "short-iso, space": _iso_space,
    "rfc3339, space": _rfc3339_space,
    "dmesg -T": _ctime,
}


def _rewrite(form: str, lines: list[str], step_back_at: int | None = None) -> str:
    """The log's lines with their printk time replaced by the wall-clock prefix of ``form`` (boot + printk time);
    from line ``step_back_at`` on, the clock is an hour behind (an NTP step back)."""
    out = []
    seconds = 0.0
    for number, line in enumerate(lines, 1):
        m = _STAMP.match(line)
        if m is not None:
            seconds = float(m.group(1))
        when = BOOT + dt.timedelta(seconds=int(seconds))
        if step_back_at is not None and number >= step_back_at:
            when -= dt.timedelta(hours=1)
        out.append(FORMS[form](when, line[m.end() :] if m else line))
    return "\n".join(out) + "\n"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {"TZ": "UTC", "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [*KFORENSIC, *args], capture_output=True, text=True, timeout=120, check=False, cwd=ROOT, env=env
    )


@pytest.fixture
def lines() -> list[str]:
    if not LOG.is_file():
        pytest.skip("no fixture log")
    return LOG.read_text().splitlines()


#: One worker runs the module's tests (tests/conftest.py: --dist loadgroup), so that they share :func:`dmesg_json`.
pytestmark = pytest.mark.xdist_group("wall-clock-logs")
JsonOf = Callable[[str | None], subprocess.CompletedProcess[str]]


@pytest.fixture(scope="module")
def dmesg_json(tmp_path_factory: pytest.TempPathFactory) -> JsonOf:
    """``kforensic dmesg --format json kern.log`` of the fixture's log (``None``) or of its rewrite to a form, each
    run once for the module's tests, which only read it: five tests ran a command line another had run."""
    done: dict[str | None, subprocess.CompletedProcess[str]] = {}

    def run(form: str | None) -> subprocess.CompletedProcess[str]:
        if form not in done:
            path = LOG
            if form is not None:
                path = tmp_path_factory.mktemp("wall") / "kern.log"
                path.write_text(_rewrite(form, LOG.read_text().splitlines()))
            done[form] = _run("dmesg", "--format", "json", str(path))
        return done[form]

    return run


@pytest.mark.parametrize("form", list(FORMS))
def test_a_wall_clock_log_times_its_reports_on_the_wall_clock(
    tmp_path: Path, lines: list[str], form: str, dmesg_json: JsonOf
) -> None:
    path = tmp_path / "kern.log"
    path.write_text(_rewrite(form, lines))
    done = dmesg_json(form)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    (report,) = doc["sources"][0]["reports"]
    assert report["title"] == "general protection fault in kf_conn_send"
    crash = (BOOT + dt.timedelta(seconds=11)).timestamp()  # the Oops at [11.469644]
    assert report["start_wall"] == crash
    assert report["start_time"] == {
        "not_available": "the log's lines carry wall-clock times only (start_wall), no time since boot"
    }
    # dmesg -T's local time and an ISO stamp without an offset name no zone: the time as printed, said to be of a
    # zone not known, never "+00:00"; in JSON marked so (the epoch figure is the local time read as if UTC).
    local = form in _ZONE_UNKNOWN
    assert report["start_wall_zone_unknown"] is local
    window = {"seconds": crash, "clock": "wall", **({"zone_unknown": True} if local else {})}
    assert doc["incident"]["window"]["start"] == window
    text = _run("dmesg", str(path)).stdout
    when = "2026-12-03T15:15:22 (local time, zone unknown)" if local else "2026-12-03T15:15:22+00:00"
    assert f"{when}  critical  general protection fault in kf_conn_send" in text, text
    assert f"window {when} – " in text, text
    assert "window not available" not in text
    if local:
        assert "+00:00" not in text, text


def test_the_printk_time_of_the_same_log_is_still_its_time(lines: list[str], dmesg_json: JsonOf) -> None:
    """Lines with a printk time keep it as the report's time (since boot): no wall time is made up."""
    doc = json.loads(dmesg_json(None).stdout)
    (report,) = doc["sources"][0]["reports"]
    assert report["start_time"] == 11.469644
    assert report["start_wall"] == {"not_available": "its lines have a printk time only (start_time)"}


def test_a_space_separated_stamp_with_printk_times_gives_the_boot_time(tmp_path: Path, lines: list[str]) -> None:
    """Lines "2026-12-03 15:15:22 web01 kernel: [   11.469644] ...": the boot is the whole stamp minus the printk
    time (it was the date alone minus it, 15 h early, "+-1 s")."""
    path = tmp_path / "kern.log"
    path.write_text("".join(f"{_iso_space(BOOT + dt.timedelta(seconds=11), line)}\n" for line in lines))
    doc = json.loads(_run("dmesg", "--format", "json", str(path)).stdout)
    boot = doc["incident"]["boot_time"]
    assert abs(boot["wall"] - BOOT.timestamp()) < 12, boot


@pytest.mark.parametrize("form", ["dmesg -T", "short-iso", "short-iso, space"])
def test_the_zone_of_dmesg_t_times_is_said_to_be_unknown(lines: list[str], form: str, dmesg_json: JsonOf) -> None:
    """dmesg -T prints the host's local time without its zone: read as if UTC (it was read in this machine's zone),
    which is said as an assumption.  An ISO stamp with its offset needs no such word; one without (``2026-12-03
    15:15:22 web01 kernel:``) is read as UTC, which is said too."""
    doc = json.loads(dmesg_json(form).stdout)
    (examined,) = doc["incident"]["examined"]
    said = [why for why in examined["could_not"] if "time zone" in why]
    if form == "short-iso":
        assert said == [], said
        return
    (report,) = doc["sources"][0]["reports"]
    if form == "short-iso, space":
        assert said == [
            f"the time zone of its times (line {report['start_line']}: 2026-12-03 15:15:22): the stamps name no "
            "offset from UTC and were read as UTC: add the host's offset if its clock was not on UTC"
        ]
        return
    assert said == [
        f"the time zone of its dmesg -T times (line {report['start_line']}: [Thu Dec  3 15:15:22 2026]): the crashed "
        "host's local time, which the log does not name: shown as printed (local time, zone unknown), not lined up "
        "with UTC inputs (add the host's offset from UTC to compare); dmesg -T adds the time since boot to the "
        "boot's wall time, and is off by any time suspended (dmesg(1))"
    ]


def test_dmesg_t_times_do_not_depend_on_the_readers_zone(tmp_path: Path, lines: list[str], dmesg_json: JsonOf) -> None:
    """The same ``dmesg -T`` file read under TZ=UTC and TZ=America/New_York gave 15:15:22 and 20:15:22 "UTC": the
    reading machine's zone is no fact about the host's.  Its digits are kept as printed, whatever the reader's."""
    path = tmp_path / "kern.log"
    path.write_text(_rewrite("dmesg -T", lines))
    env = {"TZ": "America/New_York", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [*KFORENSIC, "dmesg", "--format", "json", str(path)],
        capture_output=True, text=True, timeout=120, check=False, cwd=ROOT, env=env,
    )  # fmt: skip
    (report,) = json.loads(done.stdout)["sources"][0]["reports"]
    (here,) = json.loads(dmesg_json("dmesg -T").stdout)["sources"][0]["reports"]  # the same text under TZ=UTC
    assert report["start_wall"] == here["start_wall"] == (BOOT + dt.timedelta(seconds=11)).timestamp()


def test_a_wall_clock_step_back_between_reports_is_said(tmp_path: Path, lines: list[str]) -> None:
    """The log twice over, the second copy's clock an hour behind (an NTP step back): the window spans the two
    copies' reports, and "what it could not judge" says that a duration across the step is none."""
    path = tmp_path / "kern.log"
    path.write_text(_rewrite("short-iso", lines + lines, step_back_at=len(lines) + 1))
    doc = json.loads(_run("dmesg", "--format", "json", str(path)).stdout)
    (examined,) = doc["incident"]["examined"]
    first, second = 279, 279 + len(lines)
    assert any(
        f"a duration across lines {first}-{second}: the log's wall clock goes back 3,600 s" in said
        for said in examined["could_not"]
    ), examined


def test_report_places_the_crash_of_a_wall_clock_log_on_the_timeline(tmp_path: Path, lines: list[str]) -> None:
    """The verdict's chronology is the crash's, at its wall-clock time (it held none: "First" was another
    input's finding)."""
    path = tmp_path / "kern.log"
    path.write_text(_rewrite("short-iso", lines))
    out = tmp_path / "r.md"
    done = _run("report", "--dmesg", str(path), "-o", str(out))
    assert done.returncode == 0, done.stderr
    md = out.read_text()
    assert "First (2026-12-03 15:15:22 UTC): general protection fault in kf_conn_send." in md, md[:1500]
    assert "| 2026-12-03T15:15:22+00:00 |  | instant | general protection fault in kf_conn_send |" in md
    # dmesg -T's local time: as printed, never as UTC (nor as seconds since boot).
    path.write_text(_rewrite("dmesg -T", lines))
    done = _run("report", "--dmesg", str(path), "-o", str(out))
    assert done.returncode == 0, done.stderr
    md = out.read_text()
    local = "2026-12-03T15:15:22 (local time, zone unknown)"
    assert f"First ({local}): general protection fault in kf_conn_send." in md, md[:1500]
    assert f"| {local} |  | instant | general protection fault in kf_conn_send |" in md
    assert "+00:00" not in md and "15:15:22 UTC" not in md
    # Its lane's clock is that local time (it was "its own times (seconds since boot of its kernel)").
    assert f"{path}: its own times (local wall-clock time of a zone the log does not name, as printed)" in md


def test_journalctl_short_full_lines_are_taken_apart(tmp_path: Path, lines: list[str], dmesg_json: JsonOf) -> None:
    """``journalctl -k -o short-full``: "Mon 2026-12-03 15:15:22 CET web01 kernel: ...".  Its lines were not taken
    apart: "general protection fault in corrupted [corrupted]" on two lines.  Now the report is the printk log's,
    untimed (a zone name gives no offset)."""
    path = tmp_path / "kern.log"
    path.write_text(
        "".join(f"{(BOOT + dt.timedelta(seconds=11)).strftime('%a %Y-%m-%d %H:%M:%S')} CET web01 kernel: {line}\n"
                for line in (_STAMP.sub("", x, count=1) for x in lines))
    )  # fmt: skip
    full = json.loads(_run("dmesg", "--format", "json", str(path)).stdout)["sources"][0]["reports"]
    plain = json.loads(dmesg_json(None).stdout)["sources"][0]["reports"]
    assert [(r["title"], r["start_line"], r["end_line"]) for r in full] == [
        (r["title"], r["start_line"], r["end_line"]) for r in plain
    ]
    assert "corrupted" not in full[0]["title"]


@pytest.mark.parametrize("precise", [False, True], ids=["short", "short-precise"])
def test_a_year_less_syslog_time_is_said_as_such(tmp_path: Path, lines: list[str], precise: bool) -> None:
    """``journalctl -k`` (short) and ``-o short-precise``: "Dec 03 15:15:22.004511 web01 kernel: ...".  Its reports
    were "the log has no timestamps" and the window "no report has a timestamp": the lines have a time, without its
    year (and zone); that is what is said, and no date is made up."""
    path = tmp_path / "kern.log"
    out = []
    for line in lines:
        m = _STAMP.match(line)
        when = BOOT + dt.timedelta(seconds=float(m.group(1)) if m else 0.0)
        stamp = f"{when:%b %d %H:%M:%S}" + (f".{when.microsecond:06d}" if precise else "")
        out.append(f"{stamp} web01 kernel: {line[m.end() :] if m else line}\n")
    path.write_text("".join(out))
    doc = json.loads(_run("dmesg", "--format", "json", str(path)).stdout)
    (report,) = doc["sources"][0]["reports"]
    assert report["title"] == "general protection fault in kf_conn_send"
    reason = report["start_time"]["not_available"]
    assert reason.startswith("its syslog time has no year"), reason
    window = doc["incident"]["window"]["not_available"]
    assert window.startswith("the reports' syslog times have no year"), window
    assert doc["incident"]["host"] == "web01"
