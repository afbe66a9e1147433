"""Absence needs power: too few samples is "cannot judge yet", a short rise is "too short to call", never "no leak"."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from detectors.leaks.analysis import LeakInput, analyse
from detectors.leaks.findings import coverage_finding
from detectors.leaks.power import plan_warning, planned
from forensics.cli import main
from forensics.model import Severity
from forensics.pipelines.leaks import analyse_store
from forensics.types.leaks import Grade
from tests.detectors.leaks.frames_for_tests import START, slab_frame
from tests.detectors.leaks.storebuild import Cache, write_store

#: A vm_area_struct leak of 300 mappings a second (the issue's case), objects of 208 bytes.
VMA = Cache("vm_area_struct", 208, lambda i, hours: 20_000 + int(300 * 3600 * hours))


def test_a_three_sample_store_cannot_be_judged_and_says_so(tmp_path: Path) -> None:
    store = tmp_path / "three.sqlite"
    write_store(store, [VMA, Cache("kmalloc-64", 64, lambda i, h: 5_000)], 3, 60.0)
    result = analyse_store(store)
    power = result.analysis.power
    assert (power.samples, power.judgeable) == (3, False)
    statement = result.analysis.absence()
    assert statement.startswith("Leaks: cannot judge yet: 3 samples over 2 min, needs >= 24 over >= 23 min")
    assert "no cache" not in statement.lower() and "grows like a leak" not in statement
    [vma] = [v for v in result.analysis.caches if v.name == "vm_area_struct"]
    assert vma.grade is Grade.UNDECIDED and vma.verdict.rule == "growing-too-short", vma.verdict
    [examined] = result.incident.examined
    assert examined.what.startswith(f"slab samples {store}: 3 samples over 2 min every 60 s, 2 slab caches")
    assert examined.could_find == () and examined.could_not == (f"any leak: {power.shortfall()}",)
    assert coverage_finding(result.analysis.examined, str(store)).title == f"Leak analysis {power.shortfall()}"
    assert all(f.severity < Severity.MEDIUM for f in result.incident.findings)


def test_a_leak_seen_for_three_seconds_is_growing_too_short_to_call() -> None:
    walls = START + np.arange(4.0)  # 4 samples over 3 s, as in the issue
    objects = 20_000 + 300 * (walls - START)
    result = analyse(LeakInput(slab_frame(walls, {"vm_area_struct": (208, objects)})))
    # 187 KB moved: under the screening threshold, so nothing is graded; the statement still says why.
    assert not result.power.judgeable
    assert "cannot judge yet: 4 samples over 3 s, needs >= 24 over >= 23 s" in result.absence()
    faster = START + np.arange(4.0)
    result = analyse(LeakInput(slab_frame(faster, {"vm_area_struct": (208, 20_000 + 3_000 * (faster - START))})))
    [vma] = result.caches
    assert vma.grade is Grade.UNDECIDED, vma.verdict
    assert "growing, too short to call" in vma.verdict.reason
    [finding] = result.findings
    assert finding.severity is Severity.INFO and "too short to call" in finding.title


def test_a_judgeable_but_short_stretch_says_which_leaks_it_could_not_see() -> None:
    walls = START + np.arange(121) * 5.0  # 10 minutes at 5 s
    flat = np.full(len(walls), 5_000.0)
    result = analyse(LeakInput(slab_frame(walls, {"kmalloc-64": (64, flat), "dentry": (192, flat)})))
    assert result.power.judgeable and not result.power.full
    text = result.absence()
    assert text.startswith("No cache or meminfo field grows like a leak: examined 2 slab caches")
    # Under an hour a rise is called from 4 MiB: over 10 minutes 25,099 KB/h (said as 26,000) is the slowest leak
    # shown, if it grows through all of them (4 MiB between the first and the last window median, 587.5 s apart:
    # 24,576 KB/h over the whole span was said); a leak that starts later is judged on its own samples and must grow
    # as much (a UDP leak of 119 MB/h over the last 85 s of 4 min, 2.8 MB, was not called under "61,440 KB/h would
    # show").
    assert "a leak of 26,000 KB/h or faster that lasts the whole 10 min would show in 121 samples over 10 min" in text
    assert (
        "one that starts later must grow 4,096 KB after it starts, over >= 24 samples (115 s at this interval), "
        "up to the last sample" in text
    )
    assert "needs >= 2.1 h of samples" in text


def test_a_slow_rise_in_a_short_stretch_is_not_stable() -> None:
    walls = START + np.arange(121) * 5.0  # 10 minutes
    objects = 5_000 + 3.0 * np.arange(121)  # 360 objects of 1 KiB in 10 minutes: 2.1 MB/h, 360 KB seen
    result = analyse(LeakInput(slab_frame(walls, {"foo": (1024, objects)})))
    [foo] = result.caches
    # Under the 512 KB that tells a leak from a busy cache's wander, but only because the stretch is short.
    assert (foo.grade, foo.verdict.rule) == (Grade.UNDECIDED, "rise-below-growth"), foo.verdict
    # 512 KB at 2,160 KB/h is 14.2 min: a least span, said rounded up (it read "14 min at this rate").
    assert "15 min at this rate" in foo.verdict.reason, foo.verdict.reason
    said = result.absence()
    assert said.startswith("Growing, too short to call: 1 series grow") and "No cache" not in said, said


def test_slab_watch_plans_are_checked_against_the_power_rule() -> None:
    # The case: --duration 2m at the default 60 s interval keeps 3 samples.
    warning = plan_warning(60.0, 120.0)
    assert warning is not None and "3 samples" in warning and "cannot judge yet" in warning
    assert "needs >= 24 over >= 23 min" in warning
    assert "or sample more often (e.g. --interval 5s)" in warning  # 24 samples fit in 120 s at 5 s
    at_fastest = plan_warning(1.0, 2.0)  # already at slab-watch's shortest interval: only longer helps
    assert at_fastest is not None and "sample longer: >= 23 s (24 samples at this 1 s interval)" in at_fastest
    assert "more often" not in at_fastest
    assert planned(5.0, 600.0).judgeable
    short = plan_warning(5.0, 600.0)
    assert short is not None and "26,000 KB/h or faster" in short and ">= 2.1 h" in short
    assert plan_warning(60.0, 24 * 3600.0) is None
    assert plan_warning(60.0, None) is None  # until stopped: nothing to warn about


def test_the_cli_says_cannot_judge_in_every_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "three.sqlite"
    write_store(store, [VMA], 3, 60.0)

    def run(*args: str) -> tuple[int, str]:
        monkeypatch.setattr(sys, "argv", ["kforensic", "leaks", "--store", str(store), *args])
        capsys.readouterr()
        with pytest.raises(SystemExit) as ended:
            main()
        return int(ended.value.code or 0), capsys.readouterr().out

    for fmt in ("text", "md"):
        code, out = run("-f", fmt, "--fail-on", "medium")
        assert code == 0 and "cannot judge yet: 3 samples over 2 min" in out
        assert "No cache or meminfo field grows like a leak" not in out
    code, out = run("-f", "json")
    doc = json.loads(out)
    assert doc["power"]["judgeable"] is False and doc["power"]["needed_samples"] == 24
    assert "cannot judge yet" in doc["power"]["statement"]


@pytest.mark.live
def test_slab_watch_warns_at_start_when_the_plan_is_too_short(tmp_path: Path) -> None:
    import os
    import subprocess

    if os.geteuid() != 0:
        pytest.skip("needs root: /proc/slabinfo is mode 0400")
    store = tmp_path / "s.sqlite"
    argv = ["slab-watch", "--duration", "2s", "--interval", "1s", "--store", str(store), "--no-analysis"]
    ran = subprocess.run(
        [sys.executable, "-m", "forensics", *argv], capture_output=True, text=True, timeout=120, check=False
    )
    assert ran.returncode == 0, ran.stderr
    first = ran.stderr.splitlines()[0]
    assert first.startswith("kforensic: warning: 2 s at a 1 s interval gives 3 samples"), ran.stderr
    assert 'kforensic leaks would say "cannot judge yet: 3 samples over 2 s, needs >= 24 over >= 23 s' in first


def test_the_plan_check_loads_no_numeric_library() -> None:
    """slab-watch warns about its plan at start: that must not cost a pandas/numpy import (85 -> 29 MB)."""
    code = (
        "import sys\n"
        "from detectors.leaks.power import plan_warning\n"
        "assert plan_warning(1.0, 2.0)\n"
        "print(sorted(m for m in ('numpy', 'pandas', 'scipy') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize(("samples", "interval"), [(121, 1.0), (241, 5.0), (181, 20.0)])
def test_a_leak_at_the_rate_said_to_show_is_called(samples: int, interval: float) -> None:
    """/tmp/ue9 pw/: a dedicated cache growing exactly at the claimed '122,880 KB/h or faster that lasts the whole
    2 min would show' was 'growing, too short to call' (4,016 KB < 4,096 KB: growth is measured between the
    first and the last window median, the claim was over the whole span); at 1.1x it was HIGH."""
    walls = START + np.arange(samples) * interval
    busy = 30_000 + 40 * np.sin(np.arange(samples))  # a cache others allocate from
    quiet = slab_frame(walls, {"kmalloc-64": (64, busy), "kf_leak_obj": (1024, np.full(samples, 100.0))})
    claimed = analyse(LeakInput(quiet, mem_total=64 << 30)).examined.power.detectable_rate
    hours = (walls - START) / 3600.0
    leaking = slab_frame(walls, {"kmalloc-64": (64, busy), "kf_leak_obj": (1024, 100 + claimed / 1024 * hours)})
    result = analyse(LeakInput(leaking, mem_total=64 << 30))
    [v] = [v for v in result.caches if v.name == "kf_leak_obj"]
    assert v.grade is Grade.LEAK, (claimed / 1024, v.growth / 1024, v.verdict)  # was: growing, too short to call


def test_the_plan_at_start_and_the_store_at_the_end_say_one_rate_to_two_figures(tmp_path: Path) -> None:
    """/tmp/ue15: slab-watch --interval 5s --duration 4m said "can show a leak of 62,747 KB/h or faster" at start,
    and the store "63,511 KB/h", though docs/severity.md gives the plan to two significant figures so that both say
    the same.  Rounded up (a leak at the rate said still shows), and the plan says the store's noise adds to it."""
    import re

    from tests.detectors.leaks.storebuild import MEM_TOTAL_KB

    warning = plan_warning(5.0, 240.0, mem_total=MEM_TOTAL_KB * 1024)
    said = re.search(
        r"can show a leak of ([\d,]+) KB/h or faster \(more where the caches' samples scatter", warning or ""
    )
    assert said is not None, warning
    assert re.fullmatch(r"\d\d(,000)+|\d\d?0", said[1]), said[1]  # two significant figures
    store = tmp_path / "quiet.sqlite"
    write_store(store, [Cache("kmalloc-64", 64, lambda i, h: 5_000), Cache("dentry", 192, lambda i, h: 9_000)], 49, 5.0)
    analysis = analyse_store(store).analysis
    assert f"a leak of {said[1]} KB/h or faster that lasts the whole 4 min" in analysis.absence(), analysis.absence()
    assert analysis.power.shown_rate >= analysis.power.detectable_rate  # rounded up: a leak at the rate said shows


