"""When a CPU reported is told by all its events, not only by those the analyses use (user review round 4, #3, #15).

A tracefs recording of sched and irq events on this VM (5 s, nothing overwritten) had CPU0 running python and
writing ``sched_stat_runtime`` up to 2 ms before the end, yet "CPU0 stops reporting at ... (line 14991)" (its
last analysed event, 24 ms earlier), every finding's confidence lowered for it, and the window, the CPU table and
the "examined" span began and ended at analysed events only.  Here kf.ftrace.txt with CPU0's events after its
middle renamed to a kind the analyses skip.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from collectors.trace_columns import BatchParser
from collectors.trace_text import TraceParser
from detectors.sched.findings import _behind_text, _judge_softirq_wait
from forensics.model import Severity
from forensics.types.sched import Blame, EventRef, Span, Wait
from forensics.types.trace import PRIO_UNKNOWN
from tests.detectors.sched.test_input_sanity import _both, _lines, _ts, _write
from tests.detectors.sched.traces import IDLE0, IDLE1, Ev, _switch, _waking, format_event, recorded


def _renamed(tmp_path: Path) -> tuple[Path, float, float]:
    """kf.ftrace.txt with CPU0's events after the middle of the trace renamed (skipped); their first and last time."""
    head, body = _lines(tmp_path)
    cut = (_ts(body[0]) + _ts(body[-1])) / 2
    late = [i for i, line in enumerate(body) if "[000]" in line and _ts(line) > cut]
    for i in late:
        name = body[i].split(": ", 2)[1]
        body[i] = body[i].replace(f": {name}: ", ": kf_other_event: ", 1)
    return _write(tmp_path, "cpu0-skipped.txt", head, body), _ts(body[late[0]]), _ts(body[late[-1]])


def test_a_cpu_whose_late_events_are_skipped_still_reports(tmp_path: Path) -> None:
    path, _first_skipped, last_skipped = _renamed(tmp_path)
    analysis, findings = _both(path)  # the line parser and the compiled scanner note the same skipped events
    assert analysis.coverage.stopped == () and "stop reporting" not in analysis.coverage.note
    assert not [f for f in findings if f.kind == "trace-coverage" and "stop" in f.title]
    cpu0 = next(c for c in analysis.cpus if c.cpu == 0)
    assert cpu0.last_ts == last_skipped  # the CPU table: its last event, of any kind
    assert isinstance(analysis.window, tuple) and analysis.window[1] >= last_skipped
    line = TraceParser()
    line.feed(path.read_bytes())
    scanned = BatchParser()
    scanned.feed_batch(path.read_bytes())
    assert line.counts.skipped_last == scanned.counts.skipped_last and line.counts.skipped_last[0].ts == last_skipped
    assert line.counts.skipped_first == scanned.counts.skipped_first


def test_a_run_open_at_the_end_is_closed_at_its_cpus_last_event_of_any_kind(tmp_path: Path) -> None:
    """Its task's runtime reaches the CPU's last event (lttng-sessiond's 34.645 ms on bug446190 were 34.728)."""
    path, _first_skipped, last_skipped = _renamed(tmp_path)
    head, body = _lines(tmp_path)
    kept = [line for line in path.read_text().splitlines() if "kf_other_event" not in line and line[:1] != "#"]
    cut = _write(tmp_path, "cpu0-cut.txt", head, kept)
    cpu0 = [line for line in kept if "[000]" in line]
    last_analysed = _ts(cpu0[-1])
    pid = int(re.findall(r"next_pid=(\d+)", next(line for line in reversed(cpu0) if "sched_switch" in line))[0])
    renamed, _ = _both(path)
    deleted, _ = _both(cut)
    runtime = {a: next(t.runtime for t in b.tasks if t.pid == pid) for a, b in (("renamed", renamed), ("cut", deleted))}
    assert pid and body
    assert abs(runtime["renamed"] - runtime["cut"] - (last_skipped - last_analysed)) < 1e-9


def test_a_wait_that_began_before_its_cpus_first_switch_is_unseen_there(tmp_path: Path) -> None:
    """kworker/1:2 on bug446190: woken 9.302 ms before CPU1's first sched_switch, "behind: [], unseen_ms: 0.0"."""
    waiter = ("waiter", 600, 120)
    events = [
        _switch(10.0, 0, IDLE0, "R", ("hog", 500, 120)),
        Ev(10.001, 0, "hog", 500, "sched_waking", (waiter, 1)),
        _switch(10.010, 1, IDLE1, "R", waiter),
        _switch(10.020, 1, waiter, "S", IDLE1),
        _switch(10.020, 0, ("hog", 500, 120), "S", IDLE0),
    ]
    path = tmp_path / "before-first-switch.txt"
    path.write_text("".join(format_event(e, "ftrace") + "\n" for e in events))
    analysis, _findings = _both(path)
    wait = next(t for t in analysis.tasks if t.pid == 600).worst_wakeup
    assert wait is not None and wait.behind == ()
    assert abs(wait.unseen - 0.009) < 1e-9  # all of it: nothing is known of CPU1 before 10.010
    assert (
        _behind_text(wait, analysis)
        == "who ran in its first 9.000 ms is not known: it began before CPU1's first sched_switch"
    )


