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
from dataclasses import dataclass, field, replace
from pathlib import Path

from collectors.inputs import open_input, read_whole
from collectors.procfs import Counters, HostIdentity, Slabinfo, parse_meminfo, parse_slabinfo
from collectors.slabstore import RunInfo, Sample, SlabStore, StoreClashError
from forensics.errors import InputError, UsageError
from forensics.model import NotAvailable
from forensics.types.slab import OutOfOrder, PartialSample, RejectedLine, WallClockStep, clock_stepped

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
_SLAB_CUT = re.compile(r"^[A-Za-z_][\w.:@/()-]*\s+-?\d+\s*$")  # a cache row cut after its first number
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
    cut: RejectedLine | None = None  # the row the snapshot ends in the middle of: left out of the import

    def partial(self) -> PartialSample | None:
        """This snapshot as a :class:`PartialSample` when it ends mid-row, else None."""
        if self.cut is None:
            return None
        return PartialSample(self.source, self.cut.line, self.cut.text, self.line, self.wall)

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


def _in_slab_section(line: str, last: bool) -> bool:
    """Whether a line inside a slabinfo section is one of its rows, even a damaged or cut one.

    A row cut after its first number (``kf_leak_obj   15``) is a row; on the
    file's unterminated last line anything is (the copy ends there).
    """
    if _is_slab_line(line) or _SLAB_LIKE.match(line):
        return True
    return bool(_SLAB_CUT.match(line) and parse_time(line) is None) or (last and bool(line.strip()))


_SHORT_ROW = re.compile(r"(\d+) columns where slabinfo 2\.1 has (\d+)")
_CUT_COUNTER = "not a 'Name: value [kB]' line"


def _looks_cut(reason: str) -> bool:
    """Whether a rejected row is what a cut leaves: fewer columns than a row has, a counter without its value."""
    short = _SHORT_ROW.match(reason)
    return (short is not None and int(short[1]) < int(short[2])) or reason == _CUT_COUNTER or "truncated" in reason


def _cut_row(
    building: _Building, slabinfo: Slabinfo | NotAvailable, meminfo: Counters | NotAvailable, unterminated: int | None
) -> RejectedLine | None:
    """The row a snapshot ends in the middle of, or None when its last line is whole.

    A snapshot is cut when its last line is the file's last and has no newline
    (a copy cut short), or when that line is a row a cut leaves (fewer columns,
    no value) and the next snapshot's time line follows it (a cut capture
    followed by the next one).
    """
    last_slab = building.slab_numbers[-1] if building.slab_numbers else 0
    last_mem = building.mem_numbers[-1] if building.mem_numbers else 0
    last = max(last_slab, last_mem)
    text = (building.slab_lines if last == last_slab else building.mem_lines)[-1]
    if last == unterminated:
        return RejectedLine(last, text, "the sample ends in the middle of this line (the copy was cut short)")
    for part in (slabinfo, meminfo):
        if not isinstance(part, NotAvailable):
            for row in part.rejected:
                if row.line == last and _looks_cut(row.reason):
                    return row
    return None


def _finish(
    building: _Building | None,
    source: str,
    default_wall: float | None,
    out: list[Snapshot],
    unterminated: int | None = None,
) -> None:
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
    cut = _cut_row(building, slabinfo, meminfo, unterminated)
    out.append(Snapshot(wall, building.uptime, slabinfo, meminfo, source, building.line, building.head, cut))


def parse_snapshots(data: bytes, source: str, default_wall: float | None = None) -> list[Snapshot]:
    """Split concatenated snapshots (see the module docstring); ``default_wall`` is the time from a file name."""
    text = data.replace(b"\x00", b"").decode("utf-8", errors="replace")
    rows = text.split("\n")
    # The file's last line has no newline: whatever it belongs to was cut short.
    unterminated = len(rows) if rows[-1].strip(" \t\r") else None
    out: list[Snapshot] = []
    building: _Building | None = None
    section = ""
    for number, raw in enumerate(rows, start=1):
        line = raw.removesuffix("\r")
        if line.startswith(_SLAB_HEADER):
            if building is None or building.slab_lines:
                _finish(building, source, default_wall, out)
                building = _Building(None, None, number, [], [], line)
            building.slab_lines.append(line)
            building.slab_numbers.append(number)
            section = "slab"
        elif _MEMINFO_LINE.match(line) or (
            section == "mem" and (_MEMINFO_LIKE.match(line) or (number == unterminated and line.strip()))
        ):
            if section != "mem" and (building is None or building.mem_lines):
                _finish(building, source, default_wall, out)
                building = _Building(None, None, number, [], [], line)
            assert building is not None
            building.mem_lines.append(line)  # a damaged one ("MemFree:", "MemFree: x kB") is listed by the parser
            building.mem_numbers.append(number)
            section = "mem"
        elif section == "slab" and building is not None and _in_slab_section(line, number == unterminated):
            building.slab_lines.append(line)  # a row with a column missing is listed by the parser, not dropped
            building.slab_numbers.append(number)
        elif (wall := parse_time(line)) is not None:
            _finish(building, source, default_wall, out)
            up = _UPTIME.search(line)
            building = _Building(wall, float(up.group(1)) if up else None, number, [], [], line)
            section = ""
        else:
            section = ""  # a marker line ("--- /proc/meminfo") or noise
    _finish(building, source, default_wall, out, unterminated)
    return out


