"""What the live tests share: one machine.

A live leak test's child leaks ``vm_area_struct`` for the whole machine, and a control window judges the
whole machine's slab caches.  Two test runs on one machine (two clones, a developer's run beside CI, the
workers of ``pytest -n``) would see each other's leaks, so every test that leaks or judges a window of
this machine's slab caches holds one lock, machine-wide, while it runs (``live_slab_lock``).
"""

from __future__ import annotations

import contextlib
import fcntl
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

LOCK = Path(tempfile.gettempdir()) / "kforensic-live-slab.lock"
#: Another run's live leak tests take a few minutes; waiting longer than this means that run is stuck.
WAIT_SECONDS = 1200.0


@pytest.fixture
def live_slab_lock() -> Iterator[None]:
    """Hold the machine-wide lock of the live slab tests for the test's duration (wait for another run's)."""
    with holding_the_lock():
        yield


@pytest.fixture(scope="module")
def live_slab_lock_module() -> Iterator[None]:
    """The same lock, for a module whose servers record the machine from their start (test_live_prometheus)."""
    with holding_the_lock():
        yield


@contextlib.contextmanager
def holding_the_lock() -> Iterator[None]:
    with LOCK.open("a") as handle:
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                assert time.monotonic() < deadline, f"{LOCK} held for {WAIT_SECONDS:.0f} s by another test run"
                time.sleep(0.5)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
