"""The CTF reader on the project's own LTTng UST recording (tests/data/lttng/ust.tar.gz), whole and damaged.

Damage is made on copies in a temporary folder: a directory without ``metadata``, a stream file cut
inside a packet, a packet whose ``events_discarded`` grew (lost events), metadata this reader cannot
parse, two traces on different clocks in one session, a session with empty stream files.  Each gives
one clear line (exit 3) or a warning; never a traceback or a silent figure.
"""

from __future__ import annotations

import gzip
import json
import shutil
import struct
import subprocess
import tarfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from collectors.ctf import layouts as d
from collectors.ctf.metadata import read_metadata_text
from collectors.ctf.reader import Session
from forensics.errors import InputError
from forensics.model import NotAvailable
from forensics.pipelines.spans import SpanOptions
from forensics.pipelines.trace import analyse_trace_file
from forensics.report.examined import verdict_line
from forensics.report.spans_json import report_to_dict
from tests.collectors import ctf_encoder as enc
from tests.collectors.ctf_check import GENERAL_DECODED, extract_session, stream_events
from tests.forensics.commands.test_trace_cli import run
from tests.helpers import cli_run

DATA = Path(__file__).resolve().parents[1] / "data" / "lttng"
TRACE = Path("uid/0/64-bit")
# Byte offsets in the packet header and context of this lttng-ust 2.13 trace (all fields 8-bit aligned):
# magic, uuid[16], stream_id, stream_instance_id, timestamp_begin, timestamp_end, content_size,
# packet_size, packet_seq_num, events_discarded, cpu_id.
PACKET_SIZE_AT, DISCARDED_AT = 56, 72


@pytest.fixture
def session(tmp_path: Path) -> Path:
    with tarfile.open(DATA / "ust.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    return tmp_path / "ust"


def packets(stream: Path) -> list[int]:
    data = stream.read_bytes()
    out, pos = [], 0
    while pos < len(data):
        out.append(pos)
        pos += struct.unpack_from("<Q", data, pos + PACKET_SIZE_AT)[0] // 8
    return out


def test_reads_every_event_in_time_order(session: Path) -> None:
    s = Session(str(session))
    rows = [r for r, _o in s.rows()]
    merged = np.concatenate(rows)
    assert len(merged) == 240  # 60 requests x (2 tracef + 2 provider events)
    assert bool(np.all(np.diff(merged[:, d.R_TS]) >= 0))
    assert sum(st.events for st in s.streams) == 240
    assert not s.notes()
    if shutil.which("babeltrace2"):
        text = subprocess.run(["babeltrace2", str(session)], capture_output=True, text=True, check=True).stdout
        assert len(text.splitlines()) == 240


def test_directory_without_metadata_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "channel0_0").write_bytes(b"\0" * 64)
    res = run(str(tmp_path))
    assert res.returncode == 3
    assert res.stderr.splitlines()[0] == f"kforensic: error: {tmp_path}: no CTF trace below it (no 'metadata' file)"
    assert "Traceback" not in res.stderr


def test_truncated_stream_file_is_a_warning(session: Path) -> None:
    stream = session / TRACE / "channel0_0"
    starts = packets(stream)
    assert len(starts) >= 1
    cut = starts[-1] + 100  # inside the last packet
    data = stream.read_bytes()
    stream.write_bytes(data[:cut])
    result = analyse_trace_file(str(session))
    assert any("truncated stream file" in n and "channel0_0" in n for n in result.notes)
    assert result.parse.events < 240  # the cut packet is not read


