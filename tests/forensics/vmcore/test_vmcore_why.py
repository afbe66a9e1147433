"""kforensic vmcore explains why, on the real kdump fixtures: checked against the ``why`` ground truth.

The decisive values are checked on every fixture kernel; the handling of sources and odd inputs on the first.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from detectors.dmesg.frames import stall_frame
from detectors.incident.hypotheses import rank_hypotheses
from forensics.model import NotAvailable
from forensics.report.vmcore import to_document
from forensics.types.results import VmcoreResult
from tests.helpers import assert_evidence_resolves
from tests.vmcore_cases import (
    FIXTURES_DIR,
    PRIMARY_KERNEL,
    VmcoreCase,
    analysed_id,
    case_ids,
    case_names,
    kernel_ids,
    kernels_of,
    load_case,
    on_case,
    open_program,
)

drgn = pytest.importorskip("drgn")

CASES = case_ids()  # every case of every fixture kernel, as ``kernel/name``
KERNELS = kernel_ids()
MODULE_SOURCE = FIXTURES_DIR / "kf_buggy" / "kf_buggy.c"


def _run(name: str, source_dirs: tuple[Path, ...]) -> tuple[VmcoreCase, VmcoreResult]:
    from forensics.pipelines.vmcore import analyse_dump
    from forensics.vmcore.program import DebugInfoRequest

    if name == "<no-vmcore-fixtures>":
        pytest.skip("no vmcore fixtures committed (vmcore_fixtures/build.sh)")
    case = load_case(name)
    return case, analyse_dump(case.directory, DebugInfoRequest(case.vmlinux, (), case.module_debug, source_dirs))


def _analyse(name: str, kernel: str = PRIMARY_KERNEL) -> tuple[VmcoreCase, VmcoreResult]:
    """The session's one analysis of a case (with the module source), shared by the vmcore test modules."""
    return analysed_id(name, kernel)  # type: ignore[no-any-return]


def _why(case: VmcoreCase) -> dict[str, object]:
    why = case.expected.get("why")
    if not isinstance(why, dict):
        pytest.skip(f"{case.name} has no why ground truth")
    return why


@pytest.mark.parametrize("name", [n for n in CASES if n.endswith(("/02-bug-on", "/03-warn-on"))] or ["<none>"])
def test_bug_and_warn_conditions_are_evaluated_from_the_frame(name: str) -> None:
    if name == "<none>":
        pytest.skip("no BUG/WARN fixture")
    case, result = _analyse(name)
    want = _why(case)
    doc = to_document(result)["why"]
    assert doc["root_cause"]["class"] == want["class"]
    site = doc["bug_site"]
    assert site["source"]["matches_build"] is True
    assert site["file"] == case.expected["source_file"].removeprefix("vmcore_fixtures/")  # type: ignore[union-attr]
    assert site["line"] == case.expected["source_line"]
    assert site["warning"] is (want["macro"] == "WARN_ON")
    operands = {o["expression"]: o.get("value") for o in site["operands"]}
    assert operands == want["operands"]
    finding = next(f for f in result.analysis.findings if f.kind == "bug-condition")
    condition = finding.fact("condition")
    assert condition is not None
    assert condition.startswith(f"{want['macro']}({want['condition']}): ")
    assert condition.endswith("-> true") is want["result"]
    # the first hypothesis names the condition and the values, in vmcore and in report alike
    assert str(want["condition"]) in result.analysis.hypotheses[0].statement


@on_case("02-bug-on")
def test_bug_on_reads_exactly_like_the_issue_asks() -> None:
    if "02-bug-on" not in case_names():
        pytest.skip("the BUG_ON fixture is absent")
    _, result = _analyse("02-bug-on")
    finding = next(f for f in result.analysis.findings if f.kind == "bug-condition")
    assert finding.fact("condition") == "BUG_ON(buf->refcount <= 0): buf->refcount = 0 -> true"


