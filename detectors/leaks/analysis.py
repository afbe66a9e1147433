"""The leak analysis: sample tables in, verdicts, co-growth groups and findings out.

Pure: the caller loads the tables (from the slab-watch store, an import, or a
test) and gets back everything the renderers and plots need.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import pandas as pd

from detectors.leaks.attribution import in_sreclaimable, is_reclaimable
from detectors.leaks.cogrowth import find_groups
from detectors.leaks.decision import AGGREGATE_SHORT, HELD_RISE
from detectors.leaks.findings import (
    CITED_STEPS,
    FindingContext,
    StretchPart,
    cache_finding,
    clock_step_finding,
    coverage_finding,
    group_finding,
    held_finding,
    meminfo_finding,
    returned_finding,
)
from detectors.leaks.judge import ExcerptOf, evidence_samples, judge_column, judge_matrix, object_size, sample_ref
from detectors.leaks.meminfo import MEMINFO_FIELDS, UNACCOUNTED, decline_rate, last_value, with_unaccounted
from detectors.leaks.pagecache import page_cache_on
from detectors.leaks.power import power_of
from detectors.leaks.series import FloatArray, SeriesMatrix, counter_matrices, counter_units, slab_extent, slab_matrices
from forensics.model import Fact, Finding, FindingKind, LocatorKind, NotAvailable, Severity, finding_id
from forensics.types.leaks import (
    ClockStep,
    CoGrowth,
    ExaminedSeries,
    Grade,
    LeakAnalysis,
    LeakThresholds,
    Reboot,
    SampleGap,
    SampleRef,
    SeriesVerdict,
)
from forensics.types.prometheus import is_gap
from forensics.types.slab import CounterTable, SlabTable

#: Share of SUnreclaim's growth the flagged caches must explain for its finding to drop to info.
EXPLAINED_SHARE = 0.5


@dataclass(frozen=True)
class LeakInput:
    """What the analysis reads: slab rows, counter rows (meminfo), MemTotal, cache attributes.

    ``slabs`` has the columns of :data:`detectors.leaks.series.SLAB_COLUMNS` (or is the same samples
    as a :class:`~forensics.types.slab.SlabTable`, as the store reads them),
    ``counters`` those of :data:`detectors.leaks.series.COUNTER_COLUMNS`;
    ``reclaim_account`` maps cache names to their reclaim_account flag and
    ``aliases`` merged cache names to the /sys/kernel/slab directory they share.
    """

    slabs: pd.DataFrame | SlabTable
    counters: pd.DataFrame | CounterTable | None = None
    mem_total: int | NotAvailable = field(default_factory=lambda: NotAvailable("MemTotal was not given"))
    reclaim_account: Mapping[str, bool] = field(default_factory=dict)
    aliases: Mapping[str, str] = field(default_factory=dict)
    source: str = "<samples>"
    # Whether a finding whose stretch spans a gap in the samples says so (the Prometheus path says its own)
    gap_caveats: bool = True
    # Whether ``aliases`` is SLUB's merge topology as read (False: not read, as through Prometheus; findings say so)
    aliases_known: bool = True
    # Steps of the wall clock within a boot, the samples after each already placed on the uptime (detectors/leaks/
    # clock.py): said as an event, the figures across them measured by uptime
    clock_steps: tuple[ClockStep, ...] = ()
    # Where one boot's samples end and the next's begin (by boot id, or by the uptime going back)
    reboots: tuple[Reboot, ...] = ()
    # Whether every sample recorded its uptime: a hole where it passed as the wall clock did is no clock step
    uptime_known: bool = False


def cache_excerpt(matrix: SeriesMatrix) -> ExcerptOf:
    """The stored text of a cache sample: the start of its slabinfo line, as mm/slab_common.c prints it."""
    active, objects, raw = matrix.extra["active_objs"], matrix.extra["objects"], matrix.raw

    def excerpt(column: int, row: int) -> str:
        name = matrix.names[column]
        num = int(objects[row, column])
        size = round(raw[row, column] / num) if num else object_size(matrix, column)
        return f"{name:<17} {int(active[row, column]):6} {num:6} {size:6}"

    return excerpt


def counter_excerpt(matrix: SeriesMatrix, units: Mapping[str, str]) -> ExcerptOf:
    """The stored text of a meminfo sample, ``Name: value kB`` (the Unaccounted estimate cites MemFree)."""
    stored = matrix.extra["stored"]

    def excerpt(column: int, row: int) -> str:
        name = matrix.names[column]
        if name == UNACCOUNTED:
            name = "MemFree"
            column = matrix.column(name)
        return f"{name}: {int(stored[row, column])} {units.get(name, '')}".rstrip()

    return excerpt


#: vmstat counters that move when the kernel reclaims slab objects: the shrinkers, or drop_caches.
RECLAIM_COUNTERS = ("slabs_scanned", "drop_slab")


def reclaim_ran(counters: pd.DataFrame | CounterTable | None, boot_id: str) -> bool | None:
    """Whether the shrinkers ran during a boot's stretch (a reclaim counter moved); None when not recorded."""
    if counters is None or not len(counters):
        return None
    if isinstance(counters, CounterTable):
        counters = counters.frame(lambda source, name: source == "vmstat" and name in RECLAIM_COUNTERS)
    rows = counters[(counters["source"] == "vmstat") & counters["name"].isin(RECLAIM_COUNTERS)]
    rows = rows[rows["boot_id"].fillna("").astype(str) == boot_id]
    if rows.empty:
        return None
    spans = rows.groupby("name")["value"].agg(lambda v: int(v.max()) - int(v.min()))
    return bool((spans > 0).any())


