"""Pairing user-space marks into spans, per thread, and their latency percentiles.

Rules (:data:`AUTO_RULES`, ordered, specific to generic) for marks without ``--span``:

- a message ``NAME start ID`` / ``NAME end ID`` (also begin/end, entry/exit), e.g. lttng_ust_tracef's
  ``infer start 12`` / ``infer end 12``: span ``NAME``, paired on ID (an ID holds a digit: ``cache entry: stale``
  is a log line about a cache entry, not the start of a span);
- a message ``NAME start`` / ``NAME end`` (also begin/end) with no id, e.g. ``frame end``: entry and exit, nouns
  in many log lines ("cache entry", "on exit"), are an edge in a message only with an id;
- a provider event ``prov:NAME_start`` / ``prov:NAME_end`` (``_begin/_end``, ``_entry/_exit``), e.g.
  ``infer:request_begin``: span ``prov:NAME``, paired on its ``id`` field when it has one, else by nesting.

An auto-paired end closes only a start of its own word pair (:data:`_PAIRS`: start or begin with end, entry with
exit) and, in a message, its own id (none with none): "entry" and "exit" are nouns in many log lines ("cache entry
42" ... "cache exit: flushed"), and a start whose id differs from the end's, or that has one where the end has none,
is another operation's (a user-eyes review: "cache entry"/"cache exit" lines made a request span).  A provider's
events are named for their role: its end with no ``id`` field still closes the innermost start.

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
from typing import NamedTuple

from forensics.errors import UsageError
from forensics.types.spans import Mark, Span, SpanStats

_OPEN = ("start", "begin", "entry")
#: Per edge word, the pair it belongs to: an end closes only a start of the same pair.
_PAIRS = {"start": "start/end", "begin": "start/end", "end": "start/end", "entry": "entry/exit", "exit": "entry/exit"}


class Edge(NamedTuple):
    """What a mark is to a span: its name, whether it opens one, the key it pairs on, the word pair it is of
    (empty for a ``--span`` pattern's) and whether the keys must be equal (the auto rules: see the module doc)."""

    name: str
    opens: bool
    key: str
    pair: str = ""
    strict: bool = False


@dataclass(frozen=True)
class AutoRule:
    """One way a mark's text names a span edge: a regex with ``name``, ``edge`` and maybe ``id`` groups."""

    name: str
    regex: re.Pattern[str]
    example: str  # a text it takes
    expect: tuple[str, bool, str]  # what it gives for the example: span name, opens, id
    strict: bool = True  # an end closes only a start of its own id (none with none); see the module doc


#: Ordered, specific to generic: the first rule that matches a mark's text decides.
AUTO_RULES: tuple[AutoRule, ...] = (
    AutoRule(
        "message with an id",
        re.compile(r"^(?P<name>.+?) (?P<edge>start|begin|entry|end|exit)[ :=#]+(?P<id>\S*\d\S*)$"),
        "infer start 12",
        ("infer", True, "12"),
    ),
    AutoRule(
        "message without id",
        re.compile(r"^(?P<name>.+?) (?P<edge>start|begin|end)$"),
        "frame end",
        ("frame", False, ""),
    ),
    AutoRule(
        "provider event name",
        re.compile(r"^(?P<name>[^ ]+?)_(?P<edge>start|begin|entry|end|exit)$"),
        "infer:request_begin",
        ("infer:request", True, ""),
        strict=False,
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


#: A message that reads as a span's edge with an id, but an id of no digit (``req start abc``): no auto rule takes it
#: (words follow start/end/entry/exit in many log lines: ``cache entry: miss``), so it makes no span; counted so the
#: output says why (:func:`undigited_ids`).
_NO_DIGIT_ID = re.compile(r"^(?P<name>.+?) (?P<edge>start|begin|entry|end|exit)[ :=#]+(?P<id>[^\s\d]+)$")


def undigited_ids(marks: Iterable[Mark], patterns: Sequence[SpanPattern] = ()) -> str | None:
    """What to say of the marks the auto rules leave out because their id holds no digit (``req start abc`` ...
    ``req end abc``), with the ``--span`` that pairs them; None when there are none, or ``--span`` patterns pair."""
    if patterns:
        return None
    found = [(mark, m) for mark in marks if (m := _NO_DIGIT_ID.match(mark.text)) and _classify(mark, ()) is None]
    if not found:
        return None
    words: dict[str, set[str]] = {}
    for _mark, m in found:
        words.setdefault(m.group("name"), set()).add(m.group("edge"))
    # the example: a name read both opening and closing (likelier a real pair than "cache entry: miss"), else the first
    name = next((n for n, w in words.items() if w & set(_OPEN) and w - set(_OPEN)), found[0][1].group("name"))
    example = next(mark.text for mark, m in found if m.group("name") == name)
    opens = next((w for w in _OPEN if w in words[name]), "start")
    closes = "exit" if opens == "entry" else "end"
    return (
        f"{len(found)} mark(s) that read as a span's start or end made no span: their id has no digit (e.g. "
        f"{example[:60]!r}; an automatic id holds one, as words follow start/end/entry/exit in many log lines); "
        f"if they are edges, pair them with --span '{name}={name} {opens} {{id}}..{name} {closes} {{id}}'"
    )


def _classify(mark: Mark, patterns: Sequence[SpanPattern]) -> Edge | None:
    """The span edge a mark is, or None when it opens or closes nothing."""
    text = mark.text
    if patterns:
        for p in patterns:
            for is_start, rx in ((True, p.start), (False, p.end)):
                m = rx.match(text)
                if m:
                    key = m.groupdict().get("id") or (str(mark.ident) if mark.ident is not None else "")
                    return Edge(p.name, is_start, key)
        return None
    for rule in AUTO_RULES:
        m = rule.regex.match(text)
        if m:
            key = m.groupdict().get("id") or (str(mark.ident) if mark.ident is not None else "")
            edge = m.group("edge")
            return Edge(m.group("name"), edge in _OPEN, key, _PAIRS[edge], rule.strict)
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
    open_: dict[tuple[int, str, str], list[tuple[str, Mark, int, tuple[int, ...]]]] = {}
    closed: set[int] = set()  # the starts (their numbers) an end closed
    found: list[tuple[str, int, str, Mark, Mark, tuple[int, ...]]] = []
    unmatched: dict[str, list[int]] = {}
    number = 0
    for mark in marks:
        c = _classify(mark, patterns)
        if c is None:
            continue
        name, is_start, key = c.name, c.opens, c.key
        stack = open_.setdefault((mark.tid, name, c.pair), [])
        if is_start:
            number += 1
            stack.append((key, mark, number, tuple(n for _k, _m, n, _b in stack)))  # with the starts open under it
            continue
        for i in range(len(stack) - 1, -1, -1):
            if stack[i][0] == key or (not c.strict and (not key or not stack[i][0])):
                k, begin, n, under = stack.pop(i)
                closed.add(n)
                found.append((name, mark.tid, k or key, begin, mark, under))
                break
        else:
            unmatched.setdefault(name, [0, 0])[1] += 1
    for (_tid, name, _pair), stack in open_.items():
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
