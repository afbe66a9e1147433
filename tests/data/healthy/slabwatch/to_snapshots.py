"""Write a slab-watch store as slab-import's concatenated snapshots (one ``date=`` line, slabinfo, meminfo each).

The store's schema changes between kforensic versions; the snapshot text is what
``kforensic slab-import`` reads whatever the schema, so the recording is kept in
that form.  Usage: python to_snapshots.py STORE > snapshots.txt
"""

from __future__ import annotations

import sys
from itertools import groupby
from pathlib import Path

from collectors.slabstore import SlabStore

HEADER = (
    "slabinfo - version: 2.1\n"
    "# name            <active_objs> <num_objs> <objsize> <objperslab> <pagesperslab>"
    " : tunables <limit> <batchcount> <sharedfactor> : slabdata <active_slabs> <num_slabs> <sharedavail>\n"
)


def main(store_path: Path) -> None:
    out = sys.stdout
    with SlabStore.open(store_path, readonly=True) as store:
        samples = {s.id: s for s in store.samples()}
        counters = store.counter_frame()
        meminfo = counters[counters["source"] == "meminfo"]
        by_sample = {int(k): g for k, g in meminfo.groupby("sample_id")}
        for sample_id, rows in groupby(store.iter_slab_rows(), key=lambda r: int(str(r[0]))):
            s = samples[sample_id]
            uptime = "" if s.uptime is None else f" uptime={s.uptime:.2f}"
            out.write(f"date={s.wall:.3f}{uptime}\n{HEADER}")
            for r in rows:
                n = r[4:]
                out.write(
                    f"{r[3]:<17} {n[0]:6} {n[1]:6} {n[2]:6} {n[3]:4} {n[4]:4} : tunables {n[5]:4} {n[6]:4} {n[7]:4}"
                    f" : slabdata {n[8]:6} {n[9]:6} {n[10]:6}\n"
                )
            for name, value, unit in by_sample[sample_id][["name", "value", "unit"]].itertuples(index=False):
                out.write(f"{name + ':':<16}{value:>8} {unit}".rstrip() + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
