"""Lock faults from the snapshot: cycles of sleeping-lock waits (AB-BA) and spinlocks nobody releases.

Pure: typed snapshot in, findings out.  Each task of a cycle is shown with the
lock it holds, the lock it wants and where it waits; a spinning CPU with its
lock's word decoded, the owner when the kernel records one, and the other CPUs.
"""

from __future__ import annotations

from detectors.vmcore.evidence import frame_evidence, log_line_evidence, memory_evidence, root_cause_finding
from detectors.vmcore.findings import (
    CYCLE,
    EXPLAINS_CRASH,
    crash_frame,
    culprit_frame,
    first_own_frame,
    last_run_evidence,
    record_evidence,
)
from detectors.vmcore.steps import crash_steps
from forensics.model import (
    Evidence,
    Fact,
    Finding,
    FindingKind,
    Locator,
    LocatorKind,
    NotAvailable,
    Severity,
    Subject,
    SubjectKind,
)
from forensics.types.causes import LockWaiter, lock_cycle
from forensics.types.vmcore import CrashSnapshot, SpinLockState, TaskInfo

#: Frames of a blocked task's stack that are the lock's own machinery, not its caller.
_WAIT_FRAMES = ("__schedule", "schedule", "schedule_preempt_disabled", "__mutex_lock", "mutex_lock",
                "__mutex_lock_slowpath", "rwsem_down_", "down_", "__down", "__switch_to", "context_switch")  # fmt: skip


def _stack_text(task: TaskInfo, n: int = 5) -> str:
    names = [
        f.function
        for f in task.stack
        if isinstance(f.function, str) and not f.inline and not f.function.startswith(_WAIT_FRAMES)
    ]
    return " < ".join(names[:n]) or "no stack"


def _lock_name(blocked_on: str | None) -> str:
    """``kf_stats_lock`` from ``mutex kf_stats_lock``."""
    return (blocked_on or "a lock").split(" ", 1)[-1]


def lock_cycle_findings(snap: CrashSnapshot) -> list[Finding]:
    """Cycles in the wait-for graph of blocked tasks (AB-BA deadlocks): each task's held and wanted lock."""
    waits = {t.pid: t for t in snap.tasks if t.lock_owner_pid is not None}
    out: list[Finding] = []
    seen: set[frozenset[int]] = set()
    for start in waits:
        path = [start]
        while (nxt := waits[path[-1]].lock_owner_pid) is not None and nxt in waits and nxt not in path:
            path.append(nxt)
        nxt = waits[path[-1]].lock_owner_pid
        if nxt not in path:
            continue
        cycle = path[path.index(nxt) :]
        if frozenset(cycle) in seen:
            continue
        seen.add(frozenset(cycle))
        tasks = sorted((waits[p] for p in cycle), key=lambda t: t.pid)
        # A task holds what the task waiting for it wants: the owner of B's wanted lock is A.
        holds = {t.pid: [_lock_name(w.blocked_on) for w in tasks if w.lock_owner_pid == t.pid] for t in tasks}
        facts: list[Fact] = []
        parts = []
        for t in tasks:
            own = first_own_frame(t)
            where = f"{own.label()}" + (f" ({snap.where(own)})" if snap.where(own) else "") if own else "?"
            held = ", ".join(holds[t.pid]) or "?"
            facts += [
                Fact(f"{t.comm} (pid {t.pid}) holds", held),
                Fact(f"{t.comm} (pid {t.pid}) wants", f"{t.blocked_on} (held by pid {t.lock_owner_pid})"),
                Fact(f"{t.comm} (pid {t.pid}) waits in", where),
                Fact(f"{t.comm} (pid {t.pid}) stack", _stack_text(t)),
            ]
            parts.append(f"{t.comm} holds {held} and wants {_lock_name(t.blocked_on)}")
        evidence: list[Evidence | None] = [
            Evidence(snap.dump_path, Locator(LocatorKind.FRAME, own.index, name=f"pid {t.pid}"), own.label())
            for t in tasks
            if (own := first_own_frame(t)) is not None
        ]
        # The cycle closed when the last of its tasks blocked, no earlier than that task last ran (a value read):
        # the deadlock is an interval from then to the report (or the crash), not an instant at the report.
        ran = [t for t in tasks if t.last_run is not None]
        if ran:
            evidence.append(last_run_evidence(snap, max(ran, key=lambda t: t.last_run.ns if t.last_run else 0)))
        evidence.append(log_line_evidence(snap, "blocked for more than") or record_evidence(snap, -1))
        kind = "AB-BA deadlock" if len(tasks) == 2 else f"lock cycle of {len(tasks)} tasks"
        statement = "; ".join(parts)
        waiters = [LockWaiter(t.comm, ", ".join(holds[t.pid]) or "?", _lock_name(t.blocked_on)) for t in tasks]
        out.append(
            root_cause_finding(
                FindingKind.DEADLOCK, ",".join(t.comm for t in tasks),
                f"deadlock: {' and '.join(t.comm for t in tasks)} wait for each other's locks ({kind})",
                f"Lock cycle: {statement}. None can go on: the locks are taken in opposite orders.",
                lock_cycle(waiters),
                ">>> %crash bt " + " ".join(str(t.pid) for t in tasks), 0.95,  # drgn's bt: any kernel drgn reads
                "each lock's owner read from the lock in the waiter's frame", evidence, facts, Severity.CRITICAL, CYCLE,
                # the tasks of the cycle: what its consequences (their hung-task findings and reports) are tied by
                tuple(Subject(SubjectKind.TASK, t.comm, t.pid) for t in tasks),
            )
        )  # fmt: skip
    return out


