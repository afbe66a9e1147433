"""The kernels built ahead of time (forensics/aot.py), built once for the tests of the collectors that check them
(the session fixture ``aot_build`` of tests/collectors/conftest.py).

tests/collectors/test_ctf_aot.py checks what ``make compile``'s step (``build_ahead``) builds, and
tests/collectors/test_perf_chains.py that ``kforensic profile`` builds the profile reader's chunk pass when forced
and then writes what the Python path writes.  Each built the chunk pass (8-11 s of CPU); here one cache directory
goes through both, in the order a user meets them: a run on nothing built, a forced run that builds the chunk pass,
then ``build_ahead``, which finds it built (and loads it, stamping its note) and builds the other three.  The tests
that read it are in one xdist group ("ctf-aot"): one worker builds it, once.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from collectors import perf_script
from collectors.perf_script import read_gzip_text
from forensics import aot, jit
from forensics.jit import COMPILED_ENV, jit_cache_dir

ROOT = Path(__file__).resolve().parents[2]

#: A run of the profile reader on ``sys.argv[1]``: its stacks, the modules loaded ahead of time, whether numba was.
PROFILE_PROBE = (
    "import sys; from collectors.perf_script import read_profile; from forensics import aot; "
    "p = read_profile(sys.argv[1]); print(len(p.stacks), len(aot.loaded()), 'numba' in sys.modules)"
)


#: The builds' C compiler flags, after Python's (-O3 -g; the last -O is gcc's): numba's C runtime that pycc compiles
#: into each module (modulemixin.c: the module's glue, numba's helper library, its NRT) at -O0 without debug
#: information, 0.9 s of CPU per module instead of 2.4 s.  The kernels' code is numba's, the same for any flags (LLVM
#: at its own level, for the host CPU); the C runtime means the same at any level.  ``make compile`` keeps Python's.
BUILD_ENV = {"CFLAGS": "-O0 -g0"}


def use_in_process(monkeypatch: pytest.MonkeyPatch, cache: Path) -> None:
    """This process's cache of compiled code (forensics.jit.cache_dir) pointed at ``cache`` for the test: through
    XDG_CACHE_HOME, no NUMBA_ variable changed.  numba reads its NUMBA_ variables again at its next compile when
    one changed (numba.core.config.reload_config): NUMBA_CACHE_DIR set then unset again by a test made numba's
    cache that test's directory, then none, for kernels made later in the pytest-xdist worker (the profile's chunk
    pass compiled again there: 8.5 s of CPU, make test on a fresh clone, 2026-12-06)."""
    assert cache.parts[-2:] == ("kforensic", "numba"), cache
    jit._setup()  # numba set up on this worker's own cache first (once per process), not on ``cache``
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)  # unset under make test: nothing changed
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache.parent.parent))


def aot_env(cache: Path, **more: str) -> dict[str, str]:
    """This environment with ``cache`` as the cache directory, neither the ahead-of-time nor the compiled path set."""
    env = {k: v for k, v in os.environ.items() if k not in (aot.AOT_ENV, COMPILED_ENV)}
    return {**env, "NUMBA_CACHE_DIR": str(cache), **more}


def profile_probe(cache: Path, text: Path, **more: str) -> subprocess.CompletedProcess[str]:
    """:data:`PROFILE_PROBE` on ``text`` in a child process with ``cache`` as its cache directory."""
    return subprocess.run(
        [sys.executable, "-c", PROFILE_PROBE, str(text)],
        cwd=ROOT, env=aot_env(cache, **more), check=True, capture_output=True, text=True,
    )  # fmt: skip


def _seed_jit_cache(cache: Path) -> None:
    """Copy this checkout's JIT kernels from the per-user cache into ``cache``, as ``make compile`` builds ahead of
    time after its JIT step (forensics.pipelines.build.main): pycc's build compiles the kernels' JIT callees on the
    way and finds them there.  make test's prelude compiled them (``make jit``): the build takes 19-20 s of CPU
    instead of 45-47 s (2026-12-05, load 4-5).  Where the prelude did not run, nothing is copied and the build
    compiles them itself.

    numba keeps a source file's kernels in ``<jit cache>/<its directory's name>_<sha1 of the directory's path>``
    (numba.core.caching._CacheLocator.get_suitable_cache_subpath); only this checkout's directories are copied.
    """
    user = jit_cache_dir(os.environ)
    new = jit_cache_dir({"NUMBA_CACHE_DIR": str(cache)})  # the same key: the same sources
    for package in {p.parent for top in ("collectors", "detectors", "forensics") for p in (ROOT / top).rglob("*.py")}:
        name = f"{package.name}_{hashlib.sha1(str(package).encode()).hexdigest()}"
        if (user / name).is_dir():
            shutil.copytree(user / name, new / name, dirs_exist_ok=True)  # (the forced run may have made it)


@dataclass(frozen=True)
class AotBuild:
    """The cache directory and what each step printed."""

    cache: Path
    #: A recording repeated past the reader's numpy bound and its COMPILED_FROM stacks, each copy with its command.
    profile_text: Path
    #: The profile reader on it with nothing built, then forced to the compiled path (built then).
    unbuilt: subprocess.CompletedProcess[str]
    #: Whether that first run left a directory of modules built ahead of time.
    unbuilt_left: bool
    forced: subprocess.CompletedProcess[str]
    #: ``build_ahead`` after them.
    ahead: subprocess.CompletedProcess[str]
    #: The modules built ahead of time whose note ``build_ahead`` stamped (loaded: built before it, or by it).
    stamped: list[str]


def _profile_text(where: Path) -> Path:
    one = read_gzip_text(ROOT / "tests" / "data" / "profile" / "mixed.perf.txt.gz").rstrip(b"\n") + b"\n\n"
    text = where / "big.perf.txt"
    with text.open("wb") as f:
        for i in range(max(perf_script.NUMPY_FROM // len(one) + 2, 2 * perf_script.COMPILED_FROM // 60)):
            f.write(one.replace(b"mixed ", b"m%d " % i))
    return text


def build(tmp: Path) -> AotBuild:
    """A new cache directory in ``tmp`` where the profile's chunk pass was built by a forced run, then ``build_ahead``
    ran."""
    cache = tmp / "xdg" / "kforensic" / "numba"  # what forensics.jit.cache_dir makes of XDG_CACHE_HOME=tmp/xdg
    cache.mkdir(parents=True)
    text = _profile_text(tmp)
    # The two profile runs on an empty cache, as a user's first forced run meets it (seeded, the forced build took
    # the same time: 9.9 s of CPU either way); the JIT kernels seeded for build_ahead only, as make compile runs it.
    unbuilt = profile_probe(cache, text)
    unbuilt_left = (cache / "aot").exists()
    forced = profile_probe(cache, text, **{COMPILED_ENV: "yes"}, **BUILD_ENV)
    _seed_jit_cache(cache)
    # A load stamps its module's note (forensics.cachetrim.used): the notes an hour old, what build_ahead loads is seen.
    hour_ago = time.time() - 3600
    for note in (cache / "aot").glob("*.sha256"):
        os.utime(note, (hour_ago, hour_ago))
    code = "from forensics.pipelines.build import build_ahead\nbuild_ahead()\n"
    ahead = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=aot_env(cache, **BUILD_ENV), capture_output=True, text=True,
        check=False,
    )  # fmt: skip
    stamped = sorted(n.name.split("-")[0] for n in (cache / "aot").glob("*.sha256") if n.stat().st_mtime > hour_ago)
    return AotBuild(cache, text, unbuilt, unbuilt_left, forced, ahead, stamped)
