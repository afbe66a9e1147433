"""Turning verdicts into findings: rate, growth, linearity, projection, evidence samples, next steps."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from detectors.leaks.attribution import attribution_for, describe_aliases, generic_confirm_steps, merged_names
from detectors.leaks.decision import (
    AGGREGATE_SHORT,
    HELD_RISE,
    RETURNED,
    WITH_PAGE_CACHE,
    rule_baseline,
)
from detectors.leaks.meminfo import field_info
from forensics import model
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
    finding_id,
)
from forensics.types.leaks import (
    RETURNED_RISING,
    ClockStep,
    CoGrowth,
    ExaminedSeries,
    Grade,
    LeakThresholds,
    Power,
    SampleGap,
    SampleRef,
    SeriesVerdict,
    duration,
    duration_up,
    kb_per_hour_up,
)
from forensics.units import iso_utc

DETECTOR = "leaks"
SEVERITY = {
    Grade.LEAK: Severity.HIGH,
    Grade.SUSPECT: Severity.MEDIUM,
    Grade.RECLAIMABLE: Severity.INFO,
    Grade.GIVEN_BACK: Severity.INFO,
    Grade.UNDECIDED: Severity.INFO,
}


@dataclass(frozen=True)
class FindingContext:
    """What every leak finding needs besides its verdict."""

    source: str  # the store, as evidence source
    mem_total: float | None
    mem_available: float | None  # last MemAvailable of the latest boot, bytes
    aliases: Mapping[str, str]
    reclaim_account: Mapping[str, bool] = field(default_factory=dict)  # the flags read (/sys/kernel/slab)
    thresholds: LeakThresholds = field(default_factory=LeakThresholds)  # the rules' numbers, for the baselines
    # MemAvailable's measured decline (bytes/h) in the latest boot from a wall time on, None where it did not fall
    mem_decline: Callable[[float], float | None] | None = None
    # False where the samples came without SLUB's merge topology (Prometheus: node_exporter and slab-watch's
    # textfile export none), so that a cache shown may hold caches merged into it, unsaid
    aliases_known: bool = True
    mem_available_at: SampleRef | None = None  # the last MemAvailable read (``mem_available`` is its value)
    gaps: tuple[SampleGap, ...] = ()  # the holes in the samples (a figure across or from inside one is not a fact)

    def merges_unknown(self, names: Sequence[str]) -> tuple[Fact, ...]:
        """The fact that which caches SLUB merged into ``names`` is not known, where it is not (else none)."""
        if self.aliases_known:
            return ()
        which = ", ".join(names)
        first = names[0]
        return (
            Fact(
                "merged caches",
                f"not known: these samples carry no SLUB merge topology (node_exporter and slab-watch's textfile "
                f"export none); SLUB merges caches of one object size and flags, so {which} may also hold other "
                f"caches' objects (signal_cache holds UNIX sockets on many kernels); on the host: ls -l "
                f'/sys/kernel/slab/ | grep "$(readlink /sys/kernel/slab/{first})"',
            ),
        )

    def runway(self, rate: float, grade: Grade, since_wall: float) -> str | NotAvailable:
        """How long until MemAvailable runs out, from its last read on: at its measured decline over the leak's
        stretch where it fell, else at the leak's rate."""
        declined = self.mem_decline(since_wall) if self.mem_decline is not None else None
        return exhaustion(rate, self.mem_available, grade, declined, since_wall, self.mem_available_at)

    def baseline(self, v: SeriesVerdict) -> Baseline:
        """What the rule that graded ``v`` judged it against (information: the leak bar it made it information
        before)."""
        return rule_baseline(v.name, v.verdict.rule, self.thresholds)


def kb(value: float) -> str:
    """Bytes as ``1,234 KB``."""
    return f"{value / 1024:,.0f} KB"


def when(wall: float) -> str:
    """A wall clock time as ISO 8601 UTC."""
    return iso_utc(wall)


#: Grades whose growth is projected to MemAvailable's end: a leak's.  A reclaimable cache is given back
#: before that (MemAvailable counts it), and a ramp too brief to call extrapolated is not a figure to act on.
PROJECTED = (Grade.LEAK, Grade.SUSPECT)


def _hours_text(hours: float) -> str:
    return f"{hours:,.1f} h" if hours < 48 else f"{hours / 24:,.1f} days"


def exhaustion(
    rate: float,
    mem_available: float | None,
    grade: Grade = Grade.LEAK,
    declined: float | None = None,
    since_wall: float | None = None,
    at: SampleRef | None = None,
) -> str | NotAvailable:
    """How long until MemAvailable runs out at ``rate`` bytes/h (projected for leaking or suspect growth only),
    counted from its last read (``mem_available``, read in sample ``at``, said): the time left from then on.

    Where MemAvailable's own decline over the leak's stretch was measured (``declined``, bytes/h), that is the
    figure: it counts what grows with the leak that the leak's rate leaves out (page tables, memory the objects
    point to), and the leak's rate is said beside it.  The stretch the decline was measured over is not where the
    time left is counted from: "(7,882 KB/h since 20:26:39; ...)" read as a runway from the leak's start."""
    if grade not in PROJECTED:
        return NotAvailable(f"not projected: {grade.value}")
    if mem_available is None:
        return NotAvailable("MemAvailable was not sampled")
    if rate <= 0:
        return NotAvailable("the series does not grow")
    left = f"{mem_available / 2**20:,.0f} MiB"
    said = (
        f" (MemAvailable {left})"
        if at is None
        else f", counted from the last MemAvailable read ({left} at {when(at.wall)}, sample {at.sample_id})"
    )
    if declined is not None and declined > 0:
        since = f", measured since {when(since_wall)}" if since_wall is not None else ""
        return (
            f"{_hours_text(mem_available / declined)} at MemAvailable's measured decline ({kb(declined)}/h{since}; "
            f"{_hours_text(mem_available / rate)} at the leak's own rate){said}"
        )
    return f"{_hours_text(mem_available / rate)} at this rate{said}"


#: MemAvailable under this share of MemTotal at the last sample is memory used up.
EXHAUSTED_SHARE = 0.05


def exhausted(ctx: FindingContext) -> str:
    """Whether memory was used up at the last sample (``yes: ...``/``no: ...``), or why it is unknown."""
    if ctx.mem_available is None or not ctx.mem_total:
        return "unknown: MemAvailable or MemTotal was not sampled"
    share = ctx.mem_available / ctx.mem_total
    said = (
        f"MemAvailable {ctx.mem_available / 2**20:,.0f} MiB of {ctx.mem_total / 2**20:,.0f} MiB ({share:.0%}) "
        "at the last sample"
    )
    return ("yes: " if share < EXHAUSTED_SHARE else "no: ") + said


