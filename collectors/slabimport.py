"""Reading slabinfo/meminfo snapshots people already have, for ``kforensic slab-import``.

Two layouts are understood:

* one file of concatenated snapshots, each introduced by a line holding its
  time: a Unix timestamp (``1700000000``, ``date=1700000000``, ``@1700000000``)
  or ``date`` output (``Mon Nov 30 06:55:29 UTC 2026``, ``date -R``, ISO 8601),
  followed by ``cat /proc/slabinfo`` and/or ``cat /proc/meminfo`` output in any
  order.  Other lines (``--- /proc/slabinfo`` markers) are ignored, and so are
  NUL bytes (``dd conv=sync`` pads blocks with them).  An ``uptime=SECONDS``
  on the time line lets a reboot be seen (uptime going down);
* a directory of such files, or of plain ``cat`` copies whose file name holds
  the time (``slabinfo.1700000000``, ``meminfo-2024-01-31T10:00:00``); a
  slabinfo and a meminfo file of the same time become one sample.

Each snapshot keeps the file and line it came from.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path

from collectors.inputs import open_input
from collectors.procfs import Counters, HostIdentity, Slabinfo, parse_meminfo, parse_slabinfo
from collectors.slabstore import RunInfo, Sample, SlabStore
from forensics.errors import InputError, UsageError
from forensics.model import NotAvailable
from forensics.types.slab import OutOfOrder, RejectedLine

_EPOCH = re.compile(r"(?:^|[\s=@._-])(\d{9,11}(?:\.\d+)?)(?=$|[\s,;._-])")
_LABELLED_EPOCH = re.compile(r"\b(?:date|time|ts|epoch|timestamp)=(\d+(?:\.\d+)?)\b")
_UPTIME = re.compile(r"uptime[=: ]\s*(\d+(?:\.\d+)?)")
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}[T _]\d{2}:?\d{2}:?\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?")
_COMPACT = re.compile(r"(\d{8})[T_-]?(\d{6})")
_DATE_OUTPUT = re.compile(
    r"(?:[A-Z][a-z]{2},? +)?(?P<mon>[A-Z][a-z]{2}) +(?P<day>\d{1,2}) +(?P<time>\d{2}:\d{2}:\d{2})"
    r"(?: +(?P<tz>[A-Z]{1,5}|[+-]\d{4}))? +(?P<year>\d{4})"
)
_MEMINFO_LINE = re.compile(r"^[A-Za-z][\w()]*:\s+\d+(?: kB)?\s*$")
_MEMINFO_LIKE = re.compile(r"^[A-Za-z][\w()]*:")  # inside a meminfo section: a counter line, even damaged
_SLAB_LIKE = re.compile(r"^\S+\s+-?\d+\s+-?\d+")  # inside a slabinfo section: a cache row, even damaged
_SLAB_HEADER = "slabinfo - version:"
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@dataclass(frozen=True)
class Snapshot:
    """One imported moment: its time, what was captured, and where it came from."""

    wall: float
    uptime: float | None
    slabinfo: Slabinfo | NotAvailable
    meminfo: Counters | NotAvailable
    source: str
    line: int  # first line of the snapshot in ``source`` (1-based)
    head: str = ""  # the text of that line (its time line, when it has one)

    def rejected(self) -> tuple[RejectedLine, ...]:
        """The slabinfo and meminfo rows of this snapshot that were not used (lines of ``source``)."""
        out: list[RejectedLine] = []
        for part in (self.slabinfo, self.meminfo):
            if not isinstance(part, NotAvailable):
                out += part.rejected
        return tuple(sorted(out))


@dataclass
class _Building:
    wall: float | None
    uptime: float | None
    line: int
    slab_lines: list[str]
    mem_lines: list[str]
    head: str = ""
    slab_numbers: list[int] = field(default_factory=list)
    mem_numbers: list[int] = field(default_factory=list)


def _parse_iso(text: str) -> float | None:
    try:
        when = dt.datetime.fromisoformat(text.replace("_", "T").replace(" ", "T"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)  # naive times are taken as UTC (documented limit)
    return when.timestamp()


def parse_time(text: str) -> float | None:
    """The wall time (epoch seconds) a line or file name holds, or None.

    Unix timestamps, ``date`` output (a zone other than a numeric offset is
    taken as UTC), RFC 2822 (``date -R``) and ISO 8601 are understood.
    """
    if match := _LABELLED_EPOCH.search(text) or _EPOCH.search(text):
        return float(match.group(1))
    if match := _ISO.search(text):
        found = _parse_iso(match.group(0))
        if found is not None:
            return found
    if match := _DATE_OUTPUT.search(text):
        try:
            month = _MONTHS.index(match["mon"]) + 1
        except ValueError:
            return None
        hours, minutes, seconds = (int(x) for x in match["time"].split(":"))
        offset = 0
        tz = match["tz"] or ""
        if tz[:1] in "+-" and tz:
            offset = (int(tz[1:3]) * 60 + int(tz[3:5])) * 60 * (1 if tz[0] == "+" else -1)
        try:
            when = dt.datetime(int(match["year"]), month, int(match["day"]), hours, minutes, seconds, tzinfo=dt.UTC)
        except ValueError:
            return None
        return when.timestamp() - offset
    try:
        parsed = email.utils.parsedate_to_datetime(text.strip())
        return parsed.timestamp()
    except (TypeError, ValueError, IndexError):
        pass
    if match := _COMPACT.search(text):
        d, t = match.groups()
        return _parse_iso(f"{d[:4]}-{d[4:6]}-{d[6:]}T{t[:2]}:{t[2:4]}:{t[4:]}")
    return None


def _is_slab_line(line: str) -> bool:
    return line.startswith("# name") or " : tunables " in line


def _finish(building: _Building | None, source: str, default_wall: float | None, out: list[Snapshot]) -> None:
    if building is None or not (building.slab_lines or building.mem_lines):
        return
    wall = building.wall if building.wall is not None else default_wall
    where = f"{source} line {building.line}"
    if wall is None:
        raise InputError(
            f"{where}: snapshot without a time",
            hint="precede each snapshot with a line holding `date +%s` output, or name the file after its time",
        )
    slabinfo: Slabinfo | NotAvailable = NotAvailable("not in the snapshot")
    meminfo: Counters | NotAvailable = NotAvailable("not in the snapshot")
    if building.slab_lines:
        text = ("\n".join(building.slab_lines) + "\n").encode()
        slabinfo = parse_slabinfo(text, where, building.slab_numbers)
    if building.mem_lines:
        meminfo = parse_meminfo(("\n".join(building.mem_lines) + "\n").encode(), where, building.mem_numbers)
    out.append(Snapshot(wall, building.uptime, slabinfo, meminfo, source, building.line, building.head))


def parse_snapshots(data: bytes, source: str, default_wall: float | None = None) -> list[Snapshot]:
    """Split concatenated snapshots (see the module docstring); ``default_wall`` is the time from a file name."""
    text = data.replace(b"\x00", b"").decode("utf-8", errors="replace")
    out: list[Snapshot] = []
    building: _Building | None = None
    section = ""
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.removesuffix("\r")
        if line.startswith(_SLAB_HEADER):
            if building is None or building.slab_lines:
                _finish(building, source, default_wall, out)
                building = _Building(None, None, number, [], [], line)
            building.slab_lines.append(line)
            building.slab_numbers.append(number)
            section = "slab"
        elif _MEMINFO_LINE.match(line) or (section == "mem" and _MEMINFO_LIKE.match(line)):
            if section != "mem" and (building is None or building.mem_lines):
                _finish(building, source, default_wall, out)
                building = _Building(None, None, number, [], [], line)
            assert building is not None
            building.mem_lines.append(line)  # a damaged one ("MemFree:", "MemFree: x kB") is listed by the parser
            building.mem_numbers.append(number)
            section = "mem"
        elif section == "slab" and building is not None and (_is_slab_line(line) or _SLAB_LIKE.match(line)):
            building.slab_lines.append(line)  # a row with a column missing is listed by the parser, not dropped
            building.slab_numbers.append(number)
        elif (wall := parse_time(line)) is not None:
            _finish(building, source, default_wall, out)
            up = _UPTIME.search(line)
            building = _Building(wall, float(up.group(1)) if up else None, number, [], [], line)
            section = ""
        else:
            section = ""  # a marker line ("--- /proc/meminfo") or noise
    _finish(building, source, default_wall, out)
    return out


@dataclass(frozen=True)
class LoadedSnapshots:
    """Snapshots to import (merged, by time) and what the input checks found in the files as read."""

    snapshots: list[Snapshot]
    rejected: list[tuple[str, RejectedLine]]  # (file, row) of rows not imported
    out_of_order: list[OutOfOrder]


def load_snapshots(paths: list[Path]) -> LoadedSnapshots:
    """:func:`read_snapshots` with the rows left out and the times that go back, for the report."""
    found = _read_all(paths)
    rejected = [(snap.source, row) for snap in found for row in snap.rejected()]
    return LoadedSnapshots(_merge_checked(found), rejected, out_of_order(found))


def read_snapshots(paths: list[Path]) -> list[Snapshot]:
    """Read snapshot files and directories; merge slabinfo and meminfo of the same time; sort by time.

    Raises :class:`InputError` for unreadable paths, snapshots without a time,
    two snapshots of the same time and inputs holding no snapshot at all.
    """
    return _merge_checked(_read_all(paths))


def _read_all(paths: list[Path]) -> list[Snapshot]:
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files += sorted(p for p in path.rglob("*") if p.is_file())
        else:
            files.append(path)
    found: list[Snapshot] = []
    for file in files:
        # open_input: one-line errors, gzip/xz/zstd snapshots decompressed, the file noted as an input.
        with open_input(str(file)) as tracked:
            data = b"".join(tracked.read_chunks())
        found += parse_snapshots(data, tracked.source, parse_time(file.name))
    if not found:
        names = ", ".join(str(p) for p in paths)
        raise InputError(f"{names}: no slabinfo or meminfo snapshot found", hint="see docs/slab-watch.md, slab-import")
    return found


def _merge_checked(found: list[Snapshot]) -> list[Snapshot]:
    """Merged by time; two snapshots of one time (after joining a slabinfo and a meminfo file) are refused."""
    merged = merge_snapshots(found)
    for a, b in itertools.pairwise(merged):
        if a.wall == b.wall:
            raise InputError(
                f"two snapshots have the same time {a.wall:.3f}: {a.source}:{a.line} and {b.source}:{b.line}",
                hint="remove the duplicate (the same file given twice?) or correct its time line",
            )
    return merged


def out_of_order(snapshots: list[Snapshot]) -> list[OutOfOrder]:
    """Snapshots whose time goes back within their file, in file order (``snapshots`` as read, in any order)."""
    out: list[OutOfOrder] = []
    by_source = sorted(snapshots, key=lambda s: (s.source, s.line))
    for a, b in itertools.pairwise(by_source):
        if a.source == b.source and b.wall < a.wall:
            out.append(OutOfOrder(a, b))
    return out


def merge_snapshots(snapshots: list[Snapshot]) -> list[Snapshot]:
    """Join a slabinfo-only and a meminfo-only snapshot of the same time (two files); sort by time."""
    merged: list[Snapshot] = []
    for snap in sorted(snapshots, key=lambda s: (s.wall, s.source, s.line)):
        last = merged[-1] if merged else None
        if (
            last is not None
            and last.wall == snap.wall
            and isinstance(last.slabinfo, NotAvailable) != isinstance(snap.slabinfo, NotAvailable)
            and isinstance(last.meminfo, NotAvailable) != isinstance(snap.meminfo, NotAvailable)
        ):
            merged[-1] = Snapshot(
                last.wall,
                last.uptime if last.uptime is not None else snap.uptime,
                last.slabinfo if isinstance(last.slabinfo, Slabinfo) else snap.slabinfo,
                last.meminfo if isinstance(last.meminfo, Counters) else snap.meminfo,
                last.source,
                last.line,
            )
        else:
            merged.append(snap)
    return merged


def boot_ids(snapshots: list[Snapshot]) -> list[str]:
    """Synthetic boot ids: a new one each time the recorded uptime goes down (a reboot)."""
    ids = []
    boot = 1
    last: float | None = None
    for snap in snapshots:
        if snap.uptime is not None:
            if last is not None and snap.uptime < last:
                boot += 1
            last = snap.uptime
        ids.append(f"imported-boot-{boot}")
    return ids


def import_snapshots(
    store: SlabStore, snapshots: list[Snapshot], origin: str, host: str | NotAvailable, force: bool = False
) -> int:
    """Write snapshots into ``store`` as one run (origin ``import:...``), one transaction per sample; return the run id.

    Importing the same origin twice is refused unless ``force``, so samples
    are not doubled by mistake.
    """
    run_origin = f"import:{origin}"
    earlier = [r.id for r in store.runs() if r.origin == run_origin]
    if earlier and not force:
        raise UsageError(
            f"{origin} was already imported into {store.path} (run {earlier[0]})",
            hint="give --force to import it again, or another --store",
        )
    first_mem = next((s.meminfo for s in snapshots if isinstance(s.meminfo, Counters)), None)
    mem_total: int | NotAvailable = NotAvailable("no meminfo among the snapshots")
    if first_mem is not None:
        found = first_mem.get("MemTotal")
        mem_total = found if isinstance(found, NotAvailable) else (found.in_bytes() or found.value)
    gaps = sorted(b.wall - a.wall for a, b in itertools.pairwise(snapshots))
    interval: float | NotAvailable = gaps[len(gaps) // 2] if gaps else NotAvailable("a single snapshot")
    unknown = NotAvailable("not recorded in imported snapshots")
    info = RunInfo(
        origin=run_origin,
        identity=HostIdentity(host, unknown, unknown, unknown, mem_total),
        topology=NotAvailable("imported snapshots hold no /sys/kernel/slab"),
        interval=interval,
        root=origin,
    )
    run_id = store.begin_run(info)
    not_read = NotAvailable("not in imported snapshots")
    for snap, boot in zip(snapshots, boot_ids(snapshots), strict=True):
        sample = Sample(
            wall=snap.wall,
            uptime=snap.uptime if snap.uptime is not None else NotAvailable("no uptime in the snapshot"),
            boot_id=boot,
            slabinfo=snap.slabinfo,
            meminfo=snap.meminfo,
            vmstat=not_read,
            fs=not_read,
            kmsg=not_read,
        )
        store.append_sample(run_id, sample)
    store.end_run(run_id)
    return run_id
