"""``kforensic trace`` names lttng_ust_cyg_profile's function addresses by the binary's symbols when the session's
statedump says where it was mapped (collectors/ust_symbols.py), and says once why when it cannot.

Until 2026-12-06 every call was ``addr=0x401461``: the baseline "the 20 ... span(s) of addr=0x401461" and the nested
call "addr=0x40140f" needed the program's own addrs.txt to be read.  The recording is made here by the project's
tests/data/lttng/cyg/record.sh (root, lttng-tools, lttng-ust, gcc and a mount namespace of its own; skipped, saying
which is missing, without them), which keeps the binary where the statedump says it is.  Where it could record, a
failure to record is the test's failure.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2] / "data" / "lttng" / "cyg"

#: record.sh's exit status when this machine cannot record (it says why on stderr).
CANNOT_RECORD = 77

# One pytest-xdist group: the module's recording is made once, on one worker (its two tests dealt to two workers
# could each make it, at the same moment).
pytestmark = pytest.mark.xdist_group("trace-cyg-symbols")


def _trace(session: Path, out: Path) -> dict[str, object]:
    cmd = [sys.executable, "-m", "forensics", "trace", str(session), "--format", "json", "-o", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    doc: dict[str, object] = json.loads(out.read_text())
    findings = doc["incident"]["findings"]  # type: ignore[index]
    assert all(f["severity"] not in ("medium", "high", "critical") for f in findings)
    return doc


def _slow(doc: dict[str, object]) -> dict[str, object]:
    (got,) = [f for f in doc["incident"]["findings"] if f["kind"] == "span-slow"]  # type: ignore[index]
    return got  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    """(the session's ust/ directory, the binary it ran, the functions' addresses the program printed)."""
    out = tmp_path_factory.mktemp("cygrec")
    binary = out / "calls"
    proc = subprocess.run(
        # load_model spins 300 ms, not the committed recording's 30: main's slow span cites a nested call from 25% of
        # it (detectors/spans/inside.py SHARE), and at load 12 the 1 ms pauses between requests took main to 252 ms,
        # serve(7)'s 30 ms no longer cited (test_trace_cyg_call_sites failed so in a loaded run, 2026-12-07).
        ["bash", str(DATA / "record.sh"), str(out), str(binary), "300"],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if proc.returncode == CANNOT_RECORD:
        pytest.skip(f"record.sh: {proc.stderr.strip()[-300:]}")
    if proc.returncode != 0:
        pytest.fail(f"record.sh failed (exit {proc.returncode}): {proc.stderr.strip()[-1000:]}", pytrace=False)
    with tarfile.open(out / "cyg.tar.gz") as tar:
        tar.extractall(out, filter="data")
    addrs = {n: f"0x{int(a, 16):x}" for n, a in (line.split() for line in (out / "addrs.txt").read_text().splitlines())}
    return out / "ust", binary, addrs


def test_the_calls_are_named_by_the_binary_symbols(recorded: tuple[Path, Path, dict[str, str]], tmp_path: Path) -> None:
    session, _binary, addrs = recorded
    doc = _trace(session, tmp_path / "t.json")
    finding = _slow(doc)
    baseline = finding["baseline"]
    assert isinstance(baseline, dict)
    assert f"span(s) of serve ({addrs['serve']}) at nesting depth 1" in baseline["name"], baseline
    inside = [f["value"] for f in finding["facts"] if f["name"] == "inside"]  # type: ignore[attr-defined, index]
    # (the recording's durations depend on the machine's load: 30 ms of spinning is not asserted)
    assert f"nested lttng_ust_cyg_profile:func load_model ({addrs['load_model']}) took " in inside[0], inside
    assert not [n for n in doc["spans"]["notes"] if "not resolved" in n]  # type: ignore[index]


def test_a_binary_no_longer_there_keeps_hex_and_says_why_once(
    recorded: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    session, binary, addrs = recorded
    moved = tmp_path / "calls.moved"
    shutil.move(binary, moved)
    try:
        doc = _trace(session, tmp_path / "t.json")
    finally:
        shutil.move(moved, binary)
    baseline = _slow(doc)["baseline"]
    assert isinstance(baseline, dict)
    assert f"span(s) of addr={addrs['serve']} at nesting depth 1" in baseline["name"], baseline
    notes = [n for n in doc["spans"]["notes"] if "not resolved" in n]  # type: ignore[index]
    assert notes == [f"lttng_ust_cyg_profile addresses not resolved to functions: {binary} not found"], notes


def test_a_session_without_statedump_says_so(tmp_path: Path) -> None:
    """The project's stored recording (tests/data/lttng/cyg/cyg.tar.gz) was made without the statedump."""
    with tarfile.open(DATA / "cyg.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    doc = _trace(tmp_path / "ust", tmp_path / "t.json")
    notes = [n for n in doc["spans"]["notes"] if "not resolved" in n]  # type: ignore[index]
    assert len(notes) == 1 and "no lttng_ust_statedump:bin_info event" in notes[0], notes
