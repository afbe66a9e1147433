"""FastAnalyzer against SchedAnalyzer: the same TraceAnalysis (equal, floats bit-identical) and timeline.

Differential: the same parsed events go to the reference (lists) and to the
compiled engine (one :class:`EventBatch` per chunk), with windows, thresholds,
bucket sizes, timeline, lost-event markers, and random event sequences.
"""

from __future__ import annotations

import gzip
import math
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collectors.trace_columns import BatchParser
from collectors.trace_text import TraceParser
from detectors.sched import engine_kernels, rules
from detectors.sched.analyzer import BatchAnalyzer, SchedAnalyzer
from detectors.sched.engine import FastAnalyzer
from forensics.model import NotAvailable
from forensics.types.sched import Thresholds, TraceAnalysis
from forensics.types.trace import Kind, ParseCounts, TraceEvent
from forensics.types.trace_batch import EventBatch, Interner
from tests.detectors.sched.traces import (
    DATA,
    LAYOUTS,
    RECORDED,
    blamed_made_rt_later_text,
    busy_wait_text,
    quiet_window,
    rt_after_fork_text,
    rt_hog_to_the_end_text,
    scenario_text,
    silent_window,
    softirq_behind_task_text,
    write_scenario,
)

SHARED = Path(__file__).resolve().parents[4] / "shared" / "traces" / "wl"


def parse(data: bytes, chunk: int) -> tuple[list[list[TraceEvent]], ParseCounts]:
    """The parser's per-chunk event lists (the last one from finish()) and its counts."""
    parser = TraceParser()
    lists = [parser.feed(data[i : i + chunk]) for i in range(0, len(data), chunk)]
    lists.append(parser.finish())
    return lists, parser.counts


def compare(lists: list[list[TraceEvent]], counts: ParseCounts, **options: Any) -> TraceAnalysis:
    """Run both analyzers on the same events; assert equal results, timelines and ``done``."""
    ref = SchedAnalyzer(**options)
    for events in lists:
        ref.feed(events)
        if ref.done:
            break
    fast = FastAnalyzer(**options)
    interner = Interner()
    eid = 0
    for events in lists:
        fast.feed(EventBatch.from_events(events, eid, interner))
        eid += len(events)
        if fast.done:
            break
    assert fast.done == ref.done
    expected = ref.result(counts)
    got = fast.result(counts)
    assert got == expected
    assert repr(got) == repr(expected)  # also tells -0.0 from 0.0
    assert fast.timeline == ref.timeline
    assert fast.summary(counts) == ref.summary(counts)
    # The small-input path: the reference fed batches (past a window's end, each CPU's next event over columns).
    plain = BatchAnalyzer(SchedAnalyzer(**options))
    interner, eid = Interner(), 0
    for events in lists:
        plain.feed(EventBatch.from_events(events, eid, interner))
        eid += len(events)
        if plain.done:
            break
    assert plain.done == ref.done and repr(plain.result(counts)) == repr(expected)
    assert no_empty_cells(expected)
    return expected


def no_empty_cells(analysis: TraceAnalysis) -> bool:
    """The --bucket-ms digest has no zero-length cell: every task in a cell ran there, and every cell holds
    something (an interval that starts or ends on a bucket's edge gave the bucket beyond it "0.000 ms")."""
    return all(
        all(t.runtime > 0 for t in b.top)
        and (b.top or b.irq_time > 0 or b.softirq_time > 0 or b.worst_latency is not None)
        for b in analysis.buckets
    )


def compare_scanned(data: bytes, chunk: int, **options: Any) -> None:
    """FastAnalyzer on the compiled scanner's batches (what the command runs) against SchedAnalyzer on records.

    Both read chunk by chunk and stop where their analyzer is done (past a window's end), as the command does, so
    the reader's counts (the sched_migrate_task events read, TraceAnalysis.migrations) cover the same text."""
    records = TraceParser()
    ref = SchedAnalyzer(**options)
    for at in range(0, len(data), chunk):
        ref.feed(records.feed(data[at : at + chunk]))
        if ref.done:
            break
    if not ref.done:
        ref.feed(records.finish())
    counts = records.counts
    parser = BatchParser()
    fast = FastAnalyzer(**options)
    for at in range(0, len(data), chunk):
        fast.feed(parser.feed_batch(data[at : at + chunk]))
        if fast.done:
            break
    if not fast.done:
        fast.feed(parser.finish_batch())
    assert fast.done == ref.done
    assert repr(fast.result(parser.counts)) == repr(ref.result(counts))
    assert fast.timeline == ref.timeline


def middle_third(analysis: TraceAnalysis) -> tuple[float, float]:
    """The middle third of an analysis' window."""
    assert isinstance(analysis.window, tuple)
    t0, t1 = analysis.window
    return (t0 + (t1 - t0) / 3, t0 + 2 * (t1 - t0) / 3)


def check_file(data: bytes) -> None:
    """The options the command uses, on one trace text, in 64 KiB and 4 KiB chunks."""
    lists, counts = parse(data, 1 << 16)
    full = compare(lists, counts)
    assert full.tasks, "the trace should have tasks"
    window = middle_third(full)
    compare(lists, counts, window=window)
    compare(lists, counts, bucket=0.005, thresholds=Thresholds(hog=0.001, offtime=0.0))
    small, small_counts = parse(data, 1 << 12)
    compare(small, small_counts, timeline=True)
    compare(small, small_counts, window=window, bucket=0.0001, timeline=True)
    compare_scanned(data, 1 << 16)
    compare_scanned(data, 1 << 13, window=window, bucket=0.001, timeline=True)
    quiet = quiet_window(e for events in lists for e in events)  # a CPU with no event in it: state carried in
    assert quiet is not None
    compare(lists, counts, window=quiet)
    compare(small, small_counts, window=quiet, bucket=0.0001, timeline=True)
    compare_scanned(data, 1 << 12, window=quiet)
    silent = silent_window(e for events in lists for e in events)  # no CPU has an event in it: answered all the same
    assert silent is not None
    for got in (
        compare(lists, counts, window=silent),
        compare(small, small_counts, window=silent, bucket=0.0001, timeline=True),
    ):
        assert got.window == silent and got.cpus and got.events_read is not None
        assert got.events_read[0] < silent[0] and silent[1] < got.events_read[1]  # inside the trace
        assert all(isinstance(c.first_ts, NotAvailable) for c in got.cpus)
        assert "no event falls in the window on any CPU" in got.coverage.note
        # (a CPU with no sched_switch before the window has neither: unknown)
        assert all(sum(v for v in (c.busy, c.idle) if isinstance(v, float)) <= silent[1] - silent[0] for c in got.cpus)
    compare_scanned(data, 1 << 12, window=silent)


@pytest.mark.parametrize("name", RECORDED)
def test_recorded_traces(name: str) -> None:
    check_file(gzip.decompress((DATA / f"{name}.gz").read_bytes()))


@pytest.mark.parametrize("path", sorted(SHARED.glob("*.txt")) if SHARED.is_dir() else [], ids=lambda p: p.name)
def test_shared_traces(path: Path) -> None:
    check_file(path.read_bytes())


@pytest.mark.parametrize("layout", LAYOUTS)
def test_scenario_in_every_layout(tmp_path: Path, layout: str) -> None:
    data = write_scenario(tmp_path, layout).read_bytes()
    for chunk in (1 << 16, 200):
        lists, counts = parse(data, chunk)
        compare(lists, counts)
        compare(lists, counts, window=(100.004, 100.0086))
        compare(lists, counts, window=(99.0, 100.0))  # ends at the first event after the window
        compare(lists, counts, bucket=0.002, timeline=True)
        compare(lists, counts, thresholds=Thresholds(hog=0.001, offtime=0.0))
        compare_scanned(data, chunk, window=(100.004, 100.0086), timeline=True)


def test_lost_markers_and_nowaking(tmp_path: Path) -> None:
    lines = scenario_text("ftrace").splitlines()
    at = next(i for i, line in enumerate(lines) if "100.003000" in line)
    lost = [*lines[:at], "CPU:1 [LOST 42 EVENTS]", *lines[at:-2], "[7 EVENTS DROPPED]", *lines[-2:]]
    nowaking = [line for line in lines if "sched_waking" not in line]
    for text in (lost, nowaking):
        lists, counts = parse(("\n".join(text) + "\n").encode(), 300)
        compare(lists, counts)
        compare(lists, counts, bucket=0.001, timeline=True)


def test_a_wait_longer_than_the_kept_runs_says_how_much_is_not_known() -> None:
    """A CPU keeps the runs of its last rules.RECENT_SECONDS (at least rules.RECENT_RUNS): a 3 s wait behind 600
    turns of 5 ms has its start not known, in both engines alike."""
    lists, counts = parse(busy_wait_text(rules.RECENT_RUNS + 88, step=5e-3).encode(), 1 << 14)
    got = compare(lists, counts)
    (waiter,) = (t for t in got.tasks if t.comm == "waiter")
    wait = waiter.worst_wakeup
    assert wait is not None and {b.comm for b in wait.behind} == {"ping", "pong"}
    assert wait.unseen == pytest.approx(wait.span.duration - rules.RECENT_RUNS * 5e-3)  # the last 512 turns kept
    assert sum(b.seconds for b in wait.behind) + wait.unseen == pytest.approx(wait.span.duration)
    lists, counts = parse(busy_wait_text(rules.RECENT_RUNS - 100).encode(), 1 << 14)
    (short,) = (t for t in compare(lists, counts).tasks if t.comm == "waiter")
    assert short.worst_wakeup is not None and short.worst_wakeup.unseen == 0.0


def test_the_runs_kept_cover_a_long_wait_on_a_busy_cpu() -> None:
    """ue22 #7: a CPU kept its last 512 runs, so a wait behind more turns than that had its start "not known"
    although the trace held every switch (cc1's 509.528 ms wait on big.ftrace.txt.gz: 387 ms of it).  The runs of
    the last rules.RECENT_SECONDS are kept: 4,000 turns of 0.2 ms (0.8 s) are all known, in both engines alike (the
    compiled one deepens its rings to hold them)."""
    lists, counts = parse(busy_wait_text(4000).encode(), 1 << 14)
    got = compare(lists, counts)
    (waiter,) = (t for t in got.tasks if t.comm == "waiter")
    wait = waiter.worst_wakeup
    assert wait is not None and wait.unseen == 0.0
    assert sum(b.seconds for b in wait.behind) == pytest.approx(wait.span.duration)
    # what each task was charged of the waiter's wait (its victims' tally): all of it, not the last 512 turns'
    charged = sum(v.seconds for t in got.tasks if t.comm in ("ping", "pong") for v in t.victims if v.pid == 700)
    assert charged == pytest.approx(wait.span.duration)


