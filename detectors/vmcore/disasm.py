"""Disassembly of the faulting function with capstone, and effective addresses.

drgn has no disassembler; capstone decodes the bytes that the adapter read
from the dump.  x86-64 is decoded in full (memory operands, registers read and
written); arm64 is decoded for display only, and its effective addresses are
not computed.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from forensics.types.registers import CodeBytes, Instruction, MemoryOperand, RegisterSet

# Sub-registers name the 64-bit register they live in: a write to eax or al
# changes rax as far as tracking a pointer is concerned.
_X86_FAMILIES = {
    "rax": ("rax", "eax", "ax", "al", "ah"),
    "rbx": ("rbx", "ebx", "bx", "bl", "bh"),
    "rcx": ("rcx", "ecx", "cx", "cl", "ch"),
    "rdx": ("rdx", "edx", "dx", "dl", "dh"),
    "rsi": ("rsi", "esi", "si", "sil"),
    "rdi": ("rdi", "edi", "di", "dil"),
    "rbp": ("rbp", "ebp", "bp", "bpl"),
    "rsp": ("rsp", "esp", "sp", "spl"),
    **{f"r{n}": (f"r{n}", f"r{n}d", f"r{n}w", f"r{n}b") for n in range(8, 16)},
}
_X86_CANONICAL = {sub: full for full, subs in _X86_FAMILIES.items() for sub in subs}

#: Registers a call may change (System V x86-64 ABI, which the kernel follows).
X86_CALLER_SAVED = frozenset({"rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11"})


def canonical_register(name: str) -> str:
    """The 64-bit register a (sub-)register belongs to: ``eax`` -> ``rax``."""
    return _X86_CANONICAL.get(name, name)


def addresses_named(code: CodeBytes) -> set[int]:
    """Every address an x86-64 instruction of ``code`` names: rip-relative operands and immediates.

    Decodes without capstone's per-instruction detail (``disasm_lite``), several times faster than
    :func:`decode`, for scans of whole functions (which of them take a given lock).
    """
    import capstone

    if code.arch.upper() not in ("X86_64", "X86-64", "AMD64"):
        return set()
    md = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    out: set[int] = set()
    for address, size, _mnemonic, op_str in md.disasm_lite(code.data, code.start):
        for sign, rip_disp in _RIP_RELATIVE.findall(op_str):
            disp = int(rip_disp, 16)
            out.add(address + size + (-disp if sign == "-" else disp))
        # -mcmodel=kernel: a module passes &var as a sign-extended 32-bit immediate.
        out.update(int(h, 16) for h in _HEX.findall(op_str))
    return out


_RIP_RELATIVE = re.compile(r"\[rip ([+-]) (0x[0-9a-f]+)\]")
_HEX = re.compile(r"0x[0-9a-f]+")


@functools.cache
def _detailed(arch: int, mode: int) -> Any:
    """One capstone handle with per-instruction detail per architecture: opening one costs ~0.4 ms, more than
    decoding a ``Code:`` line (``kforensic dmesg`` decodes one per oops of a log)."""
    import capstone

    md = capstone.Cs(arch, mode)
    md.detail = True
    return md


def decode(code: CodeBytes, count: int = 0) -> list[Instruction]:
    """Decode ``code`` from its start (``count`` instructions at most, 0: all); stops at the first undecodable byte."""
    import capstone

    if code.arch.upper() in ("X86_64", "X86-64", "AMD64"):
        md = _detailed(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    elif code.arch.upper() in ("AARCH64", "ARM64"):
        md = _detailed(capstone.CS_ARCH_ARM64, capstone.CS_MODE_ARM)
    else:
        return []
    x86_mode = code.arch.upper() not in ("AARCH64", "ARM64")
    return [instruction(insn, x86_mode) for insn in md.disasm(code.data, code.start, count)]


def instruction(insn: Any, x86_mode: bool = True) -> Instruction:
    """One instruction capstone decoded with detail (a ``CsInsn``), as :func:`decode` gives it: on x86-64 with its
    memory operand and the registers it reads and writes (``x86_mode``), elsewhere its text alone."""
    from capstone import CS_AC_WRITE, x86

    memory = None
    memory_is_source = memory_is_written = False
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    if x86_mode:
        read_regs, write_regs = insn.regs_access()
        reads, writes = _named(insn, read_regs), _named(insn, write_regs)
        for n, op in enumerate(insn.operands):
            if op.type == x86.X86_OP_MEM and insn.mnemonic != "lea" and not insn.mnemonic.startswith("nop"):
                m = op.mem
                memory = MemoryOperand(
                    base=canonical_register(insn.reg_name(m.base)) if m.base else None,
                    index=canonical_register(insn.reg_name(m.index)) if m.index else None,
                    scale=m.scale,
                    disp=m.disp,
                    segment=insn.reg_name(m.segment) if m.segment else None,
                )
                # In Intel syntax the destination is operand 0; a memory operand
                # elsewhere (or a read-modify-write) is read.
                memory_is_source = n > 0 or insn.mnemonic not in ("mov", "movq", "movl", "movabs")
                memory_is_written = bool(op.access & CS_AC_WRITE)
                break
    return Instruction(
        address=insn.address,
        size=insn.size,
        mnemonic=insn.mnemonic,
        op_str=insn.op_str,
        memory=memory,
        reads=reads,
        writes=writes,
        memory_is_source=memory_is_source,
        memory_is_written=memory_is_written,
    )


def _named(insn: Any, registers: list[int]) -> tuple[str, ...]:
    """capstone's register ids as the 64-bit registers they are part of, each once, in order."""
    return tuple(dict.fromkeys(canonical_register(insn.reg_name(r)) for r in registers))


def written_registers(insn: Any) -> tuple[str, ...]:
    """The registers an x86-64 instruction (a ``CsInsn`` decoded with detail) writes: :func:`instruction`'s
    ``writes``, without reading its operands (~10 of its ~25 us)."""
    return _named(insn, insn.regs_access()[1])


def effective_address(operand: MemoryOperand, registers: RegisterSet, next_pc: int) -> int | None:
    """The address a memory operand refers to, None when a register is unknown or segmented."""
    if operand.segment:  # %gs: per-CPU data; the segment base is not in the registers
        return None
    total = operand.disp
    for reg, scale in ((operand.base, 1), (operand.index, operand.scale)):
        if reg is None:
            continue
        value = next_pc if reg == "rip" else registers.get(reg)
        if value is None:
            return None
        total += value * scale
    return total & 0xFFFFFFFFFFFFFFFF


def instruction_at(instructions: list[Instruction], pc: int) -> int | None:
    """Index of the instruction that starts at ``pc``."""
    for i, insn in enumerate(instructions):
        if insn.address == pc:
            return i
    return None
