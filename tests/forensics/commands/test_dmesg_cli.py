"""``kforensic dmesg`` end to end: the JSON contract, formats, exit codes and bad input."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from forensics.serialize import incident_from_dict
from tests.helpers import assert_evidence_resolves

GOLDEN = Path(__file__).resolve().parents[2] / "detectors" / "dmesg" / "golden"
HEALTHY = Path(__file__).resolve().parents[2] / "data" / "healthy"
KFORENSIC = [sys.executable, "-m", "forensics"]


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*KFORENSIC, "dmesg", *args], input=stdin, capture_output=True, timeout=60, check=False)


def test_json_contract_one_source_per_input_in_order() -> None:
    logs = [str(GOLDEN / "null_deref_x86.log"), str(GOLDEN / "warning_syslog.log"), str(GOLDEN / "oom_kill.log")]
    proc = run("--format", "json", *logs)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["schema"] == "kforensic.dmesg/1"
    assert [s["path"] for s in doc["sources"]] == logs
    first = doc["sources"][0]["reports"][0]
    assert first["title"] == "BUG: unable to handle kernel NULL pointer dereference in kf_null_write"
    for key in ("type", "severity", "corrupted", "frame", "start_line", "end_line", "call_trace", "taint_flags"):
        assert key in first
    assert first["panicked"] is True and first["frame"] == "kf_null_write"
    assert doc["sources"][2]["reports"] == [] and doc["sources"][2]["events"][0]["type"] == "oom"
    incident = incident_from_dict(doc, "dmesg.json")
    assert_evidence_resolves(incident.findings)


def test_report_merges_the_dmesg_json(tmp_path: Path) -> None:
    out = tmp_path / "d.json"
    assert run("--format", "json", "-o", str(out), str(GOLDEN / "soft_lockup_iso.log")).returncode == 0
    assert (os.stat(out).st_mode & 0o777) == 0o600
    merged = subprocess.run([*KFORENSIC, "report", "--from", str(out)], capture_output=True, timeout=60, check=False)
    assert merged.returncode == 0 and b"BUG: soft lockup in proc_reg_write" in merged.stdout


def test_stdin_text_and_markdown() -> None:
    data = (GOLDEN / "hung_task_crlf_caller.log").read_bytes()
    text = run("-", stdin=data)
    assert text.returncode == 0 and b"INFO: task hung in jbd2_journal_commit_transaction" in text.stdout
    md = run("--format", "md", stdin=data)
    assert md.returncode == 0 and b"| <stdin> |" in md.stdout


def test_text_is_plain_and_markdown_keeps_its_markup() -> None:
    log = str(GOLDEN / "null_deref_x86.log")
    text = run(log).stdout.decode()
    why = text[text.index("\nWhy\n") : text.index("\nkforensic ")]
    assert "##" not in why and "**" not in why and "|---" not in why and "\\|" not in why
    assert "  null_pointer: NULL pointer dereference in kf_null_write: address 0x8 is NULL plus 0x8 (line 3)" in why
    assert "  1. NULL pointer dereference in kf_null_write" in why and "next: crash> dis -rl" in why
    md = run("--format", "md", log).stdout.decode()
    assert "## Why" in md and "**null_pointer**: NULL pointer dereference" in md and "| fact | value | line |" in md
    # One document: its title first, then the verdict and the header, then the reports (the healthy-machine review of
    # 2026-12-07, 13: "## Kernel reports" came before "# kforensic incident report").
    headings = [line for line in md.splitlines() if line.startswith("#")]
    assert headings[0] == "# kforensic incident report" and not any(h.startswith("# ") for h in headings[1:]), headings
    assert md.index("| Kernel |") < md.index("## Kernel reports") < md.index("## Why") < md.index("## Inputs")


def test_fail_on_sets_exit_status_1() -> None:
    assert run("--fail-on", "high", str(GOLDEN / "null_deref_x86.log")).returncode == 1
    assert run("--fail-on", "critical", str(GOLDEN / "warning_syslog.log")).returncode == 0


def test_bad_but_readable_input_gives_a_result(tmp_path: Path) -> None:
    log = tmp_path / "bad.log"
    log.write_bytes(bytes(range(256)) * 100 + b"\n[   12.000000] kf: a kernel line\n")
    proc = run("--format", "json", str(log))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["sources"][0]["reports"] == []


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"", "it is empty"),
        (b"\xff\xfe\xfd invalid utf-8\n" * 10, "none of its 1 lines is a kernel log line"),
        (b"x" * (3 << 20), "none of its 1 lines is a kernel log line"),
    ],
    ids=["empty", "invalid-utf8", "3MB-line"],
)
def test_readable_input_without_a_kernel_line_is_read_and_refused(tmp_path: Path, content: bytes, said: str) -> None:
    """Read to its end (no traceback, memory bounded), then refused with one line: no line of it is a kernel log's,
    so "no reports" would be a verdict on nothing (it said so, exit 0)."""
    log = tmp_path / "bad.log"
    log.write_bytes(content)
    proc = run("--format", "json", str(log))
    assert proc.returncode == 3 and proc.stdout == b"", proc.stderr
    assert (
        proc.stderr.decode().startswith(f"kforensic: error: {log}: not a kernel log: ") and said in proc.stderr.decode()
    )


def test_binary_input_without_a_kernel_line_is_not_a_kernel_log(tmp_path: Path) -> None:
    # It said "No problem found", exit 0: a verdict on bytes no kernel wrote (test_log_inputs_refused.py).
    log = tmp_path / "bad.log"
    log.write_bytes(bytes(range(256)) * 100)
    proc = run("--format", "json", str(log))
    assert proc.returncode == 3 and proc.stdout == b""
    assert proc.stderr.decode().startswith(f"kforensic: error: {log}: not a kernel log (")


def test_unreadable_input_is_one_line_and_exit_3(tmp_path: Path) -> None:
    for target in (tmp_path, tmp_path / "missing.log"):
        proc = run(str(target))
        assert proc.returncode == 3
        lines = proc.stderr.decode().splitlines()
        assert lines[0].startswith("kforensic: error: cannot read") and "Traceback" not in proc.stderr.decode()


def test_boot_time_from_dated_lines() -> None:
    log = b"2026-11-30T06:55:29+0000 host kernel: [  100.000000] Kernel panic - not syncing: boom\n"
    doc = json.loads(run("--format", "json", stdin=log).stdout)
    assert doc["incident"]["boot_time"]["wall"] == 1796021629.0
    assert doc["sources"][0]["reports"][0]["title"] == "kernel panic: boom"


def test_thousands_of_repeats_are_grouped_and_kept_small(tmp_path: Path) -> None:
    from forensics.pipelines.dmesg import build_incident, triage_file
    from forensics.types.dmesg import SAMPLE_REPORTS

    report = (GOLDEN / "null_deref_x86.log").read_bytes().split(b"\n")[2:30]
    log = tmp_path / "repeats.log"
    repeats = 600
    log.write_bytes(b"\n".join(report * repeats) + b"\n")
    result = triage_file(str(log))
    (group,) = result.groups
    assert group.count == repeats
    # Only the first, the last and an even sample are kept, whole.
    kept = [r.start_line for r in result.reports]
    assert len(kept) == len(group.kept) <= SAMPLE_REPORTS + 2
    assert kept[0] == 1 and kept[-1] == 1 + 28 * (repeats - 1) and kept == sorted(kept)
    assert all(len(r.lines) > 1 for r in result.reports)
    incident = build_incident([result])
    assert_evidence_resolves(incident.findings)
    (finding,) = incident.findings
    occurrences = [e for e in finding.evidence if (e.locator.name or "").startswith(("report", "one of", "last of"))]
    assert [e.locator.start for e in occurrences] == kept
    # Each repeat is cited whole, as the first: the CPU its evidence carries is named in the lines it cites.
    spans = [(r.start_line, r.end_line) for r in result.reports]
    assert [(e.locator.start, e.locator.end) for e in occurrences] == spans
    lines = log.read_text().split("\n")
    for e in occurrences:
        assert e.cpu is not None and e.locator.end is not None
        assert any(f"CPU: {e.cpu} " in line for line in lines[e.locator.start - 1 : e.locator.end]), e


def test_a_log_without_reports_says_so_not_that_its_reports_lack_timestamps() -> None:
    log = b"[    0.000000] Linux version 6.1.0 (gcc 12)\n[    1.250000] EXT4-fs (vda1): mounted filesystem\n"
    doc = json.loads(run("--format", "json", "-", stdin=log).stdout)
    assert doc["incident"]["window"] == {"not_available": "no report was found"}


def test_a_log_that_starts_after_boot_says_what_it_cannot_show(tmp_path: Path) -> None:
    """'No problem found' on a log whose ring buffer wrapped names the time before which it shows nothing.

    The machine's own dmesg (tests/data/healthy) from its 400th line on, as `dmesg` prints a ring buffer that
    has wrapped: it starts 1,937 s after boot, and nothing said that reports before then were not examined.
    """
    lines = gzip.decompress((HEALTHY / "dmesg.txt.gz").read_bytes()).splitlines(keepends=True)
    cut = tmp_path / "wrapped.log"
    cut.write_bytes(b"".join(lines[399:]))
    for log, starts in ((HEALTHY / "dmesg.txt.gz", None), (cut, "[ 1936.940941]")):
        proc = run("--format", "json", str(log))
        assert proc.returncode == 0, proc.stderr
        (examined,) = json.loads(proc.stdout)["incident"]["examined"]
        if starts is None:
            assert examined["could_not"] == [], examined  # it starts with the boot banner
        else:
            assert len(examined["could_not"]) == 1 and examined["could_not"][0].startswith(f"reports before {starts}")
            assert "starts 1,937 s after its boot" in examined["could_not"][0], examined


def test_a_compressed_log_cut_short_says_what_it_cannot_show(tmp_path: Path) -> None:
    """A gzip log cut before its crash said "No problem found" with exit 0, the cut only in a note at the end: what
    the kernel printed after the cut is now named as not judged."""
    whole = (HEALTHY / "dmesg.txt.gz").read_bytes()
    cut = tmp_path / "cut.log.gz"
    cut.write_bytes(whole[: len(whole) // 3])
    proc = run("--format", "json", str(cut), "--fail-on", "low")
    assert proc.returncode == 0, proc.stderr
    (examined,) = json.loads(proc.stdout)["incident"]["examined"]
    assert examined["could_not"] == [
        "what the reading lost: the gzip stream ends early (the file is truncated): only the text before the cut was "
        "read"
    ], examined


def test_no_log_and_no_input_on_stdin_is_a_usage_error() -> None:
    """``kforensic dmesg`` from cron or ssh (standard input /dev/null) read an empty log and said "No problem found",
    exit 0, without having examined anything; ``-`` still reads standard input whatever it is; a pipe is read."""
    proc = subprocess.run([*KFORENSIC, "dmesg"], stdin=subprocess.DEVNULL, capture_output=True, timeout=60, check=False)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(b"kforensic: error: dmesg needs a log file, '-' for stdin, or --live")
    proc = subprocess.run(
        [*KFORENSIC, "dmesg", "-"], stdin=subprocess.DEVNULL, capture_output=True, timeout=60, check=False
    )
    # read, and refused as it holds no kernel log line (it said "No problem found": the log is empty)
    assert proc.returncode == 3 and b"<stdin>: not a kernel log: it is empty" in proc.stderr, proc.stderr
    piped = run(stdin=b"[    1.000000] Linux version 6.1.0 (gcc 12)\n")
    assert piped.returncode == 0 and b"1 lines" in piped.stdout, piped.stderr
    empty = run(stdin=b"")  # an empty pipe: cron's and ssh's standard input
    assert empty.returncode == 2 and b"standard input was empty" in empty.stderr, empty.stderr


def test_the_ring_buffers_identity_is_its_own_not_standard_inputs() -> None:
    """``kforensic dmesg - --live``: what the live read says of its kernel (this machine's; a wrapped buffer
    starting N s after boot) is the live result's alone.  Every input that is no file took it: standard input
    was said to start "120 s after its boot" because the ring buffer did."""
    from dataclasses import replace

    from collectors.log_identity import LogIdentity
    from forensics.pipelines.dmesg import build_incident, triage_file

    piped = triage_file(str(GOLDEN / "null_deref_x86.log"))
    piped = replace(piped, record=replace(piped.record, path="<stdin>"))
    ring = triage_file(str(GOLDEN / "null_deref_x86.log"))
    ring = replace(ring, record=replace(ring.record, path="/dev/kmsg"))
    live = LogIdentity(releases=("6.18.44",), hosts=("vm",), starts_after=120.0)
    examined = build_incident([piped, ring], live).examined
    assert examined[0].could_not == ()
    assert examined[1].could_not and "starts 120 s after its boot" in examined[1].could_not[0]
