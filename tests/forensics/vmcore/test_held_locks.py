"""Lock waits read from the modules' global mutexes, on the real 04/11 fixtures and on copies that lack
the blocked tasks' task_structs and struct pids.

Debian bookworm's makedumpfile 1.7.2 at dump level 31 leaves out the 6.12 slab pages whose
``page->mapping`` word is odd, and which those are changes from boot to boot: on stock 6.12 dumps
the hung-task and AB-BA cases lost their blocked tasks.  The copies here lack the same pages
(:func:`tests.vmcore_cases.without_pages` drops them as makedumpfile does: bitmap and descriptor),
so the test is the same on every run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from detectors.dmesg.scanner import scan_text
from detectors.vmcore.analysis import log_as_text
from detectors.vmcore.heldlocks import held_lock_findings
from forensics.model import Finding, FindingKind, LocatorKind
from forensics.types.causes import LockWaiter, lock_cycle
from forensics.types.vmcore import GlobalLock
from tests.detectors.vmcore.snapshots import snapshot
from tests.helpers import assert_evidence_resolves
from tests.vmcore_cases import VmcoreCase, analysed, case_names, kernels_of, load_case, open_program, without_pages

drgn = pytest.importorskip("drgn")

FILTERED = "was filtered out by makedumpfile at dump level 31"


def _need(name: str, kernel: str) -> VmcoreCase:
    if name not in case_names(kernel):
        pytest.skip(f"the {name} fixture is absent on {kernel} (vmcore_fixtures/build.sh)")
    return load_case(name, kernel)


def _captured(name: str, kernel: str) -> tuple[VmcoreCase, tuple[GlobalLock, ...], Any]:
    """The held global locks of the dump as captured, as ``kforensic vmcore``'s snapshot collected them, and a program
    on it: both the ones the case's other tests read on this worker (its xdist group; each test opened the dump and
    read the locks again: 0.3-0.6 s of CPU on 5.10 and 6.12)."""
    _need(name, kernel)
    case, result = analysed(name, kernel)
    return case, result.snapshot.global_locks, open_program(case, modules=True)


def _read(case: VmcoreCase, dump: Path) -> tuple[tuple[GlobalLock, ...], Any, Any]:
    """The held global locks of a dump, as the snapshot collects them, with the program and its log."""
    from forensics.vmcore import gaps, modlocks, system
    from forensics.vmcore.dumpfile import read_dump_header
    from forensics.vmcore.program import DebugInfoRequest, open_dump

    header = read_dump_header(dump)
    opened = open_dump(dump, header, DebugInfoRequest(case.vmlinux, (), case.module_debug))
    with gaps.explaining(opened.prog, gaps.DumpPages(dump, header)):
        locks = modlocks.global_locks(opened.prog, opened.module_symbols)
    return locks, opened.prog, system.log_records(opened.prog)


def _without_tasks(case: VmcoreCase, prog: Any, locks: tuple[GlobalLock, ...], out: Path) -> None:
    """A copy of the dump without the task_structs and struct pids of the locks' owners and waiters."""
    from drgn.helpers.linux.mm import virt_to_pfn

    size = prog.type("struct task_struct").size
    pfns: set[int] = set()
    for ref in {r.address for lock in locks for r in (lock.owner, *lock.waiters) if r is not None}:
        task = drgn.Object(prog, "struct task_struct *", ref)
        pfns |= {int(virt_to_pfn(prog, a)) for a in (*range(ref, ref + size, 4096), ref + size - 1)}
        pfns.add(int(virt_to_pfn(prog, int(task.thread_pid.value_()))))
    without_pages(case.vmcore, pfns, out)


def _findings(dump: Path, locks: tuple[GlobalLock, ...], log: Any) -> list[Finding]:
    snap = snapshot(dump_path=str(dump), tasks=(), global_locks=locks, log=log)
    return held_lock_findings(snap, scan_text(log_as_text(log)))


def _resolve(findings: list[Finding], case: VmcoreCase, dump: Path, log: Any) -> None:
    """Each lock's evidence (its owner word, its waiters) read again from the dump by a fresh program, the log's
    hung-task lines from the dump's log."""
    from detectors.vmcore.findings import log_source
    from forensics.vmcore.resolve import dump_resolvers

    _, prog, _ = _read(case, dump)
    text = dump.with_name("log.txt")
    text.write_text(log_as_text(log))
    assert any(e.locator.kind is LocatorKind.ADDRESS for f in findings for e in f.evidence)
    assert_evidence_resolves(findings, {log_source(str(dump)): text}, dump_resolvers(prog))


