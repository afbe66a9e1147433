"""crashkernel= in /etc/default/grub(.d) is only an input of grub-mkconfig: what GRUB boots is grub.cfg.

Review 7 (A): after ``kdump setup --apply`` wrote grub.d/zz-kforensic-kdump.cfg on a tree without update-grub, the
check passed "crashkernel= in the boot configuration", setup said "Nothing to do" and "Reboot needed: ... this boot
reserved too little", and the reboot would have booted grub.cfg, still without crashkernel=.
"""

from __future__ import annotations

import datetime as dt
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
from tests.collectors.kdump.roots import RELEASE, SCENARIOS, FakeSystem, build
from tests.detectors.kdump.lines import DEBIAN_16G, check_root, line_of
from tests.helpers import assert_evidence_resolves

REGENERATE = "update-grub (grub-mkconfig -o /boot/grub/grub.cfg), then reboot"
#: The reviewer's /tmp/ue7/rd2 after setup --apply: grub.d has crashkernel=, grub.cfg and this boot do not.
STALE = replace(DEBIAN_16G, cmdline_crashkernel=None, boot_crashkernel="384M-:128M", grub_cfg="stale")


def _no_update_grub(root: Path) -> None:
    (root / "usr/sbin/update-grub").unlink()


def test_stale_grub_cfg_is_its_own_line_citing_both_files(tmp_path: Path) -> None:
    _, checklist = check_root(tmp_path, STALE)
    line = line_of(checklist, "crashkernel-generated")
    assert line.status is Status.WARN
    assert "/etc/default/grub.d/kdump-tools.cfg line 1 sets crashkernel=384M-:128M" in line.detail
    assert "/boot/grub/grub.cfg line 22" in line.detail
    assert line.fix == REGENERATE
    assert [e.source.rsplit("/", 1)[-1] for e in line.evidence] == ["kdump-tools.cfg", "grub.cfg"]
    # The command line's fix is the same step, not "setup --apply (adds crashkernel=)", which plans nothing more.
    cmdline = line_of(checklist, "crashkernel-cmdline")
    assert cmdline.status is Status.FAIL
    assert cmdline.fix == REGENERATE


def test_setup_runs_update_grub_and_names_the_real_reboot_cause(tmp_path: Path) -> None:
    state, checklist = check_root(tmp_path, STALE)
    plan = make_plan(state, checklist, policy_named("none"))
    assert ("update-grub",) in [c.argv for c in plan.commands]
    assert "reserved too little" not in plan.reboot_reason
    assert "no crashkernel= on this boot's command line" in plan.reboot_reason
    assert "/boot/grub/grub.cfg" in plan.reboot_reason


def test_setup_without_update_grub_says_regenerate_by_hand_not_nothing_to_do(tmp_path: Path) -> None:
    system = replace(STALE, extra=_no_update_grub)
    root = build(tmp_path / "root", system)
    text = render(KdumpSetupRenderer(), run_setup(root, policy_named("none"), apply=False), OutputFormat.TEXT)
    assert "Nothing to do" not in text
    assert f"manual: {REGENERATE}" in text


def test_setup_apply_then_setup_again_keeps_the_regenerate_step(tmp_path: Path) -> None:
    # The reviewer's loop: apply writes the grub.d snippet (no update-grub under the root to run), and every later
    # run still says grub.cfg must be regenerated.
    system = replace(STALE, boot_crashkernel=None, extra=_no_update_grub)
    root = build(tmp_path / "root", system)
    when = dt.datetime(2026, 1, 2, tzinfo=dt.UTC)
    first = run_setup(root, policy_named("none"), apply=True, statvfs=system.statvfs, now=when)
    assert [c.path for c in first.plan.changes] == ["/etc/default/grub.d/zz-kforensic-kdump.cfg"]
    assert first.plan.boot_steps == (REGENERATE,)
    again = run_setup(root, policy_named("none"), apply=True, statvfs=system.statvfs, now=when)
    assert again.plan.changes == ()
    assert again.plan.boot_steps == (REGENERATE,)
    text = render(KdumpSetupRenderer(), again, OutputFormat.TEXT)
    assert "Nothing to do" not in text
    assert "reserved too little" not in text


