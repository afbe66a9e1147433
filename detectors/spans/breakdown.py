"""Why a span was slow: its thread's time split into running, IRQ, preempted, runnable and blocked, with evidence.

The kernel events are the columns of :class:`KernelTable` (the same rows the
scheduling engine reads: ``sched_switch``, wakeups, IRQ and softirq entry/exit,
plus syscall entry/exit rows when the trace has them).  For one span
``[t0, t1]`` of thread ``tid``:

- **running**: between its switch-in and switch-out, minus the IRQ and softirq
  handlers that ran on its CPU meanwhile (those are **irq**);
- **preempted**: switched out while runnable (``prev_state`` R), until switched
  in again; the task switched in at the preemption is named (TID, comm, prio);
- **blocked**: switched out in S, D, ..., until its wakeup; the waker is the
  task current on the waking CPU, or the IRQ/softirq running there; while the
  waker was itself blocked during the wait, its own waker is followed (the
  critical path of Trace Compass, three levels deep);
- **runnable**: woken, waiting for a CPU until the switch-in;
- **migrations**: switch-ins on another CPU than the previous run.

Every part cites the events that bound it.
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np

from forensics.model import NotAvailable
from forensics.types.spans import IRQ_ENTRY, SWITCH, WAKES, Breakdown, KernelTable, Part, Ref, Span
from forensics.types.trace import prio_known

CHAIN_DEPTH = 3  # waker levels followed


def _known(prio: int) -> int | None:
    """A prio the kernel trace printed, or None (its sched_switch line printed none: unknown, never a number)."""
    return prio if prio_known(prio) else None


def _prio(prio: object) -> str:
    return str(prio) if isinstance(prio, int) and prio_known(prio) else "unknown"


def _who(t: KernelTable, tid: int | None, at: float) -> str:
    """The task named as the trace named it at time ``at`` (a thread that exec'd is named by its name then)."""
    if tid is None:
        return "an unknown task"
    if tid == 0:
        return "the idle task"
    return f"{t.name_at(tid, at)} (TID {tid})"


_HEADER = re.compile(r"^\s*(?P<comm>.+)-(?P<pid>\d+)\s+(?:\(\s*\S+\)\s+)?\[\d+\]\s+(?P<flags>[^\s]{4,7})\s+\d")


# The context letter of ftrace's latency flags (kernel/trace/trace_output.c, trace_print_lat_fmt) and what it says.
_CONTEXTS = {".": "", "s": "a softirq", "h": "a hardirq", "H": "a hardirq", "z": "an NMI", "Z": "an NMI"}

_IRQ_NAME = re.compile(r"\bname=(\S+)")


def _meanwhile(t: KernelTable, cpu: int, start: float, end: float) -> str:
    """``; ran meanwhile on CPUn: comm (TID t) prio p x ms, ...`` (the three that ran longest)."""
    ran = t.ran_between(cpu, start, end) if cpu >= 0 else []
    if not ran:
        return ""
    return f"; ran meanwhile on CPU{cpu}: " + ", ".join(
        f"{_who(t, tid, start)} prio {_prio(prio)} {secs * 1e3:.3f} ms" for tid, prio, secs in ran[:3]
    )


def _irq_label(t: KernelTable, row: int) -> str:
    """``IRQ 4`` or ``softirq 7``; an x86 vector event (stored as IRQ -vector, as in ftrace text) is ``vector 236``."""
    if t.kind[row] != IRQ_ENTRY:
        return f"softirq {int(t.pid[row])}"
    number = int(t.pid[row])
    return f"IRQ {number}" if number >= 0 else f"vector {-number}"


def _waker(t: KernelTable, wake_row: int) -> tuple[str, int | None, tuple[Ref, ...]]:
    """Who woke: the IRQ/softirq open on the waking CPU, else the task running there.

    A text trace's line header names the task current when the wakeup was
    traced, and its latency flags (the third: ``h`` hardirq, ``s`` softirq,
    ``H`` a hardirq inside a softirq, ``z``/``Z`` NMI, ``.`` task context) say
    which context woke: that is read first, and the table's open handler is
    named only when the flags say that kind of context.  The table's pairing
    of entries and exits can be wrong where the trace began between an entry
    and its exit (an exit event enabled after the entry's): the line cannot
    (review 11 #1: one unpaired ``softirq_entry`` named "softirq 9" as the
    waker of every later wakeup on its CPU, whose lines said ``d..2.``).
    """
    cpu = int(t.cpu[wake_row])
    at = float(t.ts[wake_row])
    m = _HEADER.match(t.ref(wake_row).text)
    context = m.group("flags")[2] if m and len(m.group("flags")) > 2 else ""
    if m and context in _CONTEXTS:
        comm, pid = m.group("comm"), int(m.group("pid"))
        if context == ".":
            return _who(t, pid, at), pid, ()
        irq = t.irq_at(cpu, wake_row)
        if irq is not None and (t.kind[irq] == IRQ_ENTRY) == (context != "s"):
            return f"{_irq_label(t, irq)} on CPU{cpu}", None, (t.ref(irq),)
        return f"{_CONTEXTS[context]} on CPU{cpu} (interrupting {comm}-{pid})", None, ()
    irq = t.irq_at(cpu, wake_row)
    if irq is not None:
        return f"{_irq_label(t, irq)} on CPU{cpu}", None, (t.ref(irq),)
    cur = t.current(cpu, at)
    return _who(t, cur, at), cur, ()


def _chain(t: KernelTable, waker: int | None, t0: float, t1: float, depth: int) -> list[str]:
    """While ``waker`` was itself blocked within [t0, t1]: how long, and what woke it (recursively, the longest)."""
    if waker is None or waker == 0 or depth <= 0:
        return []
    rows = t.thread_rows(waker)
    ts = t.ts[rows]
    sel = rows[(ts >= t0) & (ts <= t1)]
    sleeps: list[tuple[float, int, int | None]] = []  # (seconds, switch-out row, wake or switch-in row)
    out_at = None
    for r in sel.tolist():
        if t.kind[r] == SWITCH and t.pid[r] == waker and t.state[r] != ord("R"):
            out_at = r
        elif out_at is not None and (t.kind[r] in WAKES or (t.kind[r] == SWITCH and t.next_pid[r] == waker)):
            sleeps.append((float(t.ts[r] - t.ts[out_at]), out_at, r))
            out_at = None
    if not sleeps:
        return []
    total = sum(s for s, _o, _r in sleeps)
    secs, o, r = max(sleeps)
    state = chr(int(t.state[o]))
    who, tid = "its switch-in (the wakeup was not traced: woken from a CPU outside the trace?)", None
    if r is not None and t.kind[r] in WAKES:
        who, tid, _refs = _waker(t, r)
    line = (
        f"{_who(t, waker, t0)} was itself blocked {len(sleeps)} time(s), {total * 1e3:.3f} ms in all, during the wait; "
        f"the longest: {state} {secs * 1e3:.3f} ms from {t.ts[o]:.6f} ({t.ref(o).where}) until {who}"
        f" at {t.ts[r]:.6f} ({t.ref(r).where})"
    )
    return [line, *_chain(t, tid, float(t.ts[o]), float(t.ts[r]), depth - 1)]


def _state_at_start(
    t: KernelTable, tid: int, t0: float, before: np.ndarray, inside: np.ndarray
) -> tuple[str, float, int, int | None, tuple[Ref, ...], dict[str, object]]:
    """The thread's state at the span's start, from its last event before it: (what, since, cpu, by, cite, extra)."""
    what, cpu = "unknown", -1
    by: int | None = None
    cite: tuple[Ref, ...] = ()
    extra: dict[str, object] = {}
    if len(before):
        r = int(before[-1])
        cite = (t.ref(r),)
        cpu = int(t.cpu[r])
        if t.kind[r] == SWITCH and t.next_pid[r] == tid:
            what = "running"
        elif t.kind[r] == SWITCH:
            st = chr(int(t.state[r]))
            if st == "R":
                what, by = "preempted", int(t.next_pid[r])
                extra = {"by_prio": _known(int(t.next_prio[r]))}
            else:
                what = "blocked"
                extra = {"state": st}
        else:
            what = "runnable"
    elif len(inside) and t.kind[int(inside[0])] == SWITCH and t.pid[int(inside[0])] == tid:
        what, cpu = "running", int(t.cpu[int(inside[0])])
    return what, t0, cpu, by, cite, extra


def _unknown_in(parts: list[Part], gaps: list[tuple[float, float, str]], t0: float, t1: float) -> list[Part]:
    """``parts`` with the times of ``gaps`` (from, to, what) cut out of them and said unknown: what the thread did
    while a CPU's events were lost (it may have run there) or the recording had a hole is not in the trace, so no
    state is given for it ("blocked in D" was the absence of events, review 7 F)."""
    cuts = sorted((max(a, t0), min(b, t1), said) for a, b, said in gaps)
    out: list[Part] = []
    for p in parts:
        pos = p.start
        for a, b, _said in cuts:
            if b <= pos or a >= p.end:
                continue
            if a > pos:
                out.append(replace(p, start=pos, end=a))
            pos = max(pos, b)
        if pos < p.end:
            out.append(replace(p, start=pos, end=p.end))
    merged: list[tuple[float, float, list[str]]] = []  # overlapping gaps (a loss inside a hole) said once
    for a, b, said in cuts:
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]), [*merged[-1][2], said])
        else:
            merged.append((a, b, [said]))
    out += [Part("unknown", a, b, -1, "; ".join(said), ()) for a, b, said in merged]
    return sorted(out, key=lambda p: p.start)


