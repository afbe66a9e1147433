"""The timeline figure's axes: one moment read by several inputs is one moment, not an axis of 1e-7 s."""

from __future__ import annotations

from forensics.model import Clock, Severity, Timestamp
from forensics.report.timeline_figure import axis_range, timeline_png
from forensics.types.incident import BOOT_LANE, Lane, LaneKey, TimelineEvent

#: The wall times a dump, its log and two contradictions placed the 10-use-after-free crash at (user-eye round 5,
#: #12: the report's "Boot (wall clock)" panel spread them over 0.7 µs, its axis scaled 1e-7 s).
CRASH_WALLS = (1796310922.9131033, 1796310922.913104, 1796310922.913104, 1796310922.913104)


def _event(wall: float, title: str, wall_end: float | None = None) -> TimelineEvent:
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
        severity=Severity.HIGH,
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
