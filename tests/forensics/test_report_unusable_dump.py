"""``report`` with a dump it cannot use beside other inputs: it goes on with them and says why the dump was not used.

Before, a dump that is none, one cut short past its crashed task, or one given with another kernel's vmlinux made
``report`` refuse everything (exit 3), though the console log beside it told the crash.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers import Ran, cli_run
from tests.vmcore_cases import VmcoreCase, case_names, kernels, load_case

pytestmark = pytest.mark.xdist_group("incident-trust")


def _need(name: str, kernel: str = "6.1") -> VmcoreCase:
    if name not in case_names(kernel):
        pytest.skip(f"vmcore fixture {name} of kernel {kernel} is absent (vmcore_fixtures/build.sh)")
    return load_case(name, kernel)


def _not_a_dump(case: VmcoreCase, tmp: Path) -> tuple[Path, list[str | Path]]:
    junk = tmp / "vmcore"
    junk.write_bytes(b"not a dump\n" * 100)
    return junk, ["--vmlinux", case.vmlinux]


def _cut_past_the_task(case: VmcoreCase, tmp: Path) -> tuple[Path, list[str | Path]]:
    cut = tmp / "vmcore"
    with case.vmcore.open("rb") as whole:
        cut.write_bytes(whole.read(200_000))  # its first 4%: the crashed task's pages are lost
    return cut, ["--vmlinux", case.vmlinux]


def _another_kernels_vmlinux(case: VmcoreCase) -> Path:
    other = next((k for k in kernels() if k != case.kernel and case_names(k)), None)
    if other is None:
        pytest.skip("no other fixture kernel")
    return _need(case_names(other)[0], other).vmlinux


DUMPS: dict[str, Callable[[VmcoreCase, Path], tuple[Path, list[str | Path]]]] = {
    "not a dump": _not_a_dump,
    "cut past the crashed task": _cut_past_the_task,
}


@pytest.mark.parametrize("bad", list(DUMPS))
def test_a_dump_that_cannot_be_used_is_said_and_the_log_beside_it_still_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], bad: str
) -> None:
    case = _need("01-null-member")
    dump, debug = DUMPS[bad](case, tmp_path)
    alone: Ran = cli_run(monkeypatch, capsys, "vmcore", dump, *debug)
    assert alone.returncode == 3
    said = alone.stderr.splitlines()[0].removeprefix("kforensic: error: ")
    hint = alone.stderr.splitlines()[1].removeprefix("kforensic: hint: ")
    # Alone it is refused as vmcore refuses it.
    refused = cli_run(monkeypatch, capsys, "report", "--vmcore", dump, *debug)
    assert refused.returncode == 3 and f"kforensic: error: {said}" in refused.stderr.splitlines()
    out = tmp_path / "report.json"
    ran = cli_run(
        monkeypatch, capsys, "report", "--vmcore", dump, *debug, "--dmesg", case.console_log, "-f", "json", "-o", out
    )
    # The report is written, but the run is not a clean one: exit 3 (review ue20 #7: it was 0), said last.
    assert ran.returncode == 3, ran.stderr
    assert f"kforensic: warning: --vmcore {dump} not used: {said}" in ran.stderr.splitlines()
    assert ran.stderr.splitlines()[-1] == (
        f"kforensic: error: --vmcore {dump} could not be used: the report was written from the other inputs (exit 3)"
    )
    doc = json.loads(out.read_text())
    assert doc["examined"][0] == {
        "what": f"crash dump {dump}",
        "could_find": [],
        "could_not": [],
        "unusable": {"not_available": said},
        "input": "crash dump",
        "hint": hint,
    }
    assert [s["error"] for s in doc["sources"] if s["path"] == str(dump)] == [said]
    [crash] = [f for f in doc["findings"] if f["severity"] == "critical"]
    assert crash["title"] == "BUG: unable to handle kernel NULL pointer dereference in kf_null_member_read"
    # The findings' exit code: the log's critical report fails --fail-on high, the alert a script acts on.
    failed = cli_run(monkeypatch, capsys, "report", "--vmcore", dump, *debug, "--dmesg", case.console_log,
                     "--fail-on", "high", "-o", tmp_path / "r.md", "--json", tmp_path / "r.json")  # fmt: skip
    assert failed.returncode == 1, failed.stderr
    page = (tmp_path / "r.md").read_text()
    assert f"The crash dump {dump} could not be used: {said}." in page.split("\n## ")[0]
    assert f"- not examined: crash dump {dump}: could not be used (not available: {said})" in page
    # The cause read from the log alone names the dump given and why it was dropped (it said "no dump was read").
    assert (
        f"against: read from the kernel log alone: the crash dump {dump} given could not be used ({said}): no dump "
        "confirmed the values" in page
    )
    # Its step on the dump is not offered as if the dump would open: what to get first (the dump's own hint), then
    # the step (it was "confirm: `crash> dis -rl kf_null_member_read+0x19`").
    [first] = json.loads((tmp_path / "r.json").read_text())["hypotheses"]
    assert first["next_command"] == "crash> dis -rl kf_null_member_read+0x19"
    assert first["first"] == f"get the crash dump {dump} open: {hint}"
    assert f"confirm: first get the crash dump {dump} open: " in page and "confirm: `crash>" not in page
    assert " — then `crash> dis -rl kf_null_member_read+0x19`" in page


def test_a_dump_given_as_a_findings_file_names_report_vmcore(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Review ue20 #10: `kforensic report VMCORE` was told "read it with `kforensic vmcore FILE`", another command,
    where a trace.dat and a perf.data given so are told the `report` option that reads them."""
    dump = _need("02-bug-on").vmcore
    ran = cli_run(monkeypatch, capsys, "report", dump, "-o", tmp_path / "r.md")
    assert ran.returncode == 3, ran
    assert f"{dump}: not a JSON document: a kdump-compressed crash dump" in ran.stderr, ran.stderr
    assert f"give it as `kforensic report --vmcore {dump}`" in ran.stderr and "read it with" not in ran.stderr


