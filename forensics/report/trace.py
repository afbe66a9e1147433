"""``kforensic trace`` rendered: header lines, the summary tables and the span section."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from forensics.model import NotAvailable
from forensics.report.formats import Destination, IncidentRenderer, OutputFormat, render
from forensics.types.sched import MOVED_UNKNOWN
from forensics.types.trace import ASIDE_STATEDUMP, ASIDE_SYSCALLS, ASIDE_USER, prio_known
from forensics.types.trace_result import TraceResult

if TYPE_CHECKING:
    from collections.abc import Callable

    from forensics.model import StreamEvent
    from forensics.report.document import Block, Document
    from forensics.types.sched import EventRef, LossGap, ParseSummary, Span, TaskStats, TraceAnalysis, Wait
    from forensics.types.spans import SpanReport
    from forensics.types.syscalls import SyscallLatency


CLOCK_MARK = " †"  # after a figure that spans a step where a CPU's clock went back


def _table_rows(a: TraceAnalysis, top: int) -> list[tuple[str, list[str], list[list[str]]]]:
    """The summary tables (title, header, rows) shared by the text and markdown renderers."""
    from forensics.units import fmt_ms

    def mark(span: Span | None, on_cpu: bool = False) -> str:
        """A dagger on figures that span a step where a CPU's clock went back, or a loss of events (see the
        header): ``on_cpu``, an interval that stays on its CPU (a run, a handler), only a loss of that CPU's."""
        return CLOCK_MARK if span is not None and a.clock.disputes_span(span, on_cpu) else ""

    def blocked(t: object, state: str) -> str:
        for s in getattr(t, "blocked", ()):
            if s.state == state:  # a total holding a sleep across a clock step holds that step's longest sleep
                return fmt_ms(s.total) + mark(s.worst)
        return "-"

    def preempted(t: TaskStats) -> str:
        """Who switched it out while it was runnable: the tasks that preempted it, then those an RT task was
        switched out for by RT throttling (TaskStats.throttled_for: idle and CFS tasks cannot preempt it; until
        2026-12-07 "kworker/1:0x2, <idle>x1" read as preemptions of a SCHED_FIFO task, ue19 #14, and then the
        throttled label went by its longest run alone, over counts that held preemptions too)."""
        said = ", ".join(f"{p.comm}x{p.times}" for p in t.preempted_by[:2])
        throttled = ", ".join(f"{p.comm}x{p.times}" for p in t.throttled_for[:2])
        return "; ".join(filter(None, (said, throttled and f"throttled for {throttled}"))) or "-"

    def least(wait: Wait | None, span: Span | None) -> str:
        """ "at least " before a worst wait still open where the window or the recording ends (Wait.open_at): its
        figure is a lower bound, as the findings say (until 2026-12-07 shown as a wait that ended)."""
        return "at least " if wait is not None and wait.lower_bound and wait.span == span else ""

    tasks = []
    for t in a.tasks[:top]:
        run = t.runs.worst
        wake = t.worst_wakeup
        pre = t.preempt_wait.worst
        tasks.append(
            [
                t.comm,
                str(t.pid),
                str(t.prio) if prio_known(t.prio) else "unknown",
                fmt_ms(t.runtime) + mark(run, True),  # a total that holds a run across a clock step is marked too
                str(t.runs.n),
                # still running where the window or the recording ends: a lower bound, as the hog findings say
                f"{'at least ' if t.runs.worst_open else ''}{fmt_ms(run.duration)}{mark(run, True)} "
                f"@{run.start:.6f} CPU{run.cpu}"
                if run
                else "-",
                str(t.hog_runs),
                least(wake, wake.span)
                + (
                    # moved between CPUs at an unknown time: who delayed it is not known (Wait.moved); the CPUs
                    # the moves read took it to too (away and back: CPU0->CPU1->CPU0)
                    f"{fmt_ms(wake.span.duration)}{mark(wake.span)} {_cpu_path(wake)}, behind unknown"
                    if wake.moved == MOVED_UNKNOWN
                    else f"{fmt_ms(wake.span.duration)}{mark(wake.span)} behind {_behind_cell(wake)}"
                    if wake.behind or wake.unseen > 0
                    else fmt_ms(wake.span.duration) + mark(wake.span)
                )
                + _unknown_wakeups(t)
                if wake
                else f"unknown: {t.wakeup_unknown_why.reason}"
                if t.wakeup_unknown_why
                else "-",
                least(t.worst_preempt_wait, pre) + fmt_ms(pre.duration) + mark(pre) if pre else "-",
                blocked(t, "S"),
                blocked(t, "D"),
                preempted(t),
            ]
        )
    stepped = {c for c, _lo, _hi in a.clock.disputed}  # CPUs whose totals hold intervals across a clock step
    if len(a.clock.jumps) > len(a.clock.holes):  # every CPU's totals span the jump (a hole is left out of them)
        stepped |= {c.cpu for c in a.cpus}
    cpus = [
        [
            f"CPU{c.cpu}",
            *(ts.reason if isinstance(ts, NotAvailable) else f"{ts:.6f}" for ts in (c.first_ts, c.last_ts)),
            *(
                f"unknown ({v.reason})"
                if isinstance(v, NotAvailable)
                else fmt_ms(v) + (CLOCK_MARK if c.cpu in stepped else "")
                for v in (c.busy, c.idle, c.irq_time, c.softirq_time)
            ),
            str(c.switches),
        ]
        for c in a.cpus
    ]
    irqs = [
        [
            str(i.irq) if i.irq >= 0 else f"vec {-i.irq}",
            i.name,
            str(i.durations.n),
            fmt_ms(i.durations.mean) + mark(i.durations.worst, True),
            fmt_ms(i.durations.worst.duration) + mark(i.durations.worst, True) if i.durations.worst else "-",
            f"{i.durations.worst.start:.6f}" if i.durations.worst else "-",
        ]
        for i in a.irqs
    ]
    softirqs = [
        [
            s.name,
            str(s.durations.n),
            fmt_ms(s.durations.worst.duration) + mark(s.durations.worst, True) if s.durations.worst else "-",
            fmt_ms(s.raise_latency.mean),
            fmt_ms(s.raise_latency.worst.duration) + mark(s.raise_latency.worst, True)
            if s.raise_latency.worst
            else "-",
            s.worst_raise_wait.behind[0].comm if s.worst_raise_wait and s.worst_raise_wait.behind else "-",
        ]
        for s in a.softirqs
    ]
    works = [
        [
            w.function,
            str(w.durations.n),
            fmt_ms(w.durations.total),
            fmt_ms(w.durations.worst.duration) + mark(w.durations.worst) if w.durations.worst else "-",
        ]
        for w in a.works[:top]
    ]
    offs = [
        [
            o.what,
            str(o.source),
            ("-" if isinstance(o.source, NotAvailable) else str(o.intervals))
            if isinstance(o.intervals, NotAvailable)
            else str(o.intervals.n),
            fmt_ms(o.intervals.worst.duration)
            if not isinstance(o.intervals, NotAvailable) and o.intervals.worst
            else "-",
        ]
        for o in a.offtimes
    ]
    out = [
        (
            "Tasks (busiest first)",
            [
                "task",
                "pid",
                "prio",
                "runtime",
                "runs",
                "longest run",
                "hog runs",
                "worst wakeup latency",
                "worst preempt wait",
                "S time",
                "D time",
                "preempted by",
            ],
            tasks,
        ),
        ("CPUs", ["cpu", "first event", "last event", "busy", "idle", "irq", "softirq", "switches"], cpus),
        ("IRQ handlers", ["irq", "name", "count", "mean", "worst", "worst at"], irqs),
        (
            "Softirqs",
            ["vector", "runs", "longest", "raise->entry mean", "raise->entry worst", "ran meanwhile"],
            softirqs,
        ),
        ("Workqueue functions", ["function", "items", "total", "longest"], works),
        ("IRQs-off / preempt-off", ["what", "source", "intervals", "worst"], offs),
    ]
    if a.clock.losses:
        out.append(_loss_rows(a))
    if a.buckets:
        out.append(
            (
                f"Buckets of {fmt_ms(a.bucket_seconds or 0)} per CPU",
                ["start", "cpu", "top tasks", "irq", "softirq", "worst latency"],
                [
                    [
                        f"{b.start:.6f}",
                        str(b.cpu),
                        ", ".join(f"{t.comm} {fmt_ms(t.runtime)}" for t in b.top),
                        fmt_ms(b.irq_time),
                        fmt_ms(b.softirq_time),
                        f"{b.worst_latency_comm} {fmt_ms(b.worst_latency)}" if b.worst_latency is not None else "-",
                    ]
                    for b in a.buckets
                ],
            )
        )
    return out


