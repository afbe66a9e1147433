"""The harm rules of detectors/sched/harm.py, one by one: each wait judged against its class's promise."""

from __future__ import annotations

import pytest

from detectors.sched import harm, rules
from forensics.model import Severity
from forensics.types.sched import (
    KERNEL_RUN_FACT,
    MOVED_MIGRATED,
    MOVED_UNKNOWN,
    Blame,
    Coverage,
    EventRef,
    IntervalStats,
    Move,
    SoftirqStats,
    Span,
    SwitchOut,
    TaskStats,
    Thresholds,
    TraceAnalysis,
    Victim,
    Wait,
)

LIMIT = Thresholds().wakeup_latency


def _task(pid: int, comm: str, prio: int = 120) -> TaskStats:
    none = IntervalStats(0, 0.0, None)
    return TaskStats(pid, comm, prio, 0.0, none, 0, none, None, none, None, (), (), 0.0, ())


def _wait(seconds: float, *behind: tuple[TaskStats, float]) -> Wait:
    ref = EventRef(1, 100.0, 0, "x")
    return Wait(Span(seconds, 100.0, 0, ref, ref), tuple(Blame(t.pid, t.comm, s) for t, s in behind), "sched_waking")


def _analysis(cpus: int, *tasks: TaskStats) -> TraceAnalysis:
    coverage = Coverage(cpus, tuple(range(cpus)), 0.0, 1.0, 0, 0, "")
    return TraceAnalysis((0.0, 1.0), "sched_waking", tasks, (), (), (), (), (), coverage, (), None, Thresholds())


def _judge(task: TaskStats, wait: Wait, cpus: int, *others: TaskStats) -> harm.Judgement | None:
    analysis = _analysis(cpus, task, *others)
    return harm.judge_wait(task, wait, analysis, {t.pid: t for t in analysis.tasks}, LIMIT)


@pytest.mark.parametrize(
    ("cpus", "nr", "period_ms"),
    [(1, 2, 6.0), (2, 2, 12.0), (4, 3, 18.0), (8, 8, 24.0), (64, 8, 24.0), (2, 20, 30.0)],
)
def test_cfs_period_follows_the_kernel_defaults(cpus: int, nr: int, period_ms: float) -> None:
    assert harm.cfs_period(nr, cpus) == pytest.approx(period_ms / 1e3)


def _judge_on(model: str, task: TaskStats, wait: Wait, *others: TaskStats) -> harm.Judgement | None:
    analysis = _analysis(2, task, *others)._replace(preemption=model)
    return harm.judge_wait(task, wait, analysis, {t.pid: t for t in analysis.tasks}, LIMIT)


def test_an_rt_task_is_promised_microseconds_on_a_preemptible_kernel() -> None:
    rt, cfs = _task(1, "irq/24-eth0", 49), _task(2, "gzip")
    assert _judge_on("full", rt, _wait(50e-6, (cfs, 50e-6)), cfs) is None
    low = _judge_on("full", rt, _wait(0.5e-3, (cfs, 0.5e-3)), cfs)
    medium = _judge_on("full", rt, _wait(2e-3, (cfs, 2e-3)), cfs)
    high = _judge_on("rt", rt, _wait(20e-3, (cfs, 20e-3)), cfs)
    assert low and medium and high
    assert (low.severity, medium.severity, high.severity) == (Severity.LOW, Severity.MEDIUM, Severity.HIGH)
    assert medium.value == harm.RT_PROMISE and "sched-rt-group" in medium.source


def test_with_the_preemption_model_unknown_an_rt_wait_gets_the_severity_either_model_gives() -> None:
    # A trace alone does not say whether the kernel preempts kernel code; Debian, Ubuntu and RHEL default to
    # voluntary. Medium on a preemptible kernel, low on the others: low, saying the other; beyond the kernel's
    # own bound (100 ms) medium under both, and the preemptible rule's high is not claimed.
    rt, cfs = _task(1, "irq/24-eth0", 49), _task(2, "gzip")
    assert _judge(rt, _wait(50e-6, (cfs, 50e-6)), 2, cfs) is None
    few_ms = _judge(rt, _wait(2e-3, (cfs, 2e-3)), 2, cfs)
    assert few_ms is not None and few_ms.severity is Severity.LOW and few_ms.value == harm.RESCHED_LATENCY_WARN
    assert "preemption model: not known" in few_ms.baseline
    assert few_ms.why.endswith("the next scheduling point if this kernel does not preempt kernel code "
                               "(medium on a preemptible kernel)")  # fmt: skip
    stuck = _judge(rt, _wait(0.15, (cfs, 0.15)), 2, cfs)
    assert stuck is not None and stuck.severity is Severity.MEDIUM and "beyond the kernel's bound" in stuck.why
    # an RT task behind an RT task of the same or higher priority is the class working, whatever the model
    higher = _task(3, "watchdog", 0)
    assert _judge(rt, _wait(5e-3, (higher, 5e-3)), 2, higher).severity is Severity.LOW  # type: ignore[union-attr]


