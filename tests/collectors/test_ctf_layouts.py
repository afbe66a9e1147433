"""Every layout TSDL allows, decoded by both CTF decoders: random layouts written by a test encoder.

The encoder (tests/collectors/ctf_encoder.py) writes random TSDL (structs, arrays and sequences of
structs, bit-fields at any offset and alignment, enums, variants selected by their enum tag, strings
inside compounds, nested sequences, both byte orders, LTTng's compact event header with its 27-bit
clock and extended form) and encodes random events.  The general decoder must give back the values
written; the compiled decoder must find the same events at the same offsets and times with the same
field values.  A stream whose variant tag selects no option is an error naming the event and the byte.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collectors.ctf.general import DecodeError, decode_stream
from collectors.ctf.metadata import parse_metadata
from collectors.ctf.reader import Session, describe
from tests.collectors import ctf_encoder as enc
from tests.collectors.ctf_check import compare


@st.composite
def traces(draw: st.DrawFn) -> enc.Trace:
    payloads = draw(st.lists(enc.structs(), min_size=1, max_size=3))
    n_ids = len(payloads)
    events = []
    for _ in range(draw(st.integers(1, 12))):
        eid = draw(st.integers(0, n_ids - 1))
        delta = draw(st.sampled_from([0, 1, 1000, (1 << 27) - 1, 1 << 27, 1 << 30]))
        events.append((eid, delta, enc.values(draw, payloads[eid])))
    return enc.make_trace(draw(st.booleans()), draw(st.booleans()), payloads, events, draw(st.integers(1, 5)))


def write(tmp: Path, trace: enc.Trace) -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "metadata").write_text(trace.metadata)
    (tmp / "channel0_0").write_bytes(trace.stream)
    return tmp


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(trace=traces())
def test_random_layouts_decode_back_by_both_decoders(
    tmp_path_factory: pytest.TempPathFactory, trace: enc.Trace
) -> None:
    path = write(tmp_path_factory.mktemp("ctf"), trace)
    meta = parse_metadata(path / "metadata")
    got = [(ev.id, ev.cycles, ev.fields) for pk in decode_stream(meta, trace.stream) for ev in pk.events]
    assert got == trace.events
    assert compare(meta, trace.stream) == len(trace.events)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(trace=traces(), kernel=st.booleans())
def test_a_stream_is_said_to_span_its_first_to_its_last_event(
    tmp_path_factory: pytest.TempPathFactory, trace: enc.Trace, kernel: bool
) -> None:
    """Its first and last event of any kind, as babeltrace2 lists them: in a kernel trace these events are of
    kinds the analysis does not keep (they were the first and last events kept: bug446190's CPU1 was said to
    start 26.6 us after its first event)."""
    if kernel:
        trace = enc.Trace(trace.metadata.replace('domain = "ust"', 'domain = "kernel"'), trace.stream, trace.events)
    path = write(tmp_path_factory.mktemp("ctf"), trace)
    s = Session(str(path))
    for _rows, _owner in s.rows():
        pass
    (stream,) = s.streams
    assert stream.events == len(trace.events)
    assert (stream.first_ts, stream.last_ts) == (trace.events[0][1], trace.events[-1][1])  # 1 GHz, no offset
    (described,) = describe(s)["traces"][0]["streams"]  # type: ignore[index]
    assert described["first_ts"] == trace.events[0][1] / 1e9


def _bitfield_trace(big: bool) -> enc.Trace:
    """poll's shape: a sequence of structs with bit-field members, behind a variant and a string."""
    bits = (*((f"_E{k}", enc.TInt(1, 1)) for k in range(12)), ("_padding", enc.TInt(4, 1)))
    fd = enc.TStruct((("fd", enc.TInt(32, 8, True)), ("_events", enc.TStruct(bits)), ("tag", enc.TInt(3, 1))))
    payload = enc.TStruct(
        (
            ("name", enc.TString()),
            ("_fds_length", enc.TInt(32, 8)),
            ("fds", enc.TSeq(fd, "_fds_length")),
            ("kind", enc.TEnum(enc.TInt(8, 8), (("a", 0, 0), ("b", 1, 1)))),
            ("v", enc.TVariant("kind", (("a", enc.TInt(13, 1, True)), ("b", enc.TString())))),
        )
    )
    events = []
    for k in range(5):
        fds = [
            {"fd": k - j, "events": {f"E{b}": (k + j + b) & 1 for b in range(12)} | {"padding": j}, "tag": j}
            for j in range(k)
        ]
        events.append(
            (
                0,
                17 + k,
                {"name": f"p{k}", "fds_length": k, "fds": fds, "kind": k & 1, "v": {"b": "x"} if k & 1 else {"a": -k}},
            )
        )
    return enc.make_trace(big, True, [payload], events, 2)


@pytest.mark.parametrize("big", [False, True])
def test_sequence_of_bitfield_structs_is_read_by_the_session(tmp_path: Path, big: bool) -> None:
    trace = _bitfield_trace(big)
    path = write(tmp_path / "t", trace)
    meta = parse_metadata(path / "metadata")
    assert compare(meta, trace.stream) == 5
    s = Session(str(path))
    rows = np.concatenate([r for r, _o in s.rows()])
    assert len(rows) == 5 and not s.notes()
    assert [st.events for st in s.streams] == [5]


def test_variant_tag_without_option_names_event_and_byte(tmp_path: Path) -> None:
    trace = _bitfield_trace(False)
    path = write(tmp_path / "t", trace)
    meta = parse_metadata(path / "metadata")
    first = decode_stream(meta, trace.stream)[0].events[0]
    data = bytearray(trace.stream)
    assert first.flat["fds#len"] == 0
    tag_byte = first.flat["fds"]  # the sequence is empty: the enum tag is the byte where it starts
    assert data[tag_byte] == first.flat["kind"] == 0
    data[tag_byte] = 7  # no label
    with pytest.raises(DecodeError, match=r"in event ev0 at byte \d+"):
        decode_stream(meta, bytes(data))
    (path / "channel0_0").write_bytes(bytes(data))
    s = Session(str(path))
    list(s.rows())
    (note,) = s.notes()
    assert "variant's tag selects none of its options" in note and "event ev0 at byte" in note
    assert s.streams[0].events == 0  # the first packet stopped at its first event: nothing silently skipped


BT2_DUMP = Path(__file__).with_name("bt2_dump.py")


@pytest.mark.skipif(not Path("/usr/bin/python3").exists() or shutil.which("babeltrace2") is None, reason="needs bt2")
@pytest.mark.parametrize("big", [False, True])
def test_babeltrace2_reads_the_encoder_as_the_decoders_do(tmp_path: Path, big: bool) -> None:
    """The third reader (python3-bt2): the encoder's bit order is CTF's, not one both decoders share by mistake."""
    trace = _bitfield_trace(big)
    path = write(tmp_path / "t", trace)
    res = subprocess.run(["/usr/bin/python3", str(BT2_DUMP), str(path)], capture_output=True, text=True, check=False)
    if res.returncode == 2:
        pytest.skip(res.stderr.strip())
    assert res.returncode == 0, res.stderr
    bt = json.loads(res.stdout)
    assert [e["fields"] for e in bt] == [json.loads(json.dumps(p)) for _i, _c, p in trace.events]
    assert [e["cycles"] for e in bt] == [c for _i, c, _p in trace.events]
