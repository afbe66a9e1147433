"""Checklist rules of the kernel side and the distribution: crashkernel=, reservation, loaded crash kernel."""

from __future__ import annotations

from dataclasses import dataclass, replace

from detectors.kdump.boot_entries import others_note
from detectors.kdump.context import (
    bls_boot,
    boot_gap,
    cmdline_crashkernel,
    no_boot_loader,
    regenerate_step,
    release,
    reserved_now,
    tooling_family,
    value_problem,
    value_unknown,
)
from detectors.kdump.crashkernel import CHECK_AUTO, GIB, MIB, auto_sized, match_ranges, parse_crashkernel
from detectors.kdump.util import fail, file_evidence, pass_, unknown, warn
from forensics.model import Evidence, NotAvailable, Severity
from forensics.types import kdump_paths as paths
from forensics.types.kdump import (
    BootEntry,
    CheckLine,
    DistroFamily,
    Estimate,
    KdumpState,
    KernelConfig,
    TextFile,
    describe_estimate,
)
from forensics.types.release import release_version

# The release from which kernel/ksysfs.c builds kexec_crash_size and kexec_crash_loaded under CONFIG_CRASH_DUMP
# (before it, under CONFIG_KEXEC_CORE alone): 6.9, whose "crash: split crash dumping code out from kexec_core.c"
# (02aff8480533) put them there; CRASH_DUMP existed before, building only the capture kernel's /proc/vmcore.
_CRASH_DUMP_GATES_SYSFS = (6, 9)
_WHY_RESERVE = "the crash kernel can only boot into memory reserved at boot with crashkernel="
_WHY_PERSIST = "a crashkernel= set only by hand is lost at the next kernel update or boot loader rewrite"
_FIX_CRASHKERNEL = "kforensic kdump setup --apply (adds crashkernel= to the boot configuration), then reboot"


@dataclass(frozen=True)
class KernelOption:
    """A build option kdump needs of the kernel: any one of ``names`` (without ``CONFIG_``), and what it gives."""

    names: tuple[str, ...]
    gives: str


#: The kernel options kdump needs, the one list check and setup name.  KEXEC or KEXEC_FILE selects KEXEC_CORE (the
#: crash kernel's loading); CRASH_DUMP the reservation (and, from 6.9, the kexec_crash_* files); PROC_VMCORE the
#: capture kernel's /proc/vmcore that makedumpfile reads.  MAGIC_SYSRQ is no part of it (a kernel without it
#: captures every panic; only SysRq-c and /proc/sysrq-trigger are missing): the kernel.sysrq line names it alone.
REQUIRED_OPTIONS = (
    KernelOption(("KEXEC", "KEXEC_FILE"), "loading a crash kernel"),
    KernelOption(("CRASH_DUMP",), "the crashkernel= reservation"),
    KernelOption(("PROC_VMCORE",), "the capture kernel's /proc/vmcore"),
)


def required_options_text() -> str:
    """``CONFIG_KEXEC/CONFIG_KEXEC_FILE, CONFIG_CRASH_DUMP, ... and ...``: the options of :data:`REQUIRED_OPTIONS`
    (one of a slash-joined pair)."""
    names = ["/".join(f"CONFIG_{n}" for n in option.names) for option in REQUIRED_OPTIONS]
    return ", ".join(names[:-1]) + f" and {names[-1]}"


#: A kernel without kexec crash support (no /sys/kernel/kexec_crash_size) can neither reserve nor load a crash
#: kernel: no crashkernel= and no service restart helps until another kernel is booted.
FIX_KERNEL = f"boot a distribution kernel, or one built with {required_options_text()}"
#: What lets a check see what a --root tree without /usr or /etc did not hold.
FIX_UNEXAMINED = "check the installed system's tree (with its /usr and /etc), or run the check on the system itself"
_FIX_UNREAD = "run as root, or on a --root tree copy the file from the running system"
_FIX_LOAD = {
    DistroFamily.DEBIAN: "kdump-config load (and check kdump-config show)",
    DistroFamily.RHEL: "systemctl restart kdump (and check kdumpctl status)",
    DistroFamily.UNKNOWN: "load it with kexec -p <kernel> --initrd=<initrd> --append=...",
}