def test_an_rt_task_on_a_kernel_without_preemption_waits_for_the_next_scheduling_point() -> None:
    # A healthy PREEMPT_NONE machine (dmesg: "Dynamic Preempt: none"): migration/1 woke while cc1 ran in the
    # kernel and ran 1.368 ms later, when cc1 blocked. A preemptible kernel promises 100 us (medium, as above);
    # this one preempts kernel code only at explicit points, up to the kernel's own warning bound (100 ms).
    stopper, cc1 = _task(1, "migration/1", 0), _task(2, "cc1")
    wait = _wait(1.368e-3, (cc1, 1.368e-3))
    analysis = _analysis(2, stopper, cc1)
    by_pid = {t.pid: t for t in analysis.tasks}
    preemptible = harm.judge_wait(stopper, wait, analysis._replace(preemption="full"), by_pid, LIMIT)
    assert preemptible is not None and preemptible.severity is Severity.MEDIUM
    for model in ("none", "voluntary", "none or voluntary"):
        unpreempted = analysis._replace(preemption=model)
        low = harm.judge_wait(stopper, wait, unpreempted, by_pid, LIMIT)
        assert low is not None and low.severity is Severity.LOW and low.value == harm.RESCHED_LATENCY_WARN
        assert f"preemption model: {model}" in low.baseline and "does not preempt kernel code" in low.why
        stuck = harm.judge_wait(stopper, _wait(0.15, (cc1, 0.15)), unpreempted, by_pid, LIMIT)
        assert stuck is not None and stuck.severity is Severity.MEDIUM  # beyond the kernel's bound
        assert harm.judge_wait(stopper, _wait(1.5, (cc1, 1.5)), unpreempted, by_pid, LIMIT).severity is Severity.HIGH  # type: ignore[union-attr]


def test_an_rt_task_behind_a_higher_priority_rt_task_is_the_class_working() -> None:
    rt, higher = _task(1, "worker", 89), _task(2, "watchdog", 0)
    judged = _judge(rt, _wait(5e-3, (higher, 5e-3)), 2, higher)
    assert judged is not None and judged.severity is Severity.LOW and "priority" in judged.baseline


def test_a_cfs_task_behind_an_rt_task_is_starved() -> None:
    victim, rcu, rt = _task(1, "kf_victim"), _task(3, "rcu_preempt"), _task(2, "kf_rthog", 89)
    judged = _judge(victim, _wait(8e-3, (rt, 8e-3)), 2, rt)
    assert judged is not None and judged.severity is Severity.MEDIUM and judged.value == LIMIT
    sensitive = _judge(rcu, _wait(10e-3, (rt, 10e-3)), 2, rt)
    assert sensitive is not None and sensitive.severity is Severity.HIGH  # a latency-sensitive kernel thread, 5x
    assert _judge(victim, _wait(1.5e-3, (rt, 1.5e-3)), 2, rt) is None  # under the reporting threshold


def test_a_fair_share_wait_is_load_not_a_fault() -> None:
    ls, a, b = _task(1, "ls"), _task(2, "python"), _task(3, "gzip")
    assert _judge(ls, _wait(11.5e-3, (a, 6e-3), (b, 5.5e-3)), 2, a, b) is None  # within the 12 ms period
    over = _judge(ls, _wait(90e-3, (a, 50e-3), (b, 40e-3)), 2, a, b)
    assert over is not None and over.severity is Severity.LOW and "CFS latency period" in over.baseline
    assert "sched-design-CFS" in over.source
    # A text trace names no kernel release: the CFS yardstick is said to be assumed, EEVDF's possibility named;
    # past it the wait is not called a fair share.
    assert "assumed: the trace names no kernel release" in over.baseline and "EEVDF" in over.baseline
    assert "fair share" not in over.why and "more than fair sharing gives it" in over.why