def test_a_waits_text_says_what_the_tasks_it_lists_cover_and_the_others_not_listed() -> None:
    """ue23 #6: a wait's text lists the three tasks that ran the most meanwhile; cc1's 509.528 ms wait on
    big.ftrace.txt.gz listed 26 ms of it (3 of 160 tasks on CPU0) as if that were all.  Both engines count the tasks
    past the blames kept (Wait.more, more_seconds), and the text says the share listed and the others: here 10 tasks
    of 20 ms each ran during waiter's 200 ms wait (9 of them whole, ping 20 ms from the wakeup on)."""
    from detectors.sched.findings import detect
    from forensics.report.trace_json import wait_to_dict

    lists, counts = parse(busy_wait_text(9, step=20e-3, turns=10).encode(), 1 << 12)
    got = compare(lists, counts)
    (waiter,) = (t for t in got.tasks if t.comm == "waiter")
    wait = waiter.worst_wakeup
    assert wait is not None and len(wait.behind) == rules.BLAMES
    assert (wait.more, wait.more_seconds) == (5, pytest.approx(0.1))
    (found,) = (f for f in detect(got, "busy.txt") if f.kind == "sched-wakeup-latency" and "waiter" in f.title)
    said = (
        "meanwhile the CPU ran task3 (pid 743) 20.000 ms, pung (pid 730) 20.000 ms, task6 (pid 746) 20.000 ms; those "
        "listed ran 60.000 ms of the 200.000 ms wait (30 %); the 7 other task(s) that ran, 140.000 ms in all, are not "
        "listed. "
    )
    assert said in found.summary, found.summary
    assert ("not listed", "7 other task(s), 140.000 ms in all") in [(x.name, x.value) for x in found.facts]
    doc = wait_to_dict(wait)
    assert doc is not None and doc["behind_more"] == {"tasks": 5, "ms": 100.0}


def test_a_cpu_running_its_task_to_the_end_closes_its_run_and_the_waits_there_at_the_end() -> None:
    """ue21 #2: CPU1 silent after its switch to an RT hog, no event lost: both engines close the hog's run and the
    wait queued behind it at the trace's end (10.96, CPU0's last event), not at CPU1's last event (the switch)."""
    lists, counts = parse(rt_hog_to_the_end_text(cpu1_reports=False).encode(), 1 << 10)
    got = compare(lists, counts)
    assert [(r.cpu, r.pid) for r in got.coverage.running] == [(1, 200)] and not got.coverage.stopped
    by_pid = {t.pid: t for t in got.tasks}
    hog, kworker = by_pid[200], by_pid[30]
    assert hog.runs.worst is not None and hog.runs.worst.duration == pytest.approx(0.96)
    assert hog.runs.worst_out is None  # cut by the end: no switch-out
    assert kworker.worst_wakeup is not None and kworker.worst_wakeup.span.duration == pytest.approx(0.91)


@pytest.mark.parametrize("window", [None, (10.1, 10.6)])
def test_waits_open_where_the_recording_or_the_window_ends_are_typed_lower_bounds(
    window: tuple[float, float] | None,
) -> None:
    """ue21 #1/#2: the waits still open where the recording (CPU1 running the hog to the end) or a window ends
    are lower bounds, the woken kworker's and the preempted victim's alike (Wait.open_at), in both engines; a wait a
    switch-in ended is not.  Until 2026-12-07 no record said so: a window's open waits read as ended ones."""
    text = rt_hog_to_the_end_text(cpu1_reports=window is not None).encode()
    got = compare(*parse(text, 1 << 10)) if window is None else windowed(text, window)
    by_pid = {t.pid: t for t in got.tasks}
    edge = "recording" if window is None else "window"
    woken, preempted = by_pid[30].worst_wakeup, by_pid[300].worst_preempt_wait
    assert woken is not None and (woken.open_at, woken.lower_bound) == (edge, True)
    assert preempted is not None and (preempted.open_at, preempted.lower_bound) == (edge, True)
    # the hog's run, still running there, the same (IntervalStats.worst_open); the sleeper's runs ended
    assert by_pid[200].runs.worst_open == edge and by_pid[400].runs.worst_open == ""
    if window is not None:  # the sleeper on CPU0, woken from CPU1 and switched in 1 ms later each time
        closed = by_pid[400].worst_wakeup
        assert closed is not None and (closed.open_at, closed.lower_bound) == ("", False)


def test_a_softirq_wait_counts_the_run_still_current() -> None:
    lists, counts = parse(softirq_behind_task_text().encode(), 1 << 14)
    (net_rx,) = compare(lists, counts).softirqs
    assert net_rx.worst_raise_wait is not None
    assert [(b.comm, round(b.seconds, 6)) for b in net_rx.worst_raise_wait.behind] == [("hog", 0.014)]


def test_an_exit_whose_entry_was_not_seen_serves_the_raise_before_it() -> None:
    """ue4 #12: a raise at the recording's start, then the exit of that vector (its entry not in the buffer), then a
    new raise served 12 us later: the worst raise-to-entry wait was 8.007 ms, the first raise paired with the second
    raise's entry across the exit that served it.  In both engines now: 0.012 ms."""
    text = "".join(
        f"          <idle>-0       [000] d.s2. {ts}: {event}\n"
        for ts, event in (
            (
                "100.000000",
                "sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> "
                "next_comm=swapper/0 next_pid=0 next_prio=120",
            ),
            ("100.000010", "softirq_raise: vec=9 [action=RCU]"),
            ("100.000025", "softirq_exit: vec=9 [action=RCU]"),
            ("100.008025", "softirq_raise: vec=9 [action=RCU]"),
            ("100.008037", "softirq_entry: vec=9 [action=RCU]"),
            ("100.008050", "softirq_exit: vec=9 [action=RCU]"),
        )
    )
    lists, counts = parse(text.encode(), 1 << 14)
    (rcu,) = compare(lists, counts).softirqs
    assert rcu.worst_raise_wait is not None and round(rcu.worst_raise_wait.span.duration, 6) == 0.000012
    compare_scanned(text.encode(), 1 << 14)


def test_a_task_made_rt_after_it_forked() -> None:
    """Each wait keeps the prio the trace shows for the task at it (rt_after_fork_text), in both engines."""
    lists, counts = parse(rt_after_fork_text().encode(), 1 << 10)
    got = compare(lists, counts)
    (forked,) = (t for t in got.tasks if t.pid == 601)
    assert forked.prio == 49 and forked.worst_wakeup is not None and forked.worst_wakeup.prio == 120
    compare(lists, counts, window=(10.012, 10.034))  # waits still open at the window's end: prio of their start


def test_a_blamed_task_s_prio_is_the_one_its_own_events_show_then() -> None:
    """Who ran during a wait keeps its prio then, from its own events, in both engines (blamed_made_rt_later_text):
    ``later`` was prio 120 while ``waiter`` waited behind it, 49 only after."""
    lists, counts = parse(blamed_made_rt_later_text().encode(), 1 << 10)
    got = compare(lists, counts)
    (later,) = (t for t in got.tasks if t.pid == 700)
    (waiter,) = (t for t in got.tasks if t.pid == 660)
    assert later.prio == 49
    assert waiter.worst_wakeup is not None
    assert [(b.pid, b.prio) for b in waiter.worst_wakeup.behind] == [(700, 120)]


def test_preemptirq_events() -> None:
    lines = [
        "          <idle>-0       [000] d..1.   200.000100: irq_disable: caller=do_idle+0x1/0x2 parent=0x0",
        "          <idle>-0       [000] d..1.   200.001600: irq_enable: caller=do_idle+0x3/0x4 parent=0x0",
        "            bash-12      [001] ...1.   200.002000: preempt_disable: caller=vfs_write+0x1/0x2 parent=0x0",
        "            bash-12      [001] ...1.   200.002250: preempt_enable: caller=vfs_write+0x5/0x6 parent=0x0",
    ] * 40
    lists, counts = parse(("\n".join(lines) + "\n").encode(), 1000)
    compare(lists, counts)
    compare(lists, counts, thresholds=Thresholds(offtime=0.0))


# -- random event sequences ------------------------------------------------------------------------

_STATES = (b"R", b"R+", b"S", b"D", b"I", b"Z", b"X", b"", b"T", b"R")
# Kinds weighted like a trace (switches and wakeups most), lost-event markers rare.
_KINDS = ((1,) * 8 + (2,) * 4 + (3, 4) + (5, 6) * 3 + (7, 8, 9) * 3 + (10, 11) * 2 + (12, 13, 14, 15, 16, 18)) * 2 + (
    17,
)
_STEPS = (0.0, 1e-6, 3e-4, 3e-4, 1e-3, 1e-3, 0.004, -2e-3)
_CPUS = (0, 0, 1, 1, 2, 3)


def _raw(data: bytes) -> list[tuple[int, float, int, int, int, int]]:
    """An event's six fields from each 12 bytes of ``data``, two bytes a field: kind, time step, cpu, pid (also picks
    the IRQ, vector, work item, lost count), next pid (also picks the target CPU, names, prev_state), variant (comm
    spellings, prio).  Drawn as one byte string: drawn field by field, six choices an event, hypothesis's drawing
    was ~85% of the test's CPU.  Each value's share is as it was (within 3 points over 250 examples)."""
    n = [int.from_bytes(data[i : i + 2], "little") for i in range(0, len(data) - 1, 2)]
    return [
        (_KINDS[k % len(_KINDS)], _STEPS[t % len(_STEPS)], _CPUS[c % len(_CPUS)], a % 7, b % 7, v % 10)
        for k, t, c, a, b, v in zip(*[iter(n)] * 6, strict=False)
    ]


