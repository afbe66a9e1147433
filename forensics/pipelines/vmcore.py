"""``kforensic vmcore``: extract a dump's snapshot (the drgn adapter), run the detectors, build the incident."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from forensics.model import NotAvailable
from forensics.types.results import VmcoreResult
from forensics.types.vmcore import Taint

if TYPE_CHECKING:
    from forensics.vmcore.program import DebugInfoRequest


def analyse_dump(
    path: Path,
    request: DebugInfoRequest,
    progress: Callable[[str], None] | None = None,
    notice: Callable[[str], None] | None = None,
) -> VmcoreResult:
    """Open a dump (file or crash directory), extract a snapshot, analyse it.

    ``progress``: transient status; ``notice``: downloads and decompressions, said even without a terminal.
    """
    from detectors.vmcore.analysis import analyse_snapshot
    from forensics import __version__
    from forensics.model import BootTime, Clock, Incident, NotAvailable, Timestamp, TimeWindow
    from forensics.vmcore import extract_dump

    extract = extract_dump(path, request, progress, notice)
    snapshot = extract.snapshot
    if progress is not None:
        progress("analysing")
    beside = None
    if extract.dmesg_path is not None and extract.dmesg_text is not None:
        from detectors.dmesg.scanner import scan_text

        beside = (str(extract.dmesg_path), scan_text(extract.dmesg_text))
    analysis, fault, reports = analyse_snapshot(snapshot, beside)
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
        host=extract.host,
        kernel_release=snapshot.kernel_release,
        window=window,
        sources=extract.sources,
        findings=analysis.findings,
        tool_version=__version__,
        boot_time=boot,
    )
    dmesg = str(extract.dmesg_path) if extract.dmesg_path else None
    taint: Taint | NotAvailable = (
        snapshot.taint_mask if isinstance(snapshot.taint_mask, NotAvailable) else _taint(snapshot.taint_mask)
    )
    return VmcoreResult(snapshot, analysis, fault, tuple(reports), incident, dmesg, taint)


def _taint(mask: int) -> Taint:
    """The taint mask, its letters and what each means."""
    from detectors.dmesg.taint import decode_taint
    from detectors.vmcore.findings import taint_letters_of

    letters = taint_letters_of(mask)
    return Taint(mask, letters, decode_taint(letters))
