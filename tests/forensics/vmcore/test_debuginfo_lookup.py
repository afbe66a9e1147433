"""Debug info found for the user: the local places, the caches, and a real debuginfod server.

The server is elfutils' ``debuginfod`` (Debian package ``debuginfod``), started here on a free
port over a directory holding the fixture kernel's vmlinux and kf_buggy.ko (symlinks); each
fixture kernel gets its own server. Every run of kforensic gets its own cache
(``XDG_CACHE_HOME``) and no ``DEBUGINFOD_URLS`` unless the test sets one.  The runs whose subject is the
process's environment (``DEBUGINFOD_URLS``, a bare ``PATH``) or its one error line are processes; the others run
in this process through the CLI's real entry (tests.helpers.cli_run: the interpreter's start and the drgn imports,
~0.2-0.3 s of CPU a run, paid once), with the environment they read set for the run.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from forensics.vmcore.debuginfo import KERNEL_PLACES
from tests.helpers import Ran, cli_run
from tests.vmcore_cases import CASES_DIR, FIXTURES_DIR, VmcoreCase, case_names, load_case

SOURCE_DIR = FIXTURES_DIR


def _one_case_per_kernel() -> list[str]:
    """The first case of each fixture kernel (cases grouped by the vmlinux build ID of their ground truth)."""
    seen: dict[str, str] = {}
    for name in case_names():
        try:
            kernel = str(json.loads((CASES_DIR / name / "expected.json").read_text()).get("vmlinux_build_id"))
        except OSError:
            kernel = name.split("/")[0]  # a layout with one directory per kernel
        seen.setdefault(kernel, name)
    return sorted(seen.values()) or ["01-null-member"]


KERNEL_CASES = _one_case_per_kernel()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _build_id(path: Path) -> str:
    from forensics.vmcore.debuginfo import elf_build_id

    found = elf_build_id(path)
    assert found is not None, path
    return found


class Server:
    """A debuginfod serving the files of one directory."""

    def __init__(self, root: Path, files: list[Path], expect: list[str]) -> None:
        exe = shutil.which("debuginfod")
        if exe is None:
            pytest.skip("debuginfod is not installed (apt-get install debuginfod)")
        served = root / "served"
        served.mkdir(parents=True)
        for f in files:
            (served / f.name).symlink_to(f.resolve())
        self.log = (root / "debuginfod.log").open("w")
        for _attempt in range(3):  # a port taken between the probe and the bind: try another
            self.port = _free_port()
            self.url = f"http://127.0.0.1:{self.port}"
            self.proc = subprocess.Popen(
                [exe, "-F", "-L", "--disable-source-scan", "-d", str(root / f"db{self.port}.sqlite"),
                 "-p", str(self.port), "-t", "0", "-g", "0", "-c", "1", str(served)],
                stdout=self.log, stderr=subprocess.STDOUT,
            )  # fmt: skip
            if self._wait(expect):
                return
            self.stop()
        pytest.fail(f"debuginfod did not come up: see {root / 'debuginfod.log'}")

    def _wait(self, build_ids: list[str]) -> bool:
        """True once the server answers every build ID (it scans the directory after it starts)."""
        deadline = time.monotonic() + 120
        pending = list(build_ids) or ["0" * 40]
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(f"{self.url}/buildid/{pending[0]}/debuginfo", timeout=5) as r:
                    r.read(4)
                pending.pop(0)
                if not pending:
                    return True
                continue
            except urllib.error.HTTPError as exc:
                if exc.code == 404 and not build_ids:
                    return True  # an empty server: it answers, and has nothing
            except OSError:
                pass
            time.sleep(0.2)
        return False

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="module", params=KERNEL_CASES)
def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[VmcoreCase, Server]]:
    """A fixture kernel's case and a debuginfod serving that kernel's vmlinux and module."""
    case = load_case(request.param)
    files = [case.vmlinux, *case.module_debug]
    server = Server(tmp_path_factory.mktemp("debuginfod"), files, [_build_id(f) for f in files])
    yield case, server
    server.stop()


def _env(cache: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEBUGINFOD_")}
    env["XDG_CACHE_HOME"] = str(cache)
    env.update(extra)
    return env


def _vmcore(*args: str | Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "forensics", "vmcore", *map(str, args)],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip


def _vmcore_here(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], cache: Path, *args: str | Path
) -> Ran:
    """``kforensic vmcore ARGS`` in this process, with the environment :func:`_env` gives a process: its own cache,
    no ``DEBUGINFOD_*``."""
    for name in [k for k in os.environ if k.startswith("DEBUGINFOD_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    return cli_run(monkeypatch, capsys, "vmcore", *args)


def _one_clear_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 3, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("kforensic: error: ")]
    assert len(errors) == 1, result.stderr
    return errors[0]


def _why_not_analysed(result: subprocess.CompletedProcess[str] | Ran) -> str:
    """Why the dump was not analysed, run with ``-f json``: no debug info found, its kernel log was read instead
    (exit 0; the same words as the error that stands when the log cannot be had either)."""
    assert result.returncode == 0, (result.stdout, result.stderr)
    reason = json.loads(result.stdout)["analysis"]["not_available"]
    assert isinstance(reason, str)
    return reason


def test_kernel_and_module_come_from_debuginfod(
    served: tuple[VmcoreCase, Server],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    case, server = served
    cache = tmp_path / "cache"
    result = _vmcore_here(monkeypatch, capsys, cache, case.directory, "--debuginfod", server.url, "-f", "json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    kernel_id = _build_id(case.vmlinux)
    fetched = cache / "kforensic" / "debuginfod" / kernel_id / "debuginfo"
    assert doc["summary"]["vmlinux"] == str(fetched)
    assert fetched.stat().st_mode & 0o777 == 0o600
    assert fetched.stat().st_size == case.vmlinux.stat().st_size
    # The module's debug info came the same way: kf_buggy has DWARF (its frames have source lines).
    assert [m["debug_info"] for m in doc["modules"] if m["name"] == "kf_buggy"] == [True]
    assert any("kf_buggy" in (f["module"] or "") and f["source"] for f in doc["backtrace"])
    # Progress on stderr: what is downloaded, from where, and that it ended.
    assert f"downloading debug info of the kernel {doc['summary']['kernel_release']} (build ID {kernel_id}) " \
           f"from {server.url}" in result.stderr  # fmt: skip
    assert "downloading debug info of module kf_buggy" in result.stderr
    assert "downloaded" in result.stderr
    # Second run: from the cache, nothing downloaded, same answer; the server is not even needed.
    again = _vmcore_here(monkeypatch, capsys, cache, case.directory, "--debuginfod", "http://127.0.0.1:9", "-f", "json")
    assert again.returncode == 0, again.stderr
    assert "downloading" not in again.stderr
    assert json.loads(again.stdout)["hypotheses"] == doc["hypotheses"]


def test_debuginfod_urls_from_the_environment(served: tuple[VmcoreCase, Server], tmp_path: Path) -> None:
    case, server = served
    # libdebuginfod's other words (an ima: policy, a file:// URL) are skipped, not refused.
    env = _env(tmp_path / "cache", DEBUGINFOD_URLS=f"ima:permissive file:///srv/debug http://127.0.0.1:9 {server.url}/")
    result = _vmcore(case.vmcore, "-f", "json", env=env)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["summary"]["build_id"] == _build_id(case.vmlinux)
    # --no-debuginfod wins over the environment: nothing is asked, the error says how to allow it.
    refused = _vmcore(
        case.vmcore, "--no-debuginfod", "-f", "json", env=_env(tmp_path / "other", DEBUGINFOD_URLS=server.url)
    )
    assert "debuginfod not asked" in _why_not_analysed(refused)


def test_server_without_the_build_id(
    served: tuple[VmcoreCase, Server],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A server that has only the module: the kernel's build ID is missing there, said naming both."""
    case, _ = served
    module = case.module_debug[0]
    lacking = Server(tmp_path / "srv", [module], [_build_id(module)])
    try:
        result = _vmcore_here(
            monkeypatch, capsys, tmp_path / "cache", case.vmcore, "--debuginfod", lacking.url, "-f", "json"
        )
    finally:
        lacking.stop()
    line = _why_not_analysed(result)
    kernel_id = _build_id(case.vmlinux)
    assert f"debuginfod server {lacking.url} does not have build ID {kernel_id} (HTTP 404)" in line
    assert "local places" in line
    assert not (tmp_path / "cache" / "kforensic" / "debuginfod" / kernel_id).exists() or not any(
        (tmp_path / "cache" / "kforensic" / "debuginfod" / kernel_id).iterdir()
    )


