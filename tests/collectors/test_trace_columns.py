"""The compiled scanner's batches hold exactly the events, fields and counts the line parser gives."""

from __future__ import annotations

import contextlib
import dataclasses
import gzip
import threading
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors import trace_columns
from collectors.trace_columns import BatchParser, read_batches
from collectors.trace_text import TraceParser
from forensics.errors import InputError
from forensics.model import SourceRecord
from forensics.types.trace import TraceEvent
from forensics.types.trace_batch import EventBatch, Interner, state_code
from tests.collectors.test_trace_fastpath import FIRST, HEADER, comms, cpus, flags, numbers, stamps, states, trace_line
from tests.detectors.sched.traces import DATA, LAYOUTS, scenario_text

COLUMNS = ("kind", "ts", "cpu", "line_no", "pid", "prio", "next_pid", "next_prio")


def saturated(value: float) -> float:
    """A field as its column holds it: integers beyond 64 bits are saturated."""
    if isinstance(value, int):
        return max(-(1 << 63), min(value, (1 << 63) - 1))
    return value


def batches_of(data: bytes, chunk: int) -> tuple[list[EventBatch], BatchParser]:
    """The batches of ``data`` fed in chunks of ``chunk`` bytes."""
    parser = BatchParser()
    out = [parser.feed_batch(data[i : i + chunk]) for i in range(0, len(data), chunk)]
    out.append(parser.finish_batch())
    return out, parser


def reference(data: bytes, chunk: int) -> tuple[list[TraceEvent], TraceParser]:
    """The records of the line parser (with its regex fast path), fed the same way."""
    parser = TraceParser()
    events: list[TraceEvent] = []
    for i in range(0, len(data), chunk):
        events += parser.feed(data[i : i + chunk])
    events += parser.finish()
    return events, parser


def assert_same(data: bytes, chunk: int) -> list[TraceEvent]:
    """Batches and records agree: every row, column, interned text, and the counts."""
    events, ref = reference(data, chunk)
    batches, parser = batches_of(data, chunk)
    assert asdict(parser.counts) == asdict(ref.counts)
    rows: list[TraceEvent] = []
    eid = 0
    for batch in batches:
        assert batch.first_eid == eid
        for i in range(len(batch)):
            ev = batch.event(i)
            rows.append(ev)
            assert type(ev.ts) is float and type(ev.line_no) is int and type(ev.pid) is int
            got = tuple(getattr(batch, name)[i] for name in COLUMNS)
            assert got == tuple(saturated(getattr(ev, name)) for name in COLUMNS)
            assert batch.state[i] == state_code(ev, parser.interner)
            if ev.kind in (10, 11):
                assert parser.interner.text(int(batch.work[i])) == ev.comm
        eid += len(batch)
    assert rows == events
    return rows


@pytest.mark.parametrize("name", ["kf.ftrace.txt", "kf.tc-report.txt", "kf.tc-report-l.txt", "kf.perf-script.txt"])
@pytest.mark.parametrize("chunk", [333, 1 << 20])
def test_recorded_traces(name: str, chunk: int) -> None:
    rows = assert_same(gzip.decompress((DATA / f"{name}.gz").read_bytes()), chunk)
    assert len(rows) > 1000


@pytest.mark.parametrize("layout", LAYOUTS)
def test_scenario_in_every_layout(layout: str) -> None:
    assert_same(scenario_text(layout).encode(), 97)


def test_rows_outgrow_the_first_guess() -> None:
    """Short lines: more rows than the first allocation (a row per 128 bytes) holds."""
    line = b"a-1 [000] 1.%06d: softirq_raise: vec=%d\n"
    data = HEADER + FIRST + b"\n" + b"".join(line % (i, i % 10) for i in range(1, 5000))
    data += b"".join(b"a-1 [001] 2.%06d: x_%d: y\n" % (i, i % 300) for i in range(1, 3000))
    rows = assert_same(data, 1 << 20)
    assert len(rows) == 5000