def test_regenerated_grub_cfg_passes_and_the_fix_is_a_reboot(tmp_path: Path) -> None:
    _, checklist = check_root(tmp_path, replace(STALE, grub_cfg="generated"))
    line = line_of(checklist, "crashkernel-generated")
    assert line.status is Status.PASS
    # The default entry, not the recovery entry (which has no crashkernel=, by design of grub-mkconfig).
    assert line.detail.startswith("/boot/grub/grub.cfg line 22 boots /boot/vmlinuz-")
    assert "crashkernel=384M-:128M" in line.detail
    cmdline = line_of(checklist, "crashkernel-cmdline")
    assert cmdline.fix.startswith("reboot: ")


def test_no_generated_config_is_unknown_not_pass(tmp_path: Path) -> None:
    _, checklist = check_root(tmp_path, replace(STALE, grub_cfg=None))
    line = line_of(checklist, "crashkernel-generated")
    assert line.status is Status.UNKNOWN
    assert line.detail.startswith("unknown (neither /boot/grub/grub.cfg nor /boot/grub2/grub.cfg")


def test_bls_entry_without_crashkernel_is_judged_with_grubby(tmp_path: Path) -> None:
    # RHEL: /etc/default/grub has crashkernel=, the BLS entry GRUB boots does not; grubby edits the entries.
    def grub_default(root: Path) -> None:
        (root / "etc/default/grub").write_text('GRUB_TIMEOUT=5\nGRUB_CMDLINE_LINUX="rhgb quiet crashkernel=256M"\n')

    system = FakeSystem(distro="rhel9", cmdline_crashkernel=None, boot_crashkernel=None, extra=grub_default)
    state, checklist = check_root(tmp_path, system)
    line = line_of(checklist, "crashkernel-generated")
    assert line.status is Status.WARN
    entry = f"/boot/loader/entries/0123456789abcdef-{RELEASE['rhel9']}.conf line 5"
    assert entry in line.detail
    assert line.fix == "grubby --update-kernel=ALL --args=crashkernel=256M, then reboot"
    plan = make_plan(state, checklist, policy_named("none"))
    assert ("grubby", "--update-kernel=ALL", "--args=crashkernel=256M") in [c.argv for c in plan.commands]


def test_unreadable_bls_entries_are_one_unknown_not_a_grub_cfg_read_too(tmp_path: Path) -> None:
    # /boot/loader/entries that cannot be listed (a link to itself: ELOOP, for root too; RHEL's mode 0700 for a user):
    # one unknown citing it, and grub.cfg (root-only there as well) not read for a second unreadable file.
    def looping(root: Path) -> None:
        entries = root / "boot/loader/entries"
        for entry in entries.iterdir():
            entry.unlink()
        entries.rmdir()
        entries.symlink_to("entries")
        (root / "boot/grub2").mkdir(parents=True)
        (root / "boot/grub2/grub.cfg").write_text("blscfg\n")

    system = FakeSystem(distro="rhel9", cmdline_crashkernel="256M", boot_crashkernel=None, extra=looping)

    def grub_default(root: Path) -> None:
        looping(root)
        (root / "etc/default/grub").write_text('GRUB_CMDLINE_LINUX="rhgb quiet crashkernel=256M"\n')

    state, checklist = check_root(tmp_path, replace(system, extra=grub_default))
    line = line_of(checklist, "crashkernel-generated")
    assert line.status is Status.UNKNOWN
    assert line.detail.startswith("unknown (cannot read /boot/loader/entries: ")
    assert [p.path for p in state.problems if p.path.startswith("/boot")] == ["/boot/loader/entries"]


