"""The document model: one document written alone (level 1) or nested under the report's headings (any level)."""

from __future__ import annotations

from forensics.report.document import (
    BulletList,
    Code,
    Document,
    Image,
    Lines,
    Paragraph,
    Section,
    Table,
    blocks_html,
    blocks_markdown,
    to_markdown,
)

DOC = Document(
    "kforensic vmcore report",
    (
        Paragraph("Intro."),
        Section("Backtrace", (Code("# not a heading: a shell prompt in an excerpt\n## nor this"),)),
        Section(
            "Memory",
            (
                Table(("cache", "size"), (("kmalloc|64", "1 MiB"),)),
                Section("Registers", (Lines(("| a | b |", "|---|---|")),)),
            ),
        ),
        Section("Modules", (BulletList(("kf_buggy (taint O)",)), Image("a plot", "plots/a.png"))),
    ),
)


def test_alone_the_title_is_the_top_heading() -> None:
    text = to_markdown(DOC)
    lines = text.splitlines()
    assert lines[0] == "# kforensic vmcore report"
    assert lines[2] == "Intro."
    assert "## Backtrace" in lines and "### Registers" in lines
    assert text.endswith("![a plot](plots/a.png)\n")


def test_nested_the_levels_follow_the_parameter_and_code_stays_verbatim() -> None:
    nested = Section("Details: vmcore /var/crash/x", DOC.blocks)
    lines = blocks_markdown((nested,), 2).splitlines()
    assert lines[0] == "## Details: vmcore /var/crash/x"
    assert "### Backtrace" in lines
    assert "#### Registers" in lines
    assert "# not a heading: a shell prompt in an excerpt" in lines
    assert "## nor this" in lines
    assert not any("vmcore report" in line for line in lines)


def test_headings_stop_at_level_six() -> None:
    deep = Section("a", (Section("b", (Section("c", (Paragraph("x"),)),)),))
    assert blocks_markdown((deep,), 5).splitlines()[4] == "###### c"


def test_table_cells_are_escaped_for_markdown_and_html() -> None:
    md = blocks_markdown((Table(("cache", "size"), (("kmalloc|64", "1 MiB"),)),), 2)
    assert md.splitlines() == ["| cache | size |", "|---|---|", "| kmalloc\\|64 | 1 MiB |"]
    full = blocks_markdown((Table(("x",), (("a`b\\c",),), escape="full"),), 2)
    assert full.splitlines()[2] == "| a'b\\\\c |"
    empty = blocks_markdown((Table(("x", "y"), (), empty=("(none)", "")),), 2)
    assert empty.splitlines()[2] == "| (none) |  |"


def test_html_is_real_html_with_nested_levels() -> None:
    out = blocks_html(DOC.blocks, 3)
    assert "<h3>Backtrace</h3><pre># not a heading: a shell prompt in an excerpt\n## nor this</pre>" in out
    assert "<h4>Registers</h4>" in out
    assert "<td>kmalloc|64</td>" in out
    assert "<li>kf_buggy (taint O)</li>" in out
    assert '<img src="plots/a.png" alt="a plot">' in out
    assert "<p>Intro.</p>" in out