# The other events the scanner reads itself, in their usual forms and with the oddities it must hand back.
others = st.sampled_from(
    [
        b"irq_handler_entry: irq=24 name=eth0",
        b"irq_handler_entry: irq=24 name=eth0 rx",
        b"irq_handler_entry: irq=24",
        b"irq_handler_entry: irq=24 label=eth0",
        b"irq_handler_exit: irq=24 ret=handled",
        b"irq_handler_exit: irq=x ret=handled",
        b"local_timer_entry: vector=236",
        b"local_timer_exit: vector=236",
        b"local_timer_exit: vector=236 x",
        b"softirq_raise: vec=3 [action=NET_RX]",
        b"softirq_entry: vec=3",
        b"softirq_exit: vec=-3 [action=NET_RX]",
        b"workqueue_execute_start: work struct 00000000ab: function vmstat_update",
        b"workqueue_execute_end: work struct 00000000ab: function vmstat_update",
        b"workqueue_execute_end: work struct 00000000ab",
        b"workqueue_execute_start: work struct a b: function f g",
        b"workqueue_execute_start: work struct x: vmstat_update",
        b"preempt_disable: caller=schedule+0x1/0x2 parent=x",
        b"irq_enable: caller=do_idle+0x1/0x2",
        b"irq_disable: schedule",
        b"sched_process_exit: comm=cc1 pid=12 prio=120",
        b"sched_process_exit: comm=cc1 pid=12 prio=120 group_dead=1",
        b"sched_process_exit: comm=cc 1 pid=12 prio=120",
        b"sched_process_exit: comm=cc1 pid=12",
        b"sched_migrate_task: comm=cc1 pid=12 prio=120 orig_cpu=1 dest_cpu=0",
        b"sched_migrate_task: comm=cc 1 pid=12 prio=120 orig_cpu=1 dest_cpu=10",
        b"sched_migrate_task: comm=a pid=1 b pid=12 prio=-1 orig_cpu=1 dest_cpu=0",
        b"sched_migrate_task: comm=cc1 pid=12 prio=120 orig_cpu=1",
        b"sched_migrate_task: comm=cc1 pid=12 prio=120 orig_cpu=1 dest_cpu=0 x",
        b"sched_migrate_task:   comm=bash pid=10625 prio=120 orig_cpu=1 dest_cpu=0",
        b"sched:sched_migrate_task: comm=cc1 pid=12 prio=120 orig_cpu=x dest_cpu=0",
        b"sched_wakeup_new: comm=cc1 pid=12 prio=120 target_cpu=003",
        b"sched_wakeup: comm=cc1 pid=12 prio=120 success=1 target_cpu=003",
        b"sched_waking: comm=cc1 pid=12 prio=120 target_cpu=003 x",
        b"irq:irq_handler_entry: irq=1 name=a",
        b"sched_switch: prev_comm=a prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=b next_pid=2 next_prio=12x",
        b"sched_switch: prev_comm=a prev_pid=1 prev_prio=120 prev_state= ==> next_comm=b next_pid=2 next_prio=1",
        # trace-cmd's plugin formats, padded names, perf's padding
        b"sched_switch:         bash:10612 [120] R ==> bash:10624 [120]",
        b"sched_switch: a b:1 [120] W ==> c:d:2 [-1]",
        b"sched_switch: x:1 [120] ==> y:2 [120]",
        b"sched_switch: x:1 [120] R+ ==> y:2 [120] extra",
        b"sched_switch: x:-1 [120] K ==> y:2 [120]",
        b"sched_switch: x:1 [1 20] X ==> y:2 [120]",
        b"sched_switch: x:1 [120] x ==> y:2 [120",
        b"sched_switch: \tx:1 [120] R ==> y:2 [120]",
        b"sched_wakeup:         ksoftirqd/0:14 [120] CPU:000",
        b"sched_wakeup_new: bash:10624 [120] CPU:001",
        b"sched_waking: a:1 [120]",
        b"sched_waking: a:1 [120] CPU:x",
        b"sched_wakeup: a:1 [120] target_cpu=001",
        b"sched_wakeup: a [CPU:1] b:2 [120] CPU:003 z",
        b"sched_process_exit: cc1:12 [120]",
        b"local_timer_entry:    vector=236",
        b"   sched:sched_switch: prev_comm=a prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=b next_pid=2 "
        b"next_prio=1",
        b"  irq:softirq_entry: vec=7 [action=SCHED]",
    ]
)


# Built once (in each draw, hypothesis validated them anew each time).
_SCANNER_COMMS = st.sampled_from([b"kworker/u8:0", b"bash", b"a: b", b"x]y", b"w[1]", b"<...>", b"#c"])
_SCANNER_ENDS = st.sampled_from([b"", b"", b"", b"\r", b" "])


@st.composite
def scanner_line(draw: st.DrawFn) -> bytes:
    """A line of the common layout with one of many payloads, sometimes damaged or with odd heads."""
    if draw(st.integers(0, 2)) == 0:
        return draw(trace_line())
    comm = draw(_SCANNER_COMMS)
    head = b"%16s-%-7s [%s] %s %12s: " % (comm, draw(numbers), draw(cpus), draw(flags), draw(stamps))
    if draw(st.booleans()):
        head = b"%s-%s [%s] %s: " % (draw(comms), draw(numbers), draw(cpus), draw(stamps))
    line = head + draw(others)
    if draw(st.integers(0, 5)) == 0:
        line = line[: draw(st.integers(0, len(line)))]
    return line + draw(_SCANNER_ENDS)