@pytest.mark.parametrize("kernel", kernels_of("11-abba-deadlock"))
def test_an_abba_deadlock_whose_tasks_the_dump_lacks_is_read_from_the_locks(kernel: str, tmp_path: Path) -> None:
    case, locks, prog = _captured("11-abba-deadlock", kernel)
    truth: dict[str, Any] = case.expected["why"]["tasks"]  # type: ignore[index]
    # On the dump as captured: each lock's owner is the other's waiter, as the ground truth says.
    assert {lock.owner.comm: lock.name for lock in locks if lock.owner} == {t: v["holds"] for t, v in truth.items()}
    assert {lock.waiters[0].comm: lock.name for lock in locks} == {t: v["wants"] for t, v in truth.items()}

    filtered = tmp_path / "vmcore"
    _without_tasks(case, prog, locks, filtered)
    locks, _, log = _read(case, filtered)
    refs = [r for lock in locks for r in (lock.owner, *lock.waiters) if r is not None]
    assert all(r.comm is None and r.pid is None for r in refs)  # neither the task_struct nor the struct pid
    assert all(FILTERED in (r.missing or "") and "cache task_struct" in (r.missing or "") for r in refs)

    [finding] = _findings(filtered, locks, log)
    assert finding.kind is FindingKind.DEADLOCK
    _resolve([finding], case, filtered, log)
    facts = {f.name: f.value for f in finding.facts}
    holders = {name.removesuffix(" holds"): value for name, value in facts.items() if name.endswith(" holds")}
    assert len(holders) == len(truth)
    for comm, task in truth.items():
        [who] = [w for w, held in holders.items() if held.startswith(f"mutex {task['holds']} ")]
        assert facts[f"{who} wants"].startswith(f"mutex {task['wants']} ")
        assert facts[f"{who} waits in"].startswith(f"{task['function']}+0x")  # a return address on its stack
        lacks = who.split(" (")[0] if "name unknown" in who else f"task_struct of {who}"
        assert FILTERED in facts[lacks]
        # Named from the log's hung-task report whose trace holds a return address of this very stack; a
        # task the log reports nothing of (khungtaskd may panic after the first) by its task_struct's address.
        if "name unknown" not in who:
            assert who.startswith(f"{comm} (pid ")
            [how] = [v for k, v in facts.items() if k.startswith("pid ") and f"report of {comm}:" in v]
            assert "a return address on this task's stack" in how
    assert any("name unknown" not in who for who in holders)  # every fixture log reports one hung task at least
    assert finding.fact(
        "hypothesis",
    ) == lock_cycle(
        [
            LockWaiter(
                w if "name unknown" in w else w.split(" (")[0], holders[w].split()[1], facts[f"{w} wants"].split()[1]
            )
            for w in holders
        ]
    )


@pytest.mark.parametrize("kernel", kernels_of("04-hung-task"))
def test_a_hung_task_whose_tasks_the_dump_lacks_names_the_owner_it_can(kernel: str, tmp_path: Path) -> None:
    case, locks, prog = _captured("04-hung-task", kernel)
    truth: dict[str, Any] = case.expected["lock"]  # type: ignore[assignment]
    [lock] = locks
    assert (lock.name, lock.owner and lock.owner.comm, [w.comm for w in lock.waiters]) == (
        truth["name"], truth["owner_comm"], [truth["waiter_comm"]],
    )  # fmt: skip
    assert lock.owner is not None and lock.owner.state == truth["owner_state"]

    filtered = tmp_path / "vmcore"
    _without_tasks(case, prog, locks, filtered)
    locks, _, log = _read(case, filtered)
    [finding] = _findings(filtered, locks, log)
    assert finding.kind is FindingKind.HUNG_TASK
    _resolve([finding], case, filtered, log)
    facts = {f.name: f.value for f in finding.facts}
    assert facts["lock"].startswith(f"mutex {truth['name']} ")
    assert facts["waiter"].startswith(f"{truth['waiter_comm']} (pid ")
    assert facts["waits in"].startswith(f"{truth['waiter_function']}+0x")  # a return address on its stack
    # The owner sleeps (S): no hung-task report names it, and the dump has neither its task_struct nor
    # its struct pid: it is named by its address and said unknown, never guessed.
    [lock] = locks
    assert lock.owner is not None
    assert facts["lock owner"] == f"task_struct {lock.owner.address:#x} (name unknown), state unknown"
    assert FILTERED in facts[f"task_struct {lock.owner.address:#x}"]


@pytest.mark.parametrize("kernel", kernels_of("11-abba-deadlock"))
def test_the_kernel_stack_size_is_read_from_the_kernel(kernel: str) -> None:
    from forensics.vmcore.layouts import thread_size

    case = _need("11-abba-deadlock", kernel)
    # x86-64: THREAD_SIZE = PAGE_SIZE << (2 + KASAN_STACK_ORDER) (arch/x86/include/asm/page_64_types.h);
    # no fixture kernel has KASAN
    assert thread_size(open_program(case, modules=True)) == 16384


@pytest.mark.parametrize("kernel", kernels_of("04-hung-task"))
def test_tasks_the_pid_table_loses_are_found_on_the_task_list(kernel: str, tmp_path: Path) -> None:
    from drgn.helpers.linux.mm import virt_to_pfn

    from forensics.vmcore import gaps, layouts, system

    case = _need("04-hung-task", kernel)
    truth: dict[str, Any] = case.expected["lock"]  # type: ignore[assignment]
    prog = open_program(case, modules=True)
    lock = prog[truth["name"]]
    tasks_of_lock = [layouts.mutex_owner(lock), *(w.task for w in layouts.mutex_waiters(lock))]
    pids = {int(virt_to_pfn(prog, int(t.thread_pid))) for t in tasks_of_lock if t is not None}
    filtered = tmp_path / "vmcore"
    without_pages(case.vmcore, pids, filtered)  # their struct pids only: the task_structs stay
    from forensics.vmcore.dumpfile import read_dump_header
    from forensics.vmcore.program import DebugInfoRequest, open_dump

    header = read_dump_header(filtered)
    opened = open_dump(filtered, header, DebugInfoRequest(case.vmlinux, (), case.module_debug))
    notes: list[str] = []
    with gaps.explaining(opened.prog, gaps.DumpPages(filtered, header)):
        tasks = {t.comm: t for t in system.tasks(opened.prog, {"D"}, notes)}
    waiter, owner = tasks[truth["waiter_comm"]], tasks[truth["owner_comm"]]
    assert (waiter.state, waiter.blocked_on, waiter.lock_owner_pid) == ("D", f"mutex {truth['name']}", owner.pid)
    [said] = [n for n in notes if n.startswith("the PID table: ")]
    assert "tasks it hid" in said and "struct pids are not in the dump" in said
    assert any("struct pid" in n and FILTERED in n for n in notes)
