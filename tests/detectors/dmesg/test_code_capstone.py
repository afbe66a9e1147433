"""The Code: listing's capstone calls (detectors/dmesg/code.py): its library called directly, as the module calls it.

``code._capstone`` loads the ``capstone`` module's own shared library and reads its records at capstone 5.0's
offsets, so that a log with a Code: line does not import the module (~20 ms).  Here: those offsets and values are
the module's own ctypes records' and constants', every decode gives what the module gives (random bytes, each
architecture a Code: line is decoded for), the bundled logs' listings are the same through the module, and a
run that reads a Code: line imports neither the module nor, without one, ctypes.
"""

from __future__ import annotations

import ctypes
import glob
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

capstone = pytest.importorskip("capstone")

from capstone import x86  # noqa: E402

from detectors.dmesg import code  # noqa: E402
from detectors.dmesg.findings import explain_reports  # noqa: E402
from detectors.dmesg.scanner import scan_chunks  # noqa: E402
from detectors.vmcore.disasm import instruction  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
LIBRARY = code._capstone()
needs_library = pytest.mark.skipif(LIBRARY is None, reason="capstone's library is not the one read directly here")


@needs_library
def test_the_records_offsets_are_the_modules() -> None:
    """Each field read from the library's memory is where the module's ctypes records have it."""
    insn, detail, x86_detail, op, mem = capstone._cs_insn, capstone._cs_detail, x86.CsX86, x86.X86Op, x86.X86OpMem
    assert code._CS_INSN.size == ctypes.sizeof(insn)
    assert [insn.id.offset, insn.address.offset, insn.size.offset, insn.bytes.offset, insn.mnemonic.offset,
            insn.op_str.offset, insn.detail.offset] == [0, 8, 16, 18, 42, 74, 240]  # fmt: skip
    assert (insn.mnemonic.size, insn.op_str.size, insn.bytes.size) == (32, 160, 24)
    assert detail.arch.offset + x86_detail.op_count.offset == code._CS_X86_OP_COUNT
    assert detail.arch.offset + x86_detail.operands.offset == code._CS_X86_OPS
    assert ctypes.sizeof(op) == code._CS_X86_OP_SIZE
    assert x86_detail.operands.size == 8 * ctypes.sizeof(op)
    # The operand's fields as _CS_X86_OP unpacks them: type, segment, base, index, scale, disp, size, access.
    offsets = [op.type.offset] + [op.value.offset + getattr(mem, f).offset for f in ("segment", "base", "index")]
    offsets += [op.value.offset + mem.scale.offset, op.value.offset + mem.disp.offset, op.size.offset]
    offsets += [op.access.offset]
    assert offsets == [0, 8, 12, 16, 20, 24, 32, 33]
    assert code._CS_X86_OP.size == op.access.offset + 1


@needs_library
def test_the_values_are_the_modules() -> None:
    assert (code._CS_ARCH_ARM, code._CS_ARCH_ARM64, code._CS_ARCH_X86) == (
        capstone.CS_ARCH_ARM,
        capstone.CS_ARCH_ARM64,
        capstone.CS_ARCH_X86,
    )
    assert (code._CS_MODE_ARM, code._CS_MODE_64) == (capstone.CS_MODE_ARM, capstone.CS_MODE_64)
    assert (code._CS_OPT_DETAIL, code._CS_OPT_ON) == (capstone.CS_OPT_DETAIL, capstone.CS_OPT_ON)
    assert code._CS_SUPPORT_DIET == capstone.CS_SUPPORT_DIET
    assert (code._X86_OP_MEM, code._CS_AC_READ, code._CS_AC_WRITE) == (
        x86.X86_OP_MEM,
        capstone.CS_AC_READ,
        capstone.CS_AC_WRITE,
    )


def _fields(insn: Any) -> tuple[object, ...]:
    """What the listing reads of an instruction's record (``code._Insn`` or ``disasm.Instruction``)."""
    m = insn.memory
    memory = None if m is None else (m.base, m.index, m.disp)
    return insn.address, insn.size, insn.mnemonic, insn.op_str, memory, insn.writes, insn.is_call, insn.text()


def _module_detailed(md: Any, data: bytes, address: int) -> Any:
    got = list(md.disasm(data, address, 1))
    return (_fields(instruction(got[0])), code._access(got[0])) if got else None


@needs_library
def test_every_decode_is_the_modules() -> None:
    """Random bytes (most x86 instructions' first bytes, prefixes, memory operands of every form) decoded with
    detail and without, by each architecture: the same records, texts and access as through the module."""
    assert LIBRARY is not None
    detailed = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    detailed.detail = True
    lite = {(a, m): capstone.Cs(a, m) for a, m in ((3, 8), (1, 0), (0, 0))}
    rnd = random.Random(28)
    memory = reads = 0
    for _ in range(4000):
        data = bytes(rnd.randrange(256) for _ in range(rnd.randrange(0, 24)))
        address = rnd.randrange(1 << 64)
        got = LIBRARY.x86_detailed(data, address)
        assert (got and (_fields(got[0]), got[1])) == _module_detailed(detailed, data, address), data.hex()
        memory += got is not None and got[0].memory is not None
        reads += got is not None and got[1] == "read-write"
        for (arch, mode), md in lite.items():
            expected = list(md.disasm_lite(data, address))
            assert LIBRARY.lite(arch, mode, data, address, -1) == expected, data.hex()
            if expected:  # with the end the last instruction ends at, the same; with another, none
                last = expected[-1][0] + expected[-1][1]
                assert LIBRARY.lite(arch, mode, data, address, last) == expected
                assert LIBRARY.lite(arch, mode, data, address, last - 1) == []
                # Without texts, the same addresses and sizes; where the end is not met, the addresses passed noted.
                bare = [(a, size, "", "") for a, size, _, _ in expected]
                assert LIBRARY.lite(arch, mode, data, address, last, False) == bare
                failed: set[int] = set()
                assert LIBRARY.lite(arch, mode, data, address, last - 1, True, failed) == []
                assert failed == {a for a, _, _, _ in expected}
    assert memory > 500 and reads > 20  # the operands' forms were reached


