"""Bad input to kforensic vmcore: one clear line, exit 3, never a traceback.

A few as real processes (``run``: random bytes, a missing path, an empty file); the others through the CLI's real
entry in this process (``kf``: tests.helpers.cli_run, its error boundary, exit codes and stderr lines as a process
has them), which a process's start-up and imports cost 0.2-0.4 s of CPU a run more (issue #28)."""

from __future__ import annotations

import gzip
import json
import lzma
import os
import shutil
import struct
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from forensics.errors import InputError
from forensics.vmcore.dumpfile import DumpFormat, read_dump_header
from forensics.vmcore.locate import locate_dump
from tests.forensics.test_cli import run
from tests.helpers import Ran, cli_run
from tests.vmcore_cases import case_names, load_case


@pytest.fixture
def kf(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Callable[..., Ran]:
    """``kforensic ARGS`` in this process (tests.helpers.cli_run)."""

    def invoke(*args: str | Path) -> Ran:
        return cli_run(monkeypatch, capsys, *args)

    return invoke


def _assert_one_clear_line(result: object, *needles: str) -> None:
    assert result.returncode == 3, (result.stdout, result.stderr)  # type: ignore[attr-defined]
    err = result.stderr  # type: ignore[attr-defined]
    assert "Traceback" not in err
    lines = err.splitlines()
    assert 1 <= len(lines) <= 2
    assert lines[0].startswith("kforensic: error: ")
    for needle in needles:
        assert needle in lines[0]


def test_random_bytes_named_vmcore(tmp_path: Path) -> None:
    dump = tmp_path / "vmcore"
    dump.write_bytes(os.urandom(1 << 16))
    _assert_one_clear_line(run("vmcore", str(dump)), str(dump), "not a kernel crash dump")


def test_empty_file(tmp_path: Path) -> None:
    dump = tmp_path / "vmcore"
    dump.write_bytes(b"")
    _assert_one_clear_line(run("vmcore", str(dump)), "empty file")


def test_elf_that_is_not_a_core(kf: Callable[..., Ran]) -> None:
    exe = Path(sys.executable).resolve()
    _assert_one_clear_line(kf("vmcore", str(exe)), "not a core dump")


def _user_core() -> bytes:
    """The ELF header of a core as a process's core starts (x86-64, ET_CORE), and no VMCOREINFO note."""
    header = struct.pack("<HHIQQQIHHHHHH", 4, 62, 1, 0, 0, 0, 0, 64, 56, 0, 64, 0, 0)
    return b"\x7fELF\x02\x01\x01" + b"\0" * 9 + header + b"\0" * 4096


def test_a_user_process_core_is_said_to_be_one(tmp_path: Path, kf: Callable[..., Ran]) -> None:
    """Was exit 4 (drgn: "core file is missing NT_AUXV"); a gcore of a program asked for a kernel's debug info."""
    dump = tmp_path / "core.1234"
    dump.write_bytes(_user_core())
    _assert_one_clear_line(kf("vmcore", str(dump)), "user process", "VMCOREINFO")


@pytest.mark.parametrize(("compress", "tool"), [(gzip.compress, "gunzip"), (lzma.compress, "unxz")])
def test_a_compressed_dump_says_how_to_decompress_it(
    tmp_path: Path, compress: Any, tool: str, kf: Callable[..., Ran]
) -> None:
    dump = tmp_path / "vmcore.copy"
    dump.write_bytes(compress(_user_core()))
    result = kf("vmcore", str(dump))
    _assert_one_clear_line(result, "compressed")
    assert f"{tool} -k vmcore.copy" in result.stderr


def test_directory_without_a_dump(tmp_path: Path, kf: Callable[..., Ran]) -> None:
    (tmp_path / "notes.txt").write_text("nothing here\n")
    _assert_one_clear_line(kf("vmcore", str(tmp_path)), "no dump found")


def test_missing_path(tmp_path: Path) -> None:
    _assert_one_clear_line(run("vmcore", str(tmp_path / "nope")), "no such file")


def test_locate_finds_both_distribution_layouts(tmp_path: Path) -> None:
    debian = tmp_path / "var" / "crash" / "202611300712"
    debian.mkdir(parents=True)
    (debian / "dump.202611300712").write_bytes(b"KDUMP   ")
    (debian / "dmesg.202611300712").write_text("log\n")
    found = locate_dump(debian)
    assert found.dump.name == "dump.202611300712"
    assert found.dmesg is not None
    assert found.dmesg.name == "dmesg.202611300712"
    rhel = tmp_path / "rhel" / "127.0.0.1-2026-11-30-07:12:00"
    rhel.mkdir(parents=True)
    (rhel / "vmcore").write_bytes(b"KDUMP   ")
    (rhel / "vmcore-dmesg.txt").write_text("log\n")
    found = locate_dump(rhel.parent)
    assert found.dump == rhel / "vmcore"
    assert found.dmesg == rhel / "vmcore-dmesg.txt"


def _first_case() -> str:
    names = case_names()
    if not names:
        pytest.skip("no vmcore fixtures committed (vmcore_fixtures/build.sh)")
    return names[0]


@pytest.mark.parametrize("share", [0.02, 0.1, 0.5, 0.9])
def test_truncated_dumps(tmp_path: Path, share: float, kf: Callable[..., Ran]) -> None:
    """Cut in its page table (2%), the header is refused; cut in its page data, the dump is read as far as it goes
    and refused when the crashed task is not in what is left (tests/forensics/vmcore/test_cut_dump.py: a dump that
    lost only pages the crash does not need is analysed)."""
    case = load_case(_first_case())
    data = case.vmcore.read_bytes()
    cut = tmp_path / "vmcore"
    cut.write_bytes(data[: int(len(data) * share)])
    if share < 0.05:
        with pytest.raises(InputError, match="truncated"):
            read_dump_header(cut)
    else:
        assert read_dump_header(cut).cut is not None
    needles = ("truncated dump",) if share < 0.05 else ("truncated dump", "the crashed task cannot be read")
    _assert_one_clear_line(kf("vmcore", str(cut), "--vmlinux", str(case.vmlinux)), *needles)


def test_complete_fixture_dump_is_recognised() -> None:
    case = load_case(_first_case())
    header = read_dump_header(case.vmcore)
    assert header.format is DumpFormat.KDUMP_COMPRESSED
    assert header.dump_level == 31
    assert "free pages" in header.filtered()
    assert header.release


def test_wrong_vmlinux_is_refused_with_both_build_ids(tmp_path: Path, kf: Callable[..., Ran]) -> None:
    case = load_case(_first_case())
    wrong = tmp_path / "vmlinux"
    shutil.copy(Path(sys.executable).resolve(), wrong)  # an ELF with another build ID
    result = kf("vmcore", str(case.vmcore), "--vmlinux", str(wrong))
    _assert_one_clear_line(result, "does not match the dump's kernel")


def test_missing_debug_info_names_the_package(tmp_path: Path, kf: Callable[..., Ran]) -> None:
    """Without debug info the dump's kernel log is read (tests/forensics/vmcore/test_vmcore_without_debug_info.py);
    the report says why and names the package, as the error did (and does when the log cannot be had)."""
    case = load_case(_first_case())
    empty = tmp_path / "debug"
    empty.mkdir()
    result = kf("vmcore", str(case.vmcore), "--debug-dir", str(empty), "--no-debuginfod", "-f", "json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["analysis"]["not_available"].startswith("no debug info for the kernel")
    assert "-dbg" in doc["full_analysis"]
    assert "debuginfod-find" in doc["full_analysis"]


def test_debug_info_is_found_by_build_id_in_a_debug_dir(tmp_path: Path) -> None:
    from forensics.pipelines.vmcore import analyse_dump
    from forensics.vmcore.debuginfo import elf_build_id
    from forensics.vmcore.program import DebugInfoRequest

    case = load_case(_first_case())
    build_id = elf_build_id(case.vmlinux)
    assert build_id is not None
    # The layout of /usr/lib/debug: .build-id/<first two hex digits>/<the rest>.debug
    target = tmp_path / "debug" / ".build-id" / build_id[:2] / f"{build_id[2:]}.debug"
    target.parent.mkdir(parents=True)
    target.symlink_to(case.vmlinux)
    for module in case.module_debug:
        module_id = elf_build_id(module)
        assert module_id is not None
        link = tmp_path / "debug" / ".build-id" / module_id[:2] / f"{module_id[2:]}.debug"
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(module)
    result = analyse_dump(case.vmcore, DebugInfoRequest(None, (tmp_path / "debug",), ()))
    # drgn found the link by build ID and reports the file it points to.
    assert result.snapshot.vmlinux_path == str(case.vmlinux.resolve())
    assert result.incident.sorted_findings()[0].title == case.expected["title"]


def _kdump_fields(data: bytes) -> dict[str, int]:
    """Byte offsets of the disk_dump_header fields the tests damage, and of the first page descriptor."""
    import struct

    block, sub, bitmap_blocks = struct.unpack_from("<iiI", data, 428)
    return {"header_version": 8, "block_size": 428, "bitmap_blocks": 436, "max_mapnr": 440,
            "descriptor": (1 + sub) * block + bitmap_blocks * block}  # fmt: skip


@pytest.mark.parametrize(
    ("field", "delta", "named"),
    [
        ("block_size", 0x0100_0000, "block_size"),
        ("bitmap_blocks", 0x0010_0000, "bitmap_blocks"),
        ("header_version", 0x4000_0000, "header_version"),
        ("descriptor", 0x7FF5_0000_0000_0000, "page descriptor"),  # the offset: "at least 9e18 bytes" before
        ("max_mapnr", 0x4000_0000, "max_mapnr"),
    ],
)
def test_corrupt_kdump_header_is_called_corrupt_not_truncated(
    tmp_path: Path, field: str, delta: int, named: str
) -> None:
    """Issue 19: a damaged header is "corrupt (field = value)", never "truncated ... 9220507044147185829 bytes"."""
    names = case_names()
    if not names:
        pytest.skip("no vmcore fixtures committed (vmcore_fixtures/build.sh)")
    from tests.vmcore_cases import CASES_DIR

    data = bytearray((CASES_DIR / names[0] / "vmcore").read_bytes())
    at = _kdump_fields(bytes(data))[field]
    width = 8 if field == "descriptor" else 4
    value = (int.from_bytes(data[at : at + width], "little") ^ delta) & ((1 << (8 * width)) - 1)
    data[at : at + width] = value.to_bytes(width, "little")
    dump = tmp_path / "vmcore"
    dump.write_bytes(bytes(data))
    with pytest.raises(InputError, match="the dump header is corrupt") as info:
        read_dump_header(dump)
    assert named in str(info.value)
    assert "truncated" not in str(info.value)


def test_corrupt_kdump_header_exits_3_with_one_line(tmp_path: Path, kf: Callable[..., Ran]) -> None:
    case = load_case(_first_case())
    data = bytearray(case.vmcore.read_bytes())
    at = _kdump_fields(bytes(data))["descriptor"]
    data[at + 7] ^= 0x7F
    dump = tmp_path / "vmcore"
    dump.write_bytes(bytes(data))
    _assert_one_clear_line(kf("vmcore", str(dump), "--vmlinux", str(case.vmlinux)), "the dump header is corrupt")


@pytest.mark.parametrize("option", ["--source-dir", "--debug-dir"])
@pytest.mark.parametrize("what", ["missing", "file"])
def test_a_source_dir_that_is_no_directory_is_refused_as_a_bad_module_debug_is(
    what: str, option: str, tmp_path: Path, kf: Callable[..., Ran]
) -> None:
    """Accepted silently, it made every BUG/WARN source "not found" (a --debug-dir: nothing searched there), the
    option's mistake unsaid."""
    case = load_case(_first_case())
    tree = tmp_path / "nonexistent"
    if what == "file":
        tree.write_text("not a tree\n")
    result = kf("vmcore", str(case.vmcore), "--vmlinux", str(case.vmlinux), option, str(tree))
    _assert_one_clear_line(result, f"{option} {tree}: " + ("no such directory" if what == "missing" else "not a"))


def _zlib_pages(data: bytes) -> list[tuple[int, int]]:
    """(offset, size) of the zlib-compressed pages of a kdump-compressed dump."""
    import struct

    at = _kdump_fields(data)["descriptor"]
    block, sub, bitmap_blocks = struct.unpack_from("<iiI", data, 428)
    bitmap = data[(1 + sub) * block + bitmap_blocks * block // 2 : at]
    pages = int.from_bytes(bitmap, "little").bit_count()
    return [(o, n) for o, n, flags, _pf in struct.iter_unpack("<qIIQ", data[at : at + 24 * pages]) if flags & 1]


@pytest.mark.parametrize("name", case_names() or ["absent"])
def test_intact_fixture_dumps_pass_the_page_check(name: str) -> None:
    from forensics.vmcore.dumpfile import check_pages
    from tests.vmcore_cases import CASES_DIR

    if name == "absent":
        pytest.skip("no vmcore fixtures committed (vmcore_fixtures/build.sh)")
    dump = CASES_DIR / name / "vmcore"
    check = check_pages(dump, read_dump_header(dump))
    assert check is not None and check.compressed > 0 and check.checked == check.compressed
    assert check.failed == 0 and check.warning() is None


def test_scattered_flipped_bytes_say_the_dump_is_damaged(tmp_path: Path, kf: Callable[..., Ran]) -> None:
    """Issue 19: flipped bytes in page data gave a garbled report without a warning."""
    from forensics.vmcore.dumpfile import check_pages

    case = load_case(_first_case())
    data = bytearray(case.vmcore.read_bytes())
    # Pages with some content (a nearly empty page compresses to a few bytes plus slack that zlib never reads).
    pages = sorted({p for p in _zlib_pages(bytes(data)) if p[1] > 256})
    damaged = pages[:: len(pages) // 12][:12]
    for offset, size in damaged:
        data[offset + size // 4] ^= 0xA5
    dump = tmp_path / "vmcore"
    dump.write_bytes(bytes(data))
    check = check_pages(dump, read_dump_header(dump))
    assert check is not None and check.failed == len(damaged)
    assert check.first_failures == tuple(o for o, _n in damaged[:3])
    assert check.checked == check.compressed  # small enough to check every page
    sampled = check_pages(dump, read_dump_header(dump), limit=100)
    assert sampled is not None and sampled.checked == 100
    import json

    result = kf("vmcore", dump, "--vmlinux", case.vmlinux, "--format", "json")
    assert result.returncode in (0, 1), result.stderr
    warnings = json.loads(result.stdout)["warnings"]
    assert warnings and warnings[0].startswith(f"the dump is damaged: {len(damaged)} of ")
