"""``kforensic leaks`` rendered: the table of flagged series, plots, ``kforensic.leaks/1``."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from forensics import __version__
from forensics.model import NotAvailable
from forensics.report.document import Block, Document, Image, Paragraph, Section, Table, image_link, to_markdown
from forensics.report.formats import Destination, IncidentRenderer
from forensics.types.leaks import OBJECTS_IN_USE, Grade, duration
from forensics.types.results import LeaksResult

if TYPE_CHECKING:
    from forensics.types.leaks import Power, SampleGap, SeriesVerdict


LEAKS_SCHEMA = "kforensic.leaks/1"


def _number(value: float | None) -> float | None:
    """A float for JSON: NaN and infinities become null."""
    return None if value is None or not math.isfinite(value) else round(float(value), 6)


def _hours_left(v: SeriesVerdict, available: float | None) -> float | None:
    # Projected for leaking or suspect growth only (detectors.leaks.findings.PROJECTED).
    if available is None or v.rate <= 0 or v.grade not in (Grade.LEAK, Grade.SUSPECT):
        return None
    return available / v.rate


def series_to_dict(
    kind: str, v: SeriesVerdict, mem_available: float | None, gaps: tuple[SampleGap, ...] = ()
) -> dict[str, Any]:
    """One judged series as JSON; ``gaps``: the store's gaps and clock steps (those within its stretch are listed)."""
    f = v.features
    return {
        "kind": kind,
        "name": v.name,
        "boot_id": v.boot_id,
        # Which stretch of its boot (power.boots' part): > 0 after a step back of the wall clock no uptime measured
        "part": v.part,
        "grade": v.grade.value,
        "rule": v.verdict.rule,
        "reason": v.verdict.reason,
        "rate_bytes_per_hour": _number(v.rate),
        "rate_ci_bytes_per_hour": [_number(f.ts_low), _number(f.ts_high)],
        "ols_rate_bytes_per_hour": _number(f.ols_slope),
        "growth_bytes": _number(v.growth),
        "span_hours": _number(f.span_hours),
        "r2": _number(f.r2),
        "kendall_tau": _number(f.tau),
        "persistence": _number(f.persistence),
        "drawdown": _number(f.drawdown),
        "minima_rate_bytes_per_hour": _number(f.minima_slope),
        "daily_cycle": f.daily_cycle,
        "reclaimable": v.reclaimable,
        "objects_per_hour": _number(v.objects_rate),
        "objects_in_use_per_hour": _number(v.active_rate),
        "object_size": v.objsize,
        "since": _number(v.since_wall),
        # A late rise's raw samples either side of its start (the judged part starts at a window's edge), with the
        # values it was found on: a cache's objects in use (its samples' bytes may not have moved yet).
        "onset": None
        if v.onset is None
        else {
            "measure": "active_objs" if v.onset.measure == OBJECTS_IN_USE else "bytes",
            "bar": _number(v.onset.bar),
            "last_at_level": {
                "sample_id": v.onset.before.sample_id,
                "wall": v.onset.before.wall,
                "value": _number(v.onset.before_value),
            },
            "first_above": {
                "sample_id": v.onset.after.sample_id,
                "wall": v.onset.after.wall,
                "value": _number(v.onset.after_value),
            },
        },
        # A rise held at its level to the store's end (rule held-rise): the samples where it began, reached that
        # level, and the last.
        "held": None
        if v.held is None
        else {
            "rose_bytes": _number(v.held.rose),
            "late": v.held.late,
            **{
                role: {"sample_id": ref.sample_id, "wall": ref.wall, "value_bytes": _number(ref.value)}
                for role, ref in (("start", v.held.start), ("top", v.held.top), ("end", v.held.end))
            },
        },
        # Where it fell back near its baseline and rose again (rule returned-rising-again): rate_bytes_per_hour is
        # of this rise alone, growth_bytes of the whole stretch (the fall included).
        "rose_again": None
        if v.again is None
        else {"bytes": _number(v.again.again), "seconds": _number(v.again.again_for)},
        "hours_until_memavailable_exhausted": _number(_hours_left(v, mem_available)),
        # Its rates and spans are measured across these: not facts (a dashboard read the rate bare).
        "across": [
            {
                "kind": "clock step back" if g.back else "gap",
                "before": g.before,
                "after": g.after,
                "seconds": _number(g.seconds),
            }
            for g in _gaps_across(v, gaps)
        ],
        "samples": [
            {"role": s.role, "sample_id": s.sample_id, "wall": s.wall, "value_bytes": _number(s.value)}
            for s in v.samples
        ],
    }


