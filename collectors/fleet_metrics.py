"""Slab and meminfo samples of many hosts from Prometheus, as the frames the leak detectors read.

Two families of metric names are read, per instance, preferring the first:

* node_exporter's (``--collector.slabinfo``, meminfo is on by default):
  ``node_slabinfo_active_objects``, ``node_slabinfo_objects``,
  ``node_slabinfo_object_size_bytes`` (label ``slab``), ``node_memory_<Field>_bytes``,
  ``node_boot_time_seconds``;
* kforensic's own (``slab-watch --textfile-dir``, see docs/fleet.md):
  ``kforensic_slab_active_objects``, ``kforensic_slab_objects``,
  ``kforensic_slab_object_size_bytes`` (label ``cache``), ``kforensic_meminfo_bytes``
  (label ``field``), ``kforensic_boot_time_seconds``, ``kforensic_vmstat_total`` (label ``counter``).

Each instance's points become the same typed frames a slab-watch store gives
(:data:`detectors.leaks.series.SLAB_COLUMNS`, ``COUNTER_COLUMNS``): the sample
id of a point is its Prometheus timestamp in milliseconds, so evidence cites
the sample time.  A reboot (the boot time series changes) becomes a boot id
change, which the detectors treat as a series break; a counter that goes down
(a reset) is continued from its last value, as PromQL's ``increase()`` does;
steps with no sample are scrape gaps.  All three are recorded and said.  A range query shows a series'
last sample at every step until the next one (the lookback), so a late or missed scrape would read as
the same sample again at a later time: with the ``timestamp()`` of the objects series, each row is a
real sample at its own time, once, and the repeating steps are counted apart (:func:`real_samples`).

pandas is imported inside the functions (this module is imported by the command at run time only).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from collectors.prometheus import PromClient, Series, escape, selector
from forensics.types.prometheus import Family, Gap, InstanceRead, Reset, is_gap

if TYPE_CHECKING:
    import pandas as pd

#: Label naming a host in the fleet table.
INSTANCE = "instance"

#: meminfo fields the leak analysis reads (detectors/leaks/meminfo.py: judged fields and the unaccounted estimate).
MEMINFO_FIELDS = (
    "MemTotal",
    "MemFree",
    "MemAvailable",
    "Active",
    "Inactive",
    "Unevictable",
    "Slab",
    "SReclaimable",
    "SUnreclaim",
    "KReclaimable",
    "KernelStack",
    "PageTables",
    "SecPageTables",
    "Percpu",
    "VmallocUsed",
    "Hugetlb",
)

#: Instances read ahead (concurrent requests) while the previous one is analysed.
READ_AHEAD = 4

#: When slab-watch took the sample its textfile exports (forensics/fleet/exposition.py).
TAKEN_AT = "kforensic_slabwatch_sample_timestamp_seconds"

#: vmstat counters the analysis reads (did reclaim run?).
VMSTAT_COUNTERS = ("slabs_scanned", "drop_slab")


NODE = Family(
    "node_exporter",
    "node_slabinfo_active_objects",
    "node_slabinfo_objects",
    "node_slabinfo_object_size_bytes",
    "slab",
    "node_boot_time_seconds",
)
KFORENSIC = Family(
    "kforensic",
    "kforensic_slab_active_objects",
    "kforensic_slab_objects",
    "kforensic_slab_object_size_bytes",
    "cache",
    "kforensic_boot_time_seconds",
)
FAMILIES = (NODE, KFORENSIC)


def node_meminfo_metric(field_name: str) -> str:
    """node_exporter's name of a meminfo field: ``Active(anon)`` -> ``node_memory_Active_anon_bytes``."""
    return "node_memory_" + field_name.replace("(", "_").replace(")", "") + "_bytes"


@dataclass
class InstanceSamples:
    """What Prometheus holds of one instance in the window, as leak-detector frames plus what was odd."""

    instance: str
    family: Family
    slabs: pd.DataFrame
    counters: pd.DataFrame
    mem_total: int | None
    gaps: list[Gap] = field(default_factory=list)
    resets: list[Reset] = field(default_factory=list)
    points: int = 0  # slab points read (kept when the frames are let go after the analysis)
    repeats: int = 0  # steps that showed a sample already read (a late or missed scrape), not counted as samples

    def read(self) -> InstanceRead:
        """What was read, without the sample frames (what a result keeps after the analysis)."""
        return InstanceRead(self.instance, self.family, tuple(self.gaps), tuple(self.resets), self.points, self.repeats)


