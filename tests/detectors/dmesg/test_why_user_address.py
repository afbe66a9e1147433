"""A fault through an address in the user half: KASAN's decode of the shadow address names it, or the shadow check.

A reviewer found no cause for "general protection fault, probably for non-canonical address 0xdffffc0002c3fefa" with
"KASAN: probably user-memory-access in range [0x00000000161ff7d0-0x00000000161ff7d7]" under it, although KASAN
(mm/kasan/report.c kasan_non_canonical_hook()) has decoded the address the code used: one in [PAGE_SIZE, TASK_SIZE),
where no kernel object is.  Kernels before v5.7 print no range; the faulting ``cmp byte ptr [rdx + rax], 0`` of an
inline KASAN check, with RAX at KASAN_SHADOW_OFFSET, says the same: RDX << 3 is the address checked.  A value such as
0x4068 was called "a kernel address" by the checked address's fact.  The oopses here are written as an x86-64 KASAN
kernel prints them (Code: mov rdx, rdi; shr rdx, 3; cmp byte ptr [rdx + rax], 0).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from detectors.dmesg.why import pointer_class
from tests.detectors.dmesg.why_logs import offset, only_report_why

HEADER_5_10 = (
    "[   60.100000][ T6611] general protection fault, probably for non-canonical address {shadow}: 0000 [#1] PREEMPT "
    "SMP KASAN\n"
    "[   60.100001][ T6611] KASAN: probably user-memory-access in range [{start}-{end}]\n"
)
HEADER_4_14 = (
    "[   60.100000][ T6611] kasan: GPF could be caused by NULL-ptr deref or user memory access\n"
    "[   60.100000][ T6611] general protection fault: 0000 [#1] PREEMPT SMP KASAN\n"
)
CODE = "41 54 55 53 48 83 ec 08 48 b8 00 00 00 00 00 fc ff df 48 89 fa 48 c1 ea 03 <80> 3c 02 00 75 05 48 8b 1f"
BODY = f"""\
[   60.100002][ T6611] CPU: 1 PID: 6611 Comm: kf-test Not tainted 6.1.0 #1
[   60.100003][ T6611] RIP: 0010:kf_walk+0x99/0x8b0
[   60.100004][ T6611] Code: {CODE}
[   60.100005][ T6611] RSP: 0018:ffffc90001d2f9c8 EFLAGS: 00010206
[   60.100006][ T6611] RAX: dffffc0000000000 RBX: ffff888012345600 RCX: 0000000000000000
[   60.100007][ T6611] RDX: {{rdx}} RSI: 0000000000000000 RDI: {{rdi}}
[   60.100008][ T6611] Call Trace:
[   60.100009][ T6611]  <TASK>
[   60.100010][ T6611]  kf_insert+0x55/0x120
[   60.100011][ T6611]  __x64_sys_ioctl+0x18f/0x210
[   60.100012][ T6611]  do_syscall_64+0x3d/0xb0
[   60.100013][ T6611]  </TASK>
"""


def test_kasans_user_memory_access_range_is_a_bad_pointer(tmp_path: Path) -> None:
    text = HEADER_5_10.format(shadow="0xdffffc0002c3fefa", start="0x00000000161ff7d0", end="0x00000000161ff7d7")
    text += BODY.format(rdx="0000000002c3fefa", rdi="00000000161ff7d0")
    title, why = only_report_why(tmp_path, text)
    assert title == "general protection fault in kf_walk"
    assert why.cause is not None and why.cause.cls == "bad_pointer"
    assert why.cause.statement.startswith(
        "a bad pointer in kf_walk: the address the code used, 0x00000000161ff7d0 (KASAN: probably user-memory-access "
        "in [0x00000000161ff7d0-0x00000000161ff7d7]), is in the user half of the address space"
    )
    assert why.cause.statement.endswith("; `cmp byte ptr [rdx + rax], 0` checks rdx << 3 = 0x161ff7d0")
    # The range KASAN prints, and the Code: line and RDX the shadow check's statement rests on.
    assert why.cause_at == tuple(
        offset(text, "general protection", words) for words in ("KASAN: probably", "Code:", "RDX:")
    )


def test_an_older_kasan_kernels_shadow_check_names_the_address(tmp_path: Path) -> None:
    text = HEADER_4_14 + BODY.format(rdx="000000000000080d", rdi="0000000000004068")
    _, why = only_report_why(tmp_path, text)
    assert why.cause is not None and why.cause.cls == "bad_pointer"
    assert "the address KASAN's check tests, 0x4068 (rdx << 3, to 8 bytes), is in the user half" in (
        why.cause.statement
    )
    assert why.cause_at == tuple(offset(text, "general protection", words) for words in ("Code:", "RDX:"))
    assert why.fact("checked address is") == (
        "a small value in the user range, not a kernel address: an integer or an offset, not a pointer"
    )


def test_a_null_members_check_stays_a_null_pointer(tmp_path: Path) -> None:
    # rdx << 3 = 0x18: NULL's page, the null-pointer cause's, not a bad pointer's.
    text = HEADER_4_14 + BODY.format(rdx="0000000000000003", rdi="0000000000000018")
    _, why = only_report_why(tmp_path, text)
    assert why.cause is not None and why.cause.cls == "null_pointer"


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (0x4068, "a small value in the user range, not a kernel address"),
        (0x3FFFFF, "a small value in the user range, not a kernel address"),
        (0xFFFF888012345600, "a kernel address in the default x86-64 direct map range"),
    ],
)
def test_a_small_value_is_no_kernel_address(value: int, words: str) -> None:
    assert pointer_class(value).startswith(words)
