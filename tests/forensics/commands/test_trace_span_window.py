"""``--window`` applies to spans as to the kernel tables: only the spans that overlap it, said in a note.

Review 11 #9: ``--window 81587.80:81587.90`` counted all 90 requests in the span table and explained a request
that lay entirely after the window (its breakdown read from outside it).  Here the project's own ftrace text:
three ``trace_marker`` requests of one thread, and windows over one of them and across an edge of another.
"""

from __future__ import annotations

from pathlib import Path

from forensics.pipelines.spans import SpanOptions
from forensics.pipelines.trace import analyse_trace_file

_SW = "sched_switch: prev_comm={} prev_pid={} prev_prio=120 prev_state={} ==> next_comm={} next_pid={} next_prio=120"


def _trace(path: Path) -> Path:
    lines = ["# tracer: nop"]
    for ts, what in (
        ("100.000000", _SW.format("swapper/0", 0, "R", "req", 100)),
        ("100.001000", "tracing_mark_write: infer start 1"),
        ("100.011000", "tracing_mark_write: infer end 1"),
        ("100.020000", "tracing_mark_write: infer start 2"),
        ("100.030000", "tracing_mark_write: infer end 2"),
        ("100.040000", "tracing_mark_write: infer start 3"),
        ("100.045000", "tracing_mark_write: infer end 3"),
        ("100.050000", _SW.format("req", 100, "S", "swapper/0", 0)),
    ):
        lines.append(f"             req-100     [000] d..2.   {ts}: {what}")
    path.write_text("\n".join(lines) + "\n")
    return path


def _spans(tmp_path: Path, window: tuple[float, float]) -> tuple[list[tuple[float, float]], tuple[str, ...]]:
    result = analyse_trace_file(str(_trace(tmp_path / "k.txt")), span=window, span_opts=SpanOptions(slow_ms=1.0))
    assert result.spans is not None
    return [(s.start, s.end) for s in result.spans.spans], result.spans.notes


def test_only_the_spans_that_overlap_the_window_are_analysed_and_a_note_says_so(tmp_path: Path) -> None:
    spans, notes = _spans(tmp_path, (100.018, 100.032))
    assert spans == [(100.020, 100.030)]
    assert (
        "spans: the 1 of 3 that overlap the window 100.018000 .. 100.032000; 2 outside it are left out (the "
        "unmatched counts are the whole trace's)"
    ) in notes
    spans, notes = _spans(tmp_path, (100.025, 100.050))
    assert spans == [(100.020, 100.030), (100.040, 100.045)]
    assert any(
        n.startswith("spans: the 2 of 3 that overlap the window") and "(1 cross an edge of it" in n for n in notes
    )
    spans, notes = _spans(tmp_path, (float("-inf"), float("inf")))
    assert len(spans) == 3 and not any(n.startswith("spans: the") for n in notes)


def test_trace_marker_lines_not_paired_are_said_with_how_to_pair_them(tmp_path: Path) -> None:
    """Review 11 #5: without --slow-ms/--span a text trace's trace_marker requests were counted as "events of other
    kinds", and "could have found" did not say request spans were not looked for."""
    trace = _trace(tmp_path / "k.txt")
    result = analyse_trace_file(str(trace))
    (examined,) = result.incident.examined
    assert (
        f"request spans: 6 trace_marker line(s) were not paired (`kforensic trace {trace} --slow-ms MS` or "
        "`--span NAME` pairs them and explains the slow ones)"
    ) in examined.could_not
    (paired,) = analyse_trace_file(str(trace), span_opts=SpanOptions(slow_ms=1.0)).incident.examined
    assert not any(c.startswith("request spans:") for c in paired.could_not)
