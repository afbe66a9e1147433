"""A dump cut short (a copy that stopped early) is analysed with what it holds, never with guessed pages.

The reviewer's case (ue17 finding 8): the 01-null-member dump without its last 5000 bytes was refused,
"truncated dump: 4446184 of at least 4451184 bytes (100%)", exit 3, although drgn unwinds its crashed
thread.  Its headers and page table are whole; only the data of the pages stored last is gone.  Those
pages must read as "not in dump": libkdumpfile, left to itself, reads a page stored uncompressed
past the file's end as zeros, or kills the process with SIGBUS (its mapping of the file runs past
the end): both seen on this dump cut at byte 190345 and 3116212, so not run here.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import drgn
import pytest

from forensics.errors import InputError
from forensics.vmcore.debuginfo import elf_build_id
from forensics.vmcore.dumpfile import CUT_HINT, read_dump_header, share_text
from tests.helpers import Ran, cli_run
from tests.vmcore_cases import VmcoreCase, case_names, kernels, load_case

CASE = "01-null-member"


@pytest.fixture
def kf(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Callable[..., Ran]:
    """``kforensic ARGS`` in this process (tests.helpers.cli_run)."""

    def invoke(*args: str | Path) -> Ran:
        return cli_run(monkeypatch, capsys, *args)

    return invoke


def _cut(case: VmcoreCase, tmp_path: Path, keep: int) -> Path:
    cut = tmp_path / "vmcore"
    cut.write_bytes(case.vmcore.read_bytes()[:keep])
    return cut


def _debug(case: VmcoreCase) -> list[str | Path]:
    return ["--vmlinux", case.vmlinux, *(a for m in case.module_debug for a in ("--module-debug", m))]


def test_a_dump_missing_its_last_5000_bytes_is_analysed_with_the_loss_named(
    tmp_path: Path, kf: Callable[..., Ran]
) -> None:
    case = load_case(CASE)
    size = case.vmcore.stat().st_size
    cut = _cut(case, tmp_path, size - 5000)
    ran = kf("vmcore", cut, *_debug(case), "-f", "json")
    assert ran.returncode == 0, ran.stderr  # was 3: "truncated dump: 4446184 of at least 4451184 bytes (100%)"
    doc = json.loads(ran.stdout)
    said = doc["dump"]["cut"]
    assert said.startswith("99.8%, 5000 bytes missing: the data of 29 of 5834 stored pages"), said
    assert "0xf749-0xf75f" in said
    assert doc["warnings"][0].startswith(f"the dump is cut short: {size - 5000} of {size} bytes (99.8%")
    # The crashed thread is read whole, as from the complete dump.
    assert doc["summary"]["crashed"]["pid"] == 41
    assert [f["function"] for f in doc["backtrace"]][:2] == ["kf_null_member_read", "kf_raw_read"]
    # Pages past the cut are missing, not damaged: the decompression check leaves them out.
    assert not any(w.startswith("the dump is damaged") for w in doc["warnings"]), doc["warnings"]


def test_a_page_past_the_cut_fails_as_not_in_dump_never_as_zeros(tmp_path: Path) -> None:
    from forensics.vmcore.program import DebugInfoRequest, open_dump

    case = load_case(CASE)
    cut = _cut(case, tmp_path, 3_116_212)  # the page frame 0xda26, stored uncompressed from this byte on, is lost
    header = read_dump_header(cut)
    assert header.cut is not None and 0xDA26 in header.cut.frames()
    prog = open_dump(cut, header, DebugInfoRequest(case.vmlinux, (), ())).prog
    with pytest.raises(drgn.FaultError, match=r"past the cut: its data, bytes 3116212\.\.3120307, runs past"):
        prog.read(0xDA26000, 16, True)


def test_a_virtual_read_past_the_cut_names_its_page(tmp_path: Path) -> None:
    from drgn.helpers.linux.mm import pfn_to_virt

    from forensics.vmcore.gaps import DumpPages, explain
    from forensics.vmcore.program import DebugInfoRequest, open_dump

    case = load_case(CASE)
    cut = _cut(case, tmp_path, case.vmcore.stat().st_size - 5000)
    header = read_dump_header(cut)
    prog = open_dump(cut, header, DebugInfoRequest(case.vmlinux, (), ())).prog
    virtual = int(pfn_to_virt(prog, 0xF74A).value_()) + 8  # a lost page, through the direct map
    with pytest.raises(drgn.FaultError) as raised:
        prog.read(virtual, 8)
    assert raised.value.address == virtual
    said = explain(prog, DumpPages(cut, header), virtual)
    assert said == (
        f"not in dump: memory at {virtual:#x} (page frame 0xf74a) lies past the cut: its data, bytes "
        "4446224..4446425, runs past the file's end at byte 4446184"
    )
    assert prog.read(int(pfn_to_virt(prog, 0xF748).value_()), 8) == bytes(8)  # a page before the cut reads


def test_a_cut_dump_that_lost_the_crashed_task_is_refused(tmp_path: Path, kf: Callable[..., Ran]) -> None:
    case = load_case(CASE)
    cut = _cut(case, tmp_path, int(case.vmcore.stat().st_size * 0.45))
    ran = kf("vmcore", cut, *_debug(case))
    assert ran.returncode == 3, (ran.stdout[:2000], ran.stderr)
    first = ran.stderr.splitlines()[0]
    assert "truncated dump: 2003032 of at least 4451184 bytes (44.9%, 2448152 bytes missing)" in first
    assert "the crashed task cannot be read from what is left" in first
    assert "Traceback" not in ran.stderr


def test_a_cut_header_is_still_refused(tmp_path: Path) -> None:
    case = load_case(CASE)
    cut = _cut(case, tmp_path, 100_000)  # inside the page table (bytes 24576..164591)
    with pytest.raises(InputError, match=r"truncated dump: 100000 of at least 164592 bytes \(60\.7%"):
        read_dump_header(cut)


def test_the_share_never_reads_100_percent_for_a_cut_file() -> None:
    assert share_text(4_451_183, 4_451_184) == "99.9%, 1 byte missing"  # was "(100%)"
    assert share_text(4_446_184, 4_451_184) == "99.8%, 5000 bytes missing"


def test_without_debug_info_a_cut_dump_whose_log_is_lost_says_it_is_cut(tmp_path: Path, kf: Callable[..., Ran]) -> None:
    case = load_case(CASE)
    cut = _cut(case, tmp_path, case.vmcore.stat().st_size - 5000)  # mem_section's page (0xffd5) is lost
    empty = tmp_path / "debug"
    empty.mkdir()
    ran = kf("vmcore", cut, "--debug-dir", empty, "--no-debuginfod")
    assert ran.returncode == 3, ran.stderr
    first, hint = ran.stderr.splitlines()[:2]
    # The cut first, with its hint: it is why makedumpfile read nothing, and no debug info reads what is gone (ue21
    # #8: the line led with the missing debug info, the cut in parentheses at its end, the hint to install it only).
    assert first.startswith(f"kforensic: error: {cut}: truncated dump: 4446184 of at least 4451184 bytes (99.8%, "
                            "5000 bytes missing): its kernel log could not be read from what is left (makedumpfile "
                            "--dump-dmesg failed (exit 1: "), first  # fmt: skip
    assert "; nor its state: no debug info for the kernel 6.1.192 (build ID " in first
    assert hint.startswith(f"kforensic: hint: {CUT_HINT}; for its state, then: install the kernel's debug info"), hint


def test_without_debug_info_the_log_beside_a_cut_dump_is_said_unchecked_for_the_cut(
    tmp_path: Path, kf: Callable[..., Ran]
) -> None:
    """The log kdump saved beside a cut dump is read, not checked against the dump's own (makedumpfile cannot read it
    from what is left): the cut is said first as why, before makedumpfile's failure (it came last, in parentheses)."""
    case = load_case("02-bug-on")
    _cut(case, tmp_path, REVIEW_CUT)  # (tmp_path/vmcore, found with the dmesg.txt beside it)
    (tmp_path / "dmesg.txt").write_bytes(case.dmesg.read_bytes())
    empty = tmp_path / "debug"
    empty.mkdir()
    ran = kf("vmcore", tmp_path, "--debug-dir", empty, "--no-debuginfod", "-f", "json")
    assert ran.returncode == 0, ran.stderr
    doc = json.loads(ran.stdout)
    unchecked = doc["kernel_log"]["unchecked"]
    assert unchecked.startswith("the dump is cut short (34.4%, 2851815 bytes missing): the dump's own log could not "
                                "be read: makedumpfile --dump-dmesg failed (exit 1: "), unchecked  # fmt: skip
    assert doc["warnings"][0].startswith("the dump is cut short: 1500000 of 4351815 bytes (34.4%"), doc["warnings"]


