"""Which NULL pointer, and which struct member, caused a page fault.

From the faulting instruction's memory operand and the registers of the
exception frame, name the base register that held NULL (or a small bogus
value) and the displacement.  Then follow the instructions before the fault
back to the load that produced that register (``mov 0x18(%rbx),%rax``), match
the load's base register to a variable of the frame by value, and read the
variable's type layout: the load names the NULL *field* (``struct
kf_sensor.ops``) and the fault's displacement names the member read *through*
it (``struct kf_sensor_ops.read`` at 0x10).  Every step is recorded so the
reasoning can be checked by hand with ``dis -rl`` and ``struct -o`` in crash.
"""

from __future__ import annotations

from dataclasses import replace

from detectors.vmcore.disasm import X86_CALLER_SAVED, decode, effective_address, instruction_at
from forensics.model import NotAvailable
from forensics.types.registers import Instruction
from forensics.types.vmcore import (
    NULL_PAGE_LIMIT,
    CodeBytes,
    FaultAnalysis,
    FieldRef,
    RegisterSet,
    TypeLayout,
    Variable,
)

#: The instructions BUG() and WARN() compile to (x86-64 ``ud2``, arm64 ``brk``): a trap the kernel set, no fault.
TRAPS = frozenset({"ud2", "brk"})


def _last_write(instructions: list[Instruction], before: int, register: str) -> int | None:
    """Index of the last instruction before ``before`` that writes ``register``.

    A call in between counts as a write of the caller-saved registers.  The
    scan is linear (it ignores jumps), which holds for the straight-line code
    that loads a pointer and dereferences it; a jump target in between lowers
    confidence in the caller.
    """
    for i in range(before - 1, -1, -1):
        insn = instructions[i]
        if register in insn.writes or (insn.is_call and register in X86_CALLER_SAVED):
            return i
    return None


def _written_between(instructions: list[Instruction], start: int, end: int, register: str) -> bool:
    """Whether ``register`` may change in ``instructions[start:end]``."""
    return any(
        register in insn.writes or (insn.is_call and register in X86_CALLER_SAVED) for insn in instructions[start:end]
    )


def _register_copy(insn: Instruction) -> tuple[str, str] | None:
    """``(destination, source)`` of a register-to-register ``mov``."""
    if insn.mnemonic != "mov" or insn.memory is not None or len(insn.writes) != 1 or len(insn.reads) != 1:
        return None
    return insn.writes[0], insn.reads[0]


def value_before(
    instructions: list[Instruction], k: int, register: str, registers: RegisterSet, fault: int
) -> tuple[int, str] | None:
    """The value ``register`` held just before instruction ``k``, from the registers at the fault.

    Known when the register is not written from ``k`` up to the faulting
    instruction, or when a register-to-register copy made of it (or that it was
    made from) survives unchanged to the fault.  Returns the value and the
    register it was read from.
    """
    if not _written_between(instructions, k, fault, register):
        value = registers.get(register)
        return None if value is None else (value, register)
    last = _last_write(instructions, k, register)
    floor = last if last is not None else -1
    for m in range(k - 1, floor, -1):  # copies made of it since its last write
        copy = _register_copy(instructions[m])
        if copy and copy[1] == register and not _written_between(instructions, m + 1, fault, copy[0]):
            value = registers.get(copy[0])
            if value is not None:
                return value, copy[0]
    if last is not None:  # it was itself a copy of a register that survives
        copy = _register_copy(instructions[last])
        if copy and copy[0] == register and not _written_between(instructions, last + 1, fault, copy[1]):
            value = registers.get(copy[1])
            if value is not None:
                return value, copy[1]
    return None


def _owners_by_type(variables: tuple[Variable, ...], by_name: dict[str, TypeLayout], disp: int) -> list[Variable]:
    """Variables whose pointed-to struct has a pointer member exactly at ``disp``, when one type does."""
    owners = [
        v
        for v in variables
        if v.pointee in by_name
        and (m := by_name[v.pointee].member_at(disp)) is not None
        and m.offset == disp
        and m.pointee is not None
    ]
    return owners if len({v.pointee for v in owners}) == 1 else []


def _pointer_variables(variables: tuple[Variable, ...], value: int) -> list[Variable]:
    """Variables of the innermost frames whose pointer value equals ``value``."""
    return [v for v in variables if v.pointee is not None and v.value == value]


