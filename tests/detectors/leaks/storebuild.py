"""Real slab-watch stores written by the tests: slabinfo and meminfo text of a scripted machine.

The text goes through the same parsers and store code as ``slab-watch``, so
the evidence the leak detectors cite must resolve against the stored rows.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from collectors.procfs import CacheAttributes, HostIdentity, SlabAlias, SlabTopology, parse_meminfo, parse_slabinfo
from collectors.slabstore import RunInfo, Sample, SlabStore
from forensics.model import NotAvailable
from tests.helpers import cli_in_process

START = 1_780_000_000.0
HEADER = (
    "slabinfo - version: 2.1\n"
    "# name            <active_objs> <num_objs> <objsize> <objperslab> <pagesperslab>"
    " : tunables <limit> <batchcount> <sharedfactor> : slabdata <active_slabs> <num_slabs> <sharedavail>\n"
)
MEM_TOTAL_KB = 8 * 1024 * 1024


@dataclass(frozen=True)
class Cache:
    """A scripted cache: objects at sample i (and hour h) given by ``objects``."""

    name: str
    objsize: int
    objects: Callable[[int, float], int]


def slab_line(name: str, active: int, num: int, objsize: int) -> str:
    """A slabinfo line as the kernel prints it."""
    per_slab = max(1, 4096 // objsize)
    slabs = -(-num // per_slab)
    return (
        f"{name:<17} {active:6} {num:6} {objsize:6} {per_slab:4} {1:4} : tunables {0:4} {0:4} {0:4}"
        f" : slabdata {slabs:6} {slabs:6} {0:6}"
    )


def meminfo_text(free_kb: int, sunreclaim_kb: int, extra: dict[str, int] | None = None) -> str:
    """A /proc/meminfo with the fields the leak detectors read."""
    fields = {
        "MemTotal": MEM_TOTAL_KB,
        "MemFree": free_kb,
        "MemAvailable": free_kb + 1_000_000,
        "Active": 1_500_000,
        "Inactive": 1_000_000,
        "Unevictable": 0,
        "Slab": sunreclaim_kb + 200_000,
        "SReclaimable": 200_000,
        "SUnreclaim": sunreclaim_kb,
        "KReclaimable": 200_000,
        "KernelStack": 12_000,
        "PageTables": 30_000,
        "SecPageTables": 0,
        "Percpu": 4_000,
        "VmallocUsed": 20_000,
        "Hugetlb": 0,
        **(extra or {}),
    }
    return "".join(f"{name + ':':<16}{value:8} kB\n" for name, value in fields.items())


def write_store(
    path: Path,
    caches: list[Cache],
    samples: int,
    interval: float,
    meminfo: Callable[[int, float], str] | None = None,
    reclaim: dict[str, bool] | None = None,
    aliases: dict[str, str] | None = None,
    boot_id: Callable[[int], str] = lambda i: "boot-1",
    late: Callable[[int], float] = lambda i: 0.0,
) -> int:
    """Write a run of ``samples`` samples every ``interval`` seconds; return its run id.

    ``late(i)``: seconds sample ``i`` is taken after its slot (a stopped sampler: every sample after a hole)."""
    topology = SlabTopology(
        tuple(SlabAlias(n, t) for n, t in (aliases or {}).items()),
        tuple(CacheAttributes(n, r) for n, r in (reclaim or {}).items()),
    )
    identity = HostIdentity("testhost", "6.1.0-test", boot_id(0), 4096, MEM_TOTAL_KB * 1024)
    with SlabStore.open_for_writing(path, "testhost") as store:
        run_id = store.begin_run(RunInfo("live", identity, topology, interval, "/"))
        for i in range(samples):
            hours = i * interval / 3600.0
            lines = []
            for c in caches:
                num = c.objects(i, hours)
                lines.append(slab_line(c.name, max(num - 3, 0), num, c.objsize))
            slab_text = HEADER + "\n".join(lines) + "\n"
            mem = meminfo(i, hours) if meminfo else meminfo_text(4_000_000, 100_000)
            store.append_sample(
                run_id,
                Sample(
                    wall=START + i * interval + late(i),
                    uptime=1000.0 + i * interval + late(i),
                    boot_id=boot_id(i),
                    slabinfo=parse_slabinfo(slab_text.encode(), "slabinfo"),
                    meminfo=parse_meminfo(mem.encode(), "meminfo"),
                    vmstat=NotAvailable("not scripted"),
                    fs=NotAvailable("not scripted"),
                    kmsg=NotAvailable("not scripted"),
                ),
            )
        store.end_run(run_id)
    return run_id


def udp_leak_store(
    path: Path,
    samples: int = 121,
    interval: float = 60.0,
    sockets_per_hour: int = 3000,
    late: Callable[[int], float] = lambda i: 0.0,
) -> int:
    """Two hours of a machine where a process leaks UDP sockets, beside stable and reclaimable caches (``late``: as
    :func:`write_store`'s)."""

    def sockets(base: int) -> Callable[[int, float], int]:
        return lambda i, h: base + int(sockets_per_hour * h)

    caches = [
        Cache("sock_inode_cache", 832, sockets(200)),
        Cache("UDP", 1344, sockets(40)),
        Cache("dentry", 192, sockets(150_000)),
        Cache("filp", 256, sockets(2_000)),
        Cache("kmalloc-64", 64, sockets(10_000)),
        Cache("task_struct", 4416, lambda i, h: 300 + (i * 7919) % 5),
        Cache("kmalloc-512", 512, lambda i, h: 4_000 + (i * 104729) % 40),
        Cache("ext4_inode_cache", 1080, lambda i, h: 20_000 + 1_500 * (i % 30)),
    ]

    def meminfo(i: int, h: float) -> str:
        leaked_kb = int(sockets_per_hour * h * (832 + 1344 + 192 + 256 + 64) / 1024)
        return meminfo_text(4_000_000 - leaked_kb, 100_000 + leaked_kb)

    reclaim = {"ext4_inode_cache": True, "dentry": True}
    return write_store(path, caches, samples, interval, meminfo, reclaim=reclaim, late=late)


def run_leaks(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], store: Path
) -> tuple[str, dict[str, Any]]:
    """``kforensic leaks`` on ``store``: its text (whitespace folded) and its JSON document."""
    code, text = cli_in_process(monkeypatch, capsys, "leaks", "--store", str(store))
    assert code in (0, 1), text
    out = store.with_suffix(".json")
    code, _ = cli_in_process(monkeypatch, capsys, "leaks", "--store", str(store), "-f", "json", "-o", str(out))
    assert code in (0, 1)
    return " ".join(text.split()), json.loads(out.read_text())
