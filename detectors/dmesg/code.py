"""The ``Code:`` bytes of an oops disassembled with capstone, the faulting instruction marked, read with the registers.

x86 prints the bytes around the faulting instruction with that one's first byte in angle
brackets (``... 48 8b 47 20 <8b> 40 08 ...``); arm64 prints words with the faulting one in
parentheses.  The bytes after the mark always decode from the mark; the bytes before it are
decoded from the first start offset whose instructions end exactly at the mark, so no instruction
is invented across the mark.  Where the bytes start is inside an instruction: other starts within
the first 15 bytes (the longest x86 instruction) may decode to the mark too, and only the
instructions every such decoding holds are sure; the first ones, before the decodings meet, are
marked uncertain and never read as a fact.
With the registers of the same oops (``RAX: ...``) the faulting memory operand's base register
has a value, and the load that produced that register (``mov rax, [rdi + 0x20]``) names the
object the bad value was read from.
"""

from __future__ import annotations

import _thread
import functools
import re
import struct
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, cast

from detectors.dmesg.lines import LogLine
from forensics import regexcache as rc
from forensics.types.dmesg import CodeInstruction, CodeListing

if TYPE_CHECKING:  # imported where the capstone module decodes (its library not called directly: _capstone)
    from forensics.types.registers import Instruction

#: Registers a call may change (System V x86-64 ABI): detectors.vmcore.disasm._CALLER_SAVED, not imported for it.
_CALLER_SAVED = frozenset({"rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11"})

# Every number this module converts is bounded by its pattern (a kernel prints 64 bits; forensics.units.log_hex):
# a code byte 2 hex digits, an arm word 8, a register 8-16 (each ends at a non-digit), a displacement capstone's.
# _X86_CODE: what _x86_code reads a line as (the tests hold the reader to it; only they match it).
_X86_CODE = rc.compile(r"^\s*Code: ((?:<?[0-9a-f]{2}>? )*<?[0-9a-f]{2}>?)\s*$")
_ARM64_CODE = rc.compile(r"^\s*Code: ((?:\(?[0-9a-f]{8}\)? ?)+)\s*$")
# The register patterns are searched in every line of an oops's register block.  Each name's word boundary is
# asserted just after its first letter, as in ``R(?<=\bR)``, rather than by a leading ``\b``: the same matches (a
# boundary before the letter), but a pattern that starts with its letters lets the regex engine skip to them
# (a leading ``\b`` is tried at every character: the three searches were ~3% of the shared corpus's run).
_X86_REG = rc.compile(r"(R(?<=\bR)[A-Z0-9]{1,2}|E(?<=\bE)[A-Z]{2}):\s*(?:[0-9a-f]{4}:)?([0-9a-f]{8,16})\b")
_X86_KERNEL_RIP = rc.compile(r"^\s*(?:RIP|EIP): (?:0010|0060):(\S+)")
_ARM64_REG = rc.compile(r"(x(?<=\bx)\d{1,2}|s(?<=\bs)p|l(?<=\bl)r|p(?<=\bp)c)\s*: ([0-9a-f]{16})\b")
# 32-bit arm's "r10: e89fa198  r9 : 00000001 ... fp : 00000000" (its "pc : [<c0333330>]" marks the register block).
_ARM_REG = rc.compile(r"(r(?<=\br)\d{1,2}|f(?<=\bf)p|i(?<=\bi)p|s(?<=\bs)p)\s*: ([0-9a-f]{8})\b")
_ARM32_PC = rc.compile(r"^\s*pc : \[<[0-9a-f]{8}>\]")
# Where the kernel's own frame ends: user space's register block ("RIP: 0033:", with its own Code: line), or the
# backtrace of another CPU.
_CODE_STOP = rc.compile(r"^\s*(?:RIP: 00(?:33|2b|23):|NMI backtrace for cpu)")
#: Every two lower-case hex digits: a byte of an x86 Code: line (:func:`_x86_code`).
_HEX_BYTES: Final = frozenset(f"{value:02x}" for value in range(256))
_BASE = 0x1000  # the synthetic address of the first code byte: capstone needs one; offsets are what count
#: ``tuple.__new__``: a listing's records (named tuples) made without their own constructor, a Python function (~1
#: us a call from compiled code, against ~0.2: ~1,700 instructions shown of the corpus x1's listings).
_new_tuple: Final = tuple.__new__


class Registers:
    """The register values of an oops, by the names capstone and the kernel use (``rax``, ``x0``), each once.

    What :class:`forensics.types.registers.RegisterSet` holds, as a record of this module: that module's frozen
    dataclasses cost ~2.3 ms to import, for a lookup by name.
    """

    def __init__(self, values: tuple[tuple[str, int], ...], lines: tuple[tuple[str, int], ...] = ()) -> None:
        self.values = values
        self.lines = lines  # (name, log line number) of each: the line a fact of its value cites
        self._by_name = dict(values)

    def get(self, name: str) -> int | None:
        """The value of a register, None when the oops does not print it."""
        return self._by_name.get(name)

    def as_dict(self) -> dict[str, int]:
        """The registers as a mapping (a copy)."""
        return dict(self.values)


