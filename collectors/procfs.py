"""Typed parsers of the /proc and /sys files that show kernel memory use.

Each ``parse_*`` function takes the bytes of one file and returns a frozen
snapshot; each ``read_*`` function reads the file below a ``root`` directory
(``/`` for the live system, a fake tree in tests, an unpacked sosreport), once,
and returns the snapshot with a :class:`~forensics.model.SourceRecord` of what
was read.  Parsers raise :class:`~forensics.errors.InputError` for a file that
is empty or not what it should be; a truncated last line is dropped and noted
in ``skipped`` rather than failing, since a copy cut short by a full disk or a
killed ``cat`` is common in collected data.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from forensics.errors import InputError
from forensics.model import NotAvailable, SourceRecord
from forensics.types.slab import RejectedLine

SLABINFO = "proc/slabinfo"
MEMINFO = "proc/meminfo"
VMSTAT = "proc/vmstat"
UPTIME = "proc/uptime"
DENTRY_STATE = "proc/sys/fs/dentry-state"
INODE_NR = "proc/sys/fs/inode-nr"
FILE_NR = "proc/sys/fs/file-nr"
BOOT_ID = "proc/sys/kernel/random/boot_id"
OSRELEASE = "proc/sys/kernel/osrelease"
HOSTNAME = "proc/sys/kernel/hostname"
SYS_SLAB = "sys/kernel/slab"

#: The vmstat counters recorded with every sample, as (name prefix, why) in order.
#: A prefix keeps every counter that starts with it (``pgscan`` keeps pgscan_kswapd, ...).
VMSTAT_RECORDED: tuple[tuple[str, str], ...] = (
    ("nr_slab_reclaimable", "slab pages the shrinkers can free"),
    ("nr_slab_unreclaimable", "slab pages only kfree returns: where leaks show"),
    ("nr_kernel_stack", "kernel stacks (KiB): a task leak grows it"),
    ("nr_page_table_pages", "page tables: a mm leak grows it"),
    ("nr_sec_page_table_pages", "secondary (IOMMU/KVM) page tables"),
    ("nr_free_pages", "free memory, to weigh growth against"),
    ("nr_vmalloc", "vmalloc pages: leaks outside the slab"),
    ("drop_pagecache", "echo 1/3 > drop_caches: explains a sudden shrink"),
    ("drop_slab", "echo 2/3 > drop_caches: explains a sudden shrink"),
    ("oom_kill", "OOM kills: the end of a leak"),
    ("slabs_scanned", "shrinker activity"),
    ("allocstall", "direct reclaim stalls: memory pressure"),
    ("pgscan", "reclaim scanning: memory pressure"),
    ("pgsteal", "reclaim success: memory pressure"),
    ("compact_stall", "compaction stalls: fragmentation"),
)


_VMSTAT_PREFIXES = tuple(prefix for prefix, _ in VMSTAT_RECORDED)


def vmstat_is_recorded(name: str) -> bool:
    """Whether the vmstat counter ``name`` is one kforensic records per sample."""
    return name.startswith(_VMSTAT_PREFIXES)


# ---------------------------------------------------------------- reading files


class FileRead(NamedTuple):
    """The bytes of one file read below a root (None when it could not be read), and its record."""

    data: bytes | None
    record: SourceRecord


def read_file(root: Path, relative: str) -> FileRead:
    """Read ``root/relative`` in one go; never raises for OS errors (the record says why)."""
    path = root / relative
    started = time.monotonic()
    try:
        with open(path, "rb", buffering=0) as stream:
            data = stream.readall()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        record = SourceRecord(str(path), NotAvailable(reason), NotAvailable(reason), 0.0, error=reason)
        return FileRead(None, record)
    record = SourceRecord(str(path), len(data), hashlib.sha256(data).hexdigest(), round(time.monotonic() - started, 6))
    return FileRead(data, record)


def _complete_lines(data: bytes) -> tuple[list[str], str | None]:
    """The complete lines of a file, and a note when its last line was cut short."""
    text = data.decode("utf-8", errors="replace")
    lines = text.split("\n")
    tail = lines.pop()  # "" when the file ends with a newline
    note = None
    if tail.strip("\x00 \t\r"):
        note = f"last line {len(lines) + 1} is truncated: {tail[:40]!r}"
    return [line.removesuffix("\r") for line in lines], note


#: Larger counts or sizes are not a kernel's (2**50: a petabyte of kB, 10**15 objects): a damaged row.
ABSURD = 1 << 50


def _at(numbers: Sequence[int] | None, local: int) -> int:
    """The source line of the ``local``-th line (1-based) of a parsed text, when it was cut from a larger file."""
    return numbers[local - 1] if numbers is not None and 0 < local <= len(numbers) else local


# ---------------------------------------------------------------- /proc/slabinfo


class SlabStatistics(NamedTuple):
    """The ``globalstat`` and ``cpustat`` columns of slabinfo 2.1 (statistics), CONFIG_DEBUG_SLAB only."""

    listallocs: int
    maxobjs: int
    grown: int
    reaped: int
    error: int
    maxfreeable: int
    nodeallocs: int
    remotefrees: int
    alienoverflow: int
    allochit: int
    allocmiss: int
    freehit: int
    freemiss: int


class SlabCache(NamedTuple):
    """One line of /proc/slabinfo 2.1: a cache and its counters."""

    name: str
    active_objs: int
    num_objs: int
    objsize: int
    objperslab: int
    pagesperslab: int
    limit: int
    batchcount: int
    sharedfactor: int
    active_slabs: int
    num_slabs: int
    sharedavail: int
    statistics: SlabStatistics | None = None

    def total_bytes(self, page_size: int) -> int:
        """Memory held by the cache's slabs (what slabtop calls CACHE SIZE uses objects; this is pages)."""
        return self.num_slabs * self.pagesperslab * page_size

    def active_bytes(self) -> int:
        """Memory of the objects in use."""
        return self.active_objs * self.objsize


