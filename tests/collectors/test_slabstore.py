"""Tests of collectors.slabstore: creation, host check, locking, round trips, reboots, evidence, size."""

from __future__ import annotations

import os
import signal
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from collectors import procfs
from collectors.kmsg import KmsgBatch, KmsgGap, KmsgRecord
from collectors.procfs import Counter, Counters, HostIdentity, Slabinfo
from collectors.slabstore import (
    SCHEMA_VERSION,
    SLAB_FRAME_COLUMNS,
    RunInfo,
    Sample,
    SlabStore,
    check_store_path,
    resolve_store_path,
)
from forensics.errors import InputError, UsageError
from forensics.evidence import check_evidence
from forensics.model import Evidence, Locator, LocatorKind, NotAvailable
from tests.collectors.test_procfs import cache

BOOT_A = "aaaaaaaa-0000-0000-0000-000000000001"
BOOT_B = "bbbbbbbb-0000-0000-0000-000000000002"
NA = NotAvailable("not in this test")


def run_info(origin: str = "live") -> RunInfo:
    ident = HostIdentity("h1", "6.1.0", BOOT_A, 4096, 8 << 30)
    return RunInfo(origin, ident, NA, 60.0, "/")


def sample(wall: float, boot: str, caches: dict[str, int], kmsg: tuple[KmsgRecord, ...] = ()) -> Sample:
    slab = Slabinfo("2.1", False, tuple(cache(n, a) for n, a in caches.items()))
    mem = Counters((Counter("MemTotal", 8 << 20, "kB"), Counter("Slab", int(wall), "kB")))
    return Sample(wall, wall - 1000, boot, slab, mem, NA, NA, KmsgBatch(kmsg), 0.001)


def record(seq: int, text: str = "") -> KmsgRecord:
    return KmsgRecord(seq, 0, 6, seq * 1000, "-", text or f"message {seq}")