@pytest.mark.parametrize("kernel", kernels_of("06-list-corrupt"))
def test_list_corruption_names_object_cache_struct_member_and_cause(kernel: str) -> None:
    case, result = _analyse("06-list-corrupt", kernel)
    want = _why(case)
    doc = to_document(result)["why"]
    assert doc["root_cause"]["class"] == want["class"]
    finding = next(f for f in result.analysis.findings if f.kind == "list-corruption")
    entry = finding.fact("entry object")
    assert entry is not None
    assert f"in cache {want['cache']}, offset {int(str(want['member_offset'])):#x}, allocated" in entry
    assert finding.fact("list head") is not None
    assert str(finding.fact("list head")).startswith(f"{want['struct']}.{want['member']} at offset")
    assert finding.fact("entry words (next, prev)") == f"{want['next']}, {want['prev']}"
    assert "twice" in str(finding.fact("hypothesis"))
    # the entry address from the log is identified as a slab object in the dump
    slab = [a for a in doc["addresses"] if a["kind"] == "slab" and a["seen_in"] == "log" and a["offset"]]
    assert any(a["cache"] == want["cache"] and a["allocated"] is want["allocated"] for a in slab)


@pytest.mark.parametrize("kernel", kernels_of("05-soft-lockup"))
def test_soft_lockup_names_the_spinning_function_and_its_loop(kernel: str) -> None:
    case, result = _analyse("05-soft-lockup", kernel)
    want = _why(case)
    loop = result.snapshot.loop
    assert not isinstance(loop, NotAvailable)
    assert loop.function == want["function"]
    assert loop.condition == want["condition"]
    assert loop.loop_reads_memory is False
    # The crash is titled by syzbot's stall rule, as kforensic dmesg titles the log's report (the frame above
    # kthread, whether or not the source shows the loop); the loop's finding names where the CPU spins.
    crash = next(f for f in result.analysis.findings if f.kind == "crash")
    [report] = [r for r in result.reports if r.title.startswith("BUG: soft lockup in ")]
    at = result.analysis.crash_frame  # the interrupted frame: the watchdog's own interrupt frames lie before it
    assert at is not None and at.function == want["function"]
    physical = [str(f.function) for f in result.snapshot.backtrace[at.index :] if not f.inline]
    assert crash.title == report.title == f"BUG: soft lockup in {stall_frame(physical)}"
    loop_finding = next(f for f in result.analysis.findings if f.kind == "lockup-loop")
    assert loop_finding.title.startswith(f"CPU spins in {want['function']}: ")
    # The stack dumps in its log hold a freed kthread_create_info: a stale value, no use-after-free.
    assert not [f for f in result.analysis.findings if f.kind in ("use-after-free", "suspicious-values")]
    assert to_document(result)["why"]["root_cause"]["class"] == want["class"]


def test_soft_lockup_without_source_keeps_what_the_machine_code_says(tmp_path: Path) -> None:
    # Distribution debug info has no source tree: the loop (pause; jmp back) and that it reads no memory come from
    # the dump's machine code, and are kept; only the C condition is said not available, with what gives it.
    if "05-soft-lockup" not in case_names():
        pytest.skip("the soft-lockup fixture is absent")
    _, result = _run("05-soft-lockup", (tmp_path,))
    loop = result.snapshot.loop
    assert not isinstance(loop, NotAvailable), loop
    if not isinstance(loop.source, NotAvailable):
        pytest.skip(f"the module's DWARF source path exists on this machine: {loop.source.path}")
    assert loop.function == "kf_poll_ready" and loop.loop_reads_memory is False and loop.body is not None
    assert isinstance(loop.condition, NotAvailable) and loop.operands == ()
    finding = next(f for f in result.analysis.findings if f.kind == "lockup-loop")
    start, end = loop.body
    assert finding.title == f"CPU spins in kf_poll_ready: a loop at {start:#x}..{end:#x} that reads no memory"
    assert finding.fact("loop machine code") == "reads no memory (compiled to a loop with no load)"
    condition = str(finding.fact("condition"))
    assert condition.startswith("not available: source of ") and "pass --source-dir" in condition
    assert "the source would give the loop's C condition" in condition
    doc = to_document(result)["why"]
    assert doc["root_cause"]["class"] == "busy_wait"
    # The JSON holds what the text says: where the loop is, and that it reads no memory.
    assert doc["loop"]["body"] == {"first": f"{start:#x}", "last": f"{end:#x}"}
    assert doc["loop"]["loop_reads_memory"] is False


