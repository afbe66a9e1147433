"""The timeline figure's axes: one moment read by several inputs is one moment, not an axis of 1e-7 s."""

from __future__ import annotations

from forensics.model import Clock, Severity, Timestamp
from forensics.report.timeline_figure import axis_label, axis_range, lane_rows, left_out, timeline_png
from forensics.types.incident import BOOT_LANE, Lane, LaneKey, TimelineEvent

#: The wall times a dump, its log and two contradictions placed the 10-use-after-free crash at (user-eye round 5,
#: #12: the report's "Boot (wall clock)" panel spread them over 0.7 µs, its axis scaled 1e-7 s).
CRASH_WALLS = (1796310922.9131033, 1796310922.913104, 1796310922.913104, 1796310922.913104)


def _event(wall: float, title: str, wall_end: float | None = None, severity: Severity = Severity.HIGH) -> TimelineEvent:
    return TimelineEvent(
        when=Timestamp(wall, Clock.WALL),
        wall=wall,
        uncertainty=0.0,
        finding_id=title,
        title=title,
        cite="x line 1",
        excerpt="x",
        end=None if wall_end is None else Timestamp(wall_end, Clock.WALL),
        wall_end=wall_end,
        severity=severity,
    )


def test_times_a_float_rounding_apart_are_one_moment_on_a_second_wide_axis() -> None:
    evs = [_event(w, f"finding {n}") for n, w in enumerate(CRASH_WALLS)]
    first, span, pad = axis_range(evs)
    assert (first.wall, span, pad) == (min(CRASH_WALLS), 0.0, 0.5)
    png = timeline_png(tuple(evs), (Lane(LaneKey(BOOT_LANE), "Boot (wall clock)", "wall clock", True),))
    assert png.startswith(b"\x89PNG")


def test_an_interval_keeps_its_own_scale_from_the_earliest_start() -> None:
    evs = [_event(110.0, "later", 150.0), _event(100.0, "earlier")]
    first, span, pad = axis_range(evs)
    assert (first.title, span, pad) == ("earlier", 50.0, 2.0)


def test_a_crowded_lane_draws_its_most_severe_findings_and_says_how_many_it_left_out() -> None:
    """17 trace findings, the MEDIUM CPU hog the last by time: the first 14 by time were drawn, the hog not, under a
    caption "Every finding as an interval" (review 7, I)."""
    lane = Lane(LaneKey(BOOT_LANE), "Boot (wall clock)", "wall clock", True)
    evs = [_event(100.0 + n, f"low {n}", severity=Severity.LOW) for n in range(16)]
    evs.append(_event(200.0, "CPU hog", severity=Severity.MEDIUM))
    rows, omitted = lane_rows(tuple(evs), lane)
    assert omitted == 3 and len(rows) == 14
    assert [e.title for e in rows] == [f"low {n}" for n in range(13)] + ["CPU hog"]  # time order, the worst kept
    assert left_out(tuple(evs), (lane,)) == 3
    assert lane_rows(tuple(evs[:14]), lane) == (evs[:14], 0)
    assert timeline_png(tuple(evs), (lane,)).startswith(b"\x89PNG")


def test_a_lane_of_one_moment_is_labelled_at_it_not_seconds_after_it() -> None:
    """One instant finding was drawn on an axis of -0.4 .. 0.4 "seconds after" its own time (review 11, 12i)."""
    lane = Lane(LaneKey(BOOT_LANE), "Boot (wall clock)", "wall clock", True)
    evs = [_event(w, f"finding {n}") for n, w in enumerate(CRASH_WALLS)]
    first, span, _pad = axis_range(evs)
    assert axis_label(lane, first, span) == "at 2026-12-03T15:15:22+00:00 UTC (one moment)"
    interval = [_event(110.0, "later", 150.0), _event(100.0, "earlier")]
    first, span, _pad = axis_range(interval)
    assert axis_label(lane, first, span).startswith("seconds after ")
