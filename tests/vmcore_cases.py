"""Access to the real kdump vmcore fixtures committed under vmcore_fixtures/.

The fixtures are made by vmcore_fixtures/build.sh (see vmcore_fixtures/README.md):
one QEMU boot per case, a crash, kexec into a capture kernel and makedumpfile.
``case_names()`` and ``console_logs()`` are cheap (they only read the MANIFEST);
``load_case()`` unpacks vmlinux.xz once into a cache directory outside the
repository, keyed by its sha256, and skips the calling test with a clear reason
when the payload is absent.

Cache directory: ``$KFORENSIC_FIXTURE_CACHE`` if set, else
``~/.cache/kforensic/fixtures``; the vmlinux lands in ``<cache>/<sha256>/vmlinux``.
"""

from __future__ import annotations

import hashlib
import json
import lzma
import os
import shutil
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

FIXTURES_DIR = Path(__file__).resolve().parent.parent / "vmcore_fixtures"
MANIFEST = FIXTURES_DIR / "MANIFEST.json"
CASES_DIR = FIXTURES_DIR / "cases"
SYSROOTS_DIR = FIXTURES_DIR / "sysroots"

# Git LFS / git-annex pointer files are tiny text files; a real vmlinux.xz is tens of MB.
_MIN_VMLINUX_XZ = 1 << 20


@dataclass(frozen=True)
class VmcoreCase:
    name: str  # e.g. "01-null-member"
    directory: Path
    vmcore: Path
    vmlinux: Path  # unpacked, cached outside the repository
    module_debug: tuple[Path, ...]  # kf_buggy.ko with DWARF
    dmesg: Path  # what makedumpfile --dump-dmesg extracted
    console_log: Path  # whole serial console: crashing + capture kernel
    expected: dict[str, object]  # ground truth, see vmcore_fixtures/README.md


@cache
def _manifest() -> dict[str, Any] | None:
    try:
        return json.loads(MANIFEST.read_text())
    except FileNotFoundError:
        return None


def _manifest_entry(rel: str) -> dict[str, Any] | None:
    manifest = _manifest()
    if manifest is None:
        return None
    for entry in manifest["files"]:
        if entry["path"] == rel:
            return entry
    return None


def case_names() -> list[str]:
    """Names of the committed cases, from the MANIFEST (no unpacking)."""
    manifest = _manifest()
    return sorted(manifest["cases"]) if manifest else []


def console_logs() -> list[Path]:
    """The committed serial console logs of all cases (cheap, no unpacking)."""
    return [CASES_DIR / name / "console.log" for name in case_names() if (CASES_DIR / name / "console.log").is_file()]


def sysroot_dir(kind: str) -> Path:
    """Copied /proc and /sys files of a guest that did not crash.

    kind: "crash-loaded" (crashkernel= and kexec -p done) or "no-crashkernel".
    """
    path = SYSROOTS_DIR / kind
    if not (path / "proc" / "cmdline").is_file():
        pytest.skip(f"vmcore fixture sysroot {path} is absent; regenerate with vmcore_fixtures/build.sh")
    return path


def cache_dir() -> Path:
    env = os.environ.get("KFORENSIC_FIXTURE_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "kforensic" / "fixtures"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@cache
def _unpacked_vmlinux() -> Path:
    xz = FIXTURES_DIR / "vmlinux.xz"
    entry = _manifest_entry("vmlinux.xz")
    if entry is None:
        pytest.skip(f"{MANIFEST} is absent or lists no vmlinux.xz: vmcore fixtures not generated")
    if not xz.is_file() or xz.stat().st_size < _MIN_VMLINUX_XZ:
        pytest.skip(f"{xz} is absent or a pointer file (not fetched); vmcore fixture payload unavailable")
    target = cache_dir() / entry["sha256"] / "vmlinux"
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    if _sha256(xz) != entry["sha256"]:
        pytest.fail(f"{xz} does not match the sha256 in {MANIFEST}")
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".vmlinux.")
    try:
        with os.fdopen(fd, "wb") as out, lzma.open(xz) as src:
            shutil.copyfileobj(src, out, 1 << 22)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def load_case(name: str) -> VmcoreCase:
    """A case with every path resolved; skips the test when the payload is absent."""
    manifest = _manifest()
    if manifest is None:
        pytest.skip(f"{MANIFEST} is absent: vmcore fixtures not generated (vmcore_fixtures/build.sh)")
    if name not in manifest["cases"]:
        raise KeyError(f"unknown vmcore fixture case {name!r}; known: {', '.join(sorted(manifest['cases']))}")
    directory = CASES_DIR / name
    vmcore = directory / "vmcore"
    entry = _manifest_entry(f"cases/{name}/vmcore")
    if not vmcore.is_file() or entry is None or vmcore.stat().st_size != entry["size"]:
        pytest.skip(f"{vmcore} is absent or not the file the MANIFEST lists (payload not fetched?)")
    module = FIXTURES_DIR / "kf_buggy.ko"
    if not module.is_file():
        pytest.skip(f"{module} is absent: vmcore fixture payload incomplete")
    expected = json.loads((directory / "expected.json").read_text())
    return VmcoreCase(
        name=name,
        directory=directory,
        vmcore=vmcore,
        vmlinux=_unpacked_vmlinux(),
        module_debug=(module,),
        dmesg=directory / "dmesg.txt",
        console_log=directory / "console.log",
        expected=expected,
    )


def open_program(case: VmcoreCase, modules: bool = False) -> Any:
    """A drgn program on the case's dump, opened independently of any analysis (kernel DWARF; modules too)."""
    import contextlib

    import drgn

    prog = drgn.Program()
    prog.set_core_dump(str(case.vmcore))
    prog.load_debug_info([str(case.vmlinux)], main=True)
    if modules:
        with contextlib.suppress(drgn.MissingDebugInfoError):  # modules of the kernel without their .ko
            prog.load_debug_info([str(p) for p in case.module_debug], default=True)
    return prog
