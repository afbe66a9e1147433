"""``report`` with kernel logs of different boots: each is read on its own boot's clock, never merged into one.

Two console logs of two fixture guests (both 6.1.192, one machine's two boots as far as the logs can tell) were
told as one boot: "First (2026-12-02 20:18:17 UTC ±1.0 s): general protection fault in kf_conn_send. Then (20:18:17
UTC ±1.0 s): kernel BUG in kf_buffer_put", the second dated with the first log's RTC line where its own says 20:15:39,
and the order reversed (review ue21 #3).  A dump read without debug info beside another guest's log made the boot
time "inputs come from different boots", yet both crashes were still told as one "Since boot" sequence.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from forensics.serialize import incident_from_dict
from tests.helpers import Ran, assert_evidence_resolves, cli_run
from tests.vmcore_cases import VmcoreCase, case_names, kernels, load_case

pytestmark = pytest.mark.xdist_group("incident-trust")

#: The RTC line a fixture guest prints at boot: the wall-clock time (epoch seconds) at its printk time.
_RTC = re.compile(r"\[\s*(\d+\.\d+)\] rtc_cmos \S+ setting system clock to \S+ UTC \((\d+)\)")
GPF = "general protection fault in kf_conn_send"
BUG = "kernel BUG in kf_buffer_put"


def _need(name: str, kernel: str = "6.1") -> VmcoreCase:
    if name not in case_names(kernel):
        pytest.skip(f"vmcore fixture {name} of kernel {kernel} is absent (vmcore_fixtures/build.sh)")
    return load_case(name, kernel)


def _booted(log: Path) -> float:
    """When the log's first boot began, read as the report reads it: its RTC line's time less its printk time."""
    found = _RTC.search(log.read_text())
    assert found is not None, log
    return int(found.group(2)) - float(found.group(1))


def _report(run: Ran, tmp: Path, *inputs: str | Path) -> dict[str, Any]:
    ran = run("report", *inputs, "-o", tmp / "r.md", "--json", tmp / "r.json")
    assert ran.returncode == 0, ran.stderr
    doc: dict[str, Any] = json.loads((tmp / "r.json").read_text())
    return doc


@pytest.fixture
def kf(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Any:
    def invoke(*args: str | Path) -> Ran:
        return cli_run(monkeypatch, capsys, *args)

    return invoke


def test_two_logs_of_two_boots_are_each_dated_by_their_own_boot(tmp_path: Path, kf: Any) -> None:
    """The reviewer's case: the second log's crash is told on its own lane, at its own boot's wall time (its RTC line
    says 20:15:37 + 2.21 s), the order of the two boots said from the two boot times, never "Then"."""
    told, other = _need("10-use-after-free").console_log, _need("02-bug-on").console_log
    doc = _report(kf, tmp_path, "--dmesg", told, "--dmesg", other)
    narrative = doc["narrative"]
    story = narrative.split("The inputs come from")[0]
    assert story.startswith(f"First (2026-12-02 20:18:17 UTC ±1.0 s): {GPF}."), narrative
    assert BUG not in story and "Then" not in story, narrative
    assert (
        f"The inputs come from two different boots: the story above is of the boot of {told}; {other} of another, "
        "told apart below." in narrative
    ), narrative
    # Which input is which: the contradiction names the told log's boot and the check that separated the other.
    said = f"{other} is of another boot than the boot of {told} from line 1: its boot's command line is not {told}'s"
    assert said in [c["statement"] for c in doc["correlations"] if c["contradiction"]], doc["correlations"]
    # Each boot on its own clock: the BUG at its own boot's RTC reading plus its printk time, not the told log's.
    [bug] = [e for e in doc["timeline"] if e["title"] == BUG]
    assert bug["lane"] == f"input {other}"
    assert bug["wall"] == pytest.approx(_booted(other) + 2.212356, abs=1e-3), bug
    assert bug["wall"] < _booted(told), bug  # (before the told boot began: 158 s)
    [lane] = [x for x in doc["lanes"] if x["key"] == f"input {other}"]
    assert lane["converted"] and "converted with its own boot at 2026-12-02T20:15:37+00:00" in lane["label"], lane
    assert f"{other} line 218" in lane["label"], lane  # its own RTC line
    gap = round(_booted(told) - _booted(other))
    assert f"Its boot began {gap} s before the crashed boot's (2026-12-02T20:15:37+00:00 ±1.0 s" in narrative
    # The told boot's time is the told log's, of its own boot's lines only; its window too (it spanned the two boots'
    # clocks, [2.206535] - [2.212356]).
    assert f"{told} line 232" in doc["incident"]["boot_time"]["basis"]
    window = doc["incident"]["window"]
    assert (window["start"]["seconds"], window["end"]["seconds"]) == (2.206535, 2.206535), window
    assert not any(str(other) in str(h) for h in doc["hypotheses"]), doc["hypotheses"]
    assert_evidence_resolves(incident_from_dict(doc["incident"], "r.json").findings)


def test_another_boot_of_one_machine_is_set_apart_by_when_it_began(tmp_path: Path, kf: Any) -> None:
    """The usual case: two logs of one machine across a reboot, one command line (the 02 guest's log given the 10
    guest's ``Command line:`` lines): the log was "unconfirmed" and its crash told as "Then (20:18:17 UTC)"."""
    told = _need("10-use-after-free").console_log
    commands = iter([x for x in told.read_text().splitlines(keepends=True) if "Command line: " in x])
    other = tmp_path / "kern.log"
    lines = _need("02-bug-on").console_log.read_text().splitlines(keepends=True)
    other.write_text("".join(next(commands) if "Command line: " in x else x for x in lines))
    doc = _report(kf, tmp_path, "--dmesg", told, "--dmesg", other)
    story = doc["narrative"].split("The inputs come from")[0]
    assert BUG not in story and "Then" not in story, doc["narrative"]
    said = f"{other} is of another boot than the boot of {told} from line 1: its boot began at another time than"
    assert any(c["statement"].startswith(said) for c in doc["correlations"] if c["contradiction"]), doc["correlations"]
    [bug] = [e for e in doc["timeline"] if e["title"] == BUG]
    assert bug["lane"] == f"input {other}" and bug["wall"] == pytest.approx(_booted(other) + 2.212356, abs=1e-3)


def test_the_boot_before_the_crashs_in_a_log_of_both_is_on_its_own_clock(tmp_path: Path, kf: Any) -> None:
    """kern.log.1 across a reboot: the boot before (the 02 guest's, crashed, and its capture kernel's), then the first
    240 lines of the crashed boot (the 10 guest's). The log is confirmed of the told boot (lines at the same times),
    so its first boot's crash was dated with the told boot's time: "Then (20:18:17 UTC ±1.0 s): kernel BUG"."""
    told = _need("10-use-after-free").console_log
    before = _need("02-bug-on").console_log.read_text()
    log = tmp_path / "kern.log.1"
    log.write_text(before + "".join(told.read_text().splitlines(keepends=True)[:240]))
    doc = _report(kf, tmp_path, "--dmesg", told, "--dmesg", log)
    story = doc["narrative"].split("The inputs come from")[0]
    assert BUG not in story and "Then" not in story, doc["narrative"]
    lane = f"{log} (its boot from line 1)"
    assert (
        f"The input {lane} cannot come from the crashed boot: its boot's command line is not {told}'s"
        in (doc["narrative"])
    ), doc["narrative"]
    [bug] = [e for e in doc["timeline"] if e["title"] == BUG]
    assert bug["lane"] == f"input {lane}", bug
    assert bug["wall"] == pytest.approx(_booted(log) + 2.212356, abs=1e-3), bug  # its own boot's RTC line, line 218
    examined = (tmp_path / "r.md").read_text().split("## Examined\n\n", 1)[1].split("\n## ", 1)[0]
    # The log is of the told boot, bar its boots from lines 1 and 271 (the 02 guest's and its capture kernel's).
    assert f"  - boot: the boot of {told} from line 1's: " in examined, examined
    assert f"; not its boots from lines 1, 271: its boot's command line is not {told}'s: " in examined, examined


def _kern_log(path: Path, *cases: str) -> Path:
    """One syslog kern.log of the fixture guests' boots in turn (each console log's first boot, its kernel lines only),
    every line stamped ``Dec  2 20:15:37 kfhost kernel:`` with its own boot's RTC time plus its printk time."""
    out = []
    for name in cases:
        log = _need(name).console_log
        lines = log.read_text().splitlines()
        banners = [i for i, x in enumerate(lines) if "] Linux version " in x]
        booted = _booted(log)
        for line in lines[: banners[1] if len(banners) > 1 else None]:
            stamp = re.match(r"\[\s*(\d+\.\d+)\]", line)
            if stamp is not None:  # (the guest's init writes to the console too: not the kernel's, not in kern.log)
                when = time.strftime("%b %e %H:%M:%S", time.gmtime(booted + float(stamp.group(1))))
                out.append(f"{when} kfhost kernel: {line}\n")
    path.write_text("".join(out))
    return path


def test_one_kern_log_across_a_reboot_after_a_crash_tells_the_latest_crash(tmp_path: Path, kf: Any) -> None:
    """One kern.log of two boots: the 02 guest's (down on its BUG, oops=panic and kdump: no 'Kernel panic' line), then
    the 10 guest's.  The second banner was "unexpected kernel reboot" (high), the headline's finding, the later GPF
    "passed over", and the window "no input carries timestamps" (review ue23 #3)."""
    log = _kern_log(tmp_path / "kern.log", "02-bug-on", "10-use-after-free")
    doc = _report(kf, tmp_path, "--dmesg", log)
    titles = [f["title"] for f in doc["incident"]["findings"]]
    assert "unexpected kernel reboot" not in titles and {BUG, GPF} <= set(titles), titles
    summary = doc["summary"]
    assert f"The report: {GPF}. In the boot from line 269 " in summary and "passed over" not in summary, summary
    assert "Hypothesis 1 of the ranking" in summary and "kf_conn_send" in doc["hypotheses"][0]["statement"], summary
    # Each boot's crash is told: the boot before's BUG too, on a lane of its own, dated by its own RTC line (it was
    # the told boot's lane's "2.212 s since boot" above a "clock jump" row: review ue23 #3).
    lane = f"{log} (its boot from line 1)"
    [bug] = [e for e in doc["timeline"] if e["title"] == BUG]
    assert bug["lane"] == f"input {lane}" and bug["jump"] is None, bug
    assert bug["wall"] == pytest.approx(_booted(_need("02-bug-on").console_log) + 2.212356, abs=1e-3), bug
    [gpf] = [e for e in doc["timeline"] if e["title"] == GPF]
    assert gpf["lane"] == "boot" and gpf["jump"] is None, gpf
    assert gpf["wall"] == pytest.approx(_booted(_need("10-use-after-free").console_log) + 2.206535, abs=1e-3), gpf
    assert doc["narrative"].startswith(f"First (2026-12-02 20:18:17 UTC ±1.0 s): {GPF}."), doc["narrative"]
    said = f"The input {lane} cannot come from the crashed boot: its lines 1-268 are of another boot than the crashed"
    assert said in doc["narrative"], doc["narrative"]
    # The window is the told boot's, not across the two boots' clocks (it was "not available: the printk time of
    # kern.log goes back between the reports at lines 234 and 515", before that "no input carries timestamps").
    window = doc["incident"]["window"]
    assert (window["start"]["seconds"], window["end"]["seconds"]) == (2.206535, 2.206535), window


def _times(doc: dict[str, Any]) -> dict[str, tuple[bool, float | None, float, bool]]:
    """Each finding's row, as the forms of one log are compared: on the told boot's lane or another's, its wall time
    (rounded to the microsecond), its time since boot, whether a clock jump is said before it."""
    return {
        e["title"]: (
            e["lane"] == "boot",
            None if e["wall"] is None else round(e["wall"], 6),
            e["since_boot"],
            bool(e["jump"]),
        )
        for e in doc["timeline"]
        if not e["finding"].startswith("contradiction")
    }


def test_one_kern_log_and_its_two_halves_give_the_same_lanes_and_times(tmp_path: Path, kf: Any) -> None:
    """The same lines as one kern.log across the reboot, and split at the second boot's banner into kern.log.1 and
    kern.log: each boot on its own lane, on its own wall clock, alike (the one-file form put the first boot's BUG on
    the told boot's lane at "2.212 s since boot", after a clock jump row; review ue23 #3)."""
    (tmp_path / "one").mkdir()
    log = _kern_log(tmp_path / "one" / "kern.log", "02-bug-on", "10-use-after-free")
    lines = log.read_text().splitlines(keepends=True)
    second = [i for i, x in enumerate(lines) if "] Linux version " in x][1]
    (tmp_path / "two").mkdir()
    older, newer = tmp_path / "two" / "kern.log.1", tmp_path / "two" / "kern.log"
    older.write_text("".join(lines[:second]))
    newer.write_text("".join(lines[second:]))
    one = _report(kf, tmp_path / "one", "--dmesg", log)
    two = _report(kf, tmp_path / "two", "--dmesg", older, "--dmesg", newer)
    assert _times(one) == _times(two), (_times(one), _times(two))
    assert one["incident"]["window"] == two["incident"]["window"], (
        one["incident"]["window"],
        two["incident"]["window"],
    )
    assert _times(one)[BUG][:2] == (False, round(_booted(_need("02-bug-on").console_log) + 2.212356, 6)), _times(one)
    assert _times(one)[GPF][0] and _times(one)[GPF][1] is not None, _times(one)
    # The same story and the same order of the two boots, each lane dated by its own RTC line.
    for doc in (one, two):
        assert doc["narrative"].startswith(f"First (2026-12-02 20:18:17 UTC ±1.0 s): {GPF}."), doc["narrative"]
        gap = round(_booted(_need("10-use-after-free").console_log) - _booted(_need("02-bug-on").console_log))
        assert f"Its boot began {gap} s before the crashed boot's" in doc["narrative"], doc["narrative"]
    [lane] = [x for x in one["lanes"] if x["key"] == f"input {log} (its boot from line 1)"]
    assert lane["converted"] and f"{log} line 218: the RTC's time" in lane["label"], lane


def test_a_findings_file_of_one_kern_log_renders_its_boots_as_the_log_does(tmp_path: Path, kf: Any) -> None:
    """``kforensic dmesg kern.log --format json`` then ``report --from``: each boot's clock reading is in the findings
    file (its record's boot times), so the first boot's lane is dated as in the run on the log, not recomputed from
    the log (the file may be read where the log is not)."""
    log = _kern_log(tmp_path / "kern.log", "02-bug-on", "10-use-after-free")
    ran = kf("dmesg", log, "--format", "json")
    assert ran.returncode == 0, ran.stderr
    [source] = json.loads(ran.stdout)["incident"]["sources"]
    assert [t["holds_for"]["first_line"] for t in source["boot_times"]] == [1, 269], source
    findings = tmp_path / "findings.json"
    findings.write_text(ran.stdout)
    log.unlink()  # (the log is not read again: the record carries its boots' readings)
    again = _report(kf, tmp_path, "--from", findings)
    assert _times(again)[BUG][:2] == (False, round(_booted(_need("02-bug-on").console_log) + 2.212356, 6)), again
    log = _kern_log(tmp_path / "kern.log", "02-bug-on", "10-use-after-free")
    (tmp_path / "direct").mkdir()
    direct = _report(kf, tmp_path / "direct", "--dmesg", log)
    assert (again["narrative"], again["lanes"], again["timeline"]) == (
        direct["narrative"],
        direct["lanes"],
        direct["timeline"],
    )
    told = (tmp_path / "r.md").read_text().split("\n## Details", 1)[0].split("\n## Inputs", 1)[0]
    shown = (tmp_path / "direct" / "r.md").read_text().split("\n## Details", 1)[0].split("\n## Inputs", 1)[0]
    assert told == shown


def test_a_log_of_another_boot_that_dates_no_boot_is_said_unordered(tmp_path: Path, kf: Any) -> None:
    """Without its RTC line, the other log's times are seconds since its own boot, and which boot came first is
    unknown, with why (it was dated with the told log's boot time, as the told boot's)."""
    told = _need("10-use-after-free").console_log
    other = tmp_path / "02-console.log"
    lines = _need("02-bug-on").console_log.read_text().splitlines(keepends=True)
    other.write_text("".join(x for x in lines if "setting system clock" not in x))
    doc = _report(kf, tmp_path, "--dmesg", told, "--dmesg", other)
    [bug] = [e for e in doc["timeline"] if e["title"] == BUG]
    assert (bug["lane"], bug["wall"]) == (f"input {other}", None) and bug["since_boot"] == pytest.approx(2.212356), bug
    assert (
        f"Which of the two boots came first is unknown: {other} does not date its boot (no RTC line nor dated line of "
        "it); its times are seconds since its own boot." in doc["narrative"]
    ), doc["narrative"]
    assert "Then" not in doc["narrative"], doc["narrative"]


def test_logs_no_check_ties_to_one_boot_are_not_ordered_yet_still_ranked(tmp_path: Path, kf: Any) -> None:
    """Two logs without a ``Command line:`` nor an RTC line (as syzbot's are): no check separates them, none ties
    them to one boot; they were one "Since boot" story, "First (2.207 s since boot) ... Then (2.212 s since boot)".
    The other log gets a lane of its own, its order unknown, and its crash is still a hypothesis (maybe this boot's)."""
    logs = []
    for name in ("10-use-after-free", "02-bug-on"):
        lines = _need(name).console_log.read_text().splitlines(keepends=True)
        log = tmp_path / f"{name}.log"
        log.write_text("".join(x for x in lines if "Command line: " not in x and "setting system clock" not in x))
        logs.append(log)
    told, other = logs
    doc = _report(kf, tmp_path, "--dmesg", told, "--dmesg", other)
    narrative = doc["narrative"]
    assert narrative.startswith(
        f"First (2.207 s since boot): {GPF}. The input {other} may be of another boot than "
        "the crashed boot: its boot identity is unconfirmed: no check separates it"
    ), narrative
    assert "Then" not in narrative and "different boots" not in narrative, narrative
    assert (
        f"Which of the two boots came first is unknown: neither {other} nor the inputs of the crashed boot date their "
        "boot" in narrative
    ), narrative
    [bug] = [e for e in doc["timeline"] if e["title"] == BUG]
    assert (bug["lane"], bug["wall"]) == (f"input {other}", None), bug
    [lane] = [x for x in doc["lanes"] if x["key"] == f"input {other}"]
    assert lane["contradiction"] is None and "its boot identity is unknown: no check separates" in lane["label"], lane
    assert any("kf_buffer_put" in h["statement"] for h in doc["hypotheses"]), doc["hypotheses"]  # not set apart
    assert doc["set_apart"] == [], doc["set_apart"]
    window = doc["incident"]["window"]
    assert (window["start"]["seconds"], window["end"]["seconds"]) == (2.206535, 2.206535), window


def test_two_logs_of_one_boot_stay_one_story(tmp_path: Path, kf: Any) -> None:
    """The console log and kdump's dmesg.txt of one boot: the same lines at the same times, one boot, one lane."""
    case = _need("10-use-after-free")
    doc = _report(kf, tmp_path, "--dmesg", case.console_log, "--dmesg", case.directory / "dmesg.txt")
    assert "different boots" not in doc["narrative"] and "another boot" not in doc["narrative"], doc["narrative"]
    assert not any(c["contradiction"] for c in doc["correlations"]), doc["correlations"]
    assert {e["lane"] for e in doc["timeline"]} == {"boot"}, doc["timeline"]
    examined = (tmp_path / "r.md").read_text().split("## Examined\n\n", 1)[1].split("\n## ", 1)[0]
    assert f"  - boot: the boot of {case.console_log} from line 1's: " in examined, examined


@pytest.mark.skipif(shutil.which("makedumpfile") is None, reason="makedumpfile reads a dump's log without symbols")
def test_a_dump_read_without_debug_info_sets_another_boots_log_apart(tmp_path: Path, kf: Any) -> None:
    """The dump's own log (makedumpfile's, extracted again) is the reference: the other guest's log was told in one
    "Since boot" lane with the dump's crash, "inputs come from different boots" said in the boot time row only."""
    case, other = _need("10-use-after-free"), _need("02-bug-on").console_log
    wrong_kernel = next((k for k in kernels() if k != case.kernel and case_names(k)), None)
    if wrong_kernel is None:
        pytest.skip("no other fixture kernel")
    wrong = _need(case_names(wrong_kernel)[0], wrong_kernel).vmlinux
    dump = tmp_path / "vmcore"
    dump.symlink_to(case.vmcore)  # alone in its directory: its log is the dump's own
    ran = kf("report", "--vmcore", dump, "--vmlinux", wrong, "--dmesg", other, "-o", tmp_path / "r.md",
             "--json", tmp_path / "r.json")  # fmt: skip
    assert ran.returncode == 3, ran.stderr  # (written; the vmlinux given was not used)
    doc = json.loads((tmp_path / "r.json").read_text())
    cited = f"<makedumpfile --dump-dmesg {dump} FILE>"
    story = doc["narrative"].split("The inputs come from")[0]
    assert BUG not in story and "Then" not in story, doc["narrative"]
    said = f"{other} cannot come from the crashed boot: its boot's command line is not the dump's"
    assert said in [c["statement"] for c in doc["correlations"] if c["contradiction"]], doc["correlations"]
    [bug] = [e for e in doc["timeline"] if e["title"] == BUG]
    assert bug["lane"] == f"input {other}" and bug["wall"] == pytest.approx(_booted(other) + 2.212356, abs=1e-3)
    # The boot time is the dump's own (no longer "inputs come from different boots").
    assert f"{cited} line 240" in doc["incident"]["boot_time"]["basis"], doc["incident"]["boot_time"]
    why = next(f for f in doc["incident"]["findings"] if f["title"] == said)
    assert {e["source"] for e in why["evidence"]} == {cited, str(other)}


@pytest.mark.skipif(shutil.which("makedumpfile") is None, reason="makedumpfile reads a dump's log without symbols")
def test_a_dump_without_debug_info_and_no_log_beside_it_is_extracted_once(
    tmp_path: Path, kf: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The boot check extracts the dump's log again only to check a log given beside it: with none, makedumpfile
    runs once (the dump's analysis), as before the check read dumps without debug info."""
    from forensics.vmcore import kernellog

    case = _need("10-use-after-free")
    wrong_kernel = next((k for k in kernels() if k != case.kernel and case_names(k)), None)
    if wrong_kernel is None:
        pytest.skip("no other fixture kernel")
    wrong = _need(case_names(wrong_kernel)[0], wrong_kernel).vmlinux
    dump = tmp_path / "vmcore"
    dump.symlink_to(case.vmcore)
    runs: list[Path] = []
    real = kernellog.extract_log

    def counted(path: Path) -> kernellog.ExtractedLog:
        runs.append(path)
        return real(path)

    monkeypatch.setattr(kernellog, "extract_log", counted)
    ran = kf("report", "--vmcore", dump, "--vmlinux", wrong, "-o", tmp_path / "r.md")
    assert ran.returncode == 3, ran.stderr  # (written from the dump's log; the vmlinux given was not used)
    assert len(runs) == 1, runs
    runs.clear()
    ran = kf("report", "--vmcore", dump, "--vmlinux", wrong, "--dmesg", case.console_log, "-o", tmp_path / "s.md")
    assert ran.returncode == 3, ran.stderr
    assert len(runs) == 2, runs  # (the check of the log beside it: the dump's own log, extracted again)