def check_distro(state: KdumpState, estimate: Estimate) -> list[CheckLine]:
    """Which distribution, hence which kdump tooling to expect."""
    distro = state.distro
    evidence = file_evidence(state.os_release, distro.evidence_line)
    unexamined = state.not_examined(paths.OS_RELEASE[0])
    if isinstance(state.os_release, NotAvailable) and unexamined:
        why = "the package names, config file and service of kdump differ between distributions"
        reason = f"os-release: {unexamined}"
        return [unknown("distro", "Distribution", reason, why, FIX_UNEXAMINED, (), severity=Severity.LOW)]
    if distro.family is DistroFamily.UNKNOWN:
        return [
            warn(
                "distro",
                "Distribution",
                f"{distro.name}: not a Debian/Ubuntu or RHEL/Fedora family; tooling checks are generic",
                "the package names, config file and service of kdump differ between distributions",
                "install kexec-tools and makedumpfile and configure kdump as your distribution documents",
                evidence,
            )
        ]
    tooling = "kdump-tools" if distro.family is DistroFamily.DEBIAN else "kexec-tools/kdump-utils"
    return [pass_("distro", "Distribution", f"{distro.name} ({distro.family.value} family, {tooling})", evidence)]


def no_crash_support(state: KdumpState) -> bool:
    """/sys/kernel/kexec_crash_size is absent: the kernel has no crash support (unreadable proves nothing), unless
    the kernel's build configuration says it was built with it."""
    absent = isinstance(state.crash_size, NotAvailable) and "does not exist" in state.crash_size.reason
    return absent and _config_crash_support(state)[0] is not True


def _config_crash_support(state: KdumpState) -> tuple[bool | None, tuple[int, ...]]:
    """What the kernel's build configuration says of kexec crash support, and the numbers of the lines saying it.

    The sysfs files need kexec's core (selected by KEXEC or KEXEC_FILE; with both off it has no line at all) and,
    since 6.9, CRASH_DUMP: on an older release (the running kernel's) CRASH_DUMP only builds a capture kernel and
    says nothing of them.  None: no configuration read, or no line about either.
    """
    config = state.kernel_config
    if isinstance(config, NotAvailable):
        return None, ()
    gates = ["KEXEC_CORE", "CRASH_DUMP"] if _crash_dump_gates_sysfs(state) else ["KEXEC_CORE"]
    if all(config.enabled(name) for name in gates):
        return True, tuple(config.options[name][0] for name in gates)
    off = [] if config.enabled("KEXEC_CORE") else ["KEXEC", "KEXEC_FILE"]
    lines = tuple(
        config.options[name][0] for name in [*off, *gates[1:]] if config.options.get(name, (0, "y"))[1] is None
    )
    return (False, lines) if lines else (None, ())


def _crash_dump_gates_sysfs(state: KdumpState) -> bool:
    """Whether CONFIG_CRASH_DUMP gates the kexec_crash_* sysfs files on the running kernel: from 6.9, and where its
    release is not known (the recent kernels' rule)."""
    release = state.osrelease.first_line() if isinstance(state.osrelease, TextFile) else ""
    version = release_version(release)
    return version is None or version >= _CRASH_DUMP_GATES_SYSFS


def _crash_support_evidence(state: KdumpState) -> tuple[str, tuple[Evidence, ...]]:
    """Why the kernel is said to be built without kexec crash support, and the configuration lines that show it.

    The absent sysfs file alone is an inference; the build configuration, where it was read, is the evidence.
    """
    config = state.kernel_config
    says, numbers = _config_crash_support(state)
    # The option that gates the sysfs files on this release (KEXEC_CORE is selected by KEXEC or KEXEC_FILE).
    option = "CONFIG_CRASH_DUMP" if _crash_dump_gates_sysfs(state) else "CONFIG_KEXEC_CORE"
    if isinstance(config, NotAvailable):
        return f"{option}; no build configuration read to confirm it: {config.reason}", ()
    if says is None:
        symbol = option.removeprefix("CONFIG_")
        return f"{option}; {config.file.path} has no line of KEXEC, KEXEC_FILE nor {symbol}", ()
    return _quote(config, numbers), tuple(e for n in numbers for e in file_evidence(config.file, n))


