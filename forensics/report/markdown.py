"""Markdown rendering of an incident."""

from __future__ import annotations

import re

from forensics.model import Finding, Incident
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
        # A shell command after a prompt's (``>>> %crash bt -a; objdump ...``) is a command of its own.
        after_prompt = bool(parts) and parts[-1].startswith(_PROMPTS) and piece.split(" ", 1)[0] in SHELL_COMMANDS
        if parts and not piece.startswith(_PROMPTS) and not after_prompt:
            parts[-1] += "; " + piece  # a shell command's own ';' (or a crash argument): not a new command
        else:
            parts.append(piece)
    return tuple(p.strip() for p in parts if p.strip()), comment.strip()


#: The programs a shell next step starts with (what tells a command from prose: "read the condition at ...",
#: "boot with slub_debug=U,X (...)", "Search the title on the kernel mailing lists" are advice, not commands).
#: English verbs that are also programs (find, read, install, test) are left out: a step starting with one is prose.
SHELL_COMMANDS = frozenset(
    {
        "apt", "apt-get", "awk", "bpftrace", "cat", "conntrack", "crash", "df", "dmesg", "dnf", "drgn", "echo",
        "findmnt", "gdb", "grep", "head", "journalctl", "kdump-config", "kdumpctl", "kforensic", "ls", "lsof",
        "makedumpfile", "modinfo", "modprobe", "objdump", "perf", "ps", "slabtop", "sort", "ss", "sudo", "sysctl",
        "systemctl", "tail", "trace-cmd", "uname", "wc", "yum", "zcat",
    }
)  # fmt: skip
_PROMPTS = ("crash> ", ">>> ")
#: A command followed by a note in parentheses: ``ps -eLf | wc -l (threads)``.
_NOTE = re.compile(r"(.*\S) \(([^()$`]*)\)")


def _is_command(text: str) -> bool:
    words = text.split(maxsplit=1)
    return bool(words) and words[0] in SHELL_COMMANDS


def _shell_pieces(text: str) -> list[tuple[str, bool]]:
    if _is_command(text):
        note = _NOTE.fullmatch(text)
        return [(note[1], True), (f" ({note[2]})", False)] if note else [(text, True)]
    head, sep, tail = text.partition(": ")
    if sep and _is_command(tail):  # "count VMAs per process: wc -l ..."
        return [(head + sep, False), *_shell_pieces(tail)]
    return [(text, False)]


#: A command the step's prose quotes in backticks: "record sched_switch (`perf sched record`, ...)".
_QUOTED = re.compile(r"`([^`]+)`")


def quoted_pieces(text: str) -> list[tuple[str, bool]]:
    """Prose, with the commands it quotes in backticks as commands (they were shown as 'perf sched record' prose)."""
    pieces: list[tuple[str, bool]] = []
    at = 0
    for m in _QUOTED.finditer(text):
        if m.start() > at:
            pieces.append((text[at : m.start()], False))
        pieces.append((m[1], True))
        at = m.end()
    if at < len(text):
        pieces.append((text[at:], False))
    return pieces


def next_step_pieces(step: str) -> tuple[tuple[str, bool], ...]:
    """A next step as (text, is a command) pieces, in order: the commands (a shell one, those at the ``crash>`` /
    ``>>>`` prompts, or those its prose quotes in backticks), the prose between and after them; a step of advice
    is one piece of prose."""
    commands, comment = next_commands(step)
    pieces: list[tuple[str, bool]] = []
    if len(commands) == 1 and not commands[0].startswith(_PROMPTS):
        pieces = _shell_pieces(commands[0])
    else:
        for i, command in enumerate(commands):
            pieces += [(", then ", False)] if i else []
            pieces.append((command, True))
    if comment:
        pieces.append((f" — {comment}", False))
    return tuple(split for text, command in pieces for split in ([(text, True)] if command else quoted_pieces(text)))


def prose_md(text: str) -> str:
    """Prose as markdown, the commands it quotes in backticks in code spans (a hypothesis's ``first``: "get the crash
    dump D open: ... Debian `linux-image-6.1.192-dbg` ...")."""
    return "".join(code_span(t) if command else md_escape(t) for t, command in quoted_pieces(text))


def step_after_md(first: str, step: str) -> str:
    """A hypothesis's step as markdown, after what to get first when there is something (``Hypothesis.first``:
    "first get a vmlinux the dump opens with: ... — then `crash> dis -rl ...`")."""
    return (f"first {prose_md(first)} — then " if first else "") + next_step_md(step)


def next_step_md(step: str) -> str:
    """A next step as markdown: each command in its own code span, prose as prose.

    A command is never bare: ``>>> %crash bt 42`` is a blockquote in markdown (a terminal showed "▌ ▌ ▌ %crash
    bt 42") and ``<trace>`` an HTML tag a markdown viewer drops.  Prose is not a code span: "boot with
    slub_debug=U,X (also stops merging it), then read ..." in code font reads as a command to paste.
    """
    return "".join(code_span(text) if command else md_escape(text) for text, command in next_step_pieces(step))


def _finding_md(n: int, f: Finding, level: int = 3) -> list[str]:
    out = [
        f"{'#' * level} {n}. {md_escape(f.title)}",
        "",
        f"- **Severity:** {f.severity.value}  ",
        *([f"- **Baseline:** {md_escape(str(f.baseline))}  "] if f.baseline is not None else []),
        *([f"- **Consequence of:** {md_escape(str(f.consequence_of))}  "] if f.consequence_of is not None else []),
        f"- **Confidence:** {f.confidence:.2f} — {md_escape(f.confidence_reason)}  ",
        f"- **Kind:** `{f.kind}` · **ID:** `{f.id}` · **Detector:** `{f.detector}`",
        "",
        f.summary,
        "",
    ]
    if f.shown_facts:
        out += ["| fact | value |", "|---|---|"]
        out += [f"| {md_escape(x.name)} | {md_escape(x.said)} |" for x in f.shown_facts]
        out.append("")
    out.append("**Evidence**")
    out.append("")
    for ev in f.evidence:
        out += [f"- {code_span(ev.cite())}", "", fence(ev.excerpt), ""]  # a code span: its text as it is
    if f.next_steps:
        out.append("**Next steps**")
        out.append("")
        out += [f"- {next_step_md(step)}" for step in f.next_steps]
        out.append("")
    return out


def findings_markdown(findings: tuple[Finding, ...], level: int = 3, start: int = 1) -> list[str]:
    """The findings' table, then each finding under a heading of ``level`` with its evidence, numbered from
    ``start`` (a second list of the page goes on from the first: one heading, one anchor, per number)."""
    if not findings:
        return []
    lines = ["| # | severity | confidence | title |", "|---|---|---|---|"]
    lines += [
        f"| {i} | {f.severity.value} | {f.confidence:.2f} | {md_escape(f.title)} |"
        for i, f in enumerate(findings, start)
    ]
    lines.append("")
    for i, f in enumerate(findings, start):
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


def render_markdown(incident: Incident, sections: str = "") -> str:
    """The incident as a markdown document: summary, findings, inputs; ``sections`` (markdown at heading level 2, a
    command's own tables: ``kforensic dmesg``'s reports) after the summary, under the document's title."""
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
    # What was examined and could not be judged, problems or not (it was shown only without one).
    if incident.examined:
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
    if sections:
        lines += [sections.strip("\n"), ""]
    if findings:
        lines += ["## Findings", "", *findings_markdown(findings)]
    lines += ["## Inputs", "", *inputs_markdown(incident)]
    return "\n".join(lines).rstrip() + "\n"


def _window(incident: Incident) -> str:
    return str(incident.window)
