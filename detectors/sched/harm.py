"""Severity from harm: who waited, how long, judged against what the scheduler promises their class.

A figure of a trace (a long run, a long wait) is a problem only when it hurt
someone, and how much depends on who waited and what their scheduling class
was promised (docs/severity.md has the rules with their sources):

- an RT task (SCHED_FIFO/RR, kernel prio < 100) is promised the CPU as soon as
  it is runnable: its wakeup latency is judged against microseconds
  (:data:`RT_PROMISE`);
- a CFS task that waited while an RT task held the CPU was given nothing: CFS
  gets no time until the RT task sleeps (or is throttled after
  ``sched_rt_runtime_us``), so any such wait above the reporting threshold is
  starvation;
- a CFS task that waited while other CFS tasks took their turns was treated
  fairly: it is judged against the CFS latency period for the tasks that shared
  the CPU (:func:`cfs_period`, scaled by its weight).  Above it, that is load
  (low), not a fault; a problem only 20 periods beyond it for a
  latency-sensitive kernel thread, 100 for anyone.

The waiter's weight matters too: kernel threads that keep the machine going
(rcu_preempt, ksoftirqd, kworkers, migration, watchdog, IRQ threads), RT tasks
and the threads that serve request spans count more than an ordinary task
(:func:`latency_sensitive`).
"""

from __future__ import annotations

import math
from typing import NamedTuple

from detectors.sched import rules
from forensics.model import NotAvailable, Severity
from forensics.types.release import release_version
from forensics.types.rt_budget import RT_PERIOD, RT_RUNTIME
from forensics.types.sched import (
    MOVED_MIGRATED,
    MOVED_UNKNOWN,
    NOT_PREEMPTIBLE,
    Blame,
    TaskStats,
    TraceAnalysis,
    Wait,
)
from forensics.types.trace import PRIO_UNKNOWN, prio_known
from forensics.units import fmt_ms

#: An RT task's wakeup latency promise (s): it preempts any CFS task at the next preemption point, tens of
#: microseconds on a preemptible kernel (Documentation/scheduler/sched-rt-group.rst; cyclictest figures).
RT_PROMISE = 100e-6
#: CFS defaults before scaling (s): sysctl_sched_latency 6 ms and sysctl_sched_min_granularity 0.75 ms, both
#: multiplied by 1 + ilog2(min(CPUs, 8)) (SCHED_TUNABLESCALING_LOG, kernel/sched/fair.c update_sysctl).
CFS_LATENCY = 6e-3
CFS_MIN_GRANULARITY = 0.75e-3
#: EEVDF's default slice before the same scaling (s): sysctl_sched_base_slice 0.75 ms (kernel/sched/fair.c).  Since
#: 6.6 (commit 147f3efaa241 "sched/fair: Implement an EEVDF-like scheduling policy") the fair class has no latency
#: period: sched_latency_ns and min_granularity are gone, a task runs one slice at a time by earliest eligible
#: virtual deadline, so N runnable tasks of equal weight each run within N slices.
EEVDF_BASE_SLICE = 0.75e-3
#: The first release scheduled by EEVDF.
EEVDF_SINCE = (6, 6)
#: A softirq raised in task context runs at the next interrupt exit or in ksoftirqd: within a tick, 10 ms at the
#: lowest common HZ (100). __do_softirq itself hands over to ksoftirqd after MAX_SOFTIRQ_TIME, 2 ms.
SOFTIRQ_DEFER = 10e-3
MAX_SOFTIRQ_TIME = 2e-3
#: One uninterruptible (D) sleep this long is a stall a user notices; I/O under load and lock waits stay below it.
DSTATE_STALL = 1.0
#: kernel.hung_task_timeout_secs default: the kernel itself reports a task in D this long.
HUNG_TASK = 120.0
#: The kernel's own bound for need_resched left unserved (kernel/sched/core.c resched_latency_warn_ms, 100 ms):
#: on a kernel that does not preempt kernel code, an RT task woken behind a task in the kernel waits up to it.
RESCHED_LATENCY_WARN = 0.1
#: The fair server (a deadline server that runs CFS tasks on a CPU its RT tasks hold: 50 ms of every 1 s by default)
#: since 6.12: on such a kernel a CFS task switched in for a runnable RT task may be its doing, not RT throttling's.
FAIR_SERVER_SINCE = (6, 12)
#: How far beyond its promise a wait must go before it is more than noise (an order of magnitude).
ORDER = 10.0
#: A fair-share wait (only CFS tasks ran) is load: the kernel made these threads CFS tasks on purpose. It is a
#: problem for a latency-sensitive kernel thread from this many CFS periods (high from STALL_PERIODS) ...
SENSITIVE_PERIODS = 20.0
#: ... and for anyone from this many: no fair sharing explains a hundred periods (a throttled cgroup, a stuck CPU).
STALL_PERIODS = 100.0
#: Kernel threads whose delay holds up the whole machine, and what each keeps going (said where its wait is rated
#: higher than an ordinary task's).
SENSITIVE_ROLES = (
    ("rcu", "RCU's grace periods"),
    ("ksoftirqd/", "the softirqs deferred to it"),
    ("kworker/", "the kernel's deferred work (workqueues)"),
    ("migration/", "task migration and stop-machine"),
    ("watchdog/", "the lockup watchdog"),
    ("irq/", "a threaded IRQ handler"),
    ("cpuhp/", "CPU hotplug"),
    ("idle_inject/", "idle injection"),
)
LATENCY_SENSITIVE = tuple(prefix for prefix, _what in SENSITIVE_ROLES)
#: Other kernel threads (they only run in kernel mode): with these, a long run is a kernel-mode run.
KERNEL_THREADS = (
    *LATENCY_SENSITIVE,
    "kswapd",
    "kcompactd",
    "khugepaged",
    "kthreadd",
    "jbd2/",
    "kdamond",
    "xfsaild/",
    "btrfs-",
    "kauditd",
    "oom_reaper",
    "writeback",
    "kblockd",
    "khungtaskd",
    "kintegrityd",
    "scsi_",
    "nvme-",
    "dmcrypt_",
    "z_",
    "txg_",
    "spl_",
)

