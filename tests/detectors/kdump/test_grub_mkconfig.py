"""grub.cfg systems without BLS (RHEL 7, Fedora < 30, Arch, SUSE): the regeneration is a step of setup --apply
(grub2-mkconfig or grub-mkconfig -o the grub.cfg read, a copy of it kept first), not a step by hand at every run;
by hand only where it must be (no program, no grub.cfg read, or an ESP grub.cfg with entries of its own)."""

from __future__ import annotations

import datetime as dt
import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from collectors.kdump.apply import back_up
from detectors.kdump.plan import make_plan
from detectors.kdump.sysctl_rules import policy_named
from forensics.pipelines.kdump import collect_check
from forensics.report import OutputFormat
from forensics.report.formats import render
from forensics.report.kdump import KdumpSetupRenderer
from forensics.types.kdump import Command, Status
from forensics.types.results import KdumpSetup
from tests.collectors.kdump.roots import RELEASE, SCENARIOS, FakeSystem
from tests.detectors.kdump.lines import check_root, line_of

_CFG = "/boot/grub2/grub.cfg"


def _grub_cfg_tree(
    *, program: str | None = "grub2-mkconfig", esp: bool = False, cfg: str = _CFG
) -> Callable[[Path], None]:
    """RHEL without BLS (RHEL 7's layout): crashkernel= in /etc/default/grub, a grub.cfg generated before it."""

    def write(root: Path) -> None:
        rel = RELEASE["rhel9"]
        shutil.rmtree(root / "boot/loader", ignore_errors=True)
        (root / "etc/default").mkdir(parents=True, exist_ok=True)
        (root / "etc/default/grub").write_text('GRUB_TIMEOUT=5\nGRUB_CMDLINE_LINUX="rhgb quiet crashkernel=256M"\n')
        target = root / cfg.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        entry = (
            f"menuentry 'Red Hat Enterprise Linux ({rel})' --class red {{\n"
            f"\tlinux16 /vmlinuz-{rel} root=/dev/mapper/rhel-root ro rhgb quiet\n\tinitrd16 /initramfs-{rel}.img\n}}\n"
        )
        target.write_text("### BEGIN /etc/grub.d/10_linux ###\n" + entry + "### END /etc/grub.d/10_linux ###\n")
        if esp:
            (root / "boot/efi/EFI/redhat").mkdir(parents=True)
            (root / "boot/efi/EFI/redhat/grub.cfg").write_text(entry.replace("linux16", "linuxefi"))
        (root / "usr/sbin/grubby").unlink(missing_ok=True)
        if program:
            (root / "usr/sbin").mkdir(parents=True, exist_ok=True)
            (root / f"usr/sbin/{program}").write_text("#!/bin/sh\n")

    return write


_RHEL7ISH = replace(SCENARIOS["rhel9-no-crashkernel"], service_enabled=True)


def test_grub2_mkconfig_is_a_command_with_a_backup(tmp_path: Path) -> None:
    state, checklist = check_root(tmp_path, replace(_RHEL7ISH, extra=_grub_cfg_tree()))
    generated = line_of(checklist, "crashkernel-generated")
    assert generated.status is Status.WARN
    assert generated.fix == f"grub2-mkconfig -o {_CFG}, then reboot"
    plan = make_plan(state, checklist, policy_named("none"))
    assert Command(("grub2-mkconfig", "-o", _CFG), f"carry crashkernel=256M into {_CFG}", (_CFG,)) in plan.commands
    assert plan.boot_steps == ()  # was "manual: grub2-mkconfig -o /boot/grub2/grub.cfg, then reboot" at every run
    text = render(KdumpSetupRenderer(), KdumpSetup(collect_check(Path(state.root)), plan, None, ()), OutputFormat.TEXT)
    assert (
        f"grub2-mkconfig -o {_CFG}    # carry crashkernel=256M into {_CFG} [planned, a copy of {_CFG} kept first]"
        in text
    )


