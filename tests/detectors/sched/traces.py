"""Traces for the ``kforensic trace`` tests: the recorded ones, and a scenario written in every layout.

The scenario has exactly known figures (see :data:`EXPECTED`); :func:`write_scenario` prints it the
way tracefs, ``trace-cmd report`` (default, ``-l``, ``-N``) and ``perf script`` print events.
"""

from __future__ import annotations

import bisect
import gzip
import itertools
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

from collectors.trace_columns import BatchParser
from detectors.sched.engine import FastAnalyzer
from forensics.types.sched import TraceAnalysis
from forensics.types.trace import Kind, ParseCounts, TraceEvent

DATA = Path(__file__).resolve().parents[2] / "data" / "traces"
RECORDED = ("kf.ftrace.txt", "kf.tc-report.txt", "kf.tc-report-l.txt", "kf.tc-report-N.txt", "kf.perf-script.txt")


def recorded(name: str, tmp: Path) -> Path:
    """Decompress a recorded trace of tests/data/traces into ``tmp`` (evidence cites its lines)."""
    out = tmp / name
    if not out.exists():
        out.write_bytes(gzip.decompress((DATA / f"{name}.gz").read_bytes()))
    return out


class Ev(NamedTuple):
    """One scenario event: when, where, who is current, and what."""

    ts: float
    cpu: int
    comm: str
    pid: int
    event: str
    fields: tuple[Any, ...]


# Tasks: (comm, pid, prio)
IDLE0 = ("swapper/0", 0, 120)
IDLE1 = ("swapper/1", 0, 120)
RT = ("rt task", 200, 49)  # a comm with a space
VICTIM = ("victim", 300, 120)
SLEEPER = ("sleeper", 400, 120)
HOG = ("hog", 500, 120)


def _switch(ts: float, cpu: int, prev: tuple[str, int, int], state: str, nxt: tuple[str, int, int]) -> Ev:
    return Ev(ts, cpu, prev[0], prev[1], "sched_switch", (prev, state, nxt))


def _waking(ts: float, cpu: int, cur: tuple[str, int, int], who: tuple[str, int, int], target: int) -> list[Ev]:
    return [
        Ev(ts, cpu, cur[0], cur[1], "sched_waking", (who, target)),
        Ev(ts + 1e-6, cpu, cur[0], cur[1], "sched_wakeup", (who, target)),
    ]


SCENARIO: list[Ev] = sorted(
    [
        _switch(99.999000, 0, SLEEPER, "D", HOG),
        _switch(99.999500, 1, IDLE1, "R", VICTIM),
        *_waking(100.000500, 1, VICTIM, RT, 1),
        _switch(100.000510, 1, VICTIM, "R+", RT),
        Ev(100.001000, 1, RT[0], RT[1], "softirq_raise", (3, "NET_RX")),
        *_waking(100.002000, 1, RT, SLEEPER, 1),
        Ev(100.003000, 0, HOG[0], HOG[1], "irq_handler_entry", (24, "eth0")),
        Ev(100.003800, 0, HOG[0], HOG[1], "irq_handler_exit", (24,)),
        Ev(
            100.004000, 0, HOG[0], HOG[1], "sched_migrate_task", ()
        ),  # a move of a running task: counted (TraceAnalysis.migrations)
        _switch(100.007000, 0, HOG, "S", IDLE0),
        Ev(100.007100, 0, "kworker/0:1", 33, "workqueue_execute_start", ("vmstat_update",)),
        Ev(100.007300, 0, "kworker/0:1", 33, "workqueue_execute_end", ("vmstat_update",)),
        _switch(100.008510, 1, RT, "S", SLEEPER),
        Ev(100.008520, 1, SLEEPER[0], SLEEPER[1], "softirq_entry", (3, "NET_RX")),
        Ev(100.008550, 1, SLEEPER[0], SLEEPER[1], "softirq_exit", (3, "NET_RX")),
        _switch(100.008600, 1, SLEEPER, "S", VICTIM),
        _switch(100.009000, 1, VICTIM, "S", IDLE1),
        _switch(100.009500, 0, IDLE0, "R", HOG),
    ],
    key=lambda e: e.ts,
)


class Expected(NamedTuple):
    """The scenario's figures, in milliseconds."""

    rt_run: float = 8.000
    hog_run: float = 8.000
    sleeper_wakeup: float = 6.510
    sleeper_d: float = 3.000
    victim_preempt_wait: float = 8.090
    irq_eth0: float = 0.800
    net_rx_raise: float = 7.520
    net_rx_run: float = 0.030
    work: float = 0.200


