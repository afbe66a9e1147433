"""Markdown rendering of an incident."""

from __future__ import annotations

from forensics.model import Finding, Incident, NotAvailable
from forensics.report.examined import examined_lines, verdict_line


def md_escape(text: str) -> str:
    """Escape text for a markdown table cell or inline use.

    ``*`` is escaped because kernel text is full of it (``*state``, ``struct kf_dev *``): a pair of them
    turns the words between into emphasis and the asterisks vanish from the rendered report.
    """
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("`", "'").replace("*", "\\*")


def fence(text: str, lang: str = "text") -> str:
    """A fenced code block that survives backticks inside ``text``."""
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}{lang}\n{text}\n{ticks}"


def code_span(text: str) -> str:
    """``text`` as an inline code span, fenced with more backticks than it holds in a row."""
    ticks = "`"
    while ticks in text:
        ticks += "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def next_commands(step: str) -> tuple[tuple[str, ...], str]:
    """(the commands, the prose) of a next step: ``crash> A; crash> B  # why`` -> (("crash> A", "crash> B"), "why").

    A step is one shell command, or commands at the ``crash>`` / ``>>>`` prompt of the follow-up
    sessions, separated by ``; ``; what follows ``  # `` is prose, not part of any command.
    """
    command, _, comment = step.partition("  # ")
    parts: list[str] = []
    for piece in command.split("; "):
        if parts and not piece.startswith(("crash> ", ">>> ")):
            parts[-1] += "; " + piece  # a shell command's own ';' (or a crash argument): not a new command
        else:
            parts.append(piece)
    return tuple(p.strip() for p in parts if p.strip()), comment.strip()


def next_step_md(step: str) -> str:
    """A next step as markdown: each command in its own code span, the prose after them.

    Never bare: ``>>> %crash bt 42`` is a blockquote in markdown (a terminal showed "▌ ▌ ▌ %crash bt 42") and
    ``<trace>`` an HTML tag a markdown viewer drops.
    """
    commands, comment = next_commands(step)
    text = ", then ".join(code_span(c) for c in commands)
    return text + (f" — {md_escape(comment)}" if comment else "")


def _finding_md(n: int, f: Finding, level: int = 3) -> list[str]:
    out = [
        f"{'#' * level} {n}. {md_escape(f.title)}",
        "",
        f"- **Severity:** {f.severity.value}  ",
        *([f"- **Baseline:** {md_escape(str(f.baseline))}  "] if f.baseline is not None else []),
        f"- **Confidence:** {f.confidence:.2f} — {md_escape(f.confidence_reason)}  ",
        f"- **Kind:** `{f.kind}` · **ID:** `{f.id}` · **Detector:** `{f.detector}`",
        "",
        f.summary,
        "",
    ]
    if f.shown_facts:
        out += ["| fact | value |", "|---|---|"]
        out += [f"| {md_escape(x.name)} | {md_escape(x.value)} |" for x in f.shown_facts]
        out.append("")
    out.append("**Evidence**")
    out.append("")
    for ev in f.evidence:
        out += [f"- `{md_escape(ev.cite())}`", "", fence(ev.excerpt), ""]
    if f.next_steps:
        out.append("**Next steps**")
        out.append("")
        out += [f"- {next_step_md(step)}" for step in f.next_steps]
        out.append("")
    return out


def findings_markdown(findings: tuple[Finding, ...], level: int = 3) -> list[str]:
    """The findings' table, then each finding under a heading of ``level`` with its evidence."""
    if not findings:
        return []
    lines = ["| # | severity | confidence | title |", "|---|---|---|---|"]
    lines += [
        f"| {i} | {f.severity.value} | {f.confidence:.2f} | {md_escape(f.title)} |" for i, f in enumerate(findings, 1)
    ]
    lines.append("")
    for i, f in enumerate(findings, 1):
        lines += _finding_md(i, f, level)
    return lines


def inputs_markdown(incident: Incident) -> list[str]:
    """The inputs' table: path, size, sha256, seconds taken, error."""
    lines = ["| source | size | sha256 | seconds | error |", "|---|---|---|---|---|"]
    for s in incident.sources:
        size = str(s.size)
        lines.append(
            f"| `{md_escape(s.path)}` | {md_escape(size)} | {md_escape(str(s.sha256))} | "
            f"{s.seconds:.3f} | {md_escape(s.error or '')} |"
        )
    return lines


def render_markdown(incident: Incident) -> str:
    """The incident as a markdown document: summary, findings, inputs."""
    findings = incident.sorted_findings()
    worst = incident.worst_severity()
    lines = ["# kforensic incident report", ""]
    if findings:
        top = findings[0]
        lines.append(
            f"**{len(findings)} finding(s)**, worst severity **{worst.value if worst else 'none'}**. "
            f"Most severe: {md_escape(top.title)}."
        )
    if not incident.problems():
        lines += ["", f"**{md_escape(verdict_line(incident))}**"]
        lines += ["", *(f"- {md_escape(x.strip())}" for x in examined_lines(incident))]
    lines += [
        "",
        "| | |",
        "|---|---|",
        f"| Host | {md_escape(str(incident.host))} |",
        f"| Kernel | {md_escape(str(incident.kernel_release))} |",
        f"| Time window | {md_escape(_window(incident))} |",
        f"| kforensic | {md_escape(incident.tool_version)} |",
        "",
    ]
    if findings:
        lines += ["## Findings", "", *findings_markdown(findings)]
    lines += ["## Inputs", "", *inputs_markdown(incident)]
    return "\n".join(lines).rstrip() + "\n"


def _window(incident: Incident) -> str:
    w = incident.window
    if isinstance(w, NotAvailable):
        return str(w)
    return f"{w.start} – {w.end}"
