"""``report``: a trace on its own clock beside a kernel log lends the log neither its boot time nor its host.

A 2015 user-space LTTng session of host "qemu1" (no kernel release) beside this VM's dmesg dated the log's RT
throttling "2015-12-15 20:38:44 UTC ±1.0 s" with the trace's clock offset, and the headline said "On qemu1", while the
same report said the trace was "on its own clock, apart from the others" (review ue23 #1).  Made here with the
project's user-space session (tests/data/lttng/ust.tar.gz, host "vm", its clock's zero on 2026-12-01) and the healthy
6.18 log with an RT throttling line appended.
"""

from __future__ import annotations

import gzip
import json
import tarfile
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import cli_run

DATA = Path(__file__).resolve().parents[1] / "data"
#: The line appended to the healthy log: a finding of the log, at a time since boot only.
THROTTLED = "[19181.168376] sched: RT throttling activated"


def _report(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp: Path, *inputs: str | Path
) -> dict[str, Any]:
    ran = cli_run(monkeypatch, capsys, "report", *inputs, "-o", tmp / "r.md", "--json", tmp / "r.json")
    assert ran.returncode == 0, ran.stderr
    doc: dict[str, Any] = json.loads((tmp / "r.json").read_text())
    return doc


def test_a_user_space_trace_dates_and_names_no_kernel_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with tarfile.open(DATA / "lttng" / "ust.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    trace = tmp_path / "ust"
    log = tmp_path / "dmesg.txt"
    log.write_text(gzip.decompress((DATA / "healthy" / "dmesg.txt.gz").read_bytes()).decode() + THROTTLED + "\n")
    # Alone, the trace names its host and its boot, its clock's zero (tests/collectors/test_lttng_kernel_session.py).
    alone = _report(monkeypatch, capsys, tmp_path, "--trace", trace)["incident"]
    assert alone["host"] == "vm" and "LTTng clock monotonic's offset" in alone["boot_time"]["basis"], alone
    doc = _report(monkeypatch, capsys, tmp_path, "--dmesg", log, "--trace", trace)
    incident = doc["incident"]
    # The log names no host and carries no anchor of its boot: both unknown, the trace's said as not of this boot.
    assert "not_available" in incident["host"] and "names vm, on its own clock" in incident["host"]["not_available"]
    assert "not_available" in incident["boot_time"], incident["boot_time"]
    assert "dates its own clock only" in incident["boot_time"]["not_available"]
    (throttled,) = [e for e in doc["timeline"] if e["title"] == "sched: RT throttling activated"]
    assert (throttled["wall"], throttled["lane"], throttled["since_boot"]) == (None, "since boot", 19181.168376)
    assert doc["summary"].startswith("On the machine, "), doc["summary"]
    assert "First (19181.168 s since boot): sched: RT throttling activated." in doc["narrative"], doc["narrative"]
    assert f"The trace {trace} has 2 finding(s) on its own clock, apart from the others." in doc["narrative"]


def test_a_profile_names_no_host_for_a_kernel_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A perf.data's header names its machine (``# hostname``), on perf's own clock: beside a log that names no host
    it lent the log its host ("On qemu1, real-time tasks ran ...", review ue24 F1).  Recorded now: its header names
    this machine, which the log (the healthy 6.18 log) does not."""
    import platform
    import shutil
    import socket
    import subprocess

    from collectors.perf_script import find_perf

    perf = find_perf()
    if perf is None:
        pytest.skip("perf is not installed")
    data = tmp_path / "perf.data"
    spin = [
        shutil.which("python3") or "python3",
        "-c",
        "import time\nt = time.time() + 0.3\nwhile time.time() < t: pass",
    ]
    rec = subprocess.run(
        [perf, "record", "-q", "-F", "999", "-o", str(data), "--", *spin], capture_output=True, check=False
    )
    if rec.returncode != 0 or not data.exists():
        pytest.skip(f"perf record is not allowed here: {rec.stderr.decode(errors='replace')[:200]}")
    # The log of the kernel the profile names (its header's os release, this machine's): not set apart by release.
    healthy = gzip.decompress((DATA / "healthy" / "dmesg.txt.gz").read_bytes()).decode()
    log = tmp_path / "dmesg.txt"
    log.write_text(
        healthy.replace("Linux version 6.18.44-fc-v1252 ", f"Linux version {platform.release()} ") + THROTTLED + "\n"
    )
    alone = _report(monkeypatch, capsys, tmp_path, "--profile", data)["incident"]
    host = alone["host"]
    assert host == socket.gethostname(), alone  # the premise: alone, the profile names its machine
    doc = _report(monkeypatch, capsys, tmp_path, "--dmesg", log, "--profile", data)
    said = doc["incident"]["host"]
    assert "not_available" in said and f"the CPU profile {data} names {host}, on its own clock" in said["not_available"]
    assert doc["summary"].startswith("On the machine, "), doc["summary"]
