"""Recognising a dump file before drgn opens it: format, dump level, truncation.

drgn (through libkdumpfile) reports a damaged dump as an obscure error on the
first read that misses; reading the headers here first lets kforensic say in
one line what is wrong with the file and what to do.  The layouts are those
makedumpfile writes (its diskdump_mod.h) and the ELF core format.
"""

from __future__ import annotations

import enum
import math
import os
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
    page_table: int | None = None  # file offset of the page descriptors (kdump-compressed only)
    block_size: int | None = None  # the page size of a kdump-compressed dump
    cut: DumpCut | None = None  # the page data was cut short (the headers and page table are whole)

    def filtered(self) -> str:
        """What makedumpfile filtered out, as one phrase."""
        if self.dump_level is None:
            return "nothing filtered (ELF dump)" if self.format is DumpFormat.ELF else "unknown"
        if self.dump_level == 0:
            return "dump level 0: nothing filtered"
        kinds = [what for bit, what in DUMP_LEVEL_BITS if self.dump_level & bit]
        return f"dump level {self.dump_level}: excluded {', '.join(kinds)}"


#: What to do about a dump cut short: the hint wherever the cut is why the dump, its log or its state cannot be read.
CUT_HINT = "the copy or the capture was cut short; copy the dump again or re-run makedumpfile"


def share_text(size: int, needed: int) -> str:
    """How much of ``needed`` bytes a file of ``size`` bytes holds: rounded down, so a cut file never reads 100%."""
    share = math.floor(1000 * size / needed) / 10 if needed else 0.0
    missing = needed - size
    return f"{share:.1f}%, {missing} byte{'s' if missing != 1 else ''} missing"


@dataclass(frozen=True)
class DumpCut:
    """A kdump-compressed dump whose page data ends early: which stored pages lie past the end of the file.

    The headers, bitmaps and page table come first in the file, so a copy cut short loses only the
    data of the pages stored last; everything else can still be read (crash and drgn do).
    """

    size: int  # bytes in the file
    needed: int  # bytes the page table says the page data reaches
    stored: int  # pages the dump stores
    missing: tuple[tuple[int, int, int], ...]  # (page frame, file offset, stored size) of each page past the cut

    def frames(self) -> frozenset[int]:
        """The page frames whose data lies past the cut."""
        return frozenset(pfn for pfn, _off, _len in self.missing)

    def where(self, pfn: int) -> str:
        """Where a missing frame's data was stored, as a phrase."""
        for frame, offset, length in self.missing:
            if frame == pfn:
                return f"its data, bytes {offset}..{offset + length - 1}, runs past the file's end at byte {self.size}"
        return f"the file ends at byte {self.size}"

    def ranges(self, limit: int = 4) -> str:
        """The missing page frames as ranges (``0xf749-0xf75f, 0xffd0-0xffd5``)."""
        runs: list[list[int]] = []
        for pfn in sorted(self.frames()):
            if runs and pfn == runs[-1][1] + 1:
                runs[-1][1] = pfn
            else:
                runs.append([pfn, pfn])
        text = ", ".join(f"{lo:#x}" if lo == hi else f"{lo:#x}-{hi:#x}" for lo, hi in runs[:limit])
        return text + (f" and {len(runs) - limit} more ranges" if len(runs) > limit else "")

    def truncated(self, path: Path | str) -> str:
        """The start of the one line that refuses (part of) the dump for the cut: how much of it is there."""
        share = share_text(self.size, self.needed)
        return f"{path}: truncated dump: {self.size} of at least {self.needed} bytes ({share})"

    def summary(self) -> str:
        """The short form, for a report's summary: how much is there and which pages are not."""
        return (
            f"{share_text(self.size, self.needed)}: the data of {len(self.frames())} of {self.stored} stored pages "
            f"(page frames {self.ranges()}) lay past the cut; reads from them are 'not in dump'"
        )

    def warning(self) -> str:
        """The line a report leads with: what is missing, and what reads from it say."""
        pages = len(self.frames())
        return (
            f"the dump is cut short: {self.size} of {self.needed} bytes ({share_text(self.size, self.needed)}); "
            f"the data of {pages} of its {self.stored} stored pages lay past the cut (bytes {self.size}.."
            f"{self.needed - 1}; page frames {self.ranges()}), and every read from them is 'not in dump' "
            "(nothing is guessed for them); the rest was analysed: copy the dump again if the original still exists"
        )