def _loss_rows(a: TraceAnalysis) -> tuple[str, list[str], list[list[str]]]:
    """Each loss of events (ClockCheck.losses), one row per gap, as the time it covers on its CPU, between the cited
    events (a UST stream's: packets) that bound it: what any task did on that CPU then is unknown (Trace Compass's
    lost-events markers, as a table).
    The first LOSSES_SHOWN of them, the title says of how many."""
    from forensics.types.sched import DISCARDED, LOSSES_SHOWN
    from forensics.units import fmt_ms

    seen = set(a.coverage.cpus_seen)

    def bound(g: LossGap, ref: EventRef | None, side: str) -> str:
        if g.packet is not None:  # a UST stream's gap: the time its packets give it (as babeltrace2 dates it)
            k = g.packet
            if side == "before":
                return f"{k.start:.6f} (the end of the packet before {k.where})"
            return f"{k.end:.6f} (the {'end' if k.why == DISCARDED else 'start'} of {k.where})"
        if ref is not None:  # a kernel CPU's gap: bounded by that CPU's events (the cell says which, as a UST one)
            return f"{ref.said(a.by_line)} (CPU{g.cpu}'s {'last event before' if side == 'before' else 'first after'})"
        if g.cpu not in seen:  # its events (if any) are not the analysed ones: whether it had one is not read
            return f"not available: no event of CPU{g.cpu} is among the analysed (kernel scheduler) events"
        return f"none (no event of the CPU {side} it)"

    def events(g: LossGap) -> str:
        n = f"{g.events:,}" if g.events else "not said"
        return n if g.markers == 1 else f"{n} ({g.markers} markers added up: no analysed event of the CPU between)"

    rows = [
        [
            f"CPU{g.cpu}",
            events(g),
            bound(g, g.before, "before"),
            bound(g, g.after, "after"),
            fmt_ms(g.packet.end - g.packet.start)
            if g.packet is not None
            else fmt_ms(g.end - g.start)
            if g.before is not None and g.after is not None
            else "unknown",
        ]
        for g in a.clock.losses[:LOSSES_SHOWN]
    ]
    total = len(a.clock.losses)
    shown = f" (first {LOSSES_SHOWN} of {total} shown)" if total > LOSSES_SHOWN else ""
    # One row per gap, each cell saying what bounds it: a kernel CPU's events or a UST stream's packets (one
    # table may hold both, so the header cannot say it).
    return (f"Lost events (one row per gap){shown}", ["cpu", "events lost", "from", "to", "for"], rows)