def sample_evidence(source: str, locator_name: str, refs: tuple[SampleRef, ...]) -> tuple[Evidence, ...]:
    """Evidence citing stored samples (SAMPLE locators: the sample id, the cache or ``meminfo:FIELD``)."""
    return tuple(
        Evidence(
            source=source,
            locator=Locator(LocatorKind.SAMPLE, ref.sample_id, name=locator_name),
            excerpt=ref.excerpt,
            timestamp=Timestamp(ref.wall, Clock.WALL),
        )
        for ref in refs
    )


def _reclaim_note(v: SeriesVerdict) -> str:
    """What reclaim can free of a reclaimable series: all of it, or only its unused objects."""
    return " (reclaimable only where unused)" if attribution_for(v.name).pinned_by else " (reclaimable)"


def _judged_by_name(v: SeriesVerdict) -> str:
    """What the table made of a cache whose flag was not read: ``not reclaimable (sockets, by its name)``."""
    who = attribution_for(v.name)
    if not who.known:
        return "not reclaimable (a cache of no known kind)"
    return ("reclaimable" if v.reclaimable else "not reclaimable") + f" ({who.subject}, by its name)"


def _flag_unknown(v: SeriesVerdict, read: int) -> str:
    """What is said of a cache whose reclaim_account flag was not read: unknown, why, and what was judged instead.

    ``read``: how many caches' flags the samples carry.  None at all: the samples hold no /sys/kernel/slab
    (slab-import, node_exporter); some: slab-watch read /sys/kernel/slab when its run started, and this cache
    was not there then (a module loaded or a filesystem mounted since) or its flag could not be read.
    """
    judged = _judged_by_name(v)
    if read:
        why = (
            f"no flag was recorded for it, though the samples carry {read:,} caches' flags (slab-watch reads "
            "/sys/kernel/slab when its run starts: a cache created since, or whose flag could not be read, has none)"
        )
    else:
        why = (
            "the samples carry no flag for it (snapshots imported by slab-import and node_exporter's series do not "
            "hold /sys/kernel/slab)"
        )
    return f"unknown: {why}; judged {judged}"


def reclaimable_known(v: SeriesVerdict, ctx: FindingContext) -> str:
    """Whether the kernel frees a cache under pressure, as far as was read: its flag, else unknown and why.

    Said of a cache given back (rule given-back, which rule reclaimable leaves only caches not judged reclaimable):
    its owners freed it, or reclaim did, and the flag read (/sys/kernel/slab reclaim_account, SLAB_RECLAIM_ACCOUNT)
    is all the samples tell of which.
    """
    flag = ctx.reclaim_account.get(v.name)
    if flag is None:
        return f"unknown: no reclaim_account flag was read for it (see reclaim_account); judged {_judged_by_name(v)}"
    if not flag:
        return "no: its reclaim_account flag is 0 (read from /sys/kernel/slab)"
    held = attribution_for(v.name).pinned_by
    # is_reclaimable: a flag of 1 is judged reclaimable unless the table knows the objects' owners hold them.
    return "no: its reclaim_account flag is 1 (counted in SReclaimable), but " + (held or "not judged reclaimable")


#: A fall of at most this share of the rise before it is jitter between samples, not memory given back.
JITTER_FALL = 0.05


def _jitter(v: SeriesVerdict) -> bool:
    """Whether the series' largest fall is jitter: at most :data:`JITTER_FALL` of the rise before it, or of the series'
    growth -- a fall of 12 KB in the flat samples before a leak's onset is "100% of its rise before it" (that rise
    being 12 KB of scatter) while the leak grew 10 MB and never fell (a late-onset store, 2026-12-07)."""
    fall = v.fall
    if fall is None:
        return True
    return fall.share <= JITTER_FALL or (v.growth > 0 and fall.top.value - fall.bottom.value <= JITTER_FALL * v.growth)


def given_back(v: SeriesVerdict) -> str:
    """Whether the series gave memory back: ``no: ...`` when its largest fall is jitter, else ``yes: ...`` naming it.

    Read by the incident's verdict (detectors/incident/hypotheses.py): "never given back" is said only of a "no".
    """
    fall = v.fall
    if fall is None:
        return f"no: {v.name} never fell between two samples after rising"
    if fall.share <= JITTER_FALL:
        return f"no: the largest fall of {v.name} between samples was {fall.share:.0%} of its rise before it"
    if _jitter(v):
        return (
            f"no: the largest fall of {v.name} between samples was {kb(fall.top.value - fall.bottom.value)}, "
            f"{(fall.top.value - fall.bottom.value) / v.growth:.1%} of its growth of {kb(v.growth)} (scatter)"
        )
    return (
        f"yes: {v.name} fell from {kb(fall.top.value)} (sample {fall.top.sample_id}, {when(fall.top.wall)}) to "
        f"{kb(fall.bottom.value)} (sample {fall.bottom.sample_id}, {when(fall.bottom.wall)}), {fall.share:.0%} of "
        "its rise before it"
        + ("" if fall.floor is None else f" (from {kb(fall.floor.value)}, sample {fall.floor.sample_id})")
    )


def _fall_refs(v: SeriesVerdict) -> tuple[SampleRef, ...]:
    """The samples of a fall the finding names (not jitter), those not cited already."""
    fall = v.fall
    if fall is None or _jitter(v):
        return ()
    cited = {r.sample_id for r in v.samples}
    named = (fall.top, fall.bottom) if fall.floor is None else (fall.floor, fall.top, fall.bottom)
    return tuple(r for r in named if r.sample_id not in cited)


def _episode_refs(refs: tuple[SampleRef, ...], since_wall: float, grade: Grade) -> tuple[SampleRef, ...]:
    """A leak's cited samples from its onset on: the report's timeline starts a finding at its earliest evidence,
    and a fall before a late onset (an earlier burst given back) or a member's sample from before the group's anchor
    grew placed a leak that began 05:22 at 05:01.  The words of the facts still name them.  Other grades keep all:
    their fall is what they are about."""
    if grade not in PROJECTED:
        return refs
    kept = tuple(r for r in refs if r.wall >= since_wall)
    return kept or refs[-1:]


#: What a slab cache's figures measure, said in its finding: slab-watch's summary counts objects in use (active_objs
#: x objsize) and the samples differ from window medians, so one cache read "+1.5 MiB" there, "2,242 KB (589 KB -> ...)"
#: here and "579 KB (sample 1)" beside it, none saying which it was.
SLAB_MEASURE = (
    "slab memory: num_objs × objsize (slabtop's OBJS × OBJ SIZE, objects in use or free); growth from window "
    "medians, samples as read"
)


