"""The setup plan: packages, file changes and commands that make the next crash captured.

:func:`make_plan` only decides; :mod:`collectors.kdump.apply` carries a plan
out.  The plan is computed from the current state, so running it twice
converges: after the changes are made, a new plan has nothing left to change.
"""

from __future__ import annotations

from dataclasses import replace

from detectors.kdump.boot_entries import entries_step
from detectors.kdump.checklist import active_config, collector_options
from detectors.kdump.context import (
    NO_BOOT_LOADER,
    boot_gap,
    cmdline_crashkernel,
    config_problem,
    no_boot_loader,
    regenerate_step,
    regenerated_file,
    release,
    value_problem,
    value_unknown,
)
from detectors.kdump.crashkernel import MIB, auto_sized, match_ranges, parse_crashkernel
from detectors.kdump.dependencies import capture_blocker
from detectors.kdump.kernel_rules import crashkernel_unplaced, no_crash_support, required_options_text
from detectors.kdump.makedumpfile import Compression, compression_flag
from detectors.kdump.sysctl_boot import order_note, overriding
from detectors.kdump.sysctl_rules import Policy
from forensics.model import NotAvailable
from forensics.quoting import comment_text, kernel_param_value, shell_double_inner, sysctl_line
from forensics.types import kdump_paths as paths
from forensics.types.kdump import (
    BootEntry,
    Checklist,
    Command,
    DistroFamily,
    FileChange,
    KdumpConfig,
    KdumpState,
    Plan,
    ReadProblem,
    Status,
    TextFile,
    format_size,
)

_MARK = "kforensic"
#: The checklist lines crashkernel= on the command line makes pass.
_RESERVE_LINES = ("crashkernel-cmdline", "crash-reservation")


def _text(file: TextFile) -> str:
    return "".join(line + "\n" for line in file.lines)


