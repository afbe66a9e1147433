"""What the LTTng reader keeps per kernel row, kept small and exact (issue #28: peak memory).

A packet that could need more rows than one decode call holds still decodes whole; the compact copy of
the rows the citations read gives back every value (the widest int64s too); the open syscall of a kernel
row is carried from one merged chunk to the next.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from collectors.ctf import layouts as ly
from collectors.ctf.feed import SyscallTracker
from collectors.ctf.reader import K_SYSCALL_ENTRY, K_SYSCALL_EXIT, ROWS_PER_CALL, Session, _record, _records
from forensics.types.trace import Kind
from tests.collectors.ctf_check import GENERAL_DECODED, extract_session, stream_events


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return extract_session(tmp_path_factory.mktemp("lttng"))


@pytest.mark.xdist_group(GENERAL_DECODED)
@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "plain"])
def test_packets_larger_than_one_call_decode_whole(session: Path, compiled: bool) -> None:
    s = Session(str(session), compiled)
    offsets: dict[int, list[int]] = {i: [] for i in range(len(s.streams))}
    for rows, owner in s.rows():
        for stream in np.unique(owner).tolist():
            offsets[stream] += rows[owner == stream, ly.R_OFF].tolist()
    assert not s.notes()
    big = [i for i, st in enumerate(s.streams) if st.rows_needed > ROWS_PER_CALL]
    assert big  # the kernel streams' 1 MB packets could need more rows than a call holds
    for i in big:
        st = s.streams[i]
        t = s.traces[st.trace]
        events = stream_events(st.path)
        assert st.events == len(events)  # every event counted
        wanted = [ev.offset for ev in events if t.want[ev.stream_id, ev.id]]
        assert sorted(offsets[i]) == sorted(wanted)  # and every wanted one is a row


def test_compact_records_give_back_every_value(session: Path) -> None:
    s = Session(str(session), compiled=False)
    n = 5
    rows = np.zeros((n, ly.N_ROWCOLS), dtype=np.int64)
    rows[:, ly.R_KIND] = Kind.WORK_START  # its values are printed as they are (no string read)
    rows[:, ly.R_TS] = [1, 2**40, 2**62, 5, 7]
    rows[:, ly.R_OFF] = [0, 4096, 2**31 + 5, 8, 12]
    rows[:, ly.R_CPU] = 3  # one value: kept in no byte
    rows[:, ly.R_V0] = [-(2**63), 2**63 - 1, 0, -1, 1]  # the widest distance int64 allows
    rows[:, ly.R_V0 + 1] = [-5, 250, 70_000, 0, 1]
    owner = np.array([0, 1, 0, 1, 0], dtype=np.int64)
    for shift in (False, True):
        event = _records(s, rows, np.arange(n), owner, shift)
        for i in range(n):
            assert event(i) == _record(s, rows[i].tolist(), int(owner[i]), shift)
        one = _records(s, rows[2:3], np.arange(1), owner[2:3], shift)  # every column of one value
        assert one(0) == _record(s, rows[2].tolist(), 0, shift)


def test_compact_records_of_events_with_strings(session: Path) -> None:
    s = Session(str(session), compiled=False)
    rows = np.zeros((6, ly.N_ROWCOLS), dtype=np.int64)
    rows[:, ly.R_KIND] = [Kind.SWITCH, Kind.WAKING, Kind.IRQ_ENTRY, Kind.IRQ_ENTRY, Kind.PROCESS_EXIT, Kind.LOST]
    rows[:, ly.R_OFF] = [1000, 2000, 3000, 4000, 5000, -1]
    rows[:, ly.R_TS] = [10, 20, 30, 40, 50, 60]
    v = ly.R_V0
    rows[0, v : v + 7] = [11, 20, 1, 12, 20, 1030, 1046]  # prev_comm and next_comm a few bytes into the event
    rows[1, v : v + 5] = [13, 20, 1, 2024, 4]  # comm at 2024, 4 bytes
    rows[2, v : v + 3] = [9, 3020, 6]  # an IRQ's name
    rows[3, v : v + 3] = [236, 0, 0]  # an x86 vector: no name field (0)
    rows[4, v : v + 4] = [14, 20, 5030, 7]
    rows[5, v] = 7  # a lost-events marker: no offset
    owner = np.zeros(len(rows), dtype=np.int64)
    event = _records(s, rows, np.arange(len(rows)), owner, False)
    for i in range(len(rows)):
        assert event(i) == _record(s, rows[i].tolist(), 0, False)


def _row(kind: int, ts: int, cpu: int, eid: int = 0, off: int = 0) -> list[int]:
    row = [0] * ly.N_ROWCOLS
    row[ly.R_KIND], row[ly.R_TS], row[ly.R_CPU], row[ly.R_EID], row[ly.R_OFF] = kind, ts, cpu, eid, off
    return row


def _chunk(tracker: SyscallTracker, rows: list[list[int]]) -> None:
    arr = np.array(rows, dtype=np.int64)
    kinds = np.ascontiguousarray(arr[:, ly.R_KIND])
    fed = np.flatnonzero(kinds < K_SYSCALL_ENTRY)
    tracker.chunk(arr, np.zeros(len(arr), dtype=np.int64), fed, kinds)


def test_open_syscall_is_carried_across_chunks() -> None:
    tracker = SyscallTracker(width=64)
    # CPU 0 enters event 7 at 10 ns (byte 100); CPU 1 enters event 9 at 12 ns and leaves it at 14 ns.
    _chunk(
        tracker,
        [
            _row(K_SYSCALL_ENTRY, 10, 0, 7, 100),
            _row(K_SYSCALL_ENTRY, 12, 1, 9, 200),
            _row(Kind.SWITCH, 13, 0),
            _row(Kind.SWITCH, 13, 1),
            _row(K_SYSCALL_EXIT, 14, 1, 10, 300),
            _row(Kind.SWITCH, 15, 1),
        ],
    )
    # The next chunk: CPU 0 is still in event 7 until it leaves at 30 ns; a syscall event at the very time
    # of a row counts as after it.
    _chunk(
        tracker,
        [
            _row(Kind.WAKING, 20, 0),
            _row(K_SYSCALL_EXIT, 30, 0, 8, 400),
            _row(Kind.SWITCH, 30, 0),
            _row(Kind.SWITCH, 31, 0),
            _row(Kind.SWITCH, 32, 2),
        ],
    )
    opened = tracker.result()
    assert opened.events == 4
    cited = [
        None if e < 0 else (int(opened.key[e]), int(opened.ts[e]), int(opened.off[e]), int(opened.cpu[e]))
        for e in opened.entry.tolist()
    ]
    in_7 = (7, 10, 100, 0)
    assert cited == [in_7, (9, 12, 200, 1), None, in_7, in_7, None, None]
