"""The slab-watch store: one SQLite file of samples of kernel memory counters.

Layout (schema ``kforensic.slabstore/1``, ``PRAGMA user_version = 1``; the
tables are documented in docs/slab-watch.md):

* ``meta``: key/value: schema, host the store belongs to, creation time.
* ``runs``: one row per ``slab-watch`` or ``slab-import`` invocation, with what
  is read once per run (kernel release, boot id, page size, MemTotal).
* ``samples``: one row per sample: wall clock, uptime, **boot id** (a change of
  boot id between samples is a series break: the machine rebooted), the CPU
  cost of taking it, and the reasons for anything that could not be read.
* ``caches`` / ``slab`` / ``slab_stats``: every /proc/slabinfo column of every
  cache in every sample (cache names are interned).
* ``counters`` / ``counter_values``: meminfo, the recorded vmstat counters and
  the /proc/sys/fs counts, per sample.
* ``kmsg`` / ``kmsg_gaps``: kernel log records keyed by (boot id, sequence
  number), so a restarted watcher neither duplicates nor misses a record.
* ``aliases`` / ``cache_attrs``: /sys/kernel/slab merges and reclaim_account per run.

The file is in WAL mode and each sample is one transaction, so a watcher
killed at any moment loses at most the sample it was writing.  The file is
created mode 0600 (it holds kernel data); SQLite gives its -wal and -shm files
the same mode.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple
from urllib.request import pathname2url

from collectors.kmsg import KmsgBatch
from collectors.procfs import Counters, FsCounters, HostIdentity, Slabinfo, SlabTopology
from forensics import __version__
from forensics.errors import InputError, UsageError
from forensics.model import Evidence, LocatorKind, NotAvailable, SourceRecord

if TYPE_CHECKING:
    import pandas as pd

SCHEMA = "kforensic.slabstore/1"
SCHEMA_VERSION = 1
STORE_FILE_NAME = "slab-watch.sqlite"

SLAB_COLUMNS = (
    "active_objs",
    "num_objs",
    "objsize",
    "objperslab",
    "pagesperslab",
    "tunable_limit",
    "batchcount",
    "sharedfactor",
    "active_slabs",
    "num_slabs",
    "sharedavail",
)
# What SlabStore.slab_frame() gives, as one query (the definition; slab_frame reads faster without the join).
SLAB_FRAME_QUERY = (
    "SELECT s.id AS sample_id, s.run_id, s.wall, s.uptime, s.boot_id, c.name AS cache, "
    + ", ".join(f"l.{c}" for c in SLAB_COLUMNS)
    + " FROM slab l JOIN samples s ON s.id = l.sample_id JOIN caches c ON c.id = l.cache_id {where}"
    " ORDER BY s.id, c.name"
)

_DDL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE runs (
    id INTEGER PRIMARY KEY, origin TEXT NOT NULL, started REAL NOT NULL, ended REAL,
    host TEXT, kernel_release TEXT, boot_id TEXT, page_size INTEGER, mem_total_bytes INTEGER,
    interval REAL, tool_version TEXT NOT NULL, root TEXT, topology_error TEXT);
CREATE TABLE samples (
    id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id), wall REAL NOT NULL,
    uptime REAL, boot_id TEXT, cost REAL, missing TEXT);
CREATE INDEX samples_run ON samples(run_id);
CREATE TABLE caches (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE slab (
    sample_id INTEGER NOT NULL, cache_id INTEGER NOT NULL,
    active_objs INTEGER NOT NULL, num_objs INTEGER NOT NULL, objsize INTEGER NOT NULL,
    objperslab INTEGER NOT NULL, pagesperslab INTEGER NOT NULL,
    tunable_limit INTEGER NOT NULL, batchcount INTEGER NOT NULL, sharedfactor INTEGER NOT NULL,
    active_slabs INTEGER NOT NULL, num_slabs INTEGER NOT NULL, sharedavail INTEGER NOT NULL,
    PRIMARY KEY (sample_id, cache_id)) WITHOUT ROWID;
CREATE TABLE slab_stats (
    sample_id INTEGER NOT NULL, cache_id INTEGER NOT NULL,
    listallocs INTEGER, maxobjs INTEGER, grown INTEGER, reaped INTEGER, error INTEGER,
    maxfreeable INTEGER, nodeallocs INTEGER, remotefrees INTEGER, alienoverflow INTEGER,
    allochit INTEGER, allocmiss INTEGER, freehit INTEGER, freemiss INTEGER,
    PRIMARY KEY (sample_id, cache_id)) WITHOUT ROWID;
CREATE TABLE counters (
    id INTEGER PRIMARY KEY, source TEXT NOT NULL, name TEXT NOT NULL, unit TEXT NOT NULL,
    UNIQUE (source, name));
CREATE TABLE counter_values (
    sample_id INTEGER NOT NULL, counter_id INTEGER NOT NULL, value INTEGER NOT NULL,
    PRIMARY KEY (sample_id, counter_id)) WITHOUT ROWID;
CREATE TABLE kmsg (
    boot_id TEXT NOT NULL, seq INTEGER NOT NULL, sample_id INTEGER NOT NULL,
    facility INTEGER NOT NULL, level INTEGER NOT NULL, usec INTEGER NOT NULL, flags TEXT NOT NULL,
    message TEXT NOT NULL, properties TEXT, caller TEXT,
    PRIMARY KEY (boot_id, seq)) WITHOUT ROWID;
CREATE TABLE kmsg_gaps (
    sample_id INTEGER NOT NULL, boot_id TEXT NOT NULL, after_seq INTEGER NOT NULL, next_seq INTEGER NOT NULL);
CREATE TABLE aliases (
    run_id INTEGER NOT NULL, name TEXT NOT NULL, target TEXT NOT NULL, PRIMARY KEY (run_id, name)) WITHOUT ROWID;
CREATE TABLE cache_attrs (
    run_id INTEGER NOT NULL, name TEXT NOT NULL, reclaim_account INTEGER,
    PRIMARY KEY (run_id, name)) WITHOUT ROWID;
"""