def test_a_boot_that_reserves_with_a_stale_grub_cfg_plans_update_grub_without_reboot(tmp_path: Path) -> None:
    # crashkernel= given by hand at this boot, then put in grub.d, grub.cfg never regenerated: the next boot loses it.
    system = replace(STALE, cmdline_crashkernel="384M-:128M", crash_size=128 << 20, loaded=1)
    state, checklist = check_root(tmp_path, system)
    assert line_of(checklist, "crashkernel-generated").status is Status.WARN
    plan = make_plan(state, checklist, policy_named("none"))
    assert ("update-grub",) in [c.argv for c in plan.commands]
    assert not plan.reboot_needed
    without = make_plan(*check_root(tmp_path / "b", replace(system, extra=_no_update_grub)), policy_named("none"))
    assert without.boot_steps == ("update-grub (grub-mkconfig -o /boot/grub/grub.cfg)",)


_NEW = "5.14.0-503.11.1.el9_5.x86_64"


def _updated_kernel(saved: bool) -> Callable[[Path], None]:
    """A kernel update whose new BLS entry lacks crashkernel= (kernel-install copied a command line without it)."""

    def write(root: Path) -> None:
        (root / f"boot/loader/entries/0123456789abcdef-{_NEW}.conf").write_text(
            f"title Red Hat Enterprise Linux 9.5\nversion {_NEW}\nlinux /vmlinuz-{_NEW}\n"
            f"initrd /initramfs-{_NEW}.img\noptions root=UUID=6c3b5f1e-0d4a-4c55-9a2f-1b2c3d4e5f60 ro\n"
        )
        if saved:
            (root / "boot/grub2").mkdir(parents=True, exist_ok=True)
            (root / "boot/grub2/grubenv").write_text(f"# GRUB Environment Block\nsaved_entry=0123456789abcdef-{_NEW}\n")

    return write


@pytest.mark.parametrize("saved", [True, False])
def test_bls_judges_the_default_entry_not_the_running_kernels(tmp_path: Path, saved: bool) -> None:
    # Review 8 (2): the running release's entry had crashkernel=, the default (saved_entry, else the newest) had
    # none, and check was a PASS, setup "Nothing to do".
    _, checklist = check_root(tmp_path, replace(SCENARIOS["rhel9-ready"], extra=_updated_kernel(saved)))
    line = line_of(checklist, "crashkernel-generated")
    assert line.status is Status.WARN
    assert f"0123456789abcdef-{_NEW}.conf line 5, the entry the boot loader boots" in line.detail
    assert "grubby --update-kernel=ALL --args=crashkernel=" in line.fix


def _split_options(root: Path) -> None:
    entry = root / f"boot/loader/entries/0123456789abcdef-{RELEASE['rhel9']}.conf"
    entry.write_text(entry.read_text().replace(" ro crashkernel=", " ro\noptions crashkernel="))


def test_bls_options_over_several_lines_are_joined(tmp_path: Path) -> None:
    # Review 8 (7): line 6 "options crashkernel=..." was the boot configuration, line 5 "options root=... ro" the
    # generated entry "without crashkernel=: grubby did not update it" (one file said to have and lack it).
    _, checklist = check_root(tmp_path, replace(SCENARIOS["rhel9-ready"], extra=_split_options))
    line = line_of(checklist, "crashkernel-generated")
    assert line.status is Status.PASS
    assert f"0123456789abcdef-{RELEASE['rhel9']}.conf line 6 boots" in line.detail


def _rhel8_kernelopts(root: Path) -> None:
    release = "4.18.0-513.5.1.el8_9.x86_64"
    (root / "proc/sys/kernel/osrelease").write_text(f"{release}\n")
    entry = root / f"boot/loader/entries/0123456789abcdef-{RELEASE['rhel9']}.conf"
    entry.write_text(
        f"title Red Hat Enterprise Linux 8.9\nversion {release}\nlinux /vmlinuz-{release}\n"
        f"initrd /initramfs-{release}.img $tuned_initrd\noptions $kernelopts $tuned_params\n"
    )
    (root / "boot/grub2").mkdir(parents=True, exist_ok=True)
    (root / "boot/grub2/grubenv").write_text(
        "# GRUB Environment Block\nsaved_entry=0123456789abcdef-" + RELEASE["rhel9"] + "\n"
        "kernelopts=root=/dev/mapper/rhel-root ro crashkernel=auto rhgb quiet\nboot_success=0\n"
    )
    (root / "etc/default/grub").write_text('GRUB_TIMEOUT=5\nGRUB_CMDLINE_LINUX="crashkernel=auto rhgb quiet"\n')