@st.composite
def event_lists(draw: st.DrawFn) -> list[list[TraceEvent]]:
    """Random events, cut into batches: every kind, nested IRQs, reused pids, time that goes back."""
    size = draw(st.integers(0, 150))
    raw = _raw(draw(st.binary(min_size=12 * size, max_size=12 * size)))
    ts = 100.0
    events = []
    for i, (kind, step, cpu, a, b, variant) in enumerate(raw):
        ts = round(ts + step, 6)
        pid, nxt = a, b
        line = b"line %d" % i
        comm = b"t%d%s" % (pid, b"x" if variant == 0 else b"")
        next_comm = b"t%d%s" % (nxt, b"y" if variant == 1 else b"")
        prio = 49 if variant == 2 else 120
        state = b""
        if kind == 1:
            state = _STATES[(nxt + variant) % len(_STATES)]
        elif kind <= 4:
            nxt = b % 5 - 1  # target CPU, -1: not printed
            next_comm = b""
        elif kind <= 6:
            state = (b"eth0", b"timer", b"")[variant % 3]
            pid = (1, 2, -236)[a % 3]
        elif kind <= 9:
            pid = a % 3
        elif kind <= 11:
            comm = (b"w1", b"w2")[pid % 2]
            state = (b"f1", b"f2", b"f3")[nxt % 3]
        elif kind <= 15:
            state = b"caller"
        elif kind == 17:
            events.append(TraceEvent(17, -1.0, cpu if variant % 2 else -1, i + 1, line, pid))
            continue
        elif kind == 18:  # sched_migrate_task: next_pid the CPU it moved to, next_prio the one it left
            events.append(TraceEvent(18, ts, cpu, i + 1, line, pid, prio, comm, b"", b % 4, (b + a) % 4))
            continue
        events.append(TraceEvent(kind, ts, cpu, i + 1, line, pid, prio, comm, state, nxt, prio, next_comm))
    n = len(events)
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=6)))
    return [events[a:b] for a, b in zip([0, *cuts], [*cuts, n], strict=True)]


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lists=event_lists(),
    window=st.sampled_from(((-math.inf, math.inf), (100.001, 100.02), (99.0, 100.003))),
    bucket=st.sampled_from((None, 0.001)),
    timeline=st.booleans(),
    hog=st.sampled_from((0.005, 0.0)),
)
def test_random_event_sequences(
    lists: list[list[TraceEvent]], window: tuple[float, float], bucket: float | None, timeline: bool, hog: float
) -> None:
    thresholds = Thresholds(hog=hog, offtime=hog)
    counts = ParseCounts(tracer="irqsoff")
    compare(lists, counts, window=window, bucket=bucket, timeline=timeline, thresholds=thresholds)


# -- growth and memory -----------------------------------------------------------------------------


def _switch(ts: float, cpu: int, prev: int, state: bytes, nxt: int, line: int) -> TraceEvent:
    return TraceEvent(1, ts, cpu, line, b"l%d" % line, prev, 120, b"p%d" % prev, state, nxt, 120, b"p%d" % nxt)


def test_tables_grow() -> None:
    """More tasks, CPUs, IRQ depth and vectors than the first tables hold; huge CPU numbers and pids."""
    events: list[TraceEvent] = []
    ts = 10.0
    cpus = (0, 3, 9, 1023, 1024, 5000)
    pids = [*range(1, 700), 5000, 300_000, -7, 1 << 20, (1 << 20) + 5, 1 << 40]
    running: dict[int, int] = {}
    for i, pid in enumerate(pids):
        ts += 1e-4
        cpu = cpus[i % len(cpus)]
        # (a wakeup onto another CPU than it runs on moved unseen: charged to no one, so most are onto their own)
        target = cpus[(i + 1) % len(cpus)] if i % 3 == 1 else (cpu if i % 3 else -1)
        events.append(TraceEvent(2, ts, cpu, len(events) + 1, b"w", pid, 120, b"p%d" % pid, b"", target, 0, b""))
        prev = running.get(cpu, 0)
        running[cpu] = pid
        events.append(_switch(ts + 2e-5, cpu, prev, b"RS"[i % 2 : i % 2 + 1], pid, len(events) + 1))
    for depth in range(12):
        events.append(TraceEvent(5, ts + depth * 1e-6, 9, len(events) + 1, b"i", depth, 0, b"", b"irq%d" % depth))
    for depth in reversed(range(12)):
        events.append(TraceEvent(6, ts + 1e-4, 9, len(events) + 1, b"e", depth))
    for vec in range(40):
        for kind in (7, 8, 9):
            events.append(TraceEvent(kind, ts + 2e-4 + vec * 1e-6, 3, len(events) + 1, b"s", vec))
    events.append(TraceEvent(17, -1.0, 5000, len(events) + 1, b"LOST", 3))
    events.append(TraceEvent(17, -1.0, 77, len(events) + 1, b"LOST", 3))
    events += [_switch(ts + 1e-3, c, 0, b"S", 0, len(events) + 1) for c in cpus]
    lists = [events[i : i + 97] for i in range(0, len(events), 97)]
    compare(lists, ParseCounts(), timeline=True, bucket=0.0005)
    fast = FastAnalyzer()
    fast.feed(EventBatch.from_events(events, 0, Interner()))
    si = fast._t.si
    assert si[engine_kernels.S_NVIC] > 256 and si[engine_kernels.S_NPB] > 256 and si[engine_kernels.S_NRING] > 4
    assert len(fast._t.pid_slot) > 300_000


def test_bounded_digest_and_timeline(monkeypatch: pytest.MonkeyPatch) -> None:
    """The digest coarsens past its cell budget and the timeline stops at its run budget, as SchedAnalyzer's."""
    from detectors.sched import rules

    monkeypatch.setattr(rules, "MAX_BUCKET_CELLS", 8)
    monkeypatch.setattr(rules, "TIMELINE_MAX_RUNS", 5)
    data = scenario_text("ftrace").encode()
    lists, counts = parse(data, 200)
    a = compare(lists, counts, bucket=0.0005, timeline=True)
    assert a.bucket_seconds is not None and a.bucket_seconds > 0.0005


def test_kept_events_stay_bounded() -> None:
    """A long trace of a few tasks keeps a bounded number of events (not one per event)."""
    events = []
    ts = 1.0
    for i in range(60_000):
        ts += 1e-5
        prev, nxt = 1 + i % 4, 1 + (i + 1) % 4
        events.append(TraceEvent(2, ts, i % 2, 2 * i + 1, b"w", nxt, 120, b"p", b"", i % 2, 0, b""))
        events.append(_switch(ts + 1e-6, i % 2, prev, b"S", nxt, 2 * i + 2))
    fast = FastAnalyzer()
    interner = Interner()
    for at in range(0, len(events), 1000):
        fast.feed(EventBatch.from_events(events[at : at + 1000], at, interner))
        assert len(fast._events) <= 2 * rules.OFF_KEEP + 4096
    ref = SchedAnalyzer()
    ref.feed(events)
    assert fast.result(ParseCounts()) == ref.result(ParseCounts())


def test_preemptors_are_counted_in_the_window_only() -> None:
    """Who preempted a task counts the preemptions of the window (--window, --around), as its waits do; and
    each CPU's switches are those of the window.

    ``kforensic trace --task 32114 --around 43610.763843:51`` on this machine's ftrace showed the python task
    preempted 90 times by one task in a 51 ms window where it was switched out preempted 3 times: the count
    ran from the trace's start to the window's end.  Both analyzers (compare), on the recorded trace.
    """

    data = gzip.decompress((DATA / "kf.ftrace.txt.gz").read_bytes())
    lists, counts = parse(data, 1 << 16)
    w0, w1 = middle_third(compare(lists, counts))
    inside = compare(lists, counts, window=(w0, w1))
    preempted: dict[int, int] = {}
    for m in re.finditer(rb" (\d+\.\d+): sched_switch: .*?prev_pid=(\d+) .*?prev_state=R", data):
        if w0 <= float(m[1]) <= w1:
            preempted[int(m[2])] = preempted.get(int(m[2]), 0) + 1
    shown = {t.pid: sum(p.times for p in t.preempted_by) for t in inside.tasks if t.preempted_by}
    assert shown, "the window holds preemptions"
    for pid, n in shown.items():
        assert n <= preempted.get(pid, 0), (pid, n, preempted.get(pid, 0))
    # So are each CPU's switches (the same --around run showed 1,131 on CPU0 where the window holds 5).
    switches: dict[int, int] = {}
    for m in re.finditer(rb"\[(\d+)\] \S+ +(\d+\.\d+): sched_switch: ", data):
        if w0 <= float(m[2]) <= w1:
            switches[int(m[1])] = switches.get(int(m[1]), 0) + 1
    assert switches and {c.cpu: c.switches for c in inside.cpus if c.switches} == switches


def test_a_cpus_first_event_is_the_first_of_the_window() -> None:
    """--window's CPU table: its "first event" was the CPU's first of the whole trace (the events before the window
    are read for the state they set), beside a "last event" and figures of the window: ``kforensic trace
    kf.ftrace.txt.gz --window 797.70:797.75`` said CPU0's first event was at 797.542779.  Both analyzers, the
    compiled scanner's batches too; the events found again in the text."""

    data = gzip.decompress((DATA / "kf.ftrace.txt.gz").read_bytes())
    lists, counts = parse(data, 1 << 16)
    w0, w1 = middle_third(compare(lists, counts))
    inside = compare(lists, counts, window=(w0, w1))
    compare_scanned(data, 1 << 13, window=(w0, w1))
    first: dict[int, float] = {}
    for m in re.finditer(rb"\[(\d+)\] \S+ +(\d+\.\d+): ", data):
        if float(m[2]) >= w0:
            first.setdefault(int(m[1]), float(m[2]))
    assert len(first) >= 2 and {c.cpu: c.first_ts for c in inside.cpus} == first
    assert all(w0 <= c.first_ts <= c.last_ts <= w1 for c in inside.cpus)


def windowed(data: bytes, window: tuple[float, float]) -> TraceAnalysis:
    """Both analyzers over ``window`` of ``data``, on the line parser's records (two chunk sizes) and on the
    compiled scanner's batches: asserted equal; the result."""
    for chunk in (1 << 16, 1 << 10):
        lists, counts = parse(data, chunk)
        got = compare(lists, counts, window=window)
        compare_scanned(data, chunk, window=window)
    return got


QUIET = (797.7070, 797.7097)  # kf.ftrace.txt: CPU0 has no event in it; kf_hog runs there from before to after it