def last_sample(matrix: SeriesMatrix, name: str, excerpt: ExcerptOf) -> SampleRef | None:
    """The last sample of a field that has a value, cited; None when it was never sampled."""
    if name not in matrix.names:
        return None
    refs = evidence_samples(matrix, matrix.column(name), -np.inf, excerpt)
    return next((r for r in refs if r.role == "last"), None)


def _mem_total(data: LeakInput, meminfo: list[SeriesMatrix]) -> float | None:
    if isinstance(data.mem_total, int) and data.mem_total > 0:
        return float(data.mem_total)
    return last_value(meminfo[-1], "MemTotal") if meminfo else None


def analyse(data: LeakInput, thresholds: LeakThresholds | None = None) -> LeakAnalysis:
    """Judge every cache and meminfo field, group co-growing caches and build the findings."""
    th = thresholds or LeakThresholds()
    # Without uptimes nothing measures the time across a step back of the wall clock: each side is judged apart
    # (a rate at 0.5 was given across one beside "cannot judge", ue23 #11).  With them the pipeline placed the
    # samples on the uptime (detectors/leaks/clock.py).
    apart = not data.uptime_known
    slab_mats = slab_matrices(data.slabs, th.min_growth / 2.0, apart) if len(data.slabs) else []
    mem_mats = counter_matrices(data.counters, apart=apart) if data.counters is not None and len(data.counters) else []
    mem_total = _mem_total(data, mem_mats)
    units = counter_units(data.counters)
    # The last MemAvailable read: the runway is the time left from it on (said with its sample).
    available_at = last_sample(mem_mats[-1], "MemAvailable", counter_excerpt(mem_mats[-1], units)) if mem_mats else None
    mem_available = None if available_at is None else available_at.value

    def reclaimable(name: str) -> bool:
        return is_reclaimable(name, data.reclaim_account)

    caches: list[SeriesVerdict] = []
    groups: list[CoGrowth] = []
    for matrix in slab_mats:
        excerpt = cache_excerpt(matrix)
        ran = reclaim_ran(data.counters, matrix.boot_id)
        same_boot = next((m for m in mem_mats if m.stretch == matrix.stretch), None)
        cached = None if same_boot is None else page_cache_on(same_boot, matrix.grid_walls)
        verdicts = judge_matrix(matrix, reclaimable, mem_total, th, excerpt, reclaim_ran=ran, page_cache=cached)

        def judge(
            column: int,
            m: SeriesMatrix = matrix,
            ex: ExcerptOf = excerpt,
            r: bool | None = ran,
            pc: FloatArray | None = cached,
        ) -> SeriesVerdict | None:
            return judge_column(m, column, reclaimable(m.names[column]), mem_total, th, ex, r, pc)

        found = find_groups(matrix, verdicts, judge, data.aliases, th.min_points)
        known = {v.name for v in verdicts}
        verdicts += [m for g in found for m in g.members if m.name not in known]
        caches += verdicts
        groups += found

    meminfo: list[SeriesVerdict] = []
    for plain in mem_mats:
        matrix, _missing = with_unaccounted(plain)
        excerpt = counter_excerpt(matrix, units)
        own_cache = page_cache_on(matrix, matrix.grid_walls)
        for info in MEMINFO_FIELDS:
            if info.name in matrix.names:
                field_th = dataclasses.replace(
                    th,
                    min_growth=max(th.min_growth, info.min_growth),
                    clear_growth=max(th.clear_growth, info.min_growth),
                    min_hours=max(th.min_hours, info.min_hours),
                    short_rise_undecided=th.short_rise_undecided and not info.min_growth,
                )
                judged = judge_column(
                    matrix,
                    matrix.column(info.name),
                    False,
                    mem_total,
                    field_th,
                    excerpt,
                    page_cache=own_cache,
                    aggregate=info.aggregate,
                )
                if judged is not None:
                    meminfo.append(judged)

    latest = mem_mats[-1] if mem_mats else None

    def mem_decline(since_wall: float) -> float | None:
        return decline_rate(latest, "MemAvailable", since_wall) if latest is not None else None

    gaps = sampling_gaps(slab_mats or mem_mats)
    ctx = FindingContext(
        data.source,
        mem_total,
        mem_available,
        data.aliases,
        data.reclaim_account,
        th,
        mem_decline=mem_decline,
        aliases_known=data.aliases_known,
        mem_available_at=available_at,
        gaps=gaps,
    )
    findings = _findings(caches, groups, meminfo, ctx, lambda name: in_sreclaimable(name, data.reclaim_account))
    if data.gap_caveats:
        findings = tuple(_gap_caveats(f, gaps) for f in findings)
    breaks = [Break(g.before, g.after, g.short(), g.said()) for g in gaps if g.apart]
    breaks += [Break(r.before, r.after, "a reboot", r.said()) for r in data.reboots if r.boot_changed]
    findings = tuple(_judged_apart(f, breaks) for f in findings)
    if data.clock_steps:
        refs_at, cited_name = _step_refs(data.clock_steps, slab_mats, mem_mats, units)
        findings += (clock_step_finding(data.clock_steps, data.source, cited_name, refs_at),)
    every = (*caches, *meminfo)
    refs, cited = _stretch_refs(slab_mats, mem_mats, units)
    samples, cache_names, walls = slab_extent(data.slabs)
    examined = ExaminedSeries(
        power=power_of(slab_mats or mem_mats, th, mem_total),
        caches=cache_names,
        # Series, not judgements: a cache judged in each of two boots is one cache ("8 caches (10 moved enough to
        # judge)", "12 meminfo series" of 6 fields)
        judged=len({v.name for v in caches}),
        meminfo=len({v.name for v in meminfo}),
        flagged=sum(1 for v in every if v.grade.rank >= Grade.SUSPECT.rank),
        undecided=sum(1 for v in every if v.grade is Grade.UNDECIDED),
        refs=refs,
        locator_name=cited,
        gaps=gaps,
        steps=data.clock_steps,
        reboots=data.reboots,
        uptime_known=data.uptime_known,
    )
    last = slab_mats[-1] if slab_mats else None
    return LeakAnalysis(
        caches=tuple(caches),
        groups=tuple(groups),
        meminfo=tuple(meminfo),
        findings=findings,
        boots=len({m.boot_id for m in slab_mats}),  # boots, not stretches: a boot cut at a step back is one
        samples=samples,
        cache_names=cache_names,
        first_wall=float(walls.min()) if len(walls) else NotAvailable("no slab samples"),
        last_wall=float(walls.max()) if len(walls) else NotAvailable("no slab samples"),
        mem_total=mem_total,
        mem_available=mem_available,
        mem_available_at=available_at,
        # One sample has no interval (sampling_interval's 1 s is a stand-in for the windows, not a measurement).
        interval_seconds=last.interval_seconds if last and len(last.walls) > 1 else _no_interval(last),
        window_seconds=last.window_seconds if last and len(last.walls) > 1 else _no_interval(last),
        examined=examined,
        explained=_explained(meminfo, findings),
        boot_ids=tuple(dict.fromkeys(m.boot_id for m in slab_mats or mem_mats)),
    )


