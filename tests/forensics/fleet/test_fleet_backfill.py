"""``kforensic leaks --prometheus`` with its defaults over few, late scrapes: a real Prometheus, backfilled.

The shape of a CI run at load ~10 (tests/live/test_live_prometheus.py, which then did not flag a real
vm_area_struct leak): minutes of quiet samples, then a leak in the last tenth or so of the data, scraped
late and irregularly.  Here the samples are written as OpenMetrics with their own timestamps and turned
into a real TSDB block by ``promtool tsdb create-blocks-from openmetrics``; a real Prometheus serves it,
and the run is the command's (``fetch_and_analyse`` with ``--since 1d --step auto``).  Nothing depends on
timing: the samples are fixed, only placed to end a few seconds before now.

Three instances (node_exporter's names):

* ``late:9100``: scraped every second, one scrape in five late by a second; quiet for 137 s, then
  vm_area_struct grows 1000 objects of 200 bytes a second for 36 s (~30 scrapes).  A leak, at its rate.
  Before: the rise held 5 of the stretch's 25 window medians, so the whole stretch was judged and the
  quiet part's pairs made its slope ~0: "stable, grows 0 KB/h", and the summary said a leak of 85 MB/h
  "would show".
* ``few:9100``: 68 scrapes over 173 s (1 to 4 s apart), the same leak in its last 26 s (~8 scrapes):
  too few samples to call it either way, so unknown, with why (samples, span, gaps), never clean.
* ``quiet:9100``: the same scrapes as ``late``, no leak: nothing at medium or above.
* ``textfile:9100``: slab-watch's textfile (kforensic's names) sampled every 2 s and scraped every second:
  each reading is scraped twice, the same values under two scrape times; one sample each, not two.

And what a range query repeats is not a sample: at a 1 s step the 68 scrapes of ``few`` are ~170 points,
the same sample shown again until the next; counted and cited as samples before (the evidence cited
times at which no scrape happened).
"""

from __future__ import annotations

import json
import random
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator

import pytest

from collectors.prometheus import PromAuth, PromClient
from forensics.fleet.leaks import fetch_and_analyse, prometheus_resolver
from forensics.model import LocatorKind, Severity
from forensics.report.fleet_leaks import FleetLeaksRenderer
from forensics.report.formats import OutputFormat, render
from forensics.types.fleet import FleetLeaks
from tests.helpers import assert_evidence_resolves

SPAN = 173.0
OBJECT_SIZE = 200
LEAK_PER_SECOND = 1000.0
#: KB/h of the leak: 1000 objects of 200 bytes a second.
LEAK_KB_PER_HOUR = LEAK_PER_SECOND * OBJECT_SIZE * 3600 / 1024
CACHES = {"vm_area_struct": OBJECT_SIZE, "kmalloc-64": 64, "dentry": 192, "task_struct": 6912}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _late_scrapes(first: float, rng: random.Random) -> list[float]:
    """Every second, one scrape in five a second late (the next one on time again): a loaded host."""
    times = [first]
    while times[-1] + 2.0 < first + SPAN:
        times.append(times[-1] + (2.0 if rng.random() < 0.2 else 1.0))
    return times


def _few_scrapes(first: float, rng: random.Random) -> list[float]:
    """68 scrapes over SPAN seconds, 1 to 4 s apart."""
    gaps = [rng.uniform(1.0, 4.0) for _ in range(67)]
    scale = SPAN / sum(gaps)
    times = [first]
    for g in gaps:
        times.append(times[-1] + g * scale)
    return [round(t, 3) for t in times]