def _fix_persist(state: KdumpState) -> str:
    """How crashkernel= gets onto the kernel command line: kdump setup edits the boot configuration, or, where the
    machine has none, by hand where it is booted from (what setup then plans: a manual step)."""
    if no_boot_loader(state):
        return (
            "add crashkernel= to the kernel command line where the machine is booted from (no boot loader "
            "configuration here for kdump setup to edit; kforensic kdump setup gives the value), then reboot"
        )
    gap = boot_gap(state)
    if gap is not None and gap.stale:
        # The boot configuration has it, what the boot loader boots does not: setup would add nothing.
        return f"{regenerate_step(state, gap.source[2])[1]}, then reboot"
    if gap is not None and gap.booted is not None and isinstance(gap.entry, BootEntry):
        entry = gap.entry
        return f"reboot: {entry.file.path} line {entry.line} already boots with crashkernel={gap.booted}"
    return _FIX_CRASHKERNEL


def _fix_doubt(state: KdumpState, value: str) -> str:
    """What tells whether ``value`` (crashkernel=auto, or ranges the kernel's rounding decides) reserves memory here,
    and the value that does not depend on it."""
    dmesg = "dmesg | grep -i crashkernel says what the kernel made of it"
    if value.strip() == "auto":
        look = CHECK_AUTO if not release(state) else dmesg
    else:
        look = f"uname -r (kernels from 6.0 round the RAM up to 128 MiB before matching the ranges); {dmesg}"
    return f"see what this kernel reserves for it: {look}; or give an explicit size: {_FIX_CRASHKERNEL}"


def _ram_source(state: KdumpState) -> str:
    """`` of /proc/iomem System RAM``: the RAM figure read, for a range expression's match that depends on it."""
    return f" of {state.system_ram_source}" if state.system_ram_source else ""


def _fix_crashkernel(state: KdumpState) -> str:
    """How to get crashkernel= in place: on a kernel without crash support, another kernel first."""
    if no_crash_support(state):
        return f"{FIX_KERNEL}; then {_fix_persist(state)}"
    return _fix_persist(state)


def _against_config(state: KdumpState, file: NotAvailable) -> NotAvailable:
    """An absent sysfs file of a kernel whose build configuration has crash support: a /sys not wholly there, not a
    kernel without it (the lines that say so are named)."""
    config = state.kernel_config
    says, numbers = _config_crash_support(state)
    if says is not True or isinstance(config, NotAvailable) or "does not exist" not in file.reason:
        return file
    return NotAvailable(f"{file.reason}, although {_quote(config, numbers)}: the kernel has kexec crash support")


def _quote(config: KernelConfig, numbers: tuple[int, ...]) -> str:
    """``/proc/config.gz line 287: # CONFIG_KEXEC is not set, line 288: ...``"""
    return f"{config.file.path} " + ", ".join(f"line {n}: {config.file.lines[n - 1].strip()}" for n in numbers)


def _unread_kernel_file(line_id: str, title: str, file: NotAvailable, why: str) -> CheckLine:
    # An unreadable sysfs file says nothing about the kernel: no verdict, and not "built without crash support".
    line = unknown(line_id, title, file.reason, why, _FIX_UNREAD, (), severity=Severity.MEDIUM)
    return replace(line, kernel_side=True)


