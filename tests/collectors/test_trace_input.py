"""Opening traces: plain text, gzip, trace.dat through trace-cmd (and its absence), saved text."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from collectors.trace_input import TEXT_NAMES_NONE, NamedSystem, open_trace, trace_dat_system
from forensics.errors import InputError
from forensics.model import NotAvailable
from tests.detectors.sched.traces import scenario_text

TRACEFS = Path("/sys/kernel/tracing")


def _read_all(name: str, save: Path | None = None) -> tuple[bytes, str, str]:
    with open_trace(name, save) as stream:
        data = b"".join(stream.chunks)
    assert stream.records and stream.records[0].error is None
    return data, stream.kind, stream.name


def test_plain_and_gzip_text_give_the_same_bytes(tmp_path: Path) -> None:
    text = scenario_text("ftrace").encode()
    plain = tmp_path / "t.txt"
    plain.write_bytes(text)
    packed = tmp_path / "t.txt.gz"
    packed.write_bytes(gzip.compress(text[:500]) + gzip.compress(text[500:]))  # two members, like cat a.gz b.gz
    assert _read_all(str(plain)) == (text, "text", str(plain))
    data, kind, name = _read_all(str(packed))
    assert (data, kind) == (text, "gzip text") and name.endswith("(gunzipped)")


def test_saved_text_is_private_and_cited(tmp_path: Path) -> None:
    packed = tmp_path / "t.txt.gz"
    packed.write_bytes(gzip.compress(b"cpus=2\n"))
    save = tmp_path / "saved.txt"
    data, _kind, name = _read_all(str(packed), save)
    assert name == str(save) and save.read_bytes() == data == b"cpus=2\n"
    assert stat.S_IMODE(save.stat().st_mode) == 0o600


def test_corrupt_gzip_is_one_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.gz"
    bad.write_bytes(b"\x1f\x8b" + b"\x00" * 40)
    with pytest.raises(InputError, match="corrupt gzip"):
        _read_all(str(bad))


def test_truncated_gzip_is_read_up_to_the_cut_and_said(tmp_path: Path) -> None:
    """A gzip file cut short: the text before the cut is analysed, and the input's record says it was cut."""
    text = scenario_text("ftrace").encode() * 20
    whole = gzip.compress(text)
    cut = tmp_path / "cut.txt.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    with open_trace(str(cut)) as stream:
        data = b"".join(stream.chunks)
    assert 0 < len(data) < len(text) and text.startswith(data)
    [record] = stream.records
    assert record.error is not None and "ends early" in record.error and "truncated" in record.error
    (tmp_path / "whole.txt.gz").write_bytes(whole)
    assert _read_all(str(tmp_path / "whole.txt.gz"))[0] == text  # (and no error: see _read_all)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        _read_all(str(tmp_path / "nope.txt"))


def test_trace_dat_without_trace_cmd_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dat = tmp_path / "trace.dat"
    dat.write_bytes(b"\x17\x08Dtracing6\x00" + b"\x00" * 64)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(InputError) as info:
        _read_all(str(dat))
    assert "trace-cmd is not installed" in info.value.message and "\n" not in info.value.message
    assert info.value.hint is not None and "apt-get install trace-cmd" in info.value.hint


def _said_silent_failure(dat: Path) -> str:
    """The one line a trace.dat that ``trace-cmd report`` prints nothing of is refused with."""
    with pytest.raises(InputError) as info:
        _read_all(str(dat))
    said = info.value.message
    # ue15 #13: "trace-cmd report failed: exit status 0, no output", a failure said with a success's status.
    assert "failed" not in said and "\n" not in said, said
    assert said.startswith(f"{dat}: trace-cmd report printed nothing: no event, no header and no error (exit status 0)")
    assert info.value.hint == "check that the file is a complete trace.dat"
    return said


@pytest.mark.skipif(shutil.which("trace-cmd") is None, reason="trace-cmd is not installed")
def test_broken_trace_dat_reports_trace_cmd_failure(tmp_path: Path) -> None:
    """trace-cmd 3.1.6 exits 0 with no output and no message on this header; ``trace-cmd dump`` says where it stops."""
    dat = tmp_path / "trace.dat"
    dat.write_bytes(b"\x17\x08Dtracing6\x00" + b"\x00" * 64)
    assert _said_silent_failure(dat).endswith("; `trace-cmd dump` stops at: wrong header string:")


