"""Access to the real kdump vmcore fixtures committed under vmcore_fixtures/.

The fixtures are made by vmcore_fixtures/build.sh (see vmcore_fixtures/README.md):
one QEMU boot per case, a crash, kexec into a capture kernel and makedumpfile,
on several kernels: 6.1 (the first, whose payload is vmcore_fixtures/ itself)
and the others under vmcore_fixtures/kernels/<version>/, each with its own
MANIFEST.json.  ``case_names()`` and ``console_logs()`` are cheap (they only
read a MANIFEST); ``load_case()`` unpacks the kernel's vmlinux.xz once into a
cache directory outside the repository, keyed by its sha256, and skips the
calling test with a clear reason when the payload is absent.  Without a
``kernel`` argument every function means the first kernel (6.1), as before
there were several.

Cache directory: ``$KFORENSIC_FIXTURE_CACHE`` if set, else
``~/.cache/kforensic/fixtures``; the vmlinux lands in ``<cache>/<sha256>/vmlinux``; the first kernel's in
``<cache>/<sha256>-gdb-index/vmlinux``, with a ``.gdb_index`` section added by gdb's ``gdb-add-index`` where it
is installed.  The index is what distributions' debug packages often carry; it changes no byte the kernel's
tools read (DWARF, symbols, build ID) and lets ``crash`` open a dump in 0.9 s of CPU instead of 2.1 s (the
fixture kernel, 2026-12-05): the follow-up test starts one crash session per case.
"""

from __future__ import annotations

import hashlib
import json
import lzma
import os
import shutil
import subprocess
import tempfile
import warnings
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import pytest

FIXTURES_DIR = Path(__file__).resolve().parent.parent / "vmcore_fixtures"
MANIFEST = FIXTURES_DIR / "MANIFEST.json"
CASES_DIR = FIXTURES_DIR / "cases"
SYSROOTS_DIR = FIXTURES_DIR / "sysroots"
#: The first fixture kernel, whose payload is vmcore_fixtures/ itself.
PRIMARY_KERNEL = "6.1"

# Git LFS / git-annex pointer files are tiny text files; a real vmlinux.xz is tens of MB.
_MIN_VMLINUX_XZ = 1 << 20


@dataclass(frozen=True)
class VmcoreCase:
    name: str  # e.g. "01-null-member"
    kernel: str  # the fixture kernel, e.g. "6.1"
    directory: Path
    vmcore: Path
    vmlinux: Path  # unpacked, cached outside the repository
    module_debug: tuple[Path, ...]  # kf_buggy.ko with DWARF
    dmesg: Path  # what makedumpfile --dump-dmesg extracted
    console_log: Path  # whole serial console: crashing + capture kernel
    expected: dict[str, object]  # ground truth, see vmcore_fixtures/README.md


def payload_dir(kernel: str = PRIMARY_KERNEL) -> Path:
    """The directory of a fixture kernel's payload (vmlinux.xz, kf_buggy.ko, cases/, MANIFEST.json)."""
    return FIXTURES_DIR if kernel == PRIMARY_KERNEL else FIXTURES_DIR / "kernels" / kernel


@cache
def _manifest(kernel: str = PRIMARY_KERNEL) -> dict[str, Any] | None:
    try:
        return json.loads((payload_dir(kernel) / "MANIFEST.json").read_text())  # type: ignore[no-any-return]
    except FileNotFoundError:
        return None


def manifest(kernel: str = PRIMARY_KERNEL) -> dict[str, Any] | None:
    """A fixture kernel's MANIFEST.json (files, cases, ``kernel_facts``), None when absent."""
    return _manifest(kernel)


def kernels() -> list[str]:
    """The fixture kernels whose MANIFEST is committed, the first kernel first, then by version."""
    found = [PRIMARY_KERNEL] if _manifest(PRIMARY_KERNEL) else []
    others = sorted(
        (p.parent.name for p in (FIXTURES_DIR / "kernels").glob("*/MANIFEST.json")),
        key=lambda v: tuple(int(x) for x in v.split(".") if x.isdigit()),
    )
    return found + [k for k in others if k != PRIMARY_KERNEL]


def _manifest_entry(rel: str, kernel: str = PRIMARY_KERNEL) -> dict[str, Any] | None:
    manifest = _manifest(kernel)
    if manifest is None:
        return None
    for entry in manifest["files"]:
        if entry["path"] == rel:
            return entry  # type: ignore[no-any-return]
    return None


def case_names(kernel: str = PRIMARY_KERNEL) -> list[str]:
    """Names of a kernel's committed cases, from its MANIFEST (no unpacking)."""
    manifest = _manifest(kernel)
    return sorted(manifest["cases"]) if manifest else []


def kernel_cases() -> list[tuple[str, str]]:
    """(kernel, case name) of every committed case on every fixture kernel."""
    return [(kernel, name) for kernel in kernels() for name in case_names(kernel)]


