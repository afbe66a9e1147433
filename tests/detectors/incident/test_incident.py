"""The incident's timeline, correlation rules, hypotheses and digest, on findings the tests write."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from detectors.incident.correlate import RULES, correlate
from detectors.incident.hypotheses import plain_summary, rank_hypotheses
from detectors.incident.timeline import build_timeline, foreign_sources, narrative, timeline_lanes, verdict
from forensics.model import (
    BootTime,
    Clock,
    Evidence,
    Examined,
    Fact,
    Finding,
    FindingKind,
    Incident,
    Locator,
    LocatorKind,
    NotAvailable,
    Severity,
    Subject,
    SubjectKind,
    Timestamp,
    finding_id,
)
from forensics.report.digest import build_digest
from forensics.types.incident import BOOT_LANE, TRACE_LANE, LaneKey
from forensics.types.sched import KERNEL_RUN, KERNEL_RUN_FACT
from tests.helpers import assert_evidence_resolves

LOG = """\
[   14.873421] watchdog: BUG: soft lockup - CPU#1 stuck for 9s! [kf_spinner:42]
[   23.982192] INFO: task kf_waiter:43 blocked for more than 5 seconds.
[   23.985835]  kf_waiter_update+0xc/0x20 [kf_buggy]
[   23.997144] Kernel panic - not syncing: hung_task: blocked tasks
"""
TRACE = "          kf_spinner-42    [001] d..2.   797.707624: sched_switch: prev_comm=kf_spinner\n"


def _files(tmp: Path) -> tuple[Path, Path]:
    log = tmp / "kern.log"
    log.write_text(LOG)
    trace = tmp / "trace.txt"
    trace.write_text(TRACE)
    return log, trace


def _ev(
    path: Path,
    line: int,
    text: str,
    seconds: float | None = None,
    kind: LocatorKind = LocatorKind.LINE,
    name: str | None = None,
) -> Evidence:
    ts = None if seconds is None else Timestamp(seconds, Clock.MONOTONIC)
    return Evidence(str(path), Locator(kind, line, name=name), text, timestamp=ts)


def _finding(kind: str, title: str, evidence: tuple[Evidence, ...], facts: tuple[Fact, ...] = (),
             severity: Severity = Severity.HIGH, confidence: float = 0.8,
             subjects: tuple[Subject, ...] = ()) -> Finding:  # fmt: skip
    return Finding(finding_id(kind, title), FindingKind(kind), title, severity, confidence, "test", title, evidence,
                   ("crash> bt",), facts, "test", subjects)  # fmt: skip


def _hung_case(tmp: Path) -> tuple[Finding, ...]:
    log, _ = _files(tmp)
    dump = _finding(
        "hung-task", "task kf_waiter blocked in D state on mutex kf_dev_lock held by kf_holder (pid 42)",
        (_ev(log, 3, "kf_waiter_update+0xc/0x20"),),
        (Fact("waiter", "kf_waiter (pid 43)"), Fact("lock owner", "kf_holder (pid 42, state S)")),
        subjects=(Subject(SubjectKind.TASK, "kf_waiter", 43), Subject(SubjectKind.LOCK, "mutex kf_dev_lock")),
    )  # fmt: skip
    title = "INFO: task hung in kf_waiter_update"
    logged = _finding("dmesg.hang", title, (_ev(log, 2, "INFO: task kf_waiter:43 blocked for more than", 23.98),))
    crash = _finding("crash", title, (_ev(log, 4, "Kernel panic - not syncing: hung_task", 23.997144),),
                     (Fact("crash site", "caller of panic()"),), Severity.CRITICAL, 0.95)  # fmt: skip
    return dump, logged, crash


def test_rules_are_ordered_and_named() -> None:
    assert [name for name, _ in RULES] == ["hung-task", "leak-outsized", "hog-lockup", "same-crash"]


def test_one_log_report_corroborates_the_dump_task_and_the_crash(tmp_path: Path) -> None:
    dump, logged, crash = _hung_case(tmp_path)
    merged, correlations = correlate((dump, logged, crash))
    assert {c.rule for c in correlations} == {"hung-task", "same-crash"}
    assert logged.id not in {f.id for f in merged}
    by_id = {f.id: f for f in merged}
    assert logged.evidence[0] in by_id[dump.id].evidence
    assert logged.evidence[0] in by_id[crash.id].evidence
    assert by_id[crash.id].confidence > crash.confidence
    assert "corroborated" in by_id[dump.id].confidence_reason
    assert_evidence_resolves(merged)


def test_one_line_titled_after_two_frames_is_one_crash_that_corroborates_neither(tmp_path: Path) -> None:
    """A soft lockup the dump titled after kf_hw_read_status and the log after kf_hw_poll_fn: one line at one
    printk time is one crash (merged, no contradiction), but no second source for either function: the
    confidence stays the dump's, and the reason says they name different frames."""
    log, _ = _files(tmp_path)
    line = "watchdog: BUG: soft lockup - CPU#1 stuck for 9s! [kf_spinner:42]"
    crash = _finding("crash", "BUG: soft lockup in kf_hw_read_status", (_ev(log, 1, line, 14.873421),),
                     severity=Severity.CRITICAL, confidence=0.95)  # fmt: skip
    logged = _finding("dmesg.soft-lockup", "BUG: soft lockup in kf_hw_poll_fn", (_ev(log, 1, line, 14.873421),),
                      severity=Severity.CRITICAL, confidence=0.9)  # fmt: skip
    merged, correlations = correlate((crash, logged))
    assert [c.rule for c in correlations] == ["same-crash"]
    (one,) = merged
    assert one.confidence == 0.95 and "corroborated" not in one.confidence_reason
    assert "it names another frame ('BUG: soft lockup in kf_hw_poll_fn')" in one.confidence_reason
    assert one.fact("same event as") is not None and one.fact("corroborated by") is None
    # the same function named by both: corroborated, the confidence raised
    same = replace(logged, title="BUG: soft lockup in kf_hw_read_status", id="dmesg:other")
    (one,), _ = correlate((crash, same))
    assert one.confidence == 0.99 and "corroborated" in one.confidence_reason


