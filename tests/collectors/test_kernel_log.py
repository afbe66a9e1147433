"""The kernel log reader: files in chunks with a source record, and the live /dev/kmsg."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from collectors.kernel_log import KmsgDumpReader, kmsg_available, log_chunks, open_log
from detectors.dmesg.scanner import scan_chunks
from forensics.errors import CollectionError, InputError
from tests.helpers import as_nobody


def test_file_is_read_in_chunks_with_a_record(tmp_path: Path) -> None:
    log = tmp_path / "kern.log"
    data = b"[ 1.0] hello\n" * 1000 + b"[ 2.0] Kernel panic - not syncing: boom\n"
    log.write_bytes(data)
    with open_log(str(log)) as tracked:
        chunks = list(log_chunks(tracked, chunk_size=4096))
        record = tracked.record()
    assert b"".join(chunks) == data and len(chunks) > 1
    assert record.size == len(data) and isinstance(record.sha256, str)
    assert [r.title for r in scan_chunks(chunks)] == ["kernel panic: boom"]


def test_directory_and_missing_file_are_input_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="is a directory"), open_log(str(tmp_path)):
        pass
    with pytest.raises(InputError, match="cannot read"), open_log(str(tmp_path / "nope")):
        pass


@pytest.mark.live
def test_live_kmsg_reads_real_records_or_says_why() -> None:
    reader = KmsgDumpReader()
    if not kmsg_available():
        with pytest.raises(CollectionError, match="/dev/kmsg"):
            list(reader.chunks())
        return
    records = list(reader.chunks())
    assert records, "the ring buffer of a running kernel is never empty"
    first = records[0].decode("utf-8", "replace")
    prio, seq, usec = first.split(";", 1)[0].split(",")[:3]
    assert prio.isdigit() and seq.isdigit() and usec.isdigit()
    assert reader.record().size == sum(len(r) for r in records)
    list(scan_chunks(records))  # the live text goes through the engine unchanged


def test_kmsg_permission_error_is_one_clear_line(tmp_path: Path) -> None:
    fake = tmp_path / "kmsg"
    fake.write_bytes(b"")
    fake.chmod(0o600)
    if os.geteuid() != 0:
        with pytest.raises(CollectionError, match="cannot read") as caught:
            list(KmsgDumpReader(path=str(fake)).chunks())
        assert caught.value.hint is not None and "dmesg_restrict" in caught.value.hint
        return
    # As root, check it the way an ordinary user meets it: in a child that gave up root.

    def refused_with_the_hint() -> bool:
        try:
            list(KmsgDumpReader(path=str(fake)).chunks())
        except CollectionError as exc:
            return bool(exc.hint and "dmesg_restrict" in exc.hint and "cannot read" in exc.message)
        return False

    assert as_nobody(refused_with_the_hint)


def test_missing_kmsg_is_a_collection_error(tmp_path: Path) -> None:
    with pytest.raises(CollectionError, match="cannot read") as caught:
        list(KmsgDumpReader(path=str(tmp_path / "kmsg")).chunks())
    assert caught.value.hint is not None and "no /dev/kmsg" in caught.value.hint


def _perf_data(tmp: Path) -> Path | None:
    import shutil
    import subprocess

    out = tmp / "perf.data"
    if shutil.which("perf") is None:
        return None
    done = subprocess.run(["perf", "record", "-q", "-o", str(out), "--", "true"], capture_output=True, check=False)
    return out if done.returncode == 0 and out.is_file() else None


def test_another_commands_binary_input_is_refused_naming_it(tmp_path: Path) -> None:
    """A dump, a vmlinux (compressed: judged after decompression), a store or a perf.data is not a log."""
    import sqlite3

    root = Path(__file__).resolve().parents[2]
    store = tmp_path / "slab.db"
    with sqlite3.connect(store) as db:
        db.execute("create table t (x)")
    inputs = {
        root / "vmcore_fixtures/cases/02-bug-on/vmcore": ("a kdump-compressed crash dump", "kforensic vmcore"),
        root / "vmcore_fixtures/vmlinux.xz": ("an ELF kernel image (vmlinux)", "kforensic vmcore"),
        root / "vmcore_fixtures/kf_buggy.ko": ("an ELF relocatable object (a kernel module", "--module-debug FILE"),
        Path(sys.executable).resolve(): ("an ELF program or shared library", "kforensic profile"),
        store: ("a SQLite database", "kforensic leaks --store"),
    }
    if (perf := _perf_data(tmp_path)) is not None:
        inputs[perf] = ("a perf.data recording", "kforensic profile")
    for path, (what, reader) in inputs.items():
        if not path.exists():
            continue
        with pytest.raises(InputError) as raised, open_log(str(path)) as tracked:
            list(log_chunks(tracked))
        assert f"not a kernel log: {what}" in raised.value.message and reader in (raised.value.hint or "")
