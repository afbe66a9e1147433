"""A CTF trace whose stream files are not its metadata's is refused, one line, exit 3, as babeltrace2 refuses it.

Review 11 #6: a kernel trace with a user-space trace's metadata copied over its own was read: exit 0,
"25,769,803,776 events lost (100%)", the other trace's host, advice to enlarge the buffers.  Here the project's
own LTTng session (tests/data/lttng/kernel-session.tar.xz): its kernel streams beside its user-space metadata
(another uuid), and a stream file whose first packet is rewritten to name an undeclared stream class or
impossible sizes (the test's own bytes, at the offsets the session's metadata gives them).
"""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import pytest

from tests.collectors.ctf_check import extract_session
from tests.helpers import Ran, cli_run

pytestmark = pytest.mark.xdist_group("lttng-metadata")


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return extract_session(tmp_path_factory.mktemp("lttng"))


def _trace(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], path: Path) -> Ran:
    return cli_run(monkeypatch, capsys, "trace", str(path))


def _one_line_refusal(ran: Ran, stream: Path, said: str) -> None:
    assert ran.returncode == 3, ran.stderr
    assert ran.stdout == ""
    errors = [line for line in ran.stderr.splitlines() if line.startswith("kforensic: error:")]
    assert errors == [f"kforensic: error: {stream}: {said}: a stream of another trace than {stream.parent}/metadata"]


def _uuid(text: bytes) -> str:
    """The trace uuid the metadata names (its ``uuid = "..."`` in the trace block), found by the test itself."""
    start = text.index(b'uuid = "') + len(b'uuid = "')
    return text[start : start + 36].decode()


def test_streams_beside_another_traces_metadata_are_refused(
    session: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    mixed = tmp_path / "mixed"
    shutil.copytree(session / "kernel", mixed)
    ust = session / "ust" / "uid" / "0" / "64-bit" / "metadata"
    shutil.copy(ust, mixed / "metadata")
    got = _trace(monkeypatch, capsys, mixed)
    theirs, ours = _uuid((session / "kernel" / "metadata").read_bytes()), _uuid(ust.read_bytes())
    assert theirs != ours
    _one_line_refusal(got, mixed / "kch_0", f"its packets carry trace uuid {theirs}, the metadata's is {ours}")
    assert "events lost" not in got.stdout + got.stderr


def _rewritten(session: Path, tmp_path: Path, offset: int, value: int, fmt: str) -> Path:
    """The kernel trace with one field of ``kch_0``'s first packet rewritten (little endian, as recorded)."""
    out = tmp_path / "kernel"
    shutil.copytree(session / "kernel", out)
    data = bytearray((out / "kch_0").read_bytes())
    assert struct.unpack_from("<I", data, 0)[0] == 0xC1FC1FC1  # the layout this test writes into: magic, uuid, ...
    struct.pack_into(fmt, data, offset, value)
    (out / "kch_0").write_bytes(bytes(data))
    return out


def test_an_undeclared_stream_class_or_impossible_sizes_are_refused(
    session: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # LTTng's packet header: magic (u32), uuid (16 bytes), stream_id (u32), stream_instance_id (u64); then the
    # packet context: timestamp_begin, timestamp_end, content_size, packet_size (u64 each), ...
    bad_id = _rewritten(session, tmp_path / "a", 20, 7, "<I")
    _one_line_refusal(
        _trace(monkeypatch, capsys, bad_id),
        bad_id / "kch_0",
        "its first packet names stream class 7, which the metadata does not declare (it declares 0)",
    )
    content_at = 4 + 16 + 4 + 8 + 8 + 8
    small = _rewritten(session, tmp_path / "b", content_at + 8, 64, "<Q")  # packet_size 64 bits < content_size
    ran = _trace(monkeypatch, capsys, small)
    assert ran.returncode == 3 and "its first packet's sizes are impossible" in ran.stderr, ran.stderr


def test_files_beside_the_ctf_trace_are_named_as_not_read_with_their_command(
    session: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Review 11 #7: an ftrace text and a perf.data dropped beside an LTTng trace were left out without a word, and
    the verdict said the trace had no scheduling events."""
    mixed = tmp_path / "mixed"
    shutil.copytree(session / "kernel", mixed / "kernel")
    (mixed / "hog.txt").write_text("# tracer: nop\n")
    (mixed / "hot.data").write_bytes(b"PERFILE2" + bytes(256))
    (mixed / "tids.txt").write_text("request 4242\nworker 4243\n")  # a workload's notes (record.sh's): no recording
    # perf script's text of samples, which kforensic profile reads (ue14 #4: 7e290676 left it out unsaid)
    (mixed / "samples.txt").write_text("kf-hog  4242/4242 [001] 5123.004511:   10101010 cpu-clock:ppp:\n")
    ran = cli_run(monkeypatch, capsys, "trace", str(mixed), "-f", "md")  # (markdown: lines as they are, unwrapped)
    assert ran.returncode in (0, 1), ran.stderr
    (said,) = [line for line in ran.stdout.splitlines() if "not read:" in line]
    assert said.endswith(
        f"warning: not read: 3 recording(s) beside the CTF trace(s), in none of them: {mixed}/hog.txt (kforensic trace "
        f"{mixed}/hog.txt), {mixed}/hot.data (kforensic profile {mixed}/hot.data), {mixed}/samples.txt (kforensic "
        f"profile {mixed}/samples.txt); give each to its own command "
        "(report --trace/--profile takes several)"
    )
    alone = _trace(monkeypatch, capsys, session / "kernel")
    assert "not read:" not in alone.stdout
