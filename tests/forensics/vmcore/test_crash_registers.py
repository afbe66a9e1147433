"""The crashed CPU's backtrace when the dump lacks the crashed task's task_struct.

On a stock 6.12 dump made by bookworm's makedumpfile 1.7.2 at level 31, the WARN case lost the
crashed task's task_struct (a slab page with an odd ``page->mapping`` word) and with it every frame.
The registers the kernel saved at the crash (``crash_notes``) are per-CPU memory, which the dump
keeps: unwound from them, the backtrace is the one drgn unwinds from the dump's own prstatus note.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from forensics.model import NotAvailable
from tests.vmcore_cases import case_names, kernels, kernels_of, load_case, open_program, without_pages

drgn = pytest.importorskip("drgn")

KERNELS = kernels() or ["<no-vmcore-fixtures>"]


@pytest.mark.parametrize("kernel", kernels_of("02-bug-on"))
def test_the_backtrace_is_unwound_from_the_saved_registers_without_the_task(kernel: str, tmp_path: Path) -> None:
    from drgn.helpers.linux.mm import virt_to_pfn

    from forensics.vmcore import layouts
    from forensics.vmcore.collect import _trace_without_task

    if "02-bug-on" not in case_names(kernel):
        pytest.skip(f"the 02-bug-on fixture is absent on {kernel} (vmcore_fixtures/build.sh)")
    case = load_case("02-bug-on", kernel)
    prog = open_program(case, modules=True)
    thread = prog.crashed_thread()
    expected = [frame.pc for frame in thread.stack_trace()]
    cpu = layouts.panic_cpu(prog)
    assert cpu == case.expected["cpu"]  # the shell is pinned to CPU 1
    task = int(thread.object.value_())
    size = prog.type("struct task_struct").size
    pfns = {int(virt_to_pfn(prog, a)) for a in (*range(task, task + size, 4096), task + size - 1)}

    without_pages(case.vmcore, pfns, tmp_path / "vmcore")
    filtered = drgn.Program()
    filtered.set_core_dump(str(tmp_path / "vmcore"))
    filtered.load_debug_info([str(case.vmlinux), *map(str, case.module_debug)], default=False)
    with pytest.raises(drgn.FaultError):
        filtered.crashed_thread().object.comm.string_()
    warnings: list[str] = []
    trace, found_cpu, _pid = _trace_without_task(filtered, "the crashed task: not in dump", warnings)
    assert trace is not None, warnings
    assert found_cpu == cpu
    assert [frame.pc for frame in trace] == expected  # the same frames drgn unwinds from the prstatus note
    assert not isinstance(layouts.crash_registers(filtered, cpu), NotAvailable)
    assert "unwound from the registers CPU" in warnings[-1]
