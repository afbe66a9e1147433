"""The span analysis as JSON: the ``kforensic.spans/1`` digest that ``kforensic trace --format json`` embeds."""

from __future__ import annotations

import math

from forensics.model import NotAvailable
from forensics.types.spans import Part, Ref, SpanReport, SpanStats

SPANS_SCHEMA = "kforensic.spans/1"


def _ref_dict(r: Ref) -> dict[str, object]:
    return {"ts": r.ts, "cpu": r.cpu, "where": r.where}


def _num(x: float) -> float | None:
    return None if math.isnan(x) else round(x * 1e3, 6)


def report_to_dict(report: SpanReport, top: int = 20) -> dict[str, object]:
    """The compact JSON digest: per-name statistics, the slow spans and their breakdowns."""

    def stats(s: SpanStats) -> dict[str, object]:
        return {
            "name": s.name,
            "count": s.count,
            "p50_ms": _num(s.p50),
            "p90_ms": _num(s.p90),
            "p99_ms": _num(s.p99),
            "p999_ms": _num(s.p999),
            "max_ms": _num(s.max),
            "mean_ms": _num(s.mean),
            "unmatched_starts": s.unmatched_starts,
            "unmatched_ends": s.unmatched_ends,
        }

    def part(p: Part) -> dict[str, object]:
        return {
            "what": p.what,
            "start": p.start,
            "ms": round(p.duration * 1e3, 6),
            "cpu": p.cpu,
            "detail": p.detail,
            "by_tid": p.by_tid,
            "by_comm": p.by_comm or None,
            "by_prio": p.by_prio,
            "by_policy": p.by_policy
            if isinstance(p.by_policy, str)
            else ({"not_available": p.by_policy.reason} if isinstance(p.by_policy, NotAvailable) else None),
            "state": p.state or None,
            "syscall": p.syscall
            if isinstance(p.syscall, str)
            else ({"not_available": p.syscall.reason} if isinstance(p.syscall, NotAvailable) else None),
            "waker_chain": list(p.chain),
            "events": [_ref_dict(r) for r in p.refs],
        }

    return {
        "schema": SPANS_SCHEMA,
        "sources": list(report.sources),
        "notes": list(report.notes),
        "stats": [stats(s) for s in report.stats],
        "slow": [
            {
                "name": b.span.name,
                "tid": b.span.tid,
                "id": b.span.key or None,
                "start": b.span.start,
                "end": b.span.end,
                "ms": round(b.span.duration * 1e3, 6),
                "from": _ref_dict(b.span.begin_ref),
                "to": _ref_dict(b.span.end_ref),
                "totals_ms": {k: round(v * 1e3, 6) for k, v in b.totals},
                "migrations": b.migrations,
                "cpus": list(b.cpus),
                "note": b.note or None,
                "parts": [part(p) for p in b.parts],
            }
            for b in report.slow[:top]
        ],
    }
