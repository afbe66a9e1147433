"""The incident timeline figure: every finding as an interval, one lane per clock (matplotlib, Agg, PNG).

Times of different clocks cannot be put on one axis, so each lane (the boot's
wall-clock axis, each trace's own clock) is its own panel with its own axis,
stacked; a lane whose input cannot belong to the crashed boot is titled so.
matplotlib is imported inside the function: the CLI does not pay for it.
"""

from __future__ import annotations

from dataclasses import replace

from forensics.model import Severity
from forensics.types.incident import TRACE_LANE, Lane, TimelineEvent
from forensics.units import iso_utc

# Severity colours of the HTML page's badges (forensics/report/html.py), so the figure reads like the page.
SEVERITY_COLOURS = {
    Severity.CRITICAL: "#8b0000",
    Severity.HIGH: "#c0392b",
    Severity.MEDIUM: "#d68910",
    Severity.LOW: "#2e86c1",
    Severity.INFO: "#7f8c8d",
}
_MAX_ROWS = 14  # per lane: the figure stays readable; the table lists every finding
_MAX_TITLE = 58


def _origin_text(lane: Lane, first: TimelineEvent) -> str:
    if first.wall is not None:
        return iso_utc(first.wall) + " UTC"
    return f"{first.when.seconds:.6f} s on {'the ' + lane.noun if lane.key.clock == TRACE_LANE else 'its'} clock"


def _x(e: TimelineEvent) -> tuple[float, float]:
    start = e.wall if e.wall is not None else e.when.seconds
    end = e.wall_end if e.wall_end is not None else (e.end.seconds if e.end is not None else start)
    return start, end


#: Times of one lane less than this far apart (seconds) are one moment: several inputs' readings of one crash (a
#: dump's and its log's), whose wall times differ in a float's last digits; an axis scaled to that spread read
#: "1e-7" with its markers 0.7 µs apart.
MIN_SPAN = 0.001


def axis_range(evs: list[TimelineEvent]) -> tuple[TimelineEvent, float, float]:
    """A lane's axis: the event it starts at (the earliest), the span of its times after it (0 for one moment,
    :data:`MIN_SPAN`), and the padding either side."""
    first = min(evs, key=lambda e: _x(e)[0])
    span = max(_x(e)[1] for e in evs) - _x(first)[0]
    span = span if span >= MIN_SPAN else 0.0
    return first, span, span * 0.04 or 0.5


def axis_label(lane: Lane, first: TimelineEvent, span: float) -> str:
    """A lane's x axis label: ``seconds after ORIGIN``, or ``at ORIGIN`` for a lane of one moment (its axis has no
    ticks: one instant finding was drawn on "-0.4 .. 0.4 seconds after" its time; review 11, 12i)."""
    return f"seconds after {_origin_text(lane, first)}" if span else f"at {_origin_text(lane, first)} (one moment)"


def lane_rows(events: tuple[TimelineEvent, ...], lane: Lane) -> tuple[list[TimelineEvent], int]:
    """A lane's rows to draw and how many of its findings are left out (:data:`_MAX_ROWS` a lane).

    The most severe are kept (the earlier first among equals), drawn in time order: the first 14 by time were kept
    before, and a lane of 17 findings lost its MEDIUM CPU hog, the lane's worst, under a caption that said "every
    finding" (review 7, I).
    """
    evs = [e for e in events if e.lane == lane.key]
    if len(evs) <= _MAX_ROWS:
        return evs, 0
    order = sorted(range(len(evs)), key=lambda i: (-evs[i].severity.rank, _x(evs[i])[0], i))
    kept = sorted(order[:_MAX_ROWS])
    return [evs[i] for i in kept], len(evs) - _MAX_ROWS


def left_out(events: tuple[TimelineEvent, ...], lanes: tuple[Lane, ...]) -> int:
    """How many findings the figure leaves out in all (each is in the findings table)."""
    return sum(lane_rows(events, lane)[1] for lane in lanes)


def _segments(lane: Lane, evs: list[TimelineEvent], omitted: int) -> list[tuple[Lane, list[TimelineEvent], int]]:
    """A lane's panels: one per clock segment (a log's printk time that goes back, a second boot: its times are on
    another clock, not one axis), the later titled with where the jump is; the left-out count on the first."""
    segments = list(dict.fromkeys(e.segment for e in evs))
    out = []
    for n, segment in enumerate(segments):
        part = [e for e in evs if e.segment == segment]
        jump = part[0].jump
        title = lane.title if jump is None else f"{lane.title}, {jump.brief()}"
        out.append((replace(lane, title=title), part, omitted if n == 0 else 0))
    return out


def timeline_png(events: tuple[TimelineEvent, ...], lanes: tuple[Lane, ...]) -> bytes:
    """The figure as PNG bytes: a panel per lane, a bar per finding (a diamond for an instant)."""
    from forensics.report.mpl import png_bytes, pyplot

    plt = pyplot()

    rows = [(lane, *lane_rows(events, lane)) for lane in lanes]
    groups = [panel for lane, evs, omitted in rows if evs for panel in _segments(lane, evs, omitted)]
    heights = [max(len(evs), 2) for _, evs, _ in groups]
    fig, axes = plt.subplots(
        len(groups), 1, figsize=(11, 0.9 + 0.32 * sum(heights) + 0.9 * len(groups)), dpi=90, squeeze=False,
        gridspec_kw={"height_ratios": heights},
    )  # fmt: skip
    try:
        for ax, (lane, evs, omitted) in zip(axes[:, 0], groups, strict=True):
            first, span, pad = axis_range(evs)
            origin = _x(first)[0]
            for row, e in enumerate(evs):
                start, end = _x(e)
                colour = SEVERITY_COLOURS[e.severity]
                # An interval too short to see at this scale is drawn as an instant.
                if span and end - start > span * 0.004:
                    ax.barh(row, end - start, left=start - origin, height=0.6, color=colour)
                else:
                    ax.plot([start - origin], [row], marker="D", markersize=7, color=colour)
            ax.set_yticks(range(len(evs)))
            ax.set_yticklabels([e.title if len(e.title) <= _MAX_TITLE else e.title[: _MAX_TITLE - 1] + "…"
                                for e in evs], fontsize=8)  # fmt: skip
            ax.invert_yaxis()
            ax.set_xlim(-pad, span + pad)
            if not span:
                ax.set_xticks([])
            ax.set_xlabel(axis_label(lane, first, span), fontsize=8)
            ax.grid(True, axis="x", alpha=0.3)
            title = lane.title
            if omitted:
                title += (
                    f" (the {len(evs)} most severe, the earliest among equals; {omitted} more in the findings table)"
                )
            if lane.contradiction:
                # (dated by its own boot's reading: on the wall clock, yet of another boot than the story's)
                clock = "on its own boot's wall clock" if lane.began is not None else "not ordered against the crash"
                ax.set_title(f"{title}: ANOTHER BOOT, {clock}", fontsize=9, color="#8b0000")
                ax.set_facecolor("#fdecea")
            else:
                ax.set_title(title, fontsize=9)
        fig.tight_layout()
        return png_bytes(fig)
    finally:
        plt.close(fig)
