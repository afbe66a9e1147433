"""Test-wide settings: the hypothesis profiles of the fuzz suite (tests/forensics/test_fuzz_contract.py).

``pytest -m fuzz --hypothesis-profile long`` runs the bad-input contract with 500 examples per
input kind; ``make test`` runs the default profile (a few dozen per kind, within 60 s).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests.helpers import mount_tmpfs

settings.register_profile("long", max_examples=500, deadline=None)


@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """``small_tmpfs("1m")``: a real tmpfs of that size mounted in the test's directory (skip without root)."""
    mounted: list[Path] = []

    def mount(size: str) -> Path:
        where = tmp_path / f"tmpfs{len(mounted)}"
        if not mount_tmpfs(where, size):
            pytest.skip("mounting a tmpfs needs root (CAP_SYS_ADMIN)")
        mounted.append(where)
        return where

    yield mount
    for where in mounted:
        subprocess.run(["umount", "-l", str(where)], check=False, capture_output=True)