@settings(max_examples=500, deadline=None)
@given(st.lists(scanner_line(), min_size=1, max_size=60), st.integers(16, 4096), st.booleans(), st.booleans())
def test_scanner_equals_the_line_parser(lines: list[bytes], chunk: int, end_newline: bool, halves: bool) -> None:
    """``halves``: every range of 16 bytes or more is scanned in two halves at once (BatchParser._scan)."""
    data = HEADER + FIRST + b"\n" + b"\n".join(lines) + (b"\n" if end_newline else b"")
    with pytest.MonkeyPatch.context() as patch:
        if halves:
            patch.setattr(trace_columns, "SPLIT_BYTES", 16)
        assert_same(data, chunk)


@pytest.mark.parametrize("name", ["kf.ftrace.txt", "kf.tc-report.txt", "kf.perf-script.txt"])
@pytest.mark.parametrize("split", [64, 20_000])
def test_recorded_traces_scanned_in_halves(monkeypatch: pytest.MonkeyPatch, name: str, split: int) -> None:
    """The second half of each range scanned ahead in a thread: the same rows, line numbers and counts."""
    monkeypatch.setattr(trace_columns, "SPLIT_BYTES", split)
    data = gzip.decompress((DATA / f"{name}.gz").read_bytes())
    assert len(assert_same(data, 40_000)) > 1000
    # sched_waking first seen in a first half: the second half, read before it was known, is read again
    waking = data.index(b"sched_waking:")
    assert_same(data, data.rfind(b"\n", 0, waking) + 1 + split)


def test_numbers_beyond_exact_doubles_go_to_the_line_parser(tmp_path: Path) -> None:
    """A 16-digit timestamp or pid is read by Python's own int()/float(): same records as the line parser.

    (A pid beyond 64 bits is kept whole in the record and saturated in its column.)
    """
    body = (
        b"a-1 [000] 1234567890.1234567: sched_waking: comm=x pid=1 prio=1 target_cpu=0\n"
        b"a-1 [000] 1.0000001: sched_waking: comm=x pid=12345678901234567890 prio=1 target_cpu=0\n"
        b"a-1 [000] 1.000001: sched_waking: comm=x pid=1 prio=-00001 target_cpu=0000000000000000001\n"
    )
    rows = assert_same(HEADER + FIRST + b"\n" + body, 1 << 20)
    assert [r.ts for r in rows[1:]] == [1234567890.1234567, 1.0000001, 1.000001]
    assert rows[2].pid == 12345678901234567890


def test_interned_text_round_trips() -> None:
    interner = Interner()
    assert interner.id(b"") == 0 and interner.id(b"eth0") == 1 and interner.id(b"eth0") == 1
    assert interner.text(1) == b"eth0"
    _ = (states,)  # the shared strategies are imported from the fast-path tests


def _recorded_text() -> bytes:
    return gzip.decompress((DATA / "kf.ftrace.txt.gz").read_bytes())


def test_read_batches_gives_what_feeding_by_hand_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    """Background reading (small batches here) yields the same events and counts, in order."""
    monkeypatch.setattr(trace_columns, "BATCH_BYTES", 4096)
    data = _recorded_text()
    chunks = [data[i : i + 1000] for i in range(0, len(data), 1000)]
    parser = BatchParser()
    got: list[TraceEvent] = []
    with contextlib.closing(read_batches(iter(chunks), parser, threading.Event())) as batches:
        for batch in batches:
            got += [batch.event(i) for i in range(len(batch))]
    events, ref = reference(data, 1 << 20)
    assert got == events and asdict(parser.counts) == asdict(ref.counts)


def test_read_batches_raises_the_readers_error_in_the_callers_thread() -> None:
    def chunks() -> Iterator[bytes]:
        yield _recorded_text()[:50_000]
        raise InputError("t.gz: corrupt gzip data (test)", hint="check the file")

    with pytest.raises(InputError, match="corrupt gzip"):
        for _batch in read_batches(chunks(), BatchParser(), threading.Event()):
            pass


def test_stopping_early_ends_the_reader_and_closes_the_input(monkeypatch: pytest.MonkeyPatch) -> None:
    """The window is passed: the caller stops; the reader thread ends and the input generator is closed."""
    monkeypatch.setattr(trace_columns, "BATCH_BYTES", 1000)
    closed = threading.Event()
    data = _recorded_text()

    def chunks() -> Iterator[bytes]:
        try:
            while True:  # an endless input (a pipe that never ends)
                yield data
        finally:
            closed.set()

    stop = threading.Event()
    with contextlib.closing(read_batches(chunks(), BatchParser(), stop)) as batches:
        first = next(batches)
    assert len(first) > 0 and stop.is_set()
    assert closed.wait(10)
    assert not any(t.name.startswith("kforensic-trace-rea") and t.is_alive() for t in threading.enumerate())