@pytest.mark.parametrize(
    ("extra", "step"),
    [
        # No program under the root: by hand.
        (_grub_cfg_tree(program=None), f"grub2-mkconfig -o {_CFG}, then reboot"),
        # An ESP grub.cfg with entries (a UEFI RHEL 7): which one boots is not read.
        (_grub_cfg_tree(esp=True), f"grub2-mkconfig -o {_CFG} (or -o /boot/efi/EFI/redhat/grub.cfg: a UEFI boot"),
    ],
)
def test_grub2_mkconfig_stays_by_hand_where_it_must(tmp_path: Path, extra: Callable[[Path], None], step: str) -> None:
    state, checklist = check_root(tmp_path, replace(_RHEL7ISH, extra=extra))
    plan = make_plan(state, checklist, policy_named("none"))
    assert not any("mkconfig" in c.argv[0] for c in plan.commands)
    assert len(plan.boot_steps) == 1
    assert plan.boot_steps[0].startswith(step)


def test_arch_regenerates_with_grub_mkconfig_not_update_grub(tmp_path: Path) -> None:
    system = FakeSystem(
        distro="arch",
        tooling=False,
        systemd=False,
        service_enabled=False,
        cmdline_crashkernel="256M",
        crash_size=256 << 20,
        extra=_grub_cfg_tree(program="grub-mkconfig", cfg="/boot/grub/grub.cfg"),
    )
    state, checklist = check_root(tmp_path, system)
    line = line_of(checklist, "crashkernel-generated")
    assert line.fix == "grub-mkconfig -o /boot/grub/grub.cfg"  # was "update-grub (grub-mkconfig -o ...)"
    plan = make_plan(state, checklist, policy_named("none"))
    assert ("grub-mkconfig", "-o", "/boot/grub/grub.cfg") in [c.argv for c in plan.commands]


def test_the_copy_is_made_before_the_command(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "boot/grub2").mkdir(parents=True)
    (root / "boot/grub2/grub.cfg").write_text("menuentry 'x' {\n}\n")
    when = dt.datetime(2026, 12, 7, 8, 0, tzinfo=dt.UTC)
    (done,) = back_up((_CFG, "/boot/grub/grub.cfg"), root, when)  # the absent one: nothing to keep
    assert done.path == _CFG
    assert done.backup == str(root / "boot/grub2/grub.cfg.kforensic-20261207T080000Z.bak")
    assert Path(done.backup).read_text() == "menuentry 'x' {\n}\n"


_ESP = "/boot/efi/EFI/redhat/grub.cfg"


def _uefi_tree(*, bios_cfg: bool, firmware: str | None, esp_crashkernel: bool) -> Callable[[Path], None]:
    """A UEFI RHEL 7 (grub2-efi): GRUB reads the ESP's EFI/redhat/grub.cfg, written by ``grub2-mkconfig -o`` it;
    /boot/grub2/grub.cfg is absent (``bios_cfg``: a BIOS one left beside it, generated before crashkernel= was set).
    ``firmware``: "efi" (/sys/firmware/efi, a UEFI boot), "bios" (/sys/firmware without efi), None (no /sys/firmware:
    not known)."""

    def write(root: Path) -> None:
        _grub_cfg_tree(esp=False)(root)
        rel = RELEASE["rhel9"]
        if not bios_cfg:
            (root / _CFG.lstrip("/")).unlink()
        ck = " crashkernel=256M" if esp_crashkernel else ""
        esp = root / _ESP.lstrip("/")
        esp.parent.mkdir(parents=True)
        esp.write_text(
            "### BEGIN /etc/grub.d/10_linux ###\n"
            f"menuentry 'Red Hat Enterprise Linux Server ({rel}) 7.9 (Maipo)' --class red {{\n"
            f"\tlinuxefi /vmlinuz-{rel} root=/dev/mapper/rhel-root ro{ck} rhgb quiet LANG=en_US.UTF-8\n"
            f"\tinitrdefi /initramfs-{rel}.img\n}}\n### END /etc/grub.d/10_linux ###\n"
        )
        if firmware is not None:
            (root / "sys/firmware").mkdir(parents=True)
        if firmware == "efi":
            (root / "sys/firmware/efi/efivars").mkdir(parents=True)

    return write


