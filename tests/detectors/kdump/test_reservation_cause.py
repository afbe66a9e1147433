"""Nothing reserved although the command line has a crashkernel= that should reserve memory: the kernel could not
place it.  Review 7 (B): the fix was "kdump setup --apply (adds crashkernel= ...), then reboot" and setup then
planned nothing ("Reboot needed: ... reserved too little"): a loop back to the same failing command line."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from detectors.kdump.findings import checklist_findings
from detectors.kdump.plan import make_plan
from detectors.kdump.sysctl_rules import policy_named
from forensics.pipelines.kdump import run_setup
from forensics.report import OutputFormat
from forensics.report.formats import render
from forensics.report.kdump import KdumpSetupRenderer
from forensics.types.kdump import Status
from tests.collectors.kdump.roots import GIB, RELEASE, SCENARIOS, build
from tests.detectors.kdump.lines import DEBIAN_16G, check_root, line_of
from tests.helpers import assert_evidence_resolves

#: The reviewer's /tmp/ue7/rd: crashkernel=384M-:128M on the command line and in grub.cfg, nothing reserved.
UNPLACED = replace(DEBIAN_16G, cmdline_crashkernel="384M-:128M", boot_crashkernel="384M-:128M")
_REL = RELEASE["debian12"]
#: kern.log of two boots: the older one reserved, the last one (this boot) could not.
KERN_LOG = (
    f"Dec  1 09:00:00 host kernel: [    0.000000] Linux version {_REL} (debian-kernel@lists.debian.org)\n"
    "Dec  1 09:00:00 host kernel: [    0.000000] Reserving 128MB of memory at 752MB for crashkernel (System RAM: "
    "16383MB)\n"
    f"Dec  7 04:00:00 host kernel: [    0.000000] Linux version {_REL} (debian-kernel@lists.debian.org)\n"
    "Dec  7 04:00:00 host kernel: [    0.000000] Command line: BOOT_IMAGE=/boot/vmlinuz quiet crashkernel=384M-:128M\n"
    "Dec  7 04:00:00 host kernel: [    0.000000] crashkernel reservation failed - No suitable area found.\n"
    "Dec  7 04:00:01 host kernel: [    0.210000] smpboot: Allowing 4 CPUs, 0 hotplug CPUs\n"
)


def _kern_log(root: Path) -> None:
    (root / "var/log").mkdir(parents=True, exist_ok=True)
    (root / "var/log/kern.log").write_text(KERN_LOG)


def test_without_a_kernel_log_the_fix_is_high_or_smaller_not_setup(tmp_path: Path) -> None:
    _, checklist = check_root(tmp_path, UNPLACED)
    line = line_of(checklist, "crash-reservation")
    assert line.status is Status.FAIL
    assert "too large for free low memory?" not in line.detail
    assert "although crashkernel=384M-:128M (128 MiB for this RAM) was given: the kernel could not place it" in (
        line.detail
    )
    assert "no kernel log under the root" in line.detail
    assert "kdump setup --apply" not in line.fix
    assert "dmesg | grep -i crashkernel" in line.fix
    assert "crashkernel=128M,high" in line.fix
    assert "or a smaller size" in line.fix


def test_the_kernel_logs_reason_of_this_boot_is_cited(tmp_path: Path) -> None:
    state, checklist = check_root(tmp_path, replace(UNPLACED, extra=_kern_log))
    line = line_of(checklist, "crash-reservation")
    # The last boot's message, not the older boot's successful reservation.
    assert "/var/log/kern.log line 5: crashkernel reservation failed - No suitable area found." in line.detail
    assert [e.locator.start for e in line.evidence if e.source.endswith("kern.log")] == [5]
    assert "crashkernel=128M,high" in line.fix
    assert_evidence_resolves(checklist_findings(checklist, state))


def test_setup_plans_the_same_step_and_no_bare_reboot(tmp_path: Path) -> None:
    state, checklist = check_root(tmp_path, UNPLACED)
    plan = make_plan(state, checklist, policy_named("none"))
    fix = line_of(checklist, "crash-reservation").fix
    assert plan.boot_steps == (fix,)
    assert "reserved too little" not in plan.reboot_reason
    root = build(tmp_path / "again", UNPLACED)
    text = render(KdumpSetupRenderer(), run_setup(root, policy_named("none"), apply=False), OutputFormat.TEXT)
    assert "Nothing to do" not in text
    assert "reserved too little" not in text


def test_high_is_not_offered_where_the_architecture_has_none(tmp_path: Path) -> None:
    def s390x(root: Path) -> None:
        (root / "proc/sys/kernel/arch").write_text("s390x\n")

    _, checklist = check_root(tmp_path, replace(UNPLACED, extra=s390x))
    fix = line_of(checklist, "crash-reservation").fix
    assert ",high" not in fix
    assert "a smaller size" in fix


@pytest.mark.parametrize(
    ("value", "replacement"),
    [
        # Review 8 (5): a ,high that failed was to be replaced by the same ,high; an @offset by ,high.
        ("256M,high", "with crashkernel=128M,high (a smaller size; or keep 256M,high and add crashkernel=<size>,low"),
        ("256M@16M", "with crashkernel=256M (without @16M: the kernel places it where memory is free)"),
        ("384M-:128M", "with crashkernel=128M,high (placed above 4 GiB"),
    ],
)
def test_the_fix_never_writes_back_the_value_that_failed(tmp_path: Path, value: str, replacement: str) -> None:
    system = replace(UNPLACED, cmdline_crashkernel=value, boot_crashkernel=value)
    _, checklist = check_root(tmp_path, system)
    fix = line_of(checklist, "crash-reservation").fix
    assert replacement in fix
    assert f"with crashkernel={value} " not in fix


def test_grubby_in_the_fix_carries_the_replacement(tmp_path: Path) -> None:
    # Review 8 (4): on BLS the step was grubby --args=crashkernel=<the value that failed>, undoing the edit.
    value = "1G-4G:192M,4G-64G:256M,64G-:512M"
    system = replace(SCENARIOS["rhel9-ready"], ram=16 * GIB, cmdline_crashkernel=value, crash_size=0, loaded=0)
    state, checklist = check_root(tmp_path, system)
    fix = line_of(checklist, "crash-reservation").fix
    assert "grubby --update-kernel=ALL --args=crashkernel=256M,high" in fix
    assert f"--args=crashkernel={value}" not in fix
    assert "/boot/loader/entries" not in fix
    plan = make_plan(state, checklist, policy_named("none"))
    assert all(f"crashkernel={value}" not in " ".join(c.argv) for c in plan.commands)


def _log(text: str, name: str = "kern.log") -> Callable[[Path], None]:
    def write(root: Path) -> None:
        (root / "var/log").mkdir(parents=True, exist_ok=True)
        (root / "var/log" / name).write_text(text)

    return write


def test_a_log_whose_last_boot_is_another_kernel_is_not_cited(tmp_path: Path) -> None:
    # Review 8 (6a): the log's last boot (6.1.0-28) reserved; this boot is of another kernel: its line was cited as
    # the reason this boot "could not place it".
    other = KERN_LOG.replace(f"Linux version {_REL}", "Linux version 6.1.0-28-amd64").replace(
        "crashkernel reservation failed - No suitable area found.",
        "Reserving 128MB of memory at 2800MB for crashkernel",
    )
    _, checklist = check_root(tmp_path, replace(UNPLACED, extra=_log(other)))
    line = line_of(checklist, "crash-reservation")
    assert "the kernel log's last boot, 6.1.0-28-amd64 at /var/log/kern.log line 3, is not this one" in line.detail
    assert "Reserving" not in line.detail
    assert not [e for e in line.evidence if e.source.endswith("kern.log")]


def test_a_reservation_released_since_boot_is_not_a_placement_failure(tmp_path: Path) -> None:
    # Review 8 (6b): "Reserving 128MB ... for crashkernel" of this boot and kexec_crash_size 0: released, not unplaced.
    released = KERN_LOG.replace(
        "crashkernel reservation failed - No suitable area found.",
        "Reserving 128MB of memory at 2800MB for crashkernel",
    )
    state, checklist = check_root(tmp_path, replace(UNPLACED, extra=_log(released)))
    line = line_of(checklist, "crash-reservation")
    assert "could not place it" not in line.detail
    assert "reserved at boot (/var/log/kern.log line 5: Reserving 128MB" in line.detail
    assert "since released" in line.detail
    assert ",high" not in line.fix
    assert "smaller" not in line.fix
    assert_evidence_resolves(checklist_findings(checklist, state))


def test_only_the_kernels_lines_are_cited(tmp_path: Path) -> None:
    # Review 8 (6c): kdump-tools' "no crashkernel= parameter" and systemd's lines were cited as the kernel's word.
    syslog = KERN_LOG + (
        "Dec  7 04:00:09 host kdump-tools[630]:  * no crashkernel= parameter in the kernel cmdline\n"
        "Dec  7 04:00:09 host systemd[1]: kdump-tools.service: crashkernel check failed\n"
    )
    _, checklist = check_root(tmp_path, replace(UNPLACED, extra=_log(syslog, "syslog")))
    line = line_of(checklist, "crash-reservation")
    assert "/var/log/syslog line 5: crashkernel reservation failed" in line.detail
    assert "kdump-tools" not in line.detail
    assert "systemd" not in line.detail


def test_a_kernel_with_kexec_that_reserved_nothing_keeps_the_reservation_as_its_root(tmp_path: Path) -> None:
    """Only a kernel without kexec crash support is named as the deeper fault (review ue16 #9): a kernel with it that
    could not place crashkernel= is titled by what is wrong there, and its blocked lines name that."""
    state, checklist = check_root(tmp_path, UNPLACED)
    by_check = {next(f.value for f in found.facts if f.name == "check"): found for found in checklist_findings(
        checklist, state)}  # fmt: skip
    root = by_check["crash-reservation"]
    assert root.title == "kdump: no crash kernel memory reserved"
    loaded = by_check["crash-loaded"]
    assert loaded.consequence_of is not None and loaded.consequence_of.title == root.title
    assert loaded.title == "kdump: Crash kernel loaded: blocked (no memory is reserved for a crash kernel)"
