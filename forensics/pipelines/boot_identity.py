"""``kforensic report``: whether each kernel log given beside a dump comes from the dumped boot.

The dump carries its own kernel log (its printk records, or kdump's copy beside it; read without debug info, what
makedumpfile extracts from it, extracted again) and command line; each ``--dmesg`` log not already set apart
(another host, another release, times past the crash) is read again, boot by boot (collectors/log_boots.py), and
checked against it (detectors/incident/boot_identity.py).  Without a dump, a slab-watch store's kernel log records
of its boot (forensics/pipelines/store_log.py) are the reference: the store lends that boot's time and host; without
them, the boot of the report the logs' incident tells (the log whose boot time the report gives) is the reference of
the other logs: two console logs of two boots were told as one boot.  A log of another boot becomes a contradiction
naming the check that separated it; the others get a line in "Examined": the dumped (or told) boot's, or the boot
identity unconfirmed.
"""

from __future__ import annotations

import tempfile
from collections.abc import Collection
from dataclasses import replace
from pathlib import Path

from collectors.inputs import STDIN_NAME
from collectors.log_boots import COMMAND_LINE, PANIC, boot_clock, read_boots
from detectors.incident.boot_identity import DUMP, BootCheck, Reference, check_boot, log_reference, moved_bodies
from detectors.incident.correlate import SET_APART_SEVERITY
from forensics.errors import KforensicError
from forensics.model import Baseline, Fact, Finding, FindingKind, finding_id
from forensics.quoting import shown_path
from forensics.types.boots import LoggedBoot, LoggedLine
from forensics.types.dmesg_result import DmesgResult
from forensics.types.results import DumpLogResult, LogBeside, LogExtracted, SourceAnalysis, VmcoreResult

#: How the title names each check's finding (the fields of the boot it was checked against, :class:`Reference`).
_SHORT = {
    "command line": "its boot's command line is not {owner}",
    "same times": "it prints other lines than {log} at the same times since boot",
    "same message": "it prints lines of {log} at other times since boot",
    "panic": "its boot panicked while {kernel} still ran",
    "boot time": "its boot began at another time than {boot}",
}
#: A told log of more lines than this is read for its command line, panic and RTC line only, not every line's time (the
#: "same times" check): a reference boot keeps its lines in memory, and a log may hold millions.
REFERENCE_LINES = 50_000


def _dump_boot(details: object) -> LoggedBoot | None:
    """The dumped boot's own log: the dump's printk records, or the log kdump saved beside it (no debug info)."""
    if isinstance(details, VmcoreResult):
        from detectors.vmcore.findings import log_source

        snap = details.snapshot
        # Each line of a record, at its time: a console prints a record's next lines with its stamp.  Cited by the
        # record's first line (the evidence of the dump's log cites the same); compared without surrounding blanks.
        lines = tuple(
            LoggedLine(n, r.seconds, parts[0], part.strip())
            for n, r in enumerate(snap.log, 1)
            for parts in [r.text.split("\n")]
            for i, part in enumerate(parts)
            if part.strip() or not i
        )
        command = next((x for x in lines if x.body.startswith(COMMAND_LINE)), None)
        panic = next((x for x in reversed(lines) if x.body.startswith(PANIC)), None)
        release = snap.kernel_release if isinstance(snap.kernel_release, str) else None
        last = lines[-1].seconds if lines else None
        clock = next(((x, began) for x in lines if (began := boot_clock(x)) is not None), None)
        return LoggedBoot(
            log_source(snap.dump_path), 1, release, command, lines, panic, last,
            *((None, None) if clock is None else clock),
        )  # fmt: skip
    if isinstance(details, DumpLogResult) and isinstance(details.log, LogBeside):
        boots = read_boots(details.log.path, None)
        return boots[-1] if boots else None
    if isinstance(details, DumpLogResult) and isinstance(details.log, LogExtracted):
        return _extracted_boot(details.log)
    return None


def _extracted_boot(log: LogExtracted) -> LoggedBoot | None:
    """The dump's own log as makedumpfile extracts it (its file of the dump's analysis is gone), cited as the dump's
    log findings cite it: extracted again, 15 ms for a fixture dump.  Without it a log of another boot beside a dump
    read without debug info was told as the dump's boot ("First (2.207 s since boot): general protection fault ...
    Then (2.212 s since boot): kernel BUG ...", the second of another guest)."""
    from forensics.vmcore.kernellog import LogUnavailableError, extract_log

    try:
        data = extract_log(Path(log.command[2])).data
    except LogUnavailableError:  # (it was read moments ago: gone since, the log stays unconfirmed)
        return None
    with tempfile.TemporaryDirectory(prefix="kforensic-boots-") as private:
        path = Path(private) / "dmesg"
        path.write_bytes(data)
        boots = read_boots(str(path), None)
    return replace(boots[-1], source=log.cited) if boots else None


def _stored_boot(parts: list[SourceAnalysis]) -> tuple[LoggedBoot, Reference] | None:
    """Without a dump, the boot of a slab-watch store given beside the logs, by its own kernel log records (the
    boot its boot time is of: forensics/pipelines/store_log.py); None without a store or such records.  Its boot
    time and host were lent to a log of the same release unchecked (ue24 F13: a log 3.5 s off the store's records
    dated "2026-12-07 14:58:17 UTC ±0.5 s" by the store and placed "On vm")."""
    from forensics.pipelines.store_log import read_stored_log, reference, stored_boot
    from forensics.types.results import LeaksResult

    store = next((p.details.store for p in parts if isinstance(p.details, LeaksResult)), None)
    try:
        log = None if store is None else read_stored_log(store)
    except KforensicError:  # (gone since its analysis read it: no reference)
        return None
    return None if log is None or not log.rows else (stored_boot(log), reference(log))