def _record_trace_dat(tmp_path: Path, event: str = "sched/sched_switch") -> Path:
    """A few ``event`` events (sched_switch) recorded into a private tracefs instance, extracted as a trace.dat."""
    inst = TRACEFS / "instances" / f"kforensic_test_{os.getpid()}"
    inst.mkdir()
    try:
        (inst / "events" / event / "enable").write_text("1")
        (inst / "tracing_on").write_text("1")
        subprocess.run(["sleep", "0.05"], check=True)
        (inst / "tracing_on").write_text("0")
        dat = tmp_path / "live.dat"
        subprocess.run(
            ["trace-cmd", "extract", "-B", inst.name, "-o", str(dat)], check=True, capture_output=True, timeout=60
        )
    finally:
        if inst.exists():
            inst.rmdir()
    return dat


def _needs_tracefs(test: Callable[..., None]) -> Callable[..., None]:
    """The marks of a test that records into tracefs (root, trace-cmd, a tracefs with instances)."""
    for mark in (
        pytest.mark.live,
        pytest.mark.skipif(shutil.which("trace-cmd") is None, reason="trace-cmd is not installed"),
        pytest.mark.skipif(os.geteuid() != 0 or not (TRACEFS / "instances").is_dir(), reason="needs root and tracefs"),
    ):
        test = mark(test)
    return test


@_needs_tracefs
def test_a_cut_trace_dat_recorded_here_says_what_trace_cmd_did(tmp_path: Path) -> None:
    """A real recording cut in half: trace-cmd report exits 0 having printed nothing; that is said, not "failed:
    exit status 0", with where trace-cmd's own dump stops reading it."""
    whole = _record_trace_dat(tmp_path)
    cut = tmp_path / "cut.dat"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    said = _said_silent_failure(cut)
    assert "; `trace-cmd dump` stops at: " in said and not said.endswith("stops at: ")


@_needs_tracefs
def test_real_trace_dat_recorded_here(tmp_path: Path) -> None:
    """Record a few sched_switch events into a private instance, extract trace.dat, read it back."""
    dat = _record_trace_dat(tmp_path)
    data, kind, name = _read_all(str(dat))
    assert kind == "trace.dat via trace-cmd report" and name.endswith("(trace-cmd report)")
    assert b"sched_switch:" in data
    # ue15 #7: the machine trace-cmd wrote into the trace.dat (its UNAME option) was ignored ("a trace does not
    # name its host"); ue15 #1: an instance named with a final digit (this one's pid) was "not trace events".
    uname = os.uname()
    text = f"{uname.sysname} {uname.nodename} {uname.release} {uname.machine}"
    named = trace_dat_system(dat)
    assert named == NamedSystem(
        uname.nodename,
        uname.release,
        f"the trace.dat's UNAME option '{text}' (trace-cmd dump --options)",
        named.line if isinstance(named, NamedSystem) else 0,
        text,
    )
    # Its line of `trace-cmd dump --options`, cited for the release (a trace.dat without findings is set apart by it).
    options = subprocess.run(["trace-cmd", "dump", "--options", "-i", str(dat)], capture_output=True, check=True)
    assert options.stdout.decode().split("\n")[named.line - 1] == text, named
    ran = subprocess.run(
        [sys.executable, "-m", "forensics", "trace", str(dat), "-f", "json"],
        capture_output=True,
        timeout=600,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    doc = json.loads(ran.stdout)
    assert doc["parse"]["malformed_lines"] == 0 and doc["parse"]["events"] > 0
    incident = doc["incident"]
    assert (incident["host"], incident["kernel_release"]) == (uname.nodename, uname.release)
    assert f"host {uname.nodename}, kernel {uname.release} read from the trace.dat's UNAME option" in str(incident)


def test_a_text_trace_names_no_machine(tmp_path: Path) -> None:
    """Text has no header naming its machine: not available, and why (a trace.dat or LTTng trace would say)."""
    plain = tmp_path / "t.txt"
    plain.write_text(scenario_text("ftrace"))
    with open_trace(str(plain)) as stream:
        b"".join(stream.chunks)
    assert isinstance(stream.system, NotAvailable) and stream.system.reason == TEXT_NAMES_NONE
