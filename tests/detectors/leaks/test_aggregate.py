"""A sum of caches (SUnreclaim) over a stretch too short for its caches: no leak on its own growth, parts named.

The shape of a real 4-minute slab-watch at 2 s with a process opening 25 UDP sockets a second from t=150 s:
before, SUnreclaim "leaks 138,720 KB/h" at high from 4.8 MB in 130 s, naming no cache, while UDP, most of that
growth, was "growing, too short to call" (2.8 MB, under the 4 MiB a cache needs under an hour).
"""

from __future__ import annotations

import numpy as np

from detectors.incident.hypotheses import plain_summary
from detectors.leaks.analysis import LeakInput, analyse
from detectors.leaks.findings import examined_record
from forensics.model import Finding, Incident, NotAvailable, Severity
from forensics.report.examined import examined_lines, verdict_line
from forensics.report.formats import Destination, IncidentRenderer
from forensics.types.leaks import Grade, LeakAnalysis
from tests.detectors.leaks.frames_for_tests import START, counter_frame, slab_frame

UDP, KMALLOC = 1344, 256  # object sizes (bytes)


def _analysis(mem_total_kb: float) -> LeakAnalysis:
    walls = START + np.arange(121) * 2.0  # 4 minutes at 2 s
    t = walls - START
    udp = 100 + 25.0 * np.maximum(t - 150.0, 0.0)  # 25 sockets a second from t=150 s: 3.0 MB
    kmalloc = 4_000 + 55.0 * np.maximum(t - 110.0, 0.0)  # from t=110 s: 1.8 MB
    slabs = slab_frame(walls, {"UDP": (UDP, udp), "kmalloc-256": (KMALLOC, kmalloc)})
    sunreclaim = 70_000 + (udp * UDP + kmalloc * KMALLOC) / 1024
    flat = np.ones(len(walls))
    counters = counter_frame(
        walls,
        {
            "MemTotal": mem_total_kb * flat,
            "MemAvailable": mem_total_kb * 0.9 * flat,
            "SUnreclaim": sunreclaim,
        },
    )
    return analyse(LeakInput(slabs, counters, source="s.sqlite"))


def _sunreclaim(a: LeakAnalysis) -> Finding:
    [finding] = [f for f in a.findings if f.title.startswith("SUnreclaim")]
    return finding


def test_a_sum_growing_over_a_stretch_too_short_for_its_caches_is_low_and_names_them() -> None:
    a = _analysis(24 * 2**20)  # 24 GiB: 4.7 MB is 0.02% of it, no harm
    [total] = [v for v in a.meminfo if v.name == "SUnreclaim"]
    [udp] = [v for v in a.caches if v.name == "UDP"]
    assert udp.grade is Grade.UNDECIDED and udp.verdict.rule == "short-ramp", udp.verdict
    assert total.growth > 4 * 2**20  # the sum passes the bar its parts cannot
    assert total.grade is Grade.UNDECIDED and total.verdict.rule == "aggregate-short", total.verdict
    finding = _sunreclaim(a)
    assert finding.severity is Severity.LOW, finding.title
    assert finding.baseline is not None and "4,096 KB" in finding.baseline.value
    assert "too short to call a leak, watch it" in finding.title
    assert "mostly UDP:" in finding.title
    parts = {f.name: f.value for f in finding.facts}["grown over the same stretch by"]
    # Cited with their growth over the sum's stretch and their own grade, largest first, until half of it.
    assert parts == (
        "slab memory (num_objs × objsize, first to last window median): UDP 2,953 KB (growing, too short to call): 67%"
        " of its 4,411 KB"
    ), parts
    assert not any(f.severity.rank >= Severity.MEDIUM.rank for f in a.findings)


def test_a_sum_growing_into_harm_on_a_small_guest_is_still_a_leak() -> None:
    # 1.5 GiB: the sum's 4.7 MB is 0.3% of it at over 10% a day (harm, rule 12's), UDP's 2.9 MB is not.
    a = _analysis(1.5 * 2**20)
    [udp] = [v for v in a.caches if v.name == "UDP"]
    assert udp.grade is Grade.UNDECIDED, udp.verdict
    [total] = [v for v in a.meminfo if v.name == "SUnreclaim"]
    assert total.grade is Grade.LEAK, total.verdict
    finding = _sunreclaim(a)
    assert finding.severity is Severity.HIGH
    # A leak called on the sum still says where its growth is.
    assert "mostly UDP" in finding.title, finding.title


def _incident(findings: tuple[Finding, ...], a: LeakAnalysis) -> Incident:
    return Incident(
        host="vm",
        kernel_release="6.18",
        window=NotAvailable("not needed"),
        sources=(),
        findings=findings,
        examined=(examined_record(a.examined, "s.sqlite"),),
    )


def test_the_verdict_beside_a_low_finding_names_it_and_no_problem_found_is_kept_for_none() -> None:
    """ "No problem found" was said beside a low "watch it" finding: the verdict, the report's headline and every
    renderer now say there is nothing at medium or above and name the low finding; "No problem found" stays the
    words of a result with nothing to watch, said with what was examined and what it could have shown."""
    a = _analysis(24 * 2**20)
    low = _sunreclaim(a)
    incident = _incident(a.findings, a)
    said = verdict_line(incident)
    assert "No problem found" not in said and said.startswith("Nothing at medium severity or above; "), said
    assert f"1 low finding to watch: {low.title}; " in said, said
    # What the analysis could not judge is counted after the verdict (kdump's unread checks were left unsaid there).
    assert said.endswith(
        "3 finding(s) below medium: 1 low (worth a look), 2 info (context)."
        " 1 could not be judged (see what was examined)."
    ), said
    headline = plain_summary(incident.findings, "vm", incident.examined)
    assert "found no problem" not in headline and f"1 low finding to watch: {low.title}" in headline, headline
    assert headline.startswith("kforensic found nothing at medium severity or above in the inputs from vm; ")
    text = IncidentRenderer(color=False).text(incident, Destination())
    assert "No problem found" not in text and "1 low finding to watch: SUnreclaim" in " ".join(text.split())
    # Without the low finding: "No problem found", with what was examined and what it could have shown.
    quiet = _incident(tuple(f for f in a.findings if f.severity is Severity.INFO), a)
    assert verdict_line(quiet).startswith("No problem found: nothing at medium severity or above; 2 finding(s)")
    assert plain_summary(quiet.findings, "vm", quiet.examined).startswith("kforensic found no problem in the inputs")
    empty = _incident((), a)
    assert verdict_line(empty) == "No problem found: no findings. 1 could not be judged (see what was examined)."
    # ... said with what was examined, what it could have found and what it could not (its power).
    what, could, could_not = examined_lines(empty)
    assert what.startswith("examined: slab samples s.sqlite: 121 samples over 4 min every 2 s"), what
    assert could.startswith("  could have found: leaks of ") and "or faster that last the whole 4 min" in could
    assert could_not == "  could not judge: slower leaks (down to 256 KB/h): need >= 2.1 h of samples", could_not