def check_cmdline(state: KdumpState, estimate: Estimate) -> list[CheckLine]:
    """crashkernel= on the running kernel's command line."""
    value = cmdline_crashkernel(state)
    evidence = file_evidence(state.cmdline, 1, f"crashkernel={value}" if value else None)
    title = "crashkernel= on the kernel command line"
    if isinstance(state.cmdline, NotAvailable) and "does not exist" not in state.cmdline.reason:
        return [_unread_kernel_file("crashkernel-cmdline", title, state.cmdline, _WHY_RESERVE)]
    if isinstance(state.cmdline, NotAvailable):
        return [
            fail(
                "crashkernel-cmdline", title, str(state.cmdline), _WHY_RESERVE, _fix_crashkernel(state), (), kernel=True
            )
        ]
    if value is None:
        return [
            fail(
                "crashkernel-cmdline",
                title,
                "no crashkernel= parameter",
                _WHY_RESERVE,
                _fix_crashkernel(state),
                evidence,
                kernel=True,
            )
        ]
    ram = state.system_ram_bytes
    problem = value_problem(state, value)
    if problem is not None:
        detail = f"crashkernel={value}: {problem}"
        return [
            fail("crashkernel-cmdline", title, detail, _WHY_RESERVE, _fix_crashkernel(state), evidence, kernel=True)
        ]
    doubt = value_unknown(state, value)
    if doubt is not None:
        reserved = reserved_now(state)
        if reserved:
            # What this boot reserved is read: the kernel sized it, whatever its release or threshold.
            detail = f"crashkernel={value} ({reserved // MIB} MiB reserved at this boot: the kernel sized it)"
            return [pass_("crashkernel-cmdline", title, detail, evidence, kernel=True)]
        line = unknown(
            "crashkernel-cmdline",
            title,
            doubt,
            _WHY_RESERVE,
            _fix_doubt(state, value),
            evidence,
            severity=Severity.MEDIUM,
        )
        return [replace(line, kernel_side=True)]
    if auto_sized(value, release(state)):
        detail = f"crashkernel={value} (sized by this RHEL 7/8 kernel itself)"
        return [pass_("crashkernel-cmdline", title, detail, evidence, kernel=True)]
    if isinstance(ram, int):
        match = match_ranges(parse_crashkernel(value), ram, release(state))
        if match.size is None:
            # Reserves either way (value_unknown said so otherwise), how much depends on the kernel's rounding.
            size = f"{match.plain // MIB} or {match.rounded // MIB} MiB"
        else:
            size = f"{match.size // MIB} MiB"
        # Where rounding decides, which RAM figure was read is said (iomem's is close to the kernel's, MemTotal not).
        how = f"{_ram_source(state)}, {match.matched()}" if match.plain != match.rounded else ""
        detail = f"crashkernel={value} ({size} for {ram // MIB} MiB RAM{how})"
        return [pass_("crashkernel-cmdline", title, detail, evidence, kernel=True)]
    return [pass_("crashkernel-cmdline", title, f"crashkernel={value}", evidence, kernel=True)]


def check_boot_config(state: KdumpState, estimate: Estimate) -> list[CheckLine]:
    """crashkernel= in the boot loader configuration, so it survives reboots and kernel updates."""
    title = "crashkernel= in the boot configuration"
    if state.boot.crashkernel:
        file, number, value = state.boot.crashkernel[-1]
        detail = f"{file.path} line {number} sets crashkernel={value}"
        evidence = file_evidence(file, number, f"crashkernel={value}")
        # The rule of the command line: a value that reserves nothing here keeps every boot without a crash kernel.
        problem = value_problem(state, value)
        if problem is not None:
            detail += f", which reserves nothing here: {problem}"
            # The value is persistent; what is wrong is that every boot from it reserves nothing.
            why = f"{_WHY_RESERVE}, and every boot from this configuration is given this value"
            return [fail("crashkernel-boot", title, detail, why, _FIX_CRASHKERNEL, evidence)]
        doubt = value_unknown(state, value)
        if doubt is not None and not (cmdline_crashkernel(state) == value and reserved_now(state)):
            # (This boot, given the same value, reserved memory: the kernel sized it.)
            reason = f"{detail}; {doubt}"
            return [
                unknown(
                    "crashkernel-boot",
                    title,
                    reason,
                    _WHY_RESERVE,
                    _fix_doubt(state, value),
                    evidence,
                    severity=Severity.LOW,
                )
            ]
        return [pass_("crashkernel-boot", title, detail, evidence)]
    unexamined = state.not_examined(paths.GRUB_DEFAULT)
    if not state.boot.files and unexamined:
        reason = f"the boot loader configuration: {unexamined}"
        return [unknown("crashkernel-boot", title, reason, _WHY_PERSIST, FIX_UNEXAMINED, (), severity=Severity.LOW)]
    detail = "no boot loader configuration found (/etc/default/grub, grub.d, BLS entries, /etc/kernel/cmdline)"
    partial = state.partial()
    if not state.boot.files and partial:
        # A partial copy may just not hold it (a sos report of a machine booted from grub): nothing was read, so
        # nothing is judged; on a whole system the same absence is the fault below.
        reason = f"{detail}, and {partial}"
        return [unknown("crashkernel-boot", title, reason, _WHY_PERSIST, FIX_UNEXAMINED, (), severity=Severity.LOW)]
    if not state.boot.files:
        return [warn("crashkernel-boot", title, detail, _WHY_PERSIST, _fix_persist(state), ())]
    file = state.boot.files[0]
    detail = f"none of {len(state.boot.files)} boot configuration file(s) sets crashkernel="
    return [warn("crashkernel-boot", title, detail, _WHY_PERSIST, _FIX_CRASHKERNEL, file_evidence(file, 1))]