def _openmetrics(instances: dict[str, tuple[list[float], float | None]], boot: float) -> str:
    """Each instance's slabinfo, MemTotal and boot time at its scrape times; vm_area_struct grows from its onset."""
    lines = []
    rng = random.Random(3)
    for metric in ("objects", "active_objects", "object_size_bytes"):
        lines.append(f"# TYPE node_slabinfo_{metric} gauge")
        for instance, (times, onset) in instances.items():
            for cache, size in CACHES.items():
                for t in times:
                    leaking = cache == "vm_area_struct" and onset is not None and t > onset
                    grown = LEAK_PER_SECOND * (t - onset) if leaking and onset is not None else 0.0
                    objects = 20_000 + int(grown) + rng.randint(-20, 20)
                    value = {"objects": objects, "active_objects": objects - 500, "object_size_bytes": size}[metric]
                    labels = f'instance="{instance}",job="node",slab="{cache}"'
                    lines.append(f"node_slabinfo_{metric}{{{labels}}} {value} {t:.3f}")
    for metric, value in (("node_memory_MemTotal_bytes", 24 << 30), ("node_boot_time_seconds", boot)):
        lines.append(f"# TYPE {metric} gauge")
        for instance, (times, _) in instances.items():
            lines += [f'{metric}{{instance="{instance}",job="node"}} {value:.0f} {t:.3f}' for t in times]
    return "\n".join([*lines, "# EOF", ""])


def _textfile(instance: str, scrapes: list[float], every: float, onset: float) -> str:
    """slab-watch's textfile scraped at ``scrapes``: the reading of every ``every`` seconds, served until the next."""
    readings = [scrapes[0] - 0.5 + k * every for k in range(int((scrapes[-1] - scrapes[0]) / every) + 2)]
    lines: list[str] = []
    served = [(t, max(r for r in readings if r <= t)) for t in scrapes]
    for metric in ("objects", "active_objects", "object_size_bytes"):
        lines.append(f"# TYPE kforensic_slab_{metric} gauge")
        for cache, size in CACHES.items():
            for t, reading in served:
                grown = LEAK_PER_SECOND * (reading - onset) if cache == "vm_area_struct" and reading > onset else 0.0
                objects = 20_000 + int(grown)
                value = {"objects": objects, "active_objects": objects - 500, "object_size_bytes": size}[metric]
                lines.append(
                    f'kforensic_slab_{metric}{{instance="{instance}",job="kf",cache="{cache}"}} {value} {t:.3f}'
                )
    lines.append("# TYPE kforensic_slabwatch_sample_timestamp_seconds gauge")
    lines += [
        f'kforensic_slabwatch_sample_timestamp_seconds{{instance="{instance}",job="kf"}} {r:.3f} {t:.3f}'
        for t, r in served
    ]
    return "\n".join(lines)


class Backfilled:
    """A Prometheus serving the block; the scrape times written per instance."""

    def __init__(self, url: str, scrapes: dict[str, list[float]]) -> None:
        self.url = url
        self.scrapes = scrapes


