"""Findings from a :class:`TraceAnalysis`: hogs, RT starvation, latencies, softirq starvation, long IRQs, D state.

Each rule of :data:`RULES` is a function from the analysis to findings; they
run in order and each cites the trace lines that open and close the interval
it reports (switch-in and switch-out of a run, waking and switch-in of a
wait, raise and entry of a softirq...).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from detectors.sched import harm, rules
from detectors.sched.harm import Judgement
from forensics.model import (
    Baseline,
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
    cpu_name,
    finding_id,
)
from forensics.types.rt_budget import RT_RUNTIME
from forensics.types.sched import (
    KERNEL_RUN,
    KERNEL_RUN_FACT,
    MOVED_MIGRATED,
    OPEN_RECORDING,
    OPEN_WINDOW,
    Blame,
    ClockCheck,
    EventRef,
    IntervalStats,
    Span,
    TaskStats,
    TraceAnalysis,
    Wait,
    open_where,
    still_waiting,
)
from forensics.types.trace import StreamCut, prio_known
from forensics.units import first_of, fmt_ms

DETECTOR = "detectors.sched"

#: The finding kind of each interval the irqsoff/preemptoff tracers report (``OffStats.what``).
_OFF_KINDS = {"irqs-off": FindingKind.SCHED_IRQS_OFF, "preempt-off": FindingKind.SCHED_PREEMPT_OFF}
MAX_PER_RULE = 10  # findings per rule, worst first: a busy trace must not bury the report


def _evidence(source: str, span: Span, more: tuple[EventRef, ...] = (), queued: int = -1) -> tuple[Evidence, ...]:
    """The two lines that bound an interval (one when they are the same line), then ``more`` (the sched_migrate_task
    events that moved a wait).  ``queued``: the CPU a wait was queued on; its opening line written on another CPU
    (a wakeup from the waker's CPU) says so beside that CPU, whose buffer holds the line: until 2026-12-07 the first
    CPU a reader saw of a wait on CPU1 was "line 70663 (CPU0)", the waker's (ue19 #12)."""
    refs = [span.begin] if span.begin.line_no == span.end.line_no else [span.begin, span.end]
    refs += [ref for ref in more if ref.line_no not in (span.begin.line_no, span.end.line_no)]

    def where(ref: EventRef) -> str | None:
        if ref.cpu < 0:
            return None
        if ref is span.begin and queued >= 0 and ref.cpu != queued:
            return f"{cpu_name(ref.cpu)}, the waker's: it waited on CPU{queued}"
        return cpu_name(ref.cpu)

    return tuple(
        Evidence(
            source=source,
            locator=Locator(LocatorKind.EVENT, ref.line_no, name=where(ref)),
            excerpt=ref.text,
            timestamp=Timestamp(ref.ts, Clock.MONOTONIC) if ref.ts > 0 else None,
            cpu=ref.cpu if ref.cpu >= 0 else None,
        )
        for ref in refs
    )


def _confidence(analysis: TraceAnalysis, span: Span | None) -> tuple[float, str]:
    """How sure a figure measured over ``span`` is, given what the trace covers.

    A coverage note lowers only what it can touch: every figure when events were lost (one may have ended or
    explained the interval), and a span that reaches a time when only some CPUs were covered (before every CPU's
    buffer starts, after one stops: who ran, woke or waited there is not all seen), or any span when a CPU the trace
    declares (``#P:2``) reported nothing at all; ``span`` None: a figure summed over the whole trace, lowered whenever
    some CPU was not covered for a time.  Time counted neither busy
    nor idle (before a CPU's first sched_switch) moves no interval measured between two cited events.  Until
    2026-12-07 any note lowered every finding, so every finding of every ftrace recording said 0.75 for the time
    before its CPUs' first switch.
    """
    coverage = analysis.coverage
    start, end = coverage.common_start, coverage.common_end
    if coverage.lost_markers:
        return 0.75, f"measured between trace events, but events were lost: {coverage.note}"
    declared = coverage.cpus_declared
    if isinstance(declared, int) and len(coverage.cpus_seen) < declared:  # a CPU of the header never reported
        return 0.75, f"measured between trace events while some CPUs reported nothing at all: {coverage.note}"
    if coverage.stopped or coverage.started:
        partial = 0.75, f"measured between trace events while only some CPUs were covered: {coverage.note}"
        if span is None or not isinstance(start, float) or not isinstance(end, float):
            return partial
        if (coverage.started and span.begin.ts < start) or (coverage.stopped and span.end.ts > end):
            return partial
    return 0.95, "measured between the trace events that open and close the interval"


#: Why runs that ended long before a wait's end are not known (rules.drops_run).
_NOT_KEPT: Final = (
    f"not kept (the analysis keeps a CPU's runs of the last {rules.RECENT_SECONDS:g} s, at least its last "
    f"{rules.RECENT_RUNS}, at most {rules.RECENT_MAX:,})"
)


def _unseen_why(wait: Wait, analysis: TraceAnalysis) -> str:
    """Why who ran in the first ``wait.unseen`` seconds of a wait is not known (:func:`_unseen_why_cpu`)."""
    if wait.moved == MOVED_MIGRATED:  # summed over the CPUs it waited on
        cpus = ", ".join(f"CPU{c}" for c in _migrated_cpus(wait))
        return f"on {cpus}, before a CPU's first sched_switch or {_NOT_KEPT}"
    if wait.moved:  # the most of either CPU's: which one is not kept
        return f"on CPU{wait.queued_cpu} or CPU{wait.span.cpu}, before its first sched_switch or {_NOT_KEPT}"
    return _unseen_why_cpu(wait, analysis)


def _unseen_why_cpu(wait: Wait, analysis: TraceAnalysis) -> str:
    """Why who ran in the first ``wait.unseen`` seconds of a wait is not known: the wait began before its CPU's
    first sched_switch (a CPU with fewer switches than the analysis keeps runs dropped none of them; kworker/1:2's
    9.302 ms on bug446190, all before CPU1's first switch, had nobody "behind" and nothing unknown), else the runs
    then are older than those kept, or before the first switch: which one the result does not tell."""
    cpu = wait.span.cpu
    if next((c.switches for c in analysis.cpus if c.cpu == cpu), 0) < rules.RECENT_RUNS:
        return f"it began before CPU{cpu}'s first sched_switch"
    return f"before CPU{cpu}'s first sched_switch or {_NOT_KEPT}"


def _unseen_text(wait: Wait, analysis: TraceAnalysis) -> str:
    return f"who ran in its first {fmt_ms(wait.unseen)} is not known: {_unseen_why(wait, analysis)}"


#: The confidence of a finding on a wait that moved between CPUs at a time the trace does not show: its length is
#: measured between cited events, but who delayed it is not known (what ran on either CPU is context only).
MOVED_CONFIDENCE = 0.6


def _moved_why(analysis: TraceAnalysis, wait: Wait) -> str:
    """Why the time a wait moved between CPUs is not known (``wait.moves``: the moves read of it, cited apart)."""
    if analysis.migrations:
        # Counted by the reader over the text it read: past a window's end it stops, so not "the trace's".
        which = "no other" if wait.moves else "none"
        return (
            f"{which} of the {analysis.migrations:,} sched_migrate_task events read moved it while it waited, or it "
            f"moved more than {rules.MOVES} times"
        )
    return "no sched_migrate_task among the events read"


def _moved_where(wait: Wait, analysis: TraceAnalysis) -> tuple[str, str, str]:
    """Where a moved wait was queued, for a title (``woken onto CPU0``) and after "was woken (source) at T" (``
    onto CPU0``), and how it moved (``it moved from CPU0 to CPU1 at an unknown time (why)``).

    sched_waking's target_cpu is the CPU the task last ran on (the kernel traces it before it picks the CPU to
    wake it on): the sched_wakeup that follows says where it was queued (935 of 36,767 wakeups of ue15's
    trace2.dat were queued on another CPU than their sched_waking named).  Without it in the events read, the
    wakeup may have placed the task where it ran."""
    q, c, why = wait.queued_cpu, wait.span.cpu, _moved_why(analysis, wait)
    if wait.source == rules.WAKE_SOURCES[rules.WAKING] and not analysis.wakeup_placed:
        read = f"{_migrated_how(wait)}; " if wait.moves else ""
        return (
            f"sched_waking target_cpu {q}",
            f" (target_cpu {q}: the CPU it last ran on)",
            f"{read}whether its wakeup queued it on CPU{c} or it moved there later is not known (sched_wakeup, "
            f"which says where a wakeup queued it, is not among the events read; {why})",
        )
    woken = "preempted on" if wait.source == "preemption" else "woken onto"
    if wait.moves:  # the moves read, then one not followed (away and back too: CPU0 -> CPU1 -> CPU0)
        later = f"then to CPU{c} at an unknown time" if wait.moves[-1].to_cpu != c else "then by moves not followed"
        return f"{woken} CPU{q}", f" onto CPU{q}", f"{_migrated_how(wait)}, {later} ({why})"
    return f"{woken} CPU{q}", f" onto CPU{q}", f"it moved from CPU{q} to CPU{c} at an unknown time ({why})"


def _via(wait: Wait) -> str:
    """The CPUs the moves read of a wait moved it to, for a title (``, moved to CPU1``); empty without."""
    if not wait.moves:
        return ""
    return ", moved to " + ", ".join(dict.fromkeys(f"CPU{m.to_cpu}" for m in wait.moves))


def _move_facts(wait: Wait) -> tuple[Fact, ...]:
    """Each sched_migrate_task that moved a wait, cited with its line."""
    return tuple(
        Fact("moved", f"CPU{m.from_cpu} to CPU{m.to_cpu} at {m.ts:.6f} (sched_migrate_task, line {m.ref.line_no})")
        for m in wait.moves
    )


def _migrated_cpus(wait: Wait) -> list[int]:
    """The CPUs a wait that sched_migrate_task events moved waited on, in order (a CPU once)."""
    return harm.waited_on(wait)


def _migrated_how(wait: Wait) -> str:
    """How a wait moved: ``it moved from CPU0 to CPU1 at 10.060000 (sched_migrate_task)`` (the events are cited
    as evidence and facts: a summary stays the same in every text layout of a trace, line numbers do not)."""
    moves = ", then ".join(
        f"from CPU{m.from_cpu} to CPU{m.to_cpu} at {m.ts:.6f} (sched_migrate_task)" for m in wait.moves
    )
    return f"it moved {moves}"


#: The tasks a wait's text names of those that ran meanwhile (per CPU for a moved wait), most time first.
_LISTED: Final = 3


def _listed(wait: Wait) -> list[Blame]:
    """The tasks a wait's text and facts name: the first _LISTED of ``behind`` (of each CPU's, for a moved wait)."""
    if not wait.moved:
        return list(wait.behind[:_LISTED])
    per_cpu: dict[int, list[Blame]] = {}
    for b in wait.behind:
        per_cpu.setdefault(b.cpu, []).append(b)
    return [b for _cpu, ran in sorted(per_cpu.items()) for b in ran[:_LISTED]]


def _not_listed(wait: Wait) -> tuple[str, str]:
    """What the tasks named cover of a wait, and the others (``behind`` past _LISTED, then Wait.more): for its
    text (``; those listed ran 26.235 ms of the 509.528 ms wait (5 %); the 244 other tasks that ran, 455.108 ms
    in all, are not listed``) and its fact; ("", "") when every task that ran is named.  Until 2026-12-07 the list
    was cut to three without a word: cc1's 509.528 ms wait on big.ftrace.txt.gz read as if 26 ms were all (ue23 #6)."""
    listed = _listed(wait)
    others = len(wait.behind) - len(listed) + wait.more
    if others <= 0:
        return "", ""
    shown = sum(b.seconds for b in listed)
    rest = sum(b.seconds for b in wait.behind) - shown + wait.more_seconds
    share = f" ({100 * shown / wait.span.duration:.0f} %)" if wait.span.duration > 0 else ""
    fact = f"{others} other task(s), {fmt_ms(rest)} in all"
    text = (
        f"those listed ran {fmt_ms(shown)} of the {fmt_ms(wait.span.duration)} wait{share}; the {others} other "
        f"task(s) that ran, {fmt_ms(rest)} in all, are not listed"
    )
    return text, fact


def _moved_context(wait: Wait) -> dict[int, str]:
    """What ran on each CPU during a wait that moved (while it waited there, for one sched_migrate_task events
    moved; during the whole wait, for one that moved at an unknown time): CPU -> ``a (pid 1) 2.000 ms, ...``."""
    per_cpu: dict[int, list[str]] = {}
    for b in _listed(wait):
        per_cpu.setdefault(b.cpu, []).append(f"{b.comm} (pid {b.pid}) {fmt_ms(b.seconds)}")
    return {cpu: ", ".join(ran) for cpu, ran in sorted(per_cpu.items())}


def _behind_text(wait: Wait, analysis: TraceAnalysis) -> str:
    unseen = f"; {_unseen_text(wait, analysis)}" if wait.unseen > 0 else ""
    rest = _not_listed(wait)[0]
    tail = f"; {rest}{unseen}" if rest else unseen  # the tasks not listed, then the start not known
    if wait.moved == MOVED_MIGRATED:  # who delayed it on each CPU it waited on
        ran = "; ".join(f"CPU{cpu} ran {who}" for cpu, who in _moved_context(wait).items())
        return f"{_migrated_how(wait)}; while it waited there {ran or 'no other task ran'}{tail}"
    if wait.moved:  # who delayed it is not known: what ran on both CPUs is context, not a cause
        context = "; ".join(f"CPU{cpu} ran {ran}" for cpu, ran in _moved_context(wait).items())
        meanwhile = f"; during the wait (context, not the cause) {context}" if context else ""
        return f"{_moved_where(wait, analysis)[2]}: who delayed it is not known{meanwhile}{tail}"
    if not wait.behind:
        if unseen:
            return _unseen_text(wait, analysis)
        return "no other task ran on that CPU meanwhile (IRQs, softirqs or the CPU was idle)"
    parts = [f"{b.comm} (pid {b.pid}) {fmt_ms(b.seconds)}" for b in _listed(wait)]
    lead = "in the rest of the wait" if unseen else "meanwhile"
    return f"{lead} the CPU ran " + ", ".join(parts) + tail


def _behind_facts(wait: Wait, analysis: TraceAnalysis) -> tuple[Fact, ...]:
    ran = tuple(Fact("ran meanwhile", f"{b.comm} (pid {b.pid}) {fmt_ms(b.seconds)}") for b in _listed(wait))
    if wait.moved == MOVED_MIGRATED:
        woken = "preempted on" if wait.source == "preemption" else "woken onto"
        ran = (
            Fact("queued", f"{woken} CPU{wait.queued_cpu}"),
            *_move_facts(wait),
            *(Fact(f"ran on CPU{cpu} meanwhile", who) for cpu, who in _moved_context(wait).items()),
        )
    elif wait.moved:
        ran = (
            Fact("queued", _moved_where(wait, analysis)[0]),
            *_move_facts(wait),
            Fact("switched in on", f"CPU{wait.span.cpu}"),
            Fact("moved", f"{_moved_where(wait, analysis)[2]}: who delayed it is not known"),
            *(Fact(f"ran on CPU{cpu} meanwhile (context)", ran) for cpu, ran in _moved_context(wait).items()),
        )
    rest = _not_listed(wait)[1]
    if rest:
        ran = (*ran, Fact("not listed", rest))
    if wait.unseen <= 0:
        return ran
    return (
        *ran,
        Fact("not attributed", f"the first {fmt_ms(wait.unseen)} of the wait ({_unseen_why(wait, analysis)})"),
    )


def _prio_text(task: TaskStats, wait: Wait, line: bool = False) -> str:
    """The waiter's class at the wait, the prio it was told from and which cited event shows it (with its line
    number when ``line``: summaries stay the same in every text layout of a trace, line numbers do not)."""
    prio = harm.prio_at(task, wait)
    if not prio_known(prio):  # no line of the task printed a prio: its class is not known, judged as CFS
        return "a task of unknown class (no line of it prints its prio), judged as CFS"
    cls = "an RT" if harm.is_rt(prio) else "a CFS"
    ref = wait.prio_ref
    if ref is None:
        return f"{cls} task (prio {prio}, the task's last)"
    where = "the switch-in that ends the wait" if ref is wait.span.end else "the event that began the wait"
    return f"{cls} task (prio {prio} on {where}" + (f", line {ref.line_no})" if line else ")")


def _task_label(task: TaskStats) -> str:
    return f"{task.comm} (pid {task.pid})"


def _task_id(kind: FindingKind, task: TaskStats) -> str:
    """A task's finding id: its name and pid, so that ``report`` merges a finding of two traces only when it is
    about the same task (a process of another run that has the same name is another task)."""
    return finding_id(kind, task.comm, str(task.pid))


def _kernel_run(task: TaskStats) -> tuple[Fact, ...]:
    """The fact that a hog's runs were kernel code, for a kernel thread (told by its name); none for any other task,
    whose mode the trace does not show: the incident verdict then blames the task, not the kernel."""
    return (Fact(KERNEL_RUN_FACT, KERNEL_RUN),) if harm.kernel_thread(task.comm) else ()


def _task_subject(task: TaskStats) -> Subject:
    return Subject(SubjectKind.TASK, task.comm, task.pid)


def _baseline(j: Judgement) -> Baseline:
    return Baseline(j.baseline, fmt_ms(j.value), j.source)


def _unharmed(waited: bool, open_at: str = "") -> tuple[Baseline, str]:
    """The baseline and verdict of a long run that kept nobody waiting beyond their class's promise.  ``open_at``:
    the run was still open where the window or the recording ends (_run_open): the waits behind it are read up to
    there only, so "within the promise" is as far as read, not a verdict on waits that may go on."""
    baseline = Baseline(
        "waits of the tasks it kept waiting, against their class's promise",
        ("none exceeded" if waited else "no task waited") + (f" up to the {open_at}'s end" if open_at else ""),
        "detectors/sched/harm.py (docs/severity.md)",
    )
    if open_at:
        # A lower bound under a threshold is not "fine": the run and the waits behind it go on past what was read.
        verdict = f"It was {_still_running(open_at)}, so the waits behind it are read up to there only: " + (
            "each was within what its class promises so far, and may have gone on past it (lower bounds, "
            "not judged complete)."
            if waited
            else "no task had waited for that CPU so far; whether one did later is not in what was read."
        )
    else:
        verdict = (
            "Every task that waited behind it got the CPU within what its scheduling class promises."
            if waited
            else "No task waited for that CPU while it ran: a busy CPU nobody else needed is not a problem."
        )
    return baseline, verdict


def cpu_hogs(analysis: TraceAnalysis, source: str) -> list[Finding]:
    """Non-RT tasks with single runs longer than the hog threshold, as severe as the waits they caused.

    A run nobody waited behind is information; one that others waited behind takes the severity of the
    worst of those waits (:mod:`detectors.sched.harm`).  A kernel thread's run longer than the CFS period
    while others waited did not reach a reschedule point: that class, and only it, gets kernel advice.
    """
    limit = analysis.thresholds.hog
    hogs = [t for t in analysis.tasks if not t.longest_run_rt and t.runs.worst and t.runs.worst.duration > limit]
    hogs.sort(key=lambda t: -(t.runs.worst.duration if t.runs.worst else 0.0))
    by_pid = {t.pid: t for t in analysis.tasks}
    cpus = harm.cpu_count(analysis)
    out = []
    for task in hogs[:MAX_PER_RULE]:
        run = task.runs.worst
        assert run is not None
        confidence, reason = _confidence(analysis, run)
        worst, judged = harm.victim_harm(task, analysis, by_pid, analysis.thresholds.wakeup_latency)
        waited = task.delay_caused > 0 or bool(task.victims)
        stick = harm.fair_yardstick(2, cpus, analysis.kernel_release)
        period = stick.seconds
        kernel = harm.kernel_thread(task.comm) and waited and run.duration > period
        victims = "; ".join(_waited_behind(v, w, task) for v, w, _j in judged[:3])
        # Still running where the recording or the window ends: its length a lower bound (ue21 #2: pcut.txt's
        # 417 ms, open at the end, "lasted")
        open_at = _run_open(analysis, task)
        ran, still = _ran(run, open_at), _still(open_at)
        if kernel:
            # As severe as the waits it caused, as any hog: its victims' waits within their class's promise are no
            # harm (a healthy VM's kdamond.0 ran 5.090 ms past a 3 ms two-slice yardstick, medium, ue20 #1's last
            # window); the kernel advice stays, low.
            severity = worst or Severity.LOW
            title = f"Kernel-mode run: {task.comm} {ran} without rescheduling{still}"
            baseline = Baseline(
                stick.name + stick.release + stick.assumed,
                fmt_ms(period),
                f"a preemptible task is switched out within it ({stick.source})",
            )
            verdict = (
                f"A kernel thread cannot run user code, so the run was in the kernel, and it lasted longer than "
                f"{stick.called} of 2 tasks ({fmt_ms(period)}) while other tasks waited: it did not "
                "reach a reschedule point."
            )
            advice = "add a reschedule point (cond_resched()) to the kernel loop, or split the work"
        elif worst is not None:
            severity = worst
            least = "at least " if open_at else ""
            title = f"CPU hog: {task.comm} ran {least}{fmt_ms(run.duration)} without a break on CPU{run.cpu}{still}"
            if worst is Severity.LOW and judged[0][2].fair and run.duration <= judged[0][2].value:
                # Its run is within the yardstick its victims' waits are judged against: load, not a hog (until
                # 2026-12-07 "CPU hog: kforensic ran 7.997 ms" beside a 9.000 ms baseline, ue19 #13)
                title = (
                    f"Long run: {task.comm} {ran}{still}, within the "
                    f"{fmt_ms(judged[0][2].value)} baseline{judged[0][2].assumed}; tasks behind it waited past their "
                    "fair share (load)"
                )
            baseline = _baseline(judged[0][2])
            verdict = f"Tasks waited behind it: {victims}; {_MOST_HARMFUL.lower()}: {judged[0][2].why}."
            advice = f"a trace does not tell user from kernel mode: perf record -g -p {task.pid} shows where it runs"
        else:
            severity = Severity.INFO
            so_far = " so far" if open_at else ""
            title = f"Long run: {task.comm} {ran}{still}" + (
                f"; others waited within their fair share{so_far}"
                if waited
                else f"; no other task needed the CPU{so_far}"
            )
            baseline, verdict = _unharmed(bool(waited), open_at)
            advice = ""
        rest = _not_counted(task)  # the delay said is the waits resolved in the trace, as an RT hog's
        out.append(
            Finding(
                id=_task_id(FindingKind.SCHED_CPU_HOG, task),
                kind=FindingKind.SCHED_CPU_HOG,
                title=title,
                severity=severity,
                confidence=confidence,
                confidence_reason=reason,
                summary=(
                    f"{_task_label(task)} ran {task.hog_runs} time(s) longer than {fmt_ms(limit)}; the longest run "
                    f"started at {run.start:.6f} on CPU{run.cpu} and "
                    + (
                        f"was still running {fmt_ms(run.duration)} later, {open_where(open_at)} (a lower bound)"
                        if open_at
                        else f"lasted {fmt_ms(run.duration)}"
                    )
                    + f". Other tasks on that CPU waited {_delay_said(task)} in total while it ran"
                    + _delay_open(task)
                    + (f" ({rest})" if rest else "")
                    + f". {verdict}"
                ),
                evidence=_evidence(source, run),
                facts=(
                    Fact("longest run", fmt_ms(run.duration), lower_bound=bool(open_at)),
                    Fact("runs over threshold", str(task.hog_runs)),
                    Fact("total runtime", fmt_ms(task.runtime)),
                    *_delay_facts(task),
                    *_kernel_run(task),
                ),
                next_steps=(
                    f"kforensic trace --task {task.pid} "
                    f"--around {run.start + run.duration:.6f}:{run.duration * 1e3 + 20:.0f} <trace>",
                    *((advice,) if advice else ()),
                ),
                detector=DETECTOR,
                subjects=(_task_subject(task), Subject(SubjectKind.CPU, str(run.cpu))),
                baseline=baseline,
            )
        )
    return out


def _delay_facts(task: TaskStats) -> tuple[Fact, ...]:
    """The delay a long-running task caused, and how it is counted: each waiting task's time while it ran, summed
    over the tasks, so two tasks waiting through the same 10 ms count 20 ms and the figure can exceed the task's own
    runtime (callgrind-amd64 on ue19 healthy.dat: 14702.554 ms caused, 6861.880 ms run).  Until 2026-12-07 the
    figure was given alone, read as time the task took from others."""
    return (
        Fact("delay caused to others", fmt_ms(task.delay_resolved), lower_bound=bool(task.delay_open)),
        Fact(
            "delay counted as",
            "each waiting task's time while it ran, summed over the tasks: waits that overlap each count, so it can "
            "exceed its own runtime",
        ),
    )


#: How a hog's verdict names the first of its judged waits (harm.victim_harm: the most severe, then the longest).
#: Its summary's "up to X in one wait" is the longest; both read "worst" until 2026-12-07, naming two different
#: waits (rt_cut.dat: python3 "up to 799.264 ms", then "The worst wait: ksoftirqd/1 ... at least 788.295 ms", ue23 #8).
_MOST_HARMFUL: Final = "The most harmful wait"


def _victims_text(task: TaskStats) -> list[str]:
    """Each task that waited behind ``task``: in all, in how many waits, the most of one; then the rest, and what
    the waiting integrated over its runs holds beyond them, not in the delay said (:func:`_not_counted`)."""
    parts = [
        f"{v.comm} (pid {v.pid}) {_least(v.open_at)}{fmt_ms(v.seconds)} in {v.waits} wait(s), "
        + (
            f"the longest at least {fmt_ms(v.worst)} (one {still_waiting(v.open_at)})"
            if v.lower_bound
            else f"at most {fmt_ms(v.worst)} in one"
        )
        for v in task.victims
    ]
    if task.more_victims:
        more = task.more_victims_open
        parts.append(f"and {task.more_victims} more, {_least(more)}{fmt_ms(task.more_victims_seconds)}")
    rest = _not_counted(task)
    return [*parts, rest] if rest else parts


def _least(open_at: str) -> str:
    """ "at least " before a figure that counts an interval still open at ``open_at`` (Wait.open_at), else ""."""
    return "at least " if open_at else ""


def _delay_said(task: TaskStats) -> str:
    """The delay a hog caused (its victims' waits resolved in the trace), "at least" when one of them was still
    open where it was counted to (TaskStats.delay_open)."""
    return _least(task.delay_open) + fmt_ms(task.delay_resolved)


def _delay_open(task: TaskStats) -> str:
    """What makes the delay a hog caused a lower bound, said after it: its waits still open, counted up to there
    (until 2026-12-07 rt_cut.dat's rthog "waited 2661.218 ms in all behind it, up to 799.264 ms in one wait", with
    three of those waits still open when the recording stopped)."""
    return f" (waits still open {open_where(task.delay_open)} counted up to there)" if task.delay_open else ""


def _not_counted(task: TaskStats) -> str:
    """What the waiting tasks integrated over ``task``'s runs (``delay_caused``) hold beyond the waits resolved in
    the trace (``delay_resolved``, the delay a hog finding says it caused), said as not counted; "" when nothing."""
    rest = task.delay_caused - task.delay_resolved
    if rest < 0.5e-6:
        return ""
    return (
        f"not counted: {fmt_ms(rest)} of waits not resolved in the trace (still waiting at its end, woken "
        "while a CPU's events were lost and never seen switched in, or moved to another CPU at a time the trace "
        "does not show) or older than the kept runs"
    )


def _waited_behind(victim: TaskStats, wait: Wait, culprit: TaskStats) -> str:
    """A victim's wait and the part of it the culprit ran: a wait is judged whole (its class's promise is about the
    whole wait), but the culprit is charged only with its own part (the JSON's ``victims[].worst_ms``)."""
    least = "at least " if wait.lower_bound else ""
    said = f"{victim.comm} (pid {victim.pid}) waited {least}{fmt_ms(wait.span.duration)}"
    # A wait (wakeup or preemption) still open where the window or the recording ends says so, as the wakeup
    # latency finding does (until 2026-12-07 a preempted task runnable to the end "waited 500.000 ms").
    still = f", {still_waiting(wait.open_at)}" if wait.lower_bound else ""
    part = next((b.seconds for b in wait.behind if b.pid == culprit.pid), None)
    if part is None or part >= wait.span.duration:
        return said + still
    return f"{said}, {fmt_ms(part)} of it behind {culprit.comm}{still}"


def _usual(task: TaskStats, wait: Wait) -> str:
    """What the task's waits of that kind (wakeup or preemption) take on average: what it usually gets."""
    fig, what = (
        (task.preempt_wait, "preemption wait") if wait.source == "preemption" else (task.wakeup, "wakeup latency")
    )
    return f"its mean {what} {_mean_said(fig)} over {fig.n}"


def _mean_said(fig: IntervalStats) -> str:
    """A mean of waits, "at least" when one counted in it was still open (IntervalStats.lower_bound: rt_cut.dat's
    ksoftirqd/1 "its mean wakeup latency 788.295 ms over 1", that one wait still open, until 2026-12-07)."""
    return ("at least " if fig.lower_bound else "") + fmt_ms(fig.mean)


def rt_hogs(analysis: TraceAnalysis, source: str) -> list[Finding]:
    """RT tasks with long runs, as severe as the waits of the tasks they kept off the CPU.

    An RT task keeps every CFS task (and ksoftirqd, kworkers, rcu_preempt) off its CPU until it sleeps, or
    until RT throttling stops it after sched_rt_runtime_us (950 ms) of each second.  The harm is the waiting
    behind it, judged as any wait (:func:`harm.victim_harm`: a CFS task's wait above --latency-ms behind an RT
    task is medium, a latency-sensitive one's high from 4 times it); a run that reaches the throttling budget
    starves the CPU's other tasks (high); a run nobody waited behind, or only within their promise, is
    information.
    """
    limit = analysis.thresholds.hog
    hogs = [t for t in analysis.tasks if t.longest_run_rt and t.runs.worst and t.runs.worst.duration > limit]
    # The delay it caused: the waits resolved in the trace, each charged to the runs it waited behind (a wait
    # still open at the end, or of a task woken during a loss of events whose switch-in was lost, is not known to
    # have been a wait for this task: 108.154 ms against the intact trace's 47.523 with CPU1's loss, 7153c2c7).
    hogs.sort(key=lambda t: -t.delay_resolved)
    by_pid = {t.pid: t for t in analysis.tasks}
    out = []
    for task in hogs[:MAX_PER_RULE]:
        run = task.runs.worst
        assert run is not None
        confidence, reason = _confidence(analysis, run)
        worst, judged = harm.victim_harm(task, analysis, by_pid, analysis.thresholds.wakeup_latency)
        evidence = list(_evidence(source, run))
        for _victim, wait, _j in judged:  # the worst waits' lines, each line once
            cited = {e.locator.start for e in evidence}
            if len(evidence) < 6:
                evidence.extend(e for e in _evidence(source, wait.span) if e.locator.start not in cited)
        waited = len(task.victims) + task.more_victims
        longest = max((v.worst for v in task.victims), default=0.0)
        # the longest "at least" when a wait counted was still open (it may be longer than any that ended)
        up_to = f"the longest at least {fmt_ms(longest)}" if task.delay_open else f"up to {fmt_ms(longest)} in one wait"
        budget = harm.rt_budget("RT throttling's")
        server = harm.fair_server(analysis.kernel_release)
        ended = task.runs.worst_out  # the switch-out of its longest run
        open_at = _run_open(analysis, task)
        ran = _ran(run, open_at) + _still(open_at)
        if run.duration >= RT_RUNTIME or task.longest_run_throttled:
            severity = Severity.HIGH
            title = (
                f"RT hog: {task.comm} (prio {task.longest_run_prio}) {ran}, "
                + ("throttled, " if task.longest_run_throttled else "")
                + "starving other tasks"
            )
            baseline = Baseline(
                "RT throttling's default budget: the most RT tasks may run of each period before CFS tasks get the "
                "rest",
                fmt_ms(RT_RUNTIME),
                f"{harm.rt_budget()}; Documentation/scheduler/sched-rt-group.rst",
            )
            if task.longest_run_throttled and ended is not None:
                nxt = by_pid.get(ended.next_pid)
                named = (
                    "the idle task"
                    if ended.next_pid == 0
                    else f"{nxt.comm if nxt else 'a task'} (pid {ended.next_pid})"
                )
                by_server = f"; or {server} may be what let it in" if server and ended.next_pid != 0 else ""
                verdict = (
                    f"It never slept: its run ended with it still runnable (prev_state {ended.state}, "
                    f"{run.end.said(analysis.by_line)}) for {named}, which is not an RT task: RT throttling stopped it "
                    f"once the CPU's RT tasks had used up {budget}{by_server}; the CPU's "
                    "other tasks got only the rest."
                )
            elif open_at:
                # No switch-out read: that RT throttling stopped it is inferred, not seen (until 2026-12-07 a run still
                # open at the trace's end "had to" be stopped by it: the budget is the default's, not the machine's,
                # and the trace ends first).
                ends = "the trace" if open_at == OPEN_RECORDING else "the window"
                verdict = (
                    f"It ran at least {fmt_ms(run.duration)} on CPU{run.cpu} without a switch, "
                    f"{_still_running(open_at)}, which reaches {budget}: no other task ran there meanwhile. Whether "
                    f"RT throttling then stopped it is unknown ({ends} ends first); with that budget it is the likely "
                    "outcome" + (f" (or {server}, which lets CFS tasks in)." if server else ".")
                )
            else:
                verdict = (
                    f"Its run reached {budget}: with that budget RT throttling had to stop "
                    "it, and the CPU's other tasks got only the rest."
                )
        elif worst is not None:
            victim, wait, j = judged[0]
            severity = worst
            title = f"RT hog: {task.comm} (prio {task.longest_run_prio}) {ran}, keeping other tasks waiting"
            baseline = _baseline(j)
            if open_at or ended is None:
                # No switch-out of the run is recorded: it was still running where the window or the recording ends
                # (ue21 #1: a recording stopped while the hog spun read "ended with it off the CPU ... not starved").
                verdict = (
                    f"Its longest run is cut by the end of the {open_at} with "
                    f"it still on the CPU (no switch-out recorded): it ran {fmt_ms(run.duration)} at least, within "
                    f"{budget} as far as read, and the others were still waiting behind it there. {_MOST_HARMFUL}: "
                    f"{_waited_behind(victim, wait, task)} ({_usual(victim, wait)}): {j.why}."
                )
            else:
                verdict = (
                    f"Its longest run stayed within {budget}, and ended with it "
                    + (f"switched out in state {ended.state}" if ended.pid == task.pid else "off the CPU")
                    + f", so the others waited, not starved: they got the CPU when it gave it up. {_MOST_HARMFUL}: "
                    f"{_waited_behind(victim, wait, task)} ({_usual(victim, wait)}): {j.why}."
                )
        else:
            severity = Severity.INFO
            so_far = " so far" if open_at else ""
            title = f"Long RT run: {task.comm} (prio {task.longest_run_prio}) {ran}" + (
                f"; others waited within their promise{so_far}" if waited else f"; no other task needed the CPU{so_far}"
            )
            baseline, verdict = _unharmed(bool(waited), open_at)
        if task.longest_run_yield_unknown and ended is not None:
            nxt = by_pid.get(ended.next_pid)
            verdict += (
                f" Whether RT throttling stopped its longest run is unknown: it ended with it still runnable for "
                f"{nxt.comm if nxt else 'a task'} (pid {ended.next_pid}), whose prio the trace does not give (a "
                "higher RT or deadline task preempting it is possible)."
            )
        victims = _victims_text(task)
        out.append(
            Finding(
                id=_task_id(FindingKind.SCHED_RT_HOG, task),
                kind=FindingKind.SCHED_RT_HOG,
                title=title,
                severity=severity,
                confidence=confidence,
                confidence_reason=reason,
                summary=(
                    f"Real-time task {_task_label(task)} ran {task.hog_runs} time(s) longer than {fmt_ms(limit)} "
                    f"(longest {_least(open_at)}{fmt_ms(run.duration)} from {run.start:.6f} on CPU{run.cpu}); {waited} "
                    "other task(s) "
                    f"waited {_delay_said(task)} in all behind it, {up_to}{_delay_open(task)}"
                    + (f": {'; '.join(victims)}. " if victims else ". ")
                    + verdict
                ),
                evidence=tuple(evidence),
                facts=(
                    Fact("longest run", fmt_ms(run.duration), lower_bound=bool(open_at)),
                    Fact("runs over threshold", str(task.hog_runs)),
                    *_delay_facts(task),
                    *(Fact("waited behind it", v) for v in victims),
                    Fact("RT throttling budget", harm.rt_budget()),
                    *_kernel_run(task),
                ),
                next_steps=(
                    "check the task's RT priority and whether it must busy-wait; RT throttling "
                    "(/proc/sys/kernel/sched_rt_runtime_us) only limits it to 95% per second",
                    f"kforensic trace --task {task.pid} <trace>",
                ),
                detector=DETECTOR,
                subjects=(_task_subject(task), Subject(SubjectKind.CPU, str(run.cpu))),
                baseline=baseline,
            )
        )
    return out


def _trace_mean_wakeup(analysis: TraceAnalysis) -> IntervalStats:
    """The wakeup latencies of the trace's CFS tasks together (count, total, how many still open: its mean a lower
    bound then): the trace's own distribution."""
    cfs = [t.wakeup for t in analysis.tasks if not t.is_rt]
    return IntervalStats(sum(f.n for f in cfs), sum(f.total for f in cfs), None, open=sum(f.open for f in cfs))


def _wait_began(span: Span) -> str:
    """When a wait began: its first event's time, and, for a wait begun before the window (--window, --around), that
    it is counted from the window's start (Span.start, clipped; until 2026-12-07 that time was given as the
    wakeup's, ue20 #1)."""
    if span.begin.ts < span.start:
        return f"{span.begin.ts:.6f}, before the window (counted from the window's start, {span.start:.6f})"
    return f"{span.start:.6f}"


def _culprit_title(wait: Wait) -> str:
    """Whom a wait's title says it was spent behind: the task that ran at least half of it (Wait.culprit), else
    that no one task did, or that who ran in most of it is not known (its unseen start)."""
    top = wait.culprit()
    if top is not None:
        return f", behind {top.comm}"
    if wait.unseen >= wait.span.duration / 2:
        return ", behind unknown"
    return ", behind several tasks" if len(wait.behind) > 1 else ""


def _within_promise(task: TaskStats, wait: Wait, judged: Judgement) -> str:
    """What a wait judged within its class's promise was within, for its title (``within its fair share as a nice 10
    task``): said of the tasks --task asks about (ue24 F11)."""
    prio = harm.prio_at(task, wait)
    if not judged.fair:
        return "within an RT task's promise" if harm.is_rt(prio) else "within --latency-ms behind an RT task"
    nice = prio - 120 if 100 <= prio < 140 else 0
    return "within its fair share" + (f" as a nice {nice} task" if nice else "")


def wakeup_latency(analysis: TraceAnalysis, source: str) -> list[Finding]:
    """Tasks whose worst wakeup-to-run latency broke their class's promise, and who ran meanwhile."""
    limit = analysis.thresholds.wakeup_latency
    slow = [t for t in analysis.tasks if t.worst_wakeup and t.worst_wakeup.span.duration > limit]
    slow.sort(key=lambda t: -(t.worst_wakeup.span.duration if t.worst_wakeup else 0.0))
    by_pid = {t.pid: t for t in analysis.tasks}
    trace_mean = _trace_mean_wakeup(analysis)
    out: list[Finding] = []
    within: list[Finding] = []
    for task in slow:
        wait = task.worst_wakeup
        assert wait is not None
        confidence, reason = _confidence(analysis, wait.span)
        # Moved between CPUs at an unknown time: judged on the wait alone (its length is the harm), no culprit.
        # Within what the task's class is promised: no finding, unless --task asks about it (then said at info,
        # after the judged ones: a comm's finding is its worst, detect).
        asked = task.pid in analysis.asked
        judged = harm.judge_wait(task, harm.as_judged(wait), analysis, by_pid, limit, within=asked)
        if judged is None:
            continue
        culprit = _culprit_title(wait)
        # Still waiting where the recording (ue21 #2: python3's 799 ms, queued behind a CPU's task to the end) or
        # the window ends (ue21 #1's window: "waited 500.000 ms ... switched in 500.000 ms later"): a lower bound.
        still = f" ({still_waiting(wait.open_at)})" if wait.lower_bound else ""
        least = "at least " if still else ""
        woken = ""
        if wait.moved == MOVED_MIGRATED:
            woken = f" onto CPU{wait.queued_cpu}"
        elif wait.moved:
            queued, woken, how = _moved_where(wait, analysis)
            culprit = f" ({queued}{_via(wait)}, ran on CPU{wait.span.cpu})"
            confidence, reason = min(confidence, MOVED_CONFIDENCE), f"{reason}; but {how}: who delayed it is not known"
        if judged.severity is Severity.INFO:
            culprit = f", {_within_promise(task, wait, judged)}"
        (within if judged.severity is Severity.INFO else out).append(
            Finding(
                id=_task_id(FindingKind.SCHED_WAKEUP_LATENCY, task),
                kind=FindingKind.SCHED_WAKEUP_LATENCY,
                title=f"Wakeup latency: {task.comm} waited {least}{fmt_ms(wait.span.duration)} to run{culprit}" + still,
                severity=judged.severity,
                confidence=confidence,
                confidence_reason=reason,
                summary=(
                    f"{_task_label(task)} was woken ({wait.source}) at {_wait_began(wait.span)}{woken} and "
                    + (
                        f"was still waiting on CPU{wait.span.cpu} {fmt_ms(wait.span.duration)} later, "
                        f"{open_where(wait.open_at)} (no switch-in recorded: a lower bound)"
                        if still
                        else f"switched in on CPU{wait.span.cpu} {fmt_ms(wait.span.duration)} later"
                    )
                    + f"; {_behind_text(wait, analysis)}. "
                    f"Mean wakeup latency {_mean_said(task.wakeup)} over {task.wakeup.n} wakeups "
                    f"(the trace's CFS tasks: {_mean_said(trace_mean)} over {trace_mean.n}). Judged as "
                    f"{_prio_text(task, wait)}: "
                    f"{judged.why}."
                ),
                evidence=_evidence(
                    source,
                    wait.span,
                    tuple(m.ref for m in wait.moves),
                    wait.queued_cpu if wait.queued_cpu >= 0 else wait.span.cpu,
                ),
                facts=(
                    Fact("worst wakeup latency", fmt_ms(wait.span.duration), lower_bound=wait.lower_bound),
                    Fact("measured from", wait.source),
                    Fact("judged as", _prio_text(task, wait, line=True)),
                    Fact(
                        "trace mean (CFS tasks)",
                        f"{fmt_ms(trace_mean.mean)} over {trace_mean.n} wakeups",
                        lower_bound=trace_mean.lower_bound,
                    ),
                    *_behind_facts(wait, analysis),
                ),
                next_steps=(f"kforensic trace --around {wait.span.start + wait.span.duration:.6f}:20 <trace>",),
                detector=DETECTOR,
                baseline=_baseline(judged),
                subjects=(_task_subject(task),),
            )
        )
        if len(out) == MAX_PER_RULE:
            break
    return [*out, *within]


def _judge_softirq_wait(wait: Wait, by_pid: dict[int, TaskStats], limit: float) -> Judgement | None:
    """A softirq held back by an RT task is starved above ``limit``; otherwise within a tick it is normal.

    None for a wait spent mostly idle: a softirq pending on an idle CPU runs at the next interrupt's exit or in
    the idle loop, so no task held it back and the events between were not all recorded (a packet cut out of an
    LTTng stream gave "TIMER waited 2483.330 ms ... behind CFS tasks" while the CPU "ran <idle> 2483.320 ms")."""
    seconds = wait.span.duration
    if sum(b.seconds for b in wait.behind if b.pid == 0) >= seconds / 2:
        return None
    if harm.rt_share(wait, by_pid) >= seconds / 2:
        if seconds <= limit:
            return None
        return Judgement(
            Severity.HIGH if seconds > 4 * limit else Severity.MEDIUM,
            "softirq time while an RT task runs: ksoftirqd (a CFS thread) gets none; reported above --softirq-ms",
            limit,
            "Documentation/scheduler/sched-rt-group.rst; ksoftirqd in kernel/softirq.c",
            "an RT task held the CPU for most of the wait, so ksoftirqd could not run the deferred softirq",
        )
    defer = max(limit, harm.SOFTIRQ_DEFER)
    if seconds <= defer:
        return None
    ratio = seconds / defer
    return Judgement(
        Severity.MEDIUM if ratio > harm.ORDER else Severity.LOW,
        "deferral of a softirq raised in task context: until the next tick or ksoftirqd runs",
        defer,
        "one tick at HZ=100 (kernel/softirq.c: raise_softirq, ksoftirqd)",
        f"no RT task held the CPU: the softirq waited its turn behind CFS tasks, {ratio:.1f} ticks",
    )


def softirq_starvation(analysis: TraceAnalysis, source: str) -> list[Finding]:
    """Softirq vectors raised long before they ran, or running long."""
    limit = analysis.thresholds.softirq
    out = []
    by_pid = {t.pid: t for t in analysis.tasks}
    for soft in analysis.softirqs:
        wait = soft.worst_raise_wait
        judged = _judge_softirq_wait(wait, by_pid, limit) if wait is not None else None
        if wait is not None and judged is not None:
            confidence, reason = _confidence(analysis, wait.span)
            out.append(
                Finding(
                    id=finding_id(FindingKind.SCHED_SOFTIRQ_STARVATION, soft.name),
                    kind=FindingKind.SCHED_SOFTIRQ_STARVATION,
                    title=f"Softirq starvation: {soft.name} waited {fmt_ms(wait.span.duration)} from raise to run",
                    severity=judged.severity,
                    confidence=confidence,
                    confidence_reason=reason,
                    summary=(
                        f"Softirq {soft.name} (vec {soft.vec}) was raised on CPU{wait.span.cpu} at "
                        f"{wait.span.start:.6f} and entered {fmt_ms(wait.span.duration)} later; "
                        f"{_behind_text(wait, analysis)}."
                        f" Judged: {judged.why}."
                    ),
                    evidence=_evidence(source, wait.span),
                    facts=(
                        Fact("worst raise-to-entry", fmt_ms(wait.span.duration)),
                        Fact("mean raise-to-entry", fmt_ms(soft.raise_latency.mean)),
                        *_behind_facts(wait, analysis),
                    ),
                    next_steps=("check RT tasks on that CPU and ksoftirqd's wakeup latency in the task table",),
                    detector=DETECTOR,
                    baseline=_baseline(judged),
                )
            )
        run = soft.durations.worst
        if run is not None and run.duration > limit:
            confidence, reason = _confidence(analysis, run)
            out.append(
                Finding(
                    id=finding_id(FindingKind.SCHED_SOFTIRQ_LONG, soft.name),
                    kind=FindingKind.SCHED_SOFTIRQ_LONG,
                    title=f"Long softirq: {soft.name} ran {fmt_ms(run.duration)} on CPU{run.cpu}",
                    # Past its budget the kernel hands the rest to ksoftirqd: a run just over it is the kernel's
                    # own pacing under load (low); one lasting a tick (5 budgets) held the CPU from everyone.
                    severity=Severity.MEDIUM if run.duration > 5 * max(limit, harm.MAX_SOFTIRQ_TIME) else Severity.LOW,
                    confidence=confidence,
                    confidence_reason=reason,
                    summary=(
                        f"Softirq {soft.name} ran {fmt_ms(run.duration)} from {run.start:.6f} on CPU{run.cpu}; "
                        f"{soft.durations.n} runs, {fmt_ms(soft.durations.total)} in total."
                    ),
                    evidence=_evidence(source, run),
                    facts=(Fact("longest run", fmt_ms(run.duration)),),
                    detector=DETECTOR,
                    baseline=Baseline(
                        "a softirq run's budget before the rest is deferred to ksoftirqd",
                        fmt_ms(max(limit, harm.MAX_SOFTIRQ_TIME)),
                        "MAX_SOFTIRQ_TIME in kernel/softirq.c (2 ms); --softirq-ms",
                    ),
                )
            )
    return out[:MAX_PER_RULE]


def long_irqs(analysis: TraceAnalysis, source: str) -> list[Finding]:
    """IRQ handlers that ran longer than the threshold."""
    limit = analysis.thresholds.irq
    out = []
    for irq in sorted(analysis.irqs, key=lambda i: -(i.durations.worst.duration if i.durations.worst else 0.0)):
        run = irq.durations.worst
        if run is None or run.duration <= limit:
            continue
        confidence, reason = _confidence(analysis, run)
        label = f"IRQ {irq.irq} ({irq.name})" if irq.irq >= 0 else f"vector {-irq.irq} ({irq.name})"
        out.append(
            Finding(
                id=finding_id(FindingKind.SCHED_LONG_IRQ, irq.name or str(irq.irq)),
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
                baseline=Baseline(
                    "a hard IRQ handler's run, which blocks everything else on its CPU; --irq-ms",
                    fmt_ms(limit),
                    "handlers defer work to threads, softirqs or workqueues (Documentation/core-api/genericirq.rst)",
                ),
            )
        )
    return out[:MAX_PER_RULE]


def _dstate_severity(longest: float, total: float) -> Severity:
    """One sleep of the hung-task timeout is a hang (high), of a second or more a stall (medium); sleeps each within
    that second but adding up to more is time beyond it that load explains (low); below it, time in D is where the
    task's time went: context (info, docs/severity.md).  Every D sleep was low: a healthy trace's 3.4 ms disk write
    of a kworker, 300 times below the finding's own baseline, was a "low finding to watch"."""
    if longest >= harm.HUNG_TASK:
        return Severity.HIGH
    if longest >= harm.DSTATE_STALL:
        return Severity.MEDIUM
    return Severity.LOW if total >= harm.DSTATE_STALL else Severity.INFO


def dstate_blocking(analysis: TraceAnalysis, source: str) -> list[Finding]:
    """Tasks that spent time in uninterruptible sleep (D): I/O, locks, page faults."""
    limit = analysis.thresholds.dstate
    rows = []
    for task in analysis.tasks:
        for st in task.blocked:
            if st.state == "D" and st.worst is not None and st.total >= limit:
                rows.append((task, st))
    rows.sort(key=lambda r: -r[1].total)
    out = []
    for task, st in rows[:MAX_PER_RULE]:
        worst = st.worst
        assert worst is not None
        confidence, reason = _confidence(analysis, None)  # the sleeps' total, over the whole trace
        out.append(
            Finding(
                id=_task_id(FindingKind.SCHED_DSTATE, task),
                kind=FindingKind.SCHED_DSTATE,
                title=f"D-state blocking: {task.comm} blocked {st.n} time(s), {fmt_ms(st.total)} in total",
                severity=_dstate_severity(worst.duration, st.total),
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
                baseline=Baseline(
                    # (low: no sleep reached it, their sum did; the finding says which figure was judged)
                    ("its time in D in all, against " if worst.duration < harm.DSTATE_STALL <= st.total else "")
                    + "one uninterruptible sleep: I/O and locks under load take up to about a second; "
                    "the hung-task detector warns at 120 s",
                    fmt_ms(harm.DSTATE_STALL),
                    "kernel.hung_task_timeout_secs (Documentation/admin-guide/sysctl/kernel.rst)",
                ),
                subjects=(_task_subject(task),),
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
                    id=_off_id(_OFF_KINDS[off.what], span),
                    kind=_OFF_KINDS[off.what],
                    title=f"{off.what} for {fmt_ms(span.duration)} on CPU{span.cpu}",
                    severity=Severity.MEDIUM,
                    confidence=0.9,
                    confidence_reason=f"from {off.source}",
                    summary=f"CPU{span.cpu} ran with {off.what} for {fmt_ms(span.duration)} (from {off.source}).",
                    evidence=_evidence(source, span),
                    detector=DETECTOR,
                    baseline=Baseline(
                        f"{off.what} interval: nothing else is scheduled on the CPU meanwhile; --offtime",
                        fmt_ms(limit),
                        "the irqsoff/preemptoff latency tracers (Documentation/trace/ftrace.rst)",
                    ),
                )
            )
    return out[:MAX_PER_RULE]


def _off_id(kind: FindingKind, span: Span) -> str:
    """An off interval's finding id: its caller, the code site an ftrace user names it by (the irqsoff tracer's
    "started at"), the same across runs; the intervals one caller opens are one problem (:func:`detect` keeps
    the worst).  Without a caller, the interval itself: its CPU, start and line, so that two such intervals
    are never taken for one problem."""
    if span.caller:
        return finding_id(kind, span.caller)
    return finding_id(kind, "no caller", f"CPU{span.cpu}", f"{span.start:.6f}", f"line {span.begin.line_no}")


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

    Tasks that share a comm share a finding (threads of one program); each rule lists the worst first, so
    the first finding of a comm is kept, its id naming that task's pid too (:func:`_task_id`).  Then the
    input checks:
    figures across a step where a CPU's clock went back are dropped (and named
    in a ``trace-clock`` finding), and so are figures that reach past the time
    a CPU stopped reporting (named in a ``trace-coverage`` finding that cites
    that CPU's last event): what ran there meanwhile is not known.  So are figures that begin before a CPU
    started reporting (its buffer overwritten, or silent): a task woken there may have run there unseen.
    """
    found: dict[tuple[str, str], Finding] = {}
    for _name, rule in RULES:
        for finding in rule(analysis, source):
            task = finding.subject(SubjectKind.TASK)
            # A task --task asks about keeps its own (its comm's worst may be another pid's, which --task leaves out)
            key = "" if task is None else task.name if task.pid not in analysis.asked else f"{task.name}/{task.pid}"
            found.setdefault((finding.kind.value, key) if task is not None else ("", finding.id), finding)
    return screen(list(found.values()), analysis, source)


def _interval(finding: Finding) -> tuple[float, float, set[int]] | None:
    """The time span a finding's evidence covers, and the CPUs it names (None without timestamps)."""
    times = [e.timestamp.seconds for e in finding.evidence if e.timestamp is not None]
    cpus = {e.cpu for e in finding.evidence if e.cpu is not None}
    return (min(times), max(times), cpus) if times and cpus else None


#: The findings about an interval that stays on one CPU: a run (from its switch-in to its switch-out there), a
#: handler, a softirq raised and run there, an irqs-off or preempt-off section.  Only a loss of that CPU's events
#: makes one unknown; a wait or a sleep (wakeup latency, D state) is a task's time on no CPU the trace shows, and
#: any CPU's loss makes it unknown (ClockCheck.lost_in).
_ON_ONE_CPU = frozenset(
    {
        FindingKind.SCHED_CPU_HOG,
        FindingKind.SCHED_RT_HOG,
        FindingKind.SCHED_LONG_IRQ,
        FindingKind.SCHED_SOFTIRQ_LONG,
        FindingKind.SCHED_SOFTIRQ_STARVATION,
        FindingKind.SCHED_IRQS_OFF,
        FindingKind.SCHED_PREEMPT_OFF,
    }
)


def _lost_under(found: Finding, analysis: TraceAnalysis) -> bool:
    """Whether what ``found`` measured overlaps a loss of events it depends on (see :data:`_ON_ONE_CPU`).

    A hog's evidence holds the waits of the tasks it kept waiting (each judged only when no loss touches it,
    harm.victim_harm): its own figure is its longest run, on the run's CPU."""
    clock = analysis.clock
    if found.kind in (FindingKind.SCHED_CPU_HOG, FindingKind.SCHED_RT_HOG):
        task = found.subject(SubjectKind.TASK)
        stats = next((t for t in analysis.tasks if task is not None and t.pid == task.pid), None)
        run = stats.runs.worst if stats is not None else None
        if run is not None:
            return bool(clock.lost_in(run.start, run.start + run.duration, {run.cpu}))
    span = _interval(found)
    if span is None:
        return False
    start, end, cpus = span
    return bool(clock.lost_in(start, end, cpus if found.kind in _ON_ONE_CPU else None))


def screen(findings: list[Finding], analysis: TraceAnalysis, source: str) -> list[Finding]:
    """Apply the input checks of the analysis to ``findings`` (see :func:`detect`); add the input findings."""
    clock, stopped, started = analysis.clock, analysis.coverage.stopped, analysis.coverage.started
    dropped: list[str] = []
    jumped: list[str] = []  # of which across a jump forward
    lost: list[str] = []  # across a loss of events
    unseen: list[str] = []
    before: list[str] = []  # begun before a CPU started reporting
    to_end: list[str] = []  # reaching past the last event of a CPU that ran its task to the end: reported
    out: list[Finding] = []
    stepped = clock._replace(losses=())  # the steps and jumps (a loss is judged per CPU above them: _lost_under)
    for found in findings:
        span = _interval(found)
        if span is None:
            out.append(found)
            continue
        start, end, cpus = span
        if clock.losses and _lost_under(found, analysis):  # unknown, not measured: said in the loss finding
            lost.append(found.title)
            continue
        if (clock.disputed or clock.jumps) and any(stepped.disputes(cpu, start, end) for cpu in cpus):
            dropped.append(found.title)
            if any(start < j.after.ts and end > j.before.ts for j in clock.jumps):
                jumped.append(found.title)
            continue
        gone = [ref for ref in stopped if end > ref.ts + STOP_SLACK]
        if gone:  # what ran on the silent CPU meanwhile is not known: not a finding (named in the coverage one)
            unseen.append(found.title)
            continue
        if any(start < ref.ts - STOP_SLACK for ref in started):  # the same before a CPU's first event
            before.append(found.title)
            continue
        if any(end > r.last.ts + STOP_SLACK for r in analysis.coverage.running):
            to_end.append(found.title)
        out.append(found)
    if clock.back:
        out.append(_clock_finding(clock, [t for t in dropped if t not in jumped], source, analysis.by_line))
    if len(clock.jumps) > len(clock.holes):
        out.append(_jump_finding(clock, jumped, source, analysis.by_line))
    if clock.holes:
        out.append(_hole_finding(clock, source, analysis.by_line))
    if lost:
        out.append(_lost_finding(clock, lost, source, analysis.by_line))
    # Each coverage finding is said only when it leaves figures out; the header's coverage note says when each
    # CPU starts and stops.  A CPU is silent at the end of a healthy trace as often as not (idle, or one task
    # running on), so said always it was a finding on every such trace (12.461 ms on this VM's own 7.5 s one).
    if unseen:
        out.append(_gap_finding(analysis, source, False, unseen))
    if before:
        out.append(_gap_finding(analysis, source, True, before))
    if to_end:
        out.append(_running_finding(analysis, source, to_end))
    return out


#: A figure is flagged when it ends this long (seconds) after a CPU's last event.
STOP_SLACK = 1e-3


def _ref_evidence(source: str, ref: EventRef) -> Evidence:
    return Evidence(
        source=source,
        locator=Locator(LocatorKind.EVENT, ref.line_no, name=cpu_name(ref.cpu) if ref.cpu >= 0 else None),
        excerpt=ref.text,
        timestamp=Timestamp(ref.ts, Clock.MONOTONIC) if ref.ts > 0 else None,
        cpu=ref.cpu if ref.cpu >= 0 else None,
    )


def _clock_finding(clock: ClockCheck, dropped: list[str], source: str, by_line: bool = True) -> Finding:
    cpus = sorted({c for c, _lo, _hi in clock.disputed})
    where = ", ".join(f"CPU{c}" for c in cpus)
    steps = "; ".join(
        f"{s.before.said(by_line)}, then {s.after.said(by_line)} on CPU{s.after.cpu}" for s in clock.examples[:3]
    )
    if clock.reversed():
        title = f"the trace is in reverse order ({clock.back} of {clock.steps} steps go back in time)"
        why = "most events of each CPU come before the events that precede them: the file was reversed or mis-sorted"
    else:
        title = f"trace timestamps go back in time {clock.back} times on {where}"
        why = "one CPU's ring buffer is written in time order, so a step back means a damaged or mis-merged file"
    not_reported = (
        f" {len(dropped)} figures that span these steps are not reported: {first_of(dropped, 5)}"
        if dropped
        else " No finding spanned them."
    )
    evidence = tuple(
        e for s in clock.examples[:3] for e in (_ref_evidence(source, s.before), _ref_evidence(source, s.after))
    )
    return Finding(
        id=finding_id(FindingKind.TRACE_CLOCK, "reversed" if clock.reversed() else "back"),
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
        baseline=Baseline(
            "each CPU's events, against the one before on that CPU",
            "never earlier: 0 steps back",
            "a CPU's ring buffer is written in time order (Documentation/trace/ring-buffer-design.rst)",
        ),
    )


def _lost_finding(clock: ClockCheck, dropped: list[str], source: str, by_line: bool = True) -> Finding:
    """The figures that overlap a loss of events: unknown, not measured (review 7 E)."""
    gaps = [g for g in clock.losses if g.before is not None or g.after is not None]
    return Finding(
        id=finding_id(FindingKind.TRACE_COVERAGE, "lost"),
        kind=FindingKind.TRACE_COVERAGE,
        title=f"{len(dropped)} figure(s) unknown: they span events lost ({gaps[0].said(by_line)})",
        severity=Severity.LOW,
        confidence=0.95,
        confidence_reason="the tracer's lost-events markers, each between two cited events of its CPU",
        summary="unknown: "
        + first_of([g.said(by_line) for g in gaps], 3)
        + ". What ran there meanwhile is not in the trace, and a task that waited or slept then may have run there "
        "(a wakeup targets it, a balancer moves it: its CPU is not in the trace until it runs), so its waits and "
        "sleeps over that time are unknown on every CPU, and so are runs, handlers and softirqs of the CPU that "
        f"lost them (another CPU's, seen whole there, are measured). Not measured: {first_of(dropped, 5)}",
        evidence=tuple(_ref_evidence(source, r) for g in gaps[:3] for r in (g.before, g.after) if r is not None),
        facts=(Fact("losses", str(len(clock.losses))), Fact("events lost", str(sum(g.events for g in clock.losses)))),
        next_steps=("record with a larger buffer (trace-cmd record -b 20000, or buffer_size_kb) so no event is lost",),
        detector=DETECTOR,
        baseline=Baseline(
            "events the tracer lost (its lost-event markers)",
            "none: every figure measured between events all seen",
            "the trace's own markers (trace-cmd/ftrace [LOST N EVENTS], perf PERF_RECORD_LOST)",
        ),
    )


def _hole_finding(clock: ClockCheck, source: str, by_line: bool = True) -> Finding:
    """Holes in the recording (detectors.sched.sanity.HOLE_MIN_S): every CPU silent far longer than the trace's own
    event rate allows while a task ran; nothing that spans one was counted (the analyzers' barrier, as for lost
    events), so no figure is dropped here."""
    from detectors.sched.sanity import HOLE_EXPECTED, HOLE_FACTOR

    worst = max(clock.holes, key=lambda j: j.after.ts - j.before.ts)
    longest = worst.after.ts - worst.before.ts
    gaps = "; ".join(
        f"no events from {j.before.said(by_line)} to {j.after.said(by_line)} ({j.after.ts - j.before.ts:.3f} s)"
        for j in clock.holes[:3]
    )
    return Finding(
        id=finding_id(FindingKind.TRACE_CLOCK, "hole"),
        kind=FindingKind.TRACE_CLOCK,
        title=f"{len(clock.holes)} hole(s) in the recording (longest {longest:.3f} s with no event on any CPU)",
        # The recording's quality, not the kernel's harm (as a CPU that stops reporting, or lost events): low.  It
        # was medium, and a healthy machine's trace with a hole read as "the kernel had a problem".
        severity=Severity.LOW,
        confidence=0.8,
        confidence_reason=f"no event on any CPU while a task ran, for {HOLE_FACTOR:g} times the longest silence "
        f"before and long enough for {HOLE_EXPECTED:g} events at the trace's own rate, its tick's among them",
        summary=f"{gaps}: the trace was stopped and restarted, files were joined or a buffer was read and reset; "
        "no run, wait or latency that spans a hole is counted (the totals leave it out).",
        evidence=tuple(
            e for j in clock.holes[:3] for e in (_ref_evidence(source, j.before), _ref_evidence(source, j.after))
        ),
        facts=(Fact("holes", str(len(clock.holes))), Fact("longest", f"{longest:.6f} s")),
        next_steps=("analyse each side on its own with --window FROM:TO", "record again without stopping the trace"),
        detector=DETECTOR,
        baseline=Baseline(
            "a silence of every CPU while a task ran, against the trace's own",
            f"{HOLE_FACTOR:g} times its longest silence before, and long enough for {HOLE_EXPECTED:g} events at its "
            "rate",
            "detectors/sched/sanity.py HOLE_FACTOR, HOLE_EXPECTED (the tick writes events every few ms)",
        ),
    )


def _jump_finding(clock: ClockCheck, dropped: list[str], source: str, by_line: bool = True) -> Finding:
    """The trace jumps forward: no event on any CPU for longer than a busy kernel ever stays silent."""
    from detectors.sched.sanity import JUMP_S

    jumps = [j for j in clock.jumps if j not in clock.holes]
    clock = clock._replace(jumps=tuple(jumps))
    worst = max(clock.jumps, key=lambda j: j.after.ts - j.before.ts)
    longest = worst.after.ts - worst.before.ts
    gaps = "; ".join(
        f"{j.before.said(by_line)}, then {j.after.said(by_line)} ({j.after.ts - j.before.ts:.3f} s later)"
        for j in clock.jumps[:3]
    )
    not_reported = (
        f" {len(dropped)} figures that span a jump are not reported: {first_of(dropped, 5)}"
        if dropped
        else " No finding spanned one."
    )
    return Finding(
        id=finding_id(FindingKind.TRACE_CLOCK, "jump"),
        kind=FindingKind.TRACE_CLOCK,
        title=f"the trace jumps forward {len(clock.jumps)} times (longest {longest:.3f} s with no event on any CPU)",
        severity=Severity.MEDIUM,
        confidence=0.8,
        confidence_reason=f"no event on any CPU for more than {JUMP_S:g} s between two cited events",
        summary=f"a kernel's tick, RCU and workers write events every few ms, so a silence of every CPU this long "
        f"is a suspend, a clock set forward or a missing stretch of the file (e.g. {gaps}); runs and waits measured "
        f"across it would last the whole silence.{not_reported}",
        evidence=tuple(
            e for j in clock.jumps[:3] for e in (_ref_evidence(source, j.before), _ref_evidence(source, j.after))
        ),
        facts=(
            Fact("jumps", str(len(clock.jumps))),
            Fact("longest", f"{longest:.6f} s"),
        ),
        next_steps=(
            "check whether the machine was suspended or its clock set while recording (journalctl -k: PM: suspend)",
            "analyse each side on its own with --window FROM:TO",
        ),
        detector=DETECTOR,
        baseline=Baseline(
            "a silence of every CPU",
            f"at most {JUMP_S:g} s: a kernel's tick, RCU and workers write events every few ms",
            "detectors/sched/sanity.py JUMP_S",
        ),
    )


def _gap_finding(analysis: TraceAnalysis, source: str, start: bool, left_out: list[str]) -> Finding:
    """A CPU coverage finding (low): the CPUs that start reporting late (``start``) or stop early, each cited
    by its first or last event, and the figures held back for it (``left_out``).

    The late start was found on a tracefs instance of 256 KB per CPU read after 10 s of load: CPU1's events of
    the first 4 s were overwritten, and a kworker woken for CPU1 at 45313.163 was "waiting 892.908 ms" (medium)
    until its switch-in at 45314.056, though it may have run on CPU1 in the part its buffer lost.
    """
    cov = analysis.coverage
    refs = cov.started if start else cov.stopped
    window = analysis.window if isinstance(analysis.window, tuple) else None
    if start:
        edge = window[0] if window else min(r.ts for r in refs)
        which = ", ".join(f"CPU{r.cpu} from {r.ts:.6f} ({fmt_ms(r.ts - edge)} after the start)" for r in refs)
        said = (
            f"The trace begins at {edge:.6f} but holds events of {which} only: its buffer may have been "
            "overwritten (a ring buffer keeps its latest events) or the CPU was silent, so waits and runs before "
            "that time may have been served or preempted there unseen: figures that begin before it are not findings."
        )
    else:
        edge = window[1] if window else max(r.ts for r in refs)
        which = ", ".join(f"CPU{r.cpu} at {r.ts:.6f} ({fmt_ms(edge - r.ts)} before the end)" for r in refs)
        said = (
            f"The trace holds no events of {which}, up to {edge:.6f}. {_why_stopped(refs, cov.cuts)}, "
            "so waits and runs after that time may have been served or preempted there unseen: figures that "
            "reach past it are not findings."
        )
    if not start and cov.recorder and len(cov.recorder) == len(refs):
        return _recorder_stop_finding(analysis, source, left_out)
    if left_out:
        said += f" {len(left_out)} such figure(s) are not reported: {first_of(left_out, 5)}"
    verb = ("start" if start else "stop") + ("" if len(refs) > 1 else "s")
    cut_cpus = {c.cpu for c in cov.cuts} & {r.cpu for r in refs} if not start else set()
    buffer_step = (
        # An LTTng session's buffers are its channel's sub-buffers, not trace-cmd's.
        "record with larger sub-buffers (lttng enable-channel --kernel --subbuf-size 4M --num-subbuf 8 ...)"
        + (" so no event is lost" if start else " or check the CPU was idle")
        if not analysis.by_line
        else "record with a larger buffer (trace-cmd record -b 20000, or buffer_size_kb) so no event is lost"
        if start
        else "record with a larger buffer (trace-cmd record -b 20000) or check the CPU was idle"
    )
    return Finding(
        id=finding_id(FindingKind.TRACE_COVERAGE, *(("start",) if start else ()), *(str(r.cpu) for r in refs)),
        kind=FindingKind.TRACE_COVERAGE,
        title=f"{', '.join(f'CPU{r.cpu}' for r in refs)} {verb} reporting "
        + ("after the trace begins" if start else "before the trace ends"),
        severity=Severity.LOW,
        confidence=0.9,
        confidence_reason=f"the {'first' if start else 'last'} event of each CPU, cited; an idle CPU can be silent",
        summary=said
        + (
            f" (CPU{', CPU'.join(str(r.cpu) for r in cov.recorder)}: its last switch was to the recorder)"
            if cov.recorder and not start
            else ""
        ),
        evidence=tuple(_ref_evidence(source, r) for r in refs),
        baseline=_covered(start),
        next_steps=(
            *(("copy the session again whole (a stream file ends inside a packet)",) if cut_cpus else ()),
            # every silent CPU's stream is cut: no buffer is in question
            *((buffer_step,) if len(cut_cpus) < len({r.cpu for r in refs}) else ()),
        ),
        detector=DETECTOR,
    )


def _why_stopped(refs: tuple[EventRef, ...], cuts: tuple[StreamCut, ...]) -> str:
    """Why CPUs stop reporting: for one whose LTTng stream file is cut (Coverage.cuts), the cut, read; for the
    others, a guess (a buffer filled or stopped).  A cut stream's CPU read "Its buffer may have filled or stopped"
    until 2026-12-07, the cut said only in the examined block (bug446190, channel0_1 cut at byte 149976, ue23 #7)."""
    cut = {c.cpu: c for c in cuts if c.cpu >= 0}
    said = [
        f"CPU{r.cpu}'s stream file {cut[r.cpu].stream} ends inside a packet at byte {cut[r.cpu].at}: its events after "
        "that were not read"
        for r in refs
        if r.cpu in cut
    ]
    rest = [f"CPU{r.cpu}" for r in refs if r.cpu not in cut]
    if rest:
        said.append(
            f"{', '.join(rest)}'s buffer may have filled or stopped"
            if said
            else "Its buffer may have filled or stopped"
        )
    return "; ".join(said)


def _run_open(analysis: TraceAnalysis, task: TaskStats) -> str:
    """Where the task's longest run was still open (OPEN_RECORDING, OPEN_WINDOW: forensics.types.sched), "" when
    its switch-out ended it: as freeze closed it (IntervalStats.worst_open), else, for a run no switch-out ends, the
    recording's end, or the window's with one.  Its length is then a lower bound."""
    runs = task.runs
    if runs.worst is None or runs.worst_open:
        return runs.worst_open
    if runs.worst_out is not None:
        return ""
    return OPEN_WINDOW if analysis.kinds_read else OPEN_RECORDING


def _ran(run: Span, open_at: str) -> str:
    """A run's length and CPU for a title: "at least" when it was still open where the window or the recording ends
    (``open_at``: _run_open; ue21 #2: rthog's 572.208 ms on CPU1)."""
    return f"ran {'at least ' if open_at else ''}{fmt_ms(run.duration)} on CPU{run.cpu}"


def _still(open_at: str) -> str:
    """Where an open run still ran, for a title: " (still running when the recording stopped)"; "" for one ended."""
    return f" ({_still_running(open_at)})" if open_at else ""


def _still_running(open_at: str) -> str:
    """Where a run open at ``open_at`` (_run_open) still ran: "still running at the window's end"."""
    return "still running " + open_where(open_at)


def _running_finding(analysis: TraceAnalysis, source: str, reported: list[str]) -> Finding:
    """CPUs silent at the end with a task still running there (info): their last switch put it on them, no switch
    after, no event lost (Coverage.running).  The figures that reach into that silence are reported, as lower
    bounds (``reported``), where a CPU that stops reporting holds them back (_gap_finding).

    Found on a recording stopped while an RT hog spun on CPU1 (ue21 #2, rt_cut.dat, 0 events lost): "CPU1 stops
    reporting before the trace ends ... Its buffer may have filled or stopped ... 2 such figure(s) are not
    reported", the hog's 572 ms and the 799 ms wait of the task behind it left out, the worst a 35 ms wait."""
    running = analysis.coverage.running
    window = analysis.window if isinstance(analysis.window, tuple) else None
    edge = window[1] if window else max(r.last.ts for r in running)
    which = "; ".join(
        f"CPU{r.cpu}'s last sched_switch, at {r.switch.ts:.6f}, put {r.comm} (pid {r.pid}) on it and none follows; "
        f"its last event is at {r.last.ts:.6f} ({fmt_ms(edge - r.last.ts)} before the end)"
        for r in running
    )
    said = (
        f"{which}. No event was lost or overwritten, and a task that keeps its CPU writes no sched event (a CPU-bound "
        "loop, an RT task spinning): the silence is that task still running when the recording stopped, not a "
        f"buffer that filled. Its run and the waits queued behind it are counted up to {edge:.6f}, lower bounds "
        f'("at least"). {len(reported)} figure(s) reach into that time and are reported: {first_of(reported, 5)}'
    )
    cpus = ", ".join(f"CPU{r.cpu}" for r in running)
    return Finding(
        id=finding_id(FindingKind.TRACE_COVERAGE, "running", *(str(r.cpu) for r in running)),
        kind=FindingKind.TRACE_COVERAGE,
        title=f"{cpus} still running {', '.join(sorted({r.comm for r in running}))} when the recording stopped "
        "(no switch-out, no event lost)",
        severity=Severity.INFO,
        confidence=0.9,
        confidence_reason="the last sched_switch of each CPU, cited, and no lost-event marker or overwritten event",
        summary=said,
        evidence=tuple(e for r in running for e in (_ref_evidence(source, r.switch), _ref_evidence(source, r.last))),
        facts=(Fact("running at the end", ", ".join(f"{r.comm} (pid {r.pid}) on CPU{r.cpu}" for r in running)),),
        next_steps=("to see how long it ran on, record until it yields the CPU (or with a longer recording)",),
        detector=DETECTOR,
        baseline=Baseline(
            "a CPU's last event, against the trace's last",
            f"within {rules.STOP_GAP * 1e3:g} ms of it, unless its last switch put a task on it and no event was "
            "lost: then that task ran on to the end (information)",
            "detectors/sched/rules.py STOP_GAP (docs/severity.md, Input checks)",
        ),
    )


def _covered(start: bool) -> Baseline:
    """What a CPU's first (``start``) or last event is held to, the coverage finding's baseline: a CPU silent longer
    than STOP_GAP after the trace's first event or before its last is not covered there, and the figures that reach
    into that time are held back."""
    edge = "first" if start else "last"
    return Baseline(
        f"a CPU's {edge} event, against the trace's {edge}",
        f"within {rules.STOP_GAP * 1e3:g} ms of it",
        "detectors/sched/rules.py STOP_GAP: what ran on a silent CPU is unseen (docs/severity.md, Input checks)",
    )


def _recorder_stop_finding(analysis: TraceAnalysis, source: str, left_out: list[str]) -> Finding:
    """CPUs that stop reporting because the recording tool ran there to end the recording (info): their last
    switch was to it (Coverage.recorder).  The figures that reach past their last event stay held back (what ran
    there later is unseen), but the silence is how every such recording ends, no buffer that filled.

    Found on ``perf record -a -e 'sched:*' -- sleep 6`` of a healthy VM (ue15 #13): CPU0's last event was the switch
    to perf 78.381 ms before CPU1's last, and it was a low "CPU0 stops reporting ... Its buffer may have filled"."""
    cov = analysis.coverage
    refs = {r.cpu: r for r in cov.stopped}
    window = analysis.window if isinstance(analysis.window, tuple) else None
    edge = window[1] if window else max(r.ts for r in cov.stopped)
    cpus = ", ".join(f"CPU{s.cpu}" for s in cov.recorder)
    tools = sorted({s.comm for s in cov.recorder})
    which = "; ".join(
        f"CPU{s.cpu}'s last event, at {refs[s.cpu].ts:.6f} ({fmt_ms(edge - refs[s.cpu].ts)} before the end), is its "
        f"switch to {s.comm} (pid {s.pid})"
        for s in cov.recorder
    )
    said = (
        f"{which}, the recording tool itself: it runs there as it ends the recording and turns the events off CPU by "
        f"CPU (perf record -a, once its workload exits), so {'those CPUs write' if len(refs) > 1 else 'the CPU writes'}"
        f" nothing more up to {edge:.6f}. That is how such a recording ends, not a buffer that filled or stopped; "
        "what ran there after it is not in the trace, so figures that reach past it are not findings."
    )
    if left_out:
        said += f" {len(left_out)} such figure(s) are not reported: {first_of(left_out, 5)}"
    earliest = min(refs[s.cpu].ts for s in cov.recorder)
    verb = "stop" if len(cov.recorder) > 1 else "stops"
    return Finding(
        id=finding_id(FindingKind.TRACE_COVERAGE, *(str(s.cpu) for s in cov.recorder)),
        kind=FindingKind.TRACE_COVERAGE,
        title=f"{cpus} {verb} reporting when the recorder ({', '.join(tools)}) ends the recording there",
        severity=Severity.INFO,
        confidence=0.9,
        confidence_reason=f"the last event of each CPU, cited: a switch to {', '.join(tools)}, the recording tool",
        summary=said,
        evidence=tuple(_ref_evidence(source, refs[s.cpu]) for s in cov.recorder),
        next_steps=(
            "nothing to fix in the recording; to judge the CPUs over the time all of them are covered: --window "
            + (f"{window[0]:.6f}" if window else "START")
            + f":{earliest:.6f}",
        ),
        facts=(Fact("recorder", ", ".join(f"{s.comm} (pid {s.pid}) on CPU{s.cpu}" for s in cov.recorder)),),
        detector=DETECTOR,
        baseline=Baseline(
            "a CPU's last event, against the trace's last",
            f"within {rules.STOP_GAP * 1e3:g} ms of it, unless its last switch was to the recorder "
            f"({', '.join(rules.RECORDERS)}): then it is the recording's own end (information)",
            "detectors/sched/rules.py STOP_GAP, RECORDERS (docs/severity.md, Input checks)",
        ),
    )