#: The kernel's nice-to-weight table (kernel/sched/core.c sched_prio_to_weight), for nice -20..19.
_WEIGHTS = (
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916,
    9548, 7620, 6100, 4904, 3906, 3121, 2501, 1991, 1586, 1277,
    1024, 820, 655, 526, 423, 335, 272, 215, 172, 137,
    110, 87, 70, 56, 45, 36, 29, 23, 18, 15,
)  # fmt: skip


class Judgement(NamedTuple):
    """A severity, the baseline it was judged against, and the one-sentence reason."""

    severity: Severity
    baseline: str  # the expectation's name
    value: float  # its value (s)
    source: str  # where it comes from
    why: str
    fair: bool = False  # judged against the fair class's yardstick for the tasks that shared the CPU
    assumed: str = ""  # the assumption the baseline rests on, when it is assumed (Yardstick.assumed), else ""


def is_rt(prio: int) -> bool:
    """Kernel prio below 100: SCHED_FIFO/RR (or -1: deadline); a prio no event printed is not (PRIO_UNKNOWN)."""
    return prio_known(prio) and prio < 100


def kernel_thread(comm: str) -> bool:
    """A kernel thread, told by its name (kernel threads have no user space to run)."""
    return comm.startswith(KERNEL_THREADS)


def latency_sensitive(task: TaskStats, span_tids: frozenset[int] = frozenset(), prio: int | None = None) -> bool:
    """RT tasks, the kernel threads whose delay holds up the machine, and threads that serve request spans.

    ``prio``: the task's prio at the time judged (:func:`prio_at`), else the task's last."""
    return bool(sensitive_why(task, span_tids, prio))


def sensitive_why(task: TaskStats, span_tids: frozenset[int] = frozenset(), prio: int | None = None) -> str:
    """Why :func:`latency_sensitive` rates ``task`` (``"a kernel thread that keeps the softirqs deferred to it
    going"``),
    "" when it does not: a severity raised for it says so, so that a 308 ms wait rated above a 948 ms one against
    the same baseline says why."""
    if is_rt(task.prio if prio is None else prio):
        return "an RT task"
    role = next((what for prefix, what in SENSITIVE_ROLES if task.comm.startswith(prefix)), "")
    if role:
        return f"a kernel thread that keeps {role} going"
    return "a thread that serves request spans" if task.pid in span_tids else ""


