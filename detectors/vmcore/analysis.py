"""The whole reasoning over a crash dump snapshot: fault, findings, hypotheses."""

from __future__ import annotations

from dataclasses import replace

from detectors.dmesg.findings import group_finding, group_reports
from detectors.dmesg.scanner import scan_text
from detectors.incident.consequences import link_consequences
from detectors.incident.hypotheses import rank_hypotheses
from detectors.vmcore.faultaddr import fault_address_record, no_fault_address
from detectors.vmcore.findings import (
    blocked_task_findings,
    crash_finding,
    crash_frame,
    culprit_frame,
    log_source,
    module_findings,
    null_field_finding,
    outsized_cache_findings,
)
from detectors.vmcore.heldlocks import held_lock_findings
from detectors.vmcore.nullfield import analyse_fault
from detectors.vmcore.slab import slab_title
from detectors.vmcore.steps import finding_on_dump, on_dump
from detectors.vmcore.why import why_findings
from forensics.model import Evidence, Finding, NotAvailable
from forensics.types.dmesg import KernelReport, ReportKind
from forensics.types.vmcore import CrashSnapshot, FaultAnalysis, LogRecord, VmcoreAnalysis


def fault_address_from_log(log: tuple[LogRecord, ...]) -> int | None:
    """The faulting address (CR2) of the last page fault the log reports, None when it reports none."""
    found = fault_address_record(log)
    return None if found is None else found[0]


#: Reports whose exception frame is an interrupt a detector took on a CPU that did not fault: the instruction
#: there is only where the CPU was (spinning), never a fault to reason about.
INTERRUPTED_BY: dict[ReportKind, str] = {
    ReportKind.SOFT_LOCKUP: "the soft lockup detector's timer interrupt took the CPU here: nothing faulted",
    ReportKind.LOCKUP: "the hard lockup detector's NMI took the CPU here: nothing faulted",
    ReportKind.RCU_STALL: "the RCU stall detector's interrupt took the CPU here: nothing faulted",
}


def interrupted_by(report: KernelReport | None) -> str | None:
    """What took the CPU where a lockup detector's report shows it, worded by what the log says.

    ``Kernel panic - not syncing: softlockup: hung tasks`` is the soft lockup detector's panic: where the log keeps
    no ``BUG: soft lockup`` report before it, the panic is the crash's report (of the hard-lockup rule's kind, which
    covers both panics) and it is the soft lockup detector's timer interrupt that took the CPU, never an NMI.
    """
    if report is None:
        return None
    if report.kind is ReportKind.LOCKUP and "softlockup: hung tasks" in report.header:
        return (
            "the soft lockup detector's timer interrupt took the CPU here (the log's panic: softlockup: hung tasks; "
            "it keeps no soft lockup report): nothing faulted"
        )
    return INTERRUPTED_BY.get(report.kind)


def log_as_text(log: tuple[LogRecord, ...]) -> str:
    """The dump's log in the format the dmesg engine reads (``[seconds] text`` per line)."""
    return "".join(f"{r.stamp()} {r.text.replace(chr(10), ' ')}\n" for r in log)


def crash_report(reports: list[KernelReport]) -> KernelReport | None:
    """The report of the crash among those the dump's log holds.

    The first kernel bug report wins over the panic (a WARNING that panic_on_warn turned into a
    panic is the crash, the panic only its consequence), but not a WARNING the kernel survived:
    one whose report holds no panic and that another report follows (a preemption imbalance at
    insmod, then the soft lockup that took the dump) is passed over.  Else the panic itself (an
    OOM or a hung task the kernel chose to panic on); else the first report.
    """
    bugs = [r for r in reports if not r.is_event and r.kind is not ReportKind.PANIC]
    while len(bugs) > 1 and bugs[0].kind is ReportKind.WARNING and not bugs[0].panicked:
        bugs = bugs[1:]
    # Any report the kernel survived (a "scheduling while atomic" at insmod, say) is passed over when a
    # later one of another kind panicked: that one took the dump.  Reports of the panic's own kind stay
    # (khungtaskd reports every hung task, then panics after the last: the first names the hang).
    while len(bugs) > 1 and not bugs[0].panicked and any(r.panicked and r.kind != bugs[0].kind for r in bugs[1:]):
        bugs = bugs[1:]
    if bugs:
        return bugs[0]
    panics = [r for r in reports if r.kind is ReportKind.PANIC]
    return panics[0] if panics else (reports[0] if reports else None)