def test_contradiction_when_dump_and_log_disagree(tmp_path: Path) -> None:
    log, _ = _files(tmp_path)
    crash = _finding("crash", "BUG: unable to handle kernel NULL pointer dereference in a",
                     (_ev(log, 4, "Kernel panic"),), severity=Severity.CRITICAL)  # fmt: skip
    other = _finding("dmesg.null-deref", "kernel BUG in b", (_ev(log, 2, "INFO"),), severity=Severity.CRITICAL)
    merged, correlations = correlate((crash, other))
    assert [c.rule for c in correlations] == ["contradiction"]
    assert any(f.kind == "contradiction" for f in merged)
    assert_evidence_resolves(merged)


def test_leak_outsized_and_hog_lockup(tmp_path: Path) -> None:
    log, trace = _files(tmp_path)
    cache = (Subject(SubjectKind.SLAB_CACHE, "kf_leak_obj"),)
    leak = _finding("slab-leak", "Slab cache kf_leak_obj leaks 29,790 KB/h", (_ev(log, 2, "INFO"),), subjects=cache)
    outsized = _finding("outsized-slab", "slab cache kf_leak_obj is outsized", (_ev(log, 3, "kf_waiter"),),
                        (Fact("cache", "kf_leak_obj"),), Severity.MEDIUM, subjects=cache)  # fmt: skip
    other = _finding("slab-leak", "Slab cache kmalloc-64 leaks 10 KB/h", (_ev(log, 2, "INFO"),),
                     subjects=(Subject(SubjectKind.SLAB_CACHE, "kmalloc-64"),))  # fmt: skip
    lockup = _finding("dmesg.soft-lockup", "BUG: soft lockup in kf_spinner_fn",
                      (_ev(log, 1, "soft lockup - CPU#1 stuck for 9s! [kf_spinner:42]", 14.873421),))  # fmt: skip
    hog = _finding("sched-cpu-hog", "CPU hog: kf_spinner ran 9000 ms without a break on CPU1",
                   (_ev(trace, 1, "sched_switch", 797.707624, LocatorKind.EVENT),),
                   subjects=(Subject(SubjectKind.TASK, "kf_spinner", 42),))  # fmt: skip
    # The title names kf_spinner too, but rules read subjects: this hog's task is another.
    titled = _finding("sched-cpu-hog", "CPU hog: kworker ran 50 ms after kf_spinner",
                      (_ev(trace, 1, "sched_switch", 797.707624, LocatorKind.EVENT),),
                      subjects=(Subject(SubjectKind.TASK, "kworker/1:1", 77),))  # fmt: skip
    # Another process of the same name (another run, another host) is not the task that locked up: this
    # machine's kf_spinner (pid 14883) was merged into the fixture guest's soft lockup of kf_spinner:41.
    namesake = _finding("sched-cpu-hog", "CPU hog: kf_spinner ran 20 ms without a break on CPU1",
                        (_ev(trace, 1, "sched_switch", 797.707624, LocatorKind.EVENT),),
                        subjects=(Subject(SubjectKind.TASK, "kf_spinner", 14883),))  # fmt: skip
    merged, correlations = correlate((leak, outsized, lockup, hog, other, titled, namesake))
    assert [(c.rule, c.finding_ids) for c in correlations] == [
        ("leak-outsized", (leak.id, outsized.id)), ("hog-lockup", (lockup.id, hog.id))]  # fmt: skip
    assert {f.id for f in merged} == {leak.id, lockup.id, other.id, titled.id, namesake.id}
    leaked = next(f for f in merged if f.id == leak.id)
    assert leaked.subjects == cache
    assert_evidence_resolves(merged)


