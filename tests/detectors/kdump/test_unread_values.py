"""A check whose value was never read (file absent, unreadable, garbled) is ``unknown (why)``, never a pass.

This machine's kernel has no /proc/sys/kernel/sysrq, and ``kdump check`` showed
``[PASS] sysctl kernel.sysrq: not present in this kernel``: a verdict from a
value it never read.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from collectors.kdump.state import collect_kdump_state
from detectors.kdump.checklist import run_checklist
from detectors.kdump.findings import checklist_findings
from forensics.model import Severity
from forensics.types.kdump import CheckLine, Status
from tests.collectors.kdump.roots import OS_RELEASE, SCENARIOS, build


def _remove(relative: str) -> Callable[[Path], None]:
    def edit(root: Path) -> None:
        path = root / relative
        shutil.rmtree(path) if path.is_dir() else path.unlink()

    return edit


def _directory_instead(relative: str) -> Callable[[Path], None]:
    # A directory where the file should be: reading it fails with EISDIR, even as root.
    def edit(root: Path) -> None:
        path = root / relative
        path.unlink()
        path.mkdir()

    return edit


def _lines(tmp_path: Path, scenario: str, edit: Callable[[Path], None]) -> dict[str, CheckLine]:
    system = replace(SCENARIOS[scenario], extra=edit)
    state = collect_kdump_state(build(tmp_path / "root", system), system.statvfs)
    checklist = run_checklist(state)
    # Unknown lines reach the incident too, with their status, so `kforensic report` does not drop them.
    statuses = {f.facts[0].value for f in checklist_findings(checklist, state)}
    assert ("unknown" in statuses) is (checklist.count(Status.UNKNOWN) > 0)
    return {line.id: line for line in checklist.lines}


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        (_remove("proc/sys/kernel/sysrq"), "/proc/sys/kernel/sysrq does not exist"),
        (_directory_instead("proc/sys/kernel/sysrq"), "cannot read /proc/sys/kernel/sysrq: Is a directory"),
    ],
    ids=["absent", "unreadable"],
)
def test_a_sysctl_not_read_is_unknown(tmp_path: Path, edit: Callable[[Path], None], reason: str) -> None:
    line = _lines(tmp_path, "debian12-ready", edit)["sysctl:kernel.sysrq"]
    assert line.status is Status.UNKNOWN, line
    assert line.detail.startswith(f"unknown ({reason}"), line.detail
    assert line.severity is Severity.LOW and line.why and line.fix
    assert line.evidence == ()  # nothing read, nothing quoted


def test_a_sysctl_that_is_not_a_number_is_unknown(tmp_path: Path) -> None:
    def garble(root: Path) -> None:
        (root / "proc/sys/kernel/panic_on_oops").write_text("on\n")

    line = _lines(tmp_path, "debian12-ready", garble)["sysctl:kernel.panic_on_oops"]
    assert line.status is Status.UNKNOWN and "'on', not a number" in line.detail, line
    assert line.evidence[0].excerpt == "on"


def test_a_root_without_proc_sys_passes_no_sysctl(tmp_path: Path) -> None:
    lines = _lines(tmp_path, "rhel9-ready", _remove("proc/sys/kernel"))
    sysctls = [line for line_id, line in lines.items() if line_id.startswith("sysctl:")]
    assert len(sysctls) == 8
    assert all(line.status is Status.UNKNOWN for line in sysctls), [(x.id, x.status) for x in sysctls]


def test_collector_and_space_are_unknown_when_the_config_was_not_read(tmp_path: Path) -> None:
    """The tooling's default collector and the default dump directory stand only for a config that sets neither."""
    lines = _lines(tmp_path, "debian12-ready", _directory_instead("etc/default/kdump-tools"))
    for line_id in ("makedumpfile", "dump-space"):
        line = lines[line_id]
        assert line.status is Status.UNKNOWN, line
        assert "cannot read /etc/default/kdump-tools: Is a directory" in line.detail
        assert line.fix.startswith("make the kdump configuration readable")
    assert "51200 MiB free at /" in lines["dump-space"].detail  # what was measured (the copy's df) is still said
    assert lines["kdump-config"].status is Status.FAIL


