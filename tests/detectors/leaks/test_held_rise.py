"""A rise in the middle of a store, held at its new level to the store's end: one info line, never a leak.

Two hours of 60-s samples written by the store code slab-watch uses (storebuild.write_store): vm_area_struct flat
for 40 min, then up by 20,000 objects (3.8 MB) in a step or a 20-min ramp, then flat for the rest of the store.
Before, the step was "one-time-step" (stable: no line at all) and the ramp "rises consistently" (leak suspected,
medium); the late rise held at the store's end already had its info line (held-rise, test_late_onset.py).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest

from collectors.slabstore import SlabStore
from forensics.model import LocatorKind, Severity
from forensics.pipelines.leaks import analyse_store
from forensics.report.leaks import series_to_dict
from forensics.types.leaks import Grade
from forensics.units import iso_utc
from tests.detectors.leaks.storebuild import START, Cache, write_store
from tests.helpers import assert_evidence_resolves

INTERVAL = 60.0
SAMPLES = 121
ROSE_AT = 40  # the sample the rise starts after
RISEN = 20_000  # objects of 192 bytes


def _vmas(ramp_samples: int, rises_again: bool = False) -> Callable[[int, float], int]:
    noise = random.Random(3)
    jitter = [noise.randint(-40, 40) for _ in range(SAMPLES)]

    def objects(i: int, hours: float) -> int:
        risen = RISEN * min(max(i - ROSE_AT, 0) / max(ramp_samples, 1), 1.0)
        again = 300 * max(i - 100, 0) if rises_again else 0  # the same, then a leak from sample 100 on
        return 30_000 + jitter[i] + int(risen) + again

    return objects


def _store(path: Path, ramp_samples: int, rises_again: bool = False) -> None:
    caches = [
        Cache("vm_area_struct", 192, _vmas(ramp_samples, rises_again)),
        Cache("kmalloc-64", 64, lambda i, h: 10_000 + (i * 7919) % 50),
    ]
    write_store(path, caches, SAMPLES, INTERVAL)


@pytest.mark.parametrize("ramp_samples", [1, 20])
def test_a_rise_held_since_the_middle_of_the_store_is_said_once_as_info(tmp_path: Path, ramp_samples: int) -> None:
    store = tmp_path / "held.sqlite"
    _store(store, ramp_samples)
    result = analyse_store(store)
    [v] = [v for v in result.analysis.caches if v.name == "vm_area_struct"]
    assert v.grade is Grade.STABLE and v.verdict.rule == "held-rise", v.verdict
    assert v.held is not None and not v.held.late
    top = START + (ROSE_AT + ramp_samples) * INTERVAL
    # The rise: from the last sample at the level before it to the first at the level held (the samples' jitter
    # is 80 objects: the first within it of the level held may come a sample early on a ramp).
    assert START + (ROSE_AT - 1) * INTERVAL <= v.held.start.wall <= START + ROSE_AT * INTERVAL, v.held
    assert top - INTERVAL <= v.held.top.wall <= top, v.held
    assert v.held.rose == pytest.approx(RISEN * 192, rel=0.02)
    assert loud(result.incident.findings) == []
    [finding] = [f for f in result.incident.findings if "vm_area_struct" in f.title]
    assert finding.severity is Severity.INFO
    assert finding.title.startswith(f"Slab cache vm_area_struct rose {v.held.rose / 1024:,.0f} KB, then held flat")
    assert f"since {iso_utc(v.held.top.wall)}: not growing" in finding.title and "KB/h" not in finding.title
    facts = {f.name: f.value for f in finding.facts}
    assert f"at {iso_utc(v.held.start.wall)} (sample {v.held.start.sample_id})" in facts["rose"], facts
    held_for = (START + (SAMPLES - 1) * INTERVAL - v.held.top.wall) / 60
    assert facts["held since"].startswith(f"{iso_utc(v.held.top.wall)} (sample {v.held.top.sample_id}), for ")
    assert f"for {held_for:.0f} min to the last sample" in facts["held since"], facts["held since"]
    with SlabStore.open(store) as reader:
        assert_evidence_resolves(result.incident.findings, resolvers={LocatorKind.SAMPLE: reader.resolve_evidence})
    assert "No cache or meminfo field grows like a leak" in result.analysis.absence()
    held = series_to_dict("cache", v, None)["held"]
    assert held["late"] is False and held["top"]["sample_id"] == v.held.top.sample_id, held
    assert held["rose_bytes"] == pytest.approx(v.held.rose)


def test_the_same_rise_that_rises_again_at_the_end_is_not_held(tmp_path: Path) -> None:
    """A leak that starts after the level was held is a rise at the end: not held, and still called."""
    store = tmp_path / "again.sqlite"
    _store(store, 20, rises_again=True)
    result = analyse_store(store)
    [v] = [v for v in result.analysis.caches if v.name == "vm_area_struct"]
    assert v.verdict.rule != "held-rise" and v.held is None, v.verdict
    assert v.grade in (Grade.LEAK, Grade.SUSPECT, Grade.UNDECIDED), v.verdict


def loud(findings: object) -> list[str]:
    """The findings at medium or above, as read."""
    return [f"{f.severity.value}: {f.title}" for f in findings if f.severity >= Severity.MEDIUM]  # type: ignore[attr-defined]


def test_a_cache_warming_up_says_when_it_went_flat_as_a_time(tmp_path: Path) -> None:
    """The plateau's position, through the store: the UTC time of the judged series' first sample plus its knot."""
    import math

    store = tmp_path / "fill.sqlite"
    caches = [
        Cache("vm_area_struct", 192, lambda i, h: 30_000 + int(20_000 * (1 - math.exp(-h / 0.2)))),
        Cache("kmalloc-64", 64, lambda i, h: 10_000 + (i * 7919) % 50),
    ]
    write_store(store, caches, SAMPLES, INTERVAL)
    [v] = [v for v in analyse_store(store).analysis.caches if v.name == "vm_area_struct"]
    assert v.verdict.rule == "plateau", v.verdict
    at = iso_utc(START + v.features.plateau.hours * 3600.0)
    assert f"flat after about {at}, {v.features.plateau.hours * 60:.0f} min into the samples" in v.verdict.reason


def test_a_leaks_rate_interval_is_said_in_one_unit(tmp_path: Path) -> None:
    """The growth rate's confidence interval read "90% CI 267,956 KB–374,515 KB/h" (/tmp/leaks19 idle.sqlite's
    PageTables): its lower bound as an amount in KB, the upper as a rate.  Both are rates: "267,956–374,515 KB/h"."""
    import re

    store = tmp_path / "leak.sqlite"
    caches = [
        Cache("vm_area_struct", 192, lambda i, h: 30_000 + 300 * i),
        Cache("kmalloc-64", 64, lambda i, h: 10_000 + (i * 7919) % 50),
    ]
    write_store(store, caches, SAMPLES, INTERVAL)
    [finding] = [f for f in analyse_store(store).incident.findings if "vm_area_struct" in f.title]
    [rate] = [x.value for x in finding.facts if x.name == "growth rate"]
    assert re.fullmatch(r"[\d,]+ KB/h \(90% CI [\d,]+–[\d,]+ KB/h, Theil–Sen\)", rate), rate
