"""The one format registry: every ``--format`` member reaches its renderer method, and only that one."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest

from forensics.report.formats import Destination, IncidentRenderer, OutputFormat, render
from tests.forensics.factories import incident_of, line_evidence, null_deref_finding, write_log

METHOD = {OutputFormat.TEXT: "text", OutputFormat.MD: "markdown", OutputFormat.JSON: "json", OutputFormat.HTML: "html"}


class _Spy:
    """A renderer that says which method ran, and for which destination."""

    def text(self, result: str, to: Destination) -> str:
        return f"text {result} {to.output}"

    def markdown(self, result: str, to: Destination) -> str:
        return f"markdown {result} {to.output}"

    def json(self, result: str, to: Destination) -> str:
        return f"json {result} {to.output}"

    def html(self, result: str, to: Destination) -> str:
        return f"html {result} {to.output}"


def test_every_format_has_its_method() -> None:
    assert set(METHOD) == set(OutputFormat)  # a new member must be added here and to Renderer


@pytest.mark.parametrize("fmt", list(OutputFormat))
def test_render_calls_the_formats_method(fmt: OutputFormat, tmp_path: Path) -> None:
    assert render(_Spy(), "r", fmt, tmp_path / "out") == f"{METHOD[fmt]} r {tmp_path / 'out'}"


@pytest.mark.parametrize("fmt", list(OutputFormat))
def test_the_incident_renders_in_every_format(fmt: OutputFormat, tmp_path: Path) -> None:
    log = write_log(tmp_path)
    incident = incident_of((null_deref_finding((line_evidence(log, 1, log.read_text().splitlines()[0]),)),))
    text = render(IncidentRenderer(color=False), incident, fmt)
    title = incident.findings[0].title
    if fmt is OutputFormat.JSON:
        assert json.loads(text)["findings"][0]["title"] == title
    else:
        assert (html.escape(title) if fmt is OutputFormat.HTML else title) in text


def test_a_destination_says_where_links_start_and_colours_only_a_terminal(tmp_path: Path) -> None:
    assert Destination(tmp_path / "r.md").base == tmp_path
    assert Destination(tmp_path / "r.md").color is False
    assert Destination().base is None
    assert OutputFormat.MD.links_files and OutputFormat.HTML.links_files
    assert not OutputFormat.TEXT.links_files and not OutputFormat.JSON.links_files


@pytest.mark.parametrize(
    ("argv", "heading", "titles"),
    [
        (["dmesg", "tests/detectors/dmesg/golden/oom_kill.log"], "Kernel reports", ["OOM kill of"]),
        (["profile", "tests/data/profile/mixed.perf.txt.gz"], "Hotspots (self)", ["Top hotspot: spin_math"]),
    ],
)
def test_a_command_renders_its_document_and_findings_as_one_page(
    argv: list[str], heading: str, titles: list[str], tmp_path: Path
) -> None:
    """``--format html``: the command's sections (as its markdown has them), then its findings, in one page."""
    from html.parser import HTMLParser

    from tests.forensics.test_cli import run

    root = Path(__file__).resolve().parents[3]
    out = tmp_path / "page.html"
    done = run(argv[0], root / argv[1], "--format", "html", "-o", out)
    assert done.returncode in (0, 1), done.stderr
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and page.endswith("</html>\n")
    assert f">{heading}</h2>" in page
    assert "<h2>Findings</h2>" in page and "<h2>Inputs</h2>" in page
    assert all(t in page for t in titles)
    HTMLParser().feed(page)  # well-formed enough for the standard parser
    assert "<script" not in page and "http" not in page.split("<body>")[0]  # self-contained