def slab_query(instance: str, family: Family, cache: str) -> str:
    """The PromQL selector of the three series behind a cache's sample text."""
    names = "|".join((family.active, family.objects, family.objsize))
    return f'{{__name__=~"{names}",{INSTANCE}="{escape(instance)}",{family.cache_label}="{escape(cache)}"}}'


def meminfo_query(instance: str, family: Family, field_name: str) -> str:
    """The PromQL selector of one meminfo field of an instance."""
    if family is NODE:
        return selector(node_meminfo_metric(field_name), {INSTANCE: instance})
    return selector("kforensic_meminfo_bytes", {INSTANCE: instance, "field": field_name})


def slab_selector(match: str) -> str:
    """Every instance's slab object counts (either family), narrowed by ``match``."""
    names = "|".join(fam.objects for fam in FAMILIES)
    return f'{{__name__=~"{names}"{"," + match if match else ""}}}'


def list_instances(client: PromClient, match: str, start: float, end: float) -> list[str]:
    """Instances with slab series (either family) anywhere in the window: one instant query."""
    names = "|".join(fam.objects for fam in FAMILIES)
    span = max(1, math.ceil(end - start))
    inner = f'{{__name__=~"{names}"{"," + match if match else ""}}}'
    found = client.query(f"group by ({INSTANCE}) (last_over_time({inner}[{span}s]))", end)
    return sorted({labels.get(INSTANCE, "") for labels, _ in found})


def instance_queries(match: str, instance: str) -> list[str]:
    """The range queries that read one instance (``match`` narrowed to it)."""
    narrowed = ",".join(x for x in (match, f'{INSTANCE}="{escape(instance)}"') if x)
    queries = []
    for fam in FAMILIES:
        queries += [selector(m, narrowed) for m in (fam.active, fam.objects, fam.objsize)]
    node_names = "|".join(node_meminfo_metric(f) for f in MEMINFO_FIELDS)
    queries.append(f'{{__name__=~"{node_names}",{narrowed}}}')
    queries.append(f'kforensic_meminfo_bytes{{{narrowed},field=~"{"|".join(MEMINFO_FIELDS)}"}}')
    queries += [selector(fam.boot, narrowed) for fam in FAMILIES]
    queries.append(f'kforensic_vmstat_total{{{narrowed},counter=~"{"|".join(VMSTAT_COUNTERS)}"}}')
    # The time of the sample behind each step's point: a range query repeats a series' last sample at every step
    # until the next one (for up to the 5-minute lookback), so a late or missed scrape reads as the same sample
    # again, at a later time.  These tell real samples from repeats (build_instance).
    queries += [f"max by ({INSTANCE}) (timestamp({selector(fam.objects, narrowed)}))" for fam in FAMILIES]
    # slab-watch's textfile holds its last sample until the next: scraped twice, one reading of /proc/slabinfo
    # would count twice.  The time slab-watch took each sample tells them apart.
    queries.append(f"max by ({INSTANCE}) ({selector(TAKEN_AT, narrowed)})")
    return queries


def fetch_instance(
    client: PromClient, match: str, instance: str, start: float, end: float, step: float
) -> InstanceSamples | None:
    """One instance's series as frames (None when it has no slab points in the window)."""
    got = [client.query_range(q, start, end, step) for q in instance_queries(match, instance)]
    node_act, node_obj, node_size, kf_act, kf_obj, kf_size, node_mem, kf_mem, node_boot, kf_boot, vmstat = got[:11]
    node_at, kf_at, taken = got[11:]
    if node_obj:
        fam, active, objects, size, mem, at = NODE, node_act, node_obj, node_size, node_mem or kf_mem, node_at
        taken = []  # node_exporter reads /proc/slabinfo when scraped: the scrape time is the reading's
    elif kf_obj:
        fam, active, objects, size, mem, at = KFORENSIC, kf_act, kf_obj, kf_size, kf_mem, kf_at
    else:
        return None
    boot = (node_boot if fam is NODE else kf_boot) or kf_boot or node_boot
    return build_instance(
        instance, fam, active, objects, size, mem, boot, vmstat, start, step, sampled_at=at, taken_at=taken
    )


