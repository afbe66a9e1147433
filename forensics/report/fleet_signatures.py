"""``kforensic dmesg --signatures`` rendered: the fleet table and the unreadable logs; kforensic.dmesg-signatures/1."""

from __future__ import annotations

import json
from typing import Any

from forensics import __version__
from forensics.report.formats import Destination
from forensics.types.fleet import SIGNATURES_SCHEMA as SCHEMA
from forensics.types.fleet import FleetGroup, HostGroup, SignatureRun


def _seen(entry: tuple[Any, ...]) -> dict[str, Any]:
    _, host, g = entry
    return {"host": host, "line": g.first_line, "time": g.first_time, "wall": g.first_wall}


def _last_seen(entry: tuple[Any, ...]) -> dict[str, Any]:
    _, host, g = entry
    return {"host": host, "line": g.last_line, "time": g.last_time, "wall": g.last_wall}


def group_to_dict(g: FleetGroup) -> dict[str, Any]:
    """One fleet group as JSON."""
    from forensics.serialize import finding_to_dict

    example: HostGroup = g.first[2]
    return {
        "signature": g.signature,
        "title": g.title,
        "frame": g.frame,
        "type": g.kind,
        "severity": g.severity,
        "count": g.count,
        "hosts": len(g.hosts),
        "host_names": sorted(g.hosts),
        "kernels": sorted(g.kernels),
        "first_seen": _seen(g.first),
        "last_seen": _last_seen(g.last),
        "example": {"host": g.first[1], "finding": finding_to_dict(example.finding)},
    }


def to_document(run: SignatureRun) -> dict[str, Any]:
    """The ``kforensic.dmesg-signatures/1`` document."""
    from forensics.serialize import incident_to_dict

    failed = [h for h in run.hosts if h.error]
    return {
        "schema": SCHEMA,
        "tool_version": __version__,
        "engine": {"kind": run.engine.kind, "workers": run.engine.workers, "threads": run.engine.threads},
        "seconds": round(run.seconds, 3),
        "hosts": len(run.hosts),
        "hosts_read": len(run.hosts) - len(failed),
        "failed": [{"host": h.host, "path": h.path, "error": h.error} for h in failed],
        "groups": [group_to_dict(g) for g in run.groups],
        "incident": incident_to_dict(run.incident),
    }


def _when(entry: tuple[Any, ...], last: bool) -> str:
    _, host, g = entry
    wall = g.last_wall if last else g.first_wall
    if wall is not None:
        from forensics.units import iso_utc

        return iso_utc(wall) + f" {host}"
    return f"{host}:{g.last_line if last else g.first_line}"


_HEADERS = ("hosts", "reports", "severity", "kernels", "first seen", "last seen", "title")


def render_text(run: SignatureRun, markdown: bool = False) -> str:
    """The fleet table, then failed hosts."""
    failed = [h for h in run.hosts if h.error]
    rows = [
        (
            str(len(g.hosts)),
            str(g.count),
            g.severity,
            ", ".join(sorted(g.kernels)) or "-",
            _when(g.first, False),
            _when(g.last, True),
            g.title + (f" [{g.frame}]" if g.frame and g.frame not in g.title else ""),
        )
        for g in run.groups
    ]
    head = (
        f"{len(run.hosts)} host logs ({len(failed)} unreadable), {len(run.groups)} signatures;"
        f" {run.engine.kind} ({run.engine.workers} workers, {run.engine.threads} threads), {run.seconds:.2f} s"
    )
    lines = ["# kforensic dmesg --signatures", "", head, ""] if markdown else [head, ""]
    if markdown:
        lines += ["| " + " | ".join(_HEADERS) + " |", "|" + "---|" * len(_HEADERS)]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    elif rows:
        widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(_HEADERS)]
        lines.append("  ".join(h.ljust(w) for h, w in zip(_HEADERS, widths, strict=True)).rstrip())
        lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    if not rows:
        lines.append("no kernel reports found")
    if failed:
        lines += ["", "## Unreadable logs" if markdown else "unreadable logs:"]
        lines += [("- " if markdown else "  ") + f"{h.host}: {h.error}" for h in failed]
    return "\n".join(lines) + "\n"


class SignaturesRenderer:
    """``kforensic dmesg --signatures``: the fleet table and the unreadable logs; or kforensic.dmesg-signatures/1."""

    def text(self, result: SignatureRun, to: Destination) -> str:
        return render_text(result)

    def markdown(self, result: SignatureRun, to: Destination) -> str:
        return render_text(result, markdown=True)

    def json(self, result: SignatureRun, to: Destination) -> str:
        return json.dumps(to_document(result), indent=1, ensure_ascii=False) + "\n"

    def html(self, result: SignatureRun, to: Destination) -> str:
        from forensics.report.html import markdown_page

        return markdown_page("kforensic fleet signatures", render_text(result, markdown=True))