def _hog_lines(data: bytes) -> tuple[int, int, float, float]:
    """kf.ftrace.txt: the line numbers of CPU0's last sched_switch before QUIET (kf_hog switched in) and of its
    first event after QUIET, and CPU0's last event before QUIET and first after, read from the text."""
    switch_in = before = after = 0
    last_ts = first_after = math.nan
    payload = b""
    for n, line in enumerate(data.splitlines(), 1):
        m = re.match(rb"\s*(\S+)-(\d+)\s+\[000\] \S+\s+(\d+\.\d+): (\w+): (.*)", line)
        if not m:
            continue
        ts = float(m[3])
        assert not QUIET[0] <= ts <= QUIET[1], "CPU0 has an event in the window"
        if ts < QUIET[0]:
            before, last_ts = n, ts
            if m[4] == b"sched_switch":
                switch_in, payload = n, m[5]
        elif not after:
            after, first_after = n, ts
            assert m[1] == b"kf_hog" and m[2] == b"15891", "kf_hog still runs on CPU0 after the window"
    assert switch_in and before and after
    assert b"next_comm=kf_hog next_pid=15891" in payload, "kf_hog is switched in on CPU0 before the window"
    return switch_in, after, last_ts, first_after


def _uncovered(note: str) -> bool:
    """Whether a coverage note says the trace does not cover part of the window (its start, its end, no event in it;
    freeze._window_notes): the note may still say, over the window, what no switch accounts for (_unattributed)."""
    return any(
        said in note for said in ("after the window's start", "before the window's end", "no event falls in the window")
    )


def test_a_cpu_quiet_in_the_window_runs_its_task_through_it() -> None:
    """``kforensic trace kf.ftrace.txt.gz --window 797.7070:797.7097``: CPU0 has no event in the window, and kf_hog
    runs there from its switch-in at 797.705242 to its switch-out at 797.714786.  The CPU row said first/last
    events 797.542779/797.706785 (outside the window) and busy 0.000 ms, kf_hog was not in the task table, the
    coverage note said CPU0 "stops reporting" at 797.706785 (it reports again at 797.710776), and the window was
    printed as ending at 797.709090 (the last event read).  Now: the run open at the window's start is carried
    in and the run open at its end is closed there (cited up to CPU0's first event after it), CPU0 is busy the
    whole window with kf_hog, it does not stop reporting, and the window is the one asked for.  Both analyzers,
    on the line parser's records and the compiled scanner's batches."""
    data = gzip.decompress((DATA / "kf.ftrace.txt.gz").read_bytes())
    switch_in, after, _last, first_after = _hog_lines(data)
    w0, w1 = QUIET
    inside = windowed(data, QUIET)
    lists, counts = parse(data, 1 << 10)
    assert inside.window == QUIET
    cpu0 = next(c for c in inside.cpus if c.cpu == 0)
    assert isinstance(cpu0.first_ts, NotAvailable) and isinstance(cpu0.last_ts, NotAvailable)
    assert cpu0.busy == w1 - w0 and cpu0.idle == 0.0 and cpu0.switches == 0
    hog = next(t for t in inside.tasks if t.comm == "kf_hog")
    assert hog.runtime == w1 - w0 and hog.runs.n == 1
    run = hog.runs.worst
    assert run is not None and (run.start, run.duration, run.cpu) == (w0, w1 - w0, 0)
    assert (run.begin.line_no, run.end.line_no, run.end.ts) == (switch_in, after, first_after)
    assert inside.coverage.stopped == () and "stop reporting" not in inside.coverage.note
    assert not _uncovered(inside.coverage.note)  # the trace covers the whole window
    # The other CPU's busy and idle time add up to no more than the window either.
    assert all(c.busy + c.idle <= w1 - w0 for c in inside.cpus)
    # The --bucket-ms digest and the --png timeline have that run too (they had nothing of CPU0).
    digest = compare(lists, counts, window=QUIET, bucket=0.001, timeline=True)
    assert (0, w0, w1, 15891) in digest.window_runs
    cpu0_cells = [b for b in digest.buckets if b.cpu == 0]
    assert cpu0_cells and all([t.comm for t in b.top] == ["kf_hog"] for b in cpu0_cells)
    assert math.isclose(sum(t.runtime for b in cpu0_cells for t in b.top), w1 - w0)


def test_a_cpu_stops_reporting_only_when_it_has_no_later_event() -> None:
    """The same window with every CPU0 event after it removed (a CPU whose buffer stopped: its events end at
    797.706785 while CPU1's go on): CPU0 stops reporting there, its run is closed at its last event (what ran
    later is not known), and figures reaching past it are held back as before.  A window that ends before that
    event does not say so."""
    data = gzip.decompress((DATA / "kf.ftrace.txt.gz").read_bytes())
    _switch_in, _after, last_ts, _first_after = _hog_lines(data)
    cut = b"\n".join(
        line
        for line in data.split(b"\n")
        if not ((m := re.match(rb"\s*\S+-\d+\s+\[000\] \S+\s+(\d+\.\d+): ", line)) and float(m[1]) > QUIET[1])
    )
    lists, counts = parse(cut, 1 << 12)
    inside = compare(lists, counts, window=QUIET)
    compare_scanned(cut, 1 << 12, window=QUIET)
    assert [(r.cpu, r.ts) for r in inside.coverage.stopped] == [(0, last_ts)]
    assert "CPUs stop reporting before the trace ends (CPU0 at 797.706785" in inside.coverage.note
    cpu0 = next(c for c in inside.cpus if c.cpu == 0)
    hog = next((t for t in inside.tasks if t.comm == "kf_hog"), None)
    assert cpu0.busy == 0.0 and (hog is None or hog.runtime == 0.0)  # its run ended unseen before the window
    earlier = compare(lists, counts, window=(797.7060, 797.7065))  # CPU0 reports after this one
    assert earlier.coverage.stopped == () and "stop reporting" not in earlier.coverage.note


def test_the_window_printed_is_the_one_asked_for_and_what_the_trace_misses_of_it_is_said() -> None:
    """A window that reaches past the trace's end or before its start is printed as asked, and the coverage note
    says from when or until when the trace covers it (it was printed as the span of the events read)."""
    data = gzip.decompress((DATA / "kf.ftrace.txt.gz").read_bytes())
    lists, counts = parse(data, 1 << 16)
    full = compare(lists, counts)
    assert isinstance(full.window, tuple)
    t0, t1 = full.window
    late = compare(lists, counts, window=(t1 - 0.01, t1 + 1.0))
    assert late.window == (t1 - 0.01, t1 + 1.0)
    assert f"the trace's analysed events end at {t1:.6f}, 1000.000 ms before the window's end" in late.coverage.note
    early = compare(lists, counts, window=(t0 - 0.5, t0 + 0.01))
    assert early.window == (t0 - 0.5, t0 + 0.01)
    assert f"the trace begins at {t0:.6f}, 500.000 ms after the window's start" in early.coverage.note
    inside = compare(lists, counts, window=QUIET)
    assert inside.window == QUIET and not _uncovered(inside.coverage.note)


def test_a_windowed_task_table_lists_only_the_tasks_active_in_the_window() -> None:
    """``kforensic trace kf.ftrace.txt.gz --window 797.7070:797.7097`` listed 59 tasks, 53 of them seen only before
    the window in all-zero rows (python3, record.sh, bash, readlink...).  A windowed table lists the tasks that ran
    there, ended a wait or a sleep there, were preempted there, or wait to run at its end: kf_hog and kf_rthog ran;
    kf_victim was preempted by kf_rthog, qemu-system-x86 15563 and kf_blocker were woken (their sleeps end there);
    qemu-system-x86 15566, preempted on CPU0 at 797.702790, waits behind kf_hog all through it.  Both analyzers;
    the whole trace still lists every task."""
    data = gzip.decompress((DATA / "kf.ftrace.txt.gz").read_bytes())
    lists, counts = parse(data, 1 << 16)
    inside = compare(lists, counts, window=QUIET)
    compare_scanned(data, 1 << 12, window=QUIET)
    assert {t.pid for t in inside.tasks} == {15891, 15892, 15893, 15563, 15894, 15566}
    python3 = [line for line in data.splitlines() if b"-15850 " in line or b"pid=15850 " in line]
    assert python3 and not [x for x in python3 if QUIET[0] <= float(x.split(b": ")[0].split()[-1]) <= QUIET[1]]
    preempted = re.search(
        rb"\[000\] \S+\s+797\.702790: sched_switch: prev_comm=qemu-system-x86 prev_pid=15566 .*R", data
    )
    assert preempted is not None  # the waiter, switched out runnable before the window
    whole = compare(lists, counts)
    assert {15850, 15845} <= {t.pid for t in whole.tasks} and len(whole.tasks) > 50


def test_a_run_from_a_bucket_edge_adds_nothing_to_the_bucket_before() -> None:
    """``--window 797.7070:797.7097 --bucket-ms 1`` of kf.ftrace.txt: kf_hog's run carried in from 797.707000 (the
    window's start, a bucket's edge) put "kf_hog 0.000 ms" in a cell at 797.706000 (797.707 // 0.001 is 797706;
    797707 * 0.001 is 797.707 again): a bucket before the window.  Now CPU0's cells are those of the window, kf_hog
    1.000, 1.000 and 0.700 ms.  Both analyzers; the compiled scanner's batches; the same window's edges a hair
    off (rounding only) give the same cells."""
    data = gzip.decompress((DATA / "kf.ftrace.txt.gz").read_bytes())
    lists, counts = parse(data, 1 << 16)
    for window in (QUIET, (797.707 - 1e-13, 797.7097), (797.707 + 1e-13, 797.7097)):
        inside = compare(lists, counts, window=window, bucket=0.001, timeline=True)
        compare_scanned(data, 1 << 12, window=window, bucket=0.001)
        cells = [
            (round(b.start, 6), [(t.comm, round(t.runtime * 1e3, 6)) for t in b.top])
            for b in inside.buckets
            if b.cpu == 0
        ]
        assert cells == [(797.707, [("kf_hog", 1.0)]), (797.708, [("kf_hog", 1.0)]), (797.709, [("kf_hog", 0.7)])]
    assert all(b.start >= QUIET[0] - 1e-9 for b in inside.buckets)


