"""``kforensic dmesg`` rendered: the reports table and the ``kforensic.dmesg/1`` document."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from forensics import __version__
from forensics.model import Incident
from forensics.report import OutputFormat
from forensics.report.document import Block, Section, Table, blocks_markdown
from forensics.types.results import SourceResult

if TYPE_CHECKING:
    pass


SCHEMA = "kforensic.dmesg/1"


def to_document(results: list[SourceResult], incident: Incident) -> dict[str, Any]:
    """The ``kforensic.dmesg/1`` JSON document."""
    from detectors.dmesg.findings import group_to_dict, report_to_dict
    from forensics.serialize import incident_to_dict

    return {
        "schema": SCHEMA,
        "tool_version": __version__,
        "sources": [
            {
                "path": r.name,
                "lines": r.lines,
                "reports": [report_to_dict(x) for x in r.reports],
                "events": [report_to_dict(x) for x in r.events],
                "groups": [group_to_dict(g) for g in r.groups],
            }
            for r in results
        ],
        "incident": incident_to_dict(incident),
    }


def _time(value: object) -> str:
    return f"{value:.6f}" if isinstance(value, float) else "-"


def _rows(results: list[SourceResult]) -> list[list[str]]:
    rows = []
    for r in results:
        for g in r.groups:
            first = g.first
            rows.append(
                [
                    r.name,
                    f"{first.start_line}-{first.end_line}",
                    _time(first.start_time),
                    first.severity.value,
                    first.title + (" [corrupted]" if first.corrupted else ""),
                    str(g.count),
                ]
            )
    return rows


_HEADER = ["source", "lines", "time", "severity", "title", "count"]


def dmesg_sections(results: list[SourceResult]) -> tuple[Block, ...]:
    """The reports of every input as a document section (what ``report`` nests)."""
    rows = tuple(tuple(r) for r in _rows(results))
    empty = ("(none)", *([""] * (len(_HEADER) - 1)))
    return (Section("Kernel reports", (Table(tuple(_HEADER), rows, empty),)),)


def render_table(results: list[SourceResult], fmt: OutputFormat) -> str:
    """The reports of every input as a terminal or markdown table."""
    rows = _rows(results)
    if fmt is OutputFormat.MD:
        return blocks_markdown(dmesg_sections(results), 2) + "\n\n"
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(_HEADER)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(_HEADER, widths, strict=True))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    if not rows:
        lines.append("no kernel reports found")
    return "\n".join(lines) + "\n\n"