EXPECTED = Expected()
LAYOUTS = (
    "ftrace",
    "ftrace-4",
    "ftrace-7",
    "ftrace-noflags",
    "ftrace-tgid",
    "tc",
    "tc-l",
    "tc-N",
    "tc-success",
    "perf",
)
# trace-cmd's sched_switch plugin prints prev_state with an old letter table (I -> W, Z -> X).
_OLD_LETTERS = {"I": "W", "Z": "X"}


def _kernel_payload(e: Ev, layout: str) -> str:
    if e.event == "sched_switch":
        (pc, pp, pr), state, (nc, np_, nr) = e.fields
        if layout in ("tc", "tc-l", "tc-success"):
            return f"{pc}:{pp} [{pr}] {_OLD_LETTERS.get(state, state)} ==> {nc}:{np_} [{nr}]"
        return (
            f"prev_comm={pc} prev_pid={pp} prev_prio={pr} prev_state={state} ==> "
            f"next_comm={nc} next_pid={np_} next_prio={nr}"
        )
    if e.event in ("sched_waking", "sched_wakeup", "sched_wakeup_new"):
        (c, p, r), target = e.fields
        if e.event == "sched_wakeup" and layout in ("tc", "tc-l"):
            return f"{c}:{p} [{r}] CPU:{target:03d}"
        if e.event == "sched_wakeup" and layout == "tc-success":
            return f"{c}:{p} [{r}] success=1 CPU:{target:03d}"
        return f"comm={c} pid={p} prio={r} target_cpu={target:03d}"
    if e.event == "irq_handler_entry":
        return f"irq={e.fields[0]} name={e.fields[1]}"
    if e.event == "irq_handler_exit":
        return f"irq={e.fields[0]} ret=handled"
    if e.event.startswith("softirq"):
        return f"vec={e.fields[0]} [action={e.fields[1]}]"
    if e.event.startswith("workqueue"):
        return f"work struct 00000000deadbeef: function {e.fields[0]}"
    return "comm=hog pid=500 prio=120 orig_cpu=0 dest_cpu=1"


_SYSTEM = {"sched": "sched", "irq_": "irq", "softirq": "irq", "workqueue": "workqueue"}


def format_event(e: Ev, layout: str) -> str:
    """One event as a line of the given layout."""
    payload = _kernel_payload(e, layout)
    comm = "<...>" if e.pid == 300 and layout == "ftrace" else e.comm  # the comm cache can miss
    flags = {"ftrace": "d..2.", "ftrace-4": "d..2", "ftrace-7": "dNh2..1", "ftrace-tgid": "d..2."}.get(layout, "")
    if layout.startswith("ftrace"):
        tgid = f" ({e.pid:>7})" if layout == "ftrace-tgid" else ""
        head = f"{comm:>16}-{e.pid:<7}{tgid} [{e.cpu:03d}] {flags + ' ' if flags else ''}"
        return f"{head}{e.ts:12.6f}: {e.event}: {payload}"
    if layout == "tc-l":
        return f"{comm[:8]:>8}-{e.pid:<5} {e.cpu}d..2. {e.ts:12.6f}: {e.event + ':':<21} {payload}"
    if layout.startswith("tc"):
        return f"{comm:>16}-{e.pid:<5} [{e.cpu:03d}] {e.ts:12.6f}: {e.event + ':':<21} {payload}"
    system = next(v for k, v in _SYSTEM.items() if e.event.startswith(k))
    return f"{comm:>16} {e.pid:>5} [{e.cpu:03d}] {e.ts:12.6f}: {system}:{e.event}: {payload}"


def scenario_text(layout: str, header: bool = True) -> str:
    """The scenario as the text of a trace file of the given layout."""
    lines: list[str] = []
    if header and layout.startswith("ftrace"):
        lines += ["# tracer: nop", "#", "# entries-in-buffer/entries-written: 21/21   #P:2", "#"]
    elif header and layout.startswith("tc"):
        lines.append("cpus=2")
    lines += [format_event(e, layout) for e in SCENARIO]
    return "\n".join(lines) + "\n"


def write_scenario(tmp: Path, layout: str) -> Path:
    """Write the scenario in ``layout`` to a file under ``tmp``."""
    path = tmp / f"scenario.{layout}.txt"
    path.write_text(scenario_text(layout))
    return path


