"""``kforensic vmcore``: extract a dump's snapshot (the drgn adapter), run the detectors, build the incident."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from forensics.model import Examined, NotAvailable
from forensics.types.results import NEEDS_DEBUG_INFO, DumpLogResult, LogBeside, LogExtracted, VmcoreResult
from forensics.types.vmcore import CrashSnapshot, Taint

if TYPE_CHECKING:
    from forensics.errors import DebugInfoMismatchError, NoDebugInfoError
    from forensics.model import SourceRecord
    from forensics.vmcore.kernellog import ExtractedLog, LogUnavailableError
    from forensics.vmcore.request import DebugInfoRequest


def analyse_dump_or_log(
    path: Path,
    request: DebugInfoRequest,
    progress: Callable[[str], None] | None = None,
    notice: Callable[[str], None] | None = None,
) -> VmcoreResult | DumpLogResult:
    """:func:`analyse_dump`; when the kernel's debug info is found nowhere, the dump's kernel log read instead
    (:func:`analyse_dump_log`).  Raises the debug-info error (exit 3) when the log cannot be had either."""
    from forensics.errors import NoDebugInfoError

    try:
        return analyse_dump(path, request, progress, notice)
    except NoDebugInfoError as missing:
        return analyse_dump_log(path, missing, progress, notice)


def refusal(path: Path, wrong: DebugInfoMismatchError) -> DebugInfoMismatchError:
    """The error ``kforensic vmcore`` refuses a dump opened with another kernel's vmlinux with: ``wrong``, led by the
    cut when the dump is cut short (its headers and page table say so without a vmlinux): the right vmlinux alone
    does not make such a dump whole, so the cut and its hint come first (ue21 #8: only the vmlinux was blamed)."""
    from forensics.errors import DebugInfoMismatchError
    from forensics.vmcore.dumpfile import CUT_HINT, read_dump_header
    from forensics.vmcore.locate import locate_dump

    dump = locate_dump(path).dump  # (found and read before the vmlinux was: they do not fail now)
    cut = read_dump_header(dump).cut
    if cut is None:
        return wrong
    return DebugInfoMismatchError(f"{cut.truncated(dump)}, and {wrong.message}", hint=f"{CUT_HINT}; {wrong.hint}")


def analyse_dump_log(
    path: Path,
    missing: NoDebugInfoError,
    progress: Callable[[str], None] | None = None,
    notice: Callable[[str], None] | None = None,
) -> DumpLogResult:
    """The dump's kernel log read as ``kforensic dmesg`` reads a log, the debug info being ``missing``.

    The log found beside the dump when it is the dump's own (its last records are those ``makedumpfile
    --dump-dmesg`` reads from the dump) or when that cannot be checked (cited by its path, said unchecked); else
    what makedumpfile extracts (cited as lines of that command's output), the log beside passed over said in what
    was examined.  Raises an :class:`InputError` of the debug-info message, saying why the log could not be had
    either.
    """
    from dataclasses import replace

    from detectors.incident.hypotheses import rank_hypotheses
    from forensics.errors import InputError
    from forensics.model import Examined, InputKind
    from forensics.pipelines.dmesg import analyse_log_bytes, analyse_logs
    from forensics.vmcore.dumpfile import CUT_HINT, read_dump_header, share_text
    from forensics.vmcore.kernellog import ExtractedLog, LogUnavailableError, extract_log
    from forensics.vmcore.locate import locate_dump

    location = locate_dump(path)  # (found before the debug info was looked for: it does not fail now)
    cut = read_dump_header(location.dump).cut  # (read before too: a cut header was refused then)
    if progress is not None:
        progress("reading the dump's kernel log")
    beside = _beside_text(location.dmesg)
    try:
        extracted: ExtractedLog | LogUnavailableError = extract_log(location.dump)
    except LogUnavailableError as exc:
        extracted = exc
    log = _log_read(location.dmesg, beside, extracted)
    if isinstance(log, LogBeside) and log.unchecked and cut is not None:
        # The cut first: it is why makedumpfile could not read the dump's own log to check this one against (it
        # came last, in parentheses after makedumpfile's readmem failure, ue21 #8); the pages lost: the notes.
        log = replace(log, unchecked=f"the dump is cut short ({share_text(cut.size, cut.needed)}): {log.unchecked}")
    if isinstance(log, LogBeside):
        dmesg = analyse_logs([log.path], live=False, dumped=True)
    elif isinstance(log, LogExtracted) and isinstance(extracted, ExtractedLog):
        dmesg = analyse_log_bytes(log.cited, extracted.data, dumped=True)
    else:
        none = (
            "no kernel log was saved beside the dump"
            if location.dmesg is None
            else f"{location.dmesg} beside it is empty or cannot be read"
        )
        why = extracted.reason if isinstance(extracted, LogUnavailableError) else "makedumpfile read nothing"
        if cut is not None:
            # The cut first: it is why makedumpfile read nothing (the log's pages or the symbols' lay past it), and no
            # debug info reads what is gone; the missing debug info after it (ue21 #8: only that was said).
            left = " from what is left" if not isinstance(extracted, LogUnavailableError) or extracted.ran else ""
            raise InputError(
                f"{cut.truncated(location.dump)}: its kernel log could not be read{left} ({why}), and {none}; nor "
                f"its state: {missing.reason}",
                hint=f"{CUT_HINT}; for its state, then: {missing.hint}",
            )
        raise InputError(
            f"{missing.message}; the dump's kernel log could not be read either: {why}, and {none}",
            hint=missing.hint,
        )
    unknown = f"no debug info: {missing.hint}"
    lost = (f"what the lost pages held: the dump is cut short, {cut.summary()}",) if cut is not None else ()
    examined = Examined(
        f"crash dump {location.dump}: its kernel log only (no debug info for its kernel)",
        (),
        (f"the dump's state ({NEEDS_DEBUG_INFO}): unknown ({unknown})", *lost),
        # (typed: a step at the crash> prompt on this dump says to get its debug info first)
        input=InputKind.DUMP,
        hint=missing.hint,
    )
    # The log found beside the dump and not read (another crash's, one cut short): said where the inputs are.
    passed_over = (Examined(log.not_used),) if isinstance(log, LogExtracted) and log.not_used else ()
    incident = replace(
        dmesg.incident,
        sources=(*dmesg.incident.sources, _dump_record(location.dump)),
        examined=(examined, *passed_over, *dmesg.incident.examined),
    )
    if notice is not None:
        notice("no debug info found for the dump's kernel: only its kernel log was read (the report says why)")
    return DumpLogResult(
        str(location.dump),
        NotAvailable(missing.reason),
        missing.hint,
        log,
        # Ranked again with what was examined: a step at the crash> prompt on this dump says to get its debug info
        # first (the log's own ranking offered "crash> dis -rl ..." as if crash could open it).
        replace(dmesg, incident=incident, hypotheses=rank_hypotheses(dmesg.incident.findings, incident.examined)),
        tuple(n for n in (cut.warning() if cut is not None else None, location.note) if n is not None),
    )


def _dump_record(dump: Path) -> SourceRecord:
    """The dump as a source of the log-only result: its size; not hashed, not read past its log."""
    from forensics.model import SourceRecord

    size: int | NotAvailable
    try:
        size = dump.stat().st_size
    except OSError as exc:
        size = NotAvailable(f"cannot stat the dump: {exc.strerror or exc}")
    return SourceRecord(str(dump), size, NotAvailable("not hashed: dumps are large"), 0.0)


def _beside_text(log: Path | None) -> str | None:
    """The text of the log found beside the dump, None when there is none, it cannot be read or it is empty: an
    empty one (makedumpfile failed at capture time) or one root alone may read is not the log; the dump's own is
    then read."""
    if log is None:
        return None
    try:
        data = log.read_bytes()
    except OSError:
        return None
    return data.decode("utf-8", errors="replace") if data else None


def _log_read(
    found: Path | None, beside: str | None, extracted: ExtractedLog | LogUnavailableError
) -> LogBeside | LogExtracted | None:
    """Which log the findings come from: the one found beside the dump when its last records are the dump's own
    (makedumpfile's ``extracted``), or when that cannot be checked (said unchecked); else the dump's own.  None:
    neither can be had."""
    from forensics.vmcore.kernellog import LogUnavailableError
    from forensics.vmcore.logcheck import DumpLog, compare

    if found is None or beside is None:
        return None if isinstance(extracted, LogUnavailableError) else LogExtracted(extracted.command)
    if isinstance(extracted, LogUnavailableError):
        return LogBeside(str(found), unchecked=f"the dump's own log could not be read: {extracted.reason}")
    dumped = DumpLog(extracted.data.decode("utf-8", errors="replace"))
    if not dumped.tail(1):
        return LogBeside(str(found), unchecked="makedumpfile read no record from the dump")
    check = compare(beside, dumped)
    if check.ours:
        return LogBeside(str(found), checked=f"{check.why}, as makedumpfile reads them from the dump")
    return LogExtracted(extracted.command, f"{found} beside the dump is not this dump's log: {check.why}; not read")


def analyse_dump(
    path: Path,
    request: DebugInfoRequest,
    progress: Callable[[str], None] | None = None,
    notice: Callable[[str], None] | None = None,
) -> VmcoreResult:
    """Open a dump (file or crash directory), extract a snapshot, analyse it.

    ``progress``: transient status; ``notice``: downloads and decompressions, said even without a terminal.
    """
    from forensics.vmcore import extract_dump

    extract = extract_dump(path, request, progress, notice)
    # After the extraction: a dump that cannot be read ends the run without the detectors' imports.
    from detectors.vmcore.analysis import analyse_snapshot
    from forensics import __version__
    from forensics.model import BootTime, Clock, Incident, NotAvailable, Timestamp, TimeWindow

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
    # What the analysis read, for `kforensic vmcore` as for a report (which listed it alone until ue24 F10: the command
    # said "Nothing at medium severity or above" without what it had looked at); a log found beside the dump and not
    # read (another crash's) is said there too, as without debug info.
    passed_over = (Examined(extract.dmesg_not_used),) if extract.dmesg_not_used else ()
    incident = Incident(
        host=extract.host,
        kernel_release=snapshot.kernel_release,
        window=window,
        sources=extract.sources,
        findings=analysis.findings,
        tool_version=__version__,
        boot_time=boot,
        examined=(dump_examined(snapshot), *passed_over),
    )
    dmesg = str(extract.dmesg_path) if extract.dmesg_path else None
    taint: Taint | NotAvailable = (
        snapshot.taint_mask if isinstance(snapshot.taint_mask, NotAvailable) else _taint(snapshot.taint_mask)
    )
    return VmcoreResult(snapshot, analysis, fault, tuple(reports), incident, dmesg, taint, extract.dmesg_not_used)


#: What an analysis of a dump with its kernel's debug info could have found (detectors/vmcore/).
DUMP_COULD_FIND = (
    "the crash: its site, registers, faulting instruction, NULL members, freed or poisoned memory",
    "locks held and their owners, tasks blocked in D state, lock cycles",
    "memory: outsized slab caches, memory totals, the largest users at an OOM",
    "the kernel's own log (its printk records) and taint",
)


def dump_examined(snap: CrashSnapshot) -> Examined:
    """What the analysis of the dump read: its kernel, crash time, log, tasks, caches and modules."""
    at = f", crashed {snap.uptime:.3f} s after boot" if isinstance(snap.uptime, float) else ""
    return Examined(
        f"crash dump {snap.dump_path}: kernel {snap.kernel_release}{at}; {len(snap.log):,} printk record(s), "
        f"{len(snap.tasks):,} task(s), {len(snap.slab_caches):,} slab cache(s), {len(snap.modules):,} module(s)",
        DUMP_COULD_FIND,
        # A cut dump: what lay on its lost pages could not be found (their reads say "not in dump").
        (f"what the lost pages held: the dump is cut short, {snap.cut}",) if snap.cut is not None else (),
    )


def _taint(mask: int) -> Taint:
    """The taint mask, its letters and what each means."""
    from detectors.dmesg.taint import decode_taint
    from detectors.vmcore.findings import taint_letters_of

    letters = taint_letters_of(mask)
    return Taint(mask, letters, decode_taint(letters))
