"""The incident report: one story from every source, as markdown, HTML and JSON (``kforensic.report/1``)."""

from __future__ import annotations

import html
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from detectors.incident.correlate import Correlation
from detectors.incident.hypotheses import Hypothesis
from detectors.incident.timeline import TimelineEvent, narrative
from forensics.model import BootTime, Incident
from forensics.report.markdown import md_escape, render_markdown
from forensics.serialize import incident_to_dict

REPORT_SCHEMA = "kforensic.report/1"


@dataclass(frozen=True)
class SourceSection:
    """The details of one analysed input, as its own command renders them."""

    title: str
    markdown: str


@dataclass(frozen=True)
class IncidentStory:
    """Everything the incident report shows."""

    incident: Incident  # merged and correlated
    summary: str  # the first sentence, for non-kernel engineers
    timeline: tuple[TimelineEvent, ...]
    correlations: tuple[Correlation, ...]
    hypotheses: tuple[Hypothesis, ...]
    sections: tuple[SourceSection, ...]
    plots: tuple[tuple[str, Path], ...]  # (caption, where the PNG was written)
    commands: tuple[str, ...]  # commands that reproduce the analysis


def _boot_text(incident: Incident) -> str:
    boot = incident.boot_time
    if isinstance(boot, BootTime):
        import datetime as dt

        when = dt.datetime.fromtimestamp(boot.wall, tz=dt.UTC).isoformat(timespec="seconds")
        return f"{when} ±{boot.uncertainty:.1f} s ({boot.basis})"
    return str(boot)


def _link(path: Path, base: Path | None) -> str:
    """A plot's path as the page at ``base`` (a directory) links it."""
    return str(path) if base is None else os.path.relpath(path, base)


def render_story_markdown(story: IncidentStory, base: Path | None = None) -> str:
    """The report as markdown (plots linked relative to the directory ``base``)."""
    inc = story.incident
    out = ["# kforensic incident report", "", story.summary, ""]
    out += [narrative(story.timeline), ""]
    out += ["| | |", "|---|---|", f"| Host | {md_escape(str(inc.host))} |",
            f"| Kernel | {md_escape(str(inc.kernel_release))} |", f"| Boot time | {md_escape(_boot_text(inc))} |",
            f"| kforensic | {md_escape(inc.tool_version)} |", ""]  # fmt: skip
    out += ["## Timeline", ""]
    if story.timeline:
        out += ["| when | what | evidence |", "|---|---|---|"]
        out += [
            f"| {md_escape(e.when_text())} | {md_escape(e.title)} | `{md_escape(e.cite)}` |" for e in story.timeline
        ]
        if any(e.wall is None for e in story.timeline) and not isinstance(inc.boot_time, BootTime):
            out += ["", f"Times since boot are not converted to wall-clock time: {md_escape(str(inc.boot_time))}."]
    else:
        out.append("No input carries times.")
    out.append("")
    out += ["## Hypotheses", ""]
    if not story.hypotheses:
        out.append("No hypothesis: the findings do not point at a cause.")
    for h in story.hypotheses:
        out.append(
            f"{h.rank}. **{md_escape(h.statement)}** — confidence {h.confidence:.2f}; confirm: `{h.next_command}`"
        )
        out += [f"   - for: {md_escape(x)}" for x in h.supporting]
        out += [f"   - against: {md_escape(x)}" for x in h.against]
    out.append("")
    if story.correlations:
        out += ["## Correlations", ""]
        out += [("- **contradiction**: " if c.contradiction else f"- {c.rule}: ") + md_escape(c.statement)
                for c in story.correlations]  # fmt: skip
        out.append("")
    findings_md = render_markdown(inc).split("\n", 1)[1]
    out += [
        "## Findings by severity",
        findings_md.replace("\n## Findings\n", "\n").replace("\n## Inputs\n", "\n### Inputs\n"),
    ]
    if story.plots:
        out += ["## Plots", ""] + [f"![{md_escape(cap)}]({_link(path, base)})" for cap, path in story.plots] + [""]
    for section in story.sections:
        body = section.markdown.replace("\n# ", "\n### ").replace("\n## ", "\n#### ")
        body = body[2:] if body.startswith("# ") else body
        out += [f"## Details: {md_escape(section.title)}", "", body.strip(), ""]
    out += ["## Reproduce", "", "```sh", *story.commands, "```", ""]
    return "\n".join(out).rstrip() + "\n"


