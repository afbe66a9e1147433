"""Kernel memory outside the slab caches: meminfo fields and the unaccounted estimate."""

from __future__ import annotations

import numpy as np

from detectors.leaks.analysis import LeakInput, analyse
from detectors.leaks.evidence import frame_text, sample_resolver
from detectors.leaks.meminfo import UNACCOUNTED, unaccounted
from detectors.leaks.series import counter_matrices
from forensics.model import LocatorKind, Severity
from forensics.types.leaks import Grade
from forensics.units import iso_utc
from tests.detectors.leaks.frames_for_tests import counter_frame, slab_frame, two_hours
from tests.helpers import assert_evidence_resolves


def _meminfo(hours: np.ndarray, **changes: np.ndarray) -> dict[str, np.ndarray]:  # type: ignore[type-arg]
    flat = np.ones(len(hours))
    fields = {
        "MemTotal": 8_000_000 * flat,
        "MemFree": 3_000_000 * flat,
        "MemAvailable": 4_000_000 * flat,
        "Active": 2_000_000 * flat,
        "Inactive": 1_500_000 * flat,
        "Unevictable": 0 * flat,
        "Slab": 300_000 * flat,
        "SReclaimable": 200_000 * flat,
        "SUnreclaim": 100_000 * flat,
        "KReclaimable": 200_000 * flat,
        "KernelStack": 10_000 * flat,
        "PageTables": 20_000 * flat,
        "Percpu": 3_000 * flat,
        "VmallocUsed": 30_000 * flat,
    }
    fields.update(changes)
    return fields


def _quiet_slabs(walls: np.ndarray) -> object:  # type: ignore[type-arg]
    return slab_frame(walls, {"kmalloc-64": (64, np.full(len(walls), 5_000.0))})


def test_memory_no_counter_explains_is_found_as_unaccounted() -> None:
    walls, hours = two_hours()
    lost = 262_144 * hours  # 256 MiB/h taken by alloc_pages() somewhere
    counters = counter_frame(walls, _meminfo(hours, MemFree=3_000_000 - lost, MemAvailable=4_000_000 - lost))
    slabs = slab_frame(walls, {"kmalloc-64": (64, np.full(len(walls), 5_000.0))})
    result = analyse(LeakInput(slabs, counters, source="s.sqlite"))
    [finding] = result.findings
    assert finding.kind == "kernel-memory-leak"
    assert finding.severity is Severity.HIGH
    assert "unaccounted" in finding.title
    assert {e.locator.name for e in finding.evidence} == {"meminfo:MemFree"}
    facts = {f.name: f.value for f in finding.facts}
    assert "262,144 KB/h" in facts["growth rate"]
    resolver = sample_resolver(frame_text(slabs, counters))
    assert_evidence_resolves(result.findings, resolvers={LocatorKind.SAMPLE: resolver})


def test_small_or_short_unaccounted_growth_is_below_the_estimate_noise() -> None:
    walls, hours = two_hours()
    lost = 8_192 * hours  # 8 MiB/h: within the swing of pages in per-CPU LRU batches
    counters = counter_frame(walls, _meminfo(hours, MemFree=3_000_000 - lost, MemAvailable=4_000_000 - lost))
    result = analyse(LeakInput(slab_frame(walls, {"kmalloc-64": (64, np.full(len(walls), 5_000.0))}), counters))
    assert result.findings == ()
    [verdict] = [v for v in result.meminfo if v.name == "Unaccounted"]
    assert verdict.verdict.rule == "no-effect"
    quick = counter_frame(walls[:20], _meminfo(hours[:20], MemFree=3_000_000 - 3_000_000 * hours[:20]))
    result = analyse(LeakInput(slab_frame(walls[:20], {"kmalloc-64": (64, np.full(20, 5_000.0))}), quick))
    [verdict] = [v for v in result.meminfo if v.name == "Unaccounted"]
    # Fast growth seen over less than the field's 0.5 h: never "stable", but too short to call a leak.
    assert verdict.verdict.rule == "growing-too-short"
    assert verdict.grade is Grade.UNDECIDED
    assert all(f.severity is Severity.INFO for f in result.findings)


def test_kernel_stacks_growing_name_threads() -> None:
    walls, hours = two_hours()
    counters = counter_frame(
        walls, _meminfo(hours, KernelStack=10_000 + 2_048 * hours, MemFree=3_000_000 - 2_048 * hours)
    )
    result = analyse(LeakInput(slab_frame(walls, {"kmalloc-64": (64, np.full(len(walls), 5_000.0))}), counters))
    stack = next(f for f in result.findings if "KernelStack" in f.title)
    assert stack.severity is Severity.HIGH
    assert "threads" in stack.summary
    assert all("Unaccounted" not in f.title for f in result.findings)


