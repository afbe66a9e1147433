"""Panic sysctls: which settings turn oopses and hangs into panics, hence into dumps.

Also the sysctl presets of ``kforensic kdump setup --policy``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from detectors.kdump.sysctl_boot import boot_override, order_note, where
from detectors.kdump.util import file_evidence, pass_, unknown, warn
from forensics.model import NotAvailable, Severity
from forensics.types import kdump_paths as paths
from forensics.types.kdump import CheckLine

if TYPE_CHECKING:
    from forensics.model import Evidence
    from forensics.types.kdump import Estimate, KdumpState, MaybeFile


@dataclass(frozen=True)
class SysctlRule:
    """What a panic sysctl should be, and why."""

    name: str
    good: Callable[[int], bool]
    why: str  # what happens when it is not good
    fix: str
    good_note: str  # shown next to a good value
    # Its point is a dump (it turns a failure into a panic, or forces one): moot, and a panic setting harmful (an
    # oops or a hang becomes a reboot without a dump), while no crash kernel can be started.  kernel.panic is not:
    # rebooting after a panic is worth as much without a dump.
    needs_capture: bool = True
    # A way to force a crash by hand (SysRq-c), not a failure made to panic: enabling it harms nothing while no crash
    # kernel can be started, and its fault (the crash key not allowed) is its own root cause, said with its value
    # beside a capture that is blocked (it was marked blocked by the kernel's missing kexec, its value unsaid).
    trigger: bool = False
    # What a bad value means, said with it ("" when the value alone says it)
    bad_note: Callable[[int], str] | None = None


def _sysrq_allows_dump(mask: int) -> bool:
    # 1 enables every function; bit 8 (SYSRQ_ENABLE_DUMP) enables the crash key 'c'.
    return mask == 1 or bool(mask & 8)


def _sysrq_note(mask: int) -> str:
    """What a mask that does not allow SysRq-c does (Documentation/admin-guide/sysrq.rst)."""
    if mask == 0:
        return "SysRq disabled, the crash key c with it"
    return f"the mask {mask} ({mask:#x}) leaves out 8, which allows the crash key c"


#: Rules in display order.  panic_on_warn is reported but never warned about: it is a policy choice.
SYSCTL_RULES = (
    SysctlRule(
        "kernel.panic_on_oops",
        lambda v: v != 0,
        "an oops kills only the current task and leaves a damaged kernel running: no dump",
        "kforensic kdump setup --policy oops --apply (sysctl kernel.panic_on_oops=1)",
        "an oops panics (dumped when a crash kernel is loaded)",
    ),
    SysctlRule(
        "kernel.panic_on_warn",
        lambda v: True,
        "",
        "",
        "a WARN panics (strict policy)",
    ),
    SysctlRule(
        "kernel.hung_task_panic",
        lambda v: v != 0,
        "tasks stuck in D state are reported but the hang is never dumped",
        "kforensic kdump setup --policy hang-debug --apply",
        "a hung task panics",
    ),
    SysctlRule(
        "kernel.softlockup_panic",
        lambda v: v != 0,
        "a CPU stuck in kernel code is reported but never dumped",
        "kforensic kdump setup --policy hang-debug --apply",
        "a soft lockup panics",
    ),
    SysctlRule(
        "kernel.hardlockup_panic",
        lambda v: v != 0,
        "a CPU stuck with interrupts off is reported but never dumped",
        "kforensic kdump setup --policy hang-debug --apply",
        "a hard lockup panics",
    ),
    SysctlRule(
        "kernel.panic_on_rcu_stall",
        lambda v: v != 0,
        "an RCU stall is reported but never dumped",
        "kforensic kdump setup --policy hang-debug --apply",
        "an RCU stall panics",
    ),
    SysctlRule(
        "kernel.panic",
        lambda v: v != 0,
        "if the dump fails the machine stays hung at the panic instead of rebooting",
        "kforensic kdump setup --policy oops --apply (sysctl kernel.panic=10)",
        "reboots after a panic",
        needs_capture=False,
    ),
    SysctlRule(
        "kernel.sysrq",
        _sysrq_allows_dump,
        "SysRq-c on the console cannot force a dump of a hung machine (root's writes to /proc/sysrq-trigger are not "
        "limited by it)",
        "sysctl kernel.sysrq=1, or a mask including 8",
        "SysRq-c can force a crash (dumped when a crash kernel is loaded)",
        trigger=True,
        bad_note=_sysrq_note,
    ),
)


@dataclass(frozen=True)
class Policy:
    """A ``--policy`` preset: the sysctls it writes to the sysctl.d snippet."""

    name: str
    description: str
    settings: tuple[tuple[str, int], ...]


_OOPS = (("kernel.panic_on_oops", 1), ("kernel.panic", 10))
_HANGS = (
    ("kernel.hung_task_panic", 1),
    ("kernel.softlockup_panic", 1),
    ("kernel.hardlockup_panic", 1),
    ("kernel.panic_on_rcu_stall", 1),
)

#: The presets, mildest first.
POLICIES = (
    Policy("none", "no sysctl changes", ()),
    Policy("oops", "an oops panics (and is dumped); reboot 10 s after a panic", _OOPS),
    Policy("hang-debug", "oops, plus hung tasks, soft/hard lockups and RCU stalls panic", _OOPS + _HANGS),
    Policy("strict", "hang-debug, plus every WARN panics", (*_OOPS, *_HANGS, ("kernel.panic_on_warn", 1))),
)


#: Line ids of the sysctls whose point is a dump (:attr:`SysctlRule.needs_capture`) of a failure made to panic: moot
#: while no crash kernel can be started.  A trigger (:attr:`SysctlRule.trigger`) is not among them.
CAPTURE_SYSCTLS = frozenset(f"sysctl:{rule.name}" for rule in SYSCTL_RULES if rule.needs_capture and not rule.trigger)
#: Line ids of the sysctls that force a crash by hand: their fault is their own, whatever blocks the capture.
TRIGGER_SYSCTLS = frozenset(f"sysctl:{rule.name}" for rule in SYSCTL_RULES if rule.trigger)


def policy_named(name: str) -> Policy:
    """The preset called ``name``; ValueError lists the known ones."""
    for policy in POLICIES:
        if policy.name == name:
            return policy
    raise ValueError(f"unknown policy {name!r}; choose one of {', '.join(p.name for p in POLICIES)}")


def _absent_reason(file: NotAvailable) -> str:
    """Why a sysctl was not read; an absent file has two causes that nothing read tells apart."""
    if "does not exist" in file.reason:
        return f"{file.reason}: a kernel built without the option, or no /proc under the root"
    return file.reason


def _unread(rule: SysctlRule, line_id: str, title: str, reason: str, evidence: tuple[Evidence, ...]) -> CheckLine:
    # A value never read gives no verdict: the setting may well be the one that loses the dump.  The harm if it
    # is bad is that of a bad value (one class of failure not dumped: low), and so is the severity.
    why = f"if it is not set so: {rule.why}" if rule.why else "the panic policy of the running kernel cannot be told"
    fix = rule.fix or f"read it with sysctl {rule.name} on the running system"
    # panic_on_warn is a policy choice, never warned about: its value unread costs nothing.
    return unknown(line_id, title, reason, why, fix, evidence, severity=Severity.LOW if rule.why else Severity.INFO)


def _no_magic_sysrq(state: KdumpState, file: MaybeFile, line_id: str, title: str) -> CheckLine | None:
    """kernel.sysrq absent on a kernel whose build configuration says ``# CONFIG_MAGIC_SYSRQ is not set``: no SysRq
    at all, no /proc/sysrq-trigger either (no sysctl can change that); None when the configuration does not say so.

    Only the explicit line counts: a configuration without one (a fragment) says nothing.
    """
    config = state.kernel_config
    if isinstance(config, NotAvailable) or not isinstance(file, NotAvailable) or "does not exist" not in file.reason:
        return None
    number, value = config.options.get("MAGIC_SYSRQ", (0, "?"))
    if value is not None:
        return None
    detail = (
        f"CONFIG_MAGIC_SYSRQ is not set ({config.file.path} line {number}): {dict(paths.PANIC_SYSCTLS)['kernel.sysrq']}"
        f" and {paths.SYSRQ_TRIGGER} do not exist, so SysRq-c cannot force a dump and kdump test cannot run"
    )
    why = "a hung machine is dumped only by a panic forced from outside it, SysRq-c or an NMI; SysRq-c is not there"
    evidence = file_evidence(config.file, number)
    return warn(line_id, title, detail, why, _FIX_NO_SYSRQ, evidence, severity=Severity.LOW)


#: Without SysRq a hung machine is still dumped by an NMI: kernel.unknown_nmi_panic=1 panics on one the hypervisor or
#: the BMC sends (the hard-lockup watchdog's hardlockup_panic covers a CPU stuck with interrupts off by itself).
_FIX_NO_SYSRQ = (
    "sysctl kernel.unknown_nmi_panic=1 and send an NMI from the hypervisor or BMC to dump a hung machine "
    "(virsh inject-nmi, ipmitool chassis power diag); or boot a kernel built with CONFIG_MAGIC_SYSRQ for SysRq-c "
    "and kdump test"
)


def check_sysctls(state: KdumpState, estimate: Estimate) -> list[CheckLine]:
    """One line per panic sysctl."""
    lines = []
    for rule in SYSCTL_RULES:
        file = state.sysctl(rule.name)
        line_id = f"sysctl:{rule.name}"
        title = f"sysctl {rule.name}"
        built_without = _no_magic_sysrq(state, file, line_id, title) if rule.name == "kernel.sysrq" else None
        if built_without is not None:
            lines.append(built_without)
            continue
        if isinstance(file, NotAvailable):
            lines.append(_unread(rule, line_id, title, _absent_reason(file), ()))
            continue
        text = file.first_line()
        evidence = file_evidence(file, 1, text)
        try:
            value = int(text.split()[0])
        except (ValueError, IndexError):
            lines.append(_unread(rule, line_id, title, f"{file.path} holds {text!r}, not a number", evidence))
            continue
        booted = _against_boot(state, rule, value, line_id, title, evidence)
        if booted is not None:
            lines.append(booted)
        elif rule.good(value):
            note = rule.good_note if value else "off (default)"
            lines.append(pass_(line_id, title, f"{value}: {note}", evidence))
        else:
            detail = f"{value}: {rule.bad_note(value)}" if rule.bad_note else f"{value}"
            lines.append(warn(line_id, title, detail, rule.why, rule.fix, evidence, severity=Severity.LOW))
    return lines


def _against_boot(
    state: KdumpState, rule: SysctlRule, value: int, line_id: str, title: str, evidence: tuple[Evidence, ...]
) -> CheckLine | None:
    """The running value against what the configuration sets at boot, where they tell different stories (None
    where nothing sets it, or both are good): a good value the next boot drops, a bad one set so at boot (the line
    to change, and what it overrides), a good configuration not applied yet."""
    boot = state.boot_sysctl(rule.name)
    number = boot.number() if boot is not None else None
    if boot is None or number is None or not rule.why:
        return None
    running_good, boot_good = rule.good(value), rule.good(number)
    if running_good and boot_good:
        return None
    cited = where(boot)
    if boot_override(state, rule.name) is not None:
        cited += f", {order_note(boot)}"
    evidence = (*evidence, *file_evidence(boot.file, boot.line))
    if boot_good:
        detail = f"{value} now; {cited} for the next boot: not applied yet"
        fix = f"sysctl -p {boot.file.path} (or reboot)"
        return warn(line_id, title, detail, rule.why, fix, evidence, severity=Severity.LOW)
    detail = f"{value} now, but {cited}: the next boot sets it back" if running_good else f"{value}; at boot {cited}"
    why = f"from the next boot: {rule.why}" if running_good else rule.why
    return warn(line_id, title, detail, why, rule.fix, evidence, severity=Severity.LOW)
