"""Which failed check makes which others impossible, so that one root cause is counted once.

A kernel without kexec crash support fails the reservation check; the crash
kernel cannot be loaded and the crashkernel= of the running kernel reserves
nothing, whatever they say.  A kernel booted without crashkernel= reserves
nothing, so nothing can be loaded: one fix (crashkernel=, then a reboot),
not three high findings.  Missing kdump tooling leaves no configuration
and no unit to enable.  Without this, one missing feature was six high
findings on this machine (6.18.44, no CONFIG_CRASH_DUMP, no kdump-tools):
the count of high findings then says nothing about how many things to fix.

Whatever keeps a crash kernel from being loaded blocks the panic sysctls
too (panic_on_oops, hung_task_panic, ...): their point is a dump, and set
before one can be captured they turn a survivable oops or hang into a
reboot that leaves nothing (the check warned "set it" on this machine's
kernel without kexec, and setup --policy oops planned it).

A consequence keeps its own detail, fix and evidence; its status becomes
``blocked`` with the cause named, at info severity.  The cause stays a
``fail``, so the verdict (and the exit status) is unchanged.  Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from detectors.kdump.context import active_config, tooling_family
from detectors.kdump.kernel_rules import no_crash_support
from detectors.kdump.sysctl_rules import CAPTURE_SYSCTLS, TRIGGER_SYSCTLS
from forensics.model import NotAvailable, Severity
from forensics.types.kdump import Blocker, CheckLine, DistroFamily, KdumpState, Status


@dataclass(frozen=True)
class Dependency:
    """A root cause: the line that fails, when it fails for this reason, and the lines it makes impossible."""

    cause: str  # line id of the root cause
    holds: Callable[[KdumpState], bool]  # the cause line fails for this reason (read from the state)
    reason: str
    blocks: Callable[[KdumpState, CheckLine], bool]  # a line (not a pass) that this cause makes impossible
    #: The reason is a deeper fault than the cause line's own name for its failure (findings.FAULT_TITLES): its
    #: finding is titled by the reason, the one its blocked lines give (:func:`cause_fault`).
    deeper: bool = False


def _no_tooling(state: KdumpState) -> bool:
    # The distribution's kdump program is missing: its package brings the configuration and the unit.
    tools = state.tooling
    family = tooling_family(state)
    if family is DistroFamily.DEBIAN:
        return tools.kdump_config is None
    if family is DistroFamily.RHEL:
        return tools.kdumpctl is None
    return tools.kdump_config is None and tools.kdumpctl is None


def _config_absent(state: KdumpState) -> bool:
    # Absent, not unreadable: an unreadable configuration is a fault of its own, not the package's.
    config = active_config(state)
    return isinstance(config, NotAvailable) and not config.reason.startswith("cannot read")


def _capture_sysctl(line: CheckLine) -> bool:
    # A panic setting (not a pass) whose point is a dump: blocked by whatever keeps the crash kernel from loading.
    return line.id in CAPTURE_SYSCTLS


#: The lines about a crashkernel= kept for the next boots: a kernel without kexec reserves nothing whatever they say.
_PERSISTED_CRASHKERNEL = ("crashkernel-boot", "crashkernel-generated", "crashkernel-entries")


def _persisted_crashkernel(line: CheckLine) -> bool:
    return line.id.startswith(_PERSISTED_CRASHKERNEL)


def _blocked_by_kernel(state: KdumpState, line: CheckLine) -> bool:
    # The boot configuration's crashkernel= too: it was a medium WARN with its own fix ("add crashkernel= ... then
    # reboot"), which cannot work on this kernel, beside the command line's BLOCKED by the same cause (review ue15 #8).
    return line.id in ("crashkernel-cmdline", "crash-loaded") or _capture_sysctl(line) or _persisted_crashkernel(line)


def _no_crashkernel(state: KdumpState) -> bool:
    # The command line was read and reserves nothing (no crashkernel=, or none that fits this RAM): the
    # reservation and the loaded crash kernel cannot be there.  A kernel without crash support is the deeper
    # cause (above); an unread command line says nothing.
    return not no_crash_support(state) and not isinstance(state.cmdline, NotAvailable)


def _blocked_by_crashkernel(state: KdumpState, line: CheckLine) -> bool:
    # Only failures: memory reserved all the same (another mechanism) passes and is not blocked.
    return (line.id in ("crash-reservation", "crash-loaded") and line.status is Status.FAIL) or _capture_sysctl(line)


def _nothing_reserved(state: KdumpState) -> bool:
    # The reservation was read and is empty (with crashkernel= asked for: where it is not, the cause above comes first).
    size = state.crash_size
    if isinstance(size, NotAvailable):
        return False
    text = size.first_line()
    return not text.isdigit() or int(text) == 0


def _blocked_by_reservation(state: KdumpState, line: CheckLine) -> bool:
    return (line.id == "crash-loaded" and line.status is Status.FAIL) or _capture_sysctl(line)


def _blocked_by_not_loaded(state: KdumpState, line: CheckLine) -> bool:
    return _capture_sysctl(line)


def _blocked_by_tooling(state: KdumpState, line: CheckLine) -> bool:
    if line.id == "kdump-service":
        return True
    # The configuration and what it sets (collector, dump target) arrive with the package.
    return line.id in ("kdump-config", "makedumpfile", "dump-space") and _config_absent(state)


DEPENDENCIES = (
    Dependency(
        "crash-reservation",
        no_crash_support,
        "the kernel has no kexec crash support",
        _blocked_by_kernel,
        deeper=True,  # why nothing is reserved: "no crash kernel memory reserved" read as a crashkernel= problem
    ),
    Dependency(
        "crashkernel-cmdline",
        _no_crashkernel,
        "the running kernel was booted without a crashkernel= that reserves memory",
        _blocked_by_crashkernel,
    ),
    Dependency(
        "crash-reservation",
        _nothing_reserved,
        "no memory is reserved for a crash kernel",
        _blocked_by_reservation,
    ),
    Dependency(
        "crash-loaded",
        lambda state: True,  # the line fails: whatever the reason, a panic now starts no crash kernel
        "no crash kernel is loaded",
        _blocked_by_not_loaded,
    ),
    Dependency("kdump-tooling", _no_tooling, "the kdump tooling is not installed", _blocked_by_tooling),
)


def cause_fault(state: KdumpState, line_id: str) -> str | None:
    """The deeper fault a failed line ``line_id`` stands for (a :class:`Dependency` marked ``deeper`` that holds), or
    None: the root's finding then names the fault its blocked lines name ("the kernel has no kexec crash support",
    where it was titled "no crash kernel memory reserved" above 11 lines blocked by the kernel, review ue16 #9)."""
    return next((d.reason for d in DEPENDENCIES if d.cause == line_id and d.deeper and d.holds(state)), None)


