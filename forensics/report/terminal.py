"""Terminal rendering of an incident with rich (colour only on a TTY)."""

from __future__ import annotations

import io
import itertools
from typing import ClassVar

from rich.console import Console
from rich.table import Table
from rich.text import Text

from forensics.model import Incident, Severity
from forensics.report.document import PASTE_LANG

try:
    # rich's own word wrap, which Text.wrap cuts a line at (rich/_wrap.py: private, there since rich 10). Should a
    # later rich drop it, the lines longer than the width go through rich's Text as before (d38eba4).
    from rich._wrap import divide_line as _divide_line
except ImportError:  # pragma: no cover - rich 13-15 have it
    _divide_line = None  # type: ignore[assignment]
from forensics.report.examined import examined_lines, verdict_line

SEVERITY_STYLE = {
    Severity.INFO: "dim",
    Severity.LOW: "cyan",
    Severity.MEDIUM: "yellow",
    Severity.HIGH: "bold red",
    Severity.CRITICAL: "bold white on red",
}

#: Lines of an evidence excerpt shown under its citation.
EXCERPT_LINES = 12

#: A piece of a line: its text as shown, and the rich style it is shown in ("" for none).
Piece = tuple[str, str]


def text_console(buf: io.StringIO, *, color: bool, width: int) -> Console:
    """A console writing ``width`` columns into ``buf``, told everything it would otherwise look up per print (every
    command's terminal text is made on one of these).

    Why each setting:
    - ``height``, ``force_terminal``, ``force_jupyter``, ``force_interactive``: without them every ``print``
      asked the environment (``FORCE_COLOR``, ``TERM``, ``COLUMNS``, ``LINES``...) and the real terminal's size
      again (~40 µs a print). ``buf`` is no terminal and the colour choice is ours (``color``), not the
      environment's: with ``FORCE_COLOR`` and ``TERM=dumb`` set, rich took the width as 80 whatever ``width`` said.
    - ``emoji=False``: rich turns ``:x:``, ``:up:``, ``:ok:``... of a printed string into pictures (the lines
      are given as ``Text``, which it does not read for emoji or markup; this is for anything printed as a string).
    """
    return Console(
        file=buf,
        width=width,
        height=25,
        color_system="standard" if color else None,
        highlight=False,
        emoji=False,
        force_terminal=False,
        force_jupyter=False,
        force_interactive=False,
    )


class _Printer:
    """Lines of pieces written as rich would print them, through rich only where it changes something.

    rich costs ~30-40 µs a line (markup, a ``Text``, wrapping, segments): ~0.7 s for the ~13,000 lines of a
    report-dense log's incident. Most lines are short printable ASCII with no colour to show, which rich prints
    as they are (a soft-wrapped one whatever its length): those are written straight into the buffer, and one
    longer than the width folded as rich folds it (:func:`_folded`). The others (a colour shown, a tab, a control
    character, a character wider or narrower than a column) go through rich as ``Text``, never as markup: rich's
    markup shows a log line's trailing backslash twice and its ``:x:`` as a picture. A run of them is one
    ``print`` (rich prints a text of several lines line by line, each wrapped as it would be alone).
    tests/forensics/report/test_terminal.py checks both ways give the same text.
    """

    def __init__(self, console: Console, buf: io.StringIO, *, color: bool, width: int) -> None:
        self.console = console
        self.buf = buf
        self.color = color
        self.width = width
        self._run: list[Text] = []
        self._soft = False

    def line(self, *pieces: Piece | str, soft_wrap: bool = False) -> None:
        """Add a line made of ``pieces`` (plain text, or ``(text, style)``); ``soft_wrap``: not folded at the width."""
        shown = "".join(p if isinstance(p, str) else p[0] for p in pieces)
        styled = self.color and any(not isinstance(p, str) and p[1] for p in pieces)
        # A soft-wrapped line is not folded at the width: rich prints one of printable ASCII as it is, whatever its
        # length (~440 excerpt lines of the corpus x4's incident, which went through rich).  Except its trailing
        # spaces past the width, which rich before 14.3 drops and 14.3 on keeps (the package allows rich >= 13): such
        # a line goes through rich, whichever is installed.
        if not styled and all(
            part.isascii()
            and part.isprintable()
            and (len(part) <= self.width or (soft_wrap and not part.endswith(" ")))
            for part in shown.split("\n")
        ):
            self.flush()
            self.buf.write(shown)
            self.buf.write("\n")
            return
        if (
            _divide_line is not None
            and not styled
            and not soft_wrap
            and "\n" not in shown
            and shown.isascii()
            and shown.isprintable()
        ):
            # One line of printable ASCII longer than the width, folded: at rich's own offsets, without its Text
            # and segments (~700 lines of the corpus x4's incident: summaries, facts, steps, citations).
            self.flush()
            self.buf.write(_folded(shown, self.width))
            return
        if soft_wrap != self._soft:
            self.flush()
            self._soft = soft_wrap
        self._run.append(Text.assemble(*pieces))

    def flush(self) -> None:
        """Print the lines given to rich so far."""
        if self._run:
            self.console.print(Text("\n").join(self._run), soft_wrap=self._soft)
            self._run.clear()


