"""The drgn adapter: the only package of kforensic that imports drgn.

It only extracts: :func:`extract_dump` opens a dump and returns what it read
(:class:`DumpExtract`, the snapshot and where it came from).  The analysis
(detectors, hypotheses, the incident) runs in :mod:`forensics.pipelines.vmcore`.
Importing this package does not import drgn; :func:`extract_dump` does, when called.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from forensics.model import NotAvailable, SourceRecord
    from forensics.types.vmcore import CrashSnapshot
    from forensics.vmcore.dumpfile import DumpCut
    from forensics.vmcore.request import DebugInfoRequest


@dataclass(frozen=True)
class DumpExtract:
    """What the adapter read from one dump: the snapshot, its inputs and the kernel log saved beside it."""

    snapshot: CrashSnapshot
    sources: tuple[SourceRecord, ...]
    host: str | NotAvailable
    dmesg_path: Path | None  # the kernel log beside the dump (makedumpfile --dump-dmesg), if any
    dmesg_text: str | None  # its text, or None when absent or unreadable (then a snapshot warning says why)
    dmesg_not_used: str = ""  # why a log found beside the dump was not read (not the dump's), one line; "" if none


def extract_dump(
    path: Path,
    request: DebugInfoRequest,
    progress: Callable[[str], None] | None = None,
    notice: Callable[[str], None] | None = None,
) -> DumpExtract:
    """Open a dump (file or crash directory) and extract a snapshot; no analysis.

    ``progress`` gets transient status lines; ``notice`` what must be said even without a
    terminal (a download or a decompression into the cache starting and ending).
    """
    import logging
    import time
    from dataclasses import replace

    from forensics.output import register_input
    from forensics.vmcore.dumpfile import check_pages, read_dump_header
    from forensics.vmcore.locate import locate_dump

    started = time.monotonic()
    location = locate_dump(path)
    for name in (location.dump, location.dmesg, request.vmlinux, *request.module_debug):
        if name is not None:
            register_input(name)  # no output of this run may replace them
    header = read_dump_header(location.dump)
    # drgn and the readers built on it only now: a missing, cut or damaged dump ends the run without them (the
    # bad-input runs' 0.1 s of imports).
    import drgn

    from forensics.vmcore.lazyhelpers import defer_linux_helpers

    defer_linux_helpers()  # before the first helper import: the helpers' package without its 0.1 s of imports

    from collectors.inputs import unreadable_record
    from forensics.errors import InputError
    from forensics.model import NotAvailable, SourceRecord
    from forensics.vmcore import system
    from forensics.vmcore.collect import collect_snapshot
    from forensics.vmcore.program import open_dump

    say = progress or (lambda _m: None)
    # drgn logs its own warnings (e.g. modules without debug info); kforensic reports them itself.
    logging.getLogger("drgn").setLevel(logging.ERROR)
    say("loading debug info")
    opened = open_dump(location.dump, header, request, progress, notice)
    try:
        snapshot = collect_snapshot(opened, str(location.dump), say, request.source_dirs)
    except drgn.BadDataError as exc:  # DWARF is read lazily: damage can show up only now
        raise InputError(
            f"{location.dump}: damaged debug info or dump data ({exc})",
            hint="check the dump and the vmlinux (copy or unpack them again)",
        ) from None
    from forensics.vmcore.followup import build_follow_up

    follow_up = build_follow_up(
        snapshot, location.dump, opened.vmlinux_via, opened.module_files, request.source_dirs, notice
    )
    snapshot = replace(snapshot, follow_up=follow_up)
    say("checking the dump's pages")
    pages = check_pages(location.dump, header)
    damaged = pages.warning() if pages is not None else None
    if damaged is not None:  # first: it says how far everything else can be trusted
        snapshot = replace(snapshot, warnings=(damaged, *snapshot.warnings))
    unreadable = pages.unreadable_text() if pages is not None else None
    if unreadable is not None:  # (EIO: the storage failed these bytes; everything else was analysed)
        snapshot = replace(snapshot, warnings=(unreadable, *snapshot.warnings))
    if header.cut is not None:  # first of all: it says which pages every read below could not have
        _require_crashed_task(location.dump, header.cut, snapshot)
        snapshot = replace(snapshot, cut=header.cut.summary(), warnings=(header.cut.warning(), *snapshot.warnings))
    if location.note is not None:
        snapshot = replace(snapshot, warnings=(location.note, *snapshot.warnings))
    dmesg_path, dmesg_text, not_used = location.dmesg, None, ""
    if location.dmesg is not None:
        try:
            dmesg_text = location.dmesg.read_bytes().decode("utf-8", errors="replace")
        except OSError as exc:
            snapshot = replace(snapshot, warnings=(*snapshot.warnings, f"cannot read {location.dmesg}: {exc}"))
    if dmesg_path is not None and dmesg_text is not None:
        said = _beside_said(dmesg_path, dmesg_text, snapshot)
        if said is not None:
            snapshot = replace(snapshot, warnings=(*snapshot.warnings, said[0]))
            if not said[1]:
                dmesg_path, dmesg_text, not_used = None, None, said[0]
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
    host = system.attempt("host name", lambda: system.hostname(opened.prog))
    return DumpExtract(snapshot, tuple(sources), host, dmesg_path, dmesg_text, not_used)


def _beside_said(found: Path, text: str, snapshot: CrashSnapshot) -> tuple[str, bool] | None:
    """Whether the log found beside the dump is the dump's: None when its last records are the dump's printk records
    (drgn read them: no other run); else the warning to give and whether it is still cited (True: it could not be
    checked, the dump holding no record; False: it is another log, not read)."""
    from forensics.vmcore.logcheck import DumpLog, compare

    if not snapshot.log:
        return f"{found}: found beside the dump, not checked against it (the dump's log holds no record)", True
    check = compare(text, DumpLog(records=[(r.seconds, r.text) for r in snapshot.log]))
    if check.ours:
        return None
    return f"{found} beside the dump is not this dump's log: {check.why}; not read: the dump's own records are", False


def _require_crashed_task(dump: Path, cut: DumpCut, snapshot: CrashSnapshot) -> None:
    """Refuse a cut dump that lost the crashed task: without its stack there is nothing to analyse."""
    from forensics.errors import InputError
    from forensics.model import NotAvailable
    from forensics.vmcore.dumpfile import CUT_HINT

    if snapshot.backtrace or not isinstance(snapshot.crashed_pid, NotAvailable):
        return
    raise InputError(
        f"{cut.truncated(dump)}, and the crashed task cannot be read from what is left ({snapshot.crashed_pid.reason})",
        hint=CUT_HINT,
    )