_WHY_GENERATED = (
    "the boot loader boots the generated entry (grub.cfg, which grub-mkconfig writes from /etc/default/grub and "
    "grub.d; or a BLS entry), not the boot configuration: without crashkernel= there the next boot reserves nothing"
)


def check_generated_boot(state: KdumpState, estimate: Estimate) -> list[CheckLine]:
    """The boot configuration's crashkernel= in what the boot loader boots (grub.cfg's default entry, the BLS
    entry), so that the reboot every fix ends with does reserve it.  No line when the configuration sets none
    (the boot configuration's line says so)."""
    gap = boot_gap(state)
    if gap is None:
        return []
    title = "crashkernel= in the generated boot entry"
    source, number, value = gap.source
    step = regenerate_step(state, value)[1]
    if not _reserves_enough(state, estimate):
        step += ", then reboot"  # this boot has it already: only the next would lose it (setup plans no reboot either)
    entry = gap.entry
    if isinstance(entry, NotAvailable):
        fix = f"look for crashkernel={value} in what the boot loader boots; if it is not there: {step}"
        return [unknown("crashkernel-generated", title, entry.reason, _WHY_GENERATED, fix, (), severity=Severity.LOW)]
    where = entry.where
    has = f"crashkernel={entry.crashkernel}" if entry.crashkernel else None
    evidence = file_evidence(entry.file, entry.line, None if entry.env else has)
    if entry.env is not None:
        # RHEL 8: the entry names $kernelopts; the value is grubenv's (grub2-editenv - list), cited with it.
        evidence += file_evidence(entry.env, entry.env_line, has)
    if gap.stale:
        has = has or "no crashkernel="
        regenerated = "grubby did not update it" if entry.bls else "it was not regenerated since"
        detail = (
            f"{source.path} line {number} sets crashkernel={value}, but {where}, the entry the boot loader boots "
            f"({entry.kernel or 'its kernel'}), has {has}: {regenerated}"
        )
        evidence = file_evidence(source, number, f"crashkernel={value}") + evidence
        return [warn("crashkernel-generated", title, detail, _WHY_GENERATED, step, evidence)]
    detail = f"{where} boots {entry.kernel or 'its kernel'} with crashkernel={entry.crashkernel}{others_note(state)}"
    return [pass_("crashkernel-generated", title, detail, evidence)]


def _reserves_enough(state: KdumpState, estimate: Estimate) -> bool:
    """This boot reserved at least the recommended size: check_reservation's PASS, which setup's plan reads."""
    text = state.crash_size.first_line() if isinstance(state.crash_size, TextFile) else ""
    return text.isdigit() and int(text) >= estimate.recommended


def check_reservation(state: KdumpState, estimate: Estimate) -> list[CheckLine]:
    """Memory actually reserved (/sys/kernel/kexec_crash_size) against the recommended size."""
    title = "Crash kernel memory reserved"
    file = state.crash_size
    if isinstance(file, NotAvailable) and not no_crash_support(state):
        return [_unread_kernel_file("crash-reservation", title, _against_config(state, file), _WHY_RESERVE)]
    if isinstance(file, NotAvailable):
        why_not, evidence = _crash_support_evidence(state)
        detail = f"{file.reason}: the kernel was built without kexec crash support ({why_not})"
        return [fail("crash-reservation", title, detail, _WHY_RESERVE, FIX_KERNEL, evidence, kernel=True)]
    text = file.first_line()
    evidence = file_evidence(file, 1, text)
    if not text.isdigit() or int(text) == 0:
        detail = f"{file.path} is {text!r}: nothing reserved"
        given = cmdline_crashkernel(state)
        released = _released(state)
        log = state.crash_log
        if given and released is not None and log is not None and not isinstance(log, NotAvailable):
            number, text = released
            detail += (
                f": reserved at boot ({log.source} line {number}: {text}), since released (writing 0 to "
                f"{file.path} frees it while no crash kernel is loaded)"
            )
            fix = f"reboot to reserve it again, and find what writes 0 to {file.path} (a script or unit)"
            cited = file_evidence(log.file, number, text)
            return [fail("crash-reservation", title, detail, _WHY_RESERVE, fix, evidence + cited, kernel=True)]
        if given and crashkernel_unplaced(state):
            why, fix, cited = _unplaced(state, given)
            return [fail("crash-reservation", title, detail + why, _WHY_RESERVE, fix, evidence + cited, kernel=True)]
        problem = value_problem(state, given) if given else None
        doubt = value_unknown(state, given) if given else None
        if problem is not None:
            detail += f": crashkernel={given} on this boot's command line reserves nothing: {problem}"
        elif doubt is not None:
            detail += f": crashkernel={given} on this boot's command line may be why ({doubt})"
        return [fail("crash-reservation", title, detail, _WHY_RESERVE, _fix_persist(state), evidence, kernel=True)]
    reserved = int(text)
    want = describe_estimate(estimate)
    if estimate.grounded and reserved < estimate.recommended:  # (an estimate from nothing read judges nothing)
        detail = f"{reserved // MIB} MiB reserved, less than the recommended {want}"
        why = "a crash kernel short of memory runs out of memory while loading drivers or saving: no dump"
        fix = f"raise crashkernel= to {estimate.recommended // MIB}M: kforensic kdump setup --apply"
        return [warn("crash-reservation", title, detail, why, fix, evidence, kernel=True)]
    return [
        pass_("crash-reservation", title, f"{reserved // MIB} MiB reserved (recommended {want})", evidence, kernel=True)
    ]


