"""The terminal renderer writes what rich prints line by line, only faster, and quotes evidence as read."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.text import Text

from forensics.model import Incident
from forensics.report.document import PASTE_LANG
from forensics.report.markdown import fence
from forensics.report.terminal import Piece, _Printer, pastable_markdown, render_terminal, text_console
from tests.forensics.factories import incident_of, line_evidence, null_deref_finding, write_log

# Text a kernel log and a finding can hold, the corners of rich's rendering among it: markup brackets and
# backslashes, emoji codes, tabs, control characters, wide (CJK) and zero-width (combining) characters, newlines.
_MARKUP_AND_CONTROLS = ("[", "]", "\\", "[bold]", "[/]", ":x:", ":up:", "\t", "\r", "\x07", "\x1b", "\n")
_UNUSUAL_WIDTHS = ("界", "e\u0301", "\u200b", "é", "✓", "🆗")
_TEXT = st.lists(
    st.sampled_from([*"abcxyz019 _-:./+=()<>", *_MARKUP_AND_CONTROLS, *_UNUSUAL_WIDTHS]),
    max_size=40,
).map("".join)
_WORDS = st.lists(st.text(alphabet="abcdefghij:[]", min_size=0, max_size=40), max_size=8).map(" ".join)
_PIECE = st.one_of(_TEXT, _WORDS, st.tuples(st.one_of(_TEXT, _WORDS), st.sampled_from(["", "bold", "dim", "yellow"])))
_LINE = st.tuples(st.lists(_PIECE, min_size=1, max_size=4), st.booleans())


def _through_rich_line_by_line(lines: list[tuple[list[Piece | str], bool]], *, color: bool, width: int) -> str:
    """Each line printed alone by rich: what the renderer printed before it wrote lines itself."""
    buf = io.StringIO()
    console = text_console(buf, color=color, width=width)
    for pieces, soft in lines:
        console.print(Text.assemble(*pieces), soft_wrap=soft)
    return buf.getvalue()


def _printed(lines: list[tuple[list[Piece | str], bool]], *, color: bool, width: int) -> str:
    buf = io.StringIO()
    out = _Printer(text_console(buf, color=color, width=width), buf, color=color, width=width)
    for pieces, soft in lines:
        out.line(*pieces, soft_wrap=soft)
    out.flush()
    return buf.getvalue()


@settings(max_examples=400, deadline=None)
@given(st.lists(_LINE, min_size=1, max_size=12), st.booleans(), st.sampled_from([8, 20, 40, 100]))
def test_printer_writes_what_rich_prints_line_by_line(
    lines: list[tuple[list[Piece | str], bool]], color: bool, width: int
) -> None:
    assert _printed(lines, color=color, width=width) == _through_rich_line_by_line(lines, color=color, width=width)


@pytest.mark.parametrize("color", [False, True])
def test_printer_corners(color: bool) -> None:
    x = "x" * 100
    lines: list[tuple[list[Piece | str], bool]] = [
        ([x], False),  # exactly the width: written as it is
        ([x + "y"], False),  # one past it: folded by rich
        (["word " * 60 + "   "], False),  # far past it, words and spaces: folded where rich folds it
        (["a" * 250 + " b", "x" * 99 + "   " + "y" * 10], False),  # a word longer than the width; spaces at a fold
        ([" " * 150], False),  # spaces alone
        ([x + "y"], True),  # one past it, soft: not folded
        ([" " + x * 30 + " z"], True),  # far past it, soft, a space first: written as it is
        ([" " + x * 30 + " z  "], True),  # far past it, soft, spaces at its end: through rich (its versions differ)
        (["a" * 150 + "\n" + "b c " * 60], True),  # soft lines of one piece, each past it
        (["a\tb"], False),  # a tab: rich expands it
        (["\n", ("1. title", "bold"), "  (id)"], False),  # a blank line first, a style inside
        (["trailing   "], False),
        ([""], False),
        (["a\n\nb\n"], False),
        (["[bold]not markup[/] \\[x] back\\"], True),
    ]
    assert _printed(lines, color=color, width=100) == _through_rich_line_by_line(lines, color=color, width=100)


def test_a_soft_line_past_the_width_with_trailing_spaces_goes_through_rich() -> None:
    """rich before 14.3 drops such a line's trailing spaces and 14.3 on keeps them (the package allows rich >= 13):
    whichever is installed prints it, not the printer's own shortcut. Lines the versions agree on are written."""
    buf = io.StringIO()
    out = _Printer(text_console(buf, color=False, width=20), buf, color=False, width=20)
    out.line("x" * 30 + " z", soft_wrap=True)
    assert buf.getvalue() == "x" * 30 + " z\n" and not out._run
    out.line("x" * 30 + " z  ", soft_wrap=True)
    assert out._run and buf.getvalue() == "x" * 30 + " z\n"
    out.flush()
    assert buf.getvalue().startswith("x" * 30 + " z\n" + "x" * 30 + " z")


