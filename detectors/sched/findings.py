"""Findings from a :class:`TraceAnalysis`: hogs, RT starvation, latencies, softirq starvation, long IRQs, D state.

Each rule of :data:`RULES` is a function from the analysis to findings; they
run in order and each cites the trace lines that open and close the interval
it reports (switch-in and switch-out of a run, waking and switch-in of a
wait, raise and entry of a softirq...).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from detectors.sched.model import ClockCheck, EventRef, Span, TaskStats, TraceAnalysis, Wait
from forensics.model import (
    Clock,
    Evidence,
    Fact,
    Finding,
    FindingKind,
    Locator,
    LocatorKind,
    Severity,
    Subject,
    SubjectKind,
    Timestamp,
    finding_id,
)

DETECTOR = "detectors.sched"
MAX_PER_RULE = 10  # findings per rule, worst first: a busy trace must not bury the report


def fmt_ms(seconds: float) -> str:
    """Seconds as milliseconds with microsecond precision, e.g. ``8.028 ms``."""
    return f"{seconds * 1e3:.3f} ms"


def _evidence(source: str, span: Span) -> tuple[Evidence, ...]:
    """The two lines that bound an interval (one when they are the same line)."""
    refs = [span.begin] if span.begin.line_no == span.end.line_no else [span.begin, span.end]
    return tuple(
        Evidence(
            source=source,
            locator=Locator(LocatorKind.EVENT, ref.line_no, name=f"CPU{ref.cpu}" if ref.cpu >= 0 else None),
            excerpt=ref.text,
            timestamp=Timestamp(ref.ts, Clock.MONOTONIC) if ref.ts > 0 else None,
            cpu=ref.cpu if ref.cpu >= 0 else None,
        )
        for ref in refs
    )


def _confidence(analysis: TraceAnalysis) -> tuple[float, str]:
    if analysis.coverage.note:
        return 0.75, f"measured between trace events, but: {analysis.coverage.note}"
    return 0.95, "measured between the trace events that open and close the interval"


def _behind_text(wait: Wait) -> str:
    if not wait.behind:
        return "no other task ran on that CPU meanwhile (IRQs, softirqs or the CPU was idle)"
    parts = [f"{b.comm} (pid {b.pid}) {fmt_ms(b.seconds)}" for b in wait.behind[:3]]
    return "meanwhile the CPU ran " + ", ".join(parts)


def _task_label(task: TaskStats) -> str:
    return f"{task.comm} (pid {task.pid})"


def cpu_hogs(analysis: TraceAnalysis, source: str) -> list[Finding]:
    """Non-RT tasks with single runs longer than the hog threshold."""
    limit = analysis.thresholds.hog
    hogs = [t for t in analysis.tasks if not t.is_rt and t.runs.worst and t.runs.worst.duration > limit]
    hogs.sort(key=lambda t: -(t.runs.worst.duration if t.runs.worst else 0.0))
    confidence, reason = _confidence(analysis)
    out = []
    for task in hogs[:MAX_PER_RULE]:
        run = task.runs.worst
        assert run is not None
        out.append(
            Finding(
                id=finding_id("sched-cpu-hog", task.comm),
                kind=FindingKind.SCHED_CPU_HOG,
                title=f"CPU hog: {task.comm} ran {fmt_ms(run.duration)} without a break on CPU{run.cpu}",
                severity=Severity.HIGH if run.duration > 4 * limit else Severity.MEDIUM,
                confidence=confidence,
                confidence_reason=reason,
                summary=(
                    f"{_task_label(task)} ran {task.hog_runs} time(s) longer than {fmt_ms(limit)}; the longest run "
                    f"started at {run.start:.6f} on CPU{run.cpu} and lasted {fmt_ms(run.duration)}. Other tasks "
                    f"on that CPU waited {fmt_ms(task.delay_caused)} in total while it ran."
                ),
                evidence=_evidence(source, run),
                facts=(
                    Fact("longest run", fmt_ms(run.duration)),
                    Fact("runs over threshold", str(task.hog_runs)),
                    Fact("total runtime", fmt_ms(task.runtime)),
                ),
                next_steps=(
                    f"kforensic trace --task {task.pid} "
                    f"--around {run.start + run.duration:.6f}:{run.duration * 1e3 + 20:.0f} <trace>",
                    "check whether the task can yield or be split (cond_resched in kernel loops)",
                ),
                detector=DETECTOR,
                subjects=(Subject(SubjectKind.TASK, task.comm, task.pid), Subject(SubjectKind.CPU, str(run.cpu))),
            )
        )
    return out


def rt_hogs(analysis: TraceAnalysis, source: str) -> list[Finding]:
    """RT tasks with long runs; high severity when other tasks waited behind them."""
    limit = analysis.thresholds.hog
    hogs = [t for t in analysis.tasks if t.is_rt and t.runs.worst and t.runs.worst.duration > limit]
    hogs.sort(key=lambda t: -t.delay_caused)
    by_pid = {t.pid: t for t in analysis.tasks}
    confidence, reason = _confidence(analysis)
    out = []
    for task in hogs[:MAX_PER_RULE]:
        run = task.runs.worst
        assert run is not None
        evidence = list(_evidence(source, run))
        victims = []
        for blame in task.victims:
            victim = by_pid.get(blame.pid)
            wait = victim.worst_wakeup if victim else None
            if victim and wait and wait.behind and wait.behind[0].pid == task.pid:
                victims.append(f"{victim.comm} (pid {victim.pid}) waited {fmt_ms(wait.span.duration)} after wakeup")
                if len(evidence) < 6:
                    evidence.extend(_evidence(source, wait.span))
        delayed = task.delay_caused > 0
        out.append(
            Finding(
                id=finding_id("sched-rt-hog", task.comm),
                kind=FindingKind.SCHED_RT_HOG,
                title=(
                    f"RT hog: {task.comm} (prio {task.prio}) ran {fmt_ms(run.duration)} on CPU{run.cpu}"
                    + (", starving other tasks" if delayed else "")
                ),
                severity=Severity.HIGH if delayed else Severity.MEDIUM,
                confidence=confidence,
                confidence_reason=reason,
                summary=(
                    f"Real-time task {_task_label(task)} ran {task.hog_runs} time(s) longer than {fmt_ms(limit)} "
                    f"(longest {fmt_ms(run.duration)} from {run.start:.6f} on CPU{run.cpu}); other tasks waited "
                    f"{fmt_ms(task.delay_caused)} behind it" + (f": {'; '.join(victims)}." if victims else ".")
                ),
                evidence=tuple(evidence),
                facts=(
                    Fact("longest run", fmt_ms(run.duration)),
                    Fact("runs over threshold", str(task.hog_runs)),
                    Fact("delay caused to others", fmt_ms(task.delay_caused)),
                    *(Fact("delayed", f"{b.comm} (pid {b.pid}) {fmt_ms(b.seconds)}") for b in task.victims[:3]),
                ),
                next_steps=(
                    "check the task's RT priority and whether it must busy-wait; RT throttling "
                    "(/proc/sys/kernel/sched_rt_runtime_us) only limits it to 95% per second",
                    f"kforensic trace --task {task.pid} <trace>",
                ),
                detector=DETECTOR,
                subjects=(Subject(SubjectKind.TASK, task.comm, task.pid), Subject(SubjectKind.CPU, str(run.cpu))),
            )
        )
    return out


def wakeup_latency(analysis: TraceAnalysis, source: str) -> list[Finding]:
    """Tasks whose worst wakeup-to-run latency exceeds the threshold, and who ran meanwhile."""
    limit = analysis.thresholds.wakeup_latency
    slow = [t for t in analysis.tasks if t.worst_wakeup and t.worst_wakeup.span.duration > limit]
    slow.sort(key=lambda t: -(t.worst_wakeup.span.duration if t.worst_wakeup else 0.0))
    confidence, reason = _confidence(analysis)
    out = []
    for task in slow[:MAX_PER_RULE]:
        wait = task.worst_wakeup
        assert wait is not None
        culprit = f", behind {wait.behind[0].comm}" if wait.behind else ""
        out.append(
            Finding(
                id=finding_id("sched-wakeup-latency", task.comm),
                kind=FindingKind.SCHED_WAKEUP_LATENCY,
                title=f"Wakeup latency: {task.comm} waited {fmt_ms(wait.span.duration)} to run{culprit}",
                severity=Severity.MEDIUM,
                confidence=confidence,
                confidence_reason=reason,
                summary=(
                    f"{_task_label(task)} was woken ({wait.source}) at {wait.span.start:.6f} and switched in on "
                    f"CPU{wait.span.cpu} {fmt_ms(wait.span.duration)} later; {_behind_text(wait)}. "
                    f"Mean wakeup latency {fmt_ms(task.wakeup.mean)} over {task.wakeup.n} wakeups."
                ),
                evidence=_evidence(source, wait.span),
                facts=(
                    Fact("worst wakeup latency", fmt_ms(wait.span.duration)),
                    Fact("measured from", wait.source),
                    *(Fact("ran meanwhile", f"{b.comm} (pid {b.pid}) {fmt_ms(b.seconds)}") for b in wait.behind[:3]),
                ),
                next_steps=(f"kforensic trace --around {wait.span.start + wait.span.duration:.6f}:20 <trace>",),
                detector=DETECTOR,
            )
        )
    return out


def softirq_starvation(analysis: TraceAnalysis, source: str) -> list[Finding]:
    """Softirq vectors raised long before they ran, or running long."""
    limit = analysis.thresholds.softirq
    confidence, reason = _confidence(analysis)
    out = []
    for soft in analysis.softirqs:
        wait = soft.worst_raise_wait
        if wait is not None and wait.span.duration > limit:
            out.append(
                Finding(
                    id=finding_id("sched-softirq-starvation", soft.name),
                    kind=FindingKind.SCHED_SOFTIRQ_STARVATION,
                    title=f"Softirq starvation: {soft.name} waited {fmt_ms(wait.span.duration)} from raise to run",
                    severity=Severity.HIGH if wait.span.duration > 4 * limit else Severity.MEDIUM,
                    confidence=confidence,
                    confidence_reason=reason,
                    summary=(
                        f"Softirq {soft.name} (vec {soft.vec}) was raised on CPU{wait.span.cpu} at "
                        f"{wait.span.start:.6f} and entered {fmt_ms(wait.span.duration)} later; {_behind_text(wait)}."
                        " A task that does not let ksoftirqd run (an RT task) delays deferred softirqs."
                    ),
                    evidence=_evidence(source, wait.span),
                    facts=(
                        Fact("worst raise-to-entry", fmt_ms(wait.span.duration)),
                        Fact("mean raise-to-entry", fmt_ms(soft.raise_latency.mean)),
                        *(
                            Fact("ran meanwhile", f"{b.comm} (pid {b.pid}) {fmt_ms(b.seconds)}")
                            for b in wait.behind[:3]
                        ),
                    ),
                    next_steps=("check RT tasks on that CPU and ksoftirqd's wakeup latency in the task table",),
                    detector=DETECTOR,
                )
            )
        run = soft.durations.worst
        if run is not None and run.duration > limit:
            out.append(
                Finding(
                    id=finding_id("sched-softirq-long", soft.name),
                    kind=FindingKind.SCHED_SOFTIRQ_LONG,
                    title=f"Long softirq: {soft.name} ran {fmt_ms(run.duration)} on CPU{run.cpu}",
                    severity=Severity.MEDIUM,
                    confidence=confidence,
                    confidence_reason=reason,
                    summary=(
                        f"Softirq {soft.name} ran {fmt_ms(run.duration)} from {run.start:.6f} on CPU{run.cpu}; "
                        f"{soft.durations.n} runs, {fmt_ms(soft.durations.total)} in total."
                    ),
                    evidence=_evidence(source, run),
                    facts=(Fact("longest run", fmt_ms(run.duration)),),
                    detector=DETECTOR,
                )
            )
    return out[:MAX_PER_RULE]


def long_irqs(analysis: TraceAnalysis, source: str) -> list[Finding]:
    """IRQ handlers that ran longer than the threshold."""
    limit = analysis.thresholds.irq
    confidence, reason = _confidence(analysis)
    out = []
    for irq in sorted(analysis.irqs, key=lambda i: -(i.durations.worst.duration if i.durations.worst else 0.0)):
        run = irq.durations.worst
        if run is None or run.duration <= limit:
            continue
        label = f"IRQ {irq.irq} ({irq.name})" if irq.irq >= 0 else f"vector {-irq.irq} ({irq.name})"
        out.append(
            Finding(
                id=finding_id("sched-long-irq", irq.name or str(irq.irq)),
                kind=FindingKind.SCHED_LONG_IRQ,
                title=f"Long IRQ handler: {label} ran {fmt_ms(run.duration)} on CPU{run.cpu}",
                severity=Severity.HIGH if run.duration > 4 * limit else Severity.MEDIUM,
                confidence=confidence,
                confidence_reason=reason,
                summary=(
                    f"{label} ran {fmt_ms(run.duration)} from {run.start:.6f} on CPU{run.cpu}; "
                    f"{irq.durations.n} handler runs, mean {fmt_ms(irq.durations.mean)}."
                ),
                evidence=_evidence(source, run),
                facts=(Fact("longest handler run", fmt_ms(run.duration)),),
                next_steps=("check the driver's handler; move work to a threaded IRQ or a workqueue",),
                detector=DETECTOR,
            )
        )
    return out[:MAX_PER_RULE]


def dstate_blocking(analysis: TraceAnalysis, source: str) -> list[Finding]:
    """Tasks that spent time in uninterruptible sleep (D): I/O, locks, page faults."""
    limit = analysis.thresholds.dstate
    rows = []
    for task in analysis.tasks:
        for st in task.blocked:
            if st.state == "D" and st.worst is not None and st.total >= limit:
                rows.append((task, st))
    rows.sort(key=lambda r: -r[1].total)
    confidence, reason = _confidence(analysis)
    out = []
    for task, st in rows[:MAX_PER_RULE]:
        worst = st.worst
        assert worst is not None
        out.append(
            Finding(
                id=finding_id("sched-dstate", task.comm),
                kind=FindingKind.SCHED_DSTATE,
                title=f"D-state blocking: {task.comm} blocked {st.n} time(s), {fmt_ms(st.total)} in total",
                severity=Severity.HIGH if worst.duration > 100 * limit else Severity.LOW,
                confidence=confidence,
                confidence_reason=reason,
                summary=(
                    f"{_task_label(task)} went to uninterruptible sleep (D) {st.n} time(s) for "
                    f"{fmt_ms(st.total)} in total; the longest, from {worst.start:.6f} on CPU{worst.cpu}, lasted "
                    f"{fmt_ms(worst.duration)} until its wakeup."
                ),
                evidence=_evidence(source, worst),
                facts=(
                    Fact("time in D", fmt_ms(st.total)),
                    Fact("longest D sleep", fmt_ms(worst.duration)),
                    Fact("D sleeps", str(st.n)),
                ),
                next_steps=(
                    "record with the block: events or a stack trace at sched_switch (trace-cmd -e sched_switch -T) "
                    "to see what it waits for",
                ),
                detector=DETECTOR,
            )
        )
    return out


def offtime(analysis: TraceAnalysis, source: str) -> list[Finding]:
    """IRQs-off and preempt-off intervals longer than the threshold (when the trace has them)."""
    limit = analysis.thresholds.offtime
    out = []
    for off in analysis.offtimes:
        for span in off.worst[:3]:
            if span.duration <= limit:
                continue
            out.append(
                Finding(
                    id=finding_id(f"sched-{off.what}", span.begin.text.split("caller=")[-1].split()[0]),
                    kind=FindingKind(f"sched-{off.what}"),
                    title=f"{off.what} for {fmt_ms(span.duration)} on CPU{span.cpu}",
                    severity=Severity.MEDIUM,
                    confidence=0.9,
                    confidence_reason=f"from {off.source}",
                    summary=f"CPU{span.cpu} ran with {off.what} for {fmt_ms(span.duration)} (from {off.source}).",
                    evidence=_evidence(source, span),
                    detector=DETECTOR,
                )
            )
    return out[:MAX_PER_RULE]


Rule = Callable[[TraceAnalysis, str], list[Finding]]

#: The rules, in report order.
RULES: tuple[tuple[str, Rule], ...] = (
    ("rt-hog", rt_hogs),
    ("cpu-hog", cpu_hogs),
    ("wakeup-latency", wakeup_latency),
    ("softirq-starvation", softirq_starvation),
    ("long-irq", long_irqs),
    ("dstate", dstate_blocking),
    ("offtime", offtime),
)


def detect(analysis: TraceAnalysis, source: str) -> list[Finding]:
    """All findings of the analysis; ``source`` names the trace file the evidence cites.

    Tasks that share a comm share a finding id; each rule lists the worst
    first, so the first finding of an id is kept.  Then the input checks:
    figures across a step where a CPU's clock went back are dropped (and named
    in a ``trace-clock`` finding), figures that reach past the time a CPU
    stopped reporting are kept with a lower confidence saying so (and a
    ``trace-coverage`` finding cites that CPU's last event).
    """
    found: dict[str, Finding] = {}
    for _name, rule in RULES:
        for finding in rule(analysis, source):
            found.setdefault(finding.id, finding)
    return screen(list(found.values()), analysis, source)


def _interval(finding: Finding) -> tuple[float, float, set[int]] | None:
    """The time span a finding's evidence covers, and the CPUs it names (None without timestamps)."""
    times = [e.timestamp.seconds for e in finding.evidence if e.timestamp is not None]
    cpus = {e.cpu for e in finding.evidence if e.cpu is not None}
    return (min(times), max(times), cpus) if times and cpus else None


def screen(findings: list[Finding], analysis: TraceAnalysis, source: str) -> list[Finding]:
    """Apply the input checks of the analysis to ``findings`` (see :func:`detect`); add the input findings."""
    clock, stopped = analysis.clock, analysis.coverage.stopped
    dropped: list[str] = []
    out: list[Finding] = []
    for found in findings:
        span = _interval(found)
        if span is None:
            out.append(found)
            continue
        start, end, cpus = span
        if clock.disputed and any(clock.disputes(cpu, start, end) for cpu in cpus):
            dropped.append(found.title)
            continue
        gone = [ref for ref in stopped if end > ref.ts + STOP_SLACK]
        if gone:
            names = ", ".join(f"CPU{r.cpu} after {r.ts:.6f} (line {r.line_no})" for r in gone)
            flagged = replace(
                found,
                confidence=min(found.confidence, 0.5),
                confidence_reason=f"{found.confidence_reason}; but this interval reaches past the end of what "
                f"the trace holds for {names}: what ran there meanwhile is not known",
            )
            out.append(flagged)
            continue
        out.append(found)
    if clock.back:
        out.append(_clock_finding(clock, dropped, source))
    if stopped:
        out.append(_coverage_finding(analysis, source))
    return out


#: A figure is flagged when it ends this long (seconds) after a CPU's last event.
STOP_SLACK = 1e-3


def _ref_evidence(source: str, ref: EventRef) -> Evidence:
    return Evidence(
        source=source,
        locator=Locator(LocatorKind.EVENT, ref.line_no, name=f"CPU{ref.cpu}" if ref.cpu >= 0 else None),
        excerpt=ref.text,
        timestamp=Timestamp(ref.ts, Clock.MONOTONIC) if ref.ts > 0 else None,
        cpu=ref.cpu if ref.cpu >= 0 else None,
    )


def _clock_finding(clock: ClockCheck, dropped: list[str], source: str) -> Finding:
    cpus = sorted({c for c, _lo, _hi in clock.disputed})
    where = ", ".join(f"CPU{c}" for c in cpus)
    steps = "; ".join(
        f"line {s.before.line_no} at {s.before.ts:.6f}, then line {s.after.line_no} at {s.after.ts:.6f}"
        f" on CPU{s.after.cpu}"
        for s in clock.examples[:3]
    )
    if clock.reversed():
        title = f"the trace is in reverse order ({clock.back} of {clock.steps} steps go back in time)"
        why = "most events of each CPU come before the events that precede them: the file was reversed or mis-sorted"
    else:
        title = f"trace timestamps go back in time {clock.back} times on {where}"
        why = "one CPU's ring buffer is written in time order, so a step back means a damaged or mis-merged file"
    not_reported = (
        f" {len(dropped)} figures that span these steps are not reported: {'; '.join(dropped[:5])}"
        + (" ..." if len(dropped) > 5 else "")
        if dropped
        else " No finding spanned them."
    )
    evidence = tuple(
        e for s in clock.examples[:3] for e in (_ref_evidence(source, s.before), _ref_evidence(source, s.after))
    )
    return Finding(
        id=finding_id("trace-clock", "reversed" if clock.reversed() else "back"),
        kind=FindingKind.TRACE_CLOCK,
        title=title,
        severity=Severity.MEDIUM,
        confidence=0.95,
        confidence_reason="consecutive events of one CPU with decreasing timestamps, cited",
        summary=f"{why} (e.g. {steps}). Intervals across such a step are meaningless.{not_reported}",
        evidence=evidence,
        facts=(
            Fact("steps back", str(clock.back)),
            Fact("steps checked", str(clock.steps)),
            Fact("CPUs", where),
        ),
        next_steps=(
            "check how the file was made (concatenated or sorted traces, a copy that damaged it) and record again",
            "a reversed file can be put back in order with: tac FILE > FILE.fixed",
        ),
        detector=DETECTOR,
    )


def _coverage_finding(analysis: TraceAnalysis, source: str) -> Finding:
    stopped = analysis.coverage.stopped
    end = analysis.window[1] if isinstance(analysis.window, tuple) else max(r.ts for r in stopped)
    which = ", ".join(f"CPU{r.cpu} at {r.ts:.6f} ({fmt_ms(end - r.ts)} before the end)" for r in stopped)
    return Finding(
        id=finding_id("trace-coverage", *(str(r.cpu) for r in stopped)),
        kind=FindingKind.TRACE_COVERAGE,
        title=f"{', '.join(f'CPU{r.cpu}' for r in stopped)} stops reporting before the trace ends",
        severity=Severity.LOW,
        confidence=0.9,
        confidence_reason="the last event of each CPU, cited; an idle CPU can also be silent",
        summary=(
            f"The trace holds no events of {which}, up to {end:.6f}. Its buffer may have filled or stopped, "
            "so waits and runs after that time may have been served or preempted there unseen: findings that "
            "reach past it are kept with a lower confidence."
        ),
        evidence=tuple(_ref_evidence(source, r) for r in stopped),
        next_steps=("record with a larger buffer (trace-cmd record -b 20000) or check the CPU was idle",),
        detector=DETECTOR,
    )