@on_case("6.12/08-slab-leak")
def test_a_slab_cache_whose_in_use_count_the_dump_cannot_give_says_unknown_and_why() -> None:
    # The 6.12 dumps (makedumpfile -d 31) leave out a slab page of dentry: its free objects cannot be counted.
    from forensics.report.formats import Destination
    from forensics.report.vmcore import VmcoreRenderer

    _, result = analysed_id("6.12/08-slab-leak")
    unknown = [c for c in result.snapshot.slab_caches[:10] if c.active_objects is None]
    assert unknown, "no cache of the table lacks its in-use count"
    for cache in unknown:
        assert str(cache.active_missing).startswith("not in dump: a slab page of the cache at 0x")
    text = " ".join(VmcoreRenderer().text(result, Destination()).split())  # the table's cells wrap
    assert "None/" not in text and f"{unknown[0].name} unknown (below)/" in text.replace("│", "").replace("  ", " ")
    assert f"{unknown[0].name}: objects in use unknown (not in dump: a slab page of the cache at 0x" in text
    assert "as /proc/slabinfo counts them" in text
    doc = {c["name"]: c for c in to_document(result)["slab_top"]}
    assert doc[unknown[0].name]["active"] == {"not_available": unknown[0].active_missing}


@on_case("6.12/08-slab-leak")
def test_an_outsized_cache_whose_in_use_count_the_dump_cannot_give_says_unknown_in_its_evidence() -> None:
    # The 6.12 dump leaves out a slab page of dentry; had it been one of the outsized kf_leak_obj's, its finding's
    # evidence (slabinfo's columns) printed "kf_leak_obj None 1152 512".
    from dataclasses import replace

    from detectors.vmcore.findings import outsized_cache_findings

    _, result = analysed_id("6.12/08-slab-leak")
    snap = result.snapshot
    [why] = [c.active_missing for c in snap.slab_caches if c.name == "dentry" and c.active_objects is None]
    caches = [replace(c, active_objects=None, active_missing=why) if c.name == "kf_leak_obj" else c
              for c in snap.slab_caches]  # fmt: skip
    [finding] = [f for f in outsized_cache_findings(replace(snap, slab_caches=caches)) if "kf_leak_obj" in f.title]
    [excerpt] = [e.excerpt for e in finding.evidence]
    assert "None" not in str(excerpt)
    assert str(excerpt).startswith(f"kf_leak_obj unknown ({why}) 1152 512")


@on_case("6.12/08-slab-leak")
def test_a_slab_cache_whose_total_count_the_dump_cannot_give_says_unknown_and_why() -> None:
    # Without the per-node counters (no CONFIG_SLUB_DEBUG) the total comes from the same slab walk as the in-use
    # count: a slab page the dump lacks leaves both unknown, for the reason dentry's in-use count has on 6.12.
    from dataclasses import replace

    from forensics.report.formats import Destination
    from forensics.report.vmcore import VmcoreRenderer

    _, result = analysed_id("6.12/08-slab-leak")
    snap = result.snapshot
    [why] = [c.active_missing for c in snap.slab_caches if c.name == "dentry" and c.active_objects is None]
    [name] = [c.name for c in snap.slab_caches[1:10] if c.active_objects is not None][:1]
    caches = tuple(replace(c, active_objects=None, total_objects=None, total_bytes=None, active_missing=why)
                   if c.name == name else c for c in snap.slab_caches)  # fmt: skip
    unknown = replace(result, snapshot=replace(snap, slab_caches=caches))
    text = " ".join(VmcoreRenderer().text(unknown, Destination()).split())  # the table's cells wrap
    assert "None" not in text
    size = next(c.object_size for c in caches if c.name == name)
    assert f"{name} unknown (below) {size} unknown (below) " in text.replace("│", "").replace("  ", " ")
    assert f"{name}: objects in use and total unknown ({why})" in text
    doc = {c["name"]: c for c in to_document(unknown)["slab_top"]}
    assert doc[name]["total"] == {"not_available": why}