def test_a_softirq_wait_spent_idle_is_not_starvation() -> None:
    """A softirq pending on an idle CPU runs at the next interrupt's exit: 2483 ms "behind <idle>" (a packet cut out
    of an LTTng stream) was a medium "Softirq starvation ... behind CFS tasks"."""
    ref = EventRef(1, 10.0, 0, "softirq_raise: vec=1 [action=TIMER]")
    span = Span(2.48333, 10.0, 0, ref, ref._replace(line_no=2, ts=12.48333))
    idle = Wait(span, (Blame(0, "<idle>", 2.48332, PRIO_UNKNOWN),), "softirq_raise")
    busy = idle._replace(behind=(Blame(700, "hog", 2.48332, 120),))
    assert _judge_softirq_wait(idle, {}, 0.01) is None
    judged = _judge_softirq_wait(busy, {}, 0.01)
    assert judged is not None and judged.severity == Severity.MEDIUM


def _cpu0_ends(tmp_path: Path, cpu0_next: tuple[str, int, int], woken_later: bool = False) -> Path:
    """CPU0's last event switches to ``cpu0_next`` at 10.020; CPU1 runs on to 10.050 (nothing lost).
    ``woken_later``: CPU1 wakes ``cpu0_next`` at 10.045, so it no longer ran on CPU0 then."""
    worker = ("worker", 700, 120)
    events = [
        _switch(10.000, 0, IDLE0, "R", ("hog", 500, 120)),
        _switch(10.001, 1, IDLE1, "R", worker),
        _switch(10.020, 0, ("hog", 500, 120), "S", cpu0_next),
        _switch(10.030, 1, worker, "S", IDLE1),
        _switch(10.040, 1, IDLE1, "R", worker),
        _switch(10.050, 1, worker, "S", IDLE1),
        *(_waking(10.045, 1, worker, cpu0_next, 0) if woken_later else ()),
    ]
    events.sort(key=lambda e: e.ts)
    path = tmp_path / f"cpu0-ends-{cpu0_next[1]}{'-woken' if woken_later else ''}.txt"
    path.write_text("".join(format_event(e, "ftrace") + "\n" for e in events))
    return path


def test_a_cpu_idle_from_its_last_switch_is_covered_to_the_end(tmp_path: Path) -> None:
    """A tickless idle CPU writes nothing until woken: this VM's idle 2 s of sched events said CPU0 "stops
    reporting" 2.07 ms before the end and lowered every finding for it.  A CPU left running a task, none lost, ran
    it to the end (ue21 #2: a task that keeps its CPU writes no sched event); one whose task is woken later (so it
    was off the CPU then) is still said to stop: what it did after its last event is not in the trace."""
    idle, _ = _both(_cpu0_ends(tmp_path, IDLE0))
    assert idle.coverage.stopped == () and "stop reporting" not in idle.coverage.note
    assert idle.coverage.common_end == 10.050
    busy, _ = _both(_cpu0_ends(tmp_path, ("other", 800, 120)))
    assert busy.coverage.stopped == () and [(r.cpu, r.pid) for r in busy.coverage.running] == [(0, 800)]
    assert busy.coverage.common_end == 10.050 and "still running when the recording stopped" in busy.coverage.note
    (other,) = (t for t in busy.tasks if t.pid == 800)
    assert other.runs.worst is not None and other.runs.worst.duration == pytest.approx(0.030)  # to 10.050
    woken, _ = _both(_cpu0_ends(tmp_path, ("other", 800, 120), woken_later=True))
    assert [(r.cpu, r.ts) for r in woken.coverage.stopped] == [(0, 10.020)] and woken.coverage.running == ()
    assert "stop reporting" in woken.coverage.note