@dataclass(frozen=True)
class Slabinfo:
    """A parsed /proc/slabinfo: its version, whether it has statistics, the caches, skipped lines."""

    version: str
    statistics: bool
    caches: tuple[SlabCache, ...]
    skipped: tuple[str, ...] = ()
    rejected: tuple[RejectedLine, ...] = ()  # rows not used (the last line cut short included)

    def cache(self, name: str) -> SlabCache | None:
        """The cache called ``name``, or None."""
        return next((c for c in self.caches if c.name == name), None)


_SLAB_BASE_TOKENS = 16  # name, 5 numbers, ": tunables" 3, ": slabdata" 3
_SLAB_STATS_TOKENS = 33  # + ": globalstat" 9 + ": cpustat" 4
_SLAB_NUMBERS = (1, 2, 3, 4, 5, 8, 9, 10, 13, 14, 15)


def _parse_slab_line(tokens: list[str], statistics: bool) -> SlabCache | str:
    """The cache of one slabinfo row, or why the row cannot be one."""
    want = _SLAB_STATS_TOKENS if statistics else _SLAB_BASE_TOKENS
    if len(tokens) != want:
        return f"{len(tokens)} columns where slabinfo 2.1 has {want}"
    if tokens[6:8] != [":", "tunables"] or tokens[11:13] != [":", "slabdata"]:
        return "no ': tunables' and ': slabdata' columns where slabinfo 2.1 has them"
    if statistics and (tokens[16:18] != [":", "globalstat"] or tokens[27:29] != [":", "cpustat"]):
        return "no ': globalstat' and ': cpustat' columns where slabinfo 2.1 (statistics) has them"
    try:
        n = [int(tokens[i]) for i in _SLAB_NUMBERS]
        stats = None
        if statistics:
            stats = SlabStatistics(*(int(t) for t in (*tokens[18:27], *tokens[29:33])))
    except ValueError:
        return "a column that should be a number is not"
    if any(v < 0 or v >= ABSURD for v in n):
        return "a count out of any kernel's range"
    cache = SlabCache(tokens[0], n[0], n[1], n[2], n[3], n[4], n[5], n[6], n[7], n[8], n[9], n[10], stats)
    if cache.active_objs > cache.num_objs or cache.active_slabs > cache.num_slabs:
        return "more active objects or slabs than the cache has"
    if cache.num_objs and not (cache.objsize and cache.pagesperslab):
        return "objects of size 0 or slabs of 0 pages"
    return cache


