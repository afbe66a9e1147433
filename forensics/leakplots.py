"""PNG plots of flagged caches and meminfo fields: window medians over time and the fitted trend.

matplotlib (Agg backend, no display needed) is imported inside the functions:
importing this module costs nothing.  The delivery step (forensics/delivery.py)
writes the bytes atomically, mode 0600 (they show kernel memory use).
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from detectors.leaks.judge import SeriesVerdict


def render_png(verdict: SeriesVerdict, title: str) -> bytes:
    """One series as a PNG: window medians, the judged part's Theil–Sen trend, MiB over UTC time."""
    import datetime as dt

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.dates as mdates
    import matplotlib.pyplot as plt

    f = verdict.features
    # matplotlib dates are days since its epoch, 1970-01-01 UTC by default (what date2num computes).
    times = verdict.grid_walls / 86400.0
    fig, ax = plt.subplots(figsize=(8, 3.6), dpi=100)
    try:
        ax.plot(times, verdict.grid_values / 2**20, marker=".", linewidth=1, label="window medians")
        judged = verdict.grid_walls >= verdict.since_wall
        hours = (verdict.grid_walls[judged] - verdict.origin_wall) / 3600.0
        if len(hours):
            trend = (f.ts_intercept + f.ts_slope * hours) / 2**20
            ax.plot(
                times[judged],
                trend,
                linestyle="--",
                color="tab:red",
                label=f"trend {verdict.rate / 1024:,.0f} KB/h ({verdict.grade.value})",
            )
        ax.set_title(title, fontsize=10)
        ax.set_ylabel("MiB")
        # matplotlib ships no annotation for DateFormatter.__init__.
        ax.xaxis.set_major_formatter(mdates.DateFormatter("%m-%d %H:%M", tz=dt.UTC))  # type: ignore[no-untyped-call]
        ax.grid(True, alpha=0.3)
        ax.legend(loc="upper left", fontsize=8)
        ax.set_xlabel("UTC")
        fig.autofmt_xdate()
        fig.tight_layout()
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png")
    finally:
        plt.close(fig)
    return buffer.getvalue()
