"""A page fault taken fetching an instruction: a call through a bad function pointer, not a member read.

The reports are written here in the kernels' own formats (arch/x86/mm/fault.c's show_fault_oops(), 4.x's
"Oops: 0010" without the "#PF:" lines, arm64's instruction abort).  A reviewer found the 5.x report read as
"a member read through a NULL pointer" in "an unknown function": show_fault_oops() prints "supervisor
instruction fetch in kernel mode" (no "access" after it) and the pattern wanted "access".
"""

from __future__ import annotations

import pytest

from detectors.dmesg.findings import explain_reports
from detectors.dmesg.scanner import scan_chunks
from forensics.types.dmesg import ReportWhy

#: 5.x: the "#PF:" lines, an unsymbolized RIP equal to the address, and a call trace of "?" frames only.
FETCH_5X = """\
[  202.652969][ T9969] BUG: kernel NULL pointer dereference, address: 0000000000000086
[  202.660811][ T9969] #PF: supervisor instruction fetch in kernel mode
[  202.667314][ T9969] #PF: error_code(0x0010) - not-present page
[  202.673292][ T9969] PGD 42d21067 P4D 42d21067 PUD a442d067 PMD 0
[  202.679547][ T9969] Oops: 0010 [#1] PREEMPT SMP KASAN
[  202.684751][ T9969] CPU: 1 PID: 9969 Comm: kf-worker Not tainted 5.6.0-kf #0
[  202.693481][ T9969] RIP: 0010:0x86
[  202.693499][ T9969] Code: Bad RIP value.
[  202.693508][ T9969] RSP: 0018:ffffc90001b9f998 EFLAGS: 00010086
[  202.693558][ T9969] CR2: 000000000000005c CR3: 0000000098245000 CR4: 00000000001426e0
[  202.693564][ T9969] Call Trace:
[  202.693582][ T9969]  ? kf_dispatch_irq+0x154/0x280
[  202.693597][ T9969]  ? kf_dispatch_irq+0x132/0x280
[  202.693625][ T9969]  ? kf_vcpu_enter+0x6c77/0x9290
[  202.897636][ T9969] Modules linked in:
[  202.901521][ T9969] CR2: 0000000000000086
[  202.905670][ T9969] ---[ end trace e25748bb637f10e1 ]---
"""

#: 4.x: no "#PF:" lines; the Oops line's error code 0010 and RIP == the address say the fetch; a reliable caller.
FETCH_4X = """\
[  190.154802] BUG: unable to handle kernel NULL pointer dereference at 0000000000000286
[  190.154802] IP: 0x286
[  190.154802] PGD 1d8d6a067
[  190.154802] Oops: 0010 [#1] SMP KASAN
[  190.154802] CPU: 1 PID: 3289 Comm: kworker/u4:7 Not tainted 4.13.0-kf #5
[  190.154802] task: ffff8801c9d16540 task.stack: ffff8801ca570000
[  190.154802] RIP: 0010:0x286
[  190.154802] RSP: 0018:ffff8801ca577540 EFLAGS: 00010246
[  190.154802] CR2: 0000000000000286 CR3: 00000001d91cf000 CR4: 00000000001426e0
[  190.154802] Call Trace:
[  190.154802]  kf_run_work+0xbf3/0x1bc0
[  190.154802]  worker_thread+0x223/0x1860
[  190.154802]  kthread+0x35e/0x430
[  190.154802]  ret_from_fork+0x2a/0x40
[  190.154802] Code:  Bad RIP value.
[  190.154802] RIP: 0x286 RSP: ffff8801ca577540
[  190.154802] CR2: 0000000000000286
"""

#: A data read through NULL: the same kernel's lines for a read ("read access", error code 0, a symbolized RIP).
READ_5X = """\
[   42.000001] BUG: kernel NULL pointer dereference, address: 0000000000000028
[   42.000002] #PF: supervisor read access in kernel mode
[   42.000003] #PF: error_code(0x0000) - not-present page
[   42.000004] Oops: 0000 [#1] PREEMPT SMP
[   42.000005] CPU: 0 PID: 77 Comm: kf-worker Not tainted 5.10.0-kf #1
[   42.000006] RIP: 0010:kf_read_member+0x1c/0x40
[   42.000007] RSP: 0018:ffffc90000abfd58 EFLAGS: 00010246
[   42.000008] CR2: 0000000000000028 CR3: 0000000004a10000 CR4: 00000000001506f0
[   42.000009] Call Trace:
[   42.000010]  kf_caller+0x2e/0x80
[   42.000011]  kthread+0x11b/0x140
"""