def _stream_rows(root: Path, stream: Path, decoder: str) -> tuple[np.ndarray, Session]:
    """The rows of one stream file of the session at ``root`` read by ``decoder``: "plain", "compiled" (numba's
    JIT under the tests, tests/conftest.py), or "general" (every packet of the kernel trace handed to the general
    decoder, as a packet holding an event the layout programs cannot express is)."""
    s = Session(str(root), compiled=decoder == "compiled")
    if decoder == "general":
        for t in s.traces:
            if t.meta.domain == "kernel":
                t.layouts = replace(t.layouts, general=np.ones_like(t.layouts.general))
    at = next(i for i, st in enumerate(s.streams) if st.path == stream)
    got = [rows[owner == at] for rows, owner in s.rows()]
    return np.concatenate(got), s


@pytest.mark.xdist_group(GENERAL_DECODED)
@pytest.mark.parametrize("decoder", ["plain", "compiled", "general"])
def test_a_cut_packet_keeps_the_events_before_the_cut(tmp_path: Path, decoder: str) -> None:
    """A stream file that ends inside a packet (a copy cut short, a full disk) keeps the events that end before the
    cut, and its note says how many; they were all lost (the kernel session's kch_1 is one 770 KB packet: cut in
    half, none of its 16 397 events was read, only "at byte 0; the events after it were not read")."""
    whole = extract_session(tmp_path / "whole")
    # The reference is kch_1 read whole: its rows are the same without the other kernel stream beside it (each stream
    # is decoded from its own file; checked for the three decoders), which the general decoder took twice the time
    # of kch_1 to read (1.4 MB).  The cut session keeps every stream.
    for other in (whole / "kernel" / "kch_0", whole / "kernel" / "index" / "kch_0.idx"):
        other.unlink()
    root = extract_session(tmp_path / "cut")
    stream = root / "kernel" / "kch_1"
    data = stream.read_bytes()
    cut = len(data) // 2
    kept = [ev for ev in stream_events(stream) if ev.end <= cut * 8]
    assert len(kept) > 8000
    stream.write_bytes(data[:cut])
    rows, s = _stream_rows(root, stream, decoder)
    full, _s = _stream_rows(whole, whole / "kernel" / "kch_1", decoder)
    stop = kept[-1].end // 8
    assert np.array_equal(rows, full[full[:, d.R_OFF] < stop])  # the same rows as the whole file's, up to the cut
    cut_stream = next(st for st in s.streams if st.path == stream)
    assert cut_stream.events == len(kept)
    assert cut_stream.problem == (
        f"{stream}: the file ends inside a packet (truncated stream file): at byte {stop}; "
        f"the {len(kept)} events of the cut packet before it were read; the events after it were not read"
    )
    assert cut_stream.problem in s.notes()


def test_lost_events_are_counted_and_flagged(session: Path) -> None:
    stream = max(sorted((session / TRACE).glob("channel*")), key=lambda p: p.stat().st_size)
    last = packets(stream)[-1]
    data = bytearray(stream.read_bytes())
    struct.pack_into("<Q", data, last + DISCARDED_AT, 7)
    stream.write_bytes(bytes(data))
    result = analyse_trace_file(str(session))
    assert any("discarded 7 events" in n for n in result.notes)
    # Every recorded event is still read; the packet's discarded counter adds one marker of 7 lost events.
    coverage = result.analysis.coverage
    assert (result.parse.events, coverage.lost_markers, coverage.lost_events) == (240, 1, 7)
    # A UST session: no event is analysed, and the marker is not one (hello-lost: "32300 events (562 analysed)").
    assert result.parse.used == 0
    assert result.ctf is not None
    doc = json.loads(json.dumps(result.ctf))
    assert sum(st["discarded_events"] for t in doc["traces"] for st in t["streams"]) == 7


def test_metadata_in_an_unknown_layout_is_one_line(session: Path) -> None:
    meta = session / TRACE / "metadata"
    meta.write_text(
        read_metadata_text(meta).replace("struct packet_context {", "struct packet_context { quaternion q;", 1)
    )
    with pytest.raises(InputError, match=r"TSDL metadata: unknown type 'quaternion'") as err:
        analyse_trace_file(str(session))
    assert "\n" not in str(err.value)