def test_timeline_converts_with_the_boot_time_but_not_trace_clocks(tmp_path: Path) -> None:
    log, trace = _files(tmp_path)
    early = _finding("dmesg.soft-lockup", "lockup", (_ev(log, 1, "soft lockup", 14.873421),))
    late = _finding("dmesg.hang", "hang", (_ev(log, 2, "INFO: task", 23.982192),))
    traced = _finding("sched-cpu-hog", "hog", (_ev(trace, 1, "sched_switch", 797.707624, LocatorKind.EVENT),))
    boot = BootTime(1_700_000_000.0, 2.0, "test")
    events = build_timeline((late, traced, early), boot)
    assert [e.title for e in events] == ["lockup", "hang", "hog"]
    assert events[0].wall == 1_700_000_014.873421
    assert events[0].uncertainty == 2.0
    assert events[2].wall is None
    story = narrative(events)
    assert story.startswith("First (2023-11-14 22:13:34 UTC ±2.0 s): lockup. Then (22:13:43 UTC ±2.0 s): hang.")
    assert f"The trace {trace} has 1 finding(s) on its own clock" in story
    unknown = build_timeline((late,), NotAvailable("no boot"))
    assert unknown[0].wall is None
    assert "since boot" in unknown[0].when_text()


def test_a_kernel_reports_print_time_is_no_duration_but_what_it_states_is(tmp_path: Path) -> None:
    """A soft lockup's lines (printed in 3.3 ms) made the story say "for 3.307 ms" of a CPU "stuck for 8s": a log's or
    a dump's report is an instant, with the duration it states; a trace's interval stays an interval."""
    from dataclasses import replace

    log, trace = _files(tmp_path)
    lines = (_ev(log, 1, "soft lockup", 14.873421), _ev(log, 1, "RIP", 14.876728))
    lockup = replace(_finding("dmesg.soft-lockup", "lockup", lines, (Fact("stuck seconds", "9"),)), detector="dmesg")
    hang = replace(_finding("dmesg.hang", "hang", (_ev(log, 2, "INFO", 23.98), _ev(log, 3, "f", 23.99))),
                   detector="vmcore")  # fmt: skip
    waited = replace(_finding("sched-wakeup-latency", "wait", (_ev(trace, 1, "w", 797.7, LocatorKind.EVENT),
                                                               _ev(trace, 1, "s", 797.8, LocatorKind.EVENT))),
                     detector="detectors.sched")  # fmt: skip
    # A group of repeats spans from its first header to its last ("last of 2"), whatever lines each printed.
    repeats = (_ev(log, 2, "INFO", 23.98, name="report"), _ev(log, 3, "f", 23.99), _ev(log, 9, "INFO", 83.98,
                                                                                      name="last of 2"))  # fmt: skip
    repeated = replace(_finding("dmesg.warning", "repeated", repeats), detector="dmesg")
    boot = BootTime(1_700_000_000.0, 2.0, "test")
    events = {e.title: e for e in build_timeline((lockup, hang, waited, repeated), boot)}
    assert events["lockup"].end is None and events["lockup"].duration_text() == "stuck for 9 s when reported"
    assert events["hang"].end is None and events["hang"].duration_text() == "instant"
    assert events["wait"].end is not None and events["wait"].duration_text() != "instant"
    assert events["repeated"].duration_text() == "60.0 s" and "line 9 (last of 2)" in str(events["repeated"].end_cite)
    story = narrative(tuple(e for e in events.values() if e.title != "repeated"))
    assert story.startswith("First (2023-11-14 22:13:34 UTC ±2.0 s, stuck for 9 s when reported): lockup. Then "
                            "(22:13:43 UTC ±2.0 s): hang.")  # fmt: skip


