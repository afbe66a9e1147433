"""A leak that starts late in a long quiet stretch: judged on its own samples, never "stable, grows 0 KB/h".

The rise of a leak that began in the last tenth of the samples holds fewer than 8 of the stretch's ~24
window medians; judged over the whole stretch, the flat part's pairs made its Theil-Sen slope ~0 (a
700 MB/h leak "stable: grows 156 KB/h, below 256 KB/h", and the absence line said a leak of 85 MB/h
"would show").  The shape of the CI run of tests/live/test_live_prometheus.py at load ~10.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from detectors.leaks.analysis import LeakInput, analyse
from forensics.types.leaks import Grade, LeakAnalysis, SeriesVerdict

SIZE = 200  # bytes per vm_area_struct object


def _store(samples: int, interval: float, leaking_share: float, per_second: float) -> pd.DataFrame:
    """Slab rows of a store: vm_area_struct flat, then leaking over the last ``leaking_share`` of the stretch."""
    rng = np.random.default_rng(1)
    walls = 1.7e9 + np.arange(samples) * interval
    onset = walls[0] + (walls[-1] - walls[0]) * (1 - leaking_share)
    rows = []
    for wall in walls:
        for cache, size in (("vm_area_struct", SIZE), ("kmalloc-64", 64)):
            grown = int(max(0.0, wall - onset) * per_second) if cache == "vm_area_struct" else 0
            objects = 20_000 + int(rng.integers(-30, 30)) + grown
            rows.append((int(wall * 1000), float(wall), "b", cache, objects - 100, objects, size))
    return pd.DataFrame(rows, columns=["sample_id", "wall", "boot_id", "cache", "active_objs", "num_objs", "objsize"])


def _verdict(frame: pd.DataFrame) -> tuple[SeriesVerdict, LeakAnalysis]:
    analysis = analyse(LeakInput(slabs=frame, mem_total=24 << 30))
    [v] = [v for v in analysis.caches if v.name == "vm_area_struct"]
    return v, analysis


def test_a_leak_in_the_last_seconds_of_three_minutes_is_a_leak_at_its_rate() -> None:
    v, analysis = _verdict(_store(173, 1.0, 0.15, 1000.0))  # 26 s of 1000 objects a second: 5.2 MB
    assert v.grade is Grade.LEAK, v.verdict
    assert v.rate == pytest.approx(1000 * SIZE * 3600, rel=0.1)
    assert v.since_wall >= 1.7e9 + 172 * 0.85 - 1  # judged from the onset, not the start
    assert not analysis.absence().startswith("No cache")


def test_a_rise_over_too_few_samples_is_growing_too_short_to_call() -> None:
    v, analysis = _verdict(_store(173, 1.0, 0.06, 1000.0))  # ~10 samples of the rise
    assert v.grade is Grade.UNDECIDED and v.verdict.rule == "growing-too-short", v.verdict
    assert "samples over" in v.verdict.reason and "needs >= 24" in v.verdict.reason
    assert analysis.absence().startswith("Growing, too short to call")
    # Its span in the reader's unit: "grew 2,014 KB in 0.00 h" said a rise of 11 s took no time.
    [finding] = [f for f in analysis.findings if "vm_area_struct" in f.title]
    assert finding.summary.startswith("vm_area_struct grew 2,014 KB in 11 s, "), finding.summary
    assert "0.00 h" not in finding.summary + finding.confidence_reason + str(finding.facts)


def test_a_day_of_samples_then_half_an_hour_of_a_slow_rise_is_not_stable() -> None:
    # 5 objects a second from the last 2% of a day at a 60 s interval: 1.7 MB in 29 minutes.
    v, _ = _verdict(_store(1440, 60.0, 0.02, 5.0))
    assert v.grade is Grade.UNDECIDED and v.verdict.rule == "short-ramp", v.verdict
    assert v.rate == pytest.approx(5 * SIZE * 3600, rel=0.15)


def test_a_late_leak_after_a_burst_given_back_starts_on_the_timeline_at_its_onset() -> None:
    """The report's timeline starts a finding at its earliest evidence: a late leak's finding cited the fall of an
    earlier burst given back (samples from the quiet stretch), and `report --store` placed an mmap leak that began
    05:22 at 05:01 "for 23.3 min" (it grew 2.5 min).  A leak cites its samples from its onset on."""
    from detectors.incident.timeline import build_timeline
    from forensics.model import NotAvailable

    frame = _store(173, 1.0, 0.15, 1000.0)
    vma = frame["cache"] == "vm_area_struct"
    burst = vma & (frame["wall"] >= 1.7e9 + 20) & (frame["wall"] < 1.7e9 + 40)
    frame.loc[burst, ["active_objs", "num_objs"]] += 8_000  # held 20 s, then given back
    v, analysis = _verdict(frame)
    assert v.grade is Grade.LEAK and v.fall is not None and v.fall.top.wall < v.since_wall, v.verdict
    [leak] = [f for f in analysis.findings if f.title.startswith("Slab cache vm_area_struct")]
    [event] = build_timeline((leak,), NotAvailable("no boot time"))
    # From its onset's last sample at its level (the judged part's window edge before it, at most a window early).
    began = v.since_wall if v.onset is None else v.onset.before.wall
    assert event.when.seconds == pytest.approx(began, abs=1.0), (event.when, v.since_wall, v.onset)


# The judged part's edge lands 18 s before, 25 s after, 166 s before and 20 s after these starts.
@pytest.mark.parametrize(("samples", "leaking_share"), [(121, 0.47), (601, 0.07), (1000, 0.3), (281, 0.2)])
def test_the_onset_is_the_samples_either_side_of_a_known_start(samples: int, leaking_share: float) -> None:
    """The judged part starts at a window's edge: said as the onset it came a window early (/tmp/ue9 t4: judged
    from 05:03:59, flat through 05:04:20, the first socket at 05:04:25).  The onset is read from the raw samples."""
    interval = 5.0
    frame = _store(samples, interval, leaking_share, per_second=300.0)
    walls = np.unique(frame["wall"].to_numpy())
    start = walls[0] + (walls[-1] - walls[0]) * (1 - leaking_share)  # the leak's known start (_store's onset)
    v, analysis = _verdict(frame)
    assert v.grade is Grade.LEAK, v.verdict
    assert v.onset is not None, v  # was: only the window's edge, said as "judged from"
    assert v.onset.before.wall <= start < v.onset.after.wall, (v.onset, start)
    assert v.onset.after.wall - v.onset.before.wall == interval
    [finding] = [f for f in analysis.findings if "vm_area_struct" in f.title]
    assert any(x.name == "onset" and str(v.onset.after.sample_id) in x.value for x in finding.facts)
    # The report's timeline starts the finding at its first evidence: the window's edge put a UDP leak that began
    # 15:03:33.5 at "First 15:03:24" (/tmp/leaks19), this one up to 166 s early; now the last sample at its level.
    from detectors.incident.timeline import build_timeline
    from forensics.model import NotAvailable

    [event] = build_timeline((finding,), NotAvailable("no boot time"))
    assert start - interval <= event.when.seconds <= start, (event.when, start)


def test_a_leak_in_the_last_minutes_of_hours_is_a_leak_at_its_rate_from_its_onset() -> None:
    """A responder runs `leaks` right after memory starts going: the leak is at the end of a long store.  Over
    the last 200 s of 2.8 h of 5-s samples (34 windows of ~5 min), the rise fills the last window or two: a step
    fits them as well as a late onset, the step won and the flat windows' pairs made it "stable, grows 0 KB/h"
    with "No cache ... grows like a leak".  And a late rise's rate was taken from its knot window's centre, with
    half a window of the level in it (127 MB/h said at 63 MB/h)."""
    for share, per_second in ((0.02, 300.0), (0.012, 180.0)):
        frame = _store(2001, 5.0, share, per_second)
        start = 1.7e9 + 10_000 * (1 - share)  # _store's onset
        v, analysis = _verdict(frame)
        assert v.grade is Grade.LEAK, v.verdict
        assert v.rate == pytest.approx(per_second * SIZE * 3600, rel=0.05)
        assert v.onset is not None and v.onset.before.wall <= start < v.onset.after.wall, (v.onset, start)
        assert not analysis.absence().startswith("No cache")


def test_the_last_minute_of_a_leak_in_hours_is_growing_too_short_at_its_rate() -> None:
    v, analysis = _verdict(_store(2001, 5.0, 0.006, 300.0))  # 60 s, 12 samples of the rise
    assert v.grade is Grade.UNDECIDED and v.verdict.rule == "growing-too-short", v.verdict
    assert v.rate == pytest.approx(300 * SIZE * 3600, rel=0.05)
    assert analysis.absence().startswith("Growing, too short to call")


def test_a_step_up_in_the_last_window_of_hours_is_no_leak() -> None:
    """What a step at the end looks like in its raw samples (8 MB at once, flat after it for 3 min) tells it from a
    leak's ramp, which the windows could not: no leak, no suspicion."""
    frame = _store(2001, 5.0, 0.0, 0.0)
    step = (frame["cache"] == "vm_area_struct") & (frame["wall"] >= 1.7e9 + 9_820)
    frame.loc[step, ["active_objs", "num_objs"]] += 40_000
    v, _ = _verdict(frame)
    assert v.grade.rank < Grade.SUSPECT.rank, v.verdict