def _title(snap: CrashSnapshot, report: KernelReport | None) -> str:
    slab = slab_title(snap)
    if slab is not None:  # the dump shows a double free or a use-after-free: say so, as syzbot would
        return slab
    # A soft lockup keeps the report's title, syzbot's rule as `kforensic dmesg` applies it (the frame above the
    # dispatch point: kthread, the syscall entry; detectors/dmesg/frames.py stall_frame), whether or not the
    # dump shows the loop: one rule, so vmcore, dmesg and report name one stall alike.  Where the CPU spins
    # (kf_poll_ready's loop, kf_hw_read_status's spin_lock) is the lockup findings' to say.
    if report is not None:
        return report.title
    frame = crash_frame(snap.backtrace)
    head = snap.panic_message.split("\n", 1)[0] if isinstance(snap.panic_message, str) else "kernel crash"
    if frame is not None and not isinstance(frame.function, NotAvailable):
        return f"{head} in {frame.function}"
    return head


def _log_findings(
    snap: CrashSnapshot, reports: list[KernelReport], crash: KernelReport | None, beside: LogBeside | None
) -> tuple[list[Evidence], list[Finding]]:
    """Evidence of the crash report in the logs, and findings of the log's other reports."""
    crash_evidence: list[Evidence] = []
    others: list[Finding] = []
    for group in group_reports(reports):
        finding = group_finding(log_source(snap.dump_path), group, down=True)  # a dump's log: the machine is down
        if crash is not None and group.first.signature == crash.signature:
            crash_evidence += finding.evidence[:1]
        else:
            others.append(finding)  # judged as `kforensic dmesg` judges it (forensics/types/dmesg.py group_judgement)
    if beside is not None and crash is not None:
        path, beside_reports = beside
        same = [r for r in beside_reports if r.signature == crash.signature]
        if same:
            crash_evidence += group_finding(path, group_reports(same)[0], down=True).evidence[:2]
    return crash_evidence, others


#: A kernel log file saved beside the dump (its path and its reports).
LogBeside = tuple[str, list[KernelReport]]


def analyse_snapshot(
    snap: CrashSnapshot, beside: LogBeside | None = None
) -> tuple[VmcoreAnalysis, FaultAnalysis | NotAvailable, list[KernelReport]]:
    """Findings and hypotheses from a snapshot, with the fault analysis and the log's reports.

    ``beside`` is the kernel log saved next to the dump, already triaged: the
    crash's report in it is cited too, so the evidence can be grepped in a file.
    """
    reports = scan_text(log_as_text(snap.log)) if snap.log else []
    report = crash_report(reports)
    fault: FaultAnalysis | NotAvailable
    if isinstance(snap.code, NotAvailable):  # the reason as it is (str() would say "not available:" twice)
        fault = snap.code
    elif isinstance(snap.registers, NotAvailable):
        fault = snap.registers
    else:
        fault = analyse_fault(
            snap.code,
            snap.registers,
            snap.variables,
            snap.layouts,
            fault_address_from_log(snap.log),
            no_address=no_fault_address(snap.log),
            interrupted=interrupted_by(report),
        )
    crash_evidence, log_findings = _log_findings(snap, reports, report, beside)
    crash = crash_finding(snap, _title(snap, report), fault, report)
    findings = [replace(crash, evidence=crash.evidence + tuple(crash_evidence))]
    if not isinstance(fault, NotAvailable):
        null = null_field_finding(snap, fault)
        if null is not None:
            findings.append(null)
    findings += why_findings(snap)
    findings += blocked_task_findings(snap)
    findings += held_lock_findings(snap, reports)
    findings += outsized_cache_findings(snap)
    findings += module_findings(snap, snap.backtrace)
    findings += log_findings
    # One event's harm counted once: the hung tasks and the crash a lock cycle or a spinlock brought on link to it.
    findings = link_consequences(findings)
    # Steps a session on this dump runs: drgn's where the crash the follow-ups are checked with opens no such kernel.
    findings = [finding_on_dump(snap, f) for f in findings]
    return (
        VmcoreAnalysis(
            tuple(findings),
            # A hypothesis's own step (the deliberate crash's ``crash> log``) too, not only those read from a finding.
            tuple(replace(h, next_command=on_dump(snap, h.next_command)) for h in rank_hypotheses(tuple(findings))),
            crash_frame(snap.backtrace),
            culprit_frame(snap.backtrace, crash_frame(snap.backtrace)),
        ),
        fault,
        reports,
    )
