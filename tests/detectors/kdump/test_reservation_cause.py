"""Nothing reserved although the command line has a crashkernel= that should reserve memory: the kernel could not
place it.  Review 7 (B): the fix was "kdump setup --apply (adds crashkernel= ...), then reboot" and setup then
planned nothing ("Reboot needed: ... reserved too little"): a loop back to the same failing command line."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from detectors.kdump.findings import checklist_findings
from detectors.kdump.plan import make_plan
from detectors.kdump.sysctl_rules import policy_named
from forensics.pipelines.kdump import run_setup
from forensics.report import OutputFormat
from forensics.report.formats import render
from forensics.report.kdump import KdumpSetupRenderer
from forensics.types.kdump import Status
from tests.collectors.kdump.roots import RELEASE, build
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