def test_unreachable_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    case = load_case(KERNEL_CASES[0])
    port = _free_port()  # nothing listens there
    url = f"http://127.0.0.1:{port}"
    result = _vmcore_here(monkeypatch, capsys, tmp_path / "cache", case.vmcore, "--debuginfod", url, "-f", "json")
    line = _why_not_analysed(result)
    assert f"debuginfod server http://127.0.0.1:{port} unreachable (connection refused)" in line
    assert _build_id(case.vmlinux) in line
    # Without the log (the dump alone, no makedumpfile on PATH): the same words, as the one error line (exit 3).
    alone = tmp_path / "alone" / "vmcore"
    alone.parent.mkdir()
    alone.symlink_to(case.vmcore)
    (tmp_path / "bin").mkdir()
    env = _env(tmp_path / "cache", PATH=str(tmp_path / "bin"))
    error = _one_clear_line(_vmcore(alone, "--debuginfod", f"http://127.0.0.1:{port}", env=env))
    assert f"debuginfod server http://127.0.0.1:{port} unreachable (connection refused)" in error


def test_not_an_http_url_is_a_usage_error(tmp_path: Path) -> None:
    case = load_case(KERNEL_CASES[0])
    result = _vmcore(case.vmcore, "--debuginfod", "file:///usr/lib/debug", env=_env(tmp_path / "cache"))
    assert result.returncode == 2, result.stderr
    assert "is not an http:// or https:// URL" in result.stderr