def _from_first_sample(m: SeriesVerdict) -> bool:
    """Whether a member's judged rise starts at its stretch's first window: no onset is in its samples (nothing
    flat to rise from), the rise began at or before the store's first sample.  A late part starts at a later
    window's edge, past the first window's centre."""
    return m.onset is None and len(m.grid_walls) > 0 and m.since_wall <= float(m.grid_walls[0])


def _first_sample(m: SeriesVerdict) -> SampleRef | None:
    return min(m.samples, key=lambda r: r.wall, default=None)


def group_since(g: CoGrowth) -> float:
    """Where the group's rise began: the store's first sample when a member rises from it (the group rose at or
    before it), else its earliest member onset's last sample at the level; the anchor's judged part without either."""
    if any(_from_first_sample(m) for m in g.members):
        return min(m.origin_wall for m in g.members)
    onsets = [m.onset.before.wall for m in g.members if m.onset is not None]
    return min(onsets, default=g.members[0].since_wall)


def _group_onset(g: CoGrowth) -> list[Fact]:
    """The group's onset: its earliest member's (the members grow together; a cache others use much, such as
    vm_area_struct, shows the rise only once it stands out of its own scatter: /tmp/ue9 v1, 20 s after the shmem
    inodes and files of the same mappings).  A member rising from the store's first sample has no onset: the group
    rose at or before the store began, never at a later member's step (the UDP-leak workload: UDP rose from sample
    1, the onset said proc_inode_cache's step after sample 6; /tmp/ue13 finding 2)."""
    early = [m for m in g.members if _from_first_sample(m)]
    if early:
        m = early[0]  # the anchor when it is one of them: members are anchor first
        first = _first_sample(m)
        at = "" if first is None else f": {iso_utc(first.wall)} (sample {first.sample_id})"
        return [Fact("onset", f"{m.name} rising from the first sample (before the store began: onset not seen){at}")]
    risen = [m for m in g.members if m.onset is not None]
    if not risen:
        return []
    first_risen = min(risen, key=lambda m: (m.onset.after.wall if m.onset is not None else 0.0, m.name))
    assert first_risen.onset is not None
    return [Fact("onset", f"{first_risen.name} {first_risen.onset.said()}")]


def _series_facts(v: SeriesVerdict, ctx: FindingContext) -> list[Fact]:
    f = v.features
    persistence = "n/a (first half flat)" if f.persistence is None else f"{f.persistence:.2f}"
    # One unit for the interval: "267,956 KB–374,515 KB/h" read its lower bound as an amount.
    fitted = f"{kb(v.rate)}/h (90% CI {f.ts_low / 1024:,.0f}–{kb(f.ts_high)}/h, Theil–Sen)"
    e = v.again
    rated_for = f.span_hours * 3600.0  # the seconds the rate is measured over
    if e is not None:
        rated_for = e.again_for
        gap = fell_in_gap(v, ctx.gaps)
        # A window that begins in the gap is centred there: its time is no sample's, so it is not said.
        at = "" if e.back_wall is None or gap is not None else f" ({when(e.back_wall)})"
        fitted = (
            f"{kb(v.rate)}/h over the {duration(e.again_for)} from its lowest window median after it fell back near"
            f" its baseline{at} to its last: it rose {kb(e.again)} in that time, not over the stretch"
        )
        if gap is not None:
            fitted += (
                f"; it fell back during {gap.said()}: the fall was not observed, only its level after it, and the"
                " rate is of the samples after the gap"
            )
    facts = [
        Fact("growth rate", fitted),
        Fact(
            "total growth",
            f"{kb(v.growth)} over {duration(f.span_hours * 3600.0)} (first to last window median: {kb(f.first)} →"
            f" {kb(f.last)})",
        ),
        Fact("linearity", f"r² {f.r2:.2f}, Kendall tau {f.tau:.2f}, persistence {persistence}"),
        Fact(
            "reclaim",
            f"largest drawdown {f.drawdown:.0%} of the range; rolling minima grow {kb(f.minima_slope)}/h"
            + (_reclaim_note(v) if v.reclaimable else ""),
        ),
    ]
    if ctx.mem_total:
        share = f"{v.rate * 24 / ctx.mem_total:.3%} per day"
        if rated_for < 24 * 3600.0:
            # A day's share from seconds of samples is an extrapolation, not a figure read (ue21 #10: "65.737% per
            # day" of 40 s of samples).
            share += f" if it went on at this rate (extrapolated from {duration(rated_for)} of samples)"
        facts.append(Fact("share of MemTotal", share))
    facts.append(Fact("MemAvailable runs out in", str(ctx.runway(v.rate, v.grade, v.since_wall))))
    facts.append(Fact("memory exhausted", exhausted(ctx)))
    facts.append(Fact("given back", given_back(v)))
    facts.append(
        Fact(
            "judged from",
            f"{when(v.since_wall)}, {f.points} window medians"
            + (", 24-hour means (daily cycle)" if f.daily_cycle else ""),
        )
    )
    if v.onset is not None:
        facts.append(Fact("onset", v.onset.said()))
    for ref in v.samples:
        facts.append(Fact(f"{ref.role} sample", f"{when(ref.wall)}: {kb(ref.value)} (sample {ref.sample_id})"))
    facts.append(Fact("rule", f"{v.verdict.rule}: {v.verdict.reason}"))
    return facts


def short_late_rise(v: SeriesVerdict, th: LeakThresholds) -> str | None:
    """The caveat of a leak or suspicion judged on a rise that began late in the store and lasts under
    ``short_hours`` (None otherwise): how long it has risen, and when to look again.

    A responder runs ``leaks`` right after memory started going: the rise is the store's last minutes, a steady
    ramp over them, and a burst that will be given back looks the same until it stops."""
    if v.onset is None or v.grade not in PROJECTED or v.features.span_hours >= th.short_hours:
        return None
    risen = max((r.wall for r in v.samples), default=v.onset.after.wall) - v.onset.before.wall
    wait = max(300.0, risen)  # as long again as it has risen, at least 5 min: a burst stops within that
    look = math.ceil((risen + wait) / 60.0 + 1.0)
    return (
        f"rising for the last {duration(risen)} only (from {when(v.onset.before.wall)}): too short to tell a leak "
        f"from a burst that is given back; keep slab-watch recording and run `kforensic leaks --last {look}m` again "
        f"in {duration(wait)}"
    )