def _judge_release(release: str, task: TaskStats, wait: Wait, *others: TaskStats) -> harm.Judgement | None:
    analysis = _analysis(2, task, *others)._replace(kernel_release=release)
    return harm.judge_wait(task, wait, analysis, {t.pid: t for t in analysis.tasks}, LIMIT)


def test_on_a_6_6_or_later_kernel_a_cfs_task_is_judged_by_eevdf_slices_not_the_removed_cfs_period() -> None:
    # EEVDF (6.6, commit 147f3efaa241) removed sched_latency_ns: 3 tasks on 2 CPUs run within 3 slices of
    # 0.75 ms x 2 = 4.5 ms, where CFS's period was 12 ms.
    ls, a, b = _task(1, "ls"), _task(2, "python"), _task(3, "gzip")
    wait = _wait(9e-3, (a, 5e-3), (b, 4e-3))
    for release in ("6.18.44-fc-v1272", "6.6.0", "7.0-rc1"):
        eevdf = _judge_release(release, ls, wait, a, b)
        assert eevdf is not None and eevdf.value == pytest.approx(4.5e-3)
        assert eevdf.baseline.startswith("EEVDF slices for 3 runnable task(s) on 2 CPU(s), kernel " + release)
        assert "base_slice_ns" in eevdf.source and "sched_latency" not in eevdf.source + eevdf.baseline
        assert "2.0 times that" in eevdf.why
    for release in ("6.1.0-28-amd64", "5.10.0"):  # CFS's own kernels: its period, the release named
        assert _judge_release(release, ls, wait, a, b) is None  # within 12 ms
        cfs = _judge_release(release, ls, _wait(90e-3, (a, 50e-3), (b, 40e-3)), a, b)
        assert cfs is not None and cfs.baseline.endswith(f"kernel {release}") and "assumed" not in cfs.baseline
    assert harm.scheduler_of("") == harm.scheduler_of("unknown") == ""


def test_a_negative_nice_task_kept_past_the_period_is_not_called_a_fair_share() -> None:
    # The reviewer's trace: tokio-rt-worker (prio 110, nice -10) waited 73.757 ms behind three nice-0 tasks.
    tokio, mypy, py1, py2 = _task(1, "tokio-rt-worker", 110), _task(2, "mypy"), _task(3, "python"), _task(4, "python")
    judged = _judge(tokio, _wait(73.757e-3, (mypy, 46.3e-3), (py1, 15.8e-3), (py2, 11.4e-3)), 2, mypy, py1, py2)
    assert judged is not None and judged.severity is Severity.LOW
    assert "fair share" not in judged.why and "nice -10: its weight owes it more than an equal share" in judged.why


def test_a_latency_sensitive_kernel_thread_kept_an_order_of_magnitude_too_long_is_a_problem() -> None:
    ksoftirqd, hog = _task(1, "ksoftirqd/1"), _task(2, "gzip")
    assert _judge(ksoftirqd, _wait(85e-3, (hog, 85e-3)), 2, hog).severity is Severity.LOW  # type: ignore[union-attr]
    assert _judge(ksoftirqd, _wait(200e-3, (hog, 200e-3)), 2, hog).severity is Severity.LOW  # type: ignore[union-attr]
    judged = _judge(ksoftirqd, _wait(300e-3, (hog, 300e-3)), 2, hog)  # 25 periods of 12 ms
    assert judged is not None and judged.severity is Severity.MEDIUM
    plain = _judge(_task(3, "bash"), _wait(300e-3, (hog, 300e-3)), 2, hog)
    assert plain is not None and plain.severity is Severity.LOW  # an ordinary task: load
    stalled = _judge(_task(3, "bash"), _wait(1.5, (hog, 1.5)), 2, hog)
    assert stalled is not None and stalled.severity is Severity.MEDIUM  # 125 periods: no fair share explains it