def _cstr(raw: bytes) -> str:
    return raw.split(b"\0", 1)[0].decode("ascii", errors="replace")


#: Page descriptor flags makedumpfile writes: zlib, lzo, snappy, zstd (and the excluded/incomplete bits).
_KNOWN_PAGE_FLAGS = 0x1 | 0x2 | 0x4 | 0x8 | 0x10 | 0x20
_MAX_HEADER_VERSION = 32  # makedumpfile writes 6; anything far above is a damaged field


def _corrupt(path: Path, what: str) -> InputError:
    return InputError(
        f"{path}: the dump header is corrupt ({what})",
        hint="the dump is damaged, not cut short: copy it again from the original (a header cannot be repaired)",
    )


def _check_kdump_fields(path: Path, head: bytes, sub: bytes) -> None:
    """Refuse header values no makedumpfile writes (the file is damaged, whatever its size says)."""
    version = struct.unpack_from("<i", head, 8)[0]
    block_size, sub_hdr_size, bitmap_blocks, max_mapnr = struct.unpack_from("<iiII", head, 428)
    nr_cpus = struct.unpack_from("<i", head, 460)[0]
    if not 1 <= version <= _MAX_HEADER_VERSION:
        raise _corrupt(path, f"header_version = {version}")
    if block_size < 1024 or block_size > 1 << 20 or block_size & (block_size - 1):
        raise _corrupt(path, f"block_size = {block_size}, not a page size")
    if not 0 <= sub_hdr_size <= 1024:
        raise _corrupt(path, f"sub_hdr_size = {sub_hdr_size} blocks")
    if not 0 <= nr_cpus <= 1 << 16:
        raise _corrupt(path, f"nr_cpus = {nr_cpus}")
    if len(sub) >= 12 and not 0 <= struct.unpack_from("<i", sub, 8)[0] <= 31:
        raise _corrupt(path, f"dump_level = {struct.unpack_from('<i', sub, 8)[0]}")
    pages = max_mapnr
    if version >= 6 and len(sub) >= 104:  # max_mapnr_64 in the sub header; the 32-bit field saturates
        pages = struct.unpack_from("<Q", sub, 96)[0]
        if max_mapnr != min(pages, 0xFFFFFFFF):
            raise _corrupt(path, f"max_mapnr = {max_mapnr} but max_mapnr_64 = {pages}")
    # Two bitmaps of one bit per page frame, each rounded up to whole blocks (makedumpfile and QEMU alike);
    # a block of slack is allowed.
    need = -(-pages // (8 * block_size)) * block_size
    half = bitmap_blocks * block_size // 2
    if bitmap_blocks % 2 or not need <= half <= need + block_size:
        raise _corrupt(path, f"bitmap_blocks = {bitmap_blocks}, for {pages} page frames of {block_size} bytes")


def _check_descriptors(path: Path, table: bytes, data_start: int, block_size: int) -> int:
    """Where the page data ends; raises when a descriptor cannot be one makedumpfile wrote.

    Pages are written one after the other from ``data_start`` (one shared zero
    page at most), so no page can end beyond ``data_start`` plus the sizes of
    all pages: a descriptor that does is damaged, while a dump that was merely
    cut short has sane descriptors pointing past its end.
    """
    descriptors = list(struct.iter_unpack("<qIIQ", table))
    limit = data_start + sum(d[1] for d in descriptors) + block_size
    end = 0
    for i, (offset, length, flags, _page_flags) in enumerate(descriptors):
        if offset < data_start or offset + length > limit or length > block_size or flags & ~_KNOWN_PAGE_FLAGS:
            raise _corrupt(
                path,
                f"page descriptor {i}: offset = {offset}, size = {length}, flags = {flags:#x}; the page data "
                f"lies in bytes {data_start}..{limit} and a page is at most {block_size} bytes",
            )
        end = max(end, offset + length)
    return end


def _read_kdump(path: Path, data_head: bytes, size: int) -> DumpHeader:
    if len(data_head) < 464:
        raise InputError(f"{path}: truncated kdump header ({size} bytes)", hint="the dump is incomplete; copy it again")
    release = _cstr(data_head[12 + 2 * 65 : 12 + 3 * 65])
    machine = _cstr(data_head[12 + 4 * 65 : 12 + 5 * 65])
    tv_sec, _tv_usec = struct.unpack_from("<qq", data_head, 408)
    block_size, sub_hdr_size, bitmap_blocks = struct.unpack_from("<iiI", data_head, 428)
    nr_cpus = struct.unpack_from("<i", data_head, 460)[0]
    if block_size <= 0 or block_size > 1 << 20 or sub_hdr_size < 0:
        _check_kdump_fields(path, data_head, b"")
    with path.open("rb") as f:
        f.seek(block_size)
        sub = f.read(128)
        _check_kdump_fields(path, data_head, sub)
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
    end = _check_descriptors(path, table, desc_off + desc_len, block_size)
    cut = _cut_pages(size, end, bitmap2, table) if end > size else None
    return DumpHeader(
        DumpFormat.KDUMP_COMPRESSED,
        size,
        dump_level,
        release or None,
        machine or None,
        float(tv_sec) if tv_sec > 0 else None,
        nr_cpus if nr_cpus > 0 else None,
        pages,
        desc_off,
        block_size,
        cut,
    )


def _cut_pages(size: int, needed: int, bitmap2: bytes, table: bytes) -> DumpCut:
    """The pages whose data lies past ``size``: the n-th descriptor is the n-th frame set in the dumped bitmap."""
    past = [
        (i, offset, length)
        for i, (offset, length, _flags, _pf) in enumerate(struct.iter_unpack("<qIIQ", table))
        if offset + length > size
    ]
    wanted = {i for i, _o, _l in past}
    frames: dict[int, int] = {}
    first = min(wanted, default=0)
    seen = 0
    for byte_index, byte in enumerate(bitmap2):
        count = byte.bit_count()
        if seen + count > first:  # bits are looked at only from the first page past the cut on
            for bit in range(8):
                if byte >> bit & 1:
                    if seen in wanted:
                        frames[seen] = byte_index * 8 + bit
                    seen += 1
        else:
            seen += count
    return DumpCut(size, needed, len(table) // 24, tuple((frames[i], o, n) for i, o, n in past if i in frames))


#: Compressed pages decompressed by :func:`check_pages` at most (evenly spread beyond): about 0.5 s.
PAGE_CHECK_LIMIT = 50_000
_ZLIB = 0x1


@dataclass(frozen=True)
class PageCheck:
    """Whether the dump's zlib-compressed pages decompress to whole pages (a damaged copy's do not)."""

    compressed: int  # zlib pages in the dump
    checked: int  # of which were decompressed (all, or an even sample of PAGE_CHECK_LIMIT)
    failed: int
    first_failures: tuple[int, ...]  # file offsets of the first pages that failed
    unreadable: tuple[tuple[int, int], ...] = ()  # byte ranges [start, end) the file system failed to read (EIO)

    def unreadable_text(self) -> str | None:
        """One line naming the byte ranges the dump's storage could not read, else None."""
        if not self.unreadable:
            return None
        ranges = ", ".join(f"bytes {lo}..{hi - 1}" for lo, hi in self.unreadable[:3])
        more = f" and {len(self.unreadable) - 3} more ranges" if len(self.unreadable) > 3 else ""
        return (
            f"the dump cannot be read at {ranges}{more} (I/O error: a failing disk or network file system); "
            "the analysis went on without those pages, so values on them are missing: copy the dump from "
            "the original if you can (ddrescue reads around bad ranges)"
        )

    def warning(self) -> str | None:
        """One line for the report when pages failed, else None."""
        if not self.failed:
            return None
        where = ", ".join(f"byte {off}" for off in self.first_failures)
        sample = "" if self.checked == self.compressed else f" (an even sample of {self.checked})"
        return (
            f"the dump is damaged: {self.failed} of {self.checked} compressed pages checked{sample} fail to "
            f"decompress (first at {where}); values read from those pages are missing or wrong, so names, "
            "pointers and counts in this report may be garbage: copy the dump again from the original"
        )


def check_pages(path: Path, header: DumpHeader, limit: int = PAGE_CHECK_LIMIT) -> PageCheck | None:
    """Decompress the zlib pages of a kdump-compressed dump (a sample when there are more than ``limit``).

    None for formats whose pages cannot be checked this way (ELF, flattened).
    lzo, snappy and zstd pages are not checked (no decompressor in the
    standard library); uncompressed pages carry nothing to check.
    """
    import zlib

    if header.page_table is None or header.page_count is None or header.block_size is None:
        return None
    with path.open("rb") as f:
        f.seek(header.page_table)
        table = f.read(header.page_count * 24)
        zpages = [
            (off, size)
            for off, size, flags, _pf in struct.iter_unpack("<qIIQ", table)
            if flags & _ZLIB and off + size <= header.size  # (a page past a cut is missing, not damaged)
        ]
        step = max(1.0, len(zpages) / limit)
        picked = [zpages[int(i * step)] for i in range(min(len(zpages), limit))]
        failed: list[int] = []
        unreadable: list[tuple[int, int]] = []
        for off, size in picked:
            try:
                data = os.pread(f.fileno(), size, off)
            except OSError:  # EIO: the storage cannot give these bytes; the analysis goes on without them
                if unreadable and unreadable[-1][1] >= off:
                    unreadable[-1] = (unreadable[-1][0], max(unreadable[-1][1], off + size))
                else:
                    unreadable.append((off, off + size))
                continue
            try:
                ok = len(zlib.decompress(data)) == header.block_size
            except zlib.error:
                ok = False
            if not ok:
                failed.append(off)
    return PageCheck(len(zpages), len(picked), len(failed), tuple(failed[:3]), tuple(unreadable))


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
        hint=CUT_HINT,
    )


def _truncated(path: Path, size: int, needed: int) -> InputError:
    return InputError(
        f"{path}: truncated dump: {size} of at least {needed} bytes ({share_text(size, needed)})",
        hint=CUT_HINT,
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
    hint = "give the vmcore that kdump wrote, e.g. /var/crash/<stamp>/dump.<stamp>"
    for magic, (kind, tool) in _COMPRESSED.items():
        if head.startswith(magic):  # a dump compressed for the copy: said, instead of "not a dump"
            what, hint = f"{kind}-compressed (not a dump as it is)", f"decompress it first: {tool} -k {path.name}"
    if size and not head.strip(b"\0"):
        what += f"; its first {len(head)} bytes are all zero (a sparse or wiped file?)"
    raise InputError(f"{path}: {what}", hint=hint)


#: Compressed files people copy dumps as, by magic bytes: what they are and the tool that undoes them.
_COMPRESSED = {
    b"\x1f\x8b": ("gzip", "gunzip"),
    b"\xfd7zXZ\x00": ("xz", "unxz"),
    b"\x28\xb5\x2f\xfd": ("zstd", "unzstd"),
    b"BZh": ("bzip2", "bunzip2"),
}
