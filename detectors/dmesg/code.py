"""The ``Code:`` bytes of an oops disassembled with capstone, the faulting instruction marked, read with the registers.

x86 prints the bytes around the faulting instruction with that one's first byte in angle
brackets (``... 48 8b 47 20 <8b> 40 08 ...``); arm64 prints words with the faulting one in
parentheses.  The bytes after the mark always decode from the mark; the bytes before it are
decoded from the first start offset whose instructions end exactly at the mark (the kernel's
``scripts/decodecode`` does the same search), so no instruction is invented across the mark.
With the registers of the same oops (``RAX: ...``) the faulting memory operand's base register
has a value, and the load that produced that register (``mov rax, [rdi + 0x20]``) names the
object the bad value was read from.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from detectors.dmesg.lines import LogLine
from forensics import regexcache as rc
from forensics.types.dmesg import CodeInstruction, CodeListing

if TYPE_CHECKING:  # imported where a Code: line is decoded (capstone is a large module to import)
    from forensics.types.registers import Instruction, RegisterSet

#: Registers a call may change (System V x86-64 ABI): detectors.vmcore.disasm._CALLER_SAVED, not imported for it.
_CALLER_SAVED = frozenset({"rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11"})

# Every number this module converts is bounded by its pattern (a kernel prints 64 bits; forensics.units.log_hex):
# a code byte 2 hex digits, an arm word 8, a register 8-16 (each ends at a non-digit), a displacement capstone's.
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
_BASE = 0x1000  # the synthetic address of the first code byte: capstone needs one; offsets are what count


def registers(lines: Sequence[LogLine]) -> tuple[RegisterSet, int | None]:
    """The kernel registers of an oops (from its kernel ``RIP:`` line on) and the line of the ``RIP:`` line.

    A report may print a second register block for user space after the call trace; only the first
    block of the kernel's own frame counts.
    """
    values: list[tuple[str, int]] = []
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
        if "R" in body or "E" in body:
            for m in _X86_REG.finditer(body):
                name = m.group(1).lower()
                name = "r" + name[1:] if name.startswith("e") and len(name) == 3 else name
                if name not in seen and name != "rip":
                    seen.add(name)
                    values.append((name, int(m.group(2), 16)))
        # And only where it holds ": ", which both arm patterns need after a name: not a frame line of the call
        # trace an old kernel prints right after its registers ("? vprintk_func+0x7d/0x113" holds an x and a p).
        if ("x" in body or "r" in body or "p" in body) and ": " in body:
            for m in (*_ARM64_REG.finditer(body), *_ARM_REG.finditer(body)):
                if m.group(1) not in seen:
                    seen.add(m.group(1))
                    values.append((m.group(1), int(m.group(2), 16)))
    return _register_set()(tuple(values)), rip_at


# The records and decoders of detectors.vmcore.disasm, imported at the first Code: line (not by every run that reads
# a report) and kept: an ``import`` in a compiled function is ~23,000 instructions a call, even of a module imported.
@functools.cache
def _register_set() -> type[RegisterSet]:
    from forensics.types.registers import RegisterSet

    return RegisterSet


@functools.cache
def _converter() -> Callable[[Any], Instruction]:
    """:func:`detectors.vmcore.disasm.instruction`."""
    from detectors.vmcore.disasm import instruction

    return instruction


@functools.cache
def _written_registers() -> Callable[[Any], tuple[str, ...]]:
    """:func:`detectors.vmcore.disasm.written_registers`."""
    from detectors.vmcore.disasm import written_registers

    return written_registers


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

    Capstone's detail costs ~50 us an instruction and a listing looks at a few of them (the faulting one,
    the load of its base register, a trap's compare), so each instruction before the faulting one is
    decoded in full the first time it is read: x86 decoding of an instruction depends on its bytes alone,
    so this is what decoding them all at once gave.  The faulting one (``faulting``) is decoded in full; those
    after it are shown only (their operands are never read, and no record of them is made unless one is).
    """

    def __init__(self, data: bytes, lite: list[tuple[int, int, str, str]], fault: int, faulting: Instruction) -> None:
        self._data = data
        self.lite = lite  # (address, size, mnemonic, operands) of every instruction, as capstone prints them
        self._full: list[Instruction | None] = [None] * len(lite)
        self._full[fault] = faulting
        self._writes: list[tuple[tuple[str, ...], bool] | None] = [None] * len(lite)

    def __len__(self) -> int:
        return len(self.lite)

    def __getitem__(self, index: int) -> Instruction:
        got = self._full[index]
        if got is None:
            address, size, _, _ = self.lite[index]
            at = address - _BASE
            got = self._full[index] = _converter()(_detailed_at(self._data[at : at + size], address))
        return got

    def writes(self, index: int) -> tuple[tuple[str, ...], bool]:
        """The registers an instruction writes and whether it is a call: what a search for the last write of a
        register reads of each instruction it passes, decoded without the operands (~10 us, not ~25)."""
        got = self._writes[index]
        if got is None:
            full = self._full[index]
            if full is not None:
                got = (full.writes, full.is_call)
            else:
                address, size, _, _ = self.lite[index]
                at = address - _BASE
                insn = _detailed_at(self._data[at : at + size], address)
                got = (_written_registers()(insn), insn.mnemonic.startswith("call"))
            self._writes[index] = got
        return got