def test_hypotheses_rank_a_leak_that_ended_in_oom_first(tmp_path: Path) -> None:
    log, _ = _files(tmp_path)
    leak = _finding("slab-leak", "Slab cache kf_leak_obj leaks 29,790 KB/h", (_ev(log, 2, "INFO"),),
                    confidence=0.9)  # fmt: skip
    oom = _finding("dmesg.oom", "OOM killer invoked", (_ev(log, 4, "Kernel panic"),), severity=Severity.CRITICAL)
    panic = _finding("crash", "kernel panic: Out of memory", (_ev(log, 4, "Kernel panic"),),
                     (Fact("crash site", "caller of panic()"), Fact("crashing function", "out_of_memory")),
                     Severity.CRITICAL, 0.95)  # fmt: skip
    ranked = rank_hypotheses((panic, oom, leak))
    assert "kf_leak_obj" in ranked[0].statement
    assert "OOM" in ranked[0].statement
    assert not any("out_of_memory" in h.statement for h in ranked)  # a chosen panic is not a bug site
    assert [h.rank for h in ranked] == list(range(1, len(ranked) + 1))
    assert "memory leak" in plain_summary((panic, oom, leak), "web-17")
    assert plain_summary((), "web-17").startswith("kforensic found no known kernel problem")


def test_digest_fits_its_bound_and_never_cuts_an_excerpt(tmp_path: Path) -> None:
    log, _ = _files(tmp_path)
    findings = tuple(
        _finding("dmesg.warning", f"WARNING in f{i}", (_ev(log, 2, "INFO: task kf_waiter:43 blocked", 23.9),) * 1
                 + (_ev(log, 3, "kf_waiter_update+0xc/0x20"),))
        for i in range(60)
    )  # fmt: skip
    incident = Incident("h", "6.1", NotAvailable("x"), (), findings)
    events = build_timeline(findings, NotAvailable("x"))
    for limit in (1024, 4096, 8192):
        doc = build_digest(incident, "summary", events, rank_hypotheses(findings), limit)
        assert len(json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode()) <= limit
        for f in doc.get("findings", []):
            for ev in f["evidence"]:
                assert ev.get("excerpt") in (None, "INFO: task kf_waiter:43 blocked", "kf_waiter_update+0xc/0x20")
        assert doc["omitted"]["findings"] + len(doc.get("findings", [])) == 60


def test_timeline_has_one_row_per_finding_as_an_interval(tmp_path: Path) -> None:
    log, _ = _files(tmp_path)
    # The same crash seen twice (dump's log and console log), and a hang reported from 23.98 s to 23.99 s.
    hang = _finding("dmesg.hang", "hang", (_ev(log, 2, "INFO: task", 23.982192), _ev(log, 3, "kf_waiter", 23.985835)))
    panic = _finding("crash", "panic", (_ev(log, 4, "Kernel panic", 23.997144), _ev(log, 4, "Kernel panic", 23.997144)),
                     severity=Severity.CRITICAL)  # fmt: skip
    events = build_timeline((panic, hang), BootTime(1_700_000_000.0, 0.5, "test"))
    assert [(e.title, e.lane) for e in events] == [("hang", LaneKey(BOOT_LANE)), ("panic", LaneKey(BOOT_LANE))]
    assert events[0].end is not None and events[0].end.seconds == 23.985835
    assert round(events[0].duration, 6) == 0.003643
    assert events[0].duration_text() == "3.643 ms"
    assert events[1].end is None and events[1].duration_text() == "instant"