@on_case("04-hung-task")
def test_a_lock_owner_whose_name_the_dump_cannot_give_says_unknown_and_why() -> None:
    # The owner's pid is read from its task_struct; its name can lie on a page of it the dump lacks.
    from dataclasses import replace

    from forensics.report.formats import Destination
    from forensics.report.vmcore import VmcoreRenderer
    from forensics.vmcore.shell import bindings

    _, result = analysed_id("6.1/04-hung-task")
    snap = result.snapshot
    why = "not in dump: memory at 0xffff888003a1c7b8 was not captured (filtered by makedumpfile or not present)"
    [waiter] = [t for t in snap.tasks if t.state == "D" and t.lock_owner_pid is not None]
    tasks = tuple(replace(t, lock_owner_comm=None, lock_owner_missing=why) if t is waiter else t for t in snap.tasks)
    unknown = replace(result, snapshot=replace(snap, tasks=tasks))
    text = " ".join(VmcoreRenderer().text(unknown, Destination()).split())
    owner = f"pid {waiter.lock_owner_pid}, name unknown ({why})"
    assert f"D: {waiter.comm} (pid {waiter.pid}) on {waiter.blocked_on}, lock owner {owner}, last ran" in text
    assert "None" not in text
    [bound] = [b.what for b in bindings(unknown.snapshot, None) if b.name == f"owner_{waiter.lock_owner_pid}"]
    assert bound == f"task {owner} holds what waiter_{waiter.pid} waits on"
    blocked = {t["pid"]: t for t in to_document(unknown)["tasks"]["blocked"]}
    assert blocked[waiter.pid]["lock_owner_pid"] == waiter.lock_owner_pid
    assert blocked[waiter.pid]["lock_owner_comm"] == {"not_available": why}


@on_case("03-warn-on")
def test_a_trap_whose_line_the_dump_cannot_give_is_not_available_and_why_in_json() -> None:
    # The JSON says the reason the trap fact gives (BugSite.line_missing), not a bare null; a known line stays a number.
    from dataclasses import replace

    if "03-warn-on" not in case_names():
        pytest.skip("the WARN_ON fixture is absent")
    _, result = _analyse("03-warn-on")
    site = result.snapshot.bug_site
    assert not isinstance(site, NotAvailable)
    assert to_document(result)["why"]["bug_site"]["line"] == site.line
    why = "its bug table entry not in dump: memory at 0xffffffffc0004010 was not captured"
    unknown = replace(site, line=None, line_missing=why)
    doc = to_document(replace(result, snapshot=replace(result.snapshot, bug_site=unknown)))
    assert doc["why"]["bug_site"]["line"] == {"not_available": why}


@pytest.mark.parametrize("kernel", kernels_of("09-oom"))
def test_oom_names_the_failed_request_and_the_top_memory_user(kernel: str) -> None:
    case, result = _analyse("09-oom", kernel)
    want = _why(case)
    finding = next(f for f in result.analysis.findings if f.kind == "oom-users")
    assert f"task {want['top_user']}" in finding.title
    assert "order=0" in str(finding.fact("failed allocation"))
    assert to_document(result)["why"]["root_cause"]["class"] == want["class"]


@pytest.mark.parametrize("kernel", kernels_of("04-hung-task"))
def test_hung_task_has_no_lock_cycle(kernel: str) -> None:
    case, result = _analyse("04-hung-task", kernel)
    assert _why(case)["cycle"] is False
    assert not [f for f in result.analysis.findings if f.kind == "deadlock"]
    lock = case.expected["lock"]
    assert isinstance(lock, dict)
    hung = next(f for f in result.analysis.findings if f.kind == "hung-task" and lock["waiter_comm"] in f.title)
    chain = str(hung.fact("wait-for chain"))
    assert chain.startswith(f"{lock['waiter_comm']} (pid ")
    assert f"-> mutex {lock['name']} -> {lock['owner_comm']} (pid " in chain
    assert f"in {lock['owner_function']}+" in chain
    assert to_document(result)["why"]["root_cause"]["class"] == _why(case)["class"]


