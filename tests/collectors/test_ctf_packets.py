"""An LTTng CPU told by its packets and all its events (user review round 4, #2, #3, #4).

The project's kernel session (tests/data/lttng/kernel-session.tar.xz, 2 CPUs): each CPU's first and last event in
the CPU table are its stream's, of any kind (they were its first and last *analysed* event), and its packets'
``timestamp_begin``/``timestamp_end`` say when its buffer ran (Trace Compass draws an idle CPU covered so: on
bug446190 two idle NOHZ CPUs were said to "stop reporting" though their packets ran to the end, none lost).  A
copy whose first packet of CPU0 ends 2 s before the next begins is what a lost packet of a trace without
``packet_seq_num`` (LTTng before 2.8) looks like: a gap, across which nothing is measured.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from collectors.ctf import parsed
from collectors.ctf.general import GeneralDecoder
from forensics.pipelines.trace import analyse_trace_file
from forensics.types.trace_result import TraceResult
from tests.collectors.ctf_check import extract_session


@pytest.fixture(scope="module")
def intact(tmp_path_factory: pytest.TempPathFactory) -> TraceResult:
    return analyse_trace_file(str(extract_session(tmp_path_factory.mktemp("intact")) / "kernel"))


def _streams(result: TraceResult) -> dict[str, dict[str, object]]:
    assert result.ctf is not None
    traces = result.ctf["traces"]
    assert isinstance(traces, list)
    return {str(s["file"]).rsplit("/", 1)[-1]: s for t in traces for s in t["streams"]}


def test_a_cpus_first_and_last_event_are_its_streams_of_any_kind(intact: TraceResult) -> None:
    streams = _streams(intact)
    for cpu in intact.analysis.cpus:
        s = streams[f"kch_{cpu.cpu}"]
        assert (cpu.first_ts, cpu.last_ts) == (s["first_ts"], s["last_ts"])
    window = intact.analysis.window
    assert isinstance(window, tuple)
    assert window == (min(s["first_ts"] for s in streams.values()), max(s["last_ts"] for s in streams.values()))
    assert intact.analysis.coverage.stopped == () and intact.analysis.coverage.started == ()


def test_a_packet_that_begins_after_the_one_before_ended_is_a_gap(tmp_path: Path, intact: TraceResult) -> None:
    root = extract_session(tmp_path) / "kernel"
    stream = root / "kch_0"
    data = bytearray(stream.read_bytes())
    meta, _layouts = parsed.load(root / "metadata")
    head = GeneralDecoder(meta).packet(np.frombuffer(bytes(data), dtype=np.uint8), 0, salvage=True).header
    end, begin = head["timestamp_end"], head["timestamp_begin"]
    at = data.find(struct.pack("<Q", end), 0, 128)
    assert at > 0 and meta.clocks and next(iter(meta.clocks.values())).freq == 1_000_000_000
    struct.pack_into("<Q", data, at, end - 2_000_000_000)  # the next packet begins 2 s after this one "ended"
    stream.write_bytes(bytes(data))
    assert end - 2_000_000_000 > begin
    cut = analyse_trace_file(str(root))
    assert _streams(cut)["kch_0"]["packet_gaps"] == 1 and _streams(intact)["kch_0"]["packet_gaps"] == 0
    assert any("kch_0: 1 packet(s) begin after the one before ended" in n for n in cut.notes)
    assert (cut.analysis.coverage.lost_markers, intact.analysis.coverage.lost_markers) == (1, 0)
    # Nothing on CPU0 is measured across the gap (its second packet's begin, the old end).
    gap = end / 1e9
    spans = [t.runs.worst for t in cut.analysis.tasks] + [t.wakeup.worst for t in cut.analysis.tasks]
    assert not [s for s in spans if s is not None and s.cpu == 0 and s.start < gap < s.start + s.duration]
    assert cut.parse.events == intact.parse.events  # every event is still read


def test_a_cpu_whose_last_event_is_of_a_kind_not_analysed_is_cited_so(tmp_path: Path) -> None:
    """CPU0's stream stopped short at a packet boundary (the session's kch_0 holds two packets: the second left out):
    CPU0 stops reporting at its last event, whatever its kind.  That event, not analysed, had no text, and the
    coverage finding citing it ended the run in an internal error ("evidence needs a non-empty excerpt", found
    2026-12-07 on a cut copy of an LTTng 2.5 trace)."""
    root = extract_session(tmp_path) / "kernel"
    stream = root / "kch_0"
    stream.write_bytes(stream.read_bytes()[: 1 << 20])  # the first packet's 1 MiB sub-buffer, whole
    result = analyse_trace_file(str(root))
    (cpu0,) = (c for c in result.analysis.cpus if c.cpu == 0)
    (stopped,) = (f for f in result.incident.findings if f.title == "CPU0 stops reporting before the trace ends")
    (cited,) = (e for e in stopped.evidence if e.cpu == 0)
    assert cited.excerpt and cited.timestamp is not None and cited.timestamp.seconds == cpu0.last_ts
    assert cited.locator.event is not None and cited.locator.event.stream.endswith("kch_0")
