"""What the dump lacks, and why: a read that lands on memory the dump does not hold.

A kdump-compressed dump carries two bitmaps of page frames: the first marks the frames the
dumped kernel described as RAM, the second those makedumpfile wrote.  A frame in the first and
not in the second was filtered out by the dump level (``-d``); a frame in neither lies outside
the memory the dump covers.  The frame's ``struct page`` (kept at every level: the memory map
is never filtered) then says what kind of page it was, which is what the level filtered on:
free, user (anonymous), page cache, or a slab page whose ``page->mapping`` word happens to be
odd — the mark of an anonymous page, which makedumpfile 1.7.2 applies to slab pages of kernels
that made "slab" a page type (v6.10) and then drops with the user pages.

The explanation replaces the bare "not in dump" of a failed read while a snapshot is collected
(:func:`explaining`); without that context the generic text is given.  Nothing is guessed: a kind
the struct page does not show is said as such.
"""

from __future__ import annotations

import contextlib
import re
import struct
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import drgn

from forensics.vmcore.dumpfile import DUMP_LEVEL_BITS, DumpFormat, DumpHeader
from forensics.vmcore.pages import page_size

_T = TypeVar("_T")


@dataclass
class DumpPages:
    """Which page frames a dump holds, read lazily from its bitmaps (kdump) or segments (ELF)."""

    path: Path
    header: DumpHeader
    _bitmaps: tuple[bytes, bytes] | None = field(default=None, repr=False)
    _segments: tuple[tuple[int, int, int], ...] | None = field(default=None, repr=False)
    _cut: frozenset[int] | None = field(default=None, repr=False)

    def _cut_frames(self) -> frozenset[int]:
        if self._cut is None:
            self._cut = self.header.cut.frames() if self.header.cut is not None else frozenset()
        return self._cut

    def _kdump_bitmaps(self) -> tuple[bytes, bytes]:
        if self._bitmaps is None:
            with self.path.open("rb") as f:
                head = f.read(464)
                block_size, sub_hdr_size, bitmap_blocks = struct.unpack_from("<iiI", head, 428)
                f.seek((1 + sub_hdr_size) * block_size)
                half = bitmap_blocks * block_size // 2
                data = f.read(2 * half)
            self._bitmaps = (data[:half], data[half:])
        return self._bitmaps

    def _elf_segments(self) -> tuple[tuple[int, int, int], ...]:
        """(physical start, bytes in the file, bytes in memory) of each PT_LOAD."""
        if self._segments is None:
            out = []
            with self.path.open("rb") as f:
                head = f.read(64)
                phoff = struct.unpack_from("<Q", head, 32)[0]
                phentsize, phnum = struct.unpack_from("<HH", head, 54)
                f.seek(phoff)
                table = f.read(phentsize * phnum)
            for i in range(phnum):
                p_type, _fl, _off, _vaddr, paddr, filesz, memsz = struct.unpack_from("<IIQQQQQ", table, i * phentsize)
                if p_type == 1:
                    out.append((paddr, filesz, memsz))
            self._segments = tuple(out)
        return self._segments

    def frame(self, pfn: int, page_size: int) -> str:
        """``dumped``, ``filtered`` (RAM the level left out), ``not-ram``, ``unfilled`` (ELF), ``cut`` (its
        data lay past the end of a cut-short file) or ``unknown``."""
        if self.header.cut is not None and pfn in self._cut_frames():
            return "cut"
        if self.header.format is DumpFormat.KDUMP_COMPRESSED:
            ram, dumped = self._kdump_bitmaps()
            byte = pfn // 8
            if byte >= len(ram):
                return "not-ram"
            in_ram = ram[byte] >> (pfn % 8) & 1
            in_dump = dumped[byte] >> (pfn % 8) & 1 if byte < len(dumped) else 0
            if in_dump:
                return "dumped"
            return "filtered" if in_ram else "not-ram"
        if self.header.format is DumpFormat.ELF:
            address = pfn * page_size
            for start, filesz, memsz in self._elf_segments():
                if start <= address < start + memsz:
                    return "dumped" if address < start + filesz else "unfilled"
            return "not-ram"
        return "unknown"


_CURRENT: ContextVar[tuple[drgn.Program, DumpPages] | None] = ContextVar("kforensic_dump_pages", default=None)


@contextlib.contextmanager
def explaining(prog: drgn.Program, pages: DumpPages | None) -> Iterator[None]:
    """While active, :func:`not_in_dump` says why the dump lacks the memory a read needed."""
    token = _CURRENT.set((prog, pages) if pages is not None else None)
    try:
        yield
    finally:
        _CURRENT.reset(token)


