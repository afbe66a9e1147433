"""collectors/ust_symbols.py: an address inside a mapped binary is named by its ELF symbol table, a position
independent one relative to where the statedump says it was loaded; an address it cannot name stays hex, with why."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from collectors.ust_symbols import Binary, Resolver

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
