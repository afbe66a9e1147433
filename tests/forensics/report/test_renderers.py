"""Every output format renders every part of an incident."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forensics.model import Incident, NotAvailable
from forensics.report import OutputFormat, render_incident
from forensics.serialize import incident_from_dict
from tests.forensics.factories import incident_of, line_evidence, null_deref_finding, write_log


def _incident(tmp_path: Path) -> Incident:
    log = write_log(tmp_path)
    ev = line_evidence(log, 4, "RIP: 0010:kf_null_member_read+0x1a/0x40 [kf_buggy]", 12.345701)
    return incident_of((null_deref_finding((ev,)),))


@pytest.mark.parametrize("fmt", list(OutputFormat))
def test_every_format_shows_title_evidence_and_next_step(tmp_path: Path, fmt: OutputFormat) -> None:
    out = render_incident(_incident(tmp_path), fmt)
    assert "kf_null_member_read" in out
    assert "RIP: 0010:kf_null_member_read+0x1a/0x40 [kf_buggy]" in out
    assert "kforensic vmcore /var/crash/latest" in out
    assert "6.1.0-kf" in out


@pytest.mark.parametrize("fmt", list(OutputFormat))
def test_every_format_handles_an_empty_incident(fmt: OutputFormat) -> None:
    empty = Incident(NotAvailable("no input"), NotAvailable("no input"), NotAvailable("no input"), (), ())
    out = render_incident(empty, fmt)
    if fmt is OutputFormat.JSON:
        assert json.loads(out)["host"] == {"not_available": "no input"}
    else:
        assert "not available: no input" in out


def test_json_is_the_incident_document(tmp_path: Path) -> None:
    incident = _incident(tmp_path)
    assert incident_from_dict(json.loads(render_incident(incident, OutputFormat.JSON)), "x") == incident


def test_markdown_escapes_table_cells_and_fences(tmp_path: Path) -> None:
    log = write_log(tmp_path, text="a | b ``` c\n")
    ev = line_evidence(log, 1, "a | b ``` c")
    finding = null_deref_finding((ev,))
    out = render_incident(incident_of((finding,)), OutputFormat.MD)
    assert "````text\na | b ``` c\n````" in out
    assert "a \\| b" not in out.split("## Findings")[0]


def test_terminal_colour_only_when_asked(tmp_path: Path) -> None:
    incident = _incident(tmp_path)
    assert "\x1b[" not in render_incident(incident, OutputFormat.TEXT)
    assert "\x1b[" in render_incident(incident, OutputFormat.TEXT, color=True)


def test_markdown_keeps_kernel_text_verbatim_when_rendered() -> None:
    """Asterisks of kernel text (``*state``, ``struct kf_dev *``) survive a CommonMark renderer (markdown-it)."""
    from markdown_it import MarkdownIt

    from forensics.report.markdown import md_escape

    title = "WARNING in kf_check: WARN_ON(*state != 2 || dev->ops == (struct kf_ops *)0) | a\\b"
    html = MarkdownIt().render(f"**{md_escape(title)}**")
    assert html.count("<strong>") == 1 and "<em>" not in html
    assert "WARN_ON(*state != 2 || dev-&gt;ops == (struct kf_ops *)0) | a\\b" in html, html