def test_kernelopts_are_cited_where_grubenv_holds_them(tmp_path: Path) -> None:
    # Review 8 (14): the detail said "line 5 boots ... with crashkernel=auto" of "options $kernelopts $tuned_params",
    # and grubenv's kernelopts= line, where the value is, was not cited.
    system = replace(
        SCENARIOS["rhel9-ready"], cmdline_crashkernel="auto", boot_crashkernel=None, extra=_rhel8_kernelopts
    )
    state, checklist = check_root(tmp_path, system)
    line = line_of(checklist, "crashkernel-generated")
    assert line.status is Status.PASS
    assert "line 5 ($kernelopts from /boot/grub2/grubenv line 3) boots" in line.detail
    cited = [(e.source.rsplit("/", 1)[-1], e.locator.start, e.excerpt) for e in line.evidence]
    assert ("grubenv", 3, "crashkernel=auto") in cited
    assert_evidence_resolves(checklist_findings(checklist, state))


def test_stale_grub_cfg_on_a_boot_that_reserves_needs_no_reboot(tmp_path: Path) -> None:
    # Review 8 (15): check's fix ended "then reboot", setup (rightly) planned update-grub without one.
    state, checklist = check_root(tmp_path, replace(SCENARIOS["debian12-ready"], grub_cfg="stale"))
    assert line_of(checklist, "crash-reservation").status is Status.PASS
    line = line_of(checklist, "crashkernel-generated")
    assert line.status is Status.WARN
    assert line.fix == "update-grub (grub-mkconfig -o /boot/grub/grub.cfg)"
    plan = make_plan(state, checklist, policy_named("none"))
    assert ("update-grub",) in [c.argv for c in plan.commands]
    assert plan.reboot_reason == ""


def _systemd_boot(crashkernel: bool) -> Callable[[Path], None]:
    """No GRUB: /etc/kernel/cmdline (kernel-install's) sets crashkernel=; systemd-boot's entry is on the ESP."""

    def write(root: Path) -> None:
        rel = RELEASE["debian12"]
        (root / "etc/kernel").mkdir(parents=True, exist_ok=True)
        (root / "etc/kernel/cmdline").write_text("root=UUID=x ro quiet crashkernel=384M-:128M\n")
        (root / "boot/efi/loader/entries").mkdir(parents=True, exist_ok=True)
        options = "root=UUID=x ro quiet" + (" crashkernel=384M-:128M" if crashkernel else "")
        (root / f"boot/efi/loader/entries/abc-{rel}.conf").write_text(
            f"title Debian\nversion {rel}\nlinux /abc/{rel}/linux\noptions {options}\n"
        )

    return write


@pytest.mark.parametrize("crashkernel", [True, False])
def test_kernel_cmdline_is_carried_by_kernel_install_to_the_esp(tmp_path: Path, crashkernel: bool) -> None:
    # Review 8 (8): the entries on the ESP were never read (UNKNOWN) and the fix was update-grub, with no GRUB.
    system = replace(SCENARIOS["debian12-ready"], boot_loader=False, extra=_systemd_boot(crashkernel))
    state, checklist = check_root(tmp_path, system)
    line = line_of(checklist, "crashkernel-generated")
    assert f"/boot/efi/loader/entries/abc-{RELEASE['debian12']}.conf line 4" in line.detail
    assert line.status is (Status.PASS if crashkernel else Status.WARN)
    if not crashkernel:
        assert line.fix == f"kernel-install add {RELEASE['debian12']} /boot/vmlinuz-{RELEASE['debian12']}"
        plan = make_plan(state, checklist, policy_named("none"))
        assert all("update-grub" not in step for step in plan.boot_steps)
        assert ("update-grub",) not in [c.argv for c in plan.commands]