def harm_severity(rate: float, grade: Grade, late_and_short: bool, ctx: FindingContext) -> Severity:
    """A leak called on a short late rise is as severe as the harm its rate does: high when it would take
    ``short_share_per_day`` of MemTotal a day or MemAvailable within a day (``RUNWAY_HOURS``), medium otherwise;
    where neither was sampled, its grade's severity."""
    severity = SEVERITY[grade]
    if not late_and_short or grade is not Grade.LEAK or rate <= 0:
        return severity
    known = [
        *([rate * 24.0 / ctx.mem_total >= ctx.thresholds.short_share_per_day] if ctx.mem_total else []),
        *([ctx.mem_available / rate < RUNWAY_HOURS] if ctx.mem_available is not None else []),
    ]
    return severity if not known or any(known) else Severity.MEDIUM


#: A late, short leak that would use up MemAvailable within this many hours is high.
RUNWAY_HOURS = 24.0
#: The most a leak called on a short late rise is believed: a burst given back looks the same until it stops.
SHORT_RISE_CONFIDENCE = 0.7


def _confidence(v: SeriesVerdict) -> tuple[float, str]:
    f = v.features
    coverage = min(1.0, f.points / 24.0)
    if v.grade is Grade.LEAK:
        value = 0.5 + 0.45 * min(f.tau, f.r2, coverage)
    elif v.grade is Grade.SUSPECT:
        value = 0.3 + 0.3 * max(0.0, min(f.tau, 1.0)) * coverage
    else:
        value = 0.6
    reason = (
        f"Kendall tau {f.tau:.2f}, r² {f.r2:.2f} over {f.points} window medians ({duration(f.span_hours * 3600.0)})"
    )
    return round(min(max(value, 0.0), 1.0), 2), reason


def _beside(v: SeriesVerdict) -> str:
    """The words " with the page cache" when that is why the growth is not called yet."""
    return " with the page cache" if v.verdict.rule == WITH_PAGE_CACHE else ""


def fell_in_gap(v: SeriesVerdict, gaps: Sequence[SampleGap]) -> SampleGap | None:
    """The gap in the samples between a series' peak and the lowest window median after it, where it rose, fell
    back near its baseline and rose again (rule returned-rising-again): its fall is then not observed."""
    e = v.excursion
    if e is None or e.peak_wall is None or e.back_wall is None:
        return None
    peak, back = e.peak_wall, e.back_wall
    return next((g for g in gaps if not g.back and g.end > peak and g.start < back), None)


def grows(v: SeriesVerdict, th: LeakThresholds) -> str:
    """How a growing series is said in a title: "grows 1,234 KB/h"; where it fell back near its baseline and
    rose again (its rate is that of the rise again only), "rose 7,875 KB in 40 s after it fell back": "grows
    676,100 KB/h" stood beside "total growth: -3,197 KB" (ue21 #10); where it gave back more of its range than a
    leak may (``th.max_leak_drawdown``), "moves up and down (+76,209 KB/h fitted, gave back 100% of its rise)":
    its fitted slope is no growth it kept (ue24 F7: "grows 76,209 KB/h" of a series back below its start)."""
    e = v.again
    if e is not None:
        return f"rose {kb(e.again)} in {duration(e.again_for)} after it fell back"
    if v.features.drawdown > th.max_leak_drawdown:
        fall = v.fall
        back = (
            f"{v.features.drawdown:.0%} of its range"
            if fall is None or _jitter(v)
            else f"{min(fall.share, 1.0):.0%} of its rise"
        )
        return f"moves up and down ({v.rate / 1024:+,.0f} KB/h fitted, gave back {back})"
    return f"grows {kb(v.rate)}/h"


def _net(v: SeriesVerdict) -> str:
    """A series' net growth over its stretch, a fall said as one ("grew -3,197 KB" read as growth)."""
    return f"grew {kb(v.growth)}" if v.growth >= 0 else f"fell {kb(-v.growth)}"


def _growth_said(v: SeriesVerdict, rate: str) -> str:
    """The start of a finding's summary: the net growth over the stretch, and the rate where it is the stretch's."""
    span = duration(v.features.span_hours * 3600.0)
    if v.verdict.rule == RETURNED_RISING:  # its rate is of the rise again, not of the stretch: said in its facts
        return f"{v.name} {_net(v)} in {span}"
    return f"{v.name} {_net(v)} in {span}, {rate}"


def _member_grade(m: SeriesVerdict, g: CoGrowth, index: int) -> str:
    """A member's grade in its group: a cache that would be reclaimable when unused, growing in step with a leak,
    is held by the leak's objects (a leaked socket's dentry), not "growing but reclaimable"; where only part of its
    growth is the group's (its share), only that part is said held."""
    pinned = attribution_for(m.name).pinned_by
    if m.grade is Grade.RECLAIMABLE and pinned and g.grade in (Grade.LEAK, Grade.SUSPECT):
        part = "" if g.share(index).fraction == 1.0 else "its share "
        return f"grows in step with the group, {part}held by its objects ({pinned})"
    return m.grade.value


def held_by_process(what: str, held: bool) -> tuple[Subject, ...]:
    """The subject saying a process holds the objects (``what``: "UDP sockets"), which the report's verdict reads:
    kernel memory a process keeps open is the process's doing, not the kernel's problem."""
    return (Subject(SubjectKind.HELD_BY_PROCESS, what),) if held else ()


