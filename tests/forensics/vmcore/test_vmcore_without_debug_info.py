"""``kforensic vmcore DUMP`` without the kernel's debug info: the dump's own kernel log, read as ``kforensic dmesg``.

Every run here has no debug info to find: no ``--vmlinux``, no ``DEBUGINFOD_URLS``, a cache and a home of its
own, and (in process) an empty root for the standard places, as ``test_debuginfo_lookup.py`` isolates the lookup.
The log is the ``dmesg.txt`` kdump saved beside each fixture dump, or, for the dump alone in a directory,
what the real ``makedumpfile --dump-dmesg`` (Debian package makedumpfile) extracts.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from forensics.errors import InputError
from forensics.model import Incident
from tests.helpers import assert_evidence_resolves
from tests.vmcore_cases import VmcoreCase, kernel_cases, load_case

MAKEDUMPFILE = shutil.which("makedumpfile")
needs_makedumpfile = pytest.mark.skipif(MAKEDUMPFILE is None, reason="Debian package makedumpfile is not installed")

CASES = kernel_cases() or [("6.1", "01-null-member")]


def _log_only(case: VmcoreCase, dump: Path, root: Path) -> object:
    from forensics.pipelines.vmcore import analyse_dump_or_log
    from forensics.vmcore.program import DebugInfoRequest

    return analyse_dump_or_log(dump, DebugInfoRequest(module_debug=case.module_debug, root=root, debuginfod=()))


def _dmesg_titles(log: Path) -> list[str]:
    """The findings' titles ``kforensic dmesg`` gives on the log."""
    from forensics.pipelines.dmesg import analyse_logs

    return [f.title for f in analyse_logs([str(log)], live=False).incident.findings]


def _titles(incident: Incident) -> list[str]:
    return [f.title for f in incident.findings]


@pytest.mark.parametrize(("kernel", "name"), CASES)
def test_the_log_beside_the_dump_is_read(kernel: str, name: str, no_debug_info: Path) -> None:
    from forensics.types.results import DumpLogResult, LogBeside

    case = load_case(name, kernel)
    result = _log_only(case, case.vmcore, no_debug_info)
    assert isinstance(result, DumpLogResult), type(result)
    assert isinstance(result.log, LogBeside) and result.log.path == str(case.dmesg)
    # Checked to be the dump's own log: its last records are those makedumpfile reads from the dump (every fixture).
    if MAKEDUMPFILE is not None:
        assert result.log.checked.startswith("its last 16 record(s) are the dump's, up to `["), result.log
        assert result.log.checked.endswith("`, as makedumpfile reads them from the dump") and not result.log.unchecked
    assert result.analysis.reason.startswith("no debug info for the kernel ")
    assert "debuginfod-find debuginfo" in result.full_analysis
    assert _titles(result.incident) == _dmesg_titles(case.dmesg)
    assert_evidence_resolves(result.incident.findings)
    # The dump is a source of the incident, and what could not be judged of it says why.
    assert str(case.vmcore) in [s.path for s in result.incident.sources]
    unknown = result.incident.examined[0].could_not[0]
    assert unknown.startswith("the dump's state (registers, ") and "unknown (no debug info: install " in unknown


@needs_makedumpfile
@pytest.mark.parametrize(("kernel", "name"), CASES)
def test_the_log_is_extracted_by_makedumpfile(kernel: str, name: str, no_debug_info: Path, tmp_path: Path) -> None:
    """The dump alone in its directory: makedumpfile extracts the log; the findings cite the lines of what the
    command the report names writes again, and that output has the sha256 the report gives."""
    from forensics.types.results import DumpLogResult, LogExtracted

    case = load_case(name, kernel)
    alone = tmp_path / "crash" / "vmcore"
    alone.parent.mkdir()
    alone.symlink_to(case.vmcore)
    before = hashlib.sha256(case.vmcore.read_bytes()).hexdigest()
    result = _log_only(case, alone, no_debug_info)
    assert isinstance(result, DumpLogResult), type(result)
    assert isinstance(result.log, LogExtracted)
    assert result.log.command == ("makedumpfile", "--dump-dmesg", str(alone), "FILE")
    again = tmp_path / "dmesg.out"
    argv = [str(again) if arg == "FILE" else arg for arg in result.log.command]
    subprocess.run(argv, check=True, capture_output=True, timeout=60)
    record = result.dmesg.sources[0].record
    assert record.path == result.log.cited == f"<makedumpfile --dump-dmesg {alone} FILE>"
    assert record.sha256 == hashlib.sha256(again.read_bytes()).hexdigest()
    assert _titles(result.incident) == _dmesg_titles(case.dmesg)
    assert_evidence_resolves(result.incident.findings, {result.log.cited: again})
    assert hashlib.sha256(case.vmcore.read_bytes()).hexdigest() == before  # the dump is only read
    assert list(alone.parent.iterdir()) == [alone]  # no file left beside it