def parse_slabinfo(data: bytes, source: str, numbers: Sequence[int] | None = None) -> Slabinfo:
    """Parse /proc/slabinfo version 2.1, plain or ``(statistics)``.

    Raises :class:`InputError` when the file is empty or its header is not
    version 2.1.  Rows that do not parse (a truncated copy, a missing column)
    or hold values no kernel has (a negative or absurd count, more active
    objects than objects) are left out and listed in ``skipped`` and
    ``rejected`` with their line.  ``numbers`` gives the source line of each
    line of ``data`` when it was cut out of a larger file.
    """
    lines, note = _complete_lines(data)
    if not lines or not lines[0].strip():
        raise InputError(f"{source}: empty slabinfo", hint="copy /proc/slabinfo as root (it is mode 0400)")
    header = lines[0].strip()
    if not header.startswith("slabinfo - version: "):
        raise InputError(f"{source}: not a /proc/slabinfo file (first line {header[:50]!r})")
    version_text = header.removeprefix("slabinfo - version: ")
    version, _, flavour = version_text.partition(" ")
    if version != "2.1":
        raise InputError(f"{source}: slabinfo version {version} is not supported", hint="kforensic reads 2.1")
    statistics = flavour == "(statistics)"
    caches = []
    rejected = _cut_note(data, lines, note, numbers)
    for number, line in enumerate(lines[1:], start=2):
        if not line or line.startswith("#"):
            continue
        cache = _parse_slab_line(line.split(), statistics)
        if isinstance(cache, str):
            rejected.append(RejectedLine(_at(numbers, number), line, cache))
        else:
            caches.append(cache)
    return Slabinfo(version, statistics, tuple(caches), tuple(map(str, rejected)), tuple(rejected))


def _cut_note(data: bytes, lines: list[str], note: str | None, numbers: Sequence[int] | None) -> list[RejectedLine]:
    """The truncated last line (``note`` from :func:`_complete_lines`) as a rejected line; empty without one."""
    if note is None:
        return []
    text = data.decode("utf-8", errors="replace").rsplit("\n", 1)[-1].removesuffix("\r")
    return [RejectedLine(_at(numbers, len(lines) + 1), text, "the line is truncated (the copy was cut short)")]


# ---------------------------------------------------------------- /proc/meminfo and /proc/vmstat


class Counter(NamedTuple):
    """A named kernel counter; ``unit`` is ``kB`` for meminfo sizes, ``""`` for plain counts."""

    name: str
    value: int
    unit: str = ""

    def in_bytes(self) -> int | None:
        """The value in bytes when the counter is a size, else None."""
        return self.value * 1024 if self.unit == "kB" else None


@dataclass(frozen=True)
class Counters:
    """A parsed flat counter file (meminfo, vmstat), counters in file order."""

    counters: tuple[Counter, ...]
    skipped: tuple[str, ...] = ()
    rejected: tuple[RejectedLine, ...] = ()  # lines not used (the last line cut short included)

    def get(self, name: str) -> Counter | NotAvailable:
        """The counter called ``name``, or why it is missing."""
        found = next((c for c in self.counters if c.name == name), None)
        return found if found is not None else NotAvailable(f"{name} is not in the file")


def parse_meminfo(data: bytes, source: str, numbers: Sequence[int] | None = None) -> Counters:
    """Parse /proc/meminfo (``Name:   value [kB]`` lines); lines that do not parse are listed, with their line.

    ``numbers``: the source line of each line of ``data`` (see :func:`parse_slabinfo`).
    """
    lines, note = _complete_lines(data)
    counters = []
    rejected = _cut_note(data, lines, note, numbers)
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        name, colon, rest = line.partition(":")
        parts = rest.split()
        if not colon or not 1 <= len(parts) <= 2 or not parts[0].isdigit():
            rejected.append(RejectedLine(_at(numbers, number), line, "not a 'Name: value [kB]' line"))
            continue
        if int(parts[0]) >= ABSURD:
            rejected.append(RejectedLine(_at(numbers, number), line, "a value out of any kernel's range"))
            continue
        counters.append(Counter(name.strip(), int(parts[0]), parts[1] if len(parts) == 2 else ""))
    if not counters:
        raise InputError(f"{source}: no meminfo counters in it", hint="give a copy of /proc/meminfo")
    return Counters(tuple(counters), tuple(map(str, rejected)), tuple(rejected))