def prio_at(task: TaskStats, wait: Wait) -> int:
    """The waiter's prio at ``wait`` as the trace shows it (Wait.prio), else the task's last: its class and CFS
    weight then decide what it was promised (a task made SCHED_FIFO after it forked was a CFS task until then)."""
    return wait.prio if wait.prio is not None and prio_known(wait.prio) else task.prio


def softirqs_measured(task: TaskStats, analysis: TraceAnalysis) -> bool:
    """A ksoftirqd thread in a trace that measures softirqs from raise to entry.

    ksoftirqd's delay hurts through the softirqs it would run; when the trace times each softirq from its
    raise to its entry, that harm is measured directly (and judged, ``sched-softirq-starvation``), so a
    fair-share wait of ksoftirqd itself is judged as an ordinary task's, not again as a latency-sensitive
    one's: softirqs also run at interrupt exit while it waits (kernel/softirq.c ``irq_exit_rcu``).
    """
    return task.comm.startswith("ksoftirqd/") and any(s.raise_latency.n > 0 for s in analysis.softirqs)


def weight(prio: int) -> int:
    """The CFS load weight of a task of kernel prio 100..139 (nice -20..19); a prio not known weighs as nice 0,
    the default (not as nice -20, where clamping PRIO_UNKNOWN would put it)."""
    if not prio_known(prio):
        return _WEIGHTS[20]
    return _WEIGHTS[min(max(prio - 100, 0), len(_WEIGHTS) - 1)]


def cpu_count(analysis: TraceAnalysis) -> int:
    """CPUs of the traced machine: as the trace declares them, else as many as had events."""
    declared = analysis.coverage.cpus_declared
    if not isinstance(declared, NotAvailable) and declared > 0:
        return declared
    return max(1, len(analysis.coverage.cpus_seen))


def cfs_period(nr_running: int, cpus: int) -> float:
    """The CFS latency period (s) for ``nr_running`` tasks: every one runs once in it (__sched_period)."""
    factor = 1 + (min(max(cpus, 1), 8).bit_length() - 1)
    latency, granularity = CFS_LATENCY * factor, CFS_MIN_GRANULARITY * factor
    return max(latency, nr_running * granularity)


def eevdf_slices(nr_running: int, cpus: int) -> float:
    """The time (s) ``nr_running`` tasks of equal weight take to run one EEVDF slice each (base_slice_ns 0.75 ms x
    (1 + log2 CPUs), the scaling CFS's tunables had)."""
    factor = 1 + (min(max(cpus, 1), 8).bit_length() - 1)
    return max(nr_running, 1) * EEVDF_BASE_SLICE * factor


class Yardstick(NamedTuple):
    """The time a fair-class task may wait for ``nr`` runnable tasks, as the kernel's policy sets it."""

    seconds: float
    name: str  # "CFS latency period for 3 runnable task(s) on 2 CPU(s)"
    release: str  # what the release adds to the name: ", kernel 6.18.44"; "" when it is not known
    assumed: str  # that the policy was assumed, when the release is not known: " (assumed: ...)"; else ""
    source: str
    unit: str  # how the statement names it: "the period", "that"
    noun: str  # what it is: "CFS latency period", "EEVDF slices"

    @property
    def called(self) -> str:
        """What it is, in a sentence: "the CFS latency period", "the EEVDF slices"."""
        return f"the {self.noun}"


