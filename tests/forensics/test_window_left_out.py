"""The incident's time window says which inputs it does not place: a trace or a profile on a tracer's own clock beside
a store or a log (the healthy-machine review of 2026-12-07, 13: the HTML page's window was the store's alone, and the
trace and the profile, recorded minutes later, lay outside it unsaid)."""

from __future__ import annotations

import re
from pathlib import Path

from forensics.model import Clock, Incident, NotAvailable, SourceRecord, Timestamp, TimeWindow
from forensics.report.html import render_html
from forensics.serialize import incident_from_dict, incident_to_dict
from tests.forensics.commands.test_slabwatch_cli import kforensic

REPO = Path(__file__).resolve().parents[2]
SNAPSHOTS = REPO / "vmcore_fixtures" / "cases" / "08-slab-leak" / "snapshots"
TRACE = REPO / "tests" / "data" / "traces" / "kf.ftrace.txt.gz"


def _incident(path: str, start: float, end: float, clock: Clock) -> Incident:
    return Incident(
        host="vm",
        kernel_release="6.1.0",
        window=TimeWindow(Timestamp(start, clock), Timestamp(end, clock)),
        sources=(SourceRecord(path, 100, NotAvailable("not read"), 0.1),),
        findings=(),
    )


def test_a_trace_beside_a_store_is_named_as_left_out_of_the_window() -> None:
    store = _incident("/var/lib/kforensic/slab-watch.sqlite", 1796637000.0, 1796637240.0, Clock.WALL)
    trace = _incident("/tmp/trace.dat", 1331.0, 1341.0, Clock.TRACE)
    profile = _incident("/tmp/perf.data", 1442.0, 1453.0, Clock.TRACE)
    merged = Incident.merge([store, trace, profile], tool_version="test")
    window = merged.window
    assert isinstance(window, TimeWindow)
    assert (window.start.seconds, window.end.seconds) == (1796637000.0, 1796637240.0)  # the store's: the one clock
    assert window.left_out == ("trace.dat", "perf.data")
    assert str(window).endswith("(not placed on it: trace.dat, perf.data: a tracer's own clock)")
    assert "not placed on it: trace.dat, perf.data" in render_html(merged)
    again = incident_from_dict(incident_to_dict(merged), "incident.json")  # kept through report --from
    assert again.window == window
    assert Incident.merge([again], tool_version="test").window == window


def test_a_trace_alone_is_its_own_window_and_nothing_is_left_out() -> None:
    trace = _incident("/tmp/trace.dat", 1331.0, 1341.0, Clock.TRACE)
    merged = Incident.merge([trace, trace], tool_version="test")
    assert isinstance(merged.window, TimeWindow) and merged.window.left_out == ()
    assert "not placed" not in str(merged.window)
    assert "left_out" not in incident_to_dict(merged)["window"]  # documents without one are as before


def test_the_reports_markdown_names_the_window_and_the_trace_it_leaves_out(tmp_path: Path) -> None:
    """``kforensic report``'s own markdown had no window row (the diff review of 2026-12-07, 5): a store's window on
    the wall clock, the bundled trace on its tracer's clock beside it."""
    store = tmp_path / "slab.db"
    made = kforensic("slab-import", str(SNAPSHOTS), "--store", str(store), "--no-analysis")
    assert made.returncode == 0, made.stderr
    done = kforensic("report", "--store", str(store), "--trace", str(TRACE), "-f", "md")
    assert done.returncode in (0, 1), done.stderr
    (row,) = [line for line in done.stdout.splitlines() if line.startswith("| Time window |")]
    assert re.fullmatch(
        r"\| Time window \| 2026-12-02T20:16:30\+00:00 – 2026-12-02T20:18:03\+00:00 "
        r"\(not placed on it: kf\.ftrace\.txt\.gz: a tracer's own clock\) \|",
        row,
    ), row
