"""forensics.jit: compiled code cached per user, and a compile that takes long says so on stderr."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from forensics import cachetrim, jit
from forensics.cachetrim import IDLE_SECONDS
from forensics.jit import cache_dir
from tests.helpers import as_nobody

ROOT = Path(__file__).resolve().parents[2]

KERNEL = """
from forensics.jit import njit

@njit("a test kernel", seconds=7)
def add_one(x):
    return x + 1

print(add_one(41))
"""


def test_cache_dir_follows_numba_then_xdg_then_home(tmp_path: Path) -> None:
    assert cache_dir({"NUMBA_CACHE_DIR": "/n", "XDG_CACHE_HOME": "/x"}) == Path("/n")
    assert cache_dir({"XDG_CACHE_HOME": "/x"}) == Path("/x/kforensic/numba")
    # A relative XDG_CACHE_HOME is invalid (XDG base directory spec): the home's .cache is used.
    assert cache_dir({"XDG_CACHE_HOME": "rel"}) == Path.home() / ".cache" / "kforensic" / "numba"
    assert cache_dir({}) == Path.home() / ".cache" / "kforensic" / "numba"


def _run(script: Path, xdg: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(XDG_CACHE_HOME=str(xdg), PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, check=True)


def test_first_compile_is_announced_and_cached_per_user(tmp_path: Path) -> None:
    """The first run compiles (one notice with the expected time and the cache), the next loads silently."""
    # The kernel's source lives in a read-only directory, as in a system-wide install.
    src = tmp_path / "install"
    src.mkdir()
    script = src / "kernel_user.py"
    script.write_text(KERNEL)
    src.chmod(0o555)
    # What an upgrade left behind a month ago, and what is not kforensic's: a compile into a new directory removes
    # only the first (forensics.cachetrim).
    numba_cache = tmp_path / "xdg" / "kforensic" / "numba"
    left = numba_cache / "jit-0123456789abcdef"
    left.mkdir(parents=True)
    (numba_cache / "notes.txt").write_text("mine")
    month_ago = time.time() - IDLE_SECONDS - 86400
    for path in (left, numba_cache / "notes.txt"):
        os.utime(path, (month_ago, month_ago))
    try:
        first = _run(script, tmp_path / "xdg")
        again = _run(script, tmp_path / "xdg")
        other_user = _run(script, tmp_path / "xdg2")
    finally:
        src.chmod(0o755)
    assert first.stdout.strip() == "42" and again.stdout.strip() == "42"
    notice = [line for line in first.stderr.splitlines() if line.startswith("kforensic: compiling")]
    assert len(notice) == 1, first.stderr
    assert "a test kernel" in notice[0] and "about 7 s" in notice[0]
    assert str(tmp_path / "xdg" / "kforensic" / "numba") in notice[0]
    assert "compiling" not in again.stderr
    assert list((tmp_path / "xdg" / "kforensic" / "numba").rglob("kernel_user.add_one-*.nbi"))
    assert not (src / "__pycache__").exists()
    assert "compiling" in other_user.stderr  # another cache (user) compiles for itself
    assert not left.exists() and (numba_cache / "notes.txt").read_text() == "mine"


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to meet another user's cache as an ordinary user")
def test_a_cache_this_user_cannot_search_is_no_error(tmp_path: Path) -> None:
    """Another user's 0700 cache (``sudo -E -u svc`` keeps their ``XDG_CACHE_HOME``): stamping and trimming say
    nothing and the run goes on (before, numba's set-up raised PermissionError: exit 3 for a trace)."""
    theirs = tmp_path / "theirs"
    (theirs / "jit-0123456789abcdef").mkdir(parents=True)
    theirs.chmod(0o700)
    tmp_path.chmod(0o755)

    def stamped_and_trimmed() -> bool:
        jit._stamp_or_trim(theirs / "jit-fedcba9876543210")  # new sources: trims
        jit._stamp_or_trim(theirs / "jit-0123456789abcdef")  # the same sources: stamps
        return cachetrim.trim(theirs) == []

    assert as_nobody(stamped_and_trimmed)
    assert (theirs / "jit-0123456789abcdef").is_dir()


def test_nothing_cached_is_told_without_numba(tmp_path: Path) -> None:
    """An empty or not yet made cache holds nothing (no numba import to find out); an index file means maybe."""
    from forensics.jit import jit_cache_dir, nothing_cached

    env = {"NUMBA_CACHE_DIR": str(tmp_path / "not" / "made")}
    assert nothing_cached(env)
    (tmp_path / "c" / "ctf-metadata").mkdir(parents=True)  # other files of ours: still no compiled code
    assert nothing_cached({"NUMBA_CACHE_DIR": str(tmp_path / "c")})
    (tmp_path / "c" / "jit-0123456789abcdef" / "decode_x").mkdir(parents=True)  # other sources' kernels
    (tmp_path / "c" / "jit-0123456789abcdef" / "decode_x" / "decode-410.py311.nbi").write_bytes(b"")
    assert nothing_cached({"NUMBA_CACHE_DIR": str(tmp_path / "c")})
    these = jit_cache_dir({"NUMBA_CACHE_DIR": str(tmp_path / "c")}) / "decode_x"
    these.mkdir(parents=True)
    (these / "decode-410.py311.nbi").write_bytes(b"")
    assert not nothing_cached({"NUMBA_CACHE_DIR": str(tmp_path / "c")})


def test_an_input_past_its_cold_size_compiles(tmp_path: Path) -> None:
    """Nothing cached: under ``cold_bytes`` the plain path runs (said on stderr), from it the compile does."""
    from forensics.jit import SMALL_INPUT_BYTES, compiled_pays

    env = {"NUMBA_CACHE_DIR": str(tmp_path / "empty")}
    size = 3 * SMALL_INPUT_BYTES
    assert not compiled_pays(size, lambda: [], environ=env, cold_bytes=size + 1)
    assert compiled_pays(size, lambda: [], environ=env, cold_bytes=size)


def test_the_jit_cache_is_keyed_on_the_sources_kernels_read_constants_from(tmp_path: Path) -> None:
    """numba keys a kernel on its own file only: a layout changed elsewhere must compile into another directory."""
    import shutil

    from forensics import jit

    root = Path(jit.__file__).resolve().parent.parent
    copy = tmp_path / "src"
    for directory in (*jit._KEYED_SOURCES, "forensics"):
        (copy / directory).mkdir(parents=True, exist_ok=True)
        for path in (root / directory).glob("*.py"):
            shutil.copy(path, copy / directory / path.name)
    key = jit.sources_key(copy)
    assert key == jit.sources_key(root) and jit.jit_cache_dir({"NUMBA_CACHE_DIR": "/n"}) == Path(f"/n/jit-{key}")
    layout = copy / "detectors" / "sched" / "engine_layout.py"
    layout.write_text(layout.read_text().replace("= 0", "= 00", 1))  # a constant's text, not the kernel's file
    assert jit.sources_key(copy) != key
    (copy / "forensics" / "cli.py").write_text("# not read by any kernel\n")
    layout.write_text((root / "detectors" / "sched" / "engine_layout.py").read_text())
    assert jit.sources_key(copy) == key
