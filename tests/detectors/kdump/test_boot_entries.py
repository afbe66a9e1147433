"""Every entry the boot loader offers is judged, not the default alone (the last review: a grub.cfg or BLS entry of
an older kernel without crashkernel= was never looked at: booted from the menu, or made the default by grubby
--set-default, it reserves nothing).  The default decides the verdict; the others are grouped by state."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from detectors.kdump.plan import make_plan
from detectors.kdump.sysctl_rules import policy_named
from forensics.model import Severity
from forensics.types.kdump import Status
from tests.collectors.kdump.roots import OS_RELEASE, RELEASE, SCENARIOS, grub_cfg
from tests.detectors.kdump.lines import check_root, line_of
from tests.helpers import assert_evidence_resolves

_OLD = "6.1.0-17-amd64"


def _older_debian_kernel(root: Path) -> None:
    """grub.cfg after a kernel update, written before crashkernel= was configured for the older kernel's entries:
    the current kernel's entries (with it), then the older kernel's two (without it), as update-grub nests them."""
    current = grub_cfg(RELEASE["debian12"], OS_RELEASE["debian12"], "384M-:128M")
    older = grub_cfg(_OLD, OS_RELEASE["debian12"], None)
    submenu = older[older.index("\tmenuentry") : older.index("}\n### END")]
    text = current.replace("}\n### END /etc/grub.d/10_linux", submenu + "}\n### END /etc/grub.d/10_linux")
    (root / "boot/grub/grub.cfg").write_text(text)


def test_an_older_grub_entry_without_crashkernel_is_a_low_warning_citing_it(tmp_path: Path) -> None:
    state, checklist = check_root(tmp_path, replace(SCENARIOS["debian12-ready"], extra=_older_debian_kernel))
    assert line_of(checklist, "crashkernel-generated").status is Status.PASS  # the default decides
    line = line_of(checklist, "crashkernel-entries:none")
    assert (line.status, line.severity) == (Status.WARN, Severity.LOW)
    text = (Path(state.root) / "boot/grub/grub.cfg").read_text().splitlines()
    number = next(n for n, ln in enumerate(text, 1) if f"vmlinuz-{_OLD}" in ln and "single" not in ln)
    assert "1 entry besides the default (/boot/grub/grub.cfg line 22, crashkernel=384M-:128M) boots without" in (
        line.detail
    )
    assert (
        f"/boot/grub/grub.cfg line {number} (Debian GNU/Linux 12 (bookworm), with Linux {_OLD}: no crashkernel=)"
        in line.detail
    )
    # Both recovery entries are left out, said so, not listed as faults.
    assert "2 recovery or rescue entries left out" in line.detail
    assert "recovery mode" not in line.detail
    assert line.fix.startswith("update-grub (grub-mkconfig -o /boot/grub/grub.cfg) (every entry gets crashkernel=")
    assert [e.locator.start for e in line.evidence] == [number]
    assert checklist.ready  # low: the verdict stays the default entry's
    from detectors.kdump.findings import checklist_findings

    assert_evidence_resolves(checklist_findings(checklist, state))


_RHEL = RELEASE["rhel9"]


def _bls_entries(*entries: tuple[str, str]) -> Callable[[Path], None]:
    """Older BLS entries beside the running kernel's: (release, crashkernel= or "")."""

    def write(root: Path) -> None:
        for rel, value in entries:
            ck = f" crashkernel={value}" if value else ""
            (root / f"boot/loader/entries/0123456789abcdef-{rel}.conf").write_text(
                f"title Red Hat Enterprise Linux ({rel}) 9.4\nversion {rel}\nlinux /vmlinuz-{rel}\n"
                f"initrd /initramfs-{rel}.img\noptions root=UUID=6c3b5f1e-0d4a-4c55-9a2f-1b2c3d4e5f60 ro{ck}\n"
            )
        (root / "boot/loader/entries/0123456789abcdef-0-rescue.conf").write_text(
            "title Red Hat Enterprise Linux (0-rescue-0123456789abcdef) 9.4\nversion 0-rescue-0123456789abcdef\n"
            "linux /vmlinuz-0-rescue-0123456789abcdef\noptions root=UUID=6c3b5f1e-0d4a-4c55-9a2f-1b2c3d4e5f60 ro\n"
        )

    return write