class _Memory:
    """An x86 instruction's memory operand as the listing reads it: its base and index registers (their 64-bit
    names) and displacement (:class:`forensics.types.registers.MemoryOperand`'s)."""

    def __init__(self, base: str | None, index: str | None, disp: int) -> None:
        self.base = base
        self.index = index
        self.disp = disp


class _Insn:
    """One x86-64 instruction decoded with detail as the listing reads it: what
    :class:`forensics.types.registers.Instruction` holds of it but the registers read (which nothing here reads)."""

    def __init__(
        self, address: int, size: int, mnemonic: str, op_str: str, memory: _Memory | None, writes: tuple[str, ...]
    ) -> None:
        self.address = address
        self.size = size
        self.mnemonic = mnemonic
        self.op_str = op_str
        self.memory = memory
        self.writes = writes  # the 64-bit registers it writes

    @property
    def is_call(self) -> bool:
        return self.mnemonic.startswith("call")

    def text(self) -> str:
        """``mnemonic operands`` as capstone prints them."""
        return f"{self.mnemonic} {self.op_str}".strip()


def _insn_of(insn: Instruction) -> _Insn:
    """The listing's record of :func:`detectors.vmcore.disasm.instruction`'s."""
    m = insn.memory
    return _Insn(
        insn.address, insn.size, insn.mnemonic, insn.op_str, None if m is None else _Memory(m.base, m.index, m.disp),
        insn.writes,
    )  # fmt: skip


#: The x86 registers whose 64-bit register is ``r`` and their name: ``ax`` (``eax``) of ``rax``...
_LEGACY_X86: Final = frozenset({"ax", "bx", "cx", "dx", "si", "di", "bp", "sp"})


def x86_canonical(name: str | None) -> str | None:
    """The 64-bit register an x86 register is part of, as :func:`detectors.vmcore.disasm.canonical_register` names
    it (a test compares the two on every register capstone names): ``eax``, ``ax``, ``al`` and ``ah`` are ``rax``,
    ``sil`` is ``rsi``, ``r8d``, ``r8w`` and ``r8b`` are ``r8``; any other name is itself."""
    if name is None:
        return None
    n = len(name)
    if n >= 3 and name[0] == "r" and name[1].isdigit():
        return name[:-1] if name[-1] in "dwb" else name
    if name in _LEGACY_X86:
        return "r" + name
    if n == 3 and name[0] == "e" and name[1:] in _LEGACY_X86:
        return "r" + name[1:]
    if n == 2 and name[0] in "abcd" and name[1] in "lh":
        return "r" + name[0] + "x"
    if n == 3 and name[2] == "l" and name[:2] in ("si", "di", "bp", "sp"):
        return "r" + name[:2]
    return name


def registers(lines: Sequence[LogLine]) -> tuple[Registers, int | None]:
    """The kernel registers of an oops (from its kernel ``RIP:`` line on) and the line of the ``RIP:`` line.

    A report may print a second register block for user space after the call trace; only the first
    block of the kernel's own frame counts.
    """
    values: list[tuple[str, int]] = []
    at: list[tuple[str, int]] = []
    seen: set[str] = set()
    rip_at: int | None = None
    for i, line in enumerate(lines):
        body = line.body
        if rip_at is None:
            # The substring each test needs, first: most lines above the RIP hold neither (6,251 in the corpus x1).
            if ("IP: 00" in body and _X86_KERNEL_RIP.match(body)) or (
                "pc :" in body and body.lstrip().startswith("pc :")
            ):
                rip_at = i
            else:
                continue
        elif body.lstrip().startswith(("RIP:", "Call Trace", "Call trace", "<TASK>", "<IRQ>")):
            break
        # Each family's patterns only where a line holds a letter every one of their names has: an x86 name an
        # upper-case R or E, an arm or arm64 name an x, r or p (x0, sp, lr, pc; r10, fp, ip).  Without, a pattern
        # finds nothing, and the arm patterns (an alternation, tried at every character) cost ~6,000 instructions
        # a line of an x86 register block, whose names and hex digits hold none of the three (the corpus x1: 180
        # blocks, 28 of the 79 M instructions of this function).
        # Each pattern's two groups (name, value) as findall gives them, not a match object a register and a
        # method call a group (~1.2 us less a line of a register block, ~1,400 lines of the corpus x4's readings).
        if "R" in body or "E" in body:
            for found, value in _X86_REG.findall(body):
                name = found.lower()
                name = "r" + name[1:] if name.startswith("e") and len(name) == 3 else name
                if name not in seen and name != "rip":
                    seen.add(name)
                    values.append((name, int(value, 16)))
                    at.append((name, line.number))
        # And only where it holds ": ", which both arm patterns need after a name: not a frame line of the call
        # trace an old kernel prints right after its registers ("? vprintk_func+0x7d/0x113" holds an x and a p).
        if ("x" in body or "r" in body or "p" in body) and ": " in body:
            for name, value in (*_ARM64_REG.findall(body), *_ARM_REG.findall(body)):
                if name not in seen:
                    seen.add(name)
                    values.append((name, int(value, 16)))
                    at.append((name, line.number))
    return Registers(tuple(values), tuple(at)), rip_at


