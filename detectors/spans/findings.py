"""The span analysis as a whole (statistics, slow spans, breakdowns) and its findings."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from detectors.spans.breakdown import breakdown
from detectors.spans.inside import inside
from detectors.spans.losses import loss_text
from detectors.spans.pairing import nearest_rank, slow_spans, statistics
from forensics.model import (
    Baseline,
    Clock,
    Evidence,
    Fact,
    Finding,
    FindingKind,
    Locator,
    LocatorKind,
    NotAvailable,
    Severity,
    Subject,
    SubjectKind,
    Timestamp,
    cpu_name,
    finding_id,
)
from forensics.types.spans import LOST, Breakdown, KernelTable, Mark, Part, Ref, Span, SpanReport, explain
from forensics.units import fmt_ms


def _policy(p: Part) -> str:
    """``, policy SCHED_FIFO`` or ``, policy unknown (why)`` of a part's preempting task or waker."""
    if isinstance(p.by_policy, str):
        return f", policy {p.by_policy}"
    if isinstance(p.by_policy, NotAvailable):
        return f", policy unknown ({p.by_policy.reason})"
    return ""


def analyse(
    spans: Sequence[Span],
    unmatched: dict[str, tuple[int, int]],
    table: KernelTable | None,
    slow: float | None,
    slowest: int,
    sources: Sequence[str],
    notes: Sequence[str],
    no_kernel: str = "no kernel trace",
) -> SpanReport:
    """Statistics per name, and the breakdown of the slow spans (when a kernel trace is there; ``no_kernel``:
    why there is none, each slow span's note)."""
    stats = statistics(spans, unmatched)
    picked = slow_spans(spans, slow, slowest)
    out_notes = list(notes)
    # A user-space session alone feeds its streams' lost-event markers to the kernel table: markers are no kernel
    # events (its spans were "unknown: the kernel trace does not say (no event of the thread before)" once its ring
    # buffer discarded events, "(no kernel trace)" when it did not).
    if table is None or not bool((table.kind != LOST).any()):
        out_notes.append("no kernel events: slow spans are listed without a breakdown")
        slow_b: tuple[Breakdown, ...] = tuple(Breakdown(s, (), (), 0, (), no_kernel) for s in picked)
    else:
        extent = _kernel_extent(table)
        outside = _outside(table, extent, spans, out_notes)
        slow_b = tuple(
            Breakdown(s, (), (), 0, (), outside) if outside and _beyond(extent, s) else breakdown(table, s)
            for s in picked
        )
    slow_b = tuple(_with_losses(b) for b in slow_b)
    return SpanReport(tuple(stats), tuple(spans), slow_b, tuple(sources), tuple(out_notes))


def _kernel_extent(table: KernelTable) -> tuple[float, float]:
    """The times of the kernel table's first and last events (lost-event markers are none)."""
    ts = table.ts[table.kind != LOST]
    return float(ts.min()), float(ts.max())


def _beyond(extent: tuple[float, float], s: Span) -> bool:
    """Whether span ``s`` lies wholly before the kernel trace's first event or after its last (``extent``)."""
    return s.end < extent[0] or s.start > extent[1]


def _outside(table: KernelTable, extent: tuple[float, float], spans: Sequence[Span], notes: list[str]) -> str:
    """The note of a slow span that lies wholly outside the kernel trace, and one note in ``notes`` saying how many
    do ("" when none does, or the table holds only the slow spans' windows: collectors/span_windows.py).  Spans
    110 s before an ftrace recording each got "unknown 40.198 ms: the kernel trace does not say (no event of the
    thread before)", with nothing saying the two recordings do not overlap (review 11, 12f)."""
    if table.open_irqs is not None:
        return ""
    k0, k1 = extent
    out = [s for s in spans if _beyond(extent, s)]
    if not out:
        return ""
    first, last = min(s.start for s in out), max(s.end for s in out)
    notes.append(
        f"{len(out)} of the {len(spans)} span(s) lie outside the kernel trace (its events {k0:.6f} .. {k1:.6f}; those"
        f" spans {first:.6f} .. {last:.6f}): the recordings do not overlap there. Check that they were made together"
        " and that --kernel-clock names the trace's clock (mono for spans on CLOCK_MONOTONIC)"
    )
    return f"outside the kernel trace (its events {k0:.6f} .. {k1:.6f}): no breakdown"