def test_the_buffers_start_note_is_said_only_when_it_affects_the_window() -> None:
    """kf.ftrace.txt's CPU0 buffer starts at 797.542779, 3.7 ms after CPU1's: the whole trace says so.  A window
    from 797.7070 said it too ("before 797.542779 only some CPUs are covered"), of a time 164 ms before the
    window, and lowered every finding's confidence for it.  Now only a window that begins before 797.542779
    says it.  Both analyzers.  (Its header made to say 80 events were overwritten: as recorded, 2580/2580, CPU0's
    buffer began with CPU1's, review 11 #11.)"""
    data = gzip.decompress((DATA / "kf.ftrace.txt.gz").read_bytes()).replace(b"2580/2580", b"2500/2580", 1)
    lists, counts = parse(data, 1 << 16)
    said = "CPU buffers start at different times (CPU0 from 797.542779)"
    assert said in compare(lists, counts).coverage.note
    assert said in compare(lists, counts, window=(797.540, 797.550)).coverage.note
    assert said in compare(lists, counts, window=(797.5427, 797.550)).coverage.note
    for window in (QUIET, (797.542779, 797.550), (797.60, 797.70)):
        assert said not in compare(lists, counts, window=window).coverage.note, window
    compare_scanned(data, 1 << 12, window=QUIET)
    # nothing else to say of it but what CPU1's missing switches leave out (797.706981 to idle, 797.707035 out of
    # kf_blocker: its switch in is not recorded, nor that to kf_victim before 797.707624)
    assert compare(lists, counts, window=QUIET).coverage.note.startswith(
        "time in the window counted neither busy nor idle (CPU1 0.624 ms of its 2.700 ms)"
    )


def test_a_cpu_with_no_switch_before_or_in_the_window_has_unknown_busy_and_idle_time() -> None:
    """``kforensic trace kf.ftrace.txt.gz --window 797.5450:797.5465``: CPU0 has no sched_switch before the
    window nor in it, so what ran there is not known.  Its row said busy 0.000 ms and idle 0.000 ms, figures
    nothing was read for; now both are unknown with the reason, and CPU1 (idle since its last switch before the
    window) keeps its figures.  Both analyzers, on the line parser's records and the compiled scanner's batches."""
    data = gzip.decompress((DATA / "kf.ftrace.txt.gz").read_bytes())
    window = (797.5450, 797.5465)
    cpu0_switches = re.findall(rb"\[000\] \S+\s+(\d+\.\d+): sched_switch:", data)
    assert cpu0_switches and float(min(cpu0_switches)) > window[1]  # the trace's own record of it
    got = windowed(data, window)
    cpus = {c.cpu: c for c in got.cpus}
    unknown = NotAvailable("no sched_switch on CPU0 before or in the window")
    assert (cpus[0].busy, cpus[0].idle, cpus[0].switches) == (unknown, unknown, 0)
    assert (cpus[1].busy, cpus[1].idle) == (0.0, window[1] - window[0])
    assert not any(r[0] == 0 for r in got.window_runs)  # no run of CPU0 derived either


def test_a_window_keeps_the_kinds_of_the_events_read_before_and_after_it() -> None:
    """``--window 797.5450:797.5465`` of kf.ftrace.txt.gz has no IRQ or softirq event, the trace has them before
    it (797.542795) and after it: what the trace can show is judged on the kinds read, not on the window's
    figures (which have no IRQ and no softirq).  Both analyzers, both readers, equal; none without a window."""
    data = gzip.decompress((DATA / "kf.ftrace.txt.gz").read_bytes())
    window = (797.5450, 797.5465)
    got = windowed(data, window)
    assert compare(*parse(data, 1 << 10)).kinds_read == ()
    assert not got.irqs and not got.softirqs
    assert {rules.SWITCH, rules.WAKING, Kind.IRQ_ENTRY, Kind.IRQ_EXIT, Kind.SOFTIRQ_RAISE} <= set(got.kinds_read)
    assert rules.LOST not in got.kinds_read


def test_a_task_waiting_all_through_a_window_has_its_wait_counted_up_to_the_end() -> None:
    """``--window 797.7070:797.7097``: qemu-system-x86 15566 was preempted on CPU0 at 797.702790 (line 1603) and
    waits behind kf_hog until 797.714786, after the window.  Its row was all zeros (no run, no wait); now its
    preemption wait is counted clipped to the window (2.700 ms from its start), cited up to CPU0's first event
    after it (line 1732), with kf_hog named as who ran meanwhile (and 15566 among kf_hog's victims).  When the
    CPU it waits on reports nothing after the window the wait's length is not known: it is not counted and the
    task (doing nothing else in the window) has no row.  Both analyzers, both readers."""
    data = gzip.decompress((DATA / "kf.ftrace.txt.gz").read_bytes())
    _switch_in, after, last_ts, first_after = _hog_lines(data)
    w0, w1 = QUIET
    got = windowed(data, QUIET)
    qemu = next(t for t in got.tasks if t.pid == 15566)
    assert (qemu.runtime, qemu.runs.n, qemu.preempt_wait.n, qemu.preempt_wait.total) == (0.0, 0, 1, w1 - w0)
    wait = qemu.worst_preempt_wait
    assert wait is not None and wait.source == "preemption" and wait.unseen == 0.0
    assert (wait.span.start, wait.span.cpu, wait.span.begin.line_no, wait.span.end.line_no) == (w0, 0, 1603, after)
    assert wait.span.end.ts == first_after and [(b.comm, b.seconds) for b in wait.behind] == [("kf_hog", w1 - w0)]
    hog = next(t for t in got.tasks if t.comm == "kf_hog")
    assert [(v.pid, v.seconds) for v in hog.victims] == [(15566, w1 - w0)]
    cut = b"\n".join(
        line
        for line in data.split(b"\n")
        if not ((m := re.match(rb"\s*\S+-\d+\s+\[000\] \S+\s+(\d+\.\d+): ", line)) and float(m[1]) > w1)
    )
    lists, counts = parse(cut, 1 << 12)
    stopped = compare(lists, counts, window=QUIET)
    compare_scanned(cut, 1 << 12, window=QUIET)
    assert last_ts < w0 and 15566 not in {t.pid for t in stopped.tasks}


def test_a_cpu_with_no_switch_in_the_trace_has_unknown_busy_and_idle_time() -> None:
    """kf.ftrace.txt.gz without CPU1's sched_switch lines (as an RT task spinning on a nohz_full CPU never
    switches): CPU1's row said busy 0.000 ms and idle 0.000 ms, figures nothing was read for; now both are unknown
    with the reason, its IRQ and softirq time (read from its own events) are kept, and CPU0's figures are those
    of the whole trace.  Both analyzers, on the line parser's records and the compiled scanner's batches."""
    data = gzip.decompress((DATA / "kf.ftrace.txt.gz").read_bytes())
    cut = b"".join(line for line in data.splitlines(keepends=True) if not re.search(rb"\[001\] .*sched_switch:", line))
    assert len(cut) < len(data) and b"[001]" in cut  # CPU1 keeps its other events
    whole = {c.cpu: c for c in compare(*parse(data, 1 << 16)).cpus}
    for chunk in (1 << 16, 1 << 10):
        got = compare(*parse(cut, chunk))
        compare_scanned(cut, chunk)
    cpus = {c.cpu: c for c in got.cpus}
    unknown = NotAvailable("no sched_switch on CPU1 in the trace")
    assert (cpus[1].busy, cpus[1].idle, cpus[1].switches) == (unknown, unknown, 0)
    assert cpus[1].irq_time == whole[1].irq_time > 0 and cpus[1].softirq_time == whole[1].softirq_time > 0
    assert cpus[0] == whole[0]
    assert isinstance(whole[1].busy, float) and whole[1].switches  # the whole trace's CPU1 has its figures


def test_a_wakeup_whose_switch_in_on_its_cpu_could_not_be_seen_is_not_counted() -> None:
    """kf.ftrace.txt.gz without CPU1's sched_switch lines: python3, woken onto CPU1, is never seen switched in
    there, and its wakeup latency was measured to its next switch-in on CPU0, 217 ms later (0.2 ms in the whole
    trace).  Such a wakeup is not counted (nor in the --bucket-ms digest) and the task says why; the whole
    trace's figures are as they were.  Both analyzers, on the line parser's records and the scanner's batches."""
    data = gzip.decompress((DATA / "kf.ftrace.txt.gz").read_bytes())
    cut = b"".join(line for line in data.splitlines(keepends=True) if not re.search(rb"\[001\] .*sched_switch:", line))
    whole = compare(*parse(data, 1 << 16), bucket=0.01)
    assert not any(t.wakeups_unknown or t.wakeup_unknown_why for t in whole.tasks)
    for chunk in (1 << 16, 1 << 10):
        got = compare(*parse(cut, chunk), bucket=0.01)
        compare_scanned(cut, chunk, bucket=0.01)
    python3 = next(t for t in got.tasks if t.pid == 15850)
    assert python3.wakeups_unknown == 1
    assert python3.wakeup_unknown_why == NotAvailable("no sched_switch on CPU1 in the trace")
    assert all(t.worst_wakeup is None or t.worst_wakeup.span.duration < 0.015 for t in got.tasks)
    assert max(c.worst_latency or 0.0 for c in got.buckets) < 0.015


def _trace_lines(lines: list[tuple[str, str, str]]) -> str:
    """Raw tracefs lines of (CPU, timestamp, event payload), all in the idle task's context."""
    return "".join(f"          <idle>-0       [{cpu}] d..2. {ts}: {event}\n" for cpu, ts, event in lines)


def _moved_text(migrate: bool = False) -> str:
    """``sleeper`` (400) woken from CPU1 onto CPU0, where hog0 then other0 run, and switched in on CPU1 100 ms later
    behind hog1; ``victim`` (300) preempted on CPU0 and switched in on CPU1 later; ``local`` (410) woken onto CPU1
    and run there.  With ``migrate``, a sched_migrate_task line says when ``sleeper`` moved (10.060, line 9)."""
    lines = [
        ("000", "10.000000", "sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> "
         "next_comm=victim next_pid=300 next_prio=120"),
        ("001", "10.000000", "sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> "
         "next_comm=hog1 next_pid=510 next_prio=120"),
        ("000", "10.000500", "sched_switch: prev_comm=victim prev_pid=300 prev_prio=120 prev_state=R ==> "
         "next_comm=hog0 next_pid=500 next_prio=120"),
        ("001", "10.001000", "sched_waking: comm=sleeper pid=400 prio=120 target_cpu=000"),
        ("001", "10.001000", "sched_wakeup: comm=sleeper pid=400 prio=120 target_cpu=000"),
        ("001", "10.002000", "sched_waking: comm=local pid=410 prio=120 target_cpu=001"),
        ("001", "10.002000", "sched_wakeup: comm=local pid=410 prio=120 target_cpu=001"),
        ("000", "10.051000", "sched_switch: prev_comm=hog0 prev_pid=500 prev_prio=120 prev_state=R ==> "
         "next_comm=other0 next_pid=520 next_prio=120"),
        *([("001", "10.060000", "sched_migrate_task: comm=sleeper pid=400 prio=120 orig_cpu=0 dest_cpu=1")]
          if migrate else []),
        ("001", "10.101000", "sched_switch: prev_comm=hog1 prev_pid=510 prev_prio=120 prev_state=R ==> "
         "next_comm=sleeper next_pid=400 next_prio=120"),
        ("001", "10.102000", "sched_switch: prev_comm=sleeper prev_pid=400 prev_prio=120 prev_state=S ==> "
         "next_comm=local next_pid=410 next_prio=120"),
        ("001", "10.130000", "sched_switch: prev_comm=local prev_pid=410 prev_prio=120 prev_state=S ==> "
         "next_comm=victim next_pid=300 next_prio=120"),
        ("001", "10.131000", "sched_switch: prev_comm=victim prev_pid=300 prev_prio=120 prev_state=S ==> "
         "next_comm=hog1 next_pid=510 next_prio=120"),
        ("000", "10.140000", "sched_switch: prev_comm=other0 prev_pid=520 prev_prio=120 prev_state=R ==> "
         "next_comm=hog0 next_pid=500 next_prio=120"),
    ]  # fmt: skip
    return _trace_lines(lines)