def default_store_path() -> Path:
    """/var/lib/kforensic/slab-watch.sqlite for root, ~/.local/share/kforensic/slab-watch.sqlite otherwise."""
    base = Path("/var/lib/kforensic") if os.geteuid() == 0 else Path.home() / ".local/share/kforensic"
    return base / STORE_FILE_NAME


def resolve_store_path(path: str | Path | None) -> Path:
    """The store file for ``--store PATH``: a directory (existing, or written with a final /) gets the default name."""
    if path is None:
        return default_store_path()
    if Path(path).is_dir() or str(path).endswith("/"):
        return Path(path) / STORE_FILE_NAME
    return Path(path)


# ---------------------------------------------------------------- what is written


@dataclass(frozen=True)
class Sample:
    """Everything read at one moment: the unit written in one transaction."""

    wall: float  # seconds since the epoch (UTC)
    uptime: float | NotAvailable
    boot_id: str | NotAvailable
    slabinfo: Slabinfo | NotAvailable
    meminfo: Counters | NotAvailable
    vmstat: Counters | NotAvailable
    fs: FsCounters | NotAvailable
    kmsg: KmsgBatch | NotAvailable
    cost_seconds: float | None = None  # CPU seconds spent taking it, None when not measured
    sources: tuple[SourceRecord, ...] = ()
    notes: tuple[str, ...] = ()  # what the sampler noticed (the wall clock going back), stored with "missing"

    def rejected(self) -> tuple[str, ...]:
        """The slabinfo/meminfo rows left out of this sample, each as ``file line N: why: 'text'``."""
        out = []
        for name, part in (("slabinfo", self.slabinfo), ("meminfo", self.meminfo)):
            if not isinstance(part, NotAvailable):
                out += [f"{name} {row}" for row in part.rejected]
        return tuple(out)

    def missing(self) -> tuple[str, ...]:
        """Why parts of the sample are missing or doubtful (empty when everything was read and made sense)."""
        parts = (self.slabinfo, self.meminfo, self.vmstat, self.fs, self.kmsg, self.boot_id)
        reasons = [p.reason for p in parts if isinstance(p, NotAvailable)]
        if isinstance(self.kmsg, KmsgBatch) and self.kmsg.error:
            reasons.append(self.kmsg.error)
        rejected = self.rejected()
        if rejected:
            more = f" (and {len(rejected) - 3} more)" if len(rejected) > 3 else ""
            reasons.append(f"{len(rejected)} rows left out: {'; '.join(rejected[:3])}{more}")
        return (*reasons, *self.notes)


@dataclass(frozen=True)
class RunInfo:
    """What is read once per run."""

    origin: str  # "live", or "import:<path>"
    identity: HostIdentity
    topology: SlabTopology | NotAvailable
    interval: float | NotAvailable
    root: str


# ---------------------------------------------------------------- what is read back


class RunRow(NamedTuple):
    """A run of the store."""

    id: int
    origin: str
    started: float
    ended: float | None
    host: str | None
    kernel_release: str | None
    boot_id: str | None
    page_size: int | None
    mem_total_bytes: int | None
    interval: float | None
    tool_version: str


class SampleRow(NamedTuple):
    """A sample of the store (without its data)."""

    id: int
    run_id: int
    wall: float
    uptime: float | None
    boot_id: str | None
    cost: float | None
    missing: str | None


class CachePoint(NamedTuple):
    """One cache in one sample: the slabinfo columns that move."""

    sample_id: int
    wall: float
    boot_id: str | None
    active_objs: int
    num_objs: int
    objsize: int
    objperslab: int
    pagesperslab: int
    active_slabs: int
    num_slabs: int

    @property
    def active_bytes(self) -> int:
        """Bytes of objects in use."""
        return self.active_objs * self.objsize


