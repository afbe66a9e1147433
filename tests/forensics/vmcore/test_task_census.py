"""The task census of a dump that lacks task_structs: the count is of the tasks read, and says what it misses.

A stock 6.12 dump (makedumpfile 1.7.2, level 31) lost a task_struct slab page: the PID table hid 13 tasks
and the list of tasks, broken on that page, gave back 11.  The copies here drop the page of one blocked
task's struct pid and every page of its task_struct (:func:`tests.vmcore_cases.without_pages`), so the
task is in neither walk, whatever the boot: the census must say it is short, where the list broke and why.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.detectors.vmcore.snapshots import snapshot
from tests.vmcore_cases import VmcoreCase, case_names, kernels_of, load_case, without_pages

drgn = pytest.importorskip("drgn")

FILTERED = "was filtered out by makedumpfile at dump level 31"


def _need(name: str, kernel: str) -> VmcoreCase:
    if name not in case_names(kernel):
        pytest.skip(f"the {name} fixture is absent on {kernel} (vmcore_fixtures/build.sh)")
    return load_case(name, kernel)


@pytest.mark.parametrize("kernel", kernels_of("04-hung-task"))
def test_a_task_neither_walk_reads_makes_the_census_incomplete(kernel: str, tmp_path: Path) -> None:
    from drgn.helpers.linux.mm import virt_to_pfn

    from forensics.report.vmcore import task_census_line
    from forensics.vmcore import gaps, system
    from forensics.vmcore.dumpfile import read_dump_header
    from forensics.vmcore.program import DebugInfoRequest, open_dump
    from tests.vmcore_cases import open_program

    case = _need("04-hung-task", kernel)
    truth: dict[str, Any] = case.expected["lock"]  # type: ignore[assignment]
    prog = open_program(case, modules=True)
    waiter = next(w.task for w in system.layouts.mutex_waiters(prog[truth["name"]]))
    start = int(waiter.value_())
    size = prog.type("struct task_struct").size
    pfns = {int(virt_to_pfn(prog, int(waiter.thread_pid)))}
    pfns |= {int(virt_to_pfn(prog, a)) for a in range(start, start + size, 4096)}
    pfns.add(int(virt_to_pfn(prog, start + size - 1)))
    filtered = tmp_path / "vmcore"
    without_pages(case.vmcore, pfns, filtered)

    header = read_dump_header(filtered)
    opened = open_dump(filtered, header, DebugInfoRequest(case.vmlinux, (), case.module_debug))
    walk = system.TaskWalk()
    with gaps.explaining(opened.prog, gaps.DumpPages(filtered, header)):
        tasks = system.tasks(opened.prog, {"D"}, [], walk)
    census = walk.census()
    assert truth["waiter_comm"] not in {t.comm for t in tasks}
    assert not census.complete
    unseen = census.unseen()
    assert isinstance(unseen, int) and unseen >= 1
    # both walks of the list stop at a task_struct on a page the dump lacks (dropped here, or by makedumpfile on
    # 6.12 before the waiter is reached), and say it was filtered out
    pages = gaps.DumpPages(filtered, header)
    assert census.breaks
    assert all(pages.frame(int(virt_to_pfn(opened.prog, b.address)), 4096) == "filtered" for b in census.breaks)
    assert all(FILTERED in b.reason for b in census.breaks)
    assert {b.direction for b in census.breaks} == {"forward", "backward"}

    # the census line gives the figure as of the tasks read, how many more and why
    line = task_census_line(snapshot(tasks=tasks, task_census=census))
    assert line.startswith(f"{len(tasks)} tasks read: ")
    assert f"incomplete, {unseen} more not read, state unknown" in line
    assert f"at {census.breaks[0].address:#x}" in line


@pytest.mark.parametrize("kernel", kernels_of("04-hung-task"))
def test_tasks_read_and_unseen_add_up_to_the_pids_of_the_pid_table(kernel: str) -> None:
    """On the stock dumps as makedumpfile wrote them (6.12's lost a task_struct slab page): every pid of the
    PID table (its idr, which holds the pointers, not the struct pids the dump may lack) is a task read or
    one the census says it did not read."""
    from drgn.helpers.linux.pid import for_each_pid

    from forensics.vmcore import system
    from tests.vmcore_cases import open_program

    case = _need("04-hung-task", kernel)
    prog = open_program(case, modules=True)
    pids = sum(1 for _ in for_each_pid(prog))
    walk = system.TaskWalk()
    tasks = system.tasks(prog, set(), [], walk)
    census = walk.census()
    assert len(tasks) + census.unseen() == pids  # type: ignore[operator]
    assert census.complete == (len(tasks) == pids)
