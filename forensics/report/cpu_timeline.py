"""The per-CPU timeline picture: who ran when, with hogs and long waits marked (PNG bytes).

matplotlib is imported inside :func:`timeline_png` (Agg backend, no display),
so importing this module costs nothing.  The picture is returned as bytes;
the delivery step writes it (0600, atomically: forensics/delivery.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from forensics.types.sched import TraceAnalysis

MAX_NAMED = 8  # tasks with their own colour; the rest are grey
MAX_MARKED = 5  # hog runs and waits marked (the longest)
#: The legend of the wait marks: a finding's wait in black, any other task's longest wait in grey.
NAMED_WAIT = "wait a wakeup-latency finding names"
OTHER_WAIT = "a task's longest wait no finding names (within its class's promise, or not its comm's worst)"


class WaitMark(NamedTuple):
    """One wait the picture marks: a task's longest wakeup wait above --latency-ms, and whether a finding names it."""

    pid: int
    comm: str
    cpu: int
    start: float
    seconds: float
    named: bool  # a wakeup-latency finding names this task (its pid): drawn black, else grey

    def label(self) -> str:
        """Its label: the task by comm and pid, as the legend and the tables name tasks (two pythons are two)."""
        return f"{self.comm} ({self.pid}) waits {self.seconds * 1e3:.1f} ms"


def wait_marks(analysis: TraceAnalysis, named: frozenset[int] = frozenset()) -> list[WaitMark]:
    """The longest waits to mark (each task's worst wakeup wait above --latency-ms, the MAX_MARKED longest), each
    with whether a finding names it (``named``: the pids of the wakeup-latency findings).

    Until 2026-12-07 each was labelled by comm alone, black, as a finding: "python waits 44.5 ms" beside a finding
    "python waited 19.886 ms" (another pid), the 44.5 ms within a nice-10 task's fair share and named by no finding
    (ue24 F11).  Every task's longest wait stays marked, as a trace viewer shows every latency, not only those
    judged; the grey ones are told apart in the legend."""
    waits = sorted(
        (
            t
            for t in analysis.tasks
            if t.worst_wakeup and t.worst_wakeup.span.duration > analysis.thresholds.wakeup_latency
        ),
        key=lambda t: -(t.worst_wakeup.span.duration if t.worst_wakeup else 0.0),
    )[:MAX_MARKED]
    return [
        WaitMark(t.pid, t.comm, w.span.cpu, w.span.start, w.span.duration, t.pid in named)
        for t in waits
        if (w := t.worst_wakeup) is not None
    ]


def timeline_png(
    analysis: TraceAnalysis,
    runs: Sequence[tuple[int, float, float, int]],
    title: str,
    width_px: int = 1600,
    named: frozenset[int] = frozenset(),
) -> bytes:
    """Draw ``runs`` (cpu, start, end, pid) per CPU; mark hog runs and the worst waits (:func:`wait_marks`)."""
    from forensics.report.mpl import png_bytes, pyplot

    plt = pyplot()
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    comm = {t.pid: t.comm for t in analysis.tasks}
    cpus = sorted({r[0] for r in runs} | {c.cpu for c in analysis.cpus})
    row = {cpu: i for i, cpu in enumerate(cpus)}
    busiest = [t.pid for t in analysis.tasks[:MAX_NAMED]]
    palette = [f"C{i}" for i in range(10)]  # matplotlib's default colour cycle
    colour = {pid: palette[i % len(palette)] for i, pid in enumerate(busiest)}
    fig, ax = plt.subplots(figsize=(width_px / 100, 1.6 + 1.0 * max(1, len(cpus))), dpi=100)
    per_colour: dict[str, list[tuple[float, float, int]]] = {}
    for cpu, start, end, pid in runs:
        if pid == 0:
            continue
        key = colour.get(pid, "0.75")  # grey
        per_colour.setdefault(key, []).append((start, end - start, row[cpu]))
    for key, bars in per_colour.items():
        for r in {b[2] for b in bars}:
            ax.broken_barh([(s, w) for s, w, rr in bars if rr == r], (r - 0.35, 0.7), facecolors=key, linewidth=0)
    limit = analysis.thresholds.hog
    hogs = sorted(
        (t for t in analysis.tasks if t.runs.worst and t.runs.worst.duration > limit and t.runs.worst.cpu in row),
        key=lambda t: -(t.runs.worst.duration if t.runs.worst else 0.0),
    )[:MAX_MARKED]
    for i, task in enumerate(hogs):
        run = task.runs.worst
        assert run is not None
        y = row[run.cpu]
        ax.broken_barh([(run.start, run.duration)], (y - 0.45, 0.9), facecolors="none", edgecolors="red", linewidth=1.5)
        ax.annotate(
            f"hog {task.comm} {run.duration * 1e3:.1f} ms",
            (run.start, y + 0.40 - 0.12 * (i % 2)),
            fontsize=7,
            color="red",
        )
    marks = wait_marks(analysis, named)
    for i, mark in enumerate(marks):
        if mark.cpu not in row:
            continue
        level: float = row[mark.cpu] - 0.42 - 0.1 * (i % 3)
        ink = "black" if mark.named else "0.5"
        ax.plot([mark.start, mark.start + mark.seconds], [level, level], color=ink, linewidth=2)
        ax.annotate(mark.label(), (mark.start, level - 0.03), fontsize=7, color=ink)
    ax.set_yticks(range(len(cpus)), [f"CPU{c}" for c in cpus])
    ax.set_ylim(-0.8, len(cpus) - 0.2)
    ax.invert_yaxis()
    ax.set_xlabel("trace time (s)")
    ax.set_title(title, fontsize=9)
    handles: list[Patch | Line2D] = [Patch(color=colour[p], label=f"{comm.get(p, p)} ({p})") for p in busiest]
    if marks:  # what the wait marks are: the legend says which a finding names
        handles += [
            Line2D([], [], color=ink, linewidth=2, label=text)
            for ink, text, shown in (("black", NAMED_WAIT, True), ("0.5", OTHER_WAIT, False))
            if any(m.named is shown for m in marks)
        ]
    if handles:
        ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    try:
        return png_bytes(fig)
    finally:
        plt.close(fig)