@pytest.mark.skipif(shutil.which("makedumpfile") is None, reason="makedumpfile reads a dump's log without symbols")
def test_another_kernels_vmlinux_leaves_the_dumps_own_log_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The dump given with another kernel's vmlinux was set aside whole, though its kernel log needs no symbols
    (VMCOREINFO locates it, as ``makedumpfile --dump-dmesg`` reads it): alone, the report refused it, exit 3."""
    case = _need("01-null-member")
    wrong = _another_kernels_vmlinux(case)
    dump = tmp_path / "vmcore"
    dump.symlink_to(case.vmcore)  # alone in its directory: no dmesg.txt kdump saved beside it, its log is the dump's
    alone: Ran = cli_run(monkeypatch, capsys, "vmcore", dump, "--vmlinux", wrong)
    assert alone.returncode == 3  # kforensic vmcore still refuses it: the dump's state is what it reads
    said, hint = (line.split(": ", 2)[2] for line in alone.stderr.splitlines()[:2])
    assert said.startswith(f"{wrong}: build ID ") and "does not match the dump's kernel" in said, said
    md, out = tmp_path / "r.md", tmp_path / "r.json"
    ran = cli_run(monkeypatch, capsys, "report", "--vmcore", dump, "--vmlinux", wrong, "-o", md, "--json", out)
    assert ran.returncode == 3, ran.stderr  # written, and no clean run: the vmlinux given was not used
    assert f"kforensic: warning: --vmlinux {wrong} not used: {said}" in ran.stderr.splitlines()
    assert ran.stderr.splitlines()[-1] == (
        f"kforensic: error: --vmlinux {wrong} could not be used: the report was written from the dump's kernel log"
        " (exit 3)"
    )
    doc = json.loads(out.read_text())
    examined = doc["incident"]["examined"]
    assert examined[0] == {"what": f"vmlinux {wrong}", "could_find": [], "could_not": [],
                           "unusable": {"not_available": said}, "input": "vmlinux", "hint": hint}  # fmt: skip
    assert examined[1]["what"] == f"crash dump {dump}: its kernel log only (no debug info for its kernel)"
    [crash] = [f for f in doc["incident"]["findings"] if f["severity"] == "critical"]
    assert crash["title"] == "BUG: unable to handle kernel NULL pointer dereference in kf_null_member_read"
    # Read from the dump itself: its log as makedumpfile extracts it, not a file beside it.
    assert {e["source"] for e in crash["evidence"]} == {f"<makedumpfile --dump-dmesg {dump} FILE>"}
    assert f"The vmlinux {wrong} could not be used: {said}." in doc["summary"]
    [first] = doc["hypotheses"]
    assert first["first"] == f"get a vmlinux the dump opens with: {hint}"
    assert first["against"] == [
        f"read from the kernel log alone: the vmlinux {wrong} given could not be used ({said}): no dump confirmed the "
        "values"
    ]
    page = md.read_text()
    assert f"- not examined: vmlinux {wrong}: could not be used (not available: {said})" in page
    assert " — then `crash> dis -rl kf_null_member_read+0x19`" in page
    failed = cli_run(monkeypatch, capsys, "report", "--vmcore", dump, "--vmlinux", wrong, "--fail-on", "high",
                     "-o", tmp_path / "f.md")  # fmt: skip
    assert failed.returncode == 1, failed.stderr  # the dump's own log's critical crash: the alert
