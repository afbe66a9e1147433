"""Lock waits read from the locks themselves, for when the dump lacks the blocked tasks' task_structs.

:func:`detectors.vmcore.findings.blocked_task_findings` and
:func:`detectors.vmcore.locks.lock_cycle_findings` start from the D-state tasks of the task list.
A filtered dump can lack those tasks (makedumpfile 1.7.2 at dump level 31 drops 6.10+ slab pages
whose ``page->mapping`` word is odd, task_struct pages among them).  The modules' global mutexes
(module data, never filtered) still name their owner and their waiters by task_struct address, the
PID table their pids, and the kernel's own hung-task reports in the log their names and where they
wait.  From these the wait-for graph is rebuilt; what the dump lacks is said beside each task.

Pure: typed snapshot and the log's reports in, findings out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from detectors.vmcore.evidence import root_cause_finding
from detectors.vmcore.findings import (
    CYCLE,
    DETECTOR,
    LOCK_WAIT,
    LOCK_WAIT_REPORTED,
    first_own_frame,
    log_source,
    own_function,
)
from forensics.model import (
    Clock,
    Evidence,
    Fact,
    Finding,
    FindingKind,
    IdFamily,
    Locator,
    LocatorKind,
    Severity,
    Subject,
    SubjectKind,
    Timestamp,
    finding_id,
)
from forensics.types.causes import LockWaiter, lock_cycle
from forensics.types.dmesg import KernelReport
from forensics.types.vmcore import CrashSnapshot, GlobalLock, LockTaskRef

_HUNG_HEADER = re.compile(r"INFO: task (.+):(\d+) blocked for more than")


@dataclass(frozen=True)
class HungReport:
    """The kernel's hung-task report of one task in the log: its name, pid and where it waits."""

    comm: str
    pid: int
    function: str | None  # the report's guilty frame (the dmesg engine skips the scheduler and lock code)
    evidence: Evidence
    returns: frozenset[str] = frozenset()  # its trace's reliable frames of the task's own code, ``func+0x1b``


def hung_reports(snap: CrashSnapshot, reports: list[KernelReport]) -> dict[int, HungReport]:
    """pid -> the log's hung-task report of that task."""
    out: dict[int, HungReport] = {}
    for report in reports:
        m = _HUNG_HEADER.search(report.header)
        if not m:
            continue
        pid = int(m.group(2))
        stamp = report.start_time if isinstance(report.start_time, float) else None
        evidence = Evidence(
            log_source(snap.dump_path), Locator(LocatorKind.LINE, report.start_line), report.header.strip(),
            timestamp=Timestamp(stamp, Clock.MONOTONIC) if stamp is not None else None,
        )  # fmt: skip
        function = report.frame if isinstance(report.frame, str) else None
        returns = frozenset(
            f"{f.symbol}+{f.offset:#x}"
            for f in report.trace
            if f.reliable and f.offset is not None and own_function(f.function)
        )
        out.setdefault(pid, HungReport(m.group(1), pid, function, evidence, returns))
    return out


def _resolved(ref: LockTaskRef, hung: dict[int, HungReport]) -> tuple[LockTaskRef, Fact | None]:
    """The task with its pid from the log when the dump has neither its task_struct nor its struct pid.

    The hung-task report whose trace holds a return address found on this task's stack (above its
    wait-list entry) is this task's report: the kernel printed that trace from that stack.
    """
    if ref.pid is not None or not ref.stack_text:
        return ref, None
    found = [r for r in hung.values() if r.returns & set(ref.stack_text)]
    if len(found) != 1:
        return ref, None
    report = found[0]
    shared = next(t for t in ref.stack_text if t in report.returns)  # the innermost
    how = Fact(
        f"pid {report.pid} of task_struct {ref.address:#x}",
        f"from the log's hung-task report of {report.comm}:{report.pid}, whose trace has {shared}, "
        "a return address on this task's stack (the dump has neither its task_struct nor its struct pid)",
    )
    return replace(ref, pid=report.pid), how


