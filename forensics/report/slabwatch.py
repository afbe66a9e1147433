"""``slab-watch`` / ``slab-import`` / ``slab-export`` rendered: the run report and the Prometheus text."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from forensics.model import Clock, NotAvailable, Timestamp
from forensics.report.formats import Destination, IncidentRenderer
from forensics.types.results import RunReport, StoreExport
from forensics.units import human_bytes

_SLAB_METRICS = (
    # (node_exporter name, help, column of the slab row)
    ("node_slabinfo_active_objects", "The number of objects that are currently active (i.e., in use).", 4),
    ("node_slabinfo_objects", "The total number of allocated objects (i.e., objects that are both in use and not).", 5),
    ("node_slabinfo_object_size_bytes", "The size of objects in this slab, in bytes.", 6),
    ("node_slabinfo_objects_per_slab", "The number of objects stored in each slab.", 7),
    ("node_slabinfo_pages_per_slab", "The number of pages allocated for each slab.", 8),
)


def _when(value: float | NotAvailable) -> str:
    return str(Timestamp(value, Clock.WALL)) if isinstance(value, float) else str(value)


def report_to_dict(report: RunReport, schema: str) -> dict[str, Any]:
    """The ``kforensic.slab-watch/1`` (or slab-import) JSON document."""
    from forensics.serialize import incident_to_dict

    s = report.summary
    return {
        "schema": schema,
        "store": str(report.store),
        "run_id": report.run_id,
        "analysis": report.analysis,
        "summary": {
            "samples": s.samples,
            "caches": s.caches,
            "boots": s.boots,
            "first_wall": s.first_wall if isinstance(s.first_wall, float) else None,
            "last_wall": s.last_wall if isinstance(s.last_wall, float) else None,
            "kmsg_records": s.kmsg_records,
            "kmsg_missing": s.kmsg_missing,
            "top_growers": [
                {
                    "cache": g.name,
                    "first_active_bytes": g.first_active_bytes,
                    "last_active_bytes": g.last_active_bytes,
                    "first_active_objs": g.first_active_objs,
                    "last_active_objs": g.last_active_objs,
                }
                for g in s.top_growers
            ],
        },
        "incident": incident_to_dict(report.incident),
    }


#: What the top growers measure (``StoreSummary.top_growers``), as slabtop names its columns.
GROWERS_MEASURE = "objects in use: active_objs × objsize, slabtop's ACTIVE × OBJ SIZE"


def render_report(report: RunReport, md: bool) -> str:
    """The report as text or markdown."""
    s = report.summary
    lines = ["# slab-watch summary", ""] if md else ["slab-watch summary"]
    bullet = "- " if md else "  "
    lines += [
        f"{bullet}store: {report.store}" + (f" (run {report.run_id})" if report.run_id is not None else ""),
        f"{bullet}samples: {s.samples} from {_when(s.first_wall)} to {_when(s.last_wall)}",
        f"{bullet}caches: {s.caches}; boots: {s.boots}"
        + ("  (a reboot splits the series: growth is measured within the last boot)" if s.boots > 1 else ""),
        f"{bullet}kernel log records: {s.kmsg_records}; never read (sequence gaps): {s.kmsg_missing}",
    ]
    # Named: the leak findings below measure slab memory (num_objs × objsize, window medians), another figure.
    head = f"top growers ({GROWERS_MEASURE}, first to last sample of the last boot)"
    lines += ["", f"## T{head[1:]}", ""] if md else [f"{head}:"]
    if not s.caches:  # no cache read is no cache growing: whether one grew is unknown
        lines.append(f"{bullet}unknown: no sample read a slab cache (/proc/slabinfo was not read)")
    elif not s.top_growers:
        lines.append(f"{bullet}none: no cache grew between the first and last sample")
    for g in s.top_growers:
        lines.append(
            f"{bullet}{g.name}: {human_bytes(g.first_active_bytes)} -> {human_bytes(g.last_active_bytes)}"
            f" ({'+' if g.delta_bytes >= 0 else ''}{human_bytes(g.delta_bytes)};"
            f" objects in use {g.first_active_objs} -> {g.last_active_objs})"
        )
    lines += ["", report.analysis]
    if report.incident.findings:
        incident = IncidentRenderer(color=False)
        to = Destination()
        lines += ["", incident.markdown(report.incident, to) if md else incident.text(report.incident, to)]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class RunReportRenderer:
    """``kforensic slab-watch`` / ``slab-import``: the run's summary, then the leak findings; or ``schema`` JSON."""

    schema: str

    def text(self, result: RunReport, to: Destination) -> str:
        return render_report(result, False)

    def markdown(self, result: RunReport, to: Destination) -> str:
        return render_report(result, True)

    def json(self, result: RunReport, to: Destination) -> str:
        return json.dumps(report_to_dict(result, self.schema), indent=2) + "\n"

    def html(self, result: RunReport, to: Destination) -> str:
        from forensics.report.html import markdown_page

        return markdown_page("kforensic slab-watch summary", render_report(result, True))


def _prom_label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _meminfo_metric(name: str, unit: str) -> str:
    # node_exporter: "Active(anon)" -> "Active_anon"; sizes in kB become *_bytes.
    key = re.sub(r"\((.*)\)", r"_\1", name)
    return f"node_memory_{key}_bytes" if unit == "kB" else f"node_memory_{key}"


def prometheus_text(export: StoreExport) -> str:
    """node_exporter-compatible text exposition of the last sample (or every sample, with timestamps)."""
    stamp = {s.id: f" {int(s.wall * 1000)}" if export.timestamps else "" for s in export.samples}
    out: list[str] = []
    rows = export.slab_rows
    for metric, text, column in _SLAB_METRICS:
        out += [f"# HELP {metric} {text}", f"# TYPE {metric} gauge"]
        out += [f'{metric}{{slab="{_prom_label(str(r[3]))}"}} {r[column]}{stamp[int(str(r[0]))]}' for r in rows]
    for name, unit, points in export.meminfo:
        metric = _meminfo_metric(name, unit)
        if not points:
            continue
        out += [f"# HELP {metric} Memory information field {name}.", f"# TYPE {metric} gauge"]
        scale = 1024 if unit == "kB" else 1
        out += [f"{metric} {p.value * scale}{stamp[p.sample_id]}" for p in points]
    return "\n".join(out) + "\n"