@pytest.mark.parametrize("name", CASES)
def test_vmcore_and_report_rank_the_same_hypothesis_first(name: str) -> None:
    _, result = _analyse(name)
    ours = result.analysis.hypotheses
    theirs = rank_hypotheses(result.incident.sorted_findings())
    assert bool(ours) == bool(theirs)
    if ours:
        assert ours[0].statement == theirs[0].statement
    # The JSON's root cause names the finding the first hypothesis rests on (its finding ids, never a title
    # match): a deliberate crash names the crash finding.
    root = to_document(result)["why"]["root_cause"]
    assert root is None if not ours else (root["finding"] == ours[0].finding_ids[0])
    assert root is None or root["finding"] in {f.id for f in result.analysis.findings}


@pytest.mark.parametrize("name", CASES)
def test_the_explanations_evidence_resolves_in_a_separately_opened_dump(name: str, tmp_path: Path) -> None:
    from detectors.vmcore.analysis import log_as_text
    from detectors.vmcore.findings import log_source
    from forensics.vmcore.resolve import dump_resolvers

    case, result = _analyse(name)
    log_file = tmp_path / "dump.log"
    log_file.write_text(log_as_text(result.snapshot.log))
    assert_evidence_resolves(
        result.incident.findings,
        source_paths={log_source(str(case.vmcore)): log_file},
        resolvers=dump_resolvers(open_program(case, modules=True)),
    )


@pytest.mark.parametrize("name", CASES)
def test_frame_values_say_optimized_out_and_never_guess(name: str) -> None:
    _, result = _analyse(name)
    for fv in result.snapshot.frame_values:
        for v in (*fv.variables, *fv.members):
            assert (v.value is None) or v.missing is None
            if v.missing is not None:
                assert v.shown() == v.missing


def test_a_struct_value_of_a_frame_is_shown_by_its_members() -> None:
    """``struct fd f = (struct fd)`` named the type and nothing the frame held (review 5, #12): the members are
    shown as drgn reads them in that frame."""
    case, result = _analyse("10-use-after-free", "6.12")
    (fv, read) = next(
        (fv, v) for fv in result.snapshot.frame_values for v in fv.variables if v.type_name == "struct fd"
    )
    frame = open_program(case, modules=True).crashed_thread().stack_trace()[fv.frame]
    f = frame[read.expression]
    words = [f".{m.name} = {int(f.member_(m.name).value_()):#x}" for m in f.type_.unaliased().members if m.name]
    assert read.shown() == "{" + ", ".join(words) + "}"  # 6.12's struct fd holds one word: file pointer and flags


@on_case("02-bug-on")
def test_without_source_the_frame_values_and_what_is_missing(tmp_path: Path) -> None:
    from dataclasses import replace

    from detectors.vmcore.why import bug_condition_finding
    from forensics.vmcore.why import read_source_line

    if "02-bug-on" not in case_names():
        pytest.skip("the BUG_ON fixture is absent")
    missing = read_source_line(
        "kf_buggy/kf_buggy.c", 140, "kf_buffer_put", "/nonexistent/kf_buggy/kf_buggy.c", (tmp_path,), trap=True
    )
    assert isinstance(missing, NotAvailable)
    assert "source of kf_buggy/kf_buggy.c not found" in missing.reason
    assert "pass --source-dir" in missing.reason
    # The real snapshot of the dump, as the adapter returns it when the source cannot be found.
    _, result = _analyse("02-bug-on")
    site = result.snapshot.bug_site
    assert not isinstance(site, NotAvailable)
    snap = replace(result.snapshot, bug_site=replace(site, source=missing, operands=()))
    finding = bug_condition_finding(snap)
    assert finding is not None
    assert "no source" in finding.title
    assert finding.fact("frame #0 buf") is not None  # the frame's values are still shown
    assert str(finding.fact("condition")).startswith("not available: source of kf_buggy/kf_buggy.c not found")