def test_a_leak_of_the_last_minutes_says_it_is_short_and_is_as_severe_as_its_harm() -> None:
    """Minutes of a steady ramp cannot tell a leak from a burst that will be given back: the finding says how long
    it has risen and when to look again, is believed less, and is high only from the harm its rate does."""
    from forensics.model import Severity

    frame = _store(2001, 5.0, 0.012, 180.0)  # 127 MB/h over the last 2 min of 2.8 h
    severities = {}
    for gib in (24, 512):  # 12.4% of MemTotal a day (high from 10%), 0.6% a day
        analysis = analyse(LeakInput(slabs=frame, mem_total=gib << 30))
        [finding] = [f for f in analysis.findings if "vm_area_struct" in f.title]
        severities[gib] = finding.severity
        [caveat] = [x.value for x in finding.facts if x.name == "short rise"]
        assert caveat.startswith("rising for the last 2 min only") and "leaks --last" in caveat, caveat
        assert finding.confidence <= 0.7 and caveat in finding.confidence_reason
    assert severities == {24: Severity.HIGH, 512: Severity.MEDIUM}
    # A leak over the whole store is no short rise.
    analysis = analyse(LeakInput(slabs=_store(2001, 5.0, 1.0, 5.0), mem_total=24 << 30))
    [finding] = [f for f in analysis.findings if "vm_area_struct" in f.title]
    assert not [x for x in finding.facts if x.name == "short rise"], finding.facts


