"""What the machine was like while a benchmark ran: CPUs, load, and what a fresh page of memory costs.

Why the page cost: on the 2-core VM these figures come from (a Firecracker guest), the same run took from one to
twice its time depending on the hour (kforensic dmesg's x4 0.33 to 0.69 s, ``make test`` 276 to 512 s), with the
load the same.  The cause, found on 2026-12-06: the guest's virtio balloon reports free memory to its host
(VIRTIO_BALLOON_F_REPORTING, Linux's ``page_reporting``: 66 GB reported in 5 h of uptime), the host drops those
pages, and the next process to touch one waits for the host to map it again: 5-15 us a 4 KiB page against well
under 1 us where memory stays mapped.  A run that touches new memory (every process's start-up, a numba or mypy
compile, a parser's records) slows with it; CPU-bound work in memory already touched does not.  So every figure is
printed with this line, and figures are compared only where its page cost is alike (or A/B, alternated).
"""

from __future__ import annotations

import mmap
import os
import statistics
import time
from pathlib import Path

_PAGE = mmap.PAGESIZE
_TOUCHED = 32 << 20  # per sample: enough pages that timer and loop overheads stay below ~1%
_BALLOON = Path("/sys/bus/virtio/drivers/virtio_balloon")
_REPORTED = Path("/sys/module/page_reporting/parameters/reported_kib")
_F_REPORTING = 5  # VIRTIO_BALLOON_F_REPORTING: the guest reports free pages to its host (virtio 1.2, 5.13.1)


def first_touch_us(samples: int = 3) -> float:
    """Median microseconds to first write one page of fresh anonymous memory (a page fault, a zeroed page)."""
    costs = []
    for _ in range(samples):
        with mmap.mmap(-1, _TOUCHED) as area:
            start = time.perf_counter()
            for offset in range(0, _TOUCHED, _PAGE):
                area[offset] = 1
            costs.append((time.perf_counter() - start) / (_TOUCHED // _PAGE) * 1e6)
    return statistics.median(costs)


def loop_ms(samples: int = 5) -> float:
    """Best milliseconds of a fixed loop of integer additions in memory already touched: the CPU's own speed (a
    host that gives this guest less of its cores shows here; a page cost does not)."""
    best = float("inf")
    for _ in range(samples):
        start = time.perf_counter()
        total = 0
        for i in range(1_000_000):
            total += i
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def free_page_reporting(balloon: Path = _BALLOON, reported_kib: Path = _REPORTED) -> str:
    """Whether this machine hands its free memory back to a hypervisor, as far as sysfs says (the paths: for tests)."""
    try:
        devices = [d for d in balloon.iterdir() if d.name.startswith("virtio")]
    except OSError:
        return "no virtio balloon"
    for device in devices:
        try:
            features = (device / "features").read_text().strip()
        except OSError:
            continue
        if len(features) > _F_REPORTING and features[_F_REPORTING] == "1":
            try:
                reported = int(reported_kib.read_text()) / (1 << 20)
            except (OSError, ValueError):
                return "free pages reported to the host"
            return f"free pages reported to the host ({reported:,.0f} GiB so far)"
    return "a virtio balloon without free page reporting"


def machine_line() -> str:
    """One line for a benchmark's header: CPUs, load averages, the CPU's speed, the page cost, free page reporting."""
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    return (
        f"machine: {os.cpu_count()} CPUs, load {load}; a 10**6 additions loop {loop_ms():.0f} ms; first touch of a "
        f"page {first_touch_us():.1f} us ({free_page_reporting()})"
    )


if __name__ == "__main__":
    print(machine_line())
