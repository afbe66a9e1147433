"""The incident report: one story from every source, as markdown, HTML and JSON (``kforensic.report/1``)."""

from __future__ import annotations

import html
import os
from dataclasses import replace
from pathlib import Path
from typing import Any, assert_never

from forensics.model import BootTime, Finding, Incident
from forensics.report.document import Block, Document, Section, blocks_html, blocks_markdown
from forensics.report.examined import examined_lines
from forensics.report.formats import Destination, IncidentRenderer
from forensics.report.html import APART_HEADING, APART_NOTE, next_step_html, prose_html
from forensics.report.markdown import findings_markdown, inputs_markdown, md_escape, step_after_md
from forensics.serialize import finding_to_dict, incident_to_dict
from forensics.types.dmesg_result import DmesgResult
from forensics.types.incident import Lane, TimelineEvent, jump_before
from forensics.types.profile_result import ProfileResult
from forensics.types.results import (
    DumpLogResult,
    IncidentStory,
    LeaksResult,
    SourceDetails,
    VmcoreResult,
)
from forensics.types.trace_result import TraceResult
from forensics.units import iso_utc

REPORT_SCHEMA = "kforensic.report/1"

#: The title of a command's own ranked hypotheses in its document (forensics/report/vmcore.py, dmesg.py).
HYPOTHESES = "Hypotheses"


def own_incident(story: IncidentStory) -> Incident:
    """The incident without the findings of inputs set apart (another boot, host or release: ``story.apart``)."""
    if not story.apart:
        return story.incident
    return replace(story.incident, findings=tuple(f for f in story.incident.findings if f.id not in story.apart))


def apart_findings(story: IncidentStory) -> tuple[Finding, ...]:
    """The findings of inputs set apart, worst first: a lane of their own, never ranked with the incident's."""
    return tuple(f for f in story.incident.sorted_findings() if f.id in story.apart)


def incident_document(story: IncidentStory) -> dict[str, Any]:
    """The merged incident as ``kforensic.incident/1``: the crashed boot's findings ranked and counted (``problems``),
    then those of the inputs set apart, each with ``"set_apart"`` saying why, as the markdown lists them apart.

    They were ranked with the rest: 01-null-member's dump beside 10-use-after-free's console log wrote the other
    guest's "general protection fault in kf_conn_send" second of the findings, counted in "problems": 4, not 3.
    """
    doc = incident_to_dict(own_incident(story))
    why = dict(story.apart_why)
    doc["findings"] += [finding_to_dict(f) | {"set_apart": why.get(f.id, "")} for f in apart_findings(story)]
    return doc


def verdict_sentences(story: IncidentStory) -> tuple[str, ...]:
    """The opening paragraph's sentences: the summary, then the story in plain short sentences (the summary alone
    when no finding is a problem: what was examined then tells the rest, :func:`verdict_examined`), then the
    readiness of a kdump check given, in one sentence of its own (``story.readiness``)."""
    told = story.story if own_incident(story).problems() else (story.summary,)
    return (*told, story.readiness) if story.readiness else told


def verdict_examined(story: IncidentStory) -> bool:
    """Whether the verdict goes on with what each input examined, could have found and could not judge: a verdict of
    no problem rests on it (with a problem it has a section of its own)."""
    return not own_incident(story).problems()


def verdict(story: IncidentStory) -> tuple[str, ...]:
    """The verdict as terminal lines: its sentences, then what was examined, one line each."""
    examined = examined_lines(story.incident) if verdict_examined(story) else []
    return (*verdict_sentences(story), *(line.strip() for line in examined))


def details_document(details: SourceDetails) -> Document:
    """One input's details: the document its own command renders."""
    if isinstance(details, VmcoreResult):
        from forensics.report.vmcore import vmcore_document

        return vmcore_document(details)
    if isinstance(details, DumpLogResult):
        from forensics.report.dumplog import dumplog_document

        return dumplog_document(details)
    if isinstance(details, DmesgResult):
        from forensics.report.dmesg import dmesg_sections

        return Document("kforensic dmesg", dmesg_sections(list(details.sources)))
    if isinstance(details, LeaksResult):
        from forensics.report.leaks import leaks_document

        # The report shows the plots and the findings in sections of its own.
        return leaks_document(details, None, plots=False)
    if isinstance(details, TraceResult):
        from forensics.report.trace import trace_document

        return trace_document(details, 15)
    if isinstance(details, ProfileResult):
        from forensics.report.profile import profile_document

        return profile_document(details, 10)
    assert_never(details)