def _reported(ref: LockTaskRef, hung: dict[int, HungReport]) -> bool:
    """The kernel reported this task hung: by its pid, or by a trace holding a return address of its stack."""
    return ref.pid in hung or any(r.returns & set(ref.stack_text) for r in hung.values())


def _comm(ref: LockTaskRef, hung: dict[int, HungReport]) -> str | None:
    """The task's name: its task_struct's, else the log's hung-task report's, else None."""
    return ref.comm or (hung[ref.pid].comm if ref.pid in hung else None)


def _name(ref: LockTaskRef, hung: dict[int, HungReport]) -> str:
    """``kf_waiter (pid 151)``; the name from the log's hung-task report when the task_struct is missing."""
    comm = _comm(ref, hung)
    pid = f"pid {ref.pid}" if ref.pid is not None else f"task_struct {ref.address:#x}"
    return f"{comm} ({pid})" if comm else f"{pid} (name unknown)"


def _state(ref: LockTaskRef, hung: dict[int, HungReport]) -> str:
    if ref.state is not None:
        return f"state {ref.state}"
    if ref.pid in hung:
        return "state D (the log's hung-task report)"
    return "state unknown"


def _where(snap: CrashSnapshot, ref: LockTaskRef, hung: dict[int, HungReport]) -> str:
    """Where a task waits: its own stack when the dump has it, else the log's hung-task report."""
    task = next((t for t in snap.tasks if t.pid == ref.pid), None) if ref.pid is not None else None
    own = first_own_frame(task) if task is not None else None
    if own is not None:
        return own.label() + (f" ({snap.where(own)})" if snap.where(own) else "")
    text = next((t for t in ref.stack_text if own_function(t)), None)
    if text is not None:
        return f"{text} (the first return address of its own code on its stack, above its wait-list entry)"
    if ref.pid in hung and hung[ref.pid].function:
        return f"{hung[ref.pid].function} (the kernel's hung-task report in the log)"
    why = "its task_struct is not in the dump, so there is no stack to unwind" if ref.missing else "no stack read"
    return f"unknown ({why}; the log has no hung-task report of it)"


def _lacks(ref: LockTaskRef, hung: dict[int, HungReport], how: dict[int, Fact]) -> list[Fact]:
    """What the dump lacks of the task, and where its pid came from instead."""
    if ref.missing is None:
        return []
    named = ref.pid is not None or _comm(ref, hung) is not None
    key = f"task_struct of {_name(ref, hung)}" if named else f"task_struct {ref.address:#x}"
    return [Fact(key, ref.missing), *([how[ref.address]] if ref.address in how else [])]


def _covered(snap: CrashSnapshot, lock: GlobalLock) -> bool:
    """The task list already shows each waiter of the lock blocked on it, with the lock's owner."""
    by_pid = {t.pid: t for t in snap.tasks}
    for ref in lock.waiters:
        task = by_pid.get(ref.pid) if ref.pid is not None else None
        if task is None or lock.owner is None or task.lock_owner_pid is None or task.lock_owner_pid != lock.owner.pid:
            return False
    return True


def _order(ref: LockTaskRef | None) -> tuple[int, int]:
    if ref is None:
        return (1 << 62, 0)
    return (ref.pid if ref.pid is not None else 1 << 61, ref.address)


def _next_command(refs: list[LockTaskRef], locks: list[GlobalLock]) -> str:
    """drgn's bt of the tasks whose task_struct the dump has; the locks themselves otherwise."""
    pids = [str(r.pid) for r in refs if r.pid is not None and r.missing is None]
    if len(pids) == len(refs):
        return ">>> %crash bt " + " ".join(pids)
    return ">>> " + ", ".join(f'prog["{lock.name}"]' for lock in locks) + "  # the owner word and wait list"


