"""Slab faults and lock faults on the real kdump fixtures 10-14, checked against their ``why`` ground truth.

The JSON is produced through the CLI (as a user runs it), with ``--source-dir``
pointing at this checkout's module source: the DWARF path names the directory
the fixtures were built in, which a clone elsewhere lacks.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

import pytest

from detectors.dmesg.scanner import scan_text
from detectors.vmcore.findings import first_own_frame
from forensics.model import NotAvailable
from forensics.report.formats import Destination
from forensics.report.vmcore import VmcoreRenderer, VmcoreResult, explaining, render_vmcore_markdown, to_document
from forensics.types.vmcore import SlabTrack
from tests.vmcore_cases import (
    FIXTURES_DIR,
    PRIMARY_KERNEL,
    VmcoreCase,
    analysed,
    case_names,
    kernels,
    kernels_of,
    load_case,
    on_case,
    open_program,
    without_pages,
)

drgn = pytest.importorskip("drgn")

NEW_CASES = ("10-use-after-free", "11-abba-deadlock", "12-double-free", "13-list-overflow", "14-spin-deadlock")
KERNELS = kernels() or ["<no-vmcore-fixtures>"]


def _need(name: str, kernel: str = PRIMARY_KERNEL) -> VmcoreCase:
    if name not in case_names(kernel):
        pytest.skip(f"the {name} fixture is absent on {kernel} (vmcore_fixtures/build.sh)")
    return load_case(name, kernel)


def _analyse(name: str, kernel: str = PRIMARY_KERNEL) -> tuple[VmcoreCase, VmcoreResult]:
    _need(name, kernel)
    return analysed(name, kernel)  # type: ignore[no-any-return]


@functools.cache
def _cli_json(name: str, tmp: str, kernel: str = PRIMARY_KERNEL) -> dict[str, Any]:
    """The JSON document: through the CLI on the first kernel, from the shared analysis on the others."""
    from typer.testing import CliRunner

    from forensics.cli import app
    from forensics.report.vmcore import to_document

    case = _need(name, kernel)
    if kernel != PRIMARY_KERNEL:
        return json.loads(json.dumps(to_document(_analyse(name, kernel)[1])))  # type: ignore[no-any-return]
    out = Path(tmp) / f"{name}.json"
    args = ["vmcore", str(case.directory), "--vmlinux", str(case.vmlinux), "--source-dir", str(FIXTURES_DIR)]
    args += ["--module-debug", str(case.module_debug[0]), "-f", "json", "-o", str(out)]
    run = CliRunner().invoke(app, args)
    assert run.exit_code in (0, 1), run.output
    return json.loads(out.read_text())  # type: ignore[no-any-return]


def _cases_of(*names: str) -> list[Any]:
    """``(name, kernel)`` parameters of each case on each kernel, in the case's group (:func:`kernels_of`)."""
    return [
        pytest.param(n, k) if isinstance(k, str) else pytest.param(n, *k.values, marks=k.marks)
        for n in names
        for k in kernels_of(n)
    ]


def _why(case: VmcoreCase) -> dict[str, Any]:
    why = case.expected["why"]
    assert isinstance(why, dict)
    return why