def analyse_path(path: Path, chunk: int = 1 << 16, **options: Any) -> tuple[TraceAnalysis, ParseCounts]:
    """Parse and analyse a trace file in chunks as ``kforensic trace`` does; return (TraceAnalysis, ParseCounts).

    (The compiled reader and analysis; tests/detectors/sched/test_engine.py compares them with the
    reference SchedAnalyzer on the line parser's records.)
    """
    parser = BatchParser()
    analyzer = FastAnalyzer(**options)
    with path.open("rb") as f:
        while block := f.read(chunk):
            analyzer.feed(parser.feed_batch(block))
            if analyzer.done:
                break
    if not analyzer.done:
        analyzer.feed(parser.finish_batch())
    return analyzer.result(parser.counts), parser.counts


def busy_wait_text(switches: int, step: float = 0.2e-3, turns: int = 2, prio: int = 120) -> str:
    """A raw tracefs trace of 2 CPUs in which ``waiter`` (pid 700, kernel prio ``prio``: 130 is nice 10) waits on
    CPU0 while ``ping`` and ``pong`` (and with ``turns`` 3, ``pung``, past it ``task0``, ``task1`` ...; nice 0) take
    ``switches`` turns of ``step`` seconds in rotation, then runs: more turns than the analysis keeps
    (``rules.drops_run``) leave the wait's start unattributed."""
    waiter = ("waiter", 700, prio)
    named = [("ping", 710, 120), ("pong", 720, 120), ("pung", 730, 120)]
    rota = [*named, *((f"task{k}", 740 + k, 120) for k in range(turns - len(named)))][:turns]
    events = [
        _switch(9.9999, 0, IDLE0, "R", rota[0]),
        _switch(9.9999, 1, IDLE1, "R", SLEEPER),
        *_waking(10.0, 0, rota[0], waiter, 0),
    ]
    cur = rota[0]
    for k in range(1, switches + 1):
        other = rota[k % turns]
        events.append(_switch(10.0 + k * step, 0, cur, "R", other))
        cur = other
    end = 10.0 + (switches + 1) * step
    events += [_switch(end, 0, cur, "R", waiter), _switch(end, 1, SLEEPER, "S", IDLE1)]
    return "".join(format_event(e, "ftrace") + "\n" for e in sorted(events, key=lambda e: e.ts))


def softirq_behind_task_text() -> str:
    """A raw tracefs trace in which NET_RX is raised while ``hog`` runs on CPU0 and entered 14 ms later, with no
    switch between: who ran during that wait is the run still current on the CPU, not one the ring holds."""
    events = [
        _switch(9.999, 0, IDLE0, "R", HOG),
        _switch(9.999, 1, IDLE1, "R", SLEEPER),
        Ev(10.001, 0, HOG[0], HOG[1], "softirq_raise", (3, "NET_RX")),
        Ev(10.015, 0, HOG[0], HOG[1], "softirq_entry", (3, "NET_RX")),
        Ev(10.0151, 0, HOG[0], HOG[1], "softirq_exit", (3, "NET_RX")),
        _switch(10.02, 0, HOG, "S", IDLE0),
        _switch(10.02, 1, SLEEPER, "S", IDLE1),
    ]
    return "".join(format_event(e, "ftrace") + "\n" for e in events)


# The RT-hog trace's tasks: a CFS task made SCHED_FIFO after it forked (as ``wl`` is, then ``wl_rthog``), the CFS
# task it preempts each time, and two it keeps waiting.
FORKED = ("wl", 601, 120)
RTHOG = ("rthog", 601, 49)
CC1 = ("cc1", 650, 120)
WAITER = ("waiter", 660, 120)
RCU = ("rcu_preempt", 15, 120)
RT_BURSTS = (10.010, 10.030, 10.050)


