"""The kernel's own names for code addresses: its kallsyms, read from the dump, so that a frame reads as the
kernel's stack dump printed it (``entry_SYSCALL_64_after_hwframe+0x4b/0xb5``,
``kf_null_member_read+0x19/0x40 [kf_buggy]``) and can be compared with the console and syzbot's stacks.

The ELF symbol table gives another reading: a function's own size (``st_size``, ``/0x38``) and only the symbols
with a type (``entry_SYSCALL_64+0x6f``, where the kernel names the local label ``entry_SYSCALL_64_after_hwframe``
that precedes the pc).  kallsyms_lookup_size_offset() takes the nearest preceding symbol of any kind and measures
it up to the next symbol: the core kernel's in its compressed kallsyms table (drgn reads it), a module's in its
``struct mod_kallsyms`` (find_kallsyms_symbol(), kernel/module/kallsyms.c), capped at the end of the module's text.
"""

from __future__ import annotations

import bisect
import contextlib
from dataclasses import dataclass

import drgn

from forensics.types.vmcore import FRAMES_FROM_ELF, FRAMES_FROM_KALLSYMS

_CACHE_KEY = "kforensic.kallsyms"
#: The core kernel's kallsyms tables, found in VMCOREINFO since v6.0 (commit f09bddbd8661 "vmcoreinfo: add
#: kallsyms_num_syms symbol") or, before, in the vmlinux's own ELF symbols (the same build's addresses).
_TABLES = (
    "kallsyms_names",
    "kallsyms_token_table",
    "kallsyms_token_index",
    "kallsyms_num_syms",
    "kallsyms_offsets",
    "kallsyms_relative_base",
    "kallsyms_addresses",
    "_stext",
)


@dataclass(frozen=True)
class KernelSymbol:
    """The symbol the kernel names an address by: its start and its size up to the next symbol."""

    name: str
    address: int
    size: int


@dataclass(frozen=True)
class _Table:
    """Symbols sorted by address, the table's order kept among equal addresses (the kernel's preferred alias
    first), and the [start, end) of the text they cover."""

    addresses: list[int]
    names: list[str]
    start: int
    end: int

    def nearest(self, pc: int) -> KernelSymbol | None:
        """The first symbol at the greatest address at or before ``pc``, sized up to the next greater address or
        the text's end: get_symbol_pos() for the core kernel (whose first alias is the one scripts/kallsyms sorted
        first: ``native_safe_halt``, not ``__cpuidle_text_start``), find_kallsyms_symbol() for a module."""
        at = bisect.bisect_right(self.addresses, pc) - 1
        if at < 0 or not self.start <= pc < self.end:
            return None
        start = self.addresses[at]
        best = bisect.bisect_left(self.addresses, start)
        following = at + 1
        end = min(self.addresses[following] if following < len(self.addresses) else self.end, self.end)
        return KernelSymbol(self.names[best], start, end - start)


class Kallsyms:
    """The kernel's kallsyms of one program: the core kernel's table and each module's symbols, read once."""

    def __init__(self, prog: drgn.Program) -> None:
        self._prog = prog
        self._core = _core_table(prog)
        self._modules: dict[str, _Table | None] = {}

    @property
    def source(self) -> str:
        """Where the frames' symbols, offsets and sizes come from: the kernel's kallsyms, or the ELF symbol tables
        where the core kernel's table cannot be read (a module's are then still the kernel's)."""
        return FRAMES_FROM_KALLSYMS if self._core is not None else FRAMES_FROM_ELF

    def lookup(self, pc: int) -> KernelSymbol | None:
        """The symbol the kernel's stack dump names ``pc`` by; None where its kallsyms do not say (then the ELF
        symbol stands)."""
        try:
            module = self._prog.module(pc)
        except LookupError:
            return None
        if module.name in ("kernel", "vmlinux"):
            return None if self._core is None else self._core.nearest(pc)
        if module.name not in self._modules:
            self._modules[module.name] = _module_table(self._prog, module)
        table = self._modules[module.name]
        return None if table is None else table.nearest(pc)


