"""From reports to findings: grouping repeats, evidence that cites the log, and the JSON form.

Identical reports (same signature: title and guilty frame) repeated in a log
are grouped into one :class:`ReportGroup` with a count and first/last time.
Each group becomes one :class:`~forensics.model.Finding` whose evidence is the
header line of the first occurrence (with its frame line when there is one),
the headers of an even sample of at most :data:`SAMPLE_REPORTS` repeats and
the header of the last occurrence, cited verbatim by line number.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from detectors.dmesg.model import KernelReport
from forensics.model import (
    Clock,
    Evidence,
    Fact,
    Finding,
    FindingKind,
    Locator,
    LocatorKind,
    NotAvailable,
    Severity,
    Timestamp,
    finding_id,
)
from forensics.serialize import json_value

DETECTOR = "dmesg"
_EXCERPT_MAX = 400

_NEXT_STEPS: dict[str, tuple[str, ...]] = {
    "hang": ("Look at the locks held and the task it waits for (echo w > /proc/sysrq-trigger).",),
    "rcu-stall": ("Find the looping code in the stall's stack; check for long loops without cond_resched().",),
    "oom": ("Check which task grew (Tasks state table) and the memory limits (cgroup, overcommit).",),
    "alloc-failure": ("Check memory fragmentation (/proc/buddyinfo) and the caller's GFP flags and order.",),
    "lockdep": ("Read both lock chains in the report; fix the lock order or the IRQ safety of the lock.",),
    "hardware": ("Run the platform's hardware diagnostics; decode the MCE banks with rasdaemon or mcelog.",),
}
_DEFAULT_STEPS = (
    "Search the title on the kernel mailing lists and syzbot; check the guilty function's recent changes.",
)


#: Occurrences of one signature kept between the first and the last (spread evenly over the log).
SAMPLE_REPORTS = 4


@dataclass(frozen=True)
class ReportGroup:
    """Reports of one signature in one log: the first, how many, the last, and an even sample between.

    ``sample`` holds at most :data:`SAMPLE_REPORTS` occurrences other than the
    first and the last, in log order: a log that repeats a crash a million times
    keeps a bounded number of reports (memory flat in log size) and still cites
    occurrences from all over the log.
    """

    first: KernelReport
    last: KernelReport
    count: int
    sample: tuple[KernelReport, ...] = ()

    @property
    def kept(self) -> tuple[KernelReport, ...]:
        """The occurrences kept, in log order: first, sample, last (once each)."""
        return (self.first, *self.sample, self.last) if self.count > 1 else (self.first,)


class _Acc:
    """One signature's occurrences while reading: first, last and a sample thinned as the count grows."""

    __slots__ = ("count", "first", "last", "sample", "stride")

    def __init__(self, report: KernelReport) -> None:
        self.first = self.last = report
        self.count = 1
        self.sample: list[tuple[int, KernelReport]] = []  # (occurrence index, report)
        self.stride = 1

    def add(self, report: KernelReport) -> None:
        # The previous last becomes a sample candidate: occurrence ``count - 1`` (0-based).
        index = self.count - 1
        if index and index % self.stride == 0:
            self.sample.append((index, self.last))
            if len(self.sample) > SAMPLE_REPORTS:
                # Keep every other one and take half as many from now on: the sample stays even.
                self.stride *= 2
                self.sample = [(i, r) for i, r in self.sample if i % self.stride == 0]
        self.last = report
        self.count += 1

    def group(self) -> ReportGroup:
        return ReportGroup(self.first, self.last, self.count, tuple(r for _, r in self.sample))


class ReportGrouper:
    """Groups reports by signature as they come (memory bounded per signature), in order of first appearance.

    It also keeps what an incident needs of every report, not only of the kept
    ones: the kernel releases named, the first and last report times and the
    boot time estimates (8 bytes each, only from lines with a dated wall time).
    """

    def __init__(self) -> None:
        self._groups: dict[str, _Acc] = {}
        self.releases: set[str] = set()
        self.first_time: float | None = None
        self.last_time: float | None = None
        self.boot_times = array("d")

    def add(self, report: KernelReport) -> None:
        """Count one more report."""
        if isinstance(report.kernel_release, str):
            self.releases.add(report.kernel_release)
        t = report.start_time
        if isinstance(t, float):
            self.first_time = t if self.first_time is None else min(self.first_time, t)
            self.last_time = t if self.last_time is None else max(self.last_time, t)
        if report.boot_time is not None:
            self.boot_times.append(report.boot_time)
        acc = self._groups.get(report.signature)
        if acc is None:
            self._groups[report.signature] = _Acc(report)
        else:
            acc.add(report)

    def groups(self) -> list[ReportGroup]:
        """The groups so far."""
        return [acc.group() for acc in self._groups.values()]


def group_reports(reports: Iterable[KernelReport]) -> list[ReportGroup]:
    """Group reports by signature, in order of first appearance."""
    grouper = ReportGrouper()
    for report in reports:
        grouper.add(report)
    return grouper.groups()


def _excerpt(text: str) -> str:
    # A prefix of the line is still found verbatim in it; very long lines are cut.
    return text[:_EXCERPT_MAX]