def parse_vmstat(data: bytes, source: str, keep_all: bool = False) -> Counters:
    """Parse /proc/vmstat (``name value`` lines), keeping the :data:`VMSTAT_RECORDED` counters unless ``keep_all``."""
    lines, note = _complete_lines(data)
    counters = []
    skipped = [note] if note else []
    seen = 0
    for number, line in enumerate(lines, start=1):
        name, _, value = line.partition(" ")
        if not value.strip().lstrip("-").isdigit():
            if line.strip():
                skipped.append(f"line {number} does not parse: {line[:40]!r}")
            continue
        seen += 1
        if keep_all or vmstat_is_recorded(name):
            counters.append(Counter(name, int(value)))
    if not seen:
        raise InputError(f"{source}: no vmstat counters in it", hint="give a copy of /proc/vmstat")
    return Counters(tuple(counters), tuple(skipped))


# ---------------------------------------------------------------- /proc/sys/fs


class FsCounters(NamedTuple):
    """Dentry, inode and file handle counts from /proc/sys/fs (each NotAvailable when unreadable)."""

    nr_dentry: int | NotAvailable
    nr_unused_dentry: int | NotAvailable
    # Was a dummy 0 before commit af0c9af1b3f6 ("fs/dcache: Track & report number of negative dentries").
    nr_negative_dentry: int | NotAvailable
    nr_inodes: int | NotAvailable
    nr_free_inodes: int | NotAvailable
    nr_open_files: int | NotAvailable
    max_files: int | NotAvailable

    def as_counters(self) -> tuple[Counter, ...]:
        """The counts that are known, as counters named like the fields."""
        return tuple(Counter(k, v) for k, v in self._asdict().items() if isinstance(v, int))


def _numbers(data: bytes | None, want: int, source: str) -> list[int] | NotAvailable:
    if data is None:
        return NotAvailable(f"{source} could not be read")
    parts = data.split()
    if len(parts) < want:
        return NotAvailable(f"{source} has {len(parts)} numbers, expected {want}")
    try:
        return [int(p) for p in parts[:want]]
    except ValueError:
        return NotAvailable(f"{source} holds something else than numbers")


def parse_fs_counters(dentry_state: bytes | None, inode_nr: bytes | None, file_nr: bytes | None) -> FsCounters:
    """Combine dentry-state, inode-nr and file-nr (any may be None: not read) into one record."""
    dentry = _numbers(dentry_state, 5, "dentry-state")
    inode = _numbers(inode_nr, 2, "inode-nr")
    files = _numbers(file_nr, 3, "file-nr")

    def pick(values: list[int] | NotAvailable, index: int) -> int | NotAvailable:
        return values if isinstance(values, NotAvailable) else values[index]

    return FsCounters(
        nr_dentry=pick(dentry, 0),
        nr_unused_dentry=pick(dentry, 1),
        nr_negative_dentry=pick(dentry, 4),
        nr_inodes=pick(inode, 0),
        nr_free_inodes=pick(inode, 1),
        # file-nr: allocated, free (always 0 since 2.6), maximum
        nr_open_files=pick(files, 0),
        max_files=pick(files, 2),
    )


def read_fs_counters(root: Path) -> tuple[FsCounters, tuple[SourceRecord, ...]]:
    """Read the three /proc/sys/fs files below ``root``."""
    reads = [read_file(root, rel) for rel in (DENTRY_STATE, INODE_NR, FILE_NR)]
    return parse_fs_counters(*(r.data for r in reads)), tuple(r.record for r in reads)


# ---------------------------------------------------------------- /sys/kernel/slab


class SlabAlias(NamedTuple):
    """A cache name that SLUB merged into another cache (``/sys/kernel/slab/NAME -> TARGET``)."""

    name: str
    target: str


class CacheAttributes(NamedTuple):
    """Per-cache attributes of /sys/kernel/slab/NAME read once per run."""

    name: str
    reclaim_account: bool | NotAvailable


