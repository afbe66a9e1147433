"""A dump cut short: reads of the pages whose data lies past the cut fail as "not in dump", never as zeros.

libkdumpfile, which drgn reads kdump files with, does not check a page's data against the file's
size: a page past the end reads as zeros (stored uncompressed), fails to decompress, or faults the
process (SIGBUS on the mapped file).  So before anything is read, drgn is given its own readers: the
missing page frames raise :class:`drgn.FaultError` at their physical addresses, and virtual
addresses are translated here (the kernel's page tables, as the dump holds them) and read
physically, so a virtual read of a missing page fails the same way, with its virtual address.
Only x86-64's four- and five-level tables are walked; elsewhere a cut dump is still refused.
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

import drgn

from forensics.vmcore.dumpfile import DumpCut

_KERNEL_MAP = 0xFFFFFFFF80000000  # __START_KERNEL_map: where the kernel image is mapped on x86-64
_PRESENT, _HUGE = 0x1, 0x80
_FRAME = 0x000FFFFFFFFFF000  # the physical frame bits of an x86-64 page-table entry
_PAGE = 4096


def _vmcoreinfo(path: Path) -> tuple[int, str]:
    """``phys_base`` and the VMCOREINFO text from a kdump-compressed file's sub header."""
    with path.open("rb") as f:
        block_size = struct.unpack_from("<i", f.read(432), 428)[0]
        f.seek(block_size)
        sub = f.read(48)
        phys_base = struct.unpack_from("<q", sub, 0)[0]
        offset, size = struct.unpack_from("<qQ", sub, 32)
        f.seek(offset)
        return phys_base, f.read(min(size, 1 << 20)).decode("ascii", errors="replace")


class CutGuard:
    """drgn's memory readers for a cut dump: missing frames fault, virtual reads go through the page tables."""

    def __init__(self, prog: drgn.Program, cut: DumpCut, pgd: int, five_level: bool) -> None:
        self._prog = prog
        self._cut = cut
        self._pgd = pgd
        self._shifts = (48, 39, 30, 21, 12) if five_level else (39, 30, 21, 12)
        self._tables: dict[int, bytes] = {}

    def missing(self, address: int, count: int, offset: int, physical: bool) -> bytes:
        """The reader of a missing frame: always a fault, naming why."""
        raise drgn.FaultError(f"past the cut: {self._cut.where(address // _PAGE)}", address)

    def _table(self, physical: int) -> bytes:
        table = self._tables.get(physical)
        if table is None:
            table = self._tables[physical] = self._prog.read(physical, _PAGE, True)
        return table

    def translate(self, address: int) -> int:
        """The physical address behind a kernel virtual address (FaultError when no entry maps it)."""
        base = self._pgd
        for shift in self._shifts:
            try:
                entry: int = struct.unpack_from("<Q", self._table(base), (address >> shift & 511) * 8)[0]
            except drgn.FaultError as exc:  # the table itself is missing: the fault names the virtual address
                why = f"its page table at physical {base:#x} is not in the dump ({exc.message})"
                raise drgn.FaultError(why, address) from None
            if not entry & _PRESENT:
                raise drgn.FaultError("no page maps it in the kernel's page tables", address)
            frame = entry & _FRAME
            if shift in (30, 21) and entry & _HUGE:  # a 1 GiB or 2 MiB page
                return (frame & ~((1 << shift) - 1)) | (address & ((1 << shift) - 1))
            base = frame
        return base | (address & (_PAGE - 1))

    def virtual(self, address: int, count: int, offset: int, physical: bool) -> bytes:
        """Read ``count`` bytes at a virtual address page by page, through the physical readers."""
        out = bytearray()
        while count:
            n = min(count, _PAGE - (address & (_PAGE - 1)))
            try:
                out += self._prog.read(self.translate(address), n, True)
            except drgn.FaultError as exc:
                if exc.address == address:
                    raise
                raise drgn.FaultError(str(exc.message), address) from None
            address += n
            count -= n
        return bytes(out)


def guard(prog: drgn.Program, path: Path, cut: DumpCut, machine: str | None) -> CutGuard | None:
    """Give drgn readers that fault on the missing frames; None when this dump's page tables cannot be walked."""
    if machine != "x86_64":
        return None
    phys_base, info = _vmcoreinfo(path)
    found = re.search(r"^SYMBOL\(init_top_pgt\)=([0-9a-f]+)$", info, re.M)
    if found is None:
        return None
    five = re.search(r"^NUMBER\(pgtable_l5_enabled\)=1$", info, re.M) is not None
    reader = CutGuard(prog, cut, int(found.group(1), 16) - _KERNEL_MAP + phys_base, five)
    for pfn in sorted(cut.frames()):
        prog.add_memory_segment(pfn * _PAGE, _PAGE, reader.missing, True)
    # Added last, so it takes precedence over libkdumpfile's reader of the whole virtual space.
    prog.add_memory_segment(0, 0xFFFFFFFFFFFFFFFF, reader.virtual, False)
    return reader
