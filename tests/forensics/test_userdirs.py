"""A user without a home: the commands run without their per-user caches, and write nothing where they run.

Python's ``Path.home()`` raises where ``HOME`` is unset and the user id has no passwd entry (a container run with
``--user 12345``): every command ended in "internal error" (exit 4) at the code cache before any input was read.
Here the real CLI runs as such a user (``setpriv``, root only) in a directory it may write, and must give what it
gives with a home, leave that directory as it was, and tell the one command that needs a per-user file (``leaks``
without ``--store``) what to give instead.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from forensics.userdirs import NoHomeError, cache_home, home

ROOT = Path(__file__).resolve().parents[2]
TRACE = ROOT / "tests" / "data" / "traces" / "kf.ftrace.txt.gz"
PROFILE = ROOT / "tests" / "data" / "profile" / "mixed.perf.txt.gz"
LOG = ROOT / "tests" / "detectors" / "dmesg" / "golden"
NO_PASSWD_UID = 54321  # no passwd entry on the test machine (checked below)


def test_home_is_absolute_or_said_missing() -> None:
    assert home({"HOME": "/srv/u"}) == Path("/srv/u")
    with pytest.raises(NoHomeError, match="not an absolute path"):
        home({"HOME": "relative"})
    assert cache_home({"XDG_CACHE_HOME": "/c", "HOME": "relative"}) == Path("/c")
    assert cache_home({"XDG_CACHE_HOME": "rel", "HOME": "/h"}) == Path("/h/.cache")  # as the XDG spec says
    assert isinstance(NoHomeError("x"), OSError)  # what every cache's "cannot be kept" path takes


def _run(argv: list[str], cwd: Path, homeless: bool) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k not in ("HOME", "XDG_CACHE_HOME", "NUMBA_CACHE_DIR")}
    if homeless:
        argv = ["setpriv", f"--reuid={NO_PASSWD_UID}", f"--regid={NO_PASSWD_UID}", "--clear-groups", *argv]
    else:
        env["HOME"] = str(cwd.parent / "home")
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False, timeout=300)


def _masked(text: bytes) -> object:
    doc = json.loads(text)
    for source in doc.get("incident", doc).get("sources", []):
        source.pop("seconds", None)
    return doc


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv")
def test_commands_run_for_a_user_without_a_home() -> None:
    import pwd
    import tempfile

    with pytest.raises(KeyError):
        pwd.getpwuid(NO_PASSWD_UID)
    base = Path(tempfile.mkdtemp(prefix="kf-homeless-"))  # not under pytest's 0700 directory: the user enters it
    try:
        base.chmod(0o755)
        _homeless_runs(base)
    finally:
        shutil.rmtree(base)


def _homeless_runs(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir(mode=0o777)
    work.chmod(0o777)
    (tmp_path / "home").mkdir()
    log = work / "console.log"
    shutil.copy(next(iter(sorted(LOG.glob("*.log")))), log)
    log.chmod(0o644)
    cli = [sys.executable, "-m", "forensics"]
    runs = {
        "dmesg": [*cli, "dmesg", log.name, "--format", "json"],
        "trace": [*cli, "trace", str(TRACE), "--format", "json"],
        "profile": [*cli, "profile", str(PROFILE), "--format", "json"],
    }
    for name, argv in runs.items():
        homeless = _run(argv, work, homeless=True)
        assert homeless.returncode in (0, 1), (name, homeless.stderr.decode()[-2000:])
        assert b"internal error" not in homeless.stderr
        usual = _run(argv, work, homeless=False)
        assert _masked(homeless.stdout) == _masked(usual.stdout), name
    assert sorted(p.name for p in work.iterdir()) == ["console.log"]  # no "~" directory, no cache file here
    leaks = _run([*cli, "leaks"], work, homeless=True)
    lines = leaks.stderr.decode().strip().splitlines()
    assert leaks.returncode == 2 and "no default slab store" in lines[0] and "--store PATH" in lines[-1], lines