def console_logs(kernel: str = PRIMARY_KERNEL) -> list[Path]:
    """The committed serial console logs of a kernel's cases (cheap, no unpacking)."""
    cases = payload_dir(kernel) / "cases"
    return [cases / name / "console.log" for name in case_names(kernel) if (cases / name / "console.log").is_file()]


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
def _unpacked_vmlinux(kernel: str = PRIMARY_KERNEL) -> Path:
    xz = payload_dir(kernel) / "vmlinux.xz"
    entry = _manifest_entry("vmlinux.xz", kernel)
    if entry is None:
        pytest.skip(f"the {kernel} MANIFEST is absent or lists no vmlinux.xz: vmcore fixtures not generated")
    if not xz.is_file() or xz.stat().st_size < _MIN_VMLINUX_XZ:
        pytest.skip(f"{xz} is absent or a pointer file (not fetched); vmcore fixture payload unavailable")
    # Only where crash runs (the follow-up test: the first kernel's cases); 2.3 s of CPU each elsewhere for nothing.
    indexer = shutil.which("gdb-add-index") if kernel == PRIMARY_KERNEL else None
    target = cache_dir() / (str(entry["sha256"]) + ("-gdb-index" if indexer else "")) / "vmlinux"
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    if _sha256(xz) != entry["sha256"]:
        pytest.fail(f"{xz} does not match the sha256 in its MANIFEST")
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".vmlinux.")
    try:
        with os.fdopen(fd, "wb") as out, lzma.open(xz) as src:
            shutil.copyfileobj(src, out, 1 << 22)
        if indexer is not None:
            _add_gdb_index(indexer, Path(tmp))
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def _add_gdb_index(indexer: str, vmlinux: Path) -> None:
    """Add gdb's symbol index to ``vmlinux`` in place (2.3 s once); a failure leaves it without one."""
    done = subprocess.run(
        [indexer, str(vmlinux)], capture_output=True, text=True, timeout=600, check=False, stdin=subprocess.DEVNULL
    )
    if done.returncode != 0:
        warnings.warn(f"gdb-add-index {vmlinux} failed: {done.stderr.strip()[-300:]}", stacklevel=2)


def load_case(name: str, kernel: str = PRIMARY_KERNEL) -> VmcoreCase:
    """A case with every path resolved; skips the test when the payload is absent."""
    manifest = _manifest(kernel)
    payload = payload_dir(kernel)
    if manifest is None:
        pytest.skip(f"{payload / 'MANIFEST.json'} is absent: vmcore fixtures not generated (vmcore_fixtures/build.sh)")
    if name not in manifest["cases"]:
        raise KeyError(f"unknown vmcore fixture case {name!r}; known: {', '.join(sorted(manifest['cases']))}")
    directory = payload / "cases" / name
    vmcore = directory / "vmcore"
    entry = _manifest_entry(f"cases/{name}/vmcore", kernel)
    if not vmcore.is_file() or entry is None or vmcore.stat().st_size != entry["size"]:
        pytest.skip(f"{vmcore} is absent or not the file the MANIFEST lists (payload not fetched?)")
    module = payload / "kf_buggy.ko"
    if not module.is_file():
        pytest.skip(f"{module} is absent: vmcore fixture payload incomplete")
    expected = json.loads((directory / "expected.json").read_text())
    return VmcoreCase(
        name=name,
        kernel=kernel,
        directory=directory,
        vmcore=vmcore,
        vmlinux=_unpacked_vmlinux(kernel),
        module_debug=(module,),
        dmesg=directory / "dmesg.txt",
        console_log=directory / "console.log",
        expected=expected,
    )


#: The one parameter of a parametrized test when no fixture is committed (the test then skips).
NO_FIXTURES = "<no-vmcore-fixtures>"


def case_ids() -> list[str]:
    """``kernel/name`` of every case of every fixture kernel, to parametrize tests over."""
    return [f"{kernel}/{name}" for kernel, name in kernel_cases()] or [NO_FIXTURES]


def kernel_ids() -> list[str]:
    """The fixture kernels, to parametrize tests over."""
    return kernels() or [NO_FIXTURES]


def case_group(kernel: str, name: str) -> str:
    """The pytest-xdist group of a case's tests (tests/conftest.py groups the tests parametrized by the case)."""
    return f"vmcore-case-{kernel}/{name}"


def kernels_of(name: str) -> list[Any]:
    """The fixture kernels, to parametrize a test that reads the case ``name`` on each of them: each kernel's test
    in the case's group, on the worker that analyses and opens that case for its other tests (elsewhere it did both
    again, 0.3-0.8 s of CPU).  A kernel without the case is there ungrouped (its test skips, saying so)."""
    return [
        pytest.param(kernel, marks=pytest.mark.xdist_group(case_group(kernel, name)))
        if name in case_names(kernel)
        else kernel
        for kernel in kernel_ids()
    ]