def crashkernel_value(checklist: Checklist) -> tuple[str, str]:
    """The crashkernel= value to configure, and why that value."""
    estimate = checklist.estimate
    if not estimate.grounded:
        # No size was read to judge by: the distribution's range expression picks one by the RAM at boot.
        return estimate.floor_crashkernel, f"reserve by the RAM at boot ({estimate.floor_source} default)"
    if estimate.floor >= estimate.recommended:
        # The distribution's range expression keeps scaling when the RAM changes.
        why = f"reserve {format_size(estimate.recommended)} for the crash kernel ({estimate.floor_source} default)"
        return estimate.floor_crashkernel, why
    value = format_size(-(-estimate.recommended // MIB) * MIB)
    return value, f"reserve {value} for the crash kernel (recommended estimate, above the distribution default)"


def _needs_crashkernel(checklist: Checklist) -> bool:
    """crashkernel= is still to be put on the command line: it is missing there, or this boot reserved nothing or
    too little."""
    return any(ln.status is not Status.PASS for ln in checklist.lines if ln.id in _RESERVE_LINES)


def _reboot_cause(state: KdumpState, checklist: Checklist) -> str:
    """Why this boot does not reserve what the boot configuration asks for, from the lines that say so."""
    status = {line.id: line for line in checklist.lines}
    cmdline = status.get("crashkernel-cmdline")
    if cmdline is not None and cmdline.status is not Status.PASS:
        if isinstance(state.cmdline, TextFile) and not cmdline_crashkernel(state):
            return "there was no crashkernel= on this boot's command line"
        return f"this boot's command line has {cmdline.detail}"
    return "this boot reserved too little"


def _boot_step(state: KdumpState, value: str, reason: str, *, reboot: bool = True) -> tuple[list[Command], list[str]]:
    """Carry crashkernel= from the boot configuration into what the boot loader boots: a command where its program
    is under the root, else a step by hand (every run, until the generated entry has it)."""
    argv, text = regenerate_step(state, value)
    if argv is not None:
        # grub-mkconfig rewrites grub.cfg whole (hand edits included): a copy is kept first.
        written = regenerated_file(argv)
        return [Command(argv, reason, (written,) if written else ())], []
    return [], [f"{text}, then reboot" if reboot else text]


def _crashkernel_plan(
    state: KdumpState, checklist: Checklist
) -> tuple[list[FileChange], list[Command], list[str], str]:
    """Changes that make the boot configuration reserve the recommended size, the commands or steps by hand that
    carry it into what the boot loader boots; and why a reboot is needed."""
    if state.not_examined(paths.GRUB_DEFAULT):
        # No /etc under the root: the boot configuration was not seen, so neither a change nor a reboot is known
        # to be needed (it was "Reboot needed: reserve 64M" for a guest whose crash kernel was loaded).  The plan's
        # ``unread`` names the directory.
        return [], [], [], ""
    if no_boot_loader(state):
        # No boot loader configuration to edit (kdump-tools' grub.d snippet would be read by no grub either): the
        # plan's manual step says where crashkernel= goes (make_plan); a reboot only once it is there.
        if isinstance(state.crash_size, NotAvailable):
            return [], [], [], f"boot a kernel built with crash dump support ({required_options_text()})"
        return [], [], [], crashkernel_value(checklist)[1] if _needs_crashkernel(checklist) else ""
    want = checklist.estimate.recommended
    ram = state.system_ram_bytes
    configured = state.boot.crashkernel[-1] if state.boot.crashkernel else None
    reservation_ok = next((ln.status is Status.PASS for ln in checklist.lines if ln.id == "crash-reservation"), False)
    enough = False
    # The check's rule (value_problem): a value that reserves nothing here is replaced; crashkernel=auto on the
    # RHEL 7/8 kernel that sizes it is kept when this boot's reservation passes (its size is the kernel's to pick).
    if configured is not None and isinstance(ram, int) and value_problem(state, configured[2]) is None:
        if auto_sized(configured[2], release(state)) or value_unknown(state, configured[2]):
            # (Not known to size it: kept only where this boot's reservation passes, else an explicit size.)
            enough = reservation_ok
        else:
            # (What the kernel reserves for it; the least it may where that depends on its rounding of the RAM.)
            enough = match_ranges(parse_crashkernel(configured[2]), ram, release(state)).least >= want
    family = state.distro.family
    pending = ""
    if family is DistroFamily.DEBIAN and not state.tooling.kdump_config and not enough and isinstance(ram, int):
        # kdump-tools installs grub.d/kdump-tools.cfg with the distro default and runs update-grub.
        enough = checklist.estimate.floor >= want
        pending = "installing kdump-tools adds crashkernel= to the boot configuration; reboot to reserve it"
    if enough:
        gap = boot_gap(state)
        if reservation_ok:
            if gap is not None and not gap.stale and entries_step(state) is not None:
                # The default entry has it, other entries the boot loader offers do not (check's low line): the same
                # step gives it to every entry (grubby --update-kernel=ALL; grub-mkconfig writes every kernel's).
                value = gap.source[2]
                reason = f"give crashkernel={value} to every boot entry, not the default alone"
                commands, by_hand = _boot_step(state, value, reason, reboot=False)
                return [], commands, by_hand, ""
            if gap is None or not gap.stale:
                return [], [], [], ""
            # This boot reserves, the next would not: grub.cfg lacks what the configuration says (no reboot needed).
            value = gap.source[2]
            commands, by_hand = _boot_step(state, value, f"keep crashkernel={value} at the next boot", reboot=False)
            return [], commands, by_hand, ""
        if isinstance(state.crash_size, NotAvailable):
            return [], [], [], f"boot a kernel built with crash dump support ({required_options_text()})"
        if pending:
            return [], [], [], pending
        if crashkernel_unplaced(state):
            # The same command line fails the same way at the next boot: no reboot alone, the check's fix (another
            # placement or size, as the kernel log says), by hand.
            fix = next(ln.fix for ln in checklist.lines if ln.id == "crash-reservation")
            return [], [], [fix], ""
        cause = _reboot_cause(state, checklist)
        if gap is not None and gap.booted is None:
            # The generated entry lacks it (or was not read): the reboot alone boots without it again.
            entry = gap.entry
            where = entry.file.path if isinstance(entry, BootEntry) else "what the boot loader boots"
            source, number, value = gap.source
            reason = f"crashkernel={value} is in {source.path} line {number} but not in {where}, and {cause}"
            commands, by_hand = _boot_step(state, value, f"carry crashkernel={value} into {where}")
            return [], commands, by_hand, reason
        return [], [], [], f"crashkernel= is in the boot configuration but {cause}"
    value, reason = crashkernel_value(checklist)
    # The value may come from a distribution file under --root: it must stay one kernel parameter
    # inside GRUB's double-quoted, shell-sourced assignment (or be refused).
    value = kernel_param_value(value, "crashkernel")
    if family is DistroFamily.DEBIAN:
        snippet = state.managed(paths.KFORENSIC_GRUB_SNIPPET)
        new = (
            f"# Written by kforensic kdump setup: {comment_text(reason)}.\n"
            "# Sourced after kdump-tools.cfg; the kernel uses the last crashkernel= given.\n"
            f'GRUB_CMDLINE_LINUX_DEFAULT="$GRUB_CMDLINE_LINUX_DEFAULT crashkernel={shell_double_inner(value)}"\n'
        )
        old = _text(snippet) if isinstance(snippet, TextFile) else None
        changes = [] if old == new else [FileChange(paths.KFORENSIC_GRUB_SNIPPET, old, new, reason)]
        commands, by_hand = _boot_step(state, value, "regenerate grub.cfg with the new crashkernel=")
        return changes, commands, by_hand, reason
    if family is DistroFamily.RHEL and state.tooling.grubby:
        argv = ("grubby", "--update-kernel=ALL", f"--args=crashkernel={value}")
        return [], [Command(argv, reason)], [], reason
    return [], [], [], reason


def _config_plan(state: KdumpState, checklist: Checklist) -> list[FileChange]:
    """Fix the kdump configuration: rejected lines, USE_KDUMP, an unusable core collector."""
    config = active_config(state)
    if not isinstance(config, KdumpConfig):
        return []
    file = config.file
    lines = list(file.lines)
    reasons = []
    for problem in config.problems:
        lines[problem.line - 1] = f"#{_MARK}-disabled# {file.lines[problem.line - 1]}"
        reasons.append(f"comment out line {problem.line} ({problem.reason})")
    debian = state.distro.family is DistroFamily.DEBIAN or file.path == paths.DEBIAN_CONFIG
    use = config.get("USE_KDUMP") if debian else None
    if debian and (use is None or use.value != "1"):
        if use is None:
            lines.append("USE_KDUMP=1")
        else:
            lines[use.line - 1] = "USE_KDUMP=1"
        reasons.append("enable kdump-tools (USE_KDUMP=1)")
    options, collector_file, number = collector_options(state)
    level = options.dump_level or 0
    broken = options.problems or options.dmesg_only or options.program != "makedumpfile"
    if broken or not (level & 1 and level & 16):
        keep = options.compression if options.compression is not Compression.NONE else Compression.ZLIB
        flag = compression_flag(keep)
        new_line = (
            f'MAKEDUMP_ARGS="{flag} -d 31"' if debian else f"core_collector makedumpfile {flag} --message-level 7 -d 31"
        )
        if collector_file is not None and number:
            lines[number - 1] = new_line
        else:
            lines.append(new_line)
        reasons.append(f"dump with makedumpfile {flag} -d 31")
    new = "".join(x + "\n" for x in lines)
    old = _text(file)
    if new == old:
        return []
    return [FileChange(file.path, old, new, "; ".join(reasons))]


def _sysctl_plan(state: KdumpState, policy: Policy) -> tuple[list[FileChange], list[Command]]:
    """The snippet with the policy's settings; a comment put on each later line that would set one back at boot;
    and ``sysctl -p`` of the snippet while the running kernel differs from the policy (every run, until it is run).

    A later line is commented out (its file backed up) rather than the snippet renamed to sort last: no name sorts
    after /etc/sysctl.conf, which ``sysctl --system`` applies after every sysctl.d file, nor for sure after every
    name a user may pick; and a setting left in place but losing silently would mislead whoever reads that file.
    """
    if not policy.settings:
        return [], []
    body = "".join(sysctl_line(name, str(value)) + "\n" for name, value in policy.settings)
    said = f"--policy {comment_text(policy.name)}: {comment_text(policy.description)}"
    new = f"# Written by kforensic kdump setup {said}.\n{body}"
    current = state.managed(paths.SYSCTL_SNIPPET)
    old = _text(current) if isinstance(current, TextFile) else None
    changes = []
    if old != new:
        changes.append(FileChange(paths.SYSCTL_SNIPPET, old, new, f"sysctl policy {policy.name}: {policy.description}"))
    changes += _sysctl_overrides(state, policy)
    stale = [
        f"{name} = {file.first_line()}"
        for name, value in policy.settings
        if isinstance(file := state.sysctl(name), TextFile) and file.first_line() != str(value)
    ]
    commands = []
    if changes or stale:
        why = "apply the sysctl policy now"
        if stale:
            why += f" (the running kernel has {', '.join(stale)})"
        commands.append(Command(("sysctl", "-p", paths.SYSCTL_SNIPPET), why))
    return changes, commands


def _sysctl_overrides(state: KdumpState, policy: Policy) -> list[FileChange]:
    """Comment out the lines applied after the snippet that set a policy key otherwise.  A file of /etc is edited
    (and backed up by apply); a vendor file (/usr/lib, /lib, /run) is masked by one of the same name in
    /etc/sysctl.d, a copy with the line commented out, as sysctl.d(5) says to override it."""
    by_file: dict[str, tuple[TextFile, list[tuple[int, str]]]] = {}
    for name, value in policy.settings:
        for line in overriding(state, name, value):
            why = f"line {line.line} ({line.name} = {line.value}, {order_note(line)}: it would undo {name} = {value})"
            by_file.setdefault(line.file.path, (line.file, []))[1].append((line.line, why))
    changes = []
    for path, (file, edits) in by_file.items():
        lines = list(file.lines)
        for number, _ in edits:
            lines[number - 1] = f"#{_MARK}-disabled# {file.lines[number - 1]}"
        new = "".join(x + "\n" for x in lines)
        reason = f"comment out {'; '.join(why for _, why in edits)}"
        if path.startswith("/etc/"):
            changes.append(FileChange(path, _text(file), new, reason))
            continue
        target = f"{paths.SYSCTL_DIRS[0]}/{path.rsplit('/', 1)[-1]}"
        changes.append(FileChange(target, None, new, f"{reason} (a copy of {path}, which a file of its name masks)"))
    return changes


def _held_policy(state: KdumpState, checklist: Checklist, policy: Policy) -> str:
    """Why the policy's panic settings are not planned ("" when they are): no crash kernel can be started, so each
    would make a failure the system survives today a reboot that leaves nothing to analyse."""
    blocked = capture_blocker(state, checklist.lines)
    if not policy.settings or blocked is None:
        return ""
    blocker, cause = blocked
    settings = ", ".join(f"{name} = {value}" for name, value in policy.settings)
    return (
        f"the sysctl policy {policy.name} ({settings}): {blocker.reason} ({cause.title}: {cause.detail}), so a panic"
        " starts no crash kernel and these settings would turn an oops or a hang the system survives into a reboot"
        f" that leaves no dump; first: {cause.fix}; then run kforensic kdump setup --policy {policy.name} again"
    )


def _packages(state: KdumpState) -> tuple[tuple[str, ...], Command | None, list[str]]:
    packages, install, manual = _packages_missing(state)
    if state.programs_not_examined():
        # No /usr under the root: the programs were not looked for, so nothing is known to be missing.
        return (), None, []
    if packages and state.tooling.unsearched:
        # Not found where it could be looked for, and a directory could not be: not known to be missing, so no
        # install.  The plan's ``unread`` names each directory and its remedy (:func:`_unread`), once.
        return (), None, manual
    return packages, install, manual


def _packages_missing(state: KdumpState) -> tuple[tuple[str, ...], Command | None, list[str]]:
    tools = state.tooling
    family = state.distro.family
    if family is DistroFamily.DEBIAN:
        wanted = [
            p for p, have in (("kdump-tools", tools.kdump_config), ("makedumpfile", tools.makedumpfile)) if not have
        ]
        argv = ("env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", *wanted)
        return tuple(wanted), Command(argv, "install the kdump tooling") if wanted else None, []
    if family is DistroFamily.RHEL:
        fedora_split = (
            state.distro.id == "fedora" and state.distro.version_id.isdigit() and int(state.distro.version_id) >= 40
        )
        main = "kdump-utils" if fedora_split else "kexec-tools"
        wanted = [main] if not tools.kdumpctl else []
        if fedora_split and not tools.makedumpfile:
            wanted.append("makedumpfile")
        return (
            tuple(wanted),
            Command(("dnf", "install", "-y", *wanted), "install the kdump tooling") if wanted else None,
            [],
        )
    if not (tools.kdumpctl or tools.kdump_config) or not tools.makedumpfile:
        return (), None, ["install kexec-tools and makedumpfile with your distribution's package manager"]
    return (), None, []


def _unread(what: str, problem: ReadProblem, good: str) -> str:
    """What the plan could not read, and what lets it: another reader's rights, or a repair of the file."""
    remedy = "run the setup as root" if problem.denied else f"make {problem.path} {good} again"
    return f"{what}: {problem.reason} ({remedy})"


def make_plan(state: KdumpState, checklist: Checklist, policy: Policy) -> Plan:
    """Decide what to install, change and run so that the checklist passes."""
    family = state.distro.family
    packages, install, manual = _packages(state)
    if packages and isinstance(active_config(state), NotAvailable):
        manual.append("the kdump configuration arrives with the package: run kforensic kdump setup again after it")
    ck_changes, ck_commands, boot_steps, reboot_reason = _crashkernel_plan(state, checklist)
    held = _held_policy(state, checklist, policy)
    sysctls, sysctl_commands = ([], []) if held else _sysctl_plan(state, policy)
    changes = [*_config_plan(state, checklist), *ck_changes, *sysctls]
    commands = list(ck_commands)
    # On a kernel without kexec crash support the tooling and its service are still what a crash kernel needs, but
    # they load nothing (the service fails at each boot) until a kernel with it boots: said beside each.
    until = " (loads nothing until a kernel with kexec crash support boots)" if no_crash_support(state) else ""
    if install is not None and until:
        install = replace(install, reason=install.reason + until)
    unit = paths.DEBIAN_UNIT if family is DistroFamily.DEBIAN else paths.RHEL_UNIT
    status = {line.id: line.status for line in checklist.lines}
    if family is not DistroFamily.UNKNOWN and state.services.systemd:
        if status.get("kdump-service") is not Status.PASS:
            commands.append(Command(("systemctl", "enable", unit), "start kdump at every boot" + until))
        reserved = status.get("crash-reservation") not in (
            Status.FAIL,
            Status.BLOCKED,
        )  # blocked: nothing reserved either
        reload = any(c.path in (paths.DEBIAN_CONFIG, paths.RHEL_CONFIG) for c in changes)
        if reserved and (reload or status.get("crash-loaded") is not Status.PASS):
            commands.append(Command(("systemctl", "restart", unit), "load the crash kernel now"))
    if no_boot_loader(state) and _needs_crashkernel(checklist):
        value = kernel_param_value(crashkernel_value(checklist)[0], "crashkernel")
        manual.append(f"add crashkernel={value} to the kernel command line, then reboot: {NO_BOOT_LOADER}")
    elif family is DistroFamily.UNKNOWN and status.get("crashkernel-cmdline") is not Status.PASS:
        manual.append(f"add crashkernel={crashkernel_value(checklist)[0]} to the boot loader's kernel command line")
    commands += sysctl_commands
    for line in checklist.lines:
        # An unknown line has no fault to fix by hand: what keeps it unknown is fixed above, unless only a person
        # can read it.
        # (An SSH key is made and authorized by kdump-config/kdumpctl propagate, which asks for the host's password.)
        if line.status in (Status.WARN, Status.FAIL) and line.id in ("dump-space", "ssh-key", "debuginfo"):
            manual.append(f"{line.title}: {line.fix}")
        elif line.status is Status.UNKNOWN and line.by_hand:
            # Nothing setup does reads it (the room on an SSH/NFS target, this init system's boot services): without
            # the step a plan that fixes everything else reads as complete (setup said nothing of an SSH target's room).
            manual.append(f"{line.title}: not known from here: {line.fix}")
    unread = [_unread(f"cannot read {p.path}", p, "a readable file") for p in (config_problem(state),) if p is not None]
    unread += [_unread(f"cannot look in {p.path}", p, "a directory it can search") for p in state.tooling.unsearched]
    unread += [f"{top}: {state.not_examined(top)}" for top in state.unexamined]
    return Plan(
        distro=state.distro.name,
        family=family,
        policy=policy.name,
        packages=packages,
        install=install,
        changes=tuple(changes),
        commands=tuple(commands),
        manual=tuple(manual),
        reboot_needed=bool(reboot_reason),
        reboot_reason=reboot_reason,
        unread=tuple(unread),
        held_back=(held,) if held else (),
        boot_steps=tuple(boot_steps),
    )