def _syscall_rows(
    t: SyscallLatency, top: int, named: Callable[[int], StreamEvent | None] | None
) -> tuple[str, list[str], list[list[str]], list[str]]:
    """The syscall latency table (title, header, the ``top`` names with the longest call) and what it did not
    measure, shared by the text and markdown renderers (``named``: the session's events, TraceResult.events)."""
    from forensics.types.syscalls import name_calls
    from forensics.units import fmt_ms

    shown = t.stats[:top]
    events = name_calls(shown, named)

    def at(position: int) -> str:
        se = events.get(position)
        return "-" if se is None else f"{se.stream} #{se.number}"

    title = (
        f"Syscall latency (entry to exit per thread; {len(shown)} of {len(t.stats)} syscall names, longest call first)"
        if len(shown) < len(t.stats)
        else "Syscall latency (entry to exit per thread; longest call first)"
    )
    header = ["syscall", "calls", "mean", "worst", "total", "worst by", "cpu", "worst at", "entry", "exit"]
    rows = []
    for st in shown:
        w = st.worst
        rows.append(
            [
                st.name,
                str(st.count),
                fmt_ms(st.mean),
                fmt_ms(w.duration),
                fmt_ms(st.total),
                f"{w.comm or '?'} {w.tid}" if w.tid >= 0 else "? (thread unknown)",
                str(w.cpu) if w.cpu == w.exit_cpu else f"{w.cpu}->{w.exit_cpu}",
                f"{w.start:.6f}",
                at(w.entry_at),
                at(w.exit_at),
            ]
        )
    notes = [f"syscall latency: {t.paired} syscalls paired (the thread of a syscall event: its CPU's sched_switch)"]
    for n, what in (
        (t.open_at_end, "still in the syscall at the end: {n} (an entry with no exit before the trace ends)"),
        (t.began_inside, "exits without entries: {n} (the trace began inside them)"),
        (
            t.unpaired_exits,
            "exits after another exit of their thread: {n} (their entry not read: lost, or sys_unknown)",
        ),
        (t.thread_exits, "threads ended by exit/exit_group: {n} (calls that do not return: not measured)"),
        (
            t.unpaired_entries,
            "entries followed by another entry of their thread: {n} (no exit between: lost, or a call such as"
            " rt_sigreturn that records none)",
        ),
        (t.across_loss, "pairs with events lost on their CPUs between entry and exit: {n} (not measured)"),
        (t.mismatched, "exits of another syscall than their thread's entry: {n} (not measured)"),
        (t.unknown_thread, "syscall events on a CPU no sched_switch names the thread of: {n} (paired on the CPU)"),
    ):
        if n:
            notes.append(what.format(n=n))
    return title, header, rows, notes