def render_story_html(story: IncidentStory, base: Path | None = None) -> str:
    """The report as one HTML page (inline CSS, no scripts; plots linked relative to ``base``)."""
    from forensics.report.html import render_html

    e = html.escape
    timeline = "".join(
        f"<tr><td>{e(ev.when_text())}</td><td>{e(ev.title)}</td><td><code>{e(ev.cite)}</code></td></tr>"
        for ev in story.timeline
    )
    hyps = "".join(
        f"<li><b>{e(h.statement)}</b> — confidence {h.confidence:.2f}; confirm: <code>{e(h.next_command)}</code>"
        + "".join(f"<br>for: {e(x)}" for x in h.supporting)
        + "".join(f"<br>against: {e(x)}" for x in h.against)
        + "</li>"
        for h in story.hypotheses
    )
    plots = "".join(f'<figure><img src="{e(_link(p, base))}" alt="{e(c)}"><figcaption>{e(c)}</figcaption></figure>'
                    for c, p in story.plots)  # fmt: skip
    details = "".join(f"<h3>{e(s.title)}</h3><pre>{e(s.markdown)}</pre>" for s in story.sections)
    sections = [
        ("Summary", f'<p class="summary">{e(story.summary)}</p><p>{e(narrative(story.timeline))}</p>'),
        ("Timeline", f"<table><tr><th>when</th><th>what</th><th>evidence</th></tr>{timeline}</table>"
         if timeline else "<p>No input carries times.</p>"),
        ("Hypotheses", f"<ol>{hyps}</ol>" if hyps else "<p>No hypothesis.</p>"),
    ]  # fmt: skip
    if plots:
        sections.append(("Plots", plots))
    if details:
        sections.append(("Details per source", details))
    sections.append(("Reproduce", f"<pre>{e(chr(10).join(story.commands))}</pre>"))
    return render_html(story.incident, sections, title=story.summary)


def story_to_dict(story: IncidentStory, base: Path | None = None) -> dict[str, Any]:
    """The report as a ``kforensic.report/1`` document (the incident embedded; plots relative to ``base``)."""
    return {
        "schema": REPORT_SCHEMA,
        "summary": story.summary,
        "narrative": narrative(story.timeline),
        "timeline": [
            {"when": e.when_text(), "wall": e.wall, "uncertainty": e.uncertainty, "since_boot":
             e.when.seconds if e.when.clock.value == "monotonic" else None, "finding": e.finding_id,
             "title": e.title, "cite": e.cite, "excerpt": e.excerpt}
            for e in story.timeline
        ],
        "correlations": [
            {"rule": c.rule, "merged_into": c.merged_into, "findings": list(c.finding_ids), "statement": c.statement,
             "contradiction": c.contradiction}
            for c in story.correlations
        ],
        "hypotheses": [
            {"rank": h.rank, "statement": h.statement, "confidence": h.confidence, "supporting": list(h.supporting),
             "against": list(h.against), "next_command": h.next_command}
            for h in story.hypotheses
        ],
        "plots": [{"caption": c, "path": _link(p, base)} for c, p in story.plots],
        "commands": list(story.commands),
        "incident": incident_to_dict(story.incident),
    }  # fmt: skip


def host_label(incident: Incident) -> str:
    """The host for prose: its name, or "the machine" when unknown."""
    host = incident.host
    # "(none)" is the kernel's default nodename: nothing set a host name.
    return host if isinstance(host, str) and host not in ("", "(none)") else "the machine"