#: arm64: an instruction abort ("EC = 0x21: IABT") at pc 0x0; the caller's return address is in lr.
FETCH_ARM64 = """\
Unable to handle kernel NULL pointer dereference at virtual address 0000000000000000
Mem abort info:
  ESR = 0x0000000086000006
  EC = 0x21: IABT (current EL), IL = 32 bits
Internal error: Oops: 0000000086000006 [#1] PREEMPT SMP
CPU: 0 PID: 6420 Comm: kf-worker Not tainted 6.12.0-kf #0
pc : 0x0
lr : kf_read_folio+0x44/0xf4
sp : ffff800088e6bac0
Call trace:
 0x0
 kf_do_read+0x18c/0x29c
 kf_read_cache+0x14/0x20
"""


def read_one(text: str) -> ReportWhy:
    reports = list(scan_chunks([text.encode()]))
    return explain_reports(reports)[reports[0].start_line]


def facts(why: ReportWhy) -> dict[str, object]:
    return {f.name: f.value for f in reversed(why.facts)}


def assert_cause(why: ReportWhy, cls: str, statement: str, command: str) -> None:
    assert why.cause is not None
    assert (why.cause.cls, why.cause.statement, why.cause.next_command) == (cls, statement, command)


def test_a_5x_fetch_from_null_plus_an_offset_is_a_call_from_the_first_frame() -> None:
    why = read_one(FETCH_5X)
    got = facts(why)
    assert got["access"] == "instruction fetch"
    assert got["jumped to"] == "0x86"
    assert got["faulting function"] == "kf_dispatch_irq+0x154/0x280"
    assert "'?' frame" in str(got["caller is"])
    assert "member read" not in str(got["address is"]) and "function pointer" in str(got["address is"])
    assert_cause(why, "null_pointer",
                 "NULL pointer dereference in kf_dispatch_irq: address 0x86 is NULL plus 0x86, fetched as an "
                 "instruction: a call or jump through a NULL (or bad) function pointer from "
                 "kf_dispatch_irq+0x154/0x280 (a '?' frame, unconfirmed)",
                 "crash> dis -rl kf_dispatch_irq+0x154")  # fmt: skip


def test_a_4x_fetch_is_read_from_its_oops_error_code_and_its_rip() -> None:
    why = read_one(FETCH_4X)
    got = facts(why)
    assert (got["access"], got["jumped to"], got["faulting function"]) == (
        "instruction fetch", "0x286", "kf_run_work+0xbf3/0x1bc0")  # fmt: skip
    assert "caller is" not in got  # a reliable frame
    assert why.cause is not None and why.cause.statement.endswith(
        "fetched as an instruction: a call or jump through a NULL (or bad) function pointer from "
        "kf_run_work+0xbf3/0x1bc0"
    )


def _variant(access_line: bool, code: str, rip: str) -> str:
    """FETCH_5X with or without its "#PF:" access line, with this error code (both lines) and this RIP."""
    text = FETCH_5X if access_line else FETCH_5X.replace("#PF: supervisor instruction fetch in kernel mode\n", "")
    text = text.replace("error_code(0x0010)", f"error_code(0x{code})").replace("Oops: 0010", f"Oops: {code}")
    return text.replace("RIP: 0010:0x86", f"RIP: 0010:{rip}")


@pytest.mark.parametrize(
    "text",
    [
        _variant(access_line=True, code="0000", rip="0x87"),  # the "#PF:" access line alone
        _variant(access_line=False, code="0010", rip="0x87"),  # the error code's bit 4 alone
        _variant(access_line=False, code="0000", rip="0x86"),  # a RIP that is the fault's address alone
    ],
    ids=["pf-line", "error-code", "rip-is-the-address"],
)
def test_each_signal_of_a_fetch_says_it_alone(text: str) -> None:
    got = facts(read_one(text))
    assert got["access"] == "instruction fetch"
    assert got["faulting function"] == "kf_dispatch_irq+0x154/0x280"


def test_no_signal_is_no_fetch() -> None:
    got = facts(read_one(_variant(access_line=False, code="0000", rip="0x87")))
    assert "access" not in got and got["faulting function"] == "0x87"


def test_the_4x_oops_error_code_alone_says_it() -> None:
    """Without its RIP lines (a cut register dump), the "Oops: 0010" line's bit 4 still says the fetch."""
    text = "".join(line for line in FETCH_4X.splitlines(keepends=True) if "IP: " not in line)
    got = facts(read_one(text))
    assert got["access"] == "instruction fetch"
    assert got["faulting function"] == "kf_run_work+0xbf3/0x1bc0"
    assert "jumped to" not in got


