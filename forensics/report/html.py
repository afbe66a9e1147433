"""Self-contained HTML rendering of an incident (inline CSS, no scripts, no external resources)."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from forensics.model import Finding, Incident, Severity
from forensics.report.examined import examined_items, examined_lines, verdict_line
from forensics.report.markdown import next_step_pieces, quoted_pieces

if TYPE_CHECKING:
    from forensics.report.document import Document

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:72rem;color:#1d1d1f;
background:#fff;line-height:1.45;padding:0 1rem}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{border-bottom:1px solid #ddd;padding-bottom:.2rem;margin-top:2rem}
table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #ddd;padding:.25rem .5rem;text-align:left;
vertical-align:top}th{background:#f4f4f6}pre{background:#f6f8fa;padding:.6rem;overflow-x:auto;font-size:.85rem;
border-radius:4px}code{font-size:.9em}.sev{display:inline-block;padding:0 .45rem;border-radius:3px;color:#fff;
font-weight:600;font-size:.85rem}.critical{background:#8b0000}.high{background:#c0392b}.medium{background:#d68910}
.low{background:#2e86c1}.info{background:#7f8c8d}.summary{font-size:1.1rem;background:#fff8e1;padding:.8rem;
border-left:4px solid #d68910}.finding{margin:1.2rem 0;padding:.6rem 1rem;border:1px solid #e3e3e3;border-radius:6px}
.muted{color:#666;font-size:.9rem}img{max-width:100%}.contradiction{color:#8b0000}summary{cursor:pointer}
details pre{margin:.3rem 0 .6rem}
.summary>p{margin:0}.summary .examined{margin:.5rem 0 0;font-size:.95rem}
"""


def examined_list_html(incident: Incident) -> str:
    """What each analysis examined, one item each, with what it could have found and could not judge under it."""
    items = "".join(
        f"<li>{escape(head)}" + (f"<ul>{''.join(f'<li>{escape(x)}</li>' for x in under)}</ul>" if under else "")
        + "</li>"
        for head, under in examined_items(incident)
    )  # fmt: skip
    return f'<ul class="examined">{items}</ul>'


def _sev(severity: Severity) -> str:
    return f'<span class="sev {severity.value}">{severity.value}</span>'


def prose_html(text: str) -> str:
    """Prose as HTML, the commands it quotes in backticks in ``<code>`` (markdown's ``prose_md``)."""
    return "".join(f"<code>{escape(t)}</code>" if command else escape(t) for t, command in quoted_pieces(text))


def next_step_html(step: str) -> str:
    """A next step as HTML: its commands in ``<code>``, its prose as text (``next_step_pieces``)."""
    return "".join(
        f"<code>{escape(text)}</code>" if command else escape(text) for text, command in next_step_pieces(step)
    )


def _finding_html(n: int, f: Finding) -> str:
    facts = "".join(f"<tr><th>{escape(x.name)}</th><td>{escape(x.said)}</td></tr>" for x in f.shown_facts)
    # Excerpts fold away (<details>): the page reads as a list of claims, the evidence one click below each.
    evidence = "".join(
        f"<li><details><summary><code>{escape(ev.cite())}</code></summary><pre>{escape(ev.excerpt)}</pre></details></li>"
        for ev in f.evidence
    )
    steps = "".join(f"<li>{next_step_html(s)}</li>" for s in f.next_steps)
    return (
        f'<div class="finding" id="finding-{n}"><h3>{n}. {escape(f.title)}</h3>'
        f"<p>{_sev(f.severity)} confidence {f.confidence:.2f} — {escape(f.confidence_reason)}"
        f' <span class="muted">({escape(f.kind)}, {escape(f.id)})</span></p>'
        f"<p>{escape(f.summary)}</p>"
        + (f"<p>judged against {escape(str(f.baseline))}</p>" if f.baseline is not None else "")
        + (f"<p>consequence of {escape(str(f.consequence_of))}</p>" if f.consequence_of is not None else "")
        + (f"<table>{facts}</table>" if facts else "")
        + f"<h4>Evidence</h4><ul>{evidence}</ul>"
        + (f"<h4>Next steps</h4><ul>{steps}</ul>" if steps else "")
        + "</div>"
    )


