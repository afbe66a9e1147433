"""A small document model: sections of paragraphs, tables, code, lists and images.

Renderers of the commands build a :class:`Document`; the command writes it as
markdown at heading level 1, and the incident report nests the same sections
under its own headings (any level) or writes them as HTML.  Nothing ever cuts
or rewrites rendered text: a heading's level is a parameter of the rendering,
not something found in the output afterwards.

Text in :class:`Paragraph` and :class:`Lines` is markdown (inline markup, list
items, table rows) and holds no headings; table cells and code are raw text,
escaped by the renderer for its format.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from forensics.report.markdown import fence, md_escape


@dataclass(frozen=True)
class Paragraph:
    """One paragraph of markdown inline text."""

    text: str


@dataclass(frozen=True)
class Lines:
    """Markdown lines kept as they are written (list items, a key/value table): never a heading."""

    lines: tuple[str, ...]


@dataclass(frozen=True)
class BulletList:
    """A list of markdown inline items."""

    items: tuple[str, ...]
    ordered: bool = False


@dataclass(frozen=True)
class Table:
    """A table of raw text cells; ``empty`` is the row shown when there is none."""

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    empty: tuple[str, ...] | None = None
    #: "pipes": only ``|`` is escaped (cells may hold markdown); "full": backslashes, newlines, backticks too.
    escape: Literal["pipes", "full"] = "pipes"


@dataclass(frozen=True)
class Code:
    """A block of preformatted text."""

    text: str
    lang: str = "text"  # PASTE_LANG: commands to paste, which the terminal never folds


#: The language of a :class:`Code` block of commands to paste (a shell's, crash's, drgn's).
PASTE_LANG = "console"


@dataclass(frozen=True)
class Image:
    """A picture written beside the page (``path`` as the page links it)."""

    caption: str
    path: str


@dataclass(frozen=True)
class Section:
    """A heading and what stands under it (blocks and nested sections)."""

    title: str
    blocks: tuple[Block, ...]


Block = Paragraph | Lines | BulletList | Table | Code | Image | Section


@dataclass(frozen=True)
class Document:
    """A titled document: the title is the top heading when written alone, the nesting heading's text otherwise."""

    title: str
    blocks: tuple[Block, ...]


def _cell(text: str, table: Table) -> str:
    return md_escape(text) if table.escape == "full" else text.replace("|", "\\|")


def _table_md(t: Table) -> str:
    out = ["| " + " | ".join(t.header) + " |", "|" + "---|" * len(t.header)]
    rows = t.rows or ((t.empty,) if t.empty is not None else ())
    out += ["| " + " | ".join(_cell(c, t) for c in row) + " |" for row in rows]
    return "\n".join(out)


def _block_md(block: Block, level: int) -> str:
    match block:
        case Paragraph(text):
            return text
        case Lines(lines):
            return "\n".join(lines)
        case BulletList(items, ordered):
            return "\n".join((f"{i}. " if ordered else "- ") + item for i, item in enumerate(items, 1))
        case Table():
            return _table_md(block)
        case Code(text, lang):
            return fence(text, lang)
        case Image(caption, path):
            return f"![{md_escape(caption)}]({path})"
        case Section(title, blocks):
            return "\n\n".join([f"{'#' * min(6, level)} {title}", *(_block_md(b, level + 1) for b in blocks)])


def blocks_markdown(blocks: tuple[Block, ...], level: int) -> str:
    """Blocks as markdown, their sections' headings at ``level``; one blank line between blocks."""
    return "\n\n".join(_block_md(b, level) for b in blocks)


def to_markdown(doc: Document, level: int = 1) -> str:
    """The document with its title as a heading of ``level`` (ends with one newline)."""
    return _block_md(Section(doc.title, doc.blocks), level) + "\n"


def _inline_html(text: str) -> str:
    from markdown_it import MarkdownIt

    return str(MarkdownIt("commonmark").renderInline(text))


def _block_html(block: Block, level: int) -> str:
    from html import escape as e  # here: only the HTML format needs it (html.entities is a large table)

    match block:
        case Paragraph(text):
            return f"<p>{_inline_html(text)}</p>"
        case Lines(lines):
            from markdown_it import MarkdownIt

            return str(MarkdownIt("commonmark").enable("table").render("\n".join(lines)))
        case BulletList(items, ordered):
            tag = "ol" if ordered else "ul"
            return f"<{tag}>" + "".join(f"<li>{_inline_html(i)}</li>" for i in items) + f"</{tag}>"
        case Table(header, rows, empty):
            body = rows or ((empty,) if empty is not None else ())
            return (
                "<table><tr>"
                + "".join(f"<th>{e(h)}</th>" for h in header)
                + "</tr>"
                + "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in body)
                + "</table>"
            )
        case Code(text, _lang):
            return f"<pre>{e(text)}</pre>"
        case Image(caption, path):
            return f'<figure><img src="{e(path)}" alt="{e(caption)}"><figcaption>{e(caption)}</figcaption></figure>'
        case Section(title, blocks):
            h = min(6, level)
            return f"<h{h}>{_inline_html(title)}</h{h}>" + "".join(_block_html(b, level + 1) for b in blocks)


def blocks_html(blocks: tuple[Block, ...], level: int) -> str:
    """Blocks as HTML, their sections' headings at ``level``."""
    return "".join(_block_html(b, level) for b in blocks)


def image_link(path: Path, base: Path | None) -> str:
    """A written picture's path as a page in the directory ``base`` links it."""
    import os

    return str(path) if base is None else os.path.relpath(path, base)
