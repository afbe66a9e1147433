"""collectors.binary_formats: an ELF file is named by what its header says, not as "a dump, vmlinux or module"."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from collectors.binary_formats import ET_CORE, ET_DYN, ET_EXEC, ET_REL, binary_format
from forensics.errors import InputError


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


def _refusals(path: Path) -> list[InputError]:
    """What kforensic dmesg, profile and trace say of ``path`` (each command's reader, in-process)."""
    from collectors.kernel_log import log_chunks, open_log
    from collectors.perf_script import read_profile
    from collectors.trace_input import not_a_trace

    out: list[InputError] = []
    with pytest.raises(InputError) as log, open_log(str(path)) as tracked:
        list(log_chunks(tracked))
    out.append(log.value)
    with pytest.raises(InputError) as profile:
        read_profile(str(path))
    out.append(profile.value)
    trace = not_a_trace(str(path), path.read_bytes()[:4096])
    assert trace is not None
    return [*out, trace]


@pytest.mark.parametrize(
    ("head", "what", "seen", "reader"),
    [
        (b"SQLite format 3\x00" + b"\0" * 200, "a SQLite database", "with 'SQLite format 3'", "leaks --store"),
        (_elf64(ET_REL), "an ELF relocatable object", "it starts with 7f 45 4c 46", "--module-debug FILE"),
        (b"\x04\x22\x4d\x18" + bytes(range(256)), "lz4-compressed", "it starts with 04 22 4d 18", "lz4 -d FILE"),
        (b"\0" * 257 + b"ustar\x0000" + b"\0" * 300, "a tar archive", "'ustar' at byte 257", "tar -xf FILE"),
    ],
    ids=["slab-store", "module", "lz4", "tar"],
)
def test_the_three_text_readers_refuse_a_binary_file_alike(
    tmp_path: Path, head: bytes, what: str, seen: str, reader: str
) -> None:
    """dmesg, profile and trace each refuse another command's file in one line: what it is, the signature that says
    so (its text, or its bytes in hex: never a repr's \\x noise), and the command that reads or unpacks it; a
    profile and a trace named no signature (three near-copies of one refusal)."""
    path = tmp_path / "input"
    path.write_bytes(head)
    refused = _refusals(path)
    nouns = ("a kernel log", "a profile", "a trace")
    for error, noun in zip(refused, nouns, strict=True):
        assert error.message.startswith(f"{path}: not {noun}"), error.message
        assert f": {what}" in error.message and f"{seen})" in error.message, error.message
        assert "\\x" not in error.message and "\n" not in error.message, error.message
        assert reader in (error.hint or ""), error.hint
    if "archive" in what or "compressed" in what:  # unpack it first, then give what the command reads
        assert all(" as it is: " in e.message and "unpack it first" in (e.hint or "") for e in refused)