def fair_yardstick(nr: int, cpus: int, release: str, least: str = "") -> Yardstick:
    """EEVDF's slices on a kernel of ``release`` 6.6 or later, CFS's latency period before; CFS's, said to be
    assumed, where the release is not known (a text trace names none).  ``least``: "at least " when ``nr`` is a
    floor (the wait names as many tasks as the analysis keeps)."""
    policy = scheduler_of(release)
    if policy == "eevdf":
        return Yardstick(
            eevdf_slices(nr, cpus),
            f"EEVDF slices for {least}{nr} runnable task(s) on {cpus} CPU(s)",
            f", kernel {release}",
            "",
            "base_slice_ns 0.75 ms x (1 + log2 CPUs) per task: each runs one slice by earliest eligible virtual "
            "deadline (kernel/sched/fair.c, EEVDF since 6.6: commit 147f3efaa241)",
            "that",
            "EEVDF slices",
        )
    return Yardstick(
        cfs_period(nr, cpus),
        f"CFS latency period for {least}{nr} runnable task(s) on {cpus} CPU(s)",
        f", kernel {release}" if policy else "",
        ""
        if policy
        else " (assumed: the trace names no kernel release; a 6.6+ kernel schedules by EEVDF, which has no period, "
        "unknown here)",
        "sched_latency_ns 6 ms x (1 + log2 CPUs), or nr_running x min_granularity "
        "(Documentation/scheduler/sched-design-CFS.rst)",
        "the period",
        "CFS latency period",
    )


def scheduler_of(release: str) -> str:
    """The fair class's policy on a kernel of ``release`` ("6.18.44-fc"): "eevdf" from 6.6, "cfs" before, "" when
    the release is not known or not read (a text trace names none)."""
    head = release.split("-", 1)[0].split(".")
    if len(head) < 2 or not (head[0].isdigit() and head[1].isdigit()):
        return ""
    return "eevdf" if (int(head[0]), int(head[1])) >= EEVDF_SINCE else "cfs"


def rt_budget(whose: str = "the") -> str:
    """RT throttling's budget, said to be the default: the trace does not record sched_rt_runtime_us or
    sched_rt_period_us (until 2026-12-07 "950.000 ms of every 1000.000 ms" read as the machine's, ue20 #4).
    ``whose``: the words before "default budget" ("the", "RT throttling's")."""
    return (
        f"{whose} default budget (sched_rt_runtime_us {RT_RUNTIME * 1e6:.0f} of sched_rt_period_us "
        f"{RT_PERIOD * 1e6:.0f}: {fmt_ms(RT_RUNTIME)} of every {fmt_ms(RT_PERIOD)}; this trace does not record the "
        "machine's setting)"
    )


def fair_server_possible(release: str) -> bool:
    """Whether the kernel of ``release`` may have the fair server: 6.12 or later, or a release not known."""
    version = release_version(release)
    return version is None or version >= FAIR_SERVER_SINCE


def fair_server(release: str) -> str:
    """The fair server, named with why it may be there (the kernel's release, or that the trace names none), on a
    kernel that may have it; "" on one older than 6.12."""
    if not fair_server_possible(release):
        return ""
    kernel = f"kernel {release}" if release else "the trace names no kernel release"
    return f"the fair server (the deadline server for CFS tasks, 6.12+: {kernel}; 50 ms of every 1 s by default)"


def waited_on(wait: Wait) -> list[int]:
    """The CPUs a wait was queued on, in order, each once: where it began and where each sched_migrate_task put it
    (Wait.moves); a wait that did not move: its own CPU."""
    if wait.moved == MOVED_MIGRATED:
        return list(dict.fromkeys([wait.queued_cpu, *(m.to_cpu for m in wait.moves)]))
    return [wait.span.cpu]


def sharers(wait: Wait, by_pid: dict[int, TaskStats]) -> list[tuple[int, int]]:
    """(CPU, runnable tasks) for each CPU ``wait`` was queued on: the waiter and each task named as running there
    while it waited (Blame.cpu; once per CPU; idle is not a task).  Empty when who ran on the CPU it waited on is not
    known: it moved at a time the trace does not show (Wait.moved, :func:`as_judged` names nobody).

    Until 2026-12-07 the tasks named on every CPU of a moved wait were added up as one CPU's (a task that ran on
    both counted twice), and a wait that moved unseen was judged against "1 runnable task(s)": on a healthy 2-CPU
    machine at load 15 (ue19 healthy3.dat) bash's 164.819 ms wait was "109.9 times" the yardstick, medium."""
    if wait.moved == MOVED_UNKNOWN:
        return []
    cpus = waited_on(wait)
    moved = wait.moved == MOVED_MIGRATED
    out = []
    for cpu in cpus:
        ran = {b.pid for b in wait.behind if b.pid in by_pid and b.pid != 0 and (not moved or b.cpu == cpu)}
        out.append((cpu, 1 + len(ran)))
    return out