def test_a_coverage_gap_lowers_only_the_figures_it_touches(tmp_path: Path) -> None:
    """CPU0 stops at 10.020: a span within the time both CPUs report stays 0.95, one reaching past it and a
    figure over the whole trace are 0.75.  Time counted neither busy nor idle (before a CPU's first switch,
    kf.ftrace.txt's note) lowers nothing; its CPU0 buffer starting late lowers what reaches before it."""
    from detectors.sched.findings import _confidence

    analysis, _ = _both(_cpu0_ends(tmp_path, ("other", 800, 120), woken_later=True))

    def span(start: float, end: float) -> Span:
        return Span(end - start, start, 1, EventRef(1, start, 1, ""), EventRef(2, end, 1, ""))

    assert _confidence(analysis, span(10.001, 10.020))[0] == 0.95
    low, why = _confidence(analysis, span(10.030, 10.040))
    assert low == 0.75 and "only some CPUs were covered" in why and "CPU0 at 10.020000" in why
    assert _confidence(analysis, None)[0] == 0.75
    # kf.ftrace.txt says 2580/2580 (nothing overwritten, no loss): CPU0's first event at 797.542779, after CPU1's,
    # is when it first wrote one, not when its buffer began (review 11 #11): nothing is lowered for it.
    recorded_trace, findings = _both(recorded("kf.ftrace.txt", tmp_path))
    assert "neither busy nor idle" in recorded_trace.coverage.note and not recorded_trace.coverage.stopped
    assert not recorded_trace.coverage.started and "only some CPUs" not in recorded_trace.coverage.note
    sched = [f for f in findings if f.kind.startswith("sched")]
    assert any(f.kind == "sched-dstate" for f in sched)
    assert {f.confidence for f in sched} == {0.95}  # before: 0.75 for the D-state and what reached before 797.54


def test_a_complete_recording_covers_every_cpu_from_its_start_to_its_end(tmp_path: Path) -> None:
    """Review 11 #11: a tracefs recording that says nothing was overwritten (65086/65086) and marks no loss was
    warned "only some CPUs are covered" for a CPU running a user-mode spinner (no event for 1.5 ms at the start,
    1.95 ms at the end), and its D-state findings lowered to 0.75.  The same CPU with a header that says events
    were overwritten is still said to start late and stop early: its buffer lost the rest."""
    from detectors.sched.findings import _confidence

    events = [
        _switch(10.000, 0, IDLE0, "R", ("hog", 500, 120)),
        _switch(10.005, 1, IDLE1, "R", ("spinner", 700, 120)),  # CPU1 silent for 5 ms: its task spins
        _switch(10.010, 0, ("hog", 500, 120), "D", IDLE0),
        _switch(10.030, 1, ("spinner", 700, 120), "R", ("spinner", 700, 120)),
        _switch(10.040, 0, IDLE0, "R", ("hog", 500, 120)),
        _switch(10.050, 0, ("hog", 500, 120), "S", IDLE0),
    ]
    body = "".join(format_event(e, "ftrace") + "\n" for e in events)
    results = {}
    for name, header in (("complete", "6/6"), ("overwritten", "6/9")):
        path = tmp_path / f"{name}.txt"
        path.write_text(f"# tracer: nop\n#\n# entries-in-buffer/entries-written: {header}   #P:2\n#\n{body}")
        results[name] = _both(path)[0]
    complete, overwritten = results["complete"].coverage, results["overwritten"].coverage
    assert not complete.started and not complete.stopped and "only some CPUs" not in complete.note
    assert (complete.common_start, complete.common_end) == (10.000, 10.050)
    span = Span(0.030, 10.010, 0, EventRef(1, 10.010, 0, ""), EventRef(2, 10.040, 0, ""))
    assert _confidence(results["complete"], span)[0] == 0.95
    assert _confidence(results["complete"], None)[0] == 0.95
    assert [r.cpu for r in overwritten.started] == [1] and [r.cpu for r in overwritten.stopped] == [1]
    assert "only some CPUs are covered" in overwritten.note
    assert _confidence(results["overwritten"], None)[0] == 0.75


def test_a_declared_cpu_that_never_reported_lowers_every_figure(tmp_path: Path) -> None:
    """``#P:3`` and events from CPU0 and CPU1 only: what CPU2 did is unknown throughout, so no figure is 0.95
    (the review of 2026-12-07 found every finding at 0.95 once the coverage rule was narrowed)."""
    from detectors.sched.findings import _confidence

    path = _cpu0_ends(tmp_path, IDLE0)
    path.write_text("# entries-in-buffer/entries-written: 6/6   #P:3\n" + path.read_text())
    analysis, _ = _both(path)
    assert analysis.coverage.cpus_declared == 3 and "no events at all from CPU 2" in analysis.coverage.note
    span = Span(0.009, 10.001, 1, EventRef(1, 10.001, 1, ""), EventRef(2, 10.010, 1, ""))
    for figure in (span, None):
        low, why = _confidence(analysis, figure)
        assert low == 0.75 and "some CPUs reported nothing at all" in why