@pytest.mark.parametrize(
    ("relative", "line_id"),
    [("sys/kernel/kexec_crash_size", "crash-reservation"), ("sys/kernel/kexec_crash_loaded", "crash-loaded")],
)
def test_an_unreadable_kernel_file_is_unknown_not_a_kernel_without_crash_support(
    tmp_path: Path, relative: str, line_id: str
) -> None:
    """It said "the kernel was built without kexec crash support" of a file it could not read."""
    from tests.forensics.commands.test_kdump_cli import invoke

    lines = _lines(tmp_path / "lines", "debian12-ready", _directory_instead(relative))
    line = lines[line_id]
    assert line.status is Status.UNKNOWN and line.kernel_side, line
    assert line.detail == f"unknown (cannot read /{relative}: Is a directory)"
    assert "without" not in line.fix and line.blocked_by is None
    assert all(x.blocked_by is None for x in lines.values())  # an unread file is no root cause
    # Everything else of this system is ready: the verdict says it is not known, and exits 1.
    system = replace(SCENARIOS["debian12-ready"], extra=_directory_instead(relative))
    checklist = run_checklist(collect_kdump_state(build(tmp_path / "root", system), system.statvfs))
    assert not checklist.ready and not checklist.kernel_ready and checklist.unknown
    result = invoke("kdump", "check", "--root", str(tmp_path / "root"))
    assert result.returncode == 1
    assert "NOT KNOWN TO BE READY: the kernel side could not be read" in result.stdout
    assert "kernel side unknown" in result.stdout and "NOT READY" not in result.stdout


def test_an_unreadable_unit_directory_is_unknown_not_a_disabled_service(tmp_path: Path) -> None:
    def loop(root: Path) -> None:
        # A link to itself: listing it fails with ELOOP, as an unreadable directory fails with EACCES.
        wants = root / "etc/systemd/system/multi-user.target.wants"
        shutil.rmtree(wants)
        wants.symlink_to("multi-user.target.wants")

    line = _lines(tmp_path, "debian12-ready", loop)["kdump-service"]
    assert line.status is Status.UNKNOWN, line
    assert line.detail.startswith("unknown (cannot read /etc/systemd/system/multi-user.target.wants: "), line.detail


def test_a_configuration_this_reader_may_not_read_is_unknown_not_missing_tooling(tmp_path: Path) -> None:
    """Mode 000 under a reader bound by permissions: it said "install the kdump tooling" of an installed tooling.

    The file is there and kdump-tools reads it as root: the reader's rights are the cause, and what the file
    decides (kdump enabled, the dump target, the collector) is unknown, never a fault nor a pass.
    """
    import json
    import subprocess
    import sys

    from tests.helpers import as_plain_reader

    root = build(tmp_path / "root", SCENARIOS["debian12-ready"])  # everything else of this system is ready
    (root / "etc/default/kdump-tools").chmod(0)
    argv = [sys.executable, "-m", "forensics", "kdump", "check", "--root", str(root)]
    done = subprocess.run(as_plain_reader([*argv, "--format", "json"]), capture_output=True, text=True, check=False)
    assert done.stderr == "" and done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    lines = {line["id"]: line for line in doc["checks"]}
    config = lines["kdump-config"]
    assert config["status"] == "unknown", config
    assert "cannot read /etc/default/kdump-tools: Permission denied (EACCES)" in config["detail"]
    assert config["fix"] == "run the check as root, or let this user read /etc/default/kdump-tools"
    assert config["severity"] == "medium"
    assert lines["unreadable:/etc/default/kdump-tools"]["fix"] == "run the check as root, or let this user read it"
    assert lines["kdump-tooling"]["status"] == "pass"
    assert not any("install" in line["fix"] for line in doc["checks"]), [x["fix"] for x in doc["checks"]]
    for line_id in ("makedumpfile", "dump-space"):
        assert lines[line_id]["status"] == "unknown", lines[line_id]
    # Not "READY": whether the configuration enables kdump was never read.
    assert doc["ready"] is False and doc["kernel_ready"] is True
    text = subprocess.run(as_plain_reader(argv), capture_output=True, text=True, check=False).stdout
    assert "NOT KNOWN TO BE READY: kdump configuration, Room for the dump, makedumpfile options could not be read" in (
        text
    )
    # Nor does the setup plan say "Nothing to do" over a configuration it never read.
    argv[argv.index("check")] = "setup"
    plan = subprocess.run(as_plain_reader(argv), capture_output=True, text=True, check=False).stdout
    assert "Nothing to do" not in plan, plan
    assert (
        "Not read, so not planned: cannot read /etc/default/kdump-tools: Permission denied (run the setup as root)."
        in (plan)
    )