def test_bls_entries_are_grouped_by_state(tmp_path: Path) -> None:
    extra = _bls_entries(
        ("5.14.0-362.8.1.el9_3.x86_64", ""),
        ("5.14.0-284.11.1.el9_2.x86_64", ""),
        ("5.14.0-70.13.1.el9_0.x86_64", "512M"),
    )
    _, checklist = check_root(tmp_path, replace(SCENARIOS["rhel9-ready"], extra=extra))
    assert line_of(checklist, "crashkernel-generated").status is Status.PASS
    none = line_of(checklist, "crashkernel-entries:none")
    assert none.detail.startswith("2 entries besides the default (/boot/loader/entries/0123456789abcdef-")
    assert "0123456789abcdef-5.14.0-284.11.1.el9_2.x86_64.conf line 5 (Red Hat Enterprise Linux" in none.detail
    assert ", /boot/loader/entries/0123456789abcdef-5.14.0-362.8.1.el9_3.x86_64.conf line 5" in none.detail
    assert "1 recovery or rescue entry left out (booted to repair the system, not to run it)" in none.detail
    assert none.fix.startswith("grubby --update-kernel=ALL --args=crashkernel=1G-4G:192M,4G-64G:256M,64G-:512M")
    other = line_of(checklist, "crashkernel-entries:other")
    assert (other.status, other.severity) == (Status.WARN, Severity.INFO)
    assert "5.14.0-70.13.1.el9_0.x86_64.conf line 5 (Red Hat Enterprise Linux" in other.detail
    assert other.detail.endswith(": crashkernel=512M)")
    assert "rescue" not in other.detail  # said once, on the first line


def test_entries_that_agree_are_one_pass(tmp_path: Path) -> None:
    extra = _bls_entries(("5.14.0-362.8.1.el9_3.x86_64", "1G-4G:192M,4G-64G:256M,64G-:512M"))
    _, checklist = check_root(tmp_path, replace(SCENARIOS["rhel9-ready"], extra=extra))
    assert not [ln for ln in checklist.lines if ln.id.startswith("crashkernel-entries")]
    generated = line_of(checklist, "crashkernel-generated")
    assert "; so does the 1 other entry the boot loader offers; 1 recovery or rescue entry left out" in generated.detail


def test_a_default_entry_at_fault_speaks_alone(tmp_path: Path) -> None:
    # The default without crashkernel=: its own lines fail, and their fix reaches every entry: no second line.
    extra = _bls_entries(("5.14.0-362.8.1.el9_3.x86_64", ""))
    system = replace(SCENARIOS["rhel9-no-crashkernel"], extra=extra)
    _, checklist = check_root(tmp_path, system)
    assert not [ln for ln in checklist.lines if ln.id.startswith("crashkernel-entries")]


def test_setup_gives_every_entry_the_value_without_a_reboot(tmp_path: Path) -> None:
    # check's fix for the other entries is a step setup plans: it said "Nothing to do" beside the WARN.
    extra = _bls_entries(("5.14.0-362.8.1.el9_3.x86_64", ""))
    state, checklist = check_root(tmp_path, replace(SCENARIOS["rhel9-ready"], extra=extra))
    plan = make_plan(state, checklist, policy_named("none"))
    argv = ("grubby", "--update-kernel=ALL", "--args=crashkernel=1G-4G:192M,4G-64G:256M,64G-:512M")
    assert argv in [c.argv for c in plan.commands]
    assert not plan.reboot_needed
    debian = replace(SCENARIOS["debian12-ready"], extra=_older_debian_kernel)
    state, checklist = check_root(tmp_path / "d", debian)
    assert ("update-grub",) in [c.argv for c in make_plan(state, checklist, policy_named("none")).commands]
    # Entries that agree: nothing to do.
    state, checklist = check_root(tmp_path / "r", SCENARIOS["rhel9-ready"])
    assert make_plan(state, checklist, policy_named("none")).commands == ()


def _prober_and_custom(root: Path) -> None:
    """grub.cfg with an os-prober entry (another installation) and one written by hand in 40_custom."""
    cfg = root / "boot/grub/grub.cfg"
    cfg.write_text(
        cfg.read_text()
        + "### BEGIN /etc/grub.d/30_os-prober ###\nmenuentry 'Fedora Linux 41 (on /dev/sdb2)' --class fedora {\n"
        "\tlinux /boot/vmlinuz-6.11.4-301.fc41.x86_64 root=/dev/sdb2 ro\n}\n### END /etc/grub.d/30_os-prober ###\n"
        "### BEGIN /etc/grub.d/40_custom ###\nmenuentry 'Debian, test kernel' {\n"
        "\tlinux /boot/vmlinuz-6.13.0-test root=UUID=6c3b5f1e-0d4a-4c55-9a2f-1b2c3d4e5f60 ro\n}\n"
        "### END /etc/grub.d/40_custom ###\n"
    )


def test_other_systems_are_left_out_and_hand_written_entries_edited_where_written(tmp_path: Path) -> None:
    state, checklist = check_root(tmp_path, replace(SCENARIOS["debian12-ready"], extra=_prober_and_custom))
    line = line_of(checklist, "crashkernel-entries:none")
    assert "(Debian, test kernel: no crashkernel=)" in line.detail
    assert "Fedora" not in line.detail
    assert "1 entry of other systems (os-prober) left out" in line.detail
    assert "an entry written by hand is given crashkernel=384M-:128M in /etc/grub.d/40_custom, then update-grub" in (
        line.fix
    )
    # update-grub would not change it: setup does not plan it (at every run, never converging).
    assert make_plan(state, checklist, policy_named("none")).commands == ()
