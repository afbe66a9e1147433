"""Recognising a dump file before drgn opens it: format, dump level, truncation.

drgn (through libkdumpfile) reports a damaged dump as an obscure error on the
first read that misses; reading the headers here first lets kforensic say in
one line what is wrong with the file and what to do.  The layouts are those
makedumpfile writes (its diskdump_mod.h) and the ELF core format.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass
from pathlib import Path

from forensics.errors import InputError

KDUMP_SIGNATURE = b"KDUMP   "
FLATTENED_SIGNATURE = b"makedumpfile\0"
ELF_MAGIC = b"\x7fELF"
ET_CORE = 4
PT_LOAD = 1

#: makedumpfile's dump level bits (-d): which kinds of pages were left out.
DUMP_LEVEL_BITS = (
    (1, "zero pages"),
    (2, "page cache pages"),
    (4, "private page cache pages"),
    (8, "user process pages"),
    (16, "free pages"),
)


class DumpFormat(enum.Enum):
    """The container format of a dump file."""

    KDUMP_COMPRESSED = "kdump-compressed"
    FLATTENED = "makedumpfile-flattened"
    ELF = "elf"


@dataclass(frozen=True)
class DumpHeader:
    """What the dump's headers say about it."""

    format: DumpFormat
    size: int
    dump_level: int | None  # None for ELF dumps, which carry no level
    release: str | None  # utsname release from a kdump-compressed header
    machine: str | None
    crash_time: float | None
    nr_cpus: int | None
    page_count: int | None  # pages stored in the dump

    def filtered(self) -> str:
        """What makedumpfile filtered out, as one phrase."""
        if self.dump_level is None:
            return "nothing filtered (ELF dump)" if self.format is DumpFormat.ELF else "unknown"
        if self.dump_level == 0:
            return "dump level 0: nothing filtered"
        kinds = [what for bit, what in DUMP_LEVEL_BITS if self.dump_level & bit]
        return f"dump level {self.dump_level}: excluded {', '.join(kinds)}"


def _cstr(raw: bytes) -> str:
    return raw.split(b"\0", 1)[0].decode("ascii", errors="replace")


