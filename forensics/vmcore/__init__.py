"""The drgn adapter: the only package of kforensic that imports drgn.

Importing this package does not import drgn; :func:`analyse_dump` does, when called.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from forensics.model import NotAvailable
    from forensics.vmcore.program import DebugInfoRequest
    from forensics.vmcore.report import VmcoreResult


def analyse_dump(path: Path, request: DebugInfoRequest, progress: Callable[[str], None] | None = None) -> VmcoreResult:
    """Open a dump (file or crash directory), extract a snapshot, analyse it."""
    import logging
    import time
    from dataclasses import replace

    import drgn

    from collectors.inputs import unreadable_record
    from detectors.vmcore.analysis import analyse_snapshot
    from forensics import __version__
    from forensics.errors import InputError
    from forensics.model import BootTime, Clock, Incident, NotAvailable, SourceRecord, Timestamp, TimeWindow
    from forensics.vmcore import system
    from forensics.vmcore.collect import collect_snapshot
    from forensics.vmcore.dumpfile import check_pages, read_dump_header
    from forensics.vmcore.locate import locate_dump
    from forensics.vmcore.program import open_dump
    from forensics.vmcore.report import VmcoreResult

    say = progress or (lambda _m: None)
    # drgn logs its own warnings (e.g. modules without debug info); kforensic reports them itself.
    logging.getLogger("drgn").setLevel(logging.ERROR)
    started = time.monotonic()
    location = locate_dump(path)
    from forensics.output import register_input

    for name in (location.dump, location.dmesg, request.vmlinux, *request.module_debug):
        if name is not None:
            register_input(name)  # no output of this run may replace them
    header = read_dump_header(location.dump)
    say("loading debug info")
    opened = open_dump(location.dump, header, request)
    try:
        snapshot = collect_snapshot(opened, str(location.dump), say, request.source_dirs)
    except drgn.BadDataError as exc:  # DWARF is read lazily: damage can show up only now
        raise InputError(
            f"{location.dump}: damaged debug info or dump data ({exc})",
            hint="check the dump and the vmlinux (copy or unpack them again)",
        ) from None
    say("checking the dump's pages")
    pages = check_pages(location.dump, header)
    damaged = pages.warning() if pages is not None else None
    if damaged is not None:  # first: it says how far everything else can be trusted
        snapshot = replace(snapshot, warnings=(damaged, *snapshot.warnings))
    if location.note is not None:
        snapshot = replace(snapshot, warnings=(location.note, *snapshot.warnings))
    say("analysing")
    beside = None
    if location.dmesg is not None:
        from detectors.dmesg.scanner import scan_text

        try:
            beside = (str(location.dmesg), scan_text(location.dmesg.read_bytes().decode("utf-8", errors="replace")))
        except OSError as exc:
            snapshot = replace(snapshot, warnings=(*snapshot.warnings, f"cannot read {location.dmesg}: {exc}"))
    analysis, fault, reports = analyse_snapshot(snapshot, beside)
    sources = [
        SourceRecord(
            str(location.dump),
            header.size,
            NotAvailable("not hashed: dumps are large"),
            round(time.monotonic() - started, 3),
        )
    ]
    if location.dmesg is None:
        sources.append(unreadable_record(f"{location.dump.parent}/dmesg", "no dmesg file beside the dump"))
    boot: BootTime | NotAvailable
    if isinstance(snapshot.crash_time, float) and isinstance(snapshot.uptime, float):
        window: TimeWindow | NotAvailable = TimeWindow(
            Timestamp(snapshot.crash_time - snapshot.uptime, Clock.WALL), Timestamp(snapshot.crash_time, Clock.WALL)
        )
        # CRASHTIME has a resolution of one second, and the last printk record is
        # written shortly before the capture kernel takes over.
        boot = BootTime(snapshot.crash_time - snapshot.uptime, 2.0, "vmcore CRASHTIME minus the last printk time")
    else:
        window = NotAvailable("the dump records no crash time")
        boot = NotAvailable("the dump records no crash time")
    incident = Incident(
        host=system.attempt("host name", lambda: system.hostname(opened.prog)),
        kernel_release=snapshot.kernel_release,
        window=window,
        sources=tuple(sources),
        findings=analysis.findings,
        tool_version=__version__,
        boot_time=boot,
    )
    return VmcoreResult(
        snapshot, analysis, fault, tuple(reports), incident, str(location.dmesg) if location.dmesg else None
    )


#: Dumps up to this size are hashed for the report's inputs (hashing runs at about 1 GB/s).
HASH_LIMIT = 512 << 20


def _dump_digest(path: Path, size: int) -> str | NotAvailable:
    import hashlib

    from forensics.model import NotAvailable

    if size > HASH_LIMIT:
        return NotAvailable(f"not hashed: {size >> 20} MiB is above the {HASH_LIMIT >> 20} MiB limit")
    digest = hashlib.sha256()
    try:
        with path.open("rb") as f:
            while chunk := f.read(1 << 20):
                digest.update(chunk)
    except OSError as exc:
        return NotAvailable(f"not hashed: {exc.strerror or exc}")
    return digest.hexdigest()