# detectors.vmcore.disasm's converter, imported where the capstone module decodes and kept: an ``import`` in a
# compiled function is ~23,000 instructions a call, even of a module imported.
@functools.cache
def _converter() -> Callable[[Any], Instruction]:
    """:func:`detectors.vmcore.disasm.instruction` (where the ``capstone`` module decodes)."""
    from detectors.vmcore.disasm import instruction

    return instruction


def _x86_code(body: str) -> str | None:
    """What :data:`_X86_CODE` takes of a line (its group), None where it does not match.

    Read token by token: the pattern's repeated group is ~8 us a line of 64 bytes in the regex engine (a record of
    each repetition), ~5 M instructions of the corpus x4's listings.  The group runs from past ``Code: `` to the
    line's last character that is not blank (the pattern's ``\\s`` and ``str.strip`` are the same characters), and
    holds tokens one blank apart, each two hex digits maybe in ``<`` and ``>``.
    """
    text = body.strip()
    if not text.startswith("Code: "):
        return None
    text = text[6:]
    for token in text.split(" "):
        lo = 1 if len(token) > 2 and token[0] == "<" else 0
        hi = len(token) - 1 if len(token) - lo > 2 and token[-1] == ">" else len(token)
        if token[lo:hi] not in _HEX_BYTES:
            return None
    return text


def _x86_bytes(text: str) -> tuple[bytes, int] | None:
    """The code bytes and the index of the marked (faulting) byte (the last byte marked ``<``).

    ``text`` is what :data:`_X86_CODE` took: two hex digits a byte, each maybe in ``<`` ``>``, one blank
    apart, so that the bytes are its hex digits and the marked byte's index is the number of blanks before its
    ``<`` (one ``bytes.fromhex``, not an ``int`` a byte).
    """
    at = text.rfind("<")
    if at < 0:
        return None
    return bytes.fromhex(text.replace("<", "").replace(">", "")), text.count(" ", 0, at)


class _Decoded:
    """The instructions of a ``Code:`` line: decoded in full (operands, registers) only where looked at.

    Capstone's detail costs ~50 us an instruction through its module and a listing looks at a few of them (the
    faulting one, the load of its base register, a trap's compare), so each instruction before the faulting one is
    decoded in full the first time it is read: x86 decoding of an instruction depends on its bytes alone,
    so this is what decoding them all at once gave.  The faulting one (``faulting``) is decoded in full; those
    after it are shown only (their operands are never read, and no record of them is made unless one is).
    """

    def __init__(
        self, data: bytes, lite: list[tuple[int, int, str, str]], fault: int, faulting: _Insn, sure: int = 0
    ) -> None:
        self._data = data
        self.lite = lite  # (address, size, mnemonic, operands) of every instruction, as capstone prints them
        # The first instruction every decoding the bytes allow holds (_decode_x86): those before it are uncertain,
        # never read (the load of a register, a trap's compare).
        self.sure = sure
        self._full: list[_Insn | None] = [None] * len(lite)
        self._full[fault] = faulting

    def __len__(self) -> int:
        return len(self.lite)

    def __getitem__(self, index: int) -> _Insn:
        got = self._full[index]
        if got is None:
            address, size, _, _ = self.lite[index]
            at = address - _BASE
            decoded = _detailed_at(self._data[at : at + size], address)
            assert decoded is not None  # (the bytes the lite decode read as this instruction)
            got = self._full[index] = decoded[0]
        return got

    def writes(self, index: int) -> tuple[tuple[str, ...], bool]:
        """The registers an instruction writes and whether it is a call: what a search for the last write of a
        register reads of each instruction it passes."""
        insn = self[index]
        return insn.writes, insn.is_call


def _detailed_at(data: bytes, address: int) -> tuple[_Insn, str | None] | None:
    """The first x86-64 instruction of ``data`` at ``address`` decoded with capstone's detail: its record
    (what :func:`detectors.vmcore.disasm.instruction` gives) and what it does to its memory operand
    (:func:`_access`); None when it does not decode."""
    library = _capstone()
    if library is not None:
        return library.x86_detailed(data, address)
    got = list(_module_decoder(_CS_ARCH_X86, _CS_MODE_64, True).disasm(data, address, 1))
    return (_insn_of(_converter()(got[0])), _access(got[0])) if got else None


