"""The kdump readiness checklist: will the next crash of this system leave a vmcore?

Each rule of :data:`RULES` looks at the :class:`KdumpState` and returns check
lines (pass / warn / fail) that say what was seen, why it matters and how to
fix it, with evidence cited from the files read.  A ``fail`` means the next
crash will not be captured; ``warn`` that it may be captured but something
will hurt (too small a reservation, hangs that never panic, no debug info).
Pure: no file access, no clock.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from detectors.kdump.boot_entries import check_boot_entries
from detectors.kdump.context import active_config, collector_options, crashkernel_estimate
from detectors.kdump.dependencies import apply_dependencies
from detectors.kdump.kernel_rules import (
    check_boot_config,
    check_cmdline,
    check_distro,
    check_generated_boot,
    check_loaded,
    check_reservation,
)
from detectors.kdump.service_rules import (
    check_collector,
    check_config,
    check_debuginfo,
    check_read_problems,
    check_service,
    check_space,
    check_tooling,
)
from detectors.kdump.ssh_key import check_ssh_key
from detectors.kdump.sysctl_rules import check_sysctls
from forensics.types.kdump import CheckLine, Checklist, Estimate, KdumpState

__all__ = ["RULES", "active_config", "collector_options", "run_checklist"]


RULES: tuple[Callable[[KdumpState, Estimate], list[CheckLine]], ...] = (
    check_distro,
    check_cmdline,
    check_boot_config,
    check_generated_boot,
    check_boot_entries,
    check_reservation,
    check_loaded,
    check_tooling,
    check_config,
    check_service,
    check_space,
    check_ssh_key,
    check_collector,
    check_sysctls,
    check_debuginfo,
    check_read_problems,
)


#: Why each check matters, for passing lines (failing ones say it in their own words), by line id prefix.
WHY_IT_MATTERS = (
    ("distro", "the kdump packages, configuration file and service differ between distribution families"),
    ("crashkernel-cmdline", "the crash kernel can only boot into memory reserved at boot with crashkernel="),
    ("crashkernel-boot", "crashkernel= must be in the boot configuration to survive reboots and kernel updates"),
    ("crashkernel-generated", "the boot loader boots the generated entry, so crashkernel= must reach it"),
    ("crashkernel-entries", "an entry the boot loader offers besides the default reserves what its own line says"),
    ("crash-reservation", "the crash kernel, its initramfs and makedumpfile must fit in the reservation"),
    ("crash-loaded", "a panic jumps into the loaded crash kernel; nothing loaded, nothing captured"),
    ("kdump-tooling", "the tooling loads the crash kernel at boot and saves the dump after a crash"),
    ("kdump-config", "the tooling refuses to load the crash kernel when its configuration is wrong"),
    ("kdump-service", "the service loads the crash kernel at every boot"),
    ("dump-space", "makedumpfile stops when the disk fills: the dump is truncated or missing"),
    ("ssh-key", "the crash kernel logs in to the SSH host with it to write the dump: without it no dump is saved"),
    ("makedumpfile", "the dump must be complete enough and in a format crash/drgn can open"),
    ("sysctl:", "only a panic starts the crash kernel: these settings decide which failures panic"),
    ("debuginfo", "crash and drgn need the exact kernel's debug info to read a vmcore"),
)


def _with_why(line: CheckLine) -> CheckLine:
    if line.why:
        return line
    why = next((text for prefix, text in WHY_IT_MATTERS if line.id.startswith(prefix)), "")
    return replace(line, why=why)


def run_checklist(state: KdumpState) -> Checklist:
    """Run every rule over the state."""
    estimate = crashkernel_estimate(state)
    lines = [_with_why(line) for rule in RULES for line in rule(state, estimate)]
    return Checklist(tuple(apply_dependencies(state, lines)), estimate)