def test_an_empty_log_beside_the_dump_is_not_the_log(no_debug_info: Path, tmp_path: Path) -> None:
    """kdump writes an empty dmesg file when its makedumpfile failed: the dump's own log is extracted instead."""
    from forensics.types.results import DumpLogResult, LogExtracted

    if MAKEDUMPFILE is None:
        pytest.skip("Debian package makedumpfile is not installed")
    case = load_case("01-null-member")
    crash = tmp_path / "crash"
    crash.mkdir()
    (crash / "vmcore").symlink_to(case.vmcore)
    (crash / "dmesg.txt").write_bytes(b"")
    result = _log_only(case, crash, no_debug_info)
    assert isinstance(result, DumpLogResult) and isinstance(result.log, LogExtracted)


def test_without_makedumpfile_nor_a_log_the_debug_info_error_stands(
    no_debug_info: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = load_case("01-null-member")
    alone = tmp_path / "crash" / "vmcore"
    alone.parent.mkdir()
    alone.symlink_to(case.vmcore)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))  # no makedumpfile there
    with pytest.raises(InputError) as caught:
        _log_only(case, alone, no_debug_info)
    assert caught.value.message.startswith(f"{alone}: no debug info for the kernel ")
    assert caught.value.message.endswith(
        "; the dump's kernel log could not be read either: makedumpfile is not installed (not on PATH; "
        "Debian/Ubuntu package makedumpfile, RHEL/Fedora kexec-tools), and no kernel log was saved beside the dump"
    )
    assert caught.value.hint is not None and "-dbg" in caught.value.hint


# ---------------------------------------------------------------- the command line


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEBUGINFOD_")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    env["HOME"] = str(tmp_path / "home")
    env.update(extra)
    return env


def _kforensic(*args: str | Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "forensics", *map(str, args)],
        capture_output=True, text=True, env=env, timeout=300, check=False, stdin=subprocess.DEVNULL,
    )  # fmt: skip


#: The tests that read :func:`vmcore_json`, on one worker (tests/conftest.py: --dist loadgroup).
_SHARES_THE_JSON = pytest.mark.xdist_group("vmcore-without-debug-info-json")