def result_to_dict(result: LeaksResult) -> dict[str, Any]:
    """The ``kforensic.leaks/1`` document (schema in docs/leaks.md)."""
    from forensics.serialize import incident_to_dict

    a = result.analysis
    interesting = sorted(
        [("cache", v) for v in a.caches] + [("meminfo", v) for v in a.meminfo],
        key=lambda kv: (-kv[1].grade.rank, -kv[1].rate, kv[1].name),
    )
    return {
        "schema": LEAKS_SCHEMA,
        "tool_version": __version__,
        "store": str(result.store),
        "run_id": result.run_id,
        "window": {
            "first": a.first_wall if isinstance(a.first_wall, float) else None,
            "last": a.last_wall if isinstance(a.last_wall, float) else None,
        },
        "samples": a.samples,
        "boots": a.boots,
        "caches_seen": a.cache_names,
        "interval_seconds": _number(a.interval_seconds) if isinstance(a.interval_seconds, float) else None,
        "window_seconds": _number(a.window_seconds) if isinstance(a.window_seconds, float) else None,
        "mem_total_bytes": _number(a.mem_total),
        "mem_available_bytes": _number(a.mem_available),
        # The sample that value was read in: hours_until_memavailable_exhausted counts from it.
        "mem_available_sample": None
        if a.mem_available_at is None
        else {"sample_id": a.mem_available_at.sample_id, "wall": a.mem_available_at.wall},
        "thresholds": dataclasses.asdict(result.thresholds),
        "power": {
            "samples": a.power.samples,
            "span_seconds": _number(a.power.span_seconds),  # observed: the gaps' seconds are not in it
            "unobserved_seconds": _number(a.power.unobserved_seconds),
            "unmeasured": a.power.unmeasured or None,  # why the span cannot be measured (a step back, no uptime)
            # Each stretch judged on its own: a boot's, or a part of one cut by a step back of the wall clock that no
            # uptime measured across (``part`` > 0), with its own interval and windows.
            "boots": [
                {
                    "boot_id": b.boot_id,
                    "part": b.part,
                    "first_sample": b.first,
                    "last_sample": b.last,
                    "samples": b.samples,
                    "observed_seconds": _number(b.observed_seconds),
                    "interval_seconds": _number(b.interval_seconds),
                    "window_seconds": _number(b.window_seconds),
                }
                for b in a.power.boots
            ],
            "needed_samples": a.power.needed_samples,
            "needed_seconds": _number(a.power.needed_seconds),
            "judgeable": a.power.judgeable,
            "full_power_seconds": _number(a.power.full_seconds),
            "slowest_leak_shown_bytes_per_hour": _number(a.power.said_rate),  # as the statement says it
            "statement": a.absence(),
        },
        # Steps of the wall clock within a boot: the samples after each are placed on the uptime (``placed``, where
        # ``read`` is the time stored), so the figures are measured across them by uptime, not marked as a gap.
        "clock_steps": [
            {
                "before": s.before,
                "after": s.after,
                "seconds": _number(s.seconds),
                "read": _number(s.read),
                "placed": _number(s.placed),
                "uptime_seconds": _number(s.uptime_passed),
            }
            for s in a.examined.steps
        ],
        "reboots": [
            {
                "before": r.before,
                "after": r.after,
                "boot_id_changed": r.boot_changed,
                "uptime_before": _number(r.uptime_before),
                "uptime_after": _number(r.uptime_after),
            }
            for r in a.examined.reboots
        ],
        "series": [series_to_dict(kind, v, a.mem_available, a.examined.gaps) for kind, v in interesting],
        "groups": [
            {
                "subject": g.signature.subject if g.signature else None,
                "action": g.signature.action if g.signature else None,
                "grade": g.grade.value,
                "members": list(g.names),
                "objects_per_anchor_object": [_number(r) for r in g.ratios],
                "rate_bytes_per_hour": _number(g.rate),
                "unattributed_bytes_per_hour": _number(g.unattributed_rate),
                "shares": [
                    {
                        "member": m.name,
                        "fraction": _number(g.share(i).fraction),
                        "basis": g.share(i).basis,
                        "attributed_bytes_per_hour": _number(g.attributed(i)),
                        "why": g.share(i).why,
                    }
                    for i, m in enumerate(g.members)
                ],
            }
            for g in a.groups
        ],
        "plots": [{"name": p.name, "kind": p.kind, "path": str(p.path)} for p in result.plots],
        "incident": incident_to_dict(result.incident),
    }


