"""The committed vmcore fixtures are what the MANIFEST and expected.json say they are, on every kernel.

Every vmcore is opened with drgn (vmlinux + kf_buggy.ko DWARF) and the crashed
thread, its top frames and the panic message are checked against the ground
truth that vmcore_fixtures/ground_truth.py derived from the sources.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.vmcore_cases import (
    MANIFEST,
    SYSROOTS_DIR,
    VmcoreCase,
    case_names,
    console_logs,
    kernels,
    kernels_of,
    load_case,
    open_program,
    payload_dir,
    sysroot_dir,
)

if TYPE_CHECKING:
    import drgn

FRAME_DEPTH = 25
KERNELS = kernels() or ["<no-vmcore-fixtures>"]
#: The payload of all fixture kernels together stays within this (compressed vmlinux, level-31 dumps).
PAYLOAD_LIMIT = 200 * 1000 * 1000


def _program(name: str, kernel: str) -> drgn.Program:
    """The dump with the kernel's and kf_buggy.ko's DWARF, shared read only with the case's other tests."""
    pytest.importorskip("drgn")
    return open_program(load_case(name, kernel), modules=True)  # type: ignore[no-any-return]


def _frame_names(trace: drgn.StackTrace, depth: int = FRAME_DEPTH) -> list[str]:
    return [frame.name or "?" for frame in list(trace)[:depth]]


def _comm(task: drgn.Object) -> str:
    return task.comm.string_().decode()


def _tasks_by_comm(prog: drgn.Program, comm: str) -> list[drgn.Object]:
    """The tasks named ``comm`` among those the dump holds (6.12's may lack a few task_struct pages)."""
    import drgn

    from forensics.vmcore.system import pids_and_tasks

    found = []
    for _pid, task in pids_and_tasks(prog, []):
        try:
            if _comm(task) == comm:
                found.append(task)
        except drgn.FaultError:
            continue
    return found


def _manifest(kernel: str) -> dict[str, Any]:
    path = payload_dir(kernel) / "MANIFEST.json"
    if kernel == "<no-vmcore-fixtures>" or not path.is_file():
        pytest.skip(f"{MANIFEST} is absent: no vmcore fixtures (run vmcore_fixtures/build.sh)")
    return json.loads(path.read_text())  # type: ignore[no-any-return]


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@pytest.mark.parametrize("kernel", KERNELS)
def test_manifest_describes_exactly_the_committed_payload(kernel: str) -> None:
    manifest = _manifest(kernel)
    payload = payload_dir(kernel)
    xz = payload / "vmlinux.xz"
    if not xz.is_file() or xz.stat().st_size < 1 << 20:
        pytest.skip(f"{xz} is absent or a pointer file: vmcore fixture payload not fetched")
    listed = {entry["path"]: entry for entry in manifest["files"]}
    present = {"vmlinux.xz", "kf_buggy.ko"} | {
        str(p.relative_to(payload)) for top in ("cases", "sysroots") for p in (payload / top).rglob("*") if p.is_file()
    }
    assert set(listed) == present
    for rel, entry in sorted(listed.items()):
        path = payload / rel
        assert path.stat().st_size == entry["size"], rel
        assert _sha256(path) == entry["sha256"], rel
    assert sorted(manifest["cases"]) == sorted(p.name for p in (payload / "cases").iterdir())
    assert manifest.get("kernel", "6.1") == kernel
    assert str(manifest["kernel_release"]).startswith(f"{kernel}.")


def test_the_payload_of_all_kernels_fits_the_limit() -> None:
    sizes = {kernel: sum(int(e["size"]) for e in _manifest(kernel)["files"]) for kernel in KERNELS}
    total = sum(sizes.values())
    assert total <= PAYLOAD_LIMIT, f"payload is {total / 1e6:.1f} MB: " + ", ".join(
        f"{k} {v / 1e6:.1f} MB" for k, v in sizes.items()
    )


@pytest.mark.parametrize("kernel", KERNELS)
def test_every_case_has_its_files(kernel: str) -> None:
    names = case_names(kernel)
    if not names:
        pytest.skip(f"{MANIFEST} is absent: no vmcore fixtures")
    assert len(names) >= 9
    for name in names:
        directory = payload_dir(kernel) / "cases" / name
        for required in ("vmcore", "dmesg.txt", "console.log", "expected.json"):
            assert (directory / required).is_file(), f"{name}/{required}"
    assert len(console_logs(kernel)) == len(names)


def test_crashed_thread_matches_expected(vmcore_case: VmcoreCase) -> None:
    expected = vmcore_case.expected
    prog = _program(vmcore_case.name, vmcore_case.kernel)
    thread = prog.crashed_thread()
    assert _comm(thread.object) == expected["task_comm"]
    if expected["cpu"] is not None:
        from drgn.helpers.linux.sched import task_cpu

        assert task_cpu(thread.object) == expected["cpu"]
    names = _frame_names(thread.stack_trace())
    if "stack_top" in expected:
        assert names[0] == expected["stack_top"], names
    for function in expected["stack_functions"]:  # type: ignore[union-attr]
        assert function in names, f"{function} not in the top {FRAME_DEPTH} frames: {names}"
    assert expected["crashing_function"] in names