@dataclass(frozen=True)
class SlabTopology:
    """Which cache names share one cache, and which caches are reclaimable (SLUB only)."""

    aliases: tuple[SlabAlias, ...]
    attributes: tuple[CacheAttributes, ...]
    error: str | None = None

    def merged_names(self, target: str) -> tuple[str, ...]:
        """All names merged into the cache directory ``target``."""
        return tuple(a.name for a in self.aliases if a.target == target)


def read_slab_topology(root: Path) -> SlabTopology:
    """Read the /sys/kernel/slab symlinks (aliases) and each cache's reclaim_account.

    SLAB (not SLUB) kernels have no /sys/kernel/slab: the result is empty with
    ``error`` saying why.
    """
    base = root / SYS_SLAB
    try:
        entries = sorted(os.scandir(base), key=lambda e: e.name)
    except OSError as exc:
        return SlabTopology((), (), error=f"{base}: {exc.strerror or exc}")
    aliases = []
    attributes = []
    for entry in entries:
        if entry.is_symlink():
            try:
                aliases.append(SlabAlias(entry.name, os.path.basename(os.readlink(entry.path))))
            except OSError:
                continue  # removed while we looked: a cache destroyed now
            continue
        try:
            raw = Path(entry.path, "reclaim_account").read_bytes().strip()
            reclaim: bool | NotAvailable = raw == b"1"
        except OSError as exc:
            reclaim = NotAvailable(f"reclaim_account: {exc.strerror or exc}")
        attributes.append(CacheAttributes(entry.name, reclaim))
    return SlabTopology(tuple(aliases), tuple(attributes))


# ---------------------------------------------------------------- host identity


@dataclass(frozen=True)
class HostIdentity:
    """What a run is about: the host, its kernel, this boot, page size and memory size."""

    hostname: str | NotAvailable
    kernel_release: str | NotAvailable
    boot_id: str | NotAvailable
    page_size: int | NotAvailable
    mem_total_bytes: int | NotAvailable


def _text(read: FileRead) -> str | NotAvailable:
    if read.data is None:
        return NotAvailable(f"{read.record.path}: {read.record.error}")
    text = read.data.decode("utf-8", errors="replace").strip()
    return text or NotAvailable(f"{read.record.path} is empty")


def read_boot_id(root: Path) -> str | NotAvailable:
    """The boot id of the kernel whose /proc is below ``root``."""
    return _text(read_file(root, BOOT_ID))


def page_size_of(root: Path) -> int | NotAvailable:
    """The page size: asked of the running kernel for ``/``; a copied tree does not record it."""
    if root.resolve() == Path("/"):
        return os.sysconf("SC_PAGE_SIZE")
    # /proc/self/smaps of a copied tree holds the page size of whoever copied it.
    smaps = read_file(root, "proc/self/smaps")
    if smaps.data is not None:
        for line in smaps.data.splitlines():
            if line.startswith(b"KernelPageSize:"):
                parts = line.split()
                return int(parts[1]) * 1024
    return NotAvailable("a copied /proc tree does not record the page size")


def mem_total_of(meminfo: Counters | NotAvailable) -> int | NotAvailable:
    """MemTotal in bytes from parsed /proc/meminfo."""
    if not isinstance(meminfo, Counters):
        return NotAvailable("meminfo was not read")
    found = meminfo.get("MemTotal")
    return found if isinstance(found, NotAvailable) else (found.in_bytes() or found.value)


def read_identity(root: Path, meminfo: Counters | NotAvailable) -> HostIdentity:
    """Read hostname, kernel release and boot id below ``root``; page size and MemTotal."""
    mem_total = mem_total_of(meminfo)
    return HostIdentity(
        hostname=_text(read_file(root, HOSTNAME)),
        kernel_release=_text(read_file(root, OSRELEASE)),
        boot_id=read_boot_id(root),
        page_size=page_size_of(root),
        mem_total_bytes=mem_total,
    )


def parse_uptime(data: bytes | None) -> float | NotAvailable:
    """Seconds since boot from /proc/uptime."""
    if data is None:
        return NotAvailable("/proc/uptime could not be read")
    try:
        return float(data.split()[0])
    except (IndexError, ValueError):
        return NotAvailable("/proc/uptime does not start with a number")