class CounterPoint(NamedTuple):
    """One counter in one sample."""

    sample_id: int
    wall: float
    boot_id: str | None
    value: int


class KmsgRow(NamedTuple):
    """A stored kernel log record."""

    boot_id: str
    seq: int
    sample_id: int
    facility: int
    level: int
    usec: int
    flags: str
    message: str


class CacheGrowth(NamedTuple):
    """How a cache changed between the first and last sample of a series."""

    name: str
    first_active_bytes: int
    last_active_bytes: int
    first_active_objs: int
    last_active_objs: int

    @property
    def delta_bytes(self) -> int:
        """Growth in bytes (negative: shrink)."""
        return self.last_active_bytes - self.first_active_bytes


@dataclass(frozen=True)
class StoreSummary:
    """A short account of a run or a whole store: no verdicts, only what was recorded."""

    samples: int
    caches: int
    boots: int
    first_wall: float | NotAvailable
    last_wall: float | NotAvailable
    kmsg_records: int
    kmsg_missing: int
    top_growers: tuple[CacheGrowth, ...]


def check_store_path(path: Path) -> None:
    """Refuse (exit 2) a ``--store`` to write that is not a regular file or a new path.

    SQLite given a device node fails to write it and the failed creation would
    then remove the node: a mistyped ``--store /dev/sdb1`` must leave it as it
    is.  A symbolic link is followed only to a regular file.
    """
    from forensics.output import file_kind

    try:
        st = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            raise UsageError(
                f"--store {path} is a dangling symbolic link (to {os.readlink(path)})",
                hint="give the store's own path, or a new path",
            ) from None
        return
    except OSError as exc:
        raise InputError(
            f"cannot use --store {path}: {exc.strerror or exc}", hint="choose a writable --store PATH"
        ) from None
    if stat.S_ISREG(st.st_mode):
        return
    kind = file_kind(st.st_mode)
    via = f" (a symbolic link to {os.path.realpath(path)})" if os.path.islink(path) else ""
    raise UsageError(
        f"--store {path}{via} is {kind}: a store is a regular file; nothing was written",
        hint="give a new path or an existing store file (e.g. --store slab.sqlite)",
    )


def _text_or_none(value: object) -> object:
    return None if isinstance(value, NotAvailable) else value


def _writer_active(path: Path) -> bool:
    """True when a slab-watch holds the store's writer lock (or its WAL is left over and must be read)."""
    wal = Path(f"{path}-wal")
    if wal.exists() and wal.stat().st_size > 0:
        return True
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing drops the probe's lock
    return False


def _read_only_connection(path: Path) -> tuple[sqlite3.Connection, str | None]:
    """A connection that reads ``path`` without creating or changing any file beside it.

    Returns the connection and a temporary directory to remove on close (or None).
    """
    url = pathname2url(str(path.resolve()))
    if not _writer_active(path):
        return sqlite3.connect(f"file:{url}?mode=ro&immutable=1", uri=True), None
    if Path(f"{path}-shm").exists():  # a writer's index is there: read the WAL's samples through it
        return sqlite3.connect(f"file:{url}?mode=ro", uri=True), None
    # A WAL left by a killed writer and no index: reading it would create -shm beside the evidence,
    # so read a private copy of the store and its WAL instead.
    import shutil
    import tempfile

    tmp = tempfile.mkdtemp(prefix="kforensic-store-")
    copy = Path(tmp, path.name)
    shutil.copyfile(path, copy)
    shutil.copyfile(f"{path}-wal", f"{copy}-wal")
    return sqlite3.connect(f"file:{pathname2url(str(copy))}?mode=ro", uri=True), tmp


def _create(path: Path, host: str | NotAvailable) -> None:
    """Make the tables of a new (empty) store file in one transaction."""
    db = sqlite3.connect(path, isolation_level=None)
    try:
        _create_tables(db, host)
    finally:
        db.close()


def _create_tables(db: sqlite3.Connection, host: str | NotAvailable) -> None:
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("BEGIN IMMEDIATE")
    if db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0:
        for statement in _DDL.split(";"):
            if statement.strip():
                db.execute(statement)
        db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        db.executemany(
            "INSERT INTO meta VALUES (?, ?)",
            [
                ("schema", SCHEMA),
                ("host", host if isinstance(host, str) else ""),
                ("created", str(time.time())),
            ],
        )
    db.execute("COMMIT")


def _decode_text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def _remove_scratch(directory: str | None) -> None:
    if directory is not None:
        import shutil

        shutil.rmtree(directory, ignore_errors=True)