def cache_finding(v: SeriesVerdict, ctx: FindingContext) -> Finding:
    """The finding for one flagged slab cache."""
    who = attribution_for(v.name)
    alias = describe_aliases(v.name, ctx.aliases)
    rate = f"{kb(v.rate)}/h"
    titles = {
        Grade.LEAK: f"Slab cache {v.name} leaks {rate} ({who.subject})",
        Grade.SUSPECT: f"Slab cache {v.name} grows {rate}: leak suspected ({who.subject})",
        Grade.RECLAIMABLE: f"Slab cache {v.name} grows {rate} but is reclaimable"
        + (" where unused" if who.pinned_by else "")
        + f" ({who.subject})",
        Grade.GIVEN_BACK: f"Slab cache {v.name} grows {rate} but gave back {v.features.drawdown:.0%} of its range "
        f"({who.subject})",
        Grade.UNDECIDED: f"Slab cache {v.name} {grows(v, ctx.thresholds)}{_beside(v)}, too short to call "
        f"({who.subject})",
    }
    facts = _series_facts(v, ctx)
    if v.objects_rate is not None and v.objsize:
        in_use = f", {v.active_rate:,.0f}/h in use" if v.active_rate is not None else ""
        facts.insert(1, Fact("objects", f"{v.objects_rate:,.0f} objects/h of {v.objsize} bytes{in_use}"))
    facts.insert(0, Fact("measured as", SLAB_MEASURE))
    facts.append(Fact("typically allocated by", who.allocated_by))
    if who.pinned_by:
        facts.append(Fact("held by", who.pinned_by))
    if v.name not in ctx.reclaim_account:
        facts.append(Fact("reclaim_account", _flag_unknown(v, len(ctx.reclaim_account))))
    if v.grade is Grade.GIVEN_BACK:
        facts.append(Fact("reclaimable", reclaimable_known(v, ctx)))
    others = merged_names(v.name, ctx.aliases)
    facts += ctx.merges_unknown([v.name])
    if alias:
        facts.append(Fact("merged caches", alias))
        facts += [Fact(f"{name} (merged here) is allocated by", attribution_for(name).allocated_by) for name in others]
    summary = (
        f"{_growth_said(v, rate)}: {v.verdict.reason}. "
        f"Its objects are typically allocated by {who.allocated_by}."
        + (f" The cache is {alias}: any of them may be the one growing." if alias else "")
        + f" MemAvailable runs out in: {ctx.runway(v.rate, v.grade, v.since_wall)}."
    )
    confidence, reason = _confidence(v)
    caveat = short_late_rise(v, ctx.thresholds)
    if caveat is not None:
        facts.append(Fact("short rise", caveat))
        confidence, reason = min(confidence, SHORT_RISE_CONFIDENCE), f"{reason}; {caveat}"
    return Finding(
        id=finding_id(FindingKind.SLAB_LEAK, v.name),
        kind=FindingKind.SLAB_LEAK,
        title=titles[v.grade],
        severity=harm_severity(v.rate, v.grade, caveat is not None, ctx),
        confidence=confidence,
        confidence_reason=reason,
        summary=summary,
        evidence=sample_evidence(
            ctx.source, v.name, _episode_refs((*v.samples, *_fall_refs(v)), v.since_wall, v.grade)
        ),
        next_steps=tuple(
            dict.fromkeys(
                (*who.confirm, *(c for n in others for c in attribution_for(n).confirm), *generic_confirm_steps(v.name))
            )
        ),
        facts=tuple(facts),
        detector=DETECTOR,
        subjects=(Subject(SubjectKind.SLAB_CACHE, v.name), *held_by_process(who.subject, who.held_by_process)),
        baseline=ctx.baseline(v),
    )


def returned_finding(v: SeriesVerdict, ctx: FindingContext) -> Finding | None:
    """A burst given back, said (info): a cache that rose past the growth bar and fell back to its baseline.

    Graded stable (not a leak), it had no finding: a store whose 18,000 UNIX sockets were held 6 min, then freed,
    read "No problem found ... nothing else grows like a leak", the event someone ran slab-watch for unsaid."""
    fall, went = v.fall, v.excursion
    if v.verdict.rule != RETURNED or fall is None or fall.share <= 0 or went is None:
        return None
    given = fall.top.value - fall.bottom.value
    if given < ctx.thresholds.min_growth:
        return None
    # The rule's figures (window medians from its first): the title, the reason and the peak say one rise.
    rise = went.rise
    who = attribution_for(v.name)
    back = when(fall.bottom.wall)
    title = (
        f"Slab cache {v.name} grew {kb(rise)}, then gave it back by {back}: not a leak now; a burst to watch "
        f"({who.subject})"
    )
    return _episode_finding(
        v,
        ctx,
        title,
        f"the samples show the rise and the fall ({went.given_share:.0%} of the rise given back)",
        (*v.samples, *_fall_refs(v)),
        (
            Fact(
                "held at its peak",
                f"{kb(went.peak)}: {kb(rise)} above its baseline (its first window median, {kb(went.baseline)}), "
                f"reached {duration(went.rose_for)} after it",
            ),
            Fact("given back", given_back(v)),
        ),
        f"{v.verdict.rule}: {v.verdict.reason}",
    )


def _episode_finding(
    v: SeriesVerdict,
    ctx: FindingContext,
    title: str,
    believed: str,
    refs: tuple[SampleRef, ...],
    facts: tuple[Fact, ...],
    rule: str,
) -> Finding:
    """The info finding of a slab cache's episode that is no leak now (a burst given back, a rise held): its
    title, why it is believed, the samples cited, its own facts between the measure and the merges, its rule."""
    who = attribution_for(v.name)
    return Finding(
        id=finding_id(FindingKind.SLAB_LEAK, v.name),
        kind=FindingKind.SLAB_LEAK,
        title=title,
        severity=Severity.INFO,
        confidence=0.6,
        confidence_reason=believed,
        summary=f"{v.name} {v.verdict.reason}. Its objects are typically allocated by {who.allocated_by}.",
        evidence=sample_evidence(ctx.source, v.name, refs),
        next_steps=tuple(dict.fromkeys((*who.confirm, *generic_confirm_steps(v.name)))),
        facts=(
            Fact("measured as", SLAB_MEASURE),
            *facts,
            *((Fact("merged caches", alias),) if (alias := describe_aliases(v.name, ctx.aliases)) else ()),
            Fact("rule", rule),
        ),
        detector=DETECTOR,
        subjects=(Subject(SubjectKind.SLAB_CACHE, v.name),),
        baseline=ctx.baseline(v),
    )


def held_finding(v: SeriesVerdict, ctx: FindingContext) -> Finding | None:
    """A rise that stopped and is held at its level to the store's end, said (info): what rose, from when to when,
    by how much, held since when; never a leak (rule held-rise).

    One held since the middle of the store is stable: it had no finding, and 40 min of a ramp, then 50 min flat,
    was "leak suspected" at medium (consistent-rise) or no line at all (one-time-step)."""
    held = v.held
    if v.verdict.rule != HELD_RISE or held is None:
        return None
    who = attribution_for(v.name)
    since = f"{when(held.top.wall)} (sample {held.top.sample_id})"
    title = (
        f"Slab cache {v.name} rose {kb(held.rose)}, then held flat at the end since {when(held.top.wall)}: "
        f"not growing ({who.subject})"
    )
    return _episode_finding(
        v,
        ctx,
        title,
        f"the samples show the rise and {duration(held.end.wall - held.top.wall)} at its level",
        (held.start, held.top, held.end),
        (
            Fact(
                "rose",
                f"{kb(held.rose)}: from {kb(held.start.value)} at {when(held.start.wall)} (sample "
                f"{held.start.sample_id}) to {kb(held.top.value)} at {since}",
            ),
            Fact(
                "held since",
                f"{since}, for {duration(held.end.wall - held.top.wall)} to the last sample at {when(held.end.wall)} "
                f"(sample {held.end.sample_id}: {kb(held.end.value)})",
            ),
        ),
        f"{v.verdict.rule} ({v.grade.value}): {v.verdict.reason}",
    )


