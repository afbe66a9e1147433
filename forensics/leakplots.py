"""PNG plots of flagged caches and meminfo fields: window medians over time and the fitted trend.

matplotlib (Agg backend, no display needed) is imported inside the functions:
importing this module costs nothing.  The delivery step (forensics/delivery.py)
writes the bytes atomically, mode 0600 (they show kernel memory use).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from forensics.types.figures import SeriesFigure


#: matplotlib's date range in its days since 1970-01-01: 0001-01-01 and 9999-12-31.
_DAYS_FIRST, _DAYS_LAST = -719162.0, 2932896.0


def utc_axis(ax: Any) -> None:
    """Date ticks in UTC whose labels carry as much as the span needs: seconds over a few minutes, hours over days
    (matplotlib's concise formatter; the date once, at the axis's end).  A fixed "%m-%d %H:%M" labelled a 150-s
    store's five ticks all "12-07 22:52" (ue24 F12)."""
    import datetime as dt

    import matplotlib.dates as mdates

    # matplotlib ships no annotations for the locator's and formatter's __init__.
    locator = mdates.AutoDateLocator(tz=dt.UTC)  # type: ignore[no-untyped-call]
    ax.xaxis.set_major_locator(locator)
    # Seconds with their minute ("22:52:30", not the concise default "30" between "22:52" and "22:53").
    formats = ["%Y", "%b", "%b-%d", "%H:%M", "%H:%M", "%H:%M:%S"]
    concise = mdates.ConciseDateFormatter(locator, tz=dt.UTC, formats=formats)  # type: ignore[no-untyped-call]
    ax.xaxis.set_major_formatter(concise)


def render_png(figure: SeriesFigure) -> bytes:
    """One series as a PNG: window medians, the judged part's Theil–Sen trend, MiB over UTC time."""

    from forensics.report.mpl import png_bytes, pyplot

    plt = pyplot()

    # matplotlib dates are days since its epoch, 1970-01-01 UTC by default (what date2num computes).
    times = figure.walls / 86400.0
    # A store's wall times beyond the years 1-9999 (an imported `date=` gone wrong) are no dates: matplotlib
    # raises on them (was exit 4), so such a plot is drawn over the seconds since its first sample.
    dated = bool(len(times)) and float(times.min()) >= _DAYS_FIRST and float(times.max()) <= _DAYS_LAST
    if not dated:
        times = figure.walls - (figure.walls[0] if len(figure.walls) else 0.0)
    fig, ax = plt.subplots(figsize=(8, 3.6), dpi=100)
    try:
        ax.plot(times, figure.values / 2**20, marker=".", linewidth=1, label="window medians")
        if len(figure.trend):
            ax.plot(
                times[figure.judged],
                figure.trend / 2**20,
                linestyle="--",
                color="tab:red",
                label=figure.trend_label,
            )
        ax.set_title(figure.title, fontsize=10)
        ax.set_ylabel("MiB")
        if dated:
            utc_axis(ax)
            ax.set_xlabel("UTC")
        else:
            ax.set_xlabel("seconds since the first sample (its wall time is not a date)")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="upper left", fontsize=8)
        fig.tight_layout()
        return png_bytes(fig)
    finally:
        plt.close(fig)