class SlabStore:
    """A slab-watch store.  Open with :meth:`open` (read) or :meth:`open_for_writing`."""

    def __init__(self, path: Path, connection: sqlite3.Connection, readonly: bool) -> None:
        self.path = path
        self.db = connection
        self.readonly = readonly
        self._cache_ids: dict[str, int] = {}
        self._counter_ids: dict[tuple[str, str], int] = {}
        self._lock_fd: int | None = None
        self._scratch: str | None = None  # a private copy read instead of the store (see _read_only_connection)

    # ------------------------------------------------------------ opening

    @classmethod
    def open(cls, path: Path, readonly: bool = True) -> SlabStore:
        """Open an existing store; raises :class:`InputError` when it is missing or not a store.

        Read-only opening never creates a file beside the store (evidence is
        often on a read-only mount, and a copy must stay as it was): a store no
        writer has open, with no ``-wal`` beside it, is opened ``immutable=1``;
        a store being written (its ``-wal`` exists) is opened ``mode=ro`` and
        reads the WAL's samples through the ``-shm`` its writer made.
        """
        from forensics.output import register_input

        if not path.is_file():
            raise InputError(f"{path}: no such store", hint="record one with kforensic slab-watch --store PATH")
        register_input(path)
        scratch: str | None = None
        try:
            if readonly:
                db, scratch = _read_only_connection(path)
            else:
                db = sqlite3.connect(path, isolation_level=None)
            # A damaged store can hold bytes that are not UTF-8 in a text column: shown replaced, never a crash.
            db.text_factory = _decode_text
            version = db.execute("PRAGMA user_version").fetchone()[0]
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        except (sqlite3.DatabaseError, OSError, UnicodeDecodeError) as exc:
            # (SQLite's message about a damaged schema can quote bytes that are not UTF-8.)
            _remove_scratch(scratch)
            raise InputError(
                f"{path}: not a slab-watch store ({exc})", hint="give a file written by slab-watch"
            ) from None
        if version > SCHEMA_VERSION:
            raise InputError(f"{path}: store schema {version} is newer than this kforensic reads ({SCHEMA_VERSION})")
        if "meta" not in tables or "slab" not in tables:
            raise InputError(f"{path}: not a slab-watch store (no meta/slab tables)")
        store = cls(path, db, readonly)
        store._scratch = scratch
        store._load_ids()
        return store

    @classmethod
    def open_for_writing(cls, path: Path, host: str | NotAvailable, force: bool = False) -> SlabStore:
        """Create the store (0600, WAL) or continue an existing one of the same host.

        A store recorded on another host is refused unless ``force``; a store
        another watcher is writing is refused.
        """
        check_store_path(path)
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            try:  # O_EXCL: only a file this run made is ever removed again
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
                made = True
            except FileExistsError:
                check_store_path(path)  # (it appeared meanwhile: the same rules)
                fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
                made = False
            st = os.fstat(fd)
            os.close(fd)
        except OSError as exc:
            raise InputError(
                f"cannot create store {path}: {exc.strerror or exc}", hint="choose a writable --store PATH"
            ) from None
        if not stat.S_ISREG(st.st_mode):  # swapped for a device between the check and the open
            raise UsageError(f"--store {path} is not a regular file", hint="give a new path or an existing store file")
        empty = st.st_size == 0
        if empty:
            try:
                _create(path, host)
            except (sqlite3.DatabaseError, OSError) as exc:
                # A full disk or a failing device: nothing was committed; leave no empty store behind
                # (only what this run created: an empty file someone else made stays).
                leftovers = [Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}-journal")]
                for leftover in [path, *leftovers] if made else leftovers:
                    with contextlib.suppress(OSError):
                        leftover.unlink()
                raise InputError(
                    f"cannot create store {path}: {exc}", hint="free some space, or choose another --store"
                ) from None
        store = cls.open(path, readonly=False)
        store._lock()
        if not empty:
            store._check_integrity()
        store.db.execute("PRAGMA journal_mode=WAL")
        # FULL: a commit is on disk before the next sample, so a power loss or a reboot keeps it.
        store.db.execute("PRAGMA synchronous=FULL")
        owner = store.meta("host")
        if isinstance(host, str) and owner and owner != host and not force:
            store.close()
            raise UsageError(
                f"store {path} was recorded on host {owner!r}, this is {host!r}",
                hint="give another --store, or --force to add this host's samples to it",
            )
        if isinstance(host, str) and not owner:
            store.db.execute("UPDATE meta SET value = ? WHERE key = 'host'", (host,))
        return store

    def _check_integrity(self) -> None:
        """Refuse to append to a damaged store (exit 3): new samples would be added to a broken file."""
        try:
            rows = [str(r[0]) for r in self.db.execute("PRAGMA quick_check(5)")]
        except sqlite3.DatabaseError as exc:
            rows = [str(exc)]
        if rows != ["ok"]:
            self.close()
            raise InputError(
                f"store {self.path} is damaged ({'; '.join(rows)[:200]}): not adding to it",
                hint=f"salvage what is left: sqlite3 {self.path} .recover | sqlite3 NEW.sqlite"
                " (then analyse NEW.sqlite), and record into a new --store",
            )

    def _lock(self) -> None:
        # flock is independent of SQLite's POSIX locks: it only keeps two watchers apart.
        fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            self.db.close()
            raise UsageError(
                f"store {self.path} is being written by another kforensic",
                hint="stop it first, or give another --store",
            ) from None
        self._lock_fd = fd

    def close(self) -> None:
        """Close the store (and release the writer's lock)."""
        self.db.close()
        _remove_scratch(self._scratch)
        self._scratch = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> SlabStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _load_ids(self) -> None:
        self._cache_ids = {name: i for i, name in self.db.execute("SELECT id, name FROM caches")}
        self._counter_ids = {(s, n): i for i, s, n in self.db.execute("SELECT id, source, name FROM counters")}

    def meta(self, key: str) -> str | None:
        """A value of the ``meta`` table."""
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    # ------------------------------------------------------------ writing

    def begin_run(self, info: RunInfo) -> int:
        """Record the start of a run and what is read once per run; return the run id."""
        ident = info.identity
        with self._transaction():
            cursor = self.db.execute(
                "INSERT INTO runs (origin, started, host, kernel_release, boot_id, page_size, mem_total_bytes,"
                " interval, tool_version, root, topology_error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    info.origin,
                    time.time(),
                    _text_or_none(ident.hostname),
                    _text_or_none(ident.kernel_release),
                    _text_or_none(ident.boot_id),
                    _text_or_none(ident.page_size),
                    _text_or_none(ident.mem_total_bytes),
                    _text_or_none(info.interval),
                    __version__,
                    info.root,
                    info.topology.reason if isinstance(info.topology, NotAvailable) else info.topology.error,
                ),
            )
            run_id = int(cursor.lastrowid or 0)
            if isinstance(info.topology, SlabTopology):
                self.db.executemany(
                    "INSERT INTO aliases VALUES (?, ?, ?)", [(run_id, a.name, a.target) for a in info.topology.aliases]
                )
                self.db.executemany(
                    "INSERT INTO cache_attrs VALUES (?, ?, ?)",
                    [(run_id, a.name, _text_or_none(a.reclaim_account)) for a in info.topology.attributes],
                )
        return run_id

    def end_run(self, run_id: int) -> None:
        """Record the end time of a run."""
        with self._transaction():
            self.db.execute("UPDATE runs SET ended = ? WHERE id = ?", (time.time(), run_id))

    def _cache_id(self, name: str) -> int:
        found = self._cache_ids.get(name)
        if found is None:
            found = int(self.db.execute("INSERT INTO caches (name) VALUES (?)", (name,)).lastrowid or 0)
            self._cache_ids[name] = found
        return found

    def _counter_id(self, source: str, name: str, unit: str) -> int:
        found = self._counter_ids.get((source, name))
        if found is None:
            cursor = self.db.execute("INSERT INTO counters (source, name, unit) VALUES (?, ?, ?)", (source, name, unit))
            found = int(cursor.lastrowid or 0)
            self._counter_ids[(source, name)] = found
        return found

    def append_sample(self, run_id: int, sample: Sample) -> int:
        """Write one sample in one transaction; return its id."""
        with self._transaction():
            missing = sample.missing()
            cursor = self.db.execute(
                "INSERT INTO samples (run_id, wall, uptime, boot_id, cost, missing) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    run_id,
                    sample.wall,
                    _text_or_none(sample.uptime),
                    _text_or_none(sample.boot_id),
                    sample.cost_seconds,
                    "; ".join(missing) if missing else None,
                ),
            )
            sample_id = int(cursor.lastrowid or 0)
            self._write_slabinfo(sample_id, sample.slabinfo)
            values = []
            for source, counters in (("meminfo", sample.meminfo), ("vmstat", sample.vmstat)):
                if isinstance(counters, Counters):
                    values += [
                        (sample_id, self._counter_id(source, c.name, c.unit), c.value) for c in counters.counters
                    ]
            if isinstance(sample.fs, FsCounters):
                values += [(sample_id, self._counter_id("fs", c.name, ""), c.value) for c in sample.fs.as_counters()]
            self.db.executemany("INSERT INTO counter_values VALUES (?, ?, ?)", values)
            if isinstance(sample.kmsg, KmsgBatch) and isinstance(sample.boot_id, str):
                self._write_kmsg(sample_id, sample.boot_id, sample.kmsg)
        return sample_id

    def _write_slabinfo(self, sample_id: int, slabinfo: Slabinfo | NotAvailable) -> None:
        if isinstance(slabinfo, NotAvailable):
            return
        rows = []
        stats = []
        for c in slabinfo.caches:
            cache_id = self._cache_id(c.name)
            rows.append((sample_id, cache_id, *c[1:12]))
            if c.statistics is not None:
                stats.append((sample_id, cache_id, *c.statistics))
        # OR REPLACE: a cache listed twice (two caches of one name) keeps its last line.
        self.db.executemany(f"INSERT OR REPLACE INTO slab VALUES ({', '.join('?' * 13)})", rows)
        if stats:
            self.db.executemany(f"INSERT OR REPLACE INTO slab_stats VALUES ({', '.join('?' * 15)})", stats)

    def _write_kmsg(self, sample_id: int, boot_id: str, batch: KmsgBatch) -> None:
        self.db.executemany(
            "INSERT OR IGNORE INTO kmsg VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    boot_id,
                    r.seq,
                    sample_id,
                    r.facility,
                    r.level,
                    r.usec,
                    r.flags,
                    r.message,
                    "\n".join(f"{k}={v}" for k, v in r.properties) or None,
                    r.caller,
                )
                for r in batch.records
            ],
        )
        self.db.executemany(
            "INSERT INTO kmsg_gaps VALUES (?, ?, ?, ?)",
            [(sample_id, boot_id, g.after_seq, g.next_seq) for g in batch.gaps],
        )

    class _Tx:
        """One transaction; SQLite errors (a full disk, a vanished file) become one-line InputErrors."""

        def __init__(self, db: sqlite3.Connection, path: Path) -> None:
            self.db = db
            self.path = path

        def __enter__(self) -> None:
            try:
                self.db.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise self._error(exc) from None

        def __exit__(self, kind: object, error: object, trace: object) -> None:
            try:
                if kind is None:
                    self.db.execute("COMMIT")
                    return
                if self.db.in_transaction:
                    self.db.execute("ROLLBACK")
            except sqlite3.Error as exc:
                raise self._error(exc) from None
            if isinstance(error, sqlite3.Error):
                raise self._error(error) from None

        def _error(self, exc: sqlite3.Error) -> InputError:
            return InputError(f"cannot write store {self.path}: {exc}", hint="free disk space, or give another --store")

    def _transaction(self) -> SlabStore._Tx:
        if self.readonly:
            raise UsageError(f"store {self.path} was opened read-only")
        return SlabStore._Tx(self.db, self.path)

    # ------------------------------------------------------------ reading

    def last_kmsg_seq(self, boot_id: str) -> int | None:
        """The highest kernel log sequence number stored for ``boot_id``."""
        row = self.db.execute("SELECT max(seq) FROM kmsg WHERE boot_id = ?", (boot_id,)).fetchone()
        return None if row[0] is None else int(row[0])

    def runs(self) -> tuple[RunRow, ...]:
        """All runs, oldest first."""
        cols = ", ".join(RunRow._fields)
        return tuple(RunRow(*r) for r in self.db.execute(f"SELECT {cols} FROM runs ORDER BY id"))

    def samples(self, run_id: int | None = None) -> tuple[SampleRow, ...]:
        """Samples (of one run, or all), in the order they were taken."""
        cols = ", ".join(SampleRow._fields)
        where, args = ("WHERE run_id = ?", (run_id,)) if run_id is not None else ("", ())
        return tuple(SampleRow(*r) for r in self.db.execute(f"SELECT {cols} FROM samples {where} ORDER BY id", args))

    def cache_names(self) -> tuple[str, ...]:
        """Every cache name ever seen, sorted."""
        return tuple(sorted(self._cache_ids))

    def cache_series(self, name: str, run_id: int | None = None) -> tuple[CachePoint, ...]:
        """The samples of one cache, in order (samples where it did not exist are absent)."""
        where = "AND s.run_id = ?" if run_id is not None else ""
        args: tuple[object, ...] = (name,) if run_id is None else (name, run_id)
        query = (
            "SELECT s.id, s.wall, s.boot_id, l.active_objs, l.num_objs, l.objsize, l.objperslab, l.pagesperslab,"
            " l.active_slabs, l.num_slabs FROM slab l JOIN samples s ON s.id = l.sample_id"
            f" JOIN caches c ON c.id = l.cache_id WHERE c.name = ? {where} ORDER BY s.id"
        )
        return tuple(CachePoint(*r) for r in self.db.execute(query, args))

    def counter_names(self) -> tuple[tuple[str, str, str], ...]:
        """(source, name, unit) of every recorded counter, e.g. ("meminfo", "Slab", "kB")."""
        return tuple(self.db.execute("SELECT source, name, unit FROM counters ORDER BY source, id"))

    def counter_series(self, source: str, name: str, run_id: int | None = None) -> tuple[CounterPoint, ...]:
        """The samples of one counter (``source`` is meminfo, vmstat or fs), in order."""
        where = "AND s.run_id = ?" if run_id is not None else ""
        args: tuple[object, ...] = (source, name) if run_id is None else (source, name, run_id)
        query = (
            "SELECT s.id, s.wall, s.boot_id, v.value FROM counter_values v JOIN samples s ON s.id = v.sample_id"
            f" JOIN counters c ON c.id = v.counter_id WHERE c.source = ? AND c.name = ? {where} ORDER BY s.id"
        )
        return tuple(CounterPoint(*r) for r in self.db.execute(query, args))

    def kmsg(self, boot_id: str | None = None) -> tuple[KmsgRow, ...]:
        """Stored kernel log records (of one boot, or all), in order."""
        where, args = ("WHERE boot_id = ?", (boot_id,)) if boot_id is not None else ("", ())
        cols = ", ".join(KmsgRow._fields)
        return tuple(
            KmsgRow(*r) for r in self.db.execute(f"SELECT {cols} FROM kmsg {where} ORDER BY sample_id, seq", args)
        )

    def kmsg_missing(self) -> int:
        """How many kernel log records were never read (sum of the gaps)."""
        row = self.db.execute("SELECT coalesce(sum(next_seq - after_seq - 1), 0) FROM kmsg_gaps").fetchone()
        return int(row[0])

    def aliases(self, run_id: int) -> dict[str, str]:
        """Merged cache name -> the /sys/kernel/slab directory it shares, for one run."""
        return dict(self.db.execute("SELECT name, target FROM aliases WHERE run_id = ?", (run_id,)).fetchall())

    def reclaimable(self, run_id: int) -> dict[str, bool]:
        """Cache name -> reclaim_account, for one run (caches whose attribute was read)."""
        rows = self.db.execute(
            "SELECT name, reclaim_account FROM cache_attrs WHERE run_id = ? AND reclaim_account IS NOT NULL", (run_id,)
        )
        return {name: bool(value) for name, value in rows}

    def boot_segments(self, run_id: int | None = None) -> tuple[tuple[str | None, int, int], ...]:
        """(boot id, first sample id, last sample id) of each stretch of samples within one boot.

        A reboot between two samples is a series break: compare values only within a segment.
        """
        segments: list[tuple[str | None, int, int]] = []
        for sample in self.samples(run_id):
            if segments and segments[-1][0] == sample.boot_id:
                segments[-1] = (sample.boot_id, segments[-1][1], sample.id)
            else:
                segments.append((sample.boot_id, sample.id, sample.id))
        return tuple(segments)

    def slab_frame(self, run_id: int | None = None) -> pd.DataFrame:
        """Every slab row as a pandas DataFrame (one row per sample and cache), pandas imported here.

        Rows are in sample order, then cache name order (SQLite's byte order), with the sample's run,
        times and boot; the same frame as :data:`SLAB_FRAME_QUERY` gives.  Read without that query's
        join and sort, in blocks of plain integers: a day of 10 s samples (2.2 M rows) loads in about
        half the time, and without a Python tuple per row alive at once (the query's way needed about
        1 GB more for it).
        """
        import numpy as np
        import pandas as pd

        where, args = ("WHERE run_id = ? AND", (run_id,)) if run_id is not None else ("WHERE", ())
        samples = pd.read_sql_query(
            f"SELECT id AS sample_id, run_id, wall, uptime, boot_id FROM samples {where}"
            " id IN (SELECT sample_id FROM slab) ORDER BY id",
            self.db,
            params=args,
        )
        caches = self.db.execute("SELECT id, name FROM caches ORDER BY name").fetchall()
        if samples.empty or not caches:  # no rows: the query's own (empty) frame
            return pd.read_sql_query(
                SLAB_FRAME_QUERY.format(where="WHERE s.run_id = ?" if args else ""), self.db, params=args
            )
        in_run = "WHERE sample_id IN (SELECT id FROM samples WHERE run_id = ?)" if run_id is not None else ""
        cursor = self.db.execute(f"SELECT sample_id, cache_id, {', '.join(SLAB_COLUMNS)} FROM slab {in_run}", args)
        blocks = []
        while block := cursor.fetchmany(1 << 16):
            blocks.append(np.array(block, dtype=np.int64))
        data = np.concatenate(blocks)
        ids = np.array([cache_id for cache_id, _ in caches], dtype=np.int64)
        rank = np.full(max(int(ids.max()), int(data[:, 1].max())) + 1, -1, dtype=np.int64)  # id -> place by name
        rank[ids] = np.arange(len(ids))
        names = np.array([name for _, name in caches], dtype=object)
        sample_ids = samples["sample_id"].to_numpy()
        # as the join does, drop rows of unknown caches or samples (none in a store kforensic wrote)
        data = data[(rank[data[:, 1]] >= 0) & np.isin(data[:, 0], sample_ids)]
        order = np.argsort(data[:, 0] * len(ids) + rank[data[:, 1]], kind="stable")
        data = data[order]
        frame: pd.DataFrame = samples.iloc[np.searchsorted(sample_ids, data[:, 0])].reset_index(drop=True)
        frame["cache"] = names[rank[data[:, 1]]]
        for j, column in enumerate(SLAB_COLUMNS):
            frame[column] = data[:, 2 + j]
        return frame

    def counter_frame(self, run_id: int | None = None) -> pd.DataFrame:
        """Every counter value as a pandas DataFrame (one row per sample and counter)."""
        import pandas as pd

        where, args = ("WHERE s.run_id = ?", (run_id,)) if run_id is not None else ("", ())
        query = (
            "SELECT s.id AS sample_id, s.run_id, s.wall, s.uptime, s.boot_id, c.source, c.name, c.unit, v.value"
            " FROM counter_values v JOIN samples s ON s.id = v.sample_id JOIN counters c ON c.id = v.counter_id"
            f" {where} ORDER BY s.id, c.id"
        )
        return pd.read_sql_query(query, self.db, params=args)

    def iter_slab_rows(self, run_id: int | None = None) -> Iterator[tuple[object, ...]]:
        """Slab rows as (sample id, wall, boot id, cache, the 11 slabinfo numbers), without pandas."""
        where, args = ("WHERE s.run_id = ?", (run_id,)) if run_id is not None else ("", ())
        query = (
            "SELECT s.id, s.wall, s.boot_id, c.name, l.active_objs, l.num_objs, l.objsize, l.objperslab,"
            " l.pagesperslab, l.tunable_limit, l.batchcount, l.sharedfactor, l.active_slabs, l.num_slabs,"
            " l.sharedavail FROM slab l JOIN samples s ON s.id = l.sample_id JOIN caches c ON c.id = l.cache_id"
            f" {where} ORDER BY s.id, c.name"
        )
        yield from self.db.execute(query, args)

    def sample_line(self, sample_id: int, cache: str) -> str | None:
        """The slabinfo line of ``cache`` in sample ``sample_id``, formatted as the kernel prints it."""
        row = self.db.execute(
            "SELECT l.active_objs, l.num_objs, l.objsize, l.objperslab, l.pagesperslab, l.tunable_limit,"
            " l.batchcount, l.sharedfactor, l.active_slabs, l.num_slabs, l.sharedavail FROM slab l"
            " JOIN caches c ON c.id = l.cache_id WHERE l.sample_id = ? AND c.name = ?",
            (sample_id, cache),
        ).fetchone()
        if row is None:
            return None
        # Same widths as mm/slab_common.c cache_show().
        return (
            f"{cache:<17} {row[0]:6} {row[1]:6} {row[2]:6} {row[3]:4} {row[4]:4}"
            f" : tunables {row[5]:4} {row[6]:4} {row[7]:4} : slabdata {row[8]:6} {row[9]:6} {row[10]:6}"
        )

    def resolve_evidence(self, evidence: Evidence) -> str | None:
        """Resolver of SAMPLE locators for :func:`forensics.evidence.check_evidence`.

        ``locator.start`` is the sample id and ``locator.name`` the cache (or
        ``meminfo:NAME`` / ``vmstat:NAME`` / ``fs:NAME`` for a counter); the
        text found is the slabinfo line, or ``NAME: VALUE [unit]``.
        """
        loc = evidence.locator
        if loc.kind is not LocatorKind.SAMPLE or not loc.name:
            return None
        source, colon, name = loc.name.partition(":")
        if colon and source in ("meminfo", "vmstat", "fs"):
            row = self.db.execute(
                "SELECT v.value, c.unit FROM counter_values v JOIN counters c ON c.id = v.counter_id"
                " WHERE v.sample_id = ? AND c.source = ? AND c.name = ?",
                (loc.start, source, name),
            ).fetchone()
            return None if row is None else f"{name}: {row[0]} {row[1]}".rstrip()
        return self.sample_line(loc.start, loc.name)

    def summary(self, run_id: int | None = None, top: int = 5) -> StoreSummary:
        """Samples, caches, boots and the top growers (by bytes in use) within the last boot's series."""
        samples = self.samples(run_id)
        segments = self.boot_segments(run_id)
        growers: list[CacheGrowth] = []
        if segments:
            _, first, last = segments[-1]
            query = (
                "SELECT c.name, l.active_objs, l.objsize FROM slab l JOIN caches c ON c.id = l.cache_id"
                " WHERE l.sample_id = ?"
            )
            before = {n: (a, s) for n, a, s in self.db.execute(query, (first,))}
            after = {n: (a, s) for n, a, s in self.db.execute(query, (last,))}
            for name in before.keys() & after.keys():
                (a0, s0), (a1, s1) = before[name], after[name]
                growers.append(CacheGrowth(name, a0 * s0, a1 * s1, a0, a1))
            growers = sorted((g for g in growers if g.delta_bytes > 0), key=lambda g: (-g.delta_bytes, g.name))
        ids = [s.id for s in samples]
        caches = 0
        kmsg = 0
        if ids:
            span = (min(ids), max(ids))
            caches = self.db.execute(
                "SELECT count(DISTINCT cache_id) FROM slab WHERE sample_id BETWEEN ? AND ?", span
            ).fetchone()[0]
            kmsg = self.db.execute("SELECT count(*) FROM kmsg WHERE sample_id BETWEEN ? AND ?", span).fetchone()[0]
        return StoreSummary(
            samples=len(samples),
            caches=int(caches),
            boots=len({s[0] for s in segments}),
            first_wall=samples[0].wall if samples else NotAvailable("no samples"),
            last_wall=samples[-1].wall if samples else NotAvailable("no samples"),
            kmsg_records=int(kmsg),
            kmsg_missing=self.kmsg_missing(),
            top_growers=tuple(growers[:top]),
        )