@dataclass(frozen=True)
class LoadedSnapshots:
    """Snapshots to import (merged, by time) and what the input checks found in the files as read."""

    snapshots: list[Snapshot]
    rejected: list[tuple[str, RejectedLine]]  # (file, row) of rows not imported
    out_of_order: list[OutOfOrder]
    partial: list[PartialSample] = field(default_factory=list)  # samples cut mid-row, left out
    clock_steps: list[WallClockStep] = field(default_factory=list)  # wall clock steps within a boot


def load_snapshots(paths: list[Path]) -> LoadedSnapshots:
    """:func:`read_snapshots` with the rows left out and the times that go back, for the report."""
    found = _read_all(paths)
    whole = _complete(found, paths)
    rejected = [(snap.source, row) for snap in whole for row in snap.rejected()]
    partial = [p for snap in found if (p := snap.partial()) is not None]
    ordered, steps = order_by_clock(_merge_checked(whole), whole)
    stepped = {(step.source, step.line) for step in steps}  # said as clock steps, not as times out of order
    order = [o for o in out_of_order(whole) if (o.later.source, o.later.line) not in stepped]
    return LoadedSnapshots(ordered, rejected, order, partial, steps)


def read_snapshots(paths: list[Path]) -> list[Snapshot]:
    """Read snapshot files and directories; merge slabinfo and meminfo of the same time; sort by time.

    Raises :class:`InputError` for unreadable paths, snapshots without a time,
    two snapshots of the same time and inputs holding no snapshot at all.
    """
    whole = _complete(_read_all(paths), paths)
    return order_by_clock(_merge_checked(whole), whole)[0]


def _complete(found: list[Snapshot], paths: list[Path]) -> list[Snapshot]:
    """The snapshots that do not end mid-row; exit 3 when none is left."""
    whole = [snap for snap in found if snap.cut is None]
    if not whole:
        cut = found[0].cut
        assert cut is not None
        raise InputError(
            f"{found[0].source}:{cut.line}: every snapshot ends in the middle of a row (cut short)",
            hint="give complete copies of /proc/slabinfo and /proc/meminfo",
        )
    return whole


def _read_all(paths: list[Path]) -> list[Snapshot]:
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files += sorted(p for p in path.rglob("*") if p.is_file())
        else:
            files.append(path)
    found: list[Snapshot] = []
    exports: list[str] = []
    for file in files:
        # open_input: one-line errors, gzip/xz/zstd/bzip2 snapshots decompressed, the file noted as an input.
        with open_input(str(file)) as tracked:
            data = read_whole(tracked, "slabinfo/meminfo snapshots")
        snapshots = parse_snapshots(data, tracked.source, parse_time(file.name))
        found += snapshots
        kind = export_kind(data) if not snapshots else None
        exports += [f"{file} is {kind}"] if kind is not None else []
    if not found and exports:
        # What an export is for: other tools.  The store it came from is what leaks reads (ue9 9: an export given
        # back to slab-import was "no slabinfo or meminfo snapshot found", with no word of what it was).
        raise InputError(
            f"{'; '.join(exports)}, not slabinfo/meminfo snapshots: an export is for other tools (a spreadsheet, "
            "pandas, a node_exporter textfile, Prometheus); kforensic reads the store it was exported from",
            hint="kforensic leaks --store STORE (the store given to slab-export); a --format prometheus export is "
            "for node_exporter's textfile collector: scraped, kforensic leaks --prometheus URL reads it",
        )
    if not found:
        names = ", ".join(str(p) for p in paths)
        raise InputError(f"{names}: no slabinfo or meminfo snapshot found", hint="see docs/slab-watch.md, slab-import")
    return found


