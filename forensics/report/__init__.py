"""Renderers: an incident as terminal text, markdown or JSON, chosen by :class:`OutputFormat`."""

from __future__ import annotations

import enum
import json
from typing import assert_never

from forensics.model import Incident


class OutputFormat(enum.Enum):
    """The output formats every command offers with ``--format``."""

    TEXT = "text"  # terminal (rich); plain when not a TTY
    MD = "md"  # markdown
    JSON = "json"  # kforensic.incident/1 (or the command's own schema embedding it)


def render_incident(incident: Incident, fmt: OutputFormat, *, color: bool = False, width: int = 100) -> str:
    """Render an incident in the given format."""
    if fmt is OutputFormat.TEXT:
        from forensics.report.terminal import render_terminal

        return render_terminal(incident, color=color, width=width)
    if fmt is OutputFormat.MD:
        from forensics.report.markdown import render_markdown

        return render_markdown(incident)
    if fmt is OutputFormat.JSON:
        from forensics.serialize import incident_to_dict

        return json.dumps(incident_to_dict(incident), indent=2, ensure_ascii=False) + "\n"
    assert_never(fmt)
