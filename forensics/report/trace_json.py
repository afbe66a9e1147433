"""The ``kforensic.trace/1`` JSON document of a trace analysis (it was ``detectors/sched/digest.py``).

Times are seconds on the trace clock (``ts``); an LTTng session's events are cited as its evidence cites them
(``event``: stream file, 1-based number, packet, byte offset, time as babeltrace2 prints it), a text trace's by
``line``; durations are milliseconds
rounded to the microsecond (``*_ms``) so the document stays small and the same
trace in different text layouts gives identical numbers.  Figures the trace
cannot give are ``{"not_available": reason}``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from forensics.model import NotAvailable, StreamEvent
from forensics.types.sched import (
    LOSSES_SHOWN,
    Bucket,
    EventRef,
    IntervalStats,
    LossGap,
    ParseSummary,
    Preemptor,
    Span,
    TaskStats,
    TraceAnalysis,
    Wait,
)
from forensics.types.syscalls import SyscallLatency
from forensics.types.trace import prio_known
from forensics.types.trace_result import TraceResult

TRACE_SCHEMA = "kforensic.trace/1"

JsonDict = dict[str, Any]


def ms(seconds: float) -> float:
    """Seconds as milliseconds, rounded to the microsecond."""
    return round(seconds * 1e3, 3)


def _na(value: object) -> object:
    return {"not_available": value.reason} if isinstance(value, NotAvailable) else value


#: An LTTng session's event at a ``line_no`` (TraceResult.events); None for a text trace.
Named = Callable[[int], StreamEvent | None] | None


def _at(ref: EventRef, named: Named, key: str = "line") -> JsonDict:
    """Where ``ref`` stands: ``{key: line}`` in a text trace; in an LTTng session ``{key with "event" for "line":
    {stream, number, packet, byte_offset, timestamp_ns, cycles, clock, clock_origin}}`` (or null: no event)."""
    if named is None:
        return {key: ref.line_no}
    from forensics.serialize import stream_event_to_dict

    at = named(ref.line_no) if ref.line_no > 0 else None
    return {key.replace("line", "event"): None if at is None else stream_event_to_dict(at)}


def _at_or_none(ref: EventRef | None, named: Named, key: str) -> JsonDict:
    """:func:`_at`, or its key with null when there is no event."""
    if ref is not None:
        return _at(ref, named, key)
    return {key if named is None else key.replace("line", "event"): None}


def _ref(ref: EventRef, named: Named) -> JsonDict:
    return {**_at(ref, named), "ts": ref.ts, "cpu": ref.cpu}


def span_to_dict(span: Span | None, named: Named = None) -> JsonDict | None:
    """An interval: duration, start, CPU and the lines that open and close it."""
    if span is None:
        return None
    return {
        "ms": ms(span.duration),
        "start": span.start,
        "cpu": span.cpu,
        "from": _ref(span.begin, named),
        "to": _ref(span.end, named),
    }


def intervals_to_dict(fig: IntervalStats, named: Named = None) -> JsonDict:
    """Count, total, mean and worst of a family of intervals."""
    worst = span_to_dict(fig.worst, named)
    if worst is not None and fig.worst_open:  # a run still open where the window or the recording ends: a floor
        worst |= {"lower_bound": True, "open_at": fig.worst_open}
    # intervals still open where they were counted to (waits closed at the window's or the recording's end): the
    # total and the mean are floors
    floor = {"open": fig.open, "lower_bound": True} if fig.open else {}
    return {"count": fig.n, "total_ms": ms(fig.total), "mean_ms": ms(fig.mean), "worst": worst} | floor


def _prio(prio: int) -> int | JsonDict:
    """A prio as traced, or why not: PRIO_UNKNOWN is never written as a number."""
    return prio if prio_known(prio) else {"not_available": "no line of the task prints its prio"}


def wait_to_dict(wait: Wait | None, named: Named = None) -> JsonDict | None:
    """A wait and who ran meanwhile."""
    if wait is None:
        return None
    return (
        {
            **(span_to_dict(wait.span, named) or {}),
            "source": wait.source,
            # each with its prio then, from its own events ({"not_available"} when they printed none)
            "behind": [
                {"pid": b.pid, "comm": b.comm, "ms": ms(b.seconds), "prio": _prio(b.prio), "cpu": b.cpu}
                for b in wait.behind
            ],
            "unseen_ms": ms(wait.unseen),
        }
        | (
            # the tasks that ran meanwhile past those in "behind" (a task once per CPU), not listed (ue23 #6)
            {"behind_more": {"tasks": wait.more, "ms": ms(wait.more_seconds)}} if wait.more else {}
        )
        | (
            # still waiting where the window ("window") or the recording ("recording") ends, not switched in:
            # "ms" is a lower bound (a finding's fact says the same: "lower_bound": true)
            {"lower_bound": True, "open_at": wait.open_at} if wait.lower_bound else {}
        )
        | (
            # queued on one CPU, switched in on another at a time the trace does not show: "behind" is context
            {"queued_cpu": wait.queued_cpu, "moved": wait.moved} if wait.moved else {}
        )
        | (
            # moved by sched_migrate_task events: each cited; "behind" names who ran on each CPU while it waited there
            {
                "moves": [
                    {"at": m.ts, "from_cpu": m.from_cpu, "to_cpu": m.to_cpu, "event": _ref(m.ref, named)}
                    for m in wait.moves
                ]
            }
            if wait.moves
            else {}
        )
        | (
            # a task's wait: its prio then (its class decides what it was promised) and the event it was read from,
            # cited as every other event of the document (a line of a text trace, an LTTng session's event locator)
            {"prio": wait.prio, "prio_from": _at(wait.prio_ref, named)}
            if prio_known(wait.prio) and wait.prio_ref is not None
            else {}
        )
    )


def _preemptors(by: tuple[Preemptor, ...]) -> list[JsonDict]:
    """Tasks switched in for a task, with how often."""
    return [{"pid": p.pid, "comm": p.comm, "count": p.times} for p in by]


def task_to_dict(t: TaskStats, named: Named = None) -> JsonDict:
    """Everything measured about one task."""
    return (
        {
            "pid": t.pid,
            "comm": t.comm,
            "prio": _prio(t.prio),
            "rt": t.is_rt,
            "runtime_ms": ms(t.runtime),
            "runs": intervals_to_dict(t.runs, named),
            "hog_runs": t.hog_runs,
            "wakeup_latency": intervals_to_dict(t.wakeup, named),
            "worst_wakeup": wait_to_dict(t.worst_wakeup, named),
            "preempt_wait": intervals_to_dict(t.preempt_wait, named),
            "worst_preempt_wait": wait_to_dict(t.worst_preempt_wait, named),
            "blocked": {
                s.state: {"count": s.n, "total_ms": ms(s.total), "worst": span_to_dict(s.worst, named)}
                for s in t.blocked
            },
            "preempted_by": _preemptors(t.preempted_by),
            # its runnable switch-outs that were RT throttling's (idle or a CFS task next), not preemptions
            "throttled_for": _preemptors(t.throttled_for),
            "delay_caused_ms": ms(t.delay_caused),
            "victims": [
                {"pid": v.pid, "comm": v.comm, "ms": ms(v.seconds), "waits": v.waits, "worst_ms": ms(v.worst)}
                # a wait counted still open where the window or the recording ends: "ms" and "worst_ms" are floors
                | ({"lower_bound": True, "open_at": v.open_at} if v.open_at else {})
                for v in t.victims
            ],
        }
        | (
            # the victims beyond those listed: how many and their time (only when there are some)
            {
                "victims_more": {"count": t.more_victims, "ms": ms(t.more_victims_seconds)}
                | ({"lower_bound": True, "open_at": t.more_victims_open} if t.more_victims_open else {})
            }
            if t.more_victims
            else {}
        )
        | (
            # only when some wakeup's switch-in could not be seen (documents of whole traces are as they were)
            {"wakeups_unknown": {"count": t.wakeups_unknown, "not_available": t.wakeup_unknown_why.reason}}
            if t.wakeup_unknown_why
            else {}
        )
    )


def bucket_to_dict(b: Bucket) -> JsonDict:
    """One bucket of the digest (compact keys: it is meant to be read whole)."""
    out: JsonDict = {
        "t": round(b.start, 6),
        "cpu": b.cpu,
        "top": [[t.comm, t.pid, ms(t.runtime)] for t in b.top],
        "irq_ms": ms(b.irq_time),
        "softirq_ms": ms(b.softirq_time),
    }
    if b.worst_latency is not None:
        out["worst_latency"] = [b.worst_latency_comm, b.worst_latency_pid, ms(b.worst_latency)]
    return out


def parse_to_dict(p: ParseSummary) -> JsonDict:
    """What the reader saw and skipped."""
    return {
        "lines": p.lines,
        "events": p.events,
        "events_analysed": p.used,
        "comment_lines": p.comments,
        "malformed_lines": p.malformed,
        "malformed_examples": [{"line": n, "text": text} for n, text in p.malformed_examples],
        "skipped_events": dict(p.unknown),
        # read for something else than this analysis (an LTTng session's syscalls, statedump, user-space events;
        # sched_wakeup where sched_waking is measured): with events_analysed and skipped_events, every event
        "not_analysed_events": dict(p.aside),
        "layout": p.layout,
        "tracer": p.tracer,
    }


def loss_to_dict(g: LossGap, named: Named = None) -> JsonDict:
    """One loss: its CPU, the events the marker says were lost (null: it does not say), the time it covers and
    the events that bound it (null: the CPU had none before it, or never reported again); a UST stream's, its own
    packets' window and the packet that tells it (``packet``)."""
    k = g.packet
    if k is not None:  # no event of the CPU is analysed: the window the packets give, the packet cited
        return {"cpu": g.cpu, "events": g.events or None, "from": k.start, "to": k.end, "ms": ms(k.end - k.start),
                "markers": g.markers, "packet": k.where}  # fmt: skip
    return {
        "cpu": g.cpu,
        "events": g.events or None,
        "from": g.before.ts if g.before is not None else None,
        **_at_or_none(g.before, named, "from_line"),
        "to": g.after.ts if g.after is not None else None,
        **_at_or_none(g.after, named, "to_line"),
        "ms": ms(g.end - g.start) if g.before is not None and g.after is not None else None,
        "markers": g.markers,  # the lost-events markers added up in it
    }