def _seconds(said: str) -> float:
    """A duration as :func:`forensics.types.leaks.duration` says it, in seconds."""
    value, unit = said.split()
    return float(value) * {"s": 1.0, "min": 60.0, "h": 3600.0, "days": 86400.0}[unit]


def _kb(said: str) -> float:
    return float(said.replace(",", "")) * 1024


@pytest.mark.parametrize("interval", [1.0, 3.0, 4.0, 5.0, 5.5, 7.0, 30.0])
@pytest.mark.parametrize("mem_gib", [None, 1, 64, 69, 70])
def test_every_figure_power_says_is_rounded_the_safe_way(interval: float, mem_gib: int | None) -> None:
    """A least span, a least growth and the slowest rate shown are said rounded up: rounded to the nearest, the
    advice said 131,072 KB/h as "130,000 KB/h" (a leak at 130,500 would not show in 115 s), 126.5 s (24 samples at
    5.5 s) as ">= 2 min", 1.674 h (full power on 70 GiB) as ">= 100 min" and 301.5 KB/h (the slowest reported on
    69 GiB) as "down to 301 KB/h"."""
    import re
    from dataclasses import replace

    from forensics.types.leaks import JITTER

    mem_total = None if mem_gib is None else float(mem_gib << 30)
    span = r"([\d.]+ (?:s|min|h|days))"
    short = planned(interval, 30.0, mem_total=mem_total)
    advice = short.advice()
    first = replace(short, span_seconds=short.needed_seconds)
    said = re.search(
        rf">= {span} \(24 samples at this .* shows a leak of ([\d,]+) KB/h .* >= {span} one down to ([\d,]+)", advice
    )
    assert said is not None, advice
    assert _seconds(said[1]) >= short.needed_seconds * (1 - JITTER), advice
    assert _kb(said[2]) >= first.detectable_rate, advice
    assert _seconds(said[3]) >= short.full_seconds * (1 - JITTER) and _kb(said[4]) >= short.min_rate, advice
    judged = planned(interval, 1800.0, mem_total=mem_total)
    reach = judged.reach()
    said = re.search(
        rf"a leak of ([\d,]+) KB/h or faster .* must grow ([\d,]+) KB after it starts, over >= 24 samples \({span} at"
        rf" this interval\), .*\(down to ([\d,]+) KB/h\) needs >= {span} of samples",
        reach,
    )
    assert said is not None, reach
    assert _kb(said[1]) >= judged.detectable_rate and _kb(said[4]) >= judged.min_rate, reach
    amount = min(judged.short_growth, max(judged.short_rate * judged.span_seconds / 3600.0, judged.short_memory))
    assert _kb(said[2]) >= max(judged.min_growth, amount), reach
    assert _seconds(said[3]) >= judged.needed_seconds * (1 - JITTER), reach
    assert _seconds(said[5]) >= judged.full_seconds * (1 - JITTER), reach