def test_a_program_directory_this_reader_may_not_search_is_unknown_not_missing_tooling(tmp_path: Path) -> None:
    """/usr/sbin of mode 000 under a reader bound by permissions: the whole check ended in exit 3 (where Python's
    ``Path.exists`` says False instead, kdump-config was "missing: apt-get install kdump-tools")."""
    import json
    import subprocess
    import sys

    from tests.helpers import as_plain_reader

    root = build(tmp_path / "root", SCENARIOS["debian12-ready"])
    (root / "usr/sbin").chmod(0)
    try:
        argv = [sys.executable, "-m", "forensics", "kdump"]
        check = [*argv, "check", "--root", str(root), "--format", "json"]
        done = subprocess.run(as_plain_reader(check), capture_output=True, text=True, check=False)
        plan = as_plain_reader([*argv, "setup", "--root", str(root)])
        setup = subprocess.run(plan, capture_output=True, text=True, check=False)
    finally:
        (root / "usr/sbin").chmod(0o755)
    assert done.stderr == "" and done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    lines = {line["id"]: line for line in doc["checks"]}
    tooling = lines["kdump-tooling"]
    assert tooling["status"] == "unknown", tooling
    assert tooling["detail"] == (
        "unknown (kdump-config, makedumpfile not found in the directories read;"
        " cannot look in /usr/sbin: Permission denied (EACCES))"
    )
    assert tooling["fix"] == "run the check as root, or let this user search /usr/sbin"
    assert not any(line["blocked_by"] for line in doc["checks"])  # an unknown is no root cause
    assert doc["ready"] is False
    assert setup.returncode == 0 and "apt-get install" not in setup.stdout, setup.stdout
    assert "Nothing to do" not in setup.stdout
    assert "Not read, so not planned: cannot look in /usr/sbin: Permission denied (run the setup as root)." in (
        setup.stdout
    )
    # Said once, in the plan's "unread": the manual steps said it again in other words ("check as root whether
    # kdump-tools, makedumpfile is installed") beside "run the setup as root".
    assert "Not read, so not planned: cannot look in /usr/sbin: Permission denied (run the setup as root)." in (
        setup.stdout
    )
    assert "/usr/sbin" not in "".join(line for line in setup.stdout.splitlines() if line.startswith("manual:"))


def test_a_program_directory_in_a_link_loop_is_unknown_not_missing_tooling(tmp_path: Path) -> None:
    """A link loop fails every reader alike (ELOOP), root too: ``Path.exists`` said False, the tooling "missing".

    Its fix is the directory's repair: "run the check as root" (the fix of a directory only this reader may not
    search) was said to root of a loop that root cannot look into either, and ``kdump setup`` said "check as root".
    """
    from detectors.kdump.plan import make_plan
    from detectors.kdump.sysctl_rules import policy_named

    def loop(root: Path) -> None:
        shutil.rmtree(root / "usr/sbin")
        (root / "usr/sbin").symlink_to("sbin")

    lines = _lines(tmp_path / "lines", "debian12-ready", loop)
    line = lines["kdump-tooling"]
    assert "as root" not in lines["unreadable:/usr/sbin"].fix  # root cannot look in either
    assert line.status is Status.UNKNOWN, line
    assert "cannot look in /usr/sbin: Too many levels of symbolic links (ELOOP)" in line.detail, line.detail
    assert (
        line.fix == "make /usr/sbin a directory that can be searched again (no user can look in it), then check again"
    )
    system = replace(SCENARIOS["debian12-ready"], extra=loop)
    state = collect_kdump_state(build(tmp_path / "root", system), system.statvfs)
    plan = make_plan(state, run_checklist(state), policy_named("none"))
    assert not plan.packages and plan.install is None
    assert plan.unread == (
        "cannot look in /usr/sbin: Too many levels of symbolic links (make /usr/sbin a directory it can search again)",
    ), plan.unread
    assert not [step for step in plan.manual if "/usr/sbin" in step], plan.manual  # said once, in unread