def test_a_culprit_that_ran_on_both_cpus_of_a_moved_wait_counts_it_once() -> None:
    """A wait that a sched_migrate_task moved from CPU0 to CPU1 is charged to who ran on each CPU in its part; a task
    that ran on both (``pingpong``) lost it one wait, its parts summed, not two: before, the wait was charged to
    no one (the victims of pingpong were empty), and charged per part it would have counted 2 waits of 30 ms
    worst for one of 60 ms.  Both engines, both parsers."""
    lines = [
        ("000", "1.000000", "sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> "
         "next_comm=pingpong next_pid=600 next_prio=120"),
        ("001", "1.000000", "sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> "
         "next_comm=hog1 next_pid=510 next_prio=120"),
        ("000", "1.010000", "sched_waking: comm=waiter pid=700 prio=120 target_cpu=000"),
        ("000", "1.010000", "sched_wakeup: comm=waiter pid=700 prio=120 target_cpu=000"),
        ("000", "1.040000", "sched_switch: prev_comm=pingpong prev_pid=600 prev_prio=120 prev_state=S ==> "
         "next_comm=other0 next_pid=520 next_prio=120"),
        ("001", "1.040000", "sched_migrate_task: comm=waiter pid=700 prio=120 orig_cpu=0 dest_cpu=1"),
        ("001", "1.050000", "sched_waking: comm=pingpong pid=600 prio=120 target_cpu=001"),
        ("001", "1.050000", "sched_wakeup: comm=pingpong pid=600 prio=120 target_cpu=001"),
        ("001", "1.050000", "sched_switch: prev_comm=hog1 prev_pid=510 prev_prio=120 prev_state=S ==> "
         "next_comm=pingpong next_pid=600 next_prio=120"),
        ("001", "1.080000", "sched_switch: prev_comm=pingpong prev_pid=600 prev_prio=120 prev_state=S ==> "
         "next_comm=waiter next_pid=700 next_prio=120"),
        ("000", "1.090000", "sched_switch: prev_comm=other0 prev_pid=520 prev_prio=120 prev_state=S ==> "
         "next_comm=swapper/0 next_pid=0 next_prio=120"),
    ]  # fmt: skip
    text = _trace_lines(lines).encode()
    for chunk in (1 << 14, 100):
        got = compare(*parse(text, chunk))
        compare_scanned(text, chunk)
    victims = {
        t.comm: (v.waits, round(v.seconds, 6), round(v.worst, 6)) for t in got.tasks for v in t.victims if v.pid == 700
    }
    assert victims == {"pingpong": (1, 0.06, 0.06), "hog1": (1, 0.01, 0.01)}


def test_migrations_are_those_read_up_to_a_windows_end() -> None:
    """Past a window's end the command stops reading, so a sched_migrate_task after it is not counted: both engines
    say the same count of what they read, and the finding says "read", not "the trace's" (the shared wl traces:
    36 in the trace, 20 read up to the window's end)."""
    late = "          <idle>-0       [000] d..2. 10.150000: sched_migrate_task: comm=hog1 pid=510 prio=120 "
    late += "orig_cpu=1 dest_cpu=0\n"
    text = (_moved_text() + late).encode()
    assert compare(*parse(text, 1 << 14)).migrations == 1
    for chunk in (1 << 14, 200):
        compare_scanned(text, chunk, window=(10.0, 10.12))
    parser, fast = BatchParser(), FastAnalyzer(window=(10.0, 10.12))
    for at in range(0, len(text), 200):
        fast.feed(parser.feed_batch(text[at : at + 200]))
        if fast.done:
            break
    assert fast.done and fast.result(parser.counts).migrations == 0


def _moved(migrate: bool, events: str) -> tuple[bytes, TraceAnalysis]:
    """_moved_text with the events asked for ("both", "waking" or "wakeup" alone), and what both engines made of it
    (each read by both parsers, in two chunk sizes)."""
    text = _moved_text(migrate).encode()
    if events != "both":  # without sched_waking: measured from sched_wakeup, whose target CPU is where it was queued
        left_out = b"sched_waking:" if events == "wakeup" else b"sched_wakeup:"
        text = b"".join(line for line in text.splitlines(keepends=True) if left_out not in line)
    for chunk in (1 << 14, 200):
        got = compare(*parse(text, chunk))
        compare_scanned(text, chunk)
    return text, got


@pytest.mark.parametrize("events", ["both", "waking", "wakeup"])
def test_a_wait_a_sched_migrate_task_moved_names_who_delayed_it_on_each_cpu(events: str) -> None:
    """A wait moved from CPU0 to CPU1 by a sched_migrate_task (10.060) was told as one that moved "at an unknown
    time ... who delayed it is not known" (confidence 0.6), and charged to no one.  Now who ran on CPU0 until the
    move and on CPU1 after it delayed it (each charged its part, the victims counted once), the move is cited, and
    the finding names the culprit at the normal confidence.  The preempted task, whose move no event recorded, is
    as before.  Both engines, both parsers."""
    from detectors.sched.findings import MOVED_CONFIDENCE, detect
    from forensics.report.trace_json import wait_to_dict

    text, got = _moved(True, events)
    line = 1 + next(i for i, t in enumerate(text.splitlines()) if b"sched_migrate_task" in t)
    tasks = {t.pid: t for t in got.tasks}
    wait = tasks[400].worst_wakeup
    assert wait is not None and (wait.queued_cpu, wait.span.cpu, wait.moved) == (0, 1, "migrated")
    assert [(m.ts, m.from_cpu, m.to_cpu, m.ref.line_no) for m in wait.moves] == [(10.06, 0, 1, line)]
    ran = [(b.comm, b.cpu, round(b.seconds, 6)) for b in wait.behind]
    assert ran == [("hog0", 0, 0.05), ("hog1", 1, 0.041), ("other0", 0, 0.009)]
    victims = {(t.comm, v.waits, round(v.seconds, 6)) for t in got.tasks for v in t.victims if v.pid == 400}
    assert victims == {("hog0", 1, 0.05), ("other0", 1, 0.009), ("hog1", 1, 0.041)}
    preempted = tasks[300].worst_preempt_wait
    assert preempted is not None and (preempted.queued_cpu, preempted.span.cpu, preempted.moved) == (0, 1, "unknown")
    found = detect(got._replace(thresholds=Thresholds(wakeup_latency=0.001)), "t.txt")
    (sleeper,) = (f for f in found if f.title.startswith("Wakeup latency: sleeper"))
    assert sleeper.title == "Wakeup latency: sleeper waited 100.000 ms to run, behind hog0"
    assert sleeper.confidence > MOVED_CONFIDENCE
    assert (
        "it moved from CPU0 to CPU1 at 10.060000 (sched_migrate_task); while it waited there CPU0 ran "
        "hog0 (pid 500) 50.000 ms, other0 (pid 520) 9.000 ms; CPU1 ran hog1 (pid 510) 41.000 ms" in sleeper.summary
    ), sleeper.summary
    assert "not known" not in sleeper.summary
    assert line in [e.locator.start for e in sleeper.evidence]
    assert f"CPU0 to CPU1 at 10.060000 (sched_migrate_task, line {line})" in [f.value for f in sleeper.facts]
    doc = wait_to_dict(wait)
    assert doc is not None and doc["moved"] == "migrated"
    assert doc["moves"] == [{"at": 10.06, "from_cpu": 0, "to_cpu": 1, "event": {"line": line, "ts": 10.06, "cpu": 1}}]


@pytest.mark.parametrize("events", ["both", "waking", "wakeup"])
def test_a_wait_switched_in_on_another_cpu_names_both_cpus_as_context(events: str) -> None:
    """ue15 #3: a task woken onto CPU0 and switched in on CPU1 (no sched_migrate_task followed: when it moved is not
    known) was blamed on CPU1's tasks alone ("find waited 150.694 ms to run, behind cc1", confidence 0.95).  Now
    its wait says where it was queued and that it moved at an unknown time, and names what ran on both CPUs as
    context; a preemption wait that moved likewise; a same-CPU wait is as before.  Both engines, both parsers."""
    from detectors.sched.findings import MOVED_CONFIDENCE, detect

    _text, got = _moved(False, events)
    tasks = {t.pid: t for t in got.tasks}
    wait = tasks[400].worst_wakeup
    assert wait is not None and wait.span.cpu == 1 and wait.queued_cpu == 0 and wait.moved == "unknown"
    assert round(wait.span.duration, 6) == 0.1
    ran = {(b.comm, b.cpu): round(b.seconds, 6) for b in wait.behind}
    assert ran == {("hog1", 1): 0.1, ("hog0", 0): 0.05, ("other0", 0): 0.05}
    preempted = tasks[300].worst_preempt_wait
    assert preempted is not None and (preempted.queued_cpu, preempted.span.cpu, preempted.moved) == (0, 1, "unknown")
    assert {(b.comm, b.cpu) for b in preempted.behind} >= {("hog0", 0), ("other0", 0), ("local", 1)}
    # who delayed it is not known: no victim of CPU0's tasks, which held the CPU it was queued on (it was hog0's)
    assert not any(v.pid == 400 for t in got.tasks for v in t.victims)
    local = tasks[410].worst_wakeup
    assert local is not None and (local.queued_cpu, local.span.cpu, local.moved) == (1, 1, "")
    assert [(b.comm, b.cpu) for b in local.behind] == [("hog1", 1), ("sleeper", 1)]
    assert got.migrations == 0
    found = detect(got._replace(thresholds=Thresholds(wakeup_latency=0.001)), "t.txt")
    (sleeper,) = (f for f in found if f.title.startswith("Wakeup latency: sleeper"))
    waking = events == "waking"  # sched_waking alone: its target_cpu is the CPU the task last ran on
    queued = "sched_waking target_cpu 0" if waking else "woken onto CPU0"
    assert sleeper.title == f"Wakeup latency: sleeper waited 100.000 ms to run ({queued}, ran on CPU1)"
    assert sleeper.confidence == MOVED_CONFIDENCE
    why = "no sched_migrate_task among the events read"
    how = (
        "whether its wakeup queued it on CPU1 or it moved there later is not known (sched_wakeup, which says where "
        f"a wakeup queued it, is not among the events read; {why})"
        if waking
        else f"it moved from CPU0 to CPU1 at an unknown time ({why})"
    )
    assert f"{how}: who delayed it is not known" in sleeper.summary
    assert "CPU0 ran hog0 (pid 500) 50.000 ms, other0 (pid 520) 50.000 ms" in sleeper.summary or (
        "CPU0 ran other0 (pid 520) 50.000 ms, hog0 (pid 500) 50.000 ms" in sleeper.summary
    )
    assert "behind" not in sleeper.title