def _nothing_to_follow(
    insn: Instruction, window: tuple[Instruction, ...], fault_address: int | None, interrupted: str | None
) -> FaultAnalysis | None:
    """The analysis of an instruction that did not fault (a BUG/WARN trap, one a lockup's interrupt took) or has no
    memory operand to follow; None when it has one."""
    trap = f"{insn.mnemonic} is the trap BUG() and WARN() compile to: the kernel stopped itself"
    stopped = interrupted or (trap if insn.mnemonic in TRAPS else None)
    if stopped is not None:
        nothing = NotAvailable(f"nothing faulted: {stopped}")
        return FaultAnalysis(
            insn, window, None, None, None, None, fault_address, None, nothing, nothing, nothing, 0.0, (), stopped
        )
    if insn.memory is not None:
        return None
    none = NotAvailable("no memory operand")
    return FaultAnalysis(
        insn, window, None, None, None, None, fault_address, None,
        NotAvailable("the faulting instruction has no memory operand"), none, none, 0.2,
        (f"faulting instruction at {insn.address:#x}: {insn.text()}",),
    )  # fmt: skip


def _address_step(
    ea: int, fault_address: int | None, agrees: bool | None, no_address: tuple[str, int | None], base: int | None
) -> str:
    """The step comparing the effective address with the fault address, or saying why the log has none."""
    if fault_address is not None:
        return f"effective address {ea:#x}; fault address (CR2) {fault_address:#x}; agree: {agrees}"
    why, guessed = no_address
    return f"effective address {ea:#x}; fault address (CR2) {why}" + (
        "" if guessed is None else f"; {_guess_agrees(guessed, ea, base)}"
    )


def _guess_agrees(guessed: int, ea: int, base_value: int | None) -> str:
    """How the address a general protection fault's report guesses compares with the computed one."""
    said = f"the report's non-canonical address {guessed:#x}"
    if guessed == ea:
        return f"{said} is this one"
    if guessed == base_value:  # 5.10 reports the base register's value, without the displacement
        return f"{said} is the base register's value, without the displacement"
    return f"{said} differs"