@pytest.mark.parametrize(
    ("scenario", "edit", "held"),
    [
        ("debian12-ready", _directory_instead("sys/kernel/kexec_crash_loaded"), ["crash-loaded"]),
        ("debian12-unreadable-config", None, ["kdump-config", "dump-space", "makedumpfile"]),
        ("debian12-no-tooling", None, ["crashkernel-cmdline", "kdump-tooling"]),
        ("debian12-ready", None, []),
    ],
    ids=["kernel-side-unknown", "config-a-directory", "no-tooling", "ready"],
)
def test_the_lines_holding_the_verdict_back_are_named(
    tmp_path: Path, scenario: str, edit: Callable[[Path], None] | None, held: list[str]
) -> None:
    """``kdump test`` refuses to crash a machine whose check is not READY and lists why: it listed the failed
    lines only, so a check held back by lines not read (no failure) refused with an empty list."""
    system = SCENARIOS[scenario] if edit is None else replace(SCENARIOS[scenario], extra=edit)
    checklist = run_checklist(collect_kdump_state(build(tmp_path / "root", system), system.statvfs))
    assert [line.id for line in checklist.holding_back()] == held
    assert bool(checklist.holding_back()) is not checklist.ready


def test_a_program_that_is_a_link_loop_is_its_own_problem_not_its_directorys(tmp_path: Path) -> None:
    """/usr/sbin/kdump-config a link to itself: /usr/sbin was searched and the name is there, but it cannot be run.
    It was "cannot look in /usr/sbin: Too many levels of symbolic links", UNKNOWN, with the fix "make /usr/sbin a
    directory that can be searched again": a directory that was searched fine."""

    def loop(root: Path) -> None:
        program = root / "usr/sbin/kdump-config"
        program.unlink()
        program.symlink_to("kdump-config")

    lines = _lines(tmp_path, "debian12-ready", loop)
    tooling = lines["kdump-tooling"]
    assert tooling.status is Status.FAIL and tooling.detail == "missing: kdump-config", tooling
    assert "unreadable:/usr/sbin" not in lines
    assert lines["unreadable:/usr/sbin/kdump-config"].detail == "unknown (Too many levels of symbolic links (ELOOP))"


def _check_with_unsearchable(tmp_path: Path, directory: str, *, df: bool = True) -> subprocess.CompletedProcess[str]:
    """``kdump check --format json`` of the debian12-ready root with ``directory`` of mode 000, run by a reader
    that file permissions bind."""
    from tests.helpers import as_plain_reader

    root = build(tmp_path / "root", replace(SCENARIOS["debian12-ready"], df=df))
    (root / directory).chmod(0)
    try:
        check = [sys.executable, "-m", "forensics", "kdump", "check", "--root", str(root), "--format", "json"]
        return subprocess.run(as_plain_reader(check), capture_output=True, text=True, check=False)
    finally:
        (root / directory).chmod(0o755)


def test_a_usr_this_reader_may_not_search_is_unknown_not_bad_input(tmp_path: Path) -> None:
    """/usr of mode 000 under a reader bound by permissions: the check ended in exit 3 ("cannot access
    .../usr/lib: Permission denied"), as if the user's input were bad; what lives under /usr is unknown, with why."""
    done = _check_with_unsearchable(tmp_path, "usr")
    assert done.stderr == "" and done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    lines = {line["id"]: line for line in doc["checks"]}
    assert lines["kdump-tooling"]["status"] == "unknown", lines["kdump-tooling"]
    unread = lines["unreadable:/usr/sbin"]
    assert unread["status"] == "unknown" and unread["detail"] == "unknown (Permission denied (EACCES))", unread
    assert doc["ready"] is False


def test_a_var_this_reader_may_not_search_leaves_the_room_for_the_dump_unknown(tmp_path: Path) -> None:
    """/var of mode 000 under a reader bound by permissions: the free-space probe's walk up from /var/crash
    (Path.is_dir) raised, and the check ended in exit 3 ("cannot access .../var/crash: Permission denied"), as
    ed10de4 fixed for /usr.  The room for the dump is unknown, with why, and /var is said unread.  It was a medium
    WARN (a problem, the verdict READY) of a room never measured: now unknown, no problem, and the verdict is not
    known (exit 1)."""
    done = _check_with_unsearchable(tmp_path, "var", df=False)
    assert done.stderr == "" and done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    lines = {line["id"]: line for line in doc["checks"]}
    room = lines["dump-space"]
    assert room["status"] == "unknown" and room["severity"] == "medium", room
    assert doc["ready"] is False and doc["kernel_ready"] is True
    assert not [f for f in doc["incident"]["findings"] if f["severity"] in ("medium", "high", "critical")]
    # A --root copy is not measured where it lies (its disk is not the machine's); the live system's walk up from an
    # unsearchable directory: test_state.py::test_a_dump_dir_under_a_link_loop_is_not_measured.
    assert "free space not measured: the root" in room["detail"], room
    unread = [line for key, line in lines.items() if key.startswith("unreadable:/var/")]
    assert unread and all(u["detail"] == "unknown (Permission denied (EACCES))" for u in unread), lines.keys()