def _with_losses(b: Breakdown) -> Breakdown:
    """``b`` with its note saying first what its thread's streams lost while it ran (Span.lost)."""
    if not b.span.lost:
        return b
    said = f"incomplete ({loss_text(b.span.lost)})"
    return dataclasses.replace(b, note=f"{said}; {b.note}" if b.note else said)


def _evidence(ref: Ref) -> Evidence:
    return Evidence(
        source=ref.source or ref.where,
        locator=Locator(LocatorKind.EVENT, max(ref.line_no, 0), name=cpu_name(ref.cpu) if ref.cpu >= 0 else None),
        excerpt=ref.text,
        timestamp=Timestamp(ref.ts, Clock.MONOTONIC) if ref.ts > 0 else None,
        cpu=ref.cpu if ref.cpu >= 0 else None,
    )


def span_findings(
    report: SpanReport,
    slow: float | None,
    marks: Sequence[Mark] = (),
    cite: Callable[[Ref], Ref] | None = None,
    called_from: Callable[[Ref], str | None] | None = None,
) -> list[Finding]:
    """One finding per span name: its slowest span explained (when over ``slow`` or when the slowest were asked).

    ``marks``: every user-space mark, in time order: the few inside the span that say where its time went are
    cited (detectors.spans.inside); ``cite``: a user-space event's excerpt with the payload it carried;
    ``called_from``: where the call an event enters was made (lttng_ust_cyg_profile's call_site, named), None
    for an event that does not say."""
    out = []
    see = cite or (lambda r: r)
    caller = called_from or (lambda r: None)
    marks_of: dict[int, list[Mark]] = {}
    for m in marks:
        marks_of.setdefault(m.tid, []).append(m)
    spans_of: dict[int, list[Span]] = {}
    for sp in report.spans:
        spans_of.setdefault(sp.tid, []).append(sp)
    by_name = _explained(report, slow)
    stats = {s.name: s for s in report.stats}
    for name, b in sorted(by_name.items()):
        s = b.span
        st = stats.get(name)
        begin, end = see(s.begin_ref), see(s.end_ref)
        found = inside(s, marks_of.get(s.tid, ()), spans_of.get(s.tid, ()), caller)
        refs = [begin, end] + [see(i.ref) for i in found]
        for p in sorted(b.parts, key=lambda p: -p.duration)[:3]:
            refs += list(p.refs)
        seen: set[tuple[str, int, str]] = set()
        evidence = []
        for r in refs:
            key = (r.source, r.line_no, r.text)
            if key not in seen:
                seen.add(key)
                evidence.append(_evidence(r))
        facts = [Fact("span", name), Fact("tid", str(s.tid)), Fact("duration", fmt_ms(s.duration))]
        facts += [Fact("incomplete", loss_text(s.lost))] if s.lost else []
        facts += [Fact("started by", begin.text), Fact("ended by", end.text)]
        if (site := caller(s.begin_ref)) is not None:  # the excerpt keeps the payload as recorded (hex)
            facts.append(Fact("called from", site))
        for i, r in zip(found, refs[2:], strict=False):
            where = f"at {r.ts:.6f}" + (f" CPU{r.cpu}" if r.cpu >= 0 else "")
            facts.append(Fact("inside", f"{where} {r.text}: {i.role}"))
        facts += [Fact(what, fmt_ms(sec)) for what, sec in b.totals]
        # The percentiles are those of the population the span is judged against (its name, kind and depth);
        # the whole name's, when that is another population, follow under their own label (until 2026-12-06
        # "P50"/"P99" were the whole name's while the baseline was its population's median).
        same = _population_durations(s, report.spans)
        facts.append(Fact("population", _population_text(s, report.spans, len(same))))
        if same:
            facts += [Fact(f"population P{p}", fmt_ms(nearest_rank(same, p))) for p in (50, 90, 99)]
        if st is not None and st.count and st.count != len(same):
            facts.append(
                Fact(
                    f"every '{name}' span",
                    f"{st.count}: P50 {fmt_ms(st.p50)}, P90 {fmt_ms(st.p90)}, P99 {fmt_ms(st.p99)}, "
                    f"max {fmt_ms(st.max)}",
                )
            )
        for p in b.parts:
            if p.what == "preempted" and p.by_tid is not None:
                prio = p.by_prio if p.by_prio is not None else "unknown (its sched_switch line prints none)"
                facts.append(Fact("preempted by", f"{p.by_comm} TID {p.by_tid} prio {prio}{_policy(p)}"))
            if p.what == "blocked":
                facts.append(Fact("blocked", f"{p.state} {fmt_ms(p.duration)}: {p.detail}"))
                if isinstance(p.syscall, str):
                    facts.append(Fact("syscall", p.syscall))
                elif isinstance(p.syscall, NotAvailable):
                    facts.append(Fact("syscall", f"not available: {p.syscall.reason}"))
                facts += [Fact("waker chain", c) for c in p.chain]
        if b.migrations:
            facts.append(Fact("migrations", str(b.migrations)))
        if s.depth:
            facts.append(Fact("nesting depth", f"{s.depth} (inside {s.depth} other '{name}' span(s) of its thread)"))
        # The baseline is the user's objective (--slow-ms) when given: over it a span is a problem. Without
        # one the slowest spans are explained against their name's own median, as information.
        # Without an objective the span is worth a look (low) only where it stands out from its own population
        # (OUTLIER_FACTOR times its median); else it is the slowest of spans alike, explained as context (info): a
        # trace of 40 equal 50 ms spans had its median one as a "slow req span" to watch (review 7, G).
        over = slow is not None and s.duration > slow
        baseline: Baseline | None
        if slow is not None:
            title = f"slow {name} span: {fmt_ms(s.duration)}"
            severity = Severity.MEDIUM if over else Severity.LOW
            baseline = Baseline("the span's latency objective (--slow-ms)", fmt_ms(slow), "given on the command line")
        else:
            title, severity, baseline = _against_population(
                s, same, report.spans, bool(st is not None and st.count), facts
            )
        title += _incomplete(s, slow is None and not same)
        out.append(
            Finding(
                id=finding_id(FindingKind.SPAN_SLOW, name),
                kind=FindingKind.SPAN_SLOW,
                title=title,
                severity=severity,
                confidence=0.75 if b.note else 0.9,
                confidence_reason=b.note or "every part bounded by traced events",
                summary=explain(b),
                evidence=tuple(evidence),
                facts=tuple(_unique(facts)),
                next_steps=("open the Gantt PNG (--gantt-png) around this span",),
                detector="spans",
                subjects=(Subject(SubjectKind.SPAN, name),),
                baseline=baseline,
            )
        )
    return out


