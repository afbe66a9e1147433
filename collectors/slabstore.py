"""The slab-watch store: one SQLite file of samples of kernel memory counters.

Layout (schema ``kforensic.slabstore/2``, ``PRAGMA user_version = 2``; the
tables are documented in docs/slab-watch.md):

* ``meta``: key/value: schema, host the store belongs to, creation time.
* ``runs``: one row per ``slab-watch`` or ``slab-import`` invocation, with what
  is read once per run (kernel release, boot id, page size, MemTotal).
* ``samples``: one row per sample: wall clock, uptime, **boot id** (a change of
  boot id between samples is a series break: the machine rebooted), the CPU
  cost of taking it, and the reasons for anything that could not be read.
* ``caches`` / ``slab_packed``: every /proc/slabinfo column of every cache in
  every sample, one row per sample: the cache ids and each column as a packed
  integer blob (collectors/slabpack.py); ``slab_stats``: SLAB's statistics
  columns, one row per sample and cache (statistics kernels only).
* ``counters`` / ``counter_packed``: meminfo, the recorded vmstat counters and
  the /proc/sys/fs counts, one packed row per sample.
* ``kmsg`` / ``kmsg_gaps``: kernel log records keyed by (boot id, sequence
  number), so a restarted watcher neither duplicates nor misses a record.
* ``aliases`` / ``cache_attrs``: /sys/kernel/slab merges and reclaim_account per run.

Schema 1 had a row per sample and cache (``slab``) and per sample and counter
(``counter_values``).  Opening such a store for writing migrates it in place, in
one transaction; opening it read-only leaves the file as it is and reads it
through packed tables made in a private temporary database.

The file is in WAL mode and each sample is one transaction, so a watcher
killed at any moment loses at most the sample it was writing.  The file is
created mode 0600 (it holds kernel data); SQLite gives its -wal and -shm files
the same mode.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shlex
import sqlite3
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

# What urllib.request.pathname2url is on POSIX (3.11-3.13): importing urllib.request for it imported http.client,
# email and ssl, ~29 ms of CPU of every command that reads or writes a store.
from urllib.parse import quote as pathname2url

from collectors.kmsg import KmsgBatch
from collectors.procfs import Counters, FsCounters, HostIdentity, Slabinfo, SlabTopology
from collectors.slabpack import (
    PACKED_DDL,
    SLAB_COLUMNS,
    migrate,
    packed_counter_row,
    packed_slab_row,
    unpack_list,
    unpack_many,
)
from forensics import __version__
from forensics.errors import InputError, UsageError
from forensics.model import Evidence, LocatorKind, NotAvailable, SourceRecord
from forensics.output import check_output_directories, signals_held
from forensics.types.slab import CacheGrowth, CounterPoint, CounterTable, SampleRow, SlabTable, StoreSummary
from forensics.userdirs import NoHomeError, home

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import pandas as pd

SCHEMA = "kforensic.slabstore/2"
SCHEMA_VERSION = 2
STORE_FILE_NAME = "slab-watch.sqlite"

#: The columns of SlabStore.slab_frame(), in order (the slabinfo columns after the sample's and the cache's).
SLAB_FRAME_COLUMNS = ("sample_id", "run_id", "wall", "uptime", "boot_id", "cache", *SLAB_COLUMNS)
#: The columns of SlabStore.counter_frame(), in order.
COUNTER_FRAME_COLUMNS = ("sample_id", "run_id", "wall", "uptime", "boot_id", "source", "name", "unit", "value")
#: Packed rows read per SQLite round trip when decoding.
_BLOCK = 4096

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
CREATE TABLE slab_stats (
    sample_id INTEGER NOT NULL, cache_id INTEGER NOT NULL,
    listallocs INTEGER, maxobjs INTEGER, grown INTEGER, reaped INTEGER, error INTEGER,
    maxfreeable INTEGER, nodeallocs INTEGER, remotefrees INTEGER, alienoverflow INTEGER,
    allochit INTEGER, allocmiss INTEGER, freehit INTEGER, freemiss INTEGER,
    PRIMARY KEY (sample_id, cache_id)) WITHOUT ROWID;
CREATE TABLE counters (
    id INTEGER PRIMARY KEY, source TEXT NOT NULL, name TEXT NOT NULL, unit TEXT NOT NULL,
    UNIQUE (source, name));
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
""" + PACKED_DDL.format(schema="")


class StoreClashError(InputError):
    """A write refused by the store's keys (rows of deleted samples hold the new one's): no space would help."""


def default_store_path() -> Path:
    """/var/lib/kforensic/slab-watch.sqlite for root, ~/.local/share/kforensic/slab-watch.sqlite otherwise; a user
    without a home (forensics.userdirs) is told to name the store."""
    if os.geteuid() == 0:
        return Path("/var/lib/kforensic") / STORE_FILE_NAME
    try:
        return home() / ".local/share/kforensic" / STORE_FILE_NAME
    except NoHomeError as exc:
        raise UsageError(f"no default slab store: {exc}", hint="give --store PATH") from None


