"""Every version-dependent read, on every fixture kernel, against the kernel's own sources.

``kernel_facts`` in each kernel's MANIFEST.json was derived by vmcore_fixtures/ground_truth.py from
the kernel's headers, sources and .config (and gdb on the built vmlinux for v6.9+ enumerators),
never from a dump; :mod:`forensics.vmcore.layouts` must find the same values in the dump's debug info.
"""

from __future__ import annotations

from typing import Any

import pytest

from forensics.model import NotAvailable
from tests.vmcore_cases import kernels, kernels_of, load_case, manifest, open_program

drgn = pytest.importorskip("drgn")

KERNELS = kernels() or ["<no-vmcore-fixtures>"]


def _facts(kernel: str) -> dict[str, Any]:
    if kernel == "<no-vmcore-fixtures>":
        pytest.skip("no vmcore fixtures committed (vmcore_fixtures/build.sh)")
    found = manifest(kernel)
    if found is None or "kernel_facts" not in found:
        pytest.skip(f"the {kernel} MANIFEST has no kernel_facts (vmcore_fixtures/ground_truth.py --facts-only)")
    return found["kernel_facts"]  # type: ignore[no-any-return]


def _program(kernel: str, name: str) -> Any:
    """The case's program (kernel and module DWARF), shared with the case's other tests (each test is in its group)."""
    return open_program(load_case(name, kernel), modules=True)


@pytest.mark.parametrize("kernel", kernels_of("10-use-after-free"))
def test_slab_flag_bits_are_the_kernels(kernel: str) -> None:
    from forensics.vmcore.layouts import slab_flag

    facts = _facts(kernel)
    prog = _program(kernel, "10-use-after-free")
    for name, value in facts["slab_flags"].items():
        assert slab_flag(prog, name) == value, name


@pytest.mark.parametrize("kernel", kernels_of("10-use-after-free"))
def test_slub_track_order_is_the_kernels(kernel: str) -> None:
    from forensics.vmcore.layouts import track_index

    facts = _facts(kernel)
    prog = _program(kernel, "10-use-after-free")
    assert {"TRACK_ALLOC": track_index(prog, "alloc"), "TRACK_FREE": track_index(prog, "free")} == facts["track_items"]


@pytest.mark.parametrize("kernel", kernels_of("10-use-after-free"))
def test_the_free_track_names_the_freeing_function(kernel: str) -> None:
    """Through the track layout of the kernel: a depot handle (v5.19+) or return addresses in the track."""
    from drgn.helpers.linux.slab import slab_object_info

    from forensics.vmcore.slab import read_tracks

    facts = _facts(kernel)
    case = load_case("10-use-after-free", kernel)
    prog = _program(kernel, case.name)
    why = case.expected["why"]
    assert isinstance(why, dict)
    conn = prog["kf_active_conn"]
    info = slab_object_info(prog, int(conn.value_()))
    tracks, missing = read_tracks(prog, info.slab_cache, int(info.address))
    assert missing is None
    free = next(t for t in tracks if t.kind == "free")
    assert free.missing is None, free.missing
    # track.addr is the caller of kmem_cache_free(); the stack may start above it (the depot skips frames)
    assert why["free_function"] in ((free.caller or "").split("+")[0], *free.functions())
    assert "kf_conn_close_write" in free.functions()
    has_handle = prog.type("struct track").has_member("handle")
    assert has_handle is (facts["track_stack"] == "depot handle")


@pytest.mark.parametrize("kernel", kernels_of("10-use-after-free"))
def test_stack_depot_names_and_a_handle_past_the_last_pool(kernel: str) -> None:
    from forensics.vmcore import layouts

    facts = _facts(kernel)
    prog = _program(kernel, "10-use-after-free")
    if facts["track_stack"] != "depot handle":
        pytest.skip(f"{kernel}'s SLUB tracks hold their stacks themselves (no stack depot)")
    _pools, name = layouts._depot_pools(prog)
    assert name == facts["stack_depot_pools"]
    parts = prog.type("union handle_parts")
    index_field = facts["stack_depot_index_field"]
    assert parts.has_member(index_field)
    # A handle naming a pool past the last one the depot filled: said, never a stack read from elsewhere.
    index = parts.member(index_field)
    count = layouts._depot_pool_count(prog)
    assert count is not None and count >= 1
    handle = (count + 3) << index.bit_offset
    if parts.has_member("valid"):  # gone in v6.9: pool_index_plus_1 keeps a valid handle non-zero
        handle |= 1 << parts.member("valid").bit_offset
    found = layouts.depot_stack(prog, handle)
    assert isinstance(found, NotAvailable)
    assert "no record for handle" in found.reason and "no such pool" in found.reason