def _placed_text(wakeup_cpu: str = "001", early: bool = False) -> str:
    """``sleeper`` (400) woken from CPU0 (sched_waking target_cpu=000, the CPU it last ran on), queued by its
    sched_wakeup on CPU ``wakeup_cpu``, and switched in on CPU1 100 ms later behind hog1, while hog0 held CPU0.
    With ``early``, ``early`` (420) was woken and ran on CPU1 before: the trace is known to have both events."""
    first = [
        ("001", "10.000200", "sched_waking: comm=early pid=420 prio=120 target_cpu=001"),
        ("001", "10.000201", "sched_wakeup: comm=early pid=420 prio=120 target_cpu=001"),
        ("001", "10.000300", "sched_switch: prev_comm=hog1 prev_pid=510 prev_prio=120 prev_state=R ==> "
         "next_comm=early next_pid=420 next_prio=120"),
        ("001", "10.000400", "sched_switch: prev_comm=early prev_pid=420 prev_prio=120 prev_state=S ==> "
         "next_comm=hog1 next_pid=510 next_prio=120"),
    ]  # fmt: skip
    lines = [
        ("000", "10.000000", "sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> "
         "next_comm=hog0 next_pid=500 next_prio=120"),
        ("001", "10.000000", "sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> "
         "next_comm=hog1 next_pid=510 next_prio=120"),
        *(first if early else []),
        ("000", "10.001000", "sched_waking: comm=sleeper pid=400 prio=120 target_cpu=000"),
        ("000", "10.001004", f"sched_wakeup: comm=sleeper pid=400 prio=120 target_cpu={wakeup_cpu}"),
        ("001", "10.101000", "sched_switch: prev_comm=hog1 prev_pid=510 prev_prio=120 prev_state=R ==> "
         "next_comm=sleeper next_pid=400 next_prio=120"),
        ("001", "10.102000", "sched_switch: prev_comm=sleeper prev_pid=400 prev_prio=120 prev_state=S ==> "
         "next_comm=hog1 next_pid=510 next_prio=120"),
        ("000", "10.140000", "sched_switch: prev_comm=hog0 prev_pid=500 prev_prio=120 prev_state=R ==> "
         "next_comm=swapper/0 next_pid=0 next_prio=120"),
    ]  # fmt: skip
    return _trace_lines(lines)


def test_a_wakeup_is_queued_where_its_sched_wakeup_says_not_where_sched_waking_guessed() -> None:
    """sched_waking's target_cpu is the CPU the task last ran on; the sched_wakeup after it names the CPU the task
    was queued on (935 of 36,767 wakeups of ue15's trace2.dat differ).  It was not read where sched_waking is
    measured from, so a wakeup queued on CPU1 and run there was "moved at an unknown time" from CPU0, with no
    culprit, and its seconds were charged to CPU0's hog0.  Now it waited on CPU1 behind hog1, measured from the
    sched_waking still; a sched_wakeup naming the waking's CPU leaves it moved.  Both engines, both parsers.

    Its seconds are charged to hog1 (its victims and delay caused agree): from its waking once the trace is known
    to have both events (``early``), else from its sched_wakeup (it counted on CPU0 until then, charged to no one)."""
    for wakeup_cpu, queued, moved, early in (("001", 1, "", True), ("001", 1, "", False), ("000", 0, "unknown", True)):
        text = _placed_text(wakeup_cpu, early).encode()
        for chunk in (1 << 14, 100):
            got = compare(*parse(text, chunk))
            compare_scanned(text, chunk)
            compare(*parse(text, chunk), window=(10.05, 10.12))
            compare_scanned(text, chunk, window=(10.05, 10.12))
        tasks = {t.pid: t for t in got.tasks}
        wait = tasks[400].worst_wakeup
        assert wait is not None and (wait.queued_cpu, wait.span.cpu, wait.moved) == (queued, 1, moved)
        assert wait.source == "sched_waking" and round(wait.span.duration, 6) == 0.1
        assert got.wakeup_placed
        if not moved:
            assert [(b.comm, b.cpu, round(b.seconds, 6)) for b in wait.behind] == [("hog1", 1, 0.1)]
            victims = {v.pid: round(v.seconds, 6) for v in tasks[510].victims}
            assert victims == ({400: 0.1, 420: 0.0001} if early else {400: 0.099996})
            assert tasks[510].delay_resolved == pytest.approx(tasks[510].delay_caused)
            assert not tasks[500].victims  # hog0 did not hold the CPU it waited for
            assert tasks[500].delay_caused == (0.0 if early else pytest.approx(4e-6))
        else:  # moved at a time the trace does not show: charged to no one (it was to hog0, which held CPU0)
            assert not tasks[500].victims and not any(v.pid == 400 for v in tasks[510].victims)
            assert tasks[500].delay_caused > 0.09 and tasks[500].delay_resolved == 0.0


def _away_and_back_text(moves: list[tuple[str, int, int]], woken: bool = False) -> str:
    """``sleeper`` (400) preempted on CPU0 at 10.001 by hog0 (``woken``: woken onto CPU0 then), hog0 holding CPU0 to
    10.101 and hog1 CPU1 to 10.140; ``moves`` (time, from, to) are its sched_migrate_task lines, each on the CPU it
    moves to; switched in on CPU0 at 10.101."""
    switch = (
        "sched_switch: prev_comm={} prev_pid={} prev_prio=120 prev_state={} ==> next_comm={} next_pid={} next_prio=120"
    )
    wake = "comm=sleeper pid=400 prio=120 target_cpu=000"
    start = (
        [
            ("000", "10.000000", switch.format("swapper/0", 0, "R", "hog0", 500)),
            ("000", "10.001000", f"sched_waking: {wake}"),
            ("000", "10.001000", f"sched_wakeup: {wake}"),
        ]
        if woken
        else [
            ("000", "10.000000", switch.format("swapper/0", 0, "R", "sleeper", 400)),
            ("000", "10.001000", switch.format("sleeper", 400, "R", "hog0", 500)),
        ]
    )
    lines = [
        ("001", "10.000000", switch.format("swapper/1", 0, "R", "hog1", 510)),
        *start,
        *(
            (f"00{dest}", ts, f"sched_migrate_task: comm=sleeper pid=400 prio=120 orig_cpu={left} dest_cpu={dest}")
            for ts, left, dest in moves
        ),
        ("000", "10.101000", switch.format("hog0", 500, "R", "sleeper", 400)),
        ("000", "10.102000", switch.format("sleeper", 400, "S", "hog0", 500)),
        ("001", "10.140000", switch.format("hog1", 510, "R", "swapper/1", 0)),
    ]
    return _trace_lines(lines)


def _victims_of(got: TraceAnalysis, pid: int) -> dict[str, tuple[int, float]]:
    """Who a task's waits were charged to: comm -> (waits, seconds rounded to the microsecond)."""
    return {t.comm: (v.waits, round(v.seconds, 6)) for t in got.tasks for v in t.victims if v.pid == pid}


def _sleeper_finding(got: TraceAnalysis) -> Any:
    """The wakeup latency finding of ``sleeper`` (400)."""
    from detectors.sched.findings import detect

    found = detect(got._replace(thresholds=Thresholds(wakeup_latency=0.001)), "t.txt")
    (sleeper,) = (f for f in found if f.title.startswith("Wakeup latency: sleeper"))
    return sleeper


@pytest.mark.parametrize("woken", [False, True])
@pytest.mark.parametrize(
    ("w1", "cpu", "ran", "moves"),
    [
        (10.05, 1, [("hog0", 0, 0.029), ("hog1", 1, 0.02)], [(10.03, 0, 1)]),
        (10.08, 0, [("hog0", 0, 0.049), ("hog1", 1, 0.03)], [(10.03, 0, 1), (10.06, 1, 0)]),
    ],
)
def test_a_wait_open_at_a_windows_end_is_closed_where_sched_migrate_task_moved_it(
    w1: float, cpu: int, ran: list[tuple[str, int, float]], moves: list[tuple[float, int, int]], woken: bool
) -> None:
    """sleeper, preempted on CPU0 (or woken onto it) at 10.001, moved to CPU1 at 10.030 and back at 10.060, still
    waits at the window's end.  Its wait was closed on CPU0, where it was queued, as one that never moved: at 10.05
    (on CPU1 then) "behind hog0 49 ms" (hog1 not named) and hog0 charged 2 waits, 78 ms; at 10.08 hog0 charged 2
    waits, 108 ms, for one wait of 79 ms.  Now it is closed on the CPU it waits on then, cited up to that CPU's
    first event after the window, its parts named per CPU and the moves cited as for a wait that ends in the
    window, each culprit charged one wait, its part there.  Both engines, both parsers."""
    text = _away_and_back_text([("10.030000", 0, 1), ("10.060000", 1, 0)], woken).encode()
    got = windowed(text, (10.0, w1))
    task = {t.pid: t for t in got.tasks}[400]
    wait = task.worst_wakeup if woken else task.worst_preempt_wait
    assert wait is not None and (wait.queued_cpu, wait.span.cpu, wait.moved) == (0, cpu, "migrated")
    assert (wait.span.start, wait.span.end.ts) == (10.001, {0: 10.101, 1: 10.14}[cpu])
    assert [(m.ts, m.from_cpu, m.to_cpu) for m in wait.moves] == moves
    assert [(b.comm, b.cpu, round(b.seconds, 6)) for b in wait.behind] == ran and wait.unseen == 0.0
    assert _victims_of(got, 400) == {comm: (1, seconds) for comm, _cpu, seconds in ran}
    # Still runnable at the window's end, woken or preempted: a lower bound, typed, in both engines.
    assert wait.open_at == "window" and wait.lower_bound
    if woken:
        finding = _sleeper_finding(got)
        assert finding.title.endswith("to run, behind hog0 (still waiting at the window's end)"), finding.title
        assert "it moved from CPU0 to CPU1 at 10.030000 (sched_migrate_task)" in finding.summary, finding.summary
        lines = [n for n, line in enumerate(text.splitlines(), 1) if b"sched_migrate_task" in line]
        assert set(lines[: len(moves)]) <= {e.locator.start for e in finding.evidence}