def _ratio_text(ratio: float) -> str:
    """Objects per anchor object: whole numbers as such, others with two significant digits."""
    if math.isnan(ratio):
        return "?"
    if ratio >= 0.95 and abs(ratio - round(ratio)) < 0.05:
        return f"{ratio:.0f}"
    return f"{ratio:.2g}"


def _share_text(g: CoGrowth, index: int) -> str:
    """A member's share of its growth the group accounts for: ``38%, 30,800 KB/h (2.6 per UDP object, ...)``."""
    share, attributed = g.share(index), g.attributed(index)
    if attributed is None:
        return f"unknown: {share.why}"
    if share.fraction == 1.0:
        return f"all, {kb(attributed)}/h ({share.why})"
    return f"{share.fraction:.0%}, {kb(attributed)}/h ({share.why})"


def _group_rate(g: CoGrowth) -> str:
    """The group's rate, and what of its members' growth is not the group's (other reasons, or unknown)."""
    said = f"{kb(g.rate)}/h"
    if g.unattributed_rate <= 0:
        return f"{said} in all"
    parts = []
    for i, m in enumerate(g.members):
        attributed = g.attributed(i)
        if attributed is None:
            parts.append(f"{m.name} {kb(max(m.rate, 0.0))}/h (its share is unknown)")
        elif max(m.rate, 0.0) - attributed > 0:
            parts.append(f"{m.name} {kb(max(m.rate, 0.0) - attributed)}/h (grows for other reasons too)")
    return f"{said} attributed to it; not attributed: {', '.join(parts)}"


def group_finding(g: CoGrowth, ctx: FindingContext) -> Finding:
    """One finding for caches growing together, naming the likely user action."""
    anchor = g.members[0]
    names = ", ".join(g.names)
    ratios = " : ".join(_ratio_text(r) for r in g.ratios)
    grade = g.grade
    action = (
        g.signature.action
        if g.signature
        else ("unknown: " + "; ".join(f"{m.name}: {attribution_for(m.name).allocated_by}" for m in g.members))
    )
    label = {
        Grade.LEAK: "leak",
        Grade.SUSPECT: "suspected leak",
        Grade.RECLAIMABLE: "growth",
        Grade.GIVEN_BACK: "growth (given back)",
        Grade.UNDECIDED: "growth (too short to call)",
    }[grade]
    if g.signature:
        subject = g.signature.subject
        title = f"{subject[:1].upper()}{subject[1:]} {label}: {names} grow together ({kb(g.rate)}/h)"
    else:
        title = f"{label[:1].upper()}{label[1:]} of caches growing together: {names} ({kb(g.rate)}/h)"
    facts = [
        Fact("likely user action", action),
        Fact("measured as", SLAB_MEASURE),
        Fact(
            "objects per " + anchor.name + " object",
            ", ".join(f"{m.name} {_ratio_text(r)}" for m, r in zip(g.members, g.ratios, strict=True)),
        ),
        Fact("growth rate (the group's share)", _group_rate(g)),
        Fact("MemAvailable runs out in", str(ctx.runway(g.rate, g.grade, g.members[0].since_wall))),
        # The report's story reads it: without it a group leak was told "MemAvailable not sampled".
        Fact("memory exhausted", exhausted(ctx)),
        Fact("given back", given_back(anchor)),
        *_group_onset(g),
        *ctx.merges_unknown([m.name for m in g.members]),
    ]
    evidence: list[Evidence] = []
    # The samples cited (the report's timeline starts the finding at the earliest) from where the group rose, the
    # onset said: the store's first sample when a member rises from it.
    since = min(anchor.since_wall, group_since(g))
    for i, m in enumerate(g.members):
        f = m.features
        facts.append(
            Fact(
                f"{m.name}",
                f"{_member_grade(m, g, i)}: {kb(m.rate)}/h"
                + (f", {m.objects_rate:,.0f} objects/h" if m.objects_rate is not None else "")
                + f", r² {f.r2:.2f}, tau {f.tau:.2f}, total {kb(m.growth)}"
                + (f"; the group's share: {_share_text(g, i)}" if i else ""),
            )
        )
        alias = describe_aliases(m.name, ctx.aliases)
        if alias:
            facts.append(Fact(f"{m.name} merged caches", alias))
        refs = (
            m.samples
            if m.grade in (Grade.LEAK, Grade.SUSPECT)
            else tuple(r for r in m.samples if r.role in ("first", "last"))
        )
        cited = _episode_refs((*(refs or m.samples), *_fall_refs(m)), since, grade)
        evidence.extend(sample_evidence(ctx.source, m.name, cited))
    # The member whose grade is the group's (the fastest of them) is the one its confidence and baseline are of.
    worst = max(g.members, key=lambda m: (m.grade.rank, m.rate))
    confidence, reason = _confidence(worst)
    caveat = short_late_rise(worst, ctx.thresholds)
    if caveat is not None:
        facts.append(Fact("short rise", f"{worst.name}: {caveat}"))
        confidence, reason = min(confidence, SHORT_RISE_CONFIDENCE), f"{reason}; {worst.name}: {caveat}"
    key = g.signature.subject if g.signature else anchor.name
    steps = (
        *(g.signature.next_steps if g.signature else ()),
        *attribution_for(anchor.name).confirm,
        *generic_confirm_steps(anchor.name),
    )
    return Finding(
        id=finding_id(FindingKind.SLAB_LEAK_GROUP, key),
        kind=FindingKind.SLAB_LEAK_GROUP,
        title=title,
        severity=harm_severity(g.rate, grade, caveat is not None, ctx),
        confidence=confidence,
        confidence_reason=f"{reason}; {len(g.members)} caches in ratio {ratios}",
        summary=(
            f"{names} grow together in fixed ratios ({ratios} objects per {anchor.name} object), "
            f"{_group_rate(g)}. Likely user action: {action}."
        ),
        evidence=tuple(dict.fromkeys(evidence)),
        next_steps=tuple(dict.fromkeys(steps)),
        facts=tuple(facts),
        detector=DETECTOR,
        subjects=held_by_process(g.signature.subject, g.signature.held_by_process) if g.signature else (),
        baseline=ctx.baseline(worst),
    )


class StretchPart(NamedTuple):
    """A cache's growth over a sum's (SUnreclaim's) judged stretch, whatever the cache's own grade."""

    name: str
    growth: float  # bytes, last window median less the first of the sum's stretch
    grade: Grade  # the cache's own grade (its own stretch may be shorter: a late onset)


