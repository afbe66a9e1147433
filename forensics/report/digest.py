"""A size-bounded JSON digest of an incident, for pasting into an assistant.

Nothing in it is invented or paraphrased: it keeps titles, locators and
verbatim excerpts, and drops whole items (never cuts text) until the document
fits the bound: first long excerpts (the locator stays, marked
``excerpt_omitted``), then evidence beyond the first items, then the least
severe findings, then timeline entries.

The findings of inputs a report sets apart (another boot, host or release) are
not ranked nor trimmed with the incident's: they are listed under
``"set_apart"`` by id, title, severity and why, as the report lists them apart.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from forensics.model import Finding, Incident
from forensics.output import encode_text
from forensics.serialize import evidence_to_dict
from forensics.types.incident import Hypothesis, TimelineEvent

DIGEST_SCHEMA = "kforensic.digest/1"
DEFAULT_DIGEST_BYTES = 8192


def _size(doc: dict[str, Any]) -> int:
    # Measured as written (write_atomic's encode_text): a symbol read from undecodable bytes is \udcXX there,
    # where a strict encode raised UnicodeEncodeError (exit 4).
    return len(encode_text(json.dumps(doc, ensure_ascii=False, separators=(",", ":"))))


def _finding(f: Finding, max_evidence: int, max_excerpt: int) -> dict[str, Any]:
    evidence = []
    for ev in f.evidence[:max_evidence]:
        item = evidence_to_dict(ev)
        if len(ev.excerpt) > max_excerpt:
            del item["excerpt"]
            item["excerpt_omitted"] = True
        evidence.append(item)
    return {
        "id": f.id,
        "title": f.title,
        "severity": f.severity.value,
        **({"baseline": str(f.baseline)} if f.baseline is not None else {}),
        **({"consequence_of": f.consequence_of.root} if f.consequence_of is not None else {}),
        "confidence": f.confidence,
        "evidence": evidence,
        "evidence_total": len(f.evidence),
        "next_step": f.next_steps[0] if f.next_steps else None,
    }


def build_digest(
    incident: Incident,
    summary: str,
    timeline: tuple[TimelineEvent, ...],
    hypotheses: tuple[Hypothesis, ...],
    limit: int = DEFAULT_DIGEST_BYTES,
    apart: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The digest document, at most ``limit`` bytes of compact JSON (when it can be made to fit).

    ``apart``: why each finding of an input set apart is (by id); they are listed apart, never ranked.
    """
    apart = apart or {}
    ranked = incident.sorted_findings()
    findings = [f for f in ranked if f.id not in apart]
    set_apart = {
        "set_apart": [
            {"id": f.id, "title": f.title, "severity": f.severity.value, "why": apart[f.id]}
            for f in ranked
            if f.id in apart
        ]
    }
    plans = [(8, 400), (4, 200), (2, 120), (1, 80), (1, 0)]
    for max_evidence, max_excerpt in plans:
        for n_findings in range(len(findings), -1, -1):
            for n_events in (12, 6, 3, 0):
                doc = {
                    "schema": DIGEST_SCHEMA,
                    "summary": summary,
                    "host": str(incident.host),
                    "kernel_release": str(incident.kernel_release),
                    "hypotheses": [
                        {"rank": h.rank, "statement": h.statement, "confidence": h.confidence, "next": h.next_command}
                        | ({"first": h.first} if h.first else {})
                        for h in hypotheses[:5]
                    ],
                    "timeline": [
                        {"when": e.when_text(), "title": e.title, "cite": e.cite} for e in timeline[:n_events]
                    ],
                    "findings": [_finding(f, max_evidence, max_excerpt) for f in findings[:n_findings]],
                    **(set_apart if apart else {}),
                    "omitted": {
                        "findings": len(findings) - n_findings,
                        "timeline_events": max(0, len(timeline) - n_events),
                    },
                }
                if _size(doc) <= limit:
                    return doc
    return {"schema": DIGEST_SCHEMA, "summary": summary, "omitted": {"findings": len(findings) + len(apart)}}