def test_traces_on_different_clocks_are_not_joined(session: Path) -> None:
    other = session / "uid" / "1" / "64-bit"
    shutil.copytree(session / TRACE, other)
    meta = other / "metadata"
    text = read_metadata_text(meta)
    start = text.index('uuid = "', text.index("clock {")) + len('uuid = "')
    meta.write_text(text[:start] + "00000000-0000-0000-0000-000000000000" + text[start + 36 :])
    with pytest.raises(InputError, match=r"the traces use different clocks .*; their times cannot be joined"):
        analyse_trace_file(str(session))


def test_empty_session_is_one_line(session: Path) -> None:
    for stream in (session / TRACE).glob("channel*"):
        stream.write_bytes(b"")
    with pytest.raises(InputError, match="the session holds no events"):
        analyse_trace_file(str(session))


def test_ust_only_session_gives_spans_and_json(session: Path) -> None:
    result = analyse_trace_file(str(session))
    assert result.spans is not None and result.ctf is not None
    doc = json.loads(json.dumps(report_to_dict(result.spans)))
    assert {s["name"]: s["count"] for s in doc["stats"]} == {"infer": 60, "infer:request": 60}
    assert json.loads(json.dumps(result.ctf))["traces"][0]["clock"]["name"] == "monotonic"
    assert "no kernel events: slow spans are listed without a breakdown" in doc["notes"]


def test_csv_spans_and_a_bad_row(tmp_path: Path) -> None:
    ftrace = tmp_path / "k.txt"
    ftrace.write_bytes(gzip.decompress((DATA / "kernel.ftrace.txt.gz").read_bytes()))
    good = tmp_path / "spans.csv"
    good.write_text(
        "tid,name,start_ns,end_ns\n4003,req,1532115898000,1532117898000\n4003,req,1532200000000,1532205000000\n"
    )
    result = analyse_trace_file(
        str(ftrace),
        span_opts=SpanOptions(sources=(str(good),), kernel_clock="mono"),
    )
    assert result.spans is not None
    stats = {s.name: s for s in result.spans.stats}
    assert stats["req"].count == 2 and stats["req"].max == pytest.approx(0.005)
    bad = tmp_path / "bad.csv"
    bad.write_text("tid,name,start_ns,end_ns\n4003,req,abc,1\n")
    with pytest.raises(InputError) as err:
        analyse_trace_file(str(ftrace), span_opts=SpanOptions(sources=(str(bad),), kernel_clock="mono"))
    assert err.value.args[0] == f"{bad}:2: not a span row (tid, name, start_ns, end_ns)"


@pytest.mark.parametrize(
    ("env", "host", "kernel"),
    [
        ('domain = "kernel"; hostname = "box1"; kernel_release = "6.6.1";', "box1", "6.6.1"),
        ('domain = "ust"; hostname = "box1";', "box1", "a user-space trace does not name the kernel"),
        ('domain = "kernel"; hostname = "(none)";', "nothing set a host name", "does not name it (env.kernel_release)"),
    ],
)
def test_the_incident_names_the_host_and_kernel_the_metadata_names(
    tmp_path: Path, env: str, host: str, kernel: str
) -> None:
    """bug446190's metadata names host lager and kernel 3.10.31-ltsi; its report said "host not available: a trace
    does not name its host" (and its kernel)."""
    trace = enc.make_trace(False, True, [enc.TStruct((("v", enc.TInt(32, 8)),))], [(0, 10, {"v": 1})], 1)
    (tmp_path / "metadata").write_text(trace.metadata.replace('domain = "ust";', env))
    (tmp_path / "channel0_0").write_bytes(trace.stream)
    incident = analyse_trace_file(str(tmp_path)).incident
    for got, want in ((incident.host, host), (incident.kernel_release, kernel)):
        assert got == want if not isinstance(got, NotAvailable) else want in got.reason