def blamed_prio(b: Blame, by_pid: dict[int, TaskStats]) -> int:
    """The prio of a task that ran during a wait, from its own events: as it was then (Blame.prio), else its last
    (a task none of whose lines printed one then); PRIO_UNKNOWN when neither is known.  Until 2026-12-06 every
    verdict took the task's last prio of the whole trace: a task boosted or reniced later was judged by that."""
    if prio_known(b.prio):
        return b.prio
    task = by_pid.get(b.pid)
    return task.prio if task is not None else PRIO_UNKNOWN


def rt_share(wait: Wait, by_pid: dict[int, TaskStats]) -> float:
    """Seconds of the wait during which RT tasks held the CPU."""
    return sum(b.seconds for b in wait.behind if b.pid in by_pid and is_rt(blamed_prio(b, by_pid)))


def weight_scale(task: TaskStats, wait: Wait, by_pid: dict[int, TaskStats]) -> float:
    """How many CFS periods ``task`` may wait for one: the CFS weight of the tasks that ran during ``wait``,
    each counted for the time it ran, over the waiter's own (never below 1).

    Each counts for its time: a nice -20 kworker (kworker/1:1H) that ran 30 us of a 450 ms wait was not the
    load the waiter shared the CPU with; counted as one task of five it made a nice-0 waiter's period 18 times
    longer.  RT tasks are not CFS load (their time is :func:`rt_share`'s); their prio has no CFS weight.
    """
    ran = [
        (weight(blamed_prio(b, by_pid)), b.seconds)
        for b in wait.behind
        if b.pid in by_pid and b.pid != 0 and not is_rt(blamed_prio(b, by_pid)) and b.seconds > 0
    ]
    seconds = sum(s for _, s in ran)
    if seconds <= 0:
        return 1.0
    return max(1.0, sum(w * s for w, s in ran) / seconds / weight(prio_at(task, wait)))


def _held(top: Blame | None, by_pid: dict[int, TaskStats]) -> str:
    """``comm (prio N)`` of the task that ran most of a wait, its prio as it was then."""
    if top is None:
        return "the running task"
    prio = blamed_prio(top, by_pid)
    return f"{top.comm} (prio {prio if prio_known(prio) else 'unknown'})"


def _judge_unpreempted(seconds: float, held: str, model: str | None) -> Judgement:
    """An RT task's wait on a kernel that does not preempt kernel code (preempt=none/voluntary): it runs at the
    running task's next scheduling point (return to user space, a sleep, cond_resched()), which kernel paths
    reach within the kernel's own warning bound; beyond the RT promise it is the configuration, not a fault."""
    ratio = seconds / RESCHED_LATENCY_WARN
    sev = Severity.HIGH if ratio > ORDER else Severity.MEDIUM if ratio > 1 else Severity.LOW
    if sev is not Severity.LOW:
        because = ", beyond the kernel's bound"
    elif model is None:
        because = ": the next scheduling point if this kernel does not preempt kernel code"
    else:
        because = ": this kernel does not preempt kernel code"
    return Judgement(
        sev,
        "next scheduling point of a kernel that does not preempt kernel code (preemption model: "
        + (model or "not known: --preempt, or report --dmesg")
        + ")",
        RESCHED_LATENCY_WARN,
        "kernel code is preempted only at explicit points (Kconfig PREEMPT_NONE/VOLUNTARY); the kernel warns "
        "when need_resched stays set longer (kernel/sched/core.c resched_latency_warn_ms)",
        f"an RT task waited {seconds / RT_PROMISE:.0f} times what a preemptible kernel promises, behind {held}"
        + because,
    )


def _judge_unknown_model(preemptible: Judgement, unpreempted: Judgement) -> Judgement:
    """An RT task's wait behind a CFS task when the trace does not say whether the kernel preempts kernel code:
    the severity that holds under either model.  A wait of a few ms is a fault on a preemptible kernel and the
    next scheduling point on one that is not (the default of Debian, Ubuntu and RHEL kernels: voluntary; the
    held-out healthy VM: none), so stating the preemptible kernel's medium would be a guess."""
    if unpreempted.severity >= preemptible.severity:
        return preemptible
    return unpreempted._replace(why=f"{unpreempted.why} ({preemptible.severity.value} on a preemptible kernel)")


