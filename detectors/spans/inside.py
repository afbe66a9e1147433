"""The few user-space events inside a slow span that say where its time went.

A span's breakdown says what the kernel did with its thread; the application's own events inside it say
what the thread was doing: which nested call took the time (lttng_ust_cyg_profile's func_entry of the
function, its address), where the thread went quiet, and the messages (lttng_ust_tracef/tracelog) it
wrote before.  At most :data:`MAX_CITED` events, each cited with what it shows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise

from forensics.types.spans import Mark, Ref, Span
from forensics.units import fmt_ms

MAX_CITED = 6
HOT_LEVELS = 3  # nested calls followed down the longest one
SHARE = 0.25  # a nested call or a quiet stretch is cited when it holds at least this share of the span
MESSAGES = 2  # messages cited, the last ones before the time went
SAME = 0.99  # a span of another name this close to the whole one marks the same request


@dataclass(frozen=True, slots=True)
class Inside:
    """One event inside a span and what it shows of the span's time."""

    ref: Ref
    role: str


def _key(ref: Ref) -> tuple[str, int, float]:
    return (ref.source, ref.line_no, ref.ts)


def _is_message(mark: Mark) -> bool:
    """A mark that carried a message (tracef, tracelog, trace_marker), not only its event's name (Ref.event: a
    trace_marker write names none)."""
    return mark.text != mark.ref.event


def inside(
    span: Span,
    marks: Sequence[Mark],
    spans: Sequence[Span],
    called_from: Callable[[Ref], str | None] = lambda ref: None,
) -> list[Inside]:
    """The events of ``span``'s thread inside it that explain its time (``marks``, ``spans``: the thread's, in
    time order): the nested call that took most of it, followed down :data:`HOT_LEVELS` levels, each with where
    it was called from when its entry says (``called_from``); the longest stretch without any event of the
    thread (unknown when its streams lost events then); the last messages before either."""
    total = span.duration
    if total <= 0:
        return []
    out: list[Inside] = []
    seen = {_key(span.begin_ref), _key(span.end_ref)}

    def cite(ref: Ref, role: str) -> None:
        if _key(ref) not in seen and len(out) < MAX_CITED:
            seen.add(_key(ref))
            out.append(Inside(ref, role))

    # The hot path: the longest call directly inside, while it holds a fair share of the span.
    parent = span
    hot_at = None
    for _ in range(HOT_LEVELS):
        kids = [
            s
            for s in spans
            if s is not parent
            and s.begin_ref.source == span.begin_ref.source  # (a trace_marker copy of the request is not inside it)
            and parent.start <= s.start
            and s.end <= parent.end
            and _key(s.begin_ref) != _key(parent.begin_ref)
            # the same request marked again by another event (tracef and a provider event): it says nothing
            and not (s.name != parent.name and s.duration >= SAME * parent.duration)
        ]
        if not kids:
            break
        longest = max(kids, key=lambda s: s.duration)
        if longest.duration < SHARE * total:
            break
        site = called_from(longest.begin_ref)
        cite(
            longest.begin_ref,
            f"nested {longest.name}{f' {longest.kind}' if longest.kind else ''} took {fmt_ms(longest.duration)}"
            f" ({100 * longest.duration / total:.0f}% of the span), until {longest.end:.6f}"
            + (f", called from {site}" if site is not None else ""),
        )
        hot_at = longest.start
        parent = longest
    # The longest stretch without an event of the thread.
    within = [m for m in marks if span.start <= m.ts <= span.end and m.ref.source == span.begin_ref.source]
    quiet_at = None
    if len(within) >= 2:
        gaps = [(b.ts - a.ts, a, b) for a, b in pairwise(within)]
        gap, a, b = max(gaps, key=lambda g: g[0])
        # Across events its streams lost (Span.lost) the stretch is not known to be quiet: a full ring buffer's hole
        # was "36.516 ms without any event" (the thread's 2232 later events of the request discarded).
        lost = [x for x in span.lost if x.overlaps(a.ts, b.ts)]
        if gap >= SHARE * total and lost:
            quiet_at = a.ts
            n = sum(x.count for x in lost)
            what = f"{n} events discarded" if n else "a packet lost"
            cite(
                a.ref,
                f"the thread's last event before {fmt_ms(gap)} unknown ({what} in {lost[0].stream} packet"
                f" {lost[0].packet}{f' and {len(lost) - 1} more' if len(lost) > 1 else ''} between "
                f"{lost[0].start:.6f} and {lost[-1].end:.6f}; {100 * gap / total:.0f}%)",
            )
            cite(b.ref, f"the thread's next event recorded, {fmt_ms(gap)} later")
        elif gap >= SHARE * total:
            quiet_at = a.ts
            cite(a.ref, f"the thread's last event before {fmt_ms(gap)} without any ({100 * gap / total:.0f}%)")
            cite(b.ref, f"the thread's next event, {fmt_ms(gap)} later")
    # Its messages: the last ones before the time went (else the last ones of the span).
    until = min((t for t in (hot_at, quiet_at) if t is not None), default=span.end)
    said = [m for m in within if _is_message(m) and m.ts <= until and _key(m.ref) not in seen]
    for m in said[-MESSAGES:]:
        cite(m.ref, "a message of the thread inside the span")
    return out
