"""Spans on the recorded request workload (tests/data/lttng: LTTng UST + ftrace on CLOCK_MONOTONIC).

Expected figures are computed here independently of the span code: span
durations from the ftrace ``tracing_mark_write`` lines (a regular expression)
and from ``babeltrace2 --clock-cycles`` text of the UST trace; the workload's
thread ids from ``tids.txt`` (printed by the workload itself).
"""

from __future__ import annotations

import gzip
import json
import math
import re
import shutil
import subprocess
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.forensics.commands.test_trace_cli import run
from tests.helpers import Ran, cli_run

DATA = Path(__file__).resolve().parents[2] / "data" / "lttng"

# One pytest-xdist group: the run whose document five tests read (``doc``, 1.8 s of CPU: the spans, two PNGs) is
# made once, on one worker; dealt out over make test's three workers, each made it again.
pytestmark = pytest.mark.xdist_group("trace-spans")


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("lttng")
    with tarfile.open(DATA / "ust.tar.gz") as tar:
        tar.extractall(out, filter="data")
    (out / "kernel.ftrace.txt").write_bytes(gzip.decompress((DATA / "kernel.ftrace.txt.gz").read_bytes()))
    return out


@pytest.fixture
def kf(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Callable[..., Ran]:
    """``kforensic ARGS`` in this process, through the CLI's real entry (tests.helpers.cli_run), for the tests that
    read what a run says; the command as a process is ``doc``'s (its JSON and two PNGs) and the clock error's (exit
    3).  As processes, each run paid the interpreter's start-up and the imports again (issue #28)."""

    def invoke(*args: str) -> Ran:
        return cli_run(monkeypatch, capsys, *args)

    return invoke


@pytest.fixture(scope="module")
def tids() -> dict[str, int]:
    return {k: int(v) for k, v in (line.split() for line in (DATA / "tids.txt").read_text().splitlines())}


@pytest.fixture(scope="module")
def doc(recording: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    out = tmp_path_factory.mktemp("out")
    res = run(
        str(recording / "kernel.ftrace.txt"),
        "--spans",
        str(recording / "ust"),
        "--kernel-clock",
        "mono",
        "--slow-ms",
        "2.5",
        "--format",
        "json",
        "-o",
        str(out / "t.json"),
        "--span-png",
        str(out / "h.png"),
        "--gantt-png",
        str(out / "g.png"),
    )
    assert res.returncode in (0, 1), res.stderr
    assert (out / "h.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "g.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    loaded: dict[str, object] = json.loads((out / "t.json").read_text())
    return loaded


def nearest_rank(values: list[float], p: float) -> float:
    v = sorted(values)
    return v[max(0, math.ceil(p / 100 * len(v)) - 1)]


def marker_durations(text: str) -> list[float]:
    starts: dict[str, float] = {}
    out = []
    for m in re.finditer(r"\s(\d+\.\d+): tracing_mark_write: infer (start|end) (\d+)", text):
        ts, edge, ident = float(m.group(1)), m.group(2), m.group(3)
        if edge == "start":
            starts[ident] = ts
        else:
            out.append((ts - starts.pop(ident)) * 1e3)
    return out


def stats(doc: dict[str, object], name: str) -> dict[str, float]:
    spans = doc["spans"]
    assert isinstance(spans, dict)
    found: dict[str, float] = next(s for s in spans["stats"] if s["name"] == name)
    return found


def test_marker_span_percentiles_match_the_markers(doc: dict[str, object], recording: Path) -> None:
    durations = marker_durations((recording / "kernel.ftrace.txt").read_text())
    assert len(durations) == 60
    got = stats(doc, "infer (trace_marker)")
    assert got["count"] == 60
    for key, p in (("p50_ms", 50), ("p90_ms", 90), ("p99_ms", 99), ("p999_ms", 99.9)):
        assert got[key] == pytest.approx(nearest_rank(durations, p), abs=1e-6)
    assert got["max_ms"] == pytest.approx(max(durations), abs=1e-6)


@pytest.mark.skipif(shutil.which("babeltrace2") is None, reason="needs babeltrace2 for the reference")
def test_ust_span_percentiles_match_babeltrace2(doc: dict[str, object], recording: Path) -> None:
    text = subprocess.run(
        ["babeltrace2", "--clock-cycles", str(recording / "ust")], capture_output=True, text=True, check=True
    ).stdout
    starts: dict[str, int] = {}
    tracef: list[float] = []
    provider: list[float] = []
    begins: dict[str, int] = {}
    for line in text.splitlines():
        ts = int(line[1 : line.index("]")])
        m = re.search(r'msg = "infer (start|end) (\d+)"', line)
        if m:
            if m.group(1) == "start":
                starts[m.group(2)] = ts
            else:
                tracef.append((ts - starts.pop(m.group(2))) / 1e6)
        m = re.search(r"infer:request_(begin|end): .* \{ id = (\d+) \}", line)
        if m:
            if m.group(1) == "begin":
                begins[m.group(2)] = ts
            else:
                provider.append((ts - begins.pop(m.group(2))) / 1e6)
    assert len(tracef) == len(provider) == 60
    for name, values in (("infer", tracef), ("infer:request", provider)):
        got = stats(doc, name)
        assert got["count"] == 60
        for key, p in (("p50_ms", 50), ("p90_ms", 90), ("p99_ms", 99), ("p999_ms", 99.9)):
            assert got[key] == pytest.approx(nearest_rank(values, p), abs=1e-6), (name, key)
        assert got["max_ms"] == pytest.approx(max(values), abs=1e-6)


def test_slow_spans_name_the_rt_preemptor_by_tid_and_the_writer_as_waker(
    doc: dict[str, object], tids: dict[str, int]
) -> None:
    spans = doc["spans"]
    assert isinstance(spans, dict)
    slow = [s for s in spans["slow"] if s["name"] == "infer"]
    assert slow and all(s["ms"] > 2.5 and s["tid"] == tids["req"] for s in slow)
    parts = [p for s in slow for p in s["parts"]]
    rt = [p for p in parts if p["what"] == "preempted" and p["by_tid"] == tids["rt"]]
    assert rt, "no slow span shows the RT thread preempting it"
    assert all(p["by_prio"] == 49 for p in rt)  # SCHED_FIFO 50 is kernel prio 49
    # Every request that waited for the writer (id % 10 == 5) and is slow was blocked in S and woken by it.
    waited = [s for s in slow if s["id"] is not None and int(s["id"]) % 10 == 5]
    assert waited
    for s in waited:
        blocked = [p for p in s["parts"] if p["what"] == "blocked"]
        assert blocked and any(p["state"] == "S" and p["by_tid"] == tids["writer"] for p in blocked), s["id"]
        assert all(p["syscall"] == {"not_available": "the kernel trace has no syscall events"} for p in blocked)
    # The parts cover the span: their durations add up to its wall time.
    for s in slow:
        assert sum(p["ms"] for p in s["parts"]) == pytest.approx(s["ms"], abs=2e-3)
        assert all(ev["where"] for p in s["parts"] for ev in p["events"])


def test_findings_cite_the_ust_events_and_kernel_lines(
    doc: dict[str, object], recording: Path, tids: dict[str, int]
) -> None:
    incident = doc["incident"]
    assert isinstance(incident, dict)
    found = [f for f in incident["findings"] if f["kind"] == "span-slow"]
    # One finding per slow span family (the tracef spans, the provider's, the trace_marker copy), all of the
    # request thread.
    facts = [{fact["name"]: fact["value"] for fact in f["facts"]} for f in found]
    assert sorted(fact["span"] for fact in facts) == ["infer", "infer (trace_marker)", "infer:request"]
    assert {fact["tid"] for fact in facts} == {str(tids["req"])}
    lines = (recording / "kernel.ftrace.txt").read_text().splitlines()
    checked = 0
    for f in found:
        for ev in f["evidence"]:
            loc = ev["locator"]
            if ev["source"].endswith("kernel.ftrace.txt"):
                assert lines[loc["start"] - 1] == ev["excerpt"]
                checked += 1
    assert checked > 0


def test_ftrace_local_clock_is_not_joined_with_ust(recording: Path) -> None:
    res = run(str(recording / "kernel.ftrace.txt"), "--spans", str(recording / "ust"))
    assert res.returncode == 3
    assert "ftrace clock 'local' cannot be joined" in res.stderr
    assert "Traceback" not in res.stderr


def test_report_merges_span_findings_of_an_lttng_session(
    recording: Path, tmp_path: Path, kf: Callable[..., Ran]
) -> None:
    out = tmp_path / "incident.json"
    proc = kf("report", "--trace", str(recording / "ust"), "--json", str(out), "-o", str(tmp_path / "incident.md"))
    assert proc.returncode in (0, 1), proc.stderr
    text = (tmp_path / "incident.md").read_text()
    assert "slow infer span" in text and "## Spans" in text
    kinds = {f["kind"] for f in json.loads(out.read_text())["incident"]["findings"]}
    assert "span-slow" in kinds


def test_what_was_examined_names_the_spans(doc: dict[str, object], recording: Path, kf: Callable[..., Ran]) -> None:
    """'No problem found' on a user-space session listed only the kernel figures it could not judge, not its spans."""
    incident = doc["incident"]
    assert isinstance(incident, dict)
    spans = doc["spans"]
    assert isinstance(spans, dict)
    named = ", ".join(f"{s['count']:,} {s['name']!r}" for s in spans["stats"][:5])
    assert f"slow request spans ({named}; judged over --slow-ms 2.5 ms)" in incident["examined"][0]["could_find"]
    alone = json.loads(kf("trace", str(recording / "ust"), "--format", "json").stdout)["incident"]["examined"][0]
    assert [x for x in alone["could_find"] if x.startswith("slow request spans (")] == [
        "slow request spans (60 'infer', 60 'infer:request'; judged against their name's median)"
    ], alone
    # A session without kernel events has no time span to state: it said "on 0 CPU(s) over not available: ...".
    assert (
        alone["what"].startswith(f"trace {recording / 'ust'}: ")
        and ", no time span (the trace has no " in alone["what"]
    )
    assert "CPU(s) over" not in alone["what"]


def test_a_span_option_that_matched_nothing_is_named(recording: Path, kf: Callable[..., Ran]) -> None:
    """Of two --span options, the one that matched no mark is named with marks it could have matched (was only
    "no spans ... (see --span)" when both failed, and nothing when one did)."""
    res = kf(
        "trace",
        str(recording / "kernel.ftrace.txt"),
        "--span",
        "infer start {id}..infer end {id}",
        "--span",
        "x=nope..never",
        "--format",
        "json",
    )
    assert res.returncode in (0, 1), res.stderr
    spans = json.loads(res.stdout)["spans"]
    assert [s["name"] for s in spans["stats"]] == ["infer start"]
    [note] = [n for n in spans["notes"] if n.startswith("--span")]
    assert note.startswith("--span 'x=nope..never' matched no start or end mark (120 marks read, e.g. 'infer start 0'")
    alone = json.loads(
        kf("trace", str(recording / "kernel.ftrace.txt"), "--span", "x=nope..never", "--format", "json").stdout
    )
    assert "no spans: 120 marks were read, none opened and closed a span (see --span)" in alone["spans"]["notes"]


def test_spans_outside_the_kernel_trace_are_said_so(recording: Path, tmp_path: Path, kf: Callable[..., Ran]) -> None:
    """Spans of another recording (100 s before this one's first event) get no breakdown made of the absence of events
    (each was "unknown: the kernel trace does not say (no event of the thread before)") and a note says the two do
    not overlap (review 11, 12f)."""
    kernel = recording / "kernel.ftrace.txt"
    times = [float(m[1]) for m in re.finditer(r"\] \S+\s+(\d+\.\d+):", kernel.read_text())]
    first, last = min(times), max(times)
    start = int((first - 100) * 1e9)
    csv = tmp_path / "spans.csv"
    csv.write_text(
        "tid,name,start_ns,end_ns\n"
        + "".join(f"7,req,{start + k * 10**8},{start + k * 10**8 + (k + 1) * 10**6}\n" for k in range(4))
    )
    res = kf("trace", str(kernel), "--kernel-clock", "mono", "--spans", str(csv), "--format", "json")
    assert res.returncode in (0, 1), res.stderr
    doc = json.loads(res.stdout)
    said = f"outside the kernel trace (its events {first:.6f} .. {last:.6f}): no breakdown"
    # (the trace's own trace_marker requests lie inside it: explained as before)
    assert {s["name"]: s["note"] for s in doc["spans"]["slow"] if s["note"] != said} == {"infer (trace_marker)": None}
    assert [s["name"] for s in doc["spans"]["slow"] if s["note"] == said] == ["req"] * 3
    total = sum(s["count"] for s in doc["spans"]["stats"])
    assert (
        f"4 of the {total} span(s) lie outside the kernel trace (its events {first:.6f} .. {last:.6f}; those spans "
        f"{start / 1e9:.6f} .. {(start + 3 * 10**8 + 4 * 10**6) / 1e9:.6f}): the recordings do not overlap there."
    ) in " ".join(doc["spans"]["notes"])
    (finding,) = [f for f in doc["incident"]["findings"] if f["kind"] == "span-slow" and " req span" in f["title"]]
    assert (finding["confidence"], finding["confidence_reason"]) == (0.75, said)


def test_ust_events_joined_with_an_ftrace_trace_are_cited_by_stream_event_packet_and_byte(
    doc: dict[str, object], recording: Path
) -> None:
    """Review 11 #10: joined with a text kernel trace, a UST event was cited "session line 5867", the byte offset
    called a line of the session directory; alone it is "ust/uid/0/64-bit/ch_0 event 166 (packet 0, byte 5867)".
    The event is checked here in its stream file: the packet header at its packet's offset, its byte inside it."""
    incident = doc["incident"]
    assert isinstance(incident, dict)
    ust = [
        ev
        for f in incident["findings"]
        for ev in f["evidence"]
        if Path(ev["source"]) == recording / "ust" and ev["locator"]["kind"] == "event"
    ]
    assert ust
    for ev in ust:
        loc = ev["locator"]
        event = loc["event"]
        assert event is not None and loc["name"] == event["stream"] and loc["start"] == event["number"] >= 1
        data = (recording / "ust" / event["stream"]).read_bytes()
        assert event["byte_offset"] < len(data) and data[:4] == (0xC1FC1FC1).to_bytes(4, "little")


def test_a_report_says_why_a_sessions_spans_are_not_joined_with_the_text_kernel_trace_beside_it(
    recording: Path,
) -> None:
    """Review 11 #8: ``report --trace SESSION --trace kernel.txt`` explained each slow span "(no kernel trace)",
    though the kernel trace was an input of the same report; a report cannot join them (the text trace's clock is
    not known to be CLOCK_MONOTONIC), and the note says so, with the command that does."""
    from forensics.pipelines.sources import analyse_trace

    ust, kernel = recording / "ust", recording / "kernel.ftrace.txt"
    from forensics.types.trace_result import TraceResult

    details = analyse_trace(ust, None, others=(ust, kernel)).details
    assert isinstance(details, TraceResult)
    spans = details.spans
    assert spans is not None and spans.slow
    want = (
        f"not joined with trace {kernel}: its clock is not known to be CLOCK_MONOTONIC (`kforensic trace {kernel} "
        f"--kernel-clock mono --spans {ust}` joins them)"
    )
    assert {b.note for b in spans.slow} == {want}
    alone = analyse_trace(ust, None).details
    assert isinstance(alone, TraceResult) and alone.spans is not None
    assert {b.note for b in alone.spans.slow} == {"no kernel trace"}
