"""What a suspicious 64-bit value is: list poison, slab poison, red zones, text, bogus addresses.

Pure and shared: ``kforensic vmcore`` judges the values it read from a dump with it
(:mod:`detectors.vmcore.why`), ``kforensic dmesg`` the pointers a report prints
(``list_add corruption. prev->next should be next (...), but was ...``, registers,
KASAN's addresses), so that one value gets one meaning whichever input showed it.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "LIST_POISON1",
    "LIST_POISON2",
    "RWLOCK_MAGIC",
    "SLAB_FILLS",
    "SLAB_POISONS",
    "SPINLOCK_MAGIC",
    "VALUE_RULES",
    "X86_64_REGIONS",
    "ValueClass",
    "ValueKind",
    "ascii_text",
    "classify_value",
    "kernel_region",
]

LIST_POISON1 = 0xDEAD000000000100
LIST_POISON2 = 0xDEAD000000000122
#: The debug lock magics (CONFIG_DEBUG_SPINLOCK): the ``magic`` word after the lock word of every initialised
#: spinlock_t (include/linux/spinlock_types.h) and rwlock_t (include/linux/rwlock_types.h).
SPINLOCK_MAGIC = 0xDEAD4EAD
RWLOCK_MAGIC = 0xDEAF1EED


class ValueKind(enum.StrEnum):
    """The kinds of :data:`VALUE_RULES`: what a suspicious value is."""

    LIST_POISON1 = "list-poison1"
    LIST_POISON2 = "list-poison2"
    SLAB_POISON_FREE = "slab-poison-free"
    SLAB_POISON_END = "slab-poison-end"
    SLAB_POISON_INUSE = "slab-poison-inuse"
    SLAB_REDZONE_INACTIVE = "slab-redzone-inactive"
    SLAB_REDZONE_ACTIVE = "slab-redzone-active"
    SPINLOCK_MAGIC = "spinlock-magic"
    RWLOCK_MAGIC = "rwlock-magic"
    NULL_OFFSET = "null-offset"
    ASCII = "ascii"
    NON_CANONICAL = "non-canonical"
    USER_ADDRESS = "user-address"


#: The slab allocator's poison fills (a freed object, its end, an object never initialised).
SLAB_POISONS = frozenset({ValueKind.SLAB_POISON_FREE, ValueKind.SLAB_POISON_END, ValueKind.SLAB_POISON_INUSE})
#: Every fill SLUB writes: the poisons and the red zones.
SLAB_FILLS = SLAB_POISONS | {ValueKind.SLAB_REDZONE_INACTIVE, ValueKind.SLAB_REDZONE_ACTIVE}


@dataclass(frozen=True)
class ValueClass:
    """What a suspicious 64-bit value is."""

    kind: ValueKind
    meaning: str


def _bytes(value: int) -> bytes:
    return (value & 0xFFFFFFFFFFFFFFFF).to_bytes(8, "little")


def ascii_text(value: int) -> str | None:
    """The text a value spells when it is printable ASCII (at least 4 characters, NUL-padded)."""
    raw = _bytes(value).rstrip(b"\0")
    if len(raw) >= 4 and all(0x20 <= b < 0x7F for b in raw):
        return raw.decode()
    return None


def _canonical(value: int) -> bool:
    top = value >> 47
    return top in (0, 0x1FFFF)


def _filled(value: int, byte: int, last: int | None = None) -> bool:
    """Whether a value is a poison fill of ``byte`` (ending in ``last``), read as 8 or as 4 bytes.

    A 32-bit member of a poisoned object reads as 0x6b6b6b6b (zero-extended in a register): the
    same poison, not the text "kkkk" (seen on a 6.12 kernel).
    """
    for width in (8, 4):
        if width == 4 and value >> 32:
            break
        raw = _bytes(value)[:width]
        body = raw[:-1] if last is not None else raw
        if set(body) == {byte} and (last is None or raw[-1] == last):
            return True
    return False


def _repeated(value: int, byte: int) -> bool:
    return _filled(value, byte)


def _lock_words(value: int, magic: int) -> bool:
    """Whether a value is the words of a debug lock around its ``magic``, read as a pointer.

    A debug raw_spinlock_t is the lock word, then ``magic``, then ``owner_cpu`` (-1 while unowned): 8 bytes read at
    the lock hold ``magic << 32 | lock`` (0xdead4ead00000000 unlocked), 8 bytes read 4 further ``-1 << 32 | magic``,
    and a 32-bit read ``magic`` alone.
    """
    return value >> 32 == magic or (value & 0xFFFFFFFF == magic and value >> 32 in (0, 0xFFFFFFFF))


#: Suspicious values, most specific first; each rule: (kind, test, meaning, example).
K = ValueKind
VALUE_RULES: tuple[tuple[ValueKind, Callable[[int], bool], str, int], ...] = (
    (K.LIST_POISON1, lambda v: v == LIST_POISON1,
     "LIST_POISON1: the ->next of an entry list_del() already removed", LIST_POISON1),
    (K.LIST_POISON2, lambda v: v == LIST_POISON2,
     "LIST_POISON2: the ->prev of an entry list_del() already removed", LIST_POISON2),
    (K.SLAB_POISON_FREE, lambda v: _repeated(v, 0x6B),
     "slab poison 0x6b (POISON_FREE): memory of a freed object, read after kfree (use-after-free)",
     0x6B6B6B6B6B6B6B6B),
    (K.SLAB_POISON_END, lambda v: _filled(v, 0x6B, last=0xA5),
     "slab poison end 0xa5 (POISON_END): the last byte of a freed object", 0xA56B6B6B6B6B6B6B),
    (K.SLAB_POISON_INUSE, lambda v: _repeated(v, 0x5A),
     "slab poison 0x5a (POISON_INUSE): allocated memory never initialised", 0x5A5A5A5A5A5A5A5A),
    (K.SLAB_REDZONE_INACTIVE, lambda v: _repeated(v, 0xBB),
     "SLUB red zone 0xbb (inactive): the padding around a free object", 0xBBBBBBBBBBBBBBBB),
    (K.SLAB_REDZONE_ACTIVE, lambda v: _repeated(v, 0xCC),
     "SLUB red zone 0xcc (active): the padding around an allocated object — an overflow reached it",
     0xCCCCCCCCCCCCCCCC),
    # Before the address rules: 0xdead4ead00000000 is non-canonical, 0xdead4ead a user address, by value alone.
    (K.SPINLOCK_MAGIC, lambda v: _lock_words(v, SPINLOCK_MAGIC),
     "SPINLOCK_MAGIC 0xdead4ead (include/linux/spinlock_types.h, CONFIG_DEBUG_SPINLOCK): the words of a spinlock_t "
     "read as a pointer: the pointer read from points into or over a spinlock_t, not the object the code expects "
     "(a wrong or stale object: freed and reused, or of another type)", SPINLOCK_MAGIC << 32),
    (K.RWLOCK_MAGIC, lambda v: _lock_words(v, RWLOCK_MAGIC),
     "RWLOCK_MAGIC 0xdeaf1eed (include/linux/rwlock_types.h, CONFIG_DEBUG_SPINLOCK): the words of an rwlock_t read "
     "as a pointer: the pointer read from points into or over an rwlock_t, not the object the code expects "
     "(a wrong or stale object: freed and reused, or of another type)", RWLOCK_MAGIC << 32),
    (K.NULL_OFFSET, lambda v: 0 < v < 0x1000,
     "NULL plus an offset: a member read through a NULL pointer", 0x30),
    # Text only where no pointer can be: a canonical value that happens to spell text (0x286a5920, a
    # user buffer, reads " Yj(") is an address, not text.
    (K.ASCII, lambda v: ascii_text(v) is not None and not _canonical(v),
     "printable ASCII: text overwrote a pointer", 0x746E65696C632D66),
    (K.NON_CANONICAL, lambda v: not _canonical(v),
     "non-canonical address: not a pointer at all (a general protection fault when used)", 0x0DEAD00000000000),
    # From 4 MiB (the lowest ELF mapping; below it sit per-CPU offsets such as s->cpu_slab and counts).
    (K.USER_ADDRESS, lambda v: 0x400000 <= v < 0x0000800000000000,
     "a user-space address where the kernel expects a kernel pointer", 0x7FFD12345678),
)  # fmt: skip


def classify_value(value: int) -> ValueClass | None:
    """The first rule a value matches, None for an unremarkable value (0, small counts, kernel pointers)."""
    if value == 0:
        return None
    for kind, test, meaning, _example in VALUE_RULES:
        if test(value):
            text = ascii_text(value)
            return ValueClass(
                kind, f"printable ASCII {text!r}: text overwrote a pointer" if kind is ValueKind.ASCII else meaning
            )
    return None


#: x86-64's kernel address ranges with 4-level paging, as Documentation/arch/x86/x86_64/mm.rst lays them out by
#: default: (start, end exclusive, name, what lives there, whether KASLR moves it).  KASLR's
#: CONFIG_RANDOMIZE_MEMORY (4.8, on by default with KASLR) places the direct map, vmalloc and vmemmap
#: (page_offset_base, vmalloc_base, vmemmap_base) anywhere from the direct map's default start to cpu_entry_area
#: (or KASAN's shadow), and a kernel log does not print them: an address there is in one of those regions only
#: where the log shows KASLR off.  Kernel text, modules, cpu_entry_area and EFI are fixed.
X86_64_REGIONS: tuple[tuple[int, int, str, str, bool], ...] = (
    (0xFFFF888000000000, 0xFFFFC88000000000, "direct map",
     "the direct mapping of physical memory (page_offset_base): slab (kmalloc) and page-allocator memory", True),
    (0xFFFFC90000000000, 0xFFFFE90000000000, "vmalloc/ioremap",
     "vmalloc/ioremap space (vmalloc_base): vmalloc()'d, vmap()'d or ioremap()'d memory, task stacks, per-CPU "
     "chunks", True),
    (0xFFFFEA0000000000, 0xFFFFEB0000000000, "vmemmap",
     "the virtual memory map (vmemmap_base): the struct page array", True),
    (0xFFFFEC0000000000, 0xFFFFFC0000000000, "KASAN shadow", "KASAN's shadow memory", True),
    (0xFFFFFE0000000000, 0xFFFFFE8000000000, "cpu_entry_area", "the cpu_entry_area mapping", False),
    (0xFFFFFFEF00000000, 0xFFFFFFFF00000000, "EFI", "the EFI region mapping space", False),
    (0xFFFFFFFF80000000, 0xFFFFFFFFA0000000, "kernel text", "the kernel image (text, data) mapping", False),
    (0xFFFFFFFFA0000000, 0xFFFFFFFFC0000000, "kernel image or modules",
     "the kernel image with KASLR (its 1 GiB KERNEL_IMAGE_SIZE), the module space without", False),
    (0xFFFFFFFFC0000000, 0xFFFFFFFFFF000000, "modules", "the module mapping space", False),
)  # fmt: skip


def kaslr_moves(value: int) -> bool:
    """Whether a value is in an x86-64 range KASLR moves (:data:`X86_64_REGIONS`): what :func:`kernel_region` says
    of it depends on what the log shows of KASLR."""
    return any(start <= value < end and moves for start, end, _, _, moves in X86_64_REGIONS)


def kernel_region(value: int, kaslr_off: str | None = None, kaslr_on: str | None = None) -> str | None:
    """Which x86-64 kernel range (:data:`X86_64_REGIONS`) a value is in, or None (a hole, or not a kernel address).

    ``kaslr_off``: what in the log shows KASLR off (a "Kernel Offset: disabled" line, ``nokaslr``), or None: then a
    range KASLR moves is named only as the default one the value falls in, with no claim of what lives there;
    ``kaslr_on``: what in the log shows it on (a "Kernel Offset: 0x..." line), said then.
    """
    for start, end, name, meaning, moves in X86_64_REGIONS:
        if start <= value < end:
            where = f"{start:#x}-{end - 1:#x}, Documentation/arch/x86/x86_64/mm.rst"
            if not moves:
                return f"in the x86-64 {name} range ({where}; KASLR does not move it): {meaning}"
            if kaslr_off is not None:
                return f"in the x86-64 {name} range ({where}; the default layout: {kaslr_off}): {meaning}"
            shows = f"{kaslr_on}, and the log" if kaslr_on is not None else "the log does not show KASLR off, and"
            return (f"a kernel address in the default x86-64 {name} range ({where}), which KASLR "
                    f"(CONFIG_RANDOMIZE_MEMORY) moves: which region it is in is not known here ({shows} does not "
                    "print page_offset_base, vmalloc_base or vmemmap_base)")  # fmt: skip
    return None