def _kb(value: float) -> str:
    return f"{value / 1024:,.0f}"


def _left(v: SeriesVerdict, available: float | None) -> str:
    hours = _hours_left(v, available)
    if hours is None:
        return "-"
    return f"{hours:,.1f} h" if hours < 48 else f"{hours / 24:,.1f} d"


def _gaps_across(v: SeriesVerdict, gaps: tuple[SampleGap, ...]) -> list[SampleGap]:
    """The gaps and steps back of the clock within the stretch ``v`` was judged on: its figures are not facts."""
    walls = [r.wall for r in v.samples]
    if not walls:
        return []
    first, last = min(v.since_wall, *walls), max(walls)
    # A step back judged apart is between two stretches, never within one's figures.
    return [g for g in gaps if not g.apart and max(g.start, g.end) > first and min(g.start, g.end) < last]


def _across_gap(v: SeriesVerdict, gaps: tuple[SampleGap, ...]) -> str:
    """The mark of a table row whose stretch holds a gap or a clock step, else "": the findings say which; the
    table's rows said the rate bare."""
    across = _gaps_across(v, gaps)
    if not across:
        return ""
    return " (across a clock step)" if any(g.back for g in across) else " (across a gap)"


def _rows(result: LeaksResult) -> list[tuple[str, ...]]:
    a = result.analysis
    meminfo_ids = {id(v) for v in a.meminfo}
    # Of a store of several boots each row names its boot, numbered as the examined line numbers them: filp,
    # SUnreclaim and proc_inode_cache were listed twice with nothing saying which boot (ue23 #10); of a boot cut at a
    # step back of its wall clock, each side's samples.
    boots = _stretch_tags(a.power) if len(a.power.boots) > 1 else None
    rows: list[tuple[str, ...]] = []
    for v in a.flagged():
        f = v.features
        grade = v.grade.value
        explained = v.name in result.analysis.explained
        if id(v) in meminfo_ids and explained and v.grade.rank >= 2:
            grade = f"{grade} (explained by caches)"
        growth = v.growth
        if v.again is not None:
            # Its rate is of the rise since it fell back, not of the stretch: the growth beside it is that rise's
            # ("676,100 KB/h" stood beside "-3,197" of the whole stretch, ue21 #10).
            grade += ", rose again after a fall"
            growth = v.again.again
        grade += _across_gap(v, a.examined.gaps)
        named = (v.name,) if boots is None else (v.name, boots.get(v.stretch, "?"))
        rows.append((grade, *named, _kb(v.rate), _kb(growth), f"{f.r2:.2f}", f"{f.tau:.2f}", _left(v, a.mem_available)))
    return rows


_HEADERS = ("grade", "series", "KB/h", "growth KB", "r²", "tau", "MemAvailable gone in")


def _stretch_tags(power: Power) -> dict[tuple[str, int], str]:
    """Each stretch's short name in the table (``2``, ``46-90``), by its (boot id, part)."""
    boots = len({b.boot_id for b in power.boots})
    return {(b.boot_id, b.part): b.tag(boots, power.cut) for b in power.boots}


def _headers(result: LeaksResult) -> tuple[str, ...]:
    """The table's headers: a boot (or stretch) column after the series where several are judged apart."""
    power = result.analysis.power
    return _HEADERS if len(power.boots) < 2 else (*_HEADERS[:2], power.unit, *_HEADERS[2:])


