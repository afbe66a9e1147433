"""Modules drgn cannot place because the dump lacks their section table: placed by their own symbols.

drgn finds a loaded module's build ID and section addresses in ``struct module``'s ``notes_attrs`` and
``sect_attrs``, which are kmalloc'd: a filtered dump can lack them (makedumpfile 1.7.2 at level 31 drops
6.10+ slab pages whose ``page->mapping`` word is odd).  The module is then missing from drgn's list and
its ``--module-debug`` file is never used: no types for the module's globals, no source lines.

The module's own symbol table (``mod->kallsyms``, in module memory, never filtered) still gives each
symbol's run-time address; the .ko's symbol table gives the same symbol's section and offset.  Every
symbol of a section moves by the same amount, so the section's address is read, not assumed; the
file is taken only when all the symbols the two share agree and the names cover most of the dump's.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Container
from pathlib import Path

import drgn

from forensics.vmcore import layouts

#: Sections a module loads that DWARF relocations point into; the others (debug, notes) stay unplaced.
_SHF_ALLOC = 0x2


def _ko_symbols(path: Path, placed: Container[str] = ()) -> tuple[str | None, dict[str, tuple[str, int]]]:
    """The module name (``.modinfo`` ``name=``) and name -> (section, offset) of a .ko's defined symbols; no symbols
    for a module named in ``placed`` (drgn placed it: they would not be used, and reading them was ~0.1 s of CPU a
    run on the fixtures' modules, ~25% of ``kforensic vmcore``'s analysis after drgn's own loading)."""
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection

    out: dict[str, tuple[str, int]] = {}
    name = None
    with path.open("rb") as f:
        elf = ELFFile(f)
        info = elf.get_section_by_name(".modinfo")
        if info is not None:
            for field in info.data().split(b"\0"):
                if field.startswith(b"name="):
                    name = field[5:].decode(errors="replace")
        symtab = elf.get_section_by_name(".symtab")
        if not isinstance(symtab, SymbolTableSection):
            return name, out
        name = name or path.name.split(".")[0].replace("-", "_")
        if name in placed:
            return name, out
        # index -> (its name, whether it is loaded): elftools parses a section's header anew at each get_section
        sections: dict[int, tuple[str, bool]] = {}
        for sym in symtab.iter_symbols():
            index = sym["st_shndx"]
            if not sym.name or not isinstance(index, int) or sym["st_info"]["type"] not in ("STT_FUNC", "STT_OBJECT"):
                continue
            if index not in sections:
                section = elf.get_section(index)
                sections[index] = (section.name, bool(section["sh_flags"] & _SHF_ALLOC))
            section_name, allocated = sections[index]
            if allocated:
                out[sym.name] = (section_name, int(sym["st_value"]))
    return name, out


def place_modules(prog: drgn.Program, files: tuple[Path, ...], kallsyms: tuple[drgn.Symbol, ...]) -> list[str]:
    """Load each --module-debug file whose module drgn could not place; a warning line for each outcome."""
    from drgn.helpers.linux.module import for_each_module

    if not files:
        return []
    known = {m.name for m in prog.modules()}
    try:
        loaded = {m.name.string_().decode(errors="replace"): m for m in for_each_module(prog)}
    except drgn.FaultError:
        return []
    out = []
    for path in files:
        try:
            name, symbols = _ko_symbols(path, known)
        except (OSError, ValueError) as exc:
            out.append(f"--module-debug {path}: not read ({exc})")
            continue
        if name is None or name in known or name not in loaded:
            continue
        module = loaded[name]
        ranges = layouts.module_ranges(module)
        if not ranges:
            continue
        shifts: dict[str, set[int]] = defaultdict(set)
        dump_names = 0
        for sym in kallsyms:
            if not any(lo <= sym.address < hi for lo, hi in ranges):
                continue
            dump_names += 1
            if sym.name in symbols:
                section, offset = symbols[sym.name]
                shifts[section].add(sym.address - offset)
        shared = sum(1 for sym in kallsyms if sym.name in symbols and any(lo <= sym.address < hi for lo, hi in ranges))
        if not shifts or any(len(s) != 1 for s in shifts.values()) or shared * 2 < dump_names:
            out.append(
                f"module {name}: drgn cannot read its section table from the dump, and {path} does not fit its "
                f"symbols ({shared} of the dump's {dump_names} names, in sections that do not move as one): "
                "not used"
            )
            continue
        placed = prog.relocatable_module(name, int(module.value_()), create=True)
        placed.address_ranges = ranges
        for section, shift in shifts.items():
            placed.section_addresses[section] = shift.pop()
        placed.try_file(str(path), force=True)
        out.append(
            f"module {name}: its section table (struct module.sect_attrs) is not in the dump, so drgn could not "
            f"place it; {path} was placed by its symbols instead ({shared} names of the module's kallsyms agree "
            f"with it in {len(shifts)} sections)"
        )
    return out