def _lite(
    arch: int, mode: int, data: bytes, address: int, end: int = -1, texts: bool = True, failed: set[int] | None = None
) -> list[tuple[int, int, str, str]]:
    """Every instruction of ``data`` as capstone prints it without detail: (address, size, mnemonic, operands).

    With ``end``: none unless the last one ends there (the others are not read to their text where not), and then
    their addresses added to ``failed`` when given.  ``texts`` False: the mnemonics and operands are left "".
    """
    library = _capstone()
    if library is not None:
        return library.lite(arch, mode, data, address, end, texts, failed)
    got = list(_module_decoder(arch, mode, False).disasm_lite(data, address))
    if end >= 0 and (not got or got[-1][0] + got[-1][1] != end):
        if failed is not None:
            failed.update(at for at, _, _, _ in got)
        return []
    return got if texts else [(at, size, "", "") for at, size, _, _ in got]


@functools.cache
def _module_decoder(arch: int, mode: int, detail: bool) -> Any:
    """A decoder of the ``capstone`` module (where its library is not called directly: :func:`_capstone`)."""
    import capstone

    md = capstone.Cs(arch, mode)
    md.detail = detail
    return md


#: :func:`_decode_x86`'s answers by the ``Code:`` bytes and the mark.  A log's distinct reports often print the same
#: ``Code:`` line (one faulting site reached from several stacks: 24 of the shared corpus x4's 116 decodings), and a
#: decoding is capstone's through ctypes (~830,000 instructions compiled).  x86 decoding depends on the bytes alone,
#: and a :class:`_Decoded` decodes an instruction in full when first read, the same whichever listing reads it first.
_DECODED: Final[dict[tuple[bytes, int], tuple[_Decoded, int, str | None] | None]] = {}
_DECODED_KEPT: Final = 256  # decodings held (each ~10-20 KB); emptied when full
_NOT_DECODED: Final = object()


def _decoded_x86(data: bytes, mark: int) -> tuple[_Decoded, int, str | None] | None:
    """:func:`_decode_x86`, remembered (:data:`_DECODED`)."""
    key = (data, mark)
    got = _DECODED.get(key, _NOT_DECODED)
    if got is not _NOT_DECODED:
        return cast("tuple[_Decoded, int, str | None] | None", got)
    if len(_DECODED) >= _DECODED_KEPT:
        _DECODED.clear()
    decoded = _DECODED[key] = _decode_x86(data, mark)
    return decoded


def _decode_x86(data: bytes, mark: int) -> tuple[_Decoded, int, str | None] | None:
    """Instructions before and from the mark, the index of the faulting one and what it does to its memory operand
    (:func:`_access`)."""
    # Only the faulting instruction and those before it are read to their operands and registers: the ones
    # after it are shown, decoded without capstone's detail.  The faulting one is decoded with detail once, for
    # its registers and operand and for what it does to that operand.
    fault = _detailed_at(data[mark:], _BASE + mark)
    if fault is None:
        return None
    head, access = fault
    if head.memory is None:
        access = None
    rest = _BASE + mark + head.size
    lite_after = _lite(_CS_ARCH_X86, _CS_MODE_64, data[rest - _BASE :], rest)
    lite_after.insert(0, (head.address, head.size, head.mnemonic, head.op_str))
    # The instructions before the mark: those of the first start whose instructions end exactly at the mark, found
    # without capstone's detail (decoded in full only when read: _Decoded), and how many of them are sure.
    before, sure = _before_mark(data, mark)
    return _Decoded(data, before + lite_after, len(before), head, sure), len(before), access


#: The longest x86 instruction (bytes): the Code: bytes' first true instruction boundary is within this many bytes.
_X86_LONGEST: Final = 15


def _before_mark(data: bytes, mark: int) -> tuple[list[tuple[int, int, str, str]], int]:
    """The instructions of the first start whose decoding ends exactly at the mark, and the index of the first that
    is sure.

    The bytes start inside an instruction; the next boundary, where the true stream starts, is within the first
    :data:`_X86_LONGEST` bytes.  Each start there whose decoding ends at the mark may be it (a wrong one often
    decodes to the mark too: its first instruction or two are made of the tails of real ones, then it meets the
    true stream), so an instruction is sure only where every such decoding holds it.  Decodings that meet go on
    together, so the sure ones are the last ones of each; a start on a decoding found is its tail, not decoded
    again.  Without a start there that ends at the mark, the first later one is shown, none of it sure.
    """
    first: list[tuple[int, int, str, str]] = []
    common: set[int] | None = None  # the addresses every decoding found so far holds
    # An instruction's length is its bytes' alone, so a decoding from an address another decoding passed through is
    # that one's tail: one that ends at the mark from there (address -> its addresses and the index there), or one
    # that does not.  Such starts are not decoded again (~28% of them in the shared corpus), and only the first
    # decoding that ends at the mark is read to its text (the one shown).
    tails: dict[int, tuple[list[int], int]] = {}
    failed: set[int] = set()
    for start in range(min(mark, _X86_LONGEST)):
        at = _BASE + start
        if at in failed:
            continue
        known = tails.get(at)
        if known is not None:
            addresses, index = known
            tail = set(addresses[index:])
        else:
            got = _lite(_CS_ARCH_X86, _CS_MODE_64, data[start:mark], at, _BASE + mark, not first, failed)
            if not got:
                continue
            addresses = [a for a, _, _, _ in got]
            for index, a in enumerate(addresses):
                tails.setdefault(a, (addresses, index))
            tail = set(addresses)
            if not first:
                first = got
        common = tail if common is None else common & tail
    if common is not None:
        return first, len(first) - len(common)
    for start in range(_X86_LONGEST, mark):
        got = _lite(_CS_ARCH_X86, _CS_MODE_64, data[start:mark], _BASE + start, _BASE + mark)
        if got:
            return got, len(got)
    return [], 0


