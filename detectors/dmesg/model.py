"""The records the dmesg engine produces: one :class:`KernelReport` per report found."""

from __future__ import annotations

from collections.abc import Sequence

from detectors.dmesg.lines import LogLine, parse_line
from forensics.types.dmesg import KernelReport

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
