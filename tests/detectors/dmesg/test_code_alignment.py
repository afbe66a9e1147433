"""The instructions before an x86 ``Code:`` line's mark: only those every decoding the bytes allow holds are sure.

The bytes start inside an instruction.  The fixture guest's WARN_ON in kf_state_stop (vmcore_fixtures, case
03-warn-on) prints ``Code: 87 33 00 00 00 c3 ...``: ``87 33 00 00 00`` is the tail of kf_hw_read_status's
``movb $0x0, 0x3387(%rip)`` (``c6 05 87 33 00 00 00``), but decoded from the first byte it read as
``xchg dword ptr [rbx], esi`` / ``add byte ptr [rax], al`` / ``add bl, al`` at -42, -40, -38, stated as the code that
ran (the true stream starts at -37, ``ret``).  Now those are marked uncertain, and the listing reads no fact from
them.  The truth is the module's own code, as objdump decodes it from kf_buggy.ko.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from detectors.dmesg import code as dmesg_code
from forensics.pipelines.dmesg import analyse_logs

ROOT = Path(__file__).resolve().parents[3]
MODULE = ROOT / "vmcore_fixtures" / "kf_buggy.ko"
CASES = ROOT / "vmcore_fixtures" / "cases"


def _boundaries() -> tuple[dict[str, int], set[int]]:
    """The module's functions (name -> address) and every instruction's address, as objdump decodes its .text (the
    other sections start at 0 too)."""
    if shutil.which("objdump") is None:
        pytest.skip("objdump (binutils) is needed for the module's true instructions")
    argv = ["objdump", "-d", "-j", ".text", "--no-show-raw-insn", str(MODULE)]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    functions = {m.group(2): int(m.group(1), 16) for m in re.finditer(r"^([0-9a-f]+) <(\w+)>:$", out, re.M)}
    starts = {int(m.group(1), 16) for m in re.finditer(r"^\s+([0-9a-f]+):\t", out, re.M)}
    return functions, starts


@pytest.mark.parametrize("case", ["02-bug-on", "03-warn-on", "05-soft-lockup"])
def test_sure_instructions_are_the_modules_own(case: str) -> None:
    functions, starts = _boundaries()
    result = analyse_logs([str(CASES / case / "dmesg.txt")], live=False)
    (source,) = result.sources
    listings = [
        (rep, why.code) for rep in source.reports if (why := source.whys.get(rep.start_line)) and why.code is not None
    ]
    read = 0
    for rep, code in listings:
        rip = next(body for _, body in rep.lines if "RIP: 0010:" in body)
        m = re.search(r"RIP: 0010:(\w+)\+0x([0-9a-f]+)/0x[0-9a-f]+ \[kf_buggy\]", rip)
        if m is None:
            continue  # the kernel's own code (vmlinux), not the module's
        at = functions[m.group(1)] + int(m.group(2), 16)
        for insn in code.instructions:
            if insn.offset < 0 and not insn.uncertain:
                assert at + insn.offset in starts, (case, insn)  # a sure instruction is one the module holds
        read += 1
    assert read, f"{case}: no listing of the module's code"


def test_the_first_bytes_decoded_wrong_are_marked_uncertain() -> None:
    functions, starts = _boundaries()
    result = analyse_logs([str(CASES / "03-warn-on" / "dmesg.txt")], live=False)
    (source,) = result.sources
    code = next(w.code for w in source.whys.values() if w.code is not None and w.code.faulting == "ud2")
    ud2 = functions["kf_state_stop"] + 0xE
    false = [i for i in code.instructions if i.offset < 0 and ud2 + i.offset not in starts]
    assert [(i.offset, i.text) for i in false] == [
        (-42, "xchg dword ptr [rbx], esi"),
        (-40, "add byte ptr [rax], al"),
        (-38, "add bl, al"),
    ]
    assert all(i.uncertain for i in false)
    # From where every decoding meets, the listing is sure: kf_state_stop's compare and its ud2.
    sure = [(i.offset, i.text) for i in code.instructions if not i.uncertain and i.offset < 0]
    assert sure[-5:] == [
        (-14, "cmp dword ptr [rdi], 1"),
        (-11, "jne 0x102a"),
        (-9, "mov dword ptr [rdi], 2"),
        (-3, "xor eax, eax"),
        (-1, "ret"),
    ]


def _code_lines() -> list[tuple[bytes, int]]:
    """The x86 Code: lines of the fixture consoles and the golden logs: their bytes and the marked byte's index."""
    found = []
    for path in sorted([*CASES.glob("*/dmesg.txt"), *ROOT.glob("tests/detectors/dmesg/golden/*.log")]):
        for line in path.read_text(errors="replace").splitlines():
            text = dmesg_code._x86_code(line.partition("] ")[2] or line)
            got = dmesg_code._x86_bytes(text) if text is not None else None
            if got is not None:
                found.append(got)
    return found


