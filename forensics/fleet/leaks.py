"""``kforensic leaks --prometheus``: the leak detectors run per instance on series read from Prometheus.

The frames come from :mod:`collectors.fleet_metrics` (the same columns a
slab-watch store gives), the analysis is :func:`detectors.leaks.analysis.analyse`
unchanged, once per instance.  What this module adds is fleet bookkeeping:
each finding's evidence names the PromQL selector of the series it cites and
the sample time (the sample id is the Prometheus timestamp in milliseconds),
finding ids include the instance, scrape gaps and resets inside the judged
stretch are said on the finding, and one table lists every flagged series of
every instance.  JSON: ``kforensic.fleet-leaks/1`` (docs/fleet.md).
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

from forensics import __version__
from forensics.model import (
    Clock,
    Evidence,
    Fact,
    Finding,
    Incident,
    LocatorKind,
    NotAvailable,
    SourceRecord,
    Timestamp,
    TimeWindow,
    finding_id,
)
from forensics.types.fleet import FleetLeaks, FleetRow, FleetWindow, InstanceResult
from forensics.types.prometheus import InstanceRead, gap_notes
from forensics.units import iso_utc as iso

if TYPE_CHECKING:
    from collections.abc import Iterable

    from collectors.fleet_metrics import InstanceSamples
    from collectors.prometheus import PromAuth, PromClient
    from forensics.evidence import Resolver
    from forensics.types.leaks import LeakThresholds, SeriesVerdict


def _query_of(read: InstanceRead, locator_name: str) -> str:
    from collectors.fleet_metrics import meminfo_query, slab_query

    if locator_name.startswith("meminfo:"):
        return meminfo_query(read.instance, read.family, locator_name.split(":", 1)[1])
    return slab_query(read.instance, read.family, locator_name)


def _odd_within(samples: InstanceRead, start: float, end: float) -> tuple[str, ...]:
    """Scrape gaps and resets between ``start`` and ``end``, said in words."""
    gaps = [g for g in samples.gaps if g.end > start and g.start < end]
    notes = gap_notes(gaps, ": the rate is computed across it")
    notes += [f"{r.what} in {r.series} at {iso(r.at)}" for r in samples.resets if start <= r.at <= end]
    return tuple(notes)


def cite_prometheus(finding: Finding, samples: InstanceRead, url: str) -> Finding:
    """The finding with evidence sourced from the PromQL selectors, an id and title per instance, gap notes."""
    evidence = []
    for item in finding.evidence:
        cited = item
        if item.locator.kind is LocatorKind.SAMPLE and item.locator.name:
            cited = dataclasses.replace(item, source=f"{url} {_query_of(samples, item.locator.name)}")
        evidence.append(cited)
    walls = [e.timestamp.seconds for e in finding.evidence if e.timestamp is not None]
    notes = _odd_within(samples, min(walls), max(walls)) if walls else ()
    facts = [Fact("instance", samples.instance), Fact("metrics", samples.family.name)]
    facts += [Fact("caveat", n) for n in notes]
    return dataclasses.replace(
        finding,
        id=finding_id(finding.kind, finding.id, samples.instance),
        title=f"{samples.instance}: {finding.title}",
        evidence=tuple(evidence),
        facts=(*facts, *finding.facts),
        confidence_reason=finding.confidence_reason + ("; " + "; ".join(notes) if notes else ""),
    )


def analyse_instance(samples: InstanceSamples, url: str, thresholds: LeakThresholds) -> InstanceResult:
    """Run the leak analysis of one instance's frames."""
    from detectors.leaks.analysis import LeakInput, analyse

    data = LeakInput(
        slabs=samples.slabs,
        counters=samples.counters,
        mem_total=samples.mem_total
        if samples.mem_total
        else NotAvailable(f"{samples.instance} exports no MemTotal (meminfo collector off?)"),
        source=url,
        gap_caveats=False,  # said by cite_prometheus, with the scrape gaps' own times
        aliases_known=False,  # no exporter exports SLUB's merges: a cache shown may hold others (ue9 9)
    )
    analysis = analyse(data, thresholds)
    read = samples.read()
    findings = tuple(cite_prometheus(f, read, url) for f in analysis.findings)
    # The frames are let go: a fleet is read one instance at a time, and only the verdicts are kept.
    return InstanceResult(read, analysis, findings)