#: The reviewer's cut (ue21 #8): the 02-bug-on dump's first 1500000 bytes, which lose the page makedumpfile reads the
#: kernel's release from (system_utsname) and the crashed task's.
REVIEW_CUT = 1_500_000


def _another_kernels_vmlinux() -> Path:
    other = next((k for k in kernels() if k != "6.1" and case_names(k)), None)
    if other is None:
        pytest.skip("no other fixture kernel")
    return load_case(case_names(other)[0], other).vmlinux


def test_another_kernels_vmlinux_on_a_cut_dump_says_the_cut_first(tmp_path: Path, kf: Callable[..., Ran]) -> None:
    """``vmcore`` refuses the dump for the vmlinux (its state is what it reads), the cut first: no vmlinux reads the
    pages the copy lost (the line was the build IDs' alone, the hint to install debug info)."""
    case = load_case("02-bug-on")
    cut, wrong = _cut(case, tmp_path, REVIEW_CUT), _another_kernels_vmlinux()
    ran = kf("vmcore", cut, "--vmlinux", wrong)
    assert ran.returncode == 3, ran.stderr
    first, hint = ran.stderr.splitlines()
    assert first == (f"kforensic: error: {cut}: truncated dump: 1500000 of at least 4351815 bytes (34.4%, 2851815 "
                     f"bytes missing), and {wrong}: build ID {elf_build_id(wrong)} does not match the dump's kernel "
                     f"({elf_build_id(case.vmlinux)}, 6.1.192)")  # fmt: skip
    assert hint.startswith(f"kforensic: hint: {CUT_HINT}; use the vmlinux of the kernel that crashed; "), hint