def test_each_start_before_the_mark_is_decoded_once_and_read_as_every_decoding_allows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """_before_mark decodes a start only where no decoding it made passed through it (an instruction's length is its
    bytes' alone: from there it is that decoding's tail, ending at the mark or not), and finds what decoding every
    start does: the first decoding that ends at the mark, the rest of it sure where every such decoding holds it
    (fails where a start on a decoding made before is decoded again)."""
    lines = _code_lines()
    assert len(lines) >= 5
    decoded: list[int] = []
    lite = dmesg_code._lite

    def counted(*args: Any) -> list[tuple[int, int, str, str]]:
        decoded.append(args[3])
        return lite(*args)

    for data, _mark in lines:  # each length: the mark and every other byte
        for at in range(1, len(data)):
            full = {
                s: lite(dmesg_code._CS_ARCH_X86, dmesg_code._CS_MODE_64, data[s:at], dmesg_code._BASE + s)
                for s in range(at)
            }
            ending = [
                s for s in range(min(at, dmesg_code._X86_LONGEST)) if full[s] and sum(i[1] for i in full[s]) == at - s
            ]
            decoded.clear()
            monkeypatch.setattr(dmesg_code, "_lite", counted)
            got = dmesg_code._before_mark(data, at)
            monkeypatch.setattr(dmesg_code, "_lite", lite)
            if ending:
                common = set.intersection(*({a for a, _, _, _ in full[s]} for s in ending))
                assert got == (full[ending[0]], len(full[ending[0]]) - len(common))
                passed: set[int] = set()
                for start in decoded:  # none on the instructions of a decoding made before it
                    assert start not in passed
                    passed |= {a for a, _, _, _ in full[start - dmesg_code._BASE]}


def test_a_code_lines_decoding_is_remembered_and_each_listing_is_as_decoded_alone() -> None:
    # A Code: line's decoding is kept by its bytes and mark (code._DECODED): the listing of every report of the bundled
    # logs, read twice in two orders with the decodings kept, is the one made with none kept.
    from detectors.dmesg.lines import parse_line
    from detectors.dmesg.scanner import scan_chunks

    root = Path(__file__).parent
    logs = sorted([*root.glob("golden/*.log"), *root.glob("corpora/*/*.log")])
    reports = [r for log in logs for r in scan_chunks([log.read_bytes()])]
    own = [([parse_line(n, t) for n, t in r.lines], r.start_line) for r in reports]
    alone = []
    for lines, first in own:
        dmesg_code._DECODED.clear()
        alone.append(dmesg_code.listing(lines, first))
    dmesg_code._DECODED.clear()
    kept = [dmesg_code.listing(lines, first) for lines, first in own]
    again = [dmesg_code.listing(lines, first) for lines, first in reversed(own)]
    assert kept == alone and again[::-1] == alone
    assert sum(x is not None for x in alone) > 5 and dmesg_code._DECODED  # listings were made, and kept