def _counted(key: str, items: tuple[object, ...]) -> JsonDict:
    """How many ``items`` there were, when there were any (``key`` lists the first LOSSES_SHOWN): ``KEY_total`` and
    ``KEY_truncated``, so a cut list says so (a list with none is unchanged: no keys)."""
    return {f"{key}_total": len(items), f"{key}_truncated": len(items) > LOSSES_SHOWN} if items else {}


def analysis_to_dict(a: TraceAnalysis, top: int | None = None, named: Named = None) -> JsonDict:
    """The analysis as JSON (``top`` limits the task list to the busiest tasks; ``named``: an LTTng session's
    events, cited as its evidence cites them instead of by line)."""
    cov = a.coverage
    window = a.window
    return {
        "window": _na(window) if isinstance(window, NotAvailable) else {"start": window[0], "end": window[1]},
        "latency_source": _na(a.latency_source),
        "thresholds_ms": {k: ms(v) for k, v in a.thresholds._asdict().items()},
        "coverage": {
            "cpus_declared": _na(cov.cpus_declared),
            "cpus_seen": list(cov.cpus_seen),
            "common_start": _na(cov.common_start),
            "common_end": _na(cov.common_end),
            "lost_markers": cov.lost_markers,
            "lost_events": _na(NotAvailable(cov.lost_unknown)) if cov.lost_unknown else cov.lost_events,
            "note": cov.note,
            "stopped": [{"cpu": r.cpu, "last_ts": r.ts, **_at(r, named)} for r in cov.stopped],
            "clock": {
                "steps": a.clock.steps,
                "back": a.clock.back,
                "reversed": a.clock.reversed(),
                "examples": [
                    {
                        "cpu": x.after.cpu,
                        **_at(x.after, named),
                        "ts": x.after.ts,
                        **_at(x.before, named, "after_line"),
                        "after_ts": x.before.ts,
                    }
                    for x in a.clock.examples
                ],
                "disputed": [{"cpu": c, "from": lo, "to": hi} for c, lo, hi in a.clock.disputed[:LOSSES_SHOWN]],
                **_counted("disputed", a.clock.disputed),
                "jumps": [
                    {
                        **_at(j.before, named, "from_line"),
                        "from": j.before.ts,
                        **_at(j.after, named, "to_line"),
                        "to": j.after.ts,
                    }
                    for j in a.clock.jumps[:LOSSES_SHOWN]
                ],
                **_counted("jumps", a.clock.jumps),
                # Each loss (a lost-events marker) as the time it covers on its CPU: from the CPU's last event
                # before it to its first after (null: none), each cited; figures overlapping one are unknown.
                "losses": [loss_to_dict(g, named) for g in a.clock.losses[:LOSSES_SHOWN]],
                **_counted("losses", a.clock.losses),
            },
        },
        "cpus": [
            {
                "cpu": c.cpu,
                "first_ts": _na(c.first_ts),
                "last_ts": _na(c.last_ts),
                "busy_ms": _na(c.busy) if isinstance(c.busy, NotAvailable) else ms(c.busy),
                "idle_ms": _na(c.idle) if isinstance(c.idle, NotAvailable) else ms(c.idle),
                "irq_ms": ms(c.irq_time),
                "softirq_ms": ms(c.softirq_time),
                "switches": c.switches,
            }
            for c in a.cpus
        ],
        "tasks": [task_to_dict(t, named) for t in (a.tasks if top is None else a.tasks[:top])],
        "irqs": [{"irq": i.irq, "name": i.name, **intervals_to_dict(i.durations, named)} for i in a.irqs],
        "softirqs": [
            {
                "vec": s.vec,
                "name": s.name,
                "durations": intervals_to_dict(s.durations, named),
                "raise_to_entry": intervals_to_dict(s.raise_latency, named),
                "worst_raise_wait": wait_to_dict(s.worst_raise_wait, named),
            }
            for s in a.softirqs
        ],
        "workqueue": [{"function": w.function, **intervals_to_dict(w.durations, named)} for w in a.works],
        "offtime": [
            {
                "what": o.what,
                "source": _na(o.source),
                "intervals": _na(o.intervals)
                if isinstance(o.intervals, NotAvailable)
                else intervals_to_dict(o.intervals, named),
                "worst": [span_to_dict(s, named) for s in o.worst],
            }
            for o in a.offtimes
        ],
        "bucket_ms": ms(a.bucket_seconds) if a.bucket_seconds else None,
        "buckets": [bucket_to_dict(b) for b in a.buckets],
    }