def test_the_64_bit_register_names_are_the_vmcore_disassemblers() -> None:
    """``code.x86_canonical`` names each register capstone names as ``disasm.canonical_register`` does."""
    from detectors.vmcore.disasm import canonical_register

    md = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    names = [md.reg_name(r) for r in range(1, x86.X86_REG_ENDING)]
    assert len(names) > 200 and None not in names
    assert [code.x86_canonical(n) for n in names] == [canonical_register(n) for n in names]
    assert code.x86_canonical(None) is None
    assert {code.x86_canonical(n) for n in ("eax", "ax", "al", "ah", "sil", "r8d", "r10w", "r15b", "spl")} == {
        "rax", "rsi", "r8", "r10", "r15", "rsp"}  # fmt: skip


def _logs_with_code() -> list[str]:
    from tests.vmcore_cases import console_logs

    logs = [*glob.glob(str(ROOT / "tests/detectors/dmesg/**/*.log"), recursive=True), *map(str, console_logs())]
    return sorted(p for p in logs if b"Code: " in Path(p).read_bytes())


@needs_library
def test_the_bundled_logs_listings_are_the_same_through_the_module(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every bundled log with a Code: line (x86, arm64, s390x's; the vmcore cases' consoles) read twice: the library
    called directly, then the module's decoders (what a run uses where the library is not read directly): the same
    listings."""
    logs = _logs_with_code()
    assert len(logs) >= 5
    listed = 0
    for log in logs:
        reports = list(scan_chunks([Path(log).read_bytes()]))
        direct = {n: why.code for n, why in explain_reports(reports).items()}
        with monkeypatch.context() as m:
            m.setattr(code, "_capstone", lambda: None)
            through_module = {n: why.code for n, why in explain_reports(reports).items()}
        assert direct == through_module, log
        listed += sum(c is not None for c in direct.values())
    assert listed >= 10


_RUN = r"""
import sys
from forensics.pipelines.dmesg import analyse_logs
analyse_logs([sys.argv[1]], False)
modules = ("capstone", "ctypes", "detectors.vmcore.disasm", "forensics.types.registers")
print(" ".join(sorted(m for m in modules if m in sys.modules)))
"""


@needs_library
def test_a_run_imports_neither_the_module_nor_ctypes_without_need() -> None:
    """A log with an x86 Code: line is read without importing the ``capstone`` module (nor the vmcore disassembler
    and its records); one without, without ctypes."""
    with_code = str(ROOT / "tests/detectors/dmesg/corpora/satyr/rhbz-1140681.log")
    without = str(ROOT / "tests/data/healthy/dmesg.txt.gz")
    got = [
        subprocess.run([sys.executable, "-c", _RUN, log], capture_output=True, text=True, check=True, cwd=ROOT).stdout
        for log in (with_code, without)
    ]
    assert got == ["ctypes\n", "\n"]


_THREADS = """
import random, threading
from detectors.dmesg import code
lib = code._capstone()
assert lib is not None
rnd = random.Random(5)
datas = [bytes(rnd.randrange(256) for _ in range(2000)) for _ in range(4)]
def fields(got):
    if got is None:
        return None
    insn, access = got
    m = insn.memory
    memory = None if m is None else (m.base, m.index, m.disp)
    return insn.address, insn.size, insn.mnemonic, insn.op_str, memory, insn.writes, insn.is_call, access
def decode(data):
    detailed = [fields(lib.x86_detailed(data[i:], 0x1000 + i)) for i in range(0, 400, 7)]
    assert sum(d is not None and d[4] is not None for d in detailed) > 5  # memory operands were read
    return lib.lite(3, 8, data, 0x1000, -1), detailed
expected = [decode(d) for d in datas]
bad = []
def work(k):
    for _ in range(40):
        if decode(datas[k]) != expected[k]:
            bad.append(k)
            return
threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("mismatches", len(bad))
"""


@needs_library
def test_threads_decoding_at_once_get_what_one_thread_gets() -> None:
    """ctypes lets go of the GIL in each call: threads decoding at once (a Dask worker's threads running
    triage_batch) must not share a result pointer (which was freed twice: the process died of a double free)."""
    command = [sys.executable, "-c", _THREADS]
    run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["mismatches", "0"]


@needs_library
@pytest.mark.parametrize(("attribute", "value"), [("byteorder", "big"), ("maxsize", 2**31 - 1), ("platform", "darwin")])
def test_the_library_is_read_directly_only_on_a_little_endian_64_bit_linux(
    monkeypatch: pytest.MonkeyPatch, attribute: str, value: object
) -> None:
    """Elsewhere the records' offsets and byte order are not the ones read: the module decodes."""
    assert code._capstone.__wrapped__() is not None
    monkeypatch.setattr(sys, attribute, value)
    assert code._capstone.__wrapped__() is None


def test_a_library_path_of_the_users_own_is_left_to_the_module(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LIBCAPSTONE_PATH", "/nonexistent")
    assert code._capstone.__wrapped__() is None
