"""Tests of collectors.procfs on fake trees written here and on this machine's real /proc.

``FakeTree`` (used by the other slab-watch tests too) writes a /proc and /sys
tree in the kernel's own formats (mm/slab_common.c, fs/proc/meminfo.c).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors import procfs
from collectors.procfs import SlabCache, SlabStatistics
from forensics.errors import InputError
from forensics.model import NotAvailable

SLAB_HEADER = (
    "# name            <active_objs> <num_objs> <objsize> <objperslab> <pagesperslab>"
    " : tunables <limit> <batchcount> <sharedfactor> : slabdata <active_slabs> <num_slabs> <sharedavail>"
)
STATS_HEADER = (
    " : globalstat <listallocs> <maxobjs> <grown> <reaped> <error> <maxfreeable> <nodeallocs> <remotefrees>"
    " <alienoverflow> : cpustat <allochit> <allocmiss> <freehit> <freemiss>"
)


def slab_line(c: SlabCache) -> str:
    """One cache as mm/slab_common.c cache_show() prints it (plus mm/slab.c statistics)."""
    line = (
        f"{c.name:<17} {c.active_objs:6} {c.num_objs:6} {c.objsize:6} {c.objperslab:4} {c.pagesperslab:4}"
        f" : tunables {c.limit:4} {c.batchcount:4} {c.sharedfactor:4}"
        f" : slabdata {c.active_slabs:6} {c.num_slabs:6} {c.sharedavail:6}"
    )
    if c.statistics is not None:
        s = c.statistics
        line += (
            f" : globalstat {s.listallocs:7} {s.maxobjs:6} {s.grown:5} {s.reaped:4} {s.error:4} {s.maxfreeable:4}"
            f" {s.nodeallocs:4} {s.remotefrees:4} {s.alienoverflow:4}"
            f" : cpustat {s.allochit:6} {s.allocmiss:6} {s.freehit:6} {s.freemiss:6}"
        )
    return line


def slabinfo_text(caches: list[SlabCache], statistics: bool = False) -> str:
    """A whole /proc/slabinfo."""
    head = "slabinfo - version: 2.1 (statistics)" if statistics else "slabinfo - version: 2.1"
    columns = SLAB_HEADER + (STATS_HEADER if statistics else "")
    return "\n".join([head, columns, *(slab_line(c) for c in caches)]) + "\n"


def cache(name: str, active: int, objsize: int = 64, per_slab: int = 64) -> SlabCache:
    """A SLUB cache with ``active`` objects in use (slabs rounded up)."""
    slabs = -(-active // per_slab)
    return SlabCache(name, active, slabs * per_slab, objsize, per_slab, 1, 0, 0, 0, slabs, slabs, 0)


MEMINFO = """MemTotal:        8048036 kB
MemFree:         1204544 kB
Active(anon):     100000 kB
Slab:             {slab} kB
SReclaimable:      90000 kB
SUnreclaim:        {unreclaim} kB
HugePages_Total:       0
"""

VMSTAT = """nr_free_pages 301136
nr_slab_reclaimable 22500
nr_slab_unreclaimable {unreclaim_pages}
nr_kernel_stack 9120
nr_page_table_pages 2100
pgfault 1234567
drop_pagecache 0
drop_slab 0
oom_kill 0
"""


class FakeTree:
    """A fake /proc + /sys tree below ``root`` that tests change between samples."""

    def __init__(self, root: Path, boot_id: str = "11111111-2222-3333-4444-555555555555") -> None:
        self.root = root
        self.caches: dict[str, SlabCache] = {}
        self.statistics = False
        for rel, text in (
            ("proc/sys/kernel/hostname", "fakehost\n"),
            ("proc/sys/kernel/osrelease", "6.1.0-fake\n"),
            ("proc/sys/kernel/random/boot_id", boot_id + "\n"),
            ("proc/sys/fs/dentry-state", "155084\t153749\t45\t0\t12737\t0\n"),
            ("proc/sys/fs/inode-nr", "142382\t0\n"),
            ("proc/sys/fs/file-nr", "434\t0\t2466177\n"),
            ("proc/uptime", "100.00 180.00\n"),
            ("dev/kmsg", ""),
        ):
            self.write(rel, text)
        self.set_caches([cache("kmalloc-64", 6400), cache("dentry", 1000, 192, 21), cache("task_struct", 100, 4096, 7)])
        slab = root / "sys/kernel/slab"
        (slab / ":0000064").mkdir(parents=True)
        (slab / ":0000064/reclaim_account").write_text("0\n")
        (slab / "dentry").mkdir()
        (slab / "dentry/reclaim_account").write_text("1\n")
        os.symlink(":0000064", slab / "kmalloc-64")
        os.symlink(":0000064", slab / "kmalloc-cg-64")

    def write(self, rel: str, text: str | bytes) -> None:
        """Write a file of the tree."""
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode() if isinstance(text, str) else text)

    def set_caches(self, caches: list[SlabCache]) -> None:
        """Replace the slab caches (and the meminfo/vmstat totals that follow them)."""
        self.caches = {c.name: c for c in caches}
        self.write("proc/slabinfo", slabinfo_text(caches, self.statistics))
        unreclaim_kb = sum(c.total_bytes(4096) for c in caches) // 1024
        self.write("proc/meminfo", MEMINFO.format(slab=unreclaim_kb + 90000, unreclaim=unreclaim_kb))
        self.write("proc/vmstat", VMSTAT.format(unreclaim_pages=unreclaim_kb // 4))

    def grow(self, name: str, by: int) -> None:
        """Allocate ``by`` more objects in a cache."""
        c = self.caches[name]
        self.set_caches(
            [
                *(x for x in self.caches.values() if x.name != name),
                cache(name, c.active_objs + by, c.objsize, c.objperslab),
            ]
        )

    def reboot(self, boot_id: str) -> None:
        """A new boot: new boot id, uptime from 0, an empty kernel log."""
        self.write("proc/sys/kernel/random/boot_id", boot_id + "\n")
        self.write("proc/uptime", "5.00 9.00\n")
        self.write("dev/kmsg", "")

    def log(self, *records: str) -> None:
        """Append records (``PRIO,SEQ,USEC,FLAGS;text`` lines) to the fake kernel log."""
        with open(self.root / "dev/kmsg", "a") as out:
            out.write("".join(r + "\n" for r in records))


# ---------------------------------------------------------------- slabinfo


def test_slabinfo_round_trip_of_every_column() -> None:
    caches = [cache("kmalloc-64", 6400), SlabCache("ext4_inode_cache", 9, 28, 1176, 27, 8, 0, 0, 0, 1, 1, 0)]
    parsed = procfs.parse_slabinfo(slabinfo_text(caches).encode(), "slabinfo")
    assert parsed.version == "2.1"
    assert not parsed.statistics
    assert list(parsed.caches) == caches
    assert parsed.skipped == ()
    assert parsed.cache("ext4_inode_cache") == caches[1]


def test_slabinfo_statistics_variant() -> None:
    stats = SlabStatistics(5000, 700, 12, 3, 0, 40, 2, 1, 0, 4800, 200, 4700, 100)
    slab = SlabCache("size-64", 640, 700, 64, 59, 1, 120, 60, 8, 11, 12, 30, stats)
    text = slabinfo_text([slab], statistics=True)
    assert text.startswith("slabinfo - version: 2.1 (statistics)\n")
    parsed = procfs.parse_slabinfo(text.encode(), "slabinfo")
    assert parsed.statistics
    assert parsed.caches == (slab,)
    assert parsed.caches[0].statistics is not None
    assert parsed.caches[0].statistics.allocmiss == 200


def test_truncated_slabinfo_keeps_complete_lines() -> None:
    text = slabinfo_text([cache("a", 10), cache("b", 20), cache("c", 30)])
    cut = text[: text.index("slabdata", text.index("\nc ")) + 12]  # the last line stops inside its numbers
    parsed = procfs.parse_slabinfo(cut.encode(), "slabinfo")
    assert [c.name for c in parsed.caches] == ["a", "b"]
    assert len(parsed.skipped) == 1
    assert "truncated" in parsed.skipped[0]


def test_malformed_line_is_skipped_and_named() -> None:
    text = slabinfo_text([cache("a", 10)]) + "garbage line : tunables\n"
    parsed = procfs.parse_slabinfo(text.encode(), "slabinfo")
    assert [c.name for c in parsed.caches] == ["a"]
    assert parsed.skipped and "line 4" in parsed.skipped[0]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty slabinfo"),
        (b"\n", "empty slabinfo"),
        (b"MemTotal: 1 kB\n", "not a /proc/slabinfo"),
        (b"slabinfo - version: 1.1\n", "version 1.1 is not supported"),
    ],
)
def test_bad_slabinfo_raises_input_error(data: bytes, message: str) -> None:
    with pytest.raises(InputError, match=message):
        procfs.parse_slabinfo(data, "copy/slabinfo")


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=400))
def test_slabinfo_parser_fuzz_only_raises_input_error(data: bytes) -> None:
    for prefix in (b"", b"slabinfo - version: 2.1\n"):
        try:
            parsed = procfs.parse_slabinfo(prefix + data, "fuzz")
        except InputError:
            continue
        assert all(isinstance(c.active_objs, int) for c in parsed.caches)


def test_real_slabinfo_of_this_machine() -> None:
    read = procfs.read_file(Path("/"), procfs.SLABINFO)
    if read.data is None:
        pytest.skip(f"/proc/slabinfo is not readable here ({read.record.error}): needs root")
    parsed = procfs.parse_slabinfo(read.data, "/proc/slabinfo")
    assert len(parsed.caches) > 20
    assert parsed.skipped == ()
    assert read.record.sha256 != "" and read.record.size == len(read.data)
    assert any(c.name == "dentry" for c in parsed.caches)


# ---------------------------------------------------------------- meminfo, vmstat, fs


def test_real_meminfo_and_vmstat() -> None:
    mem = procfs.parse_meminfo(Path("/proc/meminfo").read_bytes(), "/proc/meminfo")
    total = mem.get("MemTotal")
    assert not isinstance(total, NotAvailable)
    assert total.unit == "kB" and total.in_bytes() == total.value * 1024 > 0
    assert isinstance(mem.get("NoSuchField"), NotAvailable)
    vm = procfs.parse_vmstat(Path("/proc/vmstat").read_bytes(), "/proc/vmstat")
    names = {c.name for c in vm.counters}
    assert {"nr_slab_unreclaimable", "nr_kernel_stack", "nr_page_table_pages"} <= names
    assert all(procfs.vmstat_is_recorded(n) for n in names)
    everything = procfs.parse_vmstat(Path("/proc/vmstat").read_bytes(), "/proc/vmstat", keep_all=True)
    assert len(everything.counters) > len(vm.counters)


def test_meminfo_units_and_plain_counts() -> None:
    mem = procfs.parse_meminfo(MEMINFO.format(slab=5, unreclaim=3).encode(), "meminfo")
    assert mem.get("Active(anon)") == procfs.Counter("Active(anon)", 100000, "kB")
    huge = mem.get("HugePages_Total")
    assert not isinstance(huge, NotAvailable) and huge.unit == "" and huge.in_bytes() is None
    with pytest.raises(InputError, match="no meminfo counters"):
        procfs.parse_meminfo(b"", "meminfo")


def test_fs_counters_real_and_missing() -> None:
    real, records = procfs.read_fs_counters(Path("/"))
    assert isinstance(real.nr_dentry, int) and real.nr_dentry > 0
    assert isinstance(real.max_files, int) and real.max_files > 0
    assert len(records) == 3
    partial = procfs.parse_fs_counters(b"1 2 3 4 5 6\n", None, b"7 0 9\n")
    assert partial.nr_negative_dentry == 5
    assert isinstance(partial.nr_inodes, NotAvailable)
    assert partial.nr_open_files == 7 and partial.max_files == 9
    assert {c.name for c in partial.as_counters()} == {
        "nr_dentry",
        "nr_unused_dentry",
        "nr_negative_dentry",
        "nr_open_files",
        "max_files",
    }


def test_missing_file_gives_record_with_error(tmp_path: Path) -> None:
    read = procfs.read_file(tmp_path, procfs.SLABINFO)
    assert read.data is None
    assert read.record.error == "No such file or directory"
    assert isinstance(read.record.size, NotAvailable)


# ---------------------------------------------------------------- /sys/kernel/slab and identity


def test_fake_topology_aliases_and_reclaim(tmp_path: Path) -> None:
    tree = FakeTree(tmp_path)
    topo = procfs.read_slab_topology(tree.root)
    assert set(topo.aliases) == {
        procfs.SlabAlias("kmalloc-64", ":0000064"),
        procfs.SlabAlias("kmalloc-cg-64", ":0000064"),
    }
    assert topo.merged_names(":0000064") == ("kmalloc-64", "kmalloc-cg-64")
    assert dict(topo.attributes) == {":0000064": False, "dentry": True}
    assert topo.error is None


def test_topology_of_a_slab_kernel_without_sysfs(tmp_path: Path) -> None:
    topo = procfs.read_slab_topology(tmp_path)
    assert topo.aliases == () and topo.error is not None and "sys/kernel/slab" in topo.error


def test_real_topology_and_identity() -> None:
    if not Path("/sys/kernel/slab").is_dir():
        pytest.skip("this kernel has no /sys/kernel/slab (SLAB allocator or sysfs not mounted)")
    topo = procfs.read_slab_topology(Path("/"))
    assert topo.attributes, "a SLUB kernel lists its caches"
    assert all(isinstance(a.reclaim_account, bool) for a in topo.attributes)
    mem = procfs.parse_meminfo(Path("/proc/meminfo").read_bytes(), "/proc/meminfo")
    ident = procfs.read_identity(Path("/"), mem)
    assert ident.kernel_release == os.uname().release
    assert ident.page_size == os.sysconf("SC_PAGE_SIZE")
    assert isinstance(ident.boot_id, str) and len(ident.boot_id) == 36
    assert isinstance(ident.mem_total_bytes, int) and ident.mem_total_bytes > 0


def test_fake_identity(tmp_path: Path) -> None:
    tree = FakeTree(tmp_path)
    ident = procfs.read_identity(tree.root, NotAvailable("not read"))
    assert ident.hostname == "fakehost"
    assert ident.kernel_release == "6.1.0-fake"
    assert isinstance(ident.page_size, NotAvailable)
    assert isinstance(ident.mem_total_bytes, NotAvailable)
    assert procfs.parse_uptime(b"12.5 3.0\n") == 12.5
    assert isinstance(procfs.parse_uptime(b""), NotAvailable)