#: The measure of the caches named in a sum's finding (not slab-watch's objects in use).
PARTS_MEASURE = "slab memory (num_objs × objsize, first to last window median)"


def _parts_text(parts: tuple[StretchPart, ...], total: float) -> str:
    """``UDP 2,819 KB (growing, too short to call): 59% of its 4,760 KB``."""
    each = ", ".join(f"{p.name} {kb(p.growth)} ({p.grade.value})" for p in parts)
    share = sum(p.growth for p in parts) / total if total > 0 else 0.0
    return f"{each}: {share:.0%} of its {kb(total)}"


def _parts_explain(parts: tuple[StretchPart, ...], total: float) -> bool:
    """The named caches grew at least half the sum's growth over its stretch."""
    return bool(parts) and total > 0 and sum(p.growth for p in parts) >= 0.5 * total


#: Growth of one cache a leak is called from under LeakThresholds.short_hours (rule short-ramp): the bar a sum of
#: caches growing over so short a stretch is held to (rule aggregate-short).
SHORT_SUM_BASELINE = Baseline(
    "growth one slab cache needs to be called a leak under 1 h",
    "4,096 KB of its own",
    "LeakThresholds.short_growth: ramps of up to 2.5 MB in 11 min of a healthy busy machine (docs/leaks.md rule 12)",
)


def meminfo_finding(
    v: SeriesVerdict,
    ctx: FindingContext,
    explained_by: tuple[str, ...] = (),
    explained_share: float = 0.0,
    flagged_rate: float = 0.0,
    parts: tuple[StretchPart, ...] = (),
) -> Finding:
    """The finding for a growing meminfo field (``explained_by``: flagged caches that account for most of it).

    ``explained_share`` is the flagged caches' summed rate (``flagged_rate``) over the field's; over 1 it is no
    share (Theil-Sen rates, medians, do not add up; other caches shrank): the caches are said to grow faster.
    ``parts``: where no flagged cache explains it, the caches that grew most over its judged stretch (any grade).
    A sum growing fast over a stretch too short for its caches (rule aggregate-short) is low: growth worth
    watching, no leak called (:data:`SHORT_SUM_BASELINE`).
    """
    info = field_info(v.name)
    rate = f"{kb(v.rate)}/h"
    brief_sum = v.verdict.rule == AGGREGATE_SHORT
    severity = Severity.INFO if explained_by else (Severity.LOW if brief_sum else SEVERITY[v.grade])
    word = {
        Grade.LEAK: "leaks",
        Grade.SUSPECT: "grows (leak suspected)",
        Grade.RECLAIMABLE: "grows",
        Grade.GIVEN_BACK: "grows",
        Grade.UNDECIDED: "grows",
    }[v.grade]
    title = f"{info.name} ({info.subject}) {word} {rate}"
    if v.grade is Grade.UNDECIDED:
        title = f"{info.name} ({info.subject}) {grows(v, ctx.thresholds)}{_beside(v)}, too short to call"
    if v.verdict.rule == HELD_RISE:
        title = f"{info.name} ({info.subject}) rose {kb(v.features.growth)}, then held flat at the end: not growing"
    mostly = f", mostly {', '.join(p.name for p in parts)}" if _parts_explain(parts, v.growth) else ""
    if brief_sum:
        span = duration(v.features.span_hours * 3600.0)
        title = f"{info.name} ({info.subject}) grows {rate} over {span}{mostly}: too short to call a leak, watch it"
    elif mostly:
        title += mostly
    if explained_by:
        title = f"{info.name} ({info.subject}) {grows(v, ctx.thresholds)}, explained by {', '.join(explained_by)}"
    summary = f"{_growth_said(v, rate)}: {v.verdict.reason}. It is grown by {info.grown_by}."
    if explained_by and explained_share > 1.0:
        summary += (
            f" The caches {', '.join(explained_by)} grow {kb(flagged_rate)}/h, more than {info.name}'s {rate}: "
            f"not a share of it (other caches {info.name} counts shrank meanwhile, or the rates were fitted over "
            "different stretches)."
        )
    elif explained_by:
        summary += f" The caches {', '.join(explained_by)} account for {explained_share:.0%} of it."
    elif explained_share > 0:
        summary += f" The flagged caches account for only {explained_share:.0%} of it: look beyond them."
    facts = _series_facts(v, ctx)
    if parts:
        said = _parts_text(parts, v.growth)
        beyond = "" if _parts_explain(parts, v.growth) else ": look beyond them"
        summary += (
            f" Over the same stretch (from {when(v.since_wall)}) the caches that grew most, in {PARTS_MEASURE}: "
            f"{said}{beyond}."
        )
        facts.append(Fact("grown over the same stretch by", f"{PARTS_MEASURE}: {said}{beyond}"))
    confidence, reason = _confidence(v)
    return Finding(
        id=finding_id(FindingKind.KERNEL_MEMORY_LEAK, info.name),
        kind=FindingKind.KERNEL_MEMORY_LEAK,
        title=title,
        severity=severity,
        confidence=confidence,
        confidence_reason=reason,
        summary=summary,
        evidence=sample_evidence(
            ctx.source,
            f"meminfo:{_cited_field(v.name)}",
            _episode_refs((*v.samples, *_fall_refs(v)), v.since_wall, v.grade),
        ),
        next_steps=info.confirm,
        facts=tuple(facts),
        detector=DETECTOR,
        baseline=_explained_baseline(info.name, explained_share)
        if explained_by
        else SHORT_SUM_BASELINE
        if brief_sum
        else ctx.baseline(v),
    )


def _explained_baseline(name: str, share: float) -> Baseline:
    """A sum of caches (SUnreclaim) whose growth its flagged caches account for: judged by theirs (information)."""
    return Baseline(
        f"the share of {name}'s growth its flagged caches account for, each judged on its own (their findings)",
        f"{share:.0%} of it (a sum is held to its caches' bar)",
        "docs/severity.md, Leaks: a sum of caches is held to its caches' bar",
    )


def _cited_field(name: str) -> str:
    """The stored field cited for a series: the Unaccounted estimate cites MemFree, where the memory went from."""
    from detectors.leaks.meminfo import UNACCOUNTED

    return "MemFree" if name == UNACCOUNTED else name


