"""Fixtures of the dump tests that run without the kernel's debug info."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture
def no_debug_info(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The root of an empty tree of standard places; no debuginfod, a cache and a home without downloads."""
    for name in [n for n in os.environ if n.startswith("DEBUGINFOD_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path / "root"