def _page(title: str, body: str) -> str:
    """One self-contained page: inline CSS, no scripts, no external resources."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>{body}</body></html>\n"
    )


def _meta(incident: Incident) -> str:
    window = incident.window
    when = str(window)
    return (
        f'<p class="muted">host {escape(str(incident.host))} · kernel '
        f"{escape(str(incident.kernel_release))} · {escape(when)} · kforensic {escape(incident.tool_version)}</p>"
    )


def _table(findings: tuple[Finding, ...], start: int) -> str:
    rows = "".join(
        f'<tr><td><a href="#finding-{i}">{i}</a></td><td>{_sev(f.severity)}</td><td>{f.confidence:.2f}</td>'
        f"<td>{escape(f.title)}</td><td><code>{escape(f.evidence[0].cite())}</code></td></tr>"
        for i, f in enumerate(findings, start)
    )
    return (
        f"<table><tr><th>#</th><th>severity</th><th>conf</th><th>title</th><th>where</th></tr>{rows}</table>"
        if rows
        else ""
    )


#: The heading of the findings of inputs a report sets apart (another boot, host or release).
APART_HEADING = "Findings of inputs set apart"
#: What that list is, under its heading.
APART_NOTE = (
    "These inputs cannot come from the boot the report tells (see the contradictions): their findings are listed "
    "here, not ranked with its findings nor counted by --fail-on."
)


def _apart(apart: tuple[Finding, ...], start: int) -> str:
    """The findings of inputs set apart, numbered on from the incident's."""
    if not apart:
        return ""
    return f"<h2>{escape(APART_HEADING)}</h2><p>{escape(APART_NOTE)}</p>{_table(apart, start)}" + "".join(
        _finding_html(i, f) for i, f in enumerate(apart, start)
    )


def _findings(incident: Incident, apart: tuple[Finding, ...] = ()) -> str:
    """The findings: a table of them, the verdict when none is a problem, what was examined, then each in full;
    then those of the inputs set apart (``apart``), if any."""
    findings = incident.sorted_findings()
    return (
        "<h2>Findings</h2>"
        + _table(findings, 1)
        + ("" if incident.problems() else f"<p>{escape(verdict_line(incident))}</p>")
        # What was examined and could not be judged, problems or not (it was shown only without one).
        + (
            "<ul>" + "".join(f"<li>{escape(x.strip())}</li>" for x in examined_lines(incident)) + "</ul>"
            if incident.examined
            else ""
        )
        + "".join(_finding_html(i, f) for i, f in enumerate(findings, 1))
        + _apart(apart, len(findings) + 1)
    )


def _inputs(incident: Incident) -> str:
    sources = "".join(
        f"<tr><td><code>{escape(s.path)}</code></td><td>{escape(str(s.size))}</td>"
        f"<td><code>{escape(str(s.sha256))}</code></td><td>{escape(s.error or '')}</td></tr>"
        for s in incident.sources
    )
    return f"<h2>Inputs</h2><table><tr><th>source</th><th>size</th><th>sha256</th><th>error</th></tr>{sources}</table>"


def render_html(
    incident: Incident, sections: list[tuple[str, str]] | None = None, title: str = "", apart: tuple[Finding, ...] = ()
) -> str:
    """The incident as one HTML page; ``sections`` are extra (heading, HTML body) blocks shown before the findings;
    ``apart``: findings of inputs set apart, listed after the incident's own (``incident`` holds them not)."""
    findings = incident.sorted_findings()
    head = title or (findings[0].title if findings else "No findings")
    extra = "".join(f"<h2>{escape(h)}</h2>{body}" for h, body in sections or [])
    body = f"<h1>kforensic incident report</h1>{_meta(incident)}{extra}{_findings(incident, apart)}{_inputs(incident)}"
    return _page(f"kforensic: {head}", body)


def document_page(document: Document, incident: Incident | None = None) -> str:
    """A command's document as one page (``--format html``), then the incident's findings and inputs.

    The same content as the command's markdown: the document's sections, then (with ``incident``) the
    findings; a command whose markdown is not a document passes it as the document's ``Lines``.
    """
    from forensics.report.document import blocks_html

    if incident is None:
        return _page(document.title, f"<h1>{escape(document.title)}</h1>{blocks_html(document.blocks, 2)}")
    body = f"<h1>{escape(document.title)}</h1>{_meta(incident)}{blocks_html(document.blocks, 2)}"
    return _page(document.title, body + _findings(incident) + _inputs(incident))


def markdown_page(title: str, markdown: str) -> str:
    """A command's markdown (which carries its own headings) as one page."""
    from forensics.report.document import Lines, blocks_html

    return _page(title, blocks_html((Lines(tuple(markdown.splitlines())),), 1))