@pytest.fixture(scope="module")
def backfilled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backfilled]:
    if not (shutil.which("prometheus") and shutil.which("promtool")):
        pytest.skip("needs the prometheus package (prometheus and promtool; .ci/run installs it)")
    tmp = tmp_path_factory.mktemp("backfill")
    first = float(int(time.time()) - 200) + 0.25  # ends ~27 s before now; off the 1 s query steps
    rng = random.Random(11)
    late = _late_scrapes(first, rng)
    few = _few_scrapes(first, rng)
    instances = {
        "late:9100": (late, late[-1] - 36.0),
        "few:9100": (few, few[-1] - 26.0),
        "quiet:9100": (late, None),
    }
    regular = [first + k for k in range(int(SPAN))]  # every second: two scrapes of each 2 s reading
    textfile = _textfile("textfile:9100", regular, 2.0, regular[-1] - 60.0)
    node = _openmetrics(instances, boot=first - 86_400)
    (tmp / "data.om").write_text(node.replace("# EOF\n", textfile + "\n# EOF\n"))
    subprocess.run(
        ["promtool", "tsdb", "create-blocks-from", "openmetrics", str(tmp / "data.om"), str(tmp / "tsdb")],
        check=True,
        capture_output=True,
    )
    (tmp / "prometheus.yml").write_text("global: {scrape_interval: 1h}\n")  # no targets: the block is all it holds
    port = _free_port()
    server = subprocess.Popen(
        [
            *("prometheus", f"--config.file={tmp / 'prometheus.yml'}", f"--storage.tsdb.path={tmp / 'tsdb'}"),
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/-/ready", timeout=2):
                    break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, "prometheus did not start"
                time.sleep(0.1)
        yield Backfilled(url, {**{k: v[0] for k, v in instances.items()}, "textfile:9100": regular})
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.fixture(scope="module")
def defaults(backfilled: Backfilled) -> FleetLeaks:
    """``kforensic leaks --prometheus URL`` (--since 1d, --step auto), as the command runs it."""
    return fetch_and_analyse(backfilled.url, None, 86_400.0, None, PromAuth(), None)


def test_a_late_leak_after_a_long_quiet_stretch_is_flagged_at_its_rate(defaults: FleetLeaks) -> None:
    assert defaults.fetched.step == 1.0 and "scrape interval" in defaults.fetched.chosen
    rows = {(r.instance, r.series): r for r in defaults.rows}
    row = rows.get(("late:9100", "vm_area_struct"))
    verdicts = [(v.name, v.verdict.rule, v.verdict.reason) for res in defaults.results for v in res.analysis.caches]
    assert row is not None and row.grade == "leak", verdicts
    assert row.severity >= Severity.MEDIUM
    assert abs(row.rate / 1024 - LEAK_KB_PER_HOUR) <= 0.1 * LEAK_KB_PER_HOUR, row.rate / 1024
    # The quiet instance, scraped alike: nothing at medium or above, and what it could have shown is said.
    assert not [r for r in defaults.rows if r.instance == "quiet:9100"]
    [quiet] = [res for res in defaults.results if res.read.instance == "quiet:9100"]
    assert quiet.analysis.absence().startswith("No cache or meminfo field grows like a leak: examined 4 slab caches")


def test_a_leak_over_too_few_scrapes_is_unknown_with_why_never_clean(defaults: FleetLeaks) -> None:
    assert not [r for r in defaults.rows if r.instance == "few:9100"]
    [unknown] = [r for r in defaults.unknown if r.instance == "few:9100"]
    assert unknown.series == "vm_area_struct" and unknown.severity is Severity.INFO
    assert "samples over" in unknown.why and "needs >= 24" in unknown.why and "too short to call" in unknown.why
    [few] = [res for res in defaults.results if res.read.instance == "few:9100"]
    assert "No cache or meminfo field grows like a leak" not in few.analysis.absence()
    doc = json.loads(render(FleetLeaksRenderer(), defaults, OutputFormat.JSON))
    [said] = [u for u in doc["unknown"] if u["instance"] == "few:9100"]
    assert said["series"] == "vm_area_struct" and said["why"] == unknown.why
    text = render(FleetLeaksRenderer(), defaults, OutputFormat.TEXT)
    assert "few:9100 vm_area_struct: unknown: grows" in text
    assert "few:9100: 1" in text and "query steps showed a sample already read" in text  # the 68 scrapes at 1 s


def test_repeated_steps_are_not_samples_and_evidence_cites_real_scrapes(
    backfilled: Backfilled, defaults: FleetLeaks
) -> None:
    for res in defaults.results:
        scrapes = backfilled.scrapes[res.read.instance]
        # At most one sample per scrape (two scrapes within one step show as one), never a repeat counted.
        assert res.analysis.samples <= len(scrapes), (res.read.instance, res.analysis.samples, len(scrapes))
        times = {round(t * 1000) for t in scrapes}
        for finding in res.findings:
            for e in finding.evidence:
                if e.locator.kind is LocatorKind.SAMPLE:
                    assert e.locator.start in times, (res.read.instance, finding.title, e.locator)
    [few] = [res for res in defaults.results if res.read.instance == "few:9100"]
    assert few.read.repeats > 50  # ~170 steps of 1 s over 68 scrapes
    # slab-watch's readings, each scraped twice: one sample each, and still the leak at its rate.
    [textfile] = [res for res in defaults.results if res.read.instance == "textfile:9100"]
    assert textfile.read.family.name == "kforensic"
    assert textfile.analysis.samples <= SPAN / 2 + 2 and textfile.read.repeats >= SPAN / 2 - 2, textfile.read
    [row] = [r for r in defaults.rows if r.instance == "textfile:9100"]
    assert row.series == "vm_area_struct" and row.grade == "leak"
    assert abs(row.rate / 1024 - LEAK_KB_PER_HOUR) <= 0.1 * LEAK_KB_PER_HOUR, row.rate / 1024
    findings = [f for res in defaults.results for f in res.findings]
    client = PromClient(backfilled.url)
    assert_evidence_resolves(findings, resolvers={LocatorKind.SAMPLE: prometheus_resolver(client, defaults)})