def fetch(
    client: PromClient, match: str, start: float, end: float, step: float, instances: list[str] | None = None
) -> Iterator[InstanceSamples]:
    """Every instance matching ``match``, one at a time (memory holds a few instances, not the fleet).

    Instances are read ahead by a few threads (the requests wait on the
    network while the caller analyses the previous instance).
    """
    from concurrent.futures import ThreadPoolExecutor

    if instances is None:
        instances = list_instances(client, match, start, end)
    with ThreadPoolExecutor(max_workers=READ_AHEAD) as pool:
        pending = [pool.submit(fetch_instance, client, match, i, start, end, step) for i in instances[:READ_AHEAD]]
        following = READ_AHEAD
        while pending:
            samples = pending.pop(0).result()
            if following < len(instances):
                pending.append(pool.submit(fetch_instance, client, match, instances[following], start, end, step))
                following += 1
            if samples is not None:
                yield samples


def _meminfo_field(s: Series) -> str:
    if "field" in s.labels:
        return s.labels["field"]
    name = s.name
    return name[len("node_memory_") : -len("_bytes")] if name.startswith("node_memory_") else name


def _boot_ids(boot: list[Series], stamps: list[float], resets: list[Reset], series_name: str) -> dict[float, str]:
    """Boot id per timestamp: the boot time rounded to seconds; a change over 2 s is a reboot."""
    points = sorted(p for s in boot for p in s.points)
    out: dict[float, str] = {}
    if not points:
        return dict.fromkeys(stamps, "")
    current: float | None = None
    values = dict(points)
    last_value = points[0][1]
    for t in stamps:
        value = values.get(t, last_value)
        last_value = value
        if current is None or abs(value - current) > 2.0:
            if current is not None:
                resets.append(Reset(t, series_name, f"reboot: boot time {current:.0f} -> {value:.0f}"))
            current = value
        out[t] = f"boot@{current:.0f}"
    return out


def real_samples(
    stamps: list[float], sampled_at: list[Series] | None, taken_at: list[Series] | None = None
) -> tuple[dict[float, float], int, list[float]]:
    """Each step that shows a sample first (step time -> the sample's own time), how many steps repeat one, and the
    times of the scrapes that served a reading already scraped (the exporter's sampler took no new one).

    ``sampled_at``: the ``timestamp()`` of the sample behind each step's point.  A step whose sample time is
    unknown (no such series: another source of frames, or a step where the two queries disagree) is dropped
    when times are given, kept at its step time when they are not (every point then taken as a sample).
    ``taken_at``: when the exporter took the reading it served (slab-watch's textfile): a reading scraped again
    is a repeat too.  Rows keep the scrape's time: a cited sample is read back from Prometheus at it.
    """
    if not sampled_at:
        return {t: t for t in stamps}, 0, []
    times = {t: v for s in sampled_at for t, v in s.points if math.isfinite(v)}
    taken = {t: v for s in taken_at or () for t, v in s.points if math.isfinite(v)}
    kept: dict[float, float] = {}
    scraped: set[float] = set()
    readings: set[float] = set()
    stale: list[float] = []
    repeats = 0
    for t in stamps:
        at = times.get(t)
        if at is None:
            continue
        at = round(at, 3)  # Prometheus keeps milliseconds
        reading = taken.get(t)
        if at in scraped or (reading is not None and reading in readings):
            repeats += 1
            if at not in scraped:  # a new scrape of an old reading
                stale.append(at)
                scraped.add(at)
            continue
        scraped.add(at)
        if reading is not None:
            readings.add(reading)
        kept[t] = at
    return kept, repeats, stale