def _told_boot(parts: list[SourceAnalysis], apart: Collection[str]) -> tuple[LoggedBoot, Reference] | None:
    """Without a dump, the boot of the report the logs' incident tells, when two logs or more are given (None: one
    log, or the told one is set apart or read from standard input)."""
    from forensics.pipelines.dmesg import told_report

    results = [p.details for p in parts if isinstance(p.details, DmesgResult)]
    if sum(1 for r in results for s in r.sources if s.name not in apart) < 2:
        return None
    told = next((t for r in results if (t := told_report(r)) is not None), None)
    if told is None or told[0] in apart or told[0] == STDIN_NAME:
        return None
    log, lines = told[0], told[1]
    size = next(s.lines for r in results for s in r.sources if s.name == log)
    try:
        boots = read_boots(log, None if size <= REFERENCE_LINES else ())
    except KforensicError:  # gone since its analysis read it: no reference
        return None
    boot = next((b for b in reversed(boots) if b.first_line <= lines[0]), None)
    return None if boot is None else (boot, log_reference(shown_path(log), boot.first_line))


def check_logs(parts: list[SourceAnalysis], apart: Collection[str]) -> list[BootCheck]:
    """Each kernel log of ``parts`` not already set apart (``apart``), checked against the dump's own log (a store's
    kernel log records too); without a dump, against the store's records (:func:`_stored_boot`), else the boot of the
    told log (:func:`_told_boot`)."""
    if not any(s.name not in apart for p in parts if isinstance(p.details, DmesgResult) for s in p.details.sources):
        return []  # (no log to check: the dump's own is not read again, nor extracted again by makedumpfile)
    dump = next((b for p in parts if (b := _dump_boot(p.details)) is not None), None)
    ref: Reference = DUMP
    stored = _stored_boot(parts)
    if dump is None:
        told = stored or _told_boot(parts, apart)
        if told is None:
            return []
        dump, ref = told
    times = [x.seconds for x in dump.lines]
    out = []
    for part in parts:
        if not isinstance(part.details, DmesgResult):
            continue
        for source in part.details.sources:
            if source.name in apart or (ref != DUMP and source.name == dump.source):
                continue
            if source.name == STDIN_NAME:  # read once, by the log's own analysis
                out.append(BootCheck(source.name, None, "", "unconfirmed: standard input is not read again"))
                continue
            if stored is not None and source.name == stored[0].source:  # (a store's records beside a dump: no file)
                found = check_boot(dump, (stored[0],), ref)
                out += [] if found is None else [found]
                continue
            try:
                boots = read_boots(source.name, times, moved_bodies(dump))
            except KforensicError as exc:  # gone or unreadable since its analysis read it: the report goes on
                out.append(BootCheck(source.name, None, "", f"unconfirmed: the log could not be read again ({exc})"))
                continue
            found = check_boot(dump, boots, ref)
            if found is not None:
                out.append(found)
    return out


def other_boot_finding(check: BootCheck) -> Finding:
    """The contradiction of a log that a check proves to be of another boot (low: a finding about the inputs, not
    harm to the machine; its findings are set apart)."""
    ref = check.against
    short = _SHORT[check.check].format(owner=ref.owner, log=ref.log, kernel=ref.kernel, boot=ref.boot)
    if ref == DUMP:
        title = f"{check.source} cannot come from the crashed boot: {short}"
        reason = "the dump carries its own kernel log"
        summary = f"The input {check.source} is of the dump's kernel release but another boot: {check.why}."
    else:
        title = f"{check.source} is of another boot than {ref.boot}: {short}"
        reason = f"{ref.log} carries the told boot's own lines"
        summary = (
            f"The input {check.source} is of another boot than {ref.boot}, the boot this report tells: {check.why}."
        )
    return Finding(
        id=finding_id(FindingKind.CONTRADICTION, "other boot of the same kernel", check.source),
        kind=FindingKind.CONTRADICTION,
        title=title,
        severity=SET_APART_SEVERITY,
        confidence=0.9,
        confidence_reason=f"{reason}: checked by {check.check}",
        summary=f"{summary} Its findings are listed apart, on its own clock, not ordered against the told boot's nor "
        "ranked as their causes.",
        evidence=check.evidence,
        next_steps=("check that every input was copied from the crashed machine and boot (boot_id, uname -r)",),
        facts=(Fact("other boot", check.source), Fact("boot check", check.check), Fact("set apart because", check.why)),
        detector="incident",
        baseline=_compared_with(check),
    )


#: What each check compared the log's boot with, in the dump's own log (detectors/incident/boot_identity.py), or the
#: told log's (the fields of :class:`Reference`).
_COMPARED = {
    "command line": "{boot}'s command line: a log of that boot prints the same",
    "same times": "what {log} prints at that time since boot: one boot prints one record at one time",
    "same message": "when {log}, which holds every record over its span, prints that message: at one time",
    "panic": "a record of {kernel} after the log's panic: {boot} did not end in that panic",
    "boot time": "when {boot} began, its RTC's reading less its printk time: a boot begins once",
}


def _compared_with(check: BootCheck) -> Baseline:
    """The dump's line a boot check compared the log with (the first of the check's evidence)."""
    dumped, ref = check.evidence[0], check.against
    at = "" if dumped.timestamp is None else f" at {dumped.timestamp.seconds:.6f} s since boot"
    return Baseline(
        _COMPARED[check.check].format(boot=ref.boot, log=ref.log, kernel=ref.kernel),
        f"{dumped.excerpt.strip()!r}{at}",
        f"{ref.where}, {dumped.cite()}",
    )