def _unknown_wakeups(t: TaskStats) -> str:
    """The wakeups not counted beside the worst counted one: their switch-in could not be seen."""
    why = t.wakeup_unknown_why
    return f" ({t.wakeups_unknown} more unknown: {why.reason})" if why else ""


#: What the events read but not analysed are (ParseSummary.aside), as the header names them.
_ASIDE = {
    ASIDE_SYSCALLS: "syscall entry/exit events (the syscall latency table)",
    ASIDE_STATEDUMP: "lttng_statedump_process_state events (the names of the threads at the start)",
    ASIDE_USER: "user-space events (request spans)",
}


def _header_lines(a: TraceAnalysis, parse: ParseSummary, source: str, notes: tuple[str, ...] = ()) -> list[str]:
    window = a.window
    # A CTF trace is binary: its events are decoded, not lines (the reader counts one "line" per event, and no
    # malformed ones): "31556 lines, 31556 events" said of LTTng's stream files read as text nowhere.
    text = parse.layout != "ctf"
    lines = [
        f"trace {source}: {f'{parse.lines} lines, ' if text else ''}{parse.events} events ({parse.used} analysed), "
        f"layout {parse.layout}",
        f"window {window}" if isinstance(window, NotAvailable) else f"window {window[0]:.6f} .. {window[1]:.6f}",
        f"wakeup latency measured from: {a.latency_source}",
        f"skipped: {f'{parse.malformed} malformed lines, ' if text else ''}"
        f"{sum(n for _k, n in parse.unknown)} events of other kinds, "
        f"{a.coverage.lost_markers} lost-event markers "
        + ("(events lost: unknown)" if a.coverage.lost_unknown else f"({a.coverage.lost_events} events lost)"),
    ]
    if parse.aside:
        lines.append("not analysed: " + ", ".join(f"{n} {_ASIDE.get(k, k)}" for k, n in parse.aside))
    if a.coverage.note:
        lines.append(f"coverage: {a.coverage.note}")
    if a.clock.back:
        counted = sum(
            v for c in a.cpus for v in (c.busy, c.idle) if isinstance(v, float)
        )  # run and idle time in the totals
        spanned = sum(  # of the CPUs whose run and idle time is known: an unknown one is no time left out
            c.last_ts - c.first_ts
            for c in a.cpus
            if isinstance(c.first_ts, float) and isinstance(c.last_ts, float) and c.last_ts > c.first_ts
            if isinstance(c.busy, float)
        )
        lines.append(
            f"clock: {a.clock.back} of {a.clock.steps} steps between events of one CPU go back in time; what falls "
            f"across a step is left out of the totals, which count {counted * 1e3:.3f} ms of the {spanned * 1e3:.3f} "
            f"ms the CPUs span; figures marked{CLOCK_MARK} span such a step and are not reliable (see the "
            "trace-clock finding)"
        )
    # The dagger's meaning when events were lost (said above only for a clock step), for a loss with a time
    if any(g.before is not None or g.after is not None for g in a.clock.losses):
        lines.append(
            f"lost events: figures marked{CLOCK_MARK} overlap a loss (a run, handler or softirq one of its own CPU; "
            "a wait or sleep one of any CPU, where the task may have run unseen) and are not reliable (see Lost "
            "events and the trace-coverage finding)"
        )
    for h in a.clock.holes:
        lines.append(
            f"coverage: no events from {h.before.ts:.6f} to {h.after.ts:.6f} on any CPU ({h.before.said(a.by_line)}, "
            f"then {h.after.said(a.by_line)}): a hole in the recording; nothing that spans it is counted"
        )
    if len(a.clock.jumps) > len(a.clock.holes):
        j = max(a.clock.jumps, key=lambda j: j.after.ts - j.before.ts)
        lines.append(
            f"clock: the trace jumps forward {len(a.clock.jumps)} times with no event on any CPU (longest "
            f"{j.after.ts - j.before.ts:.3f} s, from {j.before.said(a.by_line)} to {j.after.said(a.by_line)}"
            ": a suspend, a clock change or a missing stretch); totals include "
            f"the silence, figures marked{CLOCK_MARK} span it and are not reliable (see the trace-clock finding)"
        )
    lines += [f"warning: {note}" for note in notes]
    return lines