def syscalls_to_dict(t: SyscallLatency, named: Named) -> JsonDict:
    """An LTTng kernel session's syscall latency: every syscall name, longest call first, and what was read but
    not measured (see forensics/types/syscalls.py); each worst call's entry and exit events as the evidence cites
    events (``named``: the session's events)."""
    from forensics.serialize import stream_event_to_dict
    from forensics.types.syscalls import name_calls

    events = name_calls(t.stats, named)

    def event(position: int) -> JsonDict | None:
        se = events.get(position)
        return None if se is None else stream_event_to_dict(se)

    return {
        "paired": t.paired,
        "open_at_end": t.open_at_end,
        "began_inside": t.began_inside,
        "exits_after_exit": t.unpaired_exits,
        "entries_after_entry": t.unpaired_entries,
        "across_lost_events": t.across_loss,
        "mismatched_names": t.mismatched,
        "thread_unknown_events": t.unknown_thread,
        "thread_exits": t.thread_exits,
        "syscalls": [
            {
                "name": st.name,
                "count": st.count,
                "total_ms": ms(st.total),
                "mean_ms": ms(st.mean),
                "worst": {
                    "ms": ms(st.worst.duration),
                    "tid": st.worst.tid if st.worst.tid >= 0 else {"not_available": "no sched_switch named it"},
                    "comm": st.worst.comm,
                    "cpu": st.worst.cpu,
                    "exit_cpu": st.worst.exit_cpu,
                    "start": st.worst.start,
                    "end": st.worst.end,
                    "entry": event(st.worst.entry_at),
                    "exit": event(st.worst.exit_at),
                },
            }
            for st in t.stats
        ],
    }


def trace_document(result: TraceResult, top: int | None) -> JsonDict:
    """The ``kforensic.trace/1`` document of one analysed trace (``top``: tasks listed, None for all)."""
    from forensics import __version__
    from forensics.report.spans_json import report_to_dict
    from forensics.serialize import incident_to_dict

    return {
        "schema": TRACE_SCHEMA,
        "tool_version": __version__,
        "input": {"source": result.source, "kind": result.kind, **(result.ctf or {})},
        "parse": parse_to_dict(result.parse),
        **analysis_to_dict(result.analysis, top=top, named=result.events),
        **(
            {"syscall_latency": syscalls_to_dict(result.syscalls, result.events)} if result.syscalls is not None else {}
        ),
        **({"spans": report_to_dict(result.spans)} if result.spans is not None else {}),
        "incident": incident_to_dict(result.incident),
    }