def test_ksoftirqd_is_judged_by_its_softirqs_when_the_trace_times_them() -> None:
    # ksoftirqd/1 kept 29 CFS periods (352 ms) while gzip and find took turns on a loaded 2-CPU machine: without
    # softirq events its wait is the only sign of deferred softirqs (medium, as above); with softirq_raise/entry
    # traced, the softirqs' own raise-to-entry wait says what the delay cost (they also run at interrupt exit).
    ksoftirqd, gzip, find = _task(1, "ksoftirqd/1"), _task(2, "gzip"), _task(3, "find")
    wait = _wait(352e-3, (gzip, 225e-3), (find, 127e-3))
    blind = _judge(ksoftirqd, wait, 2, gzip, find)
    assert blind is not None and blind.severity is Severity.MEDIUM
    ref = EventRef(1, 100.0, 0, "x")
    timed = SoftirqStats(
        4, "BLOCK", IntervalStats(9, 1e-3, None), IntervalStats(9, 9e-3, Span(4e-3, 100.0, 0, ref, ref)), None
    )
    analysis = _analysis(2, ksoftirqd, gzip, find)._replace(softirqs=(timed,))
    judged = harm.judge_wait(ksoftirqd, wait, analysis, {t.pid: t for t in analysis.tasks}, LIMIT)
    assert judged is not None and judged.severity is Severity.LOW and "raise-to-entry" in judged.why
    rcu = _task(4, "rcu_preempt")  # other latency-sensitive threads are judged as before
    kept = harm.judge_wait(
        rcu, wait, analysis._replace(tasks=(*analysis.tasks, rcu)), {1: ksoftirqd, 2: gzip, 3: find, 4: rcu}, LIMIT
    )
    assert kept is not None and kept.severity is Severity.MEDIUM


def test_a_low_weight_waiter_is_judged_against_a_longer_period() -> None:
    niced, a = _task(1, "cc1", 130), _task(2, "python", 120)
    judged = _judge(niced, _wait(100e-3, (a, 100e-3)), 2, a)
    assert judged is None  # nice 10 behind nice 0: 12 ms x 1024/110 = 112 ms
    assert harm.weight(120) == 1024 and harm.weight(130) == 110


def test_a_brief_heavy_or_rt_run_does_not_stretch_the_period() -> None:
    # A healthy 2-CPU machine: ksoftirqd/1 waited 300 ms behind gzip (nice 0); meanwhile a highpri kworker
    # (nice -20) ran 30 us and migration/1 (RT) 15 us. Counted as tasks, not for their time, they made the
    # period 58 times longer (696 ms: no finding); each for its time, the waiter shared the CPU with nice 0.
    ksoftirqd, hog = _task(1, "ksoftirqd/1"), _task(2, "gzip")
    highpri, migration = _task(3, "kworker/1:1H", 100), _task(4, "migration/1", 0)
    wait = _wait(300e-3, (hog, 299.955e-3), (highpri, 30e-6), (migration, 15e-6))
    judged = _judge(ksoftirqd, wait, 2, hog, highpri, migration)
    assert judged is not None and judged.severity is Severity.MEDIUM  # 25 periods of 12 ms, as behind gzip alone
    assert judged.value == pytest.approx(12e-3, rel=0.01) and "weight" not in judged.baseline
    by_pid = {t.pid: t for t in (ksoftirqd, hog, highpri, migration)}
    assert harm.weight_scale(ksoftirqd, wait, by_pid) == pytest.approx(1.0, abs=0.01)
    # A waiter that shared the CPU with heavier tasks for most of the wait is still given their weight.
    niced = _task(5, "cc1", 130)
    assert harm.weight_scale(niced, wait, by_pid) == pytest.approx(1024 / 110, rel=0.01)


def test_kernel_threads_and_latency_sensitive_tasks() -> None:
    assert harm.kernel_thread("kworker/0:1") and harm.kernel_thread("jbd2/vda1-8")
    assert not harm.kernel_thread("python3")
    assert harm.latency_sensitive(_task(1, "rcu_preempt")) and harm.latency_sensitive(_task(2, "app", 50))
    assert not harm.latency_sensitive(_task(3, "kswapd0"))


def _runner(pid: int, comm: str, run: float, waiter: TaskStats | None) -> TaskStats:
    ref = EventRef(1, 100.0, 0, "x")
    worst = Span(run, 100.0, 0, ref, ref)
    victims = (Victim(waiter.pid, waiter.comm, run, 1, run),) if waiter else ()
    # Ended by its switch-out (to the idle task): a run without one is still open where the input ends, a lower bound
    out = SwitchOut(pid, 120, "S", 0, 120)
    return _task(pid, comm)._replace(runs=IntervalStats(1, run, worst, out), hog_runs=1,
                                     delay_caused=run if waiter else 0.0, victims=victims)  # fmt: skip


