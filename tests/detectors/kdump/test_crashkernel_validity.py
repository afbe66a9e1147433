"""One validity rule for crashkernel= wherever it is read: the command line, the boot configuration, the generated
boot entry, and the reservation's detail.  Review 7 (J): crashkernel=auto was a FAIL on the command line ("upstream
and RHEL 9 kernels reserve nothing") but a PASS in the boot configuration that keeps booting it, and the reservation
line guessed "too large for free low memory?"."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from detectors.kdump.plan import make_plan
from detectors.kdump.sysctl_rules import policy_named
from forensics.types.kdump import Status
from tests.collectors.kdump.roots import RELEASE, SCENARIOS
from tests.detectors.kdump.lines import DEBIAN_16G, check_root, line_of

#: The reviewer's /tmp/ue7/rd3: crashkernel=auto on the command line, in grub.d/kdump-tools.cfg and in grub.cfg.
AUTO = replace(DEBIAN_16G, cmdline_crashkernel="auto", boot_crashkernel="auto")


def test_auto_fails_in_the_boot_configuration_as_on_the_command_line(tmp_path: Path) -> None:
    _, checklist = check_root(tmp_path, AUTO)
    assert line_of(checklist, "crashkernel-cmdline").status is Status.FAIL
    boot = line_of(checklist, "crashkernel-boot")
    assert boot.status is Status.FAIL
    # Review 8 (20): the why was a missing persistence's ("a crashkernel= set only by hand is lost ...").
    assert "set only by hand" not in boot.why
    assert boot.why.startswith("the crash kernel can only boot into memory reserved at boot with crashkernel=")
    assert boot.detail.startswith("/etc/default/grub.d/kdump-tools.cfg line 1 sets crashkernel=auto, which")
    assert "RHEL 7/8" in boot.detail
    assert "kforensic kdump setup --apply" in boot.fix
    # Whether grub.cfg has it too is moot (it reserves nothing either way): one line, not a second fault.
    assert [line for line in checklist.lines if line.id == "crashkernel-generated"] == []


def test_the_reservation_names_the_command_lines_cause(tmp_path: Path) -> None:
    _, checklist = check_root(tmp_path, AUTO)
    line = line_of(checklist, "crash-reservation")
    assert "too large" not in line.detail
    assert "crashkernel=auto on this boot's command line reserves nothing: crashkernel=auto is a RHEL 7/8" in (
        line.detail
    )


@pytest.mark.parametrize("value", ["2G-4G:256M", "128Q"])
def test_a_value_that_reserves_nothing_here_is_no_pass(tmp_path: Path, value: str) -> None:
    # 2G-4G:256M has no range for 16 GiB; 128Q is malformed: the same words as on the command line.
    _, checklist = check_root(tmp_path, replace(AUTO, cmdline_crashkernel=value, boot_crashkernel=value))
    boot = line_of(checklist, "crashkernel-boot")
    cmdline = line_of(checklist, "crashkernel-cmdline")
    assert boot.status is Status.FAIL
    assert cmdline.detail.removeprefix(f"crashkernel={value}") in boot.detail


def test_grub_cfg_still_booting_auto_under_an_override_is_stale(tmp_path: Path) -> None:
    # setup's override (zz-kforensic-kdump.cfg) is in grub.d, grub.cfg was generated before it: it boots auto.
    def override(root: Path) -> None:
        (root / "etc/default/grub.d/zz-kforensic-kdump.cfg").write_text(
            'GRUB_CMDLINE_LINUX_DEFAULT="$GRUB_CMDLINE_LINUX_DEFAULT crashkernel=384M-:128M"\n'
        )

    _, checklist = check_root(tmp_path, replace(AUTO, extra=override))
    assert line_of(checklist, "crashkernel-boot").status is Status.PASS
    generated = line_of(checklist, "crashkernel-generated")
    assert generated.status is Status.WARN
    assert "has crashkernel=auto: it was not regenerated since" in generated.detail


@pytest.mark.parametrize(
    ("release", "status"),
    [
        ("4.18.0-513.5.1.el8_9.x86_64", Status.PASS),
        ("3.10.0-1160.119.1.el7.x86_64", Status.PASS),
        (RELEASE["rhel9"], Status.FAIL),
        # Review 8 (1): ELRepo's mainline kernel-ml carries the .el8 tag and ignores auto.
        ("6.6.8-1.el8.elrepo.x86_64", Status.FAIL),
        ("5.4.262-1.el7.elrepo.x86_64", Status.FAIL),
    ],
)
def test_auto_is_valid_on_the_rhel_7_8_kernels_that_size_it(tmp_path: Path, release: str, status: Status) -> None:
    # The same rule, with the kernel it is judged for: a RHEL 8 kernel reserves for crashkernel=auto, RHEL 9 does not.
    def osrelease(root: Path) -> None:
        (root / "proc/sys/kernel/osrelease").write_text(f"{release}\n")

    system = replace(SCENARIOS["rhel9-ready"], cmdline_crashkernel="auto", boot_crashkernel="auto", extra=osrelease)
    _, checklist = check_root(tmp_path, system)
    assert line_of(checklist, "crashkernel-cmdline").status is status
    assert line_of(checklist, "crashkernel-boot").status is status


def test_setup_keeps_auto_where_check_passes_it(tmp_path: Path) -> None:
    # Review 8 (3): a working RHEL 8 (auto, 256 MiB reserved, loaded) was all PASS in check, and setup planned a
    # grubby rewrite to the RHEL 9 ranges with "Reboot needed".
    def osrelease(root: Path) -> None:
        (root / "proc/sys/kernel/osrelease").write_text("4.18.0-513.5.1.el8_9.x86_64\n")

    system = replace(SCENARIOS["rhel9-ready"], cmdline_crashkernel="auto", boot_crashkernel="auto", extra=osrelease)
    state, checklist = check_root(tmp_path, system)
    assert line_of(checklist, "crash-reservation").status is Status.PASS
    plan = make_plan(state, checklist, policy_named("none"))
    assert not plan.commands
    assert plan.reboot_reason == ""


def test_auto_below_its_ram_threshold_reserves_nothing(tmp_path: Path) -> None:
    # Review 8 (9): RHEL 7 at 1.5 GiB: auto was "sized by this kernel itself", the empty reservation "could not place
    # it", the fix ",high (placed above 4 GiB)" on a machine without memory there; setup planned grubby.
    def rhel7(root: Path) -> None:
        (root / "proc/sys/kernel/osrelease").write_text("3.10.0-1160.119.1.el7.x86_64\n")

    system = replace(
        SCENARIOS["rhel9-ready"], ram=1536 << 20, cmdline_crashkernel="auto", boot_crashkernel="auto", extra=rhel7
    )
    state, checklist = check_root(tmp_path, system)
    cmdline = line_of(checklist, "crashkernel-cmdline")
    assert cmdline.status is Status.FAIL
    assert "reserves nothing below 2 GiB of RAM" in cmdline.detail
    reservation = line_of(checklist, "crash-reservation")
    assert "could not place it" not in reservation.detail
    assert ",high" not in reservation.fix
    plan = make_plan(state, checklist, policy_named("none"))
    assert "kdump setup --apply" in cmdline.fix
    assert any(c.argv[0] == "grubby" for c in plan.commands)
