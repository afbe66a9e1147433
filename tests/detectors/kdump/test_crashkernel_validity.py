"""One validity rule for crashkernel= wherever it is read: the command line, the boot configuration, the generated
boot entry, and the reservation's detail.  Review 7 (J): crashkernel=auto was a FAIL on the command line ("upstream
and RHEL 9 kernels reserve nothing") but a PASS in the boot configuration that keeps booting it, and the reservation
line guessed "too large for free low memory?"."""

from __future__ import annotations

from collections.abc import Callable
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


def _no_release(root: Path) -> None:
    # /proc/sys/kernel/osrelease that cannot be read (a directory: EISDIR, for root too).
    path = root / "proc/sys/kernel/osrelease"
    path.unlink()
    path.mkdir()


@pytest.mark.parametrize("reserved", [0, 256 << 20])
def test_auto_on_a_kernel_whose_release_was_not_read_is_unknown(tmp_path: Path, reserved: int) -> None:
    # The last review: crashkernel=auto with the release unread was a FAIL ("upstream and RHEL 9 kernels reserve
    # nothing"), although a RHEL 7/8 kernel sizes it: what this boot reserved decides, else it is unknown.
    system = replace(
        SCENARIOS["rhel9-ready"],
        cmdline_crashkernel="auto",
        boot_crashkernel="auto",
        crash_size=reserved,
        extra=_no_release,
    )
    state, checklist = check_root(tmp_path, system)
    cmdline = line_of(checklist, "crashkernel-cmdline")
    boot = line_of(checklist, "crashkernel-boot")
    if reserved:
        assert cmdline.status is Status.PASS
        assert cmdline.detail == "crashkernel=auto (256 MiB reserved at this boot: the kernel sized it)"
        assert boot.status is Status.PASS
        return
    assert cmdline.status is Status.UNKNOWN
    assert cmdline.kernel_side
    assert cmdline.detail == (
        "unknown (whether this kernel sizes crashkernel=auto is not known: the running kernel's release was not read)"
    )
    assert "uname -r" in cmdline.fix
    assert "4.18.0-*.el8" in cmdline.fix
    assert boot.status is Status.UNKNOWN
    assert boot.detail.startswith("unknown (/boot/loader/entries/")
    reservation = line_of(checklist, "crash-reservation")
    assert reservation.status is Status.FAIL  # nothing reserved is read, whatever the cause
    assert "may be why (whether this kernel sizes crashkernel=auto is not known" in reservation.detail
    assert "could not place it" not in reservation.detail
    assert not checklist.ready
    # setup replaces a value not known to reserve by an explicit one (it would keep it where this boot reserves).
    plan = make_plan(state, checklist, policy_named("none"))
    assert any(c.argv[0] == "grubby" and "auto" not in c.argv[-1] for c in plan.commands)


def _vm_1g(release: str, arch: str = "x86_64") -> Callable[[Path], None]:
    """A 1 GiB VM: /proc/iomem's System RAM is a little under 1 GiB (the first page, the 640K-1M hole)."""

    def write(root: Path) -> None:
        (root / "proc/sys/kernel/osrelease").write_text(f"{release}\n")
        (root / "proc/sys/kernel/arch").write_text(f"{arch}\n")
        (root / "proc/iomem").write_text(
            "00000000-00000fff : Reserved\n00001000-0009fbff : System RAM\n00100000-3ffdffff : System RAM\n"
        )

    return write


_RHEL8 = "4.18.0-513.5.1.el8_9.x86_64"


@pytest.mark.parametrize(
    ("arch", "reserved", "status"),
    [
        # RHEL 8 x86_64 from 1 GiB: 1023.5 MiB read, which the kernel rounds up to 1 GiB: was FAIL "reserves nothing
        # below 1 GiB".
        ("x86_64", 0, Status.UNKNOWN),
        ("x86_64", 160 << 20, Status.PASS),
        # s390x: 4 GiB in RHEL 8.1's kernel, 1 GiB in CentOS Stream 8's: was FAIL "below 4 GiB".
        ("s390x", 0, Status.UNKNOWN),
        # aarch64 from 2 GiB in every source: well below it, a FAIL still.
        ("aarch64", 0, Status.FAIL),
    ],
)
def test_auto_at_its_uncertain_ram_threshold_is_unknown(
    tmp_path: Path, arch: str, reserved: int, status: Status
) -> None:
    system = replace(
        SCENARIOS["rhel9-ready"],
        ram=1 << 30,
        cmdline_crashkernel="auto",
        boot_crashkernel="auto",
        crash_size=reserved,
        extra=_vm_1g(_RHEL8.replace("x86_64", arch), arch),
    )
    _, checklist = check_root(tmp_path, system)
    cmdline = line_of(checklist, "crashkernel-cmdline")
    assert cmdline.status is status
    if status is Status.UNKNOWN:
        assert "this machine has 1023 MiB" in cmdline.detail
        assert ("1 GiB or 4 GiB" if arch == "s390x" else "rounds the RAM up to 128 MiB") in cmdline.detail
        assert "dmesg | grep -i crashkernel" in cmdline.fix
    if status is Status.FAIL:
        assert "reserves nothing below 2 GiB of RAM, and this machine has 1023 MiB" in cmdline.detail


def test_auto_on_an_oracle_uek_kernel_is_unknown_not_a_mainline_rebuild(tmp_path: Path) -> None:
    # UEK took crashkernel=auto from RHEL 7 with its own table: it was "carries an EL 7/8 tag but is not Red Hat's
    # 3.10.0/4.18.0 kernel (a mainline rebuild)", a FAIL.
    def uek(root: Path) -> None:
        (root / "proc/sys/kernel/osrelease").write_text("5.4.17-2136.307.3.1.el8uek.x86_64\n")

    system = replace(SCENARIOS["rhel9-ready"], cmdline_crashkernel="auto", boot_crashkernel="auto", extra=uek)
    _, checklist = check_root(tmp_path, system)
    cmdline = line_of(checklist, "crashkernel-cmdline")
    assert cmdline.status is Status.PASS  # 256 MiB reserved at this boot
    _, unreserved = check_root(tmp_path / "b", replace(system, crash_size=0))
    line = line_of(unreserved, "crashkernel-cmdline")
    assert line.status is Status.UNKNOWN
    assert "Oracle UEK kernel" in line.detail