#: A starved (RT-held) wait of a latency-sensitive waiter is high beyond this many times --latency-ms.
STARVED_SENSITIVE = 4.0


def _rank(ratio: float, sensitive: bool) -> Severity:
    """Severity of a starved wait ``ratio`` times the reporting threshold: high for a latency-sensitive waiter
    kept more than :data:`STARVED_SENSITIVE` times it, else medium."""
    return Severity.HIGH if sensitive and ratio > STARVED_SENSITIVE else Severity.MEDIUM


def _shared_yardstick(shared: list[tuple[int, int]], capped: bool, cpus: int, release: str) -> Yardstick:
    """The fair class's yardstick for a wait shared as ``shared`` says ((CPU, runnable tasks) per CPU it was queued
    on): one CPU's as :func:`fair_yardstick`; a wait that moved gets the sum of each CPU's (where it is put anew,
    it is owed its share of that CPU's tasks).  ``capped``: the wait names as many tasks as the analysis keeps
    (rules.BLAMES), so the counts are floors and the name says "at least"."""
    least = "at least " if capped else ""
    sticks = [fair_yardstick(n, cpus, release, least) for _cpu, n in shared]
    first = sticks[0]
    if len(shared) == 1:
        return first
    each = ", ".join(f"{least}{n} runnable task(s) on CPU{cpu}" for cpu, n in shared)
    return first._replace(
        seconds=sum(k.seconds for k in sticks),
        name=f"{first.noun} of each CPU it was queued on, added ({each}; {cpus} CPU(s))",
    )


def _judge_share_unknown(seconds: float, limit: float) -> Judgement:
    """A fair-class wait that moved between CPUs at a time the trace does not show: who shared the CPU it waited on
    is not known, so its fair share cannot be computed; its length alone (above --latency-ms) is low, not a fault."""
    return Judgement(
        Severity.LOW,
        "fair share: unknown (it moved between CPUs at a time the trace does not show: who shared the CPU it waited "
        "on is not known); reported above --latency-ms",
        limit,
        "a fair-class wait is judged against the tasks that shared its CPU (detectors/sched/harm.py, "
        "docs/severity.md); sched_migrate_task events would say when it moved",
        f"its fair share is unknown: who shared the CPU it waited on is not in the trace; low: {fmt_ms(seconds)} "
        "alone is not judged a fault",
    )


def _within(
    within: bool, baseline: str, value: float, source: str, why: str, fair: bool = False, assumed: str = ""
) -> Judgement | None:
    """A wait within what its class is promised: None, or with ``within`` that promise, at info (judge_wait)."""
    return Judgement(Severity.INFO, baseline, value, source, why, fair, assumed) if within else None