# Where crashkernel=X,high (a reservation above 4 GiB, with a low part for DMA) exists: x86_64 since 3.9 (the
# "kexec: crashkernel=X,high" series), arm64 since 5.19 ("arm64: kdump: Reimplement crashkernel=X"), riscv since 6.6
# ("riscv: kdump: Implement crashkernel=X,[high,low]").  Elsewhere only a smaller size can help.
_HIGH_SINCE = {"x86_64": (3, 9), "aarch64": (5, 19), "riscv64": (6, 6)}


def crashkernel_unplaced(state: KdumpState) -> bool:
    """This boot's command line has a crashkernel= that reserves memory for its RAM, and nothing was reserved: the
    kernel could not place it (the same command line fails the same way at every boot)."""
    given = cmdline_crashkernel(state)
    size = state.crash_size
    empty = isinstance(size, TextFile) and size.first_line() == "0"
    known = value_problem(state, given or "") is None and value_unknown(state, given or "") is None
    return bool(given) and empty and known and _released(state) is None


def _released(state: KdumpState) -> tuple[int, str] | None:
    """The kernel log's line of this boot where the kernel reserved the area that kexec_crash_size now says is 0:
    it was released since (writing 0 there frees it while no crash kernel is loaded, crash_shrink_memory)."""
    log = state.crash_log
    return log.reserved_line() if log is not None and not isinstance(log, NotAvailable) else None


def _high_supported(state: KdumpState) -> bool:
    since = _HIGH_SINCE.get(state.arch) if isinstance(state.arch, str) else None
    release = release_version(state.osrelease.first_line()) if isinstance(state.osrelease, TextFile) else None
    return since is not None and (release is None or release >= since)


def _smaller(size: int) -> str:
    """Half of ``size`` on the 16 MiB boundaries reservations are placed on (at least 16 MiB)."""
    return f"{max(16, size // MIB // 2 // 16 * 16)}M"


def _replacement(state: KdumpState, value: str, size: int) -> tuple[str, str]:
    """What replaces a crashkernel= the kernel could not place, never the value that failed: the value a command
    writes, and why that one (with the alternative).  An ``@offset`` pins the area, which is in use: drop it.
    A ``,high`` failed above 4 GiB or in its low part (``crashkernel=Y,low``, 256M by default on x86_64 for swiotlb,
    below 4 GiB): a smaller size or a smaller low part.  Otherwise ``,high`` where the kernel has it and the RAM
    reaches above 4 GiB, else a smaller size."""
    try:
        parsed = parse_crashkernel(value)
    except ValueError:  # auto: the kernel picked the size
        parsed = None
    ram = state.system_ram_bytes
    half = _smaller(size) if size else "<smaller size>"
    if parsed is not None and parsed.offset is not None:
        new = value.replace(f"@{parsed.offset}", "", 1)
        return new, f"without @{parsed.offset}: the kernel places it where memory is free"
    if parsed is not None and parsed.placement == "high":
        new = f"{half},high"
        return new, (
            f"a smaller size; or keep {value} and add crashkernel=<size>,low for its part below 4 GiB "
            "(256M by default on x86_64) when that is what did not fit"
        )
    if _high_supported(state) and isinstance(ram, int) and ram > 4 * GIB:
        new = f"{size // MIB}M,high" if size else "<size>,high"
        return new, "placed above 4 GiB, where low memory is short; or a smaller size"
    return half, "a smaller size"