def rt_after_fork_text() -> str:
    """A raw tracefs trace of 2 CPUs: ``wl`` (pid 601) is forked on CPU1 as a CFS task (sched_wakeup_new prio=120)
    and waits 4.5 ms behind ``cc1`` (CFS) within its fair share, then is made SCHED_FIFO (prio 49, ``rthog``) and
    runs three 8 ms bursts (:data:`RT_BURSTS`), each preempting cc1; ``waiter`` is woken 0.5 ms into each burst
    and waits to its end, ``rcu_preempt`` 1 ms into the second.

    Behind rthog: cc1 waited 0.1 ms after the fork run and 7.99 ms in each burst (4 waits, 24.07 ms), waiter
    7.5 ms in each (3 waits, 22.5 ms), rcu_preempt 7 ms (1 wait): 53.57 ms in all."""
    events = [
        _switch(9.999, 0, IDLE0, "R", SLEEPER),
        _switch(9.999, 1, IDLE1, "R", CC1),
        Ev(10.0005, 1, CC1[0], CC1[1], "sched_wakeup_new", (FORKED, 1)),
        _switch(10.005, 1, CC1, "R", FORKED),
        _switch(10.0051, 1, RTHOG, "S", CC1),
    ]
    for k, b in enumerate(RT_BURSTS):
        events += [
            *_waking(b, 1, CC1, RTHOG, 1),
            _switch(b + 0.00001, 1, CC1, "R", RTHOG),
            *_waking(b + 0.0005, 1, RTHOG, WAITER, 1),
        ]
        if k == 1:
            events += [
                *_waking(b + 0.001, 1, RTHOG, RCU, 1),
                _switch(b + 0.008, 1, RTHOG, "S", RCU),
                _switch(b + 0.0081, 1, RCU, "I", WAITER),
            ]
        else:
            events.append(_switch(b + 0.008, 1, RTHOG, "S", WAITER))
        events.append(_switch(b + 0.0085, 1, WAITER, "S", CC1))
    events += [_switch(10.08, 0, SLEEPER, "S", IDLE0), _switch(10.08, 1, CC1, "S", IDLE1)]
    return "".join(format_event(e, "ftrace") + "\n" for e in sorted(events, key=lambda e: e.ts))


LATER_CFS = ("later", 700, 120)
LATER_RT = ("later", 700, 49)


def blamed_made_rt_later_text() -> str:
    """A raw tracefs trace of 2 CPUs: ``waiter`` (CFS) is woken on CPU1 at 10.0005 and waits 9 ms behind ``later``
    while ``later`` is a CFS task (prio 120 on every line of it then); at 10.020 ``later`` is made SCHED_FIFO
    (prio 49) and runs 1 ms with nobody waiting.  Judged by ``later``'s last prio (49) the wait was one behind an
    RT task; by its prio then (120) it is a fair share of a busy CPU."""
    events = [
        _switch(9.999, 0, IDLE0, "R", SLEEPER),
        _switch(9.9995, 1, IDLE1, "R", LATER_CFS),
        *_waking(10.0005, 0, SLEEPER, WAITER, 1),
        _switch(10.0095, 1, LATER_CFS, "R", WAITER),
        _switch(10.0100, 1, WAITER, "S", LATER_CFS),
        _switch(10.0150, 1, LATER_CFS, "S", IDLE1),
        *_waking(10.0200, 0, SLEEPER, LATER_RT, 1),
        _switch(10.0201, 1, IDLE1, "R", LATER_RT),
        _switch(10.0211, 1, LATER_RT, "S", IDLE1),
        _switch(10.0300, 0, SLEEPER, "S", IDLE0),
    ]
    return "".join(format_event(e, "ftrace") + "\n" for e in sorted(events, key=lambda e: e.ts))


def quiet_window(events: Iterable[TraceEvent]) -> tuple[float, float] | None:
    """A window in which one CPU has no event while another has some: the middle half of the longest gap between
    two consecutive events of one CPU that holds events of another there (None when there is none).

    What ran on the quiet CPU then is only known from the state before the window (and ``--window`` once said
    "busy 0.000 ms" of a CPU that ran one task all through it).
    """
    times: dict[int, list[float]] = {}
    for ev in events:
        if ev.kind != Kind.LOST:
            times.setdefault(ev.cpu, []).append(ev.ts)
    for ts in times.values():
        ts.sort()
    best: tuple[float, float] | None = None
    for cpu, ts in times.items():
        others = [t for c, t in times.items() if c != cpu]
        for a, b in itertools.pairwise(ts):
            lo, hi = a + (b - a) / 4, b - (b - a) / 4
            if (best is None or hi - lo > best[1] - best[0]) and any(
                bisect.bisect_right(t, hi) > bisect.bisect_left(t, lo) for t in others
            ):
                best = (lo, hi)
    return best