def render_text(
    a: TraceAnalysis,
    parse: ParseSummary,
    source: str,
    top: int,
    color: bool,
    notes: tuple[str, ...] = (),
    syscalls: SyscallLatency | None = None,
    named: Callable[[int], StreamEvent | None] | None = None,
) -> str:
    """Terminal tables of the analysis."""
    import io

    from rich.table import Table
    from rich.text import Text

    from forensics.report.terminal import text_console

    buf = io.StringIO()
    console = text_console(buf, color=color, width=160)
    for line in _header_lines(a, parse, source, notes):
        console.print(Text(line))  # as Text, not markup: a task's name is shown as it was recorded
    tables = _table_rows(a, top)
    below: list[str] = []
    if syscalls is not None and syscalls.stats:
        title, header, rows, below = _syscall_rows(syscalls, top, named)
        tables.append((title, header, rows))
    for title, header, rows in tables:
        if not rows:
            continue
        table = Table(title=title, title_justify="left")
        for h in header:
            table.add_column(h)
        for row in rows:
            table.add_row(*(Text(c) for c in row))
        console.print(table)
    for line in below:
        console.print(Text(line))
    return buf.getvalue()


def trace_document(result: TraceResult, top: int) -> Document:
    """The header lines, the summary tables and the span section of one analysed trace."""
    # Here, not at import: the text and JSON formats never build a document (its module costs ~5 ms of start-up).
    from forensics.report.document import BulletList, Document, Section, Table

    a = result.analysis
    lines = _header_lines(a, result.parse, result.source, result.notes)
    blocks: list[Block] = [BulletList(tuple(line.replace("|", "\\|") for line in lines))]
    blocks += [
        Section(title, (Table(tuple(header), tuple(tuple(r) for r in rows)),))
        for title, header, rows in _table_rows(a, top)
        if rows
    ]
    if result.syscalls is not None and result.syscalls.stats:
        title, header, rows, below = _syscall_rows(result.syscalls, top, result.events)
        table = Table(tuple(header), tuple(tuple(r) for r in rows))
        blocks.append(Section(title, (table, BulletList(tuple(line.replace("|", "\\|") for line in below)))))
    blocks += span_sections(result.spans)
    return Document("kforensic trace", tuple(blocks))