def _against_population(
    s: Span, same: list[float], spans: Sequence[Span], counted: bool, facts: list[Fact]
) -> tuple[str, Severity, Baseline | None]:
    """Without an objective: the title, severity and baseline of span ``s`` against the complete spans of its
    population (``same``, their sorted durations); the facts of the comparison are added to ``facts``."""
    # (``same`` holds the complete spans of its population: it is not among them when incomplete)
    alone = len(same) < 2 - bool(s.lost)
    median = nearest_rank(same, 50) if not alone else 0.0
    # A median of 0 (instant spans, or shorter than the clock's resolution: a fast path's enter/exit marks)
    # is no reason to compare nothing: a span that took time is over it by any factor (review 8, 12).
    ratio = s.duration / median if median > 0 else None
    outlier = not alone and s.duration > 0 and (ratio is None or ratio >= OUTLIER_FACTOR)
    severity = Severity.LOW if outlier else Severity.INFO
    title = f"{'slow' if outlier else 'slowest'} {s.name} span: {fmt_ms(s.duration)}"
    if alone:
        if same or not s.lost:  # (incomplete, with no complete one to compare: the title says so, with why)
            title += " (the only one of its kind: nothing to compare)"
    elif ratio is None:
        title += ", its population's median is 0 ms" if s.duration > 0 else ", as every one of its kind"
        facts.append(
            Fact("against its median", f"its population's median is 0 ms (an outlier from {OUTLIER_FACTOR:g}x)")
        )
    else:
        title += f", {ratio:.1f}x its median"
        facts.append(Fact("against its median", f"{ratio:.1f}x (an outlier from {OUTLIER_FACTOR:g}x)"))
    baseline = _population_baseline(s, spans) if counted and same else None
    return title, severity, baseline