@pytest.mark.parametrize("end", ["newline", "no newline", "a line longer than a batch"])
def test_mapped_file_gives_what_reading_it_gives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, end: str) -> None:
    """A mapped plain file (large files: no copies) gives the same events, counts and source record as reading it."""
    from collectors import trace_input
    from collectors.trace_input import MappedText, open_trace

    data = _recorded_text()
    if end == "no newline":
        data = data.rstrip(b"\n")
    elif end == "a line longer than a batch":  # garbage without a newline for several batches, then more events
        half = data.index(b"\n", len(data) // 2) + 1
        data = data[:half] + b"x" * 20_000 + b"\n" + data[half:]
    path = tmp_path / "t.txt"
    path.write_bytes(data)
    monkeypatch.setattr(trace_columns, "BATCH_BYTES", 4096)

    def run(min_bytes: int) -> tuple[list[TraceEvent], dict[str, object], object, bool]:
        monkeypatch.setattr(trace_input, "MAP_MIN_BYTES", min_bytes)
        parser = BatchParser()
        got: list[TraceEvent] = []
        with open_trace(str(path)) as stream:
            mapped = isinstance(stream.chunks, MappedText)
            with contextlib.closing(read_batches(stream.chunks, parser, threading.Event())) as batches:
                for batch in batches:
                    got += [batch.event(i) for i in range(len(batch))]
        return got, asdict(parser.counts), dataclasses.replace(stream.records[0], seconds=0.0), mapped

    read, read_counts, read_record, was_mapped = run(1 << 40)
    assert not was_mapped
    got, counts, record, was_mapped = run(0)
    assert was_mapped
    assert got == read and counts == read_counts and record == read_record
    assert isinstance(record, SourceRecord) and record.size == len(data)
    events, ref = reference(data, 1 << 20)
    assert got == events and counts == asdict(ref.counts)


@pytest.mark.parametrize("chunk", [4096, 1 << 20])
def test_runs_of_blank_and_garbage_lines_read_as_line_by_line(chunk: int) -> None:
    """Blank lines counted a run at once, lines the scanner does not take given to the line parser in doubling
    runs (before the first event line and after it): the rows and counts of the line parser fed line by line."""
    blank = b"\n" * 30_000 + b" \t\r\n" * 500 + b"\x0c\x0b\n" + b"\n" * 7
    garbage = b"".join(b"not a trace line %d\n" % i for i in range(3000))
    trace = gzip.decompress((DATA / "kf.ftrace.txt.gz").read_bytes())
    body = trace[trace.index(b"\n", len(trace) // 2) + 1 :]
    data = blank + HEADER + garbage + blank + FIRST + b"\n" + blank + garbage + b"\n" + body[:50_000] + blank
    data += garbage + b"x\n" + body[50_000:] + blank
    batches, parser = batches_of(data, chunk)
    rows = [batch.event(i) for batch in batches for i in range(len(batch))]
    line_by_line = TraceParser()
    assert rows == line_by_line._parse_lines(data.removesuffix(b"\n").split(b"\n"))
    assert asdict(parser.counts) == asdict(line_by_line.counts)
    events, text = reference(data, chunk)
    assert events == rows and asdict(text.counts) == asdict(line_by_line.counts)
    assert parser.counts.comments > 90_000 and parser.counts.malformed >= 9000 and len(rows) > 1000


def test_the_scanner_reads_lines_behind_an_instance_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    """trace-cmd report of -B buffers (record-instances.sh: "  kf_irq2:   comm-pid [001] ts: ..."): every line went to
    the line parser (3x the CPU: 1.7 s for the 242,128 lines of ue15's trace.dat, 0.65 s now, as without a prefix).
    The scanner now takes them: the line parser sees only the header, the drop marker and the first lines."""
    data = gzip.decompress((DATA / "kf.tc-report-B2.txt.gz").read_bytes())
    parser = BatchParser()
    handed: list[bytes] = []
    parse_lines = parser._parse_lines

    def counted(lines: list[bytes]) -> list[TraceEvent]:
        handed.extend(lines)
        return parse_lines(lines)

    monkeypatch.setattr(parser, "_parse_lines", counted)
    batches = [parser.feed_batch(data), parser.finish_batch()]
    assert sum(len(b) for b in batches) == parser.counts.used + 1 > 2000  # (the drop marker: a row, no event)
    assert parser.counts.events == data.count(b"\n") - 2 and parser.counts.malformed == 0
    assert len(handed) < 10, handed[:12]
    assert b"kf_sched1: CPU:1 [372 EVENTS DROPPED]" in handed
