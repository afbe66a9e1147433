"""slab-watch samples in Prometheus' text exposition format, for node_exporter's textfile collector.

Stable metric names (documented in docs/fleet.md; ``kforensic leaks
--prometheus`` reads them when an instance has no ``node_slabinfo_*`` series):

================================== ======= ========================================================
``kforensic_slab_active_objects``  gauge   objects in use, per ``cache``
``kforensic_slab_objects``         gauge   objects allocated (in use or free in slabs), per ``cache``
``kforensic_slab_object_size_bytes`` gauge size of one object, per ``cache``
``kforensic_slab_pages_per_slab``  gauge   pages per slab, per ``cache``
``kforensic_slab_slabs``           gauge   slabs, per ``cache``
``kforensic_meminfo_bytes``        gauge   a /proc/meminfo size, per ``field`` (kB times 1024)
``kforensic_vmstat_total``         counter a /proc/vmstat event counter, per ``counter`` (reclaim ones only)
``kforensic_boot_time_seconds``    gauge   when the kernel booted (sample time minus uptime)
``kforensic_slabwatch_sample_timestamp_seconds`` gauge when the sample was taken
================================== ======= ========================================================

Names differ from node_exporter's ``node_slabinfo_*`` and ``node_memory_*`` on
purpose: one node_exporter may run both its own collectors and the textfile
collector, and the same name from two collectors fails the scrape.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from forensics.model import NotAvailable

if TYPE_CHECKING:
    from collectors.slabstore import Sample

#: The file slab-watch writes into the textfile directory (node_exporter reads ``*.prom``).
TEXTFILE_NAME = "kforensic_slabwatch.prom"
#: vmstat counters exported: the ones the leak analysis reads (did the shrinkers run?).
VMSTAT_EXPORTED = ("slabs_scanned", "drop_slab")
#: Mode of the textfile: node_exporter usually runs as its own user, in the directory's group (see docs/fleet.md).
TEXTFILE_MODE = 0o640

_SLAB = (
    ("kforensic_slab_active_objects", "Objects in use in the slab cache (slabinfo active_objs).", "active_objs"),
    ("kforensic_slab_objects", "Objects allocated in the slab cache (slabinfo num_objs).", "num_objs"),
    ("kforensic_slab_object_size_bytes", "Size of one object of the slab cache (slabinfo objsize).", "objsize"),
    ("kforensic_slab_pages_per_slab", "Pages per slab of the cache (slabinfo pagesperslab).", "pagesperslab"),
    ("kforensic_slab_slabs", "Slabs of the cache (slabinfo num_slabs).", "num_slabs"),
)


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def sample_exposition(sample: Sample) -> str:
    """One sample as Prometheus text (no timestamps: the scrape time is the sample time, as node_exporter does)."""
    out: list[str] = []
    slab = sample.slabinfo
    if not isinstance(slab, NotAvailable):
        for metric, text, attr in _SLAB:
            out += [f"# HELP {metric} {text}", f"# TYPE {metric} gauge"]
            out += [f'{metric}{{cache="{_label(c.name)}"}} {getattr(c, attr)}' for c in slab.caches]
    mem = sample.meminfo
    if not isinstance(mem, NotAvailable):
        metric = "kforensic_meminfo_bytes"
        out += [f"# HELP {metric} A /proc/meminfo size in bytes.", f"# TYPE {metric} gauge"]
        for c in mem.counters:
            value = c.value * 1024 if c.unit == "kB" else c.value
            out.append(f'{metric}{{field="{_label(c.name)}"}} {value}')
    vm = sample.vmstat
    if not isinstance(vm, NotAvailable):
        metric = "kforensic_vmstat_total"
        picked = [c for c in vm.counters if c.name in VMSTAT_EXPORTED]
        if picked:
            out += [f"# HELP {metric} A /proc/vmstat event counter.", f"# TYPE {metric} counter"]
            out += [f'{metric}{{counter="{_label(c.name)}"}} {c.value}' for c in picked]
    if isinstance(sample.uptime, float):
        metric = "kforensic_boot_time_seconds"
        out += [f"# HELP {metric} When the kernel booted (sample time minus uptime).", f"# TYPE {metric} gauge"]
        out.append(f"{metric} {sample.wall - sample.uptime:.3f}")
    metric = "kforensic_slabwatch_sample_timestamp_seconds"
    out += [
        f"# HELP {metric} When slab-watch took the sample.",
        f"# TYPE {metric} gauge",
        f"{metric} {sample.wall:.3f}",
    ]
    return "\n".join(out) + "\n"


def textfile_writer(directory: Path) -> Callable[[Sample], None]:
    """A callback writing each sample atomically to ``directory``/kforensic_slabwatch.prom."""
    from forensics.output import write_atomic

    target = directory / TEXTFILE_NAME

    def write(sample: Sample) -> None:
        write_atomic(target, sample_exposition(sample), mode=TEXTFILE_MODE)

    return write
