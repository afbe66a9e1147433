"""Span pairing: the auto rules (each with its example), --span patterns, per-thread pairing, percentiles."""

from __future__ import annotations

import pytest

from detectors.spans.pairing import AUTO_RULES, _classify, nearest_rank, pair, parse_span_option, statistics
from forensics.errors import UsageError
from forensics.types.spans import Mark, Ref


def mark(ts: float, tid: int, text: str, ident: int | None = None) -> Mark:
    return Mark(ts, tid, text, ident, Ref(ts, 0, f"t:{int(ts)}", text, int(ts), "t"))


@pytest.mark.parametrize("rule", AUTO_RULES, ids=lambda r: r.name)
def test_each_auto_rule_takes_its_example(rule: object) -> None:
    assert rule.regex.match(rule.example)  # type: ignore[attr-defined]
    assert _classify(mark(1.0, 1, rule.example), ())[:3] == rule.expect  # type: ignore[attr-defined,index]


def test_provider_events_pair_on_their_id_field_per_thread() -> None:
    marks = [
        mark(1.0, 10, "infer:request_begin", 1),
        mark(1.5, 11, "infer:request_begin", 1),  # another thread, same id: its own span
        mark(2.0, 10, "infer:request_begin", 2),
        mark(3.0, 10, "infer:request_end", 1),
        mark(4.0, 11, "infer:request_end", 1),
        mark(5.0, 10, "infer:request_end", 2),
        mark(6.0, 10, "infer:request_end", 3),  # no start
    ]
    spans, unmatched = pair(marks)
    got = sorted((s.tid, s.key, s.start, s.end) for s in spans)
    assert got == [(10, "1", 1.0, 3.0), (10, "2", 2.0, 5.0), (11, "1", 1.5, 4.0)]
    assert unmatched == {"infer:request": (0, 1)}


def test_span_option_with_id_and_wildcards() -> None:
    p = parse_span_option("req=job * go {id}..job * done {id}")
    assert p.name == "req"
    spans, _ = pair([mark(1.0, 5, "job A go 7"), mark(2.0, 5, "job A go 8"), mark(4.0, 5, "job A done 7")], [p])
    assert [(s.name, s.key, s.duration) for s in spans] == [("req", "7", 3.0)]
    with pytest.raises(UsageError):
        parse_span_option("no-separator")


def test_nearest_rank_percentiles_are_real_values() -> None:
    values = [float(v) for v in range(1, 101)]
    assert nearest_rank(values, 50) == 50.0
    assert nearest_rank(values, 99) == 99.0
    assert nearest_rank(values, 99.9) == 100.0
    spans, unmatched = pair(
        [mark(float(i), 1, f"x start {i}") for i in range(3)]
        + [mark(float(i) + 0.5 + i, 1, f"x end {i}") for i in range(3)]
    )
    (st,) = statistics(sorted(spans, key=lambda s: s.start), unmatched)
    assert (st.count, st.p50, st.max) == (3, 1.5, 2.5)


def test_a_start_never_closed_makes_no_later_span_nested() -> None:
    """A request whose end the trace lacks (discarded by a full ring buffer) is unmatched, not open around the
    requests after it: until 2026-12-07 each later one had depth 1, "inside 1 other span"."""
    left: list[Mark] = []
    marks = [
        mark(1.0, 10, "infer:request_begin", 1),  # its end was lost
        mark(2.0, 10, "infer:request_begin", 2),
        mark(3.0, 10, "infer:request_end", 2),
        mark(4.0, 10, "infer:request_begin", 3),
        mark(5.0, 10, "infer:request_begin", 4),  # truly nested in 3
        mark(6.0, 10, "infer:request_end", 4),
        mark(7.0, 10, "infer:request_end", 3),
    ]
    spans, unmatched = pair(marks, left_open=left)
    assert [(s.key, s.depth) for s in spans] == [("2", 0), ("3", 0), ("4", 1)]
    assert unmatched == {"infer:request": (1, 0)}
    assert left == [marks[0]]


def test_a_message_end_closes_only_its_own_word_pair_and_id_a_provider_end_without_id_its_innermost_start() -> None:
    """The auto rules: "x entry 1" ... "x end 1" (two word pairs) and "x start 2" ... "x end" (an id, then none)
    make no span; a provider's end event with no id field still closes its thread's start (events are named for
    their role)."""
    spans, unmatched = pair([mark(1.0, 1, "x entry 1"), mark(2.0, 1, "x end 1"), mark(3.0, 1, "x start 2")])
    spans2, _ = pair([mark(4.0, 1, "x end")])
    assert not spans and not spans2 and unmatched == {"x": (2, 1)}
    spans, _ = pair([mark(1.0, 1, "p:req_begin", 9), mark(2.0, 1, "p:req_end")])
    assert [(s.name, s.key, s.duration) for s in spans] == [("p:req", "9", 1.0)]


def test_marks_whose_id_has_no_digit_are_said_with_the_span_option_that_pairs_them() -> None:
    """``req start abc`` ... ``req end abc`` made no span and nothing said why (review ue16): the note counts such
    marks and names the --span that pairs them; marks with digit ids, or with --span given, make no note."""
    from detectors.spans.pairing import undigited_ids

    marks = [mark(1.0, 7, "req start abc"), mark(1.5, 7, "req end abc"), mark(2.0, 7, "req start 12")]
    said = undigited_ids(marks)
    assert said is not None and said.startswith("2 mark(s) that read as a span's start or end made no span: ")
    hint = said.rsplit("--span ", 1)[1].strip("'")
    assert hint == "req=req start {id}..req end {id}"
    spans, _unmatched = pair(marks[:2], [parse_span_option(hint)])
    assert [(s.name, s.key) for s in spans] == [("req", "abc")]
    assert undigited_ids(marks[2:]) is None
    assert undigited_ids(marks, [parse_span_option(hint)]) is None