def test_the_figures_that_rounded_down_now_round_up() -> None:
    """The cases of the test above that were said rounded down, as they are said now."""
    assert "shows a leak of 140,000 KB/h or faster" in planned(5.0, 60.0).advice()  # was 130,000
    assert ">= 2.2 min (24 samples at this 5.5 s interval)" in planned(5.5, 60.0).advice()  # was >= 2 min, 126.5 s
    assert "a slower one (down to 306 KB/h) needs >= 103 min" in (plan_warning(5.0, 600.0, 70.0 * 2**30) or "")
    assert "down to 302 KB/h" in planned(5.0, 600.0, mem_total=69.0 * 2**30).reach()  # was 301 KB/h


def test_a_store_whose_scatter_raises_the_plans_figure_says_both_and_why(tmp_path: Path) -> None:
    """A plan cannot know its caches' scatter, which the store adds to the growth a leak must show: one 4 min plan
    said 63,000 KB/h at start and its store 64,000 KB/h (/tmp/ue15), two figures for one thing, unexplained.  The
    store says its figure, the plan's, and why; a quiet store says the plan's figure alone."""
    import re

    from tests.detectors.leaks.storebuild import MEM_TOTAL_KB

    plan = planned(5.0, 240.0, mem_total=MEM_TOTAL_KB * 1024)
    assert f"can show a leak of {plan.shown_rate / 1024:,.0f} KB/h or faster" in (
        plan_warning(5.0, 240.0, mem_total=MEM_TOTAL_KB * 1024) or ""
    )
    store = tmp_path / "busy.sqlite"
    busy = Cache("dentry", 192, lambda i, h: 90_000 + (i * 7919) % 6_000)  # a busy cache: +-1 MB of scatter
    write_store(store, [Cache("kmalloc-64", 64, lambda i, h: 5_000), busy], 49, 5.0)
    result = analyse_store(store)
    power = result.analysis.power
    assert power.margin > 0 and power.shown_rate > plan.shown_rate, power
    note = (
        f"({plan.shown_rate / 1024:,.0f} KB/h from the samples' count and span alone, as a slab-watch plan for them"
        " says; the scatter of these caches' window medians, which may take up to"
        f" {math.ceil(power.margin / 1024):,} KB off a growth measured between two, raises it)"
    )
    absence = result.analysis.absence()
    assert f"a leak of {power.shown_rate / 1024:,.0f} KB/h or faster that lasts the whole 4 min" in absence, absence
    assert note in absence, absence
    [examined] = result.incident.examined
    assert note in examined.could_find[0], examined
    assert len(re.findall(r"[\d,]+ KB/h or faster", absence)) == 1  # the plan's figure is said once, as the plan's
    quiet = tmp_path / "quiet.sqlite"
    write_store(quiet, [Cache("kmalloc-64", 64, lambda i, h: 5_000)], 49, 5.0)
    assert "from the samples' count and span alone" not in analyse_store(quiet).analysis.absence()