def test_source_of_another_version_is_said_not_evaluated(tmp_path: Path) -> None:
    if "02-bug-on" not in case_names():
        pytest.skip("the BUG_ON fixture is absent")
    other = tmp_path / "kf_buggy"
    other.mkdir()
    # Another version: two lines added at the top move every line down.
    (other / "kf_buggy.c").write_text("/* v2 */\n/* v2 */\n" + MODULE_SOURCE.read_text())
    _, result = _run("02-bug-on", (tmp_path,))
    site = result.snapshot.bug_site
    assert not isinstance(site, NotAvailable) and not isinstance(site.source, NotAvailable)
    assert site.source.path == str(other / "kf_buggy.c")
    assert site.source.matches_build is False
    assert "not the one the kernel was built from" in str(site.source.mismatch)
    assert site.operands == ()
    finding = next(f for f in result.analysis.findings if f.kind == "bug-condition")
    assert "does not match the build" in finding.title
    assert finding.fact("condition") is None


def test_unreadable_source_is_said(tmp_path: Path) -> None:
    if "02-bug-on" not in case_names():
        pytest.skip("the BUG_ON fixture is absent")
    (tmp_path / "kf_buggy" / "kf_buggy.c").mkdir(parents=True)  # a directory where the file should be
    _, result = _run("02-bug-on", (tmp_path,))
    site = result.snapshot.bug_site
    assert not isinstance(site, NotAvailable)
    # Said either way: as the reason there is no source, or beside the copy found elsewhere (DWARF path).
    said = site.source.reason if isinstance(site.source, NotAvailable) else site.source.found_via
    assert f"cannot read {tmp_path / 'kf_buggy' / 'kf_buggy.c'}: it is a directory" in said


@on_case("07-sysrq-c")
def test_an_address_the_dump_does_not_hold_is_said() -> None:
    from forensics.vmcore.why import identify

    if "07-sysrq-c" not in case_names():
        pytest.skip("the sysrq-c fixture is absent")
    case = load_case("07-sysrq-c")
    prog = open_program(case, modules=True)
    task = prog.crashed_thread().object
    info = identify(prog, int(task.mm.start_stack.value_()), "test")
    assert info.kind == "unknown"
    assert info.missing is not None and "not in dump" in info.missing


