"""Registers and machine code of a crash site: read from a dump (:mod:`forensics.types.vmcore`) or a log.

``kforensic dmesg`` reads a report's register dump and ``Code:`` line into these records; they are kept
apart from the dump snapshot's other records so that reading a log does not make those.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RegisterSet:
    """Register values of a frame, by the names capstone and the kernel use (``rax``, ``rip``)."""

    values: tuple[tuple[str, int], ...]

    def get(self, name: str) -> int | None:
        """The value of a register, None when the frame does not know it."""
        for key, value in self.values:
            if key == name:
                return value
        return None

    def as_dict(self) -> dict[str, int]:
        """The registers as a mapping (a copy)."""
        return dict(self.values)


@dataclass(frozen=True)
class CodeBytes:
    """Machine code read from the dump (not from vmlinux: alternatives and ftrace patch code) or a Code: line."""

    start: int  # address of the first byte (the start of the function's symbol)
    data: bytes
    fault_pc: int
    arch: str  # drgn's architecture name, e.g. ``X86_64`` or ``AARCH64``
    source_lines: tuple[tuple[int, str, int], ...] = ()  # (address, file, line) of instructions, as DWARF has them


@dataclass(frozen=True)
class MemoryOperand:
    """A memory operand ``segment:disp(base, index, scale)``."""

    base: str | None
    index: str | None
    scale: int
    disp: int
    segment: str | None

    def text(self) -> str:
        """AT&T-like text, e.g. ``0x18(%rbx)``."""
        inner = f"%{self.base}" if self.base else ""
        if self.index:
            inner += f",%{self.index},{self.scale}"
        disp = f"{self.disp:#x}" if self.disp >= 0 else f"-{-self.disp:#x}"
        prefix = f"%{self.segment}:" if self.segment else ""
        return f"{prefix}{disp if self.disp else ''}({inner})"


@dataclass(frozen=True)
class Instruction:
    """One decoded instruction."""

    address: int
    size: int
    mnemonic: str
    op_str: str
    memory: MemoryOperand | None
    reads: tuple[str, ...]  # canonical registers read
    writes: tuple[str, ...]  # canonical registers written
    memory_is_source: bool  # the memory operand is read (not only written)
    memory_is_written: bool = False  # the memory operand is written (``mov [m], r``, ``add [m], r``)

    def text(self) -> str:
        """``mnemonic operands`` in Intel syntax, as capstone prints it."""
        return f"{self.mnemonic} {self.op_str}".strip()

    @property
    def is_call(self) -> bool:
        """The instruction is a call."""
        return self.mnemonic.startswith("call")