@pytest.mark.parametrize(
    ("comm", "waited", "kind", "kernel_advice"),
    [
        ("python3", False, "Long run", False),  # a busy loop on a CPU nobody needed: information
        ("python3", True, "CPU hog", False),  # a user task: never kernel advice
        ("kworker/0:1", True, "Kernel-mode run", True),  # a kernel thread past the CFS period: no resched point
    ],
)
def test_long_runs_are_as_severe_as_the_waits_they_caused(
    comm: str, waited: bool, kind: str, kernel_advice: bool
) -> None:
    from detectors.sched.findings import cpu_hogs

    victim = _task(9, "rcu_preempt")
    runner = _runner(1, comm, 0.5, victim if waited else None)
    victim = victim._replace(worst_wakeup=_wait(0.5, (runner, 0.5)), wakeup=IntervalStats(1, 0.5, None))
    (found,) = cpu_hogs(_analysis(2, runner, victim), "t.txt")
    assert found.title.startswith(kind) and found.baseline is not None
    assert any("cond_resched" in s for s in found.next_steps) is kernel_advice
    assert (found.severity >= Severity.MEDIUM) is waited  # rcu_preempt kept 0.5 s: a problem; nobody: info
    # The kernel is blamed by the incident verdict only for a kernel thread's run (review ue19 #3).
    assert (found.fact(KERNEL_RUN_FACT) is not None) is comm.startswith("kworker")


def test_a_kernel_mode_run_is_judged_by_the_traced_kernels_own_fair_class() -> None:
    # kworker ran 10 ms while rcu_preempt waited: past EEVDF's 2 slices (3 ms on 2 CPUs) on 6.18, within CFS's 12 ms
    # period on 6.1; with no release named, CFS's is said to be assumed.
    from detectors.sched.findings import cpu_hogs

    victim = _task(9, "rcu_preempt")
    runner = _runner(1, "kworker/0:1", 10e-3, victim)
    victim = victim._replace(worst_wakeup=_wait(10e-3, (runner, 10e-3)), wakeup=IntervalStats(1, 10e-3, None))
    analysis = _analysis(2, runner, victim)
    (eevdf,) = cpu_hogs(analysis._replace(kernel_release="6.18.44-fc-v1272"), "t.txt")
    assert eevdf.title.startswith("Kernel-mode run") and eevdf.baseline is not None
    assert eevdf.baseline.name == "EEVDF slices for 2 runnable task(s) on 2 CPU(s), kernel 6.18.44-fc-v1272"
    assert "base_slice_ns" in eevdf.baseline.source and "sched-design-CFS" not in eevdf.baseline.source
    assert "longer than the EEVDF slices of 2 tasks (3.000 ms)" in eevdf.summary
    (cfs,) = cpu_hogs(analysis._replace(kernel_release="6.1.0-28-amd64"), "t.txt")
    assert not cfs.title.startswith("Kernel-mode run")  # within the 12 ms period
    (unknown,) = cpu_hogs(_analysis(2, _runner(1, "kworker/0:1", 0.5, victim), victim), "t.txt")
    assert unknown.baseline is not None and "assumed: the trace names no kernel release" in unknown.baseline.name


def test_a_thread_serving_request_spans_is_latency_sensitive() -> None:
    server, hog = _task(7, "app-worker"), _task(2, "gzip")
    wait = _wait(300e-3, (hog, 300e-3))
    analysis = _analysis(2, server, hog)
    by_pid = {t.pid: t for t in analysis.tasks}
    plain = harm.judge_wait(server, wait, analysis, by_pid, LIMIT)
    served = harm.judge_wait(server, wait, analysis._replace(span_tids=frozenset({7})), by_pid, LIMIT)
    assert plain is not None and served is not None
    assert (plain.severity, served.severity) == (Severity.LOW, Severity.MEDIUM)


def _moved_wait(seconds: float, moved: str, *behind: tuple[TaskStats, float, int]) -> Wait:
    """A wait queued on CPU0 and switched in on CPU1; ``migrated``: a sched_migrate_task moved it at 100.05 (who ran
    on each CPU while it waited there: Blame.cpu); ``unknown``: it moved unseen (as_judged: nobody named)."""
    ref = EventRef(1, 100.0, 1, "x")
    moves = (Move(100.05, 0, 1, EventRef(2, 100.05, 1, "m")),) if moved == MOVED_MIGRATED else ()
    blames = tuple(Blame(t.pid, t.comm, s, t.prio, cpu) for t, s, cpu in behind)
    return Wait(Span(seconds, 100.0, 1, ref, ref), blames, "sched_waking", queued_cpu=0, moved=moved, moves=moves)