def test_source_dir_option_reaches_the_analysis(tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner

    from forensics.cli import app

    if "03-warn-on" not in case_names():
        pytest.skip("the WARN fixture is absent")
    case = load_case("03-warn-on")
    src = tmp_path / "src"
    shutil.copytree(FIXTURES_DIR / "kf_buggy", src / "kf_buggy")
    out = tmp_path / "out.json"
    args = ["vmcore", str(case.directory), "--vmlinux", str(case.vmlinux), "--source-dir", str(src)]
    args += ["--module-debug", str(case.module_debug[0]), "-f", "json", "-o", str(out)]
    run = CliRunner().invoke(app, args)
    assert run.exit_code == 0, run.output
    site = json.loads(out.read_text())["why"]["bug_site"]
    assert site["source"]["path"] == str(src / "kf_buggy" / "kf_buggy.c")
    assert site["source"]["found_via"] == "--source-dir"


@on_case("06-list-corrupt")
def test_a_pointer_into_a_free_slab_object_is_a_use_after_free() -> None:
    """On the real dump: a free object found on a slab's free list is identified as free, then judged."""
    from dataclasses import replace

    from drgn.helpers.linux.slab import (
        for_each_slab_cache,
        slab_cache_for_each_allocated_object,
        slab_cache_usage,
        slab_object_info,
    )

    from detectors.vmcore.slab import freed_object_findings
    from forensics.vmcore.why import identify

    if "06-list-corrupt" not in case_names():
        pytest.skip("the list-corruption fixture is absent")
    case, result = _analyse("06-list-corrupt")
    assert not [f for f in result.analysis.findings if f.kind == "use-after-free"]  # nothing points at one
    prog = open_program(case, modules=True)
    free = None
    for cache in for_each_slab_cache(prog):
        usage = slab_cache_usage(cache)
        if usage.active_objs >= usage.num_objs:
            continue
        size = int(cache.size.value_())
        used = {int(o.value_()) for o in slab_cache_for_each_allocated_object(cache, "char")}
        for start in sorted(used):
            info = slab_object_info(prog, start + size)
            if start + size not in used and info is not None and not info.allocated:
                free = (start + size + 8, cache.name.string_().decode())
                break
        if free:
            break
    assert free is not None, "no cache with a free object next to an allocated one"
    info = identify(prog, free[0], "rdi")
    assert (info.kind, info.cache, info.allocated, info.offset) == ("slab", free[1], False, 8)
    snap = replace(result.snapshot, addresses=(info,))
    [finding] = freed_object_findings(snap)
    assert finding.title == f"use-after-free in kf_session_close: rdi points into a free {free[1]} object"
    assert "FREE" in str(finding.fact("object"))


@on_case("02-bug-on")
def test_report_vmcore_shows_the_same_why(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from forensics.cli import app

    if "02-bug-on" not in case_names():
        pytest.skip("the BUG_ON fixture is absent")
    case = load_case("02-bug-on")
    out = tmp_path / "incident.md"
    args = ["report", "--vmcore", str(case.directory), "--vmlinux", str(case.vmlinux), "-o", str(out)]
    args += ["--module-debug", str(case.module_debug[0]), "--source-dir", str(FIXTURES_DIR)]
    run = CliRunner().invoke(app, args)
    assert run.exit_code in (0, 1), run.output
    text = out.read_text()
    assert "BUG_ON(buf->refcount <= 0): buf->refcount = 0 -> true" in text
    _, result = _analyse("02-bug-on")
    assert result.analysis.hypotheses[0].statement in text


_SUBMIT = """static int kf_msg_submit(u32 type, u32 len)
{
	struct kf_msg *msg;
	int ret;

	msg = kmalloc(sizeof(*msg), GFP_KERNEL);
	ret = kf_msg_validate(msg);
	if (ret) {
		kfree(msg);	/* the first */
		goto out;
	}
out:
	kfree(msg);
	return ret;
}
"""


@pytest.mark.parametrize(
    ("source", "ret", "found"),
    [
        (_SUBMIT, -22, "kfree(msg); at line 9 under ret"),
        (_SUBMIT, 0, None),  # the if was not taken by the frame's value: its kfree did not run
        (_SUBMIT.replace("\tif (ret) {", "\tfor (;;) {"), -22, None),  # a loop: whether it ran is not read
        (_SUBMIT.replace("\tif (ret) {", "\tkfree(msg);\n\tif (ret) {"), -22, None),  # two candidates
        # ret assigned after the if: the frame's -22 may not be what the if read
        (_SUBMIT.replace("\t\tgoto out;\n\t}", "\t\tgoto out;\n\t} else {\n\t\tret = 1;\n\t}"), -22, None),
    ],
    ids=["if-taken", "if-not-taken", "a-loop", "two-frees", "reassigned"],
)
def test_a_double_free_names_its_first_free_only_where_source_and_frame_show_it(
    tmp_path: Path, source: str, ret: int, found: str | None
) -> None:
    """ue7 15e: kf_buggy.c:522's kfree(msg) under `if (ret)` with ret = -22 in kf_msg_submit's frame; nothing where
    the source or the frame do not show which free ran."""
    from forensics.types.vmcore import Frame, FrameValues, ValueRead
    from forensics.vmcore.why import earlier_free

    (tmp_path / "kf.c").write_text(source)
    second = source.splitlines().index("\tkfree(msg);") + 1
    frames = (
        Frame(0, "set_freepointer", 0xFFFFFFFF81000010, 0x10, 0x20, None, "mm/slub.c", 550, interrupted=True),
        Frame(1, "kfree", 0xFFFFFFFF81000100, 0xD0, 0xE9, None, "mm/slub.c", 4837),
        Frame(2, "kf_msg_submit", 0xFFFFFFFFC0000069, 0x69, 0x90, "kf_buggy", "/build/kf.c", second),
    )
    values = (FrameValues(2, "kf_msg_submit", None, (ValueRead("ret", "int", ret, str(ret)),)),)
    got = earlier_free(frames, values, (tmp_path,))
    if found is None:
        assert got is None
        return
    assert got is not None
    assert (got.text, got.line, got.conditions, [o.value for o in got.operands]) == ("kfree(msg);", 9, ("ret",), [ret])
