"""Hand-built crash dump snapshots for the vmcore detector tests (no dump, no drgn).

One place for the machine code, type layouts and snapshot builders the tests
share: a driver function that reads ``dev->sensor->ops`` through a NULL
``sensor`` (the 01-null-member fixture's bug, written down by hand), and
builders for frames, tasks and whole snapshots with plain defaults.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from forensics.model import NotAvailable
from forensics.types.vmcore import (
    CodeBytes,
    CrashSnapshot,
    Frame,
    LogRecord,
    MemberInfo,
    MemoryTotals,
    ModuleInfo,
    RegisterSet,
    TaskInfo,
    TypeLayout,
    Variable,
)

BASE = 0xFFFFFFFFC0117000
# The prologue and the faulting load of a function reading dev->sensor->ops (gcc -O2, x86-64):
#   push %rbx; mov %rdi,%rbx; sub $8,%rsp; mov 0x18(%rdi),%rdi; movl $0,4(%rsp); lea 4(%rsp),%rdx;
#   mov 0x30(%rdi),%rax; call *(%rax)
CODE = bytes.fromhex("534889fb4883ec08488b7f18c744240400000000488d542404488b4730ff10")
FAULT_PC = BASE + 0x19
DEV = 0xFFFF89F50021B3C0

LAYOUTS = (
    TypeLayout("struct kf_device", 40, (
        MemberInfo(0x0, 16, "name", "char [16]"), MemberInfo(0x10, 4, "id", "int"),
        MemberInfo(0x18, 8, "sensor", "struct kf_sensor *", "struct kf_sensor"),
    )),
    TypeLayout("struct kf_sensor", 56, (
        MemberInfo(0x0, 32, "name", "char [32]"), MemberInfo(0x28, 8, "priv", "void *"),
        MemberInfo(0x30, 8, "ops", "const struct kf_sensor_ops *", "struct kf_sensor_ops"),
    )),
)  # fmt: skip

DUMP = "/dumps/127.0.0.1-2024-05-01/vmcore"
VMLINUX = "/usr/lib/debug/vmlinux-6.1.192"


def code(arch: str = "X86_64", data: bytes = CODE, pc: int = FAULT_PC) -> CodeBytes:
    """The sensor function's machine code, faulting at ``pc``."""
    return CodeBytes(start=BASE, data=data, fault_pc=pc, arch=arch)


def regs(**values: int) -> RegisterSet:
    """A register set from keyword values (``regs(rdi=0)``)."""
    return RegisterSet(tuple(sorted(values.items())))


def frame(
    index: int,
    function: str,
    *,
    pc: int | None = None,
    module: str | None = None,
    source: tuple[str, int] | None = None,
    interrupted: bool = False,
    inline: bool = False,
    offset: int = 0x10,
    size: int = 0x40,
) -> Frame:
    """A backtrace frame (pc made up from the index unless given)."""
    return Frame(
        index=index,
        function=function,
        pc=pc if pc is not None else 0xFFFFFFFF81000000 + 0x100 * index,
        offset=offset,
        size=size,
        module=module,
        source_file=source[0] if source else None,
        source_line=source[1] if source else None,
        inline=inline,
        interrupted=interrupted,
    )


def backtrace(*functions: str, interrupted: int | None = None) -> tuple[Frame, ...]:
    """Frames #0.. of these functions; ``interrupted``: the index of the exception frame."""
    return tuple(frame(i, name, interrupted=i == interrupted) for i, name in enumerate(functions))


def task(pid: int, comm: str, state: str, *functions: str, **changes: Any) -> TaskInfo:
    """A task with a stack of these functions (innermost first)."""
    base = TaskInfo(pid=pid, comm=comm, state=state, cpu=0, on_cpu=False, last_run_ns=None, stack=backtrace(*functions))
    return replace(base, **changes)


def log(*lines: str, start: float = 100.0) -> tuple[LogRecord, ...]:
    """Log records one millisecond apart."""
    return tuple(LogRecord(start + i / 1000, text) for i, text in enumerate(lines))


def snapshot(**changes: Any) -> CrashSnapshot:
    """A snapshot with plain defaults (a sysrq-like panic in bash on CPU 1, nothing extracted); ``changes`` win."""
    na = NotAvailable("not extracted in this test")
    base = CrashSnapshot(
        dump_path=DUMP,
        dump_format="kdump-compressed",
        vmlinux_path=VMLINUX,
        kernel_release="6.1.192",
        build_id="d2274eb51a9292b3a9529072b386650e7e16154a",
        machine="x86_64",
        crash_time=1714550400.0,
        uptime=100.5,
        panic_message="Kernel panic - not syncing: sysrq triggered crash",
        crashed_cpu=1,
        crashed_pid=77,
        crashed_comm="bash",
        taint_mask=0,
        cpus=2,
        memory_bytes=1 << 30,
        backtrace=(),
        registers=NotAvailable("no exception frame"),
        code=NotAvailable("no exception frame"),
        variables=(),
        layouts=(),
        other_cpus=(),
        tasks=(),
        memory=MemoryTotals(na, na, na, na, na, na),
        slab_caches=(),
        modules=(),
        log=(),
        filtered="dump level 31",
    )
    return replace(base, **changes)


#: The log of the NULL-member oops, as the kernel prints it.
NULL_OOPS_LOG = (
    "BUG: kernel NULL pointer dereference, address: 0000000000000030",
    "#PF: supervisor read access in kernel mode",
    "#PF: error_code(0x0000) - not-present page",
    "Oops: 0000 [#1] PREEMPT SMP NOPTI",
    "CPU: 1 PID: 77 Comm: cat Tainted: G           O       6.1.192 #1",
    "RIP: 0010:kf_sensor_read+0x19/0x40 [kf_buggy]",
    "CR2: 0000000000000030",
    "Call Trace:",
    " <TASK>",
    " kf_dev_read+0x2b/0x60 [kf_buggy]",
    " vfs_read+0x9a/0x180",
    " </TASK>",
    "Kernel panic - not syncing: Fatal exception",
)


def null_member_snapshot(**changes: Any) -> CrashSnapshot:
    """``cat`` reads a kf_buggy device whose ``sensor`` is NULL: a page fault at dev->sensor->ops."""
    frames = (
        frame(0, "kf_sensor_read", pc=FAULT_PC, module="kf_buggy", source=("kf_buggy.c", 88), interrupted=True,
              offset=0x19),
        frame(1, "kf_dev_read", module="kf_buggy", source=("kf_buggy.c", 120), offset=0x2B, size=0x60),
        frame(2, "vfs_read", source=("fs/read_write.c", 468), offset=0x9A, size=0x180),
    )  # fmt: skip
    base = snapshot(
        panic_message="BUG: kernel NULL pointer dereference, address: 0000000000000030",
        crashed_comm="cat",
        taint_mask=1 << 12,  # O: an out-of-tree module
        backtrace=frames,
        registers=regs(rdi=0, rbx=DEV, rax=61),
        code=code(),
        variables=(Variable(0, "dev", "struct kf_device *", DEV, "struct kf_device"),),
        layouts=LAYOUTS,
        modules=(ModuleInfo("kf_buggy", "O", True),),
        log=log(*NULL_OOPS_LOG),
    )
    return replace(base, **changes)