@pytest.mark.parametrize(
    ("clock", "tracer", "epoch"),
    [
        ("offset = 0;", "kforensic-test", False),
        ("offset_s = 1412663327; offset = 522716450; absolute = TRUE;", "kforensic-test", True),
        ("offset = 1412663327522716450;", "lttng-ust", True),
    ],
)
def test_an_event_s_time_is_since_its_clock_s_origin_as_babeltrace2_prints_it(
    tmp_path: Path, clock: str, tracer: str, epoch: bool
) -> None:
    """The number of an event in its stream (1-based, across packets), and its time as babeltrace2 prints it: the
    clock's offset applied, a UTC date when its origin is the epoch (``absolute = TRUE``, or an LTTng trace's clock
    as babeltrace2 2.0 takes it), else seconds from the clock's own origin, said so (python3-bt2 2.0.4 on these
    three traces: origin_is_unix_epoch False, True, True; ns_from_origin 7000001021, 1412663334522717471 twice)."""
    events = [(0, 1_000_000_000 + k, {"v": k}) for k in range(7)]  # (id, clock delta, payload)
    trace = enc.make_trace(False, True, [enc.TStruct((("v", enc.TInt(32, 8)),))], events, 3)
    meta = trace.metadata.replace("offset = 0;", clock).replace("kforensic-test", tracer)
    (tmp_path / "metadata").write_text(meta)
    (tmp_path / "channel0_0").write_bytes(trace.stream)
    s = Session(str(tmp_path), compiled=False)
    rows = np.concatenate([r for r, _o in s.rows()])
    got = [s.stream_event(s.position(0, off)) for off in rows[:, d.R_OFF].tolist()]
    assert [(g.number, g.packet) for g in got if g is not None] == [(k + 1, k // 3) for k in range(7)]
    last = got[-1]
    assert last is not None and last.epoch is epoch and last.cycles == trace.events[-1][1] == 7_000_001_021
    if epoch:
        assert last.ns == 1412663327522716450 + last.cycles
        assert last.time_text() == "2014-10-07 06:28:54.522717471 UTC"
    else:
        assert last.time_text() == "7.000001021 s from clock monotonic's own origin"


def test_a_mark_is_cited_by_its_message_or_by_its_name_once(session: Path) -> None:
    """A tracef mark's excerpt quotes its message; a provider event without one (infer:request_begin, its id) is
    named once: "infer:request_begin 'infer:request_begin' id=15 vtid=4003" said the name twice."""
    from collectors.spans import ust_marks

    s = Session(str(session), compiled=False)
    marks, _notes = ust_marks(s, *s.ust_rows())
    texts = [m.ref.text for m in marks]
    named = [t for t in texts if t.startswith("infer:request_begin ")]
    said = [t for t in texts if t.startswith("lttng_ust_tracef:event '")]
    assert named and said
    assert all(t.count("infer:request_begin") == 1 and " id=" in t and " vtid=" in t for t in named), named[:3]


def test_an_empty_stream_file_is_a_warning(session: Path) -> None:
    """LTTng writes a packet to every stream (the project's recording's idle CPU1 stream holds one, with no event):
    a stream file of 0 bytes lost its events, and a CPU with them, which nothing said (review 11, 12c)."""
    assert not [n for n in Session(str(session)).notes() if "empty stream file" in n]
    streams = sorted((session / TRACE).glob("channel*"))
    small = min(streams, key=lambda p: p.stat().st_size)
    small.write_bytes(b"")
    result = analyse_trace_file(str(session))
    label = str(small.relative_to(session))
    assert (
        f"{label}: an empty stream file (0 bytes, not even the packet LTTng writes at a stop): its events are missing"
        " (a copy cut short?) and its CPU is not among those counted"
    ) in result.notes


def test_a_cut_stream_is_a_thing_not_judged_and_named_by_the_verdicts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """ue22 #10: a stream file that ends inside a packet gave "No problem found" from ``kforensic trace`` and "found no
    known kernel problem" from ``kforensic report --trace``, the cut only in a warning line.  It is a thing the trace
    could not judge (the examined block, the typed result) and both verdicts name it."""
    root = extract_session(tmp_path / "cut")
    stream = root / "kernel" / "kch_1"
    data = stream.read_bytes()
    stream.write_bytes(data[: len(data) // 2])
    result = analyse_trace_file(str(root))
    (cut,) = result.cuts
    assert cut.stream == "kernel/kch_1" and 0 <= cut.at < len(data) // 2
    # its CPU, held by the analysis's coverage: a coverage finding of CPU1 says the cut, not a full buffer (ue23 #7)
    assert cut.cpu == 1 and result.analysis.coverage.cuts == result.cuts
    said = f"events after byte {cut.at} of kernel/kch_1 (the stream file ends inside a packet)"
    assert cut.said() == said
    (examined,) = result.incident.examined
    assert said in examined.could_not and examined.cut == (said,)
    assert verdict_line(result.incident).endswith(f" It could not judge what was cut off: {said}.")
    md = tmp_path / "r.md"
    ran = cli_run(monkeypatch, capsys, "report", "--trace", root, "-o", md)
    assert ran.returncode in (0, 1), ran.stderr
    first = md.read_text().split("\n\n")[1]
    assert f"It could not judge what was cut off: {said}." in first, first
    whole = analyse_trace_file(str(extract_session(tmp_path / "whole")))
    assert whole.cuts == () and whole.incident.examined[0].cut == ()


@pytest.mark.parametrize(
    ("size", "how"),
    [
        # its last switch before the cut put a task on CPU1: it was taken to run it to the end ("still running
        # when the recording stopped", freeze._to_end), its run and the waits behind it counted to 26.813065
        (100100, "a task"),
        # the cut packet's timestamp_end (26.8 s) was taken as where CPU1's buffer covered to: no CPU stopped
        (400100, "the cut packet's end"),
    ],
)
def test_a_cpu_whose_stream_file_is_cut_is_covered_only_to_its_last_event(tmp_path: Path, size: int, how: str) -> None:
    """A cut CPU's silence after the cut is events not read: until 2026-12-07 CPU1 of the project's session with
    kch_1 cut there (its last event read 24.052079 or 25.649627) was covered to the trace's end (26.813065), by
    {how}; no CPU was said to stop reporting and cross-CPU figures reached into the time CPU1 was not read.  Now it
    stops at its last event: the coverage's common end is there, CPU1 is stopped, not running to the end."""
    root = extract_session(tmp_path / "cut")
    stream = root / "kernel" / "kch_1"
    data = stream.read_bytes()
    stream.write_bytes(data[:size])
    result = analyse_trace_file(str(root))
    (cut,) = result.cuts
    assert cut.cpu == 1, how
    analysis = result.analysis
    cov = analysis.coverage
    (cpu1,) = [c for c in analysis.cpus if c.cpu == 1]
    (cpu0,) = [c for c in analysis.cpus if c.cpu == 0]
    assert isinstance(cpu1.last_ts, float) and isinstance(cpu0.last_ts, float)
    assert cpu0.last_ts - cpu1.last_ts > 0.5  # CPU0 read on past the cut, up to the trace's end
    assert [r.cpu for r in cov.stopped] == [1], cov.note
    assert cov.running == (), cov.note
    assert isinstance(cov.common_end, float) and cov.common_end < cpu1.last_ts + 1e-3, (cov.common_end, cpu1.last_ts)
    # its busy and idle time end at its last event read, not at the trace's end
    assert isinstance(cpu1.busy, float) and isinstance(cpu1.idle, float)
    assert isinstance(cpu1.first_ts, float) and cpu1.busy + cpu1.idle <= cpu1.last_ts - cpu1.first_ts + 1e-6
    assert not [f for f in result.incident.findings if "still running" in f.title], how
