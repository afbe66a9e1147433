"""The records the dmesg engine produces: one :class:`KernelReport` per report found."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from detectors.dmesg.frames import Frame
from detectors.dmesg.lines import LogLine, parse_line
from forensics.model import NotAvailable, Severity


@dataclass(frozen=True)
class KernelReport:
    """One kernel report (oops, BUG, WARNING, sanitizer, lockdep, stall, panic, ...) in a log.

    Line numbers are 1-based lines of the input; ``excerpt`` holds the lines
    ``start_line..end_line`` as read (only the report's own CPU or task when the
    log has caller prefixes, see ``lines``).  ``signature`` identifies the bug
    (title and guilty frame), the same for repeats of one bug.
    """

    title: str
    kind: str
    severity: Severity
    rule: str
    corrupted: bool
    corrupted_reason: str | None
    frame: str | NotAvailable
    trace: tuple[Frame, ...]
    cpu: int | NotAvailable
    pid: int | NotAvailable
    comm: str | NotAvailable
    taint: str | NotAvailable
    taint_flags: tuple[str, ...]
    kernel_release: str | NotAvailable
    hardware: str | NotAvailable
    start_time: float | NotAvailable
    end_time: float | NotAvailable
    start_line: int
    end_line: int
    header: str
    lines: tuple[tuple[int, str], ...]
    context: str | None
    panicked: bool
    signature: str
    is_event: bool = False  # a resource event (OOM kill, allocation failure), not a kernel bug
    details: tuple[tuple[str, str], ...] = ()
    boot_time: float | None = None  # epoch seconds of boot, from a line with both a wall and a printk time
    # The lines the kernel printed just above the header that belong to the report (a WARN's message after
    # "cut here", a list_debug message before its BUG), as (number, text): read by detectors.dmesg.why.
    preamble: tuple[tuple[int, str], ...] = ()


_PARSED = "_parsed_lines"  # instance attribute (not a field: neither compared, copied by the memo, nor pickled)


def keep_parsed(report: KernelReport, own: Sequence[LogLine]) -> None:
    """Keep the parsed lines a report was built from, so that reading its body (why) does not parse them again."""
    object.__setattr__(report, _PARSED, tuple(own))


def parsed_lines(report: KernelReport) -> Sequence[LogLine]:
    """``report.lines`` parsed: the lines it was built from when they were kept (a repeat has its own numbers)."""
    kept: tuple[LogLine, ...] | None = report.__dict__.get(_PARSED)
    lines = report.lines
    if kept is not None and len(kept) == len(lines) and (not lines or kept[0].number == lines[0][0]):
        return kept
    return [parse_line(n, t) for n, t in lines]
