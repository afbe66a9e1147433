"""The fault analysis on machine code and registers (pure: no dump needed)."""

from __future__ import annotations

from detectors.vmcore.disasm import canonical_register, decode, effective_address
from detectors.vmcore.nullfield import analyse_fault
from forensics.model import NotAvailable
from forensics.types.vmcore import Variable
from tests.detectors.vmcore.snapshots import BASE, DEV, FAULT_PC, LAYOUTS
from tests.detectors.vmcore.snapshots import code as _code
from tests.detectors.vmcore.snapshots import regs as _regs


def test_decode_reads_operands_and_register_families() -> None:
    insns = decode(_code())
    load = next(i for i in insns if i.address == FAULT_PC)
    assert load.text() == "mov rax, qword ptr [rdi + 0x30]"
    assert load.memory is not None
    assert (load.memory.base, load.memory.disp, load.memory.index) == ("rdi", 0x30, None)
    assert load.memory_is_source
    assert canonical_register("eax") == "rax"
    assert canonical_register("r9d") == "r9"
    assert effective_address(load.memory, _regs(rdi=0), FAULT_PC + 4) == 0x30


def test_null_member_through_a_register_copy() -> None:
    variables = (Variable(0, "dev", "struct kf_device *", DEV, "struct kf_device"),
                 Variable(0, "channel", "int", 3, None))  # fmt: skip
    fault = analyse_fault(_code(), _regs(rdi=0, rbx=DEV, rax=61), variables, LAYOUTS, 0x30)
    assert not isinstance(fault, NotAvailable)
    assert fault.base_register == "rdi"
    assert fault.address_agrees is True
    assert fault.null_expression == "dev->sensor"
    assert not isinstance(fault.null_field, NotAvailable)
    assert (fault.null_field.struct, fault.null_field.member.name) == ("struct kf_device", "sensor")
    assert not isinstance(fault.read_member, NotAvailable)
    assert (fault.read_member.struct, fault.read_member.member.name) == ("struct kf_sensor", "ops")
    assert fault.confidence >= 0.85
    assert any("kept in rbx" in step for step in fault.steps)


def test_no_matching_variable_falls_back_to_the_type_with_less_confidence() -> None:
    variables = (Variable(0, "dev", "struct kf_device *", None, "struct kf_device"),)
    fault = analyse_fault(_code(), _regs(rdi=0, rbx=0x1234, rax=61), variables, LAYOUTS, 0x30)
    assert not isinstance(fault, NotAvailable)
    assert fault.null_expression == "dev->sensor"
    assert fault.confidence < 0.85


def test_not_a_null_pointer_and_a_disagreeing_cr2() -> None:
    fault = analyse_fault(_code(), _regs(rdi=DEV, rbx=DEV), (), LAYOUTS, 0xDEAD)
    assert not isinstance(fault, NotAvailable)
    assert fault.address_agrees is False
    assert isinstance(fault.null_field, NotAvailable)
    missing = analyse_fault(_code(pc=FAULT_PC + 1), _regs(rdi=0), (), LAYOUTS, 0x30)
    assert isinstance(missing, NotAvailable)


def test_arm64_code_does_not_fail() -> None:
    # ldr x0, [x1, #8]; ret
    arm = _code("AARCH64", bytes.fromhex("200440f9c0035fd6"), BASE)
    insns = decode(arm)
    assert [i.mnemonic for i in insns] == ["ldr", "ret"]
    fault = analyse_fault(arm, _regs(x1=0), (), LAYOUTS, 8)
    assert not isinstance(fault, NotAvailable)
    assert isinstance(fault.null_field, NotAvailable)


def test_a_trap_or_an_interrupt_is_no_fault_to_reason_about() -> None:
    """ud2 (BUG/WARN) and an instruction a lockup detector's interrupt took: no steps, only why nothing faulted."""
    trap = analyse_fault(_code("X86_64", bytes.fromhex("0f0b"), BASE), _regs(rdi=0), (), LAYOUTS, None)
    assert not isinstance(trap, NotAvailable)
    assert trap.steps == () and trap.stopped is not None and "BUG() and WARN()" in trap.stopped
    spin = analyse_fault(_code(), _regs(rdi=0), (), LAYOUTS, None, interrupted="a timer interrupt took the CPU here")
    assert not isinstance(spin, NotAvailable)
    assert spin.steps == () and spin.stopped == "a timer interrupt took the CPU here"
    assert isinstance(spin.null_field, NotAvailable) and spin.base_register is None


def test_a_general_protection_fault_compares_the_reported_address() -> None:
    fault = analyse_fault(
        _code(), _regs(rdi=0x6B6B6B6B6B6B6B6B), (), LAYOUTS, None, no_address=("none: a GPF", 0x6B6B6B6B6B6B6B9B)
    )
    assert not isinstance(fault, NotAvailable)
    assert fault.steps[2] == (
        "effective address 0x6b6b6b6b6b6b6b9b; fault address (CR2) none: a GPF; the report's non-canonical address "
        "0x6b6b6b6b6b6b6b9b is this one"
    )