@pytest.mark.parametrize("woken", [False, True])
@pytest.mark.parametrize(
    "moves",
    [
        [("10.030000", 0, 1)],  # moved to CPU1, back to CPU0 by a move not recorded
        [(f"10.0{2 + i}0000", i % 2, (i + 1) % 2) for i in range(6)],  # more moves than rules.MOVES, back to CPU0
    ],
)
def test_a_wait_moved_away_and_back_at_a_time_not_followed_names_both_cpus(
    moves: list[tuple[str, int, int]], woken: bool
) -> None:
    """A wait queued on CPU0, moved to CPU1 by a sched_migrate_task, then back to CPU0 by a move not followed (not
    recorded, or past the 4 kept), and switched in on CPU0, was told as a same-CPU wait: "behind hog0 100 ms", its
    time on CPU1 and hog1 not said.  Now it moved at a time not followed, as any wait that moved so: what ran on
    CPU0 and CPU1 is named as context, the moves read cited, no culprit; the task table says CPU0->CPU1->CPU0.
    Both engines, both parsers."""
    from detectors.sched.findings import MOVED_CONFIDENCE
    from forensics.report.trace import _cpu_path

    text = _away_and_back_text(moves, woken).encode()
    for chunk in (1 << 14, 200):
        got = compare(*parse(text, chunk))
        compare_scanned(text, chunk)
    task = {t.pid: t for t in got.tasks}[400]
    wait = task.worst_wakeup if woken else task.worst_preempt_wait
    assert wait is not None and (wait.queued_cpu, wait.span.cpu, wait.moved) == (0, 0, "unknown")
    kept = [(left, dest) for _ts, left, dest in moves[: rules.MOVES]]
    assert [(m.from_cpu, m.to_cpu) for m in wait.moves] == kept
    assert {(b.comm, b.cpu, round(b.seconds, 6)) for b in wait.behind} == {("hog0", 0, 0.1), ("hog1", 1, 0.1)}
    once = len(moves) == 1
    assert _cpu_path(wait) == ("CPU0->CPU1->CPU0" if once else "CPU0->CPU1->CPU0->CPU1->CPU0")
    if woken:
        finding = _sleeper_finding(got)
        via = "CPU1" if once else "CPU1, CPU0"
        assert (
            finding.title
            == f"Wakeup latency: sleeper waited 100.000 ms to run (woken onto CPU0, moved to {via}, ran on CPU0)"
        )
        assert finding.confidence == MOVED_CONFIDENCE
        assert (
            "it moved from CPU0 to CPU1 at 10.0" in finding.summary and "who delayed it is not known" in finding.summary
        )
        assert "CPU1 ran hog1 (pid 510) 100.000 ms" in finding.summary, finding.summary


def _lost_switch_in_text() -> str:
    """``bash`` (300) preempted on CPU0 at 1.0 whose switch-in is not recorded: it next shows as the previous task
    of its exit switch (X) at 1.05; ``poller`` (310) preempted at 1.1, switch-in not recorded either, then sleeps
    (S) at 1.2 and is woken and run every 50 ms through the window 2.0-4.0, beside ``hog`` (500) on CPU0 (ue20 #1)."""
    lines = [
        ("000", "0.900000", "sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> "
         "next_comm=bash next_pid=300 next_prio=120"),
        ("000", "1.000000", "sched_switch: prev_comm=bash prev_pid=300 prev_prio=120 prev_state=R ==> "
         "next_comm=poller next_pid=310 next_prio=120"),
        ("000", "1.050000", "sched_switch: prev_comm=bash prev_pid=300 prev_prio=120 prev_state=X ==> "
         "next_comm=poller next_pid=310 next_prio=120"),
        ("000", "1.100000", "sched_switch: prev_comm=poller prev_pid=310 prev_prio=120 prev_state=R ==> "
         "next_comm=hog next_pid=500 next_prio=120"),
        ("000", "1.200000", "sched_switch: prev_comm=poller prev_pid=310 prev_prio=120 prev_state=S ==> "
         "next_comm=hog next_pid=500 next_prio=120"),
    ]  # fmt: skip
    t = 1.25
    while t < 4.1:
        lines += [
            ("000", f"{t:.6f}", "sched_waking: comm=poller pid=310 prio=120 target_cpu=000"),
            ("000", f"{t + 0.0001:.6f}", "sched_switch: prev_comm=hog prev_pid=500 prev_prio=120 prev_state=R ==> "
             "next_comm=poller next_pid=310 next_prio=120"),
            ("000", f"{t + 0.0002:.6f}", "sched_switch: prev_comm=poller prev_pid=310 prev_prio=120 prev_state=S "
             "==> next_comm=hog next_pid=500 next_prio=120"),
        ]  # fmt: skip
        t += 0.05
    return _trace_lines(lines)


def test_a_task_switched_out_after_a_lost_switch_in_does_not_wait_across_a_window() -> None:
    """A preemption wait whose switch-in the recording lacks ends where the task is next switched out (it ran
    meanwhile): healthy3.dat's bash, preempted at 19810.279640 then exited (X) at 19810.341348, "waited 2000.000 ms"
    in --window 19820:19822, and memfd:sealed-91, run every 50 ms there, too (each charged to every task run on
    CPU0 in the window, the CPU hog made medium).  Now neither has a wait, nor is among hog's victims.  Both engines,
    both parsers."""
    got = windowed(_lost_switch_in_text().encode(), (2.0, 4.0))
    bash = [t for t in got.tasks if t.pid == 300]
    assert bash == []  # nothing of it in the window
    poller = next(t for t in got.tasks if t.pid == 310)
    assert poller.preempt_wait.n == 0 and poller.worst_preempt_wait is None
    worst = poller.wakeup.worst
    assert poller.wakeup.n > 30 and worst is not None and worst.duration < 0.001
    hog = next(t for t in got.tasks if t.pid == 500)
    assert all(v.worst < 0.001 for v in hog.victims)


def _rt_hog_over_window_text() -> bytes:
    """``rthog`` (500, prio 49) runs on CPU0 from 1.0 to 3.0; ``victim`` (300), woken at 1.1 onto CPU0, is switched in
    at 3.0 and sleeps at 3.6; CPU1 reports after 3.5."""
    lines = [
        ("000", "1.000000", "sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> "
         "next_comm=rthog next_pid=500 next_prio=49"),
        ("001", "1.100000", "sched_waking: comm=victim pid=300 prio=120 target_cpu=000"),
        ("000", "3.000000", "sched_switch: prev_comm=rthog prev_pid=500 prev_prio=49 prev_state=S ==> "
         "next_comm=victim next_pid=300 next_prio=120"),
        ("000", "3.600000", "sched_switch: prev_comm=victim prev_pid=300 prev_prio=120 prev_state=S ==> "
         "next_comm=swapper/0 next_pid=0 next_prio=120"),
        ("001", "3.600000", "sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> "
         "next_comm=swapper/1 next_pid=0 next_prio=120"),
    ]  # fmt: skip
    return _trace_lines(lines).encode()


def test_a_wait_begun_before_a_window_is_charged_to_its_culprit_from_the_window_s_start() -> None:
    """``victim`` (300), woken at 1.1 onto CPU0 where ``rthog`` (500, prio 49) runs from 1.0 to 3.0, is switched in
    at 3.0: in --window 2.0:3.5 its wait is counted from 2.0 (1 s), and rthog's victims said so too; they said
    1.9 s, the whole wait (ue20 #2: problem.dat --window 19197.0:19197.5, "948.689 ms in one wait" beside the
    wakeup finding's 433.7 ms).  Both engines, both parsers."""
    got = windowed(_rt_hog_over_window_text(), (2.0, 3.5))
    victim = next(t for t in got.tasks if t.pid == 300)
    worst = victim.wakeup.worst
    assert worst is not None and math.isclose(worst.duration, 1.0)
    hog = next(t for t in got.tasks if t.pid == 500)
    assert [(v.pid, round(v.seconds, 6), round(v.worst, 6)) for v in hog.victims] == [(300, 1.0, 1.0)]


def test_a_wakeup_begun_before_a_window_says_it_is_counted_from_the_window_s_start() -> None:
    """The wait of the test above, found in --window 2.0:3.5: its finding gave the window's start as the time it was
    woken ("was woken (sched_waking) at 2.000000"), though the cited waking is at 1.100000; now it says both."""
    from detectors.sched.findings import detect

    got = compare(*parse(_rt_hog_over_window_text(), 1 << 14), window=(2.0, 3.5))
    (found,) = [f for f in detect(got, "t.txt") if f.kind == "sched-wakeup-latency"]
    assert (
        "was woken (sched_waking) at 1.100000, before the window (counted from the window's start, 2.000000) and "
        "switched in on CPU0 1000.000 ms later" in found.summary
    )


def test_an_rt_task_stopped_by_rt_throttling_was_not_preempted_by_the_task_switched_in() -> None:
    """A SCHED_FIFO task switched out runnable for a CFS kworker was stopped by RT throttling: until 2026-12-07
    ``preempted_by`` (the JSON's, the task table's) counted the kworker as a preemptor, beside migration/1, which
    did preempt it.  The throttling is apart now (``throttled_for``), in both engines."""
    from tests.detectors.sched.traces import rt_preempted_and_throttled_text

    analysis = compare(*parse(rt_preempted_and_throttled_text().encode(), 1 << 9))
    (rt,) = (t for t in analysis.tasks if t.pid == 200)
    assert [(p.comm, p.times) for p in rt.preempted_by] == [("migration/1", 1)]
    assert [(p.comm, p.times) for p in rt.throttled_for] == [("kworker/1:0", 1)]