def breakdown(t: KernelTable, span: Span) -> Breakdown:
    """The parts of ``span`` (see the module docstring)."""
    tid, t0, t1 = span.tid, span.start, span.end
    rows = t.thread_rows(tid)
    ts = t.ts[rows]
    before = rows[ts < t0]
    inside = rows[(ts >= t0) & (ts <= t1)]
    parts: list[Part] = []
    what, since, cpu, by, cite, extra = _state_at_start(t, tid, t0, before, inside)
    migrations = 0
    last_cpu = cpu if what == "running" else -1
    cpus = {cpu} if cpu >= 0 else set()

    def close(end: float, end_refs: tuple[Ref, ...]) -> None:
        if end <= since and (what != "unknown" or end < t1):  # nothing to say of no time (but of a whole unknown span)
            return
        refs = cite + end_refs
        start = max(since, t0)
        if what == "running" and cpu >= 0:
            pos = start
            for irq_start, irq_end, e, x in t.irqs_between(cpu, start, end):
                a, b = max(irq_start, start), min(irq_end, end)
                if a > pos:
                    parts.append(Part("running", pos, a, cpu, f"on CPU{cpu}", refs))
                entry = t.ref(e)
                named = _IRQ_NAME.search(entry.text)
                label = _irq_label(t, e) + (f" ({named.group(1)})" if named else "")
                parts.append(Part("irq", a, b, cpu, f"{label} on CPU{cpu}", (entry, t.ref(x))))
                pos = b
            if end > pos:
                parts.append(Part("running", pos, end, cpu, f"on CPU{cpu}", refs))
            return
        detail = {
            "unknown": "the kernel trace does not say (no event of the thread before)",
            "runnable": "woken, waiting for a CPU" + _meanwhile(t, cpu, start, end),
            "preempted": f"preempted by {_who(t, by, start)}"
            + (f" prio {_prio(extra['by_prio'])}" if "by_prio" in extra else "")
            + _meanwhile(t, cpu, start, end),
            "blocked": f"blocked in {extra.get('state', '?')}",
        }[what]
        parts.append(
            Part(
                what,
                start,
                end,
                cpu,
                detail,
                refs,
                by_tid=by,
                by_comm=t.name_at(by, start) if by else "",
                by_prio=extra.get("by_prio") if isinstance(extra.get("by_prio"), int) else None,  # type: ignore[arg-type]
                by_policy=t.policy(by) if by else None,
                state=str(extra.get("state", "")),
                syscall=extra.get("syscall") if isinstance(extra.get("syscall"), str | NotAvailable) else None,  # type: ignore[arg-type]
                chain=tuple(extra.get("chain", ())),  # type: ignore[arg-type]
            )
        )

    for r in inside.tolist():
        ev_ts = float(t.ts[r])
        ref = t.ref(r)
        if t.kind[r] == SWITCH and t.next_pid[r] == tid:
            close(ev_ts, (ref,))
            new_cpu = int(t.cpu[r])
            if last_cpu >= 0 and new_cpu != last_cpu:
                migrations += 1
            last_cpu = new_cpu
            cpus.add(new_cpu)
            what, since, cpu, by, cite, extra = "running", ev_ts, new_cpu, None, (ref,), {}
        elif t.kind[r] == SWITCH:
            close(ev_ts, (ref,))
            st = chr(int(t.state[r]))
            cpu = int(t.cpu[r])
            if st == "R":
                what, by, extra = "preempted", int(t.next_pid[r]), {"by_prio": _known(int(t.next_prio[r]))}
            else:
                sc = t.syscall_at(r) if t.has_syscalls else None
                syscall: str | NotAvailable = (
                    sc[0]
                    if sc
                    else "none"
                    if t.has_syscalls
                    else NotAvailable("the kernel trace has no syscall events")
                )
                what, by, extra = "blocked", None, {"state": st, "syscall": syscall}
                if sc:
                    cite = (ref, sc[1])
                    since = ev_ts
                    continue
            since, cite = ev_ts, (ref,)
        elif what == "blocked":  # the wakeup
            who, waker, wrefs = _waker(t, r)
            chain = _chain(t, waker, since, ev_ts, CHAIN_DEPTH)
            extra = {**extra, "chain": chain}
            by = waker
            blocked_state = extra.get("state", "?")
            syscall_text = extra.get("syscall")
            sys_part = f" in {syscall_text}" if isinstance(syscall_text, str) and syscall_text != "none" else ""
            parts_before = len(parts)
            close(ev_ts, (ref, *wrefs))
            if len(parts) > parts_before:
                p = parts[-1]
                parts[-1] = Part(
                    p.what,
                    p.start,
                    p.end,
                    p.cpu,
                    f"blocked in {blocked_state}{sys_part}, woken by {who}",
                    p.refs,
                    by_tid=waker,
                    by_comm=t.name_at(waker, ev_ts) if waker else who,
                    by_policy=t.policy(waker) if waker else None,
                    state=p.state,
                    syscall=p.syscall,
                    chain=tuple(chain),
                )
            what, since, cite, by, extra = "runnable", ev_ts, (ref,), None, {}
    close(t1, ())
    gaps = [(a, b, said) for a, b, said in t.gaps if a < t1 and b > t0]
    if gaps:
        parts = _unknown_in(parts, gaps, t0, t1)
    totals: dict[str, float] = {}
    for p in parts:
        totals[p.what] = totals.get(p.what, 0.0) + p.duration
    note = ""
    if len(t.lost_ts) and bool(np.any((t.lost_ts >= t0) & (t.lost_ts <= t1))):
        note = "events were lost during this span: the breakdown is incomplete"
    if not len(before) and not len(inside):
        note = "the kernel trace has no event of this thread around the span"
    if gaps:
        note = "unknown: " + "; ".join(said for _a, _b, said in gaps)
    order = ("running", "irq", "preempted", "runnable", "blocked", "unknown")
    return Breakdown(
        span,
        tuple((k, totals[k]) for k in order if k in totals),
        tuple(parts),
        migrations,
        tuple(sorted(cpus)),
        note,
    )
