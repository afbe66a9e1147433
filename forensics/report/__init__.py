"""Renderers: results as terminal text, markdown or JSON, chosen by :class:`OutputFormat` (:mod:`.formats`)."""

from __future__ import annotations

from forensics.report.formats import OutputFormat, render_incident

__all__ = ["OutputFormat", "render_incident"]