def _writes_to(insns: _Decoded, index: int, register: str) -> bool:
    """Whether an instruction writes the register, or is a call, which may change it (a caller-saved one)."""
    writes, is_call = insns.writes(index)
    return register in writes or (is_call and register in _CALLER_SAVED)


def _last_write(insns: _Decoded, before: int, register: str) -> int | None:
    """The last sure instruction before ``before`` that writes ``register`` (an uncertain one is no fact)."""
    for i in range(before - 1, insns.sure - 1, -1):
        if _writes_to(insns, i, register):
            return i
    return None


def _written(insns: _Decoded, start: int, end: int, register: str) -> bool:
    return any(_writes_to(insns, i, register) for i in range(start, end))


def _operand_text(insn: _Insn) -> str | None:
    m = re.search(r"\[[^\]]+\]", insn.op_str)
    return m.group(0) if m else None


def _access(insn: Any) -> str | None:
    """What an x86-64 instruction (a ``CsInsn`` decoded with detail) does to its memory operand: ``read``, ``write``
    or ``read-write`` (capstone's operand access flags, so that a store by ``movaps`` or ``stos`` is a write and
    ``add [mem], reg`` both)."""
    for op in insn.operands:
        if op.type == _X86_OP_MEM and insn.mnemonic != "lea":
            read, write = bool(op.access & _CS_AC_READ), bool(op.access & _CS_AC_WRITE)
            return "read-write" if read and write else "write" if write else "read"
    return None


def _compared(insns: _Decoded, fault: int, regs: Registers) -> tuple[tuple[str, int | None], ...]:
    """For a trap (``ud2``): the registers of the compare that decides it, when they still hold their values."""
    if insns[fault].mnemonic != "ud2":
        return ()
    for i in range(fault - 1, max(insns.sure - 1, fault - 4), -1):
        # The mnemonic as capstone prints it without detail (its decode with detail, ~30 us, only for a compare).
        if insns.lite[i][2] not in ("cmp", "test"):
            continue
        insn = insns[i]
        if insn.memory is None:
            names = [r.strip() for r in insn.op_str.split(",")]
            if all(re.fullmatch(r"r[a-z0-9]+", n) for n in names) and not any(
                _written(insns, i + 1, fault, n) for n in names
            ):
                got = tuple((n, regs.get(n)) for n in names)
                return got if all(v is not None for _, v in got) else ()
            return ()
    return ()


def listing(lines: Sequence[LogLine], first: int) -> CodeListing | None:
    """The kernel ``Code:`` line of a report decoded, or None when the report has none (or it cannot be read)."""
    regs, rip_at = registers(lines)
    if rip_at is None:
        return None  # no kernel RIP: a Code: line is user space's (an OOM's or a hung task's register dump)
    arm32 = _ARM32_PC.match(lines[rip_at].body) is not None
    # Not only the lines just after the RIP: an old kernel (3.x) prints Code: after its stack words and call trace.
    for line in lines[rip_at:]:
        body = line.body
        # (Each word the stop's pattern needs, first: ~1,500 lines of the corpus x4's listings hold neither.)
        if ("RIP: 00" in body or "NMI backtrace" in body) and _CODE_STOP.match(body):
            return None
        if not body.lstrip().startswith("Code:"):
            continue
        # the lines of the register values, as offsets from the report's first line (a fact of a value cites its)
        reg_at = tuple((name, number - first) for name, number in regs.lines)
        if (text := _x86_code(body)) is not None and (got := _x86_bytes(text)) is not None:
            return _x86_listing(line.number - first, *got, regs, reg_at)
        if (m := _ARM64_CODE.match(body)) is not None:
            return _arm_listing(line.number - first, m.group(1), regs, "arm" if arm32 else "arm64", reg_at)
        return None
    return None