@pytest.mark.parametrize("samples", [2029, 2033, 2039])
def test_a_leak_shorter_than_half_the_last_window_is_judged_from_its_raw_samples(samples: int) -> None:
    """125 s (25 samples, 6 MB) of a leak at the end of 2.8 h moves no window median when the last window holds
    more of the level than of the rise (6 of 40 alignments): the cache was not even judged, and the store read "No
    cache ... grows like a leak" while saying a late leak of 4,096 KB over >= 24 samples would show."""
    v, analysis = _verdict(_store(samples, 5.0, 125.0 / ((samples - 1) * 5.0), 250.0))
    assert v.grade is Grade.LEAK, v.verdict
    assert v.rate == pytest.approx(250 * SIZE * 3600, rel=0.1)
    assert not analysis.absence().startswith("No cache")


def test_scatter_before_a_late_onset_is_not_memory_given_back() -> None:
    """The flat samples before a late leak's onset scatter by a few objects: their largest fall (12 KB) was "yes:
    ... 100% of its rise before it" (that rise being 12 KB of scatter) on a leak that grew 11.5 MB and never fell.
    A fall is memory given back only past the jitter share of the rise before it and of the series' growth."""
    from detectors.leaks.findings import given_back

    v, _analysis = _verdict(_store(2001, 5.0, 0.02, 300.0))
    assert v.grade is Grade.LEAK and v.fall is not None and v.fall.share > 0.9  # the scatter's "fall"
    said = given_back(v)
    assert said.startswith("no: ") and "(scatter)" in said, said


@pytest.mark.parametrize(("rise", "held"), [(150.0, 50.0), (120.0, 80.0)])
def test_a_rise_that_stopped_before_the_end_is_held_not_a_leak(rise: float, held: float) -> None:
    """A process mapping many regions at start-up (a JVM, a build): 300 VMAs a second for ``rise`` s, then flat for the
    store's last ``held`` s.  Judged on its raw samples it was a steady ramp, "leaks 193,686 KB/h" at high, with a
    "short rise" fact saying it was still rising; it is held, said as info, and no "short rise" is claimed."""
    from forensics.model import Severity

    frame = _store(2016, 5.0, 0.0, 0.0)
    onset = float(frame["wall"].max()) - rise - held
    vma = frame["cache"] == "vm_area_struct"
    grown = ((frame["wall"] - onset).clip(lower=0.0, upper=rise) * 300.0).astype(int)
    frame.loc[vma, "active_objs"] += grown[vma]
    frame.loc[vma, "num_objs"] += grown[vma]
    v, analysis = _verdict(frame)
    assert v.grade is Grade.UNDECIDED and v.verdict.rule == "held-rise", v.verdict
    assert f"then flat for the last {held:.0f} s: held, not growing" in v.verdict.reason, v.verdict.reason
    [finding] = [f for f in analysis.findings if "vm_area_struct" in f.title]
    assert finding.severity.rank < Severity.MEDIUM.rank, finding
    assert "then held flat at the end since " in finding.title and "KB/h" not in finding.title, finding.title
    assert not [x for x in finding.facts if x.name == "short rise"], finding.facts