def examined_record(e: ExaminedSeries, source: str) -> model.Examined:
    """What the analysis examined, for the incident (said with "no problem found")."""
    p = e.power
    what = (
        f"slab samples {source}: {p.seen(cadence=True)}"
        + f", {e.caches} slab caches ({e.judged} moved enough to judge), {e.meminfo} meminfo series"
        + (f"; {e.gap_note()}" if e.gaps else "")
        + (f"; {e.step_note()}" if e.steps else "")
        + (f"; {e.reboot_note()}" if e.reboots else "")
    )
    if not p.judgeable:
        return model.Examined(what, (), (f"any leak: {p.shortfall()}",))
    could = (
        f"leaks of {kb(p.shown_rate)}/h or faster that last the whole {duration(p.span_seconds)}"
        + (" observed" if p.unobserved_seconds > 0 else "")
        + (f" of the longest {p.unit}" if len(p.boots) > 1 else "")
        + " (slab caches "
        f"and kernel memory in meminfo){p.scatter_note()}; {p.later()}",
    )
    if p.full:
        return model.Examined(what, could, ())
    return model.Examined(
        what,
        could,
        (f"slower leaks (down to {kb_per_hour_up(p.min_rate)}): need >= {duration_up(p.full_seconds)} of samples",),
    )


def _keep_sampling(p: Power) -> str:
    """The next step of a stretch short of full power: how long, for what, said once (``Power.advice``)."""
    if not p.judgeable:
        return f"keep kforensic slab-watch sampling and run kforensic leaks again: {p.advice()}"
    return (
        f"keep kforensic slab-watch sampling for >= {duration_up(max(p.needed_seconds, p.full_seconds))} "
        "(e.g. --interval 60s --hours 24) and run kforensic leaks again"
    )


def coverage_finding(e: ExaminedSeries, source: str) -> Finding:
    """An info finding saying what the leak analysis examined and what it could have shown."""
    p = e.power
    if not p.judgeable:
        title = f"Leak analysis {p.shortfall()}"
    elif e.flagged:
        title = f"Leak analysis examined {p.seen()}"
    elif e.undecided:
        title = f"Leak analysis: {e.undecided} series growing, too short to call, in {p.seen()}"
    elif p.full:
        title = f"No leak of {kb_per_hour_up(p.min_rate)} or faster in {p.seen()}"
    else:
        title = f"No leak of {kb(p.shown_rate)}/h or faster in {p.seen()}; slower ones need more samples"
    if e.gaps:
        longest = max(e.gaps, key=lambda g: (g.back, abs(g.seconds)))  # a step back first: its times are wrong
        title += f" (with {longest.short()}, samples {longest.before} to {longest.after}: " + (
            "each side judged apart)"
            if longest.apart
            else "times across it not facts)"
            if longest.back
            else "not observed)"
        )
    facts = [
        Fact("examined", f"{e.caches} slab caches ({e.judged} moved enough to judge), {e.meminfo} meminfo series"),
        Fact("samples", p.seen(cadence=True)),
        Fact("statistics need", f">= {p.needed_samples} samples{p.needed_span()}"),
        Fact(
            "could have shown",
            p.reach() if p.judgeable else "nothing yet: " + p.shortfall(),
        ),
        Fact("leaking or suspect", str(e.flagged)),
        Fact("growing, too short to call", str(e.undecided)),
    ]
    if e.gaps:
        facts.append(Fact("gaps in the samples", e.gap_note()))
    if e.steps:
        facts.append(Fact("wall clock steps", e.step_note()))
    if e.reboots:
        facts.append(Fact("reboots", e.reboot_note()))
    return Finding(
        id=finding_id(FindingKind.LEAK_COVERAGE, source),
        kind=FindingKind.LEAK_COVERAGE,
        title=title,
        severity=Severity.INFO,
        confidence=1.0,
        confidence_reason="counted from the samples read",
        summary=e.absence(),
        evidence=sample_evidence(source, e.locator_name, e.refs),
        next_steps=() if p.full else (_keep_sampling(p),),
        facts=tuple(facts),
        detector=DETECTOR,
        baseline=Baseline(
            "the samples a judgement needs, and the growth a leak must show in them",
            f">= {p.needed_samples} samples{p.needed_span()}; a growth of >= {kb(p.min_growth)}"
            + (f" (>= {kb(p.short_growth)} under {duration(p.short_seconds)})" if p.short_growth else ""),
            "detectors/leaks/power.py (docs/severity.md, Leaks: absence needs power)",
        ),
    )


def clock_step_finding(
    steps: tuple[ClockStep, ...], source: str, locator_name: str, refs: tuple[SampleRef, ...]
) -> Finding:
    """A low finding for the steps of the wall clock within a boot, its figures measured by uptime across them.

    ``refs``: the samples on both sides of the steps, cited by their line ``locator_name`` (MemTotal, or a cache's).
    Said as an event of its own: the placement moved the times of every later sample, and a reader comparing them
    with the store, or with another log of the host, must know why (ue21 #7)."""
    first = steps[0]
    sign = "+" if first.seconds >= 0 else "-"
    more = f" (and {len(steps) - 1} more)" if len(steps) > 1 else ""
    return Finding(
        id=finding_id(FindingKind.SNAPSHOT_CLOCK_STEP, source, *(str(s.after) for s in steps)),
        kind=FindingKind.SNAPSHOT_CLOCK_STEP,
        title=(
            f"The wall clock stepped {sign}{duration(abs(first.seconds))} at sample {first.after}{more} while uptime "
            "went on: spans and rates measured by uptime"
        ),
        severity=Severity.LOW,
        confidence=0.9,
        confidence_reason="both samples' wall times and uptimes are read from the store; uptime is never set",
        summary=(
            f"{first.said()}. Not a gap: only {duration(first.uptime_passed)} of uptime passed; not a reboot: the "
            "same boot, its uptime went on. NTP, a hand or a VM resumed from a snapshot stepped the wall clock. The "
            "samples after it are placed at the earlier sample's time plus the uptime that passed (as slab-watch "
            "stores them), so spans, rates and gaps are measured on uptime; the times cited after it are the "
            "placed ones, the store holds the times read."
        ),
        evidence=sample_evidence(source, locator_name, refs),
        facts=(Fact("steps", str(len(steps))), *(Fact("step", s.said()) for s in steps[:CITED_STEPS])),
        baseline=Baseline(
            f"the time of sample {first.before} plus the uptime that passed until sample {first.after}",
            f"{iso_utc(first.placed)} (sample {first.after} reads {iso_utc(first.read)}, {first.seconds:+,.3f} s)",
            "the samples' own /proc/uptime (CLOCK_BOOTTIME, which a wall-clock step does not move)",
        ),
        next_steps=("check the host's time sync (chronyc tracking, the journal of systemd-timesyncd)",),
        detector=DETECTOR,
    )


#: At most this many steps are listed one by one in a finding's facts.
CITED_STEPS = 3