def _read_kdump(path: Path, data_head: bytes, size: int) -> DumpHeader:
    if len(data_head) < 464:
        raise InputError(f"{path}: truncated kdump header ({size} bytes)", hint="the dump is incomplete; copy it again")
    release = _cstr(data_head[12 + 2 * 65 : 12 + 3 * 65])
    machine = _cstr(data_head[12 + 4 * 65 : 12 + 5 * 65])
    tv_sec, _tv_usec = struct.unpack_from("<qq", data_head, 408)
    block_size, sub_hdr_size, bitmap_blocks = struct.unpack_from("<iiI", data_head, 428)
    nr_cpus = struct.unpack_from("<i", data_head, 460)[0]
    if block_size <= 0 or block_size > 1 << 20 or sub_hdr_size < 0:
        raise InputError(f"{path}: corrupt kdump header (block size {block_size})", hint="the dump is damaged")
    with path.open("rb") as f:
        f.seek(block_size)
        sub = f.read(16)
        dump_level = struct.unpack_from("<i", sub, 8)[0] if len(sub) >= 12 else None
        bitmap_off = (1 + sub_hdr_size) * block_size
        bitmap_len = bitmap_blocks * block_size
        f.seek(bitmap_off + bitmap_len // 2)
        bitmap2 = f.read(bitmap_len // 2)
        if len(bitmap2) < bitmap_len // 2:
            raise _truncated(path, size, bitmap_off + bitmap_len)
        pages = int.from_bytes(bitmap2, "little").bit_count()
        desc_off = bitmap_off + bitmap_len
        desc_len = pages * 24
        if desc_off + desc_len > size:
            raise _truncated(path, size, desc_off + desc_len)
        f.seek(desc_off)
        table = f.read(desc_len)
    end = 0
    for offset, length in struct.iter_unpack("<qI12x", table) if table else ():
        end = max(end, offset + length)
    if end > size:
        raise _truncated(path, size, end)
    return DumpHeader(
        DumpFormat.KDUMP_COMPRESSED,
        size,
        dump_level,
        release or None,
        machine or None,
        float(tv_sec) if tv_sec > 0 else None,
        nr_cpus if nr_cpus > 0 else None,
        pages,
    )


def _read_elf(path: Path, head: bytes, size: int) -> DumpHeader:
    if len(head) < 64 or head[4] != 2 or head[5] != 1:
        raise InputError(f"{path}: not a 64-bit little-endian ELF core", hint="give a vmcore written by kdump")
    e_type, e_machine = struct.unpack_from("<HH", head, 16)
    if e_type != ET_CORE:
        raise InputError(
            f"{path}: an ELF file but not a core dump (type {e_type})",
            hint="this looks like a program or vmlinux; give the vmcore (use --vmlinux for the kernel image)",
        )
    e_phoff = struct.unpack_from("<Q", head, 32)[0]
    e_phentsize, e_phnum = struct.unpack_from("<HH", head, 54)
    with path.open("rb") as f:
        f.seek(e_phoff)
        table = f.read(e_phentsize * e_phnum)
    if len(table) < e_phentsize * e_phnum:
        raise _truncated(path, size, e_phoff + e_phentsize * e_phnum)
    end = 0
    for i in range(e_phnum):
        p_type, _flags, p_offset, _vaddr, _paddr, p_filesz = struct.unpack_from("<IIQQQQ", table, i * e_phentsize)
        if p_type == PT_LOAD:
            end = max(end, p_offset + p_filesz)
    if end > size:
        raise _truncated(path, size, end)
    machine = {62: "x86_64", 183: "aarch64"}.get(e_machine, f"ELF machine {e_machine}")
    return DumpHeader(DumpFormat.ELF, size, None, None, machine, None, None, None)


def _read_flattened(path: Path, size: int) -> DumpHeader:
    """Walk the records of makedumpfile's flattened format (``-F``) to its end marker.

    After a 4096-byte header come records of (offset, size) as big-endian int64
    followed by the data to put at that offset of the kdump-compressed file; a
    record with offset -1 ends the stream.  A file without it was cut short.
    """
    disk: bytes = b""
    sub: bytes = b""
    with path.open("rb") as f:
        f.seek(4096)
        while True:
            record = f.read(16)
            if len(record) < 16:
                raise _cut_stream(path, size)
            offset, length = struct.unpack(">qq", record)
            if offset == -1:
                break
            if offset < 0 or length < 0:
                raise InputError(f"{path}: corrupt flattened dump record at byte {f.tell() - 16}")
            if offset == 0 and not disk:
                disk = f.read(length)
                continue
            block = struct.unpack_from("<i", disk, 428)[0] if len(disk) >= 432 else -1
            if offset == block and not sub:
                sub = f.read(length)
                continue
            f.seek(length, 1)
            if f.tell() > size:
                raise _cut_stream(path, size)
    level = struct.unpack_from("<i", sub, 8)[0] if len(sub) >= 12 else None
    release = _cstr(disk[12 + 2 * 65 : 12 + 3 * 65]) if len(disk) >= 464 else None
    machine = _cstr(disk[12 + 4 * 65 : 12 + 5 * 65]) if len(disk) >= 464 else None
    return DumpHeader(DumpFormat.FLATTENED, size, level, release or None, machine or None, None, None, None)


def _cut_stream(path: Path, size: int) -> InputError:
    return InputError(
        f"{path}: truncated dump: the flattened stream ends at byte {size} without its end marker",
        hint="the copy or the capture was cut short; copy the dump again or re-run makedumpfile",
    )


def _truncated(path: Path, size: int, needed: int) -> InputError:
    share = 100.0 * size / needed if needed else 0.0
    return InputError(
        f"{path}: truncated dump: {size} of at least {needed} bytes ({share:.0f}%)",
        hint="the copy or the capture was cut short; copy the dump again or re-run makedumpfile",
    )


def read_dump_header(path: Path) -> DumpHeader:
    """Identify a dump file and check it is complete; raise :class:`InputError` otherwise."""
    try:
        size = path.stat().st_size
        with path.open("rb") as f:
            head = f.read(4096)
    except IsADirectoryError:
        raise InputError(f"cannot read {path}: it is a directory", hint="give the dump file inside it") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}", hint="check the path and permissions") from None
    try:
        if head.startswith(KDUMP_SIGNATURE):
            return _read_kdump(path, head, size)
        if head.startswith(FLATTENED_SIGNATURE):
            return _read_flattened(path, size)
        if head.startswith(ELF_MAGIC):
            return _read_elf(path, head, size)
    except (OSError, ValueError, OverflowError, struct.error) as exc:
        # Header fields that point nowhere (a negative or huge offset): a damaged header, not a bug.
        raise InputError(
            f"{path}: corrupt dump header ({exc})", hint="the dump is damaged; copy it again or re-run makedumpfile"
        ) from None
    what = "an empty file" if size == 0 else "not a kernel crash dump (no kdump, flattened or ELF core signature)"
    raise InputError(f"{path}: {what}", hint="give the vmcore that kdump wrote, e.g. /var/crash/<stamp>/dump.<stamp>")