def test_a_moved_wait_is_judged_against_the_runnable_tasks_of_each_cpu_it_waited_on() -> None:
    # ue19 #1: a wait that moved was judged against "1 + the tasks named on every CPU" as if one CPU's (a task that
    # ran on both counted twice), and one that moved unseen against "1 runnable task(s)": a healthy machine's bash
    # waited 164.819 ms, "109.9 times" 1.5 ms, medium.  Now each CPU's share is its own tasks', added; a share
    # that cannot be computed is unknown, low.
    bash, chromium, cc1 = _task(1, "bash"), _task(2, "chromium"), _task(3, "cc1")
    release = "6.18.44-fc-v1300"
    migrated = _moved_wait(0.1648, MOVED_MIGRATED, (chromium, 0.03, 0), (cc1, 0.02, 0), (chromium, 0.05, 1))
    judged = _judge_release(release, bash, migrated, chromium, cc1)
    assert judged is not None and judged.severity is Severity.LOW
    assert judged.baseline == (
        "EEVDF slices of each CPU it was queued on, added (3 runnable task(s) on CPU0, 2 runnable task(s) on CPU1; "
        f"2 CPU(s)), kernel {release}"
    )
    assert judged.value == pytest.approx(harm.eevdf_slices(3, 2) + harm.eevdf_slices(2, 2))
    unseen = _judge_release(release, bash, _moved_wait(0.1648, MOVED_UNKNOWN), chromium, cc1)
    assert unseen is not None and unseen.severity is Severity.LOW and unseen.value == LIMIT
    assert unseen.baseline.startswith("fair share: unknown (it moved between CPUs at a time the trace does not show")
    assert "its fair share is unknown" in unseen.why and "times" not in unseen.why
    # a wait that names as many tasks as the analysis keeps (rules.BLAMES) says its count is a floor
    many = [_task(10 + k, f"t{k}") for k in range(rules.BLAMES)]
    crowded = _judge_release(release, bash, _wait(0.5, *((t, 0.1) for t in many)), *many)
    assert crowded is not None and crowded.baseline.startswith(f"EEVDF slices for at least {rules.BLAMES + 1} runnable")


def test_a_starved_wait_says_which_rule_rated_it() -> None:
    # ue19 #5: behind the same RT hog, ksoftirqd/1 (876.801 ms) and kworker/1:0 (308.701 ms) were high, kdamond.0
    # (948.865 ms) and the user's victim (947.733 ms) medium, each "judged against CFS time while an RT task runs:
    # none", with no word of why.  The reason now names the rule: whose delay it is, and the ratio it passed.
    hog = _task(9, "rthog", 49)
    for comm, ms, severity, said in (
        ("kworker/1:0", 308.701, Severity.HIGH, "high: kworker/1:0 is a kernel thread that keeps the kernel's "
         "deferred work (workqueues) going, kept more than 4 times --latency-ms"),
        ("ksoftirqd/1", 876.801, Severity.HIGH, "high: ksoftirqd/1 is a kernel thread that keeps the softirqs "
         "deferred to it going"),
        ("victim", 947.733, Severity.MEDIUM, "medium: high is for a waiter whose delay holds up others"),
        ("kworker/1:1", 3e-3 * 1e3, Severity.MEDIUM, "medium: kworker/1:1 is a kernel thread that keeps the "
         "kernel's deferred work (workqueues) going, but kept under 4 times --latency-ms"),
    ):  # fmt: skip
        waiter = _task(1, comm)
        judged = _judge(waiter, _wait(ms / 1e3, (hog, ms / 1e3)), 2, hog)
        assert judged is not None and judged.severity is severity and said in judged.why, (comm, judged)
    # a fair-share wait raised for a kernel thread says so too
    cc1 = _task(2, "cc1")
    rcu = _judge_release("6.18.44", _task(1, "rcu_preempt"), _wait(0.1, (cc1, 0.1)), cc1)
    assert rcu is not None and rcu.severity is Severity.MEDIUM
    assert "; medium: rcu_preempt is a kernel thread that keeps RCU's grace periods going, over 20 times" in rcu.why