def nested_blocks(document: Document) -> tuple[Block, ...]:
    """An input's document as the report nests it: without the input's own ranked hypotheses.

    Each hypothesis once: the report ranks every input's hypotheses together, so an input's own ranking
    (kforensic vmcore's, dmesg's) is left out of its details.
    """
    return tuple(b for b in document.blocks if not (isinstance(b, Section) and b.title == HYPOTHESES))


def detail_sections(story: IncidentStory) -> tuple[Section, ...]:
    """Each input's document under the input's name."""
    return tuple(Section(part.title, nested_blocks(details_document(part.details))) for part in story.details)


def _boot_text(incident: Incident) -> str:
    boot = incident.boot_time
    if isinstance(boot, BootTime):
        when = iso_utc(round(boot.wall))  # rounded, as the times converted with it (forensics/types/incident.py)
        return f"{when} ±{boot.uncertainty:.1f} s ({boot.basis})"
    return str(boot)


def _link(path: Path, base: Path | None) -> str:
    """A plot's path as the page at ``base`` (a directory) links it."""
    return str(path) if base is None else os.path.relpath(path, base)


def _told_boot(story: IncidentStory) -> str:
    """How the page names the boot it tells: "the crashed boot" only when an input of it shows a crash."""
    return "the crashed boot" if story.crashed else "the boot this report tells"


def _lane_note(lane: Lane, boot: str) -> str:
    return f"Clock: {lane.label}." + (
        f" **Contradiction:** this input cannot be from {boot} ({lane.contradiction})." if lane.contradiction else ""
    )


def _timeline_markdown(story: IncidentStory) -> list[str]:
    if not story.timeline:
        return ["No input carries times.", ""]
    out = []
    for lane in story.lanes:
        out += [f"### {md_escape(lane.title)}", "", _lane_note(lane, _told_boot(story)), ""]
        out += ["| start | end | duration | what | first evidence |", "|---|---|---|---|---|"]
        rows = [e for e in story.timeline if e.lane == lane.key]
        for i, e in enumerate(rows):
            if (jump := jump_before(rows, i)) is not None:  # where the clock jumps: the rows below are on another
                out.append(f"| | | | **clock jump:** {md_escape(jump.text())} | |")
            out.append(
                f"| {md_escape(e.start_in_lane())} | {md_escape(e.end_in_lane())} | {e.duration_text()} | "
                f"{md_escape(e.title)} | `{md_escape(e.cite)}` |"
            )
        out.append("")
    return out


def examined_markdown(inc: Incident) -> list[str]:
    """What each analysis examined, could have found and could not judge, as a list: said with problems too (it
    was dropped from the markdown and HTML as soon as a finding was medium or above)."""
    lines = examined_lines(inc)
    return [*(f"- {md_escape(x.strip())}" if not x.startswith(" ") else f"  - {md_escape(x.strip())}" for x in lines),
            ""] if lines else ["Nothing recorded what was examined.", ""]  # fmt: skip


def _host_table(inc: Incident) -> list[str]:
    return ["| | |", "|---|---|", f"| Host | {md_escape(str(inc.host))} |",
            f"| Kernel | {md_escape(str(inc.kernel_release))} |", f"| Boot time | {md_escape(_boot_text(inc))} |",
            f"| Time window | {md_escape(str(inc.window))} |",  # with what it leaves out (TimeWindow.__str__)
            f"| kforensic | {md_escape(inc.tool_version)} |", ""]  # fmt: skip


