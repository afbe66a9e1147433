"""``kforensic leaks --prometheus`` rendered: the fleet table, gaps and resets, the incident; or JSON
(kforensic.fleet-leaks/1)."""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

from forensics import __version__
from forensics.report.formats import Destination
from forensics.types.fleet import FLEET_LEAKS_SCHEMA as SCHEMA
from forensics.types.fleet import FleetLeaks, FleetRow
from forensics.types.prometheus import gap_notes
from forensics.units import iso_utc as iso

_HEADERS = ("instance", "series", "grade", "KB/h", "since", "confidence", "evidence")


def _cells(r: FleetRow) -> tuple[str, ...]:
    evidence = f"{r.query} @ {iso(r.first_sample)}..{iso(r.last_sample)}"
    conf = "-" if math.isnan(r.confidence) else f"{r.confidence:.2f}"
    return (r.instance, r.series, r.grade, f"{r.rate / 1024:,.0f}", iso(r.since), conf, evidence)


def _notes(result: FleetLeaks) -> list[str]:
    out = []
    for res in result.results:
        s = res.read
        if s.repeats:
            out.append(
                f"{s.instance}: {s.repeats:,} query steps showed a sample already read (a late or missed scrape, or"
                " an exporter's reading scraped again): not counted as samples"
            )
        out += [f"{s.instance}: {note}" for note in gap_notes(s.gaps)]
        for r in s.resets:
            out.append(f"{s.instance}: {r.what} in {r.series} at {iso(r.at)}; the series is judged in parts")
    return out


def summary_line(result: FleetLeaks) -> str:
    """How much was read."""
    f = result.fetched
    points = sum(res.read.points for res in result.results)
    return (
        f"{len(result.results)} instance(s) from {result.url}"
        + (f" matching {{{result.match}}}" if result.match else "")
        + f", {iso(f.start)} to {iso(f.end)} at a {f.step:g} s step: {points:,} slab points,"
        f" {len(f.queries)} range queries per instance, {f.requests} requests;"
        f" {len(result.rows)} leaking or suspect series"
        + (f", {len(result.unknown)} growing, too short to call" if result.unknown else "")
        + (f" ({f.chosen})" if f.chosen else "")
    )


def render_text(result: FleetLeaks, markdown: bool = False) -> str:
    """The fleet table, notes on gaps and resets, then every finding."""
    from forensics.report.formats import Destination, IncidentRenderer

    rows = [_cells(r) for r in result.rows]
    lines = ["# kforensic leaks (fleet)", ""] if markdown else ["kforensic leaks --prometheus"]
    lines += [summary_line(result), ""]
    undecided = sum(1 for x in result.results if x.analysis.examined.undecided)
    if not rows and undecided:  # growth too brief to call is not absence (#27): said, with the lines below
        lines.append(
            f"No instance has a leaking or suspect series; {undecided} have series growing, too short to call."
        )
    elif not rows:
        lines.append("No instance has a cache or meminfo field that grows like a leak.")
    elif markdown:
        from forensics.report.markdown import md_escape

        lines += ["| " + " | ".join(_HEADERS) + " |", "|" + "---|" * len(_HEADERS)]
        lines += ["| " + " | ".join(md_escape(c) for c in row) + " |" for row in rows]
    else:
        widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(_HEADERS)]
        lines.append("  ".join(h.ljust(w) for h, w in zip(_HEADERS, widths, strict=True)).rstrip())
        lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    # Growth that cannot be called yet (too few samples, too brief): unknown, with why; never left unsaid.
    lines += [f"{r.instance} {r.series}: unknown: " + "; ".join((r.why, *r.notes)) for r in result.unknown]
    flagged = {r.instance for r in result.rows}
    # What each quiet instance's points could have shown, or that they are too few to judge.
    lines += [f"{x.read.instance}: {x.analysis.absence()}" for x in result.results if x.read.instance not in flagged]
    for row in result.rows:
        lines += [f"note: {row.instance} {row.series}: {n}" for n in row.notes]
    notes = _notes(result)
    if notes:
        lines += ["", "## Gaps and resets" if markdown else "gaps and resets:"]
        lines += [("- " if markdown else "  ") + n for n in notes]
    lines.append("")
    incident = IncidentRenderer(color=False)
    to = Destination()
    return "\n".join(lines) + "\n" + (incident.markdown if markdown else incident.text)(result.incident, to)


def _num(value: float) -> float | None:
    return None if not math.isfinite(value) else round(value, 6)


def _row(r: FleetRow) -> dict[str, Any]:
    return {
        "instance": r.instance,
        "series": r.series,
        "grade": r.grade,
        "severity": r.severity.value,
        "rate_bytes_per_hour": _num(r.rate),
        "since": r.since,
        "confidence": _num(r.confidence),
        "query": r.query,
        "first_sample": r.first_sample,
        "last_sample": r.last_sample,
        "notes": list(r.notes),
    }


def to_dict(result: FleetLeaks) -> dict[str, Any]:
    """The ``kforensic.fleet-leaks/1`` document."""
    from forensics.serialize import incident_to_dict

    f = result.fetched
    return {
        "schema": SCHEMA,
        "tool_version": __version__,
        "prometheus": result.url,
        "match": result.match,
        "window": {"start": f.start, "end": f.end, "step_seconds": f.step, "step_chosen": f.chosen or None},
        "queries": list(f.queries),
        "requests": f.requests,
        "thresholds": dataclasses.asdict(result.thresholds),
        "rows": [_row(r) for r in result.rows],
        # Growing, too short to call: unknown, with why (the verdict's reason), its gaps in notes.
        "unknown": [{**_row(r), "why": r.why} for r in result.unknown],
        "instances": [
            {
                "instance": res.read.instance,
                "metrics": res.read.family.name,
                "samples": res.analysis.samples,
                "caches_seen": res.analysis.cache_names,
                "boots": res.analysis.boots,
                "interval_seconds": res.analysis.interval_seconds
                if isinstance(res.analysis.interval_seconds, float)
                else None,
                "judgeable": res.analysis.power.judgeable,
                "power": res.analysis.absence(),
                "repeated_steps": res.read.repeats,
                "gaps": [{"start": g.start, "end": g.end, "seconds": g.seconds, "kind": g.kind} for g in res.read.gaps],
                "resets": [{"at": r.at, "series": r.series, "what": r.what} for r in res.read.resets],
            }
            for res in result.results
        ],
        "incident": incident_to_dict(result.incident),
    }


class FleetLeaksRenderer:
    """``kforensic leaks --prometheus``: the fleet table, gaps and resets, then the incident; or
    kforensic.fleet-leaks/1."""

    def text(self, result: FleetLeaks, to: Destination) -> str:
        return render_text(result)

    def markdown(self, result: FleetLeaks, to: Destination) -> str:
        return render_text(result, markdown=True)

    def json(self, result: FleetLeaks, to: Destination) -> str:
        return json.dumps(to_dict(result), indent=2, ensure_ascii=False) + "\n"

    def html(self, result: FleetLeaks, to: Destination) -> str:
        from forensics.report.html import markdown_page

        return markdown_page("kforensic fleet leaks", render_text(result, markdown=True))