#: The first columns of each slab-export CSV table (SlabStore.slab_frame, counter_frame), and what the file is.
_EXPORT_CSV = (
    (b"sample_id,run_id,wall,uptime,boot_id,cache,", "a kforensic slab-export CSV of the slab table"),
    (b"sample_id,run_id,wall,uptime,boot_id,source,", "a kforensic slab-export CSV of the counters table"),
)


def export_kind(data: bytes) -> str | None:
    """What kind of kforensic export ``data`` is (a slab-export CSV, parquet or Prometheus text), None if none."""
    head = data[:4096]
    for start, kind in _EXPORT_CSV:
        if head.startswith(start):
            return kind
    if head.startswith(b"PAR1"):
        return "a parquet file (slab-export --format parquet)"
    if b"# TYPE node_slabinfo_" in head or b"# TYPE node_memory_" in head:
        return "a Prometheus text exposition (slab-export --format prometheus, or node_exporter's)"
    return None


def _merge_checked(found: list[Snapshot]) -> list[Snapshot]:
    """Merged by time; two snapshots of one time (after joining a slabinfo and a meminfo file) are refused."""
    merged = merge_snapshots(found)
    for a, b in itertools.pairwise(merged):
        if a.wall == b.wall and (a.uptime is None or b.uptime is None or a.uptime == b.uptime):
            raise InputError(
                f"two snapshots have the same time {a.wall:.3f}: {a.source}:{a.line} and {b.source}:{b.line}",
                hint="remove the duplicate (the same file given twice?) or correct its time line",
            )
    return merged


def order_by_clock(merged: list[Snapshot], as_read: list[Snapshot]) -> tuple[list[Snapshot], list[WallClockStep]]:
    """Snapshots in the order they were taken, with the wall clock steps within each boot.

    When every snapshot records its uptime, boots are decided from what
    identifies one, not from the wall clock: in the order the snapshots were
    read (files by name, lines in order) a new boot starts where uptime goes
    back.  Within a boot the snapshots are ordered by uptime, and where the
    wall clock moved away from the uptime that passed (a step of NTP, a VM
    resumed from a snapshot) the step is returned and the snapshots after it
    are placed on the monotonic clock: the time of the one before plus the
    uptime that passed (so growth is measured across the step).  Without
    uptimes the snapshots stay in wall time order and no step can be told.
    """
    if not merged or any(s.uptime is None for s in merged):
        return merged, []
    place = {(s.source, s.line): i for i, s in enumerate(as_read)}
    read_order = sorted(merged, key=lambda s: place.get((s.source, s.line), len(place)))
    boots: list[list[Snapshot]] = []
    for snap in read_order:
        last = boots[-1][-1] if boots else None
        if last is None or (snap.uptime or 0.0) < (last.uptime or 0.0):
            boots.append([snap])
        else:
            boots[-1].append(snap)
    out: list[Snapshot] = []
    steps: list[WallClockStep] = []
    for boot in boots:
        offset = 0.0  # how far the wall clock has been stepped since the boot's first snapshot
        previous: Snapshot | None = None
        for snap in sorted(boot, key=lambda s: s.uptime or 0.0):
            if previous is not None:
                passed = (snap.uptime or 0.0) - (previous.uptime or 0.0)
                expected = previous.wall + passed
                moved = (snap.wall - offset) - expected
                if clock_stepped(moved, passed):
                    steps.append(
                        WallClockStep(
                            snap.source,
                            snap.line,
                            snap.head,
                            snap.wall,
                            expected + offset,
                            previous.source,
                            previous.line,
                        )
                    )
                    offset += moved
            placed = replace(snap, wall=snap.wall - offset) if offset else snap
            out.append(placed)
            previous = placed
    return out, steps


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
    try:
        run_id = store.begin_run(info)
    except InputError as exc:
        raise InputError(
            f"{exc.message}; the store keeps none of the {len(snapshots)} samples (the import did not begin)",
            hint=exc.hint,
        ) from None
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
        try:
            store.append_sample(run_id, sample)
        except InputError as exc:
            # A full disk (or a failing one): each sample is its own transaction, so the store keeps
            # the ones committed before, consistent and readable; say how many.
            kept = snapshots.index(snap)
            raise InputError(
                f"{exc.message}; the store keeps {kept} of the {len(snapshots)} samples (run {run_id}, "
                f"up to {snapshots[kept - 1].source}:{snapshots[kept - 1].line})"
                if kept
                else f"{exc.message}; the store keeps none of the {len(snapshots)} samples (run {run_id})",
                hint=exc.hint
                if isinstance(exc, StoreClashError)
                else f"free some space and import again with --force, or import into another --store ({exc.hint})",
            ) from None
    store.end_run(run_id)
    return run_id
