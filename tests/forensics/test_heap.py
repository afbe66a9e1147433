"""forensics/heap.py: with the C library told to keep freed memory, buffers made and freed again and again reuse
the pages of the first ones (a real subprocess: a fresh C heap, its page faults counted by the kernel)."""

from __future__ import annotations

import subprocess
import sys

import pytest

#: Keeps freed memory, makes and frees a 3 MiB and a 4 MiB buffer 20 times, then prints whether the settings were
#: taken, the minor page faults of the rounds, and the pages of one round (glibc's defaults faulted about twice as
#: many: each round's buffers fresh pages, the mapped ones unmapped when freed).
_ROUNDS = """
import resource
from forensics.heap import keep_freed_memory
took = keep_freed_memory()
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
data = b"x" * (1 << 20)
before = faults()
for _ in range(20):
    a = data * 3
    b = data + a
    del a, b
print(took, faults() - before, (7 << 20) // resource.getpagesize())
"""


def _rounds() -> tuple[str, int, int]:
    done = subprocess.run([sys.executable, "-c", _ROUNDS], capture_output=True, text=True, check=True, timeout=60)
    took, faults, pages = done.stdout.split()
    return took, int(faults), int(pages)


def test_freed_buffers_are_reused_not_faulted_in_again() -> None:
    took, faults, pages = _rounds()
    if took != "True":
        pytest.skip("the C library is not glibc: its allocator keeps to itself")
    # The first round's pages, then the same ones again (glibc's defaults: about twice as many, fresh each round).
    assert faults < 1.25 * pages, (faults, pages)
