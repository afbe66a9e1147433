"""A module whose section table the dump lacks is placed by its own symbols (forensics/vmcore/modplace.py).

On a stock 6.12 dump (bookworm's makedumpfile 1.7.2, level 31) kf_buggy's ``struct module.sect_attrs``
(kmalloc'd) was filtered out: drgn listed no module, ``--module-debug kf_buggy.ko`` was never used and
the hung-task case lost its lock.  The copy here lacks that page as makedumpfile leaves it out.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.vmcore_cases import case_names, kernels, kernels_of, load_case, open_program, without_pages

drgn = pytest.importorskip("drgn")

KERNELS = kernels() or ["<no-vmcore-fixtures>"]


@pytest.mark.parametrize("kernel", kernels_of("04-hung-task"))
def test_a_module_without_its_section_table_is_placed_by_its_symbols(kernel: str, tmp_path: Path) -> None:
    from drgn.helpers.linux.mm import virt_to_pfn
    from drgn.helpers.linux.module import find_module

    from forensics.vmcore.dumpfile import read_dump_header
    from forensics.vmcore.program import DebugInfoRequest, open_dump

    if "04-hung-task" not in case_names(kernel):
        pytest.skip(f"the 04-hung-task fixture is absent on {kernel} (vmcore_fixtures/build.sh)")
    case = load_case("04-hung-task", kernel)
    prog = open_program(case, modules=True)
    [placed] = [m for m in prog.modules() if m.name == "kf_buggy"]
    sections = dict(placed.section_addresses)
    lock = prog["kf_dev_lock"]
    table = int(find_module(prog, "kf_buggy").sect_attrs.value_())

    filtered = tmp_path / "vmcore"
    without_pages(case.vmcore, {int(virt_to_pfn(prog, table))}, filtered)
    request = DebugInfoRequest(case.vmlinux, (), case.module_debug)
    opened = open_dump(filtered, read_dump_header(filtered), request)
    [module] = [m for m in opened.prog.modules() if m.name == "kf_buggy"]
    # every section placed by the symbols is where drgn put it from the section table of the whole dump
    assert module.section_addresses and all(sections[s] == a for s, a in module.section_addresses.items())
    assert {".text", ".data"} <= set(module.section_addresses)
    assert opened.prog["kf_dev_lock"].address_ == lock.address_  # the module's globals have their types
    assert opened.prog["kf_dev_lock"].type_.type_name() == "struct mutex"
    [said] = [w for w in opened.warnings if w.startswith("module kf_buggy: ")]
    assert "was placed by its symbols" in said
    assert not [w for w in opened.warnings if "was not used" in w]
