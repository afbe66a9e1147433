"""Function addresses of an LTTng UST session (lttng_ust_cyg_profile's ``addr``) named by the binaries' symbols.

LTTng-UST's statedump (``lttng enable-event -u lttng_ust_statedump:*``) and its ``lttng_ust_dl:dlopen`` events
record each binary the process mapped: its path, load address (``baddr``), size and whether it is position
independent.  An address inside one is looked up in that file's ELF symbol table (pyelftools): ``serve
(0x401461)``; a call's ``call_site``, the return address in its caller, as the place in the caller: ``main+0x86
(0x40152d)``.  When it cannot be (no statedump, the binary is not on this machine, no symbol table), the address
stays in hex and the reason is said once per cause.
"""

from __future__ import annotations

import bisect
import struct
from dataclasses import dataclass, field
from pathlib import Path

# The events that say where a binary was mapped (the dlopen of a library after the statedump too).
BIN_EVENTS = ("lttng_ust_statedump:bin_info", "lttng_ust_dl:dlopen")


@dataclass(frozen=True)
class Binary:
    """One mapped binary, as a statedump or dlopen event recorded it."""

    baddr: int
    memsz: int
    path: str
    is_pic: bool


@dataclass
class _Symbols:
    """A file's function symbols, sorted by address: (start, end, name); or why there are none."""

    starts: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    lowest: int = 0  # the lowest PT_LOAD address: a position-independent file's addresses are baddr + (v - lowest)
    why: str = ""


def _read_symbols(path: str) -> _Symbols:
    # (imported here: a trace without a statedump, the common case, does not pay pyelftools' import)
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile

    p = Path(path)
    if not p.is_file():
        return _Symbols(why=f"{path} not found")
    try:
        with p.open("rb") as f:
            elf = ELFFile(f)
            loads = [s["p_vaddr"] for s in elf.iter_segments() if s["p_type"] == "PT_LOAD"]
            got: list[tuple[int, int, str]] = []
            for name in (".symtab", ".dynsym"):  # .dynsym: a stripped library still names its exports
                sec = elf.get_section_by_name(name)
                if sec is None or got:
                    continue
                got = _functions(sec.data(), elf.get_section(sec["sh_link"]).data(), elf.elfclass, elf.little_endian)
    except (OSError, ELFError, struct.error, ValueError) as e:  # (struct, ValueError: a damaged symbol table)
        return _Symbols(why=f"{path} is not a readable ELF file ({e})")
    if not got:
        return _Symbols(why=f"{path} has no symbol table")
    got.sort()
    return _Symbols(
        [a for a, _s, _n in got], [a + max(s, 1) for a, s, _n in got], [n for _a, _s, n in got], min(loads or [0])
    )


_STT_FUNC, _STT_GNU_IFUNC = 2, 10


def _functions(table: bytes, strings: bytes, elfclass: int, little: bool) -> list[tuple[int, int, str]]:
    """(value, size, name) of the named functions of a symbol table section's bytes.

    Unpacked whole by struct, not symbol by symbol by pyelftools: the C library's .dynsym (2822 functions, read when
    an address to name lies in it: main's call site) took 118 ms of CPU that way, 3 ms so.  Its GNU indirect
    functions are kept (pyelftools names their type STT_LOOS, which a comparison with "STT_GNU_IFUNC" left out).
    """
    # Elf64_Sym: name, info, other, shndx, value, size; Elf32_Sym: name, value, size, info, other, shndx
    order = "<" if little else ">"
    if elfclass == 64:
        rows = ((n, i, v, z) for n, i, _o, _x, v, z in struct.iter_unpack(f"{order}IBBHQQ", table))
    else:
        rows = ((n, i, v, z) for n, v, z, i, _o, _x in struct.iter_unpack(f"{order}IIIBBH", table))
    out = []
    for name_at, info, value, size in rows:
        if info & 0xF in (_STT_FUNC, _STT_GNU_IFUNC) and value and name_at:
            out.append((value, size, strings[name_at : strings.index(b"\0", name_at)].decode("utf-8", "replace")))
    return out


class Resolver:
    """Names of function addresses from the binaries a session mapped; the reasons of those it could not name."""

    def __init__(self, binaries: list[Binary]) -> None:
        self.binaries = sorted(set(binaries), key=lambda b: b.baddr)
        self._files: dict[str, _Symbols] = {}
        self._named: dict[tuple[int, str, int], str] = {}
        self.why: list[str] = []  # each cause once, in the order met

    def _unresolved(self, why: str) -> None:
        if why not in self.why:
            self.why.append(why)

    def name(self, addr: int) -> str:
        """``serve (0x401461)``, or ``addr=0x401461`` when the address cannot be named (the cause kept in ``why``)."""
        return self._name(addr, "addr", 0)

    def name_return(self, addr: int) -> str:
        """A return address (lttng_ust_cyg_profile's ``call_site``) as the place in the calling function it lies
        in, as perf and crash print one: ``main+0x86 (0x40152d)``; ``call_site=0x40152d`` when it cannot be named
        (the cause kept in ``why``, said once with those of the functions' addresses)."""
        # The function is the one holding the byte before it, as gdb finds a caller's block (pc - 1): a call that
        # is its function's last instruction returns to the first byte past the function.
        return self._name(addr, "call_site", 1)

    def _name(self, addr: int, field: str, back: int) -> str:
        key = (addr, field, back)
        got = self._named.get(key)
        if got is None:
            found = self._resolve(addr, back)
            if found is None:
                got = f"{field}=0x{addr:x}"
            else:
                name, off = found
                got = f"{name}{f'+0x{off:x}' if off else ''} (0x{addr:x})"
            self._named[key] = got
        return got

    def _resolve(self, addr: int, back: int) -> tuple[str, int] | None:
        """The function holding ``addr - back`` and ``addr``'s offset into it; None when it cannot be named (the
        cause recorded, naming ``addr`` as the trace shows it)."""
        if not self.binaries:
            self._unresolved(
                "the session has no lttng_ust_statedump:bin_info event (record it: "
                "`lttng enable-event -u 'lttng_ust_statedump:*'`)"
            )
            return None
        at = addr - back
        # The last binary mapped at or below the address that covers it (a later dlopen at the same place wins).
        binary = next((b for b in reversed(self.binaries) if b.baddr <= at < b.baddr + b.memsz), None)
        if binary is None:
            self._unresolved(f"0x{addr:x} is in no binary the statedump names")
            return None
        syms = self._files.get(binary.path)
        if syms is None:
            syms = self._files[binary.path] = _read_symbols(binary.path)
        if syms.why:
            self._unresolved(syms.why)
            return None
        v = at - binary.baddr + syms.lowest if binary.is_pic else at
        i = bisect.bisect_right(syms.starts, v) - 1
        if i < 0 or v >= syms.ends[i]:
            self._unresolved(f"0x{addr:x} is in no function of {binary.path}'s symbol table")
            return None
        return syms.names[i], v + back - syms.starts[i]
