"""Terminal rendering of an incident with rich (colour only on a TTY)."""

from __future__ import annotations

import io

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from forensics.model import Incident, NotAvailable, Severity
from forensics.report.examined import examined_lines, verdict_line

SEVERITY_STYLE = {
    Severity.INFO: "dim",
    Severity.LOW: "cyan",
    Severity.MEDIUM: "yellow",
    Severity.HIGH: "bold red",
    Severity.CRITICAL: "bold white on red",
}


def render_terminal(incident: Incident, *, color: bool, width: int) -> str:
    """The incident as terminal text: a findings table, then each finding with its evidence."""
    buf = io.StringIO()
    console = Console(file=buf, width=width, color_system="standard" if color else None, highlight=False)
    window = incident.window
    when = str(window) if isinstance(window, NotAvailable) else f"{window.start} – {window.end}"
    console.print(f"[bold]kforensic[/] {escape(incident.tool_version)}  host {escape(str(incident.host))}")
    console.print(f"kernel {escape(str(incident.kernel_release))}  window {escape(when)}")
    findings = incident.sorted_findings()
    if not incident.problems():
        console.print(escape(verdict_line(incident)))
        for line in examined_lines(incident):
            console.print(escape(line))
    if findings:
        table = Table(show_lines=False, expand=False)
        table.add_column("#", justify="right")
        table.add_column("severity")
        table.add_column("conf", justify="right")
        table.add_column("title")
        table.add_column("where")
        for i, f in enumerate(findings, 1):
            table.add_row(
                str(i),
                f"[{SEVERITY_STYLE[f.severity]}]{f.severity.value}[/]",
                f"{f.confidence:.2f}",
                escape(f.title),
                escape(f.evidence[0].cite()),
            )
        console.print(table)
        for i, f in enumerate(findings, 1):
            console.print(f"\n[bold]{i}. {escape(f.title)}[/]  ({f.id})")
            console.print(escape(f.summary))
            if f.baseline is not None:
                console.print(f"  severity {f.severity.value}, judged against {escape(str(f.baseline))}")
            for fact in f.shown_facts:
                console.print(f"  {escape(fact.name)}: {escape(fact.value)}")
            for ev in f.evidence:
                console.print(f"  [dim]{escape(ev.cite())}[/]")
                for line in ev.excerpt.splitlines()[:12]:
                    console.print(f"    {escape(line)}", soft_wrap=True)
            for step in f.next_steps:
                console.print(f"  next: {escape(step)}")
    errors = [s for s in incident.sources if s.error]
    for s in errors:
        console.print(f"[yellow]input {escape(s.path)}: {escape(s.error or '')}[/]")
    return buf.getvalue()