@pytest.mark.parametrize(("samples", "interval"), [(49, 5.0), (121, 60.0)])
def test_the_json_slowest_leak_shown_is_the_figure_the_statement_says(
    tmp_path: Path, samples: int, interval: float
) -> None:
    """power.slowest_leak_shown_bytes_per_hour was the unrounded detectable rate (64,998,111.8 where the text says
    64,000 KB/h... rounded up): a reader comparing the JSON with the statement found two figures, the JSON's the
    lower, a leak at which might not show.  Now the figure said: short of full power (4 min at 5 s) the shown rate,
    at full power (2 h at 60 s) the slowest reported rate, both rounded up."""
    import re

    from forensics.report.leaks import result_to_dict

    store = tmp_path / "quiet.sqlite"
    write_store(
        store,
        [Cache("kmalloc-64", 64, lambda i, h: 5_000), Cache("dentry", 192, lambda i, h: 9_000)],
        samples,
        interval,
    )
    result = analyse_store(store)
    power = result_to_dict(result)["power"]
    said = re.search(r"a leak of ([\d,]+) KB/h or faster", power["statement"])
    assert said is not None, power["statement"]
    assert power["slowest_leak_shown_bytes_per_hour"] == float(said[1].replace(",", "")) * 1024, power
    assert power["slowest_leak_shown_bytes_per_hour"] >= result.analysis.power.detectable_rate, power


