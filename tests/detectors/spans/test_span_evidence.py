"""A slow span's evidence: what the events inside it carried, and a baseline of its own kind and nesting.

Nested calls are drawn as lttng_ust_cyg_profile records them (func_entry/func_exit, no id, the function's
``addr`` as the mark's kind); the payload fields are read from the project's UST recording and compared with
babeltrace2's text of the same events.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from detectors.spans.findings import analyse, span_findings
from detectors.spans.inside import inside
from detectors.spans.pairing import pair
from forensics.types.spans import Mark, Ref

DATA = Path(__file__).resolve().parents[2] / "data" / "lttng"


def _call(ts: float, tid: int, addr: int, text: str) -> Mark:
    """A lttng_ust_cyg_profile mark as ust_marks makes it: its excerpt, event name and thread."""
    ref = Ref(ts, 0, f"t:{ts}", f"{text} vtid={tid}", int(ts * 1e6), "t", text, tid)
    return Mark(ts, tid, text, None, ref, f"addr=0x{addr:x}")


def entry(ts: float, tid: int, addr: int) -> Mark:
    return _call(ts, tid, addr, "lttng_ust_cyg_profile:func_entry")


def leave(ts: float, tid: int, addr: int) -> Mark:
    return _call(ts, tid, addr, "lttng_ust_cyg_profile:func_exit")


def message(ts: float, tid: int, msg: str) -> Mark:
    name = "lttng_ust_tracef:event"
    return Mark(ts, tid, msg, None, Ref(ts, 0, f"t:{ts}", f"{name} {msg!r}", int(ts * 1e6), "t", name, tid))


MAIN, WORK, LEAF = 0x1000, 0x2000, 0x3000


def calls() -> list[Mark]:
    """Thread 7: four outer calls of MAIN (10, 20, 30 and 400 ms); each calls WORK three times (1 ms each),
    the slow one also a LEAF that takes 300 ms after saying 'fetch model'."""
    marks: list[Mark] = []
    t = 0.0
    for outer in (0.010, 0.020, 0.030, 0.400):
        marks.append(entry(t, 7, MAIN))
        u = t + 0.001
        for _ in range(3):
            marks += [entry(u, 7, WORK), leave(u + 0.001, 7, WORK)]
            u += 0.002
        if outer > 0.1:
            marks += [message(u, 7, "fetch model"), entry(u + 0.001, 7, LEAF), leave(u + 0.301, 7, LEAF)]
        marks.append(leave(t + outer, 7, MAIN))
        t += outer + 0.005
    return marks


def test_a_nested_call_has_its_depth_and_kind() -> None:
    spans, unmatched = pair(calls())
    assert unmatched == {}
    by = {(s.kind, s.depth) for s in spans}
    assert by == {(f"addr=0x{MAIN:x}", 0), (f"addr=0x{WORK:x}", 1), (f"addr=0x{LEAF:x}", 1)}


def test_the_baseline_is_the_calls_of_the_same_function_at_the_same_depth() -> None:
    """The slow outer call against the other outer calls of MAIN (median 20 ms), not against every call of the
    name (16 of them, mostly 1 ms inner calls: a median of 1 ms made a 400 ms main() look 400 times slow)."""
    spans, unmatched = pair(calls())
    report = analyse(spans, unmatched, None, None, 1, ["t"], [])
    (f,) = span_findings(report, None, calls())
    assert f.baseline is not None
    assert f.baseline.value == "20.000 ms"
    assert "4 'lttng_ust_cyg_profile:func' span(s) of addr=0x1000 outermost (nesting depth 0)" in f.baseline.name
    assert report.stats[0].p50 == pytest.approx(0.001)  # the name's own table still counts every call


def test_the_events_inside_say_where_the_time_went() -> None:
    marks = calls()
    spans, _u = pair(marks)
    slow = max(spans, key=lambda s: s.duration)
    got = inside(slow, marks, spans)
    texts = [(g.ref.text, g.role) for g in got]
    assert texts[0][0].startswith("lttng_ust_cyg_profile:func_entry")
    assert "nested lttng_ust_cyg_profile:func addr=0x3000 took 300.000 ms (75% of the span)" in texts[0][1]
    assert ("lttng_ust_tracef:event 'fetch model'", "a message of the thread inside the span") in texts
    assert len(got) <= 6
    # The finding cites them, each with its time and CPU.
    report = analyse(spans, {}, None, None, 1, ["t"], [])
    (f,) = span_findings(report, None, marks)
    inside_facts = [x.value for x in f.facts if x.name == "inside"]
    assert any("'fetch model'" in v and v.startswith("at ") and " CPU0 " in v for v in inside_facts), inside_facts
    assert any(e.excerpt == "lttng_ust_tracef:event 'fetch model'" and e.cpu == 0 for e in f.evidence)


def test_a_call_without_a_long_nested_one_cites_where_the_thread_went_quiet() -> None:
    """The 10 ms outer call: three 1 ms calls (none a quarter of it), then 4 ms without an event."""
    marks = calls()
    spans, _u = pair(marks)
    quick = min((s for s in spans if s.depth == 0), key=lambda s: s.duration)
    got = inside(quick, marks, spans)
    assert [g.role for g in got] == ["the thread's last event before 4.000 ms without any (40%)"]
    assert got[0].ref.text == "lttng_ust_cyg_profile:func_exit vtid=7" and got[0].ref.ts == pytest.approx(0.006)


def test_a_message_is_told_from_the_event_s_name_by_the_record() -> None:
    """A message that begins its event's name ("lttng") is a message still: until 2026-12-06 a mark was one when
    its rendered excerpt did not begin with its text, and this one's does."""
    marks = [entry(0.0, 7, MAIN), message(0.001, 7, "lttng"), message(0.002, 7, "x"), leave(0.010, 7, MAIN)]
    spans, _u = pair(marks)
    said = [g.ref.text for g in inside(spans[0], marks, spans) if g.role == "a message of the thread inside the span"]
    assert said == ["lttng_ust_tracef:event 'lttng'"]  # ('x' is cited as the last event before the quiet 8 ms)