def _explained(meminfo: list[SeriesVerdict], findings: tuple[Finding, ...]) -> frozenset[str]:
    """The meminfo series whose growth the leaking caches explain: their kernel-memory-leak finding is info."""
    severities = {f.id: f.severity for f in findings}
    return frozenset(
        v.name for v in meminfo if severities.get(finding_id(FindingKind.KERNEL_MEMORY_LEAK, v.name)) is Severity.INFO
    )


def sampling_gaps(matrices: list[SeriesMatrix]) -> tuple[SampleGap, ...]:
    """Each hole in a boot's samples (:func:`~forensics.types.prometheus.is_gap`'s rule): a suspend, a stopped sampler.

    The rule is the Prometheus path's: a store had only holes over 10 intervals and 300 s said, so a sampler
    stopped 79 s during a leak (5-s samples) went unsaid and the leak's rate was shown across it as plain fact.
    """
    out: list[SampleGap] = []
    for before, m in zip([None, *matrices], matrices, strict=False):
        if before is not None and m.part and len(before.walls) and len(m.walls):
            # Where a boot was cut at a step back no uptime measured (series.py): its sides were judged apart.
            walls = (float(before.walls[-1]), float(m.walls[0]))
            ids = int(before.sample_ids[-1]), int(m.sample_ids[0])
            out.append(SampleGap(*ids, walls[1] - walls[0], *walls, apart=True))
        steps = np.diff(m.walls)
        # A step back of the wall clock (samples are in the order taken): not a hole, but a figure across it is as
        # wrong; an NTP step of -1 h within a boot was no gap, and the store read "121 samples over 60 min" of 2 h.
        for i in np.flatnonzero(is_gap(steps, m.interval_seconds) | (steps < 0)).tolist():
            walls = (float(m.walls[i]), float(m.walls[i + 1]))
            out.append(SampleGap(int(m.sample_ids[i]), int(m.sample_ids[i + 1]), float(steps[i]), *walls))
    return tuple(out)


