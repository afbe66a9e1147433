"""``kforensic report``: every input through its own pipeline, merged, correlated, ranked: the incident story."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from forensics import __version__
from forensics.errors import InputError
from forensics.model import Incident
from forensics.pipelines.sources import SourceAnalysis
from forensics.report.story import IncidentStory


def load_findings_file(path: Path) -> Incident:
    """Read a findings file written by any kforensic command with ``--format json``."""
    from collectors.inputs import open_input
    from forensics.serialize import incident_from_dict

    with open_input(str(path)) as tracked:
        data = b"".join(tracked.read_chunks())
        record = tracked.record()
    try:
        doc = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(
            f"{path}: not a JSON document ({exc})", hint="give files written by kforensic ... --format json"
        ) from None
    except RecursionError:
        raise InputError(
            f"{path}: JSON nested too deeply to be a kforensic findings file",
            hint="give files written by kforensic ... --format json",
        ) from None
    incident = incident_from_dict(doc, str(path))
    # The findings file itself is an input of the merged report.
    return replace(incident, sources=(*incident.sources, record))


#: The title of a command's own ranked hypotheses in its document (forensics/report/vmcore.py, dmesg.py).
HYPOTHESES = "Hypotheses"


def build_story(parts: list[SourceAnalysis], loaded: list[Incident], command: str) -> IncidentStory:
    """The story of the analysed inputs and the findings files: merged, correlated, timed and ranked.

    ``command`` is the command line that reproduces the report (last of the story's commands).
    """
    from detectors.incident.correlate import Correlation, correlate, other_hosts
    from detectors.incident.hypotheses import plain_summary, rank_hypotheses
    from detectors.incident.timeline import build_timeline
    from forensics.report.document import Section
    from forensics.report.story import host_label

    incidents = [p.incident for p in parts] + loaded
    merged = Incident.merge(incidents, tool_version=__version__)
    findings, correlations = correlate(merged.findings)
    elsewhere = other_hosts(tuple(incidents))  # another host is a contradiction, like another boot
    findings += tuple(elsewhere)
    correlations += tuple(Correlation("contradiction", f.id, (f.id,), f.title, contradiction=True) for f in elsewhere)
    incident = replace(merged, findings=findings)
    return IncidentStory(
        incident=incident,
        summary=plain_summary(incident.sorted_findings(), host_label(incident)),
        timeline=build_timeline(incident.sorted_findings(), incident.boot_time),
        correlations=correlations,
        hypotheses=rank_hypotheses(incident.sorted_findings()),
        # Each hypothesis once: the report ranks every input's hypotheses together, so an input's own
        # ranking (kforensic vmcore's, dmesg's) is left out of its details.
        sections=tuple(
            Section(
                p.title, tuple(b for b in p.details.blocks if not (isinstance(b, Section) and b.title == HYPOTHESES))
            )
            for p in parts
        ),
        plots=tuple(plot for p in parts for plot in p.plots),
        commands=(*(p.command for p in parts), command),
    )