def _x86_listing(
    at: int, data: bytes, mark: int, regs: Registers, reg_at: tuple[tuple[str, int], ...]
) -> CodeListing | None:
    decoded = _decoded_x86(data, mark)
    if decoded is None:
        return None
    insns, fault, access = decoded
    sure = insns.sure
    shown = tuple(
        _new_tuple(CodeInstruction, (address - (_BASE + mark), f"{mnemonic} {op_str}".strip(), n == fault, n < sure))
        for n, (address, size, mnemonic, op_str) in enumerate(insns.lite)
        if size
    )
    insn = insns[fault]
    memory = insn.memory
    base = memory.base if memory is not None and memory.base not in (None, "rip") else None
    loaded_from = loaded_base = loaded_value = None
    if base is not None:
        w = _last_write(insns, fault, base)
        if w is not None and insns[w].mnemonic.startswith("mov") and insns[w].memory is not None:
            load = insns[w]
            assert load.memory is not None
            loaded_from = _operand_text(load)
            lb = load.memory.base
            if lb not in (None, "rip") and lb != base and not _written(insns, w + 1, fault, str(lb)):
                loaded_base = lb
                loaded_value = regs.get(str(lb))
    return _new_tuple(CodeListing, (
        "x86_64", at, shown, insn.text(), _operand_text(insn) if memory is not None else None, access, base,
        regs.get(base) if base else None, memory.index if memory is not None else None,
        regs.get(memory.index) if memory is not None and memory.index else None,
        memory.disp if memory is not None else None, loaded_from, loaded_base,
        loaded_value, _compared(insns, fault, regs), reg_at))  # fmt: skip


def _arm_access(mnemonic: str) -> str | None:
    """What an arm or arm64 load/store does to its memory operand (ldr/ldp/ldm/pop read, str/stp/stm/push write)."""
    if mnemonic.startswith(("ld", "pop")):
        return "read"
    if mnemonic.startswith(("st", "push")):
        return "write"
    return None


_ARM_MEM = rc.compile(r"\[(\w+)(?:, #(-?(?:0x[0-9a-f]+|\d+)))?")


def _arm_listing(
    at: int, words: str, regs: Registers, arch: str, reg_at: tuple[tuple[str, int], ...]
) -> CodeListing | None:
    """arm64's (and 32-bit arm's) Code: words, the faulting one in parentheses, with its operand's base register."""
    data = bytearray()
    mark = None
    for token in words.split():
        if token.startswith("("):
            mark = len(data)
        data += int(token.strip("()"), 16).to_bytes(4, "little")
    if mark is None:
        return None
    decoded = _lite(_CS_ARCH_ARM64 if arch == "arm64" else _CS_ARCH_ARM, _CS_MODE_ARM, bytes(data), _BASE)
    shown = tuple(
        _new_tuple(
            CodeInstruction, (address - (_BASE + mark), f"{mnemonic} {ops}".strip(), address == _BASE + mark, False)
        )
        for address, _size, mnemonic, ops in decoded
    )
    fault = next((i.text for i in shown if i.faulting), None)
    mnemonic = next((m for a, _s, m, _o in decoded if a == _BASE + mark), "")
    mem = _ARM_MEM.search(fault) if fault else None
    base = mem.group(1) if mem and mem.group(1) != "pc" else None
    disp = int(mem.group(2), 0) if mem and mem.group(2) else None  # capstone's text: a 32-bit displacement
    operand = re.search(r"\[[^\]]+\]", fault) if mem and fault else None
    return _new_tuple(CodeListing, (
        arch, at, shown, fault, operand.group(0) if operand else None,
        _arm_access(mnemonic) if mem else None, base, regs.get(base) if base else None, None, None, disp,
        None, None, None, (), reg_at))  # fmt: skip


# ---------------------------------------------------------------- capstone's C library, called directly
#
# The ``capstone`` module's import is ~20 ms of CPU (its ``ctypes.util``, which imports subprocess, tempfile and
# shutil; ``importlib.resources`` and zipfile; the records of 18 architectures), ~5% of a report-dense log's whole
# run, for the two calls a Code: line needs.  Its own shared library is loaded here as the module loads it (the
# package's ``lib/libcapstone.so``, ``RTLD_DEEPBIND``) and called through ctypes: ``cs_disasm``, ``cs_regs_access``
# and ``cs_reg_name``, their records read at the offsets of capstone 5.0's headers for a 64-bit host (a test checks
# them against the module's own ctypes records, and every answer against the module's).  Where that cannot be
# said (another API version, a diet build, ``LIBCAPSTONE_PATH`` set, another platform's file, a 32-bit host), the
# module is used as before.

