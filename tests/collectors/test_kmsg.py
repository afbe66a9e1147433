"""Tests of collectors.kmsg: record format, continuation lines, sequence gaps, the real /dev/kmsg."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.kmsg import KmsgGap, KmsgReader, find_gaps, parse_kmsg_record, parse_kmsg_text

SAVED = (
    "6,10,1000,-;usb 1-1: new high-speed USB device\n"
    " SUBSYSTEM=usb\n"
    " DEVICE=c189:1\n"
    "4,11,2000,-,caller=T42;WARNING: CPU: 0 PID: 42 at mm/slub.c:123\n"
    "4,12,2001,c;continued fragment\n"
    "3,15,3000,-;after a gap: seq 13 and 14 were overwritten\n"
    "\n"
)


def test_record_fields() -> None:
    record = parse_kmsg_record("6,10,1000,-;usb 1-1: new device\n SUBSYSTEM=usb\n DEVICE=c189:1")
    assert record is not None
    assert (record.seq, record.facility, record.level, record.usec) == (10, 0, 6, 1000)
    assert record.message == "usb 1-1: new device"
    assert record.properties == (("SUBSYSTEM", "usb"), ("DEVICE", "c189:1"))
    assert not record.is_continuation
    user = parse_kmsg_record("14,3,5,-;from userspace")  # facility 1 (user), level 6
    assert user is not None and (user.facility, user.level) == (1, 6)


def test_not_a_record() -> None:
    assert parse_kmsg_record("plain dmesg line") is None
    assert parse_kmsg_record("a,b,c,-;text") is None


def test_saved_stream_continuation_lines_and_gaps() -> None:
    records = parse_kmsg_text(SAVED.encode())
    assert [r.seq for r in records] == [10, 11, 12, 15]
    assert records[0].properties == (("SUBSYSTEM", "usb"), ("DEVICE", "c189:1"))
    assert records[1].caller == "T42"
    assert records[2].is_continuation and records[2].message == "continued fragment"
    assert find_gaps(records, None) == (KmsgGap(12, 15),)
    assert find_gaps(records, None)[0].missing == 2
    assert find_gaps(records, 7) == (KmsgGap(7, 10), KmsgGap(12, 15))


def test_reader_resumes_after_last_seq_without_duplicates(tmp_path: Path) -> None:
    kmsg = tmp_path / "dev/kmsg"
    kmsg.parent.mkdir()
    kmsg.write_text(SAVED)
    with KmsgReader(tmp_path, last_seq=11) as reader:
        first = reader.read_new()
        assert [r.seq for r in first.records] == [12, 15]
        assert first.gaps == (KmsgGap(12, 15),)
        assert reader.read_new().records == ()
        with open(kmsg, "a") as out:
            out.write("6,16,4000,-;new line\n 6,bad\n")
        again = reader.read_new()
        assert [r.seq for r in again.records] == [16]
        assert again.gaps == ()
        assert again.error is None


def test_reader_of_a_missing_log_says_why(tmp_path: Path) -> None:
    batch = KmsgReader(tmp_path).read_new()
    assert batch.records == ()
    assert batch.error is not None and "No such file" in batch.error


def test_real_dev_kmsg_reads_a_record_written_now() -> None:
    if os.geteuid() != 0:
        pytest.skip("writing and reading /dev/kmsg needs root")
    marker = f"kforensic-test-{uuid.uuid4()}"
    with KmsgReader(Path("/")) as reader:
        backlog = reader.read_new()  # everything still in the ring buffer
        assert backlog.error is None
        assert backlog.records, "a booted kernel has records in its buffer"
        last = reader.last_seq
        with open("/dev/kmsg", "w") as out:
            out.write(f"<5>{marker}\n")
        batch = reader.read_new()
    mine = [r for r in batch.records if r.message == marker]
    assert len(mine) == 1
    assert last is not None and mine[0].seq > last
    assert mine[0].facility == 1 and mine[0].level == 5  # writes to /dev/kmsg are LOG_USER
    assert reader.read_new().error is not None  # closed


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_kmsg_parser_fuzz_never_raises(data: bytes) -> None:
    records = parse_kmsg_text(data)
    assert all(0 <= r.level <= 7 and "\n" not in r.message for r in records)
    assert all(g.missing > 0 for g in find_gaps(sorted(records, key=lambda r: r.seq), None))
