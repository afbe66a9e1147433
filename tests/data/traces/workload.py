"""A workload with known scheduling behaviour, recorded into the traces of this folder (see README.md).

Children pinned with sched_setaffinity, named with prctl(PR_SET_NAME) via /proc/self/comm:
- kf_hog on CPU0, SCHED_OTHER: 3 x (12 ms busy + 3 ms sleep)
- kf_rthog on CPU1, SCHED_FIFO 10: 2 x (8 ms busy + 15 ms sleep)
- kf_victim on CPU1, SCHED_OTHER: 40 x (0.3 ms busy + 0.5 ms sleep)
- kf_blocker on CPU1: 4 x (64 KiB write + fsync + 2 ms sleep) -> D state
"""

from __future__ import annotations

import os
import sys
import time


def name(comm: str) -> None:
    with open("/proc/self/comm", "w") as f:
        f.write(comm)


def spin(ms: float) -> None:
    end = time.monotonic() + ms / 1e3
    while time.monotonic() < end:
        pass


def child(kind: str, tmpdir: str) -> None:
    if kind == "hog":
        name("kf_hog")
        os.sched_setaffinity(0, {0})
        for _ in range(3):
            spin(12)
            time.sleep(0.003)
    elif kind == "rthog":
        name("kf_rthog")
        os.sched_setaffinity(0, {1})
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
        time.sleep(0.005)
        for _ in range(2):
            spin(8)
            time.sleep(0.015)
    elif kind == "victim":
        name("kf_victim")
        os.sched_setaffinity(0, {1})
        for _ in range(40):
            spin(0.3)
            time.sleep(0.0005)
    elif kind == "blocker":
        name("kf_blocker")
        os.sched_setaffinity(0, {1})
        path = os.path.join(tmpdir, "kf_blocker.tmp")
        fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
        for _ in range(4):
            os.write(fd, b"x" * 65536)
            os.fsync(fd)
            time.sleep(0.002)
        os.close(fd)
        os.unlink(path)


def main() -> None:
    tmpdir = sys.argv[1] if len(sys.argv) > 1 else "."
    kids = []
    for kind in ("hog", "rthog", "victim", "blocker"):
        pid = os.fork()
        if pid == 0:
            try:
                child(kind, tmpdir)
            finally:
                os._exit(0)
        kids.append(pid)
    for pid in kids:
        os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