def judge_wait(
    task: TaskStats,
    wait: Wait,
    analysis: TraceAnalysis,
    by_pid: dict[int, TaskStats],
    limit: float,
    within: bool = False,
) -> Judgement | None:
    """How much ``task``'s ``wait`` hurt, or None when it is within what its class is promised; ``within``: that
    promise then, at info (the wait of a task ``--task`` asks about is said, not dropped: ue24 F11)."""
    seconds = wait.span.duration
    prio = prio_at(task, wait)
    if is_rt(prio):
        ratio = seconds / RT_PROMISE
        if ratio <= 1:
            return _within(
                within,
                "RT wakeup latency promise",
                RT_PROMISE,
                "an RT task preempts CFS at the next preemption point (Documentation/scheduler/sched-rt-group.rst)",
                f"within what an RT task is promised ({fmt_ms(RT_PROMISE)})",
            )
        top = wait.behind[0] if wait.behind and wait.behind[0].pid in by_pid else None
        top_prio = blamed_prio(top, by_pid) if top is not None else PRIO_UNKNOWN
        if top is not None and is_rt(top_prio) and top_prio <= prio:
            return Judgement(
                Severity.LOW,
                "RT priority order: a task of the same or higher RT priority runs first",
                RT_PROMISE,
                "SCHED_FIFO/RR run by priority, FIFO within one (Documentation/scheduler/sched-rt-group.rst)",
                f"it waited behind {_held(top, by_pid)}, which its class lets run first",
            )
        if analysis.preemption in NOT_PREEMPTIBLE:
            return _judge_unpreempted(seconds, _held(top, by_pid), analysis.preemption)
        sev = Severity.HIGH if ratio > 100 else Severity.MEDIUM if ratio > ORDER else Severity.LOW
        preemptible = Judgement(
            sev,
            "RT wakeup latency promise",
            RT_PROMISE,
            "an RT task preempts CFS at the next preemption point (Documentation/scheduler/sched-rt-group.rst)",
            f"an RT task waited {ratio:.0f} times what its class is promised",
        )
        if analysis.preemption:
            return preemptible
        return _judge_unknown_model(preemptible, _judge_unpreempted(seconds, _held(top, by_pid), None))
    held = rt_share(wait, by_pid)
    if held >= seconds / 2:
        if seconds <= limit:
            return _within(
                within,
                "CFS time while an RT task runs: none; reported above --latency-ms",
                limit,
                "--latency-ms",
                "an RT task held the CPU for most of the wait, which was within --latency-ms",
            )
        # --latency-ms 0 reports every wait: each is then infinitely many times the threshold
        ratio = seconds / limit if limit else math.inf
        role = sensitive_why(task, analysis.span_tids, prio)
        sev = _rank(ratio, bool(role))
        if sev is Severity.HIGH:
            rank = f"high: {task.comm} is {role}, kept more than {STARVED_SENSITIVE:.0f} times --latency-ms"
        elif role:
            rank = f"medium: {task.comm} is {role}, but kept under {STARVED_SENSITIVE:.0f} times --latency-ms"
        else:
            rank = (
                "medium: high is for a waiter whose delay holds up others (a kernel thread such as ksoftirqd, "
                f"kworker or rcu, an RT task, a thread serving request spans) kept over {STARVED_SENSITIVE:.0f} "
                "times --latency-ms"
            )
        return Judgement(
            sev,
            "CFS time while an RT task runs: none; reported above --latency-ms",
            limit,
            "RT tasks run until they sleep, throttled only after sched_rt_runtime_us "
            "(Documentation/scheduler/sched-rt-group.rst)",
            "an RT task held the CPU for most of the wait: a CFS task gets the CPU only when the RT task sleeps, "
            f"or once RT throttling stops it, its CPU's RT tasks past {rt_budget()}"
            + (f", or by {server}" if (server := fair_server(analysis.kernel_release)) else "")
            + f"; {rank}",
        )
    shared = sharers(wait, by_pid)
    if not shared:
        return _judge_share_unknown(seconds, limit)
    scale = weight_scale(task, wait, by_pid)
    stick = _shared_yardstick(shared, len(wait.behind) >= rules.BLAMES, cpu_count(analysis), analysis.kernel_release)
    period = stick.seconds * scale
    ratio = seconds / period
    weighted = f", x{scale:.1f} for its weight (prio {prio})" if round(scale, 1) > 1 else ""
    name, source, unit = stick.name + weighted + stick.release + stick.assumed, stick.source, stick.unit
    # Past the yardstick is not a fair share: only the severity says it is load on a busy CPU, not a fault; a task of
    # negative nice (prio < 120) is owed more than an equal share, not less.
    nice = prio - 120 if 100 <= prio < 120 else 0
    if seconds <= period:
        niced = prio - 120 if 100 <= prio < 140 and prio != 120 else 0
        return _within(
            within,
            name,
            period,
            source,
            f"{_cfs_only(wait)}: it waited {ratio:.1f} times {unit}, within its fair share"
            + (f" as a nice {niced} task" if niced else ""),
            fair=True,
            assumed=stick.assumed,
        )
    judged_by_softirqs = softirqs_measured(task, analysis)
    role = "" if judged_by_softirqs else sensitive_why(task, analysis.span_tids, prio)
    sev = Severity.LOW
    if role and ratio > SENSITIVE_PERIODS:
        sev = Severity.HIGH if ratio > STALL_PERIODS else Severity.MEDIUM
    elif ratio > STALL_PERIODS:
        sev = Severity.MEDIUM
    # Whose harm raised it: a kernel thread's past SENSITIVE_PERIODS, anyone's past STALL_PERIODS
    rank = ""
    if role and sev >= Severity.MEDIUM:
        over = SENSITIVE_PERIODS if sev is Severity.MEDIUM else STALL_PERIODS
        rank = f"; {sev.value}: {task.comm} is {role}, over {over:.0f} times"
    return Judgement(
        sev,
        name,
        period,
        source,
        why=f"{_cfs_only(wait)}: it waited {ratio:.1f} "
        f"times {unit}, more than fair sharing gives it"
        + (f" (nice {nice}: its weight owes it more than an equal share)" if nice else "")
        + rank
        + ("" if sev >= Severity.MEDIUM else f"; low: under {STALL_PERIODS:.0f} times it is judged load, not a fault")
        + (
            "; the softirqs it runs are judged by their own raise-to-entry wait (sched-softirq-starvation)"
            if judged_by_softirqs
            else ""
        ),
        fair=True,
        assumed=stick.assumed,
    )