def _gaps(stamps: list[float], step: float, stale: Sequence[float] = ()) -> list[Gap]:
    """Holes between samples (:func:`is_gap`): the interval is the query step, or the samples' own median spacing
    when longer (slab-watch sampling every 2 s, scraped every second, has no gap every 2 s).  A hole that ``stale``
    scrapes (an old reading served again) fall in is the exporter's sampler stopping, not failed scrapes."""
    gaps: list[Gap] = []
    spacing = sorted(b - a for a, b in itertools.pairwise(stamps))
    usual = max(step, spacing[len(spacing) // 2] if spacing else step)
    for before, after in itertools.pairwise(stamps):
        if is_gap(after - before, usual):
            gaps.append(Gap(before, after, any(before < t < after for t in stale)))
    return gaps


def _continued(points: tuple[tuple[float, float], ...]) -> tuple[list[tuple[float, float]], list[float]]:
    """A counter's points with resets continued (as increase() does), and where it reset."""
    out: list[tuple[float, float]] = []
    offset = 0.0
    last: float | None = None
    resets: list[float] = []
    for t, v in points:
        if last is not None and v < last:
            offset += last
            resets.append(t)
        last = v
        out.append((t, v + offset))
    return out, resets


def build_instance(
    instance: str,
    fam: Family,
    active: list[Series],
    objects: list[Series],
    objsize: list[Series],
    meminfo: list[Series],
    boot: list[Series],
    vmstat: list[Series],
    start: float,
    step: float,
    sampled_at: list[Series] | None = None,
    taken_at: list[Series] | None = None,
) -> InstanceSamples:
    """One instance's series as leak-detector frames (see the module doc).

    ``sampled_at``: the time of the sample behind each step (``timestamp()`` of the objects series): the rows are
    then the real samples, at their own times, each once (see :func:`real_samples`).
    """
    import pandas as pd

    label = fam.cache_label
    act = {s.labels.get(label, ""): dict(s.points) for s in active}
    size = {s.labels.get(label, ""): dict(s.points) for s in objsize}
    stamps = sorted({t for s in objects for t, _ in s.points})
    resets: list[Reset] = []
    boot_of = _boot_ids(boot, stamps, resets, fam.boot)
    kept, repeats, stale = real_samples(stamps, sampled_at, taken_at)
    rows: list[tuple[int, float, str, str, int, int, int]] = []
    for s in sorted(objects, key=lambda x: x.labels.get(label, "")):
        cache = s.labels.get(label, "")
        a, z = act.get(cache, {}), size.get(cache, {})
        for t, num in s.points:
            if t not in a or t not in z or t not in kept:
                continue  # a point without its partners cannot be a slabinfo line; a repeat is no sample
            at = kept[t]
            rows.append((round(at * 1000), at, boot_of.get(t, ""), cache, int(a[t]), int(num), int(z[t])))
    rows.sort(key=lambda r: (r[0], r[3]))
    slabs = pd.DataFrame(rows, columns=["sample_id", "wall", "boot_id", "cache", "active_objs", "num_objs", "objsize"])

    crow: list[tuple[int, float, str, str, str, str, float]] = []
    mem_total: int | None = None
    # A counter point at a step that shows no new slab sample (a repeat, or a step whose sample time is unknown) is
    # dropped; at a step that shows one, it is stamped with that sample's time (one scrape: the same instance's
    # target).  Without sample times every step is kept (real_samples).
    repeated = set(stamps) - set(kept)

    def when(t: float) -> float:
        return kept.get(t, t)

    for s in meminfo:
        name = _meminfo_field(s)
        for t, v in s.points:
            if t in repeated:
                continue
            # Stored as /proc/meminfo prints it (kB), so the excerpt reads "MemFree: 123 kB".
            crow.append((round(when(t) * 1000), when(t), boot_of.get(t, ""), "meminfo", name, "kB", v / 1024.0))
        if name == "MemTotal" and s.points:
            mem_total = int(s.points[-1][1])
    for s in vmstat:
        name = s.labels.get("counter", "")
        points, where = _continued(s.points)
        resets += [Reset(t, f"kforensic_vmstat_total{{counter={name!r}}}", "counter reset (continued)") for t in where]
        crow += [
            (round(when(t) * 1000), when(t), boot_of.get(t, ""), "vmstat", name, "", v)
            for t, v in points
            if t not in repeated
        ]
    crow.sort(key=lambda r: (r[0], r[3], r[4]))
    counters = pd.DataFrame(crow, columns=["sample_id", "wall", "boot_id", "source", "name", "unit", "value"])
    return InstanceSamples(
        instance=instance,
        family=fam,
        slabs=slabs,
        counters=counters,
        mem_total=mem_total,
        gaps=_gaps(sorted(kept.values()), step, stale),
        resets=sorted(resets, key=lambda r: r.at),
        points=len(slabs),
        repeats=repeats,
    )


def resolve_text(
    client: PromClient, query: str, at: float, fam: Family, cache: str = "", field_name: str = ""
) -> str | None:
    """The sample text a leak finding cites, read back from Prometheus with an instant query at ``at``.

    For a cache: the start of its slabinfo line (name, active, objects, size);
    for a meminfo field: ``Name: value kB``.  None when the server has no such sample.
    """
    found = {labels.get("__name__", ""): value for labels, value in client.query(query, at)}
    if cache:
        if not {fam.active, fam.objects, fam.objsize} <= set(found):
            return None
        return f"{cache:<17} {int(found[fam.active]):6} {int(found[fam.objects]):6} {int(found[fam.objsize]):6}"
    if len(found) != 1:
        return None
    return f"{field_name}: {int(next(iter(found.values())) / 1024)} kB"