#: The causes (line ids) that keep a panic from starting a crash kernel, deepest first.
CAPTURE_CAUSES = ("crash-reservation", "crashkernel-cmdline", "crash-loaded")


def capture_blocker(state: KdumpState, lines: Sequence[CheckLine]) -> tuple[Blocker, CheckLine] | None:
    """The root cause that keeps a panic from starting a crash kernel, with its line (for its fix); None when a
    crash kernel is loaded, or when that was not read (unknown is no cause to cite)."""
    failed = {line.id: line for line in lines if line.status is Status.FAIL}
    for dep in DEPENDENCIES:
        if dep.cause in CAPTURE_CAUSES and dep.cause in failed and dep.holds(state):
            cause = failed[dep.cause]
            return Blocker(dep.cause, cause.title, dep.reason), cause
    return None


def _held_sysctl(line: CheckLine, cause: CheckLine) -> CheckLine:
    """A panic sysctl blocked by the capture path: its fix waits for the cause's, and says why."""
    if line.fix and line.fix in cause.fix:
        # The same step fixes both (another kernel, for kexec and SysRq alike): said once.
        return replace(line, fix=cause.fix)
    fix = (
        "not before a crash kernel can be loaded (until then a panic captures nothing: a failure made to panic"
        f" reboots the machine and leaves no dump); first: {cause.fix}; then: {line.fix}"
    )
    return replace(line, fix=fix)


def _own_trigger_fault(line: CheckLine, blocker: Blocker | None) -> CheckLine:
    """A trigger sysctl's own fault (kernel.sysrq leaving out the crash key) beside a blocked capture: its status,
    value and evidence stay its own, a root cause of its own; its fix says the dump waits for the capture's cause."""
    if blocker is None or line.id not in TRIGGER_SYSCTLS or line.status not in (Status.WARN, Status.FAIL):
        return line
    waits = f"a forced crash is dumped only once a crash kernel can be loaded ({blocker.reason}: see {blocker.title})"
    return replace(line, fix=f"{line.fix}; {waits}")


def apply_dependencies(state: KdumpState, lines: list[CheckLine]) -> list[CheckLine]:
    """The lines with every consequence of a failed root cause marked blocked by it."""
    failed = {line.id: line for line in lines if line.status is Status.FAIL}
    blockers = [
        (dep, Blocker(dep.cause, failed[dep.cause].title, dep.reason))
        for dep in DEPENDENCIES
        if dep.cause in failed and dep.holds(state)
    ]
    out = []
    for line in lines:
        found = next(
            (
                b
                for dep, b in blockers
                if line.status is not Status.PASS and line.id != dep.cause and dep.blocks(state, line)
            ),
            None,
        )
        if found is None:
            capture = next((b for dep, b in blockers if dep.cause in CAPTURE_CAUSES), None)
            out.append(_own_trigger_fault(line, capture))
            continue
        cause = failed[found.line_id]
        held = _held_sysctl(line, cause) if _capture_sysctl(line) else line
        if _persisted_crashkernel(line) and cause.fix not in line.fix:
            held = replace(held, fix=f"{cause.fix}; then {held.fix}")  # the kernel first: its fix alone cannot work
        out.append(replace(held, status=Status.BLOCKED, severity=Severity.INFO, blocked_by=found))
    return out