#: The lowest page (x86-64, arm64): never mapped, so that a NULL pointer's reads fault.
NULL_PAGE_SIZE = 0x1000


def not_in_dump(exc: Any, what: str | None = None) -> str:
    """The reason text for a read that hit memory the dump does not hold (``what``: the object read)."""
    address = getattr(exc, "address", None)
    if isinstance(address, int) and (address >> 47) not in (0, 0x1FFFF):
        # x86-64/arm64 48-bit virtual addresses: no memory can be there, captured or not.
        return f"no memory at {address:#x}: not a canonical address (the pointer is bogus)"
    if isinstance(address, int) and address < NULL_PAGE_SIZE:
        # Nothing is ever mapped there: a NULL pointer plus an offset, not a page the dump left out.
        return f"no memory at {address:#x}: the NULL page, which no page table maps (a NULL pointer + {address:#x})"
    where = f" at {address:#x}" if isinstance(address, int) else ""
    generic = f"not in dump: memory{where} was not captured (filtered by makedumpfile or not present)"
    current = _CURRENT.get()
    if current is None or not isinstance(address, int):
        return generic
    prog, pages = current
    try:
        return explain(prog, pages, address, what)
    except (drgn.FaultError, LookupError, ValueError, TypeError, OSError, struct.error):
        if pages.header.cut is not None and getattr(exc, "message", None):
            # A cut dump's reads fail with the reason its page-table walk gave (a table past the cut, say).
            return f"not in dump: memory{where}: {exc.message}"
        return generic