def test_a_read_through_null_stays_a_member_read_in_the_rips_function() -> None:
    why = read_one(READ_5X)
    got = facts(why)
    assert got["access"] == "read"
    assert got["faulting function"] == "kf_read_member+0x1c/0x40"
    assert "jumped to" not in got
    assert got["address is"] == "NULL plus an offset: a member read through a NULL pointer"
    assert why.cause is not None and "fetched" not in why.cause.statement
    # 4.x's "Oops: 0000" (bit 4 clear) without the "#PF:" lines: no fetch either.
    old = "".join(line for line in READ_5X.splitlines(keepends=True) if "#PF:" not in line)
    assert "jumped to" not in facts(read_one(old)) and facts(read_one(old)).get("access") != "instruction fetch"


def test_an_arm64_fetch_from_null_is_a_call_from_the_link_register() -> None:
    why = read_one(FETCH_ARM64)
    got = facts(why)
    assert got["access"] == "instruction fetch"
    assert got["faulting function"] == "kf_read_folio+0x44/0xf4"
    assert why.cause is not None and why.cause.statement.endswith(
        "a call or jump through a NULL function pointer from kf_read_folio+0x44/0xf4"
    )
    # arm's "Internal error: Oops: 0000000086000006" is an ESR, not x86's error code: not read as one.
    assert "error code" not in got


def test_the_5x_mode_fact_says_what_the_kernel_printed() -> None:
    """A fetch's "#PF:" line has no "access" after "instruction fetch": the mode fact was "supervisor access"."""
    assert facts(read_one(FETCH_5X))["mode"] == "supervisor instruction fetch in kernel mode"
    assert facts(read_one(READ_5X))["mode"] == "supervisor read access in kernel mode"


#: 4.x: a NULL write, said only by the "Oops: 0002" line's error code (X86_PF_WRITE), no "#PF:" lines.
WRITE_4X = """\
[   77.000001] BUG: unable to handle kernel NULL pointer dereference at 0000000000000010
[   77.000002] IP: kf_write_member+0x1c/0x40
[   77.000003] PGD 1d8d6a067
[   77.000004] Oops: 0002 [#1] SMP KASAN
[   77.000005] CPU: 1 PID: 3289 Comm: kf-worker Not tainted 4.14.0-kf #5
[   77.000006] RIP: 0010:kf_write_member+0x1c/0x40
[   77.000007] RSP: 0018:ffff8801ca577540 EFLAGS: 00010246
[   77.000008] Call Trace:
[   77.000009]  kf_caller+0x2e/0x80
"""


def test_a_4x_null_write_is_read_from_its_oops_error_code() -> None:
    why = read_one(WRITE_4X)
    got = facts(why)
    assert (got["error code"], got["access"], got["mode"], got["page"]) == (
        "0x0002", "write", "supervisor write access", "not-present page")  # fmt: skip
    oops_at = next(f.at for f in why.facts if f.name == "error code")
    assert all(f.at == oops_at for f in why.facts if f.name in ("access", "mode", "page"))
    assert got["address is"] == "NULL plus an offset: a member written through a NULL pointer"
    # Bit 0 (X86_PF_PROT) set: a permissions violation, not a page not present.
    assert facts(read_one(WRITE_4X.replace("Oops: 0002", "Oops: 0003")))["page"] == "permissions violation"


def test_a_5x_oops_code_does_not_override_its_pf_lines() -> None:
    got = facts(read_one(READ_5X.replace("Oops: 0000", "Oops: 0002")))
    assert (got["access"], got["error code"]) == ("read", "0x0000")


def test_a_fetch_from_a_bad_non_null_address_is_a_call_through_a_corrupted_pointer() -> None:
    """Log 160's shape: RIP = CR2 = 0xffffffffffffffff on a 4.x kernel: no NULL, but a cause all the same."""
    text = FETCH_4X.replace("0000000000000286", "ffffffffffffffff").replace("0x286", "0xffffffffffffffff")
    why = read_one(text)
    assert facts(why)["jumped to"] == "0xffffffffffffffff"
    assert_cause(why, "corrupted_values",
                 "jump to a bad address in kf_run_work: the CPU fetched its next instruction at 0xffffffffffffffff, "
                 "a kernel address (not poison, not text): a call or jump through a corrupted function pointer "
                 "from kf_run_work+0xbf3/0x1bc0",
                 "crash> dis -rl kf_run_work+0xbf3")  # fmt: skip
    # A data read at the same address is no jump.
    read = text.replace("Oops: 0010", "Oops: 0000").replace("RIP: 0010:0xffffffffffffffff", "RIP: 0010:kf_r+0x1/0x9")
    read = "".join(line for line in read.splitlines(keepends=True) if " IP: " not in line)
    read_why = read_one(read)
    assert "jumped to" not in facts(read_why)
    assert read_why.cause is None or "jump" not in read_why.cause.statement