def _cycles(locks: list[GlobalLock]) -> list[list[GlobalLock]]:
    """Cycles of the wait-for graph by task_struct address: each lock's waiters wait for its owner."""
    held_by = {lock.owner.address: lock for lock in locks if lock.owner is not None}
    out: list[list[GlobalLock]] = []
    seen: set[frozenset[int]] = set()
    for start in locks:
        path = [start]
        while True:
            nxt = next((held_by[w.address] for w in path[-1].waiters if w.address in held_by), None)
            if nxt is None:
                break
            if nxt in path:
                cycle = path[path.index(nxt) :]
                # start at the owner with the lowest pid, as the task list's cycles do
                first = min(range(len(cycle)), key=lambda i: _order(cycle[i].owner))
                cycle = cycle[first:] + cycle[:first]
                key = frozenset(lock.address for lock in cycle)
                if key not in seen:
                    seen.add(key)
                    out.append(cycle)
                break
            path.append(nxt)
    return out


def _evidence(
    snap: CrashSnapshot, locks: list[GlobalLock], hung: dict[int, HungReport], refs: list[LockTaskRef]
) -> list[Evidence | None]:
    """Each lock in the dump (its owner word), then the log's hung-task reports of the tasks."""
    held: list[Evidence | None] = [
        Evidence(snap.dump_path, Locator(LocatorKind.ADDRESS, lock.address, name=lock.name),
                 f"{lock.kind} {lock.name}: owner task_struct {lock.owner.address:#x}, {len(lock.waiters)} waiting")
        for lock in locks
        if lock.owner is not None
    ]  # fmt: skip
    return held + [hung[r.pid].evidence for r in refs if r.pid in hung]


def _cycle_finding(
    snap: CrashSnapshot, cycle: list[GlobalLock], hung: dict[int, HungReport], how: dict[int, Fact]
) -> Finding:
    owners = [lock.owner for lock in cycle if lock.owner is not None]
    # the lock each owner wants is the one whose waiters include it
    wants = {r.address: lock for lock in cycle for r in lock.waiters}
    # each owner is a waiter of the next lock too: that entry has its stack's return addresses
    as_waiter = {r.address: r for lock in cycle for r in lock.waiters}
    facts: list[Fact] = []
    waiters = []
    for lock in cycle:
        owner = lock.owner
        assert owner is not None
        wanted = wants.get(owner.address)
        who = _name(owner, hung)
        facts += [
            Fact(f"{who} holds", f"{lock.kind} {lock.name} at {lock.address:#x} (its owner word names it)"),
            Fact(f"{who} wants", f"{wanted.kind} {wanted.name} (on its wait list)" if wanted else "?"),
            Fact(f"{who} waits in", _where(snap, as_waiter.get(owner.address, owner), hung)),
            *_lacks(owner, hung, how),
        ]
        waiters.append(LockWaiter(_comm(owner, hung) or who, lock.name, wanted.name if wanted else None))
    names = " and ".join(_name(o, hung) for o in owners)
    kind = "AB-BA deadlock" if len(cycle) == 2 else f"lock cycle of {len(cycle)} tasks"
    return root_cause_finding(
        FindingKind.DEADLOCK, ",".join(lock.name for lock in cycle),
        f"deadlock: {names} wait for each other's locks ({kind})",
        "Lock cycle read from the locks themselves (owner words and wait lists of the modules' global "
        "mutexes): " + lock_cycle(waiters) + ". None can go on: the locks are taken in opposite orders.",
        lock_cycle(waiters),
        _next_command(owners, cycle),
        0.9, "owners read from the locks' owner words, waiters from their wait lists (on the waiters' stacks)",
        _evidence(snap, cycle, hung, owners), facts, Severity.CRITICAL, CYCLE,
    )  # fmt: skip