def _other_input_hint(path: Path, hint: str) -> str:
    """``hint``, after what the file is where its first bytes are a log or a trace another command reads."""
    from collectors.kernel_log import read_with, text_reader

    try:
        with open(path, "rb") as given:
            head = given.read(16 << 10)
    except OSError:
        return hint
    if head.startswith(b"slabinfo - version"):  # a copy of /proc/slabinfo (or the file itself): slab-import reads them
        if path.resolve().parts[1:2] == ("proc",):
            return "that is the live slabinfo: sample it into a store with kforensic slab-watch --store S"
        return (
            f"it looks like slabinfo text: make a store of such snapshots with kforensic slab-import --store S {path}"
        )
    kind = text_reader(head)
    return f"it looks like {kind[0]}: {read_with(kind, str(path))}; {hint}" if kind else hint


def check_store_directory(given: str | Path | None, store: Path) -> None:
    """Refuse (exit 3) a store FILE named in a directory that does not exist.

    The default store's directory and a directory named for the store (``--store /var/lib/kforensic/``) are output
    directories, created with their parents when the store is written (docs/cli.md, "Output files"); a file path is
    not: ``--store /nonexist/dir/s.sqlite`` made ``/nonexist/dir`` as root and exited 0, a store nobody would look for.
    """
    if given is not None and not (Path(given).is_dir() or str(given).endswith("/")):
        check_output_directories([store])


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
        if Path(os.path.realpath(path)).parts[1:2] in (("proc",), ("sys",)):
            # A kernel file reads as a regular one of 0 bytes, taken for a new store: /proc/slabinfo (writable by
            # root) failed in SQLite, "cannot create store ...: unable to open database file", hint "free some space".
            raise UsageError(
                f"--store {path} is a kernel file (under /{Path(os.path.realpath(path)).parts[1]}), not a store;"
                " nothing was written",
                hint="give a new path for the store (e.g. --store /var/lib/kforensic/); slab-watch reads "
                "/proc/slabinfo itself",
            )
        return
    kind = file_kind(st.st_mode)
    via = f" (a symbolic link to {os.path.realpath(path)})" if os.path.islink(path) else ""
    raise UsageError(
        f"--store {path}{via} is {kind}: a store is a regular file; nothing was written",
        hint="give a new path or an existing store file (e.g. --store slab.sqlite)",
    )


def _unchanged(path: Path, exc: sqlite3.Error) -> InputError:
    """Opening an existing store for writing failed before anything was written (a full disk, mostly)."""
    return InputError(
        f"cannot open store {path} for writing: {exc}; the store is unchanged",
        hint="free disk space (is its file system full?), or give another --store",
    )


def _is_text(path: Path) -> bool:
    """Whether ``path`` starts with bytes that are no SQLite file (SQLite reads a file it cannot use, /proc/slabinfo
    whose size is 0, as an empty database)."""
    try:
        with open(path, "rb") as given:
            head = given.read(16)
    except OSError:
        return False
    return bool(head) and head != b"SQLite format 3\x00"


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


