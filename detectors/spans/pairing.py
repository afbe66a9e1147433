"""Pairing user-space marks into spans, per thread, and their latency percentiles.

Rules (:data:`AUTO_RULES`, ordered, specific to generic) for marks without ``--span``:

- a message ``NAME start ID`` / ``NAME end ID`` (also begin/end, entry/exit), e.g. lttng_ust_tracef's
  ``infer start 12`` / ``infer end 12``: span ``NAME``, paired on ID;
- a provider event ``prov:NAME_start`` / ``prov:NAME_end`` (``_begin/_end``, ``_entry/_exit``), e.g.
  ``infer:request_begin``: span ``prov:NAME``, paired on its ``id`` field when it has one, else by nesting.

``--span 'START..END'`` gives the two patterns: shell-style wildcards, and ``{id}`` where the id
stands (``'infer start {id}..infer end {id}'``); the span is named by ``NAME=`` before them, else by
START.  Pairing is always per thread: an end closes the open start of the same thread with the same id
(or the innermost open start when there is no id).
"""

from __future__ import annotations

import fnmatch
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from forensics.errors import UsageError
from forensics.types.spans import Mark, Span, SpanStats

_OPEN = ("start", "begin", "entry")


@dataclass(frozen=True)
class AutoRule:
    """One way a mark's text names a span edge: a regex with ``name``, ``edge`` and maybe ``id`` groups."""

    name: str
    regex: re.Pattern[str]
    example: str  # a text it takes
    expect: tuple[str, bool, str]  # what it gives for the example: span name, opens, id


#: Ordered, specific to generic: the first rule that matches a mark's text decides.
AUTO_RULES: tuple[AutoRule, ...] = (
    AutoRule(
        "message with an id",
        re.compile(r"^(?P<name>.+?) (?P<edge>start|begin|entry|end|exit)[ :=#]+(?P<id>\S+)$"),
        "infer start 12",
        ("infer", True, "12"),
    ),
    AutoRule(
        "message without id",
        re.compile(r"^(?P<name>.+?) (?P<edge>start|begin|entry|end|exit)$"),
        "frame end",
        ("frame", False, ""),
    ),
    AutoRule(
        "provider event name",
        re.compile(r"^(?P<name>[^ ]+?)_(?P<edge>start|begin|entry|end|exit)$"),
        "infer:request_begin",
        ("infer:request", True, ""),
    ),
)


@dataclass(frozen=True)
class SpanPattern:
    """A ``--span`` option: a name and the START/END patterns (``{id}`` marks the id)."""

    name: str
    start: re.Pattern[str]
    end: re.Pattern[str]


def _compile(pattern: str) -> re.Pattern[str]:
    parts = pattern.split("{id}")
    if len(parts) > 2:
        raise UsageError(
            f"--span pattern {pattern!r} has more than one {{id}}", hint="e.g. 'req start {id}..req end {id}'"
        )
    body = r"(?P<id>\S+)".join(fnmatch.translate(p).removeprefix("(?s:").removesuffix(r")\Z") for p in parts)
    return re.compile(rf"^(?:{body})$")


def parse_span_option(text: str) -> SpanPattern:
    """``[NAME=]START..END``."""
    name, eq, rest = text.partition("=")
    if not eq or ".." in name:
        name, rest = "", text
    start, sep, end = rest.partition("..")
    if not sep or not start or not end:
        raise UsageError(f"--span {text!r} is not START..END", hint="e.g. --span 'infer start {id}..infer end {id}'")
    return SpanPattern(name or start.replace("{id}", "").strip(), _compile(start), _compile(end))


def _classify(mark: Mark, patterns: Sequence[SpanPattern]) -> tuple[str, bool, str] | None:
    """(span name, is start, key) of a mark, or None when it opens or closes nothing."""
    text = mark.text
    if patterns:
        for p in patterns:
            for is_start, rx in ((True, p.start), (False, p.end)):
                m = rx.match(text)
                if m:
                    key = m.groupdict().get("id") or (str(mark.ident) if mark.ident is not None else "")
                    return p.name, is_start, key
        return None
    for rule in AUTO_RULES:
        m = rule.regex.match(text)
        if m:
            key = m.groupdict().get("id") or (str(mark.ident) if mark.ident is not None else "")
            return m.group("name"), m.group("edge") in _OPEN, key
    return None