def _gap_caveats(finding: Finding, gaps: tuple[SampleGap, ...]) -> Finding:
    """The finding with a caveat for each gap inside the stretch its evidence spans: its rate is computed across.

    Its title says so too: the findings table shows titles only, and "grow together (215,550 KB/h)" read as a fact
    of a rate measured across a 72 s hole in the samples (the caveat was in the facts alone).
    """
    walls = [e.timestamp.seconds for e in finding.evidence if e.timestamp is not None]
    if not walls or finding.kind is FindingKind.LEAK_COVERAGE:
        return finding
    # A step back judged apart is no figure's: no stretch holds samples on both sides of it (_judged_apart).
    across = [g for g in gaps if not g.apart and max(g.start, g.end) > min(walls) and min(g.start, g.end) < max(walls)]
    if not across:
        return finding
    notes = [f"computed across {g.said()}" for g in across]
    worst = max(across, key=lambda g: (g.back, abs(g.seconds)))
    more = f" and {len(across) - 1} more" if len(across) > 1 else ""
    confidence, lowered = _confidence_across(finding.confidence, across, max(walls) - min(walls))
    return dataclasses.replace(
        finding,
        title=f"{finding.title} (measured across {worst.short()}{more}: not a fact)",
        facts=(*(Fact("caveat", n) for n in notes), *finding.facts),
        confidence=confidence,
        confidence_reason=finding.confidence_reason + "; the rate is " + "; ".join(notes) + lowered,
    )


class Break(NamedTuple):
    """Where the samples are cut into stretches judged apart: a reboot, or a step back no uptime measured."""

    before: int  # the last sample before it (store id)
    after: int  # the first after it
    short: str  # "a reboot", "a 29 s step back of the wall clock"
    said: str  # the whole of it, as the examined line says it


def _judged_apart(finding: Finding, breaks: list[Break]) -> Finding:
    """The finding, its title and facts saying so where its evidence cites samples on both sides of a break.

    A series found on both sides is two judgements merged by id: its rates are each side's, but the span of its
    evidence crosses the break.  The report read "for 89.0 s" of two 59-s stretches with a 29 s step back between
    them, and "Slab cache UDP grows 3,954 KB/h, too short to call ... 2.0 h" of two boots of 1 h each."""
    ids = [e.locator.start for e in finding.evidence if e.locator.kind is LocatorKind.SAMPLE]
    if not ids or finding.kind is FindingKind.LEAK_COVERAGE:
        return finding
    crossed = [b for b in breaks if min(ids) <= b.before and max(ids) >= b.after]
    if not crossed:
        return finding
    return dataclasses.replace(
        finding,
        title=f"{finding.title} (found on each side of {crossed[0].short}, judged apart: its span not a fact)",
        facts=(*(Fact("caveat", f"found on each side of {b.said}") for b in crossed), *finding.facts),
    )