@pytest.mark.parametrize("kernel", kernels_of("04-hung-task"))
def test_mutex_owner_of_the_hung_task_case(kernel: str) -> None:
    from forensics.vmcore.layouts import mutex_owner, rwsem_owner

    facts = _facts(kernel)
    case = load_case("04-hung-task", kernel)
    prog = _program(kernel, case.name)
    lock = case.expected["lock"]
    assert isinstance(lock, dict)
    owner = mutex_owner(prog[lock["name"]])
    assert owner is not None and owner.comm.string_().decode() == lock["owner_comm"]
    kind = prog.type("struct mutex").member("owner").type.unaliased_kind()
    assert (kind == drgn.TypeKind.POINTER) is (facts["mutex_owner"] == "pointer")
    # An rw-semaphore nobody holds (its owner word may still name its last reader): free, no owner.
    free = rwsem_owner(prog["uts_sem"])
    assert (free.held, free.task, free.readers) == (False, None, False)


@pytest.mark.parametrize("kernel", kernels_of("14-spin-deadlock"))
def test_qspinlock_layout_is_the_kernels(kernel: str) -> None:
    from forensics.vmcore.layouts import qspinlock_layout

    facts = _facts(kernel)
    layout = qspinlock_layout(_program(kernel, "14-spin-deadlock"))
    assert not isinstance(layout, NotAvailable)
    assert {
        "pending_shift": layout.pending_shift,
        "pending_bits": layout.pending_bits,
        "tail_cpu_shift": layout.tail_cpu_shift,
    } == facts["qspinlock"]


@pytest.mark.parametrize("kernel", kernels_of("09-oom"))
def test_vmalloc_areas_are_found_on_the_kernels_lists(kernel: str) -> None:
    from forensics.vmcore.dumpfile import read_dump_header
    from forensics.vmcore.gaps import DumpPages, explaining, walk
    from forensics.vmcore.layouts import vmap_areas

    facts = _facts(kernel)
    case = load_case("09-oom", kernel)
    prog = _program(kernel, case.name)
    with pytest.raises(KeyError):
        prog["vmap_area_list" if facts["vmalloc_areas"] == "vmap_nodes" else "vmap_nodes"]
    notes: list[str] = []
    with explaining(prog, DumpPages(case.vmcore, read_dump_header(case.vmcore))):
        areas = list(walk(vmap_areas(prog), "the vmalloc areas", notes))
    # All of them, or as many as the dump holds and a note on the page that ends the walk (6.12's
    # vmap_area slab pages that makedumpfile 1.7.2 drops).
    assert areas
    if notes:
        [note] = notes
        assert "the walk stopped after" in note and "slab page of cache vmap_area" in note
    else:
        assert len(areas) > 10


@pytest.mark.parametrize("kernel", kernels_of("13-list-overflow"))
def test_the_kernels_list_checkers_are_known_checkers(kernel: str) -> None:
    from detectors.vmcore.findings import CORRUPTION_CHECKERS

    facts = _facts(kernel)
    prog = _program(kernel, "13-list-overflow")
    known = {name for name, _what in CORRUPTION_CHECKERS}
    assert facts["list_checkers"]
    for name in facts["list_checkers"]:
        assert name in known
        assert prog.symbol(name).name == name


@pytest.mark.parametrize("kernel", kernels_of("10-use-after-free"))
def test_a_slab_pages_kind_is_read_from_its_struct_page(kernel: str) -> None:
    """struct slab (v5.17) or page->slab_cache; PG_slab or the slab page type (v6.10)."""
    from drgn.helpers.linux.mm import virt_to_pfn

    from forensics.vmcore.gaps import page_kind

    facts = _facts(kernel)
    prog = _program(kernel, "10-use-after-free")
    assert prog.type("struct slab").has_member("slab_cache") if facts["struct_slab"] else True
    pfn = int(virt_to_pfn(prog, prog["kf_active_conn"]).value_())
    assert page_kind(prog, pfn).startswith("a slab page of cache kf_conn")