def cause_known(exc: Any) -> bool:
    """Whether :func:`not_in_dump` says why the page of a failed read is missing (filtered at a named level, lost to
    the cut, outside the dump's memory, ...): a guess at the cause beside it would contradict it."""
    address = getattr(exc, "address", None)
    current = _CURRENT.get()
    if current is None or not isinstance(address, int):
        return False
    prog, pages = current
    try:
        phys = _physical(prog, address)
        return not isinstance(phys, str) and pages.frame(phys // page_size(prog), page_size(prog)) != "unknown"
    except (drgn.FaultError, LookupError, ValueError, TypeError, OSError, struct.error):
        return False


def walk(items: Iterable[_T], what: str, notes: list[str]) -> Iterator[_T]:
    """Yield from a walk of kernel objects; a node the dump lacks ends it, with a note saying which and why.

    A list or tree whose next node lies on a page the dump does not hold cannot be followed past
    it: what was found before is kept, and ``notes`` says the walk is incomplete.
    """
    found = 0
    iterator = iter(items)
    while True:
        try:
            item = next(iterator)
        except StopIteration:
            return
        except drgn.FaultError as exc:
            notes.append(f"{what}: the walk stopped after {found}: {not_in_dump(exc)}")
            return
        found += 1
        yield item


def _physical(prog: drgn.Program, address: int) -> int | str:
    """The physical address behind a kernel virtual address, or why it cannot be found."""
    from drgn.helpers.linux.mm import follow_phys, in_direct_map, virt_to_phys

    if in_direct_map(prog, address):
        return int(virt_to_phys(prog, address))
    try:
        return int(follow_phys(prog["init_mm"].address_of_(), address))
    except drgn.FaultError as exc:
        where = getattr(exc, "address", None)
        # drgn's fault names the address itself when no entry maps it, the entry's when the table was unreadable
        unread = isinstance(where, int) and where != address
        table = f" (the page table at {where:#x} is not in the dump either)" if unread else ""
        return f"no page maps it in the kernel's page tables{table}"


_VMCOREINFO_NUMBER = re.compile(rb"^NUMBER\((PAGE_\w+_MAPCOUNT_VALUE)\)=(-?\d+)$", re.M)


def _page_types(prog: drgn.Program) -> dict[str, int]:
    """The page types VMCOREINFO names (``PAGE_BUDDY_MAPCOUNT_VALUE``, ``PAGE_SLAB_MAPCOUNT_VALUE``, ...)."""
    try:
        info = prog["VMCOREINFO"].string_()
    except (LookupError, drgn.FaultError):
        return {}
    return {m.group(1).decode(): int(m.group(2)) for m in _VMCOREINFO_NUMBER.finditer(info)}


def _slab_cache_name(prog: drgn.Program, page: drgn.Object) -> str:
    # struct slab split off struct page in commit "mm: Split slab into its own type" (v5.17);
    # before it, page->slab_cache.
    from forensics.vmcore.layouts import has_member

    if has_member(prog, "struct slab", "slab_cache"):
        cache = drgn.cast("struct slab *", page).slab_cache
    else:
        cache = page.slab_cache
    return str(cache.name.string_().decode(errors="replace"))


def page_kind(prog: drgn.Program, pfn: int) -> str:
    """What a page frame's struct page says it was: the kind of page a dump level filters on."""
    from drgn.helpers.linux.mm import PageSlab, compound_head, pfn_to_page

    page = pfn_to_page(prog, pfn)
    try:
        mapping = int(drgn.reinterpret("unsigned long", page.mapping).value_())
        head = compound_head(page)
        slab = bool(PageSlab(head))
    except drgn.FaultError:
        return f"its struct page ({int(page.value_()):#x}) is not in the dump either, so what it held is unknown"
    if slab:
        cache = _slab_cache_name(prog, head)
        text = f"a slab page of cache {cache}"
        if mapping & 1:
            text += (
                f"; its page->mapping word ({mapping:#x}) has the low bit set, the mark of an anonymous page, "
                "so makedumpfile 1.7.2 and older count it as a user page on kernels whose slab pages are a "
                "page type (v6.10 and later), and user pages are among what the level leaves out"
            )
        return text
    types = _page_types(prog)
    mapcount = None
    with contextlib.suppress(LookupError, drgn.FaultError, AttributeError):
        mapcount = int(page._mapcount.counter.value_())
    buddy = types.get("PAGE_BUDDY_MAPCOUNT_VALUE")
    if buddy is not None and mapcount is not None and mapcount == buddy:
        return "a free page (in the buddy allocator)"
    if mapping & 1:
        return "an anonymous (user) page"
    if mapping:
        return f"a page-cache page (page->mapping {mapping:#x})"
    return "a page its struct page marks as none of free, user or page cache (so left out as a page of zeros)"


def _level_text(level: int | None) -> str:
    if level is None:
        return "by makedumpfile"
    kinds = [what.removesuffix(" pages") for bit, what in DUMP_LEVEL_BITS if level & bit]
    left_out = ", ".join(kinds[:-1]) + f" and {kinds[-1]}" if len(kinds) > 1 else "".join(kinds)
    return f"by makedumpfile at dump level {level} (it leaves out {left_out or 'no'} pages)"


def explain(prog: drgn.Program, pages: DumpPages, address: int, what: str | None = None) -> str:
    """Why the dump lacks the memory at ``address``: which page, and whether filtered, not RAM or absent."""
    label = f"{what} at {address:#x}" if what else f"memory at {address:#x}"
    phys = _physical(prog, address)
    if isinstance(phys, str):
        return f"not in dump: {label}: {phys}"
    size = page_size(prog)
    pfn = phys // size
    state = pages.frame(pfn, size)
    if state == "filtered":
        level = _level_text(pages.header.dump_level)
        return f"not in dump: {label} (page frame {pfn:#x}) was filtered out {level}; it was {page_kind(prog, pfn)}"
    if state == "not-ram":
        return f"not in dump: {label} (page frame {pfn:#x}) lies outside the memory the dump describes"
    if state == "cut" and pages.header.cut is not None:
        return f"not in dump: {label} (page frame {pfn:#x}) lies past the cut: {pages.header.cut.where(pfn)}"
    if state == "unfilled":
        return f"not in dump: {label} (page frame {pfn:#x}) lies in a segment the ELF core holds no data for"
    if state == "dumped":
        return f"not readable: {label} (page frame {pfn:#x}) is in the dump but its data could not be read"
    return f"not in dump: {label} (page frame {pfn:#x}) was not captured"


_HEX = re.compile(r"0x[0-9a-f]+")


def condense(notes: list[str]) -> list[str]:
    """The notes with each said once: repeats dropped, notes that differ only in addresses merged.

    Many objects of one filtered page (the struct pids of a slab page, say) each give the same
    explanation; it is said once, with how many more there were and the first of their addresses.
    """
    groups: dict[str, list[str]] = {}
    for note in dict.fromkeys(notes):
        groups.setdefault(_HEX.sub("0x…", note), []).append(note)
    out = []
    for same in groups.values():
        first = same[0]
        if len(same) == 1:
            out.append(first)
            continue
        seen = set(_HEX.findall(first))
        others = [a for note in same[1:] for a in _HEX.findall(note) if a not in seen]
        shown = ", ".join(dict.fromkeys(others[:6]))
        out.append(f"{first} (and {len(same) - 1} more like it, at {shown}{', …' if len(others) > 6 else ''})")
    return out
