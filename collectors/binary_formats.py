"""Binary inputs recognised by their magic bytes, and the command that reads each.

A kernel log is text. A file that starts with another format's signature (a
perf.data recording, a dump, a trace-cmd trace.dat, a slab store) was given to
the wrong command: reading it as text would find nothing and say so, which is
an answer without the power to find anything. Such an input is refused in one
line that names what the file is and which command reads it (for a compressed
file or archive kforensic does not unpack, lz4 or zip: the command that does).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from forensics.errors import InputError


@dataclass(frozen=True)
class BinaryFormat:
    """A file format known by its first bytes (at ``offset``: a tar header's "ustar" is at byte 257)."""

    magic: bytes
    what: str
    reader: str  # the kforensic command line that reads it; for an archive, the command that unpacks it
    archive: bool = False  # a compressed file or archive kforensic does not unpack: the text is inside it
    offset: int = 0


#: Specific to generic; each magic is the format's documented file signature.
BINARY_FORMATS: tuple[BinaryFormat, ...] = (
    BinaryFormat(b"PERFILE2", "a perf.data recording", "kforensic profile FILE"),
    BinaryFormat(b"\x17\x08Dtracing", "a trace-cmd trace.dat recording", "kforensic trace FILE"),
    BinaryFormat(b"\xc1\x1f\xfc\xc1", "a CTF (LTTng) stream file", "kforensic trace TRACE_DIR"),
    BinaryFormat(b"\x75\x57\x1f\x75", "packetized CTF (LTTng) metadata", "kforensic trace TRACE_DIR"),
    BinaryFormat(b"KDUMP   ", "a kdump-compressed crash dump", "kforensic vmcore FILE"),
    BinaryFormat(b"makedumpfile", "a flattened makedumpfile crash dump", "kforensic vmcore FILE"),
    BinaryFormat(b"SQLite format 3\x00", "a SQLite database (a slab store?)", "kforensic leaks --store FILE"),
    BinaryFormat(b"\x7fELF", "an ELF file", "kforensic vmcore DUMP --vmlinux FILE"),  # told apart by _elf
    # Compressed files and archives not read as they are (gzip, xz, zstd and bzip2 are: collectors/inputs.py).
    BinaryFormat(b"\x04\x22\x4d\x18", "lz4-compressed", "lz4 -d FILE", archive=True),
    BinaryFormat(b"\x02\x21\x4c\x18", "lz4-compressed (legacy format)", "lz4 -d FILE", archive=True),
    BinaryFormat(b"PK\x03\x04", "a zip archive", "unzip FILE", archive=True),
    BinaryFormat(b"PK\x05\x06", "an empty zip archive", "unzip -l FILE", archive=True),
    BinaryFormat(b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive", "7z x FILE", archive=True),
    BinaryFormat(b"Rar!\x1a\x07", "a RAR archive", "unrar x FILE", archive=True),
    BinaryFormat(b"\x89LZO\x00\r\n\x1a\n", "lzop-compressed", "lzop -d FILE", archive=True),
    BinaryFormat(b"LZIP", "lzip-compressed", "lzip -d FILE", archive=True),
    BinaryFormat(b"\x1f\x9d", "compress(1)-compressed (.Z)", "uncompress FILE", archive=True),
    BinaryFormat(b"ustar", "a tar archive", "tar -xf FILE", archive=True, offset=257),
)


#: e_type values (ELF gABI): what an ELF file is, as its header says.
ET_REL, ET_EXEC, ET_DYN, ET_CORE = 1, 2, 3, 4
_VMCORE = "kforensic vmcore DUMP --vmlinux FILE"


def _kernel_segment(head: bytes, little: bool, wide: bool) -> bool | None:
    """Whether a loadable segment of the ELF file ``head`` starts at a kernel address (vmlinux's do; a program's and
    a library's do not); None when its program headers are not in ``head``."""
    order = "<" if little else ">"
    if wide:
        phoff, phentsize, phnum = (
            struct.unpack_from(order + "Q", head, 32)[0],
            *struct.unpack_from(order + "HH", head, 54),
        )
        kernel, vaddr_at, vaddr_fmt = 1 << 63, 16, "Q"
    else:
        phoff, phentsize, phnum = (
            struct.unpack_from(order + "I", head, 28)[0],
            *struct.unpack_from(order + "HH", head, 42),
        )
        kernel, vaddr_at, vaddr_fmt = 0xC0000000, 8, "I"  # the lowest split a 32-bit kernel uses (3G/1G)
    if not phnum or phoff + phnum * phentsize > len(head):
        return None
    for at in range(phoff, phoff + phnum * phentsize, phentsize):
        (p_type,) = struct.unpack_from(order + "I", head, at)
        (vaddr,) = struct.unpack_from(order + vaddr_fmt, head, at + vaddr_at)
        if p_type == 1 and vaddr >= kernel:  # PT_LOAD
            return True
    return False


def _elf(head: bytes) -> BinaryFormat:
    """The ELF file ``head`` starts, named by what its header says (e_type; a kernel image by a segment at a kernel
    address): calling every ELF file "a crash dump, vmlinux or module" named /bin/true one."""
    generic = BinaryFormat(b"\x7fELF", "an ELF file", _VMCORE)
    if len(head) < 64 or head[4] not in (1, 2) or head[5] not in (1, 2):
        return generic
    little, wide = head[5] == 1, head[4] == 2
    (e_type,) = struct.unpack_from("<H" if little else ">H", head, 16)
    if e_type == ET_CORE:
        return BinaryFormat(b"\x7fELF", "an ELF core file (a crash dump, or a process's core)", _VMCORE)
    if e_type == ET_REL:
        return BinaryFormat(
            b"\x7fELF",
            "an ELF relocatable object (a kernel module or an object file)",
            "kforensic vmcore DUMP --vmlinux VMLINUX --module-debug FILE",
        )
    if e_type in (ET_EXEC, ET_DYN):
        kernel = _kernel_segment(head, little, wide)
        if kernel:
            return BinaryFormat(b"\x7fELF", "an ELF kernel image (vmlinux)", _VMCORE)
        if kernel is False:
            return BinaryFormat(
                b"\x7fELF",
                "an ELF program or shared library (no kernel code)",
                "perf record -g -- FILE && kforensic profile perf.data",
            )
        return BinaryFormat(b"\x7fELF", "an ELF executable (a program or a vmlinux)", _VMCORE)
    return generic


def binary_format(head: bytes) -> BinaryFormat | None:
    """The binary format ``head`` (a file's first bytes) starts with, or None for anything else."""
    known = next((f for f in BINARY_FORMATS if head.startswith(f.magic, f.offset)), None)
    return _elf(head) if known is not None and known.magic == b"\x7fELF" else known


@dataclass(frozen=True)
class TextInput:
    """The text a command reads, as its refusal of another format names it."""

    noun: str  # what the input is not: "a kernel log"
    inside: str  # what to give from inside an archive: "the log"
    reads: str  # what the command reads, said after the reader of the refused file: "kforensic dmesg reads ..."


def signature(known: BinaryFormat) -> str:
    """Where ``known``'s magic was seen, as its text where it is text ('PERFILE2', 'SQLite format 3'), else as hex
    bytes (lz4's 04 22 4d 18): a repr's ``b'\\x7fELF'`` read as line noise."""
    text = known.magic.rstrip(b"\x00").decode("latin-1")
    shown = repr(text) if text.isascii() and text.isprintable() else known.magic.hex(" ")
    return f"it starts with {shown}" if not known.offset else f"{shown} at byte {known.offset}"


def refusal(source: str, head: bytes, reader: TextInput) -> InputError | None:
    """The one-line refusal of ``source`` when its first bytes ``head`` are another command's file (perf.data, a
    dump, trace.dat...): what it is, the signature that says so, and the command that reads it; for a compressed
    file or archive kforensic does not unpack (lz4, zip), to unpack it first.  None when ``head`` is no known
    binary format (text, or bytes the reader judges itself)."""
    known = binary_format(head)
    if known is None:
        return None
    if known.archive:
        return InputError(
            f"{source}: not {reader.noun} as it is: {known.what} ({signature(known)})",
            hint=f"unpack it first (`{known.reader}`) and give {reader.inside} inside; gzip, xz, zstd and bzip2 are "
            "read as they are",
        )
    return InputError(
        f"{source}: not {reader.noun}: {known.what} ({signature(known)})",
        hint=f"read it with `{known.reader}`; {reader.reads}",
    )


#: Bytes of a text input's start judged for being text.
TEXT_SAMPLE = 64 << 10
#: The share of the sample's bytes that are control bytes (not tab, newline, form feed...) or not UTF-8, past which
#: the input is no text: random bytes have ~50%; a log with some Latin-1 words or a few NULs of a serial console, ~0.
NOT_TEXT_SHARE = 0.10
_CONTROL = bytes([*range(0x09), *range(0x0E, 0x20), 0x7F])
_NOT_CONTROL = bytes(sorted(set(range(256)) - set(_CONTROL)))


def not_text(sample: bytes, decoded_from: str | None = None) -> str | None:
    """Why ``sample`` (an input's first bytes, at most :data:`TEXT_SAMPLE` of them are judged) is no text, or None
    when it is text (or empty).  ``decoded_from``: the encoding the sample was decoded from into UTF-8 (a file
    sniffed as UTF-16): its bytes are then not the file's, and the reason says so."""
    sample = sample[:TEXT_SAMPLE]
    if not sample:
        return None
    control = len(sample.translate(None, _NOT_CONTROL))
    invalid = sample.decode("utf-8", "replace").count("\ufffd")
    share = (control + invalid) / len(sample)
    if share <= NOT_TEXT_SHARE:
        return None
    if decoded_from is not None:
        # "\0\0\0\n" is sniffed as UTF-16 BE: 4 bytes of the file are 2 characters, judged re-encoded.
        return (
            f"{share:.0%} of the first {len(sample):,} bytes of its text, read as {decoded_from}, are control bytes or "
            f"not {decoded_from}"
        )
    return f"{share:.0%} of its first {len(sample):,} bytes are control bytes or not UTF-8"
