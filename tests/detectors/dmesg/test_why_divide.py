"""A divide error says which division failed and why: its DIV/IDIV and the divisor's value from the register dump.

A reviewer found "divide error in __tcp_select_window" with the faulting function as its only fact: a #DE is a
DIV/IDIV by zero or a quotient that does not fit, and with the Code: bytes the divisor register is known.  The
oops here is written as an x86-64 kernel prints one (the instruction bytes: mov ecx, [rdi+8]; mov eax, esi;
xor edx, edx; div ecx).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from forensics.pipelines.dmesg import triage_file

OOPS = """\
[   63.550339] divide error: 0000 [#1] PREEMPT SMP
[   63.551000] CPU: 1 PID: 812 Comm: kf_div Tainted: G           O       6.12.118 #1
[   63.575262] RIP: 0010:kf_rate_div+0x12/0x30 [kf_buggy]
[   63.580864] Code: 0f 1f 44 00 00 55 48 89 e5 8b 4f 08 89 f0 31 d2 <f7> f1 5d c3 cc cc cc cc 66 0f 1f 44 00 00
[   63.590000] RSP: 0018:ffffa0c340b97e30 EFLAGS: 00010246
[   63.606526] RAX: 0000000000000400 RBX: ffff9d9800194080 RCX: {rcx}
[   63.607000] RDX: 0000000000000000 RSI: 0000000000000400 RDI: ffff9d9800194080
[   63.611000] Call Trace:
[   63.612000]  <TASK>
[   63.613000]  kf_rate_write+0x2a/0x40 [kf_buggy]
[   63.614000]  vfs_write+0x8d/0x162
[   63.615000]  ksys_write+0x69/0x96
[   63.618000]  </TASK>
"""


@pytest.mark.parametrize(
    ("rcx", "statement", "divisor"),
    [
        # ecx is rcx's low 32 bits: zero although rcx is not.
        ("0000000100000000", "kf_rate_div divided by zero: `div ecx` with ecx = 0", "ecx = 0x0"),
        ("0000000000000003", "kf_rate_div: `div ecx` with ecx = 0x3, not zero: the quotient does not fit in 32 bits",
         "ecx = 0x3"),
    ],
    ids=["by-zero", "overflow"],
)  # fmt: skip
def test_a_divide_error_names_its_division_and_divisor(tmp_path: Path, rcx: str, statement: str, divisor: str) -> None:
    path = tmp_path / "console.log"
    path.write_text(OOPS.format(rcx=rcx))
    result = triage_file(str(path))
    (report,) = result.reports
    assert report.title == "divide error in kf_rate_div"
    why = result.whys[report.start_line]
    assert why.cause is not None and why.cause.statement == statement
    facts = {f.name: (f.value, f.at) for f in why.facts}
    assert facts["faulting instruction"] == ("div ecx", 3)
    assert facts["divisor"] == (divisor, 5)  # the RCX line, not the Code: line


def test_a_divide_error_without_code_says_what_it_cannot_tell(tmp_path: Path) -> None:
    path = tmp_path / "console.log"
    path.write_text("\n".join(line for line in OOPS.format(rcx="0").splitlines() if "Code:" not in line) + "\n")
    result = triage_file(str(path))
    (report,) = result.reports
    why = result.whys[report.start_line]
    assert why.cause is not None
    assert why.cause.statement == (
        "a division in kf_rate_div by zero, or with a quotient too large for its register (no Code: line to tell which)"
    )