def analyse_fault(
    code: CodeBytes,
    registers: RegisterSet,
    variables: tuple[Variable, ...],
    layouts: tuple[TypeLayout, ...],
    fault_address: int | None,
    *,
    no_address: tuple[str, int | None] = ("not in the log", None),
    interrupted: str | None = None,
) -> FaultAnalysis | NotAvailable:
    """Analyse the faulting instruction; see the module docstring for the steps.

    ``no_address`` says why the log gives no ``fault_address`` and which address the report guesses instead
    (:func:`detectors.vmcore.faultaddr.no_fault_address`); ``interrupted`` that the CPU did not fault here but was
    interrupted (a lockup detector's interrupt): then, as at a BUG/WARN trap, nothing is reasoned about a fault.
    """
    instructions = decode(code)
    idx = instruction_at(instructions, code.fault_pc)
    if idx is None:
        return NotAvailable(f"no instruction starts at the fault pc {code.fault_pc:#x} in the code read from the dump")
    insn = instructions[idx]
    window = tuple(instructions[max(0, idx - 8) : idx + 4])
    early = _nothing_to_follow(insn, window, fault_address, interrupted)
    if early is not None:
        return early
    mem = insn.memory
    assert mem is not None  # _nothing_to_follow took the instructions without one
    steps = [f"faulting instruction at {insn.address:#x}: {insn.text()}"]
    by_name = {layout.name: layout for layout in layouts}
    ea = effective_address(mem, registers, insn.address + insn.size)
    base_value = registers.get(mem.base) if mem.base else None
    agrees = None if ea is None or fault_address is None else ea == fault_address
    steps.append(
        f"memory operand {mem.text()}: {mem.base}={base_value:#x}, displacement {mem.disp:#x}"
        if base_value is not None
        else f"memory operand {mem.text()}: base register value unknown"
    )
    if ea is not None:
        steps.append(_address_step(ea, fault_address, agrees, no_address, base_value))
    confidence = 0.5
    null_expr: str | NotAvailable = NotAvailable("the base register does not hold a NULL-page pointer")
    null_field: FieldRef | NotAvailable = NotAvailable("the base register does not hold a NULL-page pointer")
    read_member: FieldRef | NotAvailable = NotAvailable("the type of the NULL pointer is unknown")
    plain = FaultAnalysis(
        insn, window, mem.base, base_value, mem.disp, ea, fault_address, agrees,
        null_expr, null_field, read_member, 0.3, tuple(steps),
    )  # fmt: skip
    if mem.base is None or base_value is None or base_value >= NULL_PAGE_LIMIT or mem.index:
        return plain
    steps.append(f"{mem.base} holds {base_value:#x}: a NULL pointer (plus {base_value:#x})")
    null_expr = null_field = NotAvailable(f"nothing in the code or the variables says where {mem.base} came from")
    if agrees:
        confidence = 0.7
    pointee: str | None = None
    load_idx = _last_write(instructions, idx, mem.base)
    if load_idx is not None:
        load = instructions[load_idx]
        jump_between = any(i.mnemonic.startswith("j") for i in instructions[load_idx + 1 : idx])
        if load.is_call:
            steps.append(f"{mem.base} was last set by the call at {load.address:#x} ({load.text()}): its return value")
            null_expr = NotAvailable(f"{mem.base} is the return value of {load.op_str}")
            null_field = NotAvailable("the NULL pointer was returned by a function, not loaded from a member")
        elif load.memory is not None and load.memory.base and not load.memory.index and load.memory_is_source:
            src = load.memory.base
            steps.append(
                f"{mem.base} was loaded at {load.address:#x} by {load.text()}: "
                f"{mem.base} = *({src} + {load.memory.disp:#x})"
            )
            known = value_before(instructions, load_idx, src, registers, idx)
            src_value = known[0] if known else None
            owners: list[Variable] = []
            if known is not None:
                via = "" if known[1] == src else f" (kept in {known[1]})"
                owners = [v for v in _pointer_variables(variables, known[0]) if v.pointee in by_name]
                names = ", ".join(f"{v.name} ({v.type_name}, frame #{v.frame})" for v in owners) or "no variable"
                steps.append(f"{src} was {known[0]:#x} at the load{via}: the value of {names}")
            else:
                steps.append(f"{src} changes before the fault and no copy of it survives")
            if not owners:
                # The variable may be optimized out at this pc: a unique struct type with a
                # pointer member at the load's offset is the next best explanation.
                owners = _owners_by_type(variables, by_name, load.memory.disp)
                src_value = None
                if owners:
                    steps.append(f"matching by type: only {owners[0].type_name} has a pointer at that offset")
            if owners:
                owner = owners[0]
                assert owner.pointee is not None
                member = by_name[owner.pointee].member_at(load.memory.disp)
                if member is not None and member.offset == load.memory.disp:
                    null_field = FieldRef(owner.pointee, member)
                    null_expr = f"{owner.name}->{member.name}"
                    pointee = member.pointee
                    steps.append(
                        f"offset {load.memory.disp:#x} of {owner.pointee} is {member.name} "
                        f"({member.type_name}): {null_expr} was NULL"
                    )
                    exact = src_value is not None and len({v.name for v in owners}) == 1
                    confidence = 0.9 if agrees is not False and exact else 0.7
                    if jump_between:
                        confidence -= 0.1
                        steps.append("a jump lies between the load and the fault; the path was assumed straight")
    if pointee is None:
        # No load to follow: a variable that is NULL itself and whose type has a member at the displacement.
        candidates = [v for v in variables if v.value == base_value and v.pointee in by_name]
        fitting = [
            v for v in candidates if v.pointee is not None and by_name[v.pointee].member_at(mem.disp) is not None
        ]
        if len({(v.name, v.pointee) for v in fitting}) == 1:
            var = fitting[0]
            pointee = var.pointee
            null_expr = var.name
            null_field = NotAvailable(f"{var.name} is a NULL {var.type_name} variable, not a member")
            steps.append(f"the variable {var.name} ({var.type_name}, frame #{var.frame}) is NULL")
            confidence = 0.7 if agrees else 0.55
    if pointee is not None and pointee in by_name:
        member = by_name[pointee].member_at(mem.disp)
        if member is not None:
            read_member = FieldRef(pointee, member)
            steps.append(f"the fault reads offset {mem.disp:#x} of {pointee}: {member.name} ({member.type_name})")
            if isinstance(null_expr, str):
                null_expr_read = f"{null_expr}->{member.name}"
                steps.append(f"so the faulting expression is {null_expr_read}")
    return replace(
        plain,
        null_expression=null_expr,
        null_field=null_field,
        read_member=read_member,
        confidence=round(confidence, 2),
        steps=tuple(steps),
    )