def _wait_finding(snap: CrashSnapshot, lock: GlobalLock, hung: dict[int, HungReport], how: dict[int, Fact]) -> Finding:
    owner = lock.owner
    assert owner is not None
    first = lock.waiters[0]
    owner_text = f"{_name(owner, hung)}, {_state(owner, hung)}"
    title = f"task {_name(first, hung)} blocked on {lock.kind} {lock.name} held by {_name(owner, hung)}"
    facts = [
        Fact("lock", f"{lock.kind} {lock.name} ({lock.module}) at {lock.address:#x}"),
        *(f for w in lock.waiters for f in (Fact("waiter", f"{_name(w, hung)}, {_state(w, hung)}"),
                                            Fact("waits in", _where(snap, w, hung)), *_lacks(w, hung, how))),
        Fact("lock owner", owner_text),
        Fact("owner is in", _where(snap, owner, hung)),
        *_lacks(owner, hung, how),
    ]  # fmt: skip
    if lock.missing:
        facts.append(Fact("wait list", lock.missing))
    reported = any(w.pid in hung for w in lock.waiters)
    return Finding(
        id=finding_id(IdFamily.HELD_LOCK, lock.name, _comm(first, hung) or "?"),
        kind=FindingKind.HUNG_TASK,
        title=title,
        # how long the wait lasted is known only when khungtaskd reported it: else unknown, no high finding
        severity=Severity.HIGH if reported else Severity.INFO,
        confidence=0.85,
        confidence_reason="owner read from the lock's owner word, waiters from its wait list",
        summary=f"{_name(first, hung)} waits on {lock.kind} {lock.name}, which {owner_text} holds "
        "(read from the lock in the module's data: the dump lacks what the task list needs).",
        evidence=tuple(e for e in _evidence(snap, [lock], hung, [*lock.waiters, owner]) if e is not None),
        next_steps=(_next_command([first, owner], [lock]),),
        subjects=(Subject(SubjectKind.LOCK, f"{lock.kind} {lock.name}"),
                  Subject(SubjectKind.TASK, _comm(first, hung) or "?", first.pid)),
        facts=tuple(facts),
        detector=DETECTOR,
        baseline=LOCK_WAIT_REPORTED if reported else LOCK_WAIT,
    )  # fmt: skip


def held_lock_findings(snap: CrashSnapshot, reports: list[KernelReport]) -> list[Finding]:
    """Lock waits and cycles from the modules' global locks that the task list could not show."""
    locks = [lock for lock in snap.global_locks if lock.owner is not None and lock.waiters]
    if not locks or all(_covered(snap, lock) for lock in locks):
        return []
    hung = hung_reports(snap, reports)
    # every task is named the same way wherever it appears: resolve each once, by address
    resolved: dict[int, tuple[LockTaskRef, Fact | None]] = {}
    for lock in locks:
        for ref in (lock.owner, *lock.waiters):
            if ref is not None and (ref.address not in resolved or ref.stack_text):
                resolved[ref.address] = _resolved(ref, hung)
    # a report names one task: two stacks that both match it (the same code path) name neither
    matched = [r.pid for r, f in resolved.values() if f is not None]
    for address, (ref, fact) in list(resolved.items()):
        if fact is not None and matched.count(ref.pid) > 1:
            resolved[address] = (replace(ref, pid=None), None)
    pid_of = {a: r.pid for a, (r, _) in resolved.items()}
    how = {a: f for a, (_, f) in resolved.items() if f is not None}

    def fill(ref: LockTaskRef) -> LockTaskRef:
        return replace(ref, pid=pid_of.get(ref.address, ref.pid))

    locks = [
        replace(lock, owner=fill(lock.owner) if lock.owner else None, waiters=tuple(map(fill, lock.waiters)))
        for lock in locks
    ]
    out = []
    in_cycle: set[int] = set()
    for cycle in _cycles(locks):
        if all(_covered(snap, lock) for lock in cycle):
            continue  # lock_cycle_findings says it from the tasks
        out.append(_cycle_finding(snap, cycle, hung, how))
        in_cycle |= {lock.address for lock in cycle}
    out += [
        _wait_finding(snap, lock, hung, how)
        for lock in locks
        # a wait outside a cycle is a fault only when the kernel itself reported a waiter hung
        if lock.address not in in_cycle and not _covered(snap, lock) and any(_reported(w, hung) for w in lock.waiters)
    ]
    return out