def pair(
    marks: Iterable[Mark], patterns: Sequence[SpanPattern] = (), left_open: list[Mark] | None = None
) -> tuple[list[Span], dict[str, tuple[int, int]]]:
    """Spans from time-ordered marks, and per name the (unmatched starts, unmatched ends); ``left_open`` receives the
    start marks no end closed.

    A span's depth counts the spans of its name open on its thread when it began that an end closed later: a start
    whose end the trace does not hold (discarded by a full ring buffer, or after the recording stopped) makes no
    later span "nested" (one request id whose end was lost had every later request of its thread "inside 1 other
    span", and their baseline split on that depth).
    """
    open_: dict[tuple[int, str], list[tuple[str, Mark, int, tuple[int, ...]]]] = {}
    closed: set[int] = set()  # the starts (their numbers) an end closed
    found: list[tuple[str, int, str, Mark, Mark, tuple[int, ...]]] = []
    unmatched: dict[str, list[int]] = {}
    number = 0
    for mark in marks:
        c = _classify(mark, patterns)
        if c is None:
            continue
        name, is_start, key = c
        stack = open_.setdefault((mark.tid, name), [])
        if is_start:
            number += 1
            stack.append((key, mark, number, tuple(n for _k, _m, n, _b in stack)))  # with the starts open under it
            continue
        for i in range(len(stack) - 1, -1, -1):
            if stack[i][0] == key or not key or not stack[i][0]:
                k, begin, n, under = stack.pop(i)
                closed.add(n)
                found.append((name, mark.tid, k or key, begin, mark, under))
                break
        else:
            unmatched.setdefault(name, [0, 0])[1] += 1
    for (_tid, name), stack in open_.items():
        if stack:
            unmatched.setdefault(name, [0, 0])[0] += len(stack)
            if left_open is not None:
                left_open += [m for _k, m, _n, _u in stack]
    spans = [
        Span(name, tid, key, b.ts, e.ts, b.ref, e.ref, sum(1 for n in under if n in closed), b.kind)
        for name, tid, key, b, e, under in found
    ]
    spans.sort(key=lambda s: (s.start, s.tid))
    return spans, {k: (v[0], v[1]) for k, v in unmatched.items()}


def nearest_rank(sorted_values: Sequence[float], p: float) -> float:
    """The nearest-rank percentile: the smallest value with at least p% of the values at or below it."""
    n = len(sorted_values)
    return sorted_values[max(0, math.ceil(p / 100.0 * n) - 1)]


def statistics(spans: Sequence[Span], unmatched: dict[str, tuple[int, int]]) -> list[SpanStats]:
    """Per span name: count, P50/P90/P99/P99.9, max, mean (seconds)."""
    by_name: dict[str, list[float]] = {}
    for s in spans:
        by_name.setdefault(s.name, []).append(s.duration)
    out = []
    for name in sorted(set(by_name) | set(unmatched)):
        d = sorted(by_name.get(name, []))
        starts, ends = unmatched.get(name, (0, 0))
        if not d:
            out.append(SpanStats(name, 0, math.nan, math.nan, math.nan, math.nan, math.nan, math.nan, starts, ends))
            continue
        out.append(
            SpanStats(
                name,
                len(d),
                nearest_rank(d, 50),
                nearest_rank(d, 90),
                nearest_rank(d, 99),
                nearest_rank(d, 99.9),
                d[-1],
                sum(d) / len(d),
                starts,
                ends,
            )
        )
    return out


def slow_spans(spans: Sequence[Span], slow: float | None, slowest: int) -> list[Span]:
    """Spans over ``slow`` seconds (worst first, at most 50), or the ``slowest`` longest per name."""
    if slow is not None:
        return sorted((s for s in spans if s.duration > slow), key=lambda s: -s.duration)[:50]
    out: list[Span] = []
    for name in sorted({s.name for s in spans}):
        out += sorted((s for s in spans if s.name == name), key=lambda s: -s.duration)[:slowest]
    return out
