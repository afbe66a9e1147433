"""Make ``store.sqlite.gz``: a slab-watch store in the schema-1 layout (one row per sample and cache).

Written by the schema-1 code (commit 23ef8c3, before the packed layout): run there as
``PYTHONPATH=. .venv/bin/python tests/data/slabstore_v1/make.py``.  Two runs, a reboot, a
leaking cache, caches appearing, vanishing and listed twice, meminfo, vmstat, /proc/sys/fs
and kernel log records.  ``frames.json`` holds digests of the CSV text of the frames that
code read from it.  The migration tests check that the schema-2 code reads the same frames,
and finds the same leaks in it, migrated or not, as in the same samples written by itself
(:func:`write`, on the code of the day).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import tempfile
from pathlib import Path

from collectors.kmsg import KmsgBatch, KmsgRecord
from collectors.procfs import (
    CacheAttributes,
    FsCounters,
    HostIdentity,
    SlabAlias,
    SlabTopology,
    parse_meminfo,
    parse_slabinfo,
    parse_vmstat,
)
from collectors.slabstore import RunInfo, Sample, SlabStore
from tests.detectors.leaks.storebuild import HEADER, MEM_TOTAL_KB, START, meminfo_text, slab_line

HERE = Path(__file__).resolve().parent
BOOTS = ("aaaaaaaa-1111-2222-3333-444444444444", "bbbbbbbb-1111-2222-3333-444444444444")


def caches_at(i: int, hours: float) -> list[tuple[str, int, int]]:
    """(name, objects, objsize) of sample i."""
    out = [
        ("sock_inode_cache", 200 + int(3000 * hours), 832),
        ("UDP", 40 + int(3000 * hours), 1344),
        ("dentry", 150_000 + (i * 7919) % 300, 192),
        ("filp", 2_000 + (i * 104729) % 40, 256),
        ("kmalloc-64", 10_000 + (i % 13), 64),
        ("task_struct", 300 + (i * 7919) % 5, 4416),
        ("ext4_inode_cache", 20_000 + 1_500 * (i % 30), 1080),
        ("kmalloc-cg-512", 4_000 + int(900 * hours) + (i * 31) % 20, 512),
    ]
    if 20 <= i < 90:
        out.append(("fuse_request", 100 + i, 152))  # appears, then goes
    if i % 17 == 3:
        out.append(("kmalloc-64", 10_005, 64))  # listed twice: the store keeps the last line
    return out


def vmstat_text(i: int) -> str:
    return f"nr_free_pages {100000 - i}\nslabs_scanned {i // 40 * 128}\ndrop_slab 0\npgfault {1000 + 37 * i}\n"


def write(path: Path) -> None:
    topology = SlabTopology((SlabAlias("kmalloc-cg-512", ":0000512"),), (CacheAttributes("dentry", True),))
    interval = 60.0
    with SlabStore.open_for_writing(path, "fixturehost") as store:
        for run_no, (first, count, boot) in enumerate(((0, 130, BOOTS[0]), (130, 70, BOOTS[1]))):
            identity = HostIdentity("fixturehost", "6.1.0-fixture", boot, 4096, MEM_TOTAL_KB * 1024)
            run_id = store.begin_run(RunInfo("live", identity, topology, interval, "/"))
            for i in range(first, first + count):
                hours = (i - first) * interval / 3600.0
                lines = [slab_line(n, max(num - 3, 0), num, size) for n, num, size in caches_at(i, hours)]
                leaked_kb = int(3000 * hours * (832 + 1344) / 1024)
                records = tuple(
                    KmsgRecord(seq, 0, 6, int(hours * 3.6e9) + seq, "-", f"udp: message {seq} of run {run_no}")
                    for seq in range(2 * (i - first), 2 * (i - first) + 2)
                )
                store.append_sample(
                    run_id,
                    Sample(
                        wall=START + i * interval + run_no * 600.0,
                        uptime=30.0 + (i - first) * interval,
                        boot_id=boot,
                        slabinfo=parse_slabinfo((HEADER + "\n".join(lines) + "\n").encode(), "slabinfo"),
                        meminfo=parse_meminfo(meminfo_text(4_000_000 - leaked_kb, 100_000 + leaked_kb).encode(), "m"),
                        vmstat=parse_vmstat(vmstat_text(i).encode(), "vmstat"),
                        fs=FsCounters(1000 + i, 10, 0, 500 + i, 100, 2000 + i, 1 << 20),
                        kmsg=KmsgBatch(records),
                        cost_seconds=0.001,
                    ),
                )
            store.end_run(run_id)
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "store.sqlite")
        write(path)
        with path.open("rb") as raw, (HERE / "store.sqlite.gz").open("wb") as out:
            out.write(gzip.compress(raw.read(), mtime=0))
        with SlabStore.open(path) as store:
            tables = {
                "slab_frame": store.slab_frame().to_csv(index=False),
                "counter_frame": store.counter_frame().to_csv(index=False),
                "summary": repr(store.summary()),
            }
        digests = {k: hashlib.sha256(v.encode()).hexdigest() for k, v in tables.items()}
        (HERE / "frames.json").write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