def test_a_dip_from_the_first_sample_is_not_memory_given_back(tmp_path: Path) -> None:
    """A cache that opened high, dipped 169 KB over its first samples, then grew 1.7 MB late and never fell (a
    healthy VM's ext4_inode_cache, /tmp/ue15): its dip read "given back: yes: ... fell from 114,399 KB (sample 1,
    ...) to 114,230 KB (sample 8, ...), 100% of its rise before it", though nothing rose before sample 1."""
    from detectors.leaks.findings import given_back
    from forensics.pipelines.leaks import analyse_store
    from tests.detectors.leaks.storebuild import Cache, write_store

    def inodes(i: int, _hours: float) -> int:
        if i < 7:
            return 103_852 - 22 * i  # the dip from the first sample
        return 103_698 + (i * 7919) % 5 + 120 * max(0, i - 35)

    store = tmp_path / "dip.sqlite"
    write_store(store, [Cache("ext4_inode_cache", 1128, inodes), Cache("kmalloc-64", 64, lambda i, h: 5_000)], 49, 5.0)
    [v] = [v for v in analyse_store(store).analysis.caches if v.name == "ext4_inode_cache"]
    assert v.fall is None or v.fall.top.sample_id > 1, v.fall
    said = given_back(v)
    assert said.startswith("no: ") and "sample 1," not in said, said


def test_an_onset_found_on_objects_in_use_cites_the_values_it_was_found_on() -> None:
    """The onset is found on a cache's objects in use; its samples' bytes (num_objs x objsize, what the findings
    cite) do not move while the leak fills the free objects of its slabs.  Said as "rose after ... (sample N, at its
    level), first above it at ... (sample M)", a reader checking samples N and M in bytes saw no rise: the onset
    says its values, in the measure it was found on, and its bar."""
    from forensics.report.leaks import series_to_dict
    from forensics.types.leaks import OBJECTS_IN_USE

    frame = _store(281, 5.0, 0.2, 300.0)
    vma = frame["cache"] == "vm_area_struct"
    # Free objects in its slabs: 2,000 beyond the level, filled by the leak's first ~7 samples before slabs grow.
    frame.loc[vma, "num_objs"] = frame.loc[vma, "active_objs"].clip(lower=22_000) + 100
    v, analysis = _verdict(frame)
    assert v.grade is Grade.LEAK and v.onset is not None, v.verdict
    onset = v.onset
    active = dict(zip(frame.loc[vma, "sample_id"], frame.loc[vma, "active_objs"], strict=True))
    assert onset.measure == OBJECTS_IN_USE
    assert (onset.before_value, onset.after_value) == (active[onset.before.sample_id], active[onset.after.sample_id])
    assert onset.before_value <= onset.bar < onset.after_value, onset
    assert onset.before.value == onset.after.value  # the bytes cited did not move at the onset
    [finding] = [f for f in analysis.findings if "vm_area_struct" in f.title]
    [said] = [x.value for x in finding.facts if x.name == "onset"]
    assert f"(sample {onset.before.sample_id}: {onset.before_value:,.0f} objects in use," in said, said
    assert f"(sample {onset.after.sample_id}: {onset.after_value:,.0f} objects in use)" in said, said
    assert f"at most {math.floor(onset.bar):,})" in said and "found on objects in use" in said, said
    doc = series_to_dict("cache", v, None)["onset"]
    assert doc["measure"] == "active_objs" and doc["first_above"]["value"] == onset.after_value, doc


