"""From Prometheus series to leak-detector frames: reboots, counter resets and scrape gaps are handled and said.

The series here are typed records as the HTTP client returns them (the
transport is tested against a real Prometheus in tests/live/test_live_prometheus.py);
slab-watch's textfile is checked by the real ``promtool check metrics``.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from collectors.fleet_metrics import KFORENSIC, NODE, build_instance, instance_queries, node_meminfo_metric
from collectors.prometheus import PromClient, Series, parse_match, selector
from collectors.slabwatch import take_sample
from forensics.errors import UsageError
from forensics.fleet.exposition import sample_exposition
from forensics.fleet.leaks import analyse_fetched
from forensics.report.fleet_leaks import FleetLeaksRenderer, to_dict
from forensics.report.formats import OutputFormat, render
from forensics.types.fleet import FleetWindow
from forensics.types.leaks import LeakThresholds
from tests.collectors.test_procfs import FakeTree

STEP = 30.0
START = 1_796_000_000.0
N = 480  # 4 hours
REBOOT = 240
GAP = range(100, 112)  # 12 steps (6 minutes) without a sample in the first boot
INSTANCE = "db7:9100"


def _series(name: str, values: dict[float, float], **labels: str) -> Series:
    return Series({"__name__": name, "instance": INSTANCE, **labels}, tuple(sorted(values.items())))


def _points(f: object) -> dict[float, float]:
    return {START + i * STEP: f(i) for i in range(N) if i not in GAP}  # type: ignore[operator]


def _vma(i: int) -> float:
    # 20 objects per step (2,400/h); counting restarts after the reboot.
    return 5000 + 20 * (i if i < REBOOT else i - REBOOT)


def _instance() -> object:
    fam = NODE
    objects = [
        _series(fam.objects, _points(_vma), slab="vm_area_struct"),
        _series(fam.objects, _points(lambda i: 800 + (i % 3)), slab="dentry"),
    ]
    active = [_series(fam.active, _points(_vma), slab="vm_area_struct")]
    active.append(_series(fam.active, _points(lambda i: 700.0), slab="dentry"))
    size = [_series(fam.objsize, _points(lambda i: 184.0), slab="vm_area_struct")]
    size.append(_series(fam.objsize, _points(lambda i: 192.0), slab="dentry"))
    meminfo = [
        _series(node_meminfo_metric("MemTotal"), _points(lambda i: 8 * 2.0**30)),
        _series(node_meminfo_metric("MemAvailable"), _points(lambda i: 6 * 2.0**30)),
    ]
    boot = [_series(fam.boot, _points(lambda i: START - 3600 if i < REBOOT else START + REBOOT * STEP - 20))]
    scanned = [_series("kforensic_vmstat_total", _points(lambda i: 100.0 * (i % 300)), counter="slabs_scanned")]
    return build_instance(INSTANCE, fam, active, objects, size, meminfo, boot, scanned, START, STEP)


def test_reboots_resets_and_gaps_are_handled_and_said() -> None:
    inst = _instance()
    assert [round(g.seconds) for g in inst.gaps] == [(len(GAP) + 1) * STEP]  # type: ignore[attr-defined]
    whats = [r.what for r in inst.resets]  # type: ignore[attr-defined]
    assert any(w.startswith("reboot") for w in whats) and "counter reset (continued)" in whats
    assert inst.slabs["boot_id"].nunique() == 2  # type: ignore[attr-defined]
    # The counter is continued across its reset: it never goes down.
    scanned = inst.counters[inst.counters["name"] == "slabs_scanned"]["value"].to_numpy()  # type: ignore[attr-defined]
    assert (scanned[1:] >= scanned[:-1]).all()

    window = FleetWindow(START, START + (N - 1) * STEP, STEP, tuple(instance_queries("", "$instance")), 0)
    result = analyse_fetched(window, [inst], "http://prom:9090", "", LeakThresholds())  # type: ignore[list-item]
    [res] = result.results
    assert res.analysis.boots == 2
    rows = [r for r in result.rows if r.series == "vm_area_struct"]
    assert len(rows) == 2  # each boot judged on its own
    for row in rows:
        assert abs(row.rate - 2400 * 184) <= 0.05 * 2400 * 184
    first_boot = min(rows, key=lambda r: r.since)
    assert any("scrape gap of 390 s" in n for n in first_boot.notes)
    text = render(FleetLeaksRenderer(), result, OutputFormat.TEXT)
    assert "reboot: boot time" in text and "scrape gap of 390 s" in text and "counter reset" in text
    md = render(FleetLeaksRenderer(), result, OutputFormat.MD)
    assert "| instance | series | grade |" in md and "## Gaps and resets" in md
    doc = to_dict(result)
    assert doc["instances"][0]["gaps"][0]["seconds"] == 390.0
    finding = next(f for f in result.incident.findings if "vm_area_struct" in f.title)
    assert finding.title.startswith(INSTANCE + ": ")
    assert all(e.source.startswith("http://prom:9090 {__name__=~") for e in finding.evidence)
    assert all(e.locator.start % 1000 == 0 and e.timestamp is not None for e in finding.evidence)
    assert any(x.name == "caveat" and "scrape gap" in x.value for x in finding.facts)


def test_selectors_and_matchers() -> None:
    assert parse_match('{job="node"}') == 'job="node"'
    assert parse_match(' job="node", env=~"prod.*" ') == 'job="node", env=~"prod.*"'
    assert selector("up", 'job="node"', instance='a"b') == 'up{job="node",instance="a\\"b"}'
    with pytest.raises(UsageError):
        parse_match('{a="1"}{b="2"}')
    with pytest.raises(UsageError):
        PromClient("prom:9090")
    assert KFORENSIC.cache_label == "cache" and NODE.cache_label == "slab"
    queries = instance_queries('job="node"', "db7:9100")
    assert len(queries) == 14 and all('job="node",instance="db7:9100"' in q for q in queries)


def test_textfile_is_valid_exposition(tmp_path: Path) -> None:
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool (package prometheus) is not installed")
    tree = FakeTree(tmp_path / "root")
    text = sample_exposition(take_sample(tree.root, None))
    assert 'kforensic_slab_objects{cache="task_struct"}' in text
    assert "kforensic_meminfo_bytes{field=" in text and "kforensic_boot_time_seconds" in text
    checked = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True, check=False)
    # promtool exits 0 for valid text (lint remarks, such as counters without _total, go to stdout)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_systemd_unit_keeps_the_textfile_dir_writable() -> None:
    from forensics.pipelines.slabwatch import systemd_unit

    unit = systemd_unit(Path("/var/lib/kforensic/s.sqlite"), "15s", None, False, Path("/var/lib/node-exporter"))
    assert "--textfile-dir /var/lib/node-exporter" in unit
    assert "ReadWritePaths=/var/lib/node-exporter" in unit and "ProtectSystem=strict" in unit


def test_growth_too_brief_to_call_is_not_said_as_no_leak() -> None:
    """60 one-second points of a cache rising 540 KB: growing, too short to call, never 'no leak' (#27)."""
    n, step = 60, 1.0
    points = {START + i * step: 5000.0 + 50 * i for i in range(n)}  # 50 objects/s of 184 B: 540 KB in a minute
    flat = {START + i * step: 700.0 for i in range(n)}
    fam = NODE
    inst = build_instance(
        INSTANCE,
        fam,
        [_series(fam.active, points, slab="vm_area_struct"), _series(fam.active, flat, slab="dentry")],
        [_series(fam.objects, points, slab="vm_area_struct"), _series(fam.objects, flat, slab="dentry")],
        [
            _series(fam.objsize, {t: 184.0 for t in flat}, slab="vm_area_struct"),
            _series(fam.objsize, {t: 192.0 for t in flat}, slab="dentry"),
        ],
        [_series(node_meminfo_metric("MemTotal"), {t: 8 * 2.0**30 for t in flat})],
        [_series(fam.boot, {t: START - 3600 for t in flat})],
        [],
        START,
        step,
    )
    window = FleetWindow(START, START + (n - 1) * step, step, tuple(instance_queries("", "$instance")), 0)
    result = analyse_fetched(window, [inst], "http://prom:9090", "", LeakThresholds())  # type: ignore[list-item]
    [res] = result.results
    assert res.analysis.power.judgeable and res.analysis.examined.undecided >= 1 and not result.rows
    text = render(FleetLeaksRenderer(), result, OutputFormat.TEXT)
    assert "No instance has a leaking or suspect series; 1 have series growing, too short to call." in text
    assert "grows like a leak." not in text.split("\n")[2]  # the fleet line does not say absence
    assert f"{INSTANCE}: Growing, too short to call: " in text


def test_report_refuses_a_fleet_document_of_several_instances(tmp_path: Path) -> None:
    """``leaks --prometheus`` over several instances is a fleet, not one machine: ``report --from`` refuses it."""
    import json

    from forensics.errors import InputError
    from forensics.pipelines.report import load_findings_file

    window = FleetWindow(START, START + (N - 1) * STEP, STEP, tuple(instance_queries("", "$instance")), 0)
    for count in (2, 1):
        result = analyse_fetched(window, [_instance()] * count, "http://prom:9090", "", LeakThresholds())  # type: ignore[list-item]
        path = tmp_path / f"fleet{count}.json"
        path.write_text(json.dumps(to_dict(result)))
        if count == 1:
            assert any("vm_area_struct" in f.title for f in load_findings_file(path).findings)
            continue
        with pytest.raises(InputError) as refused:
            load_findings_file(path)
        assert refused.value.message == (
            f"{path}: a fleet document (kforensic.fleet-leaks/1) of 2 hosts: a report tells one machine's incident,"
            " and their findings are not one story"
        )


def _textfile_instance(scraped_on: bool) -> object:
    """slab-watch's textfile scraped every 5 s for 10 min; its sampler stopped 45 s from step 40 on (ue9 9: SIGSTOP
    while node_exporter and Prometheus scraped on), or the scrapes themselves failed then."""
    step, n, stop = 5.0, 120, range(40, 49)
    steps = [START + i * step for i in range(n) if scraped_on or i not in stop]
    reading = {t: (START + 39 * step if (t - START) / step in stop else t) for t in steps}
    fam = NODE

    def series(name: str, value: float, **labels: str) -> Series:
        return Series({"__name__": name, "instance": INSTANCE, **labels}, tuple((t, value) for t in steps))

    objects = [
        Series({"__name__": fam.objects, "instance": INSTANCE, "slab": "dentry"}, tuple((t, 800.0) for t in steps))
    ]
    active = [series(fam.active, 700.0, slab="dentry")]
    size = [series(fam.objsize, 192.0, slab="dentry")]
    sampled_at = [Series({"instance": INSTANCE}, tuple((t, t) for t in steps))]
    taken_at = [Series({"instance": INSTANCE}, tuple(reading.items()))]
    return build_instance(INSTANCE, fam, active, objects, size, [], [], [], START, step, sampled_at, taken_at)


def test_a_stopped_sampler_is_a_sampling_gap_not_a_scrape_gap() -> None:
    from forensics.types.prometheus import gap_notes

    stopped = _textfile_instance(scraped_on=True)
    [gap] = stopped.gaps  # type: ignore[attr-defined]
    assert gap.sampling and gap.seconds == 50.0
    [note] = gap_notes([gap])
    assert note.startswith("sampling gap of 50 s") and "the sampler stopped" in note, note  # was: "scrape gap"
    failed = _textfile_instance(scraped_on=False)
    [gap] = failed.gaps  # type: ignore[attr-defined]
    assert not gap.sampling
    assert gap_notes([gap])[0].startswith("scrape gap of 50 s")


def test_a_cache_read_through_prometheus_may_be_merged_and_says_so() -> None:
    """ue9 9: through node_exporter (no merge topology) 'Sockets leak: sock_inode_cache, signal_cache' said
    'signal_cache: 1 per sock_inode_cache object', no word that signal_cache may hold the UNIX sockets SLUB merged
    into it; the store said 'signal_cache merged caches: shown as signal_cache, also holds UNIX, UNIX-STREAM'."""
    window = FleetWindow(START, START + (N - 1) * STEP, STEP, tuple(instance_queries("", "$instance")), 0)
    result = analyse_fetched(window, [_instance()], "http://prom:9090", "", LeakThresholds())  # type: ignore[list-item]
    finding = next(f for f in result.incident.findings if "vm_area_struct" in f.title)
    [merged] = [x.value for x in finding.facts if x.name == "merged caches"]  # was: none
    assert merged.startswith("not known: these samples carry no SLUB merge topology"), merged
    assert "readlink /sys/kernel/slab/vm_area_struct" in merged