def _incomplete(s: Span, nothing_to_compare: bool) -> str:
    """What a span's title adds when events were lost while it ran (Span.lost): "" when none were."""
    if not s.lost:
        return ""
    return " (incomplete: events lost while it ran" + (
        "; no complete span of its kind to compare with)" if nothing_to_compare else ")"
    )


#: How many times its population's median a span takes to stand out without an objective (--slow-ms): a tail a user
#: opens first; under it the slowest span of spans alike is context, not a problem.
OUTLIER_FACTOR = 2.0


def _explained(report: SpanReport, slow: float | None) -> dict[str, Breakdown]:
    """Per name, the slow span its finding explains."""
    # Per name, the span a finding explains: over an objective (--slow-ms), the longest; else the one furthest
    # over the median of its own population (name, kind, nesting depth): a program's outermost call, alone of its
    # kind, is not the slow request among its 20 calls of serve() (the project's cyg_profile recording).
    medians = _population_medians(report.spans) if slow is None else {}

    def weight(b: Breakdown) -> tuple[float, float]:
        median = medians.get(_population(b.span), 0.0)
        return (b.span.duration / median if median > 0 else 1.0, b.span.duration) if medians else (0.0, b.span.duration)

    by_name: dict[str, Breakdown] = {}
    for b in report.slow:
        cur = by_name.get(b.span.name)
        if cur is None or weight(b) > weight(cur):
            by_name[b.span.name] = b
    return by_name


def _population(span: Span) -> tuple[str, str, int]:
    """The spans a span is compared with: its name, kind and nesting depth."""
    return (span.name, span.kind, span.depth)


def _population_medians(spans: Sequence[Span]) -> dict[tuple[str, str, int], float]:
    """The median duration of each population of at least two spans (one span alone has nothing to be over)."""
    of: dict[tuple[str, str, int], list[float]] = {}
    for s in spans:
        if not s.lost:
            of.setdefault(_population(s), []).append(s.duration)
    return {k: nearest_rank(sorted(v), 50) for k, v in of.items() if len(v) > 1}


def _population_durations(span: Span, spans: Sequence[Span]) -> list[float]:
    """The sorted durations of the complete spans of ``span``'s name and kind at its nesting depth (``span`` among
    them unless events were lost while it ran: an incomplete span is measured, not a baseline)."""
    key = _population(span)
    return sorted(s.duration for s in spans if _population(s) == key and not s.lost)


def _population_text(span: Span, spans: Sequence[Span], count: int) -> str:
    """``the 20 'NAME' span(s) of KIND at nesting depth 1 in this trace`` (kind and depth said when they differ)."""
    of_name = [s for s in spans if s.name == span.name]
    nested = any(s.depth for s in of_name)
    kinds = len({s.kind for s in of_name}) > 1
    left = sum(1 for s in of_name if s.lost and _population(s) == _population(span))
    what = (
        f"the {count} {'complete ' if left else ''}'{span.name}' span(s)"
        if count
        else f"no complete '{span.name}' span"
    )
    what += f" of {span.kind}" if kinds else ""
    if nested:
        what += " outermost (nesting depth 0)" if span.depth == 0 else f" at nesting depth {span.depth}"
    what += " in this trace"
    if left:
        what += f" ({left} left out: events lost while they ran)"
    return what


def _population_baseline(span: Span, spans: Sequence[Span]) -> Baseline:
    """The median of the spans of ``span``'s name and kind at its nesting depth: an outer call is compared with
    outer calls of the same function, an inner one with inner ones (lttng_ust_cyg_profile's outermost call
    against the 0.115 ms median of every call of every function at every depth said nothing)."""
    same = _population_durations(span, spans)
    return Baseline(
        "median of " + _population_text(span, spans, len(same)),
        fmt_ms(nearest_rank(same, 50)),
        "the trace's own spans, same name, kind and nesting",
    )


def _unique(facts: list[Fact]) -> list[Fact]:
    seen: set[Fact] = set()
    out = []
    for f in facts:
        if f not in seen:
            seen.add(f)
            out.append(f)
    return out