def test_panic_message_in_dmesg_and_console(vmcore_case: VmcoreCase) -> None:
    expected = vmcore_case.expected
    dmesg = vmcore_case.dmesg.read_text(errors="replace")
    console = vmcore_case.console_log.read_text(errors="replace")
    assert expected["panic_message"] in dmesg
    assert expected["panic_message"] in console
    for line in expected["log_key_lines"]:  # type: ignore[union-attr]
        assert line in console, line
        assert line in dmesg, line


def test_console_log_is_whole_kdump_run(vmcore_case: VmcoreCase) -> None:
    """The serial log covers the crashing kernel, kexec and the capture kernel."""
    console = vmcore_case.console_log.read_text(errors="replace")
    assert console.count(f"Linux version {vmcore_case.expected['kernel_release']} ") == 2
    assert "kf-init: capture kernel: saving /proc/vmcore" in console
    assert "kf-init: capture done" in console


@pytest.mark.parametrize("kernel", kernels_of("01-null-member"))
def test_null_member_fault(kernel: str) -> None:
    if "01-null-member" not in case_names(kernel):
        pytest.skip(f"case 01-null-member is not in the {kernel} MANIFEST")
    expected = load_case("01-null-member", kernel).expected
    prog = _program("01-null-member", kernel)
    frame = prog.crashed_thread().stack_trace()[0]
    assert frame.register(str(expected["null_register"])) == 0
    symbol = prog.symbol(frame.pc)
    assert symbol.name == expected["crashing_function"]
    assert frame.pc - symbol.address == expected["faulting_function_offset"]
    assert prog.type(str(expected["struct_type"])).member(str(expected["member"])).offset == expected["member_offset"]
    assert expected["fault_address"] == expected["member_offset"] != 0
    assert frame.source()[1] == expected["source_line"]


@pytest.mark.parametrize("kernel", kernels_of("04-hung-task"))
def test_hung_task_lock_owner_and_waiter(kernel: str) -> None:
    if "04-hung-task" not in case_names(kernel):
        pytest.skip(f"case 04-hung-task is not in the {kernel} MANIFEST")
    lock: dict[str, Any] = load_case("04-hung-task", kernel).expected["lock"]  # type: ignore[assignment]
    prog = _program("04-hung-task", kernel)
    from drgn import Object
    from drgn.helpers.linux.list import list_for_each_entry
    from drgn.helpers.linux.sched import task_state_to_char

    mutex = prog[lock["name"]]
    owner = Object(prog, "struct task_struct *", value=mutex.owner.counter.value_() & ~0x7)
    assert _comm(owner) == lock["owner_comm"]
    assert task_state_to_char(owner) == lock["owner_state"]
    (waiter,) = _tasks_by_comm(prog, lock["waiter_comm"])
    assert task_state_to_char(waiter) == lock["waiter_state"]
    names = _frame_names(prog.stack_trace(waiter))
    for function in lock["waiter_stack_functions"]:
        assert function in names, names
    assert lock["owner_function"] in _frame_names(prog.stack_trace(owner))
    queued = [w.task for w in list_for_each_entry("struct mutex_waiter", mutex.wait_list.address_of_(), "list")]
    assert [t.value_() for t in queued] == [waiter.value_()]


@pytest.mark.parametrize("kernel", kernels_of("08-slab-leak"))
def test_slab_leak_cache_and_snapshots(kernel: str) -> None:
    if "08-slab-leak" not in case_names(kernel):
        pytest.skip(f"case 08-slab-leak is not in the {kernel} MANIFEST")
    case = load_case("08-slab-leak", kernel)
    leak: dict[str, Any] = case.expected["leak"]  # type: ignore[assignment]
    prog = _program("08-slab-leak", kernel)
    from drgn.helpers.linux.slab import find_slab_cache, slab_cache_for_each_allocated_object

    cache_obj = find_slab_cache(prog, leak["cache"])
    assert cache_obj is not None
    assert cache_obj.object_size.value_() == leak["object_size"]
    leaked = prog[leak["counter_symbol"]].value_()
    objects = list(slab_cache_for_each_allocated_object(cache_obj, leak["struct_type"]))
    assert len(objects) == leaked > 0
    assert {obj.magic.value_() for obj in objects} == {int(leak["magic"], 16)}
    samples = sorted((case.directory / "snapshots").glob("sample-*.txt"))
    assert len(samples) == leak["samples"]
    active = []
    for sample in samples:
        for line in sample.read_text().splitlines():
            if line.startswith(leak["cache"] + " "):
                active.append(int(line.split()[1]))
    assert len(active) == len(samples)
    assert active == sorted(active) and active[-1] > active[0]


def test_sysroots() -> None:
    loaded = sysroot_dir("crash-loaded")
    plain = sysroot_dir("no-crashkernel")
    assert (loaded / "sys/kernel/kexec_crash_loaded").read_text().strip() == "1"
    assert int((loaded / "sys/kernel/kexec_crash_size").read_text()) > 0
    assert "crashkernel=" in (loaded / "proc/cmdline").read_text()
    assert "Crash kernel" in (loaded / "proc/iomem").read_text()
    assert (plain / "sys/kernel/kexec_crash_loaded").read_text().strip() == "0"
    assert int((plain / "sys/kernel/kexec_crash_size").read_text()) == 0
    assert "crashkernel=" not in (plain / "proc/cmdline").read_text()
    assert SYSROOTS_DIR.is_dir()