def kallsyms_of(prog: drgn.Program) -> Kallsyms:
    """The program's :class:`Kallsyms`, read once and kept in ``prog.cache`` (every backtrace of a run asks)."""
    found = prog.cache.get(_CACHE_KEY)
    if not isinstance(found, Kallsyms):
        found = prog.cache[_CACHE_KEY] = Kallsyms(prog)
    return found


def _core_table(prog: drgn.Program) -> _Table | None:
    """The core kernel's kallsyms (drgn's index of them, the tables' addresses from VMCOREINFO, else from the
    vmlinux's ELF symbols: a kernel before v6.0); None where neither has them (no CONFIG_KALLSYMS, no vmlinux)."""
    index = _core_index(prog)
    if index is None:
        return None
    try:
        symbols = index(prog, None, None, False)  # all of them, in the table's order
    except (LookupError, ValueError, drgn.FaultError):
        return None
    ordered = sorted(((int(s.address), s.name, int(s.size)) for s in symbols), key=lambda s: s[0])
    if not ordered:
        return None
    end = max(a + size for a, _, size in ordered)
    return _Table([a for a, _, _ in ordered], [n for _, n, _ in ordered], ordered[0][0], end)


def _core_index(prog: drgn.Program) -> drgn.SymbolIndex | None:
    """drgn's index of the core kernel's kallsyms; None where it cannot be had."""
    from drgn.helpers.linux import kallsyms

    # FaultError: the tables lie in pages a dump cut short lost (forensics/vmcore/cutpages.py): the ELF symbols stand.
    with contextlib.suppress(LookupError, ValueError, drgn.MissingDebugInfoError, drgn.FaultError):
        return kallsyms.load_vmlinux_kallsyms(prog)
    # A kernel before v6.0 does not list its kallsyms tables in VMCOREINFO; the vmlinux loaded for the dump does.
    # drgn's loader behind load_vmlinux_kallsyms() takes them as arguments (0: absent, as it does itself).
    loader = getattr(kallsyms, "_linux_helper_load_builtin_kallsyms", None)
    if loader is None:
        return None
    addresses = []
    for name in _TABLES:
        try:
            addresses.append(int(prog.symbol(name).address))
        except LookupError:
            addresses.append(0)
    try:
        return loader(prog, *addresses)
    except (LookupError, ValueError, drgn.FaultError, drgn.MissingDebugInfoError):
        return None


def _is_mapping_symbol(name: str) -> bool:
    """is_mapping_symbol() (include/linux/module_symbol.h): ``.L`` labels and ARM's ``$a``/``$x``/``$t``/``$d``."""
    return name.startswith(".L") or (len(name) >= 2 and name[0] == "$" and name[1] in "axtd" and name[2:3] in ("", "."))


def _module_table(prog: drgn.Program, module: drgn.Module) -> _Table | None:
    """A module's kallsyms (no mapping symbol nor ``.L`` label, as find_kallsyms_symbol() skips them) over its core
    text; None when its ``struct module`` or its kallsyms cannot be read."""
    from drgn.helpers.linux.kallsyms import module_kallsyms

    try:
        mod = module.object
        symbols = module_kallsyms(mod)
        text = _module_text(prog, mod)
    except (LookupError, ValueError, AttributeError, drgn.FaultError):
        return None
    named = sorted(
        ((int(s.address), s.name) for s in symbols if s.name and not _is_mapping_symbol(s.name)), key=lambda s: s[0]
    )
    if text is None or not named:
        return None
    return _Table([a for a, _ in named], [n for _, n in named], text[0], text[1])


def _module_text(prog: drgn.Program, mod: drgn.Object) -> tuple[int, int] | None:
    """The module's core text, [base, base + size): ``mem[MOD_TEXT]`` since v6.4 (commit ac3b43283923), before it
    ``core_layout``'s ``text_size``."""
    try:
        region = mod.mem[prog["MOD_TEXT"].value_()]
        base, size = int(region.base.value_()), int(region.size.value_())
    except (LookupError, AttributeError):
        base, size = int(mod.core_layout.base.value_()), int(mod.core_layout.text_size.value_())
    return (base, base + size) if base and size else None