def _rows(result: InstanceResult, unknown: bool = False) -> list[FleetRow]:
    """The instance's series graded leak or suspect (``unknown``: those growing, too short to call)."""
    from detectors.leaks.findings import SEVERITY
    from forensics.types.leaks import Grade

    rows = []
    a = result.analysis
    meminfo = {id(v) for v in a.meminfo}
    for v in a.flagged():
        if (v.grade is not Grade.UNDECIDED) if unknown else (v.grade.rank < Grade.SUSPECT.rank):
            continue
        name = f"meminfo:{v.name}" if id(v) in meminfo else v.name
        walls = [s.wall for s in v.samples] or [v.since_wall]
        rows.append(
            FleetRow(
                instance=result.read.instance,
                series=name,
                grade=v.grade.value,
                severity=SEVERITY[v.grade],
                rate=v.rate,
                # A late rise's onset (its last sample at the level before), not its judged part's window edge.
                since=v.onset.before.wall if v.onset is not None else v.since_wall,
                confidence=_confidence_of(result.findings, v),
                query=_query_of(result.read, name),
                first_sample=min(walls),
                last_sample=max(walls),
                notes=_odd_within(result.read, v.since_wall, max(walls)),
                why=v.verdict.reason,
            )
        )
    return rows


def _confidence_of(findings: tuple[Finding, ...], v: SeriesVerdict) -> float:
    for f in findings:
        if any(e.locator.name in (v.name, f"meminfo:{v.name}") for e in f.evidence):
            return f.confidence
    return math.nan


def analyse_fleet(
    client: PromClient, match: str, start: float, end: float, step: float, thresholds: LeakThresholds
) -> FleetLeaks:
    """Read every instance's series, one instance at a time, and run the leak analysis on each."""
    instances = list_fleet(client, match, start, end)
    return analyse_instances(client, match, instances, start, end, step, thresholds)


def list_fleet(client: PromClient, match: str, start: float, end: float) -> list[str]:
    """The instances with slab series in the window; InputError when there is none."""
    from collectors.fleet_metrics import list_instances
    from forensics.errors import InputError

    instances = list_instances(client, match, start, end)
    if not instances:
        raise InputError(
            f"Prometheus at {client.url} has no slab series"
            + (f" matching {{{match}}}" if match else "")
            + f" between {iso(start)} and {iso(end)}",
            hint="run node_exporter with --collector.slabinfo (as root), or kforensic slab-watch --textfile-dir;"
            " check --match and --since",
        )
    return instances


def analyse_instances(
    client: PromClient,
    match: str,
    instances: list[str],
    start: float,
    end: float,
    step: float,
    thresholds: LeakThresholds,
) -> FleetLeaks:
    """Fetch and analyse the given instances (read ahead in threads, analysed one by one)."""
    from collectors.fleet_metrics import fetch, instance_queries

    results = [analyse_instance(s, client.url, thresholds) for s in fetch(client, match, start, end, step, instances)]
    window = FleetWindow(start, end, step, tuple(instance_queries(match, "$instance")), client.requests)
    return assemble(window, results, client.url, match, thresholds)


def analyse_fetched(
    window: FleetWindow, instances: Iterable[InstanceSamples], url: str, match: str, thresholds: LeakThresholds
) -> FleetLeaks:
    """Run the leak analysis on instances already read (tests, other sources of frames)."""
    return assemble(window, [analyse_instance(s, url, thresholds) for s in instances], url, match, thresholds)