def test_a_trace_past_the_crash_uptime_is_another_boot(tmp_path: Path) -> None:
    log, trace = _files(tmp_path)
    panic = _finding("crash", "kernel panic: hung_task", (_ev(log, 4, "Kernel panic", 23.997144),),
                     severity=Severity.CRITICAL)  # fmt: skip
    hog = _finding("sched-cpu-hog", "CPU hog: kf_spinner ran 9 ms",
                   (_ev(trace, 1, "sched_switch", 797.707624, LocatorKind.EVENT),))  # fmt: skip
    assert set(foreign_sources((panic, hog))) == {str(trace)}
    merged, correlations = correlate((panic, hog))
    other = [f for f in merged if f.kind == "contradiction"]
    assert len(other) == 1 and [c.rule for c in correlations] == ["contradiction"]
    assert other[0].fact("other boot") == str(trace)
    assert "797.708 s since boot, after the crash at 23.997 s" in other[0].title
    # What the input's first time was compared with: the crash's, cited (it named no baseline).
    assert other[0].baseline is not None and other[0].baseline.value == "23.997 s"
    assert other[0].baseline.source == f"the crash, {log} line 4 [   23.997144]"
    assert_evidence_resolves(merged)
    boot = BootTime(1_700_000_000.0, 0.5, "test")
    events = build_timeline(merged, boot)
    lanes = timeline_lanes(events, merged, boot)
    assert [lane.key for lane in lanes] == [LaneKey(BOOT_LANE), LaneKey(TRACE_LANE, str(trace))]
    assert [str(lane.key) for lane in lanes] == ["boot", f"trace {trace}"]  # as the JSON names them
    assert lanes[1].contradiction == "its times start at 797.708 s since boot, after the crash at 23.997 s"
    assert [e.lane for e in events if e.title == hog.title] == [LaneKey(TRACE_LANE, str(trace))]
    text = " ".join(verdict("The kernel crashed.", events, lanes))
    assert f"The trace {trace} cannot come from the crashed boot" in text
    # A trace recorded before the crash's uptime may be the same boot: no contradiction, still its own lane.
    early = _finding("sched-cpu-hog", "early hog", (_ev(trace, 1, "sched_switch", 12.5, LocatorKind.EVENT),))
    assert foreign_sources((panic, early)) == {}
    assert [c.rule for c in correlate((panic, early))[1]] == []


def test_the_main_problem_is_hypothesis_1s_of_the_told_lane_with_its_own_severity(tmp_path: Path) -> None:
    """The verdict labelled a medium RT hog with the worst severity of any finding ("(high)"), and told a trace on
    its own clock as the machine's problem.  The main problem is the one the ranking puts first (not the worst by
    severity: the headline followed severity where the ranking shown below it read the cause in another report); a
    more severe finding ranked below it is named, with its rank."""
    from detectors.incident.timeline import traces_apart

    log, trace = _files(tmp_path)
    stall = _finding("dmesg.rcu-stall", "INFO: rcu detected stall", (_ev(log, 2, "INFO: rcu", 23.98),))
    switch = _ev(trace, 1, "sched_switch", 797.7, LocatorKind.EVENT)
    rt = _finding("sched-rt-hog", "RT hog: kf_rthog ran 8 ms", (switch,), severity=Severity.MEDIUM)
    # Told together (no trace set apart here), the RT hog is the hypotheses' first cause (CPU starvation, 0.72) and
    # the main problem, with its own severity; the more severe stall is named, with its rank.
    said = plain_summary((rt, stall), "vm")
    assert said == "On vm, a real-time task kept a CPU from other tasks. The finding: RT hog: kf_rthog ran 8 ms " \
                   "(medium). Hypothesis 1 of the ranking (confidence 0.72) names it. The more severe " \
                   "INFO: rcu detected stall (high) is not the main problem: the hypotheses rank this cause " \
                   "above it (it is hypothesis 2, confidence 0.56)."  # fmt: skip
    assert "The finding: RT hog: kf_rthog ran 8 ms (medium). Hypothesis 1" in plain_summary((rt,), "vm")
    # Beside the log's lane the trace's lane is apart; alone it is the story.
    events = build_timeline((rt, stall), NotAvailable("no boot"))
    assert traces_apart(events) == ((str(trace), frozenset({rt.id})),)
    assert traces_apart(build_timeline((rt,), NotAvailable("no boot"))) == ()
    # The told inputs without a problem: the trace's is said as the trace's, not the machine's.
    low = _finding("dmesg.warning", "WARNING in kf_probe", (_ev(log, 2, "WARNING", 23.98),), severity=Severity.LOW)
    said = plain_summary((low,), "vm", apart=((str(trace), (rt,)),))
    assert said.startswith(f"The trace {trace} shows a problem on its own clock, which cannot be tied to the other "
                           "inputs: a real-time task kept a CPU from other tasks. The finding: RT hog: "
                           "kf_rthog ran 8 ms (medium). Hypothesis 1 of the ranking (confidence 0.72) names it. "
                           "kforensic found nothing at medium severity "
                           "or above in the other inputs from vm; 1 low finding to watch: WARNING in kf_probe"
                           ), said  # fmt: skip
    assert "Linux kernel on vm had a problem" not in said
    # The hypotheses' ranking decides: the stall's (log-bug, 0.8 x 0.7) before the hog's (0.5 x 0.9), not after.
    hog = replace(rt, severity=Severity.HIGH, confidence=0.5)
    assert "INFO: rcu detected stall (high)" in plain_summary((hog, stall), "vm")
    assert "RT hog: kf_rthog ran 8 ms (high)" in plain_summary((replace(hog, confidence=0.99), stall), "vm")


