"""collectors/ust_symbols.py: an address inside a mapped binary is named by its ELF symbol table, a position
independent one relative to where the statedump says it was loaded; an address it cannot name stays hex, with why."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from collectors.ust_symbols import Binary, Resolver, _read_symbols

SOURCE = "int twice(int x) { return 2 * x; }\nint main(int argc, char **argv) { return twice(argc); }\n"


def _build(tmp_path: Path, *flags: str) -> tuple[Path, int, int]:
    """The program built with ``flags``: (its path, ``twice``'s address in the file, its size)."""
    if not shutil.which("gcc"):
        pytest.skip("needs gcc")
    (tmp_path / "p.c").write_text(SOURCE)
    out = tmp_path / "p"
    subprocess.run(["gcc", "-O1", *flags, "-o", str(out), str(tmp_path / "p.c")], check=True)
    with out.open("rb") as f:
        (sym,) = ELFFile(f).get_section_by_name(".symtab").get_symbol_by_name("twice")  # type: ignore[union-attr]
        return out, int(sym["st_value"]), int(sym["st_size"])


def test_a_position_independent_binary_is_read_relative_to_its_load_address(tmp_path: Path) -> None:
    path, value, size = _build(tmp_path, "-pie", "-fPIE")
    base = 0x555555554000
    r = Resolver([Binary(base, 1 << 20, str(path), True)])
    assert r.name(base + value) == f"twice (0x{base + value:x})"
    assert r.name(base + value + size - 1) == f"twice+0x{size - 1:x} (0x{base + value + size - 1:x})"
    assert r.why == []


def test_what_cannot_be_named_stays_hex_with_each_cause_once(tmp_path: Path) -> None:
    path, value, _size = _build(tmp_path, "-no-pie")
    missing = str(tmp_path / "gone")
    r = Resolver([Binary(0x400000, 0x10000, str(path), False), Binary(0x7F0000000000, 0x1000, missing, True)])
    assert r.name(value) == f"twice (0x{value:x})"
    assert r.name(0x7F0000000010) == "addr=0x7f0000000010"
    assert r.name(0x7F0000000020) == "addr=0x7f0000000020"
    assert r.name(0x10) == "addr=0x10"
    assert r.why == [f"{missing} not found", "0x10 is in no binary the statedump names"]
    assert Resolver([]).name(0x401000) == "addr=0x401000"


def test_a_library_symbol_table_is_read_whole_as_pyelftools_reads_it_symbol_by_symbol() -> None:
    """The C library's table (where a call site in it, main's, is looked up), unpacked whole: the functions pyelftools
    lists one symbol at a time, GNU indirect functions (strstr, memcpy) among them, which pyelftools names STT_LOOS
    (until 2026-12-06 they were left out: the reader compared the type with "STT_GNU_IFUNC")."""
    if not shutil.which("gcc"):
        pytest.skip("needs gcc (to find the C library)")
    found = subprocess.run(["gcc", "-print-file-name=libc.so.6"], capture_output=True, text=True, check=False)
    libc = Path(found.stdout.strip())
    if not libc.is_absolute() or not libc.is_file():
        pytest.skip("no libc.so.6 found")
    with libc.open("rb") as f:
        elf = ELFFile(f)
        section = elf.get_section_by_name(".symtab") or elf.get_section_by_name(".dynsym")
        assert section is not None
        one_by_one = sorted(
            (int(s["st_value"]), s.name, s["st_info"]["type"])
            for s in section.iter_symbols()  # type: ignore[attr-defined]
            if s["st_info"]["type"] in ("STT_FUNC", "STT_LOOS") and s["st_value"] and s.name
        )
    read = _read_symbols(str(libc))
    assert sorted(zip(read.starts, read.names, strict=True)) == [(a, n) for a, n, _t in one_by_one]
    assert any(t == "STT_LOOS" for _a, _n, t in one_by_one)