def test_a_run_within_its_victims_baseline_is_a_long_run_and_its_delay_says_how_it_is_counted() -> None:
    # ue19 #13: "CPU hog: kforensic ran 7.997 ms" beside the 9.000 ms baseline its victims' waits were judged
    # against (low: load), and "delay caused to others: 14702.554 ms" beside "total runtime: 6861.880 ms" with no
    # word that overlapping waits of several tasks each count.
    from detectors.sched.findings import cpu_hogs

    victim = _task(9, "bash")
    others = [_task(20 + k, f"t{k}") for k in range(4)]
    for run, title in (
        (7.997e-3, "Long run: kforensic ran 7.997 ms on CPU0, within the 9.000 ms baseline; tasks behind it waited "
                   "past their fair share (load)"),
        (12e-3, "CPU hog: kforensic ran 12.000 ms without a break on CPU0"),
    ):  # fmt: skip
        runner = _runner(1, "kforensic", run, victim)
        behind = ((runner, run), *((t, 0.02) for t in others))
        waited = victim._replace(worst_wakeup=_wait(0.2, *behind), wakeup=IntervalStats(1, 0.2, None))
        analysis = _analysis(2, runner, waited, *others)._replace(kernel_release="6.18.44")
        (found,) = cpu_hogs(analysis, "t.txt")
        assert found.title == title and found.severity is Severity.LOW
        facts = {f.name: f.value for f in found.facts}
        assert facts["delay caused to others"] == f"{run * 1e3:.3f} ms"
        assert "summed over the tasks: waits that overlap each count" in facts["delay counted as"]


def test_a_long_run_within_an_assumed_baseline_says_it_is_assumed() -> None:
    # ue20 #8: "Long run: wl_hog ran 7.957 ms on CPU0, within the 24.000 ms baseline" from a text trace (no kernel
    # release: CFS's period assumed), "within the 10.500 ms baseline" from the same run's trace.dat (EEVDF, 6.18):
    # the title, all the findings table shows, dropped the baseline's "(assumed: ...)".
    from detectors.sched.findings import cpu_hogs

    victim = _task(9, "bash")
    others = [_task(20 + k, f"t{k}") for k in range(4)]
    runner = _runner(1, "kforensic", 7.997e-3, victim)
    behind = ((runner, 7.997e-3), *((t, 0.02) for t in others))
    waited = victim._replace(worst_wakeup=_wait(0.2, *behind), wakeup=IntervalStats(1, 0.2, None))
    (found,) = cpu_hogs(_analysis(2, runner, waited, *others), "t.txt")
    assert found.title.startswith(
        "Long run: kforensic ran 7.997 ms on CPU0, within the 12.000 ms baseline (assumed: the trace names no kernel "
        "release; a 6.6+ kernel schedules by EEVDF"
    )
    assert found.title.endswith("; tasks behind it waited past their fair share (load)")


def test_a_yardstick_names_itself_from_its_parts() -> None:
    # ue20 #12: the moved wait's baseline name was made by cutting "the " off the rendered "the EEVDF slices".
    eevdf, cfs = harm.fair_yardstick(2, 2, "6.18.44"), harm.fair_yardstick(2, 2, "")
    assert (eevdf.noun, eevdf.called, eevdf.release, eevdf.assumed) == (
        "EEVDF slices",
        "the EEVDF slices",
        ", kernel 6.18.44",
        "",
    )
    assert (cfs.noun, cfs.release) == ("CFS latency period", "")
    assert cfs.assumed.startswith(" (assumed: the trace names no kernel release")


def test_a_kernel_mode_run_whose_victims_waited_within_their_share_is_low() -> None:
    # kdamond.0 ran 10 ms on a 6.18 kernel (past EEVDF's 3 ms two-slice yardstick) while a task waited 1 ms behind it:
    # within its fair share, so no harm: low with the kernel advice, not medium (a healthy VM's trace, review ue20).
    from detectors.sched.findings import cpu_hogs

    victim = _task(9, "python3")
    runner = _runner(1, "kdamond.0", 10e-3, victim)
    victim = victim._replace(worst_wakeup=_wait(1e-3, (runner, 1e-3)), wakeup=IntervalStats(1, 1e-3, None))
    (found,) = cpu_hogs(_analysis(2, runner, victim)._replace(kernel_release="6.18.44-fc-v1272"), "t.txt")
    assert found.title.startswith("Kernel-mode run: kdamond.0 ran 10.000 ms"), found.title
    assert found.severity is Severity.LOW, found.severity
    assert any("cond_resched" in s for s in found.next_steps)
