"""Payload parsers of the trace events the analyses use, in the kernel's and trace-cmd's formats.

Each takes the header fields the line parser found and the payload text
(after ``event: ``), and returns a :class:`~collectors.trace_text.TraceEvent`;
a payload that is not what it should be raises ValueError or IndexError,
which the line parser counts as a malformed line.
"""

from __future__ import annotations

from forensics.types.trace import PLUGIN_STATE_LETTERS, PRIO_UNKNOWN, TraceEvent, make_event

_make = make_event
UNKNOWN = PRIO_UNKNOWN


def parse_switch(kind: int, ts: float, cpu: int, line_no: int, line: bytes, p: bytes) -> TraceEvent:
    """sched_switch in the kernel format or trace-cmd's plugin format."""
    if p.startswith(b"prev_comm="):
        f = p.split(b" ")
        if len(f) == 8:  # fast path: no spaces in either comm
            return _make(
                (
                    kind,
                    ts,
                    cpu,
                    line_no,
                    line,
                    int(f[1][9:]),
                    int(f[2][10:]),
                    f[0][10:],
                    f[3][11:],
                    int(f[6][9:]),
                    int(f[7][10:]),
                    f[5][10:],
                )
            )
        a = p.index(b" prev_pid=")
        c = p.index(b" prev_state=", a)
        d = p.index(b" ==> next_comm=", c)
        e = p.index(b" next_pid=", d)
        b = p.find(b" prev_prio=", a, c)
        g = p.find(b" next_prio=", e)
        # A format without the priorities (either): unknown, never 0 (a real-time priority).
        return _make(
            (
                kind,
                ts,
                cpu,
                line_no,
                line,
                int(p[a + 10 : b if b >= 0 else c]),
                int(p[b + 11 : c]) if b >= 0 else UNKNOWN,
                p[10:a],
                p[c + 12 : d],
                int(p[e + 10 : g] if g >= 0 else p[e + 10 :].split(b" ", 1)[0]),
                int(p[g + 11 :].split(b" ", 1)[0]) if g >= 0 else UNKNOWN,
                p[d + 15 : e],
            )
        )
    # Plugin format: "prev:pid [prio] STATE ==> next:pid [prio]"
    d = p.index(b" ==> ")
    left = p[:d]
    lb = left.rindex(b" [")
    rb = left.index(b"]", lb)
    state = left[rb + 1 :].strip()
    state = PLUGIN_STATE_LETTERS.get(state[:1], state[:1]) + state[1:]
    prev = left[:lb]
    pc = prev.rindex(b":")
    right = p[d + 5 :].strip()
    nb = right.rindex(b" [")
    nxt = right[:nb]
    nc = nxt.rindex(b":")
    return _make(
        (
            kind,
            ts,
            cpu,
            line_no,
            line,
            int(prev[pc + 1 :]),
            int(left[lb + 2 : rb]),
            prev[:pc],
            state,
            int(nxt[nc + 1 :]),
            int(right[nb + 2 : right.index(b"]", nb)]),
            nxt[:nc],
        )
    )


def pid_prio_comm(p: bytes) -> tuple[int, int, bytes]:
    """pid, prio and comm of ``comm=X pid=N prio=P ...`` or the plugin's ``X:N [P] ...``."""
    if p.startswith(b"comm="):
        a = p.index(b" pid=")
        b = p.index(b" ", a + 5)
        c = p.find(b" prio=", b - 1)
        # No prio= printed: unknown (PRIO_UNKNOWN), never 0, a real-time priority.
        prio = int(p[c + 6 : p.index(b" ", c + 6)] if p.find(b" ", c + 6) > 0 else p[c + 6 :]) if c >= 0 else UNKNOWN
        return int(p[a + 5 : b]), prio, p[5:a]
    lb = p.rindex(b" [")
    who = p[:lb]
    colon = who.rindex(b":")
    return int(who[colon + 1 :]), int(p[lb + 2 : p.index(b"]", lb)]), who[:colon]


def parse_migrate(ts: float, cpu: int, line_no: int, line: bytes, p: bytes) -> TraceEvent:
    """sched_migrate_task (``comm=C pid=N prio=P orig_cpu=O dest_cpu=D``): ``next_pid`` holds dest_cpu,
    ``next_prio`` orig_cpu.  The comm may hold spaces: its end is the last `` pid=``."""
    a = p.rindex(b" pid=")
    if not p.startswith(b"comm="):
        raise ValueError("not the kernel's sched_migrate_task format")
    f = p[a + 1 :].split(b" ")
    if len(f) != 4 or f[1][:5] != b"prio=" or f[2][:9] != b"orig_cpu=" or f[3][:9] != b"dest_cpu=":
        raise ValueError("not the kernel's sched_migrate_task format")
    return _make(
        (18, ts, cpu, line_no, line, int(f[0][4:]), int(f[1][5:]), p[5:a], b"", int(f[3][9:]), int(f[2][9:]), b"")
    )


def parse_wakeup(kind: int, ts: float, cpu: int, line_no: int, line: bytes, p: bytes) -> TraceEvent:
    """sched_waking/wakeup/wakeup_new; ``next_pid`` holds the target CPU (-1 when not printed).

    Old kernels print ``success=1`` before ``target_cpu`` (removed in v4.3,
    commit 0e2ef0a2a8d4 "sched: Remove the success argument of sched_wakeup");
    both are read by name.
    """
    pid, prio, comm = pid_prio_comm(p)
    t = p.rfind(b"target_cpu=")
    if t >= 0:
        target = int(p[t + 11 :].split(b" ", 1)[0])
    else:
        t = p.rfind(b"CPU:")
        target = int(p[t + 4 :].split(b" ", 1)[0]) if t >= 0 else -1
    return _make((kind, ts, cpu, line_no, line, pid, prio, comm, b"", target, 0, b""))


def parse_irq(kind: int, ts: float, cpu: int, line_no: int, line: bytes, p: bytes) -> TraceEvent:
    """irq_handler_entry/exit (``irq=N name=X``) and softirq_* (``vec=N [action=X]``)."""
    if kind <= 6:
        if p.startswith(b"vector="):  # irq_vectors:local_timer_entry/exit
            return _make((kind, ts, cpu, line_no, line, -int(p[7:]), 0, b"", b"local_timer", 0, 0, b""))
        sp = p.find(b" ")
        irq = int(p[4:sp] if sp > 0 else p[4:])
        name = p[sp + 6 :] if kind == 5 and sp > 0 else b""
        return _make((kind, ts, cpu, line_no, line, irq, 0, b"", name, 0, 0, b""))
    sp = p.find(b" ")
    vec = int(p[4:sp] if sp > 0 else p[4:])
    return _make((kind, ts, cpu, line_no, line, vec, 0, b"", b"", 0, 0, b""))


def parse_work(kind: int, ts: float, cpu: int, line_no: int, line: bytes, p: bytes) -> TraceEvent:
    """workqueue_execute_start/end: ``work struct W: function F`` (``pid`` unused, work in ``comm``)."""
    colon = p.index(b": ")
    work = p[:colon].rsplit(b" ", 1)[-1]
    function = p[colon + 2 :].removeprefix(b"function ").split(b" ", 1)[0]
    return _make((kind, ts, cpu, line_no, line, 0, 0, work, function, 0, 0, b""))