def _cadence(result: LeaksResult) -> str:
    """``every 1 s (medians of 1.8 s windows)``; of stretches sampled at different intervals each one's (the last
    one's was said of a whole store of two boots, one sampled every second, the other every 10 s)."""
    a = result.analysis
    power = a.power
    # As said: intervals measured 1.000002 s and 1.000004 s are one cadence.
    cadences = {(duration(b.interval_seconds or 0.0), duration(b.window_seconds or 0.0)) for b in power.boots}
    if len(cadences) > 1:
        boots = len({b.boot_id for b in power.boots})
        return (
            "("
            + "; ".join(
                f"{b.label(boots, power.cut)} every {duration(b.interval_seconds)},"
                f" medians of {duration(b.window_seconds or b.interval_seconds)} windows"
                if b.interval_seconds
                else f"{b.label(boots, power.cut)}: one sample"
                for b in power.boots
            )
            + ")"
        )
    if isinstance(a.interval_seconds, float) and isinstance(a.window_seconds, float):
        return f"every {duration(a.interval_seconds)} (medians of {duration(a.window_seconds)} windows)"
    # never a made-up interval: one sample has none
    reason = a.interval_seconds.reason if isinstance(a.interval_seconds, NotAvailable) else "not known"
    return f"(interval unknown: {reason})"


def _summary_line(result: LeaksResult) -> str:
    a = result.analysis
    cadence = _cadence(result)
    leaks = sum(1 for v in a.flagged() if v.grade.rank >= 2)
    apart = f" in {len(a.power.boots)} stretches judged apart" if a.power.cut else ""
    return (
        f"{a.samples} samples {cadence}, {a.boots} boot(s){apart}, "
        f"{a.cache_names} caches ({a.examined.judged} moved enough to judge), {a.examined.meminfo} meminfo series; "
        f"{leaks} leaking or suspect, "
        f"{len(a.groups)} co-growth group(s)"
    )


def render_text(result: LeaksResult) -> str:
    """A terminal table of the flagged series, then the incident."""
    rows = _rows(result)
    lines = [f"kforensic leaks: {result.store}", _summary_line(result), ""]
    if rows:
        headers = _headers(result)
        widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
        lines.append("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)))
        lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    if not result.analysis.examined.flagged:
        lines.append(result.analysis.absence())
    for plot in result.plots:
        lines.append(f"plot: {plot.path}")
    lines.append("")
    return "\n".join(lines) + "\n" + IncidentRenderer().text(result.incident, Destination(None))


def leaks_document(result: LeaksResult, base: Path | None, plots: bool = True) -> Document:
    """The store's summary, the table of flagged series and (with ``plots``) the plots linked from ``base``."""
    from forensics.report.markdown import md_escape

    blocks: list[Block] = [Paragraph(f"Store `{md_escape(str(result.store))}`: {_summary_line(result)}.")]
    rows = _rows(result)
    if rows:
        blocks.append(Table(_headers(result), tuple(rows), escape="full"))
    if not result.analysis.examined.flagged:
        blocks.append(Paragraph(md_escape(result.analysis.absence())))
    if plots and result.plots:
        images = tuple(Image(p.name, image_link(p.path, base or Path("."))) for p in result.plots)
        blocks.append(Section("Plots", images))
    return Document("kforensic leaks", tuple(blocks))


def render_markdown(result: LeaksResult, output: Path | None) -> str:
    """A markdown report: the table, the plots (linked relative to the output file), then the incident."""
    doc = leaks_document(result, output.parent if output is not None else None)
    return to_markdown(doc) + "\n" + IncidentRenderer().markdown(result.incident, Destination(output))


class LeaksRenderer:
    """``kforensic leaks``: the table of flagged series, the plots, then the incident; or kforensic.leaks JSON."""

    def text(self, result: LeaksResult, to: Destination) -> str:
        return render_text(result)

    def markdown(self, result: LeaksResult, to: Destination) -> str:
        return render_markdown(result, to.output)

    def json(self, result: LeaksResult, to: Destination) -> str:
        import json  # here: the text format does not need it (~2 ms of start-up)

        return json.dumps(result_to_dict(result), indent=2, ensure_ascii=False) + "\n"

    def html(self, result: LeaksResult, to: Destination) -> str:
        from forensics.report.html import document_page

        return document_page(leaks_document(result, to.base), result.incident)
