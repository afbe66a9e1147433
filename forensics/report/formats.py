"""The one format registry: ``--format`` (text, md, json, html) of every command goes through :func:`render`.

A command's renderer is an object with one method per format (:class:`Renderer`); :func:`render` picks the
method for the asked :class:`OutputFormat` and ends in ``assert_never``, so a new member fails mypy until
every renderer handles it.  No other code branches on the format (``tests/test_architecture.py``).
"""

from __future__ import annotations

import enum
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar, assert_never, runtime_checkable

if TYPE_CHECKING:
    from forensics.model import Incident

__all__ = [
    "Destination",
    "ExportFormat",
    "Exporter",
    "IncidentRenderer",
    "JsonBytesRenderer",
    "JsonWriter",
    "OutputFormat",
    "Renderer",
    "Streamed",
    "export",
    "render",
    "render_encoded",
    "render_incident",
    "render_streamed",
]


class OutputFormat(enum.Enum):
    """The output formats every command offers with ``--format``."""

    TEXT = "text"  # terminal (rich); plain when not a TTY
    MD = "md"  # markdown
    JSON = "json"  # kforensic.incident/1 (or the command's own schema embedding it)
    HTML = "html"  # one self-contained page: the markdown's content, styled like report --html

    @property
    def links_files(self) -> bool:
        """Whether a page in this format links files written beside it (plots): markdown and HTML."""
        return self in (OutputFormat.MD, OutputFormat.HTML)


@dataclass(frozen=True)
class Destination:
    """Where the rendered text goes: ``output`` (``-o``), or standard output when None."""

    output: Path | None = None

    @property
    def color(self) -> bool:
        """Colour only for a terminal on stdout."""
        return self.output is None and sys.stdout.isatty()

    @property
    def base(self) -> Path | None:
        """The directory that relative links of the page start from (the output's), None on stdout."""
        return None if self.output is None else self.output.parent


R_contra = TypeVar("R_contra", contravariant=True)
R = TypeVar("R")


class Renderer(Protocol[R_contra]):
    """One command's result in each output format."""

    def text(self, result: R_contra, to: Destination) -> str: ...

    def markdown(self, result: R_contra, to: Destination) -> str: ...

    def json(self, result: R_contra, to: Destination) -> str: ...

    def html(self, result: R_contra, to: Destination) -> str: ...


def render(renderer: Renderer[R], result: R, fmt: OutputFormat, output: Path | None = None) -> str:
    """The result in the asked format, for ``output`` (stdout when None)."""
    to = Destination(output)
    match fmt:
        case OutputFormat.TEXT:
            return renderer.text(result, to)
        case OutputFormat.MD:
            return renderer.markdown(result, to)
        case OutputFormat.JSON:
            return renderer.json(result, to)
        case OutputFormat.HTML:
            return renderer.html(result, to)
        case _:
            assert_never(fmt)


@runtime_checkable
class JsonBytesRenderer(Protocol[R_contra]):
    """A renderer that also writes its JSON as UTF-8 bytes, the same bytes as its ``json`` text encoded."""

    def json_bytes(self, result: R_contra) -> bytes: ...


def render_encoded(renderer: Renderer[R], result: R, fmt: OutputFormat, output: Path | None = None) -> str | bytes:
    """:func:`render`, or the JSON as bytes from a renderer that writes them (:class:`JsonBytesRenderer`).

    A JSON encoder writes UTF-8: a large document (``kforensic dmesg``'s of a report-dense log, 16 MB) is then
    not made text only to be encoded again.
    """
    if fmt is OutputFormat.JSON and isinstance(renderer, JsonBytesRenderer):
        data: bytes = renderer.json_bytes(result)
        return data
    return render(renderer, result, fmt, output)


@runtime_checkable
class JsonWriter(Protocol[R_contra]):
    """A renderer that hands its JSON to a writer in pieces of UTF-8 as they are made: the same bytes as its
    ``json`` text encoded, never held whole."""

    def write_json(self, result: R_contra, write: Callable[[memoryview], object]) -> None: ...


@dataclass(frozen=True)
class Streamed:
    """A rendered result to be written in pieces: ``write_to(write)`` calls ``write`` with each piece of UTF-8
    (a buffer it reuses: ``write`` must not keep it)."""

    write_to: Callable[[Callable[[memoryview], object]], None]


def render_streamed(
    renderer: Renderer[R], result: R, fmt: OutputFormat, output: Path | None = None
) -> str | bytes | Streamed:
    """:func:`render_encoded`, or the JSON of a renderer that writes it in pieces (:class:`JsonWriter`), to be
    written as it is made (:func:`forensics.delivery.deliver`): a large document (``kforensic dmesg``'s of a
    report-dense log, 16 MB) is then never held whole, nor copied."""
    if fmt is OutputFormat.JSON and isinstance(renderer, JsonWriter):
        writer = renderer

        def write_to(write: Callable[[memoryview], object]) -> None:
            writer.write_json(result, write)

        return Streamed(write_to)
    return render_encoded(renderer, result, fmt, output)


class ExportFormat(enum.Enum):
    """The formats ``slab-export`` writes a store's samples in: data for other tools, not a report."""

    CSV = "csv"  # one row per sample (and cache)
    PARQUET = "parquet"  # the same rows, binary (needs pyarrow)
    PROMETHEUS = "prometheus"  # node_exporter text exposition


class Exporter(Protocol):
    """One store's samples in each :class:`ExportFormat`."""

    def csv(self) -> str: ...

    def parquet(self) -> bytes: ...

    def prometheus(self) -> str: ...


def export(exporter: Exporter, fmt: ExportFormat) -> str | bytes:
    """The samples in the asked export format: text, or bytes for a binary one."""
    match fmt:
        case ExportFormat.CSV:
            return exporter.csv()
        case ExportFormat.PARQUET:
            return exporter.parquet()
        case ExportFormat.PROMETHEUS:
            return exporter.prometheus()
        case _:
            assert_never(fmt)


@dataclass(frozen=True)
class IncidentRenderer:
    """An incident alone: terminal text (``color`` forced on or off), markdown, kforensic.incident/1, or a page."""

    color: bool | None = None  # None: colour for a terminal on stdout
    width: int = 100

    def text(self, result: Incident, to: Destination) -> str:
        from forensics.report.terminal import render_terminal

        return render_terminal(result, color=to.color if self.color is None else self.color, width=self.width)

    def markdown(self, result: Incident, to: Destination) -> str:
        from forensics.report.markdown import render_markdown

        return render_markdown(result)

    def json(self, result: Incident, to: Destination) -> str:
        import json

        from forensics.serialize import incident_to_dict

        return json.dumps(incident_to_dict(result), indent=2, ensure_ascii=False) + "\n"

    def html(self, result: Incident, to: Destination) -> str:
        from forensics.report.html import render_html

        return render_html(result)


def render_incident(incident: Incident, fmt: OutputFormat, *, color: bool = False, width: int = 100) -> str:
    """Render an incident in the given format."""
    return render(IncidentRenderer(color, width), incident, fmt)