def test_full_power_is_said_only_where_a_leak_at_the_slowest_rate_grows_the_bar_between_window_medians(
    tmp_path: Path,
) -> None:
    """121 samples every 60 s said "No leak of 256 KB/h or faster in 121 samples over 2.0 h": span 2 h =
    512 KB / 256 KB/h, but a growth is measured between the first and the last window median, 1.96 h apart, where a
    256 KB/h leak grows 501 KB, under the 512 KB bar: it shows 262 KB/h.  Full power, and its least span, now come
    from the growth between window medians (and their scatter)."""
    for interval in (1.0, 2.0, 5.0, 60.0, 300.0):
        for mem_total in (None, float(8 << 30)):
            full = planned(interval, 3600.0, mem_total=mem_total).full_seconds
            for span in (7200.0, full * 0.99, full, full * 1.01, 3 * 3600.0):
                p = planned(interval, span, mem_total=mem_total)
                grown = p.min_rate * p.measured_seconds / 3600.0
                assert p.full == (grown >= p.min_growth * (1 - 1e-9)), (interval, span, p.full, grown)
                if not p.full:
                    assert p.span_seconds < p.full_seconds, (interval, p.span_seconds, p.full_seconds)
    assert "needs >= 2.1 h of samples" in planned(60.0, 7200.0).reach()
    store = tmp_path / "two-hours.sqlite"
    write_store(store, [Cache("kmalloc-64", 64, lambda i, h: 5_000), Cache("dentry", 192, lambda i, h: 9_000)], 121, 60)
    result = analyse_store(store)
    said = result.analysis.absence()
    assert "a leak of 270 KB/h or faster that lasts the whole 2.0 h would show in 121 samples" in said, said
    assert "a slower one (down to 256 KB/h) needs >= 2.1 h of samples" in said, said


def test_a_store_too_short_to_judge_says_the_plans_span_for_full_power(tmp_path: Path) -> None:
    """4 samples of a busy machine (slab-watch --duration 3s, /tmp/leaks19) ended "sample longer: ... >= 5.7 h one down
    to 256 KB/h" where the plan at start said 2.1 h: the scatter of 4 samples' window medians was added to the bar.
    Too few samples to judge are too few to measure the scatter a plan can go by: the plan's span is said."""
    store = tmp_path / "four.sqlite"
    swing = [0, 20_000, 0, 20_000]  # 1.2 MB of kmalloc-64 up and down between samples
    caches = [Cache("kmalloc-64", 64, lambda i, h: 5_000 + swing[i]), Cache("dentry", 192, lambda i, h: 9_000)]
    write_store(store, caches, 4, 1.0)
    power = analyse_store(store).analysis.power
    assert not power.judgeable and power.margin > 0, power
    from tests.detectors.leaks.storebuild import MEM_TOTAL_KB

    plan = planned(1.0, 3.0, mem_total=MEM_TOTAL_KB * 1024.0)
    assert power.full_seconds == pytest.approx(plan.full_seconds, rel=1e-6), (power.full_seconds, plan.full_seconds)
    assert ">= 2.1 h one down to 256 KB/h" in power.advice(), power.advice()