#: The most a finding whose samples straddle a step back of the wall clock is believed: its times and rates are not.
ACROSS_STEP_CONFIDENCE = 0.5


def _confidence_across(confidence: float, across: list[SampleGap], span: float) -> tuple[float, str]:
    """The confidence of a finding whose evidence spans ``across``, and the words saying why it was lowered.

    A hole's seconds were not observed: the confidence is scaled by the share of the stretch that was (a leak may
    have stopped and another begun in a 31-min hole of 2 h: 0.92 was kept as if it had been seen).  Across a step
    back of the wall clock the times themselves are wrong: at most :data:`ACROSS_STEP_CONFIDENCE`."""
    hidden = sum(g.seconds for g in across if not g.back)
    observed = max(0.0, 1.0 - hidden / span) if span > 0 and hidden > 0 else 1.0
    value = confidence * observed
    said = [f"{1.0 - observed:.0%} of the stretch not observed"] if observed < 1.0 else []
    if any(g.back for g in across):
        value = min(value, ACROSS_STEP_CONFIDENCE)
        said.append("its times not facts")
    value = round(value, 2)
    if value >= confidence:
        return confidence, ""
    return value, f"; confidence lowered from {confidence:.2f} ({', '.join(said)})"


def _no_interval(last: SeriesMatrix | None) -> NotAvailable:
    return NotAvailable("no slab samples" if last is None else "a single sample has none")


def _cited_line(
    memory: SeriesMatrix | None, cache: SeriesMatrix | None, units: Mapping[str, str]
) -> tuple[SeriesMatrix, int, ExcerptOf, str] | None:
    """What samples of a stretch are cited by: the MemTotal line of its meminfo, else its first cache's slabinfo line
    (matrix, column, excerpt, locator name); None without either."""
    if memory is not None:
        return memory, memory.column("MemTotal"), counter_excerpt(memory, units), "meminfo:MemTotal"
    if cache is not None and cache.names:
        return cache, 0, cache_excerpt(cache), cache.names[0]
    return None


def _stretch_refs(
    slab_mats: list[SeriesMatrix], mem_mats: list[SeriesMatrix], units: Mapping[str, str]
) -> tuple[tuple[SampleRef, ...], str]:
    """The first and last sample of the longest stretch: its MemTotal line, or its first cache's slabinfo line."""
    longest = max(slab_mats or mem_mats, key=lambda m: len(m.walls), default=None)
    if longest is None:
        return (), ""
    memory = next((m for m in mem_mats if m.stretch == longest.stretch and "MemTotal" in m.names), None)
    # By identity: a dataclass's == compares the sample arrays, and two stretches of one boot differ only there.
    cited = _cited_line(memory, longest if any(longest is m for m in slab_mats) else None, units)
    if cited is None:
        return (), ""
    matrix, column, excerpt, name = cited
    refs = evidence_samples(matrix, column, -np.inf, excerpt)
    return tuple(r for r in refs if r.role in ("first", "last")), name


def _step_refs(
    steps: tuple[ClockStep, ...], slab_mats: list[SeriesMatrix], mem_mats: list[SeriesMatrix], units: Mapping[str, str]
) -> tuple[tuple[SampleRef, ...], str]:
    """The samples on both sides of the first steps of the wall clock: their MemTotal line, or a cache's."""
    ids = {i for s in steps[:CITED_STEPS] for i in (s.before, s.after)}
    # The boot the first step is in: its samples hold it (each boot's stretch is a matrix of its own).
    memory = next((m for m in mem_mats if "MemTotal" in m.names and steps[0].after in m.sample_ids), None)
    cited = _cited_line(memory, next((m for m in slab_mats if steps[0].after in m.sample_ids), None), units)
    if cited is None:
        return (), ""
    matrix, column, excerpt, name = cited
    rows = [r for r, i in enumerate(matrix.sample_ids.tolist()) if i in ids and not np.isnan(matrix.raw[r, column])]
    return tuple(sample_ref(matrix, column, r, "step", excerpt) for r in rows), name


