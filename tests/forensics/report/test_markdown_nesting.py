"""Nesting a command's markdown under the incident report's headings: parsed, so code fences stay verbatim."""

from __future__ import annotations

from forensics.report.markdown import nest_markdown

DOC = """# vmcore report

Intro.

## Backtrace

```text
# not a heading: a shell prompt in an excerpt
## nor this
```

### Registers

| a | b |
|---|---|
"""


def test_headings_move_under_the_nesting_level_and_fences_do_not() -> None:
    nested = nest_markdown(DOC, 3)
    lines = nested.splitlines()
    assert lines[0] == "Intro."  # the document's title gives way to the report's "## Details: ..." heading
    assert "#### Backtrace" in lines
    assert "##### Registers" in lines
    assert "# not a heading: a shell prompt in an excerpt" in lines
    assert "## nor this" in lines
    assert not any(line.startswith("#") and "vmcore report" in line for line in lines)


def test_a_document_without_a_title_keeps_its_first_heading() -> None:
    assert nest_markdown("## Table\n\ntext\n", 3) == "#### Table\n\ntext"
    assert nest_markdown("no headings\n", 3) == "no headings"
