"""What an address is, by the architecture the report's registers name (user-eyes review ue12, finding 8c).

A reviewer found 0xffffc90000a3f000 called "a kernel address" where x86-64's default layout
(Documentation/arch/x86/x86_64/mm.rst) puts it in the vmalloc/ioremap range, and the previous dmesg helper found
32-bit arm's 0x80b0f484 called "a user-space address" by the x86-64 table, where syzbot's arm kernels (a 2G/2G
split) have the kernel.  Logs written as each kernel prints them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from detectors.dmesg.why import pointer_class
from forensics.pipelines.dmesg import triage_file
from tests.detectors.dmesg.why_logs import only_report_why

X86_FAULT = """\
[  900.000000] BUG: unable to handle page fault for address: {address}
[  900.000001] #PF: supervisor write access in kernel mode
[  900.000002] #PF: error_code(0x0002) - not-present page
[  900.000003] Oops: 0002 [#1] PREEMPT SMP NOPTI
[  900.000004] CPU: 0 PID: 77 Comm: kworker/0:1 Not tainted 6.1.0 #1
[  900.000005] RIP: 0010:memcpy_orig+0x31/0x140
[  900.000006] RSP: 0018:ffffa8c1c1e4be68 EFLAGS: 00010246
[  900.000007] RAX: 0000000000000000 RBX: ffff8e2c4a1c0c40 RCX: 0000000000000000
[  900.000008] Call Trace:
[  900.000009]  <TASK>
[  900.000010]  kf_dma_map_pages+0x11c/0x2a0 [kf_mod]
[  900.000011]  </TASK>
"""

ARM_FAULT = """\
[  120.000000] 8<--- cut here ---
[  120.000001] Unable to handle kernel paging request at virtual address {address}
[  120.000002] Internal error: Oops: 8000000d [#1] SMP ARM
[  120.000003] Modules linked in:
[  120.000004] CPU: 0 PID: 948 Comm: kf-test Not tainted 6.1.0 #7
[  120.000005] PC is at kf_walk+0x10/0x40
[  120.000006] LR is at kf_ioctl+0x158/0xf14
[  120.000007] pc : [<8030a1b4>]    lr : [<801a7168>]    psr: 200f0013
[  120.000008] sp : 9a917f68  ip : 9a8e8040  fp : 00000005
[  120.000009] r10: 80117ea8  r9 : 00000000  r8 : 000b0028
"""


KASLR_OFF = "[  900.000012] Kernel Offset: disabled\n"
KASLR_ON = "[  900.000012] Kernel Offset: 0x2c600000 from 0xffffffff81000000 (relocation range: 0xffffffff80000000-0xffffffffbfffffff)\n"  # noqa: E501


@pytest.mark.parametrize(
    ("address", "tail", "words", "caveat"),
    [
        ("ffffc90000a3f000", KASLR_OFF, "in the x86-64 vmalloc/ioremap range (0xffffc90000000000-0xffffe8ffffffffff",
         "Kernel Offset: disabled"),
        ("ffff888012345678", KASLR_OFF, "in the x86-64 direct map range", "Kernel Offset: disabled"),
        ("ffffea0000123400", KASLR_OFF, "in the x86-64 vmemmap range", "Kernel Offset: disabled"),
        # Ranges KASLR does not move: named on a KASLR kernel too.
        ("ffffffffc0a01000", KASLR_ON, "in the x86-64 modules range", "KASLR does not move it"),
        ("ffffffff81234567", KASLR_ON, "in the x86-64 kernel text range", "KASLR does not move it"),
    ],
)  # fmt: skip
def test_a_range_is_named_where_it_is_fixed_or_the_log_shows_kaslr_off(
    tmp_path: Path, address: str, tail: str, words: str, caveat: str
) -> None:
    _, why = only_report_why(tmp_path, X86_FAULT.format(address=address) + tail)
    said = str(why.fact("address is"))
    assert said.startswith(words)
    assert caveat in said


@pytest.mark.parametrize("tail", [KASLR_ON, ""], ids=["kernel-offset", "no-offset-line"])
@pytest.mark.parametrize("address", ["ffffa8c1c1e4be68", "ffffd4e3c4a6b008", "ffffe8ffffdffb90", "ffff888012345678"])
def test_a_range_kaslr_moves_is_not_named_on_a_kaslr_kernel(tmp_path: Path, address: str, tail: str) -> None:
    """ue14 finding 2: a vmalloc'd stack (0xffffa8c1...) read as "direct map: slab", a vmemmap address as "past a
    vmalloc'd buffer", a per-CPU address (corpus 364's) as vmalloc: CONFIG_RANDOMIZE_MEMORY moves those bases."""
    _, why = only_report_why(tmp_path, X86_FAULT.format(address=address) + tail)
    said = str(why.fact("address is"))
    assert said.startswith("a kernel address in the default x86-64 ")
    assert "which KASLR (CONFIG_RANDOMIZE_MEMORY) moves: which region it is in is not known here" in said
    for reading in ("slab", "vmalloc()'d", "struct page", "guard page"):
        assert reading not in said


@pytest.mark.parametrize(
    ("address", "words"),
    [
        ("fee00001", "a kernel address on arm"),
        ("80b0f484", "unknown whether a user or a kernel address on arm: it depends on the kernel's user/kernel split"),
        ("00a0f484", "a user-space address on arm"),
    ],
)
def test_a_32_bit_arm_address_is_judged_by_arms_splits(tmp_path: Path, address: str, words: str) -> None:
    _, why = only_report_why(tmp_path, ARM_FAULT.format(address=address))
    assert str(why.fact("address is")).startswith(words)


def test_no_user_or_kernel_claim_without_an_architecture() -> None:
    assert pointer_class(0x80B0F484, None).startswith("unknown whether a user or a kernel address")
    # ue14 finding 9: a 64-bit value in the top half is the kernel's on every 64-bit architecture.
    assert pointer_class(0xFFFFC90000A3F000, None).startswith("a kernel address (not poison, not text; 64-bit")
    assert pointer_class(0x7FFD12345678, None).startswith("unknown whether a user or a kernel address")
    # What a value is on any arch is still said: NULL plus an offset, a poison.
    assert pointer_class(0x30, None).startswith("NULL plus an offset")
    assert pointer_class(0xDEAD000000000122, None).startswith("LIST_POISON2")


BOOT = """\
[    0.000000] Linux version 6.1.0 (builder@host) (gcc 12) #1 SMP PREEMPT_DYNAMIC
[    0.000000] Command line: BOOT_IMAGE=/vmlinuz root=/dev/vda {kaslr}console=ttyS0
"""
VMALLOC = "ffffc90000a3f000"


def _addresses(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "console.log"
    path.write_text(text)
    result = triage_file(str(path))
    return [str(result.whys[r.start_line].fact("address is")) for r in result.reports]


def test_kaslr_read_once_per_boot_holds_for_each_of_its_reports(tmp_path: Path) -> None:
    """KASLR evidence was read from each report's own lines: ``nokaslr`` on the boot's command line (line 2) was
    never seen, and an oops above the panic that printed "Kernel Offset: disabled" did not know it.  Now it is read
    once per boot, cited, and holds for all the boot's reports; not for the next boot's."""
    oops = X86_FAULT.format(address=VMALLOC)
    said = _addresses(tmp_path, BOOT.format(kaslr="nokaslr ") + oops)
    assert said == [
        "in the x86-64 vmalloc/ioremap range (0xffffc90000000000-0xffffe8ffffffffff, Documentation/arch/x86/x86_64/"
        "mm.rst; the default layout: KASLR off (line 2: nokaslr on the boot's command line)): vmalloc/ioremap space "
        "(vmalloc_base): vmalloc()'d, vmap()'d or ioremap()'d memory, task stacks, per-CPU chunks"
    ]
    # Two boots: the first's panic prints "Kernel Offset: disabled" after a second oops; the next boot shows nothing.
    first = BOOT.format(kaslr="") + oops + oops.replace("[  900.", "[  901.") + KASLR_OFF.replace("[  900.", "[  902.")
    said = _addresses(tmp_path, first + BOOT.format(kaslr="") + oops)
    n = first.count("\n") - len(KASLR_OFF.splitlines()) + 1  # the "Kernel Offset: disabled" line
    assert [f"KASLR off (line {n}: the log's 'Kernel Offset: disabled')" in x for x in said] == [True, True, False]
    assert "which KASLR (CONFIG_RANDOMIZE_MEMORY) moves: which region it is in is not known here" in said[2]


def test_kaslr_on_is_cited_where_the_log_shows_it(tmp_path: Path) -> None:
    text = BOOT.format(kaslr="") + X86_FAULT.format(address=VMALLOC) + KASLR_ON
    (said,) = _addresses(tmp_path, text)
    line = text.count("\n")
    assert (
        f"not known here (KASLR on (line {line}: the log's 'Kernel Offset: 0x...'), and the log does not print" in said
    )


def test_repeats_in_boots_that_show_kaslr_by_lines_of_their_own_share_a_reading_that_does_not_cite_it(
    tmp_path: Path,
) -> None:
    """Each boot's KASLR line (here each copy's own "Kernel Offset:" line) was part of the key of a reading: every
    repeat of a report in another boot was read again, its lines made, and no longer listed as a repeat
    (tests/forensics/report/test_dmesg_document.py: 0 listed repeats of null_deref_x86.log x4, 2 before).  A reading
    that names no address in a range KASLR moves holds for every repeat; one that does cites each boot's line (read
    again for each boot, its lines made)."""
    boot = BOOT.format(kaslr="")
    for address, cites in (("0000000000000010", False), (VMALLOC, True)):
        copy = boot + X86_FAULT.format(address=address) + KASLR_ON
        path = tmp_path / f"{address}.log"
        path.write_text(copy * 4)
        result = triage_file(str(path))
        assert len(result.reports) == 4
        whys = [result.whys[r.start_line] for r in result.reports]
        said = [str(why.fact("address is")) for why in whys]
        if cites:  # each copy's "Kernel Offset:" line, its last
            lines = [k * copy.count("\n") for k in (1, 2, 3, 4)]
            cited = [
                f"(KASLR on (line {n}: the log's 'Kernel Offset: 0x...')" in x for n, x in zip(lines, said, strict=True)
            ]
            assert cited == [True] * 4
        else:
            assert said[0].startswith("NULL plus an offset")
            assert [r.repeats() is not None for r in result.reports][1:3] == [True, True]  # listed as repeats
            assert whys[1] is whys[0] and whys[2] is whys[0]  # the repeats' reading: read once
            assert whys[3] == whys[0]  # (the last copy, built from its own lines, read again: the same)
        assert [why.kaslr_read for why in whys] == [cites] * 4