def test_a_uefi_rhel7_is_judged_on_the_esp_grub_cfg_it_boots(tmp_path: Path) -> None:
    """A UEFI RHEL 7 has no /boot/grub2/grub.cfg: GRUB reads /boot/efi/EFI/redhat/grub.cfg.  The check read
    /boot/grub2/grub.cfg alone: "unknown (neither /boot/grub/grub.cfg nor /boot/grub2/grub.cfg nor
    /boot/loader/entries/*.conf exist)", and the step by hand named /boot/grub2/grub.cfg, not the file that boots.
    Now the ESP's grub.cfg is read, judged, cited, and regenerated (a command of setup, its copy kept)."""
    for firmware in (None, "efi"):
        system = replace(_RHEL7ISH, extra=_uefi_tree(bios_cfg=False, firmware=firmware, esp_crashkernel=False))
        state, checklist = check_root(tmp_path / str(firmware), system)
        line = line_of(checklist, "crashkernel-generated")
        assert line.status is Status.WARN, (firmware, line.detail)
        assert f"{_ESP} line 3" in line.detail and "has no crashkernel=" in line.detail, line.detail
        assert line.evidence[-1].source.endswith(_ESP) and line.evidence[-1].locator.start == 3
        assert line.fix == f"grub2-mkconfig -o {_ESP}, then reboot", line.fix
        plan = make_plan(state, checklist, policy_named("none"))
        assert ("grub2-mkconfig", "-o", _ESP) in [c.argv for c in plan.commands]
        assert plan.boot_steps == ()
    # Regenerated: what boots has it.
    system = replace(_RHEL7ISH, extra=_uefi_tree(bios_cfg=False, firmware=None, esp_crashkernel=True))
    _state, checklist = check_root(tmp_path / "regenerated", system)
    line = line_of(checklist, "crashkernel-generated")
    assert line.status is Status.PASS and line.detail.startswith(f"{_ESP} line 3 boots "), line.detail


@pytest.mark.parametrize(
    ("firmware", "judged", "step"),
    [
        # /sys/firmware/efi: a UEFI boot reads the ESP's grub.cfg (it has crashkernel=), the BIOS one is moot.
        ("efi", _ESP, None),
        # /sys/firmware without efi: a BIOS boot reads /boot/grub2/grub.cfg (without it): regenerated by setup.
        ("bios", _CFG, f"grub2-mkconfig -o {_CFG}"),
        # Neither known: /boot/grub2/grub.cfg judged, both named, by hand (as before).
        (None, _CFG, f"grub2-mkconfig -o {_CFG} (or -o {_ESP}: a UEFI boot"),
    ],
)
def test_both_grub_cfgs_are_told_apart_by_the_firmware(
    tmp_path: Path, firmware: str | None, judged: str, step: str | None
) -> None:
    system = replace(_RHEL7ISH, extra=_uefi_tree(bios_cfg=True, firmware=firmware, esp_crashkernel=True))
    state, checklist = check_root(tmp_path, system)
    line = line_of(checklist, "crashkernel-generated")
    assert line.detail.startswith(judged) or f"but {judged} line" in line.detail, line.detail
    assert state.boot.uefi is {"efi": True, "bios": False, None: None}[firmware]
    plan = make_plan(state, checklist, policy_named("none"))
    if step is None:
        assert line.status is Status.PASS
        assert not any("mkconfig" in c.argv[0] for c in plan.commands) and plan.boot_steps == ()
    elif firmware == "bios":
        assert line.status is Status.WARN and line.fix.startswith(step) and "(or -o" not in line.fix, line.fix
        assert ("grub2-mkconfig", "-o", _CFG) in [c.argv for c in plan.commands]
    else:
        assert line.status is Status.WARN and plan.boot_steps[0].startswith(step), plan.boot_steps