def _sos_like(root: Path) -> None:
    # A copy that kept /etc and /usr/lib but no program (a sos report copies none), nor the kdump configuration.
    for relative in ("usr/sbin", "usr/bin", "etc/default/kdump-tools"):
        _remove(relative)(root)


def test_a_partial_copy_says_unknown_where_a_whole_system_says_the_fault(tmp_path: Path) -> None:
    """A --root copy without /usr/sbin and /usr/bin, and without /etc/default/kdump-tools: the programs were
    "missing" (a FAIL, high) and the configuration "does not exist" (a FAIL, high) of a tree that only did not hold
    them, and the room and the collector (unknown, medium) made "N problem(s)".  On a partial copy what it does not
    hold is unknown, said with why, and no problem; on a whole system (the same tree with its program directories) the
    missing configuration is the fault it is, kdump-tools' programs being there."""
    from tests.forensics.commands.test_kdump_cli import invoke

    lines = _lines(tmp_path / "partial", "debian12-ready", _sos_like)
    assert lines["kdump-service"].status is Status.PASS  # its link was copied: what is read is still judged
    for line_id in ("kdump-tooling", "kdump-config", "makedumpfile", "dump-space"):
        line = lines[line_id]
        assert line.status is Status.UNKNOWN and line.severity is Severity.MEDIUM, line
        assert "has no /usr/sbin (a partial copy: every installed system has it)" in line.detail, line.detail
    assert lines["kdump-config"].detail.startswith("unknown (/etc/default/kdump-tools: not found, and the root ")
    root = tmp_path / "partial" / "root"
    check = tmp_path / "kdump.json"
    assert invoke("kdump", "check", "--root", str(root), "-f", "json", "-o", str(check)).returncode == 1
    doc = json.loads(check.read_text())
    findings = doc["incident"]["findings"]
    # No problem: each line not read is an info finding that says so, its harm if bad kept as a fact.
    assert [f["title"] for f in findings if f["severity"] in ("medium", "high", "critical")] == []
    config = next(f for f in findings if f["title"] == "kdump: kdump configuration: could not be judged")
    assert config["severity"] == "info" and {"name": "harm_if_bad", "value": "medium"} in config["facts"]
    unknown = doc["counts"]["unknown"]
    text = invoke("kdump", "check", "--root", str(root)).stdout
    assert f"; {unknown} could not be judged (unknown); kernel side ready)" in text, text
    assert text.rstrip().splitlines()[-1].startswith("NOT KNOWN TO BE READY: kdump tooling installed, ")
    report = tmp_path / "report.md"
    assert invoke("report", "--from", str(check), "-o", str(report)).returncode == 0
    verdict = report.read_text().splitlines()[2]
    # A report of the check alone says the machine's readiness (review ue24 F2), naming what was not read.
    said = f"On debian12-host, kdump is not known to be ready: {unknown} check(s) it rests on could not be read ("
    assert verdict.startswith(said), verdict
    assert "problem(s)" not in verdict, verdict

    # No start link in a partial copy is not "not enabled": the links may not have been copied.
    def no_link(root: Path) -> None:
        _sos_like(root)
        _remove("etc/systemd/system/multi-user.target.wants/kdump-tools.service")(root)

    service = _lines(tmp_path / "no-link", "debian12-ready", no_link)["kdump-service"]
    assert service.status is Status.UNKNOWN and "a partial copy" in service.detail, service

    # The same tree with its program directories is a whole system: kdump-tools is there, its configuration is not.
    def whole(root: Path) -> None:
        _remove("etc/default/kdump-tools")(root)

    lines = _lines(tmp_path / "whole", "debian12-ready", whole)
    assert lines["kdump-tooling"].status is Status.PASS
    config_line = lines["kdump-config"]
    assert config_line.status is Status.FAIL and config_line.detail == "/etc/default/kdump-tools does not exist"