def _incident_with(tmp_path: Path, excerpt: str) -> Incident:
    log = write_log(tmp_path)
    ev = line_evidence(log, 4, excerpt, 12.345701)
    return incident_of((null_deref_finding((ev,)),))


@pytest.mark.parametrize("color", [False, True])
def test_evidence_is_quoted_as_read(tmp_path: Path, color: bool) -> None:
    """rich's emoji codes (``:x:``, ``:up:``), markup-like brackets and a trailing backslash are shown as read."""
    line = "passwd: root:x:0:0 link:up: [bold]\tstate :ok: end\\"
    out = render_terminal(_incident_with(tmp_path, line), color=color, width=100)
    assert "root:x:0:0 link:up: [bold]" in out
    assert "state :ok: end\\\n" in out
    assert "❌" not in out and "🆙" not in out and "🆗" not in out


def test_width_is_ours_whatever_the_environment_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``FORCE_COLOR`` with ``TERM=dumb`` made rich take 80 columns; ``COLUMNS`` must not narrow the text either."""
    incident = _incident_with(tmp_path, "RIP: 0010:kf_null_member_read+0x1a/0x40 [kf_buggy]")
    plain = render_terminal(incident, color=False, width=160)
    for name, value in (("FORCE_COLOR", "1"), ("TERM", "dumb"), ("COLUMNS", "40"), ("LINES", "5")):
        monkeypatch.setenv(name, value)
    assert render_terminal(incident, color=False, width=160) == plain
    assert max(len(line) for line in plain.splitlines()) > 100


def test_trace_tables_show_task_names_as_recorded(tmp_path: Path) -> None:
    """``kforensic trace``'s text tables go through the same console: a comm with rich's emoji codes, markup-like
    brackets or a trailing backslash is shown as the trace recorded it."""
    from forensics.pipelines.trace import analyse_trace_file
    from forensics.report.trace import render_text

    odd = "a:ok:[b]\\"
    lines = []
    for i in range(40):
        t = 10.0 + i * 0.01
        lines.append(
            f"     {odd}-7       [000] d..2.   {t:.6f}: sched_switch: prev_comm={odd} prev_pid=7 prev_prio=120 "
            f"prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120"
        )
        lines.append(
            f"          <idle>-0       [000] d..2.   {t + 0.005:.6f}: sched_switch: prev_comm=swapper/0 prev_pid=0 "
            f"prev_prio=120 prev_state=R ==> next_comm={odd} next_pid=7 next_prio=120"
        )
    trace = tmp_path / "odd.txt"
    trace.write_text("\n".join(lines) + "\n")
    result = analyse_trace_file(str(trace))
    out = render_text(result.analysis, result.parse, result.source, 10, False, result.notes)
    assert f" {odd} " in out and "🆗" not in out


def test_commands_to_paste_are_never_folded_and_other_code_is() -> None:
    """A ``console`` block (the vmcore report's crash/drgn sessions) keeps each line whole past the width; a folded
    command (``.../v`` / ``mlinux \\``) pasted into a shell is another command.  Prose and other code still fold."""
    command = "crash -s /root/.cache/kforensic/fixtures/" + "0c8e4d46" * 12 + "-gdb-index/vmlinux \\"
    prose = "words " * 30
    text = "\n\n".join((fence(f"{command}\n    /tmp/vmcore", PASTE_LANG), prose, fence("x" * 150)))
    buf = io.StringIO()
    text_console(buf, color=False, width=60).print(pastable_markdown(text), crop=False)
    lines = [line.rstrip() for line in buf.getvalue().splitlines()]
    assert f" {command}" in lines
    assert "     /tmp/vmcore" in lines
    assert max(len(line) for line in lines if "words" in line) <= 60
    assert not any("x" * 61 in line for line in lines)
