"""PNG plots of the span analysis: a latency histogram per span name, and a thread-state Gantt chart.

The Gantt chart is in the spirit of Trace Compass's Control Flow view: around
each of the slowest spans (at most :data:`GANTT_SPANS`), one row per thread
involved (the span's thread, the tasks that preempted it, its wakers), coloured
by state: running, IRQ, preempted, runnable, blocked.  matplotlib (Agg) is
imported inside the functions.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from forensics.types.spans import Breakdown, KernelTable, SpanReport

GANTT_SPANS = 3
MAX_ROWS = 8  # threads per chart
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
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        return buf.getvalue()
    finally:
        plt.close(fig)


def gantt_png(report: SpanReport, table: KernelTable | None) -> bytes:
    """Thread states around the slowest spans (see the module docstring)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    from detectors.spans.breakdown import breakdown
    from forensics.types.spans import Span

    worst: list[Breakdown] = []
    for b in sorted(report.slow, key=lambda b: -b.span.duration):  # one chart per request (sources overlap)
        if not any(w.span.tid == b.span.tid and w.span.start < b.span.end and b.span.start < w.span.end for w in worst):
            worst.append(b)
    worst = worst[:GANTT_SPANS]
    fig, axes = plt.subplots(max(1, len(worst)), 1, figsize=(10, 3.4 * max(1, len(worst))), dpi=100, squeeze=False)
    try:
        for ax, b in zip(axes[:, 0], worst, strict=False):
            s = b.span
            margin = max(s.duration * 0.2, 0.0005)
            w0, w1 = s.start - margin, s.end + margin
            threads = [s.tid]
            for p in b.parts:  # its preemptors and wakers, and who ran on its CPU while it waited
                others = [p.by_tid] if p.by_tid else []
                if table is not None and p.what in ("preempted", "runnable") and p.cpu >= 0:
                    others += [tid for tid, _prio, _secs in table.ran_between(p.cpu, p.start, p.end)[:2]]
                for tid in others:
                    if tid not in threads:
                        threads.append(tid)
            threads = threads[:MAX_ROWS]
            for row, tid in enumerate(threads):
                label = f"TID {tid}" if table is None else f"{table.comm(tid)} {tid}"
                if table is not None:
                    probe = Span(s.name, tid, "", w0, w1, s.begin_ref, s.end_ref)
                    for p in breakdown(table, probe).parts:
                        ax.broken_barh(
                            [((p.start - s.start) * 1e3, p.duration * 1e3)],
                            (row - 0.4, 0.8),
                            facecolors=COLOURS.get(p.what, "#cccccc"),
                            edgecolor="none",
                        )
                ax.text((w0 - s.start) * 1e3, row, label + " ", ha="right", va="center", fontsize=8)
            ax.axvspan(0, s.duration * 1e3, color="#1f77b4", alpha=0.08)
            ax.axvline(0, color="#1f77b4", linewidth=1)
            ax.axvline(s.duration * 1e3, color="#1f77b4", linewidth=1)
            ax.set_yticks([])
            ax.set_ylim(len(threads) - 0.5, -0.5)
            ax.set_xlim((w0 - s.start) * 1e3, (w1 - s.start) * 1e3)
            ax.set_xlabel(f"ms from the span's start ({s.start:.6f})")
            ax.set_title(f"{s.name} on TID {s.tid}: {s.duration * 1e3:.3f} ms", fontsize=10)
        if not worst:
            axes[0, 0].text(0.5, 0.5, "no slow spans", ha="center", va="center")
        fig.legend(
            handles=[Patch(color=c, label=k) for k, c in COLOURS.items() if k != "unknown"],
            loc="upper right",
            fontsize=8,
            ncol=5,
        )
        fig.tight_layout(rect=(0.08, 0, 1, 0.95))
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        return buf.getvalue()
    finally:
        plt.close(fig)