def _explanation(doc: dict[str, Any], kind: str) -> dict[str, Any]:
    found = [e for e in doc["why"]["explanations"] if e["kind"] == kind]
    assert found, f"no {kind} explanation in {[e['kind'] for e in doc['why']['explanations']]}"
    return found[0]  # type: ignore[no-any-return]


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("name", NEW_CASES)
def test_json_states_the_class_and_the_title(name: str, kernel: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    case = _need(name, kernel)
    doc = _cli_json(name, str(tmp_path_factory.getbasetemp()), kernel)
    want = _why(case)
    assert doc["why"]["root_cause"]["class"] == want["class"]
    crash = next(f for f in doc["incident"]["findings"] if f["kind"] == "crash")
    assert crash["title"] == _title(case)


def _title(case: Any) -> str:
    """The crash's title: the ground truth's (a soft lockup's by syzbot's stall rule: the frame above kthread,
    kf_hw_poll_fn), the one the dmesg engine gives the case's log too."""
    if case.expected["type"] == "soft_lockup":
        [title] = {r.title for r in scan_text(Path(case.dmesg).read_text()) if r.title.startswith("BUG: soft lockup")}
        assert title == case.expected["title"]
    return str(case.expected["title"])


@pytest.mark.parametrize("kernel", kernels_of("10-use-after-free"))
def test_use_after_free_names_object_cache_member_and_both_stacks(
    kernel: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    case = _need("10-use-after-free", kernel)
    want = _why(case)
    doc = _cli_json(case.name, str(tmp_path_factory.getbasetemp()), kernel)
    facts = _explanation(doc, "use-after-free")["facts"]
    assert f"bytes in cache {want['cache']}: FREE" in facts["object"]
    poisoned = next(v for k, v in facts.items() if k.startswith(f"conn->{want['member']} "))
    assert poisoned.startswith(f"{want['value']} at offset {want['member_offset']:#x}: slab poison 0x6b")
    assert facts["freed by"].startswith(f"{want['free_function']}+")
    assert f"{want['free_function']} < " in facts["freed by"]  # the stack, not only the caller
    for track in ("allocated by", "freed by"):  # 5.10's addrs[] begin in the allocator: cut, as 6.1's depot does
        assert not [f for f in ("slab_alloc", "kmem_cache_alloc", "slab_free", "kmem_cache_free") if f in facts[track]]
    assert facts["allocated by"].startswith(f"{want['alloc_function']}+")
    assert facts["still pointed to by"] == want["stale_pointer"]
    assert f"freed by {want['free_function']}" in facts["hypothesis"]
    # the stacks come from SLUB's own records in the dump: the free track's pid is the crashing shell's
    _, result = _analyse(case.name, kernel)
    [obj] = [o for o in result.snapshot.slab_objects if o.allocated is False]
    free = obj.track("free")
    assert free is not None and free.pid == result.snapshot.crashed_pid
    assert obj.store_user and obj.poisoned


@pytest.mark.parametrize("kernel", kernels_of("10-use-after-free"))
def test_use_after_free_fault_address_is_the_poison_plus_the_member_offset(kernel: str) -> None:
    case, result = _analyse("10-use-after-free", kernel)
    crash = next(f for f in result.analysis.findings if f.kind == "crash")
    assert crash.fact("effective address") == _why(case)["fault_address"]


@pytest.mark.parametrize("kernel", kernels_of("10-use-after-free"))
def test_use_after_free_reads_the_freed_object_and_says_what_was_written_after_the_free(kernel: str) -> None:
    """``conn->tx_bytes += len`` (``add [rdi+0x28], rsi``) ran on the freed kf_conn: its poison + len (2, the
    bytes the shell wrote).  The next command reads that object, not the dentry r14 happened to hold."""
    _, result = _analyse("10-use-after-free", kernel)
    [obj] = [o for o in result.snapshot.slab_objects if o.allocated is False]
    uaf = next(f for f in result.analysis.findings if f.kind == "use-after-free")
    written = str(uaf.fact("written after free"))
    assert written.startswith("0xa56b6b6b6b6b6b6d at offset 0x28 (conn->tx_bytes): the poison 0xa56b6b6b6b6b6b6b + 0x2")
    assert "by add qword ptr [rdi + 0x28], rsi at " in written
    assert "Freed memory was modified: 0xa56b6b6b6b6b6b6d at offset 0x28" in uaf.summary
    assert any(e.locator.start == obj.start + 0x28 and e.excerpt == "0xa56b6b6b6b6b6b6d" for e in uaf.evidence)
    values = next(f for f in result.analysis.findings if f.kind == "suspicious-values")
    assert values.stated is not None
    words = f"{obj.start:#x} {obj.object_size // 8}"
    # 6.12: crash 8.0.2 opens no such dump, drgn's bt -FF / rd -SS stop on a filtered slab page (steps.py)
    assert values.stated.next_command == (
        f">>> %crash bt -f; >>> %crash rd -64 {words}" if kernel == "6.12" else f"crash> bt -FF; crash> rd -SS {words}"
    )


@pytest.mark.parametrize("kernel", kernels_of("10-use-after-free"))
def test_a_task_in_d_state_on_no_lock_says_it_waits_for_a_completion(kernel: str) -> None:
    """The kworker in do_wait_for_common: 'on a completion', never 'on ?'."""
    _, result = _analyse("10-use-after-free", kernel)
    sleeping = [t for t in result.snapshot.tasks if t.state == "D"]
    assert sleeping or kernel == "5.10"  # 5.10's dump has no task in D state
    assert all(t.waits_for().startswith("a completion (in ") for t in sleeping), sleeping
    assert " on ?" not in render_vmcore_markdown(result)


@pytest.mark.parametrize("kernel", kernels_of("10-use-after-free"))
def test_a_task_waiting_on_a_completion_names_it_from_its_frame(kernel: str) -> None:
    """The kworker's struct completion is read from x of its __wait_for_common frame: its address, its done count
    (0: not completed) and the other waiters on its queue (none), each said with the frame it was read in."""
    _, result = _analyse("10-use-after-free", kernel)
    for task in (t for t in result.snapshot.tasks if t.state == "D"):
        read = task.completion
        assert read is not None and read.function in {"do_wait_for_common", "__wait_for_common"}
        assert read.address >> 48 == 0xFFFF and read.done == 0 and read.other_waiters == ()
        [found] = [f for f in result.analysis.findings if f.kind == "hung-task" and f"(pid {task.pid})" in f.summary]
        assert f"it waits on the completion at {read.address:#x} (x of frame #{read.frame}, " in found.summary
        assert "its done count 0 (not completed yet), other waiters on it: none." in found.summary
        assert any(e.locator.start == read.address and e.excerpt == "0x00000000" for e in found.evidence)


@pytest.mark.parametrize("kernel", kernels_of("10-use-after-free"))
def test_the_json_task_record_names_the_completion_a_d_task_waits_on(
    kernel: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The JSON's blocked task carries what the markdown says of its completion: the address, the frame it was read
    in, its done count and the other waiters."""
    _, result = _analyse("10-use-after-free", kernel)
    doc = _cli_json("10-use-after-free", str(tmp_path_factory.getbasetemp()), kernel)
    blocked = {b["pid"]: b for b in doc["tasks"]["blocked"]}
    for task in (t for t in result.snapshot.tasks if t.state == "D"):
        read = task.completion
        assert read is not None
        assert blocked[task.pid]["completion"] == {
            "address": f"{read.address:#x}",
            "frame": read.frame,
            "function": read.function,
            "done": 0,
            "other_waiters": [],
            "not_available": None,
        }
    assert blocked or kernel == "5.10"  # 5.10's dump has no task in D state


@pytest.mark.parametrize("kernel", kernels_of("11-abba-deadlock"))
def test_the_json_task_record_of_a_task_on_a_lock_names_no_completion(
    kernel: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A task blocked on a lock has no completion in the JSON (null).  A test of its own, in the 11-abba-deadlock
    case's group: on the worker that has that case's document (0.6 s of CPU to read it again on 5.10 and 6.12)."""
    locked = _cli_json("11-abba-deadlock", str(tmp_path_factory.getbasetemp()), kernel)["tasks"]["blocked"]
    assert locked and all(b["blocked_on"] and b["completion"] is None for b in locked)


@on_case("10-use-after-free")
def test_the_text_report_never_folds_a_command_to_paste() -> None:
    """The follow-up's crash and drgn commands hold the fixture vmlinux's long path: each line stays whole."""
    _, result = _analyse("10-use-after-free")
    follow = result.snapshot.follow_up
    assert not isinstance(follow, NotAvailable)
    lines = [line.strip() for line in VmcoreRenderer().text(result, Destination()).splitlines()]
    assert f"crash -s {follow.vmlinux} \\" in lines
    assert f"-s {follow.vmlinux} \\" in lines


@pytest.mark.parametrize("kernel", kernels_of("10-use-after-free"))
def test_use_after_free_says_a_general_protection_fault_sets_no_cr2(kernel: str) -> None:
    """The log's ``CR2: 0000000000559c5a`` is an earlier page fault's: the reasoning says so, not "not in the log"."""
    _, result = _analyse("10-use-after-free", kernel)
    fault = result.fault
    assert not isinstance(fault, NotAvailable) and fault.fault_address is None and fault.stopped is None
    [step] = [s for s in fault.steps if s.startswith("effective address")]
    assert "not in the log" not in step
    assert "none: a general protection fault sets no CR2 (the CR2: 0000000000559c5a its register dump" in step


@pytest.mark.parametrize(("name", "kernel"), _cases_of("12-double-free", "14-spin-deadlock"))
def test_where_nothing_faulted_no_fault_is_reasoned_about(name: str, kernel: str) -> None:
    """A BUG's ud2 and the jmp a soft lockup's interrupt took: the instruction is where the CPU stopped."""
    _, result = _analyse(name, kernel)
    fault = result.fault
    assert not isinstance(fault, NotAvailable)
    assert fault.steps == () and fault.stopped is not None
    assert ("BUG() and WARN()" if name == "12-double-free" else "soft lockup detector") in fault.stopped
    crash = next(f for f in result.analysis.findings if f.kind == "crash")
    assert crash.fact("faulting instruction") is None
    assert str(crash.fact("stopped at")).startswith(f"{fault.instruction.address:#x}: {fault.instruction.text()}")
    text = render_vmcore_markdown(result)
    assert "Reasoning" not in text and "Faulting instruction" not in text and "Where the CPU stopped" in text


@pytest.mark.parametrize(("name", "kernel"), _cases_of("12-double-free", "13-list-overflow"))
def test_the_why_starts_with_the_root_cause_and_ends_with_what_was_not_evaluated(name: str, kernel: str) -> None:
    """The allocator's and the list checker's BUG without their source (not given: mm/, lib/) come last."""
    _, result = _analyse(name, kernel)
    order = [f.kind for f in explaining(result)]
    assert order[0] == ("double-free" if name == "12-double-free" else "list-corruption"), order
    assert order[-1] == "bug-condition", order
    assert [e["kind"] for e in to_document(result)["why"]["explanations"]] == order
    # an unsigned long holding an address (6.1's set_freepointer freeptr_addr) is shown in hex, not decimal
    for fv in result.snapshot.frame_values:
        for read in fv.variables:
            if read.value is not None and read.value >= 0xFFFF800000000000:
                assert read.text.startswith(f"{read.value:#x}"), read


@pytest.mark.parametrize("kernel", kernels_of("12-double-free"))
def test_double_free_is_titled_after_the_caller_and_names_the_object(
    kernel: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    case = _need("12-double-free", kernel)
    want = _why(case)
    doc = _cli_json(case.name, str(tmp_path_factory.getbasetemp()), kernel)
    facts = _explanation(doc, "double-free")["facts"]
    assert f"bytes in cache {want['cache']}: FREE" in facts["object"]
    assert facts["second free"].endswith(f"kf_buggy/kf_buggy.c:{want['second_free_line']}")
    # The first free, read from kf_msg_submit's source and its frame: kfree(msg) under `if (ret)`, ret = -22
    assert re.fullmatch(
        rf"kfree\(msg\); at \S*kf_buggy/kf_buggy\.c:{want['first_free_line']}, earlier in {want['function']}, "
        r"under `if \(ret\)`: ret = -22 in its frame",
        facts["first free"],
    ), facts["first free"]
    assert want["free_stack_recorded"] is False
    assert facts["alloc/free stacks"].startswith(f"not recorded: cache {want['cache']} keeps no alloc/free tracks")
    assert "BUG_ON(object == fp)" in facts["detected by"]
    # The bug table names the kernel's file (its file_disp is entry-relative on 5.10, field-relative since)
    site = case.expected["kernel_site"]
    assert isinstance(site, dict)
    _, result = _analyse(case.name, kernel)
    bug = next(f for f in result.analysis.findings if f.kind == "bug-condition")
    assert str(bug.fact("trap")).startswith(f"BUG at {site['file']}:{site['line']} in ")
    # The condition the double-free finding names is evaluated from the frame (object == fp), not "not evaluated"
    # beside it for want of mm/slub.c
    where = re.escape(f"{site['file']}:{site['line']}")
    assert re.fullmatch(
        rf"BUG_ON\(object == fp\): object = (0x[0-9a-f]+), fp = \1 -> true in set_freepointer \({where}\)", bug.title
    ), bug.title
    # the checker itself is not blamed
    assert not [
        h
        for h in result.analysis.hypotheses
        if h.statement.startswith(("a bug in set_freepointer", "a bug in __kmem_cache_free"))
    ]
    # The crash is titled as syzbot would; the explanation names the object, not the crash's title again
    titles = [(f["kind"], f["title"]) for f in doc["incident"]["findings"]]
    assert ("crash", case.expected["title"]) in titles
    assert [t for _, t in titles].count(case.expected["title"]) == 1
    [told] = [e["title"] for e in doc["why"]["explanations"] if e["kind"] == "double-free"]
    assert told.startswith(f"the {want['cache']} object 0x") and told.endswith(
        f"freed twice, the second time by {want['function']}"
    )
    # the object being freed is not reported again as a use-after-free
    assert not [e for e in doc["why"]["explanations"] if e["kind"] == "use-after-free"]


@pytest.mark.parametrize("kernel", kernels_of("11-abba-deadlock"))
def test_abba_deadlock_names_each_tasks_held_and_wanted_lock_and_stack(kernel: str) -> None:
    case, result = _analyse("11-abba-deadlock", kernel)
    want = _why(case)
    [cycle] = [f for f in result.analysis.findings if f.kind == "deadlock"]
    tasks = {t.comm: t.pid for t in result.snapshot.tasks if t.comm in want["tasks"]}
    for comm, lock in want["tasks"].items():
        label = f"{comm} (pid {tasks[comm]})"
        assert cycle.fact(f"{label} holds") == lock["holds"]
        assert str(cycle.fact(f"{label} wants")).startswith(f"mutex {lock['wants']} (held by pid ")
        assert str(cycle.fact(f"{label} waits in")).endswith(f"kf_buggy/kf_buggy.c:{lock['line']})")
        assert str(cycle.fact(f"{label} stack")).startswith(f"{lock['function']} < ")
    assert result.analysis.hypotheses[0].statement.startswith("AB-BA deadlock: ")


@pytest.mark.parametrize("kernel", kernels_of("13-list-overflow"))
def test_list_overflow_names_the_neighbour_and_decodes_the_text(kernel: str) -> None:
    case, result = _analyse("13-list-overflow", kernel)
    want = _why(case)
    finding = next(f for f in result.analysis.findings if f.kind == "list-corruption")
    assert str(finding.fact("list head")).startswith(
        f"{want['struct']}.{want['member']} at offset {want['member_offset']:#x}"
    )
    assert finding.fact("member before it") == f"{want['neighbour']} ({want['neighbour_type']})"
    assert f"{want['cache']}, offset {want['member_offset']:#x}, allocated" in str(finding.fact("entry object"))
    hypothesis = str(finding.fact("hypothesis"))
    # the list checker (__list_add_valid_or_report since 6.6, __list_add_valid before) is never the bug
    assert not [h for h in result.analysis.hypotheses if h.statement.startswith("a bug in __list_")]
    assert f"{want['bad_pointer']} = {want['text']!r} is text" in hypothesis
    assert f"text overflowed from {want['struct']}.{want['neighbour']}" in hypothesis
    # the whole string is quoted, and its NUL, past name's 16 bytes and next's 8, is prev's lowest byte
    written = re.search(r'\("([^"]+)"\)', str(case.expected["description"]))
    assert written is not None
    string = written.group(1)
    assert str(finding.fact("overflowing string")).startswith(f"{string!r} ({len(string)} characters and its NUL")
    size = int(re.sub(r"\D", "", want["neighbour_type"]))
    assert str(finding.fact("prev")).endswith(
        f"its byte {len(string) - size - 8} (from the lowest) is the string's NUL terminator, so prev was "
        "overwritten too: its true value is unknown"
    )


@pytest.mark.parametrize("kernel", kernels_of("14-spin-deadlock"))
def test_spin_deadlock_decodes_the_lock_word_and_names_who_takes_the_lock(kernel: str) -> None:
    case, result = _analyse("14-spin-deadlock", kernel)
    want = _why(case)
    lock = result.snapshot.spinlock
    assert not isinstance(lock, NotAvailable)
    assert lock.symbol == f"{want['lock']}+0x0"
    assert f"{lock.word:#x}" == want["lock_word"]
    assert lock.owner is want["owner"]  # a qspinlock records none
    doc = to_document(result)["why"]["spinlock"]
    assert (doc["owner"], doc["owner_cpu"]) == (None, None)  # no owner: its CPU has nothing to say
    assert want["leaked_by"] in lock.takers and want["function"] in lock.takers
    finding = next(f for f in result.analysis.findings if f.kind == "spinlock-deadlock")
    assert "a path returned without spin_unlock()" in str(finding.fact("hypothesis"))
    # kthread()'s _create (5.10: a kthread_create_info freed once the thread ran) is a stale argument, not a use
    assert not [f for f in result.analysis.findings if f.kind == "use-after-free"]
    # the lock's slow path is where the CPU waits, never "a bug in" it
    assert not [h for h in result.analysis.hypotheses if "spin_lock_slowpath" in h.statement]
    assert str(finding.fact("owner")).startswith("not recorded: a qspinlock keeps no owner")
    crash = next(f for f in result.analysis.findings if f.kind == "crash")
    assert crash.title == _title(case)
    assert finding.title.startswith(f"{want['function']} spins on {want['lock']} (")


@on_case("14-spin-deadlock")
def test_a_spinlock_owner_whose_cpu_was_not_read_is_not_available_and_why_in_json() -> None:
    # CONFIG_DEBUG_SPINLOCK's owner and owner_cpu (the fixtures' kernels have neither): the JSON says the CPU as the
    # owner fact does, "unknown (why)" -> {"not_available": why}; a CPU read is the number.
    from dataclasses import replace

    if "14-spin-deadlock" not in case_names():
        pytest.skip("the spinlock fixture is absent")
    _, result = _analyse("14-spin-deadlock")
    lock = result.snapshot.spinlock
    assert not isinstance(lock, NotAvailable)
    why = "owner_cpu not in dump: memory at 0xffffffffc0331424 was not captured"

    def owner_cpu(cpu: int | None) -> object:
        held = replace(lock, owner="worker (pid 77)", owner_cpu=cpu, owner_cpu_missing=why)
        doc = to_document(replace(result, snapshot=replace(result.snapshot, spinlock=held)))
        return doc["why"]["spinlock"]["owner_cpu"]

    assert owner_cpu(None) == {"not_available": why}
    assert owner_cpu(0) == 0


@on_case("10-use-after-free")
def test_a_slab_track_whose_pid_and_cpu_were_not_read_is_not_available_and_why_in_json() -> None:
    # The JSON says a track's pid and CPU as its text does, "unknown (not read with the track)" -> {"not_available":
    # that}; read ones stay numbers; a track not read at all keeps null (its own not_available says why).
    from dataclasses import replace

    if "10-use-after-free" not in case_names():
        pytest.skip("the use-after-free fixture is absent")
    _, result = _analyse("10-use-after-free")
    [obj] = [o for o in result.snapshot.slab_objects if o.allocated is False]
    free = obj.track("free")
    assert free is not None and free.pid is not None and free.cpu is not None

    def track(t: SlabTrack) -> dict[str, Any]:
        held = replace(obj, tracks=tuple(t if o.kind == "free" else o for o in obj.tracks))
        objects = tuple(held if o is obj else o for o in result.snapshot.slab_objects)
        [doc] = [o for o in to_document(replace(result, snapshot=replace(result.snapshot, slab_objects=objects)))[
            "why"]["slab_objects"] if o["start"] == f"{obj.start:#x}"]  # fmt: skip
        [out] = [x for x in doc["tracks"] if x["kind"] == "free"]
        return out

    assert (track(free)["pid"], track(free)["cpu"]) == (free.pid, free.cpu)
    unread = {"not_available": "not read with the track"}
    assert (track(replace(free, pid=None, cpu=None))["pid"], track(replace(free, pid=None, cpu=None))["cpu"]) == (
        unread,
        unread,
    )
    gone = SlabTrack("free", None, None, None, None, missing="no free recorded for this object yet")
    assert (track(gone)["pid"], track(gone)["cpu"], track(gone)["not_available"]) == (None, None, gone.missing)


@pytest.mark.parametrize("kernel", kernels_of("14-spin-deadlock"))
def test_an_inlined_frame_shows_the_symbol_that_holds_its_pc(kernel: str) -> None:
    """As drgn shows it: ``kf_hw_read_status+0xc/0x1a [kf_buggy] in spin_lock (inlined)``, never ``spin_lock+0xc``
    (no such symbol)."""
    _, result = _analyse("14-spin-deadlock", kernel)
    spin = next(f for f in result.snapshot.backtrace if f.function == "spin_lock")
    assert spin.inline and spin.symbol == "kf_hw_read_status"
    assert spin.label() == f"kf_hw_read_status+{spin.offset:#x}/{spin.size:#x} [kf_buggy] in spin_lock (inlined)"
    [(_cpu, task)] = result.snapshot.other_cpus
    top = first_own_frame(task)
    assert top is not None
    if top.inline:  # 6.12 and 5.10: the idle CPU's pc is an inlined helper's
        assert top.symbol is not None and top.label().startswith(f"{top.symbol}+{top.offset:#x}/")


#: Where each fixture kernel's idle CPU halted (``objdump -d vmlinux``: the ``hlt`` before the NMI's saved pc).
_HLT = {"5.10": "amd_e400_idle+0x11", "6.1": "native_safe_halt+0x12", "6.12": "default_idle+0x12"}


@pytest.mark.parametrize("kernel", kernels_of("14-spin-deadlock"))
def test_an_idle_cpu_is_said_halted_at_its_hlt_not_at_the_instruction_after_it(kernel: str) -> None:
    """The crash's NMI stops an idle CPU in ``hlt``, which resumes past itself: the saved pc is the next
    instruction's, on 6.12 ``default_idle+0x13`` in native_irq_disable (inlined), a ``cli`` the CPU never ran (the
    review said "CPU 0 was disabling interrupts" in the very finding that argues no other CPU holds the lock)."""
    _, result = _analyse("14-spin-deadlock", kernel)
    [(cpu, task)] = result.snapshot.other_cpus
    assert task.pid == 0 and task.halted_at is not None and task.halted_at == task.stack[0].pc - 1
    want = f"hlt at {_HLT[kernel]}"
    finding = next(f for f in result.analysis.findings if f.kind == "spinlock-deadlock")
    assert str(finding.fact(f"CPU {cpu}")) == f"{task.comm} (pid 0), idle (halted: {want})"
    assert f"CPU {cpu}: {task.comm} (pid 0), halted: {want}" in render_vmcore_markdown(result)
    [doc] = to_document(result)["other_cpus"]
    assert doc["halted_at"] == f"{task.halted_at:#x}"


# ---------------------------------------------------------------- bad input, on the real dumps


@on_case("10-use-after-free")
def test_a_stack_depot_handle_without_a_pool_is_said() -> None:
    from forensics.vmcore.slab import _stack

    case = _need("10-use-after-free")
    prog = open_program(case, modules=True)
    # A handle naming a pool past the last one the depot allocated (union handle_parts: pool index low bits).
    track = drgn.Object(prog, "struct track", value={"addr": 1, "handle": 0x3FFF})
    frames, missing = _stack(prog, track)
    assert frames == ()
    assert "no such pool" in str(missing) or "not in dump" in str(missing)


@on_case("12-double-free")
def test_a_cache_without_tracks_says_how_to_get_them() -> None:
    _, result = _analyse("12-double-free")
    [obj] = [o for o in result.snapshot.slab_objects if o.cache == "kmalloc-64" and o.allocated is False]
    assert obj.tracks == ()
    assert f"slub_debug=FZPU,{obj.cache}" in str(obj.tracks_missing)


@on_case("12-double-free")
def test_memory_no_cache_holds_now_is_said_not_guessed() -> None:
    """A page-allocator page (a kernel stack) reads as in no slab cache: what a destroyed cache leaves."""
    from forensics.vmcore.why import identify

    case = _need("12-double-free")
    prog = open_program(case, modules=True)
    stack = int(prog.crashed_thread().object.stack.value_())
    info = identify(prog, stack + 64, "test")
    assert info.kind == "unknown"
    assert info.missing is not None and "in no slab cache now" in info.missing
    assert "destroyed cache" in info.missing


@on_case("10-use-after-free")
def test_a_read_through_a_non_canonical_pointer_says_so() -> None:
    _, result = _analyse("10-use-after-free")
    [read] = [m for fv in result.snapshot.frame_values for m in fv.members if m.expression == "conn->peer->mtu"]
    assert read.value is None
    assert read.missing == "no memory at 0x6b6b6b6b6b6b6b73: not a canonical address (the pointer is bogus)"


@pytest.mark.parametrize("kernel", kernels_of("12-double-free"))
def test_a_slab_page_filtered_out_of_the_dump_is_said_plainly(kernel: str, tmp_path: Path) -> None:
    from drgn.helpers.linux.mm import virt_to_pfn
    from typer.testing import CliRunner

    from forensics.cli import app

    case, result = _analyse("12-double-free", kernel)
    [obj] = [o for o in result.snapshot.slab_objects if o.allocated is False]
    prog = open_program(case, modules=True)
    pfn = int(virt_to_pfn(prog, obj.start))
    crash_dir = tmp_path / "crash"
    crash_dir.mkdir()
    without_pages(case.vmcore, {pfn}, crash_dir / "vmcore")
    out = tmp_path / "out.json"
    args = ["vmcore", str(crash_dir), "--vmlinux", str(case.vmlinux), "--source-dir", str(FIXTURES_DIR)]
    args += ["--module-debug", str(case.module_debug[0]), "-f", "json", "-o", str(out)]
    run = CliRunner().invoke(app, args)
    assert run.exit_code in (0, 1), run.output
    doc = json.loads(out.read_text())
    facts = _explanation(doc, "double-free")["facts"]
    # The head of a free list (in metadata the dump keeps: struct slab, kmem_cache_cpu) still says the
    # object is free; that its own memory is missing is said beside it, and nothing is read from it.
    assert facts["object"].endswith(f"bytes in cache {_why(case)['cache']}: FREE")
    # Which page, that the dump level filtered it (it is RAM the dump describes), and what its struct page
    # (kept at every level) says it was.
    assert facts["object memory"] == (
        f"not in dump: memory at {obj.start:#x} (page frame {pfn:#x}) was filtered out by makedumpfile at dump "
        "level 31 (it leaves out zero, page cache, private page cache, user process and free pages); it was a "
        f"slab page of cache {_why(case)['cache']}"
    )
    assert doc["why"]["root_cause"]["class"] == "double_free"  # the trap alone still says what happened
    [entry] = [a for a in doc["why"]["addresses"] if a["address"] == f"{obj.start:#x}"]
    assert entry["words"] == []
