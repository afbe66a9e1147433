"""PNG plots of the span analysis: a latency histogram per span name, and a thread-state Gantt chart.

The Gantt chart (detectors/spans/gantt.py chooses what it shows) is in the
spirit of Trace Compass's Control Flow view: around each of the slowest spans,
one row per thread involved (the span's thread, the tasks that preempted it,
its wakers), coloured by state: running, IRQ, preempted, runnable, blocked.
matplotlib (Agg) is imported inside the functions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from forensics.types.spans import GanttChart, SpanReport

COLOURS = {
    "running": "#2ca02c",
    "irq": "#ff7f0e",
    "preempted": "#d62728",
    "runnable": "#e6c619",
    "blocked": "#7f7f7f",
    "unknown": "#ffffff",
}


def histogram_png(report: SpanReport) -> bytes:
    """Span durations per name (ms), with P50/P99 lines."""
    from forensics.report.mpl import png_bytes, pyplot

    plt = pyplot()

    names = [s for s in report.stats if s.count]
    fig, axes = plt.subplots(max(1, len(names)), 1, figsize=(8, 2.6 * max(1, len(names))), dpi=100, squeeze=False)
    try:
        for ax, st in zip(axes[:, 0], names, strict=False):
            values = [s.duration * 1e3 for s in report.spans if s.name == st.name]
            ax.hist(values, bins=min(60, max(10, len(values) // 3)), color="#1f77b4")
            for label, x, style in (("P50", st.p50, "--"), ("P99", st.p99, ":"), ("max", st.max, "-")):
                ax.axvline(x * 1e3, color="black", linestyle=style, linewidth=1, label=f"{label} {x * 1e3:.3f} ms")
            ax.set_title(f"{st.name}: {st.count} spans", fontsize=10)
            ax.set_xlabel("duration (ms)")
            ax.set_ylabel("spans")
            ax.legend(fontsize=8)
        if not names:
            axes[0, 0].text(0.5, 0.5, "no spans", ha="center", va="center")
        fig.tight_layout()
        return png_bytes(fig)
    finally:
        plt.close(fig)


def gantt_png(charts: tuple[GanttChart, ...]) -> bytes:
    """Thread states around the slowest spans (detectors/spans/gantt.py chose the spans and the threads)."""
    from forensics.report.mpl import png_bytes, pyplot

    plt = pyplot()
    from matplotlib.patches import Patch

    fig, axes = plt.subplots(max(1, len(charts)), 1, figsize=(10, 3.4 * max(1, len(charts))), dpi=100, squeeze=False)
    try:
        for ax, chart in zip(axes[:, 0], charts, strict=False):
            s = chart.span
            w0, w1 = chart.start, chart.end
            for row, thread in enumerate(chart.rows):
                for p in thread.parts:
                    ax.broken_barh(
                        [((p.start - s.start) * 1e3, p.duration * 1e3)],
                        (row - 0.4, 0.8),
                        facecolors=COLOURS.get(p.what, "#cccccc"),
                        edgecolor="none",
                    )
                ax.text((w0 - s.start) * 1e3, row, thread.label + " ", ha="right", va="center", fontsize=8)
            ax.axvspan(0, s.duration * 1e3, color="#1f77b4", alpha=0.08)
            ax.axvline(0, color="#1f77b4", linewidth=1)
            ax.axvline(s.duration * 1e3, color="#1f77b4", linewidth=1)
            ax.set_yticks([])
            ax.set_ylim(len(chart.rows) - 0.5, -0.5)
            ax.set_xlim((w0 - s.start) * 1e3, (w1 - s.start) * 1e3)
            ax.set_xlabel(f"ms from the span's start ({s.start:.6f})")
            ax.set_title(f"{s.name} on TID {s.tid}: {s.duration * 1e3:.3f} ms", fontsize=10)
        if not charts:
            axes[0, 0].text(0.5, 0.5, "no slow spans", ha="center", va="center")
        fig.legend(
            handles=[Patch(color=c, label=k) for k, c in COLOURS.items() if k != "unknown"],
            loc="upper right",
            fontsize=8,
            ncol=5,
        )
        fig.tight_layout(rect=(0.08, 0, 1, 0.95))
        return png_bytes(fig)
    finally:
        plt.close(fig)
