"""``kforensic report``: whether each kernel log given beside a dump comes from the dumped boot.

The dump carries its own kernel log (its printk records) and command line; each ``--dmesg`` log not already set
apart (another host, another release, times past the crash) is read again, boot by boot
(collectors/log_boots.py), and checked against it (detectors/incident/boot_identity.py).  A log of another boot
becomes a contradiction naming the check that separated it; the others get a line in "Examined": the dumped
boot's, or the boot identity unconfirmed.
"""

from __future__ import annotations

from collections.abc import Collection

from collectors.inputs import STDIN_NAME
from collectors.log_boots import COMMAND_LINE, PANIC, read_boots
from detectors.incident.boot_identity import BootCheck, check_boot
from detectors.incident.correlate import SET_APART_SEVERITY
from forensics.errors import KforensicError
from forensics.model import Baseline, Fact, Finding, FindingKind, finding_id
from forensics.types.boots import LoggedBoot, LoggedLine
from forensics.types.dmesg_result import DmesgResult
from forensics.types.results import DumpLogResult, LogBeside, SourceAnalysis, VmcoreResult

#: How the title names each check's finding.
_SHORT = {
    "command line": "its boot's command line is not the dump's",
    "same times": "it prints other lines than the dump's log at the same times since boot",
    "panic": "its boot panicked while the dumped kernel still ran",
}


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
        return LoggedBoot(log_source(snap.dump_path), 1, release, command, lines, panic, last)
    if isinstance(details, DumpLogResult) and isinstance(details.log, LogBeside):
        boots = read_boots(details.log.path, None)
        return boots[-1] if boots else None
    return None


def check_logs(parts: list[SourceAnalysis], apart: Collection[str]) -> list[BootCheck]:
    """Each kernel log of ``parts`` not already set apart (``apart``), checked against the dump's own log."""
    dump = next((b for p in parts if (b := _dump_boot(p.details)) is not None), None)
    if dump is None:
        return []
    times = [x.seconds for x in dump.lines]
    out = []
    for part in parts:
        if not isinstance(part.details, DmesgResult):
            continue
        for source in part.details.sources:
            if source.name in apart:
                continue
            if source.name == STDIN_NAME:  # read once, by the log's own analysis
                out.append(BootCheck(source.name, None, "", "unconfirmed: standard input is not read again"))
                continue
            try:
                boots = read_boots(source.name, times)
            except KforensicError as exc:  # gone or unreadable since its analysis read it: the report goes on
                out.append(BootCheck(source.name, None, "", f"unconfirmed: the log could not be read again ({exc})"))
                continue
            found = check_boot(dump, boots)
            if found is not None:
                out.append(found)
    return out


def other_boot_finding(check: BootCheck) -> Finding:
    """The contradiction of a log that a check proves to be of another boot (low: a finding about the inputs, not
    harm to the machine; its findings are set apart)."""
    return Finding(
        id=finding_id(FindingKind.CONTRADICTION, "other boot of the same kernel", check.source),
        kind=FindingKind.CONTRADICTION,
        title=f"{check.source} cannot come from the crashed boot: {_SHORT[check.check]}",
        severity=SET_APART_SEVERITY,
        confidence=0.9,
        confidence_reason=f"the dump carries its own kernel log: checked by {check.check}",
        summary=f"The input {check.source} is of the dump's kernel release but another boot: {check.why}. Its findings "
        "are listed apart, not ordered against the crash nor ranked as its causes.",
        evidence=check.evidence,
        next_steps=("check that every input was copied from the crashed machine and boot (boot_id, uname -r)",),
        facts=(Fact("other boot", check.source), Fact("boot check", check.check), Fact("set apart because", check.why)),
        detector="incident",
        baseline=_compared_with(check),
    )


#: What each check compared the log's boot with, in the dump's own log (detectors/incident/boot_identity.py).
_COMPARED = {
    "command line": "the dumped boot's command line: a log of that boot prints the same",
    "same times": "what the dump's log prints at that time since boot: one boot prints one record at one time",
    "panic": "a record of the dumped kernel after the log's panic: the dumped boot did not end in that panic",
}


def _compared_with(check: BootCheck) -> Baseline:
    """The dump's line a boot check compared the log with (the first of the check's evidence)."""
    dumped = check.evidence[0]
    at = "" if dumped.timestamp is None else f" at {dumped.timestamp.seconds:.6f} s since boot"
    return Baseline(_COMPARED[check.check], f"{dumped.excerpt.strip()!r}{at}", f"the dump's own log, {dumped.cite()}")