#: ``cs_insn``: id, address, size, bytes, mnemonic, op_str (NUL-terminated), the detail's pointer.
_CS_INSN: Final = struct.Struct("<I4xQH24s32s160s6xQ")
_CS_INSN_AT: Final = struct.Struct("<8xQH")  # its address and size alone
#: ``cs_detail``'s x86 part: the operands' count, then its ``cs_x86_op``s (48 bytes each): type, the memory
#: operand's segment, base, index, scale and displacement, the operand's size and access flags.
_CS_X86_OP_COUNT: Final = 96 + 64
_CS_X86_OPS: Final = 96 + 72
_CS_X86_OP: Final = struct.Struct("<I4xIIIiqBB")
_CS_X86_OP_SIZE: Final = 48
_CS_DETAIL_READ: Final = _CS_X86_OPS + 8 * _CS_X86_OP_SIZE  # the bytes of a detail record read (the x86 part's)
# capstone.h and x86.h's values (the module's CS_ARCH_X86, CS_MODE_64, CS_OPT_DETAIL, X86_OP_MEM, CS_AC_READ, ...).
_CS_ARCH_ARM: Final = 0
_CS_ARCH_ARM64: Final = 1
_CS_ARCH_X86: Final = 3
_CS_MODE_ARM: Final = 0
_CS_MODE_64: Final = 8
_CS_OPT_DETAIL: Final = 2
_CS_OPT_ON: Final = 3
_CS_SUPPORT_DIET: Final = 0x10000
_X86_OP_MEM: Final = 3
_CS_AC_READ: Final = 1
_CS_AC_WRITE: Final = 2


class _Capstone:
    """capstone's shared library and the handles opened on it (one per architecture, mode and detail)."""

    def __init__(self, lib: Any, ctypes: Any) -> None:
        self.lib = lib
        self.ctypes = ctypes
        # A handle per thread: capstone's handle is not for threads to share (its maintainers: "each thread has its
        # own handle", capstone-engine/capstone#987; ctypes lets threads call at once).  A thread's number may be
        # used again once it ended, and with it the handle no one else holds then.
        self.handles: dict[tuple[int, int, int, bool], int] = {}
        self.names: dict[int, str | None] = {}  # x86 register names by capstone's id
        # Each call has its own result pointer and register arrays, never ones kept here: ctypes releases the GIL
        # during a call, so threads decoding at once (a Dask worker's --nthreads running triage_batch) would
        # overwrite each other's pointer and free one result twice.  (~1 us a call to make them.)
        self.registers = ctypes.c_uint16 * 64

    def handle(self, arch: int, mode: int, detail: bool) -> int:
        key = (_thread.get_ident(), arch, mode, detail)  # (threading's, without its import: ~3.8 M instructions)
        got = self.handles.get(key)
        if got is None:
            ctypes = self.ctypes
            csh = ctypes.c_size_t()
            if self.lib.cs_open(arch, mode, ctypes.byref(csh)) != 0:
                raise OSError(f"capstone's cs_open({arch}, {mode}) failed")
            if detail:
                self.lib.cs_option(csh, _CS_OPT_DETAIL, _CS_OPT_ON)
            got = self.handles[key] = int(csh.value)
        return got

    def lite(
        self,
        arch: int,
        mode: int,
        data: bytes,
        address: int,
        end: int,
        texts: bool = True,
        failed: set[int] | None = None,
    ) -> list[tuple[int, int, str, str]]:
        """``Cs(arch, mode).disasm_lite(data, address)``; with ``end`` (not -1), none unless the last instruction ends
        there (and then their addresses added to ``failed`` when given); ``texts`` False: mnemonics and operands
        left ""."""
        lib = self.lib
        insns = self.ctypes.c_void_p()
        n: int = lib.cs_disasm(self.handle(arch, mode, False), data, len(data), address, 0,
                               self.ctypes.byref(insns))  # fmt: skip
        if n <= 0:
            return []
        try:
            raw: bytes = self.ctypes.string_at(insns.value, n * _CS_INSN.size)
        finally:
            lib.cs_free(insns, n)
        if end != -1:
            at, size = _CS_INSN_AT.unpack_from(raw, (n - 1) * _CS_INSN.size)
            if at + size != end:
                if failed is not None:
                    failed.update(_CS_INSN_AT.unpack_from(raw, i * _CS_INSN.size)[0] for i in range(n))
                return []
        out: list[tuple[int, int, str, str]] = []
        if not texts:
            for i in range(n):
                at, size = _CS_INSN_AT.unpack_from(raw, i * _CS_INSN.size)
                out.append((at, size, "", ""))
            return out
        for i in range(n):
            _id, at, size, _bytes, mnemonic, op_str, _detail = _CS_INSN.unpack_from(raw, i * _CS_INSN.size)
            out.append((at, size, _c_text(mnemonic), _c_text(op_str)))
        return out

    def x86_detailed(self, data: bytes, address: int) -> tuple[_Insn, str | None] | None:
        """The first x86-64 instruction of ``data`` decoded with detail: its record (what
        :func:`detectors.vmcore.disasm.instruction` gives of it) and what it does to its memory operand
        (:func:`_access`); None when it does not decode."""
        lib = self.lib
        ctypes = self.ctypes
        csh = self.handle(_CS_ARCH_X86, _CS_MODE_64, True)
        insns = ctypes.c_void_p()
        n: int = lib.cs_disasm(csh, data, len(data), address, 1, ctypes.byref(insns))
        if n <= 0:
            return None
        try:
            pointer: int = insns.value
            _id, at, size, _bytes, mnemonic_c, op_str_c, detail_at = _CS_INSN.unpack_from(
                ctypes.string_at(pointer, _CS_INSN.size)
            )
            detail: bytes = ctypes.string_at(detail_at, _CS_DETAIL_READ)
            read, read_count = self.registers(), ctypes.c_uint8()
            write, write_count = self.registers(), ctypes.c_uint8()
            if lib.cs_regs_access(csh, pointer, read, ctypes.byref(read_count), write,
                                  ctypes.byref(write_count)) != 0:  # fmt: skip
                raise OSError("capstone's cs_regs_access failed")
            writes = self._named(csh, write[: write_count.value])
        finally:
            lib.cs_free(insns, n)
        mnemonic, op_str = _c_text(mnemonic_c), _c_text(op_str_c)
        memory = None
        access = None
        for k in range(detail[_CS_X86_OP_COUNT]):
            kind, _segment, base, index, _scale, disp, _size, flags = _CS_X86_OP.unpack_from(
                detail, _CS_X86_OPS + k * _CS_X86_OP_SIZE
            )
            if kind != _X86_OP_MEM or mnemonic == "lea":
                continue
            if access is None:  # _access: the first memory operand's flags
                read, write = bool(flags & _CS_AC_READ), bool(flags & _CS_AC_WRITE)
                access = "read-write" if read and write else "write" if write else "read"
            if memory is None and not mnemonic.startswith("nop"):  # disasm.instruction: the first memory operand
                memory = _Memory(
                    x86_canonical(self._name(csh, base)) if base else None,
                    x86_canonical(self._name(csh, index)) if index else None,
                    disp,
                )
        return _Insn(at, size, mnemonic, op_str, memory, writes), access

    def _name(self, csh: int, register: int) -> str | None:
        """``cs_reg_name``: an x86 register's name (None for an id without one)."""
        if register in self.names:
            return self.names[register]
        raw: bytes | None = self.lib.cs_reg_name(csh, register)
        got = self.names[register] = None if raw is None else raw.decode("ascii")
        return got

    def _named(self, csh: int, registers: list[int]) -> tuple[str, ...]:
        """:func:`detectors.vmcore.disasm._named`: the 64-bit registers, each once, in order."""
        names: list[Any] = [x86_canonical(self._name(csh, r)) for r in registers]  # (each named: str)
        return tuple(dict.fromkeys(names))


