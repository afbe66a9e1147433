"""Small builders of model records for the foundation's tests (real files, no mocks)."""

from __future__ import annotations

from pathlib import Path

from forensics.model import (
    Clock,
    Evidence,
    Fact,
    Finding,
    FindingKind,
    Incident,
    Locator,
    LocatorKind,
    NotAvailable,
    Severity,
    SourceRecord,
    Timestamp,
    TimeWindow,
    finding_id,
)

OOPS_LOG = """\
[    0.000000] Linux version 6.1.0-kf (builder@host) (gcc 12.2.0) #1 SMP PREEMPT_DYNAMIC
[   12.345678] BUG: kernel NULL pointer dereference, address: 0000000000000018
[   12.345690] #PF: supervisor read access in kernel mode
[   12.345701] RIP: 0010:kf_null_member_read+0x1a/0x40 [kf_buggy]
[   12.345712] Call Trace:
[   12.345720]  <TASK>
[   12.345731]  kf_trigger_write+0x55/0x90 [kf_buggy]
[   12.345742]  vfs_write+0xc4/0x3c0
"""


def write_log(directory: Path, name: str = "kern.log", text: str = OOPS_LOG) -> Path:
    """Write a small kernel log the tests own and return its path."""
    path = directory / name
    path.write_text(text)
    return path


def line_evidence(path: Path, line: int, text: str, seconds: float | None = None) -> Evidence:
    """Evidence citing one line of ``path``."""
    ts = None if seconds is None else Timestamp(seconds, Clock.MONOTONIC)
    return Evidence(str(path), Locator(LocatorKind.LINE, line), text, timestamp=ts, cpu=1)


def null_deref_finding(evidence: tuple[Evidence, ...], severity: Severity = Severity.HIGH) -> Finding:
    """A finding as the dmesg triage would report the log above."""
    title = "BUG: unable to handle kernel NULL pointer dereference in kf_null_member_read"
    return Finding(
        id=finding_id("oops", title),
        kind=FindingKind.DMESG_OOPS,
        title=title,
        severity=severity,
        confidence=0.9,
        confidence_reason="header and RIP line agree",
        summary="The kernel read through a NULL pointer in kf_null_member_read.",
        evidence=evidence,
        next_steps=("kforensic vmcore /var/crash/latest",),
        facts=(Fact("fault address", "0x18"),),
        detector="test",
    )


def incident_of(findings: tuple[Finding, ...], host: str = "host1") -> Incident:
    """An incident holding ``findings`` from one source."""
    return Incident(
        host=host,
        kernel_release="6.1.0-kf",
        window=TimeWindow(Timestamp(0.0), Timestamp(12.345742)),
        sources=(SourceRecord("kern.log", 100, NotAvailable("test"), 0.01),),
        findings=findings,
        tool_version="test",
    )
