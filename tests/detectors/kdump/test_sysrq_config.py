"""kernel.sysrq against the kernel's build configuration, and the one list of kernel options kdump needs.

Review 7 (C): on a kernel built with ``# CONFIG_MAGIC_SYSRQ is not set`` (in the /proc/config.gz the check had read
for its KEXEC lines) kernel.sysrq was "unknown (... a kernel built without the option, or no /proc under the root)",
its fix "sysctl kernel.sysrq=1" (no file to write), its why said root could still write /proc/sysrq-trigger (absent
then; kdump test writes it), and check and setup named three different lists of kernel options.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from detectors.kdump.kernel_rules import REQUIRED_OPTIONS, required_options_text
from detectors.kdump.plan import make_plan
from detectors.kdump.sysctl_rules import policy_named
from forensics.types.kdump import Status
from tests.collectors.kdump.roots import RELEASE, SCENARIOS, kernel_config
from tests.detectors.kdump.lines import check_root, line_of


def _no_magic_sysrq(kexec: bool) -> Callable[[Path], None]:
    def extra(root: Path) -> None:
        text = kernel_config(RELEASE["debian12"], kexec=kexec) + "# CONFIG_MAGIC_SYSRQ is not set\n"
        (root / "proc/config.gz").write_bytes(gzip.compress(text.encode()))
        (root / "proc/sys/kernel/sysrq").unlink()

    return extra


def test_magic_sysrq_not_set_is_said_from_the_config(tmp_path: Path) -> None:
    system = replace(SCENARIOS["debian12-ready"], kernel_config="proc", extra=_no_magic_sysrq(kexec=True))
    _, checklist = check_root(tmp_path, system)
    line = line_of(checklist, "sysctl:kernel.sysrq")
    assert line.status is Status.WARN
    assert line.detail.startswith("CONFIG_MAGIC_SYSRQ is not set (/proc/config.gz line 19):")
    assert "kdump test cannot run" in line.detail
    assert "sysctl kernel.sysrq" not in line.fix
    assert "CONFIG_MAGIC_SYSRQ" in line.fix
    # Review 8 (19): the NMI path dumps a hung machine without SysRq; "boot another kernel" was the only remedy.
    assert line.fix.startswith("sysctl kernel.unknown_nmi_panic=1 and send an NMI")
    assert "not limited by it" not in line.why
    assert [(e.locator.start, e.excerpt) for e in line.evidence] == [(19, "# CONFIG_MAGIC_SYSRQ is not set")]
    assert checklist.ready  # a SysRq-less kernel still captures a panic


def test_beside_a_kernel_without_kexec_no_sysrq_is_its_own_fault(tmp_path: Path) -> None:
    """No CONFIG_MAGIC_SYSRQ is a fault of its own beside the kernel's missing kexec (it was marked blocked by it):
    said with its configuration line, its fix once."""
    system = replace(SCENARIOS["debian12-direct-boot"], extra=_no_magic_sysrq(kexec=False))
    _, checklist = check_root(tmp_path, system)
    line = line_of(checklist, "sysctl:kernel.sysrq")
    assert line.status is Status.WARN and line.blocked_by is None
    assert line.detail.startswith("CONFIG_MAGIC_SYSRQ is not set (/proc/config.gz line ")
    assert [e.excerpt for e in line.evidence] == ["# CONFIG_MAGIC_SYSRQ is not set"]
    assert "sysctl kernel.sysrq" not in line.fix
    assert line.fix.count("CONFIG_MAGIC_SYSRQ") == 1


def test_one_list_of_kernel_options_in_check_and_setup(tmp_path: Path) -> None:
    names = [name for option in REQUIRED_OPTIONS for name in option.names]
    assert {"KEXEC", "KEXEC_FILE", "CRASH_DUMP", "PROC_VMCORE"} <= set(names)
    assert "MAGIC_SYSRQ" not in names  # no part of crash dump support: a kernel without it captures every panic
    listed = required_options_text()
    state, checklist = check_root(tmp_path, SCENARIOS["rhel9-no-kexec-kernel"])
    assert listed in line_of(checklist, "crash-reservation").fix
    assert listed in make_plan(state, checklist, policy_named("none")).reboot_reason