def _c_text(raw: bytes) -> str:
    """A NUL-terminated C string of a fixed-size field, as the module's ctypes record gives it."""
    end = raw.find(b"\0")
    return (raw if end < 0 else raw[:end]).decode("ascii")


@functools.cache
def _capstone() -> _Capstone | None:
    """capstone's shared library loaded as the module loads it, or None where the module is to be used."""
    import os
    import sys
    from importlib.util import find_spec

    # The records are read at a little-endian 64-bit host's offsets (a big-endian one, s390x or ppc64, builds its own
    # lib/ from the sdist and would give byte-swapped sizes and pointers): the module decodes anywhere else.
    if (
        sys.platform != "linux"
        or sys.maxsize <= 2**32
        or sys.byteorder != "little"
        or os.environ.get("LIBCAPSTONE_PATH")
    ):
        return None
    spec = find_spec("capstone")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(next(iter(spec.submodule_search_locations)), "lib", "libcapstone.so")
    if not os.path.exists(path):
        return None
    import ctypes

    try:
        lib = ctypes.CDLL(path, mode=getattr(os, "RTLD_DEEPBIND", 0))
    except OSError:
        return None
    major, minor = ctypes.c_int(), ctypes.c_int()
    lib.cs_version.argtypes = (ctypes.c_void_p, ctypes.c_void_p)
    lib.cs_version(ctypes.byref(major), ctypes.byref(minor))
    lib.cs_support.restype = ctypes.c_bool
    lib.cs_support.argtypes = (ctypes.c_int,)
    if (major.value, minor.value) != (5, 0) or lib.cs_support(_CS_SUPPORT_DIET):
        return None
    size_t, pointer = ctypes.c_size_t, ctypes.c_void_p
    for name, restype, argtypes in (
        ("cs_open", ctypes.c_int, (ctypes.c_uint, ctypes.c_uint, pointer)),
        ("cs_option", ctypes.c_int, (size_t, ctypes.c_int, size_t)),
        ("cs_disasm", size_t, (size_t, ctypes.c_char_p, size_t, ctypes.c_uint64, size_t, pointer)),
        ("cs_free", None, (pointer, size_t)),
        ("cs_reg_name", ctypes.c_char_p, (size_t, ctypes.c_uint)),
        ("cs_regs_access", ctypes.c_int, (size_t, pointer, pointer, pointer, pointer, pointer)),
    ):
        function = getattr(lib, name)
        function.restype, function.argtypes = restype, argtypes
    return _Capstone(lib, ctypes)