def assemble(
    window: FleetWindow, analysed: list[InstanceResult], url: str, match: str, thresholds: LeakThresholds
) -> FleetLeaks:
    """The fleet table and the incident of analysed instances."""
    results = [r for r in analysed if r.read.points]
    rows = sorted(
        (r for res in results for r in _rows(res)), key=lambda r: (-r.severity.rank, -r.rate, r.instance, r.series)
    )
    unknown = sorted((r for res in results for r in _rows(res, unknown=True)), key=lambda r: (-r.rate, r.instance))
    walls = [w for res in results for w in (res.analysis.first_wall, res.analysis.last_wall) if isinstance(w, float)]
    span: TimeWindow | NotAvailable = (
        TimeWindow(Timestamp(min(walls), Clock.WALL), Timestamp(max(walls), Clock.WALL))
        if walls
        else NotAvailable("no samples")
    )
    hosts = [res.read.instance for res in results]
    incident = Incident(
        host=hosts[0] if len(hosts) == 1 else NotAvailable(f"a fleet of {len(hosts)} instances"),
        kernel_release=NotAvailable("Prometheus series do not carry the kernel release"),
        window=span,
        sources=(
            SourceRecord(
                f"{url} ({len(window.queries)} range queries per instance, {window.requests} requests)",
                NotAvailable("a query answer, not a file"),
                NotAvailable("a query answer, not a file"),
                0.0,
            ),
        ),
        findings=tuple(f for res in results for f in res.findings),
        tool_version=__version__,
    )
    return FleetLeaks(url, match, window, tuple(results), tuple(rows), incident, thresholds, tuple(unknown))


def prometheus_resolver(client: PromClient, result: FleetLeaks) -> Resolver:
    """A resolver of this run's SAMPLE evidence that reads each cited sample back from Prometheus."""
    from collectors.fleet_metrics import resolve_text

    by_source = {}
    for res in result.results:
        for finding in res.findings:
            for e in finding.evidence:
                by_source[e.source] = res.read

    def resolve(evidence: Evidence) -> str | None:
        samples = by_source.get(evidence.source)
        loc = evidence.locator
        if samples is None or loc.kind is not LocatorKind.SAMPLE or not loc.name:
            return None
        query = _query_of(samples, loc.name)  # the selector its source names (cite_prometheus)
        at = loc.start / 1000.0
        if loc.name.startswith("meminfo:"):
            return resolve_text(client, query, at, samples.family, field_name=loc.name.split(":", 1)[1])
        return resolve_text(client, query, at, samples.family, cache=loc.name)

    return resolve


#: Seconds past a scrape interval that a scrape's samples may take to be committed (a loaded server).
SETTLE_SECONDS = 1.0


def fetch_and_analyse(
    url: str, match: str | None, span: float, resolution: float | None, auth: PromAuth, min_rate_kb: float | None
) -> FleetLeaks:
    """``leaks --prometheus``: every instance's series of the last ``span`` seconds at ``resolution``, analysed
    (growth slower than ``min_rate_kb`` KB/h ignored; the detectors' default when None).

    ``resolution`` None: picked from the data (``collectors.prometheus.pick_step``): the scrape interval,
    over the part of the window that holds data."""
    import time

    from collectors.prometheus import PromClient, parse_match

    client = PromClient(url, auth)
    now = time.time()
    # Align the window to the step, as Grafana does, so reruns read the same evaluation times; and end it a scrape
    # interval (the step, when given) and a second before now: Prometheus commits a scrape's samples when the
    # scrape ends, under the time it started, so a later query would see a sample an earlier one did not (the
    # three slab series of a cache read from two different scrapes, a cited sample that reads back otherwise).
    end = math.floor((now - (resolution or 1.0) - SETTLE_SECONDS) / (resolution or 1.0)) * (resolution or 1.0)
    # The server is asked before numpy, pandas and scipy are imported: a wrong URL is said at once.
    instances = list_fleet(client, parse_match(match), end - span, end)
    chosen = ""
    if resolution is None:
        from collectors.fleet_metrics import slab_selector
        from collectors.prometheus import pick_step

        picked = pick_step(client, slab_selector(parse_match(match)), end - span, end)
        resolution, chosen = picked.step, picked.reason
        settle = max(resolution, picked.interval or 0.0) + SETTLE_SECONDS
        end = math.floor(min(end, now - settle) / resolution) * resolution
        span = end - math.floor(picked.start / resolution) * resolution
    from forensics.types.leaks import LeakThresholds as DefaultThresholds

    thresholds = DefaultThresholds()
    if min_rate_kb is not None:
        thresholds = dataclasses.replace(thresholds, min_rate=min_rate_kb * 1024)
    result = analyse_instances(client, parse_match(match), instances, end - span, end, resolution, thresholds)
    if not chosen:
        return result
    return dataclasses.replace(result, fetched=dataclasses.replace(result.fetched, chosen=chosen))