def silent_window(events: Iterable[TraceEvent]) -> tuple[float, float] | None:
    """A window inside the trace in which no CPU has an event: the middle half of the longest gap between two
    consecutive events of the trace (None when it has fewer than two distinct times).

    ``--window`` over it was a usage error ("holds no event"); what ran there is the state carried in.
    """
    times = sorted({ev.ts for ev in events if ev.kind != Kind.LOST})
    if len(times) < 2:
        return None
    a, b = max(itertools.pairwise(times), key=lambda ab: ab[1] - ab[0])
    return (a + (b - a) / 4, b - (b - a) / 4)


CHRT_SHELL = ("bash", 800, 120)
CHRT_HOG = ("rthog", 800, 49)
KWORKER = ("kworker/1:0", 30, 120)


def chrt_hog_text(state: str = "R") -> str:
    """A raw tracefs trace of 2 CPUs: ``chrt -f 50 rthog`` as ue19 recorded it: the shell child ``bash`` (pid 800)
    is switched in on CPU1 at prio 120 (a CFS task still), preempting ``victim``, becomes SCHED_FIFO (prio 49) and
    ``rthog`` by exec without a switch, and runs 600 ms; its switch-out says prio 49 and ``state`` (R: still
    runnable, switched out for ``kworker/1:0``, a CFS task: RT throttling; S: it slept)."""
    events = [
        _switch(9.999, 0, IDLE0, "R", SLEEPER),
        _switch(9.999, 1, IDLE1, "R", VICTIM),
        _switch(10.0, 1, VICTIM, "R", CHRT_SHELL),
        *_waking(10.1, 0, SLEEPER, KWORKER, 1),
        _switch(10.6, 1, CHRT_HOG, state, KWORKER),
        _switch(10.6005, 1, KWORKER, "I", VICTIM),
        _switch(10.61, 1, VICTIM, "S", IDLE1),
        _switch(10.61, 0, SLEEPER, "S", IDLE0),
    ]
    return "".join(format_event(e, "ftrace") + "\n" for e in sorted(events, key=lambda e: e.ts))


MIGRATION = ("migration/1", 21, 0)  # a stop-class kernel thread: above every RT task


def rt_preempted_and_throttled_text() -> str:
    """A raw tracefs trace of 1 CPU: ``rt task`` (SCHED_FIFO, prio 49) switched out runnable twice: once for
    ``migration/1`` (prio 0: it preempted it) and once for ``kworker/1:0`` (a CFS task: RT throttling stopped it)."""
    events = [
        _switch(10.0, 1, IDLE1, "R", RT),
        _switch(10.3, 1, RT, "R", MIGRATION),
        _switch(10.3001, 1, MIGRATION, "S", RT),
        _switch(10.95, 1, RT, "R", KWORKER),
        _switch(10.9501, 1, KWORKER, "I", RT),
        _switch(11.0, 1, RT, "S", IDLE1),
    ]
    return "".join(format_event(e, "ftrace") + "\n" for e in events)


RT_HOG_TO_END_WINDOW = (10.1, 10.6)


def rt_hog_to_the_end_text(cpu1_reports: bool = True) -> str:
    """A raw tracefs trace of 2 CPUs stopped while an RT hog still spins (ue21 #1, rt_cut.dat): ``rt task``
    (SCHED_FIFO, prio 49) preempts ``victim`` on CPU1 at 10.0 and is never switched out; ``kworker/1:0`` is woken
    onto CPU1 at 10.05; CPU0 goes on switching to the trace's end (11.0), woken from CPU1 (its interrupts under the
    hog).  Both waits are open when the recording stops: at least 500 ms of the window 10.1-10.6.
    ``cpu1_reports`` False: CPU1 writes nothing after the hog's switch-in (ue21 #2: a spinning task writes no sched
    event), its last event the switch at 10.0."""
    events = [
        _switch(9.999, 1, IDLE1, "R", VICTIM),
        _switch(10.0, 1, VICTIM, "R", RT),
        *_waking(10.05, 0, SLEEPER, KWORKER, 1),
    ]
    t = 9.95
    while t < 11.0:
        events += [_switch(t, 0, IDLE0, "R", SLEEPER), _switch(t + 0.01, 0, SLEEPER, "S", IDLE0)]
        if (
            cpu1_reports and t > 10.0
        ):  # CPU1's interrupts under the hog wake the sleeper on CPU0: CPU1 reports to the end
            events += _waking(t - 0.001, 1, RT, SLEEPER, 0)
        t += 0.1
    return "".join(format_event(e, "ftrace") + "\n" for e in sorted(events, key=lambda e: e.ts))
