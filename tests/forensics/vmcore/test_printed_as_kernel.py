"""What ``kforensic vmcore`` quotes of the dump is what the kernel printed: the log's times as printk wrote them
(byte-identical to makedumpfile's dmesg.txt of the same records), on the real fixtures."""

from __future__ import annotations

import re

import pytest

from forensics.report.vmcore import render_vmcore_markdown, to_document
from tests.vmcore_cases import analysed_id, kernels_of

drgn = pytest.importorskip("drgn")


def _tail_not_printed(name: str, kernel: str) -> tuple[list[str], list[str]]:
    """The dump's log tail as the report quotes it, and its lines that are no line of the case's dmesg.txt."""
    case, result = analysed_id(name, kernel)
    printed = set(case.dmesg.read_text(errors="replace").splitlines())
    tail: list[str] = to_document(result)["log"]["tail"]
    assert tail, "the dump's log has no tail to compare"
    return tail, [line for line in tail if line not in printed]


@pytest.mark.parametrize("kernel", kernels_of("01-null-member"))
def test_the_dumps_log_is_quoted_with_the_times_printk_printed(kernel: str) -> None:
    """printk prints whole microseconds, truncated: the CR2 lines of 01 are ts_nsec 2359122682 on 6.1, printed
    ``[    2.359122]`` (console.log line 249, dmesg.txt lines 261 and 283); rounded, they read ``2.359123``."""
    tail, not_printed = _tail_not_printed("01-null-member", kernel)
    assert not_printed == []
    if kernel == "6.1":
        assert "[    2.359122] CR2: 0000000000000030" in tail


@pytest.mark.parametrize("kernel", kernels_of("11-abba-deadlock"))
def test_a_hung_task_report_is_quoted_with_the_times_printk_printed(kernel: str) -> None:
    """11's hung-task report: dmesg.txt line 247 is ``[   10.789913]`` on 6.1; the dump's log gave ``10.789914``."""
    assert _tail_not_printed("11-abba-deadlock", kernel)[1] == []


def _on_kernels(*names: str) -> list[object]:
    """``(name, kernel)`` for each fixture kernel that has the case, each in its case's xdist group."""
    return [
        pytest.param(name, p, id=f"{name}-{p}") if isinstance(p, str) else pytest.param(name, *p.values, marks=p.marks)
        for name in names
        for p in kernels_of(name)
    ]


@pytest.mark.parametrize(("name", "kernel"), _on_kernels("01-null-member", "10-use-after-free", "12-double-free"))
def test_each_frame_reads_as_the_kernels_stack_dump_printed_it(name: str, kernel: str) -> None:
    """Each frame's symbol, offset and size as the kernel's own stack dump in the console (kallsyms: the size up to
    the next symbol, a label such as entry_SYSCALL_64_after_hwframe): the ELF symbol table gave 01's
    ``kf_null_member_read+0x19/0x38`` where the kernel printed ``/0x40``, and ``entry_SYSCALL_64+0x6f/0x112``."""
    case, result = analysed_id(name, kernel)
    console = case.console_log.read_text(errors="replace").splitlines()
    texts = (line.split("] ", 1)[-1].strip() for line in console if "+0x" in line)
    printed = {t.removeprefix("RIP: 0010:").removeprefix("? ") for t in texts}
    frames = [f for f in result.snapshot.backtrace if not f.inline and isinstance(f.function, str)]
    shown = [re.sub(r" \((part of|a compiler clone of) \S+\)$", "", f.label()) for f in frames]
    assert shown and [s for s in shown if s not in printed] == []
    assert "Symbols, offsets and sizes: the kernel's kallsyms in the dump" in render_vmcore_markdown(result)


@pytest.mark.parametrize("kernel", kernels_of("12-double-free"))
def test_a_cold_part_keeps_the_kernels_name_and_is_disassembled_by_it(kernel: str) -> None:
    """12 on 6.1 returns into kf_msg_submit.cold (.text.unlikely, nm: 0x76 size 0x39; console line 254): it was
    shown as ``kf_msg_submit+0x18/0x39`` and the next step was ``dis -l kf_msg_submit``, which misses the .cold
    code.  Where gcc kept the second kfree() in kf_msg_submit itself (6.12), the frame has no other symbol."""
    case, result = analysed_id("12-double-free", kernel)
    culprit = result.analysis.culprit_frame
    assert culprit is not None and culprit.function == "kf_msg_submit"
    assert (culprit.where() or "").endswith("kf_buggy.c:527")  # the source line stays the function's
    step = next(f for f in result.incident.findings if f.kind == "double-free").fact("next command") or ""
    printed = next(
        (line.split("] ", 1)[-1].strip().removeprefix("? ") for line in case.console_log.read_text().splitlines()
         if "kf_msg_submit" in line and "+0x" in line and "_write" not in line), "",
    )  # fmt: skip
    if ".cold+" not in printed:
        assert culprit.symbol is None and "kf_msg_submit" in step and ".cold" not in step
        return
    assert culprit.label() == f"{printed} (part of kf_msg_submit)"
    assert culprit.label().startswith("kf_msg_submit.cold+0x18/0x39 [kf_buggy]") or kernel != "6.1"
    assert "kf_msg_submit.cold" in step and "kf_msg_submit " not in step


@pytest.mark.parametrize("kernel", kernels_of("14-spin-deadlock"))
def test_an_aliased_address_is_named_by_the_kernels_first_alias(kernel: str) -> None:
    """14's idle CPU 0 halted in native_safe_halt, whose address __cpuidle_text_start (a linker-script symbol) shares:
    the kernel names it by the alias scripts/kallsyms sorted first, native_safe_halt (drgn's lookup of the table gave
    ``__cpuidle_text_start+0x13/0x14``)."""
    _case, result = analysed_id("14-spin-deadlock", kernel)
    labels = [f.label() for _cpu, task in result.snapshot.other_cpus for f in task.stack]
    assert labels and not [label for label in labels if "_text_start" in label or "_text_end" in label]


@pytest.mark.parametrize("kernel", kernels_of("01-null-member"))
def test_a_return_address_at_a_functions_end_is_named_by_its_caller(kernel: str) -> None:
    """A call that does not return ends rest_init: its return address is kernel_init's first byte.  The kernel's
    %pB looks it up one byte back (``rest_init+0xd0/0xd0``); looked up as it is, it read ``kernel_init+0x0/0x101
    (part of rest_init)``."""
    _case, result = analysed_id("01-null-member", kernel)
    s = result.snapshot
    frames = [*s.backtrace, *(f for _cpu, t in s.other_cpus for f in t.stack), *(f for t in s.tasks for f in t.stack)]
    rest = [f for f in frames if f.function == "rest_init"]
    assert rest and all(f.label().startswith("rest_init+") and f.offset == f.size for f in rest)