@pytest.mark.skipif(shutil.which("makedumpfile") is None, reason="makedumpfile reads a dump's log without symbols")
def test_report_of_a_cut_dump_with_another_kernels_vmlinux_says_the_cut_first(
    tmp_path: Path, kf: Callable[..., Ran]
) -> None:
    """``report`` reads the dump's log when the vmlinux is another kernel's; cut, that fails too: the cut is said first
    (alone, the error; beside a log, the dump's "not examined" line), the vmlinux after it, not on a line of its own
    that came first (ue21 #8: "--vmlinux ... not used: build ID ...", then the debug-info error, the cut last)."""
    case = load_case("02-bug-on")
    cut, wrong = _cut(case, tmp_path, REVIEW_CUT), _another_kernels_vmlinux()
    said = f"{cut}: truncated dump: 1500000 of at least 4351815 bytes (34.4%, 2851815 bytes missing): its kernel log"
    alone = kf("report", "--vmcore", cut, "--vmlinux", wrong, "-o", tmp_path / "alone.md")
    assert alone.returncode == 3, alone.stderr
    first, hint = alone.stderr.splitlines()
    assert first.startswith(f"kforensic: error: {said} could not be read from what is left (makedumpfile "), first
    assert f"; nor its state: {wrong}: build ID {elf_build_id(wrong)} does not match the dump's kernel" in first
    assert hint.startswith(f"kforensic: hint: {CUT_HINT}; for its state, then: use the vmlinux of the kernel"), hint
    assert not (tmp_path / "alone.md").exists()
    out = tmp_path / "r.json"
    ran = kf("report", "--vmcore", cut, "--vmlinux", wrong, "--dmesg", case.console_log, "-o", tmp_path / "r.md",
             "--json", out)  # fmt: skip
    assert ran.returncode == 3, ran.stderr
    assert ran.stderr.splitlines()[0].startswith(f"kforensic: warning: --vmcore {cut} not used: {said}"), ran.stderr
    examined = json.loads(out.read_text())["incident"]["examined"]
    assert examined[0]["what"] == f"crash dump {cut}", examined[0]
    assert examined[0]["unusable"]["not_available"].startswith(said), examined[0]
    assert examined[0]["hint"].startswith(CUT_HINT)
    assert not any(e["what"].startswith("vmlinux ") for e in examined), examined  # (said in the dump's line)
    page = (tmp_path / "r.md").read_text()
    assert f"- not examined: crash dump {cut}: could not be used (not available: {said}" in page


def test_a_slab_page_lost_to_the_cut_is_not_guessed_filtered_out(tmp_path: Path, kf: Callable[..., Ran]) -> None:
    """The reviewer's cut at byte 4400000 (ue18 finding 10): the slab state of the faulting address was "not in
    dump: memory at ... lies past the cut: its data ... runs past the file's end at byte 4400000 (slab pages filtered
    out?)", a makedumpfile guess in the sentence that says the page was stored and lost to the cut."""
    case = load_case(CASE)
    cut = _cut(case, tmp_path, 4_400_000)
    ran = kf("vmcore", cut, *_debug(case), "-f", "json")
    assert ran.returncode == 0, ran.stderr
    said = [a["not_available"] for a in json.loads(ran.stdout)["why"]["addresses"] if a.get("not_available")]
    assert any("lies past the cut" in s for s in said), said
    assert not any("filtered out?" in s for s in said), said