def _when(report: KernelReport) -> Timestamp | None:
    t = report.start_time
    return None if isinstance(t, NotAvailable) else Timestamp(t, Clock.MONOTONIC)


def _evidence(source: str, report: KernelReport) -> list[Evidence]:
    cpu = report.cpu if isinstance(report.cpu, int) else None
    items = [
        Evidence(
            source=source,
            locator=Locator(LocatorKind.LINE, report.start_line, report.end_line, name="report"),
            excerpt=_excerpt(report.header),
            timestamp=_when(report),
            cpu=cpu,
        )
    ]
    frame = report.frame
    if isinstance(frame, str):
        for number, text in report.lines:
            if number != report.start_line and (f"{frame}+0x" in text or f" {frame}." in text):
                where = Locator(LocatorKind.LINE, number, name="guilty frame")
                items.append(Evidence(source, where, _excerpt(text), cpu=cpu))
                break
    return items


def _occurrence(source: str, report: KernelReport, name: str) -> Evidence:
    """The header line of one repeat of a report."""
    return Evidence(
        source,
        Locator(LocatorKind.LINE, report.start_line, name=name),
        _excerpt(report.header),
        timestamp=_when(report),
        cpu=report.cpu if isinstance(report.cpu, int) else None,
    )


def group_finding(source: str, group: ReportGroup) -> Finding:
    """The finding of one report group, with evidence from the log."""
    first, last = group.first, group.last
    severity = Severity.CRITICAL if first.panicked or last.panicked else first.severity
    evidence = _evidence(source, first)
    if group.count > 1:
        evidence += [_occurrence(source, r, f"one of {group.count}") for r in group.sample]
        evidence.append(_occurrence(source, last, f"last of {group.count}"))
    facts = [Fact("type", first.kind), Fact("occurrences", str(group.count))]
    for name, value in (
        ("guilty frame", first.frame),
        ("cpu", first.cpu),
        ("pid", first.pid),
        ("comm", first.comm),
        ("kernel", first.kernel_release),
        ("hardware", first.hardware),
        ("taint", first.taint),
    ):
        if not isinstance(value, NotAvailable):
            facts.append(Fact(name, str(value)))
    facts += [Fact("taint flag", t) for t in first.taint_flags]
    facts += [Fact(k, v) for k, v in first.details]
    if first.corrupted_reason:
        facts.append(Fact("corrupted", first.corrupted_reason))
    where = f"line {first.start_line}" + (
        f", {group.count} times up to line {last.start_line}" if group.count > 1 else ""
    )
    if len(group.kept) < group.count:
        where += f"; cited: {', '.join(str(r.start_line) for r in group.kept)}"
    confidence = 0.5 if first.corrupted else 0.9
    return Finding(
        id=finding_id(DETECTOR, first.kind, first.title),
        kind=FindingKind(f"dmesg.{first.kind}"),
        title=first.title,
        severity=severity,
        confidence=confidence,
        confidence_reason=(
            f"the report is damaged: {first.corrupted_reason}"
            if first.corrupted
            else "a complete report with its header"
        ),
        summary=f"{first.title} ({where})"
        + (", then the kernel panicked" if severity is Severity.CRITICAL and first.panicked else ""),
        evidence=tuple(evidence),
        next_steps=_NEXT_STEPS.get(first.kind, _DEFAULT_STEPS),
        facts=tuple(facts),
        detector=DETECTOR,
    )


def report_to_dict(report: KernelReport) -> dict[str, Any]:
    """One report as JSON (the ``reports`` items of ``kforensic.dmesg/1``)."""
    return {
        "title": report.title,
        "type": report.kind,
        "severity": report.severity.value,
        "corrupted": report.corrupted,
        "corrupted_reason": report.corrupted_reason,
        "frame": json_value(report.frame),
        "start_line": report.start_line,
        "end_line": report.end_line,
        "start_time": json_value(report.start_time),
        "end_time": json_value(report.end_time),
        "cpu": json_value(report.cpu),
        "pid": json_value(report.pid),
        "comm": json_value(report.comm),
        "taint": json_value(report.taint),
        "taint_flags": list(report.taint_flags),
        "kernel_release": json_value(report.kernel_release),
        "hardware": json_value(report.hardware),
        "panicked": report.panicked,
        "context": report.context,
        "rule": report.rule,
        "signature": report.signature,
        "details": dict(report.details),
        "call_trace": [
            {
                "function": f.function,
                "symbol": f.symbol,
                "offset": f.offset,
                "size": f.size,
                "module": f.module,
                "reliable": f.reliable,
                "stack": f.stack,
                "line": f.line,
            }
            for f in report.trace
        ],
        "excerpt": "\n".join(text for _, text in report.lines),
    }


def group_to_dict(group: ReportGroup) -> dict[str, Any]:
    """One group of identical reports as JSON."""
    return {
        "signature": group.first.signature,
        "title": group.first.title,
        "count": group.count,
        "first_line": group.first.start_line,
        "last_line": group.last.start_line,
        "first_time": json_value(group.first.start_time),
        "last_time": json_value(group.last.start_time),
        # The occurrences listed in ``reports`` (first, an even sample, last); the others are only counted.
        "listed_lines": [r.start_line for r in group.kept],
    }