def on_case(key: str) -> Any:
    """The mark that runs a test reading the one case ``kernel/name`` (or a name of the first kernel) in that case's
    xdist group: on the worker that analyses and opens the case for its other tests.  Ungrouped, such a test ran on
    any worker and analysed or opened the case there again (0.3-0.8 s of CPU; tests/conftest.py groups only the
    tests parametrized by a case)."""
    kernel, _, name = key.rpartition("/")
    return pytest.mark.xdist_group(case_group(kernel or PRIMARY_KERNEL, name))


def analysed_id(key: str, kernel: str = PRIMARY_KERNEL) -> tuple[VmcoreCase, Any]:
    """:func:`analysed` for a ``kernel/name`` key (or a bare name of ``kernel``); skips an absent case."""
    if NO_FIXTURES in (key, kernel):
        pytest.skip("no vmcore fixtures committed (vmcore_fixtures/build.sh)")
    if "/" in key:
        kernel, _, key = key.rpartition("/")
    if key not in case_names(kernel):
        pytest.skip(f"the {key} fixture is absent on {kernel}")
    return analysed(key, kernel)


def analysed(name: str, kernel: str = PRIMARY_KERNEL) -> tuple[VmcoreCase, Any]:
    """``kforensic vmcore``'s analysis of a case (``analyse_dump`` with the module source), once per session, however
    it is asked for (``analysed(name)`` and ``analysed(name, "6.1")``: functools.cache keys the call as written)."""
    return _analysed(name, kernel)


@cache
def _analysed(name: str, kernel: str) -> tuple[VmcoreCase, Any]:
    from forensics.pipelines.vmcore import analyse_dump
    from forensics.vmcore.program import DebugInfoRequest

    case = load_case(name, kernel)
    return case, analyse_dump(case.directory, DebugInfoRequest(case.vmlinux, (), case.module_debug, (FIXTURES_DIR,)))


def open_program(case: VmcoreCase, modules: bool = False) -> Any:
    """A drgn program on the case's dump, opened independently of any analysis (kernel DWARF; modules too).

    Shared, read only, by the tests of a process that open the same dump: its DWARF index is most of the cost (0.15-0.35
    s of CPU a program), and a case's tests run one after the other on one pytest-xdist worker (the xdist_group of
    the case, tests/conftest.py), so the last few programs opened are kept (~50 MB each).  No test changes a program
    it is given (loads more debug info, adds finders or memory segments): one that must, opens its own.  The tests ask
    for ``modules=True`` even where they read only the kernel's memory and types (kf_buggy.ko's DWARF adds 2 ms):
    one program per case, where a second without the module loaded the kernel's DWARF again (0.1 s of CPU on 6.1,
    0.4-0.6 s on the dwz-compressed DWARF of 5.10 and 6.12).
    """
    return _opened(case.kernel, case.name, modules)


@lru_cache(maxsize=6)
def _opened(kernel: str, name: str, modules: bool) -> Any:
    import contextlib

    import drgn

    case = load_case(name, kernel)
    prog = drgn.Program()
    prog.set_core_dump(str(case.vmcore))
    # As forensics/vmcore/program.py does: no download by drgn's own debuginfod finder (where DEBUGINFOD_URLS is
    # set, as Ubuntu and Fedora set it), so that the other modules' search stays on this machine.
    with contextlib.suppress(AttributeError, ValueError):
        prog.set_enabled_debug_info_finders([f for f in prog.enabled_debug_info_finders() if f != "debuginfod"])
    prog.load_debug_info([str(case.vmlinux)], main=True)
    if modules:
        with contextlib.suppress(drgn.MissingDebugInfoError):  # modules of the kernel without their .ko
            prog.load_debug_info([str(p) for p in case.module_debug], default=True)
    return prog


def without_pages(dump: Path, pfns: set[int], out: Path) -> None:
    """A copy of a kdump-compressed dump with these page frames filtered out, as makedumpfile excludes a page.

    Each page stays in the first bitmap (RAM) and leaves the second (dumped); its descriptor leaves
    the table, whose entries are looked up by rank among the dumped pages.  Frames the dump does
    not hold are skipped.
    """
    import struct

    data = bytearray(dump.read_bytes())
    block_size, sub_hdr_size, bitmap_blocks = struct.unpack_from("<iiI", data, 428)
    bitmap2 = (1 + sub_hdr_size) * block_size + bitmap_blocks * block_size // 2
    table = (1 + sub_hdr_size) * block_size + bitmap_blocks * block_size
    for pfn in sorted(pfns, reverse=True):
        if not data[bitmap2 + pfn // 8] >> (pfn % 8) & 1:
            continue
        rank = int.from_bytes(data[bitmap2 : bitmap2 + pfn // 8], "little").bit_count()
        rank += bin(data[bitmap2 + pfn // 8] & ((1 << (pfn % 8)) - 1)).count("1")
        count = int.from_bytes(data[bitmap2:table], "little").bit_count()
        data[bitmap2 + pfn // 8] &= ~(1 << (pfn % 8)) & 0xFF
        entries = table + rank * 24
        data[entries : table + (count - 1) * 24] = data[entries + 24 : table + count * 24]
    out.write_bytes(bytes(data))