def _findings(
    caches: list[SeriesVerdict],
    groups: list[CoGrowth],
    meminfo: list[SeriesVerdict],
    ctx: FindingContext,
    in_sreclaimable: Callable[[str], bool],
) -> tuple[Finding, ...]:
    grouped = {(m.stretch, m.name) for g in groups for m in g.members}
    out = [group_finding(g, ctx) for g in groups]
    held = [f for v in caches if (f := held_finding(v, ctx)) is not None and (v.stretch, v.name) not in grouped]
    out += [
        cache_finding(v, ctx)
        for v in caches
        if v.grade is not Grade.STABLE and v.verdict.rule != HELD_RISE and (v.stretch, v.name) not in grouped
    ]
    out += held
    out += [f for v in caches if v.grade is Grade.STABLE and (f := returned_finding(v, ctx)) is not None]
    for v in meminfo:
        if v.grade.rank < Grade.SUSPECT.rank and v.grade is not Grade.UNDECIDED:
            continue
        explained: tuple[str, ...] = ()
        share = 0.0
        flagged_rate = 0.0
        parts: tuple[StretchPart, ...] = ()
        if v.name == "SUnreclaim":
            # Flagged caches, and every member of a flagged group (small partners included).
            in_groups = {(m.stretch, m.name) for g in groups if g.grade.rank >= Grade.SUSPECT.rank for m in g.members}
            # Growth too brief to call is explained by caches growing too briefly to call (TIME_WAIT sockets
            # filling), not left to a looser reading.  A sum growing fast over a stretch too short for its caches
            # (aggregate-short) is explained away only by caches called on their own; the others are named below.
            brief = v.grade is Grade.UNDECIDED and v.verdict.rule != AGGREGATE_SHORT
            flagged = [
                c
                for c in caches
                if c.stretch == v.stretch
                and not in_sreclaimable(c.name)  # counted where the kernel counts it, reclaimable or not
                and (
                    c.grade.rank >= Grade.SUSPECT.rank
                    or (c.stretch, c.name) in in_groups
                    or (brief and c.grade is Grade.UNDECIDED)
                )
            ]
            flagged_rate = sum(max(c.rate, 0.0) for c in flagged)
            share = flagged_rate / v.rate if v.rate > 0 else 0.0
            if flagged and share >= EXPLAINED_SHARE:
                explained = tuple(c.name for c in flagged)
            elif v.grade.rank >= Grade.SUSPECT.rank or v.verdict.rule == AGGREGATE_SHORT:
                parts = stretch_parts(v, [c for c in caches if c.stretch == v.stretch and not in_sreclaimable(c.name)])
        out.append(meminfo_finding(v, ctx, explained, share, flagged_rate, parts))
    by_id: dict[str, Finding] = {}
    for f in out:
        known = by_id.get(f.id)
        by_id[f.id] = f if known is None else known.merged_with(f)
    return tuple(by_id.values())


def grown_since(v: SeriesVerdict, since_wall: float) -> float:
    """A series' growth from ``since_wall`` on: its last window median less its first from there (bytes)."""
    values = v.grid_values[v.grid_walls >= since_wall]
    values = values[~np.isnan(values)]
    return float(values[-1] - values[0]) if len(values) >= 2 else 0.0


#: At most this many caches are named as a sum's parts.
MAX_PARTS = 5


def stretch_parts(total: SeriesVerdict, caches: list[SeriesVerdict]) -> tuple[StretchPart, ...]:
    """The caches that grew most over a sum's judged stretch (whatever their own grade), largest first.

    As many as explain EXPLAINED_SHARE of its growth (at most MAX_PARTS); all of those that grew when fewer.
    Growth, not rates: each cache's own judged part may start elsewhere (a late onset), the same stretch does not.
    """
    grown = sorted(((c, grown_since(c, total.since_wall)) for c in caches), key=lambda pair: pair[1], reverse=True)
    out: list[StretchPart] = []
    summed = 0.0
    for cache, growth in grown[:MAX_PARTS]:
        if growth <= 0:
            break
        out.append(StretchPart(cache.name, growth, cache.grade))
        summed += growth
        if summed >= EXPLAINED_SHARE * total.growth:
            break
    return tuple(out)


def end_of_run_findings(data: LeakInput) -> tuple[Finding, ...]:
    """The leak findings of a run's samples, the last (info) saying what was examined and could have shown."""
    analysis = analyse(data)
    if not len(data.slabs):
        return analysis.findings  # nothing the leak analysis is about was sampled: no statement of coverage
    return (*analysis.findings, coverage_finding(analysis.examined, data.source))