def test_created_private_in_wal_mode_with_schema(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "store.sqlite"
    with SlabStore.open_for_writing(path, "h1") as store:
        run = store.begin_run(run_info())
        store.append_sample(run, sample(1000.0, BOOT_A, {"a": 10}))
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        wal = path.with_name(path.name + "-wal")
        assert wal.exists() and stat.S_IMODE(wal.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert store.meta("schema") == "kforensic.slabstore/2"
        assert store.meta("host") == "h1"
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_another_hosts_store_is_refused_without_force(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    SlabStore.open_for_writing(path, "h1").close()
    with pytest.raises(UsageError, match="recorded on host 'h1', this is 'h2'"):
        SlabStore.open_for_writing(path, "h2")
    with SlabStore.open_for_writing(path, "h2", force=True) as store:
        assert store.meta("host") == "h1"  # the store stays h1's; the run says h2
    with SlabStore.open_for_writing(path, "h1") as store:
        assert store.runs() == ()


def test_two_writers_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with SlabStore.open_for_writing(path, "h1"):
        with pytest.raises(UsageError, match="being written by another"):
            SlabStore.open_for_writing(path, "h1")
        with SlabStore.open(path) as reader:  # readers are welcome
            assert reader.runs() == ()


def test_readonly_store_refuses_writes_and_bad_files_are_input_errors(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    SlabStore.open_for_writing(path, "h1").close()
    with SlabStore.open(path) as reader, pytest.raises(UsageError, match="read-only"):
        reader.begin_run(run_info())
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(InputError, match="not a slab-watch store"):
        SlabStore.open(junk)
    with pytest.raises(InputError, match="no such store"):
        SlabStore.open(tmp_path / "missing.sqlite")


def test_store_path_resolution(tmp_path: Path) -> None:
    assert resolve_store_path(str(tmp_path)) == tmp_path / "slab-watch.sqlite"
    assert resolve_store_path(f"{tmp_path}/new/") == tmp_path / "new" / "slab-watch.sqlite"
    assert resolve_store_path(str(tmp_path / "x.db")) == tmp_path / "x.db"
    assert resolve_store_path(None).name == "slab-watch.sqlite"


def test_round_trip_caches_appearing_and_disappearing_and_reboot(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with SlabStore.open_for_writing(path, "h1") as store:
        run = store.begin_run(run_info())
        store.append_sample(run, sample(1000.0, BOOT_A, {"a": 100, "gone": 50}, (record(1), record(2))))
        store.append_sample(run, sample(1060.0, BOOT_A, {"a": 200, "gone": 50, "new": 10}, (record(3),)))
        # after the reboot: a new boot id, the log numbering restarts
        store.append_sample(run, sample(1200.0, BOOT_B, {"a": 100, "new": 20}, (record(1, "boot b"),)))
        store.append_sample(run, sample(1260.0, BOOT_B, {"a": 164, "new": 20}, (record(2, "boot b"),)))
        store.end_run(run)
    with SlabStore.open(path) as store:
        assert store.cache_names() == ("a", "gone", "new")
        assert [p.active_objs for p in store.cache_series("a")] == [100, 200, 100, 164]
        assert [p.sample_id for p in store.cache_series("gone")] == [1, 2]
        assert [p.sample_id for p in store.cache_series("new")] == [2, 3, 4]
        assert store.cache_series("a")[0].active_bytes == 100 * 64
        assert store.boot_segments() == ((BOOT_A, 1, 2), (BOOT_B, 3, 4))
        assert [p.value for p in store.counter_series("meminfo", "Slab")] == [1000, 1060, 1200, 1260]
        assert ("meminfo", "MemTotal", "kB") in store.counter_names()
        assert [(r.boot_id, r.seq) for r in store.kmsg()] == [
            (BOOT_A, 1),
            (BOOT_A, 2),
            (BOOT_A, 3),
            (BOOT_B, 1),
            (BOOT_B, 2),
        ]
        assert store.last_kmsg_seq(BOOT_A) == 3 and store.last_kmsg_seq("other") is None
        summary = store.summary()
        # growth is measured within the last boot only: "a" 100 -> 164, not 100 -> 200 -> 100 -> 164
        assert summary.boots == 2 and summary.samples == 4 and summary.caches == 3
        assert [(g.name, g.first_active_objs, g.last_active_objs) for g in summary.top_growers] == [("a", 100, 164)]
        assert summary.kmsg_records == 5 and summary.kmsg_missing == 0
        runs = store.runs()
        assert len(runs) == 1 and runs[0].ended is not None and runs[0].host == "h1"
        frame = store.slab_frame()
        assert len(frame) == 2 + 3 + 2 + 2
        assert set(frame.columns) >= {"sample_id", "boot_id", "cache", "active_objs", "num_slabs"}
        assert len(store.counter_frame()) == 8


def test_kmsg_duplicates_are_ignored_and_gaps_recorded(tmp_path: Path) -> None:
    with SlabStore.open_for_writing(tmp_path / "s.sqlite", "h1") as store:
        run = store.begin_run(run_info())
        store.append_sample(run, sample(1.0, BOOT_A, {}, (record(1), record(2))))
        batch = KmsgBatch((record(2), record(6)), (KmsgGap(2, 6),))
        second = Sample(2.0, 2.0, BOOT_A, NA, NA, NA, NA, batch)
        store.append_sample(run, second)
        assert [r.seq for r in store.kmsg()] == [1, 2, 6]
        assert store.kmsg_missing() == 3
        assert store.samples()[1].missing is not None and "not in this test" in store.samples()[1].missing


def test_topology_is_stored_per_run(tmp_path: Path) -> None:
    from tests.collectors.test_procfs import FakeTree

    tree = FakeTree(tmp_path / "root")
    info = RunInfo("live", procfs.read_identity(tree.root, NA), procfs.read_slab_topology(tree.root), 1.0, "x")
    with SlabStore.open_for_writing(tmp_path / "s.sqlite", "fakehost") as store:
        run = store.begin_run(info)
        assert store.aliases(run) == {"kmalloc-64": ":0000064", "kmalloc-cg-64": ":0000064"}
        assert store.reclaimable(run) == {":0000064": False, "dentry": True}


def test_sample_evidence_resolves(tmp_path: Path) -> None:
    with SlabStore.open_for_writing(tmp_path / "s.sqlite", "h1") as store:
        run = store.begin_run(run_info())
        sid = store.append_sample(run, sample(5.0, BOOT_A, {"kmalloc-64": 6400}))
        line = store.sample_line(sid, "kmalloc-64")
        assert line is not None
        # the stored line is the kernel's own: it parses back to the same numbers
        from tests.collectors.test_procfs import slab_line

        assert line == slab_line(cache("kmalloc-64", 6400))
        resolvers = {LocatorKind.SAMPLE: store.resolve_evidence}
        good = Evidence(str(store.path), Locator(LocatorKind.SAMPLE, sid, name="kmalloc-64"), "kmalloc-64")
        assert check_evidence(good, resolvers=resolvers) is None
        counter = Evidence(str(store.path), Locator(LocatorKind.SAMPLE, sid, name="meminfo:Slab"), "Slab: 5 kB")
        assert check_evidence(counter, resolvers=resolvers) is None
        wrong = Evidence(str(store.path), Locator(LocatorKind.SAMPLE, sid + 1, name="kmalloc-64"), "kmalloc-64")
        assert check_evidence(wrong, resolvers=resolvers) is not None


def test_24h_at_60s_on_250_caches_stays_under_20_mb(tmp_path: Path) -> None:
    """The issue's size budget, with realistic churn: 1440 samples of 250 caches, meminfo and vmstat."""
    path = tmp_path / "day.sqlite"
    mem = procfs.parse_meminfo(Path("/proc/meminfo").read_bytes(), "/proc/meminfo")
    vm = procfs.parse_vmstat(Path("/proc/vmstat").read_bytes(), "/proc/vmstat")
    samples = 1440
    started = time.monotonic()
    with SlabStore.open_for_writing(path, "h1") as store:
        store.db.execute("PRAGMA synchronous=OFF")  # the size does not depend on fsync; the test time does
        run = store.begin_run(run_info())
        for i in range(samples):
            caches = tuple(cache(f"cache-{c:03d}", 1000 + c * 37 + (i * (c % 7)) % 5000) for c in range(250))
            store.append_sample(
                run, Sample(60.0 * i, 60.0 * i, BOOT_A, Slabinfo("2.1", False, caches), mem, vm, NA, NA)
            )
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = path.stat().st_size
    per_sample = size / samples
    print(f"store: {size / 1e6:.2f} MB for {samples} samples of 250 caches = {per_sample:.0f} B/sample")
    assert size < 20e6
    assert time.monotonic() - started < 30


def test_full_disk_is_a_one_line_input_error_and_keeps_earlier_samples(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with SlabStore.open_for_writing(path, "h1") as store:
        run = store.begin_run(run_info())
        store.append_sample(run, sample(1.0, BOOT_A, {"a": 1}))
        pages = store.db.execute("PRAGMA page_count").fetchone()[0]
        store.db.execute(f"PRAGMA max_page_count = {pages}")  # SQLite now answers SQLITE_FULL, as on a full disk
        many = {f"cache-{i}": i for i in range(400)}
        with pytest.raises(InputError, match=r"cannot write store .*s\.sqlite: database or disk is full"):
            store.append_sample(run, sample(2.0, BOOT_A, many))
        assert not store.db.in_transaction
        assert len(store.samples()) == 1
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


#: A child that creates a store and sends itself a signal just before its K-th SQLite execute() (a signal that lands
#: while the tables are made: the profile hook picks the step, the signal is real and acts as it would).
_SIGNAL_AT = """
import os, signal, sys
from pathlib import Path
from collectors.slabstore import SlabStore
# Ctrl-C as on a terminal: a run started in the background of a shell (CI, nohup) inherits SIGINT ignored, and
# Python then installs no KeyboardInterrupt handler; the test is about the signal arriving.
signal.signal(signal.SIGINT, signal.default_int_handler)
path, sig, k = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
calls = [0]
def profile(frame, event, arg):
    if event == "c_call" and getattr(arg, "__name__", "") == "execute":
        calls[0] += 1
        if calls[0] == k:
            os.kill(os.getpid(), sig)
sys.setprofile(profile)
SlabStore.open_for_writing(path, "h1").close()
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.parametrize("step", [1, 2, 6, 14])
def test_a_signal_while_the_store_is_created_leaves_a_whole_store(tmp_path: Path, sig: int, step: int) -> None:
    """SIGTERM (systemd stopping slab-watch as it starts) or Ctrl-C while a new store's tables are made: the tables are
    finished, then the signal ends the run; the next slab-watch continues the store.  Before, the run died with
    the file made and no tables (SIGINT: an empty file kept), and every later slab-watch on that path said
    "not a slab-watch store (no meta/slab tables)"."""
    path = tmp_path / "s.sqlite"
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", _SIGNAL_AT, str(path), str(int(sig)), str(step)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == -sig, done.stderr[-2000:]  # ended by the signal, as before
    with SlabStore.open_for_writing(path, "h1") as store:  # what the next slab-watch does
        run = store.begin_run(run_info())
        store.append_sample(run, sample(1.0, BOOT_A, {"a": 1}))
    assert len(SlabStore.open(path).samples()) == 1


def _expected_frame(written: list[tuple[int, int, Sample]]) -> pd.DataFrame:
    """The slab frame of the (sample id, run id, sample) written, built in Python: sample order, then name order."""
    rows = []
    for sample_id, run_id, s in written:
        if isinstance(s.slabinfo, NotAvailable):
            continue
        last = {c.name: c for c in s.slabinfo.caches}
        for name in sorted(last):  # Python compares code points, as SQLite's BINARY collation does
            rows.append((sample_id, run_id, s.wall, s.uptime, s.boot_id, name, *last[name][1:12]))
    return pd.DataFrame(rows, columns=list(SLAB_FRAME_COLUMNS))


def test_slab_frame_is_every_row_in_sample_then_name_order(tmp_path: Path) -> None:
    """Rows, order (code point order of names) and dtypes of the frame, for the store and each run."""
    names = ["b", "a", "B", "dentry", "kmalloc-64", "Ä-cache", "z_ä", "_x", "kmalloc-128"]
    written: list[tuple[int, int, Sample]] = []
    with SlabStore.open_for_writing(tmp_path / "s.sqlite", "h1") as store:
        runs = [store.begin_run(run_info()), store.begin_run(run_info("import"))]
        for i in range(40):
            run = runs[i % 2]
            caches = {n: 100 + 7 * i + k for k, n in enumerate(names) if (i + k) % 5}  # caches come and go
            if i == 7:
                caches["zz-big"] = 3 << 40  # a value that needs 8 bytes, in one sample only
            s = sample(1000.0 + i, BOOT_A if i < 25 else BOOT_B, caches)
            written.append((store.append_sample(run, s), run, s))
        empty = Sample(2000.0, 1000.0, BOOT_B, NA, Counters(()), NA, NA, KmsgBatch(()), 0.001)
        store.append_sample(runs[0], empty)  # a sample without slabinfo: not in the frame
        for run_id in (None, *runs):
            expected = _expected_frame([w for w in written if run_id is None or w[1] == run_id])
            assert len(expected) > 100
            pd.testing.assert_frame_equal(store.slab_frame(run_id), expected)
        assert (
            list(store.slab_frame(runs[0])["cache"][:3]) == sorted(n for k, n in enumerate(names) if k % 5)[:3]
        )  # code point order: "B" < "_x" < "a" ... < "Ä-cache"
        table = store.slab_table()
        frame = store.slab_frame()
        assert table.names == tuple(sorted(set(frame["cache"])))
        assert len(table) == len(frame) and list(table.sample_ids) == sorted(set(frame["sample_id"]))
        row, column = list(table.sample_ids).index(written[7][0]), table.names.index("zz-big")
        assert table.num_objs[row, column] == float(3 << 40)
        assert next(iter(store.iter_slab_rows(runs[1])))[:4] == (2, 1001.0, BOOT_A, "B")


def test_slab_frame_of_an_empty_store_or_run(tmp_path: Path) -> None:
    with SlabStore.open_for_writing(tmp_path / "s.sqlite", "h1") as store:
        run = store.begin_run(run_info())
        assert store.slab_frame().empty and list(store.slab_frame().columns) == list(SLAB_FRAME_COLUMNS)
        assert len(store.slab_table()) == 0 and store.slab_table().names == ()
        store.append_sample(run, sample(1.0, BOOT_A, {"a": 1}))
        other = store.begin_run(run_info())
        assert store.slab_frame(other).empty and list(store.slab_frame(other).columns) == list(
            store.slab_frame(run).columns
        )
        assert len(store.slab_frame(run)) == 1


def test_a_store_being_written_is_read_as_of_one_instant(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """slab-watch commits a sample between the reader's query of the samples and its query of their packed rows:
    the reader called the live store "damaged store: packed rows of samples the samples table lacks" (exit 3, seen
    under load in tests/live/test_live_prometheus.py).  Read in one snapshot, it gets the samples as they were."""
    path = tmp_path / "live.sqlite"
    with SlabStore.open_for_writing(path, "h1") as writer:
        run = writer.begin_run(run_info())
        for k in range(3):
            writer.append_sample(run, sample(1000.0 + k, BOOT_A, {"a": 10 + k, "b": 5}))
        reader = SlabStore.open(path)  # a writer holds it: mode=ro, the WAL read through its -shm
        try:
            read_samples = reader._run_samples
            later = iter(range(3, 6))

            def samples_then_a_commit(run_id: int | None) -> list[tuple[int, int, float, float | None, str | None]]:
                got = read_samples(run_id)
                k = next(later)  # slab-watch's next sample, committed before the packed rows are read
                writer.append_sample(run, sample(1000.0 + k, BOOT_A, {"a": 10 + k, "b": 5, "c": 1}))
                return got

            monkeypatch.setattr(reader, "_run_samples", samples_then_a_commit)
            table = reader.slab_table()
            assert table.walls.tolist() == [1000.0, 1001.0, 1002.0] and table.names == ("a", "b")
            assert table.active_objs[:, 0].tolist() == [10, 11, 12]
            counters = reader.counter_table()  # its own snapshot: the sample committed meanwhile is there
            assert counters.walls.tolist() == [1000.0, 1001.0, 1002.0, 1003.0]
            assert reader.slab_table().walls.tolist()[-1] == 1004.0  # and the next read sees the store as it is now
        finally:
            reader.close()


def test_a_store_being_made_or_left_empty_is_said_so_not_the_wrong_file(tmp_path: Path) -> None:
    """slab-watch makes a new store's file, then its tables in its WAL: a store read in between (2 of 25,209 opens
    while a real slab-watch started, /tmp/leaks19) or a file left empty read "not a slab-watch store (no meta/slab
    tables)", as if the user had given the wrong file.  A file that is no store still says so, and slabinfo text
    says what reads it."""
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    with pytest.raises(InputError, match=r"an empty store file \(no tables yet, 0 bytes\)"):
        SlabStore.open(empty)
    # A writer between its WAL and its committed tables, as slab-watch's _create is then.
    making = tmp_path / "making.sqlite"
    writer = sqlite3.connect(making, isolation_level=None)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    try:
        with pytest.raises(InputError, match=r"an empty store file .*a slab-watch starting creates them") as made:
            SlabStore.open(making)
        assert "run it again once slab-watch has taken a sample" in (made.value.hint or "")
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE t (x)")
    with pytest.raises(InputError, match=r"not a slab-watch store \(an SQLite database without its meta/slab"):
        SlabStore.open(other)
    copy = tmp_path / "slabinfo.txt"
    copy.write_text("slabinfo - version: 2.1\n# name <active_objs> <num_objs> <objsize>\n")
    with pytest.raises(InputError, match="not a slab-watch store") as text:
        SlabStore.open(copy)
    assert f"slab-import --store S {copy}" in (text.value.hint or ""), text.value.hint
    live = Path("/proc/slabinfo")
    if live.is_file() and os.access(live, os.R_OK):  # root only, as the live tests
        with pytest.raises(InputError, match=r"not a slab-watch store \(not an SQLite database\)") as proc:
            SlabStore.open(live)
        assert "sample it into a store with kforensic slab-watch" in (proc.value.hint or ""), proc.value.hint


@pytest.mark.parametrize("kernel_file", ["/proc/self/status", "/sys/kernel/mm/transparent_hugepage/enabled"])
def test_a_kernel_file_given_as_the_store_to_write_is_refused_as_one(kernel_file: str) -> None:
    """``slab-watch --store /proc/slabinfo`` (a regular file of 0 bytes, writable by root) was taken for a new store
    and failed in SQLite: "cannot create store /proc/slabinfo: unable to open database file", hint "free some space"
    (/tmp/leaks19).  A file under /proc or /sys is refused as a kernel file, before anything is opened to write."""
    if not Path(kernel_file).is_file():
        pytest.skip(f"{kernel_file} not on this kernel")
    with pytest.raises(UsageError, match=r"is a kernel file \(under /(proc|sys)\), not a store; nothing was written"):
        check_store_path(Path(kernel_file))