def test_a_user_tasks_hog_is_the_tasks_problem_a_kernel_threads_the_kernels(tmp_path: Path) -> None:
    """Review ue19 #3: the report said "The Linux kernel on vm had a problem: a task kept a CPU busy for too long"
    for a bash loop under chrt -f 50 (the kernel throttled it as it promises).  A hog of a task that is not a kernel
    thread is told as the task's, from its values (task, pid, CPU, run); a kernel thread's run is the kernel's."""
    _log, trace = _files(tmp_path)
    switch = _ev(trace, 1, "sched_switch", 797.7, LocatorKind.EVENT)
    hog = _finding(
        "sched-cpu-hog", "CPU hog: rthog ran 950.845 ms without a break on CPU1", (switch,),
        (Fact("longest run", "950.845 ms"),),
        subjects=(Subject(SubjectKind.TASK, "rthog", 22126), Subject(SubjectKind.CPU, "1")),
    )  # fmt: skip
    said = plain_summary((hog,), "vm")
    assert said.startswith(
        "On vm, a task, rthog (pid 22126), kept CPU1 from other tasks for 950.845 ms. The finding: CPU hog: rthog ran "
        "950.845 ms without a break on CPU1 (high)."
    ), said
    assert "Linux kernel" not in said
    rt = replace(hog, kind=FindingKind.SCHED_RT_HOG, id="rt")
    assert plain_summary((rt,), "vm").startswith("On vm, a real-time task, rthog (pid 22126), kept CPU1 from other ")
    kthread = replace(
        hog,
        facts=(*hog.facts, Fact(KERNEL_RUN_FACT, KERNEL_RUN)),
        subjects=(Subject(SubjectKind.TASK, "kworker/1:0", 42), Subject(SubjectKind.CPU, "1")),
    )
    assert plain_summary((kthread,), "vm").startswith(
        "The Linux kernel on vm had a problem: a kernel thread, kworker/1:0 (pid 42), kept CPU1 from other tasks for "
        "950.845 ms."
    )


def test_a_traces_problem_more_severe_than_the_logs_is_said_first(tmp_path: Path) -> None:
    """Review ue19 #6: once "sched: RT throttling activated" was read (medium), the log's one finding became the
    verdict and the trace's high hog beside it "20 finding(s) on its own clock".  A trace's problem more severe than
    any of the inputs told is said first, as the trace's; then the inputs' own; one as severe is not."""
    log, trace = _files(tmp_path)
    throttled = _finding("dmesg.rt-throttling", "sched: RT throttling activated", (_ev(log, 2, "sched: RT", 23.98),),
                         severity=Severity.MEDIUM)  # fmt: skip
    switch = _ev(trace, 1, "sched_switch", 797.7, LocatorKind.EVENT)
    hog = _finding("sched-cpu-hog", "CPU hog: rthog ran 950.845 ms", (switch,))
    said = plain_summary((throttled,), "vm", apart=((str(trace), (hog,)),))
    assert said.startswith(f"The trace {trace} shows a problem on its own clock, which cannot be tied to the other "
                           "inputs: a task kept a CPU from other tasks. The finding: CPU hog: rthog ran 950.845 ms "
                           "(high)."), said  # fmt: skip
    assert "On vm, real-time tasks ran a CPU's whole RT budget and the kernel throttled them" in said, said
    # Review ue20 #9: the wait's length is said (the budget's default, as a default), not "up to that long".
    budget = ("the CPU's other tasks waited up to that budget, 950.000 ms of every 1000.000 ms by default "
              "(sched_rt_runtime_us / sched_rt_period_us: the log does not print the values in force)")  # fmt: skip
    assert budget in said, said
    assert "that long" not in said, said
    level = plain_summary((throttled,), "vm", apart=((str(trace), (replace(hog, severity=Severity.MEDIUM),)),))
    assert level.startswith("On vm, real-time tasks ran"), level


