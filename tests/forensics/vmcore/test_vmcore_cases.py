"""kforensic vmcore on every real kdump fixture of every fixture kernel, checked against the ground truth
from the source."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from forensics.model import PROBLEM, LocatorKind, NotAvailable, Severity
from forensics.report.vmcore import render_vmcore_markdown, to_document
from forensics.types.results import VmcoreResult
from tests.helpers import assert_evidence_resolves
from tests.vmcore_cases import (
    PRIMARY_KERNEL,
    VmcoreCase,
    analysed_id,
    case_ids,
    case_names,
    kernel_ids,
    kernels,
    kernels_of,
    load_case,
    on_case,
    open_program,
)

drgn = pytest.importorskip("drgn")

CASES = case_ids()  # every case of every fixture kernel, as ``kernel/name``
KERNELS = kernel_ids()
#: Each fixture kernel, its test in the group of the kernel's first case (whose program it reads).
FIRST_CASES = [pytest.param(k, marks=on_case(f"{k}/{case_names(k)[0]}")) for k in kernels() if case_names(k)] or KERNELS


def _case(key: str) -> tuple[VmcoreCase, VmcoreResult]:
    return analysed_id(key)  # type: ignore[no-any-return]


def _need(name: str, kernel: str) -> tuple[VmcoreCase, VmcoreResult]:
    return analysed_id(name, kernel)  # type: ignore[no-any-return]


def _names(frames: object) -> list[str]:
    return [f.function for f in frames if isinstance(f.function, str)]  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", CASES)
def test_summary_matches_ground_truth(name: str) -> None:
    case, result = _case(name)
    snap, want = result.snapshot, case.expected
    assert snap.crashed_comm == want["task_comm"]
    if want.get("cpu") is not None:
        assert snap.crashed_cpu == want["cpu"]
    expected_panic = want["panic_message"]
    if want["type"] == "list_corruption":  # the list check prints its message, then BUG() panics
        site = want["kernel_site"]
        assert isinstance(site, dict)
        expected_panic = f"kernel BUG at {site['file']}:{site['line']}!"
    assert snap.panic_message == expected_panic
    panic_text = "\n".join(r.text for r in snap.log)
    assert str(want["panic_message"]).removeprefix("Kernel panic - not syncing: ") in panic_text
    assert snap.kernel_release == want["kernel_release"]
    assert str(want["kernel_release"]).startswith(f"{case.kernel}.")
    assert result.dmesg_path is not None  # the dmesg beside the dump is found
    assert not isinstance(snap.build_id, NotAvailable)


@pytest.mark.parametrize("name", CASES)
def test_crashing_function_and_culprit(name: str) -> None:
    case, result = _case(name)
    want = case.expected
    top = _names(result.snapshot.backtrace[:20])
    assert want["crashing_function"] in top, f"{want['crashing_function']} not in {top}"
    culprit = want.get("culprit_function")
    frame = result.analysis.culprit_frame
    assert frame is not None
    if culprit and want["type"] not in ("hung_task", "slab_leak"):
        assert frame.function == culprit
        assert frame.source_line == want["source_line"]
        assert str(frame.source_file).endswith(str(want["source_file"]))
    crash = next(f for f in result.incident.findings if f.kind == "crash")
    if want["type"] in ("slab_leak", "oom_panic"):
        # The dump alone titles the panic; the leak or OOM is a finding of its own (tests below).
        assert str(want["panic_message"]).removeprefix("Kernel panic - not syncing: ") in crash.title
    elif want["type"] == "soft_lockup":
        # syzbot names a stall by the frame above its dispatch point (here kthread), not the
        # random frame the watchdog interrupted; the culprit frame above is that frame.
        assert crash.title == want["title"]
        named = crash.title.removeprefix("BUG: soft lockup in ")
        assert named in _names(result.snapshot.backtrace)
        assert any(f.function == named and f.module == want["in_module"] for f in result.snapshot.backtrace)
    else:
        assert crash.title.lower() == str(want["title"]).lower()


#: The kernel's own statement of where it stopped: a BUG()'s line, in the log.
_BUG_AT = re.compile(r"kernel BUG at (\S+):(\d+)!")
_CRASHED_AT = re.compile(r"crashed in \S+ \((\S+):(\d+)[ )]")


@pytest.mark.parametrize("name", CASES)
def test_the_crash_line_is_the_one_the_kernel_states(name: str) -> None:
    """The headline's line is the BUG's (mm/slub.c:305 on 5.10, where set_freepointer inlines itself at line
    300), and for a panic called by a function inlined into another, the line of that call."""
    case, result = _case(name)
    want = case.expected
    stated = _BUG_AT.search("\n".join(r.text for r in result.snapshot.log))
    site = want.get("kernel_site")
    if stated is not None:
        file, line = stated.group(1), int(stated.group(2))
    elif want["type"] in ("hung_task", "oom_panic") and isinstance(site, dict):
        file, line = site["file"], site["line"]
    else:
        pytest.skip("the kernel states no line of the crash: a fault or a lockup's interrupt is where its pc is")
    crash = next(f for f in result.incident.findings if f.kind == "crash")
    said = _CRASHED_AT.search(crash.summary)
    assert said is not None, crash.summary
    assert said.group(1).endswith(file) and int(said.group(2)) == line, crash.summary
    assert str(crash.fact("source")).startswith(said.group(1) + ":" + said.group(2))


@pytest.mark.parametrize("kernel", kernels_of("01-null-member"))
def test_the_reasoning_weighs_the_null_pointer_it_names(kernel: str) -> None:
    """The figure under the fault's steps is the NULL-pointer reading's, named with the pointer it weighs."""
    case, result = _need("01-null-member", kernel)
    fault = result.fault
    assert not isinstance(fault, NotAvailable)
    pointer = case.expected["null_expression"]
    want = f"Confidence {fault.confidence:.2f} that {pointer} is the NULL pointer the fault read through."
    assert fault.confidence_text() == want


@pytest.mark.parametrize("kernel", kernels_of("10-use-after-free"))
def test_the_reasoning_gives_no_figure_without_a_null_pointer(kernel: str) -> None:
    """The base register holds a use-after-free's poison (0x6b6b6b6b6b6b6b6b), no NULL pointer: the derivation is
    exact and no NULL-pointer confidence (0.30, "of what?") is printed under it."""
    _, result = _need("10-use-after-free", kernel)
    fault = result.fault
    assert not isinstance(fault, NotAvailable)
    text = fault.confidence_text()
    assert "Confidence" not in text and "the base register does not hold a NULL-page pointer" in text
    assert "Confidence 0.30" not in render_vmcore_markdown(result)


@pytest.mark.parametrize("kernel", kernels_of("01-null-member"))
def test_null_member_names_register_struct_and_member(kernel: str) -> None:
    case, result = _need("01-null-member", kernel)
    want = case.expected
    fault = result.fault
    assert not isinstance(fault, NotAvailable)
    assert fault.base_register == want["null_register"]
    assert fault.base_value == 0
    assert fault.effective_address == want["fault_address"] == fault.fault_address
    assert fault.address_agrees is True
    assert fault.null_expression == want["null_expression"]
    assert not isinstance(fault.read_member, NotAvailable)
    assert fault.read_member.struct == want["struct_type"]
    assert fault.read_member.member.name == want["member"]
    assert fault.read_member.member.offset == want["member_offset"]
    assert fault.instruction.address - result.snapshot.code.start == want["faulting_function_offset"]  # type: ignore[union-attr]
    null = [f for f in result.incident.findings if f.kind == "null-field"]
    assert len(null) == 1
    assert "dev->sensor" in null[0].title
    assert null[0].confidence >= 0.85
    # The log line cited for the fault address shows it: the oops's last CR2 line, not its register dump's
    # (``CR2: ffffffffc018efef`` on 6.1: whatever the last page fault before the printing left there).
    cited = [e.excerpt for e in null[0].evidence if e.locator.kind is LocatorKind.LINE]
    assert cited == [f"CR2: {fault.fault_address:016x}"], cited
    # the read through the NULL pointer: the NULL page, which nothing maps, not a page the dump left out
    [ops] = [m for fv in result.snapshot.frame_values for m in fv.members if m.expression == "dev->sensor->ops"]
    assert ops.missing == f"no memory at {fault.fault_address:#x}: the NULL page, which no page table maps (a NULL " + (
        f"pointer + {fault.fault_address:#x})"
    )


@pytest.mark.parametrize("kernel", kernels_of("04-hung-task"))
def test_hung_task_names_waiter_and_owner(kernel: str) -> None:
    case, result = _need("04-hung-task", kernel)
    lock = case.expected["lock"]
    assert isinstance(lock, dict)
    waiters = [t for t in result.snapshot.tasks if t.comm == lock["waiter_comm"]]
    assert len(waiters) == 1
    waiter = waiters[0]
    assert waiter.state == "D"
    # khungtaskd panics once the waiter has not run for the timeout.
    assert waiter.last_run_ns is not None
    assert waiter.last_run_ns >= int(case.expected["hung_task_timeout_secs"]) * 1e9 * 0.9  # type: ignore[call-overload]
    # the crashed kernel's own setting, read from the dump (the fixture lowers it from the default 120 s)
    assert result.snapshot.hung_task_timeout == int(case.expected["hung_task_timeout_secs"])  # type: ignore[call-overload]
    assert waiter.blocked_on == f"mutex {lock['name']}"
    assert waiter.lock_owner_comm == lock["owner_comm"]
    [blocked] = [t for t in to_document(result)["tasks"]["blocked"] if t["pid"] == waiter.pid]
    assert blocked["lock_owner_comm"] == lock["owner_comm"]  # the JSON gives the name read, as a string
    owner = next(t for t in result.snapshot.tasks if t.pid == waiter.lock_owner_pid)
    assert lock["owner_function"] in _names(owner.stack)
    assert lock["waiter_function"] in _names(waiter.stack)
    hung = [f for f in result.incident.findings if f.kind == "hung-task" and lock["waiter_comm"] in f.title]
    assert hung
    assert lock["owner_comm"] in hung[0].title


@pytest.mark.parametrize("kernel", kernels_of("08-slab-leak"))
def test_slab_leak_cache_is_outsized(kernel: str) -> None:
    case, result = _need("08-slab-leak", kernel)
    leak = case.expected["leak"]
    assert isinstance(leak, dict)
    outsized = [f for f in result.incident.findings if f.kind == "outsized-slab"]
    assert outsized
    assert leak["cache"] in outsized[0].title
    # The objects in use, drgn's exact count (6.12: 1148, 5.10: 1522), not its slabs' capacity (1152, 1536).
    from drgn.helpers.linux.slab import find_slab_cache, slab_cache_for_each_allocated_object

    prog = open_program(case, modules=True)
    cache = find_slab_cache(prog, leak["cache"])
    in_use = sum(1 for _ in slab_cache_for_each_allocated_object(cache, "void"))
    [info] = [c for c in result.snapshot.slab_caches if c.name == leak["cache"]]
    assert info.total_objects is not None and info.total_objects > in_use
    assert outsized[0].summary.startswith(
        f"{leak['cache']} holds {in_use} objects of {info.object_size} bytes in use (its slabs: "
        f"{info.total_objects} slots, "
    )
    # A cache of 0.4-0.5% of RAM with 80%+ free, in a dump sysrq-c took on purpose, and a kthread in msleep()
    # that ran a moment before: nothing here reaches medium (its leak *rate* is kforensic leaks' to judge).
    assert outsized[0].severity is Severity.LOW and outsized[0].baseline is not None
    assert outsized[0].baseline.value.endswith("free at the crash")
    assert max(f.severity for f in result.incident.findings) < PROBLEM


@pytest.mark.parametrize("name", CASES)
def test_a_bug_trap_names_its_file_as_the_kernel_does(name: str) -> None:
    """The bug table's file, as the kernel's "kernel BUG at lib/list_debug.c:30!" says it: 5.10's entry was read 4
    bytes into its string too ("list_debug.c"), which also ends the DWARF path, and taken."""
    result = _case(name)[1]
    snap = result.snapshot
    said = re.search(r"kernel BUG at (\S+):(\d+)!", str(snap.panic_message))
    if said is None:
        pytest.skip("the kernel's panic names no BUG site")
    site = snap.bug_site
    assert not isinstance(site, NotAvailable)
    assert site.where() == f"{said.group(1)}:{said.group(2)}"
    # An unevaluated trap is titled by its site ("BUG in __list_add_valid at lib/list_debug.c:30: not evaluated")
    titles = [f.title for f in result.analysis.findings if f.kind == "bug-condition" and "not evaluated" in f.title]
    assert all(f" at {site.where()}: " in t for t in titles), titles


@pytest.mark.parametrize("name", CASES)
def test_every_finding_names_what_its_severity_was_judged_against(name: str) -> None:
    case, result = _case(name)
    assert [f.title for f in result.incident.findings if f.baseline is None] == []
    # an unknown is never promoted to a high finding: an unevaluated condition is information
    for f in result.incident.findings:
        if f.kind == "bug-condition" and "not evaluated" in f.title:
            assert f.severity is Severity.INFO
    # a task that slept in D state only moments before the crash, on no lock, hurt nobody
    for f in result.incident.findings:
        if f.kind == "hung-task" and "uninterruptible sleep (D)" in f.title:
            assert float(str(f.fact("last ran")).split()[0]) < 120 and f.severity is Severity.INFO
            assert "lock" not in f.summary.replace("no lock", "")
    # each title once: the crash's own title is not repeated by its explanation (a double free)
    titles = [f.title for f in result.incident.findings]
    assert len(titles) == len(set(titles))
    crash = next(f for f in result.incident.findings if f.kind == "crash")
    if case.expected["type"] in ("sysrq_crash", "slab_leak"):  # both end in echo c > /proc/sysrq-trigger
        assert crash.severity is Severity.LOW and crash.baseline is not None
        assert crash.baseline.name == "a crash forced by SysRq-c"
    elif crash.consequence_of is not None:  # a lock cycle's or a spinlock's crash: the harm counted at the root
        [root] = [f for f in result.incident.findings if f.severity is Severity.CRITICAL]
        assert crash.consequence_of.root == root.id and crash.severity is Severity.HIGH
        assert case.name in ("11-abba-deadlock", "14-spin-deadlock")
    else:
        assert crash.severity is Severity.CRITICAL


@pytest.mark.parametrize("kernel", kernels_of("09-oom"))
def test_oom_case_reports_the_oom(kernel: str) -> None:
    case, result = _need("09-oom", kernel)
    process = case.expected["oom"]["process"]  # type: ignore[index]
    by_kind = {f.kind: f for f in result.incident.findings}
    assert {"dmesg.oom", "oom-users"} <= set(by_kind), sorted(by_kind)
    assert by_kind["dmesg.oom"].title == f"OOM killer invoked (invoked by {process})"
    assert f"the top memory user is task {process} " in by_kind["oom-users"].title
    users = {
        f.name.removeprefix("memory user: "): f.value for f in by_kind["oom-users"].facts if "memory user" in f.name
    }
    # The fixtures' rootfs is the initramfs on tmpfs: NR_FILE_PAGES is shmem, said as such (was "page-cache page
    # cache"); no user below 64 KiB (was "vmalloc n_tty_open: 0.0 MiB").
    assert users.get("shmem and tmpfs", "").endswith("% of RAM)"), users
    assert not any(v.startswith("0.0 MiB") for v in users.values()), users
    assert all(k.startswith(("task ", "slab cache ", "vmalloc by ", "page cache ", "shmem ")) for k in users), users


@pytest.mark.parametrize("name", [c for c in CASES if c.startswith(f"{PRIMARY_KERNEL}/")] or CASES[:1])
def test_every_evidence_resolves_in_the_dump(name: str, tmp_path: Path) -> None:
    """On the first kernel (the other kernels': test_vmcore_why's check of the explanations' evidence)."""
    from detectors.vmcore.analysis import log_as_text
    from detectors.vmcore.findings import log_source
    from forensics.vmcore.resolve import dump_resolvers

    case, result = _case(name)
    # An independent look at the dump: a drgn program of the tests' own (open_program), not the analysis's.
    prog = open_program(case, modules=True)
    log_file = tmp_path / "dump.log"
    log_file.write_text(log_as_text(result.snapshot.log))
    assert_evidence_resolves(
        result.incident.findings,
        source_paths={log_source(str(case.vmcore)): log_file},
        resolvers=dump_resolvers(prog),
    )
    assert {e.locator.kind for f in result.incident.findings for e in f.evidence} & {
        LocatorKind.FRAME,
        LocatorKind.REGISTER,
    }


@on_case("07-sysrq-c")
def test_a_page_makedumpfile_left_out_reads_as_not_in_dump() -> None:
    from forensics.vmcore.system import attempt

    if "07-sysrq-c" not in case_names():
        pytest.skip("the sysrq-c fixture is absent")
    case = load_case("07-sysrq-c")
    prog = open_program(case, modules=True)
    task = prog.crashed_thread().object
    # The shell's user stack: user pages are excluded at dump level 31 (-d 31 has bit 8).
    user_stack = int(task.mm.start_stack.value_())
    value = attempt("user stack", lambda: prog.read(user_stack, 8))
    assert isinstance(value, NotAvailable)
    assert "not in dump" in value.reason


@pytest.mark.parametrize("name", CASES)
def test_every_other_cpu_has_its_task_and_stack(name: str) -> None:
    case, result = _case(name)
    snap = result.snapshot
    assert isinstance(snap.cpus, int) and snap.cpus == case.expected["guest"]["smp"]  # type: ignore[index]
    assert len(snap.other_cpus) == snap.cpus - 1
    for cpu, task in snap.other_cpus:
        assert cpu != snap.crashed_cpu
        assert task.stack, f"no stack for {task.comm} on CPU {cpu}"


@pytest.mark.parametrize("kernel", FIRST_CASES)
def test_node_counters_give_the_same_totals_as_walking_the_slabs(kernel: str) -> None:
    from drgn.helpers.linux.slab import for_each_slab_cache, slab_cache_usage

    from forensics.vmcore.system import _node_total_objects

    case = load_case(case_names(kernel)[0], kernel) if case_names(kernel) else pytest.skip("no vmcore fixtures")
    prog = open_program(case, modules=True)
    compared = 0
    for cache in for_each_slab_cache(prog):
        try:
            usage = slab_cache_usage(cache)
        except drgn.FaultError:
            continue  # a slab page the dump lacks (6.12 at dump level 31): the counters cannot be checked
        assert _node_total_objects(prog, cache) == usage.num_objs
        compared += 1
    assert compared > 20


@pytest.mark.parametrize("name", CASES)
def test_what_the_dump_lacks_is_said_with_its_page_and_reason(name: str) -> None:
    """Every read the dump could not serve names the object, its page and why (filtered, not RAM, ...).

    On 6.12 makedumpfile 1.7.2 leaves out slab pages with an odd page->mapping word: task_structs,
    vmap_areas; the warnings say so instead of a bare "not in dump" (or losing the whole task list).
    """
    _, result = _case(name)
    for warning in result.snapshot.warnings:
        if "not in dump" in warning:
            assert "was not captured (filtered by makedumpfile or not present)" not in warning, warning
            assert "page frame" in warning or "no page maps it" in warning, warning
    assert result.snapshot.tasks, "the task list is kept whatever pages are missing"


@pytest.mark.parametrize("name", CASES)
def test_the_command_says_what_it_examined_and_could_have_found(name: str) -> None:
    """``kforensic vmcore`` said "Nothing at medium severity or above" on the sysrq crash without what it had looked
    at; only ``report --vmcore`` listed the dump as examined (ue24 F10).  The dump's analysis states it itself: its
    kernel, tasks and caches counted from the snapshot, in the JSON and the markdown."""
    _, result = _case(name)
    snap = result.snapshot
    dump = result.incident.examined[0]
    assert dump.what.startswith(f"crash dump {snap.dump_path}: kernel {snap.kernel_release}"), dump.what
    assert f"{len(snap.tasks):,} task(s), {len(snap.slab_caches):,} slab cache(s)" in dump.what, dump.what
    assert any("lock cycles" in c for c in dump.could_find), dump.could_find
    (said,) = [x for x in to_document(result)["incident"]["examined"] if x["what"] == dump.what]
    assert said["could_find"] == list(dump.could_find)
    assert f"examined: {dump.what}" in render_vmcore_markdown(result).replace("\n", " ")


@pytest.mark.parametrize("kernel", kernels_of("01-null-member"))
def test_the_log_excerpt_holds_the_report_from_its_header(kernel: str) -> None:
    """The markdown's "Kernel log in the dump" was the log's last 25 lines: it began inside the register dump, with
    the opcode-fetch CR2 and without the BUG and RIP lines that explain it (ue24 F9).  It starts at the report's
    header now, the RIP line with it, and runs to the log's end."""
    _, result = _need("01-null-member", kernel)
    (report,) = [r for r in result.reports if "NULL pointer" in r.title]
    md = render_vmcore_markdown(result)
    excerpt = md.split("## Kernel log in the dump", 1)[1].split("```text\n", 1)[1].split("\n```", 1)[0].splitlines()
    log = result.snapshot.log
    assert excerpt[0].endswith(log[report.start_line - 1].text), (excerpt[0], report.start_line)
    assert any(" RIP: " in line for line in excerpt), excerpt
    assert excerpt[-1].endswith(log[-1].text)
    doc = to_document(result)["log"]["excerpt"]
    assert doc["first_line"] == report.start_line and doc["lines"] == excerpt
