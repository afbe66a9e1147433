"""``journalctl -k -o json`` and ``-o export`` are read as the kernel log they hold (forensics/journal_text.py).

A reviewer gave kforensic the same oops as ``journalctl -o json`` and ``-o export``: its title was "... in
corrupted", raw JSON leaked into the facts, and the entries' times, host and boot were lost, exit 0.  The logs here
are the 6.12 use-after-free fixture's, written as journald stores kernel messages (systemd.journal-fields(7)): the
printk time in ``_SOURCE_MONOTONIC_TIMESTAMP``, the wall time in ``__REALTIME_TIMESTAMP``, with a user-space entry
between the kernel's, one message as a byte array (JSON) or a binary field (export).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from forensics.evidence import check_findings
from forensics.pipelines.dmesg import analyse_logs

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "vmcore_fixtures/kernels/6.12/cases/10-use-after-free/dmesg.txt"
BOOT = dt.datetime(2026, 12, 3, 15, 15, 11, tzinfo=dt.UTC)
_STAMP = re.compile(r"^\[\s*(\d+)\.(\d{6})\] ?")
TITLE = "general protection fault in kf_conn_send"


def _entries() -> list[dict[str, object]]:
    """The fixture's lines as journal entries, a sshd entry after the tenth."""
    if not LOG.is_file():
        pytest.skip("no fixture log")
    out: list[dict[str, object]] = []
    for i, line in enumerate(LOG.read_text().splitlines()):
        m = _STAMP.match(line)
        if m is None:
            continue  # a record's second line ("Probably due to long platform interrupts"): in the record's entry
        mono = int(m.group(1)) * 1_000_000 + int(m.group(2))
        message: object = line[m.end() :]
        if "general protection fault" in line:
            message = list(str(message).encode())  # journalctl's form of a value it does not print as a string
        out.append({
            "__CURSOR": f"s=0;i={i + 1:x}", "__REALTIME_TIMESTAMP": str(int(BOOT.timestamp()) * 1_000_000 + mono),
            "__MONOTONIC_TIMESTAMP": str(mono + 7), "_BOOT_ID": "4f3c2a1b9d8e4c7fa1b2c3d4e5f60718",
            "_TRANSPORT": "kernel", "PRIORITY": "4", "SYSLOG_IDENTIFIER": "kernel",
            "_SOURCE_MONOTONIC_TIMESTAMP": str(mono), "_HOSTNAME": "web01", "MESSAGE": message,
        })  # fmt: skip
        if i == 9:
            out.append({
                "__CURSOR": "s=0;i=ff", "__REALTIME_TIMESTAMP": "1796310000000000", "_TRANSPORT": "syslog",
                "SYSLOG_IDENTIFIER": "sshd", "_HOSTNAME": "web01", "MESSAGE": "BUG: not the kernel's",
            })  # fmt: skip
    return out


def _json(entries: list[dict[str, object]]) -> bytes:
    return b"".join(json.dumps(e, separators=(",", ":")).encode() + b"\n" for e in entries)


def _export(entries: list[dict[str, object]]) -> bytes:
    out = b""
    for e in entries:
        for name, value in e.items():
            if isinstance(value, list):  # the binary-safe form: name, length (64-bit little endian), bytes
                data = bytes(value)
                out += name.encode() + b"\n" + struct.pack("<Q", len(data)) + data + b"\n"
            else:
                out += f"{name}={value}\n".encode()
        out += b"\n"
    return out


@pytest.mark.parametrize("form", ["json", "export"])
def test_a_journal_export_is_read_as_its_kernel_log(tmp_path: Path, form: str) -> None:
    entries = _entries()
    path = tmp_path / f"kern.{form}"
    path.write_bytes(_json(entries) if form == "json" else _export(entries))
    env = {"TZ": "UTC", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-m", "forensics", "dmesg", "--format", "json", str(path)],
        capture_output=True, text=True, timeout=120, check=False, cwd=ROOT, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    (report,) = doc["sources"][0]["reports"]
    assert report["title"] == TITLE
    assert not report["corrupted"]
    # The entry of the report's first line (after the sshd one): in JSON the file's line, in export the entry.
    first = next(i for i, e in enumerate(entries, 1) if isinstance(e["MESSAGE"], list))
    assert report["start_line"] == first
    assert report["start_time"] == 11.469644
    # The boot: the entries' wall time less their printk time.
    assert abs(doc["incident"]["boot_time"]["wall"] - BOOT.timestamp()) < 1e-3, doc["incident"]["boot_time"]
    assert doc["incident"]["host"] == "web01"
    assert "not the kernel's" not in done.stdout
    # Every cited line resolves in the file, read as the readers read it.
    result = analyse_logs([str(path)], live=False)
    assert result.incident.findings
    assert check_findings(result.incident.findings) == []


def test_a_plain_log_is_not_taken_for_a_journal_export() -> None:
    from forensics.journal_text import journal_kind

    assert journal_kind(b'{"level":"info","msg":"x"}\n') is None
    assert journal_kind(b"[    0.000000] Linux version 6.12.0\n") is None
    assert journal_kind(b"__CURSOR=s=0;i=1\n") == "export"
    assert journal_kind(b'{"__CURSOR":"s=0;i=1"}\n') == "json"


def test_an_entry_without_its_own_printk_time_gets_no_receipt_time_as_one() -> None:
    # A kernel entry that came in over syslog (or an --output-fields export) has no _SOURCE_MONOTONIC_TIMESTAMP:
    # journald's receipt time (__MONOTONIC_TIMESTAMP) is not the kernel's printk time, so no "[ s.us]" is made of it.
    from forensics.journal_text import entry_line

    fields: dict[str, object] = {
        "SYSLOG_IDENTIFIER": "kernel", "MESSAGE": "BUG: kernel NULL pointer dereference, address: 0000000000000008",
        "__MONOTONIC_TIMESTAMP": "7000123456", "__REALTIME_TIMESTAMP": "1796626282000000", "_HOSTNAME": "web01",
    }  # fmt: skip
    line = entry_line(fields).decode()
    assert line.endswith(" web01 kernel: BUG: kernel NULL pointer dereference, address: 0000000000000008"), line
    assert "7000.123456" not in line and "[" not in line
    del fields["__REALTIME_TIMESTAMP"]
    assert entry_line(fields) == b"BUG: kernel NULL pointer dereference, address: 0000000000000008"
    # Its own printk time is kept.
    fields["_SOURCE_MONOTONIC_TIMESTAMP"] = "5123004511"
    assert entry_line(fields) == b"[ 5123.004511] BUG: kernel NULL pointer dereference, address: 0000000000000008"


def test_a_cut_json_entry_is_kept_as_its_text_not_dropped() -> None:
    """A journalctl -o json file cut inside its last entry: that line is no JSON, and was dropped, so a file of one
    such entry was refused as "it is empty" and a cut report's header lost; it is kept as text for the log reader."""
    from forensics.journal_text import convert

    whole = json.dumps({"_TRANSPORT": "kernel", "MESSAGE": "Linux version 6.1.0", "__REALTIME_TIMESTAMP": "1"})
    cut = '{"MESSAGE":"BUG: unable to handle page fault for address: 0000000000000008","_TRANSPORT":"kern'
    lines = convert(f"{whole}\n{cut}".encode()).decode().splitlines()
    assert len(lines) == 2 and lines[0].endswith("Linux version 6.1.0") and lines[1] == cut, lines