@pytest.mark.parametrize("place", [template for template, _ in KERNEL_PLACES])
def test_each_standard_place_is_looked_in(place: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The vmlinux is found in every standard place (below a root tree), by the dump's build ID."""
    from forensics.vmcore.debuginfo import Looked, kernel_candidates

    case = load_case(KERNEL_CASES[0])
    kernel_id = _build_id(case.vmlinux)
    release = str(case.expected["kernel_release"])
    target = tmp_path / "root" / place.format(release=release, id2=kernel_id[:2], id38=kernel_id[2:])
    target.parent.mkdir(parents=True)
    target.symlink_to(case.vmlinux)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    looked: list[Looked] = []
    found = next(kernel_candidates(release, kernel_id, (), case.vmcore, tmp_path / "root", looked))
    assert found.path == target
    assert looked[-1] == Looked(str(target), "taken")
    assert all(x.outcome == "absent" for x in looked[:-1])


def test_found_in_a_standard_place_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No --vmlinux, no debuginfod: the build-ID path below the root is used and the analysis runs on it."""
    from forensics.vmcore import extract_dump
    from forensics.vmcore.program import DebugInfoRequest

    case = load_case(KERNEL_CASES[0])
    kernel_id = _build_id(case.vmlinux)
    target = tmp_path / "root" / "usr/lib/debug/.build-id" / kernel_id[:2] / f"{kernel_id[2:]}.debug"
    target.parent.mkdir(parents=True)
    target.symlink_to(case.vmlinux)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("DEBUGINFOD_URLS", raising=False)
    extract = extract_dump(case.vmcore, DebugInfoRequest(module_debug=case.module_debug, root=tmp_path / "root"))
    assert extract.snapshot.vmlinux_path == os.path.realpath(target)  # drgn names the file a link points to
    assert extract.snapshot.build_id == kernel_id


def test_wrong_build_in_a_place_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A vmlinux of another build where the release's file should be: named with its build ID, not taken."""
    case = load_case(KERNEL_CASES[0])
    release = str(case.expected["kernel_release"])
    other = tmp_path / "root" / "boot" / f"vmlinux-{release}"
    other.parent.mkdir(parents=True)
    shutil.copy(case.module_debug[0], other)  # an ELF file with another build ID
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    from forensics.errors import InputError
    from forensics.vmcore import extract_dump
    from forensics.vmcore.program import DebugInfoRequest

    with pytest.raises(InputError) as caught:
        extract_dump(case.vmcore, DebugInfoRequest(root=tmp_path / "root", debuginfod=()))
    message = caught.value.message
    assert f"{other}: build ID {_build_id(case.module_debug[0])}: another build" in message
    assert "none of the" in message and "local places has it" in message


def test_compressed_vmlinux_is_decompressed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--vmlinux vmlinux.xz: unpacked into the cache once (crash cannot read xz), later runs reuse it."""
    xz = FIXTURES_DIR / "vmlinux.xz"
    if not xz.is_file() or xz.stat().st_size < 1 << 20:
        pytest.skip("vmlinux.xz payload absent")
    case = load_case(KERNEL_CASES[0])
    cache = tmp_path / "cache"
    first = _vmcore_here(monkeypatch, capsys, cache, case.vmcore, "--vmlinux", xz, "-f", "json")
    assert first.returncode == 0, first.stderr
    assert f"decompressing {xz}" in first.stderr
    vmlinux = Path(json.loads(first.stdout)["summary"]["vmlinux"])
    assert vmlinux.is_relative_to(cache / "kforensic" / "decompressed")
    assert vmlinux.read_bytes()[:4] == b"\x7fELF"
    second = _vmcore_here(monkeypatch, capsys, cache, case.vmcore, "--vmlinux", xz, "-f", "json")
    assert second.returncode == 0, second.stderr
    assert "decompressing" not in second.stderr
    doc = json.loads(second.stdout)
    assert doc["summary"]["vmlinux"] == str(vmlinux)
    # The follow-up names the copy crash can read, never the .xz.
    assert doc["follow_up"]["crash"].startswith(f"crash -s {vmlinux} ") and ".xz" not in doc["follow_up"]["drgn"]


def _elf_with_notes(path: Path, notes: list[tuple[bytes, int, bytes]]) -> None:
    """A minimal ELF64 file whose one SHT_NOTE section holds ``notes`` (owner, type, descriptor), in order."""
    import struct

    def pad(b: bytes) -> bytes:
        return b + b"\0" * (-len(b) % 4)

    body = b"".join(struct.pack("<III", len(o) + 1, len(d), t) + pad(o + b"\0") + pad(d) for o, t, d in notes)
    names = b"\0.notes\0.shstrtab\0"
    notes_at, names_at = 64, 64 + len(body)
    sh_at = names_at + len(names) + (-(names_at + len(names)) % 8)
    header = (
        b"\x7fELF\x02\x01\x01" + b"\0" * 9 + struct.pack("<HHIQQQIHHHHHH", 1, 62, 1, 0, 0, sh_at, 0, 64, 0, 0, 64, 3, 2)
    )
    sections = b"\0" * 64  # the null section
    sections += struct.pack("<IIQQQQIIQQ", 1, 7, 2, 0, notes_at, len(body), 0, 0, 4, 0)  # .notes: SHT_NOTE
    sections += struct.pack("<IIQQQQIIQQ", 8, 3, 0, 0, names_at, len(names), 0, 0, 1, 0)  # .shstrtab
    path.write_bytes(header + body + names + b"\0" * (sh_at - names_at - len(names)) + sections)


def test_build_id_is_the_gnu_note_not_a_xen_note_of_the_same_type(tmp_path: Path) -> None:
    """Debian's vmlinux carries Xen notes first; Xen's type 3 (XEN_ELFNOTE_VIRT_BASE) is not a build ID."""
    from forensics.vmcore.debuginfo import elf_build_id

    elf = tmp_path / "vmlinux"
    gnu = bytes(range(20))
    _elf_with_notes(elf, [(b"Xen", 3, b"\0\0\0\x80\xff\xff\xff\xff"), (b"GNU", 3, gnu)])
    assert elf_build_id(elf) == gnu.hex()
    _elf_with_notes(elf, [(b"Xen", 3, b"\0\0\0\x80\xff\xff\xff\xff")])
    assert elf_build_id(elf) is None
