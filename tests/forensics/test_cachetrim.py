"""Compiled code unused for a month is removed when a build makes a new entry; nothing else in the cache is."""

from __future__ import annotations

import os
import time
from pathlib import Path

from forensics import cachetrim, jit

_OLD = time.time() - cachetrim.IDLE_SECONDS - 86400
_RECENT = time.time() - 86400
_TAG = ".cpython-311-x86_64-linux-gnu"
_SO = _TAG + ".so"


def _make(path: Path, when: float, *, directory: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if directory:
        path.mkdir()
        (path / "inside").write_text("x")
    else:
        path.write_text("x")
    os.utime(path, (when, when))
    return path


def _cache(root: Path) -> dict[str, Path]:
    """A cache directory as upgrades leave it, with things that are not kforensic's entries among them."""
    return {
        "old jit": _make(root / "jit-0123456789abcdef", _OLD, directory=True),
        "recent jit": _make(root / "jit-fedcba9876543210", _RECENT, directory=True),
        "old native": _make(root / "native" / f"kforensic_dmesg-{'a' * 20}", _OLD, directory=True),
        "recent native": _make(root / "native" / f"kforensic_dmesg-{'b' * 20}", _RECENT, directory=True),
        "build in progress": _make(root / "native" / "tmpk3x9_q", _OLD, directory=True),
        "old module": _make(root / "aot" / f"kforensic_trace_scan-{'c' * 20}{_SO}", _OLD),
        "old module's note": _make(root / "aot" / f"kforensic_trace_scan-{'c' * 20}{_TAG}.sha256", _OLD),
        "old failed note": _make(root / "aot" / f"kforensic_ctf_decode-{'d' * 20}{_TAG}.failed", _OLD),
        # A module built long ago and loaded yesterday: its note carries the use.
        "used module": _make(root / "aot" / f"kforensic_perf_chains-{'e' * 20}{_SO}", _OLD),
        "used module's note": _make(root / "aot" / f"kforensic_perf_chains-{'e' * 20}{_TAG}.sha256", _RECENT),
        "a user's file": _make(root / "notes.txt", _OLD),
        "another shape": _make(root / "jit-notours", _OLD, directory=True),
        "someone else's module": _make(root / "aot" / f"other-{'f' * 20}{_SO}", _OLD),
        "ctf metadata": _make(root / "ctf-metadata", _OLD, directory=True),
    }  # fmt: skip


def test_trim_removes_only_kforensic_entries_unused_for_a_month(tmp_path: Path) -> None:
    made = _cache(tmp_path / "cache")
    elsewhere = _make(tmp_path / "elsewhere" / "jit-0000000000000000", _OLD, directory=True)
    link = tmp_path / "cache" / "jit-0000000000000000"
    link.symlink_to(elsewhere)  # a link is not ours to remove, nor what it points at
    os.utime(link, (_OLD, _OLD), follow_symlinks=False)
    gone = {"old jit", "old native", "old module", "old module's note", "old failed note"}
    assert sorted(cachetrim.trim(tmp_path / "cache")) == sorted(made[k] for k in gone)
    for name, path in made.items():
        assert path.exists() == (name not in gone), name
    assert link.is_symlink() and (elsewhere / "inside").exists()
    assert cachetrim.trim(tmp_path / "cache") == []  # nothing left to trim


def test_the_entries_the_running_sources_use_are_kept(tmp_path: Path) -> None:
    made = _cache(tmp_path)
    keep = [made["old jit"], made["old native"], made["old module"]]
    removed = cachetrim.trim(tmp_path, keep=keep)
    assert removed == [made["old failed note"]]
    assert all(p.exists() for p in keep) and made["old module's note"].exists()


def test_a_missing_cache_or_entry_is_no_error(tmp_path: Path) -> None:
    cachetrim.used(tmp_path / "absent")  # an entry removed meanwhile (by another run's trim)
    assert cachetrim.trim(tmp_path / "absent") == []  # a cache not made yet
    assert cachetrim.stale(tmp_path) == []


def test_numba_setup_stamps_its_directory_or_trims_the_others_when_new(tmp_path: Path) -> None:
    made = _cache(tmp_path)
    current = tmp_path / "jit-1111111111111111"
    jit._stamp_or_trim(current)  # new sources: numba is about to compile into it
    assert not made["old jit"].exists() and made["recent jit"].exists() and made["a user's file"].exists()
    _make(current, _OLD, directory=True)
    jit._stamp_or_trim(current)  # a run of the same sources: stamped as used
    assert current.stat().st_mtime > time.time() - 60