def test_the_story_tells_the_problems_and_leaves_low_findings_of_ordinary_load_as_context(tmp_path: Path) -> None:
    """Review ue19 #8: beside a trace's high RT hog the story began "First (19193.313 s ...): Wakeup latency: python3
    waited 82.897 ms ... Then ...: CPU hog: callgrind-amd64 ran 17.865 ms", two low findings of ordinary load on the
    other CPU seconds before it, the hog fourth.  Where there is a problem, the steps are the problems; the lows stay
    on the timeline (counted as more findings)."""
    _log, trace = _files(tmp_path)

    def at(line: int, seconds: float) -> tuple[Evidence, ...]:
        return (_ev(trace, line, "sched_switch", seconds, LocatorKind.EVENT),)

    low = _finding(
        "sched-wakeup-latency", "Wakeup latency: python3 waited 82.897 ms", at(1, 93.3), severity=Severity.LOW
    )
    busy = _finding("sched-cpu-hog", "CPU hog: callgrind ran 17.865 ms", at(2, 94.7), severity=Severity.LOW)
    hog = _finding("sched-cpu-hog", "CPU hog: rthog ran 950.845 ms", at(3, 96.48))
    victim = _finding("sched-wakeup-latency", "Wakeup latency: victim waited 947.733 ms", at(4, 96.49),
                      severity=Severity.MEDIUM)  # fmt: skip
    text = narrative(build_timeline((low, busy, hog, victim), NotAvailable("no boot")))
    assert text.startswith("First (96.480 s since boot): CPU hog: rthog ran 950.845 ms. Then (96.490 s since boot): "
                           "Wakeup latency: victim waited 947.733 ms."), text  # fmt: skip
    assert "python3" not in text and "The timeline lists 2 more finding(s)" in text
    # Without a problem, the lows are the story.
    assert narrative(build_timeline((low, busy), NotAvailable("no boot"))).startswith("First (93.300 s since boot)")


def test_a_verdict_without_a_problem_counts_the_findings_of_traces_on_their_own_clocks(tmp_path: Path) -> None:
    """Review 11 #4: "1 finding(s) below medium: 1 info (context)" above a table of 20 (9 low): the count was of the
    told lane alone, and the traces on their own clocks (no problem in them) were left out of it."""
    from detectors.incident.timeline import traces_apart

    log, trace = _files(tmp_path)
    info = _finding("dmesg.warning", "kf_probe: note", (_ev(log, 2, "note", 23.98),), severity=Severity.INFO)
    switch = _ev(trace, 1, "sched_switch", 797.7, LocatorKind.EVENT)
    hogs = tuple(
        _finding("sched-cpu-hog", f"CPU hog: kf_{n} ran 8 ms", (switch,), severity=Severity.LOW) for n in ("a", "b")
    )
    events = build_timeline((info, *hogs), NotAvailable("no boot"))
    ((name, ids),) = traces_apart(events)
    assert ids == {h.id for h in hogs}
    said = plain_summary((info,), "vm", apart=((name, hogs),))
    assert said.startswith("kforensic found nothing at medium severity or above in the inputs from vm; 2 low findings "
                           "to watch: CPU hog: kf_a ran 8 ms; CPU hog: kf_b ran 8 ms; 3 finding(s) below medium: 2 low "
                           "(worth a look), 1 info (context)."), said  # fmt: skip


def test_a_verdict_beside_an_input_set_apart_claims_only_the_told_boots_inputs_for_its_host(tmp_path: Path) -> None:
    """ue22 #3: a clean 6.18 log (no host) set apart beside lager's 3.10 trace: "no problem in the inputs from lager"
    claimed the log for lager; the host is the told boot's, said of its inputs."""
    log, trace = _files(tmp_path)
    info = _finding("sched-dstate", "D-state blocking: kf_a", (_ev(trace, 1, "sched_switch", 7.1, LocatorKind.EVENT),),
                    severity=Severity.INFO)  # fmt: skip
    examined = (
        Examined(f"kernel log {log}", ("kernel reports",), standing="set apart: it names kernel 6.18.44, T 3.10.31"),
        Examined(f"trace {trace}", ("CPU hogs",)),
    )
    said = plain_summary((info,), "lager", examined)
    assert said.startswith("kforensic found no problem in the inputs of the boot this report tells, from lager: "), said
    assert plain_summary((info,), "lager", examined[1:]).startswith(
        "kforensic found no problem in the inputs from lager"
    )