def _folded(line: str, width: int) -> str:
    """A line of printable ASCII longer than ``width`` as rich prints it (``Text.wrap``, overflow "fold", then the
    console's crop): cut at the offsets of rich's word wrap, each piece's trailing spaces past the width dropped,
    then each cut at the width (one column a character)."""
    ends = [0, *_divide_line(line, width, fold=True), len(line)]
    pieces = []
    for a, b in itertools.pairwise(ends):
        piece = line[a:b]
        if len(piece) > width:
            # Text.rstrip_end: the spaces at its end dropped, down to the width at most; then Text.truncate.
            piece = piece[: max(len(piece.rstrip(" ")), width)][:width]
        pieces.append(piece)
    return "\n".join(pieces) + "\n"


def render_terminal(incident: Incident, *, color: bool, width: int) -> str:
    """The incident as terminal text: a findings table, then each finding with its evidence."""
    buf = io.StringIO()
    console = text_console(buf, color=color, width=width)
    out = _Printer(console, buf, color=color, width=width)
    window = incident.window
    when = str(window)
    out.line(("kforensic", "bold"), f" {incident.tool_version}  host {incident.host}")
    out.line(f"kernel {incident.kernel_release}  window {when}")
    findings = incident.sorted_findings()
    if not incident.problems():
        out.line(verdict_line(incident))
    # What was examined and could not be judged, problems or not (it was shown only without one).
    for line in examined_lines(incident):
        out.line(line)
    if findings:
        table = Table(show_lines=False, expand=False)
        table.add_column("#", justify="right")
        table.add_column("severity")
        table.add_column("conf", justify="right")
        table.add_column("title")
        table.add_column("where")
        for i, f in enumerate(findings, 1):
            # Each cell a Text: a string is read as markup by rich first (~20,000 instructions a cell of the number
            # and the confidence, which hold none: digits and a point).
            table.add_row(
                Text(str(i)),
                Text.assemble((f.severity.value, SEVERITY_STYLE[f.severity])),
                Text(f"{f.confidence:.2f}"),
                Text(f.title),
                Text(f.evidence[0].cite()),
            )
        out.flush()
        console.print(table)
        for i, f in enumerate(findings, 1):
            out.line("\n", (f"{i}. {f.title}", "bold"), f"  ({f.id})")
            out.line(f.summary)
            if f.baseline is not None:
                out.line(f"  severity {f.severity.value}, judged against {f.baseline}")
            if f.consequence_of is not None:
                out.line(f"  consequence of: {f.consequence_of}")
            for fact in f.shown_facts:
                out.line(f"  {fact.name}: {fact.said}")
            for ev in f.evidence:
                out.line("  ", (ev.cite(), "dim"))
                for line in ev.excerpt.splitlines()[:EXCERPT_LINES]:
                    out.line(f"    {line}", soft_wrap=True)
            for step in f.next_steps:
                out.line(f"  next: {step}")
    for s in incident.sources:
        if s.error:
            out.line((f"input {s.path}: {s.error}", "yellow"))
    out.flush()
    return buf.getvalue()


def pastable_markdown(text: str) -> object:
    """rich's ``Markdown`` of ``text`` whose ``console`` blocks (commands to paste) are printed unfolded.

    rich folds a code block at the width, in the middle of a path (``...gdb-index/v`` / ``mlinux \\``), and a
    folded command pasted into a shell is another command.  Their lines are printed as they are, longer than the
    width when they must (print the result with ``crop=False``: rich crops a line at the width otherwise).
    """
    from rich.markdown import CodeBlock, Markdown

    class _Pastable(CodeBlock):
        def __rich_console__(self, console: Console, options: object) -> object:  # type: ignore[override]
            if self.lexer_name != PASTE_LANG:
                yield from super().__rich_console__(console, options)  # type: ignore[arg-type]
                return
            lines = ["", *str(self.text).rstrip().split("\n"), ""]  # the blank lines rich's padding gives
            yield Text("\n".join(f" {line}" if line else "" for line in lines), no_wrap=True, overflow="ignore")

    class _Markdown(Markdown):
        elements: ClassVar = {**Markdown.elements, "fence": _Pastable, "code_block": _Pastable}

    return _Markdown(text)