def test_sunreclaim_explained_by_a_flagged_cache_is_info() -> None:
    walls, hours = two_hours()
    objects = 5_000 + 8_192 * hours  # 4 MiB/h of 512-byte objects
    counters = counter_frame(
        walls,
        _meminfo(
            hours, SUnreclaim=100_000 + 4_096 * hours, Slab=300_000 + 4_096 * hours, MemFree=3_000_000 - 4_096 * hours
        ),
    )
    result = analyse(LeakInput(slab_frame(walls, {"foo_cache": (512, objects)}), counters))
    sunreclaim = next(f for f in result.findings if f.title.startswith("SUnreclaim"))
    assert sunreclaim.severity is Severity.INFO
    assert "explained by foo_cache" in sunreclaim.title
    assert "SUnreclaim" in result.explained  # the analysis says so itself: renderers look it up by name
    cache = next(f for f in result.findings if "foo_cache" in f.title and f.kind == "slab-leak")
    assert cache.severity is Severity.HIGH


def test_the_estimate_skips_missing_fields_and_needs_the_basics() -> None:
    walls, hours = two_hours()
    fields = _meminfo(hours)
    del fields["Percpu"], fields["VmallocUsed"]
    [matrix] = counter_matrices(counter_frame(walls, fields))
    found = unaccounted(matrix)
    assert found is not None
    assert set(found.missing) >= {"Percpu", "VmallocUsed", "SecPageTables", "Hugetlb"}
    expected_kb = 8_000_000 - 3_000_000 - 2_000_000 - 1_500_000 - 300_000 - 10_000 - 20_000
    assert np.allclose(found.raw, expected_kb * 1024)
    del fields["Slab"]
    [matrix] = counter_matrices(counter_frame(walls, fields))
    assert unaccounted(matrix) is None
    assert UNACCOUNTED == "Unaccounted"


def test_the_runway_is_measured_on_memavailable_where_it_fell_steadily() -> None:
    """A leak whose objects pin more than their slab (pages, page tables) takes MemAvailable faster than its own
    rate: the runway said the slab rate's (5.2 days for a 20-h fall on a real shared-mmap leak).  Where
    MemAvailable fell steadily over the leak's stretch, that measured fall is the runway; the slab rate's is said
    beside it.  A noisy MemAvailable (other processes) keeps the leak's own rate."""
    walls, hours = two_hours()
    taken = 100_000 * hours  # KB: MemAvailable falls 100,000 KB/h
    counters = counter_frame(walls, _meminfo(hours, MemFree=3_000_000 - taken, MemAvailable=4_000_000 - taken))
    slabs = slab_frame(walls, {"foo_cache": (512, 100 + 4000 * hours)})
    result = analyse(LeakInput(slabs, counters, source="s.sqlite"))
    [leak] = [f for f in result.findings if f.title.startswith("Slab cache foo_cache")]
    runway = {f.name: f.value for f in leak.facts}["MemAvailable runs out in"]
    assert runway.startswith("38.0 h at MemAvailable's measured decline (100,"), runway
    assert "at the leak's own rate" in runway
    rng = np.random.default_rng(3)
    noisy = 4_000_000 - 300_000 * rng.random(len(walls))
    counters = counter_frame(walls, _meminfo(hours, MemAvailable=noisy))
    result = analyse(LeakInput(slabs, counters, source="s.sqlite"))
    [leak] = [f for f in result.findings if f.title.startswith("Slab cache foo_cache")]
    assert "at this rate" in {f.name: f.value for f in leak.facts}["MemAvailable runs out in"]


def test_the_runway_counts_from_the_last_memavailable_read_and_names_it() -> None:
    """The time left is counted from the last MemAvailable read on, at the leak's rate, and says which sample that
    was: it said "(MemAvailable 3,906 MiB)" beside the measured decline "since" the leak's start, read as a runway
    from there, and named no sample (here MemAvailable was not read in the last 10 samples: its last read is 111)."""
    walls, hours = two_hours()
    rng = np.random.default_rng(5)
    available = 4_000_000 - 300_000 * rng.random(len(walls))  # other processes: no steady decline, the leak's rate
    fields = _meminfo(hours, MemAvailable=available)
    counters = counter_frame(walls, fields)
    counters = counters[~((counters["name"] == "MemAvailable") & (counters["sample_id"] > 111))]
    slabs = slab_frame(walls, {"foo_cache": (512, 100 + 4000 * hours)})
    result = analyse(LeakInput(slabs, counters, source="s.sqlite"))
    [v] = [v for v in result.caches if v.name == "foo_cache"]
    [leak] = [f for f in result.findings if f.title.startswith("Slab cache foo_cache")]
    runway = {f.name: f.value for f in leak.facts}["MemAvailable runs out in"]
    last_read = float(round(available[110])) * 1024
    assert runway.startswith(
        f"{last_read / v.rate / 24:,.1f} days at this rate, counted from the last MemAvailable read"
    )
    assert f"({last_read / 2**20:,.0f} MiB at {iso_utc(walls[110])}, sample 111)" in runway, runway
    assert result.mem_available == last_read and result.mem_available_at is not None
    assert result.mem_available_at.sample_id == 111 and result.mem_available_at.wall == walls[110]