def test_the_dump_and_the_log_reading_two_fault_addresses_is_a_contradiction(tmp_path: Path) -> None:
    # One crash (same title), two fault addresses: the log's report read a register dump's CR2 (a nested fault's)
    # and the merged finding stood on both values without a word (ue17 #2).
    log, _ = _files(tmp_path)
    title = "BUG: unable to handle kernel NULL pointer dereference in kf_null_member_read"
    crash = _finding("crash", title, (_ev(log, 4, "Kernel panic"),), (Fact("fault address (CR2)", "0x30"),),
                     Severity.CRITICAL)  # fmt: skip
    cr2 = _ev(log, 2, "INFO", name="cr2")
    logged = _finding("dmesg.null-deref", title, (_ev(log, 1, "BUG: kernel"), cr2),
                      (Fact("cr2", "0xffffffffc018efef"),), Severity.CRITICAL)  # fmt: skip
    merged, correlations = correlate((crash, logged))
    assert [c.rule for c in correlations] == ["same-crash", "contradiction"]
    (said,) = [f for f in merged if f.kind is FindingKind.CONTRADICTION]
    assert said.title.endswith("fault address (CR2): 0x30 vs 0xffffffffc018efef") and cr2 in said.evidence
    # The same address (as the log prints it, zero-padded): one crash, no contradiction.
    same = replace(logged, facts=(Fact("cr2", "0x0000000000000030"),))
    merged, correlations = correlate((crash, same))
    assert [c.rule for c in correlations] == ["same-crash"] and len(merged) == 1


def test_a_consequence_named_by_hypothesis_1_is_told_through_its_root(tmp_path: Path) -> None:
    """Corpus log 214: a general protection fault raised while KASAN's wild-memory-access was printed (its
    consequence, medium) is what hypothesis 1 reads; the headline named the fault "the main problem" and the KASAN
    report "not the main problem: the hypotheses rank this cause above it" (review ue18 #4).  Its harm counts at
    the root, and so does the hypothesis: the KASAN report is the main problem, told through its consequence."""
    from dataclasses import replace

    from forensics.model import Consequence
    from forensics.types.incident import Hypothesis

    log, _ = _files(tmp_path)
    kasan = _finding("dmesg.kasan", "KASAN: wild-memory-access in sg_read", (_ev(log, 2, "BUG: KASAN", 56.88),))
    gpf = _finding("dmesg.gpf", "general protection fault in __free_pages", (_ev(log, 5, "general protection", 56.89),),
                   severity=Severity.MEDIUM)  # fmt: skip
    gpf = replace(gpf, consequence_of=Consequence(kasan.id, kasan.title, "raised while it was printed"))
    ranking = (
        Hypothesis(1, "a wrong or stale object", 0.7, (gpf.id,), (), "crash> bt", (gpf.id,)),
        Hypothesis(2, "a kernel bug reported as KASAN", 0.35, (kasan.id,), (), "crash> bt", (kasan.id,)),
    )
    said = plain_summary((kasan, gpf), "vm", hypotheses=ranking)
    assert said == (
        "The Linux kernel on vm had a problem: the kernel touched memory it must not (caught by KASAN). The finding: "
        "KASAN: wild-memory-access in sg_read (high). Hypothesis 1 of the ranking (confidence 0.70) names it through "
        "general protection fault in __free_pages, which followed from it."
    ), said


def test_the_dump_and_the_log_disagreeing_on_cr2_name_the_dumps_fault_address_as_the_baseline(tmp_path: Path) -> None:
    """The CR2 contradiction (medium) named no baseline: it says the dump's address it compared the log's with."""
    from detectors.incident.hypotheses import DUMP_FAULT_ADDRESS, LOG_FAULT_ADDRESS

    log, _ = _files(tmp_path)
    title = "BUG: unable to handle kernel NULL pointer dereference in kf_null_member_read"
    crash = _finding("crash", title, (_ev(log, 4, "Kernel panic", 23.997144),), (Fact(DUMP_FAULT_ADDRESS, "0x30"),),
                     severity=Severity.CRITICAL)  # fmt: skip
    cr2 = _ev(log, 3, "CR2: 0000000000000040", 23.99, name=LOG_FAULT_ADDRESS)
    oops = _finding("dmesg.null-deref", title, (_ev(log, 2, "BUG: kernel NULL", 23.98), cr2),
                    (Fact(LOG_FAULT_ADDRESS, "0x40"),), severity=Severity.CRITICAL)  # fmt: skip
    merged, _ = correlate((crash, oops))
    [said] = [f for f in merged if f.kind is FindingKind.CONTRADICTION]
    assert said.severity is Severity.MEDIUM and said.baseline is not None
    assert said.baseline.value == "0x30" and said.baseline.source == f"the dump's crash, {log} line 4 [   23.997144]"