def word_text(lock: SpinLockState) -> str:
    """``0x101: locked, pending (a first waiter spins), no queued waiters``."""
    if lock.word is None:
        return lock.missing or "not read"
    if lock.locked is None:
        return f"{lock.word:#x} ({lock.missing or 'its fields are unknown on this kernel'})"
    parts = ["locked" if lock.locked else "not locked"]
    if lock.pending:
        parts.append("pending (a first waiter spins)")
    parts.append(f"queue tail CPU {lock.tail_cpu}" if lock.tail_cpu is not None else "no queued waiters")
    return f"{lock.word:#x}: " + ", ".join(parts)


def _lock_label(lock: SpinLockState) -> str:
    return (lock.symbol.removesuffix("+0x0") if lock.symbol else None) or f"the lock at {lock.address:#x}"


def spinlock_finding(snap: CrashSnapshot) -> Finding | None:
    """A CPU that spins on a spinlock until the lockup detector fires: the lock, its word, who could hold it."""
    lock = snap.spinlock
    if isinstance(lock, NotAvailable):
        return None
    spinner = culprit_frame(snap.backtrace, crash_frame(snap.backtrace))
    func = str(spinner.function) if spinner is not None else "the spinning function"
    name = _lock_label(lock)
    facts = [
        Fact("lock", f"{name} at {lock.address:#x} (found via {lock.found_via})"),
        Fact("lock word", word_text(lock)),
    ]
    others = [(cpu, t) for cpu, t in snap.other_cpus]
    idle = [cpu for cpu, t in others if t.pid == 0]
    for cpu, task in others:
        own = first_own_frame(task)
        idles = task.pid == 0  # evidence: an idle CPU holds no lock
        halt = task.halt_text()
        # A halted CPU is said where it halted: its #0 is the instruction after the hlt (see TaskInfo.halted_at).
        where = f" (halted: {halt})" if halt else (("," if idles else "") + (f" in {own.label()}" if own else ""))
        facts.append(Fact(f"CPU {cpu}", f"{task.comm} (pid {task.pid})" + (", idle" if idles else "") + where))
    owner = lock.owner_text()
    if owner is not None:
        facts.append(Fact("owner", owner))
        holder = f"{lock.owner} holds it"
    else:
        facts.append(Fact("owner", "not recorded: a qspinlock keeps no owner (CONFIG_DEBUG_SPINLOCK is off)"))
        holder = "no other CPU runs a task that could hold it" if len(idle) == len(others) else "its holder is unknown"
    if lock.takers:
        facts.append(Fact(f"functions that take {name}", ", ".join(lock.takers)))
    others_take = [f for f in lock.takers if f != func]
    leaked = lock.locked and lock.owner is None and len(idle) == len(others)
    if leaked:
        why = f"{name} is locked ({word_text(lock)}) but {holder}: a path returned without spin_unlock()"
        if others_take:
            why += f" (the other functions that take it: {', '.join(others_take)})"
    else:
        why = f"{name} is held ({word_text(lock)}); {holder}"
    evidence: list[Evidence | None] = [
        frame_evidence(snap, spinner.index) if spinner is not None else None,
        log_line_evidence(snap, "soft lockup")
        or log_line_evidence(snap, "hard LOCKUP")
        or log_line_evidence(snap, "rcu_sched self-detected"),
        memory_evidence(snap, lock.address, (lock.word,), 4) if lock.word is not None else None,
    ]
    return root_cause_finding(
        FindingKind.SPINLOCK_DEADLOCK, f"{func}:{name}",
        # not "BUG: soft lockup in ...": the crash's title names the stall by syzbot's rule (another frame)
        f"{func} spins on {name} ({word_text(lock)})",
        f"{func} spins in spin_lock({name}) and never gets it. {why}.",
        f"spinlock deadlock in {func}: {why}",
        crash_steps(
            snap, f"rd -32 {lock.address:#x}", "bt -a", *(f"dis -l {f}" for f in others_take[:1]),
            note=f"look for a return with {name} held" if others_take else "",
        ),
        0.88 if leaked else 0.75, "the lock word read from the dump; the other CPUs' stacks", evidence, facts,
        Severity.CRITICAL, EXPLAINS_CRASH,
        # the spinning CPU: the crash the lockup detector made of it is this finding's consequence
        (Subject(SubjectKind.CPU, str(snap.crashed_cpu)),) if isinstance(snap.crashed_cpu, int) else (),
    )  # fmt: skip