@pytest.fixture(scope="module")
def vmcore_json(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    """``kforensic vmcore DUMP -f json`` of 01-null-member without debug info, run once for the tests that read it
    (two ran the same command line, ~0.4 s of CPU each)."""
    case = load_case("01-null-member")
    return _kforensic("vmcore", case.vmcore, "-f", "json", env=_env(tmp_path_factory.mktemp("vmcore-json")))


@_SHARES_THE_JSON
def test_json_says_the_analysis_is_not_available(tmp_path: Path, vmcore_json: subprocess.CompletedProcess[str]) -> None:
    case = load_case("01-null-member")
    done = vmcore_json
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["schema"] == "kforensic.vmcore/1"
    assert doc["analysis"]["not_available"].startswith("no debug info for the kernel 6.1.192 (build ID ")
    assert doc["full_analysis"].startswith("install the kernel's debug info: Debian `linux-image-6.1.192-dbg`")
    assert doc["kernel_log"]["beside_the_dump"] == str(case.dmesg)
    dmesg = _kforensic("dmesg", case.dmesg, "-f", "json", env=_env(tmp_path))
    # The log's ranking, but a step at the crash> prompt says to get the dump's debug info first (the log read by
    # dmesg alone has no dump to open).
    assert [{k: v for k, v in h.items() if k != "first"} for h in doc["hypotheses"]] == json.loads(dmesg.stdout)[
        "hypotheses"
    ]
    assert [bool(h.get("first")) for h in doc["hypotheses"]] == [
        h["next_command"].startswith("crash> ") for h in doc["hypotheses"]
    ]
    assert doc["hypotheses"][0]["first"] == f"get a vmlinux the dump opens with: {doc['full_analysis']}"
    assert doc["incident"]["findings"][0]["title"] == json.loads(dmesg.stdout)["incident"]["findings"][0]["title"]
    # Said on stderr too: the report may go to a file.
    assert "only its kernel log was read" in done.stderr
    assert "Traceback" not in done.stderr


@needs_makedumpfile
def test_every_format_says_it_at_its_top(tmp_path: Path) -> None:
    case = load_case("01-null-member")
    alone = tmp_path / "crash" / "vmcore"
    alone.parent.mkdir()
    alone.symlink_to(case.vmcore)
    title = "BUG: unable to handle kernel NULL pointer dereference in kf_null_member_read"
    for fmt, top in (
        ("text", "Only the dump's kernel log was read: the kernel's debug info was not found."),
        ("md", "# kforensic vmcore: the dump's kernel log only\n\n## Only the dump's kernel log was read\n"),
        ("html", "<h2>Only the dump's kernel log was read</h2>"),
    ):
        done = _kforensic("vmcore", alone, "-f", fmt, env=_env(tmp_path))
        assert done.returncode == 0, done.stderr
        assert top in done.stdout, (fmt, done.stdout[:600])
        assert title in done.stdout
        assert f"makedumpfile --dump-dmesg {alone} FILE" in done.stdout  # how to make the cited log again
        assert "unknown (no debug info: install the kernel" in done.stdout


def test_exit_status_is_the_logs(tmp_path: Path) -> None:
    """0, or 1 with --fail-on at or below the log's worst finding: the log was read, no input error."""
    case = load_case("01-null-member")
    assert _kforensic("vmcore", case.vmcore, "--fail-on", "critical", env=_env(tmp_path)).returncode == 1
    assert _kforensic("report", "--vmcore", case.vmcore, "--fail-on", "high", env=_env(tmp_path)).returncode == 1


def test_without_makedumpfile_the_error_says_so(tmp_path: Path) -> None:
    """No log beside the dump and no makedumpfile on PATH: the debug-info error, exit 3, one line saying both."""
    case = load_case("01-null-member")
    alone = tmp_path / "crash" / "vmcore"
    alone.parent.mkdir()
    alone.symlink_to(case.vmcore)
    (tmp_path / "bin").mkdir()
    for command in (("vmcore", alone), ("report", "--vmcore", alone)):
        done = _kforensic(*command, env=_env(tmp_path, PATH=str(tmp_path / "bin")))
        assert done.returncode == 3, (done.stdout, done.stderr)
        assert "Traceback" not in done.stderr
        errors = [line for line in done.stderr.splitlines() if line.startswith("kforensic: error: ")]
        assert len(errors) == 1, done.stderr
        assert errors[0].startswith(f"kforensic: error: {alone}: no debug info for the kernel 6.1.192 (build ID ")
        assert "the dump's kernel log could not be read either: makedumpfile is not installed" in errors[0]
        assert "kforensic: hint: install the kernel's debug info" in done.stderr


@_SHARES_THE_JSON
def test_report_reads_the_same_log(tmp_path: Path, vmcore_json: subprocess.CompletedProcess[str]) -> None:
    """``report --vmcore`` without debug info: the dump's log as ``vmcore`` reads it, said in the details."""
    case = load_case("01-null-member")
    out = tmp_path / "report.json"
    done = _kforensic("report", "--vmcore", case.vmcore, "-f", "md", "--json", out, env=_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert f"## Details: vmcore {case.vmcore} (its kernel log only: no debug info)" in done.stdout
    assert "### Only the dump's kernel log was read" in done.stdout
    vmcore = json.loads(vmcore_json.stdout)
    doc = json.loads(out.read_text())
    assert [h["statement"] for h in doc["hypotheses"]] == [h["statement"] for h in vmcore["hypotheses"]]
    # Its step at the crash> prompt is not offered as if crash could open the dump: its debug info first (it was
    # "confirm: `crash> dis -rl kf_null_member_read+0x19`").
    [dump_only] = [e for e in doc["incident"]["examined"] if e.get("input") == "crash dump"]
    assert dump_only["hint"].startswith("install the kernel's debug info: ") and "unusable" not in dump_only
    [step] = [h for h in doc["hypotheses"] if h["next_command"].startswith("crash> ")]
    assert step["first"] == f"get a vmlinux the dump opens with: {dump_only['hint']}"
    # ... as kforensic vmcore's own ranking says it (its "next: crash> dis ..." too)
    assert [h.get("first") for h in vmcore["hypotheses"]] == [h.get("first") for h in doc["hypotheses"]]
    assert "confirm: first get a vmlinux the dump opens with: install the kernel's debug info: " in done.stdout
    assert "confirm: `crash>" not in done.stdout


def test_the_dump_chosen_among_several_is_said(no_debug_info: Path, tmp_path: Path) -> None:
    """/var/crash with two crash directories: the newest is read, and the report says so, as the full one does."""
    from forensics.types.results import DumpLogResult

    crash = tmp_path / "crash"
    for stamp, name in (("old", "02-bug-on"), ("new", "01-null-member")):
        case = load_case(name)
        (crash / stamp).mkdir(parents=True)
        (crash / stamp / "vmcore").symlink_to(case.vmcore)
        (crash / stamp / "dmesg.txt").symlink_to(case.dmesg)
    os.utime(crash / "old", (1_600_000_000, 1_600_000_000))
    result = _log_only(load_case("01-null-member"), crash, no_debug_info)
    assert isinstance(result, DumpLogResult)
    assert result.dump == str(crash / "new" / "vmcore")
    assert result.warnings == (f"{crash} holds 2 crash directories: analysed the newest, new",)


def test_the_dumps_oops_is_said_to_have_taken_the_machine_down(no_debug_info: Path) -> None:
    # The dump exists, so its kernel went down: its log's oops (no panic line: oops_end() went to crash_kexec()) was
    # said "the task that hit it is killed" (ue17 #1).
    from forensics.types.dmesg import AFTER_FACT, WENT_DOWN
    from forensics.types.results import DumpLogResult

    case = load_case("01-null-member")
    result = _log_only(case, case.vmcore, no_debug_info)
    assert isinstance(result, DumpLogResult), type(result)
    (crash,) = [f for f in result.incident.findings if f.fact(AFTER_FACT) is not None]
    assert crash.baseline is not None and crash.baseline.name == WENT_DOWN
    assert "a crash dump of its boot exists" in str(crash.fact(AFTER_FACT))