def test_a_partial_copy_without_boot_configuration_does_not_say_it_is_missing(tmp_path: Path) -> None:
    """A partial copy (no /usr/sbin, /usr/bin) that holds no /etc/default/grub, grub.d, BLS entries nor
    /etc/kernel/cmdline: its boot configuration was not read, not found missing.  It was a WARN ("no boot loader
    configuration found", fix "add crashkernel= ...") where every other line of the copy said unknown; on a whole
    system the same absence stays the WARN."""

    def no_boot_config(root: Path) -> None:
        for relative in ("etc/default/grub", "etc/default/grub.d", "etc/kernel/cmdline", "boot/loader/entries"):
            if (root / relative).exists():
                _remove(relative)(root)

    def partial(root: Path) -> None:
        _sos_like(root)
        no_boot_config(root)

    line = _lines(tmp_path / "partial", "debian12-ready", partial)["crashkernel-boot"]
    assert line.status is Status.UNKNOWN and line.severity is Severity.LOW, line
    assert "no boot loader configuration found" in line.detail and "a partial copy" in line.detail, line.detail
    whole = _lines(tmp_path / "whole", "debian12-ready", no_boot_config)["crashkernel-boot"]
    assert whole.status is Status.WARN, whole


def test_a_copy_of_a_few_files_is_not_called_a_copy_of_proc_and_sys(tmp_path: Path) -> None:
    """`kdump check --root` of a tree holding only etc/os-release: every unknown called it "a copy of /proc and /sys"
    (it has neither), the boot configuration was a WARN of nothing read, and the room for the dump quoted the free
    space of the disk holding the copy ("71785 MiB free at /"), which is not the machine's dump target."""
    from tests.forensics.commands.test_kdump_cli import invoke

    root = tmp_path / "copy"
    (root / "etc").mkdir(parents=True)
    (root / "etc" / "os-release").write_text(OS_RELEASE["debian12"])
    text = invoke("kdump", "check", "--root", str(root)).stdout
    assert "[WARN]" not in text and "[FAIL]" not in text and "[PASS] crashkernel" not in text, text
    assert "a copy of /proc and /sys" not in text, text
    assert "MiB free" not in text, text
    room = next(line for line in text.splitlines() if line.startswith("[UNKNOWN] Room for the dump"))
    assert "a partial copy" in room, room


def test_a_configuration_whose_read_fails_is_unknown_not_a_fault(tmp_path: Path) -> None:
    """An I/O error reading /etc/default/kdump-tools (its disk, a network file system) says nothing of what the file
    holds, nor that the tooling's read at boot fails too: could not be judged, not a FAIL ("the kdump tooling cannot
    read it either", high, before).  The read really fails: /etc/default is a FUSE file system (eio_fs.py) that fails
    every read of kdump-tools with EIO, as a failing disk does."""
    from tests.forensics.commands.test_kdump_cli import invoke
    from tests.forensics.vmcore.test_dump_eio import SERVER
    from tests.helpers import fuse_mounted

    root = build(tmp_path / "root", SCENARIOS["debian12-ready"])
    source = tmp_path / "default"
    shutil.move(root / "etc/default", source)
    with fuse_mounted(SERVER, source, root / "etc/default", "0", str(1 << 40), "kdump-tools", ready="grub") as mount:
        with pytest.raises(OSError, match="Input/output error"):  # the read really fails
            (mount / "kdump-tools").read_bytes()
        state = collect_kdump_state(root, SCENARIOS["debian12-ready"].statvfs)
        result = invoke("kdump", "check", "--root", str(root), "--format", "json")
    config = next(line for line in run_checklist(state).lines if line.id == "kdump-config")
    assert config.status is Status.UNKNOWN, config
    assert config.detail.startswith(
        "unknown (the read failed: Input/output error (EIO), /etc/default/kdump-tools: whether it enables kdump"
    )
    assert "dmesg" in config.fix
    assert config.severity is Severity.MEDIUM  # the harm a bad configuration would do, kept for the verdict
    doc = json.loads(result.stdout)
    statuses = {c["id"]: c["status"] for c in doc["checks"]}
    assert statuses["kdump-config"] == "unknown"
    assert "fail" not in statuses.values(), statuses  # nothing judged is a problem
    assert result.returncode == 1  # not known to be ready: exit 1, as before (kdump check exits 0 only when ready)
