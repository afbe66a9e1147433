"""collectors.binary_formats: an ELF file is named by what its header says, not as "a dump, vmlinux or module"."""

from __future__ import annotations

import struct

import pytest

from collectors.binary_formats import ET_CORE, ET_DYN, ET_EXEC, ET_REL, binary_format


def _elf64(e_type: int, vaddr: int | None = None, little: bool = True) -> bytes:
    """A 64-bit ELF header (and one PT_LOAD program header at ``vaddr``), as a linker writes them."""
    order = "<" if little else ">"
    ident = b"\x7fELF\x02" + (b"\x01" if little else b"\x02") + b"\x01" + b"\0" * 9
    phnum = 0 if vaddr is None else 1
    header = ident + struct.pack(
        order + "HHIQQQIHHHHHH", e_type, 62, 1, 0, 64 if phnum else 0, 0, 0, 64, 56, phnum, 64, 0, 0
    )
    if vaddr is not None:
        header += struct.pack(order + "IIQQQQQQ", 1, 5, 0, vaddr, vaddr, 0x1000, 0x1000, 0x1000)
    return header + b"\0" * 256


def _elf32(e_type: int, vaddr: int) -> bytes:
    ident = b"\x7fELF\x01\x01\x01" + b"\0" * 9
    header = ident + struct.pack("<HHIIIIIHHHHHH", e_type, 3, 1, 0, 52, 0, 0, 52, 32, 1, 40, 0, 0)
    return header + struct.pack("<IIIIIIII", 1, 0, vaddr, vaddr, 0x1000, 0x1000, 5, 0x1000) + b"\0" * 256


@pytest.mark.parametrize(
    ("head", "what"),
    [
        (_elf64(ET_CORE), "an ELF core file (a crash dump, or a process's core)"),
        (_elf64(ET_REL), "an ELF relocatable object (a kernel module or an object file)"),
        (_elf64(ET_EXEC, 0xFFFFFFFF81000000), "an ELF kernel image (vmlinux)"),
        (_elf64(ET_DYN, 0xFFFF800008000000, little=False), "an ELF kernel image (vmlinux)"),  # arm64's is a PIE
        (_elf64(ET_DYN, 0), "an ELF program or shared library (no kernel code)"),
        (_elf64(ET_EXEC, 0x400000), "an ELF program or shared library (no kernel code)"),
        (_elf32(ET_EXEC, 0xC1000000), "an ELF kernel image (vmlinux)"),
        (_elf32(ET_EXEC, 0x08048000), "an ELF program or shared library (no kernel code)"),
        (_elf64(ET_EXEC), "an ELF executable (a program or a vmlinux)"),  # its program headers not read
        (b"\x7fELF\x00\x01garbage", "an ELF file"),
    ],
)
def test_an_elf_file_is_named_by_its_header(head: bytes, what: str) -> None:
    known = binary_format(head)
    assert known is not None and known.what == what and not known.archive


def test_a_programs_reader_is_one_command_line() -> None:
    """The hint quotes the reader as a command: a program's is the recording of it that ``profile`` reads."""
    known = binary_format(_elf64(ET_DYN, 0))
    assert known is not None and known.reader == "perf record -g -- FILE && kforensic profile perf.data"