def render_story_markdown(story: IncidentStory, base: Path | None = None) -> str:
    """The report as markdown (plots linked relative to the directory ``base``)."""
    inc = story.incident
    # One sentence a line: the paragraph renders as one, and reads in a terminal as a list of steps.
    out = ["# kforensic incident report", "", *verdict_sentences(story), ""]
    # What each input examined as a list under the verdict: as lines they ran into the paragraph.
    out += [*(examined_markdown(inc) if verdict_examined(story) else []), *_host_table(inc)]
    out += ["## Timeline", "", *_timeline_markdown(story)]
    out += ["## Hypotheses", ""]
    if not story.hypotheses:
        out.append("No hypothesis: the findings do not point at a cause.")
    for h in story.hypotheses:
        # A step on a dump that could not be used is not offered as if it would open: what to get first, then it.
        confirm = step_after_md(h.first, h.next_command)
        out.append(f"{h.rank}. **{md_escape(h.statement)}** — confidence {h.confidence:.2f}; confirm: {confirm}")
        out += [f"   - for: {md_escape(x)}" for x in h.supporting]
        out += [f"   - against: {md_escape(x)}" for x in h.against]
    out.append("")
    if story.correlations:
        out += ["## Correlations", ""]
        out += [("- **contradiction**: " if c.contradiction else f"- {c.rule}: ") + md_escape(c.statement)
                for c in story.correlations]  # fmt: skip
        out.append("")
    own = own_incident(story)
    findings = own.sorted_findings()
    if own.problems():  # without a problem the verdict above says it (what was examined is the "no problem")
        out += ["## Examined", "", *examined_markdown(inc)]
    out += ["## Findings by severity", ""]
    out += findings_markdown(findings) if findings else ["No findings.", ""]
    if apart := apart_findings(story):
        out += [f"## {APART_HEADING}", "", APART_NOTE, "", *findings_markdown(apart, start=len(findings) + 1)]
    if story.plots:
        out += ["## Plots", ""] + [f"![{md_escape(cap)}]({_link(path, base)})" for cap, path in story.plots] + [""]
    for section in detail_sections(story):
        details = Section(f"Details: {md_escape(section.title)}", section.blocks)
        out += [blocks_markdown((details,), 2), ""]
    out += ["## Inputs", "", *inputs_markdown(inc), ""]
    out += ["## Reproduce", "", "```sh", *story.commands, "```", ""]
    return "\n".join(out).rstrip() + "\n"


def _evidence_html(e: TimelineEvent) -> str:
    """The first evidence, its excerpt folded away (HTML ``<details>``)."""
    return (
        f"<details><summary><code>{html.escape(e.cite)}</code></summary><pre>{html.escape(e.excerpt)}</pre></details>"
    )


def _timeline_html(story: IncidentStory) -> str:
    e = html.escape
    if not story.timeline:
        return "<p>No input carries times.</p>"
    out = []
    for lane in story.lanes:
        warn = (
            f' <b class="contradiction">Contradiction: this input cannot be from {_told_boot(story)} '
            f"({e(lane.contradiction)}).</b>"
            if lane.contradiction
            else ""
        )
        evs = [ev for ev in story.timeline if ev.lane == lane.key]
        rows = "".join(
            (f'<tr class="jump"><td colspan="5"><b>Clock jump:</b> {e(jump.text())}</td></tr>'
             if (jump := jump_before(evs, i)) is not None else "")
            + f"<tr><td>{e(ev.start_in_lane())}</td><td>{e(ev.end_in_lane())}</td><td>{e(ev.duration_text())}</td>"
            f"<td>{e(ev.title)}</td><td>{_evidence_html(ev)}</td></tr>"
            for i, ev in enumerate(evs)
        )  # fmt: skip
        out.append(
            f'<h3>{e(lane.title)}</h3><p class="muted">Clock: {e(lane.label)}.{warn}</p>'
            f'<table class="timeline"><tr><th>start</th><th>end</th><th>duration</th><th>what</th>'
            f"<th>first evidence</th></tr>{rows}</table>"
        )
    return "".join(out)


def _figure_html(story: IncidentStory) -> str:
    """The incident timeline figure, embedded as a PNG (the page stays one self-contained file)."""
    if not story.timeline:
        return ""
    import base64

    from forensics.report.timeline_figure import left_out, timeline_png

    data = base64.b64encode(timeline_png(story.timeline, story.lanes)).decode()
    omitted = left_out(story.timeline, story.lanes)
    caption = (
        f"The findings as intervals, one lane per clock; {omitted} more not drawn (a lane's least severe, the "
        "latest among equals), all in the findings table"
        if omitted
        else "Every finding as an interval, one lane per clock"
    )
    return (
        f'<figure id="incident-timeline"><img src="data:image/png;base64,{data}" alt="incident timeline: '
        f"the findings on their clock's lane\"><figcaption>{caption}</figcaption></figure>"
    )


def _verdict_html(story: IncidentStory) -> str:
    """The verdict box: its sentences, then (no problem found) what each input examined, could have found and could
    not judge, as a list: in the paragraph the lines ran into one ("... sanitizers examined: slab samples ...")."""
    from forensics.report.html import examined_list_html

    said = html.escape(" ".join(verdict_sentences(story)))
    if not verdict_examined(story) or not story.incident.examined:
        return f'<p class="summary">{said}</p>'
    return f'<div class="summary"><p>{said}</p>{examined_list_html(story.incident)}</div>'