def _unplaced(state: KdumpState, value: str) -> tuple[str, str, tuple[Evidence, ...]]:
    """Why a crashkernel= that should reserve memory reserved nothing, as the kernel log says; the fix that matches
    (a reservation above 4 GiB, or a smaller one, where the boot configuration sets it); the log lines cited."""
    ram = state.system_ram_bytes
    size = (
        match_ranges(parse_crashkernel(value), ram, release(state)).least
        if isinstance(ram, int) and not auto_sized(value, release(state))
        else 0
    )
    detail = (
        f" although crashkernel={value}{f' ({size // MIB} MiB for this RAM)' if size else ''} was given: the kernel"
    )
    detail += " could not place it"
    log = state.crash_log
    cited: tuple[Evidence, ...] = ()
    if isinstance(log, NotAvailable) or log is None:
        detail += f" ({log.reason if log else 'the kernel log was not read'})"
    elif log.other_boot:
        detail += (
            f" (the kernel log's last boot, {log.other_boot} at {log.source} line {log.other_boot_line}, is not this "
            "one: it says nothing of this boot)"
        )
    elif not log.lines:
        detail += f" ({log.source} has no kernel crashkernel line after its last 'Linux version' line)"
    else:
        detail += "; " + "; ".join(f"{log.source} line {n}: {text}" for n, text in log.lines)
        cited = tuple(e for n, text in log.lines for e in file_evidence(log.file, n, text))
    lookup = (
        "the kernel log lines cited"
        if cited or (log and not isinstance(log, NotAvailable) and log.lines)
        else ("dmesg | grep -i crashkernel, e.g. 'crashkernel reservation failed - No suitable area found.'")
    )
    new, offer = _replacement(state, value, size)
    gap = boot_gap(state)
    if no_boot_loader(state):
        where, step = "where the machine is booted from", ""
    elif gap is not None:
        where = f"{gap.source[0].path} line {gap.source[1]}"
        step = f", {regenerate_step(state, new)[1]}"
    else:
        where, step = "the boot configuration", ""
    command = regenerate_step(state, new)[1]
    if gap is not None and bls_boot(state):
        # grubby edits every entry (and $kernelopts) itself: the step carries the new value, not the failing one.
        fix = f"see why in the kernel log ({lookup}); then {command} ({offer}), then reboot"
    else:
        fix = f"see why in the kernel log ({lookup}); then replace crashkernel={value} in {where} with "
        fix += f"crashkernel={new} ({offer}){step}, then reboot"
    fix += " (the same crashkernel= fails the same way at every boot)"
    return detail, fix, cited


def check_loaded(state: KdumpState, estimate: Estimate) -> list[CheckLine]:
    """A crash kernel is loaded into the reservation (/sys/kernel/kexec_crash_loaded)."""
    title = "Crash kernel loaded"
    file = state.crash_loaded
    why = "without a loaded crash kernel a panic reboots or hangs and memory is lost"
    fix = _FIX_LOAD.get(tooling_family(state), _FIX_LOAD[DistroFamily.UNKNOWN])
    if isinstance(file, NotAvailable) and ("does not exist" not in file.reason or not no_crash_support(state)):
        return [_unread_kernel_file("crash-loaded", title, _against_config(state, file), why)]
    if isinstance(file, NotAvailable):  # no service can load one into this kernel: another kernel first
        _, evidence = _crash_support_evidence(state)
        detail = f"{file.reason}: kexec crash support missing"
        return [fail("crash-loaded", title, detail, why, f"{FIX_KERNEL}; then {fix}", evidence, kernel=True)]
    text = file.first_line()
    if text != "1":
        return [
            fail("crash-loaded", title, f"{file.path} is {text!r}", why, fix, file_evidence(file, 1, text), kernel=True)
        ]
    return [pass_("crash-loaded", title, f"{file.path} is 1", file_evidence(file, 1, text), kernel=True)]