def test_an_onsets_bar_is_said_below_the_first_value_above_it() -> None:
    """Rounded to the nearest, a real SUnreclaim onset read "(sample 34: 61,592 KB, within its level's scatter: at
    most 61,608 KB), first above it at ... (sample 35: 61,608 KB)" (/tmp/leaks19 leak.sqlite): above a bar said equal.
    The bar parts whole counts (KB of meminfo, objects in use): said rounded down, the first value above it shows."""
    from forensics.types.leaks import BYTES, OBJECTS_IN_USE, Onset, SampleRef

    def ref(sample_id: int, value: float) -> SampleRef:
        return SampleRef("onset", sample_id, 1.7e9 + sample_id, value, "")

    kb = Onset(ref(34, 61_592 * 1024.0), ref(35, 61_608 * 1024.0), BYTES, 61_607.6 * 1024, 61_592 * 1024.0,
               61_608 * 1024.0)  # fmt: skip
    assert "within its level's scatter: at most 61,607 KB), first above it" in kb.said(), kb.said()
    assert "(sample 35: 61,608 KB)" in kb.said()
    objects = Onset(ref(49, 0.0), ref(50, 0.0), OBJECTS_IN_USE, 19_952.7, 19_914.0, 19_953.0)
    assert (
        "at most 19,952), first above it" in objects.said() and "(sample 50: 19,953 objects in use)" in objects.said()
    )


@pytest.mark.parametrize(("paused", "held"), [(5.0, False), (35.0, True)])
def test_a_pause_of_seconds_at_a_1s_interval_is_not_a_held_rise(paused: float, held: bool) -> None:
    """A VMA leak at 1,000 a second seen through a 1-s Prometheus scrape, its last seconds flat: six samples at the
    level reached were 5 s, and CI (2026-12-07) read "rose 4,012 KB ..., then flat for the last 5 s: held, not
    growing" while the leak went on (its workload paused).  A hold is told from a pause after 30 s, whatever the
    interval; at 5-s samples that is the same six samples as before."""
    frame = _store(173, 1.0, 0.0, 0.0)
    end = float(frame["wall"].max())
    onset = end - 30.0 - paused
    vma = frame["cache"] == "vm_area_struct"
    grown = ((frame["wall"] - onset).clip(lower=0.0, upper=30.0) * 1000.0).astype(int)
    frame.loc[vma, "active_objs"] += grown[vma]
    frame.loc[vma, "num_objs"] += grown[vma]
    v, _analysis = _verdict(frame)
    if held:
        assert v.verdict.rule == "held-rise" and v.held is not None, v.verdict
        assert f"then flat for the last {paused:.0f} s: held, not growing" in v.verdict.reason, v.verdict.reason
    else:  # judged as the rise it is: 30 s of 1,000 a second
        assert v.verdict.rule != "held-rise" and v.held is None, v.verdict
        assert v.grade is Grade.LEAK, v.verdict


@pytest.mark.parametrize(("flat", "held"), [(24.0, False), (54.0, True)])
def test_a_rise_after_the_first_samples_is_held_after_30_s_at_a_1s_interval(flat: float, held: bool) -> None:
    """ue21 #4: 15,000 UDP sockets opened over 15 s from sample 7 of a 1-s store, then ``flat`` s: at 24 s flat the
    rise, not late enough for held_rise's 30-s floor, was held by held_level ("then flat for the last 24 s: held,
    not growing", info) -- a leak pausing between bursts called not growing.  Held from 30 s flat on either path."""
    frame = _store(int(7 + 15 + flat) + 1, 1.0, 0.0, 0.0)
    start = float(frame["wall"].min())
    vma = frame["cache"] == "vm_area_struct"
    grown = ((frame["wall"] - start - 7.0).clip(lower=0.0, upper=15.0) * 1000.0).astype(int)
    frame.loc[vma, "active_objs"] += grown[vma]
    frame.loc[vma, "num_objs"] += grown[vma]
    v, _analysis = _verdict(frame)
    if held:
        assert v.verdict.rule == "held-rise" and v.held is not None, v.verdict
    else:
        assert v.verdict.rule != "held-rise" and v.held is None, v.verdict


def test_a_days_share_of_memtotal_from_seconds_is_said_as_an_extrapolation() -> None:
    """ue21 #10: "share of MemTotal: 65.737% per day" stood as a figure beside 40 s of samples.  Under a day of
    samples it says it is the rate carried on, and over what it was measured."""
    _v, analysis = _verdict(_store(173, 1.0, 0.15, 1000.0))
    [finding] = [f for f in analysis.findings if "vm_area_struct" in f.title]
    [share] = [x.value for x in finding.facts if x.name == "share of MemTotal"]
    assert share.endswith(" per day if it went on at this rate (extrapolated from 25 s of samples)"), share