def _detailed_at(data: bytes, address: int) -> Any:
    """The first instruction of ``data`` at ``address`` as capstone decodes it with detail (a ``CsInsn``), or None."""
    got = list(_detail_decoder().disasm(data, address, 1))
    return got[0] if got else None


def _decode_x86(data: bytes, mark: int) -> tuple[_Decoded, int, str | None] | None:
    """Instructions before and from the mark, the index of the faulting one and what it does to its memory operand
    (:func:`_access`)."""
    # Only the faulting instruction and those before it are read to their operands and registers: the ones
    # after it are shown, decoded without capstone's detail (which costs ~50 us an instruction).  The faulting one
    # is decoded with detail once, for its registers and operand and for what it does to that operand.
    fault = _detailed_at(data[mark:], _BASE + mark)
    if fault is None:
        return None
    head = _converter()(fault)
    access = _access(fault) if head.memory is not None else None
    rest = _BASE + mark + head.size
    lite_after = list(_lite_decoder().disasm_lite(data[rest - _BASE :], rest))
    lite_after.insert(0, (head.address, head.size, head.mnemonic, head.op_str))
    # The first start whose instructions end exactly at the mark, found without capstone's detail (~10x
    # cheaper); those before the mark are decoded in full only when read (_Decoded).
    lite = _lite_decoder()
    for start in range(mark):
        before = list(lite.disasm_lite(data[start:mark], _BASE + start))
        if before and before[-1][0] + before[-1][1] == _BASE + mark:
            return _Decoded(data, before + lite_after, len(before), head), len(before), access
    return _Decoded(data, lite_after, 0, head), 0, access


@functools.cache
def _lite_decoder() -> Any:
    import capstone

    return capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)


@functools.cache
def _detail_decoder() -> Any:
    import capstone

    md = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    md.detail = True
    return md


@functools.cache
def _arm64_decoder() -> Any:
    import capstone

    return capstone.Cs(capstone.CS_ARCH_ARM64, capstone.CS_MODE_ARM)


def _writes_to(insns: _Decoded, index: int, register: str) -> bool:
    """Whether an instruction writes the register, or is a call, which may change it (a caller-saved one)."""
    writes, is_call = insns.writes(index)
    return register in writes or (is_call and register in _CALLER_SAVED)


def _last_write(insns: _Decoded, before: int, register: str) -> int | None:
    for i in range(before - 1, -1, -1):
        if _writes_to(insns, i, register):
            return i
    return None


def _written(insns: _Decoded, start: int, end: int, register: str) -> bool:
    return any(_writes_to(insns, i, register) for i in range(start, end))


def _operand_text(insn: Instruction) -> str | None:
    m = re.search(r"\[[^\]]+\]", insn.op_str)
    return m.group(0) if m else None


def _access(insn: Any) -> str | None:
    """What an x86-64 instruction (a ``CsInsn`` decoded with detail) does to its memory operand: ``read``, ``write``
    or ``read-write`` (capstone's operand access flags, so that a store by ``movaps`` or ``stos`` is a write and
    ``add [mem], reg`` both)."""
    memory, can_read, can_write = _access_flags()
    for op in insn.operands:
        if op.type == memory and insn.mnemonic != "lea":
            read, write = bool(op.access & can_read), bool(op.access & can_write)
            return "read-write" if read and write else "write" if write else "read"
    return None