@pytest.fixture
def ust(tmp_path: Path) -> Path:
    with tarfile.open(DATA / "ust.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    return tmp_path / "ust"


def test_the_request_s_own_fields_are_cited_as_babeltrace2_reads_them(ust: Path) -> None:
    """Every infer:request_begin of the recording: its excerpt carries its payload (``id=N``) as babeltrace2
    prints it, and a tracef mark its message."""
    from collectors.ctf.reader import Session
    from collectors.spans import UstPayloads, ust_marks

    s = Session(str(ust), compiled=False)
    marks, _notes = ust_marks(s, *s.ust_rows())
    payloads = UstPayloads()
    payloads.add(s)
    begins = [payloads.cite(m.ref).text for m in marks if m.text == "infer:request_begin"]
    assert len(begins) == 60
    assert begins[15] == "infer:request_begin id=15 vtid=4003"
    # Rendered from the record (its event, thread and payload), nothing read back from the excerpt it had.
    (fifteen,) = [m.ref for m in marks if m.text == "infer:request_begin" and m.ident == 15]
    assert (fifteen.event, fifteen.tid) == ("infer:request_begin", 4003)
    assert payloads.cite(dataclasses.replace(fifteen, text="")).text == begins[15]
    said = [payloads.cite(m.ref).text for m in marks if m.text.startswith("infer start ")]
    assert said[15] == "lttng_ust_tracef:event msg='infer start 15' vtid=4003"
    if shutil.which("babeltrace2"):
        text = subprocess.run(["babeltrace2", str(ust)], capture_output=True, text=True, check=True).stdout
        ids = [int(x) for x in re.findall(r"infer:request_begin: .*\{ id = (\d+) \}", text)]
        assert [int(b.split("id=")[1].split()[0]) for b in begins] == ids


def _outer_calls(durations: tuple[float, ...]) -> list[Mark]:
    marks: list[Mark] = []
    t = 0.0
    for d in durations:
        marks += [entry(t, 7, MAIN), leave(t + d, 7, MAIN)]
        t += d + 0.005
    return marks


@pytest.mark.parametrize(
    ("durations", "severity", "title"),
    [
        # 40 equal spans: the slowest is the median one, context (it was a LOW "slow ... span" to watch: review 7, G)
        ((0.050,) * 40, "info", "slowest lttng_ust_cyg_profile:func span: 50.000 ms, 1.0x its median"),
        ((0.010, 0.012, 0.011, 0.019), "info", "slowest lttng_ust_cyg_profile:func span: 19.000 ms, 1.7x its median"),
        ((0.010, 0.012, 0.011, 0.400), "low", "slow lttng_ust_cyg_profile:func span: 400.000 ms, 36.4x its median"),
        ((0.010,), "info", "slowest lttng_ust_cyg_profile:func span: 10.000 ms (the only one of its kind"),
        # a population of instants: its median is 0, and a span that took time stands out (it was "the only one of
        # its kind", info, among 41: review 8, 12)
        ((0.0,) * 40 + (0.005,), "low", "slow lttng_ust_cyg_profile:func span: 5.000 ms, its population's median is 0"),
    ],
)
def test_without_an_objective_only_a_span_that_stands_out_from_its_own_kind_is_worth_a_look(
    durations: tuple[float, ...], severity: str, title: str
) -> None:
    marks = _outer_calls(durations)
    spans, _u = pair(marks)
    (f,) = span_findings(analyse(spans, {}, None, None, 1, ["t"], []), None, marks)
    assert f.severity.value == severity
    assert f.title.startswith(title), f.title
    # With an objective the objective judges, as before.
    (g,) = span_findings(analyse(spans, {}, None, 0.005, 1, ["t"], []), 0.005, marks)
    assert g.severity.value == "medium" and g.title.startswith("slow ")