def render_story_html(story: IncidentStory, base: Path | None = None) -> str:
    """The report as one HTML page (inline CSS, no scripts; plots linked relative to ``base``).

    It opens with the verdict, the timeline figure, then the timeline table (one row per finding).
    """
    from forensics.report.html import render_html

    e = html.escape
    hyps = "".join(
        f"<li><b>{e(h.statement)}</b> — confidence {h.confidence:.2f}; confirm: "
        + (f"first {prose_html(h.first)} — then " if h.first else "")
        + next_step_html(h.next_command)
        + "".join(f"<br>for: {e(x)}" for x in h.supporting)
        + "".join(f"<br>against: {e(x)}" for x in h.against)
        + "</li>"
        for h in story.hypotheses
    )
    plots = "".join(f'<figure><img src="{e(_link(p, base))}" alt="{e(c)}"><figcaption>{e(c)}</figcaption></figure>'
                    for c, p in story.plots)  # fmt: skip
    details = "".join(
        f"<details><summary>{e(s.title)}</summary>{blocks_html(s.blocks, 3)}</details>" for s in detail_sections(story)
    )
    correlations = "".join(
        ("<li><b>contradiction</b>: " if c.contradiction else f"<li>{e(c.rule)}: ") + f"{e(c.statement)}</li>"
        for c in story.correlations
    )
    sections = [
        ("Verdict", _verdict_html(story) + _figure_html(story)),
        ("Timeline", _timeline_html(story)),
        ("Hypotheses", f"<ol>{hyps}</ol>" if hyps else "<p>No hypothesis.</p>"),
    ]
    if correlations:
        sections.append(("Correlations", f"<ul>{correlations}</ul>"))
    if plots:
        sections.append(("Plots", plots))
    if details:
        sections.append(("Details per source", details))
    sections.append(("Reproduce", f"<pre>{e(chr(10).join(story.commands))}</pre>"))
    return render_html(own_incident(story), sections, title=story.summary, apart=apart_findings(story))


def story_to_dict(story: IncidentStory, base: Path | None = None) -> dict[str, Any]:
    """The report as a ``kforensic.report/1`` document (the incident embedded; plots relative to ``base``)."""
    return {
        "schema": REPORT_SCHEMA,
        "summary": story.summary,
        "narrative": " ".join(story.narrative),
        "readiness": story.readiness,
        "lanes": [{"key": str(lane.key), "label": lane.label, "converted": lane.converted,
                   "contradiction": lane.contradiction} for lane in story.lanes],
        "timeline": [
            {"when": e.when_text(), "wall": e.wall, "uncertainty": e.uncertainty, "since_boot":
             e.when.seconds if e.when.clock.value == "monotonic" else None, "end": e.end_text() or None,
             "wall_end": e.wall_end, "duration": e.duration, "stated": e.stated or None, "lane": str(e.lane),
             **({"lower_bound": True} if e.open_end else {}),
             "segment": e.segment, "jump": None if e.jump is None else e.jump.text(), "finding": e.finding_id,
             "title": e.title, "cite": e.cite, "end_cite": e.end_cite, "excerpt": e.excerpt}
            for e in story.timeline
        ],
        "correlations": [
            {"rule": c.rule, "merged_into": c.merged_into, "findings": list(c.finding_ids), "statement": c.statement,
             "contradiction": c.contradiction}
            for c in story.correlations
        ],
        "hypotheses": [
            {"rank": h.rank, "statement": h.statement, "confidence": h.confidence, "supporting": list(h.supporting),
             "against": list(h.against), "next_command": h.next_command} | ({"first": h.first} if h.first else {})
            for h in story.hypotheses
        ],
        "plots": [{"caption": c, "path": _link(p, base)} for c, p in story.plots],
        "set_apart": sorted(story.apart),
        "commands": list(story.commands),
        "incident": incident_document(story),
    }  # fmt: skip


class StoryRenderer:
    """``kforensic report``: the verdict then the merged incident on a terminal; the story as markdown (plots linked
    relative to the output, or to the working directory on stdout); the merged incident as kforensic.incident/1
    (``--json`` writes the whole story)."""

    def text(self, result: IncidentStory, to: Destination) -> str:
        apart = apart_findings(result)
        tail = (
            f"\n{APART_HEADING}: {APART_NOTE}\n" + "".join(f"  {f.severity.value}: {f.title}\n" for f in apart)
            if apart
            else ""
        )
        return "\n".join(verdict(result)) + "\n\n" + IncidentRenderer().text(own_incident(result), to) + tail

    def markdown(self, result: IncidentStory, to: Destination) -> str:
        return render_story_markdown(result, to.base or Path.cwd())

    def json(self, result: IncidentStory, to: Destination) -> str:
        import json

        return json.dumps(incident_document(result), indent=2, ensure_ascii=False) + "\n"

    def html(self, result: IncidentStory, to: Destination) -> str:
        return render_story_html(result, to.base or Path.cwd())