@functools.cache
def _access_flags() -> tuple[int, int, int]:
    """capstone's x86 memory operand type and its read and write access flags."""
    import capstone
    from capstone import x86

    return int(x86.X86_OP_MEM), int(capstone.CS_AC_READ), int(capstone.CS_AC_WRITE)


def _compared(insns: _Decoded, fault: int, regs: RegisterSet) -> tuple[tuple[str, int | None], ...]:
    """For a trap (``ud2``): the registers of the compare that decides it, when they still hold their values."""
    if insns[fault].mnemonic != "ud2":
        return ()
    for i in range(fault - 1, max(-1, fault - 4), -1):
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
        if _CODE_STOP.match(body):
            return None
        if not body.lstrip().startswith("Code:"):
            continue
        if (m := _X86_CODE.match(body)) is not None and (got := _x86_bytes(m.group(1))) is not None:
            return _x86_listing(line.number - first, *got, regs)
        if (m := _ARM64_CODE.match(body)) is not None:
            return _arm_listing(line.number - first, m.group(1), regs, "arm" if arm32 else "arm64")
        return None
    return None


def _x86_listing(at: int, data: bytes, mark: int, regs: RegisterSet) -> CodeListing | None:
    decoded = _decode_x86(data, mark)
    if decoded is None:
        return None
    insns, fault, access = decoded
    shown = tuple(
        CodeInstruction(address - (_BASE + mark), f"{mnemonic} {op_str}".strip(), n == fault)
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
    return CodeListing(
        "x86_64", at, shown, insn.text(), _operand_text(insn) if memory is not None else None, access, base,
        regs.get(base) if base else None, memory.index if memory is not None else None,
        regs.get(memory.index) if memory is not None and memory.index else None,
        memory.disp if memory is not None else None, loaded_from, loaded_base,
        loaded_value, _compared(insns, fault, regs),
    )  # fmt: skip


def _arm_access(mnemonic: str) -> str | None:
    """What an arm or arm64 load/store does to its memory operand (ldr/ldp/ldm/pop read, str/stp/stm/push write)."""
    if mnemonic.startswith(("ld", "pop")):
        return "read"
    if mnemonic.startswith(("st", "push")):
        return "write"
    return None


_ARM_MEM = rc.compile(r"\[(\w+)(?:, #(-?(?:0x[0-9a-f]+|\d+)))?")


def _arm_listing(at: int, words: str, regs: RegisterSet, arch: str) -> CodeListing | None:
    """arm64's (and 32-bit arm's) Code: words, the faulting one in parentheses, with its operand's base register."""
    data = bytearray()
    mark = None
    for token in words.split():
        if token.startswith("("):
            mark = len(data)
        data += int(token.strip("()"), 16).to_bytes(4, "little")
    if mark is None:
        return None
    md = _arm64_decoder() if arch == "arm64" else _arm32_decoder()
    decoded = list(md.disasm_lite(bytes(data), _BASE))
    shown = tuple(
        CodeInstruction(address - (_BASE + mark), f"{mnemonic} {ops}".strip(), address == _BASE + mark)
        for address, _size, mnemonic, ops in decoded
    )
    fault = next((i.text for i in shown if i.faulting), None)
    mnemonic = next((m for a, _s, m, _o in decoded if a == _BASE + mark), "")
    mem = _ARM_MEM.search(fault) if fault else None
    base = mem.group(1) if mem and mem.group(1) != "pc" else None
    disp = int(mem.group(2), 0) if mem and mem.group(2) else None  # capstone's text: a 32-bit displacement
    operand = re.search(r"\[[^\]]+\]", fault) if mem and fault else None
    return CodeListing(
        arch, at, shown, fault, operand.group(0) if operand else None,
        _arm_access(mnemonic) if mem else None, base, regs.get(base) if base else None, None, None, disp,
        None, None, None, (),
    )  # fmt: skip


@functools.cache
def _arm32_decoder() -> Any:
    import capstone

    return capstone.Cs(capstone.CS_ARCH_ARM, capstone.CS_MODE_ARM)