def _sample_arrays(
    samples: list[tuple[int, int, float, float | None, str | None]],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], npt.NDArray[np.int64], tuple[str, ...]]:
    """Sample ids, walls, boot codes (-1: unknown boot id) and the boot ids in order of appearance."""
    import numpy as np

    boots = [s[4] for s in samples]
    boot_ids = tuple(dict.fromkeys(b for b in boots if b is not None))
    code = {b: i for i, b in enumerate(boot_ids)}
    return (
        np.array([s[0] for s in samples], dtype=np.int64),
        np.array([s[2] for s in samples], dtype=np.float64),
        np.array([-1 if b is None else code[b] for b in boots], dtype=np.int64),
        boot_ids,
    )


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
        if not os.access(path, os.R_OK):  # SQLite would say only "unable to open database file"
            raise InputError(
                f"cannot read store {path}: permission denied",
                hint="run as the store's owner (or root), or give a copy you may read",
            )
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
            if not readonly and isinstance(exc, sqlite3.OperationalError) and "disk" in str(exc):
                raise _unchanged(path, exc) from None  # a full disk: SQLite cannot make its -shm index
            raise InputError(
                f"{path}: not a slab-watch store ({exc})",
                hint=_other_input_hint(path, "give a file written by slab-watch"),
            ) from None
        if version > SCHEMA_VERSION:
            raise InputError(f"{path}: store schema {version} is newer than this kforensic reads ({SCHEMA_VERSION})")
        size = path.stat().st_size
        if not tables and not _is_text(path) and (size == 0 or Path(f"{path}-wal").exists()):
            db.close()
            _remove_scratch(scratch)
            # slab-watch makes a new store's file, then its tables in its WAL (within a second): a store read in
            # between, or a file left empty, read "not a slab-watch store (no meta/slab tables)", as if the wrong
            # file.  (An SQLite file without tables and no WAL is no store being made: said below.)
            raise InputError(
                f"{path}: an empty store file (no tables yet, {size:,} bytes): a slab-watch starting"
                " creates them within a second",
                hint="run it again once slab-watch has taken a sample; else give a store slab-watch wrote",
            )
        if "meta" not in tables or not tables & {"slab", "slab_packed"}:
            db.close()
            _remove_scratch(scratch)
            raise InputError(
                f"{path}: not a slab-watch store ("
                + (
                    "an SQLite database without its meta/slab tables"
                    if tables
                    else "not an SQLite database"
                    if _is_text(path)
                    else "an SQLite file without tables: cut short, or never written"
                )
                + ")",
                hint=_other_input_hint(path, "give a file written by slab-watch"),
            )
        store = cls(path, db, readonly)
        store._scratch = scratch
        if readonly:
            store._check_pages("not reading it", "; the store was not changed")
        if "slab_packed" not in tables:
            store._read_schema_1()
        store._load_ids()
        if readonly:
            store._check_values()
        return store

    def _quick_check(self) -> str | None:
        """SQLite's first problems with the store's pages on one line (None: none found)."""
        try:
            rows = [str(r[0]) for r in self.db.execute("PRAGMA main.quick_check(5)")]
        except sqlite3.DatabaseError as exc:
            rows = [str(exc)]
        if rows == ["ok"]:
            return None
        # Its report spans lines and opens with "*** in database main ***": an error is one line.
        lines = [line.strip() for row in rows for line in row.splitlines()]
        said = "; ".join(line for line in lines if line and not line.startswith("***"))
        return said if len(said) <= 200 else said[:197] + "..."

    def _check_pages(self, refusing: str, then: str) -> None:
        """Refuse (exit 3) a store whose pages fail SQLite's ``quick_check``, reading it or adding to it.

        Overwritten pages can still decode: packed rows then held absurd counts and the analysis called a real
        leak "no leak" (exit 0 under --fail-on).  quick_check reads every page once without comparing indexes
        with their tables: 0.35 s of CPU for a week of 10 s samples of 250 caches (423 MB), against 6.5 s for
        the whole ``leaks`` run on it.
        """
        if (problem := self._quick_check()) is not None:
            self.close()
            raise InputError(
                f"store {self.path} is damaged ({problem}): {refusing}",
                hint=f"salvage what is left: sqlite3 {self.path} .recover | sqlite3 NEW.sqlite"
                f" (then analyse NEW.sqlite){then}",
            )

    def _check_values(self) -> None:
        """Refuse (exit 3) a store whose columns hold what no writer puts there: a time that is no number,
        a negative count of packed values (were exit 4 in numpy: a text ``wall``, ``caches = -1``).

        A wall time beyond 1e100 s is no clock's either: the window arithmetic overflowed into numpy warnings.
        One scan of the samples and of the packed tables' count columns (the blobs after them are not read).
        """
        try:
            bad = self.db.execute(
                "SELECT id, quote(wall), quote(uptime) FROM samples WHERE typeof(wall) NOT IN ('real', 'integer')"
                " OR abs(wall) > 1e100 OR typeof(uptime) NOT IN ('real', 'integer', 'null') LIMIT 1"
            ).fetchone()
            counts = [
                self.db.execute(f"SELECT sample_id, quote({count}) FROM {table} WHERE {check} LIMIT 1").fetchone()
                for table, count in (("slab_packed", "caches"), ("counter_packed", "counters"))
                for check in (f"typeof({count}) != 'integer' OR {count} < 0",)
            ]
        except sqlite3.DatabaseError as exc:
            raise InputError(f"{self.path}: damaged store ({exc})") from None
        hint = "salvage it with sqlite3 STORE .recover, or record a new store"
        if bad is not None:
            raise InputError(
                f"{self.path}: damaged store: sample {bad[0]} has time {bad[1]}, uptime {bad[2]}: no clock gives that",
                hint=hint,
            )
        for table, row in zip(("slab_packed", "counter_packed"), counts, strict=True):
            if row is not None:
                raise InputError(
                    f"{self.path}: damaged store: {table} of sample {row[0]} counts {row[1]} values", hint=hint
                )

    def _read_schema_1(self) -> None:
        """Make a schema-1 store readable: migrate it in place (writing) or into a private temporary database."""
        try:
            if self.readonly:
                # An empty name: SQLite's private temporary file, removed on close.  Unqualified table
                # names find its slab_packed and counter_packed after the store's own tables.
                self.db.execute("ATTACH DATABASE '' AS packed")
                self.db.execute("BEGIN")
                migrate(self.db, "packed")
                self.db.execute("COMMIT")
                return
            self.db.execute("BEGIN IMMEDIATE")
            migrate(self.db, "main")
            self.db.execute("DROP TABLE slab")
            self.db.execute("DROP TABLE counter_values")
            self.db.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (SCHEMA,))
            self.db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            self.db.execute("COMMIT")
        except sqlite3.Error as exc:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            self.close()
            raise InputError(
                f"{self.path}: cannot read its schema-1 tables into the packed layout ({exc})",
                hint="free some disk space (the temporary directory, or beside the store) and retry",
            ) from None

    @classmethod
    def open_for_writing(cls, path: Path, host: str | NotAvailable, force: bool = False) -> SlabStore:
        """Create the store (0600, WAL) or continue an existing one of the same host.

        A store recorded on another host is refused unless ``force``; a store
        another watcher is writing is refused.
        """
        check_store_path(path)
        # A signal between the new file and its committed tables left a store without tables (the next slab-watch
        # refused it: "not a slab-watch store"): held until they are there, then it acts as it would have.
        with signals_held():
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
                raise UsageError(
                    f"--store {path} is not a regular file", hint="give a new path or an existing store file"
                )
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
            store._check_pages("not adding to it", ", and record into a new --store")
            store._check_orphans()
        try:
            store.db.execute("PRAGMA journal_mode=WAL")
            # FULL: a commit is on disk before the next sample, so a power loss or a reboot keeps it.
            store.db.execute("PRAGMA synchronous=FULL")
        except sqlite3.OperationalError as exc:
            store.close()
            raise _unchanged(path, exc) from None
        owner = store.meta("host")
        if isinstance(host, str) and owner and owner != host and not force:
            store.close()
            raise UsageError(
                f"store {path} was recorded on host {owner!r}, this is {host!r}",
                hint="give another --store, or --force to add this host's samples to it",
            )
        if isinstance(host, str) and not owner:
            try:
                store.db.execute("UPDATE meta SET value = ? WHERE key = 'host'", (host,))
            except sqlite3.OperationalError as exc:
                store.close()
                raise _unchanged(path, exc) from None
        return store

    #: Tables keyed by the sample a row belongs to: a row there past the last sample takes the next one's number.
    _BY_SAMPLE = ("slab_packed", "counter_packed", "slab_stats")

    def _check_orphans(self) -> None:
        """Refuse to append (exit 3) to a store holding rows of samples past its last one (their sample rows were
        deleted): the next sample takes the number they hold, and its write fails on their key (SQLite's "UNIQUE
        constraint failed: slab_packed.sample_id", told to free disk space).  Index lookups only."""
        last = int(self.db.execute("SELECT coalesce(max(id), 0) FROM samples").fetchone()[0])
        found = [
            (table, int(row[0]))
            for table in self._BY_SAMPLE
            if (row := self.db.execute(f"SELECT min(sample_id) FROM {table} WHERE sample_id > ?", (last,)).fetchone())[
                0
            ]
            is not None
        ]
        if not found:
            return
        self.close()
        where = ", ".join(f"{table} from sample {first}" for table, first in found)
        delete = "; ".join(f"DELETE FROM {table} WHERE sample_id > {last}" for table, _ in found)
        # Quoted for a POSIX shell: the path is the user's (a space or a quote in it broke the command).
        command = f"sqlite3 {shlex.quote(str(self.path))} {shlex.quote(delete)}"
        raise InputError(
            f"store {self.path} holds rows of samples it does not have ({where}; its last sample is {last}):"
            " a new sample would take their number, so nothing was added",
            hint=f"record into another --store, or delete them: {command}",
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
            values: list[tuple[int, int]] = []
            for source, counters in (("meminfo", sample.meminfo), ("vmstat", sample.vmstat)):
                if isinstance(counters, Counters):
                    values += [(self._counter_id(source, c.name, c.unit), c.value) for c in counters.counters]
            if isinstance(sample.fs, FsCounters):
                values += [(self._counter_id("fs", c.name, ""), c.value) for c in sample.fs.as_counters()]
            if values:
                self.db.execute("INSERT INTO counter_packed VALUES (?, ?, ?, ?)", packed_counter_row(sample_id, values))
            if isinstance(sample.kmsg, KmsgBatch) and isinstance(sample.boot_id, str):
                self._write_kmsg(sample_id, sample.boot_id, sample.kmsg)
        return sample_id

    def _write_slabinfo(self, sample_id: int, slabinfo: Slabinfo | NotAvailable) -> None:
        if isinstance(slabinfo, NotAvailable) or not slabinfo.caches:
            return
        rows: dict[int, tuple[int, ...]] = {}
        stats = []
        for c in slabinfo.caches:
            cache_id = self._cache_id(c.name)
            rows[cache_id] = (cache_id, *c[1:12])  # a cache listed twice (two caches of one name) keeps its last line
            if c.statistics is not None:
                stats.append((sample_id, cache_id, *c.statistics))
        marks = ", ".join("?" * (3 + len(SLAB_COLUMNS)))
        self.db.execute(f"INSERT INTO slab_packed VALUES ({marks})", packed_slab_row(sample_id, list(rows.values())))
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
            if isinstance(exc, sqlite3.IntegrityError):  # not space: rows already there hold the new one's key
                return StoreClashError(
                    f"cannot write store {self.path}: {exc}: it holds rows that clash with the new sample's",
                    hint="record into another --store",
                )
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

    # ------------------------------------------------------------ packed rows

    def _packed_rows(
        self,
        table: str,
        columns: tuple[str, ...],
        run_id: int | None = None,
        where: str = "",
        args: tuple[object, ...] = (),
    ) -> Iterator[list[Any]]:
        """Blocks of (sample id, count, *columns) rows of slab_packed or counter_packed, in sample order."""
        count = "caches" if table == "slab_packed" else "counters"
        in_run = "sample_id IN (SELECT id FROM samples WHERE run_id = ?)" if run_id is not None else ""
        conditions = [c for c in (where, in_run) if c]
        if run_id is not None:
            args = (*args, run_id)
        clause = f"WHERE {' AND '.join(conditions)}" if conditions else ""
        cursor = self.db.execute(
            f"SELECT sample_id, {count}, {', '.join(columns)} FROM {table} {clause} ORDER BY sample_id", args
        )
        while block := cursor.fetchmany(_BLOCK):
            yield block

    def _slab_long(
        self, columns: tuple[str, ...], run_id: int | None = None
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], list[npt.NDArray[np.int64]]]:
        """(sample id, cache id) of every slab row and the given columns, in stored order (sample order)."""
        import numpy as np

        sample_parts, id_parts = [], []
        value_parts: list[list[npt.NDArray[np.int64]]] = [[] for _ in columns]
        for block in self._packed_rows("slab_packed", ("cache_id", *columns), run_id):
            counts = np.array([r[1] for r in block], dtype=np.int64)
            sample_parts.append(np.repeat(np.array([r[0] for r in block], dtype=np.int64), counts))
            id_parts.append(unpack_many([r[2] for r in block], counts))
            for j in range(len(columns)):
                value_parts[j].append(unpack_many([r[3 + j] for r in block], counts))

        def joined(parts: list[npt.NDArray[np.int64]]) -> npt.NDArray[np.int64]:
            return np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)

        return joined(sample_parts), joined(id_parts), [joined(p) for p in value_parts]

    def _row_of(self, table: str, sample_id: int, columns: tuple[str, ...]) -> list[list[int]] | None:
        """The ids and the given columns of one sample's packed row, as Python ints (None: no row)."""
        count, ids = ("caches", "cache_id") if table == "slab_packed" else ("counters", "counter_id")
        row = self.db.execute(
            f"SELECT {count}, {ids}, {', '.join(columns)} FROM {table} WHERE sample_id = ?", (sample_id,)
        ).fetchone()
        if row is None:
            return None
        return [unpack_list(blob, int(row[0])) for blob in row[1:]]

    def _run_samples(self, run_id: int | None) -> list[tuple[int, int, float, float | None, str | None]]:
        """(id, run id, wall, uptime, boot id) of every sample (of one run), in order: the samples table only."""
        where, args = ("WHERE run_id = ?", (run_id,)) if run_id is not None else ("", ())
        return list(self.db.execute(f"SELECT id, run_id, wall, uptime, boot_id FROM samples {where} ORDER BY id", args))

    def _samples_with(self, table: str, run_id: int | None) -> list[tuple[int, int, float, float | None, str | None]]:
        """(id, run id, wall, uptime, boot id) of the samples with a row in ``table``, in order."""
        where, args = ("AND run_id = ?", (run_id,)) if run_id is not None else ("", ())
        query = (
            f"SELECT id, run_id, wall, uptime, boot_id FROM samples WHERE id IN (SELECT sample_id FROM {table})"
            f" {where} ORDER BY id"
        )
        return list(self.db.execute(query, args))

    # ------------------------------------------------------------ series and frames

    def cache_series(self, name: str, run_id: int | None = None) -> tuple[CachePoint, ...]:
        """The samples of one cache, in order (samples where it did not exist are absent)."""
        cache_id = self._cache_ids.get(name)
        if cache_id is None:
            return ()
        walls = {s[0]: s for s in self._samples_with("slab_packed", run_id)}
        wanted = ("active_objs", "num_objs", "objsize", "objperslab", "pagesperslab", "active_slabs", "num_slabs")
        out = []
        for block in self._packed_rows("slab_packed", ("cache_id", *wanted), run_id):
            for sample_id, count, ids, *blobs in block:
                found = unpack_list(ids, count)
                if cache_id in found:
                    place = found.index(cache_id)
                    _, _, wall, _, boot = walls[sample_id]
                    out.append(CachePoint(sample_id, wall, boot, *(unpack_list(b, count)[place] for b in blobs)))
        return tuple(out)

    def counter_series(self, source: str, name: str, run_id: int | None = None) -> tuple[CounterPoint, ...]:
        """The samples of one counter (``source`` is meminfo, vmstat or fs), in order."""
        counter_id = self._counter_ids.get((source, name))
        if counter_id is None:
            return ()
        walls = {s[0]: s for s in self._samples_with("counter_packed", run_id)}
        out = []
        for block in self._packed_rows("counter_packed", ("counter_id", "value"), run_id):
            for sample_id, count, ids, values in block:
                found = unpack_list(ids, count)
                if counter_id in found:
                    _, _, wall, _, boot = walls[sample_id]
                    out.append(CounterPoint(sample_id, wall, boot, unpack_list(values, count)[found.index(counter_id)]))
        return tuple(out)

    def counter_names(self) -> tuple[tuple[str, str, str], ...]:
        """(source, name, unit) of every recorded counter, e.g. ("meminfo", "Slab", "kB")."""
        return tuple(self.db.execute("SELECT source, name, unit FROM counters ORDER BY source, id"))

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

        Columns :data:`SLAB_FRAME_COLUMNS`; rows in sample order, then cache name order (code point
        order, as SQLite's BINARY collation sorts them), as schema 1's join-and-sort query gave them.
        """
        import numpy as np
        import pandas as pd

        samples = self._samples_frame("slab_packed", run_id)
        caches = self.db.execute("SELECT id, name FROM caches ORDER BY name").fetchall()
        if samples.empty or not caches:
            return pd.DataFrame({c: pd.Series(dtype=object) for c in SLAB_FRAME_COLUMNS})
        sample_col, id_col, values = self._slab_long(SLAB_COLUMNS, run_id)
        rank = self._rank([cache_id for cache_id, _ in caches], id_col)
        known = (
            rank[id_col] >= 0
        )  # as schema 1's join did, leave out rows of unknown caches (none if kforensic wrote it)
        sample_col, id_col, values = sample_col[known], id_col[known], [v[known] for v in values]
        names = np.array([name for _, name in caches], dtype=object)
        order = np.argsort(sample_col * len(caches) + rank[id_col], kind="stable")
        columns = self._sample_columns(samples, sample_col[order])
        columns["cache"] = names[rank[id_col[order]]]
        columns.update((column, value[order]) for column, value in zip(SLAB_COLUMNS, values, strict=True))
        return pd.DataFrame(columns, copy=False)

    @staticmethod
    def _sample_columns(samples: pd.DataFrame, sample_col: npt.NDArray[np.int64]) -> dict[str, Any]:
        """The samples' columns repeated for each row of ``sample_col`` (dtypes as SQLite's rows gave them)."""
        import numpy as np

        place = np.searchsorted(samples["sample_id"].to_numpy(), sample_col)
        return {c: samples[c].to_numpy()[place] for c in samples.columns}

    @staticmethod
    def _rank(ids_by_name: list[int], seen: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """id -> place in ``ids_by_name`` (-1: an id the table lacks), as an array indexed by id."""
        import numpy as np

        ids = np.array(ids_by_name, dtype=np.int64)
        top = max(int(ids.max()) if len(ids) else 0, int(seen.max()) if len(seen) else 0)
        rank = np.full(top + 1, -1, dtype=np.int64)
        rank[ids] = np.arange(len(ids))
        return rank

    def _samples_frame(self, table: str, run_id: int | None) -> pd.DataFrame:
        import pandas as pd

        where, args = ("AND run_id = ?", (run_id,)) if run_id is not None else ("", ())
        return pd.read_sql_query(
            f"SELECT id AS sample_id, run_id, wall, uptime, boot_id FROM samples"
            f" WHERE id IN (SELECT sample_id FROM {table}) {where} ORDER BY id",
            self.db,
            params=args,
        )

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        """One read transaction: every read inside sees the store as it was at the first one.

        Without it each SELECT sees the store as of its own start: on a store slab-watch is writing, the
        samples read first and the packed rows read next differed by the samples committed in between, and
        a live store was called "damaged store: packed rows of samples the samples table lacks" (exit 3;
        seen in tests/live/test_live_prometheus.py at load 10, 2026-12-05).  Nested: the outer one holds.
        """
        if self.db.in_transaction:
            yield
            return
        self.db.execute("BEGIN")
        try:
            yield
        finally:
            if self.db.in_transaction:
                self.db.execute("COMMIT")  # a read transaction: nothing to write, the snapshot let go

    def slab_table(self, run_id: int | None = None) -> SlabTable:
        """The slab samples as matrices (:class:`~forensics.types.slab.SlabTable`): what the leak analysis reads.

        Decoded block by block straight into the matrices: a week of 10 s samples of 250 caches
        never exists as 15 million rows.  Read in one :meth:`snapshot`.
        """
        with self.snapshot():
            return self._slab_table(run_id)

    def _slab_table(self, run_id: int | None) -> SlabTable:
        import numpy as np

        # Every sample of the run has a row; those without slabinfo are dropped at the end.  (Asking
        # SQLite for "the samples with a packed row" would read the whole packed table twice.)
        samples = self._run_samples(run_id)
        all_ids = np.array([s[0] for s in samples], dtype=np.int64)
        seen = np.zeros(len(samples), dtype=bool)
        caches = self.db.execute("SELECT id, name FROM caches ORDER BY name").fetchall()
        rank = self._rank([cache_id for cache_id, _ in caches], np.empty(0, dtype=np.int64))
        shape = (len(samples), len(caches))
        matrices = [np.full(shape, np.nan) for _ in range(3)]
        places: dict[bytes, npt.NDArray[np.int64]] = {}  # a sample's cache ids -> their columns
        for block in self._packed_rows("slab_packed", ("cache_id", "active_objs", "num_objs", "objsize"), run_id):
            counts = np.array([r[1] for r in block], dtype=np.int64)
            at = self._rows_of(all_ids, block)
            seen[at] = True
            row = int(at[0])
            consecutive = int(at[-1]) - row == len(block) - 1  # else samples without slabinfo among them
            first: bytes = block[0][2]
            if first not in places:
                places[first] = self._columns_of(first, int(counts[0]), rank)
            same = all(r[2] == first for r in block)
            for j, matrix in enumerate(matrices):
                values = unpack_many([r[3 + j] for r in block], counts).astype(np.float64)
                if j == 2:  # num_objs * objsize, in float64 as the analysis of a long frame multiplies them
                    values *= unpack_many([r[4] for r in block], counts).astype(np.float64)
                if same and consecutive:  # consecutive samples listing the same caches: one assignment
                    matrix[row : row + len(block), places[first]] = values.reshape(len(block), -1)
                    continue
                start = 0
                for k, r in enumerate(block):
                    ids: bytes = r[2]
                    if ids not in places:
                        places[ids] = self._columns_of(ids, int(counts[k]), rank)
                    matrix[int(at[k]), places[ids]] = values[start : start + int(counts[k])]
                    start += int(counts[k])
        present = ~np.isnan(matrices[1]).all(axis=0)
        if not bool(present.all()):
            matrices = [m[:, present] for m in matrices]
        if not bool(seen.all()):
            matrices = [m[seen] for m in matrices]
            samples = [s for s, kept in zip(samples, seen.tolist(), strict=True) if kept]
        sample_ids, walls, boot_codes, boot_ids = _sample_arrays(samples)
        return SlabTable(
            sample_ids=sample_ids,
            walls=walls,
            boot_codes=boot_codes,
            boot_ids=boot_ids,
            names=tuple(name for (_, name), p in zip(caches, present.tolist(), strict=True) if p),
            active_objs=matrices[0],
            num_objs=matrices[1],
            num_bytes=matrices[2],
        )

    def _rows_of(self, all_ids: npt.NDArray[np.int64], block: list[Any]) -> npt.NDArray[np.int64]:
        """The places in ``all_ids`` of a block's sample ids (a packed row of no sample: a damaged store)."""
        import numpy as np

        ids = np.array([r[0] for r in block], dtype=np.int64)
        at = np.searchsorted(all_ids, ids)
        if bool((at >= len(all_ids)).any()) or bool((all_ids[np.minimum(at, len(all_ids) - 1)] != ids).any()):
            raise InputError(f"{self.path}: damaged store: packed rows of samples the samples table lacks")
        return at

    def _columns_of(self, ids: bytes, count: int, rank: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        import numpy as np

        found = np.array(unpack_list(ids, count), dtype=np.int64)
        if len(found) and (int(found.max()) >= len(rank) or bool((rank[found] < 0).any())):
            raise InputError(f"{self.path}: damaged store: a sample names a cache id the caches table lacks")
        return rank[found]

    def counter_frame(
        self, run_id: int | None = None, select: Callable[[str, str], bool] | None = None
    ) -> pd.DataFrame:
        """Every counter value as a pandas DataFrame (one row per sample and counter, in counter id order).

        Columns :data:`COUNTER_FRAME_COLUMNS`.  ``select(source, name)``: only the counters it accepts.
        """
        import numpy as np
        import pandas as pd

        samples = self._samples_frame("counter_packed", run_id)
        counters = self.db.execute("SELECT id, source, name, unit FROM counters ORDER BY id").fetchall()
        if samples.empty or not counters:
            return pd.DataFrame({c: pd.Series(dtype=object) for c in COUNTER_FRAME_COLUMNS})
        rank = self._rank([c[0] for c in counters], np.empty(0, dtype=np.int64))
        wanted = np.array([select is None or select(c[1], c[2]) for c in counters] + [False], dtype=bool)
        sample_parts, id_parts, value_parts = [], [], []
        for block in self._packed_rows("counter_packed", ("counter_id", "value"), run_id):
            counts = np.array([r[1] for r in block], dtype=np.int64)
            ids = unpack_many([r[2] for r in block], counts)
            known = ids < len(rank)
            # rank -1 (an id the counters table lacks: never in a store kforensic wrote) picks the final False
            keep = wanted[np.where(known, rank[np.where(known, ids, 0)], -1)]
            sample_parts.append(np.repeat(np.array([r[0] for r in block], dtype=np.int64), counts)[keep])
            id_parts.append(ids[keep])
            value_parts.append(unpack_many([r[3] for r in block], counts)[keep])
        sample_col, id_col, value_col = (np.concatenate(p) for p in (sample_parts, id_parts, value_parts))
        order = np.argsort(sample_col * len(counters) + rank[id_col], kind="stable")
        frame = self._sample_columns(samples, sample_col[order])
        codes = rank[id_col[order]]
        for j, column in enumerate(("source", "name", "unit"), start=1):
            # Categoricals (categories sorted, as sorting the strings would): millions of rows of a few
            # dozen names cost codes, not a pointer each, and compare and factorize as integers.
            texts = np.array([c[j] for c in counters], dtype=object)
            categories, place = np.unique(texts, return_inverse=True)
            frame[column] = pd.Categorical.from_codes(place[codes], categories=pd.Index(categories))
        frame["value"] = value_col[order]
        return pd.DataFrame(frame, copy=False)

    def counter_table(
        self, run_id: int | None = None, select: Callable[[str, str], bool] | None = None
    ) -> CounterTable:
        """The counter samples as a matrix (:class:`~forensics.types.slab.CounterTable`): what the leak analysis reads.

        ``select(source, name)``: only the counters it accepts (columns in counter id order).  Read in one
        :meth:`snapshot`.
        """
        with self.snapshot():
            return self._counter_table(run_id, select)

    def _counter_table(self, run_id: int | None, select: Callable[[str, str], bool] | None) -> CounterTable:
        import numpy as np

        counters = [
            c
            for c in self.db.execute("SELECT id, source, name, unit FROM counters ORDER BY id").fetchall()
            if select is None or select(c[1], c[2])
        ]
        rank = self._rank([c[0] for c in counters], np.empty(0, dtype=np.int64))
        samples = self._run_samples(run_id)  # as in slab_table: those without counters dropped at the end
        all_ids = np.array([s[0] for s in samples], dtype=np.int64)
        seen = np.zeros(len(samples), dtype=bool)
        values = np.zeros((len(samples), len(counters)), dtype=np.int64)
        present = np.zeros((len(samples), len(counters)), dtype=bool)
        places: dict[bytes, tuple[npt.NDArray[np.bool_], npt.NDArray[np.int64]]] = {}  # ids -> (kept, columns)
        for block in self._packed_rows("counter_packed", ("counter_id", "value"), run_id):
            counts = np.array([r[1] for r in block], dtype=np.int64)
            at = self._rows_of(all_ids, block)
            seen[at] = True
            decoded = unpack_many([r[3] for r in block], counts)
            for k, r in enumerate(block):
                ids: bytes = r[2]
                if ids not in places:
                    found = np.array(unpack_list(ids, int(counts[k])), dtype=np.int64)
                    column = np.where(found < len(rank), rank[np.minimum(found, len(rank) - 1)], -1)
                    places[ids] = (column >= 0, column[column >= 0])
            first: bytes = block[0][2]
            row = int(at[0])
            if all(r[2] == first for r in block) and int(at[-1]) - row == len(block) - 1:  # the usual case
                kept, columns = places[first]
                rows = slice(row, row + len(block))
                values[rows, columns] = decoded.reshape(len(block), -1)[:, kept]
                present[rows, columns] = True
                continue
            start = 0
            for k, r in enumerate(block):
                kept, columns = places[r[2]]
                values[int(at[k]), columns] = decoded[start : start + int(counts[k])][kept]
                present[int(at[k]), columns] = True
                start += int(counts[k])
        if not bool(seen.all()):
            values, present = values[seen], present[seen]
            samples = [s for s, kept in zip(samples, seen.tolist(), strict=True) if kept]
        sample_ids, walls, boot_codes, boot_ids = _sample_arrays(samples)
        return CounterTable(
            sample_ids=sample_ids,
            walls=walls,
            boot_codes=boot_codes,
            boot_ids=boot_ids,
            sources=tuple(c[1] for c in counters),
            names=tuple(c[2] for c in counters),
            units=tuple(c[3] for c in counters),
            values=values,
            present=present,
        )

    def iter_slab_rows(self, run_id: int | None = None) -> Iterator[tuple[object, ...]]:
        """Slab rows as (sample id, wall, boot id, cache, the 11 slabinfo numbers), without pandas."""
        names = {i: n for n, i in self._cache_ids.items()}
        samples = {s[0]: s for s in self._samples_with("slab_packed", run_id)}
        for block in self._packed_rows("slab_packed", ("cache_id", *SLAB_COLUMNS), run_id):
            for sample_id, count, *blobs in block:
                columns = [unpack_list(b, count) for b in blobs]
                _, _, wall, _, boot = samples[sample_id]
                rows = sorted(zip(*columns, strict=True), key=lambda r: names[r[0]])  # code point order, as SQLite's
                for cache_id, *numbers in rows:
                    yield (sample_id, wall, boot, names[cache_id], *numbers)

    def _slab_numbers(self, sample_id: int, columns: tuple[str, ...]) -> dict[str, list[int]]:
        """Cache name -> the given slabinfo numbers, of one sample."""
        row = self._row_of("slab_packed", sample_id, columns)
        if row is None:
            return {}
        names = {i: n for n, i in self._cache_ids.items()}
        return {names[cache_id]: list(numbers) for cache_id, *numbers in zip(*row, strict=True)}

    def sample_line(self, sample_id: int, cache: str) -> str | None:
        """The slabinfo line of ``cache`` in sample ``sample_id``, formatted as the kernel prints it."""
        row = self._slab_numbers(sample_id, SLAB_COLUMNS).get(cache)
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
            counter_id = self._counter_ids.get((source, name))
            row = self._row_of("counter_packed", loc.start, ("value",))
            if counter_id is None or row is None or counter_id not in row[0]:
                return None
            unit = self.db.execute("SELECT unit FROM counters WHERE id = ?", (counter_id,)).fetchone()[0]
            return f"{name}: {row[1][row[0].index(counter_id)]} {unit}".rstrip()
        return self.sample_line(loc.start, loc.name)

    def summary(self, run_id: int | None = None, top: int = 5) -> StoreSummary:
        """Samples, caches, boots and the top growers (by bytes in use) within the last boot's series."""
        samples = self.samples(run_id)
        segments = self.boot_segments(run_id)
        growers: list[CacheGrowth] = []
        if segments:
            _, first, last = segments[-1]
            before = self._slab_numbers(first, ("active_objs", "objsize"))
            after = self._slab_numbers(last, ("active_objs", "objsize"))
            for name in before.keys() & after.keys():
                (a0, s0), (a1, s1) = before[name], after[name]
                growers.append(CacheGrowth(name, a0 * s0, a1 * s1, a0, a1))
            growers = sorted((g for g in growers if g.delta_bytes > 0), key=lambda g: (-g.delta_bytes, g.name))
        ids = [s.id for s in samples]
        caches: set[int] = set()
        kmsg = 0
        if ids:
            span = (min(ids), max(ids))
            for count, blob in self.db.execute(
                "SELECT DISTINCT caches, cache_id FROM slab_packed WHERE sample_id BETWEEN ? AND ?", span
            ):
                caches.update(unpack_list(blob, count))
            kmsg = self.db.execute("SELECT count(*) FROM kmsg WHERE sample_id BETWEEN ? AND ?", span).fetchone()[0]
        return StoreSummary(
            samples=len(samples),
            caches=len(caches),
            boots=len({s[0] for s in segments}),
            first_wall=samples[0].wall if samples else NotAvailable("no samples"),
            last_wall=samples[-1].wall if samples else NotAvailable("no samples"),
            kmsg_records=int(kmsg),
            kmsg_missing=self.kmsg_missing(),
            top_growers=tuple(growers[:top]),
        )