def render_markdown(result: TraceResult, top: int) -> str:
    """Markdown tables of the analysis, and the spans when there are any."""
    from forensics.report.document import to_markdown

    return to_markdown(trace_document(result, top)) + "\n"


def _span_rows(report: SpanReport) -> tuple[list[str], list[list[str]], list[str]]:
    """The span statistics table and one line per slow span (shared by text and markdown)."""
    from forensics.types.spans import explain

    def ms(x: float) -> str:
        return "-" if math.isnan(x) else f"{x * 1e3:.3f}"

    header = ["span", "count", "P50 ms", "P90 ms", "P99 ms", "P99.9 ms", "max ms", "unmatched start/end"]
    rows = [
        [
            s.name,
            str(s.count),
            ms(s.p50),
            ms(s.p90),
            ms(s.p99),
            ms(s.p999),
            ms(s.max),
            f"{s.unmatched_starts}/{s.unmatched_ends}",
        ]
        for s in report.stats
    ]
    lines = [explain(b) for b in report.slow] + [f"note: {n}" for n in report.notes]
    return header, rows, lines


def span_text(report: SpanReport | None) -> str:
    """The span section of the text output."""
    if report is None:
        return ""
    header, rows, lines = _span_rows(report)
    out = ["", "Spans (nearest-rank percentiles)", "  ".join(header)]
    out += ["  ".join(r) for r in rows]
    out += ["", "Slow spans:"] + [f"- {line}" for line in lines]
    return "\n".join(out) + "\n"


def span_sections(report: SpanReport | None) -> tuple[Block, ...]:
    """The span section: statistics and one line per slow span (none without a span analysis)."""
    if report is None:
        return ()
    from forensics.report.document import BulletList, Section, Table

    header, rows, lines = _span_rows(report)
    slow = Section("Slow spans", (BulletList(tuple(lines)),) if lines else ())
    return (Section("Spans", (Table(tuple(header), tuple(tuple(r) for r in rows)), slow)),)


@dataclass(frozen=True)
class TraceRenderer:
    """``kforensic trace``: the tables (``top`` rows), the spans, then the incident; or kforensic.trace JSON.

    With ``one_task`` (``--task``) the JSON holds every row of that task's tables.
    """

    top: int
    one_task: bool = False

    def text(self, result: TraceResult, to: Destination) -> str:
        tables = render_text(
            result.analysis,
            result.parse,
            result.source,
            self.top,
            to.color,
            result.notes,
            result.syscalls,
            result.events,
        )
        incident = IncidentRenderer().text(result.incident, to)
        return tables + span_text(result.spans) + "\n" + incident

    def markdown(self, result: TraceResult, to: Destination) -> str:
        return render_markdown(result, self.top) + render(
            IncidentRenderer(), result.incident, OutputFormat.MD, to.output
        )

    def json(self, result: TraceResult, to: Destination) -> str:
        import json  # here: the text format does not need it (~2 ms of start-up)

        from forensics.report.trace_json import trace_document as trace_json

        document = trace_json(result, None if self.one_task else self.top)
        return json.dumps(document, indent=1, ensure_ascii=False) + "\n"

    def html(self, result: TraceResult, to: Destination) -> str:
        from forensics.report.html import document_page

        return document_page(trace_document(result, self.top), result.incident)


def _cpu_path(wait: Wait) -> str:
    """The CPUs a wait was on, in order: where it was queued, where the moves read took it, where it ran
    (``CPU0->CPU1->CPU0``; a CPU repeated in a row once)."""
    cpus = [wait.queued_cpu, *(m.to_cpu for m in wait.moves), wait.span.cpu]
    return "->".join(f"CPU{c}" for i, c in enumerate(cpus) if i == 0 or c != cpus[i - 1])


def _behind_cell(wait: Wait) -> str:
    """Whom the task table says a wait was spent behind: the task that ran at least half of it (Wait.culprit);
    "unknown" when who ran in most of it is not known (the wait began before what the trace shows, or its start is
    older than the runs kept); else "several" (no one task ran half of it)."""
    top = wait.culprit()
    if top is not None:
        return top.comm
    return "unknown" if wait.unseen >= wait.span.duration / 2 or not wait.behind else "several"