def _cfs_only(wait: Wait) -> str:
    """That only CFS tasks ran during a fair-class wait, as far as the trace's runs kept show: a wait whose start is
    not known (Wait.unseen) says so of the rest only (until 2026-12-07 "only CFS tasks ran meanwhile" was said of
    cc1's 509.528 ms wait on big.ftrace.txt.gz, of which who ran in the first 387.006 ms was not kept, ue22 #7)."""
    if wait.unseen <= 0:
        return "only CFS tasks ran meanwhile"
    seen = wait.span.duration - wait.unseen
    return f"only CFS tasks ran in the {fmt_ms(seen)} of it seen; who ran in its first {fmt_ms(wait.unseen)}: unknown"


def as_judged(wait: Wait) -> Wait:
    """The wait as its harm is judged: one that moved between CPUs at a time the trace does not show (Wait.moved)
    has no known culprit, so what ran on either CPU (context only) neither excuses nor worsens it.  One whose moves
    sched_migrate_task events recorded is judged on who ran on each CPU while it waited there."""
    return wait._replace(behind=(), more=0, more_seconds=0.0) if wait.moved == MOVED_UNKNOWN else wait


def worst_wait_behind(victim: TaskStats, culprit: int) -> Wait | None:
    """The victim's worst wakeup or preemption wait spent mostly behind ``culprit`` (it ran the most meanwhile);
    never one that moved between CPUs at an unknown time (who delayed it is not known); one whose moves
    sched_migrate_task events recorded, on any of its CPUs."""
    for wait in (victim.worst_wakeup, victim.worst_preempt_wait):
        if wait is not None and wait.moved != MOVED_UNKNOWN and wait.behind and wait.behind[0].pid == culprit:
            return wait
    return None


def victim_harm(
    culprit: TaskStats, analysis: TraceAnalysis, by_pid: dict[int, TaskStats], limit: float
) -> tuple[Severity | None, list[tuple[TaskStats, Wait, Judgement]]]:
    """The worst judged wait among the tasks ``culprit`` kept waiting, and each judged wait (worst first)."""
    judged: list[tuple[TaskStats, Wait, Judgement]] = []
    if not culprit.victims and culprit.delay_caused <= 0:  # nobody waited for its CPU while it ran
        return None, judged
    # Every task whose worst wait it ran through most of: not only its first few victims (TaskStats.victims, the
    # most time in all, cut for the report), since one long wait can be the harm of a task that waited little.
    for victim in by_pid.values():
        wait = worst_wait_behind(victim, culprit.pid) if victim.pid != culprit.pid else None
        if wait is None or analysis.clock.disputes_span(wait.span):  # across a loss, jump or step: not known
            continue
        j = judge_wait(victim, wait, analysis, by_pid, limit)
        if j is not None:
            judged.append((victim, wait, j))
    judged.sort(key=lambda r: (-r[2].severity.rank, -r[1].span.duration))
    return (judged[0][2].severity if judged else None), judged
